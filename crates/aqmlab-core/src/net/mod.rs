//! The network elements of a path: hops (a queue discipline in front of a serialiser whose rate
//! may follow a schedule, then a propagation delay) and propagation pipes (constant-delay FIFOs).
//!
//! A pipe keeps its packets in its own ring and the event loop holds one pending event per
//! non-empty pipe (the htsim approach, DESIGN.md principle 5). Serialisation time rounds up to the
//! nanosecond; when the rate changes during a packet, the finish time integrates the schedule.
//! A WiFi hop (`wifi.rs`) replaces the serialiser with a driver that transmits on a medium
//! shared with other hops.

use crate::packet::{Dir, PktId};
use crate::queue::{AnyQdisc, DropReason};
use crate::rng::Rng;
use crate::units::{tx_time, Time, SEC};
use std::collections::VecDeque;

pub mod wifi;

/// Counters of one hop.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub arrivals: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops: [u64; DropReason::ALL.len()],
    pub marks: u64,
}

impl LinkStats {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

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
    /// Propagation delay between this hop and the next (0 for the last hop, whose delay is in
    /// the flows' access paths).
    pub delay: Time,
    pub qdisc: AnyQdisc,
    pub qdisc_name: String,
    /// Rate steps (time, bit/s), sorted, the first at time 0.
    pub schedule: Vec<(Time, u64)>,
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
}

impl Link {
    /// The scheduled rate at time `t`.
    pub fn rate_at(&self, t: Time) -> u64 {
        let i = self.schedule.partition_point(|&(s, _)| s <= t);
        self.schedule[i.saturating_sub(1)].1
    }

    /// When a packet of `bytes` whose transmission starts at `start` has been fully serialised.
    pub fn finish_time(&self, start: Time, bytes: u64) -> Time {
        if self.schedule.len() == 1 {
            return start + tx_time(bytes, self.schedule[0].1);
        }
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
                _ => return t + left.div_ceil(rate) as Time,
            }
        }
    }

    /// Bytes the link can carry over [0, end): the integral of its rate schedule.
    pub fn capacity_bytes(&self, end: Time) -> u64 {
        let mut bits: u128 = 0;
        for (k, &(s, r)) in self.schedule.iter().enumerate() {
            if s >= end {
                break;
            }
            let e = self.schedule.get(k + 1).map_or(end, |n| n.0.min(end));
            bits += (e - s) as u128 * r as u128;
        }
        (bits / (8 * SEC as u128)) as u64
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
            delay: 0,
            qdisc: AnyQdisc::Fifo(Fifo::new(Limit::Packets(10), false)),
            qdisc_name: "pfifo".into(),
            schedule,
            tx: None,
            device: VecDeque::new(),
            device_limit: 0,
            loss: 0.0,
            loss_rng: Rng::from_seed(0),
            stats: LinkStats::default(),
            timer_armed: None,
            wifi: None,
        }
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
}
