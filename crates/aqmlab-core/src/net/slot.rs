//! netem's slots (Linux net/sched/sch_netem.c since 4.19: `get_slot`, `get_slot_next` and the
//! slot test of `netem_dequeue`; tc-netem(8), `slot MIN_DELAY [MAX_DELAY] [packets N] [bytes
//! N]`): a hop that delivers in bursts, as a medium that grants transmission opportunities does
//! (WiFi's TXOPs, a cable modem's grants, a cellular scheduler's).
//!
//! The slot gates the hop's dequeue from its qdisc; packets then go to the serialiser at the
//! hop's rate as usual. As netem:
//! * the first slot is open from time 0 with a full budget (`get_slot` sets `slot_next` to now);
//! * a slot lets packets leave while its budget lasts: each packet taken counts against
//!   `packets` and `bytes` (0 = no bound, netem's INT_MAX), after it is taken, so the last one
//!   may overrun the bytes; when either reaches 0 or below, the next slot starts a uniform time
//!   in [min, max) later (`get_slot_next`: min + (prandom_u32() x (max - min) >> 32));
//! * a head packet that became ready after the current slot started does not use it: a new slot
//!   is drawn from that instant (`slot_next < time_to_send`), so a packet reaching an idle hop,
//!   or queued behind others after a slot started, waits for the next slot. A packet's time to
//!   send is when it entered the hop's qdisc (netem without delay).
//!
//! The gate sits below the hop's discipline, which cannot be asked for its head without taking
//! it: a packet found stale once taken waits at the gate (`held`) for the new slot, out of the
//! qdisc, and counts as in transit.

use crate::rng::Rng;
use crate::units::Time;

/// A slot's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotConfig {
    pub min: Time,
    pub max: Time,
    /// Packets per slot; 0: no bound.
    pub packets: u32,
    /// Bytes per slot; 0: no bound.
    pub bytes: u64,
}

/// The slot state of a hop.
pub struct Slot {
    cfg: SlotConfig,
    /// When the current slot starts (or started).
    next: Time,
    packets_left: i64,
    bytes_left: i64,
    rng: Rng,
    /// A packet taken from the qdisc that waits for the next slot (it became ready after the
    /// current one started).
    pub held: Option<crate::packet::PktId>,
    /// The wake-up pending for the slot's start.
    pub armed: Option<Time>,
    /// Slots drawn.
    pub slots: u64,
}

impl Slot {
    pub fn new(cfg: SlotConfig, rng: Rng) -> Slot {
        let mut s = Slot {
            cfg,
            next: 0,
            packets_left: 0,
            bytes_left: 0,
            rng,
            held: None,
            armed: None,
            slots: 0,
        };
        s.refill();
        s
    }

    fn refill(&mut self) {
        let unbounded = |n: u64| if n == 0 { i64::MAX } else { n as i64 };
        self.packets_left = unbounded(self.cfg.packets as u64);
        self.bytes_left = unbounded(self.cfg.bytes);
    }

    /// The next slot, from `now`.
    fn draw(&mut self, now: Time) {
        let span = self.cfg.max - self.cfg.min;
        let wait = self.cfg.min + if span > 0 { self.rng.below(span) } else { 0 };
        self.next = now + wait;
        self.slots += 1;
        self.refill();
    }

    /// When the current slot starts, or started.
    pub fn start(&self) -> Time {
        self.next
    }

    /// Whether the head packet, ready since `ready`, may leave now; `Err` holds when the slot it
    /// waits for starts (a new one, drawn now, if it became ready after the current one began).
    pub fn may_send(&mut self, ready: Time, now: Time) -> Result<(), Time> {
        if self.next < ready {
            self.draw(now);
        }
        if self.next <= now {
            Ok(())
        } else {
            Err(self.next)
        }
    }

    /// A packet of `bytes` left in the current slot.
    pub fn sent(&mut self, bytes: u32, now: Time) {
        self.packets_left -= 1;
        self.bytes_left -= bytes as i64;
        if self.packets_left <= 0 || self.bytes_left <= 0 {
            self.draw(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    fn slot(min: Time, max: Time, packets: u32, bytes: u64) -> Slot {
        Slot::new(
            SlotConfig {
                min,
                max,
                packets,
                bytes,
            },
            Rng::from_seed(7),
        )
    }

    #[test]
    fn a_fixed_slot_passes_its_packet_budget_then_waits_its_delay() {
        // slot 10ms packets 3: open at 0 for packets ready then
        let mut s = slot(10 * MS, 10 * MS, 3, 0);
        for _ in 0..3 {
            assert_eq!(s.may_send(0, 0), Ok(()));
            s.sent(1500, 0);
        }
        // budget spent at 0: the next slot starts at 10 ms, for packets ready by then
        assert_eq!(s.may_send(0, MS), Err(10 * MS));
        assert_eq!(s.may_send(MS, 10 * MS), Ok(()));
    }

    #[test]
    fn the_byte_budget_is_charged_after_the_packet_and_may_be_overrun() {
        // bytes 4000: 1500 + 1500 leaves 1000 > 0, the third (1500) goes and takes it to -500
        let mut s = slot(5 * MS, 5 * MS, 0, 4000);
        let mut sent = 0;
        while s.may_send(0, 0).is_ok() {
            s.sent(1500, 0);
            sent += 1;
        }
        assert_eq!(sent, 3);
        assert_eq!(s.may_send(0, 0), Err(5 * MS));
    }

    #[test]
    fn a_packet_ready_after_the_slot_started_waits_for_a_new_one() {
        let mut s = slot(4 * MS, 4 * MS, 0, 0);
        // at 0 the first slot is open: a packet ready at 0 leaves at once
        assert_eq!(s.may_send(0, 0), Ok(()));
        s.sent(100, 0);
        // the next is ready at 7 ms, after the slot started: a slot is drawn from 7 ms, and
        // asking again before it starts draws no other
        assert_eq!(s.may_send(7 * MS, 7 * MS), Err(11 * MS));
        assert_eq!(s.may_send(7 * MS, 9 * MS), Err(11 * MS));
        assert_eq!(s.may_send(7 * MS, 11 * MS), Ok(()));
        s.sent(100, 11 * MS);
        // one ready at 10 ms, before this slot began, uses it; one ready at 11.5 ms does not
        assert_eq!(s.may_send(10 * MS, 12 * MS), Ok(()));
        s.sent(100, 12 * MS);
        assert_eq!(s.may_send(11 * MS + MS / 2, 12 * MS), Err(16 * MS));
    }

    #[test]
    fn slot_starts_are_uniform_in_min_max() {
        let (min, max) = (MS, 9 * MS);
        let mut s = slot(min, max, 1, 0);
        let n = 20_000;
        let mut sum = 0u128;
        let mut now = 0;
        for _ in 0..n {
            s.sent(1500, now);
            let Err(t) = s.may_send(0, now) else {
                panic!("closed after one packet")
            };
            assert!((now + min..now + max).contains(&t));
            sum += (t - now) as u128;
            now = t;
        }
        // mean (min + max) / 2 = 5 ms; the standard error is 2.3 ms / sqrt(n) = 16 us
        let mean = (sum / n) as i64;
        assert!((mean - 5 * MS as i64).abs() < 100_000, "{mean}");
    }
}
