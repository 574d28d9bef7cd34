//! Traffic sources and sinks built on the endpoint interface: UDP constant-bit-rate and Poisson
//! sources, latency probes, and the PackMime-HTTP web workload. (Bulk and finite TCP transfers are
//! TCP endpoints with a byte count.)

pub mod packmime;
pub mod ping;
pub mod repeat;
pub mod udp;
pub mod web;
