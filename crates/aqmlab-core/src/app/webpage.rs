//! Repeated web page fetches, as Flent's `http-getter` makes them (tohojo/http-getter,
//! `src/getter.c`: `get_loop`, `get_once`; `src/worker.c`), the web test of goodbadwifi2015
//! (experiments.md section 4):
//!
//! * A fetch starts every `interval` (`get_loop`: the next start is this start + interval; a
//!   fetch that takes longer delays the next one until it ends).
//! * It resolves the server's name first: one UDP query and its answer (Kind::Udp, marked by
//!   [`DNS_CONN`]), answered by the server end at once. (curl resolves once per worker handle;
//!   the model resolves once per fetch, as the handles are reset per fetch and resolve the same
//!   name in parallel.)
//! * Then the main document (the URL list, fetched by one worker), then the page's objects, each
//!   handed to the next free worker of a pool of `workers` (`get_once`).
//! * Page fetch time = from the fetch's start to the last byte of its last object.
//! * `timeout` bounds the whole fetch here (http-getter passes it to curl per transfer,
//!   `CURLOPT_TIMEOUT_MS`; Flent's default is the test length, `HttpGetterRunner`): a fetch not
//!   done by then is recorded as timed out and its open exchanges are abandoned.
//!
//! Transport model: every object is one request/response exchange of the web client/server
//! (`web.rs`, [`Exchanges`]): a fresh handshake and initial window per object, where curl keeps a
//! worker's connection open across objects (persistent HTTP/1.1). The pool bounds the
//! concurrency as the workers do; the per-object handshake is a documented deviation.

use super::packmime::{Connection, Exchange};
use super::web::{tag, Exchanges, Pair, WebServer};
use crate::packet::{Dir, Kind, Packet};
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::{Endpoint, FlowReport, Outbox};
use crate::units::Time;
use std::sync::Arc;

/// `Packet::conn` of the name lookup's query and answer.
pub const DNS_CONN: u32 = u32::MAX;
/// IP sizes of the lookup's query and answer (an A query of a short name over UDP: IP 20 +
/// UDP 8 + DNS header 12 + question about 30; the answer adds one 16-byte record).
pub const DNS_QUERY_BYTES: u32 = 70;
pub const DNS_ANSWER_BYTES: u32 = 86;
/// Bytes of one HTTP GET request (request line and a handful of headers, as curl sends).
pub const REQUEST_BYTES: u64 = 200;

/// A built-in page: name, source, object sizes in bytes (the main document first).
pub type BuiltinPage = (&'static str, &'static str, fn() -> Vec<u64>);

/// The built-in pages.
/// goodbadwifi2015 (experiments.md section 4) gives each page's total and request count only;
/// the split over objects is ours: the main document, then equal objects making the total.
pub const PAGES: &[BuiltinPage] = &[
    (
        "small",
        "goodbadwifi2015 \"Google\": 56 kB in 3 requests",
        small_page,
    ),
    (
        "large",
        "goodbadwifi2015 \"Huffpost\": 3 MB in 110 requests",
        large_page,
    ),
];

fn split(total: u64, main: u64, requests: u64) -> Vec<u64> {
    let objects = requests - 1;
    let rest = total - main;
    let mut v = vec![main];
    v.extend((0..objects).map(|i| rest / objects + u64::from(i < rest % objects)));
    v
}

fn small_page() -> Vec<u64> {
    split(56_000, 16_000, 3)
}

fn large_page() -> Vec<u64> {
    split(3_000_000, 100_000, 110)
}

/// The object sizes of built-in page `name`.
pub fn page(name: &str) -> Option<Vec<u64>> {
    PAGES.iter().find(|p| p.0 == name).map(|p| (p.2)())
}

/// One page fetch as the run produced it (the `webpage` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchRecord {
    pub index: u32,
    pub start: Time,
    /// When the last object's last byte arrived (None: timed out or cut by the run's end).
    pub completed: Option<Time>,
    pub timed_out: bool,
    pub objects_done: u32,
}

/// The fetch settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PageParams {
    /// Object sizes, the main document first.
    pub objects: Arc<[u64]>,
    pub workers: u32,
    pub interval: Time,
    pub timeout: Time,
}

impl PageParams {
    /// The most fetches a run in [start, stop) can begin (starts are `interval` apart at least).
    fn max_fetches(&self, start: Time, stop: Time) -> usize {
        (stop.saturating_sub(start).saturating_sub(1) / self.interval + 1) as usize
    }

    /// The server's view: one connection per fetch carrying every object's exchange, so that
    /// exchange x is object x % objects of fetch x / objects.
    pub fn server_plan(&self, start: Time, stop: Time) -> Arc<[Connection]> {
        let exchanges: Vec<Exchange> = self
            .objects
            .iter()
            .map(|&rsp| Exchange {
                req: REQUEST_BYTES,
                rsp,
                gap: 0,
                server_delay: 0,
            })
            .collect();
        let conn = Connection { start, exchanges };
        vec![conn; self.max_fetches(start, stop)].into()
    }
}

/// The fetch under way.
struct Current {
    index: u32,
    start: Time,
    resolved: bool,
    /// Next object not yet handed to a worker, and objects in flight.
    next: u32,
    busy: u32,
}

/// The browser end (http-getter).
pub struct PageClient {
    p: PageParams,
    cfg: TcpConfig,
    flow: u32,
    stop: Time,
    ex: Exchanges<TcpSender, TcpReceiver>,
    cur: Option<Current>,
    next_start: Option<Time>,
    max_fetches: u32,
    dns_sent: u64,
    pub records: Vec<FetchRecord>,
}

impl PageClient {
    pub fn new(p: PageParams, cfg: TcpConfig, flow: u32, start: Time, stop: Time) -> PageClient {
        let max_fetches = p.max_fetches(start, stop);
        PageClient {
            ex: Exchanges::new(max_fetches * p.objects.len()),
            max_fetches: max_fetches as u32,
            p,
            cfg,
            flow,
            stop,
            cur: None,
            next_start: None,
            dns_sent: 0,
            records: Vec::new(),
        }
    }

    fn n(&self) -> u32 {
        self.p.objects.len() as u32
    }

    /// Starts the next fetch if one is due and none is under way: its name lookup.
    fn start_due(&mut self, now: Time, out: &mut Outbox) {
        let Some(t) = self.next_start.filter(|&t| t <= now && self.cur.is_none()) else {
            return;
        };
        let index = self.records.len() as u32;
        if now >= self.stop || index >= self.max_fetches {
            self.next_start = None;
            return;
        }
        self.next_start = Some(t + self.p.interval);
        self.records.push(FetchRecord {
            index,
            start: now,
            completed: None,
            timed_out: false,
            objects_done: 0,
        });
        self.cur = Some(Current {
            index,
            start: now,
            resolved: false,
            next: 0,
            busy: 0,
        });
        self.dns_sent += 1;
        out.push(Packet {
            flow: self.flow,
            conn: DNS_CONN,
            size: DNS_QUERY_BYTES,
            kind: Kind::Udp,
            dir: Dir::Up,
            seq: index as u64,
            ts_val: now,
            ..Packet::default()
        });
    }

    /// Hands free workers the next objects (only the main document until it is complete).
    fn dispatch(&mut self, now: Time, out: &mut Outbox) {
        let n = self.n();
        let Some(c) = self.cur.as_mut() else { return };
        let limit = if c.next == 0 || (c.next == 1 && c.busy == 1) {
            1
        } else {
            self.p.workers
        };
        while c.resolved && c.next < n && c.busy < limit {
            let x = c.index * n + c.next;
            let cfg = TcpConfig {
                bytes: Some(REQUEST_BYTES),
                ..self.cfg.clone()
            };
            let Ok(mut req) = TcpSender::new(&cfg, self.flow, Dir::Up) else {
                return; // the configuration was checked when the flow was built
            };
            let rsp = TcpReceiver::new(&cfg, self.flow, Dir::Down);
            let from = out.len();
            req.start(now, out);
            tag(out, from, 2 * x);
            self.ex.open(x, Pair { req, rsp });
            c.next += 1;
            c.busy += 1;
        }
    }

    /// Closes exchange x once its response is whole; ends the fetch after its last object.
    fn check_done(&mut self, x: u32, now: Time, out: &mut Outbox) {
        let n = self.n();
        let size = self.p.objects[(x % n) as usize];
        if self.ex.get(x).is_none_or(|c| c.rsp.bytes_delivered() < size) {
            return;
        }
        self.ex.close(x);
        let Some(c) = self.cur.as_mut() else { return };
        c.busy -= 1;
        let r = &mut self.records[c.index as usize];
        r.objects_done += 1;
        if r.objects_done == n {
            r.completed = Some(now);
            self.cur = None;
            self.start_due(now, out);
        } else {
            self.dispatch(now, out);
        }
    }

    /// Abandons the fetch under way if its timeout has passed.
    fn check_timeout(&mut self, now: Time, out: &mut Outbox) {
        let Some(c) = self.cur.as_ref().filter(|c| now >= c.start + self.p.timeout) else {
            return;
        };
        let n = self.n();
        for x in c.index * n..(c.index + 1) * n {
            self.ex.close(x);
        }
        self.records[c.index as usize].timed_out = true;
        self.cur = None;
        self.start_due(now, out);
    }
}

impl Endpoint for PageClient {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.next_start = Some(now);
        self.start_due(now, out);
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if pkt.conn == DNS_CONN {
            if let Some(c) = self
                .cur
                .as_mut()
                .filter(|c| c.index as u64 == pkt.seq && !c.resolved)
            {
                c.resolved = true;
                self.dispatch(now, out);
            }
        } else if self.ex.handle(pkt.conn, out, |e, out| e.on_packet(pkt, now, out)) {
            self.check_done(pkt.conn / 2, now, out);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(k) = self.ex.timers.pop_due(now) {
            self.ex.handle(k, out, |e, out| e.on_timer(now, out));
        }
        self.check_timeout(now, out);
        self.start_due(now, out);
    }

    fn next_timer(&self) -> Option<Time> {
        let deadline = self.cur.as_ref().map(|c| c.start + self.p.timeout);
        let next = self.next_start.filter(|_| self.cur.is_none());
        [self.ex.next_timer(), deadline, next].into_iter().flatten().min()
    }

    fn report(&self, r: &mut FlowReport) {
        self.ex.report(r);
        r.packets_sent += self.dns_sent;
        r.bytes_sent += self.dns_sent * DNS_QUERY_BYTES as u64;
    }
}

/// The server end: the web server of the fetch plan, and the name server answering lookups.
pub struct PageServer {
    web: WebServer,
    answered: u64,
}

impl PageServer {
    pub fn new(plan: Arc<[Connection]>, cfg: TcpConfig, flow: u32) -> PageServer {
        PageServer {
            web: WebServer::new(plan, cfg, flow),
            answered: 0,
        }
    }
}

impl Endpoint for PageServer {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.web.start(now, out);
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if pkt.conn == DNS_CONN {
            self.answered += 1;
            out.push(Packet {
                size: DNS_ANSWER_BYTES,
                dir: Dir::Down,
                ts_ecr: now,
                ..*pkt
            });
        } else {
            self.web.on_packet(pkt, now, out);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        self.web.on_timer(now, out);
    }

    fn next_timer(&self) -> Option<Time> {
        self.web.next_timer()
    }

    fn report(&self, r: &mut FlowReport) {
        self.web.report(r);
        r.packets_received += self.answered;
        r.packets_sent += self.answered;
        r.bytes_sent += self.answered * DNS_ANSWER_BYTES as u64;
    }
}
