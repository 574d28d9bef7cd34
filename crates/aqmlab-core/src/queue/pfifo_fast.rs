//! `pfifo_fast`: Linux's default three-band priority FIFO (net/sched/sch_generic.c), the FIFO
//! baseline of goodbadwifi2015.
//!
//! A packet's band is priomap[skb->priority], with the default priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1
//! 1 1 (TC_PRIO_MAX + 1 entries), and where skb->priority comes from is the key `priority`:
//! - "tos": from the IP TOS byte, as Linux derives it for a packet it sends or forwards:
//!   ip_tos2prio[(tos & 0x1E) >> 1] (include/net/route.h rt_tos2priority, used by the socket's
//!   IP_TOS and by ip_forward; net/ipv4/route.c ip_tos2prio: best effort 0, filler 1, bulk 2,
//!   interactive 6, interactive bulk 4, from the RFC 1349 TOS bits);
//! - "wmm": the 802.1d user priority mac80211 writes into skb->priority before the root qdisc
//!   sees the packet (net/mac80211/wme.c `ieee80211_select_queue`, called from
//!   `__dev_queue_xmit`'s `netdev_pick_tx` before the enqueue; `cfg80211_classify8021d`: the
//!   DSCP's top three bits, `packet::user_priority`): CS1 -> 1 -> band 2, CS5 and EF -> 5 ->
//!   band 2, best effort -> 0 -> band 1. The default on a WiFi hop (any mac80211 interface, as
//!   goodbadwifi2015's client and access point), "tos" elsewhere.
//!
//! Band 0 is served first, then 1, then 2 (strict priority). One limit for all bands together
//! (the device's txqueuelen, 1000 packets by default); an arrival beyond it is dropped.
//!
//! Under "tos" the TOS byte is DSCP << 2, so most DiffServ marks fall on the old TOS bits by
//! accident: EF
//! (46, TOS 0xB8) lands in band 1 with best effort, AF41 (34, 0x88) in band 2, and only a DSCP
//! with the "low delay" bit (e.g. 4, TOS 0x10) reaches band 0.

use super::{Built, DropReason, LinkInfo, Qdisc, QdiscInfo, QueueCtx};
use crate::packet::{user_priority, PktId};
use crate::params::{read, written, Group, Params};
use crate::rng::Rng;
use crate::units::{Limit, LimitSpec, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;

/// Linux's ip_tos2prio (TC_PRIO_* values), indexed by (tos & 0x1E) >> 1.
pub const TOS2PRIO: [u8; 16] = [0, 1, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4];
/// Linux's default priomap (sch_generic.c prio2band), indexed by priority.
pub const PRIOMAP: [u8; 16] = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

/// Where a packet's priority comes from (the key `priority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// rt_tos2priority of the TOS byte (a packet the host sends or forwards).
    #[default]
    Tos,
    /// mac80211's 802.1d user priority (cfg80211_classify8021d), on a WiFi interface.
    Wmm,
}

/// The band of a packet with this DSCP under `priomap`, its priority taken as `from` says.
pub fn band(dscp: u8, priomap: &[u8; 16], from: Priority) -> usize {
    let prio = match from {
        Priority::Tos => TOS2PRIO[(((dscp << 2) & 0x1E) >> 1) as usize],
        Priority::Wmm => user_priority(dscp),
    };
    priomap[prio as usize] as usize
}

/// pfifo_fast's keys (resolved in [`build`]: the limit depends on whether it was given).
#[derive(Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Config {
    /// packets in all bands together (txqueuelen); default the direction's limit, else 1000p
    #[schemars(with = "LimitSpec")]
    limit: Option<LimitSpec>,
    /// 16 bands (0-2) by Linux priority; default Linux's 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1
    #[schemars(with = "[u8; 16]")]
    priomap: Option<[u8; 16]>,
    /// where a packet's priority comes from: "tos" (the IP TOS byte, as a host sends or forwards
    /// it) or "wmm" (mac80211's 802.1d priority on a WiFi interface); default "wmm" on a WiFi
    /// hop, "tos" elsewhere
    priority: Option<Priority>,
}

impl Params<LinkInfo> for Config {}

pub struct PfifoFast {
    bands: [VecDeque<PktId>; 3],
    /// `band` of each of the 64 DSCPs under the resolved priomap and priority, worked out once.
    band_of: [u8; 64],
    limit: u64,
    bytes: u64,
}

impl Qdisc for PfifoFast {
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, _now: Time) {
        if self.backlog_packets() >= self.limit {
            ctx.drop_packet(id, DropReason::Overlimit);
            return;
        }
        self.bytes += ctx.size(id) as u64;
        self.bands[self.band_of[(ctx.dscp(id) & 0x3f) as usize] as usize].push_back(id);
    }

    fn dequeue(&mut self, ctx: &mut QueueCtx, _now: Time) -> Option<PktId> {
        let id = self.bands.iter_mut().find_map(|b| b.pop_front())?;
        self.bytes -= ctx.size(id) as u64;
        Some(id)
    }

    fn backlog_bytes(&self) -> u64 {
        self.bytes
    }

    fn backlog_packets(&self) -> u64 {
        self.bands.iter().map(|b| b.len() as u64).sum()
    }
}

fn build(params: &Value, link: &LinkInfo) -> Built<PfifoFast> {
    let mut cfg = read(params, Config::default(), link)?;
    let limit = match super::util::resolve_limit(cfg.limit, link)? {
        Limit::Packets(p) => p,
        Limit::Bytes(b) if cfg.limit.is_none() => (b / link.mtu as u64).max(1), // the hop's, at the MTU
        Limit::Bytes(_) => return Err("limit: pfifo_fast counts packets, e.g. \"1000p\"".into()),
    };
    let priomap = cfg.priomap.unwrap_or(PRIOMAP);
    if let Some(b) = priomap.iter().find(|&&b| b > 2) {
        return Err(format!(
            "priomap: band {b} is not allowed; allowed: 0, 1 or 2 for each of the 16 priorities"
        ));
    }
    let priority = cfg
        .priority
        .unwrap_or(if link.wifi { Priority::Wmm } else { Priority::Tos });
    cfg.limit = Some(LimitSpec(Limit::Packets(limit)));
    cfg.priomap = Some(priomap);
    cfg.priority = Some(priority);
    let q = PfifoFast {
        bands: Default::default(),
        band_of: std::array::from_fn(|d| band(d as u8, &priomap, priority) as u8),
        limit,
        bytes: 0,
    };
    Ok((q, written(&cfg)))
}

pub static INFO: [QdiscInfo<PfifoFast>; 1] = [QdiscInfo {
    name: "pfifo_fast",
    summary: "Linux's default three-band priority FIFO, bands from the IP TOS bits (mac80211's 802.1d priority on a WiFi hop)",
    reference: "Linux sch_generic.c (pfifo_fast), route.c ip_tos2prio, mac80211 wme.c ieee80211_select_queue",
    params: &[Group::of::<Config>()],
    build: |p, l, _: Rng| build(p, l),
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;

    #[test]
    fn dscp_marks_map_to_linux_bands() {
        // EF 46 -> TOS 0xB8 -> index 12 -> interactive bulk (4) -> band 1; AF41 34 -> 0x88 ->
        // index 4 -> bulk (2) -> band 2; CS1 8 -> 0x20 -> index 0 -> band 1; DSCP 4 -> TOS 0x10
        // (low delay) -> index 8 -> interactive (6) -> band 0; best effort -> band 1.
        for (dscp, b) in [(46, 1), (34, 2), (8, 1), (4, 0), (0, 1), (2, 2)] {
            assert_eq!(band(dscp, &PRIOMAP, Priority::Tos), b, "dscp {dscp}");
        }
        // On a WiFi interface the 802.1d priority (DSCP >> 3) indexes the priomap: RRUL's CS0
        // -> 0 -> band 1, CS1 -> 1 -> band 2, CS5 (40) and EF -> 5 -> band 2; CS6 (48) -> 6 -> 0.
        for (dscp, b) in [(0, 1), (8, 2), (40, 2), (46, 2), (48, 0), (34, 1)] {
            assert_eq!(band(dscp, &PRIOMAP, Priority::Wmm), b, "dscp {dscp}");
        }
    }

    #[test]
    fn a_wifi_hop_takes_mac80211s_priority_unless_told() {
        // ieee80211_select_queue sets skb->priority on every mac80211 interface; elsewhere the
        // TOS byte's rt_tos2priority stands. An explicit key wins on either.
        for (wifi, given, want) in [
            (false, None, "tos"),
            (true, None, "wmm"),
            (true, Some("tos"), "tos"),
        ] {
            let link = LinkInfo {
                rate_bps: 10_000_000,
                mtu: 1500,
                limit: None,
                wifi,
            };
            let params = given.map_or(serde_json::json!({}), |g| serde_json::json!({ "priority": g }));
            let (q, resolved) = build(&params, &link).unwrap();
            assert_eq!(resolved["priority"], want);
            let cs1_band = if want == "wmm" { 2 } else { 1 };
            assert_eq!(q.band_of[8], cs1_band);
        }
    }

    #[test]
    fn strict_priority_and_one_shared_limit() {
        let link = LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: Some(Limit::Packets(3)),
            wifi: false,
        };
        let (q, _) = build(&serde_json::json!({}), &link).unwrap();
        let mut q = q;
        let mut h = Harness::new();
        h.dscp = 34; // band 2
        let bulk = h.enqueue(&mut q, 0, 1000, Ecn::NotEct, 0);
        h.dscp = 0; // band 1
        let be = h.enqueue(&mut q, 1, 1000, Ecn::NotEct, 0);
        h.dscp = 4; // band 0
        let low = h.enqueue(&mut q, 2, 1000, Ecn::NotEct, 0);
        let late = h.enqueue(&mut q, 2, 1000, Ecn::NotEct, 0); // the fourth: over the shared limit
        assert!(h.was_dropped(late));
        assert_eq!(q.backlog_bytes(), 3000);
        let order: Vec<_> = (0..3).map(|_| h.dequeue(&mut q, 0).unwrap()).collect();
        assert_eq!(order, [low, be, bulk]);
    }
}
