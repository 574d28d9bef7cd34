//! Small pieces shared by several disciplines: the packet queue with its byte count, the flow
//! hash, the `limit` key and buffer-limit tests, and an index of queues by length (for O(1)
//! "longest queue" lookups in SFQ and DRR).

use super::{LinkInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::Params;
use crate::units::{Limit, LimitSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// A FIFO of packets and its byte count: the queue of every single-queue discipline (pfifo,
/// bfifo, CoDel, PIE, RED, BLUE) and each flow queue of the flow-queueing ones (fq_codel,
/// fq_pie, sfq_codel). Its counts are kept exact by every push and pop.
#[derive(Default)]
pub struct PacketQueue {
    ids: VecDeque<PktId>,
    bytes: u64,
}

impl PacketQueue {
    #[inline]
    pub fn push_back(&mut self, id: PktId, size: u32) {
        self.ids.push_back(id);
        self.bytes += size as u64;
    }

    #[inline]
    pub fn pop_front(&mut self, ctx: &QueueCtx) -> Option<PktId> {
        let id = self.ids.pop_front()?;
        self.bytes -= ctx.size(id) as u64;
        Some(id)
    }

    #[inline]
    pub fn pop_back(&mut self, ctx: &QueueCtx) -> Option<PktId> {
        let id = self.ids.pop_back()?;
        self.bytes -= ctx.size(id) as u64;
        Some(id)
    }

    /// Takes out the packet at position `i` (0: the head), wherever it is in the queue.
    pub fn remove(&mut self, i: usize, ctx: &QueueCtx) -> Option<PktId> {
        let id = self.ids.remove(i)?;
        self.bytes -= ctx.size(id) as u64;
        Some(id)
    }

    /// The packets, head first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = PktId> + '_ {
        self.ids.iter().copied()
    }

    /// The packet at the head.
    #[inline]
    pub fn front(&self) -> Option<PktId> {
        self.ids.front().copied()
    }

    /// The packet at the tail.
    #[inline]
    pub fn back(&self) -> Option<PktId> {
        self.ids.back().copied()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes queued.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether one more packet of `size` bytes would hold more than `limit`.
    #[inline]
    pub fn exceeds(&self, limit: Limit, size: u64) -> bool {
        over_limit(limit, self.ids.len() as u64 + 1, self.bytes + size)
    }
}

/// Merges two resolved tables (keys of `b` win).
pub fn merge(mut a: Value, b: Value) -> Value {
    if let (Value::Object(ma), Value::Object(mb)) = (&mut a, b) {
        for (k, v) in mb {
            ma.insert(k, v);
        }
    }
    a
}

/// A 64-bit finaliser (the SplitMix64 output mix): a fixed, portable bit mixer.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 32-bit hash of a flow key under a perturbation (seed drawn from the discipline's Rng).
#[inline]
pub fn flow_hash(key: u64, seed: u64) -> u32 {
    (mix64(key.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed) >> 32) as u32
}

/// Multiply-shift reduction of a 32-bit hash to [0, n) (the Linux `reciprocal_scale`).
#[inline]
pub fn scale(hash: u32, n: u32) -> usize {
    ((hash as u64 * n as u64) >> 32) as usize
}

/// Whether holding `packets` packets and `bytes` bytes exceeds `limit`.
#[inline]
pub fn over_limit(limit: Limit, packets: u64, bytes: u64) -> bool {
    match limit {
        Limit::Packets(p) => packets > p,
        Limit::Bytes(b) => bytes > b,
    }
}

/// The limit of a discipline: its own `limit` key, else the direction's, else 1000 packets (Linux's
/// txqueuelen). A zero limit is rejected, naming the key.
pub fn resolve_limit(own: Option<LimitSpec>, link: &LinkInfo) -> Result<Limit, String> {
    // a zero limit is named where it was typed: the qdisc's own key or the hop's
    let key = if own.is_some() {
        "limit".to_string()
    } else {
        format!("{}limit", super::LINK_KEY)
    };
    match own.map(|l| l.0).or(link.limit).unwrap_or(Limit::Packets(1000)) {
        Limit::Packets(0) => Err(format!("{key}: 0p is not allowed; allowed: at least 1p")),
        Limit::Bytes(0) => Err(format!("{key}: 0B is not allowed; allowed: at least 1B")),
        l => Ok(l),
    }
}

/// The `limit` key of a single-queue discipline, resolved by [`resolve_limit`].
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Buffer {
    /// buffer ("1000p" or bytes); default the link's limit, else 1000p
    #[schemars(with = "LimitSpec")]
    pub limit: Option<LimitSpec>,
}

impl Params<LinkInfo> for Buffer {
    fn finish(&mut self, link: &LinkInfo) -> Result<(), String> {
        self.limit = Some(LimitSpec(resolve_limit(self.limit, link)?));
        Ok(())
    }
}

impl Buffer {
    /// The resolved limit.
    pub fn limit(&self) -> Limit {
        self.limit.expect("resolved by finish").0
    }
}

/// Queues grouped by their packet count: `lists[n]` holds the queues with n packets. Increment,
/// decrement and "a longest queue" are O(1) amortised (the maximum is lowered lazily).
#[derive(Default)]
pub struct DepthIndex {
    len: Vec<u32>,
    pos: Vec<u32>,
    lists: Vec<Vec<u32>>,
    max: usize,
}

impl DepthIndex {
    pub fn new(n: usize) -> DepthIndex {
        DepthIndex {
            len: vec![0; n],
            pos: vec![0; n],
            lists: vec![Vec::new()],
            max: 0,
        }
    }

    /// Adds queue slots so that `q` is valid.
    pub fn ensure(&mut self, q: usize) {
        if q >= self.len.len() {
            self.len.resize(q + 1, 0);
            self.pos.resize(q + 1, 0);
        }
    }

    fn unlink(&mut self, q: usize) {
        let l = self.len[q] as usize;
        if l == 0 {
            return;
        }
        let p = self.pos[q] as usize;
        let list = &mut self.lists[l];
        list.swap_remove(p);
        if p < list.len() {
            let moved = list[p] as usize;
            self.pos[moved] = p as u32;
        }
    }

    fn link(&mut self, q: usize) {
        let l = self.len[q] as usize;
        if l == 0 {
            return;
        }
        if self.lists.len() <= l {
            self.lists.resize_with(l + 1, Vec::new);
        }
        self.pos[q] = self.lists[l].len() as u32;
        self.lists[l].push(q as u32);
        self.max = self.max.max(l);
    }

    pub fn inc(&mut self, q: usize) {
        self.unlink(q);
        self.len[q] += 1;
        self.link(q);
    }

    pub fn dec(&mut self, q: usize) {
        self.unlink(q);
        self.len[q] -= 1;
        self.link(q);
    }

    /// Removes all packets of `q` from the index.
    pub fn clear(&mut self, q: usize) {
        self.unlink(q);
        self.len[q] = 0;
    }

    pub fn len(&self, q: usize) -> u32 {
        self.len[q]
    }

    /// A queue with the most packets and that count (the most recently grown one wins ties).
    pub fn longest(&mut self) -> Option<(usize, u32)> {
        while self.max > 0 && self.lists[self.max].is_empty() {
            self.max -= 1;
        }
        if self.max == 0 {
            None
        } else {
            Some((*self.lists[self.max].last().unwrap() as usize, self.max as u32))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;

    #[test]
    fn packet_queue_counts_and_limits_as_linux_fifo() {
        // sch_fifo.c: pfifo admits while qlen < limit, bfifo while backlog + len <= limit.
        let mut h = Harness::new();
        let ids: Vec<PktId> = (0..3).map(|k| h.packet(0, 1000 + k, Ecn::NotEct)).collect();
        let mut q = PacketQueue::default();
        assert!(!q.exceeds(Limit::Packets(1), 1500));
        q.push_back(ids[0], 1000);
        q.push_back(ids[1], 1001);
        assert_eq!((q.len(), q.bytes()), (2, 2001));
        assert!(q.exceeds(Limit::Packets(2), 1) && !q.exceeds(Limit::Packets(3), 1));
        assert!(!q.exceeds(Limit::Bytes(3001), 1000) && q.exceeds(Limit::Bytes(3001), 1001));
        q.push_back(ids[2], 1002);
        let ctx = QueueCtx {
            pool: &mut h.pool,
            events: &mut h.events,
        };
        assert_eq!(q.pop_back(&ctx), Some(ids[2]));
        assert_eq!(q.pop_front(&ctx), Some(ids[0]));
        assert_eq!((q.len(), q.bytes()), (1, 1001));
        assert_eq!(q.pop_front(&ctx), Some(ids[1]));
        assert_eq!((q.pop_front(&ctx), q.bytes()), (None, 0));
        assert!(q.is_empty());
    }

    #[test]
    fn depth_index_tracks_longest() {
        let mut d = DepthIndex::new(4);
        d.inc(1);
        d.inc(1);
        d.inc(2);
        assert_eq!(d.longest(), Some((1, 2)));
        d.dec(1);
        d.dec(1);
        assert_eq!(d.longest(), Some((2, 1)));
        d.clear(2);
        assert_eq!(d.longest(), None);
    }

    #[test]
    fn hash_spreads_keys() {
        let mut hits = [0u32; 16];
        for k in 0..16_000u64 {
            hits[scale(flow_hash(k, 12345), 16)] += 1;
        }
        assert!(hits.iter().all(|&h| (800..1200).contains(&h)), "{hits:?}");
    }
}
