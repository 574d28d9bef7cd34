//! L4S through the real engine: ECN codepoints end to end and DualPI2's classification.

use aqmlab_core::queue::SUBQUEUES;
use aqmlab_core::scenario::{self, build};
use serde_json::json;

#[test]
fn dualpi2_puts_each_ecn_mode_in_its_queue_and_reports_them() {
    // an "l4s" flow's data is ECT(1) (RFC 9331) and goes to the L queue, a "classic" flow's
    // ECT(0) and an "off" flow's Not-ECT to the C queue (RFC 9332 section 2.3); on the up hop,
    // a FIFO, no packet has a sub-queue
    let sc = json!({
        "name": "l4s", "duration": "3s",
        "topology": {"rtt": "20ms", "down": {"rate": "20Mbps", "qdisc": "dualpi2"}, "up": {"rate": "20Mbps"}},
        "flows": [{"kind": "tcp", "ecn": "l4s"}, {"kind": "tcp", "ecn": true}, {"kind": "tcp"}]
    });
    let sc = scenario::parse(&sc.to_string()).expect("valid scenario");
    let r = build::run(&sc, 1).expect("run");
    r.conservation.as_ref().expect("packet conservation");
    let down = r.links.iter().position(|l| l.hop == "down").unwrap();
    assert_eq!(r.links[down].subqueues, ["l", "c"]);
    assert!(r
        .links
        .iter()
        .filter(|l| l.hop != "down")
        .all(|l| l.subqueues.is_empty()));
    let p = &r.packets;
    let subq = p.subq.as_ref().expect("the subqueue column is kept");
    let mut seen = [[0u32; 3]; 3];
    for i in 0..p.flow.len() {
        let name = SUBQUEUES[subq[i] as usize];
        if p.hop[i] as usize != down {
            assert_eq!(name, "-");
            continue;
        }
        // the handshake's SYN is Not-ECT in every mode: count data-sized packets only
        if p.size[i] == 1500 {
            seen[p.flow[i] as usize][subq[i] as usize] += 1;
        }
    }
    assert!(seen[0][1] > 100 && seen[0][2] == 0, "l4s flow: {:?}", seen[0]);
    assert!(seen[1][2] > 100 && seen[1][1] == 0, "classic flow: {:?}", seen[1]);
    assert!(seen[2][2] > 100 && seen[2][1] == 0, "non-ECN flow: {:?}", seen[2]);
    // the resolved scenario writes the modes back: "l4s", and true / false as before
    let modes: Vec<_> = r.resolved.flows.iter().map(|f| f.keys["ecn"].clone()).collect();
    assert_eq!(modes, [json!("l4s"), json!(true), json!(false)]);
}

#[test]
fn no_subqueue_column_without_a_discipline_that_has_them() {
    let sc = json!({
        "name": "plain", "duration": "1s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "qdisc": "fq_codel"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp", "ecn": "l4s"}]
    });
    let r = build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap();
    assert!(r.packets.subq.is_none());
    assert!(!r.packets.flow.is_empty());
}

/// (utilisation of the down link, p99 sojourn in ms) after `from_s`, of `cc` flows through
/// fq_codel with a 1 ms CE threshold at 100 Mbit/s.
fn through_ce_threshold(cc: &str, secs: u64, from_s: u64) -> (f64, f64) {
    let sc = json!({
        "name": "dctcp", "duration": format!("{secs}s"),
        "topology": {"rtt": "10ms", "down": {"rate": "100Mbps", "qdisc": {"kind": "fq_codel", "ce_threshold": "1ms"}},
                     "up": {"rate": "100Mbps"}},
        "flows": [{"kind": "tcp", "cc": cc, "ecn": true, "count": 2}]
    });
    let r = build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap();
    let (util, soj) = crate::down_link_after(&r, from_s, secs, 100e6);
    let p99 = soj[soj.len() * 99 / 100] as f64 / 1e6;
    (util, p99)
}

#[test]
fn dctcp_through_a_1ms_ce_threshold_keeps_the_queue_short_and_the_link_full() {
    // RFC 8257 section 1 / the DCTCP paper: with a step threshold K well above the queue one
    // window reduction of alpha / 2 removes, the queue oscillates just above K at full link rate
    let (util, p99) = through_ce_threshold("dctcp", 12, 4);
    assert!(util > 0.9, "utilisation {util}");
    assert!(p99 < 3.0, "p99 sojourn {p99} ms");
    // the same marks with Reno's halving (RFC 3168): the link is not kept full
    let (reno_util, _) = through_ce_threshold("newreno", 12, 4);
    assert!(reno_util < util, "newreno {reno_util} vs dctcp {util}");
}
