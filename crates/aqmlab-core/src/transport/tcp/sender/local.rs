//! A qdisc on the sender's own host (`local_sender`): what Linux 3.2 does with the verdict
//! of the enqueue of a segment it transmits (net/ipv4/tcp_output.c tcp_transmit_skb). A
//! verdict other than success enters CWR (`tcp_enter_cwr(sk, 1)`); NET_XMIT_CN then counts as
//! sent (`net_xmit_eval`), so the segment is lost and repaired by the usual recovery, while
//! NET_XMIT_DROP makes tcp_transmit_skb fail: the segment is not sent (tcp_write_xmit stops
//! before `tcp_event_new_data_sent` advances snd_nxt; tcp_retransmit_skb leaves a
//! retransmission unmarked, to be tried again on a later ACK).

use super::state::{SenderState, TcpSender};
use super::timers::Timer;
use crate::packet::{flags, Packet};
use crate::queue::LocalVerdict;
use crate::transport::cc::CongestionKind;
use crate::units::Time;

impl TcpSender {
    /// The refused packets of one send, in order (see `Endpoint::on_local_verdicts`). The
    /// SYN is not undone: tcp_connect ignores tcp_transmit_skb's result, so a refused SYN is
    /// lost and its timer resends it.
    pub(super) fn local_verdicts(&mut self, refused: &[(Packet, LocalVerdict)], now: Time) {
        if let Some(h) = self.host.as_mut() {
            // What was not queued never waits in the host (fq refuses only the packet it is
            // offered, so no other packet of the sender leaves with a verdict).
            let gone: u64 = refused
                .iter()
                .filter(|r| r.1 == LocalVerdict::Dropped)
                .map(|r| r.0.size as u64)
                .sum();
            h.bytes -= gone;
        }
        if self.state != SenderState::Established {
            return;
        }
        // The unsent segments are the send's last ones: undone newest first.
        for (p, v) in refused.iter().rev() {
            if *v == LocalVerdict::Dropped && p.payload > 0 {
                self.unsend(p);
            }
        }
        self.enter_cwr(now);
        if self.sb.outstanding() == 0 {
            // tcp_write_xmit returns true with nothing in flight and data waiting, and
            // tcp_check_probe_timer arms the zero-window probe timer for one RTO, whose
            // tcp_write_wakeup sends the segment again; the RTO armed for the segment goes.
            self.timers.stop(Timer::Rto);
            self.timers.arm(Timer::Pace, self.rto_at(now));
        }
    }

    /// Segment `p` did not leave: its transmission is taken back.
    fn unsend(&mut self, p: &Packet) {
        let i = (self.seg_seq(p.seq) - 1) / self.mss;
        let len = p.payload as u64;
        if self.sb.seg(i).is_some_and(|s| s.retx) {
            self.sb.unretransmit(i);
            self.n.retransmits -= 1;
        } else {
            debug_assert_eq!(i + 1, self.sb.next_idx(), "only the newest segment is undone");
            self.sb.unpush();
            self.high_data = self.sb.seg_start(i);
            self.recovery.lt_bytes = self.recovery.lt_bytes.saturating_sub(len);
        }
        if let Some(prr) = self.prr.as_mut().filter(|_| self.recovery.reducing()) {
            prr.out -= len;
        }
        self.n.packets_sent -= 1;
        self.n.bytes_sent -= p.size as u64;
        self.cwr_pending |= p.tcp_flags & flags::CWR != 0;
    }

    /// Linux 3.2's tcp_enter_cwr: only from the Open and Disorder states (not in recovery,
    /// after a timeout or while an earlier reduction's window is still unacknowledged), the
    /// controller's ssthresh and a window reduced to it, the same once-per-window response as
    /// to an ECN-Echo (which also enters CWR through tcp_enter_cwr).
    fn enter_cwr(&mut self, now: Time) {
        if !self.recovery.in_recovery
            && self.recovery.loss_point.is_none()
            && self.reduce(now, CongestionKind::Ecn)
        {
            self.n.local_reductions += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::queue::LocalVerdict;

    /// The window's segments `from..` refused with `v` (the send's tail).
    fn refuse(out: &[Packet], from: usize, v: LocalVerdict) -> Vec<(Packet, LocalVerdict)> {
        out[from..].iter().map(|&p| (p, v)).collect()
    }

    #[test]
    fn a_local_drop_is_not_sent_and_enters_cwr_once_per_window() {
        // The initial window of 10 leaves in one tcp_write_xmit; the qdisc queues segments
        // 0-6 and returns NET_XMIT_DROP for 7: tcp_write_xmit stops there (8 and 9 are never
        // offered), snd_nxt stays at 7's first byte, and tcp_enter_cwr halves the window of
        // the 7 segments in flight (the controller's response to an ECN-Echo: 3.5 segments).
        let (mut s, out) = established(true, 10);
        assert_eq!(out.len(), 10);
        s.on_local_verdicts(&refuse(&out, 7, LocalVerdict::Dropped), 100);
        assert_eq!(s.snd_nxt(), 1 + 7 * MSS);
        assert_eq!(s.pipe(), 7 * MSS);
        assert_eq!((s.retransmits(), s.local_reductions()), (0, 1));
        assert_eq!(s.cwnd(), 3500);
        // Still in CWR (snd_una below the snd_nxt of the reduction): a second refusal does not
        // reduce again (tcp_enter_cwr acts only below TCP_CA_CWR).
        let again = [(out[6], LocalVerdict::Congested)];
        s.on_local_verdicts(&again, 100);
        assert_eq!((s.local_reductions(), s.cwnd()), (1, 3500));
        // The ACKs of 0-3 leave 3 in flight: segment 7 leaves first, as new data (not a
        // retransmission).
        let mut sent = vec![];
        for k in 1..=4 {
            sent.extend(segs(&ack(&mut s, 1 + k * MSS, &[], 200 + k)));
        }
        assert_eq!(sent.first(), Some(&7));
        assert_eq!(s.retransmits(), 0);
        // Past the reduction's snd_nxt (7), CWR is over: a new refusal reduces again.
        for k in 5..=8 {
            ack(&mut s, 1 + k * MSS, &[], 300 + k);
        }
        let w = s.cwnd();
        let out = ack(&mut s, 1 + 9 * MSS, &[], 400);
        assert!(!out.is_empty());
        s.on_local_verdicts(&refuse(&out, out.len() - 1, LocalVerdict::Dropped), 400);
        assert_eq!(s.local_reductions(), 2);
        assert!(s.cwnd() < w);
    }

    #[test]
    fn a_local_congestion_drop_counts_as_sent_and_is_repaired_by_recovery() {
        // NET_XMIT_CN for segment 5 (RED's congestion drop): net_xmit_eval makes it a success,
        // so snd_nxt covers all 10, and the loss is found as any other: the SACKs of 6, 7 and
        // 8 mark 5 lost (RFC 6675 IsLost), which is retransmitted. The CWR reduction was the
        // window's one: entering recovery from CWR leaves ssthresh (tcp_enter_recovery sets it
        // only below TCP_CA_CWR).
        let (mut s, out) = established(true, 10);
        s.on_local_verdicts(&[(out[5], LocalVerdict::Congested)], 100);
        assert_eq!(s.snd_nxt(), 1 + 10 * MSS);
        assert_eq!((s.local_reductions(), s.ssthresh()), (1, 5000));
        for k in 1..=5 {
            ack(&mut s, 1 + k * MSS, &[], 200 + k);
        }
        ack(&mut s, 1 + 5 * MSS, &[(6, 7)], 210);
        ack(&mut s, 1 + 5 * MSS, &[(6, 8)], 211);
        let out = ack(&mut s, 1 + 5 * MSS, &[(6, 9)], 212);
        assert_eq!(segs(&out).first(), Some(&5));
        assert_eq!((s.retransmits(), s.fast_recoveries()), (1, 1));
        assert_eq!(s.ssthresh(), 5000, "one reduction for the window");
    }

    #[test]
    fn a_refused_retransmission_is_tried_again_not_counted() {
        // Segment 2's fast retransmit meets NET_XMIT_DROP: tcp_retransmit_skb fails, so the
        // segment is not marked retransmitted and the next ACK's tcp_xmit_retransmit_queue
        // sends it.
        let (mut s, _) = established(true, 10);
        for k in 1..=2 {
            ack(&mut s, 1 + k * MSS, &[], 200 + k);
        }
        ack(&mut s, 1 + 2 * MSS, &[(3, 4)], 210);
        ack(&mut s, 1 + 2 * MSS, &[(3, 5)], 211);
        let out = ack(&mut s, 1 + 2 * MSS, &[(3, 6)], 212);
        assert_eq!(segs(&out)[0], 2);
        let pipe = s.pipe();
        s.on_local_verdicts(&refuse(&out, 0, LocalVerdict::Dropped), 212);
        assert_eq!(s.retransmits(), 0);
        assert_eq!(s.pipe(), pipe - out.len() as u64 * MSS);
        // The SACKs that follow bring the pipe below cwnd: 2 is the first to go.
        let out = (7..14)
            .map(|k| ack(&mut s, 1 + 2 * MSS, &[(3, k)], 206 + k))
            .find(|out| !out.is_empty())
            .expect("the window opens");
        assert_eq!(segs(&out)[0], 2);
        assert_eq!(s.retransmits(), 1);
    }

    #[test]
    fn a_user_space_transport_over_udp_hears_no_verdict() {
        // Linux 3.2's udp_send_skb turns ENOBUFS into success without IP_RECVERR, and
        // NET_XMIT_CN is success already: libutp's uTP never learns of a local drop.
        let udp = TcpSender::new(
            &TcpConfig {
                udp_socket: true,
                ..config(true, 10)
            },
            0,
            Dir::Up,
        )
        .unwrap();
        assert!(!udp.hears_local_verdicts());
        let tcp = TcpSender::new(&config(true, 10), 0, Dir::Up).unwrap();
        assert!(tcp.hears_local_verdicts());
    }
}
