//! Linux-style pacing ([`Pacing`]): the burst size and rate, and the hold on the next burst,
//! either by the sender's own timer or, when its host's qdisc is fq, by the departure time
//! stamped on each packet (EDT), with TCP Small Queues bounding what waits in the host.

use super::super::config::SmallQueues;
use super::state::TcpSender;
use super::timers::Timer;
use crate::transport::wire::{Pacing, HEADER};
use crate::transport::Outbox;
use crate::units::{Time, SEC};

/// Linux's `sk_pacing_shift` (include/net/sock.h): TCP Small Queues let about 2^-10 s of the
/// pacing rate wait in the host.
const PACING_SHIFT: u32 = 10;

/// Linux 3.14's sysctl_tcp_limit_output_bytes (net/ipv4/tcp_output.c: 131072, "two TSO
/// segments").
const LIMIT_OUTPUT_BYTES_3_14: u64 = 131_072;

impl TcpSender {
    /// Segments per paced burst and the pacing rate in bytes per second (Linux
    /// tcp_update_pacing_rate, tcp_tso_autosize; a rate-based controller sets the rate);
    /// `None` before the first RTT sample.
    pub(super) fn pacing_burst(&mut self, p: &Pacing) -> Option<(u64, u64)> {
        let srtt = self.rtt.srtt()?.max(1);
        if self.rate.is_some() {
            // A rate-based controller starts from the handshake's RTT (Linux's bbr_init).
            self.sync_state();
        }
        let rate = match self.cc.pacing_rate(&self.st) {
            Some(r) => r.max(1),
            None => self.window_rate(p, srtt),
        };
        // A wire rate is divided into bursts of MTU-sized packets (prague_update_pacing_rate)
        let unit = if p.wire_rate {
            self.mss + HEADER as u64
        } else {
            self.mss
        };
        let segs = match p.tso_segs {
            Some(n) => n as u64,
            None => (((rate >> p.burst_shift) + self.min_rtt_allowance(p.rtt_log)).min(65_535) / unit)
                .max(p.min_burst),
        };
        Some((segs, rate))
    }

    /// tcp_tso_autosize's min-RTT term (Linux 5.19 on): gso_max_size >> (min RTT in us >>
    /// `rtt_log`) bytes while that shift is under 32; 0 with `rtt_log` 0 or no RTT sample yet.
    fn min_rtt_allowance(&self, rtt_log: u32) -> u64 {
        match self.min_rtt {
            Some(m) if rtt_log > 0 => {
                let r = (m / 1_000) >> rtt_log;
                if r < 32 {
                    65_536 >> r
                } else {
                    0
                }
            }
            _ => 0,
        }
    }

    /// Segments per TSO/GSO piece (Linux tcp_tso_autosize at the pacing rate, which every
    /// sender keeps, paced or not: tcp_update_pacing_rate), the controller's own rate or the
    /// window's; before the first RTT sample, when Linux's rate is still unlimited, the
    /// 64 KB of gso_max_size.
    pub(super) fn autosize_segs(&mut self) -> u64 {
        let p = self.socket_pacing();
        match self.pacing_burst(&p) {
            Some((segs, _)) => segs,
            None => (65_535 / self.mss).max(p.min_burst),
        }
    }

    /// The pacing a Linux socket keeps whether it paces or not: the sender's own, else the
    /// profile's ratios (net.ipv4.tcp_pacing_ss_ratio and _ca_ratio) and TSO sizing.
    fn socket_pacing(&self) -> Pacing {
        match self.pacing {
            Some(p) => p,
            None => Pacing {
                ss_ratio: self.cfg.pacing_ss_ratio,
                ca_ratio: self.cfg.pacing_ca_ratio,
                tso_segs: self.cfg.tso_segs.0,
                rtt_log: self.cfg.tso_rtt_log,
                ..Pacing::LINUX
            },
        }
    }

    /// The window's sk_pacing_rate in bytes per second (tcp_update_pacing_rate, run on every
    /// ACK, paced or not), a controller without a rate of its own's; `None` before the first
    /// RTT sample.
    pub(super) fn socket_pacing_rate(&self) -> Option<u64> {
        let srtt = self.rtt.srtt()?.max(1);
        Some(self.window_rate(&self.socket_pacing(), srtt))
    }

    /// Linux tcp_update_pacing_rate: the ratio for slow start or avoidance x window / SRTT;
    /// with `wire_rate` the window in IP packets (tcp_prague.c prague_update_pacing_rate).
    fn window_rate(&self, p: &Pacing, srtt: Time) -> u64 {
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 {
            p.ss_ratio
        } else {
            p.ca_ratio
        };
        let window = self.st.cwnd.max(self.flight()) as u128;
        let window = if p.wire_rate {
            window * (self.mss + HEADER as u64) as u128 / self.mss as u128
        } else {
            window
        };
        (window * ratio as u128 * SEC as u128 / (100 * srtt as u128)).max(1) as u64
    }

    /// Whether pacing holds the next segment back; arms the pacing wake-up if so.
    pub(super) fn paced_out(&mut self, now: Time) -> bool {
        if self.pacing.is_some() && !self.stamps() && now < self.pace_next {
            self.timers.arm(Timer::Pace, self.pace_next);
            return true;
        }
        false
    }

    /// One pass of the window loop, a burst of `burst.0` segments at `burst.1` bytes per second
    /// when pacing; returns the segments sent.
    pub(super) fn send_burst(&mut self, now: Time, out: &mut Outbox, burst: Option<(u64, u64)>) -> usize {
        let before = (self.n.bytes_sent, self.n.packets_sent);
        self.send_window(now, out, burst.map(|(segs, _)| segs));
        let packets = self.n.packets_sent - before.1;
        if let Some((_, rate)) = burst {
            // The rate is of payload (cwnd and the controllers count segments of MSS bytes),
            // and Linux holds the next burst back by the payload it sent
            // (tcp_update_skb_after_send: the skb's length, without the headers).
            let headers = packets * HEADER as u64;
            self.burst_sent(now, self.n.bytes_sent - before.0 - headers, rate);
        }
        packets as usize
    }

    /// Pacing through the host's fq (Linux tcp_write_xmit with SK_PACING_FQ): bursts of `segs`
    /// leave at once while the window and TCP Small Queues allow, each packet stamped with its
    /// burst's departure time (__tcp_transmit_skb: `tcp_wstamp_ns`, at least now), which the
    /// burst then moves on by its length at `rate` (tcp_update_skb_after_send).
    pub(super) fn send_stamped(&mut self, now: Time, out: &mut Outbox, segs: u64, rate: u64) {
        while !self.small_queue_full(segs, rate) {
            let stamp = self.pace_next.max(now);
            let start = out.len();
            let sent = self.send_burst(now, out, Some((segs, rate)));
            for p in &mut out[start..] {
                p.tstamp = stamp;
            }
            if (sent as u64) < segs {
                break;
            }
        }
    }

    /// TCP Small Queues before a burst of `segs` at `rate` through the host's fq: whether the
    /// host holds more of this sender's bytes than [`Self::small_queue_limit`], unless (Linux
    /// 4.20-6.x, tcp_small_queue_check) at most one burst is unacknowledged
    /// (`tcp_rtx_queue_empty_or_single_skb`); if so the sender waits for a packet to leave the
    /// host.
    fn small_queue_full(&mut self, segs: u64, rate: u64) -> bool {
        let burst = segs * (self.mss + HEADER as u64);
        let limit = self.small_queue_limit(burst, rate);
        let single = self.cfg.small_queues == SmallQueues::Linux && self.sb.outstanding() as u64 <= segs;
        let h = self.host.as_mut().expect("pacing through the host's fq");
        h.throttled = h.bytes > limit && !single;
        h.throttled
    }

    /// TCP Small Queues' limit on the bytes a sender holds in its host, sending bursts of
    /// `burst` bytes at a pacing rate of `rate` bytes per second. Linux 4.20-6.x
    /// (tcp_small_queue_check): max(two bursts, 2^-10 s at the pacing rate); its cap,
    /// tcp_limit_output_bytes, applies only to a sender that does not pace. Linux 3.14
    /// (tcp_write_xmit): max(tcp_limit_output_bytes, 2^-10 s at 3.14's pacing rate). Linux
    /// counts each skb's truesize, which adds the sk_buff's own few hundred bytes; the model
    /// counts the packets' sizes.
    pub(super) fn small_queue_limit(&self, burst: u64, rate: u64) -> u64 {
        match self.cfg.small_queues {
            SmallQueues::Off => u64::MAX,
            SmallQueues::Linux => (2 * burst).max(rate >> PACING_SHIFT),
            SmallQueues::Linux3_14 => self
                .pacing_rate_3_14()
                .map_or(u64::MAX, |r| LIMIT_OUTPUT_BYTES_3_14.max(r >> PACING_SHIFT)),
        }
    }

    /// Linux 3.14's sk_pacing_rate (tcp_input.c tcp_update_pacing_rate, on every ACK, paced or
    /// not): 200 % of max(cwnd, packets out) x MSS / SRTT, in bytes per second; `None` before
    /// the first RTT sample (3.14 leaves the rate undivided then: no limit).
    pub(super) fn pacing_rate_3_14(&self) -> Option<u64> {
        let srtt = self.rtt.srtt()?.max(1);
        let window = self.st.cwnd.max(self.flight()) as u128;
        Some((2 * window * SEC as u128 / srtt as u128).min(u64::MAX as u128) as u64)
    }

    /// Whether the sender paces through its host's fq, stamping departure times.
    #[inline]
    pub(super) fn stamps(&self) -> bool {
        self.host.is_some_and(|h| h.edt)
    }

    /// TCP Small Queues before a new segment of a sender that does not stamp (Linux 3.14
    /// tcp_write_xmit, after the window tests): whether its host holds more of its bytes than
    /// the limit; if so it stops (TSQ_THROTTLED) until a packet leaves the host.
    #[inline]
    pub(super) fn small_queue_stops(&mut self) -> bool {
        match self.host {
            Some(h) if !h.edt => {
                // Only 3.14's rule counts a sender that does not stamp, and it reads neither
                // the burst nor the rate given.
                let limit = self.small_queue_limit(0, 0);
                let h = self.host.as_mut().expect("counted");
                h.throttled = h.bytes > limit;
                h.throttled
            }
            _ => false,
        }
    }

    /// A packet of `size` bytes left the host (Linux tcp_wfree); a sender TCP Small Queues
    /// stopped sends again (tcp_tsq_handler).
    pub(super) fn host_completion(&mut self, size: u32, now: Time, out: &mut Outbox) {
        let Some(h) = self.host.as_mut() else {
            return;
        };
        h.bytes -= size as u64;
        if h.throttled {
            h.throttled = false;
            self.send_loop(now, out);
        }
    }

    /// After a burst of `bytes` at `rate` bytes per second: the next one no sooner than this
    /// one's length later (and a segment held back waits until then). Linux's clock
    /// (tcp_update_skb_after_send) stands still until `unpaced_segs` data segments have gone,
    /// and with `pacing_credit` a burst that left late by some time shortens its own gap by
    /// that time, at most to half.
    pub(super) fn burst_sent(&mut self, now: Time, bytes: u64, rate: u64) {
        if bytes == 0 {
            return;
        }
        // __tcp_transmit_skb stamps every burst: tcp_wstamp_ns = max(tcp_wstamp_ns, now).
        let departed = self.pace_next.max(now);
        let data_segs = self.n.packets_sent - self.syn_sent as u64;
        let gap = if data_segs < self.cfg.unpaced_segs as u64 {
            0
        } else {
            let len_ns = (bytes as u128 * SEC as u128).div_ceil(rate as u128) as Time;
            let credit = if self.cfg.pacing_credit {
                (departed - self.pace_next).min(len_ns / 2)
            } else {
                0
            };
            len_ns - credit
        };
        self.pace_next = departed + gap;
        if self.timers.armed(Timer::Pace) {
            self.timers.arm(Timer::Pace, self.pace_next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::transport::tcp::config::{SmallQueues, TsoSegs};
    use crate::transport::wire::Pacing;

    /// A paced NewReno sender's configuration (MSS 1448), with Linux 6.x's TCP Small Queues.
    fn paced_config(iw: u32, tso_segs: Option<u32>) -> TcpConfig {
        TcpConfig {
            mss: 1448,
            iw,
            cc: "newreno".into(),
            pacing: true,
            tso_segs: TsoSegs(tso_segs),
            small_queues: SmallQueues::Linux,
            ..crate::transport::tcp::profiles::rfc()
        }
    }

    /// A paced sender after a handshake whose SYN-ACK came back at 100 ms (SRTT 100 ms).
    fn paced(iw: u32, tso_segs: Option<u32>) -> (TcpSender, Vec<Packet>) {
        established_at(paced_config(iw, tso_segs), 100 * MS)
    }

    #[test]
    fn the_autosize_adds_64_kb_shifted_by_the_min_rtt_in_linux_5_19() {
        // tcp_tso_autosize (5.19 on): bytes = pacing rate >> 10, plus gso_max_size (65536) >>
        // (min RTT in us >> tcp_tso_rtt_log) while that shift is under 32, in segments, at
        // least tcp_min_tso_segs (2). The rate in slow start is 2 x 14480 B / 0.1 s = 289600
        // B/s: 282 bytes. Min RTT 1 ms: 1000 >> 9 = 1, + 32768 B = 33050 B, 22 segments; 2 ms:
        // shift 3, + 8192 B, 5; 3 ms: shift 5, + 2048 B = 2330 B, 1, so 2; 100 ms: shift 195,
        // nothing; `tso_rtt_log` 0 (before 5.19): nothing.
        for (rtt_log, min_rtt_us, segs) in [
            (9, 1_000, 22),
            (9, 2_000, 5),
            (9, 3_000, 2),
            (9, 100_000, 2),
            (0, 1_000, 2),
        ] {
            let cfg = TcpConfig {
                tso_rtt_log: rtt_log,
                ..paced_config(10, None)
            };
            let (mut s, _) = established_at(cfg, 100 * MS);
            s.min_rtt = Some(min_rtt_us * 1_000);
            assert_eq!(
                s.autosize_segs(),
                segs,
                "tso_rtt_log {rtt_log}, min RTT {min_rtt_us} us"
            );
        }
    }

    #[test]
    fn pacing_spreads_the_initial_window_at_twice_cwnd_per_srtt() {
        // Linux tcp_update_pacing_rate: in slow start (cwnd < ssthresh / 2) the rate is 200% of
        // cwnd / SRTT = 2 * 14480 B / 0.1 s = 289600 B/s; tcp_tso_autosize: 289600 >> 10 = 282
        // bytes, under one MSS, so the minimum of 2 segments per burst. Each burst then holds
        // the next back by its payload (tcp_update_skb_after_send: the skb's data length),
        // 2 x 1448 B / 289600 B/s = 10 ms exactly.
        let (mut s, out) = paced(10, None);
        assert_eq!(out.len(), 2, "one burst of tcp_min_tso_segs");
        let gap = 10 * MS;
        let mut t = 100 * MS;
        let mut bursts = vec![out.len()];
        while bursts.iter().sum::<usize>() < 10 {
            let due = s.next_timer().expect("a pacing wake-up");
            assert_eq!(due, t + gap, "next burst one gap later");
            t = due;
            let mut out = vec![];
            s.on_timer(t, &mut out);
            bursts.push(out.len());
        }
        assert_eq!(bursts, vec![2; 5], "the initial window in five bursts");
        // The window is used up: the wake-up after the last burst sends nothing, and then only
        // the retransmission timer is left.
        let mut out = vec![];
        s.on_timer(t + gap, &mut out);
        assert!(out.is_empty());
        assert_eq!(
            s.next_timer(),
            Some(100 * MS + s.rto()),
            "RTO armed by the first burst"
        );
    }

    /// A paced sender of `paced_config` on Linux's departure clock (tcp_update_skb_after_send):
    /// unpaced for its first `unpaced` data segments, with or without the lateness credit.
    fn linux_clock(unpaced: u32, credit: bool) -> (TcpSender, Vec<Packet>) {
        established_at(
            TcpConfig {
                unpaced_segs: unpaced,
                pacing_credit: credit,
                ..paced_config(10, None)
            },
            100 * MS,
        )
    }

    /// Fires every wake-up due at `t`, collecting what the sender sends then.
    fn fire_at(s: &mut TcpSender, t: Time, out: &mut Vec<Packet>) {
        while s.next_timer() == Some(t) {
            s.on_timer(t, out);
        }
    }

    #[test]
    fn linux_leaves_the_first_ten_data_segments_unpaced() {
        // tcp_update_skb_after_send moves tcp_wstamp_ns only once data_segs_out >= 10: the
        // initial window's bursts of 2 (tcp_min_tso_segs) at data_segs_out 2, 4, 6 and 8 leave
        // the clock at 100 ms, so tcp_pacing_check lets each next one go at once; the fifth
        // (data_segs_out 10) moves it by its length at 289600 B/s (200% x 10 x 1448 B / 100 ms):
        // 2896 B / 289600 B/s = 10 ms. Unpaced from the first, the same window took 40 ms more
        // (pacing_spreads_the_initial_window_at_twice_cwnd_per_srtt).
        let (mut s, mut out) = linux_clock(10, false);
        fire_at(&mut s, 100 * MS, &mut out);
        assert_eq!(out.len(), 10, "the whole initial window at 100 ms");
        assert_eq!(
            s.next_timer(),
            Some(110 * MS),
            "the clock started by the fifth burst"
        );
        // With 11 unpaced segments even the fifth burst leaves the clock alone.
        let (mut s, mut out) = linux_clock(11, false);
        fire_at(&mut s, 100 * MS, &mut out);
        assert_eq!(out.len(), 10);
        assert_eq!(s.next_timer(), Some(100 * MS + s.rto()), "only the RTO is left");
    }

    #[test]
    fn a_late_burst_shortens_its_gap_by_its_lateness_at_most_by_half() {
        // The initial window leaves at 100 ms and its fifth burst sets the clock to 110 ms (the
        // test above). The ACK of 2 segments at 200 ms (an RTT sample of 100 ms: SRTT stays)
        // grows cwnd to 12 in slow start and frees 4 segments; pacing rate 200% x 12 x 1448 B /
        // 100 ms = 347520 B/s, bursts of 2 (347520 >> 10 = 339 B is under one MSS). The first
        // burst leaves at 200 ms, 90 ms after the clock's 110 ms: tcp_update_skb_after_send's
        // len_ns = 2896 B / 347520 B/s = 8333334 ns (rounded up), less min(len_ns / 2, credit
        // 90 ms) = 4166667 ns, so the second burst leaves at 204.166667 ms. The next gap, after
        // a burst the timer released on time, is whole again.
        let len = 8_333_334;
        for (credit, gap) in [(true, len - len / 2), (false, len)] {
            let (mut s, mut out) = linux_clock(10, credit);
            fire_at(&mut s, 100 * MS, &mut out);
            let acked = Packet {
                kind: Kind::Tcp,
                tcp_flags: flags::ACK,
                ack: 1 + 2 * 1448,
                ts_ecr: 100 * MS,
                ..Default::default()
            };
            let mut out = vec![];
            s.on_packet(&acked, 200 * MS, &mut out);
            assert_eq!(out.len(), 2, "one burst at the ACK");
            assert_eq!(s.next_timer(), Some(200 * MS + gap), "credit {credit}");
            let mut out = vec![];
            s.on_timer(200 * MS + gap, &mut out);
            assert_eq!(out.len(), 2, "the window's other two segments");
            assert_eq!(
                s.next_timer(),
                Some(200 * MS + gap + len),
                "a whole gap after an on-time burst"
            );
        }
    }

    #[test]
    fn a_rate_based_controller_paces_at_its_own_rate_over_the_payload() {
        // BBR without the `pacing` key (Linux always paces it): bbr_init_pacing_rate_from_rtt,
        // 2.885 x IW 10 / SRTT 100 ms: bw = 10 x 2^24 / 100000 us = 1677, x 1448 B x 739/256
        // x 0.99 >> 24 = 413638 B/s; bursts of 2 segments (403 B per 2^-10 s); each burst holds
        // the next back by its payload, 2 x 1448 B (tcp_update_skb_after_send paces skb->len
        // without headers): 7001291 ns, where the 3000 bytes on the wire would take 7.25 ms.
        let (mut s, out) = established_at(
            TcpConfig {
                mss: 1448,
                iw: 10,
                cc: "bbr".into(),
                ..crate::transport::tcp::profiles::rfc()
            },
            100 * MS,
        );
        assert_eq!(out.len(), 2);
        assert_eq!(s.next_timer(), Some(100 * MS + 7_001_291));
        let mut out = vec![];
        s.on_timer(100 * MS + 7_001_291, &mut out);
        assert_eq!(out.len(), 2);
    }

    /// A paced sender (MSS 1448, SRTT 100 ms) whose host's qdisc is fq: it stamps its packets.
    /// The SYN has left the host when the SYN-ACK comes.
    fn stamping(iw: u32, tso_segs: Option<u32>) -> (TcpSender, Vec<Packet>) {
        established_at_host(&paced_config(iw, tso_segs), true)
    }

    /// A sender of `cfg` whose first hop is its host's qdisc (`edt`: an fq that paces by
    /// departure time): its SYN leaves the host at 50 ms, the SYN-ACK comes at 100 ms. The
    /// packets it sends then.
    fn established_at_host(cfg: &TcpConfig, edt: bool) -> (TcpSender, Vec<Packet>) {
        let mut s = TcpSender::new(cfg, 0, Dir::Up).unwrap();
        assert!(s.at_host(edt), "counts what it has in its host");
        let mut out = vec![];
        s.start(0, &mut out);
        s.left_host(out[0].size, 50 * MS, &mut out);
        out.clear();
        s.on_packet(&synack(), 100 * MS, &mut out);
        (s, out)
    }

    fn stamps(out: &[Packet]) -> Vec<Time> {
        out.iter().map(|p| p.tstamp).collect()
    }

    #[test]
    fn through_the_hosts_fq_bursts_carry_the_times_the_pacing_timer_would_release_them() {
        // The rate of pacing_spreads_the_initial_window_at_twice_cwnd_per_srtt: bursts of 2
        // segments 10 ms apart. With SK_PACING_FQ tcp_pacing_check never holds a burst back:
        // each leaves at once stamped with tcp_wstamp_ns (100, 110, 120 ms), until TCP Small
        // Queues stop the sender: limit max(2 x truesize, rate >> 10) = max(2 x 3000 B,
        // 289600 >> 10 = 282 B) = 6000 B, and the host holds 9000 B > 6000 B after three
        // bursts. No pacing timer is armed: only the retransmission timer.
        let (mut s, out) = stamping(10, None);
        assert_eq!(out.len(), 6);
        assert_eq!(stamps(&out), [100, 100, 110, 110, 120, 120].map(|t| t * MS));
        assert_eq!(s.next_timer(), Some(100 * MS + s.rto()));
        // TX completions (tcp_wfree): one packet leaves at 100.12 ms, 7500 B stay, still over
        // the limit; at the second 6000 B are left, not over it: the next burst goes, stamped
        // where the timer would have sent it.
        let mut out = vec![];
        s.left_host(1500, 100 * MS + 120_000, &mut out);
        assert!(out.is_empty());
        s.left_host(1500, 100 * MS + 240_000, &mut out);
        assert_eq!(stamps(&out), vec![130 * MS; 2]);
    }

    #[test]
    fn tcp_small_queues_hold_about_a_millisecond_of_the_pacing_rate_in_the_host() {
        // IW 2000 of 1448 B in slow start: 200 % x 2896000 B / 0.1 s = 57920000 B/s, whose
        // 2^-10 s (sk_pacing_shift 10) is 56562 B, over two 2-segment bursts (6000 B): a burst
        // goes while the host holds at most 56562 B, 19 bursts (57000 B after them). A burst of
        // 2896 B of payload lasts 50 us at that rate: the stamps step by 50 us.
        let (s, out) = stamping(2000, Some(2));
        assert_eq!(out.len(), 38);
        let want: Vec<Time> = (0..38).map(|k| 100 * MS + (k / 2) * 50_000).collect();
        assert_eq!(stamps(&out), want);
        assert_eq!(s.host.map(|h| h.bytes), Some(57_000));
    }

    #[test]
    fn a_wire_rate_counts_the_window_in_mtu_sized_packets() {
        // tcp_prague.c prague_update_pacing_rate: rate = MTU x window / SRTT, x 2 while cwnd <
        // ssthresh / 2; MTU = tcp_mss_to_mtu = 1448 + 32 (TCP with timestamps) + 20 (IP) = 1500.
        // IW 10, SRTT 100 ms, slow start: 2 x 10 x 1500 B / 0.1 s = 300000 B/s, where the
        // payload form gives 2 x 10 x 1448 B / 0.1 s = 289600 B/s.
        let prague = Pacing {
            ss_ratio: 200,
            ca_ratio: 100,
            tso_segs: None,
            burst_shift: 12,
            min_burst: 1,
            wire_rate: true,
            rtt_log: 0,
        };
        let payload = Pacing {
            wire_rate: false,
            ..prague
        };
        let (mut s, _) = paced(10, None);
        assert_eq!(s.pacing_burst(&prague), Some((1, 300_000)));
        assert_eq!(s.pacing_burst(&payload), Some((1, 289_600)));
        // Congestion avoidance, 2000 segments: 2000 x 1500 B / 0.1 s = 30 MB/s; the burst is
        // the rate in packets, 20000 per second, >> 12 = 4 (prague_update_pacing_rate's
        // max_tso_burst), where 30000000 >> 12 = 7324 bytes would hold 5 segments of 1448 B.
        let (mut s, _) = paced(2000, None);
        s.st.ssthresh = 1000 * 1448;
        assert_eq!(s.pacing_burst(&prague), Some((4, 30_000_000)));
        assert_eq!(s.pacing_burst(&payload), Some((4, 28_960_000)));
    }

    #[test]
    fn pacing_bursts_autosize_to_a_millisecond_capped_at_64_kb() {
        // Congestion avoidance (ssthresh below cwnd): 120% of 2000 x 1448 B / 0.1 s = 34.75 MB/s;
        // 2^-10 s of it is 33935 B = 23 segments of 1448 B (tcp_tso_autosize).
        let (mut s, _) = paced(2000, None);
        s.st.ssthresh = 1000 * 1448;
        let p = s.pacing.unwrap();
        assert_eq!(s.pacing_burst(&p).map(|b| b.0), Some(23));
        // At ten times the window the burst stops at gso_max_size: 65535 / 1448 = 45 segments.
        s.st.cwnd *= 10;
        assert_eq!(s.pacing_burst(&p).map(|b| b.0), Some(45));
        // A fixed burst size overrides the autosizing.
        let (mut s, out) = paced(10, Some(4));
        assert_eq!(out.len(), 4);
        let p = s.pacing.unwrap();
        assert_eq!(s.pacing_burst(&p).map(|b| b.0), Some(4));
    }

    /// A NewReno sender (MSS 1448) under Linux 3.14's TCP Small Queues, not paced, whose first
    /// hop is its host's qdisc; SRTT 100 ms (the SYN-ACK at 100 ms, the SYN left the host at
    /// 50 ms).
    fn small_queues_3_14(iw: u32) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            mss: 1448,
            iw,
            cc: "newreno".into(),
            small_queues: SmallQueues::Linux3_14,
            ..crate::transport::tcp::profiles::rfc()
        };
        established_at_host(&cfg, false)
    }

    #[test]
    fn linux_3_14s_limit_is_128_kib_or_2_to_the_minus_10_s_at_its_pacing_rate() {
        // v3.14 tcp_update_pacing_rate: 200 % x max(cwnd, packets out) x MSS / SRTT; with IW 10
        // that is 2 x 14480 B / 0.1 s = 289600 B/s, whose >> 10 (282 B) is below
        // sysctl_tcp_limit_output_bytes: tcp_write_xmit's limit is 131072 B.
        let (mut s, out) = small_queues_3_14(10);
        assert_eq!(out.len(), 10);
        assert_eq!(s.pacing_rate_3_14(), Some(289_600));
        assert_eq!(s.small_queue_limit(0, 0), 131_072);
        // A window of 10000 segments (14480000 B): 289600000 B/s, >> 10 = 282812 B (the
        // remainder of 289600000 / 1024 = 282812.5 dropped), above 128 KiB.
        s.st.cwnd = 10_000 * 1448;
        assert_eq!(s.pacing_rate_3_14(), Some(289_600_000));
        assert_eq!(s.small_queue_limit(0, 0), 282_812);
        // Before an RTT sample the rate is not divided by SRTT (3.14 tests srtt > 8 + 2): no
        // limit.
        let mut fresh = TcpSender::new(&s.cfg, 0, Dir::Up).unwrap();
        fresh.at_host(false);
        assert_eq!(fresh.pacing_rate_3_14(), None);
        assert_eq!(fresh.small_queue_limit(0, 0), u64::MAX);
    }

    #[test]
    fn a_linux_3_14_sender_stops_above_the_limit_and_a_completion_restarts_it() {
        // IW 200 (289600 B): the rate 2 x 289600 B / 0.1 s = 5792000 B/s, >> 10 = 5656 B, so the
        // limit is 131072 B. tcp_write_xmit tests sk_wmem_alloc > limit before each segment:
        // after 87 packets of 1500 B the host holds 130500 B, not over it, so the 88th goes;
        // with 132000 B the sender stops (TSQ_THROTTLED) with 112 segments of window left.
        let (mut s, out) = small_queues_3_14(200);
        assert_eq!(out.len(), 88);
        assert!(out.iter().all(|p| p.size == 1500));
        assert_eq!(s.host.map(|h| (h.bytes, h.throttled)), Some((132_000, true)));
        // A TX completion (tcp_wfree, then tcp_tsq_handler's tcp_write_xmit): 130500 B are
        // left, so one more segment goes, and the host holds 132000 B again.
        let mut out = vec![];
        s.left_host(1500, 101 * MS, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seq, 1 + 88 * 1448, "the next new segment");
        assert_eq!(s.host.map(|h| (h.bytes, h.throttled)), Some((132_000, true)));
        // Off, the same sender sends its whole initial window at once.
        let cfg = TcpConfig {
            small_queues: SmallQueues::Off,
            ..(*s.cfg).clone()
        };
        let (_, out) = established_at(cfg, 100 * MS);
        assert_eq!(out.len(), 200);
    }
}
