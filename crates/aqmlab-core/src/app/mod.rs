//! Traffic sources and sinks built on the endpoint interface: UDP constant-bit-rate and Poisson
//! sources, and latency probes. (Bulk and finite TCP transfers are TCP endpoints with a byte count.)

pub mod ping;
pub mod udp;
