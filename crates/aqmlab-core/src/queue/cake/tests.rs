//! CAKE's behaviour worked by hand from Linux sch_cake.c.

use super::cobalt::{CobaltParams, CobaltVars, Verdict, P_DEC, P_INC};
use super::hash::{FlowMode, Set, Table, QUEUES, WAYS};
use super::shaper::{Atm, ByteTime, Framing};
use super::*;
use crate::packet::{flags, Ecn, Kind, Packet, PacketPool, SackBlock};
use crate::queue::QueueEvent;
use crate::units::tx_time;
use serde_json::json;

fn params() -> CobaltParams {
    CobaltParams {
        interval: 100 * MS,
        target: 5 * MS,
        mtu_time: 0,
        p_inc: P_INC,
        p_dec: P_DEC,
    }
}

#[test]
fn blue_steps_up_once_per_target_on_overflow() {
    let p = params();
    let mut v = CobaltVars::default();
    // the first overflow (more than a target after time 0) raises p_drop by 1/256
    assert!(v.queue_full(&p, 10 * MS));
    assert_eq!(v.p_drop, 1 << 24);
    // within the same target: no second step
    assert!(!v.queue_full(&p, 14 * MS));
    assert_eq!(v.p_drop, 1 << 24);
    // a target later (strictly more than 5 ms): the second step, 2/256
    assert!(!v.queue_full(&p, 15 * MS + 1));
    assert_eq!(v.p_drop, 2 << 24);
    // 256 steps saturate at ~1.0 instead of wrapping to 0
    for k in 0..300u64 {
        v.queue_full(&p, 100 * MS + k * 6 * MS);
    }
    assert_eq!(v.p_drop, u32::MAX);
}

#[test]
fn blue_decays_on_an_empty_queue() {
    // p_inc / p_dec = 4096 / 256 = 16: one overflow step takes 16 empty services, each more
    // than a target apart, to undo; queue_empty reports the 16th as the return to quiet
    let p = params();
    let mut v = CobaltVars::default();
    v.queue_full(&p, 10 * MS);
    let mut t = 10 * MS;
    for k in 1..=16 {
        t += 5 * MS + 1;
        let quiet = v.queue_empty(&p, t);
        assert_eq!(v.p_drop, (1 << 24) - k * (1 << 20), "step {k}");
        assert_eq!(quiet, k == 16, "step {k}");
        // within a target of the last step: no decay
        assert!(!v.queue_empty(&p, t + 5 * MS));
    }
    assert_eq!(v.p_drop, 0);
}

/// CoDel's signals under a standing sojourn above target, one ECT packet every 0.1 ms.
fn signal_times(p: &CobaltParams, sojourn: Time, until: Time) -> Vec<Time> {
    let mut v = CobaltVars::default();
    let mut rng = Rng::from_seed(1);
    let mut out = Vec::new();
    let mut now = 0;
    while now < until {
        match v.should_drop(p, now, sojourn, 0, true, &mut rng) {
            Verdict::Mark => out.push(now),
            Verdict::Drop => panic!("an ECT packet is marked, BLUE is quiet"),
            Verdict::Deliver => {}
        }
        now += 100_000;
    }
    out
}

#[test]
fn codel_part_signals_by_the_inverse_square_root() {
    // A fresh flow's 1/sqrt(count) is 0 (Linux zeroes cobalt_vars), so its first deadline is
    // the instant the sojourn first exceeds target (0) and the next packet (0.1 ms) is the first
    // signal. The deadlines then advance by interval / sqrt(count) for count 2, 3, 4, 5: 70.71,
    // 57.74, 50, 44.72 ms, each signal at the first packet at or after its deadline (the cache
    // of four Newton steps is within 0.05 ms of these, where one step per count gives 50,
    // 56.25...).
    let p = params();
    let t = signal_times(&p, 20 * MS, 240 * MS);
    assert_eq!(t[0], 100_000, "{t:?}");
    let mut deadline = 0.0;
    for (k, count) in (2..=5).enumerate() {
        deadline += 100.0 / (count as f64).sqrt();
        let at = t[k + 1] as f64 / MS as f64;
        assert!(
            at >= deadline - 0.05 && at < deadline + 0.15,
            "signal {k}: {at} vs {deadline} ({t:?})"
        );
    }
    assert_eq!(t.len(), 5, "{t:?}");
    // below target: never
    assert!(signal_times(&p, 4 * MS, 1000 * MS).is_empty());
    // above target but under four MTU times at the rate: never (a 1500 B packet at 1 Mb/s
    // takes 12 ms, so 20 ms < 48 ms)
    let slow = CobaltParams {
        mtu_time: tx_time(1500, 1_000_000),
        ..params()
    };
    assert!(signal_times(&slow, 20 * MS, 1000 * MS).is_empty());
}

#[test]
fn codel_part_drops_what_is_not_ecn_capable_and_blue_never_marks() {
    let p = params();
    let mut v = CobaltVars::default();
    let mut rng = Rng::from_seed(1);
    assert_eq!(
        v.should_drop(&p, 0, 20 * MS, 0, false, &mut rng),
        Verdict::Deliver
    );
    assert_eq!(
        v.should_drop(&p, 100 * MS, 20 * MS, 0, false, &mut rng),
        Verdict::Drop
    );
    // BLUE at p_drop ~1: every ECT packet dropped, none marked
    let mut v = CobaltVars::default();
    v.p_drop = u32::MAX;
    for k in 0..100 {
        assert_eq!(v.should_drop(&p, k * MS, 0, 0, true, &mut rng), Verdict::Drop);
    }
}

#[test]
fn shaper_time_per_packet_with_overhead_and_cells() {
    // 1 Mb/s = 125000 B/s: 8000 ns per byte
    let r = ByteTime::new(125_000);
    let f = |overhead, mpu, atm| Framing { overhead, mpu, atm };
    // 1500 B + 18 B of Ethernet framing = 1518 B: 12.144 ms (to the fixed point's 1 ns)
    let len = f(18, 0, Atm::None).adjusted(1500);
    assert_eq!(len, 1518);
    assert!(r.duration(len).abs_diff(12_144_000) <= 1);
    // ATM with 44 B of overhead: 1544 B need ceil(1544 / 48) = 33 cells of 53 B = 1749 B
    let len = f(44, 0, Atm::Atm).adjusted(1500);
    assert_eq!(len, 1749);
    assert!(r.duration(len).abs_diff(13_992_000) <= 1);
    // a 40 B ACK + 10 B is one 48 B cell and a bit: 2 cells = 106 B
    assert_eq!(f(10, 0, Atm::Atm).adjusted(40), 106);
    // PTM: one byte per 64 or part: 1500 + 24 = 1524
    assert_eq!(f(0, 0, Atm::Ptm).adjusted(1500), 1524);
    // the MPU applies after the overhead; a negative overhead shrinks the charge
    assert_eq!(f(4, 64, Atm::None).adjusted(40), 64);
    assert_eq!(f(-20, 0, Atm::None).adjusted(1500), 1480);
    // unlimited: no time at all
    assert_eq!(ByteTime::new(0).duration(1500), 0);
}

#[test]
fn colliding_flow_takes_another_way_of_its_set() {
    let mut t = Table::new(FlowMode::Flows);
    // two hashes with the same queue (mod 1024), in way 7 of set 8..16: the second flow
    // takes the next way, wrapping to way 0 of the same set
    let (a, b) = (15u32, 15 + QUEUES as u32);
    let qa = t.classify(a, 0, 0);
    assert_eq!(qa, 15);
    t.set[qa] = Set::Bulk;
    let qb = t.classify(b, 0, 0);
    assert_eq!(qb, 8);
    t.set[qb] = Set::Sparse;
    // each finds its own queue again
    assert_eq!(t.classify(a, 0, 0), 15);
    assert_eq!(t.classify(b, 0, 0), 8);
    // a: an idle way (its own), b: an idle way (the next), a: direct, b: found in way 1 of 8
    assert_eq!((t.stats.directs, t.stats.misses, t.stats.hits), (1, 2, 1));
    // fill the set's other 6 ways: a ninth flow of the set shares its own queue
    for k in 2..WAYS as u32 {
        let q = t.classify(15 + k * QUEUES as u32, 0, 0);
        assert!((8..16).contains(&q), "{q}");
        t.set[q] = Set::Bulk;
    }
    let c = 15 + 9 * QUEUES as u32;
    assert_eq!(t.classify(c, 0, 0), 15);
    assert_eq!(t.stats.collisions, 1);
}

#[test]
fn isolation_modes_key_flows_as_linux() {
    use FlowMode::*;
    let (f, s, d) = (0xAAAA_0000, 0x0F0F, 0x3300);
    assert_eq!(Flowblind.key(f, s, d), 0);
    assert_eq!(Srchost.key(f, s, d), s);
    assert_eq!(Dsthost.key(f, s, d), d);
    assert_eq!(Hosts.key(f, s, d), s ^ d);
    for m in [Flows, DualSrchost, DualDsthost, TripleIsolate] {
        assert_eq!(m.key(f, s, d), f);
    }
    let dual: Vec<(bool, bool)> = [Flows, DualSrchost, DualDsthost, TripleIsolate, Hosts]
        .iter()
        .map(|m| (m.dual_src(), m.dual_dst()))
        .collect();
    assert_eq!(
        dual,
        [
            (false, false),
            (true, false),
            (false, true),
            (true, true),
            (false, false)
        ]
    );
}

fn make(p: Value, rate_bps: u64) -> Cake {
    let link = LinkInfo {
        rate_bps,
        mtu: 1500,
        limit: None,
        wifi: false,
    };
    build(&p, &link, Rng::from_seed(7)).unwrap().0
}

/// Pushes one 1500 B ECT packet of `flow` between client host `host` and server `server`.
fn push(
    q: &mut Cake,
    pool: &mut PacketPool,
    ev: &mut Vec<QueueEvent>,
    (flow, host, server): (u32, u16, u16),
    dir: Dir,
    now: Time,
) {
    let id = pool.alloc(&Packet {
        flow,
        host,
        server,
        dir,
        size: 1500,
        ecn: Ecn::Ect0,
        enqueued_at: now,
        ..Packet::default()
    });
    q.enqueue(id, &mut QueueCtx { pool, events: ev }, now);
}

/// Packets of `flow` queued.
fn backlog_of(q: &Cake, pool: &PacketPool, flow: u32) -> usize {
    q.tins[0]
        .flows
        .iter()
        .filter(|f| f.q.front().is_some_and(|id| pool.get(id).flow == flow))
        .map(|f| f.q.len())
        .sum()
}

/// Client host 0 with one bulk flow against client host 1 with four, all sending `dir`, each
/// flow kept 20 packets deep through CAKE in `mode` at 10 Mb/s for 10 s: host 0's share of the
/// bytes sent. The flows reach one server, or each its own.
fn lone_host_share(mode: &str, dir: Dir, own_servers: bool) -> f64 {
    let rate = 10_000_000;
    let mut q = make(json!({"isolation": mode, "diffserv": "besteffort"}), rate);
    let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
    let flows: Vec<(u32, u16, u16)> = (0..5u32)
        .map(|f| (f, (f > 0) as u16, if own_servers { f as u16 + 1 } else { 0 }))
        .collect();
    let slot = tx_time(1500, rate);
    let mut bytes = [0u64; 2];
    let mut now = 0;
    while now < 10 * SEC {
        for &f in &flows {
            while backlog_of(&q, &pool, f.0) < 20 {
                push(&mut q, &mut pool, &mut ev, f, dir, now);
            }
        }
        let mut ctx = QueueCtx {
            pool: &mut pool,
            events: &mut ev,
        };
        let id = q.dequeue(&mut ctx, now).expect("backlogged");
        for e in ev.drain(..) {
            if let QueueEvent::Drop(d, _) = e {
                pool.release(d);
            }
        }
        let p = pool.get(id);
        bytes[(p.host != 0) as usize] += p.size as u64;
        pool.release(id);
        now += slot;
    }
    bytes[0] as f64 / (bytes[0] + bytes[1]) as f64
}

#[test]
fn a_host_with_one_flow_gets_half_against_a_host_with_four() {
    // Per-flow fairness gives the lone flow 1/5. Sharing by client host first (the source
    // upstream, the destination downstream) divides each host's quantum by its bulk flows:
    // 1/1 against 4 x 1/4, half each.
    let cases = [
        ("flows", Dir::Up, false, 0.2),
        ("dual-srchost", Dir::Up, false, 0.5),
        ("dual-dsthost", Dir::Down, false, 0.5),
        // the server side is then the source: one host, so per flow
        ("dual-srchost", Dir::Down, false, 0.2),
        // triple-isolate divides by the larger of the two hosts' counts: with one server
        // (5 bulk flows) every flow's divisor is 5, per flow; with a server per flow the
        // client hosts' counts (1 and 4) decide, half each
        ("triple-isolate", Dir::Up, false, 0.2),
        ("triple-isolate", Dir::Up, true, 0.5),
        ("triple-isolate", Dir::Down, true, 0.5),
    ];
    for (mode, dir, own, want) in cases {
        let share = lone_host_share(mode, dir, own);
        assert!(
            (share - want).abs() < 0.03,
            "{mode} {dir:?} own servers {own}: {share}"
        );
    }
}

#[test]
fn the_shaper_paces_at_the_bandwidth_with_its_overhead() {
    // 1 Mb/s with 18 B overhead on a 100 Mb/s link: 1500 B packets leave 12.144 ms apart
    let mut q = make(json!({"bandwidth": "1Mbps", "overhead": 18}), 100_000_000);
    let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
    for _ in 0..10 {
        push(&mut q, &mut pool, &mut ev, (0, 0, 0), Dir::Down, 0);
    }
    let mut now = 0;
    let mut sent = Vec::new();
    while sent.len() < 10 {
        let mut ctx = QueueCtx {
            pool: &mut pool,
            events: &mut ev,
        };
        match q.dequeue(&mut ctx, now) {
            Some(_) => sent.push(now),
            None => {
                now = q.next_timer().expect("a shaper wake-up");
                q.on_timer(&mut ctx, now);
            }
        }
    }
    for w in sent.windows(2) {
        assert!((w[1] - w[0]).abs_diff(12_144_000) <= 1, "{sent:?}");
    }
}

#[test]
fn diffserv_maps_as_linux() {
    use TinMode::*;
    // EF (46) and CS6 (48) latency sensitive, CS1 (8) and LE (1) low priority, AF11 (10) best
    // effort in diffserv3; diffserv4 puts AF41 (34) in streaming and AF11 in best effort
    assert_eq!(
        [46, 48, 8, 1, 10, 0].map(|d| Diffserv3.tin(d)),
        [2, 2, 1, 1, 0, 0]
    );
    assert_eq!([46, 34, 10, 8, 0].map(|d| Diffserv4.tin(d)), [3, 2, 0, 1, 0]);
    assert_eq!(Besteffort.tin(46), 0);
}

#[test]
fn cobalt_scales_with_the_rate_as_cake_set_rate() {
    // at 1 Mb/s one MTU takes 12 ms: target 1.5 x 12 = 18 ms, interval 100 + 18 - 5 = 113 ms
    let q = make(
        json!({"bandwidth": "1Mbps", "diffserv": "besteffort"}),
        100_000_000,
    );
    let c = q.tins[0].cparams;
    assert!(
        c.target.abs_diff(18 * MS) <= 2 && c.interval.abs_diff(113 * MS) <= 2,
        "{c:?}"
    );
    // and the flow quantum: 125000 >> 12 = 30, raised to 300 B
    assert_eq!(q.tins[0].flow_quantum, 300);
    // unshaped: the defaults, and a quantum of one MTU
    let q = make(json!({}), 100_000_000);
    assert_eq!(
        (q.tins[0].cparams.target, q.tins[0].cparams.interval),
        (5 * MS, 100 * MS)
    );
    assert_eq!(q.tins[0].flow_quantum, 1500);
    assert_eq!(q.tins.len(), 3);
}

#[test]
fn bad_keys_name_the_key_and_what_is_allowed() {
    let link = LinkInfo {
        rate_bps: 10_000_000,
        mtu: 1500,
        limit: None,
        wifi: false,
    };
    let e = |p: Value| {
        INFO[0]
            .checked(&p, &link, Rng::from_seed(1))
            .err()
            .expect("rejected")
    };
    assert!(e(json!({"bandwidth": "0bps"})).starts_with("bandwidth: 0bps is not allowed"));
    assert!(e(json!({"isolation": "triple"})).contains("triple-isolate"));
    assert!(e(json!({"overhead": 300})).starts_with("overhead: 300 is out of range; allowed -64 to 256"));
    assert!(e(json!({"atm": "adsl"})).contains("none, atm, ptm"));
    assert_eq!(
        e(json!({"ack_filter": "yes"})),
        "ack_filter: \"yes\" is not allowed; allowed: off, on, aggressive"
    );
}

/// Backlogs by (tin, flow) for the overflow heap's tests.
fn backlogs(set: &[((usize, usize), u64)]) -> impl Fn(usize, usize) -> u64 + '_ {
    move |t, f| set.iter().find(|(k, _)| *k == (t, f)).map_or(0, |(_, b)| *b)
}

#[test]
fn overflow_heap_is_rebuilt_at_a_drop_and_then_kept_only_by_arrivals() {
    use overflow::OverflowHeap;
    let mut h = OverflowHeap::default();
    // not live: the first drop rebuilds it and picks the longest queue of any tin
    let b = [((0, 5), 3000), ((2, 9), 9000), ((1, 7), 4500)];
    assert_eq!(h.root(backlogs(&b)), (2, 9));
    // departures do not reorder it: tin 2's flow 9 drained to 1500 B is still the root while
    // the heap is live (65535 sends), although tin 1's flow 7 is longer now
    let b = [((0, 5), 3000), ((2, 9), 1500), ((1, 7), 4500)];
    h.sent();
    assert_eq!(h.root(backlogs(&b)), (2, 9));
    // after a drop the root sinks to its place
    h.dropped(backlogs(&b));
    assert_eq!(h.root(backlogs(&b)), (1, 7));
    // an arrival rises to the root while the heap is live
    let b = [((0, 5), 6000), ((2, 9), 1500), ((1, 7), 4500)];
    h.grew(0, 5, backlogs(&b));
    assert_eq!(h.root(backlogs(&b)), (0, 5));
    // 65535 sends without a drop: the heap goes stale, arrivals no longer move it, and the next
    // drop rebuilds it from the backlogs
    for _ in 0..65535 {
        h.sent();
    }
    let b = [((0, 5), 6000), ((2, 9), 1500), ((3, 1), 7500)];
    h.grew(3, 1, backlogs(&b));
    assert_eq!(h.root(backlogs(&b)), (3, 1));
}

#[test]
fn memlimit_sets_the_buffer_and_overflow_drops_from_the_longest_flow() {
    // memlimit 20000 B of modelled memory: 1500 + 576 B per packet, nine packets (18684 B) fit,
    // the tenth overflows and the head of the longer of two flows is dropped
    let mut q = make(
        json!({"memlimit": "20000B", "diffserv": "besteffort"}),
        10_000_000,
    );
    let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
    for k in 0..10 {
        let flow = if k < 3 { 1 } else { 2 };
        push(&mut q, &mut pool, &mut ev, (flow, 0, 0), Dir::Down, 0);
    }
    let drops: Vec<u32> = ev
        .iter()
        .map(|e| match e {
            QueueEvent::Drop(id, DropReason::FatFlow) => pool.get(*id).flow,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(drops, vec![2]);
    assert_eq!((backlog_of(&q, &pool, 1), backlog_of(&q, &pool, 2)), (3, 6));
}

#[test]
fn wash_clears_the_dscp_after_the_tin_is_chosen() {
    for wash in [false, true] {
        let mut q = make(json!({ "wash": wash }), 10_000_000);
        let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
        let id = pool.alloc(&Packet {
            dscp: 46,
            size: 1500,
            ..Packet::default()
        });
        q.enqueue(
            id,
            &mut QueueCtx {
                pool: &mut pool,
                events: &mut ev,
            },
            0,
        );
        // EF is latency sensitive in diffserv3 (tin 2) either way
        assert_eq!(q.tins[2].backlog, 1500);
        assert_eq!(pool.get(id).dscp, if wash { 0 } else { 46 });
    }
}

#[test]
fn ingress_counts_overflow_drops_against_the_shaper() {
    // shaped at 12 Mb/s a 1500 B packet takes 1 ms; memlimit holds two packets (4152 B), so
    // the third arrival at time 0 overflows. In ingress mode the dropped packet moves the
    // shaper's clock by its 1 ms (cake_drop -> cake_advance_shaper); otherwise it stays at 0.
    for (ingress, next) in [(false, 0), (true, MS)] {
        let p = json!({"bandwidth": "12Mbps", "memlimit": "4200B", "ingress": ingress});
        let mut q = make(p, 100_000_000);
        let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
        for _ in 0..3 {
            push(&mut q, &mut pool, &mut ev, (0, 0, 0), Dir::Down, 0);
        }
        assert_eq!(q.overflow_drops, 1);
        assert!(q.shaper.next.abs_diff(next) <= 1, "{}", q.shaper.next);
    }
}

#[test]
fn diffserv8_and_precedence_map_and_share_as_linux() {
    use TinMode::*;
    // precedence: the DSCP's top three bits; diffserv8: LE 0, CS1 and AF11 1, best effort 2,
    // AF41 and CS3 3, AF21 4, CS2 5, EF, VA, CS4 and CS5 6, CS6 and CS7 7
    assert_eq!([0, 8, 46, 48, 63].map(|d| Precedence.tin(d)), [0, 1, 5, 6, 7]);
    assert_eq!(
        [1, 8, 10, 0, 34, 24, 18, 16, 46, 44, 32, 40, 48, 56].map(|d| Diffserv8.tin(d)),
        [0, 1, 1, 2, 3, 3, 4, 5, 6, 6, 6, 6, 7, 7]
    );
    // each tin 7/8 of the one below, truncated at each step: 2.5 MB/s (20 Mb/s) and 256
    let s = Diffserv8.shares(2_500_000);
    let rates: Vec<u64> = s.iter().map(|t| t.rate).collect();
    let quanta: Vec<u16> = s.iter().map(|t| t.quantum).collect();
    assert_eq!(
        rates,
        [2_500_000, 2_187_500, 1_914_062, 1_674_804, 1_465_453, 1_282_271, 1_121_987, 981_738]
    );
    assert_eq!(quanta, [256, 224, 196, 171, 149, 130, 113, 98]);
    assert_eq!(Precedence.shares(0).len(), 8);
    let q = make(json!({"diffserv": "precedence"}), 10_000_000);
    assert_eq!(q.tins.len(), 8);
}

/// A pure ACK going up on connection `flow`, acknowledging `ack`, with the flags `extra` too.
fn ack(flow: u32, ack: u64, extra: u16) -> Packet {
    Packet {
        flow,
        kind: Kind::Tcp,
        dir: Dir::Up,
        tcp_flags: flags::ACK | extra,
        ack,
        size: 52,
        ..Packet::default()
    }
}

/// The same ACK with SACK blocks.
fn sacked(mut p: Packet, blocks: &[(u64, u64)]) -> Packet {
    let blocks: Vec<SackBlock> = blocks
        .iter()
        .map(|&(start, end)| SackBlock { start, end })
        .collect();
    p.set_sacks(&blocks);
    p.size += 8 * blocks.len() as u32;
    p
}

/// Enqueues `pkts` in order into one flow queue of CAKE (flowblind: every packet shares it)
/// with `ack_filter = mode`, sending nothing: the positions in `pkts` of the packets the filter
/// dropped, in the order dropped. Checks that nothing else was dropped and that the queue's
/// counts hold exactly the packets left.
fn filtered(mode: &str, pkts: &[Packet]) -> Vec<usize> {
    let p = json!({"ack_filter": mode, "isolation": "flowblind", "diffserv": "besteffort"});
    let mut q = make(p, 10_000_000);
    let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
    for (i, p) in pkts.iter().enumerate() {
        let id = pool.alloc(p);
        assert_eq!(id as usize, i);
        q.enqueue(
            id,
            &mut QueueCtx {
                pool: &mut pool,
                events: &mut ev,
            },
            i as Time,
        );
    }
    let dropped: Vec<usize> = ev
        .iter()
        .map(|e| match e {
            QueueEvent::Drop(id, DropReason::AckFilter) => *id as usize,
            other => panic!("{other:?}"),
        })
        .collect();
    let kept: Vec<&Packet> = (0..pkts.len())
        .filter(|i| !dropped.contains(i))
        .map(|i| &pkts[i])
        .collect();
    let bytes: u64 = kept.iter().map(|p| p.size as u64).sum();
    assert_eq!(q.backlog_packets(), kept.len() as u64);
    assert_eq!(q.backlog_bytes(), bytes);
    assert_eq!(q.tins[0].backlog, bytes);
    assert_eq!(q.buffer_used, bytes + kept.len() as u64 * MEMORY_OVERHEAD);
    dropped
}

#[test]
fn a_newer_ack_drops_older_pure_acks_of_its_connection() {
    // four ACKs of one connection, each acknowledging more. Conservative (cake_ack_filter
    // without aggressive): the filter drops only when it finds two eligible ACKs ahead of the
    // arrival, and drops the one nearer the head: nothing at ACK 2, ACK 1 at ACK 3 (ACKs 1
    // and 2 eligible), ACK 2 at ACK 4. Aggressive: a lone eligible ACK just ahead of the
    // arrival goes too, so each arrival drops its predecessor.
    let acks: Vec<Packet> = (1..=4).map(|k| ack(0, 100 * k, 0)).collect();
    assert_eq!(filtered("on", &acks), [0, 1]);
    assert_eq!(filtered("aggressive", &acks), [0, 1, 2]);
    assert_eq!(filtered("off", &acks), [] as [usize; 0]);
    // duplicate ACKs (same cumulative ACK, no SACK) are never redundant
    let dup = [ack(0, 100, 0), ack(0, 100, 0), ack(0, 100, 0)];
    assert_eq!(filtered("aggressive", &dup), [] as [usize; 0]);
}

#[test]
fn the_filter_keeps_to_one_connection_and_direction() {
    // connections 0 and 1 interleaved in one queue: when 0's third ACK arrives, its first two
    // are eligible and the first goes; 1's ACKs (and its third, when it arrives) likewise,
    // never one of 0's. Aggressive adds nothing: no eligible ACK is just ahead of an arrival
    // of its connection
    let mut mixed = vec![];
    for k in 1..=3 {
        mixed.push(ack(0, 100 * k, 0));
        mixed.push(ack(1, 100 * k, 0));
    }
    assert_eq!(filtered("on", &mixed), [0, 1]);
    assert_eq!(filtered("aggressive", &mixed), [0, 1]);
    // one flow, but two transfers (conn) or two directions: not one connection
    let other_conn = Packet {
        conn: 1,
        ..ack(0, 300, 0)
    };
    let other_dir = Packet {
        dir: Dir::Down,
        ..ack(0, 300, 0)
    };
    for other in [other_conn, other_dir] {
        let pkts = [ack(0, 100, 0), ack(0, 200, 0), other];
        assert_eq!(filtered("aggressive", &pkts), [0], "{other:?}");
    }
}

#[test]
fn only_pure_acks_without_syn_fin_or_ae_are_dropped() {
    // cake_tcph_may_drop: the older packet's flags, ECE and CWR aside, must be ACK alone (AE
    // sits in the header's reserved nibble, which must be clear), and it must carry no data.
    // Each case: the odd packet first, then two plain ACKs; conservatively the odd one is not
    // eligible, so the later two make one eligible ACK only: nothing dropped; aggressively
    // the second plain ACK drops the first (its neighbour), never the odd one
    let data = Packet {
        payload: 1448,
        size: 1500,
        ..ack(0, 100, 0)
    };
    let odd = [
        data,
        ack(0, 100, flags::FIN),
        ack(0, 100, flags::SYN),
        ack(0, 100, flags::AE),
    ];
    for first in odd {
        let pkts = [first, ack(0, 200, 0), ack(0, 300, 0)];
        assert_eq!(filtered("on", &pkts), [] as [usize; 0], "{first:?}");
        assert_eq!(filtered("aggressive", &pkts), [1], "{first:?}");
    }
    // an arrival must carry ACK and not SYN to trigger the filter; data with an ACK does
    let data_ack = Packet {
        payload: 1448,
        size: 1500,
        ..ack(0, 300, 0)
    };
    let pkts = [ack(0, 100, 0), ack(0, 200, 0), data_ack];
    assert_eq!(filtered("on", &pkts), [0]);
    let syn = ack(0, 300, flags::SYN);
    assert_eq!(
        filtered("on", &[ack(0, 100, 0), ack(0, 200, 0), syn]),
        [] as [usize; 0]
    );
    // a later timestamp on the older ACK (TSval or TSecr) keeps it
    let late = Packet {
        ts_val: 9,
        ..ack(0, 100, 0)
    };
    let pkts = [late, ack(0, 200, 0), ack(0, 300, 0)];
    assert_eq!(filtered("on", &pkts), [] as [usize; 0]);
}

#[test]
fn ecn_feedback_is_never_lost() {
    // an ACK with ECE between two without: when the third arrives, the first is eligible but
    // the ECE ACK behind it changes the ECN bits, so it is forgotten; the ECE ACK is then the
    // only eligible one, and aggressive mode does not drop it for an arrival without ECE
    let pkts = [ack(0, 100, 0), ack(0, 200, flags::ECE), ack(0, 300, 0)];
    assert_eq!(filtered("on", &pkts), [] as [usize; 0]);
    assert_eq!(filtered("aggressive", &pkts), [] as [usize; 0]);
    // two ECE ACKs and then one without: the first ECE ACK goes (the second still carries
    // ECE); aggressively it goes already when the second arrives, and the second stays
    let pkts = [ack(0, 100, flags::ECE), ack(0, 200, flags::ECE), ack(0, 300, 0)];
    assert_eq!(filtered("on", &pkts), [0]);
    assert_eq!(filtered("aggressive", &pkts), [0]);
    // CWR likewise
    let pkts = [ack(0, 100, 0), ack(0, 200, flags::CWR), ack(0, 300, 0)];
    assert_eq!(filtered("aggressive", &pkts), [] as [usize; 0]);
}

#[test]
fn sack_blocks_must_be_covered_by_the_newer_ack() {
    // cake_tcph_sack_compare. Growing SACK coverage at one cumulative ACK: the third ACK
    // covers the first two and SACKs more: the first goes
    let a = |blocks: &[(u64, u64)]| sacked(ack(0, 100, 0), blocks);
    let growing = [a(&[(200, 300)]), a(&[(200, 400)]), a(&[(200, 500)])];
    assert_eq!(filtered("on", &growing), [0]);
    // a block the newer ACKs do not SACK keeps the first; aggressively the third drops the
    // second, which it covers
    let lost = [a(&[(500, 600)]), a(&[(200, 300)]), a(&[(200, 400)])];
    assert_eq!(filtered("on", &lost), [] as [usize; 0]);
    assert_eq!(filtered("aggressive", &lost), [1]);
    // the same SACK coverage and cumulative ACK: not redundant
    let same = [a(&[(200, 300)]), a(&[(200, 300)]), a(&[(200, 300)])];
    assert_eq!(filtered("aggressive", &same), [] as [usize; 0]);
    // an older ACK with SACK blocks against a newer one without: kept, even when the newer
    // cumulative ACK covers the block
    let pkts = [a(&[(200, 300)]), ack(0, 300, 0), ack(0, 400, 0)];
    assert_eq!(filtered("on", &pkts), [] as [usize; 0]);
    assert_eq!(filtered("aggressive", &pkts), [1]);
    // an older ACK SACKing a block that a newer one with more cumulative ACK SACKs too is
    // redundant, unless the block is a D-SACK (below the older ACK's own cumulative ACK)
    let newer = sacked(ack(0, 400, 0), &[(100, 200), (350, 400)]);
    let plain = sacked(ack(0, 300, 0), &[(350, 400)]);
    let dsack = sacked(ack(0, 300, 0), &[(100, 200)]);
    assert_eq!(filtered("aggressive", &[plain, newer]), [0]);
    assert_eq!(filtered("aggressive", &[dsack, newer]), [] as [usize; 0]);
    // more cumulative ACK with the same blocks: redundant
    let pkts = [
        sacked(ack(0, 100, 0), &[(200, 300)]),
        sacked(ack(0, 150, 0), &[(200, 300)]),
    ];
    assert_eq!(filtered("aggressive", &pkts), [0]);
}

#[test]
fn an_ack_dropped_in_ingress_mode_counts_against_the_shaper() {
    // cake_enqueue: an ACK dropped by the filter advances the shaper in ingress mode only. At
    // 416 kb/s (52 kB/s) a 52 B ACK takes 1 ms; the second ACK drops the first (aggressive)
    for (ingress, next) in [(false, 0), (true, MS)] {
        let p = json!({"bandwidth": "416Kbps", "ingress": ingress, "ack_filter": "aggressive"});
        let mut q = make(p, 100_000_000);
        let (mut pool, mut ev) = (PacketPool::new(), Vec::new());
        for k in 1..=2 {
            let id = pool.alloc(&ack(0, 100 * k, 0));
            q.enqueue(
                id,
                &mut QueueCtx {
                    pool: &mut pool,
                    events: &mut ev,
                },
                0,
            );
        }
        assert_eq!(ev, [QueueEvent::Drop(0, DropReason::AckFilter)]);
        assert!(q.shaper.next.abs_diff(next) <= 1, "{}", q.shaper.next);
    }
}
