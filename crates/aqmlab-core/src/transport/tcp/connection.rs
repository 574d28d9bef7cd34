//! A connection's two ends, built from a flow's resolved TCP keys.

use super::config::TcpConfig;
use super::receiver::TcpReceiver;
use super::sender::TcpSender;
use crate::packet::Dir;

/// The two ends of one connection whose data flows in direction `dir`.
///
/// # Panics
/// On a configuration [`try_new_connection`] rejects (validate scenarios with it, or with
/// [`crate::transport::cc::registry::make_cc`], first).
pub fn new_connection(cfg: &TcpConfig, flow: u32, dir: Dir) -> (TcpSender, TcpReceiver) {
    try_new_connection(cfg, flow, dir).unwrap_or_else(|e| panic!("{e}"))
}

/// [`new_connection`] that reports an unknown congestion controller name or an impossible
/// setting as an error.
pub fn try_new_connection(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<(TcpSender, TcpReceiver), String> {
    if cfg.mss == 0 || cfg.iw == 0 || cfg.segs_per_ack == 0 {
        return Err(format!(
            "tcp: mss ({}), iw ({}) and segs_per_ack ({}) must be at least 1",
            cfg.mss, cfg.iw, cfg.segs_per_ack
        ));
    }
    if cfg.rwnd_bytes() < cfg.mss as u64 {
        return Err(format!(
            "tcp: rwnd ({} B) must hold at least one mss ({} B)",
            cfg.rwnd_bytes(),
            cfg.mss
        ));
    }
    if cfg.initial_rto == 0 {
        return Err("tcp: initial_rto must be positive".into());
    }
    if cfg.max_rto < cfg.min_rto {
        return Err(format!(
            "tcp: max_rto ({}) must be at least min_rto ({})",
            crate::units::fmt_time(cfg.max_rto),
            crate::units::fmt_time(cfg.min_rto)
        ));
    }
    Ok((TcpSender::new(cfg, flow, dir)?, TcpReceiver::new(cfg, flow, dir)))
}
