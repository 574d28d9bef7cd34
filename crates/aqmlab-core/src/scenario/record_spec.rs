//! The scenario's `[record]` table as serde reads it: what the run records, and its bounds.

use crate::record::Level;
use crate::units::{Dur, Size, Time, MS};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_interval() -> Dur {
    Dur(100 * MS)
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// `packets` (one row per packet at the bottleneck), `series` (periodic samples and each
    /// hop's sojourn histogram per second, from which the queueing-delay percentiles come within
    /// 1/128) or `summary` (totals and probes only). Default: `packets` when its table fits
    /// `max_rows`, else `series` (`Scenario::record_level`; the resolved scenario says which).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
    /// Sampling interval of the `queue` and `flow_series` tables.
    #[serde(default = "default_interval")]
    pub interval: Dur,
    /// The most `packets` rows a run may record (an estimate is checked before the run).
    #[serde(default = "default_max_rows")]
    pub max_rows: u64,
    /// The most memory a run may need, estimated before it starts from its rates, delays,
    /// duration and recording (`scenario::validate::memory`).
    #[serde(default = "default_max_memory")]
    pub max_memory: Size,
}

/// The shortest `record.interval`: every series holds duration / interval rows per hop and flow,
/// and 1 ms is finer than any AQM control timescale here (CoDel's 5 ms target, PIE's 15 ms
/// update); per-packet timing is in the `packets` table.
pub const RECORD_INTERVAL_MIN: Time = MS;

/// Default `record.max_rows`: 5 million packet rows, about 1 GB once loaded in Python (the
/// measured cost is about 200 bytes per row through Arrow and the metrics).
pub const DEFAULT_MAX_ROWS: u64 = 5_000_000;

fn default_max_rows() -> u64 {
    DEFAULT_MAX_ROWS
}

/// Default `record.max_memory`: 8 GB, half of a 16 GB workstation; a run estimated above it is
/// refused before it starts, naming the key that contributes most.
fn default_max_memory() -> Size {
    Size(8_000_000_000)
}

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec {
            level: None,
            interval: default_interval(),
            max_rows: DEFAULT_MAX_ROWS,
            max_memory: default_max_memory(),
        }
    }
}
