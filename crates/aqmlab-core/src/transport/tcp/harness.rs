//! Test-only integration harness: one TcpSender and one TcpReceiver joined by a forward
//! bottleneck (FIFO with a packet limit, a rate and a propagation delay, preceded by a
//! drop/mark function) and a reverse link (same model, no loss), driven by a small event loop
//! built on the endpoints' `next_timer()`. Independent of the simulator in `sim/`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet, VecDeque};

use super::config::{DataEcn, TcpConfig};
use super::connection::new_connection;
use super::receiver::TcpReceiver;
use super::sender::TcpSender;
use crate::packet::{Dir, Ecn, EcnMode, Packet};
use crate::rng::Rng;
use crate::transport::wire::{HEADER, SYN_SIZE};
use crate::transport::Endpoint;
use crate::units::{tx_time, Time, MS, SEC};

/// What the forward path does with a packet before the bottleneck queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Drop,
    /// Set CE (ECT packets only; others are dropped, as an AQM would).
    Mark,
}

/// (packet, queue length in packets, now) -> verdict.
pub type Filter = Box<dyn FnMut(&Packet, usize, Time) -> Verdict>;

#[derive(Clone, Copy, Debug)]
pub struct LinkCfg {
    pub rate: u64,
    pub delay: Time,
    /// Packets, the one in service included.
    pub limit: usize,
}

struct Link {
    cfg: LinkCfg,
    queue: VecDeque<Packet>,
}

enum Ev {
    TxDone(usize),
    Arrive(usize, Packet),
}

/// Union of [start, end) ranges.
#[derive(Default, Debug)]
pub struct RangeSet(BTreeMap<u64, u64>);

impl RangeSet {
    pub fn insert(&mut self, s: u64, e: u64) {
        let (mut a, mut b) = (s, e);
        if let Some((&ps, &pe)) = self.0.range(..=s).next_back() {
            if pe >= s {
                a = ps;
                b = b.max(pe);
                self.0.remove(&ps);
            }
        }
        while let Some((&ns, &ne)) = self.0.range(a..).next() {
            if ns > b {
                break;
            }
            b = b.max(ne);
            self.0.remove(&ns);
        }
        self.0.insert(a, b);
    }
    /// End of the range starting at `from`, if any.
    pub fn prefix_end(&self, from: u64) -> u64 {
        match self.0.range(..=from).next_back() {
            Some((_, &e)) if e >= from => e,
            _ => from,
        }
    }
    pub fn covers(&self, s: u64, e: u64) -> bool {
        matches!(self.0.range(..=s).next_back(), Some((_, &pe)) if pe >= e)
    }
}

pub struct Sim {
    pub now: Time,
    pub snd: TcpSender,
    pub rcv: TcpReceiver,
    links: [Link; 2],
    heap: BinaryHeap<Reverse<(Time, u64)>>,
    evs: HashMap<u64, Ev>,
    n: u64,
    pub filter: Filter,
    /// Every packet the sender emitted (if `log_sent`).
    pub log_sent: bool,
    pub sent: Vec<(Time, Packet)>,
    /// Bottleneck departures after `count_from`: bytes.
    pub count_from: Time,
    pub fwd_bytes_out: u64,
    pub drops: u64,
    pub marks: u64,
    pub log_cwnd: bool,
    pub cwnd_log: Vec<(Time, u64)>,
    pub ecn_reduction_times: Vec<Time>,
    pub sent_data: RangeSet,
    pub arrived_data: RangeSet,
    pub rcv_finished_at: Option<Time>,
    /// Receiver packets sent with an ECT/CE codepoint (must stay 0).
    pub ect_acks: u64,
}

impl Sim {
    pub fn new(cfg: &TcpConfig, fwd: LinkCfg, rev: LinkCfg) -> Sim {
        let (snd, rcv) = new_connection(cfg, 1, Dir::Up);
        Sim {
            now: 0,
            snd,
            rcv,
            links: [
                Link {
                    cfg: fwd,
                    queue: VecDeque::new(),
                },
                Link {
                    cfg: rev,
                    queue: VecDeque::new(),
                },
            ],
            heap: BinaryHeap::new(),
            evs: HashMap::new(),
            n: 0,
            filter: Box::new(|_, _, _| Verdict::Pass),
            log_sent: false,
            sent: Vec::new(),
            count_from: 0,
            fwd_bytes_out: 0,
            drops: 0,
            marks: 0,
            log_cwnd: false,
            cwnd_log: Vec::new(),
            ecn_reduction_times: Vec::new(),
            sent_data: RangeSet::default(),
            arrived_data: RangeSet::default(),
            rcv_finished_at: None,
            ect_acks: 0,
        }
    }

    /// A symmetric path: both links `rate`, one-way delay `owd`, forward limit `limit` packets.
    pub fn symmetric(cfg: &TcpConfig, rate: u64, owd: Time, limit: usize) -> Sim {
        Sim::new(
            cfg,
            LinkCfg {
                rate,
                delay: owd,
                limit,
            },
            LinkCfg {
                rate,
                delay: owd,
                limit: usize::MAX,
            },
        )
    }

    fn schedule(&mut self, t: Time, ev: Ev) {
        self.n += 1;
        self.heap.push(Reverse((t, self.n)));
        self.evs.insert(self.n, ev);
    }

    fn enqueue(&mut self, l: usize, mut p: Packet) {
        if l == 0 {
            let q = self.links[0].queue.len();
            match (self.filter)(&p, q, self.now) {
                Verdict::Pass => {}
                Verdict::Drop => {
                    self.drops += 1;
                    return;
                }
                Verdict::Mark => {
                    if p.ecn.capable() {
                        p.ecn = Ecn::Ce;
                        self.marks += 1;
                    } else {
                        self.drops += 1;
                        return;
                    }
                }
            }
        }
        let link = &mut self.links[l];
        if link.queue.len() >= link.cfg.limit {
            self.drops += 1;
            return;
        }
        let size = p.size as u64;
        link.queue.push_back(p);
        if link.queue.len() == 1 {
            let t = self.now + tx_time(size, link.cfg.rate);
            self.schedule(t, Ev::TxDone(l));
        }
    }

    fn route(&mut self, from_sender: bool, out: Vec<Packet>) {
        for p in out {
            if from_sender {
                if self.log_sent {
                    self.sent.push((self.now, p));
                }
                if p.payload > 0 {
                    self.sent_data.insert(p.seq, p.seq + p.payload as u64);
                }
                self.enqueue(0, p);
            } else {
                if p.ecn != Ecn::NotEct {
                    self.ect_acks += 1;
                }
                self.enqueue(1, p);
            }
        }
    }

    fn after_sender_event(&mut self) {
        if self.log_cwnd && self.cwnd_log.last().is_none_or(|&(_, c)| c != self.snd.cwnd()) {
            self.cwnd_log.push((self.now, self.snd.cwnd()));
        }
        while (self.ecn_reduction_times.len() as u64) < self.snd.ecn_reductions() {
            self.ecn_reduction_times.push(self.now);
        }
    }

    pub fn start(&mut self) {
        let mut out = Vec::new();
        self.snd.start(self.now, &mut out);
        self.route(true, out);
        self.after_sender_event();
    }

    /// Runs until `t_end` or until nothing is pending.
    pub fn run_until(&mut self, t_end: Time) {
        let mut steps: u64 = 0;
        loop {
            steps += 1;
            assert!(steps < 200_000_000, "event loop runaway");
            let th = self.heap.peek().map(|r| r.0 .0);
            let ts = self.snd.next_timer();
            let tr = self.rcv.next_timer();
            let Some(t) = [th, ts, tr].into_iter().flatten().min() else {
                break;
            };
            if t > t_end {
                break;
            }
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            let mut out = Vec::new();
            if th == Some(t) {
                let Reverse((_, n)) = self.heap.pop().unwrap();
                match self.evs.remove(&n).unwrap() {
                    Ev::TxDone(l) => {
                        let p = self.links[l].queue.pop_front().unwrap();
                        if l == 0 && self.now > self.count_from {
                            self.fwd_bytes_out += p.size as u64;
                        }
                        let d = self.links[l].cfg.delay;
                        self.schedule(t + d, Ev::Arrive(l, p));
                        if let Some(next) = self.links[l].queue.front() {
                            let tt = t + tx_time(next.size as u64, self.links[l].cfg.rate);
                            self.schedule(tt, Ev::TxDone(l));
                        }
                    }
                    Ev::Arrive(0, p) => {
                        if p.payload > 0 {
                            self.arrived_data.insert(p.seq, p.seq + p.payload as u64);
                        }
                        self.rcv.on_packet(&p, t, &mut out);
                        if self.rcv_finished_at.is_none() && self.rcv.finished() {
                            self.rcv_finished_at = Some(t);
                        }
                        self.route(false, out);
                    }
                    Ev::Arrive(_, p) => {
                        self.snd.on_packet(&p, t, &mut out);
                        self.route(true, out);
                        self.after_sender_event();
                    }
                }
            } else if ts == Some(t) {
                self.snd.on_timer(t, &mut out);
                self.route(true, out);
                self.after_sender_event();
            } else {
                self.rcv.on_timer(t, &mut out);
                self.route(false, out);
            }
        }
    }

    /// Conservation: the receiver delivered exactly the contiguous prefix of the data that
    /// reached it, all of which the sender had sent.
    pub fn check_conservation(&self) {
        let prefix = self.arrived_data.prefix_end(1);
        assert_eq!(
            self.rcv.bytes_delivered(),
            prefix - 1,
            "delivered != contiguous arrived prefix"
        );
        if prefix > 1 {
            assert!(self.sent_data.covers(1, prefix), "delivered bytes never sent");
        }
    }
}

fn drop_first_tx(segs: &[u64], mss: u64) -> Filter {
    let mut pending: HashSet<u64> = segs.iter().map(|i| 1 + i * mss).collect();
    Box::new(move |p, _, _| {
        if p.payload > 0 && pending.remove(&p.seq) {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    })
}

fn retx_times(sim: &Sim) -> Vec<(Time, u64)> {
    let mut seen = HashSet::new();
    let mut v = vec![];
    for (t, p) in &sim.sent {
        if p.payload > 0 && !seen.insert(p.seq) {
            v.push((*t, p.seq));
        }
    }
    v
}

const MBPS: u64 = 1_000_000;

#[test]
fn handshake_one_segment_exact_completion_time() {
    let rate = 10 * MBPS;
    let owd = 50 * MS;
    let cfg = TcpConfig {
        bytes: Some(1000),
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, rate, owd, 1000);
    sim.start();
    sim.run_until(10 * SEC);
    // SYN (60 B) ->, SYN-ACK (60 B) <-, data (1000 + 52 B) ->, ACK (52 B) <- (the FIN segment
    // is acknowledged at once): 2 RTT plus four serialisation times.
    let expect = 4 * owd
        + tx_time(SYN_SIZE as u64, rate) * 2
        + tx_time(1000 + HEADER as u64, rate)
        + tx_time(HEADER as u64, rate);
    assert_eq!(expect, 200 * MS + 48_000 * 2 + 841_600 + 41_600);
    assert_eq!(sim.snd.completed(), Some(expect));
    let mut r = crate::record::rows::FlowReport::default();
    sim.snd.report(&mut r);
    sim.rcv.report(&mut r);
    assert_eq!(r.first_syn, Some(0));
    assert_eq!(r.completed, Some(expect));
    assert_eq!((r.packets_sent, r.bytes_sent), (2, 60 + 1052));
    assert_eq!(r.bytes_delivered, 1000);
    sim.check_conservation();
}

#[test]
fn lost_syns_retried_with_doubling_then_iw_one() {
    let rate = 10 * MBPS;
    let cfg = TcpConfig {
        bytes: Some(20 * 1448),
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, rate, 50 * MS, 1000);
    let mut syns = 0;
    sim.filter = Box::new(move |p, _, _| {
        if p.tcp_flags & crate::packet::flags::SYN != 0 {
            syns += 1;
            if syns <= 5 {
                return Verdict::Drop;
            }
        }
        Verdict::Pass
    });
    sim.log_sent = true;
    sim.start();
    sim.run_until(100 * SEC);
    let syn_times: Vec<Time> = sim
        .sent
        .iter()
        .filter(|(_, p)| p.payload == 0)
        .map(|(t, _)| *t)
        .collect();
    // initial_rto = 1 s, doubling: 0, 1, 3, 7, 15, 31 s.
    assert_eq!(syn_times, vec![0, SEC, 3 * SEC, 7 * SEC, 15 * SEC, 31 * SEC]);
    // RFC 5681: after a retransmitted SYN the initial window is one segment.
    let first_data: Vec<&(Time, Packet)> = sim.sent.iter().filter(|(_, p)| p.payload > 0).collect();
    assert!(
        first_data[1].0 > first_data[0].0,
        "only one segment in the first flight"
    );
    assert!(sim.snd.completed().is_some());
    assert_eq!(sim.rcv.bytes_delivered(), 20 * 1448);
    sim.check_conservation();
}

#[test]
fn rto_backoff_exact_times_for_isolated_segment() {
    let rate = 10 * MBPS;
    let owd = 50 * MS;
    let cfg = TcpConfig {
        bytes: Some(1000),
        cc: "newreno".into(),
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, rate, owd, 1000);
    sim.filter = Box::new(|p, _, _| {
        if p.payload > 0 {
            Verdict::Drop
        } else {
            Verdict::Pass
        }
    });
    sim.log_sent = true;
    sim.start();
    sim.run_until(300 * SEC);
    // First RTT sample from the handshake: R = 2*owd + 2 serialisations of a 60-byte SYN.
    let r = 2 * owd + 2 * tx_time(60, rate);
    // RFC 6298: SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4*RTTVAR) (floor 200 ms, cap 60 s).
    let rto0 = (r + (4 * (r / 2)).max(MS)).max(200 * MS);
    let data_times: Vec<Time> = sim
        .sent
        .iter()
        .filter(|(_, p)| p.payload > 0)
        .map(|(t, _)| *t)
        .collect();
    let mut expect = vec![r];
    let mut rto = rto0;
    while expect.len() < data_times.len().min(12) {
        let last = *expect.last().unwrap();
        expect.push(last + rto);
        rto = (2 * rto).min(60 * SEC);
    }
    assert!(data_times.len() >= 10, "{data_times:?}");
    assert_eq!(&data_times[..expect.len()], &expect[..]);
    // Cap reached: the last gaps are 60 s.
    assert_eq!(expect[11] - expect[10], 60 * SEC);
    assert_eq!(sim.snd.rto_count() as usize, data_times.len() - 1);
}

fn three_losses(sack: bool, min_rto: Time) -> (Sim, Vec<(Time, u64)>) {
    let cfg = TcpConfig {
        bytes: Some(200 * 1448),
        sack,
        min_rto,
        cc: "newreno".into(),
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, 10 * MBPS, 50 * MS, 1000);
    sim.filter = drop_first_tx(&[40, 43, 46], 1448);
    sim.log_sent = true;
    sim.start();
    sim.run_until(60 * SEC);
    let r = retx_times(&sim);
    assert!(sim.snd.completed().is_some());
    assert_eq!(sim.rcv.bytes_delivered(), 200 * 1448);
    sim.check_conservation();
    (sim, r)
}

#[test]
fn sack_repairs_three_losses_in_one_rtt() {
    let (sim, r) = three_losses(true, 200 * MS);
    assert_eq!(sim.snd.rto_count(), 0);
    let seqs: Vec<u64> = r.iter().map(|x| x.1).collect();
    assert_eq!(seqs, vec![1 + 40 * 1448, 1 + 43 * 1448, 1 + 46 * 1448]);
    let span = r[2].0 - r[0].0;
    assert!(span < 100 * MS, "SACK: retransmissions spread over {span} ns");
    assert_eq!(sim.snd.fast_recoveries(), 1);
}

#[test]
fn newreno_repairs_one_loss_per_rtt() {
    // RFC 6298's 1 s RTO floor: RFC 6582's "impatient" timer (re-armed on the first partial
    // ACK only) then leaves room for the three RTTs the repair takes.
    let (sim, r) = three_losses(false, SEC);
    assert_eq!(sim.snd.rto_count(), 0);
    let seqs: Vec<u64> = r.iter().map(|x| x.1).collect();
    assert_eq!(seqs, vec![1 + 40 * 1448, 1 + 43 * 1448, 1 + 46 * 1448]);
    for w in r.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            (100 * MS..150 * MS).contains(&gap),
            "NewReno partial-ACK gap {gap} ns"
        );
    }
    assert_eq!(sim.snd.fast_recoveries(), 1);
}

#[test]
fn newreno_impatient_timer_fires_with_200ms_floor() {
    // With a 200 ms floor and a 100 ms RTT the impatient timer, armed at the first partial ACK,
    // expires before the third hole is repaired (known cost of the variant, RFC 6582 4).
    let (sim, r) = three_losses(false, 200 * MS);
    assert_eq!(sim.snd.rto_count(), 1);
    assert_eq!(r[1].1, 1 + 43 * 1448);
}

/// `data_ecn = "ect1"` on a connection without ECN (`ecn` off), a loss-based sender labelled
/// L4S: new data carries ECT(1), the SYN and retransmissions Not-ECT (RFC 3168 6.1.1), and a CE
/// mark reaches no one, since the receiver of a connection that negotiated no ECN echoes none
/// (Linux tcp_ecn_check_ce acts only with TCP_ECN_OK). So marking its packets changes nothing:
/// it sends the same segments at the same times as the same flow whose packets pass unmarked,
/// and answers only the drops of the 100-packet buffer (fast recoveries).
#[test]
fn data_ecn_ect1_without_ecn_ignores_marks_and_answers_drops() {
    let run = |data_ecn: DataEcn, mark: bool| {
        let cfg = TcpConfig {
            data_ecn,
            bytes: Some(3000 * 1448),
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut sim = Sim::symmetric(&cfg, 10 * MBPS, 25 * MS, 100);
        sim.filter = Box::new(move |p, q, _| {
            if mark && p.ecn.capable() && q >= 20 {
                Verdict::Mark
            } else {
                Verdict::Pass
            }
        });
        sim.log_sent = true;
        sim.start();
        sim.run_until(60 * SEC);
        sim
    };
    let marked = run(DataEcn::Ect1, true);
    let plain = run(DataEcn::Negotiated, false);
    assert!(!marked.snd.ecn_negotiated());
    assert!(marked.marks > 100, "{} marks", marked.marks);
    assert!(marked.ecn_reduction_times.is_empty());
    let wire =
        |s: &Sim| -> Vec<(Time, u64, u32)> { s.sent.iter().map(|(t, p)| (*t, p.seq, p.payload)).collect() };
    assert_eq!(wire(&marked), wire(&plain));
    assert!(marked.drops > 0 && marked.snd.fast_recoveries() > 0);
    assert!(marked.snd.completed().is_some());
    let mut seen = HashSet::new();
    for (_, p) in &marked.sent {
        let first = p.payload > 0 && seen.insert(p.seq);
        assert_eq!(
            p.ecn,
            if first { Ecn::Ect1 } else { Ecn::NotEct },
            "seq {}",
            p.seq
        );
    }
    assert!(plain.sent.iter().all(|(_, p)| p.ecn == Ecn::NotEct));
    marked.check_conservation();
}

#[test]
fn ecn_marks_instead_of_drops() {
    for cc in ["newreno", "cubic"] {
        let cfg = TcpConfig {
            ecn: EcnMode::Classic,
            cc: cc.into(),
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut sim = Sim::symmetric(&cfg, 10 * MBPS, 25 * MS, 10_000);
        // Step marking at 20 packets of queue (no drops: the buffer never fills).
        sim.filter = Box::new(|p, q, _| {
            if p.ecn.capable() && q >= 20 {
                Verdict::Mark
            } else {
                Verdict::Pass
            }
        });
        sim.start();
        sim.run_until(30 * SEC);
        assert!(sim.snd.ecn_negotiated());
        assert_eq!(sim.drops, 0);
        assert_eq!(sim.snd.retransmits(), 0, "{cc}");
        assert!(sim.marks > 0);
        let times = &sim.ecn_reduction_times;
        assert!(times.len() >= 10, "{cc}: {} reductions", times.len());
        for w in times.windows(2) {
            assert!(
                w[1] - w[0] >= 50 * MS,
                "{cc}: reductions {} ns apart (< one RTT)",
                w[1] - w[0]
            );
        }
        sim.check_conservation();
    }
}

#[test]
fn mathis_throughput_newreno_random_loss() {
    // NewReno (no SACK), an ACK for every segment, so the square-root law's constant is
    // sqrt(3/2) (b = 1); RFC 3465 byte counting would also make it sqrt(3/2) with delayed ACKs.
    let mss = 1448u64;
    let owd = 20 * MS;
    for (i, p) in [0.005f64, 0.01, 0.02].into_iter().enumerate() {
        let cfg = TcpConfig {
            cc: "newreno".into(),
            sack: false,
            delack: None,
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut sim = Sim::symmetric(&cfg, 1000 * MBPS, owd, 100_000);
        let mut rng = Rng::from_seed(42 + i as u64);
        sim.filter = Box::new(move |pk, _, _| {
            if pk.payload > 0 && rng.bernoulli(p) {
                Verdict::Drop
            } else {
                Verdict::Pass
            }
        });
        let dur = 400 * SEC;
        sim.start();
        sim.run_until(dur);
        let rtt = 2 * owd + tx_time(mss + 52, 1000 * MBPS) + tx_time(52, 1000 * MBPS);
        let model = (mss * 8) as f64 / (rtt as f64 / 1e9) * (1.5 / p).sqrt();
        let got = sim.rcv.bytes_delivered() as f64 * 8.0 / (dur as f64 / 1e9);
        let ratio = got / model;
        eprintln!(
            "mathis p={p}: {:.3} Mb/s vs model {:.3} Mb/s, ratio {ratio:.3}, rto {}",
            got / 1e6,
            model / 1e6,
            sim.snd.rto_count()
        );
        assert!((0.75..=1.25).contains(&ratio), "p={p}: ratio {ratio:.3}");
        sim.check_conservation();
    }
}

fn utilisation(cfg: &TcpConfig) -> f64 {
    let rate = 10 * MBPS;
    // 50 ms RTT, buffer of one BDP: 10 Mb/s * 50 ms = 62 500 B = 41.7 packets of 1500 B.
    let mut sim = Sim::symmetric(cfg, rate, 25 * MS, 42);
    sim.count_from = 5 * SEC;
    sim.start();
    sim.run_until(60 * SEC);
    sim.check_conservation();
    let u = sim.fwd_bytes_out as f64 * 8.0 / (rate as f64 * 55.0);
    eprintln!(
        "{} sack={}: utilisation {u:.4}, drops {}, retransmits {}, rto {}",
        cfg.cc,
        cfg.sack,
        sim.drops,
        sim.snd.retransmits(),
        sim.snd.rto_count()
    );
    u
}

#[test]
fn utilisation_one_bdp_buffer() {
    for (cc, sack) in [("cubic", true), ("newreno", true), ("newreno", false)] {
        let cfg = TcpConfig {
            cc: cc.into(),
            sack,
            ..crate::transport::tcp::profiles::rfc()
        };
        let u = utilisation(&cfg);
        assert!(u >= 0.95, "{cc} sack={sack}: utilisation {u}");
    }
}

#[test]
fn cubic_crosses_w_max_at_k() {
    let mss = 1448u64;
    let rtt = 100 * MS;
    let cfg = TcpConfig {
        cc: "cubic".into(),
        hystart: crate::transport::cc::Hystart::Off,
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, 100 * MBPS, rtt / 2, 1_000_000);
    sim.filter = drop_first_tx(&[300], mss);
    sim.log_cwnd = true;
    sim.start();
    sim.run_until(20 * SEC);
    assert_eq!(sim.snd.fast_recoveries(), 1);
    assert_eq!(sim.snd.rto_count(), 0);
    let log = &sim.cwnd_log;
    // The reduction: the first decrease of cwnd.
    let red = log.windows(2).position(|w| w[1].1 < w[0].1).unwrap() + 1;
    let w_max = log[red - 1].1 as f64 / mss as f64;
    let ssthresh = log[red].1;
    // The epoch starts with the first growth after recovery.
    let ep = red + log[red..].iter().position(|&(_, c)| c > ssthresh).unwrap();
    let t_epoch = log[ep].0;
    let cwnd_epoch = ssthresh as f64 / mss as f64;
    let k = ((w_max - cwnd_epoch) / 0.4).cbrt();
    let cross = log[ep..]
        .iter()
        .find(|&&(_, c)| c as f64 / mss as f64 >= w_max)
        .unwrap()
        .0;
    let dt = (cross - t_epoch) as f64 / 1e9;
    eprintln!("cubic: W_max {w_max:.1} seg, epoch cwnd {cwnd_epoch:.1}, K {k:.3} s, crossed after {dt:.3} s");
    assert!((cwnd_epoch / w_max - 0.7).abs() < 0.01);
    assert!((dt - k).abs() <= 0.1, "crossing at {dt} s vs K = {k} s");
}

#[test]
fn conservation_under_random_loss() {
    for (sack, seed) in [(true, 1u64), (false, 2), (true, 3), (false, 4)] {
        for cc in ["newreno", "cubic"] {
            let bytes = 2_000_000;
            let cfg = TcpConfig {
                bytes: Some(bytes),
                sack,
                cc: cc.into(),
                ..crate::transport::tcp::profiles::rfc()
            };
            let mut sim = Sim::symmetric(&cfg, 20 * MBPS, 10 * MS, 60);
            let mut rng = Rng::from_seed(seed);
            sim.filter = Box::new(move |_, _, _| {
                if rng.bernoulli(0.02) {
                    Verdict::Drop
                } else {
                    Verdict::Pass
                }
            });
            sim.start();
            sim.run_until(600 * SEC);
            sim.check_conservation();
            assert_eq!(sim.rcv.bytes_delivered(), bytes, "sack={sack} {cc}");
            let done = sim.snd.completed().expect("finite transfer completes");
            assert!(done >= sim.rcv_finished_at.unwrap());
        }
    }
}

#[test]
fn per_ack_scoreboard_work_is_bounded() {
    // Large windows (1 Gb/s x 100 ms = 8300 packets) with random loss: the scoreboard work
    // per ACK must stay bounded by a small constant, whatever the window size.
    for (sack, cc) in [(true, "cubic"), (true, "newreno"), (false, "newreno")] {
        let cfg = TcpConfig {
            sack,
            cc: cc.into(),
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut sim = Sim::symmetric(&cfg, 1000 * MBPS, 50 * MS, 100_000);
        let mut rng = Rng::from_seed(7);
        sim.filter = Box::new(move |p, _, _| {
            if p.payload > 0 && rng.bernoulli(0.00002) {
                Verdict::Drop
            } else {
                Verdict::Pass
            }
        });
        sim.start();
        sim.log_cwnd = true;
        sim.run_until(30 * SEC);
        let mut r = crate::record::rows::FlowReport::default();
        sim.snd.report(&mut r);
        let work = sim.snd.scoreboard().work();
        let events = sim.snd.acks_received() + r.packets_sent;
        let per = work as f64 / events as f64;
        eprintln!(
            "cost sack={sack} {cc}: {} packets, {} acks, work/event {per:.2}, max cwnd {} seg",
            r.packets_sent,
            sim.snd.acks_received(),
            sim.cwnd_log.iter().map(|x| x.1).max().unwrap_or(0) / 1448
        );
        assert!(per < 4.0, "work per ACK/packet {per}");
        sim.check_conservation();
    }
}

#[test]
fn ect_only_on_new_data() {
    let cfg = TcpConfig {
        ecn: EcnMode::Classic,
        bytes: Some(300 * 1448),
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, 10 * MBPS, 25 * MS, 30);
    sim.filter = drop_first_tx(&[20, 21, 60], 1448);
    sim.log_sent = true;
    sim.start();
    sim.run_until(60 * SEC);
    assert!(sim.snd.completed().is_some());
    assert!(sim.snd.retransmits() >= 3);
    let mut seen = HashSet::new();
    for (_, p) in &sim.sent {
        let first = p.payload > 0 && seen.insert(p.seq);
        let want = if first { Ecn::Ect0 } else { Ecn::NotEct };
        assert_eq!(p.ecn, want, "seq {} payload {} first {first}", p.seq, p.payload);
    }
    assert_eq!(sim.ect_acks, 0);
    sim.check_conservation();
}

#[test]
fn tail_loss_rescue_retransmission() {
    // The last two segments of a finite SACK transfer are lost together with an earlier one:
    // the earlier loss starts recovery, and NextSeg rule 3/4 retransmits the unSACKed tail
    // (no dup ACKs can ever come for it) without waiting for the RTO.
    let n = 40u64;
    let cfg = TcpConfig {
        bytes: Some(n * 1448),
        cc: "newreno".into(),
        ..crate::transport::tcp::profiles::rfc()
    };
    let mut sim = Sim::symmetric(&cfg, 10 * MBPS, 25 * MS, 1000);
    sim.filter = drop_first_tx(&[30, n - 1], 1448);
    sim.log_sent = true;
    sim.start();
    sim.run_until(60 * SEC);
    assert_eq!(sim.rcv.bytes_delivered(), n * 1448);
    assert_eq!(sim.snd.rto_count(), 0);
    let r: Vec<u64> = retx_times(&sim).iter().map(|x| (x.1 - 1) / 1448).collect();
    assert_eq!(r, vec![30, n - 1]);
    sim.check_conservation();
}

/// A finite SACK transfer over a symmetric path whose segments `losses` are lost on their first
/// transmission, recovered in one fast recovery without a timeout: the sender's log, and the
/// time of the first retransmission.
fn one_recovery(cfg: &TcpConfig, rate: u64, owd: Time, losses: &[u64]) -> (Vec<(Time, Packet)>, Time) {
    let mut sim = Sim::symmetric(cfg, rate, owd, 10_000);
    sim.filter = drop_first_tx(losses, 1448);
    sim.log_sent = true;
    sim.start();
    sim.run_until(60 * SEC);
    assert!(sim.snd.completed().is_some());
    assert_eq!((sim.snd.rto_count(), sim.snd.fast_recoveries()), (0, 1));
    sim.check_conservation();
    let (t0, _) = retx_times(&sim)[0];
    (std::mem::take(&mut sim.sent), t0)
}

/// New segments sent in the `span` after the first retransmission of one early loss, by a
/// CUBIC-2.6.22 SACK sender (ns-2 TCP/Linux's), with rate halving on or off.
fn sent_after_fast_retransmit(rate_halving: bool, span: Time) -> usize {
    let cfg = TcpConfig {
        bytes: Some(2000 * 1448),
        cc: "cubic_2_6_22".into(),
        iw: 2,
        delack: None,
        hystart: crate::transport::cc::Hystart::Off,
        rate_halving,
        // The slow-start overshoot queues the retransmission behind ~300 ms of data: a 1 s
        // floor keeps the timer out of the comparison.
        min_rto: SEC,
        ..crate::transport::tcp::profiles::rfc()
    };
    let (sent, t0) = one_recovery(&cfg, 10 * MBPS, 50 * MS, &[200]);
    sent.iter()
        .filter(|(t, p)| *t > t0 && *t <= t0 + span && p.payload > 0 && p.seq > 1 + 200 * 1448)
        .count()
}

#[test]
fn rate_halving_sends_one_segment_per_two_acks_from_the_start_of_recovery() {
    // ns-2 tcp-linux.cc: after the fast retransmit next_pkts_in_flight_ = the old cwnd W and
    // send_much lets the pipe fall by one per packet sent: one new segment per two ACKs from
    // the first duplicate ACK on. With cwnd = ssthresh = 0.8 W at once (RFC 6675) nothing new
    // leaves until W - 0.8 W ACKs have come back. ACKs return every 1.2 ms (1500 bytes at
    // 10 Mb/s, the queue never empties in this window): 40 in 48 ms.
    let span = 48 * MS;
    let at_once = sent_after_fast_retransmit(false, span);
    let halving = sent_after_fast_retransmit(true, span);
    assert!(
        (15..=25).contains(&halving),
        "rate halving: {halving} new segments for ~40 ACKs"
    );
    assert!(at_once <= 2, "cwnd = ssthresh at once: {at_once}");
}

/// Segments (retransmissions and new data) sent in the first `span` after the fast retransmit
/// of a window that lost `losses` (every third segment from segment 100), with ns-2 Sack1's
/// pipe (`sack1_pipe`) or RFC 6675's.
fn sent_in_first_recovery_rtt(sack1_pipe: bool, losses: &[u64], span: Time) -> usize {
    let cfg = TcpConfig {
        bytes: Some(1000 * 1448),
        cc: "newreno".into(),
        delack: None,
        hystart: crate::transport::cc::Hystart::Off,
        sack1_pipe,
        min_rto: SEC,
        ..crate::transport::tcp::profiles::rfc()
    };
    let (sent, t0) = one_recovery(&cfg, 100 * MBPS, 25 * MS, losses);
    sent.iter()
        .filter(|(t, p)| *t > t0 && *t < t0 + span && p.payload > 0)
        .count()
}

#[test]
fn sack1_pipe_counts_lost_segments_until_acks_arrive() {
    // tcp-sack1.cc: at the fast retransmit pipe_ = outstanding - 3 and cwnd_ = W/2; every
    // duplicate ACK takes one off and every segment sent adds one, sending while
    // pipe_ < cwnd_. The k lost segments never produce an ACK in the first round, so they stay
    // in pipe_ and the round sends about k segments fewer than RFC 6675, whose pipe drops a
    // segment once three SACKed segments lie above it. The path (100 Mb/s, 50 ms) never
    // queues, so the round is the base RTT.
    let losses: Vec<u64> = (0..11).map(|i| 100 + 3 * i).collect();
    let span = 50 * MS;
    let rfc = sent_in_first_recovery_rtt(false, &losses, span);
    let ns2 = sent_in_first_recovery_rtt(true, &losses, span);
    let k = losses.len();
    assert!(
        rfc >= ns2 + k - 2 && rfc <= ns2 + k + 2,
        "RFC 6675 sent {rfc}, Sack1's pipe {ns2}, {k} losses"
    );
}
