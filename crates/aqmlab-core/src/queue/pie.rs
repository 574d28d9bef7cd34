//! PIE (RFC 8033 by default), with the Linux and 2013 forms of docs/disciplines.md 7.2 as
//! `profile`s, and every knob settable alone:
//!
//! * `rfc8033`: target 15 ms, t_update 15 ms, max_burst 150 ms, timestamp delay estimator,
//!   derandomisation on, 2 % cap on, no 250 ms rule, decay 0.98, RFC auto-tune table, bypass with
//!   qdelay_old and "<= 2 mean packets" (mean = MTU 1500 B), burst allowance reduced by t_update at
//!   each update and re-armed when both delays are below target/2, drop_prob is 0 and it is 0. The
//!   RFC rate estimator (`estimator = "rate"`) keeps an EWMA (weight 1/4) of the time to drain
//!   dq_threshold bytes and stops after each cycle.
//! * `linux` (sch_pie after the 2018-2020 rework): as rfc8033 but decay 63/64, the +2 % rule above
//!   250 ms, bypass with the current qdelay and backlog < 2 MTU (1500 IP bytes, Linux 1514), burst
//!   allowance reduced by the time between dequeues (timestamp) or by each completed rate cycle,
//!   Linux reset rule (both delays < target/2 and prob 0 -> burst re-armed, rate estimate
//!   cleared), decay skipped when the probability was clamped at 1 or packets are queued. Rate
//!   cycles: EWMA 1/8 on the rate, the next cycle starts at once if the backlog is still above the
//!   threshold. The first update runs 500 ms (HZ/2) after start, then every t_update.
//! * `pie2013` (2013 paper and ns-2 code): target 20 ms, t_update 30 ms, max_burst 100 ms,
//!   departure-rate estimator, dq_threshold 10000 B, three-tier scaling (/8 below 1 %, /2 below
//!   10 %), no derandomisation, decay 0.98. Plus the reconstruction of docs/disciplines.md 7.3 (from
//!   the transients2014 study's text, not from code): a rate-measurement cycle still running when an
//!   update fires is abandoned, and the burst allowance falls only by the duration of completed
//!   cycles. With dq_threshold = 10 packets at 2 Mb/s (60 ms per cycle) and t_update 30 ms no cycle
//!   ever completes, so PIE never leaves burst mode and acts as a FIFO.
//!
//! * `linux_3_14` (the first Linux sch_pie, which goodbadwifi2015 ran): pie2013's parameters and
//!   rate estimator, but a cycle runs on across updates (`abandon_cycles` off), so it completes
//!   at any link rate (10000 B at 1 Mb/s = 80 ms > t_update) and PIE engages; decay skipped while
//!   packets are queued (`decay_skip`); first update at HZ/2.
//!
//! * `docsis` (DOCSIS-PIE, the AQM DOCSIS 3.1 requires of cable modems upstream: RFC 8034's
//!   pseudocode, its Appendix A, checked line by line against the two implementations by its
//!   authors' teams, the DOCSIS mode of the ns-2 PIE of Cisco and CableLabs, pie.cc drop_early
//!   and calculate_p, and CableLabs' ns-3 DOCSIS model, dual-queue-coupled-aqm.cc DropEarly and
//!   CalculateDropProb, which follows MULPI's Annex M): target 10 ms, t_update 16 ms, alpha
//!   0.25, beta 2.5, max_burst 142 ms; the queueing delay is the queue's bytes over the
//!   configured rate (`configured` estimator: the hop's rate; the Max Sustained Rate token
//!   bucket and the Peak Rate are not modelled, so msrtokens() = 0); drop_prob is a probability
//!   per 1024-byte packet (`pkt_unit`), scaled by size at each arrival (bytemode) and capped
//!   there at PROB_LOW 0.85, so it may reach 13.6 (`prob_max`); the scaling table goes on above
//!   10 % (`table_ext`); decay 0.98 when both delays are below LATENCY_LOW 5 ms (`latency_low`),
//!   else +2 % above LATENCY_HIGH 200 ms (`latency_high`), both before drop_prob is bounded;
//!   the burst state machine: no drop until the queue reaches a third of the buffer, the first
//!   drop of a burst arms max_burst, during which drop_prob is held at 0, and a burst ends after
//!   more than 1 s of quiet updates.
//!
//! `dq_threshold` takes bytes ("16384B") or packets ("10p" = 10 x 1500 B, the mean packet size).
//! `hz` (default 0 = exact) rounds t_update up to whole jiffies as Linux timers do.
//! Probabilities are f64 (Linux uses fixed point; not emulated). ECN marks ECT packets instead of
//! early drops while drop_prob <= mark_ecnth (10 %). [`PieParams`] + [`PieVars`] are the one PIE
//! controller, also used per flow by fq_pie.

use super::util::{merge, Buffer, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx, ShaperState};
use crate::packet::PktId;
use crate::params::{check_bytes, check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, Dur, Limit, LimitSpec, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Rfc8033,
    Linux,
    Pie2013,
    #[serde(rename = "linux_3_14")]
    Linux314,
    /// DOCSIS-PIE, RFC 8034 Appendix A (the cable modem's upstream AQM of DOCSIS 3.1)
    Docsis,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Estimator {
    Timestamp,
    Rate,
    /// DOCSIS-PIE's (RFC 8034 Appendix A): the queue's bytes over the configured rate (here the
    /// hop's rate), computed at each update
    Configured,
    /// DOCSIS-PIE's estimate from the modem's token bucket (a hop with `docsis = { rate_shaper =
    /// "token_bucket" }`): the bytes beyond the Max Sustained Rate tokens leave at that rate,
    /// those within them at the Peak Traffic Rate (at once without one), computed at each update
    /// (ns-3's DOCSIS model, cm-net-device.cc `CmNetDevice::ExpectedDelay`; ns-2's DOCSIS
    /// link, docsislink.cc `DocsisLink::expectedDelay`)
    #[serde(rename = "token_bucket")]
    TokenBucket,
    /// `token_bucket` with the tokens the modem's last request left in the bucket, not refilled
    /// since, as both reference models read them (ns-3's `m_msrTokens`, changed only in
    /// `CmNetDevice::ShapeRequest`; ns-2's `msrtokens_`, only in `DocsisLink::makeRequest`)
    #[serde(rename = "token_bucket_last_request")]
    TokenBucketLastRequest,
}

/// DOCSIS-PIE's burst protection state (RFC 8034 Appendix A; ns-2 pie.h and CableLabs' ns-3
/// model name the states NO_BURST, IN_BURST, IN_BURST_PROTECTING).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BurstState {
    /// No drop while the queue holds less than a third of the buffer.
    NoBurst,
    /// A burst began; the first early drop arms the burst allowance.
    InBurst,
    /// The burst allowance was armed by a drop.
    Protecting,
}

/// PIE's keys, shared by the pie and fq_pie tables; a `profile` names a preset of all of them.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieParams {
    /// preset: rfc8033 (default for pie), linux (default for fq_pie), pie2013 (2013 ns-2 form:
    /// paper + the transients2014 reconstruction), linux_3_14 (sch_pie of Linux 3.14)
    pub profile: Profile,
    /// reference queueing delay; 15ms (rfc8033, linux) / 20ms (pie2013)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub target: Time,
    /// probability update period; 15ms / 30ms (pie2013)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub t_update: Time,
    /// PI gain on (qdelay - target), 1/s; 0.125
    pub alpha: f64,
    /// PI gain on (qdelay - qdelay_old), 1/s; 1.25
    pub beta: f64,
    /// burst allowance; 150ms / 100ms (pie2013)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub max_burst: Time,
    /// queue delay from timestamps, from the departure rate (rate), from the queue's bytes over
    /// the hop's rate (configured) or over its DOCSIS token bucket (token_bucket, RFC 8034's
    /// estimate, the tokens at the update; token_bucket_last_request, the tokens as the last
    /// request left them, ns-2's and ns-3's reading); timestamp / rate (pie2013) / configured
    /// (docsis)
    pub estimator: Estimator,
    /// rate-cycle bytes ("16384B") or packets of 1500 B ("10p"); 16384B / 10000B (pie2013)
    #[serde(with = "dq_bytes")]
    #[schemars(with = "LimitSpec")]
    pub dq_threshold: u64,
    /// RFC 5.4 accumulated-probability derandomisation; on / off (pie2013)
    pub derandomize: bool,
    /// cap each increase at 2 % when drop_prob >= 10 %; on
    pub cap: bool,
    /// +2 % when qdelay > latency_high (Linux, RFC 8034); off (rfc8033) / on
    pub boost_250ms: bool,
    /// the delay above which boost_250ms adds 2 %; 250ms / 200ms (docsis: LATENCY_HIGH)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub latency_high: Time,
    /// factor applied when both delays are low (see latency_low); 0.98 (rfc8033, pie2013, docsis)
    /// / 63/64 (linux)
    pub decay: f64,
    /// decay when both delays are below this; 0 = when both are 0 (RFC 8033) / 5ms (docsis:
    /// LATENCY_LOW)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub latency_low: Time,
    /// 2013 scaling (/8 below 1 %, /2 below 10 %) instead of the RFC table
    pub three_tier: bool,
    /// RFC 8034's rows of the scaling table above 10 %: x2 below 1, x8 below 10, x32 above; off /
    /// on (docsis)
    pub table_ext: bool,
    /// the highest drop_prob; 1 / 13.6 (docsis: PROB_LOW x MEAN_PKTSIZE / MIN_PKTSIZE, a
    /// probability per 1024-byte packet that bytemode scales down for small packets)
    pub prob_max: f64,
    /// bytes of the "2 packets" of the bypass rule and of bytemode's unit; the link's MTU /
    /// 1024 (docsis: MEAN_PKTSIZE)
    pub pkt_unit: u32,
    /// round t_update up to whole jiffies of this kernel HZ; 0 = exact (default)
    pub hz: u32,
    /// CE-mark ECT packets instead of early drop while drop_prob <= mark_ecnth; off
    pub ecn: bool,
    /// highest drop_prob at which ECT packets are marked; 0.1
    pub mark_ecnth: f64,
    /// scale the drop probability by size / MTU
    pub bytemode: bool,
    /// time of the first update; 500ms (linux, linux_3_14: HZ/2) / the update period
    #[schemars(with = "Dur")]
    pub first_update: Option<Dur>,
    /// abandon a rate cycle still running at an update (pie2013 reconstruction); on (pie2013) / off
    pub abandon_cycles: bool,
    /// no decay while packets are queued or after clamping at 1 (Linux); on (linux, linux_3_14) / off
    pub decay_skip: bool,
    /// The link's MTU (IP bytes): the "2 packets" of the bypass rule and bytemode's unit.
    #[serde(skip)]
    pub mtu: u32,
    /// The update period: t_update, rounded up to whole jiffies when `hz` is set.
    #[serde(skip)]
    pub period: Time,
    /// The hop's rate (bit/s), the configured rate of the `configured` estimator.
    #[serde(skip)]
    pub rate_bps: u64,
    /// docsis: the buffer in bytes (BUFFER_SIZE; a packet limit counts MTU-sized packets), whose
    /// third starts a burst; 0 = none (fq_pie).
    #[serde(skip)]
    pub buffer_bytes: u64,
}

/// `dq_threshold` in bytes: read as bytes or as packets of [`MEAN_PKTSIZE`], written as bytes.
mod dq_bytes {
    use super::MEAN_PKTSIZE;
    use crate::units::{Limit, LimitSpec};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(b: &u64, s: S) -> Result<S::Ok, S::Error> {
        LimitSpec(Limit::Bytes(*b)).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(match LimitSpec::deserialize(d)?.0 {
            Limit::Bytes(b) => b,
            Limit::Packets(n) => n * MEAN_PKTSIZE,
        })
    }
}

impl PieParams {
    pub fn profile(profile: Profile, mtu: u32) -> PieParams {
        let rfc = PieParams {
            profile,
            target: 15 * MS,
            t_update: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 150 * MS,
            estimator: Estimator::Timestamp,
            dq_threshold: 16_384,
            derandomize: true,
            cap: true,
            boost_250ms: false,
            latency_high: 250 * MS,
            decay: 0.98,
            latency_low: 0,
            three_tier: false,
            table_ext: false,
            prob_max: 1.0,
            pkt_unit: mtu,
            hz: 0,
            ecn: false,
            mark_ecnth: 0.1,
            bytemode: false,
            first_update: None,
            abandon_cycles: false,
            decay_skip: false,
            mtu,
            period: 0,
            rate_bps: 0,
            buffer_bytes: 0,
        };
        let p = match profile {
            Profile::Rfc8033 => rfc,
            Profile::Linux => PieParams {
                decay: 63.0 / 64.0,
                boost_250ms: true,
                first_update: Some(Dur(500 * MS)),
                decay_skip: true,
                ..rfc
            },
            Profile::Pie2013 => PieParams {
                target: 20 * MS,
                t_update: 30 * MS,
                max_burst: 100 * MS,
                estimator: Estimator::Rate,
                dq_threshold: 10_000,
                derandomize: false,
                boost_250ms: true,
                three_tier: true,
                abandon_cycles: true,
                ..rfc
            },
            // Linux 3.14 net/sched/sch_pie.c: pie_params_init (target 20 ms, tupdate 30 ms,
            // alpha 2 / beta 20 in 1/16 = 0.125 / 1.25), pie_vars_init (burst 100 ms),
            // QUEUE_THRESHOLD 10000 B; pie_process_dequeue keeps a cycle running across
            // updates; calculate_probability's three step sizes (>> 7, >> 5, >> 4 = /8, /2, /1
            // of the top gains), the 2 % cap above 10 %, +2 % above 250 ms, decay 98/100
            // unless update_prob was cleared; pie_init arms the first update at HZ/2.
            Profile::Linux314 => PieParams {
                first_update: Some(Dur(500 * MS)),
                abandon_cycles: false,
                decay_skip: true,
                ..Self::profile(Profile::Pie2013, mtu)
            },
            // RFC 8034 Appendix A's constants: LATENCY_TARGET 10 ms, A 0.25, B 2.5, INTERVAL
            // 16 ms, MAX_BURST 142 ms, MEAN_PKTSIZE 1024, MIN_PKTSIZE 64, PROB_LOW 0.85,
            // PROB_HIGH 8.5, LATENCY_LOW 5 ms, LATENCY_HIGH 200 ms, BURST_RESET_TIMEOUT 1 s (the
            // values of CableLabs' ns-3 model's attributes and constants; the 2014 ns-2 code had
            // BURST_RESET_TIMEOUT 1.5 s); the delay from the configured rate, drops scaled by
            // packet size, the table extended above 10 %.
            Profile::Docsis => PieParams {
                target: 10 * MS,
                t_update: 16 * MS,
                alpha: 0.25,
                beta: 2.5,
                max_burst: 142 * MS,
                estimator: Estimator::Configured,
                boost_250ms: true,
                latency_high: 200 * MS,
                latency_low: 5 * MS,
                table_ext: true,
                prob_max: DOCSIS_PROB_LOW * 1024.0 / 64.0,
                pkt_unit: 1024,
                bytemode: true,
                ..rfc
            },
        };
        PieParams {
            period: p.t_update,
            ..p
        }
    }

    /// Time of the first probability update (Linux: HZ/2 = 500 ms after init).
    pub fn first_update(&self) -> Time {
        self.first_update.map_or(self.period, |d| d.0)
    }
}

impl Params<LinkInfo> for PieParams {
    const PRESET: Option<&'static str> = Some("profile");

    fn preset(&self, link: &LinkInfo) -> PieParams {
        PieParams::profile(self.profile, link.mtu)
    }

    fn finish(&mut self, link: &LinkInfo) -> Result<(), String> {
        self.mtu = link.mtu;
        self.rate_bps = link.rate_bps;
        check_time("target", self.target, 1, 10 * SEC)?;
        check_time("t_update", self.t_update, 1, 10 * SEC)?;
        check_range("alpha", self.alpha, 0.0, 100.0)?;
        check_range("beta", self.beta, 0.0, 100.0)?;
        check_time("max_burst", self.max_burst, 0, 100 * SEC)?;
        check_bytes("dq_threshold", self.dq_threshold, 1, 1 << 30)?;
        check_range("decay", self.decay, 0.0, 1.0)?;
        check_range("hz", self.hz, 0, 100_000)?;
        check_range("mark_ecnth", self.mark_ecnth, 0.0, 1.0)?;
        check_time("latency_high", self.latency_high, 0, 100 * SEC)?;
        check_time("latency_low", self.latency_low, 0, 100 * SEC)?;
        check_range("prob_max", self.prob_max, 0.0, 1000.0)?;
        check_range("pkt_unit", self.pkt_unit, 1, 1 << 20)?;
        if self.estimator == Estimator::Configured && self.rate_bps == 0 {
            return Err("estimator = \"configured\" needs a hop with a rate".into());
        }
        self.period = if self.hz == 0 {
            self.t_update
        } else {
            let jiffies = (self.t_update as u128 * self.hz as u128).div_ceil(SEC as u128);
            (jiffies * SEC as u128 / self.hz as u128) as Time
        };
        let first = self.first_update();
        check_time("first_update", first, 1, 100 * SEC)?;
        self.first_update = Some(Dur(first));
        Ok(())
    }
}

/// The state of one PIE controller.
#[derive(Clone, Debug)]
pub struct PieVars {
    pub prob: f64,
    pub qdelay: Time,
    pub qdelay_old: Time,
    pub burst: Time,
    accu: f64,
    last_dq: Option<Time>,
    // Rate estimator.
    measuring: bool,
    dq_start: Time,
    dq_count: u64,
    /// Linux/2013: bytes per second; rfc8033: unused (0) unless a drain time exists.
    avg_rate: f64,
    /// rfc8033: EWMA of the time to drain dq_threshold bytes (ns, f64); 0 = none.
    avg_dq_time: f64,
    pub cycles_done: u64,
    pub cycles_abandoned: u64,
    pub updates: u64,
    /// docsis: the burst protection state and the updates it has been quiet in INBURST.
    pub burst_state: BurstState,
    burst_reset: u32,
    /// token_bucket: the hop's token bucket, as last given (`Qdisc::shaper_state`).
    pub shaper: Option<ShaperState>,
}

impl PieVars {
    pub fn new(p: &PieParams) -> PieVars {
        PieVars {
            prob: 0.0,
            qdelay: 0,
            qdelay_old: 0,
            // RFC 8034 Appendix A: burst_allowance_ starts at 0, armed by the first drop of a burst.
            burst: if p.profile == Profile::Docsis {
                0
            } else {
                p.max_burst
            },
            accu: 0.0,
            last_dq: None,
            measuring: false,
            dq_start: 0,
            dq_count: 0,
            avg_rate: 0.0,
            avg_dq_time: 0.0,
            cycles_done: 0,
            cycles_abandoned: 0,
            updates: 0,
            burst_state: BurstState::NoBurst,
            burst_reset: 0,
            shaper: None,
        }
    }

    fn has_rate(&self) -> bool {
        self.avg_rate > 0.0 || self.avg_dq_time > 0.0
    }

    /// The early-drop decision for an arrival of `size` bytes when `backlog` bytes are queued
    /// (RFC 8033 sections 4.1 and 5.4). Returns true for "drop (or mark)".
    pub fn drop_early(&mut self, p: &PieParams, size: u32, backlog: u64, rng: &mut Rng) -> bool {
        if self.burst > 0 {
            return false;
        }
        if p.profile == Profile::Docsis {
            return self.drop_early_docsis(p, size, backlog, rng);
        }
        let (delay, small) = match p.profile {
            Profile::Rfc8033 => (self.qdelay_old, backlog <= 2 * p.pkt_unit as u64),
            _ => (self.qdelay, backlog < 2 * p.pkt_unit as u64),
        };
        if (delay < p.target / 2 && self.prob < 0.2) || small {
            return false;
        }
        let local = if p.bytemode {
            self.prob * size as f64 / p.pkt_unit as f64
        } else {
            self.prob
        };
        if p.derandomize {
            if self.prob == 0.0 {
                self.accu = 0.0;
            }
            self.accu += local;
            if self.accu < 0.85 {
                return false;
            }
            if self.accu >= 8.5 {
                return true;
            }
        }
        rng.bernoulli(local)
    }

    /// DOCSIS-PIE's early-drop decision (RFC 8034 Appendix A), in the order of ns-2's
    /// `PIEQueue::drop_early` (DOCSIS mode) and ns-3's `DualQueueCoupledAqm::DropEarly`: the
    /// accumulator is reset while drop_prob_ is 0; no drop before a burst (queue below a third of
    /// the buffer); the size-scaled probability (capped at PROB_LOW) is accumulated before the
    /// bypass rules (qdelay_old below target/2 with drop_prob_ below 20 %, or at most 2
    /// MEAN_PKTSIZE queued); derandomisation (below PROB_LOW never, from PROB_HIGH on always:
    /// ns-3's `>=`, where the 2014 ns-2 code had `>`); the first drop of a burst arms the burst
    /// allowance.
    fn drop_early_docsis(&mut self, p: &PieParams, size: u32, backlog: u64, rng: &mut Rng) -> bool {
        if self.prob == 0.0 {
            self.accu = 0.0;
        }
        if self.burst_state == BurstState::NoBurst {
            if backlog < p.buffer_bytes / 3 {
                return false;
            }
            self.burst_state = BurstState::InBurst;
        }
        let local = if p.bytemode {
            (self.prob * size as f64 / p.pkt_unit as f64).min(DOCSIS_PROB_LOW)
        } else {
            self.prob.min(DOCSIS_PROB_LOW)
        };
        self.accu += local;
        if (self.qdelay_old < p.target / 2 && self.prob < 0.2) || backlog <= 2 * p.pkt_unit as u64 {
            return false;
        }
        let drop = if !p.derandomize {
            rng.bernoulli(local)
        } else if self.accu < DOCSIS_PROB_LOW {
            false
        } else if self.accu >= 8.5 {
            true
        } else {
            rng.bernoulli(local)
        };
        if drop {
            self.accu = 0.0;
            if self.burst_state == BurstState::InBurst {
                self.burst_state = BurstState::Protecting;
                self.burst = p.max_burst;
            }
        }
        drop
    }

    /// Any drop (tail or early) resets the derandomisation accumulator.
    pub fn on_drop(&mut self) {
        self.accu = 0.0;
    }

    /// Departure bookkeeping (RFC 8033 sections 4.3 and 5.2): `backlog` bytes remain after the packet of
    /// `size` bytes that waited `sojourn` left at `now`.
    pub fn on_dequeue(&mut self, p: &PieParams, size: u32, sojourn: Time, backlog: u64, now: Time) {
        match p.estimator {
            Estimator::Timestamp => {
                self.qdelay = if backlog == 0 { 0 } else { sojourn };
                if p.profile != Profile::Rfc8033 {
                    if let Some(last) = self.last_dq {
                        self.burst = self.burst.saturating_sub(now.saturating_sub(last));
                    }
                }
                self.last_dq = Some(now);
            }
            // The queue's bytes (and the token bucket) at the next update are all they need.
            Estimator::Configured | Estimator::TokenBucket | Estimator::TokenBucketLastRequest => {}
            Estimator::Rate => {
                if !self.measuring && backlog >= p.dq_threshold {
                    self.measuring = true;
                    self.dq_start = now;
                    self.dq_count = 0;
                }
                if self.measuring {
                    self.dq_count += size as u64;
                    if self.dq_count >= p.dq_threshold {
                        let dtime = now - self.dq_start;
                        self.cycles_done += 1;
                        if p.profile == Profile::Rfc8033 {
                            let d = dtime as f64;
                            self.avg_dq_time = if self.avg_dq_time == 0.0 {
                                d
                            } else {
                                0.75 * self.avg_dq_time + 0.25 * d
                            };
                            self.measuring = false;
                        } else {
                            if dtime > 0 {
                                let rate = self.dq_count as f64 * SEC as f64 / dtime as f64;
                                self.avg_rate = if self.avg_rate == 0.0 {
                                    rate
                                } else {
                                    self.avg_rate * 0.875 + rate * 0.125
                                };
                            }
                            self.burst = self.burst.saturating_sub(dtime);
                            self.measuring = backlog >= p.dq_threshold;
                            self.dq_start = now;
                            self.dq_count = 0;
                        }
                    }
                }
            }
        }
    }

    /// The auto-tuning divisor of the PI step for the current probability.
    fn scale(&self, p: &PieParams) -> f64 {
        let q = self.prob;
        if p.three_tier {
            return if q < 0.01 {
                8.0
            } else if q < 0.1 {
                2.0
            } else {
                1.0
            };
        }
        const TABLE: [(f64, f64); 6] = [
            (0.000_001, 2048.0),
            (0.000_01, 512.0),
            (0.000_1, 128.0),
            (0.001, 32.0),
            (0.01, 8.0),
            (0.1, 2.0),
        ];
        // RFC 8034 Appendix A: drop_prob_ (per 1024-byte packet) goes above 1, with larger steps.
        const EXT: [(f64, f64); 2] = [(1.0, 0.5), (10.0, 0.125)];
        match TABLE.iter().find(|(lim, _)| q < *lim) {
            Some((_, d)) => *d,
            None if !p.table_ext => 1.0,
            None => EXT.iter().find(|(lim, _)| q < *lim).map_or(0.03125, |(_, d)| *d),
        }
    }

    /// The probability update (RFC 8033 section 4.2), every t_update; `backlog` in bytes.
    pub fn update(&mut self, p: &PieParams, backlog: u64) {
        self.updates += 1;
        if p.estimator == Estimator::Rate {
            self.qdelay = if self.avg_dq_time > 0.0 {
                (backlog as f64 * self.avg_dq_time / p.dq_threshold as f64) as Time
            } else if self.avg_rate > 0.0 {
                (backlog as f64 / self.avg_rate * SEC as f64) as Time
            } else {
                0
            };
            if p.abandon_cycles && self.measuring {
                self.measuring = false;
                self.cycles_abandoned += 1;
            }
        } else if p.estimator == Estimator::Configured {
            // RFC 8034 Appendix A with msrtokens() = 0 (no token bucket): bytes / MSR.
            self.qdelay = (backlog as u128 * 8 * SEC as u128 / p.rate_bps as u128) as Time;
        } else if matches!(
            p.estimator,
            Estimator::TokenBucket | Estimator::TokenBucketLastRequest
        ) {
            let s = self.shaper.expect("validated: a hop with a token bucket");
            let tokens = match p.estimator {
                Estimator::TokenBucket => s.msr_tokens,
                _ => s.msr_tokens_last_request,
            };
            self.qdelay = token_bucket_delay(backlog, tokens, s);
        }
        if p.profile == Profile::Docsis && self.burst > 0 {
            // RFC 8034 Appendix A: no drops and no PI step while the burst allowance lasts.
            self.prob = 0.0;
            self.docsis_burst(p);
            return;
        }
        let secs = |t: Time| t as f64 / SEC as f64;
        let mut delta = p.alpha * (secs(self.qdelay) - secs(p.target))
            + p.beta * (secs(self.qdelay) - secs(self.qdelay_old));
        delta /= self.scale(p);
        if p.cap && self.prob >= 0.1 && delta > 0.02 {
            delta = 0.02;
        }
        let decay_low = if p.latency_low == 0 {
            self.qdelay == 0 && self.qdelay_old == 0
        } else {
            self.qdelay < p.latency_low && self.qdelay_old < p.latency_low
        };
        // The decay and the +2 % exclude each other, the decay first (DOCSIS-PIE's update as
        // the ns-2 PIE of RFC 8034's authors, pie.cc calculate_p, and CableLabs' ns-3 DOCSIS
        // model, dual-queue-coupled-aqm.cc CalculateDropProb, write it).
        if p.boost_250ms && self.qdelay > p.latency_high && !decay_low {
            delta += 0.02;
        }
        let raw = self.prob + delta;
        let clamped_max = raw > p.prob_max;
        // Linux skips the decay when the probability was clamped at 1 or packets are queued.
        let linux_skip = p.decay_skip && (clamped_max || backlog != 0);
        // Decay, then bound to [0, prob_max] (the same two functions): a drop_prob pushed above
        // prob_max is decayed first and clamped after. With latency_low 0 both delays are 0 when
        // the decay applies, so the step is negative and the other order gives the same bits.
        self.prob = if decay_low && !linux_skip {
            raw * p.decay
        } else {
            raw
        }
        .clamp(0.0, p.prob_max);
        if p.profile == Profile::Docsis {
            self.docsis_burst(p);
            return;
        }
        let low = self.qdelay < p.target / 2 && self.qdelay_old < p.target / 2 && self.prob == 0.0;
        if p.profile == Profile::Rfc8033 {
            self.burst = self.burst.saturating_sub(p.period);
            if low && self.burst == 0 {
                self.burst = p.max_burst;
            }
        } else if low && (p.estimator != Estimator::Rate || self.has_rate()) {
            self.burst = p.max_burst;
            self.avg_rate = 0.0;
            self.avg_dq_time = 0.0;
            self.measuring = false;
            self.accu = 0.0;
        }
        self.qdelay_old = self.qdelay;
    }

    /// The end of a DOCSIS-PIE update (RFC 8034 Appendix A): the burst allowance falls by the
    /// interval; after a quiet update (both delays below target/2, drop_prob_ 0, no allowance
    /// left) INBURSTPROTECTING becomes INBURST, and INBURST returns to NOBURST after more than
    /// BURST_RESET_TIMEOUT (1 s) of quiet updates in a row.
    fn docsis_burst(&mut self, p: &PieParams) {
        self.burst = self.burst.saturating_sub(p.period);
        let quiet = self.qdelay < p.target / 2
            && self.qdelay_old < p.target / 2
            && self.prob == 0.0
            && self.burst == 0;
        match (self.burst_state, quiet) {
            (BurstState::Protecting, true) => {
                self.burst_state = BurstState::InBurst;
                self.burst_reset = 0;
            }
            (BurstState::InBurst, true) => {
                self.burst_reset += 1;
                if self.burst_reset as u64 * p.period > DOCSIS_BURST_RESET_TIMEOUT {
                    self.burst_reset = 0;
                    self.burst_state = BurstState::NoBurst;
                }
            }
            (BurstState::InBurst, false) => self.burst_reset = 0,
            _ => {}
        }
        self.qdelay_old = self.qdelay;
    }

    pub fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("drop_prob", self.prob),
            ("qdelay_ms", self.qdelay as f64 / MS as f64),
            ("burst_allowance_ms", self.burst as f64 / MS as f64),
            ("rate_cycles_completed", self.cycles_done as f64),
            ("rate_cycles_abandoned", self.cycles_abandoned as f64),
            ("avg_dq_rate_bps", self.avg_rate * 8.0),
            ("updates", self.updates as f64),
        ]
    }
}

/// The time `backlog` bytes take to leave a token-bucket shaper in state `s` (ns): those beyond
/// the Max Sustained Rate tokens at that rate, the rest at the Peak Traffic Rate, or at once
/// without one (ns-3 `CmNetDevice::ExpectedDelay`).
pub fn token_bucket_delay(backlog: u64, msr_tokens: u64, s: ShaperState) -> Time {
    let at = |bytes: u64, rate: u64| match rate {
        0 => 0,
        r => (bytes as u128 * 8 * SEC as u128 / r as u128) as Time,
    };
    let within = backlog.min(msr_tokens);
    at(backlog - within, s.max_rate) + at(within, s.peak_rate)
}

/// RFC 8034 Appendix A: PROB_LOW, the derandomisation's lower bound and the cap on a packet's
/// scaled probability.
pub const DOCSIS_PROB_LOW: f64 = 0.85;
/// RFC 8034 Appendix A: BURST_RESET_TIMEOUT, the quiet time after which a burst is over.
pub const DOCSIS_BURST_RESET_TIMEOUT: Time = SEC;

/// Mean packet size behind "Np" dq_threshold values.
pub const MEAN_PKTSIZE: u64 = 1500;

pub struct Pie {
    queue: PacketQueue,
    limit: Limit,
    params: PieParams,
    vars: PieVars,
    rng: Rng,
    next_update: Time,
    early_drops: u64,
    marks: u64,
}

impl Qdisc for Pie {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        let size = ctx.size(id);
        if self.queue.exceeds(self.limit, size as u64) {
            self.vars.on_drop();
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        if self
            .vars
            .drop_early(&self.params, size, self.queue.bytes(), &mut self.rng)
        {
            if self.params.ecn && self.vars.prob <= self.params.mark_ecnth && ctx.mark(id) {
                self.marks += 1;
            } else {
                self.vars.on_drop();
                self.early_drops += 1;
                ctx.drop_packet(id, DropReason::Early);
                return;
            }
        }
        self.queue.push_back(id, size);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let id = self.queue.pop_front(ctx)?;
        let sojourn = now.saturating_sub(ctx.enqueued_at(id));
        self.vars
            .on_dequeue(&self.params, ctx.size(id), sojourn, self.queue.bytes(), now);
        Some(id)
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn backlog_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, _ctx: &mut QueueCtx, now: Time) {
        while self.next_update <= now {
            self.vars.update(&self.params, self.queue.bytes());
            self.next_update += self.params.period;
        }
    }

    fn shaper_state(&mut self, s: ShaperState) {
        self.vars.shaper = Some(s);
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let mut d = self.vars.diagnostics();
        d.push(("early_drops", self.early_drops as f64));
        d.push(("ecn_marks", self.marks as f64));
        d
    }
}

pub fn new_pie(mut params: PieParams, limit: Limit, rng: Rng) -> Pie {
    params.buffer_bytes = match limit {
        Limit::Bytes(b) => b,
        Limit::Packets(n) => n * params.mtu as u64,
    };
    Pie {
        queue: PacketQueue::default(),
        limit,
        vars: PieVars::new(&params),
        next_update: params.first_update(),
        params,
        rng,
        early_drops: 0,
        marks: 0,
    }
}

fn build(params: &Value, link: &LinkInfo, rng: Rng) -> Built<Pie> {
    let buffer = read(params, Buffer::default(), link)?;
    let p = read(params, PieParams::profile(Profile::Rfc8033, link.mtu), link)?;
    let resolved = merge(written(&buffer), written(&p));
    Ok((new_pie(p, buffer.limit(), rng), resolved))
}

pub static INFO: [QdiscInfo<Pie>; 1] = [QdiscInfo {
    name: "pie",
    summary: "Proportional Integral controller Enhanced: random early drop driven by queueing delay",
    reference: "RFC 8033; Linux sch_pie (current and 3.14); Pan et al. HPSR 2013",
    params: &[Group::of::<Buffer>(), Group::of::<PieParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use crate::units::{tx_time, US};
    use serde_json::json;

    fn link(rate: u64) -> LinkInfo {
        LinkInfo {
            rate_bps: rate,
            mtu: 1500,
            limit: None,
            wifi: false,
        }
    }

    fn make(p: Value, rate: u64) -> Pie {
        build(&p, &link(rate), Rng::from_seed(9)).unwrap().0
    }

    fn rfc() -> PieParams {
        PieParams::profile(Profile::Rfc8033, 1500)
    }

    #[test]
    fn bypass_rules() {
        let p = rfc();
        let mut rng = Rng::from_seed(1);
        let mut v = PieVars::new(&p);
        v.burst = 0;
        v.prob = 0.5;
        v.qdelay_old = 100 * MS;
        // <= 2 mean packets (RFC): never.
        assert!((0..1000).all(|_| !v.drop_early(&p, 1500, 3000, &mut rng)));
        // qdelay_old < target/2 and prob < 20 %: never, even with a large backlog.
        v.prob = 0.19;
        v.qdelay_old = 7 * MS;
        assert!((0..1000).all(|_| !v.drop_early(&p, 1500, 100_000, &mut rng)));
        // Linux: backlog < 2 MTU, and the current qdelay instead of qdelay_old.
        let l = PieParams::profile(Profile::Linux, 1500);
        v.prob = 0.5;
        v.qdelay = 100 * MS;
        assert!((0..1000).all(|_| !v.drop_early(&l, 1500, 2999, &mut rng)));
        assert!((0..1000).any(|_| v.drop_early(&l, 1500, 3000, &mut rng)));
        v.prob = 0.19;
        v.qdelay = 7 * MS;
        v.qdelay_old = 100 * MS;
        assert!((0..1000).all(|_| !v.drop_early(&l, 1500, 100_000, &mut rng)));
    }

    #[test]
    fn burst_allowance_blocks_drops_for_max_burst() {
        let p = rfc();
        let mut rng = Rng::from_seed(1);
        let mut v = PieVars::new(&p);
        v.prob = 0.9;
        let mut k = 0;
        while v.burst > 0 {
            v.qdelay = 100 * MS;
            v.prob = 0.9;
            assert!((0..100).all(|_| !v.drop_early(&p, 1500, 100_000, &mut rng)));
            v.update(&p, 100_000);
            k += 1;
        }
        assert_eq!(k, 10); // 150 ms of 15 ms updates
        assert!((0..100).any(|_| v.drop_early(&p, 1500, 100_000, &mut rng)));
    }

    #[test]
    fn constant_delay_at_target_keeps_prob() {
        let p = rfc();
        let mut v = PieVars::new(&p);
        v.prob = 0.05;
        v.qdelay = p.target;
        v.qdelay_old = p.target;
        v.update(&p, 100_000);
        assert_eq!(v.prob, 0.05);
    }

    #[test]
    fn first_update_auto_tune_and_decades() {
        let p = rfc();
        let mut v = PieVars::new(&p);
        v.qdelay = 50 * MS;
        v.update(&p, 100_000);
        let expect = (0.125 * (0.050 - 0.015) + 1.25 * 0.050) / 2048.0;
        assert!((v.prob - expect).abs() < 1e-15, "{} vs {expect}", v.prob);
        // The same PI step is 4x larger per decade: prob 0.0005 (/32) vs 0.005 (/8).
        let step = |prob: f64| {
            let mut v = PieVars::new(&p);
            v.prob = prob;
            v.qdelay = 30 * MS;
            v.qdelay_old = 30 * MS;
            v.update(&p, 100_000);
            v.prob - prob
        };
        assert!((step(0.005) / step(0.0005) - 4.0).abs() < 1e-9);
        assert!((step(0.05) / step(0.005) - 4.0).abs() < 1e-9);
        assert!((step(0.5) / step(0.05) - 2.0).abs() < 1e-9);
        // Three-tier (2013): /8 below 1 %, /2 below 10 %, /1 above.
        let mut t = PieParams::profile(Profile::Pie2013, 1500);
        t.estimator = Estimator::Timestamp;
        let step3 = |prob: f64| {
            let mut v = PieVars::new(&t);
            v.prob = prob;
            v.qdelay = 30 * MS;
            v.qdelay_old = 30 * MS;
            v.update(&t, 100_000);
            v.prob - prob
        };
        let raw = 0.125 * 0.010;
        assert!((step3(0.0005) - raw / 8.0).abs() < 1e-15);
        assert!((step3(0.005) - raw / 8.0).abs() < 1e-15);
        assert!((step3(0.05) - raw / 2.0).abs() < 1e-15);
        assert!((step3(0.5) - raw).abs() < 1e-15);
    }

    #[test]
    fn two_percent_cap_and_250ms_rule() {
        for (profile, q, expect) in [
            (Profile::Rfc8033, 200 * MS, 0.22),
            (Profile::Rfc8033, 300 * MS, 0.22),
            (Profile::Linux, 200 * MS, 0.22),
            (Profile::Linux, 300 * MS, 0.24),
        ] {
            let p = PieParams::profile(profile, 1500);
            let mut v = PieVars::new(&p);
            v.prob = 0.2;
            v.qdelay = q;
            v.update(&p, 100_000);
            assert!((v.prob - expect).abs() < 1e-12, "{profile:?} {q}: {}", v.prob);
        }
    }

    #[test]
    fn decay_rfc_vs_linux() {
        for (profile, f) in [(Profile::Rfc8033, 0.98), (Profile::Linux, 63.0 / 64.0)] {
            let p = PieParams::profile(profile, 1500);
            let mut v = PieVars::new(&p);
            v.prob = 0.5;
            v.update(&p, 0);
            v.update(&p, 0);
            // Each update: the alpha term (0 - target) * alpha (prob >= 10 %: unscaled), then decay.
            let pi = 0.125 * 0.015;
            let expect = ((0.5 - pi) * f - pi) * f;
            assert!((v.prob - expect).abs() < 1e-12, "{profile:?}");
        }
    }

    #[test]
    fn hz_rounding_of_t_update() {
        for (hz, profile, expect) in [
            (250, "linux", 16 * MS),
            (100, "linux", 20 * MS),
            (300, "linux", 16_666_666),
            (1000, "linux", 15 * MS),
            (250, "pie2013", 32 * MS),
            (0, "linux", 15 * MS),
        ] {
            let q = make(json!({"profile": profile, "hz": hz}), 10_000_000);
            assert_eq!(q.params.period, expect, "{hz} {profile}");
        }
    }

    /// CBR at twice the link rate for `secs`; returns (early drops, tail drops).
    fn overload(q: &mut Pie, rate: u64, secs: u64) -> (usize, usize) {
        let mut h = Harness::new();
        let pkt = tx_time(1500, rate);
        let mut next_arr = 0;
        let mut next_tx = 0;
        let mut busy_until = 0;
        let end = secs * SEC;
        loop {
            let t = next_arr.min(next_tx).min(q.next_update);
            if t > end {
                break;
            }
            if t == q.next_update {
                h.timer(q, t);
            } else if t == next_arr {
                h.enqueue(q, 0, 1500, Ecn::NotEct, t);
                next_arr += pkt / 2;
            } else {
                if t >= busy_until && h.dequeue(q, t).is_some() {
                    busy_until = t + pkt;
                }
                next_tx = t + pkt;
            }
        }
        let early = h.drops.iter().filter(|d| d.1 == DropReason::Early).count();
        (early, h.drops.len() - early)
    }

    #[test]
    fn pie2013_never_measures_at_2mbps_with_10_packet_threshold() {
        for hz in [0, 100, 250, 1000] {
            let mut q = make(
                json!({"profile": "pie2013", "dq_threshold": "10p", "t_update": "30ms", "limit": "100p", "hz": hz}),
                2_000_000,
            );
            let (early, tail) = overload(&mut q, 2_000_000, 20);
            assert_eq!(early, 0, "hz {hz}");
            assert!(tail > 0);
            assert_eq!(q.vars.cycles_done, 0);
            assert!(q.vars.cycles_abandoned > 100);
            assert_eq!(q.vars.burst, 100 * MS);
        }
        // PIEthresh (5 packets) and PIEupdate (60 ms) let it work.
        for p in [
            json!({"dq_threshold": "5p"}),
            json!({"dq_threshold": "10p", "t_update": "60ms"}),
        ] {
            let mut p = p;
            p["profile"] = json!("pie2013");
            p["limit"] = json!("100p");
            let mut q = make(p.clone(), 2_000_000);
            let (early, _) = overload(&mut q, 2_000_000, 20);
            assert!(early > 0, "{p}");
            assert!(q.vars.cycles_done > 0);
        }
    }

    #[test]
    fn rate_estimator_blind_with_small_buffer() {
        // RFC/Linux rate estimator, dq_threshold 16384 B, a 10-packet buffer at 2 Mb/s: the cycle
        // never starts, PIE degenerates to tail drop.
        for profile in ["rfc8033", "linux"] {
            let mut q = make(
                json!({"profile": profile, "estimator": "rate", "limit": "10p"}),
                2_000_000,
            );
            let (early, tail) = overload(&mut q, 2_000_000, 10);
            assert_eq!(early, 0);
            assert!(tail > 0);
            assert_eq!(q.vars.cycles_done, 0);
        }
        // The timestamp estimator controls the same overload with early drops.
        let mut q = make(json!({"limit": "100p"}), 2_000_000);
        let (early, _) = overload(&mut q, 2_000_000, 10);
        assert!(early > 0);
    }

    #[test]
    fn resolved_defaults_and_validation() {
        let (_, r) = build(&json!({}), &link(10_000_000), Rng::from_seed(1)).unwrap();
        assert_eq!(r["profile"], "rfc8033");
        assert_eq!(r["target"], "15ms");
        assert_eq!(r["dq_threshold"], "16384B");
        assert_eq!(r["limit"], "1000p");
        let (_, r) = build(
            &json!({"profile": "pie2013", "dq_threshold": "10p"}),
            &link(10_000_000),
            Rng::from_seed(1),
        )
        .unwrap();
        assert_eq!(r["dq_threshold"], "15000B");
        assert_eq!(r["t_update"], "30ms");
        let e = build(&json!({"decay": 1.5}), &link(1), Rng::from_seed(1))
            .err()
            .unwrap();
        assert!(e.contains("decay"), "{e}");
        assert!(build(&json!({"profile": "x"}), &link(1), Rng::from_seed(1)).is_err());
    }

    #[test]
    fn holds_delay_near_target_under_overload() {
        for profile in ["rfc8033", "linux"] {
            let mut q = make(json!({"profile": profile}), 10_000_000);
            let mut h = Harness::new();
            let pkt = tx_time(1500, 10_000_000);
            let (mut sum, mut n) = (0u64, 0u64);
            let (mut arrivals, mut drops_at_5s) = (0u64, None);
            let mut t = 0;
            let mut k = 0u64;
            while t < 20 * SEC {
                if t >= q.next_update {
                    h.timer(&mut q, t);
                }
                h.enqueue(&mut q, 0, 1500, Ecn::NotEct, t);
                if t > 5 * SEC {
                    arrivals += 1;
                    drops_at_5s.get_or_insert(h.drops.len());
                }
                if k.is_multiple_of(2) {
                    if let Some(id) = h.dequeue(&mut q, t) {
                        if t > 5 * SEC {
                            sum += t - h.pool.get(id).enqueued_at;
                            n += 1;
                        }
                        h.pool.release(id);
                    }
                }
                k += 1;
                t += pkt / 2;
            }
            let mean = sum as f64 / n as f64 / MS as f64;
            // Target 15 ms; holding an unresponsive 2x overload means dropping half the arrivals
            // (drop_prob itself ends higher where derandomisation skips drops).
            assert!((8.0..30.0).contains(&mean), "{profile}: mean sojourn {mean} ms");
            let frac = (h.drops.len() - drops_at_5s.unwrap()) as f64 / arrivals as f64;
            assert!((frac - 0.5).abs() < 0.02, "{profile}: drop fraction {frac}");
            assert!(h.drops.iter().all(|d| d.1 == DropReason::Early));
        }
    }

    #[test]
    fn ecn_marks_below_mark_ecnth_and_drops_above() {
        let mut q = make(json!({"ecn": true, "derandomize": false}), 10_000_000);
        let mut h = Harness::new();
        for _ in 0..10 {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect0, 0);
        }
        assert!(h.drops.is_empty() && h.marks.is_empty());
        q.vars.burst = 0;
        q.vars.qdelay_old = 100 * MS;
        q.vars.prob = 0.1;
        for _ in 0..200 {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect0, 0);
            h.dequeue(&mut q, 0);
        }
        assert!(!h.marks.is_empty() && h.drops.is_empty());
        q.vars.prob = 0.5;
        let before = h.marks.len();
        for _ in 0..200 {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect0, 0);
        }
        assert_eq!(h.marks.len(), before);
        assert!(h.drops.len() > 50 && h.drops.iter().all(|d| d.1 == DropReason::Early));
    }

    fn docsis() -> PieParams {
        let mut p = PieParams::profile(Profile::Docsis, 1500);
        p.period = p.t_update;
        p.rate_bps = 10_000_000;
        // 100 ms at 10 Mb/s (MULPI's default upstream target buffer): 125000 B.
        p.buffer_bytes = 125_000;
        p
    }

    /// The delay estimate from a token bucket (ns-3 `CmNetDevice::ExpectedDelay`), by hand:
    /// 10000 B queued, 4000 B of tokens, 20 Mb/s sustained, 40 Mb/s peak: 6000 B x 8 / 20 Mb/s
    /// = 2.4 ms beyond the tokens, 4000 B x 8 / 40 Mb/s = 0.8 ms within them.
    #[test]
    fn token_bucket_delay_vectors() {
        let s = |peak_rate| ShaperState {
            msr_tokens: 0,
            msr_tokens_last_request: 0,
            max_rate: 20_000_000,
            peak_rate,
        };
        assert_eq!(token_bucket_delay(10_000, 4000, s(40_000_000)), 3200 * US);
        // no Peak Traffic Rate: what the tokens cover leaves at once
        assert_eq!(token_bucket_delay(10_000, 4000, s(0)), 2400 * US);
        assert_eq!(token_bucket_delay(3000, 4000, s(40_000_000)), 600 * US);
        assert_eq!(token_bucket_delay(3000, 4000, s(0)), 0);
        // an empty bucket: the configured estimate, bytes over the Max Sustained Rate
        assert_eq!(token_bucket_delay(10_000, 0, s(40_000_000)), 4 * MS);
        // DOCSIS-PIE's update reads it: 37500 B queued (30 ms at 10 Mb/s) with 25000 B of
        // tokens and no peak is 10 ms, the target, where `configured` reads 30 ms.
        let mut p = docsis();
        p.estimator = Estimator::TokenBucket;
        let mut v = PieVars::new(&p);
        v.shaper = Some(ShaperState {
            msr_tokens: 25_000,
            msr_tokens_last_request: 5_000,
            max_rate: 10_000_000,
            peak_rate: 0,
        });
        v.update(&p, at_10m(30));
        assert_eq!(v.qdelay, 10 * MS);
        // with the tokens as the last request left them, 5000 B: (37500 - 5000) x 8 / 10 Mb/s
        // = 26 ms
        p.estimator = Estimator::TokenBucketLastRequest;
        v.update(&p, at_10m(30));
        assert_eq!(v.qdelay, 26 * MS);
        let mut v = PieVars::new(&docsis());
        v.update(&docsis(), at_10m(30));
        assert_eq!(v.qdelay, 30 * MS);
    }

    /// Bytes that take `ms` milliseconds at 10 Mb/s (1250 B per ms).
    fn at_10m(ms: u64) -> u64 {
        ms * 1250
    }

    /// RFC 8034 Appendix A's control path, worked by hand: qdelay = bytes x 8 / rate,
    /// p = A (qdelay - LATENCY_TARGET) + B (qdelay - qdelay_old), scaled by the table.
    #[test]
    fn docsis_update_vectors() {
        let p = docsis();
        assert_eq!((p.target, p.period, p.max_burst), (10 * MS, 16 * MS, 142 * MS));
        let step = |prob: f64, old_ms: u64, now_ms: u64| {
            let mut v = PieVars::new(&p);
            v.prob = prob;
            v.qdelay_old = old_ms * MS;
            v.update(&p, at_10m(now_ms));
            v
        };
        // 25000 B at 10 Mb/s = 20 ms; p = 0.25 x 0.010 + 2.5 x 0.020 = 0.0525, /2048 (prob 0).
        let v = step(0.0, 0, 20);
        assert_eq!(v.qdelay, 20 * MS);
        assert!((v.prob - 0.0525 / 2048.0).abs() < 1e-15, "{}", v.prob);
        // qdelay = qdelay_old = 8 ms: p = 0.25 x -0.002 = -0.0005; the extended rows: x2 below 1
        // (0.5 -> 0.499), x8 below 10 (5 -> 4.996), x32 above (12 -> 11.984); no decay (8 >= 5 ms).
        assert!((step(0.5, 8, 8).prob - 0.499).abs() < 1e-12);
        assert!((step(5.0, 8, 8).prob - 4.996).abs() < 1e-12);
        assert!((step(12.0, 8, 8).prob - 11.984).abs() < 1e-12);
        // RFC 8033's table (table_ext off) stops at /1: 0.5 - 0.0005.
        let mut off = p;
        off.table_ext = false;
        let mut v = PieVars::new(&off);
        v.prob = 0.5;
        v.qdelay_old = 8 * MS;
        v.update(&off, at_10m(8));
        assert!((v.prob - 0.4995).abs() < 1e-12);
        // Both delays 4 ms < LATENCY_LOW 5 ms: p = 0.25 x -0.006 = -0.0015, x2 -> 0.497, x 0.98.
        assert!((step(0.5, 4, 4).prob - 0.497 * 0.98).abs() < 1e-12);
        // 250 ms > LATENCY_HIGH: p = 0.25 x 0.240 = 0.06, /2 (prob below 10 %) = 0.03, no cap
        // (prob below 10 %), + 0.02: 0.05 -> 0.10.
        assert!((step(0.05, 250, 250).prob - 0.10).abs() < 1e-12);
        // The 2 % cap and +2 % each update up to PROB_LOW x 1024 / 64 = 13.6.
        let mut v = PieVars::new(&p);
        v.prob = 13.5;
        let mut seen = vec![];
        for _ in 0..3 {
            v.qdelay_old = 300 * MS;
            v.update(&p, at_10m(300));
            seen.push(v.prob);
        }
        for (got, want) in seen.iter().zip([13.54, 13.58, 13.6]) {
            assert!((got - want).abs() < 1e-9, "{seen:?}");
        }
    }

    /// RFC 8034 Appendix A's data path: the size-scaled probability, the bypass rules after the
    /// accumulation, and derandomisation.
    #[test]
    fn docsis_drop_early_vectors() {
        let p = docsis();
        let mut rng = Rng::from_seed(3);
        let mut v = PieVars::new(&p);
        v.burst_state = BurstState::InBurst;
        v.prob = 0.1;
        v.qdelay_old = 20 * MS;
        // 1024-byte packets: 0.1 each, so accu_prob_ 0.1 .. 0.8 < PROB_LOW for eight packets.
        for k in 1..=8 {
            assert!(!v.drop_early(&p, 1024, 50_000, &mut rng));
            assert!((v.accu - 0.1 * k as f64).abs() < 1e-12);
        }
        // 64-byte packets count 1/16: 0.00625.
        v.drop_early(&p, 64, 50_000, &mut rng);
        assert!((v.accu - 0.80625).abs() < 1e-12);
        // At most 2 x MEAN_PKTSIZE = 2048 B queued: no drop, yet the probability is accumulated.
        v.accu = 0.0;
        v.prob = 5.0;
        assert!((0..20).all(|_| !v.drop_early(&p, 1500, 2048, &mut rng)));
        // Each packet adds min(5 x 1500 / 1024, 0.85) = 0.85: 20 of them 17.
        assert!((v.accu - 17.0).abs() < 1e-9);
        // qdelay_old below target/2 with drop_prob below 20 %: no drop.
        v.accu = 0.0;
        v.prob = 0.19;
        v.qdelay_old = 4 * MS;
        assert!((0..100).all(|_| !v.drop_early(&p, 1500, 50_000, &mut rng)));
        // accu_prob_ >= PROB_HIGH 8.5 forces the drop: from 8.0, +0.85 -> 8.85.
        v.qdelay_old = 20 * MS;
        v.prob = 1.0;
        v.accu = 8.0;
        assert!(v.drop_early(&p, 1500, 50_000, &mut rng));
        assert_eq!(v.accu, 0.0);
        // That drop, the first of the burst, armed the allowance.
        assert_eq!(v.burst_state, BurstState::Protecting);
        assert_eq!(v.burst, 142 * MS);
    }

    /// Five updates of DOCSIS-PIE under a standing 30 ms queue (37500 B at 10 Mb/s), from rest,
    /// worked by hand from the update rule p = A (qdelay - LATENCY_TARGET) + B (qdelay -
    /// qdelay_old), scaled by drop_prob's row of the table, then added:
    /// 1. qdelay_old 0: p = 0.25 x 0.020 + 2.5 x 0.030 = 0.080; drop_prob 0 < 1e-6: /2048 =
    ///    3.90625e-5.
    /// 2. qdelay_old 30 ms: p = 0.25 x 0.020 = 0.005; 3.90625e-5 is below 1e-4: /128 =
    ///    3.90625e-5, drop_prob 7.8125e-5.
    /// 3. still below 1e-4: + 3.90625e-5 = 1.171875e-4.
    /// 4. from 1e-4 to 1e-3: /32 = 1.5625e-4, drop_prob 2.734375e-4.
    /// 5. + 1.5625e-4 = 4.296875e-4.
    #[test]
    fn docsis_pi_steps_under_a_standing_queue() {
        let p = docsis();
        let mut v = PieVars::new(&p);
        let want = [3.90625e-5, 7.8125e-5, 1.171875e-4, 2.734375e-4, 4.296875e-4];
        for (k, w) in want.iter().enumerate() {
            v.update(&p, at_10m(30));
            assert_eq!(v.qdelay, 30 * MS);
            assert!((v.prob - w).abs() < 1e-15, "update {}: {} vs {w}", k + 1, v.prob);
        }
        // No drop was made, so no burst allowance was armed and none is counted down.
        assert_eq!((v.burst, v.burst_state), (0, BurstState::NoBurst));
    }

    /// The decay and the +2 % come before drop_prob is bounded, and the decay excludes the +2 %
    /// (the order of DOCSIS-PIE's update in RFC 8034 Appendix A, as ns-2's calculate_p and ns-3's
    /// CalculateDropProb write it). By hand:
    /// * drop_prob 13.59, qdelay 4 ms, qdelay_old 0: p = 0.25 x (0.004 - 0.010) + 2.5 x 0.004 =
    ///   0.0085, x32 (drop_prob above 10) = 0.272, capped at 0.02: 13.61; both delays below 5 ms:
    ///   x 0.98 = 13.3378, within 13.6. (Bounding first, then decaying, would give 13.328.)
    /// * latency_low raised to 300 ms, both delays 250 ms, drop_prob 0.05: p = 0.25 x 0.240 =
    ///   0.06, /2 = 0.03; 0.08 x 0.98 = 0.0784 and no +2 % (both would give 0.098).
    #[test]
    fn docsis_decay_before_the_bound_and_instead_of_the_boost() {
        let p = docsis();
        let mut v = PieVars::new(&p);
        v.prob = 13.59;
        v.update(&p, at_10m(4));
        assert!((v.prob - 13.3378).abs() < 1e-12, "{}", v.prob);
        let mut q = p;
        q.latency_low = 300 * MS;
        let mut v = PieVars::new(&q);
        v.prob = 0.05;
        v.qdelay_old = 250 * MS;
        v.update(&q, at_10m(250));
        assert!((v.prob - 0.0784).abs() < 1e-12, "{}", v.prob);
    }

    /// The burst state machine of RFC 8034 Appendix A, step by step.
    #[test]
    fn docsis_burst_states() {
        let p = docsis();
        let mut rng = Rng::from_seed(5);
        let mut v = PieVars::new(&p);
        assert_eq!((v.burst, v.burst_state), (0, BurstState::NoBurst));
        v.prob = 1.0;
        v.qdelay_old = 50 * MS;
        // Below BUFFER_SIZE / 3 = 41666 B: no drop, still NOBURST, nothing accumulated.
        assert!((0..50).all(|_| !v.drop_early(&p, 1500, 41_665, &mut rng)));
        assert_eq!((v.burst_state, v.accu), (BurstState::NoBurst, 0.0));
        // From a third on: INBURST, then drops; the first arms MAX_BURST.
        let mut k = 0;
        while !v.drop_early(&p, 1500, 41_666, &mut rng) {
            assert_eq!(v.burst_state, BurstState::InBurst);
            k += 1;
        }
        assert!(k < 10);
        assert_eq!((v.burst_state, v.burst), (BurstState::Protecting, 142 * MS));
        // While the allowance lasts: no drop, drop_prob held at 0 even with 100 ms queued;
        // 142 ms of 16 ms updates: 142 -> 126 -> ... -> 14 -> 0, nine updates.
        let mut n = 0;
        while v.burst > 0 {
            assert!((0..20).all(|_| !v.drop_early(&p, 1500, 125_000, &mut rng)));
            v.update(&p, at_10m(100));
            assert_eq!(v.prob, 0.0);
            n += 1;
        }
        assert_eq!(n, 9);
        // Quiet updates (empty queue): the first ends the protection, then more than 1 s of them
        // (16 ms x 63 = 1008 ms > 1000 ms; 62 would be 992 ms) end the burst.
        v.update(&p, 0); // qdelay_old was 100 ms: not quiet yet
        assert_eq!(v.burst_state, BurstState::Protecting);
        v.update(&p, 0);
        assert_eq!(v.burst_state, BurstState::InBurst);
        for _ in 0..62 {
            v.update(&p, 0);
        }
        assert_eq!(v.burst_state, BurstState::InBurst);
        v.update(&p, 0);
        assert_eq!(v.burst_state, BurstState::NoBurst);
    }

    #[test]
    fn docsis_profile_resolves_and_controls() {
        let (_, r) = build(
            &json!({"profile": "docsis"}),
            &link(10_000_000),
            Rng::from_seed(1),
        )
        .unwrap();
        assert_eq!(r["target"], "10ms");
        assert_eq!(r["t_update"], "16ms");
        assert_eq!(r["max_burst"], "142ms");
        assert_eq!(r["estimator"], "configured");
        assert_eq!(r["pkt_unit"], 1024);
        assert!(build(&json!({"estimator": "configured"}), &link(0), Rng::from_seed(1)).is_err());
        // An unresponsive 2x overload of 1500-byte packets: held near the 10 ms target.
        let mut q = make(json!({"profile": "docsis"}), 10_000_000);
        let (early, _) = overload(&mut q, 10_000_000, 20);
        assert!(early > 0);
        let qd = q.vars.qdelay as f64 / MS as f64;
        assert!(qd < 40.0, "{qd} ms");
    }

    #[test]
    fn linux_first_update_and_decay_skips() {
        assert_eq!(
            make(json!({"profile": "linux"}), 10_000_000).next_timer(),
            Some(500 * MS)
        );
        assert_eq!(make(json!({}), 10_000_000).next_timer(), Some(15 * MS));
        let p = PieParams::profile(Profile::Linux, 1500);
        let mut v = PieVars::new(&p);
        v.prob = 0.5;
        // Both delays 0 but packets queued: Linux applies no decay, only the PI term.
        v.update(&p, 3000);
        assert!((v.prob - (0.5 - 0.125 * 0.015)).abs() < 1e-12);
        let r = rfc();
        let mut v = PieVars::new(&r);
        v.prob = 0.5;
        v.update(&r, 3000);
        assert!((v.prob - (0.5 - 0.125 * 0.015) * 0.98).abs() < 1e-12);
    }
}
