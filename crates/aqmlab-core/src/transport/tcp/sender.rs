//! TCP data sender (sans-I/O), algorithms.md 11: three-way handshake opened by the sender,
//! RFC 5681 windows (the growth law itself is the congestion controller's), RFC 3042 limited
//! transmit, RFC 6298 timer, loss recovery by RFC 6675 (SACK, default) or RFC 6582 (NewReno,
//! `sack = false`), go-back-N retransmission in slow start after an RTO keeping the SACK
//! information (RFC 6675 5.1), and the RFC 3168 ECN sender.
//!
//! Choices (documented variants):
//! * Handshake: SYN at `start`, retransmitted after the initial RTO with doubling; the first
//!   data segments carry the handshake's final ACK. The SYN-ACK's timestamp echo gives the first
//!   RTT sample. After a retransmitted SYN the initial window is 1 segment (RFC 5681 3.1).
//! * Window test: a segment may be sent while pipe + SMSS <= cwnd, pipe as in RFC 6675 SetPipe
//!   (maintained incrementally by the scoreboard). With SACK this applies at all times, so
//!   SACKed segments free room before recovery (this subsumes limited transmit). Without SACK,
//!   NewReno uses FlightSize (all unacknowledged data) with cwnd inflation in fast recovery, and
//!   limited transmit allows FlightSize <= cwnd + dupacks*SMSS for the first two dup ACKs.
//! * SACK recovery: entered on the 3rd duplicate ACK (an ACK carrying new SACK data without
//!   advancing snd_una) or when IsLost(snd_una); cwnd = ssthresh at entry (no inflation), the
//!   head segment is retransmitted at once, then NextSeg rules 1-4 including one rescue
//!   retransmission per recovery; exit when snd_una >= RecoveryPoint (cwnd stays at ssthresh).
//! * NewReno: `recover`, partial ACKs retransmit the next hole with partial window deflation,
//!   the timer is re-armed on the first partial ACK only ("impatient"), full ACK:
//!   cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS).
//! * RTO: RFC 6298 timer (start/restart on new ACKs, stop when all is acked); on expiry
//!   ssthresh per controller (unchanged on a repeated expiry), cwnd = 1 SMSS, everything
//!   outstanding declared lost, retransmissions in order in slow start; no fast recovery until
//!   snd_una passes the highest sequence sent before the timeout.
//! * ECN: at most one reduction per window of data (no reduction until snd_una passes the
//!   highest sequence sent at the previous reduction, loss reductions included); CWR on the next
//!   new data segment; ECT(0) only on new data.
//! * RTT samples: now - TSecr of every ACK advancing snd_una (RFC 7323); receive window: the
//!   constant `rwnd` caps unacknowledged data.
//!
//! Options (each a flow key, off in the `rfc` profile; see the profiles in `mod.rs`):
//! * `prr`: RFC 6937 PRR-SSRB sets cwnd in SACK recovery (Linux tcp_cwnd_reduction rounding).
//! * `rate_halving`: ns-2 TCP/Linux (tcp-linux.cc send_much, next_pkts_in_flight_): in SACK
//!   recovery the sender may fill the pipe up to max(cwnd, next), where next starts at the
//!   pre-loss cwnd, is cut to pipe + 1 segment before each sending round and to pipe - 1
//!   segment (at least 1) after each segment sent: one segment per two ACKs until the pipe is
//!   down to cwnd = ssthresh.
//! * `rack`: RFC 8985 RACK replaces the DupThresh IsLost rule: a segment is lost once one sent
//!   after it is delivered and the reordering window has passed, which also finds lost
//!   retransmissions without a timeout. The reordering timer fires at the earliest expiry
//!   (RFC 8985 and Linux re-arm for the latest; the earliest re-checks sooner, never later).
//! * `tlp`: RFC 8985 section 7 probe 2 SRTT after the last transmission (new data, else the
//!   highest unSACKed segment); an answered retransmitted probe reduces the window once (no
//!   DSACK in this receiver, so a probe that repaired nothing still counts as a loss).
//! * `frto`: RFC 5682 F-RTO as Linux tcp_process_loss runs it, and undo of a spurious timeout
//!   when an advancing ACK echoes a timestamp older than the first retransmission (RFC 3522;
//!   Linux tcp_packet_delayed) or delivers never-retransmitted data sent before the timeout.
//!   Undo of spurious fast retransmits (reordering, DSACK) is not modelled: the paths here do
//!   not reorder.
//! * `early_retransmit`: RFC 5827 in the form of Linux 3.5-4.x (tcp_early_retrans 2/3).
//! * `pacing`: Linux-style pacing ([`Pacing`]).
//! * `idle_restart`: the window after an idle period longer than the RTO (RFC 5681 4.1), as
//!   Linux's tcp_cwnd_restart: halved per RTO of idleness down to min(IW, cwnd). CUBIC's epoch
//!   shift on CA_EVENT_TX_START is not modelled.
//! * On/off sources (`on_periods`): new data only within the application's on periods.
//! * Persistent streams ([`TcpSender::stream`], [`TcpSender::write`]): the application writes
//!   records (HTTP/1.1 requests or responses) on one connection, the window and its state
//!   carried from one to the next; no FIN. Each record starts on a segment boundary of the
//!   scoreboard's sequence space and its last segment is short on the wire (TCP_NODELAY:
//!   nothing waits for the next record), so the scoreboard keeps its fixed segment grid and a
//!   short segment counts as a whole one in the pipe and in window growth, as Linux counts
//!   both in packets (tcp_packets_in_flight, tcp_slow_start). On the wire the records follow
//!   one another byte for byte ([`Records`] maps ACK and SACK edges back).

use super::rto::{RtoRules, RttEstimator};
use super::scoreboard::{Delivered, Scoreboard};
use super::{Pacing, TcpConfig, HEADER, SYN_SIZE};
use crate::packet::{flags, Dir, Ecn, Kind, Packet, MAX_SACK_BLOCKS};
use crate::transport::cc::{make_cc, AckSample, CcState, CongestionControl, CongestionKind};
use crate::transport::{Endpoint, FlowReport, Outbox};
use crate::units::{Time, MS, SEC};
use std::collections::VecDeque;

const DUP_THRESH: u32 = 3;

/// The records written on a persistent stream not yet wholly acknowledged, oldest first:
/// (start in the scoreboard's sequence space, start on the wire, length), and the wire end.
#[derive(Debug)]
struct Records {
    recs: VecDeque<(u64, u64, u64)>,
    wire_end: u64,
}

impl Records {
    /// The scoreboard sequence number of wire sequence number `w` (an ACK or SACK edge); the
    /// end of the written data (`data_end` in the scoreboard's space) is the last record's end.
    fn to_seg(&self, w: u64, mss: u64, data_end: u64) -> u64 {
        let i = self.recs.partition_point(|r| r.1 <= w);
        match i.checked_sub(1).map(|i| self.recs[i]) {
            Some((s, ws, len)) if w >= ws + len => s + len.div_ceil(mss) * mss,
            Some((s, ws, _)) => s + (w - ws),
            // Below every record kept (acknowledged data): below snd_una.
            None => match self.recs.front() {
                Some(&(s, ws, _)) => s.saturating_sub(ws - w),
                None => data_end.saturating_sub(self.wire_end.saturating_sub(w)),
            },
        }
    }

    /// The wire range of the segment [start, end) of the scoreboard's space: (seq, length).
    fn to_wire(&self, start: u64, end: u64) -> (u64, u64) {
        let i = self.recs.partition_point(|r| r.0 <= start) - 1;
        let (s, ws, len) = self.recs[i];
        (ws + (start - s), end.min(s + len) - start)
    }

    /// Drops the records wholly acknowledged by `snd_una`.
    fn acked(&mut self, snd_una: u64, mss: u64) {
        while self
            .recs
            .front()
            .is_some_and(|r| r.0 + r.2.div_ceil(mss) * mss <= snd_una)
        {
            self.recs.pop_front();
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Closed,
    SynSent,
    Established,
    /// Finite transfer fully acknowledged.
    Done,
}

pub struct TcpSender {
    flow: u32,
    dir: Dir,
    mss: u64,
    iw: u64,
    sack: bool,
    ecn_cfg: bool,
    rwnd: u64,
    /// Exclusive end of the data (1 + bytes) for finite transfers (a persistent stream: of
    /// the data written, in the scoreboard's sequence space).
    data_end: Option<u64>,
    /// A persistent stream's records (None: one transfer).
    records: Option<Box<Records>>,
    /// No new data at or after this time (the flow's `stop`).
    stop: Option<Time>,
    /// The application's on periods [start, end), sorted (empty: always on); new data only
    /// within one, and a wake-up at the next start when the sender idles in an off period.
    on_periods: Vec<(Time, Time)>,
    app_wake: Option<Time>,
    /// Window restart after idle (RFC 5681 4.1 / Linux tcp_cwnd_restart) and the time of the
    /// last data segment sent (Linux icsk_lsndtime).
    idle_restart: bool,
    /// Linux 3.14's window-validation gate (TCP key `cwnd_limited`, [`is_cwnd_limited`]).
    cwnd_limited: bool,
    /// Linux's restart of the retransmission timer on a retransmission of the head (`rto_rearm`).
    rto_rearm: bool,
    /// Classic Nagle for short new segments (`nagle`).
    nagle: bool,
    last_data_sent: Option<Time>,
    /// Window restarts after idle.
    pub idle_restarts: u64,
    cc: Box<dyn CongestionControl>,
    st: CcState,
    rtt: RttEstimator,
    sb: Scoreboard,
    state: SenderState,
    ecn_ok: bool,
    cwr_pending: bool,
    snd_una: u64,
    /// Next new sequence number (HighData + 1).
    high_data: u64,
    dupacks: u32,
    /// New data sent on the duplicate ACKs since the last advance, outside any recovery (RFC
    /// 3042 limited transmit; with SACK, what SACKed segments let out): with `lt_excluded` a
    /// loss halves the FlightSize without it (RFC 5681 3.2, RFC 6675 5).
    lt_bytes: u64,
    lt_excluded: bool,
    /// RFC 6582's impatient timer in SACK recovery too (`impatient`).
    impatient: bool,
    /// ns-2 Sack1's scoreboard reset after a timeout (`rto_sack_reset`), and its `timeout_`
    /// flag: a timeout happened and no new ACK has arrived since.
    rto_sack_reset: bool,
    timeout_unacked: bool,
    in_recovery: bool,
    /// RFC 6675 RecoveryPoint (exclusive).
    recovery_point: u64,
    rescue_done: bool,
    /// RFC 6582 `recover` (exclusive: the next sequence after the highest sent).
    recover: u64,
    first_partial: bool,
    /// After an RTO: no fast recovery before snd_una reaches this point.
    loss_point: Option<u64>,
    /// No further congestion reduction before snd_una reaches this point.
    cong_point: u64,
    round_end: u64,
    rto_at: Option<Time>,
    /// RFC 8985 RACK loss detection (instead of the DupThresh IsLost rule): the most recently
    /// sent delivered segment, its RTT, the minimum RTT, and the reordering timer.
    rack: bool,
    rack_latest: Option<Delivered>,
    rack_rtt: Time,
    min_rtt: Option<Time>,
    rack_at: Option<Time>,
    /// RFC 8985 section 7 Tail Loss Probe: the probe timer, and while a probe is unanswered
    /// the sequence it covers and whether it was a retransmission.
    tlp: bool,
    pto_at: Option<Time>,
    tlp_end: Option<u64>,
    tlp_retx: bool,
    tlp_probes: u64,
    /// RFC 5682 F-RTO (Linux tcp_process_loss, SACK-enhanced) and undo of spurious timeouts:
    /// whether F-RTO runs in the current timeout episode, its `high_seq` (sequence), whether
    /// the next transmission is new data instead of retransmissions (step 2.b), the window
    /// before the episode (cwnd, ssthresh) and the time of its first retransmission.
    frto: bool,
    frto_on: bool,
    frto_high: u64,
    frto_new: bool,
    undo: Option<(u64, u64)>,
    retrans_stamp: Option<Time>,
    spurious_rtos: u64,
    /// RFC 5827 early retransmit as Linux 3.14 (tcp_time_to_recover "Trick#6",
    /// tcp_pause_early_retransmit): the delayed recovery start.
    early_retransmit: bool,
    er_at: Option<Time>,
    /// RFC 6937 Proportional Rate Reduction (SSRB) in SACK recovery, with its state:
    /// prr_delivered, prr_out and RecoverFS in bytes.
    prr: bool,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    /// ns-2 TCP/Linux rate halving and its bound on the pipe in bytes (0 = none).
    rate_halving: bool,
    rh_next: u64,
    /// Pacing: its settings, the earliest time of the next burst, and whether a segment the
    /// window allows is waiting for that time.
    pacing: Option<Pacing>,
    pace_next: Time,
    pace_wait: bool,
    /// Windows below this many bytes are sent as probes (the controller's `probe_segments`; 0:
    /// never): see [`Self::probe_due`].
    probe_below: u64,
    syn_sent: u32,
    // Counters.
    packets_sent: u64,
    bytes_sent: u64,
    retransmits: u64,
    rto_count: u64,
    first_syn: Option<Time>,
    completed: Option<Time>,
    ecn_reductions: u64,
    ece_acks: u64,
    fast_recoveries: u64,
    acks_received: u64,
}

impl TcpSender {
    pub fn new(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<TcpSender, String> {
        let cc = make_cc(&cfg.cc, cfg.mss, cfg.hystart, &cfg.cc_params)?;
        let mss = cfg.mss as u64;
        let data_end = cfg.bytes.map(|b| 1 + b);
        let probe_below = cc.probe_segments() * mss;
        Ok(TcpSender {
            flow,
            dir,
            mss,
            iw: cfg.iw as u64,
            sack: cfg.sack,
            ecn_cfg: cfg.ecn,
            rwnd: cfg.rwnd_bytes(),
            data_end,
            records: None,
            stop: cfg.stop,
            on_periods: cfg.on_periods.clone(),
            app_wake: None,
            idle_restart: cfg.idle_restart,
            cwnd_limited: cfg.cwnd_limited,
            rto_rearm: cfg.rto_rearm,
            nagle: cfg.nagle,
            last_data_sent: None,
            idle_restarts: 0,
            cc,
            st: CcState {
                cwnd: cfg.iw as u64 * mss,
                ssthresh: u64::MAX,
                mss,
                bytes_in_flight: 0,
                in_recovery: false,
                cwnd_limited: true,
                srtt: None,
                abc: cfg.abc,
            },
            rtt: RttEstimator::with_rules(
                cfg.initial_rto,
                cfg.min_rto,
                cfg.max_rto,
                match (cfg.rto_tick, cfg.linux_rto) {
                    (0, false) => RtoRules::Rfc6298,
                    (0, true) => RtoRules::Linux,
                    (tick, _) => RtoRules::Ns2 { tick },
                },
            ),
            sb: if cfg.rack && cfg.sack {
                Scoreboard::new(mss, data_end).with_rack()
            } else {
                Scoreboard::new(mss, data_end)
            },
            state: SenderState::Closed,
            ecn_ok: false,
            cwr_pending: false,
            snd_una: 0,
            high_data: 1,
            dupacks: 0,
            lt_bytes: 0,
            lt_excluded: cfg.lt_excluded,
            impatient: cfg.impatient,
            rto_sack_reset: cfg.rto_sack_reset,
            timeout_unacked: false,
            in_recovery: false,
            recovery_point: 0,
            rescue_done: false,
            recover: 0,
            first_partial: false,
            loss_point: None,
            cong_point: 0,
            round_end: 1,
            rto_at: None,
            rack: cfg.rack && cfg.sack,
            rack_latest: None,
            rack_rtt: 0,
            min_rtt: None,
            rack_at: None,
            tlp: cfg.tlp && cfg.sack,
            pto_at: None,
            tlp_end: None,
            tlp_retx: false,
            tlp_probes: 0,
            frto: cfg.frto,
            frto_on: false,
            frto_high: 0,
            frto_new: false,
            undo: None,
            retrans_stamp: None,
            spurious_rtos: 0,
            early_retransmit: cfg.early_retransmit && cfg.sack && !cfg.rack,
            er_at: None,
            prr: cfg.prr,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            rate_halving: cfg.rate_halving && cfg.sack,
            rh_next: 0,
            pacing: cfg.pacing_params(),
            pace_next: 0,
            pace_wait: false,
            probe_below,
            syn_sent: 0,
            packets_sent: 0,
            bytes_sent: 0,
            retransmits: 0,
            rto_count: 0,
            first_syn: None,
            completed: None,
            ecn_reductions: 0,
            ece_acks: 0,
            fast_recoveries: 0,
            acks_received: 0,
        })
    }

    /// A persistent stream: a connection with the flow's settings that carries the records the
    /// application [`write`](Self::write)s (no data until then), never done.
    pub fn stream(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<TcpSender, String> {
        let cfg = TcpConfig {
            bytes: None,
            ..cfg.clone()
        };
        let mut s = TcpSender::new(&cfg, flow, dir)?;
        s.data_end = Some(1);
        s.records = Some(Box::new(Records {
            recs: VecDeque::new(),
            wire_end: 1,
        }));
        Ok(s)
    }

    /// Whether every record written on a persistent stream is acknowledged.
    pub fn records_acked(&self) -> bool {
        self.records.as_ref().is_some_and(|r| r.recs.is_empty())
    }

    /// Writes a record of `bytes` on a persistent stream (sent as the window allows).
    pub fn write(&mut self, bytes: u64, now: Time, out: &mut Outbox) {
        let r = self.records.as_mut().expect("a persistent stream");
        let start = self.data_end.expect("a persistent stream");
        r.recs.push_back((start, r.wire_end, bytes));
        r.wire_end += bytes;
        self.data_end = Some(start + bytes.div_ceil(self.mss) * self.mss);
        self.send_loop(now, out);
    }

    pub fn state(&self) -> SenderState {
        self.state
    }
    pub fn cwnd(&self) -> u64 {
        self.st.cwnd
    }
    pub fn ssthresh(&self) -> u64 {
        self.st.ssthresh
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// The next new sequence number to send.
    pub fn snd_nxt(&self) -> u64 {
        self.high_data
    }
    pub fn pipe(&self) -> u64 {
        self.sb.pipe()
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn_ok
    }
    /// Fast recoveries entered (loss detected by duplicate ACKs / SACK).
    pub fn fast_recoveries(&self) -> u64 {
        self.fast_recoveries
    }
    /// ACKs received with ECE set.
    pub fn ece_acks(&self) -> u64 {
        self.ece_acks
    }
    pub fn retransmits(&self) -> u64 {
        self.retransmits
    }
    pub fn rto_count(&self) -> u64 {
        self.rto_count
    }
    /// Tail loss probes sent.
    pub fn tlp_probes(&self) -> u64 {
        self.tlp_probes
    }
    /// Retransmission timeouts found spurious and undone (F-RTO / timestamps).
    pub fn spurious_rtos(&self) -> u64 {
        self.spurious_rtos
    }
    pub fn ecn_reductions(&self) -> u64 {
        self.ecn_reductions
    }
    /// Time the ACK covering the last data byte arrived (finite transfers).
    pub fn completed(&self) -> Option<Time> {
        self.completed
    }

    /// Holds new data back until `at` (the application hands it over then; `Time::MAX`: not
    /// yet known), as an on period from `at` on. A web server opens its response connection
    /// with the request and releases the response after its think time.
    pub fn release_at(&mut self, at: Time) {
        self.on_periods = vec![(at, Time::MAX)];
        if self.state == SenderState::Established {
            self.app_wake = Some(at);
        }
    }
    /// The SACK scoreboard (for inspection).
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    /// ACKs processed in the established state.
    pub fn acks_received(&self) -> u64 {
        self.acks_received
    }
    /// The congestion controller (for inspection).
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    fn flight(&self) -> u64 {
        self.high_data - self.snd_una.max(1)
    }

    fn sync_state(&mut self) {
        self.st.bytes_in_flight = self.flight();
        self.st.in_recovery = self.in_recovery;
        self.st.srtt = self.rtt.srtt();
    }

    fn emit(&mut self, p: Packet, out: &mut Outbox) {
        if self.in_recovery {
            self.prr_out += p.payload as u64;
        }
        self.packets_sent += 1;
        self.bytes_sent += p.size as u64;
        out.push(p);
    }

    fn send_syn(&mut self, now: Time, out: &mut Outbox) {
        let f = flags::SYN | if self.ecn_cfg { flags::ECE | flags::CWR } else { 0 };
        let p = Packet {
            flow: self.flow,
            size: SYN_SIZE,
            kind: Kind::Tcp,
            dir: self.dir,
            tcp_flags: f,
            ts_val: now,
            sent_at: now,
            ..Packet::default()
        };
        self.syn_sent += 1;
        self.emit(p, out);
        self.rto_at = Some(now + self.rtt.rto());
    }

    fn segment(&self, i: u64, now: Time) -> Packet {
        let start = self.sb.seg_start(i);
        let end = self.sb.seg_end(i);
        let (seq, len, fin) = match &self.records {
            Some(r) => {
                let (seq, len) = r.to_wire(start, end);
                (seq, len, false)
            }
            None => (start, end - start, self.data_end == Some(end)),
        };
        Packet {
            flow: self.flow,
            size: len as u32 + HEADER,
            kind: Kind::Tcp,
            dir: self.dir,
            ecn: Ecn::NotEct,
            tcp_flags: flags::ACK | if fin { flags::FIN } else { 0 },
            seq,
            ack: 1,
            payload: len as u32,
            ts_val: now,
            sent_at: now,
            ..Packet::default()
        }
    }

    fn send_new(&mut self, now: Time, out: &mut Outbox) {
        let idle = self.idle_restart
            && self.sb.outstanding() == 0
            && self.last_data_sent.is_some_and(|t| now - t > self.rtt.rto());
        if idle {
            self.restart_window(now - self.last_data_sent.unwrap_or(now));
        }
        self.last_data_sent = Some(now);
        let i = self.sb.push_new(now);
        let mut p = self.segment(i, now);
        if self.ecn_ok {
            p.ecn = Ecn::Ect0;
            if self.cwr_pending {
                p.tcp_flags |= flags::CWR;
                self.cwr_pending = false;
            }
        }
        if self.dupacks > 0 && !self.in_recovery && self.loss_point.is_none() {
            self.lt_bytes += self.sb.seg_end(i) - self.high_data;
        }
        self.high_data = self.sb.seg_end(i);
        self.emit(p, out);
    }

    /// Linux tcp_cwnd_restart after `idle` without data in flight: ssthresh =
    /// max(ssthresh, 3/4 cwnd); cwnd halved once per RTO of idleness beyond the first, never
    /// below the restart window min(IW, cwnd).
    fn restart_window(&mut self, idle: Time) {
        let cwnd = self.st.cwnd;
        self.st.ssthresh = self.st.ssthresh.max(cwnd / 2 + cwnd / 4);
        let restart = (self.iw * self.mss).min(cwnd);
        let rto = self.rtt.rto().max(1);
        let mut w = cwnd;
        let mut left = idle as i128 - rto as i128;
        while left > 0 && w > restart {
            w /= 2;
            left -= rto as i128;
        }
        self.st.cwnd = w.max(restart);
        self.idle_restarts += 1;
    }

    fn retransmit(&mut self, i: u64, now: Time, out: &mut Outbox) {
        if self.rto_rearm && i == self.sb.first_idx() && self.rack_at.is_none() {
            self.rto_at = Some(now + self.rtt.rto());
        }
        self.last_data_sent = Some(now);
        self.sb.retransmitted(i, now);
        self.retrans_stamp.get_or_insert(now);
        let p = self.segment(i, now);
        self.retransmits += 1;
        self.emit(p, out);
    }

    fn can_send_new(&self, now: Time) -> bool {
        let next = self.sb.next_idx();
        let end = self.sb.seg_end(next);
        let has_data = self.data_end.is_none_or(|d| self.high_data < d);
        let stopped = self.stop.is_some_and(|s| now >= s);
        has_data && !stopped && self.app_on(now) && end - self.snd_una <= self.rwnd && !self.nagle_holds(next)
    }

    /// Classic Nagle (ns-2 tcp-full.cc foutput): new segment `i` waits when it is shorter than
    /// the MSS, data is outstanding and it is under half the receive window.
    /// On a persistent stream the length is the segment's on the wire (a record's short tail).
    fn nagle_holds(&self, i: u64) -> bool {
        if !self.nagle {
            return false;
        }
        let len = match &self.records {
            Some(r) => r.to_wire(self.sb.seg_start(i), self.sb.seg_end(i)).1,
            None => self.sb.seg_len(i),
        };
        len < self.mss && self.snd_una < self.high_data && 2 * len < self.rwnd
    }

    /// Whether the application has data to hand over at `now` (an on period), and otherwise
    /// when its next on period starts.
    fn app_on(&self, now: Time) -> bool {
        self.on_periods.is_empty() || self.next_on(now) == Some(now)
    }

    fn next_on(&self, now: Time) -> Option<Time> {
        let i = self.on_periods.partition_point(|p| p.1 <= now);
        self.on_periods.get(i).map(|p| p.0.max(now))
    }

    /// Segments per paced burst and the pacing rate in bytes per second (Linux
    /// tcp_update_pacing_rate, tcp_tso_autosize); `None` before the first RTT sample.
    fn pacing_burst(&self, p: &Pacing) -> Option<(u64, u64)> {
        let srtt = self.rtt.srtt()?.max(1);
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 {
            p.ss_ratio
        } else {
            p.ca_ratio
        };
        let window = self.st.cwnd.max(self.flight());
        let rate = (window as u128 * ratio as u128 * SEC as u128 / (100 * srtt as u128)).max(1) as u64;
        let segs = match p.tso_segs {
            Some(n) => n as u64,
            None => ((rate >> 10).min(65_535) / self.mss).max(2),
        };
        Some((segs, rate))
    }

    /// Whether pacing holds the next segment back; arms the pacing wake-up if so.
    fn paced_out(&mut self, now: Time) -> bool {
        if self.pacing.is_some() && now < self.pace_next {
            self.pace_wait = true;
            return true;
        }
        false
    }

    /// Transmits what the window allows (RFC 6675 NextSeg / RFC 6582 / plain new data), in
    /// paced bursts when pacing is on.
    fn send_loop(&mut self, now: Time, out: &mut Outbox) {
        if self.state != SenderState::Established {
            return;
        }
        self.pace_wait = false;
        let burst = self.pacing.and_then(|p| self.pacing_burst(&p));
        let bytes_before = self.bytes_sent;
        self.send_window(now, out, burst.map(|(segs, _)| segs));
        if let Some((_, rate)) = burst {
            let bytes = self.bytes_sent - bytes_before;
            if bytes > 0 {
                let len_ns = (bytes as u128 * SEC as u128).div_ceil(rate as u128) as Time;
                self.pace_next = self.pace_next.max(now) + len_ns;
            }
        }
        if self.rto_at.is_none() && self.sb.outstanding() > 0 {
            self.rto_at = Some(now + self.rtt.rto());
        }
        if self.pto_at.is_none() {
            self.arm_pto(now);
        }
        if !self.on_periods.is_empty() && !self.app_on(now) {
            self.app_wake = self.next_on(now);
        }
    }

    /// RFC 8985 7.2: outside loss recovery, with data in flight and no probe unanswered, the
    /// probe timeout is 2 SRTT (plus the RTO floor when one segment is in flight, for a
    /// delayed ACK; Linux tcp_schedule_loss_probe), and never after the RTO.
    fn arm_pto(&mut self, now: Time) {
        self.pto_at = None;
        let Some(srtt) = self.rtt.srtt() else { return };
        if !self.tlp
            || self.state != SenderState::Established
            || self.in_recovery
            || self.loss_point.is_some()
            || self.tlp_end.is_some()
            || self.sb.outstanding() == 0
        {
            return;
        }
        let mut pto = 2 * srtt;
        if self.sb.outstanding() == 1 {
            pto += self.rtt.min_rto();
        }
        let at = now + pto;
        self.pto_at = Some(self.rto_at.map_or(at, |r| at.min(r)));
    }

    /// The probe: one new segment if there is one the receive window allows, else a
    /// retransmission of the highest segment not SACKed; then the RTO restarts (RFC 8985 7.3).
    fn send_probe(&mut self, now: Time, out: &mut Outbox) {
        self.pto_at = None;
        if self.can_send_new(now) {
            self.send_new(now, out);
            self.tlp_retx = false;
        } else if let Some(i) = self
            .sb
            .highest_unsacked()
            .filter(|&i| self.sb.seg(i).is_some_and(|s| !s.retx))
        {
            self.retransmit(i, now, out);
            self.tlp_retx = true;
        } else {
            return;
        }
        self.tlp_probes += 1;
        self.tlp_end = Some(self.high_data);
        self.rto_at = Some(now + self.rtt.rto());
    }

    /// RACK_update_reo_wnd (RFC 8985 6.2 step 4, Linux tcp_rack_reo_wnd) without reordering
    /// seen (this receiver never reports any): 0 in recovery or once DupThresh segments are
    /// SACKed, else min_RTT / 4 capped at SRTT.
    fn rack_reo_wnd(&self) -> Time {
        if self.in_recovery || self.sb.sacked_segments() >= DUP_THRESH as u64 {
            return 0;
        }
        let quarter = self.min_rtt.unwrap_or(0) / 4;
        self.rtt.srtt().map_or(quarter, |s| quarter.min(s))
    }

    /// RACK_detect_loss: marks what the latest delivery shows lost and arms the reordering
    /// timer for the rest. Returns the number of segments marked.
    fn rack_detect(&mut self, now: Time) -> u64 {
        let Some(latest) = self.rack_latest else { return 0 };
        let wait = self.rack_rtt + self.rack_reo_wnd();
        let (marked, next) = self.sb.rack_detect(latest, wait, now);
        self.rack_at = next;
        marked
    }

    /// The window loop of [`Self::send_loop`]: at most `burst` segments when pacing.
    fn send_window(&mut self, now: Time, out: &mut Outbox, burst: Option<u64>) {
        if self.paced_out(now) {
            return;
        }
        let start = out.len();
        let newreno_fr = !self.sack && self.in_recovery;
        if self.rh_next > 0 {
            self.rh_next = self.rh_next.min(self.sb.pipe() + self.mss);
        }
        loop {
            if burst.is_some_and(|b| (out.len() - start) as u64 >= b) {
                // The burst is full: whatever the window still allows waits for the next one.
                self.pace_wait = true;
                break;
            }
            if self.rh_next > 0 && out.len() > start {
                let after = self.sb.pipe().saturating_sub(self.mss).max(self.mss);
                self.rh_next = self.rh_next.min(after);
            }
            let cwnd = self.st.cwnd.max(self.rh_next);
            let cand = if newreno_fr {
                None
            } else {
                self.sb.next_candidate()
            };
            // Rule 1: a lost segment (also the go-back-N retransmissions after an RTO), except
            // while F-RTO sends new data instead (RFC 5682 step 2.b).
            if let (Some((i, true)), false) = (cand, self.frto_new) {
                if self.sb.pipe() + self.mss <= cwnd {
                    self.retransmit(i, now, out);
                    continue;
                }
                break;
            }
            // Rule 2: new data.
            if self.can_send_new(now) {
                let (in_flight, mut allowed) = if self.sack {
                    (self.sb.pipe(), cwnd)
                } else {
                    (self.flight(), cwnd)
                };
                if !self.sack && !self.in_recovery && self.loss_point.is_none() {
                    // RFC 3042 limited transmit.
                    allowed += self.dupacks.min(2) as u64 * self.mss;
                }
                if !self.sack && self.loss_point.is_some() {
                    // Go-back-N after an RTO: the pipe of retransmissions governs.
                    if self.sb.pipe() + self.mss <= cwnd {
                        self.send_new(now, out);
                        continue;
                    }
                    break;
                }
                if self.st.cwnd < self.probe_below && !self.in_recovery {
                    if self.probe_due(now, (out.len() - start) as u64) {
                        self.send_new(now, out);
                        continue;
                    }
                    break;
                }
                if in_flight + self.mss <= allowed {
                    self.send_new(now, out);
                    continue;
                }
                break;
            }
            // Rules 3 and 4 (SACK recovery only).
            if self.sack && self.in_recovery && self.sb.pipe() + self.mss <= cwnd {
                // Rule 3 only below the highest SACKed segment (RFC 6675 NextSeg (1.b)).
                if let Some((i, false)) = cand {
                    if self.sb.highest_sacked().is_some_and(|h| i < h) {
                        self.retransmit(i, now, out);
                        continue;
                    }
                }
                if !self.rescue_done {
                    self.rescue_done = true;
                    if let Some(i) = self.sb.highest_unsacked() {
                        if !self.sb.seg(i).is_some_and(|s| s.retx) {
                            self.retransmit(i, now, out);
                            continue;
                        }
                    }
                }
            }
            break;
        }
    }

    /// A window below `probe_below` (TCP Nice, nice.rs): whether the next new segment may go,
    /// `sent` segments having gone in this call. A probe of probe_below / SMSS segments leaves
    /// with nothing else in flight, probe_below / cwnd smoothed RTTs after the last data sent;
    /// until then the pacing wake-up is armed for that time.
    fn probe_due(&mut self, now: Time, sent: u64) -> bool {
        if sent > 0 {
            return sent * self.mss < self.probe_below;
        }
        if self.flight() > 0 {
            return false;
        }
        let (Some(srtt), Some(last)) = (self.rtt.srtt(), self.last_data_sent) else {
            return true;
        };
        let wait = srtt as u128 * self.probe_below as u128 / self.st.cwnd.max(1) as u128;
        let at = last.saturating_add(wait.min(Time::MAX as u128) as Time);
        if now >= at {
            return true;
        }
        self.pace_next = at;
        self.pace_wait = true;
        false
    }

    /// One congestion response (loss or ECE), at most once per window of data.
    fn reduce(&mut self, now: Time, kind: CongestionKind) -> bool {
        if self.snd_una < self.cong_point {
            return false;
        }
        self.sync_state();
        if self.lt_excluded && kind == CongestionKind::Loss {
            self.st.bytes_in_flight -= self.lt_bytes.min(self.st.bytes_in_flight);
        }
        self.cc.on_congestion_event(now, kind, &mut self.st);
        self.st.bytes_in_flight = self.flight();
        self.cong_point = self.high_data;
        true
    }

    /// RFC 6937 section 3 on an ACK in recovery that delivered `delivered` bytes (newly
    /// cumulatively acknowledged or SACKed): cwnd = pipe + sndcnt, proportional to the data
    /// delivered while pipe > ssthresh, else the slow-start reduction bound (PRR-SSRB). As
    /// Linux (tcp_input.c tcp_cwnd_reduction), sndcnt is at least one segment until the
    /// first retransmission of the episode is out.
    fn prr_update(&mut self, delivered: u64) {
        self.prr_delivered += delivered;
        let pipe = self.sb.pipe();
        let ssthresh = self.st.ssthresh;
        let sndcnt = if pipe > ssthresh {
            // CEIL in whole segments, as Linux counts packets.
            let unit = self.recover_fs.max(1) as u128 * self.mss as u128;
            let segs = (self.prr_delivered as u128 * ssthresh as u128).div_ceil(unit) as u64;
            (segs * self.mss).saturating_sub(self.prr_out)
        } else {
            let limit = self.prr_delivered.saturating_sub(self.prr_out).max(delivered) + self.mss;
            (ssthresh - pipe).min(limit)
        };
        let sndcnt = if self.prr_out == 0 {
            sndcnt.max(self.mss)
        } else {
            sndcnt
        };
        self.st.cwnd = pipe + sndcnt;
    }

    fn enter_recovery(&mut self, now: Time, delivered: u64, out: &mut Outbox) {
        self.save_undo();
        self.in_recovery = true;
        self.fast_recoveries += 1;
        self.er_at = None;
        if self.rate_halving {
            self.rh_next = self.st.cwnd;
        }
        if !self.reduce(now, CongestionKind::Loss) {
            self.st.cwnd = self.st.cwnd.min(self.st.ssthresh);
        }
        self.tlp_end = None;
        self.pto_at = None;
        let head = self.sb.first_idx();
        if !self.rack {
            // RFC 6675 / 6582: the head is the segment the duplicate ACKs show lost.
            self.sb.mark_lost(head);
        }
        self.first_partial = true;
        if self.sack {
            self.recovery_point = self.high_data;
            self.rescue_done = false;
            if self.prr {
                self.prr_delivered = 0;
                self.prr_out = 0;
                self.recover_fs = self.flight();
                self.prr_update(delivered);
            }
        } else {
            self.recover = self.high_data;
            self.st.cwnd = self.st.ssthresh + 3 * self.mss;
        }
        if self.sb.seg(head).is_some_and(|s| !s.retx && !s.sacked && s.lost) {
            self.retransmit(head, now, out);
        }
    }

    fn exit_recovery(&mut self, now: Time) {
        self.in_recovery = false;
        self.end_episode();
        if self.sack {
            // tcp_end_cwnd_reduction: never to an infinite ssthresh.
            if self.st.ssthresh < u64::MAX {
                self.st.cwnd = self.st.ssthresh;
            }
        } else {
            self.st.cwnd = self.st.ssthresh.min(self.flight().max(self.mss) + self.mss);
        }
        self.sync_state();
        self.cc.on_recovery_exit(now, &mut self.st);
    }

    /// Linux tcp_init_undo: the window to restore if the episode proves spurious (prior_cwnd,
    /// and prior_ssthresh = tcp_current_ssthresh: at least 3/4 cwnd outside a reduction).
    fn save_undo(&mut self) {
        if self.frto && self.undo.is_none() {
            let ssthresh = if self.in_recovery {
                self.st.ssthresh
            } else {
                self.st.ssthresh.max(self.st.cwnd / 2 + self.st.cwnd / 4)
            };
            self.undo = Some((self.st.cwnd, ssthresh));
        }
    }

    /// The loss episode is over (recovery left, or snd_una past the timeout's loss point).
    fn end_episode(&mut self) {
        self.rh_next = 0;
        self.undo = None;
        self.retrans_stamp = None;
        self.frto_on = false;
    }

    /// Undo of a spurious timeout (Linux tcp_try_undo_loss / tcp_undo_cwnd_reduction): the
    /// window before the episode comes back, nothing is lost any more, the Loss state ends.
    /// The connection is Open again, so the next loss reduces the window however soon it
    /// comes (tcp_enter_recovery always runs tcp_init_cwnd_reduction from Open).
    fn undo_timeout(&mut self) {
        if let Some((cwnd, ssthresh)) = self.undo {
            self.st.cwnd = self.st.cwnd.max(cwnd);
            self.st.ssthresh = self.st.ssthresh.max(ssthresh);
        }
        self.sb.unmark_lost();
        self.loss_point = None;
        self.cong_point = self.snd_una;
        self.spurious_rtos += 1;
        self.end_episode();
    }

    /// F-RTO and undo on an ACK in the Loss state (Linux tcp_process_loss, RFC 5682 3.1):
    /// an advancing ACK that echoes a timestamp older than the first retransmission, or one
    /// that delivers never-retransmitted data sent before the timeout, shows it spurious; the
    /// first ACK advancing without SACK information lets new data go instead of more
    /// retransmissions (step 2.b); SACK information or duplicate ACKs after that new data
    /// show the loss real (step 3.a).
    fn frto_on_ack(&mut self, advanced: bool, ts_ecr: Time, dup: bool) {
        let delayed = self.retrans_stamp.is_some_and(|t| ts_ecr < t);
        let orig = self.frto_on
            && self
                .sb
                .orig_delivered()
                .is_some_and(|i| self.sb.seg_end(i) <= self.frto_high);
        if (advanced && delayed && self.undo.is_some()) || orig {
            self.undo_timeout();
            return;
        }
        if !self.frto_on {
            return;
        }
        if self.high_data > self.frto_high {
            if dup {
                self.frto_on = false;
            }
        } else if advanced && self.snd_una < self.frto_high {
            self.frto_high = self.high_data;
            self.frto_new = true;
        }
    }

    fn on_rto(&mut self, now: Time, out: &mut Outbox) {
        self.rto_count += 1;
        self.rh_next = 0;
        self.tlp_end = None;
        self.pto_at = None;
        self.rack_at = None;
        self.er_at = None;
        let first = self.rtt.backoffs() == 0;
        // tcp_enter_loss: F-RTO runs unless this first timeout interrupts a fast recovery.
        self.frto_on = self.frto && (!self.in_recovery || !first);
        self.frto_high = self.high_data;
        self.save_undo();
        self.sync_state();
        self.cc.on_rto(now, first, &mut self.st);
        self.st.cwnd = self.mss;
        self.rtt.backoff();
        self.in_recovery = false;
        self.dupacks = 0;
        self.lt_bytes = 0;
        self.loss_point = Some(self.high_data);
        self.recover = self.high_data;
        self.cong_point = self.high_data;
        self.sb.mark_all_lost();
        if self.rto_sack_reset {
            self.sb.discard_sacks();
            self.timeout_unacked = true;
        }
        self.rto_at = None;
        self.send_loop(now, out);
        self.rto_at = Some(now + self.rtt.rto());
    }

    fn on_ack(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        self.acks_received += 1;
        // tcp_ack's prior_in_flight: what was in flight before this ACK.
        let prior_flight = self.flight();
        let ack = pkt.ack.min(self.high_data);
        let advanced = ack > self.snd_una;
        let mut acked_bytes = 0;
        self.sb.begin_ack(pkt.ts_ecr);
        if advanced {
            acked_bytes = ack - self.snd_una;
            self.sb.cum_ack(ack);
            self.snd_una = ack;
        }
        let mut sacked_bytes = 0;
        let mut newly_lost = 0;
        // ns-2 Sack1 after a timeout: duplicate ACKs are ignored until a new ACK, and a new
        // ACK clears the scoreboard (its own SACK blocks unused).
        let ns2_reset = self.rto_sack_reset && self.loss_point.is_some();
        if ns2_reset && advanced {
            self.sb.discard_sacks();
            self.timeout_unacked = false;
        }
        if self.sack && !(ns2_reset && (advanced || self.timeout_unacked)) {
            for b in &pkt.sack[..(pkt.n_sack as usize).min(pkt.sack.len())] {
                sacked_bytes += self.sb.sack(b.start, b.end);
            }
            if sacked_bytes > 0 && !self.rack {
                newly_lost = self.sb.update_lost();
            }
        }
        let (mut rtt, mut owd) = (None, None);
        if advanced && now >= pkt.ts_ecr {
            let r = now - pkt.ts_ecr;
            self.rtt.sample(r, self.snd_una, self.high_data);
            rtt = Some(r);
            owd = pkt.ts_val.checked_sub(pkt.ts_ecr);
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        // RACK_update (RFC 8985 6.2 step 2) and RACK_detect_loss (step 5).
        let mut rack_marked = 0;
        if self.rack {
            if let Some(d) = self.sb.delivered() {
                let r = now.saturating_sub(d.xmit_ts);
                self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
                if self.rack_latest.is_none_or(|x| d > x) {
                    self.rack_latest = Some(d);
                    self.rack_rtt = r;
                }
            }
            rack_marked = self.rack_detect(now);
        }
        // A tail loss probe answered (Linux tcp_process_tlp_ack): a probe that retransmitted
        // data and is acknowledged by an advancing ACK repaired a loss: reduce once.
        if let Some(end) = self.tlp_end {
            if self.snd_una >= end {
                self.tlp_end = None;
                if !self.in_recovery && self.loss_point.is_none() {
                    self.retrans_stamp = None;
                }
                if self.tlp_retx && advanced && !self.in_recovery {
                    self.reduce(now, CongestionKind::Loss);
                }
            }
        }
        let mut round_start = false;
        if advanced && self.snd_una >= self.round_end {
            round_start = true;
            self.round_end = self.high_data;
        }
        let outstanding = self.snd_una < self.high_data;
        let is_dup =
            ack == self.snd_una && outstanding && pkt.payload == 0 && (!self.sack || sacked_bytes > 0);
        if advanced {
            self.dupacks = 0;
            self.lt_bytes = 0;
        } else if is_dup {
            self.dupacks += 1;
        }
        if pkt.tcp_flags & flags::ECE != 0 {
            self.ece_acks += 1;
        }

        // F-RTO and undo decide before the window grows (Linux: tcp_fastretrans_alert, then
        // tcp_cong_control).
        if self.frto && self.loss_point.is_some() {
            self.frto_on_ack(advanced, pkt.ts_ecr, sacked_bytes > 0 || is_dup);
        }

        // Window growth (the controller skips growth while in recovery, and while the window
        // does not limit the sender when the gate is on).
        self.sync_state();
        self.st.cwnd_limited = !self.cwnd_limited || is_cwnd_limited(prior_flight, self.st.cwnd, self.mss);
        let sample = AckSample {
            now,
            acked_bytes,
            sacked_bytes,
            rtt,
            owd,
            round_start,
        };
        self.cc.on_ack(&sample, &mut self.st);

        if let Some(r) = self.records.as_mut() {
            r.acked(self.snd_una, self.mss);
        } else if self.data_end.is_some_and(|d| self.snd_una >= d) {
            self.state = SenderState::Done;
            self.completed = Some(now);
            self.rto_at = None;
            return;
        }
        if self.loss_point.is_some_and(|lp| self.snd_una >= lp) {
            self.loss_point = None;
            self.end_episode();
        }

        // Loss recovery.
        if self.sack {
            if self.in_recovery {
                if self.snd_una >= self.recovery_point {
                    self.exit_recovery(now);
                } else {
                    if newly_lost + rack_marked > 0 {
                        self.sync_state();
                        self.cc.on_loss_detected(now, &mut self.st);
                    }
                    if self.prr {
                        self.prr_update(acked_bytes + sacked_bytes);
                    }
                }
            } else if self.loss_point.is_none()
                && outstanding
                && (if self.rack {
                    rack_marked > 0 || self.sb.head_lost()
                } else {
                    self.dupacks >= DUP_THRESH || self.sb.head_lost()
                })
            {
                self.enter_recovery(now, acked_bytes + sacked_bytes, out);
            } else if advanced {
                // tcp_rearm_rto: an ACK of new data cancels a pending early retransmit.
                self.er_at = None;
            }
            if self.early_retransmit && !self.in_recovery && self.er_at.is_none() && self.er_ready(now) {
                // tcp_pause_early_retransmit: wait max(SRTT/4, 2 ms), unless the RTO is sooner.
                let at = now + (self.rtt.srtt().unwrap_or(0) / 4).max(2 * MS);
                if self.rto_at.is_some_and(|r| r <= at) {
                    self.enter_recovery(now, 0, out);
                } else {
                    self.er_at = Some(at);
                }
            }
        } else if self.in_recovery {
            if advanced {
                if self.snd_una >= self.recover {
                    self.exit_recovery(now);
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked.
                    let head = self.sb.first_idx();
                    self.sb.mark_lost(head);
                    if self.sb.seg(head).is_some_and(|s| !s.retx) {
                        self.retransmit(head, now, out);
                    }
                    let extra = if acked_bytes >= self.mss { self.mss } else { 0 };
                    self.st.cwnd = self.st.cwnd.saturating_sub(acked_bytes).max(self.mss) + extra;
                }
            } else if is_dup {
                self.st.cwnd += self.mss;
            }
        } else if self.dupacks == DUP_THRESH && self.snd_una >= self.recover && self.loss_point.is_none() {
            self.enter_recovery(now, 0, out);
        }

        // ECN: react to ECE once per window, never during loss recovery.
        if self.ecn_ok
            && pkt.tcp_flags & flags::ECE != 0
            && !self.in_recovery
            && self.loss_point.is_none()
            && self.reduce(now, CongestionKind::Ecn)
        {
            self.ecn_reductions += 1;
            self.cwr_pending = true;
        }

        // Retransmission timer (RFC 6298 5.2 / 5.3; RFC 6582 impatient variant).
        if advanced {
            if self.sb.outstanding() == 0 {
                self.rto_at = None;
            } else {
                let impatient = self.in_recovery && (!self.sack || self.impatient);
                if !impatient || self.first_partial {
                    self.rto_at = Some(now + self.rtt.rto());
                }
                if impatient {
                    self.first_partial = false;
                }
            }
            // RFC 8985 7.2: an ACK of new data restarts the probe timer.
            self.arm_pto(now);
        }
        self.send_loop(now, out);
        if self.frto_new {
            // Step 2.b sent new data if it could; otherwise conventional recovery goes on.
            self.frto_new = false;
            if self.high_data <= self.frto_high {
                self.frto_on = false;
                self.send_loop(now, out);
            }
        }
    }

    /// Linux 3.14 tcp_time_to_recover "Trick#6" (RFC 5827 for SACK): no retransmission in
    /// flight, at least one segment SACKed and one not, fewer than 4 outstanding, and nothing
    /// new may be sent.
    fn er_ready(&self, now: Time) -> bool {
        let n = self.sb.outstanding() as u64;
        if self.loss_point.is_some() || n >= 4 {
            return false;
        }
        let first = self.sb.first_idx();
        let segs = (first..first + n).filter_map(|i| self.sb.seg(i));
        let (mut sacked, mut retx) = (0, false);
        for s in segs {
            sacked += s.sacked as u64;
            retx |= s.retx;
        }
        let may_send = self.can_send_new(now) && self.sb.pipe() + self.mss <= self.st.cwnd;
        !retx && sacked >= 1 && n > sacked && !may_send
    }
}

impl Endpoint for TcpSender {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        if self.state == SenderState::Closed {
            self.state = SenderState::SynSent;
            self.first_syn = Some(now);
            self.send_syn(now, out);
        }
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if pkt.kind != Kind::Tcp {
            return;
        }
        if pkt.tcp_flags & flags::SYN != 0 {
            if self.state == SenderState::SynSent && pkt.tcp_flags & flags::ACK != 0 && pkt.ack == 1 {
                self.state = SenderState::Established;
                self.snd_una = 1;
                self.ecn_ok = self.ecn_cfg && pkt.tcp_flags & flags::ECE != 0;
                if now >= pkt.ts_ecr {
                    self.rtt.sample(now - pkt.ts_ecr, self.snd_una, self.high_data);
                }
                // RFC 5681 3.1: IW = 1 segment when the SYN had to be retransmitted.
                self.st.cwnd = if self.syn_sent > 1 {
                    self.mss
                } else {
                    self.iw * self.mss
                };
                self.rto_at = None;
                if self.data_end == Some(1) && self.records.is_none() {
                    self.state = SenderState::Done;
                    self.completed = Some(now);
                    return;
                }
                self.send_loop(now, out);
            }
            return;
        }
        if self.state == SenderState::Established && pkt.tcp_flags & flags::ACK != 0 {
            match self.records.as_deref() {
                // A persistent stream's ACK and SACK edges in the scoreboard's space.
                Some(r) => {
                    let d = self.data_end.expect("a persistent stream");
                    let mut p = *pkt;
                    p.ack = r.to_seg(p.ack, self.mss, d);
                    for b in &mut p.sack[..(p.n_sack as usize).min(MAX_SACK_BLOCKS)] {
                        b.start = r.to_seg(b.start, self.mss, d);
                        b.end = r.to_seg(b.end, self.mss, d);
                    }
                    self.on_ack(&p, now, out);
                }
                None => self.on_ack(pkt, now, out),
            }
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        let due = |t: Option<Time>| t.is_some_and(|t| now >= t);
        match self.state {
            SenderState::SynSent if due(self.rto_at) => {
                self.rto_count += 1;
                self.retransmits += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            SenderState::Established => {
                // The probe timer is never later than the RTO; when both are due it goes first.
                if due(self.pto_at) {
                    self.send_probe(now, out);
                } else if due(self.rto_at) {
                    self.on_rto(now, out);
                } else if due(self.er_at) {
                    self.er_at = None;
                    if !self.in_recovery && self.loss_point.is_none() {
                        self.enter_recovery(now, 0, out);
                    }
                    self.send_loop(now, out);
                } else if due(self.rack_at) {
                    self.rack_at = None;
                    let marked = self.rack_detect(now);
                    if marked > 0 && !self.in_recovery && self.loss_point.is_none() {
                        self.enter_recovery(now, 0, out);
                    }
                    self.send_loop(now, out);
                } else if self.pace_wait && now >= self.pace_next {
                    self.send_loop(now, out);
                } else if due(self.app_wake) {
                    self.app_wake = None;
                    self.send_loop(now, out);
                }
            }
            SenderState::Closed | SenderState::Done | SenderState::SynSent => {}
        }
    }

    fn next_timer(&self) -> Option<Time> {
        if matches!(self.state, SenderState::Closed | SenderState::Done) {
            return None;
        }
        // The earliest armed timer (written out: this runs after every event of the flow).
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) | (None, x) => x,
        };
        let pace = self.pace_wait.then_some(self.pace_next);
        let t = earliest(
            earliest(self.rto_at, self.pto_at),
            earliest(self.rack_at, self.er_at),
        );
        earliest(earliest(t, pace), self.app_wake)
    }

    fn report(&self, r: &mut FlowReport) {
        r.packets_sent += self.packets_sent;
        r.bytes_sent += self.bytes_sent;
        r.retransmits += self.retransmits;
        r.rto_count += self.rto_count;
        r.tlp_probes += self.tlp_probes;
        r.spurious_rtos += self.spurious_rtos;
        r.first_syn = r.first_syn.or(self.first_syn);
        r.completed = r.completed.or(self.completed);
        r.cwnd_bytes = self.st.cwnd;
        r.srtt = self.rtt.srtt();
        r.ecn_reductions += self.ecn_reductions;
    }
}

/// Linux 3.14's tcp_is_cwnd_limited (net/ipv4/tcp_cong.c) in bytes: the window limits the
/// sender when what was in flight before the ACK fills it; or, with GSO (sk_can_gso, as on the
/// hosts of the studies), when less than a third of it is unused (sysctl_tcp_tso_win_divisor 3)
/// and the unused part is under one GSO frame (64 KiB, sk_gso_max_size); or when at most 3
/// segments of it are unused (tcp_max_tso_deferred_mss).
pub fn is_cwnd_limited(in_flight: u64, cwnd: u64, mss: u64) -> bool {
    if in_flight >= cwnd {
        return true;
    }
    let left = cwnd - in_flight;
    (left * 3 < cwnd && left < 65_536) || left <= 3 * mss
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlock;
    use crate::transport::tcp::{TcpConfig, TsoSegs};
    use crate::units::MS;

    const MSS: u64 = 1000;

    /// A NewReno sender of 50 segments.
    fn config(sack: bool, iw: u32) -> TcpConfig {
        TcpConfig {
            mss: MSS as u32,
            iw,
            sack,
            cc: "newreno".into(),
            bytes: Some(50 * MSS),
            ..TcpConfig::default()
        }
    }

    fn established(sack: bool, iw: u32) -> (TcpSender, Vec<Packet>) {
        established_with(config(sack, iw))
    }

    /// A persistent stream's records follow one another byte for byte on the wire (each one's
    /// last segment short, no FIN), and the wire's ACK and SACK edges map back: the SACKs of the
    /// second record find the first record's lost short segment (RFC 6675 IsLost: three
    /// segments SACKed above it), which goes again with its own 500 bytes.
    #[test]
    fn cwnd_limited_follows_linux_3_14() {
        // tcp_cong.c tcp_is_cwnd_limited with MSS 1448, in packets: cwnd 10 is limited with 10
        // in flight; with 7 (3 left, 3*3 < 10) too; with 6 (4 left: 12 >= 10, 4 > 3) not.
        let (mss, seg) = (1448, 1448u64);
        assert!(is_cwnd_limited(10 * seg, 10 * seg, mss));
        assert!(is_cwnd_limited(7 * seg, 10 * seg, mss));
        assert!(!is_cwnd_limited(6 * seg, 10 * seg, mss));
        // cwnd 100: 30 left (43440 B < 64 KiB, 90 < 100) is limited, 40 left (120 >= 100) not;
        // cwnd 300 with 50 left: under a third, but 72400 B is more than a GSO frame.
        assert!(is_cwnd_limited(70 * seg, 100 * seg, mss));
        assert!(!is_cwnd_limited(60 * seg, 100 * seg, mss));
        assert!(!is_cwnd_limited(250 * seg, 300 * seg, mss));
        assert!(is_cwnd_limited(297 * seg, 300 * seg, mss));
    }

    #[test]
    fn persistent_stream_records_are_contiguous_on_the_wire() {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            sack: true,
            cc: "newreno".into(),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::stream(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        s.write(2500, 0, &mut out);
        assert_eq!(out.len(), 1, "only the SYN before the handshake");
        out.clear();
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK,
            ack: 1,
            ..Default::default()
        };
        s.on_packet(&synack, 100, &mut out);
        let wire = |out: &[Packet]| -> Vec<(u64, u32)> { out.iter().map(|p| (p.seq, p.payload)).collect() };
        assert_eq!(wire(&out), [(1, 1000), (1001, 1000), (2001, 500)]);
        assert!(out.iter().all(|p| p.tcp_flags & flags::FIN == 0));
        out.clear();
        s.write(4000, 110, &mut out);
        assert_eq!(
            wire(&out),
            [(2501, 1000), (3501, 1000), (4501, 1000), (5501, 1000)]
        );
        let wire_ack = |s: &mut TcpSender, ack: u64, sack_end: Option<u64>, now: Time| {
            let mut p = Packet {
                kind: Kind::Tcp,
                tcp_flags: flags::ACK,
                ack,
                ts_ecr: 100,
                ..Default::default()
            };
            if let Some(e) = sack_end {
                p.sack[0] = SackBlock { start: 2501, end: e };
                p.n_sack = 1;
            }
            let mut out = vec![];
            s.on_packet(&p, now, &mut out);
            out
        };
        wire_ack(&mut s, 2001, None, 200);
        wire_ack(&mut s, 2001, Some(3501), 201);
        wire_ack(&mut s, 2001, Some(4501), 202);
        let out = wire_ack(&mut s, 2001, Some(5501), 203);
        assert!(s.in_recovery());
        assert_eq!(wire(&out), [(2001, 500)], "the short segment again, nothing else");
        wire_ack(&mut s, 6501, None, 300);
        assert_eq!((s.pipe(), s.state()), (0, SenderState::Established));
        let mut out = vec![];
        s.write(100, 400, &mut out);
        assert_eq!(wire(&out), [(6501, 100)]);
    }

    fn established_with(cfg: TcpConfig) -> (TcpSender, Vec<Packet>) {
        established_at(cfg, 100)
    }

    /// A sender whose SYN left at 0 and whose SYN-ACK arrives at `at` (the first RTT sample).
    fn established_at(cfg: TcpConfig, at: Time) -> (TcpSender, Vec<Packet>) {
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        assert_eq!(out.len(), 1);
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK,
            ack: 1,
            ts_ecr: 0,
            ..Default::default()
        };
        out.clear();
        s.on_packet(&synack, at, &mut out);
        (s, out)
    }

    fn ack(s: &mut TcpSender, ack: u64, sacked: &[(u64, u64)], now: Time) -> Vec<Packet> {
        let mut p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK,
            ack,
            ts_ecr: 100,
            ..Default::default()
        };
        for (k, &(a, b)) in sacked.iter().enumerate() {
            p.sack[k] = SackBlock {
                start: 1 + a * MSS,
                end: 1 + b * MSS,
            };
        }
        p.n_sack = sacked.len() as u8;
        let mut out = vec![];
        s.on_packet(&p, now, &mut out);
        out
    }

    fn segs(out: &[Packet]) -> Vec<u64> {
        out.iter().map(|p| (p.seq - 1) / MSS).collect()
    }

    /// TCP Nice's windows below one segment (Venkataramani et al., OSDI 2002, 3.1): with W < 1
    /// one packet every 1/W RTTs, with nothing else in flight; the Linux prototype (3.2) sends
    /// two every 2/W RTTs below a window of two. The controller is held at W (no Vegas step, no
    /// detector) so that only the sender's rule acts; RTT 100 ms.
    #[test]
    fn nice_windows_below_one_segment_send_one_probe_every_1_over_w_rtts() {
        for (n, w_bytes, wait_rtts) in [(1u64, 250u64, 4u64), (2, 500, 4), (1, 125, 8)] {
            let params = serde_json::json!({
                "alpha": 0.0, "beta": 1000.0, "t": 1.0, "min_cwnd": 0.1, "probe_segments": n
            });
            let (mut s, out) = established_at(
                TcpConfig {
                    mss: MSS as u32,
                    iw: n as u32,
                    cc: "nice".into(),
                    cc_params: params,
                    bytes: Some(100 * MSS),
                    ..TcpConfig::default()
                },
                100 * MS,
            );
            assert_eq!(out.len() as u64, n);
            (s.st.cwnd, s.st.ssthresh) = (w_bytes, w_bytes);
            // Each probe's ACK returns one RTT after it left; the next probe leaves 1/W RTTs
            // (2/W for pairs) after the previous one, and not a nanosecond before.
            let mut sent_at = 100 * MS;
            for k in 1..=3u64 {
                let p = Packet {
                    kind: Kind::Tcp,
                    tcp_flags: flags::ACK,
                    ack: 1 + k * n * MSS,
                    ts_ecr: sent_at,
                    ..Default::default()
                };
                let mut out = vec![];
                s.on_packet(&p, sent_at + 100 * MS, &mut out);
                assert!(out.is_empty(), "round {k}: nothing before the probe time");
                let due = sent_at + wait_rtts * 100 * MS;
                assert_eq!(s.next_timer(), Some(due), "round {k}, {n} x {w_bytes} B");
                s.on_timer(due - 1, &mut out);
                assert!(out.is_empty());
                s.on_timer(due, &mut out);
                assert_eq!(segs(&out), (k * n..(k + 1) * n).collect::<Vec<_>>());
                sent_at = due;
            }
        }
    }

    #[test]
    fn newreno_limited_transmit_and_fast_retransmit_arithmetic() {
        let (mut s, out) = established(false, 4);
        assert_eq!(segs(&out), vec![0, 1, 2, 3]);
        // RFC 3042: one new segment on each of the first two duplicate ACKs.
        assert_eq!(segs(&ack(&mut s, 1, &[], 200)), vec![4]);
        assert_eq!(segs(&ack(&mut s, 1, &[], 201)), vec![5]);
        assert_eq!(s.cwnd(), 4 * MSS, "limited transmit leaves cwnd alone");
        // Third dup ACK: FlightSize = 6 segments -> ssthresh 3, cwnd = 3 + 3, retransmit 0.
        assert_eq!(segs(&ack(&mut s, 1, &[], 202)), vec![0]);
        assert_eq!((s.ssthresh(), s.cwnd()), (3 * MSS, 6 * MSS));
        assert!(s.in_recovery());
        // Fourth dup ACK inflates cwnd to 7: one new segment (FlightSize 6 -> 7).
        assert_eq!(segs(&ack(&mut s, 1, &[], 203)), vec![6]);
        // Partial ACK of segments 0..2 (2000 B): retransmit 2, cwnd = 7 - 2 + 1 = 6; FlightSize
        // 7 - 2 = 5 segments leaves room for one new segment (7).
        assert_eq!(segs(&ack(&mut s, 1 + 2 * MSS, &[], 300)), vec![2, 7]);
        assert_eq!(s.cwnd(), 6 * MSS);
        // Full ACK (covers recover = 6 segments) of 0..7: FlightSize = 1 segment, so
        // cwnd = min(ssthresh = 3, max(FlightSize, SMSS) + SMSS = 2) segments (RFC 6582 3.2 (6)).
        ack(&mut s, 1 + 7 * MSS, &[], 400);
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd(), 2 * MSS);
    }

    #[test]
    fn stop_ends_new_data_but_not_loss_recovery() {
        let (mut s, out) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 6,
            cc: "newreno".into(),
            stop: Some(150),
            ..TcpConfig::default()
        });
        assert_eq!(
            segs(&out),
            vec![0, 1, 2, 3, 4, 5],
            "before stop: the initial window"
        );
        // After stop an ACK opening the window (slow start: cwnd 6 -> 7, one segment out of
        // the pipe) sends nothing new.
        assert!(ack(&mut s, 1 + MSS, &[], 200).is_empty());
        // Data already sent is still recovered: the third SACK with three segments SACKed
        // above segment 1 makes it lost (RFC 6675 IsLost) and it is retransmitted.
        assert!(ack(&mut s, 1 + MSS, &[(2, 3)], 201).is_empty());
        assert!(ack(&mut s, 1 + MSS, &[(2, 4)], 202).is_empty());
        assert_eq!(segs(&ack(&mut s, 1 + MSS, &[(2, 5)], 203)), vec![1]);
        assert_eq!(s.snd_nxt(), 1 + 6 * MSS, "no new data after stop");
    }

    /// cwnd (segments) after each of `rounds` rounds in which every ACK covers two segments
    /// (a delayed-ACK receiver, no loss), starting from an initial window of 4.
    fn slow_start_rounds(abc: bool, rounds: usize) -> Vec<u64> {
        let (mut s, out) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 4,
            cc: "newreno".into(),
            abc,
            ..TcpConfig::default()
        });
        let mut round_end = out.len() as u64;
        let mut acked = 0;
        let mut cwnds = vec![];
        for _ in 0..rounds {
            while acked + 2 <= round_end {
                acked += 2;
                ack(&mut s, 1 + acked * MSS, &[], 200 + acked);
            }
            cwnds.push(s.cwnd() / MSS);
            round_end = (s.snd_nxt() - 1) / MSS;
        }
        cwnds
    }

    #[test]
    fn slow_start_growth_per_rtt_with_delayed_acks() {
        // ns-2 (tcp.cc TcpAgent::opencwnd, cwnd_ += 1 per new ACK): with one ACK per two
        // segments the window grows 1.5x per RTT: 4 -> 6 -> 9 -> 13 (9 segments: 4 ACKs
        // of two, the ninth segment's ACK falls in the next round).
        assert_eq!(slow_start_rounds(false, 3), vec![6, 9, 13]);
        // RFC 3465 byte counting (L = 2 SMSS): the window doubles per RTT.
        assert_eq!(slow_start_rounds(true, 3), vec![8, 16, 32]);
    }

    /// A paced sender after a handshake whose SYN-ACK came back at 100 ms (SRTT 100 ms).
    fn paced(iw: u32, tso_segs: Option<u32>) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            mss: 1448,
            iw,
            cc: "newreno".into(),
            pacing: true,
            tso_segs: TsoSegs(tso_segs),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK,
            ack: 1,
            ts_ecr: 0,
            ..Default::default()
        };
        out.clear();
        s.on_packet(&synack, 100 * MS, &mut out);
        (s, out)
    }

    #[test]
    fn pacing_spreads_the_initial_window_at_twice_cwnd_per_srtt() {
        // Linux tcp_update_pacing_rate: in slow start (cwnd < ssthresh / 2) the rate is 200% of
        // cwnd / SRTT = 2 * 14480 B / 0.1 s = 289600 B/s; tcp_tso_autosize: 289600 >> 10 = 282
        // bytes, under one MSS, so the minimum of 2 segments per burst. Each 2 x 1500 B burst
        // then holds the next back by 3000 / 289600 s = 10.359 ms.
        let (mut s, out) = paced(10, None);
        assert_eq!(out.len(), 2, "one burst of tcp_min_tso_segs");
        let gap = (3000u128 * SEC as u128).div_ceil(289_600) as Time;
        let mut t = 100 * MS;
        let mut bursts = vec![out.len()];
        while bursts.iter().sum::<usize>() < 10 {
            let due = s.next_timer().expect("a pacing wake-up");
            assert_eq!(due, t + gap, "next burst one gap later");
            t = due;
            let mut out = vec![];
            s.on_timer(t, &mut out);
            bursts.push(out.len());
        }
        assert_eq!(bursts, vec![2; 5], "the initial window in five bursts");
        // The window is used up: the wake-up after the last burst sends nothing, and then only
        // the retransmission timer is left.
        let mut out = vec![];
        s.on_timer(t + gap, &mut out);
        assert!(out.is_empty());
        assert_eq!(
            s.next_timer(),
            Some(100 * MS + s.rto()),
            "RTO armed by the first burst"
        );
    }

    #[test]
    fn pacing_bursts_autosize_to_a_millisecond_capped_at_64_kb() {
        // Congestion avoidance (ssthresh below cwnd): 120% of 2000 x 1448 B / 0.1 s = 34.75 MB/s;
        // 2^-10 s of it is 33935 B = 23 segments of 1448 B (tcp_tso_autosize).
        let (mut s, _) = paced(2000, None);
        s.st.ssthresh = 1000 * 1448;
        let p = s.pacing.unwrap();
        assert_eq!(s.pacing_burst(&p).map(|b| b.0), Some(23));
        // At ten times the window the burst stops at gso_max_size: 65535 / 1448 = 45 segments.
        s.st.cwnd *= 10;
        assert_eq!(s.pacing_burst(&p).map(|b| b.0), Some(45));
        // A fixed burst size overrides the autosizing.
        let (s, out) = paced(10, Some(4));
        assert_eq!(out.len(), 4);
        assert_eq!(s.pacing_burst(&s.pacing.unwrap()).map(|b| b.0), Some(4));
    }

    #[test]
    fn prr_sends_one_segment_per_two_delivered_after_a_single_loss() {
        // RFC 6937 section 3 with Reno (ssthresh = FlightSize / 2): 20 segments out, segment 0
        // lost, then one SACK per segment 1..19. The first two SACKs each let one new segment
        // out (pipe falls below cwnd: limited transmit), so the third, which starts recovery,
        // finds FlightSize 22: ssthresh = 11 segments, RecoverFS = 22. While pipe > ssthresh,
        // sndcnt = ceil(prr_delivered x 11 / 22) - prr_out: the entry ACK (1 segment
        // delivered) sends the retransmission, then the ACKs alternate between nothing and one
        // new segment.
        let cfg = |prr| TcpConfig {
            mss: MSS as u32,
            iw: 20,
            cc: "newreno".into(),
            prr,
            ..TcpConfig::default()
        };
        let (mut s, out) = established_with(cfg(true));
        assert_eq!(out.len(), 20);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 2)], 200)), vec![20]);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 3)], 201)), vec![21]);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 4)], 202)), vec![0]);
        assert_eq!(s.ssthresh(), 11 * MSS);
        // Pipe (19 after the retransmission) falls by one segment per two ACKs. At the 14th
        // ACK it reaches ssthresh and the reduction bound takes over: sndcnt = min(ssthresh -
        // pipe, max(prr_delivered - prr_out, DeliveredData) + MSS): 0 at pipe 11, then 1.
        let sent: Vec<usize> = (5..=20)
            .map(|k| ack(&mut s, 1, &[(1, k)], 200 + k).len())
            .collect();
        assert_eq!(sent, [[0, 1].repeat(6), vec![0, 0, 1, 1]].concat());
        // Recovery ends with pipe = ssthresh = 11 segments, having sent 9.
        assert_eq!(s.pipe(), 11 * MSS);
        assert_eq!(s.retransmits() + (s.snd_nxt() - 1) / MSS - 22, 9);
        // Without PRR (RFC 6675: cwnd = ssthresh at once) nothing goes out until pipe has
        // fallen from 19 to below 11, then one segment per ACK.
        let (mut s, _) = established_with(cfg(false));
        for k in 2..=4 {
            ack(&mut s, 1, &[(1, k)], 200 + k);
        }
        let sent: Vec<usize> = (5..=20)
            .map(|k| ack(&mut s, 1, &[(1, k)], 200 + k).len())
            .collect();
        assert_eq!(sent, [vec![0; 8], vec![1; 8]].concat());
    }

    /// A Linux-profile sender (RACK, TLP, PRR; MSS 1000) of `segments` segments whose
    /// handshake took 100 ms; its initial window leaves at 100 ms.
    fn linux_sender(segments: u64, iw: u32) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw,
            cc: "newreno".into(),
            bytes: Some(segments * MSS),
            prr: true,
            rack: true,
            tlp: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK,
            ack: 1,
            ..Default::default()
        };
        out.clear();
        s.on_packet(&synack, 100 * MS, &mut out);
        (s, out)
    }

    /// An ACK at `now_ms` echoing a segment sent at `ecr_ms`.
    fn ack_ms(s: &mut TcpSender, una: u64, sacked: &[(u64, u64)], now_ms: u64, ecr_ms: u64) -> Vec<Packet> {
        let mut p = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK,
            ack: 1 + una * MSS,
            ts_ecr: ecr_ms * MS,
            ..Default::default()
        };
        for (k, &(a, b)) in sacked.iter().enumerate() {
            p.sack[k] = SackBlock {
                start: 1 + a * MSS,
                end: 1 + b * MSS,
            };
        }
        p.n_sack = sacked.len() as u8;
        let mut out = vec![];
        s.on_packet(&p, now_ms * MS, &mut out);
        out
    }

    #[test]
    fn rack_waits_a_quarter_min_rtt_then_detects_a_lost_retransmission() {
        let (mut s, out) = linux_sender(40, 10);
        assert_eq!(out.len(), 10);
        // Segment 0 is lost. The first SACK (segment 1, sent at 100 ms, delivered at 200 ms)
        // gives RACK.rtt = min_RTT = 100 ms; with one segment SACKed the reordering window is
        // min_RTT / 4 = 25 ms, so segment 0 is only lost at 100 + 100 + 25 = 225 ms: the
        // reordering timer (RFC 8985 6.2).
        let sent = ack_ms(&mut s, 0, &[(1, 2)], 200, 100);
        assert_eq!(segs(&sent), vec![10], "the SACK frees room for new data");
        assert_eq!(s.next_timer(), Some(225 * MS));
        // A third SACKed segment makes the window 0 (DupThresh reached): segment 0 is lost now.
        ack_ms(&mut s, 0, &[(1, 3)], 201, 100);
        let sent = ack_ms(&mut s, 0, &[(1, 4)], 202, 100);
        assert!(s.in_recovery());
        assert_eq!(segs(&sent)[0], 0, "retransmitted at 202 ms");
        // The retransmission is lost too. SACKs of the rest of the first flight (sent at
        // 100 ms, before the retransmission) say nothing about it; the new data sent in
        // recovery (from 203 ms on) does: once a segment sent after 202 ms is SACKed, segment
        // 0's retransmission is overdue by RACK.rtt and is sent again, with no RTO.
        for k in 5..=10 {
            ack_ms(&mut s, 0, &[(1, k)], 198 + k, 100);
        }
        assert_eq!(s.retransmits(), 1);
        let mut again = None;
        for (n, k) in (11..=16).enumerate() {
            let sent = ack_ms(&mut s, 0, &[(1, k)], 303 + n as u64, 203);
            if segs(&sent).contains(&0) {
                again = Some(303 + n as u64);
                break;
            }
        }
        assert!(again.is_some(), "the lost retransmission is detected by RACK");
        assert_eq!((s.retransmits(), s.rto_count()), (2, 0));
    }

    #[test]
    fn tail_loss_probe_turns_a_tail_loss_into_fast_recovery() {
        // RFC 8985 section 7: the last two segments of a 10-segment transfer are lost. The ACK
        // of the first eight at 200 ms leaves two in flight: PTO = 2 SRTT = 200 ms, earlier than
        // the RTO (SRTT 100 ms + 4 x RTTVAR 37.5 ms = 250 ms). The probe retransmits the last
        // segment; its SACK shows segment 8 lost to RACK, which repairs it in fast recovery.
        let (mut s, out) = linux_sender(10, 10);
        assert_eq!(out.len(), 10);
        assert!(ack_ms(&mut s, 8, &[], 200, 100).is_empty());
        assert_eq!(s.next_timer(), Some(400 * MS));
        let mut probe = vec![];
        s.on_timer(400 * MS, &mut probe);
        assert_eq!(segs(&probe), vec![9], "the probe: the last segment again");
        assert_eq!(s.tlp_probes(), 1);
        let repair = ack_ms(&mut s, 8, &[(9, 10)], 500, 400);
        assert!(s.in_recovery());
        assert_eq!(segs(&repair), vec![8]);
        ack_ms(&mut s, 10, &[], 600, 500);
        assert_eq!(s.state(), SenderState::Done);
        assert_eq!(s.rto_count(), 0);
        // Without TLP the same tail waits for the RTO at 450 ms.
        let (mut s, _) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 10,
            cc: "newreno".into(),
            bytes: Some(10 * MSS),
            ..TcpConfig::default()
        });
        ack(&mut s, 1 + 8 * MSS, &[], 200);
        assert_eq!(s.tlp_probes(), 0);
        assert_eq!(s.next_timer(), Some(200 + s.rto()));
    }

    #[test]
    fn a_retransmission_of_the_head_restarts_the_timer_as_linux_does() {
        // Linux tcp_xmit_retransmit_queue re-arms the retransmission timer to a full RTO when
        // it retransmits the head; RFC 6298 (5.3) restarts a running timer only on an ACK of new
        // data, so there the timer armed when the window left at 100 still runs.
        for (rearm, from) in [(false, 100), (true, 202)] {
            let (mut s, _) = established_with(TcpConfig {
                rto_rearm: rearm,
                ..config(true, 4)
            });
            ack(&mut s, 1, &[(1, 2)], 200);
            ack(&mut s, 1, &[(1, 3)], 201);
            assert_eq!(segs(&ack(&mut s, 1, &[(1, 4)], 202)), vec![0]);
            assert_eq!(s.next_timer(), Some(from + s.rto()), "rto_rearm {rearm}");
        }
    }

    #[test]
    fn impatient_timer_restarts_on_the_first_partial_ack_of_a_sack_recovery_only() {
        // Segments 0, 2 and 4 of ten are lost. RFC 6298 5.3 (ns-2 Sack1, partial_ack_ false:
        // newtimer on every partial ACK) restarts the timer on each ACK of new data; RFC 6582
        // 3.2 step 5 ("impatient", as ns-3's TcpSocketBase also runs it with SACK) only on the
        // first partial ACK of the recovery, so the second leaves it where the first set it.
        for impatient in [false, true] {
            let (mut s, _) = established_with(TcpConfig {
                impatient,
                ..config(true, 10)
            });
            ack(&mut s, 1, &[(1, 2)], 200);
            ack(&mut s, 1, &[(1, 2), (3, 4)], 201);
            assert_eq!(segs(&ack(&mut s, 1, &[(1, 2), (3, 4), (5, 6)], 202)), vec![0]);
            assert!(s.in_recovery());
            ack(&mut s, 1, &[(1, 2), (3, 4), (5, 7)], 203);
            ack(&mut s, 1 + 2 * MSS, &[(3, 4), (5, 8)], 300);
            let first = 300 + s.rto();
            assert_eq!(s.next_timer(), Some(first), "impatient {impatient}");
            ack(&mut s, 1 + 4 * MSS, &[(5, 9)], 301);
            assert!(s.in_recovery(), "a partial ACK");
            let expect = if impatient { first } else { 301 + s.rto() };
            assert_eq!(s.next_timer(), Some(expect), "impatient {impatient}");
        }
    }

    #[test]
    fn rto_sack_reset_resends_sacked_data_in_order_as_ns2_sack1() {
        // Four segments, 0 and 2 lost: two duplicate ACKs SACK 1 and 3, too few for a fast
        // retransmit, so the timer expires and segment 0 goes again. Its ACK acknowledges 0-1
        // and SACKs 3. RFC 6675 5.1 keeps the SACK information: only the hole, 2, is resent.
        // ns-2's Sack1 has cleared its scoreboard and ignores that ACK's blocks: 2 and 3 go
        // again in order (go-back-N from snd_una).
        for (reset, expect) in [(false, vec![2]), (true, vec![2, 3])] {
            let (mut s, _) = established_with(TcpConfig {
                rto_sack_reset: reset,
                bytes: Some(4 * MSS),
                ..config(true, 4)
            });
            ack(&mut s, 1, &[(1, 2)], 200);
            ack(&mut s, 1, &[(1, 2), (3, 4)], 201);
            assert!(!s.in_recovery());
            let at = s.next_timer().expect("the retransmission timer");
            let mut out = vec![];
            s.on_timer(at, &mut out);
            assert_eq!(segs(&out), vec![0], "rto_sack_reset {reset}");
            let after = ack(&mut s, 1 + 2 * MSS, &[(3, 4)], at + 100);
            assert_eq!(segs(&after), expect, "rto_sack_reset {reset}");
        }
    }

    #[test]
    fn nagle_holds_a_short_tail_while_data_is_outstanding() {
        // ns-2 tcp-full.cc foutput (nodelay_ false): a segment shorter than maxseg_ goes when
        // nothing is outstanding (quiet), not while the first three are unacknowledged.
        for nagle in [false, true] {
            let (mut s, out) = established_with(TcpConfig {
                bytes: Some(3 * MSS + 100),
                nagle,
                ..config(true, 4)
            });
            let sizes: Vec<u32> = out.iter().map(|p| p.payload).collect();
            if !nagle {
                assert_eq!(sizes, [MSS as u32, MSS as u32, MSS as u32, 100]);
                continue;
            }
            assert_eq!(sizes, [MSS as u32; 3]);
            assert!(
                ack(&mut s, 1 + 2 * MSS, &[], 200).is_empty(),
                "one segment still out"
            );
            let out = ack(&mut s, 1 + 3 * MSS, &[], 201);
            assert_eq!(out.iter().map(|p| p.payload).collect::<Vec<_>>(), [100]);
        }
    }

    #[test]
    fn sack_recovery_entry_and_pipe() {
        let (mut s, out) = established(true, 4);
        assert_eq!(segs(&out), vec![0, 1, 2, 3]);
        // SACKed segments leave the pipe, which lets new data out (limited transmit).
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 2)], 200)), vec![4]);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 3)], 201)), vec![5]);
        // Third SACK: 3 segments SACKed above 0 -> IsLost(0); FlightSize 6 -> ssthresh = cwnd = 3;
        // retransmit 0; pipe = segments 4, 5 + the retransmission = 3: nothing more.
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 4)], 202)), vec![0]);
        assert_eq!((s.ssthresh(), s.cwnd(), s.pipe()), (3 * MSS, 3 * MSS, 3 * MSS));
        // SACK of 4: pipe 2 -> one new segment.
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 5)], 203)), vec![6]);
        // Cumulative ACK past RecoveryPoint (6 segments): recovery ends, cwnd = ssthresh.
        ack(&mut s, 1 + 6 * MSS, &[], 300);
        assert!(!s.in_recovery());
        assert_eq!(s.cwnd(), 3 * MSS);
    }

    #[test]
    fn limited_transmit_is_left_out_of_the_halved_flight_size() {
        // RFC 5681 3.2 step 2: data sent by limited transmit does not count in the FlightSize
        // the third duplicate ACK halves; RFC 6675 5 applies the same rule with SACK.
        let lt = |sack| {
            established_with(TcpConfig {
                lt_excluded: true,
                ..config(sack, 4)
            })
        };
        // NewReno: segments 4 and 5 go on the first two duplicate ACKs; the third finds
        // FlightSize 6, 4 without them: ssthresh = max(4 / 2, 2) = 2, cwnd = 2 + 3.
        let (mut s, _) = lt(false);
        assert_eq!(segs(&ack(&mut s, 1, &[], 200)), vec![4]);
        assert_eq!(segs(&ack(&mut s, 1, &[], 201)), vec![5]);
        assert_eq!(segs(&ack(&mut s, 1, &[], 202)), vec![0]);
        assert_eq!((s.ssthresh(), s.cwnd()), (2 * MSS, 5 * MSS));
        // Fourth duplicate ACK: cwnd 6 = FlightSize 6, no room. Partial ACK of 0..2:
        // retransmit 2, cwnd = 6 - 2 + 1 = 5 over FlightSize 4: one new segment (6).
        assert!(segs(&ack(&mut s, 1, &[], 203)).is_empty());
        assert_eq!(segs(&ack(&mut s, 1 + 2 * MSS, &[], 300)), vec![2, 6]);
        // Full ACK of everything: cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS) = 2.
        ack(&mut s, 1 + 7 * MSS, &[], 400);
        assert_eq!(s.cwnd(), 2 * MSS);
        // SACK: the segments the first two SACKs let out (4, 5) leave the same 4 segments:
        // ssthresh = cwnd = 2 with pipe 3 (4, 5 and the retransmission of 0).
        let (mut s, _) = lt(true);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 2)], 200)), vec![4]);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 3)], 201)), vec![5]);
        assert_eq!(segs(&ack(&mut s, 1, &[(1, 4)], 202)), vec![0]);
        assert_eq!((s.ssthresh(), s.cwnd(), s.pipe()), (2 * MSS, 2 * MSS, 3 * MSS));
        assert!(segs(&ack(&mut s, 1, &[(1, 5)], 203)).is_empty());
        // A new advance clears the count: a later loss halves the whole FlightSize.
        ack(&mut s, 1 + 6 * MSS, &[], 300);
        assert!(!s.in_recovery());
    }

    #[test]
    fn ecn_reduces_once_per_window_and_sets_cwr() {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            ecn: true,
            cc: "newreno".into(),
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        assert_eq!(out[0].tcp_flags, flags::SYN | flags::ECE | flags::CWR);
        assert_eq!(out[0].ecn, Ecn::NotEct);
        out.clear();
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK | flags::ECE,
            ack: 1,
            ..Default::default()
        };
        s.on_packet(&synack, 100, &mut out);
        assert!(s.ecn_negotiated());
        assert!(out
            .iter()
            .all(|p| p.ecn == Ecn::Ect0 && p.tcp_flags & flags::CWR == 0));
        let mut a = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK | flags::ECE,
            ack: 1 + MSS,
            ..Default::default()
        };
        out.clear();
        s.on_packet(&a, 200, &mut out);
        // FlightSize 9 segments -> ssthresh 4.5 segments; the first new segment carries CWR.
        assert_eq!(s.ecn_reductions(), 1);
        assert_eq!(s.cwnd(), 4500);
        assert!(
            out.is_empty(),
            "cwnd below FlightSize: nothing sent, and no retransmission"
        );
        for k in 2..10 {
            a.ack = 1 + k * MSS;
            s.on_packet(&a, 200 + k, &mut out);
        }
        assert_eq!(s.ecn_reductions(), 1, "one reduction per window");
        let first_new = out.iter().find(|p| p.payload > 0).unwrap();
        assert_ne!(first_new.tcp_flags & flags::CWR, 0);
        assert_eq!(out.iter().filter(|p| p.tcp_flags & flags::CWR != 0).count(), 1);
        assert_eq!(s.retransmits(), 0);
        // ACK beyond the data outstanding at the reduction: a new ECE reduces again.
        a.ack = 1 + 11 * MSS;
        s.on_packet(&a, 400, &mut out);
        assert_eq!(s.ecn_reductions(), 2);
    }

    fn frto_sender(frto: bool) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            cc: "newreno".into(),
            bytes: Some(40 * MSS),
            frto,
            ..TcpConfig::default()
        };
        let (s, out) = established_at(cfg, 100 * MS);
        assert_eq!(out.len(), 10);
        // SRTT 100 ms, RTTVAR 50 ms: RTO 300 ms, due at 400 ms.
        assert_eq!(s.next_timer(), Some(400 * MS));
        (s, out)
    }

    fn fire_rto(s: &mut TcpSender) -> Vec<Packet> {
        let mut out = vec![];
        s.on_timer(400 * MS, &mut out);
        assert_eq!(s.rto_count(), 1);
        out
    }

    #[test]
    fn a_spurious_timeout_is_undone_by_the_timestamp_echo() {
        // A delay spike: the ACK of the first two original segments arrives after the RTO
        // retransmitted segment 0. It echoes the originals' timestamp (100 ms), older than the
        // retransmission (400 ms): the timeout was spurious (RFC 3522; Linux tcp_try_undo_loss
        // via tcp_packet_delayed). cwnd and ssthresh come back (cwnd 10, grown by the 2 acked
        // segments in slow start to 12) and nothing else is resent: 8 segments in flight leave
        // room for 4 new ones.
        let (mut s, _) = frto_sender(true);
        assert_eq!(segs(&fire_rto(&mut s)), vec![0]);
        let out = ack_ms(&mut s, 2, &[], 450, 100);
        assert_eq!(s.spurious_rtos(), 1);
        assert_eq!(segs(&out), vec![10, 11, 12, 13]);
        assert_eq!((s.cwnd(), s.ssthresh()), (12 * MSS, u64::MAX));
        // Without undo the same ACK starts go-back-N: cwnd 1 + 2 in slow start, segments 2-4
        // resent though they were never lost.
        let (mut s, _) = frto_sender(false);
        fire_rto(&mut s);
        assert_eq!(segs(&ack_ms(&mut s, 2, &[], 450, 100)), vec![2, 3, 4]);
        assert_eq!(s.spurious_rtos(), 0);
    }

    #[test]
    fn a_loss_after_an_undone_timeout_reduces_the_window() {
        // The timeout of the flow's first loss is undone while ssthresh is still infinite
        // (tcp_init_undo saved it so; tcp_undo_cwnd_reduction restores it), and a real loss
        // follows before snd_una passes the data sent before the timeout. tcp_try_undo_loss
        // returned the connection to Open, so tcp_enter_recovery reduces the window
        // (tcp_init_cwnd_reduction: ssthresh from the controller, Reno's half of cwnd 12), and
        // recovery ends at that ssthresh (tcp_end_cwnd_reduction, which never sets cwnd to an
        // infinite ssthresh).
        let (mut s, _) = frto_sender(true);
        fire_rto(&mut s);
        ack_ms(&mut s, 2, &[], 450, 100);
        assert_eq!((s.cwnd(), s.ssthresh()), (12 * MSS, u64::MAX));
        // Segment 2 lost: SACKs of 3-5 start fast recovery.
        ack_ms(&mut s, 2, &[(3, 6)], 500, 150);
        assert!(s.in_recovery);
        assert_eq!(s.ssthresh(), 6 * MSS);
        ack_ms(&mut s, 14, &[], 600, 500);
        assert!(!s.in_recovery);
        assert_eq!((s.cwnd(), s.ssthresh()), (6 * MSS, 6 * MSS));
        assert_eq!(s.spurious_rtos(), 1);
    }

    #[test]
    fn frto_sends_new_data_after_the_first_ack_and_falls_back_on_a_real_loss() {
        // RFC 5682 3.1 (SACK-enhanced, as Linux tcp_process_loss): the whole window was lost.
        // The ACK of the retransmitted segment 0 (echoing the retransmission) advances snd_una
        // without SACK information: step 2.b sends two new segments (cwnd 2) instead of
        // retransmitting 1 and 2. Their SACK without a cumulative advance shows the loss real
        // (step 3.a): conventional recovery resends 1 and 2 (the SACKed segments left the pipe).
        let (mut s, _) = frto_sender(true);
        fire_rto(&mut s);
        assert_eq!(segs(&ack_ms(&mut s, 1, &[], 500, 400)), vec![10, 11]);
        assert_eq!(segs(&ack_ms(&mut s, 1, &[(10, 12)], 600, 500)), vec![1, 2]);
        assert_eq!(s.spurious_rtos(), 0);
        // Conventional RTO recovery resends 1 and 2 at once.
        let (mut s, _) = frto_sender(false);
        fire_rto(&mut s);
        assert_eq!(segs(&ack_ms(&mut s, 1, &[], 500, 400)), vec![1, 2]);
    }

    #[test]
    fn early_retransmit_repairs_a_short_window_after_a_quarter_srtt() {
        // Linux 3.14 with tcp_early_retrans = 2 or 3 (the delayed RFC 5827 early retransmit),
        // as in the kernel's own packetdrill test of 3 segments outstanding: a SACK of the
        // second arrives one RTT (100 ms) after they left; the first is retransmitted SRTT/4 =
        // 25 ms later, long before the RTO.
        let make = |early_retransmit: bool| {
            let cfg = TcpConfig {
                mss: MSS as u32,
                iw: 3,
                cc: "newreno".into(),
                bytes: Some(3 * MSS),
                early_retransmit,
                ..TcpConfig::default()
            };
            let (s, out) = established_at(cfg, 100 * MS);
            assert_eq!(out.len(), 3);
            s
        };
        let mut s = make(true);
        assert!(ack_ms(&mut s, 0, &[(1, 2)], 200, 100).is_empty());
        assert!(ack_ms(&mut s, 0, &[(1, 3)], 200, 100).is_empty());
        assert_eq!(s.next_timer(), Some(225 * MS));
        let mut out = vec![];
        s.on_timer(225 * MS, &mut out);
        assert_eq!(segs(&out), vec![0]);
        assert!(s.in_recovery());
        // Without it, three segments never give DupThresh SACKed segments above the first.
        let mut s = make(false);
        ack_ms(&mut s, 0, &[(1, 2)], 200, 100);
        ack_ms(&mut s, 0, &[(1, 3)], 200, 100);
        assert_eq!(s.next_timer(), Some(400 * MS), "only the RTO is left");
    }
}
