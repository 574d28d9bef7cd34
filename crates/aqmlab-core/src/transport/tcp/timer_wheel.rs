//! When a kernel timer armed in jiffies runs: Linux arms TCP's retransmission, probe,
//! reordering and delayed-ACK timers as a whole number of ticks after the jiffy running at the
//! arming (`usecs_to_jiffies` of the delay, rounded up), and the timer wheel runs each from the
//! bucket after its expiry, so that none fires early (kernel/time/timer.c `calc_wheel_index`,
//! `calc_index`). A timer less than 63 ticks away goes to the first level, whose buckets are a
//! tick wide; one less than 504 ticks away to the second, 8 ticks wide; and so on, each level's
//! buckets 8 times wider and its reach 8 times longer. The expiry is rounded up to the next
//! bucket of its level.

use crate::units::{Time, SEC};

/// The time a timer armed at `now` for `delay` (plus `floor`, added before the rounding where
/// the kernel adds it) runs on a kernel of `hz` ticks a second, ticks counted from time 0;
/// `hz` 0: at `now + delay`, the delay's own time.
pub fn expiry(hz: u32, now: Time, delay: Time, floor: Time) -> Time {
    if hz == 0 {
        return now + delay;
    }
    let tick = SEC / hz as Time;
    let ticks = (delay + floor).div_ceil(tick);
    // LVL_START(n + 1) = 63 << 3n: the first level (shift 0) below 63 ticks.
    let mut shift = 0;
    while ticks >= 63 << shift {
        shift += 3;
    }
    let expires = now / tick + ticks;
    (((expires >> shift) + 1) << shift) * tick
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    #[test]
    fn a_timer_runs_from_the_bucket_after_its_expiry_on_its_level() {
        // HZ 0: the delay's own time.
        assert_eq!(expiry(0, 201 * MS, 40 * MS, 0), 241 * MS);
        // HZ 250 (4 ms ticks), armed at 201 ms (jiffy 50): 40 ms is 10 ticks, expiry jiffy 60,
        // first level, run at jiffy 61: 244 ms.
        assert_eq!(expiry(250, 201 * MS, 40 * MS, 0), 244 * MS);
        // 62 ticks (248 ms) stays on the first level: jiffy 113, 452 ms.
        assert_eq!(expiry(250, 201 * MS, 248 * MS, 0), 452 * MS);
        // 63 ticks (a 252 ms RTO) goes to the second level: expiry jiffy 113 rounded up to the
        // next multiple of 8 past it, jiffy 120: 480 ms, 27 ms after the delay.
        assert_eq!(expiry(250, 201 * MS, 252 * MS, 0), 480 * MS);
        // 1 s (250 ticks, the SYN's first timeout) on the second level: 300 -> jiffy 304.
        assert_eq!(expiry(250, 201 * MS, SEC, 0), 1216 * MS);
        // 3 s (750 ticks) on the third, 64-tick buckets: expiry jiffy 800 -> 832: 3.328 s.
        assert_eq!(expiry(250, 201 * MS, 3 * SEC, 0), 3328 * MS);
        // The floor counts before the rounding: 25 + 2 ms is 7 ticks (27 / 4 rounded up).
        assert_eq!(expiry(250, 200 * MS, 25 * MS, 2 * MS), 232 * MS);
    }
}
