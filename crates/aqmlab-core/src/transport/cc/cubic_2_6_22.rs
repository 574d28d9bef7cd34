//! CUBIC v2.1 as ns-2.35's TCP/Linux agent runs it: the Linux 2.6.22.6 module
//! tcp/linux/src/tcp_cubic.c inside ns-2 (tcp/tcp-linux.cc LinuxTcpAgent, ns-linux-c.h,
//! tcp/linux/src/tcp_cong.c). Everything is in whole packets and jiffies, as there:
//!
//! * Clock: `tcp_time_stamp` = trunc(now x 1000) jiffies (ns-linux-c.h HZ 1000,
//!   LinuxTcpAgent::recv); the echoed timestamp is rounded to jiffies (time_processing).
//! * Per ACK that acknowledges new data and outside recovery (LinuxTcpAgent::recv,
//!   tcp_cong_avoid and tcp_may_raise_cwnd): `bictcp_acked` updates the delayed-ACK ratio
//!   (15/16 old + the packets this ACK covers, scaled by 16); `bictcp_cong_avoid` then takes the
//!   minimum delay from the timestamp (skipped within 1 s of an epoch start), does nothing
//!   unless the window was full before the ACK (ns-linux-c.h tcp_is_cwnd_limited: packets in
//!   flight >= snd_cwnd), and grows the window: while snd_cwnd <= ssthresh by one packet per ACK
//!   whatever it covers (tcp_cong.c tcp_slow_start with sysctl_tcp_abc 1: cnt = snd_cwnd added
//!   to snd_cwnd_cnt), else by one packet once snd_cwnd_cnt reaches the CUBIC count `cnt`.
//! * `bictcp_update`: at most once per cwnd value and HZ/32 jiffies; K = cbrt(cube_factor x
//!   (W_max - cwnd)) in 2^-10 s, cube_factor = 2^40 / (bic_scale x 10), bic_scale 41 (C = 0.4
//!   against a fixed 100 ms RTT); target = origin +- (410 x |t - K|^3) >> 40 with t counted
//!   from the epoch start plus delay_min; cnt = cwnd / (target - cwnd) (100 cwnd at or above
//!   the target), at least the max_increment 16 bound once delay_min is known, 50 before any
//!   loss; TCP friendliness with beta_scale 23; divided by the delayed-ACK ratio.
//! * Loss (`bictcp_recalc_ssthresh`): epoch ends; W_max = cwnd (1 + beta)/2 below the previous
//!   W_max (fast convergence), else cwnd; ssthresh = max(cwnd x 819/1024, 2). Fast recovery sets
//!   snd_cwnd = ssthresh at once (tcp_fastretrans_alert); ns-2 spreads the reduction over the
//!   next ACKs by its rate halving, the sender's `rate_halving` option.
//! * Timeout (LinuxTcpAgent::enter_loss): ssthresh recomputed on every timeout, cwnd = 1 and
//!   the Loss state resets all CUBIC state (`bictcp_state`).
//! * The cubic root is the module's table lookup plus one Newton-Raphson step (`cubic_root`).

use super::{AckSample, CcState, CongestionControl, CongestionKind};
use crate::units::{Time, MS};

const BETA: u32 = 819;
const BETA_SCALE: u32 = 1024;
const BIC_SCALE: u32 = 41;
const MAX_INCREMENT: u32 = 16;
const BICTCP_HZ: u32 = 10;
const HZ: u32 = 1000;
const ACK_RATIO_SHIFT: u32 = 4;
/// 8 (1024 + 819) / 3 / (1024 - 819), in integers as cubictcp_register computes it.
const TCP_FRIENDLY_SCALE: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
const CUBE_RTT_SCALE: u64 = (BIC_SCALE * 10) as u64;
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;

/// The module's state (struct bictcp) plus the sock fields it works on, in packets.
#[derive(Clone, Debug, Default)]
pub struct Cubic2622 {
    mss: u64,
    snd_cwnd_cnt: u32,
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    origin: u32,
    /// K in 2^-10 s.
    k: u32,
    /// Minimum delay in jiffies x 8 (0 = none yet).
    delay_min: u32,
    /// Jiffies at the epoch start (0 = no epoch).
    epoch_start: u32,
    ack_cnt: u32,
    tcp_cwnd: u32,
    /// Packets per ACK x 16.
    delayed_ack: u32,
}

/// Jiffies at `t` (trunc, as tcp_time_stamp).
fn jiffies(t: Time) -> u32 {
    (t / MS) as u32
}

/// The module's cubic root: table lookup then one Newton-Raphson step.
pub fn cubic_root(a: u64) -> u32 {
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164, 168, 170,
        173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209, 211, 213, 215, 217,
        219, 221, 222, 224, 225, 227, 229, 231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250,
        251, 252, 254,
    ];
    let b = 64 - a.leading_zeros();
    if b < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    let b = ((b * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as usize;
    let x = ((V[shift] as u32 + 10) << b) >> 6;
    let x = 2 * x as u64 + a / (x as u64 * (x as u64 - 1));
    ((x * 341) >> 10) as u32
}

impl Cubic2622 {
    pub fn new(mss: u64) -> Cubic2622 {
        Cubic2622 {
            mss,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            ..Cubic2622::default()
        }
    }

    /// bictcp_reset (snd_cwnd_cnt is the socket's, not the module's).
    fn reset(&mut self) {
        *self = Cubic2622 {
            snd_cwnd_cnt: self.snd_cwnd_cnt,
            ..Cubic2622::new(self.mss)
        };
    }

    /// K (2^-10 s) of the current epoch.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The per-ACK count of the last update (cwnd grows by one after `cnt` ACKs).
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// bictcp_update.
    fn update(&mut self, cwnd: u32, now: u32) {
        self.ack_cnt += 1;
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (HZ / 32) as i32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = 1;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k = 0;
                self.origin = cwnd;
            } else {
                self.k = cubic_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                self.origin = self.last_max_cwnd;
            }
        }
        let t = ((now
            .wrapping_add(self.delay_min >> 3)
            .wrapping_sub(self.epoch_start) as u64)
            << BICTCP_HZ)
            / HZ as u64;
        let t = t as u32;
        let offs = t.abs_diff(self.k) as u64;
        let delta = ((CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ)) as u32;
        let target = if t < self.k {
            self.origin.wrapping_sub(delta)
        } else {
            self.origin.wrapping_add(delta)
        };
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100 * cwnd
        };
        if self.delay_min > 0 {
            let min_cnt = (cwnd * HZ * 8) / (10 * MAX_INCREMENT * self.delay_min);
            if self.cnt < min_cnt && t >= self.k {
                self.cnt = min_cnt;
            }
        }
        if self.loss_cwnd == 0 {
            self.cnt = 50;
        }
        let d = (cwnd * TCP_FRIENDLY_SCALE) >> 3;
        while self.ack_cnt > d {
            self.ack_cnt -= d;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1);
    }

    /// bictcp_recalc_ssthresh, in packets.
    fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            (cwnd * (BETA_SCALE + BETA)) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        ((cwnd * BETA) / BETA_SCALE).max(2)
    }

    fn packets(&self, bytes: u64) -> u32 {
        (bytes / self.mss).min(u32::MAX as u64) as u32
    }
}

impl CongestionControl for Cubic2622 {
    fn name(&self) -> &'static str {
        "cubic_2_6_22"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if st.in_recovery || ack.acked_bytes == 0 {
            return;
        }
        let acked = ack.acked_bytes.div_ceil(self.mss) as u32;
        // bictcp_acked (Open state).
        self.delayed_ack = self
            .delayed_ack
            .wrapping_add(acked.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT));
        let now = jiffies(ack.now);
        // measure_delay: tcp_time_stamp - rcv_tsecr, the echo rounded to jiffies.
        if let Some(rtt) = ack.rtt {
            let tsecr = ((ack.now - rtt + MS / 2) / MS) as u32;
            if tsecr != 0 && now.wrapping_sub(self.epoch_start) as i32 >= HZ as i32 {
                let delay = (now.wrapping_sub(tsecr) << 3).max(1);
                if self.delay_min == 0 || self.delay_min > delay {
                    self.delay_min = delay;
                }
            }
        }
        let mut cwnd = self.packets(st.cwnd);
        let in_flight_before = (st.bytes_in_flight + ack.acked_bytes).div_ceil(self.mss);
        if in_flight_before < cwnd as u64 {
            return;
        }
        if cwnd <= self.packets(st.ssthresh) {
            // tcp_slow_start: snd_cwnd_cnt += snd_cwnd, then whole windows become packets.
            self.snd_cwnd_cnt += cwnd;
            while self.snd_cwnd_cnt >= cwnd {
                self.snd_cwnd_cnt -= cwnd;
                cwnd += 1;
            }
        } else {
            self.update(cwnd, now);
            if self.snd_cwnd_cnt >= self.cnt {
                cwnd += 1;
                self.snd_cwnd_cnt = 0;
            } else {
                self.snd_cwnd_cnt += 1;
            }
        }
        st.cwnd = cwnd as u64 * self.mss;
    }

    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        let ssthresh = self.recalc_ssthresh(self.packets(st.cwnd).max(1));
        self.snd_cwnd_cnt = 0;
        st.ssthresh = ssthresh as u64 * self.mss;
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Time, _first: bool, st: &mut CcState) {
        let ssthresh = self.recalc_ssthresh(self.packets(st.cwnd).max(1));
        st.ssthresh = ssthresh as u64 * self.mss;
        self.snd_cwnd_cnt = 0;
        self.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::test_state;
    use crate::units::SEC;

    const MSS: u64 = 1000;

    /// An ACK at `now` covering `packets` with an RTT sample `rtt`, the window full before it.
    fn ack(c: &mut Cubic2622, st: &mut CcState, now: Time, packets: u64, rtt: Time) {
        st.bytes_in_flight = st.cwnd.saturating_sub(packets * MSS);
        let a = AckSample {
            now,
            acked_bytes: packets * MSS,
            rtt: Some(rtt),
            ..AckSample::default()
        };
        c.on_ack(&a, st);
    }

    #[test]
    fn slow_start_adds_one_packet_per_ack_whatever_it_covers() {
        // tcp_cong.c tcp_slow_start with sysctl_tcp_abc 1: an ACK for one or for two packets
        // adds one packet; ACKs for every packet double a window per RTT, ACKs for every other
        // packet multiply it by 1.5.
        for (per_ack, want) in [(1, 20), (2, 15)] {
            let mut c = Cubic2622::new(MSS);
            let mut st = test_state(10 * MSS, u64::MAX / 2, 10 * MSS);
            for i in 0..10 / per_ack {
                ack(&mut c, &mut st, SEC + i * MS, per_ack, 100 * MS);
            }
            assert_eq!(st.cwnd, want * MSS, "{per_ack} packets per ACK");
        }
    }

    #[test]
    fn no_growth_unless_the_window_was_full() {
        // ns-linux-c.h tcp_is_cwnd_limited: in_flight >= snd_cwnd.
        let mut c = Cubic2622::new(MSS);
        let mut st = test_state(10 * MSS, u64::MAX / 2, 5 * MSS);
        let a = AckSample {
            now: SEC,
            acked_bytes: MSS,
            ..AckSample::default()
        };
        c.on_ack(&a, &mut st);
        assert_eq!(st.cwnd, 10 * MSS);
    }

    #[test]
    fn loss_keeps_0_8_of_the_window_and_fast_convergence_lowers_w_max() {
        // beta 819/1024 ~ 0.8 (CUBIC v2.1); W_max = cwnd (1 + beta) / 2 below the last W_max.
        let mut c = Cubic2622::new(MSS);
        let mut st = test_state(100 * MSS, 50 * MSS, 100 * MSS);
        c.on_congestion_event(SEC, CongestionKind::Loss, &mut st);
        assert_eq!((st.ssthresh, st.cwnd), (79 * MSS, 79 * MSS));
        assert_eq!(c.last_max_cwnd, 100);
        st.cwnd = 90 * MSS;
        c.on_congestion_event(2 * SEC, CongestionKind::Loss, &mut st);
        assert_eq!(st.ssthresh, 71 * MSS);
        // 90 x 1843 / 2048 = 80.99, truncated.
        assert_eq!(c.last_max_cwnd, 80);
        // A timeout: cwnd 1 follows in the sender, ssthresh from beta, the CUBIC state reset.
        c.on_rto(3 * SEC, true, &mut st);
        assert_eq!(st.ssthresh, 56 * MSS);
        assert_eq!((c.last_max_cwnd, c.loss_cwnd, c.delayed_ack), (0, 0, 32));
    }

    #[test]
    fn k_is_the_cubic_root_of_the_window_drop_over_c() {
        // RFC 9438 / the CUBIC paper: K = cbrt((W_max - cwnd) / C), C = 0.4 (here 410/1024 per
        // 100 ms RTT); the module's K is in 2^-10 s.
        for (w_max, cwnd) in [(100u32, 79u32), (1000, 800), (40, 32)] {
            let mut c = Cubic2622::new(MSS);
            c.last_max_cwnd = w_max;
            c.loss_cwnd = w_max;
            c.update(cwnd, 5000);
            let want = ((w_max - cwnd) as f64 / 0.4).cbrt() * 1024.0;
            let err = (c.k() as f64 - want).abs() / want;
            assert!(
                err < 0.01,
                "W_max {w_max} cwnd {cwnd}: K {} want {want:.0}",
                c.k()
            );
        }
    }

    #[test]
    fn window_follows_the_cubic_curve_after_a_loss() {
        // An ACK per packet, a window of ACKs every RTT (100 ms), after a loss at 100 packets:
        // the window follows W(t) = C (t - K)^3 + W_max (CUBIC paper, RFC 9438), C = 0.4,
        // K = cbrt((100 - 79) / C) = 3.74 s: concave up to W_max, flat around K, convex after.
        let rtt = 100 * MS;
        let mut c = Cubic2622::new(MSS);
        let mut st = test_state(100 * MSS, 50 * MSS, 100 * MSS);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        let k = (21.0f64 / 0.4).cbrt();
        let mut now = 0;
        while now < 8 * SEC {
            now += rtt;
            let w = st.cwnd / MSS;
            for i in 0..w {
                ack(&mut c, &mut st, now + i * rtt / w / 10, 1, rtt);
            }
            let t = now as f64 / SEC as f64;
            let curve = 0.4 * (t - k).powi(3) + 100.0;
            let got = (st.cwnd / MSS) as f64;
            assert!(
                (got - curve).abs() <= 2.0 + 0.02 * curve,
                "t {t:.1} s: {got} vs {curve:.1}"
            );
        }
    }

    #[test]
    fn cubic_root_matches_the_real_root() {
        for a in [1u64, 8, 27, 63, 64, 1000, 1 << 20, 123_456_789, 1 << 40] {
            let want = (a as f64).cbrt();
            let got = cubic_root(a) as f64;
            assert!((got - want).abs() <= 1.0 + want * 0.005, "{a}: {got} vs {want}");
        }
    }
}
