//! BBR v1's state and its state machine (tcp_bbr.c; the directory's module text describes it):
//! the path model, the modes and their gains, the window and the pacing rate on each rate
//! sample.

use super::aggregation::Aggregation;
use super::filter::WindowedMax;
use super::fixed::{
    bdp, bw_bps, gain_value, in_net_at_edt, rate_bytes_per_sec, BBR_SCALE, BBR_UNIT, BW_UNIT,
};
use crate::params::Group;
use crate::queue::util::mix64;
use crate::record::rows::{CcPhase, CcReport};
use crate::transport::cc::{
    read_params, AckSample, CaState, CcBuild, CcContext, CcInfo, CcState, CongestionControl, CongestionKind,
    Params, RateSample,
};
use crate::units::{Time, MS, SEC, US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Phases of the PROBE_BW gain cycle, and the window of the bandwidth filter in rounds.
const CYCLE_LEN: usize = 8;
const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
pub(crate) const MIN_RTT_WIN: Time = 10 * SEC;
pub(crate) const PROBE_RTT_MODE: Time = 200 * MS;
/// Below this pacing rate (bits per second) one-segment TSO bursts (bbr_min_tso_rate).
const MIN_TSO_RATE: u64 = 1_200_000;
pub(crate) const PACING_MARGIN_PERCENT: u64 = 1;
/// 2/ln 2 and its inverse, and the steady-state window gain.
pub const HIGH_GAIN: u64 = BBR_UNIT * 2885 / 1000 + 1;
pub const DRAIN_GAIN: u64 = BBR_UNIT * 1000 / 2885;
pub(crate) const CWND_GAIN: u64 = BBR_UNIT * 2;
pub const PACING_GAIN: [u64; CYCLE_LEN] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The first PROBE_BW phase is drawn from this many (never the 3/4 phase).
const CYCLE_RAND: u64 = 7;
/// The smallest window aimed at, segments.
pub const CWND_MIN_TARGET: u64 = 4;
/// Full pipe: bandwidth growth below 5/4 for 3 rounds.
pub(crate) const FULL_BW_THRESH: u64 = BBR_UNIT * 5 / 4;
pub(crate) const FULL_BW_CNT: u32 = 3;
/// ACK aggregation's window in rounds.
pub(crate) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Linux's initial window (TCP_INIT_CWND), the window before any RTT sample.
pub(crate) const INIT_CWND: u64 = 10;
/// The largest TSO burst BBR budgets for: GSO_MAX_SIZE - 1 - MAX_TCP_HEADER (320 on x86-64).
pub(crate) const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub(crate) fn phase(self) -> CcPhase {
        match self {
            Mode::Startup => CcPhase::Startup,
            Mode::Drain => CcPhase::Drain,
            Mode::ProbeBw => CcPhase::ProbeBw,
            Mode::ProbeRtt => CcPhase::ProbeRtt,
        }
    }
}

/// The long-term (policer) bandwidth estimator's state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LongTerm {
    pub(super) is_sampling: bool,
    pub(super) rtt_cnt: u32,
    pub(super) use_bw: bool,
    pub(super) bw: u64,
    pub(super) last_delivered: u64,
    /// In milliseconds, as Linux keeps it.
    pub(super) last_stamp_ms: u64,
    pub(super) last_lost: u64,
}

#[derive(Clone, Debug)]
pub struct Bbr {
    mss: u64,
    pub(super) mode: Mode,
    /// Minimum RTT in microseconds (None: no sample yet) and when it was taken.
    min_rtt_us: Option<u64>,
    min_rtt_stamp: Option<Time>,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    bw: WindowedMax,
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    pub(super) round_start: bool,
    cycle_mstamp: Time,
    cycle_idx: usize,
    prev_ca_state: CaState,
    packet_conservation: bool,
    pub(super) lt: LongTerm,
    agg: Aggregation,
    pub(super) pacing_gain: u64,
    cwnd_gain: u64,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    full_bw: u64,
    has_seen_rtt: bool,
    /// The window saved at a loss or PROBE_RTT, segments.
    prior_cwnd: u64,
    /// Bytes per second; 0 until set.
    pacing_rate: u64,
    /// The last sample's totals (for the long-term estimator on a timeout).
    last: RateSample,
    min_rtt_renew: MinRttRenew,
}

/// Which minimum-RTT sample renews the estimate (and its 10 s clock) before it expires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MinRttRenew {
    /// Only one below it (tcp_bbr.c `bbr_update_min_rtt` since Linux 5.10, commit 1b9e2a8c99a5
    /// "tcp: only postpone PROBE_RTT if RTT is < current min_rtt estimate"): PROBE_RTT comes
    /// every 10 s unless the path's RTT falls.
    #[default]
    Lower,
    /// One at or below it (4.9-5.9): equal samples keep postponing PROBE_RTT.
    LowerOrEqual,
}

/// BBR's parameters (the flow's `cc_params` table), every default written out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BbrParams {
    /// Which sample renews the minimum RTT: "lower" (default, Linux 5.10 on) or
    /// "lower_or_equal" (4.9-5.9).
    pub min_rtt_renew: MinRttRenew,
}

impl Params<()> for BbrParams {}

impl Bbr {
    pub fn new(mss: u64) -> Bbr {
        Bbr::with_params(mss, BbrParams::default())
    }

    pub fn with_params(mss: u64, params: BbrParams) -> Bbr {
        Bbr {
            mss,
            mode: Mode::Startup,
            min_rtt_us: None,
            min_rtt_stamp: None,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_mstamp: 0,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            lt: LongTerm::default(),
            agg: Aggregation::default(),
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            full_bw: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            pacing_rate: 0,
            last: RateSample::default(),
            min_rtt_renew: params.min_rtt_renew,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    pub fn pacing_gain(&self) -> u64 {
        self.pacing_gain
    }
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// The bandwidth estimate in segments per microsecond << 24.
    pub fn bw(&self) -> u64 {
        if self.lt.use_bw {
            self.lt.bw
        } else {
            self.bw.get()
        }
    }
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt_us.map(|u| u * US)
    }

    /// The rate in bytes per second, 1 % off.
    pub(super) fn rate_bytes_per_sec(&self, rate: u64, gain: u64) -> u64 {
        rate_bytes_per_sec(rate, self.mss, gain, PACING_MARGIN_PERCENT)
    }

    /// bbr_init_pacing_rate_from_rtt: high gain x window / SRTT (1 ms before any sample).
    fn init_pacing_rate(&mut self, st: &CcState) {
        let rtt_us = match st.srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                // tcp_min_rtt at bbr_init: the handshake's sample, the only one then.
                self.min_rtt_us.get_or_insert((s / US).max(1));
                (s / US).max(1)
            }
            None => 1000,
        };
        let bw = st.cwnd / self.mss * BW_UNIT / rtt_us;
        self.pacing_rate = self.rate_bytes_per_sec(bw, HIGH_GAIN);
    }

    fn set_pacing_rate(&mut self, bw: u64, gain: u64, st: &CcState) {
        let rate = self.rate_bytes_per_sec(bw, gain);
        if !self.has_seen_rtt && st.srtt.is_some() {
            self.init_pacing_rate(st);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// bbr_tso_segs_goal: the segments of 2^-10 s at the pacing rate, at least 2 (1 below
    /// 1.2 Mbit/s), at most 127.
    fn tso_segs_goal(&self) -> u64 {
        let min = if self.pacing_rate < MIN_TSO_RATE / 8 { 1 } else { 2 };
        let bytes = (self.pacing_rate >> 10).min(TSO_MAX_BYTES);
        (bytes / self.mss).max(min).min(0x7f)
    }

    /// ceil(bw x min RTT x gain) in segments (10 before any RTT sample).
    fn bdp(&self, bw: u64, gain: u64) -> u64 {
        bdp(bw, self.min_rtt_us, gain, INIT_CWND)
    }

    /// Room for 3 TSO bursts, rounded up to even, 2 more in the 5/4 phase.
    fn quantization_budget(&self, cwnd: u64) -> u64 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    fn inflight(&self, bw: u64, gain: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// bbr_packets_in_net_at_edt: what will still be in the network when pacing next lets a
    /// segment go (`pace_wait` from now), counting that burst when the gain is above 1.
    fn in_net_at_edt(&self, inflight_now: u64, pace_wait: Time) -> u64 {
        let burst = if self.pacing_gain > BBR_UNIT {
            self.tso_segs_goal()
        } else {
            0
        };
        in_net_at_edt(inflight_now, burst, pace_wait, self.bw())
    }

    fn ack_aggregation_cwnd(&self) -> u64 {
        if !self.full_bw_reached {
            return 0;
        }
        self.agg.cwnd(self.bw())
    }

    fn save_cwnd(&mut self, cwnd: u64) {
        self.prior_cwnd = if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            cwnd
        } else {
            self.prior_cwnd.max(cwnd)
        };
    }

    /// Packet conservation in the first round of recovery, the saved window restored on its
    /// exit; returns the window and whether conservation holds it.
    fn recover_or_restore(&mut self, rs: &RateSample, acked: u64, cwnd: u64) -> (u64, bool) {
        let mut cwnd = cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        let (prev, state) = (self.prev_ca_state, rs.ca_state);
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.total_delivered;
            cwnd = rs.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(rs.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// bbr_set_cwnd, in segments.
    fn set_cwnd(&mut self, rs: &RateSample, bw: u64, cwnd: u64) -> u64 {
        let acked = rs.acked_sacked;
        let mut cwnd = cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(rs, acked, cwnd);
            cwnd = c;
            if !conserving {
                let target = self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd();
                let target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || rs.total_delivered < INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(CWND_MIN_TARGET);
        }
        cwnd
    }

    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = self
            .min_rtt_us
            .is_some_and(|m| rs.delivered_at.saturating_sub(self.cycle_mstamp) / US > m);
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = self.in_net_at_edt(rs.prior_in_flight, rs.pace_wait);
        let bw = self.bw.get();
        if self.pacing_gain > BBR_UNIT {
            return full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self, delivered_at: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_mstamp = delivered_at;
    }

    /// PROBE_BW from a random phase other than 3/4 (see the module header).
    pub(super) fn reset_probe_bw_mode(&mut self, now: Time, delivered_at: Time) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - (mix64(now) % CYCLE_RAND) as usize;
        self.advance_cycle_phase(delivered_at);
    }

    fn reset_mode(&mut self, now: Time, delivered_at: Time) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(now, delivered_at);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// bbr_update_bw: the round count and the bandwidth filter.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let (Some(delivered), Some(interval)) = (rs.delivered, rs.interval) else {
            return;
        };
        let interval_us = interval / US;
        if interval_us == 0 {
            return;
        }
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.total_delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_sampling(rs);
        let bw = delivered * BW_UNIT / interval_us;
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    fn update_ack_aggregation(&mut self, rs: &RateSample, cwnd: u64) {
        let bw = self.bw();
        self.agg
            .update(rs, bw, cwnd, self.round_start, EXTRA_ACKED_WIN_RTTS);
    }

    fn update_cycle_phase(&mut self, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase(rs.delivered_at);
        }
    }

    /// Full pipe: 3 rounds (not app-limited) without 25 % bandwidth growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * FULL_BW_THRESH) >> BBR_SCALE;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    fn check_drain(&mut self, rs: &RateSample, st: &mut CcState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            st.ssthresh = self.inflight(self.bw.get(), BBR_UNIT) * self.mss;
        }
        if self.mode == Mode::Drain
            && self.in_net_at_edt(rs.in_flight, rs.pace_wait) <= self.inflight(self.bw.get(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(rs.now, rs.delivered_at);
        }
    }

    fn check_probe_rtt_done(&mut self, rs: &RateSample, cwnd: &mut u64) {
        if self.probe_rtt_done_stamp.is_none_or(|d| rs.now <= d) {
            return;
        }
        self.min_rtt_stamp = Some(rs.now);
        *cwnd = (*cwnd).max(self.prior_cwnd);
        self.reset_mode(rs.now, rs.delivered_at);
    }

    /// The min RTT filter, and PROBE_RTT's entry and exit.
    fn update_min_rtt(&mut self, rs: &mut RateSample, cwnd: &mut u64) {
        let expired = self.min_rtt_stamp.is_some_and(|s| rs.now > s + MIN_RTT_WIN);
        if let Some(rtt) = rs.rtt {
            let us = rtt / US;
            let renews = |m: u64| match self.min_rtt_renew {
                MinRttRenew::Lower => us < m,
                MinRttRenew::LowerOrEqual => us <= m,
            };
            if self.min_rtt_us.is_none_or(renews) || expired {
                self.min_rtt_us = Some(us);
                self.min_rtt_stamp = Some(rs.now);
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            rs.mark_app_limited = true;
            if self.probe_rtt_done_stamp.is_none() && rs.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(rs.now + PROBE_RTT_MODE);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = rs.total_delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(rs, cwnd);
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw if self.lt.use_bw => (BBR_UNIT, CWND_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// bbr_main: the model, then the pacing rate and the window (segments in, segments out).
    fn main(&mut self, rs: &mut RateSample, st: &mut CcState, cwnd: u64) -> u64 {
        self.min_rtt_stamp.get_or_insert(rs.now);
        let mut cwnd = cwnd;
        self.update_bw(rs);
        self.update_ack_aggregation(rs, cwnd);
        self.update_cycle_phase(rs);
        self.check_full_bw_reached(rs);
        self.check_drain(rs, st);
        self.update_min_rtt(rs, &mut cwnd);
        self.update_gains();
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, st);
        self.last = *rs;
        self.set_cwnd(rs, bw, cwnd)
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// The window is set per rate sample instead.
    fn on_ack(&mut self, _ack: &AckSample, _st: &mut CcState) {}

    /// bbr_ssthresh: the window is kept (and saved for the end of recovery).
    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        self.save_cwnd(st.cwnd / self.mss);
    }

    /// tcp_enter_loss asks for ssthresh (the window saved), then bbr_set_state(TCP_CA_Loss):
    /// the timeout ends a round, full-pipe detection starts again, a loss for the long-term
    /// estimator.
    fn on_rto(&mut self, now: Time, first: bool, st: &mut CcState) {
        if first {
            self.save_cwnd(st.cwnd / self.mss);
        }
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        let rs = RateSample {
            now,
            losses: 1,
            ..self.last
        };
        self.lt_sampling(&rs);
    }

    fn rate_based(&self) -> bool {
        true
    }

    fn on_rate_sample(&mut self, rs: &mut RateSample, st: &mut CcState) {
        let cwnd = self.main(rs, st, st.cwnd / self.mss);
        st.cwnd = cwnd * self.mss;
    }

    fn pacing_rate(&mut self, st: &CcState) -> Option<u64> {
        if self.pacing_rate == 0 || (!self.has_seen_rtt && st.srtt.is_some()) {
            self.init_pacing_rate(st);
        }
        Some(self.pacing_rate)
    }

    /// bbr_get_info's view: the bandwidth in use (the long-term one while policed), the
    /// minimum RTT, the pacing gain and the mode.
    fn report(&self, r: &mut CcReport) {
        r.bw_bps = Some(bw_bps(self.bw(), self.mss));
        r.min_rtt = self.min_rtt();
        r.pacing_gain = Some(gain_value(self.pacing_gain));
        r.phase = Some(self.mode.phase());
    }
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "bbr",
    summary: "BBR v1: paces at the measured bottleneck bandwidth, the window a multiple of its BDP",
    reference: "Cardwell et al., ACM Queue 14(5) 2016; Linux tcp_bbr.c",
    params: &[Group::of::<BbrParams>()],
    needs_accecn: false,
    build,
}];

fn build(params: &Value, ctx: &CcContext) -> CcBuild {
    let (p, resolved) = read_params::<BbrParams>(params)?;
    Ok((Box::new(Bbr::with_params(ctx.mss, p)), resolved))
}

#[cfg(test)]
mod tests;
