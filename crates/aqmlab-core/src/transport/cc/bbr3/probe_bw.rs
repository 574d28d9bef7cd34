//! BBR v3's PROBE_BW cycle (tcp_bbr.c v3 `bbr_update_cycle_phase`): DOWN, CRUISE, REFILL and
//! UP, the probing schedule (a random 2-3 s wall-clock wait, or Reno's time scale in rounds),
//! and inflight_hi's growth while probing up.

use super::control::Bbr3;
use super::state::{AckPhase, Phase, UNSET};
use crate::queue::util::mix64;
use crate::transport::cc::bbr::{Mode, BBR_SCALE, BBR_UNIT};
use crate::transport::cc::{CaState, RateSample};
use crate::units::{Time, US};

/// bbr_bw_probe_max_rounds, bbr_bw_probe_rand_rounds, bbr_bw_probe_base_us,
/// bbr_bw_probe_rand_us, bbr_ecn_reprobe_gain.
const PROBE_MAX_ROUNDS: u64 = 63;
const PROBE_RAND_ROUNDS: u64 = 2;
const PROBE_BASE_US: u64 = 2_000_000;
const PROBE_RAND_US: u64 = 1_000_000;
const ECN_REPROBE_GAIN: u64 = BBR_UNIT / 2;

impl Bbr3 {
    pub fn phase(&self) -> Phase {
        self.p.phase
    }

    /// bbr_is_probing_bandwidth: STARTUP, REFILL and UP.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.p.phase, Phase::Refill | Phase::Up))
    }

    /// bbr_pick_probe_wait: 0 or 1 rounds already counted, 2 s plus up to 1 s, from a hash of
    /// the time (Linux: get_random_u32_below).
    fn pick_probe_wait(&mut self, now: Time) {
        let h = mix64(now);
        self.p.rounds_since_probe = h % PROBE_RAND_ROUNDS;
        self.p.wait = (PROBE_BASE_US + (h >> 1) % PROBE_RAND_US) * US;
    }

    /// bbr_raise_inflight_hi_slope: 2^rounds more per round, so 1 per cwnd / 2^rounds ACKed.
    fn raise_inflight_hi_slope(&mut self, cwnd: u64) {
        let growth = 1u64 << self.p.up_rounds;
        self.p.up_rounds = (self.p.up_rounds + 1).min(30);
        self.p.up_cnt = (cwnd / growth).max(1);
    }

    /// bbr_probe_inflight_hi_upward: only while the window, at inflight_hi, limits sending.
    pub(super) fn probe_inflight_hi_upward(&mut self, rs: &RateSample, cwnd_limited: bool, cwnd: u64) {
        if !cwnd_limited || cwnd < self.m.inflight_hi {
            return;
        }
        self.p.up_acks += rs.acked_sacked;
        if self.p.up_acks >= self.p.up_cnt {
            let delta = self.p.up_acks / self.p.up_cnt;
            self.p.up_acks -= delta * self.p.up_cnt;
            self.m.inflight_hi += delta;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cwnd);
        }
    }

    /// REFILL: the lower bounds lifted, a round at the estimated bandwidth.
    pub(super) fn start_probe_refill(&mut self, up_rounds: u32) {
        self.m.reset_lower_bounds();
        self.p.up_rounds = up_rounds;
        self.p.up_acks = 0;
        self.p.stopped_risky_probe = false;
        self.p.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = self.delivered;
        self.p.phase = Phase::Refill;
    }

    fn start_probe_up(&mut self, now: Time, sample_bw: u64, cwnd: u64) {
        self.p.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = self.delivered;
        self.p.cycle_mstamp = now;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.p.phase = Phase::Up;
        self.raise_inflight_hi_slope(cwnd);
    }

    /// DOWN starts a cycle: the congestion signals cleared, the next probe scheduled.
    pub(super) fn start_probe_down(&mut self, now: Time) {
        self.m.reset_congestion_signals();
        self.p.up_cnt = UNSET;
        self.pick_probe_wait(now);
        self.p.cycle_mstamp = now;
        self.p.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = self.delivered;
        self.p.phase = Phase::Down;
    }

    pub(super) fn start_probe_cruise(&mut self) {
        if self.m.inflight_lo != UNSET {
            self.m.inflight_lo = self.m.inflight_lo.min(self.m.inflight_hi);
        }
        self.p.phase = Phase::Cruise;
    }

    /// bbr_check_time_to_probe_bw: at once when CE marks (without loss) have ceased, else
    /// after the wall-clock wait or Reno's number of rounds.
    fn check_time_to_probe_bw(&mut self, rs: &RateSample) -> bool {
        let m = &self.m;
        if m.ecn_eligible && m.ecn_in_cycle && !m.loss_in_cycle && rs.ca_state == CaState::Open {
            let v = ((m.inflight_hi as u128 * ECN_REPROBE_GAIN as u128) >> BBR_SCALE) as u64;
            let n = v.checked_ilog2().unwrap_or(0).min(30);
            self.start_probe_refill(n);
            return true;
        }
        let elapsed = rs.now > self.p.cycle_mstamp + self.p.wait;
        let reno_rounds = PROBE_MAX_ROUNDS.min(self.target_inflight());
        if elapsed || self.p.rounds_since_probe >= reno_rounds {
            self.start_probe_refill(0);
            return true;
        }
        false
    }

    /// bbr_check_time_to_cruise: inflight below both inflight_hi's headroom and the BDP.
    fn check_time_to_cruise(&self, inflight: u64, bw: u64) -> bool {
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(bw, BBR_UNIT)
    }

    /// UP ends at a ceiling that proved too high before, or when the bandwidth stopped
    /// growing though inflight_hi did not hold it back.
    fn probe_up_done(&mut self, inflight: u64, sample_bw: u64, cwnd_limited: bool, cwnd: u64) -> bool {
        if self.p.prev_probe_too_high && inflight >= self.m.inflight_hi {
            self.p.stopped_risky_probe = true;
            return true;
        }
        if cwnd_limited && cwnd >= self.m.inflight_hi {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return false;
        }
        self.full_bw_now
    }

    /// bbr_update_cycle_phase (after STARTUP): the bounds, then PROBE_BW's transitions.
    pub(super) fn update_cycle_phase(
        &mut self,
        rs: &RateSample,
        sample_bw: u64,
        cwnd_limited: bool,
        cwnd: u64,
    ) {
        if !self.full_bw_reached
            || self.adapt_upper_bounds(rs, cwnd_limited, cwnd)
            || self.mode != Mode::ProbeBw
        {
            return;
        }
        let inflight = self.in_net_at_edt(rs.prior_in_flight, rs.pace_wait);
        match self.p.phase {
            Phase::Cruise => {
                self.check_time_to_probe_bw(rs);
            }
            Phase::Refill if self.round_start => {
                self.p.bw_probe_samples = true;
                self.start_probe_up(rs.now, sample_bw, cwnd);
            }
            Phase::Refill => {}
            Phase::Up => {
                if self.probe_up_done(inflight, sample_bw, cwnd_limited, cwnd) {
                    self.p.prev_probe_too_high = false;
                    self.start_probe_down(rs.now);
                }
            }
            Phase::Down => {
                if !self.check_time_to_probe_bw(rs) && self.check_time_to_cruise(inflight, self.max_bw()) {
                    self.start_probe_cruise();
                }
            }
        }
    }
}
