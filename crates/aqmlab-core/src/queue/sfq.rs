//! Stochastic Fairness Queueing in its Linux sch_sfq form (McKenney 1990; docs/disciplines.md 14).
//!
//! * Buckets: `divisor` (power of two) hash buckets of a seeded flow hash (`hash & (divisor-1)`);
//!   `flows` slots are attached to buckets on demand (an arrival whose bucket has no slot and finds
//!   no free slot is dropped).
//! * Per-slot `depth` limit (tail drop of the arrival, or with `headdrop` the slot's head); total
//!   `limit` (default 127, capped at depth x flows): on overflow one packet is dropped from the
//!   longest slot (tail, or head with headdrop; `FatFlow`); when every slot holds one packet the
//!   slot after the ring tail loses its packet.
//! * Round robin over active slots in a ring: a newly active slot is appended behind the others
//!   (no new-flow priority) with allot = quantum; a slot with allot <= 0 gets +quantum and the
//!   turn passes; otherwise it sends its head and allot -= size. Linux keeps allot in 8-byte units;
//!   we count exact bytes. Quantum defaults to the link MTU (1500 IP bytes; Linux 1514).
//! * `perturb` (default 0 = off, as the kernel): every period a new hash seed is drawn from the
//!   discipline's Rng and all queued packets are re-hashed (per-flow order kept).
//! * The longest slot is found in O(1) through a by-length index.
//!
//! `variant = "ns2"`: ns-2.35's `Queue/SFQ` (queue/sfq.cc, whose defaults, tcl/lib/ns-default.tcl,
//! the preset takes: 16 buckets, `maxqueue` 40 packets). Its total bound is its own `maxqueue_`,
//! not the link's `limit_` (which `$ns queue-limit` sets and `SFQ::enque` never reads), so
//! `limit` and `depth` do not apply. `SFQ::enque` tail-drops the arrival when its bucket holds
//! `used` packets and `left = maxqueue - queued` with `used >= left / 2` (integer halving), or
//! `left < buckets` and `used > maxqueue / buckets`, or `left <= 0`. `SFQ::deque` serves one packet
//! per active bucket in turn (no byte quantum). One slot per bucket (`flows` = the buckets).

use super::fq_sched::packets;
use super::util::{flow_hash, DepthIndex};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_bytes, check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, as_size, Dur, Limit, LimitSpec, Size, Time, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;
/// ns-2.35's `Queue/SFQ` defaults (tcl/lib/ns-default.tcl: `maxqueue_ 40`, `buckets_ 16`).
const NS2_MAXQUEUE: u64 = 40;
const NS2_BUCKETS: u32 = 16;

struct Slot {
    q: VecDeque<PktId>,
    allot: i64,
    bucket: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SfqVariant {
    Linux,
    Ns2,
}

pub struct Sfq {
    variant: SfqVariant,
    maxqueue: u64,
    divisor: u32,
    depth: u32,
    limit: u64,
    quantum: i64,
    headdrop: bool,
    perturb: Time,
    next_perturb: Time,
    seed: u64,
    rng: Rng,
    buckets: Vec<u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Active slots; front = the slot after the tail (next to serve), back = the tail.
    ring: VecDeque<u32>,
    depths: DepthIndex,
    packets: u64,
    bytes: u64,
    rehash_drops: u64,
}

impl Sfq {
    fn bucket_of(&self, key: u64) -> usize {
        (flow_hash(key, self.seed) & (self.divisor - 1)) as usize
    }

    fn release_slot(&mut self, s: usize) {
        let b = self.slots[s].bucket;
        self.buckets[b as usize] = NONE;
        self.slots[s].bucket = NONE;
        self.free.push(s as u32);
    }

    fn remove_packet(&mut self, s: usize, head: bool, ctx: &QueueCtx) -> PktId {
        let id = if head {
            self.slots[s].q.pop_front()
        } else {
            self.slots[s].q.pop_back()
        }
        .expect("non-empty slot");
        self.depths.dec(s);
        self.packets -= 1;
        self.bytes -= ctx.size(id) as u64;
        id
    }

    /// ns-2's admission (`SFQ::enque`): whether the arrival is to be tail-dropped.
    fn ns2_refuses(&self, key: u64) -> bool {
        let s = self.buckets[self.bucket_of(key)];
        let used = if s == NONE {
            0
        } else {
            self.slots[s as usize].q.len() as i64
        };
        let left = self.maxqueue as i64 - self.packets as i64;
        let fairshare = self.maxqueue as i64 / self.divisor as i64;
        used >= left >> 1 || (left < self.divisor as i64 && used > fairshare) || left <= 0
    }

    /// Inserts without the total-limit check; returns false if the arrival was dropped.
    fn insert(&mut self, id: PktId, ctx: &mut QueueCtx) -> bool {
        let b = self.bucket_of(ctx.hash_key(id));
        let mut s = self.buckets[b];
        if s == NONE {
            let Some(free) = self.free.pop() else {
                ctx.drop_packet(id, DropReason::Overlimit);
                return false;
            };
            s = free;
            self.buckets[b] = s;
            self.slots[s as usize].bucket = b as u32;
        }
        let s = s as usize;
        if self.slots[s].q.len() as u32 >= self.depth {
            if !self.headdrop {
                ctx.drop_packet(id, DropReason::Overlimit);
                return false;
            }
            let old = self.remove_packet(s, true, ctx);
            ctx.drop_packet(old, DropReason::Head);
        }
        self.slots[s].q.push_back(id);
        self.depths.inc(s);
        self.packets += 1;
        self.bytes += ctx.size(id) as u64;
        if self.slots[s].q.len() == 1 {
            self.ring.push_back(s as u32);
            self.slots[s].allot = self.quantum;
        }
        true
    }

    fn rehash(&mut self, ctx: &mut QueueCtx) {
        let order: Vec<u32> = self.ring.drain(..).collect();
        let mut pkts = Vec::with_capacity(self.packets as usize);
        for s in order {
            let s = s as usize;
            pkts.extend(self.slots[s].q.drain(..));
            self.depths.clear(s);
            self.release_slot(s);
        }
        self.packets = 0;
        self.bytes = 0;
        self.seed = self.rng.next_u64();
        for id in pkts {
            if !self.insert(id, ctx) {
                self.rehash_drops += 1;
            }
        }
    }
}

impl Sfq {
    /// ns-2's `SFQ::deque`: the front slot sends its head and the turn passes.
    fn serve_one(&mut self, s: usize, ctx: &QueueCtx) -> PktId {
        let id = self.remove_packet(s, true, ctx);
        if self.slots[s].q.is_empty() {
            self.ring.pop_front();
            self.release_slot(s);
        } else {
            self.ring.rotate_left(1);
        }
        id
    }
}

impl Qdisc for Sfq {
    fn flow_queues(&self) -> bool {
        true
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        if self.variant == SfqVariant::Ns2 {
            if self.ns2_refuses(ctx.hash_key(id)) {
                ctx.drop_packet(id, DropReason::Overlimit);
            } else {
                self.insert(id, ctx);
            }
            return;
        }
        if !self.insert(id, ctx) {
            return;
        }
        if self.packets > self.limit {
            let (s, d) = self.depths.longest().expect("packets queued");
            let s = if d == 1 {
                *self.ring.front().expect("active slot") as usize
            } else {
                s
            };
            let victim = self.remove_packet(s, self.headdrop, ctx);
            ctx.drop_packet(victim, DropReason::FatFlow);
            if self.slots[s].q.is_empty() {
                let pos = self.ring.iter().position(|&x| x as usize == s).expect("active");
                self.ring.remove(pos);
                self.release_slot(s);
            }
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, _now: Time) -> Option<PktId> {
        loop {
            let s = *self.ring.front()? as usize;
            if self.variant == SfqVariant::Ns2 {
                return Some(self.serve_one(s, ctx));
            }
            if self.slots[s].allot <= 0 {
                self.slots[s].allot += self.quantum;
                self.ring.rotate_left(1);
                continue;
            }
            let id = self.remove_packet(s, true, ctx);
            self.slots[s].allot -= ctx.size(id) as i64;
            if self.slots[s].q.is_empty() {
                self.ring.pop_front();
                self.release_slot(s);
            }
            return Some(id);
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.packets
    }

    fn next_timer(&self) -> Option<Time> {
        (self.perturb > 0).then_some(self.next_perturb)
    }

    fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
        if self.perturb == 0 {
            return;
        }
        while self.next_perturb <= now {
            self.next_perturb += self.perturb;
        }
        self.rehash(ctx);
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("active_slots", self.ring.len() as f64),
            ("rehash_drops", self.rehash_drops as f64),
        ]
    }
}

/// SFQ's keys (defaults as Linux sch_sfq).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SfqParams {
    /// linux (sch_sfq, default) or ns2 (ns-2.35 queue/sfq.cc: `maxqueue`, its drop rule, one
    /// packet per turn; presets 16 buckets and 16 slots)
    variant: SfqVariant,
    /// ns2 only: total packets ("40p", ns-2's maxqueue_; the link's limit is not read); default 40p
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    maxqueue: u64,
    /// hash buckets, a power of two <= 65536; default 1024
    divisor: u32,
    /// slots (simultaneously active flows); default 128
    flows: u32,
    /// packets per slot; default 127
    depth: u32,
    /// total packets ("127p"), capped at depth x flows; default the link's packet limit, else 127p
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    limit: u64,
    /// bytes per round robin turn; default the link MTU (1500)
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    quantum: u64,
    /// hash perturbation period ("10s"); 0s = off (default)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    perturb: Time,
    /// drop from the head instead of the tail
    headdrop: bool,
}

impl Params<LinkInfo> for SfqParams {
    const PRESET: Option<&'static str> = Some("variant");

    /// ns2: ns-2.35's `Queue/SFQ set buckets_ 16` (tcl/lib/ns-default.tcl), one slot each.
    fn preset(&self, _link: &LinkInfo) -> SfqParams {
        match self.variant {
            SfqVariant::Linux => self.clone(),
            SfqVariant::Ns2 => SfqParams {
                divisor: NS2_BUCKETS,
                flows: NS2_BUCKETS,
                ..self.clone()
            },
        }
    }

    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_range("divisor", self.divisor, 1, 65_536)?;
        if !self.divisor.is_power_of_two() {
            return Err(format!("divisor: {} is not a power of two", self.divisor));
        }
        check_range("flows", self.flows, 1, 65_536)?;
        check_range("depth", self.depth, 1, 65_536)?;
        check_range("limit", self.limit, 1, 1 << 24)?;
        check_range("maxqueue", self.maxqueue, 1, 1 << 24)?;
        self.limit = self.limit.min(self.depth as u64 * self.flows as u64);
        check_bytes("quantum", self.quantum, 1, 1 << 20)?;
        check_time("perturb", self.perturb, 0, 3600 * SEC)
    }
}

fn build(params: &Value, link: &LinkInfo, mut rng: Rng) -> Built<Sfq> {
    let defaults = SfqParams {
        variant: SfqVariant::Linux,
        maxqueue: NS2_MAXQUEUE,
        divisor: 1024,
        flows: 128,
        depth: 127,
        limit: match link.limit {
            Some(Limit::Packets(p)) => p,
            _ => 127,
        },
        quantum: link.mtu as u64,
        perturb: 0,
        headdrop: false,
    };
    let p = read(params, defaults, link)?;
    let (divisor, flows) = (p.divisor, p.flows);
    let q = Sfq {
        variant: p.variant,
        maxqueue: p.maxqueue,
        divisor,
        depth: p.depth,
        limit: p.limit,
        quantum: p.quantum as i64,
        headdrop: p.headdrop,
        perturb: p.perturb,
        next_perturb: p.perturb,
        seed: rng.next_u64(),
        rng,
        buckets: vec![NONE; divisor as usize],
        slots: (0..flows)
            .map(|_| Slot {
                q: VecDeque::new(),
                allot: 0,
                bucket: NONE,
            })
            .collect(),
        free: (0..flows).rev().collect(),
        ring: VecDeque::new(),
        depths: DepthIndex::new(flows as usize),
        packets: 0,
        bytes: 0,
        rehash_drops: 0,
    };
    Ok((q, written(&p)))
}

pub static INFO: [QdiscInfo<Sfq>; 1] = [QdiscInfo {
    name: "sfq",
    summary: "Stochastic Fairness Queueing: hashed flow slots served round robin by bytes, longest-slot drop",
    reference: "McKenney 1990; Linux sch_sfq",
    params: &[Group::of::<SfqParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use serde_json::json;

    fn make(p: Value) -> Sfq {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(8)).unwrap().0
    }

    fn flows_in_distinct_buckets(q: &Sfq, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut used = Vec::new();
        for f in 0..1000u32 {
            let b = q.bucket_of(u64::from((f << 1) | 1));
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
    fn byte_fairness_1500_vs_500() {
        let mut q = make(json!({"limit": "1000p", "depth": 1000}));
        let f = flows_in_distinct_buckets(&q, 2);
        let mut h = Harness::new();
        let mut bytes = [0u64; 2];
        for _ in 0..300 {
            h.enqueue(&mut q, f[0], 1500, Ecn::NotEct, 0);
            h.enqueue(&mut q, f[1], 500, Ecn::NotEct, 0);
            h.enqueue(&mut q, f[1], 500, Ecn::NotEct, 0);
            h.enqueue(&mut q, f[1], 500, Ecn::NotEct, 0);
            for _ in 0..2 {
                let id = h.dequeue(&mut q, 0).unwrap();
                let p = h.pool.get(id);
                bytes[(p.flow == f[1]) as usize] += p.size as u64;
            }
        }
        assert!(h.drops.is_empty());
        assert!(bytes[0].abs_diff(bytes[1]) <= 1500, "{bytes:?}");
    }

    #[test]
    fn depth_and_longest_slot_drops() {
        // A flow beyond depth is tail-dropped while others are not.
        let mut q = make(json!({"depth": 5, "limit": "100p"}));
        let f = flows_in_distinct_buckets(&q, 3);
        let mut h = Harness::new();
        let ids: Vec<_> = (0..7)
            .map(|_| h.enqueue(&mut q, f[0], 1000, Ecn::NotEct, 0))
            .collect();
        h.enqueue(&mut q, f[1], 1000, Ecn::NotEct, 0);
        assert_eq!(
            h.drops,
            vec![(ids[5], DropReason::Overlimit), (ids[6], DropReason::Overlimit)]
        );
        // With the total limit reached, drops hit the currently longest flow (tail).
        let mut q = make(json!({"limit": "10p"}));
        let mut h = Harness::new();
        for _ in 0..3 {
            h.enqueue(&mut q, f[1], 1000, Ecn::NotEct, 0);
            h.enqueue(&mut q, f[2], 1000, Ecn::NotEct, 0);
        }
        let big: Vec<_> = (0..6)
            .map(|_| h.enqueue(&mut q, f[0], 1000, Ecn::NotEct, 0))
            .collect();
        // 12 arrivals, limit 10: the 11th and 12th each evict the tail of f[0] (the longest).
        assert_eq!(
            h.drops,
            vec![(big[4], DropReason::FatFlow), (big[5], DropReason::FatFlow)]
        );
        assert_eq!(q.backlog_packets(), 10);
    }

    #[test]
    fn perturbation_rehashes_and_keeps_order() {
        let mut q = make(json!({"perturb": "10s", "limit": "1000p"}));
        let mut h = Harness::new();
        let ids: Vec<_> = (0..20)
            .map(|i| h.enqueue(&mut q, i % 4, 100, Ecn::NotEct, 0))
            .collect();
        let seed = q.seed;
        assert_eq!(q.next_timer(), Some(10 * SEC));
        h.timer(&mut q, 10 * SEC);
        assert_ne!(q.seed, seed);
        assert_eq!(q.next_timer(), Some(20 * SEC));
        assert_eq!(q.backlog_packets(), 20);
        let mut out = Vec::new();
        while let Some(id) = h.dequeue(&mut q, 11 * SEC) {
            out.push(id);
        }
        for flow in 0..4u32 {
            let sent: Vec<_> = out.iter().filter(|&&id| h.pool.get(id).flow == flow).collect();
            let orig: Vec<_> = ids.iter().filter(|&&id| h.pool.get(id).flow == flow).collect();
            assert_eq!(sent, orig);
        }
    }

    #[test]
    fn headdrop_drops_oldest_of_full_slot() {
        let mut q = make(json!({"depth": 3, "headdrop": true}));
        let mut h = Harness::new();
        let ids: Vec<_> = (0..5)
            .map(|_| h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0))
            .collect();
        assert_eq!(
            h.drops,
            vec![(ids[0], DropReason::Head), (ids[1], DropReason::Head)]
        );
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[2]));
    }

    // ns-2.35 queue/sfq.cc `SFQ::enque` with ns-default.tcl's maxqueue_ 40, buckets_ 16 (so
    // fairshare = 40 / 16 = 2): an arrival to a bucket holding `used` packets, with `left` =
    // 40 - queued, is dropped if used >= left >> 1, or left < 16 and used > 2, or left <= 0.

    #[test]
    fn ns2_lone_flow_holds_13_packets() {
        // used = 13, left = 27: 13 >= 27 >> 1 = 13 drops; used = 12, left = 28: 12 < 14 admits.
        let mut q = make(json!({"variant": "ns2"}));
        let mut h = Harness::new();
        let ids: Vec<_> = (0..20)
            .map(|_| h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0))
            .collect();
        assert_eq!(q.backlog_packets(), 13);
        let dropped: Vec<_> = h.drops.iter().map(|d| d.0).collect();
        assert_eq!(dropped, ids[13..].to_vec());
    }

    #[test]
    fn ns2_ten_flows_stop_at_30_packets() {
        // One arrival per flow per round, no service: rounds 1-3 admit everything (round 3:
        // used = 2, left = 20 - k >= 11, 2 < left >> 1 and 2 is not above the fair share 2); in
        // round 4 left = 10 - k < 16 and used = 3 > 2, so every later arrival is dropped.
        let mut q = make(json!({"variant": "ns2"}));
        let f = flows_in_distinct_buckets(&q, 10);
        let mut h = Harness::new();
        for round in 0..6 {
            for &fl in &f {
                h.enqueue(&mut q, fl, 1000, Ecn::NotEct, 0);
            }
            assert_eq!(q.backlog_packets(), 10 * (round + 1).min(3));
        }
        assert_eq!(h.drops.len(), 30);
        assert!(h.drops.iter().all(|d| d.1 == DropReason::Overlimit));
    }

    #[test]
    fn ns2_serves_one_packet_per_turn() {
        // `SFQ::deque`: the active bucket sends one packet, then `active = active->next`
        // (sch_sfq would send two 1000-byte packets from its 1500-byte quantum first).
        let mut q = make(json!({"variant": "ns2"}));
        let f = flows_in_distinct_buckets(&q, 2);
        let mut h = Harness::new();
        let a: Vec<_> = (0..3)
            .map(|_| h.enqueue(&mut q, f[0], 1000, Ecn::NotEct, 0))
            .collect();
        let b: Vec<_> = (0..3)
            .map(|_| h.enqueue(&mut q, f[1], 1000, Ecn::NotEct, 0))
            .collect();
        let out: Vec<_> = (0..6).map(|_| h.dequeue(&mut q, 0).unwrap()).collect();
        assert_eq!(out, vec![a[0], b[0], a[1], b[1], a[2], b[2]]);
        assert_eq!(h.dequeue(&mut q, 0), None);
    }

    #[test]
    fn ns2_preset_and_keys() {
        let q = make(json!({"variant": "ns2"}));
        assert_eq!((q.divisor, q.slots.len(), q.maxqueue), (16, 16, 40));
        let q = make(json!({"variant": "ns2", "maxqueue": "400p", "divisor": 64}));
        assert_eq!((q.divisor, q.maxqueue), (64, 400));
    }
}
