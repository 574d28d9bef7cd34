//! CUBIC (RFC 9438, or Linux 3.14's or 4.x's window law) with Linux-style HyStart (tcp_cubic.c v2.3
//! behaviour, docs/transports.md 3.2).
//!
//! Variant choices:
//! * Window law of RFC 9438: K = cbrt((W_max - cwnd_epoch)/C), C = 0.4, beta = 0.7, fast
//!   convergence on (W_max = cwnd*(1+beta)/2 when cwnd < previous W_max).
//! * Target = W_cubic(t + RTT) with RTT = the sender's smoothed RTT (RFC 9438; Linux uses the
//!   minimum RTT), clamped to [cwnd, 1.5*cwnd]; per ACK cwnd += (target - cwnd)/cwnd per
//!   acknowledged segment.
//! * Reno-friendly region per RFC 9438 section 4.3: W_est starts at cwnd_epoch and grows by
//!   alpha*segments_acked/cwnd, alpha = 3(1-beta)/(1+beta) until W_est reaches the
//!   pre-reduction window (cwnd_prior), then 1. While W_cubic(t) < W_est, cwnd = max(cwnd, W_est)
//!   (never decreasing cwnd on an ACK).
//! * Reduction uses cwnd (Linux) rather than FlightSize: ssthresh = max(beta*cwnd, 2*SMSS).
//! * RTO: ssthresh from beta, then the whole CUBIC state (W_max, epoch, HyStart) is reset, as
//!   Linux does on entering the Loss state.
//! * Slow start: shared RFC 5681/3465 slow start (L = 2*SMSS).
//! * HyStart (Linux): active in slow start when cwnd >= 16 segments; ACK train (ACKs <= 2 ms
//!   apart for longer than delay_min/2 since the round started) or delay increase (minimum of
//!   the first 8 RTT samples of a round > delay_min + clamp(delay_min/8, 4 ms, 16 ms)) ends slow
//!   start with ssthresh = cwnd. RTT samples within 1 s of an epoch start are ignored (Linux).
//!   Alternatively HyStart++ (RFC 9406, `hystart_pp.rs`) runs the initial slow start.
//!
//! * Window law (`cc_params.law`): "rfc9438" (the default, the bullets above) or "linux", Linux
//!   3.14's tcp_cubic.c in whole packets and jiffies (HZ 1000), as ns-3's TcpCubic and the
//!   kernels of the 2014-2015 studies run CUBIC; the arithmetic is `bictcp.rs` (shared with
//!   `cubic_2_6_22`), read from v3.14 net/ipv4/tcp_cubic.c and tcp_cong.c:
//!   - `bictcp_update`: the target is the cubic curve one minimum RTT ahead (delay_min from
//!     `bictcp_acked`'s samples in whole ms, skipped for 1 s after an epoch start), recomputed
//!     at most once per cwnd value and 31 ms; growth is one packet after
//!     `cnt` = cwnd / (target - cwnd) ACKs (100 cwnd at or above the target, at most 20 before
//!     the first loss), counted by `tcp_cong_avoid_ai` per ACK whatever it covers; cnt is divided by the
//!     delayed-ACK ratio estimate (packets per ACK, an EWMA with gain 1/16, capped at 32).
//!   - TCP friendliness: a Reno window `tcp_cwnd`, set to cwnd at the epoch start, gains one
//!     packet per (cwnd x 15) >> 3 ACKs (8/15 = 0.53 packet per RTT, RFC 9438's
//!     3 (1 - beta)/(1 + beta) for beta 0.7, but with no switch to 1 past the old W_max); while
//!     it is ahead, cnt <= cwnd / (tcp_cwnd - cwnd). cwnd never jumps to the estimate.
//!   - Loss (`bictcp_recalc_ssthresh`): ssthresh = max(cwnd x 717 / 1024, 2) packets, W_max =
//!     cwnd or, below the previous W_max, cwnd x 1741 / 2048; snd_cwnd_cnt cleared. A timeout
//!     also clears delay_min and W_max (`bictcp_state`, the Loss state); HyStart's minimum is
//!     the same field, cleared with it under `hystart_min_rtt = "cleared"` (the Linux profiles').
//!   - An ACK that runs slow start does no congestion avoidance (bictcp_cong_avoid's if/else);
//!     slow start itself, HyStart and its delay_min (ns, from every sample) are the shared ones.
//! * `law = "linux_4"`: the same with the arithmetic of Linux 4.x onwards (read from a 6.x
//!   net/ipv4/tcp_cubic.c and tcp_cong.c; `Kernel::V4` in `bictcp.rs`), the form ns-3.44's
//!   TcpCubic follows: `bictcp_update` and `tcp_cong_avoid_ai` count the packets an ACK
//!   acknowledges (so the Reno estimate gains 8/15 packet per RTT under delayed ACKs too, where
//!   3.14's ACK count gives half that), no delayed-ACK ratio, cnt >= 2, at most one cubic
//!   computation per jiffy, delay_min from the samples in microseconds (rounded up to jiffies
//!   for the target); slow start hands the packets it leaves over to congestion avoidance on the
//!   same ACK (`cubictcp_cong_avoid`: `acked = tcp_slow_start(tp, acked)`). Loss and timeout are
//!   as in 3.14.
//!
//! Windows are tracked in bytes in [`CcState`]; the RFC 9438 law is evaluated in segments (f64),
//! and the fractional growth is carried between ACKs so nothing is lost to rounding.

use super::bictcp::{Bictcp, Kernel};
use super::hystart_pp::HystartPp;
use super::{
    read_params, slow_start, AckSample, CcBuild, CcContext, CcInfo, CcState, CongestionControl,
    CongestionKind, Hystart,
};
use crate::params::{Group, Params};
use crate::record::rows::CcReport;
use crate::units::{Time, MS, SEC, US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// C in segments/s^3.
pub const C: f64 = 0.4;
pub const BETA: f64 = 0.7;
const HYSTART_LOW_WINDOW: u64 = 16;
const HYSTART_ACK_DELTA: Time = 2 * MS;
const HYSTART_MIN_SAMPLES: u32 = 8;
/// The largest ACK-train cushion (tcp_cubic.c `hystart_ack_delay`: USEC_PER_MSEC).
const HYSTART_ACK_DELAY_MAX: Time = MS;
/// The GSO size `hystart_ack_delay` scales by (sk_gso_max_size: a TUN, veth or NIC device's
/// gso_max_size, GSO_LEGACY_MAX_SIZE = 65536 bytes unless BIG TCP raises it).
const GSO_MAX_SIZE: u64 = 65_536;

/// The congestion-avoidance window law (the `law` parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Law {
    /// RFC 9438 in segments (f64): target from SRTT, growth (target - cwnd)/cwnd per
    /// acknowledged segment, W_est per section 4.3.
    #[default]
    Rfc9438,
    /// Linux 3.14's tcp_cubic.c: target from delay_min, an ACK count `cnt` per +1 packet, the
    /// Reno estimate `tcp_cwnd` capping it, the delayed-ACK ratio, beta 717/1024 (`bictcp.rs`).
    Linux,
    /// Linux 4.x onwards: as `Linux`, counting acknowledged packets rather than ACKs, with no
    /// delayed-ACK ratio and cnt >= 2 (`bictcp.rs`, `Kernel::V4`).
    #[serde(rename = "linux_4")]
    Linux4,
}

impl Law {
    /// The kernel arithmetic a Linux law runs (None for RFC 9438).
    fn kernel(self) -> Option<Kernel> {
        match self {
            Law::Rfc9438 => None,
            Law::Linux => Some(Kernel::V3_14),
            Law::Linux4 => Some(Kernel::V4),
        }
    }
}

/// When HyStart's round (its ACK train's and delay samples' clock) starts over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HystartRound {
    /// On the ACK that reaches the end of the data sent when the last round began (the
    /// sender's round, `AckSample::round_start`): the previous flight's last ACK.
    #[default]
    Reached,
    /// On the first ACK past it, as tcp_cubic.c's hystart_update does (`after(snd_una,
    /// end_seq)`, then bictcp_hystart_reset with end_seq = snd_nxt; 3.14 in bictcp_cong_avoid
    /// alike): the new flight's first ACK, so its ACK train is timed from there.
    Passed,
}

/// Which of a round's RTT samples HyStart's delay test takes the minimum of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HystartRtt {
    /// The round's first 8 samples (HYSTART_MIN_SAMPLES), compared from the 9th on: the
    /// 2.6.29-5.7 tcp_cubic.c `hystart_update` (3.14's among them).
    #[default]
    First,
    /// Every sample of the round so far, compared from the 9th on: tcp_cubic.c
    /// `hystart_update` since "tcp_cubic: fix spurious HYSTART_DELAY exit upon drop in min
    /// RTT" (5.8), as 6.x runs it; a later sample below the first 8 lowers the round's minimum.
    Round,
}

/// What a timeout does to the minimum RTT HyStart's delay test measures from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HystartMinRtt {
    /// The minimum of every sample stays (RFC 9406 and 9438 say nothing of a timeout).
    #[default]
    Kept,
    /// Cleared with the law's: tcp_cubic.c keeps one `delay_min` for both, and `bictcp_reset`
    /// (run by the module's `state` hook on entering Loss) clears it, so the next slow start
    /// measures from the samples after the timeout (the Linux profiles').
    Cleared,
}

/// Which ACKs HyStart reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HystartAcks {
    /// Every ACK of new data outside recovery while in slow start, its round kept on each at
    /// any window; its tests from a window of 16 segments.
    #[default]
    NewData,
    /// tcp_cubic.c as 6.14 on runs it (25c1a9ca53db, "tcp_cubic: fix incorrect HyStart round
    /// start detection"): `cubictcp_acked`, the pkts_acked hook, calls `hystart_update` on
    /// every ACK that carries an RTT sample (a SACK-only one or one in recovery as well; none
    /// in the second after an epoch start) while HyStart has not ended slow start and cwnd <
    /// ssthresh; the round restarts there (`after(snd_una, end_seq)`) at any window, the two
    /// tests run from cwnd >= hystart_low_window (16).
    Sampled,
}

/// CUBIC's parameters (the flow's `cc_params` table), every default written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// Congestion-avoidance law and loss response: "rfc9438" (default), "linux" (3.14) or
    /// "linux_4" (4.x onwards).
    pub law: Law,
    /// When HyStart's round starts: "reached" (default) or "passed" (tcp_cubic.c's rule).
    pub hystart_round: HystartRound,
    /// Which of the round's RTT samples the delay test takes the minimum of: "first" (its
    /// first 8, default) or "round" (all so far, Linux since 5.8).
    pub hystart_rtt: HystartRtt,
    /// What a timeout does to HyStart's minimum RTT: "kept" (default) or "cleared"
    /// (tcp_cubic.c's `bictcp_reset`).
    pub hystart_min_rtt: HystartMinRtt,
    /// Which ACKs HyStart reads: "new_data" (default) or "sampled" (tcp_cubic.c's
    /// `cubictcp_acked`, 6.14 on).
    pub hystart_acks: HystartAcks,
    /// The ACK train's cushion (tcp_cubic.c `hystart_ack_delay`, 5.8 on): the train ends slow
    /// start once it lasts (delay_min + min(1 ms, 4 x 64 KB / the pacing rate)) / 2, or the
    /// whole of that when the sender paces; off: delay_min / 2 (default).
    pub hystart_ack_delay: bool,
    /// The Linux laws' clock: the kernel's CONFIG_HZ, the rate of the jiffies `bictcp_update`
    /// reads (`tcp_jiffies32`: the epoch, the HZ/32 gate, delay_min rounded up to a jiffy):
    /// 100, 250, 300 or 1000 (the default).
    pub hz: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            law: Law::default(),
            hystart_round: HystartRound::default(),
            hystart_rtt: HystartRtt::default(),
            hystart_min_rtt: HystartMinRtt::default(),
            hystart_acks: HystartAcks::default(),
            hystart_ack_delay: false,
            hz: super::bictcp::HZ,
        }
    }
}

impl Params<()> for CubicParams {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        if [100, 250, 300, 1000].contains(&self.hz) {
            Ok(())
        } else {
            Err(format!(
                "hz: {} is not a kernel's CONFIG_HZ; allowed 100, 250, 300 or 1000",
                self.hz
            ))
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cubic {
    mss: u64,
    /// The flow's `cc_params`: the law, HyStart's round and sample rules, the jiffies' HZ.
    params: CubicParams,
    /// Linux's state and arithmetic, used with the Linux laws.
    linux: Bictcp,
    pub fast_convergence: bool,
    /// Linux HyStart on; HyStart++ instead when `hspp` is set.
    hystart: bool,
    hspp: Option<HystartPp>,
    /// Window before the last reduction (segments); 0 before any loss.
    w_max: f64,
    /// Time from epoch start to reaching the origin (s).
    k: f64,
    origin: f64,
    epoch_start: Option<Time>,
    w_est: f64,
    /// cwnd just before the last reduction (segments), for the Reno-friendly alpha switch.
    cwnd_prior: f64,
    /// Fractional bytes of growth not yet added to cwnd.
    frac: f64,
    delay_min: Option<Time>,
    // HyStart round state.
    hs_found: bool,
    /// The sequence that ends HyStart's round ("passed": tcp_cubic.c's end_seq).
    hs_end_seq: Option<u64>,
    hs_round_start: Option<Time>,
    hs_last_ack: Time,
    hs_curr_rtt: Option<Time>,
    hs_samples: u32,
}

impl Cubic {
    /// RFC 9438 CUBIC (the default parameters).
    pub fn new(mss: u64, hystart: Hystart) -> Cubic {
        Cubic::with_params(mss, hystart, CubicParams::default())
    }

    pub fn with_params(mss: u64, hystart: Hystart, params: CubicParams) -> Cubic {
        Cubic {
            mss,
            params,
            linux: Bictcp::with_hz(params.law.kernel().unwrap_or(Kernel::V3_14), params.hz),
            fast_convergence: true,
            hystart: hystart == Hystart::Linux,
            hspp: (hystart == Hystart::Rfc9406).then(HystartPp::default),
            w_max: 0.0,
            k: 0.0,
            origin: 0.0,
            epoch_start: None,
            w_est: 0.0,
            cwnd_prior: 0.0,
            frac: 0.0,
            delay_min: None,
            hs_found: false,
            hs_end_seq: None,
            hs_round_start: None,
            hs_last_ack: 0,
            hs_curr_rtt: None,
            hs_samples: 0,
        }
    }

    /// W_max in segments (0 before any congestion event).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K of the current epoch in seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// Start of the current epoch, if one is running.
    pub fn epoch_start(&self) -> Option<Time> {
        self.epoch_start
    }

    /// W_cubic(t) in segments, t in seconds since the epoch start.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.origin
    }

    /// True once HyStart has ended slow start.
    pub fn hystart_exited(&self) -> bool {
        self.hs_found
    }

    /// The ACK count of the last Linux update (cwnd grows by one packet after `cnt` ACKs).
    pub fn linux_cnt(&self) -> u32 {
        self.linux.cnt
    }

    fn reset(&mut self) {
        let (mss, fc, hy, dm) = (self.mss, self.fast_convergence, self.hystart, self.delay_min);
        let hspp = self.hspp.take();
        *self = Cubic::with_params(mss, Hystart::Off, self.params);
        self.hystart = hy;
        self.hspp = hspp;
        self.fast_convergence = fc;
        if self.params.hystart_min_rtt == HystartMinRtt::Kept {
            self.delay_min = dm;
        }
    }

    fn grow(&mut self, st: &mut CcState, seg_delta: f64) {
        self.frac += seg_delta * self.mss as f64;
        if self.frac >= 1.0 {
            let whole = self.frac.floor();
            st.cwnd += whole as u64;
            self.frac -= whole;
        }
    }

    fn hystart_update(&mut self, ack: &AckSample, st: &mut CcState) {
        let new_round = match self.params.hystart_round {
            HystartRound::Reached => ack.round_start || self.hs_round_start.is_none(),
            HystartRound::Passed => self.hs_end_seq.is_none_or(|e| ack.snd_una > e),
        };
        if new_round {
            self.hs_end_seq = Some(ack.snd_nxt);
            self.hs_round_start = Some(ack.now);
            self.hs_last_ack = ack.now;
            self.hs_curr_rtt = None;
            self.hs_samples = 0;
        }
        if self.hs_found || st.cwnd < HYSTART_LOW_WINDOW * self.mss {
            return;
        }
        let Some(delay_min) = self.delay_min else { return };
        // ACK train.
        if ack.now - self.hs_last_ack <= HYSTART_ACK_DELTA {
            self.hs_last_ack = ack.now;
            if let Some(rs) = self.hs_round_start {
                if ack.now - rs > self.ack_train_threshold(ack, delay_min) {
                    self.hs_found = true;
                }
            }
        }
        // Delay increase.
        if let Some(rtt) = ack.rtt {
            let sampling = self.hs_samples < HYSTART_MIN_SAMPLES;
            if sampling || self.params.hystart_rtt == HystartRtt::Round {
                self.hs_curr_rtt = Some(self.hs_curr_rtt.map_or(rtt, |c| c.min(rtt)));
            }
            if sampling {
                self.hs_samples += 1;
            } else if let Some(c) = self.hs_curr_rtt {
                let thresh = (delay_min / 8).clamp(4 * MS, 16 * MS);
                if c > delay_min + thresh {
                    self.hs_found = true;
                }
            }
        }
        if self.hs_found {
            st.ssthresh = st.cwnd;
        }
    }

    /// The pkts_acked hook's part (bictcp_acked, cubictcp_acked): an ACK's RTT sample, unless
    /// within a second of an epoch's start, lowers delay_min, and with `hystart_acks =
    /// "sampled"` runs HyStart while it has not ended slow start.
    #[inline(always)]
    fn acked(&mut self, ack: &AckSample, st: &mut CcState) {
        let Some(rtt) = ack.rtt else { return };
        if self.epoch_start.is_some_and(|e| ack.now.saturating_sub(e) < SEC) {
            return;
        }
        self.delay_min = Some(self.delay_min.map_or(rtt, |d| d.min(rtt)));
        match self.params.law {
            Law::Rfc9438 => {}
            Law::Linux => {
                // bictcp_acked: the sample in whole jiffies (tcp_ack's seq_rtt, the send and ACK
                // times truncated to jiffies), in ms x 8.
                let b = &self.linux;
                let jiffies = b.jiffies(ack.now).wrapping_sub(b.jiffies(ack.now - rtt)) as u64;
                let ms8 = (jiffies << 3) * 1000 / b.hz as u64;
                self.linux.sample_delay(ms8.min(u32::MAX as u64) as u32);
            }
            // cubictcp_acked: the sample's rtt_us.
            Law::Linux4 => self.linux.sample_delay((rtt / US).min(u32::MAX as u64) as u32),
        }
        if self.params.hystart_acks == HystartAcks::Sampled
            && self.hystart
            && !self.hs_found
            && st.in_slow_start()
        {
            self.hystart_update(ack, st);
        }
    }

    /// How long an ACK train lasts before it ends slow start: delay_min / 2, or with
    /// `hystart_ack_delay` tcp_cubic.c's `hystart_update` threshold, delay_min plus
    /// `hystart_ack_delay` (0 before the socket has a pacing rate), halved unless the sender
    /// paces (SK_PACING_NONE).
    fn ack_train_threshold(&self, ack: &AckSample, delay_min: Time) -> Time {
        if !self.params.hystart_ack_delay {
            return delay_min / 2;
        }
        let cushion = ack.pacing_rate.map_or(0, |rate| {
            (GSO_MAX_SIZE * 4 * SEC / rate.max(1)).min(HYSTART_ACK_DELAY_MAX)
        });
        let threshold = delay_min + cushion;
        if ack.paced {
            threshold
        } else {
            threshold / 2
        }
    }

    fn packets(&self, bytes: u64) -> u32 {
        (bytes / self.mss).min(u32::MAX as u64) as u32
    }

    /// bictcp_cong_avoid past slow start: bictcp_update, then tcp_cong_avoid_ai counts this ACK
    /// (3.14) or its `acked` packets (4.x) against `cnt`.
    fn linux_avoidance(&mut self, now: Time, acked: u32, st: &mut CcState) {
        let cwnd = self.packets(st.cwnd);
        let opened = self.linux.epoch_start == 0;
        let jiffies = self.linux.jiffies(now);
        self.linux.update(cwnd, jiffies, acked);
        if opened && self.linux.epoch_start != 0 {
            // The epoch that gates delay samples (bictcp_acked skips them for 1 s after it).
            self.epoch_start = Some(now);
        }
        let grown = self.linux.cong_avoid_ai(cwnd, acked).saturating_sub(cwnd);
        st.cwnd += grown as u64 * self.mss;
    }

    fn congestion_avoidance(&mut self, now: Time, acked: u64, st: &mut CcState) {
        let mss = self.mss as f64;
        let cwnd = st.cwnd as f64 / mss;
        let epoch = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                if cwnd < self.w_max {
                    self.k = ((self.w_max - cwnd) / C).cbrt();
                    self.origin = self.w_max;
                } else {
                    self.k = 0.0;
                    self.origin = cwnd;
                }
                self.w_est = cwnd;
                now
            }
        };
        let t = (now - epoch) as f64 / SEC as f64;
        let rtt = st.srtt.or(self.delay_min).unwrap_or(0) as f64 / SEC as f64;
        let target = self.w_cubic(t + rtt).clamp(cwnd, 1.5 * cwnd);
        let segs = acked as f64 / mss;
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * segs / cwnd;
        if self.w_cubic(t) < self.w_est {
            if self.w_est > cwnd {
                self.grow(st, self.w_est - cwnd);
            }
        } else {
            self.grow(st, (target - cwnd) / cwnd * segs);
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_ack_event(&mut self, ack: &AckSample, st: &mut CcState) {
        // tcp_ack runs pkts_acked (in tcp_clean_rtx_queue) before its recovery step.
        if self.params.hystart_acks == HystartAcks::Sampled {
            self.acked(ack, st);
        }
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        if self.params.hystart_acks == HystartAcks::NewData {
            self.acked(ack, st);
        }
        if st.in_recovery || ack.acked_bytes == 0 {
            return;
        }
        if self.params.law != Law::Rfc9438 {
            self.linux.acked(ack.acked_bytes.div_ceil(self.mss) as u32);
        }
        let mut acked = ack.acked_bytes;
        if st.in_slow_start() && self.hystart && self.params.hystart_acks == HystartAcks::NewData {
            // bictcp_acked (the pkts_acked hook) runs HyStart whether or not the window is
            // used; bictcp_cong_avoid, the growth below, returns unless cwnd-limited.
            self.hystart_update(ack, st);
        }
        if !st.cwnd_limited {
            return;
        }
        if st.in_slow_start() {
            acked = match &mut self.hspp {
                Some(h) => h.slow_start(ack, st),
                None => slow_start(st, acked),
            };
            // Linux 3.14 (bictcp_cong_avoid) runs slow start or congestion avoidance on an ACK,
            // never both.
            if acked == 0 || self.params.law == Law::Linux {
                return;
            }
        }
        match self.params.law {
            Law::Rfc9438 => self.congestion_avoidance(ack.now, acked, st),
            Law::Linux | Law::Linux4 => {
                let packets = acked.div_ceil(self.mss) as u32;
                self.linux_avoidance(ack.now, packets, st)
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        if let Some(h) = &mut self.hspp {
            h.end();
        }
        self.epoch_start = None;
        if self.params.law != Law::Rfc9438 {
            // bictcp_recalc_ssthresh; tcp_init_cwnd_reduction clears snd_cwnd_cnt.
            let ssthresh = self.linux.recalc_ssthresh(self.packets(st.cwnd).max(1));
            self.linux.snd_cwnd_cnt = 0;
            st.ssthresh = ssthresh as u64 * self.mss;
            st.cwnd = st.ssthresh;
            return;
        }
        let cwnd = st.cwnd as f64 / self.mss as f64;
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        self.frac = 0.0;
        st.ssthresh = ((st.cwnd as f64 * BETA) as u64).max(2 * self.mss);
        st.cwnd = st.ssthresh;
    }

    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        if let Some(h) = &mut self.hspp {
            h.end();
        }
        if first {
            st.ssthresh = match self.params.law {
                Law::Rfc9438 => ((st.cwnd as f64 * BETA) as u64).max(2 * self.mss),
                Law::Linux | Law::Linux4 => {
                    self.linux.recalc_ssthresh(self.packets(st.cwnd).max(1)) as u64 * self.mss
                }
            };
        }
        // With a Linux law this is also bictcp_reset (the Loss state: W_max, the epoch,
        // delay_min, the Reno estimate and the delayed-ACK ratio) and tcp_enter_loss's
        // snd_cwnd_cnt = 0.
        self.reset();
    }

    /// W_max and the minimum RTT of the window law in force.
    fn report(&self, r: &mut CcReport) {
        match self.params.law {
            Law::Rfc9438 => {
                let w_max = (self.w_max * self.mss as f64).round() as u64;
                r.w_max = (w_max > 0).then_some(w_max);
                r.min_rtt = self.delay_min;
            }
            Law::Linux | Law::Linux4 => self.linux.report(self.mss, r),
        }
    }
}

fn build(params: &Value, ctx: &CcContext) -> CcBuild {
    let (p, resolved) = read_params::<CubicParams>(params)?;
    Ok((Box::new(Cubic::with_params(ctx.mss, ctx.hystart, p)), resolved))
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "cubic",
    summary: "CUBIC: the window a cubic function of the time since the last reduction, with HyStart",
    reference: "RFC 9438; Linux tcp_cubic.c (3.14 and 4.x window laws)",
    params: &[Group::of::<CubicParams>()],
    needs_accecn: false,
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn state(cwnd_segs: u64) -> CcState {
        CcState {
            cwnd: cwnd_segs * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            bytes_in_flight: cwnd_segs * MSS,
            in_recovery: false,
            cwnd_limited: true,
            flight_cwnd_limited: true,
            srtt: Some(100 * MS),
            abc: true,
        }
    }

    fn start_epoch(c: &mut Cubic, st: &mut CcState, now: Time) {
        // The first ACK in congestion avoidance opens the epoch.
        c.on_ack(
            &AckSample {
                now,
                acked_bytes: MSS,
                ..Default::default()
            },
            st,
        );
    }

    #[test]
    fn window_law_vectors_without_fast_convergence() {
        // RFC 9438 section 4.2, no fast convergence: W_max = 100, K = cbrt(100*0.3/0.4) = 4.217 s.
        let mut c = Cubic::new(MSS, Hystart::Off);
        c.fast_convergence = false;
        let mut st = state(100);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        assert_eq!(c.w_max(), 100.0);
        assert_eq!(st.ssthresh, 70 * MSS);
        assert_eq!(st.cwnd, 70 * MSS);
        start_epoch(&mut c, &mut st, 5 * SEC);
        assert!((c.k() - 4.217).abs() < 5e-4, "K = {}", c.k());
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k()) - 100.0).abs() < 1e-9);
        assert!((c.w_cubic(c.k() + 1.0) - 100.4).abs() < 1e-9);
    }

    #[test]
    fn fast_convergence_vector() {
        let mut c = Cubic::new(MSS, Hystart::Off);
        let mut st = state(120);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        assert_eq!(c.w_max(), 120.0);
        // Second loss at cwnd = 100 < previous W_max: W_max = 100*(1.7)/2 = 85, cwnd -> 70.
        st.cwnd = 100 * MSS;
        c.on_congestion_event(SEC, CongestionKind::Loss, &mut st);
        assert!((c.w_max() - 85.0).abs() < 1e-9);
        assert_eq!(st.cwnd, 70 * MSS);
        start_epoch(&mut c, &mut st, 2 * SEC);
        // RFC 9438 / Linux: K = cbrt((85-70)/0.4) = 3.347 s (RFC 8312 would give 3.995 s).
        assert!((c.k() - 3.347).abs() < 5e-4, "K = {}", c.k());
    }

    #[test]
    fn growth_follows_the_curve_and_is_clamped() {
        // Integrate per-ACK growth with one ACK per segment and a fixed RTT; after K seconds
        // cwnd must be close to W_max (target leads by one RTT, so cwnd gets there a bit early).
        let mut c = Cubic::new(MSS, Hystart::Off);
        c.fast_convergence = false;
        let mut st = state(100);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        let rtt = 100 * MS;
        let mut now = SEC;
        start_epoch(&mut c, &mut st, now);
        let k = c.k();
        let end = now + (k * SEC as f64) as Time;
        while now < end {
            let per_ack = rtt / (st.cwnd / MSS);
            for _ in 0..st.cwnd / MSS {
                now += per_ack;
                let before = st.cwnd;
                c.on_ack(
                    &AckSample {
                        now,
                        acked_bytes: MSS,
                        ..Default::default()
                    },
                    &mut st,
                );
                assert!(st.cwnd as f64 <= before as f64 * 1.5 + MSS as f64);
            }
        }
        let w = st.cwnd as f64 / MSS as f64;
        assert!((99.0..102.0).contains(&w), "cwnd at t=K: {w}");
    }

    #[test]
    fn reno_friendly_region_small_window() {
        // W_max = 10 segments at RTT 10 ms: the cubic curve is nearly flat (K = 1.9 s) while
        // Reno-friendly growth adds ~0.53 segment per RTT: after 50 RTTs (0.5 s), cwnd is about
        // 7 + 0.53*3 (to cwnd_prior = 10) + 1*(remaining RTTs), clearly above W_cubic.
        let mut c = Cubic::new(MSS, Hystart::Off);
        let mut st = state(10);
        st.srtt = Some(10 * MS);
        c.on_congestion_event(0, CongestionKind::Loss, &mut st);
        let mut now = SEC;
        start_epoch(&mut c, &mut st, now);
        for _ in 0..50 {
            let n = st.cwnd / MSS;
            for _ in 0..n {
                now += 10 * MS / n;
                c.on_ack(
                    &AckSample {
                        now,
                        acked_bytes: MSS,
                        ..Default::default()
                    },
                    &mut st,
                );
            }
        }
        let t = (now - c.epoch_start().unwrap()) as f64 / 1e9;
        let w = st.cwnd as f64 / MSS as f64;
        assert!(w > c.w_cubic(t) + 5.0, "cwnd {w} vs W_cubic {}", c.w_cubic(t));
        assert!(w > 30.0 && w < 60.0, "{w}");
    }

    fn linux(mss: u64) -> Cubic {
        Cubic::with_params(
            mss,
            Hystart::Off,
            CubicParams {
                law: Law::Linux,
                ..Default::default()
            },
        )
    }

    /// One ACK of one segment at `now` with an RTT sample.
    fn ack1(c: &mut Cubic, st: &mut CcState, now: Time, rtt: Time) {
        let a = AckSample {
            now,
            acked_bytes: MSS,
            rtt: Some(rtt),
            ..Default::default()
        };
        c.on_ack(&a, st);
    }

    #[test]
    fn linux_law_vector_from_the_kernel_arithmetic() {
        // Derived by hand from Linux 3.14 tcp_cubic.c (HZ 1000, beta 717, bic_scale 41).
        let mut c = linux(MSS);
        let mut st = state(100);
        // An RTT sample of 100 ms while not cwnd-limited: delay_min = 100 << 3, no growth.
        st.cwnd_limited = false;
        ack1(&mut c, &mut st, 9 * SEC, 100 * MS);
        assert_eq!((st.cwnd, c.linux.delay_min), (100 * MSS, 800));
        st.cwnd_limited = true;
        // Loss at 100 packets: ssthresh = 100 x 717 / 1024 = 70.02 -> 70, W_max = 100.
        c.on_congestion_event(10 * SEC, CongestionKind::Loss, &mut st);
        assert_eq!(
            (st.cwnd, st.ssthresh, c.linux.last_max_cwnd),
            (70 * MSS, 70 * MSS, 100)
        );
        // SRTT far from delay_min: the Linux target ignores it.
        st.srtt = Some(500 * MS);
        // ACK 1 at 11 s opens the epoch. K = cubic_root(2^40 / 410 x 30): the table gives 139 x 32
        // = 4448, the Newton step (2 x 4448 + 80452070310 / (4448 x 4447)) x 341 >> 10 = 4316
        // (2^-10 s; the exact cbrt(30 / 0.4) s is 4318.4). t = (100 << 10) / 1000 = 102, offs =
        // 4214, delta = 410 x 4214^3 >> 40 = 27, target = 73 (one delay_min ahead; from SRTT it
        // would be 79), cnt = 70 / 3 = 23; the delayed-ACK ratio after one 1-packet ACK is
        // 32 - 2 + 1 = 31, so cnt = (23 << 4) / 31 = 11.
        ack1(&mut c, &mut st, 11 * SEC, 100 * MS);
        assert_eq!((c.linux.k, c.linux.delayed_ack, c.linux_cnt()), (4316, 31, 11));
        assert_eq!(c.epoch_start(), Some(11 * SEC));
        // ACKs 2-11 (1 ms apart, same cwnd, within HZ/32): no new count; snd_cwnd_cnt climbs to
        // 11; ACK 12 finds snd_cwnd_cnt >= cnt: cwnd 71.
        for i in 1..11 {
            ack1(&mut c, &mut st, 11 * SEC + i * MS, 100 * MS);
            assert_eq!(st.cwnd, 70 * MSS, "ACK {}", i + 1);
        }
        ack1(&mut c, &mut st, 11 * SEC + 11 * MS, 100 * MS);
        assert_eq!(st.cwnd, 71 * MSS);
        // ACK 13: a new cwnd recomputes: t = (112 << 10) / 1000 = 114, offs = 4202, delta = 27,
        // target 73, cnt = 71 / 2 = 35, (35 << 4) / 31 = 18. The Reno estimate: ack_cnt 13 is
        // below (71 x 15) >> 3 = 133, tcp_cwnd stays 70.
        ack1(&mut c, &mut st, 11 * SEC + 12 * MS, 100 * MS);
        assert_eq!((c.linux_cnt(), c.linux.tcp_cwnd, c.linux.ack_cnt), (18, 70, 13));
        // A second loss below W_max: fast convergence W_max = 71 x 1741 / 2048 = 60.35 -> 60,
        // ssthresh = 71 x 717 / 1024 = 49.7 -> 49.
        c.on_congestion_event(12 * SEC, CongestionKind::Loss, &mut st);
        assert_eq!((st.ssthresh, c.linux.last_max_cwnd), (49 * MSS, 60));
        assert_eq!((c.linux.epoch_start, c.linux.snd_cwnd_cnt), (0, 0));
    }

    /// `rtts` RTTs of 10 ms from `from`, each with one ACK per segment of the window, spread
    /// over it.
    /// A flow at 10 segments, 10 ms RTT, ACKed once at 0.5 s (application-limited) and hit by a
    /// loss at 1 s: W_max 10, cwnd 7 (beta 717/1024).
    fn loss_at_ten_after_half_a_second(c: &mut Cubic) -> CcState {
        let mut st = state(10);
        st.srtt = Some(10 * MS);
        st.cwnd_limited = false;
        ack1(c, &mut st, SEC / 2, 10 * MS);
        st.cwnd_limited = true;
        c.on_congestion_event(SEC, CongestionKind::Loss, &mut st);
        assert_eq!(st.cwnd, 7 * MSS);
        st
    }

    fn per_segment_acks(c: &mut Cubic, st: &mut CcState, from: Time, rtts: usize) {
        let mut now = from;
        for _ in 0..rtts {
            let n = st.cwnd / MSS;
            for _ in 0..n {
                now += 10 * MS / n;
                ack1(c, st, now, 10 * MS);
            }
        }
    }

    #[test]
    fn linux_law_reno_friendly_rate() {
        // W_max = 10 at RTT 10 ms: K = cbrt(3 / 0.4) = 1.96 s, the cubic target stays below cwnd
        // for the 0.5 s run, so Linux's Reno estimate sets the pace: 3 (1 - beta) / (1 + beta)
        // segments per RTT with beta = 717/1024 (0.529), with no switch to 1 segment per RTT past
        // the old W_max (RFC 9438 4.3 has one): after 50 RTTs cwnd = 7 + 50 x 0.529 = 33.5.
        let beta = 717.0 / 1024.0;
        let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
        let mut c = linux(MSS);
        let mut st = loss_at_ten_after_half_a_second(&mut c);
        per_segment_acks(&mut c, &mut st, SEC, 50);
        let w = st.cwnd as f64 / MSS as f64;
        let want = 7.0 + 50.0 * alpha;
        assert!((w - want).abs() <= 2.0, "cwnd {w}, Reno-friendly {want:.1}");
        // The RFC 9438 law in the same run passes the old W_max at 1 segment per RTT.
        let mut c = Cubic::new(MSS, Hystart::Off);
        let mut st = state(10);
        st.srtt = Some(10 * MS);
        c.on_congestion_event(SEC, CongestionKind::Loss, &mut st);
        per_segment_acks(&mut c, &mut st, SEC, 50);
        assert!(st.cwnd as f64 / MSS as f64 > want + 5.0);
    }

    /// The congestion-avoidance growth in segments per RTT from RTT 10 to RTT 50 (10 ms each)
    /// after a loss at 10 segments (W_max 10, cwnd 7), under delayed ACKs: each ACK covers 2
    /// segments (an odd window's last segment alone), spread over the RTT.
    fn delayed_ack_rate(law: Law) -> f64 {
        let mut c = Cubic::with_params(
            MSS,
            Hystart::Off,
            CubicParams {
                law,
                ..Default::default()
            },
        );
        let mut st = loss_at_ten_after_half_a_second(&mut c);
        let mut now = SEC;
        let mut at_10 = 0;
        for rtt in 0..50 {
            if rtt == 10 {
                at_10 = st.cwnd;
            }
            let n = st.cwnd / MSS;
            let acks = n.div_ceil(2);
            for i in 0..acks {
                now += 10 * MS / acks;
                let a = AckSample {
                    now,
                    acked_bytes: if 2 * i + 1 == n { MSS } else { 2 * MSS },
                    rtt: Some(10 * MS),
                    ..Default::default()
                };
                c.on_ack(&a, &mut st);
            }
        }
        (st.cwnd - at_10) as f64 / MSS as f64 / 40.0
    }

    #[test]
    fn linux_4_law_reno_friendly_rate_under_delayed_acks() {
        // K = cbrt(3 / 0.4) = 1.96 s: the cubic target stays below cwnd for the 0.5 s run and the
        // Reno estimate sets the pace, one packet per (cwnd x 15) >> 3 counted. From 4.x the count
        // is of acknowledged packets, so with 2 segments per ACK the rate stays
        // 3 (1 - beta) / (1 + beta) = 0.529 segment per RTT (beta 717/1024); 3.14 counts ACKs,
        // half as many, and grows at 0.264.
        let beta = 717.0 / 1024.0;
        let alpha = 3.0 * (1.0 - beta) / (1.0 + beta);
        let v4 = delayed_ack_rate(Law::Linux4);
        assert!(
            (v4 - alpha).abs() <= 0.1 * alpha,
            "4.x {v4} per RTT, Reno-friendly {alpha:.3}"
        );
        let v3 = delayed_ack_rate(Law::Linux);
        let half = alpha / 2.0;
        assert!(
            (v3 - half).abs() <= 0.1 * half,
            "3.14 {v3} per RTT, half rate {half:.3}"
        );
    }

    #[test]
    fn linux_law_timeout_resets_the_kernel_state() {
        // tcp_enter_loss: ssthresh from bictcp_recalc_ssthresh, then the Loss state's
        // bictcp_reset clears W_max and delay_min; before a new loss cnt is capped at 20.
        let mut c = linux(MSS);
        let mut st = state(50);
        st.cwnd_limited = false;
        ack1(&mut c, &mut st, SEC, 100 * MS);
        st.cwnd_limited = true;
        c.on_rto(2 * SEC, true, &mut st);
        // 50 x 717 / 1024 = 35.01 -> 35.
        assert_eq!(st.ssthresh, 35 * MSS);
        assert_eq!((c.linux.last_max_cwnd, c.linux.delay_min), (0, 0));
    }

    #[test]
    fn a_timeout_clears_hystarts_minimum_as_the_kernels_module_does() {
        // tcp_cubic.c: HyStart and the law share delay_min, which bictcp_reset (the Loss state)
        // clears; HyStart's next slow start takes its minimum from the samples after the
        // timeout. "kept" keeps the minimum of every sample, whatever the law.
        for (law, rule) in [
            (Law::Linux, HystartMinRtt::Cleared),
            (Law::Linux4, HystartMinRtt::Cleared),
            (Law::Linux4, HystartMinRtt::Kept),
            (Law::Rfc9438, HystartMinRtt::Kept),
        ] {
            let cleared = rule == HystartMinRtt::Cleared;
            let params = CubicParams {
                law,
                hystart_min_rtt: rule,
                ..Default::default()
            };
            let mut c = Cubic::with_params(MSS, Hystart::Linux, params);
            let mut st = state(20);
            let mut now = SEC;
            let round = |c: &mut Cubic, st: &mut CcState, now: &mut Time, rtt: u64| {
                for i in 0..10 {
                    *now += 5 * MS;
                    let a = AckSample {
                        now: *now,
                        acked_bytes: MSS,
                        rtt: Some(rtt * MS),
                        round_start: i == 0,
                        ..Default::default()
                    };
                    c.on_ack(&a, st);
                }
            };
            round(&mut c, &mut st, &mut now, 100);
            c.on_rto(now, true, &mut st);
            // The timeout undone: the window back in slow start, a queue of 50 ms since.
            (st.cwnd, st.ssthresh) = (20 * MSS, u64::MAX);
            round(&mut c, &mut st, &mut now, 150);
            // 150 ms against the minimum kept (100 + clamp(12.5, 4, 16)) ends slow start;
            // against a minimum of 150 it does not.
            assert_eq!(c.hystart_exited(), !cleared, "{law:?} {rule:?}");
            if cleared {
                // The threshold is now 150 + 16 ms: 160 holds slow start, 170 ends it.
                round(&mut c, &mut st, &mut now, 160);
                assert!(!c.hystart_exited(), "{law:?}");
                round(&mut c, &mut st, &mut now, 170);
                assert!(c.hystart_exited(), "{law:?}");
            }
        }
    }

    #[test]
    fn params_parse_and_default() {
        let ctx = CcContext {
            mss: MSS,
            hystart: Hystart::Off,
        };
        let read = |v: serde_json::Value| (INFO[0].build)(&v, &ctx).map(|(_, r)| r);
        assert_eq!(
            read(serde_json::Value::Null).unwrap(),
            serde_json::json!({"law": "rfc9438", "hystart_round": "reached", "hystart_rtt": "first", "hystart_min_rtt": "kept", "hystart_acks": "new_data", "hystart_ack_delay": false, "hz": 1000})
        );
        let l = read(serde_json::json!({"law": "linux"}));
        assert_eq!(
            l.unwrap(),
            serde_json::json!({"law": "linux", "hystart_round": "reached", "hystart_rtt": "first", "hystart_min_rtt": "kept", "hystart_acks": "new_data", "hystart_ack_delay": false, "hz": 1000})
        );
        let l4 = serde_json::json!({"law": "linux_4", "hystart_round": "passed", "hystart_rtt": "round", "hystart_min_rtt": "cleared", "hystart_acks": "sampled", "hystart_ack_delay": true, "hz": 250});
        assert_eq!(read(l4.clone()).unwrap(), l4);
        let e = read(serde_json::json!({"hz": 200})).unwrap_err();
        assert_eq!(
            e,
            "hz: 200 is not a kernel's CONFIG_HZ; allowed 100, 250, 300 or 1000"
        );
        let e = read(serde_json::json!({"law": "bic"})).unwrap_err();
        assert_eq!(e, "law: \"bic\" is not allowed; allowed: rfc9438, linux, linux_4");
        let e = read(serde_json::json!({"hystart_round": "later"})).unwrap_err();
        assert!(e.starts_with("hystart_round: "), "{e}");
    }

    #[test]
    fn hystart_delay_increase_exits_slow_start() {
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        let mut now = 0;
        // Round 1: RTT 100 ms (sets delay_min). ACKs 5 ms apart: no ACK train.
        for i in 0..10 {
            now += 5 * MS;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(100 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(!c.hystart_exited());
        // Round 2: RTT 100 + 13 ms > 100 + clamp(12.5, 4, 16) ms -> exit after 8 samples.
        for i in 0..10 {
            now += 5 * MS;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(113 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(c.hystart_exited());
        assert!(!st.in_slow_start());
    }

    #[test]
    fn hystart_rtt_round_lets_a_later_low_sample_hold_slow_start() {
        // Round 1 sets delay_min = 100 ms. Round 2: eight samples of 120 ms (above 100 +
        // clamp(12.5, 4, 16) ms), then one of 105 ms. "first" compares the first eight's
        // minimum (120) on the ninth ACK and leaves slow start; "round" (Linux 5.8+) first
        // takes the ninth sample into the round's minimum (105) and stays, until a round whose
        // every sample is high.
        for (rule, exits_on_ninth) in [(HystartRtt::First, true), (HystartRtt::Round, false)] {
            let params = CubicParams {
                hystart_rtt: rule,
                ..Default::default()
            };
            let mut c = Cubic::with_params(MSS, Hystart::Linux, params);
            let mut st = state(20);
            let mut now = 0;
            let mut ack = |c: &mut Cubic, st: &mut CcState, rtt: u64, first: bool| {
                now += 5 * MS;
                let a = AckSample {
                    now,
                    acked_bytes: MSS,
                    rtt: Some(rtt * MS),
                    round_start: first,
                    ..Default::default()
                };
                c.on_ack(&a, st);
            };
            for i in 0..10 {
                ack(&mut c, &mut st, 100, i == 0);
            }
            for i in 0..8 {
                ack(&mut c, &mut st, 120, i == 0);
            }
            assert!(!c.hystart_exited(), "{rule:?}");
            ack(&mut c, &mut st, 105, false);
            assert_eq!(c.hystart_exited(), exits_on_ninth, "{rule:?}");
            for i in 0..10 {
                ack(&mut c, &mut st, 120, i == 0);
            }
            assert!(c.hystart_exited(), "{rule:?}");
        }
    }

    #[test]
    fn hystart_ack_train_exits_after_half_min_rtt() {
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        // delay_min = 80 ms; ACKs 1 ms apart (a train): exit once the train has lasted more
        // than delay_min/2 = 40 ms since the round started.
        let mut now = 0;
        for i in 0..60u64 {
            now += MS;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(80 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
            if c.hystart_exited() {
                break;
            }
        }
        assert!(c.hystart_exited());
        assert_eq!(
            now,
            42 * MS,
            "first ACK more than 40 ms after the round start (at 1 ms)"
        );
        // ssthresh = cwnd at the exit: 20 + 41 segments (41 ACKs of slow start before the exit).
        assert_eq!(st.ssthresh, 61 * MSS);
        assert!(!st.in_slow_start());
        // An ACK gap > 2 ms breaks the train.
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        let mut now = 0;
        for i in 0..60u64 {
            now += if i == 10 { 3 * MS } else { MS };
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(80 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(!c.hystart_exited());
    }

    /// When (ms) a train of ACKs `step` apart, each with an 80 ms RTT sample and `extra` set,
    /// ends slow start by HyStart's ACK train; None within 100 ms.
    fn train_exit(params: CubicParams, step: Time, extra: AckSample) -> Option<Time> {
        let mut c = Cubic::with_params(MSS, Hystart::Linux, params);
        let mut st = state(20);
        let mut now = 0;
        while now < 100 * MS {
            now += step;
            let a = AckSample {
                now,
                acked_bytes: MSS,
                rtt: Some(80 * MS),
                round_start: now == step,
                ..extra
            };
            c.on_ack_event(&a, &mut st);
            c.on_ack(&a, &mut st);
            if c.hystart_exited() {
                return Some(now);
            }
        }
        None
    }

    #[test]
    fn hystart_ack_delay_widens_the_train_by_tcp_cubics_cushion() {
        // tcp_cubic.c hystart_update: threshold = delay_min + hystart_ack_delay, halved unless
        // the socket paces; hystart_ack_delay = min(1 ms, 4 x gso_max_size / sk_pacing_rate),
        // 0 while the rate is unset. ACKs every 0.25 ms from 0.25 ms (the round's start), so
        // the train ends on the first ACK more than the threshold after 0.25 ms.
        let us = crate::units::US;
        let on = CubicParams {
            hystart_ack_delay: true,
            ..Default::default()
        };
        let at = |rate: Option<u64>, paced: bool| {
            let extra = AckSample {
                pacing_rate: rate,
                paced,
                ..Default::default()
            };
            train_exit(on, 250 * us, extra)
        };
        let off = train_exit(CubicParams::default(), 250 * us, AckSample::default());
        // delay_min / 2 = 40 ms: the first ACK past 40.25 ms.
        assert_eq!(off, Some(40_500 * us));
        // No rate yet: no cushion.
        assert_eq!(at(None, false), Some(40_500 * us));
        // 4 x 65536 B at 524.288 MB/s = 0.5 ms: (80 + 0.5) / 2 = 40.25 ms, past 40.5 ms.
        assert_eq!(at(Some(524_288_000), false), Some(40_750 * us));
        // At 100 Mbit/s the cushion is capped at 1 ms: 40.5 ms, past 40.75 ms.
        assert_eq!(at(Some(12_500_000), false), Some(41_000 * us));
        // A pacing sender's train must last the whole 81 ms: the first ACK past 81.25 ms.
        assert_eq!(at(Some(12_500_000), true), Some(81_500 * us));
    }

    #[test]
    fn sampled_hystart_reads_only_acks_with_an_rtt_sample() {
        // cubictcp_acked returns on an ACK without an RTT sample (rtt_us < 0), so HyStart's
        // ACK train does not see it: three such ACKs leave a 4 ms gap between the ones it sees
        // (more than hystart_ack_delta_us, 2 ms) and the train never reaches delay_min / 2.
        // With "new_data" every ACK of new data times the train, which ends at 42 ms.
        let run = |acks: HystartAcks| {
            let mut c = Cubic::with_params(
                MSS,
                Hystart::Linux,
                CubicParams {
                    hystart_acks: acks,
                    ..Default::default()
                },
            );
            let mut st = state(20);
            for i in 1..=60u64 {
                let a = AckSample {
                    now: i * MS,
                    acked_bytes: MSS,
                    rtt: (!(10..13).contains(&i)).then_some(80 * MS),
                    round_start: i == 1,
                    ..Default::default()
                };
                c.on_ack_event(&a, &mut st);
                c.on_ack(&a, &mut st);
                if c.hystart_exited() {
                    return Some(i);
                }
            }
            None
        };
        assert_eq!(run(HystartAcks::NewData), Some(42));
        assert_eq!(run(HystartAcks::Sampled), None);
    }

    #[test]
    fn sampled_hystart_runs_before_the_recovery_step_and_in_recovery() {
        // tcp_ack calls pkts_acked (cubictcp_acked -> hystart_update) from tcp_clean_rtx_queue,
        // before tcp_fastretrans_alert, on SACK-only ACKs and in recovery as well, whenever
        // cwnd < ssthresh and HyStart has not ended slow start. Nine samples 20 ms above a
        // 100 ms minimum (more than clamp(100 / 8, 4, 16) = 12.5 ms), on SACK-only ACKs in
        // recovery with cwnd below ssthresh: the delay test ends slow start on the ninth,
        // ssthresh = cwnd, all in `on_ack_event` (the round of the nine starts on the first).
        let mut c = Cubic::with_params(
            MSS,
            Hystart::Linux,
            CubicParams {
                hystart_acks: HystartAcks::Sampled,
                ..Default::default()
            },
        );
        let mut st = state(20);
        let first = AckSample {
            now: MS,
            acked_bytes: MSS,
            rtt: Some(100 * MS),
            ..Default::default()
        };
        c.on_ack_event(&first, &mut st);
        st.in_recovery = true;
        st.ssthresh = 40 * MSS;
        for i in 0..9u64 {
            let a = AckSample {
                now: (2 + i) * MS,
                sacked_bytes: MSS,
                rtt: Some(120 * MS),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack_event(&a, &mut st);
            assert_eq!(c.hystart_exited(), i == 8, "sample {}", i + 1);
        }
        assert_eq!(st.ssthresh, 20 * MSS);
        // "new_data" runs HyStart from `on_ack` alone, outside recovery, on ACKs of new data.
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(20);
        for i in 0..12u64 {
            let a = AckSample {
                now: (1 + i) * MS,
                acked_bytes: MSS,
                rtt: Some(if i == 0 { 100 * MS } else { 120 * MS }),
                ..Default::default()
            };
            c.on_ack_event(&a, &mut st);
        }
        assert!(!c.hystart_exited());
    }

    #[test]
    fn hystart_ignores_small_windows() {
        let mut c = Cubic::new(MSS, Hystart::Linux);
        let mut st = state(4);
        let mut now = 0;
        for i in 0..11 {
            now += 100 * crate::units::US;
            let rtt = if i < 4 { 100 * MS } else { 200 * MS };
            let a = AckSample {
                now,
                acked_bytes: 1,
                rtt: Some(rtt),
                round_start: i == 0,
                ..Default::default()
            };
            c.on_ack(&a, &mut st);
        }
        assert!(!c.hystart_exited());
    }
}
