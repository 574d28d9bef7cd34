//! Checks of paths of several hops against independent facts: store-and-forward timing
//! (each hop adds its serialisation and its propagation delay), where a standing queue forms
//! (at the slowest hop of a chain, and only there), conservation across hops, and the
//! one-line errors for paths that cannot exist.

use crate::run;
use aqmlab_core::scenario::{self, build};
use aqmlab_core::units::{tx_time, MS, SEC};
use serde_json::{json, Value};

fn hops(up: Value, down: Value) -> Value {
    let mut all = Vec::new();
    for (dir, list) in [("up", up), ("down", down)] {
        for mut h in list.as_array().expect("list").clone() {
            h["direction"] = json!(dir);
            all.push(h);
        }
    }
    Value::Array(all)
}

#[test]
fn a_probe_pays_every_hops_serialisation_and_delay() {
    // Store and forward: 1500 B crosses 100 Mb/s (120 us), waits 3 ms of propagation, then
    // 10 Mb/s (1.2 ms); the access paths add rtt/4 = 5 ms on each side, and the sending
    // host's 1 Gb/s NIC 12 us.
    let r = run(json!({
        "name": "two", "duration": "1s",
        "topology": {"rtt": "20ms", "hops": hops(
            json!([{"name": "lan", "rate": "100Mbps", "delay": "3ms"}, {"name": "wan", "rate": "10Mbps"}]),
            json!([{"name": "back", "rate": "10Mbps"}]))},
        "flows": [{"kind": "ping", "interval": "10s", "packet_size": "1500B"}]
    }));
    let (rtt, up, down) = r.probes[0].reply.expect("reply");
    let nic = tx_time(1500, 1_000_000_000);
    let up_expected = nic + 10 * MS + tx_time(1500, 100_000_000) + 3 * MS + tx_time(1500, 10_000_000);
    assert_eq!(up, up_expected);
    assert_eq!(down, nic + 10 * MS + tx_time(1500, 10_000_000));
    assert_eq!(rtt, up + down);
    // Base RTT of the flow: access paths plus every hop delay of both chains.
    assert_eq!(r.flows[0].base_rtt, 23 * MS);
    // The links table has one row per hop, in path order (up chain first).
    let names: Vec<&str> = r.links.iter().map(|l| l.hop.as_str()).collect();
    assert_eq!(names, ["lan", "wan", "back"]);
}

#[test]
fn a_hosts_timing_noise_delays_each_packet_by_a_uniform_draw() {
    // 2000 probes a flow, 2 ms apart (far more than the noise, so no packet waits for the one
    // before it): with host_jitter J each one-way delay is the path's own plus one draw uniform
    // in [0, J) at the sending host (the client up, the echo server down), mean J/2 within
    // four standard errors (J / sqrt(12 n)); the second flow takes none (its own "0s").
    let j = 300_000;
    let r = run(json!({
        "name": "noise", "duration": "4s",
        "topology": {"rtt": "20ms", "nic_rate": "inf", "host_jitter": "300us",
            "down": {"rate": "100Mbps"}, "up": {"rate": "100Mbps"}},
        "flows": [
            {"kind": "ping", "interval": "2ms"},
            {"kind": "ping", "interval": "2ms", "start": "1ms", "host_jitter": "0s"}
        ]
    }));
    let one_way = |flow: u32, k: usize| -> Vec<u64> {
        r.probes
            .iter()
            .filter(|p| p.flow == flow)
            .filter_map(|p| p.reply.map(|(_, up, down)| [up, down][k]))
            .collect()
    };
    for k in 0..2 {
        let quiet = one_way(1, k);
        let base = quiet[0];
        assert!(quiet.iter().all(|&d| d == base), "no noise: one delay");
        let noisy = one_way(0, k);
        assert!(noisy.len() > 1900);
        assert!(noisy.iter().all(|&d| d >= base && d < base + j), "within [0, J)");
        let mean = noisy.iter().map(|&d| (d - base) as f64).sum::<f64>() / noisy.len() as f64;
        let se = j as f64 / (12.0 * noisy.len() as f64).sqrt();
        assert!(
            (mean - j as f64 / 2.0).abs() < 4.0 * se,
            "mean {mean} ns, se {se}"
        );
    }
}

#[test]
fn a_hosts_timing_noise_never_reorders_its_packets() {
    // A bulk flow at 100 Mb/s sends a packet every 120 us; 1 ms of noise, eight packet times,
    // would reorder them if each took its own draw (with no NIC to serialise them). The host
    // keeps their order: each packet
    // reaches the bottleneck no sooner than the one sent before it (the packets table's data
    // rows at the down hop, in enqueue order, carry rising sequence numbers).
    let r = run(json!({
        "name": "order", "duration": "2s",
        "topology": {"rtt": "20ms", "host_jitter": "1ms", "nic_rate": "inf",
            "down": {"rate": "100Mbps"}, "up": {"rate": "100Mbps"}},
        "flows": [{"kind": "tcp", "cc": "cubic"}],
        "record": {"level": "packets"}
    }));
    let p = &r.packets;
    let mut rows: Vec<usize> = (0..p.dir.len())
        .filter(|&i| p.dir[i] == 1 && p.hdr[i].payload > 0)
        .collect();
    rows.sort_by_key(|&i| p.t_enqueue[i]);
    let seqs: Vec<u64> = rows.iter().map(|&i| p.hdr[i].seq).collect();
    assert!(seqs.len() > 1000);
    let backwards = seqs.windows(2).filter(|w| w[1] < w[0]).count();
    // Retransmissions go back; there are none without loss at a queue this deep.
    assert_eq!(
        backwards,
        0,
        "{} of {} data packets out of order",
        backwards,
        seqs.len()
    );
}

fn router_modem(router_rate: &str) -> build::RunResult {
    run(json!({
        "name": "edge", "duration": "20s",
        "topology": {"rtt": "40ms", "hops": hops(
            json!([{"name": "router", "rate": router_rate, "qdisc": "fq_codel"},
                   {"name": "modem", "rate": "2Mbps", "qdisc": "pfifo", "limit": "256p"}]),
            json!([{"name": "isp", "rate": "20Mbps"}]))},
        "flows": [{"kind": "udp", "direction": "up", "rate": "3Mbps", "packet_size": "1500B"}]
    }))
}

#[test]
fn the_standing_queue_forms_at_the_slowest_hop_only() {
    // 3 Mb/s offered into a chain 100 Mb/s -> 2 Mb/s: the fast router never drops (it forwards
    // faster than arrivals), the modem FIFO fills to its limit, drops the excess and carries
    // its full 2 Mb/s.
    let r = router_modem("100Mbps");
    let (router, modem) = (&r.links[0], &r.links[1]);
    assert!(modem.bottleneck && !router.bottleneck);
    assert_eq!(router.stats.total_drops(), 0);
    assert!(modem.stats.total_drops() > 0);
    let rate = modem.stats.tx_bytes as f64 * 8.0 / 20.0;
    assert!((rate / 2e6 - 1.0).abs() < 0.005, "modem carries {rate} b/s");
    // Every packet the router sent entered the modem (no delay between them, nothing lost).
    assert_eq!(router.stats.tx_packets, modem.stats.arrivals);
    // Steady state at the modem: 256 packets ahead at 6 ms each.
    let p = &r.packets;
    let ser = tx_time(1500, 2_000_000);
    let late_modem: Vec<u64> = (0..p.hop.len())
        .filter(|&i| p.hop[i] == 1 && p.outcome[i] == 0 && p.t_enqueue[i] > 10 * SEC)
        .map(|i| p.t_out[i] - p.t_enqueue[i])
        .collect();
    assert!(!late_modem.is_empty());
    assert!(
        late_modem.iter().all(|&s| s.abs_diff(256 * ser) <= ser),
        "modem sojourns"
    );
    // Shaped below the modem rate (1.9 Mb/s), the router becomes the bottleneck: the modem is
    // never entered faster than it drains, so it holds at most the packet being serialised.
    let r = router_modem("1.9Mbps");
    let (router, modem) = (&r.links[0], &r.links[1]);
    assert!(router.bottleneck && !modem.bottleneck);
    assert_eq!(modem.stats.total_drops(), 0);
    assert!(router.stats.total_drops() > 0);
    let p = &r.packets;
    let modem_max = (0..p.hop.len())
        .filter(|&i| p.hop[i] == 1)
        .map(|i| p.t_out[i] - p.t_enqueue[i])
        .max()
        .expect("modem packets");
    assert!(
        modem_max <= ser,
        "modem sojourn {modem_max} with a shaping router"
    );
}

#[test]
fn one_hop_chains_equal_the_shorthand() {
    // The same path written both ways runs the same: hop names "up"/"down" give the same
    // random streams as the shorthand, so the runs are identical packet for packet.
    let short = json!({"name": "s", "duration": "5s", "topology": {"rtt": "30ms",
        "down": {"rate": "10Mbps", "qdisc": "red", "loss": 0.01}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp", "count": 3}, {"kind": "ping"}]});
    let mut long = short.clone();
    long["topology"] = json!({"rtt": "30ms", "hops": hops(
        json!([{"name": "up", "rate": "10Mbps"}]),
        json!([{"name": "down", "rate": "10Mbps", "qdisc": "red", "loss": 0.01}]))});
    let (a, b) = (run(short), run(long));
    assert_eq!(a.packets.t_out, b.packets.t_out);
    assert_eq!(a.packets.outcome, b.packets.outcome);
    assert_eq!(a.events, b.events);
}

#[test]
fn paths_that_cannot_exist_name_the_key() {
    let base = |topology: Value| json!({"name": "x", "duration": "1s", "topology": topology});
    let cases = [
        (
            base(json!({"rtt": "1ms", "down": {"rate": "1Mbps"}})),
            "topology.up",
        ),
        (
            base(json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "1Mbps"}]), json!([]))})),
            "topology.hops",
        ),
        (
            base(json!({"rtt": "1ms", "up": {"rate": "1Mbps"},
                "hops": hops(json!([{"name": "a", "rate": "1Mbps"}]), json!([{"name": "b", "rate": "1Mbps"}]))})),
            "topology.up",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "1Mbps"}]),
                json!([{"name": "a", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[1].name",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a/b", "rate": "1Mbps"}]),
                json!([{"name": "b", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[0].name",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"rate": "1Mbps"}]), json!([{"name": "b", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[0].name",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": [{"name": "a", "rate": "1Mbps"}, {"name": "b", "rate": "1Mbps", "direction": "down"}]}),
            ),
            "topology.hops[0].direction",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "0bps"}]), json!([{"name": "b", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[0].rate",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "1Mbps", "delay": "3601s"}]),
                json!([{"name": "b", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[0].delay",
        ),
        (
            base(json!({"rtt": "1ms", "down": {"rate": "1Mbps", "delay": "3601s"}, "up": {"rate": "1Mbps"}})),
            "topology.down.delay",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "1Mbps", "device_queue": "3KB"}]),
                json!([{"name": "b", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[0].device_queue",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "1Mbps", "qdisc": "nope"}]),
                json!([{"name": "b", "rate": "1Mbps"}]))}),
            ),
            "topology.hops[0].qdisc",
        ),
        (
            base(
                json!({"rtt": "1ms", "hops": hops(json!([{"name": "a", "rate": "1Mbps"}]),
                json!([{"name": "b", "rate": "1Mbps"}, {"name": "c", "rate": "1Mbps", "local_sender": true}]))}),
            ),
            "topology.hops[2].local_sender",
        ),
        (
            base(
                json!({"rtt": "1ms", "down": {"rate": "1Mbps", "local_sender": true},
                "up": {"rate": "1Mbps", "local_sender": true}}),
            ),
            "topology.down.local_sender",
        ),
    ];
    for (v, key) in cases {
        let e = scenario::parse(&v.to_string())
            .and_then(|sc| build::resolve(&sc, 1).map(|_| ()))
            .expect_err("must be rejected");
        assert!(e.starts_with(key), "{e:?} should name {key}");
    }
}

#[test]
fn flows_enter_and_leave_the_path_where_their_hops_say() {
    // Up chain lan (100 Mb/s, then 3 ms) -> wan (10 Mb/s); down chain back (10 Mb/s); access
    // rtt/4 = 5 ms each side, NICs off. Probe 0 crosses everything; probe 1 enters at the wan
    // hop (cross traffic on the bottleneck only: its up packets skip the lan hop and its 3 ms);
    // probe 2 leaves the up chain after the lan hop (never enters wan, nor the 3 ms after lan).
    // The down chain is not named by any of them: crossed whole.
    let r = run(json!({
        "name": "routes", "duration": "1s",
        "topology": {"rtt": "20ms", "nic_rate": "inf", "hops": hops(
            json!([{"name": "lan", "rate": "100Mbps", "delay": "3ms"}, {"name": "wan", "rate": "10Mbps"}]),
            json!([{"name": "back", "rate": "10Mbps"}]))},
        "flows": [
            {"kind": "ping", "interval": "10s", "packet_size": "1500B"},
            {"kind": "ping", "interval": "10s", "packet_size": "1500B", "hops": ["wan"], "start": "100ms"},
            {"kind": "ping", "interval": "10s", "packet_size": "1500B", "hops": ["lan", "back"], "start": "200ms"}
        ]
    }));
    let (lan, wan, back) = (
        tx_time(1500, 100_000_000),
        tx_time(1500, 10_000_000),
        tx_time(1500, 10_000_000),
    );
    let up = |k: usize| r.probes[k].reply.expect("reply").1;
    assert_eq!(up(0), 5 * MS + lan + 3 * MS + wan + 5 * MS);
    assert_eq!(up(1), 5 * MS + wan + 5 * MS);
    assert_eq!(up(2), 5 * MS + lan + 5 * MS);
    for k in 0..3 {
        assert_eq!(
            r.probes[k].reply.expect("reply").2,
            5 * MS + back + 5 * MS,
            "probe {k} down"
        );
    }
    // Base RTTs count only the hop delays a flow crosses.
    let base: Vec<u64> = r.flows.iter().map(|f| f.base_rtt).collect();
    assert_eq!(base, [23 * MS, 20 * MS, 20 * MS]);
    // The packets table: each flow appears at exactly the hops it crosses (hop indices: lan 0,
    // wan 1, back 2).
    let p = &r.packets;
    let seen = |flow: u32| {
        let mut h: Vec<u8> = (0..p.hop.len())
            .filter(|&i| p.flow[i] == flow)
            .map(|i| p.hop[i])
            .collect();
        h.sort_unstable();
        h.dedup();
        h
    };
    assert_eq!(
        (seen(0), seen(1), seen(2)),
        (vec![0, 1, 2], vec![1, 2], vec![0, 2])
    );
}

#[test]
fn cross_traffic_on_the_bottleneck_only_leaves_the_router_queue_alone() {
    // The router (2 Mb/s, pfifo) carries one 1.5 Mb/s UDP flow; 1.5 Mb/s of cross traffic joins
    // at the modem (2 Mb/s): the router never drops (1.5 < 2), the modem is overloaded
    // (3 > 2 Mb/s), carries its rate and drops the excess.
    let r = run(json!({
        "name": "cross", "duration": "10s",
        "topology": {"rtt": "20ms", "hops": hops(
            json!([{"name": "router", "rate": "2Mbps", "qdisc": "pfifo"},
                   {"name": "modem", "rate": "2Mbps", "qdisc": "pfifo", "limit": "50p"}]),
            json!([{"name": "isp", "rate": "20Mbps"}]))},
        "flows": [{"kind": "udp", "direction": "up", "rate": "1.5Mbps", "packet_size": "1500B"},
                  {"kind": "udp", "direction": "up", "rate": "1.5Mbps", "packet_size": "1500B", "hops": ["modem"]}]
    }));
    let (router, modem) = (&r.links[0], &r.links[1]);
    assert_eq!(router.stats.total_drops(), 0);
    assert_eq!(router.stats.arrivals, r.flows[0].report.packets_sent);
    assert_eq!(
        modem.stats.arrivals,
        router.stats.tx_packets + r.flows[1].report.packets_sent
    );
    let rate = modem.stats.tx_bytes as f64 * 8.0 / 10.0;
    assert!((rate / 2e6 - 1.0).abs() < 0.01, "modem carries {rate} b/s");
    // 3 Mb/s offered for 10 s, 2 Mb/s carried: a third is dropped, less the 50 packets queued.
    let offered = r.flows[0].report.packets_sent + r.flows[1].report.packets_sent;
    let dropped = modem.stats.total_drops();
    assert!(dropped.abs_diff(offered / 3) <= 52, "{dropped} of {offered}");
}

#[test]
fn a_flows_hops_must_exist_and_be_consecutive() {
    let sc = |hops_of_flow: Value| {
        json!({"name": "x", "duration": "1s",
            "topology": {"rtt": "1ms", "hops": hops(
                json!([{"name": "a", "rate": "1Mbps"}, {"name": "b", "rate": "1Mbps"}, {"name": "c", "rate": "1Mbps"}]),
                json!([{"name": "d", "rate": "1Mbps"}]))},
            "flows": [{"kind": "udp", "rate": "1kbps", "hops": hops_of_flow}]})
    };
    for (h, want) in [
        (
            json!(["a", "c"]),
            "flows[0].hops: the up hops named are not consecutive in that chain (a -> b -> c)",
        ),
        (
            json!(["z"]),
            "flows[0].hops: \"z\" is not a hop; allowed: a, b, c, d",
        ),
        (json!([]), "flows[0].hops: [] is not allowed"),
        (json!(["b", "b"]), "flows[0].hops: \"b\" is named twice"),
    ] {
        let e = scenario::parse(&sc(h.clone()).to_string()).expect_err("rejected");
        assert!(e.starts_with(want), "{h}: {e}");
    }
    assert!(scenario::parse(&sc(json!(["b", "c", "d"])).to_string()).is_ok());
}

/// Wraps the built-in pfifo as an external kind `counted`, counting how often it is built.
struct Counted(std::cell::Cell<usize>);

impl aqmlab_core::queue::registry::ExternalQdiscs for Counted {
    fn provides(&self, kind: &str) -> bool {
        kind == "counted"
    }
    fn build(
        &self,
        _kind: &str,
        params: &Value,
        link: &aqmlab_core::queue::LinkInfo,
        key: &str,
    ) -> Result<(Box<dyn aqmlab_core::queue::Qdisc>, Value), String> {
        self.0.set(self.0.get() + 1);
        let rng = aqmlab_core::rng::Rng::from_seed(0);
        let (q, resolved) = aqmlab_core::queue::registry::build("pfifo", params, link, rng, key)?;
        Ok((Box::new(q), resolved))
    }
}

#[test]
fn each_discipline_is_built_once_per_run() {
    // Three hops run the counted kind: a run builds each of them once (resolving the scenario
    // for the stored copy uses the same built disciplines), and a resolve alone builds each once.
    let sc = scenario::parse(
        &json!({
            "name": "once", "duration": "1s",
            "topology": {"rtt": "20ms", "hops": hops(
                json!([{"name": "lan", "rate": "100Mbps", "qdisc": "counted"},
                       {"name": "wan", "rate": "10Mbps", "qdisc": "counted"}]),
                json!([{"name": "back", "rate": "10Mbps", "qdisc": "counted"}]))},
            "flows": [{"kind": "ping", "interval": "100ms"}]
        })
        .to_string(),
    )
    .expect("valid scenario");
    let counted = Counted(std::cell::Cell::new(0));
    let r = build::run_with(&sc, 1, Some(&counted)).expect("run");
    assert_eq!(counted.0.get(), 3);
    assert!(!r.probes.is_empty());
    counted.0.set(0);
    build::resolve_with(&sc, 1, Some(&counted)).expect("resolve");
    assert_eq!(counted.0.get(), 3);
}

/// Two hosts behind their own access links (2 Mb/s down, 10 Mb/s up, `hosts`), a 10 Mb/s core
/// hop each way; `flows` downloads per host.
fn two_homes(hosts: Value, a: u32, b: u32) -> build::RunResult {
    let host_flows = |host: &str, n: u32| json!({"kind": "tcp", "count": n, "host": host, "label": host, "profile": "linux"});
    let mut flows = vec![host_flows("a", a)];
    if b > 0 {
        flows.push(host_flows("b", b));
    }
    run(json!({
        "name": "homes", "duration": "30s",
        "topology": {"rtt": "20ms", "hops": hops(
            json!([{"name": "uplink", "rate": "10Mbps", "hosts": hosts.clone()},
                   {"name": "core_up", "rate": "10Mbps"}]),
            json!([{"name": "core", "rate": "10Mbps", "delay": "5ms"},
                   {"name": "access", "rate": "2Mbps", "qdisc": "pfifo", "limit": "50p", "hosts": hosts}]))},
        "flows": flows
    }))
}

/// Goodput of the flows labelled `label`, b/s over the run (`secs` long).
fn goodput(r: &build::RunResult, label: &str, secs: f64) -> f64 {
    let bytes: u64 = r
        .flows
        .iter()
        .filter(|f| f.label == label)
        .map(|f| f.report.bytes_delivered)
        .sum();
    bytes as f64 * 8.0 / secs
}

#[test]
fn each_host_gets_its_own_access_link() {
    // Capacity arithmetic: behind one shared 2 Mb/s access link all four downloads together get
    // at most 2 Mb/s of IP bytes; with one access link per host each host's downloads fill its
    // own 2 Mb/s (1448 of every 1500 bytes are payload), so the core carries twice as much.
    let payload = 2e6 * 1448.0 / 1500.0;
    let r = two_homes(json!(["a", "b"]), 2, 2);
    for host in ["a", "b"] {
        let g = goodput(&r, host, 30.0);
        assert!(g > 0.93 * payload && g < payload, "host {host}: {g} b/s");
    }
    // The links table names each host's link; each carries only its host's packets: what the
    // access links received is what the core sent down, less what was still on the core's 5 ms
    // of delay at the end (at most 5 ms x 10 Mb/s of 1500-byte packets, plus one).
    let row = |n: &str| {
        r.links
            .iter()
            .find(|l| l.hop == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    let (core, a, b) = (row("core"), row("access/a"), row("access/b"));
    let in_flight = core.stats.tx_packets - (a.stats.arrivals + b.stats.arrivals);
    assert!(in_flight <= 5 * 10_000 / (8 * 1500) + 1, "{in_flight} packets");
    assert!(
        a.bottleneck && !b.bottleneck,
        "the hop's own place is the first host's"
    );
    // The ACKs leave through each host's uplink.
    assert!(row("uplink/a").stats.tx_packets > 0 && row("uplink/b").stats.tx_packets > 0);
    let shared = two_homes(json!(["a"]), 4, 0);
    let g = goodput(&shared, "a", 30.0);
    assert!(
        g > 0.93 * payload && g < payload,
        "one shared access link: {g} b/s"
    );
}

#[test]
fn a_hosts_share_does_not_depend_on_how_many_flows_the_other_runs() {
    // Per-host isolation: one download on host a against three on host b. Each host is limited
    // by its own access link, so a gets its 2 Mb/s (a shared link would give it about a quarter).
    let payload = 2e6 * 1448.0 / 1500.0;
    let r = two_homes(json!(["a", "b"]), 1, 3);
    let (a, b) = (goodput(&r, "a", 30.0), goodput(&r, "b", 30.0));
    assert!(a > 0.9 * payload && b > 0.9 * payload, "a {a}, b {b}");
}

#[test]
fn one_host_is_the_hop_itself() {
    // A hop with one host keeps the hop's random streams and place: the same run as without
    // `hosts` (only the link's name differs).
    let plain = run(json!({
        "name": "p", "duration": "5s",
        "topology": {"rtt": "20ms", "hops": hops(
            json!([{"name": "up", "rate": "10Mbps"}]),
            json!([{"name": "access", "rate": "2Mbps", "loss": 0.01, "qdisc": "red"}]))},
        "flows": [{"kind": "tcp", "count": 2}]
    }));
    let hosted = run(json!({
        "name": "p", "duration": "5s",
        "topology": {"rtt": "20ms", "hops": hops(
            json!([{"name": "up", "rate": "10Mbps"}]),
            json!([{"name": "access", "rate": "2Mbps", "loss": 0.01, "qdisc": "red", "hosts": ["home"]}]))},
        "flows": [{"kind": "tcp", "count": 2, "host": "home"}]
    }));
    assert_eq!(hosted.links[1].hop, "access/home");
    assert_eq!(
        format!("{:?}", plain.links[1].stats),
        format!("{:?}", hosted.links[1].stats)
    );
    let reports = |r: &build::RunResult| {
        r.flows
            .iter()
            .map(|f| format!("{:?}", f.report))
            .collect::<Vec<_>>()
    };
    assert_eq!(reports(&plain), reports(&hosted));
    assert_eq!(plain.events, hosted.events);
}

#[test]
fn hosts_that_cannot_exist_name_the_key() {
    let sc = |up: Value, down: Value, flow: Value| json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "hops": hops(up, down)}, "flows": [flow]});
    let link = |name: &str| json!({"name": name, "rate": "1Mbps"});
    let hosted = |name: &str, hosts: Value| json!({"name": name, "rate": "1Mbps", "hosts": hosts});
    let tcp = json!({"kind": "tcp"});
    let cases = [
        // not at the hosts' end of the down chain
        (
            sc(
                json!([link("u")]),
                json!([hosted("d1", json!(["a"])), link("d2")]),
                tcp.clone(),
            ),
            "topology.hops[1].hosts",
        ),
        // not at the hosts' end of the up chain
        (
            sc(
                json!([link("u1"), hosted("u2", json!(["a"]))]),
                json!([link("d")]),
                tcp.clone(),
            ),
            "topology.hops[1].hosts",
        ),
        (
            sc(
                json!([link("u")]),
                json!([hosted("d", json!(["a", "a"]))]),
                tcp.clone(),
            ),
            "topology.hops[1].hosts[1]",
        ),
        (
            sc(
                json!([link("u")]),
                json!([hosted("d", json!(["a/b"]))]),
                tcp.clone(),
            ),
            "topology.hops[1].hosts[0]",
        ),
        (
            sc(
                json!([hosted("u", json!(["a", "b"]))]),
                json!([hosted("d", json!(["b", "a"]))]),
                tcp.clone(),
            ),
            "topology.hops[1].hosts",
        ),
        (
            sc(
                json!([link("u")]),
                json!([hosted("d", json!(["a"]))]),
                json!({"kind": "tcp", "host": "c"}),
            ),
            "flows[0].host",
        ),
        (
            json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms",
                "down": {"rate": "1Mbps", "hosts": ["a"]}, "up": {"rate": "1Mbps"}}}),
            "topology.down.hosts",
        ),
    ];
    for (v, key) in cases {
        let e = scenario::parse(&v.to_string())
            .and_then(|sc| build::resolve(&sc, 1).map(|_| ()))
            .expect_err("must be rejected");
        assert!(e.starts_with(key), "{e:?} should name {key}");
    }
    // A flow's host names the client end on any path (CAKE's host isolation reads it); without
    // per-host hops it only labels the flow's packets.
    let plain = sc(
        json!([link("u")]),
        json!([link("d")]),
        json!({"kind": "tcp", "host": "a"}),
    );
    scenario::parse(&plain.to_string())
        .and_then(|sc| build::resolve(&sc, 1).map(|_| ()))
        .expect("a host on a path without per-host hops");
}

/// One TCP flow and a ping through a 2 Mb/s, 20-packet `qdisc` in the sending host itself
/// (`local_sender`) or in a router.
fn own_uplink(qdisc: &str, local: bool, udp_socket: bool) -> build::RunResult {
    run(json!({
        "name": "own-uplink", "duration": "20s",
        "topology": {"rtt": "40ms",
            "down": {"rate": "2Mbps", "qdisc": qdisc, "limit": "20p", "local_sender": local},
            "up": {"rate": "100Mbps"}},
        "flows": [{"kind": "tcp", "cc": "newreno", "udp_socket": udp_socket},
                  {"kind": "ping", "interval": "1s", "packet_size": "1000B"}]
    }))
}

#[test]
fn a_qdisc_in_the_sending_host_refuses_instead_of_losing() {
    // Linux 3.2: a segment the host's own FIFO refuses (NET_XMIT_DROP) is not sent, and goes
    // again later as the same new data; so a kernel TCP sender whose only drops are there
    // never retransmits, while the FIFO counts its refusals.
    let local = own_uplink("pfifo", true, false);
    assert!(local.links[1].stats.total_drops() > 0);
    assert_eq!(local.flows[0].report.retransmits, 0);
    // A transport over UDP hears nothing (udp_send_skb reports no local drop): the same
    // refusals are losses it repairs; so are the router's.
    // RED's early drops (NET_XMIT_CN) count as sent: lost and retransmitted.
    for r in [
        own_uplink("pfifo", true, true),
        own_uplink("pfifo", false, false),
        own_uplink("red", true, false),
    ] {
        assert!(r.links[1].stats.total_drops() > 0);
        assert!(r.flows[0].report.retransmits > 0);
    }
    // The access delay is all beyond the qdisc: the echo reply leaves the server host through
    // it at once (no NIC below the qdisc, nothing queued at 20 ms) and then takes rtt/2; the
    // request pays the client's NIC, rtt/2 and the up hop. The base RTT is unchanged.
    let (rtt, up, down) = local.probes[0].reply.expect("reply");
    assert_eq!(down, tx_time(1000, 2_000_000) + 20 * MS);
    assert_eq!(
        up,
        tx_time(1000, 1_000_000_000) + 20 * MS + tx_time(1000, 100_000_000)
    );
    assert_eq!(rtt, up + down);
    assert_eq!(local.flows[0].base_rtt, 40 * MS);
}

/// A paced `cc` flow whose host's own qdisc (`local_sender`, 1 Gb/s) is `qdisc`, before a
/// 50 Mb/s FIFO of 100 packets.
fn host_paced(cc: &str, qdisc: &str) -> build::RunResult {
    run(json!({
        "name": "host-pacing", "duration": "10s",
        "topology": {"rtt": "40ms", "hops": hops(
            json!([{"name": "ack", "rate": "1Gbps"}]),
            json!([{"name": "host", "rate": "1Gbps", "qdisc": qdisc, "local_sender": true},
                   {"name": "b", "rate": "50Mbps", "qdisc": "pfifo", "limit": "100p"}]))},
        "flows": [{"kind": "tcp", "cc": cc, "pacing": true}]
    }))
}

#[test]
fn pacing_by_departure_time_through_the_hosts_fq_matches_the_senders_own_pacing() {
    // With fq in the host (SK_PACING_FQ) the sender stamps departure times and fq holds each
    // packet until its own, where behind a FIFO (SK_PACING_NEEDED) the sender's timer holds
    // it: the same pacing, so the same goodput within a few per cent; fq throttles the flow
    // (its packets wait for their times) and TCP Small Queues keep the host's backlog small.
    for cc in ["cubic", "bbr"] {
        let fq = host_paced(cc, "fq");
        let own = host_paced(cc, "pfifo");
        let (a, b) = (
            fq.flows[0].report.bytes_delivered as f64,
            own.flows[0].report.bytes_delivered as f64,
        );
        assert!((a / b - 1.0).abs() < 0.03, "{cc}: {a} vs {b} bytes");
        let throttles = fq.links[1]
            .diagnostics
            .iter()
            .find(|d| d.0 == "throttles")
            .expect("fq's throttle count")
            .1;
        assert!(throttles > 0.0, "{cc}: fq held no packet for its departure time");
        assert_eq!(fq.links[1].stats.total_drops(), 0, "{cc}: TCP Small Queues");
    }
}
