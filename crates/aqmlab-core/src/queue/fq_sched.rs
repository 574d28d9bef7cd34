//! The flow-queueing scheduler of RFC 8290 / Linux fq_codel (docs/disciplines.md 5.1), shared by
//! fq_codel, fq_nocodel, fq_pie and sfq_codel: hashed flow queues, new/old lists, and Linux-style
//! deficits (a flow may send while its deficit is positive; new flows start with a full quantum;
//! the deficit is refilled only when found <= 0). Each flow carries an AQM state `S`; the caller
//! supplies the per-flow dequeue (CoDel, PIE's bookkeeping, or a plain pop).
//!
//! Classification: `idx = (hash * flows) >> 32` (multiply-shift as Linux) where the hash mixes the
//! flow key with a perturbation drawn once from the discipline's Rng (no re-hash at run time).

use super::codel::CodelSource;
use super::util::{flow_hash, scale, PacketQueue};
use super::{LinkInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_bytes, check_range, Params};
use crate::units::{as_size, Limit, LimitSpec, Size, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The scheduler keys fq_codel, fq_nocodel and fq_pie share (defaults as Linux).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqSettings {
    /// number of flow queues (1..65536); default 1024
    pub flows: u32,
    /// DRR credit per round in bytes; default the link MTU (1500)
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub quantum: u64,
    /// total packets ("10240p"); default the link's packet limit, else 10240p
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    pub limit: u64,
    /// bytes of modelled memory (size + 576 B per packet); default 32MiB; fq_codel drops from
    /// the fattest flow above it, fq_pie only counts it
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub memory_limit: u64,
}

impl FqSettings {
    pub fn defaults(link: &LinkInfo) -> FqSettings {
        FqSettings {
            flows: 1024,
            quantum: link.mtu as u64,
            limit: match link.limit {
                Some(Limit::Packets(p)) => p,
                _ => 10_240,
            },
            memory_limit: 32 << 20,
        }
    }
}

impl Params<LinkInfo> for FqSettings {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_range("flows", self.flows, 1, 65_536)?;
        check_bytes("quantum", self.quantum, 1, 1 << 20)?;
        check_range("limit", self.limit, 1, 1 << 24)?;
        check_bytes("memory_limit", self.memory_limit, 1, 1 << 40)
    }
}

/// A limit that counts packets ("10240p"), written as packets.
pub mod packets {
    use crate::units::{Limit, LimitSpec};
    use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(n: &u64, s: S) -> Result<S::Ok, S::Error> {
        LimitSpec(Limit::Packets(*n)).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        match LimitSpec::deserialize(d)?.0 {
            Limit::Packets(n) => Ok(n),
            Limit::Bytes(b) => Err(de::Error::custom(format!(
                "{b}B is not allowed; allowed: a number of packets (e.g. \"1000p\")"
            ))),
        }
    }
}

/// Totals over all flows.
#[derive(Default, Clone, Copy)]
pub struct Totals {
    pub packets: u64,
    pub bytes: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

pub struct FqFlow<S> {
    pub fq: PacketQueue,
    pub deficit: i64,
    list: List,
    pub aqm: S,
}

/// A flow's queue seen from its AQM: pops keep the flow's and the totals' counts right. As a
/// CoDel source the MTU guard compares the *qdisc-wide* backlog (Linux fq_codel, ns-2 sfqcodel),
/// or the flow's own backlog when `per_flow_guard` is set (ns-3 FqCoDelQueueDisc, whose per-flow
/// CoDelQueueDisc checks its own MinBytes).
pub struct FlowSrc<'a> {
    pub fq: &'a mut PacketQueue,
    pub tot: &'a mut Totals,
    pub per_flow_guard: bool,
}

impl FlowSrc<'_> {
    /// Flow `flow`'s queue over the qdisc's totals.
    fn of<'a, S>(
        flow: &'a mut FqFlow<S>,
        tot: &'a mut Totals,
        per_flow_guard: bool,
    ) -> (FlowSrc<'a>, &'a mut S) {
        (
            FlowSrc {
                fq: &mut flow.fq,
                tot,
                per_flow_guard,
            },
            &mut flow.aqm,
        )
    }

    #[inline(always)]
    pub fn pop_head(&mut self, ctx: &QueueCtx) -> Option<PktId> {
        let id = self.fq.pop_front(ctx)?;
        self.tot.bytes -= ctx.size(id) as u64;
        self.tot.packets -= 1;
        Some(id)
    }
}

impl CodelSource for FlowSrc<'_> {
    #[inline]
    fn pop(&mut self, ctx: &QueueCtx) -> Option<PktId> {
        self.pop_head(ctx)
    }
    fn guard_backlog(&self) -> u64 {
        if self.per_flow_guard {
            self.fq.bytes()
        } else {
            self.tot.bytes
        }
    }
    fn is_empty(&self) -> bool {
        self.fq.is_empty()
    }
}

pub struct FqSched<S> {
    pub flows: Vec<FqFlow<S>>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    pub quantum: u32,
    pub tot: Totals,
    seed: u64,
    /// fq_codel: an emptied new flow moves to the old list if that is non-empty (else it is
    /// removed). false (sfq_codel): a flow found empty is always removed.
    pub empty_new_to_old: bool,
    /// Charge delivered bytes (byte DRR) or one unit per packet (packet round robin, quantum 1).
    pub cost_bytes: bool,
    /// CoDel's MTU guard looks at each flow's own backlog instead of the qdisc's (ns-3).
    pub per_flow_guard: bool,
    pub new_flow_count: u64,
}

impl<S> FqSched<S> {
    pub fn new(flows: usize, quantum: u32, seed: u64, mut make: impl FnMut() -> S) -> FqSched<S> {
        FqSched {
            flows: (0..flows)
                .map(|_| FqFlow {
                    fq: PacketQueue::default(),
                    deficit: 0,
                    list: List::None,
                    aqm: make(),
                })
                .collect(),
            new: VecDeque::new(),
            old: VecDeque::new(),
            quantum,
            tot: Totals::default(),
            seed,
            empty_new_to_old: true,
            cost_bytes: true,
            per_flow_guard: false,
            new_flow_count: 0,
        }
    }

    /// The flow queue of a flow key.
    #[inline]
    pub fn classify(&self, key: u64) -> usize {
        scale(flow_hash(key, self.seed), self.flows.len() as u32)
    }

    /// Appends packet `id` to flow `f`; a flow on no list becomes a new flow with a full quantum.
    #[inline]
    pub fn push(&mut self, f: usize, id: PktId, size: u32) {
        if self.append(f, id, size) {
            self.new.push_back(f as u32);
        }
    }

    /// Appends the packet and counts it; true when flow `f` has just become active.
    fn append(&mut self, f: usize, id: PktId, size: u32) -> bool {
        let flow = &mut self.flows[f];
        flow.fq.push_back(id, size);
        self.tot.packets += 1;
        self.tot.bytes += size as u64;
        if flow.list != List::None {
            return false;
        }
        flow.list = List::New;
        flow.deficit = self.quantum as i64;
        self.new_flow_count += 1;
        true
    }

    /// [`Self::push`] for the circular schedule of ns-2's sfqcodel.cc (`sfqCoDelQueue::enque`):
    /// all active flows sit on one circle (kept in the `new` deque, its front the next to
    /// serve), a flow not yet served since it became active is "new" (`List::New`), served
    /// ones `List::Old`. A flow becoming active is put after the run of new flows at the head,
    /// before the first served one, except that when that scan stops on the circle's last flow
    /// the newcomer goes after it (so a flow joining a single served flow waits its turn).
    pub fn push_circle(&mut self, f: usize, id: PktId, size: u32) {
        if !self.append(f, id, size) {
            return;
        }
        let last = self.new.len().saturating_sub(1);
        let mut at = 0;
        while at < last && self.flows[self.new[at] as usize].list == List::New {
            at += 1;
        }
        if at >= last {
            self.new.push_back(f as u32);
        } else {
            self.new.insert(at, f as u32);
        }
    }

    /// The packet round robin of ns-2's sfqcodel.cc over the circle of [`Self::push_circle`]
    /// (`sfqCoDelQueue::deque`, `readybin`, `removebin`): the flow at the head is served (and
    /// is no longer new); when `deq` gives a packet the head moves on to the next flow, when it
    /// gives none (the flow was empty, or its drops emptied it) the flow leaves the circle and
    /// the next one is tried.
    pub fn dequeue_circle(
        &mut self,
        ctx: &mut QueueCtx,
        now: Time,
        mut deq: impl FnMut(&mut S, &mut FlowSrc, &mut QueueCtx, Time) -> Option<PktId>,
    ) -> Option<PktId> {
        while let Some(&f) = self.new.front() {
            let flow = &mut self.flows[f as usize];
            flow.list = List::Old;
            let (mut src, aqm) = FlowSrc::of(flow, &mut self.tot, self.per_flow_guard);
            let sent = deq(aqm, &mut src, ctx, now);
            self.new.pop_front();
            match sent {
                Some(p) => {
                    self.new.push_back(f);
                    return Some(p);
                }
                None => flow.list = List::None,
            }
        }
        None
    }

    /// Removes the head of flow `f` (for drops); returns it and its size.
    pub fn pop_head(&mut self, f: usize, ctx: &QueueCtx) -> Option<PktId> {
        FlowSrc::of(&mut self.flows[f], &mut self.tot, self.per_flow_guard)
            .0
            .pop_head(ctx)
    }

    /// Removes the tail of flow `f` (for drops).
    pub fn pop_tail(&mut self, f: usize, ctx: &QueueCtx) -> Option<PktId> {
        let flow = &mut self.flows[f];
        let id = flow.fq.pop_back(ctx)?;
        self.tot.bytes -= ctx.size(id) as u64;
        self.tot.packets -= 1;
        Some(id)
    }

    /// Flows currently on the new or old list.
    pub fn active(&self) -> impl Iterator<Item = usize> + '_ {
        self.new.iter().chain(self.old.iter()).map(|&f| f as usize)
    }

    /// Whether flow `f` is on the new or the old list.
    pub fn listed(&self, f: usize) -> bool {
        self.flows[f].list != List::None
    }

    /// Whether flow `f` is on the new-flows list.
    pub fn is_new(&self, f: usize) -> bool {
        self.flows[f].list == List::New
    }

    /// Number of flows on the lists.
    pub fn active_count(&self) -> usize {
        self.new.len() + self.old.len()
    }

    /// The scheduler loop (RFC 8290 section 4.2; Linux fq_codel_dequeue); `deq` takes the next packet out of a flow (it may
    /// drop or mark on the way) and returns None when the flow has nothing to send.
    #[inline]
    pub fn dequeue(
        &mut self,
        ctx: &mut QueueCtx,
        now: Time,
        mut deq: impl FnMut(&mut S, &mut FlowSrc, &mut QueueCtx, Time) -> Option<PktId>,
    ) -> Option<PktId> {
        loop {
            let (from_new, f) = match (self.new.front(), self.old.front()) {
                (Some(&f), _) => (true, f as usize),
                (None, Some(&f)) => (false, f as usize),
                (None, None) => return None,
            };
            let flow = &mut self.flows[f];
            if flow.deficit <= 0 {
                flow.deficit += self.quantum as i64;
                flow.list = List::Old;
                if from_new {
                    self.new.pop_front()
                } else {
                    self.old.pop_front()
                };
                self.old.push_back(f as u32);
                continue;
            }
            let (mut src, aqm) = FlowSrc::of(flow, &mut self.tot, self.per_flow_guard);
            match deq(aqm, &mut src, ctx, now) {
                Some(p) => {
                    flow.deficit -= if self.cost_bytes { ctx.size(p) as i64 } else { 1 };
                    return Some(p);
                }
                None => {
                    if from_new {
                        self.new.pop_front();
                        if self.empty_new_to_old && !self.old.is_empty() {
                            flow.list = List::Old;
                            self.old.push_back(f as u32);
                        } else {
                            flow.list = List::None;
                        }
                    } else {
                        self.old.pop_front();
                        flow.list = List::None;
                    }
                }
            }
        }
    }
}
