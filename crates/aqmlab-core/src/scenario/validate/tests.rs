//! One test per validation rule: a value the rule allows passes, one it forbids is refused with
//! the key path, the value and what is allowed. The expected bounds are the rules as the
//! scenario's reference states them (the model's doc comments, which `aqmlab schema` and
//! `aqmlab list` print, and the README's scenario example), or the standard they come from.

use crate::scenario::parse;
use serde_json::{json, Value};

/// A valid one-hop scenario with one TCP flow.
fn base() -> Value {
    json!({
        "duration": "10s",
        "topology": {
            "rtt": "50ms",
            "down": {"rate": "10Mbps", "qdisc": "pfifo"},
            "up": {"rate": "10Mbps", "qdisc": "pfifo"},
        },
        "flows": [{"kind": "tcp"}],
        "record": {"level": "summary"},
    })
}

/// `base()` with the value at `path` (dotted keys, `[i]` for list items) set to `v`.
fn with(path: &str, v: Value) -> Value {
    let mut sc = base();
    let mut at = &mut sc;
    for part in path.split('.') {
        at = match part.split_once('[') {
            Some((k, i)) => &mut at[k][i.trim_end_matches(']').parse::<usize>().expect("an index")],
            None => &mut at[part],
        };
    }
    *at = v;
    sc
}

fn accepted(sc: &Value) {
    if let Err(e) = parse(&sc.to_string()) {
        panic!("refused: {e}\n{sc}");
    }
}

/// The error of a refused scenario; it must name `key` first and hold each of `parts` (the
/// value and what is allowed).
fn refused(sc: &Value, key: &str, parts: &[&str]) {
    let e = match parse(&sc.to_string()) {
        Ok(_) => panic!("accepted: {sc}"),
        Err(e) => e,
    };
    assert!(e.starts_with(&format!("{key}: ")), "{e} does not name {key}");
    for p in parts {
        assert!(e.contains(p), "{e} does not say {p:?}");
    }
    assert!(!e.contains('\n'), "{e} is more than one line");
}

#[test]
fn wrong_typed_values_name_the_key_the_value_and_what_is_allowed() {
    refused(
        &with("record.level", json!(1)),
        "record.level",
        &["1 is not allowed; allowed: summary, series, packets"],
    );
    refused(
        &with("flows[0].kind", json!(true)),
        "flows[0].kind",
        &["true is not allowed; allowed: tcp, udp, "],
    );
    refused(
        &with("flows[0].direction", json!(1)),
        "flows[0].direction",
        &["1 is not allowed; allowed: up, down"],
    );
    refused(
        &with("flows[0].count", json!(-1)),
        "flows[0].count",
        &["-1 is out of range; allowed: an integer from 1 to 100000"],
    );
    refused(
        &with("flows[0].count", json!(2.5)),
        "flows[0].count",
        &["2.5 is not allowed; allowed: an integer from 1 to 100000"],
    );
    refused(
        &with("record.level", json!("bogus")),
        "record.level",
        &["\"bogus\" is not allowed; allowed: summary, series, packets"],
    );
}

#[test]
fn the_base_scenario_is_valid() {
    accepted(&base());
}

#[test]
fn name_must_not_be_empty() {
    accepted(&with("name", json!("a")));
    refused(&with("name", json!(" ")), "name", &["must not be empty"]);
}

#[test]
fn duration_must_be_positive() {
    accepted(&with("duration", json!("1ns")));
    refused(&with("duration", json!("0s")), "duration", &["0s", "positive"]);
}

#[test]
fn record_interval_is_1ms_or_more() {
    // README: "queue and flow_series sampling, 1ms or more"
    accepted(&with("record.interval", json!("1ms")));
    refused(
        &with("record.interval", json!("999us")),
        "record.interval",
        &["999us", "1ms or more"],
    );
}

#[test]
fn mtu_is_an_ip_packet_size() {
    // RFC 791: every host takes 68-byte datagrams; the IPv4 total length field is 16 bits
    accepted(&with("topology.mtu", json!("68B")));
    accepted(&with("topology.mtu", json!("65535B")));
    for bad in ["67B", "65536B"] {
        refused(
            &with("topology.mtu", json!(bad)),
            "topology.mtu",
            &[bad, "68B to 65535B"],
        );
    }
}

#[test]
fn loss_is_a_probability_below_one() {
    accepted(&with("topology.down.loss", json!(0.0)));
    accepted(&with("topology.down.loss", json!(0.5)));
    refused(
        &with("topology.down.loss", json!(1.0)),
        "topology.down.loss",
        &["1 is out of range", "0 <= loss < 1"],
    );
}

#[test]
fn a_link_rate_is_positive_and_a_schedule_starts_at_0s_with_increasing_times() {
    accepted(&with(
        "topology.down.rate",
        json!([["0s", "10Mbps"], ["5s", "1Mbps"]]),
    ));
    refused(
        &with("topology.down.rate", json!("0bps")),
        "topology.down.rate",
        &["0bps", "positive"],
    );
    refused(
        &with("topology.down.rate", json!([["1s", "10Mbps"]])),
        "topology.down.rate",
        &["start at \"0s\""],
    );
    refused(
        &with("topology.down.rate", json!([["0s", "10Mbps"], ["0s", "1Mbps"]])),
        "topology.down.rate",
        &["step 1", "increase"],
    );
}

#[test]
fn an_outage_is_a_step_of_0bps_in_a_schedule_with_some_rate() {
    accepted(&with(
        "topology.down.rate",
        json!([["0s", "0bps"], ["1s", "10Mbps"], ["2s", "0bps"]]),
    ));
    refused(
        &with("topology.down.rate", json!([["0s", "0bps"], ["1s", "0bps"]])),
        "topology.down.rate",
        &["every step is 0bps", "a step above 0bps"],
    );
}

#[test]
fn a_delay_schedule_starts_at_0s_and_takes_no_netem_queue() {
    let steps = json!([["0s", "30ms"], ["15s", "45ms"]]);
    accepted(&with("topology.down.delay", steps.clone()));
    refused(
        &with("topology.down.delay", json!([["0s", "30ms"], ["0s", "45ms"]])),
        "topology.down.delay",
        &["step 1", "increase"],
    );
    refused(
        &with("topology.down.delay", json!([["0s", "30ms"], ["5s", "3601s"]])),
        "topology.down.delay",
        &["3601", "0s to 3600s"],
    );
    let mut sc = with("topology.down.delay", steps);
    sc["topology"]["down"]["delay_jitter"] = json!("1ms");
    refused(
        &sc,
        "topology.down.delay_jitter",
        &["delay schedule", "one delay"],
    );
    refused(
        &with("topology.down.delay_reorder", json!(true)),
        "topology.down.delay_reorder",
        &["needs a delay schedule"],
    );
}

#[test]
fn a_hosts_timing_noise_is_at_most_a_second() {
    accepted(&with("topology.host_jitter", json!("1s")));
    accepted(&with("flows[0].host_jitter", json!("0s")));
    refused(
        &with("topology.host_jitter", json!("1001ms")),
        "topology.host_jitter",
        &["1001ms", "0s to 1s"],
    );
    refused(
        &with("flows[0].host_jitter", json!("2s")),
        "flows[0].host_jitter",
        &["2s", "0s to 1s"],
    );
}

#[test]
fn slot_bounds_are_netems() {
    accepted(&with(
        "topology.down.slot",
        json!({"min": "1ms", "max": "9ms", "packets": 40, "bytes": "64KB"}),
    ));
    refused(
        &with("topology.down.slot", json!({"min": "0s"})),
        "topology.down.slot.max",
        &["0s is out of range", "above 0s"],
    );
    refused(
        &with("topology.down.slot", json!({"min": "1ms", "bytes": "3GB"})),
        "topology.down.slot.bytes",
        &["3000000000B is out of range", "1 to 2147483647"],
    );
}

#[test]
fn a_rate_is_needed_on_a_wired_hop() {
    let mut sc = base();
    sc["topology"]["down"].as_object_mut().unwrap().remove("rate");
    refused(&sc, "topology.down.rate", &["missing", "\"10Mbps\""]);
}

#[test]
fn a_device_queue_counts_packets() {
    // its doc: "A device (driver) queue of this many packets ... (\"1p\")"
    accepted(&with("topology.down.device_queue", json!("1p")));
    refused(
        &with("topology.down.device_queue", json!("1500B")),
        "topology.down.device_queue",
        &["counts packets", "\"1p\""],
    );
    refused(
        &with("topology.down.device_queue", json!("100001p")),
        "topology.down.device_queue",
        &["100001p", "0p to 100000p"],
    );
}

#[test]
fn the_shorthand_needs_both_directions() {
    let mut sc = base();
    sc["topology"].as_object_mut().unwrap().remove("up");
    refused(&sc, "topology.up", &["missing", "topology.hops"]);
}

#[test]
fn hop_keys_of_the_general_form_are_refused_on_the_shorthand() {
    // their docs: "only in `topology.hops`"
    for (k, v) in [("name", json!("a")), ("direction", json!("down"))] {
        refused(
            &with(&format!("topology.down.{k}"), v),
            &format!("topology.down.{k}"),
            &["only allowed on an entry of topology.hops"],
        );
    }
}

#[test]
fn a_flow_count_is_1_to_100000() {
    accepted(&with("flows[0].count", json!(1)));
    refused(
        &with("flows[0].count", json!(0)),
        "flows[0].count",
        &["0 is out of range", "1 to 100000"],
    );
    refused(
        &with("flows[0].count", json!(100_001)),
        "flows[0].count",
        &["100001 is out of range", "1 to 100000"],
    );
}

#[test]
fn rtt_spread_is_below_the_rtt() {
    // its doc: "Must be below `rtt`."
    accepted(&with("flows[0].rtt_spread", json!("49ms")));
    refused(
        &with("flows[0].rtt_spread", json!("50ms")),
        "flows[0].rtt_spread",
        &["50ms", "below", "rtt"],
    );
}

#[test]
fn stop_is_after_the_start() {
    let sc = with("flows[0].start", json!("2s"));
    let mut ok = sc.clone();
    ok["flows"][0]["stop"] = json!("3s");
    accepted(&ok);
    let mut bad = sc;
    bad["flows"][0]["stop"] = json!("1s");
    refused(&bad, "flows[0].stop", &["1s", "allowed: a time after start"]);
}

#[test]
fn a_station_needs_a_wifi_medium() {
    refused(
        &with("flows[0].station", json!("laptop")),
        "flows[0].station",
        &["topology.wifi"],
    );
}

#[test]
fn a_key_of_another_flow_kind_is_refused_with_the_kinds_keys() {
    // udp's `rate` on a tcp flow
    refused(
        &with("flows[0].rate", json!("1Mbps")),
        "flows[0].rate",
        &["not a key of a tcp flow", "allowed: "],
    );
}

/// A scenario with one station on a WiFi medium whose key `k` is `v`.
fn wifi(k: &str, v: Value) -> Value {
    let mut sc = base();
    sc["topology"]["wifi"] = json!({"stations": [{"name": "laptop"}]});
    sc["topology"]["wifi"][k] = v;
    sc["topology"]["down"] = json!({"wifi": true, "qdisc": "pfifo"});
    sc["topology"]["up"] = json!({"wifi": true, "qdisc": "pfifo"});
    sc
}

#[test]
fn wifi_values_are_the_ones_its_reference_allows() {
    accepted(&wifi("width", json!(40)));
    // doc: "Channel width, MHz: 20 or 40."
    refused(
        &wifi("width", json!(80)),
        "topology.wifi.width",
        &["80", "20 or 40"],
    );
    // doc: "Guard interval: \"long\" (800 ns) or \"short\" (400 ns)."
    refused(
        &wifi("guard", json!("medium")),
        "topology.wifi.guard",
        &["\"medium\"", "\"long\"", "\"short\""],
    );
    // doc: "The HT MCS (0-31)"
    accepted(&wifi("stations", json!([{"name": "laptop", "mcs": 31}])));
    refused(
        &wifi("stations", json!([{"name": "laptop", "mcs": 32}])),
        "topology.wifi.stations[0].mcs",
        &["32", "0 to 31"],
    );
    // doc: "Probability that a subframe ... is lost"
    refused(
        &wifi("stations", json!([{"name": "laptop", "fer": 1.0}])),
        "topology.wifi.stations[0].fer",
        &["1 is out of range", "0 <= fer < 1"],
    );
    refused(
        &wifi("stations", json!([])),
        "topology.wifi.stations",
        &["at least one station"],
    );
    // the legacy OFDM rates of 802.11a/g: 6, 9, 12, 18, 24, 36, 48 and 54 Mb/s
    accepted(&wifi("ack_rate", json!("6Mbps")));
    refused(
        &wifi("ack_rate", json!("11Mbps")),
        "topology.wifi.ack_rate",
        &["11Mbps", "6, 9, 12, 18, 24, 36, 48 or 54Mbps"],
    );
}

#[test]
fn wifi_scheduler_keys_are_the_ones_their_docs_allow() {
    // doc: "\"fifo\" (round robin ...) or \"airtime\""
    accepted(&wifi("scheduler", json!("airtime")));
    refused(
        &wifi("scheduler", json!("wfq")),
        "topology.wifi.scheduler",
        &["\"wfq\"", "fifo, airtime"],
    );
    accepted(&wifi("airtime_quantum", json!("300us")));
    refused(
        &wifi("airtime_quantum", json!("0us")),
        "topology.wifi.airtime_quantum",
        &["0s is out of range", "1us to 100ms"],
    );
    // AQL's high limit is the one a station may reach while the radio is under its threshold:
    // below the low one it would never apply
    refused(
        &wifi("aql_limit_high", json!("4ms")),
        "topology.wifi.aql_limit_high",
        &["4ms is below aql_limit_low (5ms)"],
    );
}

#[test]
fn the_packets_table_estimate_is_held_to_max_rows() {
    // every hop at its peak rate in MTU-sized packets: 2 hops x 10 Mb/s x 10 s / (8 x 1500 B)
    // = 16,667 rows
    let packets = |max_rows: u64| {
        let mut sc = with("record.level", json!("packets"));
        sc["record"]["max_rows"] = json!(max_rows);
        sc
    };
    accepted(&packets(16_667));
    refused(
        &packets(16_666),
        "record.level",
        &["\"packets\"", "record.max_rows = 16666"],
    );
}

#[test]
fn hops_a_flow_names_exist_and_are_consecutive() {
    let mut sc = base();
    sc["topology"] = json!({
        "rtt": "50ms",
        "hops": [
            {"name": "a", "direction": "down", "rate": "10Mbps"},
            {"name": "b", "direction": "down", "rate": "10Mbps"},
            {"name": "c", "direction": "down", "rate": "10Mbps"},
            {"name": "u", "direction": "up", "rate": "10Mbps"},
        ],
    });
    // its doc: "the named hops are a contiguous part of that direction's chain"
    let route = |hops: Value| {
        let mut s = sc.clone();
        s["flows"][0]["hops"] = hops;
        s
    };
    accepted(&route(json!(["b", "c"])));
    refused(
        &route(json!(["a", "c"])),
        "flows[0].hops",
        &["not consecutive", "a -> b -> c", "contiguous"],
    );
    // every hop is listed, in `Topology::hops` order: the up chain first, then the down chain
    refused(
        &route(json!(["x"])),
        "flows[0].hops",
        &["\"x\" is not a hop", "allowed: u, a, b, c"],
    );
}

#[test]
fn wifi_mac_constants_are_within_their_ranges() {
    // the 5 GHz OFDM PHY's slot is 9 us and its SIFS 16 us (IEEE 802.11); the model takes
    // any up to 100 us; an A-MPDU's airtime up to 10 ms (the HT PPDU's maximum)
    accepted(&wifi("slot", json!("9us")));
    refused(
        &wifi("slot", json!("101us")),
        "topology.wifi.slot",
        &["101us is out of range", "1us to 100us"],
    );
    refused(
        &wifi("max_airtime", json!("11ms")),
        "topology.wifi.max_airtime",
        &["11ms", "100us to 10ms"],
    );
    // an A-MPDU holds at most 64 subframes (the block-ack window)
    accepted(&wifi("max_subframes", json!(64)));
    refused(
        &wifi("max_subframes", json!(65)),
        "topology.wifi.max_subframes",
        &["65 is out of range", "1 to 64"],
    );
}

/// `base()` with one UDP flow of `rate` instead of the TCP one.
fn udp(rate: &str) -> Value {
    let mut sc = base();
    sc["flows"] = json!([{"kind": "udp", "rate": rate}]);
    sc
}

#[test]
fn a_udp_flow_sends_no_faster_than_its_nic() {
    // topology.nic_rate's default: 1 Gb/s (its doc: "each end of a flow is a host whose
    // packets are serialised at this rate")
    accepted(&udp("1Gbps"));
    refused(
        &udp("2Gbps"),
        "flows[0].rate",
        &[
            "2Gbps is above the flow's NIC rate 1Gbps",
            "allowed: up to the NIC rate",
        ],
    );
    let mut own = udp("2Gbps");
    own["flows"][0]["nic_rate"] = json!("10Gbps");
    accepted(&own);
}

#[test]
fn the_memory_estimate_holds_packets_in_flight_to_max_memory() {
    // With NICs of unbounded rate, a 12 Gb/s stream of 1500 B packets (a million a second)
    // over a 100 ms path keeps rate x delay = 100,000 packets on their way: about 35 MB at
    // 350 B each, far above what the two 10 Mb/s hops and the recording add.
    let sc = |max: &str| {
        let mut sc = udp("12Gbps");
        sc["topology"]["nic_rate"] = json!("inf");
        sc["topology"]["rtt"] = json!("100ms");
        sc["record"]["max_memory"] = json!(max);
        sc
    };
    accepted(&sc("40MB"));
    refused(
        &sc("30MB"),
        "flows[0].rate",
        &[
            "100.0 thousand of its packets on their way",
            "record.max_memory = 30.0 MB",
        ],
    );
}

#[test]
fn the_memory_estimate_names_what_contributes_most() {
    // the case: a flow at 10^15 b/s with NICs of unbounded rate (4 billion packets on
    // a 50 ms path)
    let mut flood = udp("1000000000000000bps");
    flood["topology"]["nic_rate"] = json!("inf");
    refused(&flood, "flows[0].rate", &["record.max_memory = 8.0 GB"]);
    // 100,000 flows and 2 hops sampled every millisecond for a day: 8.6 x 10^12 series rows
    let mut series = with("record.level", json!("series"));
    series["duration"] = json!("86400s");
    series["record"]["interval"] = json!("1ms");
    series["flows"][0]["count"] = json!(100_000);
    refused(&series, "record.interval", &["100002 series every 1ms"]);
    // an hour's delay at 100 Gb/s: 30 billion full-size packets in flight
    let mut delay = with("topology.down.rate", json!("100Gbps"));
    delay["topology"]["down"]["delay"] = json!("3600s");
    delay["duration"] = json!("7200s");
    refused(&delay, "topology.down.rate", &["30.0 billion packets in flight"]);
}

#[test]
fn without_a_level_the_packets_table_is_kept_when_it_fits_max_rows() {
    use crate::record::Level;
    // 2 hops x 10 Mb/s x 10 s / (8 x 1500 B) = 16,667 packet rows (see the test above)
    let level = |max_rows: u64| {
        let mut sc = base();
        sc["record"] = json!({"max_rows": max_rows});
        parse(&sc.to_string()).expect("valid").record_level()
    };
    assert_eq!(level(16_667), Level::Packets);
    assert_eq!(level(16_666), Level::Series);
    // a level given is kept (and "packets" above max_rows refused, as above)
    let mut sc = base();
    sc["record"] = json!({"level": "summary", "max_rows": 1});
    assert_eq!(
        parse(&sc.to_string()).expect("valid").record_level(),
        Level::Summary
    );
}

#[test]
fn an_htb_hop_takes_a_schedule_of_rates_above_0() {
    // tc class change gives the class a new rate at each step; a class has no rate 0
    let mut sc = with("topology.down.rate", json!([["0s", "50Mbps"], ["5s", "25Mbps"]]));
    sc["topology"]["down"]["shaper"] = json!("htb");
    accepted(&sc);
    sc["topology"]["down"]["rate"] = json!([["0s", "50Mbps"], ["5s", "0bps"]]);
    refused(&sc, "topology.down.rate", &["0bps", "rates above 0"]);
}
