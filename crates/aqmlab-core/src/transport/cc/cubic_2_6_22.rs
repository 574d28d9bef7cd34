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
//!
//! The window arithmetic (`bictcp_update`, `bictcp_recalc_ssthresh`, `tcp_cong_avoid_ai`, the
//! delayed-ACK ratio) is `bictcp.rs` at [`Kernel::V2_6_22`], shared with `cubic`'s
//! `law = "linux"` (3.14); this file holds what ns-2's agent adds around it.

use super::bictcp::{Bictcp, Kernel, HZ};
use super::{without_params, AckSample, CcInfo, CcState, CongestionControl, CongestionKind, NoParams};
use crate::params::Group;
use crate::record::rows::CcReport;
use crate::units::{Time, MS};

/// The module's state ([`Bictcp`] at [`Kernel::V2_6_22`]) and the packet size.
#[derive(Clone, Debug)]
pub struct Cubic2622 {
    mss: u64,
    b: Bictcp,
}

/// Jiffies at `t` (trunc, as tcp_time_stamp).
fn jiffies(t: Time) -> u32 {
    (t / MS) as u32
}

impl Cubic2622 {
    pub fn new(mss: u64) -> Cubic2622 {
        Cubic2622 {
            mss,
            b: Bictcp::new(Kernel::V2_6_22),
        }
    }

    /// K (2^-10 s) of the current epoch.
    pub fn k(&self) -> u32 {
        self.b.k
    }

    /// The per-ACK count of the last update (cwnd grows by one after `cnt` ACKs).
    pub fn cnt(&self) -> u32 {
        self.b.cnt
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
        self.b.acked(acked);
        let now = jiffies(ack.now);
        // measure_delay: tcp_time_stamp - rcv_tsecr, the echo rounded to jiffies.
        if let Some(rtt) = ack.rtt {
            let tsecr = ((ack.now - rtt + MS / 2) / MS) as u32;
            if tsecr != 0 && now.wrapping_sub(self.b.epoch_start) as i32 >= HZ as i32 {
                self.b.sample_delay(now.wrapping_sub(tsecr) << 3);
            }
        }
        let mut cwnd = self.packets(st.cwnd);
        let in_flight_before = (st.bytes_in_flight + ack.acked_bytes).div_ceil(self.mss);
        if in_flight_before < cwnd as u64 {
            return;
        }
        if cwnd <= self.packets(st.ssthresh) {
            // tcp_slow_start: snd_cwnd_cnt += snd_cwnd, then whole windows become packets.
            self.b.snd_cwnd_cnt += cwnd;
            while self.b.snd_cwnd_cnt >= cwnd {
                self.b.snd_cwnd_cnt -= cwnd;
                cwnd += 1;
            }
        } else {
            self.b.update(cwnd, now, 1);
            cwnd = self.b.cong_avoid_ai(cwnd, 1);
        }
        st.cwnd = cwnd as u64 * self.mss;
    }

    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        let ssthresh = self.b.recalc_ssthresh(self.packets(st.cwnd).max(1));
        self.b.snd_cwnd_cnt = 0;
        st.ssthresh = ssthresh as u64 * self.mss;
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Time, _first: bool, st: &mut CcState) {
        let ssthresh = self.b.recalc_ssthresh(self.packets(st.cwnd).max(1));
        st.ssthresh = ssthresh as u64 * self.mss;
        self.b.snd_cwnd_cnt = 0;
        self.b.reset();
    }

    fn report(&self, r: &mut CcReport) {
        self.b.report(self.mss, r);
    }
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "cubic_2_6_22",
    summary: "CUBIC v2.1 as ns-2.35's TCP/Linux agent runs the Linux 2.6.22 module, in packets and jiffies",
    reference: "ns-2.35 tcp/linux/src/tcp_cubic.c, tcp/tcp-linux.cc",
    params: &[Group::of::<NoParams>()],
    needs_accecn: false,
    build: |p, ctx| without_params(p, Box::new(Cubic2622::new(ctx.mss))),
}];

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
        assert_eq!(c.b.last_max_cwnd, 100);
        st.cwnd = 90 * MSS;
        c.on_congestion_event(2 * SEC, CongestionKind::Loss, &mut st);
        assert_eq!(st.ssthresh, 71 * MSS);
        // 90 x 1843 / 2048 = 80.99, truncated.
        assert_eq!(c.b.last_max_cwnd, 80);
        // A timeout: cwnd 1 follows in the sender, ssthresh from beta, the CUBIC state reset.
        c.on_rto(3 * SEC, true, &mut st);
        assert_eq!(st.ssthresh, 56 * MSS);
        assert_eq!((c.b.last_max_cwnd, c.b.loss_cwnd, c.b.delayed_ack), (0, 0, 32));
    }

    #[test]
    fn k_is_the_cubic_root_of_the_window_drop_over_c() {
        // RFC 9438 / the CUBIC paper: K = cbrt((W_max - cwnd) / C), C = 0.4 (here 410/1024 per
        // 100 ms RTT); the module's K is in 2^-10 s.
        for (w_max, cwnd) in [(100u32, 79u32), (1000, 800), (40, 32)] {
            let mut c = Cubic2622::new(MSS);
            c.b.last_max_cwnd = w_max;
            c.b.loss_cwnd = w_max;
            c.b.update(cwnd, 5000, 1);
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
}
