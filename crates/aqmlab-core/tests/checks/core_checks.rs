//! End-to-end checks of the simulator core against independent facts: exact serialisation and
//! propagation, the overloaded FIFO, the M/D/1 waiting time, rate schedules, conservation and
//! determinism.

use aqmlab_core::scenario::{self, build};
use aqmlab_core::sim::EventKind;
use aqmlab_core::units::{tx_time, MS, SEC};
use serde_json::json;

fn run(v: serde_json::Value) -> build::RunResult {
    let sc = scenario::parse(&v.to_string()).expect("valid scenario");
    let r = build::run(&sc, sc.seed).expect("run");
    r.conservation.as_ref().expect("packet conservation");
    r
}

#[test]
fn one_packet_takes_serialisation_plus_propagation() {
    // 1500 B over 10 Mb/s = 1.2 ms; one-way propagation 25 ms (RTT 50 ms); each host's NIC
    // adds its own serialisation: 12 us at the default 1 Gb/s, 120 us at 100 Mb/s, none at inf.
    for (nic, nic_ser) in [(None, 12_000), (Some("100Mbps"), 120_000), (Some("inf"), 0)] {
        let mut topology = json!({"rtt": "50ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}});
        if let Some(n) = nic {
            topology["nic_rate"] = json!(n);
        }
        let r = run(json!({
            "name": "one", "duration": "1s", "topology": topology,
            "flows": [{"kind": "ping", "interval": "10s", "packet_size": "1500B"}]
        }));
        let (rtt, up, down) = r.probes[0].reply.expect("reply");
        assert_eq!(up, nic_ser + 1_200_000 + 25 * MS, "{nic:?}");
        assert_eq!(down, nic_ser + 1_200_000 + 25 * MS, "{nic:?}");
        assert_eq!(rtt, 2 * (nic_ser + 1_200_000 + 25 * MS), "{nic:?}");
    }
}

#[test]
fn a_hosts_nic_spaces_its_burst_and_hosts_do_not_share_one() {
    // Two TCP flows open their initial windows (IW 10, 1500 B segments) at the same instant.
    // Through 1 Gb/s NICs the segments of each flow reach the bottleneck 12 us apart (1500 B
    // at 1 Gb/s), the two flows' hosts side by side; with no NIC each window arrives at once.
    for (nic, gap) in [("1Gbps", 12_000u64), ("inf", 0)] {
        let r = run(json!({
            "name": "nic", "duration": "1s",
            "topology": {"rtt": "40ms", "nic_rate": nic,
                         "down": {"rate": "10Mbps", "qdisc": "pfifo", "limit": "1000p"},
                         "up": {"rate": "10Mbps"}},
            "flows": [{"kind": "tcp", "count": 2, "bytes": "100KB"}]
        }));
        let p = &r.packets;
        for flow in 0..2 {
            let arrivals: Vec<u64> = (0..p.dir.len())
                .filter(|&i| p.dir[i] == 1 && p.flow[i] == flow && p.size[i] == 1500)
                .map(|i| p.t_enqueue[i])
                .take(10)
                .collect();
            let gaps: Vec<u64> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
            assert_eq!(gaps, vec![gap; 9], "{nic} flow {flow}");
        }
    }
}

#[test]
fn overloaded_pfifo_delivers_link_rate_and_drops_half() {
    let r = run(json!({
        "name": "overload", "duration": "20s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "qdisc": "pfifo", "limit": "100p"},
                     "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "20Mbps", "packet_size": "1500B"}]
    }));
    let down = &r.links[1];
    let rate = down.stats.tx_bytes as f64 * 8.0 / 20.0;
    assert!((rate / 10e6 - 1.0).abs() < 0.005, "delivered {rate}");
    let drop_frac = down.stats.total_drops() as f64 / down.stats.arrivals as f64;
    assert!((drop_frac - 0.5).abs() < 0.01, "drop fraction {drop_frac}");
    // Steady state: a packet that is admitted finds 99 or 100 packets ahead (including the one
    // being serialised, which is not in the queue): sojourn = 100 x 1.2 ms within one packet.
    let ser = tx_time(1500, 10_000_000);
    let p = &r.packets;
    for i in 0..p.outcome.len() {
        if p.outcome[i] == 0 && p.t_enqueue[i] > 2 * SEC {
            let sojourn = p.t_out[i] - p.t_enqueue[i];
            assert!(sojourn.abs_diff(100 * ser) <= ser, "sojourn {sojourn}");
        }
    }
}

#[test]
fn the_events_by_kind_count_each_packet_once_per_stage() {
    // 1500 B every 10 ms (1.2 Mb/s) from t = 0, no NIC, 5 ms of access delay on each side,
    // 1.2 ms of serialisation at 10 Mb/s, run of 1 s (events at 1 s still run): the packets
    // sent at 0..=990 ms reach the hop (100), are transmitted (100, none queues behind
    // another) and those sent at 0..=980 ms reach the sink by 1 s (99), each at its own
    // instant: one event per packet and stage, plus the flow's start.
    let r = run(json!({
        "name": "kinds", "duration": "1s",
        "topology": {"rtt": "20ms", "nic_rate": "inf", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "1200kbps", "packet_size": "1500B"}]
    }));
    let count = |k: EventKind| r.event_kinds[k as usize];
    assert_eq!(count(EventKind::AccessIn), 100);
    assert_eq!(count(EventKind::TxDone), 100);
    assert_eq!(count(EventKind::AccessOut), 99);
    assert_eq!(count(EventKind::AccessOut), r.flows[0].report.packets_received);
    assert_eq!(count(EventKind::Start), 1);
    assert_eq!(r.event_kinds.iter().sum::<u64>(), r.events);
}

fn md1_mean_wait(rho: f64) -> (f64, f64) {
    // Poisson arrivals of fixed-size packets into an unbounded FIFO at 1 Gb/s (no host NIC,
    // which would space the arrivals).
    let mu = 1e9 / (1500.0 * 8.0);
    let rate = format!("{}bps", (rho * 1e9).round());
    let r = run(json!({
        "name": "md1", "duration": "40s", "seed": 3,
        "topology": {"rtt": "2ms", "nic_rate": "inf",
                     "down": {"rate": "1Gbps", "qdisc": "pfifo", "limit": "10000000p"},
                     "up": {"rate": "1Gbps"}},
        "flows": [{"kind": "udp", "rate": rate, "packet_size": "1500B", "arrivals": "poisson"}],
        // 40 s at 1 Gb/s each way is estimated at 6.7 million rows, above the default limit
        "record": {"max_rows": 10_000_000}
    }));
    let p = &r.packets;
    let n = p.outcome.len();
    let waits: f64 = (n / 10..n)
        .map(|i| (p.t_out[i] - p.t_enqueue[i]) as f64 / 1e9)
        .sum();
    (waits / (n - n / 10) as f64, rho / (2.0 * mu * (1.0 - rho)))
}

#[test]
fn a_packet_table_too_large_is_refused_before_the_run_and_the_limit_can_be_raised() {
    use aqmlab_core::record::Level;
    // 1 Gb/s each way for 60 s at 1500 B: 2 x 5 million packets at most.
    let sc = |extra: serde_json::Value| {
        let mut v = json!({"name": "big", "duration": "60s",
            "topology": {"rtt": "2ms", "down": {"rate": "1Gbps"}, "up": {"rate": "1Gbps"}}});
        v["record"] = extra;
        scenario::parse(&v.to_string())
    };
    let e = sc(json!({"level": "packets"})).expect_err("10 million rows are above the default 5 million");
    assert!(
        e.starts_with("record.level: \"packets\" would record about 10.0 million"),
        "{e}"
    );
    assert!(e.contains("record.max_rows = 5000000"), "{e}");
    let level = |extra| sc(extra).expect("valid").record_level();
    assert_eq!(
        level(json!({"level": "packets", "max_rows": 10_000_001})),
        Level::Packets
    );
    assert_eq!(level(json!({"max_rows": 10_000_001})), Level::Packets);
    // not given: "series" rather than a refusal (its doc)
    assert_eq!(level(json!({})), Level::Series);
    let e = sc(json!({"level": "series", "interval": "999us"})).expect_err("below 1 ms");
    assert!(
        e.starts_with("record.interval: 999us is below the minimum; allowed: 1ms or more"),
        "{e}"
    );
}

#[test]
fn poisson_into_fifo_matches_md1_waiting_time() {
    for rho in [0.5, 0.9] {
        let (measured, theory) = md1_mean_wait(rho);
        assert!(
            (measured / theory - 1.0).abs() < 0.05,
            "rho {rho}: {measured} vs M/D/1 {theory}"
        );
    }
}

#[test]
fn rate_schedule_delivery_tracks_the_integral() {
    let r = run(json!({
        "name": "sched", "duration": "30s", "record": {"interval": "1s", "level": "series"},
        // zero propagation so the queue fills at t = 0 and the link is busy from the start
        "topology": {"rtt": "0ms", "down": {"rate": [["0s", "10Mbps"], ["10s", "2Mbps"], ["20s", "5Mbps"]]},
                     "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "20Mbps"}]
    }));
    let q = &r.queue;
    // Cumulative bytes on the link at each 1 s sample vs the integral of the schedule.
    let integral = |t: f64| -> f64 {
        let seg = |a: f64, b: f64, r: f64| (t.min(b) - a).max(0.0) * r / 8.0;
        seg(0.0, 10.0, 10e6) + seg(10.0, 20.0, 2e6) + seg(20.0, 30.0, 5e6)
    };
    for i in 0..q.t.len() {
        if q.dir[i] == 1 && q.t[i] > 0 {
            let t = q.t[i] as f64 / 1e9;
            assert!(
                (q.tx_bytes[i] as f64 - integral(t)).abs() <= 1500.0,
                "t {t}: {} vs {}",
                q.tx_bytes[i],
                integral(t)
            );
        }
    }
    assert_eq!(r.links[1].capacity_bytes, (integral(30.0)) as u64);
}

#[test]
fn a_watcher_sees_every_4096th_event_stops_the_run_when_it_says_so_and_changes_nothing() {
    use aqmlab_core::sim::WATCH_EVERY;
    let sc = json!({
        "name": "watched", "duration": "5s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "limit": "50p"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "9Mbps", "arrivals": "poisson"}, {"kind": "tcp"}]
    });
    let sc = scenario::parse(&sc.to_string()).expect("valid scenario");
    let plain = build::run(&sc, 1).expect("run");
    // Watched to its end: called at events 4096, 8192, ... in simulated-time order; the result
    // is the unwatched one, event for event and packet for packet.
    let mut seen = Vec::new();
    let whole = build::run_watched(&sc, 1, None, &mut |w| {
        seen.push((w.events, w.now));
        true
    })
    .expect("run")
    .expect("never stopped");
    assert_eq!(seen.len() as u64, plain.events / WATCH_EVERY);
    assert!(seen
        .iter()
        .enumerate()
        .all(|(i, &(e, _))| e == (i as u64 + 1) * WATCH_EVERY));
    assert!(seen.windows(2).all(|p| p[0].1 <= p[1].1 && p[1].1 <= 5 * SEC));
    assert_eq!(whole.events, plain.events);
    assert_eq!(whole.packets.t_out, plain.packets.t_out);
    assert_eq!(whole.packets.outcome, plain.packets.outcome);
    // Stopped at its third look: nothing is returned, and it is looked at no more.
    let mut looks = Vec::new();
    let stopped = build::run_watched(&sc, 1, None, &mut |w| {
        looks.push(w.events);
        looks.len() < 3
    })
    .expect("run");
    assert!(stopped.is_none());
    assert_eq!(looks, [WATCH_EVERY, 2 * WATCH_EVERY, 3 * WATCH_EVERY]);
}

#[test]
fn same_seed_same_result_and_seed_matters() {
    let sc = json!({
        "name": "det", "duration": "5s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "limit": "50p"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "9Mbps", "arrivals": "poisson"}, {"kind": "udp", "rate": "3Mbps", "arrivals": "poisson"}]
    });
    let a = run(sc.clone());
    let b = run(sc.clone());
    assert_eq!(a.packets.t_out, b.packets.t_out);
    assert_eq!(a.packets.outcome, b.packets.outcome);
    let mut sc2 = sc;
    sc2["seed"] = json!(2);
    let c = run(sc2);
    assert_ne!(a.packets.t_out, c.packets.t_out);
}

#[test]
fn bad_scenarios_name_the_key() {
    let cases = [
        (
            json!({"name": "x", "duration": "0s", "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}}}),
            "duration",
        ),
        (
            json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": {"rate": "1MB"}, "up": {"rate": "1Mbps"}}}),
            "topology.down.rate",
        ),
        (
            json!({"name": "x", "duration": "1s", "bogus": 1, "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}}}),
            "bogus",
        ),
        (
            json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
                "flows": [{"kind": "udp"}]}),
            "flows[0].rate",
        ),
        (
            json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
                "flows": [{"kind": "ping", "bytes": "1KB"}]}),
            "flows[0].bytes",
        ),
        (
            json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
                "flows": [{"kind": "tcp"}, {"kind": "tpc"}]}),
            "flows[1].kind",
        ),
    ];
    for (v, key) in cases {
        let e = scenario::parse(&v.to_string()).expect_err("must be rejected");
        assert!(e.starts_with(key), "{e:?} should name {key}");
    }
    // A kind names the value and every allowed kind.
    let v = json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
                   "flows": [{"kind": "tpc"}]});
    let e = scenario::parse(&v.to_string()).expect_err("must be rejected");
    for k in ["tpc", "tcp", "udp", "ping", "voip", "web", "webpage"] {
        assert!(e.contains(k), "{e:?} should name {k}");
    }
}

#[test]
fn device_queue_moves_waiting_out_of_the_qdisc_but_not_the_arrival_times() {
    // Two 1500 B probes reach an idle 10 Mb/s bottleneck at the same instant. Without a device
    // queue the second waits 1.2 ms in the qdisc for the first one's serialisation; with a
    // 1-packet device queue (ns-3's NetDevice queue) it leaves the qdisc at once and waits the
    // same 1.2 ms below it. Either way it arrives 25 + 2 x 1.2 ms after it was sent.
    let run_with = |device: Option<&str>| {
        let mut down = json!({"rate": "10Mbps"});
        let mut up = json!({"rate": "10Mbps"});
        if let Some(dq) = device {
            up["device_queue"] = json!(dq);
            down["device_queue"] = json!(dq);
        }
        run(json!({
            "name": "dq", "duration": "1s",
            "topology": {"rtt": "50ms", "nic_rate": "inf", "down": down, "up": up},
            "flows": [{"kind": "ping", "interval": "10s", "packet_size": "1500B"},
                      {"kind": "ping", "interval": "10s", "packet_size": "1500B"}]
        }))
    };
    let ser = 1_200_000;
    for (device, second_sojourn) in [(None, ser), (Some("1p"), 0)] {
        let r = run_with(device);
        let ups: Vec<u64> = r.probes.iter().map(|p| p.reply.expect("reply").1).collect();
        let mut ups = ups.clone();
        ups.sort();
        assert_eq!(ups, vec![25 * MS + ser, 25 * MS + 2 * ser], "{device:?}");
        let p = &r.packets;
        let mut up_sojourns: Vec<u64> = (0..p.dir.len())
            .filter(|&i| p.dir[i] == 0)
            .map(|i| p.t_out[i] - p.t_enqueue[i])
            .collect();
        up_sojourns.sort();
        assert_eq!(up_sojourns, vec![0, second_sojourn], "{device:?}");
    }
}

#[test]
fn a_uniform_start_is_drawn_once_per_group_or_once_per_flow_as_asked() {
    let starts = |per: Option<&str>| {
        let mut start = json!({"uniform": ["1s", "2s"]});
        if let Some(p) = per {
            start["per"] = json!(p);
        }
        let r = run(json!({
            "name": "starts", "duration": "3s",
            "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
            "flows": [{"kind": "udp", "rate": "1Mbps", "count": 8, "start": start}]
        }));
        // The resolved scenario (stored with the run) states the choice.
        let resolved = serde_json::to_value(&r.resolved.flows[0].start).expect("serialises");
        assert_eq!(resolved["per"], json!(per.unwrap_or("group")));
        r.flows.iter().map(|f| f.start).collect::<Vec<_>>()
    };
    for s in [starts(None), starts(Some("group")), starts(Some("flow"))] {
        assert!(
            s.iter().all(|&t| (SEC..2 * SEC).contains(&t)),
            "{s:?} outside [1 s, 2 s)"
        );
    }
    // The default is one draw for the entry (its flows start together, as transients2014's groups).
    let g = starts(None);
    assert!(g.iter().all(|&t| t == g[0]));
    assert_eq!(g, starts(Some("group")));
    // Per flow: eight independent draws on a 1 s range (ns resolution) are all different, and the
    // first flow keeps the group's draw.
    let f = starts(Some("flow"));
    let mut d = f.clone();
    d.sort_unstable();
    d.dedup();
    assert_eq!(d.len(), 8, "{f:?}");
    assert_eq!(f[0], g[0]);
    let bad = json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
        "flows": [{"kind": "udp", "rate": "1Mbps", "start": {"uniform": ["0s", "1s"], "per": "host"}}]});
    let e = scenario::parse(&bad.to_string()).expect_err("per = host is not a choice");
    assert!(
        e.starts_with("flows[0].start") && e.contains("\"host\"") && e.contains("\"flow\""),
        "{e}"
    );
}

#[test]
fn a_spread_start_gives_flow_i_of_n_the_start_lo_plus_i_range_over_n() {
    let starts = |count: u32, spread: [&str; 2]| {
        let r = run(json!({
            "name": "spread", "duration": "3s",
            "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
            "flows": [{"kind": "udp", "rate": "1Mbps", "count": count, "start": {"spread": spread}}]
        }));
        let resolved = serde_json::to_value(&r.resolved.flows[0].start).expect("serialises");
        assert_eq!(resolved, json!({"spread": spread}));
        r.flows.iter().map(|f| f.start).collect::<Vec<_>>()
    };
    // 8 flows over [1 s, 2 s): 125 ms apart from 1 s, none at 2 s.
    let eighths: Vec<u64> = (0..8).map(|i| SEC + i * 125 * MS).collect();
    assert_eq!(starts(8, ["1s", "2s"]), eighths);
    // A range n does not divide: floor(i x 10^9 / 3) ns.
    assert_eq!(starts(3, ["0s", "1s"]), vec![0, 333_333_333, 666_666_666]);
    // An empty range: every flow at lo; one flow: at lo.
    assert_eq!(starts(4, ["500ms", "500ms"]), vec![500 * MS; 4]);
    assert_eq!(starts(1, ["1s", "2s"]), vec![SEC]);
    // The same for every seed (no draw).
    let sc = |seed: u64| {
        json!({"name": "spread", "duration": "3s", "seed": seed,
            "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
            "flows": [{"kind": "udp", "rate": "1Mbps", "count": 8, "start": {"spread": ["1s", "2s"]}}]})
    };
    for seed in [1, 2, 99] {
        let r = run(sc(seed));
        assert_eq!(r.flows.iter().map(|f| f.start).collect::<Vec<_>>(), eighths);
    }
}

#[test]
fn a_bad_spread_names_the_key_the_value_and_what_is_allowed() {
    let error = |start: serde_json::Value, stop: Option<&str>| {
        let mut f = json!({"kind": "udp", "rate": "1Mbps", "count": 4, "start": start});
        if let Some(s) = stop {
            f["stop"] = json!(s);
        }
        let v = json!({"name": "x", "duration": "5s",
            "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}}, "flows": [f]});
        scenario::parse(&v.to_string()).expect_err("rejected")
    };
    let e = error(json!({"spread": ["2s", "1s"]}), None);
    assert!(
        e.starts_with("flows[0].start: spread:") && e.contains("[\"2s\",\"1s\"]") && e.contains("hi >= lo"),
        "{e}"
    );
    let e = error(json!({"spread": ["1s"]}), None);
    assert!(
        e.starts_with("flows[0].start: spread:") && e.contains("two times"),
        "{e}"
    );
    let e = error(json!({"spread": ["0s", "soon"]}), None);
    assert!(
        e.starts_with("flows[0].start: spread:") && e.contains("\"soon\""),
        "{e}"
    );
    // `per` belongs to `uniform` (a spread has no draw).
    let e = error(json!({"spread": ["0s", "1s"], "per": "flow"}), None);
    assert!(
        e.starts_with("flows[0].start: ") && e.contains("spread = "),
        "{e}"
    );
    // The last of 4 flows spread over [0 s, 2 s] starts at 1.5 s: a stop must come after it.
    let e = error(json!({"spread": ["0s", "2s"]}), Some("1.5s"));
    assert!(e.starts_with("flows[0].stop") && e.contains("(1500ms)"), "{e}");
    let v = json!({"name": "x", "duration": "5s",
        "topology": {"rtt": "1ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
        "flows": [{"kind": "udp", "rate": "1Mbps", "count": 4, "start": {"spread": ["0s", "2s"]}, "stop": "1.6s"}]});
    scenario::parse(&v.to_string()).expect("a stop after the last start");
}

#[test]
fn first_write_opens_the_connection_at_the_start_and_sends_later() {
    // A flow starting at 1 s with its first write 500 ms later on a 40 ms path: its SYN leaves
    // at 1 s and the handshake ends at 1.04 s, but no data leaves before 1.5 s, and the first
    // leaves then, as the application writes. Each host is a quarter of the RTT (10 ms) from
    // its bottleneck and serialises at 1 Gb/s (the 60-byte SYN 480 ns, a 1500-byte segment
    // 12 us): the SYN reaches the up hop at 1.010000480 s, the data the down hop at 1.510012 s.
    let run = |first_write: Option<&str>| {
        let mut flow = json!({"kind": "tcp", "start": "1s"});
        if let Some(w) = first_write {
            flow["first_write"] = json!(w);
        }
        let sc = json!({"name": "fw", "duration": "3s", "topology": {"rtt": "40ms",
            "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}}, "flows": [flow]});
        let r = build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap();
        let p = &r.packets;
        let first = |data: bool| {
            (0..p.t_enqueue.len())
                .filter(|&i| p.flow[i] == 0 && (p.hdr[i].payload > 0) == data)
                .map(|i| p.t_enqueue[i])
                .min()
                .expect("a packet")
        };
        (first(false), first(true))
    };
    let (syn, data) = run(Some("500ms"));
    assert_eq!(syn, SEC + 10 * MS + 480);
    assert_eq!(data, 1510 * MS + 12_000);
    let (syn, data) = run(None);
    assert_eq!(syn, SEC + 10 * MS + 480);
    assert!(data < 1060 * MS, "at once after the handshake: {data}");
    for (bad, want) in [
        (
            json!({"kind": "tcp", "first_write": "0s"}),
            "first_write: 0s is out of range",
        ),
        (
            json!({"kind": "tcp", "first_write": "1s", "on_off": {"on": "1s", "off": "1s"}}),
            "first_write: not allowed together with on_off or repeat",
        ),
    ] {
        let sc = json!({"name": "fw", "duration": "3s", "topology": {"rtt": "40ms",
            "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}}, "flows": [bad]});
        let err = scenario::parse(&sc.to_string()).expect_err("refused");
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn a_preamble_leaves_as_the_connection_opens_and_the_data_follows_it_byte_for_byte() {
    // As in the test above (start 1 s, first write 500 ms later, 40 ms path, hosts 10 ms from
    // the bottleneck at 1 Gb/s), with a 37-byte preamble: it leaves as the handshake ends (the
    // SYN-ACK is back at 1.04 s and more; the preamble reaches the up hop 10 ms later), alone,
    // and the data follows it on the wire from byte 38 at 1.5 s. Through a 1 Mbit/s link with a
    // 10-packet FIFO each way, losses make the sender retransmit: every retransmission repeats
    // a first transmission's bytes, and the cumulative ACKs fall on the wire's segment edges.
    let run = |rate: &str, limit: u32| {
        let flow = json!({"kind": "tcp", "start": "1s", "first_write": "500ms", "preamble": "37B"});
        let link = json!({"rate": rate, "qdisc": {"kind": "pfifo", "limit": format!("{limit}p")}});
        let sc = json!({"name": "pre", "duration": "8s", "topology": {"rtt": "40ms",
            "down": link, "up": link}, "flows": [flow]});
        build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap()
    };
    let r = run("10Mbps", 1000);
    let p = &r.packets;
    let data: Vec<usize> = (0..p.t_enqueue.len())
        .filter(|&i| p.flow[i] == 0 && p.hdr[i].payload > 0)
        .collect();
    let early: Vec<usize> = data
        .iter()
        .copied()
        .filter(|&i| p.t_enqueue[i] < 1500 * MS)
        .collect();
    assert_eq!(early.len(), 1, "the preamble alone before the first write");
    let c = early[0];
    assert_eq!((p.hdr[c].seq, p.hdr[c].payload), (1, 37));
    assert!(
        (1050 * MS..1052 * MS).contains(&p.t_enqueue[c]),
        "{}",
        p.t_enqueue[c]
    );
    let first = *data.iter().find(|&&i| p.t_enqueue[i] >= 1500 * MS).unwrap();
    assert_eq!((p.hdr[first].seq, p.hdr[first].payload), (38, 1448));
    assert_eq!(p.t_enqueue[first], 1510 * MS + 12_000);

    let r = run("1Mbps", 10);
    let p = &r.packets;
    let (mut sent, mut next, mut retx) = (std::collections::HashMap::new(), 1u64, 0);
    let mut order: Vec<usize> = (0..p.t_enqueue.len()).collect();
    order.sort_by_key(|&i| p.t_enqueue[i]);
    for i in order {
        let h = &p.hdr[i];
        if p.flow[i] != 0 || h.payload == 0 || h.tcp_flags & 0x02 != 0 {
            continue;
        }
        if h.seq == next {
            sent.insert(h.seq, h.payload);
            next += h.payload as u64;
        } else {
            assert_eq!(
                sent.get(&h.seq),
                Some(&h.payload),
                "a retransmission at {}",
                h.seq
            );
            retx += 1;
        }
    }
    assert!(retx > 0, "the 10-packet FIFO made the sender retransmit");
    let acks: Vec<u64> = (0..p.t_enqueue.len())
        .filter(|&i| p.flow[i] == 0 && p.hdr[i].payload == 0 && p.hdr[i].ack > 1)
        .map(|i| p.hdr[i].ack)
        .collect();
    assert!(acks.contains(&38), "the preamble's ACK");
    for a in acks {
        assert!(
            a == 38 || (a - 38) % 1448 == 0 || a == next,
            "an ACK off the segment edges: {a}"
        );
    }
    for (bad, want) in [
        (
            json!({"kind": "tcp", "preamble": "0B"}),
            "preamble: 0 B is out of range",
        ),
        (
            json!({"kind": "tcp", "preamble": "37B", "bytes": "1MB"}),
            "preamble: a bulk flow's only",
        ),
    ] {
        let sc = json!({"name": "pre", "duration": "3s", "topology": {"rtt": "40ms",
            "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}}, "flows": [bad]});
        let err = scenario::parse(&sc.to_string()).expect_err("refused");
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn on_off_periods_have_the_asked_means() {
    use aqmlab_core::rng::Rng;
    use aqmlab_core::scenario::{OnOff, OnOffDist};
    use aqmlab_core::units::Dur;
    let constant = OnOff {
        on: Dur(2 * SEC),
        off: Dur(3 * SEC),
        distribution: OnOffDist::Constant,
    };
    let p = constant.periods(SEC, 12 * SEC, &mut Rng::from_seed(1));
    assert_eq!(p, [(SEC, 3 * SEC), (6 * SEC, 8 * SEC), (11 * SEC, 12 * SEC)]);
    // Exponential lengths: over ~1000 periods the sample means are within 10% of the asked
    // means (3 standard errors of an exponential mean at n = 1000 is 9.5%), and the duty cycle
    // on / (on + off) = 0.25.
    let exp = OnOff {
        on: Dur(SEC),
        off: Dur(3 * SEC),
        distribution: OnOffDist::Exponential,
    };
    let p = exp.periods(0, 4000 * SEC, &mut Rng::from_seed(7));
    let n = p.len() as f64;
    let on: f64 = p.iter().map(|&(a, b)| (b - a) as f64).sum::<f64>() / n / SEC as f64;
    let off: f64 = p.windows(2).map(|w| (w[1].0 - w[0].1) as f64).sum::<f64>() / (n - 1.0) / SEC as f64;
    assert!(
        n > 900.0 && (on - 1.0).abs() < 0.1 && (off - 3.0).abs() < 0.3,
        "n {n} on {on} off {off}"
    );
    let duty = p.iter().map(|&(a, b)| (b - a) as f64).sum::<f64>() / (4000 * SEC) as f64;
    assert!((duty - 0.25).abs() < 0.025, "duty {duty}");
}

#[test]
fn pfifo_fast_serves_the_low_delay_tos_band_first() {
    // A TCP flow whose receive window is the path's BDP (17 packets at 10 Mb/s, 20 ms) plus
    // about 56 packets keeps ~56 x 1.2 ms = 67 ms of standing queue in the best-effort band of a
    // 10 Mb/s pfifo_fast, never reaching its 1000-packet limit. A ping marked DSCP 4 (TOS 0x10,
    // "low delay": band 0) waits at most for the packet in transmission; one marked EF (46:
    // band 1 in Linux's TOS table) waits behind the standing queue like best effort.
    let r = run(json!({
        "name": "prio", "duration": "5s",
        "topology": {"rtt": "20ms", "nic_rate": "inf",
                     "down": {"rate": "10Mbps", "qdisc": "pfifo_fast"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp", "rwnd": "110000B"},
                  {"kind": "ping", "interval": "100ms", "direction": "down", "dscp": 4, "start": "1s"},
                  {"kind": "ping", "interval": "100ms", "direction": "down", "dscp": "EF", "start": "1s"}]
    }));
    let rtts = |flow: u32| -> Vec<u64> {
        r.probes
            .iter()
            .filter(|p| p.flow == flow)
            .filter_map(|p| p.reply.map(|x| x.0))
            .collect()
    };
    let (low, ef) = (rtts(1), rtts(2));
    assert!(!low.is_empty() && !ef.is_empty());
    let ser = tx_time(1500, 10_000_000);
    assert!(
        low.iter().all(|&t| t <= 20 * MS + 2 * ser),
        "low delay band: {low:?}"
    );
    assert!(
        ef.iter().all(|&t| t >= 20 * MS + 40 * ser),
        "EF in band 1: {ef:?}"
    );
}

#[test]
fn rtt_spread_draws_uniform_rtts_per_flow_and_seed_around_the_mean() {
    // 400 flows with rtt 50 ms +- 20 ms and no NIC: each base RTT (twice the access paths, no
    // hop delay) lies in [30, 70] ms; their mean is 50 ms within 3 standard errors of a uniform
    // mean (20 ms / sqrt(3) / sqrt(400) x 3 = 1.7 ms); another seed draws other RTTs.
    let v = json!({
        "name": "het", "duration": "1s",
        "topology": {"rtt": "50ms", "nic_rate": "inf", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp", "count": 400, "rtt_spread": "20ms"}]
    });
    let sc = scenario::parse(&v.to_string()).expect("valid");
    let rtts = |seed| -> Vec<u64> {
        build::prepare(&sc, seed)
            .expect("prepare")
            .rows
            .iter()
            .map(|r| r.base_rtt)
            .collect()
    };
    let a = rtts(1);
    let mean = a.iter().sum::<u64>() as f64 / a.len() as f64 / MS as f64;
    assert!((mean - 50.0).abs() < 1.7, "mean {mean}");
    assert!(a.iter().all(|&r| (30 * MS..=70 * MS).contains(&r)));
    assert!(a.iter().max().unwrap() - a.iter().min().unwrap() > 30 * MS);
    assert_eq!(a, rtts(1));
    assert_ne!(a, rtts(2));
    let mut bad = v.clone();
    bad["flows"][0]["rtt_spread"] = json!("50ms");
    let e = scenario::parse(&bad.to_string()).expect_err("spread = rtt");
    assert!(e.starts_with("flows[0].rtt_spread") && e.contains("50ms"), "{e}");
}
