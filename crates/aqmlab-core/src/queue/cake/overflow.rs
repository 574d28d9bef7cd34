//! CAKE's choice of the flow to drop from when its buffer overflows (Linux sch_cake.c
//! `cake_heapify`, `cake_heapify_up`, `cake_drop`): a max-heap of every flow queue of all eight
//! possible tins by backlog in bytes. It is only approximately ordered: an arrival moves its
//! queue up (while the heap is live), a departure moves nothing, and a drop re-sinks the root.
//! The heap is rebuilt from scratch at a drop when 65535 packets have been sent since the last
//! one (the live window), and is not maintained outside that window. The queue dropped from is
//! therefore the heap's root, which can differ from the longest queue (and ties go to the
//! heap's order, not to the first queue).

use super::hash::QUEUES;

/// Linux's CAKE_MAX_TINS: the heap spans this many tins whatever the diffserv mode.
pub const MAX_TINS: usize = 8;

/// Sent packets after a drop during which the heap is maintained.
const LIVE: u16 = 65535;

/// One heap entry: a tin and a flow queue of it.
#[derive(Clone, Copy)]
struct Entry {
    tin: u8,
    flow: u16,
}

pub struct OverflowHeap {
    heap: Vec<Entry>,
    /// Where each (tin, flow) sits in the heap: `pos[tin * QUEUES + flow]`.
    pos: Vec<u16>,
    /// Sent packets left in the live window (`overflow_timeout`).
    timeout: u16,
}

impl Default for OverflowHeap {
    /// Linux `cake_init`'s layout: entry `flow * MAX_TINS + tin`.
    fn default() -> OverflowHeap {
        let n = MAX_TINS * QUEUES;
        let mut h = OverflowHeap {
            heap: vec![Entry { tin: 0, flow: 0 }; n],
            pos: vec![0; n],
            timeout: 0,
        };
        for tin in 0..MAX_TINS {
            for flow in 0..QUEUES {
                let k = flow * MAX_TINS + tin;
                h.heap[k] = Entry {
                    tin: tin as u8,
                    flow: flow as u16,
                };
                h.pos[tin * QUEUES + flow] = k as u16;
            }
        }
        h
    }
}

impl OverflowHeap {
    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        for k in [i, j] {
            let e = self.heap[k];
            self.pos[e.tin as usize * QUEUES + e.flow as usize] = k as u16;
        }
    }

    fn backlog(&self, i: usize, backlog: &impl Fn(usize, usize) -> u64) -> u64 {
        let e = self.heap[i];
        backlog(e.tin as usize, e.flow as usize)
    }

    /// Sinks entry `i` below any larger child (`cake_heapify`).
    fn sink(&mut self, mut i: usize, backlog: &impl Fn(usize, usize) -> u64) {
        let n = self.heap.len();
        loop {
            let (mut m, mut mb) = (i, self.backlog(i, backlog));
            for c in [2 * i + 1, 2 * i + 2] {
                if c < n && self.backlog(c, backlog) > mb {
                    (m, mb) = (c, self.backlog(c, backlog));
                }
            }
            if m == i {
                return;
            }
            self.swap(i, m);
            i = m;
        }
    }

    /// Flow `flow` of tin `tin` grew: it rises above smaller parents while the heap is live
    /// (`cake_heapify_up`, guarded by `overflow_timeout` in `cake_enqueue`).
    pub fn grew(&mut self, tin: usize, flow: usize, backlog: impl Fn(usize, usize) -> u64) {
        if self.timeout == 0 {
            return;
        }
        let mut i = self.pos[tin * QUEUES + flow] as usize;
        while i > 0 {
            let p = (i - 1) / 2;
            if self.backlog(i, &backlog) <= self.backlog(p, &backlog) {
                return;
            }
            self.swap(i, p);
            i = p;
        }
    }

    /// The (tin, flow) to drop from: the root, after a rebuild if the heap was not live; the
    /// heap stays live for the next [`LIVE`] packets sent.
    pub fn root(&mut self, backlog: impl Fn(usize, usize) -> u64) -> (usize, usize) {
        if self.timeout == 0 {
            for i in (0..self.heap.len() / 2).rev() {
                self.sink(i, &backlog);
            }
        }
        self.timeout = LIVE;
        let e = self.heap[0];
        (e.tin as usize, e.flow as usize)
    }

    /// After a drop from the root: it sinks to its place (`cake_heapify(q, 0)`).
    pub fn dropped(&mut self, backlog: impl Fn(usize, usize) -> u64) {
        self.sink(0, &backlog);
    }

    /// A drop found the root's queue empty: rebuild at the next one.
    pub fn invalidate(&mut self) {
        self.timeout = 0;
    }

    /// A packet was sent.
    pub fn sent(&mut self) {
        self.timeout = self.timeout.saturating_sub(1);
    }
}
