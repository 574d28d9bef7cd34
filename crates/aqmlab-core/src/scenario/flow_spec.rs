//! The scenario's `[[flows]]` entries as serde reads them: [`FlowSpec`] (the keys every kind
//! takes, its kind's own kept as a table for `flow.rs`), when a flow starts, how many an entry
//! stands for, and its DSCP.

use super::kind::FlowKind;
use super::topology::DirSpec;
use crate::units::{Dur, NicRate, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// When a flow (group) starts: a fixed time, or an offset drawn per run seed, once for the
/// whole `[[flows]]` entry (`per = "group"`, the default: its flows start together) or once per
/// flow (`per = "flow"`: staggered starts), or the entry's flows spread evenly over a range
/// without a draw (`spread`, `StartSpec::spread_at`).
#[derive(Clone, Debug, PartialEq)]
pub enum StartSpec {
    At(Time),
    Uniform(Time, Time, StartPer),
    Spread(Time, Time),
}

impl StartSpec {
    /// `spread = [lo, hi]`: flow `k` (from 0) of the entry's `n` flows starts at
    /// lo + floor(k (hi - lo) / n) ns, so the first at lo, the starts 1/n of the range apart and
    /// every one before hi (at lo when hi = lo).
    pub fn spread_at(lo: Time, hi: Time, k: u32, n: u32) -> Time {
        lo + (u128::from(hi - lo) * u128::from(k) / u128::from(n)) as Time
    }

    /// The earliest start of the entry's flows.
    pub fn first(&self) -> Time {
        match *self {
            StartSpec::At(t) | StartSpec::Uniform(t, _, _) | StartSpec::Spread(t, _) => t,
        }
    }

    /// The latest start any of the entry's `n` flows can have.
    pub fn latest(&self, n: u32) -> Time {
        match *self {
            StartSpec::At(t) | StartSpec::Uniform(_, t, _) => t,
            StartSpec::Spread(lo, hi) => StartSpec::spread_at(lo, hi, n - 1, n),
        }
    }
}

/// What one uniform start draw covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartPer {
    Group,
    Flow,
}

impl StartPer {
    pub fn name(self) -> &'static str {
        match self {
            StartPer::Group => "group",
            StartPer::Flow => "flow",
        }
    }
}

/// A Differentiated Services code point: 0 to 63, or a name (RFC 2474 CS0-CS7 = 8 x n; RFC 2597
/// AFxy = 8 x + 2 y; RFC 3246 EF = 46; RFC 8622 LE = 1; RFC 5865 VA = 44; BE = 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dscp(pub u8);

/// How many flows one `[[flows]]` entry stands for: 1 to [`FlowCount::MAX`], checked as it is
/// read so that a wrong value (negative, fractional, zero, too many) is named with this range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct FlowCount(pub u32);

impl FlowCount {
    /// Flows per entry; every flow is its own endpoints and series.
    pub const MAX: u32 = 100_000;

    fn allowed() -> String {
        format!("an integer from 1 to {}", Self::MAX)
    }
}

impl<'de> Deserialize<'de> for FlowCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        match v.as_i64() {
            Some(c) if (1..=Self::MAX as i64).contains(&c) => Ok(FlowCount(c as u32)),
            Some(c) => Err(D::Error::custom(format!(
                "{c} is out of range; allowed: {}",
                Self::allowed()
            ))),
            None => Err(D::Error::custom(format!(
                "{v} is not allowed; allowed: {}",
                Self::allowed()
            ))),
        }
    }
}

impl JsonSchema for FlowCount {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FlowCount".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": Self::MAX})
    }
}

/// One `[[flows]]` entry: the keys every kind takes, and its kind's own. Keys that do not belong
/// to the entry's kind are rejected by `validate`; `resolve` writes out every default of the kind.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct FlowSpec {
    pub kind: FlowKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<DirSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<FlowCount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// This flow's base RTT (defaults to the topology's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Dur>,
    /// Heterogeneous RTTs (lpcc2013 3d): each flow of the entry draws its base RTT uniformly
    /// from [rtt - rtt_spread, rtt + rtt_spread] (mean `rtt`), from the run's seed (stream
    /// `rtt/<entry>`), so the draws differ per flow and per seed. Must be below `rtt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_spread: Option<Dur>,
    /// The NIC rate of this flow's two hosts (defaults to the topology's `nic_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_rate: Option<NicRate>,
    /// The timing noise of this flow's two hosts (defaults to the topology's `host_jitter`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_jitter: Option<Dur>,
    /// The DSCP of the flow's packets, both directions (default 0, best effort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp: Option<Dscp>,
    /// The hops this flow's packets cross, by name (default: every hop of both chains). In each
    /// direction the named hops are a contiguous part of that direction's chain, where the flow
    /// enters and leaves the path; a direction none of them belongs to is crossed whole (e.g.
    /// cross traffic on the bottleneck only, with its ACKs on the whole reverse chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<Vec<String>>,
    /// The WiFi station the flow's client is (`topology.wifi.stations`; default the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub station: Option<String>,
    /// The client host the flow's client is: one of `topology.hops[].hosts` where a hop has one
    /// link per host (default the first), else any name (flows naming the same one share a host;
    /// default the first named). Host-isolating disciplines (CAKE) tell hosts apart by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The server host the flow's server is: any name (flows naming the same one share a
    /// server); default the one server of every flow that names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// The kind's own keys as written (`flow::FlowKind::groups`; resolved: every one written
    /// out, `flow::FlowModel::written`).
    #[serde(flatten)]
    pub keys: serde_json::Map<String, Value>,
}
