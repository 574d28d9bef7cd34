//! CAKE, Common Applications Kept Enhanced (Linux net/sched/sch_cake.c; Høiland-Jørgensen, Täht
//! and Morton, "Piece of CAKE", LANCOMM 2018; docs/disciplines.md): a shaper, Diffserv tins,
//! DRR++ flow queueing with host isolation, and COBALT on every flow queue, in one discipline.
//!
//! * [`shaper`]: the deficit-mode shaper at `bandwidth` with framing overhead, ATM and PTM.
//! * [`tins`]: the Diffserv presets; shaped, the highest-priority tin within its rate goes first,
//!   else the earliest; unshaped, DRR between the tins by their weights.
//! * [`hash`]: the 8-way set-associative flow table and the host isolation modes.
//! * [`cobalt`]: CoDel + BLUE per flow queue; CE marks for ECN-capable packets (always on, as
//!   Linux).
//! * DRR++ per tin as Linux: new (sparse) flows before old (bulk) ones, emptied flows whose
//!   COBALT state has not decayed kept on a decaying list; a flow's quantum is the tin's divided
//!   by its host's bulk flow count in the dual and triple modes (dithered with a random 16-bit
//!   fraction, as Linux).
//! * Overflow: above the buffer limit (modelled memory: size + 576 B per packet, as fq_codel;
//!   `memlimit` or derived) the head of the flow queue at the root of Linux's overflow heap
//!   ([`overflow`]) is dropped, and its BLUE steps up.
//! * `wash` clears the DSCP after the tin is chosen; `ingress` charges COBALT and overflow drops
//!   to the shaper and lets COBALT wait two MTU times per bulk flow of the tin.
//! * BLUE drops, never marks; a flow's last packet is never dropped at dequeue, whatever the
//!   verdict: it leaves unmarked unless CoDel's part marked it (Linux `cake_dequeue`).
//! * [`ack_filter`] (`ack_filter`, off by default): an arriving ACK drops an older one of its
//!   connection it makes redundant from the flow queue (drop reason `ack_filter`); in ingress
//!   mode the dropped ACK counts against the shaper.
//!
//! Left out: autorate, NAT lookups, GSO splitting (packets here are single segments).

pub mod ack_filter;
pub mod cobalt;
pub mod hash;
pub mod overflow;
pub mod shaper;
pub mod tins;

use super::fq_codel::MEMORY_OVERHEAD;
use super::fq_sched::packets;
use super::util::{flow_hash, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::{Dir, PktId};
use crate::params::{check_bytes, check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, as_size, Dur, Limit, LimitSpec, Size, Time, MS, SEC};
use ack_filter::AckFilter;
use cobalt::{CobaltParams, CobaltVars, Verdict, P_DEC, P_INC};
use hash::{FlowMode, Set, Table, QUEUES};
use overflow::OverflowHeap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use shaper::{advance_tin, Atm, Bandwidth, ByteTime, Framing, Shaper};
use std::collections::VecDeque;
use tins::TinMode;

/// CAKE's keys (defaults as Linux `cake_init`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CakeParams {
    /// shaped rate ("20Mbps") or "unlimited" (default, as Linux: the link's own rate paces)
    bandwidth: Bandwidth,
    /// Diffserv tins: besteffort, diffserv3 (default, as Linux), diffserv4, diffserv8 or
    /// precedence
    diffserv: TinMode,
    /// flow isolation: flowblind, srchost, dsthost, hosts, flows, dual-srchost, dual-dsthost or
    /// triple-isolate (default)
    isolation: FlowMode,
    /// COBALT's interval (the expected RTT); default 100ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    rtt: Time,
    /// COBALT's target sojourn (raised to 1.5 MTU times at low rates); default 5ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    target: Time,
    /// bytes of framing added to each IP packet's length for the shaper (-64..256); default 0
    overhead: i32,
    /// least length the shaper charges a packet, after the overhead (0..256 B); default 0
    mpu: u32,
    /// cell framing the shaper compensates: none (default), atm or ptm
    atm: Atm,
    /// total packets ("10240p", Linux's default); the buffer limit in bytes is derived from it,
    /// the bandwidth and rtt as Linux
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    limit: u64,
    /// buffer limit in bytes of modelled memory; default 0B: derived from the bandwidth, rtt
    /// and limit as Linux
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    memlimit: u64,
    /// clear the DSCP of every packet after choosing its tin (downstream hops see 0); default
    /// false
    wash: bool,
    /// ingress mode (shaping the downlink on the receiving side): packets dropped count against
    /// the shaper, and COBALT waits for a sojourn of two MTU times per bulk flow; default false
    ingress: bool,
    /// drop queued TCP ACKs a later ACK of their connection makes redundant: off (default, as
    /// Linux), on or aggressive
    ack_filter: AckFilter,
}

impl Params<LinkInfo> for CakeParams {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_time("rtt", self.rtt, 1_000, 10 * SEC)?;
        check_time("target", self.target, 1_000, 10 * SEC)?;
        check_range("overhead", self.overhead, -64, 256)?;
        check_range("mpu", self.mpu, 0, 256)?;
        check_range("limit", self.limit, 1, 1 << 24)?;
        check_bytes("memlimit", self.memlimit, 0, 1 << 40)
    }
}

impl CakeParams {
    fn defaults(link: &LinkInfo) -> CakeParams {
        CakeParams {
            bandwidth: Bandwidth(None),
            diffserv: TinMode::Diffserv3,
            isolation: FlowMode::TripleIsolate,
            rtt: 100 * MS,
            target: 5 * MS,
            overhead: 0,
            mpu: 0,
            atm: Atm::None,
            limit: match link.limit {
                Some(Limit::Packets(p)) => p,
                _ => 10_240,
            },
            memlimit: 0,
            wash: false,
            ingress: false,
            ack_filter: AckFilter::Off,
        }
    }

    /// The shaped rate in bytes per second (0: unlimited).
    fn bytes_per_s(&self) -> u64 {
        self.bandwidth.0.map_or(0, |b| b / 8)
    }

    /// The buffer limit in modelled bytes (`cake_reconfigure`): `memlimit`, else from the rate
    /// and `limit`.
    fn buffer_limit(&self, mtu: u32) -> u64 {
        if self.memlimit > 0 {
            return self.memlimit;
        }
        let by_rate = match self.bytes_per_s() {
            0 => u64::MAX,
            r => (r * (self.rtt / 1_000) / 250_000).max(4 << 20),
        };
        by_rate.min(self.limit * mtu as u64)
    }
}

/// One flow queue.
#[derive(Default)]
struct Flow {
    q: PacketQueue,
    deficit: i32,
    cvars: CobaltVars,
}

/// Which of a tin's lists a flow is served from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    New,
    Old,
    Decaying,
}

/// One tin: its flow queues and lists, its COBALT parameters, its share.
struct Tin {
    flows: Vec<Flow>,
    table: Table,
    new: VecDeque<u16>,
    old: VecDeque<u16>,
    decaying: VecDeque<u16>,
    sparse: u32,
    bulk: u32,
    decaying_count: u32,
    unresponsive: u32,
    cparams: CobaltParams,
    rate: ByteTime,
    next: Time,
    flow_quantum: u16,
    quantum: u16,
    deficit: i32,
    backlog: u64,
}

impl Tin {
    /// A tin shaped at `bytes_per_s` (0: unlimited) with DRR weight `quantum` (`cake_set_rate`).
    fn new(p: &CakeParams, bytes_per_s: u64, quantum: u16, mtu: u32) -> Tin {
        let rate = ByteTime::new(bytes_per_s);
        let flow_quantum = match bytes_per_s {
            0 => mtu as u64,
            r => (r >> 12).clamp(300, mtu as u64),
        } as u16;
        let mtu_time = rate.duration(mtu);
        let target = (mtu_time * 3 / 2).max(p.target);
        let cparams = CobaltParams {
            target,
            interval: (p.rtt + target - p.target).max(target * 2),
            mtu_time,
            p_inc: P_INC,
            p_dec: P_DEC,
        };
        Tin {
            flows: (0..QUEUES).map(|_| Flow::default()).collect(),
            table: Table::new(p.isolation),
            new: VecDeque::new(),
            old: VecDeque::new(),
            decaying: VecDeque::new(),
            sparse: 0,
            bulk: 0,
            decaying_count: 0,
            unresponsive: 0,
            cparams,
            rate,
            next: 0,
            flow_quantum,
            quantum,
            deficit: 0,
            backlog: 0,
        }
    }

    fn active(&self) -> bool {
        self.sparse + self.bulk > 0
    }

    fn list(&mut self, l: List) -> &mut VecDeque<u16> {
        match l {
            List::New => &mut self.new,
            List::Old => &mut self.old,
            List::Decaying => &mut self.decaying,
        }
    }

    /// The list DRR++ serves next: the decaying flows on the first pass, then new, old,
    /// decaying (`cake_dequeue`'s `retry`).
    fn pick(&self, first: bool) -> Option<List> {
        if first && !self.decaying.is_empty() {
            return Some(List::Decaying);
        }
        [
            (List::New, &self.new),
            (List::Old, &self.old),
            (List::Decaying, &self.decaying),
        ]
        .into_iter()
        .find(|(_, q)| !q.is_empty())
        .map(|(l, _)| l)
    }

    /// A flow's DRR++ quantum: the tin's, divided by its host's bulk flow count, dithered.
    fn flow_quantum(&self, f: usize, rng: &mut Rng) -> i32 {
        let div = 65535 / self.table.host_load(f) as u32;
        ((self.flow_quantum as u32 * div + (rng.next_u64() as u16) as u32) >> 16) as i32
    }

    /// A packet arrived in flow `f`: it joins the new list if idle or decaying, or the bulk
    /// count if it was waiting as sparse.
    fn activate(&mut self, f: usize, rng: &mut Rng) {
        match self.table.set[f] {
            Set::None | Set::Decaying => {
                if self.table.set[f] == Set::Decaying {
                    self.decaying.retain(|&x| x as usize != f);
                    self.decaying_count -= 1;
                }
                self.new.push_back(f as u16);
                self.table.set[f] = Set::Sparse;
                self.sparse += 1;
                self.flows[f].deficit = self.flow_quantum(f, rng);
            }
            Set::SparseWait => {
                self.table.set[f] = Set::Bulk;
                self.sparse -= 1;
                self.bulk += 1;
                self.table.inc_bulk(f);
            }
            Set::Sparse | Set::Bulk => {}
        }
    }

    /// The flow at the head of `list` used up its deficit: it becomes bulk (if it still has
    /// packets) and goes to the tail of the old list with a new quantum.
    fn rotate(&mut self, list: List, f: usize, rng: &mut Rng) {
        if self.table.set[f] == Set::Sparse {
            if self.flows[f].q.is_empty() {
                self.table.set[f] = Set::SparseWait;
            } else {
                self.sparse -= 1;
                self.bulk += 1;
                self.table.inc_bulk(f);
                self.table.set[f] = Set::Bulk;
            }
        }
        self.flows[f].deficit += self.flow_quantum(f, rng);
        self.list(list).pop_front();
        self.old.push_back(f as u16);
    }

    /// The flow at the head of `list` was found empty at `now`: it decays on the decaying list
    /// while COBALT is still active, else it leaves the lists.
    fn retire(&mut self, list: List, f: usize, now: Time) {
        let cv = &mut self.flows[f].cvars;
        if cv.queue_empty(&self.cparams, now) {
            self.unresponsive = self.unresponsive.saturating_sub(1);
        }
        let keep = cv.active(now);
        self.list(list).pop_front();
        let set = self.table.set[f];
        match set {
            Set::Bulk => {
                self.bulk -= 1;
                self.table.dec_bulk(f);
            }
            Set::Sparse | Set::SparseWait => self.sparse -= 1,
            Set::Decaying => self.decaying_count -= 1,
            Set::None => {}
        }
        if keep {
            self.decaying.push_back(f as u16);
            self.decaying_count += 1;
            self.table.set[f] = Set::Decaying;
        } else {
            self.table.set[f] = Set::None;
        }
    }
}

pub struct Cake {
    tins: Vec<Tin>,
    mode: TinMode,
    /// `bandwidth`, bit/s (`None`: unlimited).
    bandwidth: Option<u64>,
    shaper: Shaper,
    framing: Framing,
    cur_tin: usize,
    packets: u64,
    bytes: u64,
    buffer_used: u64,
    buffer_limit: u64,
    seed: u64,
    host_seed: u64,
    rng: Rng,
    /// When the shaper lets the next packet go, after a dequeue it held back.
    wake: Option<Time>,
    heap: OverflowHeap,
    wash: bool,
    ingress: bool,
    ack_filter: AckFilter,
    drops: u64,
    marks: u64,
    overflow_drops: u64,
}

/// The keys of a packet's client and server hosts (two name spaces: low bit 0 and 1).
fn host_keys(p: &crate::packet::Packet) -> (u64, u64) {
    ((p.host as u64) << 1, (p.server as u64) << 1 | 1)
}

impl Cake {
    /// The flow hash and the source and destination host hashes of packet `id`.
    fn hashes(&self, ctx: &QueueCtx, id: PktId) -> (u32, u32, u32) {
        let p = ctx.pool.get(id);
        let (client, server) = host_keys(p);
        let (src, dst) = match p.dir {
            Dir::Up => (client, server),
            Dir::Down => (server, client),
        };
        let h = |k| flow_hash(k, self.host_seed);
        (flow_hash(ctx.hash_key(id), self.seed), h(src), h(dst))
    }

    /// Bytes queued in flow `f` of tin `t` (0 for a tin the mode does not use).
    fn flow_backlog(tins: &[Tin], t: usize, f: usize) -> u64 {
        tins.get(t).map_or(0, |tin| tin.flows[f].q.bytes())
    }

    /// Overflow: drops the head of the flow queue at the root of the overflow heap
    /// (`cake_drop`); in ingress mode it counts against the shaper.
    fn drop_longest(&mut self, ctx: &mut QueueCtx, now: Time) {
        let tins = &self.tins;
        let (t, f) = self.heap.root(|t, f| Self::flow_backlog(tins, t, f));
        let Some(id) = self.tins.get_mut(t).and_then(|tin| tin.flows[f].q.pop_front(ctx)) else {
            self.heap.invalidate();
            return;
        };
        let tin = &mut self.tins[t];
        if tin.flows[f].cvars.queue_full(&tin.cparams, now) {
            tin.unresponsive += 1;
        }
        if self.ingress {
            self.advance_shaper(t, self.framing.adjusted(ctx.size(id)), now, true);
        }
        self.forget(t, ctx.size(id));
        self.overflow_drops += 1;
        ctx.drop_packet(id, DropReason::FatFlow);
        let tins = &self.tins;
        self.heap.dropped(|t, f| Self::flow_backlog(tins, t, f));
    }

    /// The ACK filter, after an arrival joined flow `f` of tin `t`: drops the older ACK it made
    /// redundant, if any (`cake_enqueue` after `cake_ack_filter`); in ingress mode it counts
    /// against the shaper.
    fn filter_ack(&mut self, t: usize, f: usize, ctx: &mut QueueCtx, now: Time) {
        let q = &mut self.tins[t].flows[f].q;
        let aggressive = self.ack_filter == AckFilter::Aggressive;
        let Some(id) = ack_filter::victim(q, ctx.pool, aggressive).and_then(|i| q.remove(i, ctx)) else {
            return;
        };
        let size = ctx.size(id);
        if self.ingress {
            self.advance_shaper(t, self.framing.adjusted(size), now, true);
        }
        self.forget(t, size);
        ctx.drop_packet(id, DropReason::AckFilter);
    }

    /// A packet of `size` bytes left tin `t` (sent or dropped).
    fn forget(&mut self, t: usize, size: u32) {
        self.tins[t].backlog -= size as u64;
        self.packets -= 1;
        self.bytes -= size as u64;
        self.buffer_used -= size as u64 + MEMORY_OVERHEAD;
    }

    /// The tin to serve (`cake_dequeue`'s class choice), or None when nothing can be sent.
    fn choose_tin(&mut self, now: Time) -> Option<usize> {
        if self.shaper.rate.unlimited() {
            let (mut wrapped, mut empty) = (false, true);
            while self.tins[self.cur_tin].deficit < 0 || !self.tins[self.cur_tin].active() {
                let b = &mut self.tins[self.cur_tin];
                if b.deficit <= 0 {
                    b.deficit += b.quantum as i32;
                }
                if b.active() {
                    empty = false;
                }
                self.cur_tin += 1;
                if self.cur_tin >= self.tins.len() {
                    self.cur_tin = 0;
                    if wrapped && empty {
                        return None;
                    }
                    wrapped = true;
                }
            }
            return Some(self.cur_tin);
        }
        // the highest tin within its schedule, else the earliest scheduled
        let mut best = (i64::MAX, 0);
        for (t, b) in self.tins.iter().enumerate().filter(|(_, b)| b.active()) {
            let to_go = b.next.wrapping_sub(now) as i64;
            if to_go <= 0 || to_go <= best.0 {
                best = (to_go, t);
            }
        }
        self.cur_tin = best.1;
        self.tins[best.1].active().then_some(best.1)
    }

    /// Takes the next packet of tin `t` through DRR++ and COBALT, with its flow; None: the
    /// flow served was empty (the caller chooses again). `first`: no flow was looked at yet in
    /// this dequeue (only the first look prefers the decaying flows, so that one dequeue never
    /// revisits them).
    fn dequeue_tin(
        &mut self,
        t: usize,
        first: &mut bool,
        ctx: &mut QueueCtx,
        now: Time,
    ) -> Option<(PktId, usize)> {
        loop {
            let tin = &mut self.tins[t];
            let list = tin.pick(*first)?;
            *first = false;
            let f = *tin.list(list).front().expect("a non-empty list") as usize;
            if tin.flows[f].deficit <= 0 {
                tin.rotate(list, f, &mut self.rng);
                continue;
            }
            loop {
                let tin = &mut self.tins[t];
                let Some(id) = tin.flows[f].q.pop_front(ctx) else {
                    tin.retire(list, f, now);
                    return None;
                };
                let sojourn = now.saturating_sub(ctx.enqueued_at(id));
                let ect = ctx.pool.get(id).ecn.capable();
                let bulk = if self.ingress { tin.bulk as u64 } else { 0 };
                let verdict =
                    tin.flows[f]
                        .cvars
                        .should_drop(&tin.cparams, now, sojourn, bulk, ect, &mut self.rng);
                let last = tin.flows[f].q.is_empty();
                self.forget(t, ctx.size(id));
                if verdict != Verdict::Drop || last {
                    if verdict == Verdict::Mark && ctx.mark(id) {
                        self.marks += 1;
                    }
                    return Some((id, f));
                }
                if self.ingress {
                    self.charge(t, f, id, ctx, now, true);
                }
                self.drops += 1;
                ctx.drop_packet(id, DropReason::Head);
            }
        }
    }

    /// Charges a packet sent (or, in ingress mode, `dropped` by COBALT) to its flow `f`, its
    /// tin `t` and the shaper.
    fn charge(&mut self, t: usize, f: usize, id: PktId, ctx: &QueueCtx, now: Time, dropped: bool) {
        let len = self.framing.adjusted(ctx.size(id));
        let tin = &mut self.tins[t];
        tin.flows[f].deficit -= len as i32;
        tin.deficit -= len as i32;
        self.advance_shaper(t, len, now, dropped);
    }

    /// Moves tin `t`'s clock and the shaper's by `len` adjusted bytes (`cake_advance_shaper`).
    fn advance_shaper(&mut self, t: usize, len: u32, now: Time, dropped: bool) {
        if !self.shaper.rate.unlimited() {
            let tin = &mut self.tins[t];
            advance_tin(&mut tin.next, &tin.rate, len, now);
            self.shaper.advance(len, dropped);
        }
    }
}

impl Qdisc for Cake {
    fn flow_queues(&self) -> bool {
        true
    }
    fn shaped_rate(&self) -> Option<u64> {
        self.bandwidth
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        let t = self.mode.tin(ctx.dscp(id)).min(self.tins.len() - 1);
        if self.wash {
            ctx.pool.get_mut(id).dscp = 0;
        }
        let (fh, src, dst) = self.hashes(ctx, id);
        if self.tins[t].backlog == 0 {
            let tin = &mut self.tins[t];
            tin.next = tin.next.max(now);
            if self.packets == 0 {
                self.shaper.restart(now);
            }
        }
        let size = ctx.size(id);
        let tin = &mut self.tins[t];
        let f = tin.table.classify(fh, src, dst);
        tin.flows[f].q.push_back(id, size);
        tin.backlog += size as u64;
        self.packets += 1;
        self.bytes += size as u64;
        self.buffer_used += size as u64 + MEMORY_OVERHEAD;
        if self.ack_filter != AckFilter::Off {
            self.filter_ack(t, f, ctx, now);
        }
        let tin = &mut self.tins[t];
        tin.activate(f, &mut self.rng);
        let tins = &self.tins;
        self.heap.grew(t, f, |t, f| Self::flow_backlog(tins, t, f));
        while self.buffer_used > self.buffer_limit {
            self.drop_longest(ctx, now);
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let mut first = true;
        loop {
            if self.packets == 0 {
                return None;
            }
            if let Some(at) = self.shaper.throttled(now) {
                self.wake = Some(at);
                return None;
            }
            let t = self.choose_tin(now)?;
            if let Some((id, f)) = self.dequeue_tin(t, &mut first, ctx, now) {
                self.charge(t, f, id, ctx, now, false);
                self.heap.sent();
                return Some(id);
            }
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
        let ways = self.tins.iter().fold([0u64; 4], |a, t| {
            let s = t.table.stats;
            [
                a[0] + s.directs,
                a[1] + s.hits,
                a[2] + s.misses,
                a[3] + s.collisions,
            ]
        });
        let p_drop = self
            .tins
            .iter()
            .flat_map(|t| t.flows.iter().map(|f| f.cvars.p_drop))
            .max()
            .unwrap_or(0);
        vec![
            ("cobalt_drops", self.drops as f64),
            ("cobalt_marks", self.marks as f64),
            ("overflow_drops", self.overflow_drops as f64),
            ("way_directs", ways[0] as f64),
            ("way_hits", ways[1] as f64),
            ("way_misses", ways[2] as f64),
            ("way_collisions", ways[3] as f64),
            ("max_blue_p_drop", p_drop as f64 / (1u64 << 32) as f64),
            ("memory_bytes", self.buffer_used as f64),
        ]
    }
}

fn build(params: &Value, link: &LinkInfo, mut rng: Rng) -> Built<Cake> {
    let p = read(params, CakeParams::defaults(link), link)?;
    let rate = p.bytes_per_s();
    let tins = p
        .diffserv
        .shares(rate)
        .iter()
        .map(|s| Tin::new(&p, s.rate, s.quantum, link.mtu))
        .collect();
    let q = Cake {
        tins,
        mode: p.diffserv,
        bandwidth: p.bandwidth.0,
        shaper: Shaper {
            rate: ByteTime::new(rate),
            ..Shaper::default()
        },
        framing: Framing {
            overhead: p.overhead,
            mpu: p.mpu,
            atm: p.atm,
        },
        cur_tin: 0,
        packets: 0,
        bytes: 0,
        buffer_used: 0,
        buffer_limit: p.buffer_limit(link.mtu),
        seed: rng.next_u64(),
        host_seed: rng.next_u64(),
        rng,
        wake: None,
        heap: OverflowHeap::default(),
        wash: p.wash,
        ingress: p.ingress,
        ack_filter: p.ack_filter,
        drops: 0,
        marks: 0,
        overflow_drops: 0,
    };
    Ok((q, written(&p)))
}

pub static INFO: [QdiscInfo<Cake>; 1] = [QdiscInfo {
    name: "cake",
    summary: "shaper, Diffserv tins, DRR++ with host isolation and COBALT (CoDel + BLUE) per flow",
    reference: "Linux sch_cake; Høiland-Jørgensen, Täht, Morton, \"Piece of CAKE\", LANCOMM 2018",
    params: &[Group::of::<CakeParams>()],
    build,
}];

#[cfg(test)]
mod tests;
