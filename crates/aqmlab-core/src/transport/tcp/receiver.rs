//! TCP data receiver (sans-I/O): handshake reply, in-order delivery with out-of-order
//! reassembly, cumulative ACKs with up to 3 SACK blocks (RFC 2018: the block holding the most
//! recently received segment first, then the most recently reported ones), delayed ACKs
//! (RFC 1122 / 5681: every second full segment (`segs_per_ack`; ns-2 FullTcp's segsperack_ 1:
//! every one) or after the delack timer, which runs from the first unACKed segment or, with
//! `delack_grid`, fires on multiples of the delay (ns-2 FullTcp); immediately for
//! out-of-order data, duplicates, hole-filling segments and the FIN; the first `quickack` data
//! segments of a connection are each ACKed at once, as Linux's quick-ACK mode does, and with
//! `requick` again after a duplicate or every segment out of sequence), timestamp
//! echo per
//! RFC 7323 (TS.Recent from the segment at the left edge of the window), the RFC 3168 ECN
//! receiver (ECE on every ACK from a CE mark until a CWR arrives) and the AccECN receiver
//! (RFC 9768: the ACE counter on every ACK, `accecn.rs`).
//!
//! Linux's further ACK rules, each a key: the read that ACKs a lone pushed segment
//! (`push_ack`: tcp_measure_rcv_mss's ICSK_ACK_PUSHED for a short segment or a full one with
//! PSH, acted on by tcp_cleanup_rbuf once the read has emptied the queue, no out-of-order data
//! held), SACK compression (`sack_compress`: __tcp_ack_snd_check, tcp_compressed_ack_kick) and
//! D-SACK (`dsack`, RFC 2883: the next ACK reports a segment that arrived again as its first
//! SACK block; tcp_input.c tcp_dsack_set from tcp_send_dupack, tcp_data_queue and
//! tcp_data_queue_ofo, written first by tcp_options_write; a partial overlap with held
//! out-of-order data, tcp_dsack_extend, is not reported).
//!
//! Every ACK advertises the receive window (`rcvbuf.rs`): the constant `rwnd`, or the window
//! Linux grows with its receive buffer (`rcv_window = "linux"`, whose growth also sends ACKs at
//! once, as Linux's tcp_grow_window does).
//!
//! Simplifications (documented): the receiver never sends data; it answers every SYN with a
//! SYN-ACK and relies on the sender's SYN retransmission when a SYN-ACK is lost (no SYN-ACK
//! timer); the FIN flag rides on the last data segment and consumes no sequence number; the
//! application reads in-order data at once.

use super::accecn::{answer_syn, Feedback, ReceiverEcn, RxCounters};
use super::config::{AdaptiveAto, PushAck, RcvWindow, Requick, TcpConfig};
use super::ranges::RangeSet;
use super::rcvbuf::LinuxWindow;
use super::rto::RttEstimator;
use super::timer_wheel;
use crate::packet::{flags, Dir, Ecn, Kind, Packet, SackBlock, MAX_SACK_BLOCKS};
use crate::record::rows::FlowReport;
use crate::transport::cc::dctcp::echoes_each_ce;
use crate::transport::wire::{ack_size, SYN_SIZE};
use crate::transport::{Endpoint, Outbox};
use crate::units::{Time, MS, SEC};

/// The receiving end of a TCP connection. Laid out by use (`repr(C)`, aligned to a cache line):
/// the first two lines hold what an in-order segment reads and writes, the rest what segments
/// out of order, SACK and AccECN use.
#[repr(C, align(64))]
pub struct TcpReceiver {
    rcv_nxt: u64,
    /// In-order bytes received since the last ACK.
    unacked_bytes: u64,
    /// Unacked in-order bytes that make an ACK go at once (segs_per_ack x mss).
    ack_every: u64,
    packets_received: u64,
    /// ACKs (incl. SYN-ACKs) sent.
    pub acks_sent: u64,
    last_ack_sent: u64,
    ts_recent: Time,
    flow: u32,
    /// Quick ACKs left (Linux icsk_ack.quick: tcp_incr_quickack on the first data segment,
    /// decremented per ACK sent, tcp_dec_quickack_mode).
    quick: u32,
    // Second line.
    delack_at: Option<Time>,
    delack: Option<Time>,
    /// Out-of-order data above rcv_nxt (bytes).
    ooo: RangeSet,
    /// Direction of the data (ACKs go the other way).
    dir: Dir,
    sack: bool,
    /// ECE reflects each data segment's CE (RFC 8257 3.2, DCTCP) instead of RFC 3168's latch.
    each_ce: bool,
    delack_grid: bool,
    synced: bool,
    ece: bool,
    /// The ECN this end supports (`receiver_ecn`, none when the flow's `ecn` is off).
    ecn_cfg: ReceiverEcn,
    feedback: Feedback,
    // The rest.
    /// Which segments restore quick ACKs (`requick`), and how many they restore.
    requick_on: Requick,
    requick: u32,
    /// A classic ECN receiver's quick ACKs after a first CE or a not-ECT segment after ECT
    /// ones (`ecn_quickack`; 0 when off), whether ECT data has arrived (TCP_ECN_SEEN), and
    /// whether a CWR segment is ACKed at once (`cwr_ack`).
    ecn_quick: u32,
    ect_seen: bool,
    cwr_ack: bool,
    fin_end: Option<u64>,
    n_blocks: usize,
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    /// The AccECN counters (used once AccECN is negotiated).
    acc: RxCounters,
    window: Window,
    /// The segment size `push_ack` compares with.
    mss: u32,
    /// The kernel's tick rate the delayed-ACK timer runs on (`timer_wheel`; 0: exact).
    timer_hz: u32,
    push_ack: PushAck,
    /// ICSK_ACK_PUSHED: a segment since the last ACK asks the read to ACK it.
    pushed: bool,
    /// SACK compression's state (`None`: off).
    comp: Option<SackCompress>,
    /// D-SACK: report duplicates (`dsack`), and the one the next ACK reports.
    dsack: bool,
    dup: Option<SackBlock>,
    /// Linux's tcp_event_data_recv: the return to quick-ACK mode after a long receive gap
    /// (`gap_quickack`) and the delayed ACK's adaptive timeout (`adaptive_ato`); `None`:
    /// neither.
    recv: Option<Box<DataRecv>>,
    /// The handshake's RTT sample is taken (SACK compression's srtt, the gap's RTO).
    hs_sampled: bool,
}

/// What Linux's tcp_event_data_recv keeps of the in-order arrivals, in the kernel's ticks (one
/// nanosecond a tick without `timer_hz`): the last one's jiffy (icsk_ack.lrcvtime), the
/// receiving end's RTO and SRTT (icsk_rto and srtt_us, from the handshake's sample), the quick
/// ACKs a gap longer than the RTO restores (tcp_incr_quickack; `gap_quickack`) and the delayed
/// ACK's timeout (icsk_ack.ato; `adaptive_ato`).
struct DataRecv {
    /// Every timeout at most icsk_delack_max (`adaptive_ato = "linux"`, 5.10 on).
    delack_max: bool,
    tick: Time,
    /// TCP_ATO_MIN (the profile's `delack`) in ticks.
    ato_min: Time,
    last: Option<Time>,
    rto: RttEstimator,
    gap_quick: Option<u32>,
    /// icsk_ack.ato in ticks.
    ato: Option<Time>,
}

/// Linux's SACK compression (tcp_input.c __tcp_ack_snd_check): the ACKs held back, the
/// duplicate ACKs sent at the current rcv_nxt, and the timer.
#[derive(Default)]
struct SackCompress {
    /// tp->compressed_ack.
    held: u32,
    /// tp->dup_ack_counter and tp->compressed_ack_rcv_nxt.
    dups: u32,
    dups_at: u64,
    /// tp->compressed_ack_timer's expiry.
    at: Option<Time>,
    /// srtt_us (x 8) from the handshake: the SYN-ACK's send time, echoed by the first segment.
    srtt_us8: u64,
}

/// tcp_comp_sack_nr, tcp_comp_sack_delay_ns and tcp_comp_sack_slack_ns (net.ipv4 defaults),
/// TCP_FASTRETRANS_THRESH.
const COMP_SACK_NR: u32 = 44;
const COMP_SACK_DELAY: Time = 1_000_000;
const COMP_SACK_SLACK: Time = 100_000;
const FASTRETRANS_THRESH: u32 = 3;

/// The receive window the ACKs advertise.
enum Window {
    Fixed(u32),
    Linux(Box<LinuxWindow>),
}

impl TcpReceiver {
    pub fn new(cfg: &TcpConfig, flow: u32, dir: Dir) -> TcpReceiver {
        TcpReceiver {
            flow,
            dir,
            sack: cfg.sack,
            ecn_cfg: if cfg.ecn.on() {
                cfg.receiver_ecn
            } else {
                ReceiverEcn::Off
            },
            each_ce: echoes_each_ce(&cfg.cc),
            delack: cfg.delack,
            ack_every: cfg.segs_per_ack as u64 * cfg.mss as u64,
            delack_grid: cfg.delack_grid,
            timer_hz: cfg.timer_hz,
            synced: false,
            feedback: Feedback::Off,
            acc: RxCounters::default(),
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            blocks: [SackBlock::default(); MAX_SACK_BLOCKS],
            n_blocks: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            ece: false,
            unacked_bytes: 0,
            delack_at: None,
            quick: cfg.quickack,
            requick_on: cfg.requick,
            requick: requick(cfg, cfg.quickack),
            ecn_quick: requick(cfg, cfg.ecn_quickack),
            ect_seen: false,
            cwr_ack: cfg.cwr_ack,
            fin_end: None,
            packets_received: 0,
            acks_sent: 0,
            window: match cfg.rcv_window {
                RcvWindow::Fixed => Window::Fixed(cfg.rwnd_bytes() as u32),
                RcvWindow::Linux | RcvWindow::Linux5 => Window::Linux(Box::new(LinuxWindow::new(cfg))),
            },
            mss: cfg.mss,
            push_ack: cfg.push_ack,
            pushed: false,
            comp: (cfg.sack_compress && cfg.sack).then(SackCompress::default),
            dsack: cfg.dsack && cfg.sack,
            dup: None,
            hs_sampled: false,
            recv: (cfg.gap_quickack || cfg.adaptive_ato != AdaptiveAto::Off).then(|| {
                let tick = if cfg.timer_hz > 0 {
                    SEC / cfg.timer_hz as Time
                } else {
                    1
                };
                Box::new(DataRecv {
                    delack_max: cfg.adaptive_ato == AdaptiveAto::Linux,
                    tick,
                    ato_min: cfg.delack.unwrap_or(0).div_ceil(tick),
                    last: None,
                    rto: cfg.rtt_estimator(),
                    gap_quick: cfg.gap_quickack.then(|| requick(cfg, cfg.quickack)),
                    ato: (cfg.adaptive_ato != AdaptiveAto::Off).then_some(0),
                })
            }),
        }
    }

    /// Payload bytes delivered in order.
    pub fn bytes_delivered(&self) -> u64 {
        self.rcv_nxt.saturating_sub(1)
    }

    /// The AccECN counters r.cep, r.ceb, r.e0b, r.e1b (RFC 9768 3.2.1).
    pub fn accecn_counters(&self) -> &RxCounters {
        &self.acc
    }

    /// The next expected sequence number.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// True once the FIN and all data before it have arrived.
    pub fn finished(&self) -> bool {
        self.fin_end.is_some_and(|f| self.rcv_nxt >= f)
    }

    fn base(&self, now: Time) -> Packet {
        Packet {
            flow: self.flow,
            kind: Kind::Tcp,
            dir: self.dir.reverse(),
            ecn: Ecn::NotEct,
            seq: 1,
            ack: self.rcv_nxt,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ..Packet::default()
        }
    }

    fn send_ack(&mut self, now: Time, out: &mut Outbox) {
        let mut p = self.base(now);
        p.tcp_flags = flags::ACK
            | match self.feedback {
                Feedback::Accurate => self.acc.ack_flags(),
                _ if self.ece => flags::ECE,
                _ => 0,
            };
        if let Some(d) = self.dup.take() {
            // the D-SACK block first, then the SACK blocks the option still has room for
            let mut b = [d; MAX_SACK_BLOCKS];
            let n = self.n_blocks.min(MAX_SACK_BLOCKS - 1);
            b[1..=n].copy_from_slice(&self.blocks[..n]);
            p.set_sacks(&b[..=n]);
        } else if self.sack {
            p.set_sacks(&self.blocks[..self.n_blocks]);
        }
        p.wnd = match &mut self.window {
            Window::Fixed(w) => *w,
            Window::Linux(l) => {
                let a = l.advertise(self.rcv_nxt, self.ooo.len());
                if a.end_quick {
                    self.quick = 0;
                }
                a.wnd as u32
            }
        };
        p.size = ack_size(p.n_sack as usize);
        out.push(p);
        self.acks_sent += 1;
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_bytes = 0;
        self.delack_at = None;
        self.quick = self.quick.saturating_sub(1);
        // tcp_event_ack_sent: the held ACKs are sent with this one, the timer cancelled, and
        // the pending flags (ICSK_ACK_PUSHED among them) cleared with the delayed-ACK timer.
        self.pushed = false;
        if let Some(c) = &mut self.comp {
            c.held = 0;
            c.at = None;
        }
    }

    /// Whether the ACK of out-of-order data waits (SACK compression), counting it if so; the
    /// first three at one rcv_nxt and the 44th go at once.
    fn compress(&mut self, now: Time) -> bool {
        let rcv_nxt = self.rcv_nxt;
        let rcv_rtt = match &self.window {
            Window::Linux(l) => l.rtt_us8(),
            Window::Fixed(_) => 0,
        };
        let Some(c) = &mut self.comp else {
            return false;
        };
        if c.held >= COMP_SACK_NR {
            return false;
        }
        if c.dups_at != rcv_nxt {
            c.dups_at = rcv_nxt;
            c.dups = 0;
        }
        if c.dups < FASTRETRANS_THRESH {
            c.dups += 1;
            return false;
        }
        c.held += 1;
        if c.at.is_none() {
            c.at = Some(now + comp_delay(rcv_rtt, c.srtt_us8));
        }
        true
    }

    /// Sends the delayed ACK now if one is pending: data leaving this host the other way
    /// carries it (FullTcp and Linux piggyback the ACK; here it is its own packet at that
    /// instant).
    pub fn send_pending_ack(&mut self, now: Time, out: &mut Outbox) {
        if self.delack_at.is_some() {
            self.send_ack(now, out);
        }
    }

    /// Bytes [s, e) arrived again: the next ACK reports them (`dsack`).
    fn duplicate(&mut self, s: u64, e: u64) {
        if self.dsack {
            self.dup = Some(SackBlock { start: s, end: e });
        }
    }

    /// RFC 2018 block order after data arrived at `seq` (out of order).
    fn update_blocks(&mut self, seq: u64) {
        let mut new = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        if let Some((a, b)) = self.ooo.containing(seq) {
            new[0] = SackBlock { start: a, end: b };
            n = 1;
        }
        for k in 0..self.n_blocks {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if let Some((a, b)) = self.ooo.containing(self.blocks[k].start) {
                let blk = SackBlock { start: a, end: b };
                if !new[..n].contains(&blk) {
                    new[n] = blk;
                    n += 1;
                }
            }
        }
        self.blocks = new;
        self.n_blocks = n;
    }

    /// Drops blocks now covered by the cumulative ACK, refreshing merged ones.
    fn prune_blocks(&mut self) {
        let mut new = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        for k in 0..self.n_blocks {
            if let Some((a, b)) = self.ooo.containing(self.blocks[k].start.max(self.rcv_nxt)) {
                let blk = SackBlock { start: a, end: b };
                if !new[..n].contains(&blk) {
                    new[n] = blk;
                    n += 1;
                }
            }
        }
        self.blocks = new;
        self.n_blocks = n;
    }
}

/// TCP_DELACK_MAX (HZ / 5; icsk_delack_max's default) and the bound HZ / 2 that
/// tcp_send_delayed_ack puts on a grown timeout.
const DELACK_MAX: Time = 200 * MS;
const ATO_BOUND: Time = 500 * MS;

impl DataRecv {
    /// A data segment `pkt` arrived at `now` with `rcv_nxt` the next byte expected; only an
    /// in-order one counts (tcp_data_queue's queue_and_out, where tcp_event_data_recv runs).
    /// The first sets the timeout to TCP_ATO_MIN; after it, with m the ticks since the
    /// previous one: m at most half of TCP_ATO_MIN moves the timeout halfway to TCP_ATO_MIN
    /// (the common case, which needs no RTO: that is 200 ms at least), m under the timeout moves
    /// it to half of itself plus m (at most the RTO), and m over the RTO restores the quick ACKs.
    fn on_data(&mut self, pkt: &Packet, now: Time, rcv_nxt: u64, quick: &mut u32) {
        if pkt.seq > rcv_nxt || pkt.seq + pkt.payload as u64 <= rcv_nxt {
            return;
        }
        let now = now / self.tick;
        let half = self.ato_min / 2;
        match self.last {
            None => {
                if let Some(ato) = self.ato.as_mut() {
                    *ato = self.ato_min;
                }
            }
            Some(last) if now - last <= half => {
                if let Some(ato) = self.ato.as_mut() {
                    *ato = *ato / 2 + half;
                }
            }
            Some(last) => {
                let (m, rto) = (now - last, self.rto.rto().div_ceil(self.tick));
                if let Some(ato) = self.ato.as_mut().filter(|a| m < **a) {
                    *ato = (*ato / 2 + m).min(rto);
                }
                if let Some(q) = self.gap_quick.filter(|_| m > rto) {
                    *quick = (*quick).max(q);
                }
            }
        }
        self.last = Some(now);
    }

    /// tcp_send_delayed_ack's delay: the timeout, where it has grown past TCP_DELACK_MIN
    /// (TCP_ATO_MIN, `delack`) at most HZ / 2, TCP_DELACK_MAX for a pushed segment, and the
    /// SRTT (at least TCP_DELACK_MIN) once known; then, from 5.10 (`linux`), at most
    /// icsk_delack_max. `delack` without `adaptive_ato`.
    fn delay(&self, delack: Time, pushed: bool) -> Time {
        let Some(ato) = self.ato else { return delack };
        let t = |d: Time| d.div_ceil(self.tick);
        let min = self.ato_min;
        let mut ato = ato;
        if ato > min {
            let mut bound = t(if pushed { DELACK_MAX } else { ATO_BOUND });
            if let Some(srtt) = self.rto.srtt() {
                bound = bound.min(t(srtt).max(min));
            }
            ato = ato.min(bound);
        }
        if self.delack_max {
            ato = ato.min(t(DELACK_MAX));
        }
        ato * self.tick
    }

    /// tcp_delack_timer_handler: the delayed-ACK timer fired ("Delayed ACK missed"), so the
    /// timeout doubles, at most the RTO (a receiver that sends no data is never in ping-pong
    /// mode, whose rule differs).
    fn on_delack_timer(&mut self) {
        let rto = self.rto.rto().div_ceil(self.tick);
        if let Some(ato) = self.ato.as_mut() {
            *ato = (*ato * 2).min(rto);
        }
    }
}

/// When SACK compression's timer fires after it is armed: 5 % of the RTT (the receiver's
/// estimate, or srtt if that is lower and known; both in microseconds x 8, so x 125 / 20 ns), at
/// most tcp_comp_sack_delay_ns, plus the slack (a lone soft hrtimer runs at its slack's end).
fn comp_delay(rcv_rtt_us8: u64, srtt_us8: u64) -> Time {
    let mut rtt = rcv_rtt_us8;
    if srtt_us8 != 0 && srtt_us8 < rtt {
        rtt = srtt_us8;
    }
    (rtt * 125 / 20).min(COMP_SACK_DELAY) + COMP_SACK_SLACK
}

/// Linux's tcp_incr_quickack: half the receive window in segments (2 if that is 0), at most
/// `max` (TCP_MAX_QUICKACKS, the profile's `quickack`, or the caller's own cap); 0 when `max`
/// is.
fn requick(cfg: &TcpConfig, max: u32) -> u32 {
    let half = cfg.rwnd_bytes() / (2 * cfg.mss as u64);
    (if half == 0 { 2 } else { half }).min(max as u64) as u32
}

impl Endpoint for TcpReceiver {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        self.packets_received += 1;
        if pkt.tcp_flags & flags::SYN != 0 {
            if !self.synced {
                self.synced = true;
                self.rcv_nxt = 1;
                self.last_ack_sent = 1;
                self.feedback = answer_syn(self.ecn_cfg, pkt.tcp_flags, pkt.ecn).0;
            }
            self.ts_recent = pkt.ts_val;
            // SYN-ACK: sent at once, also for a retransmitted SYN.
            let mut p = self.base(now);
            p.seq = 0;
            p.ack = 1;
            p.size = SYN_SIZE;
            p.tcp_flags = flags::SYN | flags::ACK | answer_syn(self.ecn_cfg, pkt.tcp_flags, pkt.ecn).1;
            p.wnd = match &self.window {
                Window::Fixed(w) => *w,
                Window::Linux(l) => l.syn_window() as u32,
            };
            out.push(p);
            self.acks_sent += 1;
            return;
        }
        if !self.synced {
            return;
        }
        if !self.hs_sampled {
            // tcp_synack_rtt_meas: the handshake's RTT, the first sample of srtt_us, from the
            // first segment after the SYN-ACK (the handshake's ACK, or data that carries it)
            self.hs_sampled = true;
            let r = now.saturating_sub(pkt.ts_ecr);
            if let Some(c) = self.comp.as_mut() {
                c.srtt_us8 = (r / 1_000).max(1) * 8;
            }
            if let Some(g) = self.recv.as_deref_mut() {
                g.rto.sample(r, 0, 0);
            }
        }
        if pkt.payload == 0 {
            return;
        }
        if let Some(g) = self.recv.as_deref_mut() {
            g.on_data(pkt, now, self.rcv_nxt, &mut self.quick);
        }
        // ECN asks for this ACK at once: an AccECN counter change, or a CWR segment (`cwr_ack`)
        let mut ecn_now = false;
        match self.feedback {
            Feedback::Off => {}
            Feedback::Accurate => ecn_now = self.acc.on_data(pkt.ecn, pkt.payload as u64),
            Feedback::Classic if self.each_ce => {
                // RFC 8257 3.2: a change of CE state first ACKs the data before it, with the old
                // state
                let ce = pkt.ecn == Ecn::Ce;
                if ce != self.ece && self.unacked_bytes > 0 {
                    self.send_ack(now, out);
                }
                self.ece = ce;
            }
            Feedback::Classic => {
                if pkt.tcp_flags & flags::CWR != 0 {
                    self.ece = false;
                    ecn_now |= self.cwr_ack;
                }
                // tcp_data_ecn_check, for data in order or out of order (not a duplicate)
                let new_data = pkt.seq + pkt.payload as u64 > self.rcv_nxt;
                let quick = match pkt.ecn {
                    Ecn::Ce => !self.ece,
                    Ecn::NotEct => self.ect_seen,
                    _ => false,
                };
                if new_data && quick {
                    self.quick = self.quick.max(self.ecn_quick);
                }
                if new_data && pkt.ecn != Ecn::NotEct {
                    self.ect_seen = true;
                }
                if pkt.ecn == Ecn::Ce {
                    self.ece = true;
                }
            }
        }
        let s = pkt.seq;
        let e = pkt.seq + pkt.payload as u64;
        let requick = match self.requick_on {
            Requick::Off => false,
            Requick::Duplicate => e <= self.rcv_nxt,
            Requick::OutOfSequence => s != self.rcv_nxt,
        };
        if requick {
            self.quick = self.quick.max(self.requick);
        }
        if pkt.tcp_flags & flags::FIN != 0 {
            self.fin_end = Some(e);
        }
        // RFC 7323 4.3: TS.Recent from segments at the left window edge.
        if s <= self.last_ack_sent && pkt.ts_val >= self.ts_recent {
            self.ts_recent = pkt.ts_val;
        }
        if let Window::Linux(l) = &mut self.window {
            l.on_segment(pkt.payload as u64, pkt.ts_ecr, now, self.rcv_nxt);
        }
        let mut immediate = self.delack.is_none() || self.quick > 0 || ecn_now;
        // Held back by SACK compression; in order (read at once by the application).
        let mut held = false;
        let mut in_order = false;
        if e <= self.rcv_nxt {
            immediate = true; // duplicate
            self.duplicate(s, e);
        } else if s > self.rcv_nxt {
            if self.ooo.containing(s).is_some_and(|(_, b)| b >= e) {
                self.duplicate(s, e);
            }
            self.ooo.insert(s, e);
            self.update_blocks(s);
            held = !immediate && self.unacked_bytes < self.ack_every && self.compress(now);
            immediate = !held;
            if let Window::Linux(l) = &mut self.window {
                let end = self.ooo.as_slice().last().map_or(e, |r| r.1);
                if l.on_out_of_order(pkt.payload as u64, self.sack, self.ooo.len(), end, self.rcv_nxt) {
                    self.quick |= 1;
                }
            }
        } else {
            if s < self.rcv_nxt {
                self.duplicate(s, self.rcv_nxt);
            }
            in_order = true;
            let had_hole = !self.ooo.is_empty();
            self.unacked_bytes += e - self.rcv_nxt;
            self.rcv_nxt = self.ooo.absorb_from(e);
            if had_hole {
                immediate = true;
                self.prune_blocks();
                if !self.ooo.is_empty() && self.unacked_bytes < self.ack_every {
                    // A part of the hole filled, no more than a segment: __tcp_ack_snd_check
                    // reaches SACK compression, which counts this ACK as the first duplicate at
                    // the new rcv_nxt (a larger advance is ACKed before that count).
                    self.compress(now);
                }
            }
            if self.unacked_bytes >= self.ack_every {
                immediate = true;
            }
            if let Window::Linux(l) = &mut self.window {
                let ooo = self.ooo.len();
                if l.on_in_order(pkt.payload as u64, self.rcv_nxt, ooo, now) {
                    // tcp_grow_window: icsk_ack.quick |= 1
                    self.quick |= 1;
                    immediate = true;
                }
                // the application reads what arrived in order (tcp_rcv_space_adjust)
                let span = self.ooo.as_slice().last().map_or(0, |r| r.1 - self.rcv_nxt);
                l.on_read(self.rcv_nxt, span, now);
            }
        }
        if self.finished() {
            immediate = true;
        }
        if in_order
            && self.push_ack != PushAck::Off
            && (pkt.payload < self.mss || pkt.tcp_flags & flags::PSH != 0 && self.push_ack == PushAck::Psh)
        {
            // tcp_event_data_recv -> tcp_measure_rcv_mss: ICSK_ACK_PUSHED
            self.pushed = true;
        }
        // tcp_cleanup_rbuf: a read that leaves nothing queued (sk_rmem_alloc 0) ACKs a pushed
        // segment at once. (With out-of-order data held, which sk_rmem_alloc counts, an
        // in-order segment is ACKed at once anyway: see `had_hole`.)
        let read_acks = in_order && self.pushed;
        if immediate || read_acks {
            self.send_ack(now, out);
        } else if held {
            // SACK compression's timer, not the delayed ACK's (__tcp_ack_snd_check returns)
        } else if self.delack_at.is_none() {
            self.delack_at = self.delack.map(|d| {
                if self.delack_grid {
                    (now / d + 1) * d
                } else {
                    // tcp_send_delayed_ack: jiffies + ato
                    let ato = self.recv.as_deref().map_or(d, |r| r.delay(d, self.pushed));
                    timer_wheel::expiry(self.timer_hz, now, ato, 0)
                }
            });
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        let comp_due = self.comp.as_ref().and_then(|c| c.at).is_some_and(|t| t <= now);
        let delack_due = self.delack_at.is_some_and(|t| t <= now);
        // tcp_delack_timer_handler sends held compressed ACKs without touching the timeout.
        let held = self.comp.as_ref().is_some_and(|c| c.held > 0);
        if let Some(r) = self.recv.as_deref_mut().filter(|_| delack_due && !held) {
            r.on_delack_timer();
        }
        if comp_due || delack_due {
            // tcp_compressed_ack_kick (held ACKs) or the delayed-ACK timer
            self.send_ack(now, out);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        match (self.delack_at, self.comp.as_ref().and_then(|c| c.at)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn report(&self, r: &mut FlowReport) {
        r.bytes_delivered += self.bytes_delivered();
        r.packets_received += self.packets_received;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::EcnMode;
    use crate::transport::tcp::config::Rwnd;
    use crate::units::MS;

    /// An in-order data segment reads and writes the first two lines of its receiver.
    #[test]
    fn an_in_order_segment_reads_two_lines() {
        use crate::packet::layout::on_line;
        use std::mem::{offset_of, size_of};
        macro_rules! lines {
            ($($f:ident: $t:ty),*) => {
                $({
                    let o = offset_of!(TcpReceiver, $f);
                    on_line(stringify!($f), o, size_of::<$t>(), (o / 64).min(1));
                })*
            };
        }
        lines!(rcv_nxt: u64, unacked_bytes: u64, ack_every: u64, packets_received: u64,
            acks_sent: u64, last_ack_sent: u64, ts_recent: Time, flow: u32, quick: u32,
            delack_at: Option<Time>, delack: Option<Time>, ooo: RangeSet, dir: Dir, sack: bool,
            each_ce: bool, delack_grid: bool, synced: bool, ece: bool, ecn_cfg: ReceiverEcn,
            feedback: Feedback);
    }

    fn cfg(delack: Option<Time>) -> TcpConfig {
        TcpConfig {
            mss: 100,
            delack,
            ecn: EcnMode::Classic,
            ..crate::transport::tcp::profiles::rfc()
        }
    }

    /// A receiver of `c` (flow 0, upstream) past its handshake.
    fn connected(c: TcpConfig) -> TcpReceiver {
        let mut rx = TcpReceiver::new(&c, 0, Dir::Up);
        syn(&mut rx, false);
        rx
    }

    fn syn(rx: &mut TcpReceiver, ecn: bool) -> Packet {
        let mut out = vec![];
        let f = flags::SYN | if ecn { flags::ECE | flags::CWR } else { 0 };
        rx.on_packet(
            &Packet {
                kind: Kind::Tcp,
                tcp_flags: f,
                ts_val: 7,
                size: SYN_SIZE,
                ..Default::default()
            },
            10,
            &mut out,
        );
        assert_eq!(out.len(), 1);
        out[0]
    }

    fn data(rx: &mut TcpReceiver, i: u64, now: Time) -> Vec<Packet> {
        data_echoing(rx, i, now, 0)
    }

    /// Segment `i` (100 bytes) arriving at `now`, its timestamp echo `ts_ecr`.
    fn data_echoing(rx: &mut TcpReceiver, i: u64, now: Time, ts_ecr: Time) -> Vec<Packet> {
        let mut out = vec![];
        let p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK,
            seq: 1 + i * 100,
            payload: 100,
            size: 152,
            ts_val: now,
            ts_ecr,
            ..Default::default()
        };
        rx.on_packet(&p, now, &mut out);
        out
    }

    #[test]
    fn a_pending_delayed_ack_leaves_with_data_once() {
        // RFC 1122 4.2.3.2 / Linux tcp_event_ack_sent: data sent the other way carries the ACK
        // and cancels the delayed-ACK timer. One segment waits for the timer; data written at
        // 5 ms takes its ACK (ack 101) at once, and nothing is pending afterwards.
        let mut rx = TcpReceiver::new(&cfg(Some(40 * MS)), 3, Dir::Up);
        syn(&mut rx, false);
        assert!(data(&mut rx, 0, 0).is_empty());
        assert_eq!(rx.next_timer(), Some(40 * MS));
        let mut out = vec![];
        rx.send_pending_ack(5 * MS, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].ack, out[0].ts_val, out[0].tcp_flags),
            (101, 5 * MS, flags::ACK)
        );
        assert_eq!(rx.next_timer(), None);
        rx.send_pending_ack(6 * MS, &mut out);
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn linux_runs_the_delayed_ack_on_its_ticks() {
        // tcp_send_delayed_ack arms the timer for jiffies + ato (TCP_ATO_MIN = HZ / 25: 10
        // ticks of 4 ms at HZ 250) and the timer wheel runs it from the bucket after that: a
        // segment at 201 ms (jiffy 50) is ACKed at jiffy 61, 244 ms, not 241; one at 200 ms
        // (jiffy 50 from its start) at 244 ms too.
        for (hz, at, due) in [(0, 201, 241), (250, 201, 244), (250, 200, 244)] {
            let mut rx = connected(TcpConfig {
                timer_hz: hz,
                ..cfg(Some(40 * MS))
            });
            assert!(data(&mut rx, 0, at * MS).is_empty());
            assert_eq!(rx.next_timer(), Some(due * MS), "timer_hz {hz} at {at} ms");
        }
    }

    #[test]
    fn linux_adapts_the_delayed_ack_timeout_to_the_receive_gaps() {
        // tcp_event_data_recv and tcp_send_delayed_ack at HZ 250 (4 ms ticks), TCP_ATO_MIN 10
        // ticks, the handshake's sample 100 ms (SRTT 25 ticks). Segment 0 at jiffy 50: ato = 10,
        // its ACK at jiffy 50 + 10 + 1 (the wheel's next bucket), 244 ms. Segment 1 at jiffy 57
        // (m = 7: over 5, under 10): ato = 5 + 7 = 12; the pair is ACKed at once. Segment 2 at
        // jiffy 67 (m = 10 < 12): ato = 6 + 10 = 16, grown past TCP_DELACK_MIN and under the
        // SRTT: 67 + 16 + 1 = jiffy 84, 336 ms. Segment 3 at jiffy 82 (m = 15): ato = 8 + 15 =
        // 23; segment 4 at jiffy 100 (m = 18): ato = 11 + 18 = 29, bounded by the SRTT's 25
        // ticks: jiffy 126, 504 ms. With the timeout fixed: 244, 312 and 444 ms.
        for (adaptive, due) in [
            (AdaptiveAto::Linux, [244, 336, 504]),
            (AdaptiveAto::Off, [244, 312, 444]),
        ] {
            let mut rx = connected(TcpConfig {
                timer_hz: 250,
                adaptive_ato: adaptive,
                ..cfg(Some(40 * MS))
            });
            let mut timers = vec![];
            for (i, at) in [200, 228, 268, 328, 400].into_iter().enumerate() {
                let acks = data_echoing(&mut rx, i as u64, at * MS, 100 * MS).len();
                assert_eq!(acks, i % 2, "segment {i}: ACKed at once in pairs only");
                if i % 2 == 0 {
                    timers.push(rx.next_timer().unwrap() / MS);
                }
            }
            assert_eq!(timers, due, "adaptive_ato {adaptive:?}");
        }
    }

    #[test]
    fn a_delayed_ack_that_fires_doubles_the_timeout_which_only_linux_5_10_caps_at_200_ms() {
        // tcp_delack_timer_handler doubles ato (at most icsk_rto) each time the timer fires;
        // tcp_send_delayed_ack bounds a grown ato by min(HZ / 2, SRTT), and from 5.10 by
        // icsk_delack_max (200 ms). Handshake sample 400 ms: SRTT 400 ms, RTO 400 + 2 x 400 =
        // 1,200 ms. Lone segments at 600, 800, 1,100, 1,500 and 2,200 ms, each gap at least the
        // timeout (which the gaps leave alone), each ACKed by its timer: the timeout 40, 80, 160,
        // 320 and 640 ms. Delays: 40, 80, 160; then 320 (200 capped) and 400 (the SRTT; 200).
        for (rule, due) in [
            (AdaptiveAto::Off, [640, 840, 1_140, 1_540, 2_240]),
            (AdaptiveAto::Linux3_14, [640, 880, 1_260, 1_820, 2_600]),
            (AdaptiveAto::Linux, [640, 880, 1_260, 1_700, 2_400]),
        ] {
            let mut rx = connected(TcpConfig {
                adaptive_ato: rule,
                ..cfg(Some(40 * MS))
            });
            let mut fired = vec![];
            for (i, at) in [600, 800, 1_100, 1_500, 2_200].into_iter().enumerate() {
                assert!(data_echoing(&mut rx, i as u64, at * MS, 200 * MS).is_empty());
                let t = rx.next_timer().unwrap();
                let mut out = vec![];
                rx.on_timer(t, &mut out);
                assert_eq!(out.len(), 1, "{rule:?}: segment {i} ACKed by the timer");
                fired.push(t / MS);
            }
            assert_eq!(fired, due, "{rule:?}");
        }
    }

    #[test]
    fn syn_ack_negotiates_ecn_and_echoes() {
        let mut rx = TcpReceiver::new(&cfg(None), 3, Dir::Up);
        let sa = syn(&mut rx, true);
        assert_eq!(sa.tcp_flags, flags::SYN | flags::ACK | flags::ECE);
        assert_eq!(
            (sa.ack, sa.ts_ecr, sa.dir, sa.flow, sa.size),
            (1, 7, Dir::Down, 3, SYN_SIZE)
        );
        let mut rx2 = TcpReceiver::new(&cfg(None), 3, Dir::Up);
        assert_eq!(syn(&mut rx2, false).tcp_flags, flags::SYN | flags::ACK);
    }

    #[test]
    fn delayed_ack_every_second_segment_and_timer() {
        let mut rx = TcpReceiver::new(&cfg(Some(40 * MS)), 0, Dir::Up);
        syn(&mut rx, false);
        assert!(data(&mut rx, 0, 100).is_empty());
        assert_eq!(rx.next_timer(), Some(100 + 40 * MS));
        let a = data(&mut rx, 1, 200);
        assert_eq!(a.len(), 1);
        assert_eq!(
            (a[0].ack, a[0].ts_ecr, a[0].size),
            (201, 100, 52),
            "echo the earlier TSval"
        );
        assert_eq!(rx.next_timer(), None);
        assert!(data(&mut rx, 2, 300).is_empty());
        let mut out = vec![];
        rx.on_timer(300 + 40 * MS, &mut out);
        assert_eq!(out[0].ack, 301);
        assert_eq!(rx.bytes_delivered(), 300);
    }

    #[test]
    fn ns2_fulltcp_acks_each_full_segment_and_holds_a_short_tail_to_the_interval_grid() {
        // tcp-full.cc: need_send() is rcv_nxt_ - last_ack_sent_ >= segsperack_ x maxseg_, so with
        // segsperack_ 1 every full segment is ACKed at once; a shorter segment only sets
        // TF_DELACK, and delack_timer_ (armed for interval_ x (int(now / interval_) + 1), then
        // every interval_) sends the ACK at the next multiple of interval_ (here 400 ms, the
        // CoDel script's). A FIN sets TF_ACKNOW.
        let c = TcpConfig {
            segs_per_ack: 1,
            delack_grid: true,
            ..cfg(Some(400 * MS))
        };
        let mut rx = TcpReceiver::new(&c, 0, Dir::Up);
        syn(&mut rx, false);
        for (i, t) in [(0, 1_000 * MS), (1, 1_001 * MS)] {
            let a = data(&mut rx, i, t);
            assert_eq!(a.len(), 1, "full segment {i}: ACKed at once");
            assert_eq!(a[0].ack, 1 + 100 * (i + 1));
        }
        let short = |seq: u64, payload: u32, fin: bool| Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK | if fin { flags::FIN } else { 0 },
            seq,
            payload,
            size: payload + 52,
            ..Default::default()
        };
        let mut out = vec![];
        rx.on_packet(&short(201, 30, false), 1_010 * MS, &mut out);
        assert!(out.is_empty());
        // int(1.010 / 0.4) = 2: the next tick is 1.2 s, not 1.010 + 0.4 s.
        assert_eq!(rx.next_timer(), Some(1_200 * MS));
        rx.on_timer(1_200 * MS, &mut out);
        assert_eq!((out.len(), out[0].ack), (1, 231));
        // Exactly on a tick: the next one.
        out.clear();
        rx.on_packet(&short(231, 30, false), 1_600 * MS, &mut out);
        assert_eq!(rx.next_timer(), Some(2_000 * MS));
        // A full segment's worth unACKed (30 + 100 >= 100): at once.
        assert_eq!(data_at(&mut rx, 261, 1_700 * MS).len(), 1);
        rx.on_packet(&short(361, 30, true), 1_800 * MS, &mut out);
        assert_eq!((out.len(), out[0].ack), (1, 391), "the FIN: at once");
        // The same receiver with the RFC form (segs_per_ack 2, timer from the segment).
        let mut rfc = TcpReceiver::new(&cfg(Some(400 * MS)), 0, Dir::Up);
        syn(&mut rfc, false);
        assert!(data(&mut rfc, 0, 1_010 * MS).is_empty());
        assert_eq!(rfc.next_timer(), Some(1_410 * MS));
    }

    fn data_at(rx: &mut TcpReceiver, seq: u64, now: Time) -> Vec<Packet> {
        let mut out = vec![];
        let p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK,
            seq,
            payload: 100,
            size: 152,
            ..Default::default()
        };
        rx.on_packet(&p, now, &mut out);
        out
    }

    #[test]
    fn sack_blocks_most_recent_first_and_hole_fill() {
        let mut rx = TcpReceiver::new(&cfg(Some(40 * MS)), 0, Dir::Up);
        syn(&mut rx, false);
        data(&mut rx, 0, 1);
        data(&mut rx, 1, 2); // ACK 201
        let a = data(&mut rx, 3, 3); // out of order: immediate
        assert_eq!((a[0].ack, a[0].n_sack), (201, 1));
        assert_eq!(a[0].sacks().0[0], SackBlock { start: 301, end: 401 });
        assert_eq!(a[0].size, 52 + 12);
        data(&mut rx, 6, 4);
        let a = data(&mut rx, 8, 5);
        assert_eq!(a[0].n_sack, 3);
        assert_eq!(a[0].sacks().0[0], SackBlock { start: 801, end: 901 });
        assert_eq!(a[0].sacks().0[1], SackBlock { start: 601, end: 701 });
        assert_eq!(a[0].sacks().0[2], SackBlock { start: 301, end: 401 });
        assert_eq!(a[0].size, 52 + 28);
        let a = data(&mut rx, 7, 6); // joins 6 and 8
        assert_eq!(a[0].sacks().0[0], SackBlock { start: 601, end: 901 });
        assert_eq!(a[0].sacks().0[1], SackBlock { start: 301, end: 401 });
        assert_eq!(a[0].n_sack, 2);
        let a = data(&mut rx, 2, 7); // fills the first hole: immediate ACK
        assert_eq!(a[0].ack, 401);
        assert_eq!(a[0].n_sack, 1);
        assert_eq!(a[0].sacks().0[0], SackBlock { start: 601, end: 901 });
        data(&mut rx, 4, 8);
        let a = data(&mut rx, 5, 9);
        assert_eq!((a[0].ack, a[0].n_sack), (901, 0));
        assert_eq!(rx.bytes_delivered(), 900);
        // A duplicate is acknowledged at once.
        assert_eq!(data(&mut rx, 1, 10)[0].ack, 901);
    }

    #[test]
    fn a_segment_that_arrives_again_is_reported_first_as_a_dsack_block() {
        // RFC 2883 section 4 (Linux tcp_dsack_set, written first by tcp_options_write): the
        // ACK a duplicate elicits carries it as its first block, then as many SACK blocks as
        // fit in the three; one ACK reports it, the next no more.
        let dsack = |start, end| SackBlock { start, end };
        let mut rx = TcpReceiver::new(
            &TcpConfig {
                dsack: true,
                ..cfg(Some(40 * MS))
            },
            0,
            Dir::Up,
        );
        syn(&mut rx, false);
        data(&mut rx, 0, 1);
        data(&mut rx, 1, 2); // ACK 201
        let a = data(&mut rx, 1, 3); // below rcv_nxt
        assert_eq!((a[0].ack, a[0].n_sack), (201, 1));
        assert_eq!(a[0].sacks().0[0], dsack(101, 201));
        data(&mut rx, 3, 4);
        data(&mut rx, 5, 5);
        let a = data(&mut rx, 7, 6); // blocks 7, 5, 3
        assert_eq!(a[0].n_sack, 3);
        // out-of-order data held already: the D-SACK block inside the second (RFC 2883 4.1.2),
        // and the two most recent SACK blocks after it
        let a = data(&mut rx, 5, 7);
        let (b, n) = a[0].sacks();
        assert_eq!(b[..n], [dsack(501, 601), dsack(501, 601), dsack(701, 801)]);
        // the next ACK carries the SACK blocks alone
        let a = data(&mut rx, 9, 8);
        assert_eq!(a[0].sacks().0[0], dsack(901, 1001));
        assert!(a[0].sacks().0[..3].iter().all(|b| b.start >= 301));
        // a segment overlapping the cumulative ACK (201): its part below it (tcp_data_queue)
        let mut out = vec![];
        let p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK,
            seq: 151,
            payload: 100,
            ts_val: 9,
            ..Default::default()
        };
        rx.on_packet(&p, 9, &mut out);
        assert_eq!((out[0].ack, out[0].sacks().0[0]), (251, dsack(151, 201)));
        // without `dsack` a duplicate's ACK carries the SACK blocks alone
        let mut rx = TcpReceiver::new(&cfg(Some(40 * MS)), 0, Dir::Up);
        syn(&mut rx, false);
        data(&mut rx, 0, 1);
        let a = data(&mut rx, 0, 2);
        assert_eq!((a[0].ack, a[0].n_sack), (101, 0));
    }

    #[test]
    fn ece_until_cwr() {
        let mut rx = TcpReceiver::new(&cfg(None), 0, Dir::Up);
        syn(&mut rx, true);
        let mut out = vec![];
        let mut p = Packet {
            kind: Kind::Tcp,
            seq: 1,
            payload: 100,
            ecn: Ecn::Ce,
            ..Default::default()
        };
        rx.on_packet(&p, 1, &mut out);
        p.seq = 101;
        p.ecn = Ecn::Ect0;
        rx.on_packet(&p, 2, &mut out);
        p.seq = 201;
        p.tcp_flags = flags::CWR;
        rx.on_packet(&p, 3, &mut out);
        let ece: Vec<bool> = out.iter().map(|a| a.tcp_flags & flags::ECE != 0).collect();
        assert_eq!(ece, vec![true, true, false]);
    }

    /// Segment `i` with ECN field `ecn` and TCP flags `f` (ACK added) arriving at `2000 + i`:
    /// the ACKs it draws.
    fn ecn_seg(rx: &mut TcpReceiver, i: u64, ecn: Ecn, f: u16) -> usize {
        let mut out = vec![];
        let p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK | f,
            seq: 1 + i * 100,
            payload: 100,
            ecn,
            ..Default::default()
        };
        rx.on_packet(&p, 2000 + i, &mut out);
        out.len()
    }

    #[test]
    fn a_classic_ecn_receiver_quick_acks_a_first_mark_a_retransmission_and_a_cwr_as_linux() {
        // tcp_data_ecn_check (Linux 4.18 on): a CE with no ECE pending calls
        // tcp_enter_quickack_mode(sk, 2), its own ACK and the next go at once; a CE while ECE is
        // pending does not; a not-ECT segment after ECT ones (a retransmission) does too.
        // tcp_ecn_accept_cwr: a data segment with CWR is ACKed at once (ICSK_ACK_NOW).
        let linux = |on: bool| TcpConfig {
            quickack: 16,
            ecn_quickack: if on { 2 } else { 0 },
            cwr_ack: on,
            ..cfg(Some(40 * MS))
        };
        let mut rx = TcpReceiver::new(&linux(true), 0, Dir::Down);
        syn(&mut rx, true);
        // the connection's own 16 quick ACKs spent on segments 0-15
        assert!((0..16).all(|i| ecn_seg(&mut rx, i, Ecn::Ect0, 0) == 1));
        let (ect, ce, not) = (Ecn::Ect0, Ecn::Ce, Ecn::NotEct);
        let acks: Vec<usize> = [
            (16, ect),
            (17, ect),
            (18, ce),
            (19, ect),
            (20, ect),
            (21, ce),
            (22, ect),
        ]
        .iter()
        .map(|&(i, e)| ecn_seg(&mut rx, i, e, 0))
        .collect();
        // 18 (first CE) and 19 at once; 20 waits, 21 (CE, ECE pending) completes a pair, 22 waits
        assert_eq!(acks, [0, 1, 1, 1, 0, 1, 0]);
        // CWR: ACKed at once, ECE cleared; a later CE is a first mark again
        assert_eq!(ecn_seg(&mut rx, 23, ect, flags::CWR), 1);
        assert_eq!(
            [(24, ect), (25, ect), (26, ce), (27, ect), (28, ect)].map(|(i, e)| ecn_seg(&mut rx, i, e, 0)),
            [0, 1, 1, 1, 0]
        );
        // a not-ECT segment after ECT ones: two at once
        assert_eq!(
            [(29, ect), (30, not), (31, ect), (32, ect)].map(|(i, e)| ecn_seg(&mut rx, i, e, 0)),
            [1, 1, 1, 0]
        );
        // Off (the RFC and ns-2 profiles): pairs throughout, the CWR segment too.
        let mut rx = TcpReceiver::new(&linux(false), 0, Dir::Down);
        syn(&mut rx, true);
        assert!((0..16).all(|i| ecn_seg(&mut rx, i, Ecn::Ect0, 0) == 1));
        assert_eq!(
            [
                (16, ect),
                (17, ect),
                (18, ce),
                (19, ect),
                (20, ect),
                (21, not),
                (22, ect)
            ]
            .map(|(i, e)| ecn_seg(&mut rx, i, e, 0)),
            [0, 1, 0, 1, 0, 1, 0]
        );
        assert_eq!(ecn_seg(&mut rx, 23, ect, flags::CWR), 1);
        assert_eq!(ecn_seg(&mut rx, 24, ect, flags::CWR), 0);
    }

    #[test]
    fn dctcp_receiver_echoes_each_ce_state_and_acks_at_a_change() {
        // RFC 8257 3.2: ECE reflects the CE of the data acknowledged, CWR is ignored, and a
        // change of CE state while an ACK is delayed sends that ACK at once with the old state
        let mut rx = TcpReceiver::new(
            &TcpConfig {
                cc: "dctcp".into(),
                quickack: 0,
                ..cfg(Some(40 * MS))
            },
            0,
            Dir::Up,
        );
        syn(&mut rx, true);
        let mut out = vec![];
        let mut p = Packet {
            kind: Kind::Tcp,
            seq: 1,
            payload: 100,
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        let mut send = |rx: &mut TcpReceiver, seq: u64, ecn: Ecn, flags: u16, out: &mut Vec<Packet>| {
            p.seq = seq;
            p.ecn = ecn;
            p.tcp_flags = flags;
            rx.on_packet(&p, seq, out);
        };
        send(&mut rx, 1, Ecn::Ect0, 0, &mut out); // delayed
        send(&mut rx, 101, Ecn::Ce, 0, &mut out); // change: ACK 101 without ECE now
        send(&mut rx, 201, Ecn::Ce, flags::CWR, &mut out); // two segments: ACK 301 with ECE
        send(&mut rx, 301, Ecn::Ect0, 0, &mut out); // change, nothing delayed: no extra ACK
        send(&mut rx, 401, Ecn::Ect0, 0, &mut out); // ACK 501 without ECE
        let acks: Vec<(u64, bool)> = out
            .iter()
            .map(|a| (a.ack, a.tcp_flags & flags::ECE != 0))
            .collect();
        assert_eq!(acks, vec![(101, false), (301, true), (501, false)]);
    }

    #[test]
    fn quick_acks_answer_the_first_segments_one_by_one() {
        // Linux starts a connection in quick-ACK mode (tcp_incr_quickack on the first data
        // segment, at most TCP_MAX_QUICKACKS = 16): each of the first 16 segments is ACKed at
        // once; from then on every second segment (or the 40 ms timer).
        let mut rx = TcpReceiver::new(
            &TcpConfig {
                quickack: 16,
                ..cfg(Some(40 * MS))
            },
            0,
            Dir::Down,
        );
        syn(&mut rx, false);
        let acks: Vec<usize> = (0..24).map(|i| data(&mut rx, i, 1000 + i).len()).collect();
        assert_eq!(acks[..16], [1; 16]);
        assert_eq!(acks[16..], [0, 1, 0, 1, 0, 1, 0, 1]);
        // Without quick ACKs, every second segment from the start.
        let mut rx = TcpReceiver::new(&cfg(Some(40 * MS)), 0, Dir::Down);
        syn(&mut rx, false);
        let acks: Vec<usize> = (0..4).map(|i| data(&mut rx, i, 1000 + i).len()).collect();
        assert_eq!(acks, [0, 1, 0, 1]);
    }

    /// A receiver with 16 quick ACKs at the start (all spent on segments 0-15) and `requick`
    /// set, its window `rwnd` segments of 100 bytes.
    fn requick_rx(on: Requick, rwnd: u64) -> TcpReceiver {
        let c = TcpConfig {
            quickack: 16,
            requick: on,
            rwnd: Rwnd::Segments(rwnd),
            ..cfg(Some(40 * MS))
        };
        let mut rx = TcpReceiver::new(&c, 0, Dir::Down);
        syn(&mut rx, false);
        assert!((0..16).all(|i| data(&mut rx, i, 1000 + i).len() == 1));
        rx
    }

    /// ACKs sent for each of segments `seqs` (in the order given).
    fn acks_for(rx: &mut TcpReceiver, seqs: impl IntoIterator<Item = u64>) -> Vec<usize> {
        seqs.into_iter().map(|i| data(rx, i, 2000 + i).len()).collect()
    }

    #[test]
    fn a_receive_gap_longer_than_the_rto_restores_quick_acks_as_linux_does() {
        // tcp_input.c tcp_event_data_recv: an in-order segment more than icsk_rto after the
        // previous one calls tcp_incr_quickack. The receiver's RTO comes from the handshake's
        // sample, Linux's first: SRTT = 50 ms, RTTVAR = max(2 x 50 ms, 200 ms), RTO = 250 ms.
        // The SYN-ACK leaves at 10 ns; the first segment, 50 ms later, echoes it.
        let c = TcpConfig {
            quickack: 16,
            gap_quickack: true,
            linux_rto: true,
            ..cfg(Some(40 * MS))
        };
        let mut rx = TcpReceiver::new(&c, 0, Dir::Down);
        syn(&mut rx, false);
        let t0 = 10 + 50 * MS;
        let at = |rx: &mut TcpReceiver, i: u64, now: Time| data_echoing(rx, i, now, 10).len();
        // The first 16 are ACKed one by one (the connection's own quick ACKs), then in pairs.
        let first: Vec<usize> = (0..20).map(|i| at(&mut rx, i, t0 + i * MS)).collect();
        assert_eq!(first[..16], [1; 16]);
        assert_eq!(first[16..], [0, 1, 0, 1]);
        // 249 ms of silence is within the RTO: still in pairs.
        let t1 = t0 + 19 * MS + 249 * MS;
        let quiet: Vec<usize> = (20..24).map(|i| at(&mut rx, i, t1 + (i - 20) * MS)).collect();
        assert_eq!(quiet, [0, 1, 0, 1]);
        // 251 ms is beyond it: 16 more one by one (min(rwnd / 2 mss, 16)), then pairs again.
        let t2 = t1 + 3 * MS + 251 * MS;
        let gap: Vec<usize> = (24..44).map(|i| at(&mut rx, i, t2 + (i - 24) * MS)).collect();
        assert_eq!(gap[..16], [1; 16]);
        assert_eq!(gap[16..], [0, 1, 0, 1]);
        // Out-of-order data does not count as an arrival: segment 45 (44 lost) comes 300 ms
        // later and is ACKed at once as out of order, 46 too; the retransmission of 44, 1 ms
        // after 46, finds the last in-order arrival 302 ms ago and restores the quick ACKs.
        let t3 = t2 + 19 * MS + 300 * MS;
        assert_eq!(at(&mut rx, 45, t3), 1);
        assert_eq!(at(&mut rx, 46, t3 + MS), 1);
        assert_eq!(at(&mut rx, 44, t3 + 2 * MS), 1);
        let after: Vec<usize> = (47..51).map(|i| at(&mut rx, i, t3 + (i - 44) * MS)).collect();
        assert_eq!(after, [1, 1, 1, 1]);
        // The handshake's own ACK (`handshake_ack`) gives the sample when the first data is
        // late: here the data comes 400 ms after the SYN-ACK, its ACK after 50 ms, so the RTO
        // is still 250 ms and a 251 ms gap restores the quick ACKs.
        let mut rx = TcpReceiver::new(&c, 0, Dir::Down);
        syn(&mut rx, false);
        let mut out = vec![];
        let hs = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK,
            seq: 1,
            size: 52,
            ts_ecr: 10,
            ..Default::default()
        };
        rx.on_packet(&hs, t0, &mut out);
        assert!(out.is_empty(), "a pure ACK is not answered");
        let t4 = t0 + 350 * MS;
        (0..20).for_each(|i| {
            at(&mut rx, i, t4 + i * MS);
        });
        let late: Vec<usize> = (20..24)
            .map(|i| at(&mut rx, i, t4 + 19 * MS + 251 * MS + (i - 20) * MS))
            .collect();
        assert_eq!(late, [1, 1, 1, 1]);
        // Off (`gap_quickack = false`, the ns-2 and RFC profiles): pairs after any gap.
        let mut rx = TcpReceiver::new(
            &TcpConfig {
                gap_quickack: false,
                ..c
            },
            0,
            Dir::Down,
        );
        syn(&mut rx, false);
        (0..20).for_each(|i| {
            at(&mut rx, i, t0 + i * MS);
        });
        let off: Vec<usize> = (20..24).map(|i| at(&mut rx, i, t2 + (i - 20) * MS)).collect();
        assert_eq!(off, [0, 1, 0, 1]);
    }

    #[test]
    fn a_segment_out_of_order_restarts_quick_acks_as_linux_3_14() {
        // tcp_input.c (3.14) tcp_data_queue: a segment that is not the next in order calls
        // tcp_enter_quickack_mode, whose tcp_incr_quickack sets icsk_ack.quick to
        // min(rcv_wnd / (2 rcv_mss), TCP_MAX_QUICKACKS = 16); every ACK sent takes one
        // (tcp_dec_quickack_mode). Segment 18 is lost: 19 is ACKed (15 left), its retransmission
        // fills the hole (14 left), then 20-33 are ACKed one by one and 34-35 as a pair again.
        let mut rx = requick_rx(Requick::OutOfSequence, 1 << 20);
        assert_eq!(acks_for(&mut rx, [16, 17]), [0, 1]);
        assert_eq!(acks_for(&mut rx, [19, 18]), [1, 1]);
        assert_eq!(acks_for(&mut rx, 20..34), [1; 14]);
        assert_eq!(acks_for(&mut rx, [34, 35]), [0, 1]);
        // Off, and Linux 4.18 on (duplicates only): the out-of-order segment and the hole's
        // fill are ACKed, then every second one.
        for on in [Requick::Off, Requick::Duplicate] {
            let mut rx = requick_rx(on, 1 << 20);
            assert_eq!(acks_for(&mut rx, [16, 17, 19, 18, 20, 21]), [0, 1, 1, 1, 0, 1]);
        }
    }

    /// A receiver of the `rfc` test profile (no quick ACKs) with `push_ack` and
    /// `sack_compress` set.
    fn linux_rules_rx(push_ack: PushAck, sack_compress: bool) -> TcpReceiver {
        let c = TcpConfig {
            push_ack,
            sack_compress,
            ..cfg(Some(40 * MS))
        };
        let mut rx = TcpReceiver::new(&c, 0, Dir::Down);
        syn(&mut rx, false);
        rx
    }

    /// One segment of 100 bytes (`i` from 0) or `len` bytes, with `psh`, at `now`.
    fn seg(rx: &mut TcpReceiver, i: u64, len: u32, psh: bool, now: Time) -> Vec<Packet> {
        let mut out = vec![];
        let p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK | if psh { flags::PSH } else { 0 },
            seq: 1 + i * 100,
            payload: len,
            size: len + 52,
            ts_val: now,
            ts_ecr: 10,
            ..Default::default()
        };
        rx.on_packet(&p, now, &mut out);
        out
    }

    #[test]
    fn the_read_acks_a_lone_pushed_segment_as_linux_does() {
        // tcp_measure_rcv_mss sets ICSK_ACK_PUSHED for a segment shorter than the MSS and
        // (6.6 on) a full one with PSH; __tcp_cleanup_rbuf ACKs it once the read leaves the
        // queue empty, so it does not wait for a second segment or the 40 ms timer.
        let mut rx = linux_rules_rx(PushAck::Psh, false);
        assert!(
            seg(&mut rx, 0, 100, false, MS).is_empty(),
            "full, no PSH: delayed"
        );
        assert_eq!(seg(&mut rx, 1, 100, false, 2 * MS).len(), 1, "the pair");
        let a = seg(&mut rx, 2, 100, true, 3 * MS);
        assert_eq!((a.len(), a[0].ack), (1, 301), "full with PSH: alone, at once");
        assert!(
            seg(&mut rx, 3, 100, false, 4 * MS).is_empty(),
            "the flag went with the ACK"
        );
        assert_eq!(seg(&mut rx, 4, 60, false, 5 * MS)[0].ack, 461, "short: at once");
        // Before 6.6 only the short segment counts; off, neither.
        let mut rx = linux_rules_rx(PushAck::Short, false);
        assert!(seg(&mut rx, 0, 100, true, MS).is_empty());
        assert_eq!(seg(&mut rx, 1, 60, false, 2 * MS).len(), 1);
        let mut rx = linux_rules_rx(PushAck::Off, false);
        assert!(seg(&mut rx, 0, 60, true, MS).is_empty());
        assert_eq!(rx.next_timer(), Some(41 * MS));
    }

    #[test]
    fn sack_compression_timer_is_five_percent_of_the_rtt_at_most_1_ms_plus_slack() {
        // rtt (us x 8) x 125 / 20 ns: 10 ms -> 500 us; srtt 5 ms when lower -> 250 us; 100 ms
        // -> 5 ms, capped at 1 ms; no receiver estimate -> 0 (srtt < 0 never holds); + 100 us.
        let us = 1_000;
        assert_eq!(comp_delay(80_000, 0), 600 * us);
        assert_eq!(comp_delay(80_000, 40_000), 350 * us);
        assert_eq!(comp_delay(80_000, 160_000), 600 * us);
        assert_eq!(comp_delay(800_000, 0), 1_100 * us);
        assert_eq!(comp_delay(0, 40_000), 100 * us);
    }

    #[test]
    fn sack_compression_sends_three_duplicates_then_holds_up_to_44() {
        // __tcp_ack_snd_check with SACK and out-of-order data held: dup_ack_counter lets the
        // first TCP_FASTRETRANS_THRESH ACKs at one rcv_nxt go at once; then each is held
        // (compressed_ack++) until the timer or until 44 are held (tcp_comp_sack_nr), when the
        // next goes at once. Any ACK sent clears the count and the timer. Segment 2 is lost;
        // 3..=52 arrive 1 us apart (the timer, 100 us with a fixed window's no RTT estimate,
        // does not fire in between).
        let mut rx = linux_rules_rx(PushAck::Psh, true);
        let t0 = 100 * MS;
        assert!(seg(&mut rx, 0, 100, false, t0).is_empty());
        assert_eq!(seg(&mut rx, 1, 100, false, t0 + 1).len(), 1);
        let acks: Vec<usize> = (3..=52)
            .map(|i| seg(&mut rx, i, 100, false, t0 + i).len())
            .collect();
        assert_eq!(acks[..3], [1, 1, 1], "three duplicate ACKs at once");
        assert!(acks[3..47].iter().all(|&n| n == 0), "44 held (segments 6-49)");
        assert_eq!(acks[47], 1, "the 45th goes at once");
        assert_eq!(acks[48..], [0, 0], "then held again: same rcv_nxt, counter spent");
        // The timer armed by segment 51 (at t0 + 51) fires 100 us later with one ACK.
        assert_eq!(rx.next_timer(), Some(t0 + 51 + 100_000));
        let mut out = vec![];
        rx.on_timer(t0 + 51 + 100_000, &mut out);
        assert_eq!((out.len(), out[0].ack, out[0].n_sack), (1, 201, 1));
        assert_eq!(rx.next_timer(), None);
        // The retransmission fills the hole: at once, everything ACKed.
        assert_eq!(seg(&mut rx, 2, 100, false, t0 + MS)[0].ack, 5301);
        // Off: every out-of-order segment at once.
        let mut rx = linux_rules_rx(PushAck::Psh, false);
        seg(&mut rx, 0, 100, false, t0);
        seg(&mut rx, 1, 100, false, t0 + 1);
        assert!((3..=52).all(|i| seg(&mut rx, i, 100, false, t0 + i).len() == 1));
    }

    #[test]
    fn a_duplicate_restarts_quick_acks_and_a_small_window_gives_fewer() {
        // The duplicate path (tcp_data_queue's retransmit branch, then out_of_window:
        // tcp_enter_quickack_mode) re-arms 16: its own ACK and the next 15, in Linux 3.x and
        // since 4.18 alike.
        for on in [Requick::OutOfSequence, Requick::Duplicate] {
            let mut rx = requick_rx(on, 1 << 20);
            assert_eq!(acks_for(&mut rx, [16, 17, 5]), [0, 1, 1]);
            assert_eq!(acks_for(&mut rx, 18..33), [1; 15]);
            assert_eq!(acks_for(&mut rx, [33, 34]), [0, 1]);
        }
        // Off: the duplicate's own ACK, then pairs.
        let mut rx = requick_rx(Requick::Off, 1 << 20);
        assert_eq!(acks_for(&mut rx, [16, 17, 5, 18, 19]), [0, 1, 1, 0, 1]);
        // A window of 6 segments: rcv_wnd / (2 rcv_mss) = 3 quick ACKs, the out-of-order
        // segment's, the fill's and one more.
        let mut rx = requick_rx(Requick::OutOfSequence, 6);
        assert_eq!(
            acks_for(&mut rx, [16, 17, 19, 18, 20, 21, 22]),
            [0, 1, 1, 1, 1, 0, 1]
        );
    }
}
