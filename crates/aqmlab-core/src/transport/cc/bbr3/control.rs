//! BBR v3's controller (tcp_bbr.c v3; the directory's module text describes it): its state,
//! STARTUP, DRAIN and PROBE_RTT, the window and the pacing rate on each rate sample;
//! model.rs and probe_bw.rs add the bounds and the PROBE_BW cycle.

use super::state::{AckPhase, Model, Phase, Probe, UNSET};
use crate::params::Group;
use crate::record::rows::{CcPhase, CcReport};
use crate::transport::cc::bbr::{
    bdp, bw_bps, gain_value, in_net_at_edt, rate_bytes_per_sec, Aggregation, Mode, BBR_SCALE, BBR_UNIT,
    BW_UNIT, DRAIN_GAIN, EXTRA_ACKED_WIN_RTTS, FULL_BW_CNT, FULL_BW_THRESH, MIN_RTT_WIN,
    PACING_MARGIN_PERCENT, PROBE_RTT_MODE, TSO_MAX_BYTES,
};
use crate::transport::cc::{
    without_params, AckSample, CaState, CcInfo, CcState, CongestionControl, CongestionKind, NoParams,
    RateSample,
};
use crate::units::{Time, MS, US};
/// bbr_startup_pacing_gain (4 ln 2 rounded up) and bbr_startup_cwnd_gain.
pub const STARTUP_GAIN: u64 = BBR_UNIT * 277 / 100 + 1;
const STARTUP_CWND_GAIN: u64 = BBR_UNIT * 2;
const CWND_GAIN: u64 = BBR_UNIT * 2;
/// PROBE_BW's window gain rises by 1/4 in UP (bbr_bw_probe_cwnd_gain).
const PROBE_UP_CWND_EXTRA: u64 = BBR_UNIT / 4;
/// PROBE_RTT: every 5 s, at half the BDP.
const PROBE_RTT_WIN: Time = 5000 * MS;
const PROBE_RTT_CWND_GAIN: u64 = BBR_UNIT / 2;
pub(super) const CWND_MIN_TARGET: u64 = 4;
/// A TSO burst allowance halves for every 2^9 us of min RTT (bbr_tso_rtt_shift).
const TSO_RTT_SHIFT: u32 = 9;
const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
const MIN_TSO_SEGS: u64 = 2;

#[derive(Clone, Debug)]
pub struct Bbr3 {
    pub(super) mss: u64,
    pub(super) mode: Mode,
    pub(super) min_rtt_us: Option<u64>,
    pub(super) min_rtt_stamp: Option<Time>,
    pub(super) probe_rtt_min_us: Option<u64>,
    pub(super) probe_rtt_min_stamp: Option<Time>,
    pub(super) probe_rtt_done_stamp: Option<Time>,
    pub(super) probe_rtt_round_done: bool,
    pub(super) next_rtt_delivered: u64,
    pub(super) round_start: bool,
    pub(super) prev_ca_state: CaState,
    pub(super) pacing_gain: u64,
    pub(super) cwnd_gain: u64,
    pub(super) full_bw_reached: bool,
    pub(super) full_bw_now: bool,
    pub(super) full_bw_cnt: u32,
    pub(super) full_bw: u64,
    pub(super) has_seen_rtt: bool,
    /// The window saved at a loss or PROBE_RTT, the first window seen, the current one
    /// (segments), and the connection's delivered count at the last sample.
    pub(super) prior_cwnd: u64,
    pub(super) init_cwnd: Option<u64>,
    pub(super) cwnd: u64,
    pub(super) delivered: u64,
    /// Bytes per second; 0 until set.
    pub(super) pacing_rate: u64,
    pub(super) agg: Aggregation,
    pub(super) m: Model,
    pub(super) p: Probe,
}

impl Bbr3 {
    pub fn new(mss: u64) -> Bbr3 {
        Bbr3 {
            mss,
            mode: Mode::Startup,
            min_rtt_us: None,
            min_rtt_stamp: None,
            probe_rtt_min_us: None,
            probe_rtt_min_stamp: None,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            round_start: false,
            prev_ca_state: CaState::Open,
            pacing_gain: STARTUP_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            init_cwnd: None,
            cwnd: 0,
            delivered: 0,
            pacing_rate: 0,
            agg: Aggregation::default(),
            m: Model::default(),
            p: Probe::default(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }

    /// bbr_max_bw: the larger of the last two cycles' maxima.
    pub(super) fn max_bw(&self) -> u64 {
        self.m.bw_hi[0].max(self.m.bw_hi[1])
    }

    /// bbr_bw: the maximum, bounded by the short-term bw_lo.
    pub(super) fn bw(&self) -> u64 {
        self.max_bw().min(self.m.bw_lo)
    }

    fn rate(&self, bw: u64, gain: u64) -> u64 {
        rate_bytes_per_sec(bw, self.mss, gain, PACING_MARGIN_PERCENT).max(1)
    }

    /// bbr_init_pacing_rate_from_rtt: the STARTUP gain x window / SRTT (1 ms before any).
    fn init_pacing_rate(&mut self, st: &CcState) {
        let rtt_us = match st.srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                let us = (s / US).max(1);
                self.min_rtt_us.get_or_insert(us);
                self.probe_rtt_min_us.get_or_insert(us);
                us
            }
            None => 1000,
        };
        let bw = st.cwnd / self.mss * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate(bw, STARTUP_GAIN);
    }

    fn set_pacing_rate(&mut self, st: &CcState) {
        let rate = self.rate(self.bw(), self.pacing_gain);
        if !self.has_seen_rtt && st.srtt.is_some() {
            self.init_pacing_rate(st);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal: 2^-10 s at the pacing rate plus 64 KB halved per 512 us of min
    /// RTT, at least 2 segments.
    fn tso_segs_goal(&self) -> u64 {
        let mut bytes = self.pacing_rate >> 10;
        let r = self.min_rtt_us.map_or(u64::MAX, |m| m >> TSO_RTT_SHIFT);
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        (bytes.min(TSO_MAX_BYTES) / self.mss).max(MIN_TSO_SEGS)
    }

    fn bdp(&self, bw: u64, gain: u64) -> u64 {
        bdp(bw, self.min_rtt_us, gain, self.init_cwnd.unwrap_or(10))
    }

    /// At least 3 TSO bursts and 4 segments, 2 more in UP.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal()).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.p.phase == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// bbr_inflight: the BDP at `gain` with its quantization budget.
    pub(super) fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    pub(super) fn in_net_at_edt(&self, inflight_now: u64, pace_wait: Time) -> u64 {
        let burst = if self.pacing_gain > BBR_UNIT {
            self.tso_segs_goal()
        } else {
            0
        };
        in_net_at_edt(inflight_now, burst, pace_wait, self.bw())
    }

    fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp(self.bw(), PROBE_RTT_CWND_GAIN).max(CWND_MIN_TARGET)
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        self.prior_cwnd = if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// bbr_set_cwnd: toward the target (BDP x gain + aggregation) by what was ACKed, cut
    /// down to it once the pipe is full; PROBE_RTT's cap.
    fn set_cwnd(&self, acked: u64, cwnd: u64) -> u64 {
        let mut cwnd = cwnd;
        if acked > 0 {
            let bw = self.bw();
            let target = self.bdp(bw, self.cwnd_gain) + self.agg.cwnd(bw);
            let target = self.quantization_budget(target);
            let init = self.init_cwnd.unwrap_or(10);
            if self.full_bw_reached {
                cwnd = (cwnd + acked).min(target);
            } else if cwnd < target || cwnd < 2 * init {
                cwnd += acked;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        cwnd
    }

    /// bbr_bound_cwnd_for_inflight_model: inflight_hi while probing (all PROBE_BW but
    /// CRUISE), inflight_hi less headroom in CRUISE and PROBE_RTT; inflight_lo always.
    fn bound_cwnd(&self, cwnd: u64) -> u64 {
        let cap = match (self.mode, self.p.phase) {
            (Mode::ProbeBw, Phase::Cruise) | (Mode::ProbeRtt, _) => self.inflight_with_headroom(),
            (Mode::ProbeBw, _) => self.m.inflight_hi,
            _ => UNSET,
        };
        cwnd.min(cap.min(self.m.inflight_lo).max(CWND_MIN_TARGET))
    }

    /// bbr_update_round_start: a valid sample of data sent after the round began ends it.
    fn update_round_start(&mut self, rs: &RateSample) {
        self.round_start = false;
        if interval_us(rs).is_some() && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.round_start = true;
        }
    }

    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// bbr_check_full_bw_reached on the sample itself: 3 rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        if sample_bw >= (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    fn check_drain(&mut self, rs: &RateSample, st: &mut CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.max_bw(), BBR_UNIT) * self.mss;
            self.m.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(rs.in_flight, rs.pace_wait) <= self.inflight(self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_probe_down(rs.now);
        }
    }

    fn check_probe_rtt_done(&mut self, now: Time, cwnd: &mut u64) {
        if self.probe_rtt_done_stamp.is_none_or(|d| now <= d) {
            return;
        }
        self.probe_rtt_min_stamp = Some(now);
        *cwnd = (*cwnd).max(self.prior_cwnd);
        self.exit_probe_rtt(now);
    }

    fn exit_probe_rtt(&mut self, now: Time) {
        self.m.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_probe_down(now);
            self.start_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// bbr_update_min_rtt: the 5 s filter that schedules PROBE_RTT, the 10 s min RTT, and
    /// PROBE_RTT's entry and exit.
    fn update_min_rtt(&mut self, rs: &mut RateSample, cwnd: &mut u64) {
        let now = rs.now;
        let probe_rtt_expired = self.probe_rtt_min_stamp.is_some_and(|s| now > s + PROBE_RTT_WIN);
        if let Some(us) = rs.rtt.map(|r| r / US) {
            if self.probe_rtt_min_us.is_none_or(|m| us < m) || probe_rtt_expired {
                self.probe_rtt_min_us = Some(us);
                self.probe_rtt_min_stamp = Some(now);
            }
        }
        let min_rtt_expired = self.min_rtt_stamp.is_some_and(|s| now > s + MIN_RTT_WIN);
        let lower = matches!((self.probe_rtt_min_us, self.min_rtt_us), (Some(p), Some(m)) if p <= m);
        if self.probe_rtt_min_us.is_some() && (lower || self.min_rtt_us.is_none() || min_rtt_expired) {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if probe_rtt_expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_stamp = None;
            self.p.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = rs.total_delivered;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        rs.mark_app_limited = true;
        if self.probe_rtt_done_stamp.is_none() && rs.in_flight <= self.probe_rtt_cwnd() {
            self.probe_rtt_done_stamp = Some(now + PROBE_RTT_MODE);
            self.probe_rtt_round_done = false;
            self.next_rtt_delivered = rs.total_delivered;
        } else if self.probe_rtt_done_stamp.is_some() {
            self.probe_rtt_round_done |= self.round_start;
            if self.probe_rtt_round_done {
                self.check_probe_rtt_done(now, cwnd);
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (STARTUP_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw if self.p.phase == Phase::Up => {
                (self.p.phase.gain(), CWND_GAIN + PROBE_UP_CWND_EXTRA)
            }
            Mode::ProbeBw => (self.p.phase.gain(), CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// bbr_update_model.
    fn update_model(&mut self, rs: &mut RateSample, sample_bw: u64, st: &mut CcState, cwnd: &mut u64) {
        self.update_congestion_signals(rs, sample_bw, *cwnd);
        let bw = self.bw();
        let win = if self.full_bw_reached {
            EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        self.agg.update(rs, bw, *cwnd, self.round_start, win);
        self.check_loss_too_high_in_startup(rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(rs, st);
        self.update_cycle_phase(rs, sample_bw, st.flight_cwnd_limited, *cwnd);
        self.update_min_rtt(rs, cwnd);
    }

    /// bbr_main (segments in, segments out).
    fn main(&mut self, rs: &mut RateSample, st: &mut CcState, cwnd: u64) -> u64 {
        let mut cwnd = cwnd;
        self.init_cwnd.get_or_insert(cwnd.min(0x7f));
        self.min_rtt_stamp.get_or_insert(rs.now);
        self.probe_rtt_min_stamp.get_or_insert(rs.now);
        if self.prev_ca_state == CaState::Loss && rs.ca_state != CaState::Loss {
            cwnd = cwnd.max(self.prior_cwnd);
        }
        self.delivered = rs.total_delivered;
        self.m.note_ce(rs);
        self.update_round_start(rs);
        if self.round_start {
            self.p.rounds_since_probe = (self.p.rounds_since_probe + 1).min(0xff);
            self.update_ecn_alpha(rs);
        }
        self.m.ecn_in_round |= self.m.ecn_eligible && rs.ce > 0;
        let sample_bw = bw_sample(rs);
        self.update_latest_delivery_signals(rs, sample_bw);
        self.update_model(rs, sample_bw, st, &mut cwnd);
        self.update_gains();
        self.set_pacing_rate(st);
        cwnd = self.bound_cwnd(self.set_cwnd(rs.acked_sacked, cwnd));
        self.m.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = rs.ca_state;
        self.m.loss_in_cycle |= rs.lost > 0;
        self.m.ecn_in_cycle |= rs.delivered_ce > 0;
        self.cwnd = cwnd;
        cwnd
    }
}

/// The sample's interval in whole microseconds, if it is a valid one.
pub(super) fn interval_us(rs: &RateSample) -> Option<u64> {
    rs.interval.map(|i| i / US).filter(|&us| us > 0)
}

/// bbr_calculate_bw_sample: delivered / interval, rounded up (0 for an invalid sample).
fn bw_sample(rs: &RateSample) -> u64 {
    match (rs.delivered, interval_us(rs)) {
        (Some(d), Some(us)) => (d * BW_UNIT).div_ceil(us),
        _ => 0,
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    /// The window is set per rate sample instead.
    fn on_ack(&mut self, _ack: &AckSample, _st: &mut CcState) {}

    /// bbr_ssthresh: the window is kept (and saved for the end of recovery).
    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        self.save_cwnd(st.cwnd / self.mss);
    }

    /// tcp_enter_loss asks for ssthresh (the window saved), then bbr_set_state(TCP_CA_Loss):
    /// full-bandwidth detection starts again and, outside probing, inflight_lo starts from
    /// the window before the timeout.
    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        let cwnd = st.cwnd / self.mss;
        if first {
            self.save_cwnd(cwnd);
        }
        self.prev_ca_state = CaState::Loss;
        self.reset_full_bw();
        if !self.is_probing_bandwidth() && self.m.inflight_lo == UNSET {
            self.m.inflight_lo = cwnd.max(self.prior_cwnd);
        }
    }

    fn rate_based(&self) -> bool {
        true
    }

    fn on_rate_sample(&mut self, rs: &mut RateSample, st: &mut CcState) {
        let cwnd = self.main(rs, st, st.cwnd / self.mss);
        st.cwnd = cwnd * self.mss;
    }

    /// bbr_skb_marked_lost.
    fn on_segment_lost(&mut self, rs: &RateSample) {
        self.segment_lost(rs);
    }

    fn pacing_rate(&mut self, st: &CcState) -> Option<u64> {
        if self.pacing_rate == 0 || (!self.has_seen_rtt && st.srtt.is_some()) {
            self.init_pacing_rate(st);
        }
        Some(self.pacing_rate)
    }

    /// The bandwidth it paces at (bbr_bw: the maximum bounded by bw_lo), the minimum RTT, the
    /// pacing gain, the mode with PROBE_BW's phase, and the ECN alpha once ECN is in use.
    fn report(&self, r: &mut CcReport) {
        r.bw_bps = Some(bw_bps(self.bw(), self.mss));
        r.min_rtt = self.min_rtt_us.map(|u| u * US);
        r.pacing_gain = Some(gain_value(self.pacing_gain));
        r.phase = Some(match (self.mode, self.p.phase) {
            (Mode::ProbeBw, Phase::Down) => CcPhase::ProbeBwDown,
            (Mode::ProbeBw, Phase::Cruise) => CcPhase::ProbeBwCruise,
            (Mode::ProbeBw, Phase::Refill) => CcPhase::ProbeBwRefill,
            (Mode::ProbeBw, Phase::Up) => CcPhase::ProbeBwUp,
            (mode, _) => mode.phase(),
        });
        r.alpha = self.m.ecn_eligible.then(|| gain_value(self.m.ecn_alpha));
    }
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "bbr3",
    summary: "BBR v3: v1's model with bounds from loss and ECN",
    reference: "google/bbr v3 net/ipv4/tcp_bbr.c; draft-ietf-ccwg-bbr",
    params: &[Group::of::<NoParams>()],
    needs_accecn: false,
    build: |p, ctx| without_params(p, Box::new(Bbr3::new(ctx.mss))),
}];

#[cfg(test)]
mod tests;
