//! A flow entry's kind and the groups of keys each kind brings beyond the common ones, declared
//! once (flow.rs reads them into the model the builder runs): each group a typed struct read
//! with `params::read` as the disciplines' are, its serde fields the keys, its doc comments the
//! help, its defaults the kind's, its `finish` the range checks.

use crate::app::ping::Pattern;
use crate::app::udp::Arrivals;
use crate::app::webpage::PAGES;
use crate::packet::EcnMode;
use crate::params::{Group, Params};
use crate::transport::tcp::TcpConfig;
use crate::units::{fmt_time, Dur, Rate, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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

/// On/off periods of a source: means of the on and off lengths, drawn exponentially (the
/// lpcc2013 sensitivity study) or constant.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnOff {
    pub on: Dur,
    pub off: Dur,
    #[serde(default)]
    pub distribution: OnOffDist,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnOffDist {
    #[default]
    Exponential,
    Constant,
}

impl OnOff {
    /// The on periods [start, end) from `start` until `stop`, drawn from `rng`.
    pub fn periods(&self, start: Time, stop: Time, rng: &mut crate::rng::Rng) -> Vec<(Time, Time)> {
        let mut draw = |mean: Time| -> Time {
            match self.distribution {
                OnOffDist::Constant => mean,
                OnOffDist::Exponential => (rng.exponential(mean as f64).round() as Time).max(1),
            }
        };
        let mut out = Vec::new();
        let mut t = start;
        while t < stop {
            let end = t.saturating_add(draw(self.on.0)).min(stop);
            out.push((t, end));
            t = end.saturating_add(draw(self.off.0));
        }
        out
    }
}

/// A finite transfer repeated after idle gaps drawn uniformly from `idle` = [min, max].
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repeat {
    pub idle: [Dur; 2],
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

/// The keys of a `ping` or `voip` flow: a probe of `packet_size` every `interval` (or on each
/// reply), echoed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Time between probes (with `pattern = "interval"`).
    pub interval: Dur,
    /// IP packet size of a probe.
    pub packet_size: Size,
    /// "interval": one probe every `interval` (ping, irtt); "rr": the next when a reply arrives,
    /// as netperf's UDP_RR sends (Flent's UDP probes before irtt).
    #[schemars(with = "Pattern")]
    pub pattern: Pattern,
    /// With `pattern = "rr"`: how long the client waits for a reply before it sends the next
    /// probe (netperf's `-e`, which Flent sets to its --socket-timeout, 2 s by default); "0s":
    /// never, so a lost probe ends the stream (netperf 2.6.0, before `-e`).
    pub timeout: Dur,
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
            pattern: Pattern::Interval,
            timeout: Dur(2 * SEC),
        }
    }
}

impl Probe {
    /// The key the pattern does not use (`timeout` with "interval", `interval` with "rr"): an
    /// entry may not give it, and the resolved entry leaves it out.
    pub fn unused_key(&self) -> &'static str {
        match self.pattern {
            Pattern::Interval => "timeout",
            Pattern::Rr => "interval",
        }
    }
}

impl Params<()> for Probe {
    fn finish(&mut self, _: &()) -> Result<(), String> {
        positive("interval", self.interval)
    }
}

/// The largest `preamble` (bytes): a greeting, not a transfer.
pub const PREAMBLE_MAX: u64 = 65_536;

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
    /// The application's first write, this long after the flow's start: the connection opens
    /// at the start and then waits, as an iperf3 data connection waits for the test to begin
    /// (a control message) after it has connected. Omitted: at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_write: Option<Dur>,
    /// Bytes the application writes as the connection opens, before its data (iperf3's 37-byte
    /// cookie, `iperf_api.c` COOKIE_SIZE, written on each stream it connects): sent at once,
    /// even while `first_write` holds the data. A bulk flow's only (no `bytes`, `on_off` or
    /// `repeat`). Omitted: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preamble: Option<Size>,
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
        if let Some(w) = self.first_write {
            if w.0 == 0 || w.0 > 3600 * SEC {
                return Err(format!(
                    "first_write: {} is out of range; allowed: above 0s up to 3600s",
                    fmt_time(w.0)
                ));
            }
            if self.on_off.is_some() || self.repeat.is_some() {
                return Err("first_write: not allowed together with on_off or repeat".into());
            }
        }
        if let Some(p) = self.preamble {
            if p.0 == 0 || p.0 > PREAMBLE_MAX {
                return Err(format!(
                    "preamble: {} B is out of range; allowed: 1 B up to {PREAMBLE_MAX} B",
                    p.0
                ));
            }
            if self.bytes.is_some() || self.on_off.is_some() || self.repeat.is_some() {
                return Err(
                    "preamble: a bulk flow's only; not allowed together with bytes, on_off or repeat".into(),
                );
            }
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

fn positive(key: &str, d: Dur) -> Result<(), String> {
    if d.0 == 0 {
        Err(format!("{key}: 0s is not allowed; must be positive"))
    } else {
        Ok(())
    }
}
