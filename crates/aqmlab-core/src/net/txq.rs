//! mac80211's intermediate software queues with FQ-CoDel inside the MAC (`topology.wifi.txq =
//! "fq_codel"`), as Linux has them since 4.10 for drivers that pull frames from mac80211 (ath9k
//! among them); read in the Linux 6.x sources before 6.16 (net/mac80211/tx.c,
//! net/mac80211/sta_info.c, net/mac80211/rate.c, include/net/fq_impl.h as reworked in 5.11,
//! include/net/codel_impl.h).
//!
//! - Each station has a queue per TID (`txq_info`, its `fq_tin`); the model has one access
//!   category (best effort), so one tin per station. The tins share the radio's pool of flows
//!   (`fq_init(fq, 4096)` in `ieee80211_txq_setup_flows`): a packet's 5-tuple hash picks one
//!   of them (`fq_flow_idx`); a flow another station's tin holds is not shared: the packet goes
//!   to its own tin's default flow instead, counted as a collision (`fq_flow_classify`).
//! - Enqueue (`ieee80211_txq_enqueue` -> `fq_tin_enqueue`): the packet is stamped with the time
//!   (CoDel's sojourn starts here, not at the qdisc), a flow that was idle joins its tin's new
//!   list with a full quantum (300 B, `fq_init`). Above the radio's limit (8192 packets,
//!   `fq_init`) or memory limit (4 MiB for a radio without VHT, `ieee80211_txq_setup_flows`;
//!   truesize modelled as in `queue::fq_codel`, the size plus 576 B), the fattest flow over all
//!   stations by bytes (`fq_find_fattest_flow`: the first largest in flow order, then the
//!   stations' default flows) loses half its packets, at least one and at most 32, from its
//!   head (`fq_flow_drop`), until the radio is under both limits again.
//! - Dequeue (`fq_tin_dequeue` with `fq_tin_dequeue_func`, called as the driver builds an
//!   aggregate for the station: ath9k `ath_tx_form_aggr` -> `ieee80211_tx_dequeue`): new flows
//!   before old ones, deficits in bytes (`queue::fq_sched::FqSched`, the scheduler fq_codel uses), and
//!   per flow the one CoDel of `queue::codel` (variant `linux`, as include/net/codel_impl.h),
//!   whose one-MTU guard sees the flow's own backlog against an MTU of 0 (`codel_dequeue` gets
//!   `&flow->backlog`; mac80211 never sets `cparams.mtu`), so it stops only when the flow is
//!   empty.
//! - CoDel's parameters are the station's (`sta->cparams`, set in `__sta_info_alloc`): target
//!   20 ms, interval 100 ms, ECN on. A station whose expected throughput (the rate control's,
//!   here the PHY rate of its best MCS) is below 6 Mb/s times the number of associated stations
//!   gets target 50 ms, interval 300 ms and ECN off (`sta_update_codel_params`, called from
//!   `ieee80211_sta_set_expected_throughput` at each rate-table update, `rate_control_set_rates`;
//!   STA_SLOW_THRESHOLD in sta_info.h). That rule came with commit 484a54c2e597 ("mac80211:
//!   Dynamically set CoDel parameters per station") and was reverted in 2025 (commit
//!   4876376988081d, in the 6.12 to 6.15 stable series too): `slow_stations = false` is the
//!   revert.
//!
//! Not modelled: the per-interface queue of frames without a station, management frames, the
//! TIDs beyond best effort, the 802.11 header in the deficits (the IP length is charged).

use crate::packet::PktId;
use crate::params::{check_bytes, check_range, check_time, Params};
use crate::queue::codel::{CodelParams, CodelStats, CodelVars, Variant};
use crate::queue::fq_codel::MEMORY_OVERHEAD;
use crate::queue::fq_sched::{packets, FqSched};
use crate::queue::util::{flow_hash, scale};
use crate::queue::{DropReason, QueueCtx};
use crate::units::{as_dur, as_size, Dur, LimitSpec, Rate, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The queues between the access point's qdisc and its driver (scenario `topology.wifi.txq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxqKind {
    /// One FIFO per station below the qdisc, fed while the driver holds fewer than
    /// `driver_limit` frames (ath9k before mac80211's queues: the first model).
    Fifo,
    /// mac80211's per-station FQ-CoDel (this module).
    FqCodel,
}

impl TxqKind {
    pub const NAMES: [&'static str; 2] = ["fifo", "fq_codel"];

    pub fn parse(name: &str) -> Option<TxqKind> {
        match name {
            "fifo" => Some(TxqKind::Fifo),
            "fq_codel" => Some(TxqKind::FqCodel),
            _ => None,
        }
    }
}

/// The keys of `topology.wifi.txq_params` (with `txq = "fq_codel"`), defaults as Linux; each
/// may be left out.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TxqParams {
    /// flows shared by all stations' queues; default 4096 (ieee80211_txq_setup_flows)
    pub flows: u32,
    /// DRR credit per round in bytes; default 300 (fq_init)
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub quantum: u64,
    /// packets in all stations' queues above which the fattest flow loses packets; default
    /// 8192p (fq_init)
    #[serde(with = "packets")]
    #[schemars(with = "LimitSpec")]
    pub limit: u64,
    /// modelled memory (size + 576 B per packet) above which the same happens; default 4MiB
    /// (ieee80211_txq_setup_flows, a radio without VHT)
    #[serde(with = "as_size")]
    #[schemars(with = "Size")]
    pub memory_limit: u64,
    /// CoDel's target; default 20ms (__sta_info_alloc)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub target: Time,
    /// CoDel's interval; default 100ms (__sta_info_alloc)
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub interval: Time,
    /// CE-mark ECT packets instead of dropping; default true (__sta_info_alloc)
    pub ecn: bool,
    /// lenient CoDel for slow stations (sta_update_codel_params); default true (Linux 4.12 to
    /// 6.15), false as after its 2025 revert
    pub slow_stations: bool,
    /// a station is slow below this expected throughput times the number of stations;
    /// default 6Mbps (STA_SLOW_THRESHOLD)
    pub slow_threshold: Rate,
    /// a slow station's CoDel target; default 50ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub slow_target: Time,
    /// a slow station's CoDel interval; default 300ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    pub slow_interval: Time,
    /// a slow station's ECN; default false
    pub slow_ecn: bool,
}

impl Default for TxqParams {
    fn default() -> Self {
        TxqParams {
            flows: 4096,
            quantum: 300,
            limit: 8192,
            memory_limit: 4 << 20,
            target: 20 * MS,
            interval: 100 * MS,
            ecn: true,
            slow_stations: true,
            slow_threshold: Rate(6_000_000),
            slow_target: 50 * MS,
            slow_interval: 300 * MS,
            slow_ecn: false,
        }
    }
}

impl Params<()> for TxqParams {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        check_range("flows", self.flows, 1, 65_536)?;
        check_bytes("quantum", self.quantum, 1, 1 << 20)?;
        check_range("limit", self.limit, 1, 1 << 24)?;
        check_bytes("memory_limit", self.memory_limit, 1, 1 << 40)?;
        for (k, t, i) in [
            ("target", self.target, self.interval),
            ("slow_target", self.slow_target, self.slow_interval),
        ] {
            check_time(k, t, 1, 10 * SEC)?;
            check_time(&k.replace("target", "interval"), i, t, 100 * SEC)?;
        }
        Ok(())
    }
}

impl TxqParams {
    /// The CoDel of a station (`sta->cparams`): the normal or the slow station's.
    fn codel(&self, slow: bool) -> CodelParams {
        let (target, interval, ecn) = if slow {
            (self.slow_target, self.slow_interval, self.slow_ecn)
        } else {
            (self.target, self.interval, self.ecn)
        };
        CodelParams {
            target,
            interval,
            ecn,
            ..CodelParams::variant(Variant::Linux, 0)
        }
    }
}

/// One station's queue (`txq_info`): its flows on the radio's pool, the last being its own
/// default flow, and whether it counts as slow.
struct Tin {
    sched: FqSched<CodelVars>,
    slow: bool,
}

/// Counters of the MAC's queues.
#[derive(Clone, Debug, Default)]
pub struct TxqStats {
    pub codel_drops: u64,
    pub codel_marks: u64,
    pub fat_drops: u64,
    pub collisions: u64,
}

/// The radio's queues: a tin per station over a shared pool of flows.
pub struct Txq {
    p: TxqParams,
    normal: CodelParams,
    slow: CodelParams,
    tins: Vec<Tin>,
    /// The tin that last took each pooled flow (`flow->tin`); it holds the flow while the flow
    /// is on that tin's lists.
    owner: Vec<u16>,
    seed: u64,
    /// Packets and modelled memory over all tins (`fq->backlog`, `fq->memory_usage`).
    packets: u64,
    memory: u64,
    cstats: CodelStats,
    pub stats: TxqStats,
}

const NO_TIN: u16 = u16::MAX;

impl Txq {
    pub fn new(p: TxqParams, stations: usize, seed: u64) -> Txq {
        let n = p.flows as usize;
        let tins = (0..stations)
            .map(|_| {
                let mut sched = FqSched::new(n + 1, p.quantum as u32, seed, CodelVars::default);
                sched.per_flow_guard = true;
                Tin { sched, slow: false }
            })
            .collect();
        Txq {
            normal: p.codel(false),
            slow: p.codel(true),
            cstats: CodelStats::new(&p.codel(false)),
            p,
            tins,
            owner: vec![NO_TIN; n],
            seed,
            packets: 0,
            memory: 0,
            stats: TxqStats::default(),
        }
    }

    /// Packets queued for station `s`.
    pub fn backlog(&self, s: usize) -> u64 {
        self.tins[s].sched.tot.packets
    }

    /// Packets queued over all stations.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    /// Every packet queued (for the end-of-run conservation check).
    pub fn held(&self) -> impl Iterator<Item = PktId> + '_ {
        self.tins
            .iter()
            .flat_map(|t| t.sched.flows.iter().flat_map(|f| f.fq.iter()))
    }

    /// Whether station `s` uses the slow station's CoDel.
    pub fn is_slow(&self, s: usize) -> bool {
        self.tins[s].slow
    }

    /// The rate control's expected throughput to station `s` changed (`sta_update_codel_params`):
    /// a station is slow while it is under `slow_threshold` times the number of stations.
    pub fn expect(&mut self, s: usize, throughput_bps: u64) {
        let stations = self.tins.len() as u64;
        self.tins[s].slow =
            self.p.slow_stations && throughput_bps > 0 && throughput_bps < self.p.slow_threshold.0 * stations;
    }

    /// Queues packet `id` for station `s` at `now` (`ieee80211_txq_enqueue`); returns how many
    /// packets the limits dropped (`ctx` has them).
    pub fn enqueue(&mut self, s: usize, id: PktId, ctx: &mut QueueCtx, now: Time) -> u32 {
        ctx.pool.get_mut(id).enqueued_at = now;
        let default = self.p.flows as usize;
        let mut f = scale(flow_hash(ctx.hash_key(id), self.seed), self.p.flows);
        let o = self.owner[f];
        if o != NO_TIN && o as usize != s && self.tins[o as usize].sched.listed(f) {
            f = default;
            self.stats.collisions += 1;
        } else {
            self.owner[f] = s as u16;
        }
        let size = ctx.size(id);
        self.tins[s].sched.push(f, id, size);
        self.packets += 1;
        self.memory += size as u64 + MEMORY_OVERHEAD;
        let mut dropped = 0;
        while self.packets > self.p.limit || self.memory > self.p.memory_limit {
            let Some((t, f)) = self.fattest() else {
                break;
            };
            dropped += self.drop_from(t, f, ctx);
        }
        dropped
    }

    /// The flow with the most bytes queued over all stations (`fq_find_fattest_flow`): the
    /// first largest among the pooled flows, then among the stations' default flows.
    fn fattest(&self) -> Option<(usize, usize)> {
        let mut best = None;
        let mut most = 0;
        for (f, &o) in self.owner.iter().enumerate() {
            if o == NO_TIN {
                continue;
            }
            let bytes = self.tins[o as usize].sched.flows[f].fq.bytes();
            if bytes > most {
                most = bytes;
                best = Some((o as usize, f));
            }
        }
        let default = self.p.flows as usize;
        for (t, tin) in self.tins.iter().enumerate() {
            let bytes = tin.sched.flows[default].fq.bytes();
            if bytes > most {
                most = bytes;
                best = Some((t, default));
            }
        }
        best
    }

    /// Drops half of flow `f`'s packets (at least one, at most 32) from its head
    /// (`fq_flow_drop`); returns how many.
    fn drop_from(&mut self, t: usize, f: usize, ctx: &mut QueueCtx) -> u32 {
        let sched = &mut self.tins[t].sched;
        let n = (sched.flows[f].fq.len() / 2).clamp(1, 32);
        let mut k = 0;
        while k < n {
            let Some(id) = sched.pop_head(f, ctx) else {
                break;
            };
            self.packets -= 1;
            self.memory -= ctx.size(id) as u64 + MEMORY_OVERHEAD;
            ctx.drop_packet(id, DropReason::FatFlow);
            k += 1;
        }
        self.stats.fat_drops += k as u64;
        k as u32
    }

    /// The next packet for station `s` (`ieee80211_tx_dequeue` -> `fq_tin_dequeue` with the
    /// station's CoDel); returns it and how many packets CoDel dropped on the way.
    pub fn dequeue(&mut self, s: usize, ctx: &mut QueueCtx, now: Time) -> (Option<PktId>, u32) {
        let tin = &mut self.tins[s];
        let params = if tin.slow { &self.slow } else { &self.normal };
        let cstats = &mut self.cstats;
        let before = tin.sched.tot;
        let id = tin.sched.dequeue(ctx, now, |v, src, ctx, now| {
            v.dequeue(params, cstats, src, ctx, now)
        });
        let gone = before.packets - tin.sched.tot.packets;
        let gone_bytes = before.bytes - tin.sched.tot.bytes;
        self.packets -= gone;
        self.memory -= gone_bytes + gone * MEMORY_OVERHEAD;
        self.stats.codel_drops = self.cstats.drops;
        self.stats.codel_marks = self.cstats.marks;
        (id, (gone - id.is_some() as u64) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use crate::units::US;

    /// Puts a packet of `flow` and `size` for station `s` in the queues at `now`.
    fn put(q: &mut Txq, h: &mut Harness, s: usize, flow: u32, size: u32, now: Time) -> PktId {
        let id = h.packet(flow, size, Ecn::NotEct);
        let mut ctx = QueueCtx {
            pool: &mut h.pool,
            events: &mut h.events,
        };
        q.enqueue(s, id, &mut ctx, now);
        id
    }

    fn take(q: &mut Txq, h: &mut Harness, s: usize, now: Time) -> Option<PktId> {
        let mut ctx = QueueCtx {
            pool: &mut h.pool,
            events: &mut h.events,
        };
        q.dequeue(s, &mut ctx, now).0
    }

    /// Scenario flows whose packets (direction down) land in distinct pooled flows.
    fn distinct(q: &Txq, n: usize) -> Vec<u32> {
        let mut out = Vec::new();
        let mut seen = Vec::new();
        for f in 0..10_000u32 {
            let idx = scale(flow_hash(u64::from(f << 1), q.seed), q.p.flows);
            if !seen.contains(&idx) {
                seen.push(idx);
                out.push(f);
                if out.len() == n {
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_bulk_flow() {
        // fq_tin_dequeue: a flow that was idle joins the new list and goes before the old list;
        // the bulk flow, having spent its 300 B quantum on its first packet, is on the old list.
        let mut q = Txq::new(TxqParams::default(), 1, 7);
        let mut h = Harness::new();
        let [bulk, sparse] = distinct(&q, 2)[..] else {
            unreachable!()
        };
        let first = put(&mut q, &mut h, 0, bulk, 1500, 0);
        for _ in 0..9 {
            put(&mut q, &mut h, 0, bulk, 1500, 0);
        }
        assert_eq!(take(&mut q, &mut h, 0, 0), Some(first));
        let ping = put(&mut q, &mut h, 0, sparse, 84, 0);
        assert_eq!(take(&mut q, &mut h, 0, 0), Some(ping));
        assert_eq!(q.packets(), 9); // 10 bulk and the ping in, two out
    }

    #[test]
    fn over_the_limit_the_fattest_flow_loses_half_its_packets_from_its_head() {
        // fq_tin_enqueue over fq->limit: fq_find_fattest_flow by bytes, whichever station's,
        // then fq_flow_drop: min(32, qlen / 2) from the head, at least one.
        let p = TxqParams {
            limit: 20,
            ..TxqParams::default()
        };
        let mut q = Txq::new(p, 2, 7);
        let mut h = Harness::new();
        let [small, fat] = distinct(&q, 2)[..] else {
            unreachable!()
        };
        let mut fat_ids = Vec::new();
        for _ in 0..10 {
            put(&mut q, &mut h, 0, small, 1000, 0);
            fat_ids.push(put(&mut q, &mut h, 1, fat, 1500, 0));
        }
        assert!(h.events.is_empty());
        // the 21st packet (to the smaller flow) puts the radio over: the fat flow (station 1,
        // 15000 B) loses 10 / 2 = 5 packets, its oldest
        put(&mut q, &mut h, 0, small, 1000, 0);
        let dropped: Vec<PktId> = h
            .events
            .iter()
            .map(|e| match e {
                crate::queue::QueueEvent::Drop(id, DropReason::FatFlow) => *id,
                e => panic!("{e:?}"),
            })
            .collect();
        assert_eq!(dropped, fat_ids[..5]);
        assert_eq!((q.packets(), q.backlog(0), q.backlog(1)), (16, 11, 5));
        // conservation: every packet offered is queued or dropped
        assert_eq!(q.held().count() as u64 + dropped.len() as u64, 21);
    }

    #[test]
    fn a_flow_held_by_another_station_sends_the_packet_to_the_default_flow() {
        // fq_flow_classify: the same 5-tuple hash from two stations (one pooled flow) collides;
        // the second station's packet goes to its tin's default flow, and is still delivered.
        let mut q = Txq::new(TxqParams::default(), 2, 7);
        let mut h = Harness::new();
        let a = put(&mut q, &mut h, 0, 5, 1500, 0);
        let b = put(&mut q, &mut h, 1, 5, 1500, 0);
        assert_eq!(q.stats.collisions, 1);
        assert_eq!(take(&mut q, &mut h, 1, 0), Some(b));
        assert_eq!(take(&mut q, &mut h, 0, 0), Some(a));
    }

    #[test]
    fn slow_stations_get_the_lenient_codel() {
        // sta_update_codel_params: slow below 6 Mb/s x stations (3 here: 18 Mb/s); a station
        // with no estimate (0) is not slow; slow_stations = false (the 2025 revert) never is.
        let mut q = Txq::new(TxqParams::default(), 3, 7);
        q.expect(0, 6_500_000); // MCS 0
        q.expect(1, 130_000_000); // MCS 15
        q.expect(2, 0);
        assert_eq!((q.is_slow(0), q.is_slow(1), q.is_slow(2)), (true, false, false));
        let off = TxqParams {
            slow_stations: false,
            ..TxqParams::default()
        };
        let mut r = Txq::new(off, 3, 7);
        r.expect(0, 6_500_000);
        assert!(!r.is_slow(0));
        // A standing 30 ms queue: CoDel's target of 20 ms is exceeded, 50 ms is not. Packets
        // enter every 1 ms and leave every 1 ms, 30 ms after they came, for 400 ms.
        for slow in [false, true] {
            let mut q = Txq::new(TxqParams::default(), 3, 7);
            q.expect(0, if slow { 6_500_000 } else { 130_000_000 });
            let mut h = Harness::new();
            for k in 0..430u64 {
                let now = k * MS;
                put(&mut q, &mut h, 0, 1, 1500, now);
                if k >= 30 {
                    take(&mut q, &mut h, 0, now + 500 * US);
                }
            }
            let drops = q.stats.codel_drops;
            if slow {
                assert_eq!(drops, 0);
            } else {
                assert!(drops > 0);
            }
        }
    }
}
