//! The scenario's `[topology]` table as serde reads it: the path's hops (`LinkSpec`: rate,
//! delay, qdisc, shaper, and the link models: WiFi, DOCSIS, slots, traces), the directions they
//! carry (`DirSpec`, which flows name too), and the checks and defaults each type carries.

use crate::packet::Dir;
use crate::units::{Dur, LimitSpec, NicRate, Rate, Size, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// The hosts' own timing noise (flows may override it with their own `host_jitter`): each
    /// packet a host sends waits in it a further time drawn uniformly in [0, host_jitter) before
    /// its NIC, but not past the packet it sent before (`net::HostJitter`), so the noise delays
    /// and bunches a host's packets without reordering them. It stands for what no protocol
    /// models in a real host: interrupts, softirq and scheduling latency. Default none (0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_jitter: Option<Dur>,
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
    /// model), "dcf" (per-transmitter backoff, collisions, doubling windows, one queue) or
    /// "edca" (WMM's four access categories per transmitter, picked by DSCP, `net::edca`).
    pub access: String,
    /// With "edca": the access point's table of AC parameters, "ap" (its own queues' defaults,
    /// hostapd's tx_queue) or "station" (the WMM parameters it advertises).
    pub ap_edca: String,
    /// With "edca": the stations' table ("station": the advertised WMM parameters; or "ap").
    pub station_edca: String,
    /// With "edca": whether the access point's driver aggregates the voice AC (minstrel_ht
    /// starts no block-ack session for it).
    pub aggregate_vo: bool,
    /// With "edca": where each transmitter's qdisc sits. "root" (one qdisc in front of the four
    /// AC queues; a packet whose AC queue is stopped holds it, `dev_requeue_skb`) or "mq" (one
    /// instance of the hop's qdisc per AC, each fed only its AC's packets and dequeued only for
    /// its AC's queue, as Linux's default sch_mq; `queue::mq`).
    pub qdisc_placement: String,
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
    /// Whether each receiver hands a block-ack session's frames on in sequence order (mac80211's
    /// reorder buffer, `net::reorder`), as every 802.11n receiver does (the default); false (the
    /// first model): each subframe goes on as it arrives, so a retried one arrives after its
    /// successors.
    pub rx_reorder: bool,
    /// With `rx_reorder`: how long a receiver holds a frame behind a gap before it hands it on
    /// without the missing ones, discarding those when they come (mac80211's
    /// HT_RX_REORDER_BUF_TIMEOUT, HZ / 10; net/mac80211/rx.c `ieee80211_sta_reorder_release`,
    /// `ieee80211_sta_manage_reorder_buf`); "0s": frames wait for their gap however long.
    pub reorder_timeout: Dur,
    /// How the access point's driver picks the station of its next aggregate: "fifo" (round
    /// robin, ath9k before airtime fairness) or "airtime" (mac80211's airtime deficit round
    /// robin, `net::airtime`).
    pub scheduler: String,
    /// The airtime scheduler's quantum (mac80211's `airtime_weight`, 256 us; ath9k's own
    /// scheduler 300 us).
    pub airtime_quantum: Dur,
    /// Whether the access point's driver has the Airtime Queue Limit (ath10k, ath11k, mt76;
    /// not ath9k): the airtime scheduler then counts the hardware's pending airtime.
    pub aql: bool,
    /// AQL's per-station limits and the radio's threshold (mac80211's aql_txq_limit_low,
    /// aql_txq_limit_high and aql_threshold).
    pub aql_limit_low: Dur,
    pub aql_limit_high: Dur,
    pub aql_threshold: Dur,
    /// The queues between the access point's qdisc and its driver: "fifo" (one FIFO per station,
    /// fed up to `driver_limit`) or "fq_codel" (mac80211's per-station FQ-CoDel, `net::txq`).
    pub txq: String,
    /// The keys of mac80211's queues (`txq = "fq_codel"` only; `net::txq::TxqParams`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<crate::net::txq::TxqParams>")]
    pub txq_params: Option<serde_json::Value>,
}

impl Default for WifiSpec {
    /// 802.11n in the 5 GHz band (slot 9 us, SIFS 16 us, AIFSN 3, CWmin 15, CWmax 1023 for best effort,
    /// block ACK at 24 Mb/s) with Linux ath9k's driver constants (`net::wifi`).
    fn default() -> Self {
        WifiSpec {
            stations: Vec::new(),
            access: "equal".into(),
            ap_edca: "ap".into(),
            station_edca: "station".into(),
            aggregate_vo: false,
            qdisc_placement: "root".into(),
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
            rx_reorder: true,
            reorder_timeout: Dur(100 * MS),
            scheduler: "fifo".into(),
            airtime_quantum: Dur(256 * crate::units::US),
            aql: false,
            aql_limit_low: Dur(5 * MS),
            aql_limit_high: Dur(12 * MS),
            aql_threshold: Dur(24 * MS),
            txq: "fifo".into(),
            txq_params: None,
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
    /// Received signal strength at the access point of the station's transmissions, dBm
    /// (default `rssi`): the link budget need not be the same both ways (each side's transmit
    /// power and antennas). Needs `rssi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_rssi: Option<f64>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregate_vo: Option<bool>,
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
        let ack_n_dbps = crate::net::phy::LEGACY_RATES
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

    /// Whether each transmitter has one qdisc per access category (`qdisc_placement = "mq"`).
    pub fn per_ac_qdisc(&self) -> bool {
        self.qdisc_placement == "mq"
    }

    /// The receivers' reorder timeout (`reorder_timeout`; none for "0s").
    pub fn reorder_timeout(&self) -> Option<crate::units::Time> {
        (self.reorder_timeout.0 > 0).then_some(self.reorder_timeout.0)
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
            aggregate_vo: self.aggregate_vo,
        }
    }

    /// The access categories of the access point (`ap`) or of a station: the medium's one
    /// without EDCA, else the four of the role's table.
    pub fn acs(&self, ap: bool) -> Vec<crate::net::edca::AcParams> {
        use crate::net::edca::EdcaTable;
        if crate::net::wifi::Access::parse(&self.access) != Some(crate::net::wifi::Access::Edca) {
            return vec![self.mac().ac()];
        }
        let table = if ap { &self.ap_edca } else { &self.station_edca };
        EdcaTable::parse(table)
            .expect("validated: edca table")
            .params()
            .to_vec()
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
            aggregate_vo: d.aggregate_vo.unwrap_or(ap.aggregate_vo),
        }
    }

    /// The access point's airtime scheduler over its stations (none: scheduler "fifo").
    pub fn airtime(&self) -> Option<crate::net::airtime::Airtime> {
        use crate::net::airtime::{Airtime, AirtimeParams, Scheduler};
        let params = AirtimeParams {
            quantum: self.airtime_quantum.0,
            aql: self.aql,
            aql_low: self.aql_limit_low.0,
            aql_high: self.aql_limit_high.0,
            aql_threshold: self.aql_threshold.0,
        };
        match Scheduler::parse(&self.scheduler).expect("validated: scheduler") {
            Scheduler::Fifo => None,
            Scheduler::Airtime => Some(Airtime::new(params, self.stations.len())),
        }
    }

    /// The keys of mac80211's queues, read over their defaults (errors name the key).
    pub fn txq_params(&self) -> Result<crate::net::txq::TxqParams, String> {
        use crate::net::txq::TxqParams;
        let table = self.txq_params.clone().unwrap_or_else(|| serde_json::json!({}));
        let Some(keys) = table.as_object() else {
            return Err(format!("{table} is not allowed; allowed: a table"));
        };
        let known = crate::params::keys::<TxqParams>();
        if let Some(k) = keys.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(format!("{k}: unknown key; allowed: {}", known.join(", ")));
        }
        crate::params::read(&table, TxqParams::default(), &())
    }

    /// The access point's queues below its qdisc (none: the FIFOs, txq "fifo").
    pub fn txq(&self, seed: u64) -> Option<crate::net::txq::Txq> {
        use crate::net::txq::{Txq, TxqKind};
        match TxqKind::parse(&self.txq).expect("validated: txq") {
            TxqKind::Fifo => None,
            TxqKind::FqCodel => {
                let p = self.txq_params().expect("validated: txq_params");
                Some(Txq::new(p, self.stations.len(), seed))
            }
        }
    }

    /// The PHY at `mcs` on the medium's width and guard interval.
    pub fn phy(&self, mcs: u8) -> crate::net::phy::Phy {
        crate::net::phy::Phy {
            mcs,
            width40: self.width == 40,
            short_gi: self.guard == "short",
        }
    }

    /// The channel from the AP to a station (`up` false) or from the station to the AP: the
    /// station's `rssi` both ways unless `up_rssi` sets the way up.
    pub fn channel(&self, st: &StationSpec, up: bool) -> crate::net::wifi_rate::Channel {
        let rssi = if up { st.up_rssi.or(st.rssi) } else { st.rssi };
        match rssi {
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
            channel: self.channel(st, up),
            rc: crate::net::wifi_rate::RateControl::new(rc, phy, mcs, rng).expect("validated: rate_control"),
        }
    }
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
    /// The link rate (or schedule); none on a WiFi hop, whose rates are its stations' PHYs, or
    /// on a trace hop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateSpec>,
    /// A trace in Mahimahi's format in place of `rate` (`net::trace`, mm-link's semantics): a
    /// file with one delivery opportunity of 1500 bytes per line, its time in ms; the trace
    /// repeats with the last time as its period. A path relative to the scenario's file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
    /// netem's slots (`net::slot`, Linux sch_netem.c): the qdisc is dequeued only while a
    /// slot's budget lasts, the next slot starting a uniform time in [min, max) after the
    /// budget is spent; so the hop delivers in bursts. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<SlotSpec>,
    /// The DOCSIS upstream MAC (`net::docsis`, the DOCSIS 3.1 MULPI spec's request-grant
    /// cycle): the qdisc is dequeued only in the grants the CMTS makes per MAP, up to `rate`
    /// (the service flow's Max Sustained Rate) per MAP, and a granted burst leaves at the
    /// channel's rate. Needs a fixed `rate`. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docsis: Option<DocsisSpec>,
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
    /// A shaper that decides when the qdisc may send: "htb", Linux's HTB with one class at
    /// `rate` (ceil = rate) whose leaf is `qdisc` (`queue::htb`, from Linux 3.2's sch_htb.c),
    /// a `rate` schedule changing the class at each step as `tc class change` does (rates above
    /// 0); the hop then serialises at the hosts' `nic_rate`, the interface's own rate, so a
    /// burst leaves back to back. Default (or "none"): no shaper, the hop serialises at `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shaper: Option<Shaper>,
    /// HTB's `burst` in bytes (needs `shaper = "htb"`); default tc's: rate / HZ + 1600 B
    /// (tc/q_htb.c), 1600 B below 8 Gb/s on a kernel with high-resolution timers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub htb_burst: Option<Size>,
    /// HTB's `cburst` in bytes, the ceil bucket's (needs `shaper = "htb"`); default as
    /// `htb_burst`'s, from the ceil, which is the rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub htb_cburst: Option<Size>,
    /// Propagation delay after the hop: before the next one, or, after the last hop of its
    /// chain (and on the shorthand's hops), before the flows' access paths, which hold `rtt`.
    /// Or a schedule of steps (a path that changes: a satellite's reconfigurations): a packet
    /// takes the delay in force when it leaves the hop, and never arrives before the packet
    /// ahead of it unless `delay_reorder`. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<DelaySpec>,
    /// With a delay schedule: a packet sent after a step down may arrive before those sent
    /// before it (two paths at once), instead of waiting behind them. Default false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delay_reorder: bool,
    /// The delay as netem's queue (Linux 3.2 sch_netem.c, `net::Tfifo`): at most this many
    /// packets wait in it at once ("1000p", netem's default `limit`, tc/q_netem.c), an arrival
    /// beyond them is dropped (counted with the hop's overlimit drops). Needs `delay`. Default
    /// none: a propagation delay holds any number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_limit: Option<LimitSpec>,
    /// netem's jitter on the delay: each packet's delay is drawn uniformly in
    /// [delay - jitter, delay + jitter), and packets leave in order of their drawn times (netem's
    /// tfifo), so they may be reordered. Needs `delay`; at most `delay`. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_jitter: Option<Dur>,
    /// One link per client host, in parallel, each with this hop's settings (only in
    /// `topology.hops`, on the first hop of the up chain or the last of the down chain: the
    /// hosts' own access links, e.g. separate home routers in front of a shared bottleneck).
    /// Flows pick theirs with `host` (default the first); the links are named `<hop>/<host>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The hop's qdisc runs in the sending hosts themselves (a host shaping its own uplink), as
    /// Linux's does: the first hop of its chain, with the flows' access delay all beyond it
    /// (on the receiving side) and the hosts' NICs below it; the enqueue's verdict reaches a
    /// kernel TCP sender at once (`queue::LocalVerdict`). Default false: the qdisc is in a
    /// router, a drop is a loss on the path.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local_sender: bool,
}

/// A trace as the core takes it: its lines, read from its file by the Python layer
/// (`aqmlab.traces`), which hands the file's name over with them for the record.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// The file the lines were read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// One delivery opportunity per line: ms from the trace's start, non-decreasing.
    pub ms: Vec<u64>,
}

/// netem's `slot MIN [MAX] [packets N] [bytes N]` (`LinkSpec::slot`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlotSpec {
    /// The shortest wait from a spent slot (or an arrival at an idle hop) to the next slot.
    pub min: Dur,
    /// The longest wait, exclusive; default `min` (tc's: slots a fixed time apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Dur>,
    /// Packets per slot; default none: no bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u32>,
    /// Bytes per slot (the packet that crosses the bound still leaves); default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
}

impl SlotSpec {
    /// The slot as the core runs it.
    pub fn config(&self) -> crate::net::slot::SlotConfig {
        crate::net::slot::SlotConfig {
            min: self.min.0,
            max: self.max.map_or(self.min.0, |m| m.0),
            packets: self.packets.unwrap_or(0),
            bytes: self.bytes.map_or(0, |b| b.0),
        }
    }
}

/// A DOCSIS upstream's request-grant MAC (`LinkSpec::docsis`); its Max Sustained Rate is the
/// hop's `rate`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocsisSpec {
    /// The MAP interval: each MAP grants one interval of upstream time. Default 2 ms (the
    /// MULPI spec's nominal MAP interval, up to 2 ms).
    #[serde(default = "DocsisSpec::default_map")]
    pub map: Dur,
    /// The request-grant delay: from a request's transmission to the earliest MAP that can
    /// grant it (its trip to the CMTS, the scheduler, the MAP sent ahead of its interval).
    /// Default 4 ms, two MAPs.
    #[serde(default = "DocsisSpec::default_rg_delay")]
    pub rg_delay: Dur,
    /// The upstream channel's rate, at which a grant's packets leave. Default 122.88 Mb/s:
    /// four bonded SC-QAM channels of 5.12 Msym/s at 64-QAM (30.72 Mb/s each).
    #[serde(default = "DocsisSpec::default_channel_rate")]
    pub channel_rate: Rate,
    /// How the Max Sustained Rate is enforced: "per_map" (default: each MAP grants at most the
    /// rate's share of one MAP) or "token_bucket" (MULPI's token bucket on the requests, with
    /// `max_burst` and `peak_rate`; CableLabs' ns-2 and ns-3 DOCSIS models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_shaper: Option<RateShaperKind>,
    /// The Maximum Traffic Burst, the token bucket's depth; default the rate's bytes in 100 ms
    /// (as the ns-3 DOCSIS model's examples set it, residential-example.cc `maximumBurstTime`).
    /// Only with `rate_shaper = "token_bucket"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_burst: Option<Size>,
    /// The Peak Traffic Rate; default none. Only with `rate_shaper = "token_bucket"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rate: Option<Rate>,
}

/// A DOCSIS MAC's rate enforcement (`DocsisSpec::rate_shaper`).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RateShaperKind {
    PerMap,
    TokenBucket,
}

impl DocsisSpec {
    fn default_map() -> Dur {
        Dur(2 * MS)
    }
    fn default_rg_delay() -> Dur {
        Dur(4 * MS)
    }
    fn default_channel_rate() -> Rate {
        Rate(4 * 30_720_000)
    }

    /// The Maximum Traffic Burst when none is given: the Max Sustained Rate's bytes in this.
    pub const DEFAULT_BURST_TIME: Time = 100 * MS;

    /// The MAC as the core runs it, for a hop whose Max Sustained Rate is `rate`.
    pub fn config(&self, rate: u64) -> crate::net::docsis::MacConfig {
        use crate::net::docsis::{Bucket, MacConfig, RateShaper};
        MacConfig {
            map: self.map.0,
            rg_delay: self.rg_delay.0,
            max_rate: rate,
            channel_rate: self.channel_rate.0,
            shaper: match self.rate_shaper {
                None | Some(RateShaperKind::PerMap) => RateShaper::PerMap,
                Some(RateShaperKind::TokenBucket) => RateShaper::TokenBucket(Bucket {
                    max_burst: self.max_burst.map_or(
                        (rate as u128 * Self::DEFAULT_BURST_TIME as u128 / (8 * SEC as u128)) as u64,
                        |b| b.0,
                    ),
                    peak_rate: self.peak_rate.map_or(0, |r| r.0),
                }),
            },
        }
    }
}

/// A hop's shaper (`LinkSpec::shaper`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Shaper {
    Htb,
    /// No shaper, as when the key is absent: a value a sweep's grid can set beside "htb".
    None,
}

/// A fixed rate ("10Mbps") or a schedule of steps ([["0s", "100Mbps"], ["50s", "10Mbps"]]).
#[derive(Clone, Debug, PartialEq)]
pub struct RateSpec(pub Vec<(Time, u64)>);

/// A fixed delay ("30ms") or a schedule of steps ([["0s", "30ms"], ["15s", "45ms"]]).
#[derive(Clone, Debug, PartialEq)]
pub struct DelaySpec(pub Vec<(Time, Time)>);

impl DelaySpec {
    /// The delay at time 0.
    pub fn initial(&self) -> Time {
        self.0[0].1
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

/// A direction of the path: a hop's, or a flow's data.
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
