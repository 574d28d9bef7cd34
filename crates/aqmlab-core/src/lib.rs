//! aqmlab-core: the simulator. Pure Rust, no Python and no I/O: a scenario goes in, column
//! buffers come out. See docs/architecture.md for the principles and the layers.

pub mod app;
pub mod net;
pub mod packet;
pub mod params;
pub mod queue;
pub mod record;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod transport;
pub mod units;
