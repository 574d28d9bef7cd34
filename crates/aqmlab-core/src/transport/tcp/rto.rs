//! Retransmission timer estimator (RFC 6298).
//!
//! Variant: RFC formula with a configurable floor. RTO = max(min_rto, SRTT + max(G, 4*RTTVAR)),
//! G = 1 ms (clock granularity), capped at [`MAX_RTO`] = 60 s (RFC 6298 2.5 allows a cap of at
//! least 60 s). `min_rto` is thus the floor of the computed RTO (the RFC floor is 1 s; aqmlab's
//! default 200 ms is Linux's TCP_RTO_MIN, but applied as a floor rather than Linux's
//! "SRTT + 200 ms" variance clamp). Before the first sample RTO = initial_rto. Each expiry
//! doubles RTO (up to the cap) and the backed-off value is kept until a new sample arrives.
//! Integer arithmetic in ns: RTTVAR = R/2 on the first sample, then
//! RTTVAR = (3*RTTVAR + |SRTT - R|)/4 and SRTT = (7*SRTT + R)/8, each rounded down.
//! Karn's rule: samples come from the TCP timestamp echo, which names the exact transmission
//! that is acknowledged (RFC 7323 4.1 / RFC 6298 3), so retransmitted segments give valid
//! samples; no sample is ever taken from a segment's original send time.

use crate::units::{Time, MS, SEC};

pub const MAX_RTO: Time = 60 * SEC;
pub const CLOCK_GRANULARITY: Time = MS;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    rto: Time,
    min_rto: Time,
    /// Number of consecutive expiries since the last sample.
    backoffs: u32,
}

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            rto: initial_rto.min(MAX_RTO),
            min_rto,
            backoffs: 0,
        }
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

    /// Feeds one RTT sample (RFC 6298 2.2 / 2.3) and recomputes RTO, clearing any backoff.
    pub fn sample(&mut self, r: Time) {
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
            .min(MAX_RTO);
        self.backoffs = 0;
    }

    /// Timer expiry: RTO = min(2*RTO, MAX_RTO) (RFC 6298 5.5).
    pub fn backoff(&mut self) {
        self.rto = (self.rto * 2).min(MAX_RTO);
        self.backoffs += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(SEC, 200 * MS);
        assert_eq!(e.rto(), SEC);
        e.sample(100 * MS);
        // SRTT = 100, RTTVAR = 50, RTO = 100 + 4*50 = 300 ms.
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (Some(100 * MS), 50 * MS, 300 * MS)
        );
        e.sample(200 * MS);
        // RTTVAR = 3/4*50 + 1/4*100 = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5; RTO = 362.5 ms.
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 362_500_000);
        // Many identical samples: RTTVAR decays, the floor takes over.
        for _ in 0..200 {
            e.sample(10 * MS);
        }
        assert_eq!(e.rto(), 200 * MS);
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
        e.sample(100 * MS);
        assert_eq!(e.rto(), 300 * MS);
        assert_eq!(e.backoffs(), 0);
    }
}
