//! The world and its event loop. The world owns time, the packet slab, the hops of both
//! directions' paths, the propagation pipes and the flows' endpoints; components are sans-I/O
//! state machines that are handed `now` (docs/architecture.md, principle 1).
//!
//! Path of a packet of flow f sent in direction d: source endpoint -> access pipe of (f, d) ->
//! hop 1 of d (qdisc, serialiser) -> hop 1's delay pipe -> hop 2 ... -> last hop of d -> the
//! other access pipe of (f, d) -> the endpoint at the other end. The one-hop shorthand is a
//! chain of one hop per direction with no hop delay. Events are ordered by time, ties by insertion order (FIFO), so a run is a pure
//! function of (scenario, seed).

use crate::app::ping::{PingClient, PingServer, ProbeRecord};
use crate::app::repeat::{RepeatReceiver, RepeatSender};
use crate::app::udp::{UdpSink, UdpSource};
use crate::app::web::{WebClient, WebServer};
use crate::app::webpage::{PageClient, PageServer};
use crate::net::wifi::Medium;
use crate::net::{nic_departure, sample_hops, HopParts, Hops, HostJitter, Link, Pipe};
use crate::packet::{Dir, Packet, PacketPool, PktId};
use crate::queue::{local_verdict, DropReason, LocalVerdict, Qdisc, QueueEvent};
use crate::record::rows::{CcReport, FlowReport};
use crate::record::{Recorder, OUTCOME_DROP_BASE};
use crate::transport::tcp::{TcpReceiver, TcpSender};
use crate::transport::{Endpoint, Outbox};
use crate::units::Time;

pub mod events;

use events::EventQueue;

/// Events between two calls of a run's watcher (`World::run_watched`): a power of two, so the
/// test on the hot path is a mask; well under a millisecond of wall time apart.
pub const WATCH_EVERY: u64 = 4096;

/// Every kind of endpoint, dispatched statically.
pub enum AnyEndpoint {
    UdpSource(Box<UdpSource>),
    UdpSink(Box<UdpSink>),
    PingClient(Box<PingClient>),
    PingServer(Box<PingServer>),
    TcpSender(Box<TcpSender>),
    TcpReceiver(Box<TcpReceiver>),
    WebServer(Box<WebServer>),
    WebClient(Box<WebClient>),
    PageServer(Box<PageServer>),
    PageClient(Box<PageClient>),
    RepeatSender(Box<RepeatSender>),
    RepeatReceiver(Box<RepeatReceiver>),
}

macro_rules! dispatch {
    ($self:ident, $e:ident => $call:expr) => {
        match $self {
            AnyEndpoint::UdpSource($e) => $call,
            AnyEndpoint::UdpSink($e) => $call,
            AnyEndpoint::PingClient($e) => $call,
            AnyEndpoint::PingServer($e) => $call,
            AnyEndpoint::TcpSender($e) => $call,
            AnyEndpoint::TcpReceiver($e) => $call,
            AnyEndpoint::WebServer($e) => $call,
            AnyEndpoint::WebClient($e) => $call,
            AnyEndpoint::PageServer($e) => $call,
            AnyEndpoint::PageClient($e) => $call,
            AnyEndpoint::RepeatSender($e) => $call,
            AnyEndpoint::RepeatReceiver($e) => $call,
        }
    };
}

impl Endpoint for AnyEndpoint {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, e => e.start(now, out))
    }
    #[inline]
    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        dispatch!(self, e => e.on_packet(pkt, now, out))
    }
    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        dispatch!(self, e => e.on_timer(now, out))
    }
    #[inline]
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, e => e.next_timer())
    }
    fn report(&self, r: &mut FlowReport) {
        dispatch!(self, e => e.report(r))
    }
    fn cc_report(&self, r: &mut CcReport) {
        dispatch!(self, e => e.cc_report(r))
    }
    fn hears_local_verdicts(&self) -> bool {
        dispatch!(self, e => e.hears_local_verdicts())
    }
    fn on_local_verdicts(&mut self, refused: &[(Packet, LocalVerdict)], now: Time) {
        dispatch!(self, e => e.on_local_verdicts(refused, now))
    }
    fn at_host(&mut self, edt: bool) -> bool {
        dispatch!(self, e => e.at_host(edt))
    }
    fn left_host(&mut self, size: u32, now: Time, out: &mut Outbox) {
        dispatch!(self, e => e.left_host(size, now, out))
    }
}

/// Which end of a flow: the data source or the sink.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    Src = 0,
    Dst = 1,
}

/// A flow at run time: its two endpoints and the world's own accounting of its packets.
///
/// Laid out by use (`repr(C)`, aligned to a 64-byte cache line): at thousands of flows a
/// packet finds its flow's state out of the caches, so what a packet reads is packed into two
/// lines. The first holds what a delivery reads (the receiving end, its armed timer, the
/// received count, the direction); the second what a send reads (the NIC, the entry pipes,
/// the hosts' stamps, the sent count); the rest is read at set-up, at a drop or a mark, and at
/// the end. What the hops read of a flow is kept apart ([`FlowAtHops`]).
#[repr(C, align(64))]
pub struct Flow {
    pub ends: [AnyEndpoint; 2],
    /// Deadline of each endpoint's timer event currently in the event queue ([`NOT_ARMED`]:
    /// none).
    armed: [Time; 2],
    pub received: u64,
    /// Direction of the flow's data (probes: up).
    pub dir: Dir,
    // Second line (starts with a field aligned to 8 bytes, so at byte 64).
    /// When each side's NIC finishes its last queued packet (indexed by `Side`).
    nic_free: [Time; 2],
    /// The NIC rate of the flow's two hosts (`None`: packets leave a host at once).
    pub nic_rate: Option<u64>,
    /// The hosts' timing noise (`host_jitter`); `None`: a packet is ready for the NIC when sent.
    pub host_jitter: Option<Box<HostJitter>>,
    /// Packets put on the path.
    pub sent: u64,
    /// The access pipe this flow's packets enter when sent in each direction (indexed by
    /// `Dir::index`; the pipe they leave the path by is `FlowAtHops::exit`).
    entry: [u32; 2],
    /// The client and server hosts of this flow (`Packet::host`, `Packet::server`).
    pub host: u16,
    pub server: u16,
    /// Per direction, whether the packets sent in it meet the first hop's qdisc on their own
    /// host (`local_sender`): no NIC or access delay before it, and the verdict told to the
    /// sending endpoint.
    pub local: [bool; 2],
    /// The DSCP both hosts put on this flow's packets.
    pub dscp: u8,
    /// Whether the hosts expose the flow's connections to the classifiers (`Packet::tuple_conn`).
    pub hash_connections: bool,
    // The rest.
    pub start: Time,
    /// One-way delays (client side, server side) of this flow's access paths.
    pub client_delay: Time,
    pub server_delay: Time,
    /// Per direction (`Dir::index`), the first and last hop this flow's packets cross (indices
    /// into the world's links); `None`: the whole chain.
    pub route: [Option<(u32, u32)>; 2],
    /// Per direction, the link of this flow's host where a hop has one per host (read at a
    /// `Link::parallel` hop only).
    pub host_links: [u32; 2],
    /// The WiFi station this flow's client is (an index into the medium's stations).
    pub station: u16,
    /// Packets dropped / marked on the path.
    pub dropped: u64,
    pub marked: u64,
}

/// What the hops read of a flow, at every arrival at a queue, departure from it and exit from
/// the path: dense and apart from [`Flow`] (12 bytes a flow), so it stays in the caches at
/// thousands of flows.
#[derive(Clone, Copy)]
struct FlowAtHops {
    /// Packets of the flow in the hops' queues.
    queued: u32,
    /// The access pipe a packet of the flow enters when it leaves the path (indexed by
    /// `Dir::index`).
    exit: [u32; 2],
}

/// `Flow::armed` of an endpoint with no timer event in the queue.
const NOT_ARMED: Time = Time::MAX;

impl Flow {
    pub fn new(
        dir: Dir,
        start: Time,
        src: AnyEndpoint,
        dst: AnyEndpoint,
        client_delay: Time,
        server_delay: Time,
        nic_rate: Option<u64>,
    ) -> Flow {
        Flow {
            dir,
            start,
            ends: [src, dst],
            armed: [NOT_ARMED; 2],
            client_delay,
            server_delay,
            entry: [0; 2],
            nic_rate,
            dscp: 0,
            hash_connections: false,
            station: 0,
            host: 0,
            server: 0,
            route: [None; 2],
            host_links: [0; 2],
            local: [false; 2],
            nic_free: [0; 2],
            host_jitter: None,
            sent: 0,
            received: 0,
            dropped: 0,
            marked: 0,
        }
    }

    /// The endpoint that emits packets travelling in direction `d`.
    fn side_sending(&self, d: Dir) -> Side {
        if d == self.dir {
            Side::Src
        } else {
            Side::Dst
        }
    }

    pub fn report(&self) -> FlowReport {
        let mut r = FlowReport::default();
        self.ends[0].report(&mut r);
        self.ends[1].report(&mut r);
        r
    }

    /// Its congestion controller's state now (all None for a flow without one).
    pub fn cc_report(&self) -> CcReport {
        let mut r = CcReport::default();
        self.ends[0].cc_report(&mut r);
        self.ends[1].cc_report(&mut r);
        r
    }

    /// The exchange records, if this is a web flow.
    pub fn web_records(&self) -> Option<&[crate::record::rows::ExchangeRecord]> {
        match &self.ends[1] {
            AnyEndpoint::WebClient(c) => Some(&c.records),
            _ => None,
        }
    }

    /// The fetch records, if this is a webpage flow.
    pub fn page_records(&self) -> Option<&[crate::record::rows::FetchRecord]> {
        match &self.ends[1] {
            AnyEndpoint::PageClient(c) => Some(&c.records),
            _ => None,
        }
    }

    /// The probe records, if this is a ping flow.
    pub fn probe_records(&self) -> Option<&[ProbeRecord]> {
        match &self.ends[0] {
            AnyEndpoint::PingClient(c) => Some(&c.records),
            _ => None,
        }
    }

    /// Whether probe `seq` of this ping flow reached its echo server.
    pub fn probe_reached(&self, seq: u64) -> bool {
        match &self.ends[1] {
            AnyEndpoint::PingServer(s) => s.reached(seq),
            _ => false,
        }
    }

    /// Pre-bottleneck (access) delay for packets travelling in direction `d`.
    fn pre_delay(&self, d: Dir) -> Time {
        match d {
            Dir::Up => self.client_delay,
            Dir::Down => self.server_delay,
        }
    }

    fn post_delay(&self, d: Dir) -> Time {
        self.pre_delay(d.reverse())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The head packet of pipe i arrives at its far end.
    Pipe(u32),
    /// Hop l finished serialising its packet.
    TxDone(u32),
    /// The transmission on medium m (an aggregate and its block ACK) ended.
    Air(u32),
    /// Hop l's trace opportunity or slot start (`Hops::wake_at`).
    Wake(u32),
    /// The qdisc of hop l asked for its timer.
    QdiscTimer(u32),
    /// An endpoint's timer.
    Endpoint(u32, Side),
    /// A flow starts.
    Start(u32),
    /// Periodic recording.
    Sample,
}

/// What the event loop's events did, by kind (`World::kinds`): where a run's events go, for the
/// benchmarks. An event whose deadline moved before it came is counted apart from the rest of
/// its kind: superseded (a new event was scheduled for an earlier deadline) or early (the
/// deadline moved later; the event wakes the endpoint for nothing and re-arms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A packet reaches the path from its host (the access pipe towards the first hop).
    AccessIn,
    /// A packet reaches its endpoint (the access pipe away from the last hop).
    AccessOut,
    /// A packet reaches the next hop through a hop's delay.
    HopPipe,
    PipeSuperseded,
    TxDone,
    Air,
    QdiscTimer,
    QdiscSuperseded,
    EndpointTimer,
    EndpointEarly,
    EndpointSuperseded,
    Start,
    Sample,
}

impl EventKind {
    pub const ALL: [EventKind; 13] = [
        EventKind::AccessIn,
        EventKind::AccessOut,
        EventKind::HopPipe,
        EventKind::PipeSuperseded,
        EventKind::TxDone,
        EventKind::Air,
        EventKind::QdiscTimer,
        EventKind::QdiscSuperseded,
        EventKind::EndpointTimer,
        EventKind::EndpointEarly,
        EventKind::EndpointSuperseded,
        EventKind::Start,
        EventKind::Sample,
    ];

    /// The kind's name in snake case.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::AccessIn => "access_in",
            EventKind::AccessOut => "access_out",
            EventKind::HopPipe => "hop_pipe",
            EventKind::PipeSuperseded => "pipe_superseded",
            EventKind::TxDone => "tx_done",
            EventKind::Air => "air",
            EventKind::QdiscTimer => "qdisc_timer",
            EventKind::QdiscSuperseded => "qdisc_superseded",
            EventKind::EndpointTimer => "endpoint_timer",
            EventKind::EndpointEarly => "endpoint_early",
            EventKind::EndpointSuperseded => "endpoint_superseded",
            EventKind::Start => "start",
            EventKind::Sample => "sample",
        }
    }
}

/// Position of the (direction, pre/post) pipe in a delay slot's group of four.
#[inline]
fn pipe_slot(d: Dir, post: bool) -> usize {
    d.index() * 2 + post as usize
}

pub struct World {
    pub now: Time,
    pub end: Time,
    /// Packet events (pipe heads, ends of serialisation): few pending at any time.
    heap: EventQueue<Ev>,
    /// Timers and the rest (endpoint and qdisc timers, flow starts, samples): one or two per
    /// flow pending, mostly far in the future. Kept apart so the busy packet-event heap stays
    /// small; both draw from one sequence, so merging them keeps the (time, FIFO) order.
    timers: EventQueue<Ev>,
    seq: u64,
    pub events: u64,
    /// The events by kind (indexed by `EventKind as usize`; they sum to `events`).
    pub kinds: [u64; EventKind::ALL.len()],
    pub pool: PacketPool,
    /// Every hop: the up direction's chain first, then the down direction's.
    pub links: Vec<Link>,
    /// The first hop of each direction's chain (indexed by `Dir::index`).
    first: [u32; 2],
    /// Pipes: the flows' access pipes first, then one per hop with a delay.
    pipes: Vec<Pipe>,
    /// Index of the first hop pipe in `pipes`.
    hop_pipes: usize,
    /// For each hop pipe, the hop its packets arrive at (`u32::MAX`: the pipe follows a chain's
    /// last hop, and its packets go on to their flows' access paths).
    hop_pipe_next: Vec<u32>,
    /// For each hop with a delay, its pipe (indexed like `links`; unused for the others).
    link_pipe: Vec<u32>,
    /// Some flow enters a chain after its first hop (arrivals then look up the flow's route).
    inner_entry: bool,
    pub flows: Vec<Flow>,
    /// What the hops read of each flow (indexed like `flows`).
    at_hops: Vec<FlowAtHops>,
    /// Shared WiFi media, each with the hops that transmit on it (`Link::wifi`).
    pub media: Vec<Medium>,
    pub rec: Recorder,
    out: Outbox,
    qev: Vec<QueueEvent>,
    /// The packets of the current send that a local qdisc refused (`Flow::local`).
    refused: Vec<(Packet, LocalVerdict)>,
    /// The `local_sender` hop whose senders count what they have in their host (pacing by
    /// departure time, TCP Small Queues), whose ends of transmission, or frames' TX status on
    /// WiFi, and drops are their packets' completions (`usize::MAX`: none).
    host_hop: usize,
    /// The completions of the current event other than ends of transmission on a wired
    /// `host_hop` (drops, WiFi frames' TX status), told to their senders after it: (flow, its
    /// side that sent, size).
    freed: Vec<(u32, Side, u32)>,
    /// The packet `send_local` is offering whose refusal (NET_XMIT_DROP) its sender hears:
    /// its drop is not a completion.
    refusing: Option<PktId>,
}

impl World {
    /// A world over `links`, the hops of both directions' chains, each linked to its successor
    /// by `Link::next` (the up chain first).
    pub fn new(end: Time, mut links: Vec<Link>, mut flows: Vec<Flow>, rec: Recorder) -> World {
        // Flows with equal access delays share their pipes: a pipe is a constant-delay FIFO, so
        // packets of many flows stay in arrival order in one ring with one pending event
        // (pipe i = delay slot * 4 + direction * 2 + post). Packets leaving a host's NIC later
        // than now are inserted in arrival-time order.
        let mut delays: Vec<Time> = flows
            .iter()
            .flat_map(|f| [f.client_delay, f.server_delay])
            .collect();
        delays.sort_unstable();
        delays.dedup();
        let mut pipes = Vec::with_capacity(delays.len() * 4);
        for &delay in &delays {
            pipes.extend((0..4).map(|_| Pipe {
                delay,
                ..Pipe::default()
            }));
        }
        let pipe_of = |delay: Time, d: Dir, post: bool| {
            let slot = delays.binary_search(&delay).expect("every delay has a slot");
            (slot * 4 + pipe_slot(d, post)) as u32
        };
        for f in &mut flows {
            f.entry = Dir::BOTH.map(|d| pipe_of(f.pre_delay(d), d, false));
        }
        let at_hops = flows
            .iter()
            .map(|f| FlowAtHops {
                queued: 0,
                exit: Dir::BOTH.map(|d| pipe_of(f.post_delay(d), d, true)),
            })
            .collect();
        let hop_pipes = pipes.len();
        let mut hop_pipe_next = Vec::new();
        let mut link_pipe = vec![u32::MAX; links.len()];
        for (k, l) in links.iter().enumerate() {
            if l.delay > 0 {
                link_pipe[k] = pipes.len() as u32;
                pipes.push(Pipe {
                    delay: l.delay,
                    ..Pipe::default()
                });
                hop_pipe_next.push(l.next.unwrap_or(u32::MAX));
            }
        }
        let first = Dir::BOTH.map(|d| {
            let starts = links.iter().enumerate().filter(|(_, l)| l.dir == d);
            let mut heads = starts.filter(|&(i, _)| !links.iter().any(|m| m.next == Some(i as u32)));
            heads.next().expect("every direction has a hop").0 as u32
        });
        let mut inner_entry = false;
        for f in &flows {
            for d in Dir::BOTH {
                if let Some((a, b)) = f.route[d.index()] {
                    inner_entry |= a != first[d.index()];
                    let l = &mut links[b as usize];
                    l.exit_here |= l.next.is_some();
                }
            }
        }
        let mut w = World {
            now: 0,
            end,
            heap: EventQueue::new(),
            timers: EventQueue::new(),
            seq: 0,
            events: 0,
            kinds: [0; EventKind::ALL.len()],
            pool: PacketPool::new(),
            links,
            first,
            pipes,
            hop_pipes,
            hop_pipe_next,
            link_pipe,
            inner_entry,
            at_hops,
            flows,
            media: Vec::new(),
            rec,
            out: Vec::new(),
            qev: Vec::new(),
            refused: Vec::new(),
            host_hop: usize::MAX,
            freed: Vec::new(),
            refusing: None,
        };
        w.at_host();
        for i in 0..w.flows.len() {
            let t = w.flows[i].start;
            w.schedule(t, Ev::Start(i as u32));
        }
        if w.rec.series_enabled() {
            w.schedule(0, Ev::Sample);
        }
        for l in 0..w.links.len() {
            w.arm_qdisc_timer(l);
        }
        w
    }

    #[inline]
    fn schedule(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        match ev {
            Ev::Pipe(_) | Ev::TxDone(_) | Ev::Air(_) | Ev::Wake(_) => self.heap.push_seq(t, self.seq, ev),
            _ => self.timers.push_seq(t, self.seq, ev),
        }
    }

    /// Runs the event loop until the end time (events at exactly `end` still run), handing the
    /// world to `keep_going` at every [`WATCH_EVERY`]th event, before handling it (for an
    /// interrupt or a progress report); when it answers false the loop stops there. Returns
    /// whether the run reached its end. Watching changes nothing in the run: `keep_going` only
    /// reads the world. (A `dyn` watcher keeps the loop compiled here, with its callees inlined,
    /// whoever watches.)
    pub fn run_watched(&mut self, keep_going: &mut dyn FnMut(&World) -> bool) -> bool {
        loop {
            // The event handled last is removed from its queue now, unless it scheduled its
            // follow-up there (`EventQueue::take`).
            self.heap.settle();
            self.timers.settle();
            // An empty queue's key is u128::MAX, above every event's (time, seq).
            let a = self.heap.peek_key().unwrap_or(u128::MAX);
            let b = self.timers.peek_key().unwrap_or(u128::MAX);
            let (queue, key) = if b < a {
                (&mut self.timers, b)
            } else {
                (&mut self.heap, a)
            };
            if key == u128::MAX || (key >> 64) as Time > self.end {
                break;
            }
            let (t, ev) = queue.take().expect("peeked");
            self.now = t;
            self.events += 1;
            if self.events.is_multiple_of(WATCH_EVERY) && !keep_going(self) {
                return false;
            }
            match ev {
                Ev::Pipe(i) => self.pipe_arrivals(i as usize),
                Ev::TxDone(l) => {
                    self.count(EventKind::TxDone);
                    if l as usize == self.host_hop {
                        self.tx_done_in_host(l as usize)
                    } else {
                        self.tx_done(l as usize)
                    }
                }
                Ev::Air(m) => {
                    self.count(EventKind::Air);
                    self.air_done(m as usize)
                }
                Ev::Wake(l) => {
                    // a trace's opportunity is its hop's transmission
                    self.count(EventKind::TxDone);
                    self.wake(l as usize)
                }
                Ev::QdiscTimer(l) => self.qdisc_timer(l as usize, t),
                Ev::Endpoint(f, s) => self.endpoint_timer(f, s, t),
                Ev::Start(f) => {
                    self.count(EventKind::Start);
                    // Both ends start (a sink's start does nothing; a web client opens its
                    // first connections).
                    for s in [Side::Src, Side::Dst] {
                        self.flows[f as usize].ends[s as usize].start(t, &mut self.out);
                        self.after_endpoint(f, s);
                    }
                }
                Ev::Sample => {
                    self.count(EventKind::Sample);
                    self.sample();
                    let next = t + self.rec.interval;
                    self.schedule(next, Ev::Sample);
                }
            }
            if !self.freed.is_empty() {
                self.tell_freed();
            }
        }
        self.now = self.end;
        true
    }

    /// Tells the senders whose first hop is their own host's qdisc (`local_sender`) so, and
    /// whether it paces by departure time (`Qdisc::paces_departures`); the hop reports the
    /// completions of their packets when one of them counts what it has in its host, or when
    /// it paces by departure time.
    fn at_host(&mut self) {
        for d in Dir::BOTH {
            let l = self.first[d.index()] as usize;
            let edt = self.links[l].qdisc.paces_departures();
            for f in self.flows.iter_mut().filter(|f| f.local[d.index()]) {
                let s = f.side_sending(d);
                if f.ends[s as usize].at_host(edt) || edt {
                    self.host_hop = l;
                }
            }
        }
    }

    /// Packet `id` left hop `l`'s custody (`Hops::left_hop`). On the hop in the sending hosts
    /// that is its sender's completion, told after the current event (`tell_freed`).
    #[inline]
    fn host_freed(&mut self, l: usize, id: PktId) {
        if l == self.host_hop && self.refusing != Some(id) {
            let p = self.pool.get(id);
            let s = self.flows[p.flow as usize].side_sending(p.dir);
            self.freed.push((p.flow, s, p.size));
        }
    }

    /// Tells the senders of the current event's completions (`left_hop`), and what that makes
    /// them send.
    #[inline(never)]
    fn tell_freed(&mut self) {
        while !self.freed.is_empty() {
            for (f, s, size) in std::mem::take(&mut self.freed) {
                self.flows[f as usize].ends[s as usize].left_host(size, self.now, &mut self.out);
                self.after_endpoint(f, s);
            }
        }
    }

    /// The end of a transmission on the wired hop in the sending hosts: the packet has left
    /// its host (lost on the wire or not), which its sender hears (its TX completion) after the
    /// hop moves on.
    fn tx_done_in_host(&mut self, l: usize) {
        let id = self.links[l].tx.expect("a transmission was in progress");
        let p = self.pool.get(id);
        let (f, size, s) = (p.flow, p.size, self.flows[p.flow as usize].side_sending(p.dir));
        self.tx_done(l);
        self.flows[f as usize].ends[s as usize].left_host(size, self.now, &mut self.out);
        self.after_endpoint(f, s);
    }

    #[inline(always)]
    fn count(&mut self, k: EventKind) {
        self.kinds[k as usize] += 1;
    }

    fn endpoint_timer(&mut self, f: u32, s: Side, t: Time) {
        let flow = &mut self.flows[f as usize];
        if flow.armed[s as usize] != t {
            // superseded by an earlier deadline that was armed since
            self.count(EventKind::EndpointSuperseded);
            return;
        }
        flow.armed[s as usize] = NOT_ARMED;
        let ep = &mut flow.ends[s as usize];
        if ep.next_timer().is_some_and(|d| d <= t) {
            ep.on_timer(t, &mut self.out);
            self.count(EventKind::EndpointTimer);
        } else {
            self.count(EventKind::EndpointEarly);
        }
        self.after_endpoint(f, s);
    }

    /// Sends what an endpoint put in the outbox and re-arms its timer.
    #[inline]
    fn after_endpoint(&mut self, f: u32, s: Side) {
        if !self.out.is_empty() {
            self.send_outbox(f, s);
        }
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if let Some(deadline) = flow.ends[s as usize].next_timer() {
            let deadline = deadline.max(now);
            if deadline < flow.armed[s as usize] {
                flow.armed[s as usize] = deadline;
                self.schedule(deadline, Ev::Endpoint(f, s));
            }
        }
    }

    /// Puts the packets side `s` of flow `f` sent on their way: stamped by the hosts, each
    /// copied once into the slab, through the host's NIC into the access pipe (or into the
    /// qdisc of the sending host); refusals by that qdisc are told to the endpoint.
    #[inline(never)]
    fn send_outbox(&mut self, f: u32, s: Side) {
        let now = self.now;
        let mut out = std::mem::take(&mut self.out);
        let flow = &self.flows[f as usize];
        let (dscp, host, server, hash_connections, local) = (
            flow.dscp,
            flow.host,
            flow.server,
            flow.hash_connections,
            flow.local,
        );
        let hears = local != [false; 2] && flow.ends[s as usize].hears_local_verdicts();
        for p in out.iter_mut() {
            p.dscp = dscp;
            p.host = host;
            p.server = server;
            if hash_connections {
                p.tuple_conn = p.conn >> 1;
            }
            let d = p.dir;
            if local[d.index()] {
                self.send_local(f, *p, hears);
                continue;
            }
            let size = p.size as u64;
            let id = self.pool.alloc(p);
            let flow = &mut self.flows[f as usize];
            flow.sent += 1;
            let pipe = flow.entry[d.index()] as usize;
            let ready = match flow.host_jitter.as_deref_mut() {
                Some(j) => j.ready(s as usize, now),
                None => now,
            };
            let leaves = nic_departure(&mut flow.nic_free[s as usize], flow.nic_rate, ready, size);
            self.enter_pipe_at(pipe, id, leaves);
        }
        out.clear();
        self.out = out;
        if !self.refused.is_empty() {
            let refused = std::mem::take(&mut self.refused);
            self.flows[f as usize].ends[s as usize].on_local_verdicts(&refused, now);
            self.refused = refused;
            self.refused.clear();
        }
    }

    /// Packet `p` of flow `f` meets the first hop's qdisc on its own host. An endpoint that
    /// `hears` the verdicts learns of each refusal; after a NET_XMIT_DROP it has sent nothing
    /// more (Linux 3.2's tcp_write_xmit stops at a segment tcp_transmit_skb could not send), so
    /// the rest of the send is not offered.
    fn send_local(&mut self, f: u32, p: Packet, hears: bool) {
        if hears && self.refused.last().is_some_and(|r| r.1 == LocalVerdict::Dropped) {
            self.refused.push((p, LocalVerdict::Dropped));
            return;
        }
        let l = self.first[p.dir.index()] as usize;
        let kept = hears.then_some(p);
        let id = self.pool.alloc(&p);
        self.flows[f as usize].sent += 1;
        self.offer(l, id);
        let verdict = local_verdict(&self.qev, &self.pool, id);
        // A refused packet's sender takes it back itself (`on_local_verdicts`).
        self.refusing = (hears && verdict == LocalVerdict::Dropped).then_some(id);
        self.queue_events(l);
        self.refusing = None;
        self.serve(l);
        if let (Some(p), false) = (kept, verdict == LocalVerdict::Queued) {
            self.refused.push((p, verdict));
        }
    }

    /// Puts a packet into a pipe (or straight through a zero-delay pipe).
    #[inline]
    fn enter_pipe(&mut self, i: usize, id: PktId) {
        self.enter_pipe_at(i, id, self.now);
    }

    /// Puts a packet into pipe i at time `t` (now, or later for a packet still in its host's
    /// NIC). Packets entering now go to the back of the ring; one leaving a NIC later is
    /// inserted by arrival time, after any equal one, and re-arms the pipe if it becomes the
    /// head.
    #[inline(always)]
    fn enter_pipe_at(&mut self, i: usize, id: PktId, t: Time) {
        let pipe = &self.pipes[i];
        if pipe.delay == 0 && t == self.now {
            self.leave_pipe(i, id);
            return;
        }
        self.pipe_until(i, id, t + pipe.delay);
    }

    /// Puts a packet into pipe i until time `at` (not before now).
    #[inline(always)]
    fn pipe_until(&mut self, i: usize, id: PktId, at: Time) {
        let pipe = &mut self.pipes[i];
        pipe.insert(at, id);
        if pipe.armed.is_none_or(|a| at < a) {
            pipe.armed = Some(at);
            self.schedule(at, Ev::Pipe(i as u32));
        }
    }

    /// Packet `id` enters the delay after hop `l`: its pipe, or, when the delay is netem's
    /// tfifo, that bounded queue, at its drawn time to send (`net::Tfifo`), or, when it changes
    /// in steps, the pipe at the delay in force (`net::DelaySteps`).
    fn enter_hop_delay(&mut self, l: usize, id: PktId) {
        let i = self.link_pipe[l] as usize;
        let held = self.pipes[i].ring.len();
        let link = &mut self.links[l];
        if let Some(steps) = &link.delay_steps {
            let mut at = self.now + steps.at(self.now);
            if !steps.reorder {
                at = at.max(self.pipes[i].ring.back().map_or(0, |&(last, _)| last));
            }
            self.pipe_until(i, id, at);
            return;
        }
        let delay = link.delay;
        let Some(q) = link.tfifo.as_mut() else {
            self.enter_pipe(i, id);
            return;
        };
        if held >= q.limit {
            let p = self.pool.get(id);
            let reason = DropReason::Overlimit;
            self.rec.packet(
                p,
                self.links[l].dir,
                l as u8,
                self.now,
                OUTCOME_DROP_BASE + reason as u8,
            );
            self.links[l].stats.drops[reason as usize] += 1;
            let flow = p.flow;
            self.pool.release(id);
            self.dropped(flow, false);
            return;
        }
        let at = self.now + delay - q.jitter + q.draw();
        self.pipe_until(i, id, at);
    }

    /// The arrival event of pipe i: delivers every packet due and re-arms for the next head.
    /// An event superseded by an earlier head (see `enter_pipe_at`) finds the pipe armed for
    /// another time and does nothing.
    fn pipe_arrivals(&mut self, i: usize) {
        if self.pipes[i].armed != Some(self.now) {
            self.count(EventKind::PipeSuperseded);
            return;
        }
        self.count(self.pipe_kind(i));
        self.pipes[i].armed = None;
        while let Some(&(at, id)) = self.pipes[i].ring.front() {
            if at > self.now {
                self.pipes[i].armed = Some(at);
                self.schedule(at, Ev::Pipe(i as u32));
                return;
            }
            self.pipes[i].ring.pop_front();
            self.leave_pipe(i, id);
        }
    }

    /// What an arrival event of pipe i is (see `leave_pipe`).
    fn pipe_kind(&self, i: usize) -> EventKind {
        if i >= self.hop_pipes {
            EventKind::HopPipe
        } else if i % 2 == 1 {
            EventKind::AccessOut
        } else {
            EventKind::AccessIn
        }
    }

    /// A packet reached the far end of pipe i: the first hop (access pipes towards the path),
    /// the next hop (hop pipes) or an endpoint (access pipes away from the path).
    #[inline]
    fn leave_pipe(&mut self, i: usize, id: PktId) {
        if i >= self.hop_pipes {
            let next = self.hop_pipe_next[i - self.hop_pipes];
            if next == u32::MAX {
                let p = self.pool.get(id);
                let access = self.at_hops[p.flow as usize].exit[p.dir.index()];
                self.enter_pipe(access as usize, id);
            } else {
                self.arrival(self.host_link(next as usize, id), id);
            }
            return;
        }
        let post = i % 2 == 1;
        if !post {
            // The pipe index encodes the direction (see `pipe_slot`): no packet read needed.
            let d = if (i >> 1) & 1 == 0 { Dir::Up } else { Dir::Down };
            let mut hop = self.first[d.index()];
            if self.inner_entry {
                let f = self.pool.get(id).flow as usize;
                hop = self.flows[f].route[d.index()].map_or(hop, |r| r.0);
            }
            self.arrival(self.host_link(hop as usize, id), id);
        } else {
            self.deliver(id);
        }
    }

    /// Hop `l`, or, when it is a hop with one link per host, the link of packet `id`'s host.
    #[inline(always)]
    fn host_link(&self, l: usize, id: PktId) -> usize {
        let link = &self.links[l];
        if link.parallel {
            let f = self.pool.get(id).flow as usize;
            self.flows[f].host_links[link.dir.index()] as usize
        } else {
            l
        }
    }

    fn deliver(&mut self, id: PktId) {
        let p = self.pool.get(id);
        let f = p.flow;
        let flow = &mut self.flows[f as usize];
        flow.received += 1;
        let s = match flow.side_sending(p.dir) {
            Side::Src => Side::Dst,
            Side::Dst => Side::Src,
        };
        flow.ends[s as usize].on_packet(p, self.now, &mut self.out);
        self.pool.release(id);
        self.after_endpoint(f, s);
    }

    /// Starts hop `l`'s next transmission (or fills its WiFi driver) and re-arms its timer.
    fn start_tx(&mut self, l: usize) {
        self.start(l);
        self.arm_qdisc_timer(l);
    }

    #[inline(always)]
    fn arm_qdisc_timer(&mut self, l: usize) {
        let link = &mut self.links[l];
        if let Some(deadline) = link.qdisc.next_timer() {
            let deadline = deadline.max(self.now);
            if link.timer_armed.is_none_or(|a| deadline < a) {
                link.timer_armed = Some(deadline);
                self.schedule(deadline, Ev::QdiscTimer(l as u32));
            }
        }
    }

    fn qdisc_timer(&mut self, l: usize, t: Time) {
        if self.links[l].timer_armed != Some(t) {
            self.count(EventKind::QdiscSuperseded);
            return;
        }
        self.count(EventKind::QdiscTimer);
        self.links[l].timer_armed = None;
        self.qdisc_on_timer(l, t);
        self.arm_qdisc_timer(l);
    }

    fn sample(&mut self) {
        let t = self.now;
        sample_hops(&self.links, t, &mut self.rec.queue);
        for (i, f) in self.flows.iter().enumerate() {
            if f.start > t {
                continue;
            }
            self.rec
                .flow_series
                .push(t, i as u32, &f.report(), &f.cc_report());
        }
    }

    /// Packets of each flow still in pipes or being serialised.
    fn in_transit(&self) -> Vec<u64> {
        let mut n = vec![0u64; self.flows.len()];
        for pipe in &self.pipes {
            for &(_, id) in &pipe.ring {
                n[self.pool.get(id).flow as usize] += 1;
            }
        }
        for l in &self.links {
            for &id in l.tx.iter().chain(l.device.iter()) {
                n[self.pool.get(id).flow as usize] += 1;
            }
            for id in l.slot.iter().filter_map(|s| s.held) {
                n[self.pool.get(id).flow as usize] += 1;
            }
            for id in l.wifi.iter().flat_map(|w| w.held()) {
                n[self.pool.get(id).flow as usize] += 1;
            }
        }
        for (_, agg) in self.media.iter().flat_map(|m| m.on_air.iter()) {
            for &id in &agg.pkts {
                n[self.pool.get(id).flow as usize] += 1;
            }
        }
        n
    }

    /// Checks packet conservation: for every flow, sent = received + dropped + queued + in
    /// transit; the world's per-flow queue counts agree with the qdiscs' own backlog counts; and
    /// every live packet in the slab is accounted for. Returns a description of the first
    /// violation.
    pub fn check_conservation(&self) -> Result<(), String> {
        let transit = self.in_transit();
        for (i, f) in self.flows.iter().enumerate() {
            let queued = self.at_hops[i].queued as u64;
            let accounted = f.received + f.dropped + queued + transit[i];
            if f.sent != accounted {
                return Err(format!(
                    "flow {i}: sent {} != received {} + dropped {} + queued {} + in transit {}",
                    f.sent, f.received, f.dropped, queued, transit[i]
                ));
            }
        }
        let queued: u64 = self.at_hops.iter().map(|f| f.queued as u64).sum();
        let backlog: u64 = self.links.iter().map(|l| l.qdisc.backlog_packets()).sum();
        if queued != backlog {
            return Err(format!(
                "queues hold {backlog} packets but flows account for {queued}"
            ));
        }
        let live = queued + transit.iter().sum::<u64>();
        if live != self.pool.live() as u64 {
            return Err(format!(
                "{} packets are live in the slab but {live} are accounted for",
                self.pool.live()
            ));
        }
        Ok(())
    }
}

impl Hops for World {
    #[inline]
    fn left_hop(&mut self, l: usize, id: PktId) {
        self.host_freed(l, id);
    }

    #[inline(always)]
    fn parts(&mut self) -> HopParts<'_> {
        HopParts {
            links: &mut self.links,
            pool: &mut self.pool,
            qev: &mut self.qev,
            rec: &mut self.rec,
            media: &mut self.media,
        }
    }

    #[inline(always)]
    fn now(&self) -> Time {
        self.now
    }

    fn dropped(&mut self, flow: u32, queued: bool) {
        self.flows[flow as usize].dropped += 1;
        self.at_hops[flow as usize].queued -= queued as u32;
    }

    fn marked(&mut self, id: PktId) {
        self.flows[self.pool.get(id).flow as usize].marked += 1;
    }

    fn stop(&mut self) {
        self.end = self.now;
    }

    fn transmitting(&mut self, l: usize, done: Time) {
        self.schedule(done, Ev::TxDone(l as u32));
    }

    /// A packet hop `l` delivered: on to the next hop, or to the flow's access path when the
    /// chain or the flow's route ends here.
    #[inline(always)]
    fn forward(&mut self, l: usize, id: PktId, flow: u32) {
        let link = &self.links[l];
        let d = link.dir;
        let leaves =
            link.exit_here && self.flows[flow as usize].route[d.index()].is_some_and(|r| r.1 as usize == l);
        match link.next {
            _ if leaves => self.enter_pipe(self.at_hops[flow as usize].exit[d.index()] as usize, id),
            None if link.delay == 0 => {
                self.enter_pipe(self.at_hops[flow as usize].exit[d.index()] as usize, id)
            }
            Some(next) if link.delay == 0 => self.arrival(self.host_link(next as usize, id), id),
            _ => self.enter_hop_delay(l, id),
        }
    }

    fn serve(&mut self, l: usize) {
        self.start_tx(l);
    }

    fn station(&self, flow: u32) -> usize {
        self.flows[flow as usize].station as usize
    }

    fn on_air(&mut self, m: usize, done: Time) {
        self.schedule(done, Ev::Air(m as u32));
    }

    fn wake_at(&mut self, l: usize, t: Time) {
        self.schedule(t, Ev::Wake(l as u32));
    }

    fn entering(&mut self, id: PktId) {
        self.at_hops[self.pool.get(id).flow as usize].queued += 1;
    }

    fn dequeued(&mut self, id: PktId) {
        self.at_hops[self.pool.get(id).flow as usize].queued -= 1;
    }
}

#[cfg(test)]
mod layout {
    use super::*;
    use crate::packet::layout::on_line;
    use std::mem::{align_of, offset_of, size_of};

    /// A delivery reads the first line of its flow, a send the second.
    #[test]
    fn a_packet_reads_one_line_of_its_flow_at_each_step() {
        assert_eq!(size_of::<AnyEndpoint>(), 16, "every endpoint is boxed");
        assert_eq!(align_of::<Flow>(), 64);
        macro_rules! line {
            ($line:expr, $($f:ident: $t:ty),*) => {
                $(on_line(stringify!($f), offset_of!(Flow, $f), size_of::<$t>(), $line);)*
            };
        }
        line!(0, ends: [AnyEndpoint; 2], armed: [Time; 2], received: u64, dir: Dir);
        line!(1, entry: [u32; 2], nic_free: [Time; 2], nic_rate: Option<u64>,
            host_jitter: Option<Box<HostJitter>>, sent: u64,
            host: u16, server: u16, local: [bool; 2], dscp: u8, hash_connections: bool);
    }
}
