//! What each of the sender's timers ([`Timer`]) does when it fires ([`TcpSender::fire`]), and
//! their re-arming on an ACK of new data.

use super::state::{SenderState, TcpSender};
use super::timers::Timer;
use crate::transport::tcp::timer_wheel;
use crate::transport::Outbox;
use crate::units::Time;

impl TcpSender {
    /// When a timer armed at `now` to wait `delay` fires: then (`timer_hz` 0), or as Linux runs
    /// a timer it arms in jiffies on a kernel of `timer_hz` ticks a second (`floor`: added
    /// before the rounding, TCP_TIMEOUT_MIN_US where the kernel adds it; `timer_wheel`).
    pub(super) fn kernel_timer(&self, now: Time, delay: Time, floor: Time) -> Time {
        timer_wheel::expiry(self.cfg.timer_hz, now, delay, floor)
    }

    /// When the retransmission timer armed now runs: `inet_csk_reset_xmit_timer` with the RTO
    /// in jiffies (`icsk_rto`, `usecs_to_jiffies` of SRTT + the variance term, rounded up).
    pub(super) fn rto_at(&self, now: Time) -> Time {
        self.kernel_timer(now, self.rtt.rto(), 0)
    }

    /// The retransmission timer from now while data is outstanding, else stopped (ns-2's
    /// `renew_timer`, `ack_rearm`).
    pub(super) fn restart_rto(&mut self, now: Time) {
        if self.sb.outstanding() == 0 {
            self.timers.stop(Timer::Rto);
        } else {
            self.timers.arm(Timer::Rto, self.rto_at(now));
        }
    }

    /// After an ACK of new data: the retransmission timer (RFC 6298 5.2 / 5.3; RFC 6582
    /// impatient variant) and the probe timer.
    pub(super) fn rearm_on_ack(&mut self, now: Time) {
        if self.sb.outstanding() == 0 {
            self.timers.stop(Timer::Rto);
        } else {
            let impatient = self.recovery.in_recovery && (!self.cfg.sack || self.cfg.impatient);
            if !impatient || self.recovery.first_partial {
                self.timers.arm(Timer::Rto, self.rto_at(now));
            }
            if impatient {
                self.recovery.first_partial = false;
            }
        }
        // RFC 8985 7.2: an ACK of new data restarts the probe timer.
        self.arm_pto(now);
    }

    /// Runs timer `t`, due at `now`.
    pub(super) fn fire(&mut self, t: Timer, now: Time, out: &mut Outbox) {
        match (self.state, t) {
            (SenderState::SynSent, Timer::Rto) => {
                self.n.rto_count += 1;
                self.n.retransmits += 1;
                self.rtt.backoff();
                self.send_syn(now, out);
            }
            (SenderState::Established, Timer::Probe) => self.send_probe(now, out),
            (SenderState::Established, Timer::Rto) => self.on_rto(now, out),
            (SenderState::Established, Timer::EarlyRetransmit) => {
                self.timers.stop(Timer::EarlyRetransmit);
                if !self.recovery.in_recovery && self.recovery.loss_point.is_none() {
                    self.enter_recovery(now, 0, false, out);
                }
                self.send_loop(now, out);
            }
            (SenderState::Established, Timer::Rack) => {
                self.timers.stop(Timer::Rack);
                let marked = self.rack_detect(now);
                if marked > 0 && !self.recovery.in_recovery && self.recovery.loss_point.is_none() {
                    self.enter_recovery(now, 0, false, out);
                }
                self.send_loop(now, out);
            }
            (SenderState::Established, Timer::Pace) => self.send_loop(now, out),
            (SenderState::Established, Timer::App) => {
                self.timers.stop(Timer::App);
                self.send_loop(now, out);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::transport::tcp::config::SynLossIw;
    use crate::units::SEC;

    /// The segments a sender of `rule` sends when its SYN-ACK comes, the SYN having been sent
    /// `syns` times (at 0, 1 s, 3 s: RFC 6298's 1 s initial RTO, doubled) and the SYN-ACK echoing
    /// the timestamp of SYN number `echoed` (0: the first).
    fn first_flight(rule: SynLossIw, syns: usize, echoed: usize) -> usize {
        let cfg = TcpConfig {
            syn_loss_iw: rule,
            iw: 10,
            ..config(true, 10)
        };
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        let sent_at = [0, SEC, 3 * SEC];
        for &t in &sent_at[1..syns] {
            assert_eq!(s.next_timer(), Some(t), "the SYN's retransmission timer");
            s.on_timer(t, &mut out);
        }
        assert_eq!(out.len(), syns);
        assert_eq!(out[echoed].ts_val, sent_at[echoed]);
        let synack = Packet {
            ts_ecr: sent_at[echoed],
            ..synack()
        };
        let mut out = vec![];
        s.on_packet(&synack, sent_at[syns - 1] + 100 * MS, &mut out);
        out.len()
    }

    #[test]
    fn a_retransmitted_syn_leaves_one_segment_by_rfc_5681_and_linux_only_after_two() {
        // RFC 5681 3.1: one segment after any retransmitted SYN. Linux 3.1-5.0 (tcp_init_metrics)
        // and 5.1 on (tcp_init_transfer): only if total_retrans > 1, and 5.1's
        // tcp_try_undo_spurious_syn clears undo_marker (so no reset) when the SYN-ACK echoes the
        // original SYN's TSval.
        for (syns, echoed, rfc, linux_3_14, linux) in [
            (1, 0, 10, 10, 10),
            (2, 0, 1, 10, 10),
            (2, 1, 1, 10, 10),
            (3, 0, 1, 1, 10),
            (3, 2, 1, 1, 1),
        ] {
            let got = [SynLossIw::Rfc, SynLossIw::Linux3_14, SynLossIw::Linux]
                .map(|r| first_flight(r, syns, echoed));
            assert_eq!(
                got,
                [rfc, linux_3_14, linux],
                "{syns} SYNs, the SYN-ACK echoing SYN {echoed}"
            );
        }
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
    fn ns2_restarts_the_timer_at_the_fast_retransmit_only() {
        // NewReno, segment 0 and 2 of ten lost. ns-2 tcp-newreno.cc dupack_action (reno_action)
        // calls reset_rtx_timer(1, 0) at the fast retransmit; partialnewack_helper calls newtimer
        // on the first partial ACK only (ns-default.tcl newreno_changes1_ 1), and the second
        // partial ACK's retransmission goes through TcpAgent::output, which sets the timer only
        // when none is pending. RFC 6298 leaves the timer of the window sent at 100 running at
        // the fast retransmit; Linux's `rto_rearm` restarts it on every retransmission of the
        // head, the second partial ACK's included.
        for (fr_rearm, rto_rearm) in [(false, false), (true, false), (false, true)] {
            let (mut s, _) = established_with(TcpConfig {
                fr_rearm,
                rto_rearm,
                ..config(false, 10)
            });
            ack(&mut s, 1, &[], 200);
            ack(&mut s, 1, &[], 201);
            assert_eq!(segs(&ack(&mut s, 1, &[], 202)), vec![0]);
            let at_fr = if fr_rearm || rto_rearm { 202 } else { 100 };
            assert_eq!(s.next_timer(), Some(at_fr + s.rto()), "{fr_rearm} {rto_rearm}");
            assert_eq!(segs(&ack(&mut s, 1 + 2 * MSS, &[], 300)), vec![2]);
            let first = 300 + s.rto();
            assert_eq!(s.next_timer(), Some(first), "{fr_rearm} {rto_rearm}");
            ack(&mut s, 1 + 3 * MSS, &[], 301);
            assert!(s.in_recovery(), "a partial ACK");
            let expect = if rto_rearm { 301 + s.rto() } else { first };
            assert_eq!(s.next_timer(), Some(expect), "{fr_rearm} {rto_rearm}");
        }
    }

    #[test]
    fn ns2_linux_restarts_the_timer_on_every_ack_of_snd_una() {
        // ns-2 tcp-linux.cc: LinuxTcpAgent::recv passes every ACK neither above t_seqno_ nor
        // below snd_una to time_processing, whose renew_timer (timerfix_ 1) calls set_rtx_timer
        // while data is outstanding: the duplicate ACKs at 200 and 201 each restart the timer of
        // the window sent at 100. RFC 6298 restarts it only on an ACK of new data.
        for ack_rearm in [false, true] {
            let (mut s, _) = established_with(TcpConfig {
                ack_rearm,
                ..config(true, 10)
            });
            ack(&mut s, 1, &[(1, 2)], 200);
            let at = if ack_rearm { 200 } else { 100 };
            assert_eq!(s.next_timer(), Some(at + s.rto()), "ack_rearm {ack_rearm}");
            ack(&mut s, 1, &[(1, 3)], 201);
            let at = if ack_rearm { 201 } else { 100 };
            assert_eq!(s.next_timer(), Some(at + s.rto()), "ack_rearm {ack_rearm}");
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
}
