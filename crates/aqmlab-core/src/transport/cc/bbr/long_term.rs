//! BBR's long-term bandwidth estimator (tcp_bbr.c `bbr_lt_bw_sampling`): token-bucket policers
//! are common, and a flow through one sees consistent throughput with heavy loss. From the first
//! loss on, sampling intervals of 4 to 16 round trips end at a loss once over 20 % of what was
//! delivered in them was lost; two consecutive intervals with rates within 1/8 (or 4 kbit/s) of
//! each other make BBR use their average as its bandwidth, at pacing gain 1, for 48 round trips.

use super::control::{Bbr, Mode};
use super::fixed::{BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::transport::cc::RateSample;
use crate::units::MS;

/// Long-term sampling: intervals of at least 4 rounds, lossy above 50/256, consistent within
/// 1/8 or 4 kbit/s, used for 48 rounds.
const LT_INTVL_MIN_RTTS: u32 = 4;
const LT_LOSS_THRESH: u64 = 50;
const LT_BW_RATIO: u64 = BBR_UNIT / 8;
const LT_BW_DIFF: u64 = 4000 / 8;
const LT_BW_MAX_RTTS: u32 = 48;

impl Bbr {
    pub(super) fn lt_reset_interval(&mut self, rs: &RateSample) {
        self.lt.last_stamp_ms = rs.delivered_at / MS;
        self.lt.last_delivered = rs.total_delivered;
        self.lt.last_lost = rs.total_lost;
        self.lt.rtt_cnt = 0;
    }

    pub(super) fn lt_reset(&mut self, rs: &RateSample) {
        self.lt.bw = 0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.lt_reset_interval(rs);
    }

    /// An interval is done: a second consistent one means a policer.
    fn lt_interval_done(&mut self, bw: u64, rs: &RateSample) {
        if self.lt.bw > 0 {
            let diff = bw.abs_diff(self.lt.bw);
            if diff * BBR_UNIT <= LT_BW_RATIO * self.lt.bw
                || self.rate_bytes_per_sec(diff, BBR_UNIT) <= LT_BW_DIFF
            {
                self.lt.bw = (bw + self.lt.bw) >> 1;
                self.lt.use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.lt_reset_interval(rs);
    }

    /// bbr_lt_bw_sampling.
    pub(super) fn lt_sampling(&mut self, rs: &RateSample) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.lt_reset(rs);
                    self.reset_probe_bw_mode(rs.now, rs.delivered_at);
                }
            }
            return;
        }
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.lt_reset_interval(rs);
            self.lt.is_sampling = true;
        }
        if rs.is_app_limited {
            self.lt_reset(rs);
            return;
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.lt_reset(rs);
            return;
        }
        if rs.losses == 0 {
            return;
        }
        let lost = rs.total_lost - self.lt.last_lost;
        let delivered = rs.total_delivered - self.lt.last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (rs.delivered_at / MS).saturating_sub(self.lt.last_stamp_ms);
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms * 1000);
        self.lt_interval_done(bw, rs);
    }
}
