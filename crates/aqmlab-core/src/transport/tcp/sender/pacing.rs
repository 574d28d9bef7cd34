//! Linux-style pacing ([`Pacing`]): the burst size and rate, and the hold on the next burst.

use super::super::Pacing;
use super::{TcpSender, Timer};
use crate::units::{Time, SEC};

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
        let segs = match p.tso_segs {
            Some(n) => n as u64,
            None => ((rate >> p.burst_shift).min(65_535) / self.mss).max(p.min_burst),
        };
        Some((segs, rate))
    }

    /// Linux tcp_update_pacing_rate: the ratio for slow start or avoidance x window / SRTT.
    fn window_rate(&self, p: &Pacing, srtt: Time) -> u64 {
        let ratio = if self.st.cwnd < self.st.ssthresh / 2 {
            p.ss_ratio
        } else {
            p.ca_ratio
        };
        let window = self.st.cwnd.max(self.flight());
        (window as u128 * ratio as u128 * SEC as u128 / (100 * srtt as u128)).max(1) as u64
    }

    /// Whether pacing holds the next segment back; arms the pacing wake-up if so.
    pub(super) fn paced_out(&mut self, now: Time) -> bool {
        if self.pacing.is_some() && now < self.pace_next {
            self.timers.arm(Timer::Pace, self.pace_next);
            return true;
        }
        false
    }

    /// After a burst of `bytes` at `rate` bytes per second: the next one no sooner than this
    /// one's length later (and a segment held back waits until then).
    pub(super) fn burst_sent(&mut self, now: Time, bytes: u64, rate: u64) {
        if bytes > 0 {
            let len_ns = (bytes as u128 * SEC as u128).div_ceil(rate as u128) as Time;
            self.pace_next = self.pace_next.max(now) + len_ns;
            if self.timers.armed(Timer::Pace) {
                self.timers.arm(Timer::Pace, self.pace_next);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::*;
    use crate::transport::tcp::TsoSegs;

    /// A paced sender after a handshake whose SYN-ACK came back at 100 ms (SRTT 100 ms).
    fn paced(iw: u32, tso_segs: Option<u32>) -> (TcpSender, Vec<Packet>) {
        after_handshake(TcpConfig {
            mss: 1448,
            iw,
            cc: "newreno".into(),
            pacing: true,
            tso_segs: TsoSegs(tso_segs),
            ..TcpConfig::default()
        })
    }

    fn after_handshake(cfg: TcpConfig) -> (TcpSender, Vec<Packet>) {
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK,
            ack: 1,
            ts_ecr: 0,
            ..Default::default()
        };
        out.clear();
        s.on_packet(&synack, 100 * MS, &mut out);
        (s, out)
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

    #[test]
    fn a_rate_based_controller_paces_at_its_own_rate_over_the_payload() {
        // BBR without the `pacing` key (Linux always paces it): bbr_init_pacing_rate_from_rtt,
        // 2.885 x IW 10 / SRTT 100 ms: bw = 10 x 2^24 / 100000 us = 1677, x 1448 B x 739/256
        // x 0.99 >> 24 = 413638 B/s; bursts of 2 segments (403 B per 2^-10 s); each burst holds
        // the next back by its payload, 2 x 1448 B (tcp_update_skb_after_send paces skb->len
        // without headers): 7001291 ns, where the 3000 bytes on the wire would take 7.25 ms.
        let (mut s, out) = after_handshake(TcpConfig {
            mss: 1448,
            iw: 10,
            cc: "bbr".into(),
            ..TcpConfig::default()
        });
        assert_eq!(out.len(), 2);
        assert_eq!(s.next_timer(), Some(100 * MS + 7_001_291));
        let mut out = vec![];
        s.on_timer(100 * MS + 7_001_291, &mut out);
        assert_eq!(out.len(), 2);
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
}
