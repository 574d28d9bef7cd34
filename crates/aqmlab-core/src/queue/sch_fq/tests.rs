//! fq against Linux sch_fq.c (6.6): each expected value is worked by hand from the kernel's
//! `fq_enqueue` / `fq_dequeue` and the defaults of `fq_init`.

use super::*;
use crate::packet::Ecn;
use crate::queue::testutil::Harness;
use serde_json::json;

const MTU: u32 = 1500;

fn link() -> LinkInfo {
    LinkInfo {
        rate_bps: 100_000_000,
        mtu: MTU,
        limit: None,
        wifi: false,
    }
}

fn fq(params: Value) -> SchFq {
    build(&params, &link(), Rng::from_seed(7)).unwrap().0
}

/// Flow keys that land in distinct fq flows (the hash is seeded, so pick them).
fn distinct_flows(q: &SchFq, n: usize) -> Vec<u32> {
    let mut h = Harness::new();
    let mut seen = Vec::new();
    let mut keys = Vec::new();
    for k in 0.. {
        let id = h.packet(k, 100, Ecn::NotEct);
        let ctx = QueueCtx {
            pool: &mut h.pool,
            events: &mut h.events,
        };
        let f = q.classify(&ctx, id);
        if !seen.contains(&f) {
            seen.push(f);
            keys.push(k);
            if keys.len() == n {
                break;
            }
        }
    }
    keys
}

/// Dequeues everything the discipline will send from `t`, following its timer when it holds
/// packets back; returns (time, flow) of each departure. The link is infinitely fast.
fn drain(h: &mut Harness, q: &mut SchFq, mut t: Time) -> Vec<(Time, u32)> {
    let mut out = Vec::new();
    while q.backlog_packets() > 0 {
        match h.dequeue(q, t) {
            Some(id) => out.push((t, h.pool.get(id).flow)),
            None => {
                let due = q.next_timer().expect("a wake-up while packets wait");
                assert!(due > t, "the wake-up is in the future");
                t = due;
                h.timer(q, t);
            }
        }
    }
    out
}

/// The flow of the packet dequeued at `t` (one must be).
fn flow_of(h: &mut Harness, q: &mut SchFq, t: Time) -> u32 {
    let id = h.dequeue(q, t).expect("a packet");
    h.pool.get(id).flow
}

#[test]
fn defaults_are_linux_fq_init() {
    // plimit 10000, flow_plimit 100, quantum 2 * MTU, initial_quantum 10 * MTU, refill 40 ms,
    // low_rate_threshold 550 kbit/s, no maxrate, ce_threshold off
    let (_, v) = build(&json!({}), &link(), Rng::from_seed(1)).unwrap();
    assert_eq!(v["limit"], "10000p");
    assert_eq!(v["flow_limit"], "100p");
    assert_eq!(v["quantum"], "3000B");
    assert_eq!(v["initial_quantum"], "15000B");
    assert_eq!(v["refill_delay"], "40ms");
    assert_eq!(v["maxrate"], "unlimited");
    assert_eq!(v["low_rate_threshold"], "550Kbps");
    assert_eq!(v["ce_threshold"], "off");
}

#[test]
fn a_low_rate_flow_leaves_one_packet_per_length_at_maxrate() {
    // maxrate 400 kbit/s = 50000 B/s is below low_rate_threshold: each packet zeroes the credit
    // and holds the flow for its own length, 1000 B / 50000 B/s = 20 ms
    let mut q = fq(json!({"maxrate": "400Kbps"}));
    let mut h = Harness::new();
    for _ in 0..5 {
        h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0);
    }
    let times: Vec<Time> = drain(&mut h, &mut q, 0).iter().map(|d| d.0).collect();
    assert_eq!(times, vec![0, 20 * MS, 40 * MS, 60 * MS, 80 * MS]);
}

#[test]
fn a_fast_flow_spends_its_credit_then_is_paced_per_quantum() {
    // maxrate 8 Mbit/s = 1e6 B/s, above low_rate_threshold: pacing starts only once the credit
    // is spent. A new flow has initial_quantum 15000 B: ten 1500 B packets at once; then each
    // refill of quantum 3000 B (two packets) waits max(1500, quantum) / rate = 3 ms.
    let mut q = fq(json!({"maxrate": "8Mbps"}));
    let mut h = Harness::new();
    for _ in 0..16 {
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
    }
    let times: Vec<Time> = drain(&mut h, &mut q, 0).iter().map(|d| d.0).collect();
    let mut want = vec![0; 10];
    want.extend([3 * MS, 3 * MS, 6 * MS, 6 * MS, 9 * MS, 9 * MS]);
    assert_eq!(times, want);
    // the long-run rate is maxrate: 3000 B per 3 ms
}

#[test]
fn a_late_departure_shortens_the_next_gap_by_at_most_half() {
    // Linux: len -= min(len / 2, now - time_next_packet). 20 ms gaps (400 kbit/s, 1000 B);
    // the second packet leaves 4 ms late (24 ms), so the third is due 16 ms later (40 ms); the
    // fourth leaves 30 ms late (70 ms): the gap only halves, to 10 ms.
    let mut q = fq(json!({"maxrate": "400Kbps"}));
    let mut h = Harness::new();
    for _ in 0..5 {
        h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0);
    }
    assert!(h.dequeue(&mut q, 0).is_some());
    assert!(h.dequeue(&mut q, 24 * MS).is_some());
    assert!(h.dequeue(&mut q, 39 * MS).is_none());
    assert_eq!(q.next_timer(), Some(40 * MS));
    assert!(h.dequeue(&mut q, 70 * MS).is_some());
    assert!(h.dequeue(&mut q, 79 * MS).is_none());
    assert_eq!(q.next_timer(), Some(80 * MS));
}

#[test]
fn a_flow_beyond_flow_limit_is_dropped_and_others_still_enter() {
    let mut q = fq(json!({"flow_limit": "3p", "limit": "5p"}));
    let keys = distinct_flows(&q, 3);
    let mut h = Harness::new();
    let a: Vec<PktId> = (0..4)
        .map(|_| h.enqueue(&mut q, keys[0], 1000, Ecn::NotEct, 0))
        .collect();
    // f->qlen >= flow_plimit: the fourth packet of the flow is dropped
    assert_eq!(h.drops, vec![(a[3], DropReason::Overlimit)]);
    let b: Vec<PktId> = (0..2)
        .map(|_| h.enqueue(&mut q, keys[1], 1000, Ecn::NotEct, 0))
        .collect();
    assert!(!h.was_dropped(b[0]) && !h.was_dropped(b[1]));
    // sch->q.qlen >= limit: the sixth packet of any flow is dropped
    let c = h.enqueue(&mut q, keys[2], 1000, Ecn::NotEct, 0);
    assert!(h.was_dropped(c));
    assert_eq!(q.backlog_packets(), 5);
    assert_eq!(q.diagnostics()[0], ("flow_limit_drops", 1.0));
}

#[test]
fn two_backlogged_flows_alternate_by_credit() {
    // No pacing. A and B are new with initial_quantum 15000 B: A sends ten 1500 B packets and
    // goes to the old list with credit 0 + 3000, then B does the same; from then on the old
    // list alternates two packets (one quantum) each.
    let mut q = fq(json!({}));
    let keys = distinct_flows(&q, 2);
    let (a, b) = (keys[0], keys[1]);
    let mut h = Harness::new();
    for _ in 0..16 {
        h.enqueue(&mut q, a, 1500, Ecn::NotEct, 0);
        h.enqueue(&mut q, b, 1500, Ecn::NotEct, 0);
    }
    let order: Vec<u32> = drain(&mut h, &mut q, 0).iter().map(|d| d.1).collect();
    let mut want = vec![a; 10];
    want.extend([b; 10]);
    for _ in 0..3 {
        want.extend([a, a, b, b]);
    }
    assert_eq!(order, want);
}

#[test]
fn a_new_flow_goes_before_the_old_ones_with_its_initial_quantum() {
    let mut q = fq(json!({}));
    let keys = distinct_flows(&q, 2);
    let (a, c) = (keys[0], keys[1]);
    let mut h = Harness::new();
    for _ in 0..30 {
        h.enqueue(&mut q, a, 1500, Ecn::NotEct, 0);
    }
    // A spends its initial 15000 B and one quantum: 12 packets, it is on the old list
    for _ in 0..12 {
        h.dequeue(&mut q, 0);
    }
    for _ in 0..14 {
        h.enqueue(&mut q, c, 1500, Ecn::NotEct, MS);
    }
    // the new list first: C's ten packets (15000 B); then C joins the old list behind A, whose
    // credit is spent too: A rotates (+3000), C sends its quantum, then A its quantum
    let order: Vec<u32> = (0..16).map(|_| flow_of(&mut h, &mut q, MS)).collect();
    let mut want = vec![c; 12];
    want.extend([a, a, c, c]);
    assert_eq!(order, want);
}

#[test]
fn an_idle_flow_is_refilled_to_a_quantum_after_refill_delay() {
    // initial_quantum 3000 B: A sends one 1000 B packet and is found empty with credit 2000,
    // detached (a flow is only detached with credit left). Back after 40 ms or less it keeps
    // 2000 B (two packets before it rotates); after more than 40 ms (time_after(jiffies, age +
    // flow_refill_delay)) it restarts at max(2000, quantum 3000) = three packets. B arrives
    // just before it, new with 3000 B. (A dequeue only looks at flows while packets wait: Z's
    // packet makes the one that finds A empty.)
    for (back, a_run) in [(40 * MS, 2), (40 * MS + 1, 3)] {
        let mut q = fq(json!({"initial_quantum": "3000B"}));
        let keys = distinct_flows(&q, 3);
        let (a, b, z) = (keys[0], keys[1], keys[2]);
        let mut h = Harness::new();
        h.enqueue(&mut q, a, 1000, Ecn::NotEct, 0);
        h.enqueue(&mut q, z, 1000, Ecn::NotEct, 0);
        assert_eq!(flow_of(&mut h, &mut q, 0), a);
        assert_eq!(
            flow_of(&mut h, &mut q, 0),
            z,
            "A found empty on the way: detached"
        );
        for f in [b, a] {
            for _ in 0..4 {
                h.enqueue(&mut q, f, 1000, Ecn::NotEct, back);
            }
        }
        let order: Vec<u32> = (0..7).map(|_| flow_of(&mut h, &mut q, back)).collect();
        let mut want = vec![b; 3];
        want.extend(vec![a; a_run]);
        want.push(b); // B's last packet
        want.extend(vec![a; 3 - a_run]);
        assert_eq!(order, want, "back after {back} ns");
    }
}

#[test]
fn ce_threshold_marks_packets_leaving_late() {
    // (s64)(now - time_next_packet - ce_threshold) > 0: a forwarded packet is due at its
    // arrival, so one waiting more than 1 ms is marked (ECT only)
    let mut q = fq(json!({"ce_threshold": "1ms"}));
    let mut h = Harness::new();
    let a = h.enqueue(&mut q, 0, 1000, Ecn::Ect1, 0);
    let b = h.enqueue(&mut q, 0, 1000, Ecn::Ect0, 0);
    let c = h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0);
    assert_eq!(h.dequeue(&mut q, MS), Some(a));
    assert_eq!(h.dequeue(&mut q, MS + 1), Some(b));
    assert_eq!(h.dequeue(&mut q, 2 * MS), Some(c));
    assert_eq!(
        h.marks,
        vec![b],
        "exactly 1 ms is not late; Not-ECT is never marked"
    );
    let e = build(
        &json!({"ce_threshold": {"threshold": "1ms", "selector": 1, "mask": 1}}),
        &link(),
        Rng::from_seed(1),
    )
    .err()
    .unwrap();
    assert!(
        e.starts_with("ce_threshold: selector 1 with mask 1 is not allowed"),
        "{e}"
    );
}

/// Enqueues a packet of `flow` stamped by its sending host to leave at `tstamp` (EDT).
fn enqueue_stamped(h: &mut Harness, q: &mut SchFq, flow: u32, tstamp: Time, now: Time) -> PktId {
    let id = h.packet(flow, 1500, Ecn::NotEct);
    h.pool.get_mut(id).tstamp = tstamp;
    h.offer(q, id, now);
    id
}

#[test]
fn a_stamped_packet_leaves_at_its_departure_time_and_no_earlier() {
    // fq_enqueue: time_to_send = skb->tstamp; fq_dequeue throttles the flow until
    // max(time_to_send, time_next_packet). A packet stamped 3 ms ahead waits exactly that long,
    // while another flow's unstamped packet (due at its arrival) leaves at once.
    let mut q = fq(json!({}));
    let keys = distinct_flows(&q, 2);
    let mut h = Harness::new();
    let a = enqueue_stamped(&mut h, &mut q, keys[0], 3 * MS, 0);
    let b = h.enqueue(&mut q, keys[1], 1500, Ecn::NotEct, 0);
    assert_eq!(h.dequeue(&mut q, 0), Some(b));
    assert_eq!(h.dequeue(&mut q, 0), None);
    assert_eq!(q.next_timer(), Some(3 * MS));
    assert_eq!(h.dequeue(&mut q, 3 * MS - 1), None);
    assert_eq!(h.dequeue(&mut q, 3 * MS), Some(a));
    assert_eq!(h.pool.get(a).tstamp, 0, "the host's stamp does not travel on");
}

#[test]
fn a_stamped_packet_is_paced_by_maxrate_over_its_own_length() {
    // With skb->tstamp set fq_dequeue skips the credit and low-rate branch: plen stays the
    // packet's length and rate is maxrate, so each 1500 B packet at 8 Mbit/s (1e6 B/s) holds
    // the flow 1.5 ms, credit or not. (Unstamped, the first ten would leave at once on the
    // initial quantum: a_fast_flow_spends_its_credit_then_is_paced_per_quantum.)
    let mut q = fq(json!({"maxrate": "8Mbps"}));
    let mut h = Harness::new();
    for _ in 0..4 {
        enqueue_stamped(&mut h, &mut q, 0, 1, 0);
    }
    let times: Vec<Time> = drain(&mut h, &mut q, 1).iter().map(|d| d.0).collect();
    assert_eq!(times, vec![1, 1 + 1_500_000, 1 + 3_000_000, 1 + 4_500_000]);
}

#[test]
fn a_stamp_beyond_the_horizon_is_dropped_or_capped() {
    // fq_packet_beyond_horizon: tstamp > now + horizon. At the horizon exactly it is kept;
    // beyond it, horizon_drop (the default) drops it, else its stamp becomes now + horizon.
    let mut q = fq(json!({"horizon": "5ms"}));
    let mut h = Harness::new();
    let at = enqueue_stamped(&mut h, &mut q, 0, MS + 5 * MS, MS);
    let beyond = enqueue_stamped(&mut h, &mut q, 0, MS + 5 * MS + 1, MS);
    assert!(!h.was_dropped(at));
    assert_eq!(h.drops, vec![(beyond, DropReason::Overlimit)]);
    let mut q = fq(json!({"horizon": "5ms", "horizon_drop": false}));
    let mut h = Harness::new();
    let capped = enqueue_stamped(&mut h, &mut q, 0, 60 * MS, MS);
    assert!(h.drops.is_empty());
    assert_eq!(drain(&mut h, &mut q, MS), vec![(6 * MS, 0)]);
    assert_eq!(h.pool.get(capped).tstamp, 0);
    let diag = q.diagnostics();
    assert!(diag.contains(&("horizon_caps", 1.0)) && diag.contains(&("horizon_drops", 0.0)));
    // Linux's default: 10 s, drop.
    let (_, v) = build(&json!({}), &link(), Rng::from_seed(1)).unwrap();
    assert_eq!(
        (v["horizon"].as_str(), v["horizon_drop"].as_bool()),
        (Some("10s"), Some(true))
    );
}
