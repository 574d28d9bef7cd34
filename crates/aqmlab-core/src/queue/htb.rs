//! HTB as a hop's shaper (`shaper = "htb"`): one class under the root, Linux 3.2's
//! net/sched/sch_htb.c for a `tc class add .. htb rate R` line, with the hop's qdisc as the
//! class's leaf. The hop then serialises at its interface's own rate (the NIC's); HTB decides
//! when the leaf may be dequeued.
//!
//! The token arithmetic is sch_htb.c's: tokens are time, in the packet scheduler's ticks of
//! 64 ns (`psched_get_time`, `PSCHED_SHIFT` 6), refilled by the time since the last charge
//! (`psched_tdiff_bounded`, at most `mbuffer`, 60 s) and capped at the buffer (`htb_accnt_tokens`);
//! a packet costs its length's transmission time at the rate (`qdisc_l2t`); after a charge the
//! class may send while its tokens are not negative (`htb_class_mode` without hysteresis, the
//! module's default), else it waits until they are back at zero (`htb_add_to_wait_tree`, the
//! qdisc watchdog). The ceil bucket (`ctokens`, `cbuffer`) runs beside it at the ceil rate; with
//! one class the ceil is the rate (tc's default when no `ceil` is given, tc/q_htb.c). A class
//! under the root has no parent to borrow from, so it sends only with both buckets
//! non-negative; the ceil bucket is checked first, as `htb_class_mode` does.
//!
//! A hop whose `rate` is a schedule changes the class at each step as `tc class change ... htb
//! rate R` does (htb_change_class): both buckets take the new rate and the buffers its burst,
//! tc's default at that rate unless given; the tokens, time already earned, stay as they are.
//!
//! A packet's length is what the qdisc sees on an Ethernet device: the IP packet and its
//! 14-byte Ethernet header. Its cost comes from tc's rate table (tc_calc_rtable with tc's
//! default mtu of 1600: cells of 8 bytes, `cell_align` -1), i.e. the time of the length
//! rounded up to 8 bytes; tc computes the table in floating point, here it is exact.

use super::{Qdisc, QueueCtx};
use crate::packet::PktId;
use crate::units::Time;

/// Nanoseconds per packet-scheduler tick (`PSCHED_TICKS2NS(1)`, 1 << PSCHED_SHIFT).
const TICK_NS: Time = 64;
/// The longest refill a charge counts, 60 s in ticks (`cl->mbuffer`, htb_change_class).
const MBUFFER: i64 = 60 * 1_000_000_000 / TICK_NS as i64;
/// The Ethernet header the qdisc counts in a packet's length (ETH_HLEN).
const ETH_HLEN: u64 = 14;
/// tc's rate-table cell: 1 << cell_log, with cell_log 3 for its default mtu of 1600.
const CELL: u64 = 8;
/// tc's default `mtu` (tc/q_htb.c), added to the default burst.
const TC_MTU: u64 = 1600;
/// What tc takes for HZ in the default burst (tc/q_htb.c `rate / get_hz() + mtu`): get_hz
/// reads /proc/net/psched, whose fourth field is NSEC_PER_SEC over the hrtimer resolution
/// (net/sched/sch_api.c psched_show). On a kernel with high-resolution timers (Debian's and
/// Ubuntu's 3.2) that resolution is 1 ns, so HZ reads as 10^9 and the burst is the mtu.
const PSCHED_HZ: u64 = 1_000_000_000;

/// tc's burst when a class line gives none: rate (bytes/s) / HZ + mtu (tc/q_htb.c); also the
/// cburst, from the ceil.
pub fn tc_default_burst(rate_bps: u64) -> u64 {
    rate_bps / 8 / PSCHED_HZ + TC_MTU
}

/// Ticks to send `bytes` at `rate_bps` (tc_calc_xmittime: 10^9 / 64 ticks a second).
fn ticks(bytes: u64, rate_bps: u64) -> i64 {
    (bytes as u128 * 8 * 1_000_000_000 / (TICK_NS as u128 * rate_bps as u128)) as i64
}

/// One token bucket: tokens and cap in ticks, refilled at the bucket's rate.
struct Bucket {
    rate_bps: u64,
    buffer: i64,
    tokens: i64,
}

impl Bucket {
    /// A full bucket of `burst` bytes at `rate_bps` (a new class starts with its buffer).
    fn new(rate_bps: u64, burst: u64) -> Bucket {
        let buffer = ticks(burst, rate_bps);
        Bucket {
            rate_bps,
            buffer,
            tokens: buffer,
        }
    }

    /// The class's new rate and burst (htb_change_class: the rate and the buffer replaced, the
    /// tokens kept).
    fn change(&mut self, rate_bps: u64, burst: u64) {
        self.rate_bps = rate_bps;
        self.buffer = ticks(burst, rate_bps);
    }

    /// A packet of `len` bytes (as the qdisc counts them) charged `diff` ticks after the last
    /// charge (htb_accnt_tokens).
    fn charge(&mut self, len: u64, diff: i64) {
        let cost = ticks(len.div_ceil(CELL) * CELL, self.rate_bps);
        let toks = (self.tokens + diff).min(self.buffer) - cost;
        self.tokens = if toks <= -MBUFFER { 1 - MBUFFER } else { toks };
    }
}

/// The class as one `tc class ... htb` line sets it: its rate (= ceil) and bursts in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Class {
    pub rate_bps: u64,
    pub burst: u64,
    pub cburst: u64,
}

/// The class and its leaf qdisc (the registry's `AnyQdisc` on a hop).
pub struct Htb<L> {
    leaf: L,
    rate: Bucket,
    ceil: Bucket,
    /// Time of the last charge, ticks (`cl->t_c`).
    t_c: i64,
    /// When the class may send again, ticks (`cl->pq_key`); `None` while it may send.
    wake: Option<i64>,
    /// The class's later changes (time, class), in time order, and the next one's index.
    changes: Vec<(Time, Class)>,
    next_change: usize,
}

impl<L: Qdisc> Htb<L> {
    /// A class at `rate_bps` with `burst` and `cburst` bytes (ceil = rate) over `leaf`,
    /// created at time 0.
    pub fn new(leaf: L, rate_bps: u64, burst: u64, cburst: u64) -> Htb<L> {
        Htb {
            leaf,
            rate: Bucket::new(rate_bps, burst),
            ceil: Bucket::new(rate_bps, cburst),
            t_c: 0,
            wake: None,
            changes: Vec::new(),
            next_change: 0,
        }
    }

    /// The class created at time 0 as the first of `steps` (time, class), changed at each later
    /// one (`tc class change`).
    pub fn scheduled(leaf: L, steps: &[(Time, Class)]) -> Htb<L> {
        let first = steps[0].1;
        let mut h = Htb::new(leaf, first.rate_bps, first.burst, first.cburst);
        h.changes = steps[1..].to_vec();
        h
    }

    /// Applies the class changes due by `now`.
    fn change_class(&mut self, now: Time) {
        while let Some(&(at, c)) = self.changes.get(self.next_change) {
            if at > now {
                break;
            }
            self.rate.change(c.rate_bps, c.burst);
            self.ceil.change(c.rate_bps, c.cburst);
            self.next_change += 1;
        }
    }

    /// Ticks until the class may send with `diff` ticks of refill, or `None` if it may now
    /// (htb_class_mode: the ceil bucket first, then the rate bucket).
    fn wait(&self, diff: i64) -> Option<i64> {
        let c = self.ceil.tokens + diff;
        if c < 0 {
            return Some(-c);
        }
        let t = self.rate.tokens + diff;
        (t < 0).then_some(-t)
    }

    /// Sets the class's mode at `now` (ticks) from `diff` ticks of refill (htb_change_class_mode,
    /// htb_add_to_wait_tree; a wait is at least one tick, so the wake-up is never now).
    fn set_mode(&mut self, now: i64, diff: i64) {
        self.wake = self.wait(diff).map(|w| now + w);
    }

    /// The wait-queue event of the class, if due at `now` (htb_do_events).
    fn events(&mut self, now: i64) {
        if self.wake.is_some_and(|k| k <= now) {
            self.set_mode(now, (now - self.t_c).min(MBUFFER));
        }
    }

    /// Charges a packet of `size` IP bytes sent at `now` (htb_charge_class).
    fn charge(&mut self, size: u32, now: i64) {
        let diff = (now - self.t_c).min(MBUFFER);
        let len = size as u64 + ETH_HLEN;
        self.rate.charge(len, diff);
        self.ceil.charge(len, diff);
        self.t_c = now;
        self.set_mode(now, 0);
    }
}

fn tick_of(now: Time) -> i64 {
    (now / TICK_NS) as i64
}

impl<L: Qdisc> Qdisc for Htb<L> {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        self.leaf.enqueue(id, ctx, now);
    }

    /// The leaf's next packet if the class may send (htb_dequeue); the leaf is not dequeued
    /// otherwise, so a CoDel-like leaf sees the time its packet really leaves.
    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        if self.leaf.backlog_packets() == 0 {
            return None;
        }
        self.change_class(now);
        let t = tick_of(now);
        self.events(t);
        if self.wake.is_some() {
            return None;
        }
        let id = self.leaf.dequeue(ctx, now)?;
        self.charge(ctx.size(id), t);
        Some(id)
    }

    fn backlog_bytes(&self) -> u64 {
        self.leaf.backlog_bytes()
    }

    fn backlog_packets(&self) -> u64 {
        self.leaf.backlog_packets()
    }

    /// The leaf's timer or the class's wake-up (the qdisc watchdog), whichever is first.
    fn next_timer(&self) -> Option<Time> {
        let wake = self.wake.map(|k| k as Time * TICK_NS);
        match (self.leaf.next_timer(), wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
        if self.leaf.next_timer().is_some_and(|t| t <= now) {
            self.leaf.on_timer(ctx, now);
        }
        self.events(tick_of(now));
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        self.leaf.diagnostics()
    }

    fn flow_queues(&self) -> bool {
        self.leaf.flow_queues()
    }

    fn subqueues(&self) -> &'static [u8] {
        self.leaf.subqueues()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::fifo::Fifo;
    use crate::queue::testutil::Harness;
    use crate::units::{tx_time, Limit, MS, SEC};

    const IP: u32 = 1500;

    fn fifo() -> Fifo {
        Fifo::new(Limit::Packets(1000), false)
    }

    /// A hop whose serialiser runs at `line_bps` under `q`: the times (ns) at which the
    /// packets queued at time 0 start to leave, up to `end`. The serialiser takes the next
    /// packet when idle; when HTB holds back, it waits for HTB's timer.
    fn departures<L: Qdisc>(q: &mut Htb<L>, h: &mut Harness, line_bps: u64, end: Time) -> Vec<Time> {
        let mut t = 0;
        let mut out = Vec::new();
        while t < end {
            match h.dequeue(q, t) {
                Some(id) => {
                    out.push(t);
                    t += tx_time(h.pool.get(id).size as u64, line_bps);
                }
                None => match q.next_timer() {
                    Some(w) => {
                        h.timer(q, w.max(t));
                        t = w.max(t);
                    }
                    None => break,
                },
            }
        }
        out
    }

    #[test]
    fn tc_default_burst_is_the_mtu_with_high_resolution_timers() {
        // tc/q_htb.c: buffer = rate / get_hz() + mtu, rate in bytes/s, mtu 1600; get_hz() is
        // 10^9 on a kernel with 1 ns hrtimers: 62500 / 10^9 and 1250000 / 10^9 are 0.
        assert_eq!(tc_default_burst(500_000), 1600);
        assert_eq!(tc_default_burst(10_000_000), 1600);
        // As time: 1600 B at 62500 B/s is 25.6 ms = 400000 ticks; at 10 Mb/s 1.28 ms.
        assert_eq!(Bucket::new(500_000, 1600).buffer, 400_000);
        assert_eq!(Bucket::new(10_000_000, 1600).buffer, 20_000);
    }

    #[test]
    fn a_burst_leaves_back_to_back_then_the_class_paces_at_its_rate() {
        // 500 kb/s = 62500 B/s; a 1500-byte IP packet is a 1514-byte frame, 1520 bytes in tc's
        // 8-byte cells: cost c = 1520 / 62500 s = 24.32 ms = 380000 ticks. Burst 15200 B = 10 c.
        // On a 100 Mb/s line a packet takes 120 us = 1875 ticks. From a full bucket, packet k
        // (1-based) leaves at (k - 1) * 1875 ticks with 10 c - k c + (k - 1) * 1875 tokens after
        // it: packet 10 leaves 16875 >= 0, packet 11 leaves 18750 - c < 0, so 11 go back to back
        // and the class waits c - 18750 ticks: until c. From then each packet finds 0 tokens,
        // costs c and leaves c later: packet k >= 12 at (k - 11) c.
        let mut h = Harness::new();
        let mut q = Htb::new(fifo(), 500_000, 15_200, 15_200);
        for _ in 0..20 {
            h.enqueue(&mut q, 0, IP, Ecn::NotEct, 0);
        }
        let d = departures(&mut q, &mut h, 100_000_000, 10 * SEC);
        let c = 24_320_000;
        let mut want: Vec<Time> = (0..11).map(|k| k * 120_000).collect();
        want.extend((1..10).map(|k| k * c));
        assert_eq!(d, want);
    }

    #[test]
    fn a_backlogged_class_carries_its_rate() {
        // The default burst, 1600 B = 400000 ticks, against c = 380000 ticks a packet, on a
        // 100 Mb/s line (1875 ticks a packet): packet 1 at 0 leaves 20000 tokens, so packet 2
        // goes back to back at 1875 and leaves 20000 + 1875 - c = -358125: the class waits
        // until 360000 ticks (23.04 ms). From then each packet finds 0 tokens and costs c:
        // packet k >= 3 leaves at 23.04 ms + (k - 3) 24.32 ms, 1520 charged bytes per c, i.e.
        // 500 kb/s. In 15 s: 2 + 1 + floor((15 - 0.02304) / 0.02432) = 618 packets.
        let mut h = Harness::new();
        let mut q = Htb::new(fifo(), 500_000, 1600, 1600);
        for _ in 0..1000 {
            h.enqueue(&mut q, 0, IP, Ecn::NotEct, 0);
        }
        let d = departures(&mut q, &mut h, 100_000_000, 15 * SEC);
        let c = 24_320_000;
        assert_eq!(d.len(), 618);
        assert_eq!(&d[..2], &[0, 120_000]);
        assert!(d[2..]
            .iter()
            .enumerate()
            .all(|(n, &t)| t == 23_040_000 + n as Time * c));
    }

    #[test]
    fn the_ceil_bucket_holds_the_class_to_its_cburst() {
        // burst 15200 B but cburst 1600 B: the ceil bucket (at the same rate) holds the class
        // as the default burst does (previous test), not the ten packets the rate bucket
        // would let through.
        let mut h = Harness::new();
        let mut q = Htb::new(fifo(), 500_000, 15_200, 1600);
        for _ in 0..3 {
            h.enqueue(&mut q, 0, IP, Ecn::NotEct, 0);
        }
        let d = departures(&mut q, &mut h, 100_000_000, SEC);
        assert_eq!(d, vec![0, 120_000, 23_040_000]);
    }

    #[test]
    fn the_leaf_is_dequeued_only_when_the_class_may_send() {
        // A CoDel leaf: two packets leave at 0 (20000 tokens after the first, -360000 after
        // the second: a wait until 23.04 ms). Meanwhile the third stays in the leaf (no
        // dequeue, so no drop decision) and leaves when the class may send again.
        let mut h = Harness::new();
        let codel = (crate::queue::codel::INFO[0].build)(
            &serde_json::json!({}),
            &link(),
            crate::rng::Rng::from_seed(1),
        )
        .expect("codel builds")
        .0;
        let mut q = Htb::new(codel, 500_000, 1600, 1600);
        let ids: Vec<PktId> = (0..3).map(|_| h.enqueue(&mut q, 0, IP, Ecn::NotEct, 0)).collect();
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[0]));
        assert_eq!(h.dequeue(&mut q, 0), Some(ids[1]));
        assert_eq!(h.dequeue(&mut q, MS), None);
        assert_eq!(q.backlog_packets(), 1);
        assert_eq!(q.next_timer(), Some(23_040_000));
        assert_eq!(h.dequeue(&mut q, 23_040_000), Some(ids[2]));
        assert!(h.drops.is_empty());
    }

    fn link() -> crate::queue::LinkInfo {
        crate::queue::LinkInfo {
            rate_bps: 500_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        }
    }

    #[test]
    fn a_class_change_takes_the_new_rate_and_keeps_the_tokens() {
        // 500 kb/s with the default burst, changed to 250 kb/s at 100 ms (tc class change: the
        // cost of a 1520-byte cell-rounded frame doubles to 2c = 48.64 ms, the buffer of 1600 B
        // becomes 800000 ticks). Before the change the class paces as in the test above:
        // packets at 0, 120 us, then 23.04 ms + n c: 23.04, 47.36, 71.68, 96.0 ms. The packet
        // at 96.0 ms leaves 0 tokens and costs c (charged before the change); the class waits
        // until 120.32 ms. At that point the change has happened: the tokens are 0 and from then
        // each packet costs 2c, so the next ones leave at 120.32 + k 2c ms.
        let mut h = Harness::new();
        let steps = [
            (
                0,
                Class {
                    rate_bps: 500_000,
                    burst: 1600,
                    cburst: 1600,
                },
            ),
            (
                100 * MS,
                Class {
                    rate_bps: 250_000,
                    burst: 1600,
                    cburst: 1600,
                },
            ),
        ];
        let mut q = Htb::scheduled(fifo(), &steps);
        for _ in 0..20 {
            h.enqueue(&mut q, 0, IP, Ecn::NotEct, 0);
        }
        let d = departures(&mut q, &mut h, 100_000_000, 300 * MS);
        let c = 24_320_000;
        let mut want: Vec<Time> = vec![0, 120_000];
        want.extend((0..4).map(|n| 23_040_000 + n * c));
        want.extend((0..4).map(|k| 120_320_000 + k * 2 * c));
        assert_eq!(d, want);
        // the buffer at the new rate: 1600 B at 31250 B/s, 51.2 ms = 800000 ticks
        assert_eq!(q.rate.buffer, 800_000);
    }

    #[test]
    fn an_idle_class_refills_to_its_buffer_only() {
        // After 10 s idle the tokens are capped at the buffer (10 c), so the next burst is
        // again 11 packets back to back.
        let mut h = Harness::new();
        let mut q = Htb::new(fifo(), 500_000, 15_200, 15_200);
        h.enqueue(&mut q, 0, IP, Ecn::NotEct, 0);
        assert!(h.dequeue(&mut q, 0).is_some());
        for _ in 0..12 {
            h.enqueue(&mut q, 0, IP, Ecn::NotEct, 10 * SEC);
        }
        let mut t = 10 * SEC;
        let mut sent = 0;
        while h.dequeue(&mut q, t).is_some() {
            sent += 1;
            t += 120_000;
        }
        assert_eq!(sent, 11);
    }
}
