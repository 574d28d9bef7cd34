//! BBR's ACK aggregation estimate (tcp_bbr.c `bbr_update_ack_aggregation`, the same in v1 and
//! v3): the data ACKed in an epoch beyond what the bandwidth estimate explains, a maximum over
//! two windows of rounds, added to the window so that sending goes on through ACK silences.

use super::fixed::{BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::transport::cc::RateSample;
use crate::units::{Time, US};

/// Gain 1, epoch reset after 2^20 segments, at most 100 ms of bandwidth.
const EXTRA_ACKED_GAIN: u64 = BBR_UNIT;
const ACK_EPOCH_ACKED_RESET: u64 = 1 << 20;
const EXTRA_ACKED_MAX_US: u64 = 100_000;

/// ACK aggregation's state, in segments.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Aggregation {
    epoch_start: Time,
    epoch_acked: u64,
    extra_acked: [u64; 2],
    win_rtts: u32,
    win_idx: usize,
}

impl Aggregation {
    /// The window's allowance at bandwidth `bw` (bbr_ack_aggregation_cwnd).
    pub(crate) fn cwnd(&self, bw: u64) -> u64 {
        let max_aggr = bw * EXTRA_ACKED_MAX_US / BW_UNIT;
        let extra = self.extra_acked[0].max(self.extra_acked[1]);
        ((EXTRA_ACKED_GAIN * extra) >> BBR_SCALE).min(max_aggr)
    }

    /// bbr_update_ack_aggregation on sample `rs` at bandwidth `bw` with window `cwnd`; the
    /// windows alternate every `win_rtts` rounds.
    pub(crate) fn update(&mut self, rs: &RateSample, bw: u64, cwnd: u64, round_start: bool, win_rtts: u32) {
        let valid = rs.delivered.is_some() && rs.interval.is_some_and(|i| i / US > 0);
        if rs.acked_sacked == 0 || !valid {
            return;
        }
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1f);
            if self.win_rtts >= win_rtts {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let epoch_us = rs.delivered_at.saturating_sub(self.epoch_start) / US;
        let mut expected = ((bw as u128 * epoch_us as u128) / BW_UNIT as u128) as u64;
        if self.epoch_acked <= expected || self.epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET {
            self.epoch_acked = 0;
            self.epoch_start = rs.delivered_at;
            expected = 0;
        }
        self.epoch_acked = (self.epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = self.epoch_acked.saturating_sub(expected).min(cwnd);
        if extra > self.extra_acked[self.win_idx] {
            self.extra_acked[self.win_idx] = extra;
        }
    }
}
