//! The congestion controllers a flow's `cc` may name, listed once in the `ccs!` macro, and the
//! construction by name: as `queue/registry.rs` is for the disciplines. Each controller's file
//! holds its registry entries (`INFO`: name, summary, reference, its `cc_params` group,
//! constructor); from the list come the names (`aqmlab schema`'s `cc` values, the key check of
//! `cc`), the unknown-key check and help of `cc_params` (`aqmlab list ccs`), its schema, and the
//! constructor dispatch ([`make_cc`]).

use super::{
    bbr, bbr3, cubic, cubic_2_6_22, dctcp, ledbat, nice, prague, reno, tcp_lp, CcContext, CcInfo,
    CongestionControl, Hystart,
};
use crate::params::check_keys;
use serde_json::Value;

/// Declares the controllers from one list, one file per line, whose `INFO` holds its entries
/// (a file may register several names: `reno.rs` registers `newreno` and `reno`), in the order
/// of the names list. Adding a controller = one file + its `pub mod` + one line here.
macro_rules! ccs {
    ($($file:ident),* $(,)?) => {
        /// Every list entry's registry entries.
        static ENTRIES: &[&[CcInfo]] = &[$(&$file::INFO),*];
    };
}

ccs! {
    reno,
    cubic,
    cubic_2_6_22,
    ledbat,
    tcp_lp,
    nice,
    dctcp,
    prague,
    bbr,
    bbr3,
}

/// Every registered controller, in the list's order.
pub fn all() -> Vec<&'static CcInfo> {
    ENTRIES.iter().flat_map(|e| e.iter()).collect()
}

/// The names a flow's `cc` accepts, in the list's order.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|i| i.name).collect()
}

/// The entry called `name` (without building the list: a sender asks at each handshake).
pub fn lookup(name: &str) -> Option<&'static CcInfo> {
    ENTRIES.iter().flat_map(|e| e.iter()).find(|i| i.name == name)
}

/// Whether the controller `name` runs only over AccECN feedback ([`CcInfo::needs_accecn`]);
/// false for a name not registered.
pub fn needs_accecn(name: &str) -> bool {
    lookup(name).is_some_and(|i| i.needs_accecn)
}

/// Builds the controller `name` with its `cc_params` table (JSON null or a table: over the
/// defaults) in `ctx`; returns it with the table resolved (every default written out). Errors
/// name the parameter, the value and what is allowed.
pub fn build(name: &str, params: &Value, ctx: &CcContext) -> super::CcBuild {
    let info = lookup(name).ok_or_else(|| {
        format!(
            "unknown congestion controller {name:?}; allowed: {}",
            names().join(", ")
        )
    })?;
    check_keys(params, info.name, info.params)?;
    (info.build)(params, ctx)
}

/// A controller's `cc_params` table resolved (see [`build`]), for a flow entry's resolved keys.
pub fn cc_params(name: &str, params: &Value, ctx: &CcContext) -> Result<Value, String> {
    build(name, params, ctx).map(|(_, resolved)| resolved)
}

/// Builds the controller called `name` with its `cc_params` (see [`build`]).
pub fn make_cc(
    name: &str,
    mss: u32,
    hystart: Hystart,
    params: &Value,
) -> Result<Box<dyn CongestionControl>, String> {
    let ctx = CcContext {
        mss: mss as u64,
        hystart,
    };
    build(name, params, &ctx).map(|(cc, _)| cc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const CTX: CcContext = CcContext {
        mss: 1448,
        hystart: Hystart::Linux,
    };

    #[test]
    fn registry_names_and_error() {
        for n in names() {
            let cc = make_cc(n, 1448, Hystart::Linux, &Value::Null).unwrap_or_else(|e| panic!("{n}: {e}"));
            // `reno` is another name of NewReno (reno.rs)
            let own = if n == "reno" { "newreno" } else { n };
            assert_eq!(cc.name(), own, "{n}");
        }
        let e = make_cc("vegas", 1448, Hystart::Off, &Value::Null).err().unwrap();
        assert!(
            e.contains("vegas") && e.contains("newreno") && e.contains("cubic"),
            "{e}"
        );
        let mut seen = std::collections::HashSet::new();
        assert!(names().iter().all(|n| seen.insert(*n)), "a name registered twice");
    }

    #[test]
    fn every_declared_key_is_parsed_and_every_resolved_key_declared() {
        // as for the disciplines (queue/registry.rs): the keys `aqmlab list ccs` prints are the
        // ones the unknown-key check accepts, each reaches the parser, the resolved table holds
        // them all and reads back to itself, and each has its help
        let mut problems = Vec::new();
        for info in all() {
            let res =
                cc_params(info.name, &Value::Null, &CTX).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let keys = info.keys();
            let resolved: Vec<&str> = res.as_object().unwrap().keys().map(String::as_str).collect();
            let mut declared = keys.clone();
            declared.sort_unstable();
            if resolved != declared {
                problems.push(format!("{}: resolved {resolved:?}, declared {keys:?}", info.name));
            }
            for d in info.docs() {
                if d.help.is_empty() {
                    problems.push(format!("{}: key {} has no help", info.name, d.name));
                }
            }
            match cc_params(info.name, &res, &CTX) {
                Ok(again) if again == res => {}
                other => problems.push(format!(
                    "{}: its resolved table reads back as {other:?}",
                    info.name
                )),
            }
            for k in &keys {
                // a table is the wrong type for every key: the parser must say so, naming it
                match cc_params(info.name, &json!({ *k: {"x": [1]} }), &CTX) {
                    Err(e) if e.starts_with(&format!("{k}: ")) && !e.contains("unknown parameter") => {}
                    other => problems.push(format!("{}: key {k} is not parsed: {other:?}", info.name)),
                }
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn only_prague_runs_only_over_accecn() {
        // tcp_prague.c's flags hold TCP_CONG_NEEDS_ACCECN; every other controller modelled runs
        // without ECN or with RFC 3168's (DCTCP), so none needs AccECN feedback
        let need: Vec<&str> = all().iter().filter(|i| i.needs_accecn).map(|i| i.name).collect();
        assert_eq!(need, ["prague"]);
        assert!(needs_accecn("prague") && !needs_accecn("dctcp") && !needs_accecn("vegas"));
    }

    #[test]
    fn unknown_keys_name_the_key_the_controller_and_what_is_allowed() {
        // the same words as a discipline's unknown key (params::check_keys)
        let e = cc_params("ledbat", &json!({"targte": "25ms"}), &CTX).unwrap_err();
        assert!(
            e.starts_with(
                "targte: unknown parameter of ledbat (did you mean `target`?); allowed: target, gain, "
            ),
            "{e}"
        );
        let e = cc_params("tcp_lp", &json!({"target": "25ms"}), &CTX).unwrap_err();
        assert!(
            e.starts_with("target: unknown parameter of tcp_lp; allowed: threshold, "),
            "{e}"
        );
        // a controller without parameters takes an empty table (or none) and rejects any key
        assert_eq!(cc_params("reno", &json!({}), &CTX), Ok(json!({})));
        assert_eq!(cc_params("reno", &Value::Null, &CTX), Ok(json!({})));
        assert_eq!(
            cc_params("reno", &json!({"gain": 2}), &CTX),
            Err("gain: unknown parameter of reno; allowed: none (reno takes no parameters)".into())
        );
        // BBR's one key, its default written out
        assert_eq!(
            cc_params("bbr", &json!({}), &CTX),
            Ok(json!({"min_rtt_renew": "lower"}))
        );
    }
}
