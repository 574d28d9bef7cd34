//! A trace-driven link: Mahimahi's `mm-link` (Netravali et al., "Mahimahi: Accurate
//! Record-and-Replay for HTTP", USENIX ATC 2015; the mm-link(1) man page; mahimahi's
//! src/packet/link_queue.cc and link_queue.hh).
//!
//! A trace file has one line per delivery opportunity: a time in milliseconds from the start of
//! the trace, non-decreasing; several lines may share a millisecond. The trace repeats with a
//! period equal to its last time (`use_a_delivery_opportunity`: on wrap-around the base time
//! advances by `schedule_.back()`), so that last line's opportunity and the first line of the
//! next period (at time 0 of it) can coincide.
//!
//! The semantics followed, as `LinkQueue::rationalize` has them:
//! * An opportunity carries `PACKET_SIZE` = 1504 bytes (`OPPORTUNITY_BYTES`: mahimahi's "default
//!   max TUN payload size", a 1500-byte MTU plus the 4-byte packet information header its TUN
//!   devices read, `IFF_TUN` without `IFF_NO_PI`), and a packet costs its IP size plus those 4
//!   bytes (`PACKET_OVERHEAD`). So a full-size packet fills one opportunity exactly, smaller ones
//!   share one (four 372-byte packets do, five do not), and the bytes of a packet that do not fit
//!   go into the next opportunity (`packet_in_transit_bytes_left_`): the packet is delivered at
//!   the opportunity that carries its last byte. Packets larger than 1500 bytes (which mm-link
//!   never sees) span opportunities by the same accounting.
//! * Packets leave the qdisc at the opportunity's time, as mahimahi dequeues its `packet_queue_`
//!   inside `rationalize`, so an AQM in front of the trace sees its real sojourn times.
//! * An opportunity with nothing queued is lost (`bytes_left_in_this_delivery` is dropped when
//!   the queue is empty), as is the unused part of one whose queue empties before its bytes are
//!   spent. Mahimahi burns every opportunity up to now before it enqueues an arriving packet, so
//!   a packet reaching an idle trace at an opportunity's instant waits for the next one.
//!
//! The hop's summary rate is the trace's mean: lines x 1500 bytes x 8 / period, what a saturating
//! flow of full-size packets gets (mahimahi's README: "each line represents a delivery
//! opportunity ... for an MTU-sized packet"). The link keeps one pending event only while it has
//! something to send (`Hops::wake_at`); an idle trace costs nothing.

use crate::units::{Time, MS};
use std::sync::Arc;

/// Bytes one delivery opportunity carries (mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u64 = 1504;
/// What a packet costs beyond its IP size: the TUN packet information header mahimahi reads.
pub const PACKET_OVERHEAD: u64 = 4;
/// The IP size of the packet an opportunity is meant for, for the summary rate.
pub const FULL_PACKET: u64 = 1500;

/// What a trace's lines must be; `Err` says why not (without the key).
pub fn check(ms: &[u64]) -> Result<(), String> {
    if ms.is_empty() {
        return Err("the trace has no lines; allowed: one time in ms per delivery opportunity".into());
    }
    if let Some(i) = ms.windows(2).position(|w| w[1] < w[0]) {
        return Err(format!(
            "line {}: {} ms is before the line above it ({} ms); allowed: non-decreasing times",
            i + 2,
            ms[i + 1],
            ms[i]
        ));
    }
    let last = ms[ms.len() - 1];
    if last == 0 {
        return Err(
            "the trace lasts 0 ms (its last time is its period); allowed: a last time above 0".into(),
        );
    }
    if last > u32::MAX as u64 {
        return Err(format!(
            "{last} ms is out of range; allowed: times up to {} ms (49 days)",
            u32::MAX
        ));
    }
    Ok(())
}

/// What a trace link did: opportunities taken with something queued, lost with nothing queued.
#[derive(Clone, Debug, Default)]
pub struct TraceStats {
    pub used: u64,
    pub lost: u64,
}

/// A trace replayed on a hop: where in it the link is, and the packet being carried.
#[derive(Clone)]
pub struct Trace {
    /// Each opportunity's time from the start of a period, ns, non-decreasing.
    at: Arc<[Time]>,
    /// The period: the last line's time.
    period: Time,
    /// The next opportunity: its index, and the start of its period.
    next: usize,
    base: Time,
    /// Bytes of the packet in transmission (the hop's `tx`) still to carry, its overhead
    /// included.
    left: u64,
    /// An opportunity event is pending.
    pub armed: bool,
    pub stats: TraceStats,
}

impl Trace {
    /// A trace from its lines (checked by `check`).
    pub fn new(ms: &[u64]) -> Trace {
        debug_assert!(check(ms).is_ok());
        let at: Arc<[Time]> = ms.iter().map(|&m| m * MS).collect();
        Trace {
            period: at[at.len() - 1],
            at,
            next: 0,
            base: 0,
            left: 0,
            armed: false,
            stats: TraceStats::default(),
        }
    }

    /// The time of the next opportunity.
    pub fn next_time(&self) -> Time {
        self.base + self.at[self.next]
    }

    /// Moves past the next opportunity, into the next period after the last line.
    fn advance(&mut self) {
        self.next += 1;
        if self.next == self.at.len() {
            self.next = 0;
            self.base += self.period;
        }
    }

    /// Loses every opportunity at or before `now` (the link had nothing to send), whole periods
    /// at once.
    pub fn skip_through(&mut self, now: Time) {
        let n = self.at.len() as u64;
        if now >= self.base + self.period {
            // the rest of this period, then whole periods
            self.stats.lost += n - self.next as u64;
            self.base += self.period;
            self.next = 0;
            let whole = (now - self.base) / self.period;
            self.stats.lost += whole * n;
            self.base += whole * self.period;
        }
        while self.next_time() <= now {
            self.stats.lost += 1;
            self.advance();
        }
    }

    /// Takes the opportunity due now; returns the bytes it carries.
    pub fn open(&mut self) -> u64 {
        self.stats.used += 1;
        self.advance();
        OPPORTUNITY_BYTES
    }

    /// Whether a packet is partly carried (its rest waits for the next opportunity).
    pub fn carrying(&self) -> bool {
        self.left > 0
    }

    /// A packet of `size` IP bytes starts being carried.
    pub fn begin(&mut self, size: u32) {
        self.left = size as u64 + PACKET_OVERHEAD;
    }

    /// Carries what `room` (the opportunity's bytes left) allows of the packet being carried;
    /// true when its last byte went.
    pub fn carry(&mut self, room: &mut u64) -> bool {
        let n = self.left.min(*room);
        self.left -= n;
        *room -= n;
        self.left == 0
    }

    /// The opportunities in [0, end).
    pub fn opportunities_before(&self, end: Time) -> u64 {
        let n = self.at.len() as u64;
        let whole = end / self.period;
        let rest = end % self.period;
        whole * n + self.at.partition_point(|&t| t < rest) as u64
    }

    /// The trace's mean rate in full-size packets, bit/s (rounded to the nearest).
    pub fn mean_rate(&self) -> u64 {
        let bits = self.at.len() as u128 * FULL_PACKET as u128 * 8 * crate::units::SEC as u128;
        ((bits + self.period as u128 / 2) / self.period as u128) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The delivery times (ms) of packets of `sizes`, all queued at time 0 and carried in order,
    /// over `lines`: the opportunity loop of `Hops::opportunity` without a qdisc.
    fn deliveries(lines: &[u64], sizes: &[u32]) -> Vec<u64> {
        let mut tr = Trace::new(lines);
        let mut queue: std::collections::VecDeque<u32> = sizes.iter().copied().collect();
        let mut out = Vec::new();
        tr.skip_through(0);
        while !queue.is_empty() || tr.carrying() {
            let t = tr.next_time();
            let mut room = tr.open();
            while room > 0 {
                if !tr.carrying() {
                    let Some(s) = queue.pop_front() else { break };
                    tr.begin(s);
                }
                if tr.carry(&mut room) {
                    out.push(t / MS);
                }
            }
        }
        out
    }

    #[test]
    fn full_packets_take_one_opportunity_each_and_the_trace_repeats() {
        // lines 1, 1, 3: period 3 ms; opportunities at 1, 1, 3, then 4, 4, 6, then 7, ...
        assert_eq!(deliveries(&[1, 1, 3], &[1500; 7]), vec![1, 1, 3, 4, 4, 6, 7]);
    }

    #[test]
    fn small_packets_share_an_opportunity_with_four_bytes_each() {
        // 372 + 4 = 376 bytes, 4 x 376 = 1504: four fit in the first opportunity, the fifth
        // goes in the second.
        assert_eq!(deliveries(&[2, 5], &[372; 5]), vec![2, 2, 2, 2, 5]);
        // 750 + 4 = 754: the second 750-byte packet's last 4 bytes spill into the next one.
        assert_eq!(deliveries(&[2, 5], &[750, 750]), vec![2, 5]);
        // a 3000-byte packet (3004 bytes) fills two; a 3010-byte one (3014) needs 6 bytes of a third
        assert_eq!(deliveries(&[1, 2, 3, 4], &[3000]), vec![2]);
        assert_eq!(deliveries(&[1, 2, 3, 4], &[3010]), vec![3]);
    }

    #[test]
    fn opportunities_with_nothing_queued_are_lost() {
        let mut tr = Trace::new(&[1, 1, 3]);
        // a packet arriving at 3 ms: the opportunities at 1, 1 and 3 ms have gone unused (the
        // one at its own instant too, as mahimahi burns it before the enqueue)
        tr.skip_through(3 * MS);
        assert_eq!(tr.stats.lost, 3);
        assert_eq!(tr.next_time(), 4 * MS);
        // idle until 20.5 ms: 4, 4, 6 | 7, 7, 9 | 10, 10, 12 | 13, 13, 15 | 16, 16, 18 | 19, 19
        tr.skip_through(20 * MS + MS / 2);
        assert_eq!(tr.stats.lost, 3 + 17);
        assert_eq!(tr.next_time(), 21 * MS);
    }

    #[test]
    fn counts_and_mean_rate_follow_the_lines() {
        let tr = Trace::new(&[1, 1, 3]);
        // [0, 7 ms): 1, 1, 3 | 4, 4, 6 => 6; [0, 7 ms + 1 ns) adds the two at 7
        assert_eq!(tr.opportunities_before(7 * MS), 6);
        assert_eq!(tr.opportunities_before(7 * MS + 1), 8);
        // 3 opportunities of 1500 bytes every 3 ms = 12 Mb/s
        assert_eq!(tr.mean_rate(), 12_000_000);
    }

    #[test]
    fn bad_traces_are_refused_with_the_line() {
        assert!(check(&[]).unwrap_err().contains("no lines"));
        assert!(check(&[0, 0]).unwrap_err().contains("lasts 0 ms"));
        let e = check(&[1, 3, 2]).unwrap_err();
        assert!(e.starts_with("line 3: 2 ms"), "{e}");
        assert!(check(&[0, 0, 5]).is_ok());
    }
}
