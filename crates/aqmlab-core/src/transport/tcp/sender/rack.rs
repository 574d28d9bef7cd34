//! RFC 8985 RACK loss detection and its section 7 Tail Loss Probe (SACK only): the RACK and
//! answered-probe phases of an ACK, the probe, and the arming of [`Timer::Rack`] and
//! [`Timer::Probe`], over their state (`Rack`, `Tlp` in `state.rs`: `None` in the sender when
//! the feature is off).

use super::ack::Ack;
use super::state::{SenderState, TcpSender, DUP_THRESH};
use super::timers::Timer;
use crate::transport::cc::CongestionKind;
use crate::transport::Outbox;
use crate::units::{Time, MS};

/// Linux's floor for the RACK and loss-probe timers (include/net/tcp.h TCP_TIMEOUT_MIN_US).
const TIMEOUT_MIN: Time = 2 * MS;

impl TcpSender {
    /// The sender's minimum RTT (kept when RACK or the TSO autosize reads it), then RACK_update
    /// (RFC 8985 6.2 step 2) and RACK_detect_loss (step 5) on an ACK whose timestamp echo gave
    /// the RTT sample `rtt`: the number of segments marked lost.
    pub(super) fn rack_on_ack(&mut self, rtt: Option<Time>, now: Time) -> u64 {
        if self.rack.is_none() && self.cfg.tso_rtt_log == 0 {
            return 0;
        }
        let delivered = self.sb.delivered();
        for r in rtt
            .into_iter()
            .chain(delivered.map(|d| now.saturating_sub(d.xmit_ts)))
        {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let Some(rack) = &mut self.rack else { return 0 };
        if let Some(d) = delivered {
            let r = now.saturating_sub(d.xmit_ts);
            if rack.latest.is_none_or(|x| d > x) {
                rack.latest = Some(d);
                rack.rtt = r;
            }
        }
        self.rack_detect(now)
    }

    /// RACK_update_reo_wnd (RFC 8985 6.2 step 4, Linux tcp_rack_reo_wnd) without reordering
    /// seen (this receiver never reports any): 0 in recovery or once DupThresh segments are
    /// SACKed, else min_RTT / 4 capped at SRTT.
    fn rack_reo_wnd(&self) -> Time {
        if self.recovery.in_recovery || self.sb.sacked_segments() >= DUP_THRESH as u64 {
            return 0;
        }
        let quarter = self.min_rtt.unwrap_or(0) / 4;
        self.rtt.srtt().map_or(quarter, |s| quarter.min(s))
    }

    /// RACK_detect_loss: marks what the latest delivery shows lost and arms the reordering
    /// timer for the rest. Returns the number of segments marked.
    pub(super) fn rack_detect(&mut self, now: Time) -> u64 {
        let Some(rack) = &self.rack else { return 0 };
        let Some(latest) = rack.latest else { return 0 };
        let wait = rack.rtt + self.rack_reo_wnd();
        let (marked, next) = self.sb.rack_detect(latest, wait, now);
        let next = next.map(|at| self.kernel_timer(now, at - now, TIMEOUT_MIN));
        self.timers.set(Timer::Rack, next);
        marked
    }

    /// A tail loss probe's episode on an ACK (RFC 8985 7.4.2; Linux tcp_input.c
    /// tcp_process_tlp_ack, 5.14 on, and 3.10-3.x's form alike here): it waits for an ACK at
    /// or above the probe's end (TLPHighRxt, tlp_high_seq). A probe of new data ends it; a
    /// D-SACK of the retransmitted probe (FLAG_DSACK_TLP: a block of one segment at most,
    /// ending there) or a pure duplicate ACK at its end shows both copies arrived, and ends it
    /// with no loss; an ACK beyond its end without that shows the probe repaired a loss: the
    /// window is reduced once. The original's own ACK, at the end, waits for what follows.
    pub(super) fn tlp_on_ack(&mut self, a: &Ack, now: Time) {
        let una = self.snd_una;
        let mss = self.cfg.mss as u64;
        let Some(tlp) = self.tlp.as_mut() else { return };
        let Some(end) = tlp.end.filter(|&end| una >= end) else {
            return;
        };
        let needless = a.dsack.is_some_and(|d| d.end == end && d.end - d.start <= mss);
        let pure_dup = !a.advanced && a.sacked_bytes == 0 && !a.win_update;
        let lost = if !tlp.retx || needless || una == end && pure_dup {
            false
        } else if una > end {
            true
        } else {
            return;
        };
        tlp.end = None;
        if !self.recovery.in_recovery && self.recovery.loss_point.is_none() {
            if let Some(f) = &mut self.frto {
                f.retrans_stamp = None;
            }
        }
        if lost && !self.recovery.in_recovery {
            self.reduce(now, CongestionKind::Loss);
        }
    }

    /// The probe's episode ends with the reduction or timeout that starts (Linux
    /// tcp_init_cwnd_reduction, tcp_enter_loss: tlp_high_seq = 0).
    pub(super) fn tlp_end(&mut self) {
        if let Some(t) = &mut self.tlp {
            t.end = None;
        }
    }

    /// RFC 8985 7.2: outside loss recovery, with data in flight and no probe unanswered, the
    /// probe timeout is 2 SRTT (plus the RTO floor when one segment is in flight, for a
    /// delayed ACK; Linux tcp_schedule_loss_probe), and never after the RTO.
    #[inline(always)]
    pub(super) fn arm_pto(&mut self, now: Time) {
        self.timers.stop(Timer::Probe);
        let Some(srtt) = self.rtt.srtt() else { return };
        let Some(tlp) = &self.tlp else { return };
        if self.state != SenderState::Established
            || self.recovery.in_recovery
            || self.recovery.loss_point.is_some()
            || tlp.end.is_some()
            || self.sb.outstanding() == 0
        {
            return;
        }
        let mut pto = 2 * srtt;
        let floor = if self.sb.outstanding() == 1 {
            pto += self.rtt.min_rto();
            0
        } else {
            TIMEOUT_MIN
        };
        let at = self.kernel_timer(now, pto, floor);
        self.timers.arm(
            Timer::Probe,
            self.timers.get(Timer::Rto).map_or(at, |r| at.min(r)),
        );
    }

    /// The probe: one new segment if there is one the receive window allows, else a
    /// retransmission of the highest segment not SACKed; then the RTO restarts (RFC 8985 7.3).
    pub(super) fn send_probe(&mut self, now: Time, out: &mut Outbox) {
        self.timers.stop(Timer::Probe);
        let retx = if self.can_send_new(now) {
            self.send_new(now, out);
            false
        } else if let Some(i) = self
            .sb
            .highest_unsacked()
            .filter(|&i| self.sb.seg(i).is_some_and(|s| !s.retx))
        {
            self.retransmit(i, now, out);
            true
        } else {
            return;
        };
        self.n.tlp_probes += 1;
        if let Some(tlp) = &mut self.tlp {
            tlp.retx = retx;
            tlp.end = Some(self.high_data);
        }
        self.timers.arm(Timer::Rto, self.rto_at(now));
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::transport::tcp::config::{NextSeg, RackRetx};

    #[test]
    fn rack_waits_a_quarter_min_rtt_then_detects_a_lost_retransmission() {
        let (mut s, out) = linux_sender(40, 10);
        assert_eq!(out.len(), 10);
        // Segment 0 is lost. The first SACK (segment 1, sent at 100 ms, delivered at 200 ms)
        // gives RACK.rtt = min_RTT = 100 ms; with one segment SACKed the reordering window is
        // min_RTT / 4 = 25 ms, so segment 0 is only lost at 100 + 100 + 25 = 225 ms: the
        // reordering timer (RFC 8985 6.2).
        let sent = ack_ms(&mut s, 0, &[(1, 2)], 200, 100);
        assert_eq!(segs(&sent), vec![10], "the SACK frees room for new data");
        assert_eq!(s.next_timer(), Some(225 * MS));
        // A third SACKed segment makes the window 0 (DupThresh reached): segment 0 is lost now.
        ack_ms(&mut s, 0, &[(1, 3)], 201, 100);
        let sent = ack_ms(&mut s, 0, &[(1, 4)], 202, 100);
        assert!(s.in_recovery());
        assert_eq!(segs(&sent)[0], 0, "retransmitted at 202 ms");
        // The retransmission is lost too. SACKs of the rest of the first flight (sent at
        // 100 ms, before the retransmission) say nothing about it; the new data sent in
        // recovery (from 203 ms on) does: once a segment sent after 202 ms is SACKed, segment
        // 0's retransmission is overdue by RACK.rtt and is sent again, with no RTO.
        for k in 5..=10 {
            ack_ms(&mut s, 0, &[(1, k)], 198 + k, 100);
        }
        assert_eq!(s.retransmits(), 1);
        let mut again = None;
        for (n, k) in (11..=16).enumerate() {
            let sent = ack_ms(&mut s, 0, &[(1, k)], 303 + n as u64, 203);
            if segs(&sent).contains(&0) {
                again = Some(303 + n as u64);
                break;
            }
        }
        assert!(again.is_some(), "the lost retransmission is detected by RACK");
        assert_eq!((s.retransmits(), s.rto_count()), (2, 0));
    }

    #[test]
    fn a_lost_retransmission_below_sacked_ones_waits_for_the_rto_under_the_echo_test_only() {
        // Ten segments leave at 100 ms; 0-2 are lost and 3-9 are SACKed from 200 ms on. The
        // receiver holds a hole at 0, so every ACK echoes the TSval of its last in-order
        // segment, the handshake's (RFC 7323 4.3: TS.Recent moves with the window's left edge
        // only): echo 0. The third SACK (202 ms) shows 0-2 lost (reordering window 0 at
        // DupThresh); PRR lets one retransmission go per ACK, at 202, 203 and 204 ms.
        let rules = [
            (RackRetx::Echo, vec![], 1),
            (RackRetx::MinRtt, vec![0], 0),
            (RackRetx::Linux, vec![0], 0),
        ];
        for (rule, again, rto) in rules {
            let cfg = TcpConfig {
                rack_retx: rule,
                ..linux_config(10)
            };
            let (mut s, out) = linux_sender_cfg(cfg);
            assert_eq!(out.len(), 10);
            let mut sent = vec![];
            for (k, now) in [(4, 200), (5, 201), (6, 202), (7, 203), (8, 204), (10, 205)] {
                sent.extend(segs(&ack_ms(&mut s, 0, &[(3, k)], now, 0)));
            }
            assert_eq!(sent, vec![0, 1, 2], "{rule:?}");
            // The retransmission of 0 is lost; that of 1 is SACKed at 303 ms, one minimum RTT
            // (100 ms, the handshake's) after it left. "echo": the ACK echoes 0, older than the
            // retransmission, so RACK cannot tell which copy arrived and learns nothing: 0 waits
            // for the retransmission timer. "min_rtt": 100 ms is not below the minimum RTT, so
            // RACK.xmit_ts becomes 203 ms and RACK.rtt 100 ms; 0's retransmission (202 ms) is
            // then overdue (202 + 100 + 0 <= 303) and goes again on this ACK.
            let sent = ack_ms(&mut s, 0, &[(1, 2), (3, 10)], 303, 0);
            assert_eq!(segs(&sent), again, "{rule:?}");
            ack_ms(&mut s, 0, &[(1, 10)], 304, 0);
            while s.retransmits() < 4 {
                let t = s.next_timer().expect("a timer is armed");
                s.on_timer(t, &mut vec![]);
            }
            assert_eq!(s.rto_count(), rto, "{rule:?}");
        }
    }

    /// A `linux`-profile sender of 40 segments (`rack_retx` as given) whose first ten leave at
    /// 100 ms; the ACK of segment 0 at 200 ms gives the minimum RTT, 100 ms; then a delay
    /// spike holds the ACKs until the loss probe and the timer have fired, the timer resending
    /// segment 1. Returns the sender and when the timer fired (ms).
    fn timed_out_during_a_delay_spike(rack_retx: RackRetx) -> (TcpSender, Time) {
        let (mut s, out) = linux_sender_cfg(TcpConfig {
            rack_retx,
            mss: MSS as u32,
            bytes: Some(40 * MSS),
            ..crate::transport::tcp::profiles::linux()
        });
        assert_eq!(out.iter().filter(|p| p.payload > 0).count(), 10);
        ack_ms(&mut s, 1, &[], 200, 100);
        let mut at = 0;
        while s.rto_count() == 0 {
            at = s.next_timer().expect("a timer is armed");
            s.on_timer(at, &mut vec![]);
        }
        assert_eq!(
            s.retransmits(),
            1,
            "{rack_retx:?}: the timer's retransmission of 1"
        );
        (s, at / MS)
    }

    #[test]
    fn the_cumulative_ack_of_a_spurious_retransmission_leaves_rack_where_linux_does() {
        // Ten segments leave at 100 ms; the ACK of segment 0 at 200 ms gives the minimum RTT,
        // 100 ms. Then a delay spike holds the ACKs: the loss probe and the timer fire, the
        // timer resending segment 1. The ACKs of the originals come 150 ms after that
        // retransmission, each echoing 100 ms. The first undoes the timeout (its echo is
        // older than the retransmission: tcp_try_undo_loss). It also acknowledges segment 1,
        // whose latest transmission is the retransmission, more than the minimum RTT before:
        // "min_rtt" takes that as RACK's clock, so segments 2-9, sent at 100 ms, look overdue
        // though nothing was lost. Marked after the undo, they start a fast recovery whose PRR
        // (tcp_cwnd_reduction) resends one segment on this ACK (newly lost ones: as many as it
        // delivered) and two on the next (one more than delivered beyond what was sent,
        // pipe far below ssthresh 7): 2, then 3 and 4. Linux skips a cumulatively
        // acknowledged segment whose ACK echoes a TSval older than its retransmission
        // (tcp_clean_rtx_queue, tcp_skb_spurious_retrans): "linux" and "echo" resend nothing.
        let rules = [
            (RackRetx::Echo, vec![]),
            (RackRetx::MinRtt, vec![2, 3, 4]),
            (RackRetx::Linux, vec![]),
        ];
        for (rule, resent) in rules {
            let (mut s, fired) = timed_out_during_a_delay_spike(rule);
            let now = fired + 150;
            let mut sent = ack_ms(&mut s, 2, &[], now, 100);
            assert_eq!(s.spurious_rtos(), 1, "{rule:?}");
            sent.extend(ack_ms(&mut s, 3, &[], now + 1, 100));
            let again: Vec<u64> = segs(&sent).into_iter().filter(|&k| k < 10).collect();
            assert_eq!(again, resent, "{rule:?}");
        }
    }

    #[test]
    fn rack_marks_its_losses_after_the_undo_of_a_spurious_timeout() {
        // `timed_out_during_a_delay_spike` (the timeout marks every segment lost). Segment 2 was
        // really lost: 150 ms after the retransmission one ACK acknowledges 0-1 and SACKs 3-9,
        // echoing 100 ms. Linux undoes the timeout on it (tcp_process_loss: tcp_try_undo_loss
        // clears every loss mark), then RACK marks what this ACK shows lost
        // (tcp_identify_packet_loss): segment 2, sent with segment 9 and below it, seven
        // segments SACKed (no reordering window). The connection is Open, so it enters fast
        // recovery and resends 2 on this ACK (tcp_time_to_recover: lost_out).
        let (mut s, fired) = timed_out_during_a_delay_spike(RackRetx::Linux);
        let sent = ack_ms(&mut s, 2, &[(3, 10)], fired + 150, 100);
        assert_eq!(s.spurious_rtos(), 1);
        let again: Vec<u64> = segs(&sent).into_iter().filter(|&k| k < 10).collect();
        assert_eq!(again, vec![2]);
        assert_eq!(s.retransmits(), 2);
    }

    #[test]
    fn only_rfc6675_rescues_the_highest_segment_when_nothing_else_may_go() {
        // Ten segments, all sent at 100 ms; 0 and 9 are lost, 1-8 SACKed from 200 ms on. The
        // third SACK shows 0 lost and it is resent; 9 was sent with the latest delivered
        // segment and above it, so RACK cannot call it lost yet, and there is no new data.
        // RFC 6675's rule 4 rescues 9 at once; Linux (`nextseg = "lost"`, and the forward
        // retransmit, rule 3, has no hole below the highest SACKed segment to resend) waits:
        // the ACK of 0's retransmission at 302 ms moves RACK past 9, which goes then.
        for (rules, rescue) in [
            (NextSeg::Rfc6675, true),
            (NextSeg::Forward, false),
            (NextSeg::Lost, false),
        ] {
            let (mut s, out) = linux_sender_cfg(TcpConfig {
                nextseg: rules,
                ..linux_config(10)
            });
            assert_eq!(out.len(), 10);
            let mut sent = vec![];
            for k in 2..=9 {
                sent.extend(segs(&ack_ms(&mut s, 0, &[(1, k)], 198 + k, 100)));
            }
            let expect = if rescue { vec![0, 9] } else { vec![0] };
            assert_eq!(sent, expect, "{rules:?}");
            if !rescue {
                let sent = ack_ms(&mut s, 9, &[], 302, 202);
                assert_eq!(segs(&sent), vec![9], "{rules:?}");
            }
            assert_eq!(s.rto_count(), 0);
        }
    }

    #[test]
    fn linux_arms_the_reordering_and_probe_timers_on_its_ticks() {
        // The two tests' timers on a kernel of HZ 250 (4 ms ticks): expiring usecs_to_jiffies(delay
        // + 2 ms) ticks after the jiffy running at the arming, run by the timer wheel from the
        // bucket one tick later. The reordering timer armed at 200 ms (jiffy 50) for 25 ms:
        // ceil(27 / 4) = 7 ticks, expiry jiffy 57, run at 58: 232 ms where RFC 8985 gives 225.
        // The probe armed at 200 ms for 2 SRTT = 200 ms: ceil(202 / 4) = 51 ticks, run at jiffy
        // 102, 408 ms (400).
        for (hz, reo, pto) in [(0, 225, 400), (250, 232, 408)] {
            let (mut s, _) = linux_sender_with(40, 10, hz);
            ack_ms(&mut s, 0, &[(1, 2)], 200, 100);
            assert_eq!(s.next_timer(), Some(reo * MS), "timer_hz {hz}");
            let (mut s, _) = linux_sender_with(10, 10, hz);
            ack_ms(&mut s, 8, &[], 200, 100);
            assert_eq!(s.next_timer(), Some(pto * MS), "timer_hz {hz}");
        }
        // A probe 63 ticks or more away goes to the wheel's second level, 8 ticks a bucket: SRTT
        // 160 ms, the probe armed at 320 ms (jiffy 80) for 320 ms: ceil(322 / 4) = 81 ticks,
        // expiry jiffy 161, rounded up to the second level's next bucket, (161 / 8 + 1) x 8 =
        // jiffy 168: 672 ms (640 by RFC 8985; 648 on the first level's grid).
        let (mut s, _) = established_at(
            TcpConfig {
                timer_hz: 250,
                ..linux_config(10)
            },
            160 * MS,
        );
        ack_ms(&mut s, 8, &[], 320, 160);
        assert_eq!(s.next_timer(), Some(672 * MS));
    }

    #[test]
    fn linux_arms_the_retransmission_timer_on_its_ticks() {
        // The SYN leaves at 0 with the 1 s initial RTO: 250 ticks at HZ 250, the wheel's second
        // level (63-503 ticks, 8-tick buckets), run at jiffy 256, 1,024 ms. The handshake's
        // sample of 100 ms gives RTO = SRTT + max(2 x 100 ms, 200 ms) = 300 ms (tcp_rtt_estimator
        // on a first sample, tcp_set_rto); the window leaves at 100 ms (jiffy 25) and the RTO
        // expires at jiffy 100, run at 104: 416 ms, where the RTO's own time is 400 ms.
        for (hz, syn, rto) in [(0, 1_000, 400), (250, 1_024, 416)] {
            let cfg = TcpConfig {
                timer_hz: hz,
                tlp: false,
                ..linux_config(20)
            };
            let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
            s.start(0, &mut vec![]);
            assert_eq!(s.next_timer(), Some(syn * MS), "timer_hz {hz}");
            let (s, _) = established_at(cfg, 100 * MS);
            assert_eq!(s.rto(), 300 * MS);
            assert_eq!(s.next_timer(), Some(rto * MS), "timer_hz {hz}");
        }
    }

    /// A sender that writes a 37-byte preamble as it connects (an iperf3 client's cookie) and
    /// its data from 600 ms; connected at 100 ms (SRTT 100 ms).
    fn cookie_sender() -> TcpSender {
        let (mut s, out) = linux_sender_cfg(TcpConfig {
            bytes: None,
            preamble: 37,
            on_periods: vec![(600 * MS, Time::MAX)],
            ..linux_config(0)
        });
        assert_eq!(
            out.iter().map(|p| (p.seq, p.payload)).collect::<Vec<_>>(),
            vec![(1, 37)]
        );
        // One segment out: PTO = 2 SRTT + the RTO floor (400 ms), capped at the RTO (SRTT +
        // 4 RTTVAR = 300 ms): the probe at 400 ms retransmits the cookie.
        assert_eq!(s.next_timer(), Some(400 * MS));
        let mut probe = vec![];
        s.on_timer(400 * MS, &mut probe);
        assert_eq!(
            probe.iter().map(|p| (p.seq, p.payload)).collect::<Vec<_>>(),
            vec![(1, 37)]
        );
        assert_eq!((s.tlp_probes(), s.rto_count()), (1, 0));
        s
    }

    #[test]
    fn a_probe_that_proves_needless_ends_its_episode_without_a_reduction() {
        // RFC 8985 7.4 and Linux tcp_process_tlp_ack: the cookie's ACK waited in a queue, so
        // the probe was needless. The original's ACK (450 ms, echoing 100 ms) reaches the
        // probe's end and waits; the next ACK shows both copies arrived: a D-SACK of the
        // probe's copy (RFC 2883: a block below the cumulative ACK), or with no D-SACK a pure
        // duplicate ACK. No reduction: slow start goes on from the initial window.
        let dsack = [SackBlock { start: 1, end: 38 }];
        for blocks in [&dsack[..], &[]] {
            let mut s = cookie_sender();
            ack_blocks_echoing(&mut s, 38, &[], 450 * MS, 100 * MS);
            ack_blocks_echoing(&mut s, 38, blocks, 550 * MS, 400 * MS);
            assert_eq!(s.ssthresh(), u64::MAX, "{blocks:?}");
            // the data goes at 600 ms: the initial window and one segment for the cookie's ACK
            // (slow start counts packets, Linux tcp_slow_start)
            let mut out = vec![];
            s.on_timer(600 * MS, &mut out);
            assert_eq!(out.len(), 11, "{blocks:?}");
        }
    }

    #[test]
    fn a_probe_that_repaired_a_loss_reduces_the_window_once_an_ack_passes_it() {
        // The cookie was lost and the probe's copy repaired it: its ACK (500 ms, echoing
        // 400 ms) reaches the probe's end; no D-SACK or duplicate follows. The episode ends
        // with the first ACK beyond the end (the data's, 750 ms): the window is reduced
        // once (Linux tcp_init_cwnd_reduction, CWR). Before that ACK, the data leaves with
        // the whole window (11 segments: the initial 10 and one for the cookie's ACK).
        let mut s = cookie_sender();
        ack_blocks_echoing(&mut s, 38, &[], 500 * MS, 400 * MS);
        assert_eq!(s.ssthresh(), u64::MAX);
        let mut out = vec![];
        s.on_timer(600 * MS, &mut out);
        assert_eq!(out.len(), 11);
        ack_blocks_echoing(&mut s, 38 + MSS, &[], 750 * MS, 600 * MS);
        // NewReno's threshold: half the 10 segments in flight (RFC 5681 eq. 4; Linux's
        // tcp_reno_ssthresh halves the window, 11 >> 1, to the same 5)
        let reduced = 5 * MSS;
        assert_eq!(s.ssthresh(), reduced);
        // a second ACK beyond it reduces nothing more
        ack_blocks_echoing(&mut s, 38 + 2 * MSS, &[], 751 * MS, 600 * MS);
        assert_eq!(s.ssthresh(), reduced);
    }

    #[test]
    fn tail_loss_probe_turns_a_tail_loss_into_fast_recovery() {
        // RFC 8985 section 7: the last two segments of a 10-segment transfer are lost. The ACK
        // of the first eight at 200 ms leaves two in flight: PTO = 2 SRTT = 200 ms, earlier than
        // the RTO (SRTT 100 ms + 4 x RTTVAR 37.5 ms = 250 ms). The probe retransmits the last
        // segment; its SACK shows segment 8 lost to RACK, which repairs it in fast recovery.
        let (mut s, out) = linux_sender(10, 10);
        assert_eq!(out.len(), 10);
        assert!(ack_ms(&mut s, 8, &[], 200, 100).is_empty());
        assert_eq!(s.next_timer(), Some(400 * MS));
        let mut probe = vec![];
        s.on_timer(400 * MS, &mut probe);
        assert_eq!(segs(&probe), vec![9], "the probe: the last segment again");
        assert_eq!(s.tlp_probes(), 1);
        let repair = ack_ms(&mut s, 8, &[(9, 10)], 500, 400);
        assert!(s.in_recovery());
        assert_eq!(segs(&repair), vec![8]);
        ack_ms(&mut s, 10, &[], 600, 500);
        assert_eq!(s.state(), SenderState::Done);
        assert_eq!(s.rto_count(), 0);
        // Without TLP the same tail waits for the RTO at 450 ms.
        let (mut s, _) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 10,
            cc: "newreno".into(),
            bytes: Some(10 * MSS),
            ..crate::transport::tcp::profiles::rfc()
        });
        ack(&mut s, 1 + 8 * MSS, &[], 200);
        assert_eq!(s.tlp_probes(), 0);
        assert_eq!(s.next_timer(), Some(200 + s.rto()));
    }
}
