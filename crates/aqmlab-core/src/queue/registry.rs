//! The registry of disciplines: the `qdiscs!` list (one line per discipline type), the
//! [`AnyQdisc`] enum it declares for static dispatch on the hot path, and the construction of a
//! discipline by name from a scenario's `qdisc` entry (with the unknown-key check, and
//! [`ExternalQdiscs`] for disciplines built outside the core). The trait and the types every
//! discipline's file shares are in `mod.rs`; no discipline's file uses this one.

use super::{
    blue, cake, choke, codel, drr, dualpi2, fifo, fq_codel, fq_pie, htb, pfifo_fast, pie, red, sch_fq, sfq,
    sfq_codel, Built, LinkInfo, Qdisc, QdiscInfo, QueueCtx, ShaperState, LINK_KEY,
};
use crate::packet::PktId;
use crate::params::{self, Group, ParamDoc};
use crate::rng::Rng;
use crate::units::Time;
use serde_json::Value;

/// A built discipline of any registered type and its resolved parameters, or an error naming
/// the key.
pub type BuildResult = Built<AnyQdisc>;

/// A registered discipline, whichever its type: its entry's description and keys, and its
/// constructor of an [`AnyQdisc`].
#[derive(Clone, Copy)]
pub struct Registered {
    pub name: &'static str,
    pub summary: &'static str,
    pub reference: &'static str,
    pub params: &'static [Group],
    entry: &'static (dyn Build + Sync),
}

/// An entry's constructor with the discipline put in its [`AnyQdisc`] variant.
trait Build {
    fn build(&self, params: &Value, link: &LinkInfo, rng: Rng) -> BuildResult;
}

impl<Q: Into<AnyQdisc>> Build for QdiscInfo<Q> {
    fn build(&self, params: &Value, link: &LinkInfo, rng: Rng) -> BuildResult {
        (self.build)(params, link, rng).map(|(q, resolved)| (q.into(), resolved))
    }
}

impl Registered {
    fn of<Q: Into<AnyQdisc>>(info: &'static QdiscInfo<Q>) -> Registered {
        Registered {
            name: info.name,
            summary: info.summary,
            reference: info.reference,
            params: info.params,
            entry: info,
        }
    }

    /// Every key the discipline's table accepts.
    pub fn keys(&self) -> Vec<&'static str> {
        params::group_keys(self.params)
    }

    /// Every key with its help, in the order `aqmlab list qdiscs NAME` prints them.
    pub fn docs(&self) -> Vec<ParamDoc> {
        params::group_docs(self.params)
    }

    /// Builds the discipline (its table's keys are not checked: see [`build`]).
    pub fn build(&self, params: &Value, link: &LinkInfo, rng: Rng) -> BuildResult {
        self.entry.build(params, link, rng)
    }
}

/// Declares the closed set of disciplines from one list, one line per discipline type:
/// `Variant => file::Type`, where `file::INFO` holds its registry entries (name, summary,
/// reference, parameter groups, constructor). From the list come the enum for static dispatch on
/// the hot path (plus `Htb`, a hop's shaper over its qdisc, and `External`, a discipline built
/// outside the core or a WiFi hop's per-AC children, `mq`) and the registry, in list
/// order. Adding a discipline = one file + its `pub mod` in `mod.rs` + one line in the list; the
/// engine is untouched.
macro_rules! qdiscs {
    ($($variant:ident => $file:ident :: $ty:ident),* $(,)?) => {
        /// Any discipline, dispatched statically.
        pub enum AnyQdisc { $($variant($file::$ty),)* Htb(Box<htb::Htb<AnyQdisc>>), External(Box<dyn Qdisc>) }

        /// Calls `$call` on the discipline inside `$q`, whichever variant it is.
        macro_rules! each {
            ($q:expr, $d:ident => $call:expr) => {
                match $q {
                    $(AnyQdisc::$variant($d) => $call,)*
                    AnyQdisc::Htb($d) => $call,
                    AnyQdisc::External($d) => $call,
                }
            };
        }

        $(impl From<$file::$ty> for AnyQdisc {
            fn from(q: $file::$ty) -> AnyQdisc {
                AnyQdisc::$variant(q)
            }
        })*

        /// Every registered discipline, in the order `aqmlab list qdiscs` prints them (the
        /// list's; a file may register several names).
        pub fn all() -> Vec<Registered> {
            let mut out = Vec::new();
            $(out.extend($file::INFO.iter().map(Registered::of));)*
            out
        }
    };
}

qdiscs! {
    Fifo => fifo::Fifo,
    Codel => codel::Codel,
    FqCodel => fq_codel::FqCodel,
    Pie => pie::Pie,
    FqPie => fq_pie::FqPie,
    Red => red::Red,
    Choke => choke::Choke,
    Blue => blue::Blue,
    Sfq => sfq::Sfq,
    Drr => drr::Drr,
    SfqCodel => sfq_codel::SfqCodel,
    PfifoFast => pfifo_fast::PfifoFast,
    DualPi2 => dualpi2::DualPi2,
    Cake => cake::Cake,
    SchFq => sch_fq::SchFq,
}

impl Qdisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, id: PktId, ctx: &mut QueueCtx, now: Time) {
        each!(self, q => q.enqueue(id, ctx, now))
    }
    #[inline]
    fn dequeue(&mut self, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        each!(self, q => q.dequeue(ctx, now))
    }
    #[inline]
    fn backlog_bytes(&self) -> u64 {
        each!(self, q => q.backlog_bytes())
    }
    #[inline]
    fn backlog_packets(&self) -> u64 {
        each!(self, q => q.backlog_packets())
    }
    #[inline(always)]
    fn next_timer(&self) -> Option<Time> {
        each!(self, q => q.next_timer())
    }
    fn on_timer(&mut self, ctx: &mut QueueCtx, now: Time) {
        each!(self, q => q.on_timer(ctx, now))
    }
    fn diagnostics(&self) -> Vec<(&'static str, f64)> {
        each!(self, q => q.diagnostics())
    }
    fn flow_queues(&self) -> bool {
        each!(self, q => q.flow_queues())
    }
    fn paces_departures(&self) -> bool {
        each!(self, q => q.paces_departures())
    }
    fn shaped_rate(&self) -> Option<u64> {
        each!(self, q => q.shaped_rate())
    }
    fn shaper_state(&mut self, s: ShaperState) {
        each!(self, q => q.shaper_state(s))
    }
    fn subqueues(&self) -> &'static [u8] {
        each!(self, q => q.subqueues())
    }
    fn tx_queues(&self) -> usize {
        each!(self, q => q.tx_queues())
    }
    fn dequeue_tx_queue(&mut self, k: usize, ctx: &mut QueueCtx, now: Time) -> Option<PktId> {
        each!(self, q => q.dequeue_tx_queue(k, ctx, now))
    }
}

/// Builds the disciplines implemented outside the core, dispatched dynamically through
/// [`AnyQdisc::External`] (crates/aqmlab-py: a discipline written as a Python class). The built-in
/// disciplines keep their static dispatch; the core stays free of any foreign runtime.
pub trait ExternalQdiscs {
    /// Whether `kind` is one of its kinds (the registry's names take precedence).
    fn provides(&self, kind: &str) -> bool;
    /// Builds `kind` with `params` for the hop at `key`; returns it with its resolved parameters.
    fn build(
        &self,
        kind: &str,
        params: &Value,
        link: &LinkInfo,
        key: &str,
    ) -> Result<(Box<dyn Qdisc>, Value), String>;
}

pub fn lookup(name: &str) -> Option<Registered> {
    all().into_iter().find(|i| i.name == name)
}

/// Builds the discipline `kind` with `params` (a JSON object without `kind`). `key` is where the
/// qdisc sits in the scenario (e.g. "topology.down.qdisc"); errors name it and the parameter.
pub fn build(kind: &str, params: &Value, link: &LinkInfo, rng: Rng, key: &str) -> BuildResult {
    build_with(kind, params, link, rng, key, None)
}

/// [`build`], with `ext` building the kinds the registry does not hold.
pub fn build_with(
    kind: &str,
    params: &Value,
    link: &LinkInfo,
    rng: Rng,
    key: &str,
    ext: Option<&dyn ExternalQdiscs>,
) -> BuildResult {
    if let Some(ext) = ext.filter(|e| lookup(kind).is_none() && e.provides(kind)) {
        let (q, resolved) = ext.build(kind, params, link, key)?;
        return Ok((AnyQdisc::External(q), resolved));
    }
    let info = lookup(kind).ok_or_else(|| {
        let names: Vec<&str> = all().iter().map(|i| i.name).collect();
        format!("{key}: unknown qdisc {kind:?}; allowed: {}", names.join(", "))
    })?;
    params::check_keys(params, info.name, info.params).map_err(|e| format!("{key}.{e}"))?;
    info.build(params, link, rng)
        .map_err(|e| match e.strip_prefix(LINK_KEY) {
            // a key of the hop itself (its rate, its limit), which the user typed next to `qdisc`
            Some(rest) => format!("{}.{rest}", key.strip_suffix(".qdisc").unwrap_or(key)),
            None => format!("{key}.{e}"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Limit;
    use serde_json::json;

    fn link() -> LinkInfo {
        LinkInfo {
            rate_bps: 10_000_000,
            mtu: 1500,
            limit: None,
            wifi: false,
        }
    }

    fn err(kind: &str, params: Value, link: &LinkInfo) -> String {
        match build(kind, &params, link, Rng::from_seed(1), "topology.down.qdisc") {
            Ok(_) => panic!("{kind} {params} was accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn unknown_keys_list_every_key_the_discipline_accepts() {
        // a typo among the shared CoDel / PIE keys used to list only the discipline's own keys
        // ("unknown field `targte`, expected `limit`")
        let cases: [(&str, &[&str]); 4] = [
            (
                "codel",
                &["limit", "target", "interval", "variant", "ecn", "ce_threshold"],
            ),
            (
                "pie",
                &["limit", "target", "t_update", "alpha", "beta", "profile"],
            ),
            (
                "fq_codel",
                &[
                    "flows",
                    "quantum",
                    "limit",
                    "memory_limit",
                    "target",
                    "interval",
                    "ecn",
                ],
            ),
            ("fq_pie", &["flows", "target", "alpha"]),
        ];
        for (kind, keys) in cases {
            let e = err(kind, json!({"targte": "5ms"}), &link());
            assert!(e.starts_with("topology.down.qdisc.targte: "), "{e}");
            assert!(e.contains("did you mean `target`"), "{e}");
            let allowed = e.split("allowed: ").nth(1).expect(&e);
            let listed: Vec<&str> = allowed.split(", ").collect();
            for k in keys {
                assert!(listed.contains(k), "{kind}: {k} missing from {e}");
            }
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn every_declared_key_is_parsed_and_every_resolved_key_declared() {
        // the key list of `aqmlab list qdiscs` is the one the unknown-key check uses: each listed
        // key must reach the discipline's parser, and the resolved table (what `validate` prints)
        // must only hold listed keys, so that it can be fed back in
        let mut problems = Vec::new();
        for info in all() {
            let (_, res) = build(info.name, &json!({}), &link(), Rng::from_seed(1), "q")
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            for k in res.as_object().unwrap().keys() {
                if !info.keys().contains(&k.as_str()) {
                    problems.push(format!("{}: resolved key {k} is not declared", info.name));
                }
            }
            // and the resolved table writes every declared key out (every default stored)
            for k in info.keys() {
                if res.get(k).is_none() {
                    problems.push(format!("{}: declared key {k} is not resolved", info.name));
                }
            }
            for d in info.docs() {
                if d.help.is_empty() {
                    problems.push(format!("{}: key {} has no help", info.name, d.name));
                }
            }
            if let Err(e) = build(info.name, &res, &link(), Rng::from_seed(1), "q") {
                problems.push(format!("{}: its resolved table is rejected: {e}", info.name));
            }
            for k in info.keys() {
                // a table is the wrong type for every key: the parser must say so
                let e = err(info.name, json!({ k: {"x": [1]} }), &link());
                if e.contains("unknown parameter") || e.contains("unknown field") {
                    problems.push(format!("{}: declared key {k} is not parsed: {e}", info.name));
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn wrong_types_say_what_was_given_and_what_is_allowed() {
        // was "invalid type: integer `5`, expected string or map"
        let e = err("codel", json!({"recall": 5}), &link());
        assert_eq!(
            e,
            "topology.down.qdisc.recall: 5 is not allowed; allowed: rfc, linux35, ns2, sfqcodel"
        );
        let e = err("pie", json!({"profile": true}), &link());
        assert!(
            e.starts_with("topology.down.qdisc.profile: true is not allowed; allowed: rfc8033, "),
            "{e}"
        );
        let e = err("codel", json!({"ecn": 1}), &link());
        assert_eq!(e, "topology.down.qdisc.ecn: 1 is not allowed; allowed: a boolean");
        let e = err("codel", json!({"recall": "bogus"}), &link());
        assert_eq!(
            e,
            "topology.down.qdisc.recall: \"bogus\" is not allowed; allowed: rfc, linux35, ns2, sfqcodel"
        );
    }

    #[test]
    fn ranges_are_printed_in_units() {
        let e = err("codel", json!({"target": "20s"}), &link());
        assert_eq!(
            e,
            "topology.down.qdisc.target: 20s is out of range; allowed 1ns to 10s"
        );
        let e = err("pie", json!({"t_update": "11s"}), &link());
        assert!(e.ends_with("11s is out of range; allowed 1ns to 10s"), "{e}");
        let e = err("codel", json!({"mtu": "70000B"}), &link());
        assert!(e.ends_with("70000B is out of range; allowed 0B to 65536B"), "{e}");
        let e = err("codel", json!({"target": "200ms", "interval": "100ms"}), &link());
        assert!(e.contains("target: 200ms") && e.contains("100ms"), "{e}");
    }

    #[test]
    fn errors_from_the_hops_own_keys_name_them() {
        // the hop's `limit = "0p"` was reported as topology.down.qdisc.limit
        let l = LinkInfo {
            limit: Some(Limit::Packets(0)),
            ..link()
        };
        for kind in ["pfifo", "codel", "red", "pie"] {
            let e = err(kind, json!({}), &l);
            assert_eq!(
                e, "topology.down.limit: 0p is not allowed; allowed: at least 1p",
                "{kind}"
            );
        }
        let e = err("codel", json!({"limit": "0p"}), &link());
        assert!(e.starts_with("topology.down.qdisc.limit: 0p"), "{e}");
        // an extreme rate was reported as RED's derived min_th
        let fast = LinkInfo {
            rate_bps: 10_000_000_000_000_000,
            ..link()
        };
        let e = err("red", json!({}), &fast);
        assert!(
            e.starts_with("topology.down.rate: 10000000Gbps is not allowed"),
            "{e}"
        );
        assert!(e.contains("allowed: a rate up to"), "{e}");
        let e = err(
            "red",
            json!({"target_delay": "100s"}),
            &LinkInfo {
                rate_bps: 1_000_000_000_000,
                ..link()
            },
        );
        assert!(e.starts_with("topology.down.qdisc.target_delay: 100s"), "{e}");
    }
}
