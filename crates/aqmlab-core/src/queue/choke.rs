//! CHOKe (Pan, Prabhakar & Psounis, INFOCOM 2000; Linux sch_choke), docs/disciplines.md 12,
//! with one drop candidate (m = 1, as Linux).
//!
//! RED machinery from [`super::red`] (queue counted in packets, as Linux choke; defaults: automatic
//! thresholds as RED, max_p 0.02, w_q 0.002, no gentle, no wait — Linux's uniformised marking).
//! On each arrival avg is updated; if avg > min_th, one queued packet is picked uniformly at random
//! and, if it belongs to the arrival's flow (same flow key), both are dropped (`Early`). Otherwise
//! RED decides (ECN marks instead of early drops when enabled; forced drops above max_th drop).
//! The queue is a ring with holes, as Linux: a matched victim leaves a hole that head/tail skip; a
//! pick that lands on a hole is retried up to 3 times, then the head is used.

use super::red::{ByteMode, Preset, RedConfig, RedCounts, RedParams, RedVars};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{read, written, Group};
use crate::rng::Rng;
use crate::units::{Limit, Time};
use serde_json::Value;
use std::collections::VecDeque;

pub struct Choke {
    ring: VecDeque<Option<PktId>>,
    packets: u64,
    bytes: u64,
    limit: Limit,
    params: RedParams,
    vars: RedVars,
    rng: Rng,
    matched: u64,
    counts: RedCounts,
}

impl Choke {
    fn trim(&mut self) {
        while let Some(None) = self.ring.front() {
            self.ring.pop_front();
        }
        while let Some(None) = self.ring.back() {
            self.ring.pop_back();
        }
    }

    /// A uniformly random queued packet's index (retrying holes up to 3 times, then the head).
    fn pick(&mut self) -> Option<usize> {
        if self.ring.is_empty() {
            return None;
        }
        for _ in 0..=3 {
            let i = self.rng.below(self.ring.len() as u64) as usize;
            if self.ring[i].is_some() {
                return Some(i);
            }
        }
        Some(0)
    }
}

impl Qdisc for Choke {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        let size = ctx.size(id);
        self.vars.update_avg(&self.params, self.packets as f64, now);
        if self.vars.avg > self.params.min_th {
            if let Some(i) = self.pick() {
                let victim = self.ring[i].expect("pick returns a packet");
                if ctx.hash_key(victim) == ctx.hash_key(id) {
                    self.ring[i] = None;
                    self.packets -= 1;
                    self.bytes -= ctx.size(victim) as u64;
                    self.trim();
                    self.matched += 2;
                    ctx.drop_packet(victim, DropReason::Early);
                    ctx.drop_packet(id, DropReason::Early);
                    if self.packets == 0 {
                        self.vars.set_idle(now);
                    }
                    return;
                }
            }
        }
        let decision = self.vars.decide(&self.params, size, self.packets, &mut self.rng);
        if !self.counts.apply(decision, self.params.ecn, id, ctx) {
            return;
        }
        if super::util::over_limit(self.limit, self.packets + 1, self.bytes + size as u64) {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        self.packets += 1;
        self.bytes += size as u64;
        self.ring.push_back(Some(id));
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let id = self.ring.pop_front()??;
        self.trim();
        self.packets -= 1;
        self.bytes -= ctx.size(id) as u64;
        if self.packets == 0 {
            self.vars.set_idle(now);
        }
        Some(id)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.packets
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("avg", self.vars.avg),
            ("max_p", self.vars.max_p),
            ("matched_drops", self.matched as f64),
            ("early_drops", self.counts.early as f64),
            ("forced_drops", self.counts.forced as f64),
            ("ecn_marks", self.counts.marks as f64),
        ]
    }
}

fn build(params: &Value, link: &LinkInfo, rng: Rng) -> Built<Choke> {
    let mut cfg = read(params, RedConfig::default(), link)?;
    if cfg.bytes.is_some_and(ByteMode::counts_bytes) {
        return Err("bytes: choke counts its queue in packets".into());
    }
    let (p, limit) = cfg.resolve(Preset::Choke, link, false)?;
    let q = Choke {
        ring: VecDeque::new(),
        packets: 0,
        bytes: 0,
        limit,
        vars: RedVars::new(&p),
        params: p,
        rng,
        matched: 0,
        counts: RedCounts::default(),
    };
    Ok((q, written(&cfg)))
}

pub static INFO: [QdiscInfo<Choke>; 1] = [QdiscInfo {
    name: "choke",
    summary: "CHOKe: RED plus dropping an arrival together with a random queued packet of the same flow",
    reference: "Pan, Prabhakar & Psounis, INFOCOM 2000; Linux sch_choke",
    params: &[Group::of::<RedConfig>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::red;
    use crate::queue::testutil::Harness;
    use serde_json::json;

    fn link() -> LinkInfo {
        LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: Some(Limit::Packets(100)),
            wifi: false,
        }
    }

    /// One unresponsive flow at 2x the service rate and five light flows at 0.1x each; returns the
    /// heavy flow's share of departures.
    fn heavy_share<Q: Qdisc>(q: &mut Q) -> f64 {
        let mut h = Harness::new();
        let slot = 1_200_000; // 1500 B at 10 Mb/s
        let mut dep = [0u64; 2];
        for k in 0..200_000u64 {
            let t = k * slot;
            h.enqueue(q, 0, 1500, Ecn::NotEct, t);
            h.enqueue(q, 0, 1500, Ecn::NotEct, t + slot / 2);
            if k % 10 < 5 {
                h.enqueue(q, 1 + (k % 10) as u32, 1500, Ecn::NotEct, t + slot / 3);
            }
            if let Some(id) = h.dequeue(q, t + slot - 1) {
                dep[(h.pool.get(id).flow != 0) as usize] += 1;
                h.pool.release(id);
            }
            for (d, _) in h.drops.drain(..) {
                h.pool.release(d);
            }
        }
        dep[0] as f64 / (dep[0] + dep[1]) as f64
    }

    #[test]
    fn choke_throttles_unresponsive_flow() {
        // Arrival share of the heavy flow: 2 / 2.5 = 80 %.
        let params = json!({"min_th": 5, "max_th": 30});
        let mut c = build(&params, &link(), Rng::from_seed(2)).unwrap().0;
        let choke = heavy_share(&mut c);
        let mut r = (red::INFO[0].build)(
            &json!({"min_th": 5, "max_th": 30, "max_p": 0.02, "w_q": 0.002, "gentle": false, "wait": false}),
            &link(),
            Rng::from_seed(2),
        )
        .unwrap()
        .0;
        let red = heavy_share(&mut r);
        assert!(red > 0.75, "red {red}");
        assert!(choke < 0.6, "choke {choke}");
        assert!(c.matched > 0);
    }

    #[test]
    fn below_min_th_admits_and_holes_are_skipped() {
        let mut c = build(&json!({"min_th": 5, "max_th": 15}), &link(), Rng::from_seed(2))
            .unwrap()
            .0;
        let mut h = Harness::new();
        let a = h.enqueue(&mut c, 1, 1000, Ecn::NotEct, 0);
        let b = h.enqueue(&mut c, 2, 1000, Ecn::NotEct, 0);
        assert!(h.drops.is_empty());
        // Punch a hole by hand and check dequeue skips it.
        c.ring.insert(1, None);
        assert_eq!(h.dequeue(&mut c, 1), Some(a));
        assert_eq!(h.dequeue(&mut c, 1), Some(b));
        assert_eq!(h.dequeue(&mut c, 1), None);
        assert_eq!(c.backlog_packets(), 0);
    }
}
