//! TCP endpoints (sans-I/O): the data sender and the receiver of one connection, per
//! algorithms.md section 11 (RFC 5681 / 6298 / 6582 / 6675 / 3168, with RFC 3042 limited
//! transmit, RFC 3465 byte counting, RFC 2018 SACK blocks and RFC 7323 timestamps).
//!
//! Files: `sender.rs` (handshake, windows, loss recovery, ECN sender), `receiver.rs`,
//! `scoreboard.rs` (SACK scoreboard), `rto.rs` (RFC 6298 estimator). Congestion controllers
//! are in `transport/cc`.
//!
//! Wire model (IP bytes): every segment carries IP (20) + TCP (20) + the timestamp option
//! (10 + 2 NOP = 12) = [`HEADER`] = 52 bytes. Data segment = payload + 52 (1500 for MSS 1448).
//! SYN and SYN-ACK = [`SYN_SIZE`] = 60 bytes (options: MSS 4, SACK-permitted 2, timestamps 10,
//! window scale 3, NOP 1; 20 in all). A pure ACK = 52 bytes, plus a SACK option of 2 NOPs, 2
//! bytes of kind/length and 8 per block when it carries blocks (64 / 72 / 80 bytes with 1 / 2 /
//! 3 blocks).
//!
//! Sequence space: the SYN is sequence number 0, data starts at 1; the FIN flag rides on the
//! last data segment and takes no sequence number.

use crate::packet::Dir;
use crate::units::{Time, MS, SEC};

pub mod receiver;
pub mod rto;
pub mod scoreboard;
pub mod sender;

#[cfg(test)]
mod harness;

pub use receiver::TcpReceiver;
pub use sender::TcpSender;

/// IP + TCP + timestamp option bytes on every segment.
pub const HEADER: u32 = 52;
/// Size of a SYN or SYN-ACK.
pub const SYN_SIZE: u32 = 60;

/// Size of a pure ACK carrying `n_sack` SACK blocks.
pub fn ack_size(n_sack: usize) -> u32 {
    if n_sack == 0 {
        HEADER
    } else {
        HEADER + 4 + 8 * n_sack as u32
    }
}

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

impl Default for TcpConfig {
    /// Linux-like defaults: CUBIC with HyStart, MSS 1448, IW10, SACK on, ECN off, initial RTO
    /// 1 s, RTO floor 200 ms, delayed ACK 40 ms, 16 MiB receive window, bulk transfer.
    fn default() -> TcpConfig {
        TcpConfig {
            cc: "cubic".into(),
            bytes: None,
            mss: 1448,
            iw: 10,
            ecn: false,
            sack: true,
            min_rto: 200 * MS,
            initial_rto: SEC,
            delack: Some(40 * MS),
            rwnd: 16 << 20,
            hystart: true,
        }
    }
}

/// The two ends of one connection whose data flows in direction `dir`.
///
/// # Panics
/// On a configuration [`try_new_connection`] rejects (validate scenarios with it, or with
/// [`crate::transport::cc::make_cc`], first).
pub fn new_connection(cfg: &TcpConfig, flow: u32, dir: Dir) -> (TcpSender, TcpReceiver) {
    try_new_connection(cfg, flow, dir).unwrap_or_else(|e| panic!("{e}"))
}

/// [`new_connection`] that reports an unknown congestion controller name or an impossible
/// setting as an error.
pub fn try_new_connection(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<(TcpSender, TcpReceiver), String> {
    if cfg.mss == 0 || cfg.iw == 0 {
        return Err(format!(
            "tcp: mss ({}) and iw ({}) must be at least 1",
            cfg.mss, cfg.iw
        ));
    }
    if cfg.rwnd < cfg.mss as u64 {
        return Err(format!(
            "tcp: rwnd ({} B) must hold at least one mss ({} B)",
            cfg.rwnd, cfg.mss
        ));
    }
    if cfg.initial_rto == 0 {
        return Err("tcp: initial_rto must be positive".into());
    }
    Ok((TcpSender::new(cfg, flow, dir)?, TcpReceiver::new(cfg, flow, dir)))
}
