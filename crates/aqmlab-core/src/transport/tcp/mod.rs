//! TCP endpoints (sans-I/O): the data sender and the receiver of one connection.
//! To be built per algorithms.md section 11 (RFC 5681 / 6298 / 6582 / 6675 / 3168).

use crate::units::Time;

/// Per-connection TCP settings, resolved from the scenario's flow entry.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Congestion controller name ("newreno" / "reno", "cubic", later "ledbat", "tcp_lp", "nice").
    pub cc: String,
    /// Bytes to transfer; `None` = bulk (unlimited).
    pub bytes: Option<u64>,
    /// Maximum segment size (payload bytes); IP packet = mss + 52 (IP 20 + TCP 20 + timestamps 12).
    pub mss: u32,
    /// Initial window in segments.
    pub iw: u32,
    pub ecn: bool,
    pub sack: bool,
    pub min_rto: Time,
    pub initial_rto: Time,
    /// Delayed-ACK timer; `None` = ACK every segment.
    pub delack: Option<Time>,
    /// Receive window in bytes.
    pub rwnd: u64,
    /// CUBIC: HyStart on/off.
    pub hystart: bool,
}
