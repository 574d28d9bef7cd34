//! LEDBAT (RFC 6817), the low-priority delay-based controller, for TCP as the lpcc2013 study's
//! Linux/ns-2 TCP-LEDBAT ran it (docs/transports.md 3.5).
//!
//! * Delay samples: the ACK's TSval - TSecr (the receiver's clock at the ACK minus the sender's
//!   at the data segment: the forward one-way delay plus any delayed-ACK wait), as TCP-based
//!   LEDBAT implementations take them from the timestamp option (RFC 6817 section 2.4 leaves the
//!   carrier open). Only ACKs that advance the cumulative ACK give samples.
//! * current_delay = min of the last `current_filter` samples (RFC 6817 2.4.2 FILTER = MIN);
//!   base_delay = min of `base_history` one-minute minima (the newest bucket is the minute of the
//!   latest sample; a new minute opens a bucket and the oldest is dropped).
//! * Per ACK: off_target = (TARGET - (current - base)) / TARGET; cwnd += GAIN x off_target x
//!   bytes_acked x MSS / cwnd; cwnd <= flight before the ACK + ALLOWED_INCREASE x MSS; cwnd >=
//!   MIN_CWND x MSS. The window is kept as a real number here and written to the sender's
//!   byte window rounded down; a window the sender changed (RTO, recovery) is taken back.
//! * Loss: cwnd = max(cwnd / 2, MIN_CWND x MSS), once per window (the sender calls once per
//!   recovery episode); ssthresh follows cwnd. RTO ("no ACK for a full RTO", RFC 6817 2.4.2 CTO):
//!   the sender's one-segment loss window.
//! * `slow_start` (off by default, as the study's TCP-LEDBAT): Reno slow start below ssthresh
//!   before the LEDBAT law applies (RFC 6817 2.4.3 allows it as long as it is no faster than TCP).
//!
//! Parameters (`cc_params`): target (100 ms; <= 100 ms, RFC 6817 2.4.2), gain (1; 0 < gain <= 1),
//! base_history (10 minutes), current_filter (4 samples), min_cwnd (2 segments),
//! allowed_increase (1 segment), slow_start (false). 25 ms targets (early drafts, uTP) are
//! allowed.
//!
//! libutp's uTP (the LEDBAT of the study's testbed; bittorrent/libutp utp_internal.cpp) departs
//! from the RFC's window law in two ways, each a knob (unset/true = RFC 6817):
//! * `increase_per_rtt` (bytes): the per-RTT increase cap MAX_CWND_INCREASE_BYTES_PER_RTT = 3000
//!   (utp_internal.cpp line 43, applied in `UTPSocket::apply_ccontrol`, line 1672): per ACK
//!   cwnd += increase_per_rtt x off_target x min(acked, cwnd) / max(cwnd, acked), i.e. up to
//!   3000 B per RTT whatever the MSS, instead of GAIN x off_target x acked x MSS / cwnd.
//! * `flight_cap` (true): the RFC's cwnd <= flight + ALLOWED_INCREASE x MSS (RFC 6817 2.4.2).
//!   libutp has no such cap (only: no increase when the window has not been filled for 1 s,
//!   line 1681, which a backlogged source never meets); false drops it.
//! * `decay_interval` (unset: the RFC's one halving per window of data): libutp halves on every
//!   ACK that reveals a loss, at most once per MAX_WINDOW_DECAY = 100 ms (`maybe_decay_win`,
//!   called from `selective_ack` whenever it resends; ssthresh = the halved window), so a
//!   recovery longer than 100 ms can halve more than once.
//! * `rtt_cap` (false): the delay estimate is at most the ACK's RTT. libutp's `apply_ccontrol`
//!   takes our_delay = min(filtered delay, min_rtt) (line 1621), min_rtt being the least
//!   now - time_sent over the packets the ACK acknowledges (lines 1959-1986, 1430), and before
//!   that raises its base-delay history by the excess (`our_hist.shift`, lines 2131-2133) so that
//!   later samples carry it. Here the base minima are raised by current - base - rtt, with rtt
//!   the ACK's now - TSecr; with the model's common clock current - base never exceeds it (the
//!   cap guards libutp against clock steps and a peer's bad timestamps).
//! * `slow_start_exit` (unset): libutp's slow start (lines 1691-1705) in place of Reno's when
//!   `slow_start` is on. Per ACK the window becomes max(ss, ledbat), ss = cwnd + MSS x
//!   min(acked, cwnd) / max(cwnd, acked) (one segment per RTT, not a doubling) and ledbat the
//!   window law's result, so the delay never shrinks the window during it; the phase ends,
//!   the window left as it is on that ACK, when ss would pass ssthresh, or when the delay
//!   estimate exceeds `slow_start_exit` x TARGET (0.9 in libutp), then with ssthresh = cwnd. A
//!   halving ends it too (`maybe_decay_win`, line 616) and a retransmission timeout starts it
//!   again (line 1226). libutp has it since 2013-05-22 (the uTorrent 3.4 merge); the library
//!   before that (utp.cpp) had no slow start.
//! * `min_window` (bytes; unset: `min_cwnd` segments, the RFC): libutp's floor MIN_WINDOW_SIZE =
//!   10 bytes (utp.cpp line 51, applied by the window law, line 1696, and the loss halving,
//!   line 712), below one packet. utp.cpp (a9caf98, 2012-11-12) sends while the window is below a
//!   packet through its pacing quota: `is_writable` lets one packet go when nothing is in flight
//!   and the quota holds a packet (lines 1044-1086), the quota growing by max_window per
//!   delay_base of the RTT history, the least RTT seen (`update_send_quota`, lines 1211-1220).
//!   So below a segment one segment leaves, with nothing else in flight, MSS / cwnd minimum RTTs
//!   after the last (`probe_segments` = 1, `probe_rtt` = the least RTT sample).

use super::{
    read_params, slow_start, AckSample, CcBuild, CcContext, CcInfo, CcState, CongestionControl,
    CongestionKind,
};
use crate::params::{Group, Params};
use crate::units::{Dur, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// LEDBAT's parameters (the flow's `cc_params` table), every default written out.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LedbatParams {
    /// TARGET, the queueing delay the controller aims at (RFC 6817 2.4.2: at most 100 ms).
    pub target: Dur,
    /// GAIN, the window's growth per RTT at zero queueing delay, in segments (RFC 6817 2.4.2:
    /// at most 1).
    pub gain: f64,
    /// BASE_HISTORY, minutes of base delay kept (RFC 6817 2.4.2: 10).
    pub base_history: u32,
    /// CURRENT_FILTER, the samples whose minimum is the current delay (RFC 6817 2.4.2: 4).
    pub current_filter: u32,
    /// MIN_CWND, the window's floor in segments (RFC 6817 2.4.2: 2).
    pub min_cwnd: u32,
    /// ALLOWED_INCREASE, the window's cap above the flight size, in segments (RFC 6817 2.4.2: 1).
    pub allowed_increase: u32,
    /// Reno's slow start below ssthresh before LEDBAT's law (RFC 6817 2.4.3 allows it; off:
    /// none).
    pub slow_start: bool,
    /// libutp's per-RTT increase cap in bytes (None: the RFC's GAIN x MSS law).
    pub increase_per_rtt: Option<u32>,
    /// The RFC's flight-size cap on the window (false: libutp, none).
    pub flight_cap: bool,
    /// libutp's loss response: halve on each ACK revealing a loss, at most once per this
    /// interval (None: once per window of data, the RFC).
    pub decay_interval: Option<Dur>,
    /// libutp's cap of the delay estimate by the ACK's RTT (utp_internal.cpp lines 1621,
    /// 2131-2133; false: none, the RFC).
    pub rtt_cap: bool,
    /// libutp's slow start (utp_internal.cpp lines 1691-1705), left when the delay estimate
    /// exceeds this fraction of TARGET (libutp: 0.9); None: Reno's slow start (RFC 6817 2.4.3).
    pub slow_start_exit: Option<f64>,
    /// libutp's window floor in bytes, below one segment (MIN_WINDOW_SIZE: 10); None: min_cwnd
    /// segments (the RFC).
    pub min_window: Option<u32>,
}

impl Default for LedbatParams {
    fn default() -> Self {
        LedbatParams {
            target: Dur(100 * MS),
            gain: 1.0,
            base_history: 10,
            current_filter: 4,
            min_cwnd: 2,
            allowed_increase: 1,
            slow_start: false,
            increase_per_rtt: None,
            flight_cap: true,
            decay_interval: None,
            rtt_cap: false,
            slow_start_exit: None,
            min_window: None,
        }
    }
}

impl Params<()> for LedbatParams {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        let t = self.target.0;
        if t == 0 || t > 100 * MS {
            return Err(format!(
                "target: {} is out of range; allowed: above 0 up to 100ms (RFC 6817 2.4.2)",
                crate::units::fmt_time(t)
            ));
        }
        if !(self.gain > 0.0 && self.gain <= 1.0) {
            return Err(format!(
                "gain: {} is out of range; allowed: 0 < gain <= 1 (RFC 6817 2.4.2)",
                self.gain
            ));
        }
        for (k, v, hi) in [
            ("base_history", self.base_history, 1000),
            ("current_filter", self.current_filter, 1000),
            ("min_cwnd", self.min_cwnd, 1000),
            ("allowed_increase", self.allowed_increase, 1000),
            ("increase_per_rtt", self.increase_per_rtt.unwrap_or(1), 1_000_000),
            ("min_window", self.min_window.unwrap_or(1), 1_000_000),
        ] {
            if v == 0 || v > hi {
                return Err(format!("{k}: {v} is out of range; allowed 1 to {hi}"));
            }
        }
        if self.decay_interval == Some(Dur(0)) {
            return Err("decay_interval: 0s is out of range; allowed: above 0 (libutp: 100ms)".into());
        }
        if let Some(f) = self.slow_start_exit {
            if !(f > 0.0 && f <= 1.0) {
                return Err(format!(
                    "slow_start_exit: {f} is out of range; allowed: 0 < slow_start_exit <= 1 (libutp: 0.9)"
                ));
            }
            if !self.slow_start {
                return Err(format!(
                    "slow_start_exit: {f} needs slow_start = true; allowed: unset when slow start is off"
                ));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Ledbat {
    p: LedbatParams,
    mss: u64,
    /// The window as a real number (bytes) and what was last written to the sender.
    cwnd: f64,
    written: u64,
    current: VecDeque<Time>,
    /// (minute, minimum of that minute), oldest first.
    base: VecDeque<(u64, Time)>,
    /// When the window was last halved for a loss (`decay_interval`).
    last_decay: Option<Time>,
    /// In libutp's slow start (`slow_start_exit`).
    utp_slow_start: bool,
    /// The least RTT sample (`min_window`'s pacing).
    min_rtt: Option<Time>,
}

impl Ledbat {
    pub fn new(mss: u64, p: LedbatParams) -> Ledbat {
        Ledbat {
            mss,
            cwnd: 0.0,
            written: u64::MAX,
            current: VecDeque::new(),
            base: VecDeque::new(),
            last_decay: None,
            utp_slow_start: p.slow_start_exit.is_some(),
            min_rtt: None,
            p,
        }
    }

    fn sample(&mut self, now: Time, d: Time) {
        if self.current.len() == self.p.current_filter as usize {
            self.current.pop_front();
        }
        self.current.push_back(d);
        let minute = now / (60 * SEC);
        match self.base.back_mut() {
            Some((m, v)) if *m == minute => *v = (*v).min(d),
            _ => {
                if self.base.len() == self.p.base_history as usize {
                    self.base.pop_front();
                }
                self.base.push_back((minute, d));
            }
        }
    }

    /// The queueing delay estimate current - base, once there is a sample.
    pub fn queuing_delay(&self) -> Option<Time> {
        let cur = self.current.iter().min()?;
        let base = self.base.iter().map(|&(_, v)| v).min()?;
        Some(cur.saturating_sub(base))
    }

    /// libutp's cap: raise the base minima so that the estimate is at most `rtt`.
    fn cap_by_rtt(&mut self, rtt: Time) {
        let excess = self.queuing_delay().map_or(0, |q| q.saturating_sub(rtt));
        for (_, v) in self.base.iter_mut() {
            *v += excess;
        }
    }

    fn adopt(&mut self, st: &CcState) {
        if st.cwnd != self.written {
            self.cwnd = st.cwnd as f64;
        }
    }

    fn write(&mut self, st: &mut CcState) {
        st.cwnd = self.cwnd as u64;
        self.written = st.cwnd;
    }

    fn floor(&self) -> f64 {
        match self.p.min_window {
            Some(bytes) => bytes as f64,
            None => (self.p.min_cwnd as u64 * self.mss) as f64,
        }
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if let Some(d) = ack.owd {
            self.sample(ack.now, d);
        }
        if let Some(rtt) = ack.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        }
        if let (true, Some(rtt)) = (self.p.rtt_cap, ack.rtt) {
            self.cap_by_rtt(rtt);
        }
        if st.in_recovery || ack.acked_bytes == 0 {
            return;
        }
        if self.p.slow_start && self.p.slow_start_exit.is_none() && st.in_slow_start() {
            slow_start(st, ack.acked_bytes);
            return;
        }
        self.adopt(st);
        let Some(q) = self.queuing_delay() else {
            return;
        };
        let target = self.p.target.0 as f64;
        let off_target = (target - q as f64) / target;
        let mss = self.mss as f64;
        let acked = ack.acked_bytes as f64;
        let ledbat = self.cwnd
            + match self.p.increase_per_rtt {
                Some(cap) => cap as f64 * off_target * acked.min(self.cwnd) / self.cwnd.max(acked).max(1.0),
                None => self.p.gain * off_target * acked * mss / self.cwnd.max(mss),
            };
        match self.p.slow_start_exit {
            Some(exit) if self.utp_slow_start => {
                let ss = self.cwnd + mss * acked.min(self.cwnd) / self.cwnd.max(acked).max(1.0);
                if ss > st.ssthresh as f64 {
                    self.utp_slow_start = false;
                } else if q as f64 > exit * target {
                    self.utp_slow_start = false;
                    st.ssthresh = self.cwnd as u64;
                } else {
                    self.cwnd = ss.max(ledbat);
                }
            }
            _ => self.cwnd = ledbat,
        }
        if self.p.flight_cap {
            let flight_before = (st.bytes_in_flight + ack.acked_bytes) as f64;
            self.cwnd = self
                .cwnd
                .min(flight_before + (self.p.allowed_increase as u64 * self.mss) as f64);
        }
        self.cwnd = self.cwnd.max(self.floor());
        self.write(st);
    }

    fn on_congestion_event(&mut self, now: Time, _kind: CongestionKind, st: &mut CcState) {
        if let Some(Dur(interval)) = self.p.decay_interval {
            if self.last_decay.is_some_and(|t| now - t < interval) {
                st.ssthresh = st.cwnd;
                return;
            }
            self.last_decay = Some(now);
        }
        self.adopt(st);
        self.cwnd = (self.cwnd / 2.0).max(self.floor());
        self.write(st);
        st.ssthresh = st.cwnd;
        self.utp_slow_start = false;
    }

    fn on_loss_detected(&mut self, now: Time, st: &mut CcState) {
        if self.p.decay_interval.is_some() {
            self.on_congestion_event(now, CongestionKind::Loss, st);
        }
    }

    fn probe_segments(&self) -> u64 {
        self.p.min_window.map_or(0, |_| 1)
    }

    fn caps_window_by_flight(&self) -> bool {
        self.p.flight_cap
    }

    fn probe_rtt(&self) -> Option<Time> {
        self.p.min_window.and(self.min_rtt)
    }

    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        self.utp_slow_start = self.p.slow_start_exit.is_some();
        if first {
            st.ssthresh = ((st.cwnd / 2) as f64).max(self.floor()) as u64;
        }
    }
}

fn build(params: &Value, ctx: &CcContext) -> CcBuild {
    let (p, resolved) = read_params::<LedbatParams>(params)?;
    Ok((Box::new(Ledbat::new(ctx.mss, p)), resolved))
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "ledbat",
    summary: "LEDBAT: a low-priority window that holds the queueing delay at a target",
    reference: "RFC 6817; libutp utp_internal.cpp",
    params: &[Group::of::<LedbatParams>()],
    needs_accecn: false,
    build,
}];

#[cfg(test)]
mod tests {
    use super::super::test_ack;
    use super::*;

    const MSS: u64 = 1000;

    fn st(cwnd: u64, flight: u64) -> CcState {
        super::super::test_state(cwnd, u64::MAX, flight)
    }

    /// One RTT of per-segment ACKs at a constant queueing delay `q` above a base of 20 ms; returns
    /// the window change in segments (RFC 6817 4.2's linear controller: +1, 0 or -1 MSS per RTT
    /// at q = 0, TARGET, 2 TARGET).
    fn one_rtt(q: Time) -> f64 {
        one_rtt_with(q, LedbatParams::default())
    }

    fn one_rtt_with(q: Time, p: LedbatParams) -> f64 {
        let mut l = Ledbat::new(MSS, p);
        let base = 20 * MS;
        l.sample(0, base); // the empty-queue delay seen once
        for _ in 0..4 {
            l.sample(SEC, base + q); // the current filter holds the queue's delay only
        }
        let mut s = st(20 * MSS, 20 * MSS);
        let w0 = s.cwnd as f64;
        let mut t = SEC;
        for _ in 0..20 {
            t += MS;
            let ack = AckSample {
                now: t,
                acked_bytes: MSS,
                owd: Some(base + q),
                ..Default::default()
            };
            l.on_ack(&ack, &mut s);
            s.bytes_in_flight = s.cwnd; // the sender refills the window
        }
        (l.cwnd - w0) / MSS as f64
    }

    #[test]
    fn the_window_follows_the_linear_controller_around_the_target() {
        assert!((one_rtt(0) - 1.0).abs() < 0.06, "{}", one_rtt(0));
        assert!(one_rtt(100 * MS).abs() < 1e-9, "{}", one_rtt(100 * MS));
        assert!((one_rtt(200 * MS) + 1.0).abs() < 0.06, "{}", one_rtt(200 * MS));
        // Half the target: half a segment per RTT.
        assert!((one_rtt(50 * MS) - 0.5).abs() < 0.03);
    }

    #[test]
    fn libutp_increase_cap_is_3000_bytes_per_rtt_whatever_the_mss() {
        // utp_internal.cpp: MAX_CWND_INCREASE_BYTES_PER_RTT = 3000 scaled by off_target and by
        // the acked fraction of the window: an empty queue adds 3000 B = 3 segments of 1000 B
        // per RTT (the RFC law adds 1), half the target 1.5.
        let utp = || LedbatParams {
            increase_per_rtt: Some(3000),
            ..Default::default()
        };
        assert!(
            (one_rtt_with(0, utp()) - 3.0).abs() < 0.3,
            "{}",
            one_rtt_with(0, utp())
        );
        assert!((one_rtt_with(50 * MS, utp()) - 1.5).abs() < 0.15);
        assert!(one_rtt_with(100 * MS, utp()).abs() < 1e-9);
    }

    #[test]
    fn libutp_windows_fall_below_one_segment_to_10_bytes_and_are_paced_by_the_least_rtt() {
        // utp.cpp (a9caf98): the window law and the loss halving floor the window at
        // MIN_WINDOW_SIZE = 10 bytes (lines 1688-1696, 712), not at a segment; below a packet
        // the pacing quota lets one packet go per packet / max_window delay_base (the least RTT
        // seen; lines 1044-1086, 1211-1220).
        let utp = |min_window| LedbatParams {
            increase_per_rtt: Some(3000),
            flight_cap: false,
            current_filter: 1,
            min_window,
            ..Default::default()
        };
        // At twice the target (off_target = -1) each ACK of a segment takes 3000 B x
        // min(acked, W) / max(W, acked): 2000 -> 500 -> 500 - 1500 < 10, floored at 10 bytes;
        // the RFC's floor stays at min_cwnd = 2 segments.
        for (min_window, floor) in [(Some(10), 10), (None, 2 * MSS)] {
            let mut l = Ledbat::new(MSS, utp(min_window));
            l.sample(0, 20 * MS);
            let mut s = st(2 * MSS, 0);
            let mut seen = vec![];
            for (k, rtt) in [300, 250, 400].into_iter().enumerate() {
                let ack = AckSample {
                    now: SEC + k as Time * MS,
                    acked_bytes: MSS,
                    owd: Some(220 * MS),
                    rtt: Some(rtt * MS),
                    ..Default::default()
                };
                l.on_ack(&ack, &mut s);
                seen.push(s.cwnd);
            }
            assert_eq!(*seen.last().unwrap(), floor, "{min_window:?}: {seen:?}");
            if min_window.is_some() {
                assert_eq!(seen[0], 500, "the first ACK: 2000 - 3000 x 1000 / 2000");
            }
            // A loss halves down to the same floor.
            l.on_congestion_event(2 * SEC, CongestionKind::Loss, &mut s);
            assert_eq!(s.cwnd, floor);
            // Sub-segment windows are sent one segment at a time, spaced by the least RTT.
            let paced = min_window.is_some();
            assert_eq!(l.probe_segments(), paced as u64);
            assert_eq!(l.probe_rtt(), paced.then_some(250 * MS));
        }
    }

    #[test]
    fn libutp_has_no_flight_size_cap() {
        // RFC 6817 2.4.2 caps cwnd at flight + ALLOWED_INCREASE; libutp does not: with 2 of 10
        // segments in flight an ACK at an empty queue grows the window above 10 segments.
        let mut l = Ledbat::new(
            MSS,
            LedbatParams {
                flight_cap: false,
                ..Default::default()
            },
        );
        l.sample(0, 10 * MS);
        let mut s = st(10 * MSS, 2 * MSS);
        let ack = AckSample {
            now: SEC,
            acked_bytes: MSS,
            owd: Some(10 * MS),
            ..Default::default()
        };
        l.on_ack(&ack, &mut s);
        assert_eq!(s.cwnd, 10 * MSS + 100); // + GAIN x 1 x MSS x MSS / cwnd, uncapped
    }

    #[test]
    fn floors_caps_and_loss() {
        let mut l = Ledbat::new(MSS, LedbatParams::default());
        l.sample(0, 10 * MS);
        // Far above target: the window falls to MIN_CWND = 2 segments and stays.
        let mut s = st(3 * MSS, 3 * MSS);
        for k in 0..100 {
            let ack = AckSample {
                now: SEC + k,
                acked_bytes: MSS,
                owd: Some(10 * MS + SEC),
                ..Default::default()
            };
            l.on_ack(&ack, &mut s);
        }
        assert_eq!(s.cwnd, 2 * MSS);
        // Empty queue but little in flight: at most flight + ALLOWED_INCREASE.
        let mut l = Ledbat::new(MSS, LedbatParams::default());
        l.sample(0, 10 * MS);
        let mut s = st(10 * MSS, 2 * MSS);
        let ack = AckSample {
            now: SEC,
            acked_bytes: MSS,
            owd: Some(10 * MS),
            ..Default::default()
        };
        l.on_ack(&ack, &mut s);
        assert_eq!(s.cwnd, 4 * MSS); // flight before the ACK (3) + 1
                                     // Loss halves, not below MIN_CWND; ssthresh follows.
        let mut s = st(10 * MSS, 10 * MSS);
        l.on_congestion_event(SEC, CongestionKind::Loss, &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (5 * MSS, 5 * MSS));
        let mut s = st(3 * MSS, 3 * MSS);
        l.on_congestion_event(SEC, CongestionKind::Loss, &mut s);
        assert_eq!(s.cwnd, 2 * MSS);
    }

    #[test]
    fn libutp_halves_per_revealed_loss_at_most_once_per_decay_interval() {
        // utp_internal.cpp maybe_decay_win: halve when 100 ms (MAX_WINDOW_DECAY) have passed
        // since the last halving, on every ACK whose SACKs make it resend.
        let p = LedbatParams {
            decay_interval: Some(Dur(100 * MS)),
            ..Default::default()
        };
        let mut l = Ledbat::new(MSS, p);
        let mut s = st(64 * MSS, 64 * MSS);
        l.on_congestion_event(SEC, CongestionKind::Loss, &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (32 * MSS, 32 * MSS));
        l.on_loss_detected(SEC + 50 * MS, &mut s); // 50 ms later: too soon
        assert_eq!(s.cwnd, 32 * MSS);
        l.on_loss_detected(SEC + 100 * MS, &mut s); // 100 ms: halve again, same recovery
        assert_eq!((s.cwnd, s.ssthresh), (16 * MSS, 16 * MSS));
        // A new recovery within 100 ms of that halving keeps the window.
        l.on_congestion_event(SEC + 150 * MS, CongestionKind::Loss, &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (16 * MSS, 16 * MSS));
        // The RFC's LEDBAT halves once per window: later losses of the episode change nothing.
        let mut l = Ledbat::new(MSS, LedbatParams::default());
        let mut s = st(64 * MSS, 64 * MSS);
        l.on_congestion_event(SEC, CongestionKind::Loss, &mut s);
        l.on_loss_detected(SEC + 500 * MS, &mut s);
        assert_eq!(s.cwnd, 32 * MSS);
    }

    /// A controller whose base delay is 20 ms and whose current filter holds 20 ms + `q`.
    fn at_queue(q: Time, p: LedbatParams) -> Ledbat {
        let mut l = Ledbat::new(MSS, p);
        l.sample(0, 20 * MS);
        for _ in 0..4 {
            l.sample(SEC, 20 * MS + q);
        }
        l
    }

    #[test]
    fn libutp_caps_the_delay_estimate_by_the_acks_rtt_and_shifts_the_base() {
        // utp_internal.cpp 2131-2133 and 1621: an estimate of 80 ms with an RTT of 50 ms is taken
        // as 50 ms: off_target 0.5, the RFC law adds 0.5 x MSS x MSS / cwnd = 25 B at 20 segments
        // (uncapped: 0.2, 10 B).
        let p = LedbatParams {
            rtt_cap: true,
            ..Default::default()
        };
        let mut l = at_queue(80 * MS, p.clone());
        let mut s = st(20 * MSS, 20 * MSS);
        l.on_ack(&test_ack(SEC, 100 * MS, 50 * MS), &mut s);
        assert_eq!(s.cwnd, 20 * MSS + 25);
        // The base was raised by the 30 ms excess: a later 100 ms sample reads 50 ms, not 80.
        l.sample(2 * SEC, 100 * MS);
        assert_eq!(l.queuing_delay(), Some(50 * MS));
        // An RTT above the estimate changes nothing; without the knob the RTT is ignored.
        let mut l = at_queue(80 * MS, p);
        let mut s = st(20 * MSS, 20 * MSS);
        l.on_ack(&test_ack(SEC, 100 * MS, 80 * MS), &mut s);
        assert_eq!(s.cwnd, 20 * MSS + 10);
        let mut l = at_queue(80 * MS, LedbatParams::default());
        let mut s = st(20 * MSS, 20 * MSS);
        l.on_ack(&test_ack(SEC, 100 * MS, 50 * MS), &mut s);
        assert_eq!(s.cwnd, 20 * MSS + 10);
    }

    #[test]
    fn libutp_slow_start_grows_one_segment_per_rtt_and_ends_at_0_9_target() {
        // utp_internal.cpp 1691-1705 with MAX_CWND_INCREASE_BYTES_PER_RTT 3000, MSS 1000, 10
        // segments: ss = cwnd + MSS x acked / cwnd = +100 B, ledbat = cwnd + 3000 x off_target x
        // acked / cwnd; the window takes the larger while the delay is at most 0.9 TARGET.
        let utp = || LedbatParams {
            increase_per_rtt: Some(3000),
            flight_cap: false,
            slow_start: true,
            slow_start_exit: Some(0.9),
            ..Default::default()
        };
        let one_ack = |q: Time, ssthresh: u64| {
            let mut l = at_queue(q, utp());
            let mut s = super::super::test_state(10 * MSS, ssthresh, 10 * MSS);
            l.on_ack(&test_ack(SEC, 20 * MS + q, 200 * MS), &mut s);
            (l, s)
        };
        // 80 ms: off_target 0.2, ledbat +60 B < ss +100 B.
        assert_eq!(one_ack(80 * MS, u64::MAX).1.cwnd, 10 * MSS + 100);
        // 40 ms: off_target 0.6, ledbat +180 B > ss.
        assert_eq!(one_ack(40 * MS, u64::MAX).1.cwnd, 10 * MSS + 180);
        // 95 ms > 90 ms: slow start ends, the window kept on that ACK and ssthresh = cwnd; the next
        // ACK follows the LEDBAT law (+15 B), not ss.
        let (mut l, mut s) = one_ack(95 * MS, u64::MAX);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 10 * MSS));
        l.on_ack(&test_ack(SEC, 115 * MS, 200 * MS), &mut s);
        assert_eq!(s.cwnd, 10 * MSS + 15);
        // ss would pass ssthresh (10050): slow start ends, window and ssthresh kept; then 3000 B
        // x 0 queue x 1/10 = +300 B.
        let (mut l, mut s) = one_ack(0, 10 * MSS + 50);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 10 * MSS + 50));
        l.on_ack(&test_ack(SEC, 20 * MS, 200 * MS), &mut s);
        assert_eq!(s.cwnd, 10 * MSS + 300);
        // A halving ends it (maybe_decay_win): at 80 ms the law's +120 B at 5 segments, not +200.
        let mut l = at_queue(80 * MS, utp());
        let mut s = super::super::test_state(10 * MSS, u64::MAX, 10 * MSS);
        l.on_congestion_event(SEC, CongestionKind::Loss, &mut s);
        s.ssthresh = u64::MAX;
        l.on_ack(&test_ack(SEC, 100 * MS, 200 * MS), &mut s);
        assert_eq!(s.cwnd, 5 * MSS + 120);
        // A timeout starts it again (line 1226): +200 B.
        l.on_rto(SEC, true, &mut s);
        s.ssthresh = u64::MAX;
        s.cwnd = 5 * MSS;
        l.on_ack(&test_ack(SEC, 100 * MS, 200 * MS), &mut s);
        assert_eq!(s.cwnd, 5 * MSS + 200);
    }

    #[test]
    fn base_delay_keeps_one_minimum_per_minute_for_base_history_minutes() {
        let p = LedbatParams {
            base_history: 2,
            ..Default::default()
        };
        let mut l = Ledbat::new(MSS, p);
        l.sample(0, 30 * MS); // minute 0
        l.sample(70 * SEC, 50 * MS); // minute 1
        l.sample(80 * SEC, 40 * MS); // minute 1, lower
        assert_eq!(
            l.base.iter().map(|&(_, v)| v).collect::<Vec<_>>(),
            [30 * MS, 40 * MS]
        );
        l.sample(130 * SEC, 60 * MS); // minute 2: minute 0 is forgotten
        assert_eq!(l.base.iter().map(|&(_, v)| v).min(), Some(40 * MS));
        // current_delay = min of the last 4 samples
        assert_eq!(l.queuing_delay(), Some(0));
    }

    #[test]
    fn parameters_are_checked() {
        let bad = |mut p: LedbatParams| p.finish(&()).unwrap_err();
        assert!(bad(LedbatParams {
            target: Dur(150 * MS),
            ..Default::default()
        })
        .starts_with("target: 150ms"));
        assert!(bad(LedbatParams {
            gain: 1.5,
            ..Default::default()
        })
        .starts_with("gain: 1.5"));
        assert!(bad(LedbatParams {
            min_cwnd: 0,
            ..Default::default()
        })
        .starts_with("min_cwnd: 0"));
        assert!(bad(LedbatParams {
            slow_start: true,
            slow_start_exit: Some(1.5),
            ..Default::default()
        })
        .starts_with("slow_start_exit: 1.5 is out of range"));
        assert!(bad(LedbatParams {
            slow_start_exit: Some(0.9),
            ..Default::default()
        })
        .contains("needs slow_start = true"));
        assert!(LedbatParams {
            target: Dur(25 * MS),
            ..Default::default()
        }
        .finish(&())
        .is_ok());
    }
}
