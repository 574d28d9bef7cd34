//! Queue disciplines: the common sans-I/O trait, the context through which a discipline drops and
//! marks packets, and the registry that turns a scenario's `qdisc` entry into a discipline.
//!
//! A discipline never reads a clock or schedules anything: every call receives `now`, drops and
//! marks go through [`QueueCtx`] (so counters and records are kept in one place, by the link), and
//! a discipline that needs a periodic timer reports its next deadline via [`Qdisc::next_timer`].
//! Each discipline lives in its own file (like Linux net/sched); this file only lists them.

use crate::packet::{Ecn, PacketPool, PktId};
use crate::rng::Rng;
use crate::units::{Limit, Time};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub mod blue;
pub mod choke;
pub mod codel;
#[cfg(test)]
mod conformance;
pub mod drr;
pub mod fifo;
pub mod fq;
pub mod fq_codel;
pub mod fq_pie;
pub mod pie;
pub mod red;
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
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [
        DropReason::Overlimit,
        DropReason::Early,
        DropReason::Head,
        DropReason::FatFlow,
        DropReason::Loss,
        DropReason::Forced,
    ];
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Overlimit => "overlimit",
            DropReason::Early => "early",
            DropReason::Head => "head",
            DropReason::FatFlow => "fat_flow",
            DropReason::Loss => "loss",
            DropReason::Forced => "forced",
        }
    }
}

/// Something a discipline did to a packet, reported back to the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueEvent {
    Drop(PktId, DropReason),
    Mark(PktId),
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

    /// The flow key a classifier hashes (scenario flow index and direction).
    #[inline]
    pub fn flow_key(&self, id: PktId) -> u32 {
        let p = self.pool.get(id);
        (p.flow << 1) | p.dir as u32
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
}

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
}

/// One parameter of a discipline, for `aqmlab list qdiscs NAME`.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ParamDoc {
    pub name: &'static str,
    pub help: &'static str,
}

/// A built discipline and its resolved parameters, or an error naming the key.
pub type BuildResult = Result<(AnyQdisc, Value), String>;

/// A registry entry: how to build a discipline from its scenario parameters.
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
    pub params: &'static [ParamDoc],
    /// Builds the discipline and returns it with its resolved parameters (defaults written out).
    pub build: fn(&Value, &LinkInfo, Rng) -> BuildResult,
}

/// Deserialises a discipline's parameter table into its config type, naming the offending key.
pub fn parse_params<T: DeserializeOwned>(params: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize::<_, T>(params.clone()).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." {
            inner
        } else {
            format!("{path}: {inner}")
        }
    })
}

/// Serialises a resolved config back to a JSON table.
pub fn resolved<T: Serialize>(cfg: &T) -> Value {
    serde_json::to_value(cfg).expect("configs serialise")
}

/// A range check with a message naming the key, the value and what is allowed.
pub fn check_range<T: PartialOrd + std::fmt::Display>(key: &str, v: T, lo: T, hi: T) -> Result<(), String> {
    if v < lo || v > hi {
        Err(format!("{key}: {v} is out of range; allowed {lo} to {hi}"))
    } else {
        Ok(())
    }
}

/// Declares the closed set of disciplines: an enum for static dispatch on the hot path, and the
/// registry. Adding a discipline = one file + one line here; the engine is untouched.
macro_rules! qdiscs {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// Any discipline, dispatched statically.
        pub enum AnyQdisc { $($variant($ty)),* }

        impl Qdisc for AnyQdisc {
            #[inline]
            fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
                match self { $(AnyQdisc::$variant(q) => q.enqueue(id, ctx, now)),* }
            }
            #[inline]
            fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
                match self { $(AnyQdisc::$variant(q) => q.dequeue(ctx, now)),* }
            }
            #[inline]
            fn backlog_bytes(&self) -> u64 {
                match self { $(AnyQdisc::$variant(q) => q.backlog_bytes()),* }
            }
            #[inline]
            fn backlog_packets(&self) -> u64 {
                match self { $(AnyQdisc::$variant(q) => q.backlog_packets()),* }
            }
            #[inline]
            fn next_timer(&self) -> Option<Time> {
                match self { $(AnyQdisc::$variant(q) => q.next_timer()),* }
            }
            fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
                match self { $(AnyQdisc::$variant(q) => q.on_timer(ctx, now)),* }
            }
            fn diagnostics(&self) -> Vec<(&'static str, f64)> {
                match self { $(AnyQdisc::$variant(q) => q.diagnostics()),* }
            }
        }
    };
}

qdiscs! {
    Fifo => fifo::Fifo,
    Codel => codel::Codel,
    FqCodel => fq_codel::FqCodel,
    Pie => pie::Pie,
    FqPie => fq_pie::FqPie,
    Red => red::Red,
    Choke => choke::Choke,
    Blue => blue::Blue,
    Sfq => sfq::Sfq,
    Drr => drr::Drr,
    SfqCodel => sfq_codel::SfqCodel,
}

/// Every registered discipline, in the order `aqmlab list qdiscs` prints them.
pub fn registry() -> Vec<&'static QdiscInfo> {
    let mut v: Vec<&'static QdiscInfo> = Vec::new();
    v.extend(fifo::INFO.iter());
    v.extend(codel::INFO.iter());
    v.extend(fq_codel::INFO.iter());
    v.extend(pie::INFO.iter());
    v.extend(fq_pie::INFO.iter());
    v.extend(red::INFO.iter());
    v.extend(choke::INFO.iter());
    v.extend(blue::INFO.iter());
    v.extend(sfq::INFO.iter());
    v.extend(drr::INFO.iter());
    v.extend(sfq_codel::INFO.iter());
    v
}

pub fn lookup(name: &str) -> Option<&'static QdiscInfo> {
    registry().into_iter().find(|i| i.name == name)
}

/// Builds the discipline `kind` with `params` (a JSON object without `kind`). `key` is where the
/// qdisc sits in the scenario (e.g. "topology.down.qdisc"); errors name it and the parameter.
pub fn build(kind: &str, params: &Value, link: &LinkInfo, rng: Rng, key: &str) -> BuildResult {
    let info = lookup(kind).ok_or_else(|| {
        let names: Vec<&str> = registry().iter().map(|i| i.name).collect();
        format!("{key}: unknown qdisc {kind:?}; allowed: {}", names.join(", "))
    })?;
    (info.build)(params, link, rng).map_err(|e| format!("{key}.{e}"))
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
    }

    impl Harness {
        pub fn new() -> Harness {
            Harness::default()
        }

        pub fn packet(&mut self, flow: u32, size: u32, ecn: Ecn) -> PktId {
            self.pool.alloc(Packet {
                flow,
                size,
                ecn,
                dir: Dir::Down,
                ..Packet::default()
            })
        }

        fn collect(&mut self) {
            for e in self.events.drain(..) {
                match e {
                    QueueEvent::Drop(id, r) => self.drops.push((id, r)),
                    QueueEvent::Mark(id) => self.marks.push(id),
                }
            }
        }

        /// Enqueues a new packet at `now`; returns its id.
        pub fn enqueue<Q: Qdisc>(&mut self, q: &mut Q, flow: u32, size: u32, ecn: Ecn, now: Time) -> PktId {
            let id = self.packet(flow, size, ecn);
            self.pool.get_mut(id).enqueued_at = now;
            let mut ctx = QueueCtx {
                pool: &mut self.pool,
                events: &mut self.events,
            };
            q.enqueue(id, &mut ctx, now);
            self.collect();
            id
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
