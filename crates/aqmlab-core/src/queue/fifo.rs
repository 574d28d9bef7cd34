//! First-in first-out queues: `pfifo` (packet limit), `bfifo` (byte limit) and `pfifo_head_drop`
//! (packet limit, drops the oldest packet to admit a new one). One implementation with two
//! options, following Linux sch_fifo.c: the limit counts packets or bytes, and overflow drops the
//! arrival (tail drop) or the head. Defaults as Linux: 1000 packets (txqueuelen) or 1000 x MTU bytes.
//! `ns2_limit` switches the tail-drop FIFOs to ns-2.35's DropTail rule (queue/drop-tail.cc,
//! `DropTail::enque`): an arrival is refused when the backlog with it would reach the limit
//! (`q_->length() + 1 >= qlim_`, in bytes `byteLength() + size >= qlim_ * mean_pktsize_`), so at
//! most limit - 1 packets wait where Linux lets the limit's worth wait.

use super::util::PacketQueue;
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{Limit, LimitSpec, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The FIFOs' one key (resolved in [`build`], which needs to know whether it was given).
#[derive(Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Config {
    /// buffer size: packets ("100p") or bytes ("150KB"); default the direction's limit (converted
    /// at the MTU when it is of the other kind), else 1000p (pfifo, pfifo_head_drop) or
    /// 1000 x MTU bytes (bfifo)
    #[schemars(with = "LimitSpec")]
    limit: Option<LimitSpec>,
    /// ns-2 DropTail's limit (queue/drop-tail.cc DropTail::enque): refuse an arrival that
    /// would bring the backlog to the limit, so at most limit - 1 packets wait; default false
    /// (Linux: up to the limit); tail drop only
    ns2_limit: Option<bool>,
}

impl Params<LinkInfo> for Config {}

pub struct Fifo {
    queue: PacketQueue,
    limit: Limit,
    head_drop: bool,
    ns2_limit: bool,
}

impl Fifo {
    pub fn new(limit: Limit, head_drop: bool) -> Fifo {
        Fifo {
            queue: PacketQueue::default(),
            limit,
            head_drop,
            ns2_limit: false,
        }
    }

    /// Whether the arrival of `size` bytes finds the buffer full.
    fn full_for(&self, size: u64) -> bool {
        if !self.ns2_limit {
            return self.queue.exceeds(self.limit, size);
        }
        match self.limit {
            Limit::Packets(p) => self.queue.len() as u64 + 1 >= p,
            Limit::Bytes(b) => self.queue.bytes() + size >= b,
        }
    }
}

impl Qdisc for Fifo {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        let size = ctx.size(id);
        if self.head_drop {
            while self.queue.exceeds(self.limit, size as u64) {
                match self.queue.pop_front(ctx) {
                    Some(old) => ctx.drop_packet(old, DropReason::Head),
                    None => {
                        // The arrival alone exceeds a byte limit.
                        ctx.drop_packet(id, DropReason::Overlimit);
                        return;
                    }
                }
            }
        } else if self.full_for(size as u64) {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        self.queue.push_back(id, size);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, _now: Time) -> Option<PktId> {
        self.queue.pop_front(ctx)
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn backlog_packets(&self) -> u64 {
        self.queue.len() as u64
    }
}

fn build(params: &Value, link: &LinkInfo, bytes: bool, head_drop: bool) -> Built<Fifo> {
    let mut cfg = read(params, Config::default(), link)?;
    // The direction's generic `limit` converts between packets and bytes at the MTU (so that
    // `--set topology.down.qdisc=bfifo` works on a path given "1000p"); a limit in the qdisc's
    // own table must already be of the right kind.
    let from_link = link.limit.map(|l| match (bytes, l) {
        (true, Limit::Packets(p)) => Limit::Bytes(p * link.mtu as u64),
        (false, Limit::Bytes(b)) => Limit::Packets((b / link.mtu as u64).max(1)),
        _ => l,
    });
    // a zero limit is named where it was typed: the qdisc's own key or the hop's
    if cfg.limit.is_some() {
        super::util::resolve_limit(cfg.limit, link)?;
    } else if link.limit.is_some() {
        super::util::resolve_limit(None, link)?;
    }
    let limit = match cfg.limit.map(|l| l.0).or(from_link) {
        Some(l) => l,
        None if bytes => Limit::Bytes(1000 * link.mtu as u64),
        None => Limit::Packets(1000),
    };
    match (bytes, limit) {
        (true, Limit::Packets(_)) => return Err("limit: bfifo needs a byte limit such as \"150KB\"".into()),
        (false, Limit::Bytes(_)) => {
            return Err("limit: pfifo needs a packet limit such as \"100p\" (use bfifo for bytes)".into())
        }
        _ => {}
    }
    cfg.limit = Some(LimitSpec(limit));
    let ns2_limit = cfg.ns2_limit.unwrap_or(false);
    cfg.ns2_limit = Some(ns2_limit);
    if ns2_limit && head_drop {
        return Err("ns2_limit: only the tail-drop FIFOs (pfifo, bfifo) have ns-2 DropTail's limit".into());
    }
    let fifo = Fifo {
        ns2_limit,
        ..Fifo::new(limit, head_drop)
    };
    Ok((fifo, written(&cfg)))
}

pub static INFO: [QdiscInfo<Fifo>; 3] = [
    QdiscInfo {
        name: "pfifo",
        summary: "FIFO with a packet limit; tail drop",
        reference: "Linux sch_fifo.c (pfifo)",
        params: &[Group::of::<Config>()],
        build: |p, l, _: Rng| build(p, l, false, false),
    },
    QdiscInfo {
        name: "bfifo",
        summary: "FIFO with a byte limit; tail drop",
        reference: "Linux sch_fifo.c (bfifo)",
        params: &[Group::of::<Config>()],
        build: |p, l, _: Rng| build(p, l, true, false),
    },
    QdiscInfo {
        name: "pfifo_head_drop",
        summary: "FIFO with a packet limit; drops the oldest packet on overflow",
        reference: "Linux sch_fifo.c (pfifo_head_drop)",
        params: &[Group::of::<Config>()],
        build: |p, l, _: Rng| build(p, l, false, true),
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;

    #[test]
    fn pfifo_tail_drops_beyond_limit() {
        let mut h = Harness::new();
        let mut q = Fifo::new(Limit::Packets(3), false);
        let ids: Vec<_> = (0..5)
            .map(|i| h.enqueue(&mut q, 0, 1000 + i, Ecn::NotEct, 0))
            .collect();
        assert_eq!(q.backlog_packets(), 3);
        assert_eq!(
            h.drops,
            vec![(ids[3], DropReason::Overlimit), (ids[4], DropReason::Overlimit)]
        );
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[0]));
        assert_eq!(q.backlog_bytes(), 1001 + 1002);
    }

    #[test]
    fn ns2_limit_keeps_one_packet_less_as_droptail_enque() {
        // queue/drop-tail.cc DropTail::enque: `(q_->length() + 1) >= qlim_` drops the arrival, so
        // qlim_ 10 holds 9 packets; in bytes (qib_) `byteLength() + size >= qlim_ * mean_pktsize_`:
        // a 3000-byte limit takes 1500 + 1000 bytes, not the next 500.
        let mut h = Harness::new();
        let mut q = Fifo {
            ns2_limit: true,
            ..Fifo::new(Limit::Packets(10), false)
        };
        let ids: Vec<_> = (0..11)
            .map(|_| h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0))
            .collect();
        assert_eq!(q.backlog_packets(), 9);
        assert_eq!(
            h.drops,
            vec![(ids[9], DropReason::Overlimit), (ids[10], DropReason::Overlimit)]
        );
        let mut q = Fifo {
            ns2_limit: true,
            ..Fifo::new(Limit::Bytes(3000), false)
        };
        let a = h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
        let b = h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0);
        let c = h.enqueue(&mut q, 0, 500, Ecn::NotEct, 0);
        assert!(!h.was_dropped(a) && !h.was_dropped(b) && h.was_dropped(c));
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: Some(Limit::Packets(100)),
            wifi: false,
        };
        let (_, v) = build(&serde_json::json!({"ns2_limit": true}), &link, false, false).unwrap();
        assert_eq!(v["ns2_limit"], true);
        let (_, v) = build(&serde_json::json!({}), &link, false, false).unwrap();
        assert_eq!(v["ns2_limit"], false);
        assert!(build(&serde_json::json!({"ns2_limit": true}), &link, false, true).is_err());
    }

    #[test]
    fn bfifo_counts_bytes() {
        let mut h = Harness::new();
        let mut q = Fifo::new(Limit::Bytes(3000), false);
        let a = h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
        let b = h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0);
        let c = h.enqueue(&mut q, 0, 600, Ecn::NotEct, 0);
        let d = h.enqueue(&mut q, 0, 500, Ecn::NotEct, 0);
        assert!(h.was_dropped(c) && !h.was_dropped(d));
        assert_eq!(q.backlog_bytes(), 3000);
        assert_eq!(h.dequeue(&mut q, 0), Some(a));
        assert_eq!(h.dequeue(&mut q, 0), Some(b));
    }

    #[test]
    fn direction_limit_converts_at_the_mtu() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: Some(Limit::Packets(100)),
            wifi: false,
        };
        let (_, v) = build(&serde_json::json!({}), &link, true, false).unwrap();
        assert_eq!(v["limit"], "150000B");
        let link = LinkInfo {
            limit: Some(Limit::Bytes(150_000)),
            ..link
        };
        let (_, v) = build(&serde_json::json!({}), &link, false, false).unwrap();
        assert_eq!(v["limit"], "100p");
        assert!(build(&serde_json::json!({"limit": "100p"}), &link, true, false).is_err());
    }

    #[test]
    fn head_drop_keeps_newest() {
        let mut h = Harness::new();
        let mut q = Fifo::new(Limit::Packets(2), true);
        let ids: Vec<_> = (0..4)
            .map(|_| h.enqueue(&mut q, 0, 100, Ecn::NotEct, 0))
            .collect();
        assert_eq!(
            h.drops,
            vec![(ids[0], DropReason::Head), (ids[1], DropReason::Head)]
        );
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[2]));
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[3]));
        assert_eq!(h.dequeue(&mut q, 0), None);
    }
}
