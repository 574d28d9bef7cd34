//! Traffic sources and sinks built on the endpoint interface: UDP constant-bit-rate and Poisson
//! sources, latency probes, the PackMime-HTTP web workload and repeated page fetches. (Bulk and finite TCP transfers are
//! TCP endpoints with a byte count.)

pub mod packmime;
pub mod ping;
pub mod repeat;
pub mod udp;
pub mod web;
pub mod webpage;
