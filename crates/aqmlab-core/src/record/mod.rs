//! What a run records, as column buffers (docs/tables.md gives the contract). The recording level
//! decides the cost: `packets` keeps one row per packet and hop, `series` only the
//! periodic samples, `summary` only the per-flow and per-link totals and the probes.

pub mod tables;

use crate::packet::{Dir, Packet};
use crate::queue::DropReason;
use crate::units::Time;
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

#[derive(Default)]
pub struct FlowSeriesColumns {
    pub t: Vec<Time>,
    pub flow: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub sent_bytes: Vec<u64>,
    pub cwnd_bytes: Vec<u64>,
    pub srtt: Vec<Time>,
}

pub struct Recorder {
    pub level: Level,
    pub interval: Time,
    pub packets: PacketColumns,
    pub queue: QueueColumns,
    pub flow_series: FlowSeriesColumns,
}

impl Recorder {
    pub fn new(level: Level, interval: Time) -> Recorder {
        Recorder {
            level,
            interval,
            packets: PacketColumns::default(),
            queue: QueueColumns::default(),
            flow_series: FlowSeriesColumns::default(),
        }
    }

    /// One row of the `packets` table: packet `pkt` left hop `hop` (direction `dir`) at
    /// `t_out` with `outcome`.
    #[inline]
    pub fn packet(&mut self, pkt: &Packet, dir: Dir, hop: u8, t_out: Time, outcome: u8) {
        if self.level == Level::Packets {
            let p = &mut self.packets;
            p.dir.push(dir as u8);
            p.hop.push(hop);
            p.flow.push(pkt.flow);
            p.size.push(pkt.size);
            p.t_enqueue.push(pkt.enqueued_at);
            p.t_out.push(t_out);
            p.outcome.push(outcome);
        }
    }

    pub fn series_enabled(&self) -> bool {
        self.level >= Level::Series
    }
}
