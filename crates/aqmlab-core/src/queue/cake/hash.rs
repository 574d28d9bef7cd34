//! CAKE's flow and host hashing (Linux sch_cake.c `cake_hash`): the isolation modes, the 8-way
//! set-associative flow table, and the host tables the dual and triple modes share the link by.
//!
//! A flow's 32-bit hash picks a queue `hash % 1024`; on a miss the queue's set of 8 ways is
//! searched, from that way on, first for a queue tagged with the hash, then for an idle queue;
//! with neither the flow shares its own queue (a collision). In the dual and triple modes each
//! queue also holds its source and/or destination host, found the same way in the host table,
//! whose entries count the host's bulk flows (the DRR++ quantum is divided by that count).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Flow queues per tin.
pub const QUEUES: usize = 1024;
/// Ways of a set.
pub const WAYS: usize = 8;

/// What flows are told apart by (Linux `CAKE_FLOW_*`, tc-cake's keywords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FlowMode {
    /// one queue for everything
    Flowblind,
    /// by source host
    Srchost,
    /// by destination host
    Dsthost,
    /// by host pair
    Hosts,
    /// by 5-tuple
    Flows,
    /// by 5-tuple, fair between source hosts first
    DualSrchost,
    /// by 5-tuple, fair between destination hosts first
    DualDsthost,
    /// by 5-tuple, fair between source and destination hosts
    TripleIsolate,
}

const SRC_IP: u8 = 1;
const DST_IP: u8 = 2;
const FLOWS: u8 = 4;

impl FlowMode {
    /// Linux's bit pattern of the mode.
    fn bits(self) -> u8 {
        match self {
            FlowMode::Flowblind => 0,
            FlowMode::Srchost => SRC_IP,
            FlowMode::Dsthost => DST_IP,
            FlowMode::Hosts => SRC_IP | DST_IP,
            FlowMode::Flows => FLOWS,
            FlowMode::DualSrchost => FLOWS | SRC_IP,
            FlowMode::DualDsthost => FLOWS | DST_IP,
            FlowMode::TripleIsolate => FLOWS | SRC_IP | DST_IP,
        }
    }

    /// Whether flows share the link by source host first (`cake_dsrc`).
    pub fn dual_src(self) -> bool {
        self.bits() & (FLOWS | SRC_IP) == FLOWS | SRC_IP
    }

    /// Whether flows share the link by destination host first (`cake_ddst`).
    pub fn dual_dst(self) -> bool {
        self.bits() & (FLOWS | DST_IP) == FLOWS | DST_IP
    }

    /// The hash a flow is placed by: the 5-tuple's, or the hosts' combined (0 when flowblind).
    pub fn key(self, flow: u32, src: u32, dst: u32) -> u32 {
        let b = self.bits();
        if b & FLOWS != 0 {
            return flow;
        }
        let mut h = 0;
        if b & SRC_IP != 0 {
            h ^= src;
        }
        if b & DST_IP != 0 {
            h ^= dst;
        }
        h
    }
}

/// A flow queue's membership (Linux `CAKE_SET_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Set {
    #[default]
    None,
    Sparse,
    /// Counted as sparse, but in the bulk rotation.
    SparseWait,
    Bulk,
    Decaying,
}

/// A host entry: its tags and bulk flow counts, as source and as destination.
#[derive(Clone, Copy, Default)]
struct Host {
    src_tag: u32,
    dst_tag: u32,
    src_bulk: u16,
    dst_bulk: u16,
}

/// The per-tin tables: each queue's tag, set and hosts, and the host table.
pub struct Table {
    tags: Vec<u32>,
    pub set: Vec<Set>,
    src_host: Vec<u16>,
    dst_host: Vec<u16>,
    hosts: Vec<Host>,
    pub mode: FlowMode,
    /// Lookups found at the hashed queue, in another way, in an idle way, or colliding.
    pub stats: WayStats,
}

#[derive(Clone, Copy, Default, Debug)]
pub struct WayStats {
    pub directs: u64,
    pub hits: u64,
    pub misses: u64,
    pub collisions: u64,
}

/// The ways of the set holding `idx`, starting at `idx` and wrapping within the set.
fn ways(idx: usize) -> impl Iterator<Item = usize> {
    let (outer, inner) = (idx - idx % WAYS, idx % WAYS);
    (0..WAYS).map(move |i| outer + (inner + i) % WAYS)
}

impl Table {
    pub fn new(mode: FlowMode) -> Table {
        Table {
            tags: vec![0; QUEUES],
            set: vec![Set::None; QUEUES],
            src_host: vec![0; QUEUES],
            dst_host: vec![0; QUEUES],
            hosts: vec![Host::default(); QUEUES],
            mode,
            stats: WayStats::default(),
        }
    }

    /// The queue of a packet with flow hash `flow` and host hashes `src`, `dst`.
    pub fn classify(&mut self, flow: u32, src: u32, dst: u32) -> usize {
        if self.mode == FlowMode::Flowblind {
            return 0;
        }
        let key = self.mode.key(flow, src, dst);
        let idx = key as usize % QUEUES;
        if self.tags[idx] == key && self.set[idx] != Set::None {
            self.stats.directs += 1;
            return idx;
        }
        let (q, fresh) = match ways(idx).position(|k| self.tags[k] == key) {
            Some(i) => {
                if i > 0 {
                    self.stats.hits += 1;
                }
                let q = ways(idx).nth(i).expect("a way");
                (q, self.set[q] == Set::None)
            }
            None => match ways(idx).find(|&k| self.set[k] == Set::None) {
                Some(q) => {
                    self.stats.misses += 1;
                    (q, true)
                }
                None => {
                    self.stats.collisions += 1;
                    if self.set[idx] == Set::Bulk {
                        self.dec_bulk(idx);
                    }
                    (idx, true)
                }
            },
        };
        self.tags[q] = key;
        if fresh {
            self.attach_hosts(q, src, dst);
        }
        q
    }

    /// Points queue `q` at its hosts' entries (allocating them), counting it if it is bulk.
    fn attach_hosts(&mut self, q: usize, src: u32, dst: u32) {
        let bulk = self.set[q] == Set::Bulk;
        if self.mode.dual_src() {
            let k = self.host_entry(src, false);
            self.src_host[q] = k as u16;
            if bulk {
                let h = &mut self.hosts[k];
                h.src_bulk = (h.src_bulk + 1).min(QUEUES as u16);
            }
        }
        if self.mode.dual_dst() {
            let k = self.host_entry(dst, true);
            self.dst_host[q] = k as u16;
            if bulk {
                let h = &mut self.hosts[k];
                h.dst_bulk = (h.dst_bulk + 1).min(QUEUES as u16);
            }
        }
    }

    /// The host entry tagged `hash` (as destination when `dst`, else as source) in its set, else
    /// the first entry of the set without bulk flows on that side (or the hashed one), re-tagged.
    fn host_entry(&mut self, hash: u32, dst: bool) -> usize {
        let side = |h: &Host| {
            if dst {
                (h.dst_tag, h.dst_bulk)
            } else {
                (h.src_tag, h.src_bulk)
            }
        };
        let idx = hash as usize % QUEUES;
        if let Some(k) = ways(idx).find(|&k| side(&self.hosts[k]).0 == hash) {
            return k;
        }
        let k = ways(idx).find(|&k| side(&self.hosts[k]).1 == 0).unwrap_or(idx);
        let h = &mut self.hosts[k];
        if dst {
            h.dst_tag = hash;
        } else {
            h.src_tag = hash;
        }
        k
    }

    /// Queue `q` became bulk: its hosts count one more bulk flow.
    pub fn inc_bulk(&mut self, q: usize) {
        if self.mode.dual_src() {
            let h = &mut self.hosts[self.src_host[q] as usize];
            h.src_bulk = (h.src_bulk + 1).min(QUEUES as u16);
        }
        if self.mode.dual_dst() {
            let h = &mut self.hosts[self.dst_host[q] as usize];
            h.dst_bulk = (h.dst_bulk + 1).min(QUEUES as u16);
        }
    }

    /// Queue `q` stopped being bulk.
    pub fn dec_bulk(&mut self, q: usize) {
        if self.mode.dual_src() {
            let h = &mut self.hosts[self.src_host[q] as usize];
            h.src_bulk = h.src_bulk.saturating_sub(1);
        }
        if self.mode.dual_dst() {
            let h = &mut self.hosts[self.dst_host[q] as usize];
            h.dst_bulk = h.dst_bulk.saturating_sub(1);
        }
    }

    /// The larger of queue `q`'s hosts' bulk flow counts (at least 1): its quantum's divisor.
    pub fn host_load(&self, q: usize) -> u16 {
        let mut load = 1;
        if self.mode.dual_src() {
            load = load.max(self.hosts[self.src_host[q] as usize].src_bulk);
        }
        if self.mode.dual_dst() {
            load = load.max(self.hosts[self.dst_host[q] as usize].dst_bulk);
        }
        load
    }
}
