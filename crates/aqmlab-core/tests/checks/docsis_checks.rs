//! Checks of a DOCSIS upstream hop (`docsis`) against the request-grant arithmetic of the
//! DOCSIS 3.1 MULPI spec's bandwidth allocation: an idle modem's access delay is the wait for
//! the next MAP (its contention request) plus the request-grant delay rounded up to a MAP; a
//! saturating sender gets the Max Sustained Rate; packets leave in grant-sized bursts, one per
//! MAP, at the channel's rate.

use crate::{link_diag as diag, run};
use aqmlab_core::scenario::{self, build};
use aqmlab_core::units::{tx_time, MS, SEC, US};
use serde_json::{json, Value};

/// One 1500-byte ping sent at 1 s up a hop `up`; its one-way time up (ns).
fn ping_up(up: Value) -> u64 {
    let r = run(json!({
        "name": "idle", "duration": "1.5s",
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps"}, "up": up},
        "flows": [{"kind": "ping", "interval": "1s", "packet_size": "1500B", "start": "1s"}]
    }));
    r.probes[0].reply.expect("reply").1
}

#[test]
fn an_idle_modems_access_delay_is_the_map_arithmetic() {
    // Without the MAC the hop serialises at the channel's rate: the control. The ping reaches
    // the hop at 1 s + 12 us (its 1 Gb/s NIC) + 5 ms (rtt / 4): 1005.012 ms.
    let plain = ping_up(json!({"rate": "122.88Mbps"}));
    // MAPs of 2 ms: the contention request goes at the next MAP start, 1006 ms; with a
    // request-grant delay of 4 ms the first MAP that can grant it starts at 1010 ms, where the
    // packet leaves: 4.988 ms later than without the MAC.
    let mac = ping_up(json!({"rate": "20Mbps", "docsis": {}}));
    assert_eq!(mac - plain, 4988 * US);
    // MAPs of 1.5 ms: the next starts at 1006.5 ms (671 x 1.5); a request-grant delay of 2 ms
    // reaches 1008.5 ms, and the first MAP at or after it starts at 1009.5 ms: 4.488 ms.
    let mac = ping_up(json!({"rate": "20Mbps",
        "docsis": {"map": "1.5ms", "rg_delay": "2ms"}}));
    assert_eq!(mac - plain, 4488 * US);
}

/// Saturating UDP (1500-byte packets at 40 Mb/s) up a 20 Mb/s DOCSIS upstream for `secs`.
fn udp_up(secs: u64) -> build::RunResult {
    run(json!({
        "name": "docsis", "duration": format!("{secs}s"),
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps"},
            "up": {"rate": "20Mbps", "docsis": {}, "qdisc": "pfifo", "limit": "1000p"}},
        "flows": [{"kind": "udp", "direction": "up", "rate": "40Mbps", "packet_size": "1500B"}]
    }))
}

#[test]
fn a_saturating_upload_gets_the_max_sustained_rate() {
    let r = udp_up(5);
    let up = r.links.iter().find(|l| l.hop == "up").expect("up");
    let rate = up.stats.tx_bytes as f64 * 8.0 / 5.0;
    assert!((rate / 20e6 - 1.0).abs() < 0.01, "{rate} b/s");
    // one contention request; the rest piggybacked, and every MAP from the first grant (at
    // 5.012 ms the first packet arrives: request at 6 ms, grant at 10 ms) on granted
    assert_eq!(diag(&r, "up", "docsis_contention"), 1.0);
    assert!(diag(&r, "up", "docsis_piggyback") > 1000.0);
    let maps = (5 * SEC - 10 * MS) / (2 * MS);
    assert!((diag(&r, "up", "docsis_grants") - maps as f64).abs() <= 1.0);
}

#[test]
fn packets_leave_in_grant_sized_bursts_once_per_map() {
    let r = udp_up(2);
    let p = &r.packets;
    let hop = r.links.iter().position(|l| l.hop == "up").expect("up") as u8;
    let mut outs: Vec<u64> = (0..p.flow.len())
        .filter(|&i| p.hop[i] == hop && p.outcome[i] <= 1)
        .map(|i| p.t_out[i])
        .collect();
    outs.sort_unstable();
    // 20 Mb/s x 2 ms = 5000 B a MAP. A packet is taken whole while the grant lasts and what it
    // overruns comes out of the next grant: 4 packets (1000 B over), then 3 (500 B over), then
    // 3 (even): 10 packets every 3 MAPs. Each burst starts at its MAP's start and its packets
    // follow one another at the channel's 122.88 Mb/s.
    let ser = tx_time(1500, 122_880_000);
    let map = 2 * MS;
    let steady: Vec<u64> = outs.into_iter().filter(|&t| t >= 100 * MS).collect();
    let mut bursts: Vec<Vec<u64>> = Vec::new();
    for t in steady {
        match bursts.last_mut() {
            Some(b) if b[0] / map == t / map => b.push(t),
            _ => bursts.push(vec![t]),
        }
    }
    bursts.pop(); // the run may end within a burst
    for b in &bursts {
        assert_eq!(b[0] % map, 0, "a burst starts at a MAP start: {b:?}");
        assert!(b.windows(2).all(|w| w[1] - w[0] == ser), "{b:?}");
        assert!(b.len() == 3 || b.len() == 4, "{b:?}");
    }
    // one burst per MAP, none skipped
    assert!(bursts.windows(2).all(|w| w[1][0] - w[0][0] == map));
    let packets: usize = bursts.iter().map(|b| b.len()).sum();
    let expected = bursts.len() as f64 * 5000.0 / 1500.0;
    assert!(
        (packets as f64 - expected).abs() <= 1.0,
        "{packets} vs {expected}"
    );
}

#[test]
fn docsis_runs_are_deterministic() {
    let a = udp_up(1);
    let b = udp_up(1);
    assert_eq!(a.packets.t_out, b.packets.t_out);
    assert_eq!(a.links[1].stats.tx_bytes, b.links[1].stats.tx_bytes);
}

fn parse_err(up: Value) -> String {
    let v = json!({"name": "bad", "duration": "1s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": up}});
    scenario::parse(&v.to_string()).expect_err("refused")
}

#[test]
fn bad_docsis_keys_are_refused_naming_the_key() {
    let e = parse_err(json!({"rate": "20Mbps", "docsis": {"map": "0s"}}));
    assert_eq!(
        e,
        "topology.up.docsis.map: 0s is out of range; allowed 50us to 100ms"
    );
    let e = parse_err(json!({"rate": "20Mbps", "docsis": {"rg_delay": "1ms"}}));
    assert!(
        e.starts_with("topology.up.docsis.rg_delay: 1ms is out of range; allowed 2ms (one MAP) to 1s"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "200Mbps", "docsis": {}}));
    assert!(
        e.starts_with("topology.up.docsis.channel_rate: 122880Kbps is below the hop's rate"),
        "{e}"
    );
    let e = parse_err(json!({"rate": [["0s", "20Mbps"], ["1s", "10Mbps"]], "docsis": {}}));
    assert!(
        e.starts_with("topology.up.rate: a schedule is not allowed with docsis"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "20Mbps", "docsis": {}, "slot": {"min": "1ms"}}));
    assert!(e.starts_with("topology.up.slot: not allowed with docsis"), "{e}");
    let e = parse_err(json!({"trace": {"ms": [1]}, "docsis": {}}));
    assert!(
        e.starts_with("topology.up.docsis: not allowed with a trace"),
        "{e}"
    );
}

/// UDP (1500-byte packets at `rate`) up a 20 Mb/s upstream whose MAC shapes by a token bucket
/// (`docsis` keys `extra`), through `qdisc`, for `duration`.
fn udp_up_bucket(extra: Value, qdisc: Value, rate: &str, duration: &str) -> build::RunResult {
    let mut docsis = json!({"rate_shaper": "token_bucket"});
    docsis
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    run(json!({
        "name": "docsis_bucket", "duration": duration,
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps"},
            "up": {"rate": "20Mbps", "docsis": docsis, "qdisc": qdisc, "limit": "1000p"}},
        "flows": [{"kind": "udp", "direction": "up", "rate": rate, "packet_size": "1500B"}]
    }))
}

#[test]
fn a_token_bucket_lets_its_burst_then_the_max_sustained_rate() {
    // The default bucket holds 100 ms of the rate, 250000 B, full at the start: over 5 s a
    // saturating modem sends at most that plus 5 s of 20 Mb/s (12.5 MB), and all but the first
    // MAPs' worth of it (the request-grant delay: grants from 10 ms).
    let r = udp_up_bucket(json!({}), json!("pfifo"), "40Mbps", "5s");
    let up = r.links.iter().find(|l| l.hop == "up").expect("up");
    let bound = 250_000 + 20_000_000 / 8 * 5;
    assert!(up.stats.tx_bytes <= bound + 1500, "{}", up.stats.tx_bytes);
    assert!(
        up.stats.tx_bytes as f64 > 0.99 * bound as f64,
        "{}",
        up.stats.tx_bytes
    );
}

#[test]
fn docsis_pie_reads_the_token_bucket() {
    // 60 Mb/s (7.5 MB/s) for 350 ms (2.625 MB) into a full 2 MB bucket that gains 2.5 MB/s:
    // the tokens (2 MB + 0.875 MB at 350 ms) last the run, so the grants follow the requests
    // and the queue holds what waits for the request-grant loop (several ms of 60 Mb/s), all
    // of it within the tokens. The estimate from the bucket (no Peak Traffic Rate) is then 0
    // at every update, below the target, and drop_prob_ never leaves 0. From the queue's
    // bytes over the Max Sustained Rate (`configured`) the same queue reads above the 10 ms
    // target (30 KB is 12 ms at 20 Mb/s) and drop_prob_ rises.
    let prob = |estimator: &str| {
        let q = json!({"kind": "pie", "profile": "docsis", "estimator": estimator});
        let r = udp_up_bucket(json!({"max_burst": "2000000B"}), q, "60Mbps", "350ms");
        diag(&r, "up", "drop_prob")
    };
    assert_eq!(prob("token_bucket"), 0.0);
    assert!(prob("configured") > 0.0);
    // What a request leaves is at least 2 MB + 0.875 MB - 2.625 MB = 250 KB, all the run, far
    // above the queue: the count of the last request reads 0 as well.
    assert_eq!(prob("token_bucket_last_request"), 0.0);
}

#[test]
fn bad_token_bucket_keys_are_refused_naming_the_key() {
    let e = parse_err(json!({"rate": "20Mbps", "docsis": {"max_burst": "5000B"}}));
    assert!(
        e.starts_with("topology.up.docsis.max_burst: only with rate_shaper = \"token_bucket\""),
        "{e}"
    );
    let e = parse_err(json!({"rate": "20Mbps",
        "docsis": {"rate_shaper": "token_bucket", "max_burst": "1000B"}}));
    assert!(
        e.starts_with("topology.up.docsis.max_burst: 1000B is out of range"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "20Mbps",
        "docsis": {"rate_shaper": "token_bucket", "peak_rate": "10Mbps"}}));
    assert!(
        e.starts_with("topology.up.docsis.peak_rate: 10Mbps is below the hop's rate"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "20Mbps", "docsis": {"rate_shaper": "leaky"}}));
    assert!(e.contains("rate_shaper"), "{e}");
    // PIE's estimate from the bucket needs one
    for estimator in ["token_bucket", "token_bucket_last_request"] {
        let v = json!({"name": "bad", "duration": "1s",
            "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"},
                "up": {"rate": "20Mbps", "docsis": {},
                    "qdisc": {"kind": "pie", "profile": "docsis", "estimator": estimator}}}});
        let sc = scenario::parse(&v.to_string()).expect("parses");
        let e = build::run(&sc, sc.seed).err().expect("refused");
        let want = format!("topology.up.qdisc.estimator: \"{estimator}\" needs pie on a hop with docsis");
        assert!(e.starts_with(&want), "{e}");
    }
}
