//! TCP Prague, the L4S team's scalable controller (L4STeam/linux net/ipv4/tcp_prague.c, v0.7),
//! in its fractional-window mode:
//!
//! * alpha, the EWMA of the fraction of CE-marked packets, with gain g = 1/16, kept upscaled by
//!   1/g in 2^-24 units (PRAGUE_ALPHA_BITS 24) so the remainder carries over: per update,
//!   alpha' = alpha' - alpha' >> 4 + F, F = (CE packets << 24) / packets delivered since the
//!   last update (`prague_update_alpha`). It is not updated before the first CE mark. It starts
//!   at 0 and that mark halves the window (prague_alpha_mode 0), or, with `alpha_mode = 1`, at 1
//!   with no halving of its own: the mark's ECN response then halves (the file at L4STeam/linux
//!   b256dae, 2020, whose `prague_init` sets upscaled_alpha to PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G).
//! * The window in fractions of a segment (2^-20, CWND_UNIT): each ACK adds (packets delivered
//!   and not CE-marked) x ai / W segments, x 1500 / MTU (`prague_update_cwnd`); the integer
//!   window follows the fraction rounded up by one segment per ACK, at least 2, a decrease also
//!   setting ssthresh. With `integer_cwnd = "carry"` it moves only once the fraction is a whole
//!   segment away from it, as the file at L4STeam/linux b256dae (2020) kept the window: an
//!   integer cwnd and a carry `cwnd_cnt` in (-1, 1) segment, cwnd stepped when the carry
//!   reaches +-1 (`prague_update_cwnd`, its `adjust` label), and set to 2 with the carry cleared
//!   below 2. Slow start (RFC 5681, in packets as tcp_slow_start) sets the fraction; with
//!   `integer_cwnd = "carry"` it grows the integer window and keeps the carry, as b256dae's
//!   tcp_slow_start leaves `cwnd_cnt` alone: an ECN cut in slow start is then applied one segment
//!   per ACK from the first ACK that reaches `adjust` (one whose segments were all CE-marked, or
//!   the first past ssthresh), which sets ssthresh and so ends slow start.
//! * The ECN response, once per RTT (the sender reduces once per window): fraction -= fraction
//!   x alpha / 2, rounded to nearest (`prague_enter_cwr`).
//! * Pacing at 100 % of cwnd / SRTT (200 % while cwnd < ssthresh / 2), bursts of 2^-12 s at
//!   that rate, at least one segment (prague_burst_shift 12): see [`Prague::pacing`]. The
//!   window is counted in MTU-sized packets, as `prague_update_pacing_rate` counts it
//!   (`tcp_mss_to_mtu`, at b256dae and since), while the sender holds each packet back by its
//!   payload: the rate is (MSS + headers) / MSS above a payload rate (`pacing_unit = "mss"`).
//! * RTT independence (RTT_CONTROL_RATE) from `rtt_transition` rounds after slow start on: with
//!   SRTT below `rtt_target` the per-ACK increase is scaled by (SRTT / target)^2 (the window
//!   then grows one segment per target RTT, like a flow with that RTT), alpha is updated at
//!   most once per target RTT, and the ECN response too. `rtt_target = "0s"` switches it off
//!   (tcp_prague.c before v0.7: `rtt_indep = rtt_target ? scaling : RTT_CONTROL_NONE`).
//! * Loss (`loss_response`): with "at_once" (the default) the fraction halved and ssthresh and
//!   cwnd set to it at once, the sender's PRR and recovery exit then applying as for Reno; a
//!   timeout halves ssthresh once. With "per_ack" as the file at L4STeam/linux b256dae (2020)
//!   responded: entering fast recovery or a timeout (`prague_state` on TCP_CA_Recovery,
//!   `prague_cwnd_event` on CA_EVENT_LOSS, both `prague_enter_loss`) halves the window's carry,
//!   which leaves the fraction halved (rounded up); nothing grows until the connection is Open
//!   again (`in_loss`, cleared by `prague_ca_open`), cwnd steps one segment per ACK towards the
//!   fraction (`prague_update_cwnd`, its `adjust` label, which also sets ssthresh to each new
//!   cwnd), and ssthresh is otherwise left where it was (`prague_ssthresh` returns it
//!   unchanged). Prague's `cong_control` hook takes the window from Linux's hands in recovery
//!   (tcp_input.c: `tcp_cong_control` calls it in place of PRR's `tcp_cwnd_reduction`, and
//!   `tcp_end_cwnd_reduction` leaves cwnd alone at the end), so the sender does too
//!   (`owns_window`). After a timeout cwnd is 1 (tcp_enter_loss: packets in flight + 1)
//!   while the carry still holds the halving, so the first ACK steps it to 0, clamped to 2 with
//!   the carry cleared and ssthresh 2: the flow leaves the timeout's episode in congestion
//!   avoidance from 2 segments. A timeout inside fast recovery, or repeated, does not halve again
//!   (tcp_enter_loss calls the hooks only when it reduces ssthresh). Undo: a timeout undone
//!   restores the fraction of the loss (b256dae's `prague_cwnd_undo` also adds the carry's change
//!   since the loss, twice over; not modelled), and fast recovery has no undo in aqmlab.
//! * Without AccECN the sender runs Reno instead, without ECN (its registry entry's
//!   [`CcInfo::needs_accecn`]).
//!
//! Left out (documented): the rate-based mode below 4 MTUs of window (prague_cwnd_mode 2)
//! and the ±3 % pacing offset that comes with it, the MTU reduction at low rates, the classic
//! ECN detection of earlier versions (off by default there). A round is the sender's (snd_una
//! past the highest sequence sent at the previous round start), as for DCTCP.

use super::{read_params, AckSample, CcBuild, CcContext, CcInfo, CcState, CongestionControl, CongestionKind};
use crate::params::{check_range, Group, Params};
use crate::record::rows::CcReport;
use crate::transport::wire::{Pacing, HEADER};
use crate::units::{fmt_time, Dur, Time, MS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// alpha's resolution (PRAGUE_ALPHA_BITS) and the EWMA gain 2^-SHIFT_G (PRAGUE_SHIFT_G).
pub const ALPHA_BITS: u32 = 24;
pub const SHIFT_G: u32 = 4;
/// The window's fixed point: 2^-20 segment (CWND_UNIT).
pub const CWND_UNIT: u32 = 20;
const ONE_CWND: u64 = 1 << CWND_UNIT;
const MIN_CWND: u64 = 2;
/// The packet size the increase is normalised to (MTU_SYS).
const MTU_SYS: u64 = 1500;
/// Above this SRTT the increase is not scaled (MAX_SCALED_RTT).
const MAX_SCALED_RTT: Time = 100 * MS;

/// How the integer window follows the fractional one (the `integer_cwnd` parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegerCwnd {
    /// The fraction rounded up, at least 2 (prague_frac_cwnd_to_snd_cwnd).
    #[default]
    RoundUp,
    /// A whole segment of carry either way (b256dae's prague_update_cwnd).
    Carry,
}

/// How Prague answers a loss (the `loss_response` parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossResponse {
    /// The fraction, cwnd and ssthresh halved at once; the sender's PRR applies (Reno's).
    #[default]
    AtOnce,
    /// b256dae's `prague_enter_loss`: the carry halved, cwnd stepped down one segment per ACK,
    /// no growth until Open, ssthresh left alone (`prague_ssthresh`), no PRR (`cong_control`).
    PerAck,
}

/// What Prague's pacing rate counts (the `pacing_unit` parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PacingUnit {
    /// The window's payload per SRTT, as Linux's tcp_update_pacing_rate counts it (aqmlab's
    /// Prague before 2026-11-26).
    Mss,
    /// The window in MTU-sized packets per SRTT (tcp_prague.c prague_update_pacing_rate:
    /// tcp_mss_to_mtu, at b256dae of 2020 and in v0.7), the packets then held back by their
    /// payload: (MSS + headers) / MSS faster.
    #[default]
    Mtu,
}

/// Prague's parameters (the flow's `cc_params` table).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PragueParams {
    /// The RTT-independence target (prague_rtt_target, 25 ms); "0s": RTT independence off.
    pub rtt_target: Dur,
    /// Rounds after slow start before RTT independence applies (prague_rtt_transition, 4).
    pub rtt_transition: u32,
    /// alpha's start (prague_alpha_mode): 0, the first CE mark halving the window; 1, alpha
    /// starting at 1 (tcp_prague.c at L4STeam/linux b256dae, 2020: `prague_init`).
    pub alpha_mode: u8,
    /// How the integer window follows the fraction: "round_up" (today's) or "carry" (2020).
    pub integer_cwnd: IntegerCwnd,
    /// The response to a loss: "at_once" (Reno's halving) or "per_ack" (2020).
    pub loss_response: LossResponse,
    /// What the pacing rate counts: "mtu" (tcp_prague.c's prague_update_pacing_rate, 2020 and
    /// later) or "mss" (the payload, aqmlab's default before 2026-11-26).
    pub pacing_unit: PacingUnit,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            rtt_target: Dur(25 * MS),
            rtt_transition: 4,
            alpha_mode: 0,
            integer_cwnd: IntegerCwnd::RoundUp,
            loss_response: LossResponse::AtOnce,
            pacing_unit: PacingUnit::Mtu,
        }
    }
}

impl Params<()> for PragueParams {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        if self.rtt_target.0 > MAX_SCALED_RTT {
            return Err(format!(
                "rtt_target: {} is out of range; allowed: 0s (off) up to 100ms (tcp_prague.c MAX_SCALED_RTT)",
                fmt_time(self.rtt_target.0)
            ));
        }
        check_range("alpha_mode", self.alpha_mode, 0, 1)
    }
}

#[derive(Clone, Debug)]
pub struct Prague {
    p: PragueParams,
    mss: u64,
    /// The IP packet of a full segment (MSS + headers).
    mtu: u64,
    /// The window in 2^-20 segments (0 until the first ACK reads the initial window).
    frac: u64,
    /// alpha / g in 2^-24 units.
    alpha_up: u64,
    /// The per-ACK increase numerator (1 segment = 2^20, scaled by RTT independence).
    ai: u64,
    saw_ce: bool,
    /// Rounds since slow start was left.
    round: u32,
    delivered: u64,
    delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// A round ended since the last alpha update.
    round_done: bool,
    alpha_stamp: Time,
    cwr_stamp: Option<Time>,
    /// `loss_response = "per_ack"`: a loss is being answered (b256dae's `in_loss`), and the
    /// fraction when it was taken (restored by an undo).
    in_loss: bool,
    loss_frac: u64,
    /// The next ACK steps cwnd from 1 to 0, clamped to 2 with ssthresh (after a timeout).
    floor_next: bool,
}

impl Prague {
    pub fn new(mss: u64, p: PragueParams) -> Prague {
        // alpha 1 kept as alpha / g: PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G
        let alpha_up = if p.alpha_mode == 1 {
            1 << (ALPHA_BITS + SHIFT_G)
        } else {
            0
        };
        Prague {
            p,
            mss,
            mtu: mss + HEADER as u64,
            frac: 0,
            alpha_up,
            ai: ONE_CWND,
            saw_ce: false,
            round: 0,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            round_done: false,
            alpha_stamp: 0,
            cwr_stamp: None,
            in_loss: false,
            loss_frac: 0,
            floor_next: false,
        }
    }

    /// alpha as a fraction.
    pub fn alpha(&self) -> f64 {
        (self.alpha_up >> SHIFT_G) as f64 / (1u64 << ALPHA_BITS) as f64
    }

    /// The fractional window in segments.
    pub fn frac_cwnd(&self) -> f64 {
        self.frac as f64 / ONE_CWND as f64
    }

    /// RTT independence applies (prague_is_rtt_indep).
    fn rtt_indep(&self, st: &CcState) -> bool {
        self.p.rtt_target.0 > 0 && !st.in_slow_start() && self.round >= self.p.rtt_transition
    }

    /// The integer window the fraction stands for, in segments (prague_frac_cwnd_to_snd_cwnd).
    fn target_segs(&self) -> u64 {
        self.frac.div_ceil(ONE_CWND).max(MIN_CWND)
    }

    /// The per-ACK increase (prague_ai_ack_increase, RTT_CONTROL_RATE): one segment per RTT,
    /// or per target RTT when SRTT is below it.
    fn update_ai(&mut self, st: &CcState) {
        let target = self.p.rtt_target.0;
        self.ai = match st.srtt {
            Some(rtt) if target > 0 && self.round >= self.p.rtt_transition && rtt > 0 && rtt < target => {
                let num = (rtt as u128 * rtt as u128) << CWND_UNIT;
                let den = target as u128 * target as u128;
                ((num + den / 2) / den) as u64
            }
            _ => ONE_CWND,
        };
    }

    /// One segment per ACK towards the fraction (the `adjust` step of prague_update_cwnd).
    fn adjust(&mut self, st: &mut CcState) {
        if self.floor_next {
            self.floor_next = false;
            self.frac = MIN_CWND << CWND_UNIT;
            st.cwnd = MIN_CWND * self.mss;
            st.ssthresh = st.cwnd;
            self.update_ai(st);
            return;
        }
        let cwnd = st.cwnd / self.mss;
        let (down, up) = match self.p.integer_cwnd {
            IntegerCwnd::RoundUp => {
                let target = self.target_segs();
                (cwnd > target, cwnd < target)
            }
            IntegerCwnd::Carry => (
                self.frac + ONE_CWND <= cwnd << CWND_UNIT,
                self.frac >= (cwnd + 1) << CWND_UNIT,
            ),
        };
        if down {
            if cwnd <= MIN_CWND {
                // b256dae: "No point in applying further reductions"
                self.frac = MIN_CWND << CWND_UNIT;
            }
            st.cwnd = (cwnd - 1).max(MIN_CWND) * self.mss;
            st.ssthresh = st.cwnd;
        } else if up {
            st.cwnd = (cwnd + 1) * self.mss;
        } else {
            return;
        }
        self.update_ai(st);
    }

    /// The window update of one ACK that delivered `segs` packets (prague_update_cwnd).
    fn update_cwnd(&mut self, ack: &AckSample, segs: u64, st: &mut CcState) {
        let mut acked = segs as i64;
        if ack.ce_segs > 0 {
            if !self.saw_ce && self.p.alpha_mode == 0 {
                self.frac = (self.frac + 1) >> 1;
            }
            self.saw_ce = true;
            acked -= ack.ce_segs as i64;
        }
        if acked > 0 && !st.in_recovery && !self.in_loss && st.cwnd_limited {
            let mut acked = acked as u64;
            if st.in_slow_start() {
                let cwnd = st.cwnd / self.mss;
                let grown = (cwnd + acked).min((st.ssthresh / self.mss).max(cwnd));
                acked -= grown - cwnd;
                st.cwnd = grown * self.mss;
                self.frac = match self.p.integer_cwnd {
                    // b256dae: tcp_slow_start grows snd_cwnd and leaves the carry cwnd_cnt, so
                    // an ECN cut taken in slow start (a negative carry) stays pending until an
                    // ACK reaches `adjust`. A fraction above the window is not a carry (after a
                    // timeout it is the halved window while cwnd restarts from one segment)
                    IntegerCwnd::Carry if self.frac < cwnd << CWND_UNIT => {
                        self.frac + ((grown - cwnd) << CWND_UNIT)
                    }
                    _ => grown << CWND_UNIT,
                };
                if acked == 0 {
                    self.update_ai(st);
                    return;
                }
            }
            let num = (acked as u128 * self.ai as u128) << CWND_UNIT;
            let inc = ((num + self.frac as u128 / 2) / self.frac as u128) as u64;
            self.frac += acked.max(inc * MTU_SYS / self.mtu);
        }
        self.adjust(st);
    }

    /// The EWMA step and a new round (prague_update_alpha, prague_new_round).
    fn update_alpha(&mut self, now: Time, st: &CcState) {
        if self.saw_ce {
            let ce = self.delivered_ce - self.old_delivered_ce;
            let f = if ce > 0 {
                (ce << ALPHA_BITS) / (self.delivered - self.old_delivered).max(1)
            } else {
                0
            };
            let a = self.alpha_up - (self.alpha_up >> SHIFT_G) + f;
            self.alpha_up = a.min(1 << (ALPHA_BITS + SHIFT_G));
            self.alpha_stamp = now;
        }
        self.round_done = false;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !st.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.update_ai(st);
    }

    /// The window halved, at least 2 segments, in bytes.
    fn halve(&mut self) -> u64 {
        self.frac -= self.frac >> 1;
        self.target_segs() * self.mss
    }

    /// b256dae's `prague_enter_loss`: the carry c of a window of W segments becomes
    /// c - W / 2 - floor(c / 2), so that W + c, the fraction, becomes its half rounded up.
    fn enter_loss(&mut self) {
        self.loss_frac = self.frac;
        self.frac -= self.frac >> 1;
        self.in_loss = true;
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if self.frac == 0 {
            self.frac = (st.cwnd / self.mss).max(1) << CWND_UNIT;
        }
        let segs = (ack.acked_bytes + ack.sacked_bytes).div_ceil(self.mss);
        self.delivered += segs;
        self.delivered_ce += ack.ce_segs;
        self.round_done |= ack.round_start;
        self.update_cwnd(ack, segs, st);
        let waited = !self.rtt_indep(st) || ack.now - self.alpha_stamp >= self.p.rtt_target.0;
        if self.round_done && waited {
            self.update_alpha(ack.now, st);
        }
    }

    fn on_congestion_event(&mut self, now: Time, kind: CongestionKind, st: &mut CcState) {
        match kind {
            CongestionKind::Loss if self.p.loss_response == LossResponse::PerAck => {
                // The ACK that starts recovery runs `cong_control` after the state change:
                // already in loss, it takes the first step
                self.enter_loss();
                self.adjust(st);
            }
            CongestionKind::Loss => {
                st.ssthresh = self.halve();
                st.cwnd = st.ssthresh;
            }
            CongestionKind::Ecn => {
                let recent = self.cwr_stamp.is_some_and(|t| now - t < self.p.rtt_target.0);
                if self.rtt_indep(st) && recent {
                    return;
                }
                self.cwr_stamp = Some(now);
                let alpha = (self.alpha_up >> SHIFT_G) as u128;
                let cut = (alpha * self.frac as u128 + (1 << ALPHA_BITS)) >> (ALPHA_BITS + 1);
                self.frac -= cut as u64;
            }
        }
    }

    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        if self.p.loss_response == LossResponse::AtOnce {
            if first {
                st.ssthresh = self.halve();
            }
            return;
        }
        // tcp_enter_loss: the hooks run only when it reduces (not inside fast recovery, not on a
        // repeated timeout); ssthresh stays (prague_ssthresh). The carry is the fraction less
        // cwnd, and cwnd becomes 1 (the sender sets it): a carry of a segment or more down steps
        // it to 0 on the first ACK, clamped to 2 with the carry cleared and ssthresh 2 (`adjust`).
        let cwnd = (st.cwnd / self.mss) << CWND_UNIT;
        let mut carry = self.frac as i64 - cwnd as i64;
        if first && !st.in_recovery {
            self.loss_frac = self.frac;
            carry -= (cwnd >> 1) as i64 + (carry >> 1);
        }
        self.in_loss = true;
        let after = ONE_CWND as i64 + carry;
        self.floor_next = after <= 0;
        self.frac = if self.floor_next { ONE_CWND } else { after as u64 };
    }

    fn owns_window(&self) -> bool {
        self.p.loss_response == LossResponse::PerAck
    }

    /// tcp_prague.c's `cong_control` hook counts the ACK's deliveries (`on_ack`), whatever the
    /// loss response.
    fn counts_own_deliveries(&self) -> bool {
        true
    }

    fn on_recovery_exit(&mut self, _now: Time, _st: &mut CcState) {
        self.in_loss = false;
    }

    fn on_timeout_exit(&mut self, undone: bool, st: &mut CcState) {
        if undone && self.in_loss {
            self.frac = self.loss_frac.max((st.cwnd / self.mss) << CWND_UNIT);
        }
        self.in_loss = false;
        self.floor_next = false;
    }

    fn pacing(&self) -> Option<Pacing> {
        Some(Pacing {
            ss_ratio: 200,
            ca_ratio: 100,
            tso_segs: None,
            burst_shift: 12,
            min_burst: 1,
            wire_rate: self.p.pacing_unit == PacingUnit::Mtu,
            // tcp_prague.c sizes its own bursts (prague_tso_segs), without tcp_tso_autosize
            rtt_log: 0,
        })
    }

    fn report(&self, r: &mut CcReport) {
        r.alpha = Some(self.alpha());
    }
}

fn build(params: &Value, ctx: &CcContext) -> CcBuild {
    let (p, resolved) = read_params::<PragueParams>(params)?;
    Ok((Box::new(Prague::new(ctx.mss, p)), resolved))
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "prague",
    summary:
        "TCP Prague: the L4S scalable controller (DCTCP-like response to AccECN marks, RTT independence)",
    reference: "L4STeam/linux net/ipv4/tcp_prague.c; RFC 9331",
    params: &[Group::of::<PragueParams>()],
    needs_accecn: true,
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::test_state;

    fn prague(cwnd_segs: u64) -> (Prague, CcState) {
        let mut p = Prague::new(1448, PragueParams::default());
        let mut st = test_state(cwnd_segs * 1448, u64::MAX, cwnd_segs * 1448);
        st.mss = 1448;
        p.frac = cwnd_segs << CWND_UNIT;
        (p, st)
    }

    /// One ACK of `segs` segments, `ce` of them CE-marked, ending a round or not.
    fn ack(p: &mut Prague, st: &mut CcState, segs: u64, ce: u64, round_start: bool) {
        let a = AckSample {
            acked_bytes: segs * 1448,
            ce_segs: ce,
            round_start,
            ece: ce > 0,
            ..Default::default()
        };
        p.on_ack(&a, st);
    }

    #[test]
    fn alpha_is_an_upscaled_ewma_with_gain_one_sixteenth() {
        // tcp_prague.c in 2^-24 units, alpha kept x16, from 0 (alpha_mode 0). A round of 10
        // packets with 5 CE: F = 5 << 24 / 10 = 8388608, alpha' = 8388608, alpha = 1/32 =
        // g x 0.5. Next round 10 of 10: alpha' = 8388608 - 524288 + 16777216 = 24641536,
        // alpha = 1540096 / 2^24 = 15/16 x 1/32 + 1/16. A round without marks: alpha' x 15/16.
        let (mut p, mut st) = prague(100);
        st.ssthresh = 50 * 1448; // congestion avoidance
        for k in 0..10 {
            ack(&mut p, &mut st, 1, (k < 5) as u64, k == 9);
        }
        assert_eq!(p.alpha_up, 8_388_608);
        assert_eq!(p.alpha_up >> SHIFT_G, 1 << 19);
        for k in 0..10 {
            ack(&mut p, &mut st, 1, 1, k == 9);
        }
        assert_eq!(p.alpha_up, 24_641_536);
        assert!((p.alpha() - (15.0 / 16.0 / 32.0 + 1.0 / 16.0)).abs() < 1e-9);
        for k in 0..10 {
            ack(&mut p, &mut st, 1, 0, k == 9);
        }
        assert_eq!(p.alpha_up, 24_641_536 - 1_540_096);
    }

    #[test]
    fn alpha_waits_for_the_first_mark_and_that_mark_halves_the_window() {
        let (mut p, mut st) = prague(40);
        st.ssthresh = 20 * 1448;
        for k in 0..10 {
            ack(&mut p, &mut st, 1, 0, k == 9);
        }
        assert_eq!(p.alpha_up, 0, "no update before a CE mark");
        let before = p.frac;
        ack(&mut p, &mut st, 1, 1, false);
        assert_eq!(p.frac, (before + 1) >> 1, "the first mark halves the fraction");
    }

    #[test]
    fn alpha_mode_1_starts_alpha_at_1_as_tcp_prague_c_of_2020() {
        // b256dae's prague_init: upscaled_alpha = PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G, alpha 1; no
        // update before the first CE mark (prague_update_alpha: saw_ce) and no halving of its own:
        // the mark's CWR cuts cwnd x alpha / 2, half
        let params = PragueParams {
            alpha_mode: 1,
            ..Default::default()
        };
        let mut p = Prague::new(1448, params);
        let mut st = test_state(40 * 1448, 20 * 1448, 40 * 1448);
        st.mss = 1448;
        p.frac = 40 << CWND_UNIT;
        assert_eq!(p.alpha(), 1.0);
        for k in 0..10 {
            ack(&mut p, &mut st, 1, 0, k == 9);
        }
        assert_eq!(p.alpha(), 1.0, "no update before a CE mark");
        let before = p.frac;
        ack(&mut p, &mut st, 1, 1, false);
        assert_eq!(p.frac, before, "the first mark does not halve by itself");
        p.on_congestion_event(0, CongestionKind::Ecn, &mut st);
        assert_eq!(p.frac, before / 2);
        // the EWMA then runs from 1 with g = 1/16: a round of 10 packets, 5 CE (the 1 above and 4
        // more): alpha = 15/16 + 1/16 x 1/2
        for k in 0..9 {
            ack(&mut p, &mut st, 1, (k < 4) as u64, k == 8);
        }
        assert_eq!(p.alpha(), 15.0 / 16.0 + 1.0 / 32.0);
    }

    #[test]
    fn a_cut_in_slow_start_survives_slow_start_with_the_carry_of_2020() {
        // b256dae: prague_enter_cwr takes alpha x cwnd / 2 from cwnd_cnt; prague_update_cwnd's
        // slow start (tcp_slow_start, then return while nothing is left of acked) does not touch
        // cwnd_cnt, so the cut waits; an ACK of CE-marked segments only (acked <= 0) goes to
        // `adjust`, which steps cwnd down and sets ssthresh = cwnd. Today's frac_cwnd is set from
        // the grown cwnd in slow start: the cut is gone.
        for (mode, kept) in [(IntegerCwnd::Carry, true), (IntegerCwnd::RoundUp, false)] {
            let params = PragueParams {
                alpha_mode: 1,
                integer_cwnd: mode,
                ..Default::default()
            };
            let mut p = Prague::new(1448, params);
            let mut st = test_state(40 * 1448, u64::MAX, 40 * 1448);
            st.mss = 1448;
            p.frac = 40 << CWND_UNIT;
            ack(&mut p, &mut st, 2, 1, false); // one CE: cwnd 41
            p.on_congestion_event(0, CongestionKind::Ecn, &mut st); // alpha 1: half of 41 away
            ack(&mut p, &mut st, 2, 0, false); // slow start: cwnd 43
            assert_eq!(st.cwnd, 43 * 1448, "{mode:?}");
            let carry = p.frac as i64 - (43 << CWND_UNIT) as i64;
            assert_eq!(carry, if kept { -((41 << CWND_UNIT) / 2) } else { 0 }, "{mode:?}");
            ack(&mut p, &mut st, 1, 1, false); // all CE: to `adjust`
            let (cwnd, ss) = if kept { (42, 42 * 1448) } else { (43, u64::MAX) };
            assert_eq!((st.cwnd, st.ssthresh), (cwnd * 1448, ss), "{mode:?}");
            // a timeout: the fraction halved, cwnd from one segment; slow start sets the fraction
            p.on_rto(0, true, &mut st);
            st.cwnd = 1448;
            ack(&mut p, &mut st, 1, 0, false);
            assert_eq!((st.cwnd, p.frac), (2 * 1448, 2 << CWND_UNIT), "{mode:?}");
        }
    }

    #[test]
    fn integer_cwnd_carry_steps_when_the_carry_reaches_one_segment() {
        // b256dae's prague_update_cwnd: cwnd_cnt >= ONE_CWND -> cwnd + 1, <= -ONE_CWND -> cwnd - 1,
        // below MIN_CWND cwnd = 2 and cwnd_cnt = 0; today's rounds the fraction up
        let carry = PragueParams {
            integer_cwnd: IntegerCwnd::Carry,
            ..Default::default()
        };
        let half = ONE_CWND / 2;
        // (integer_cwnd, frac, cwnd before) -> cwnd after, in segments
        let cases = [
            (IntegerCwnd::RoundUp, (10 << CWND_UNIT) + 1, 10, 11),
            (IntegerCwnd::Carry, (10 << CWND_UNIT) + 1, 10, 10),
            (IntegerCwnd::Carry, (11 << CWND_UNIT) - 1, 10, 10),
            (IntegerCwnd::Carry, 11 << CWND_UNIT, 10, 11),
            (IntegerCwnd::Carry, (9 << CWND_UNIT) + half, 10, 10),
            (IntegerCwnd::Carry, 9 << CWND_UNIT, 10, 9),
            (IntegerCwnd::RoundUp, (9 << CWND_UNIT) + half, 10, 10),
            (IntegerCwnd::RoundUp, 9 << CWND_UNIT, 10, 9),
        ];
        for (mode, frac, before, after) in cases {
            let (mut p, mut st) = prague(before);
            p.p.integer_cwnd = mode;
            p.frac = frac;
            p.adjust(&mut st);
            assert_eq!(st.cwnd, after * 1448, "{mode:?} frac {frac} from {before}");
        }
        let mut p = Prague::new(1448, carry);
        let mut st = test_state(2 * 1448, u64::MAX, 2 * 1448);
        st.mss = 1448;
        p.frac = ONE_CWND;
        p.adjust(&mut st);
        assert_eq!(
            (st.cwnd, st.ssthresh, p.frac),
            (2 * 1448, 2 * 1448, 2 << CWND_UNIT)
        );
    }

    #[test]
    fn alpha_mode_is_0_or_1() {
        assert_eq!(PragueParams::default().alpha_mode, 0);
        let mut bad = PragueParams {
            alpha_mode: 2,
            ..Default::default()
        };
        assert_eq!(
            bad.finish(&()).unwrap_err(),
            "alpha_mode: 2 is out of range; allowed 0 to 1"
        );
    }

    #[test]
    fn ecn_response_cuts_alpha_over_two_rounded_to_nearest() {
        // frac 100 segments, alpha 1/4: cut = (2^22 x 100 x 2^20 + 2^24) >> 25 = 12.5 x 2^20
        let (mut p, mut st) = prague(100);
        p.alpha_up = (1 << 22) << SHIFT_G;
        p.on_congestion_event(0, CongestionKind::Ecn, &mut st);
        assert_eq!(p.frac, (875 << CWND_UNIT) / 10);
        // cwnd then steps down one segment per ACK, each step setting ssthresh, towards
        // ceil(87.5) = 88
        st.ssthresh = u64::MAX;
        st.in_recovery = true; // no growth, only the adjust step
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!((st.cwnd, st.ssthresh), (99 * 1448, 99 * 1448));
        for _ in 0..20 {
            ack(&mut p, &mut st, 1, 0, false);
        }
        assert_eq!(st.cwnd, 88 * 1448);
        // alpha 1 halves; alpha 0 cuts nothing (the + 1/2 rounds 0 away)
        let (mut p, mut st) = prague(100);
        p.alpha_up = 1 << (ALPHA_BITS + SHIFT_G);
        p.on_congestion_event(0, CongestionKind::Ecn, &mut st);
        assert_eq!(p.frac, 50 << CWND_UNIT);
        p.alpha_up = 0;
        p.on_congestion_event(1, CongestionKind::Ecn, &mut st);
        assert_eq!(p.frac, 50 << CWND_UNIT);
    }

    #[test]
    fn per_ack_increase_is_acked_over_w_in_fractions() {
        // cwnd 10, an ACK of 2 unmarked segments: + round(2 x 2^40 / (10 x 2^20)) = 209715
        // (0.2 segment; MSS 1448 is a 1500-byte packet, so no MTU scaling); with one of the
        // two CE-marked, only the other counts: + round(2^40 / (10 x 2^20 + 209715)) = 102802
        let (mut p, mut st) = prague(10);
        st.ssthresh = 5 * 1448;
        ack(&mut p, &mut st, 2, 0, false);
        assert_eq!(p.frac, (10 << CWND_UNIT) + 209_715);
        p.saw_ce = true;
        ack(&mut p, &mut st, 2, 1, false);
        assert_eq!(p.frac, (10 << CWND_UNIT) + 209_715 + 102_802);
        // the integer window follows the rounded-up fraction: 11 segments
        assert_eq!(st.cwnd, 11 * 1448);
        // dW = 1/W per ACK: after n ACKs W^2 = W0^2 + 2n, so 10 ACKs from 10 reach sqrt(120)
        let (mut p, mut st) = prague(10);
        st.ssthresh = 5 * 1448;
        for _ in 0..10 {
            ack(&mut p, &mut st, 1, 0, false);
        }
        assert!((p.frac_cwnd() - 120f64.sqrt()).abs() < 0.01, "{}", p.frac_cwnd());
    }

    #[test]
    fn rtt_independence_scales_the_increase_by_rtt_over_target_squared() {
        // SRTT 5 ms, target 25 ms: ai = round(2^20 x 25 / 625) = 41943 once 4 rounds past
        // slow start; before that, and with the target at 0s, one segment (2^20)
        let (mut p, mut st) = prague(10);
        st.ssthresh = 5 * 1448;
        st.srtt = Some(5 * MS);
        for r in 0..4u32 {
            assert_eq!(p.ai, ONE_CWND, "round {r}");
            ack(&mut p, &mut st, 1, 0, true);
        }
        assert_eq!(p.round, 4);
        assert_eq!(p.ai, 41_943);
        let mut off = Prague::new(
            1448,
            PragueParams {
                rtt_target: Dur(0),
                ..Default::default()
            },
        );
        off.round = 10;
        off.update_ai(&st);
        assert_eq!(off.ai, ONE_CWND);
        // SRTT at or above the target: unscaled
        st.srtt = Some(30 * MS);
        p.update_ai(&st);
        assert_eq!(p.ai, ONE_CWND);
    }

    #[test]
    fn slow_start_grows_by_packets_and_the_fraction_follows() {
        // tcp_slow_start in packets: 10 + 2 per ACK of 2, frac = cwnd << 20
        let (mut p, mut st) = prague(10);
        ack(&mut p, &mut st, 2, 0, false);
        assert_eq!((st.cwnd, p.frac), (12 * 1448, 12 << CWND_UNIT));
    }

    fn per_ack(cwnd_segs: u64, carry: i64, ssthresh_segs: u64) -> (Prague, CcState) {
        let params = PragueParams {
            alpha_mode: 1,
            integer_cwnd: IntegerCwnd::Carry,
            loss_response: LossResponse::PerAck,
            ..Default::default()
        };
        let mut p = Prague::new(1448, params);
        let mut st = test_state(cwnd_segs * 1448, ssthresh_segs * 1448, cwnd_segs * 1448);
        st.mss = 1448;
        p.frac = ((cwnd_segs << CWND_UNIT) as i64 + carry) as u64;
        (p, st)
    }

    #[test]
    fn per_ack_loss_halves_the_carry_and_steps_one_segment_per_ack() {
        // b256dae, prague_enter_loss on TCP_CA_Recovery: cwnd_cnt -= (cwnd << 19) + (cwnd_cnt
        // >> 1). cwnd 40 with a carry of +0.5 segment: -19.75 segments. The ACK that enters
        // recovery runs cong_control after the state change: in_loss sends it to `adjust`, which
        // takes one segment from cwnd (+1 to the carry) and sets ssthresh to the new cwnd; so
        // does every later ACK while the carry is a whole segment down: 19 ACKs in all leave
        // cwnd 21 and the carry at -0.75. prague_ssthresh leaves ssthresh alone until then.
        let half = 1i64 << (CWND_UNIT - 1);
        let (mut p, mut st) = per_ack(40, half, 30);
        p.on_congestion_event(0, CongestionKind::Loss, &mut st);
        assert_eq!((st.cwnd, st.ssthresh), (39 * 1448, 39 * 1448));
        st.in_recovery = true;
        for k in 1..19 {
            ack(&mut p, &mut st, 1, 0, false);
            assert_eq!(
                (st.cwnd, st.ssthresh),
                ((39 - k) * 1448, (39 - k) * 1448),
                "ACK {k}"
            );
        }
        let left = p.frac as i64 - (21i64 << CWND_UNIT);
        assert_eq!(left, -3 * half / 2);
        // in_loss: no growth however many unmarked segments are ACKed, no further step
        let frac = p.frac;
        for _ in 0..50 {
            ack(&mut p, &mut st, 2, 0, true);
        }
        assert_eq!((st.cwnd, st.ssthresh, p.frac), (21 * 1448, 21 * 1448, frac));
        // Open again (prague_ca_open): the carry grows again
        p.on_recovery_exit(0, &mut st);
        st.in_recovery = false;
        ack(&mut p, &mut st, 1, 0, false);
        assert!(p.frac > frac);
        assert_eq!(st.cwnd, 21 * 1448);
    }

    #[test]
    fn per_ack_loss_response_leaves_the_fraction_halved_rounded_up() {
        // c - (W << 19) - (c >> 1) with an arithmetic shift: W + c becomes ceil((W + c) / 2);
        // odd carries either side of 0
        for (w, c) in [(41u64, -1i64), (41, 1), (40, -(1 << 19) - 1), (7, 12_345)] {
            let (mut p, mut st) = per_ack(w, c, 100);
            let before = (w << CWND_UNIT) as i64 + c;
            p.on_congestion_event(0, CongestionKind::Loss, &mut st);
            assert_eq!(p.frac as i64, before - (before >> 1), "W {w} carry {c}");
        }
    }

    #[test]
    fn per_ack_timeout_keeps_ssthresh_then_the_first_ack_floors_cwnd_at_two() {
        // tcp_enter_loss: ssthresh = prague_ssthresh() (unchanged), CA_EVENT_LOSS ->
        // prague_enter_loss with cwnd 40 (carry -20), then cwnd = in flight + 1 = 1 (the sender).
        // The first ACK in TCP_CA_Loss: in_loss, `adjust`: cwnd 0 < MIN_CWND -> 2, carry 0,
        // ssthresh 2; nothing grows until Open; then congestion avoidance from 2.
        let (mut p, mut st) = per_ack(40, 0, 30);
        p.on_rto(0, true, &mut st);
        assert_eq!(st.ssthresh, 30 * 1448, "prague_ssthresh keeps it");
        st.cwnd = 1448;
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!((st.cwnd, st.ssthresh), (2 * 1448, 2 * 1448));
        for _ in 0..20 {
            ack(&mut p, &mut st, 1, 0, true);
        }
        assert_eq!((st.cwnd, st.ssthresh), (2 * 1448, 2 * 1448), "no growth in Loss");
        // Open: congestion avoidance (slow start would make it 3 at once). b256dae divides by
        // the integer cwnd (+1/2, +1/2: 3 after two ACKs); aqmlab by the fractional window
        // (+1/2, +0.4, +0.34: 3 after three)
        p.on_timeout_exit(false, &mut st);
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!((st.cwnd, st.ssthresh), (2 * 1448, 2 * 1448));
        ack(&mut p, &mut st, 1, 0, false);
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!(st.cwnd, 3 * 1448);
        // Reno's response instead: ssthresh halved at the timeout, slow start from 1 after it
        let (mut p, mut st) = prague(40);
        st.ssthresh = 30 * 1448;
        p.on_rto(0, true, &mut st);
        assert_eq!(st.ssthresh, 20 * 1448);
        st.cwnd = 1448;
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!(st.cwnd, 2 * 1448);
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!(st.cwnd, 3 * 1448);
    }

    #[test]
    fn per_ack_timeout_in_recovery_does_not_halve_again() {
        // tcp_enter_loss reduces (ssthresh hook, CA_EVENT_LOSS) only from Open or Disorder, once
        // recovery is over, or on a fresh timeout in Loss: a timeout in fast recovery keeps the
        // carry. cwnd 40, the loss (carry -20, one step), 4 more ACKs: cwnd 35, carry -15; the
        // timeout sets cwnd 1 and its first ACK floors it at 2. A carry above -1 segment at cwnd
        // 1 takes no step: with a window of 2 and half a segment of carry up, the loss leaves
        // a carry of 0.25 - 1 (cwnd 2 -> 1 per ACK) and the timeout none to take
        let (mut p, mut st) = per_ack(40, 0, 100);
        p.on_congestion_event(0, CongestionKind::Loss, &mut st);
        st.in_recovery = true;
        for _ in 0..4 {
            ack(&mut p, &mut st, 1, 0, false);
        }
        assert_eq!(st.cwnd, 35 * 1448);
        p.on_rto(0, true, &mut st);
        assert_eq!(st.ssthresh, 35 * 1448);
        st.in_recovery = false;
        st.cwnd = 1448;
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!((st.cwnd, st.ssthresh), (2 * 1448, 2 * 1448));
        let half = 1i64 << (CWND_UNIT - 1);
        let (mut p, mut st) = per_ack(3, half, 100);
        p.on_congestion_event(0, CongestionKind::Loss, &mut st);
        // 3.5 -> carry 0.5 - 1.5 - 0.25 = -1.25: one step, cwnd 2, carry -0.25
        assert_eq!(st.cwnd, 2 * 1448);
        st.in_recovery = true;
        p.on_rto(0, true, &mut st);
        st.in_recovery = false;
        st.cwnd = 1448;
        for _ in 0..5 {
            ack(&mut p, &mut st, 1, 0, false);
        }
        assert_eq!((st.cwnd, st.ssthresh), (1448, 2 * 1448), "carry -0.25 at cwnd 1");
    }

    #[test]
    fn per_ack_undo_of_a_timeout_restores_the_fraction() {
        let (mut p, mut st) = per_ack(40, 0, 30);
        p.on_rto(0, true, &mut st);
        st.cwnd = 1448;
        ack(&mut p, &mut st, 1, 0, false);
        st.cwnd = 40 * 1448; // the sender's undo: cwnd as before the timeout
        p.on_timeout_exit(true, &mut st);
        assert_eq!(p.frac, 40 << CWND_UNIT);
        ack(&mut p, &mut st, 1, 0, false);
        assert_eq!(st.cwnd, 40 * 1448, "no step back down");
    }

    #[test]
    fn pacing_unit_mtu_paces_on_the_wire_size() {
        // tcp_prague.c prague_update_pacing_rate (v0.7, as at b256dae) multiplies the window by
        // tcp_mss_to_mtu: the default; "mss" counts the payload.
        assert!(Prague::new(1448, PragueParams::default())
            .pacing()
            .is_some_and(|p| p.wire_rate && p.ca_ratio == 100 && p.ss_ratio == 200));
        let mss = Prague::new(
            1448,
            PragueParams {
                pacing_unit: PacingUnit::Mss,
                ..Default::default()
            },
        );
        assert!(mss.pacing().is_some_and(|p| !p.wire_rate));
    }

    #[test]
    fn only_per_ack_owns_the_window_in_recovery() {
        assert!(!Prague::new(1448, PragueParams::default()).owns_window());
        let (p, _) = per_ack(10, 0, 5);
        assert!(p.owns_window());
    }

    #[test]
    fn loss_halves_like_reno_and_a_timeout_once() {
        let (mut p, mut st) = prague(40);
        p.on_congestion_event(0, CongestionKind::Loss, &mut st);
        assert_eq!((st.cwnd, st.ssthresh), (20 * 1448, 20 * 1448));
        p.on_rto(0, true, &mut st);
        assert_eq!(st.ssthresh, 10 * 1448);
        p.on_rto(0, false, &mut st);
        assert_eq!(st.ssthresh, 10 * 1448);
    }
}
