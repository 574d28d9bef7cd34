//! `mq`, the multi-queue placement of a WiFi interface's qdisc (`topology.wifi.qdisc_placement =
//! "mq"`): one child qdisc per hardware TX queue, here one per WMM access category, as Linux
//! gives a multi-queue device by default (net/sched/sch_mq.c `mq_init`: a default qdisc per
//! `netdev_queue`, each flagged `TCQ_F_ONETXQUEUE`; mac80211 registers four TX queues, one per
//! AC, `ieee80211_register_hw` / `IEEE80211_NUM_ACS`). Each child is the hop's configured
//! discipline with the same parameters, as `tc qdisc add dev D parent X:1..4 KIND ...` would
//! install it (the kernel's own default children would be pfifo_fast; a study installs the
//! discipline under test on every queue).
//!
//! - Classification before the qdisc: `__dev_queue_xmit` (net/core/dev.c) picks the TX queue
//!   first (`netdev_core_pick_tx`, which calls mac80211's `ieee80211_netdev_select_queue` ->
//!   `ieee80211_select_queue`, the DSCP's user priority mapped to an AC, net/mac80211/wme.c) and
//!   enqueues into that queue's qdisc. The classifier is given (`classify`), so this file needs
//!   nothing of the WiFi model.
//! - Each child is dequeued only for its own queue: `dequeue_skb` (net/sched/sch_generic.c)
//!   does not dequeue a `TCQ_F_ONETXQUEUE` qdisc whose queue is stopped
//!   (`netif_xmit_frozen_or_stopped`), and a queue's wake (`netif_tx_wake_queue` ->
//!   `__netif_schedule`, net/core/dev.c) reschedules only that queue's qdisc. The hop dequeues
//!   a child with `Qdisc::dequeue_tx_queue` while that AC's driver queue has room (`net::mod`'s
//!   `wifi_fill`); a full AC holds only its own child.
//! - sch_mq itself has no dequeue; `Qdisc::dequeue` here serves the children in index order
//!   (the hop never calls it: a WiFi hop dequeues per child). The hop holds it as an
//!   `AnyQdisc::External`, so the wired hot path's dispatch is untouched.
//! - Counters per child (arrivals, departures, drops, counted from the drop events each child
//!   reports), as `tc -s class show dev D` gives per `X:n` class (`mq_dump_class_stats`).

use super::{Qdisc, QueueCtx, QueueEvent};
use crate::packet::PktId;
use crate::units::Time;

/// The children: one per WMM access category (`net::edca`'s order).
pub const CHILDREN: usize = 4;

/// The counters' names in the run's qdisc diagnostics, per child (BK, BE, VI, VO).
const COUNTER_NAMES: [[&str; 3]; CHILDREN] = [
    ["mq_bk_enqueued", "mq_bk_dequeued", "mq_bk_dropped"],
    ["mq_be_enqueued", "mq_be_dequeued", "mq_be_dropped"],
    ["mq_vi_enqueued", "mq_vi_dequeued", "mq_vi_dropped"],
    ["mq_vo_enqueued", "mq_vo_dequeued", "mq_vo_dropped"],
];

/// One child's counters (packets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChildStats {
    pub enqueued: u64,
    pub dequeued: u64,
    pub dropped: u64,
}

/// The children and the classifier in front of them.
pub struct Mq<Q> {
    children: Vec<Q>,
    /// The child of a packet with this DSCP (below [`CHILDREN`]).
    classify: fn(u8) -> usize,
    pub stats: [ChildStats; CHILDREN],
}

/// Drops among the events from `from` on.
fn drops(events: &[QueueEvent], from: usize) -> u64 {
    events[from..]
        .iter()
        .filter(|e| matches!(e, QueueEvent::Drop(..)))
        .count() as u64
}

impl<Q: Qdisc> Mq<Q> {
    /// `children` must hold [`CHILDREN`] disciplines.
    pub fn new(children: Vec<Q>, classify: fn(u8) -> usize) -> Mq<Q> {
        assert_eq!(children.len(), CHILDREN, "one child per access category");
        Mq {
            children,
            classify,
            stats: Default::default(),
        }
    }

    /// The child a packet with this DSCP goes to.
    pub fn child_of(&self, dscp: u8) -> usize {
        (self.classify)(dscp)
    }

    /// Child `k`.
    pub fn child(&self, k: usize) -> &Q {
        &self.children[k]
    }
}

impl<Q: Qdisc> Qdisc for Mq<Q> {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        let k = self.child_of(ctx.dscp(id));
        let from = ctx.events.len();
        self.children[k].enqueue(id, ctx, now);
        let s = &mut self.stats[k];
        s.enqueued += 1;
        s.dropped += drops(ctx.events, from);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        (0..CHILDREN).find_map(|k| self.dequeue_tx_queue(k, ctx, now))
    }

    fn tx_queues(&self) -> usize {
        CHILDREN
    }

    /// Dequeues child `k` (its TX queue has room).
    fn dequeue_tx_queue(&mut self, k: usize, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let from = ctx.events.len();
        let id = self.children[k].dequeue(ctx, now);
        let s = &mut self.stats[k];
        s.dropped += drops(ctx.events, from);
        s.dequeued += id.is_some() as u64;
        id
    }

    fn backlog_bytes(&self) -> u64 {
        self.children.iter().map(|c| c.backlog_bytes()).sum()
    }

    fn backlog_packets(&self) -> u64 {
        self.children.iter().map(|c| c.backlog_packets()).sum()
    }

    fn next_timer(&self) -> Option<Time> {
        self.children.iter().filter_map(|c| c.next_timer()).min()
    }

    /// The children whose timers are due.
    fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
        for (k, c) in self.children.iter_mut().enumerate() {
            if c.next_timer().is_some_and(|t| t <= now) {
                let from = ctx.events.len();
                c.on_timer(ctx, now);
                self.stats[k].dropped += drops(ctx.events, from);
            }
        }
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        for (names, s) in COUNTER_NAMES.iter().zip(&self.stats) {
            let values = [s.enqueued, s.dequeued, s.dropped];
            out.extend(names.iter().zip(values).map(|(&n, v)| (n, v as f64)));
        }
        out
    }

    fn flow_queues(&self) -> bool {
        self.children[0].flow_queues()
    }

    fn subqueues(&self) -> &'static [u8] {
        self.children[0].subqueues()
    }
}

#[cfg(test)]
mod tests {
    use super::super::fifo::Fifo;
    use super::super::testutil::Harness;
    use super::*;
    use crate::packet::Ecn;
    use crate::units::Limit;

    /// DSCP's top three bits to a child, as `net::edca::ac_of` (CS1 -> BK, CS0 -> BE, CS5 -> VI).
    fn by_precedence(dscp: u8) -> usize {
        [1, 0, 0, 1, 2, 2, 3, 3][(dscp >> 3) as usize]
    }

    fn mq(limit: u64) -> Mq<Fifo> {
        Mq::new(
            (0..CHILDREN)
                .map(|_| Fifo::new(Limit::Packets(limit), false))
                .collect(),
            by_precedence,
        )
    }

    #[test]
    fn each_child_is_dequeued_alone_and_counts_its_own() {
        // Three BK packets (CS1) and one BE (CS0) into 2-packet FIFOs: the third BK one is tail
        // dropped by its own child; BE is dequeued from its child while BK's stays untouched.
        let mut h = Harness::new();
        let mut q = mq(2);
        h.dscp = 8;
        let bk: Vec<_> = (0..3)
            .map(|_| h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0))
            .collect();
        h.dscp = 0;
        let be = h.enqueue(&mut q, 1, 1000, Ecn::NotEct, 0);
        assert_eq!(h.drops.len(), 1);
        assert_eq!(h.drops[0].0, bk[2]);
        assert_eq!(q.backlog_packets(), 3);
        assert_eq!(q.backlog_bytes(), 4000);
        let mut ctx = QueueCtx {
            pool: &mut h.pool,
            events: &mut h.events,
        };
        assert_eq!(q.dequeue_tx_queue(1, &mut ctx, 0), Some(be));
        assert_eq!(q.dequeue_tx_queue(1, &mut ctx, 0), None);
        assert_eq!(q.child(0).backlog_packets(), 2);
        let bk_stats = ChildStats {
            enqueued: 3,
            dequeued: 0,
            dropped: 1,
        };
        assert_eq!(q.stats[0], bk_stats);
        let be_stats = ChildStats {
            enqueued: 1,
            dequeued: 1,
            dropped: 0,
        };
        assert_eq!(q.stats[1], be_stats);
        assert_eq!(
            q.diagnostics()[..3],
            [
                ("mq_bk_enqueued", 3.0),
                ("mq_bk_dequeued", 0.0),
                ("mq_bk_dropped", 1.0)
            ]
        );
    }

    #[test]
    fn every_packet_is_counted_once() {
        // Conservation per child: enqueued = dequeued + dropped + backlog, whatever the mix.
        let mut h = Harness::new();
        let mut q = mq(3);
        for i in 0..40u32 {
            h.dscp = [0, 8, 40, 46, 48][(i % 5) as usize];
            h.enqueue(&mut q, i, 1500, Ecn::NotEct, i as Time);
            if i % 3 == 0 {
                let mut ctx = QueueCtx {
                    pool: &mut h.pool,
                    events: &mut h.events,
                };
                q.dequeue_tx_queue((i as usize / 3) % CHILDREN, &mut ctx, i as Time);
            }
        }
        let mut total = 0;
        for k in 0..CHILDREN {
            let s = q.stats[k];
            assert_eq!(
                s.enqueued,
                s.dequeued + s.dropped + q.child(k).backlog_packets(),
                "child {k}"
            );
            total += s.enqueued;
        }
        assert_eq!(total, 40);
    }
}
