//! The controller-state columns of `flow_series` against what the algorithms' specifications
//! say they must hold: DCTCP's alpha (RFC 8257 3.3), BBR's modes, gains and estimates
//! (tcp_bbr.c, draft-ietf-ccwg-bbr), CUBIC's W_max (RFC 9438 4.6-4.7).

use aqmlab_core::record::rows::CcPhase;
use aqmlab_core::scenario::build::{self, RunResult};
use aqmlab_core::scenario::{self};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// One run of a single `flow` through the `down` hop, 40 ms RTT, its `flow_series` sampled every
/// millisecond.
fn run(secs: u64, down: Value, flow: Value) -> RunResult {
    let sc = json!({
        "name": "cc_state", "duration": format!("{secs}s"),
        "topology": {"rtt": "40ms", "down": down, "up": {"rate": "50Mbps"}},
        "flows": [flow],
        "record": {"interval": "1ms"}
    });
    let r = build::run(&scenario::parse(&sc.to_string()).unwrap(), 1).unwrap();
    r.conservation.as_ref().expect("packet conservation");
    r
}

fn deep_fifo() -> Value {
    json!({"rate": "50Mbps", "qdisc": "pfifo", "limit": "1000p"})
}

/// The state names of the samples, consecutive repeats folded.
fn state_sequence(r: &RunResult) -> Vec<&'static str> {
    let mut seq: Vec<&'static str> = Vec::new();
    for s in r.flow_series.cc_state.iter() {
        let name = CcPhase::NAMES[s.expect("BBR reports its state") as usize];
        if seq.last() != Some(&name) {
            seq.push(name);
        }
    }
    seq
}

#[test]
fn dctcp_alpha_decays_to_zero_without_marks() {
    // RFC 8257 3.3: alpha <- (1 - g) alpha + g F once per window, g = 1/16; Linux starts it at
    // 1 (dctcp_alpha_on_init). With no CE mark F = 0: alpha never rises, and after n windows it
    // is (15/16)^n, within Linux's rounding (alpha - alpha >> 4 in 1/1024: at most 15/1024 above)
    // until it falls below 16/1024, which the next window takes to 0. Drops are no marks: the
    // FIFO overflows, alpha ignores it.
    let r = run(
        8,
        json!({"rate": "50Mbps", "qdisc": "pfifo", "limit": "100p"}),
        json!({"kind": "tcp", "cc": "dctcp", "ecn": true}),
    );
    let s = &r.flow_series;
    let alpha: Vec<f64> = s
        .cc_alpha
        .iter()
        .map(|a| a.expect("DCTCP reports alpha"))
        .collect();
    assert_eq!(alpha[0], 1.0);
    assert!(alpha.windows(2).all(|w| w[1] <= w[0]), "alpha rose without marks");
    // A window lasts at most the 40 ms path plus the full FIFO (100 packets, 24 ms): 1 s holds
    // at least 15 windows, 6 s at least 93, more than the 65 that take alpha to 0.
    let at = |secs: u64| s.t.iter().position(|&t| t >= secs * SEC).unwrap();
    let bound = (15.0f64 / 16.0).powi(15) + 15.0 / 1024.0;
    assert!(alpha[at(1)] <= bound, "{} > {bound}", alpha[at(1)]);
    assert!(alpha[at(6)..].iter().all(|&a| a == 0.0), "{}", alpha[at(6)]);
}

#[test]
fn dctcp_and_prague_alpha_track_the_fraction_of_marked_packets() {
    // alpha is an unbiased moving average of F, the fraction of CE-marked data per window
    // (DCTCP, RFC 8257 3.3) or of CE-marked packets per round (Prague, tcp_prague.c): over a
    // steady stretch its mean is the fraction of the flow's packets the queue marked, counted
    // here at the queue itself (the packets table), not from the sender.
    for (cc, ecn) in [("dctcp", json!(true)), ("prague", json!("accecn"))] {
        let down = json!({"rate": "50Mbps", "qdisc": {"kind": "fq_codel", "ce_threshold": "1ms"}});
        let r = run(20, down, json!({"kind": "tcp", "cc": cc, "ecn": ecn}));
        let from = 5 * SEC;
        let down = r.links.iter().position(|l| l.hop == "down").unwrap() as u8;
        let p = &r.packets;
        let (mut sent, mut marked) = (0u64, 0u64);
        for i in (0..p.flow.len()).filter(|&i| p.hop[i] == down && p.t_enqueue[i] >= from) {
            sent += u64::from(p.outcome[i] <= 1);
            marked += u64::from(p.outcome[i] == 1);
        }
        let fraction = marked as f64 / sent as f64;
        let s = &r.flow_series;
        let alphas: Vec<f64> = (0..s.t.len())
            .filter(|&i| s.t[i] >= from)
            .map(|i| s.cc_alpha.get(i).unwrap())
            .collect();
        let mean = alphas.iter().sum::<f64>() / alphas.len() as f64;
        eprintln!("{cc}: marked fraction {fraction:.4}, mean alpha {mean:.4}");
        assert!(fraction > 0.01, "{cc}: the threshold marks: {fraction}");
        assert!(
            (mean - fraction).abs() < 0.25 * fraction,
            "{cc}: mean alpha {mean} vs marked {fraction}"
        );
    }
}

#[test]
fn bbr_reports_startup_drain_probe_bw_its_gains_and_the_bottleneck_rate() {
    let r = run(8, deep_fifo(), json!({"kind": "tcp", "cc": "bbr"}));
    let s = &r.flow_series;
    // tcp_bbr.c: STARTUP, then DRAIN once the pipe is full, then PROBE_BW (no PROBE_RTT before
    // the 10 s min-RTT window expires).
    assert_eq!(state_sequence(&r), ["startup", "drain", "probe_bw"]);
    let state = |i: usize| CcPhase::NAMES[s.cc_state.get(i).unwrap() as usize];
    let gain = |i: usize| s.cc_pacing_gain.get(i).unwrap();
    let ln2 = std::f64::consts::LN_2;
    for i in 0..s.t.len() {
        match state(i) {
            // bbr_high_gain 2/ln 2, bbr_drain_gain its inverse (in 1/256: 739 and 88)
            "startup" => assert!((gain(i) - 2.0 / ln2).abs() < 0.002, "{}", gain(i)),
            "drain" => assert!((gain(i) - ln2 / 2.0).abs() < 0.005, "{}", gain(i)),
            // bbr_pacing_gain: the cycle 5/4, 3/4, then six phases of 1
            _ => assert!([1.25, 0.75, 1.0].contains(&gain(i)), "{}", gain(i)),
        }
    }
    // The bandwidth estimate is the bottleneck's payload rate: 50 Mbit/s of 1500-byte packets
    // carrying 1448 bytes each; the minimum RTT is the path's 40 ms plus a packet's and an
    // ACK's serialisation.
    let payload_bps = 50e6 * 1448.0 / 1500.0;
    let last = s.t.len() - 1;
    let bw = s.cc_bw_bps.get(last).unwrap() as f64;
    assert!((bw / payload_bps - 1.0).abs() < 0.03, "bw {bw} vs {payload_bps}");
    let min_rtt = s.cc_min_rtt.get(last).unwrap();
    assert!((40 * MS..41 * MS).contains(&min_rtt), "min_rtt {min_rtt}");
    // ssthresh stays unbounded through STARTUP; entering DRAIN sets it to the estimated BDP
    // (bbr_check_drain: bbr_inflight(max_bw, 1)) plus 3 TSO bursts (bbr_quantization_budget),
    // a burst being at most 2^-10 s at the STARTUP pacing rate
    let drain = (0..s.t.len()).find(|&i| state(i) == "drain").unwrap();
    assert!(s.ssthresh.iter().take(drain).all(|v| v.is_none()));
    let bytes_per_s = s.cc_bw_bps.get(drain).unwrap() as f64 / 8.0;
    let bdp = bytes_per_s * s.cc_min_rtt.get(drain).unwrap() as f64 / 1e9;
    let bursts = 3.0 * (2.0 / ln2 * bytes_per_s / 1024.0 + 1448.0);
    let ssthresh = s.ssthresh.get(drain).unwrap() as f64;
    assert!(
        ssthresh >= 0.95 * bdp && ssthresh <= 1.05 * bdp + bursts,
        "{ssthresh} vs BDP {bdp}"
    );
    assert!(s.cc_alpha.iter().all(|v| v.is_none()));
    assert!(s.cc_w_max.iter().all(|v| v.is_none()));
}

#[test]
fn bbr3_reports_the_phases_of_probe_bw() {
    let r = run(12, deep_fifo(), json!({"kind": "tcp", "cc": "bbr3"}));
    let s = &r.flow_series;
    let seq = state_sequence(&r);
    assert_eq!(seq[..2], ["startup", "drain"]);
    // draft-ietf-ccwg-bbr 4.3.3: PROBE_BW cycles DOWN, CRUISE, REFILL, UP (a probe every 2-3 s;
    // DOWN can end on the ACK that starts it, between two samples). UP always ends in DOWN,
    // REFILL in UP (or DOWN on loss), PROBE_RTT aside.
    assert!(seq[2..].iter().all(|p| p.starts_with("probe_")), "{seq:?}");
    for w in seq[2..].windows(2).filter(|w| w[1] != "probe_rtt") {
        match w[0] {
            "probe_bw_up" => assert_eq!(w[1], "probe_bw_down", "{seq:?}"),
            "probe_bw_refill" => assert!(["probe_bw_up", "probe_bw_down"].contains(&w[1]), "{seq:?}"),
            _ => {}
        }
    }
    assert!(seq.contains(&"probe_bw_up"), "{seq:?}");
    // gains: STARTUP 4 ln 2 (bbr_startup_pacing_gain 2.77), DOWN 0.9, UP 1.25, else 1
    for i in 0..s.t.len() {
        let g = s.cc_pacing_gain.get(i).unwrap();
        let want = match CcPhase::NAMES[s.cc_state.get(i).unwrap() as usize] {
            "startup" => 4.0 * std::f64::consts::LN_2,
            "drain" => std::f64::consts::LN_2 / 2.0,
            "probe_bw_down" => 0.9,
            "probe_bw_up" => 1.25,
            _ => 1.0,
        };
        assert!((g - want).abs() < 0.012, "gain {g}, want {want}");
    }
    // without CE feedback BBR v3 does not use ECN: no alpha
    assert!(s.cc_alpha.iter().all(|v| v.is_none()));
}

/// For each new W_max of a `law` CUBIC flow: (cwnd at the previous sample, ssthresh after the
/// reduction, the new W_max, the W_max before), bytes.
fn cubic_reductions(law: &str) -> Vec<(u64, u64, u64, Option<u64>)> {
    // a 10 Mbit/s bottleneck with a buffer of 1.5 BDP: a reduction every few seconds
    let down = json!({"rate": "10Mbps", "qdisc": "pfifo", "limit": "50p"});
    let r = run(
        30,
        down,
        json!({"kind": "tcp", "cc": "cubic", "cc_params": {"law": law}}),
    );
    let s = &r.flow_series;
    assert!(s
        .cc_alpha
        .iter()
        .chain(s.cc_pacing_gain.iter())
        .all(|v| v.is_none()));
    assert!(s.cc_state.iter().all(|v| v.is_none()));
    // delay_min: the path's 40 ms (plus serialisation; Linux 3.14 counts whole jiffies)
    let min_rtt = s.cc_min_rtt.iter().last().unwrap().expect("a delay sample");
    assert!((39 * MS..42 * MS).contains(&min_rtt), "delay_min {min_rtt}");
    (1..s.t.len())
        .filter(|&i| s.cc_w_max.get(i).is_some() && s.cc_w_max.get(i) != s.cc_w_max.get(i - 1))
        .map(|i| {
            (
                s.cwnd_bytes[i - 1],
                s.ssthresh.get(i).unwrap(),
                s.cc_w_max.get(i).unwrap(),
                s.cc_w_max.get(i - 1),
            )
        })
        .collect()
}

#[test]
fn cubic_w_max_is_the_window_before_each_reduction() {
    // RFC 9438 4.6-4.7 (and tcp_cubic.c bictcp_recalc_ssthresh: last_max_cwnd): on a
    // congestion event W_max = cwnd, or cwnd (1 + beta) / 2 when cwnd is below the previous
    // W_max (fast convergence), and ssthresh = beta cwnd, beta = 0.7 (717/1024 in Linux).
    // The window is read from the sample before the reduction, at most 1 ms earlier.
    for law in ["rfc9438", "linux_4"] {
        let reductions = cubic_reductions(law);
        assert!(reductions.len() >= 3, "{law}: {reductions:?}");
        for &(before, ssthresh, w_max, previous) in &reductions {
            let cwnd = ssthresh as f64 / 0.7;
            let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * b + 2.0 * 1448.0;
            assert!(
                close(cwnd, before as f64),
                "{law}: cwnd {cwnd} vs sampled {before}"
            );
            let converging = previous.is_some_and(|p| cwnd < p as f64);
            let want = if converging { cwnd * 0.85 } else { cwnd };
            assert!(
                close(w_max as f64, want),
                "{law}: W_max {w_max} vs {want} ({reductions:?})"
            );
        }
    }
}

#[test]
fn flows_without_the_quantities_record_nulls() {
    let r = run(
        3,
        deep_fifo(),
        json!({"kind": "tcp", "cc": "newreno", "ecn": false, "bytes": "200KB"}),
    );
    let s = &r.flow_series;
    assert!(s
        .cc_alpha
        .iter()
        .chain(s.cc_pacing_gain.iter())
        .all(|v| v.is_none()));
    assert!(s
        .cc_bw_bps
        .iter()
        .chain(s.cc_min_rtt.iter())
        .chain(s.cc_w_max.iter())
        .all(|v| v.is_none()));
    assert!(s.cc_state.iter().all(|v| v.is_none()));
    // 200 KB end in slow start: no congestion signal, ssthresh unbounded throughout
    assert!(s.ssthresh.iter().all(|v| v.is_none()));
    let udp = run(1, deep_fifo(), json!({"kind": "udp", "rate": "1Mbps"}));
    assert!(udp
        .flow_series
        .ssthresh
        .iter()
        .chain(udp.flow_series.cc_bw_bps.iter())
        .all(|v| v.is_none()));
}
