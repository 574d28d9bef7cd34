//! A hop as a Linux box shapes and delays it: HTB as the hop's shaper (`shaper = "htb"`,
//! Linux 3.2 sch_htb.c) and netem's queue as the hop's delay (`delay_limit`, `delay_jitter`,
//! sch_netem.c), end to end, against numbers worked by hand from the kernel's rules.

use crate::run;
use aqmlab_core::scenario;
use aqmlab_core::units::{tx_time, MS};
use serde_json::{json, Value};

fn error(v: Value) -> String {
    scenario::parse(&v.to_string()).expect_err("invalid")
}

fn two_hops(down: Value, up: Value) -> Value {
    json!({"rtt": "20ms", "nic_rate": "100Mbps", "down": down, "up": up})
}

#[test]
fn an_idle_htb_class_sends_at_the_line_rate() {
    // A 1500-byte probe finds HTB's class with its full default burst (1600 B): it leaves at
    // the 100 Mb/s interface's rate (120 us), not at the class's 500 kb/s (24 ms). Each way:
    // the host's NIC, rtt/4, the hop, rtt/4.
    let r = run(json!({
        "name": "htb-probe", "duration": "1s",
        "topology": two_hops(json!({"rate": "500kbps", "shaper": "htb"}), json!({"rate": "500kbps", "shaper": "htb"})),
        "flows": [{"kind": "ping", "interval": "10s", "packet_size": "1500B"}]
    }));
    let line = tx_time(1500, 100_000_000);
    let (rtt, up, down) = r.probes[0].reply.expect("reply");
    assert_eq!(up, line + 5 * MS + line + 5 * MS);
    assert_eq!(down, up);
    assert_eq!(rtt, 2 * up);
    // The links table keeps the class's rate as the hop's.
    assert!(r.links.iter().all(|l| l.rate_bps == 500_000));
}

#[test]
fn a_backlogged_htb_class_delivers_its_rate_in_ethernet_frames() {
    // 1 Mb/s of 1500-byte UDP packets into a 500 kb/s class: HTB charges each packet as its
    // 1514-byte Ethernet frame in tc's 8-byte cells, 1520 bytes, so the class carries
    // 500 kb/s x 1500 / 1520 = 493.4 kb/s of IP packets.
    let secs = 20;
    let r = run(json!({
        "name": "htb-rate", "duration": format!("{secs}s"),
        "topology": two_hops(json!({"rate": "500kbps", "shaper": "htb"}), json!({"rate": "100Mbps"})),
        "flows": [{"kind": "udp", "direction": "down", "rate": "1Mbps", "packet_size": "1500B"}]
    }));
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    let rate = down.stats.tx_bytes as f64 * 8.0 / secs as f64;
    let want = 500_000.0 * 1500.0 / 1520.0;
    assert!((rate / want - 1.0).abs() < 0.002, "{rate} vs {want}");
}

#[test]
fn a_netem_delay_adds_exactly_its_delay() {
    // 30 ms of netem on the down hop (the shorthand's): the reply pays it once, on top of
    // the path without it; the flow's base RTT counts it.
    let flows = json!([{"kind": "ping", "interval": "10s", "packet_size": "100B"}]);
    let plain = run(json!({"name": "p", "duration": "1s", "flows": flows,
        "topology": two_hops(json!({"rate": "10Mbps"}), json!({"rate": "10Mbps"}))}));
    let netem = run(json!({"name": "n", "duration": "1s", "flows": flows,
        "topology": two_hops(json!({"rate": "10Mbps", "delay": "30ms", "delay_limit": "1000p"}), json!({"rate": "10Mbps"}))}));
    let (_, up0, down0) = plain.probes[0].reply.expect("reply");
    let (_, up1, down1) = netem.probes[0].reply.expect("reply");
    assert_eq!(up1, up0);
    assert_eq!(down1, down0 + 30 * MS);
    assert_eq!(netem.flows[0].base_rtt, plain.flows[0].base_rtt + 30 * MS);
}

#[test]
fn netem_holds_its_limit_and_drops_the_next_arrival() {
    // 100 Mb/s of UDP through a 100 Mb/s hop into 1 s of netem with limit 1000: in the run's
    // 0.5 s nothing is due out of netem yet, so it takes the first 1000 packets the hop sends
    // and drops every later one (sch_netem.c tfifo_enqueue: qlen < limit, else drop).
    let r = run(json!({
        "name": "netem-limit", "duration": "500ms",
        "topology": {"rtt": "2ms", "down": {"rate": "100Mbps", "delay": "1s", "delay_limit": "1000p"}, "up": {"rate": "100Mbps"}},
        "flows": [{"kind": "udp", "direction": "down", "rate": "100Mbps", "packet_size": "1500B"}]
    }));
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    assert!(down.stats.tx_packets > 3000, "{}", down.stats.tx_packets);
    assert_eq!(down.stats.drops[0], down.stats.tx_packets - 1000);
    assert_eq!(r.flows[0].report.bytes_delivered, 0);
}

/// One-way delays (up, ns) of 1 ms probes through 30 ms of netem on the up hop with `jitter`,
/// less the 1 Gb/s hop's serialisation.
fn probe_delays(jitter: &str) -> Vec<u64> {
    let r = run(json!({
        "name": "netem-probes", "duration": "3s",
        "topology": {"rtt": "0ms", "nic_rate": "inf",
            "down": {"rate": "1Gbps"}, "up": {"rate": "1Gbps", "delay": "30ms", "delay_jitter": jitter}},
        "flows": [{"kind": "ping", "interval": "1ms", "packet_size": "100B"}]
    }));
    let line = tx_time(100, 1_000_000_000);
    r.probes
        .iter()
        .filter_map(|p| p.reply.map(|x| x.1 - line))
        .collect()
}

#[test]
fn netem_without_jitter_keeps_the_order_and_adds_its_delay() {
    // Equal delays: every probe is due exactly 30 ms after it arrived, so they leave in the
    // order they came (tfifo appends at the tail when the time is not before the last one's).
    let ups = probe_delays("0ms");
    assert!(ups.len() > 2900);
    assert!(ups.iter().all(|&u| u == 30 * MS));
}

#[test]
fn netem_jitter_orders_packets_by_their_own_time_to_send() {
    // Probes every 1 ms through 30 ms +- 10 ms of netem jitter (uniform, tabledist without a
    // table). tfifo keeps packets in order of their time to send, so each probe pays exactly
    // its own draw, in [20 ms, 40 ms), with no wait behind an earlier probe's longer draw: the
    // one-way delays spread over the whole range and later probes overtake earlier ones.
    let ups = probe_delays("10ms");
    assert!(ups.len() > 2900);
    assert!(ups.iter().all(|&u| (20 * MS..40 * MS).contains(&u)));
    let lo = ups.iter().filter(|&&u| u < 22 * MS).count();
    let hi = ups.iter().filter(|&&u| u >= 38 * MS).count();
    // a tenth of the range at each end holds about a tenth of the probes (uniform)
    for n in [lo, hi] {
        assert!(
            (n as f64 / ups.len() as f64 - 0.1).abs() < 0.03,
            "{n} of {}",
            ups.len()
        );
    }
    let overtaken = ups.windows(2).filter(|w| w[1] + MS < w[0]).count();
    assert!(overtaken > ups.len() / 4, "{overtaken}");
    let mean = ups.iter().sum::<u64>() as f64 / ups.len() as f64;
    assert!((mean / (30 * MS) as f64 - 1.0).abs() < 0.02, "{mean}");
}

#[test]
fn bad_shaper_and_netem_keys_name_the_key() {
    let sc = |down: Value| json!({"name": "x", "duration": "1s", "topology": {"rtt": "1ms", "down": down, "up": {"rate": "1Mbps"}}});
    let cases = [
        (
            json!({"rate": "1Mbps", "htb_burst": "3000B"}),
            "topology.down.htb_burst: needs shaper",
        ),
        (
            json!({"rate": [["0s", "1Mbps"], ["1s", "0bps"]], "shaper": "htb"}),
            "topology.down.rate: an outage (0bps)",
        ),
        (
            json!({"rate": "1Mbps", "shaper": "htb", "htb_cburst": "0B"}),
            "topology.down.htb_cburst: 0B is out of range",
        ),
        (
            json!({"rate": "1Mbps", "delay_limit": "10p"}),
            "topology.down.delay_limit: needs a delay",
        ),
        (
            json!({"rate": "1Mbps", "delay": "5ms", "delay_limit": "10KB"}),
            "topology.down.delay_limit: 10000B",
        ),
        (
            json!({"rate": "1Mbps", "delay": "5ms", "delay_jitter": "6ms"}),
            "topology.down.delay_jitter: 6ms is out of range",
        ),
    ];
    for (down, want) in cases {
        let e = error(sc(down));
        assert!(e.starts_with(want), "{e}");
    }
    let e = error(sc(json!({"rate": "1Mbps", "shaper": "tbf"})));
    assert!(
        e.contains("topology.down.shaper") && e.contains("tbf") && e.contains("htb"),
        "{e}"
    );
    let mut inf = sc(json!({"rate": "1Mbps", "shaper": "htb"}));
    inf["topology"]["nic_rate"] = json!("inf");
    assert!(error(inf).starts_with("topology.nic_rate: \"inf\" is not allowed"));
}

#[test]
fn shaper_none_is_the_hop_without_a_shaper() {
    // its doc: "Default (or \"none\"): no shaper, the hop serialises at `rate`" -- a sweep sets
    // "none" beside "htb"; the run is the one without the key, packet for packet
    let sc = |down: Value| {
        json!({
            "name": "none", "duration": "3s",
            "topology": two_hops(down, json!({"rate": "1Mbps"})),
            "flows": [{"kind": "tcp", "direction": "down"}, {"kind": "ping", "interval": "100ms"}]
        })
    };
    let plain = run(sc(json!({"rate": "1Mbps", "qdisc": "codel"})));
    let none = run(sc(json!({"rate": "1Mbps", "qdisc": "codel", "shaper": "none"})));
    let htb = run(sc(json!({"rate": "1Mbps", "qdisc": "codel", "shaper": "htb"})));
    assert_eq!(none.packets.t_out, plain.packets.t_out);
    assert_eq!(none.packets.outcome, plain.packets.outcome);
    assert_ne!(htb.packets.t_out, plain.packets.t_out);
    // and its keys still need "htb"
    let e = error(sc(
        json!({"rate": "1Mbps", "shaper": "none", "htb_burst": "3000B"}),
    ));
    assert!(
        e.contains("topology.down.htb_burst: needs shaper = \"htb\""),
        "{e}"
    );
}
