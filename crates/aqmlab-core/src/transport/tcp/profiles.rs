//! The TCP profiles: named sets of defaults for the flow keys (`rfc`, the RFC set; `ns2_sack1`,
//! ns-2.35's one-way Sack1 agent with the DelAck sink, `ns2_linux`, its TCP/Linux agent running
//! CUBIC into a Sack1 sink, and `ns2_fulltcp`, its two-way FullTcp/Sack agent, each value sourced
//! from ns-2's files; `linux`, a current Linux sender and receiver; `linux_3_14`, the 2014
//! kernel), and their registry ([`PROFILES`], [`profile`]).

use super::accecn::ReceiverEcn;
use super::config::{
    AckOrder, AdaptiveAto, CwndLimited, DataEcn, GrowthCount, Name, NextSeg, Profile, PrrRule, Psh, PushAck,
    RackRetx, RcvWindow, Requick, RttSample, Rwnd, SmallQueues, SynLossIw, TcpConfig, TsoDefer, TsoSegs,
};
use super::rto;
use crate::packet::EcnMode;
use crate::transport::cc::cubic::{CubicParams, HystartAcks, HystartMinRtt, HystartRound, HystartRtt, Law};
use crate::transport::cc::Hystart;
use crate::units::{MS, SEC};
use serde::Serialize;
use serde_json::Value;

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
        self.config.profile.name()
    }
}

// RFC TCP with Linux-like defaults; every other profile is this one with what differs.
pub(crate) fn rfc() -> TcpConfig {
    TcpConfig {
        profile: Profile::Rfc,
        cc: Name("cubic"),
        cc_params: Value::Null,
        ecn: EcnMode::Off,
        receiver_ecn: ReceiverEcn::Accecn,
        data_ecn: DataEcn::Negotiated,
        sack: true,
        iw: 10,
        syn_loss_iw: SynLossIw::Rfc,
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
        tso_rtt_log: 0,
        unpaced_segs: 0,
        pacing_credit: false,
        // TCP Small Queues are Linux's (net/ipv4/tcp_output.c), not in the RFCs or ns-2.
        small_queues: SmallQueues::Off,
        prr: false,
        prr_rule: PrrRule::Rfc6937,
        recovery_reentry: false,
        lt_excluded: false,
        impatient: false,
        rto_sack_reset: false,
        rate_halving: false,
        sack1_pipe: false,
        rack: false,
        nextseg: NextSeg::Rfc6675,
        rtt_sample: RttSample::Tsecr,
        rack_retx: RackRetx::Echo,
        tlp: false,
        timer_hz: 0,
        frto: false,
        early_retransmit: false,
        quickack: 0,
        requick: Requick::Off,
        ecn_quickack: 0,
        cwr_ack: false,
        cwr_prr: false,
        ack_order: AckOrder::GrowFirst,
        growth_count: GrowthCount::Acked,
        gap_quickack: false,
        adaptive_ato: AdaptiveAto::Off,
        handshake_ack: false,
        dsack: false,
        push_ack: PushAck::Off,
        psh: Psh::Off,
        tso_defer: TsoDefer::Off,
        sack_compress: false,
        idle_restart: false,
        cwnd_limited: CwndLimited::Off,
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
        preamble: 0,
    }
}

/// The `linux` profile's CONFIG_HZ, the rate of its kernel's timer ticks (RACK's and the loss
/// probe's timers, `timer_hz`) and jiffies (tcp_cubic.c's clock, CUBIC's `hz`): 250, the
/// default of Debian's and Ubuntu's kernels and of the kernel the matrix ran
/// (validation/kernel/README.md).
const LINUX_HZ: u32 = 250;

// A current Linux sender and receiver (net/ipv4 of Linux 6.x), where its loss recovery
// differs from the RFC set: RACK-TLP (tcp_recovery = 1, tcp_early_retrans = 3), PRR
// (tcp_input.c tcp_cwnd_reduction), CUBIC with HyStart, IW 10 (TCP_INIT_CWND), RTO 1 s
// initial (TCP_TIMEOUT_INIT) / 200 ms floor (TCP_RTO_MIN) / 120 s cap (TCP_RTO_MAX),
// delayed ACK 40 ms (TCP_DELACK_MIN).
pub(crate) fn linux() -> TcpConfig {
    TcpConfig {
        profile: Profile::Linux,
        cc: Name("cubic"),
        ecn: EcnMode::Off,
        receiver_ecn: ReceiverEcn::Accecn,
        data_ecn: DataEcn::Negotiated,
        sack: true,
        iw: 10,
        // tcp_input.c tcp_init_transfer: cwnd 1 only after more than one SYN retransmission,
        // none of them found spurious (tcp_try_undo_spurious_syn, 5.1 on).
        syn_loss_iw: SynLossIw::Linux,
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
        // tcp_moderate_rcvbuf 1: the receive buffer auto-tunes and the window grows with it
        // (rcvbuf.rs, Linux 6.18's rules; with HyStart's round as tcp_cubic.c starts it, this is
        // what makes the model leave slow start where the kernel does: validation/kernel/README.md).
        rcv_window: RcvWindow::Linux,
        abc: true,
        hystart: Hystart::Linux,
        pacing: false,
        // tcp_output.c tcp_update_skb_after_send: the clock starts at data_segs_out 10, and a
        // late burst's lateness shortens the next gap by up to half.
        unpaced_segs: 10,
        pacing_credit: true,
        // tcp_small_queue_check (Linux 4.20-6.x), modelled for a sender pacing through fq.
        small_queues: SmallQueues::Linux,
        prr: true,
        // tcp_input.c tcp_cwnd_reduction (6.x): prior_cwnd, the conditional extra segment.
        prr_rule: PrrRule::Linux,
        // tcp_input.c tcp_fastretrans_alert enters Recovery again on the ACK that leaves it
        // while lost_out > 0 (3.14's and 6.x's alike).
        recovery_reentry: true,
        rate_halving: false,
        rack: true,
        // tcp_input.c tcp_clean_rtx_queue, tcp_sacktag_one and tcp_ack_update_rtt (4.x-6.x):
        // the timer times the oldest segment an ACK newly acknowledges, the controller and the
        // minimum RTT the newest, a SACKed one first; Karn's rule falls back to the echo in ms.
        rtt_sample: RttSample::Linux,
        // tcp_recovery.c tcp_rack_advance: the SACK of a retransmission advances RACK once the
        // minimum RTT has passed since it was sent, whatever the ACK echoes; tcp_input.c
        // tcp_clean_rtx_queue: a cumulative ACK echoing a TSval older than the retransmission
        // (tcp_skb_spurious_retrans) does not advance it at all.
        rack_retx: RackRetx::Linux,
        // tcp_output.c tcp_xmit_retransmit_queue (4.11 on): only segments marked lost.
        nextseg: NextSeg::Lost,
        tlp: true,
        // tcp_dsack = 1 (the receiver's tcp_dsack_set; the probe's episode, tcp_process_tlp_ack).
        dsack: true,
        timer_hz: LINUX_HZ,
        // tcp_frto = 2 (F-RTO, tcp_process_loss) with timestamp undo (tcp_try_undo_loss);
        // RACK replaces early retransmit (tcp_early_retrans now only enables TLP).
        frto: true,
        early_retransmit: false,
        // TCP_MAX_QUICKACKS (tcp_incr_quickack on the first data segment).
        quickack: 16,
        // tcp_input.c tcp_event_data_recv: quick ACKs again after a receive gap longer than the
        // RTO (unchanged since 2.6, so 3.14's too).
        gap_quickack: true,
        // tcp_event_data_recv and tcp_send_delayed_ack: icsk_ack.ato follows the receive gaps.
        adaptive_ato: AdaptiveAto::Linux,
        // tcp_input.c tcp_data_queue: a retransmitted segment already received (and
        // tcp_send_dupack's) calls tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS).
        requick: Requick::Duplicate,
        // tcp_input.c tcp_data_ecn_check: tcp_enter_quickack_mode(sk, 2) on a first CE and on a
        // not-ECT segment after ECT ones; tcp_ecn.h tcp_ecn_accept_cwr: a CWR segment ACKed now.
        ecn_quickack: 2,
        cwr_ack: true,
        // tcp_input.c tcp_enter_cwr and tcp_cwnd_reduction: PRR in the CWR state.
        cwr_prr: true,
        // tcp_input.c tcp_ack: tcp_fastretrans_alert, then tcp_cong_control (no growth on the
        // ACK that starts a reduction, growth from ssthresh on the one that ends it).
        ack_order: AckOrder::RecoveryFirst,
        // tcp_input.c tcp_cong_control: tcp_cong_avoid(sk, ack, acked_sacked).
        growth_count: GrowthCount::Delivered,
        // tcp_input.c tcp_rcv_synsent_state_process: a pure ACK of the SYN-ACK (tcp_send_ack).
        handshake_ack: true,
        // tcp_input.c tcp_measure_rcv_mss sets ICSK_ACK_PUSHED for a short segment and, since
        // 6.6, for a full one with PSH; tcp.c __tcp_cleanup_rbuf then ACKs it after the read.
        push_ack: PushAck::Psh,
        // tcp_output.c __tcp_transmit_skb (5.4 on) flags every GSO packet of more than one
        // segment: every 2-3 segments in every case of the matrix traced
        // (validation/kernel/README.md).
        psh: Psh::Skb,
        // tcp_output.c tcp_tso_should_defer as 6.18 has it (autosized packets, the 1 ms rule,
        // an ACK due within min(1 ms, SRTT / 2)).
        tso_defer: TsoDefer::AckDue,
        // net.ipv4.tcp_tso_rtt_log 9 (tcp_tso_autosize, 5.19 on).
        tso_rtt_log: 9,
        // net.ipv4.tcp_comp_sack_nr 44, tcp_comp_sack_delay_ns 1 ms, tcp_comp_sack_slack_ns 100 us.
        sack_compress: true,
        idle_restart: true,
        // include/net/tcp.h tcp_is_cwnd_limited, read by tcp_reno_cong_avoid and tcp_cubic.c
        // cubictcp_cong_avoid, over the record tcp_output.c tcp_cwnd_validate keeps of each
        // flight (is_cwnd_limited, max_packets_out, cwnd_usage_seq), as 6.0 on have it.
        cwnd_limited: CwndLimited::Linux,
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
        profile: Profile::Ns2Sack1,
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
        cwnd_limited: CwndLimited::Off,
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
                40 ms, 16 quick ACKs at the start, a lone short or pushed segment ACKed on its \
                read, SACK compression, the receive window grown by buffer auto-tuning, window growth \
                only while the last flight used the window (tcp_cwnd_validate's record)",
            config: linux(),
            // tcp_cubic.c as 4.x-6.x run it (`law = "linux_4"`, cubic.rs): the target one
            // minimum RTT ahead, packets counted per ACK, the kernel's fixed-point arithmetic.
            // HyStart's round restarts on the first ACK past its end (hystart_update:
            // after(snd_una, end_seq), then bictcp_hystart_reset with end_seq = snd_nxt); its
            // delay test takes the minimum of every sample of the round (5.8 on); a timeout
            // clears its minimum with the law's (bictcp_reset). HyStart reads the ACKs
            // cubictcp_acked passes it (those with an RTT sample; its round restarted on them at
            // any window, as 6.14 on), and its ACK train allows hystart_ack_delay's cushion.
            // Its jiffies tick at the kernel's CONFIG_HZ.
            cc_params: vec![cc_defaults(
                "cubic",
                CubicParams {
                    law: Law::Linux4,
                    hystart_round: HystartRound::Passed,
                    hystart_rtt: HystartRtt::Round,
                    hystart_min_rtt: HystartMinRtt::Cleared,
                    hystart_acks: HystartAcks::Sampled,
                    hystart_ack_delay: true,
                    hz: LINUX_HZ,
                },
            )],
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
                profile: Profile::Ns2Linux,
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
                profile: Profile::Ns2Fulltcp,
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
                undo, RTO 1 s / 200 ms / 120 s, delayed ACK 40 ms, a lone short segment ACKed \
                on its read, 3 MiB receive window, window growth only while cwnd-limited \
                (tcp_is_cwnd_limited), TCP Small Queues at the sending host (128 KiB)",
            config: TcpConfig {
                profile: Profile::Linux3_14,
                rwnd: Rwnd::Bytes(3 << 20),
                // 3.14 auto-tuned its buffer by older rules (tcp_rcv_space_adjust of 2014, with
                // tcp_adv_win_scale) that rcvbuf.rs does not model: the window stays fixed.
                rcv_window: RcvWindow::Fixed,
                rack: false,
                early_retransmit: true,
                // tcp_cong.c tcp_is_cwnd_limited, called by tcp_reno_cong_avoid and tcp_cubic.c
                // bictcp_cong_avoid with the packets in flight before the ACK (tcp_ack's
                // prior_in_flight).
                cwnd_limited: CwndLimited::Linux3_14,
                // tcp_input.c tcp_data_queue: every segment that is not the next in order enters
                // quick-ACK mode (tcp_enter_quickack_mode before the partial-packet check, and at
                // out_of_window for duplicates); 4.18 on keep it for duplicates only (`linux`).
                requick: Requick::OutOfSequence,
                // 3.14's TCP_ECN_check_ce calls tcp_enter_quickack_mode, whose
                // tcp_incr_quickack had no cap of its own (TCP_MAX_QUICKACKS); no CWR rule.
                ecn_quickack: 16,
                cwr_ack: false,
                // v3.14 tcp_input.c tcp_ack: tcp_cong_avoid before tcp_fastretrans_alert.
                ack_order: AckOrder::GrowFirst,
                // v3.14 tcp_ack: tcp_cong_avoid(sk, ack, acked, ...), the packets removed from
                // the retransmission queue.
                growth_count: GrowthCount::Acked,
                // 3.14's tcp_measure_rcv_mss flags only segments shorter than the MSS as pushed;
                // SACK compression came with 4.18.
                push_ack: PushAck::Short,
                // tcp_push marks a write's tail (v3.14 tcp.c); how 3.14 flags a buffer-limited
                // writer's queue is not measured (with `push_ack = "short"` a full-sized flagged
                // segment is not ACKed alone either way).
                psh: Psh::Write,
                // 3.14's tcp_tso_should_defer (a full-sized 64 KB packet or a third of the
                // window, deferred for up to two jiffies) is not modelled: it needs skbs of more
                // than one segment, and goodbadwifi2015's hosts ran with every offload off.
                tso_defer: TsoDefer::Off,
                // tcp_tso_autosize came in 3.19, its min-RTT term in 5.19.
                tso_rtt_log: 0,
                sack_compress: false,
                // v3.14 tcp_output.c tcp_write_xmit: every socket stops new data while its skbs
                // not yet freed exceed max(sysctl_tcp_limit_output_bytes 131072, sk_pacing_rate
                // >> 10), paced or not.
                small_queues: SmallQueues::Linux3_14,
                // tcp_metrics.c tcp_init_metrics: cwnd 1 after more than one SYN retransmission.
                syn_loss_iw: SynLossIw::Linux3_14,
                // v3.14 tcp_input.c tcp_cwnd_reduction: the slow-start bound's extra segment
                // on every ACK (the conditional one came with 4.2).
                prr_rule: PrrRule::Linux3_14,
                // 3.14's loss probe had a rule of its own (max(2 SRTT, 10 ms) in jiffies) and
                // no RACK: not modelled, the probe fires as RFC 8985 gives.
                timer_hz: 0,
                // v3.14 tcp_ack_update_rtt also prefers the sequence samples of
                // tcp_clean_rtx_queue, in whole jiffies: not modelled, the echo's samples.
                rtt_sample: RttSample::Tsecr,
                // Without RACK the key reads nothing; the default keeps it unwritten.
                rack_retx: RackRetx::Echo,
                // v3.14 tcp_output.c tcp_xmit_retransmit_queue: after the segments marked lost,
                // the forward retransmit of holes below the highest SACK while
                // tcp_can_forward_retransmit holds (in Recovery, SACK, no new data may go);
                // never a rescue.
                nextseg: NextSeg::Forward,
                // v3.14 tcp_send_delayed_ack: the adaptive timeout without the final
                // icsk_delack_max bound (5.10's).
                adaptive_ato: AdaptiveAto::Linux3_14,
                // 3.14's TCP has no pacing clock of its own (sch_fq paced from sk_pacing_rate).
                unpaced_segs: 0,
                pacing_credit: false,
                ..linux()
            },
            // CUBIC in 3.14's own arithmetic (v3.14 tcp_cubic.c bictcp_update, bictcp_cong_avoid,
            // tcp_cong.c tcp_cong_avoid_ai: whole packets, ACKs counted, the delayed-ACK ratio;
            // cubic.rs `law = "linux"`). RFC 9438's law ran here before: its target one smoothed
            // RTT ahead grows the window faster under a standing queue (validation/kernel/README.md).
            // v3.14 bictcp_reset clears delay_min, HyStart's minimum too, on entering Loss.
            cc_params: vec![cc_defaults(
                "cubic",
                CubicParams {
                    law: Law::Linux,
                    hystart_min_rtt: HystartMinRtt::Cleared,
                    ..Default::default()
                },
            )],
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::registry::cc_params;
    use crate::transport::cc::CcContext;

    #[test]
    fn the_registry_holds_each_named_profile_once_in_the_names_order() {
        // the key's names (config.rs) and the registry are declared apart: each name reads back
        // the profile that carries it, the default (`linux`, tcp_cubic.c's stack) first
        let names: Vec<&str> = PROFILES.iter().map(TcpProfile::name).collect();
        let declared: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names, declared);
        assert_eq!(TcpConfig::default().profile, Profile::Linux);
        for p in Profile::ALL {
            assert_eq!(profile(p.name()).unwrap().config.profile, p);
        }
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
}
