//! What a run records, as column buffers (docs/tables.md gives the contract). The recording level
//! decides the cost: `packets` keeps one row per packet and hop, `series` only the
//! periodic samples, `summary` only the per-flow and per-link totals and the probes.

pub mod rows;
pub mod tables;

use crate::packet::{Dir, Packet};
use crate::queue::DropReason;
use crate::units::Time;
use rows::{CcReport, FlowReport};
use serde::{Deserialize, Serialize};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Summary,
    Series,
    #[default]
    Packets,
}

/// Outcome codes of the `packets` table; names from [`outcome_names`].
pub const OUTCOME_SENT: u8 = 0;
pub const OUTCOME_MARKED: u8 = 1;
/// Drop reasons follow at 2 + DropReason as u8.
pub const OUTCOME_DROP_BASE: u8 = 2;

/// The name of every outcome code, in code order: "sent", "marked", then the drop reasons.
pub fn outcome_names() -> Vec<&'static str> {
    let mut names = vec!["sent", "marked"];
    names.extend(DropReason::ALL.iter().map(|r| r.name()));
    names
}

#[derive(Default)]
pub struct PacketColumns {
    pub dir: Vec<u8>,
    /// Index of the hop (into the `links` table).
    pub hop: Vec<u8>,
    pub flow: Vec<u32>,
    pub size: Vec<u32>,
    pub t_enqueue: Vec<Time>,
    pub t_out: Vec<Time>,
    pub outcome: Vec<u8>,
    /// Each row's header fields ([`HeaderRow`]).
    pub hdr: Vec<HeaderRow>,
    /// The sub-queue of each row (`queue::SUBQUEUES`), kept only when some hop's discipline
    /// has sub-queues ([`Recorder::keep_subqueues`]).
    pub subq: Option<Vec<u8>>,
}

/// What a capture of a packet shows beyond the row's other columns (`aqmlab export pcap` writes
/// its headers from them): the packet's `seq`, `ack`, `payload` and `tcp_flags`, and its ECN
/// codepoint as it left the hop (`Ecn as u8`). Kept as one record per row, so that recording a
/// row pushes once for the five (a capacity check each cost 2 % of a `packets`-level run);
/// `Recorded::tables` splits them into the table's columns.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeaderRow {
    pub seq: u64,
    pub ack: u64,
    pub payload: u32,
    pub tcp_flags: u16,
    pub ecn: u8,
}

#[derive(Default)]
pub struct QueueColumns {
    pub t: Vec<Time>,
    pub dir: Vec<u8>,
    pub hop: Vec<u8>,
    pub backlog_bytes: Vec<u64>,
    pub backlog_pkts: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
    pub rate_bps: Vec<u64>,
}

/// A nullable column as recorded: `leading` nulls, which take no room, then from the first value
/// on each row's value (the type's default where null) and whether it is valid, Arrow's layout.
/// So a column that no flow has a value for (the bandwidth estimate of a run without BBR) costs
/// nothing, and the export of one that begins with a value takes the values over without a copy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Nullable<T> {
    leading: usize,
    values: Vec<T>,
    valid: Vec<bool>,
}

impl<T: Copy + Default> Nullable<T> {
    pub fn push(&mut self, v: Option<T>) {
        if v.is_none() && self.values.is_empty() {
            self.leading += 1;
        } else {
            self.values.push(v.unwrap_or_default());
            self.valid.push(v.is_some());
        }
    }

    /// Row `i`'s value, None where null.
    pub fn get(&self, i: usize) -> Option<T> {
        let k = i.checked_sub(self.leading)?;
        self.valid[k].then(|| self.values[k])
    }

    pub fn iter(&self) -> impl Iterator<Item = Option<T>> + '_ {
        let rows = self.values.iter().zip(&self.valid);
        std::iter::repeat_n(None, self.leading).chain(rows.map(|(&v, &ok)| ok.then_some(v)))
    }

    /// Every row's value and validity.
    pub fn into_rows(self) -> (Vec<T>, Vec<bool>) {
        if self.leading == 0 {
            return (self.values, self.valid);
        }
        let mut values = vec![T::default(); self.leading];
        values.extend(self.values);
        let mut valid = vec![false; self.leading];
        valid.extend(self.valid);
        (values, valid)
    }
}

impl<T: Copy + Default> FromIterator<Option<T>> for Nullable<T> {
    fn from_iter<I: IntoIterator<Item = Option<T>>>(rows: I) -> Nullable<T> {
        let mut n = Nullable::default();
        for v in rows {
            n.push(v);
        }
        n
    }
}

#[derive(Default)]
pub struct FlowSeriesColumns {
    pub t: Vec<Time>,
    pub flow: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub sent_bytes: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    pub srtt: Vec<Time>,
    /// The congestion controller's state ([`CcReport`], field by field).
    pub ssthresh: Nullable<u64>,
    pub cc_alpha: Nullable<f64>,
    pub cc_bw_bps: Nullable<u64>,
    pub cc_min_rtt: Nullable<Time>,
    pub cc_pacing_gain: Nullable<f64>,
    pub cc_state: Nullable<u8>,
    pub cc_w_max: Nullable<u64>,
}

impl FlowSeriesColumns {
    /// The row of flow `flow` at `t`.
    pub fn push(&mut self, t: Time, flow: u32, r: &FlowReport, c: &CcReport) {
        self.t.push(t);
        self.flow.push(flow);
        self.delivered_bytes.push(r.bytes_delivered);
        self.sent_bytes.push(r.bytes_sent);
        self.cwnd_bytes.push(r.cwnd_bytes);
        self.srtt.push(r.srtt.unwrap_or(0));
        self.ssthresh.push(c.ssthresh);
        self.cc_alpha.push(c.alpha);
        self.cc_bw_bps.push(c.bw_bps);
        self.cc_min_rtt.push(c.min_rtt);
        self.cc_pacing_gain.push(c.pacing_gain);
        self.cc_state.push(c.phase.map(|p| p as u8));
        self.cc_w_max.push(c.w_max);
    }
}

/// Sub-bins per power of two of the sojourn histogram: a bin is at most 1/64 of its lower
/// bound wide, so its midpoint is within 1/128 of any value in it.
const SUB_BINS: u64 = 64;
const SUB_SHIFT: u32 = SUB_BINS.trailing_zeros();

/// The sojourn histogram's bin of `v` ns: exact below 64 ns, then 64 bins per power of two
/// (the log-linear layout of HdrHistogram).
#[inline]
pub fn sojourn_bin(v: Time) -> usize {
    if v < SUB_BINS {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let sub = (v >> (e - SUB_SHIFT)) - SUB_BINS;
    (SUB_BINS + (e - SUB_SHIFT) as u64 * SUB_BINS + sub) as usize
}

/// The values [lo, hi) of bin `b` of the sojourn histogram.
pub fn sojourn_bin_range(b: usize) -> (Time, Time) {
    let b = b as u64;
    if b < SUB_BINS {
        return (b, b + 1);
    }
    let k = (b - SUB_BINS) / SUB_BINS;
    let sub = (b - SUB_BINS) % SUB_BINS;
    ((SUB_BINS + sub) << k, (SUB_BINS + sub + 1) << k)
}

/// Bins allocated at once for a (hop, second): sojourns up to 2^30 ns (1.07 s); longer ones
/// grow the bins when they occur.
const BINS_AT_ONCE: usize = SUB_BINS as usize * (31 - SUB_SHIFT as usize);

/// One hop's sojourns of one second of enqueue time.
#[derive(Clone, Default)]
pub struct SecondHist {
    pub counts: Vec<u32>,
    pub packets: u64,
    /// Sum of the sojourns, ns (exact).
    pub sum: u64,
    pub max: Time,
}

/// Sojourn times of transmitted packets per hop and per second of their enqueue time: a
/// histogram (`sojourn_bin`) with each (hop, second)'s exact count, sum and maximum. Kept at
/// the `series` level (the `packets` level has every sojourn exactly), so queueing-delay
/// percentiles, mean and maximum after a warm-up of whole seconds need no per-packet table.
#[derive(Default)]
pub struct SojournHist {
    /// [hop][second].
    pub hops: Vec<Vec<SecondHist>>,
}

impl SojournHist {
    #[inline]
    fn add(&mut self, hop: u8, enqueued: Time, sojourn: Time) {
        let sec = (enqueued / crate::units::SEC) as usize;
        let b = sojourn_bin(sojourn);
        match self.hops.get_mut(hop as usize).and_then(|h| h.get_mut(sec)) {
            Some(s) if b < s.counts.len() => {
                s.counts[b] += 1;
                s.packets += 1;
                s.sum += sojourn;
                s.max = s.max.max(sojourn);
            }
            _ => self.add_growing(hop as usize, sec, b, sojourn),
        }
    }

    /// `add` for a hop, second or bin not allocated yet.
    #[cold]
    #[inline(never)]
    fn add_growing(&mut self, hop: usize, sec: usize, b: usize, sojourn: Time) {
        if self.hops.len() <= hop {
            self.hops.resize_with(hop + 1, Vec::new);
        }
        let secs = &mut self.hops[hop];
        if secs.len() <= sec {
            secs.resize_with(sec + 1, SecondHist::default);
        }
        let s = &mut secs[sec];
        s.counts.resize(s.counts.len().max(BINS_AT_ONCE).max(b + 1), 0);
        s.counts[b] += 1;
        s.packets += 1;
        s.sum += sojourn;
        s.max = s.max.max(sojourn);
    }
}

pub struct Recorder {
    pub level: Level,
    pub interval: Time,
    pub packets: PacketColumns,
    pub queue: QueueColumns,
    pub flow_series: FlowSeriesColumns,
    pub sojourn: SojournHist,
}

impl Recorder {
    pub fn new(level: Level, interval: Time) -> Recorder {
        Recorder {
            level,
            interval,
            packets: PacketColumns::default(),
            queue: QueueColumns::default(),
            flow_series: FlowSeriesColumns::default(),
            sojourn: SojournHist::default(),
        }
    }

    /// One row of the `packets` table: packet `pkt` left hop `hop` (direction `dir`) at
    /// `t_out` with `outcome`.
    #[inline]
    pub fn packet(&mut self, pkt: &Packet, dir: Dir, hop: u8, t_out: Time, outcome: u8) {
        match self.level {
            Level::Summary => {}
            Level::Series => {
                if outcome <= OUTCOME_MARKED {
                    self.sojourn.add(hop, pkt.enqueued_at, t_out - pkt.enqueued_at);
                }
            }
            Level::Packets => self.packet_row(pkt, dir, hop, t_out, outcome),
        }
    }

    /// A row of the packets table.
    fn packet_row(&mut self, pkt: &Packet, dir: Dir, hop: u8, t_out: Time, outcome: u8) {
        let p = &mut self.packets;
        p.dir.push(dir as u8);
        p.hop.push(hop);
        p.flow.push(pkt.flow);
        p.size.push(pkt.size);
        p.t_enqueue.push(pkt.enqueued_at);
        p.t_out.push(t_out);
        p.outcome.push(outcome);
        p.hdr.push(HeaderRow {
            seq: pkt.seq,
            ack: pkt.ack,
            payload: pkt.payload,
            tcp_flags: pkt.tcp_flags,
            ecn: pkt.ecn as u8,
        });
        if let Some(s) = &mut p.subq {
            s.push(pkt.subq);
        }
    }

    /// Records each packet row's sub-queue (a hop's discipline has sub-queues).
    pub fn keep_subqueues(&mut self) {
        self.packets.subq.get_or_insert_with(Vec::new);
    }

    pub fn series_enabled(&self) -> bool {
        self.level >= Level::Series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn sojourn_bins_are_exact_then_log_linear() {
        // Exact below 64 ns; from 64 on, 64 bins per power of two (HdrHistogram's layout with
        // two significant binary digits beyond the sixth).
        for v in 0..64 {
            assert_eq!(sojourn_bin_range(sojourn_bin(v)), (v, v + 1));
        }
        assert_eq!(sojourn_bin_range(sojourn_bin(64)), (64, 65));
        assert_eq!(sojourn_bin_range(sojourn_bin(127)), (127, 128));
        assert_eq!(sojourn_bin_range(sojourn_bin(129)), (128, 130));
        assert_eq!(sojourn_bin_range(sojourn_bin(5_000_000)), (4_980_736, 5_046_272));
        let mut rng = Rng::from_seed(7);
        let mut last = 0;
        for _ in 0..100_000 {
            let bits = rng.below(40) + 1;
            let v = rng.below(1 << bits);
            let (lo, hi) = sojourn_bin_range(sojourn_bin(v));
            assert!(lo <= v && v < hi, "{v} in [{lo}, {hi})");
            // every bin is at most 1/64 of its lower bound wide
            assert!(lo < 64 || (hi - lo) * 64 <= lo);
            last = last.max(sojourn_bin(v));
        }
        // bins are contiguous: each one ends where the next begins
        for b in 0..last {
            assert_eq!(sojourn_bin_range(b).1, sojourn_bin_range(b + 1).0);
        }
    }
}
