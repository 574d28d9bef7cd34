//! The web client and web server of a PackMime-HTTP flow (`packmime.rs` draws the workload):
//! one world flow whose two endpoints multiplex every transfer of the run, so a source that
//! opens thousands of short connections costs no flow slots and one timer per end.
//!
//! Transport model (a documented deviation from ns-2's Full-TCP, which carries both directions
//! on one connection): each request/response exchange is two one-way TCP transfers with the
//! flow's TCP settings, the request (client -> server) and the response (server -> client), told
//! apart by `Packet::conn` (2 x exchange + 0 / 1). The client opens both at the exchange's
//! request time: it sends the request's SYN, and the server, on seeing it, opens the response's
//! connection at once with its data held back (`TcpSender::release_at`) until the whole request
//! has arrived and the server's think time has passed, so the second handshake costs no round
//! trip. The next exchange of a persistent connection starts its gap when the previous response
//! is complete, and opens fresh transfers (a new handshake and initial window: persistent
//! connections lose the warm window ns-2 keeps). ACKs are not piggybacked on data.
//!
//! Each end keeps its own timer heap over its transfers (re-armed lazily, as the world's timers
//! are), so the cost per packet does not grow with the number of open transfers.

use super::packmime::Connection;
use super::repeat::add;
use crate::packet::Packet;
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::{Endpoint, FlowReport, Outbox};
use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

/// One exchange as the run produced it (the `web` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeRecord {
    pub connection: u32,
    /// Position of the exchange on its connection.
    pub index: u32,
    pub req_bytes: u64,
    pub rsp_bytes: u64,
    /// When the client sent the request's SYN (None: not within the run).
    pub requested: Option<Time>,
    /// When the last byte of the response reached the client (None: not within the run).
    pub completed: Option<Time>,
}

/// The exchanges of a plan, flattened: (connection, index on it).
/// The exchange a packet arriving at a server belongs to (connection `conn / 2`; even: the
/// request direction), and whether it opens that exchange (the first request packet seen);
/// None for an exchange beyond the plan.
pub(crate) fn server_exchange(seen: &[bool], conn: u32) -> Option<(u32, bool)> {
    let x = conn / 2;
    let opens = !*seen.get(x as usize)? && conn.is_multiple_of(2);
    Some((x, opens))
}

fn flatten(plan: &[Connection]) -> Vec<(u32, u32)> {
    plan.iter()
        .enumerate()
        .flat_map(|(c, conn)| (0..conn.exchanges.len()).map(move |i| (c as u32, i as u32)))
        .collect()
}

/// A heap of (deadline, transfer) entries, armed lazily: `armed[k]` is the deadline in the heap
/// that counts for transfer k; other entries are stale and skipped.
#[derive(Default)]
pub(super) struct Timers {
    heap: BinaryHeap<Reverse<(Time, u32)>>,
    armed: Vec<Option<Time>>,
}

impl Timers {
    pub(super) fn new(n: usize) -> Timers {
        Timers {
            heap: BinaryHeap::new(),
            armed: vec![None; n],
        }
    }

    pub(super) fn arm(&mut self, k: u32, deadline: Option<Time>) {
        if let Some(t) = deadline {
            let a = &mut self.armed[k as usize];
            if a.is_none_or(|x| t < x) {
                *a = Some(t);
                self.heap.push(Reverse((t, k)));
            }
        }
    }

    /// The transfer whose armed deadline is due at `now`, if any (stale entries dropped).
    pub(super) fn pop_due(&mut self, now: Time) -> Option<u32> {
        while let Some(&Reverse((t, k))) = self.heap.peek() {
            if t > now {
                return None;
            }
            self.heap.pop();
            if self.armed[k as usize] == Some(t) {
                self.armed[k as usize] = None;
                return Some(k);
            }
        }
        None
    }
}

/// Tags the packets an inner endpoint appended to the outbox with their transfer.
pub(super) fn tag(out: &mut Outbox, from: usize, conn: u32) {
    for p in &mut out[from..] {
        p.conn = conn;
    }
}

/// One exchange's two transfers at one end: the request's and the response's endpoint.
pub(super) struct Pair<Q, R> {
    pub(super) req: Q,
    pub(super) rsp: R,
}

/// One end's open exchanges: their transfer pairs, the transfers' timers (2 x exchange + 0 for
/// the request, + 1 for the response), and the counters of the closed ones.
pub(super) struct Exchanges<Q, R> {
    open: Vec<Option<Box<Pair<Q, R>>>>,
    pub(super) timers: Timers,
    done: FlowReport,
}

impl<Q: Endpoint, R: Endpoint> Exchanges<Q, R> {
    pub(super) fn new(n: usize) -> Self {
        Exchanges {
            open: (0..n).map(|_| None).collect(),
            timers: Timers::new(2 * n),
            done: FlowReport::default(),
        }
    }

    pub(super) fn get(&self, x: u32) -> Option<&Pair<Q, R>> {
        self.open.get(x as usize).and_then(|c| c.as_deref())
    }

    pub(super) fn get_mut(&mut self, x: u32) -> Option<&mut Pair<Q, R>> {
        self.open.get_mut(x as usize).and_then(|c| c.as_deref_mut())
    }

    pub(super) fn open(&mut self, x: u32, pair: Pair<Q, R>) {
        self.open[x as usize] = Some(Box::new(pair));
        self.arm(x);
    }

    pub(super) fn arm(&mut self, x: u32) {
        if let Some(c) = self.open[x as usize].as_deref() {
            self.timers.arm(2 * x, c.req.next_timer());
            self.timers.arm(2 * x + 1, c.rsp.next_timer());
        }
    }

    /// Hands transfer `k` a packet or its timer (`act` on its endpoint), tags what it sends and
    /// re-arms its exchange; false when the exchange is closed (a late packet).
    pub(super) fn handle(
        &mut self,
        k: u32,
        out: &mut Outbox,
        act: impl FnOnce(&mut dyn Endpoint, &mut Outbox),
    ) -> bool {
        let Some(c) = self.get_mut(k / 2) else {
            return false;
        };
        let from = out.len();
        if k.is_multiple_of(2) {
            act(&mut c.req, out);
        } else {
            act(&mut c.rsp, out);
        }
        tag(out, from, k);
        self.arm(k / 2);
        true
    }

    /// Closes exchange x, keeping its transfers' counters.
    pub(super) fn close(&mut self, x: u32) {
        if let Some(c) = self.open[x as usize].take() {
            c.req.report(&mut self.done);
            c.rsp.report(&mut self.done);
        }
    }

    pub(super) fn next_timer(&self) -> Option<Time> {
        // Stale heads are read as they are: they only cause an early wake-up finding nothing due.
        self.timers.heap.peek().map(|r| r.0 .0)
    }

    pub(super) fn report(&self, r: &mut FlowReport) {
        add(r, &self.done);
        for c in self.open.iter().flatten() {
            c.req.report(r);
            c.rsp.report(r);
        }
        // A web flow has no single transfer: its completion times are in the `web` table.
        r.first_syn = None;
        r.completed = None;
    }
}

/// The browser end: opens the plan's connections and sends their requests.
pub struct WebClient {
    plan: Arc<[Connection]>,
    /// Exchange number -> (connection, index); and per connection its first exchange number.
    xchg: Vec<(u32, u32)>,
    first_xchg: Vec<u32>,
    cfg: TcpConfig,
    flow: u32,
    /// The open exchanges: the request's sender and the response's receiver.
    ex: Exchanges<TcpSender, TcpReceiver>,
    /// Exchange start times (key: exchange).
    starts: Timers,
    next_conn: usize,
    stop: Time,
    pub records: Vec<ExchangeRecord>,
}

impl WebClient {
    pub fn new(plan: Arc<[Connection]>, cfg: TcpConfig, flow: u32, stop: Time) -> WebClient {
        let xchg = flatten(&plan);
        let mut first_xchg = Vec::with_capacity(plan.len());
        let mut n = 0;
        for c in plan.iter() {
            first_xchg.push(n);
            n += c.exchanges.len() as u32;
        }
        let records = xchg
            .iter()
            .map(|&(c, i)| {
                let e = plan[c as usize].exchanges[i as usize];
                ExchangeRecord {
                    connection: c,
                    index: i,
                    req_bytes: e.req,
                    rsp_bytes: e.rsp,
                    requested: None,
                    completed: None,
                }
            })
            .collect();
        WebClient {
            ex: Exchanges::new(xchg.len()),
            starts: Timers::new(xchg.len()),
            xchg,
            first_xchg,
            plan,
            cfg,
            flow,
            next_conn: 0,
            stop,
            records,
        }
    }

    /// Sends exchange x's request: its SYN now, its data once connected.
    fn begin(&mut self, x: u32, now: Time, out: &mut Outbox) {
        if now >= self.stop {
            return;
        }
        let (c, i) = self.xchg[x as usize];
        let e = self.plan[c as usize].exchanges[i as usize];
        let cfg = TcpConfig {
            bytes: Some(e.req),
            ..self.cfg.clone()
        };
        let dir = crate::packet::Dir::Up;
        let Ok(mut req) = TcpSender::new(&cfg, self.flow, dir) else {
            return; // the configuration was checked when the flow was built
        };
        let rsp = TcpReceiver::new(&cfg, self.flow, dir.reverse());
        let from = out.len();
        req.start(now, out);
        tag(out, from, 2 * x);
        self.records[x as usize].requested = Some(now);
        self.ex.open(x, Pair { req, rsp });
    }

    /// Closes exchange x once its response is complete, and schedules the connection's next.
    fn check_done(&mut self, x: u32, now: Time) {
        let Some(c) = self.ex.get(x) else { return };
        let r = &mut self.records[x as usize];
        if c.rsp.bytes_delivered() < r.rsp_bytes {
            return;
        }
        r.completed = Some(now);
        self.ex.close(x);
        let (conn, i) = self.xchg[x as usize];
        if let Some(next) = self.plan[conn as usize].exchanges.get(i as usize + 1) {
            self.starts.arm(x + 1, Some(now + next.gap));
        }
    }

    /// Opens every connection due by `now` and starts every exchange whose gap has passed.
    fn start_due(&mut self, now: Time, out: &mut Outbox) {
        while self.next_conn < self.plan.len() && self.plan[self.next_conn].start <= now {
            let x = self.first_xchg[self.next_conn];
            self.next_conn += 1;
            self.begin(x, now, out);
        }
        while let Some(x) = self.starts.pop_due(now) {
            self.begin(x, now, out);
        }
    }
}

impl Endpoint for WebClient {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.start_due(now, out);
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if self.ex.handle(pkt.conn, out, |e, out| e.on_packet(pkt, now, out)) {
            self.check_done(pkt.conn / 2, now);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(k) = self.ex.timers.pop_due(now) {
            self.ex.handle(k, out, |e, out| e.on_timer(now, out));
        }
        self.start_due(now, out);
    }

    fn next_timer(&self) -> Option<Time> {
        let t = self.ex.next_timer();
        let s = self.starts.heap.peek().map(|r| r.0 .0);
        let c = self
            .plan
            .get(self.next_conn)
            .map(|c| c.start)
            .filter(|&t| t < self.stop);
        [t, s, c].into_iter().flatten().min()
    }

    fn report(&self, r: &mut FlowReport) {
        self.ex.report(r);
    }
}

/// The server end: answers each request after the whole request and its think time.
pub struct WebServer {
    plan: Arc<[Connection]>,
    xchg: Vec<(u32, u32)>,
    cfg: TcpConfig,
    flow: u32,
    /// The open exchanges: the request's receiver and the response's sender.
    ex: Exchanges<TcpReceiver, TcpSender>,
    /// Whether exchange x was opened already (a retransmitted SYN must not reopen it).
    seen: Vec<bool>,
    /// Whether exchange x's response was released (its request complete).
    released: Vec<bool>,
}

impl WebServer {
    pub fn new(plan: Arc<[Connection]>, cfg: TcpConfig, flow: u32) -> WebServer {
        let xchg = flatten(&plan);
        WebServer {
            ex: Exchanges::new(xchg.len()),
            seen: vec![false; xchg.len()],
            released: vec![false; xchg.len()],
            xchg,
            plan,
            cfg,
            flow,
        }
    }

    /// Opens exchange x at its request's first packet: the request's receiver and the
    /// response's connection (data held back).
    fn accept(&mut self, x: u32, now: Time, out: &mut Outbox) {
        let (c, i) = self.xchg[x as usize];
        let e = self.plan[c as usize].exchanges[i as usize];
        let cfg = TcpConfig {
            bytes: Some(e.rsp),
            ..self.cfg.clone()
        };
        let dir = crate::packet::Dir::Down;
        let Ok(mut rsp) = TcpSender::new(&cfg, self.flow, dir) else {
            return;
        };
        rsp.release_at(Time::MAX);
        let req = TcpReceiver::new(&cfg, self.flow, dir.reverse());
        let from = out.len();
        rsp.start(now, out);
        tag(out, from, 2 * x + 1);
        self.seen[x as usize] = true;
        self.ex.open(x, Pair { req, rsp });
    }

    /// Releases the response once the request is whole; closes the exchange once the response
    /// is acknowledged.
    fn progress(&mut self, x: u32, now: Time) {
        let (conn, i) = self.xchg[x as usize];
        let e = self.plan[conn as usize].exchanges[i as usize];
        let released = &mut self.released[x as usize];
        let Some(c) = self.ex.get_mut(x) else {
            return;
        };
        if !*released && c.req.bytes_delivered() >= e.req {
            *released = true;
            c.rsp.release_at(now + e.server_delay);
            self.ex.arm(x);
        }
        if self.ex.get(x).is_some_and(|c| c.rsp.completed().is_some()) {
            self.ex.close(x);
        }
    }
}

impl Endpoint for WebServer {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        let Some((x, opens)) = server_exchange(&self.seen, pkt.conn) else {
            return;
        };
        if opens {
            self.accept(x, now, out);
        }
        if self.ex.handle(pkt.conn, out, |e, out| e.on_packet(pkt, now, out)) {
            self.progress(x, now);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(k) = self.ex.timers.pop_due(now) {
            if self.ex.handle(k, out, |e, out| e.on_timer(now, out)) {
                self.progress(k / 2, now);
            }
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.ex.next_timer()
    }

    fn report(&self, r: &mut FlowReport) {
        self.ex.report(r);
    }
}
