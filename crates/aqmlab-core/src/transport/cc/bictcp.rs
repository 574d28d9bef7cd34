//! Linux's CUBIC window arithmetic (net/ipv4/tcp_cubic.c: `struct bictcp`, `bictcp_update`,
//! `bictcp_recalc_ssthresh`, `cubic_root`, the delayed-ACK ratio of `bictcp_acked`, and
//! tcp_cong.c `tcp_cong_avoid_ai`), in whole packets and jiffies at HZ 1000, at two kernel
//! versions ([`Kernel`]). One implementation serves two controllers: `cubic` with
//! `law = "linux"` (Linux 3.14, cubic.rs) and `cubic_2_6_22` (2.6.22.6 as ns-2 runs it).
//!
//! Per ACK in congestion avoidance, [`Bictcp::update`] computes `cnt`, the number of ACKs after
//! which cwnd grows by one packet, and [`Bictcp::cong_avoid_ai`] counts ACKs against it:
//! * At most once per cwnd value and HZ/32 jiffies (31 ms) the count is recomputed; the first
//!   update after a loss opens an epoch: K = cbrt(cube_factor x (W_max - cwnd)) in 2^-10 s,
//!   cube_factor = 2^40 / (bic_scale x 10), bic_scale = 41 (C = 0.4 per a fixed 100 ms RTT);
//!   the origin is W_max (or cwnd with K = 0 when cwnd >= W_max).
//! * The target is the cubic curve one minimum RTT ahead: t = now - epoch + delay_min,
//!   target = origin -+ (410 x |t - K|^3) >> 40; cnt = cwnd / (target - cwnd), or 100 cwnd at
//!   or above the target.
//! * Before any loss the count is bounded: 2.6.22 sets it to 50 while loss_cwnd = 0; 3.14 caps
//!   it at 20 (5% per RTT) while W_max = 0. 2.6.22 also bounds the growth to max_increment = 16
//!   packets per delay_min once past K (cnt >= cwnd x HZ x 8 / (10 x 16 x delay_min)).
//! * TCP friendliness: `tcp_cwnd`, a Reno window synchronised with cwnd at the epoch start,
//!   gains one packet per (cwnd x beta_scale) >> 3 ACKs, beta_scale = 8 (1024 + beta) / 3 /
//!   (1024 - beta) in integers (23 for beta 819, 15 for 717: 1 packet per 1.875 cwnd ACKs, the
//!   Reno-friendly rate 3 (1 - beta) / (1 + beta) of RFC 9438 per RTT); while it is ahead of cwnd,
//!   cnt <= cwnd / (tcp_cwnd - cwnd).
//! * cnt is divided by the delayed-ACK ratio (packets per ACK x 16, an EWMA with gain 1/16 kept
//!   by `bictcp_acked`; 3.14 caps it at 32 packets per ACK), at least 1.
//! * Loss: the epoch ends; W_max = cwnd (1024 + beta) / 2048 when cwnd is below the previous
//!   W_max (fast convergence), else cwnd; ssthresh = max(cwnd x beta / 1024, 2); beta = 819
//!   (2.6.22, CUBIC v2.1) or 717 (3.14, CUBIC v2.3).
//!
//! Current kernels (since 4.1-4.2) differ: ack_cnt and snd_cwnd_cnt count acknowledged packets
//! rather than ACKs (stretch-ACK fixes), the delayed-ACK ratio is gone, cnt >= 2 (cwnd grows at
//! most 1.5x per RTT), delay_min is in microseconds and the count is recomputed at most once per
//! jiffy; ns-3.44's TcpCubic counts acknowledged segments too (its `m_ackCnt`) and has no
//! delayed-ACK ratio. That form is not modelled here.

/// The kernel version whose arithmetic runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kernel {
    /// Linux 2.6.22.6 (tcp_cubic.c v2.1, inside ns-2.35's TCP/Linux agent).
    #[default]
    V2_6_22,
    /// Linux 3.14 (tcp_cubic.c v2.3).
    V3_14,
}

impl Kernel {
    /// beta in 1/1024.
    pub fn beta(self) -> u32 {
        match self {
            Kernel::V2_6_22 => 819,
            Kernel::V3_14 => 717,
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
/// Jiffies per second (one jiffy = 1 ms).
pub const HZ: u32 = 1000;
const ACK_RATIO_SHIFT: u32 = 4;
const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;
const CUBE_RTT_SCALE: u64 = (BIC_SCALE * 10) as u64;
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;

/// The module's per-connection state (struct bictcp) plus the socket's `snd_cwnd_cnt`.
#[derive(Clone, Debug, Default)]
pub struct Bictcp {
    pub kernel: Kernel,
    /// ACKs counted towards the next +1 (tcp_sock snd_cwnd_cnt).
    pub snd_cwnd_cnt: u32,
    /// ACKs per +1 packet, from the last update.
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
    /// Minimum delay in ms x 8 (0 = none yet).
    pub delay_min: u32,
    /// Jiffies at the epoch start (0 = no epoch).
    pub epoch_start: u32,
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
        Bictcp {
            kernel,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
            ..Bictcp::default()
        }
    }

    /// bictcp_reset (the Loss state): everything but the socket's snd_cwnd_cnt.
    pub fn reset(&mut self) {
        *self = Bictcp {
            snd_cwnd_cnt: self.snd_cwnd_cnt,
            ..Bictcp::new(self.kernel)
        };
    }

    /// The delayed-ACK ratio of bictcp_acked: ratio += packets - ratio/16 (Open state only).
    pub fn acked(&mut self, packets: u32) {
        let ratio = self
            .delayed_ack
            .wrapping_add(packets.wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT));
        self.delayed_ack = match self.kernel {
            Kernel::V2_6_22 => ratio,
            Kernel::V3_14 => ratio.min(ACK_RATIO_LIMIT),
        };
    }

    /// A delay sample in ms x 8 (at least 1) lowers delay_min.
    pub fn sample_delay(&mut self, delay: u32) {
        let delay = delay.max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
    }

    /// bictcp_update: the ACK count `cnt` for a window of `cwnd` packets at jiffies `now`.
    pub fn update(&mut self, cwnd: u32, now: u32) {
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
        // Time since the epoch plus delay_min, in 2^-10 s.
        let elapsed = now
            .wrapping_add(self.delay_min >> 3)
            .wrapping_sub(self.epoch_start);
        let t = (((elapsed as u64) << BICTCP_HZ) / HZ as u64) as u32;
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
                    let min_cnt = (cwnd * HZ * 8) / (10 * MAX_INCREMENT * self.delay_min);
                    if self.cnt < min_cnt && t >= self.k {
                        self.cnt = min_cnt;
                    }
                }
                if self.loss_cwnd == 0 {
                    self.cnt = 50;
                }
            }
            Kernel::V3_14 => {
                if self.last_max_cwnd == 0 {
                    self.cnt = self.cnt.min(20);
                }
            }
        }
        let d = (cwnd * self.kernel.friendly_scale()) >> 3;
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

    /// tcp_cong_avoid_ai with w = cnt: the window after one more ACK.
    pub fn cong_avoid_ai(&mut self, cwnd: u32) -> u32 {
        if self.snd_cwnd_cnt >= self.cnt {
            self.snd_cwnd_cnt = 0;
            cwnd + 1
        } else {
            self.snd_cwnd_cnt += 1;
            cwnd
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
}
