//! FQ-CoDel (RFC 8290 with the Linux sch_fq_codel details; docs/disciplines.md 5) and
//! `fq_nocodel` (the same scheduler with CoDel disabled: a registry entry of this file, not a copy).
//!
//! * Scheduler: [`super::fq_sched::FqSched`] (new/old lists, Linux deficits, multiply-shift bucket of a
//!   seeded hash). Quantum defaults to the link MTU (1500 IP bytes where Linux uses 1514).
//! * Per-flow CoDel: [`super::codel::CodelVars`], variant `linux` by default (strict first-above
//!   test, Newton step, RFC count recall); the MTU guard sees the qdisc-wide backlog, as Linux
//!   (`guard_scope = "qdisc"`), or each flow's own backlog (`"flow"`, as ns-3's FqCoDelQueueDisc).
//!   ECN on by default.
//! * Overflow (packets > limit or memory > memory_limit): fat-flow batch drop from the head of the
//!   flow with the largest byte backlog (first maximum in index order) until `drop_batch` packets
//!   or half of its bytes are gone (at least one), and that flow's CoDel count grows by the number
//!   dropped. The arrival was enqueued first.
//! * Memory: Linux compares skb->truesize; we model it as packet size + 576 B fixed overhead
//!   ([`MEMORY_OVERHEAD`], roughly sk_buff + skb_shared_info), a stated approximation.

use super::codel::{CodelParams, CodelStats, CodelVars, Variant};
use super::fq_sched::{FqSched, FqSettings};
use super::util::merge;
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_range, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bytes of modelled buffer overhead per queued packet (truesize = size + this).
pub const MEMORY_OVERHEAD: u64 = 576;

pub struct FqCodel {
    sched: FqSched<CodelVars>,
    params: CodelParams,
    stats: CodelStats,
    codel_on: bool,
    limit: u64,
    memory_limit: u64,
    memory: u64,
    drop_batch: u32,
    fat_batches: u64,
    fat_drops: u64,
}

impl FqCodel {
    fn fat_flow_drop(&mut self, ctx: &mut QueueCtx) {
        // Linear scan, first maximum wins (Linux).
        let mut best = 0;
        let mut best_bytes = 0;
        for (i, f) in self.sched.flows.iter().enumerate() {
            if f.fq.bytes() > best_bytes {
                best = i;
                best_bytes = f.fq.bytes();
            }
        }
        let threshold = best_bytes / 2;
        let mut n = 0u32;
        let mut len = 0u64;
        while n < self.drop_batch && len < threshold {
            let Some(id) = self.sched.pop_head(best, ctx) else {
                break;
            };
            let s = ctx.size(id) as u64;
            len += s;
            self.memory -= s + MEMORY_OVERHEAD;
            ctx.drop_packet(id, DropReason::FatFlow);
            n += 1;
        }
        self.sched.flows[best].aqm.add_count(n);
        self.fat_batches += 1;
        self.fat_drops += n as u64;
    }
}

impl Qdisc for FqCodel {
    fn flow_queues(&self) -> bool {
        true
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        let f = self.sched.classify(ctx.hash_key(id));
        let size = ctx.size(id);
        self.sched.push(f, id, size);
        self.memory += size as u64 + MEMORY_OVERHEAD;
        if self.sched.tot.packets > self.limit || self.memory > self.memory_limit {
            self.fat_flow_drop(ctx);
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let (params, stats, codel_on) = (&self.params, &mut self.stats, self.codel_on);
        let before = self.sched.tot;
        let r = self.sched.dequeue(ctx, now, |v, src, ctx, now| {
            if codel_on {
                v.dequeue(params, stats, src, ctx, now)
            } else {
                src.pop_head(ctx)
            }
        });
        // Memory falls by what left: the delivered packet and any CoDel drops.
        let gone_pkts = before.packets - self.sched.tot.packets;
        let gone_bytes = before.bytes - self.sched.tot.bytes;
        self.memory -= gone_bytes + gone_pkts * MEMORY_OVERHEAD;
        r
    }

    fn backlog_bytes(&self) -> u64 {
        self.sched.tot.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.sched.tot.packets
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let max_count = self.sched.flows.iter().map(|f| f.aqm.count()).max().unwrap_or(0);
        vec![
            ("new_flow_count", self.sched.new_flow_count as f64),
            ("active_flows", self.sched.active_count() as f64),
            ("codel_drops", self.stats.drops as f64),
            ("codel_marks", self.stats.marks as f64),
            ("ce_marks", self.stats.ce_marks as f64),
            ("fat_flow_batches", self.fat_batches as f64),
            ("fat_flow_drops", self.fat_drops as f64),
            ("max_codel_count", max_count as f64),
            ("memory_bytes", self.memory as f64),
        ]
    }
}

/// fq_codel's overflow handling.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Overflow {
    /// max packets dropped from the fattest flow per overflow; default 64
    drop_batch: u32,
}

impl Params<LinkInfo> for Overflow {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_range("drop_batch", self.drop_batch, 1, 1 << 16)
    }
}

/// The backlog CoDel's one-MTU guard looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Scope {
    /// the whole qdisc's (Linux)
    Qdisc,
    /// the flow's own (ns-3 FqCoDelQueueDisc)
    Flow,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GuardScope {
    /// backlog CoDel's one-MTU guard looks at: qdisc (Linux, default) or flow (ns-3 FqCoDelQueueDisc)
    guard_scope: Scope,
}

impl Params<LinkInfo> for GuardScope {}

fn build(params: &Value, link: &LinkInfo, mut rng: Rng, codel_on: bool) -> Built<FqCodel> {
    let fs = read(params, FqSettings::defaults(link), link)?;
    let overflow = read(params, Overflow { drop_batch: 64 }, link)?;
    let scope = read(
        params,
        GuardScope {
            guard_scope: Scope::Qdisc,
        },
        link,
    )?;
    let p = read(
        params,
        CodelParams {
            ecn: true,
            ..CodelParams::variant(Variant::Linux, link.mtu)
        },
        link,
    )?;
    let mut sched = FqSched::new(
        fs.flows as usize,
        fs.quantum as u32,
        rng.next_u64(),
        CodelVars::default,
    );
    sched.per_flow_guard = scope.guard_scope == Scope::Flow;
    let mut res = merge(written(&fs), written(&overflow));
    if codel_on {
        // fq_nocodel declares neither the CoDel keys nor the guard's scope (see INFO)
        res = merge(res, merge(written(&scope), written(&p)));
    }
    let q = FqCodel {
        sched,
        stats: CodelStats::new(&p),
        params: p,
        codel_on,
        limit: fs.limit,
        memory_limit: fs.memory_limit,
        memory: 0,
        drop_batch: overflow.drop_batch,
        fat_batches: 0,
        fat_drops: 0,
    };
    Ok((q, res))
}

pub static INFO: [QdiscInfo<FqCodel>; 2] = [
    QdiscInfo {
        name: "fq_codel",
        summary: "flow queueing (DRR over hashed flows, sparse-flow priority) with CoDel per flow",
        reference: "RFC 8290; Linux sch_fq_codel",
        params: &[
            Group::of::<FqSettings>(),
            Group::of::<Overflow>(),
            Group::of::<GuardScope>(),
            Group::of::<CodelParams>(),
        ],
        build: |p, l, r| build(p, l, r, true),
    },
    QdiscInfo {
        name: "fq_nocodel",
        summary: "the fq_codel scheduler without CoDel (fat-flow drop on overflow only)",
        reference: "Linux sch_fq_codel with CoDel disabled",
        params: &[Group::of::<FqSettings>(), Group::of::<Overflow>()],
        build: |p, l, r| build(p, l, r, false),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use crate::units::{tx_time, MS};
    use serde_json::json;

    fn make(p: Value, codel: bool) -> FqCodel {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(3), codel).unwrap().0
    }

    /// Two flow ids (scenario flows, direction Down) that land in different buckets.
    fn distinct_flows(q: &FqCodel, n: usize) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        let mut used = Vec::new();
        for f in 0..1000u32 {
            let b = q.sched.classify(u64::from((f << 1) | 1));
            if !used.contains(&b) {
                used.push(b);
                out.push(f);
                if out.len() == n {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn defaults_resolved() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let (_, r) = build(&json!({}), &link, Rng::from_seed(3), true).unwrap();
        assert_eq!(r["limit"], "10240p");
        assert_eq!(r["flows"], 1024);
        assert_eq!(r["ecn"], true);
        assert_eq!(r["variant"], "linux");
        assert_eq!(r["memory_limit"], format!("{}B", 32 << 20));
        // a variant presets CoDel's own knobs; ECN stays fq_codel's default (on, as Linux
        // sch_fq_codel), which no CoDel variant carries
        let (_, r) = build(&json!({"variant": "rfc"}), &link, Rng::from_seed(3), true).unwrap();
        assert_eq!(
            (r["ecn"].as_bool(), r["strict"].as_bool()),
            (Some(true), Some(false))
        );
        let (_, r) = build(
            &json!({"variant": "rfc", "ecn": false}),
            &link,
            Rng::from_seed(3),
            true,
        )
        .unwrap();
        assert_eq!(r["ecn"], false);
        // fq_nocodel declares no CoDel key
        let e = INFO[1].checked(&json!({"target": "5ms"}), &link, Rng::from_seed(3));
        assert!(e.is_err_and(|e| e.starts_with("target: unknown parameter of fq_nocodel")));
        assert!(build(&json!({"flows": 0}), &link, Rng::from_seed(3), true).is_err());
    }

    /// 20 flows each keeping exactly one 1500 B packet queued on a 10 Mb/s link: every packet
    /// waits 20 x 1.2 ms = 24 ms (> target) for two seconds. The Linux guard (qdisc backlog
    /// 28.5 KB after a removal > one MTU) lets CoDel drop; the ns-3 per-flow guard (the flow's
    /// own backlog 0 after the removal) never drops.
    fn drops_with_one_packet_per_flow(scope: &str) -> usize {
        let mut q = make(json!({"guard_scope": scope, "ecn": false}), true);
        let flows = distinct_flows(&q, 20);
        let mut h = Harness::new();
        for &f in &flows {
            h.enqueue(&mut q, f, 1500, Ecn::NotEct, 0);
        }
        let slot = tx_time(1500, 10_000_000);
        let mut now = 0;
        while now < 2000 * MS {
            if let Some(id) = h.dequeue(&mut q, now) {
                let f = h.pool.get(id).flow;
                h.enqueue(&mut q, f, 1500, Ecn::NotEct, now);
            }
            now += slot;
        }
        h.drops.len()
    }

    #[test]
    fn mtu_guard_scope_qdisc_vs_flow() {
        assert!(drops_with_one_packet_per_flow("qdisc") > 0);
        assert_eq!(drops_with_one_packet_per_flow("flow"), 0);
    }

    #[test]
    fn sparse_flow_is_served_before_bulk() {
        let mut q = make(json!({}), true);
        let f = distinct_flows(&q, 2);
        let mut h = Harness::new();
        for _ in 0..50 {
            h.enqueue(&mut q, f[0], 1500, Ecn::NotEct, 0);
        }
        // Serve a few bulk packets (bulk flow exhausts its quantum, moves to the old list).
        for k in 0..3 {
            h.dequeue(&mut q, k * MS);
        }
        let ping = h.enqueue(&mut q, f[1], 100, Ecn::NotEct, 3 * MS);
        assert_eq!(h.dequeue(&mut q, 3 * MS), Some(ping));
        // The bulk flow continues right after.
        let next = h.dequeue(&mut q, 3 * MS).unwrap();
        assert_eq!(h.pool.get(next).flow, f[0]);
        // A new flow sending more than a quantum loses new-flow status after one quantum: with
        // quantum 1500, its first 1500 B packet goes first, the second waits behind the bulk flow.
        let q0 = q.sched.classify(u64::from((f[1] << 1) | 1));
        while q.sched.flows[q0].fq.is_empty() && h.dequeue(&mut q, 5 * MS).is_some() {
            if q.sched.active().all(|x| x != q0) {
                break;
            }
        }
        let a = h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 6 * MS);
        let b = h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 6 * MS);
        assert!(q.sched.is_new(q0));
        assert_eq!(h.dequeue(&mut q, 6 * MS), Some(a));
        h.dequeue(&mut q, 6 * MS);
        assert!(!q.sched.is_new(q0) && q.sched.active().any(|x| x == q0));
        let _ = b;
    }

    #[test]
    fn byte_fairness_with_mixed_sizes() {
        let mut q = make(json!({"ecn": false, "target": "1s", "interval": "10s"}), true);
        let f = distinct_flows(&q, 2);
        let mut h = Harness::new();
        let mut bytes = [0u64; 2];
        for _ in 0..200 {
            h.enqueue(&mut q, f[0], 1500, Ecn::NotEct, 0);
            for _ in 0..3 {
                h.enqueue(&mut q, f[1], 500, Ecn::NotEct, 0);
            }
        }
        for _ in 0..400 {
            let id = h.dequeue(&mut q, MS).unwrap();
            let p = h.pool.get(id);
            bytes[(p.flow == f[1]) as usize] += p.size as u64;
        }
        let diff = bytes[0].abs_diff(bytes[1]);
        assert!(diff <= 1500, "{bytes:?}");
    }

    #[test]
    fn fat_flow_batch_drop() {
        // Half the bytes first: 91 packets of 1500 B -> drops until >= 68250 B = 46 packets.
        let mut q = make(json!({"limit": "100p"}), true);
        let f = distinct_flows(&q, 2);
        let mut h = Harness::new();
        for _ in 0..10 {
            h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 0);
        }
        let fat: Vec<_> = (0..91)
            .map(|_| h.enqueue(&mut q, f[0], 1500, Ecn::NotEct, 0))
            .collect();
        assert_eq!(h.drops.len(), 46);
        assert!(h
            .drops
            .iter()
            .zip(&fat)
            .all(|(&(d, r), &id)| d == id && r == DropReason::FatFlow));
        let b = q.sched.classify(u64::from((f[0] << 1) | 1));
        assert_eq!(q.sched.flows[b].aqm.count(), 46);
        assert_eq!(q.backlog_packets(), 55);
        // The 64-packet batch bound: 200 packets in one flow, limit 200.
        let mut q = make(json!({"limit": "200p"}), true);
        let mut h = Harness::new();
        for _ in 0..201 {
            h.enqueue(&mut q, f[0], 1000, Ecn::NotEct, 0);
        }
        assert_eq!(h.drops.len(), 64);
        assert_eq!(q.backlog_packets(), 137);
    }

    #[test]
    fn memory_limit_triggers_fat_flow_drop() {
        let mut q = make(json!({"memory_limit": "20000B"}), true);
        let mut h = Harness::new();
        for _ in 0..10 {
            h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
        }
        // 9 x 2076 = 18684 <= 20000; the 10th exceeds it.
        assert!(!h.drops.is_empty());
        assert!(q.memory <= 20_000);
    }

    /// A lone bulk flow at 2x the link rate: CoDel marks ECT packets (no drops) with ECN on,
    /// drops (head) without; fq_nocodel never drops below the limit.
    #[test]
    fn lone_flow_codel_and_nocodel() {
        for (params, codel, ecn) in [
            (json!({}), true, Ecn::Ect0),
            (json!({"ecn": false}), true, Ecn::NotEct),
            (json!({}), false, Ecn::NotEct),
        ] {
            let mut q = make(params, codel);
            let mut h = Harness::new();
            let pkt = tx_time(1500, 10_000_000);
            for k in 0..6000u64 {
                let t = k * pkt / 2;
                h.enqueue(&mut q, 0, 1500, ecn, t);
                if k.is_multiple_of(2) {
                    h.dequeue(&mut q, t);
                }
            }
            match (codel, ecn) {
                (true, Ecn::Ect0) => assert!(h.drops.is_empty() && !h.marks.is_empty()),
                (true, _) => assert!(!h.drops.is_empty() && h.drops.iter().all(|d| d.1 == DropReason::Head)),
                _ => assert!(h.drops.is_empty() && h.marks.is_empty()),
            }
        }
    }
}
