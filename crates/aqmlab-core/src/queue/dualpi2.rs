//! DualPI2, the coupled dual-queue AQM of L4S (RFC 9332), as Linux net/sched/sch_dualpi2.c
//! implements it (defaults and structure from there):
//!
//! * Classification at enqueue by the ECN field: `ecn & ecn_mask != 0` goes to the L queue
//!   (default mask ECT(1), so ECT(1) and CE), everything else to the C queue.
//! * One PI controller (PI2) on the larger of the two queues' head sojourn times, updated every
//!   `tupdate` in Linux's fixed point: the base probability p' is a u32 fraction of 2^32 - 1,
//!   alpha and beta are taken in 1/256 Hz as Linux's netlink interface does (0.16 Hz -> 41,
//!   3.2 Hz -> 819) and scaled as dualpi2_scale_alpha_beta does, the delay error in ns; the
//!   increment is divided by `pi_divisor`: 64 (`__scale_delta`, 2^ALPHA_BETA_GRANULARITY), or 127
//!   (2^(ALPHA_BETA_GRANULARITY + 1) - 1) as `calculate_probability` of the 2019 netdev submission
//!   ("[PATCH net-next v5] sched: Add dualpi2 qdisc", 2019-08-22) and of L4STeam/linux 29c297fd
//!   divided it, which halves the effective gains.
//! * The coupled probabilities: an L packet is marked with p_L = k p' (k = `coupling`); a C
//!   packet is dropped (Not-ECT) or marked with p_C = p'^2, as two independent rolls against p'
//!   (dualpi2_classic_marking). While k p' exceeds 1 (overload) L packets are dropped with p_C
//!   when `drop_overload` is on, else marked.
//! * No PI mark or drop while the qdisc holds less than 2 MTU (after the packet is taken out).
//! * The step AQM of the L queue: an L4S packet whose sojourn exceeds `step_thresh` (strictly)
//!   is marked (a Not-ECT one dropped), when the L queue held at least `min_qlen_step` packets
//!   as it arrived.
//! * The C-queue protection: a weighted round robin credit (C weight `c_protection` %, L weight
//!   the rest) starts at MTU (wc - wl), so the L queue is served first; each packet served from
//!   one queue while the other waits moves the credit by its size times the other's weight.
//! * The PI marks and drops happen at dequeue (`drop_early` off, the default) or at enqueue.
//!
//! `lld` (Low Latency DOCSIS, the dual queue of the DOCSIS 3.1 MULPI spec, its Annexes M to P,
//! as CableLabs' ns-3 DOCSIS model implements them) is the same queue with the options of its L
//! queue:
//!
//! * `l_aqm = "ramp"`: the L queue's native AQM (MULPI's Immediate AQM) marks at enqueue with a
//!   probability rising linearly from MINTH to MAXTH on the L queue's delay estimated with the
//!   arriving packet in it (its bytes over the hop's rate): MAXTH `maxth` 1 ms, the ramp 2^`lg_range`
//!   ns (19: 524 us) wide, MINTH raised to at least FLOOR = 2 frames of 2000 B at the hop's rate;
//!   an L packet is marked with max(p_native, min(k p', 1)) (the combining function of RFC 9332's
//!   example pseudocode, Appendix A, and of MULPI's Annex N, ns-3 `DualQueueCoupledAqm::Iaqm`),
//!   and no PI roll or step applies at its dequeue. The ramp's thresholds as ns-3's
//!   `InitializeParams` derives them (MULPI C.2.2.7.15.4 and .5 for MAXTH and the range).
//! * queue protection (`qprot`, RFC 9957, see `qprot.rs`): a flow whose queuing score is too high
//!   while the L queue's delay exceeds CRITICALqL (default MAXTH) has its packet sent to the C
//!   queue instead. The delay it is given is the ramp's (the L queue's bytes with the arrival, over
//!   the rate), its probability the ramp's p_native, as ns-3's `DoEnqueue` passes them. It needs
//!   the ramp: `qprot` with `l_aqm = "step"` is refused.
//! * coupling k = 2 (MULPI C.2.2.7.17.5, the AQM Coupling Factor, in tenths: ns-3's
//!   `CouplingFactor` defaults to 2; RFC 9332's example pseudocode, Appendix A, sets k = 2 too),
//!   the C queue's target 10 ms (MULPI C.2.2.7.15.2, the Classic AQM Latency Target; ns-3's
//!   `ClassicAqmLatencyTarget`).
//!
//! Not modelled in `lld`: MULPI's classic AQM is DOCSIS-PIE's controller (Annex M: p_C =
//! drop_prob, p' = sqrt(p_C), ns-3 `CalculateDropProb`); here the C queue keeps PI2 (RFC 9332's
//! alpha 0.16, beta 3.2 on p'), and a sanctioned packet meets PI2 at dequeue, not DOCSIS-PIE's
//! drop at enqueue (ns-3 `ClassicEnqueue`). The inter-queue scheduler is the WRR of Linux, not
//! MULPI's weighted DRR (weight 230/256), and the L marking draws at random instead of MULPI's
//! deterministic recurrence (ns-3 `Recur`).
//!
//! Left out: the tc filters and skb priority classification (the LLLL class), the byte-based
//! `memory_limit` on skb truesize and GSO splitting (every packet here is one MTU-sized
//! segment at most), the step threshold in packets.

use super::qprot::{Qprot, QprotParams};
use super::util::{merge, over_limit, resolve_limit, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::{Ecn, PktId};
use crate::params::{check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, Dur, Limit, LimitSpec, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The probability 1 (Linux MAX_PROB, U32_MAX).
pub const MAX_PROB: u32 = u32::MAX;

/// The sub-queue codes of DualPI2's queues in `Packet::subq` (names in [`super::SUBQUEUES`]).
pub const SUBQ_L: u8 = 1;
pub const SUBQ_C: u8 = 2;

/// Which ECN codepoints go to the L queue (Linux TCA_DUALPI2_ECN_MASK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EcnMask {
    /// ECT(1) and CE (the L4S identifier, RFC 9331)
    L4sEct,
    /// ECT(0) and CE
    ClaEct,
    /// any ECT codepoint and CE
    AnyEct,
}

impl EcnMask {
    /// The mask on the two ECN bits.
    fn bits(self) -> u8 {
        match self {
            EcnMask::L4sEct => 1,
            EcnMask::ClaEct => 2,
            EcnMask::AnyEct => 3,
        }
    }
}

/// The L queue's own AQM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LAqm {
    /// Linux: mark at dequeue when the sojourn exceeds step_thresh
    Step,
    /// DOCSIS Immediate AQM: a ramp from MINTH to MAXTH on the queue's delay at enqueue
    Ramp,
}

/// DualPI2's keys (Linux dualpi2_reset_default for the defaults).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// both queues' packets together ("10000p" or bytes); default the link's limit, else 10000p
    #[schemars(with = "LimitSpec")]
    pub limit: Option<LimitSpec>,
    /// PI2 target queueing delay; 15ms / 10ms (lld: MULPI's classic AQM latency target)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub target: Time,
    /// probability update period; 16ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub tupdate: Time,
    /// integral gain, Hz (quantised to 1/256 Hz as Linux's netlink value); 0.16
    pub alpha: f64,
    /// proportional gain, Hz (quantised to 1/256 Hz); 3.2
    pub beta: f64,
    /// the divisor of the PI increment: 64 (Linux __scale_delta) or 127 (the 2019 submission's
    /// calculate_probability); 64
    pub pi_divisor: u32,
    /// the L queue's step marking threshold on sojourn time; 1ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub step_thresh: Time,
    /// L-queue packets at an arrival below which the step does not apply to it; 0
    pub min_qlen_step: u32,
    /// coupling factor k: p_L = k p'; 2
    pub coupling: u32,
    /// C-queue weight of the starvation protection, percent; 10
    pub c_protection: u32,
    /// on overload (k p' > 1) drop L packets with p_C instead of marking them all; on
    pub drop_overload: bool,
    /// apply the PI drop/mark at enqueue instead of dequeue; off
    pub drop_early: bool,
    /// the codepoints classified into the L queue: l4s_ect (ECT(1), CE), cla_ect, any_ect
    pub ecn_mask: EcnMask,
    /// the L queue's own AQM: step (dualpi2) / ramp (lld: MULPI's Immediate AQM)
    pub l_aqm: LAqm,
    /// MAXTH of the ramp, the L queue delay marked with probability 1; 1ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub maxth: Time,
    /// log2 of the ramp's width in ns (MINTH = MAXTH - 2^lg_range, at least 2 frames of 2000 B
    /// at the hop's rate); 19
    pub lg_range: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            limit: None,
            target: 15 * MS,
            tupdate: 16 * MS,
            alpha: 0.16,
            beta: 3.2,
            pi_divisor: PI_DIVISORS[0],
            step_thresh: MS,
            min_qlen_step: 0,
            coupling: 2,
            c_protection: 10,
            drop_overload: true,
            drop_early: false,
            ecn_mask: EcnMask::L4sEct,
            l_aqm: LAqm::Step,
            maxth: MS,
            lg_range: 19,
        }
    }
}

impl Config {
    /// `lld`'s defaults: the DOCSIS MULPI values of the L queue's Immediate AQM (MAXTH 1 ms,
    /// LG_RANGE 19), coupling factor 2, classic latency target 10 ms.
    pub fn lld() -> Config {
        Config {
            target: 10 * MS,
            l_aqm: LAqm::Ramp,
            ..Config::default()
        }
    }
}

impl Params<LinkInfo> for Config {
    fn finish(&mut self, link: &LinkInfo) -> Result<(), String> {
        // the link's limit when the table has none, else Linux's 10000 packets
        let own = self
            .limit
            .or_else(|| link.limit.is_none().then_some(LimitSpec(Limit::Packets(10_000))));
        self.limit = Some(LimitSpec(resolve_limit(own, link)?));
        check_time("target", self.target, 0, 10 * SEC)?;
        check_time("tupdate", self.tupdate, 1, 10 * SEC)?;
        // Linux accepts 1 to 2^23 - 1 in 1/256 Hz
        check_range("alpha", self.alpha, 1.0 / 256.0, 32_767.0)?;
        check_range("beta", self.beta, 1.0 / 256.0, 32_767.0)?;
        if !PI_DIVISORS.contains(&self.pi_divisor) {
            let [today, then] = PI_DIVISORS;
            return Err(format!(
                "pi_divisor: {} is not allowed; allowed {today} or {then}",
                self.pi_divisor
            ));
        }
        check_time("step_thresh", self.step_thresh, 0, 10 * SEC)?;
        check_range("coupling", self.coupling, 1, 255)?;
        check_range("c_protection", self.c_protection, 0, 100)?;
        check_time("maxth", self.maxth, 1, 65_535_000)?;
        check_range("lg_range", self.lg_range, 0, 25)?;
        Ok(())
    }
}

/// The PI increment's divisors: 2^6 (today's `__scale_delta`) and 2^7 - 1 (2019-2020).
pub const PI_DIVISORS: [u32; 2] = [64, 127];

/// A gain in Hz as Linux holds it: in 1/256 Hz (the netlink value), then scaled to probability
/// units per ns of delay in 1/64 (dualpi2_scale_alpha_beta: value * MAX_PROB >> 2, / 1e9).
pub fn scale_gain(hz: f64) -> u64 {
    let per_256 = (hz * 256.0).round() as u64;
    ((per_256 * MAX_PROB as u64) >> 2) / SEC
}

/// The PI2 controller: the base probability p' and its update (Linux calculate_probability).
#[derive(Clone, Debug)]
pub struct Pi2 {
    pub prob: u32,
    alpha: u64,
    beta: u64,
    target: Time,
    divisor: u128,
    last_qdelay: Time,
    /// The cap on p' (MAX_PROB / k when overload is not dropped, so that p_L stays <= 1).
    cap: u32,
}

impl Pi2 {
    pub fn new(c: &Config) -> Pi2 {
        Pi2 {
            prob: 0,
            alpha: scale_gain(c.alpha),
            beta: scale_gain(c.beta),
            target: c.target,
            divisor: c.pi_divisor.into(),
            last_qdelay: 0,
            cap: if c.drop_overload {
                MAX_PROB
            } else {
                MAX_PROB / c.coupling
            },
        }
    }

    /// One update with the queueing delay `qdelay` (ns): p' += (alpha (qdelay - target) +
    /// beta (qdelay - last qdelay)) / `pi_divisor`, truncated towards 0, held within [0, 1].
    pub fn update(&mut self, qdelay: Time) {
        let err = |a: Time, b: Time| a as i128 - b as i128;
        let delta =
            err(qdelay, self.target) * self.alpha as i128 + err(qdelay, self.last_qdelay) * self.beta as i128;
        self.last_qdelay = qdelay;
        let step = delta.unsigned_abs() / self.divisor;
        let p = if delta > 0 {
            (self.prob as u128 + step).min(MAX_PROB as u128)
        } else {
            (self.prob as u128).saturating_sub(step)
        };
        self.prob = (p as u32).min(self.cap);
    }
}

/// What the PI part decided for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Mark,
    Drop,
}

/// The coupled decision for one packet of class `l4s` with base probability `prob` and
/// coupling `k`; `roll(p)` is true with probability p / MAX_PROB (Linux dualpi2_roll:
/// a random u32 <= p). Linux must_drop with dualpi2_classic_marking / dualpi2_scalable_marking.
pub fn pi_verdict(
    prob: u32,
    k: u32,
    l4s: bool,
    ect: bool,
    drop_overload: bool,
    roll: &mut impl FnMut(u64) -> bool,
) -> Verdict {
    let p_l = prob as u64 * k as u64;
    let overload = p_l > MAX_PROB as u64;
    let mut squared = || roll(prob as u64) && roll(prob as u64);
    if !l4s {
        return match squared() {
            false => Verdict::Pass,
            true if overload || !ect => Verdict::Drop,
            true => Verdict::Mark,
        };
    }
    if overload {
        return if drop_overload && squared() {
            Verdict::Drop
        } else {
            Verdict::Mark
        };
    }
    match roll(p_l) {
        false => Verdict::Pass,
        true if !ect => Verdict::Drop,
        true => Verdict::Mark,
    }
}

/// Sets CE on an ECT packet; a packet already CE (marked upstream, or by the PI part just before
/// the step) stays as it is and is not counted again.
fn mark(id: PktId, ctx: &mut QueueCtx) {
    if ctx.pool.get(id).ecn != Ecn::Ce {
        ctx.mark(id);
    }
}

/// What DualPI2 keeps of a queued packet besides its id (Linux dualpi2_skb_cb).
#[derive(Clone, Copy)]
struct Entry {
    /// The step threshold applies (an L4S packet, the L queue long enough at its arrival).
    apply_step: bool,
}

pub struct DualPi2 {
    cfg: Config,
    limit: Limit,
    mtu: u64,
    l: PacketQueue,
    c: PacketQueue,
    /// `apply_step` of the L queue's packets, in queue order.
    l_step: std::collections::VecDeque<Entry>,
    pi: Pi2,
    next_update: Time,
    /// WRR credit: <= 0 serves the L queue (when both have packets).
    credit: i64,
    credit_init: i64,
    rng: Rng,
    stats: Stats,
    /// The ramp's MINTH and MAXTH (ns) after the floor, and the hop's rate (bit/s).
    ramp: (Time, Time),
    rate_bps: u64,
    qprot: Option<Qprot>,
}

#[derive(Clone, Copy, Default)]
struct Stats {
    pi_marks: u64,
    step_marks: u64,
    pi_drops: u64,
    step_drops: u64,
    overlimit: u64,
    ramp_marks: u64,
}

impl DualPi2 {
    pub fn new(cfg: Config, qp: QprotParams, link: &LinkInfo, mut rng: Rng) -> DualPi2 {
        let mtu = link.mtu;
        let wc = cfg.c_protection as i64;
        let credit_init = mtu as i64 * (wc - (100 - wc));
        // MULPI: MINTH = max(MAXTH - RANGE, FLOOR), MAXTH = MINTH + RANGE, at most 65.535 ms.
        let range: Time = 1 << cfg.lg_range;
        let floor = if link.rate_bps == 0 {
            0
        } else {
            (2 * RAMP_FRAME * 8 * SEC as u128 / link.rate_bps as u128).min(65_535_000) as Time
        };
        let minth = cfg.maxth.saturating_sub(range).max(floor);
        let ramp = (minth, (minth + range).min(65_535_000));
        let qprot = qp.qprot.then(|| Qprot::new(qp, ramp.1, rng.next_u64()));
        DualPi2 {
            ramp,
            rate_bps: link.rate_bps,
            qprot,
            limit: cfg.limit.expect("resolved").0,
            mtu: mtu as u64,
            l: PacketQueue::default(),
            c: PacketQueue::default(),
            l_step: Default::default(),
            pi: Pi2::new(&cfg),
            next_update: cfg.tupdate,
            credit: credit_init,
            credit_init,
            rng,
            stats: Stats::default(),
            cfg,
        }
    }

    /// The base probability p' (fraction of MAX_PROB).
    pub fn prob(&self) -> u32 {
        self.pi.prob
    }

    fn is_l4s(&self, ecn: Ecn) -> bool {
        ecn as u8 & self.cfg.ecn_mask.bits() != 0
    }

    /// The PI decision for packet `id` (Linux must_drop), marking it when that is the verdict.
    fn must_drop(&mut self, id: PktId, l4s: bool, ctx: &mut QueueCtx) -> bool {
        if self.backlog_bytes() < 2 * self.mtu {
            return false;
        }
        let ect = ctx.pool.get(id).ecn.capable();
        let rng = &mut self.rng;
        let mut roll = |p: u64| (rng.next_u64() >> 32) <= p;
        match pi_verdict(
            self.pi.prob,
            self.cfg.coupling,
            l4s,
            ect,
            self.cfg.drop_overload,
            &mut roll,
        ) {
            Verdict::Pass => false,
            Verdict::Mark => {
                mark(id, ctx);
                self.stats.pi_marks += 1;
                false
            }
            Verdict::Drop => true,
        }
    }

    /// Takes the next packet by the WRR (Linux dequeue_packet): returns it, whether it came from
    /// the L queue with its step flag, and the credit change to apply if it is sent.
    fn pick(&mut self, ctx: &QueueCtx) -> Option<(PktId, Option<Entry>, i64)> {
        let (wc, wl) = (self.cfg.c_protection as i64, 100 - self.cfg.c_protection as i64);
        if !self.l.is_empty() && (self.c.is_empty() || self.credit <= 0) {
            let id = self.l.pop_front(ctx)?;
            let e = self.l_step.pop_front();
            let change = if self.c.is_empty() { 0 } else { wc };
            Some((id, e, change * ctx.size(id) as i64))
        } else if let Some(id) = self.c.pop_front(ctx) {
            let change = if self.l.is_empty() { 0 } else { -wl };
            Some((id, None, change * ctx.size(id) as i64))
        } else {
            self.credit = self.credit_init;
            None
        }
    }

    /// The step AQM of an L-queue packet (Linux do_step_aqm): true when it must be dropped.
    fn step(&mut self, id: PktId, e: Entry, ctx: &mut QueueCtx, now: Time) -> bool {
        if !e.apply_step || now.saturating_sub(ctx.enqueued_at(id)) <= self.cfg.step_thresh {
            return false;
        }
        if !ctx.pool.get(id).ecn.capable() {
            return true;
        }
        mark(id, ctx);
        self.stats.step_marks += 1;
        false
    }

    /// MULPI's qdelayCoupledL: the L queue's bytes with `size` more over the hop's rate (ns).
    fn l_delay(&self, size: u32) -> Time {
        if self.rate_bps == 0 {
            return 0;
        }
        ((self.l.bytes() + size as u64) as u128 * 8 * SEC as u128 / self.rate_bps as u128) as Time
    }

    /// The ramp's probability at L queue delay `q` (MULPI's Immediate AQM).
    pub fn prob_native(&self, q: Time) -> f64 {
        let (min, max) = self.ramp;
        if q >= max {
            1.0
        } else if q > min {
            (q - min) as f64 / (max - min) as f64
        } else {
            0.0
        }
    }

    /// The larger head sojourn of the two queues (Linux get_queue_delays).
    fn qdelay(&self, ctx: &QueueCtx, now: Time) -> Time {
        let head = |q: &PacketQueue| q.front().map_or(0, |id| now.saturating_sub(ctx.enqueued_at(id)));
        head(&self.l).max(head(&self.c))
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        let size = ctx.size(id);
        let mut l4s = self.is_l4s(ctx.pool.get(id).ecn);
        ctx.pool.get_mut(id).subq = if l4s { SUBQ_L } else { SUBQ_C };
        if over_limit(
            self.limit,
            self.backlog_packets() + 1,
            self.backlog_bytes() + size as u64,
        ) {
            self.stats.overlimit += 1;
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        if l4s && self.cfg.l_aqm == LAqm::Ramp {
            let q = self.l_delay(size);
            let native = self.prob_native(q);
            let coupled = (self.pi.prob as f64 * self.cfg.coupling as f64 / MAX_PROB as f64).min(1.0);
            if self.rng.bernoulli(native.max(coupled)) && ctx.pool.get(id).ecn != Ecn::Ce && ctx.mark(id) {
                self.stats.ramp_marks += 1;
            }
            if let Some(qp) = &mut self.qprot {
                if qp.protect(ctx.hash_key(id), size, q, native, now) {
                    l4s = false;
                    ctx.pool.get_mut(id).subq = SUBQ_C;
                }
            }
        }
        let ramp_l = l4s && self.cfg.l_aqm == LAqm::Ramp;
        if self.cfg.drop_early && !ramp_l && self.must_drop(id, l4s, ctx) {
            self.stats.pi_drops += 1;
            ctx.drop_packet(id, DropReason::Early);
            return;
        }
        if l4s {
            let apply_step =
                self.cfg.l_aqm == LAqm::Step && self.l.len() as u64 >= self.cfg.min_qlen_step as u64;
            self.l.push_back(id, size);
            self.l_step.push_back(Entry { apply_step });
        } else {
            self.c.push_back(id, size);
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        while let Some((id, entry, change)) = self.pick(ctx) {
            let ramp_l = entry.is_some() && self.cfg.l_aqm == LAqm::Ramp;
            if !self.cfg.drop_early && !ramp_l && self.must_drop(id, entry.is_some(), ctx) {
                self.stats.pi_drops += 1;
                ctx.drop_packet(id, DropReason::Head);
                continue;
            }
            if let Some(e) = entry {
                if self.step(id, e, ctx, now) {
                    self.stats.step_drops += 1;
                    ctx.drop_packet(id, DropReason::Head);
                    continue;
                }
            }
            self.credit += change;
            return Some(id);
        }
        None
    }

    fn backlog_bytes(&self) -> u64 {
        self.l.bytes() + self.c.bytes()
    }

    fn backlog_packets(&self) -> u64 {
        (self.l.len() + self.c.len()) as u64
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
        while self.next_update <= now {
            let q = self.qdelay(ctx, now);
            self.pi.update(q);
            self.next_update += self.cfg.tupdate;
        }
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let p = self.pi.prob as f64 / MAX_PROB as f64;
        let mut d = vec![
            ("prob_base", p),
            ("pi_marks", self.stats.pi_marks as f64),
            ("step_marks", self.stats.step_marks as f64),
            ("pi_drops", self.stats.pi_drops as f64),
            ("step_drops", self.stats.step_drops as f64),
            ("overlimit_drops", self.stats.overlimit as f64),
        ];
        // Only where the option is on: dualpi2's links table stays as it was.
        if self.cfg.l_aqm == LAqm::Ramp {
            d.push(("ramp_marks", self.stats.ramp_marks as f64));
        }
        if let Some(q) = &self.qprot {
            d.push(("qprot_sanctions", q.sanctions as f64));
        }
        d
    }

    fn subqueues(&self) -> &'static [u8] {
        &[SUBQ_L, SUBQ_C]
    }
}

/// MULPI's MAX_FRAME_SIZE (bytes), two of which at the hop's rate are the ramp's FLOOR.
pub const RAMP_FRAME: u128 = 2000;

impl Params<LinkInfo> for QprotParams {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        self.check()
    }
}

fn build_with(params: &Value, link: &LinkInfo, rng: Rng, cfg: Config, qp: QprotParams) -> Built<DualPi2> {
    let cfg = read(params, cfg, link)?;
    let qp = read(params, qp, link)?;
    // RFC 9957 scores a flow by the native AQM's probability at enqueue: only the ramp has one.
    if qp.qprot && cfg.l_aqm != LAqm::Ramp {
        return Err(
            "qprot: true needs l_aqm = \"ramp\" (queue protection scores a flow by the ramp's \
             marking probability); got l_aqm = \"step\""
                .into(),
        );
    }
    let resolved = merge(written(&cfg), written(&qp));
    Ok((DualPi2::new(cfg, qp, link, rng), resolved))
}

fn build(params: &Value, link: &LinkInfo, rng: Rng) -> Built<DualPi2> {
    build_with(params, link, rng, Config::default(), QprotParams::default())
}

fn build_lld(params: &Value, link: &LinkInfo, rng: Rng) -> Built<DualPi2> {
    let qp = QprotParams {
        qprot: true,
        ..QprotParams::default()
    };
    build_with(params, link, rng, Config::lld(), qp)
}

pub static INFO: [QdiscInfo<DualPi2>; 2] = [
    QdiscInfo {
        name: "dualpi2",
        summary: "coupled dual-queue AQM for L4S: PI2 on the larger queue delay, L queue marked with k p', C queue with p'^2, step marking in the L queue",
        reference: "RFC 9332; Linux net/sched/sch_dualpi2.c",
        params: &[Group::of::<Config>(), Group::of::<QprotParams>()],
        build,
    },
    QdiscInfo {
        name: "lld",
        summary: "Low Latency DOCSIS: dualpi2 with the L queue's Immediate AQM ramp and queue protection (flows that build a queue sanctioned to the C queue)",
        reference: "RFC 9957; RFC 9332; DOCSIS 3.1 MULPI (Immediate AQM, Queue Protection annexes)",
        params: &[Group::of::<Config>(), Group::of::<QprotParams>()],
        build: build_lld,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::testutil::Harness;
    use serde_json::json;

    fn make(p: Value) -> DualPi2 {
        let link = LinkInfo {
            rate_bps: 100_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(3)).unwrap().0
    }

    #[test]
    fn defaults_are_linux_dualpi2_reset_default() {
        let (_, r) = build(
            &json!({}),
            &LinkInfo {
                rate_bps: 1,
                mtu: 1500,
                limit: None,
                wifi: false,
            },
            Rng::from_seed(1),
        )
        .unwrap();
        assert_eq!(
            r,
            json!({"limit": "10000p", "target": "15ms", "tupdate": "16ms", "alpha": 0.16, "beta": 3.2,
                   "pi_divisor": 64, "step_thresh": "1ms", "min_qlen_step": 0, "coupling": 2, "c_protection": 10,
                   "drop_overload": true, "drop_early": false, "ecn_mask": "l4s_ect",
                   "l_aqm": "step", "maxth": "1ms", "lg_range": 19, "qprot": false,
                   "critical_ql": "0s", "critical_score": "4ms", "lg_aging": 19, "bi_size": 5,
                   "attempts": 2, "max_score": "5s"})
        );
    }

    fn make_lld(rate: u64) -> DualPi2 {
        let link = LinkInfo {
            rate_bps: rate,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build_lld(&json!({}), &link, Rng::from_seed(3)).unwrap().0
    }

    /// MULPI's ramp thresholds by hand: RANGE = 2^19 ns = 524288 ns, FLOOR = 2 x 2000 B x 8 at
    /// the rate; MINTH = max(MAXTH - RANGE, FLOOR), MAXTH = MINTH + RANGE.
    #[test]
    fn lld_ramp_thresholds_and_probability() {
        // 100 Mb/s: FLOOR 320 us < 1 ms - 524288 ns = 475712 ns, so MINTH 475712, MAXTH 1 ms.
        let q = make_lld(100_000_000);
        assert_eq!(q.ramp, (475_712, 1_000_000));
        assert_eq!(q.prob_native(475_712), 0.0);
        assert_eq!(q.prob_native(475_712 + 262_144), 0.5);
        assert_eq!(q.prob_native(1_000_000), 1.0);
        // 20 Mb/s: FLOOR = 32000 bits / 20 Mb/s = 1.6 ms, so MINTH 1.6 ms, MAXTH 2124288 ns.
        let q = make_lld(20_000_000);
        assert_eq!(q.ramp, (1_600_000, 2_124_288));
        // CRITICALqL defaults to MAXTH.
        assert_eq!(q.qprot.as_ref().unwrap().critical_ql(), 2_124_288);
        // The L queue's delay with a 1500 B arrival behind 3000 B: 4500 x 8 / 20 Mb/s = 1.8 ms,
        // (1.8 - 1.6) / 0.524288 = 0.3815 of the ramp.
        let mut q = q;
        let mut h = Harness::new();
        h.enqueue(&mut q, 1, 1500, Ecn::Ect1, 0);
        h.enqueue(&mut q, 1, 1500, Ecn::Ect1, 0);
        assert_eq!(q.l_delay(1500), 1_800_000);
        assert!((q.prob_native(1_800_000) - 200_000.0 / 524_288.0).abs() < 1e-12);
    }

    /// Queue protection scores flows by the ramp's probability: asking for it with the step AQM
    /// is refused, naming both keys, rather than silently protecting nothing.
    #[test]
    fn qprot_needs_the_ramp() {
        let link = LinkInfo {
            rate_bps: 20_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let bad = [
            build(&json!({"qprot": true}), &link, Rng::from_seed(1)),
            build_lld(&json!({"l_aqm": "step"}), &link, Rng::from_seed(1)),
        ];
        for r in bad {
            let e = r.err().expect("refused");
            assert!(
                e.contains("qprot") && e.contains("l_aqm") && e.contains("step"),
                "{e}"
            );
        }
        assert!(build_lld(
            &json!({"l_aqm": "step", "qprot": false}),
            &link,
            Rng::from_seed(1)
        )
        .is_ok());
        assert!(build(&json!({"qprot": true, "l_aqm": "ramp"}), &link, Rng::from_seed(1)).is_ok());
    }

    /// Queue protection in the queue: an unresponsive flow marking itself ECT(1) at 1.5x the
    /// rate is sanctioned to the C queue; a 2 Mb/s L4S flow sharing the L queue is not (its
    /// score, 1500 x 2048 ns = 3.07 ms per packet at most, ages 6 ms between its packets, so
    /// qdelay x score stays below CRITICALqL x 4 ms).
    #[test]
    fn lld_sanctions_the_queue_builder_only() {
        let rate = 100_000_000;
        let mut q = make_lld(rate);
        let mut h = Harness::new();
        let tx = crate::units::tx_time(1500, rate);
        let (mut next_a, mut next_b, mut next_tx) = (0, 0, 0);
        let (mut a_c, mut a_l, mut b_c, mut b_l) = (0, 0, 0, 0);
        let end = 2 * SEC;
        while next_a.min(next_b).min(next_tx) < end {
            let t = next_a.min(next_b).min(next_tx);
            if t >= q.next_update {
                h.timer(&mut q, t);
            }
            if t == next_a {
                let id = h.enqueue(&mut q, 1, 1500, Ecn::Ect1, t);
                if !h.was_dropped(id) {
                    *(if h.pool.get(id).subq == SUBQ_C {
                        &mut a_c
                    } else {
                        &mut a_l
                    }) += 1;
                }
                next_a += tx * 2 / 3;
            } else if t == next_b {
                let id = h.enqueue(&mut q, 2, 1500, Ecn::Ect1, t);
                *(if h.pool.get(id).subq == SUBQ_C {
                    &mut b_c
                } else {
                    &mut b_l
                }) += 1;
                next_b += 6 * MS;
            } else {
                if let Some(id) = h.dequeue(&mut q, t) {
                    h.pool.release(id);
                }
                next_tx += tx;
            }
        }
        // The L queue serves it at up to 90 % of the rate (the WRR's share): the excess, about
        // a third and more of its packets, is ejected to the C queue.
        assert!(3 * a_c > a_c + a_l, "builder: {a_c} sanctioned, {a_l} in L");
        assert_eq!(b_c, 0, "the L4S flow: {b_c} sanctioned, {b_l} in L");
        assert!(b_l > 300);
    }

    #[test]
    fn gains_are_scaled_as_linux() {
        // 0.16 Hz = 41/256 Hz: 41 * (2^32 - 1) >> 2 = 44023414773, / 1e9 = 44;
        // 3.2 Hz = 819/256 Hz: 819 * (2^32 - 1) >> 2 = 879394553651, / 1e9 = 879
        assert_eq!(scale_gain(0.16), 44);
        assert_eq!(scale_gain(3.2), 879);
    }

    #[test]
    fn pi2_update_step_by_hand() {
        let mut pi = Pi2::new(&Config::default());
        // 20 ms against 15 ms, previous 0: (5e6 * 44 + 20e6 * 879) / 64 = 278125000
        pi.update(20 * MS);
        assert_eq!(pi.prob, 278_125_000);
        // again 20 ms: only the integral term, 5e6 * 44 / 64 = 3437500
        pi.update(20 * MS);
        assert_eq!(pi.prob, 281_562_500);
        // RFC 9332 A.1 in real numbers: alpha * 5 ms = 0.16 * 0.005 = 0.0008 of 2^32 - 1; the
        // fixed point is within 0.1 % of it (41/256 Hz is 0.16015625 Hz)
        let rfc = 0.16 * 0.005 * MAX_PROB as f64;
        assert!((3_437_500.0 / rfc - 1.0).abs() < 1e-3);
        // 10 ms: -(5e6 * 44 + 10e6 * 879) / 64 = -140781250
        pi.update(10 * MS);
        assert_eq!(pi.prob, 140_781_250);
        // an empty queue: -(15e6 * 44 + 10e6 * 879) / 64 = -147656250, held at 0
        pi.update(0);
        assert_eq!(pi.prob, 0);
        // and never above 1
        pi.update(10 * SEC);
        pi.update(10 * SEC);
        assert_eq!(pi.prob, MAX_PROB);
        // without drop on overload p' stops at 1/k, so that p_L = k p' stays at most 1
        let mut capped = Pi2::new(&Config {
            drop_overload: false,
            ..Config::default()
        });
        capped.update(10 * SEC);
        assert_eq!(capped.prob, MAX_PROB / 2);
    }

    #[test]
    fn pi_divisor_127_is_the_2019_submissions_increment() {
        // calculate_probability of the 2019 submission: (alpha err + beta derr) / (2^7 - 1),
        // truncated towards 0: 20 ms against 15 ms, previous 0: (5e6 * 44 + 20e6 * 879) / 127 =
        // 140157480.3; then 10 ms: -(5e6 * 44 + 10e6 * 879) / 127 = -70944881.9
        let mut pi = Pi2::new(&Config {
            pi_divisor: 127,
            ..Config::default()
        });
        pi.update(20 * MS);
        assert_eq!(pi.prob, 140_157_480);
        pi.update(10 * MS);
        assert_eq!(pi.prob, 140_157_480 - 70_944_881);
        let link = LinkInfo {
            rate_bps: 1,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let err = build(&json!({"pi_divisor": 100}), &link, Rng::from_seed(1))
            .err()
            .unwrap();
        assert_eq!(err, "pi_divisor: 100 is not allowed; allowed 64 or 127");
    }

    /// The probabilities each roll was asked for, answering from `answers`.
    fn verdict(
        prob: u32,
        l4s: bool,
        ect: bool,
        drop_overload: bool,
        answers: &[bool],
    ) -> (Verdict, Vec<u64>) {
        let mut asked = vec![];
        let mut it = answers.iter();
        let mut roll = |p: u64| {
            asked.push(p);
            *it.next().expect("a scripted answer")
        };
        let v = pi_verdict(prob, 2, l4s, ect, drop_overload, &mut roll);
        (v, asked)
    }

    #[test]
    fn coupled_probabilities_p_l_is_k_p_and_p_c_is_p_squared() {
        let p = MAX_PROB / 10; // p' = 0.1
                               // L: one roll against k p' = 0.2
        assert_eq!(
            verdict(p, true, true, true, &[true]),
            (Verdict::Mark, vec![2 * p as u64])
        );
        assert_eq!(
            verdict(p, true, true, true, &[false]),
            (Verdict::Pass, vec![2 * p as u64])
        );
        // C: two independent rolls against p' (p_C = p'^2); ECT marked, Not-ECT dropped
        assert_eq!(
            verdict(p, false, true, true, &[true, true]),
            (Verdict::Mark, vec![p as u64; 2])
        );
        assert_eq!(
            verdict(p, false, false, true, &[true, true]),
            (Verdict::Drop, vec![p as u64; 2])
        );
        assert_eq!(
            verdict(p, false, false, true, &[true, false]),
            (Verdict::Pass, vec![p as u64; 2])
        );
        assert_eq!(
            verdict(p, false, false, true, &[false]),
            (Verdict::Pass, vec![p as u64])
        );
        // overload (k p' = 1.2 > 1): C drops even ECT packets; L drops with p'^2, else marks
        let o = MAX_PROB / 10 * 6;
        assert_eq!(verdict(o, false, true, true, &[true, true]).0, Verdict::Drop);
        assert_eq!(
            verdict(o, true, true, true, &[true, true]),
            (Verdict::Drop, vec![o as u64; 2])
        );
        assert_eq!(verdict(o, true, true, true, &[true, false]).0, Verdict::Mark);
        assert_eq!(verdict(o, true, true, false, &[]), (Verdict::Mark, vec![]));
    }

    #[test]
    fn marking_frequencies_follow_the_coupling() {
        // 10 packets of each class kept queued, p' = 0.1: L packets (ECT(1)) are marked with
        // p_L = 0.2, C packets (Not-ECT) dropped with p_C = 0.01
        let mut q = make(json!({}));
        let mut h = Harness::new();
        q.pi.prob = MAX_PROB / 10;
        let (mut l_sent, mut l_marks, mut c_sent, mut c_drops) = (0, 0, 0, 0);
        while c_sent + c_drops < 100_000 {
            while q.l.len() < 10 {
                h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
            }
            while q.c.len() < 10 {
                h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
            }
            h.drops.clear();
            let id = h.dequeue(&mut q, 0).unwrap();
            c_drops += h.drops.len();
            match h.pool.get(id).subq {
                SUBQ_L => {
                    l_sent += 1;
                    l_marks += usize::from(h.pool.get(id).ecn == Ecn::Ce);
                }
                _ => c_sent += 1,
            }
        }
        let p_l = l_marks as f64 / l_sent as f64;
        let p_c = c_drops as f64 / (c_sent + c_drops) as f64;
        assert!((p_l - 0.2).abs() < 0.005, "p_L {p_l}");
        assert!((p_c - 0.01).abs() < 0.002, "p_C {p_c}");
    }

    #[test]
    fn classification_by_the_ecn_field() {
        let cases = [
            ("l4s_ect", [SUBQ_C, SUBQ_L, SUBQ_C, SUBQ_L]),
            ("cla_ect", [SUBQ_C, SUBQ_C, SUBQ_L, SUBQ_L]),
            ("any_ect", [SUBQ_C, SUBQ_L, SUBQ_L, SUBQ_L]),
        ];
        for (mask, want) in cases {
            let mut q = make(json!({ "ecn_mask": mask }));
            let mut h = Harness::new();
            for (ecn, w) in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce].into_iter().zip(want) {
                let id = h.enqueue(&mut q, 0, 1500, ecn, 0);
                assert_eq!(h.pool.get(id).subq, w, "{mask} {ecn:?}");
            }
        }
    }

    #[test]
    fn step_marks_l4s_packets_above_1ms_sojourn() {
        // p' = 0: only the step acts. Linux do_step_aqm marks when the sojourn exceeds the
        // threshold strictly
        let mut q = make(json!({}));
        let mut h = Harness::new();
        let a = h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
        let b = h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
        let c = h.enqueue(&mut q, 0, 1500, Ecn::Ect0, 0);
        assert_eq!(h.dequeue(&mut q, MS), Some(a));
        assert_eq!(h.pool.get(a).ecn, Ecn::Ect1);
        assert_eq!(h.dequeue(&mut q, MS + 1), Some(b));
        assert_eq!(h.pool.get(b).ecn, Ecn::Ce);
        // the C queue has no step
        assert_eq!(h.dequeue(&mut q, 10 * MS), Some(c));
        assert_eq!(h.pool.get(c).ecn, Ecn::Ect0);
        assert_eq!(h.marks, vec![b]);
        // min_qlen_step: the step applies only to packets that found that many in the L queue
        let mut q = make(json!({"min_qlen_step": 1}));
        let first = h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
        let second = h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
        h.dequeue(&mut q, 5 * MS);
        h.dequeue(&mut q, 5 * MS);
        assert_eq!(h.pool.get(first).ecn, Ecn::Ect1);
        assert_eq!(h.pool.get(second).ecn, Ecn::Ce);
        // 2019-2020 (enqueue: apply_step = qdisc_qlen(l_queue) > 1): only a packet that found two
        // or more in the L queue, min_qlen_step 2; all four wait 5 ms
        let mut q = make(json!({"min_qlen_step": 2}));
        let ids: Vec<_> = (0..4).map(|_| h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0)).collect();
        for _ in &ids {
            h.dequeue(&mut q, 5 * MS);
        }
        let marked: Vec<bool> = ids.iter().map(|&id| h.pool.get(id).ecn == Ecn::Ce).collect();
        assert_eq!(marked, [false, false, true, true]);
    }

    #[test]
    fn wrr_gives_the_c_queue_its_10_percent() {
        // credit starts at 1500 (10 - 90) = -120000: each L packet served while C waits adds
        // 10 x 1500, each C packet while L waits takes 90 x 1500: 9 L packets, then 1 C
        let mut q = make(json!({}));
        let mut h = Harness::new();
        for _ in 0..100 {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
            h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
        }
        let order: String = (0..40)
            .map(|_| {
                let id = h.dequeue(&mut q, 0).unwrap();
                if h.pool.get(id).subq == SUBQ_L {
                    'L'
                } else {
                    'C'
                }
            })
            .collect();
        assert_eq!(order, "LLLLLLLLLC".repeat(4));
        // c_protection 50: credit starts at 0, then alternates
        let mut q = make(json!({"c_protection": 50}));
        for _ in 0..4 {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect1, 0);
            h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
        }
        let subq: Vec<u8> = (0..8)
            .map(|_| {
                let id = h.dequeue(&mut q, 0).unwrap();
                h.pool.get(id).subq
            })
            .collect();
        assert_eq!(subq, [SUBQ_L, SUBQ_C].repeat(4));
    }

    #[test]
    fn no_pi_action_below_two_mtu_and_overlimit_drops() {
        // p' = 1 but 2 packets queued: after taking one out 1500 B < 3000 B remain
        let mut q = make(json!({"limit": "3p"}));
        let mut h = Harness::new();
        q.pi.prob = MAX_PROB;
        for _ in 0..3 {
            h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
        }
        let over = h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
        assert_eq!(h.drops, vec![(over, DropReason::Overlimit)]);
        // 3 queued: the first leaves 3000 B: dropped (p_C = 1); the second leaves 1500 B: sent,
        // and so is the last
        let got = h.dequeue(&mut q, 0);
        assert_eq!(h.drops.len(), 2);
        assert!(got.is_some());
        assert!(h.dequeue(&mut q, 0).is_some());
        assert_eq!(h.drops.len(), 2);
    }

    #[test]
    fn the_first_update_is_one_tupdate_after_start() {
        let mut q = make(json!({}));
        let mut h = Harness::new();
        assert_eq!(q.next_timer(), Some(16 * MS));
        h.enqueue(&mut q, 1, 1500, Ecn::NotEct, 0);
        h.timer(&mut q, 16 * MS);
        // head sojourn 16 ms: (1e6 * 44 + 16e6 * 879) / 64 = 14108e6 / 64
        assert_eq!(q.prob(), 220_437_500);
        assert_eq!(q.next_timer(), Some(32 * MS));
    }
}
