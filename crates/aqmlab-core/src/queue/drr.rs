//! Deficit Round Robin (Shreedhar & Varghese 1995; docs/disciplines.md 15).
//!
//! * Classification is exact: one queue per flow key (scenario flow and direction), so there are
//!   no hash collisions; the connections of a `web`/`webpage` flow share its class (classes are
//!   configured per scenario flow, as Linux sch_drr's by tc filters; the flow's
//!   `hash_connections` applies to the hashing disciplines only). Per-flow quanta: `quanta` lists quanta by scenario flow index (both
//!   directions); flows beyond the list use `quantum` (default the link MTU, 1500 B).
//! * `deficit = "classic"` (default, the paper): an activated flow starts with DC = 0; each visit
//!   adds Q_i and sends head packets while they fit in DC; an emptied flow leaves with DC = 0,
//!   otherwise it goes to the tail with DC carried over.
//!   `deficit = "linux"` (the fq_codel/SFQ style): a new flow starts with a full quantum, sends
//!   while DC > 0 whatever the packet size (DC may go negative), and is refilled (+Q_i, turn passes)
//!   only when found with DC <= 0.
//! * Buffer stealing: when the total limit is exceeded, the arrival is enqueued and one packet is
//!   dropped from the tail of the queue with the most packets (`FatFlow`; O(1) via a length index).
//!
//! `variant = "ns2"`: ns-2.35's `Queue/DRR` (queue/drr.cc; the preset takes its defaults from
//! tcl/lib/ns-default.tcl: `quantum_ 250`, `blimit_ 25000`, classic deficit). Its bound is its
//! own byte count `blimit_`, not the link's `limit_` (which `$ns queue-limit` sets and
//! `DRR::enque` never reads), so `limit` does not apply. `DRR::enque` enqueues the arrival, then
//! while the backlog exceeds `blimit` bytes drops the head of the flow holding the most bytes
//! (`getMaxflow`: the first such flow from the one being served, in service order); a flow so
//! emptied leaves the round. Not modelled: ns-2's hash of the source address into `buckets_`
//! (10) queues, where flows may collide; aqmlab's classes stay exact.

use super::util::{merge, over_limit, Buffer, DepthIndex};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_bytes, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_size, Limit, Size, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Deficit {
    Classic,
    Linux,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DrrVariant {
    Paper,
    Ns2,
}

/// ns-2.35's `Queue/DRR` defaults (tcl/lib/ns-default.tcl: `blimit_ 25000`, `quantum_ 250`).
const NS2_BLIMIT: u64 = 25_000;
const NS2_QUANTUM: u64 = 250;

#[derive(Default)]
struct Flow {
    q: VecDeque<PktId>,
    bytes: u64,
    deficit: i64,
    active: bool,
}

pub struct Drr {
    flows: Vec<Flow>,
    active: VecDeque<u32>,
    /// Classic: the front flow has already received its quantum for the current visit.
    in_visit: bool,
    variant: Deficit,
    /// ns-2's byte bound (`blimit_`) in place of `limit`; None for the paper's buffer stealing.
    blimit: Option<u64>,
    quantum: u32,
    quanta: Vec<u32>,
    limit: Limit,
    depths: DepthIndex,
    packets: u64,
    bytes: u64,
}

impl Drr {
    fn quantum_of(&self, f: usize) -> i64 {
        self.quanta.get(f >> 1).copied().unwrap_or(self.quantum) as i64
    }

    fn pop(&mut self, f: usize, head: bool, ctx: &QueueCtx) -> Option<PktId> {
        let fl = &mut self.flows[f];
        let id = if head { fl.q.pop_front() } else { fl.q.pop_back() }?;
        fl.bytes -= ctx.size(id) as u64;
        self.depths.dec(f);
        self.packets -= 1;
        self.bytes -= ctx.size(id) as u64;
        Some(id)
    }

    /// Takes the front flow off the active list.
    fn retire_front(&mut self) {
        self.retire_at(0);
    }

    /// Takes the flow at `pos` of the active list off it (the front ends the current visit).
    fn retire_at(&mut self, pos: usize) {
        let f = self.active.remove(pos).expect("active flow") as usize;
        self.flows[f].active = false;
        self.flows[f].deficit = 0;
        if pos == 0 {
            self.in_visit = false;
        }
    }

    /// ns-2's `DRR::enque` bound: while more than `blimit` bytes are queued, the head of the
    /// flow with the most bytes (the first from the front, `getMaxflow`) is dropped.
    fn ns2_steal(&mut self, blimit: u64, ctx: &mut QueueCtx) {
        while self.bytes > blimit {
            let mut pos = 0;
            for (i, &f) in self.active.iter().enumerate() {
                if self.flows[f as usize].bytes > self.flows[self.active[pos] as usize].bytes {
                    pos = i;
                }
            }
            let f = self.active[pos] as usize;
            let d = self.pop(f, true, ctx).expect("the fattest flow holds a packet");
            ctx.drop_packet(d, DropReason::FatFlow);
            if self.flows[f].q.is_empty() {
                self.retire_at(pos);
            }
        }
    }
}

impl Qdisc for Drr {
    fn flow_queues(&self) -> bool {
        true
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        let f = ctx.flow_key(id) as usize;
        if f >= self.flows.len() {
            self.flows.resize_with(f + 1, Flow::default);
            self.depths.ensure(f);
        }
        let q = self.quantum_of(f);
        let fl = &mut self.flows[f];
        fl.q.push_back(id);
        fl.bytes += ctx.size(id) as u64;
        if !fl.active {
            fl.active = true;
            fl.deficit = if self.variant == Deficit::Linux { q } else { 0 };
            self.active.push_back(f as u32);
        }
        self.depths.inc(f);
        self.packets += 1;
        self.bytes += ctx.size(id) as u64;
        if let Some(blimit) = self.blimit {
            self.ns2_steal(blimit, ctx);
        } else if over_limit(self.limit, self.packets, self.bytes) {
            let (victim, _) = self.depths.longest().expect("packets queued");
            let d = self.pop(victim, false, ctx).expect("longest is non-empty");
            ctx.drop_packet(d, DropReason::FatFlow);
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, _now: Time) -> Option<PktId> {
        loop {
            let f = *self.active.front()? as usize;
            let q = self.quantum_of(f);
            let Some(&head) = self.flows[f].q.front() else {
                // Emptied by buffer stealing while waiting its turn.
                self.retire_front();
                continue;
            };
            let size = ctx.size(head) as i64;
            match self.variant {
                Deficit::Classic => {
                    if !self.in_visit {
                        self.flows[f].deficit += q;
                        self.in_visit = true;
                    }
                    if size > self.flows[f].deficit {
                        self.active.rotate_left(1);
                        self.in_visit = false;
                        continue;
                    }
                }
                Deficit::Linux => {
                    if self.flows[f].deficit <= 0 {
                        self.flows[f].deficit += q;
                        self.active.rotate_left(1);
                        continue;
                    }
                }
            }
            let id = self.pop(f, true, ctx).expect("head exists");
            self.flows[f].deficit -= size;
            if self.flows[f].q.is_empty() {
                self.retire_front();
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

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![("active_flows", self.active.len() as f64)]
    }
}

/// DRR's keys besides the buffer.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DrrParams {
    /// paper (default) or ns2 (ns-2.35 queue/drr.cc: the `blimit` byte bound with its
    /// head drop from the flow holding the most bytes; presets quantum 250 B, classic deficit)
    variant: DrrVariant,
    /// ns2 only: bytes queued at most (ns-2's blimit_; the link's limit is not read); default 25000
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    blimit: u64,
    /// bytes per round for flows without an entry in quanta; default the link MTU (1500)
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    quantum: u64,
    /// per-flow quanta by scenario flow index, e.g. ["1500B", "3000B"]
    quanta: Vec<Size>,
    /// classic (paper, default) or linux (send while deficit > 0; new flows start with a quantum)
    deficit: Deficit,
}

impl Params<LinkInfo> for DrrParams {
    const PRESET: Option<&'static str> = Some("variant");

    fn preset(&self, _link: &LinkInfo) -> DrrParams {
        match self.variant {
            DrrVariant::Paper => self.clone(),
            DrrVariant::Ns2 => DrrParams {
                quantum: NS2_QUANTUM,
                deficit: Deficit::Classic,
                ..self.clone()
            },
        }
    }

    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_bytes("quantum", self.quantum, 1, 1 << 24)?;
        check_bytes("blimit", self.blimit, 1, 1 << 40)?;
        for (i, q) in self.quanta.iter().enumerate() {
            check_bytes(&format!("quanta[{i}]"), q.0, 1, 1 << 24)?;
        }
        Ok(())
    }
}

fn build(params: &Value, link: &LinkInfo, _rng: Rng) -> Built<Drr> {
    let buffer = read(params, Buffer::default(), link)?;
    let defaults = DrrParams {
        variant: DrrVariant::Paper,
        blimit: NS2_BLIMIT,
        quantum: link.mtu as u64,
        quanta: Vec::new(),
        deficit: Deficit::Classic,
    };
    let p = read(params, defaults, link)?;
    let q = Drr {
        flows: Vec::new(),
        active: VecDeque::new(),
        in_visit: false,
        variant: p.deficit,
        blimit: (p.variant == DrrVariant::Ns2).then_some(p.blimit),
        quantum: p.quantum as u32,
        quanta: p.quanta.iter().map(|q| q.0 as u32).collect(),
        limit: buffer.limit(),
        depths: DepthIndex::new(0),
        packets: 0,
        bytes: 0,
    };
    Ok((q, merge(written(&buffer), written(&p))))
}

pub static INFO: [QdiscInfo<Drr>; 1] = [QdiscInfo {
    name: "drr",
    summary: "Deficit Round Robin over exact per-flow queues with per-flow quanta (longest-queue drop)",
    reference: "Shreedhar & Varghese, SIGCOMM 1995",
    params: &[Group::of::<Buffer>(), Group::of::<DrrParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use serde_json::json;

    fn make(p: Value) -> Drr {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(1)).unwrap().0
    }

    /// Two always-backlogged flows with the given packet sizes; returns bytes sent per flow and
    /// the largest number of bytes one flow sent in a row (one visit).
    fn run(q: &mut Drr, sizes: [u32; 2], n: usize) -> ([u64; 2], [u64; 2]) {
        let mut h = Harness::new();
        let mut bytes = [0u64; 2];
        let mut run_max = [0u64; 2];
        let mut cur = (9usize, 0u64);
        for _ in 0..n {
            for (f, s) in sizes.iter().enumerate() {
                while q.flows.get((f << 1) | 1).is_none_or(|fl| fl.q.len() < 8) {
                    h.enqueue(q, f as u32, *s, Ecn::NotEct, 0);
                }
            }
            let id = h.dequeue(q, 0).unwrap();
            let p = h.pool.get(id);
            let f = p.flow as usize;
            bytes[f] += p.size as u64;
            cur = if cur.0 == f {
                (f, cur.1 + p.size as u64)
            } else {
                (f, p.size as u64)
            };
            run_max[f] = run_max[f].max(cur.1);
            h.pool.release(id);
        }
        (bytes, run_max)
    }

    #[test]
    fn quanta_one_to_two_give_bytes_one_to_two() {
        for variant in ["classic", "linux"] {
            let mut q = make(json!({"quanta": ["1500B", "3000B"], "deficit": variant}));
            let (b, runs) = run(&mut q, [700, 1100], 20_000);
            let ratio = b[1] as f64 / b[0] as f64;
            assert!((ratio - 2.0).abs() < 0.01, "{variant}: {b:?}");
            if variant == "classic" {
                // Never more than Q + max_packet - 1 bytes in one visit.
                assert!(runs[0] < 1500 + 1100 && runs[1] < 3000 + 1100, "{runs:?}");
            }
        }
    }

    #[test]
    fn byte_fairness_mixed_sizes() {
        for variant in ["classic", "linux"] {
            let mut q = make(json!({"deficit": variant}));
            let (b, _) = run(&mut q, [1500, 500], 20_000);
            assert!(b[0].abs_diff(b[1]) <= 3000, "{variant}: {b:?}");
        }
    }

    #[test]
    fn buffer_stealing_drops_from_longest() {
        let mut q = make(json!({"limit": "6p"}));
        let mut h = Harness::new();
        h.enqueue(&mut q, 1, 100, Ecn::NotEct, 0);
        let big: Vec<_> = (0..5)
            .map(|_| h.enqueue(&mut q, 0, 100, Ecn::NotEct, 0))
            .collect();
        let late = h.enqueue(&mut q, 1, 100, Ecn::NotEct, 0);
        assert_eq!(h.drops, vec![(big[4], DropReason::FatFlow)]);
        assert!(!h.was_dropped(late));
        assert_eq!(q.backlog_packets(), 6);
    }

    #[test]
    fn classic_deficit_resets_when_flow_empties() {
        let mut q = make(json!({"quantum": "1000B"}));
        let mut h = Harness::new();
        let a = h.enqueue(&mut q, 0, 600, Ecn::NotEct, 0);
        assert_eq!(h.dequeue(&mut q, 0), Some(a));
        assert_eq!(q.flows[1].deficit, 0);
        // A 1500 B packet needs two visits with a 1000 B quantum.
        let b = h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
        let c = h.enqueue(&mut q, 1, 400, Ecn::NotEct, 0);
        assert_eq!(h.dequeue(&mut q, 0), Some(c));
        assert_eq!(h.dequeue(&mut q, 0), Some(b));
    }

    // ns-2.35 queue/drr.cc `DRR::enque` with ns-default.tcl's blimit_ 25000: the arrival is
    // enqueued, then while more than 25000 bytes are queued the head of the flow with the most
    // bytes is dropped.

    #[test]
    fn ns2_byte_bound_drops_the_head() {
        // 25 packets of 1000 B are exactly 25000 B (not above); the 26th evicts the oldest.
        let mut q = make(json!({"variant": "ns2"}));
        let mut h = Harness::new();
        let ids: Vec<_> = (0..26)
            .map(|_| h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0))
            .collect();
        assert_eq!(h.drops, vec![(ids[0], DropReason::FatFlow)]);
        assert_eq!((q.backlog_packets(), q.backlog_bytes()), (25, 25_000));
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[1]));
    }

    #[test]
    fn ns2_victim_holds_the_most_bytes() {
        // Flow 0: 10 x 1500 B = 15000 B; flow 1: 12 x 800 B = 9600 B (more packets, fewer bytes).
        // An 800 B arrival of flow 1 brings 25400 B: flow 0's head goes (the paper's buffer
        // stealing, by packets, would take flow 1's tail).
        let mut q = make(json!({"variant": "ns2"}));
        let mut h = Harness::new();
        let a: Vec<_> = (0..10)
            .map(|_| h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0))
            .collect();
        for _ in 0..13 {
            h.enqueue(&mut q, 1, 800, Ecn::NotEct, 0);
        }
        assert_eq!(h.drops, vec![(a[0], DropReason::FatFlow)]);
        assert_eq!(q.backlog_bytes(), 23_900);
    }

    #[test]
    fn ns2_preset_and_keys() {
        let q = make(json!({"variant": "ns2"}));
        assert_eq!(
            (q.quantum, q.variant, q.blimit),
            (250, Deficit::Classic, Some(25_000))
        );
        let q = make(json!({"variant": "ns2", "blimit": "416000B", "quantum": "1000B"}));
        assert_eq!((q.quantum, q.blimit), (1000, Some(416_000)));
        assert_eq!(make(json!({})).blimit, None);
    }
}
