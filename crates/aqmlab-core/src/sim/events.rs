//! The event queue: a binary min-heap ordered by (time, insertion sequence number), so events at
//! the same time run in the order they were scheduled (FIFO) and a run stays a pure function of
//! (scenario, seed).
//!
//! Why not `std::collections::BinaryHeap<Reverse<(Time, u64, Ev)>>`: a heap of 24-byte tuples
//! compared field by field spent about 40 % of a UDP overload run in push/pop. Comparing only
//! (time, seq), as one integer, avoids comparing the payload; pop order is identical, as
//! (time, seq) is unique. Most events replace the root with their follow-up
//! ([`EventQueue::take`]), a sift down from the root, where two children per level cost fewer
//! comparisons than four (the heap was 4-ary while every event paid a pop and a push).

use crate::units::Time;

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    t: Time,
    seq: u64,
    ev: E,
}

impl<E> Entry<E> {
    /// (time, seq) as one integer: one comparison, compiled without branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.t as u128) << 64) | self.seq as u128
    }

    #[inline(always)]
    fn before(&self, o: &Entry<E>) -> bool {
        self.key() < o.key()
    }
}

/// A min-priority queue of events keyed by (time, sequence number).
///
/// The event loop takes the earliest event with [`EventQueue::take`], which leaves its entry at
/// the root: the next push replaces it there (one sift down instead of a pop's sift down and the
/// push's sift up; most events schedule one follow-up in their own queue, e.g. a pipe's next
/// head), and [`EventQueue::settle`] removes it if no push came. The set of entries, and so the
/// order of the pops, is the same as popping at once.
#[derive(Clone, Debug)]
pub struct EventQueue<E: Copy> {
    heap: Vec<Entry<E>>,
    seq: u64,
    /// The root was taken and is still in `heap`.
    taken: bool,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: Vec::new(),
            seq: 0,
            taken: false,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.taken as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `ev` at `t`, after every event already scheduled at `t`.
    #[inline]
    pub fn push(&mut self, t: Time, ev: E) {
        self.seq += 1;
        self.push_seq(t, self.seq, ev);
    }

    /// Schedules `ev` at `t` with a sequence number drawn by the caller, for several queues
    /// that share one sequence and are merged by [`EventQueue::peek_key`].
    #[inline]
    pub fn push_seq(&mut self, t: Time, seq: u64, ev: E) {
        let e = Entry { t, seq, ev };
        if self.taken {
            self.taken = false;
            self.sift_down(e);
            return;
        }
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let p = (i - 1) / 2;
            if e.before(&self.heap[p]) {
                self.heap[i] = self.heap[p];
                i = p;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }

    /// (time, seq) of the earliest event as one integer, for merging queues (none taken).
    #[inline]
    pub fn peek_key(&self) -> Option<u128> {
        debug_assert!(!self.taken, "settle before peeking");
        self.heap.first().map(|e| e.key())
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let top = self.take();
        self.settle();
        top
    }

    /// Returns the earliest event, which counts as removed: its entry stays at the root until
    /// the next push takes its place or [`EventQueue::settle`] removes it.
    #[inline]
    pub fn take(&mut self) -> Option<(Time, E)> {
        debug_assert!(!self.taken, "settle before taking again");
        let top = self.heap.first()?;
        self.taken = true;
        Some((top.t, top.ev))
    }

    /// Removes the entry of the event taken last, unless a push has replaced it.
    #[inline(always)]
    pub fn settle(&mut self) {
        if !self.taken {
            return;
        }
        self.taken = false;
        let last = self.heap.pop().expect("a taken entry");
        if !self.heap.is_empty() {
            self.sift_down(last);
        }
    }

    /// Puts `e` at the root in place of the entry there and moves it down to its place.
    #[inline(always)]
    fn sift_down(&mut self, e: Entry<E>) {
        let n = self.heap.len();
        let mut i = 0;
        loop {
            let c = 2 * i + 1;
            if c >= n {
                break;
            }
            let m = if c + 1 < n {
                // Both children: the smaller without a data-dependent branch.
                let h = &self.heap[c..c + 2];
                c + h[1].before(&h[0]) as usize
            } else {
                c
            };
            if self.heap[m].before(&e) {
                self.heap[i] = self.heap[m];
                i = m;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Same pop order as a binary heap of (time, seq, payload) under random pushes and pops,
    /// with pops done as the event loop does them: taken, then the handler's pushes (the first
    /// taking the taken entry's place), then settled.
    #[test]
    fn pops_in_time_then_fifo_order_like_a_binary_heap() {
        let mut rng = Rng::from_seed(7);
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut seq = 0u64;
        let mut now = 0;
        let mut grid = Rng::from_seed(8);
        let mut push = |q: &mut EventQueue<u64>, reference: &mut BinaryHeap<_>, now, step| {
            // Many ties: times on a coarse grid.
            let t = now + grid.range_u64(0, 20) * 10;
            seq += 1;
            q.push(t, step);
            reference.push(Reverse((t, seq, step)));
        };
        // The queue's next event is the reference heap's, and time never goes back.
        let same_next = |a: Option<(u64, u64)>, reference: &mut BinaryHeap<_>, now: &mut u64| {
            let b = reference.pop().map(|Reverse((t, _, s))| (t, s));
            assert_eq!(a, b);
            if let Some((t, _)) = a {
                assert!(t >= *now);
                *now = t;
            }
        };
        for step in 0..200_000u64 {
            match rng.range_u64(0, 100) {
                0..35 => push(&mut q, &mut reference, now, step),
                35..70 => same_next(q.pop(), &mut reference, &mut now),
                _ => {
                    same_next(q.take(), &mut reference, &mut now);
                    for k in 0..step % 3 {
                        push(&mut q, &mut reference, now, step + k);
                    }
                    assert_eq!(q.len(), reference.len());
                    q.settle();
                }
            }
            assert_eq!(q.len(), reference.len());
            assert_eq!(
                q.peek_key().map(|k| (k >> 64) as Time),
                reference.peek().map(|r| r.0 .0)
            );
        }
        while let Some(b) = reference.pop() {
            assert_eq!(q.pop(), Some((b.0 .0, b.0 .2)));
        }
        assert!(q.is_empty());
    }
}
