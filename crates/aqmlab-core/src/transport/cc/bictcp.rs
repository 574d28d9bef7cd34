//! Linux's CUBIC window arithmetic (net/ipv4/tcp_cubic.c: `struct bictcp`, `bictcp_update`,
//! `bictcp_recalc_ssthresh`, `cubic_root`, the delayed-ACK ratio of `bictcp_acked`, and
//! tcp_cong.c `tcp_cong_avoid_ai`), in whole packets and jiffies (`tcp_jiffies32`, at the
//! kernel's CONFIG_HZ: [`Bictcp::hz`], 1000 unless set), at three kernel versions ([`Kernel`]).
//! One implementation serves three controllers: `cubic` with
//! `law = "linux"` (Linux 3.14) or `law = "linux_4"` (4.x onwards, cubic.rs) and `cubic_2_6_22`
//! (2.6.22.6 as ns-2 runs it).
//!
//! Per ACK in congestion avoidance, [`Bictcp::update`] computes `cnt`, the number of ACKs
//! (packets from 4.x) after which cwnd grows by one packet, and [`Bictcp::cong_avoid_ai`] counts
//! against it:
//! * At most once per cwnd value and HZ/32 jiffies (31 ms at HZ 1000, 28 at 250) the count is
//!   recomputed; the first
//!   update after a loss opens an epoch: K = cbrt(cube_factor x (W_max - cwnd)) in 2^-10 s,
//!   cube_factor = 2^40 / (bic_scale x 10), bic_scale = 41 (C = 0.4 per a fixed 100 ms RTT);
//!   the origin is W_max (or cwnd with K = 0 when cwnd >= W_max).
//! * The target is the cubic curve one minimum RTT ahead: t = now - epoch + delay_min,
//!   target = origin -+ (410 x |t - K|^3) >> 40; cnt = cwnd / (target - cwnd), or 100 cwnd at
//!   or above the target.
//! * Before any loss the count is bounded: 2.6.22 sets it to 50 while loss_cwnd = 0; 3.14 and
//!   later cap it at 20 (5% per RTT) while W_max = 0. 2.6.22 also bounds the growth to
//!   max_increment = 16 packets per delay_min once past K (cnt >= cwnd x HZ x 8 / (10 x 16 x
//!   delay_min)).
//! * TCP friendliness: `tcp_cwnd`, a Reno window synchronised with cwnd at the epoch start,
//!   gains one packet per (cwnd x beta_scale) >> 3 ACKs (packets from 4.x), beta_scale =
//!   8 (1024 + beta) / 3 / (1024 - beta) in integers (23 for beta 819, 15 for 717: 1 packet per
//!   1.875 cwnd, the Reno-friendly rate 3 (1 - beta) / (1 + beta) of RFC 9438 per RTT when every
//!   packet is counted); while it is ahead of cwnd, cnt <= cwnd / (tcp_cwnd - cwnd).
//! * 2.6.22 and 3.14 divide cnt by the delayed-ACK ratio (packets per ACK x 16, an EWMA with
//!   gain 1/16 kept by `bictcp_acked`; 3.14 caps it at 32 packets per ACK), at least 1.
//! * Loss: the epoch ends; W_max = cwnd (1024 + beta) / 2048 when cwnd is below the previous
//!   W_max (fast convergence), else cwnd; ssthresh = max(cwnd x beta / 1024, 2); beta = 819
//!   (2.6.22, CUBIC v2.1) or 717 (3.14 on, CUBIC v2.3).
//!
//! From 4.x ([`Kernel::V4`]: the form of the 6.x tcp_cubic.c and tcp_cong.c read for this; the
//! packet counting and cnt >= 2 date from the 2015 stretch-ACK fixes): `bictcp_update` and `tcp_cong_avoid_ai` take the
//! number of packets an ACK acknowledges, `acked`. ack_cnt (the Reno estimate's count) grows by
//! `acked` and restarts at `acked` with an epoch; the delayed-ACK ratio is gone and cnt is
//! floored at 2 (cwnd grows at most 1.5x per RTT); within the 31 ms window a new cwnd recomputes
//! cnt at most once per jiffy (in the same jiffy only the friendliness cap is re-applied);
//! delay_min is kept in microseconds and rounded up to whole jiffies for the target;
//! tcp_cong_avoid_ai first spends a credit left from a larger cnt (snd_cwnd_cnt >= cnt: +1 and
//! the count restarts), then adds `acked` and grows cwnd by snd_cwnd_cnt / cnt, keeping the
//! remainder. Under delayed ACKs (2 packets each) the 3.14 estimate, counting ACKs, grows at half
//! the Reno-friendly rate; from 4.x it grows at the full rate, as ns-3.44's TcpCubic (which counts
//! acknowledged segments, `m_ackCnt`) does.

use crate::record::rows::CcReport;
use crate::units::{MS, US};

/// The kernel version whose arithmetic runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// Linux 2.6.22.6 (tcp_cubic.c v2.1, inside ns-2.35's TCP/Linux agent).
    #[default]
    V2_6_22,
    /// Linux 3.14 (tcp_cubic.c v2.3).
    V3_14,
    /// Linux 4.x onwards (tcp_cubic.c v2.3 after the 2015 stretch-ACK fixes; read from a 6.x
    /// tree): packets rather than ACKs counted, no delayed-ACK ratio, cnt >= 2.
    V4,
}

impl Kernel {
    /// beta in 1/1024.
    pub fn beta(self) -> u32 {
        match self {
            Kernel::V2_6_22 => 819,
            Kernel::V3_14 | Kernel::V4 => 717,
        }
    }

    /// `beta_scale` of cubictcp_register: 8 (1024 + beta) / 3 / (1024 - beta), integer division.
    pub fn friendly_scale(self) -> u32 {
        8 * (BETA_SCALE + self.beta()) / 3 / (BETA_SCALE - self.beta())
    }
}

const BETA_SCALE: u32 = 1024;
const BIC_SCALE: u32 = 41;
const MAX_INCREMENT: u32 = 16;
const BICTCP_HZ: u32 = 10;
/// Jiffies per second unless set (one jiffy = 1 ms): ns-2's ns-linux-c.h, and the
/// `linux_3_14` profile's kernel.
pub const HZ: u32 = 1000;
const ACK_RATIO_SHIFT: u32 = 4;
const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;
const CUBE_RTT_SCALE: u64 = (BIC_SCALE * 10) as u64;
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;

/// The module's per-connection state (struct bictcp) plus the socket's `snd_cwnd_cnt`.
#[derive(Clone, Debug, Default)]
pub struct Bictcp {
    pub kernel: Kernel,
    /// The kernel's CONFIG_HZ: jiffies per second of the clock `update` is given.
    pub hz: u32,
    /// ACKs (packets from 4.x) counted towards the next +1 (tcp_sock snd_cwnd_cnt).
    pub snd_cwnd_cnt: u32,
    /// ACKs (packets from 4.x) per +1 packet, from the last update.
    pub cnt: u32,
    /// W_max (packets; 0 before any loss).
    pub last_max_cwnd: u32,
    /// cwnd at the last loss.
    pub loss_cwnd: u32,
    pub last_cwnd: u32,
    pub last_time: u32,
    pub origin: u32,
    /// K in 2^-10 s.
    pub k: u32,
    /// Minimum delay (0 = none yet): ms x 8 before 4.x, microseconds from 4.x.
    pub delay_min: u32,
    /// Jiffies at the epoch start (0 = no epoch).
    pub epoch_start: u32,
    /// ACKs (packets from 4.x) towards the Reno estimate's next packet.
    pub ack_cnt: u32,
    /// The Reno-friendly window estimate (packets).
    pub tcp_cwnd: u32,
    /// Packets per ACK x 16.
    pub delayed_ack: u32,
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

impl Bictcp {
    pub fn new(kernel: Kernel) -> Bictcp {
        Bictcp::with_hz(kernel, HZ)
    }

    /// On a kernel of `hz` jiffies a second.
    pub fn with_hz(kernel: Kernel, hz: u32) -> Bictcp {
        Bictcp {
            kernel,
            hz,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            ..Bictcp::default()
        }
    }

    /// bictcp_reset (the Loss state): everything but the socket's snd_cwnd_cnt.
    pub fn reset(&mut self) {
        *self = Bictcp {
            snd_cwnd_cnt: self.snd_cwnd_cnt,
            ..Bictcp::with_hz(self.kernel, self.hz)
        };
    }

    /// The delayed-ACK ratio of bictcp_acked: ratio += packets - ratio/16 (Open state only;
    /// 4.x has no ratio).
    pub fn acked(&mut self, packets: u32) {
        if self.kernel == Kernel::V4 {
            return;
        }
        let ratio = self
            .delayed_ack
            .wrapping_add(packets.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT));
        self.delayed_ack = match self.kernel {
            Kernel::V2_6_22 => ratio,
            Kernel::V3_14 | Kernel::V4 => ratio.min(ACK_RATIO_LIMIT),
        };
    }

    /// A delay sample (at least 1) in delay_min's unit (ms x 8, or us from 4.x) lowers delay_min.
    pub fn sample_delay(&mut self, delay: u32) {
        let delay = delay.max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
    }

    /// W_max (last_max_cwnd) in bytes of `mss`, and delay_min, each once it exists.
    pub fn report(&self, mss: u64, r: &mut CcReport) {
        r.w_max = (self.last_max_cwnd > 0).then(|| self.last_max_cwnd as u64 * mss);
        r.min_rtt = (self.delay_min > 0).then(|| match self.kernel {
            Kernel::V2_6_22 | Kernel::V3_14 => self.delay_min as u64 * MS / 8,
            Kernel::V4 => self.delay_min as u64 * US,
        });
    }

    /// delay_min in whole jiffies, rounded up: msecs_to_jiffies of ms x 8 shifted down, or
    /// (4.x) usecs_to_jiffies of microseconds.
    fn delay_min_jiffies(&self) -> u32 {
        let (value, per_sec) = match self.kernel {
            Kernel::V2_6_22 | Kernel::V3_14 => (self.delay_min >> 3, 1_000),
            Kernel::V4 => (self.delay_min, 1_000_000),
        };
        (value as u64 * self.hz as u64).div_ceil(per_sec) as u32
    }

    /// `tcp_jiffies32` at simulated time `now` (ns): whole ticks of 1/hz s since the start.
    pub fn jiffies(&self, now: u64) -> u32 {
        crate::units::ticks(now, self.hz) as u32
    }

    /// bictcp_update: the count `cnt` for a window of `cwnd` packets at jiffies `now`, on an ACK
    /// for `acked` packets (counted as one ACK before 4.x).
    pub fn update(&mut self, cwnd: u32, now: u32, acked: u32) {
        let counted = match self.kernel {
            Kernel::V2_6_22 | Kernel::V3_14 => 1,
            Kernel::V4 => acked,
        };
        self.ack_cnt += counted;
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (self.hz / 32) as i32 {
            return;
        }
        if self.kernel == Kernel::V4 && self.epoch_start != 0 && now == self.last_time {
            // At most one cubic computation per jiffy; the friendliness cap still applies.
            self.friendliness(cwnd);
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = now;
        if self.epoch_start == 0 {
            self.epoch_start = now;
            self.ack_cnt = counted;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                self.k = 0;
                self.origin = cwnd;
            } else {
                self.k = cubic_root(CUBE_FACTOR * (self.last_max_cwnd - cwnd) as u64);
                self.origin = self.last_max_cwnd;
            }
        }
        // Time since the epoch plus delay_min, in 2^-10 s.
        let elapsed = now
            .wrapping_add(self.delay_min_jiffies())
            .wrapping_sub(self.epoch_start);
        let t = (((elapsed as u64) << BICTCP_HZ) / self.hz as u64) as u32;
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
        match self.kernel {
            Kernel::V2_6_22 => {
                if self.delay_min > 0 {
                    let min_cnt = (cwnd * self.hz * 8) / (10 * MAX_INCREMENT * self.delay_min);
                    if self.cnt < min_cnt && t >= self.k {
                        self.cnt = min_cnt;
                    }
                }
                if self.loss_cwnd == 0 {
                    self.cnt = 50;
                }
            }
            Kernel::V3_14 | Kernel::V4 => {
                if self.last_max_cwnd == 0 {
                    self.cnt = self.cnt.min(20);
                }
            }
        }
        self.friendliness(cwnd);
    }

    /// The end of bictcp_update: the Reno estimate advances by whole packets and caps cnt, then
    /// the delayed-ACK ratio divides it (at least 1) or, from 4.x, cnt >= 2.
    fn friendliness(&mut self, cwnd: u32) {
        let d = (cwnd * self.kernel.friendly_scale()) >> 3;
        while self.ack_cnt > d {
            self.ack_cnt -= d;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = match self.kernel {
            Kernel::V2_6_22 | Kernel::V3_14 => ((self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack).max(1),
            Kernel::V4 => self.cnt.max(2),
        };
    }

    /// tcp_cong_avoid_ai with w = cnt: the window after one more ACK, for `acked` packets.
    /// Before 4.x one ACK counts once whatever it covers; from 4.x a credit left from a larger
    /// cnt is spent first, then the packets are added and every whole cnt grows cwnd by one.
    pub fn cong_avoid_ai(&mut self, cwnd: u32, acked: u32) -> u32 {
        match self.kernel {
            Kernel::V2_6_22 | Kernel::V3_14 => {
                if self.snd_cwnd_cnt >= self.cnt {
                    self.snd_cwnd_cnt = 0;
                    cwnd + 1
                } else {
                    self.snd_cwnd_cnt += 1;
                    cwnd
                }
            }
            Kernel::V4 => {
                let w = self.cnt.max(1);
                let mut cwnd = cwnd;
                if self.snd_cwnd_cnt >= w {
                    self.snd_cwnd_cnt = 0;
                    cwnd += 1;
                }
                self.snd_cwnd_cnt += acked;
                let whole = self.snd_cwnd_cnt / w;
                self.snd_cwnd_cnt -= whole * w;
                cwnd + whole
            }
        }
    }

    /// bictcp_recalc_ssthresh for a window of `cwnd` packets: ends the epoch, sets W_max and
    /// returns ssthresh in packets.
    pub fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        let beta = self.kernel.beta();
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd {
            (cwnd * (BETA_SCALE + beta)) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        self.loss_cwnd = cwnd;
        ((cwnd * beta) / BETA_SCALE).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubic_root_matches_the_real_root() {
        for a in [1u64, 8, 27, 63, 64, 1000, 1 << 20, 123_456_789, 1 << 40] {
            let want = (a as f64).cbrt();
            let got = cubic_root(a) as f64;
            assert!((got - want).abs() <= 1.0 + want * 0.005, "{a}: {got} vs {want}");
        }
    }

    #[test]
    fn friendly_scale_gives_the_reno_friendly_rate() {
        // RFC 9438 4.3 / the CUBIC paper: a Reno-friendly flow with multiplicative decrease beta
        // grows by alpha = 3 (1 - beta) / (1 + beta) segments per RTT. The kernel counts one
        // packet per (cwnd x scale) >> 3 ACKs, i.e. 8 / scale packets per window of ACKs.
        for (kernel, scale) in [(Kernel::V2_6_22, 23), (Kernel::V3_14, 15)] {
            assert_eq!(kernel.friendly_scale(), scale);
            let beta = kernel.beta() as f64 / 1024.0;
            let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
            let per_rtt = 8.0 / scale as f64;
            // Integer division loses at most one unit of the scale.
            assert!((per_rtt - alpha).abs() / alpha < 1.0 / scale as f64, "{kernel:?}");
        }
        // 3.14: beta 717/1024 = 0.700, alpha = 0.529 segment per RTT; the kernel's 8/15 = 0.533.
        assert!((8.0 / 15.0 - 3.0 * (1.0 - 0.7002) / 1.7002f64).abs() < 0.005);
    }

    #[test]
    fn v4_counts_packets_with_a_floor_of_two() {
        // Hand-derived from the 6.x bictcp_update / tcp_cong_avoid_ai: W_max = 4 = cwnd, so the
        // epoch has K = 0 and origin 4; delay_min 10.5 ms rounds up to 11 jiffies; the target
        // origin + (410 t^3 >> 40) stays 4 while t < 1390 (2^-10 s: 410 x 1390^3 is the first
        // cube past 2^40), so cnt = 100 x 4 = 400; the Reno
        // estimate gains a packet each time ack_cnt passes (4 x 15) >> 3 = 7.
        let mut b = Bictcp::new(Kernel::V4);
        b.last_max_cwnd = 4;
        b.delay_min = 10_500;
        assert_eq!(b.delay_min_jiffies(), 11);
        // ACKs of 2 packets 40 jiffies apart (each past the 31-jiffy hold): ack_cnt 2, 4, 6.
        let mut cwnd = 4;
        for (i, now) in [1000, 1040, 1080].into_iter().enumerate() {
            b.update(cwnd, now, 2);
            assert_eq!((b.ack_cnt, b.tcp_cwnd, b.cnt), (2 * (i as u32 + 1), 4, 400));
            cwnd = b.cong_avoid_ai(cwnd, 2);
            assert_eq!((cwnd, b.snd_cwnd_cnt), (4, 2 * (i as u32 + 1)));
        }
        assert_eq!((b.epoch_start, b.k, b.origin), (1000, 0, 4));
        // ACK 4: ack_cnt 8 > 7, tcp_cwnd 5 with 1 left; cnt = min(400, 4 / (5 - 4)) = 4. The
        // credit of 6 >= 4 is spent first (+1, count 0), then 2 more packets: 2 / 4 = 0.
        b.update(cwnd, 1120, 2);
        assert_eq!((b.ack_cnt, b.tcp_cwnd, b.cnt), (1, 5, 4));
        cwnd = b.cong_avoid_ai(cwnd, 2);
        assert_eq!((cwnd, b.snd_cwnd_cnt), (5, 2));
        // ACK 5 in the same jiffy with the new cwnd: no cubic recomputation (last_cwnd stays 4),
        // only the friendliness step: ack_cnt 3 <= (5 x 15) >> 3 = 9, tcp_cwnd 5 is not ahead,
        // cnt stays 4; count 2 + 2 = 4 gives one packet.
        b.update(cwnd, 1120, 2);
        assert_eq!((b.ack_cnt, b.last_cwnd, b.cnt), (3, 4, 4));
        assert_eq!(b.cong_avoid_ai(cwnd, 2), 6);
        assert_eq!(b.snd_cwnd_cnt, 0);

        // A 23-packet stretch ACK opening an epoch at cwnd 4 (W_max 4): ack_cnt 23 -> 16, 9, 2
        // with tcp_cwnd 5, 6, 7; cnt = min(400, 4 / 3) = 1, floored at 2; cwnd grows by
        // 23 / 2 = 11 with 1 packet of credit left.
        let mut b = Bictcp::new(Kernel::V4);
        b.last_max_cwnd = 4;
        b.update(4, 1000, 23);
        assert_eq!((b.ack_cnt, b.tcp_cwnd, b.cnt), (2, 7, 2));
        assert_eq!(b.cong_avoid_ai(4, 23), 15);
        assert_eq!(b.snd_cwnd_cnt, 1);
        // 3.14 on the same ACK counts it once: ack_cnt 1, no Reno step, cnt 400 (no cap of 20:
        // W_max is not 0) divided by the initial ratio 2 x 16: (400 << 4) / 32 = 200; the ACK
        // adds 1 to the count.
        let mut b = Bictcp::new(Kernel::V3_14);
        b.last_max_cwnd = 4;
        b.update(4, 1000, 23);
        assert_eq!((b.ack_cnt, b.tcp_cwnd, b.cnt), (1, 4, 200));
        assert_eq!(b.cong_avoid_ai(4, 23), 4);
        assert_eq!(b.snd_cwnd_cnt, 1);
        // delay_min before 4.x: ms x 8, shifted down (84 = 10.5 ms -> 10 jiffies).
        b.delay_min = 84;
        assert_eq!(b.delay_min_jiffies(), 10);
    }

    #[test]
    fn the_clock_ticks_at_the_kernels_config_hz() {
        // tcp_jiffies32 at CONFIG_HZ 250 counts 4 ms ticks: 3.999 ms is tick 0, 4 ms tick 1.
        let b = Bictcp::with_hz(Kernel::V4, 250);
        assert_eq!(
            (
                b.jiffies(3_999_999),
                b.jiffies(4_000_000),
                b.jiffies(1_000_000_000)
            ),
            (0, 1, 250)
        );
        // usecs_to_jiffies rounds up: 50 ms is 12.5 ticks of 4 ms -> 13 (52 ms); 50 at HZ 1000;
        // at HZ 300, 50 ms x 300 = 15 ticks exactly.
        for (hz, ticks) in [(250, 13), (1000, 50), (300, 15)] {
            let mut b = Bictcp::with_hz(Kernel::V4, hz);
            b.delay_min = 50_000;
            assert_eq!(b.delay_min_jiffies(), ticks, "HZ {hz}");
        }
        // msecs_to_jiffies of 3.14's ms x 8: 10 ms -> 2.5 ticks -> 3.
        let mut b = Bictcp::with_hz(Kernel::V3_14, 250);
        b.delay_min = 80;
        assert_eq!(b.delay_min_jiffies(), 3);
        // The hold between recomputations of cnt for one cwnd: HZ / 32 = 7 ticks (28 ms) at 250,
        // 31 at 1000. An epoch opened at tick 100 is recomputed (last_time moves) only past it.
        for (hz, hold) in [(250, 7), (1000, 31)] {
            let mut b = Bictcp::with_hz(Kernel::V4, hz);
            b.last_max_cwnd = 20;
            b.update(10, 100, 1);
            b.update(10, 100 + hold, 1);
            assert_eq!(b.last_time, 100, "HZ {hz}: held");
            b.update(10, 101 + hold, 1);
            assert_eq!(b.last_time, 101 + hold, "HZ {hz}: recomputed");
        }
    }
}
