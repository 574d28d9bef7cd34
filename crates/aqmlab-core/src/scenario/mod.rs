//! The scenario model: what a scenario file may say, validated with serde (unknown keys are
//! rejected) and then checked value by value. Every error names the key path, the bad value and
//! what is allowed. `resolve` fills in every default so the stored copy fully determines a run
//! (docs/architecture.md, principle 7). The builder that turns a scenario into a world is in `build.rs`.

use crate::packet::Dir;
use crate::record::Level;
use crate::transport::cc::Hystart;
use crate::units::{fmt_time, parse_rate, parse_time, Dur, LimitSpec, NicRate, Rate, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

pub mod build;
pub mod flow;
pub mod schema;

pub use flow::{FlowKind, FlowModel};

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

fn default_mtu() -> Size {
    Size(1500)
}

/// A host NIC of 1 Gb/s, the common wired Ethernet rate.
fn default_nic_rate() -> NicRate {
    NicRate(Some(1_000_000_000))
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Base round-trip time of the flows' access paths (flows may override it with their own
    /// `rtt`); hop delays add to it.
    pub rtt: Dur,
    /// Largest IP packet on the path.
    #[serde(default = "default_mtu")]
    pub mtu: Size,
    /// Rate of every host's NIC (flows may override it with their own `nic_rate`): each end of
    /// a flow is a host whose packets are serialised at this rate before its access path.
    #[serde(default = "default_nic_rate")]
    pub nic_rate: NicRate,
    /// The one-hop shorthand: the bottleneck in each direction, named "down" and "up".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<LinkSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<LinkSpec>,
    /// The general form: each direction is the chain of the hops that name it, in file order
    /// (packets cross them first to last). Replaces `down`/`up`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hops: Vec<LinkSpec>,
    /// A shared 802.11n medium between an access point and its stations (`net::wifi`): the
    /// last hop of the down chain and the first of the up chain carry `wifi = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<WifiSpec>,
}

/// The WiFi medium: its stations and the MAC and PHY constants (sources in `net::wifi`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WifiSpec {
    pub stations: Vec<StationSpec>,
    /// How transmitters take turns: "equal" (equal opportunities, no collisions: the first
    /// model) or "dcf" (per-transmitter backoff, collisions, doubling windows).
    pub access: String,
    /// The AP's rate control towards each station: "fixed" (the station's `mcs`),
    /// "minstrel_ht" or "iwlwifi" (over MCS 0 to the station's `mcs`).
    pub rate_control: String,
    /// The channel model's waterfall: how fast the loss odds fall per dB above an MCS's
    /// sensitivity (for stations with `rssi`).
    pub per_slope: f64,
    /// Channel width, MHz: 20 or 40.
    pub width: u32,
    /// Guard interval: "long" (800 ns) or "short" (400 ns).
    pub guard: String,
    pub slot: Dur,
    pub sifs: Dur,
    /// Best-effort AIFSN (IEEE 802.11-2012 Table 8-105).
    pub aifsn: u32,
    pub cw_min: u32,
    /// Best-effort CWmax (aCWmax of the OFDM PHY; doubled windows stop there).
    pub cw_max: u32,
    /// Legacy rate of the (block) ACK.
    pub ack_rate: Rate,
    pub max_subframes: u32,
    pub max_ampdu_bytes: Size,
    pub max_airtime: Dur,
    /// Frames the driver may hold per transmitter before it stops its qdisc.
    pub driver_limit: u32,
    /// Aggregates in the hardware queue, the one on the air included.
    pub hw_aggregates: u32,
    pub retries: u32,
}

impl Default for WifiSpec {
    /// 802.11n in the 5 GHz band (slot 9 us, SIFS 16 us, AIFSN 3, CWmin 15, CWmax 1023 for best effort,
    /// block ACK at 24 Mb/s) with Linux ath9k's driver constants (`net::wifi`).
    fn default() -> Self {
        WifiSpec {
            stations: Vec::new(),
            access: "equal".into(),
            rate_control: "fixed".into(),
            per_slope: 1.5,
            width: 20,
            guard: "long".into(),
            slot: Dur(9 * crate::units::US),
            sifs: Dur(16 * crate::units::US),
            aifsn: 3,
            cw_min: 15,
            cw_max: 1023,
            ack_rate: Rate(24_000_000),
            max_subframes: 32,
            max_ampdu_bytes: Size(65535),
            max_airtime: Dur(4 * MS),
            driver_limit: 123,
            hw_aggregates: 2,
            retries: 30,
        }
    }
}

/// One WiFi station: a client host whose flows name it (`station`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StationSpec {
    pub name: String,
    /// The HT MCS (0-31) of its link with the access point, both ways.
    #[serde(default = "default_mcs")]
    pub mcs: u8,
    /// Probability that a subframe to or from it is lost on the air (then retried).
    #[serde(default)]
    pub fer: f64,
    /// Received signal strength both ways, dBm: each MCS's loss then follows the channel
    /// model (`net::wifi_rate::Channel`) instead of `fer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rssi: Option<f64>,
    /// The highest MCS the station transmits with (default `mcs`; e.g. 7 for one antenna).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_mcs: Option<u8>,
    /// The station's own rate control for its transmissions (names as the AP's).
    #[serde(default = "default_rate_control")]
    pub rate_control: String,
    /// The station's driver where it differs from the AP's (`topology.wifi`'s values).
    #[serde(default)]
    pub driver: DriverSpec,
}

/// A station's driver limits, each defaulting to the medium's (the AP's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_subframes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ampdu_bytes: Option<Size>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_airtime: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_aggregates: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u32>,
}

fn default_rate_control() -> String {
    "fixed".into()
}

/// MCS 15: two spatial streams of 64-QAM 5/6, 130 Mb/s on 20 MHz (a common 2x2 802.11n link).
fn default_mcs() -> u8 {
    15
}

impl WifiSpec {
    /// The MAC parameters of the core's model.
    pub fn mac(&self) -> crate::net::wifi::MacParams {
        let ack_n_dbps = crate::net::wifi::LEGACY_RATES
            .iter()
            .find(|r| r.0 as u64 * 1_000_000 == self.ack_rate.0)
            .map_or(96, |r| r.1);
        crate::net::wifi::MacParams {
            access: crate::net::wifi::Access::parse(&self.access).expect("validated: access"),
            slot: self.slot.0,
            sifs: self.sifs.0,
            aifsn: self.aifsn,
            cw_min: self.cw_min,
            cw_max: self.cw_max,
            ack_n_dbps,
        }
    }

    /// The AP's driver.
    pub fn driver(&self) -> crate::net::wifi::Driver {
        crate::net::wifi::Driver {
            max_subframes: self.max_subframes,
            max_ampdu_bytes: self.max_ampdu_bytes.0 as u32,
            max_airtime: self.max_airtime.0,
            driver_limit: self.driver_limit,
            hw_aggregates: self.hw_aggregates,
            retries: self.retries,
        }
    }

    /// A station's driver: its own values over the AP's.
    pub fn station_driver(&self, st: &StationSpec) -> crate::net::wifi::Driver {
        let ap = self.driver();
        let d = &st.driver;
        crate::net::wifi::Driver {
            max_subframes: d.max_subframes.unwrap_or(ap.max_subframes),
            max_ampdu_bytes: d.max_ampdu_bytes.map_or(ap.max_ampdu_bytes, |b| b.0 as u32),
            max_airtime: d.max_airtime.map_or(ap.max_airtime, |t| t.0),
            driver_limit: d.driver_limit.unwrap_or(ap.driver_limit),
            hw_aggregates: d.hw_aggregates.unwrap_or(ap.hw_aggregates),
            retries: d.retries.unwrap_or(ap.retries),
        }
    }

    /// The PHY at `mcs` on the medium's width and guard interval.
    pub fn phy(&self, mcs: u8) -> crate::net::wifi::Phy {
        crate::net::wifi::Phy {
            mcs,
            width40: self.width == 40,
            short_gi: self.guard == "short",
        }
    }

    /// The channel between the AP and a station (the same both ways).
    pub fn channel(&self, st: &StationSpec) -> crate::net::wifi_rate::Channel {
        match st.rssi {
            Some(rssi) => crate::net::wifi_rate::Channel::Signal {
                rssi,
                slope: self.per_slope,
            },
            None => crate::net::wifi_rate::Channel::Fixed(st.fer),
        }
    }

    /// The AP's radio towards a station (`up` false) or the station's towards the AP.
    pub fn radio(
        &self,
        st: &StationSpec,
        up: bool,
        rng: &mut crate::rng::Rng,
    ) -> crate::net::wifi_rate::Radio {
        let (mcs, rc) = if up {
            (st.up_mcs.unwrap_or(st.mcs), &st.rate_control)
        } else {
            (st.mcs, &self.rate_control)
        };
        let phy = self.phy(mcs);
        crate::net::wifi_rate::Radio {
            phy,
            channel: self.channel(st),
            rc: crate::net::wifi_rate::RateControl::new(rc, phy, mcs, rng).expect("validated: rate_control"),
        }
    }

    /// Checks a driver's limits; `key` names where they come from.
    fn validate_driver(d: &crate::net::wifi::Driver, key: impl Fn(&str) -> String) -> Result<(), String> {
        let us = crate::units::US;
        if !(100 * us..=10 * MS).contains(&d.max_airtime) {
            return err(
                key("max_airtime"),
                format!(
                    "{} is out of range; allowed {} to {}",
                    fmt_time(d.max_airtime),
                    fmt_time(100 * us),
                    fmt_time(10 * MS)
                ),
            );
        }
        for (k, v, lo, hi) in [
            ("max_subframes", d.max_subframes as u64, 1, 64),
            ("max_ampdu_bytes", d.max_ampdu_bytes as u64, 1600, 65535),
            ("driver_limit", d.driver_limit as u64, 1, 100_000),
            ("hw_aggregates", d.hw_aggregates as u64, 1, 64),
            ("retries", d.retries as u64, 0, 100),
        ] {
            if !(lo..=hi).contains(&v) {
                return err(key(k), format!("{v} is out of range; allowed {lo} to {hi}"));
            }
        }
        Ok(())
    }

    fn validate_rate_control(name: &str, key: String) -> Result<(), String> {
        if crate::net::wifi_rate::RateControl::NAMES.contains(&name) {
            return Ok(());
        }
        err(
            key,
            format!(
                "{name:?} is not allowed; allowed: {}",
                crate::net::wifi_rate::RateControl::NAMES.join(", ")
            ),
        )
    }

    /// Checks every value; errors name the key under `topology.wifi`.
    fn validate(&self) -> Result<(), String> {
        let key = |k: &str| format!("topology.wifi.{k}");
        if self.stations.is_empty() {
            return err(
                key("stations"),
                "missing or empty; a WiFi medium needs at least one station, e.g. stations = [{ name = \"laptop\" }]",
            );
        }
        Self::validate_driver(&self.driver(), key)?;
        let mut names: Vec<&str> = Vec::new();
        for (i, st) in self.stations.iter().enumerate() {
            let k = key(&format!("stations[{i}]"));
            if !valid_name(&st.name) {
                return err(
                    format!("{k}.name"),
                    format!("{:?} is not allowed; a station name starts with a letter and has 1 to 32 letters, digits, '_' or '-'", st.name),
                );
            }
            if names.contains(&st.name.as_str()) {
                return err(format!("{k}.name"), format!("{:?} names two stations", st.name));
            }
            names.push(&st.name);
            if st.mcs > 31 {
                return err(
                    format!("{k}.mcs"),
                    format!("{} is out of range; allowed 0 to 31 (HT MCS)", st.mcs),
                );
            }
            if !(0.0..1.0).contains(&st.fer) {
                return err(
                    format!("{k}.fer"),
                    format!("{} is out of range; allowed 0 <= fer < 1", st.fer),
                );
            }
            if let Some(up) = st.up_mcs.filter(|&m| m > 31) {
                return err(
                    format!("{k}.up_mcs"),
                    format!("{up} is out of range; allowed 0 to 31 (HT MCS)"),
                );
            }
            if let Some(rssi) = st.rssi {
                if !(-100.0..=0.0).contains(&rssi) || st.fer > 0.0 {
                    return err(
                        format!("{k}.rssi"),
                        format!("{rssi} is not allowed; allowed -100 to 0 (dBm), without fer"),
                    );
                }
            }
            Self::validate_rate_control(&st.rate_control, format!("{k}.rate_control"))?;
            Self::validate_driver(&self.station_driver(st), |d| format!("{k}.driver.{d}"))?;
        }
        if crate::net::wifi::Access::parse(&self.access).is_none() {
            return err(
                key("access"),
                format!(
                    "{:?} is not allowed; allowed: {}",
                    self.access,
                    crate::net::wifi::Access::NAMES.join(", ")
                ),
            );
        }
        Self::validate_rate_control(&self.rate_control, key("rate_control"))?;
        if !(0.1..=10.0).contains(&self.per_slope) {
            return err(
                key("per_slope"),
                format!("{} is out of range; allowed 0.1 to 10 (per dB)", self.per_slope),
            );
        }
        if self.width != 20 && self.width != 40 {
            return err(
                key("width"),
                format!("{} is not allowed; allowed: 20 or 40 (MHz)", self.width),
            );
        }
        if self.guard != "long" && self.guard != "short" {
            return err(
                key("guard"),
                format!(
                    "{:?} is not allowed; allowed: \"long\" (800 ns) or \"short\" (400 ns)",
                    self.guard
                ),
            );
        }
        if !crate::net::wifi::LEGACY_RATES
            .iter()
            .any(|r| r.0 as u64 * 1_000_000 == self.ack_rate.0)
        {
            return err(
                key("ack_rate"),
                format!(
                    "{} is not a legacy OFDM rate; allowed: 6, 9, 12, 18, 24, 36, 48 or 54Mbps",
                    crate::units::fmt_rate(self.ack_rate.0)
                ),
            );
        }
        let us = crate::units::US;
        for (k, v, lo, hi) in [
            ("slot", self.slot.0, us, 100 * us),
            ("sifs", self.sifs.0, us, 100 * us),
        ] {
            if !(lo..=hi).contains(&v) {
                return err(
                    key(k),
                    format!(
                        "{} is out of range; allowed {} to {}",
                        fmt_time(v),
                        fmt_time(lo),
                        fmt_time(hi)
                    ),
                );
            }
        }
        for (k, v, lo, hi) in [
            ("aifsn", self.aifsn as u64, 1, 15),
            ("cw_min", self.cw_min as u64, 0, 1023),
            ("cw_max", self.cw_max as u64, self.cw_min as u64, 1023),
        ] {
            if !(lo..=hi).contains(&v) {
                return err(key(k), format!("{v} is out of range; allowed {lo} to {hi}"));
            }
        }
        Ok(())
    }
}

/// A hop or station name: a letter, then up to 31 letters, digits, '_' or '-'.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// Most hops a path may hold (both directions together).
pub const MAX_HOPS: usize = 64;

/// One hop of a path as the builder sees it: its scenario key, name, direction and spec.
pub struct HopRef<'a> {
    pub key: String,
    pub name: String,
    pub dir: Dir,
    pub spec: &'a LinkSpec,
}

impl Topology {
    /// Every hop, the up direction's chain first, then the down direction's, each in path
    /// order. The shorthand gives one hop per direction, named after it.
    pub fn hops(&self) -> Vec<HopRef<'_>> {
        let mut out = Vec::new();
        for dir in Dir::BOTH {
            let short = match dir {
                Dir::Up => &self.up,
                Dir::Down => &self.down,
            };
            if let Some(spec) = short {
                out.push(HopRef {
                    key: format!("topology.{}", dir.name()),
                    name: dir.name().to_string(),
                    dir,
                    spec,
                });
            }
            for (i, spec) in self.hops.iter().enumerate() {
                if spec.direction.map(DirSpec::dir) == Some(dir) {
                    out.push(HopRef {
                        key: format!("topology.hops[{i}]"),
                        name: spec.name.clone().unwrap_or_default(),
                        dir,
                        spec,
                    });
                }
            }
        }
        out
    }

    /// The spec a hop's key names (`topology.down`, `topology.hops[2]`), for writing back the
    /// resolved qdisc.
    pub fn hop_spec_mut(&mut self, dir: Dir, name: &str) -> Option<&mut LinkSpec> {
        match (dir, name) {
            (Dir::Up, "up") if self.up.is_some() => self.up.as_mut(),
            (Dir::Down, "down") if self.down.is_some() => self.down.as_mut(),
            _ => self.hops.iter_mut().find(|h| h.name.as_deref() == Some(name)),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The hop's name (only in `topology.hops`; the shorthand's are "down" and "up").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Which direction's chain the hop belongs to (only in `topology.hops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<DirSpec>,
    /// The link rate (or schedule); none on a WiFi hop, whose rates are its stations' PHYs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateSpec>,
    /// The hop is the WiFi medium of `topology.wifi`: the access point's transmissions (the
    /// last hop of the down chain) or the stations' (the first of the up chain).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wifi: bool,
    #[serde(default)]
    pub qdisc: QdiscSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitSpec>,
    /// Independent random loss probability on the wire (after the queue).
    #[serde(default)]
    pub loss: f64,
    /// A device (driver) queue of this many packets between the qdisc and the serialiser, as
    /// ns-3's NetDevice queue ("1p"); default none. With it, `packets.t_out_ns` is the time a
    /// packet left the qdisc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_queue: Option<LimitSpec>,
    /// Propagation delay after the hop, before the next one (only in `topology.hops`; the
    /// shorthand's delay is all in the flows' access paths, from `rtt`). Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// One link per client host, in parallel, each with this hop's settings (only in
    /// `topology.hops`, on the first hop of the up chain or the last of the down chain: the
    /// hosts' own access links, e.g. separate home routers in front of a shared bottleneck).
    /// Flows pick theirs with `host` (default the first); the links are named `<hop>/<host>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// A fixed rate ("10Mbps") or a schedule of steps ([["0s", "100Mbps"], ["50s", "10Mbps"]]).
#[derive(Clone, Debug, PartialEq)]
pub struct RateSpec(pub Vec<(Time, u64)>);

impl<'de> Deserialize<'de> for RateSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let allowed =
            "a rate such as \"10Mbps\" or a schedule [[\"0s\", \"10Mbps\"], [\"5s\", \"2Mbps\"], ...]";
        match &v {
            Value::String(s) => Ok(RateSpec(vec![(0, parse_rate(s).map_err(de::Error::custom)?)])),
            Value::Array(steps) if !steps.is_empty() => {
                let mut out = Vec::new();
                for (i, step) in steps.iter().enumerate() {
                    let pair = step.as_array().filter(|p| p.len() == 2);
                    let (t, r) = match pair.map(|p| (p[0].as_str(), p[1].as_str())) {
                        Some((Some(t), Some(r))) => (t, r),
                        _ => {
                            return Err(de::Error::custom(format!(
                                "step {i}: {step} is not a [time, rate] pair"
                            )))
                        }
                    };
                    let t = parse_time(t).map_err(|e| de::Error::custom(format!("step {i}: {e}")))?;
                    let r = parse_rate(r).map_err(|e| de::Error::custom(format!("step {i}: {e}")))?;
                    out.push((t, r));
                }
                Ok(RateSpec(out))
            }
            _ => Err(de::Error::custom(format!("{v} is not {allowed}"))),
        }
    }
}

impl Serialize for RateSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.len() == 1 && self.0[0].0 == 0 {
            Rate(self.0[0].1).serialize(s)
        } else {
            let steps: Vec<(Dur, Rate)> = self.0.iter().map(|&(t, r)| (Dur(t), Rate(r))).collect();
            steps.serialize(s)
        }
    }
}

/// A qdisc: a name, or a table with `kind` and the discipline's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct QdiscSpec {
    pub kind: String,
    pub params: serde_json::Map<String, Value>,
}

impl Default for QdiscSpec {
    fn default() -> Self {
        QdiscSpec {
            kind: "pfifo".into(),
            params: Default::default(),
        }
    }
}

impl<'de> Deserialize<'de> for QdiscSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(kind) => Ok(QdiscSpec {
                kind,
                params: Default::default(),
            }),
            Value::Object(mut m) => match m.remove("kind") {
                Some(Value::String(kind)) => Ok(QdiscSpec { kind, params: m }),
                _ => Err(de::Error::custom(
                    "a qdisc table needs `kind = \"<name>\"` (see `aqmlab list qdiscs`)",
                )),
            },
            v => Err(de::Error::custom(format!(
                "{v} is not a qdisc name or a table with `kind`"
            ))),
        }
    }
}

impl Serialize for QdiscSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), Value::String(self.kind.clone()));
        m.extend(self.params.clone());
        Value::Object(m).serialize(s)
    }
}

/// When a flow (group) starts: a fixed time, or an offset drawn per run seed, once for the
/// whole `[[flows]]` entry (`per = "group"`, the default: its flows start together) or once per
/// flow (`per = "flow"`: staggered starts).
#[derive(Clone, Debug, PartialEq)]
pub enum StartSpec {
    At(Time),
    Uniform(Time, Time, StartPer),
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

impl<'de> Deserialize<'de> for StartSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed = "a time (\"1s\") or { uniform = [\"0s\", \"0.65s\"], per = \"group\" | \"flow\" }";
        match Value::deserialize(d)? {
            Value::String(s) => parse_time(&s).map(StartSpec::At).map_err(de::Error::custom),
            Value::Object(m)
                if m.contains_key("uniform") && m.keys().all(|k| k == "uniform" || k == "per") =>
            {
                let per = match m.get("per") {
                    None => StartPer::Group,
                    Some(Value::String(p)) if p == "group" => StartPer::Group,
                    Some(Value::String(p)) if p == "flow" => StartPer::Flow,
                    Some(v) => {
                        return Err(de::Error::custom(format!(
                            "per: {v} is not allowed; allowed: \"group\" (one draw for the entry's flows) \
                             or \"flow\" (one draw per flow)"
                        )))
                    }
                };
                let b = m["uniform"].as_array().filter(|a| a.len() == 2);
                match b.map(|a| (a[0].as_str(), a[1].as_str())) {
                    Some((Some(lo), Some(hi))) => {
                        let lo = parse_time(lo).map_err(de::Error::custom)?;
                        let hi = parse_time(hi).map_err(de::Error::custom)?;
                        if hi < lo {
                            return Err(de::Error::custom(
                                "uniform: the upper bound is below the lower bound",
                            ));
                        }
                        Ok(StartSpec::Uniform(lo, hi, per))
                    }
                    _ => Err(de::Error::custom(format!(
                        "uniform needs two times; allowed: {allowed}"
                    ))),
                }
            }
            v => Err(de::Error::custom(format!("{v} is not {allowed}"))),
        }
    }
}

impl Serialize for StartSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            StartSpec::At(t) => Dur(t).serialize(s),
            StartSpec::Uniform(lo, hi, per) => {
                let mut m = serde_json::Map::new();
                m.insert("uniform".into(), serde_json::json!([Dur(lo), Dur(hi)]));
                m.insert("per".into(), per.name().into());
                Value::Object(m).serialize(s)
            }
        }
    }
}

/// A Differentiated Services code point: 0 to 63, or a name (RFC 2474 CS0-CS7 = 8 x n; RFC 2597
/// AFxy = 8 x + 2 y; RFC 3246 EF = 46; RFC 8622 LE = 1; RFC 5865 VA = 44; BE = 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dscp(pub u8);

impl Dscp {
    pub fn parse(s: &str) -> Option<u8> {
        let u = s.to_ascii_uppercase();
        let digit = |c: Option<char>| c.and_then(|c| c.to_digit(10));
        match u.as_str() {
            "BE" | "DF" => Some(0),
            "EF" => Some(46),
            "LE" => Some(1),
            "VA" => Some(44),
            _ if u.len() == 3 && u.starts_with("CS") => {
                digit(u.chars().nth(2)).filter(|&n| n <= 7).map(|n| 8 * n as u8)
            }
            _ if u.len() == 4 && u.starts_with("AF") => {
                let (x, y) = (digit(u.chars().nth(2))?, digit(u.chars().nth(3))?);
                ((1..=4).contains(&x) && (1..=3).contains(&y)).then_some((8 * x + 2 * y) as u8)
            }
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed = "0 to 63, or a name: BE, CS0-CS7, AF11-AF43, EF, LE, VA";
        match Value::deserialize(d)? {
            Value::Number(n) if n.as_u64().is_some_and(|v| v <= 63) => {
                Ok(Dscp(n.as_u64().unwrap_or(0) as u8))
            }
            Value::String(s) => Dscp::parse(&s)
                .map(Dscp)
                .ok_or_else(|| de::Error::custom(format!("{s:?} is not allowed; allowed: {allowed}"))),
            v => Err(de::Error::custom(format!(
                "{v} is not allowed; allowed: {allowed}"
            ))),
        }
    }
}

impl Serialize for Dscp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DirSpec {
    Up,
    Down,
}

impl DirSpec {
    pub fn dir(self) -> Dir {
        match self {
            DirSpec::Up => Dir::Up,
            DirSpec::Down => Dir::Down,
        }
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
    pub count: Option<u32>,
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
    /// The client host the flow's client is, on the hops with one link per host
    /// (`topology.hops[].hosts`; default the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The kind's own keys as written (`flow::FlowKind::groups`; resolved: every one written
    /// out, `flow::FlowModel::written`).
    #[serde(flatten)]
    pub keys: serde_json::Map<String, Value>,
}

impl<'de> Deserialize<'de> for Hystart {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let h = match &v {
            Value::Bool(b) => Some(if *b { Hystart::Linux } else { Hystart::Off }),
            Value::String(s) => Hystart::parse(s),
            _ => None,
        };
        h.ok_or_else(|| {
            let names: Vec<String> = Hystart::ALL.iter().map(|(n, _)| format!("{n:?}")).collect();
            de::Error::custom(format!(
                "{v} is not allowed; allowed: {} (true = \"linux\", false = \"off\")",
                names.join(", ")
            ))
        })
    }
}

impl Serialize for Hystart {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

fn default_interval() -> Dur {
    Dur(100 * MS)
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordSpec {
    /// `packets` (one row per packet at the bottleneck), `series` (periodic samples and each
    /// hop's sojourn histogram per second, from which the queueing-delay percentiles come within
    /// 1/128) or `summary` (totals and probes only).
    #[serde(default)]
    pub level: Level,
    /// Sampling interval of the `queue` and `flow_series` tables.
    #[serde(default = "default_interval")]
    pub interval: Dur,
    /// The most `packets` rows a run may record (an estimate is checked before the run).
    #[serde(default = "default_max_rows")]
    pub max_rows: u64,
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

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec {
            level: Level::default(),
            interval: default_interval(),
            max_rows: DEFAULT_MAX_ROWS,
        }
    }
}

/// A key path as serde_path_to_error prints it ("flows[0].cc", "." for the top level), except
/// that an empty key is written `""`, so an error about it still names a visible key
/// ("flows[0].\"\"" rather than "flows[0].").
pub fn key_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for (i, seg) in path.iter().enumerate() {
        if !matches!(seg, Segment::Seq { .. }) && i > 0 {
            out.push('.');
        }
        match seg {
            Segment::Map { key } if key.is_empty() => out.push_str("\"\""),
            _ => out.push_str(&seg.to_string()),
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// Parses and checks a scenario given as JSON (the Python layer turns TOML into JSON).
pub fn parse(json: &str) -> Result<Scenario, String> {
    let de = &mut serde_json::Deserializer::from_str(json);
    let sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = key_path(e.path());
        let msg = e.into_inner().to_string();
        // The JSON position refers to the text the Python layer generated, not the user's file.
        let msg = msg
            .rfind(" at line ")
            .map_or(msg.as_str(), |i| &msg[..i])
            .to_string();
        format!("{path}: {}", crate::queue::reword(&msg, None))
    })?;
    sc.validate()?;
    Ok(sc)
}

fn err<T>(key: impl std::fmt::Display, msg: impl std::fmt::Display) -> Result<T, String> {
    Err(format!("{key}: {msg}"))
}

impl Scenario {
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

    /// Value checks serde cannot express. Errors name the key path.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return err("name", "must not be empty");
        }
        if self.duration.0 == 0 {
            return err("duration", "0s is not allowed; the run needs a positive duration");
        }
        if self.record.interval.0 < RECORD_INTERVAL_MIN {
            return err(
                "record.interval",
                format!(
                    "{} is below the minimum; allowed: 1ms or more (finer timing is in the packet \
                     table, record.level = \"packets\")",
                    fmt_time(self.record.interval.0)
                ),
            );
        }
        if self.topology.mtu.0 < 68 || self.topology.mtu.0 > 65535 {
            return err(
                "topology.mtu",
                format!("{}B is out of range; allowed 68B to 65535B", self.topology.mtu.0),
            );
        }
        self.validate_path()?;
        self.validate_wifi()?;
        for hop in self.topology.hops() {
            let l = hop.spec;
            let key = hop.key;
            let steps =
                match (&l.rate, l.wifi) {
                    (Some(r), false) => &r.0,
                    (None, true) => continue,
                    (None, false) => return err(
                        format!("{key}.rate"),
                        "missing; give a rate such as \"10Mbps\" or a schedule [[\"0s\", \"10Mbps\"], ...]",
                    ),
                    (Some(_), true) => unreachable!("checked by validate_wifi"),
                };
            for (i, &(t, r)) in steps.iter().enumerate() {
                if r == 0 {
                    return err(
                        format!("{key}.rate"),
                        "0bps is not allowed; a link rate must be positive",
                    );
                }
                if i == 0 && t != 0 {
                    return err(format!("{key}.rate"), "a rate schedule must start at \"0s\"");
                }
                if i > 0 && t <= steps[i - 1].0 {
                    return err(format!("{key}.rate"), format!("step {i}: times must increase"));
                }
            }
            match l.device_queue.map(|d| d.0) {
                Some(crate::units::Limit::Bytes(_)) => {
                    return err(format!("{key}.device_queue"), "counts packets, e.g. \"1p\"")
                }
                Some(crate::units::Limit::Packets(p)) if p > 100_000 => {
                    return err(
                        format!("{key}.device_queue"),
                        format!("{p}p is out of range; allowed 0p to 100000p"),
                    )
                }
                _ => {}
            }
            if !(0.0..1.0).contains(&l.loss) {
                return err(
                    format!("{key}.loss"),
                    format!("{} is out of range; allowed 0 <= loss < 1", l.loss),
                );
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(i, f)?;
        }
        self.validate_table_size()
    }

    /// Packet recording: every hop transmits at most its peak rate in full-size packets, so the
    /// `packets` table holds about sum(peak rate x duration / (8 MTU)) rows (more with smaller
    /// packets). Refused above `record.max_rows`, which the user can raise.
    fn validate_table_size(&self) -> Result<(), String> {
        if self.record.level != Level::Packets {
            return Ok(());
        }
        let secs = self.duration.0 as f64 / SEC as f64;
        let rows: f64 = self
            .topology
            .hops()
            .iter()
            .map(|h| {
                let peak = match (&h.spec.rate, &self.topology.wifi) {
                    (Some(r), _) => r.0.iter().map(|&(_, r)| r).max().unwrap_or(0),
                    (None, Some(w)) => w
                        .stations
                        .iter()
                        .map(|s| w.phy(s.mcs).rate_bps())
                        .max()
                        .unwrap_or(0),
                    (None, None) => 0,
                };
                peak as f64 * secs / (8.0 * self.topology.mtu.0 as f64)
            })
            .sum();
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
                    rows * 200.0 / 1e9,
                    self.record.max_rows
                ),
            );
        }
        Ok(())
    }

    /// The shape of the path: the shorthand or `hops`, not both; every direction has a hop;
    /// hop names unique and usable as file and column names.
    fn validate_path(&self) -> Result<(), String> {
        let t = &self.topology;
        if t.hops.is_empty() {
            for (dir, l) in [(Dir::Down, &t.down), (Dir::Up, &t.up)] {
                let key = format!("topology.{}", dir.name());
                let Some(l) = l else {
                    return err(
                        key,
                        "missing; give both topology.down and topology.up, or topology.hops",
                    );
                };
                for (k, set) in [
                    ("name", l.name.is_some()),
                    ("direction", l.direction.is_some()),
                    ("delay", l.delay.is_some()),
                    ("hosts", !l.hosts.is_empty()),
                ] {
                    if set {
                        return err(format!("{key}.{k}"), "only allowed on an entry of topology.hops");
                    }
                }
            }
            return Ok(());
        }
        for dir in Dir::BOTH {
            if (dir == Dir::Up && t.up.is_some()) || (dir == Dir::Down && t.down.is_some()) {
                return err(
                    format!("topology.{}", dir.name()),
                    "not allowed together with topology.hops; describe that direction's hop in topology.hops",
                );
            }
        }
        if t.hops.len() > MAX_HOPS {
            return err(
                "topology.hops",
                format!("{} hops is out of range; allowed 1 to {MAX_HOPS}", t.hops.len()),
            );
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, h) in t.hops.iter().enumerate() {
            let key = format!("topology.hops[{i}]");
            let Some(name) = h.name.as_deref() else {
                return err(
                    format!("{key}.name"),
                    "missing; every hop needs a name such as \"router\"",
                );
            };
            if !valid_name(name) {
                return err(
                    format!("{key}.name"),
                    format!("{name:?} is not allowed; a hop name starts with a letter and has 1 to 32 letters, digits, '_' or '-'"),
                );
            }
            if names.contains(&name) {
                return err(
                    format!("{key}.name"),
                    format!("{name:?} names two hops; hop names must be unique"),
                );
            }
            names.push(name);
            if h.direction.is_none() {
                return err(format!("{key}.direction"), "missing; allowed: \"up\" or \"down\"");
            }
            if let Some(d) = h.delay {
                if d.0 > 3600 * crate::units::SEC {
                    return err(
                        format!("{key}.delay"),
                        format!(
                            "{} is out of range; allowed 0s to 3600s",
                            crate::units::fmt_time(d.0)
                        ),
                    );
                }
            }
        }
        for dir in Dir::BOTH {
            let last = t
                .hops
                .iter()
                .enumerate()
                .rfind(|(_, h)| h.direction.map(DirSpec::dir) == Some(dir));
            if let Some((i, h)) = last {
                if h.delay.is_some_and(|d| d.0 > 0) {
                    return err(
                        format!("topology.hops[{i}].delay"),
                        format!("not allowed on the last hop of the {} direction: the delay beyond it is the flows' access path (topology.rtt or a flow's rtt)", dir.name()),
                    );
                }
            }
            if !t.hops.iter().any(|h| h.direction.map(DirSpec::dir) == Some(dir)) {
                return err(
                    "topology.hops",
                    format!("no hop carries the {} direction; every direction needs at least one hop (direction = \"{}\")", dir.name(), dir.name()),
                );
            }
        }
        self.validate_hosts()
    }

    /// Hops with one link per host: at the hosts' end of their chain, the same hosts on both.
    fn validate_hosts(&self) -> Result<(), String> {
        let t = &self.topology;
        let mut first: Option<(usize, &Vec<String>)> = None;
        let mut links = t.hops.len();
        for (i, h) in t.hops.iter().enumerate().filter(|(_, h)| !h.hosts.is_empty()) {
            let key = format!("topology.hops[{i}].hosts");
            let dir = h.direction.map(DirSpec::dir).expect("checked above");
            let chain: Vec<usize> = (0..t.hops.len())
                .filter(|&k| t.hops[k].direction.map(DirSpec::dir) == Some(dir))
                .collect();
            let at_hosts = match dir {
                Dir::Up => chain[0] == i,
                Dir::Down => chain[chain.len() - 1] == i,
            };
            if !at_hosts {
                return err(
                    key,
                    "only allowed on the hosts' access hop: the first hop of the up chain or the last of the down chain",
                );
            }
            if h.wifi {
                return err(key, "not allowed on a WiFi hop (its stations are its hosts)");
            }
            for (k, name) in h.hosts.iter().enumerate() {
                if !valid_name(name) {
                    return err(
                        format!("{key}[{k}]"),
                        format!("{name:?} is not allowed; a host name starts with a letter and has 1 to 32 letters, digits, '_' or '-'"),
                    );
                }
                if h.hosts[..k].contains(name) {
                    return err(format!("{key}[{k}]"), format!("{name:?} names two hosts"));
                }
            }
            if let Some((j, other)) = first {
                if other != &h.hosts {
                    return err(
                        key,
                        format!("must list the hosts of topology.hops[{j}].hosts, in the same order (a host's uplink and downlink)"),
                    );
                }
            }
            first = Some((i, &h.hosts));
            links += h.hosts.len() - 1;
        }
        if links > MAX_HOPS {
            return err(
                "topology.hops",
                format!("{links} links (every host's counted) is out of range; allowed 1 to {MAX_HOPS}"),
            );
        }
        Ok(())
    }

    /// The hosts of the path's per-host hops (empty: none).
    pub fn hosts(&self) -> &[String] {
        self.topology
            .hops
            .iter()
            .find(|h| !h.hosts.is_empty())
            .map_or(&[], |h| h.hosts.as_slice())
    }

    /// The WiFi medium and its two hops: the access point's is the last of the down chain, the
    /// stations' the first of the up chain; neither has a wired rate, loss or device queue.
    fn validate_wifi(&self) -> Result<(), String> {
        let hops = self.topology.hops();
        let wifi: Vec<&HopRef> = hops.iter().filter(|h| h.spec.wifi).collect();
        let Some(w) = &self.topology.wifi else {
            if let Some(h) = wifi.first() {
                return err(
                    format!("{}.wifi", h.key),
                    "needs a medium: add [topology.wifi] with its stations, e.g. stations = [{ name = \"laptop\" }]",
                );
            }
            return Ok(());
        };
        w.validate()?;
        for d in Dir::BOTH {
            let chain: Vec<&HopRef> = hops.iter().filter(|h| h.dir == d).collect();
            let on: Vec<&&HopRef> = chain.iter().filter(|h| h.spec.wifi).collect();
            let (pos, what) = match d {
                Dir::Down => (
                    chain.len() - 1,
                    "the access point's: the last hop of the down chain",
                ),
                Dir::Up => (0, "the stations': the first hop of the up chain"),
            };
            match on.as_slice() {
                [] => {
                    return err(
                        "topology.wifi",
                        format!(
                            "no {} hop is on the medium; mark {} with wifi = true",
                            d.name(),
                            what
                        ),
                    )
                }
                [h] if h.key == chain[pos].key => {
                    for (k, set) in [
                        ("rate", h.spec.rate.is_some()),
                        ("loss", h.spec.loss > 0.0),
                        ("device_queue", h.spec.device_queue.is_some()),
                    ] {
                        if set {
                            return err(
                                format!("{}.{k}", h.key),
                                "not allowed on a WiFi hop: its rates, losses and driver queues are \
                                 topology.wifi's (stations[].mcs, stations[].fer, driver_limit)",
                            );
                        }
                    }
                }
                [h] => {
                    return err(
                        format!("{}.wifi", h.key),
                        format!("the WiFi hop of the {} direction must be {what}", d.name()),
                    )
                }
                [_, h, ..] => {
                    return err(
                        format!("{}.wifi", h.key),
                        format!(
                            "a second WiFi hop in the {} direction; allowed: one per direction",
                            d.name()
                        ),
                    )
                }
            }
        }
        Ok(())
    }

    fn validate_flow(&self, i: usize, f: &FlowSpec) -> Result<(), String> {
        let key = |k: &str| format!("flows[{i}].{k}");
        let common = flow::common_keys().iter().map(String::as_str);
        let allowed: Vec<&str> = common.chain(f.kind.keys()).collect();
        for k in f.keys.keys() {
            if !allowed.contains(&k.as_str()) {
                return err(
                    key(k),
                    format!("not a key of a {} flow; allowed: {}", f.kind, allowed.join(", ")),
                );
            }
        }
        self.flow_route(f).map_err(|e| format!("flows[{i}].hops: {e}"))?;
        if let Some(st) = &f.station {
            match &self.topology.wifi {
                None => return err(key("station"), "needs a WiFi medium (topology.wifi)"),
                Some(w) if !w.stations.iter().any(|s| &s.name == st) => {
                    let names: Vec<&str> = w.stations.iter().map(|s| s.name.as_str()).collect();
                    return err(
                        key("station"),
                        format!("{st:?} is not a station; allowed: {}", names.join(", ")),
                    );
                }
                _ => {}
            }
        }
        if let Some(h) = &f.host {
            let hosts = self.hosts();
            if hosts.is_empty() {
                return err(
                    key("host"),
                    "needs a hop with one link per host (topology.hops[].hosts)",
                );
            }
            if !hosts.contains(h) {
                return err(
                    key("host"),
                    format!("{h:?} is not a host; allowed: {}", hosts.join(", ")),
                );
            }
        }
        if let Some(c) = f.count {
            if c == 0 || c > 100_000 {
                return err(key("count"), format!("{c} is out of range; allowed 1 to 100000"));
            }
        }
        if let Some(stop) = f.stop {
            let latest_start = match f.start {
                Some(StartSpec::At(t)) => t,
                Some(StartSpec::Uniform(_, hi, _)) => hi,
                None => 0,
            };
            if stop.0 <= latest_start {
                return err(
                    key("stop"),
                    format!(
                        "{} is not after the flow's start ({}); allowed: a time after start",
                        fmt_time(stop.0),
                        fmt_time(latest_start)
                    ),
                );
            }
        }
        if let Some(r) = f.rtt {
            if r.0 == 0 {
                return err(key("rtt"), "must be positive");
            }
        }
        if let Some(s) = f.rtt_spread {
            let rtt = f.rtt.unwrap_or(self.topology.rtt).0;
            if s.0 >= rtt {
                return err(
                    key("rtt_spread"),
                    format!(
                        "{} is not below the flow's rtt ({}); allowed: 0 up to (excluding) the rtt",
                        fmt_time(s.0),
                        fmt_time(rtt)
                    ),
                );
            }
        }
        let model = FlowModel::read(f, &flow::FlowCtx::of(f, self.duration.0))
            .map_err(|e| format!("flows[{i}].{e}"))?;
        let probe_size = match &model {
            FlowModel::Udp(u) => Some(u.packet_size),
            FlowModel::Ping(p) | FlowModel::Voip(p) => Some(p.packet_size),
            FlowModel::Tcp { .. } | FlowModel::Web { .. } | FlowModel::Webpage { .. } => None,
        };
        if let Some(ps) = probe_size {
            let lo = if f.kind.echoed() { 28 } else { 29 };
            if ps.0 < lo || ps.0 > self.topology.mtu.0 {
                return err(
                    key("packet_size"),
                    format!(
                        "{}B is out of range; allowed {lo}B to the path MTU {}B",
                        ps.0, self.topology.mtu.0
                    ),
                );
            }
        }
        // Web objects and pages go down, their requests up.
        if matches!(f.kind, FlowKind::Web | FlowKind::Webpage)
            && f.direction.is_some_and(|d| d != DirSpec::Down)
        {
            let what = if f.kind == FlowKind::Web {
                "a web flow's responses go down (its requests up)"
            } else {
                "a webpage flow's objects go down (its requests up)"
            };
            return err(key("direction"), format!("\"up\" is not allowed; {what}"));
        }
        Ok(())
    }
}
