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

mod counters;
mod frto;
mod pacing;
mod rack;
mod records;
mod recovery;
mod send;
#[cfg(test)]
mod testutil;
mod timers;

use counters::Counters;
use records::Records;
use timers::{Timer, Timers};

const DUP_THRESH: u32 = 3;

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
    /// RFC 8985 RACK loss detection (instead of the DupThresh IsLost rule): the most recently
    /// sent delivered segment, its RTT, the minimum RTT, and the reordering timer.
    rack: bool,
    rack_latest: Option<Delivered>,
    rack_rtt: Time,
    min_rtt: Option<Time>,
    /// RFC 8985 section 7 Tail Loss Probe: the probe timer, and while a probe is unanswered
    /// the sequence it covers and whether it was a retransmission.
    tlp: bool,
    tlp_end: Option<u64>,
    tlp_retx: bool,
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
    /// RFC 5827 early retransmit as Linux 3.14 (tcp_time_to_recover "Trick#6",
    /// tcp_pause_early_retransmit): the delayed recovery start.
    early_retransmit: bool,
    /// RFC 6937 Proportional Rate Reduction (SSRB) in SACK recovery, with its state:
    /// prr_delivered, prr_out and RecoverFS in bytes.
    prr: bool,
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    /// ns-2 TCP/Linux rate halving and its bound on the pipe in bytes (0 = none).
    rate_halving: bool,
    rh_next: u64,
    /// Pacing: its settings, and the earliest time of the next burst (also of TCP Nice's next
    /// probe); a segment the window allows waits for that time on [`Timer::Pace`].
    pacing: Option<Pacing>,
    pace_next: Time,
    /// Windows below this many bytes are sent as probes (the controller's `probe_segments`; 0:
    /// never): see [`Self::probe_due`].
    probe_below: u64,
    syn_sent: u32,
    timers: Timers,
    n: Counters,
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
            idle_restart: cfg.idle_restart,
            cwnd_limited: cfg.cwnd_limited,
            rto_rearm: cfg.rto_rearm,
            nagle: cfg.nagle,
            last_data_sent: None,
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
            rack: cfg.rack && cfg.sack,
            rack_latest: None,
            rack_rtt: 0,
            min_rtt: None,
            tlp: cfg.tlp && cfg.sack,
            tlp_end: None,
            tlp_retx: false,
            frto: cfg.frto,
            frto_on: false,
            frto_high: 0,
            frto_new: false,
            undo: None,
            retrans_stamp: None,
            early_retransmit: cfg.early_retransmit && cfg.sack && !cfg.rack,
            prr: cfg.prr,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            rate_halving: cfg.rate_halving && cfg.sack,
            rh_next: 0,
            pacing: cfg.pacing_params(),
            pace_next: 0,
            probe_below,
            syn_sent: 0,
            timers: Timers::default(),
            n: Counters::default(),
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
        self.st.in_recovery = self.in_recovery;
        self.st.srtt = self.rtt.srtt();
    }

    fn on_ack(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        self.n.acks_received += 1;
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
            self.n.ece_acks += 1;
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
            self.n.completed = Some(now);
            self.timers.stop(Timer::Rto);
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
                self.timers.stop(Timer::EarlyRetransmit);
            }
            if self.early_retransmit
                && !self.in_recovery
                && !self.timers.armed(Timer::EarlyRetransmit)
                && self.er_ready(now)
            {
                // tcp_pause_early_retransmit: wait max(SRTT/4, 2 ms), unless the RTO is sooner.
                let at = now + (self.rtt.srtt().unwrap_or(0) / 4).max(2 * MS);
                if self.timers.get(Timer::Rto).is_some_and(|r| r <= at) {
                    self.enter_recovery(now, 0, out);
                } else {
                    self.timers.arm(Timer::EarlyRetransmit, at);
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
            self.n.ecn_reductions += 1;
            self.cwr_pending = true;
        }

        // Retransmission timer (RFC 6298 5.2 / 5.3; RFC 6582 impatient variant).
        if advanced {
            if self.sb.outstanding() == 0 {
                self.timers.stop(Timer::Rto);
            } else {
                let impatient = self.in_recovery && (!self.sack || self.impatient);
                if !impatient || self.first_partial {
                    self.timers.arm(Timer::Rto, now + self.rtt.rto());
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
                self.timers.stop(Timer::Rto);
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
    use super::testutil::*;
    use super::*;

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
}
