//! CUBIC (RFC 9438) with Linux-style HyStart (tcp_cubic.c v2.3 behaviour, algorithms.md 12).
//!
//! Variant choices:
//! * Window law of RFC 9438: K = cbrt((W_max - cwnd_epoch)/C), C = 0.4, beta = 0.7, fast
//!   convergence on (W_max = cwnd*(1+beta)/2 when cwnd < previous W_max).
//! * Target = W_cubic(t + RTT) with RTT = the sender's smoothed RTT (RFC 9438; Linux uses the
//!   minimum RTT), clamped to [cwnd, 1.5*cwnd]; per ACK cwnd += (target - cwnd)/cwnd per
//!   acknowledged segment.
//! * Reno-friendly region per RFC 9438 section 4.3: W_est starts at cwnd_epoch and grows by
//!   alpha*segments_acked/cwnd, alpha = 3(1-beta)/(1+beta) until W_est reaches the
//!   pre-reduction window (cwnd_prior), then 1. While W_cubic(t) < W_est, cwnd = max(cwnd, W_est)
//!   (never decreasing cwnd on an ACK).
//! * Reduction uses cwnd (Linux) rather than FlightSize: ssthresh = max(beta*cwnd, 2*SMSS).
//! * RTO: ssthresh from beta, then the whole CUBIC state (W_max, epoch, HyStart) is reset, as
//!   Linux does on entering the Loss state.
//! * Slow start: shared RFC 5681/3465 slow start (L = 2*SMSS).
//! * HyStart (Linux): active in slow start when cwnd >= 16 segments; ACK train (ACKs <= 2 ms
//!   apart for longer than delay_min/2 since the round started) or delay increase (minimum of
//!   the first 8 RTT samples of a round > delay_min + clamp(delay_min/8, 4 ms, 16 ms)) ends slow
//!   start with ssthresh = cwnd. RTT samples within 1 s of an epoch start are ignored (Linux).
//!   Alternatively HyStart++ (RFC 9406, `hystart_pp.rs`) runs the initial slow start.
//!
//! Windows are tracked in bytes in [`CcState`]; the law is evaluated in segments (f64), and the
//! fractional growth is carried between ACKs so nothing is lost to rounding.

use super::{slow_start, AckSample, CcState, CongestionControl, CongestionKind, Hystart, HystartPp};
use crate::units::{Time, MS, SEC};

/// C in segments/s^3.
pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;
const HYSTART_LOW_WINDOW: u64 = 16;
const HYSTART_ACK_DELTA: Time = 2 * MS;
const HYSTART_MIN_SAMPLES: u32 = 8;

#[derive(Clone, Debug)]
pub struct Cubic {
    mss: u64,
    pub fast_convergence: bool,
    /// Linux HyStart on; HyStart++ instead when `hspp` is set.
    hystart: bool,
    hspp: Option<HystartPp>,
    /// Window before the last reduction (segments); 0 before any loss.
    w_max: f64,
    /// Time from epoch start to reaching the origin (s).
    k: f64,
    origin: f64,
    epoch_start: Option<Time>,
    w_est: f64,
    /// cwnd just before the last reduction (segments), for the Reno-friendly alpha switch.
    cwnd_prior: f64,
    /// Fractional bytes of growth not yet added to cwnd.
    frac: f64,
    delay_min: Option<Time>,
    // HyStart round state.
    hs_found: bool,
    hs_round_start: Option<Time>,
    hs_last_ack: Time,
    hs_curr_rtt: Option<Time>,
    hs_samples: u32,
}

impl Cubic {
    pub fn new(mss: u64, hystart: Hystart) -> Cubic {
        Cubic {
            mss,
            fast_convergence: true,
            hystart: hystart == Hystart::Linux,
            hspp: (hystart == Hystart::Rfc9406).then(HystartPp::default),
            w_max: 0.0,
            k: 0.0,
            origin: 0.0,
            epoch_start: None,
            w_est: 0.0,
            cwnd_prior: 0.0,
            frac: 0.0,
            delay_min: None,
            hs_found: false,
            hs_round_start: None,
            hs_last_ack: 0,
            hs_curr_rtt: None,
            hs_samples: 0,
        }
    }

    /// W_max in segments (0 before any congestion event).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch in seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// Start of the current epoch, if one is running.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch_start
    }

    /// W_cubic(t) in segments, t in seconds since the epoch start.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.origin
    }

    /// True once HyStart has ended slow start.
    pub fn hystart_exited(&self) -> bool {
        self.hs_found
    }

    fn reset(&mut self) {
        let (mss, fc, hy, dm) = (self.mss, self.fast_convergence, self.hystart, self.delay_min);
        let hspp = self.hspp.take();
        *self = Cubic::new(mss, Hystart::Off);
        self.hystart = hy;
        self.hspp = hspp;
        self.fast_convergence = fc;
        self.delay_min = dm;
    }

    fn grow(&mut self, st: &mut CcState, seg_delta: f64) {
        self.frac += seg_delta * self.mss as f64;
        if self.frac >= 1.0 {
            let whole = self.frac.floor();
            st.cwnd += whole as u64;
            self.frac -= whole;
        }
    }

    fn hystart_update(&mut self, ack: &AckSample, st: &mut CcState) {
        if ack.round_start || self.hs_round_start.is_none() {
            self.hs_round_start = Some(ack.now);
            self.hs_last_ack = ack.now;
            self.hs_curr_rtt = None;
            self.hs_samples = 0;
        }
        if self.hs_found || st.cwnd < HYSTART_LOW_WINDOW * self.mss {
            return;
        }
        let Some(delay_min) = self.delay_min else { return };
        // ACK train.
        if ack.now - self.hs_last_ack <= HYSTART_ACK_DELTA {
            self.hs_last_ack = ack.now;
            if let Some(rs) = self.hs_round_start {
                if ack.now - rs > delay_min / 2 {
                    self.hs_found = true;
                }
            }
        }
        // Delay increase.
        if let Some(rtt) = ack.rtt {
            if self.hs_samples < HYSTART_MIN_SAMPLES {
                self.hs_curr_rtt = Some(self.hs_curr_rtt.map_or(rtt, |c| c.min(rtt)));
                self.hs_samples += 1;
            } else if let Some(c) = self.hs_curr_rtt {
                let thresh = (delay_min / 8).clamp(4 * MS, 16 * MS);
                if c > delay_min + thresh {
                    self.hs_found = true;
                }
            }
        }
        if self.hs_found {
            st.ssthresh = st.cwnd;
        }
    }

    fn congestion_avoidance(&mut self, now: Time, acked: u64, st: &mut CcState) {
        let mss = self.mss as f64;
        let cwnd = st.cwnd as f64 / mss;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                if cwnd < self.w_max {
                    self.k = ((self.w_max - cwnd) / C).cbrt();
                    self.origin = self.w_max;
                } else {
                    self.k = 0.0;
                    self.origin = cwnd;
                }
                self.w_est = cwnd;
                now
            }
        };
        let t = (now - epoch) as f64 / SEC as f64;
        let rtt = st.srtt.or(self.delay_min).unwrap_or(0) as f64 / SEC as f64;
        let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        let segs = acked as f64 / mss;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * segs / cwnd;
        if self.w_cubic(t) < self.w_est {
            if self.w_est > cwnd {
                self.grow(st, self.w_est - cwnd);
            }
        } else {
            self.grow(st, (target - cwnd) / cwnd * segs);
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if let Some(rtt) = ack.rtt {
            let fresh_epoch = self.epoch_start.is_some_and(|e| ack.now.saturating_sub(e) < SEC);
            if !fresh_epoch {
                self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
            }
        }
        if st.in_recovery || ack.acked_bytes == 0 {
            return;
        }
        let mut acked = ack.acked_bytes;
        if st.in_slow_start() && self.hystart {
            // bictcp_acked (the pkts_acked hook) runs HyStart whether or not the window is
            // used; bictcp_cong_avoid, the growth below, returns unless cwnd-limited.
            self.hystart_update(ack, st);
        }
        if !st.cwnd_limited {
            return;
        }
        if st.in_slow_start() {
            acked = match &mut self.hspp {
                Some(h) => h.slow_start(ack, st),
                None => slow_start(st, acked),
            };
            if acked == 0 {
                return;
            }
        }
        self.congestion_avoidance(ack.now, acked, st);
    }

    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        if let Some(h) = &mut self.hspp {
            h.end();
        }
        let cwnd = st.cwnd as f64 / self.mss as f64;
        self.epoch_start = None;
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        self.frac = 0.0;
        st.ssthresh = ((st.cwnd as f64 * BETA) as u64).max(2 * self.mss);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        if let Some(h) = &mut self.hspp {
            h.end();
        }
        if first {
            st.ssthresh = ((st.cwnd as f64 * BETA) as u64).max(2 * self.mss);
        }
        self.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn state(cwnd_segs: u64) -> CcState {
        CcState {
            cwnd: cwnd_segs * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            bytes_in_flight: cwnd_segs * MSS,
            in_recovery: false,
            cwnd_limited: true,
            srtt: Some(100 * MS),
            abc: true,
        }
    }

    fn start_epoch(c: &mut Cubic, st: &mut CcState, now: Time) {
        // The first ACK in congestion avoidance opens the epoch.
        c.on_ack(
            &AckSample {
                now,
                acked_bytes: MSS,
                ..Default::default()
            },
            st,
        );
    }

    #[test]
    fn window_law_vectors_without_fast_convergence() {
        // algorithms.md 12.5: W_max = 100, K = cbrt(100*0.3/0.4) = 4.217 s.
        let mut c = Cubic::new(MSS, Hystart::Off);
        c.fast_convergence = false;
        let mut st = state(100);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        assert_eq!(c.w_max(), 100.0);
        assert_eq!(st.ssthresh, 70 * MSS);
        assert_eq!(st.cwnd, 70 * MSS);
        start_epoch(&mut c, &mut st, 5 * SEC);
        assert!((c.k() - 4.217).abs() < 5e-4, "K = {}", c.k());
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k()) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k() + 1.0) - 100.4).abs() < 1e-9);
    }

    #[test]
    fn fast_convergence_vector() {
        let mut c = Cubic::new(MSS, Hystart::Off);
        let mut st = state(120);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        assert_eq!(c.w_max(), 120.0);
        // Second loss at cwnd = 100 < previous W_max: W_max = 100*(1.7)/2 = 85, cwnd -> 70.
        st.cwnd = 100 * MSS;
        c.on_congestion_event(SEC, CongestionKind::Loss, &mut st);
        assert!((c.w_max() - 85.0).abs() < 1e-9);
        assert_eq!(st.cwnd, 70 * MSS);
        start_epoch(&mut c, &mut st, 2 * SEC);
        // RFC 9438 / Linux: K = cbrt((85-70)/0.4) = 3.347 s (RFC 8312 would give 3.995 s).
        assert!((c.k() - 3.347).abs() < 5e-4, "K = {}", c.k());
    }

    #[test]
    fn growth_follows_the_curve_and_is_clamped() {
        // Integrate per-ACK growth with one ACK per segment and a fixed RTT; after K seconds
        // cwnd must be close to W_max (target leads by one RTT, so cwnd gets there a bit early).
        let mut c = Cubic::new(MSS, Hystart::Off);
        c.fast_convergence = false;
        let mut st = state(100);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        let rtt = 100 * MS;
        let mut now = SEC;
        start_epoch(&mut c, &mut st, now);
        let k = c.k();
        let end = now + (k * SEC as f64) as Time;
        while now < end {
            let per_ack = rtt / (st.cwnd / MSS);
            for _ in 0..st.cwnd / MSS {
                now += per_ack;
                let before = st.cwnd;
                c.on_ack(
                    &AckSample {
                        now,
                        acked_bytes: MSS,
                        ..Default::default()
                    },
                    &mut st,
                );
                assert!(st.cwnd as f64 <= before as f64 * 1.5 + MSS as f64);
            }
        }
        let w = st.cwnd as f64 / MSS as f64;
        assert!((99.0..102.0).contains(&w), "cwnd at t=K: {w}");
    }

    #[test]
    fn reno_friendly_region_small_window() {
        // W_max = 10 segments at RTT 10 ms: the cubic curve is nearly flat (K = 1.9 s) while
        // Reno-friendly growth adds ~0.53 segment per RTT: after 50 RTTs (0.5 s), cwnd is about
        // 7 + 0.53*3 (to cwnd_prior = 10) + 1*(remaining RTTs), clearly above W_cubic.
        let mut c = Cubic::new(MSS, Hystart::Off);
        let mut st = state(10);
        st.srtt = Some(10 * MS);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        let mut now = SEC;
        start_epoch(&mut c, &mut st, now);
        for _ in 0..50 {
            let n = st.cwnd / MSS;
            for _ in 0..n {
                now += 10 * MS / n;
                c.on_ack(
                    &AckSample {
                        now,
                        acked_bytes: MSS,
                        ..Default::default()
                    },
                    &mut st,
                );
            }
        }
        let t = (now - c.epoch_start().unwrap()) as f64 / 1e9;
        let w = st.cwnd as f64 / MSS as f64;
        assert!(w > c.w_cubic(t) + 5.0, "cwnd {w} vs W_cubic {}", c.w_cubic(t));
        assert!(w > 30.0 && w < 60.0, "{w}");
    }

    #[test]
    fn hystart_delay_increase_exits_slow_start() {
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        let mut now = 0;
        // Round 1: RTT 100 ms (sets delay_min). ACKs 5 ms apart: no ACK train.
        for i in 0..10 {
            now += 5 * MS;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(100 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(!c.hystart_exited());
        // Round 2: RTT 100 + 13 ms > 100 + clamp(12.5, 4, 16) ms -> exit after 8 samples.
        for i in 0..10 {
            now += 5 * MS;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(113 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(c.hystart_exited());
        assert!(!st.in_slow_start());
    }

    #[test]
    fn hystart_ack_train_exits_after_half_min_rtt() {
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        // delay_min = 80 ms; ACKs 1 ms apart (a train): exit once the train has lasted more
        // than delay_min/2 = 40 ms since the round started.
        let mut now = 0;
        for i in 0..60u64 {
            now += MS;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(80 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
            if c.hystart_exited() {
                break;
            }
        }
        assert!(c.hystart_exited());
        assert_eq!(
            now,
            42 * MS,
            "first ACK more than 40 ms after the round start (at 1 ms)"
        );
        // ssthresh = cwnd at the exit: 20 + 41 segments (41 ACKs of slow start before the exit).
        assert_eq!(st.ssthresh, 61 * MSS);
        assert!(!st.in_slow_start());
        // An ACK gap > 2 ms breaks the train.
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        let mut now = 0;
        for i in 0..60u64 {
            now += if i == 10 { 3 * MS } else { MS };
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(80 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(!c.hystart_exited());
    }

    #[test]
    fn hystart_ignores_small_windows() {
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(4);
        let mut now = 0;
        for i in 0..11 {
            now += 100 * crate::units::US;
            let rtt = if i < 4 { 100 * MS } else { 200 * MS };
            let a = AckSample {
                now,
                acked_bytes: 1,
                rtt: Some(rtt),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(!c.hystart_exited());
    }
}
