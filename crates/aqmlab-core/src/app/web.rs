//! The web client and web server of a PackMime-HTTP flow (`packmime.rs` draws the workload):
//! one world flow whose two endpoints multiplex every transfer of the run, so a source that
//! opens thousands of short connections costs no flow slots and one timer per end.
//!
//! Transport model (a documented deviation from ns-2's Full-TCP, which carries both directions
//! on one agent pair): a connection is two one-way TCP connections with the flow's TCP settings,
//! the requests' (client -> server) and the responses' (server -> client), told apart by
//! `Packet::conn` (2 x slot + 0 / 1). The client opens both at the connection's start: it sends
//! the requests' SYN, and the server, on seeing it, opens the responses' connection at once, so
//! the second handshake costs no round trip. Each response goes once its whole request has
//! arrived and the server's think time has passed (`PackMimeHTTPServerApp::recv` schedules it,
//! `timeout` sends it); the next request of a persistent connection goes its gap after the
//! previous response is complete (`PackMimeHTTPClientApp::recv`).
//!
//! `persistent` (a flow key):
//! * true (default): a persistent connection's exchanges share its two connections, as ns-2
//!   sends every request and response of one on the same FullTcp agents (`agent_->sendmsg`):
//!   persistent streams ([`TcpSender::stream`]) in the slot of the connection's first exchange,
//!   the window and its state carried from exchange to exchange. With `piggyback` (a flow key,
//!   default true) a delayed ACK pending at an end leaves when that end writes its next record,
//!   as FullTcp sends the ACK with the data; false: only when its timer fires. A connection of
//!   one exchange is one finite transfer each way (FIN on its last segment).
//! * false: every exchange opens fresh transfers in its own slot (a new handshake and initial
//!   window per exchange).
//!
//! ACKs are not piggybacked on data otherwise.
//!
//! Each end keeps its own timer heap over its transfers (re-armed lazily, as the world's timers
//! are), so the cost per packet does not grow with the number of open transfers.

use super::packmime::{Connection, Exchange};
use super::repeat::add;
use crate::packet::{Dir, Packet};
use crate::record::rows::ExchangeRecord;
use crate::record::rows::FlowReport;
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::{Endpoint, Outbox};
use crate::units::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

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

    /// The deadline armed for k, if any.
    pub(super) fn armed(&self, k: u32) -> Option<Time> {
        self.armed[k as usize]
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

/// The slot of each exchange (2 x slot + 0 / 1 tags its packets): its own, or with
/// `persistent` its connection's first exchange when the connection has several; and whether
/// each slot carries persistent streams.
struct Slots {
    slot: Vec<u32>,
    stream: Vec<bool>,
    piggyback: bool,
}

/// How a flow's ends use TCP connections: `persistent` (a persistent connection's exchanges on
/// one connection each way) and `piggyback` (a pending delayed ACK leaves with the next record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnModel {
    pub persistent: bool,
    pub piggyback: bool,
}

impl Slots {
    fn new(plan: &[Connection], model: ConnModel) -> Slots {
        let persistent = model.persistent;
        let (mut slot, mut stream) = (Vec::new(), Vec::new());
        for c in plan {
            let first = slot.len() as u32;
            let shared = persistent && c.exchanges.len() > 1;
            for i in 0..c.exchanges.len() {
                slot.push(if shared { first } else { first + i as u32 });
                stream.push(shared && i == 0);
            }
        }
        Slots {
            slot,
            stream,
            piggyback: model.piggyback,
        }
    }

    /// The sender opening slot s: a persistent stream, or one transfer of `bytes`.
    fn sender(&self, s: u32, cfg: &TcpConfig, flow: u32, dir: Dir, bytes: u64) -> Result<TcpSender, String> {
        if self.stream[s as usize] {
            TcpSender::stream(cfg, flow, dir)
        } else {
            let cfg = TcpConfig {
                bytes: Some(bytes),
                ..cfg.clone()
            };
            TcpSender::new(&cfg, flow, dir)
        }
    }
}

/// Writes a record on an end's persistent stream `tx` (tagged `tx_conn`); with `piggyback`
/// the delayed ACK pending on its receiver `rx` (tagged `rx_conn`) leaves with it.
fn write_record(
    tx: &mut TcpSender,
    rx: &mut TcpReceiver,
    (tx_conn, rx_conn): (u32, u32),
    piggyback: bool,
    bytes: u64,
    now: Time,
    out: &mut Outbox,
) {
    if piggyback {
        let from = out.len();
        rx.send_pending_ack(now, out);
        tag(out, from, rx_conn);
    }
    let from = out.len();
    tx.write(bytes, now, out);
    tag(out, from, tx_conn);
}

impl Pair<TcpSender, TcpReceiver> {
    /// The client of slot x writes a request record of `bytes` (see [`write_record`]).
    pub(super) fn request(&mut self, x: u32, piggyback: bool, bytes: u64, now: Time, out: &mut Outbox) {
        write_record(
            &mut self.req,
            &mut self.rsp,
            (2 * x, 2 * x + 1),
            piggyback,
            bytes,
            now,
            out,
        );
    }
}

impl Pair<TcpReceiver, TcpSender> {
    /// The server of slot x writes a response record of `bytes` (see [`write_record`]).
    pub(super) fn respond(&mut self, x: u32, piggyback: bool, bytes: u64, now: Time, out: &mut Outbox) {
        write_record(
            &mut self.rsp,
            &mut self.req,
            (2 * x + 1, 2 * x),
            piggyback,
            bytes,
            now,
            out,
        );
    }
}

/// The browser end: opens the plan's connections and sends their requests.
pub struct WebClient {
    plan: Arc<[Connection]>,
    /// Exchange number -> (connection, index); and per connection its first exchange number.
    xchg: Vec<(u32, u32)>,
    first_xchg: Vec<u32>,
    slots: Slots,
    cfg: TcpConfig,
    flow: u32,
    /// The open slots: the requests' sender and the responses' receiver.
    ex: Exchanges<TcpSender, TcpReceiver>,
    /// Per slot: the exchange under way, and the response bytes its receiver has delivered
    /// once that exchange's response is whole.
    active: Vec<u32>,
    due: Vec<u64>,
    /// Exchange start times (key: exchange).
    starts: Timers,
    next_conn: usize,
    stop: Time,
    pub records: Vec<ExchangeRecord>,
}

impl WebClient {
    pub fn new(
        plan: Arc<[Connection]>,
        cfg: TcpConfig,
        flow: u32,
        stop: Time,
        model: ConnModel,
    ) -> WebClient {
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
            active: vec![0; xchg.len()],
            due: vec![0; xchg.len()],
            slots: Slots::new(&plan, model),
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

    /// Sends exchange x's request: on its own transfer (SYN now, data once connected) or as
    /// the next record of its connection's stream (opened with the first).
    fn begin(&mut self, x: u32, now: Time, out: &mut Outbox) {
        if now >= self.stop {
            return;
        }
        let (c, i) = self.xchg[x as usize];
        let e = self.plan[c as usize].exchanges[i as usize];
        let s = self.slots.slot[x as usize];
        let dir = Dir::Up;
        if self.ex.get(s).is_none() {
            let Ok(mut req) = self.slots.sender(s, &self.cfg, self.flow, dir, e.req) else {
                return; // the configuration was checked when the flow was built
            };
            let rsp = TcpReceiver::new(&self.cfg, self.flow, dir.reverse());
            let from = out.len();
            req.start(now, out);
            tag(out, from, 2 * s);
            self.ex.open(s, Pair { req, rsp });
        }
        if self.slots.stream[s as usize] {
            let pair = self.ex.get_mut(s).expect("open");
            pair.request(s, self.slots.piggyback, e.req, now, out);
            self.ex.arm(s);
        }
        self.active[s as usize] = x;
        self.due[s as usize] += e.rsp;
        self.records[x as usize].requested = Some(now);
    }

    /// Notes slot s's exchange complete once its response is whole, closes the slot after its
    /// last exchange, and schedules the connection's next.
    fn check_done(&mut self, s: u32, now: Time, out: &mut Outbox) {
        let x = self.active[s as usize];
        let Some(pair) = self.ex.get_mut(s) else { return };
        let r = &mut self.records[x as usize];
        if r.completed.is_some() || pair.rsp.bytes_delivered() < self.due[s as usize] {
            return;
        }
        r.completed = Some(now);
        let (conn, i) = self.xchg[x as usize];
        match self.plan[conn as usize].exchanges.get(i as usize + 1) {
            Some(next) => self.starts.arm(x + 1, Some(now + next.gap)),
            None => {
                // The last response went with ns-2's MSG_EOF: its FIN is ACKed at once.
                let from = out.len();
                pair.rsp.send_pending_ack(now, out);
                tag(out, from, 2 * s + 1);
            }
        }
        if !self.slots.stream[s as usize] || i as usize + 1 == self.plan[conn as usize].exchanges.len() {
            self.ex.close(s);
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
            self.check_done(pkt.conn / 2, now, out);
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
    slots: Slots,
    cfg: TcpConfig,
    flow: u32,
    /// The open slots: the requests' receiver and the responses' sender.
    ex: Exchanges<TcpReceiver, TcpSender>,
    /// Whether slot s was opened already (a retransmitted SYN must not reopen it).
    seen: Vec<bool>,
    /// Per slot: the exchange whose request is awaited or whose response is pending, and the
    /// request bytes its receiver has delivered once that request is whole.
    active: Vec<u32>,
    req_due: Vec<u64>,
    /// Streams: responses due to be written after the think time (key: slot).
    pending: Timers,
    /// Finite transfers: whether exchange x's response was released (its request complete).
    released: Vec<bool>,
}

impl WebServer {
    pub fn new(plan: Arc<[Connection]>, cfg: TcpConfig, flow: u32, model: ConnModel) -> WebServer {
        let xchg = flatten(&plan);
        let n = xchg.len();
        WebServer {
            ex: Exchanges::new(n),
            seen: vec![false; n],
            active: vec![0; n],
            req_due: vec![0; n],
            pending: Timers::new(n),
            released: vec![false; n],
            slots: Slots::new(&plan, model),
            xchg,
            plan,
            cfg,
            flow,
        }
    }

    fn exchange(&self, x: u32) -> Exchange {
        let (c, i) = self.xchg[x as usize];
        self.plan[c as usize].exchanges[i as usize]
    }

    /// Opens slot s at its requests' first packet: the requests' receiver and the responses'
    /// connection (a finite transfer's data held back until released; a stream's written).
    fn accept(&mut self, s: u32, now: Time, out: &mut Outbox) {
        let e = self.exchange(s);
        let dir = Dir::Down;
        let Ok(mut rsp) = self.slots.sender(s, &self.cfg, self.flow, dir, e.rsp) else {
            return; // the configuration was checked when the flow was built
        };
        if !self.slots.stream[s as usize] {
            rsp.release_at(Time::MAX);
        }
        let req = TcpReceiver::new(&self.cfg, self.flow, dir.reverse());
        let from = out.len();
        rsp.start(now, out);
        tag(out, from, 2 * s + 1);
        self.seen[s as usize] = true;
        self.active[s as usize] = s;
        self.req_due[s as usize] = e.req;
        self.ex.open(s, Pair { req, rsp });
    }

    /// Schedules the response once its request is whole; closes the slot once its last
    /// response is acknowledged.
    fn progress(&mut self, s: u32, now: Time) {
        let x = self.active[s as usize];
        let e = self.exchange(x);
        let stream = self.slots.stream[s as usize];
        let released = &mut self.released[x as usize];
        let Some(c) = self.ex.get_mut(s) else {
            return;
        };
        if !*released && c.req.bytes_delivered() >= self.req_due[s as usize] {
            *released = true;
            if stream {
                self.pending.arm(s, Some(now + e.server_delay));
            } else {
                c.rsp.release_at(now + e.server_delay);
                self.ex.arm(s);
            }
        }
        let (conn, i) = self.xchg[x as usize];
        let last = i as usize + 1 == self.plan[conn as usize].exchanges.len();
        let done = match self.ex.get(s) {
            Some(c) if stream => {
                last && *released && self.pending.armed(s).is_none() && c.rsp.records_acked()
            }
            Some(c) => c.rsp.completed().is_some(),
            None => false,
        };
        if done {
            self.ex.close(s);
        }
    }

    /// Writes the response of slot s whose think time has passed, and awaits the next request.
    fn respond(&mut self, s: u32, now: Time, out: &mut Outbox) {
        let x = self.active[s as usize];
        let e = self.exchange(x);
        let Some(pair) = self.ex.get_mut(s) else { return };
        pair.respond(s, self.slots.piggyback, e.rsp, now, out);
        let (conn, i) = self.xchg[x as usize];
        if i as usize + 1 < self.plan[conn as usize].exchanges.len() {
            self.active[s as usize] = x + 1;
            self.req_due[s as usize] += self.exchange(x + 1).req;
        }
        self.ex.arm(s);
        self.progress(s, now);
    }
}

impl Endpoint for WebServer {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        let Some((s, opens)) = server_exchange(&self.seen, pkt.conn) else {
            return;
        };
        if opens {
            self.accept(s, now, out);
        }
        if self.ex.handle(pkt.conn, out, |e, out| e.on_packet(pkt, now, out)) {
            self.progress(s, now);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(k) = self.ex.timers.pop_due(now) {
            if self.ex.handle(k, out, |e, out| e.on_timer(now, out)) {
                self.progress(k / 2, now);
            }
        }
        while let Some(s) = self.pending.pop_due(now) {
            self.respond(s, now, out);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        let p = self.pending.heap.peek().map(|r| r.0 .0);
        [self.ex.next_timer(), p].into_iter().flatten().min()
    }

    fn report(&self, r: &mut FlowReport) {
        self.ex.report(r);
    }
}
