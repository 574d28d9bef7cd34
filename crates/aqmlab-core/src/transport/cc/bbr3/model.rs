//! BBR v3's model beyond v1's: the upper bounds (bw_hi, inflight_hi) that bandwidth probes
//! raise and loss or ECN cut, the lower bounds (bw_lo, inflight_lo) that loss and ECN cut
//! round by round outside probing, the latest round's delivery, the ECN mark EWMA, and the
//! STARTUP exits on loss and ECN (tcp_bbr.c v3).

use super::control::{interval_us, Bbr3, CWND_MIN_TARGET};
use super::state::{AckPhase, Phase, UNSET};
use crate::transport::cc::bbr::{Mode, BBR_SCALE, BBR_UNIT};
use crate::transport::cc::{CaState, RateSample};

/// bbr_loss_thresh (2 %, 5/256), bbr_beta (30 %: bounds cut to 70 %), bbr_inflight_headroom
/// (15 %), bbr_full_loss_cnt.
const LOSS_THRESH: u64 = BBR_UNIT * 2 / 100;
const BETA: u64 = BBR_UNIT * 30 / 100;
const INFLIGHT_HEADROOM: u64 = BBR_UNIT * 15 / 100;
const FULL_LOSS_CNT: u32 = 6;
/// ECN: mark-rate threshold 50 %, EWMA gain 1/16 from 1, 2 STARTUP rounds,
/// only below a 5 ms min RTT.
const ECN_THRESH: u64 = BBR_UNIT / 2;
const ECN_ALPHA_GAIN: u64 = BBR_UNIT / 16;
const FULL_ECN_CNT: u32 = 2;
const ECN_MAX_RTT_US: u64 = 5000;

/// `v` x `f` / 256 without overflow.
fn scale(v: u64, f: u64) -> u64 {
    ((v as u128 * f as u128) >> BBR_SCALE) as u64
}

impl Bbr3 {
    /// bbr_is_inflight_too_high: over 2 % of the flight lost, or (ECN-eligible) over half of
    /// what it delivered CE-marked.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight > 0 && rs.lost > scale(rs.tx_in_flight, LOSS_THRESH) {
            return true;
        }
        let delivered = rs.delivered.unwrap_or(0);
        rs.delivered_ce > 0
            && delivered > 0
            && self.m.ecn_eligible
            && rs.delivered_ce > scale(delivered, ECN_THRESH)
    }

    /// bbr_target_inflight: the BDP, unless the window is below it.
    pub(super) fn target_inflight(&self) -> u64 {
        self.inflight(self.bw(), BBR_UNIT).min(self.cwnd)
    }

    /// bbr_inflight_with_headroom: inflight_hi less 15 % (at least 1, at least 4 left).
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        let hi = self.m.inflight_hi;
        if hi == UNSET {
            return UNSET;
        }
        let headroom = scale(hi, INFLIGHT_HEADROOM).max(1);
        hi.saturating_sub(headroom).max(CWND_MIN_TARGET)
    }

    /// bbr_handle_inflight_too_high: once per probe, inflight_hi down to what was in flight
    /// (at least 70 % of the target), and UP ends.
    pub(super) fn handle_inflight_too_high(&mut self, rs: &RateSample) {
        self.p.prev_probe_too_high = true;
        self.p.bw_probe_samples = false;
        if !rs.is_app_limited {
            self.m.inflight_hi = rs
                .tx_in_flight
                .max(scale(self.target_inflight(), BBR_UNIT - BETA));
        }
        if self.mode == Mode::ProbeBw && self.p.phase == Phase::Up {
            self.start_probe_down(rs.now);
        }
    }

    /// bbr_adapt_upper_bounds; true if it decided a phase change.
    pub(super) fn adapt_upper_bounds(&mut self, rs: &RateSample, cwnd_limited: bool, cwnd: u64) -> bool {
        if self.round_start {
            match self.p.ack_phase {
                AckPhase::ProbeStarting => self.p.ack_phase = AckPhase::ProbeFeedback,
                AckPhase::ProbeStopping => {
                    self.p.bw_probe_samples = false;
                    self.p.ack_phase = AckPhase::Init;
                    if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                        self.m.advance_max_bw_filter();
                    }
                    if self.mode == Mode::ProbeBw && self.p.stopped_risky_probe && !self.p.prev_probe_too_high
                    {
                        self.start_probe_refill(0);
                        return true;
                    }
                }
                _ => {}
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.p.bw_probe_samples {
                self.handle_inflight_too_high(rs);
            }
            return false;
        }
        if self.m.inflight_hi == UNSET {
            return false;
        }
        self.m.inflight_hi = self.m.inflight_hi.max(rs.tx_in_flight);
        if self.mode == Mode::ProbeBw && self.p.phase == Phase::Up {
            self.probe_inflight_hi_upward(rs, cwnd_limited, cwnd);
        }
        false
    }

    /// bbr_inflight_hi_from_lost_skb: the flight at which the loss rate crossed 2 %, solving
    /// (lost_prev + x) / (inflight_prev + x) = 2 % for the prefix x of the lost segment.
    pub(super) fn inflight_hi_from_lost(rs: &RateSample) -> u64 {
        let (Some(inflight_prev), Some(lost_prev)) = (rs.tx_in_flight.checked_sub(1), rs.lost.checked_sub(1))
        else {
            return UNSET;
        };
        let budget = (inflight_prev * LOSS_THRESH + BBR_UNIT - 1) >> BBR_SCALE;
        let prefix = if lost_prev >= budget {
            0
        } else {
            ((budget - lost_prev) << BBR_SCALE) / (BBR_UNIT - LOSS_THRESH)
        };
        inflight_prev + prefix
    }

    /// bbr_skb_marked_lost: a loss round, and while probing the 2 % check on the lost
    /// segment's own flight.
    pub(super) fn segment_lost(&mut self, rs: &RateSample) {
        if !self.m.loss_in_round {
            self.m.loss_round_delivered = rs.total_delivered;
        }
        self.m.loss_in_round = true;
        self.m.loss_in_cycle = true;
        if !self.p.bw_probe_samples || !self.is_inflight_too_high(rs) {
            return;
        }
        let at = RateSample {
            tx_in_flight: Bbr3::inflight_hi_from_lost(rs),
            ..*rs
        };
        self.handle_inflight_too_high(&at);
    }

    /// bbr_update_latest_delivery_signals.
    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        let m = &mut self.m;
        m.loss_round_start = false;
        if interval_us(rs).is_none() || rs.acked_sacked == 0 {
            return;
        }
        m.bw_latest = m.bw_latest.max(sample_bw);
        m.inflight_latest = m.inflight_latest.max(rs.delivered.unwrap_or(0));
        if rs.prior_delivered >= m.loss_round_delivered {
            m.loss_round_delivered = rs.total_delivered;
            m.loss_round_start = true;
        }
    }

    /// bbr_update_congestion_signals: the bandwidth maximum, and once per loss round the
    /// lower bounds.
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample, sample_bw: u64, cwnd: u64) {
        if interval_us(rs).is_none() || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.m.bw_hi[1] = self.m.bw_hi[1].max(sample_bw);
        }
        self.m.loss_in_round |= rs.losses > 0;
        if !self.m.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(cwnd);
        self.m.loss_in_round = false;
        self.m.ecn_in_round = false;
    }

    /// bbr_adapt_lower_bounds: outside probing, a round with CE marks cuts inflight_lo by
    /// alpha/3, a lossy one cuts bw_lo and inflight_lo to 70 % (not below the latest round).
    fn adapt_lower_bounds(&mut self, cwnd: u64) {
        if self.is_probing_bandwidth() {
            return;
        }
        let max_bw = self.max_bw();
        let m = &mut self.m;
        let mut ecn_inflight_lo = UNSET;
        if m.ecn_in_round {
            m.inflight_lo = if m.inflight_lo == UNSET {
                cwnd
            } else {
                m.inflight_lo
            };
            ecn_inflight_lo = scale(m.inflight_lo, m.ecn_cut());
        }
        if m.loss_in_round {
            m.bw_lo = if m.bw_lo == UNSET { max_bw } else { m.bw_lo };
            m.inflight_lo = if m.inflight_lo == UNSET {
                cwnd
            } else {
                m.inflight_lo
            };
            m.bw_lo = m.bw_latest.max(scale(m.bw_lo, BBR_UNIT - BETA));
            m.inflight_lo = m.inflight_latest.max(scale(m.inflight_lo, BBR_UNIT - BETA));
        }
        m.inflight_lo = m.inflight_lo.min(ecn_inflight_lo);
        m.bw_lo = m.bw_lo.max(1);
    }

    /// bbr_update_ecn_alpha, at a round start: alpha += 1/16 (CE fraction - alpha).
    pub(super) fn update_ecn_alpha(&mut self, rs: &RateSample) {
        let m = &mut self.m;
        if !m.ecn_eligible && m.ecn_seen && self.min_rtt_us.is_some_and(|r| r <= ECN_MAX_RTT_US) {
            m.ecn_eligible = true;
        }
        let delivered = rs.total_delivered - m.alpha_last_delivered;
        if !m.ecn_eligible || delivered == 0 {
            return;
        }
        let ce_ratio = ((m.delivered_ce - m.alpha_last_delivered_ce) << BBR_SCALE) / delivered;
        let alpha = scale(m.ecn_alpha, BBR_UNIT - ECN_ALPHA_GAIN) + scale(ce_ratio, ECN_ALPHA_GAIN);
        m.ecn_alpha = alpha.min(BBR_UNIT);
        m.alpha_last_delivered = rs.total_delivered;
        m.alpha_last_delivered_ce = m.delivered_ce;
        self.check_ecn_too_high_in_startup(ce_ratio);
    }

    fn check_ecn_too_high_in_startup(&mut self, ce_ratio: u64) {
        if self.full_bw_reached || !self.m.ecn_eligible {
            return;
        }
        self.m.startup_ecn_rounds = if ce_ratio >= ECN_THRESH {
            self.m.startup_ecn_rounds + 1
        } else {
            0
        };
        if self.m.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup();
        }
    }

    /// The pipe is full, and inflight_hi is what STARTUP had in flight (at least a BDP).
    fn handle_queue_too_high_in_startup(&mut self) {
        self.full_bw_reached = true;
        let bdp = self.inflight(self.max_bw(), BBR_UNIT);
        self.m.inflight_hi = bdp.max(self.m.inflight_latest);
    }

    /// bbr_check_loss_too_high_in_startup: at the end of a recovery round with at least 6
    /// loss events and over 2 % loss.
    pub(super) fn check_loss_too_high_in_startup(&mut self, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 {
            self.m.loss_events_in_round = (self.m.loss_events_in_round + 1).min(0xf);
        }
        if self.m.loss_round_start
            && rs.ca_state == CaState::Recovery
            && self.m.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup();
            return;
        }
        if self.m.loss_round_start {
            self.m.loss_events_in_round = 0;
        }
    }
}
