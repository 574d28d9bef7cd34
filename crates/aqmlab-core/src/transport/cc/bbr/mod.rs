//! BBR v1 as Linux net/ipv4/tcp_bbr.c runs it (mainline; Cardwell et al., "BBR:
//! Congestion-Based Congestion Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-
//! congestion-control): a model of the path, the bottleneck bandwidth (windowed maximum of the
//! delivery rate over 10 rounds) and the propagation delay (minimum RTT over 10 s), sets the
//! pacing rate (gain x bandwidth, 1 % below) and the window (gain x BDP + 3 TSO bursts).
//!
//! It runs on the sender's delivery-rate samples ([`RateSample`], Linux tcp_rate.c) through
//! [`CongestionControl::on_rate_sample`], last on every ACK, as Linux's `cong_control` replaces
//! the window reduction of loss recovery. Units as in Linux: windows and counts in segments,
//! bandwidth in segments per microsecond << 24 (`BW_SCALE`), gains in 1/256 (`BBR_SCALE`).
//!
//! * States ([`Mode`]): STARTUP (gains 2/ln 2) until the bandwidth grew less than 25 % in 3
//!   non-app-limited rounds; DRAIN (pacing gain ln 2 / 2) until what is in flight is down to
//!   one BDP; PROBE_BW, cycling the pacing gain through 5/4, 3/4 and six phases of 1, each about
//!   one min RTT long (from a random phase other than 3/4); PROBE_RTT when the min RTT is 10 s
//!   old: the window at 4 segments for 200 ms and a round, then back.
//! * Loss: packet conservation in the first round of recovery, the window restored on exit;
//!   the long-term (policer) estimator: two 4..16-round intervals with over 20 % loss and
//!   consistent rates make BBR use their average for 48 rounds.
//! * ACK aggregation (`extra_acked`): the data ACKed beyond bandwidth x time in an epoch, a
//!   maximum over 5..10 rounds, added to the window once the pipe is full.
//!
//! Not modelled: the restart after idle (`CA_EVENT_TX_START`: no idle periods within the
//! sender's ACK clock here), the undo of a spurious recovery (`bbr_undo_cwnd`), and
//! `is_ack_delayed` (set only for an ACK of less than one MSS). Linux draws the first PROBE_BW
//! phase with prandom; here a hash of the time, which is deterministic per run and differs
//! between flows that enter PROBE_BW apart.

mod aggregation;
mod control;
mod filter;
mod fixed;
mod long_term;

pub(crate) use aggregation::Aggregation;
pub use control::{Bbr, Mode, CWND_MIN_TARGET, DRAIN_GAIN, HIGH_GAIN, INFO, PACING_GAIN};
pub(crate) use control::{
    EXTRA_ACKED_WIN_RTTS, FULL_BW_CNT, FULL_BW_THRESH, MIN_RTT_WIN, PACING_MARGIN_PERCENT, PROBE_RTT_MODE,
    TSO_MAX_BYTES,
};
pub use filter::WindowedMax;
pub use fixed::BBR_UNIT;
pub(crate) use fixed::{bdp, bw_bps, gain_value, in_net_at_edt, rate_bytes_per_sec, BBR_SCALE, BW_UNIT};
