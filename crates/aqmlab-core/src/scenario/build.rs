//! Turns a validated scenario into a world, runs it, and collects the results.
//!
//! Placement of delay: a flow's `rtt` is split evenly between its client-side and server-side
//! access paths (each one-way rtt/4), with the path's hops between them; hop delays add to it.
//! Random draws come from streams named after what they decide ("start/<group>",
//! "qdisc/<hop>", "loss/<hop>", "flow/<id>"; the shorthand's hops are named "up" and "down"),
//! derived from the run seed.

use super::flow::{FlowModels, Http};
use super::{
    DirSpec, FlowCount, FlowKind, FlowModel, FlowSpec, HopRef, Scenario, StartPer, StartSpec, StationSpec,
};
use crate::app::packmime::{self, PackMimeParams};
use crate::app::ping::PingClient;
use crate::app::repeat::{RepeatReceiver, RepeatSender};
use crate::app::udp::UdpSource;
use crate::app::web::{ConnModel, WebClient, WebServer};
use crate::app::webpage::{self, PageParams};

use crate::net::docsis::Mac;
use crate::net::slot::Slot;
use crate::net::trace::Trace;
use crate::net::wifi::{Driver, Medium, Port};
use crate::net::{DelaySteps, Delivery, HostJitter, Link, Tfifo};
use crate::packet::Dir;
use crate::queue::registry::{self, AnyQdisc, ExternalQdiscs};
use crate::queue::{htb, mq, LinkInfo, Qdisc, SUBQUEUES};
use crate::record::rows::{FlowReport, FlowRow, LinkRow, LinkStats, PageRow, ProbeRow, WebRow};
use crate::record::tables::Recorded;
use crate::record::Recorder;
use crate::rng::Rng;
use crate::sim::{AnyEndpoint, EventKind, Flow, World};
use crate::transport::cc::tcp_lp;
use crate::transport::tcp::{try_new_connection, TcpConfig, TcpSender};
use crate::units::{Time, SEC};
use std::sync::Arc;

/// Everything a run produces: what it recorded (`recorded`, whose tables read as fields of the
/// result: `result.flows`) and its metadata.
pub struct RunResult {
    pub resolved: Scenario,
    pub seed: u64,
    pub duration: Time,
    pub events: u64,
    /// The events by kind (`sim::EventKind`).
    pub event_kinds: [u64; EventKind::ALL.len()],
    pub recorded: Recorded,
    pub conservation: Result<(), String>,
    /// High-water mark of packets alive at once (slab size).
    pub peak_packets: usize,
    /// The random streams the run drew from (`rng::streams_drawn`) while it was resolved, built
    /// and simulated: none means its results are the same for every seed. `None` where that is
    /// not known (a discipline outside the core, the emulator).
    pub random_streams: Option<u64>,
}

impl RunResult {
    /// Moves the recorded data out; the metadata fields stay.
    pub fn take_recorded(&mut self) -> Recorded {
        std::mem::take(&mut self.recorded)
    }
}

impl std::ops::Deref for RunResult {
    type Target = Recorded;
    fn deref(&self) -> &Recorded {
        &self.recorded
    }
}

impl std::ops::DerefMut for RunResult {
    fn deref_mut(&mut self) -> &mut Recorded {
        &mut self.recorded
    }
}

/// Flow `f` with every default written out, and its model; `end` is the scenario's duration.
fn resolve_flow(models: &mut FlowModels, f: &FlowSpec, end: Time) -> (FlowSpec, FlowModel) {
    let (model, keys) = models.resolve(f, end).expect("validated");
    let direction = match f.kind {
        FlowKind::Ping | FlowKind::Voip => DirSpec::Up,
        FlowKind::Udp | FlowKind::Tcp | FlowKind::Web | FlowKind::Webpage => {
            f.direction.unwrap_or(DirSpec::Down)
        }
    };
    let resolved = FlowSpec {
        count: Some(f.count.unwrap_or(FlowCount(1))),
        start: Some(f.start.clone().unwrap_or(StartSpec::At(0))),
        direction: Some(direction),
        keys,
        ..f.clone()
    };
    (resolved, model)
}

/// What every hop of a path is built with: the path's MTU and its hosts' NIC rate, the run
/// seed, and what builds the disciplines the core does not hold.
struct PathInfo<'a> {
    mtu: u32,
    nic_rate: Option<u64>,
    seed: u64,
    ext: Option<&'a dyn ExternalQdiscs>,
}

/// Builds one hop: `name` is the link's own (a WiFi station's is "<hop>/<station>"), `stream`
/// names its random streams, `schedule` its rate steps.
fn build_link(
    hop: &HopRef,
    name: String,
    stream: &str,
    schedule: Vec<(Time, u64)>,
    path: &PathInfo,
    per_ac: bool,
) -> Result<(Link, super::QdiscSpec), String> {
    let PathInfo { mtu, seed, ext, .. } = *path;
    let spec = hop.spec;
    let info = LinkInfo {
        // the rate at 0, or after an outage there the first the hop has
        rate_bps: schedule
            .iter()
            .map(|s| s.1)
            .find(|&r| r > 0)
            .expect("validated: a rate above 0"),
        mtu,
        limit: spec.limit.map(|l| l.0),
        wifi: spec.wifi,
    };
    let params = serde_json::Value::Object(spec.qdisc.params.clone());
    let key = format!("{}.qdisc", hop.key);
    let build = |rng: &str| {
        let rng = Rng::stream(seed, rng);
        registry::build_with(&spec.qdisc.kind, &params, &info, rng, &key, ext)
    };
    let (leaf, resolved) = build(&format!("qdisc/{stream}"))?;
    // `per_ac` (qdisc_placement "mq"): the same discipline once per access category, the first
    // on the hop's stream
    let leaf = if per_ac {
        let mut children = vec![leaf];
        for k in 1..mq::CHILDREN {
            children.push(build(&format!("qdisc/{stream}/ac{k}"))?.0);
        }
        AnyQdisc::External(Box::new(mq::Mq::new(children, crate::net::edca::ac_of)))
    } else {
        leaf
    };
    check_token_bucket_estimator(&key, &spec.qdisc.kind, &resolved, spec)?;
    let (qdisc, shaper_line) = shaped(leaf, spec, &schedule, path.nic_rate);
    // a DOCSIS upstream's grants leave at its channel's rate (validated: no shaper with it)
    let line_rate = spec
        .docsis
        .as_ref()
        .map_or(shaper_line, |d| Some(d.channel_rate.0));
    let resolved_spec = super::QdiscSpec {
        kind: spec.qdisc.kind.clone(),
        params: resolved.as_object().cloned().unwrap_or_default(),
    };
    let link = Link {
        dir: hop.dir,
        name,
        next: None,
        exit_here: false,
        parallel: false,
        delay: spec
            .delay
            .as_ref()
            .map_or(0, |d| d.0.iter().map(|s| s.1).max().unwrap_or(0)),
        delay_steps: spec.delay.as_ref().filter(|d| d.0.len() > 1).map(|d| {
            Box::new(DelaySteps {
                steps: d.0.clone(),
                reorder: spec.delay_reorder,
            })
        }),
        tfifo: tfifo(spec, stream, seed),
        qdisc,
        qdisc_name: spec.qdisc.kind.clone(),
        schedule,
        line_rate,
        tx: None,
        device: std::collections::VecDeque::new(),
        device_limit: spec.device_queue.map_or(0, |l| match l.0 {
            crate::units::Limit::Packets(p) => p as usize,
            crate::units::Limit::Bytes(_) => unreachable!("validated: packets"),
        }),
        loss: spec.loss,
        loss_rng: Rng::stream(seed, &format!("loss/{stream}")),
        stats: LinkStats::default(),
        timer_armed: None,
        wifi: None,
        trace: spec.trace.as_ref().map(|t| Box::new(Trace::new(&t.ms))),
        slot: spec.slot.as_ref().map(|s| {
            Box::new(Slot::new(
                s.config(),
                Rng::stream(seed, &format!("slot/{stream}")),
            ))
        }),
        docsis: spec
            .docsis
            .as_ref()
            .map(|d| Box::new(Mac::new(d.config(info.rate_bps)))),
        delivery: Delivery::Serialiser,
    };
    Ok((link, resolved_spec))
}

/// PIE's `estimator = "token_bucket"` (or `"token_bucket_last_request"`) reads the token bucket
/// of the hop's DOCSIS MAC: it is refused on another discipline (fq_pie's flows are not given
/// the bucket) and on a hop without `docsis.rate_shaper = "token_bucket"`.
fn check_token_bucket_estimator(
    key: &str,
    kind: &str,
    resolved: &serde_json::Value,
    spec: &super::LinkSpec,
) -> Result<(), String> {
    let Some(name @ ("token_bucket" | "token_bucket_last_request")) =
        resolved.get("estimator").and_then(|e| e.as_str())
    else {
        return Ok(());
    };
    let bucket = spec
        .docsis
        .as_ref()
        .is_some_and(|d| d.rate_shaper == Some(super::RateShaperKind::TokenBucket));
    if kind != "pie" || !bucket {
        return Err(format!(
            "{key}.estimator: \"{name}\" needs pie on a hop with docsis = {{ rate_shaper = \"token_bucket\" }}; \
             allowed there: timestamp, rate, configured"
        ));
    }
    Ok(())
}

/// The hop's delay as netem's tfifo when it has a limit or a jitter.
fn tfifo(spec: &super::LinkSpec, stream: &str, seed: u64) -> Option<Tfifo> {
    if spec.delay_limit.is_none() && spec.delay_jitter.is_none() {
        return None;
    }
    Some(Tfifo {
        limit: spec.delay_limit.map_or(usize::MAX, |l| match l.0 {
            crate::units::Limit::Packets(p) => p as usize,
            crate::units::Limit::Bytes(_) => unreachable!("validated: packets"),
        }),
        jitter: spec.delay_jitter.map_or(0, |j| j.0),
        rng: Rng::stream(seed, &format!("netem/{stream}")),
    })
}

/// The hop's qdisc under its shaper, and the rate its serialiser then runs at: with
/// `shaper = "htb"`, HTB's class at the hop's rate over the qdisc, changed at each step of its
/// schedule (bursts tc's defaults at each rate unless given), sending at the hosts' NIC rate
/// (validated finite).
fn shaped(
    leaf: AnyQdisc,
    spec: &super::LinkSpec,
    schedule: &[(Time, u64)],
    nic: Option<u64>,
) -> (AnyQdisc, Option<u64>) {
    match spec.shaper {
        None | Some(super::Shaper::None) => (leaf, None),
        Some(super::Shaper::Htb) => {
            let burst = |given: Option<crate::units::Size>, rate| {
                given.map_or_else(|| htb::tc_default_burst(rate), |b| b.0)
            };
            let steps: Vec<(Time, htb::Class)> = schedule
                .iter()
                .map(|&(at, rate_bps)| {
                    let class = htb::Class {
                        rate_bps,
                        burst: burst(spec.htb_burst, rate_bps),
                        cburst: burst(spec.htb_cburst, rate_bps),
                    };
                    (at, class)
                })
                .collect();
            (AnyQdisc::Htb(Box::new(htb::Htb::scheduled(leaf, &steps))), nic)
        }
    }
}

/// Per direction, the link of the chain's first hop when its qdisc is in the sending hosts
/// (`local_sender`).
fn local_sender_hops(sc: &Scenario, links: &[Link]) -> [Option<usize>; 2] {
    let hops = sc.topology.hops();
    Dir::BOTH.map(|d| {
        let local = hops
            .iter()
            .find(|h| h.dir == d)
            .is_some_and(|h| h.spec.local_sender);
        local.then(|| {
            links
                .iter()
                .position(|l| l.dir == d)
                .expect("every direction has a hop")
        })
    })
}

/// The one-way delays of a flow's client-side and server-side access paths for `rtt`: rtt/4
/// each, or, where the flow meets a qdisc in its sending host (`local`, per direction), none
/// before that qdisc and rtt/2 beyond the path's other end.
fn access_delays(rtt: Time, local: [bool; 2]) -> (Time, Time) {
    match local {
        [true, _] => (0, rtt / 2),
        [_, true] => (rtt / 2, 0),
        _ => (rtt / 4, rtt / 2 - rtt / 4),
    }
}

/// The path's hops and media.
struct Path {
    /// Every hop (up chain first, then down, in `hops()` order), each linked to the next of
    /// its direction, then the WiFi stations after the first, each a parallel first hop of the
    /// up chain (the first station's is the WiFi hop's own place).
    links: Vec<Link>,
    /// The resolved qdisc of each hop of `hops()`.
    qdiscs: Vec<super::QdiscSpec>,
    media: Vec<Medium>,
    /// The link of each WiFi station.
    stations: Vec<u32>,
    /// Per direction, the link of each host on a hop with one link per host (empty: none);
    /// the first host's is the hop's own place, the others follow the stations.
    hosts: [Vec<u32>; 2],
}

/// Builds the hops of the path; a WiFi hop becomes the access point's driver (down) or one
/// link per station (up), all transmitting on one medium; a hop with `hosts` one link per host.
/// `ext` builds the disciplines the core does not hold.
fn build_path(sc: &Scenario, seed: u64, ext: Option<&dyn ExternalQdiscs>) -> Result<Path, String> {
    let mtu = sc.topology.mtu.0 as u32;
    let path = PathInfo {
        mtu,
        nic_rate: sc.topology.nic_rate.0,
        seed,
        ext,
    };
    let hops = sc.topology.hops();
    let wifi = sc.topology.wifi.as_ref();
    let mac = wifi.map(|w| w.mac());
    // The most a transmitter carries towards a station: full aggregates at its highest MCS.
    let nominal = |d: &Driver, mcs: u8| {
        let w = wifi.expect("a medium");
        d.saturation_rate(mac.as_ref().expect("a medium"), &w.phy(mcs), mtu)
    };
    let radio = |st: &StationSpec, up: bool| {
        let side = if up { "up" } else { "down" };
        let mut rng = Rng::stream(seed, &format!("wifi/rate/{}/{side}", st.name));
        wifi.expect("a medium").radio(st, up, &mut rng)
    };
    let mut links = Vec::new();
    let mut qdiscs = Vec::new();
    let mut stations = Vec::new();
    let mut extra = Vec::new();
    let mut host_extra: Vec<(usize, Link)> = Vec::new();
    let mut hosts: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for h in &hops {
        // a trace hop's rate, for the summary and the disciplines, is its trace's mean
        let rate = h.spec.rate.clone().or_else(|| {
            let t = h.spec.trace.as_ref()?;
            Some(super::RateSpec(vec![(0, Trace::new(&t.ms).mean_rate())]))
        });
        let (link, q) = match (&rate, h.dir) {
            (Some(r), _) if !h.spec.hosts.is_empty() => {
                let mut first = None;
                for (k, host) in h.spec.hosts.iter().enumerate() {
                    // The first host keeps the hop's streams, so one host is the hop.
                    let name = format!("{}/{host}", h.name);
                    let stream = if k == 0 { h.name.clone() } else { name.clone() };
                    let (l, q) = build_link(h, name, &stream, r.0.clone(), &path, false)?;
                    if k == 0 {
                        hosts[h.dir.index()].push(links.len() as u32);
                        first = Some((l, q));
                    } else {
                        host_extra.push((links.len(), l));
                    }
                }
                let (mut l, q) = first.expect("validated: hosts");
                l.parallel = h.spec.hosts.len() > 1;
                (l, q)
            }
            (Some(r), _) => build_link(h, h.name.clone(), &h.name, r.0.clone(), &path, false)?,
            (None, Dir::Down) => {
                // The fastest station's: the most the AP can carry, so utilisation stays <= 1.
                let w = wifi.expect("validated: a medium");
                let d = w.driver();
                let rate = w.stations.iter().map(|st| nominal(&d, st.mcs)).max();
                let rate = rate.expect("validated: stations");
                let (mut l, q) = build_link(
                    h,
                    h.name.clone(),
                    &h.name,
                    vec![(0, rate)],
                    &path,
                    w.per_ac_qdisc(),
                )?;
                let radios = w.stations.iter().map(|st| radio(st, false)).collect();
                let mut port = Port::new(0, d, radios, &w.acs(true));
                port.airtime = w.airtime().map(Box::new);
                let seed = Rng::stream(path.seed, &format!("wifi/txq/{}", h.name)).next_u64();
                port.txq = w.txq(seed).map(Box::new);
                if w.rx_reorder {
                    port.reorder(w.reorder_timeout());
                }
                l.wifi = Some(Box::new(port));
                (l, q)
            }
            (None, Dir::Up) => {
                let w = wifi.expect("validated: a medium");
                let mut first = None;
                for (k, st) in w.stations.iter().enumerate() {
                    // The first station keeps the hop's streams, so one station is the hop.
                    let stream = if k == 0 {
                        h.name.clone()
                    } else {
                        format!("{}/{}", h.name, st.name)
                    };
                    let name = format!("{}/{}", h.name, st.name);
                    let d = w.station_driver(st);
                    let rate = nominal(&d, st.up_mcs.unwrap_or(st.mcs));
                    let (mut l, q) = build_link(h, name, &stream, vec![(0, rate)], &path, w.per_ac_qdisc())?;
                    let mut port = Port::new(0, d, vec![radio(st, true)], &w.acs(false));
                    if w.rx_reorder {
                        port.reorder(w.reorder_timeout());
                    }
                    l.wifi = Some(Box::new(port));
                    if k == 0 {
                        first = Some((l, q));
                    } else {
                        extra.push(l);
                    }
                }
                first.expect("validated: stations")
            }
        };
        links.push(link);
        qdiscs.push(q);
    }
    for k in 1..links.len() {
        if links[k - 1].dir == links[k].dir {
            links[k - 1].next = Some(k as u32);
        }
    }
    let mut media = Vec::new();
    if let Some(mac) = mac {
        let ap = links.iter().position(|l| l.wifi.is_some() && l.dir == Dir::Down);
        let sta = links.iter().position(|l| l.wifi.is_some() && l.dir == Dir::Up);
        let (ap, sta) = (ap.expect("validated"), sta.expect("validated"));
        stations.push(sta as u32);
        for mut l in extra {
            l.next = links[sta].next;
            stations.push(links.len() as u32);
            links.push(l);
        }
        let mut ports = vec![ap as u32];
        ports.extend(&stations);
        media.push(Medium {
            mac,
            ports,
            on_air: Vec::new(),
            rng: Rng::stream(seed, "medium/wifi"),
            busy_time: 0,
        });
    }
    // Each host's link leads where the hop's own does (the next hop up, or out of the path).
    for (at, mut l) in host_extra {
        l.next = links[at].next;
        hosts[l.dir.index()].push(links.len() as u32);
        links.push(l);
    }
    for l in &mut links {
        l.delivery = Delivery::of(l);
    }
    Ok(Path {
        links,
        qdiscs,
        media,
        stations,
        hosts,
    })
}

/// What a WiFi hop's driver did: transmissions, subframes per aggregate, the share of the run
/// its transmissions held the medium, the most frames it held, subframe retries.
fn wifi_diagnostics(l: &Link, end: Time) -> Vec<(&'static str, f64)> {
    let Some(w) = &l.wifi else {
        return Vec::new();
    };
    let s = &w.stats;
    vec![
        ("wifi_txops", s.txops as f64),
        ("wifi_mean_subframes", s.subframes as f64 / s.txops.max(1) as f64),
        ("wifi_airtime_share", s.airtime as f64 / end.max(1) as f64),
        ("wifi_driver_peak", s.peak_pending as f64),
        ("wifi_retries", s.retried as f64),
        ("wifi_collisions", s.collisions as f64),
        ("wifi_mean_mcs", s.mcs_sum as f64 / s.subframes.max(1) as f64),
    ]
}

/// The airtime the access point charged each station, by the station's link (its hop up):
/// the PPDU airtime of the access point's transmissions to it (every attempt) and of its
/// transmissions received whole (`net::airtime`), in seconds, and its share of all stations'
/// (the measure the airtime scheduler equalises).
fn station_airtime(links: &[Link]) -> Vec<(usize, Vec<(&'static str, f64)>)> {
    let Some(ap) = links
        .iter()
        .find_map(|l| l.wifi.as_deref().filter(|_| l.dir == Dir::Down))
    else {
        return Vec::new();
    };
    let s = &ap.stats;
    let air: Vec<Time> = s
        .tx_airtime
        .iter()
        .zip(&s.rx_airtime)
        .map(|(t, r)| t + r)
        .collect();
    let total = air.iter().sum::<Time>().max(1) as f64;
    // the stations' links are the up chain's WiFi links, in the order of `topology.wifi.stations`
    let sta = links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.dir == Dir::Up && l.wifi.is_some());
    sta.zip(air)
        .map(|((k, _), a)| {
            let d = vec![
                ("wifi_station_airtime_s", a as f64 / SEC as f64),
                ("wifi_station_airtime_share", a as f64 / total),
            ];
            (k, d)
        })
        .collect()
}

/// The diagnostics `rows` holds for link `k` (none if it holds none).
fn take_for(rows: &mut [(usize, Vec<(&'static str, f64)>)], k: usize) -> Vec<(&'static str, f64)> {
    rows.iter_mut()
        .find(|(at, _)| *at == k)
        .map_or(Vec::new(), |(_, d)| std::mem::take(d))
}

/// What a trace hop's opportunities, a slot hop's slots and a DOCSIS hop's MAC did:
/// opportunities taken with something queued, opportunities lost with nothing queued, slots
/// drawn; contention requests, piggybacked requests, MAPs that granted something.
fn delivery_diagnostics(l: &Link) -> Vec<(&'static str, f64)> {
    let mut out = Vec::new();
    if let Some(t) = &l.trace {
        out.push(("trace_used", t.stats.used as f64));
        out.push(("trace_lost", t.stats.lost as f64));
    }
    if let Some(s) = &l.slot {
        out.push(("slots", s.slots as f64));
    }
    if let Some(m) = &l.docsis {
        out.push(("docsis_contention", m.contention as f64));
        out.push(("docsis_piggyback", m.piggyback as f64));
        out.push(("docsis_grants", m.grants as f64));
    }
    out
}

fn endpoints(
    f: &FlowSpec,
    model: &FlowModel,
    id: u32,
    start: Time,
    stop: Time,
    seed: u64,
) -> Result<(AnyEndpoint, AnyEndpoint, String, u64), String> {
    let dir = f.direction.expect("resolved").dir();
    // A TCP-based flow's connections: its model, what it sends, until when.
    let tcp_config = |tcp: &TcpConfig, bytes: Option<u64>, on_periods| TcpConfig {
        bytes,
        stop: f.stop.map(|d| d.0),
        on_periods,
        ..tcp.clone()
    };
    Ok(match model {
        FlowModel::Udp(u) => {
            let src = UdpSource::new(
                id,
                dir,
                u.packet_size.0 as u32,
                u.rate.expect("validated").0,
                u.arrivals,
                stop,
                u.ecn.codepoint(),
                Rng::stream(seed, &format!("flow/{id}")),
            );
            (
                AnyEndpoint::UdpSource(Box::new(src)),
                AnyEndpoint::UdpSink(Box::default()),
                String::new(),
                0,
            )
        }
        FlowModel::Ping(p) | FlowModel::Voip(p) => {
            let timeout = (p.timeout.0 > 0).then_some(p.timeout.0);
            let c = PingClient::new(id, p.packet_size.0 as u32, p.pattern, p.interval.0, timeout, stop);
            (
                AnyEndpoint::PingClient(Box::new(c)),
                AnyEndpoint::PingServer(Box::default()),
                String::new(),
                0,
            )
        }
        FlowModel::Web { web, conn, tcp } => {
            let cfg = tcp_config(tcp, None, Vec::new());
            let params = PackMimeParams {
                rate: web.conn_rate.expect("validated"),
                http_1_1: web.http == Http::V1_1,
            };
            let plan: Arc<[packmime::Connection]> = packmime::plan(&params, start, stop, seed, id).into();
            TcpSender::new(&cfg, id, dir)?;
            let model = ConnModel {
                persistent: conn.persistent,
                piggyback: conn.piggyback,
            };
            let server = WebServer::new(plan.clone(), cfg.clone(), id, model);
            let client = WebClient::new(plan, cfg.clone(), id, stop, model);
            (
                AnyEndpoint::WebServer(Box::new(server)),
                AnyEndpoint::WebClient(Box::new(client)),
                cfg.cc.to_string(),
                0,
            )
        }
        FlowModel::Webpage { page, conn, tcp } => {
            let cfg = tcp_config(tcp, None, Vec::new());
            let objects: Arc<[u64]> = match &page.objects {
                Some(o) => o.iter().map(|s| s.0).collect(),
                None => webpage::page(page.page.as_deref().expect("resolved"))
                    .expect("validated")
                    .into(),
            };
            let params = PageParams {
                objects,
                workers: page.workers,
                interval: page.interval.0,
                timeout: page.timeout.expect("resolved").0,
                dns_timeout: page.dns_timeout.0,
                dns_attempts: page.dns_attempts,
                persistent: conn.persistent,
                piggyback: conn.piggyback,
            };
            TcpSender::new(&cfg, id, dir)?;
            let (server, client) = webpage::ends(params, cfg.clone(), id, start, stop);
            (
                AnyEndpoint::PageServer(Box::new(server)),
                AnyEndpoint::PageClient(Box::new(client)),
                cfg.cc.to_string(),
                0,
            )
        }
        FlowModel::Tcp { transfer, tcp } => {
            let on_periods = match (&transfer.on_off, transfer.first_write) {
                (Some(o), _) => o.periods(start, stop, &mut Rng::stream(seed, &format!("onoff/{id}"))),
                (None, Some(w)) => vec![(start + w.0, stop.max(start + w.0))],
                (None, None) => Vec::new(),
            };
            let cfg = TcpConfig {
                preamble: transfer.preamble.map_or(0, |p| p.0),
                ..tcp_config(tcp, transfer.bytes.map(|b| b.0), on_periods)
            };
            let target = cfg.bytes.unwrap_or(0);
            match &transfer.repeat {
                Some(r) => {
                    let [lo, hi] = r.idle;
                    let rng = Rng::stream(seed, &format!("repeat/{id}"));
                    let snd = RepeatSender::new(cfg.clone(), id, dir, (lo.0, hi.0), rng, stop)?;
                    let rcv = RepeatReceiver::new(cfg.clone(), id, dir);
                    (
                        AnyEndpoint::RepeatSender(Box::new(snd)),
                        AnyEndpoint::RepeatReceiver(Box::new(rcv)),
                        cfg.cc.to_string(),
                        target,
                    )
                }
                None => {
                    let (snd, rcv) = try_new_connection(&cfg, id, dir)?;
                    (
                        AnyEndpoint::TcpSender(Box::new(snd)),
                        AnyEndpoint::TcpReceiver(Box::new(rcv)),
                        cfg.cc.to_string(),
                        target,
                    )
                }
            }
        }
    })
}

/// The scenario with every default written out (qdisc parameters and flow keys), as stored
/// with a run. Fails like `run` would on values only a discipline can check.
pub fn resolve(sc: &Scenario, seed: u64) -> Result<Scenario, String> {
    resolve_with(sc, seed, None)
}

/// [`resolve`], with `ext` building the disciplines the core does not hold.
pub fn resolve_with(sc: &Scenario, seed: u64, ext: Option<&dyn ExternalQdiscs>) -> Result<Scenario, String> {
    resolve_path(sc, seed, ext).map(|(resolved, ..)| resolved)
}

/// The resolved scenario, its flow entries' models and its built path: each discipline is built
/// once, and its resolved parameters are those of the discipline the run uses.
fn resolve_path(
    sc: &Scenario,
    seed: u64,
    ext: Option<&dyn ExternalQdiscs>,
) -> Result<(Scenario, Vec<FlowModel>, Path), String> {
    let mut resolved = sc.clone();
    resolved.seed = seed;
    resolved.record.level = Some(sc.record_level());
    let path = build_path(sc, seed, ext)?;
    for (hop, qdisc) in sc.topology.hops().iter().zip(&path.qdiscs) {
        let spec = resolved
            .topology
            .hop_spec_mut(hop.dir, &hop.name)
            .expect("a hop of the scenario");
        spec.qdisc = qdisc.clone();
    }
    let mut models = FlowModels::default();
    let flows = sc
        .flows
        .iter()
        .map(|f| resolve_flow(&mut models, f, sc.duration.0));
    let (flows, models) = flows.unzip();
    resolved.flows = flows;
    Ok((resolved, models, path))
}

/// A scenario resolved and built, ready to run: its hops, its flows and their `flows` rows
/// (reports still empty). The simulator runs it in a `World`; the emulator (crates/aqmlab-emu)
/// drives the same hops with real packets.
pub struct Prepared {
    pub resolved: Scenario,
    pub links: Vec<Link>,
    /// The WiFi media of the path (none for wired paths).
    pub media: Vec<Medium>,
    pub flows: Vec<Flow>,
    pub rows: Vec<FlowRow>,
}

/// Resolves and builds a scenario with the given seed.
pub fn prepare(sc: &Scenario, seed: u64) -> Result<Prepared, String> {
    prepare_with(sc, seed, None)
}

/// [`prepare`], with `ext` building the disciplines the core does not hold.
pub fn prepare_with(sc: &Scenario, seed: u64, ext: Option<&dyn ExternalQdiscs>) -> Result<Prepared, String> {
    let (
        resolved,
        models,
        Path {
            links,
            media,
            stations,
            hosts,
            ..
        },
    ) = resolve_path(sc, seed, ext)?;
    let end = sc.duration.0;
    let station_names: Vec<&str> = resolved.topology.wifi.as_ref().map_or(Vec::new(), |w| {
        w.stations.iter().map(|s| s.name.as_str()).collect()
    });
    let local_hops = local_sender_hops(&resolved, &links);
    let mut flows = Vec::new();
    let mut rows = Vec::new();
    for (g, (f, mut model)) in resolved.flows.iter().zip(models).enumerate() {
        // TCP-LP's host clocks, when given as ranges, drawn once per run and group.
        if let Some(tcp) = model.tcp_mut().filter(|t| &*t.cc == "tcp_lp") {
            if let Some(p) =
                tcp_lp::draw_clocks(&tcp.cc_params, &mut Rng::stream(seed, &format!("lpclock/{g}")))
            {
                tcp.cc_params = p;
            }
        }
        let start_spec = f.start.clone().expect("resolved");
        let mut start_rng = Rng::stream(seed, &format!("start/{g}"));
        let group_start = match start_spec {
            StartSpec::At(t) | StartSpec::Spread(t, _) => t,
            StartSpec::Uniform(lo, hi, _) => start_rng.range_u64(lo, hi),
        };
        let stop = f.stop.map_or(end, |s| s.0.min(end));
        let rtt = f.rtt.unwrap_or(sc.topology.rtt).0;
        let mut rtt_rng = Rng::stream(seed, &format!("rtt/{g}"));
        let nic_rate = f.nic_rate.unwrap_or(sc.topology.nic_rate).0;
        let host_jitter = f.host_jitter.or(sc.topology.host_jitter).map_or(0, |j| j.0);
        // Links are in `hops()` order, so the route's positions index them; the delay after a
        // hop is crossed unless the flow leaves there, and after a chain's last hop always.
        let mut route = resolved
            .flow_route(f)
            .map_err(|e| format!("flows[{g}].hops: {e}"))?;
        let path_delays: Time = route
            .iter()
            .map(|&(a, b)| {
                let last = if links[b].next.is_none() {
                    links[b].initial_delay()
                } else {
                    0
                };
                links[a..b].iter().map(Link::initial_delay).sum::<Time>() + last
            })
            .sum();
        let station = f.station.as_deref().map_or(0, |s| {
            station_names.iter().position(|n| *n == s).expect("validated")
        });
        let host = f.host.as_deref().map_or(0, |h| {
            resolved
                .host_names()
                .iter()
                .position(|n| *n == h)
                .expect("validated")
        });
        let server_host = f.server.as_deref().map_or(0, |h| {
            1 + resolved
                .server_names()
                .iter()
                .position(|n| *n == h)
                .expect("validated")
        });
        let host_links = Dir::BOTH.map(|d| hosts[d.index()].get(host).copied().unwrap_or(0));
        // A station after the first enters the up chain at its own link, beside the first's
        // (with the same delay after it).
        let up = Dir::Up.index();
        let reroute = station > 0 && stations.first().is_some_and(|&s| route[up].0 == s as usize);
        if reroute {
            route[up].0 = stations[station] as usize;
        }
        let local = Dir::BOTH.map(|d| local_hops[d.index()] == Some(route[d.index()].0));
        let count = f.count.expect("resolved").0;
        for k in 0..count {
            let id = flows.len() as u32;
            // The first flow takes the group's draw, so `per = "flow"` with one flow is `per = "group"`.
            let start = match start_spec {
                StartSpec::Uniform(lo, hi, StartPer::Flow) if k > 0 => start_rng.range_u64(lo, hi),
                StartSpec::Spread(lo, hi) => StartSpec::spread_at(lo, hi, k, count),
                _ => group_start,
            };
            let (src, dst, cc, target) =
                endpoints(f, &model, id, start, stop, seed).map_err(|e| format!("flows[{g}]: {e}"))?;
            let rtt = match f.rtt_spread {
                Some(s) => rtt_rng.range_u64(rtt - s.0, rtt + s.0),
                None => rtt,
            };
            let (client, server) = access_delays(rtt, local);
            let dir = f.direction.expect("resolved").dir();
            let mut flow = Flow::new(dir, start, src, dst, client, server, nic_rate);
            flow.local = local;
            if host_jitter > 0 {
                flow.host_jitter = Some(Box::new(HostJitter {
                    jitter: host_jitter,
                    rng: [0, 1].map(|s| Rng::stream(seed, &format!("host_jitter/{g}/{k}/{s}"))),
                    last: [0; 2],
                }));
            }
            let dscp = f.dscp.map_or(0, |d| d.0);
            flow.dscp = dscp;
            flow.hash_connections = match &model {
                FlowModel::Web { conn, .. } | FlowModel::Webpage { conn, .. } => conn.hash_connections,
                _ => false,
            };
            flow.station = station as u16;
            flow.host = host as u16;
            flow.server = server_host as u16;
            flow.host_links = host_links;
            if f.hops.is_some() || reroute {
                // A route that ends at a hop with one link per host ends at the flow's own.
                let own = |d: usize, b: usize| match hosts[d].first() {
                    Some(&h0) if h0 as usize == b => host_links[d],
                    _ => b as u32,
                };
                flow.route = [0, 1].map(|d| Some((route[d].0 as u32, own(d, route[d].1))));
            }
            flows.push(flow);
            rows.push(FlowRow {
                kind: f.kind.name().into(),
                direction: dir,
                group: g as u32,
                label: f.label.clone().unwrap_or_else(|| format!("{}{g}", f.kind)),
                cc,
                dscp,
                start,
                base_rtt: 2 * (client + server) + path_delays,
                bytes_target: target,
                report: FlowReport::default(),
                drops: 0,
                marks: 0,
            });
        }
    }
    Ok(Prepared {
        resolved,
        links,
        media,
        flows,
        rows,
    })
}

/// The `links` rows of a path's hops after a run that ended at `end`; the bottleneck of each
/// direction is chosen among the first `n_hops` (the scenario's hops: a WiFi hop's stations
/// after the first are not hops of their own).
pub fn link_rows(links: &[Link], n_hops: usize, end: Time) -> Vec<LinkRow> {
    let bottleneck: Vec<usize> = Dir::BOTH
        .iter()
        .filter_map(|&d| {
            let chain = links.iter().take(n_hops).enumerate().filter(|(_, l)| l.dir == d);
            // min_by_key keeps the first of equals: the hop a packet meets first.
            chain
                .min_by_key(|(_, l)| l.effective_schedule()[0].1)
                .map(|(k, _)| k)
        })
        .collect();
    let mut airtime = station_airtime(links);
    links
        .iter()
        .enumerate()
        .map(|(k, l)| LinkRow {
            dir: l.dir,
            hop: l.name.clone(),
            bottleneck: bottleneck.contains(&k),
            delay: l.initial_delay(),
            qdisc: l.qdisc_name.clone(),
            rate_bps: l.effective_schedule()[0].1,
            capacity_bytes: l.capacity_bytes(end),
            stats: l.stats.clone(),
            backlog_bytes: l.qdisc.backlog_bytes(),
            backlog_pkts: l.qdisc.backlog_packets(),
            schedule: l.effective_schedule(),
            diagnostics: l
                .qdisc
                .diagnostics()
                .into_iter()
                .chain(wifi_diagnostics(l, end))
                .chain(take_for(&mut airtime, k))
                .chain(delivery_diagnostics(l))
                .collect(),
            subqueues: l
                .qdisc
                .subqueues()
                .iter()
                .map(|&c| SUBQUEUES[c as usize])
                .collect(),
        })
        .collect()
}

/// Resolves, builds and runs a scenario with the given seed.
pub fn run(sc: &Scenario, seed: u64) -> Result<RunResult, String> {
    run_with(sc, seed, None)
}

/// [`run`], with `ext` building the disciplines the core does not hold. A discipline that stops
/// the run (`QueueEvent::Stop`) ends it early; its builder reports why.
pub fn run_with(sc: &Scenario, seed: u64, ext: Option<&dyn ExternalQdiscs>) -> Result<RunResult, String> {
    run_watched(sc, seed, ext, &mut |_| true).map(|r| r.expect("an unwatched run ends"))
}

/// [`run_with`], the event loop handing the world to `keep_going` as `World::run_watched` does;
/// `Ok(None)` when `keep_going` stopped the run before its end (nothing of it is kept).
pub fn run_watched(
    sc: &Scenario,
    seed: u64,
    ext: Option<&dyn ExternalQdiscs>,
    keep_going: &mut dyn FnMut(&World) -> bool,
) -> Result<Option<RunResult>, String> {
    let drawn_before = crate::rng::streams_drawn();
    let Prepared {
        resolved,
        links,
        media,
        flows,
        mut rows,
    } = prepare_with(sc, seed, ext)?;
    let end = sc.duration.0;
    let mut rec = Recorder::new(sc.record_level(), sc.record.interval.0);
    if links.iter().any(|l| !l.qdisc.subqueues().is_empty()) {
        rec.keep_subqueues();
    }
    let mut world = World::new(end, links, flows, rec);
    world.media = media;
    if !world.run_watched(keep_going) {
        return Ok(None);
    }
    let conservation = world.check_conservation();
    debug_assert!(conservation.is_ok(), "{conservation:?}");

    let mut probes = Vec::new();
    let mut web = Vec::new();
    let mut webpage = Vec::new();
    for (i, (row, f)) in rows.iter_mut().zip(&world.flows).enumerate() {
        row.report = f.report();
        row.drops = f.dropped;
        row.marks = f.marked;
        if let Some(recs) = f.web_records() {
            web.extend(recs.iter().map(|&rec| WebRow { flow: i as u32, rec }));
        }
        if let Some(recs) = f.page_records() {
            webpage.extend(recs.iter().map(|&rec| PageRow { flow: i as u32, rec }));
        }
        if let Some(recs) = f.probe_records() {
            probes.extend(recs.iter().map(|r| ProbeRow {
                flow: i as u32,
                seq: r.seq,
                sent: r.sent,
                reply: r.reply,
                lost_up: !f.probe_reached(r.seq),
            }));
        }
    }
    let links = link_rows(&world.links, resolved.topology.hops().len(), end);
    let rec = std::mem::replace(&mut world.rec, Recorder::new(sc.record_level(), 1));
    Ok(Some(RunResult {
        resolved,
        seed,
        duration: end,
        events: world.events,
        event_kinds: world.kinds,
        recorded: Recorded {
            packets: rec.packets,
            queue: rec.queue,
            flow_series: rec.flow_series,
            sojourn: rec.sojourn,
            flows: rows,
            links,
            probes,
            web,
            webpage,
        },
        conservation,
        peak_packets: world.pool.capacity(),
        random_streams: ext.is_none().then(|| crate::rng::streams_drawn() - drawn_before),
    }))
}
