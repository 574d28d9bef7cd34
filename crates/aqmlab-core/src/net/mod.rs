//! The network elements of a path: hops (a queue discipline in front of a serialiser whose rate
//! may follow a schedule, then a propagation delay) and propagation pipes (constant-delay FIFOs).
//!
//! A pipe keeps its packets in its own ring and the event loop holds one pending event per
//! non-empty pipe (the htsim approach, docs/architecture.md, principle 5). Serialisation time rounds up to the
//! nanosecond; when the rate changes during a packet, the finish time integrates the schedule.
//! A WiFi hop (`wifi.rs`) replaces the serialiser with a driver that transmits on a medium
//! shared with other hops; a trace hop (`trace.rs`) with Mahimahi's delivery opportunities.
//! netem's slots (`slot.rs`) and a DOCSIS upstream's grants (`docsis.rs`) gate a hop's
//! dequeue, so that it delivers in bursts.
//!
//! `Hops` is the sequence a packet goes through at a hop (enqueue, the qdisc's verdicts,
//! dequeue into the device queue and the serialiser, the end of its transmission), written once
//! for the simulator's `World` and the emulator's forwarder; each says only what differs (how a
//! drop or mark is counted, how a transmission's end is awaited, where a packet goes next).

use crate::packet::{Dir, Ecn, PacketPool, PktId};
use crate::queue::registry::AnyQdisc;
use crate::queue::{DropReason, Qdisc, QueueCtx, QueueEvent};
use crate::record::rows::LinkStats;
use crate::record::{QueueColumns, Recorder, OUTCOME_DROP_BASE, OUTCOME_MARKED, OUTCOME_SENT};
use crate::rng::Rng;
use crate::units::{tx_time, Time, SEC};
use std::collections::VecDeque;
use wifi::Medium;
use wifi_rate::AggregateLoss;

pub mod airtime;
pub mod docsis;
pub mod edca;
pub mod phy;
pub mod reorder;
pub mod slot;
pub mod trace;
pub mod txq;
pub mod wifi;
pub mod wifi_rate;

/// One hop of a direction's path: a qdisc, an optional device queue and a serialiser.
pub struct Link {
    pub dir: Dir,
    /// The hop's name ("down"/"up" for the one-hop shorthand).
    pub name: String,
    /// The next hop of the same direction's chain (an index into the world's links), or `None`
    /// for the last hop, after which packets take the flow's own access path.
    pub next: Option<u32>,
    /// Some flow leaves the path after this hop although `next` follows (its route ends here).
    pub exit_here: bool,
    /// The first of a hop's parallel links, one per host (`hosts`): a packet arriving here goes
    /// to its flow's own (`Flow::host_links`).
    pub parallel: bool,
    /// Propagation delay after this hop: before the next one, or, after a chain's last hop,
    /// before the flows' access paths. With `delay_steps`, the largest step (so that the hop
    /// has its delay pipe).
    pub delay: Time,
    /// The delay as a schedule of steps; `None`: `delay` throughout.
    pub delay_steps: Option<Box<DelaySteps>>,
    /// The delay as netem's tfifo (`delay_limit`, `delay_jitter`); `None`: a propagation delay.
    pub tfifo: Option<Tfifo>,
    pub qdisc: AnyQdisc,
    pub qdisc_name: String,
    /// Rate steps (time, bit/s), sorted, the first at time 0.
    pub schedule: Vec<(Time, u64)>,
    /// The serialiser's own rate when a shaper in the qdisc paces the hop (`shaper = "htb"`):
    /// the interface's line rate, with `schedule` holding the shaper's rate. `None`: the
    /// serialiser runs at `schedule`.
    pub line_rate: Option<u64>,
    /// The packet being serialised.
    pub tx: Option<PktId>,
    /// The device (driver) queue below the qdisc, as ns-3's NetDevice queue or a NIC ring:
    /// packets the qdisc already handed out that wait for the serialiser. Empty and unused when
    /// `device_limit` is 0 (the default: the qdisc feeds the serialiser directly).
    pub device: VecDeque<PktId>,
    pub device_limit: usize,
    pub loss: f64,
    pub loss_rng: Rng,
    pub stats: LinkStats,
    /// Deadline of the qdisc timer event currently in the event queue.
    pub timer_armed: Option<Time>,
    /// A WiFi hop: its driver, which hands aggregates to a shared medium instead of the
    /// serialiser (`schedule` then holds the hop's nominal rate, for the summary only).
    pub wifi: Option<Box<wifi::Port>>,
    /// A trace hop: packets leave at the trace's delivery opportunities instead of the
    /// serialiser (`schedule` then holds the trace's mean rate, for the summary only).
    pub trace: Option<Box<trace::Trace>>,
    /// netem's slots: the qdisc is dequeued only while a slot's budget lasts.
    pub slot: Option<Box<slot::Slot>>,
    /// A DOCSIS upstream: the qdisc is dequeued only in the MAC's grants (`docsis.rs`).
    pub docsis: Option<Box<docsis::Mac>>,
    /// Which of the above hands the hop's packets on (`Delivery::of`, set once the hop is
    /// built), so that a plain hop's start tests one byte.
    pub delivery: Delivery,
}

/// How a hop hands packets on: what `Hops::start` runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// The serialiser, fed from the qdisc (and the device queue).
    #[default]
    Serialiser,
    /// The serialiser, fed while netem's slot lets the qdisc be dequeued.
    Slotted,
    /// The serialiser, fed while the DOCSIS MAC's grant lets the qdisc be dequeued.
    Granted,
    /// A trace's delivery opportunities.
    Trace,
    /// A WiFi driver on a shared medium.
    Wifi,
}

impl Delivery {
    /// The delivery of a built hop.
    pub fn of(l: &Link) -> Delivery {
        match (&l.wifi, &l.trace, &l.slot) {
            (Some(_), _, _) => Delivery::Wifi,
            (_, Some(_), _) => Delivery::Trace,
            (_, _, Some(_)) => Delivery::Slotted,
            _ if l.docsis.is_some() => Delivery::Granted,
            _ => Delivery::Serialiser,
        }
    }
}

impl Link {
    /// The delay after the hop at time 0.
    pub fn initial_delay(&self) -> Time {
        self.delay_steps.as_ref().map_or(self.delay, |d| d.steps[0].1)
    }

    /// The scheduled rate at time `t`.
    pub fn rate_at(&self, t: Time) -> u64 {
        let i = self.schedule.partition_point(|&(s, _)| s <= t);
        self.schedule[i.saturating_sub(1)].1
    }

    /// When a packet of `bytes` whose transmission starts at `start` has been fully serialised.
    #[inline]
    pub fn finish_time(&self, start: Time, bytes: u64) -> Time {
        match self.schedule.as_slice() {
            [(_, rate)] => start + tx_time(bytes, *rate),
            _ => self.finish_time_scheduled(start, bytes),
        }
    }

    /// `finish_time` on a link whose rate changes. A step of rate 0 is an outage: the packet
    /// waits in the serialiser for the next step; after a last step of 0 it never finishes
    /// (`Time::MAX`, past any run's end).
    fn finish_time_scheduled(&self, start: Time, bytes: u64) -> Time {
        let mut i = self.schedule.partition_point(|&(s, _)| s <= start) - 1;
        let mut t = start;
        // Work in bit-nanoseconds to stay exact: bits * 1e9 remaining.
        let mut left = bytes as u128 * 8 * SEC as u128;
        loop {
            let rate = self.schedule[i].1 as u128;
            let end = self.schedule.get(i + 1).map(|s| s.0);
            match end {
                Some(e) if (e - t) as u128 * rate < left => {
                    left -= (e - t) as u128 * rate;
                    t = e;
                    i += 1;
                }
                _ if rate == 0 => return Time::MAX,
                _ => return t + left.div_ceil(rate) as Time,
            }
        }
    }

    /// The rate steps the hop can carry: its schedule, each rate at most what its qdisc shapes
    /// to (CAKE's `bandwidth`). A shaper below the line rate makes the hop as slow as it.
    pub fn effective_schedule(&self) -> Vec<(Time, u64)> {
        let shaped = self.qdisc.shaped_rate().unwrap_or(u64::MAX);
        self.schedule.iter().map(|&(t, r)| (t, r.min(shaped))).collect()
    }

    /// Bytes the link can carry over [0, end): the integral of its effective schedule, or a
    /// trace's opportunities in full-size packets.
    pub fn capacity_bytes(&self, end: Time) -> u64 {
        if let Some(t) = &self.trace {
            return t.opportunities_before(end) * trace::FULL_PACKET;
        }
        let schedule = self.effective_schedule();
        let mut bits: u128 = 0;
        for (k, &(s, r)) in schedule.iter().enumerate() {
            if s >= end {
                break;
            }
            let e = schedule.get(k + 1).map_or(end, |n| n.0.min(end));
            bits += (e - s) as u128 * r as u128;
        }
        (bits / (8 * SEC as u128)) as u64
    }
}

/// What the per-hop sequence works on, borrowed apart from the rest of its owner.
pub struct HopParts<'a> {
    pub links: &'a mut [Link],
    pub pool: &'a mut PacketPool,
    pub qev: &'a mut Vec<QueueEvent>,
    pub rec: &'a mut Recorder,
    /// The WiFi media the path's WiFi hops transmit on (none on a wired path).
    pub media: &'a mut [Medium],
}

/// The per-hop sequence, shared by the simulator and the emulator. The required methods are
/// where the two differ; the provided ones are the sequence itself.
pub trait Hops {
    fn parts(&mut self) -> HopParts<'_>;
    fn now(&self) -> Time;
    /// A packet of `flow` was dropped: by a qdisc (`queued`: it was counted as queued) or on
    /// the wire.
    fn dropped(&mut self, flow: u32, queued: bool);
    /// A qdisc marked packet `id` CE.
    fn marked(&mut self, id: PktId);
    /// A discipline asked to end the run.
    fn stop(&mut self);
    /// Hop `l` started transmitting; the transmission ends at `done`.
    fn transmitting(&mut self, l: usize, done: Time);
    /// Hop `l` delivered packet `id` of `flow`: on to what follows it on the flow's path.
    fn forward(&mut self, l: usize, id: PktId, flow: u32);
    /// Hop `l` may have work: start a transmission, re-arm its timer.
    fn serve(&mut self, l: usize);
    /// The WiFi station the packets of `flow` are for (the access point's destination).
    fn station(&self, flow: u32) -> usize;
    /// Medium `m` carries a transmission until `done`; `air_done(m)` is due then.
    fn on_air(&mut self, m: usize, done: Time);
    /// Hop `l` waits for a trace's opportunity or a slot's start at `t`; `wake(l)` is due then.
    fn wake_at(&mut self, l: usize, t: Time);
    /// Packet `id` enters a qdisc.
    fn entering(&mut self, _id: PktId) {}
    /// Packet `id` left a qdisc for the wire.
    fn dequeued(&mut self, _id: PktId) {}
    /// Packet `id` left hop `l`'s custody other than by the end of a wired transmission:
    /// dropped there, or a WiFi frame's TX status (acknowledged, or its last try failed).
    fn left_hop(&mut self, _l: usize, _id: PktId) {}

    /// Packet `id` arrives at hop `l`: into its qdisc, then the hop is served.
    fn arrival(&mut self, l: usize, id: PktId) {
        self.offer(l, id);
        self.queue_events(l);
        self.serve(l);
    }

    /// Hands packet `id` to hop `l`'s qdisc; its drops and marks wait in the events.
    #[inline]
    fn offer(&mut self, l: usize, id: PktId) {
        self.entering(id);
        let now = self.now();
        let HopParts { links, pool, qev, .. } = self.parts();
        let p = pool.get_mut(id);
        p.enqueued_at = now;
        p.subq = 0;
        let link = &mut links[l];
        link.stats.arrivals += 1;
        link.qdisc.enqueue(id, &mut QueueCtx { pool, events: qev }, now);
    }

    /// Applies the drops and marks the qdisc of hop `l` reported (most calls: none, so only
    /// that test is inlined).
    #[inline(always)]
    fn queue_events(&mut self, l: usize) {
        if !self.parts().qev.is_empty() {
            self.apply_queue_events(l, true);
        }
    }

    /// Applies the drops and marks of `queue_events`; `queued`: the packets were counted in the
    /// qdisc (false: in a WiFi driver's queues, `net::txq`).
    #[inline(never)]
    fn apply_queue_events(&mut self, l: usize, queued: bool) {
        let now = self.now();
        let mut k = 0;
        while k < self.parts().qev.len() {
            let HopParts {
                links,
                pool,
                qev,
                rec,
                ..
            } = self.parts();
            match qev[k] {
                QueueEvent::Drop(id, reason) => {
                    let p = pool.get(id);
                    rec.packet(p, links[l].dir, l as u8, now, OUTCOME_DROP_BASE + reason as u8);
                    links[l].stats.drops[reason as usize] += 1;
                    let flow = p.flow;
                    self.left_hop(l, id);
                    self.parts().pool.release(id);
                    self.dropped(flow, queued);
                }
                QueueEvent::Mark(id) => {
                    links[l].stats.marks += 1;
                    self.marked(id);
                }
                // the events still due at this instant run; the loop ends after them
                QueueEvent::Stop => self.stop(),
            }
            k += 1;
        }
        self.parts().qev.clear();
    }

    /// Takes the next packet out of hop `l`'s qdisc and records it (sent or marked).
    fn dequeue(&mut self, l: usize) -> Option<PktId> {
        let now = self.now();
        let HopParts { links, pool, qev, .. } = self.parts();
        let next = links[l].qdisc.dequeue(&mut QueueCtx { pool, events: qev }, now);
        self.took(l, next, now)
    }

    /// Records what hop `l`'s qdisc handed out at `now` (`next`), after its drops and marks.
    #[inline]
    fn took(&mut self, l: usize, next: Option<PktId>, now: Time) -> Option<PktId> {
        self.queue_events(l);
        let id = next?;
        self.dequeued(id);
        let HopParts { links, pool, rec, .. } = self.parts();
        let p = pool.get(id);
        let outcome = if p.ecn == Ecn::Ce {
            OUTCOME_MARKED
        } else {
            OUTCOME_SENT
        };
        rec.packet(p, links[l].dir, l as u8, now, outcome);
        Some(id)
    }

    /// Feeds the serialiser of hop `l`: starts the next transmission when the link is idle and
    /// keeps the device queue (if any) topped up from the qdisc, through its gate if `GATED`
    /// (netem's slots or the DOCSIS MAC's grants).
    fn feed<const GATED: bool>(&mut self, l: usize) {
        loop {
            let link = &mut self.parts().links[l];
            if link.tx.is_none() {
                if let Some(id) = link.device.pop_front() {
                    self.begin_tx(l, id);
                    continue;
                }
            }
            let link = &self.parts().links[l];
            if link.tx.is_some() && link.device.len() >= link.device_limit {
                return;
            }
            let next = if GATED {
                self.dequeue_gated(l)
            } else {
                self.dequeue(l)
            };
            let Some(id) = next else {
                return;
            };
            let link = &mut self.parts().links[l];
            if link.tx.is_none() {
                self.begin_tx(l, id);
            } else {
                link.device.push_back(id);
            }
        }
    }

    /// Hop `l` starts serialising packet `id`.
    #[inline]
    fn begin_tx(&mut self, l: usize, id: PktId) {
        let now = self.now();
        let HopParts { links, pool, .. } = self.parts();
        let link = &mut links[l];
        link.tx = Some(id);
        let bytes = pool.get(id).size as u64;
        let done = match link.line_rate {
            None => link.finish_time(now, bytes),
            Some(r) => now + tx_time(bytes, r),
        };
        self.transmitting(l, done);
    }

    /// `dequeue` through a hop's gate: its slots, or its DOCSIS MAC.
    #[cold]
    fn dequeue_gated(&mut self, l: usize) -> Option<PktId> {
        if self.parts().links[l].slot.is_some() {
            self.dequeue_in_slot(l)
        } else {
            self.dequeue_in_grant(l)
        }
    }

    /// `dequeue` on a DOCSIS upstream: a packet leaves only while the current MAP's grant
    /// lasts; otherwise the hop wakes at the MAP start the MAC names (`docsis.rs`). The MAC
    /// sees the backlog (its requests ask for it) and each packet taken.
    #[cold]
    fn dequeue_in_grant(&mut self, l: usize) -> Option<PktId> {
        let now = self.now();
        let link = &mut self.parts().links[l];
        let backlog = link.qdisc.backlog_bytes();
        if link.qdisc.backlog_packets() == 0 {
            return None;
        }
        let mac = link.docsis.as_deref_mut().expect("a DOCSIS hop");
        if let Err(t) = mac.may_send(backlog, now) {
            if mac.armed != Some(t) {
                mac.armed = Some(t);
                self.wake_at(l, t);
            }
            return None;
        }
        let id = self.dequeue(l)?;
        let HopParts { links, pool, .. } = self.parts();
        let link = &mut links[l];
        let behind = link.qdisc.backlog_bytes();
        let mac = link.docsis.as_deref_mut().expect("a DOCSIS hop");
        mac.sent(pool.get(id).size, behind, now);
        Some(id)
    }

    /// `dequeue` on a hop with slots: a packet leaves only while the current slot's budget
    /// lasts and if it was ready (entered the qdisc) by the slot's start; one taken that became
    /// ready later waits at the gate for the new slot drawn then (`slot.rs`). A closed slot
    /// wakes the hop when the next one starts.
    #[cold]
    fn dequeue_in_slot(&mut self, l: usize) -> Option<PktId> {
        let now = self.now();
        let link = &mut self.parts().links[l];
        let slot = link.slot.as_deref_mut().expect("a slot hop");
        let next = match slot.held {
            Some(id) => id,
            None if link.qdisc.backlog_packets() == 0 => return None,
            None if slot.start() > now => {
                let t = slot.start();
                return self.await_slot(l, t);
            }
            None => self.dequeue(l)?,
        };
        let HopParts { links, pool, .. } = self.parts();
        let p = pool.get(next);
        let slot = links[l].slot.as_deref_mut().expect("a slot hop");
        match slot.may_send(p.enqueued_at, now) {
            Ok(()) => {
                slot.held = None;
                slot.sent(p.size, now);
                Some(next)
            }
            Err(t) => {
                slot.held = Some(next);
                self.await_slot(l, t)
            }
        }
    }

    /// Hop `l` waits for its slot starting at `t` (one wake-up per start).
    fn await_slot(&mut self, l: usize, t: Time) -> Option<PktId> {
        let slot = self.parts().links[l].slot.as_deref_mut().expect("a slot hop");
        if slot.armed != Some(t) {
            slot.armed = Some(t);
            self.wake_at(l, t);
        }
        None
    }

    /// Starts hop `l`'s next transmission, or fills its WiFi driver, or arms its trace.
    #[inline]
    fn start(&mut self, l: usize) {
        match self.parts().links[l].delivery {
            Delivery::Serialiser => self.feed::<false>(l),
            Delivery::Slotted | Delivery::Granted => self.feed::<true>(l),
            Delivery::Trace => self.trace_arm(l),
            Delivery::Wifi => self.wifi_fill(l),
        }
    }

    /// Hop `l`'s wake-up (`wake_at`) is due: its trace's opportunities, its WiFi receivers'
    /// reorder timer, its slot's start or its DOCSIS MAP's.
    fn wake(&mut self, l: usize) {
        let link = &mut self.parts().links[l];
        if link.trace.is_some() {
            self.opportunity(l);
            return;
        }
        if link.wifi.is_some() {
            self.reorder_timer(l);
            return;
        }
        match (link.slot.as_deref_mut(), link.docsis.as_deref_mut()) {
            (Some(slot), _) => slot.armed = None,
            (None, mac) => mac.expect("a slot or DOCSIS hop").armed = None,
        }
        self.serve(l);
    }

    /// Arms hop `l`'s next trace opportunity when it has something to carry; those that passed
    /// while it had nothing are lost (`trace.rs`).
    #[cold]
    fn trace_arm(&mut self, l: usize) {
        let now = self.now();
        let link = &mut self.parts().links[l];
        let trace = link.trace.as_deref_mut().expect("a trace hop");
        if trace.armed || (!trace.carrying() && link.qdisc.backlog_packets() == 0) {
            return;
        }
        trace.skip_through(now);
        trace.armed = true;
        let t = trace.next_time();
        self.wake_at(l, t);
    }

    /// Hop `l`'s trace opportunities due now, while it has something to carry: each carries
    /// `OPPORTUNITY_BYTES` of the packet in transmission and of the next ones its qdisc gives,
    /// and delivers each packet whose last byte it carries; the rest of an opportunity the queue
    /// cannot fill is lost. Then the next opportunity is armed if anything is left.
    #[cold]
    fn opportunity(&mut self, l: usize) {
        let now = self.now();
        self.parts().links[l]
            .trace
            .as_deref_mut()
            .expect("a trace hop")
            .armed = false;
        loop {
            let link = &mut self.parts().links[l];
            let trace = link.trace.as_deref_mut().expect("a trace hop");
            let work = trace.carrying() || link.qdisc.backlog_packets() > 0;
            if !work || trace.next_time() > now {
                break;
            }
            let mut room = trace.open();
            while room > 0 {
                if self.parts().links[l].tx.is_none() {
                    let Some(id) = self.dequeue(l) else {
                        break;
                    };
                    let HopParts { links, pool, .. } = self.parts();
                    links[l].tx = Some(id);
                    let size = pool.get(id).size;
                    links[l].trace.as_deref_mut().expect("a trace hop").begin(size);
                }
                let link = &mut self.parts().links[l];
                if link.trace.as_deref_mut().expect("a trace hop").carry(&mut room) {
                    let id = link.tx.take().expect("a packet being carried");
                    self.delivered(l, id);
                }
            }
        }
        self.trace_arm(l);
    }

    /// Feeds a WiFi hop's driver from its qdisc while the driver takes packets, forms
    /// aggregates and offers them to the medium. What mac80211's queues drop (`net::txq`) is
    /// the hop's drop.
    #[cold]
    fn wifi_fill(&mut self, l: usize) {
        let m = self.parts().links[l].wifi.as_ref().expect("a WiFi hop").medium as usize;
        if self.parts().links[l].qdisc.tx_queues() > 0 {
            self.wifi_fill_per_ac(l);
        } else {
            self.wifi_fill_root(l);
        }
        let now = self.now();
        let HopParts { links, pool, qev, .. } = self.parts();
        let port = links[l].wifi.as_mut().expect("a WiFi hop");
        port.form(now, &mut QueueCtx { pool, events: qev });
        self.mac_events(l);
        self.medium_access(m);
    }

    /// The station packet `id` from hop `l`'s qdisc is for (the access point's destination; 0
    /// at a station).
    fn wifi_dest(&mut self, l: usize, id: PktId) -> usize {
        let many = self.parts().links[l]
            .wifi
            .as_ref()
            .expect("a WiFi hop")
            .radios
            .len()
            > 1;
        if many {
            let flow = self.parts().pool.get(id).flow;
            self.station(flow)
        } else {
            0
        }
    }

    /// `qdisc_placement = "mq"` (`queue::mq`): each access category's child qdisc is dequeued
    /// while that AC's driver queue is awake, and its packets go straight into that queue; a
    /// stopped AC holds only its own child (sch_generic.c `dequeue_skb` skips a
    /// `TCQ_F_ONETXQUEUE` qdisc whose TX queue is stopped). Within one instant the ACs are
    /// served in index order; each has its own driver queue, so the order moves nothing.
    fn wifi_fill_per_ac(&mut self, l: usize) {
        for ac in 0..self.parts().links[l].qdisc.tx_queues() {
            while self.parts().links[l]
                .wifi
                .as_ref()
                .expect("a WiFi hop")
                .ac_takes(ac)
            {
                let now = self.now();
                let HopParts { links, pool, qev, .. } = self.parts();
                let ctx = &mut QueueCtx { pool, events: qev };
                let next = links[l].qdisc.dequeue_tx_queue(ac, ctx, now);
                let Some(id) = self.took(l, next, now) else {
                    break;
                };
                let dest = self.wifi_dest(l, id);
                let HopParts { links, pool, qev, .. } = self.parts();
                let port = links[l].wifi.as_mut().expect("a WiFi hop");
                port.accept(dest, ac, id, now, &mut QueueCtx { pool, events: qev });
                self.mac_events(l);
            }
        }
    }

    /// `qdisc_placement = "root"`: one qdisc over every AC, dequeued while the driver takes
    /// packets (with EDCA: while no packet waits for a stopped AC, `wifi::Port::offer`).
    fn wifi_fill_root(&mut self, l: usize) {
        if self.parts().links[l]
            .wifi
            .as_ref()
            .expect("a WiFi hop")
            .stopped
            .is_some()
        {
            let now = self.now();
            let HopParts { links, pool, qev, .. } = self.parts();
            let port = links[l].wifi.as_mut().expect("a WiFi hop");
            port.wake(now, &mut QueueCtx { pool, events: qev });
        }
        loop {
            if !self.parts().links[l].wifi.as_ref().expect("a WiFi hop").takes() {
                break;
            }
            let Some(id) = self.dequeue(l) else {
                break;
            };
            let dest = self.wifi_dest(l, id);
            let now = self.now();
            let HopParts { links, pool, qev, .. } = self.parts();
            let port = links[l].wifi.as_mut().expect("a WiFi hop");
            port.offer(dest, id, now, &mut QueueCtx { pool, events: qev });
            self.mac_events(l);
        }
    }

    /// The drops and marks of a WiFi driver's queues (`net::txq`), whose packets already left
    /// the qdisc's count.
    fn mac_events(&mut self, l: usize) {
        if !self.parts().qev.is_empty() {
            self.apply_queue_events(l, false);
        }
    }

    /// When medium m is idle, its transmitters with an aggregate ready contend for it by the
    /// medium's access model (`net::wifi::Access`).
    fn medium_access(&mut self, m: usize) {
        let HopParts { links, media, .. } = self.parts();
        let medium = &mut media[m];
        if !medium.on_air.is_empty() {
            return;
        }
        let mut slots: Vec<Option<&mut wifi::Port>> =
            links.iter_mut().map(|l| l.wifi.as_deref_mut()).collect();
        let mut ports: Vec<&mut wifi::Port> = medium
            .ports
            .iter()
            .map(|&p| slots[p as usize].take().expect("a WiFi hop"))
            .collect();
        if let Some(air) = medium.access(&mut ports) {
            let done = self.now() + air;
            self.on_air(m, done);
        }
    }

    /// The end of the transmission(s) on medium m: each transmitter settles its contention
    /// window and its subframes, then refills, and the medium is offered again.
    fn air_done(&mut self, m: usize) {
        let on_air = std::mem::take(&mut self.parts().media[m].on_air);
        let collided = on_air.len() > 1;
        self.charge_airtime(m, &on_air, collided);
        let hops: Vec<usize> = on_air.iter().map(|t| t.0 as usize).collect();
        for (l, agg) in on_air {
            self.subframes_done(l as usize, agg, collided);
        }
        for l in hops {
            self.serve(l);
        }
        self.medium_access(m);
    }

    /// The access point (the medium's first port) charges each transmission's PPDU airtime to
    /// its station: its own to the destination, every attempt; a station's to that station when
    /// received whole (net/mac80211/sta_info.c `ieee80211_sta_register_airtime`, called by
    /// ath9k's `ath_tx_count_airtime` and `ath_rx_count_airtime`).
    fn charge_airtime(&mut self, m: usize, on_air: &[(u32, wifi::Aggregate)], collided: bool) {
        let now = self.now();
        let HopParts { links, media, .. } = self.parts();
        let ports = &media[m].ports;
        let ap = ports[0];
        for (hop, agg) in on_air {
            let air = agg.phy.ppdu(agg.bytes);
            let (dest, rx) = if *hop == ap {
                (agg.dest as usize, false)
            } else if !collided {
                (ports.iter().position(|p| p == hop).expect("a port") - 1, true)
            } else {
                continue;
            };
            let port = links[ap as usize].wifi.as_mut().expect("a WiFi hop");
            port.charge(dest, air, rx, now);
        }
    }

    /// Hop l's aggregate left the air. After a collision it goes back to the head of the
    /// hardware queue whole; otherwise each subframe arrives, or is lost with the channel's
    /// loss at the aggregate's MCS and goes back to the head of its software queue for a retry
    /// (dropped after `retries`). The rate control learns how many got through.
    fn subframes_done(&mut self, l: usize, agg: wifi::Aggregate, collided: bool) {
        let now = self.now();
        let port = self.parts().links[l].wifi.as_mut().expect("a WiFi hop");
        let retry_limit = port.driver.retries;
        port.on_air = false;
        port.settle(collided);
        if collided {
            // No block ACK: the hardware sends the whole aggregate again after a doubled
            // backoff, ahead of the later ones (the receiver's reorder window sees no gap).
            let sent = agg.pkts.len() as u32;
            port.radios[agg.dest as usize].report(agg.phy.mcs, sent, 0, now);
            port.stats.retried += sent as u64;
            port.acs[agg.ac as usize].hw.push_front(agg);
            return;
        }
        let mut losses = AggregateLoss::new(port.radios[agg.dest as usize].channel, agg.phy);
        let reorders = port.reorders();
        let dest = agg.dest as usize;
        let (ac, q) = (agg.ac as usize, port.queue(dest, agg.ac as usize));
        let mut failed = Vec::new();
        // With reordering, the frames the receiver hands on, in order (after the loop).
        let mut released = Vec::new();
        let mut acked = 0;
        for &id in &agg.pkts {
            let HopParts { links, pool, .. } = self.parts();
            let link = &mut links[l];
            let loss = losses.of(wifi::MPDU_OVERHEAD + pool.get(id).size);
            if loss > 0.0 && link.loss_rng.bernoulli(loss) {
                let port = link.wifi.as_mut().expect("a WiFi hop");
                let tries = port.retries.entry(id).or_insert(0);
                *tries += 1;
                if *tries <= retry_limit {
                    port.stats.retried += 1;
                    failed.push(id);
                    continue;
                }
                port.retries.remove(&id);
                port.left(ac);
                if reorders {
                    port.received(q, id, false, now, &mut released);
                }
                self.left_hop(l, id);
                self.lost_on_air(l, id);
                continue;
            }
            let port = link.wifi.as_mut().expect("a WiFi hop");
            if !port.retries.is_empty() {
                port.retries.remove(&id);
            }
            port.left(ac);
            acked += 1;
            let p = pool.get(id);
            let (flow, size) = (p.flow, p.size);
            link.stats.tx_packets += 1;
            link.stats.tx_bytes += size as u64;
            self.left_hop(l, id);
            let port = self.parts().links[l].wifi.as_mut().expect("a WiFi hop");
            if !reorders {
                self.forward(l, id, flow);
            } else if !port.received(q, id, true, now, &mut released) {
                // below the receiver's window, which the reorder timeout moved past it
                self.lost_on_air(l, id);
            }
        }
        self.forward_all(l, released);
        if reorders {
            self.arm_reorder(l);
        }
        let port = self.parts().links[l].wifi.as_mut().expect("a WiFi hop");
        let sent = agg.pkts.len() as u32;
        port.radios[agg.dest as usize].report(agg.phy.mcs, sent, acked, now);
        for &id in failed.iter().rev() {
            port.queues[q].push_front(id);
        }
        let air = agg.phy.ppdu(agg.bytes);
        port.completed(agg.dest as usize, air, !failed.is_empty(), now);
        port.recycle(agg.pkts);
    }

    /// Packet `id`, off hop `l`, is lost on the air: given up at the retry limit, or discarded
    /// by its receiver as out of date.
    fn lost_on_air(&mut self, l: usize, id: PktId) {
        let HopParts { links, pool, .. } = self.parts();
        links[l].stats.drops[DropReason::Loss as usize] += 1;
        let flow = pool.get(id).flow;
        pool.release(id);
        self.dropped(flow, false);
    }

    /// Hop `l`'s receivers hand on `ids`, in order.
    fn forward_all(&mut self, l: usize, ids: Vec<PktId>) {
        for id in ids {
            let flow = self.parts().pool.get(id).flow;
            self.forward(l, id, flow);
        }
    }

    /// Arms hop `l`'s wake-up for its receivers' earliest reorder timer, unless it is set for
    /// that time or earlier.
    fn arm_reorder(&mut self, l: usize) {
        let port = self.parts().links[l].wifi.as_mut().expect("a WiFi hop");
        let Some(t) = port.reorder_deadline() else {
            return;
        };
        if port.reorder_armed.is_some_and(|a| a <= t) {
            return;
        }
        port.reorder_armed = Some(t);
        self.wake_at(l, t);
    }

    /// Hop `l`'s reorder timer (its wake-up at `reorder_armed`; an earlier one re-armed since
    /// is ignored): the frames held past the timeout go on, and the timer is armed again.
    #[cold]
    fn reorder_timer(&mut self, l: usize) {
        let now = self.now();
        let port = self.parts().links[l].wifi.as_mut().expect("a WiFi hop");
        if port.reorder_armed != Some(now) {
            return;
        }
        port.reorder_armed = None;
        let mut released = Vec::new();
        port.expire_reorder(now, &mut released);
        self.forward_all(l, released);
        self.arm_reorder(l);
    }

    /// Hop `l`'s transmission ended: the packet is delivered, and the hop is served.
    fn tx_done(&mut self, l: usize) {
        let id = self.parts().links[l]
            .tx
            .take()
            .expect("a transmission was in progress");
        self.delivered(l, id);
        self.serve(l);
    }

    /// Hop `l` put packet `id` on the wire whole: it is lost there (the hop's loss rate) or
    /// forwarded.
    #[inline(always)]
    fn delivered(&mut self, l: usize, id: PktId) {
        let HopParts { links, pool, .. } = self.parts();
        let link = &mut links[l];
        let p = pool.get(id);
        let (flow, size) = (p.flow, p.size);
        link.stats.tx_packets += 1;
        link.stats.tx_bytes += size as u64;
        if link.loss > 0.0 && link.loss_rng.bernoulli(link.loss) {
            link.stats.drops[DropReason::Loss as usize] += 1;
            pool.release(id);
            self.dropped(flow, false);
        } else {
            self.forward(l, id, flow);
        }
    }

    /// Runs hop `l`'s qdisc timer at `t` if it is due. A discipline that held packets back while
    /// the hop was idle (a shaper's timer: CAKE's) is served then; a work-conserving one is empty
    /// whenever its hop is idle.
    fn qdisc_on_timer(&mut self, l: usize, t: Time) {
        let HopParts { links, pool, qev, .. } = self.parts();
        let link = &mut links[l];
        if link.qdisc.next_timer().is_some_and(|x| x <= t) {
            if let Some(s) = link.docsis.as_deref().and_then(|m| m.shaper_state(t)) {
                link.qdisc.shaper_state(s);
            }
            link.qdisc.on_timer(&mut QueueCtx { pool, events: qev }, t);
            self.queue_events(l);
            let link = &self.parts().links[l];
            if link.tx.is_none() && link.wifi.is_none() && link.qdisc.backlog_packets() > 0 {
                self.serve(l);
            }
        }
    }
}

/// One row per hop of the `queue` table at time `t`.
pub fn sample_hops(links: &[Link], t: Time, q: &mut QueueColumns) {
    for (k, l) in links.iter().enumerate() {
        q.t.push(t);
        q.dir.push(l.dir as u8);
        q.hop.push(k as u8);
        q.backlog_bytes.push(l.qdisc.backlog_bytes());
        q.backlog_pkts.push(l.qdisc.backlog_packets());
        q.tx_bytes.push(l.stats.tx_bytes);
        q.drops.push(l.stats.total_drops());
        q.marks.push(l.stats.marks);
        q.rate_bps.push(
            l.qdisc
                .shaped_rate()
                .map_or(l.rate_at(t), |s| s.min(l.rate_at(t))),
        );
    }
}

/// A hop's delay as Linux 3.2's netem holds it (net/sched/sch_netem.c): each packet gets its
/// time to send, now + delay + a uniform draw in [-jitter, jitter) (`tabledist` without a
/// distribution table), and waits in the tfifo, kept in order of those times with ties in
/// arrival order (`tfifo_enqueue`); an arrival finding `limit` packets held is dropped
/// (`qdisc_reshape_fail`).
pub struct Tfifo {
    pub limit: usize,
    pub jitter: Time,
    pub rng: Rng,
}

impl Tfifo {
    /// The offset from now + delay - jitter of the next packet's time to send.
    pub fn draw(&mut self) -> Time {
        if self.jitter == 0 {
            return 0;
        }
        self.rng.below(2 * self.jitter)
    }
}

/// A hop's delay in steps (`delay` as a schedule), as a path that changes: a packet entering
/// it at `t` is due at t + the delay in force then, and, unless `reorder`, not before the packet
/// ahead of it (one path, whose packets keep their order when it shortens: those sent after a
/// step down wait behind the ones still in flight on the longer path).
pub struct DelaySteps {
    /// (time, delay) steps, sorted, the first at 0.
    pub steps: Vec<(Time, Time)>,
    pub reorder: bool,
}

impl DelaySteps {
    /// The delay in force at `t`.
    pub fn at(&self, t: Time) -> Time {
        let i = self.steps.partition_point(|&(s, _)| s <= t);
        self.steps[i - 1].1
    }
}

/// A constant-delay FIFO between two elements.
#[derive(Default)]
pub struct Pipe {
    pub delay: Time,
    /// Packets in flight, in order of arrival time (ties in order of entry).
    pub ring: VecDeque<(Time, PktId)>,
    /// Time of the pipe's pending arrival event: the head's arrival time while any is in flight.
    pub armed: Option<Time>,
}

impl Pipe {
    /// Packet `id` in flight until `at`: at the back when no packet in flight arrives later,
    /// else by arrival time after any equal one (a packet that left its host's NIC late).
    #[inline(always)]
    pub fn insert(&mut self, at: Time, id: PktId) {
        if self.ring.back().is_none_or(|&(last, _)| last <= at) {
            self.ring.push_back((at, id));
        } else {
            insert_in_order(&mut self.ring, at, id);
        }
    }
}

/// Inserts a packet arriving at `at` into a ring ordered by arrival time, after any equal one
/// (the rare case: a packet leaving its host's NIC before one of another host's already in
/// the shared pipe).
#[cold]
fn insert_in_order(ring: &mut VecDeque<(Time, PktId)>, at: Time, id: PktId) {
    let k = ring.partition_point(|&(x, _)| x <= at);
    ring.insert(k, (at, id));
}

/// A host's NIC (`nic_rate`): a FIFO serialiser in front of its access path, which a packet of
/// `size` bytes handed to it at `now` leaves at the returned time; `free` is when its last
/// packet leaves. `rate` None: packets leave at once.
#[inline(always)]
pub fn nic_departure(free: &mut Time, rate: Option<u64>, now: Time, size: u64) -> Time {
    match rate {
        Some(rate) => {
            *free = (*free).max(now) + tx_time(size, rate);
            *free
        }
        None => now,
    }
}

/// The two hosts of a flow with timing noise (`host_jitter`): each packet a host sends is
/// ready for its NIC a draw uniform in [0, jitter) after it was sent, and not before the
/// host's previous packet was ready, so a host's packets keep their order. Each host draws
/// from its own stream.
pub struct HostJitter {
    pub jitter: Time,
    /// Per side (`Side`), the stream and when its last packet was ready.
    pub rng: [Rng; 2],
    pub last: [Time; 2],
}

impl HostJitter {
    /// When the packet side `s` sends at `now` is ready for its NIC.
    #[inline]
    pub fn ready(&mut self, s: usize, now: Time) -> Time {
        let t = (now + self.rng[s].below(self.jitter)).max(self.last[s]);
        self.last[s] = t;
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::fifo::Fifo;
    use crate::units::{Limit, MS};

    fn link(schedule: Vec<(Time, u64)>) -> Link {
        Link {
            dir: Dir::Down,
            name: "down".into(),
            next: None,
            exit_here: false,
            parallel: false,
            delay: 0,
            delay_steps: None,
            tfifo: None,
            qdisc: AnyQdisc::Fifo(Fifo::new(Limit::Packets(10), false)),
            qdisc_name: "pfifo".into(),
            schedule,
            line_rate: None,
            tx: None,
            device: VecDeque::new(),
            device_limit: 0,
            loss: 0.0,
            loss_rng: Rng::from_seed(0),
            stats: LinkStats::default(),
            timer_armed: None,
            wifi: None,
            trace: None,
            slot: None,
            docsis: None,
            delivery: Delivery::Serialiser,
        }
    }

    #[test]
    fn a_nic_serialises_its_packets_back_to_back_and_starts_the_next_idle_one_at_once() {
        // 1500 B at 1 Gb/s: 12,000 bit = 12 us each. Three handed over at 0 leave at 12, 24
        // and 36 us; one handed over at 100 us, the NIC idle, leaves at 112 us; a 64 B ACK
        // handed over at 105 us waits for it and leaves 512 ns later.
        let mut free = 0;
        let g = Some(1_000_000_000);
        let out: Vec<Time> = (0..3).map(|_| nic_departure(&mut free, g, 0, 1500)).collect();
        assert_eq!(out, [12_000, 24_000, 36_000]);
        assert_eq!(nic_departure(&mut free, g, 100_000, 1500), 112_000);
        assert_eq!(nic_departure(&mut free, g, 105_000, 64), 112_512);
        // No NIC rate: packets leave when handed over, and the NIC keeps no backlog.
        let mut free = 0;
        assert_eq!(nic_departure(&mut free, None, 7, 1500), 7);
        assert_eq!(free, 0);
    }

    #[test]
    fn a_pipe_keeps_its_packets_in_arrival_order_ties_in_order_of_entry() {
        let mut p = Pipe::default();
        for (at, id) in [(10, 1), (30, 2), (20, 3), (30, 4), (5, 5), (20, 6)] {
            p.insert(at, id);
        }
        let order: Vec<(Time, PktId)> = p.ring.iter().copied().collect();
        assert_eq!(order, [(5, 5), (10, 1), (20, 3), (20, 6), (30, 2), (30, 4)]);
    }

    #[test]
    fn finish_time_integrates_rate_changes() {
        // 1500 B = 12000 bit. At 10 Mb/s for 0.6 ms = 6000 bit, then 1 Mb/s for the other
        // 6000 bit = 6 ms: finish at 6.6 ms.
        let l = link(vec![(0, 10_000_000), (600_000, 1_000_000)]);
        assert_eq!(l.finish_time(0, 1500), 6_600_000);
        assert_eq!(l.rate_at(599_999), 10_000_000);
        assert_eq!(l.rate_at(600_000), 1_000_000);
        // 10 Mb/s for 1 s then 1 Mb/s: capacity over 2 s = (10e6 + 1e6) / 8 bytes.
        let l = link(vec![(0, 10_000_000), (1000 * MS, 1_000_000)]);
        assert_eq!(l.capacity_bytes(2000 * MS), 11_000_000 / 8);
    }

    #[test]
    fn an_outage_holds_the_packet_until_the_rate_returns() {
        // 10 Mb/s for 0.6 ms (6000 bit), out for 10 ms, then 10 Mb/s for the other 6000 bit
        // (0.6 ms): finish at 11.2 ms; the outage carries nothing.
        let l = link(vec![(0, 10_000_000), (600_000, 0), (10_600_000, 10_000_000)]);
        assert_eq!(l.finish_time(0, 1500), 11_200_000);
        // started inside the outage: 1.2 ms after it ends
        assert_eq!(l.finish_time(5 * MS, 1500), 11_800_000);
        assert_eq!(l.capacity_bytes(20 * MS), (600_000 + 9_400_000) * 10 / 8 / 1000);
        // a schedule ending in an outage: a packet not done by then never is
        let l = link(vec![(0, 10_000_000), (MS, 0)]);
        assert_eq!(l.finish_time(0, 1000), 800_000);
        assert_eq!(l.finish_time(500_000, 1500), Time::MAX);
        assert_eq!(l.finish_time(2 * MS, 40), Time::MAX);
    }
}
