//! sfqCoDel: Nichols & Jacobson's ns-2 queue/sfqcodel.cc (later, `quantum_` version;
//! docs/disciplines.md 6).
//!
//! * `bins` hashed bins (default 1024), one CoDel state each ([`super::codel::CodelVars`], variant
//!   `sfqcodel`: recall count - 2 within 8 intervals, max-packet-seen guard from 256 B, `>=` test).
//!   The guard compares the total backlog of all bins.
//! * `empty_bin`: what the above-target test makes of a packet that leaves its bin empty.
//!   `below` (default; the later sfqcodel.cc): it counts as below target, whatever its sojourn.
//!   `judged`: it is judged like any other packet, on its sojourn and the total backlog, as in
//!   the 2012 ns-2 queue/sfqcodel.cc (`sfqCoDelQueue::dodeque`) and the same code in the tree
//!   transients2014 cites (github.com/dtaht/ns2 queue/fqcodel.cc, `fqCoDelQueue::dodeque`).
//! * Hash: our seeded flow hash (ns-2 uses an unperturbed Jenkins hash of the addresses/ports).
//! * Scheduler: [`super::fq_sched::FqSched`]. `schedule = "circle"`: ns-2's one circular schedule
//!   (`sfqCoDelQueue::enque`, `deque`): a newly active bin is put after the other new bins and
//!   ahead of the continuing ones, except after the circle's last bin when the scan reaches it
//!   (a bin joining one served bin waits behind it); one packet per visit; an emptied bin stays
//!   listed until the scheduler reaches it. `lists` (default): the new/old lists of fq_codel with
//!   "found empty -> removed", the same order but for that exception; with `quantum` > 0 it is
//!   byte DRR with the deficit set to quantum on activation (`circle` needs `quantum = 0`).
//! * Overflow (total packets reach `limit`): before enqueuing the arrival, the tail packet of the
//!   bin with the most packets is dropped (ties prefer a bin other than the previous victim).
//! * `overflow = "tail"` selects the early version's plain tail drop of the arrival instead.
//! * `off_schedule`: a bin's CoDel state when the scheduler takes it off the schedule, found
//!   empty or emptied by its drops. `clear` (default; the later sfqcodel.cc `removebin` and its
//!   callers): it leaves the dropping state and its above-target timer starts again. `keep` (2012
//!   sfqcodel.cc): nothing is touched (`dodeque` returns at an empty queue before its test), so an
//!   interval that began before the bin emptied still runs when packets come back.
//! * ECN marks ECT packets if `ecn` (default off).

use super::codel::CodelSource;
use super::codel::{CodelParams, CodelStats, CodelVars, Variant};
use super::fq_sched::{packets, FlowSrc, FqSched};
use super::util::merge;
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_bytes, check_range, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_size, Limit, LimitSpec, Size, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub struct SfqCodel {
    sched: FqSched<CodelVars>,
    params: CodelParams,
    stats: CodelStats,
    limit: u64,
    last_victim: Option<usize>,
    overflow_drops: u64,
    /// Early ns-2 version: tail drop of the arrival instead of the largest-bin drop.
    tail_drop: bool,
    /// ns-2's circular schedule instead of the new/old lists.
    circle: bool,
    /// A bin leaving the schedule leaves the dropping state and restarts its timer.
    clear_off_schedule: bool,
}

impl SfqCodel {
    fn victim(&self) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for f in self.sched.active() {
            let n = self.sched.flows[f].fq.len();
            if n == 0 {
                continue;
            }
            best = match best {
                None => Some((f, n)),
                Some((b, bn)) if n > bn || (n == bn && Some(b) == self.last_victim) => Some((f, n)),
                keep => keep,
            };
        }
        best.map(|(f, _)| f)
    }
}

impl Qdisc for SfqCodel {
    fn flow_queues(&self) -> bool {
        true
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        if self.sched.tot.packets >= self.limit {
            if self.tail_drop {
                self.overflow_drops += 1;
                ctx.drop_packet(id, DropReason::Overlimit);
                return;
            }
            if let Some(v) = self.victim() {
                let d = self.sched.pop_tail(v, ctx).expect("victim has packets");
                ctx.drop_packet(d, DropReason::FatFlow);
                self.last_victim = Some(v);
                self.overflow_drops += 1;
            }
        }
        let f = self.sched.classify(ctx.hash_key(id));
        if self.circle {
            self.sched.push_circle(f, id, ctx.size(id));
        } else {
            self.sched.push(f, id, ctx.size(id));
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let (params, stats, clear) = (&self.params, &mut self.stats, self.clear_off_schedule);
        let serve = |v: &mut CodelVars, src: &mut FlowSrc, ctx: &mut QueueCtx, now| {
            let r = if src.is_empty() {
                None
            } else {
                v.dequeue(params, stats, src, ctx, now)
            };
            if r.is_none() && clear {
                v.reset_dropping();
            }
            r
        };
        if self.circle {
            self.sched.dequeue_circle(ctx, now, serve)
        } else {
            self.sched.dequeue(ctx, now, serve)
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.sched.tot.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.sched.tot.packets
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let max_count = self.sched.flows.iter().map(|f| f.aqm.count()).max().unwrap_or(0);
        vec![
            ("codel_drops", self.stats.drops as f64),
            ("codel_marks", self.stats.marks as f64),
            ("overflow_drops", self.overflow_drops as f64),
            ("max_codel_count", max_count as f64),
            ("maxpacket", self.stats.maxpacket as f64),
            ("active_bins", self.sched.active_count() as f64),
        ]
    }
}

/// What an arrival to a full qdisc drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Overflow {
    LargestBin,
    Tail,
}

/// What the above-target test makes of a packet that leaves its bin empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum EmptyBin {
    Below,
    Judged,
}

/// How the bins take turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Schedule {
    Lists,
    Circle,
}

/// A bin's CoDel state when it leaves the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum OffSchedule {
    Clear,
    Keep,
}

/// The bins and buffer of sfq_codel.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Bins {
    /// number of hash bins; default 1024
    bins: u32,
    /// 0B = packet round robin (default, ns-2); else bytes per DRR round
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    quantum: u64,
    /// total packets ("1000p"); default the link's packet limit, else 1000p
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    limit: u64,
    /// largest_bin (later ns-2 code, default: drop the tail of the bin with most packets) or tail
    /// (early code: drop the arrival)
    overflow: Overflow,
    /// a packet leaving its bin empty: below (later sfqcodel.cc, default: counts as below
    /// target) or judged (2012 sfqcodel.cc sfqCoDelQueue::dodeque: sojourn and total backlog
    /// decide, as for any packet)
    empty_bin: EmptyBin,
    /// lists (default: new bins first, fq_codel's new/old lists) or circle (ns-2 sfqcodel.cc's
    /// circular schedule: a bin joining a lone served bin goes after it; needs quantum 0B)
    schedule: Schedule,
    /// a bin's CoDel state when it leaves the schedule: clear (later sfqcodel.cc, default:
    /// leaves dropping, the above-target timer restarts) or keep (2012 sfqcodel.cc)
    off_schedule: OffSchedule,
}

impl Params<LinkInfo> for Bins {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_range("bins", self.bins, 1, 65_536)?;
        check_bytes("quantum", self.quantum, 0, 1 << 20)?;
        check_range("limit", self.limit, 1, 1 << 24)?;
        if self.schedule == Schedule::Circle && self.quantum > 0 {
            return Err(format!(
                "schedule = \"circle\" serves one packet per visit, so quantum must be 0B (got {}B); use schedule = \"lists\" for byte round robin",
                self.quantum
            ));
        }
        Ok(())
    }
}

fn build(params: &Value, link: &LinkInfo, mut rng: Rng) -> Built<SfqCodel> {
    let defaults = Bins {
        bins: 1024,
        quantum: 0,
        limit: match link.limit {
            Some(Limit::Packets(p)) => p,
            _ => 1000,
        },
        overflow: Overflow::LargestBin,
        empty_bin: EmptyBin::Below,
        schedule: Schedule::Lists,
        off_schedule: OffSchedule::Clear,
    };
    let cfg = read(params, defaults, link)?;
    let mut p = read(params, CodelParams::variant(Variant::Sfqcodel, link.mtu), link)?;
    p.empty_is_below = cfg.empty_bin == EmptyBin::Below;
    p.empty_keeps_above = cfg.off_schedule == OffSchedule::Keep;
    let mut sched = FqSched::new(
        cfg.bins as usize,
        if cfg.quantum == 0 { 1 } else { cfg.quantum as u32 },
        rng.next_u64(),
        CodelVars::default,
    );
    sched.empty_new_to_old = false;
    sched.cost_bytes = cfg.quantum > 0;
    let q = SfqCodel {
        sched,
        stats: CodelStats::new(&p),
        params: p,
        limit: cfg.limit,
        last_victim: None,
        overflow_drops: 0,
        tail_drop: cfg.overflow == Overflow::Tail,
        circle: cfg.schedule == Schedule::Circle,
        clear_off_schedule: cfg.off_schedule == OffSchedule::Clear,
    };
    Ok((q, merge(written(&cfg), written(&p))))
}

pub static INFO: [QdiscInfo<SfqCodel>; 1] = [QdiscInfo {
    name: "sfq_codel",
    summary: "ns-2 sfqCoDel: hashed bins served round robin with CoDel per bin",
    reference: "Nichols & Jacobson, ns-2 sfqcodel.cc",
    params: &[Group::of::<Bins>(), Group::of::<CodelParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use crate::units::{tx_time, MS};
    use serde_json::json;

    fn make(p: Value) -> SfqCodel {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(6)).unwrap().0
    }

    fn distinct(q: &SfqCodel, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut used = Vec::new();
        for f in 0..1000u32 {
            let b = q.sched.classify(u64::from((f << 1) | 1));
            if !used.contains(&b) {
                used.push(b);
                out.push(f);
                if out.len() == n {
                    break;
                }
            }
        }
        out
    }

    fn shares(q: &mut SfqCodel, f: &[u32]) -> ([u64; 2], [u64; 2]) {
        let mut h = Harness::new();
        let (mut pk, mut by) = ([0u64; 2], [0u64; 2]);
        for _ in 0..100 {
            h.enqueue(q, f[0], 1500, Ecn::NotEct, 0);
            for _ in 0..3 {
                h.enqueue(q, f[1], 500, Ecn::NotEct, 0);
            }
        }
        for _ in 0..200 {
            let id = h.dequeue(q, MS).unwrap();
            let p = h.pool.get(id);
            let i = (p.flow == f[1]) as usize;
            pk[i] += 1;
            by[i] += p.size as u64;
        }
        (pk, by)
    }

    #[test]
    fn packet_and_byte_round_robin() {
        let mut q = make(json!({"target": "1s", "interval": "10s"}));
        let f = distinct(&q, 2);
        let (pk, _) = shares(&mut q, &f);
        assert_eq!(pk, [100, 100]);
        let mut q = make(json!({"target": "1s", "interval": "10s", "quantum": "1500B"}));
        let (_, by) = shares(&mut q, &f);
        assert!(by[0].abs_diff(by[1]) <= 1500, "{by:?}");
    }

    #[test]
    fn overflow_drops_tail_of_largest_bin() {
        let mut q = make(json!({"limit": "10p"}));
        let f = distinct(&q, 2);
        let mut h = Harness::new();
        for _ in 0..3 {
            h.enqueue(&mut q, f[1], 1000, Ecn::NotEct, 0);
        }
        let big: Vec<_> = (0..7)
            .map(|_| h.enqueue(&mut q, f[0], 1000, Ecn::NotEct, 0))
            .collect();
        let arrival = h.enqueue(&mut q, f[1], 1000, Ecn::NotEct, 0);
        assert_eq!(h.drops, vec![(big[6], DropReason::FatFlow)]);
        assert!(!h.was_dropped(arrival));
        let mut q = make(json!({"limit": "3p", "overflow": "tail"}));
        let mut h = Harness::new();
        let ids: Vec<_> = (0..4)
            .map(|_| h.enqueue(&mut q, f[0], 1000, Ecn::NotEct, 0))
            .collect();
        assert_eq!(h.drops, vec![(ids[3], DropReason::Overlimit)]);
    }

    /// The times (ms) at which flow `f[1]`'s packets are dropped when it keeps exactly one packet
    /// queued (a new one arrives as soon as the last one leaves) next to a backlogged flow
    /// `f[0]` (40 packets of 1500 B at 0 ms), with one dequeue every 10 ms up to 300 ms.
    fn lone_packet_drops(empty_bin: &str) -> Vec<u64> {
        let mut q = make(json!({ "empty_bin": empty_bin }));
        let f = distinct(&q, 2);
        let mut h = Harness::new();
        for _ in 0..40 {
            h.enqueue(&mut q, f[0], 1500, Ecn::NotEct, 0);
        }
        let mut lone = h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 0);
        let mut drops = Vec::new();
        for k in 1..=30 {
            let now = k * 10 * MS;
            let sent = h.dequeue(&mut q, now);
            if h.was_dropped(lone) {
                drops.push(now / MS);
            }
            if sent == Some(lone) || h.was_dropped(lone) {
                lone = h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, now);
            }
        }
        drops
    }

    #[test]
    fn a_packet_leaving_its_bin_empty() {
        // Worked by hand (target 5 ms, interval 100 ms). Round robin in arrival order serves the
        // backlogged bin at 10, 30, 50 ms ... and the lone packet's bin at 20, 40, 60 ms ...; each
        // lone packet has waited 20 ms (>= target) and the other bin keeps far more than the
        // largest packet (1500 B) queued. judged (2012 sfqcodel.cc dodeque): the service at
        // 20 ms is above target, first_above_time = 120 ms, and the service at 120 ms drops.
        // below (later sfqcodel.cc): every lone packet leaves its bin empty, so it is below
        // target and the bin never drops.
        assert_eq!(lone_packet_drops("judged").first(), Some(&120));
        assert_eq!(lone_packet_drops("below"), Vec::<u64>::new());
    }

    /// The flows (by index into `f`) of the packets sent, in order, when bin `f[0]` has two
    /// packets, `served` of its bins have had one turn, and then bin `f[2]` becomes active.
    fn order_after_join(schedule: &str, served: usize) -> Vec<usize> {
        let mut q = make(json!({ "schedule": schedule }));
        let f = distinct(&q, 3);
        let mut h = Harness::new();
        let mut sent = Vec::new();
        for &bin in [f[0], f[1]].iter().take(served) {
            h.enqueue(&mut q, bin, 1000, Ecn::NotEct, 0);
            h.enqueue(&mut q, bin, 1000, Ecn::NotEct, 0);
        }
        for _ in 0..served {
            sent.push(h.dequeue(&mut q, 0).unwrap());
        }
        h.enqueue(&mut q, f[2], 1000, Ecn::NotEct, 0);
        while let Some(id) = h.dequeue(&mut q, 0) {
            sent.push(id);
        }
        let flow = |id| f.iter().position(|&x| x == h.pool.get(id).flow).unwrap();
        sent.into_iter().map(flow).collect()
    }

    #[test]
    fn circle_puts_a_bin_joining_one_served_bin_behind_it() {
        // sfqCoDelQueue::enque (2012 and later sfqcodel.cc): the scan for the first served bin
        // starts at the head; a head that is served and also the circle's last bin gets the
        // newcomer after it. One served bin A (head, A->next == A): circle A, C -> A's second
        // packet, then C. Two served bins A, B (head A after B's turn): C goes in front of A.
        assert_eq!(order_after_join("circle", 1), vec![0, 0, 2]);
        assert_eq!(order_after_join("lists", 1), vec![0, 2, 0]);
        assert_eq!(order_after_join("circle", 2), vec![0, 1, 2, 0, 1]);
        assert_eq!(order_after_join("lists", 2), vec![0, 1, 2, 0, 1]);
    }

    /// Whether bin `f[1]`'s first packet after it came back is dropped (target 5 ms, interval
    /// 100 ms, the 2012 above-target test; `f[0]` keeps 40 packets of 1500 B queued, far above
    /// the guard).
    fn comeback_dropped(off_schedule: &str) -> bool {
        let mut q = make(json!({ "off_schedule": off_schedule, "empty_bin": "judged" }));
        let f = distinct(&q, 2);
        let mut h = Harness::new();
        for _ in 0..40 {
            h.enqueue(&mut q, f[0], 1500, Ecn::NotEct, 0);
        }
        h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 0);
        for k in 1..=4 {
            h.dequeue(&mut q, k * 10 * MS);
        }
        let back = h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 40 * MS);
        h.enqueue(&mut q, f[1], 1500, Ecn::NotEct, 40 * MS);
        h.dequeue(&mut q, 130 * MS);
        h.was_dropped(back)
    }

    #[test]
    fn a_bin_off_the_schedule_keeps_or_clears_its_state() {
        // Worked by hand: f[1]'s packet is served at 20 ms, 20 ms old, so its bin's
        // first_above_time becomes 120 ms; the bin is found empty at 40 ms and leaves the
        // schedule; two packets come back at 40 ms and the first is served at 130 ms. keep (2012
        // sfqcodel.cc): 130 >= 120, the bin enters dropping and drops it. clear (later
        // sfqcodel.cc): the timer starts again at 130 ms, nothing is dropped.
        assert!(comeback_dropped("keep"));
        assert!(!comeback_dropped("clear"));
    }

    #[test]
    fn circle_needs_packet_round_robin() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let err = build(
            &json!({"schedule": "circle", "quantum": "1514B"}),
            &link,
            Rng::from_seed(6),
        )
        .err()
        .unwrap();
        assert!(err.contains("quantum") && err.contains("circle"), "{err}");
    }

    #[test]
    fn resolved_variant_and_codel_drops() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let (_, r) = build(&json!({}), &link, Rng::from_seed(6)).unwrap();
        assert_eq!(r["variant"], "sfqcodel");
        assert_eq!(r["recall"], "sfqcodel");
        assert_eq!(r["mtu"], "256B");
        assert_eq!(r["empty_bin"], "below");
        // A lone flow at 2x the link rate sees CoDel head drops.
        let mut q = make(json!({}));
        let mut h = Harness::new();
        let pkt = tx_time(1500, 10_000_000);
        for k in 0..6000u64 {
            h.enqueue(&mut q, 0, 1500, Ecn::NotEct, k * pkt / 2);
            if k.is_multiple_of(2) {
                h.dequeue(&mut q, k * pkt / 2);
            }
        }
        assert!(h.drops.iter().any(|d| d.1 == DropReason::Head));
        assert_eq!(q.stats.maxpacket, 1500);
    }
}
