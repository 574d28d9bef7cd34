//! Repeated web page fetches, as Flent's `http-getter` makes them (tohojo/http-getter,
//! `src/getter.c`: `get_loop`, `get_once`; `src/worker.c`), the web test of goodbadwifi2015
//! (docs/study-setups.md 4):
//!
//! * A fetch starts every `interval` (`get_loop`: the next start is this start + interval,
//!   `schedule_next`, `getter.c` lines 130-139 and 189; a fetch that takes longer delays the
//!   next one until it ends).
//! * It resolves the server's name first: one UDP query and its answer (Kind::Udp, marked by
//!   [`DNS_CONN`]), answered by the server end at once. (curl resolves once per worker handle;
//!   the model resolves once per fetch, as the handles are reset per fetch and resolve the same
//!   name in parallel.) A query left unanswered is sent again as glibc's stub resolver does
//!   (`res_send.c`: try k of `dns_attempts` waits `dns_timeout` x k with one name server); after
//!   the last try's wait the fetch gets no name and waits for its timeout.
//! * Then the main document (the URL list, fetched by one worker), then the page's objects, each
//!   handed to the first free worker of a pool of `workers` (`get_once`, `getter.c` line 82).
//! * Page fetch time = from the fetch's start to the last byte of its last object.
//! * `timeout` bounds the whole fetch here (http-getter passes it to curl per transfer,
//!   `CURLOPT_TIMEOUT_MS`, `worker.c` line 72; Flent's default is the test length, `HttpGetterRunner`): a fetch not
//!   done by then is recorded as timed out and its open exchanges are abandoned.
//!
//! Transport model, `persistent` (a flow key):
//! * true (default): persistent HTTP/1.1 connections, as http-getter's workers reuse their curl
//!   handle's connection within a fetch (`worker.c` `run_worker`: one easy handle per worker,
//!   `curl_easy_perform` on it for each URL, line 205 at commit a3646c4) and drop it between
//!   fetches (`get_once` sends every worker `RESET` first, `getter.c` line 57, which runs
//!   `reset_worker`: `curl_easy_cleanup` then `curl_easy_init`, `worker.c` lines 147-158). So
//!   each fetch opens one connection per worker at that worker's first object (the main
//!   document on the first worker's, `get_urls(workers, ...)`, `getter.c` line 69), and each
//!   object is a request/response exchange on its worker's connection: a persistent
//!   [`TcpSender::stream`] each way (requests up, responses down), told apart by
//!   `Packet::conn` (2 x connection + 0 / 1); the window and its state carry over from object
//!   to object, and after an idle time the window restarts as the flow's `idle_restart` says.
//!   With `piggyback` (a flow key, default true) a delayed ACK pending at an end leaves when
//!   that end writes its next request or response (Linux sends the ACK with the data:
//!   tcp_transmit_skb -> tcp_event_ack_sent); false: only when its timer fires.
//!   No Nagle delay (curl sets `CURLOPT_TCP_NODELAY`, `worker.c` line 76). A fetch's
//!   connections stay open after it (idle; their closing FIN exchange is not modelled). What a
//!   request asks for (its URL) is not in the packets: the client notes each request's object
//!   in a log the server end reads when the request has arrived whole.
//! * false: every object is one exchange of the PackMime web client/server (`web.rs`,
//!   [`Exchanges`]): a fresh handshake and initial window per object.
//!
//! Both: the pool bounds the concurrency as the workers do; ACKs are not otherwise piggybacked
//! on data.

use super::packmime::{Connection, Exchange};
use super::web::{server_exchange, tag, ConnModel, Exchanges, Pair, WebServer};
use crate::packet::{Dir, Kind, Packet};
use crate::record::rows::FetchRecord;
use crate::record::rows::FlowReport;
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::{Endpoint, Outbox};
use crate::units::Time;
use std::cell::RefCell;
use std::rc::Rc;
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
/// goodbadwifi2015 (docs/study-setups.md 4) gives each page's total and request count only;
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

/// The fetch settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PageParams {
    /// Object sizes, the main document first.
    pub objects: Arc<[u64]>,
    pub workers: u32,
    pub interval: Time,
    pub timeout: Time,
    /// The name lookup: first wait for an answer, and queries per lookup.
    pub dns_timeout: Time,
    pub dns_attempts: u32,
    /// Persistent connections, one per worker and fetch (else a connection per object).
    pub persistent: bool,
    /// A pending delayed ACK leaves with the next request or response record.
    pub piggyback: bool,
}

/// What the requests on each persistent connection ask for, in order: the response sizes the
/// client requested (written by the client end, read by the server end).
pub type RequestLog = Rc<RefCell<Vec<Vec<u64>>>>;

impl PageParams {
    /// The most fetches a run in [start, stop) can begin (starts are `interval` apart at least).
    fn max_fetches(&self, start: Time, stop: Time) -> usize {
        (stop.saturating_sub(start).saturating_sub(1) / self.interval + 1) as usize
    }

    /// The transfer slots a run needs: exchanges (one per object), or connections (one per
    /// worker and fetch).
    fn slots(&self, start: Time, stop: Time) -> usize {
        let per_fetch = if self.persistent {
            self.workers as usize
        } else {
            self.objects.len()
        };
        self.max_fetches(start, stop) * per_fetch
    }

    /// The server's view without persistent connections: a connection per object and fetch,
    /// so that exchange x is object x % objects of fetch x / objects.
    pub fn server_plan(&self, start: Time, stop: Time) -> Arc<[Connection]> {
        let object = |&rsp: &u64| Connection {
            start,
            exchanges: vec![Exchange {
                req: REQUEST_BYTES,
                rsp,
                gap: 0,
                server_delay: 0,
            }],
        };
        let fetch = self.objects.iter().map(object);
        (0..self.max_fetches(start, stop))
            .flat_map(|_| fetch.clone())
            .collect()
    }
}

/// The fetch under way.
struct Current {
    index: u32,
    start: Time,
    resolved: bool,
    /// Queries of the name lookup sent so far, and when the last one's wait ends.
    queries: u32,
    query_wait: Time,
    /// Next object not yet handed to a worker, and objects in flight.
    next: u32,
    busy: u32,
    /// Persistent connections: per worker, whether an object is in flight and the response
    /// bytes its connection has delivered once that object is whole.
    fetching: Vec<bool>,
    due: Vec<u64>,
}

/// The browser end (http-getter).
pub struct PageClient {
    p: PageParams,
    cfg: TcpConfig,
    flow: u32,
    stop: Time,
    ex: Exchanges<TcpSender, TcpReceiver>,
    log: RequestLog,
    cur: Option<Current>,
    next_start: Option<Time>,
    max_fetches: u32,
    dns_sent: u64,
    pub records: Vec<FetchRecord>,
}

impl PageClient {
    fn new(p: PageParams, cfg: TcpConfig, flow: u32, start: Time, stop: Time, log: RequestLog) -> PageClient {
        let max_fetches = p.max_fetches(start, stop);
        PageClient {
            ex: Exchanges::new(p.slots(start, stop)),
            max_fetches: max_fetches as u32,
            p,
            cfg,
            flow,
            stop,
            log,
            cur: None,
            next_start: None,
            dns_sent: 0,
            records: Vec::new(),
        }
    }

    fn n(&self) -> u32 {
        self.p.objects.len() as u32
    }

    /// The transfer slots of fetch `index`.
    fn fetch_slots(&self, index: u32) -> std::ops::Range<u32> {
        let per = if self.p.persistent {
            self.p.workers
        } else {
            self.n()
        };
        index * per..(index + 1) * per
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
        let w = if self.p.persistent {
            self.p.workers as usize
        } else {
            0
        };
        self.cur = Some(Current {
            index,
            start: now,
            resolved: false,
            queries: 0,
            query_wait: 0,
            next: 0,
            busy: 0,
            fetching: vec![false; w],
            due: vec![0; w],
        });
        self.query(now, out);
    }

    /// Sends the lookup's next query and sets its wait (res_send.c: `retrans << try`, one
    /// name server, try counted from 0).
    fn query(&mut self, now: Time, out: &mut Outbox) {
        let Some(c) = self.cur.as_mut() else { return };
        c.query_wait = now + (self.p.dns_timeout << c.queries);
        c.queries += 1;
        self.dns_sent += 1;
        out.push(Packet {
            flow: self.flow,
            conn: DNS_CONN,
            size: DNS_QUERY_BYTES,
            kind: Kind::Udp,
            dir: Dir::Up,
            seq: c.index as u64,
            ts_val: now,
            ..Packet::default()
        });
    }

    /// The wait for an answer, while the lookup may still ask again.
    fn lookup_wait(&self) -> Option<Time> {
        let c = self.cur.as_ref()?;
        (!c.resolved && c.queries < self.p.dns_attempts).then_some(c.query_wait)
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
            let from = out.len();
            let x = if self.p.persistent {
                // The first free worker; its connection opened at its first object.
                let w = c.fetching.iter().position(|&f| !f).expect("a free worker");
                let x = c.index * self.p.workers + w as u32;
                if self.ex.get(x).is_none() {
                    let Ok(mut req) = TcpSender::stream(&self.cfg, self.flow, Dir::Up) else {
                        return; // the configuration was checked when the flow was built
                    };
                    let rsp = TcpReceiver::new(&self.cfg, self.flow, Dir::Down);
                    req.start(now, out);
                    tag(out, from, 2 * x);
                    self.ex.open(x, Pair { req, rsp });
                }
                let size = self.p.objects[c.next as usize];
                self.log.borrow_mut()[x as usize].push(size);
                c.fetching[w] = true;
                c.due[w] += size;
                let pair = self.ex.get_mut(x).expect("just opened");
                pair.request(x, self.p.piggyback, REQUEST_BYTES, now, out);
                x
            } else {
                let x = c.index * n + c.next;
                let cfg = TcpConfig {
                    bytes: Some(REQUEST_BYTES),
                    ..self.cfg.clone()
                };
                let Ok(mut req) = TcpSender::new(&cfg, self.flow, Dir::Up) else {
                    return; // the configuration was checked when the flow was built
                };
                let rsp = TcpReceiver::new(&cfg, self.flow, Dir::Down);
                req.start(now, out);
                tag(out, from, 2 * x);
                self.ex.open(x, Pair { req, rsp });
                x
            };
            self.ex.arm(x);
            c.next += 1;
            c.busy += 1;
        }
    }

    /// Notes the object of slot x done once its response is whole (closing a per-object
    /// exchange); ends the fetch after its last object.
    fn check_done(&mut self, x: u32, now: Time, out: &mut Outbox) {
        let n = self.n();
        let Some(c) = self.cur.as_mut() else { return };
        let Some(pair) = self.ex.get(x) else { return };
        let delivered = pair.rsp.bytes_delivered();
        if self.p.persistent {
            let w = (x % self.p.workers) as usize;
            if x / self.p.workers != c.index || !c.fetching[w] || delivered < c.due[w] {
                return;
            }
            c.fetching[w] = false;
        } else {
            if delivered < self.p.objects[(x % n) as usize] {
                return;
            }
            self.ex.close(x);
        }
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
        let index = c.index;
        for x in self.fetch_slots(index) {
            self.ex.close(x);
        }
        self.records[index as usize].timed_out = true;
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
        if self.lookup_wait().is_some_and(|t| t <= now) {
            self.query(now, out);
        }
        self.start_due(now, out);
    }

    fn next_timer(&self) -> Option<Time> {
        let deadline = self.cur.as_ref().map(|c| c.start + self.p.timeout);
        let next = self.next_start.filter(|_| self.cur.is_none());
        [self.ex.next_timer(), deadline, next, self.lookup_wait()]
            .into_iter()
            .flatten()
            .min()
    }

    fn report(&self, r: &mut FlowReport) {
        self.ex.report(r);
        r.packets_sent += self.dns_sent;
        r.bytes_sent += self.dns_sent * DNS_QUERY_BYTES as u64;
    }
}

/// The server end of persistent connections: per connection the requests' receiver and the
/// responses' stream, a response written as soon as its request has arrived whole.
struct StreamServer {
    cfg: TcpConfig,
    flow: u32,
    ex: Exchanges<TcpReceiver, TcpSender>,
    log: RequestLog,
    /// Per connection: whether it was opened (a retransmitted SYN must not reopen it), and the
    /// responses written.
    seen: Vec<bool>,
    answered: Vec<u32>,
    /// A pending delayed ACK leaves with the next response (`PageParams::piggyback`).
    piggyback: bool,
}

impl StreamServer {
    /// Opens connection x at its requests' first packet: their receiver and the responses'
    /// stream (its handshake at once, as the web server's response transfers).
    fn accept(&mut self, x: u32, now: Time, out: &mut Outbox) {
        let Ok(mut rsp) = TcpSender::stream(&self.cfg, self.flow, Dir::Down) else {
            return; // the configuration was checked when the flow was built
        };
        let req = TcpReceiver::new(&self.cfg, self.flow, Dir::Up);
        let from = out.len();
        rsp.start(now, out);
        tag(out, from, 2 * x + 1);
        self.seen[x as usize] = true;
        self.ex.open(x, Pair { req, rsp });
    }

    /// Writes the responses of connection x whose requests have arrived whole.
    fn answer(&mut self, x: u32, now: Time, out: &mut Outbox) {
        let log = self.log.borrow();
        let Some(pair) = self.ex.get_mut(x) else { return };
        let k = &mut self.answered[x as usize];
        while let Some(&size) = log[x as usize].get(*k as usize) {
            if pair.req.bytes_delivered() < (*k as u64 + 1) * REQUEST_BYTES {
                break;
            }
            pair.respond(x, self.piggyback, size, now, out);
            *k += 1;
        }
        self.ex.arm(x);
    }
}

impl Endpoint for StreamServer {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        let Some((x, opens)) = server_exchange(&self.seen, pkt.conn) else {
            return;
        };
        if opens {
            self.accept(x, now, out);
        }
        if self.ex.handle(pkt.conn, out, |e, out| e.on_packet(pkt, now, out)) {
            self.answer(x, now, out);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(k) = self.ex.timers.pop_due(now) {
            self.ex.handle(k, out, |e, out| e.on_timer(now, out));
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.ex.next_timer()
    }

    fn report(&self, r: &mut FlowReport) {
        self.ex.report(r);
    }
}

/// The web server of either transport model.
enum Server {
    PerObject(WebServer),
    Persistent(StreamServer),
}

impl Server {
    fn end(&mut self) -> &mut dyn Endpoint {
        match self {
            Server::PerObject(s) => s,
            Server::Persistent(s) => s,
        }
    }

    fn end_ref(&self) -> &dyn Endpoint {
        match self {
            Server::PerObject(s) => s,
            Server::Persistent(s) => s,
        }
    }
}

/// The server end: the web server, and the name server answering lookups.
pub struct PageServer {
    web: Server,
    answered: u64,
}

/// A webpage flow's two ends for a run in [start, stop): the server's and the client's.
pub fn ends(p: PageParams, cfg: TcpConfig, flow: u32, start: Time, stop: Time) -> (PageServer, PageClient) {
    let n = p.slots(start, stop);
    let log: RequestLog = Rc::new(RefCell::new(vec![Vec::new(); if p.persistent { n } else { 0 }]));
    let server = PageServer::new(&p, cfg.clone(), flow, start, stop, log.clone());
    (server, PageClient::new(p, cfg, flow, start, stop, log))
}

impl PageServer {
    fn new(
        p: &PageParams,
        cfg: TcpConfig,
        flow: u32,
        start: Time,
        stop: Time,
        log: RequestLog,
    ) -> PageServer {
        let web = if p.persistent {
            let n = p.slots(start, stop);
            Server::Persistent(StreamServer {
                cfg,
                flow,
                ex: Exchanges::new(n),
                log,
                seen: vec![false; n],
                answered: vec![0; n],
                piggyback: p.piggyback,
            })
        } else {
            let model = ConnModel {
                persistent: false,
                piggyback: p.piggyback,
            };
            Server::PerObject(WebServer::new(p.server_plan(start, stop), cfg, flow, model))
        };
        PageServer { web, answered: 0 }
    }
}

impl Endpoint for PageServer {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.web.end().start(now, out);
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
            self.web.end().on_packet(pkt, now, out);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        self.web.end().on_timer(now, out);
    }

    fn next_timer(&self) -> Option<Time> {
        self.web.end_ref().next_timer()
    }

    fn report(&self, r: &mut FlowReport) {
        self.web.end_ref().report(r);
        r.packets_received += self.answered;
        r.packets_sent += self.answered;
        r.bytes_sent += self.answered * DNS_ANSWER_BYTES as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SEC;

    /// The times of the name queries a fetch sends when none is answered, within 60 s.
    fn unanswered_queries(dns_timeout: Time, dns_attempts: u32) -> Vec<Time> {
        let p = PageParams {
            objects: vec![1000].into(),
            workers: 4,
            interval: 100 * SEC,
            timeout: 100 * SEC,
            dns_timeout,
            dns_attempts,
            persistent: true,
            piggyback: true,
        };
        let (_, mut client) = ends(p, crate::transport::tcp::profiles::rfc(), 0, 0, 100 * SEC);
        let mut out = Outbox::default();
        let mut sent = Vec::new();
        client.start(0, &mut out);
        while let Some(t) = client.next_timer().filter(|&t| t < 60 * SEC) {
            sent.extend(out.drain(..).filter(|q| q.conn == DNS_CONN).map(|q| q.ts_val));
            client.on_timer(t, &mut out);
        }
        sent.extend(out.drain(..).filter(|q| q.conn == DNS_CONN).map(|q| q.ts_val));
        sent
    }

    #[test]
    fn an_unanswered_lookup_asks_again_as_glibc_does() {
        // glibc res_send.c with one name server: try k waits retrans << k, retry tries in all
        // (RES_TIMEOUT 5 s, RES_DFLRETRY 2): queries at 0 and 5 s, none after the second's
        // 10 s wait. With three tries and 1 s: 0, 1 and 1 + 2 = 3 s.
        assert_eq!(unanswered_queries(5 * SEC, 2), vec![0, 5 * SEC]);
        assert_eq!(unanswered_queries(SEC, 3), vec![0, SEC, 3 * SEC]);
        assert_eq!(unanswered_queries(SEC, 1), vec![0]);
    }
}
