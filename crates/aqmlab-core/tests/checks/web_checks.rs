//! End-to-end checks of the PackMime-HTTP web flow (app::packmime, app::web) and of repeated
//! transfers (app::repeat) against facts independent of the code: on an idle path an exchange takes the handshake, the request, the
//! server's think time and the response (each at least one path delay and their serialisation);
//! every exchange requested in time completes; bytes delivered are exactly the plan's; runs are
//! deterministic and other flows' draws are unaffected.

use aqmlab_core::app::packmime::{plan, PackMimeParams};
use aqmlab_core::scenario::{self, build};
use aqmlab_core::units::{MS, SEC};
use serde_json::json;

fn run(v: serde_json::Value) -> build::RunResult {
    let sc = scenario::parse(&v.to_string()).expect("valid scenario");
    let r = build::run(&sc, sc.seed).expect("run");
    r.conservation.as_ref().expect("packet conservation");
    r
}

/// The PackMime plan of the `web` scenario's flow at `rate` (seed 3, flow 0, 60 s, HTTP/1.1).
fn plan_of(rate: f64) -> Vec<aqmlab_core::app::packmime::Connection> {
    let p = PackMimeParams { rate, http_1_1: true };
    plan(&p, 0, 60 * SEC, 3, 0)
}

fn web(rate: f64, link: &str, flows_extra: Vec<serde_json::Value>) -> serde_json::Value {
    let mut flows = vec![json!({"kind": "web", "conn_rate": rate})];
    flows.extend(flows_extra);
    json!({
        "name": "web", "duration": "60s", "seed": 3,
        "topology": {"rtt": "100ms", "down": {"rate": link, "limit": "10000p"},
                     "up": {"rate": link, "limit": "10000p"}},
        "flows": flows, "record": {"level": "summary"}
    })
}

#[test]
fn exchanges_complete_and_take_at_least_their_round_trips() {
    let r = run(web(5.0, "1Gbps", vec![]));
    let rows: Vec<_> = r.web.iter().map(|w| w.rec).collect();
    let want = plan_of(5.0);
    assert_eq!(rows.len(), want.iter().map(|c| c.exchanges.len()).sum::<usize>());
    let mut delivered = 0;
    for w in &rows {
        let Some(t0) = w.requested else { continue };
        let e = want[w.connection as usize].exchanges[w.index as usize];
        if t0 + 30 * SEC > 60 * SEC {
            continue;
        }
        // A big response may not fit in the run; 30 s suffices on an idle 1 Gb/s path for all
        // but multi-hundred-megabyte ones.
        let Some(t1) = w.completed else {
            assert!(w.rsp_bytes > 100_000_000, "{w:?} did not complete");
            continue;
        };
        // SYN -> SYN-ACK (1 RTT), request data (1/2 RTT), think time, response (1/2 RTT); a
        // later exchange of a persistent connection skips the handshake.
        let rtts = if w.index == 0 { 2 } else { 1 };
        assert!(
            t1 - t0 >= rtts * 100 * MS + e.server_delay,
            "{w:?} took {}",
            t1 - t0
        );
        delivered += w.req_bytes + w.rsp_bytes;
    }
    assert!(delivered > 0);
    // The flow delivered at least the completed exchanges' bytes (and the partial ones').
    assert!(r.flows[0].report.bytes_delivered >= delivered);
}

#[test]
fn single_small_exchange_takes_exactly_two_round_trips_plus_think_time() {
    // At 1 Gb/s serialisation is negligible (< 0.1 ms for these sizes): a one-segment request and
    // response complete in 2 RTT + server delay (+ NIC and link serialisation, below 1 ms).
    let r = run(web(0.2, "1Gbps", vec![]));
    let want = plan_of(0.2);
    let mut checked = 0;
    for w in &r.web {
        let e = want[w.rec.connection as usize].exchanges[w.rec.index as usize];
        if e.req > 1400 || e.rsp > 1400 || w.rec.index > 0 {
            continue;
        }
        let (Some(t0), Some(t1)) = (w.rec.requested, w.rec.completed) else {
            continue;
        };
        let d = t1 - t0 - 2 * 100 * MS - e.server_delay;
        assert!(d < MS, "{:?}: {} ns beyond 2 RTT + think time", w.rec, d);
        checked += 1;
    }
    assert!(checked > 0);
}

#[test]
fn persistent_connections_carry_later_exchanges_without_a_handshake() {
    // ns-2's PackMime sends every request and response of a persistent connection on the same
    // FullTcp agents (packmime_HTTP.cc: `agent_->sendmsg` per exchange), so on an idle path a
    // later one-segment exchange takes one RTT and the think time; with `persistent = false`
    // each exchange opens new transfers and pays the handshake's RTT too. Each connection's
    // exchanges all complete, and nothing is retransmitted (the streams' last ACKs arrive).
    for (persistent, rtts) in [(true, 1), (false, 2)] {
        let mut sc = web(5.0, "1Gbps", vec![]);
        sc["flows"][0]["persistent"] = json!(persistent);
        let r = run(sc);
        let want = plan_of(5.0);
        let mut checked = 0;
        for w in &r.web {
            let e = want[w.rec.connection as usize].exchanges[w.rec.index as usize];
            let Some(t0) = w.rec.requested.filter(|&t| t < 50 * SEC) else {
                continue;
            };
            let t1 = w
                .rec
                .completed
                .unwrap_or_else(|| panic!("{:?} did not complete", w.rec));
            if w.rec.index == 0 || e.req > 1400 || e.rsp > 1400 {
                continue;
            }
            let d = (t1 - t0 - e.server_delay) as i64 - rtts * 100 * MS as i64;
            assert!(
                (0..MS as i64).contains(&d),
                "{persistent}: {:?}: {d} ns beyond",
                w.rec
            );
            checked += 1;
        }
        assert!(checked >= 5, "{checked} later one-segment exchanges");
        assert_eq!(r.flows[0].report.retransmits, 0);
    }
}

#[test]
fn web_flow_is_deterministic_and_leaves_other_flows_draws_alone() {
    let a = run(web(
        20.0,
        "10Mbps",
        vec![json!({"kind": "udp", "rate": "64kbps", "packet_size": "100B", "arrivals": "poisson"})],
    ));
    let b = run(web(
        20.0,
        "10Mbps",
        vec![json!({"kind": "udp", "rate": "64kbps", "packet_size": "100B", "arrivals": "poisson"})],
    ));
    assert_eq!(a.events, b.events);
    assert_eq!(
        a.flows[0].report.bytes_delivered,
        b.flows[0].report.bytes_delivered
    );
    // The UDP source's sends depend only on its own stream.
    assert_eq!(a.flows[1].report.packets_sent, b.flows[1].report.packets_sent);
    let alone = run(json!({
        "name": "udp", "duration": "60s", "seed": 3,
        "topology": {"rtt": "100ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp", "count": 1, "bytes": "1KB", "start": "100s"},
                  {"kind": "udp", "rate": "64kbps", "packet_size": "100B", "arrivals": "poisson"}],
        "record": {"level": "summary"}
    }));
    assert_eq!(alone.flows[1].report.packets_sent, a.flows[1].report.packets_sent);
}

#[test]
fn web_keys_are_validated() {
    let bad = [
        (json!({"kind": "web"}), "flows[0].conn_rate"),
        (json!({"kind": "web", "conn_rate": 0}), "flows[0].conn_rate"),
        (
            json!({"kind": "web", "conn_rate": 5, "http": "2"}),
            "flows[0].http",
        ),
        (
            json!({"kind": "web", "conn_rate": 5, "bytes": "1MB"}),
            "flows[0].bytes",
        ),
        (
            json!({"kind": "web", "conn_rate": 5, "direction": "up"}),
            "flows[0].direction",
        ),
        (
            json!({"kind": "web", "conn_rate": 5, "piggyback": "yes"}),
            "flows[0].piggyback",
        ),
        (json!({"kind": "tcp", "piggyback": false}), "flows[0].piggyback"),
    ];
    for (flow, key) in bad {
        let v = json!({"name": "w", "duration": "1s",
                       "topology": {"rtt": "10ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
                       "flows": [flow]});
        let e = scenario::parse(&v.to_string()).expect_err("rejected");
        assert!(e.starts_with(key), "{e}");
    }
}

#[test]
fn repeated_transfers_follow_their_idle_gaps() {
    // 100 kB transfers with idle gaps uniform in 5..15 s, opened until 100 s, on an idle 10 Mb/s
    // path: each takes well under a second, so a cycle lasts 5..16 s: between 100/16 and 100/5 + 1
    // transfers, all finished by 120 s, each delivering exactly its 100 kB.
    let r = run(json!({
        "name": "rep", "duration": "120s", "seed": 4,
        "topology": {"rtt": "50ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp", "bytes": "100kB", "stop": "100s", "repeat": {"idle": ["5s", "15s"]}}],
        "record": {"level": "summary"}
    }));
    let delivered = r.flows[0].report.bytes_delivered;
    assert_eq!(delivered % 100_000, 0, "{delivered}");
    let n = delivered / 100_000;
    assert!((100 / 16..=100 / 5 + 1).contains(&n), "{n} transfers");
    let bad = json!({"name": "w", "duration": "1s",
                     "topology": {"rtt": "10ms", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
                     "flows": [{"kind": "tcp", "repeat": {"idle": ["5s", "15s"]}}]});
    let e = scenario::parse(&bad.to_string()).expect_err("needs bytes");
    assert!(e.starts_with("flows[0].repeat"), "{e}");
}
