//! BBR's fixed-point units as Linux tcp_bbr.c keeps them (bandwidth in segments per
//! microsecond << 24, gains in 1/256) and the conversions between them and rates, windows and
//! numbers, shared by BBR v1 and v3.

use crate::units::{Time, US};

/// Bandwidth fixed point: segments per microsecond << 24.
pub(crate) const BW_SCALE: u32 = 24;
pub(crate) const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains in 1/256.
pub(crate) const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u64 = 1 << BBR_SCALE;

/// bbr_rate_bytes_per_sec: `rate` (segments/us << 24) x `gain` (/256) in bytes per second,
/// `margin` percent off.
pub(crate) fn rate_bytes_per_sec(rate: u64, mss: u64, gain: u64, margin: u64) -> u64 {
    let r = (rate as u128 * mss as u128 * gain as u128) >> BBR_SCALE;
    ((r * (1_000_000 / 100 * (100 - margin)) as u128) >> BW_SCALE) as u64
}

/// bbr_bdp: ceil(bw x min RTT x gain) in segments (`none` before any RTT sample).
pub(crate) fn bdp(bw: u64, min_rtt_us: Option<u64>, gain: u64, none: u64) -> u64 {
    let Some(min_rtt) = min_rtt_us else {
        return none;
    };
    let w = bw as u128 * min_rtt as u128;
    (((w * gain as u128) >> BBR_SCALE) as u64).div_ceil(BW_UNIT)
}

/// bbr_packets_in_net_at_edt: of `inflight_now` segments (and a `burst` about to leave),
/// what will still be in the network when pacing next lets a segment go, `pace_wait` from
/// now, at `bw`.
pub(crate) fn in_net_at_edt(inflight_now: u64, burst: u64, pace_wait: Time, bw: u64) -> u64 {
    let delivered = ((bw as u128 * (pace_wait / US) as u128) >> BW_SCALE) as u64;
    (inflight_now + burst).saturating_sub(delivered)
}

/// A bandwidth (segments per microsecond << 24) in payload bits per second.
pub(crate) fn bw_bps(bw: u64, mss: u64) -> u64 {
    ((bw as u128 * mss as u128 * 8 * 1_000_000) >> BW_SCALE) as u64
}

/// A gain (in 1/256) as a number.
pub(crate) fn gain_value(gain: u64) -> f64 {
    gain as f64 / BBR_UNIT as f64
}
