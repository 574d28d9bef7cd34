//! The sender's state: [`TcpSender`]'s fields, and the state of the features each rule file
//! runs (loss recovery's and its options', RACK's and the tail loss probe's, F-RTO's, what
//! waits in its own host). The rules are the `impl TcpSender` blocks of the other files, which
//! use this one; it uses none of them.

use super::counters::Counters;
use super::rate::RateSampler;
use super::records::Records;
use super::timers::Timers;
use crate::packet::Dir;
use crate::transport::cc::{CcState, CongestionControl};
use crate::transport::tcp::accecn::{Feedback, TxCounter};
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::rto::RttEstimator;
use crate::transport::tcp::scoreboard::{Delivered, Scoreboard};
use crate::transport::wire::Pacing;
use crate::units::Time;
use std::rc::Rc;

pub(super) const DUP_THRESH: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderState {
    Closed,
    SynSent,
    Established,
    /// Finite transfer fully acknowledged.
    Done,
}

pub struct TcpSender {
    /// The flow's TCP keys, read where they are used.
    pub(super) cfg: Rc<TcpConfig>,
    pub(super) flow: u32,
    pub(super) dir: Dir,
    /// The MSS and the receive window in bytes.
    pub(super) mss: u64,
    pub(super) rwnd: u64,
    /// TS.Recent (RFC 7323 4.3): the newest TSval of the receiver's segments, echoed on data.
    pub(super) ts_recent: Time,
    /// Exclusive end of the data (1 + bytes) for finite transfers (a persistent stream: of
    /// the data written, in the scoreboard's sequence space).
    pub(super) data_end: Option<u64>,
    /// A persistent stream's records, or a bulk flow's preamble and open data record (None:
    /// one transfer).
    pub(super) records: Option<Box<Records>>,
    /// Where the preamble ends in the scoreboard's sequence space (1: none): new data below it
    /// leaves outside the on periods.
    pub(super) preamble_end: u64,
    /// The application's on periods [start, end), sorted (empty: always on); new data only
    /// within one, and a wake-up at the next start when the sender idles in an off period.
    pub(super) on_periods: Vec<(Time, Time)>,
    /// The time of the last data segment sent (Linux icsk_lsndtime), for the window restart
    /// after idle (RFC 5681 4.1 / Linux tcp_cwnd_restart) and TCP Nice's probes.
    pub(super) last_data_sent: Option<Time>,
    pub(super) cc: Box<dyn CongestionControl>,
    pub(super) st: CcState,
    pub(super) rtt: RttEstimator,
    pub(super) sb: Scoreboard,
    pub(super) state: SenderState,
    /// The ECN feedback negotiated, and the AccECN sender's CE counter s.cep.
    pub(super) feedback: Feedback,
    pub(super) ace: TxCounter,
    pub(super) cwr_pending: bool,
    pub(super) snd_una: u64,
    /// Next new sequence number (HighData + 1).
    pub(super) high_data: u64,
    pub(super) round_end: u64,
    pub(super) recovery: Recovery,
    /// The optional features' state (`None`: off).
    pub(super) prr: Option<Prr>,
    pub(super) rh: Option<RateHalving>,
    pub(super) s1p: Option<Sack1Pipe>,
    pub(super) er: Option<EarlyRetransmit>,
    pub(super) rack: Option<Rack>,
    /// The least RTT sampled (Linux's tcp_min_rtt, tcp_update_rtt_min, whose 300 s window
    /// outlasts a run): an ACK's timestamp echo and its newest delivered segment's send time.
    /// RACK's reordering window and the TSO autosize's min-RTT term read it.
    pub(super) min_rtt: Option<Time>,
    pub(super) tlp: Option<Tlp>,
    pub(super) frto: Option<Frto>,
    /// How the last flight used the window (the `cwnd_limited` rules of 3.16 on).
    pub(super) usage: CwndUsage,
    /// Pacing: its settings, and the earliest time of the next burst (also of TCP Nice's next
    /// probe); a segment the window allows waits for that time on [`Timer::Pace`].
    pub(super) pacing: Option<Pacing>,
    pub(super) pace_next: Time,
    /// What the sender has in its own host below TCP, when its first hop is its host's qdisc
    /// and it counts that (TCP Small Queues, pacing by departure time through the host's fq);
    /// `None`: not counted.
    pub(super) host: Option<HostQueue>,
    /// Delivery-rate sampling, for a rate-based controller only.
    pub(super) rate: Option<RateSampler>,
    /// Windows below this many bytes are sent as probes (the controller's `probe_segments`; 0:
    /// never): see [`Self::probe_due`].
    pub(super) probe_below: u64,
    pub(super) syn_sent: u32,
    pub(super) timers: Timers,
    pub(super) n: Counters,
}

/// The record Linux 3.16 on keep of how the last flight used the window (tcp_cwnd_validate;
/// `usage.rs`): whether the window stopped the recorded pass (is_cwnd_limited), the segments
/// then out (max_packets_out), the snd_nxt until which the record holds (cwnd_usage_seq), and
/// whether a TSO deferral in the current pass held a packet back for the window.
#[derive(Debug, Default)]
pub(super) struct CwndUsage {
    pub(super) stopped: bool,
    pub(super) max_out: u64,
    pub(super) until: u64,
    pub(super) deferred: bool,
}

/// Loss recovery's state: duplicate ACKs, fast recovery (SACK or NewReno), the loss episode
/// of a timeout, and the point before which no further congestion reduction happens.
#[derive(Debug, Default)]
pub(super) struct Recovery {
    pub(super) in_recovery: bool,
    /// Linux's CWR state (`cwr_prr`): an ECN reduction under way, the window lowered by PRR
    /// until snd_una passes `cong_point`.
    pub(super) in_cwr: bool,
    pub(super) dupacks: u32,
    /// New data sent on the duplicate ACKs since the last advance, outside any recovery (RFC
    /// 3042 limited transmit; with SACK, what SACKed segments let out): with `lt_excluded` a
    /// loss halves the FlightSize without it (RFC 5681 3.2, RFC 6675 5).
    pub(super) lt_bytes: u64,
    /// ns-2 Sack1's `timeout_` flag (`rto_sack_reset`): a timeout happened and no new ACK has
    /// arrived since.
    pub(super) timeout_unacked: bool,
    /// ns-2 TCP/Linux (`recovery_exit_sack_clear`): the scoreboard was forgotten at the end of
    /// an episode and the next ACK with SACK blocks rebuilds it.
    pub(super) sack_cleared: bool,
    /// RFC 6675 RecoveryPoint (exclusive).
    pub(super) recovery_point: u64,
    pub(super) rescue_done: bool,
    /// RFC 6582 `recover` (exclusive: the next sequence after the highest sent).
    pub(super) recover: u64,
    pub(super) first_partial: bool,
    /// After an RTO: no fast recovery before snd_una reaches this point.
    pub(super) loss_point: Option<u64>,
    /// No further congestion reduction before snd_una reaches this point.
    pub(super) cong_point: u64,
}

impl Recovery {
    /// In a window reduction, Linux's Recovery or CWR state (tcp_in_cwnd_reduction): PRR counts
    /// what is sent.
    pub(super) fn reducing(&self) -> bool {
        self.in_recovery || self.in_cwr
    }
}

/// RFC 6937 Proportional Rate Reduction (SSRB) in SACK recovery: prr_delivered, prr_out and
/// the divisor of the proportional part (RFC 6937's RecoverFS, or Linux's prior_cwnd:
/// `prr_rule`) in bytes.
#[derive(Debug, Default)]
pub(super) struct Prr {
    pub(super) delivered: u64,
    pub(super) out: u64,
    pub(super) recover_fs: u64,
}

/// ns-2 TCP/Linux rate halving in SACK recovery: its bound on the pipe in bytes (0 = none).
#[derive(Debug, Default)]
pub(super) struct RateHalving {
    pub(super) next: u64,
}

/// ns-2 Sack1's pipe estimate in SACK recovery (`sack1_pipe`), in segments: tcp-sack1.cc
/// dupack_action sets `pipe_ = maxseq_ - highest_ack_ - numdupacks_`, recv decrements it for
/// every ACK of the recovery and once more for a partial ACK (`partial_ack_` false), send_much
/// increments it for every segment it sends and sends while `pipe_ < int(cwnd_)`.
#[derive(Debug, Default)]
pub(super) struct Sack1Pipe {
    pub(super) pipe: i64,
}

/// RFC 5827 early retransmit as Linux 3.14 (tcp_time_to_recover "Trick#6",
/// tcp_pause_early_retransmit), on with SACK and without RACK. Its only state is the delayed
/// recovery start, [`Timer::EarlyRetransmit`].
#[derive(Debug)]
pub(super) struct EarlyRetransmit;

/// RFC 8985 RACK (instead of the DupThresh IsLost rule): the most recently sent delivered
/// segment and its RTT (the minimum RTT is the sender's, [`TcpSender::min_rtt`]).
#[derive(Debug, Default)]
pub(super) struct Rack {
    pub(super) latest: Option<Delivered>,
    pub(super) rtt: Time,
}

/// RFC 8985 section 7 Tail Loss Probe: while a probe is unanswered, the sequence it covers and
/// whether it was a retransmission.
#[derive(Debug, Default)]
pub(super) struct Tlp {
    pub(super) end: Option<u64>,
    pub(super) retx: bool,
}

/// F-RTO and undo: whether F-RTO runs in the current timeout episode, its `high_seq`
/// (sequence), whether the next transmission is new data instead of retransmissions (step
/// 2.b), the window before the episode (cwnd, ssthresh) and the time of its first
/// retransmission.
#[derive(Debug, Default)]
pub(super) struct Frto {
    pub(super) on: bool,
    pub(super) high: u64,
    pub(super) new: bool,
    pub(super) undo: Option<(u64, u64)>,
    pub(super) retrans_stamp: Option<Time>,
}

impl Frto {
    /// The loss episode is over: nothing to undo, F-RTO off.
    pub(super) fn episode_over(&mut self) {
        self.undo = None;
        self.retrans_stamp = None;
        self.on = false;
    }
}

/// A sender whose first hop is its own host's qdisc: the bytes of its packets still in the
/// host, queued, in the driver or being sent, until their TX completion (Linux's
/// `sk_wmem_alloc`), whether TCP Small Queues stopped it (TSQ_THROTTLED), and whether it
/// paces through its host's fq by departure time (Linux SK_PACING_FQ).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct HostQueue {
    pub(super) bytes: u64,
    pub(super) throttled: bool,
    pub(super) edt: bool,
}
