//! Queue disciplines: the common sans-I/O trait, the context through which a discipline drops and
//! marks packets, and the types every discipline's file shares (its registry entry
//! [`QdiscInfo`], the link it is built for). `registry.rs` lists the disciplines and turns a
//! scenario's `qdisc` entry into one.
//!
//! A discipline never reads a clock or schedules anything: every call receives `now`, drops and
//! marks go through [`QueueCtx`] (so counters and records are kept in one place, by the link), and
//! a discipline that needs a periodic timer reports its next deadline via [`Qdisc::next_timer`].
//! Each discipline lives in its own file (like Linux net/sched), which uses this file and never
//! the registry, so the registry's use of every file makes no circle.

use crate::packet::{Ecn, PacketPool, PktId};
use crate::params::{self, Group};
use crate::rng::Rng;
use crate::units::{Limit, Time};
use serde_json::Value;

pub mod blue;
pub mod cake;
pub mod choke;
pub mod codel;
#[cfg(test)]
mod conformance;
pub mod drr;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod fq_pie;
pub mod fq_sched;
pub mod htb;
pub mod mq;
pub mod pfifo_fast;
pub mod pie;
pub mod qprot;
pub mod red;
pub mod registry;
pub mod sch_fq;
pub mod sfq;
pub mod sfq_codel;
pub mod util;

/// Why a packet was dropped. Counted per link and recorded per packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer (packet or byte limit) was full: tail drop of the arrival.
    Overlimit = 0,
    /// An early (probabilistic / AQM) drop at enqueue: RED, PIE, BLUE, CHOKe.
    Early = 1,
    /// A drop from the head of the queue at dequeue (CoDel's control law) or a head-drop FIFO.
    Head = 2,
    /// fq_codel / SFQ / DRR overflow handling: dropped from the longest (fattest) flow queue.
    FatFlow = 3,
    /// Independent random loss on the link (the `loss` option), not a queue decision.
    Loss = 4,
    /// RED's forced drop at enqueue: the average queue is above the drop-everything threshold
    /// (max_th, or 2 max_th when gentle); ns-2 red.cc DTYPE_FORCED, Linux RED_HARD_MARK.
    Forced = 5,
    /// CAKE's ACK filter: a queued pure ACK made redundant by a later ACK of its connection
    /// (Linux counts these as `ack_drops`, apart from the AQM's drops).
    AckFilter = 6,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::Overlimit,
        DropReason::Early,
        DropReason::Head,
        DropReason::FatFlow,
        DropReason::Loss,
        DropReason::Forced,
        DropReason::AckFilter,
    ];
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overlimit => "overlimit",
            DropReason::Early => "early",
            DropReason::Head => "head",
            DropReason::FatFlow => "fat_flow",
            DropReason::Loss => "loss",
            DropReason::Forced => "forced",
            DropReason::AckFilter => "ack_filter",
        }
    }

    /// Whether a queue decided the drop (every reason but loss on the wire).
    pub fn by_queue(self) -> bool {
        self != DropReason::Loss
    }

    /// Whether the packet had entered the queue (and held buffer space) before it was dropped:
    /// dropped from the head, from the fattest flow queue on overflow, or by an ACK filter.
    pub fn entered(self) -> bool {
        matches!(
            self,
            DropReason::Head | DropReason::FatFlow | DropReason::AckFilter
        )
    }

    /// Whether the AQM decided the drop rather than a full buffer: RED's early and forced
    /// drops, PIE's, BLUE's and CHOKe's early drops, CoDel's drops at the head.
    pub fn by_aqm(self) -> bool {
        matches!(self, DropReason::Early | DropReason::Forced | DropReason::Head)
    }
}

/// Something a discipline did to a packet, reported back to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEvent {
    Drop(PktId, DropReason),
    Mark(PktId),
    /// The discipline cannot go on (an external discipline's code failed): the run ends at this
    /// instant, and whoever built the discipline reports why.
    Stop,
}

/// What a discipline may touch while handling one call: the packets, and the sink for its
/// drop and mark decisions. A dropped packet must not be referenced by the discipline afterwards.
pub struct QueueCtx<'a> {
    pub pool: &'a mut PacketPool,
    pub events: &'a mut Vec<QueueEvent>,
}

impl QueueCtx<'_> {
    /// Drops `id` (the link releases the packet and records the reason).
    #[inline]
    pub fn drop_packet(&mut self, id: PktId, reason: DropReason) {
        self.events.push(QueueEvent::Drop(id, reason));
    }

    /// Sets CE on `id` if it is ECN-capable; returns whether it was marked.
    #[inline]
    pub fn mark(&mut self, id: PktId) -> bool {
        let p = self.pool.get_mut(id);
        if p.ecn.capable() {
            p.ecn = Ecn::Ce;
            self.events.push(QueueEvent::Mark(id));
            true
        } else {
            false
        }
    }

    /// Size in bytes of packet `id`.
    #[inline]
    pub fn size(&self, id: PktId) -> u32 {
        self.pool.get(id).size
    }

    /// Enqueue timestamp of packet `id` (set by the link before `enqueue`).
    #[inline]
    pub fn enqueued_at(&self, id: PktId) -> Time {
        self.pool.get(id).enqueued_at
    }

    /// The departure time the sending host stamped on packet `id` (`Packet::tstamp`; 0: none).
    #[inline]
    pub fn tstamp(&self, id: PktId) -> Time {
        self.pool.get(id).tstamp
    }

    /// Sets (or, with 0, clears) the departure time of packet `id`.
    #[inline]
    pub fn set_tstamp(&mut self, id: PktId, t: Time) {
        self.pool.get_mut(id).tstamp = t;
    }

    /// The DSCP of packet `id`.
    #[inline]
    pub fn dscp(&self, id: PktId) -> u8 {
        self.pool.get(id).dscp
    }

    /// The IP TOS byte of packet `id`: DSCP << 2 | ECN.
    #[inline]
    pub fn tos(&self, id: PktId) -> u8 {
        let p = self.pool.get(id);
        p.dscp << 2 | p.ecn as u8
    }

    /// The flow key of exact per-flow classes (DRR): scenario flow index and direction.
    #[inline]
    pub fn flow_key(&self, id: PktId) -> u32 {
        let p = self.pool.get(id);
        (p.flow << 1) | p.dir as u32
    }

    /// The key a hashing classifier sees, standing for the packet's 5-tuple (Linux fq_codel and
    /// sfq hash `skb_get_hash`, the flow dissector's hash over addresses, ports and protocol;
    /// CHOKe matches the dissected flow): the flow key, and in the high word the connection
    /// within the flow (`Packet::tuple_conn`, 0 for a flow without connections, whose key
    /// is then the flow key unchanged).
    #[inline]
    pub fn hash_key(&self, id: PktId) -> u64 {
        let p = self.pool.get(id);
        ((p.tuple_conn as u64) << 32) | ((p.flow << 1) | p.dir as u32) as u64
    }
}

/// The sans-I/O interface of every queue discipline.
pub trait Qdisc {
    /// Accepts (or drops, via `ctx`) an arriving packet. Other queued packets may be dropped too.
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time);
    /// Hands out the next packet to transmit, if any; may drop or mark packets on the way.
    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId>;
    /// Bytes queued.
    fn backlog_bytes(&self) -> u64;
    /// Packets queued.
    fn backlog_packets(&self) -> u64;
    /// The next time the discipline wants [`Qdisc::on_timer`] called (PIE updates, ARED
    /// adaptation, SFQ perturbation). `None` when it has no timer.
    fn next_timer(&self) -> Option<Time> {
        None
    }
    /// Runs the timer work due at `now`.
    fn on_timer(&mut self, _ctx: &mut QueueCtx, _now: Time) {}
    /// Discipline-specific state worth reporting (e.g. PIE's drop probability), as
    /// (name, value) pairs for the run's summary.
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Whether it keeps one queue per flow (or hash bucket): then no single queue's delay
    /// describes the bottleneck (transients2014 leaves its spike duration undefined there).
    fn flow_queues(&self) -> bool {
        false
    }
    /// Whether, as a sending host's own qdisc, it paces each socket's packets by the departure
    /// time they carry (Linux sch_fq sets SK_PACING_FQ on the socket): a pacing TCP sender
    /// then stamps its packets instead of waiting on its own pacing timer.
    fn paces_departures(&self) -> bool {
        false
    }
    /// The rate it shapes its hop to, bit/s, if it shapes it (CAKE's `bandwidth`): the hop
    /// then carries at most that, whatever its line rate.
    fn shaped_rate(&self) -> Option<u64> {
        None
    }
    /// The state of the token-bucket rate shaper below it (a DOCSIS MAC's, `net::docsis`),
    /// given before each timer call on a hop that has one: DOCSIS-PIE's delay estimate reads
    /// it (`pie.rs`, `estimator = "token_bucket"` or `"token_bucket_last_request"`).
    fn shaper_state(&mut self, _s: ShaperState) {}
    /// The TX queues it has a child qdisc for, each dequeued apart (`mq`: one per WiFi access
    /// category); 0 for a discipline with one queue.
    fn tx_queues(&self) -> usize {
        0
    }
    /// The next packet for TX queue `k`: its child's (`mq`); a discipline with one queue serves
    /// every TX queue from it.
    fn dequeue_tx_queue(&mut self, _k: usize, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        self.dequeue(ctx, now)
    }
    /// The sub-queues it reports its packets in (codes into [`SUBQUEUES`], set in
    /// `Packet::subq` at enqueue), each summarised apart; none by default.
    fn subqueues(&self) -> &'static [u8] {
        &[]
    }
}

/// A token-bucket rate shaper's state (MULPI's service-flow QoS parameters): the Max Sustained
/// Rate tokens now and as the last request left them (bytes), the Max Sustained Rate and the
/// Peak Traffic Rate (bit/s, 0 = none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShaperState {
    pub msr_tokens: u64,
    pub msr_tokens_last_request: u64,
    pub max_rate: u64,
    pub peak_rate: u64,
}

/// The names of the sub-queues a discipline may report (`Qdisc::subqueues`), by code; code 0
/// is a packet of a hop whose discipline has none.
pub const SUBQUEUES: [&str; 3] = ["-", "l", "c"];

/// What a discipline may know about the link it serves when it is built.
#[derive(Clone, Copy, Debug)]
pub struct LinkInfo {
    /// The link's rate at time 0, bit/s.
    pub rate_bps: u64,
    /// Largest packet on the path (IP bytes); 1500 by default.
    pub mtu: u32,
    /// The direction's `limit` key, if the scenario gives one; it sets the discipline's limit
    /// unless the qdisc table sets its own.
    pub limit: Option<Limit>,
    /// A WiFi hop: the discipline is the root qdisc of a mac80211 interface.
    pub wifi: bool,
}

/// What a discipline's constructor returns: the discipline with its resolved parameters
/// (defaults written out), or an error naming the key.
pub type Built<Q> = Result<(Q, Value), String>;

/// A registry entry of a discipline of type `Q` (a file's `INFO`; `registry.rs` lists them): how
/// to build it from its scenario parameters.
pub struct QdiscInfo<Q: 'static> {
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
    /// Its keys: one or more typed structs (see [`crate::params`]).
    pub params: &'static [Group],
    /// Builds the discipline and returns it with its resolved parameters (defaults written out).
    pub build: fn(&Value, &LinkInfo, Rng) -> Built<Q>,
}

impl<Q> QdiscInfo<Q> {
    /// Rejects a key the discipline does not declare (naming it and every key it accepts, as
    /// [`params::check_keys`] words it), then builds it.
    pub fn checked(&self, table: &Value, link: &LinkInfo, rng: Rng) -> Built<Q> {
        params::check_keys(table, self.name, self.params)?;
        (self.build)(table, link, rng)
    }
}

/// Prefix of a build error about a key of the hop the discipline serves (its `rate` or `limit`,
/// see [`LinkInfo`]) rather than one of the discipline's own: `registry::build` names it under the hop.
pub const LINK_KEY: &str = "@link.";

/// What Linux's enqueue of a locally sent packet returns to its socket (net/core/dev.c
/// dev_queue_xmit, include/linux/netdevice.h NET_XMIT_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LocalVerdict {
    /// NET_XMIT_SUCCESS: queued.
    Queued,
    /// NET_XMIT_CN: lost to congestion, which the socket is told of (RED's congestion drop;
    /// SFQ's overflow drop of another packet of the same flow) but which counts as sent.
    Congested,
    /// NET_XMIT_DROP: not queued and, for TCP, not sent (a full FIFO), or never offered (a
    /// packet after such a one in the same send).
    Dropped,
}

/// The return code of Linux 3.2's enqueue of packet `id` (before `events`, the qdisc's drops of
/// that enqueue, are applied): NET_XMIT_CN when RED dropped it for congestion (sch_red.c
/// red_enqueue's congestion_drop: its early and forced drops) or when the qdisc made room by
/// dropping another packet of the same flow (sch_sfq.c sfq_enqueue: "Return Congestion
/// Notification only if we dropped a packet from this flow"); NET_XMIT_DROP when it was
/// dropped otherwise (a full FIFO: qdisc_reshape_fail; RED's full child); else success.
pub fn local_verdict(events: &[QueueEvent], pool: &PacketPool, id: PktId) -> LocalVerdict {
    let flow = pool.get(id).flow;
    let mut verdict = LocalVerdict::Queued;
    for e in events {
        match *e {
            QueueEvent::Drop(x, DropReason::Early | DropReason::Forced) if x == id => {
                return LocalVerdict::Congested
            }
            QueueEvent::Drop(x, _) if x == id => return LocalVerdict::Dropped,
            QueueEvent::Drop(x, _) if pool.get(x).flow == flow => verdict = LocalVerdict::Congested,
            _ => {}
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_verdicts_follow_linux_3_2s_return_codes() {
        // sch_red.c red_enqueue: an early or forced drop of the arrival is congestion_drop,
        // NET_XMIT_CN; its child's overflow is NET_XMIT_DROP, as pfifo's tail drop
        // (qdisc_reshape_fail). sch_sfq.c sfq_enqueue: dropping another packet to make room
        // returns NET_XMIT_CN if it was of the arrival's flow, else NET_XMIT_SUCCESS.
        let mut pool = PacketPool::new();
        let mut pkt = |flow| {
            pool.alloc(&crate::packet::Packet {
                flow,
                ..Default::default()
            })
        };
        let (id, same, other) = (pkt(0), pkt(0), pkt(1));
        let v = |events: &[QueueEvent]| local_verdict(events, &pool, id);
        assert_eq!(v(&[]), LocalVerdict::Queued);
        assert_eq!(
            v(&[QueueEvent::Drop(id, DropReason::Early)]),
            LocalVerdict::Congested
        );
        assert_eq!(
            v(&[QueueEvent::Drop(id, DropReason::Forced)]),
            LocalVerdict::Congested
        );
        assert_eq!(
            v(&[QueueEvent::Drop(id, DropReason::Overlimit)]),
            LocalVerdict::Dropped
        );
        assert_eq!(
            v(&[QueueEvent::Drop(same, DropReason::Head)]),
            LocalVerdict::Congested
        );
        assert_eq!(
            v(&[QueueEvent::Drop(other, DropReason::Head)]),
            LocalVerdict::Queued
        );
        assert_eq!(v(&[QueueEvent::Mark(id)]), LocalVerdict::Queued);
    }
}

#[cfg(test)]
pub mod testutil {
    //! A small harness for discipline unit tests: a pool, an event sink and helpers to push
    //! packets of a given flow and size through a discipline.
    use super::*;
    use crate::packet::{Dir, Packet};

    #[derive(Default)]
    pub struct Harness {
        pub pool: PacketPool,
        pub events: Vec<QueueEvent>,
        pub drops: Vec<(PktId, DropReason)>,
        pub marks: Vec<PktId>,
        /// The DSCP of the packets `packet` creates.
        pub dscp: u8,
    }

    impl Harness {
        pub fn new() -> Harness {
            Harness::default()
        }

        pub fn packet(&mut self, flow: u32, size: u32, ecn: Ecn) -> PktId {
            self.pool.alloc(&Packet {
                flow,
                size,
                ecn,
                dir: Dir::Down,
                dscp: self.dscp,
                ..Packet::default()
            })
        }

        fn collect(&mut self) {
            for e in self.events.drain(..) {
                match e {
                    QueueEvent::Drop(id, r) => self.drops.push((id, r)),
                    QueueEvent::Mark(id) => self.marks.push(id),
                    QueueEvent::Stop => panic!("a built-in discipline never stops the run"),
                }
            }
        }

        /// Enqueues a new packet at `now`; returns its id.
        pub fn enqueue<Q: Qdisc>(&mut self, q: &mut Q, flow: u32, size: u32, ecn: Ecn, now: Time) -> PktId {
            let id = self.packet(flow, size, ecn);
            self.offer(q, id, now);
            id
        }

        /// Enqueues packet `id` (made by [`Self::packet`]) at `now`.
        pub fn offer<Q: Qdisc>(&mut self, q: &mut Q, id: PktId, now: Time) {
            self.pool.get_mut(id).enqueued_at = now;
            let mut ctx = QueueCtx {
                pool: &mut self.pool,
                events: &mut self.events,
            };
            q.enqueue(id, &mut ctx, now);
            self.collect();
        }

        pub fn dequeue<Q: Qdisc>(&mut self, q: &mut Q, now: Time) -> Option<PktId> {
            let mut ctx = QueueCtx {
                pool: &mut self.pool,
                events: &mut self.events,
            };
            let r = q.dequeue(&mut ctx, now);
            self.collect();
            r
        }

        pub fn timer<Q: Qdisc>(&mut self, q: &mut Q, now: Time) {
            let mut ctx = QueueCtx {
                pool: &mut self.pool,
                events: &mut self.events,
            };
            q.on_timer(&mut ctx, now);
            self.collect();
        }

        pub fn was_dropped(&self, id: PktId) -> bool {
            self.drops.iter().any(|(d, _)| *d == id)
        }
    }
}
