//! The scenario model's top table: [`Scenario`] (its name, duration, seed, and its tables:
//! `topology.rs`, `flow_spec.rs`, `record_spec.rs`), the checks that involve several of them,
//! and `parse`. A flow entry's kind and its keys are in kind.rs, their reading in flow.rs, the
//! value-by-value checks in validate.rs.

use super::flow_spec::FlowSpec;
use super::record_spec::RecordSpec;
use super::topology::Topology;
use crate::packet::Dir;
use crate::units::Dur;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

fn default_name() -> String {
    "scenario".into()
}

fn default_seed() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The scenario's name (default: its file's name without `.toml`).
    #[serde(default = "default_name")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub duration: Dur,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub topology: Topology,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    #[serde(default)]
    pub record: RecordSpec,
}
impl Scenario {
    /// The hosts of the path's per-host hops (empty: none).
    pub fn hosts(&self) -> &[String] {
        self.topology
            .hops
            .iter()
            .find(|h| !h.hosts.is_empty())
            .map_or(&[], |h| h.hosts.as_slice())
    }

    /// Every client host, numbered by position: the per-host hops' hosts, else the flows'
    /// `host` names in order of first appearance.
    pub fn host_names(&self) -> Vec<&str> {
        if !self.hosts().is_empty() {
            return self.hosts().iter().map(String::as_str).collect();
        }
        self.named(|f| f.host.as_deref())
    }

    /// The flows' `server` names in order of first appearance (server `k` is numbered `k + 1`,
    /// 0 being the default server).
    pub fn server_names(&self) -> Vec<&str> {
        self.named(|f| f.server.as_deref())
    }

    /// The distinct names a key of the flows gives, in order of first appearance.
    fn named<'a>(&'a self, key: impl Fn(&'a FlowSpec) -> Option<&'a str>) -> Vec<&'a str> {
        let mut names: Vec<&str> = Vec::new();
        for h in self.flows.iter().filter_map(key) {
            if !names.contains(&h) {
                names.push(h);
            }
        }
        names
    }

    /// Where a flow enters and leaves each direction's chain: (first, last) positions in
    /// `hops()` order (the up chain first, then the down chain), indexed by `Dir::index`.
    /// Errors (without the key) name the hop and what is allowed.
    pub fn flow_route(&self, f: &FlowSpec) -> Result<[(usize, usize); 2], String> {
        let hops = self.topology.hops();
        let chain = |d: Dir| -> Vec<usize> { (0..hops.len()).filter(|&k| hops[k].dir == d).collect() };
        let mut route = Dir::BOTH.map(|d| {
            let c = chain(d);
            (c[0], c[c.len() - 1])
        });
        let Some(names) = &f.hops else {
            return Ok(route);
        };
        let all: Vec<&str> = hops.iter().map(|h| h.name.as_str()).collect();
        if names.is_empty() {
            return Err(format!(
                "[] is not allowed; allowed: hop names ({})",
                all.join(", ")
            ));
        }
        let mut picked = Vec::new();
        for n in names {
            match all.iter().position(|a| a == n) {
                Some(k) if picked.contains(&k) => return Err(format!("{n:?} is named twice")),
                Some(k) => picked.push(k),
                None => {
                    return Err(format!("{n:?} is not a hop; allowed: {}", all.join(", ")));
                }
            }
        }
        for d in Dir::BOTH {
            let c = chain(d);
            let mut pos: Vec<usize> = picked
                .iter()
                .filter_map(|k| c.iter().position(|x| x == k))
                .collect();
            if pos.is_empty() {
                continue;
            }
            pos.sort_unstable();
            if pos.windows(2).any(|w| w[1] != w[0] + 1) {
                let chain_names: Vec<&str> = c.iter().map(|&k| all[k]).collect();
                return Err(format!(
                    "the {} hops named are not consecutive in that chain ({}); allowed: a contiguous \
                     part of it, where the flow enters and leaves the path",
                    d.name(),
                    chain_names.join(" -> ")
                ));
            }
            route[d.index()] = (c[pos[0]], c[pos[pos.len() - 1]]);
        }
        Ok(route)
    }
}

/// Parses and checks a scenario given as JSON (the Python layer turns TOML into JSON).
pub fn parse(json: &str) -> Result<Scenario, String> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = crate::params::key_path(e.path());
        let msg = e.inner().to_string();
        // The JSON position refers to the text the Python layer generated, not the user's file.
        let msg = msg
            .rfind(" at line ")
            .map_or(msg.as_str(), |i| &msg[..i])
            .to_string();
        let doc: Option<Value> = serde_json::from_str(json).ok();
        let rewritten = doc.and_then(|doc| crate::params::allowed_message::<Scenario>(&doc, e.path(), &msg));
        format!(
            "{path}: {}",
            rewritten.unwrap_or_else(|| crate::params::reword(&msg, None))
        )
    })?;
    sc.validate()?;
    Ok(sc)
}
