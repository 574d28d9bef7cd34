//! End-to-end checks of the webpage flow (app::webpage) against facts independent of the code:
//! on an idle path a fetch takes the name lookup's round trip, then per object (one connection
//! each) a handshake, the request and the response's slow-start rounds from the initial window,
//! or over persistent connections a handshake per worker and slow-start rounds from the window
//! the connection's earlier objects opened (computed here from the object sizes, the MSS and the
//! IW); a standing FIFO queue slows fetches more than fq_codel;
//! a fetch that cannot finish in its timeout is counted as timed out; runs are deterministic.

use aqmlab_core::scenario::{self, build};
use aqmlab_core::units::{fmt_time, Time, MS, SEC};
use serde_json::json;

const MSS: u64 = 1448;
const IW: u64 = 10;

fn run(v: serde_json::Value) -> build::RunResult {
    let sc = scenario::parse(&v.to_string()).expect("valid scenario");
    let r = build::run(&sc, sc.seed).expect("run");
    r.conservation.as_ref().expect("packet conservation");
    r
}

fn scenario(
    flow: serde_json::Value,
    rate: &str,
    qdisc: &str,
    extra: Vec<serde_json::Value>,
) -> serde_json::Value {
    let mut flows = vec![flow];
    flows.extend(extra);
    json!({
        "name": "webpage", "duration": "20s", "seed": 5,
        "topology": {"rtt": "100ms",
                     "down": {"rate": rate, "qdisc": qdisc, "limit": "1000p"},
                     "up": {"rate": rate, "qdisc": qdisc, "limit": "1000p"}},
        "flows": flows, "record": {"level": "summary"}
    })
}

/// Slow-start rounds to send `segs` segments from a window of `w` segments, the window doubling
/// every round (one ACK per segment, each opening one more segment; no loss): the smallest r
/// with w (2^r - 1) >= segs.
fn rounds_from(w: u64, segs: u64) -> u64 {
    let mut r = 0;
    while w * ((1 << r) - 1) < segs {
        r += 1;
    }
    r
}

fn rounds(bytes: u64) -> u64 {
    rounds_from(IW, bytes.div_ceil(MSS))
}

/// One object's exchange on a fresh connection of an idle path, in RTTs: the SYN and SYN-ACK
/// (1), the request's half RTT, the response's rounds (the last one half a round trip).
fn exchange_rtts(bytes: u64) -> u64 {
    1 + rounds(bytes)
}

/// The objects of one persistent connection on an idle path, one after another, in RTTs: the
/// handshake once (1), then per object the request's half RTT and the response's rounds. Every
/// segment of an object is acknowledged (one ACK each, delayed ACKs off) when its last byte
/// arrives, and the next request leaves then, so the next response starts from the window
/// IW + all segments sent before on the connection (slow start adds one segment per segment
/// acknowledged); an object's short last segment counts as one, as Linux counts in packets.
fn persistent_rtts(objects: &[u64]) -> u64 {
    let mut w = IW;
    let mut total = 1;
    for &b in objects {
        let segs = b.div_ceil(MSS);
        total += rounds_from(w, segs);
        w += segs;
    }
    total
}

fn idle_flow(objects: &[u64], workers: u32, persistent: bool) -> serde_json::Value {
    json!({"kind": "webpage", "objects": objects.iter().map(|b| format!("{b}B")).collect::<Vec<_>>(),
           "workers": workers, "interval": "5s", "iw": IW, "mss": MSS, "delack": false,
           "persistent": persistent})
}

fn fetch_times(r: &build::RunResult) -> Vec<Time> {
    r.webpage
        .iter()
        .filter_map(|p| p.rec.completed.map(|t| t - p.rec.start))
        .collect()
}

#[test]
fn idle_fetch_per_object_connection_takes_the_lookup_and_each_objects_round_trips() {
    let rtt = 100 * MS;
    // Serialisation at 1 Gb/s adds under 0.1 ms per window; allow 3 ms in all.
    let tol = 3 * MS;
    // Main document, then two objects in parallel (four workers).
    let page = [16_000, 20_000, 20_000];
    let want = rtt * (1 + exchange_rtts(page[0]) + exchange_rtts(page[1]));
    let r = run(scenario(idle_flow(&page, 4, false), "1Gbps", "pfifo", vec![]));
    let got = fetch_times(&r);
    assert_eq!(got.len(), 4, "{:?}", r.webpage);
    for t in &got {
        assert!(t.abs_diff(want) <= tol, "fetch took {t}, analytic {want}");
    }
    // One worker: the objects go one after the other.
    let page = [5_000, 30_000, 2_000, 60_000];
    let want = rtt * (1 + page.iter().map(|&b| exchange_rtts(b)).sum::<u64>());
    let r = run(scenario(idle_flow(&page, 1, false), "1Gbps", "pfifo", vec![]));
    for t in fetch_times(&r) {
        assert!(t.abs_diff(want) <= tol, "fetch took {t}, analytic {want}");
    }
}

#[test]
fn idle_fetch_over_persistent_connections_takes_the_analytic_round_trips() {
    let rtt = 100 * MS;
    let tol = 3 * MS;
    // One worker: every object on one connection. Segments 4, 21, 2, 42: windows 10, 14, 35,
    // 37 give 1, 2, 1, 2 rounds; with the lookup and the handshake 1 + 1 + 6 = 8 RTT, where a
    // connection per object takes 1 + (2 + 3 + 2 + 4) = 12: three handshakes and one slow-start
    // round fewer.
    let page = [5_000, 30_000, 2_000, 60_000];
    let want = rtt * (1 + persistent_rtts(&page));
    assert_eq!(want, 8 * rtt);
    let per_object = rtt * (1 + page.iter().map(|&b| exchange_rtts(b)).sum::<u64>());
    let r = run(scenario(idle_flow(&page, 1, true), "1Gbps", "pfifo", vec![]));
    let got = fetch_times(&r);
    assert_eq!(got.len(), 4, "{:?}", r.webpage);
    for t in &got {
        assert!(t.abs_diff(want) <= tol, "fetch took {t}, analytic {want}");
    }
    let r = run(scenario(idle_flow(&page, 1, false), "1Gbps", "pfifo", vec![]));
    for t in fetch_times(&r) {
        assert!(
            t.abs_diff(per_object) <= tol,
            "fetch took {t}, analytic {per_object}"
        );
    }
    // Three workers, the main document (12 segments) then six objects of 14 segments. The
    // lookup, then the main document on worker 0's new connection: 1 + 1 + 2 = t 4 RTT. Objects
    // 1-3 go to workers 0-2 (the first free worker takes the next object): worker 0's window is
    // 10 + 12 = 22 segments (1 round, t 5), workers 1 and 2 open their connections (1 + 2, t 7).
    // Worker 0 takes objects 4 and 5 (windows 36, 50: 1 round each, t 6 and 7); object 6 leaves
    // at t 7 on a connection whose window is at least 10 + 14 (1 round): t 8. A connection per
    // object: 4 + 3 + 3 = 10.
    let page = [16_000, 20_000, 20_000, 20_000, 20_000, 20_000, 20_000];
    let main = 1 + persistent_rtts(&page[..1]);
    let want = rtt * (main + persistent_rtts(&page[1..2]) + rounds_from(IW + 14, 14));
    assert_eq!(want, 8 * rtt);
    let per_object = rtt * (1 + exchange_rtts(page[0]) + 2 * exchange_rtts(page[1]));
    assert_eq!(per_object, 10 * rtt);
    for (persistent, want) in [(true, want), (false, per_object)] {
        let r = run(scenario(
            idle_flow(&page, 3, persistent),
            "1Gbps",
            "pfifo",
            vec![],
        ));
        let got = fetch_times(&r);
        assert_eq!(got.len(), 4, "{:?}", r.webpage);
        for t in &got {
            assert!(
                t.abs_diff(want) <= tol,
                "persistent {persistent}: fetch took {t}, analytic {want}"
            );
        }
    }
}

fn mean(v: &[Time]) -> f64 {
    v.iter().map(|&t| t as f64).sum::<f64>() / v.len() as f64
}

#[test]
fn fetches_behind_a_bulk_download_are_slower_through_fifo_than_fq_codel() {
    let bulk = vec![json!({"kind": "tcp", "direction": "down"})];
    let flow = json!({"kind": "webpage", "page": "small", "interval": "1s", "start": "2s"});
    let fifo = fetch_times(&run(scenario(flow.clone(), "10Mbps", "pfifo", bulk.clone())));
    let fq = fetch_times(&run(scenario(flow.clone(), "10Mbps", "fq_codel", bulk)));
    // Unloaded through the same discipline: fq_codel round-robins the page's own connections
    // (each its own 5-tuple), which a FIFO serves in arrival order.
    let idle = fetch_times(&run(scenario(flow, "10Mbps", "fq_codel", vec![])));
    assert!(!fifo.is_empty() && !fq.is_empty() && !idle.is_empty());
    // A 1000-packet FIFO at 10 Mb/s holds up to 1.2 s of queue; fq_codel keeps the page's
    // sparse flows ahead of the bulk flow's backlog.
    assert!(
        mean(&fifo) > 2.0 * mean(&fq),
        "fifo {} fq_codel {}",
        mean(&fifo),
        mean(&fq)
    );
    assert!(
        mean(&fq) >= mean(&idle),
        "fq_codel {} idle {}",
        mean(&fq),
        mean(&idle)
    );
}

#[test]
fn a_fetch_past_its_timeout_is_counted() {
    // 3 MB at 1 Mb/s takes at least 24 s: a 5 s timeout must cut every fetch.
    let flow = json!({"kind": "webpage", "page": "large", "interval": "1s", "timeout": "5s"});
    let r = run(scenario(flow, "1Mbps", "pfifo", vec![]));
    assert!(!r.webpage.is_empty());
    let last_start = r.webpage.last().expect("fetches").rec.start;
    for p in &r.webpage {
        if p.rec.start + 5 * SEC <= 20 * SEC {
            assert!(p.rec.timed_out && p.rec.completed.is_none(), "{p:?}");
        }
        assert!(p.rec.objects_done < 110);
    }
    // A timed-out fetch ends at its timeout; the next starts then (its interval has passed).
    assert!(r
        .webpage
        .windows(2)
        .all(|w| w[1].rec.start - w[0].rec.start == 5 * SEC));
    assert!(last_start <= 20 * SEC);
}

#[test]
fn webpage_runs_are_deterministic() {
    let bulk = vec![json!({"kind": "tcp", "direction": "down"})];
    let flow = json!({"kind": "webpage", "page": "small", "interval": "500ms"});
    let a = run(scenario(flow.clone(), "10Mbps", "pfifo", bulk.clone()));
    let b = run(scenario(flow, "10Mbps", "pfifo", bulk));
    assert_eq!(a.events, b.events);
    let recs = |r: &build::RunResult| r.webpage.iter().map(|p| p.rec).collect::<Vec<_>>();
    assert_eq!(recs(&a), recs(&b));
}

#[test]
fn webpage_keys_are_validated() {
    let bad = [
        (json!({"kind": "webpage", "page": "medium"}), "flows[0].page"),
        (
            json!({"kind": "webpage", "page": "small", "objects": ["1kB"]}),
            "flows[0].page",
        ),
        (json!({"kind": "webpage", "objects": []}), "flows[0].objects"),
        (
            json!({"kind": "webpage", "objects": ["1kB", "0B"]}),
            "flows[0].objects[1]",
        ),
        (json!({"kind": "webpage", "workers": 0}), "flows[0].workers"),
        (json!({"kind": "webpage", "interval": "0s"}), "flows[0].interval"),
        (json!({"kind": "webpage", "timeout": "0s"}), "flows[0].timeout"),
        (
            json!({"kind": "webpage", "direction": "up"}),
            "flows[0].direction",
        ),
        (json!({"kind": "webpage", "conn_rate": 3}), "flows[0].conn_rate"),
        (
            json!({"kind": "webpage", "persistent": "yes"}),
            "flows[0].persistent",
        ),
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
fn resolved_webpage_flow_writes_timeout_and_persistent() {
    // Flent's HttpGetterRunner gives the getter the test length as its timeout: here the flow's
    // length, from its start (3 s) to its stop (12 s), or to the end of the run (20 s).
    let v = scenario(
        json!({"kind": "webpage", "start": "3s", "stop": "12s"}),
        "10Mbps",
        "pfifo",
        vec![
            json!({"kind": "webpage", "start": "3s"}),
            json!({"kind": "webpage", "persistent": false, "timeout": "2s"}),
        ],
    );
    let sc = scenario::parse(&v.to_string()).expect("valid");
    let r = build::resolve(&sc, 1).expect("resolves");
    let f = &r.flows;
    let key = |i: usize, k: &str| f[i].keys[k].clone();
    assert_eq!(key(0, "timeout"), json!(fmt_time(9 * SEC)));
    assert_eq!(key(1, "timeout"), json!(fmt_time(17 * SEC)));
    assert_eq!(key(2, "timeout"), json!(fmt_time(2 * SEC)));
    assert_eq!(
        (0..3).map(|i| key(i, "persistent")).collect::<Vec<_>>(),
        [json!(true), json!(true), json!(false)]
    );
    let json = serde_json::to_value(&r).expect("serialises");
    assert_eq!(json["flows"][0]["timeout"], json!("9s"));
    assert_eq!(json["flows"][0]["persistent"], json!(true));
}
