//! Bounds before allocation: what a run will hold, estimated from the scenario alone and refused
//! before anything runs when above `record.max_rows` (the `packets` table) or
//! `record.max_memory` (everything): recorded rows, and the packets alive at once in the
//! hosts' pipes, the hops' delay lines and queues. Each refusal names the key that contributes
//! most, so the user knows what to change.

use super::err;
use crate::record::Level;
use crate::scenario::{flow::FlowModels, FlowModel, HopRef, Scenario};
use crate::units::{fmt_time, SEC};

/// Memory per `packets` row once loaded in Python (measured through Arrow and the metrics).
const PACKET_ROW_BYTES: f64 = 200.0;
/// Memory per `queue` or `flow_series` row through the run, its Arrow export and the store
/// (measured: 10.4 million rows, 50 flows for 200 s at 1 ms, took 1.35 GB more than the same
/// run at `summary`).
const SERIES_ROW_BYTES: f64 = 150.0;
/// Memory per packet alive at once: its 128-byte slot in the packet slab, its entry in a pipe
/// or queue, each vector up to twice its length after growing (measured: 1.5 million packets
/// held in a 10 Gb/s UDP flow's access pipe took 515 MB).
const HELD_PACKET_BYTES: f64 = 350.0;

/// One contribution to the estimate, with the key that sets it.
struct Part {
    key: String,
    what: String,
    bytes: f64,
}

/// The highest rate hop `h` can carry: its rate schedule's peak, a trace's mean rate, a WiFi
/// hop's fastest station.
pub(super) fn peak_rate(sc: &Scenario, h: &HopRef) -> u64 {
    if let Some(r) = &h.spec.rate {
        return r.0.iter().map(|&(_, r)| r).max().unwrap_or(0);
    }
    if let Some(t) = &h.spec.trace {
        return crate::net::trace::Trace::new(&t.ms).mean_rate();
    }
    sc.topology.wifi.as_ref().map_or(0, |w| {
        w.stations
            .iter()
            .map(|s| w.phy(s.mcs).rate_bps())
            .max()
            .unwrap_or(0)
    })
}

impl Scenario {
    /// The recording level: `record.level`, or when it is not given, `packets` if that table
    /// fits `record.max_rows` and `series` if not (a long run over fast hops is recorded, not
    /// refused).
    pub fn record_level(&self) -> Level {
        self.record
            .level
            .unwrap_or(if self.packet_rows() <= self.record.max_rows as f64 {
                Level::Packets
            } else {
                Level::Series
            })
    }

    /// The `packets` table: every hop transmits at most its peak rate in full-size packets, so
    /// it holds about sum(peak rate x duration / (8 MTU)) rows (more with smaller packets).
    /// Refused above `record.max_rows`, which the user can raise.
    pub(super) fn validate_table_size(&self) -> Result<(), String> {
        if self.record_level() != Level::Packets {
            return Ok(());
        }
        let rows = self.packet_rows();
        if rows > self.record.max_rows as f64 {
            return err(
                "record.level",
                format!(
                    "\"packets\" would record about {:.1} million packet rows (every hop at its peak rate \
                     in {} B packets for {}), about {:.1} GB once loaded; allowed: at most \
                     record.max_rows = {} rows (raise it, shorten the run, or record.level = \"series\")",
                    rows / 1e6,
                    self.topology.mtu.0,
                    fmt_time(self.duration.0),
                    rows * PACKET_ROW_BYTES / 1e9,
                    self.record.max_rows
                ),
            );
        }
        Ok(())
    }

    fn packet_rows(&self) -> f64 {
        let secs = self.duration.0 as f64 / SEC as f64;
        let hops = self.topology.hops();
        let bits: f64 = hops.iter().map(|h| peak_rate(self, h) as f64 * secs).sum();
        bits / (8.0 * self.topology.mtu.0 as f64)
    }

    /// The longest a packet can take end to end: the longest base RTT of any flow and every
    /// hop's largest delay (an upper bound: a packet crosses the hops of one direction).
    fn longest_path_s(&self) -> f64 {
        let rtt = self
            .flows
            .iter()
            .filter_map(|f| f.rtt)
            .map(|r| r.0)
            .chain([self.topology.rtt.0])
            .max()
            .unwrap_or(0);
        let hops = self.topology.hops();
        let delays: u64 = hops
            .iter()
            .filter_map(|h| h.spec.delay.as_ref())
            .map(|d| d.0.iter().map(|s| s.1).max().unwrap_or(0))
            .sum();
        (rtt + delays) as f64 / SEC as f64
    }

    /// What the run will hold at its largest, by contribution: recorded rows, the packets a
    /// direction's fastest hop keeps in flight over the longest path, and what each UDP flow
    /// puts on its way faster than the path drains it.
    fn memory_parts(&self, models: &mut FlowModels) -> Vec<Part> {
        let secs = self.duration.0 as f64 / SEC as f64;
        let path_s = self.longest_path_s().min(secs);
        let mtu_bits = 8.0 * self.topology.mtu.0 as f64;
        let mut parts = Vec::new();
        let level = self.record_level();
        if level == Level::Packets {
            parts.push(Part {
                key: "record.level".into(),
                what: "the packets table".into(),
                bytes: self.packet_rows() * PACKET_ROW_BYTES,
            });
        }
        if level >= Level::Series {
            let flows: u64 = self.flows.iter().map(|f| f.count.map_or(1, |c| c.0) as u64).sum();
            let series = (self.topology.hops().len() as u64 + flows) as f64;
            let samples = self.duration.0 as f64 / self.record.interval.0 as f64;
            parts.push(Part {
                key: "record.interval".into(),
                what: format!(
                    "{} queue and flow_series rows ({} series every {})",
                    fmt_count(series * samples),
                    series,
                    fmt_time(self.record.interval.0)
                ),
                bytes: series * samples * SERIES_ROW_BYTES,
            });
        }
        for h in self.topology.hops() {
            let pkts = peak_rate(self, &h) as f64 * path_s / mtu_bits;
            parts.push(Part {
                key: format!("{}.rate", h.key),
                what: format!(
                    "{} packets in flight at hop {:?}'s peak rate over {}",
                    fmt_count(pkts),
                    h.name,
                    fmt_time((path_s * SEC as f64) as u64)
                ),
                bytes: pkts * HELD_PACKET_BYTES,
            });
        }
        for (i, f) in self.flows.iter().enumerate() {
            let Ok(FlowModel::Udp(u)) = models.read(f, self.duration.0) else {
                continue;
            };
            let rate = u.rate.map_or(0, |r| r.0) as f64;
            let count = f.count.map_or(1, |c| c.0) as f64;
            let pkts = count * rate * path_s / (8.0 * u.packet_size.0 as f64);
            parts.push(Part {
                key: format!("flows[{i}].rate"),
                what: format!("{} of its packets on their way at once", fmt_count(pkts)),
                bytes: pkts * HELD_PACKET_BYTES,
            });
        }
        parts
    }

    /// The whole estimate against `record.max_memory`; the refusal names the largest part's key.
    pub(super) fn validate_memory(&self, models: &mut FlowModels) -> Result<(), String> {
        let parts = self.memory_parts(models);
        let total: f64 = parts.iter().map(|p| p.bytes).sum();
        let limit = self.record.max_memory.0 as f64;
        if total <= limit {
            return Ok(());
        }
        let top = parts
            .iter()
            .max_by(|a, b| a.bytes.total_cmp(&b.bytes))
            .expect("a total above the limit has parts");
        err(
            &top.key,
            format!(
                "the run would need about {} of memory, {} of it for {}; allowed: at most \
                 record.max_memory = {} (raise it, or lower this key, the duration or the recording)",
                fmt_bytes(total),
                fmt_bytes(top.bytes),
                top.what,
                fmt_bytes(limit)
            ),
        )
    }
}

/// A count as people read it: "2.1 billion", "41.7 thousand", "812".
fn fmt_count(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.1} billion", n / 1e9),
        n if n >= 1e6 => format!("{:.1} million", n / 1e6),
        n if n >= 1e3 => format!("{:.1} thousand", n / 1e3),
        n => format!("{n:.0}"),
    }
}

/// Bytes in decimal units: "1.5 GB", "820.0 MB".
fn fmt_bytes(b: f64) -> String {
    match b {
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b => format!("{:.1} MB", b / 1e6),
    }
}
