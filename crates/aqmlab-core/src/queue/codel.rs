//! CoDel (RFC 8289), with the variants of docs/disciplines.md 4.2 (CoDel variants) selectable:
//!
//! * `variant` presets: `rfc` (default: RFC 8289 count recall, `now >= first_above_time`, fixed
//!   MTU guard, exact float 1/sqrt(count)), `linux` (RFC recall, strict `now > first_above_time`,
//!   fixed guard, Newton-step 1/sqrt(count) as codel.h), `linux35` (original Linux 3.5: recall
//!   `(count - lastcount) | 1`, max-packet-seen guard starting at 0, strict, Newton), `ns2`
//!   (Nichols/Jacobson codel.cc: recall `count - 1`, max-packet-seen guard starting at 256 B, `>=`)
//!   and `sfqcodel` (recall `count - 2` within 8 intervals, max-seen from 256 B, `>=`).
//!   Every knob can also be set alone (`recall`, `mtu_guard`, `mtu`, `newton`, `strict`,
//!   `empty_reset`).
//! * A dequeue that finds the queue empty: the RFC pseudocode (and ns-2) also clears
//!   first_above_time; Linux's codel_dequeue (and ns-3's CoDelQueueDisc) only leaves the dropping
//!   state and keeps it (`empty_reset = false`, variants `linux` and `linux35`).
//! * Time is kept in ns (Linux uses 1024-ns units; not emulated). The fixed guard is one MTU of
//!   IP bytes (1500 by default, where Linux uses psched_mtu = 1514 L2 bytes).
//! * ECN (off by default, as sch_codel): an ECT packet is CE-marked instead of dropped; the mark
//!   counts like a drop. `ce_threshold` adds DCTCP-style marking of packets whose sojourn exceeds it.
//!
//! [`CodelParams`] + [`CodelVars`] are the one CoDel state machine, used here and by fq_codel and
//! sfq_codel through the [`CodelSource`] trait (the source decides which backlog the MTU guard sees).

use super::util::{merge, Buffer, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_bytes, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, as_size, fmt_time, Dur, Limit, Size, Time, MS, SEC};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// The count-recall rule applied when re-entering the dropping state (docs/disciplines.md 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Recall {
    /// RFC 8289 / Linux >= 2015: count - lastcount if > 1 and within 16 intervals, else 1.
    Rfc,
    /// Linux 3.5: (count - lastcount) | 1 within 16 intervals, else 1.
    Linux35,
    /// ns-2 codel.cc: count - 1 if count > 1 and within 16 intervals, else 1.
    Ns2,
    /// ns-2 sfqcodel.cc: count - 2 if count > 2 and within 8 intervals, else 1.
    Sfqcodel,
}

/// What the "queue holds at most one MTU" guard compares the backlog with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Guard {
    /// A constant (the `mtu` parameter).
    Fixed,
    /// The largest packet seen so far (starting at `mtu`), as old Linux and ns-2.
    MaxSeen,
}

/// The CoDel presets (see the module header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    Rfc,
    Linux,
    Linux35,
    Ns2,
    Sfqcodel,
}

/// The CoDel keys, shared by the codel, fq_codel and sfq_codel tables; a `variant` names a preset
/// of the variant knobs.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodelParams {
    /// acceptable standing sojourn time; default 5ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub target: Time,
    /// sliding window (about a worst-case RTT); default 100ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub interval: Time,
    /// preset: rfc (default for codel), linux (default for fq_codel), linux35, ns2, sfqcodel
    /// (default for sfq_codel)
    pub variant: Variant,
    /// count-recall rule on re-entry: rfc, linux35, ns2, sfqcodel
    pub recall: Recall,
    /// no drop while backlog <= guard: fixed (mtu) or max_seen (largest packet so far, from mtu)
    #[serde(rename = "mtu_guard")]
    pub guard: Guard,
    /// guard bytes (fixed) or starting value (max_seen); default link MTU (1500, IP bytes) / 0
    /// (linux35) / 256 (ns2, sfqcodel)
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub mtu: u64,
    /// Linux Newton-step approximation of 1/sqrt(count) (Q0.16) instead of exact
    pub newton: bool,
    /// first drop when now > first_above_time (Linux) instead of >= (RFC)
    pub strict: bool,
    /// CE-mark ECT packets instead of dropping; off (codel, sfq_codel) / on (fq_codel)
    pub ecn: bool,
    /// "off", or a sojourn above which ECT packets are CE-marked (DCTCP style): a duration, or
    /// { threshold = "1ms", selector = 1, mask = 1 } to mark only the packets whose TOS byte
    /// has tos & mask == selector (Linux fq_codel ce_threshold_selector; 1/1: ECT(1) and CE)
    #[serde(with = "ce_threshold")]
    #[schemars(with = "CeThresholdSchema")]
    pub ce_threshold: Option<CeThreshold>,
    /// a dequeue finding the queue empty clears first_above_time (RFC, ns-2) or keeps it (Linux)
    pub empty_reset: bool,
    /// A sub-queue left empty counts as below target (sfq_codel `empty_bin = "below"`).
    #[serde(skip)]
    pub empty_is_below: bool,
    /// A pop that finds the queue empty leaves first_above_time alone (sfq_codel
    /// `off_schedule = "keep"`: 2012 sfqcodel.cc `dodeque` returns before its above-target test).
    #[serde(skip)]
    pub empty_keeps_above: bool,
}

impl CodelParams {
    /// Defaults of a variant (see the module header).
    pub fn variant(variant: Variant, mtu: u32) -> CodelParams {
        let base = CodelParams {
            target: 5 * MS,
            interval: 100 * MS,
            variant,
            recall: Recall::Rfc,
            guard: Guard::Fixed,
            mtu: mtu as u64,
            newton: false,
            strict: false,
            ecn: false,
            ce_threshold: None,
            empty_reset: true,
            empty_is_below: false,
            empty_keeps_above: false,
        };
        match variant {
            Variant::Rfc => base,
            Variant::Linux => CodelParams {
                strict: true,
                newton: true,
                empty_reset: false,
                ..base
            },
            Variant::Linux35 => CodelParams {
                strict: true,
                newton: true,
                empty_reset: false,
                recall: Recall::Linux35,
                guard: Guard::MaxSeen,
                mtu: 0,
                ..base
            },
            Variant::Ns2 => CodelParams {
                recall: Recall::Ns2,
                guard: Guard::MaxSeen,
                mtu: 256,
                ..base
            },
            Variant::Sfqcodel => CodelParams {
                recall: Recall::Sfqcodel,
                guard: Guard::MaxSeen,
                mtu: 256,
                ..base
            },
        }
    }
}

impl Params<LinkInfo> for CodelParams {
    const PRESET: Option<&'static str> = Some("variant");

    /// The variant's knobs; `ecn` is the discipline's (fq_codel marks by default).
    fn preset(&self, link: &LinkInfo) -> CodelParams {
        CodelParams {
            ecn: self.ecn,
            ..CodelParams::variant(self.variant, link.mtu)
        }
    }

    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_bytes("mtu", self.mtu, 0, 65_536)?;
        check_time("target", self.target, 1, 10 * SEC)?;
        check_time("interval", self.interval, 1, 100 * SEC)?;
        if self.target > self.interval {
            return Err(format!(
                "target: {} is not allowed; allowed: at most interval ({})",
                fmt_time(self.target),
                fmt_time(self.interval)
            ));
        }
        Ok(())
    }
}

/// `ce_threshold`: a sojourn above which packets are CE-marked (DCTCP style), with Linux
/// fq_codel's selector (include/net/codel_impl.h codel_dequeue: with a non-zero mask, only the
/// packets whose TOS byte, DSCP << 2 | ECN, satisfies `tos & mask == selector`; `selector = 1,
/// mask = 1` is ECT(1) and CE, the L4S identifier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CeThreshold {
    pub after: Time,
    pub selector: u8,
    pub mask: u8,
}

impl CeThreshold {
    /// Whether a packet with this TOS byte may be marked.
    #[inline]
    pub fn selects(&self, tos: u8) -> bool {
        self.mask == 0 || tos & self.mask == self.selector
    }
}

/// `ce_threshold` as written: "off" (None), a duration (every ECT packet), or a table with the
/// duration and the selector; written back in the same form (a duration when the mask is 0).
pub(super) mod ce_threshold {
    use super::CeThreshold;
    use crate::units::{as_dur, parse_time, Dur, Time};
    use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub(super) struct Selected {
        #[serde(with = "as_dur")]
        pub(super) threshold: Time,
        pub(super) selector: u8,
        pub(super) mask: u8,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Written {
        Text(String),
        Table(Selected),
    }

    pub fn serialize<S: Serializer>(t: &Option<CeThreshold>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            None => s.serialize_str("off"),
            Some(c) if c.mask == 0 => Dur(c.after).serialize(s),
            Some(c) => Selected {
                threshold: c.after,
                selector: c.selector,
                mask: c.mask,
            }
            .serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CeThreshold>, D::Error> {
        let bad = || {
            de::Error::custom(
                "allowed: \"off\", a duration, or { threshold = a duration, selector = 0-255, mask = 0-255 }",
            )
        };
        let t = match Written::deserialize(d).map_err(|_| bad())? {
            Written::Text(t) if t == "off" => return Ok(None),
            Written::Text(t) => CeThreshold {
                after: parse_time(&t).map_err(|e| de::Error::custom(format!("{e} (or \"off\")")))?,
                selector: 0,
                mask: 0,
            },
            Written::Table(s) => CeThreshold {
                after: s.threshold,
                selector: s.selector,
                mask: s.mask,
            },
        };
        if t.selector & !t.mask != 0 {
            return Err(de::Error::custom(format!(
                "selector {} has bits outside mask {}; allowed: selector & mask == selector",
                t.selector, t.mask
            )));
        }
        Ok(Some(t))
    }
}

/// The schema of `ce_threshold`.
pub(super) struct CeThresholdSchema;

impl JsonSchema for CeThresholdSchema {
    fn schema_name() -> Cow<'static, str> {
        "CeThreshold".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let byte = serde_json::json!({"type": "integer", "minimum": 0, "maximum": 255});
        let table = serde_json::json!({"type": "object", "additionalProperties": false,
            "required": ["threshold", "selector", "mask"],
            "properties": {"threshold": g.subschema_for::<Dur>(), "selector": byte, "mask": byte}});
        json_schema!({"description": "\"off\", a duration, or a duration with Linux fq_codel's TOS selector and mask",
                      "anyOf": [{"const": "off"}, g.subschema_for::<Dur>(), table]})
    }
}

/// Per-discipline CoDel statistics (and the max-packet-seen guard, which old Linux kept here).
#[derive(Clone, Debug, Default)]
pub struct CodelStats {
    pub maxpacket: u32,
    pub drops: u64,
    pub marks: u64,
    pub ce_marks: u64,
}

impl CodelStats {
    pub fn new(p: &CodelParams) -> CodelStats {
        CodelStats {
            maxpacket: p.mtu as u32,
            ..CodelStats::default()
        }
    }
}

/// Where a CoDel instance takes packets from.
pub trait CodelSource {
    /// Removes the head packet (updating the source's byte counts).
    fn pop(&mut self, ctx: &QueueCtx) -> Option<PktId>;
    /// The backlog in bytes the MTU guard compares (after the removal).
    fn guard_backlog(&self) -> u64;
    /// Whether this instance's own queue is now empty.
    fn is_empty(&self) -> bool;
}

const ONE_Q16: u16 = 0xFFFF;

/// The state of one CoDel instance.
#[derive(Clone, Debug)]
pub struct CodelVars {
    count: u32,
    lastcount: u32,
    dropping: bool,
    first_above: Option<Time>,
    drop_next: Time,
    /// 1/sqrt(count) in Q0.16 (Newton mode only).
    rec_inv_sqrt: u16,
    ldelay: Time,
}

impl Default for CodelVars {
    fn default() -> Self {
        CodelVars {
            count: 0,
            lastcount: 0,
            dropping: false,
            first_above: None,
            drop_next: 0,
            rec_inv_sqrt: ONE_Q16,
            ldelay: 0,
        }
    }
}

impl CodelVars {
    pub fn count(&self) -> u32 {
        self.count
    }
    pub fn dropping(&self) -> bool {
        self.dropping
    }
    pub fn ldelay(&self) -> Time {
        self.ldelay
    }
    /// fq_codel's fat-flow drop "tells CoDel to increase its signal strength".
    pub fn add_count(&mut self, n: u32) {
        self.count = self.count.wrapping_add(n);
    }
    /// Clears the dropping state (ns-2 sfqcodel when a bin is emptied by drops).
    pub fn reset_dropping(&mut self) {
        self.dropping = false;
        self.first_above = None;
    }

    /// One Newton-Raphson step y' = y (3 - count y^2) / 2, in Q0.32 arithmetic stored in 16 bits.
    fn newton_step(&mut self) {
        let y = (self.rec_inv_sqrt as u128) << 16;
        let y2 = (y * y) >> 32;
        let three = 3u128 << 32;
        let v = three.saturating_sub(self.count as u128 * y2);
        let r = (v * y) >> 33;
        self.rec_inv_sqrt = (r >> 16).min(ONE_Q16 as u128) as u16;
    }

    fn control_law(&self, t: Time, p: &CodelParams) -> Time {
        if p.newton {
            t + ((p.interval as u128 * ((self.rec_inv_sqrt as u128) << 16)) >> 32) as Time
        } else {
            t + (p.interval as f64 / (self.count.max(1) as f64).sqrt()) as Time
        }
    }

    fn should_drop<S: CodelSource>(
        &mut self,
        pkt: Option<PktId>,
        p: &CodelParams,
        st: &mut CodelStats,
        src: &S,
        ctx: &QueueCtx,
        now: Time,
    ) -> bool {
        let Some(id) = pkt else {
            if !p.empty_keeps_above {
                self.first_above = None;
            }
            return false;
        };
        let sojourn = now.saturating_sub(ctx.enqueued_at(id));
        self.ldelay = sojourn;
        let guard = match p.guard {
            Guard::Fixed => p.mtu,
            Guard::MaxSeen => {
                st.maxpacket = st.maxpacket.max(ctx.size(id));
                st.maxpacket as u64
            }
        };
        if sojourn < p.target || src.guard_backlog() <= guard || (p.empty_is_below && src.is_empty()) {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + p.interval);
                false
            }
            Some(t) => {
                if p.strict {
                    now > t
                } else {
                    now >= t
                }
            }
        }
    }

    fn recall(&mut self, p: &CodelParams, now: Time) {
        let since = now as i128 - self.drop_next as i128;
        let within = |k: u64| since < (k as i128) * p.interval as i128;
        let delta = self.count.wrapping_sub(self.lastcount);
        let recalled = match p.recall {
            Recall::Rfc if delta > 1 && within(16) => Some(delta),
            Recall::Linux35 if within(16) => Some(delta | 1),
            Recall::Ns2 if self.count > 1 && within(16) => Some(self.count - 1),
            Recall::Sfqcodel if self.count > 2 && within(8) => Some(self.count - 2),
            _ => None,
        };
        match recalled {
            Some(c) if c > 1 || p.recall == Recall::Linux35 => {
                self.count = c.max(1);
                if p.newton {
                    self.newton_step();
                }
            }
            _ => {
                self.count = 1;
                self.rec_inv_sqrt = ONE_Q16;
            }
        }
        self.lastcount = self.count;
    }

    fn drop_or_mark(&mut self, id: PktId, p: &CodelParams, st: &mut CodelStats, ctx: &mut QueueCtx) -> bool {
        if p.ecn && ctx.mark(id) {
            st.marks += 1;
            true
        } else {
            ctx.drop_packet(id, DropReason::Head);
            st.drops += 1;
            false
        }
    }

    /// The CoDel dequeue (RFC 8289 section 5): takes packets from `src`, dropping or marking on the
    /// way, and returns the packet to send.
    pub fn dequeue<S: CodelSource>(
        &mut self,
        p: &CodelParams,
        st: &mut CodelStats,
        src: &mut S,
        ctx: &mut QueueCtx,
        now: Time,
    ) -> Option<PktId> {
        let mut pkt = src.pop(ctx);
        if pkt.is_none() && !p.empty_reset {
            // Linux: an empty queue ends the dropping state but keeps first_above_time.
            self.dropping = false;
            return None;
        }
        let mut ok = self.should_drop(pkt, p, st, src, ctx, now);
        let mut marked = false;
        if self.dropping {
            if !ok {
                self.dropping = false;
            } else {
                while self.dropping && now >= self.drop_next {
                    self.count = self.count.wrapping_add(1);
                    if p.newton {
                        self.newton_step();
                    }
                    let id = pkt.expect("ok implies a packet");
                    if self.drop_or_mark(id, p, st, ctx) {
                        marked = true;
                        self.drop_next = self.control_law(self.drop_next, p);
                        break;
                    }
                    pkt = src.pop(ctx);
                    ok = self.should_drop(pkt, p, st, src, ctx, now);
                    if !ok {
                        self.dropping = false;
                    } else {
                        self.drop_next = self.control_law(self.drop_next, p);
                    }
                }
            }
        } else if ok {
            let id = pkt.expect("ok implies a packet");
            if self.drop_or_mark(id, p, st, ctx) {
                marked = true;
            } else {
                pkt = src.pop(ctx);
                self.should_drop(pkt, p, st, src, ctx, now);
            }
            self.dropping = true;
            self.recall(p, now);
            self.drop_next = self.control_law(now, p);
        }
        if let (Some(id), Some(ce), false) = (pkt, p.ce_threshold, marked) {
            if now.saturating_sub(ctx.enqueued_at(id)) > ce.after && ce.selects(ctx.tos(id)) && ctx.mark(id) {
                st.ce_marks += 1;
            }
        }
        pkt
    }
}

/// A plain FIFO as a CoDel source (the guard sees its own backlog).
impl CodelSource for PacketQueue {
    fn pop(&mut self, ctx: &QueueCtx) -> Option<PktId> {
        self.pop_front(ctx)
    }
    fn guard_backlog(&self) -> u64 {
        self.bytes()
    }
    fn is_empty(&self) -> bool {
        PacketQueue::is_empty(self)
    }
}

pub struct Codel {
    queue: PacketQueue,
    limit: Limit,
    params: CodelParams,
    vars: CodelVars,
    stats: CodelStats,
}

impl Codel {
    pub fn new(params: CodelParams, limit: Limit) -> Codel {
        Codel {
            queue: PacketQueue::default(),
            limit,
            stats: CodelStats::new(&params),
            params,
            vars: CodelVars::default(),
        }
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        let size = ctx.size(id);
        if self.queue.exceeds(self.limit, size as u64) {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        self.queue.push_back(id, size);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        self.vars
            .dequeue(&self.params, &mut self.stats, &mut self.queue, ctx, now)
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn backlog_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("count", self.vars.count as f64),
            ("dropping", self.vars.dropping as u8 as f64),
            ("ldelay_ms", self.vars.ldelay as f64 / MS as f64),
            ("codel_drops", self.stats.drops as f64),
            ("codel_marks", self.stats.marks as f64),
            ("ce_marks", self.stats.ce_marks as f64),
            ("maxpacket", self.stats.maxpacket as f64),
        ]
    }
}

fn build(params: &Value, link: &LinkInfo, _rng: Rng) -> Built<Codel> {
    let buffer = read(params, Buffer::default(), link)?;
    let p = read(params, CodelParams::variant(Variant::Rfc, link.mtu), link)?;
    let resolved = merge(written(&buffer), written(&p));
    Ok((Codel::new(p, buffer.limit()), resolved))
}

pub static INFO: [QdiscInfo<Codel>; 1] = [QdiscInfo {
    name: "codel",
    summary: "Controlled Delay AQM: head drop when the minimum sojourn stays above target for an interval",
    reference: "RFC 8289; Linux sch_codel/codel_impl.h; ns-2 codel.cc",
    params: &[Group::of::<Buffer>(), Group::of::<CodelParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use crate::queue::QueueEvent;
    use crate::units::{tx_time, US};
    use std::collections::VecDeque;

    /// The variant of that name, as a scenario spells it.
    fn named(variant: &str) -> Variant {
        serde_json::from_value(serde_json::json!(variant)).expect("a variant name")
    }

    /// A source whose packets have a chosen sojourn and whose guard backlog is chosen per call.
    struct Mock {
        ids: VecDeque<PktId>,
        backlog: u64,
    }
    impl CodelSource for Mock {
        fn pop(&mut self, _: &QueueCtx) -> Option<PktId> {
            self.ids.pop_front()
        }
        fn guard_backlog(&self) -> u64 {
            self.backlog
        }
        fn is_empty(&self) -> bool {
            self.ids.is_empty()
        }
    }

    /// All driver times are offset by this (so sojourns can exceed `now`).
    const BASE: Time = crate::units::SEC;

    struct Driver {
        h: Harness,
        p: CodelParams,
        v: CodelVars,
        st: CodelStats,
        drops: Vec<Time>,
        marks: Vec<Time>,
    }

    impl Driver {
        fn new(p: CodelParams) -> Driver {
            Driver {
                h: Harness::new(),
                st: CodelStats::new(&p),
                p,
                v: CodelVars::default(),
                drops: vec![],
                marks: vec![],
            }
        }
        /// One dequeue at `now` where every packet has sojourn `soj` and the backlog stays `backlog`.
        fn step(&mut self, now: Time, soj: Time, backlog: u64, ecn: Ecn) -> Option<PktId> {
            let mut m = Mock {
                ids: VecDeque::new(),
                backlog,
            };
            for _ in 0..16 {
                let id = self.h.packet(0, 1500, ecn);
                self.h.pool.get_mut(id).enqueued_at = BASE + now - soj;
                m.ids.push_back(id);
            }
            let mut ctx = QueueCtx {
                pool: &mut self.h.pool,
                events: &mut self.h.events,
            };
            let r = self
                .v
                .dequeue(&self.p, &mut self.st, &mut m, &mut ctx, BASE + now);
            for id in m.ids {
                self.h.pool.release(id);
            }
            for e in self.h.events.drain(..) {
                match e {
                    QueueEvent::Drop(id, _) => {
                        self.drops.push(now);
                        self.h.pool.release(id);
                    }
                    QueueEvent::Mark(..) => self.marks.push(now),
                    QueueEvent::Stop => panic!("CoDel never stops the run"),
                }
            }
            r
        }
    }

    #[test]
    fn no_drop_when_backlog_at_most_one_mtu() {
        // One 1500 B packet on a 64 kbit/s link takes 187.5 ms; the one left queued is <= MTU.
        let mut d = Driver::new(CodelParams::variant(Variant::Rfc, 1500));
        let pkt = tx_time(1500, 64_000);
        for k in 1..200 {
            d.step(k * pkt, 2 * pkt, 1500, Ecn::NotEct);
        }
        assert!(d.drops.is_empty());
        // The same with sojourn below target and a large backlog.
        let mut d = Driver::new(CodelParams::variant(Variant::Rfc, 1500));
        for k in 1..20_000 {
            d.step(k * 100 * US, 4_999 * US, 1_000_000, Ecn::NotEct);
        }
        assert!(d.drops.is_empty());
    }

    #[test]
    fn first_drop_after_one_interval_strict_vs_rfc() {
        for (variant, first) in [("rfc", 100 * MS), ("linux", 101 * MS)] {
            let mut d = Driver::new(CodelParams::variant(named(variant), 1500));
            for k in 0..=150 {
                d.step(k * MS, 10 * MS, 100_000, Ecn::NotEct);
            }
            assert_eq!(d.drops[0], first, "{variant}");
        }
    }

    /// A dequeue at `now` that finds the queue empty.
    fn step_empty(d: &mut Driver, now: Time) {
        let mut m = Mock {
            ids: VecDeque::new(),
            backlog: 0,
        };
        let mut ctx = QueueCtx {
            pool: &mut d.h.pool,
            events: &mut d.h.events,
        };
        assert!(d
            .v
            .dequeue(&d.p, &mut d.st, &mut m, &mut ctx, BASE + now)
            .is_none());
    }

    /// Above target (10 ms sojourn, large backlog) from t = 0, with one dequeue at t = 50 ms that
    /// finds the queue empty. Linux's codel_dequeue returns at once on an empty queue (only the
    /// dropping state is cleared), so first_above_time (0 + 100 ms) survives and the first drop
    /// comes at the first dequeue after 100 ms (strict test), here 101 ms. The RFC pseudocode
    /// clears first_above_time on an empty queue: the interval restarts at 51 ms, first drop at 151.
    #[test]
    fn empty_dequeue_keeps_first_above_in_linux() {
        for (variant, first) in [("linux", 101 * MS), ("linux35", 101 * MS), ("rfc", 151 * MS)] {
            let mut d = Driver::new(CodelParams::variant(named(variant), 1500));
            for k in 0..=200 {
                if k == 50 {
                    step_empty(&mut d, k * MS);
                } else {
                    d.step(k * MS, 10 * MS, 100_000, Ecn::NotEct);
                }
            }
            assert_eq!(d.drops[0], first, "{variant}");
        }
    }

    fn drop_times(variant: &str, step: Time, until: Time) -> Vec<Time> {
        let mut d = Driver::new(CodelParams::variant(named(variant), 1500));
        let mut t = 0;
        while t <= until {
            d.step(t, 10 * MS, 100_000, Ecn::NotEct);
            t += step;
        }
        d.drops
    }

    #[test]
    fn drop_spacing_is_interval_over_sqrt_count() {
        let step = 10 * US;
        let drops = drop_times("rfc", step, 1_200 * MS);
        // Entry at 100 ms; gaps interval/sqrt(k), k = 1, 2, ...
        let mut exact = 100.0 * MS as f64;
        assert_eq!(drops[0], 100 * MS);
        for (k, &t) in drops.iter().enumerate().skip(1).take(10) {
            exact += 100.0 * MS as f64 / (k as f64).sqrt();
            assert!(
                (t as f64 - exact).abs() <= step as f64,
                "drop {k} at {t}, expected {exact}"
            );
        }
        // Late drops still follow the schedule (about 2 * interval * sqrt(n) after entry).
        let n = drops.len() - 1;
        assert!(n > 30);
        let exact: f64 = (1..=n).map(|k| 100.0 * MS as f64 / (k as f64).sqrt()).sum();
        assert!(((drops[n] - drops[0]) as f64 - exact).abs() <= step as f64);
    }

    #[test]
    fn linux_newton_gaps() {
        let step = 10 * US;
        let drops = drop_times("linux", step, 500 * MS);
        let gaps: Vec<f64> = drops
            .windows(2)
            .map(|w| (w[1] - w[0]) as f64 / MS as f64)
            .collect();
        let expect = [99.998, 50.00, 56.25, 48.78, 44.15];
        for (g, e) in gaps.iter().zip(expect) {
            assert!((g - e).abs() <= 0.02, "gaps {gaps:?}");
        }
    }

    /// Runs an episode from `t0`: overload until `n_drops` drops, then one below-target sojourn.
    fn episode(d: &mut Driver, t0: Time, n_drops: usize) -> Time {
        let mut t = t0;
        let start = d.drops.len();
        while d.drops.len() - start < n_drops {
            d.step(t, 10 * MS, 100_000, Ecn::NotEct);
            t += 100 * US;
        }
        d.step(t, MS, 100_000, Ecn::NotEct);
        assert!(!d.v.dropping());
        t
    }

    #[test]
    fn exit_on_below_target_and_count_recall() {
        // Episode 1: entry drop (count 1) + 4 control-law drops -> count 5, lastcount 1 (m = 4).
        for (variant, expect) in [("rfc", 4), ("ns2", 4), ("sfqcodel", 3), ("linux35", 5)] {
            let mut d = Driver::new(CodelParams::variant(named(variant), 1500));
            let t = episode(&mut d, 0, 5);
            assert_eq!(d.v.count(), 5, "{variant}");
            // Frozen after exit.
            d.step(t + MS, MS, 100_000, Ecn::NotEct);
            assert_eq!(d.v.count(), 5);
            // Re-entry within 8 intervals.
            let n = d.drops.len();
            let mut t2 = t + 10 * MS;
            while d.drops.len() == n {
                d.step(t2, 10 * MS, 100_000, Ecn::NotEct);
                t2 += 100 * US;
            }
            assert_eq!(d.v.count(), expect, "{variant}");
        }
        // RFC: with m = 1 the new episode starts at 1.
        let mut d = Driver::new(CodelParams::variant(Variant::Rfc, 1500));
        let t = episode(&mut d, 0, 2);
        assert_eq!(d.v.count(), 2);
        episode(&mut d, t + MS, 1);
        assert_eq!(d.v.count(), 1);
        // Re-entry after more than 16 intervals -> 1.
        let mut d = Driver::new(CodelParams::variant(Variant::Rfc, 1500));
        let t = episode(&mut d, 0, 6);
        episode(&mut d, t + 1_700 * MS, 1);
        assert_eq!(d.v.count(), 1);
    }

    #[test]
    fn ecn_marks_instead_of_drops() {
        let mut p = CodelParams::variant(Variant::Rfc, 1500);
        p.ecn = true;
        let mut d = Driver::new(p);
        for k in 0..=1000 {
            d.step(k * MS, 10 * MS, 100_000, Ecn::Ect0);
        }
        assert!(d.drops.is_empty());
        // Marks follow the same schedule as drops would.
        let drops = drop_times("rfc", MS, 1000 * MS);
        assert_eq!(d.marks, drops);
    }

    /// End to end through the qdisc: 2x overload of ECT traffic on a 10 Mb/s link.
    #[test]
    fn qdisc_ecn_flow_sees_marks_only_and_tail_drop_when_full() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let (mut q, res) = build(&serde_json::json!({"ecn": true}), &link, Rng::from_seed(1)).unwrap();
        assert_eq!(res["limit"], "1000p");
        assert_eq!(res["variant"], "rfc");
        let mut h = Harness::new();
        let pkt = tx_time(1500, 10_000_000);
        let mut t = 0;
        let mut next_tx = 0;
        while t < 5_000 * MS {
            h.enqueue(&mut q, 0, 1500, Ecn::Ect0, t);
            if t >= next_tx && h.dequeue(&mut q, t).is_some() {
                next_tx = t + pkt;
            }
            t += pkt / 2;
        }
        assert!(!h.marks.is_empty());
        assert!(h.drops.iter().all(|&(_, r)| r == DropReason::Overlimit));
        // Without ECN the same traffic sees head drops.
        let (mut q, _) = build(&serde_json::json!({}), &link, Rng::from_seed(1)).unwrap();
        let mut h = Harness::new();
        for k in 0..2000u64 {
            h.enqueue(&mut q, 0, 1500, Ecn::NotEct, k * pkt / 2);
            if k.is_multiple_of(2) {
                h.dequeue(&mut q, k * pkt / 2);
            }
        }
        assert!(h.drops.iter().any(|&(_, r)| r == DropReason::Head));
    }

    #[test]
    fn build_validates() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let e = build(&serde_json::json!({"variant": "bogus"}), &link, Rng::from_seed(1))
            .err()
            .unwrap();
        assert!(e.contains("variant"), "{e}");
        let e = build(&serde_json::json!({"target": "200ms"}), &link, Rng::from_seed(1))
            .err()
            .unwrap();
        assert!(e.contains("target"), "{e}");
        let nope = INFO[0].checked(&serde_json::json!({"nope": 1}), &link, Rng::from_seed(1));
        assert!(nope.is_err());
    }

    #[test]
    fn ce_threshold_marks_independently_of_the_control_law() {
        let mut p = CodelParams::variant(Variant::Rfc, 1500);
        p.ce_threshold = Some(CeThreshold {
            after: MS,
            selector: 0,
            mask: 0,
        });
        let mut d = Driver::new(p);
        // Sojourn 2 ms: below target (no CoDel action) but above ce_threshold.
        for k in 0..100 {
            d.step(k * MS, 2 * MS, 100_000, Ecn::Ect0);
        }
        assert_eq!(d.marks.len(), 100);
        assert_eq!(d.st.ce_marks, 100);
        assert!(d.drops.is_empty());
        // Non-ECT packets cannot be marked and are not dropped for it.
        let mut d = Driver::new(p);
        d.step(0, 2 * MS, 100_000, Ecn::NotEct);
        assert!(d.marks.is_empty() && d.drops.is_empty());
    }

    #[test]
    fn ce_threshold_selector_marks_only_the_selected_codepoints() {
        // Linux fq_codel `ce_threshold 1ms ce_threshold_selector 0x1/0x1`: the TOS byte's low bit
        // set, i.e. ECT(1) (01) and CE (11); ECT(0) (10) is left alone
        let mut p = CodelParams::variant(Variant::Linux, 1500);
        p.ce_threshold = Some(CeThreshold {
            after: MS,
            selector: 1,
            mask: 1,
        });
        for (ecn, marked) in [(Ecn::Ect1, true), (Ecn::Ect0, false), (Ecn::NotEct, false)] {
            let mut d = Driver::new(p);
            d.step(0, 2 * MS, 100_000, ecn);
            assert_eq!(d.marks.len(), usize::from(marked), "{ecn:?}");
            assert!(d.drops.is_empty());
        }
        // the table form is read and written back; a bare duration stays a bare duration
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let sel = serde_json::json!({"threshold": "1ms", "selector": 1, "mask": 1});
        let (_, r) = INFO[0]
            .checked(
                &serde_json::json!({ "ce_threshold": sel }),
                &link,
                Rng::from_seed(1),
            )
            .unwrap();
        assert_eq!(r["ce_threshold"], sel);
        let (_, r) = INFO[0]
            .checked(
                &serde_json::json!({"ce_threshold": "1ms"}),
                &link,
                Rng::from_seed(1),
            )
            .unwrap();
        assert_eq!(r["ce_threshold"], "1ms");
        let bad = serde_json::json!({"ce_threshold": {"threshold": "1ms", "selector": 3, "mask": 1}});
        let e = INFO[0].checked(&bad, &link, Rng::from_seed(1)).err().unwrap();
        assert!(
            e.starts_with("ce_threshold: ") && e.contains("outside mask"),
            "{e}"
        );
    }

    #[test]
    fn max_seen_guard_grows_with_packets() {
        // ns-2: the guard starts at 256 B. A 1000 B backlog of 200 B packets is above it.
        let mut d = Driver::new(CodelParams::variant(Variant::Ns2, 1500));
        for k in 0..=200 {
            d.step(k * MS, 10 * MS, 1000, Ecn::NotEct);
        }
        // The mock's packets are 1500 B, so maxpacket becomes 1500 and 1000 B is under the guard.
        assert_eq!(d.st.maxpacket, 1500);
        assert!(d.drops.is_empty());
        let mut d = Driver::new(CodelParams::variant(Variant::Rfc, 500));
        for k in 0..=200 {
            d.step(k * MS, 10 * MS, 1000, Ecn::NotEct);
        }
        assert!(!d.drops.is_empty());
    }
}
