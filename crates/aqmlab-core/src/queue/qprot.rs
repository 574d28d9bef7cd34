//! Queue protection of a low-latency queue, as RFC 9957 (the DOCSIS queue protection algorithm,
//! specified in the DOCSIS 3.1 MULPI spec, Annex P) describes it, its pseudocode functions
//! `pick_bucket`, `fill_bucket` and `qprotect` line by line; checked against CableLabs' ns-3
//! DOCSIS model, which implements Annex P (queue-protection.cc: `PickBucket`,
//! `GetCongestionScore`, `FillBucket`, `QueueProtect`; the same constants and defaults).
//!
//! Each arriving L packet is charged to its flow's bucket: the bucket's expiry time `t_exp`
//! moves on by the packet's congestion volume `prob_native x size` over the aging rate
//! (2^LG_AGING bytes a second, a second taken as 2^30 ns as the RFC does), and the flow's
//! queuing score is how far `t_exp` lies ahead of now (so it decays at one second a second),
//! capped at MAX_QLSCORE. The packet is sanctioned (sent to the classic queue) when the L
//! queue's delay exceeds CRITICALqL and that delay times the score exceeds CRITICALqL x
//! CRITICALqLSCORE. Buckets: 2^BI_SIZE, found from the flow's 32-bit hash (ATTEMPTS tries,
//! BI_SIZE bits each), plus one default bucket shared by flows that find none free (an expired
//! bucket is free). Times in ns (T_RES = 1 ns).

use super::util::flow_hash;
use crate::params::{check_range, check_time};
use crate::units::{as_dur, Dur, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Queue protection's keys (RFC 9957's constants; defaults from its pseudocode).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QprotParams {
    /// queue protection of the L queue (RFC 9957, QPROTECT_ON; MULPI C.2.2.7.17.7); off (dualpi2)
    /// / on (lld)
    pub qprot: bool,
    /// CRITICALqL (MULPI C.2.2.7.17.8, QPLatencyThreshold): the L queue delay above which flows
    /// may be sanctioned; 0 = the ramp's MAXTH
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub critical_ql: Time,
    /// CRITICALqLSCORE (MULPI C.2.2.7.17.9, QPQueuingScoreThreshold): the queuing score
    /// threshold (scaled by qdelay / CRITICALqL); 4ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub critical_score: Time,
    /// LG_AGING (MULPI C.2.2.7.17.10, QPDrainRateExponent): log2 of the aging rate of a score in
    /// bytes/s; 19 (2^19 B/s, 4.2 Mb/s)
    pub lg_aging: u32,
    /// BI_SIZE: bits of a bucket index (2^BI_SIZE buckets + the default one); 5
    pub bi_size: u32,
    /// ATTEMPTS: buckets tried per flow before the default one; 2
    pub attempts: u32,
    /// MAX_QLSCORE: the cap on a score; 5s
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub max_score: Time,
}

impl Default for QprotParams {
    fn default() -> QprotParams {
        QprotParams {
            qprot: false,
            critical_ql: 0,
            critical_score: 4 * MS,
            lg_aging: 19,
            bi_size: 5,
            attempts: 2,
            max_score: 5 * SEC,
        }
    }
}

impl QprotParams {
    pub fn check(&self) -> Result<(), String> {
        check_time("critical_ql", self.critical_ql, 0, 10 * SEC)?;
        check_time("critical_score", self.critical_score, 0, 100 * SEC)?;
        check_range("lg_aging", self.lg_aging, 1, 30)?;
        check_range("bi_size", self.bi_size, 0, 14)?;
        check_range("attempts", self.attempts, 1, 32 / self.bi_size.max(1))?;
        check_time("max_score", self.max_score, 1, 1000 * SEC)?;
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    /// The owning flow's key + 1 (0 = never owned).
    owner: u64,
    /// Expiry time, ns.
    t_exp: i64,
}

/// The state of queue protection: the buckets and the counts of its decisions.
pub struct Qprot {
    p: QprotParams,
    /// CRITICALqL resolved (ns).
    critical_ql: i64,
    buckets: Vec<Bucket>,
    seed: u64,
    pub sanctions: u64,
}

impl Qprot {
    /// `maxth` (ns) is CRITICALqL when `critical_ql` is 0; `seed` salts the flow hash.
    pub fn new(p: QprotParams, maxth: Time, seed: u64) -> Qprot {
        let critical = if p.critical_ql == 0 { maxth } else { p.critical_ql };
        Qprot {
            critical_ql: critical as i64,
            buckets: vec![Bucket::default(); (1usize << p.bi_size) + 1],
            seed,
            sanctions: 0,
            p,
        }
    }

    /// CRITICALqL (ns).
    pub fn critical_ql(&self) -> i64 {
        self.critical_ql
    }

    fn nbuckets(&self) -> usize {
        1 << self.p.bi_size
    }

    /// RFC 9957's pick_bucket: the bucket of flow `key` at `now` (ns).
    pub fn pick_bucket(&mut self, key: u64, now: i64) -> usize {
        let owner = key + 1;
        let n = self.nbuckets();
        let mask = (n - 1) as u32;
        let mut h32 = flow_hash(key, self.seed);
        let mut hsav = n;
        for _ in 0..self.p.attempts {
            let h = (h32 & mask) as usize;
            let b = &mut self.buckets[h];
            if b.owner == owner {
                if b.t_exp <= now {
                    b.t_exp = now;
                }
                return h;
            }
            if hsav == n && b.t_exp <= now {
                hsav = h;
            }
            h32 = h32.checked_shr(self.p.bi_size).unwrap_or(0);
        }
        // Not owned: recycle the first expired bucket tried, else share the default one.
        let b = &mut self.buckets[hsav];
        if hsav != n || b.t_exp <= now {
            b.t_exp = now;
        }
        b.owner = owner;
        hsav
    }

    /// RFC 9957's fill_bucket: charges `size` bytes at native probability `prob_native` and
    /// returns the flow's queuing score (ns): score += prob_native x size / AGING, with AGING
    /// = 2^(LG_AGING - 30) bytes per ns.
    pub fn fill_bucket(&mut self, bucket: usize, size: u32, prob_native: f64, now: i64) -> i64 {
        let per_byte = (1u64 << (30 - self.p.lg_aging)) as f64;
        let b = &mut self.buckets[bucket];
        b.t_exp += (prob_native * size as f64 * per_byte) as i64;
        let max = self.p.max_score as i64;
        if b.t_exp - now > max {
            b.t_exp = now + max;
        }
        b.t_exp - now
    }

    /// RFC 9957's qprotect: true = sanction the packet (to the classic queue). `qdelay` is the
    /// L queue's delay (ns) with the packet in it, `prob_native` the L queue's own marking
    /// probability for it.
    pub fn protect(&mut self, key: u64, size: u32, qdelay: Time, prob_native: f64, now: Time) -> bool {
        let now = now as i64;
        let bucket = self.pick_bucket(key, now);
        let score = self.fill_bucket(bucket, size, prob_native, now);
        let qdelay = qdelay as i64;
        let product = self.critical_ql as i128 * self.p.critical_score as i128;
        let sanction = qdelay > self.critical_ql && qdelay as i128 * score as i128 > product;
        self.sanctions += sanction as u64;
        sanction
    }

    /// The score of flow `key` now without charging it (0 when it owns no bucket).
    pub fn score(&self, key: u64, now: Time) -> i64 {
        self.buckets
            .iter()
            .find(|b| b.owner == key + 1)
            .map_or(0, |b| (b.t_exp - now as i64).max(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qp() -> Qprot {
        Qprot::new(QprotParams::default(), MS, 7)
    }

    /// fill_bucket by hand: with LG_AGING 19 a byte at probability 1 adds 2^(30-19) = 2048 ns.
    #[test]
    fn fill_bucket_vectors() {
        let mut q = qp();
        let now = 10 * SEC as i64;
        let b = q.pick_bucket(3, now);
        // A fresh bucket is reset to now: score 0 before the charge.
        // 1500 B at prob_native 1: 1500 x 2048 = 3,072,000 ns.
        assert_eq!(q.fill_bucket(b, 1500, 1.0, now), 3_072_000);
        // 1000 B at 0.25: 0.25 x 1000 x 2048 = 512,000 ns more.
        assert_eq!(q.fill_bucket(b, 1000, 0.25, now), 3_584_000);
        // 1 ms later the score has aged by 1 ms.
        assert_eq!(q.fill_bucket(b, 1000, 0.0, now + MS as i64), 2_584_000);
        // Once expired, picking the bucket again restarts it at now: score 0.
        let later = now + 10 * MS as i64;
        assert_eq!(q.pick_bucket(3, later), b);
        assert_eq!(q.fill_bucket(b, 100, 0.0, later), 0);
        // MAX_QLSCORE caps it at 5 s: 2000 packets x 3.072 ms = 6.1 s.
        for _ in 0..2000 {
            q.fill_bucket(b, 1500, 1.0, later);
        }
        assert_eq!(q.fill_bucket(b, 0, 0.0, later), 5 * SEC as i64);
    }

    /// qprotect's rule by hand: sanction iff qdelay > CRITICALqL (1 ms) and
    /// qdelay x score > 1 ms x 4 ms.
    #[test]
    fn sanction_rule_vectors() {
        let now = SEC;
        // Score after the charge 3.072 ms (1500 B at 1). qdelay 2 ms: 2 x 3.072 = 6.1 > 4: sanction.
        let mut q = qp();
        assert!(q.protect(1, 1500, 2 * MS, 1.0, now));
        // qdelay 1 ms is not above CRITICALqL, whatever the score.
        let mut q = qp();
        assert!(!q.protect(1, 1500, MS, 1.0, now));
        // qdelay 1.2 ms: 1.2 x 3.072 = 3.69 < 4: no sanction; the next packet (score 6.144 ms)
        // is: 1.2 x 6.144 = 7.4 > 4.
        let mut q = qp();
        assert!(!q.protect(1, 1500, 1_200_000, 1.0, now));
        assert!(q.protect(1, 1500, 1_200_000, 1.0, now));
        // Another flow, with no score of its own (prob_native 0), is not sanctioned by the same
        // queue: 1.2 ms x 0 = 0.
        assert!(!q.protect(2, 1500, 1_200_000, 0.0, now));
        assert_eq!(q.sanctions, 1);
    }

    /// A queuing score built and aged over ten packets, by hand: 1000 B at prob_native 0.5 every
    /// 0.5 ms. With LG_AGING 19 each packet adds 0.5 x 1000 x 2^(30-19) = 1,024,000 ns and the
    /// score ages 500,000 ns between packets, so after the k-th charge it is k x 1,024,000 -
    /// (k - 1) x 500,000: 5,740,000 ns at k = 10. With LG_AGING 20 (2^20 B/s) a packet adds
    /// 512,000 ns: 10 x 512,000 - 9 x 500,000 = 620,000 ns.
    #[test]
    fn score_after_ten_packets_with_aging() {
        for (lg_aging, want) in [(19, 5_740_000), (20, 620_000)] {
            let p = QprotParams {
                lg_aging,
                ..QprotParams::default()
            };
            let mut q = Qprot::new(p, MS, 3);
            let t0 = SEC as i64;
            let mut score = 0;
            for k in 0..10 {
                let now = t0 + k * 500_000;
                let b = q.pick_bucket(42, now);
                score = q.fill_bucket(b, 1000, 0.5, now);
                assert_eq!(score, (k + 1) * (1_024_000 >> (lg_aging - 19)) - k * 500_000);
            }
            assert_eq!(score, want, "LG_AGING {lg_aging}");
        }
    }

    /// The sanction decision at its thresholds (CRITICALqL 1 ms, CRITICALqLSCORE 4 ms, so the
    /// product is 4e12 ns^2), by hand:
    /// * a flow charged 1500 B at probability 1 has 3,072,000 ns of score; 1,072,000 ns later a
    ///   packet at probability 0 finds 2,000,000 ns: with qdelay 2 ms the product is exactly
    ///   4e12, not above it, so it passes; 1 ns earlier the score is 2,000,001 and the product
    ///   4.000002e12: sanctioned.
    /// * qdelay exactly CRITICALqL is not above it: no sanction whatever the score; 1 ns more
    ///   with the same 3,072,000 ns score (product 3.072003072e12 < 4e12) passes too, and the
    ///   next packet (score 6,144,000 ns) at that delay is sanctioned (6.144006144e12 > 4e12).
    #[test]
    fn sanction_at_the_critical_thresholds() {
        let t0 = SEC;
        for (later, sanctioned) in [(1_072_000, false), (1_071_999, true)] {
            let mut q = qp();
            assert!(!q.protect(5, 1500, 0, 1.0, t0));
            assert_eq!(q.score(5, t0), 3_072_000);
            assert_eq!(q.protect(5, 0, 2 * MS, 0.0, t0 + later), sanctioned, "{later}");
        }
        let mut q = qp();
        assert!(!q.protect(6, 1500, MS, 1.0, t0));
        assert!(!q.protect(6, 1500, MS, 1.0, t0));
        let mut q = qp();
        assert!(!q.protect(7, 1500, MS + 1, 1.0, t0));
        assert!(q.protect(7, 1500, MS + 1, 1.0, t0));
        assert_eq!(q.sanctions, 1);
    }

    /// Buckets: a flow keeps its bucket; with one bucket (BI_SIZE 0) and it taken, a second flow
    /// shares the default bucket until the first expires.
    #[test]
    fn buckets_and_default() {
        let p = QprotParams {
            bi_size: 0,
            attempts: 1,
            ..QprotParams::default()
        };
        let mut q = Qprot::new(p, MS, 1);
        let now = SEC as i64;
        assert_eq!(q.pick_bucket(10, now), 0);
        q.fill_bucket(0, 1500, 1.0, now);
        assert_eq!(q.pick_bucket(10, now), 0);
        // Bucket 0 is live (t_exp ahead of now): flow 11 gets the default bucket (index 1).
        assert_eq!(q.pick_bucket(11, now), 1);
        // After flow 10's score has expired, flow 11 recycles bucket 0.
        assert_eq!(q.pick_bucket(11, now + 4 * MS as i64), 0);
    }
}
