//! BBR v1 through the real engine (issue's done-when: alone in a deep FIFO it holds less than
//! half of CUBIC's median queue at over 90 % utilisation).

use aqmlab_core::scenario::{self, build};
use serde_json::json;

/// (utilisation of the down link, median sojourn in ms) after `from_s` of one `cc` flow
/// through a 1000-packet pfifo at 50 Mbit/s, 40 ms RTT.
fn alone_in_a_deep_fifo(cc: &str, secs: u64, from_s: u64) -> (f64, f64) {
    let sc = json!({
        "name": "deep_fifo", "duration": format!("{secs}s"),
        "topology": {"rtt": "40ms", "down": {"rate": "50Mbps", "qdisc": "pfifo", "limit": "1000p"},
                     "up": {"rate": "50Mbps"}},
        "flows": [{"kind": "tcp", "cc": cc, "profile": "linux"}]
    });
    let r = build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap();
    r.conservation.as_ref().expect("packet conservation");
    let (util, soj) = crate::down_link_after(&r, from_s, secs, 50e6);
    let p50 = soj[soj.len() / 2] as f64 / 1e6;
    (util, p50)
}

#[test]
fn bbr_alone_in_a_deep_fifo_keeps_under_half_of_cubics_queue_at_full_rate() {
    // BBR aims at an inflight of about 1 BDP in PROBE_BW (pacing gain 1, cwnd gain 2 as a cap),
    // so its standing queue is bounded by about one BDP (40 ms here) where CUBIC fills the
    // 1000-packet buffer (240 ms at 50 Mbit/s) until it loses
    let (util, q50) = alone_in_a_deep_fifo("bbr", 12, 4);
    let (cubic_util, cubic_q50) = alone_in_a_deep_fifo("cubic", 12, 4);
    eprintln!("bbr {util} {q50} ms, cubic {cubic_util} {cubic_q50} ms");
    assert!(util > 0.9, "bbr utilisation {util}");
    assert!(
        q50 < cubic_q50 / 2.0,
        "bbr median {q50} ms vs cubic {cubic_q50} ms"
    );
}
