//! The core's end-to-end checks, one module per subject, built as one test binary: with the
//! release profile's cross-crate LTO every test binary re-optimises the core at link time, so
//! one binary instead of six is one such link.

mod access_checks;
mod bbr3_checks;
mod bbr_checks;
mod cc_state_checks;
mod core_checks;
mod docsis_checks;
mod l4s_checks;
mod layer_checks;
mod linux_hop_checks;
mod path_checks;
mod tcp_checks;
mod web_checks;
mod webpage_checks;
mod wifi_checks;

use aqmlab_core::scenario::{self, build::RunResult};
use serde_json::Value;

/// Runs scenario `v` (a JSON document) with its own seed, and checks that every packet is
/// accounted for (the run's conservation check).
pub fn run(v: Value) -> RunResult {
    let sc = scenario::parse(&v.to_string()).expect("valid scenario");
    let r = scenario::build::run(&sc, sc.seed).expect("run");
    r.conservation.as_ref().expect("packet conservation");
    r
}

/// The diagnostic `name` of hop `hop`.
pub fn link_diag(r: &RunResult, hop: &str, name: &str) -> f64 {
    let l = r.links.iter().find(|l| l.hop == hop).expect("hop");
    l.diagnostics.iter().find(|d| d.0 == name).expect("diagnostic").1
}

/// The `down` hop after `from_s`: its utilisation of `rate_bps` over `from_s..secs` and the
/// sorted sojourns (ns) of the packets enqueued from then on that left it (what the
/// queue-delay checks read).
pub fn down_link_after(r: &RunResult, from_s: u64, secs: u64, rate_bps: f64) -> (f64, Vec<u64>) {
    let down = r.links.iter().position(|l| l.hop == "down").unwrap() as u8;
    let p = &r.packets;
    let from = from_s * 1_000_000_000;
    let rows = (0..p.flow.len()).filter(|&i| p.hop[i] == down && p.outcome[i] <= 1 && p.t_enqueue[i] >= from);
    let (mut bytes, mut soj) = (0u64, Vec::new());
    for i in rows {
        bytes += p.size[i] as u64;
        soj.push(p.t_out[i] - p.t_enqueue[i]);
    }
    soj.sort_unstable();
    (bytes as f64 * 8.0 / (rate_bps * (secs - from_s) as f64), soj)
}
