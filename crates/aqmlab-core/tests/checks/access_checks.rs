//! Checks of access links as they are against independent facts: a trace hop carries what its
//! lines offer (Mahimahi's byte accounting: 1504 bytes per opportunity, 4 bytes per packet
//! beyond its IP size), netem's slots deliver their budget per slot and then wait their
//! delay, and the one-line errors for traces and slots that cannot be run.

use crate::{link_diag as diag, run};
use aqmlab_core::scenario::{self, build};
use aqmlab_core::units::{tx_time, MS, SEC};
use serde_json::{json, Value};

/// A 100 ms trace whose millisecond m (1 to 100) has 1 + (7 m mod 5) opportunities: each of 1
/// to 5 twenty times, 300 lines, 3 opportunities per ms on average (36 Mb/s of 1500-byte
/// packets).
fn lines() -> Vec<u64> {
    (1..=100u64)
        .flat_map(|m| std::iter::repeat_n(m, 1 + (7 * m % 5) as usize))
        .collect()
}

/// Saturating UDP of `size`-byte packets down a trace hop for `secs`.
fn udp_over_trace(size: u32, secs: u64) -> build::RunResult {
    run(json!({
        "name": "trace", "duration": format!("{secs}s"),
        "topology": {"rtt": "20ms",
            "down": {"trace": {"ms": lines()}, "qdisc": "pfifo", "limit": "2000p"},
            "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "60Mbps", "packet_size": format!("{size}B")}]
    }))
}

#[test]
fn a_saturated_trace_carries_its_lines_in_full_size_packets() {
    let r = udp_over_trace(1500, 2);
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    // 300 opportunities per 100 ms: 6000 in 2 s, 1500 bytes each
    assert_eq!(down.rate_bps, 36_000_000);
    assert_eq!(down.capacity_bytes, 6000 * 1500);
    let carried = down.stats.tx_bytes as f64 / down.capacity_bytes as f64;
    assert!((carried - 1.0).abs() < 0.01, "carried {carried} of the capacity");
    // one full-size packet per used opportunity, exactly
    assert_eq!(down.stats.tx_packets as f64, diag(&r, "down", "trace_used"));
    // the queue never emptied after the first packet arrived (5 ms + the NIC's 12 us): only
    // the opportunities before it were lost, those of ms 1 to 5: 3 + 5 + 2 + 4 + 1
    assert_eq!(diag(&r, "down", "trace_lost"), 15.0);
}

#[test]
fn small_packets_share_opportunities_by_bytes() {
    // 372 + 4 = 376 bytes: exactly four per opportunity
    let r = udp_over_trace(372, 1);
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    assert_eq!(down.stats.tx_packets as f64, 4.0 * diag(&r, "down", "trace_used"));
    // 750 + 4 = 754 bytes: after n full opportunities, floor(1504 n / 754) packets
    let r = udp_over_trace(750, 1);
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    let n = diag(&r, "down", "trace_used") as u64;
    assert_eq!(down.stats.tx_packets, 1504 * n / 754);
}

#[test]
fn an_idle_trace_loses_its_opportunities_and_a_probe_waits_for_the_next() {
    // one ping of 1500 B every second over a trace with opportunities at 40 and 50 ms of each
    // 50 ms period: sent at 1 s, it reaches the hop at 1 s + 12 us (NIC) + 5 ms, and leaves
    // at the next opportunity, 1040 ms, then crosses 5 ms of access path.
    let r = run(json!({
        "name": "idle", "duration": "1.5s",
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps"}, "up": {"trace": {"ms": [40, 50]}}},
        "flows": [{"kind": "ping", "interval": "1s", "packet_size": "1500B", "start": "1s"}]
    }));
    let (_, up, _) = r.probes[0].reply.expect("reply");
    assert_eq!(up, 1040 * MS + 5 * MS - SEC);
    // 20 periods of 2 passed before it: 40 lost, one used; after it none was needed until the
    // run's end but those passed are not counted until the hop has something to send
    assert_eq!(diag(&r, "up", "trace_lost"), 40.0);
    assert_eq!(diag(&r, "up", "trace_used"), 1.0);
}

#[test]
fn tcp_fills_a_trace() {
    // one CUBIC flow with a buffer of 1000 packets keeps the trace busy: after the first
    // seconds it carries the trace's capacity within 1 %
    let r = run(json!({
        "name": "tcp_trace", "duration": "10s", "record": {"level": "series"},
        "topology": {"rtt": "40ms",
            "down": {"trace": {"ms": lines()}, "qdisc": "pfifo", "limit": "1000p"},
            "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp"}]
    }));
    let q = &r.queue;
    let at = |t: u64| {
        (0..q.t.len())
            .find(|&i| q.t[i] == t * SEC && q.dir[i] == 1)
            .map(|i| q.tx_bytes[i])
            .expect("a sample")
    };
    let carried = (at(10) - at(2)) as f64;
    let capacity = 8.0 * 36e6 / 8.0;
    assert!(
        (carried / capacity - 1.0).abs() < 0.01,
        "carried {carried} of {capacity}"
    );
}

#[test]
fn trace_runs_are_deterministic() {
    let a = udp_over_trace(600, 1);
    let b = udp_over_trace(600, 1);
    assert_eq!(a.packets.t_out, b.packets.t_out);
    assert_eq!(a.links[1].stats.tx_bytes, b.links[1].stats.tx_bytes);
}

/// Saturating UDP down a 100 Mb/s hop with netem's `slot`.
fn udp_over_slot(slot: Value, secs: u64) -> build::RunResult {
    run(json!({
        "name": "slot", "duration": format!("{secs}s"),
        "topology": {"rtt": "20ms",
            "down": {"rate": "100Mbps", "slot": slot, "qdisc": "pfifo", "limit": "1000p"},
            "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "20Mbps", "packet_size": "1500B"}]
    }))
}

#[test]
fn a_slot_delivers_its_budget_then_waits_its_delay() {
    // 5 packets per slot: the budget is spent when the fifth leaves the qdisc, four
    // serialisations (120 us each) after the first; the next slot starts 10 ms later. A cycle
    // is 10.48 ms for 5 packets.
    let r = udp_over_slot(json!({"min": "10ms", "packets": 5}), 5);
    let ser = tx_time(1500, 100_000_000);
    let p = &r.packets;
    let down = r.links.iter().position(|l| l.hop == "down").expect("down") as u8;
    let mut outs: Vec<u64> = (0..p.flow.len())
        .filter(|&i| p.hop[i] == down && p.outcome[i] <= 1)
        .map(|i| p.t_out[i])
        .collect();
    outs.sort_unstable();
    // from the second second on (the queue is standing), dequeues come in fives, 120 us
    // apart, each burst 10 ms after the last one's fifth
    let steady: Vec<u64> = outs.iter().copied().filter(|&t| t >= SEC).collect();
    let mut gaps: Vec<u64> = steady.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    gaps.dedup();
    assert_eq!(gaps, vec![ser, 10 * MS]);
    let cycle = 10 * MS + 4 * ser;
    let expected = 5.0 * 1500.0 * 8.0 / (cycle as f64 / 1e9);
    let l = &r.links[down as usize];
    let rate = l.stats.tx_bytes as f64 * 8.0 / 5.0;
    assert!(
        (rate / expected - 1.0).abs() < 0.01,
        "{rate} b/s, expected {expected}"
    );
}

#[test]
fn a_byte_budget_lets_the_crossing_packet_go() {
    // bytes 4000: 1500 + 1500 leave 1000 > 0, so a third goes: 3 packets per slot
    let r = udp_over_slot(json!({"min": "10ms", "bytes": "4000B"}), 3);
    let ser = tx_time(1500, 100_000_000);
    let l = r.links.iter().find(|l| l.hop == "down").expect("down");
    let expected = 3.0 * 1500.0 * 8.0 / ((10 * MS + 2 * ser) as f64 / 1e9);
    let rate = l.stats.tx_bytes as f64 * 8.0 / 3.0;
    assert!(
        (rate / expected - 1.0).abs() < 0.02,
        "{rate} b/s, expected {expected}"
    );
}

#[test]
fn random_slots_average_their_range() {
    // slots drawn in [2 ms, 18 ms): a mean wait of 10 ms, so 10.48 ms per 5 packets on average
    let r = udp_over_slot(json!({"min": "2ms", "max": "18ms", "packets": 5}), 20);
    let ser = tx_time(1500, 100_000_000);
    let l = r.links.iter().find(|l| l.hop == "down").expect("down");
    let expected = 5.0 * 1500.0 * 8.0 / ((10 * MS + 4 * ser) as f64 / 1e9);
    let rate = l.stats.tx_bytes as f64 * 8.0 / 20.0;
    // about 1900 slots with a standard deviation of 4.6 ms each: the mean within 1.5 %
    assert!(
        (rate / expected - 1.0).abs() < 0.015,
        "{rate} b/s, expected {expected}"
    );
    let a = udp_over_slot(json!({"min": "2ms", "max": "18ms", "packets": 5}), 2);
    let b = udp_over_slot(json!({"min": "2ms", "max": "18ms", "packets": 5}), 2);
    assert_eq!(a.packets.t_out, b.packets.t_out);
}

fn parse_err(down: Value) -> String {
    let v = json!({"name": "bad", "duration": "1s",
        "topology": {"rtt": "20ms", "down": down, "up": {"rate": "10Mbps"}}});
    scenario::parse(&v.to_string()).expect_err("refused")
}

#[test]
fn bad_traces_and_slots_are_refused_naming_the_key() {
    let e = parse_err(json!({"trace": {"file": "cell.down", "ms": [1, 5, 3]}}));
    assert_eq!(
        e,
        "topology.down.trace: cell.down: line 3: 3 ms is before the line above it (5 ms); allowed: non-decreasing times"
    );
    let e = parse_err(json!({"trace": {"ms": []}}));
    assert!(
        e.starts_with("topology.down.trace: the trace has no lines"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "10Mbps", "trace": {"ms": [1]}}));
    assert!(e.starts_with("topology.down.trace: not allowed with rate"), "{e}");
    let e = parse_err(json!({"trace": {"ms": [1]}, "slot": {"min": "1ms"}}));
    assert!(
        e.starts_with("topology.down.slot: not allowed with a trace"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "10Mbps", "slot": {"min": "5ms", "max": "2ms"}}));
    assert!(
        e.starts_with("topology.down.slot.min: 5ms is above max (2ms)"),
        "{e}"
    );
    let e = parse_err(json!({"rate": "10Mbps", "slot": {"min": "1ms", "packets": 0}}));
    assert!(
        e.starts_with("topology.down.slot.packets: 0 is out of range"),
        "{e}"
    );
}

/// UDP at 5 Mb/s down a 10 Mb/s hop whose rate schedule is `rate`, for `secs`.
fn udp_over_schedule(rate: Value, limit: &str, secs: u64) -> build::RunResult {
    run(json!({
        "name": "outage", "duration": format!("{secs}s"), "record": {"level": "series"},
        "topology": {"rtt": "20ms",
            "down": {"rate": rate, "qdisc": "pfifo", "limit": limit},
            "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "5Mbps", "packet_size": "1500B"}]
    }))
}

/// The down hop's (backlog packets, bytes sent) at each sample.
fn down_samples(r: &build::RunResult) -> Vec<(u64, u64, u64)> {
    let q = &r.queue;
    (0..q.t.len())
        .filter(|&i| q.dir[i] == 1)
        .map(|i| (q.t[i], q.backlog_pkts[i], q.tx_bytes[i]))
        .collect()
}

#[test]
fn an_outage_holds_packets_and_loses_none_within_the_buffer() {
    // out from 2 s to 3 s: 1 s of 5 Mb/s, 417 packets, wait in a 1000-packet FIFO; none is
    // lost, nothing is carried meanwhile, and the hop drains them afterwards at 10 Mb/s
    let r = udp_over_schedule(
        json!([["0s", "10Mbps"], ["2s", "0bps"], ["3s", "10Mbps"]]),
        "1000p",
        5,
    );
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    assert_eq!(down.stats.total_drops(), 0);
    let s = down_samples(&r);
    let at = |t: u64| *s.iter().find(|x| x.0 == t).expect("a sample");
    assert_eq!(
        at(3 * SEC).2,
        at(2 * SEC + 100 * MS).2,
        "nothing carried during the outage"
    );
    // 5e6 / 12000 packets arrived in the second; the one being sent when the outage began
    // waits in the serialiser, not the queue
    let held = at(3 * SEC).1 as f64;
    assert!((held - 5e6 / 12000.0).abs() <= 2.0, "{held} packets held");
    // drained at 5 Mb/s net: empty again by 4.1 s
    assert!(at(4100 * MS).1 <= 1);
    // every packet sent by 4.9 s was delivered (5 ms of access path after the hop)
    let flow = &r.flows[0].report;
    assert!(flow.bytes_sent - flow.bytes_delivered <= 10 * 1500);
}

#[test]
fn a_schedule_ending_in_an_outage_holds_to_the_end() {
    let r = udp_over_schedule(json!([["0s", "10Mbps"], ["1s", "0bps"]]), "100p", 2);
    let down = r.links.iter().find(|l| l.hop == "down").expect("down");
    // everything arriving after the 100 held (and the one in the serialiser) is dropped
    let arrivals_after = down.stats.arrivals - down.stats.tx_packets;
    assert_eq!(down.stats.total_drops(), arrivals_after - 101);
    assert_eq!(down.capacity_bytes, 10_000_000 / 8);
}

#[test]
fn tcp_recovers_after_an_outage() {
    let r = run(json!({
        "name": "tcp_outage", "duration": "15s", "record": {"level": "series"},
        "topology": {"rtt": "40ms",
            "down": {"rate": [["0s", "10Mbps"], ["5s", "0bps"], ["6s", "10Mbps"]], "qdisc": "pfifo", "limit": "100p"},
            "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "tcp"}]
    }));
    let s = down_samples(&r);
    let at = |t: u64| s.iter().find(|x| x.0 == t).expect("a sample").2;
    let carried = (at(15 * SEC) - at(9 * SEC)) as f64;
    assert!(
        carried / (6.0 * 10e6 / 8.0) > 0.9,
        "{carried} bytes in 6 s after the outage"
    );
}

/// Pings every ms up a hop whose delay follows `delay`; (sent, arrival at the echo server) per
/// probe, in order of sending.
fn ping_over_delay(delay: Value, reorder: bool) -> Vec<(u64, u64)> {
    let r = run(json!({
        "name": "steps", "duration": "3s",
        "topology": {"rtt": "4ms", "down": {"rate": "100Mbps"},
            "up": {"rate": "100Mbps", "delay": delay, "delay_reorder": reorder}},
        "flows": [{"kind": "ping", "interval": "1ms"}]
    }));
    r.probes
        .iter()
        .filter_map(|p| p.reply.map(|(_, up, _)| (p.sent, p.sent + up)))
        .collect()
}

#[test]
fn delay_steps_keep_the_order_of_packets_in_flight() {
    let steps = json!([["0s", "50ms"], ["1s", "10ms"], ["2s", "40ms"]]);
    let p = ping_over_delay(steps.clone(), false);
    assert!(
        p.windows(2).all(|w| w[1].1 >= w[0].1),
        "no probe overtakes the one before it"
    );
    // the last probe before the step down arrives 50 ms later; those sent in the next 38 ms
    // would arrive before it at 10 ms and wait for it instead
    let last = p.iter().rfind(|x| x.0 < SEC).expect("a probe").1;
    for &(sent, arrival) in p.iter().filter(|x| x.0 > SEC + MS && x.0 < SEC + 38 * MS) {
        assert_eq!(arrival, last, "probe sent at {sent}");
    }
    // once those have gone, 10 ms; after the step up, 40 ms (plus the access paths, 1 ms each)
    let one_way = |from: u64| {
        let &(s, a) = p.iter().find(|x| x.0 >= from).expect("a probe");
        a - s
    };
    let base = one_way(500 * MS) - 50 * MS;
    assert_eq!(one_way(1500 * MS), base + 10 * MS);
    assert_eq!(one_way(2500 * MS), base + 40 * MS);
    // asked to, a shorter path lets later probes overtake
    let p = ping_over_delay(steps, true);
    assert!(p.windows(2).any(|w| w[1].1 < w[0].1));
    assert_eq!(
        p.iter().find(|x| x.0 > SEC).map(|x| x.1 - x.0),
        Some(base + 10 * MS)
    );
}

#[test]
fn the_bottleneck_is_the_slowest_effective_rate() {
    // a home router shaping with CAKE at 20 Mb/s on its 100 Mb/s port, before a 25 Mb/s modem:
    // CAKE's queue is the bottleneck, and its rate and capacity are CAKE's bandwidth
    let r = run(json!({
        "name": "shaped", "duration": "10s",
        "topology": {"rtt": "40ms", "hops": [
            {"name": "router", "direction": "down", "rate": "100Mbps",
             "qdisc": {"kind": "cake", "bandwidth": "20Mbps"}},
            {"name": "modem", "direction": "down", "rate": "25Mbps"},
            {"name": "back", "direction": "up", "rate": "10Mbps"}]},
        "flows": [{"kind": "tcp", "count": 2}]
    }));
    let router = r.links.iter().find(|l| l.hop == "router").expect("router");
    let modem = r.links.iter().find(|l| l.hop == "modem").expect("modem");
    assert!(router.bottleneck && !modem.bottleneck);
    assert_eq!(router.rate_bps, 20_000_000);
    assert_eq!(router.capacity_bytes, 10 * 20_000_000 / 8);
    assert_eq!(router.schedule, vec![(0, 20_000_000)]);
    // the flows fill CAKE's rate (less its start), not the port's
    let used = router.stats.tx_bytes as f64 / router.capacity_bytes as f64;
    assert!(used > 0.85 && used <= 1.0, "{used}");
    // a trace's mean rate counts likewise: a 12 Mb/s trace after a 20 Mb/s hop is the bottleneck
    let r = run(json!({
        "name": "traced", "duration": "1s",
        "topology": {"rtt": "40ms", "hops": [
            {"name": "isp", "direction": "down", "rate": "20Mbps"},
            {"name": "cell", "direction": "down", "trace": {"ms": [1, 2, 3]}},
            {"name": "back", "direction": "up", "rate": "10Mbps"}]},
        "flows": [{"kind": "udp", "rate": "5Mbps"}]
    }));
    let cell = r.links.iter().find(|l| l.hop == "cell").expect("cell");
    assert!(cell.bottleneck);
    assert_eq!(cell.rate_bps, 12_000_000);
}

#[test]
fn a_slot_serves_only_packets_ready_when_it_started() {
    // 1500-byte pings every 10 ms up a 1 Mb/s hop (12 ms a packet) with slots 4 ms apart, no
    // budget. Relative to the first ping's arrival at the hop: it finds the slot of time 0
    // stale and waits for one at 4 ms, leaving at 16. The second (ready at 10, after that slot
    // began) finds it stale when the first is done: a slot at 20, out at 32. The third (ready at
    // 20, the slot's start) uses it: out at 44. The fourth (ready at 30) waits for a slot at 48:
    // out at 60. Time at the hop: 16, 22, 24, 30 ms.
    let r = run(json!({
        "name": "slot_head", "duration": "100ms",
        "topology": {"rtt": "4ms", "down": {"rate": "100Mbps"},
            "up": {"rate": "1Mbps", "slot": {"min": "4ms"}}},
        "flows": [{"kind": "ping", "interval": "10ms", "packet_size": "1500B"}]
    }));
    let up: Vec<u64> = r
        .probes
        .iter()
        .take(4)
        .map(|p| p.reply.expect("reply").1)
        .collect();
    let at_hop: Vec<u64> = up.iter().map(|u| u - up[0] + 16 * MS).collect();
    assert_eq!(at_hop, vec![16 * MS, 22 * MS, 24 * MS, 30 * MS]);
    // the path besides the hop: the NIC's 12 us and 1 ms of access path on each side
    assert_eq!(up[0], tx_time(1500, 1_000_000_000) + 2 * MS + 16 * MS);
}
