//! fq, the Fair Queue packet scheduler with per-flow pacing (Linux net/sched/sch_fq.c, Eric
//! Dumazet, 2013; as of Linux 6.6, before the priority bands and the enqueue fast path of 6.7).
//! Not to be confused with `queue::fq`, the RFC 8290 scheduler inside fq_codel.
//!
//! * Flows: a packet here is forwarded (it has no local socket), so Linux keys it by its flow
//!   hash masked with `orphan_mask` (1023): at most 1024 flows, and flows whose hashes collide
//!   share a queue. Linux's garbage collection of detached flows only runs with 2048 flows or
//!   more, which 1024 never reach, so every flow is kept.
//! * Scheduling: a new flow (or one idle again) joins the new list; the list's head sends while
//!   its credit is positive, then gets `quantum` more and goes to the tail of the old list. A
//!   flow's credit starts at `initial_quantum` and, after `refill_delay` idle, is topped up to
//!   at least `quantum`. A flow found empty on the new list passes through the old list once
//!   (when that is not empty) before it is detached.
//! * Pacing: each packet is due at its time to send, and no sooner than its flow's next-packet
//!   time. The time to send is the departure time the sending host stamped on it
//!   (`Packet::tstamp`, EDT: a pacing TCP sender's when this fq is its own host's qdisc,
//!   `local_sender`), else its arrival (a forwarded packet carries none). A stamp beyond now +
//!   `horizon` is dropped (`horizon_drop`) or brought back to that (`fq_packet_beyond_horizon`).
//!   A flow whose head is not due is throttled until then (Linux's `delayed` tree: ordered by
//!   due time, ties in order of throttling) and returns to the tail of the old list when due.
//!   After a packet, a flow limited by `maxrate` waits its length at that rate: a stamped packet
//!   its own length; an unstamped one (a forwarded packet has no socket pacing rate to take the
//!   minimum with) per packet below `low_rate_threshold`, else per `quantum` once its credit is
//!   used up; less up to half of how late the packet left. The stamp is the host's: it is
//!   cleared as the packet leaves (Linux clears `skb->tstamp` when a router forwards it).
//! * `ce_threshold`: a packet leaving more than this after its due time is CE-marked (if ECT).
//!
//! Left out: the socket's own pacing rate for unstamped local packets (a sender that paces
//! stamps its packets; one that does not is not paced here either), the high-priority internal
//! queue (forwarded TOS never maps to TC_PRIO_CONTROL), the timer slack (the watchdog fires at
//! the due time exactly), the ordering of a flow's packets by time to send (Linux keeps a
//! flow's out-of-order stamps in a tree; a socket's stamps never decrease, so they differ only
//! where two flows share a hash bucket: a flow here is a hash bucket, where Linux keys a local
//! packet by its socket). Lengths are IP bytes, so the quanta are 2 and 10 link MTUs where
//! Linux counts psched_mtu (MTU + 14 B of Ethernet header).

use super::cake::shaper::Bandwidth;
use super::codel::{ce_threshold, CeThreshold, CeThresholdSchema};
use super::fq_sched::packets;
use super::util::{flow_hash, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_bytes, check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, as_size, Dur, Limit, LimitSpec, Rate, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Linux's `orphan_mask` default: a forwarded packet's flow is its hash's low 10 bits.
const ORPHAN_MASK: u32 = 1023;

/// fq's keys (the names of `tc qdisc ... fq`; defaults as Linux `fq_init`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FqParams {
    /// total packets ("10000p"); default the link's packet limit, else 10000p
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    limit: u64,
    /// packets one flow may hold ("100p"); default 100p
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    flow_limit: u64,
    /// credit a flow gets per round, in bytes; default 2 link MTUs
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    quantum: u64,
    /// credit of a flow's first round; default 10 link MTUs
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    initial_quantum: u64,
    /// idle time after which a flow's credit is topped up to a quantum; default 40ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    refill_delay: Time,
    /// pacing of each flow at `maxrate` (false: tc's `nopacing`); default true
    pacing: bool,
    /// the most a flow may send ("10Mbps"), or "unlimited" (default)
    maxrate: Bandwidth,
    /// below this rate a flow is paced per packet rather than per quantum; default 550Kbps
    low_rate_threshold: Rate,
    /// "off" (default), or how late after its due time a packet leaving is CE-marked
    #[serde(with = "ce_threshold")]
    #[schemars(with = "CeThresholdSchema")]
    ce_threshold: Option<CeThreshold>,
    /// how far ahead of now a packet's departure time may be; default 10s
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    horizon: Time,
    /// a packet stamped beyond the horizon is dropped (true, default) or sent at the horizon
    horizon_drop: bool,
}

impl Params<LinkInfo> for FqParams {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_range("limit", self.limit, 1, 1 << 24)?;
        check_range("flow_limit", self.flow_limit, 1, 1 << 24)?;
        check_bytes("quantum", self.quantum, 1, 1 << 20)?;
        check_bytes("initial_quantum", self.initial_quantum, 0, 1 << 20)?;
        check_time("refill_delay", self.refill_delay, 0, 3600 * SEC)?;
        check_time("horizon", self.horizon, 0, 3600 * SEC)?;
        match self.ce_threshold {
            Some(c) if c.mask != 0 => Err(format!(
                "ce_threshold: selector {} with mask {} is not allowed (sch_fq has no selector); allowed: \"off\" or a duration",
                c.selector, c.mask
            )),
            _ => Ok(()),
        }
    }
}

impl FqParams {
    fn defaults(link: &LinkInfo) -> FqParams {
        FqParams {
            limit: match link.limit {
                Some(Limit::Packets(p)) => p,
                _ => 10_000,
            },
            flow_limit: 100,
            quantum: 2 * link.mtu as u64,
            initial_quantum: 10 * link.mtu as u64,
            refill_delay: 40 * MS,
            pacing: true,
            maxrate: Bandwidth(None),
            low_rate_threshold: Rate(550_000),
            ce_threshold: None,
            horizon: 10 * SEC,
            horizon_drop: true,
        }
    }
}

/// Where a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum State {
    /// On no list (never used, or found empty): its next packet makes it new.
    #[default]
    Detached,
    New,
    Old,
    /// Waiting in the delayed set for its next packet's due time.
    Throttled,
}

#[derive(Default)]
struct Flow {
    q: PacketQueue,
    credit: i64,
    /// When its next packet may leave, at the earliest (0: never paced).
    time_next_packet: Time,
    /// When it was detached (its idle time counts from there).
    age: Time,
    state: State,
    /// Whether it exists yet (Linux creates a flow at its first packet).
    born: bool,
}

pub struct SchFq {
    flows: Vec<Flow>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    /// Throttled flows by due time, ties in order of throttling.
    delayed: BinaryHeap<Reverse<(Time, u64, u32)>>,
    throttles: u64,
    limit: u64,
    flow_limit: u64,
    quantum: i64,
    initial_quantum: i64,
    refill_delay: Time,
    /// `maxrate` in bytes per second, when pacing is on and a rate is set.
    max_rate: Option<u64>,
    /// `low_rate_threshold` in bytes per second.
    low_rate: u64,
    ce_threshold: Option<Time>,
    horizon: Time,
    horizon_drop: bool,
    /// Whether it paces at all (tc's `pacing`; Linux `rate_enable`).
    pacing: bool,
    seed: u64,
    packets: u64,
    bytes: u64,
    /// When the next throttled flow is due, after a dequeue found none to serve.
    wake: Option<Time>,
    flow_limit_drops: u64,
    ce_marks: u64,
    horizon_drops: u64,
    horizon_caps: u64,
}

/// Which list a flow is served from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    New,
    Old,
}

impl SchFq {
    fn new(p: &FqParams, seed: u64) -> SchFq {
        SchFq {
            flows: (0..=ORPHAN_MASK).map(|_| Flow::default()).collect(),
            new: VecDeque::new(),
            old: VecDeque::new(),
            delayed: BinaryHeap::new(),
            throttles: 0,
            limit: p.limit,
            flow_limit: p.flow_limit,
            quantum: p.quantum as i64,
            initial_quantum: p.initial_quantum as i64,
            refill_delay: p.refill_delay,
            max_rate: p.maxrate.0.filter(|_| p.pacing).map(|r| r / 8),
            low_rate: p.low_rate_threshold.0 / 8,
            ce_threshold: p.ce_threshold.map(|c| c.after),
            horizon: p.horizon,
            horizon_drop: p.horizon_drop,
            pacing: p.pacing,
            seed,
            packets: 0,
            bytes: 0,
            wake: None,
            flow_limit_drops: 0,
            ce_marks: 0,
            horizon_drops: 0,
            horizon_caps: 0,
        }
    }

    /// Whether packet `id`, arriving at `now`, is to be dropped for a departure time beyond the
    /// horizon; a stamp beyond it is brought back to it when `horizon_drop` is off
    /// (`fq_packet_beyond_horizon` in `fq_enqueue`).
    fn beyond_horizon(&mut self, ctx: &mut QueueCtx, id: PktId, now: Time) -> bool {
        if ctx.tstamp(id) <= now + self.horizon {
            return false;
        }
        if self.horizon_drop {
            self.horizon_drops += 1;
            return true;
        }
        self.horizon_caps += 1;
        ctx.set_tstamp(id, now + self.horizon);
        false
    }

    /// The flow of packet `id` (`fq_classify` for a packet without a socket).
    fn classify(&self, ctx: &QueueCtx, id: PktId) -> usize {
        (flow_hash(ctx.hash_key(id), self.seed) & ORPHAN_MASK) as usize
    }

    fn list(&mut self, l: List) -> &mut VecDeque<u32> {
        match l {
            List::New => &mut self.new,
            List::Old => &mut self.old,
        }
    }

    /// Moves the flows whose due time has come from the delayed set to the old list
    /// (`fq_check_throttled`).
    fn unthrottle(&mut self, now: Time) {
        while let Some(&Reverse((due, _, f))) = self.delayed.peek() {
            if due > now {
                break;
            }
            self.delayed.pop();
            self.flows[f as usize].state = State::Old;
            self.old.push_back(f);
        }
    }

    /// Takes the head flow `f` off list `l` into the delayed set until `due`.
    fn throttle(&mut self, l: List, f: u32, due: Time) {
        self.list(l).pop_front();
        let flow = &mut self.flows[f as usize];
        flow.time_next_packet = due;
        flow.state = State::Throttled;
        self.delayed.push(Reverse((due, self.throttles, f)));
        self.throttles += 1;
    }

    /// The head flow `f` of list `l` was found empty: once through the old list if it came from
    /// the new one (and the old one is not empty), else detached.
    fn retire(&mut self, l: List, f: u32, now: Time) {
        self.list(l).pop_front();
        let flow = &mut self.flows[f as usize];
        if l == List::New && !self.old.is_empty() {
            flow.state = State::Old;
            self.old.push_back(f);
        } else {
            flow.state = State::Detached;
            flow.age = now;
        }
    }

    /// After flow `f` sent `len` bytes at `now` (a packet with a departure time if `stamped`):
    /// when its next packet may leave, from `maxrate` (the tail of `fq_dequeue`).
    fn pace(&mut self, f: usize, len: u32, stamped: bool, now: Time) {
        let Some(rate) = self.max_rate else {
            return;
        };
        let flow = &mut self.flows[f];
        let plen = if stamped {
            len as u64
        } else if rate <= self.low_rate {
            flow.credit = 0;
            len as u64
        } else if flow.credit > 0 {
            return;
        } else {
            (len as u64).max(self.quantum as u64)
        };
        let mut gap = ((plen as u128 * SEC as u128) / rate as u128).min(SEC as u128) as Time;
        if flow.time_next_packet != 0 {
            gap -= (gap / 2).min(now - flow.time_next_packet);
        }
        flow.time_next_packet = now + gap;
    }

    /// Sends the head packet of flow `f`, due at `due`: CE-marks it if it is late by more than
    /// `ce_threshold`, charges its credit and paces the flow.
    fn send(&mut self, f: usize, due: Time, ctx: &mut QueueCtx, now: Time) -> PktId {
        let id = self.flows[f].q.pop_front(ctx).expect("a head packet");
        if self.ce_threshold.is_some_and(|c| now - due > c) && ctx.mark(id) {
            self.ce_marks += 1;
        }
        let len = ctx.size(id);
        let stamped = ctx.tstamp(id) != 0;
        if stamped {
            ctx.set_tstamp(id, 0);
        }
        self.packets -= 1;
        self.bytes -= len as u64;
        self.flows[f].credit -= len as i64;
        self.pace(f, len, stamped, now);
        id
    }
}

impl Qdisc for SchFq {
    fn flow_queues(&self) -> bool {
        true
    }

    fn paces_departures(&self) -> bool {
        self.pacing
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        if self.packets >= self.limit || self.beyond_horizon(ctx, id, now) {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        let f = self.classify(ctx, id);
        let flow = &mut self.flows[f];
        if flow.q.len() as u64 >= self.flow_limit {
            self.flow_limit_drops += 1;
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        if !flow.born {
            flow.born = true;
            flow.credit = self.initial_quantum;
            flow.age = now;
        }
        if flow.state == State::Detached {
            flow.state = State::New;
            if now > flow.age + self.refill_delay {
                flow.credit = flow.credit.max(self.quantum);
            }
            self.new.push_back(f as u32);
        }
        let size = ctx.size(id);
        flow.q.push_back(id, size);
        self.packets += 1;
        self.bytes += size as u64;
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        if self.packets == 0 {
            return None;
        }
        self.unthrottle(now);
        loop {
            let (l, f) = match (self.new.front(), self.old.front()) {
                (Some(&f), _) => (List::New, f),
                (None, Some(&f)) => (List::Old, f),
                (None, None) => {
                    self.wake = self.delayed.peek().map(|Reverse(d)| d.0);
                    return None;
                }
            };
            let flow = &mut self.flows[f as usize];
            if flow.credit <= 0 {
                flow.credit += self.quantum;
                flow.state = State::Old;
                self.list(l).pop_front();
                self.old.push_back(f);
                continue;
            }
            let Some(head) = flow.q.front() else {
                self.retire(l, f, now);
                continue;
            };
            let due = time_to_send(ctx, head).max(flow.time_next_packet);
            if now < due {
                self.throttle(l, f, due);
                continue;
            }
            return Some(self.send(f as usize, due, ctx, now));
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.packets
    }

    fn next_timer(&self) -> Option<Time> {
        self.wake
    }

    fn on_timer(&mut self, _ctx: &mut QueueCtx, _now: Time) {
        self.wake = None;
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("flow_limit_drops", self.flow_limit_drops as f64),
            ("ce_marks", self.ce_marks as f64),
            ("throttled_flows", self.delayed.len() as f64),
            ("throttles", self.throttles as f64),
            ("horizon_drops", self.horizon_drops as f64),
            ("horizon_caps", self.horizon_caps as f64),
        ]
    }
}

/// When packet `id` may leave: its departure time if the sending host stamped one, else its
/// arrival (`fq_enqueue`'s `time_to_send`).
fn time_to_send(ctx: &QueueCtx, id: PktId) -> Time {
    match ctx.tstamp(id) {
        0 => ctx.enqueued_at(id),
        t => t,
    }
}

fn build(params: &Value, link: &LinkInfo, mut rng: Rng) -> Built<SchFq> {
    let p = read(params, FqParams::defaults(link), link)?;
    let q = SchFq::new(&p, rng.next_u64());
    Ok((q, written(&p)))
}

pub static INFO: [QdiscInfo<SchFq>; 1] = [QdiscInfo {
    name: "fq",
    summary: "fair queueing per flow with pacing: new/old flow lists with credit, per-flow maxrate",
    reference: "Linux sch_fq.c (6.6)",
    params: &[Group::of::<FqParams>()],
    build,
}];

#[cfg(test)]
mod tests;
