//! A flow entry's kind and the keys it brings, declared once. Each kind's keys are groups, each
//! group a typed struct read with `params::read` as the disciplines' are: its serde
//! fields are the keys (the unknown-key check and `aqmlab schema` list them), its doc comments
//! the help, its defaults the kind's, its `finish` the range checks. A flow entry keeps the
//! common keys ([`super::FlowSpec`]) and its kind's keys as written; [`FlowModel`] is the typed
//! form the builder runs, and written back it is the entry's resolved keys.

use super::{FlowSpec, OnOff, Repeat};
use crate::app::udp::Arrivals;
use crate::app::webpage::PAGES;
use crate::packet::EcnMode;
use crate::params::{read, Group, Params};
use crate::transport::tcp::{read_config, TcpConfig};
use crate::units::{fmt_time, Dur, Rate, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::cell::OnceCell;
use std::collections::HashMap;

/// A flow's kind (`kind`): what its two ends run. It decides the keys the entry accepts beyond
/// the common ones ([`FlowKind::groups`]) and every default `resolve` writes out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    /// One connection's transfer: bulk, finite (`bytes`), repeated or on/off.
    #[default]
    Tcp,
    /// A CBR or Poisson UDP source.
    Udp,
    /// Latency probes (ICMP echo).
    Ping,
    /// An isochronous round-trip stream (irtt): one-way delays, jitter and loss per direction.
    Voip,
    /// PackMime-HTTP exchanges over TCP connections of the same model.
    Web,
    /// Repeated page fetches (Flent's http-getter): a name lookup, the main document, the objects.
    Webpage,
}

impl FlowKind {
    pub const ALL: [FlowKind; 6] = [
        FlowKind::Udp,
        FlowKind::Ping,
        FlowKind::Voip,
        FlowKind::Tcp,
        FlowKind::Web,
        FlowKind::Webpage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FlowKind::Tcp => "tcp",
            FlowKind::Udp => "udp",
            FlowKind::Ping => "ping",
            FlowKind::Voip => "voip",
            FlowKind::Web => "web",
            FlowKind::Webpage => "webpage",
        }
    }

    /// The groups of keys this kind accepts beyond the common ones.
    pub fn groups(self) -> &'static [Group] {
        const TCP: Group = Group::of::<TcpConfig>();
        const CONNECTIONS: Group = Group::of::<Connections>();
        const UDP: &[Group] = &[Group::of::<Udp>()];
        const PROBE: &[Group] = &[Group::of::<Probe>()];
        const TRANSFER: &[Group] = &[Group::of::<Transfer>(), TCP];
        const WEB: &[Group] = &[Group::of::<Web>(), CONNECTIONS, TCP];
        const PAGE: &[Group] = &[Group::of::<Page>(), CONNECTIONS, TCP];
        match self {
            FlowKind::Udp => UDP,
            FlowKind::Ping | FlowKind::Voip => PROBE,
            FlowKind::Tcp => TRANSFER,
            FlowKind::Web => WEB,
            FlowKind::Webpage => PAGE,
        }
    }

    /// The keys this kind accepts beyond the common ones, in declaration order.
    pub fn keys(self) -> Vec<&'static str> {
        self.groups()
            .iter()
            .flat_map(|g| (g.keys)().iter().copied())
            .collect()
    }

    /// Whether the flow is a probe stream echoed by its server end (ping, voip).
    pub fn echoed(self) -> bool {
        matches!(self, FlowKind::Ping | FlowKind::Voip)
    }
}

impl std::fmt::Display for FlowKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
            first_start: f.start.as_ref().map_or(0, super::StartSpec::first),
            stop: f.stop.map_or(end, |s| s.0.min(end)),
        }
    }
}

/// The keys of a `udp` flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Udp {
    /// The sending rate, such as "20Mbps" (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// IP packet size.
    pub packet_size: Size,
    /// Departures: "cbr" (evenly spaced) or "poisson".
    pub arrivals: Arrivals,
    /// ECN codepoint of the packets: "off" (Not-ECT), "classic" (ECT(0)) or "l4s" (ECT(1));
    /// true and false stand for "classic" and "off" ("accecn" is TCP's).
    #[schemars(with = "EcnMode")]
    pub ecn: EcnMode,
}

impl Default for Udp {
    fn default() -> Udp {
        Udp {
            rate: None,
            packet_size: Size(1500),
            arrivals: Arrivals::Cbr,
            ecn: EcnMode::Off,
        }
    }
}

impl Params<()> for Udp {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        if self.ecn == EcnMode::AccEcn {
            return Err(
                "ecn: \"accecn\" is TCP feedback (RFC 9768); allowed for udp: \"off\", \"classic\", \"l4s\""
                    .into(),
            );
        }
        match self.rate {
            None => Err("rate: a udp flow needs a rate such as \"20Mbps\"".into()),
            Some(Rate(0)) => Err("rate: 0bps is not allowed; must be positive".into()),
            _ => Ok(()),
        }
    }
}

/// The keys of a `ping` or `voip` flow: a probe of `packet_size` every `interval`, echoed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Time between probes.
    pub interval: Dur,
    /// IP packet size of a probe.
    pub packet_size: Size,
}

impl Probe {
    /// A ping: 84 B (ICMP echo with 56 B of data, ping's default), every 100 ms. A VoIP stream
    /// as Flent's voip test runs it: irtt's 172 B packets (G.711 at 20 ms: 160 B of audio and
    /// 12 B of RTP header) every 20 ms, 200 B with UDP and IP headers, echoed.
    pub fn defaults(kind: FlowKind) -> Probe {
        let (interval, size) = if kind == FlowKind::Voip {
            (20, 200)
        } else {
            (100, 84)
        };
        Probe {
            interval: Dur(interval * MS),
            packet_size: Size(size),
        }
    }
}

impl Params<()> for Probe {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        positive("interval", self.interval)
    }
}

/// The keys of a `tcp` flow's application: bulk by default, or finite, repeated or on/off.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    /// An on/off source (lpcc2013 3d): the application has unlimited data during on periods
    /// and none during off periods, their lengths drawn per flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_off: Option<OnOff>,
    /// Bytes to transfer (omit for a bulk flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// Repeat the `bytes` transfer after idle gaps (`app::repeat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
}

impl Params<()> for Transfer {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        if let Some(o) = &self.on_off {
            for (k, d) in [("on", o.on.0), ("off", o.off.0)] {
                if d == 0 || d > 3600 * SEC {
                    return Err(format!(
                        "on_off.{k}: {} is out of range; allowed: above 0s up to 3600s",
                        fmt_time(d)
                    ));
                }
            }
        }
        if let Some(r) = &self.repeat {
            if self.bytes.is_none() {
                return Err("repeat: needs bytes, the size of each transfer".into());
            }
            if self.on_off.is_some() {
                return Err("repeat: not allowed together with on_off".into());
            }
            let [lo, hi] = r.idle;
            if hi.0 < lo.0 || hi.0 > 3600 * SEC {
                return Err(format!(
                    "repeat.idle: [{}, {}] is not allowed; allowed: [min, max] with min <= max <= 3600s",
                    fmt_time(lo.0),
                    fmt_time(hi.0)
                ));
            }
        }
        if self.bytes.is_some_and(|b| b.0 == 0) {
            return Err("bytes: must be positive (omit it for a bulk flow)".into());
        }
        Ok(())
    }
}

/// HTTP version of a `web` flow: PackMime's `set-http-1.1` (some connections persistent) or
/// `set-http-1.0` (one exchange per connection).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Http {
    #[serde(rename = "1.1")]
    V1_1,
    #[serde(rename = "1.0")]
    V1_0,
}

/// The keys of a `web` flow (PackMime-HTTP, `app::packmime`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Web {
    /// New connections per second (PackMime's `rate`; required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_rate: Option<f64>,
    /// "1.1" (PackMime's `set-http-1.1`: some connections persistent) or "1.0".
    pub http: Http,
}

impl Params<()> for Web {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        match self.conn_rate {
            None => Err("conn_rate: a web flow needs conn_rate, new connections per second".into()),
            Some(r) if !(r > 0.0 && r <= 10_000.0) => Err(format!(
                "conn_rate: {r} is out of range; allowed above 0 up to 10000 connections per second"
            )),
            _ => Ok(()),
        }
    }
}

/// How a `web` or `webpage` flow uses its TCP connections.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Connections {
    /// Persistent connections carry their exchanges on one TCP connection each way: webpage,
    /// one per worker and fetch, as http-getter's curl handles (false: a new connection per
    /// object); web, as ns-2's PackMime on its FullTcp agents (false: fresh transfers per
    /// exchange).
    pub persistent: bool,
    /// On persistent connections, a delayed ACK pending at an end leaves when that end writes
    /// its next request or response, as FullTcp and Linux send the ACK with the data; false:
    /// only when its timer fires.
    pub piggyback: bool,
    /// Whether a hashing qdisc (fq_codel, sfq, CHOKe, ...) tells the flow's connections apart,
    /// as Linux's classifiers do by hashing each packet's 5-tuple (`skb_get_hash`; every
    /// connection has its own port); false: the whole flow is one 5-tuple.
    pub hash_connections: bool,
}

impl Params<()> for Connections {}

/// The keys of a `webpage` flow (`app::webpage`; Flent's http-getter).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// A built-in page (`app::webpage::PAGES`); default the first, unless `objects` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// The page's object sizes, the main document first (replaces `page`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<Vec<Size>>,
    /// Concurrent object fetches (http-getter's `-n`; Flent runs 4, `HTTP_GETTER_WORKERS`).
    pub workers: u32,
    /// Time between fetch starts (ours: Flent passes its test's own).
    pub interval: Dur,
    /// A fetch not done this long after its start is abandoned (http-getter's `-t`; default the
    /// flow's length, as Flent's `HttpGetterRunner`: from the earliest start to the stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Dur>,
    /// The name lookup's wait for an answer before it asks again, the first time; each later
    /// try waits that times its number (glibc's stub resolver, which curl's threaded resolver
    /// calls: resolv.conf `options timeout:`, RES_TIMEOUT 5 s; res_send.c doubles it per try).
    pub dns_timeout: Dur,
    /// Queries sent for one lookup before it gives up (resolv.conf `options attempts:`,
    /// RES_DFLRETRY 2); a lookup with no answer leaves the fetch waiting for its timeout.
    pub dns_attempts: u32,
}

impl Default for Page {
    fn default() -> Page {
        Page {
            page: None,
            objects: None,
            workers: 4,
            interval: Dur(SEC),
            timeout: None,
            dns_timeout: Dur(5 * SEC),
            dns_attempts: 2,
        }
    }
}

impl Params<()> for Page {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        match (&self.page, &self.objects) {
            (Some(_), Some(_)) => return Err("page: give page or objects, not both".into()),
            (Some(p), None) if !PAGES.iter().any(|q| q.0 == p) => {
                let names: Vec<&str> = PAGES.iter().map(|q| q.0).collect();
                return Err(format!(
                    "page: {p:?} is not a page; allowed: {}",
                    names.join(", ")
                ));
            }
            (None, None) => self.page = Some(PAGES[0].0.into()),
            _ => {}
        }
        if let Some(o) = &self.objects {
            if o.is_empty() || o.len() > 10_000 {
                return Err(format!(
                    "objects: {} objects is out of range; allowed 1 to 10000 sizes",
                    o.len()
                ));
            }
            if let Some((i, s)) = o.iter().enumerate().find(|(_, s)| s.0 == 0 || s.0 > 1 << 32) {
                return Err(format!(
                    "objects[{i}]: {}B is out of range; allowed 1B to 4GiB",
                    s.0
                ));
            }
        }
        if !(1..=1000).contains(&self.workers) {
            return Err(format!(
                "workers: {} is out of range; allowed 1 to 1000",
                self.workers
            ));
        }
        positive("interval", self.interval)?;
        positive("dns_timeout", self.dns_timeout)?;
        if !(1..=5).contains(&self.dns_attempts) {
            return Err(format!(
                "dns_attempts: {} is out of range; allowed 1 to 5 (glibc's RES_MAXRETRY)",
                self.dns_attempts
            ));
        }
        self.timeout.map_or(Ok(()), |t| positive("timeout", t))
    }
}

impl Page {
    /// The timeout left out: the flow's length in `ctx` (at least 1 ns).
    fn in_ctx(&mut self, ctx: &FlowCtx) {
        self.timeout
            .get_or_insert(Dur(ctx.stop.saturating_sub(ctx.first_start).max(1)));
    }
}

fn positive(key: &str, d: Dur) -> Result<(), String> {
    if d.0 == 0 {
        Err(format!("{key}: 0s is not allowed; must be positive"))
    } else {
        Ok(())
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
            FlowKind::Ping => FlowModel::Ping(read(&t, Probe::defaults(f.kind), &())?),
            FlowKind::Voip => FlowModel::Voip(read(&t, Probe::defaults(f.kind), &())?),
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
            FlowModel::Ping(p) | FlowModel::Voip(p) => vec![json(p)],
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

    #[test]
    fn the_groups_keys_are_their_fields() {
        assert_eq!(keys::<Probe>(), &["interval", "packet_size"]);
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
        let zero = entry(r#"{"kind": "webpage", "timeout": "0s"}"#);
        assert_eq!(
            models.read(&zero, SEC).unwrap_err(),
            "timeout: 0s is not allowed; must be positive"
        );
    }
}
