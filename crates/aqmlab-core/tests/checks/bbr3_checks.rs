//! BBR v3 through the real engine: alone in a deep FIFO it keeps a standing queue well under
//! CUBIC's at full rate, and in a shallow one its loss response (inflight_hi cut to the
//! flight that lost over 2 %) loses less than BBR v1, which keeps probing into the loss.

use aqmlab_core::record::OUTCOME_DROP_BASE;
use aqmlab_core::scenario::{self, build};
use serde_json::json;

/// (utilisation, median sojourn in ms, drop fraction) of the down link after `from_s` of one
/// `cc` flow through a `limit`-packet pfifo at 50 Mbit/s, 40 ms RTT.
fn alone_in_a_fifo(cc: &str, limit: u32, secs: u64, from_s: u64) -> (f64, f64, f64) {
    let sc = json!({
        "name": "fifo", "duration": format!("{secs}s"),
        "topology": {"rtt": "40ms", "down": {"rate": "50Mbps", "qdisc": "pfifo", "limit": format!("{limit}p")},
                     "up": {"rate": "50Mbps"}},
        "flows": [{"kind": "tcp", "cc": cc, "profile": "linux"}]
    });
    let r = build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap();
    r.conservation.as_ref().expect("packet conservation");
    let (util, soj) = crate::down_link_after(&r, from_s, secs, 50e6);
    let p = &r.packets;
    let down = r.links.iter().position(|l| l.hop == "down").unwrap() as u8;
    let from = from_s * 1_000_000_000;
    let rows: Vec<usize> = (0..p.flow.len())
        .filter(|&i| p.hop[i] == down && p.t_enqueue[i] >= from)
        .collect();
    let drops = rows
        .iter()
        .filter(|&&i| p.outcome[i] >= OUTCOME_DROP_BASE)
        .count();
    (
        util,
        soj[soj.len() / 2] as f64 / 1e6,
        drops as f64 / rows.len() as f64,
    )
}

#[test]
fn bbr3_alone_in_a_deep_fifo_keeps_well_under_cubics_queue_at_full_rate() {
    let (util, q50, _) = alone_in_a_fifo("bbr3", 1000, 12, 4);
    let (cubic_util, cubic_q50, _) = alone_in_a_fifo("cubic", 1000, 12, 4);
    eprintln!("bbr3 {util} {q50} ms, cubic {cubic_util} {cubic_q50} ms");
    assert!(util > 0.9, "bbr3 utilisation {util}");
    assert!(
        q50 < cubic_q50 / 2.0,
        "bbr3 median {q50} ms vs cubic {cubic_q50} ms"
    );
}

#[test]
fn bbr3_loses_less_than_bbr_v1_where_v1s_probes_overflow_the_buffer() {
    // 20 packets are 0.12 BDP: v1's 5/4 phase puts a quarter BDP (42 packets) more in flight
    // every 8 rounds whatever it lost before; v3 cuts inflight_hi to the flight that lost
    // over 2 % and probes beyond it only every 2-3 s (or 63 rounds). In steady state (after
    // STARTUP) v3's loss rate must be well below v1's.
    let (util3, q3, loss3) = alone_in_a_fifo("bbr3", 20, 20, 4);
    let (util1, q1, loss1) = alone_in_a_fifo("bbr", 20, 20, 4);
    eprintln!("bbr3 {util3} {q3} ms loss {loss3}; bbr {util1} {q1} ms loss {loss1}");
    assert!(loss3 < loss1 / 2.0, "bbr3 loss {loss3} vs bbr {loss1}");
    assert!(util3 > 0.9, "bbr3 utilisation {util3}");
}
