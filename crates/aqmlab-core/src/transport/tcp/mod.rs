//! TCP endpoints (sans-I/O): the data sender and the receiver of one connection, per
//! docs/transports.md section 1 (RFC 5681 / 6298 / 6582 / 6675 / 3168, with RFC 3042 limited
//! transmit, RFC 3465 byte counting, RFC 2018 SACK blocks and RFC 7323 timestamps).
//!
//! Files: `sender/` (handshake, windows, loss recovery, ECN sender; one module per concern),
//! `receiver.rs`, `scoreboard.rs` (SACK scoreboard), `rto.rs` (RFC 6298 or ns-2 estimator).
//! Congestion controllers are in `transport/cc`. [`PROFILES`] here: named sets of defaults for
//! the flow keys (`rfc`, the RFC set; `ns2_sack1`, ns-2.35's one-way Sack1 agent with the
//! DelAck sink, `ns2_linux`, its TCP/Linux agent running CUBIC into a Sack1 sink, and
//! `ns2_fulltcp`, its two-way FullTcp/Sack agent, each value sourced from ns-2's files;
//! `linux`, a current Linux sender and receiver; `linux_3_14`, the 2014 kernel).
//!
//! Wire model (IP bytes): every segment carries IP (20) + TCP (20) + the timestamp option
//! (10 + 2 NOP = 12) = [`HEADER`] = 52 bytes. Data segment = payload + 52 (1500 for MSS 1448).
//! SYN and SYN-ACK = [`SYN_SIZE`] = 60 bytes (options: MSS 4, SACK-permitted 2, timestamps 10,
//! window scale 3, NOP 1; 20 in all). A pure ACK = 52 bytes, plus a SACK option of 2 NOPs, 2
//! bytes of kind/length and 8 per block when it carries blocks (64 / 72 / 80 bytes with 1 / 2 /
//! 3 blocks).
//!
//! Sequence space: the SYN is sequence number 0, data starts at 1; the FIN flag rides on the
//! last data segment and takes no sequence number.

use crate::packet::{Dir, Ecn, EcnMode};
use crate::params::{self, read, Params};
use crate::transport::cc::cubic::{CubicParams, Law};
use crate::transport::cc::registry::{cc_params, lookup as lookup_cc, names as cc_names, needs_accecn};
use crate::transport::cc::{CcContext, Hystart};
use crate::units::{as_dur, as_size, fmt_time, parse_time, Dur, Size, Time, MS, SEC};
use accecn::ReceiverEcn;
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub mod accecn;
pub mod delivery;
pub mod ranges;
pub mod rcvbuf;
pub mod receiver;
pub mod rto;
pub mod scoreboard;
pub mod sender;

#[cfg(test)]
mod harness;

pub use rcvbuf::RcvWindow;
pub use receiver::TcpReceiver;
pub use sender::TcpSender;

use crate::transport::wire::Pacing;

/// A TCP connection's model, declared once: each field is a flow key of the TCP-based kinds
/// (`tcp`, `web`, `webpage`) with its type, its help (the doc comment: `aqmlab list tcp`, the
/// JSON Schema) and its defaults (a profile's value, [`PROFILES`]); the struct read from a flow
/// entry over its profile (`params::read`) is what the endpoints run, and written back it
/// is the flow's resolved TCP keys. The fields marked `skip` come from the flow's other keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// TCP profile: the defaults of the other TCP keys (`aqmlab list tcp`).
    #[serde(deserialize_with = "profile_name")]
    pub profile: Name,
    /// Congestion controller (`aqmlab list ccs`).
    #[serde(deserialize_with = "cc_name")]
    pub cc: Name,
    /// The controller's parameters (LEDBAT's target, TCP-LP's threshold, ...), a table
    /// (`aqmlab list ccs NAME`); resolved with every default written out.
    pub cc_params: Value,
    /// ECN: "off", "classic" (RFC 3168: ECT(0) on data), "l4s" (RFC 9331: ECT(1)) or "accecn"
    /// (RFC 9768 accurate feedback, ECT(1)); true and false stand for "classic" and "off". The
    /// response to a mark is the controller's.
    #[schemars(with = "EcnMode")]
    pub ecn: EcnMode,
    /// The ECN the receiving end supports: "accecn" (RFC 9768 and RFC 3168), "classic" (RFC 3168
    /// only: an AccECN sender falls back to classic ECN) or "off" (no ECN is negotiated).
    /// Written out only when not "accecn".
    #[serde(default, skip_serializing_if = "ReceiverEcn::is_default")]
    pub receiver_ecn: ReceiverEcn,
    /// The ECN field of new data segments whatever `ecn` negotiated: "negotiated" (the
    /// default: what `ecn` and the handshake give), or "not_ect", "ect0", "ect1" on every new
    /// segment (a sender that mislabels its packets, e.g. a loss-based sender marking ECT(1)
    /// without AccECN; the response to marks stays what was negotiated). Written out only when
    /// not "negotiated".
    #[serde(default, skip_serializing_if = "DataEcn::is_default")]
    pub data_ecn: DataEcn,
    /// SACK (RFC 2018 blocks, RFC 6675 recovery); off: NewReno partial-ACK recovery (RFC 6582).
    pub sack: bool,
    /// Initial window in segments.
    pub iw: u32,
    /// Floor of the retransmission timeout.
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub min_rto: Time,
    /// Cap of the (backed-off) retransmission timeout.
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub max_rto: Time,
    /// Retransmission timeout before the first RTT sample.
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub initial_rto: Time,
    /// RTO clock tick: "0s" = RFC 6298 rules; positive = ns-2's tick-based rules (`rto.rs`).
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub rto_tick: Time,
    /// Linux's RTO estimator: RTO = SRTT + a variance term of at least `min_rto`
    /// (tcp_rtt_estimator, tcp_set_rto) instead of RFC 6298's max(min_rto, SRTT + 4 RTTVAR);
    /// needs `rto_tick` 0.
    pub linux_rto: bool,
    /// RFC 3465 byte counting; off: ns-2's per-ACK window growth (for CUBIC only its slow start,
    /// `cc::slow_start`).
    pub abc: bool,
    /// Delayed-ACK timer ("40ms"), or false: ACK every segment.
    #[serde(with = "as_delack")]
    #[schemars(with = "DelAck")]
    pub delack: Option<Time>,
    /// In-order full segments that make the receiver ACK at once (RFC 1122: 2; ns-2 FullTcp
    /// segsperack_ 1). Less than that waits for the delayed-ACK timer.
    pub segs_per_ack: u32,
    /// The delayed-ACK timer fires on multiples of `delack` since time 0 (ns-2 FullTcp's
    /// periodic delack_timer_) instead of `delack` after the first unACKed segment.
    pub delack_grid: bool,
    /// Maximum segment size (payload bytes); IP packet = mss + 52 (IP 20 + TCP 20 + timestamps 12).
    pub mss: u32,
    /// Receive window: a size, or `{ segments = N }` (N times `mss`, as ns-2's `window_`);
    /// resolved to bytes, at most 1 GiB (65535 << 14, RFC 7323 2.3). The window advertised
    /// throughout with `rcv_window` "fixed"; the most the window may reach with "linux".
    pub rwnd: Rwnd,
    /// How the receiver sizes the window it advertises: "fixed" (`rwnd`) or "linux" (Linux
    /// 6.18's receive-buffer auto-tuning, tcp_rcv_space_adjust and tcp_grow_window: the window
    /// opens near 64 KB and widens with what the application reads per round trip;
    /// `rcvbuf.rs`).
    pub rcv_window: RcvWindow,
    /// "linux": the receive buffer a connection starts with (net.ipv4.tcp_rmem[1]).
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub rcvbuf: u64,
    /// "linux": the largest receive buffer auto-tuning grows (net.ipv4.tcp_rmem[2]: 32 MiB
    /// since Linux 6.16, 6 MiB from 4.x to 6.15).
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub rcvbuf_max: u64,
    /// "linux": the memory a received segment takes in the buffer (skb->truesize, the NIC
    /// driver's choice); a full-sized segment's payload over it is the share of the buffer
    /// counted as window (Linux's scaling_ratio, tcp_measure_rcv_mss). 2304 is a veth pair's
    /// (payload 1448: ratio 160/256).
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub rcv_truesize: u64,
    /// How the initial slow start may end early: "linux" (CUBIC's HyStart; `true`), "rfc9406"
    /// (HyStart++) or "off" (`false`).
    pub hystart: Hystart,
    /// Linux-style pacing ([`Pacing`]); off: segments leave as the window allows.
    pub pacing: bool,
    /// Pacing rate in slow start, percent of cwnd/SRTT (Linux tcp_pacing_ss_ratio).
    pub pacing_ss_ratio: u32,
    /// Pacing rate in congestion avoidance, percent of cwnd/SRTT (Linux tcp_pacing_ca_ratio).
    pub pacing_ca_ratio: u32,
    /// Segments per paced burst: a number, or "auto" (Linux tcp_tso_autosize).
    pub tso_segs: TsoSegs,
    /// RFC 6937 PRR in SACK recovery; off: cwnd = ssthresh at once (RFC 6675).
    pub prr: bool,
    /// Leave the data sent on the duplicate ACKs before a fast retransmit (RFC 3042 limited
    /// transmit; with SACK, what SACKed segments let out) out of the FlightSize the loss halves,
    /// as RFC 5681 3.2 step 2 and RFC 6675 5 require (ns-2 and Linux halve the window, which
    /// never held it; on in the ns-2 profiles); off: halve all outstanding data, aqmlab's rule
    /// before 2026-11-23, kept as the default (it moves every Reno-family result slightly).
    pub lt_excluded: bool,
    /// In SACK recovery, restart the retransmission timer on the first partial ACK only (RFC
    /// 6582 3.2 step 5, the "impatient" variant, which ns-3 3.44's TcpSocketBase applies with
    /// SACK too); off: every ACK of new data restarts it (RFC 6298 5.3; ns-2 Sack1 with its
    /// default partial_ack_ false calls newtimer on each partial ACK). NewReno recovery
    /// without SACK is always impatient.
    pub impatient: bool,
    /// After a timeout, forget the SACK information until snd_una passes the data outstanding at
    /// the timeout, as ns-2's Sack1 agent does (tcp-sack1.cc: the timeout clears the scoreboard
    /// and ignores duplicate ACKs until a new ACK, and each new ACK outside fast recovery
    /// clears it again): everything from snd_una is resent in order, SACKed or not, and only
    /// the SACK blocks of duplicate ACKs after the first new ACK are used. Off: the SACK
    /// information is kept and SACKed data is not resent (RFC 6675 5.1).
    pub rto_sack_reset: bool,
    /// ns-2 TCP/Linux's rate halving in SACK recovery (tcp-linux.cc next_pkts_in_flight_): the
    /// window falls from the pre-loss cwnd to ssthresh by one segment sent per two ACKs.
    pub rate_halving: bool,
    /// ns-2 Sack1's pipe in SACK recovery (tcp-sack1.cc `pipe_`, ScoreBoardRQ::GetNextRetran):
    /// a count of segments set at the fast retransmit to those outstanding less the three
    /// duplicate ACKs, one less for every ACK of the recovery (two for a partial ACK), one more
    /// for every segment the send loop sends; segments go while it is below cwnd (whole
    /// segments), every hole below the highest SACKed segment before new data, no rescue
    /// retransmission. Lost segments stay in this count until ACKs arrive, so after many losses
    /// in one window the recovery sends less than RFC 6675's pipe (off) allows.
    pub sack1_pipe: bool,
    /// RFC 8985 RACK loss detection (SACK only); off: RFC 6675's DupThresh IsLost rule.
    pub rack: bool,
    /// RFC 8985 section 7 Tail Loss Probe (SACK only).
    pub tlp: bool,
    /// RFC 5682 F-RTO (SACK-enhanced, as Linux) with undo of spurious timeouts from the
    /// timestamp echo (RFC 3522 Eifel detection, Linux tcp_packet_delayed).
    pub frto: bool,
    /// RFC 5827 early retransmit as Linux 3.5-4.x ran it (SACK only): with fewer than 4
    /// segments outstanding, nothing new to send and one SACKed, recovery starts after SRTT/4.
    pub early_retransmit: bool,
    /// Data segments ACKed at once at the start of a connection (Linux quick-ACK mode); 0 = none.
    pub quickack: u32,
    /// A data segment that does not start at the next expected byte (out of order, a duplicate
    /// or an overlap) puts the receiver back in quick-ACK mode, as Linux 3.x does
    /// (tcp_data_queue calls tcp_enter_quickack_mode): the next min(rwnd / (2 mss) (2 if that
    /// is 0), `quickack`) ACKs, that segment's own included, go at once (tcp_incr_quickack).
    /// Off: only that segment's own ACK is immediate.
    pub ooo_quickack: bool,
    /// Restart the window after an idle period longer than the RTO (RFC 5681 4.1, as Linux
    /// tcp_cwnd_restart with tcp_slow_start_after_idle: cwnd halved per RTO of idleness, not
    /// below min(IW, cwnd); ssthresh = max(ssthresh, 3/4 cwnd)).
    pub idle_restart: bool,
    /// Grow the window only while it limits the sender, as Linux 3.14's tcp_is_cwnd_limited
    /// (see [`is_cwnd_limited`]); off: grow on every ACK, application-limited or not.
    pub cwnd_limited: bool,
    /// Restart the retransmission timer whenever the segment at snd_una is retransmitted, as
    /// Linux's tcp_xmit_retransmit_queue does (unless RACK's reordering timer is pending); off:
    /// RFC 6298, where only an ACK of new data restarts a running timer.
    pub rto_rearm: bool,
    /// Restart the retransmission timer at the fast retransmit, as ns-2's agents do
    /// (tcp-sack1.cc and tcp-newreno.cc `dupack_action`: reset_rtx_timer(1, 0); tcp-full.cc:
    /// cancel_rtx_timer, then foutput sets it again); later retransmissions leave it alone. Off:
    /// RFC 6298, where only an ACK of new data restarts a running timer.
    pub fr_rearm: bool,
    /// Restart the retransmission timer on every ACK of snd_una, duplicates included, while data
    /// is outstanding (ns-2's LinuxTcpAgent::time_processing, `renew_timer` with timerfix_ 1);
    /// off: RFC 6298, where only an ACK of new data restarts a running timer.
    pub ack_rearm: bool,
    /// Forget the SACK state of the outstanding segments when a fast recovery or a timeout's
    /// loss episode ends, and rebuild it from the next ACK with SACK blocks alone: its blocks
    /// SACKed, every other segment at least DupThresh + 1 below the highest SACKed one lost
    /// (ns-2's LinuxTcpAgent::tcp_fastretrans_alert, `scb_->ClearScoreBoard()`, then
    /// ScoreBoard1::UpdateScoreBoard). Off: the SACK state is kept, as Linux and RFC 6675 do.
    pub recovery_exit_sack_clear: bool,
    /// Find lost retransmissions as ns-2's ScoreBoard1::UpdateScoreBoard does: one is lost
    /// again once a segment first sent after it is SACKed, or once a retransmission sent more
    /// than DupThresh + 1 retransmissions later is delivered; it may then go again. Off: a lost
    /// retransmission waits for the timer (or RACK).
    pub lost_rtx_by_order: bool,
    /// Classic Nagle (RFC 896), as ns-2's FullTcp (`nodelay_` false) runs it: a new segment
    /// shorter than the MSS waits while data is outstanding, unless it is at least half the
    /// receive window (tcp-full.cc foutput, "sender SWS avoidance"). Off: sent at once
    /// (TCP_NODELAY, or Linux's Minshall variant, which holds a short segment only behind
    /// another unacknowledged short one, so never a transfer's single tail).
    pub nagle: bool,
    /// The transport runs in user space over a UDP socket (libutp's uTP, modelled on this
    /// stack): a `local_sender` hop's verdict does not reach it, as Linux's UDP reports no
    /// local drop (3.2's udp_send_skb returns ENOBUFS only with IP_RECVERR, and NET_XMIT_CN is
    /// success). Written out only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub udp_socket: bool,
    /// Bytes to transfer; `None` = bulk (unlimited). From the flow's `bytes`.
    #[serde(skip)]
    pub bytes: Option<u64>,
    /// No new data is sent at or after this time (retransmissions continue); `None` = never
    /// stop. From the flow's `stop`.
    #[serde(skip)]
    pub stop: Option<Time>,
    /// The application's on periods [start, end) (on/off sources); empty = always on. From the
    /// flow's `on_off`.
    #[serde(skip)]
    pub on_periods: Vec<(Time, Time)>,
}

/// The ECN field a connection puts on its new data segments (the TCP key `data_ecn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DataEcn {
    /// What `ecn` and its negotiation give (transport/tcp/sender: `codepoint`).
    #[default]
    Negotiated,
    NotEct,
    Ect0,
    Ect1,
}

impl DataEcn {
    pub fn is_default(&self) -> bool {
        *self == DataEcn::default()
    }

    /// The codepoint forced on new data, `None` for "negotiated".
    #[inline]
    pub fn forced(self) -> Option<Ecn> {
        match self {
            DataEcn::Negotiated => None,
            DataEcn::NotEct => Some(Ecn::NotEct),
            DataEcn::Ect0 => Some(Ecn::Ect0),
            DataEcn::Ect1 => Some(Ecn::Ect1),
        }
    }
}

/// A receive window: bytes, or a number of segments of the connection's MSS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rwnd {
    Bytes(u64),
    Segments(u64),
}

impl Rwnd {
    pub fn bytes(self, mss: u32) -> u64 {
        match self {
            Rwnd::Bytes(b) => b,
            Rwnd::Segments(n) => n * mss as u64,
        }
    }
}

impl Serialize for Rwnd {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Rwnd::Bytes(b) => Size(b).serialize(s),
            Rwnd::Segments(n) => serde_json::json!({ "segments": n }).serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Rwnd {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if let Some(n) = v.get("segments").and_then(Value::as_u64) {
            if v.as_object().is_some_and(|m| m.len() == 1) && n > 0 {
                return Ok(Rwnd::Segments(n));
            }
        }
        match &v {
            Value::String(_) => Size::deserialize(v).map(|b| Rwnd::Bytes(b.0)).map_err(de::Error::custom),
            _ => Err(de::Error::custom(format!(
                "{v} is not allowed; allowed: a size such as \"64MiB\", or {{ segments = N }} with N at least 1"
            ))),
        }
    }
}

/// The delayed-ACK setting as a value: a timer ("40ms"), or `false` (ACK every segment); `true`
/// is 40 ms (Linux's TCP_DELACK_MIN).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelAck(pub Option<Time>);

impl<'de> Deserialize<'de> for DelAck {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(false) => Ok(DelAck(None)),
            Value::Bool(true) => Ok(DelAck(Some(40 * MS))),
            Value::String(s) => parse_time(&s).map(|t| DelAck(Some(t))).map_err(de::Error::custom),
            v => Err(de::Error::custom(format!(
                "{v} is not a delayed-ACK timer (\"40ms\") or false"
            ))),
        }
    }
}

impl Serialize for DelAck {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_bool(false),
            Some(t) => Dur(t).serialize(s),
        }
    }
}

/// `#[serde(with = "as_delack")]`: an `Option<Time>` read and written as a [`DelAck`].
mod as_delack {
    use super::{DelAck, Time};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<Time>, s: S) -> Result<S::Ok, S::Error> {
        DelAck(*t).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Time>, D::Error> {
        DelAck::deserialize(d).map(|t| t.0)
    }
}

/// Segments per paced burst: `Some(n)`, or `None` for Linux's autosizing ("auto").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TsoSegs(pub Option<u32>);

impl<'de> Deserialize<'de> for TsoSegs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) if s == "auto" => Ok(TsoSegs(None)),
            Value::Number(n) if n.as_u64().is_some_and(|v| (1..=64).contains(&v)) => {
                Ok(TsoSegs(n.as_u64().map(|v| v as u32)))
            }
            v => Err(de::Error::custom(format!(
                "{v} is not allowed; allowed: \"auto\" or a whole number of segments from 1 to 64"
            ))),
        }
    }
}

impl Serialize for TsoSegs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(n) => s.serialize_u32(n),
            None => s.serialize_str("auto"),
        }
    }
}

/// A name from a fixed table (a controller's, a profile's): the table's own `'static` string,
/// so that a configuration is plain data a profile constant can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Name(pub &'static str);

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.0
    }
}

impl From<&'static str> for Name {
    fn from(s: &'static str) -> Name {
        Name(s)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Reads a name of `names`.
fn static_name<'de, D: Deserializer<'de>>(
    d: D,
    names: impl Iterator<Item = &'static str> + Clone,
) -> Result<Name, D::Error> {
    let s = String::deserialize(d)?;
    names.clone().find(|n| *n == s).map(Name).ok_or_else(|| {
        let all: Vec<&str> = names.collect();
        de::Error::custom(format!("{s:?} is not allowed; allowed: {}", all.join(", ")))
    })
}

fn cc_name<'de, D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
    static_name(d, cc_names().into_iter())
}

fn profile_name<'de, D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
    static_name(d, PROFILES.iter().map(TcpProfile::name))
}

impl TcpConfig {
    /// The pacing the sender runs ([`Pacing`]), `None` when `pacing` is off and the
    /// controller does not need it (`cc_paces`: a rate-based controller, which Linux always
    /// paces).
    pub fn pacing_params(&self, cc_paces: bool) -> Option<Pacing> {
        (self.pacing || cc_paces).then_some(Pacing {
            ss_ratio: self.pacing_ss_ratio,
            ca_ratio: self.pacing_ca_ratio,
            tso_segs: self.tso_segs.0,
            ..Pacing::LINUX
        })
    }

    /// The receive window in bytes.
    pub fn rwnd_bytes(&self) -> u64 {
        self.rwnd.bytes(self.mss)
    }
}

impl Params<()> for TcpConfig {
    const PRESET: Option<&'static str> = Some("profile");

    fn preset(&self, _: &()) -> TcpConfig {
        profile(&self.profile).expect("a profile's name").config.clone()
    }

    fn finish(&mut self, _: &()) -> Result<(), String> {
        if !(self.cc_params.is_null() || self.cc_params.is_object()) {
            return Err(format!(
                "cc_params: {} is not allowed; allowed: a table of {}'s parameters",
                self.cc_params, self.cc
            ));
        }
        let mut table = profile(&self.profile)
            .ok()
            .and_then(|p| p.cc_params.iter().find(|(cc, _)| *cc == self.cc.0))
            .map_or(Value::Null, |(_, t)| t.clone());
        match (table.as_object_mut(), self.cc_params.as_object()) {
            (Some(base), Some(own)) => base.extend(own.iter().map(|(k, v)| (k.clone(), v.clone()))),
            (None, _) => table = self.cc_params.clone(),
            (Some(_), None) => {}
        }
        let ctx = CcContext {
            mss: self.mss as u64,
            hystart: self.hystart,
        };
        let range = |key: &str, v: u32, lo: u32, hi: u32, what: &str| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{key}: {v} is out of range; allowed {lo} to {hi}{what}"))
            }
        };
        range("mss", self.mss, 88, 65000, "")?;
        range("iw", self.iw, 1, 1000, " segments")?;
        range("segs_per_ack", self.segs_per_ack, 1, 1000, " segments")?;
        range("pacing_ss_ratio", self.pacing_ss_ratio, 1, 10_000, " (percent)")?;
        range("pacing_ca_ratio", self.pacing_ca_ratio, 1, 10_000, " (percent)")?;
        // the controller's table, once the mss it is built with is known to be in range
        self.cc_params = cc_params(&self.cc, &table, &ctx).map_err(|e| format!("cc_params: {e}"))?;
        for (k, v) in [
            ("min_rto", self.min_rto),
            ("max_rto", self.max_rto),
            ("initial_rto", self.initial_rto),
        ] {
            if v == 0 {
                return Err(format!("{k}: must be positive"));
            }
        }
        if self.max_rto < self.min_rto {
            return Err(format!(
                "max_rto: {} is below min_rto ({}); allowed: at least min_rto",
                fmt_time(self.max_rto),
                fmt_time(self.min_rto)
            ));
        }
        if self.linux_rto && self.rto_tick > 0 {
            return Err(format!(
                "linux_rto: true with rto_tick {} (ns-2's estimator); allowed: linux_rto = false, or rto_tick = \"0s\"",
                fmt_time(self.rto_tick)
            ));
        }
        if needs_accecn(&self.cc) && self.ecn != EcnMode::AccEcn {
            return Err(format!(
                "ecn: \"{}\" with cc = \"{}\"; allowed: \"accecn\" ({} runs only over AccECN feedback, {})",
                self.ecn.name(),
                self.cc,
                self.cc,
                lookup_cc(&self.cc).map_or("", |i| i.reference)
            ));
        }
        // The window the connection runs with, in bytes (a profile's may count segments).
        self.rwnd = Rwnd::Bytes(self.rwnd_bytes());
        if self.rwnd_bytes() > MAX_WINDOW {
            return Err(format!(
                "rwnd: {}B is above the largest TCP window; allowed: at most 1073725440B (65535 << 14, RFC 7323)",
                self.rwnd_bytes()
            ));
        }
        if self.rcv_truesize <= self.mss as u64 || self.rcv_truesize > 1 << 20 {
            return Err(format!(
                "rcv_truesize: {}B; allowed: more than the mss ({}B), at most 1MiB",
                self.rcv_truesize, self.mss
            ));
        }
        if self.rcvbuf < 4096 || self.rcvbuf_max < self.rcvbuf {
            return Err(format!(
                "rcvbuf: {}B with rcvbuf_max {}B; allowed: rcvbuf at least 4KiB and rcvbuf_max at least rcvbuf",
                self.rcvbuf, self.rcvbuf_max
            ));
        }
        if self.rwnd_bytes() < self.mss as u64 {
            return Err(format!(
                "rwnd: {}B is below one mss ({}B); allowed: at least the mss",
                self.rwnd_bytes(),
                self.mss
            ));
        }
        Ok(())
    }
}

/// The largest window TCP can advertise (RFC 7323 2.3: 65535 << 14).
const MAX_WINDOW: u64 = 0xffff << 14;

/// Reads a flow entry's TCP keys (`table`, the entry) over their profile; errors name the key.
/// An entry that names a controller with an ECN mode of its own (`own_ecn`) and no `ecn` runs
/// with that mode.
pub fn read_config(table: &Value) -> Result<TcpConfig, String> {
    let own = table.get("cc").and_then(Value::as_str).and_then(own_ecn);
    match own {
        Some(ecn) if table.get("ecn").is_none() => {
            let mut entry = table.clone();
            entry["ecn"] = Value::from(ecn);
            read(&entry, TcpConfig::default(), &())
        }
        _ => read(table, TcpConfig::default(), &()),
    }
}

/// The ECN mode a controller asks for itself: one whose registry entry needs AccECN
/// ([`crate::transport::cc::CcInfo::needs_accecn`]; Linux's TCP_CONG_NEEDS_ECN and
/// TCP_CONG_NEEDS_ACCECN flags, net/ipv4/tcp_prague.c) negotiates it whatever
/// net.ipv4.tcp_ecn says; any other controller takes the flow's `ecn` ("off" by default).
fn own_ecn(cc: &str) -> Option<&'static str> {
    needs_accecn(cc).then_some("accecn")
}

/// The TCP keys, in declaration order.
pub fn keys() -> &'static [&'static str] {
    params::keys::<TcpConfig>()
}

impl Default for TcpConfig {
    /// The first profile's (`linux`): a flow that names no profile runs the stack it models.
    fn default() -> TcpConfig {
        linux()
    }
}

/// A TCP profile: a coherent set of defaults for a flow's TCP keys (the scenario key `profile`),
/// its `config` (whose `profile` is its name). Every key stays settable on its own; a profile
/// only fills in what the flow leaves out.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpProfile {
    pub about: &'static str,
    pub config: TcpConfig,
    /// The profile's own defaults for a controller's parameters, by controller name (its typed
    /// `cc_params` struct written as a table, [`cc_defaults`]): what the stack modelled runs,
    /// under the keys a flow's `cc_params` may still set one by one.
    pub cc_params: Vec<(&'static str, Value)>,
}

/// A profile's defaults for controller `cc`: its parameter struct `params` as a `cc_params`
/// table (the profile test checks that `cc` reads it back as its own).
fn cc_defaults<T: Serialize>(cc: &'static str, params: T) -> (&'static str, Value) {
    (
        cc,
        serde_json::to_value(params).expect("a controller's parameters serialise"),
    )
}

impl TcpProfile {
    pub fn name(&self) -> &'static str {
        self.config.profile.0
    }
}

// RFC TCP with Linux-like defaults; every other profile is this one with what differs.
pub(crate) fn rfc() -> TcpConfig {
    TcpConfig {
        profile: Name("rfc"),
        cc: Name("cubic"),
        cc_params: Value::Null,
        ecn: EcnMode::Off,
        receiver_ecn: ReceiverEcn::Accecn,
        data_ecn: DataEcn::Negotiated,
        sack: true,
        iw: 10,
        min_rto: 200 * MS,
        max_rto: rto::MAX_RTO,
        initial_rto: SEC,
        rto_tick: 0,
        linux_rto: false,
        abc: true,
        delack: Some(40 * MS),
        segs_per_ack: 2,
        delack_grid: false,
        mss: 1448,
        rwnd: Rwnd::Bytes(64 << 20),
        rcv_window: RcvWindow::Fixed,
        // Linux 6.18's net.ipv4.tcp_rmem[1] and [2], and a veth pair's truesize (measured:
        // the tcp_rcvbuf_grow tracepoint's scaling_ratio 160 with 1448-byte segments).
        rcvbuf: 128 << 10,
        rcvbuf_max: 32 << 20,
        rcv_truesize: 2304,
        hystart: Hystart::Linux,
        pacing: false,
        // Linux's sysctl defaults (net.ipv4.tcp_pacing_ss_ratio / ca_ratio) and TSO autosizing.
        pacing_ss_ratio: 200,
        pacing_ca_ratio: 120,
        tso_segs: TsoSegs(None),
        prr: false,
        lt_excluded: false,
        impatient: false,
        rto_sack_reset: false,
        rate_halving: false,
        sack1_pipe: false,
        rack: false,
        tlp: false,
        frto: false,
        early_retransmit: false,
        quickack: 0,
        ooo_quickack: false,
        idle_restart: false,
        cwnd_limited: false,
        rto_rearm: false,
        fr_rearm: false,
        ack_rearm: false,
        recovery_exit_sack_clear: false,
        lost_rtx_by_order: false,
        nagle: false,
        udp_socket: false,
        bytes: None,
        stop: None,
        on_periods: Vec::new(),
    }
}

// A current Linux sender and receiver (net/ipv4 of Linux 6.x), where its loss recovery
// differs from the RFC set: RACK-TLP (tcp_recovery = 1, tcp_early_retrans = 3), PRR
// (tcp_input.c tcp_cwnd_reduction), CUBIC with HyStart, IW 10 (TCP_INIT_CWND), RTO 1 s
// initial (TCP_TIMEOUT_INIT) / 200 ms floor (TCP_RTO_MIN) / 120 s cap (TCP_RTO_MAX),
// delayed ACK 40 ms (TCP_DELACK_MIN).
fn linux() -> TcpConfig {
    TcpConfig {
        profile: Name("linux"),
        cc: Name("cubic"),
        ecn: EcnMode::Off,
        receiver_ecn: ReceiverEcn::Accecn,
        data_ecn: DataEcn::Negotiated,
        sack: true,
        iw: 10,
        mss: 1448,
        min_rto: 200 * MS,
        max_rto: 120 * SEC,
        initial_rto: SEC,
        rto_tick: 0,
        // tcp_input.c tcp_rtt_estimator / tcp_set_rto: RTO = srtt + rttvar, rttvar >= TCP_RTO_MIN.
        linux_rto: true,
        delack: Some(40 * MS),
        // tcp_input.c __tcp_ack_snd_check: more than one full segment unACKed.
        segs_per_ack: 2,
        delack_grid: false,
        rwnd: Rwnd::Bytes(64 << 20),
        // Linux runs tcp_moderate_rcvbuf 1, the window growing with the buffer ("linux",
        // rcvbuf.rs); "fixed" stays the profile's default until the kernel matrix and the
        // controller checks are re-run with it (issue 50).
        rcv_window: RcvWindow::Fixed,
        abc: true,
        hystart: Hystart::Linux,
        pacing: false,
        prr: true,
        rate_halving: false,
        rack: true,
        tlp: true,
        // tcp_frto = 2 (F-RTO, tcp_process_loss) with timestamp undo (tcp_try_undo_loss);
        // RACK replaces early retransmit (tcp_early_retrans now only enables TLP).
        frto: true,
        early_retransmit: false,
        // TCP_MAX_QUICKACKS (tcp_incr_quickack on the first data segment).
        quickack: 16,
        idle_restart: true,
        // Current kernels keep the gate but track whether the window was used over the last
        // flight (tcp_cwnd_validate, max_packets_out, since 3.17/4.x); that form is not modelled,
        // so `linux` grows the window on every ACK (`linux_3_14` runs 3.14's form).
        cwnd_limited: false,
        // tcp_output.c tcp_xmit_retransmit_queue: retransmitting the head (rtx_head) re-arms
        // ICSK_TIME_RETRANS to a full RTO unless ICSK_TIME_REO_TIMEOUT is pending (3.14: when the
        // skb is tcp_write_queue_head).
        rto_rearm: true,
        // Nagle is on by default (no TCP_NODELAY) but in Minshall's form (tcp_output.c
        // tcp_nagle_check / tcp_minshall_check): a transfer's one short tail is never held.
        nagle: false,
        udp_socket: false,
        ..rfc()
    }
}

// Values from ns-2.35 tcl/lib/ns-default.tcl (Agent/TCP and Agent/TCPSink/DelAck defaults),
// behaviour from tcp/tcp.cc and tcp/tcp-sack1.cc as named in the comments.
fn ns2_sack1() -> TcpConfig {
    TcpConfig {
        profile: Name("ns2_sack1"),
        // Sack1TcpAgent is Reno AIMD (TcpAgent::opencwnd / slowdown, decrease_num_ 0.5).
        cc: Name("newreno"),
        // ecn_ 0.
        ecn: EcnMode::Off,
        receiver_ecn: ReceiverEcn::Accecn,
        data_ecn: DataEcn::Negotiated,
        sack: true,
        // windowInit_ 2 (windowInitOption_ 1), applied when the SYN's ACK arrives
        // (syn_ true, delay_growth_ true: tcp-sack1.cc Sack1TcpAgent::recv).
        iw: 2,
        // packetSize_ 1000.
        mss: 1000,
        // minrto_ 0.2, maxrto_ 60, rtxcur_init_ 3.0, tcpTick_ 0.01 (tcp.cc rtt_timeout).
        min_rto: 200 * MS,
        max_rto: 60 * SEC,
        initial_rto: 3 * SEC,
        rto_tick: 10 * MS,
        linux_rto: false,
        // Agent/TCPSink/DelAck interval_ 100ms (tcp-sink.cc DelAckSink::recv: every second
        // in-order packet at once, out-of-order and gap-filling packets at once).
        delack: Some(100 * MS),
        segs_per_ack: 2,
        // DelAckSink::timeout fires interval_ after the packet that armed it.
        delack_grid: false,
        // window_ 20 (packets): the receiver's advertised window.
        rwnd: Rwnd::Segments(20),
        // tcp.cc TcpAgent::opencwnd: +1 per new ACK in slow start, +1/cwnd in avoidance.
        abc: false,
        hystart: Hystart::Off,
        // ns-2's agents send as the window opens (maxburst_ 0: no limit).
        pacing: false,
        // tcp-sack1.cc: cwnd is halved at once (no rate reduction), and the recovery sends by
        // the agent's own pipe estimate (dupack_action, recv, send_much).
        prr: false,
        rate_halving: false,
        sack1_pipe: true,
        // tcp-sack1.cc: loss is inferred from numdupacks_ (3) duplicate ACKs; no probes.
        rack: false,
        tlp: false,
        // tcp.cc: no spurious-timeout detection, no early retransmit; the DelAck sink has
        // no quick-ACK mode.
        frto: false,
        early_retransmit: false,
        quickack: 0,
        idle_restart: false,
        // ns-2's agents grow the window on every new ACK (tcp.cc TcpAgent::opencwnd).
        cwnd_limited: false,
        // The RFC 6298 timer, restarted at the fast retransmit: Sack1TcpAgent::dupack_action
        // (tcp-sack1.cc, sack_action) and NewRenoTcpAgent::dupack_action (tcp-newreno.cc,
        // reno_action) call reset_rtx_timer(1, 0). Only there: a later retransmission goes out
        // through TcpAgent::output, which sets the timer only when none is pending, so not
        // `rto_rearm` (Linux's restart at every retransmission of the head, which would undo
        // NewReno's newreno_changes1_ 1: newtimer on the first partial ACK only).
        rto_rearm: false,
        fr_rearm: true,
        // TcpAgent::slowdown(CLOSE_SSTHRESH_HALF | CLOSE_CWND_HALF) at the fast retransmit
        // halves window() = min(cwnd_, wnd_), which the segments TcpAgent::send_one sent on the
        // first two duplicate ACKs (singledup_ 1) never entered: they are left out of the
        // FlightSize the loss halves.
        lt_excluded: true,
        // tcp-sack1.cc Sack1TcpAgent::timeout: scb_->ClearScoreBoard(), then timeout_ until a
        // new ACK, and every new ACK outside fast recovery clears the scoreboard again.
        rto_sack_reset: true,
        // The one-way agents send whole packets only.
        nagle: false,
        udp_socket: false,
        ..rfc()
    }
}

/// The TCP profiles; the first is the default.
pub static PROFILES: std::sync::LazyLock<Vec<TcpProfile>> = std::sync::LazyLock::new(|| {
    vec![
        TcpProfile {
            about: "Linux 6.x: CUBIC (tcp_cubic.c arithmetic) with HyStart, IW 10, RACK loss detection with Tail Loss Probe \
                (RFC 8985), PRR (RFC 6937), F-RTO with undo of spurious timeouts, RTO 1 s \
                initial, SRTT + max(4 MDEV, 200 ms) (Linux's estimator), 120 s max, delayed ACK \
                40 ms, 16 quick ACKs at the start",
            config: linux(),
            // tcp_cubic.c as 4.x-6.x run it (`law = "linux_4"`, cubic.rs): the target one
            // minimum RTT ahead, packets counted per ACK, the kernel's fixed-point arithmetic.
            cc_params: vec![cc_defaults("cubic", CubicParams { law: Law::Linux4, ..Default::default() })],
        },
        TcpProfile {
            about: "RFC TCP (RFC 5681/6298/6675/3465) with Linux-like defaults: CUBIC with HyStart, \
                IW10, MSS 1448, RTO floor 200 ms, delayed ACK 40 ms",
            config: rfc(),
            cc_params: Vec::new(),
        },
        TcpProfile {
            about: "ns-2.35 one-way Agent/TCP/Sack1 with the DelAck sink: Reno AIMD without byte \
                counting, IW 2 after the SYN, 10 ms RTO tick, RTO 3 s initial / 200 ms min / \
                60 s max, delayed ACK 100 ms, window_ 20 packets, the SACK scoreboard cleared at \
                a timeout, the agent's own pipe count in recovery",
            config: ns2_sack1(),
            cc_params: Vec::new(),
        },
        // ns-2.35's Agent/TCP/Linux (tcp/tcp-linux.cc LinuxTcpAgent) with `select_ca cubic`, into
        // an Agent/TCPSink/Sack1. What differs from ns2_sack1 (the rest: the Agent/TCP defaults of
        // tcl/lib/ns-default.tcl both inherit: ecn_, windowInit_, packetSize_, the RTO bounds,
        // window_; no probes, no undo: "We don't have undo yet", LinuxTcpAgent::enter_loss).
        TcpProfile {
            about: "ns-2.35 Agent/TCP/Linux running Linux 2.6.22's CUBIC v2.1 module into a \
                TCPSink/Sack1: per-packet windows and jiffies, SACK scoreboard recovery with \
                rate halving to cwnd = ssthresh, IW 2 after the SYN, 1 ms RTO tick, RTO 3 s \
                initial / 200 ms min / 60 s max, an ACK per packet, window_ 20 packets",
            config: TcpConfig {
                profile: Name("ns2_linux"),
                // select_ca cubic: tcp/linux/src/tcp_cubic.c (Linux 2.6.22.6, CUBIC v2.1); the module
                // counts packets per ACK itself (tcp_slow_start, sysctl_tcp_abc 1) and has no HyStart
                // (added in 2.6.29). LinuxTcpAgent keeps a ScoreBoard1 (scb_) and retransmits its holes
                // first (send_much: GetNextRetran). IW 2: TcpAgent::set_initial_window sets cwnd_ 1
                // for the SYN and LinuxTcpAgent::recv (unlike TcpAgent::recv) never sets cwnd_ =
                // windowInit_ on the SYN's ACK; that ACK is a slow-start ACK, so data starts with 2.
                cc: Name("cubic_2_6_22"),
                // install_congestion_control: tcp_tick_ = 1 / JIFFY_RATIO (1 ms); the estimator is
                // TcpAgent's (LinuxTcpAgent::rtt_update, rttvar_exp_ 2).
                rto_tick: MS,
                // TCPSink (tcp-sink.cc) ACKs every packet; only the DelAck sink delays.
                delack: None,
                // tcp_fastretrans_alert sets next_pkts_in_flight_ = the pre-loss cwnd; send_much then
                // lets it fall by one per packet sent (rate halving), not PRR.
                rate_halving: true,
                // Sack1's timeout rule and pipe count are Sack1TcpAgent's own, not
                // LinuxTcpAgent's (which counts packets_in_flight as the kernel does).
                rto_sack_reset: false,
                sack1_pipe: false,
                // Its timer is not Sack1's: LinuxTcpAgent::recv calls time_processing for every
                // ACK that is neither above t_seqno_ nor below snd_una, and its renew_timer
                // (timerfix_ 1) restarts the timer while anything is outstanding (else cancels
                // it): duplicates restart it too (`ack_rearm`). Its scoreboard is ns-2's own:
                // tcp_fastretrans_alert calls scb_->ClearScoreBoard() at the end of each recovery
                // and ScoreBoard1::UpdateScoreBoard rebuilds it from the next SACK alone
                // (`recovery_exit_sack_clear`), and a retransmission counts as lost again once one
                // sent after it is SACKed or one sent more than DupThresh + 1 later is delivered
                // (its retransmission-id test, `lost_rtx_by_order`). The three go together: each
                // alone moves codel2012 away from ns-2, all three bring its drop rates, CoDel's
                // recoveries and the buffer ratios near ns-2's (validation/ns2/README.md). Its
                // ssthresh is the module's, from snd_cwnd (tcp_fastretrans_alert), so
                // `lt_excluded` stays as in Sack1 (CUBIC reads the window, not the flight).
                ack_rearm: true,
                recovery_exit_sack_clear: true,
                lost_rtx_by_order: true,
                fr_rearm: false,
                ..ns2_sack1()
            },
            cc_params: Vec::new(),
        },
        // ns-2.35's two-way Agent/TCP/FullTcp/Sack (tcp/tcp-full.cc SackFullTcpAgent), the agent
        // PackMimeHTTP allocates after `set-TCP Sack` (packmime_HTTP.cc picktcp: `alloc-tcp
        // $tcptype_`). Its own defaults are ns-default.tcl's Agent/TCP/FullTcp block; the rest it
        // inherits from Agent/TCP as ns2_sack1 does. FullTcpAgent grows cwnd_ with
        // TcpAgent::opencwnd and halves it on loss; windowInit_ 2 applies when the SYN is ACKed
        // (tcp-full.cc recv, SYN-SENT and SYN-RECEIVED).
        TcpProfile {
            about: "ns-2.35 two-way Agent/TCP/FullTcp/Sack (PackMime's agent): SYN/FIN handshake, \
                Reno AIMD without byte counting, SACK recovery, IW 2 on the SYN-ACK, segsize 536, \
                10 ms RTO tick, RTO 3 s / 200 ms / 60 s, an ACK per full segment (segsperack_ 1) \
                and a shorter tail's ACK at the next multiple of interval_ 100 ms, Nagle \
                (nodelay_ false), window_ 20 packets",
            config: TcpConfig {
                profile: Name("ns2_fulltcp"),
                // segsize_ 536.
                mss: 536,
                // segsperack_ 1: FullTcpAgent::need_send ACKs as soon as rcv_nxt_ - last_ack_sent_
                // reaches one full segment; anything less (a short tail) sets TF_DELACK and waits for
                // delack_timer_, which recv arms for the next multiple of interval_ (0.1) after now and
                // FullTcpAgent::timeout re-arms every interval_. A FIN is ACKed at once (TF_ACKNOW).
                delack: Some(100 * MS),
                segs_per_ack: 1,
                delack_grid: true,
                // nodelay_ false: foutput's sender SWS avoidance holds a short segment unless nothing
                // is outstanding (quiet) or it is half the peer's window.
                nagle: true,
                // SackFullTcpAgent::timeout_action has its own rule (sq_.clear() under
                // clear_on_timeout_, SACK blocks used again at once), not Sack1's; not modelled.
                rto_sack_reset: false,
                // Its recovery count (tcp-full.cc SackFullTcpAgent::dupack_action: pipe_ =
                // outstanding less SACKed bytes, lost ones kept) is near Sack1's but not it; not
                // modelled, RFC 6675's pipe stands in for it.
                sack1_pipe: false,
                // As Sack1 (kept from ns2_sack1): FullTcpAgent::dupack_action and
                // SackFullTcpAgent::dupack_action call slowdown(CLOSE_SSTHRESH_HALF |
                // CLOSE_CWND_HALF), halving cwnd_ (`lt_excluded`), and cancel_rtx_timer before
                // fast_retransmit, whose foutput then sets the timer afresh (`fr_rearm`).
                ..ns2_sack1()
            },
            cc_params: Vec::new(),
        },
        // Linux 3.14 (March 2014), the kernel goodbadwifi2015 ran. What differs from `linux`:
        // no RACK (added in 4.4): losses are found by the DupThresh rule plus early retransmit
        // (tcp_early_retrans = 3: RFC 5827 delayed by SRTT/4, tcp_pause_early_retransmit, and TLP,
        // added in 3.10); the rest as in `linux`: PRR (3.2), F-RTO with undo (new F-RTO in 3.10),
        // CUBIC with HyStart, IW 10 (2.6.39), RTO 1 s initial (3.1) / 200 ms min / 120 s max,
        // delayed ACK 40 ms with quick ACKs at the start. The receive window: tcp_rmem's default
        // maximum of 6 MiB with tcp_adv_win_scale 1 advertises half of it, 3 MiB.
        TcpProfile {
            about: "Linux 3.14: CUBIC (tcp_cubic.c arithmetic of 3.14) with HyStart, IW 10, SACK recovery with early retransmit \
                (RFC 5827, delayed SRTT/4) and Tail Loss Probe but no RACK, PRR, F-RTO with \
                undo, RTO 1 s / 200 ms / 120 s, delayed ACK 40 ms, 3 MiB receive window, \
                window growth only while cwnd-limited (tcp_is_cwnd_limited)",
            config: TcpConfig {
                profile: Name("linux_3_14"),
                rwnd: Rwnd::Bytes(3 << 20),
                rack: false,
                early_retransmit: true,
                // tcp_cong.c tcp_is_cwnd_limited, called by tcp_reno_cong_avoid and tcp_cubic.c
                // bictcp_cong_avoid with the packets in flight before the ACK (tcp_ack's
                // prior_in_flight).
                cwnd_limited: true,
                // tcp_input.c tcp_data_queue: every segment that is not the next in order enters
                // quick-ACK mode (tcp_enter_quickack_mode before the partial-packet check, and at
                // out_of_window for duplicates); later kernels (5.x) keep it for duplicates only,
                // which `linux` does not model.
                ooo_quickack: true,
                ..linux()
            },
            // CUBIC in 3.14's own arithmetic (v3.14 tcp_cubic.c bictcp_update, bictcp_cong_avoid,
            // tcp_cong.c tcp_cong_avoid_ai: whole packets, ACKs counted, the delayed-ACK ratio;
            // cubic.rs `law = "linux"`). RFC 9438's law ran here before: its target one smoothed
            // RTT ahead grows the window faster under a standing queue (validation/kernel/README.md).
            cc_params: vec![cc_defaults("cubic", CubicParams { law: Law::Linux, ..Default::default() })],
        },
    ]
});

/// The profile called `name`.
pub fn profile(name: &str) -> Result<&'static TcpProfile, String> {
    PROFILES.iter().find(|p| p.name() == name).ok_or_else(|| {
        let names: Vec<&str> = PROFILES.iter().map(TcpProfile::name).collect();
        format!("{name:?} is not a TCP profile; allowed: {}", names.join(", "))
    })
}

/// The two ends of one connection whose data flows in direction `dir`.
///
/// # Panics
/// On a configuration [`try_new_connection`] rejects (validate scenarios with it, or with
/// [`crate::transport::cc::registry::make_cc`], first).
pub fn new_connection(cfg: &TcpConfig, flow: u32, dir: Dir) -> (TcpSender, TcpReceiver) {
    try_new_connection(cfg, flow, dir).unwrap_or_else(|e| panic!("{e}"))
}

/// [`new_connection`] that reports an unknown congestion controller name or an impossible
/// setting as an error.
pub fn try_new_connection(cfg: &TcpConfig, flow: u32, dir: Dir) -> Result<(TcpSender, TcpReceiver), String> {
    if cfg.mss == 0 || cfg.iw == 0 || cfg.segs_per_ack == 0 {
        return Err(format!(
            "tcp: mss ({}), iw ({}) and segs_per_ack ({}) must be at least 1",
            cfg.mss, cfg.iw, cfg.segs_per_ack
        ));
    }
    if cfg.rwnd_bytes() < cfg.mss as u64 {
        return Err(format!(
            "tcp: rwnd ({} B) must hold at least one mss ({} B)",
            cfg.rwnd_bytes(),
            cfg.mss
        ));
    }
    if cfg.initial_rto == 0 {
        return Err("tcp: initial_rto must be positive".into());
    }
    if cfg.max_rto < cfg.min_rto {
        return Err(format!(
            "tcp: max_rto ({}) must be at least min_rto ({})",
            crate::units::fmt_time(cfg.max_rto),
            crate::units::fmt_time(cfg.min_rto)
        ));
    }
    Ok((TcpSender::new(cfg, flow, dir)?, TcpReceiver::new(cfg, flow, dir)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_tcp_key_has_its_help() {
        let docs = crate::params::Group::of::<TcpConfig>().docs();
        assert_eq!(docs.len(), keys().len());
        for d in docs {
            assert!(!d.help.is_empty(), "{} has no doc comment", d.name);
        }
    }

    #[test]
    fn ns2_windows_count_packets_of_the_flows_segment_size() {
        // ns-default.tcl: Agent/TCP window_ 20 (packets) whatever packetSize_ is.
        let ns2 = read_config(&json!({"profile": "ns2_sack1"})).unwrap();
        assert_eq!((ns2.mss, ns2.rwnd), (1000, Rwnd::Bytes(20_000)));
        let big = read_config(&json!({"profile": "ns2_sack1", "mss": 1448})).unwrap();
        assert_eq!(big.rwnd, Rwnd::Bytes(20 * 1448));
        let own = read_config(&json!({"rwnd": {"segments": 10}, "mss": 500})).unwrap();
        assert_eq!(own.rwnd, Rwnd::Bytes(5000));
        let bytes = read_config(&json!({"profile": "ns2_sack1", "rwnd": "64KiB"})).unwrap();
        assert_eq!(bytes.rwnd, Rwnd::Bytes(65536));
    }

    #[test]
    fn each_linux_profile_runs_its_kernels_cubic_arithmetic() {
        // v3.14 tcp_cubic.c counts ACKs (tcp_cong_avoid_ai(tp, ca->cnt)); 4.x and later count
        // the packets each ACK covers (tcp_cong_avoid_ai(tp, ca->cnt, acked)): cubic.rs's laws.
        let law = |t: Value| read_config(&t).unwrap().cc_params["law"].clone();
        assert_eq!(law(json!({"profile": "linux_3_14"})), json!("linux"));
        assert_eq!(law(json!({"profile": "linux"})), json!("linux_4"));
        assert_eq!(law(json!({"profile": "rfc"})), json!("rfc9438"));
        // a flow's own key still wins over its profile's
        let own = json!({"profile": "linux_3_14", "cc_params": {"law": "rfc9438"}});
        assert_eq!(law(own), json!("rfc9438"));
    }

    #[test]
    fn every_profiles_controller_defaults_are_that_controllers_own_keys() {
        // a profile's typed defaults name a registered controller, whose key check and parser
        // take them and keep every value (a struct written under another controller's name fails)
        for p in PROFILES.iter() {
            for (cc, table) in &p.cc_params {
                let ctx = CcContext {
                    mss: p.config.mss as u64,
                    hystart: p.config.hystart,
                };
                let resolved =
                    cc_params(cc, table, &ctx).unwrap_or_else(|e| panic!("{}: {cc}: {e}", p.name()));
                for (k, v) in table.as_object().expect("a table") {
                    assert_eq!(&resolved[k], v, "{}: {cc}.{k}", p.name());
                }
            }
        }
        let wrong = cc_defaults(
            "ledbat",
            CubicParams {
                law: Law::Linux,
                ..Default::default()
            },
        );
        assert!(cc_params(
            wrong.0,
            &wrong.1,
            &CcContext {
                mss: 1448,
                hystart: Hystart::Off
            }
        )
        .is_err());
    }

    #[test]
    fn a_key_overrides_its_profile_and_errors_name_the_key() {
        let c = read_config(&json!({"profile": "linux_3_14", "rack": true})).unwrap();
        assert!(c.rack && c.early_retransmit && c.cwnd_limited && c.prr);
        let e = read_config(&json!({"profile": "bsd"})).unwrap_err();
        assert!(
            e.starts_with("profile: \"bsd\" is not allowed; allowed: linux, rfc, "),
            "{e}"
        );
        let e = read_config(&json!({"cc": "vegas"})).unwrap_err();
        assert!(
            e.starts_with("cc: \"vegas\" is not allowed; allowed: newreno, "),
            "{e}"
        );
        let e = read_config(&json!({"rwnd": {"segments": 0}})).unwrap_err();
        assert!(e.starts_with("rwnd: "), "{e}");
        let e = read_config(&json!({"min_rto": "1s", "max_rto": "500ms"})).unwrap_err();
        assert!(e.starts_with("max_rto: 500ms is below min_rto (1s)"), "{e}");
    }
}
