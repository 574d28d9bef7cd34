//! RFC 5682 F-RTO (SACK-enhanced, as Linux tcp_process_loss runs it) and the undo of spurious
//! timeouts (RFC 3522 Eifel detection; Linux tcp_packet_delayed, tcp_try_undo_loss). The
//! F-RTO phases of an ACK, before the window grows and after the ACK's transmissions, over
//! their state (`Frto` in `state.rs`: `None` in the sender when `frto` is off).

use super::state::TcpSender;
use crate::transport::Outbox;
use crate::units::Time;

impl TcpSender {
    /// A timeout (tcp_enter_loss), `first` if not a repeated one: F-RTO runs unless this first
    /// timeout interrupts a fast recovery; the window to undo to is saved.
    pub(super) fn frto_on_timeout(&mut self, first: bool) {
        if let Some(f) = &mut self.frto {
            f.on = !self.recovery.in_recovery || !first;
            f.high = self.high_data;
        }
        self.save_undo();
    }

    /// Linux tcp_init_undo: the window to restore if the episode proves spurious (prior_cwnd,
    /// and prior_ssthresh = tcp_current_ssthresh: at least 3/4 cwnd outside a reduction).
    pub(super) fn save_undo(&mut self) {
        let Some(f) = &mut self.frto else { return };
        if f.undo.is_none() {
            let ssthresh = if self.recovery.in_recovery {
                self.st.ssthresh
            } else {
                self.st.ssthresh.max(self.st.cwnd / 2 + self.st.cwnd / 4)
            };
            f.undo = Some((self.st.cwnd, ssthresh));
        }
    }

    /// Undo of a spurious timeout (Linux tcp_try_undo_loss / tcp_undo_cwnd_reduction): the
    /// window before the episode comes back, nothing is lost any more, the Loss state ends.
    /// The connection is Open again, so the next loss reduces the window however soon it
    /// comes (tcp_enter_recovery always runs tcp_init_cwnd_reduction from Open).
    fn undo_timeout(&mut self) {
        if let Some((cwnd, ssthresh)) = self.frto.as_ref().and_then(|f| f.undo) {
            self.st.cwnd = self.st.cwnd.max(cwnd);
            self.st.ssthresh = self.st.ssthresh.max(ssthresh);
        }
        self.sb.unmark_lost();
        self.recovery.loss_point = None;
        self.recovery.cong_point = self.snd_una;
        self.n.spurious_rtos += 1;
        self.end_episode();
        self.cc.on_timeout_exit(true, &mut self.st);
    }

    /// F-RTO and undo on an ACK in the Loss state (Linux tcp_process_loss, RFC 5682 3.1):
    /// an advancing ACK that echoes a timestamp older than the first retransmission, or one
    /// that delivers never-retransmitted data sent before the timeout, shows it spurious; the
    /// first ACK advancing without SACK information lets new data go instead of more
    /// retransmissions (step 2.b); SACK information or duplicate ACKs after that new data
    /// show the loss real (step 3.a). Returns whether the ACK undid the timeout.
    pub(super) fn frto_on_ack(&mut self, advanced: bool, ts_ecr: Time, dup: bool) -> bool {
        let Some(f) = &self.frto else { return false };
        if self.recovery.loss_point.is_none() {
            return false;
        }
        let delayed = f.retrans_stamp.is_some_and(|t| ts_ecr < t);
        let orig = f.on
            && self
                .sb
                .orig_delivered()
                .is_some_and(|i| self.sb.seg_end(i) <= f.high);
        if (advanced && delayed && f.undo.is_some()) || orig {
            self.undo_timeout();
            return true;
        }
        let Some(f) = self.frto.as_mut().filter(|f| f.on) else {
            return false;
        };
        if self.high_data > f.high {
            if dup {
                f.on = false;
            }
        } else if advanced && self.snd_una < f.high {
            f.high = self.high_data;
            f.new = true;
        }
        false
    }

    /// After the ACK's transmissions: step 2.b sent new data if it could; otherwise
    /// conventional recovery goes on.
    pub(super) fn frto_after_send(&mut self, now: Time, out: &mut Outbox) {
        let Some(f) = self.frto.as_mut().filter(|f| f.new) else {
            return;
        };
        f.new = false;
        if self.high_data <= f.high {
            f.on = false;
            self.send_loop(now, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;

    fn frto_sender(frto: bool) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            cc: "newreno".into(),
            bytes: Some(40 * MSS),
            frto,
            ..crate::transport::tcp::profiles::rfc()
        };
        let (s, out) = established_at(cfg, 100 * MS);
        assert_eq!(out.len(), 10);
        // SRTT 100 ms, RTTVAR 50 ms: RTO 300 ms, due at 400 ms.
        assert_eq!(s.next_timer(), Some(400 * MS));
        (s, out)
    }

    fn fire_rto(s: &mut TcpSender) -> Vec<Packet> {
        let mut out = vec![];
        s.on_timer(400 * MS, &mut out);
        assert_eq!(s.rto_count(), 1);
        out
    }

    #[test]
    fn a_spurious_timeout_is_undone_by_the_timestamp_echo() {
        // A delay spike: the ACK of the first two original segments arrives after the RTO
        // retransmitted segment 0. It echoes the originals' timestamp (100 ms), older than the
        // retransmission (400 ms): the timeout was spurious (RFC 3522; Linux tcp_try_undo_loss
        // via tcp_packet_delayed). cwnd and ssthresh come back (cwnd 10, grown by the 2 acked
        // segments in slow start to 12) and nothing else is resent: 8 segments in flight leave
        // room for 4 new ones.
        let (mut s, _) = frto_sender(true);
        assert_eq!(segs(&fire_rto(&mut s)), vec![0]);
        let out = ack_ms(&mut s, 2, &[], 450, 100);
        assert_eq!(s.spurious_rtos(), 1);
        assert_eq!(segs(&out), vec![10, 11, 12, 13]);
        assert_eq!((s.cwnd(), s.ssthresh()), (12 * MSS, u64::MAX));
        // Without undo the same ACK starts go-back-N: cwnd 1 + 2 in slow start, segments 2-4
        // resent though they were never lost.
        let (mut s, _) = frto_sender(false);
        fire_rto(&mut s);
        assert_eq!(segs(&ack_ms(&mut s, 2, &[], 450, 100)), vec![2, 3, 4]);
        assert_eq!(s.spurious_rtos(), 0);
    }

    #[test]
    fn a_loss_after_an_undone_timeout_reduces_the_window() {
        // The timeout of the flow's first loss is undone while ssthresh is still infinite
        // (tcp_init_undo saved it so; tcp_undo_cwnd_reduction restores it), and a real loss
        // follows before snd_una passes the data sent before the timeout. tcp_try_undo_loss
        // returned the connection to Open, so tcp_enter_recovery reduces the window
        // (tcp_init_cwnd_reduction: ssthresh from the controller, Reno's half of cwnd 12), and
        // recovery ends at that ssthresh (tcp_end_cwnd_reduction, which never sets cwnd to an
        // infinite ssthresh).
        let (mut s, _) = frto_sender(true);
        fire_rto(&mut s);
        ack_ms(&mut s, 2, &[], 450, 100);
        assert_eq!((s.cwnd(), s.ssthresh()), (12 * MSS, u64::MAX));
        // Segment 2 lost: SACKs of 3-5 start fast recovery.
        ack_ms(&mut s, 2, &[(3, 6)], 500, 150);
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh(), 6 * MSS);
        ack_ms(&mut s, 14, &[], 600, 500);
        assert!(!s.in_recovery());
        assert_eq!((s.cwnd(), s.ssthresh()), (6 * MSS, 6 * MSS));
        assert_eq!(s.spurious_rtos(), 1);
    }

    #[test]
    fn frto_sends_new_data_after_the_first_ack_and_falls_back_on_a_real_loss() {
        // RFC 5682 3.1 (SACK-enhanced, as Linux tcp_process_loss): the whole window was lost.
        // The ACK of the retransmitted segment 0 (echoing the retransmission) advances snd_una
        // without SACK information: step 2.b sends two new segments (cwnd 2) instead of
        // retransmitting 1 and 2. Their SACK without a cumulative advance shows the loss real
        // (step 3.a): conventional recovery resends 1 and 2 (the SACKed segments left the pipe).
        let (mut s, _) = frto_sender(true);
        fire_rto(&mut s);
        assert_eq!(segs(&ack_ms(&mut s, 1, &[], 500, 400)), vec![10, 11]);
        assert_eq!(segs(&ack_ms(&mut s, 1, &[(10, 12)], 600, 500)), vec![1, 2]);
        assert_eq!(s.spurious_rtos(), 0);
        // Conventional RTO recovery resends 1 and 2 at once.
        let (mut s, _) = frto_sender(false);
        fire_rto(&mut s);
        assert_eq!(segs(&ack_ms(&mut s, 1, &[], 500, 400)), vec![1, 2]);
    }
}
