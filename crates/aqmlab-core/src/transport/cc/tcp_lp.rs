//! TCP-LP (Kuzmanovic & Knightly, INFOCOM 2003) as Linux's `tcp_lp.c` runs it (the kernel
//! module the lpcc2013 testbed used, 3.2; docs/transports.md 3.6), in the module's own integer
//! arithmetic. NewReno does everything except:
//!
//! * One-way delay samples update the observed minimum and maximum, the maximum keeping a
//!   "reserved" second value so that one outlier is forgotten (`tcp_lp_rtt_sample`), and the
//!   smoothed delay sowd (held as 8 x sowd: sowd += sample - sowd / 8).
//! * Where the samples come from is the `clock` knob. `exact`: the ACK's TSval - TSecr from one
//!   simulated clock in ns (plus `clock_offset`), what a simulator's TCP-LP sees (ns-3's TcpLp).
//!   `jiffies`: what the kernel sees between two real hosts. Each host stamps TCP timestamps with
//!   its 32-bit jiffies counter (`hz` ticks per second, INITIAL_JIFFIES = -300 HZ at boot, then
//!   `uptime`; the receiver's counter runs `clock_offset` ahead). The module estimates the remote
//!   HZ from consecutive ACKs (`tcp_lp_remote_hz_estimator`: HZ x dTSval / dTSecr, a 1/64
//!   EWMA) and computes the delay in ms as TSval x (1000 / remote HZ) - TSecr x (1000 / HZ),
//!   every operand u32, so it wraps and the divisions truncate (`tcp_lp_owd_calculator`).
//! * Early congestion indication (ECI), tested on every ACK that acknowledges data
//!   (`tcp_lp_pkts_acked`): sowd >= min + 15% (max - min), the first sample included (sowd
//!   equals both bounds there). On an ECI the bounds restart from sowd (min = sowd, max =
//!   2 sowd: `bounds_reset`) and the window falls: to one segment when the previous ECI is less
//!   than the inference time ago, else to half. Linux sets only snd_cwnd, so below ssthresh the
//!   window regrows in slow start; `eci_ssthresh` sets ssthresh to the reduced window instead,
//!   so that it regrows additively as the paper describes.
//! * `uptime_range` / `clock_offset_range`: each run draws the two clocks uniformly from its
//!   seed, once per flow group (scenario/build.rs), for a testbed that did not record them.
//! * The inference time is 3 x (now - TSecr) in the clock's units; no window growth within it
//!   (`tcp_lp_cong_avoid`; the flag is taken before this ACK's ECI, as in the kernel).
//!
//! Why a one-clock TCP-LP starves alone: after an ECI the next needs sowd 15% above the reset
//! minimum, i.e. a queue of 0.15 x the measured one-way delay; every delayed ACK adds its wait
//! to the sample (TSval is stamped when the ACK leaves), and each ECI slow-starts back into the
//! next. Why a kernel one yields to nobody: the reset range includes whatever the two clocks
//! disagree by, which puts the next threshold out of reach (both tested below).

use super::reno::Reno;
use super::{
    read_params, AckSample, CcBuild, CcContext, CcInfo, CcState, CongestionControl, CongestionKind, Hystart,
};
use crate::params::{Group, Params};
use crate::rng::Rng;
use crate::units::{Dur, Time, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The kernel's delay resolution (LP_RESOL: samples in ms).
const LP_RESOL: u32 = 1000;

/// Where one-way delay samples come from (see the module header).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LpClock {
    Exact,
    Jiffies,
}

/// TCP-LP's parameters (the flow's `cc_params` table), every default written out.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TcpLpParams {
    /// The ECI fraction of the [min, max] range, in hundredths (the kernel's 15 / 100).
    pub threshold: f64,
    /// The smoothing weight, 1/2^k (the kernel's shift by 3: 1/8).
    pub gamma: f64,
    /// The inference timeout after an early congestion indication, in smoothed RTTs (the
    /// kernel's 3: the window stays at one segment that long before it may grow again).
    pub inference_rtts: f64,
    /// After an ECI restart the bounds at [sowd, 2 sowd] (Linux; the paper keeps them).
    pub bounds_reset: bool,
    /// After an ECI set ssthresh to the reduced window (the paper's additive regrowth); Linux
    /// leaves ssthresh alone.
    pub eci_ssthresh: bool,
    /// Where one-way delay samples come from: "exact" (one simulated clock in ns, as a
    /// simulator's TCP-LP sees them) or "jiffies" (each host's timestamp clock, as the kernel
    /// sees them between two real hosts).
    pub clock: LpClock,
    /// Timestamp ticks per second of both hosts (`jiffies` only; Linux 3.2: CONFIG_HZ, whose
    /// Kconfig default is 250).
    pub hz: u32,
    /// The sender's time since boot at the start of the run (`jiffies` only). Not reported by
    /// the studies: one day by default.
    pub uptime: Dur,
    /// The receiver's timestamp clock minus the sender's (the receiver booted this much
    /// earlier): 10 minutes by default.
    pub clock_offset: Dur,
    /// When given, each run draws `uptime` uniformly in [lo, hi] from its seed, once per flow
    /// group (the group's flows share their two hosts): a testbed whose hosts' uptimes nobody
    /// recorded, repeated, sees a different pair of clocks each time ([`draw_clocks`]).
    pub uptime_range: Option<[Dur; 2]>,
    /// The same for `clock_offset`.
    pub clock_offset_range: Option<[Dur; 2]>,
}

impl Default for TcpLpParams {
    fn default() -> Self {
        TcpLpParams {
            threshold: 0.15,
            gamma: 0.125,
            inference_rtts: 3.0,
            bounds_reset: true,
            eci_ssthresh: false,
            clock: LpClock::Jiffies,
            hz: 250,
            uptime: Dur(86_400 * SEC),
            clock_offset: Dur(600 * SEC),
            uptime_range: None,
            clock_offset_range: None,
        }
    }
}

impl Params<()> for TcpLpParams {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        let pct = self.threshold * 100.0;
        if !(self.threshold > 0.0 && self.threshold <= 1.0 && (pct - pct.round()).abs() < 1e-9) {
            return Err(format!(
                "threshold: {} is not allowed; allowed: a multiple of 0.01 above 0 up to 1",
                self.threshold
            ));
        }
        if self.shift().is_none() {
            return Err(format!(
                "gamma: {} is not allowed; allowed: 1/2^k for k = 1..16 (0.5, 0.25, 0.125, ...)",
                self.gamma
            ));
        }
        if !(self.inference_rtts > 0.0 && self.inference_rtts <= 100.0) {
            return Err(format!(
                "inference_rtts: {} is out of range; allowed: above 0 up to 100",
                self.inference_rtts
            ));
        }
        for (k, r) in [
            ("uptime_range", self.uptime_range),
            ("clock_offset_range", self.clock_offset_range),
        ] {
            if let Some([lo, hi]) = r {
                if lo.0 > hi.0 || hi.0 > MAX_CLOCK {
                    let s = |t: Time| t as f64 / SEC as f64;
                    return Err(format!(
                        "{k}: [\"{}s\", \"{}s\"] is not allowed; allowed: [lo, hi] with \
                         lo <= hi <= \"{}s\" (1000 days)",
                        s(lo.0),
                        s(hi.0),
                        s(MAX_CLOCK)
                    ));
                }
            }
        }
        if !(1..=LP_RESOL).contains(&self.hz) {
            return Err(format!(
                "hz: {} is out of range; allowed: 1 to {LP_RESOL}",
                self.hz
            ));
        }
        Ok(())
    }
}

impl TcpLpParams {
    /// k with gamma = 1/2^k.
    fn shift(&self) -> Option<u32> {
        (1..=16).find(|k| self.gamma == 1.0 / (1u64 << k) as f64)
    }
}

/// The largest uptime or clock offset accepted: 1000 days.
const MAX_CLOCK: Time = 1000 * 86_400 * SEC;

/// A TCP-LP flow group's `cc_params` with `uptime` and `clock_offset` drawn from their ranges
/// (`uptime_range`, `clock_offset_range`) with `rng` (the run's stream for the group); None
/// when neither range is given (or `params` are not TCP-LP's resolved parameters).
pub fn draw_clocks(params: &serde_json::Value, rng: &mut Rng) -> Option<serde_json::Value> {
    let mut p: TcpLpParams = serde_json::from_value(params.clone()).ok()?;
    if p.uptime_range.is_none() && p.clock_offset_range.is_none() {
        return None;
    }
    if let Some([lo, hi]) = p.uptime_range {
        p.uptime = Dur(rng.range_u64(lo.0, hi.0));
    }
    if let Some([lo, hi]) = p.clock_offset_range {
        p.clock_offset = Dur(rng.range_u64(lo.0, hi.0));
    }
    Some(serde_json::to_value(&p).expect("parameters serialise"))
}

/// The kernel's remote-HZ estimate and its reference timestamps (`jiffies` only).
#[derive(Clone, Debug, Default)]
struct RemoteHz {
    hz: u32,
    remote_ref: u32,
    local_ref: u32,
}

impl RemoteHz {
    /// `tcp_lp_remote_hz_estimator`, operand for operand: the new estimate (0 = not valid).
    fn update(&mut self, local_hz: u32, tsval: u32, tsecr: u32) -> u32 {
        let mut rhz = (self.hz << 6) as i64;
        let fresh = self.remote_ref != 0 && self.local_ref != 0;
        if fresh && tsval != self.remote_ref && tsecr != self.local_ref {
            let m = (local_hz.wrapping_mul(tsval.wrapping_sub(self.remote_ref))
                / tsecr.wrapping_sub(self.local_ref)) as i64;
            if rhz > 0 {
                rhz += m - (rhz >> 6);
            } else {
                rhz = m << 6;
            }
        }
        self.remote_ref = tsval;
        self.local_ref = tsecr;
        self.hz = (rhz >> 6) as u32;
        self.hz
    }
}

#[derive(Clone, Debug)]
pub struct TcpLp {
    p: TcpLpParams,
    reno: Reno,
    /// gamma = 1/2^shift; values wrap at `mask` (u32 for the kernel's clock).
    shift: u32,
    mask: u64,
    pct: u64,
    /// 2^shift x the smoothed delay, 0 before the first sample.
    sowd: u64,
    owd_min: u64,
    owd_max: u64,
    owd_max_rsv: u64,
    remote: RemoteHz,
    /// In the clock's units (ns, or the sender's jiffies).
    inference: u64,
    last_eci: Option<u64>,
    /// ECIs and how many of them fell within the inference time (cwnd = 1 segment).
    pub ecis: u64,
    pub ecis_within_inference: u64,
}

impl TcpLp {
    pub fn new(mss: u64, hystart: Hystart, p: TcpLpParams) -> TcpLp {
        let mask = match p.clock {
            LpClock::Exact => u64::MAX,
            LpClock::Jiffies => u32::MAX as u64,
        };
        TcpLp {
            shift: p.shift().expect("checked gamma"),
            pct: (p.threshold * 100.0).round() as u64,
            p,
            reno: Reno::new(mss, hystart),
            mask,
            sowd: 0,
            owd_min: mask,
            owd_max: 0,
            owd_max_rsv: 0,
            remote: RemoteHz::default(),
            inference: 0,
            last_eci: None,
            ecis: 0,
            ecis_within_inference: 0,
        }
    }

    /// A host's timestamp at simulated time `t`: ns, or its 32-bit jiffies counter.
    fn stamp(&self, t: Time, offset: Time) -> u64 {
        match self.p.clock {
            LpClock::Exact => t + offset,
            LpClock::Jiffies => {
                let boot = 300 * self.p.hz as u64; // INITIAL_JIFFIES = -300 HZ
                let ticks = crate::units::ticks(self.p.uptime.0 + offset + t, self.p.hz);
                ticks.wrapping_sub(boot) & self.mask
            }
        }
    }

    /// One delay sample from the ACK's TSval and TSecr (`tcp_lp_owd_calculator`); None when the
    /// kernel would not take it (no valid remote HZ yet, or a zero delay).
    fn owd(&mut self, tsval: u64, tsecr: u64) -> Option<u64> {
        let d = match self.p.clock {
            LpClock::Exact => tsval.wrapping_sub(tsecr),
            LpClock::Jiffies => {
                let (tsval, tsecr) = (tsval as u32, tsecr as u32);
                let rhz = self.remote.update(self.p.hz, tsval, tsecr);
                if rhz == 0 {
                    return None;
                }
                let local = tsecr.wrapping_mul(LP_RESOL / self.p.hz);
                tsval.wrapping_mul(LP_RESOL / rhz).wrapping_sub(local) as u64
            }
        };
        (d > 0).then_some(d)
    }

    /// `tcp_lp_rtt_sample`: the bounds and the smoothed delay.
    fn sample(&mut self, d: u64) {
        self.owd_min = self.owd_min.min(d);
        if d > self.owd_max {
            if d > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 {
                    d
                } else {
                    self.owd_max_rsv
                };
                self.owd_max_rsv = d;
            } else {
                self.owd_max = d;
            }
        }
        self.sowd = if self.sowd == 0 {
            d << self.shift
        } else {
            self.sowd.wrapping_add(d).wrapping_sub(self.sowd >> self.shift)
        } & self.mask;
    }

    /// The ECI test: not below min + threshold x (max - min), with the kernel's wrapping.
    fn above_threshold(&self) -> bool {
        let range = self.owd_max.wrapping_sub(self.owd_min) & self.mask;
        let thr = self
            .owd_min
            .wrapping_add((range.wrapping_mul(self.pct) & self.mask) / 100);
        self.sowd >> self.shift >= thr & self.mask
    }
}

impl CongestionControl for TcpLp {
    fn name(&self) -> &'static str {
        "tcp_lp"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        let mut within_inference = false;
        // tcp_lp_pkts_acked: on an ACK with an RTT sample, the delays from its timestamps.
        if let (true, Some(_), Some(sent)) = (ack.acked_bytes > 0, ack.rtt, ack.ts_ecr) {
            let offset = self.p.clock_offset.0;
            let (now, tsecr) = (self.stamp(ack.now, 0), self.stamp(sent, 0));
            if let Some(owd) = ack.owd {
                let tsval = self.stamp(sent + owd, offset);
                if let Some(d) = self.owd(tsval, tsecr) {
                    self.sample(d);
                }
            }
            if now > tsecr {
                self.inference = (self.p.inference_rtts * (now - tsecr) as f64) as u64 & self.mask;
            }
            within_inference = self
                .last_eci
                .is_some_and(|t| now.wrapping_sub(t) & self.mask < self.inference);
            if self.above_threshold() {
                if self.p.bounds_reset {
                    self.owd_min = self.sowd >> self.shift;
                    self.owd_max = self.sowd >> (self.shift - 1);
                    self.owd_max_rsv = self.owd_max;
                }
                self.ecis += 1;
                if within_inference {
                    self.ecis_within_inference += 1;
                    st.cwnd = st.mss;
                } else {
                    st.cwnd = (st.cwnd / 2).max(st.mss);
                }
                if self.p.eci_ssthresh {
                    st.ssthresh = st.cwnd;
                }
                self.last_eci = Some(now);
            }
        }
        if !within_inference {
            self.reno.on_ack(ack, st);
        }
    }

    fn on_congestion_event(&mut self, now: Time, kind: CongestionKind, st: &mut CcState) {
        self.reno.on_congestion_event(now, kind, st);
    }

    fn on_rto(&mut self, now: Time, first: bool, st: &mut CcState) {
        self.reno.on_rto(now, first, st);
    }
}

fn build(params: &Value, ctx: &CcContext) -> CcBuild {
    let (p, resolved) = read_params::<TcpLpParams>(params)?;
    Ok((Box::new(TcpLp::new(ctx.mss, ctx.hystart, p)), resolved))
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "tcp_lp",
    summary: "TCP-LP: NewReno that yields on early congestion indications from one-way delays",
    reference: "Kuzmanovic & Knightly, INFOCOM 2003; Linux tcp_lp.c",
    params: &[Group::of::<TcpLpParams>()],
    needs_accecn: false,
    build,
}];

#[cfg(test)]
mod tests {
    use super::super::test_ack;
    use super::*;
    use crate::units::MS;

    const MSS: u64 = 1000;

    #[test]
    fn clock_ranges_draw_uniformly_per_seed_and_stay_put_without_them() {
        // Uniform on [lo, hi]: every draw inside, the mean of n draws within 4 standard errors
        // of (lo + hi) / 2 (sd = (hi - lo) / sqrt 12); the same seed draws the same clocks.
        let p = cc_params_value(serde_json::json!({
            "uptime_range": ["600s", "864000s"], "clock_offset_range": ["1s", "86400s"]
        }));
        let draw = |seed: u64| {
            let d = draw_clocks(&p, &mut Rng::stream(seed, "lpclock/0")).unwrap();
            let d: TcpLpParams = serde_json::from_value(d).unwrap();
            (
                d.uptime.0 as f64 / SEC as f64,
                d.clock_offset.0 as f64 / SEC as f64,
            )
        };
        let n = 4000;
        let draws: Vec<(f64, f64)> = (0..n).map(draw).collect();
        for (k, lo, hi) in [(0, 600.0, 864_000.0), (1, 1.0, 86_400.0)] {
            let v: Vec<f64> = draws.iter().map(|d| if k == 0 { d.0 } else { d.1 }).collect();
            assert!(v.iter().all(|x| (lo..=hi).contains(x)));
            let mean = v.iter().sum::<f64>() / n as f64;
            let se = (hi - lo) / 12f64.sqrt() / (n as f64).sqrt();
            assert!((mean - (lo + hi) / 2.0).abs() < 4.0 * se, "{k}: mean {mean}");
        }
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        // No range: nothing to draw; a fixed uptime stays.
        assert!(draw_clocks(
            &cc_params_value(serde_json::json!({"uptime": "5s"})),
            &mut Rng::stream(1, "lpclock/0")
        )
        .is_none());
        // Bad ranges name the key.
        for bad in [
            serde_json::json!({"uptime_range": ["10s", "5s"]}),
            serde_json::json!({"clock_offset_range": ["0s", "100000000s"]}),
        ] {
            let e = read(&bad).unwrap_err();
            assert!(
                e.starts_with(bad.as_object().unwrap().keys().next().unwrap()),
                "{e}"
            );
        }
    }

    /// The parameters of `v` resolved, as the registry resolves a flow's `cc_params`.
    fn read(v: &serde_json::Value) -> Result<serde_json::Value, String> {
        read_params::<TcpLpParams>(v).map(|(_, r)| r)
    }

    fn cc_params_value(v: serde_json::Value) -> serde_json::Value {
        read(&v).unwrap()
    }

    fn st(cwnd: u64) -> CcState {
        super::super::test_state(cwnd, 5 * MSS, cwnd)
    }

    /// A flow that has seen one-way delays in [10 ms, 110 ms] and smoothed them to 20 ms.
    fn exact() -> TcpLpParams {
        TcpLpParams {
            clock: LpClock::Exact,
            clock_offset: Dur(0),
            ..Default::default()
        }
    }

    fn seasoned(p: TcpLpParams) -> TcpLp {
        let mut lp = TcpLp::new(MSS, Hystart::Off, p);
        lp.owd_min = 10 * MS;
        lp.owd_max = 110 * MS;
        lp.owd_max_rsv = 110 * MS;
        lp.sowd = (20 * MS) << 3;
        lp
    }

    #[test]
    fn the_delays_come_from_the_timestamp_echo_whatever_sample_the_rtt_is() {
        // tcp_lp.c reads rcv_tsecr and rcv_tsval (tcp_lp_owd_calculator) and times its
        // inference from the echo (3 x (now - rcv_tsecr)); the ACK's RTT sample only lets it
        // run. With Linux's samples the RTT is the newest segment's, 30 ms here, where the echo
        // is 40 ms old: the inference is 3 x 40 ms and the one-way delay sample the echo's.
        let mut lp = seasoned(exact());
        let mut s = st(20 * MSS);
        let ack = AckSample {
            rtt: Some(30 * MS),
            ..test_ack(100 * MS, 30 * MS, 40 * MS)
        };
        lp.on_ack(&ack, &mut s);
        assert_eq!(lp.inference, 120 * MS);
        // sowd = 7/8 x 20 + 1/8 x 30 ms.
        assert_eq!(lp.sowd >> 3, 21_250_000);
        // Without an RTT sample the ACK is not sampled at all (tcp_lp_pkts_acked: rtt_us > 0).
        let before = (lp.sowd, lp.inference);
        lp.on_ack(&AckSample { rtt: None, ..ack }, &mut s);
        assert_eq!((lp.sowd, lp.inference), before);
    }

    #[test]
    fn the_threshold_is_fifteen_percent_of_the_observed_range() {
        // The ECI rule (tcp_lp.c, delta 15%): d_min = 10 ms, d_max = 110 ms -> ECI when sowd > 25 ms.
        let mut lp = seasoned(exact());
        let mut s = st(20 * MSS);
        // sowd = 7/8 x 20 + 1/8 x 30 = 21.25 ms, then 7/8 x 21.25 + 1/8 x 50 = 24.84 ms: below.
        lp.on_ack(&test_ack(100 * MS, 30 * MS, 40 * MS), &mut s);
        lp.on_ack(&test_ack(101 * MS, 50 * MS, 40 * MS), &mut s);
        assert_eq!(lp.ecis, 0);
        // 7/8 x 24.84 + 1/8 x 60 = 29.24 ms > 25 ms: an ECI halves the window.
        let w = s.cwnd;
        lp.on_ack(&test_ack(102 * MS, 60 * MS, 40 * MS), &mut s);
        assert_eq!((lp.ecis, s.cwnd), (1, w / 2));
        // Bounds restart from sowd (min = sowd, max = 2 sowd).
        let sowd = lp.sowd >> 3;
        assert!((sowd as f64 - 29.24e6).abs() < 0.01e6, "{sowd}");
        assert_eq!((lp.owd_min, lp.owd_max), (sowd, lp.sowd >> 2));
    }

    #[test]
    fn the_largest_delay_is_held_in_reserve_until_a_second_one_confirms_the_range() {
        let mut lp = seasoned(exact());
        lp.sample(300 * MS); // above the reserve: the reserve becomes the maximum, 300 is held
        assert_eq!((lp.owd_max, lp.owd_max_rsv), (110 * MS, 300 * MS));
        lp.sample(200 * MS); // above the maximum, below the reserve: the new maximum
        assert_eq!((lp.owd_max, lp.owd_max_rsv), (200 * MS, 300 * MS));
        // Linux's first sample: sowd = min = max, not below the threshold: an indication.
        let mut fresh = TcpLp::new(MSS, Hystart::Off, exact());
        let mut s = st(10 * MSS);
        fresh.on_ack(&test_ack(40 * MS, 10 * MS, 40 * MS), &mut s);
        assert_eq!((fresh.ecis, s.cwnd), (1, 5 * MSS));
    }

    #[test]
    fn a_second_indication_within_the_inference_time_leaves_one_segment() {
        let mut lp = seasoned(exact());
        let mut s = st(20 * MSS);
        lp.on_ack(&test_ack(100 * MS, 200 * MS, 40 * MS), &mut s); // sowd 42.5 ms > 25: ECI, halve
        assert_eq!((lp.ecis, s.cwnd), (1, 10 * MSS));
        // Bounds restarted at [42.5, 85] ms. Within 3 x 40 ms: a sample at sowd keeps it below
        // the threshold and the window does not grow; the next ECI leaves one segment.
        lp.on_ack(&test_ack(150 * MS, 42_500_000, 40 * MS), &mut s);
        assert_eq!((lp.ecis, s.cwnd), (1, 10 * MSS));
        lp.on_ack(&test_ack(160 * MS, 1000 * MS, 40 * MS), &mut s);
        assert_eq!((lp.ecis_within_inference, s.cwnd), (1, MSS));
        // More than 120 ms after that ECI, without another: Reno grows again (slow start
        // below ssthresh: Linux leaves ssthresh alone).
        lp.owd_min = 0;
        lp.owd_max = 100 * SEC;
        lp.on_ack(&test_ack(281 * MS, 10 * MS, 40 * MS), &mut s);
        assert_eq!(s.cwnd, 2 * MSS);
        // With `eci_ssthresh` the reduced window is the new ssthresh: it grows by 1/cwnd instead.
        let mut lp = seasoned(TcpLpParams {
            eci_ssthresh: true,
            ..exact()
        });
        let mut s = st(20 * MSS);
        lp.on_ack(&test_ack(100 * MS, 200 * MS, 40 * MS), &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (10 * MSS, 10 * MSS));
    }

    #[test]
    fn a_clock_offset_puts_the_next_indication_out_of_reach_after_a_bounds_reset() {
        // The reset range [sowd, 2 sowd] includes the offset: with 100 s between the clocks the
        // next ECI needs sowd 15% above 100.025 s, i.e. 15 s of queue. Without the reset the
        // offset cancels in sowd - min and max - min.
        for reset in [true, false] {
            let p = TcpLpParams {
                clock_offset: Dur(100 * SEC),
                bounds_reset: reset,
                ..exact()
            };
            let mut lp = TcpLp::new(MSS, Hystart::Off, p);
            let mut s = st(20 * MSS);
            // Five seconds of a 25 ms base delay with one 100 ms spike, then 1 s of queue.
            let mut now = 0;
            for q in [0, 0, 0, 100].into_iter().chain([0; 21]) {
                now += 200 * MS;
                lp.on_ack(&test_ack(now, (25 + q) * MS, 50 * MS), &mut s);
            }
            let before = lp.ecis;
            for _ in 0..100 {
                now += 10 * MS;
                lp.on_ack(&test_ack(now, 1025 * MS, 50 * MS), &mut s);
            }
            assert_eq!(
                lp.ecis > before,
                !reset,
                "bounds_reset {reset}: {before} -> {}",
                lp.ecis
            );
        }
    }

    #[test]
    fn the_remote_hz_estimate_follows_the_kernels_integer_arithmetic() {
        // tcp_lp_remote_hz_estimator by hand, local HZ 250.
        let mut r = RemoteHz::default();
        assert_eq!(r.update(250, 1000, 5000), 0); // no references yet
        assert_eq!(r.update(250, 1000, 5002), 0); // TSval unchanged: no estimate
                                                  // 250 x (1002 - 1000) / (5004 - 5002) = 250, the first estimate taken whole.
        assert_eq!(r.update(250, 1002, 5004), 250);
        // 250 x 1 / 3 = 83 (truncated); 16000 + 83 - 250 = 15833, >> 6 = 247.
        assert_eq!(r.update(250, 1003, 5007), 247);
        // A TSecr that went backwards wraps the u32 divisor: 250 x 1 / (2^32 - 1) = 0.
        // 15833 + 0 - 247 = 15586, >> 6 = 243.
        assert_eq!(r.update(250, 1004, 5006), 243);
    }

    #[test]
    fn the_kernel_delay_is_a_wrapping_u32_in_ms_and_truncates_1000_over_the_remote_hz() {
        let p = TcpLpParams {
            clock: LpClock::Jiffies,
            ..Default::default()
        };
        let mut lp = TcpLp::new(MSS, Hystart::Off, p);
        lp.remote.hz = 250;
        lp.remote.remote_ref = 1000;
        lp.remote.local_ref = 5000;
        // Both clocks at 250 HZ, one tick each: the estimate stays 250, 1000 / 250 = 4:
        // 4 x 1001 - 4 x 5001 = -16000, which the u32 arithmetic makes 2^32 - 16000 (the
        // module's `if (owd < 0)` never fires).
        assert_eq!(lp.owd(1001, 5001), Some((1u64 << 32) - 16000));
        // An estimate above 250 truncates 1000 / HZ to 3: from 260 the update gives
        // (16640 + 250 - 260) >> 6 = 259, and the remote clock then counts 3 ms a tick:
        // 3 x 1001 - 4 x 5001 = -17001 -> 2^32 - 17001.
        lp.remote.hz = 260;
        lp.remote.remote_ref = 1000;
        lp.remote.local_ref = 5000;
        assert_eq!(lp.owd(1001, 5001), Some((1u64 << 32) - 17001));
        assert_eq!(lp.remote.hz, 259);
    }
}
