//! Cross-discipline checks run on every registry entry: default builds, unknown keys rejected,
//! packet/byte conservation under random traffic with timers, no packet both dropped and sent,
//! and determinism (same seed, same decisions).

use super::registry::{all, AnyQdisc};
use super::testutil::Harness;
use super::*;
use crate::packet::Ecn;
use crate::units::{tx_time, MS, SEC};
use serde_json::json;
use std::collections::HashSet;

fn link() -> LinkInfo {
    LinkInfo {
        rate_bps: 10_000_000,
        mtu: 1500,
        limit: None,
        wifi: false,
    }
}

/// Drives `q` with bursty random traffic for `secs` and checks the invariants; returns the trace
/// of (event kind, packet id) for determinism checks.
fn drive(q: &mut AnyQdisc, seed: u64, secs: u64) -> Vec<(u8, PktId)> {
    let mut h = Harness::new();
    let mut rng = Rng::from_seed(seed);
    let mut t: Time = 0;
    let mut link_free: Time = 0;
    let (mut in_p, mut in_b, mut out_p, mut out_b) = (0u64, 0u64, 0u64, 0u64);
    let mut sent = HashSet::new();
    let mut trace = Vec::new();
    let end = secs * SEC;
    while t < end {
        // On/off load: 1.6x the link rate for 2 s, then 0.3x for 1 s.
        let heavy = (t / SEC) % 3 < 2;
        let mean_gap = if heavy { 0.5 } else { 2.6 } * MS as f64;
        t += rng.exponential(mean_gap) as Time + 1;
        while let Some(d) = q.next_timer() {
            if d > t {
                break;
            }
            h.timer(q, d);
        }
        while link_free <= t {
            let now = link_free;
            match h.dequeue(q, now) {
                Some(id) => {
                    let s = h.pool.get(id).size as u64;
                    assert!(sent.insert(id), "sent twice");
                    out_p += 1;
                    out_b += s;
                    trace.push((0, id));
                    link_free = now + tx_time(s, 10_000_000);
                }
                None => {
                    link_free = t;
                    break;
                }
            }
        }
        let flow = rng.below(8) as u32;
        let size = [64u32, 576, 1500, 1500][rng.below(4) as usize];
        let ecn = if flow.is_multiple_of(2) {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        };
        h.enqueue(q, flow, size, ecn, t);
        in_p += 1;
        in_b += size as u64;
    }
    let mut dropped = HashSet::new();
    let mut drop_b = 0;
    for &(id, r) in &h.drops {
        assert!(dropped.insert(id), "dropped twice");
        assert!(!sent.contains(&id), "dropped after being sent");
        drop_b += h.pool.get(id).size as u64;
        trace.push((1 + r as u8, id));
    }
    assert_eq!(
        in_p,
        out_p + h.drops.len() as u64 + q.backlog_packets(),
        "packet conservation"
    );
    assert_eq!(in_b, out_b + drop_b + q.backlog_bytes(), "byte conservation");
    // Drain completely.
    let mut now = end;
    while q.backlog_packets() > 0 {
        now += MS;
        if h.dequeue(q, now).is_none() && q.backlog_packets() > 0 {
            h.drops.clear();
        }
    }
    assert_eq!(q.backlog_bytes(), 0);
    trace
}

#[test]
fn every_discipline_builds_conserves_and_is_deterministic() {
    for info in all() {
        let (mut a, res) = info
            .build(&json!({}), &link(), Rng::from_seed(1))
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert!(res.is_object(), "{}", info.name);
        // The resolved table builds the same discipline again.
        let (mut b, res2) = info
            .build(&res, &link(), Rng::from_seed(1))
            .unwrap_or_else(|e| panic!("{}: {e}", info.name));
        assert_eq!(res, res2, "{}", info.name);
        let ta = drive(&mut a, 7, 12);
        let tb = drive(&mut b, 7, 12);
        assert_eq!(ta, tb, "{} is not deterministic", info.name);
        // unknown keys are rejected by the registry's key check (`check_keys`, from the declared keys)
        assert!(
            super::registry::build(
                info.name,
                &json!({"no_such_key": 1}),
                &link(),
                Rng::from_seed(1),
                "q"
            )
            .is_err(),
            "{}",
            info.name
        );
        assert!(
            !a.diagnostics().is_empty() || info.name.contains("fifo"),
            "{}",
            info.name
        );
    }
}

#[test]
fn registry_names_are_unique_and_complete() {
    let names: Vec<_> = all().iter().map(|i| i.name).collect();
    for n in [
        "codel",
        "fq_codel",
        "fq_nocodel",
        "pie",
        "fq_pie",
        "red",
        "ared",
        "hred",
        "choke",
        "blue",
        "sfq",
        "drr",
        "sfq_codel",
    ] {
        assert!(names.contains(&n), "{n} missing");
    }
    let set: HashSet<_> = names.iter().collect();
    assert_eq!(set.len(), names.len());
}
