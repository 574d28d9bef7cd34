//! TCP-LP (Kuzmanovic & Knightly, INFOCOM 2003) as Linux's `tcp_lp.c` runs it (the kernel
//! module the lpcc2013 testbed used; algorithms.md 14). NewReno does everything except:
//!
//! * One-way delay samples (the ACK's TSval - TSecr; Linux converts the remote timestamp clock
//!   with an estimated remote HZ, which one simulated clock makes exact) update the observed
//!   minimum and maximum, the maximum keeping a "reserved" second value so that one outlier is
//!   forgotten (`tcp_lp_rtt_sample`), and the smoothed delay sowd = 7/8 sowd + 1/8 sample.
//! * Early congestion indication (ECI), tested on every ACK that acknowledges data
//!   (`tcp_lp_pkts_acked`): sowd >= min + 15% (max - min). On an ECI the bounds restart from sowd
//!   (min = sowd, max = 2 sowd) and the window falls: to one segment when the previous ECI is less
//!   than the inference time ago, else to half. ssthresh is left alone (Linux sets only cwnd), so
//!   below ssthresh the window regrows in slow start. The first sample is an indication (sowd
//!   equals both bounds, and the test is a strict "below"), as in Linux.
//! * The inference time is 3 x the latest RTT sample (now - TSecr); no window growth within it
//!   (`tcp_lp_cong_avoid`).
//!
//! Parameters (`cc_params`): threshold (0.15: the ECI fraction of the [min, max] range), gamma
//! (1/8: the smoothing weight), inference_rtts (3).

use super::{AckSample, CcState, CongestionControl, CongestionKind, Hystart, Reno};
use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};

/// TCP-LP's parameters (the flow's `cc_params` table), every default written out.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TcpLpParams {
    pub threshold: f64,
    pub gamma: f64,
    pub inference_rtts: f64,
    /// After an ECI restart the bounds at [sowd, 2 sowd] (Linux; the paper keeps them).
    pub bounds_reset: bool,
    /// The receiver's timestamp clock minus the sender's, added to every one-way delay sample
    /// (real hosts' clocks differ; one simulated clock has none). It matters only through
    /// Linux's bounds reset, whose [sowd, 2 sowd] range includes it.
    pub clock_offset: Dur,
}

impl Default for TcpLpParams {
    fn default() -> Self {
        TcpLpParams {
            threshold: 0.15,
            gamma: 0.125,
            inference_rtts: 3.0,
            bounds_reset: true,
            clock_offset: Dur(0),
        }
    }
}

impl TcpLpParams {
    pub fn check(&self) -> Result<(), String> {
        for (k, v, lo, hi) in [
            ("threshold", self.threshold, 0.0, 1.0),
            ("gamma", self.gamma, 0.0, 1.0),
            ("inference_rtts", self.inference_rtts, 0.0, 100.0),
        ] {
            if !(v > lo && v <= hi) {
                return Err(format!(
                    "{k}: {v} is out of range; allowed: above {lo} up to {hi}"
                ));
            }
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct TcpLp {
    p: TcpLpParams,
    reno: Reno,
    sowd: Option<f64>,
    owd_min: Option<Time>,
    owd_max: Time,
    owd_max_rsv: Time,
    inference: Time,
    last_eci: Option<Time>,
    /// ECIs and how many of them fell within the inference time (cwnd = 1 segment).
    pub ecis: u64,
    pub ecis_within_inference: u64,
}

impl TcpLp {
    pub fn new(mss: u64, hystart: Hystart, p: TcpLpParams) -> TcpLp {
        TcpLp {
            p,
            reno: Reno::new(mss, hystart),
            sowd: None,
            owd_min: None,
            owd_max: 0,
            owd_max_rsv: 0,
            inference: 0,
            last_eci: None,
            ecis: 0,
            ecis_within_inference: 0,
        }
    }

    fn sample(&mut self, d: Time) {
        self.owd_min = Some(self.owd_min.map_or(d, |m| m.min(d)));
        if d > self.owd_max {
            if d > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 {
                    d
                } else {
                    self.owd_max_rsv
                };
                self.owd_max_rsv = d;
            } else {
                self.owd_max = d;
            }
        }
        let g = self.p.gamma;
        self.sowd = Some(self.sowd.map_or(d as f64, |s| (1.0 - g) * s + g * d as f64));
    }

    fn within_inference(&self, now: Time) -> bool {
        self.last_eci.is_some_and(|t| now - t < self.inference)
    }
}

impl CongestionControl for TcpLp {
    fn name(&self) -> &'static str {
        "tcp_lp"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if ack.acked_bytes > 0 {
            if let Some(d) = ack.owd {
                self.sample(d + self.p.clock_offset.0);
            }
            if let Some(r) = ack.rtt {
                self.inference = (self.p.inference_rtts * r as f64) as Time;
            }
            if let (Some(sowd), Some(min)) = (self.sowd, self.owd_min) {
                let thr = min as f64 + self.p.threshold * self.owd_max.saturating_sub(min) as f64;
                if sowd >= thr {
                    if self.p.bounds_reset {
                        self.owd_min = Some(sowd as Time);
                        self.owd_max = (2.0 * sowd) as Time;
                        self.owd_max_rsv = self.owd_max;
                    }
                    self.ecis += 1;
                    if self.within_inference(ack.now) {
                        self.ecis_within_inference += 1;
                        st.cwnd = st.mss;
                    } else {
                        st.cwnd = (st.cwnd / 2).max(st.mss);
                    }
                    self.last_eci = Some(ack.now);
                    return;
                }
            }
        }
        if !self.within_inference(ack.now) {
            self.reno.on_ack(ack, st);
        }
    }

    fn on_congestion_event(&mut self, now: Time, kind: CongestionKind, st: &mut CcState) {
        self.reno.on_congestion_event(now, kind, st);
    }

    fn on_rto(&mut self, now: Time, first: bool, st: &mut CcState) {
        self.reno.on_rto(now, first, st);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{MS, SEC};

    const MSS: u64 = 1000;

    fn st(cwnd: u64) -> CcState {
        super::super::test_state(cwnd, 5 * MSS, cwnd)
    }

    fn ack(now: Time, owd: Time, rtt: Time) -> AckSample {
        AckSample {
            now,
            acked_bytes: MSS,
            owd: Some(owd),
            rtt: Some(rtt),
            ..Default::default()
        }
    }

    /// A flow that has seen one-way delays in [10 ms, 110 ms] and smoothed them to 20 ms.
    fn seasoned() -> TcpLp {
        let mut lp = TcpLp::new(MSS, Hystart::Off, TcpLpParams::default());
        lp.owd_min = Some(10 * MS);
        lp.owd_max = 110 * MS;
        lp.owd_max_rsv = 110 * MS;
        lp.sowd = Some(20.0 * MS as f64);
        lp
    }

    #[test]
    fn the_threshold_is_fifteen_percent_of_the_observed_range() {
        // algorithms.md 14: d_min = 10 ms, d_max = 110 ms -> ECI when sowd > 25 ms.
        let mut lp = seasoned();
        let mut s = st(20 * MSS);
        // sowd = 7/8 x 20 + 1/8 x 30 = 21.25 ms, then 7/8 x 21.25 + 1/8 x 50 = 24.84 ms: below.
        lp.on_ack(&ack(0, 30 * MS, 40 * MS), &mut s);
        lp.on_ack(&ack(MS, 50 * MS, 40 * MS), &mut s);
        assert_eq!(lp.ecis, 0);
        // 7/8 x 24.84 + 1/8 x 60 = 29.24 ms > 25 ms: an ECI halves the window.
        let w = s.cwnd;
        lp.on_ack(&ack(2 * MS, 60 * MS, 40 * MS), &mut s);
        assert_eq!((lp.ecis, s.cwnd), (1, w / 2));
        // Bounds restart from sowd (min = sowd, max = 2 sowd).
        let sowd = lp.sowd.unwrap();
        assert!((sowd - 29.24e6).abs() < 0.01e6, "{sowd}");
        assert_eq!(
            (lp.owd_min, lp.owd_max),
            (Some(sowd as Time), (2.0 * sowd) as Time)
        );
    }

    #[test]
    fn the_largest_delay_is_held_in_reserve_until_a_second_one_confirms_the_range() {
        let mut lp = seasoned();
        lp.sample(300 * MS); // above the reserve: the reserve becomes the maximum, 300 is held
        assert_eq!((lp.owd_max, lp.owd_max_rsv), (110 * MS, 300 * MS));
        lp.sample(200 * MS); // above the maximum, below the reserve: the new maximum
        assert_eq!((lp.owd_max, lp.owd_max_rsv), (200 * MS, 300 * MS));
        // Linux's first sample: sowd = min = max, not below the threshold: an indication.
        let mut fresh = TcpLp::new(MSS, Hystart::Off, TcpLpParams::default());
        let mut s = st(10 * MSS);
        fresh.on_ack(&ack(0, 10 * MS, 40 * MS), &mut s);
        assert_eq!((fresh.ecis, s.cwnd), (1, 5 * MSS));
    }

    #[test]
    fn a_second_indication_within_the_inference_time_leaves_one_segment() {
        let mut lp = seasoned();
        let mut s = st(20 * MSS);
        lp.on_ack(&ack(0, 200 * MS, 40 * MS), &mut s); // sowd 42.5 ms > 25: ECI, halve
        assert_eq!((lp.ecis, s.cwnd), (1, 10 * MSS));
        // Bounds restarted at [42.5, 85] ms. Within 3 x 40 ms: a sample at sowd keeps it below
        // the threshold and the window does not grow; the next ECI leaves one segment.
        lp.on_ack(&ack(50 * MS, 42_500_000, 40 * MS), &mut s);
        assert_eq!((lp.ecis, s.cwnd), (1, 10 * MSS));
        lp.on_ack(&ack(60 * MS, 1000 * MS, 40 * MS), &mut s);
        assert_eq!((lp.ecis_within_inference, s.cwnd), (1, MSS));
        // 120 ms after that ECI, without another: Reno grows again (slow start below ssthresh).
        lp.owd_min = Some(0);
        lp.owd_max = 100 * SEC;
        lp.on_ack(
            &AckSample {
                now: 181 * MS,
                acked_bytes: MSS,
                ..Default::default()
            },
            &mut s,
        );
        assert_eq!(s.cwnd, 2 * MSS);
    }
}
