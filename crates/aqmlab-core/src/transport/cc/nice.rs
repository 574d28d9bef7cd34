//! TCP Nice (Venkataramani, Kokku & Dahlin, OSDI 2002; docs/transports.md 3.7): TCP Vegas with an
//! interference detector that halves the window when many packets of a round see a delay near
//! the largest observed.
//!
//! * Vegas (Brakmo & Peterson 1995), once per round (RTT): with baseRTT the smallest RTT seen and
//!   RTT the smallest of the last round, diff = cwnd x (RTT - baseRTT) / RTT in segments; +1
//!   segment when diff < alpha, -1 when diff > beta. In slow start Vegas leaves when diff > gamma
//!   (ssthresh = cwnd). Loss and timeouts: Reno's halving (RFC 5681), as the paper keeps them.
//! * Nice, per ACK: an RTT sample above (1 - t) minRTT + t maxRTT counts the packet as delayed;
//!   per round: more than f x cwnd (segments) delayed packets halve the window instead of the
//!   Vegas step. Defaults from the paper's experiments: t = 0.1, f = 0.5.
//! * Windows below one segment (the paper's section 3.1: "Maintaining a window of less than one
//!   causes us to lose ack-clocking ... the packets act as network probes"): the window may fall
//!   to `min_cwnd` segments (a fraction); below `probe_segments` segments the sender keeps
//!   nothing else in flight and sends `probe_segments` segments every probe_segments / W smoothed
//!   RTTs (the sender's window-probe rule, tcp/sender.rs). `probe_segments = 1` is the paper's
//!   rule, one packet every 1/W RTTs; 2 is its Linux prototype (section 3.2: below a window of two
//!   a per-socket timer sends two packets every 2/W smoothed RTTs, "a window of 1/16 means that
//!   the flow sends out two packets after waiting for 32 smoothed round-trip times", so that a
//!   delayed-ACK receiver answers at once). The prototype also floors the window; `min_cwnd`
//!   defaults to 1/48 segment. `min_cwnd = 1` restores a one-segment floor (no sub-segment
//!   windows); a Linux-style floor of 2 makes many background flows less nice, as the paper notes.
//!
//! Parameters (`cc_params`): alpha (1), beta (3), gamma (1), t (0.1), f (0.5), min_cwnd (1/48),
//! probe_segments (1).

use super::{
    half_flight, read_params, slow_start, AckSample, CcBuild, CcContext, CcInfo, CcState, CongestionControl,
    CongestionKind,
};
use crate::params::{Group, Params};
use crate::units::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Nice's parameters (the flow's `cc_params` table), every default written out.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NiceParams {
    /// Vegas's alpha, segments: a round whose queued estimate (diff) is below it grows the
    /// window by one segment.
    pub alpha: f64,
    /// Vegas's beta, segments: a round whose diff is above it shrinks the window by one segment.
    pub beta: f64,
    /// Vegas's gamma, segments: slow start ends when diff exceeds it.
    pub gamma: f64,
    /// Nice's delay threshold: an RTT sample above (1 - t) minRTT + t maxRTT counts its packet
    /// as delayed.
    pub t: f64,
    /// Nice's fraction: more than f x cwnd delayed packets in a round halve the window.
    pub f: f64,
    /// The window's floor in segments (a fraction allowed).
    pub min_cwnd: f64,
    /// Windows below this many segments are sent as probes (1: the paper; 2: its prototype).
    pub probe_segments: u32,
}

impl Default for NiceParams {
    fn default() -> Self {
        NiceParams {
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
            t: 0.1,
            f: 0.5,
            min_cwnd: 1.0 / 48.0,
            probe_segments: 1,
        }
    }
}

impl Params<()> for NiceParams {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        if !(self.alpha >= 0.0 && self.beta > self.alpha && self.beta <= 1000.0) {
            return Err(format!(
                "beta: {} is not allowed with alpha {}; allowed: 0 <= alpha < beta <= 1000",
                self.beta, self.alpha
            ));
        }
        for (k, v, lo, hi) in [
            ("gamma", self.gamma, 0.0, 1000.0),
            ("t", self.t, 0.0, 1.0),
            ("f", self.f, 0.0, 1.0),
        ] {
            if !(v > lo && v <= hi) {
                return Err(format!(
                    "{k}: {v} is out of range; allowed: above {lo} up to {hi}"
                ));
            }
        }
        if !(self.min_cwnd >= 0.001 && self.min_cwnd <= 1000.0) {
            return Err(format!(
                "min_cwnd: {} is out of range; allowed 0.001 to 1000 segments",
                self.min_cwnd
            ));
        }
        if !(1..=2).contains(&self.probe_segments) {
            return Err(format!(
                "probe_segments: {} is not allowed; allowed: 1 (the paper's one packet every \
                 1/W RTTs) or 2 (its Linux prototype's two packets every 2/W RTTs)",
                self.probe_segments
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Nice {
    p: NiceParams,
    mss: u64,
    base_rtt: Option<Time>,
    max_rtt: Time,
    /// Smallest RTT of the current round, and its delayed / sampled packet counts.
    round_min: Option<Time>,
    delayed: u64,
    /// Window halvings by the interference detector.
    pub nice_halvings: u64,
}

impl Nice {
    pub fn new(mss: u64, p: NiceParams) -> Nice {
        Nice {
            p,
            mss,
            base_rtt: None,
            max_rtt: 0,
            round_min: None,
            delayed: 0,
            nice_halvings: 0,
        }
    }

    fn floor(&self) -> u64 {
        ((self.p.min_cwnd * self.mss as f64).ceil() as u64).max(1)
    }

    /// The per-round decision, made when a round ends.
    fn end_round(&mut self, st: &mut CcState) {
        let (Some(rtt), Some(base)) = (self.round_min, self.base_rtt) else {
            return;
        };
        let w = st.cwnd as f64 / self.mss as f64;
        if self.delayed as f64 > self.p.f * w {
            self.nice_halvings += 1;
            st.cwnd = (st.cwnd / 2).max(self.floor());
            st.ssthresh = st.ssthresh.min(st.cwnd);
            return;
        }
        let diff = w * (rtt - base) as f64 / rtt as f64;
        if st.in_slow_start() {
            if diff > self.p.gamma {
                st.ssthresh = st.cwnd;
            }
            return;
        }
        if diff < self.p.alpha {
            st.cwnd += self.mss;
        } else if diff > self.p.beta {
            st.cwnd = st.cwnd.saturating_sub(self.mss).max(self.floor());
        }
    }
}

impl CongestionControl for Nice {
    fn name(&self) -> &'static str {
        "nice"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if ack.round_start && !st.in_recovery {
            self.end_round(st);
            self.round_min = None;
            self.delayed = 0;
        }
        if let Some(r) = ack.rtt {
            self.base_rtt = Some(self.base_rtt.map_or(r, |b| b.min(r)));
            self.max_rtt = self.max_rtt.max(r);
            self.round_min = Some(self.round_min.map_or(r, |m| m.min(r)));
            let base = self.base_rtt.unwrap_or(r) as f64;
            if r as f64 > (1.0 - self.p.t) * base + self.p.t * self.max_rtt as f64 {
                self.delayed += ack.acked_bytes.div_ceil(self.mss).max(1);
            }
        }
        if !st.in_recovery && ack.acked_bytes > 0 && st.in_slow_start() {
            slow_start(st, ack.acked_bytes);
        }
    }

    fn probe_segments(&self) -> u64 {
        self.p.probe_segments as u64
    }

    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        st.ssthresh = half_flight(st);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        if first {
            st.ssthresh = half_flight(st);
        }
    }
}

fn build(params: &Value, ctx: &CcContext) -> CcBuild {
    let (p, resolved) = read_params::<NiceParams>(params)?;
    Ok((Box::new(Nice::new(ctx.mss, p)), resolved))
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "nice",
    summary: "TCP Nice: Vegas with an interference detector that halves the window on delay",
    reference: "Venkataramani, Kokku & Dahlin, OSDI 2002",
    params: &[Group::of::<NiceParams>()],
    needs_accecn: false,
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    const MSS: u64 = 1000;

    fn st(cwnd: u64) -> CcState {
        super::super::test_state(cwnd, cwnd, cwnd)
    }

    /// One round of `n` one-segment ACKs with RTT `rtt`, then the ACK that starts the next round.
    fn round(nice: &mut Nice, s: &mut CcState, n: usize, rtt: Time) {
        for _ in 0..n {
            nice.on_ack(
                &AckSample {
                    acked_bytes: MSS,
                    rtt: Some(rtt),
                    ..Default::default()
                },
                s,
            );
        }
        nice.on_ack(
            &AckSample {
                round_start: true,
                ..Default::default()
            },
            s,
        );
    }

    /// One round of 20 one-segment ACKs, the first `delayed` at 61 ms and the rest at 55 ms.
    fn mixed_round(nice: &mut Nice, s: &mut CcState, delayed: usize) {
        for k in 0..20 {
            let r = if k < delayed { 61 * MS } else { 55 * MS };
            nice.on_ack(
                &AckSample {
                    acked_bytes: MSS,
                    rtt: Some(r),
                    ..Default::default()
                },
                s,
            );
        }
        nice.on_ack(
            &AckSample {
                round_start: true,
                ..Default::default()
            },
            s,
        );
    }

    #[test]
    fn more_than_half_a_window_of_delayed_packets_halves_it() {
        // The paper's detector with t = 0.1: minRTT 50 ms, maxRTT 150 ms -> delayed above 60 ms; with W = 20 the
        // window halves when more than 10 packets of a round exceed 60 ms.
        let mut nice = Nice::new(MSS, NiceParams::default());
        let mut s = st(20 * MSS);
        round(&mut nice, &mut s, 1, 50 * MS);
        round(&mut nice, &mut s, 1, 150 * MS);
        let w = s.cwnd;
        // 10 delayed of 20: not more than f x W; the Vegas step applies instead.
        mixed_round(&mut nice, &mut s, 10);
        assert_eq!(nice.nice_halvings, 0);
        // Vegas: diff = W (55 - 50) / 55 = 1.8 segments, between alpha 1 and beta 3: no change.
        assert_eq!(s.cwnd, w);
        // 11 delayed: halve.
        mixed_round(&mut nice, &mut s, 11);
        assert_eq!((nice.nice_halvings, s.cwnd), (1, w / 2));
    }

    #[test]
    fn the_detector_halves_below_one_segment_down_to_min_cwnd() {
        // The paper (3.1): the window may go below one; each interfered round halves it. Base
        // 50 ms (a quiet round: Vegas +1, 2 segments), then rounds at 150 ms: 2 delayed of 2
        // (> f x W = 1) halve to one segment; with one segment per round every round is
        // interfered (1 > f x W): 1000 B -> 500 -> 250 -> 125 -> 62 -> 31 (integer bytes), then
        // the floor, 1/48 segment = ceil(1000 / 48) = 21 B.
        let mut nice = Nice::new(MSS, NiceParams::default());
        let mut s = st(MSS);
        round(&mut nice, &mut s, 1, 50 * MS);
        round(&mut nice, &mut s, 2, 150 * MS);
        assert_eq!(s.cwnd, MSS);
        let mut seen = vec![];
        for _ in 0..7 {
            round(&mut nice, &mut s, 1, 150 * MS);
            seen.push(s.cwnd);
        }
        assert_eq!(seen, [500, 250, 125, 62, 31, 21, 21]);
        assert_eq!(nice.probe_segments(), 1);
        // A one-segment floor (min_cwnd = 1) keeps the window at one segment, as before.
        let mut nice = Nice::new(
            MSS,
            NiceParams {
                min_cwnd: 1.0,
                ..Default::default()
            },
        );
        let mut s = st(2 * MSS);
        round(&mut nice, &mut s, 1, 50 * MS);
        round(&mut nice, &mut s, 2, 150 * MS);
        round(&mut nice, &mut s, 2, 150 * MS);
        assert_eq!(s.cwnd, MSS);
    }

    #[test]
    fn bad_probe_parameters_name_the_key() {
        for (p, key) in [
            (
                NiceParams {
                    probe_segments: 3,
                    ..Default::default()
                },
                "probe_segments: 3",
            ),
            (
                NiceParams {
                    min_cwnd: 0.0,
                    ..Default::default()
                },
                "min_cwnd: 0",
            ),
        ] {
            let e = { p }.finish(&()).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
    }

    #[test]
    fn vegas_adds_below_alpha_and_removes_above_beta() {
        let mut nice = Nice::new(
            MSS,
            NiceParams {
                t: 1.0,
                ..Default::default()
            },
        ); // no Nice halving
        let mut s = st(20 * MSS);
        round(&mut nice, &mut s, 1, 100 * MS); // baseRTT 100 ms
        let w = s.cwnd;
        // RTT 102 ms: diff = 21 x 2 / 102 = 0.41 < 1: +1 segment.
        round(&mut nice, &mut s, 20, 102 * MS);
        assert_eq!(s.cwnd, w + MSS);
        // RTT 120 ms: diff = 22 x 20 / 120 = 3.7 > 3: -1 segment.
        round(&mut nice, &mut s, 21, 120 * MS);
        assert_eq!(s.cwnd, w);
    }
}
