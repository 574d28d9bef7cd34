//! BLUE (Feng, Kandlur, Saha & Shin, IEEE/ACM ToN 2002): a single marking/dropping probability
//! p_m driven by packet loss and link idleness rather than queue length.
//!
//! * Buffer overflow (tail drop of the arrival): p_m += increment, at most once per freeze_time.
//! * Link idle: p_m -= decrement, at most once per freeze_time. The idle event is taken at a
//!   dequeue that empties the queue or finds it empty (the link goes idle once that packet is sent
//!   unless another arrives); the engine gives no separate idle callback.
//! * Each arrival is dropped (or CE-marked if ECT and `ecn`) with probability p_m.
//! * Defaults: increment 0.0025, decrement 0.00025, freeze_time 100 ms (the paper's ECN
//!   experiments); limit = the link's limit, else 1000 packets. The paper's optional
//!   queue-length trigger for increases is not implemented.

use super::util::{merge, Buffer, PacketQueue};
use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::PktId;
use crate::params::{check_range, check_time, read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{as_dur, Dur, Limit, Time, MS, SEC};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub struct Blue {
    queue: PacketQueue,
    limit: Limit,
    p_m: f64,
    inc: f64,
    dec: f64,
    freeze: Time,
    last_update: Option<Time>,
    ecn: bool,
    rng: Rng,
    early: u64,
    marks: u64,
}

impl Blue {
    fn may_update(&self, now: Time) -> bool {
        self.last_update
            .is_none_or(|t| now.saturating_sub(t) > self.freeze)
    }
    fn increase(&mut self, now: Time) {
        if self.may_update(now) {
            self.p_m = (self.p_m + self.inc).min(1.0);
            self.last_update = Some(now);
        }
    }
    fn decrease(&mut self, now: Time) {
        if self.may_update(now) {
            self.p_m = (self.p_m - self.dec).max(0.0);
            self.last_update = Some(now);
        }
    }
}

impl Qdisc for Blue {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        let size = ctx.size(id);
        if self.queue.exceeds(self.limit, size as u64) {
            self.increase(now);
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        if self.rng.bernoulli(self.p_m) {
            if self.ecn && ctx.mark(id) {
                self.marks += 1;
            } else {
                self.early += 1;
                ctx.drop_packet(id, DropReason::Early);
                return;
            }
        }
        self.queue.push_back(id, size);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        let Some(id) = self.queue.pop_front(ctx) else {
            self.decrease(now);
            return None;
        };
        if self.queue.is_empty() {
            self.decrease(now);
        }
        Some(id)
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn backlog_packets(&self) -> u64 {
        self.queue.len() as u64
    }

    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("p_m", self.p_m),
            ("early_drops", self.early as f64),
            ("ecn_marks", self.marks as f64),
        ]
    }
}

/// BLUE's keys (defaults: the paper's ECN experiments).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BlueParams {
    /// p_m step up on buffer overflow (d1); default 0.0025
    increment: f64,
    /// p_m step down on link idle (d2); default 0.00025
    decrement: f64,
    /// minimum time between p_m changes; default 100ms
    #[serde(with = "as_dur")]
    #[schemars(with = "Dur")]
    freeze_time: Time,
    /// CE-mark ECT packets instead of dropping; default off
    ecn: bool,
}

const DEFAULTS: BlueParams = BlueParams {
    increment: 0.0025,
    decrement: 0.00025,
    freeze_time: 100 * MS,
    ecn: false,
};

impl Params<LinkInfo> for BlueParams {
    fn finish(&mut self, _link: &LinkInfo) -> Result<(), String> {
        check_range("increment", self.increment, 0.0, 1.0)?;
        check_range("decrement", self.decrement, 0.0, 1.0)?;
        check_time("freeze_time", self.freeze_time, 0, 100 * SEC)
    }
}

fn build(params: &Value, link: &LinkInfo, rng: Rng) -> Built<Blue> {
    let buffer = read(params, Buffer::default(), link)?;
    let p = read(params, DEFAULTS, link)?;
    let q = Blue {
        queue: PacketQueue::default(),
        limit: buffer.limit(),
        p_m: 0.0,
        inc: p.increment,
        dec: p.decrement,
        freeze: p.freeze_time,
        last_update: None,
        ecn: p.ecn,
        rng,
        early: 0,
        marks: 0,
    };
    Ok((q, merge(written(&buffer), written(&p))))
}

pub static INFO: [QdiscInfo<Blue>; 1] = [QdiscInfo {
    name: "blue",
    summary: "BLUE: marking probability raised on overflow, lowered on idle link",
    reference: "Feng, Kandlur, Saha & Shin, IEEE/ACM ToN 2002",
    params: &[Group::of::<Buffer>(), Group::of::<BlueParams>()],
    build,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;
    use serde_json::json;

    fn make(p: Value) -> Blue {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        };
        build(&p, &link, Rng::from_seed(4)).unwrap().0
    }

    #[test]
    fn overflow_raises_and_idle_lowers_with_freeze() {
        let mut q = make(json!({"limit": "2p", "increment": 0.1, "decrement": 0.01}));
        let mut h = Harness::new();
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0);
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 0); // overflow -> 0.1
        assert!((q.p_m - 0.1).abs() < 1e-12);
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 50 * MS); // within the freeze time
        assert!((q.p_m - 0.1).abs() < 1e-12);
        h.enqueue(&mut q, 0, 1500, Ecn::NotEct, 101 * MS);
        assert!((q.p_m - 0.2).abs() < 1e-12);
        h.dequeue(&mut q, 150 * MS);
        h.dequeue(&mut q, 150 * MS); // empties: idle, but frozen
        assert!((q.p_m - 0.2).abs() < 1e-12);
        assert_eq!(h.dequeue(&mut q, 202 * MS), None);
        assert!((q.p_m - 0.19).abs() < 1e-12);
    }

    #[test]
    fn drops_or_marks_with_p_m() {
        let mut q = make(json!({"ecn": true}));
        q.p_m = 0.3;
        let mut h = Harness::new();
        for _ in 0..10_000 {
            h.enqueue(&mut q, 0, 100, Ecn::Ect0, 0);
            h.enqueue(&mut q, 0, 100, Ecn::NotEct, 0);
            h.dequeue(&mut q, 0);
            h.dequeue(&mut q, 0);
            q.p_m = 0.3;
            q.last_update = Some(0);
        }
        let m = h.marks.len() as f64 / 10_000.0;
        let d = h.drops.len() as f64 / 10_000.0;
        assert!((m - 0.3).abs() < 0.02 && (d - 0.3).abs() < 0.02, "{m} {d}");
    }
}
