//! TCP data sender (sans-I/O), docs/transports.md 1: three-way handshake opened by the sender,
//! RFC 5681 windows (the growth law itself is the congestion controller's), RFC 3042 limited
//! transmit, RFC 6298 timer, loss recovery by RFC 6675 (SACK, default) or RFC 6582 (NewReno,
//! `sack = false`), go-back-N retransmission in slow start after an RTO keeping the SACK
//! information (RFC 6675 5.1), the RFC 3168 ECN sender and the AccECN sender (RFC 9768).
//!
//! Choices (documented variants):
//! * Handshake: SYN at `start`, retransmitted after the initial RTO with doubling; the first
//!   data segments carry the handshake's final ACK. The SYN-ACK's timestamp echo gives the first
//!   RTT sample. After a retransmitted SYN the initial window is 1 segment (RFC 5681 3.1; Linux
//!   only after more than one retransmission, and not a spurious one: `syn_loss_iw`).
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
//!   new data segment (RFC 3168 feedback only); the mode's codepoint only on new data. With
//!   AccECN (`ecn = "accecn"`, `accecn.rs`) an ACK signals congestion when the ACE counter shows
//!   new CE marks; after a fallback to RFC 3168 feedback the data carry ECT(0). A controller
//!   that needs AccECN (Prague) is replaced by Reno, without ECN, when the handshake does not
//!   negotiate it (tcp_prague.c's `prague-reno`; the kernel's Prague has no RFC 3168 fallback).
//! * RTT samples: now - TSecr of every ACK advancing snd_una (RFC 7323); receive window: the
//!   window the SYN-ACK and the ACKs advertise caps unacknowledged data (`rwnd` before the
//!   SYN-ACK; an ACK older than snd_una or one at it that narrows the window leaves it).
//!
//! Options (each a flow key, off in the `rfc` profile; see the profiles in `profiles.rs`):
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
//!   highest unSACKed segment); a retransmitted probe that repaired a loss reduces the window
//!   once, one shown needless by a D-SACK (`dsack`) or a duplicate ACK does not (7.4).
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
//! * A preamble (`preamble`, iperf3's cookie): a bulk flow's first write as it connects, sent
//!   at once whatever its on periods; two records, the preamble and the open-ended data, which
//!   begins on the next segment boundary of the scoreboard's space as a stream's next record.
//!
//! Modules, in three levels; a file uses only the levels below its own, so no two use each other:
//! * the parts: `records.rs` (persistent streams' records, scoreboard and wire sequence
//!   numbers), `timers.rs` (the [`Timer`]s and their table of deadlines), `rate.rs`
//!   (delivery-rate samples, Linux tcp_rate.c, for a rate-based controller such as BBR),
//!   `counters.rs` (the flow's counters);
//! * `state.rs`: the sender's state, [`TcpSender`]'s fields (an optional feature's state is an
//!   `Option`, `None` = off) and the types of the features' state;
//! * the rules, each file an `impl TcpSender` of one concern over that state: `ack.rs` (the
//!   phases of an ACK that belong to no optional feature: intake, counts, window growth, end of
//!   a transfer, ECN), `send.rs` (transmission: SYN, new data and retransmissions, the window
//!   loop, what the application lets out (on periods, `stop`, Nagle), restart after idle, TCP
//!   Nice's probes), `recovery.rs` (the congestion response, SACK and NewReno fast recovery,
//!   PRR, rate halving, early retransmit, the retransmission timeout), `rack.rs` (RACK loss
//!   detection and the tail loss probe), `frto.rs` (F-RTO and the undo of spurious timeouts),
//!   `pacing.rs` (paced bursts), `rate_control.rs` (the rate sampler's snapshots and a
//!   rate-based controller's turn), `fire.rs` (what each timer does when it fires, and their
//!   re-arming on an ACK), `local.rs` (the host qdisc's verdicts);
//! * `mod.rs`: the composition: the connection (construction, handshake, controller,
//!   configuration shared with the flow's other connections), [`TcpSender::on_ack`]'s phases,
//!   the [`Endpoint`], the accessors for inspection. No other file uses it.
//!
//! An ACK runs these phases in order ([`TcpSender::on_ack`]):
//! 1. intake: cumulative ACK, SACK blocks, DupThresh losses, RTT sample (`ack.rs`);
//! 2. RACK: the latest delivery and the losses it shows (`rack.rs`);
//! 3. TLP: an answered probe and its reduction (`rack.rs`);
//! 4. round start, duplicate-ACK count, ECE count (`ack.rs`);
//! 5. F-RTO and undo, the end of a CWR state (`frto.rs`, `recovery.rs`);
//! 6. the controller's ACK event (DCTCP's alpha), then with `ack_order = "grow_first"` its
//!    window growth (`ack.rs`);
//! 7. a finite transfer done: stop here (`ack.rs`);
//! 8. loss recovery: end of a timeout's episode, SACK or NewReno recovery, PRR, early
//!    retransmit (`recovery.rs`);
//! 9. ECN response (`ack.rs`), with `ack_order = "recovery_first"` the window growth, then a
//!    rate-based controller's sample (`rate_control.rs`), which sets the window afresh;
//! 10. on an advance, the retransmission and probe timers re-armed (`fire.rs`);
//! 11. transmission (`send.rs`), then F-RTO's fall-back to conventional recovery (`frto.rs`).

use super::accecn::{self, Feedback, TxCounter};
use super::config::{AckOrder, RttSample, SmallQueues, SynLossIw, TcpConfig};
use super::scoreboard::Scoreboard;
use crate::packet::{flags, Dir, Kind, Packet};
use crate::packet::{Ecn, EcnMode};
use crate::queue::LocalVerdict;
use crate::record::rows::{CcReport, FlowReport};
use crate::transport::cc::registry::{make_cc, needs_accecn};
use crate::transport::cc::{CcState, CongestionControl, Hystart};
use crate::transport::{Endpoint, Outbox};
use crate::units::Time;
use std::collections::VecDeque;
use std::rc::Rc;

mod ack;
mod counters;
mod fire;
mod frto;
mod local;
mod pacing;
mod rack;
mod rate;
mod rate_control;
mod records;
mod recovery;
mod send;
mod state;
#[cfg(test)]
mod testutil;
mod timers;
mod usage;

use counters::Counters;
use rate::RateSampler;
use records::Records;
use state::{CwndUsage, EarlyRetransmit, Frto, HostQueue, Prr, Rack, RateHalving, Recovery, Sack1Pipe, Tlp};
pub use state::{SenderState, TcpSender};
use timers::{Timer, Timers};

impl TcpSender {
    pub fn new(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<TcpSender, String> {
        TcpSender::shared(Rc::new(cfg.clone()), flow, dir)
    }

    /// A sender reading `cfg`, which the flow's connections may share.
    pub fn shared(cfg: Rc<TcpConfig>, flow: u32, dir: Dir) -> Result<TcpSender, String> {
        let cc = make_cc(&cfg.cc, cfg.mss, cfg.hystart, &cfg.cc_params)?;
        let mss = cfg.mss as u64;
        let data_end = cfg.bytes.map(|b| 1 + b);
        let probe_below = cc.probe_segments() * mss;
        let (sack, rack) = (cfg.sack, cfg.rack && cfg.sack);
        let rate_based = cc.rate_based();
        let pacing = cc.pacing().or(cfg.pacing_params(rate_based));
        let mut sb = Scoreboard::new(mss, data_end);
        if rack {
            sb = sb.with_rack();
        }
        if rate_based {
            sb = sb.with_rate();
        }
        if cfg.lost_rtx_by_order && sack {
            sb = sb.with_rtx_ids();
        }
        if cfg.rtt_sample == RttSample::Linux {
            sb = sb.with_rtt_times();
        }
        let preamble = (cfg.preamble > 0).then(|| Box::new(Records::preamble(cfg.preamble, mss)));
        Ok(TcpSender {
            flow,
            dir,
            mss,
            rwnd: cfg.rwnd_bytes(),
            ts_recent: 0,
            data_end,
            preamble_end: 1 + cfg.preamble.div_ceil(mss) * mss,
            records: preamble,
            on_periods: cfg.on_periods.clone(),
            last_data_sent: None,
            cc,
            st: CcState {
                cwnd: cfg.iw as u64 * mss,
                ssthresh: u64::MAX,
                mss,
                bytes_in_flight: 0,
                in_recovery: false,
                cwnd_limited: true,
                flight_cwnd_limited: true,
                srtt: None,
                abc: cfg.abc,
            },
            rtt: cfg.rtt_estimator(),
            sb,
            state: SenderState::Closed,
            feedback: Feedback::Off,
            ace: TxCounter::default(),
            cwr_pending: false,
            snd_una: 0,
            high_data: 1,
            round_end: 1,
            recovery: Recovery::default(),
            prr: (cfg.prr && sack).then(Prr::default),
            rh: (cfg.rate_halving && sack).then(RateHalving::default),
            s1p: (cfg.sack1_pipe && sack).then(Sack1Pipe::default),
            er: (cfg.early_retransmit && sack && !cfg.rack).then_some(EarlyRetransmit),
            rack: rack.then(Rack::default),
            min_rtt: None,
            tlp: (cfg.tlp && sack).then(Tlp::default),
            frto: cfg.frto.then(Frto::default),
            usage: CwndUsage::default(),
            pacing,
            pace_next: 0,
            host: None,
            rate: rate_based.then(RateSampler::default),
            probe_below,
            syn_sent: 0,
            timers: Timers::default(),
            n: Counters::default(),
            cfg,
        })
    }

    /// A persistent stream: a connection with the flow's settings that carries the records the
    /// application [`write`](Self::write)s (no data until then), never done.
    pub fn stream(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<TcpSender, String> {
        let cfg = TcpConfig {
            bytes: None,
            preamble: 0,
            ..cfg.clone()
        };
        let mut s = TcpSender::shared(Rc::new(cfg), flow, dir)?;
        s.data_end = Some(1);
        s.records = Some(Box::new(Records {
            recs: VecDeque::new(),
            wire_end: 1,
        }));
        Ok(s)
    }

    /// A persistent stream (not a bulk flow's preamble and open record).
    fn is_stream(&self) -> bool {
        self.records.as_ref().is_some_and(|r| !r.open())
    }

    /// The scoreboard's sequence number of wire sequence number `w`.
    pub(super) fn seg_seq(&self, w: u64) -> u64 {
        match self.records.as_deref() {
            // An open record is never acknowledged whole: only a stream reads its data's end.
            Some(r) => r.to_seg(w, self.mss, self.data_end.unwrap_or(u64::MAX)),
            None => w,
        }
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
        self.recovery.in_recovery
    }
    pub fn rto(&self) -> Time {
        self.rtt.rto()
    }
    pub fn ecn_negotiated(&self) -> bool {
        self.feedback != Feedback::Off
    }
    /// The ECN feedback negotiated.
    pub fn feedback(&self) -> Feedback {
        self.feedback
    }

    /// The feedback the SYN asks for.
    fn asked_feedback(&self) -> Feedback {
        match self.cfg.ecn {
            EcnMode::Off => Feedback::Off,
            EcnMode::AccEcn => Feedback::Accurate,
            _ => Feedback::Classic,
        }
    }

    /// The codepoint of new data: `data_ecn`'s if it forces one, else the mode's, ECT(0) for
    /// AccECN fallen back to RFC 3168.
    fn codepoint(&self) -> Ecn {
        if let Some(e) = self.cfg.data_ecn.forced() {
            return e;
        }
        match (self.cfg.ecn, self.feedback) {
            (_, Feedback::Off) => Ecn::NotEct,
            (EcnMode::AccEcn, Feedback::Classic) => Ecn::Ect0,
            (m, _) => m.codepoint(),
        }
    }

    /// The handshake's outcome: the feedback the SYN-ACK grants; a controller that needs
    /// AccECN without it becomes Reno without ECN or its own pacing (tcp_prague.c prague_init).
    fn negotiate(&mut self, synack: u16) {
        self.feedback = accecn::negotiated(self.asked_feedback(), synack);
        if needs_accecn(&self.cfg.cc) && self.feedback != Feedback::Accurate {
            self.feedback = Feedback::Off;
            self.cc = make_cc("reno", self.cfg.mss, Hystart::Off, &serde_json::Value::Null)
                .expect("reno is a controller");
            self.pacing = self.cfg.pacing_params(false);
        }
    }

    /// Holds new data back until `at` (the application hands it over then; `Time::MAX`: not
    /// yet known), as an on period from `at` on. A web server opens its response connection
    /// with the request and releases the response after its think time.
    pub fn release_at(&mut self, at: Time) {
        self.on_periods = vec![(at, Time::MAX)];
        if self.state == SenderState::Established {
            self.timers.arm(Timer::App, at);
        }
    }
    /// The SACK scoreboard (for inspection).
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
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
        // Linux's tcp_in_cwnd_reduction: no growth in Recovery or CWR
        self.st.in_recovery = self.recovery.in_recovery || self.recovery.in_cwr;
        self.st.srtt = self.rtt.srtt();
    }

    /// An ACK in the established state, phase by phase (see the module map above).
    fn on_ack(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        self.n.acks_received += 1;
        // tcp_ack's prior_in_flight: what was in flight before this ACK.
        let prior_flight = self.flight();
        let before = self.rate.is_some().then(|| (self.pipe_segs(), self.st.cwnd));
        let mut a = self.take_ack(pkt, now);
        a.rack_marked = self.rack_on_ack(a.rtt, now);
        self.tlp_on_ack(&a, now);
        self.count_ack(&mut a);
        // F-RTO and undo decide before the window grows (Linux: tcp_fastretrans_alert, then
        // tcp_cong_control). An undo clears every loss mark, RACK's of this ACK too; Linux
        // marks RACK's losses after it (tcp_fastretrans_alert's TCP_CA_Loss case:
        // tcp_process_loss, then tcp_identify_packet_loss), so they are marked again.
        if self.frto_on_ack(a.advanced, pkt.ts_ecr, a.sacked_bytes > 0 || a.dup) {
            a.rack_marked = self.rack_detect(now);
        }
        self.cwr_exit();
        let sample = self.ack_sample(&a, now);
        let delivered = self.newly_delivered(&a);
        self.cc.on_ack_event(&sample, &mut self.st);
        // `ack_order`: Linux 3.x grows before its recovery step, 6.x after it.
        let grow_first = self.cfg.ack_order == AckOrder::GrowFirst;
        if grow_first {
            self.grow_window(&sample, prior_flight, delivered);
        }
        if self.transfer_done(now) {
            if !grow_first {
                self.grow_window(&sample, prior_flight, delivered);
            }
            return;
        }
        self.recover_on_ack(&a, now, out);
        self.ecn_on_ack(&a, now);
        if !grow_first {
            self.grow_window(&sample, prior_flight, delivered);
        }
        if let Some((prior_pipe, cwnd)) = before {
            self.rate_control(&a, prior_pipe, cwnd, now);
        }
        if a.advanced {
            self.rearm_on_ack(now);
        } else if self.cfg.ack_rearm && pkt.ack == self.snd_una {
            self.restart_rto(now);
        }
        self.send_loop(now, out);
        self.frto_after_send(now, out);
    }
}

impl TcpSender {
    /// Whether the SYN's retransmissions leave the initial window at one segment, the SYN-ACK
    /// echoing `ts_ecr` (`syn_loss_iw`).
    fn syn_loss_resets_iw(&self, ts_ecr: Time) -> bool {
        let retries = self.syn_sent.saturating_sub(1);
        match self.cfg.syn_loss_iw {
            SynLossIw::Rfc => retries > 0,
            SynLossIw::Linux3_14 => retries > 1,
            SynLossIw::Linux => retries > 1 && self.n.first_syn != Some(ts_ecr),
        }
    }
}

impl Endpoint for TcpSender {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        if self.state == SenderState::Closed {
            self.state = SenderState::SynSent;
            self.n.first_syn = Some(now);
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
                if pkt.wnd > 0 {
                    self.rwnd = pkt.wnd as u64;
                }
                self.ts_recent = pkt.ts_val;
                self.negotiate(pkt.tcp_flags);
                if now >= pkt.ts_ecr {
                    self.rtt.sample(now - pkt.ts_ecr, self.snd_una, self.high_data);
                }
                self.st.cwnd = if self.syn_loss_resets_iw(pkt.ts_ecr) {
                    self.mss
                } else {
                    self.cfg.iw as u64 * self.mss
                };
                self.timers.stop(Timer::Rto);
                if self.cfg.handshake_ack {
                    self.send_handshake_ack(now, out);
                }
                if self.data_end == Some(1) && self.records.is_none() {
                    self.state = SenderState::Done;
                    self.n.completed = Some(now);
                    return;
                }
                self.send_loop(now, out);
            }
            return;
        }
        if self.state == SenderState::Established && pkt.tcp_flags & flags::ACK != 0 {
            match self.records.as_deref() {
                // The records' ACK and SACK edges in the scoreboard's space.
                Some(_) => {
                    let mut p = *pkt;
                    let (mut blocks, n) = p.sacks();
                    for b in &mut blocks[..n] {
                        b.start = self.seg_seq(b.start);
                        b.end = self.seg_seq(b.end);
                    }
                    p.ack = self.seg_seq(p.ack);
                    p.set_sacks(&blocks[..n]);
                    self.on_ack(&p, now, out);
                }
                None => self.on_ack(pkt, now, out),
            }
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if let Some(t) = self.timers.due(now) {
            self.fire(t, now, out);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        if matches!(self.state, SenderState::Closed | SenderState::Done) {
            return None;
        }
        self.timers.earliest()
    }

    fn report(&self, r: &mut FlowReport) {
        self.n.report(r);
        r.cwnd_bytes = self.st.cwnd;
        r.srtt = self.rtt.srtt();
    }

    fn cc_report(&self, r: &mut CcReport) {
        r.ssthresh = (self.st.ssthresh != u64::MAX).then_some(self.st.ssthresh);
        self.cc.report(r);
    }

    /// A kernel TCP socket hears its host's qdisc; a user-space transport over UDP does not,
    /// nor, here, a persistent stream.
    fn hears_local_verdicts(&self) -> bool {
        !self.cfg.udp_socket && !self.is_stream()
    }

    fn on_local_verdicts(&mut self, refused: &[(Packet, LocalVerdict)], now: Time) {
        self.local_verdicts(refused, now);
    }

    fn at_host(&mut self, edt: bool) -> bool {
        let edt = edt && self.pacing.is_some();
        let small_queues = match self.cfg.small_queues {
            SmallQueues::Off => false,
            // modelled for a sender pacing through its host's fq only
            SmallQueues::Linux => edt,
            SmallQueues::Linux3_14 => true,
        };
        if (edt || small_queues) && self.hears_local_verdicts() {
            self.host = Some(HostQueue {
                edt,
                ..HostQueue::default()
            });
        }
        self.host.is_some()
    }

    fn left_host(&mut self, size: u32, now: Time, out: &mut Outbox) {
        self.host_completion(size, now, out);
    }
}

impl TcpSender {
    /// Fast recoveries entered (loss detected by duplicate ACKs / SACK).
    pub fn fast_recoveries(&self) -> u64 {
        self.n.fast_recoveries
    }
    /// ACKs received with ECE set.
    pub fn ece_acks(&self) -> u64 {
        self.n.ece_acks
    }
    pub fn retransmits(&self) -> u64 {
        self.n.retransmits
    }
    pub fn rto_count(&self) -> u64 {
        self.n.rto_count
    }
    /// Tail loss probes sent.
    pub fn tlp_probes(&self) -> u64 {
        self.n.tlp_probes
    }
    /// Retransmission timeouts found spurious and undone (F-RTO / timestamps).
    pub fn spurious_rtos(&self) -> u64 {
        self.n.spurious_rtos
    }
    pub fn ecn_reductions(&self) -> u64 {
        self.n.ecn_reductions
    }
    /// Window reductions for a local qdisc's verdict (Linux 3.2's tcp_enter_cwr).
    pub fn local_reductions(&self) -> u64 {
        self.n.local_reductions
    }
    /// Time the ACK covering the last data byte arrived (finite transfers).
    pub fn completed(&self) -> Option<Time> {
        self.n.completed
    }
    /// ACKs processed in the established state.
    pub fn acks_received(&self) -> u64 {
        self.n.acks_received
    }
    /// Window restarts after idle.
    pub fn idle_restarts(&self) -> u64 {
        self.n.idle_restarts
    }
}
