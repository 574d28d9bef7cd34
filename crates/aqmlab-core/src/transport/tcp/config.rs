//! A TCP connection's keys: [`TcpConfig`] (each field a flow key, declared once) and the types of
//! its keys (the window in bytes or segments, the delayed-ACK timer, TSO autosizing, the name of a
//! controller or a profile). Their defaults are the profiles' (`profiles.rs`); reading a flow's
//! keys over its profile is `read.rs`.

use super::accecn::ReceiverEcn;
use super::rto::{RtoRules, RttEstimator};
use crate::packet::{Ecn, EcnMode};
use crate::transport::cc::registry::names as cc_names;
use crate::transport::cc::Hystart;
use crate::transport::wire::Pacing;
use crate::units::Named;
use crate::units::{as_dur, as_size, parse_time, Dur, Size, Time, MS};
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A TCP connection's model, declared once: each field is a flow key of the TCP-based kinds
/// (`tcp`, `web`, `webpage`) with its type, its help (the doc comment: `aqmlab list tcp`, the
/// JSON Schema) and its defaults (a profile's value, `profiles.rs`); the struct read from a flow
/// entry over its profile (`params::read`) is what the endpoints run, and written back it
/// is the flow's resolved TCP keys. The fields marked `skip` come from the flow's other keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// TCP profile: the defaults of the other TCP keys (`aqmlab list tcp`).
    #[schemars(with = "Name")]
    pub profile: Profile,
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
    /// The initial window after a retransmitted SYN: "rfc" (RFC 5681 3.1: one segment after any
    /// retransmission), "linux_3_14" (Linux 3.1-5.0, tcp_init_metrics: one segment only after
    /// more than one, since the 1 s initial RTO of RFC 6298 makes a single retransmission
    /// common) or "linux" (5.1 on, tcp_init_transfer: nor then when the SYN-ACK echoes the first
    /// SYN's timestamp, the retransmissions found spurious by tcp_try_undo_spurious_syn).
    pub syn_loss_iw: SynLossIw,
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
    /// How the receiver sizes the window it advertises: "fixed" (`rwnd`), "linux" (Linux
    /// 6.18's receive-buffer auto-tuning, tcp_rcv_space_adjust and tcp_grow_window: the window
    /// opens near 64 KB and widens with what the application reads per round trip;
    /// `rcvbuf.rs`) or "linux_5" (the same in Linux 5.x's rules).
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
    /// Linux 5.19 on (tcp_output.c tcp_tso_autosize, net.ipv4.tcp_tso_rtt_log): the TSO
    /// autosize also holds 64 KB >> (min RTT in us >> this) bytes, a segment or more below
    /// about 3 ms of minimum RTT; 0: not added (Linux before 5.19).
    pub tso_rtt_log: u32,
    /// Data segments a connection sends before pacing holds any back: Linux 5.x-6.x
    /// (tcp_output.c tcp_update_skb_after_send) moves its departure clock only once
    /// `tp->data_segs_out` (retransmissions included) has reached 10, as sch_fq's initial quantum
    /// lets a new flow's first 10 packets through, so an initial window of 10 leaves at once.
    /// 0: paced from the first segment.
    pub unpaced_segs: u32,
    /// Linux 5.x-6.x (tcp_update_skb_after_send, "OS jitter"): a burst that leaves after its
    /// pacing time (held by the window, the application or a late timer) shortens the gap after
    /// it by that lateness, at most to half its length. Off: every gap is the burst's full
    /// length at the pacing rate.
    pub pacing_credit: bool,
    /// TCP Small Queues, for a sender whose first hop is its own host's qdisc (`local_sender`):
    /// the bytes of its packets not yet freed below TCP (Linux's sk_wmem_alloc: in the qdisc,
    /// the driver's queues and the hardware, until the TX completion) stop new data above a
    /// limit, and a completion lets it go on (`sender/pacing.rs`). "linux" (Linux 4.20-6.x
    /// tcp_small_queue_check: max(two bursts, 2^-10 s at the pacing rate), applied to a sender
    /// that paces through its host's fq only), "linux_3_14" (Linux 3.14's tcp_write_xmit:
    /// max(tcp_limit_output_bytes = 128 KiB, 2^-10 s at the pacing rate) for every sender,
    /// paced or not) or "off".
    pub small_queues: SmallQueues,
    /// RFC 6937 PRR in SACK recovery; off: cwnd = ssthresh at once (RFC 6675).
    pub prr: bool,
    /// PRR's rules where its versions differ: "rfc6937" (RFC 6937 section 3: the reduction
    /// proportional to RecoverFS, the FlightSize at the start of recovery; the slow-start
    /// bound's extra segment on every ACK; cwnd set on every ACK), "linux_3_14" (tcp_input.c
    /// tcp_cwnd_reduction of 3.2-4.1: proportional to the window before the reduction,
    /// `prior_cwnd`; the extra segment on every ACK) or "linux" (6.x: as 3.14's, but the
    /// extra segment only on an ACK that advances snd_una and finds no new loss, and an ACK
    /// that delivers nothing leaves cwnd alone). All count as delivered what an ACK newly
    /// acknowledges or SACKs, never again what was SACKed before.
    pub prr_rule: PrrRule,
    /// A SACK recovery that ends on an ACK while some segment is still marked lost starts the
    /// next one on that same ACK, as Linux's tcp_fastretrans_alert does (tcp_input.c: step D
    /// leaves Recovery when snd_una reaches high_seq, then step E enters it again at once when
    /// `tcp_time_to_recover` finds `lost_out` above 0); a controller that follows the
    /// connection's state (BBR's `cong_control`) sees recovery go on, not end and restart. Off:
    /// the entry rules wait for a later ACK (RFC 6675 section 5, RACK's marks).
    pub recovery_reentry: bool,
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
    /// What SACK recovery sends once no segment marked lost may go and new data cannot (the
    /// receive window or the host's queue stops it): "rfc6675" (NextSeg rules 3 and 4, RFC
    /// 6675 4: a hole below the highest SACKed segment not yet deemed lost, then once per
    /// recovery the highest outstanding segment, the rescue retransmission), "forward" (rule 3
    /// only: Linux's forward retransmit, tcp_output.c tcp_xmit_retransmit_queue with
    /// tcp_can_forward_retransmit, until 4.11) or "lost" (neither: since "tcp: remove forward
    /// retransmit feature", 4.11, tcp_xmit_retransmit_queue resends only segments marked lost,
    /// and Linux never had a rescue). Not read by ns-2's Sack1 recovery (`sack1_pipe`). Written
    /// out only when not "rfc6675".
    #[serde(default, skip_serializing_if = "NextSeg::is_default")]
    pub nextseg: NextSeg,
    /// Where an ACK's RTT samples come from: "tsecr" (now - TSecr of an ACK that advances
    /// snd_una, RFC 7323 4.3, for the retransmission timer and the controller alike) or
    /// "linux" (tcp_input.c tcp_clean_rtx_queue, tcp_sacktag_one, tcp_ack_update_rtt): the send
    /// times of the never-retransmitted segments the ACK newly acknowledges (none at all when it
    /// cumulatively acknowledges a retransmitted one: Karn's rule) or newly SACKs, the oldest
    /// for the timer's estimate, the newest (the newest SACKed one if any) for the controller
    /// and the minimum RTT; with none of them, an ACK that advances snd_una falls back to the
    /// timestamp echo at the timestamps' 1 ms resolution (tcp_rtt_tsopt_us, 0 counted as 1
    /// ms). Written out only when not "tsecr".
    #[serde(default, skip_serializing_if = "RttSample::is_default")]
    pub rtt_sample: RttSample,
    /// Which delivery of a retransmitted segment RACK takes as the retransmission's, and so
    /// lets advance its clock (RACK.xmit_ts, RACK.rtt): "echo" (RFC 8985 6.2 step 2's
    /// timestamp test: the ACK echoes a TSval no older than the retransmission), "min_rtt"
    /// (Linux tcp_recovery.c tcp_rack_advance, since commit deed7be78f51 of 4.11: at least the
    /// minimum RTT has passed since it was sent) or "linux" (both as Linux calls them:
    /// tcp_sacktag_one passes a SACK to tcp_rack_advance's test alone, tcp_clean_rtx_queue a
    /// cumulative ACK only if it also passes tcp_skb_spurious_retrans, the echo test in
    /// whole milliseconds). A receiver echoes the TSval of the last segment that advanced its
    /// window (RFC 7323 4.3), so an out-of-order retransmission's SACK never passes the echo
    /// test, and a lost retransmission below it waits for the retransmission timer; the
    /// cumulative ACK of a spuriously retransmitted segment echoes the original, which the
    /// minimum-RTT test alone takes for the retransmission's delivery after a delay spike.
    /// Written out only when not "echo".
    #[serde(default, skip_serializing_if = "RackRetx::is_default")]
    pub rack_retx: RackRetx,
    /// RFC 8985 section 7 Tail Loss Probe (SACK only).
    pub tlp: bool,
    /// The tick rate (HZ) of the kernel timers that run RACK's reordering timer, the tail loss
    /// probe, the retransmission timer and the receiver's delayed ACK: 0 fires each at its own
    /// time (RFC 8985, RFC 6298, `delack`); n > 0 as Linux arms them on a kernel of n ticks a
    /// second (tcp_recovery.c tcp_rack_mark_lost, tcp_output.c tcp_schedule_loss_probe:
    /// `usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US)`, the 2 ms floor included;
    /// inet_csk_reset_xmit_timer with the RTO in jiffies; tcp_send_delayed_ack: jiffies + ato),
    /// run by the timer wheel (`timer_wheel`), ticks counted from the run's start.
    pub timer_hz: u32,
    /// RFC 5682 F-RTO (SACK-enhanced, as Linux) with undo of spurious timeouts from the
    /// timestamp echo (RFC 3522 Eifel detection, Linux tcp_packet_delayed).
    pub frto: bool,
    /// RFC 5827 early retransmit as Linux 3.5-4.x ran it (SACK only): with fewer than 4
    /// segments outstanding, nothing new to send and one SACKed, recovery starts after SRTT/4.
    pub early_retransmit: bool,
    /// Data segments ACKed at once at the start of a connection (Linux quick-ACK mode); 0 = none.
    pub quickack: u32,
    /// Which data segments put the receiver back in quick-ACK mode (tcp_enter_quickack_mode):
    /// the next min(rwnd / (2 mss) (2 if that is 0), `quickack`) ACKs, that segment's own
    /// included, go at once (tcp_incr_quickack). "off": none, only the segment's own ACK is
    /// immediate; "duplicate": a segment wholly below the next expected byte, as Linux 4.18 on
    /// does (tcp_input.c tcp_data_queue's retransmit branch and tcp_send_dupack; "tcp: do not
    /// force quickack when receiving out-of-order packets", 4.18 and the stable trees of
    /// August 2018, took it from the out-of-order path); "out_of_sequence": every segment that does not start at the next
    /// expected byte (out of order, a duplicate or an overlap), as Linux 3.x does.
    pub requick: Requick,
    /// A classic ECN (RFC 3168) receiver's own quick ACKs: at most this many ACKs, that
    /// segment's own included, go at once after a CE-marked data segment that finds no ECE
    /// pending (the first mark since the sender's CWR) and after a not-ECT data segment once
    /// ECT ones have arrived (a retransmission), each in order or out of order (tcp_input.c
    /// tcp_data_ecn_check, from tcp_event_data_recv and tcp_data_queue_ofo: "Better not delay
    /// acks, sender can have a very low cwnd"); min(rwnd / (2 mss) (2 if that is 0), this)
    /// (tcp_incr_quickack). Linux 4.18 on pass 2 ("tcp: do not aggressively quick ack after ECN
    /// events"), earlier kernels `quickack`'s 16. 0: none.
    pub ecn_quickack: u32,
    /// An ECN reduction lowers the window by PRR over Linux's CWR state instead of cutting it
    /// to ssthresh at once (tcp_input.c tcp_enter_cwr -> tcp_init_cwnd_reduction, then
    /// tcp_cwnd_reduction on each ACK until snd_una passes the snd_nxt of the reduction, where
    /// tcp_end_cwnd_reduction sets ssthresh; "tcp: use PRR to reduce cwin in CWR state", Linux
    /// 3.7). With `prr` and classic ECN feedback (RFC 3168; DCTCP's too), for a controller that
    /// does not own its window. Off: RFC 3168 6.1.2's reduction at once.
    pub cwr_prr: bool,
    /// Where an ACK's window growth comes relative to its loss recovery and ECN response:
    /// "grow_first", the controller's growth, then recovery's entry or exit and ECE's
    /// reduction (Linux 3.x tcp_ack: tcp_cong_avoid, when tcp_may_raise_cwnd, before
    /// tcp_fastretrans_alert; ns-2 and the RFCs' order), so the ACK that starts a reduction
    /// first grows the window the reduction starts from and the ACK that ends one does not grow
    /// it; "recovery_first", Linux 6.x (tcp_ack: tcp_fastretrans_alert, then tcp_cong_control,
    /// which grows the window only outside Recovery and CWR): the ACK that starts a reduction
    /// leaves the window as it was and the ACK that ends one grows it from ssthresh.
    pub ack_order: AckOrder,
    /// What the controller's window growth counts on an ACK that acknowledges new data:
    /// "acked", the bytes the cumulative ACK covers, those SACKed before included (RFC 3465's
    /// bytes acknowledged; Linux 3.x tcp_ack passes tcp_cong_avoid the packets its
    /// tcp_clean_rtx_queue removed); "delivered", the bytes the ACK newly delivered, acknowledged
    /// or SACKed for the first time (Linux 6.x tcp_cong_control passes tcp_cong_avoid
    /// acked_sacked, tcp_newly_delivered's count), so the ACK that fills a hole below SACKed data
    /// grows the window by the hole alone. A controller that owns its window takes the
    /// cumulative count either way.
    pub growth_count: GrowthCount,
    /// A classic ECN receiver ACKs a data segment that carries CWR at once (ICSK_ACK_NOW in
    /// tcp_ecn_accept_cwr: include/net/tcp_ecn.h in 6.18, tcp_input.c before; not in 3.x).
    pub cwr_ack: bool,
    /// A receive gap longer than the receiving end's RTO puts the receiver back in quick-ACK
    /// mode, as every Linux does (tcp_input.c tcp_event_data_recv, "Too long gap. Apparently
    /// sender failed to restart window"): when an in-order data segment arrives more than the
    /// RTO after the previous one, the next min(rwnd / (2 mss), `quickack`) ACKs, its own
    /// included, go at once (tcp_incr_quickack). The receiver's RTO is the one Linux sets from
    /// the handshake's RTT sample (tcp_rtt_estimator's first sample, tcp_set_rto), the only
    /// sample a host that sends no data takes.
    pub gap_quickack: bool,
    /// The delayed ACK's timeout adapts to the gaps between in-order segments, as Linux's
    /// `ato` does (tcp_input.c tcp_event_data_recv, tcp_output.c tcp_send_delayed_ack,
    /// tcp_timer.c tcp_delack_timer_handler, in the kernel's ticks with `timer_hz`): `delack`
    /// (TCP_ATO_MIN) at the first data segment; a gap of at most half of it moves the timeout
    /// halfway back to it, a gap shorter than the timeout moves it to half of itself plus the
    /// gap (at most the receiving end's RTO), and a delayed-ACK timer that fires doubles it (at
    /// most the RTO); a timeout grown past `delack` is bounded by 500 ms (HZ / 2; 200 ms for a
    /// pushed segment) and by the receiving end's SRTT (at least `delack`). `linux` then bounds
    /// every timeout by 200 ms (TCP_DELACK_MAX, icsk_delack_max, since 5.10); `linux_3_14` does
    /// not. `off`: `delack` always.
    pub adaptive_ato: AdaptiveAto,
    /// The connection's opener acknowledges the SYN-ACK with a segment of its own, before any
    /// data (RFC 9293 3.5's three-way handshake; Linux tcp_rcv_synsent_state_process calls
    /// tcp_send_ack, and the application's first write comes after connect() returns). Off: the
    /// first data segment carries that ACK. The receiving end takes its handshake RTT sample
    /// from the first segment that echoes its SYN-ACK, this one when on.
    pub handshake_ack: bool,
    /// D-SACK (RFC 2883; Linux net.ipv4.tcp_dsack, on by default): the receiver reports a
    /// segment that arrives again as the first SACK block of the ACK it sends. Among what the
    /// sender reads from it, the tail loss probe's episode ends without a loss when the probe
    /// proves needless (`tlp`). SACK only.
    pub dsack: bool,
    /// Which lone segment the application's read ACKs at once (Linux tcp_cleanup_rbuf, when
    /// tcp_measure_rcv_mss set ICSK_ACK_PUSHED, the read took everything in order and no
    /// out-of-order data is held): "off" (none: it waits for a second segment or the delayed-ACK
    /// timer), "short" (a segment shorter than the MSS, Linux before 6.6) or "psh" (also a
    /// full-sized segment with PSH, the end of a sender's write: Linux 6.6 on, and 5.15.y /
    /// 6.1.y, "tcp: fix delayed ACKs for MSS boundary condition").
    pub push_ack: PushAck,
    /// Which data segments the sender flags with PSH: "off" (none), "write" (the last of each
    /// application write: a transfer's or a record's end, where tcp_push marks the tail of what
    /// a write queued, net/ipv4/tcp.c tcp_sendmsg_locked) or "skb" (also the last of each GSO
    /// packet of new data of more than one segment, Linux 5.4 on: tcp_output.c
    /// __tcp_transmit_skb; packets as tcp_write_xmit cuts them, at most the TSO autosize,
    /// tcp_tso_autosize, and half the window). The receiver's `push_ack = "psh"` ACKs a lone
    /// flagged segment at once.
    pub psh: Psh,
    /// Linux's TSO deferral (tcp_output.c tcp_tso_should_defer, 4.20 on): new data that fills
    /// less than a TSO autosize packet and a third of min(cwnd, rwnd) waits for the next ACK
    /// when the window limits it, the last transmission was under 1 ms ago and an ACK is due,
    /// never in recovery. When an ACK is due is the [`TsoDefer`] rule; "off": never deferred.
    pub tso_defer: TsoDefer,
    /// Linux's SACK compression (tcp_input.c __tcp_ack_snd_check, since 4.18): while
    /// out-of-order data is held, the first three ACKs at one rcv_nxt go at once
    /// (TCP_FASTRETRANS_THRESH, `dup_ack_counter`); later ones wait for a timer of min(1 ms,
    /// RTT / 20) (tcp_comp_sack_delay_ns; RTT the receiver's estimate, or the handshake's if
    /// lower) that fires at the end of its 100 us slack (tcp_comp_sack_slack_ns), or until 44
    /// are held back (tcp_comp_sack_nr); any ACK sent ends the wait. Off: every out-of-order
    /// segment is ACKed at once.
    pub sack_compress: bool,
    /// Restart the window after an idle period longer than the RTO (RFC 5681 4.1, as Linux
    /// tcp_cwnd_restart with tcp_slow_start_after_idle: cwnd halved per RTO of idleness, not
    /// below min(IW, cwnd); ssthresh = max(ssthresh, 3/4 cwnd)).
    pub idle_restart: bool,
    /// When the window may grow: only while it limits the sender, by the rule of a Linux
    /// release ([`CwndLimited`]), or on every ACK, application-limited or not ("off").
    pub cwnd_limited: CwndLimited,
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
    /// Bytes written as the connection opens, before the data, outside the on periods (a
    /// bulk flow's only); 0 = none. From the flow's `preamble`.
    #[serde(skip)]
    pub preamble: u64,
}

/// How the receiver sizes its window (the flow key `rcv_window`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RcvWindow {
    /// `rwnd` throughout.
    Fixed,
    /// Linux 6.18's receive-buffer auto-tuning (`rcvbuf.rs`).
    Linux,
    /// Linux 5.x's: the buffer grows by whole segments of estimated memory and
    /// half of it is window (tcp_adv_win_scale 1), without the measured ratio (`rcvbuf.rs`).
    #[serde(rename = "linux_5")]
    Linux5,
}

/// Where RTT samples come from (the TCP key `rtt_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RttSample {
    /// The timestamp echo of each ACK that advances snd_una.
    #[default]
    Tsecr,
    /// Linux's: the segments' send times, the echo at 1 ms when Karn's rule leaves none.
    Linux,
}

impl RttSample {
    pub fn is_default(&self) -> bool {
        *self == RttSample::Tsecr
    }
}

/// What SACK recovery sends beyond lost segments and new data (the TCP key `nextseg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NextSeg {
    /// RFC 6675's rules 3 and 4: an unlost hole below the highest SACKed segment, the rescue.
    #[default]
    Rfc6675,
    /// Rule 3 only.
    Forward,
    /// Neither.
    Lost,
}

impl NextSeg {
    pub fn is_default(&self) -> bool {
        *self == NextSeg::Rfc6675
    }
}

/// Which deliveries of a retransmitted segment advance RACK (the TCP key `rack_retx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RackRetx {
    /// Those whose ACK echoes a timestamp no older than the retransmission.
    #[default]
    Echo,
    /// Those at least the minimum RTT after the retransmission.
    MinRtt,
    /// SACKed ones as `MinRtt`; cumulatively acknowledged ones as both `MinRtt` and `Echo`.
    Linux,
}

impl RackRetx {
    pub fn is_default(&self) -> bool {
        *self == RackRetx::Echo
    }
}

/// Which lone segment a read ACKs at once (the TCP key `push_ack`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PushAck {
    Off,
    /// Shorter than the MSS.
    Short,
    /// Shorter than the MSS, or full-sized with PSH.
    Psh,
}

/// Which data segments restore the receiver's quick ACKs (the TCP key `requick`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Requick {
    Off,
    /// A segment wholly below the next expected byte.
    Duplicate,
    /// Any segment that does not start at the next expected byte.
    OutOfSequence,
}

/// Where an ACK's window growth comes (the TCP key `ack_order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AckOrder {
    /// Growth, then loss recovery and the ECN response (Linux 3.x).
    GrowFirst,
    /// Loss recovery and the ECN response, then growth outside a reduction (Linux 6.x).
    RecoveryFirst,
}

/// What window growth counts (the TCP key `growth_count`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GrowthCount {
    /// The bytes the cumulative ACK covers (Linux 3.x, RFC 3465).
    Acked,
    /// The bytes newly acknowledged or SACKed (Linux 6.x).
    Delivered,
}

/// Which data segments carry PSH (the TCP key `psh`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Psh {
    Off,
    /// The last segment of each application write.
    Write,
    /// Also the last segment of each GSO packet of more than one segment.
    Skb,
}

/// When Linux's TSO deferral holds new data back for an ACK that is due (the TCP key
/// `tso_defer`); the oldest unacknowledged segment, Linux's rtx queue head, sent at `h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TsoDefer {
    /// Never deferred.
    Off,
    /// Deferred when `h` is at least half an SRTT ago: Linux 4.20 to 6.17 (50c8339e9299, "tcp:
    /// tso: restore IW10 after TSO autosizing"), and the stable trees before October 2025.
    HalfSrtt,
    /// Deferred when the ACK expected at `h` + SRTT is at most min(1 ms, SRTT / 2) away: Linux
    /// 6.18 (295ce1eb36ae, "tcp: fix tcp_tso_should_defer() vs large RTT"), backported to the
    /// stable trees from 5.4 in October 2025.
    AckDue,
}

/// Which rule says whether the window limits the sender, the gate on the window's growth by
/// Reno, CUBIC and Prague (the TCP key `cwnd_limited`; `true` and `false` stand for
/// "linux_3_14" and "off", and are how those two are written back). Linux's congestion
/// avoidance steps return early unless tcp_is_cwnd_limited says the window is in use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndLimited {
    /// No gate: the window grows on every ACK.
    Off,
    /// Linux 3.14 (net/ipv4/tcp_cong.c tcp_is_cwnd_limited): what was in flight before the
    /// ACK fills the window, or leaves less of it than a TSO deferral may hold back.
    Linux3_14,
    /// Linux 3.16 to 5.x (ca8a22634381, "tcp: make cwnd-limited checks measurement-based, and
    /// gentler"): each pass of tcp_write_xmit that sends records, through tcp_cwnd_validate,
    /// the most segments out and whether the window stopped the pass, once per flight; in
    /// slow start the window is limiting while under twice that most, else when it stopped
    /// the flight's last record.
    Linux5,
    /// Linux 6.0 on, the same record as amended in 2022 (299bcb55ecd1, "tcp: fix cwnd-limited
    /// bug for TSO deferral where we send nothing"; f4ce91ce12a7, "tcp: fix
    /// tcp_cwnd_validate() to not forget is_cwnd_limited"): a pass that sends nothing but is
    /// stopped by the window records too, a flight once stopped by the window stays so, and
    /// in slow start the window is limiting when stopped or under twice the most.
    Linux,
}

impl Named for CwndLimited {
    const ALL: &'static [(&'static str, CwndLimited)] = &[
        ("off", CwndLimited::Off),
        ("linux_3_14", CwndLimited::Linux3_14),
        ("linux_5", CwndLimited::Linux5),
        ("linux", CwndLimited::Linux),
    ];
    const BOOLS: (CwndLimited, CwndLimited) = (CwndLimited::Linux3_14, CwndLimited::Off);
    const WRITES_BOOLS: bool = true;
    const ABOUT: &'static str = "when the window may grow: only while it limits the sender, by a Linux release's rule, or always (\"off\")";
}

impl CwndLimited {
    /// Whether the rule keeps a record of each flight (tcp_cwnd_validate, 3.16 on).
    pub fn records_flights(self) -> bool {
        matches!(self, CwndLimited::Linux5 | CwndLimited::Linux)
    }
}

/// When a retransmitted SYN leaves the initial window at one segment (the flow key
/// `syn_loss_iw`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SynLossIw {
    /// RFC 5681 3.1: after any retransmission.
    Rfc,
    /// Linux 3.1-5.0 (net/ipv4/tcp_metrics.c tcp_init_metrics): after more than one.
    #[serde(rename = "linux_3_14")]
    Linux3_14,
    /// Linux 5.1 on (net/ipv4/tcp_input.c tcp_init_transfer, tcp_try_undo_spurious_syn): after
    /// more than one, unless the SYN-ACK echoes the first SYN's timestamp.
    Linux,
}

/// The delayed ACK's adaptive timeout (the flow key `adaptive_ato`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdaptiveAto {
    /// The delayed ACK waits `delack`.
    Off,
    /// Linux 3.14 (net/ipv4/tcp_input.c tcp_event_data_recv, tcp_output.c
    /// tcp_send_delayed_ack, tcp_timer.c tcp_delack_timer_handler): no bound after HZ / 2 and the SRTT.
    #[serde(rename = "linux_3_14")]
    Linux3_14,
    /// Linux 5.10 on: every timeout at most icsk_delack_max (TCP_DELACK_MAX by default).
    Linux,
}

/// PRR's rules (the flow key `prr_rule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PrrRule {
    /// RFC 6937 section 3.
    Rfc6937,
    /// Linux 3.2-4.1 (net/ipv4/tcp_input.c tcp_cwnd_reduction, tcp_init_cwnd_reduction).
    #[serde(rename = "linux_3_14")]
    Linux3_14,
    /// Linux 6.x (net/ipv4/tcp_input.c tcp_cwnd_reduction).
    Linux,
}

/// TCP Small Queues' rule (the flow key `small_queues`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SmallQueues {
    /// No limit on what waits below TCP.
    Off,
    /// Linux 4.20-6.x (net/ipv4/tcp_output.c tcp_small_queue_check), for a sender pacing
    /// through its host's fq.
    Linux,
    /// Linux 3.14 (net/ipv4/tcp_output.c tcp_write_xmit), for every sender at its host.
    #[serde(rename = "linux_3_14")]
    Linux3_14,
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

/// A TCP profile's name (the key `profile`; its defaults are `profiles.rs`'s), in the order of
/// the profiles' registry (`PROFILES`, whose first is the default). Written and read as its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Linux,
    Rfc,
    Ns2Sack1,
    Ns2Linux,
    Ns2Fulltcp,
    Linux3_14,
}

impl Profile {
    /// Every profile, in the registry's order.
    pub const ALL: [Profile; 6] = [
        Profile::Linux,
        Profile::Rfc,
        Profile::Ns2Sack1,
        Profile::Ns2Linux,
        Profile::Ns2Fulltcp,
        Profile::Linux3_14,
    ];

    /// The name a scenario gives it.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Linux => "linux",
            Profile::Rfc => "rfc",
            Profile::Ns2Sack1 => "ns2_sack1",
            Profile::Ns2Linux => "ns2_linux",
            Profile::Ns2Fulltcp => "ns2_fulltcp",
            Profile::Linux3_14 => "linux_3_14",
        }
    }
}

impl std::ops::Deref for Profile {
    type Target = str;
    fn deref(&self) -> &str {
        self.name()
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Profile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Profile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = static_name(d, Profile::ALL.iter().map(|p| p.name()))?;
        Ok(*Profile::ALL
            .iter()
            .find(|p| p.name() == name.0)
            .expect("one of the names"))
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

impl TcpConfig {
    /// The pacing the sender runs ([`Pacing`]), `None` when `pacing` is off and the
    /// controller does not need it (`cc_paces`: a rate-based controller, which Linux always
    /// paces).
    pub fn pacing_params(&self, cc_paces: bool) -> Option<Pacing> {
        (self.pacing || cc_paces).then_some(Pacing {
            ss_ratio: self.pacing_ss_ratio,
            ca_ratio: self.pacing_ca_ratio,
            tso_segs: self.tso_segs.0,
            rtt_log: self.tso_rtt_log,
            ..Pacing::LINUX
        })
    }

    /// The receive window in bytes.
    pub fn rwnd_bytes(&self) -> u64 {
        self.rwnd.bytes(self.mss)
    }

    /// The rules of the retransmission timer's estimator (`rto_tick`, `linux_rto`).
    pub fn rto_rules(&self) -> RtoRules {
        match (self.rto_tick, self.linux_rto) {
            (0, false) => RtoRules::Rfc6298,
            (0, true) => RtoRules::Linux,
            (tick, _) => RtoRules::Ns2 { tick },
        }
    }

    /// A new estimator of the retransmission timer as this configuration runs it.
    pub fn rtt_estimator(&self) -> RttEstimator {
        RttEstimator::with_rules(self.initial_rto, self.min_rto, self.max_rto, self.rto_rules())
    }
}
