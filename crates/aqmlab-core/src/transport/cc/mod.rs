//! Congestion controllers behind one sans-I/O trait (docs/transports.md 3).
//!
//! A controller owns only its private state; the window itself lives in [`CcState`], which the
//! TCP sender passes in on every call. All windows are in bytes. The sender calls:
//! * [`CongestionControl::on_ack_event`], then [`CongestionControl::on_ack`], for every ACK that
//!   acknowledges new data or carries new SACK information, with the RTT / one-way-delay
//!   samples the ACK yields and whether it starts a new round (RTT): the first before the ACK's
//!   loss recovery step, the second before or after it as the sender's `ack_order` has it;
//!   growth must be skipped while `st.in_recovery` (delay-based controllers still see the
//!   samples);
//! * [`CongestionControl::on_congestion_event`] once per window on loss (entering fast
//!   recovery) or ECN-Echo; it sets `ssthresh` and `cwnd` (the sender then applies the recovery
//!   algorithm's own adjustments, e.g. NewReno's +3 SMSS inflation);
//! * [`CongestionControl::on_loss_detected`] on a later ACK of that recovery that marks more
//!   segments lost;
//! * [`CongestionControl::on_recovery_exit`] when fast recovery ends;
//! * [`CongestionControl::on_rto`] on a retransmission timeout (the sender then sets cwnd to the
//!   loss window of one SMSS);
//! * [`CongestionControl::on_timeout_exit`] when the timeout's loss episode ends.
//!
//! A controller whose [`CongestionControl::owns_window`] is true keeps cwnd in fast recovery
//! itself: the sender then applies no PRR or NewReno inflation and leaves cwnd as it is when
//! recovery ends (Linux's `cong_control` hook, which tcp_prague.c used).
//!
//! Delay-based controllers (LEDBAT, TCP-LP, Nice) get what they need through [`AckSample`]:
//! `rtt` (now - TSecr), `owd` (the ACK's TSval - TSecr: receiver clock at ACK time minus the
//! sender's send time, i.e. the forward one-way delay plus any ACK delay, as ns-3 LEDBAT uses),
//! and `round_start` for per-RTT decisions; `now` lets them run inference timers.

use crate::params::{self, Group, ParamDoc, Params};
use crate::record::rows::CcReport;
use crate::units::Named;
use crate::units::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod bbr;
pub mod bbr3;
pub mod bictcp;
pub mod cubic;
pub mod cubic_2_6_22;
pub mod dctcp;
pub mod hystart_pp;
pub mod ledbat;
pub mod nice;
pub mod prague;
pub mod registry;
pub mod reno;
pub mod tcp_lp;

/// How the initial slow start may end before a congestion signal (the flow key `hystart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hystart {
    /// Slow start until the first loss or ECN mark.
    Off,
    /// Linux's HyStart (tcp_cubic.c: ACK train and delay increase); CUBIC only.
    Linux,
    /// HyStart++ (RFC 9406, [`hystart_pp::HystartPp`]), for any controller.
    Rfc9406,
}

impl Named for Hystart {
    const ALL: &'static [(&'static str, Hystart)] = &[
        ("off", Hystart::Off),
        ("linux", Hystart::Linux),
        ("rfc9406", Hystart::Rfc9406),
    ];
    const BOOLS: (Hystart, Hystart) = (Hystart::Linux, Hystart::Off);
    const WRITES_BOOLS: bool = false;
    const ABOUT: &'static str = "how slow start may end early";
}

/// The window state a controller reads and writes (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcState {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Sender maximum segment size (payload bytes).
    pub mss: u64,
    /// FlightSize (RFC 5681): bytes sent and not yet cumulatively acknowledged.
    pub bytes_in_flight: u64,
    /// True during fast recovery (no window growth per RFC 5681 / 6675).
    pub in_recovery: bool,
    /// Whether the window limited the sender before this ACK (Linux tcp_is_cwnd_limited, the
    /// TCP key `cwnd_limited`): the ACK-clocked controllers (Reno, CUBIC) grow the window only
    /// then. Always true while the sender's gate is off.
    pub cwnd_limited: bool,
    /// Whether the record of the last flight says the window stopped the sender (Linux's
    /// `tp->is_cwnd_limited` itself, without tcp_is_cwnd_limited's slow-start term: BBRv3's
    /// bbr_probe_inflight_hi_upward and its end of PROBE_UP read it). Where no record is kept,
    /// the same as `cwnd_limited`.
    pub flight_cwnd_limited: bool,
    /// The sender's smoothed RTT, once there is a sample.
    pub srtt: Option<Time>,
    /// RFC 3465 byte counting (the TCP knob `abc`). Off: ns-2's per-ACK rules
    /// (tcp/tcp.cc TcpAgent::opencwnd): slow start +1 SMSS per new ACK whatever it covers,
    /// congestion avoidance +SMSS*SMSS/cwnd per new ACK (windowOption_ 1, increase_num_ 1).
    pub abc: bool,
}

impl CcState {
    /// Slow start (cwnd < ssthresh).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What one ACK tells the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly cumulatively acknowledged by this ACK (0 for a duplicate ACK).
    pub acked_bytes: u64,
    /// Bytes newly SACKed by this ACK.
    pub sacked_bytes: u64,
    /// The controller's RTT sample: now - TSecr of an ACK that advances the cumulative ACK (RFC
    /// 7323 4.1: an out-of-order segment's ACK echoes an older TSval), or with `rtt_sample =
    /// "linux"` the newest segment's the ACK covers (Linux's ca_rtt_us).
    pub rtt: Option<Time>,
    /// Forward one-way delay sample TSval(ACK) - TSecr(ACK), from an ACK that advances the
    /// cumulative ACK.
    pub owd: Option<Time>,
    /// That ACK's TSecr: when the segment whose TSval it echoes was sent (what TCP-LP reads,
    /// as Linux's tcp_lp.c reads `rcv_tsecr`, whichever segment gives `rtt`).
    pub ts_ecr: Option<Time>,
    /// This ACK moved snd_una past the end of the previous round (about once per RTT).
    pub round_start: bool,
    /// snd_una after this ACK, and the next sequence number to send (before what this ACK
    /// lets out).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The ACK carried ECN-Echo (DCTCP counts the bytes such ACKs acknowledge); with AccECN,
    /// it reported new CE marks.
    pub ece: bool,
    /// Packets this ACK newly reports CE-marked (AccECN's ACE counter; 0 otherwise).
    pub ce_segs: u64,
    /// The sender's pacing rate in bytes per second, which Linux keeps on every socket, paced
    /// or not (sk_pacing_rate, tcp_update_pacing_rate); `None` before the first RTT sample and
    /// outside slow start (HyStart reads it, in slow start alone).
    pub pacing_rate: Option<u64>,
    /// Whether the sender paces, by its own timer or through its host's fq (Linux's
    /// sk_pacing_status other than SK_PACING_NONE).
    pub paced: bool,
}

/// What triggered a congestion response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionKind {
    /// Loss detected by duplicate ACKs / SACK (entering fast recovery).
    Loss,
    /// ECN-Echo (RFC 3168), at most once per window.
    Ecn,
}

/// One congestion controller. Sans-I/O: every call receives `now` through its arguments.
pub trait CongestionControl {
    /// The registry name ("newreno", "cubic", ...).
    fn name(&self) -> &'static str;
    /// The ACK's bookkeeping that Linux runs before its loss recovery step (the `in_ack_event`
    /// hook, tcp_ack's tcp_in_ack_event), whatever the sender's `ack_order`: DCTCP's alpha.
    fn on_ack_event(&mut self, _ack: &AckSample, _st: &mut CcState) {}
    /// Per-ACK update (see the module header for when it is called).
    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState);
    /// Multiplicative decrease: set `st.ssthresh` and `st.cwnd` (to the post-reduction window).
    fn on_congestion_event(&mut self, now: Time, kind: CongestionKind, st: &mut CcState);
    /// An ACK during loss recovery marked further segments lost (SACK scoreboard or RACK).
    /// Controllers that respond per detected loss rather than once per window (libutp's
    /// LEDBAT) act here; the others ignore it.
    fn on_loss_detected(&mut self, _now: Time, _st: &mut CcState) {}
    /// End of fast recovery; `st.cwnd` already holds the sender's exit value (RFC 6675: ssthresh;
    /// RFC 6582: min(ssthresh, FlightSize + SMSS)).
    fn on_recovery_exit(&mut self, _now: Time, _st: &mut CcState) {}
    /// The Loss state of a timeout is over (Linux's TCP_CA_Open again): snd_una passed what was
    /// outstanding at the timeout, or the timeout was found spurious and undone (`undone`;
    /// `st.cwnd` already holds the restored window).
    fn on_timeout_exit(&mut self, _undone: bool, _st: &mut CcState) {}
    /// Whether the controller keeps cwnd in fast recovery itself, as a Linux controller with a
    /// `cong_control` hook does (tcp_input.c: `tcp_cong_control` calls the hook in place of
    /// PRR's `tcp_cwnd_reduction`; `tcp_end_cwnd_reduction` returns early for it): the sender
    /// then sets no window on entering recovery, during it or at its end.
    fn owns_window(&self) -> bool {
        false
    }
    /// The controller reads an ACK's deliveries itself, as a Linux `cong_control` hook does
    /// (tcp_prague.c's, tcp_bbr.c's), not through the count `tcp_cong_avoid` is passed: the
    /// sender's `growth_count` leaves its samples as they are.
    fn counts_own_deliveries(&self) -> bool {
        self.owns_window()
    }
    /// Windows below this many segments (0: none, the window test applies) are sent as probes:
    /// with nothing else in flight, this many segments every (this many x SMSS / cwnd) smoothed
    /// RTTs (TCP Nice's sub-packet windows).
    fn probe_segments(&self) -> u64 {
        0
    }
    /// The RTT that spaces those probes (None: the sender's smoothed RTT, TCP Nice's).
    fn probe_rtt(&self) -> Option<Time> {
        None
    }
    /// Whether the controller caps its window at what is in flight plus a margin (RFC 6817
    /// 2.4.2). The sender's TSO deferral (`tso_defer`) then does not hold data back: Linux
    /// counts a deferral as window-limited (tcp_tso_should_defer's `is_cwnd_limited`), which
    /// such a cap cannot see, so the window would stop growing at the deferred flight.
    fn caps_window_by_flight(&self) -> bool {
        false
    }
    /// Retransmission timeout: set `st.ssthresh` (the sender sets cwnd = 1 SMSS afterwards).
    /// `first` is false for a repeated timeout of the same data, where RFC 5681 keeps ssthresh.
    fn on_rto(&mut self, now: Time, first: bool, st: &mut CcState);
    /// A controller that paces itself (Prague): its pacing, in place of the `pacing` keys.
    fn pacing(&self) -> Option<crate::transport::wire::Pacing> {
        None
    }
    /// Rate-based control (Linux's `cong_control`, BBR): true makes the sender keep a
    /// delivery-rate sampler, call [`Self::on_rate_sample`] last on every ACK (after loss
    /// recovery, whose window changes it then overrides) and pace at [`Self::pacing_rate`].
    fn rate_based(&self) -> bool {
        false
    }
    /// The ACK's delivery-rate sample: the controller sets `st.cwnd` itself.
    fn on_rate_sample(&mut self, _rs: &mut RateSample, _st: &mut CcState) {}
    /// A segment this ACK marked lost, before its rate sample (Linux's `skb_marked_lost`):
    /// `tx_in_flight`, `lost` (losses since it was sent, itself included) and
    /// `is_app_limited` describe its flight.
    fn on_segment_lost(&mut self, _rs: &RateSample) {}
    /// The pacing rate in bytes per second (None: the sender's own, from cwnd / SRTT).
    fn pacing_rate(&mut self, _st: &CcState) -> Option<u64> {
        None
    }
    /// Fills in what the controller keeps of [`CcReport`] (the sender sets `ssthresh`).
    fn report(&self, _r: &mut CcReport) {}
}

/// The congestion state of the sender an ACK leaves (Linux icsk_ca_state, the three BBR reads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    /// Fast recovery.
    Recovery,
    /// After a retransmission timeout, until snd_una passes what was outstanding then.
    Loss,
}

/// One ACK's delivery-rate sample (Linux tcp_rate.c `struct rate_sample`), counts in segments
/// as Linux counts packets. `delivered` and `interval` are None for an invalid sample (no
/// timing information, or an interval shorter than the minimum RTT).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateSample {
    pub now: Time,
    /// Segments delivered over `interval` (tp->delivered - prior_delivered).
    pub delivered: Option<u64>,
    /// The longer of the send and ACK phases of the sampled flight.
    pub interval: Option<Time>,
    /// The connection's delivered count when the sampled segment was sent.
    pub prior_delivered: u64,
    pub is_app_limited: bool,
    /// Segments newly (cumulatively or selectively) acknowledged, and newly marked lost.
    pub acked_sacked: u64,
    pub losses: u64,
    /// The connection's totals: segments delivered, and marked lost; the time of the last
    /// delivery (tp->delivered_mstamp).
    pub total_delivered: u64,
    pub total_lost: u64,
    pub delivered_at: Time,
    /// The ACK's RTT sample.
    pub rtt: Option<Time>,
    /// Segments in flight (tcp_packets_in_flight) before this ACK and now.
    pub prior_in_flight: u64,
    pub in_flight: u64,
    /// Of the sampled flight (BBR v3): segments in flight when the sampled segment left,
    /// segments marked lost and delivered CE-marked since; and the segments this ACK reported
    /// CE-marked.
    pub tx_in_flight: u64,
    pub lost: u64,
    pub delivered_ce: u64,
    pub ce: u64,
    /// How long until pacing lets the next segment leave (its departure time minus now).
    pub pace_wait: Time,
    pub ca_state: CaState,
    /// Set by the controller: the sampler marks the data in flight application-limited
    /// (BBR's PROBE_RTT, so that its low-rate samples are ignored).
    pub mark_app_limited: bool,
}

/// What a controller is built with besides its `cc_params`: the sender's segment size and
/// how its slow start may end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcContext {
    /// Sender maximum segment size (payload bytes).
    pub mss: u64,
    /// `Hystart::Linux` applies to CUBIC only.
    pub hystart: Hystart,
}

/// A built controller with its resolved `cc_params` (every default written out), or an error
/// naming the key.
pub type CcBuild = Result<(Box<dyn CongestionControl>, Value), String>;

/// A registry entry (`registry.rs`): how to build a controller from a flow's `cc` and
/// `cc_params`, as [`crate::queue::QdiscInfo`] is a discipline's.
pub struct CcInfo {
    /// The flow key `cc`'s value.
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
    /// Its `cc_params` keys: one typed struct (see [`crate::params`]; [`NoParams`] for none).
    pub params: &'static [Group],
    /// It runs only over AccECN feedback (RFC 9768), as Linux's controllers whose `flags` hold
    /// TCP_CONG_NEEDS_ACCECN (net/ipv4/tcp_prague.c). A flow that names it negotiates AccECN
    /// without an `ecn` key, is refused with another `ecn`, and falls back to Reno without ECN
    /// when the handshake does not grant AccECN (tcp_prague.c `prague_init`, its `prague-reno`).
    pub needs_accecn: bool,
    /// Builds the controller and returns it with its resolved parameters.
    pub build: fn(&Value, &CcContext) -> CcBuild,
}

impl CcInfo {
    /// Every key its `cc_params` table accepts.
    pub fn keys(&self) -> Vec<&'static str> {
        params::group_keys(self.params)
    }

    /// Every key with its help, in the order `aqmlab list ccs NAME` prints them.
    pub fn docs(&self) -> Vec<ParamDoc> {
        params::group_docs(self.params)
    }
}

/// The `cc_params` of a controller that has none: an empty table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

impl Params<()> for NoParams {}

/// The constructor's result for a controller without parameters: `cc` with its resolved, empty,
/// table (`table` must be JSON null or a table without keys; the registry's key check names any).
pub fn without_params(table: &Value, cc: Box<dyn CongestionControl>) -> CcBuild {
    let (NoParams {}, resolved) = read_params(table)?;
    Ok((cc, resolved))
}

/// Reads a controller's parameters `T` from its `cc_params` table (JSON null or a table) over
/// `T`'s defaults, then `T`'s checks (`Params::finish`); returns them with the resolved table.
pub fn read_params<T: Params<()> + Default>(table: &Value) -> Result<(T, Value), String> {
    let p = params::read(table, T::default(), &())?;
    let resolved = params::written(&p);
    Ok((p, resolved))
}

/// RFC 5681 slow start with RFC 3465 appropriate byte counting, limit L = 2*SMSS: cwnd grows by
/// min(acked, L), not beyond ssthresh. Without byte counting (`st.abc` off) one ACK grows cwnd
/// by at most one SMSS (ns-2 tcp/tcp.cc TcpAgent::opencwnd: `cwnd_ += 1` per new ACK).
/// Returns the acked bytes left over once cwnd reached ssthresh (to be used by congestion
/// avoidance, as Linux does).
pub fn slow_start(st: &mut CcState, acked: u64) -> u64 {
    let inc = acked.min(if st.abc { 2 * st.mss } else { st.mss });
    let room = st.ssthresh.saturating_sub(st.cwnd);
    if inc <= room {
        st.cwnd += inc;
        0
    } else {
        st.cwnd += room;
        acked - room
    }
}

/// An ACK for unit tests: at `now`, one 1000-byte segment newly acknowledged, sent `rtt` ago,
/// whose one-way delay measured `owd`.
#[cfg(test)]
pub(crate) fn test_ack(now: Time, owd: Time, rtt: Time) -> AckSample {
    AckSample {
        now,
        acked_bytes: 1000,
        owd: Some(owd),
        rtt: Some(rtt),
        ts_ecr: Some(now - rtt),
        ..Default::default()
    }
}

/// A controller's state for unit tests: the window, ssthresh and flight in bytes, 1000-byte
/// segments, byte counting on, out of recovery.
#[cfg(test)]
pub(crate) fn test_state(cwnd: u64, ssthresh: u64, bytes_in_flight: u64) -> CcState {
    CcState {
        cwnd,
        ssthresh,
        mss: 1000,
        bytes_in_flight,
        in_recovery: false,
        cwnd_limited: true,
        flight_cwnd_limited: true,
        srtt: None,
        abc: true,
    }
}

/// RFC 5681 loss response: ssthresh = max(FlightSize/2, 2*SMSS).
pub fn half_flight(st: &CcState) -> u64 {
    (st.bytes_in_flight / 2).max(2 * st.mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_abc_limit() {
        let mut st = CcState {
            cwnd: 10_000,
            ssthresh: u64::MAX,
            mss: 1000,
            bytes_in_flight: 0,
            in_recovery: false,
            cwnd_limited: true,
            flight_cwnd_limited: true,
            srtt: None,
            abc: true,
        };
        // One ACK for 5 segments (stretch ACK): at most L = 2*SMSS.
        assert_eq!(slow_start(&mut st, 5000), 0);
        assert_eq!(st.cwnd, 12_000);
        st.ssthresh = 12_500;
        assert_eq!(slow_start(&mut st, 1000), 500);
        assert_eq!(st.cwnd, 12_500);
    }
}
