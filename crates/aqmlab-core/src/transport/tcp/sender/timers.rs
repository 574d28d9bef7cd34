//! The sender's timers: one deadline per [`Timer`] in a table. The earliest armed deadline is
//! the sender's next wake-up ([`Timers::earliest`]); when several are due at a wake-up, the
//! first in [`Timer`]'s order runs ([`Timers::due`]) and the rest wait for the next one. What
//! each does when it fires is `fire.rs`'s.

use crate::units::Time;

/// The sender's timers, in the order they run when several are due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Timer {
    /// RFC 8985 section 7 tail loss probe (PTO). Never later than the RTO; when both are due,
    /// the probe goes first.
    Probe,
    /// RFC 6298 retransmission timer (also the SYN's).
    Rto,
    /// RFC 5827 early retransmit's delayed start of recovery (Linux tcp_pause_early_retransmit).
    EarlyRetransmit,
    /// RFC 8985 RACK reordering timer.
    Rack,
    /// A segment the window allows waits for the next paced burst or TCP Nice probe
    /// (`pace_next`).
    Pace,
    /// The start of the application's next on period.
    App,
}

const TIMERS: usize = 6;

impl Timer {
    /// Every timer, in [`Timer`]'s order.
    const ALL: [Timer; TIMERS] = [
        Timer::Probe,
        Timer::Rto,
        Timer::EarlyRetransmit,
        Timer::Rack,
        Timer::Pace,
        Timer::App,
    ];
}

/// The deadline of each [`Timer`] (None: not armed).
#[derive(Debug, Default)]
pub(super) struct Timers([Option<Time>; TIMERS]);

impl Timers {
    pub(super) fn get(&self, t: Timer) -> Option<Time> {
        self.0[t as usize]
    }

    pub(super) fn set(&mut self, t: Timer, at: Option<Time>) {
        self.0[t as usize] = at;
    }

    pub(super) fn arm(&mut self, t: Timer, at: Time) {
        self.set(t, Some(at));
    }

    pub(super) fn stop(&mut self, t: Timer) {
        self.set(t, None);
    }

    pub(super) fn armed(&self, t: Timer) -> bool {
        self.get(t).is_some()
    }

    /// The earliest armed deadline (written out as plain comparisons: this runs after every
    /// event of the flow).
    #[inline(always)]
    pub(super) fn earliest(&self) -> Option<Time> {
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) | (None, x) => x,
        };
        let [a, b, c, d, e, f] = self.0;
        earliest(earliest(earliest(a, b), earliest(c, d)), earliest(e, f))
    }

    /// The first timer in [`Timer`]'s order whose deadline has come at `now`.
    pub(super) fn due(&self, now: Time) -> Option<Timer> {
        Timer::ALL
            .into_iter()
            .find(|&t| self.get(t).is_some_and(|at| now >= at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_deadline_wakes_and_the_first_due_in_order_runs() {
        let mut t = Timers::default();
        assert_eq!((t.earliest(), t.due(u64::MAX)), (None, None));
        t.arm(Timer::App, 50);
        t.arm(Timer::Rto, 30);
        t.arm(Timer::Probe, 40);
        assert_eq!(t.earliest(), Some(30));
        assert_eq!(t.due(29), None);
        assert_eq!(t.due(30), Some(Timer::Rto));
        // Both due: the probe (never armed later than the RTO) runs first.
        assert_eq!(t.due(45), Some(Timer::Probe));
        t.stop(Timer::Probe);
        t.stop(Timer::Rto);
        assert_eq!((t.earliest(), t.due(50)), (Some(50), Some(Timer::App)));
    }
}
