//! A flow entry's keys read into the model the builder runs. The entry keeps the common keys
//! ([`FlowSpec`]) and its kind's keys as written; each kind's groups of keys are declared once
//! in kind.rs (typed structs read with `params::read` as the disciplines' are, re-exported
//! here); [`FlowModel`] is the typed form the builder runs, and written back it is the entry's
//! resolved keys.

use super::flow_spec::{FlowSpec, StartSpec};
pub use super::kind::{Connections, FlowKind, Http, Page, Probe, Transfer, Udp, Web};
use crate::params::read;
use crate::transport::tcp::{read_config, TcpConfig};
use crate::units::{Dur, Time};
use serde::Serialize;
use serde_json::{Map, Value};
use std::cell::OnceCell;
use std::collections::HashMap;

/// What a flow's defaults depend on besides its keys.
pub struct FlowCtx {
    /// The flow's earliest start and its stop (the scenario's end if sooner).
    pub first_start: Time,
    pub stop: Time,
}

impl FlowCtx {
    /// The context of entry `f` in a scenario that ends at `end`.
    pub fn of(f: &FlowSpec, end: Time) -> FlowCtx {
        FlowCtx {
            first_start: f.start.as_ref().map_or(0, StartSpec::first),
            stop: f.stop.map_or(end, |s| s.0.min(end)),
        }
    }
}

impl Page {
    /// The timeout left out: the flow's length in `ctx` (at least 1 ns).
    fn in_ctx(&mut self, ctx: &FlowCtx) {
        self.timeout
            .get_or_insert(Dur(ctx.stop.saturating_sub(ctx.first_start).max(1)));
    }
}

/// A flow entry's kind with its keys read: what the builder runs.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowModel {
    Tcp {
        transfer: Transfer,
        tcp: TcpConfig,
    },
    Udp(Udp),
    Ping(Probe),
    Voip(Probe),
    Web {
        web: Web,
        conn: Connections,
        tcp: TcpConfig,
    },
    Webpage {
        page: Page,
        conn: Connections,
        tcp: TcpConfig,
    },
}

/// A probe's keys: `interval` belongs to `pattern = "interval"` and `timeout` to "rr"; an entry
/// that gives one with the other pattern is refused rather than silently ignored.
fn read_probe(f: &FlowSpec) -> Result<Probe, String> {
    let p: Probe = read(&Value::Object(f.keys.clone()), Probe::defaults(f.kind), &())?;
    let unused = p.unused_key();
    if f.keys.contains_key(unused) {
        let pattern = if unused == "timeout" { "interval" } else { "rr" };
        return Err(format!(
            "{unused}: not used with pattern = \"{pattern}\"; allowed: interval with \"interval\", timeout with \"rr\""
        ));
    }
    Ok(p)
}

impl FlowModel {
    /// Reads the keys of entry `f`, save the defaults that depend on the flow's context; an
    /// error names the key (relative to the entry).
    fn read_keys(f: &FlowSpec) -> Result<FlowModel, String> {
        let t = Value::Object(f.keys.clone());
        Ok(match f.kind {
            FlowKind::Tcp => FlowModel::Tcp {
                transfer: read(&t, Transfer::default(), &())?,
                tcp: read_config(&t)?,
            },
            FlowKind::Udp => FlowModel::Udp(read(&t, Udp::default(), &())?),
            FlowKind::Ping => FlowModel::Ping(read_probe(f)?),
            FlowKind::Voip => FlowModel::Voip(read_probe(f)?),
            FlowKind::Web => FlowModel::Web {
                web: read(
                    &t,
                    Web {
                        conn_rate: None,
                        http: Http::V1_1,
                    },
                    &(),
                )?,
                conn: read(&t, Connections::defaults(), &())?,
                tcp: read_config(&t)?,
            },
            FlowKind::Webpage => FlowModel::Webpage {
                page: read(&t, Page::default(), &())?,
                conn: read(&t, Connections::defaults(), &())?,
                tcp: read_config(&t)?,
            },
        })
    }

    /// The model with the defaults that depend on the flow's context filled in.
    fn in_ctx(mut self, ctx: &FlowCtx) -> FlowModel {
        if let FlowModel::Webpage { page, .. } = &mut self {
            page.in_ctx(ctx);
        }
        self
    }

    /// The TCP model of a flow over TCP.
    pub fn tcp(&self) -> Option<&TcpConfig> {
        match self {
            FlowModel::Tcp { tcp, .. } | FlowModel::Web { tcp, .. } | FlowModel::Webpage { tcp, .. } => {
                Some(tcp)
            }
            FlowModel::Udp(_) | FlowModel::Ping(_) | FlowModel::Voip(_) => None,
        }
    }

    /// The TCP model of a flow over TCP, to change.
    pub fn tcp_mut(&mut self) -> Option<&mut TcpConfig> {
        match self {
            FlowModel::Tcp { tcp, .. } | FlowModel::Web { tcp, .. } | FlowModel::Webpage { tcp, .. } => {
                Some(tcp)
            }
            FlowModel::Udp(_) | FlowModel::Ping(_) | FlowModel::Voip(_) => None,
        }
    }

    /// Every key of the model written out: the entry's resolved kind keys.
    pub fn written(&self) -> Map<String, Value> {
        let groups: Vec<Value> = match self {
            FlowModel::Tcp { transfer, tcp } => vec![json(transfer), json(tcp)],
            FlowModel::Udp(u) => vec![json(u)],
            FlowModel::Ping(p) | FlowModel::Voip(p) => {
                let mut keys = json(p);
                if let Value::Object(m) = &mut keys {
                    m.remove(p.unused_key());
                }
                vec![keys]
            }
            FlowModel::Web { web, conn, tcp } => vec![json(web), json(conn), json(tcp)],
            FlowModel::Webpage { page, conn, tcp } => vec![json(page), json(conn), json(tcp)],
        };
        groups
            .into_iter()
            .flat_map(|g| match g {
                Value::Object(m) => m,
                _ => unreachable!("a group serialises to a table"),
            })
            .collect()
    }
}

impl Connections {
    fn defaults() -> Connections {
        Connections {
            persistent: true,
            piggyback: true,
            hash_connections: true,
        }
    }
}

fn json<T: Serialize>(x: &T) -> Value {
    serde_json::to_value(x).expect("flow keys serialise")
}

/// Flow entries' models, each distinct kind and key table read once (a scenario's entries often
/// share theirs: thousands of flows that differ in their start only).
#[derive(Default)]
pub struct FlowModels(HashMap<(FlowKind, String), Read>);

/// One distinct key table: its model before the context, and that model's keys written out.
struct Read {
    model: Result<FlowModel, String>,
    written: OnceCell<Map<String, Value>>,
}

impl FlowModels {
    /// The model of entry `f` in a scenario that ends at `end`; an error names the key
    /// (relative to the entry).
    pub fn read(&mut self, f: &FlowSpec, end: Time) -> Result<FlowModel, String> {
        Ok(self.of(f).model.clone()?.in_ctx(&FlowCtx::of(f, end)))
    }

    /// [`FlowModels::read`] and the model's keys written out (the entry's resolved keys).
    pub fn resolve(&mut self, f: &FlowSpec, end: Time) -> Result<(FlowModel, Map<String, Value>), String> {
        let read = self.of(f);
        let base = read.model.as_ref().map_err(Clone::clone)?;
        let model = base.clone().in_ctx(&FlowCtx::of(f, end));
        let written = if model == *base {
            read.written.get_or_init(|| base.written()).clone()
        } else {
            model.written()
        };
        Ok((model, written))
    }

    fn of(&mut self, f: &FlowSpec) -> &Read {
        let keys = serde_json::to_string(&f.keys).expect("flow keys serialise");
        self.0.entry((f.kind, keys)).or_insert_with(|| Read {
            model: FlowModel::read_keys(f),
            written: OnceCell::new(),
        })
    }
}

/// The common keys of a flow entry (every kind's), from [`FlowSpec`]'s declaration.
pub fn common_keys() -> &'static [String] {
    static KEYS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        let schema = serde_json::to_value(schemars::schema_for!(FlowSpec)).expect("schemas serialise");
        schema["properties"]
            .as_object()
            .map_or(Vec::new(), |m| m.keys().cloned().collect())
    });
    &KEYS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::keys;
    use crate::units::SEC;

    #[test]
    fn the_groups_keys_are_their_fields() {
        assert_eq!(
            keys::<Probe>(),
            &["interval", "packet_size", "pattern", "timeout"]
        );
        assert!(FlowKind::Web.keys().contains(&"conn_rate"));
        assert!(FlowKind::Web.keys().contains(&"rto_tick"));
        assert!(!FlowKind::Udp.keys().contains(&"rto_tick"));
    }

    fn entry(json: &str) -> FlowSpec {
        serde_json::from_str(json).expect("a flow entry")
    }

    #[test]
    fn entries_that_share_their_keys_keep_their_own_context() {
        // Flent's http-getter timeout: the flow's length, from its start to its stop.
        let mut models = FlowModels::default();
        let end = 10 * SEC;
        let timeout = |m: FlowModel| match m {
            FlowModel::Webpage { page, .. } => page.timeout,
            other => panic!("not a webpage flow: {other:?}"),
        };
        let early = entry(r#"{"kind": "webpage", "start": "1s", "workers": 2}"#);
        let late = entry(r#"{"kind": "webpage", "start": "4s", "stop": "6s", "workers": 2}"#);
        assert_eq!(timeout(models.read(&early, end).unwrap()), Some(Dur(9 * SEC)));
        assert_eq!(timeout(models.read(&late, end).unwrap()), Some(Dur(2 * SEC)));
        let given = entry(r#"{"kind": "webpage", "start": "4s", "workers": 2, "timeout": "3s"}"#);
        assert_eq!(timeout(models.read(&given, end).unwrap()), Some(Dur(3 * SEC)));
    }

    #[test]
    fn resolved_keys_read_back_give_the_same_model() {
        let mut models = FlowModels::default();
        let end = 10 * SEC;
        for json in [
            r#"{"kind": "tcp", "cc": "cubic", "start": "2s"}"#,
            r#"{"kind": "tcp", "profile": "linux", "bytes": "1MB", "sack": false}"#,
            r#"{"kind": "tcp", "cc": "tcp_lp"}"#,
            r#"{"kind": "udp", "rate": "1Mbps", "arrivals": "poisson"}"#,
            r#"{"kind": "ping"}"#,
            r#"{"kind": "voip", "interval": "20ms"}"#,
            r#"{"kind": "ping", "pattern": "rr", "timeout": "1s"}"#,
            r#"{"kind": "web", "conn_rate": 2}"#,
            r#"{"kind": "webpage", "start": "3s", "stop": "7s"}"#,
        ] {
            let f = entry(json);
            let (model, written) = models.resolve(&f, end).unwrap();
            assert_eq!(model, models.read(&f, end).unwrap(), "{json}");
            let again = FlowSpec { keys: written, ..f };
            assert_eq!(models.read(&again, end).unwrap(), model, "{json}");
        }
    }

    #[test]
    fn an_entry_read_again_is_reported_again() {
        let mut models = FlowModels::default();
        let bad = entry(r#"{"kind": "tcp", "iw": "ten"}"#);
        for _ in 0..2 {
            let e = models.read(&bad, SEC).unwrap_err();
            assert!(e.starts_with("iw: "), "{e}");
        }
        let rr = entry(r#"{"kind": "ping", "pattern": "rr", "interval": "200ms"}"#);
        assert_eq!(
            models.read(&rr, SEC).unwrap_err(),
            "interval: not used with pattern = \"rr\"; allowed: interval with \"interval\", timeout with \"rr\""
        );
        let every = entry(r#"{"kind": "voip", "timeout": "1s"}"#);
        assert!(models
            .read(&every, SEC)
            .unwrap_err()
            .starts_with("timeout: not used with pattern = \"interval\""));
        let zero = entry(r#"{"kind": "webpage", "timeout": "0s"}"#);
        assert_eq!(
            models.read(&zero, SEC).unwrap_err(),
            "timeout: 0s is not allowed; must be positive"
        );
    }
}
