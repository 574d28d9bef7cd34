//! Retransmission timer estimator: RFC 6298, Linux's (`linux_rto`), or ns-2's tick-based rules
//! (`rto_tick` > 0).
//!
//! RFC 6298 with a configurable floor: RTO = max(min_rto, SRTT + max(G, 4*RTTVAR)),
//! G = 1 ms (clock granularity), capped at [`MAX_RTO`] = 60 s (RFC 6298 2.5 allows a cap of at
//! least 60 s). `min_rto` is thus the floor of the computed RTO (the RFC floor is 1 s; aqmlab's
//! default 200 ms is Linux's TCP_RTO_MIN applied as a floor). Before the first sample RTO =
//! initial_rto. Each expiry
//! doubles RTO (up to the cap) and the backed-off value is kept until a new sample arrives.
//! Integer arithmetic in ns: RTTVAR = R/2 on the first sample, then
//! RTTVAR = (3*RTTVAR + |SRTT - R|)/4 and SRTT = (7*SRTT + R)/8, each rounded down.
//! Karn's rule: samples come from the TCP timestamp echo, which names the exact transmission
//! that is acknowledged (RFC 7323 4.1 / RFC 6298 3), so retransmitted segments give valid
//! samples; no sample is ever taken from a segment's original send time.
//!
//! Linux rules (tcp_input.c tcp_rtt_estimator and tcp_set_rto, as since 2.6; in ns here where
//! 3.14 counted jiffies and 3.15+ counts us): SRTT x 8 and MDEV x 4 as Jacobson's, except that
//! a sample below SRTT moves MDEV by a quarter of the usual gain (Linux's "alpha*beta" answer to
//! Eifel); RTTVAR = the largest MDEV seen in the current window of data (mdev_max), at least
//! `min_rto`, and when snd_una passes the window's end (rtt_seq = snd_nxt at its start) RTTVAR
//! falls a quarter of the way to that maximum and a new window starts with mdev_max = min_rto.
//! RTO = SRTT + RTTVAR, so about SRTT + 200 ms on a steady path, where RFC 6298 with a 200 ms
//! floor gives max(200 ms, SRTT + 4 RTTVAR). First sample: SRTT = R, MDEV = R/2, RTTVAR =
//! max(MDEV x 4, min_rto).
//!
//! ns-2 rules (a positive `tick`, ns-2's tcpTick_), from tcp/tcp.cc:
//! * TcpAgent::rtt_update: the sample in ticks is round(R / tick), at least 1 (the timestamp
//!   branch; ns-2 without timestamps times one segment per RTT and truncates with a random
//!   clock offset, which aqmlab does not model); SRTT is kept in ticks with 3 fractional bits
//!   and RTTVAR with 2 (T_SRTT_BITS, T_RTTVAR_BITS): first sample SRTT = R, RTTVAR = R/2,
//!   later delta = R - floor(SRTT), SRTT += delta/8, RTTVAR += (|delta| - floor(RTTVAR))/4, in
//!   those fixed-point units; RTO base = floor(SRTT + 4*RTTVAR) ticks (rttvar_exp_ 2).
//! * TcpAgent::rtt_timeout: timeout = max(base, minrto_) * backoff, capped at maxrto_, at least
//!   2 ticks.
//! * TcpAgent::rtt_backoff: once the backoff factor exceeds 8, SRTT is discarded (the next
//!   sample counts as a first sample).

use crate::units::{Time, MS, SEC};

pub const MAX_RTO: Time = 60 * SEC;
pub const CLOCK_GRANULARITY: Time = MS;

/// Which estimator computes the RTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtoRules {
    Rfc6298,
    Linux,
    /// ns-2's, with its clock tick (tcpTick_).
    Ns2 {
        tick: Time,
    },
}

/// Linux's estimator state, in ns: SRTT x 8, MDEV x 4, the window's largest MDEV x 4, RTTVAR
/// x 4 (rttvar_us), and the sequence number that ends the current window (rtt_seq).
#[derive(Clone, Debug, Default)]
struct LinuxVar {
    srtt8: u64,
    mdev4: u64,
    mdev_max4: u64,
    rttvar4: u64,
    rtt_seq: u64,
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    rto: Time,
    min_rto: Time,
    max_rto: Time,
    /// ns-2's tcpTick_; `None` = RFC 6298 or Linux.
    tick: Option<Time>,
    /// Linux's rules (`None`: RFC 6298 or ns-2).
    linux: Option<LinuxVar>,
    /// ns-2 fixed point: SRTT in ticks x 8 and RTTVAR in ticks x 4 (0 = no sample yet).
    srtt8: u64,
    rttvar4: u64,
    /// ns-2's t_rtxcur_: the un-backed-off RTO from the last sample (initially initial_rto).
    rtxcur: Time,
    /// Number of consecutive expiries since the last sample.
    backoffs: u32,
}

impl RttEstimator {
    /// The RFC 6298 estimator with the default cap [`MAX_RTO`].
    pub fn new(initial_rto: Time, min_rto: Time) -> RttEstimator {
        RttEstimator::with_rules(initial_rto, min_rto, MAX_RTO, RtoRules::Rfc6298)
    }

    /// An estimator with an explicit cap and the given rules.
    pub fn with_rules(initial_rto: Time, min_rto: Time, max_rto: Time, rules: RtoRules) -> RttEstimator {
        let tick = match rules {
            RtoRules::Ns2 { tick } => Some(tick),
            _ => None,
        };
        let mut e = RttEstimator {
            linux: (rules == RtoRules::Linux).then(LinuxVar::default),
            srtt: None,
            rttvar: 0,
            rto: initial_rto.min(max_rto),
            min_rto,
            max_rto,
            tick,
            srtt8: 0,
            rttvar4: 0,
            rtxcur: initial_rto,
            backoffs: 0,
        };
        if tick.is_some() {
            e.rto = e.ns2_timeout();
        }
        e
    }

    /// ns-2 TcpAgent::rtt_timeout for the current backoff.
    fn ns2_timeout(&self) -> Time {
        let tick = self.tick.expect("ns-2 rules");
        let backed = self
            .rtxcur
            .max(self.min_rto)
            .saturating_mul(1 << self.backoffs.min(32));
        backed.min(self.max_rto).max(2 * tick)
    }

    /// ns-2 TcpAgent::rtt_update.
    fn ns2_sample(&mut self, r: Time, tick: Time) {
        let m = ((r + tick / 2) / tick).max(1);
        if self.srtt8 == 0 {
            self.srtt8 = m << 3;
            self.rttvar4 = m << 1;
        } else {
            let delta = m as i64 - (self.srtt8 >> 3) as i64;
            self.srtt8 = (self.srtt8 as i64 + delta).max(1) as u64;
            let d = delta.abs() - (self.rttvar4 >> 2) as i64;
            self.rttvar4 = (self.rttvar4 as i64 + d).max(1) as u64;
        }
        self.srtt = Some(self.srtt8 * tick / 8);
        self.rttvar = self.rttvar4 * tick / 4;
        self.backoffs = 0;
        self.rtxcur = ((self.rttvar4 * 8 + self.srtt8) >> 3) * tick;
        self.rto = self.ns2_timeout();
    }

    /// The RTO floor.
    pub fn min_rto(&self) -> Time {
        self.min_rto
    }

    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }

    pub fn rttvar(&self) -> Time {
        self.rttvar
    }

    /// The current (possibly backed-off) RTO.
    pub fn rto(&self) -> Time {
        self.rto
    }

    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }

    /// Linux tcp_rtt_estimator and __tcp_set_rto, after an ACK that left `snd_una` with
    /// `snd_nxt` the next new sequence number.
    fn linux_sample(&mut self, r: Time, snd_una: u64, snd_nxt: u64) {
        let min4 = self.min_rto;
        let v = self.linux.as_mut().expect("Linux rules");
        let m = r.max(1);
        if v.srtt8 == 0 {
            v.srtt8 = m << 3;
            v.mdev4 = m << 1;
            v.rttvar4 = v.mdev4.max(min4);
            v.mdev_max4 = v.rttvar4;
            v.rtt_seq = snd_nxt;
        } else {
            let mut err = m as i64 - (v.srtt8 >> 3) as i64;
            v.srtt8 = (v.srtt8 as i64 + err).max(1) as u64;
            if err < 0 {
                err = -err - (v.mdev4 >> 2) as i64;
                if err > 0 {
                    err >>= 3;
                }
            } else {
                err -= (v.mdev4 >> 2) as i64;
            }
            v.mdev4 = (v.mdev4 as i64 + err) as u64;
            if v.mdev4 > v.mdev_max4 {
                v.mdev_max4 = v.mdev4;
                v.rttvar4 = v.rttvar4.max(v.mdev_max4);
            }
            if snd_una > v.rtt_seq {
                if v.mdev_max4 < v.rttvar4 {
                    v.rttvar4 -= (v.rttvar4 - v.mdev_max4) >> 2;
                }
                v.rtt_seq = snd_nxt;
                v.mdev_max4 = min4;
            }
        }
        self.srtt = Some(v.srtt8 >> 3);
        self.rttvar = v.rttvar4 / 4;
        self.rto = ((v.srtt8 >> 3) + v.rttvar4).min(self.max_rto);
        self.backoffs = 0;
    }

    /// Feeds one RTT sample (RFC 6298 2.2 / 2.3; Linux's and ns-2's rules as above) and
    /// recomputes RTO, clearing any backoff. `snd_una` and `snd_nxt` after the ACK that gave
    /// it mark Linux's windows of data.
    pub fn sample(&mut self, r: Time, snd_una: u64, snd_nxt: u64) {
        if let Some(tick) = self.tick {
            return self.ns2_sample(r, tick);
        }
        if self.linux.is_some() {
            return self.linux_sample(r, snd_una, snd_nxt);
        }
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                self.rttvar = (3 * self.rttvar + s.abs_diff(r)) / 4;
                self.srtt = Some((7 * s + r) / 8);
            }
        }
        let s = self.srtt.unwrap_or(r);
        self.rto = (s + CLOCK_GRANULARITY.max(4 * self.rttvar))
            .max(self.min_rto)
            .min(self.max_rto);
        self.backoffs = 0;
    }

    /// Timer expiry: RTO = min(2*RTO, max_rto) (RFC 6298 5.5; ns-2 TcpAgent::rtt_backoff).
    pub fn backoff(&mut self) {
        self.backoffs += 1;
        if self.tick.is_none() {
            self.rto = (self.rto * 2).min(self.max_rto);
            return;
        }
        if self.backoffs > 3 && self.srtt8 != 0 {
            // Backoff factor above 8: ns-2 folds SRTT into RTTVAR and forgets it.
            self.rttvar4 += self.srtt8 >> 3;
            self.srtt8 = 0;
            self.srtt = None;
        }
        self.rto = self.ns2_timeout();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux() -> RttEstimator {
        RttEstimator::with_rules(SEC, 200 * MS, 120 * SEC, RtoRules::Linux)
    }

    #[test]
    fn linux_rto_is_srtt_plus_a_variance_term_of_at_least_rto_min() {
        // Vectors worked by hand from tcp_rtt_estimator / __tcp_set_rto (srtt_us x 8, mdev_us
        // x 4, rttvar_us >= tcp_rto_min), in ms.
        // First sample 100: SRTT 100, MDEV x 4 = 200, RTTVAR = max(200, 200): RTO 300.
        let mut e = linux();
        e.sample(100 * MS, 0, 10);
        assert_eq!(e.rto(), 300 * MS);
        // A steady 100 ms path, one sample per window of data: MDEV decays to 0 but RTTVAR
        // stays at rto_min, so RTO stays SRTT + 200 = 300 ms, where RFC 6298 with a 200 ms
        // floor falls to max(200, 100 + 1 ms) = 200 ms.
        let mut rfc = RttEstimator::new(SEC, 200 * MS);
        rfc.sample(100 * MS, 0, 10);
        for k in 1..40u64 {
            e.sample(100 * MS, 10 * k + 1, 10 * k + 10);
            rfc.sample(100 * MS, 0, 0);
        }
        assert_eq!(e.rto(), 300 * MS);
        assert_eq!(rfc.rto(), 200 * MS);
    }

    #[test]
    fn linux_rto_damps_decreases_and_decays_by_windows() {
        // A sample below SRTT moves MDEV by an eighth of the excess over MDEV/4: 100 then 10 ms
        // (same window): SRTT = 100 - 90/8 = 88.75; |err| - MDEV4/4 = 90 - 50 = 40, >> 3 = 5:
        // MDEV4 = 205 > RTTVAR 200: RTO = 88.75 + 205 = 293.75 ms.
        let mut e = linux();
        e.sample(100 * MS, 0, 10);
        e.sample(10 * MS, 0, 10);
        assert_eq!(e.srtt(), Some(88_750_000));
        assert_eq!(e.rto(), 293_750_000);
        // 100 then 300 (same window): SRTT 125, MDEV4 = 200 + (200 - 50) = 350 = RTTVAR:
        // RTO 475. Then 125 at the window's end: MDEV4 262.5, RTTVAR stays 350 (the window's
        // maximum), RTO 475; 125 at the next window's end: MDEV4 196.875, and RTTVAR falls a
        // quarter of the way to that window's maximum (rto_min 200): 350 - 37.5 = 312.5.
        let mut e = linux();
        e.sample(100 * MS, 0, 10);
        e.sample(300 * MS, 0, 10);
        assert_eq!(e.rto(), 475 * MS);
        e.sample(125 * MS, 11, 20);
        assert_eq!(e.rto(), 475 * MS);
        e.sample(125 * MS, 21, 30);
        assert_eq!(e.rto(), 437_500_000);
        // Expiries double it as RFC 6298's.
        e.backoff();
        assert_eq!(e.rto(), 875 * MS);
    }

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(SEC, 200 * MS);
        assert_eq!(e.rto(), SEC);
        e.sample(100 * MS, 0, 0);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (Some(100 * MS), 50 * MS, 300 * MS)
        );
        e.sample(200 * MS, 0, 0);
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 362.5 ms.
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 362_500_000);
        // Many identical samples: RTTVAR decays, the floor takes over.
        for _ in 0..200 {
            e.sample(10 * MS, 0, 0);
        }
        assert_eq!(e.rto(), 200 * MS);
    }

    #[test]
    fn ns2_tick_arithmetic() {
        // ns-2 tcp.cc rtt_update / rtt_timeout with tcpTick_ 10 ms, minrto_ 200 ms, maxrto_
        // 60 s, rtxcur_init_ 3 s (ns-default.tcl).
        let mut e = RttEstimator::with_rules(3 * SEC, 200 * MS, 60 * SEC, RtoRules::Ns2 { tick: 10 * MS });
        assert_eq!(e.rto(), 3 * SEC);
        // 162 ms -> 16 ticks (16.2 rounded); SRTT 16, RTTVAR 8: RTO = 16 + 32 = 48 ticks.
        e.sample(162 * MS, 0, 0);
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (Some(160 * MS), 80 * MS, 480 * MS)
        );
        // 166 ms -> 17 ticks: delta 1, t_srtt 128 -> 129, RTTVAR term 1 - 8 = -7: t_rttvar 32 -> 25;
        // RTO = (25*8 + 129) >> 3 = 41 ticks (RFC 6298 in ns would give 160.75 + 4*61.25 ms).
        e.sample(166 * MS, 0, 0);
        assert_eq!(e.rto(), 410 * MS);
        // A 1 ms RTT still counts one tick; the floor minrto_ applies before the backoff.
        let mut f = RttEstimator::with_rules(3 * SEC, 200 * MS, 60 * SEC, RtoRules::Ns2 { tick: 10 * MS });
        f.sample(MS, 0, 0);
        assert_eq!(f.rto(), 200 * MS);
        f.backoff();
        assert_eq!(f.rto(), 400 * MS);
        // Tiny minrto: at least two ticks.
        let mut g = RttEstimator::with_rules(3 * SEC, 0, 60 * SEC, RtoRules::Ns2 { tick: 10 * MS });
        g.sample(MS, 0, 0);
        assert_eq!(g.rto(), 30 * MS, "1 + 4*0.5 = 3 ticks");
        // Backoff capped by maxrto_.
        for _ in 0..20 {
            g.backoff();
        }
        assert_eq!(g.rto(), 60 * SEC);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let mut e = RttEstimator::new(SEC, 200 * MS);
        let mut seen = vec![];
        for _ in 0..8 {
            seen.push(e.rto() / SEC);
            e.backoff();
        }
        assert_eq!(seen, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        e.sample(100 * MS, 0, 0);
        assert_eq!(e.rto(), 300 * MS);
        assert_eq!(e.backoffs(), 0);
    }
}
