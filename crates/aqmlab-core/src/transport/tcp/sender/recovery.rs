//! Loss recovery: the once-per-window congestion response, SACK (RFC 6675) and NewReno (RFC
//! 6582) fast recovery with RFC 6937 PRR, ns-2's rate halving and RFC 5827 early retransmit,
//! and the retransmission timeout (RFC 6298, RFC 6675 5.1): the loss recovery phase of an ACK
//! and the arming of [`Timer::EarlyRetransmit`], over the recovery state and the optional
//! features' (`Recovery`, `Prr`, `RateHalving`, `Sack1Pipe`, `EarlyRetransmit` in `state.rs`:
//! `None` in the sender when off).

use super::super::accecn::Feedback;
use super::ack::Ack;
use super::state::{Prr, TcpSender, DUP_THRESH};
use super::timers::Timer;
use crate::transport::cc::CongestionKind;
use crate::transport::tcp::config::PrrRule;
use crate::transport::Outbox;
use crate::units::{Time, MS};

impl TcpSender {
    /// One congestion response (loss or ECE), at most once per window of data.
    pub(super) fn reduce(&mut self, now: Time, kind: CongestionKind) -> bool {
        if self.snd_una < self.recovery.cong_point {
            return false;
        }
        self.sync_state();
        if self.cfg.lt_excluded && kind == CongestionKind::Loss {
            self.st.bytes_in_flight -= self.recovery.lt_bytes.min(self.st.bytes_in_flight);
        }
        self.cc.on_congestion_event(now, kind, &mut self.st);
        self.st.bytes_in_flight = self.flight();
        self.recovery.cong_point = self.high_data;
        self.tlp_end();
        true
    }

    /// RFC 6937 section 3 on an ACK in recovery that newly delivered `delivered` bytes
    /// (acknowledged or SACKed for the first time): cwnd = pipe + sndcnt, proportional to the
    /// data delivered while pipe > ssthresh, else the slow-start reduction bound (PRR-SSRB),
    /// whose extra segment `prr_rule = "linux"` grants only when `una_no_loss` (the ACK
    /// advanced snd_una and marked nothing lost). As Linux (tcp_input.c tcp_cwnd_reduction),
    /// sndcnt is at least one segment until the first retransmission of the episode is out.
    fn prr_update(&mut self, delivered: u64, una_no_loss: bool) {
        if self.cc.owns_window() {
            return;
        }
        let rule = self.cfg.prr_rule;
        let Some(prr) = &mut self.prr else { return };
        if rule == PrrRule::Linux && delivered == 0 {
            // 6.x: `if (newly_acked_sacked <= 0 ...) return;`, cwnd as it was.
            return;
        }
        prr.delivered += delivered;
        let pipe = self.sb.pipe();
        let ssthresh = self.st.ssthresh;
        let sndcnt = if pipe > ssthresh {
            // CEIL in whole segments, as Linux counts packets.
            let unit = prr.recover_fs.max(1) as u128 * self.mss as u128;
            let segs = (prr.delivered as u128 * ssthresh as u128).div_ceil(unit) as u64;
            (segs * self.mss).saturating_sub(prr.out)
        } else {
            let extra = if rule != PrrRule::Linux || una_no_loss {
                self.mss
            } else {
                0
            };
            let limit = prr.delivered.saturating_sub(prr.out).max(delivered) + extra;
            (ssthresh - pipe).min(limit)
        };
        let sndcnt = if prr.out == 0 {
            sndcnt.max(self.mss)
        } else {
            sndcnt
        };
        self.st.cwnd = pipe + sndcnt;
    }

    /// Linux's CWR state after an ECN reduction (`cwr_prr`; tcp_enter_cwr ->
    /// tcp_init_cwnd_reduction, "tcp: use PRR to reduce cwin in CWR state", 3.7): the
    /// controller has set ssthresh; the window starts from `prior_cwnd` and PRR lowers it on
    /// each ACK (tcp_cong_control -> tcp_cwnd_reduction), this one included. Without the key,
    /// for a controller that owns its window, or with AccECN feedback (not compared with the
    /// kernel), the cut to ssthresh stands.
    pub(super) fn enter_cwr_prr(&mut self, a: &Ack, prior_cwnd: u64) {
        if !self.cfg.cwr_prr || self.cc.owns_window() || self.feedback != Feedback::Classic {
            return;
        }
        let Some(prr) = &mut self.prr else { return };
        *prr = Prr {
            delivered: 0,
            out: 0,
            recover_fs: prior_cwnd,
        };
        self.recovery.in_cwr = true;
        self.st.cwnd = prior_cwnd;
        self.prr_update(self.newly_delivered(a), a.una_no_loss());
        self.sync_state();
    }

    /// The end of the CWR state, before the window may grow on this ACK: once something
    /// above the reduction's `cong_point` (high_seq) is acknowledged the window is ssthresh
    /// (tcp_fastretrans_alert, then tcp_end_cwnd_reduction; tcp_cong_control comes after).
    /// Recovery (`enter_recovery`) and a timeout (`on_rto`) end it too.
    pub(super) fn cwr_exit(&mut self) {
        if self.recovery.in_cwr && self.snd_una > self.recovery.cong_point {
            self.recovery.in_cwr = false;
            self.st.cwnd = self.st.ssthresh;
            self.sync_state();
        }
    }

    /// An ACK in the CWR state: PRR's step (tcp_cong_control -> tcp_cwnd_reduction). True
    /// while the state lasts (no new reduction: tcp_enter_cwr acts only from Open).
    pub(super) fn cwr_on_ack(&mut self, a: &Ack) -> bool {
        if self.recovery.in_cwr {
            self.prr_update(self.newly_delivered(a), a.una_no_loss());
        }
        self.recovery.in_cwr
    }

    /// What an ACK newly delivered: the bytes it acknowledged cumulatively that were not
    /// SACKed before, and those it newly SACKed (RFC 6937's DeliveredData, Linux's change of
    /// `tp->delivered`).
    pub(super) fn newly_delivered(&self, a: &Ack) -> u64 {
        a.acked_bytes.saturating_sub(self.sb.acked_were_sacked()) + a.sacked_bytes
    }

    /// Rate halving's bound before a round of the send loop: at most pipe + 1 segment (ns-2
    /// tcp-linux.cc send_much, next_pkts_in_flight_).
    pub(super) fn rate_halving_round(&mut self) {
        if let Some(rh) = self.rh.as_mut().filter(|rh| rh.next > 0) {
            rh.next = rh.next.min(self.sb.pipe() + self.mss);
        }
    }

    /// The window the send loop fills: cwnd, or in SACK recovery with rate halving up to its
    /// bound, cut to pipe - 1 segment (at least 1) after each segment sent (`sent`) this round.
    pub(super) fn send_window_size(&mut self, sent: bool) -> u64 {
        let Some(rh) = self.rh.as_mut().filter(|rh| rh.next > 0) else {
            return self.st.cwnd;
        };
        if sent {
            let after = self.sb.pipe().saturating_sub(self.mss).max(self.mss);
            rh.next = rh.next.min(after);
        }
        self.st.cwnd.max(rh.next)
    }

    /// Whether ns-2 Sack1's pipe governs the send loop now (SACK recovery with `sack1_pipe`).
    pub(super) fn sack1_recovery(&self) -> bool {
        self.recovery.in_recovery && self.s1p.is_some()
    }

    /// Room for one more segment in the send loop, `sent` segments having gone this call: RFC
    /// 6675's pipe + SMSS <= `cwnd`, or in Sack1 recovery its pipe estimate below cwnd in whole
    /// segments.
    pub(super) fn room(&self, cwnd: u64, sent: u64) -> bool {
        match self.s1p.as_ref().filter(|_| self.recovery.in_recovery) {
            Some(p) => p.pipe + (sent as i64) < (cwnd / self.mss) as i64,
            None => self.sb.pipe() + self.mss <= cwnd,
        }
    }

    /// After the send loop: the segments it sent join Sack1's pipe estimate.
    pub(super) fn sack1_sent(&mut self, sent: u64) {
        if let Some(p) = self.s1p.as_mut().filter(|_| self.recovery.in_recovery) {
            p.pipe += sent as i64;
        }
    }

    /// Enters fast recovery on an ACK that newly delivered `delivered` bytes (0 from a timer),
    /// the PRR-SSRB extra segment allowed when `una_no_loss` (`prr_update`).
    pub(super) fn enter_recovery(&mut self, now: Time, delivered: u64, una_no_loss: bool, out: &mut Outbox) {
        // Linux's PRR divides by the window before the reduction (tcp_init_cwnd_reduction's
        // prior_cwnd), RFC 6937 by the FlightSize (RecoverFS).
        let prior_cwnd = self.st.cwnd;
        // From CWR, Linux keeps the reduction's PRR state (tcp_enter_recovery runs
        // tcp_init_cwnd_reduction only outside one).
        let from_cwr = std::mem::take(&mut self.recovery.in_cwr);
        self.save_undo();
        self.recovery.in_recovery = true;
        self.n.fast_recoveries += 1;
        self.timers.stop(Timer::EarlyRetransmit);
        if let Some(rh) = &mut self.rh {
            rh.next = self.st.cwnd;
        }
        let owns = self.cc.owns_window();
        if !self.reduce(now, CongestionKind::Loss) {
            if owns {
                // Linux enters Recovery from CWR too (tcp_enter_recovery), and the controller's
                // state hook runs on the change (tcp_set_ca_state): its loss response with it.
                self.sync_state();
                self.cc
                    .on_congestion_event(now, CongestionKind::Loss, &mut self.st);
            } else {
                self.st.cwnd = self.st.cwnd.min(self.st.ssthresh);
            }
        }
        self.tlp_end();
        self.timers.stop(Timer::Probe);
        let head = self.sb.first_idx();
        if self.rack.is_none() {
            // RFC 6675 / 6582: the head is the segment the duplicate ACKs show lost.
            self.sb.mark_lost(head);
        }
        self.recovery.first_partial = true;
        if self.cfg.sack {
            self.recovery.recovery_point = self.high_data;
            self.recovery.rescue_done = false;
            let outstanding = self.sb.outstanding() as i64;
            if let Some(p) = &mut self.s1p {
                p.pipe = outstanding - DUP_THRESH as i64;
            }
            let (recover_fs, delivered) = match self.cfg.prr_rule {
                PrrRule::Rfc6937 => (self.flight(), delivered),
                PrrRule::Linux3_14 => (prior_cwnd, delivered),
                // A timer's entry counts one segment delivered (tcp_recovery.c
                // tcp_rack_reo_timeout: tcp_cwnd_reduction(sk, 1, 0, 0)).
                PrrRule::Linux => (prior_cwnd, if delivered == 0 { self.mss } else { delivered }),
            };
            if let Some(prr) = &mut self.prr {
                if !from_cwr {
                    *prr = Prr {
                        delivered: 0,
                        out: 0,
                        recover_fs,
                    };
                }
                self.prr_update(delivered, una_no_loss);
            }
        } else {
            self.recovery.recover = self.high_data;
            if !owns {
                self.st.cwnd = self.st.ssthresh + 3 * self.mss;
            }
        }
        // A rate-based controller (Linux's `cong_control`: BBR) sets its window from the
        // packets in flight before the fast retransmit leaves: tcp_ack runs tcp_cong_control,
        // then tcp_xmit_recovery, which sends it (paced, within the new window). The send loop
        // after the controller's turn sends it first (`rate_control`, then `send_loop`).
        let deferred = self.rate.is_some();
        if !deferred && self.sb.seg(head).is_some_and(|s| !s.retx && !s.sacked && s.lost) {
            self.retransmit(head, now, out);
        }
        if self.cfg.fr_rearm {
            self.timers.arm(Timer::Rto, self.rto_at(now));
        }
    }

    fn exit_recovery(&mut self, now: Time) {
        self.recovery.in_recovery = false;
        self.end_episode();
        self.clear_scoreboard();
        if self.cc.owns_window() {
            // tcp_end_cwnd_reduction returns early for a `cong_control` controller
        } else if self.cfg.sack {
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

    /// The loss episode is over (recovery left, or snd_una past the timeout's loss point).
    pub(super) fn end_episode(&mut self) {
        if let Some(rh) = &mut self.rh {
            rh.next = 0;
        }
        if let Some(f) = &mut self.frto {
            f.episode_over();
        }
    }

    /// ns-2 TCP/Linux when Recovery or Loss ends (tcp_fastretrans_alert: once snd_una
    /// reaches recover_, scb_->ClearScoreBoard()), with `recovery_exit_sack_clear` and SACK.
    fn clear_scoreboard(&mut self) {
        if self.cfg.recovery_exit_sack_clear && self.cfg.sack {
            self.sb.forget();
            self.recovery.sack_cleared = true;
        }
    }

    /// The loss recovery phase of an ACK: the end of a timeout's loss episode, then SACK or
    /// NewReno fast recovery.
    pub(super) fn recover_on_ack(&mut self, a: &Ack, now: Time, out: &mut Outbox) {
        if self.recovery.loss_point.is_some_and(|lp| self.snd_una >= lp) {
            self.recovery.loss_point = None;
            self.end_episode();
            self.clear_scoreboard();
            self.cc.on_timeout_exit(false, &mut self.st);
        }
        if self.cfg.sack {
            self.sack_recovery(a, now, out);
        } else {
            self.newreno_recovery(a, now, out);
        }
    }

    /// Fast recovery entered on ACK `a`: its PRR starts from what `a` newly delivered (Linux's
    /// acked_sacked, tp->delivered's change), not the bytes its cumulative part covers.
    fn enter_recovery_on_ack(&mut self, a: &Ack, now: Time, out: &mut Outbox) {
        let delivered = self.newly_delivered(a);
        self.enter_recovery(now, delivered, a.una_no_loss(), out);
    }

    /// RFC 6675 (or RACK) entry, PRR and exit, and early retransmit.
    fn sack_recovery(&mut self, a: &Ack, now: Time, out: &mut Outbox) {
        if self.recovery.in_recovery {
            if self.snd_una >= self.recovery.recovery_point {
                self.exit_recovery(now);
                if self.cfg.recovery_reentry && a.outstanding && self.sb.any_lost() {
                    self.enter_recovery_on_ack(a, now, out);
                }
            } else {
                if a.newly_lost + a.rack_marked > 0 {
                    self.sync_state();
                    self.cc.on_loss_detected(now, &mut self.st);
                }
                self.prr_update(self.newly_delivered(a), a.una_no_loss());
                if let Some(p) = &mut self.s1p {
                    p.pipe -= 1 + a.advanced as i64;
                }
            }
        } else if self.recovery.loss_point.is_none()
            && a.outstanding
            && (if self.rack.is_some() {
                a.rack_marked > 0 || self.sb.head_lost()
            } else {
                self.recovery.dupacks >= DUP_THRESH || self.sb.head_lost()
            })
        {
            self.enter_recovery_on_ack(a, now, out);
        } else if a.advanced {
            // tcp_rearm_rto: an ACK of new data cancels a pending early retransmit.
            self.timers.stop(Timer::EarlyRetransmit);
        }
        if self.er.is_some()
            && !self.recovery.in_recovery
            && !self.timers.armed(Timer::EarlyRetransmit)
            && self.er_ready(now)
        {
            // tcp_pause_early_retransmit: wait max(SRTT/4, 2 ms), unless the RTO is sooner.
            let at = now + (self.rtt.srtt().unwrap_or(0) / 4).max(2 * MS);
            if self.timers.get(Timer::Rto).is_some_and(|r| r <= at) {
                self.enter_recovery(now, 0, false, out);
            } else {
                self.timers.arm(Timer::EarlyRetransmit, at);
            }
        }
    }

    /// RFC 6582: partial ACKs, window inflation by duplicate ACKs, entry on the third.
    fn newreno_recovery(&mut self, a: &Ack, now: Time, out: &mut Outbox) {
        if self.recovery.in_recovery {
            if a.advanced {
                if self.snd_una >= self.recovery.recover {
                    self.exit_recovery(now);
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked.
                    let head = self.sb.first_idx();
                    self.sb.mark_lost(head);
                    if self.sb.seg(head).is_some_and(|s| !s.retx) {
                        self.retransmit(head, now, out);
                    }
                    let extra = if a.acked_bytes >= self.mss { self.mss } else { 0 };
                    if !self.cc.owns_window() {
                        self.st.cwnd = self.st.cwnd.saturating_sub(a.acked_bytes).max(self.mss) + extra;
                    }
                }
            } else if a.dup && !self.cc.owns_window() {
                self.st.cwnd += self.mss;
            }
        } else if self.recovery.dupacks == DUP_THRESH
            && self.snd_una >= self.recovery.recover
            && self.recovery.loss_point.is_none()
        {
            self.enter_recovery(now, 0, false, out);
        }
    }

    /// The retransmission timeout: everything outstanding lost, cwnd 1 segment, go-back-N
    /// retransmissions in slow start.
    pub(super) fn on_rto(&mut self, now: Time, out: &mut Outbox) {
        self.n.rto_count += 1;
        if let Some(rh) = &mut self.rh {
            rh.next = 0;
        }
        self.tlp_end();
        self.timers.stop(Timer::Probe);
        self.timers.stop(Timer::Rack);
        self.timers.stop(Timer::EarlyRetransmit);
        let first = self.rtt.backoffs() == 0;
        self.frto_on_timeout(first);
        self.sync_state();
        self.cc.on_rto(now, first, &mut self.st);
        self.st.cwnd = self.mss;
        self.rtt.backoff();
        self.recovery.in_recovery = false;
        self.recovery.in_cwr = false;
        self.recovery.dupacks = 0;
        self.recovery.lt_bytes = 0;
        self.recovery.loss_point = Some(self.high_data);
        self.recovery.recover = self.high_data;
        self.recovery.cong_point = self.high_data;
        self.sb.mark_all_lost();
        // ns-2's enter_loss (MarkLoss): the board holds everything outstanding, lost.
        self.recovery.sack_cleared = false;
        if self.cfg.rto_sack_reset {
            self.sb.discard_sacks();
            self.recovery.timeout_unacked = true;
        }
        self.timers.stop(Timer::Rto);
        self.send_loop(now, out);
        self.timers.arm(Timer::Rto, self.rto_at(now));
    }

    /// Linux 3.14 tcp_time_to_recover "Trick#6" (RFC 5827 for SACK): no retransmission in
    /// flight, at least one segment SACKed and one not, fewer than 4 outstanding, and nothing
    /// new may be sent.
    fn er_ready(&self, now: Time) -> bool {
        let n = self.sb.outstanding() as u64;
        if self.recovery.loss_point.is_some() || n >= 4 {
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

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::PrrRule;
    use crate::transport::tcp::config::{AckOrder, GrowthCount};

    #[test]
    fn bbr_sets_its_window_from_the_flight_before_the_fast_retransmit_leaves() {
        // tcp_ack: tcp_fastretrans_alert marks segment 0 lost and enters Recovery, then
        // tcp_cong_control (bbr_main: packet conservation, cwnd = tcp_packets_in_flight +
        // acked), then tcp_xmit_recovery sends the retransmission. Ten segments out at 100 ms
        // (Linux leaves the first ten unpaced); an ACK at 150 ms SACKs 1-3: RACK marks 0 lost
        // (reordering window 0 once DupThresh segments are SACKed), in flight 10 - 3 SACKed - 1
        // lost = 6, acked 3: cwnd 9. Counting the retransmission in flight first would give 10.
        let cfg = TcpConfig {
            mss: MSS as u32,
            cc: "bbr".into(),
            bytes: Some(50 * MSS),
            ..crate::transport::tcp::profiles::linux()
        };
        let (mut s, out) = established_with(cfg);
        assert_eq!(segs(&out), (0..10).collect::<Vec<_>>());
        let mut out = vec![];
        s.on_packet(&ack_packet(1, &sack_blocks(&[(1, 4)]), 100), 150 * MS, &mut out);
        assert!(s.in_recovery());
        assert_eq!(s.cwnd(), 9 * MSS);
        // the retransmission still leaves first, on this ACK or at the next pacing slot
        while !out.iter().any(|p| p.seq == 1) {
            let at = s.next_timer().expect("a timer for the retransmission");
            s.on_timer(at, &mut out);
        }
        assert_eq!(segs(&out)[0], 0);
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
            ..crate::transport::tcp::profiles::rfc()
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

    /// The sender of the test above with PRR under `rule`.
    fn prr_sender(rule: PrrRule) -> TcpSender {
        let (s, out) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 20,
            cc: "newreno".into(),
            prr: true,
            prr_rule: rule,
            ..crate::transport::tcp::profiles::rfc()
        });
        assert_eq!(out.len(), 20);
        s
    }

    #[test]
    fn the_ack_that_ends_a_recovery_grows_the_window_by_what_it_delivered_under_linux_6() {
        // The recovery above (ssthresh 11 segments; 1-3 SACKed, 20 and 21 sent on the first two
        // SACKs, 0 resent on the third), then the resent 0 arrives with everything else: the
        // ACK of 22 passes the recovery point, covering 22 segments of which 19 were not SACKed
        // before. Linux 3.x's tcp_ack grows before tcp_fastretrans_alert, still in Recovery
        // (tcp_may_raise_cwnd: not in a reduction), so the window ends at ssthresh; 6.x's
        // tcp_fastretrans_alert leaves Recovery first and tcp_cong_control then grows it from
        // ssthresh by acked_sacked, the 19 newly delivered. NewReno in congestion avoidance with
        // ABC (RFC 3465): a segment more once the bytes counted reach the window, the rest kept,
        // so the next ACK (one segment) grows it again only when the 22 were counted (11 + 11 +
        // 1 >= 12 segments, where 8 + 1 < 12).
        for (order, count, exit, next) in [
            (AckOrder::GrowFirst, GrowthCount::Acked, 11, 11),
            (AckOrder::RecoveryFirst, GrowthCount::Acked, 12, 13),
            (AckOrder::RecoveryFirst, GrowthCount::Delivered, 12, 12),
        ] {
            let (mut s, out) = established_with(TcpConfig {
                mss: MSS as u32,
                iw: 20,
                cc: "newreno".into(),
                prr: true,
                prr_rule: PrrRule::Linux,
                ack_order: order,
                growth_count: count,
                ..crate::transport::tcp::profiles::rfc()
            });
            assert_eq!(out.len(), 20);
            for k in 2..=4 {
                ack(&mut s, 1, &[(1, k)], 200 + k);
            }
            assert!(s.in_recovery());
            assert_eq!(s.ssthresh(), 11 * MSS);
            assert!(!ack(&mut s, 1 + 22 * MSS, &[], 300).is_empty());
            assert!(!s.in_recovery());
            assert_eq!(s.cwnd(), exit * MSS, "{order:?} {count:?}");
            ack(&mut s, 1 + 23 * MSS, &[], 301);
            assert_eq!(s.cwnd(), next * MSS, "{order:?} {count:?}");
        }
    }

    #[test]
    fn prr_counts_data_sacked_before_once() {
        // The recovery of the test above (ssthresh 11, RecoverFS 22; 20 and 21 sent on the
        // first two SACKs, 0 resent on the third; the SACK of 4 sends nothing, that of 5 sends
        // 22: prr_out 2, prr_delivered 3). Then the resent 0 arrives: the cumulative ACK to 6
        // newly delivers one segment, 0; 1-5 were SACKed and counted already (RFC 6937's
        // DeliveredData = delta snd.una + delta SACKed, the second negative here). prr_delivered
        // 4: ceil(4 x 11 / 22) - 2 = 0, nothing goes. Counting the ACK's six segments made it
        // ceil(9 x 11 / 22) - 2 = 3.
        let mut s = prr_sender(PrrRule::Rfc6937);
        let sent: Vec<Vec<u64>> = (2..=6)
            .map(|k| segs(&ack(&mut s, 1, &[(1, k)], 200 + k)))
            .collect();
        assert_eq!(sent, [vec![20], vec![21], vec![0], vec![], vec![22]]);
        assert!(ack(&mut s, 1 + 6 * MSS, &[], 210).is_empty());
        assert!(s.in_recovery());
    }

    #[test]
    fn prr_rules_of_rfc_6937_and_linux() {
        // The proportional part's divisor. Entered as above with cwnd 20 and FlightSize 22 (the
        // limited-transmit segments): RFC 6937 divides by RecoverFS = 22, Linux by prior_cwnd =
        // 20 (tcp_init_cwnd_reduction). The SACK of 4 (prr_delivered 2, prr_out 1): ceil(2 x 11
        // / 22) - 1 = 0 against ceil(2 x 11 / 20) - 1 = 1.
        for (rule, expect) in [
            (PrrRule::Rfc6937, vec![]),
            (PrrRule::Linux3_14, vec![22]),
            (PrrRule::Linux, vec![22]),
        ] {
            let mut s = prr_sender(rule);
            for k in 2..=4 {
                ack(&mut s, 1, &[(1, k)], 200 + k);
            }
            assert_eq!(segs(&ack(&mut s, 1, &[(1, 5)], 205)), expect, "{rule:?}");
        }
        // The slow-start reduction bound's extra segment. Segments 0-9 lost: the SACKs of 10
        // and 11 send 20 and 21, that of 12 enters recovery with 0-9 lost (RFC 6675 IsLost:
        // three SACKed segments above each): pipe 9 (13-21) under ssthresh 11, so sndcnt =
        // min(11 - 9, max(prr_delivered - prr_out, 1) + extra). RFC 6937 and 3.14 add a
        // segment on every ACK: 0 and 1 go. Linux 6.x only on an ACK that advances snd_una and
        // marks nothing lost, which this one does not: 0 alone.
        for (rule, expect) in [
            (PrrRule::Rfc6937, vec![0, 1]),
            (PrrRule::Linux3_14, vec![0, 1]),
            (PrrRule::Linux, vec![0]),
        ] {
            let mut s = prr_sender(rule);
            assert_eq!(segs(&ack(&mut s, 1, &[(10, 11)], 201)), vec![20]);
            assert_eq!(segs(&ack(&mut s, 1, &[(10, 12)], 202)), vec![21]);
            assert_eq!(segs(&ack(&mut s, 1, &[(10, 13)], 203)), expect, "{rule:?}");
            assert!(s.in_recovery());
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

    /// Ten segments of `cfg`, 0 lost: the SACKs of 1 and 2 let 10 and 11 out, the third starts
    /// a recovery (FlightSize 12: ssthresh = cwnd = 6, RecoveryPoint 12) and resends 0. The SACKs
    /// of 4-11 bring the pipe from 9 to 5 and let 12-16 out. Of those 12, 14 and 16 are lost: 13
    /// and 15 let 17 and 18 out; with 17 SACKed, 12 is lost (resent, then 19), with 18, 14
    /// (resent, then 20). The sender, and what it sent before and in the recovery.
    fn recovery_losing_beyond_its_point(cfg: TcpConfig) -> (TcpSender, Vec<u64>, Vec<u64>) {
        let (mut s, out) = established_with(cfg);
        assert_eq!(out.len(), 10);
        let before: Vec<u64> = (2..=12)
            .flat_map(|k| segs(&ack(&mut s, 1, &[(1, k)], 200 + k)))
            .collect();
        let recovery = [
            vec![(13, 14), (1, 12)],
            vec![(15, 16), (13, 14), (1, 12)],
            vec![(17, 18), (15, 16), (13, 14)],
            vec![(17, 19), (15, 16), (13, 14)],
        ];
        let during: Vec<u64> = recovery
            .iter()
            .flat_map(|b| segs(&ack(&mut s, 1, b, 300)))
            .collect();
        (s, before, during)
    }

    #[test]
    fn recovery_exit_sack_clear_forgets_the_board_and_resends_from_the_next_sack() {
        for clear in [false, true] {
            let (mut s, before, during) = recovery_losing_beyond_its_point(TcpConfig {
                recovery_exit_sack_clear: clear,
                ..config(true, 10)
            });
            assert_eq!(before, [10, 11, 0, 12, 13, 14, 15, 16]);
            assert_eq!(s.cwnd(), 6 * MSS);
            assert_eq!(during, [17, 18, 12, 19, 14, 20]);
            // 0's retransmission arrives: the ACK of 0-11 ends the recovery, cwnd = 6. Kept,
            // the board has 12 and 14 resent, 13, 15, 16 SACKed, so the pipe is 12, 14, 16,
            // 19, 20: one new segment (21). ns-2 TCP/Linux forgets the board: packets_in_flight
            // = snd_nxt - snd_una = 9, nothing goes.
            let exit = [(13, 14), (15, 16), (17, 19)];
            let sent = segs(&ack(&mut s, 1 + 12 * MSS, &exit, 400));
            assert!(!s.in_recovery());
            assert_eq!(sent, if clear { vec![] } else { vec![21] }, "clear {clear}");
            // 19 arrives; Sack1's sink reports 17-19, 15, 13. Kept: 16 has 17-19 above it, is
            // lost and resent (a new recovery, 12 being marked lost still). Rebuilt
            // (ScoreBoard1::UpdateScoreBoard on an empty board): fack_ = 19, so everything
            // unSACKed up to 19 - 4 = 15 is lost: 12 and 14, whose retransmissions are in
            // flight, while 16 is not. A new recovery (FlightSize 9: cwnd 4.5 segments) resends
            // 12 and 14 a second time.
            let sent = segs(&ack(&mut s, 1 + 12 * MSS, &[(17, 20), (15, 16), (13, 14)], 500));
            assert!(s.in_recovery());
            assert_eq!(sent, if clear { vec![12, 14] } else { vec![16] }, "clear {clear}");
        }
    }

    #[test]
    fn a_recovery_that_ends_with_segments_still_lost_restarts_on_that_ack_as_linux() {
        // `recovery_losing_beyond_its_point` (segment 0 lost, RecoveryPoint 12; of the new data
        // sent in it 12 and 14 lost and resent). The ACK of 0-11 ends it while 12 and 14 are still
        // marked lost. Linux's tcp_fastretrans_alert leaves Recovery (step D: snd_una reached
        // high_seq) and, lost_out being above 0 (tcp_time_to_recover), enters it again on the
        // same ACK (step E): a second recovery, RecoveryPoint the highest sent. Without the
        // rule the connection is Open after that ACK, and a later ACK starts the next one.
        for reentry in [false, true] {
            let (mut s, _, _) = recovery_losing_beyond_its_point(TcpConfig {
                recovery_reentry: reentry,
                ..config(true, 10)
            });
            assert_eq!(s.fast_recoveries(), 1);
            assert!(s.in_recovery());
            ack(&mut s, 1 + 12 * MSS, &[(13, 14), (15, 16), (17, 19)], 400);
            assert_eq!(s.in_recovery(), reentry, "reentry {reentry}");
            assert_eq!(s.fast_recoveries(), 1 + reentry as u64);
        }
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
                ..crate::transport::tcp::profiles::rfc()
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
