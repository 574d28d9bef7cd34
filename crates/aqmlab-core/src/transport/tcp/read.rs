//! Reading a flow's TCP keys: over the profile the flow names (`params::read` with the preset key
//! `profile`), then the checks that involve several keys or the controller's own table (errors
//! name the key, the value and what is allowed).

use super::config::{Rwnd, TcpConfig};
use super::profiles::profile;
use crate::packet::EcnMode;
use crate::params::{read, Params};
use crate::transport::cc::registry::{cc_params, lookup as lookup_cc, needs_accecn};
use crate::transport::cc::CcContext;
use crate::units::fmt_time;
use crate::units::Named;
use serde_json::Value;

impl Params<()> for TcpConfig {
    const PRESET: Option<&'static str> = Some("profile");

    fn preset(&self, _: &()) -> TcpConfig {
        profile(&self.profile).expect("a profile's name").config.clone()
    }

    fn finish(&mut self, _: &()) -> Result<(), String> {
        if !(self.cc_params.is_null() || self.cc_params.is_object()) {
            return Err(format!(
                "cc_params: {} is not allowed; allowed: a table of {}'s parameters",
                self.cc_params, self.cc
            ));
        }
        let mut table = profile(&self.profile)
            .ok()
            .and_then(|p| p.cc_params.iter().find(|(cc, _)| *cc == self.cc.0))
            .map_or(Value::Null, |(_, t)| t.clone());
        match (table.as_object_mut(), self.cc_params.as_object()) {
            (Some(base), Some(own)) => base.extend(own.iter().map(|(k, v)| (k.clone(), v.clone()))),
            (None, _) => table = self.cc_params.clone(),
            (Some(_), None) => {}
        }
        let ctx = CcContext {
            mss: self.mss as u64,
            hystart: self.hystart,
        };
        let range = |key: &str, v: u32, lo: u32, hi: u32, what: &str| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("{key}: {v} is out of range; allowed {lo} to {hi}{what}"))
            }
        };
        range("mss", self.mss, 88, 65000, "")?;
        range("iw", self.iw, 1, 1000, " segments")?;
        range("segs_per_ack", self.segs_per_ack, 1, 1000, " segments")?;
        range("pacing_ss_ratio", self.pacing_ss_ratio, 1, 10_000, " (percent)")?;
        range("pacing_ca_ratio", self.pacing_ca_ratio, 1, 10_000, " (percent)")?;
        // the controller's table, once the mss it is built with is known to be in range
        self.cc_params = cc_params(&self.cc, &table, &ctx).map_err(|e| format!("cc_params: {e}"))?;
        for (k, v) in [
            ("min_rto", self.min_rto),
            ("max_rto", self.max_rto),
            ("initial_rto", self.initial_rto),
        ] {
            if v == 0 {
                return Err(format!("{k}: must be positive"));
            }
        }
        if self.max_rto < self.min_rto {
            return Err(format!(
                "max_rto: {} is below min_rto ({}); allowed: at least min_rto",
                fmt_time(self.max_rto),
                fmt_time(self.min_rto)
            ));
        }
        if self.linux_rto && self.rto_tick > 0 {
            return Err(format!(
                "linux_rto: true with rto_tick {} (ns-2's estimator); allowed: linux_rto = false, or rto_tick = \"0s\"",
                fmt_time(self.rto_tick)
            ));
        }
        if needs_accecn(&self.cc) && self.ecn != EcnMode::AccEcn {
            return Err(format!(
                "ecn: \"{}\" with cc = \"{}\"; allowed: \"accecn\" ({} runs only over AccECN feedback, {})",
                self.ecn.name(),
                self.cc,
                self.cc,
                lookup_cc(&self.cc).map_or("", |i| i.reference)
            ));
        }
        // The window the connection runs with, in bytes (a profile's may count segments).
        self.rwnd = Rwnd::Bytes(self.rwnd_bytes());
        if self.rwnd_bytes() > MAX_WINDOW {
            return Err(format!(
                "rwnd: {}B is above the largest TCP window; allowed: at most 1073725440B (65535 << 14, RFC 7323)",
                self.rwnd_bytes()
            ));
        }
        if self.rcv_truesize <= self.mss as u64 || self.rcv_truesize > 1 << 20 {
            return Err(format!(
                "rcv_truesize: {}B; allowed: more than the mss ({}B), at most 1MiB",
                self.rcv_truesize, self.mss
            ));
        }
        if self.rcvbuf < 4096 || self.rcvbuf_max < self.rcvbuf {
            return Err(format!(
                "rcvbuf: {}B with rcvbuf_max {}B; allowed: rcvbuf at least 4KiB and rcvbuf_max at least rcvbuf",
                self.rcvbuf, self.rcvbuf_max
            ));
        }
        if self.rwnd_bytes() < self.mss as u64 {
            return Err(format!(
                "rwnd: {}B is below one mss ({}B); allowed: at least the mss",
                self.rwnd_bytes(),
                self.mss
            ));
        }
        Ok(())
    }
}

/// The largest window TCP can advertise (RFC 7323 2.3: 65535 << 14).
const MAX_WINDOW: u64 = 0xffff << 14;

/// Reads a flow entry's TCP keys (`table`, the entry) over their profile; errors name the key.
/// An entry that names a controller with an ECN mode of its own (`own_ecn`) and no `ecn` runs
/// with that mode.
pub fn read_config(table: &Value) -> Result<TcpConfig, String> {
    let own = table.get("cc").and_then(Value::as_str).and_then(own_ecn);
    match own {
        Some(ecn) if table.get("ecn").is_none() => {
            let mut entry = table.clone();
            entry["ecn"] = Value::from(ecn);
            read(&entry, TcpConfig::default(), &())
        }
        _ => read(table, TcpConfig::default(), &()),
    }
}

/// The ECN mode a controller asks for itself: one whose registry entry needs AccECN
/// ([`crate::transport::cc::CcInfo::needs_accecn`]; Linux's TCP_CONG_NEEDS_ECN and
/// TCP_CONG_NEEDS_ACCECN flags, net/ipv4/tcp_prague.c) negotiates it whatever
/// net.ipv4.tcp_ecn says; any other controller takes the flow's `ecn` ("off" by default).
fn own_ecn(cc: &str) -> Option<&'static str> {
    needs_accecn(cc).then_some("accecn")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::config::CwndLimited;
    use serde_json::json;

    #[test]
    fn every_tcp_key_has_its_help() {
        let docs = crate::params::Group::of::<TcpConfig>().docs();
        assert_eq!(docs.len(), crate::params::keys::<TcpConfig>().len());
        for d in docs {
            assert!(!d.help.is_empty(), "{} has no doc comment", d.name);
        }
    }

    #[test]
    fn ns2_windows_count_packets_of_the_flows_segment_size() {
        // ns-default.tcl: Agent/TCP window_ 20 (packets) whatever packetSize_ is.
        let ns2 = read_config(&json!({"profile": "ns2_sack1"})).unwrap();
        assert_eq!((ns2.mss, ns2.rwnd), (1000, Rwnd::Bytes(20_000)));
        let big = read_config(&json!({"profile": "ns2_sack1", "mss": 1448})).unwrap();
        assert_eq!(big.rwnd, Rwnd::Bytes(20 * 1448));
        let own = read_config(&json!({"rwnd": {"segments": 10}, "mss": 500})).unwrap();
        assert_eq!(own.rwnd, Rwnd::Bytes(5000));
        let bytes = read_config(&json!({"profile": "ns2_sack1", "rwnd": "64KiB"})).unwrap();
        assert_eq!(bytes.rwnd, Rwnd::Bytes(65536));
    }

    #[test]
    fn each_linux_profile_runs_its_kernels_cubic_arithmetic() {
        // v3.14 tcp_cubic.c counts ACKs (tcp_cong_avoid_ai(tp, ca->cnt)); 4.x and later count
        // the packets each ACK covers (tcp_cong_avoid_ai(tp, ca->cnt, acked)): cubic.rs's laws.
        let law = |t: Value| read_config(&t).unwrap().cc_params["law"].clone();
        assert_eq!(law(json!({"profile": "linux_3_14"})), json!("linux"));
        assert_eq!(law(json!({"profile": "linux"})), json!("linux_4"));
        assert_eq!(law(json!({"profile": "rfc"})), json!("rfc9438"));
        // a flow's own key still wins over its profile's
        let own = json!({"profile": "linux_3_14", "cc_params": {"law": "rfc9438"}});
        assert_eq!(law(own), json!("rfc9438"));
    }

    #[test]
    fn the_window_growth_rule_is_a_name_or_a_boolean() {
        let rule = |v: Value| read_config(&json!({"cwnd_limited": v})).map(|c| c.cwnd_limited);
        assert_eq!(rule(json!(true)), Ok(CwndLimited::Linux3_14));
        assert_eq!(rule(json!(false)), Ok(CwndLimited::Off));
        assert_eq!(rule(json!("linux_5")), Ok(CwndLimited::Linux5));
        assert_eq!(read_config(&json!({})).unwrap().cwnd_limited, CwndLimited::Linux);
        let e = rule(json!("linux_6")).unwrap_err();
        assert!(
            e.starts_with(
                "cwnd_limited: \"linux_6\" is not allowed; allowed: \"off\", \"linux_3_14\", \"linux_5\", \"linux\" (true = \"linux_3_14\", false = \"off\")"
            ),
            "{e}"
        );
        // The two a boolean stands for are written back as it, the others by name.
        let written = |c: CwndLimited| serde_json::to_value(c).unwrap();
        assert_eq!(written(CwndLimited::Linux3_14), json!(true));
        assert_eq!(written(CwndLimited::Off), json!(false));
        assert_eq!(written(CwndLimited::Linux), json!("linux"));
    }

    #[test]
    fn a_key_overrides_its_profile_and_errors_name_the_key() {
        let c = read_config(&json!({"profile": "linux_3_14", "rack": true})).unwrap();
        assert!(c.rack && c.early_retransmit && c.cwnd_limited == CwndLimited::Linux3_14 && c.prr);
        let e = read_config(&json!({"profile": "bsd"})).unwrap_err();
        assert!(
            e.starts_with("profile: \"bsd\" is not allowed; allowed: linux, rfc, "),
            "{e}"
        );
        let e = read_config(&json!({"cc": "vegas"})).unwrap_err();
        assert!(
            e.starts_with("cc: \"vegas\" is not allowed; allowed: newreno, "),
            "{e}"
        );
        let e = read_config(&json!({"rwnd": {"segments": 0}})).unwrap_err();
        assert!(e.starts_with("rwnd: "), "{e}");
        let e = read_config(&json!({"min_rto": "1s", "max_rto": "500ms"})).unwrap_err();
        assert!(e.starts_with("max_rto: 500ms is below min_rto (1s)"), "{e}");
    }
}
