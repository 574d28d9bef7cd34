//! Whether the window limits the sender: the gate on the window's growth (the TCP key
//! `cwnd_limited`, [`CwndLimited`]). Linux 3.14 tests what was in flight before each ACK
//! ([`limited_3_14`]); 3.16 on keep a record of each flight ([`CwndUsage`]), written at the end
//! of every pass of tcp_write_xmit that had new data to send (tcp_output.c tcp_cwnd_validate:
//! [`TcpSender::record_usage`]) and read when an ACK would grow the window (include/net/tcp.h
//! tcp_is_cwnd_limited: [`CwndUsage::limits`]).

use super::state::CwndUsage;
use super::TcpSender;
use crate::transport::tcp::config::CwndLimited;
use crate::units::Time;

/// Linux 3.14's tcp_is_cwnd_limited (net/ipv4/tcp_cong.c) in bytes: the window limits the
/// sender when what was in flight before the ACK fills it; or, with GSO (sk_can_gso, as on the
/// hosts of the studies), when less than a third of it is unused (sysctl_tcp_tso_win_divisor 3)
/// and the unused part is under one GSO frame (64 KiB, sk_gso_max_size); or when at most 3
/// segments of it are unused (tcp_max_tso_deferred_mss).
pub(super) fn limited_3_14(in_flight: u64, cwnd: u64, mss: u64) -> bool {
    if in_flight >= cwnd {
        return true;
    }
    let left = cwnd - in_flight;
    (left * 3 < cwnd && left < 65_536) || left <= 3 * mss
}

impl CwndUsage {
    /// tcp_cwnd_validate after a pass of tcp_write_xmit: `sent` whether it sent new data,
    /// `stopped` whether the window stopped it (tcp_cwnd_test found no room after the pass,
    /// or tcp_tso_should_defer held a packet back for the window), `out` the segments then
    /// sent and not cumulatively acknowledged (packets_out), `snd_una` and `snd_nxt` as the
    /// pass left them. 3.16 to 5.x record only after a pass that sent, and a record holds until
    /// snd_una passes its snd_nxt unless more segments are out; 6.0 on also record a pass
    /// stopped by the window, and a record of a stopped pass holds against more segments out.
    pub(super) fn record(
        &mut self,
        rule: CwndLimited,
        sent: bool,
        stopped: bool,
        out: u64,
        snd_una: u64,
        snd_nxt: u64,
    ) {
        let flight_acked = snd_una >= self.until;
        let update = match rule {
            CwndLimited::Linux5 => sent && (flight_acked || out > self.max_out),
            _ => (sent || stopped) && (flight_acked || stopped || (!self.stopped && out > self.max_out)),
        };
        if update {
            self.stopped = stopped;
            self.max_out = out;
            self.until = snd_nxt;
        }
    }

    /// tcp_is_cwnd_limited with a window of `cwnd` segments: in slow start the window limits
    /// while it is under twice the most segments recorded out ("ensure cwnd grows to twice what
    /// was ACKed"), and 6.0 on also when the recorded pass was stopped by the window; in
    /// congestion avoidance only then.
    pub(super) fn limits(&self, rule: CwndLimited, cwnd: u64, slow_start: bool) -> bool {
        let grows_to_twice = slow_start && cwnd < 2 * self.max_out;
        match rule {
            CwndLimited::Linux5 if slow_start => grows_to_twice,
            _ => self.stopped || grows_to_twice,
        }
    }
}

impl TcpSender {
    /// Whether the window limits the sender as an ACK is about to grow it (tcp_is_cwnd_limited),
    /// and whether the last flight's record says the window stopped it (tp->is_cwnd_limited);
    /// `prior_flight` was in flight before the ACK (tcp_ack's prior_in_flight, 3.14's rule).
    pub(super) fn window_limits(&self, prior_flight: u64) -> (bool, bool) {
        match self.cfg.cwnd_limited {
            CwndLimited::Off => (true, true),
            CwndLimited::Linux3_14 => {
                let limited = limited_3_14(prior_flight, self.st.cwnd, self.mss);
                (limited, limited)
            }
            rule => (
                self.usage
                    .limits(rule, self.st.cwnd / self.mss, self.st.in_slow_start()),
                self.usage.stopped,
            ),
        }
    }

    /// The start of a transmission pass: when the rule records flights and the application
    /// has new data (tcp_push_pending_frames runs tcp_write_xmit only with a send head), the
    /// snd_nxt that [`Self::record_usage`] compares with.
    pub(super) fn usage_pass(&mut self, now: Time) -> Option<u64> {
        self.usage.deferred = false;
        (self.cfg.cwnd_limited.records_flights() && self.app_has_data(now)).then_some(self.high_data)
    }

    /// The end of the pass begun at snd_nxt `nxt` (tcp_write_xmit: `is_cwnd_limited |=
    /// tcp_packets_in_flight(tp) >= tcp_snd_cwnd(tp)`, then tcp_cwnd_validate).
    pub(super) fn record_usage(&mut self, nxt: u64) {
        let in_flight = if self.cfg.sack {
            self.sb.pipe()
        } else {
            self.flight()
        };
        let stopped = self.usage.deferred || in_flight + self.mss > self.st.cwnd;
        let out = self.sb.outstanding() as u64;
        let (una, snd_nxt) = (self.snd_una, self.high_data);
        self.usage
            .record(self.cfg.cwnd_limited, snd_nxt > nxt, stopped, out, una, snd_nxt);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::{limited_3_14, CwndUsage};
    use crate::transport::tcp::config::CwndLimited::{self, Linux, Linux3_14, Linux5, Off};

    #[test]
    fn cwnd_limited_follows_linux_3_14() {
        // tcp_cong.c tcp_is_cwnd_limited with MSS 1448, in packets: cwnd 10 is limited with 10
        // in flight; with 7 (3 left, 3*3 < 10) too; with 6 (4 left: 12 >= 10, 4 > 3) not.
        let (mss, seg) = (1448, 1448u64);
        assert!(limited_3_14(10 * seg, 10 * seg, mss));
        assert!(limited_3_14(7 * seg, 10 * seg, mss));
        assert!(!limited_3_14(6 * seg, 10 * seg, mss));
        // cwnd 100: 30 left (43440 B < 64 KiB, 90 < 100) is limited, 40 left (120 >= 100) not;
        // cwnd 300 with 50 left: under a third, but 72400 B is more than a GSO frame.
        assert!(limited_3_14(70 * seg, 100 * seg, mss));
        assert!(!limited_3_14(60 * seg, 100 * seg, mss));
        assert!(!limited_3_14(250 * seg, 300 * seg, mss));
        assert!(limited_3_14(297 * seg, 300 * seg, mss));
    }

    /// The window of a NewReno sender (IW 10, slow start) that has `segments` segments to send
    /// and sends them at once, after each is acknowledged on its own.
    fn window_after(rule: CwndLimited, segments: u64) -> u64 {
        let (mut s, out) = linux_sender_cfg(TcpConfig {
            cwnd_limited: rule,
            ..linux_config(segments)
        });
        assert_eq!(out.len() as u64, segments);
        for i in 1..=segments {
            ack_ms(&mut s, i, &[], 200 + i, 100);
        }
        s.st.cwnd / MSS
    }

    #[test]
    fn slow_start_grows_the_window_to_twice_what_was_sent() {
        // include/net/tcp.h, above tcp_is_cwnd_limited: "cwnd is 10 (IW10), but application
        // sends 9 frames. We allow cwnd to reach 18 when all frames are ACKed." Ungated, each
        // of the 9 ACKs adds a segment (19); one segment sent (an application's first short
        // write) leaves the window at 10 under the recorded rules, not under 3.14's, which
        // looks at what is in flight before each ACK (one segment of 10: not limited).
        assert_eq!(window_after(Linux, 9), 18);
        assert_eq!(window_after(Linux5, 9), 18);
        assert_eq!(window_after(Off, 9), 19);
        assert_eq!(window_after(Linux, 1), 10);
        assert_eq!(window_after(Linux5, 1), 10);
        assert_eq!(window_after(Linux3_14, 1), 10);
        assert_eq!(window_after(Off, 1), 11);
        // A window that was filled grows on every ACK: 10 sent of 10.
        assert_eq!(window_after(Linux, 10), 20);
    }

    #[test]
    fn congestion_avoidance_grows_only_after_a_pass_stopped_by_the_window() {
        // tcp_is_cwnd_limited outside slow start: tp->is_cwnd_limited alone, whatever was out.
        let mut u = CwndUsage::default();
        u.record(Linux, true, false, 40, 1, 1000);
        assert!(!u.limits(Linux, 50, false));
        assert!(u.limits(Linux, 50, true), "in slow start 50 < 2 * 40");
        assert!(!u.limits(Linux, 80, true));
        u.record(Linux, true, true, 50, 1, 2000);
        assert!(u.limits(Linux, 50, false));
        assert!(u.limits(Linux5, 50, false));
    }

    #[test]
    fn linux_6_remembers_a_flight_stopped_by_the_window() {
        // f4ce91ce12a7's sequence: (a) TSO deferral stops a pass for the window with few
        // packets out; (b) later in the same flight, a pass not stopped by the window (paced)
        // has more out. Before the fix the larger count flipped is_cwnd_limited back to false;
        // after it the flight stays limited until snd_una passes the record's snd_nxt.
        for (rule, limited) in [(Linux5, false), (Linux, true)] {
            let mut u = CwndUsage::default();
            u.record(rule, true, true, 10, 1, 10_000);
            u.record(rule, true, false, 14, 2_000, 14_000);
            assert_eq!(u.limits(rule, 30, false), limited, "{rule:?}");
        }
        // Once the flight is acknowledged the next pass writes a new record.
        let mut u = CwndUsage::default();
        u.record(Linux, true, true, 10, 1, 10_000);
        u.record(Linux, true, false, 14, 10_000, 24_000);
        assert!(!u.limits(Linux, 30, false));
        assert_eq!(u.max_out, 14);
    }

    #[test]
    fn linux_6_records_a_pass_that_sent_nothing_for_the_window() {
        // 299bcb55ecd1: a TSO deferral that sends nothing left no record before the fix.
        for (rule, limited) in [(Linux5, false), (Linux, true)] {
            let mut u = CwndUsage::default();
            u.record(rule, true, false, 5, 1, 5_000);
            u.record(rule, false, true, 5, 5_000, 5_000);
            assert_eq!(u.limits(rule, 30, false), limited, "{rule:?}");
        }
    }
}
