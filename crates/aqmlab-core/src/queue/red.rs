//! RED (Floyd & Jacobson 1993) with the ns-2 options, Adaptive RED (Floyd, Gummadi & Shenker
//! 2001) and Harsh RED (Järvinen et al. 2012): ONE implementation, three registry entries that
//! differ only in presets (docs/disciplines.md 9-11). CHOKe reuses [`RedParams`]/[`RedVars`].
//!
//! * Queue size is counted in packets, or with `bytes = true` in bytes / mean_pktsize (ns-2
//!   queue_in_bytes_), and the drop probability is then scaled by size / mean_pktsize after
//!   uniformisation (ns-2 bytes_). `bytes = "linux"` counts bytes without the scaling, as Linux's
//!   sch_red does (red_enqueue averages the child's backlog in bytes, red_calc_qavg; the drop
//!   test red_mark_probability compares the count-scaled probability with a random number and
//!   never looks at the packet's size). Thresholds are in (mean-size) packets.
//! * Average: avg = (1 - w_q) avg + w_q q on each arrival (q before the arrival). After an idle
//!   period T, avg *= (1 - w_q)^(C T) where C = link rate in mean-size packets/s (paper form, real
//!   exponent; ns-2 floors it and adds one ordinary update).
//! * Band [min_th, max_th): p_b = max_p (avg - min_th) / (max_th - min_th); gentle adds the
//!   [max_th, 2 max_th) ramp from max_p to 1. `count` (packets since the last drop, -1 below
//!   min_th) uniformises: wait off (paper) p_a = p_b / (1 - count p_b); wait on (ns-2) p_a = 0 while
//!   count p_b < 1, then p_b / (2 - count p_b). avg above the band (or 2 max_th gentle): forced drop.
//! * `count_bytes` (ns-2 red.cc modify_p with bytes_): the uniformising count is the bytes
//!   admitted since the last drop divided (integer division) by mean_pktsize instead of the
//!   packets, so with 1500-byte packets and mean_pktsize 500 each packet counts three.
//! * `ns2_quirks`: no drop (early or forced) while the instantaneous queue holds <= 1 packet,
//!   and the first arrival after avg crosses min_th is admitted with count = 1 (ns-2 red.cc
//!   REDQueue::enque). Forced drops are their own drop reason (`forced`).
//! * Idle periods start when the queue empties and whenever the link finds it empty while not
//!   idle, e.g. after a dropped arrival (ns-2 REDQueue::deque; Linux red_dequeue).
//! * ECN: ECT arrivals are CE-marked instead of early (probabilistic) drops; forced drops and
//!   buffer overflow always drop (ns-2 setbit_).
//! * Automatic configuration (ns-2): C = rate / (8 mean_pktsize); min_th = max(5, target_delay C / 2)
//!   with target_delay 5 ms; max_th = 3 min_th; w_q "auto" = 1 - exp(-1/C), "auto-rtt" (ns-2
//!   default q_weight_ = -1) = 1 - exp(-1/(10 RTT C)) with RTT = max(0.1 s, 3 (link_delay + 1/C)),
//!   "auto10" = 1 - exp(-10/C). mean_pktsize defaults to the link MTU (1500 B; ns-2's default is
//!   500 B — a deviation chosen because our packets are 1500 B).
//! * ARED: every 0.5 s, if avg > min + 0.6 (max - min) and max_p <= 0.5: max_p += min(0.01,
//!   max_p / 4); if avg < min + 0.4 (max - min) and max_p >= 0.01: max_p *= 0.9. `adapt_form`
//!   "linux" runs it on a timer (also when idle, with the idle-decayed avg); "ns2" on arrivals when
//!   now > last + interval (strict bounds max_p < 0.5 / max_p > 0.01). Defaults: gentle on,
//!   w_q auto, thresholds from target_delay, initial max_p 0.1 (ns-2 1/linterm_).
//! * HRED: min_th 3, max_th 40, w_q 0.02 (`aggressive = true`: 0.04), max_p 0.65, gentle on.
//!   (The values transients2014 used; not checked against the AINA 2012 paper's own text.)

use super::util::{merge, resolve_limit, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, Dur, Limit, LimitSpec, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug)]
pub struct RedParams {
    pub min_th: f64,
    pub max_th: f64,
    pub w_q: f64,
    pub max_p: f64,
    pub gentle: bool,
    pub wait: bool,
    pub bytes: ByteMode,
    pub mean_pktsize: u32,
    pub ecn: bool,
    pub idle_decay: bool,
    pub ns2_quirks: bool,
    pub count_bytes: bool,
    /// The buffer refuses an arrival once the backlog before it has reached the limit (ns-2
    /// red.cc enque: `qlen >= qlim`), so it can pass the limit by one packet less a byte.
    pub limit_before_arrival: bool,
    /// Link capacity in mean-size packets per second.
    pub c_pps: f64,
}

/// How RED counts its queue: packets, or bytes in mean-size packets with the drop probability
/// scaled by the packet's size (ns-2) or not (Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ByteMode {
    #[default]
    Packets,
    Ns2,
    Linux,
}

impl ByteMode {
    /// Whether the queue is counted in bytes.
    pub fn counts_bytes(self) -> bool {
        self != ByteMode::Packets
    }
}

impl Serialize for ByteMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ByteMode::Packets => s.serialize_bool(false),
            ByteMode::Ns2 => s.serialize_bool(true),
            ByteMode::Linux => s.serialize_str("linux"),
        }
    }
}

impl<'de> Deserialize<'de> for ByteMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(false) => Ok(ByteMode::Packets),
            Value::Bool(true) => Ok(ByteMode::Ns2),
            Value::String(s) if s == "linux" => Ok(ByteMode::Linux),
            v => Err(serde::de::Error::custom(format!(
                "{v} is not allowed; allowed: false (packets), true (bytes, the drop probability \
                 scaled by size: ns-2) or \"linux\" (bytes, unscaled: sch_red)"
            ))),
        }
    }
}

impl JsonSchema for ByteMode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteMode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"anyOf": [{"type": "boolean"}, {"const": "linux"}]})
    }
}

/// What RED decided for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Admit,
    /// Probabilistic drop (mark if ECN allows).
    Early,
    /// avg above the drop-everything threshold.
    Forced,
}

/// What RED did to arrivals; kept alike by red/ared/hred and choke.
#[derive(Clone, Copy, Debug, Default)]
pub struct RedCounts {
    pub early: u64,
    pub forced: u64,
    pub marks: u64,
}

impl RedCounts {
    /// Carries out `decision` on arrival `id`: an early decision CE-marks an ECT packet when ECN
    /// is on and drops it otherwise; a forced decision always drops. Returns whether `id` stays.
    pub fn apply(&mut self, decision: Decision, ecn: bool, id: PktId, ctx: &mut QueueCtx) -> bool {
        match decision {
            Decision::Admit => true,
            Decision::Early if ecn && ctx.mark(id) => {
                self.marks += 1;
                true
            }
            Decision::Early => {
                self.early += 1;
                ctx.drop_packet(id, DropReason::Early);
                false
            }
            Decision::Forced => {
                self.forced += 1;
                ctx.drop_packet(id, DropReason::Forced);
                false
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct RedVars {
    pub avg: f64,
    pub count: i64,
    /// Bytes of the arrivals counted in `count` (ns-2 count_bytes).
    pub count_bytes: u64,
    pub idle_since: Option<Time>,
    pub max_p: f64,
    old: bool,
}

impl RedVars {
    pub fn new(p: &RedParams) -> RedVars {
        RedVars {
            avg: 0.0,
            count: -1,
            count_bytes: 0,
            idle_since: Some(0),
            max_p: p.max_p,
            old: false,
        }
    }

    /// avg after an idle period ending at `now` (no state change).
    pub fn decayed_avg(&self, p: &RedParams, now: Time) -> f64 {
        match self.idle_since {
            Some(t0) if p.idle_decay => {
                let m = p.c_pps * now.saturating_sub(t0) as f64 / SEC as f64;
                self.avg * (1.0 - p.w_q).powf(m)
            }
            _ => self.avg,
        }
    }

    /// The EWMA update on an arrival; `q` = queue size before the arrival (mean-size packets).
    pub fn update_avg(&mut self, p: &RedParams, q: f64, now: Time) {
        if self.idle_since.is_some() && q == 0.0 {
            self.avg = self.decayed_avg(p, now);
        } else {
            self.avg = (1.0 - p.w_q) * self.avg + p.w_q * q;
        }
        self.idle_since = None;
    }

    /// The queue became empty at `now`.
    pub fn set_idle(&mut self, now: Time) {
        self.idle_since = Some(now);
    }

    /// The base probability p_b at `avg` (None above the forced-drop threshold).
    pub fn p_b(&self, p: &RedParams, avg: f64) -> Option<f64> {
        if avg < p.max_th {
            Some(self.max_p * (avg - p.min_th) / (p.max_th - p.min_th))
        } else if p.gentle && avg < 2.0 * p.max_th {
            Some(self.max_p + (1.0 - self.max_p) * (avg - p.max_th) / p.max_th)
        } else {
            None
        }
    }

    /// The arrival decision (Floyd & Jacobson 1993 section 4; ns-2 red.cc enque) for a packet of `size` bytes when the
    /// instantaneous queue holds `q_pkts` packets.
    pub fn decide(&mut self, p: &RedParams, size: u32, q_pkts: u64, rng: &mut Rng) -> Decision {
        // ns-2 red.cc REDQueue::enque tests `qavg >= th_min && qlen > 1` before any drop
        // decision, forced drops included: an arrival finding at most one packet is admitted.
        if self.avg < p.min_th || (p.ns2_quirks && q_pkts <= 1) {
            self.count = -1;
            self.count_bytes = 0;
            self.old = false;
            return Decision::Admit;
        }
        let Some(pb) = self.p_b(p, self.avg) else {
            self.count = 0;
            self.count_bytes = 0;
            return Decision::Forced;
        };
        self.count += 1;
        self.count_bytes += size as u64;
        if p.ns2_quirks && !self.old {
            self.old = true;
            self.count = 1;
            self.count_bytes = size as u64;
            return Decision::Admit;
        }
        let count = if p.count_bytes {
            (self.count_bytes / p.mean_pktsize as u64) as f64
        } else {
            self.count as f64
        };
        let cp = count * pb;
        let mut pa = if p.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                pb / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            pb / (1.0 - cp)
        } else {
            1.0
        };
        if p.bytes == ByteMode::Ns2 {
            pa *= size as f64 / p.mean_pktsize as f64;
        }
        if rng.bernoulli(pa) {
            self.count = 0;
            self.count_bytes = 0;
            Decision::Early
        } else {
            Decision::Admit
        }
    }

    /// One Adaptive RED step with average `avg`; `strict` = ns-2 bounds.
    pub fn adapt(&mut self, p: &RedParams, avg: f64, strict: bool) {
        let d = p.max_th - p.min_th;
        let (lo, hi) = (p.min_th + 0.4 * d, p.min_th + 0.6 * d);
        let can_up = if strict {
            self.max_p < 0.5
        } else {
            self.max_p <= 0.5
        };
        let can_down = if strict {
            self.max_p > 0.01
        } else {
            self.max_p >= 0.01
        };
        if avg > hi && can_up {
            self.max_p += (self.max_p / 4.0).min(0.01);
        } else if avg < lo && can_down {
            self.max_p *= 0.9;
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AdaptForm {
    Linux,
    Ns2,
}

struct Adaptive {
    form: AdaptForm,
    interval: Time,
    /// Linux: next timer; ns-2: last adaptation time.
    at: Time,
}

pub struct Red {
    queue: PacketQueue,
    limit: Limit,
    params: RedParams,
    vars: RedVars,
    rng: Rng,
    adaptive: Option<Adaptive>,
    counts: RedCounts,
}

impl Red {
    fn q_now(&self) -> f64 {
        if self.params.bytes.counts_bytes() {
            self.queue.bytes() as f64 / self.params.mean_pktsize as f64
        } else {
            self.queue.len() as f64
        }
    }
}

impl Qdisc for Red {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        let size = ctx.size(id);
        let q = self.q_now();
        self.vars.update_avg(&self.params, q, now);
        if let Some(a) = &mut self.adaptive {
            if a.form == AdaptForm::Ns2 && now > a.at + a.interval {
                self.vars.adapt(&self.params, self.vars.avg, true);
                a.at = now;
            }
        }
        let decision = self
            .vars
            .decide(&self.params, size, self.queue.len() as u64, &mut self.rng);
        if !self.counts.apply(decision, self.params.ecn, id, ctx) {
            return;
        }
        // ns-2 compares the backlog before the arrival (one more byte would pass the limit).
        let need = if self.params.limit_before_arrival {
            1
        } else {
            size as u64
        };
        if self.queue.exceeds(self.limit, need) {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        self.queue.push_back(id, size);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        // An idle period starts when the queue empties, and again whenever the link finds it
        // empty while not idle: after an arrival that was dropped (ns-2 red.cc REDQueue::deque
        // sets idle_ on an empty dequeue; Linux red_dequeue calls red_start_of_idle_period).
        // Without the second rule a dropped arrival ends the idle period for good, and with avg
        // above the forced-drop threshold every later arrival is dropped while avg decays only
        // by (1 - w_q) per arrival: the link locks up.
        let Some(id) = self.queue.pop_front(ctx) else {
            if self.vars.idle_since.is_none() {
                self.vars.set_idle(now);
            }
            return None;
        };
        if self.queue.is_empty() {
            self.vars.set_idle(now);
        }
        Some(id)
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn backlog_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    fn next_timer(&self) -> Option<Time> {
        match &self.adaptive {
            Some(a) if a.form == AdaptForm::Linux => Some(a.at),
            _ => None,
        }
    }

    fn on_timer(&mut self, _ctx: &mut QueueCtx, now: Time) {
        if let Some(a) = &mut self.adaptive {
            while a.form == AdaptForm::Linux && a.at <= now {
                let avg = self.vars.decayed_avg(&self.params, now);
                self.vars.adapt(&self.params, avg, false);
                a.at += a.interval;
            }
        }
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("avg", self.vars.avg),
            ("max_p", self.vars.max_p),
            ("count", self.vars.count as f64),
            ("early_drops", self.counts.early as f64),
            ("forced_drops", self.counts.forced as f64),
            ("ecn_marks", self.counts.marks as f64),
        ]
    }
}

/// w_q: a number or an ns-2 automatic mode.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum WQ {
    Num(f64),
    Mode(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Red,
    Ared,
    Hred,
    Choke,
}

/// Resolved RED parameters and the limit.
pub type Resolved = (RedParams, Limit);

/// The keys of red, ared, hred and choke. Their defaults follow the preset, the link rate and
/// each other, so they are resolved (and written back) by [`RedConfig::resolve`].
#[derive(Deserialize, Serialize, Default, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// buffer ("1000p" or bytes); default the link's limit, else 1000p
    pub limit: Option<LimitSpec>,
    /// lower threshold in (mean-size) packets; default max(5, target_delay x C / 2) (hred 3)
    pub min_th: Option<f64>,
    /// upper threshold; default 3 x min_th (hred 40)
    pub max_th: Option<f64>,
    /// probability at max_th; default 0.1 (ns-2), hred 0.65, choke 0.02; ared: initial value
    pub max_p: Option<f64>,
    /// EWMA weight: a number, or auto (1-exp(-1/C)), auto-rtt (ns-2 default), auto10
    pub w_q: Option<WQ>,
    /// linear ramp from max_p to 1 between max_th and 2 max_th; default on (choke off)
    pub gentle: Option<bool>,
    /// ns-2 wait_: inter-drop gap uniform on [1/p_b, 2/p_b]; default on (choke off)
    pub wait: Option<bool>,
    /// queue in bytes / mean_pktsize: true with the drop probability scaled by size (ns-2
    /// byte mode), "linux" unscaled (sch_red); default false (packets)
    pub bytes: Option<ByteMode>,
    /// CE-mark ECT packets instead of early drops (forced drops still drop)
    pub ecn: Option<bool>,
    /// decay avg by (1-w_q)^(C x idle time) after idle periods; default on
    pub idle_decay: Option<bool>,
    /// no early drop with <= 1 queued packet; admit the first packet above min_th
    pub ns2_quirks: Option<bool>,
    /// count bytes since the last drop / mean_pktsize, not packets (ns-2 bytes_); default off
    pub count_bytes: Option<bool>,
    /// refuse an arrival once the backlog before it reaches the limit (ns-2 red.cc enque's
    /// `qlen >= qlim`: the queue can pass the limit by one packet); default off (Linux: refuse an
    /// arrival that would pass it)
    pub limit_before_arrival: Option<bool>,
    /// mean packet size for C and byte mode; default the link MTU (1500B)
    pub mean_pktsize: Option<Size>,
    /// target queueing delay for the automatic min_th; default 5ms
    pub target_delay: Option<Dur>,
    /// one-way link delay for w_q = auto-rtt; default 0ms
    pub link_delay: Option<Dur>,
    /// least automatic min_th: "5p" (ns-2, default) or bytes, e.g. one MTU "1514B" (Linux,
    /// goodbadwifi2015)
    pub min_th_floor: Option<LimitSpec>,
}

impl Params<LinkInfo> for RedConfig {}

/// ARED's adaptation of max_p.
#[derive(Deserialize, Serialize, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AredConfig {
    /// linux (timer every adapt_interval, default) or ns2 (on arrivals)
    pub adapt_form: AdaptForm,
    /// max_p adaptation period; default 500ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub adapt_interval: Time,
}

impl Params<LinkInfo> for AredConfig {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_time("adapt_interval", self.adapt_interval, 1, 100 * SEC)
    }
}

/// HRED's one option.
#[derive(Deserialize, Serialize, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HredConfig {
    /// w_q 0.04 instead of 0.02
    pub aggressive: bool,
}

impl Params<LinkInfo> for HredConfig {}

/// The largest threshold (packets, or mean-size packets in byte mode) RED accepts.
const MAX_TH: f64 = 1e9;

impl RedConfig {
    /// Resolves the table for `preset` (`aggressive`: HRED's option); returns the parameters and
    /// the limit. Every value is written back.
    pub fn resolve(&mut self, preset: Preset, link: &LinkInfo, aggressive: bool) -> Result<Resolved, String> {
        let limit = resolve_limit(self.limit, link)?;
        let mean = self.mean_pktsize.map_or(link.mtu as u64, |s| s.0);
        check_range("mean_pktsize", mean, 1, 65_536)?;
        let c = link.rate_bps as f64 / (8.0 * mean as f64);
        if c <= 0.0 {
            return Err("the link rate must be positive for RED".into());
        }
        let target_delay = self.target_delay.map_or(5 * MS, |d| d.0);
        let link_delay = self.link_delay.map_or(0, |d| d.0);
        let floor = self.min_th_floor.map_or(Limit::Packets(5), |l| l.0);
        let floor_pkts = match floor {
            Limit::Packets(n) => n as f64,
            Limit::Bytes(b) => b as f64 / mean as f64,
        };
        let auto_min = (target_delay as f64 / SEC as f64 * c / 2.0).max(floor_pkts);
        let (d_min, d_max, d_p, d_wq, d_gentle, d_wait) = match preset {
            Preset::Red => (auto_min, None, 0.1, WQ::Mode("auto-rtt".into()), true, true),
            Preset::Ared => (auto_min, None, 0.1, WQ::Mode("auto".into()), true, true),
            Preset::Hred => (
                3.0,
                Some(40.0),
                0.65,
                WQ::Num(if aggressive { 0.04 } else { 0.02 }),
                true,
                true,
            ),
            Preset::Choke => (auto_min, None, 0.02, WQ::Num(0.002), false, false),
        };
        let min_th = self.min_th.unwrap_or(d_min);
        let max_th = self.max_th.or(d_max).unwrap_or(3.0 * min_th);
        let max_p = self.max_p.unwrap_or(d_p);
        let w_q = match self.w_q.clone().unwrap_or(d_wq) {
            WQ::Num(w) => w,
            WQ::Mode(m) => match m.as_str() {
                "auto" => 1.0 - (-1.0 / c).exp(),
                "auto10" => 1.0 - (-10.0 / c).exp(),
                "auto-rtt" => {
                    let rtt = (3.0 * (link_delay as f64 / SEC as f64 + 1.0 / c)).max(0.1);
                    1.0 - (-1.0 / (10.0 * rtt * c)).exp()
                }
                _ => {
                    return Err(format!(
                        "w_q: {m:?} is not allowed; a number in (0, 1] or auto, auto-rtt, auto10"
                    ))
                }
            },
        };
        if self.min_th.is_none() && min_th > MAX_TH {
            // the automatic min_th follows the link rate: name the key that made it too large
            let max_rate = MAX_TH * 2.0 * 8.0 * mean as f64 / (target_delay as f64 / SEC as f64);
            let (key, what) = if self.target_delay.is_some() {
                ("target_delay".to_string(), crate::units::fmt_time(target_delay))
            } else {
                (
                    format!("{}rate", super::LINK_KEY),
                    crate::units::fmt_rate(link.rate_bps),
                )
            };
            return Err(format!(
                "{key}: {what} is not allowed here (RED's automatic min_th, target_delay/2 at the \
                 link rate, would be {min_th:.3e} packets, above {MAX_TH:e}); allowed: a rate up to {} \
                 with target_delay {}, or an explicit min_th",
                crate::units::fmt_rate(max_rate as u64),
                crate::units::fmt_time(target_delay),
            ));
        }
        check_range("min_th", min_th, 0.0, MAX_TH)?;
        check_range("max_th", max_th, min_th + 1e-9, MAX_TH)?;
        check_range("max_p", max_p, 0.0, 1.0)?;
        check_range("w_q", w_q, 1e-12, 1.0)?;
        let p = RedParams {
            min_th,
            max_th,
            w_q,
            max_p,
            gentle: self.gentle.unwrap_or(d_gentle),
            wait: self.wait.unwrap_or(d_wait),
            bytes: self.bytes.unwrap_or_default(),
            mean_pktsize: mean as u32,
            ecn: self.ecn.unwrap_or(false),
            idle_decay: self.idle_decay.unwrap_or(true),
            ns2_quirks: self.ns2_quirks.unwrap_or(false),
            count_bytes: self.count_bytes.unwrap_or(false),
            limit_before_arrival: self.limit_before_arrival.unwrap_or(false),
            c_pps: c,
        };
        self.limit = Some(LimitSpec(limit));
        self.min_th = Some(min_th);
        self.max_th = Some(max_th);
        self.max_p = Some(max_p);
        self.w_q = Some(WQ::Num(w_q));
        self.gentle = Some(p.gentle);
        self.wait = Some(p.wait);
        self.bytes = Some(p.bytes);
        self.ecn = Some(p.ecn);
        self.idle_decay = Some(p.idle_decay);
        self.ns2_quirks = Some(p.ns2_quirks);
        self.count_bytes = Some(p.count_bytes);
        self.limit_before_arrival = Some(p.limit_before_arrival);
        self.mean_pktsize = Some(Size(mean));
        self.target_delay = Some(Dur(target_delay));
        self.min_th_floor = Some(LimitSpec(floor));
        self.link_delay = Some(Dur(link_delay));
        Ok((p, limit))
    }
}

fn build(params: &Value, link: &LinkInfo, rng: Rng, preset: Preset) -> Built<Red> {
    let mut cfg = read(params, RedConfig::default(), link)?;
    let hred = read(params, HredConfig { aggressive: false }, link)?;
    let (p, limit) = cfg.resolve(preset, link, hred.aggressive)?;
    let mut resolved = written(&cfg);
    let adaptive = if preset == Preset::Ared {
        let defaults = AredConfig {
            adapt_form: AdaptForm::Linux,
            adapt_interval: 500 * MS,
        };
        let a = read(params, defaults, link)?;
        resolved = merge(resolved, written(&a));
        Some(Adaptive {
            form: a.adapt_form,
            interval: a.adapt_interval,
            at: if a.adapt_form == AdaptForm::Linux {
                a.adapt_interval
            } else {
                0
            },
        })
    } else {
        None
    };
    if preset == Preset::Hred {
        resolved = merge(resolved, written(&hred));
    }
    let q = Red {
        queue: PacketQueue::default(),
        limit,
        vars: RedVars::new(&p),
        params: p,
        rng,
        adaptive,
        counts: RedCounts::default(),
    };
    Ok((q, resolved))
}

pub static INFO: [QdiscInfo<Red>; 3] = [
    QdiscInfo {
        name: "red",
        summary:
            "Random Early Detection with ns-2 options (gentle, wait, byte mode, automatic configuration)",
        reference: "Floyd & Jacobson 1993; ns-2 red.cc",
        params: &[Group::of::<RedConfig>()],
        build: |p, l, r| build(p, l, r, Preset::Red),
    },
    QdiscInfo {
        name: "ared",
        summary: "Adaptive RED: max_p tuned every 0.5 s to keep avg in the middle of [min_th, max_th]",
        reference: "Floyd, Gummadi & Shenker 2001; Linux red adaptive; ns-2",
        params: &[Group::of::<RedConfig>(), Group::of::<AredConfig>()],
        build: |p, l, r| build(p, l, r, Preset::Ared),
    },
    QdiscInfo {
        name: "hred",
        summary: "Harsh RED: RED with small min_th, large max_p and fast w_q for edge bottlenecks",
        reference: "Järvinen, Ding, Nyrhinen & Kojo, AINA 2012",
        params: &[Group::of::<RedConfig>(), Group::of::<HredConfig>()],
        build: |p, l, r| build(p, l, r, Preset::Hred),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use serde_json::json;

    fn params() -> RedParams {
        RedParams {
            min_th: 5.0,
            max_th: 15.0,
            w_q: 0.002,
            max_p: 0.1,
            gentle: true,
            wait: false,
            bytes: ByteMode::Packets,
            mean_pktsize: 1500,
            ecn: false,
            idle_decay: true,
            ns2_quirks: false,
            count_bytes: false,
            limit_before_arrival: false,
            c_pps: 10_000_000.0 / 12_000.0,
        }
    }

    /// A discipline of `preset` built from `params` on [`link`].
    fn built(params: Value, preset: Preset) -> Red {
        match build(&params, &link(), Rng::from_seed(1), preset) {
            Ok((q, _)) => q,
            _ => panic!("a RED discipline"),
        }
    }

    fn link() -> LinkInfo {
        LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        }
    }

    #[test]
    fn avg_converges_geometrically() {
        let p = params();
        let mut v = RedVars::new(&p);
        v.update_avg(&p, 0.0, 0); // leaves the initial idle state
        for n in 1..=2000u32 {
            v.update_avg(&p, 10.0, 1);
            let expect = 10.0 * (1.0 - (1.0 - p.w_q).powi(n as i32));
            assert!((v.avg - expect).abs() < 1e-9);
            if n == 500 {
                assert!((v.avg / 10.0 - 0.632).abs() < 0.01);
            }
        }
    }

    /// Mean, min and max gap (in packets) between drops at a constant avg with p_b = 0.05.
    fn gaps(wait: bool) -> (f64, u64, u64) {
        let mut p = params();
        p.wait = wait;
        p.w_q = 1e-12;
        let mut v = RedVars::new(&p);
        v.avg = 10.0; // p_b = 0.1 * 5 / 10 = 0.05
        v.idle_since = None;
        let mut rng = Rng::from_seed(11);
        let mut last = None;
        let (mut sum, mut n, mut lo, mut hi) = (0u64, 0u64, u64::MAX, 0u64);
        for i in 0..400_000u64 {
            if v.decide(&p, 1500, 10, &mut rng) == Decision::Early {
                if let Some(l) = last {
                    sum += i - l;
                    n += 1;
                    lo = lo.min(i - l);
                    hi = hi.max(i - l);
                }
                last = Some(i);
            }
        }
        (sum as f64 / n as f64, lo, hi)
    }

    #[test]
    fn inter_drop_spacing_wait_off_and_on() {
        // p_b = 0.05: gaps uniform on [1, 1/p_b] (mean 1/(2 p_b) = 10) without wait, on
        // [1/p_b, 2/p_b] (mean 1.5 / p_b = 30) with wait.
        let (off, lo, hi) = gaps(false);
        assert!((off / 10.0 - 1.0).abs() < 0.03, "{off}");
        assert!(lo >= 1 && hi <= 20, "{lo} {hi}");
        let (on, lo, hi) = gaps(true);
        assert!((on / 30.0 - 1.0).abs() < 0.03, "{on}");
        assert!(lo >= 20 && hi <= 40, "{lo} {hi}");
    }

    #[test]
    fn gentle_ramp_and_forced_region() {
        let p = params();
        let v = RedVars::new(&p);
        let pb = v.p_b(&p, 1.5 * p.max_th).unwrap();
        assert!((pb - (1.0 + p.max_p) / 2.0).abs() < 1e-12);
        assert!(v.p_b(&p, 2.0 * p.max_th).is_none());
        let mut ng = p;
        ng.gentle = false;
        assert!(v.p_b(&ng, p.max_th).is_none());
        let mut v = RedVars::new(&p);
        v.avg = 31.0;
        assert_eq!(v.decide(&p, 1500, 40, &mut Rng::from_seed(1)), Decision::Forced);
    }

    #[test]
    fn idle_decay() {
        let p = params();
        let mut v = RedVars::new(&p);
        v.avg = 10.0;
        v.set_idle(SEC);
        v.update_avg(&p, 0.0, SEC + 100 * MS);
        let expect = 10.0 * (1.0 - p.w_q).powf(p.c_pps * 0.1);
        assert!((v.avg - expect).abs() < 1e-9);
    }

    #[test]
    fn auto_configuration() {
        // 10 Mb/s, 1500 B: C = 833.3 pkt/s; min_th = max(5, 0.005 * 833.3 / 2 = 2.08) = 5.
        let (_, r) = build(&json!({}), &link(), Rng::from_seed(1), Preset::Red).unwrap();
        assert_eq!(r["min_th"], 5.0);
        assert_eq!(r["max_th"], 15.0);
        let c: f64 = 10_000_000.0 / 12_000.0;
        let wq = 1.0 - (-1.0 / (10.0 * 0.1 * c)).exp();
        assert!((r["w_q"].as_f64().unwrap() - wq).abs() < 1e-15);
        // 100 Mb/s: C = 8333.3; min_th = 20.83, max_th = 62.5.
        let l = LinkInfo {
            rate_bps: 100_000_000,
            ..link()
        };
        let (_, r) = build(&json!({}), &l, Rng::from_seed(1), Preset::Ared).unwrap();
        assert!((r["min_th"].as_f64().unwrap() - 0.005 * 100e6 / 12_000.0 / 2.0).abs() < 1e-9);
        assert!((r["w_q"].as_f64().unwrap() - (1.0 - (-12_000.0 / 100e6f64).exp())).abs() < 1e-15);
        assert_eq!(r["adapt_form"], "linux");
        // only hred declares `aggressive`: the registry's key check rejects it for red
        let e = INFO[0].checked(&json!({"aggressive": true}), &link(), Rng::from_seed(1));
        assert!(e.is_err_and(|e| e.starts_with("aggressive: unknown parameter of red")));
        assert!(build(&json!({"w_q": "bogus"}), &link(), Rng::from_seed(1), Preset::Red).is_err());
        assert!(build(
            &json!({"min_th": 10, "max_th": 5}),
            &link(),
            Rng::from_seed(1),
            Preset::Red
        )
        .is_err());
    }

    #[test]
    fn ared_thresholds_from_target_delay_with_an_mtu_floor() {
        // goodbadwifi2015 (docs/study-setups.md 4): ARED target delay 20 ms; min threshold = half the
        // target delay at link rate, at least one MTU: 1514 B at 1 Mb/s, 12500 B at 10 Mb/s,
        // 125000 B at 100 Mb/s; max = 3 x min. Thresholds are in mean-size packets: x 1500 B.
        for (rate, min_bytes) in [
            (1_000_000, 1514.0),
            (10_000_000, 12_500.0),
            (100_000_000, 125_000.0),
        ] {
            let l = LinkInfo {
                rate_bps: rate,
                ..link()
            };
            let (_, r) = build(
                &json!({"target_delay": "20ms", "min_th_floor": "1514B", "bytes": true}),
                &l,
                Rng::from_seed(1),
                Preset::Ared,
            )
            .unwrap();
            let min = r["min_th"].as_f64().unwrap() * 1500.0;
            let max = r["max_th"].as_f64().unwrap() * 1500.0;
            assert!((min - min_bytes).abs() < 1e-6, "{rate}: min {min} B");
            assert!((max - 3.0 * min_bytes).abs() < 1e-6, "{rate}: max {max} B");
        }
        // The ns-2 floor of 5 packets stays the default: 7500 B at 1 Mb/s.
        let l = LinkInfo {
            rate_bps: 1_000_000,
            ..link()
        };
        let (_, r) = build(
            &json!({"target_delay": "20ms"}),
            &l,
            Rng::from_seed(1),
            Preset::Ared,
        )
        .unwrap();
        assert_eq!(r["min_th"], 5.0);
        assert_eq!(r["min_th_floor"], "5p");
    }

    #[test]
    fn hred_presets() {
        let (_, r) = build(&json!({}), &link(), Rng::from_seed(1), Preset::Hred).unwrap();
        assert_eq!(
            (r["min_th"].as_f64(), r["max_th"].as_f64()),
            (Some(3.0), Some(40.0))
        );
        assert_eq!((r["w_q"].as_f64(), r["max_p"].as_f64()), (Some(0.02), Some(0.65)));
        assert_eq!(r["gentle"], true);
        let (_, r) = build(
            &json!({"aggressive": true}),
            &link(),
            Rng::from_seed(1),
            Preset::Hred,
        )
        .unwrap();
        assert_eq!(r["w_q"].as_f64(), Some(0.04));
    }

    #[test]
    fn ared_steps_and_bounds() {
        let p = params();
        let mut v = RedVars::new(&p);
        v.max_p = 0.01;
        let mut prev = v.max_p;
        let mut steps = 0;
        while v.max_p <= 0.5 {
            v.adapt(&p, 14.0, false);
            let inc = v.max_p - prev;
            assert!((inc - (prev / 4.0).min(0.01)).abs() < 1e-12);
            prev = v.max_p;
            steps += 1;
        }
        // 0.01 -> 0.5 takes >= 49 steps of 0.5 s (>= 24.5 s).
        assert!(steps >= 49, "{steps}");
        v.adapt(&p, 14.0, false);
        assert_eq!(v.max_p, prev);
        assert!(v.max_p <= 0.51);
        while v.max_p >= 0.01 {
            let before = v.max_p;
            v.adapt(&p, 6.0, false);
            assert!((v.max_p - 0.9 * before).abs() < 1e-15);
        }
        let floor = v.max_p;
        v.adapt(&p, 6.0, false);
        assert_eq!(v.max_p, floor);
        assert!(floor >= 0.009);
        // Inside the band [9, 11]: no change.
        v.max_p = 0.1;
        v.adapt(&p, 10.0, false);
        assert_eq!(v.max_p, 0.1);
    }

    #[test]
    fn ared_linux_timer_and_ns2_arrivals() {
        // Linux form: the timer adapts every 0.5 s, also while idle.
        let mut q = built(json!({"min_th": 5, "max_th": 15}), Preset::Ared);
        let mut h = Harness::new();
        assert_eq!(q.next_timer(), Some(500 * MS));
        h.timer(&mut q, 500 * MS);
        // avg 0 < band: max_p 0.1 -> 0.09.
        assert!((q.vars.max_p - 0.09).abs() < 1e-12);
        assert_eq!(q.next_timer(), Some(SEC));
        // ns-2 form: no timer; adaptation on arrivals after 0.5 s.
        let mut q = built(json!({"adapt_form": "ns2"}), Preset::Ared);
        assert_eq!(q.next_timer(), None);
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 400 * MS);
        assert_eq!(q.vars.max_p, 0.1);
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 600 * MS);
        assert!((q.vars.max_p - 0.09).abs() < 1e-12);
    }

    #[test]
    fn red_qdisc_ecn_marks_early_and_drops_forced() {
        let mut q = built(
            json!({"min_th": 5, "max_th": 15, "w_q": 0.2, "ecn": true, "gentle": false, "wait": false, "max_p": 1.0}),
            Preset::Red,
        );
        let mut h = Harness::new();
        for _ in 0..40 {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect0, 0);
        }
        assert!(!h.marks.is_empty());
        // ECT arrivals are only dropped once avg passes max_th: forced drops, never early ones.
        assert!(!h.drops.is_empty() && h.drops.iter().all(|d| d.1 == DropReason::Forced));
        assert!(q.vars.avg >= 15.0);
        for _ in 0..100 {
            h.dequeue(&mut q, MS);
        }
        assert_eq!(q.vars.idle_since, Some(MS));
    }

    #[test]
    fn ns2_admits_while_the_backlog_before_an_arrival_is_under_the_limit() {
        // ns-2 red.cc enque drops when qlen >= qlim (the byte backlog before the arrival, in byte
        // mode qlim_ x mean_pktsize): codel2012's 10-packet RED buffer, 10 x 500 B, holds four
        // 1500-byte packets (0, 1500, 3000, 4500 B before each), where a limit that refuses an
        // arrival passing it holds three.
        for (before, held) in [(false, 3), (true, 4)] {
            let mut q = built(
                json!({"limit": "5000B", "min_th": 50, "max_th": 150, "bytes": true,
                        "mean_pktsize": "500B", "limit_before_arrival": before}),
                Preset::Red,
            );
            let mut h = Harness::new();
            for _ in 0..6 {
                h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
            }
            assert_eq!(q.backlog_packets(), held, "limit_before_arrival {before}");
            assert!(h.drops.iter().all(|d| d.1 == DropReason::Overlimit));
        }
    }

    #[test]
    fn a_dropped_arrival_at_an_empty_queue_leaves_it_idle() {
        // avg far above the forced-drop threshold (2 max_th = 30) with an empty queue and one
        // arrival every 100 ms (a sender retrying after timeouts). ns-2 and Linux restart the
        // idle period whenever the link finds the queue empty, so avg decays with elapsed time:
        // 100 (1 - w_q)^(C t) < 30 once t > ln(0.3) / (C ln(1 - w_q)) = 0.72 s at C = 833
        // packets/s. Counting only arrivals, it would take ln(0.3) / ln(0.998) = 602 of them.
        let mut q = built(
            json!({"min_th": 5, "max_th": 15, "w_q": 0.002, "gentle": true}),
            Preset::Red,
        );
        q.vars.avg = 100.0;
        q.vars.idle_since = None;
        let c = 10_000_000.0 / 12_000.0;
        let t_decay = (0.3f64).ln() / (c * (1.0f64 - 0.002).ln());
        let mut h = Harness::new();
        let mut admitted_at = None;
        for k in 1..=20u64 {
            let now = k * 100 * MS;
            h.enqueue(&mut q, 0, 1500, Ecn::NotEct, now);
            if let Some(id) = h.dequeue(&mut q, now) {
                admitted_at.get_or_insert(now);
                h.pool.release(id);
            }
        }
        let t = admitted_at.expect("an arrival is admitted once avg has decayed") as f64 / SEC as f64;
        assert!(
            t > t_decay && t <= t_decay + 0.2,
            "first admitted at {t} s, decay time {t_decay} s"
        );
        assert!(h.drops.iter().all(|d| d.1 == DropReason::Forced));
    }

    #[test]
    fn ns2_forced_drops_spare_a_queue_of_one() {
        // ns-2 red.cc: no drop of any kind while the queue holds at most one packet, even with
        // avg above the forced-drop threshold.
        let mut p = params();
        p.ns2_quirks = true;
        let mut v = RedVars::new(&p);
        v.avg = 100.0;
        v.idle_since = None;
        let mut rng = Rng::from_seed(3);
        assert_eq!(v.decide(&p, 1500, 1, &mut rng), Decision::Admit);
        assert_eq!(v.decide(&p, 1500, 2, &mut rng), Decision::Forced);
        p.ns2_quirks = false;
        assert_eq!(v.decide(&p, 1500, 0, &mut rng), Decision::Forced);
    }

    #[test]
    fn count_bytes_counts_mean_size_packets_since_the_last_drop() {
        // ns-2 red.cc modify_p with bytes_ (wait_ on): count1 = count_bytes / mean_pktsize, no
        // drop while count1 p_b < 1, then p_b / (2 - count1 p_b), scaled by size / mean_pktsize.
        // 1500-byte packets, mean_pktsize 500, p_b = 0.1: the n-th packet since the last drop has
        // count1 = 3n; n <= 3 never drops, n = 4 with 0.125 x 3 = 0.375, n = 5 with 0.2 x 3 = 0.6,
        // n = 6 with 1. Gaps 4, 5, 6 with probabilities 0.375, 0.625 x 0.6 = 0.375, 0.25.
        let mut p = params();
        (p.bytes, p.wait, p.count_bytes, p.mean_pktsize, p.max_p, p.w_q) =
            (ByteMode::Ns2, true, true, 500, 0.2, 1e-12);
        let mut v = RedVars::new(&p);
        v.avg = 10.0; // p_b = 0.2 x 5 / 10 = 0.1
        v.idle_since = None;
        let mut rng = Rng::from_seed(5);
        let (mut hist, mut last) = ([0u64; 8], None);
        for i in 0..200_000u64 {
            if v.decide(&p, 1500, 10, &mut rng) == Decision::Early {
                if let Some(l) = last {
                    hist[((i - l) as usize).min(7)] += 1;
                }
                last = Some(i);
            }
        }
        let n: u64 = hist.iter().sum();
        assert_eq!(hist[..4].iter().sum::<u64>() + hist[7], 0, "{hist:?}");
        for (gap, share) in [(4, 0.375), (5, 0.375), (6, 0.25)] {
            let got = hist[gap] as f64 / n as f64;
            assert!((got - share).abs() < 0.01, "gap {gap}: {got} {hist:?}");
        }
        // Counting packets instead (the paper's count), the same p_b spaces drops 10..20 apart.
        p.count_bytes = false;
        let mut v = RedVars::new(&p);
        v.avg = 10.0;
        v.idle_since = None;
        let drops = (0..1000)
            .filter(|_| v.decide(&p, 1500, 10, &mut rng) == Decision::Early)
            .count();
        assert!((50..=100).contains(&drops), "{drops}");
    }

    #[test]
    fn ns2_quirks_and_byte_mode() {
        let mut p = params();
        p.ns2_quirks = true;
        p.wait = false;
        p.w_q = 1e-12;
        let mut v = RedVars::new(&p);
        v.avg = 14.0;
        v.idle_since = None;
        let mut rng = Rng::from_seed(3);
        // First packet above min_th: admitted, count restarts at 1.
        assert_eq!(v.decide(&p, 1500, 10, &mut rng), Decision::Admit);
        assert_eq!(v.count, 1);
        // With <= 1 packet queued there is never an early drop.
        assert!((0..10_000).all(|_| v.decide(&p, 1500, 1, &mut rng) == Decision::Admit));
        // Byte mode: small packets are dropped less often than large ones at the same avg.
        let mut b = params();
        b.bytes = ByteMode::Ns2;
        b.wait = false;
        let frac = |size: u32| {
            let mut v = RedVars::new(&b);
            v.avg = 10.0;
            v.idle_since = None;
            let mut rng = Rng::from_seed(4);
            (0..100_000)
                .filter(|_| v.decide(&b, size, 10, &mut rng) == Decision::Early)
                .count() as f64
                / 1e5
        };
        let (small, large) = (frac(150), frac(1500));
        assert!(small < large / 2.0, "{small} {large}");
        // Full-size packets: drop fraction 1 / E[gap] = 1 / 10 (p_b = 0.05, wait off).
        assert!((large - 0.1).abs() < 0.005, "{large}");
    }

    #[test]
    fn linux_byte_mode_averages_bytes_and_drops_any_size_alike() {
        // Linux sch_red (red_enqueue, include/net/red.h): the average follows the child's backlog
        // in bytes (red_calc_qavg(.., child->qstats.backlog)) against thresholds in bytes, and
        // red_mark_probability drops once (qavg - qth_min) x qcount reaches a uniform random
        // number scaled by 1 / max_P: no term for the arrival's size.
        let mut q = built(
            json!({"bytes": "linux", "min_th": 5, "max_th": 15, "w_q": 1.0}),
            Preset::Red,
        );
        let mut h = Harness::new();
        for _ in 0..21 {
            h.enqueue(&mut q, 0, 150, Ecn::NotEct, 0);
        }
        // With w_q 1 the average is the backlog before the last arrival: 20 x 150 B = 2 mean-size
        // packets, below min_th, so no 150-byte packet was dropped.
        assert!((q.vars.avg - 2.0).abs() < 1e-12 && h.drops.is_empty());
        let mut p = params();
        p.bytes = ByteMode::Linux;
        let frac = |size: u32| {
            let mut v = RedVars::new(&p);
            v.avg = 10.0;
            v.idle_since = None;
            let mut rng = Rng::from_seed(4);
            (0..100_000)
                .filter(|_| v.decide(&p, size, 10, &mut rng) == Decision::Early)
                .count() as f64
                / 1e5
        };
        // p_b = 0.05 at avg 10: drop fraction 1 / E[gap] = 1 / 10 (wait off) for both sizes.
        for size in [150, 1500] {
            assert!((frac(size) - 0.1).abs() < 0.005, "{size}: {}", frac(size));
        }
        let (_, r) = build(
            &json!({"bytes": "linux"}),
            &link(),
            Rng::from_seed(1),
            Preset::Red,
        )
        .unwrap();
        assert_eq!(r["bytes"], json!("linux"));
        let e = build(&json!({"bytes": "bsd"}), &link(), Rng::from_seed(1), Preset::Red);
        assert!(e.is_err_and(|e| e.contains("bytes") && e.contains("\"linux\"")));
    }
}
