//! FQ-PIE (Linux sch_fq_pie, docs/disciplines.md 8): the fq_codel scheduler ([`super::fq_sched::FqSched`])
//! with one PIE controller ([`super::pie::PieVars`], `linux` profile by default) per flow.
//!
//! * Drops happen at enqueue only: the arrival is dropped when the total packet limit is reached
//!   (no fat-flow drop), or by its flow's PIE (the "< 2 MTU" bypass uses the flow's backlog).
//! * memory_limit is only counted (`overmemory` diagnostic), not enforced, as in the Linux version
//!   described; memory is modelled as packet size + 576 B (see fq_codel).
//! * The update timer (every t_update) walks all flows, each with its own byte backlog (Linux caps a
//!   timer run at 2048 flows; with at most 65536 flows we walk them all).
//! * ECN off by default; ECT packets are marked instead of dropped while the flow's drop_prob <=
//!   mark_ecnth (Linux ecn_prob, 10 %).

use super::fq_codel::MEMORY_OVERHEAD;
use super::fq_sched::{FqSched, FqSettings};
use super::pie::{PieParams, PieVars, Profile};
use super::util::merge;
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{read, written, Group};
use crate::rng::Rng;
use crate::units::Time;
use serde_json::Value;

pub struct FqPie {
    sched: FqSched<PieVars>,
    params: PieParams,
    rng: Rng,
    limit: u64,
    memory_limit: u64,
    memory: u64,
    overmemory: u64,
    next_update: Time,
    early_drops: u64,
    marks: u64,
}

impl Qdisc for FqPie {
    fn flow_queues(&self) -> bool {
        true
    }

    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        let f = self.sched.classify(ctx.hash_key(id));
        let size = ctx.size(id);
        let flow = &mut self.sched.flows[f];
        if self.sched.tot.packets >= self.limit {
            flow.aqm.on_drop();
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        if flow
            .aqm
            .drop_early(&self.params, size, flow.fq.bytes(), &mut self.rng)
        {
            if self.params.ecn && flow.aqm.prob <= self.params.mark_ecnth && ctx.mark(id) {
                self.marks += 1;
            } else {
                flow.aqm.on_drop();
                self.early_drops += 1;
                ctx.drop_packet(id, DropReason::Early);
                return;
            }
        }
        self.sched.push(f, id, size);
        self.memory += size as u64 + MEMORY_OVERHEAD;
        if self.memory > self.memory_limit {
            self.overmemory += 1;
        }
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let params = &self.params;
        let r = self.sched.dequeue(ctx, now, |v, src, ctx, now| {
            let id = src.pop_head(ctx)?;
            let sojourn = now.saturating_sub(ctx.enqueued_at(id));
            v.on_dequeue(params, ctx.size(id), sojourn, src.fq.bytes(), now);
            Some(id)
        });
        if let Some(id) = r {
            self.memory -= ctx.size(id) as u64 + MEMORY_OVERHEAD;
        }
        r
    }

    fn backlog_bytes(&self) -> u64 {
        self.sched.tot.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.sched.tot.packets
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, _ctx: &mut QueueCtx, now: Time) {
        while self.next_update <= now {
            for f in self.sched.flows.iter_mut() {
                f.aqm.update(&self.params, f.fq.bytes());
            }
            self.next_update += self.params.period;
        }
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let max_prob = self.sched.flows.iter().map(|f| f.aqm.prob).fold(0.0, f64::max);
        vec![
            ("max_drop_prob", max_prob),
            ("early_drops", self.early_drops as f64),
            ("ecn_marks", self.marks as f64),
            ("overmemory", self.overmemory as f64),
            ("new_flow_count", self.sched.new_flow_count as f64),
            ("active_flows", self.sched.active_count() as f64),
        ]
    }
}

fn build(params: &Value, link: &LinkInfo, mut rng: Rng) -> Built<FqPie> {
    let fs = read(params, FqSettings::defaults(link), link)?;
    let p = read(params, PieParams::profile(Profile::Linux, link.mtu), link)?;
    let seed = rng.next_u64();
    let sched = FqSched::new(fs.flows as usize, fs.quantum as u32, seed, || PieVars::new(&p));
    let q = FqPie {
        sched,
        next_update: p.first_update(),
        params: p,
        rng,
        limit: fs.limit,
        memory_limit: fs.memory_limit,
        memory: 0,
        overmemory: 0,
        early_drops: 0,
        marks: 0,
    };
    Ok((q, merge(written(&fs), written(&p))))
}

pub static INFO: [QdiscInfo<FqPie>; 1] = [QdiscInfo {
    name: "fq_pie",
    summary: "flow queueing (fq_codel scheduler) with a PIE controller per flow",
    reference: "Linux sch_fq_pie (2020); RFC 8033",
    params: &[Group::of::<FqSettings>(), Group::of::<PieParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use crate::units::{tx_time, MS, SEC};
    use serde_json::json;

    fn make(p: Value) -> FqPie {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(5)).unwrap().0
    }

    #[test]
    fn defaults() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        let (_, r) = build(&json!({}), &link, Rng::from_seed(5)).unwrap();
        assert_eq!(r["profile"], "linux");
        assert_eq!(r["limit"], "10240p");
        assert_eq!(r["ecn"], false);
        assert_eq!(r["t_update"], "15ms");
    }

    /// An unresponsive flow at 2x the link rate and a light flow (5 % of the link): the heavy flow
    /// is early-dropped by its own PIE, the light one never (its backlog stays under 2 MTU).
    #[test]
    fn per_flow_pie_hits_only_the_heavy_flow() {
        let mut q = make(json!({}));
        let mut h = Harness::new();
        let pkt = tx_time(1500, 10_000_000);
        let (heavy, light) = (0u32, 1u32);
        assert_ne!(
            q.sched.classify(u64::from(heavy << 1 | 1)),
            q.sched.classify(u64::from(light << 1 | 1))
        );
        let mut t = 0;
        let mut k = 0u64;
        let mut delivered = [0u64; 2];
        while t < 10 * SEC {
            if t >= q.next_update {
                h.timer(&mut q, t);
            }
            h.enqueue(&mut q, heavy, 1500, Ecn::NotEct, t);
            if k.is_multiple_of(40) {
                h.enqueue(&mut q, light, 1500, Ecn::NotEct, t);
            }
            if k.is_multiple_of(2) {
                if let Some(id) = h.dequeue(&mut q, t) {
                    delivered[(h.pool.get(id).flow == light) as usize] += 1;
                }
            }
            k += 1;
            t += pkt / 2;
        }
        let light_drops = h.drops.iter().filter(|d| h.pool.get(d.0).flow == light).count();
        assert_eq!(light_drops, 0);
        assert!(h.drops.iter().filter(|d| d.1 == DropReason::Early).count() > 1000);
        // The heavy flow's queue delay is held near target: its backlog stays small.
        assert!(q.backlog_packets() < 100, "{}", q.backlog_packets());
        assert!(q.sched.flows.iter().any(|f| f.aqm.prob > 0.1));
        let _ = MS;
    }

    #[test]
    fn limit_drops_arrival() {
        let mut q = make(json!({"limit": "5p"}));
        let mut h = Harness::new();
        let ids: Vec<_> = (0..7)
            .map(|_| h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0))
            .collect();
        assert_eq!(
            h.drops,
            vec![(ids[5], DropReason::Overlimit), (ids[6], DropReason::Overlimit)]
        );
    }
}
