//! COBALT, CAKE's per-flow AQM (Linux sch_cake.c, the `cobalt_*` functions): CoDel and BLUE run
//! side by side on each flow queue.
//!
//! * CoDel part: one `drop_next` serves both as the first-signal deadline (an interval after the
//!   sojourn first exceeds target) and as the control law `drop_next + interval / sqrt(count)`,
//!   with 1/sqrt(count) in Q0.32 (a cache of four Newton steps for count < 16, one step above).
//!   The sojourn must also exceed 4 MTU times at the shaped rate. A signal CE-marks an ECT packet
//!   and drops any other; when the sojourn is back under target, count decays along the same law.
//! * BLUE part: `p_drop` (Q0.32) rises by `p_inc` (1/256) at each overflow drop and falls by
//!   `p_dec` (1/4096) when the flow is served and found empty, at most once per `target` each; a
//!   packet is dropped with probability `p_drop` at dequeue (never marked: BLUE is for flows that
//!   do not respond).

use crate::rng::Rng;
use crate::units::Time;

/// BLUE's step up on an overflow drop: 1/256 in Q0.32.
pub const P_INC: u32 = 1 << 24;
/// BLUE's step down on an empty queue: 1/4096 in Q0.32.
pub const P_DEC: u32 = 1 << 20;

/// The entries of 1/sqrt(count) (Q0.32) cached for small counts: 0 and 1 are both ~1.0.
const CACHE: usize = 16;

/// One Newton step of 1/sqrt(count) in Q0.32: x' = x/2 (3 - count x^2).
const fn newton_step(count: u32, invsqrt: u32) -> u32 {
    let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
    let val = (3u64 << 32).wrapping_sub(count as u64 * invsqrt2 as u64) >> 2;
    ((val * invsqrt as u64) >> (32 - 2 + 1)) as u32
}

/// The cache: four Newton steps per count, each from the previous count's value.
const fn inv_sqrt_cache() -> [u32; CACHE] {
    let mut c = [0u32; CACHE];
    c[0] = u32::MAX;
    let mut v = u32::MAX;
    let mut count = 1;
    while count < CACHE {
        let mut k = 0;
        while k < 4 {
            v = newton_step(count as u32, v);
            k += 1;
        }
        c[count] = v;
        count += 1;
    }
    c
}

static INV_SQRT: [u32; CACHE] = inv_sqrt_cache();

/// COBALT's parameters for one tin (Linux `cake_set_rate`).
#[derive(Clone, Copy, Debug)]
pub struct CobaltParams {
    pub interval: Time,
    pub target: Time,
    /// Serialisation time of one MTU at the tin's rate (0 unshaped).
    pub mtu_time: Time,
    pub p_inc: u32,
    pub p_dec: u32,
}

/// What COBALT decided for a dequeued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Deliver,
    /// CoDel's signal on an ECN-capable packet: CE-mark it and deliver it.
    Mark,
    /// CoDel's signal on a packet that is not ECN-capable, or BLUE's drop (never a mark).
    Drop,
}

/// COBALT's state of one flow queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct CobaltVars {
    pub count: u32,
    rec_inv_sqrt: u32,
    drop_next: Time,
    blue_timer: Time,
    pub p_drop: u32,
    dropping: bool,
}

/// `a - b` as ktime_sub would give it: signed.
#[inline]
fn diff(a: Time, b: Time) -> i64 {
    a.wrapping_sub(b) as i64
}

impl CobaltVars {
    fn invsqrt(&mut self) {
        self.rec_inv_sqrt = match INV_SQRT.get(self.count as usize) {
            Some(&v) => v,
            None => newton_step(self.count, self.rec_inv_sqrt),
        };
    }

    /// The control law: `t + interval / sqrt(count)`.
    fn control(&self, t: Time, interval: Time) -> Time {
        t + ((interval as u128 * self.rec_inv_sqrt as u128) >> 32) as Time
    }

    /// The queue overflowed and a packet of this flow was dropped: BLUE steps up (at most once
    /// per target) and CoDel enters its dropping state. Returns whether BLUE went from quiet to
    /// active.
    pub fn queue_full(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut up = false;
        if diff(now, self.blue_timer) > p.target as i64 {
            up = self.p_drop == 0;
            self.p_drop = self.p_drop.saturating_add(p.p_inc);
            self.blue_timer = now;
        }
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1;
        }
        up
    }

    /// The flow was served and found empty: BLUE steps down (at most once per target), CoDel
    /// leaves its dropping state and its count decays. Returns whether BLUE went quiet.
    pub fn queue_empty(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut down = false;
        if self.p_drop != 0 && diff(now, self.blue_timer) > p.target as i64 {
            self.p_drop = self.p_drop.saturating_sub(p.p_dec);
            self.blue_timer = now;
            down = self.p_drop == 0;
        }
        self.dropping = false;
        if self.count != 0 && diff(now, self.drop_next) >= 0 {
            self.count -= 1;
            self.invsqrt();
            self.drop_next = self.control(self.drop_next, p.interval);
        }
        down
    }

    /// Whether the flow's state still has to decay (CAKE keeps it on the decaying list).
    pub fn active(&self, now: Time) -> bool {
        self.p_drop != 0 || self.count != 0 || diff(now, self.drop_next) < 0
    }

    /// The verdict on a packet just taken from the head that waited `sojourn` (`ect`: it is
    /// ECN-capable); `bulk_flows` scales the MTU-time floor (CAKE passes it in ingress mode
    /// only, else 0). BLUE draws from `rng` only while its probability is non-zero.
    pub fn should_drop(
        &mut self,
        p: &CobaltParams,
        now: Time,
        sojourn: Time,
        bulk_flows: u64,
        ect: bool,
        rng: &mut Rng,
    ) -> Verdict {
        let mut schedule = diff(now, self.drop_next);
        let over_target =
            sojourn > p.target && sojourn > p.mtu_time * bulk_flows * 2 && sojourn > p.mtu_time * 4;
        let mut next_due = self.count != 0 && schedule >= 0;
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = self.control(now, p.interval);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        let mut signal = false;
        if next_due && self.dropping {
            signal = true;
            self.count = self.count.saturating_add(1);
            self.invsqrt();
            self.drop_next = self.control(self.drop_next, p.interval);
            schedule = diff(now, self.drop_next);
        } else {
            while next_due {
                self.count -= 1;
                self.invsqrt();
                self.drop_next = self.control(self.drop_next, p.interval);
                schedule = diff(now, self.drop_next);
                next_due = self.count != 0 && schedule >= 0;
            }
        }
        let blue = self.p_drop != 0 && (rng.next_u64() as u32) < self.p_drop;
        let drop = blue || (signal && !ect);
        // drop_next doubles as an activity timeout
        if self.count == 0 {
            self.drop_next = now + p.interval;
        } else if schedule > 0 && !drop {
            self.drop_next = now;
        }
        match (drop, signal) {
            (true, _) => Verdict::Drop,
            (false, true) => Verdict::Mark,
            (false, false) => Verdict::Deliver,
        }
    }
}
