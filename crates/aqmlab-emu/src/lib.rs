//! The emulator's forwarder: real IPv4 packets read from two TUN devices (the client side's and
//! the server side's) cross a scenario's path in real time and are written to the other device.
//! Each direction's path is the simulator's: the sending host's NIC (`nic_rate`, a FIFO
//! serialiser per flow and host as the simulator has it: the kernel hands a GSO packet's
//! segments to the TUN together), the client-side access delay (rtt/4, or the
//! flow's own rtt/4: packets are told apart by flow before they enter it), the chain of
//! hops (`Link`: the same qdisc code, optional device queue, serialiser following the rate
//! schedule, random loss on the wire, propagation delay to the next hop; a WiFi hop's driver
//! and shared medium), the server-side access delay (rtt/4); the down direction crosses them in
//! the reverse order. A WiFi station's flows enter the up chain at that station's own link.
//!
//! Time is CLOCK_MONOTONIC in ns since the run's start (`Io::t0`); the components stay
//! sans-I/O and are driven with `now`. One thread, one epoll set (both TUNs, a stop pipe and a
//! timerfd armed at the next deadline): no busy-wait. Events run at their nominal times in time
//! order before packets read in the same wake-up enter (so a discipline never sees time go
//! back), and a link's next transmission starts at the end of the previous one, not at the
//! (late) wake-up, so the achieved rate is the configured one. Packets live in the core's slab
//! (`PacketPool`); their bytes in a side slab of buffers indexed by `PktId`, grown only when
//! the slab grows: no allocation per packet in the steady state.
//!
//! Flows: a packet belongs to a scenario flow by protocol and client-side port, and the
//! server-side port where a client-side port is shared (`Class`, set by the caller who started
//! the tools on those ports; ICMP: port 0); other traffic (tool
//! control connections) gets one flow id per 5-tuple from `flows.len()` on, so hashing
//! disciplines still separate it. CE marks rewrite the IP header's ECN field and checksum.

pub mod ipv4;
mod seqspace;
mod sys;

use aqmlab_core::net::wifi::Medium;
use aqmlab_core::net::{nic_departure, sample_hops, HopParts, Hops, Link, Pipe};
use aqmlab_core::packet::{flags, Dir, Ecn, Kind, Packet, PacketPool, PktId};
use aqmlab_core::queue::{Qdisc, QueueEvent};
use aqmlab_core::record::rows::LinkRow;
use aqmlab_core::record::tables::Recorded;
use aqmlab_core::record::{Level, Recorder};
use aqmlab_core::scenario::build::{self, RunResult};
use aqmlab_core::scenario::Scenario;
use aqmlab_core::units::Time;
use seqspace::SeqSpaces;
use std::collections::HashMap;
use std::os::fd::RawFd;

/// The descriptors the forwarder works with and the monotonic time of the run's start.
#[derive(Clone, Copy, Debug)]
pub struct Io {
    /// The client side's TUN (packets read from it go up, down packets are written to it).
    pub client: RawFd,
    /// The server side's TUN.
    pub server: RawFd,
    /// Readable when the run must end (a pipe the caller writes to).
    pub stop: RawFd,
    /// CLOCK_MONOTONIC ns of time 0 of the run.
    pub t0: u64,
    /// Ask for the SCHED_FIFO real-time class (see `sys::precise_wakeups`) and hold a zero
    /// CPU-latency request for the run (`sys::hold_cpu_latency`).
    pub realtime: bool,
}

/// Packets of protocol `proto` whose client-side port is `client_port` (and server-side port
/// `server_port`, unless 0: any) belong to flow `flow`.
#[derive(Clone, Copy, Debug)]
pub struct Class {
    pub proto: u8,
    pub client_port: u16,
    pub server_port: u16,
    pub flow: u32,
}

/// Microsecond buckets of the wake-up lateness histogram (the last counts everything later).
const LATE_BUCKETS: usize = 2000;

/// What the forwarder measured about itself.
#[derive(Clone, Debug)]
pub struct Stats {
    /// IPv4 packets read from the TUNs.
    pub packets: u64,
    /// Reads that were not IPv4 (or too long), not forwarded.
    pub malformed: u64,
    /// Writes the kernel refused.
    pub write_errors: u64,
    /// CPU time of the forwarding thread.
    pub cpu_ns: u64,
    /// Wall time of the loop.
    pub wall_ns: u64,
    pub wakeups: u64,
    /// How late each propagation delivery (a packet leaving a delay) ran against the clock at
    /// that delivery, in us buckets.
    pub late_us: Vec<u64>,
    pub realtime: bool,
    /// Whether the zero CPU-latency request was held.
    pub cpu_latency_qos: bool,
}

/// Protocol, client address, server address, client port, server port.
type FiveTuple = (u8, [u8; 4], [u8; 4], u16, u16);

/// The TCP flags the packets table records (docs/tables.md `tcp_flags`).
const TABLE_FLAGS: u16 =
    flags::FIN | flags::SYN | flags::PSH | flags::ACK | flags::ECE | flags::CWR | flags::AE;

/// The pipes of one access group after the hops' (`Emu::pipes`): the client side's delay then
/// the server side's for each direction, in the order a packet of that direction crosses them.
const PRE: [usize; 2] = [0, 2];
const POST: [usize; 2] = [1, 3];
const GROUP_PIPES: usize = 4;

#[derive(Clone, Copy)]
enum Due {
    Pipe(usize),
    Tx(usize),
    Wake(usize),
    Air(usize),
    Qdisc(usize),
    Sample,
}

struct Emu {
    now: Time,
    end: Time,
    pool: PacketPool,
    bufs: Vec<Box<[u8]>>,
    buf_len: usize,
    links: Vec<Link>,
    /// First hop of each direction's chain.
    first: [Option<usize>; 2],
    /// Per scenario flow, the hop its up packets enter (a WiFi station's own link) when that
    /// is not the up chain's first.
    entry_up: Vec<Option<usize>>,
    /// Per scenario flow, the WiFi station its client is.
    stations: Vec<usize>,
    tx_end: Vec<Time>,
    /// When each hop's trace opportunity or slot start is due (`Hops::wake_at`).
    wake_due: Vec<Option<Time>>,
    /// The WiFi media and when each one's transmission on the air ends.
    media: Vec<Medium>,
    air_end: Vec<Option<Time>>,
    /// One pipe per hop (its delay to the next), then `GROUP_PIPES` per access group: the
    /// access delays (client side, server side) of the flows that share them.
    pipes: Vec<Pipe>,
    /// Each scenario flow's access group (other traffic: group 0, the topology's `rtt`).
    access: Vec<usize>,
    /// Each scenario flow's NIC rate (`nic_rate`); other traffic has the topology's.
    nic_rate: Vec<Option<u64>>,
    topology_nic_rate: Option<u64>,
    /// Per flow id, when the NIC of its client (up) and of its server (down) frees
    /// (`nic_departure`), grown as other traffic gets ids.
    nic_free: Vec<[Time; 2]>,
    qev: Vec<QueueEvent>,
    rec: Recorder,
    next_sample: Time,
    classes: HashMap<(u8, u16, u16), u32>,
    others: HashMap<FiveTuple, u32>,
    n_flows: u32,
    seqs: SeqSpaces,
    drops: Vec<u64>,
    marks: Vec<u64>,
    /// The `links` rows taken at the scenario's end: the recording covers [0, end] while the
    /// forwarding goes on until the tools have finished.
    closed: Option<Vec<LinkRow>>,
    /// Input descriptor of each direction (`Dir::index`): up reads the client's TUN.
    input: [RawFd; 2],
    /// CLOCK_MONOTONIC ns of the run's time 0 (`Io::t0`).
    t0: u64,
    stats: Stats,
}

fn ecn_of(tos: u8) -> Ecn {
    match tos & 3 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

impl Emu {
    fn output(&self, d: Dir) -> RawFd {
        self.input[d.reverse().index()]
    }

    /// The flow of a packet going `d`: its class, else the id of its 5-tuple.
    fn classify(&mut self, d: Dir, h: &ipv4::Header) -> u32 {
        let (client, server, cport, sport) = match d {
            Dir::Up => (h.src, h.dst, h.sport, h.dport),
            Dir::Down => (h.dst, h.src, h.dport, h.sport),
        };
        let class = self.classes.get(&(h.proto, cport, sport));
        if let Some(&f) = class.or_else(|| self.classes.get(&(h.proto, cport, 0))) {
            return f;
        }
        let next = self.n_flows + self.others.len() as u32;
        *self
            .others
            .entry((h.proto, client, server, cport, sport))
            .or_insert(next)
    }

    /// Reads one packet arriving in direction `d`; false when there is none.
    fn ingress(&mut self, d: Dir) -> bool {
        let id = self.pool.alloc(&Packet::default());
        if id as usize == self.bufs.len() {
            self.bufs.push(vec![0; self.buf_len].into_boxed_slice());
        }
        let Some(n) = sys::read(self.input[d.index()], &mut self.bufs[id as usize]) else {
            self.pool.release(id);
            return false;
        };
        let header = ipv4::parse(&self.bufs[id as usize][..n]).filter(|_| n < self.buf_len);
        let Some(h) = header else {
            self.stats.malformed += 1;
            self.pool.release(id);
            return true;
        };
        self.stats.packets += 1;
        let flow = self.classify(d, &h);
        let (seq, ack, tcp_flags, payload) = match h.tcp {
            Some(t) => {
                let (seq, ack) = self.seqs.relative(flow, d, t.flags, t.seq, t.ack, t.payload);
                (seq, ack, t.flags & TABLE_FLAGS, t.payload)
            }
            None => (0, 0, 0, 0),
        };
        *self.pool.get_mut(id) = Packet {
            flow,
            size: n as u32,
            seq,
            ack,
            tcp_flags,
            payload,
            kind: if h.proto == ipv4::TCP {
                Kind::Tcp
            } else {
                Kind::Udp
            },
            dir: d,
            ecn: ecn_of(h.tos),
            dscp: h.tos >> 2,
            ..Packet::default()
        };
        // The sending host's NIC, as the simulator's (`nic_rate`): the kernel hands a GSO
        // packet's segments to its TUN at once; a NIC serialises them.
        let f = flow as usize;
        if f >= self.nic_free.len() {
            self.nic_free.resize(f + 1, [0; 2]);
        }
        let rate = self.nic_rate.get(f).copied().unwrap_or(self.topology_nic_rate);
        let at = nic_departure(&mut self.nic_free[f][d.index()], rate, self.now, n as u64);
        self.enter_at(self.access_pipe(flow, PRE[d.index()]), id, at);
        true
    }

    /// Pipe `k` (`PRE`/`POST`) of the access group of `flow`.
    fn access_pipe(&self, flow: u32, k: usize) -> usize {
        let group = self.access.get(flow as usize).copied().unwrap_or(0);
        self.links.len() + group * GROUP_PIPES + k
    }

    fn enter(&mut self, pipe: usize, id: PktId) {
        self.enter_at(pipe, id, self.now);
    }

    /// Packet `id` enters pipe `pipe` at `at` (now, or later when it leaves its host's NIC).
    fn enter_at(&mut self, pipe: usize, id: PktId, at: Time) {
        let p = &mut self.pipes[pipe];
        if p.delay == 0 && at == self.now {
            self.leave(pipe, id);
        } else {
            p.insert(at + p.delay, id);
        }
    }

    /// The run's time by the clock (`now` is the time of the event being run).
    fn clock(&self) -> Time {
        sys::monotonic_ns().saturating_sub(self.t0)
    }

    /// Where a packet goes after pipe `pipe`.
    fn leave(&mut self, pipe: usize, id: PktId) {
        if pipe < self.links.len() {
            let next = self.links[pipe].next.expect("a hop pipe leads to a hop");
            self.arrival(next as usize, id);
            return;
        }
        let flow = self.pool.get(id).flow;
        match (pipe - self.links.len()) % GROUP_PIPES {
            k @ (0 | 2) => {
                let d = if k == 0 { Dir::Up } else { Dir::Down };
                let entry = match d {
                    Dir::Up => self.entry_up.get(flow as usize).copied().flatten(),
                    Dir::Down => None,
                };
                match entry.or(self.first[d.index()]) {
                    Some(l) => self.arrival(l, id),
                    None => self.enter(self.access_pipe(flow, POST[d.index()]), id),
                }
            }
            k => {
                let d = if k == 1 { Dir::Up } else { Dir::Down };
                let size = self.pool.get(id).size as usize;
                if !sys::write(self.output(d), &self.bufs[id as usize][..size]) {
                    self.stats.write_errors += 1;
                }
                self.pool.release(id);
            }
        }
    }

    /// The earliest pending deadline.
    fn next_due(&self) -> Option<(Time, Due)> {
        let mut best: Option<(Time, Due)> = None;
        let mut consider = |t: Time, what: Due| {
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, what));
            }
        };
        for (i, p) in self.pipes.iter().enumerate() {
            if let Some(&(t, _)) = p.ring.front() {
                consider(t, Due::Pipe(i));
            }
        }
        for (l, link) in self.links.iter().enumerate() {
            if link.tx.is_some() && link.trace.is_none() {
                consider(self.tx_end[l], Due::Tx(l));
            }
            if let Some(t) = self.wake_due[l] {
                consider(t, Due::Wake(l));
            }
            if let Some(t) = link.qdisc.next_timer() {
                consider(t, Due::Qdisc(l));
            }
        }
        for (m, t) in self.air_end.iter().enumerate() {
            if let Some(t) = *t {
                consider(t, Due::Air(m));
            }
        }
        if self.rec.series_enabled() && self.next_sample <= self.end {
            consider(self.next_sample, Due::Sample);
        }
        best
    }

    /// Runs every event due by `now` (recording up to the scenario's end, then closing the
    /// recording), each at its own time, in time order.
    fn advance(&mut self, now: Time) {
        if self.closed.is_none() {
            self.run_due(now.min(self.end));
            if now > self.end {
                self.close(self.end);
            }
        }
        self.run_due(now);
    }

    /// Takes the `links` rows at `end` and stops recording packets.
    fn close(&mut self, end: Time) {
        self.closed = Some(build::link_rows(&self.links, self.links.len(), end));
        self.rec.level = self.rec.level.min(Level::Series);
        self.next_sample = Time::MAX;
    }

    /// Runs every event due by `now`, each at its own time, in time order.
    fn run_due(&mut self, now: Time) {
        while let Some((t, what)) = self.next_due().filter(|&(t, _)| t <= now) {
            self.now = self.now.max(t);
            match what {
                Due::Pipe(i) => {
                    // Against the clock, not the wake-up: the events run before this one in
                    // the same wake-up (a write runs the receiving host's stack) count too.
                    let late = self.clock().saturating_sub(t) / 1000;
                    self.stats.late_us[(late as usize).min(LATE_BUCKETS - 1)] += 1;
                    let (_, id) = self.pipes[i].ring.pop_front().expect("due");
                    self.leave(i, id);
                }
                Due::Tx(l) => self.tx_done(l),
                Due::Wake(l) => {
                    self.wake_due[l] = None;
                    self.wake(l);
                }
                Due::Air(m) => {
                    self.air_end[m] = None;
                    self.air_done(m);
                }
                Due::Qdisc(l) => self.qdisc_on_timer(l, self.now),
                Due::Sample => {
                    sample_hops(&self.links, self.now, &mut self.rec.queue);
                    self.next_sample += self.rec.interval;
                }
            }
        }
        self.now = self.now.max(now);
    }
}

impl Hops for Emu {
    fn parts(&mut self) -> HopParts<'_> {
        HopParts {
            links: &mut self.links,
            pool: &mut self.pool,
            qev: &mut self.qev,
            rec: &mut self.rec,
            media: &mut self.media,
        }
    }

    fn now(&self) -> Time {
        self.now
    }

    fn dropped(&mut self, flow: u32, _queued: bool) {
        if let Some(n) = self.drops.get_mut(flow as usize) {
            *n += 1;
        }
    }

    /// A mark sets CE in the packet's bytes.
    fn marked(&mut self, id: PktId) {
        ipv4::mark_ce(&mut self.bufs[id as usize]);
        if let Some(n) = self.marks.get_mut(self.pool.get(id).flow as usize) {
            *n += 1;
        }
    }

    fn stop(&mut self) {
        unreachable!("the emulator builds no external discipline, the only kind that stops a run")
    }

    fn transmitting(&mut self, l: usize, done: Time) {
        self.tx_end[l] = done;
    }

    fn forward(&mut self, l: usize, id: PktId, flow: u32) {
        let link = &self.links[l];
        match link.next {
            None => self.enter(self.access_pipe(flow, POST[link.dir.index()]), id),
            Some(next) if link.delay == 0 => self.arrival(next as usize, id),
            Some(_) => self.enter(l, id),
        }
    }

    fn serve(&mut self, l: usize) {
        self.start(l);
    }

    fn station(&self, flow: u32) -> usize {
        self.stations.get(flow as usize).copied().unwrap_or(0)
    }

    fn on_air(&mut self, m: usize, done: Time) {
        self.air_end[m] = Some(done);
    }

    fn wake_at(&mut self, l: usize, t: Time) {
        self.wake_due[l] = Some(self.wake_due[l].map_or(t, |d| d.min(t)));
    }
}

/// Packets read per device and wake-up before the other device and the timers get their turn.
const READ_BATCH: usize = 64;

/// Forwards between the two TUNs of `io` through the path of `sc` until `io.stop` becomes
/// readable. The result has the simulator's tables for the path (`packets`, `queue`, `links`,
/// and the `flows` rows with their drops and marks); the tools that ran the flows fill in the
/// rest.
pub fn forward(sc: &Scenario, seed: u64, io: &Io, classes: &[Class]) -> Result<(RunResult, Stats), String> {
    let prepared = build::prepare(sc, seed)?;
    let resolved = prepared.resolved;
    let links = prepared.links;
    let media = prepared.media;
    let up = Dir::Up.index();
    let entry_up = prepared
        .flows
        .iter()
        .map(|f| f.route[up].map(|r| r.0 as usize))
        .collect();
    let stations = prepared.flows.iter().map(|f| f.station as usize).collect();
    let nic_rate = prepared.flows.iter().map(|f| f.nic_rate).collect();
    let mut rows = prepared.rows;
    let n_flows = rows.len() as u32;
    let end = sc.duration.0;
    // Access groups: the topology's rtt first (other traffic), then each other pair of access
    // delays a flow has (its own `rtt`, or one drawn with `rtt_spread`).
    let rtt = sc.topology.rtt.0;
    let mut groups = vec![(rtt / 4, rtt / 2 - rtt / 4)];
    let access = prepared
        .flows
        .iter()
        .map(|f| {
            let pair = (f.client_delay, f.server_delay);
            groups.iter().position(|&g| g == pair).unwrap_or_else(|| {
                groups.push(pair);
                groups.len() - 1
            })
        })
        .collect();
    let mut pipes: Vec<Pipe> = links
        .iter()
        .map(|l| l.delay)
        .chain(
            groups
                .iter()
                .flat_map(|&(client, server)| [client, server, server, client]),
        )
        .map(|delay| Pipe {
            delay,
            ..Pipe::default()
        })
        .collect();
    pipes.shrink_to_fit();
    let first = Dir::BOTH.map(|d| links.iter().position(|l| l.dir == d));
    let mut emu = Emu {
        now: 0,
        end,
        pool: PacketPool::new(),
        bufs: Vec::new(),
        buf_len: resolved.topology.mtu.0 as usize + 64,
        tx_end: vec![0; links.len()],
        wake_due: vec![None; links.len()],
        links,
        first,
        entry_up,
        stations,
        air_end: vec![None; media.len()],
        media,
        pipes,
        access,
        nic_rate,
        topology_nic_rate: resolved.topology.nic_rate.0,
        nic_free: Vec::new(),
        qev: Vec::new(),
        rec: Recorder::new(sc.record_level(), sc.record.interval.0),
        next_sample: 0,
        classes: classes
            .iter()
            .map(|c| ((c.proto, c.client_port, c.server_port), c.flow))
            .collect(),
        others: HashMap::new(),
        seqs: SeqSpaces::default(),
        n_flows,
        drops: vec![0; n_flows as usize],
        marks: vec![0; n_flows as usize],
        closed: None,
        input: [io.client, io.server],
        t0: io.t0,
        stats: Stats {
            packets: 0,
            malformed: 0,
            write_errors: 0,
            cpu_ns: 0,
            wall_ns: 0,
            wakeups: 0,
            late_us: vec![0; LATE_BUCKETS],
            realtime: false,
            cpu_latency_qos: false,
        },
    };
    let qos = io.realtime.then(sys::hold_cpu_latency).flatten();
    emu.stats.cpu_latency_qos = qos.is_some();
    emu.stats.realtime = sys::precise_wakeups(io.realtime);
    let result = event_loop(&mut emu, io);
    if emu.stats.realtime {
        sys::normal_scheduling();
    }
    drop(qos);
    result.map_err(|e| format!("emulator: {e}"))?;
    // A run cut short (a command that ended early) lasted as long as it ran.
    let end = end.min(emu.now);
    if emu.closed.is_none() {
        emu.close(end);
    }

    for (k, row) in rows.iter_mut().enumerate() {
        row.drops = emu.drops[k];
        row.marks = emu.marks[k];
        // a TCP flow's stream as the forwarder saw it (what the tools' reports do not give:
        // emulate/reports.py tells from it whether a finite transfer was delivered whole)
        if let Some((sent, acked)) = emu.seqs.stream(k as u32, row.direction) {
            row.report.bytes_sent = sent;
            row.report.bytes_delivered = acked;
        }
    }
    let run = RunResult {
        seed,
        duration: end,
        events: emu.stats.packets,
        // no simulated events: the emulator's are packets
        event_kinds: Default::default(),
        recorded: Recorded {
            packets: std::mem::take(&mut emu.rec.packets),
            queue: std::mem::take(&mut emu.rec.queue),
            sojourn: std::mem::take(&mut emu.rec.sojourn),
            flows: rows,
            links: emu.closed.take().expect("closed above"),
            ..Recorded::default()
        },
        conservation: Ok(()),
        peak_packets: emu.pool.capacity(),
        // real kernels and real time: results differ run to run whatever the seed
        random_streams: None,
        resolved,
    };
    Ok((run, emu.stats))
}

fn event_loop(emu: &mut Emu, io: &Io) -> std::io::Result<()> {
    const CLIENT: u64 = 1;
    const SERVER: u64 = 2;
    const STOP: u64 = 4;
    let timer = sys::Timer::new()?;
    let epoll = sys::Epoll::new(&[io.client, io.server, io.stop, timer.0 .0])?;
    let cpu0 = sys::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID);
    let wall0 = sys::monotonic_ns();
    let mut ready = CLIENT | SERVER;
    // The deadline the timerfd is armed at (None once it fired).
    let mut armed = None;
    loop {
        let now = sys::monotonic_ns().saturating_sub(io.t0);
        emu.advance(now);
        let mut read_any = false;
        for (d, bit) in [(Dir::Up, CLIENT), (Dir::Down, SERVER)] {
            if ready & bit != 0 {
                let mut n = 0;
                while n < READ_BATCH && emu.ingress(d) {
                    n += 1;
                }
                if n < READ_BATCH {
                    ready &= !bit;
                }
                read_any |= n > 0;
            }
        }
        if read_any {
            continue;
        }
        let deadline = emu.next_due().map(|(t, _)| io.t0 + t);
        if deadline != armed {
            timer.set(deadline)?;
            armed = deadline;
        }
        let ev = epoll.wait()?;
        emu.stats.wakeups += 1;
        if ev & STOP != 0 {
            break;
        }
        if ev & 8 != 0 {
            timer.clear();
            armed = None;
        }
        ready |= ev & (CLIENT | SERVER);
    }
    emu.stats.cpu_ns = sys::clock_ns(libc::CLOCK_THREAD_CPUTIME_ID) - cpu0;
    emu.stats.wall_ns = sys::monotonic_ns() - wall0;
    Ok(())
}
