//! The checks of a parsed scenario that serde cannot express (ranges, names, the shape of the
//! path, WiFi, each flow's keys against its kind, the size of the packet table). Every error
//! names the key path, the value and what is allowed (docs/architecture.md, principle 7).

use super::{
    flow, DirSpec, FlowKind, FlowModel, FlowSpec, HopRef, Scenario, WifiSpec, MAX_HOPS, RECORD_INTERVAL_MIN,
};
use crate::packet::Dir;
use crate::params::{check_range, check_time};
use crate::units::{fmt_time, Time, MS, SEC, US};

/// A hop or station name: a letter, then up to 31 letters, digits, '_' or '-'.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// The error of key `key`: "<key>: <msg>".
fn err<T>(key: impl std::fmt::Display, msg: impl std::fmt::Display) -> Result<T, String> {
    Err(format!("{key}: {msg}"))
}

/// A schedule's steps (`what`: "rate", "delay"): the first at 0s, times increasing.
fn check_steps<T>(key: &str, what: &str, steps: &[(crate::units::Time, T)]) -> Result<(), String> {
    if steps[0].0 != 0 {
        return err(key, format!("a {what} schedule must start at \"0s\""));
    }
    if let Some(i) = (1..steps.len()).find(|&i| steps[i].0 <= steps[i - 1].0) {
        return err(key, format!("step {i}: times must increase"));
    }
    Ok(())
}

/// A trace hop's trace (its lines, `net::trace::check`, with its file's name) and the keys a
/// trace replaces: the serialiser's (`shaper`, `device_queue`), the slots, a host's own queue.
fn validate_trace(key: &str, l: &super::LinkSpec, t: &super::TraceSpec) -> Result<(), String> {
    if let Err(e) = crate::net::trace::check(&t.ms) {
        let file = t.file.as_deref().map_or(String::new(), |f| format!("{f}: "));
        return err(format!("{key}.trace"), format!("{file}{e}"));
    }
    for (k, set) in [
        ("shaper", l.shaper == Some(super::Shaper::Htb)),
        ("device_queue", l.device_queue.is_some()),
        ("slot", l.slot.is_some()),
        ("docsis", l.docsis.is_some()),
        ("local_sender", l.local_sender),
    ] {
        if set {
            return err(
                format!("{key}.{k}"),
                "not allowed with a trace: the trace's opportunities take packets from the qdisc themselves \
                 (a link, not a host's own queue)",
            );
        }
    }
    Ok(())
}

/// A hop's slots: 0 < max, min <= max, at most a minute apart; budgets within netem's (32-bit
/// signed counters).
fn validate_slot(key: &str, l: &super::LinkSpec) -> Result<(), String> {
    let Some(s) = &l.slot else {
        return Ok(());
    };
    let c = s.config();
    if c.max == 0 || c.max > 60 * SEC {
        return err(
            format!("{key}.slot.max"),
            format!("{} is out of range; allowed above 0s, up to 60s", fmt_time(c.max)),
        );
    }
    if c.min > c.max {
        return err(
            format!("{key}.slot.min"),
            format!(
                "{} is above max ({}); allowed: min <= max",
                fmt_time(c.min),
                fmt_time(c.max)
            ),
        );
    }
    let most = i32::MAX as u64;
    for (k, v) in [
        ("packets", s.packets.map(|p| (p as u64, format!("{p}")))),
        ("bytes", s.bytes.map(|b| (b.0, format!("{}B", b.0)))),
    ] {
        if let Some((_, shown)) = v.filter(|&(n, _)| n == 0 || n > most) {
            return err(
                format!("{key}.slot.{k}"),
                format!("{shown} is out of range; allowed 1 to {most} (leave it out for no bound)"),
            );
        }
    }
    Ok(())
}

/// A DOCSIS upstream: one rate (the Max Sustained Rate), at most the channel's; a MAP of 50 us
/// to 100 ms granting at least a byte; a request-grant delay of one MAP (a MAP is sent ahead of
/// its interval) to 1 s; and none of the keys that gate or replace its dequeue.
fn validate_docsis(key: &str, l: &super::LinkSpec, steps: &[(Time, u64)]) -> Result<(), String> {
    let Some(d) = &l.docsis else {
        return Ok(());
    };
    for (k, set) in [
        ("slot", l.slot.is_some()),
        ("shaper", l.shaper == Some(super::Shaper::Htb)),
        ("device_queue", l.device_queue.is_some()),
        ("local_sender", l.local_sender),
    ] {
        if set {
            return err(
                format!("{key}.{k}"),
                "not allowed with docsis: the MAC's grants decide when the qdisc is dequeued \
                 (a modem's upstream, not a host's own queue)",
            );
        }
    }
    let &[(_, rate)] = steps else {
        return err(
            format!("{key}.rate"),
            "a schedule is not allowed with docsis; allowed: one rate, the Max Sustained Rate",
        );
    };
    let (map, rg) = (d.map.0, d.rg_delay.0);
    if !(50 * US..=100 * MS).contains(&map) {
        return err(
            format!("{key}.docsis.map"),
            format!("{} is out of range; allowed 50us to 100ms", fmt_time(map)),
        );
    }
    if rg < map || rg > SEC {
        return err(
            format!("{key}.docsis.rg_delay"),
            format!(
                "{} is out of range; allowed {} (one MAP) to 1s",
                fmt_time(rg),
                fmt_time(map)
            ),
        );
    }
    if d.config(rate).grant_cap() == 0 {
        return err(
            format!("{key}.rate"),
            format!(
                "{} grants nothing per {} MAP; allowed: a rate of at least one byte per MAP",
                crate::units::fmt_rate(rate),
                fmt_time(map)
            ),
        );
    }
    validate_token_bucket(key, d, rate)?;
    let channel = d.channel_rate.0;
    if channel < rate {
        return err(
            format!("{key}.docsis.channel_rate"),
            format!(
                "{} is below the hop's rate ({}); allowed: at least the rate, which the grants carry",
                crate::units::fmt_rate(channel),
                crate::units::fmt_rate(rate)
            ),
        );
    }
    Ok(())
}

/// A DOCSIS MAC's token bucket: `max_burst` and `peak_rate` only with `rate_shaper =
/// "token_bucket"`; a burst of at least one full-size Ethernet frame (1522 B) and at most 1 GB;
/// a peak rate of at least the hop's rate (the Max Sustained Rate).
fn validate_token_bucket(key: &str, d: &super::DocsisSpec, rate: u64) -> Result<(), String> {
    if d.rate_shaper != Some(super::RateShaperKind::TokenBucket) {
        for (k, set) in [
            ("max_burst", d.max_burst.is_some()),
            ("peak_rate", d.peak_rate.is_some()),
        ] {
            if set {
                return err(
                    format!("{key}.docsis.{k}"),
                    "only with rate_shaper = \"token_bucket\" (per_map, the default, has no bucket)",
                );
            }
        }
        return Ok(());
    }
    if let Some(b) = d.max_burst {
        if !(1522..=1_000_000_000).contains(&b.0) {
            return err(
                format!("{key}.docsis.max_burst"),
                format!(
                    "{}B is out of range; allowed 1522B (one full-size frame) to 1GB",
                    b.0
                ),
            );
        }
    }
    if let Some(p) = d.peak_rate {
        if p.0 < rate {
            return err(
                format!("{key}.docsis.peak_rate"),
                format!(
                    "{} is below the hop's rate ({}); allowed: at least the Max Sustained Rate",
                    crate::units::fmt_rate(p.0),
                    crate::units::fmt_rate(rate)
                ),
            );
        }
    }
    Ok(())
}

/// A hop's delay and, when it is netem's queue, its limit (packets) and jitter (at most the
/// delay, so no packet is due before it arrives).
fn validate_delay(key: &str, l: &super::LinkSpec) -> Result<(), String> {
    let steps = l.delay.as_ref().map_or(&[(0, 0)][..], |d| &d.0[..]);
    check_steps(&format!("{key}.delay"), "delay", steps)?;
    if let Some(&(_, d)) = steps.iter().find(|s| s.1 > 3600 * SEC) {
        return err(
            format!("{key}.delay"),
            format!("{} is out of range; allowed 0s to 3600s", fmt_time(d)),
        );
    }
    // delay_limit and delay_jitter shape one netem queue: refused with `why` where there is none
    let netem_keys = |why: &str| -> Result<(), String> {
        for (k, set) in [
            ("delay_limit", l.delay_limit.is_some()),
            ("delay_jitter", l.delay_jitter.is_some()),
        ] {
            if set {
                return err(format!("{key}.{k}"), why);
            }
        }
        Ok(())
    };
    if steps.len() > 1 {
        return netem_keys("not allowed with a delay schedule; allowed: one delay (netem's queue has one)");
    }
    if l.delay_reorder {
        return err(
            format!("{key}.delay_reorder"),
            "needs a delay schedule on the same hop (delay = [[\"0s\", \"30ms\"], [\"15s\", \"20ms\"]])",
        );
    }
    let delay = steps[0].1;
    if delay == 0 {
        return netem_keys("needs a delay on the same hop (delay = \"30ms\")");
    }
    match l.delay_limit.map(|d| d.0) {
        Some(crate::units::Limit::Bytes(b)) => {
            return err(
                format!("{key}.delay_limit"),
                format!("{b}B is not allowed; netem's limit counts packets, e.g. \"1000p\""),
            )
        }
        Some(crate::units::Limit::Packets(p)) if p == 0 || p > 1_000_000 => {
            return err(
                format!("{key}.delay_limit"),
                format!("{p}p is out of range; allowed 1p to 1000000p"),
            )
        }
        _ => {}
    }
    if let Some(j) = l.delay_jitter.filter(|j| j.0 > delay) {
        return err(
            format!("{key}.delay_jitter"),
            format!(
                "{} is out of range; allowed 0s to the delay, {}",
                fmt_time(j.0),
                fmt_time(delay)
            ),
        );
    }
    Ok(())
}

impl Scenario {
    /// Value checks serde cannot express. Errors name the key path.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return err("name", "must not be empty");
        }
        if self.duration.0 == 0 {
            return err("duration", "0s is not allowed; the run needs a positive duration");
        }
        if self.record.interval.0 < RECORD_INTERVAL_MIN {
            return err(
                "record.interval",
                format!(
                    "{} is below the minimum; allowed: 1ms or more (finer timing is in the packet \
                     table, record.level = \"packets\")",
                    fmt_time(self.record.interval.0)
                ),
            );
        }
        if self.topology.mtu.0 < 68 || self.topology.mtu.0 > 65535 {
            return err(
                "topology.mtu",
                format!("{}B is out of range; allowed 68B to 65535B", self.topology.mtu.0),
            );
        }
        if let Some(j) = self.topology.host_jitter {
            check_time("topology.host_jitter", j.0, 0, SEC)?;
        }
        self.validate_path()?;
        self.validate_wifi()?;
        self.validate_local_sender()?;
        for hop in self.topology.hops() {
            let l = hop.spec;
            let key = hop.key;
            validate_slot(&key, l)?;
            let steps: &[(crate::units::Time, u64)] = match (&l.rate, &l.trace, l.wifi) {
                (_, _, true) => continue,
                (Some(_), Some(_), false) => {
                    return err(
                        format!("{key}.trace"),
                        "not allowed with rate; allowed: one of them (a trace hop's rate is its trace's)",
                    )
                }
                (None, Some(t), false) => {
                    validate_trace(&key, l, t)?;
                    &[]
                }
                (Some(r), None, false) => &r.0,
                (None, None, false) => return err(
                    format!("{key}.rate"),
                    "missing; give a rate such as \"10Mbps\", a schedule [[\"0s\", \"10Mbps\"], ...] or a trace",
                ),
            };
            if !steps.is_empty() {
                check_steps(&format!("{key}.rate"), "rate", steps)?;
            }
            if steps.len() == 1 && steps[0].1 == 0 {
                return err(
                    format!("{key}.rate"),
                    "0bps is not allowed; a link rate must be positive (an outage is a step of \"0bps\" in a schedule)",
                );
            }
            if steps.len() > 1 && steps.iter().all(|s| s.1 == 0) {
                return err(
                    format!("{key}.rate"),
                    "every step is 0bps; allowed: a schedule with a step above 0bps",
                );
            }
            self.validate_shaper(&key, l)?;
            validate_docsis(&key, l, steps)?;
            validate_delay(&key, l)?;
            match l.device_queue.map(|d| d.0) {
                Some(crate::units::Limit::Bytes(_)) => {
                    return err(format!("{key}.device_queue"), "counts packets, e.g. \"1p\"")
                }
                Some(crate::units::Limit::Packets(p)) if p > 100_000 => {
                    return err(
                        format!("{key}.device_queue"),
                        format!("{p}p is out of range; allowed 0p to 100000p"),
                    )
                }
                _ => {}
            }
            if !(0.0..1.0).contains(&l.loss) {
                return err(
                    format!("{key}.loss"),
                    format!("{} is out of range; allowed 0 <= loss < 1", l.loss),
                );
            }
        }
        let mut models = flow::FlowModels::default();
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(&mut models, i, f)?;
        }
        self.validate_table_size()?;
        self.validate_memory(&mut models)
    }

    /// A hop's shaper and its keys: HTB needs rates above 0 (a schedule changes its class, as
    /// `tc class change` does; a class has no rate 0) and a NIC rate to send its bursts at; its
    /// bursts fit HTB's buffer, a 32-bit count of 64 ns ticks (`tc_htb_opt`), about 274.9 s at
    /// the lowest rate.
    fn validate_shaper(&self, key: &str, l: &super::LinkSpec) -> Result<(), String> {
        let Some(super::Shaper::Htb) = l.shaper else {
            for (k, set) in [
                ("htb_burst", l.htb_burst.is_some()),
                ("htb_cburst", l.htb_cburst.is_some()),
            ] {
                if set {
                    return err(format!("{key}.{k}"), "needs shaper = \"htb\" on the same hop");
                }
            }
            return Ok(());
        };
        let steps = &l.rate.as_ref().expect("checked: a wired hop has a rate").0;
        if steps.iter().any(|s| s.1 == 0) {
            return err(
                format!("{key}.rate"),
                "an outage (0bps) is not allowed with shaper = \"htb\"; allowed: rates above 0, HTB's class rates",
            );
        }
        if self.topology.nic_rate.0.is_none() {
            return err(
                "topology.nic_rate",
                format!("\"inf\" is not allowed with {key}.shaper = \"htb\"; allowed: a rate, the interface's own rate HTB's bursts leave at"),
            );
        }
        let rate = steps.iter().map(|s| s.1).min().expect("a rate") as u128;
        let most = (u32::MAX as u128 * 64 * rate / (8 * SEC as u128)) as u64;
        for (k, v) in [("htb_burst", l.htb_burst), ("htb_cburst", l.htb_cburst)] {
            if let Some(b) = v.filter(|b| b.0 == 0 || b.0 > most) {
                return err(
                    format!("{key}.{k}"),
                    format!("{}B is out of range; allowed 1B to {most}B at this rate (HTB's buffer is 2^32 ticks of 64 ns)", b.0),
                );
            }
        }
        Ok(())
    }

    /// The shape of the path: the shorthand or `hops`, not both; every direction has a hop;
    /// hop names unique and usable as file and column names.
    fn validate_path(&self) -> Result<(), String> {
        let t = &self.topology;
        if t.hops.is_empty() {
            for (dir, l) in [(Dir::Down, &t.down), (Dir::Up, &t.up)] {
                let key = format!("topology.{}", dir.name());
                let Some(l) = l else {
                    return err(
                        key,
                        "missing; give both topology.down and topology.up, or topology.hops",
                    );
                };
                for (k, set) in [
                    ("name", l.name.is_some()),
                    ("direction", l.direction.is_some()),
                    ("hosts", !l.hosts.is_empty()),
                ] {
                    if set {
                        return err(format!("{key}.{k}"), "only allowed on an entry of topology.hops");
                    }
                }
            }
            return Ok(());
        }
        for dir in Dir::BOTH {
            if (dir == Dir::Up && t.up.is_some()) || (dir == Dir::Down && t.down.is_some()) {
                return err(
                    format!("topology.{}", dir.name()),
                    "not allowed together with topology.hops; describe that direction's hop in topology.hops",
                );
            }
        }
        if t.hops.len() > MAX_HOPS {
            return err(
                "topology.hops",
                format!("{} hops is out of range; allowed 1 to {MAX_HOPS}", t.hops.len()),
            );
        }
        let mut names: Vec<&str> = Vec::new();
        for (i, h) in t.hops.iter().enumerate() {
            let key = format!("topology.hops[{i}]");
            let Some(name) = h.name.as_deref() else {
                return err(
                    format!("{key}.name"),
                    "missing; every hop needs a name such as \"router\"",
                );
            };
            if !valid_name(name) {
                return err(
                    format!("{key}.name"),
                    format!("{name:?} is not allowed; a hop name starts with a letter and has 1 to 32 letters, digits, '_' or '-'"),
                );
            }
            if names.contains(&name) {
                return err(
                    format!("{key}.name"),
                    format!("{name:?} names two hops; hop names must be unique"),
                );
            }
            names.push(name);
            if h.direction.is_none() {
                return err(format!("{key}.direction"), "missing; allowed: \"up\" or \"down\"");
            }
        }
        for dir in Dir::BOTH {
            if !t.hops.iter().any(|h| h.direction.map(DirSpec::dir) == Some(dir)) {
                return err(
                    "topology.hops",
                    format!("no hop carries the {} direction; every direction needs at least one hop (direction = \"{}\")", dir.name(), dir.name()),
                );
            }
        }
        self.validate_hosts()
    }

    /// A hop whose qdisc runs in the sending hosts: the first of its chain, a wired hop shared
    /// by all its hosts or the WiFi interface of the one station (the up chain's WiFi hop with
    /// a single station: that host's own), and in one direction only (the flows' access delay
    /// goes beyond it).
    fn validate_local_sender(&self) -> Result<(), String> {
        let hops = self.topology.hops();
        let mut seen: Option<&str> = None;
        for (k, h) in hops.iter().enumerate().filter(|(_, h)| h.spec.local_sender) {
            let key = format!("{}.local_sender", h.key);
            if hops[..k].iter().any(|o| o.dir == h.dir) {
                return err(
                    key,
                    format!(
                        "only allowed on the first hop of the {} chain (the sending hosts' own)",
                        h.dir.name()
                    ),
                );
            }
            let stations = self.topology.wifi.as_ref().map_or(0, |w| w.stations.len());
            let own_station = h.spec.wifi && h.dir == Dir::Up && stations == 1;
            if (h.spec.wifi && !own_station) || !h.spec.hosts.is_empty() {
                return err(
                    key,
                    "not allowed on a hop with hosts or a WiFi hop other than the up chain's with one station",
                );
            }
            if let Some(other) = seen {
                return err(
                    key,
                    format!("{other}.local_sender is set too; allowed in one direction only (the flows' access delay is on the other side)"),
                );
            }
            seen = Some(h.key.as_str());
        }
        Ok(())
    }

    /// Hops with one link per host: at the hosts' end of their chain, the same hosts on both.
    fn validate_hosts(&self) -> Result<(), String> {
        let t = &self.topology;
        let mut first: Option<(usize, &Vec<String>)> = None;
        let mut links = t.hops.len();
        for (i, h) in t.hops.iter().enumerate().filter(|(_, h)| !h.hosts.is_empty()) {
            let key = format!("topology.hops[{i}].hosts");
            let dir = h.direction.map(DirSpec::dir).expect("checked above");
            let chain: Vec<usize> = (0..t.hops.len())
                .filter(|&k| t.hops[k].direction.map(DirSpec::dir) == Some(dir))
                .collect();
            let at_hosts = match dir {
                Dir::Up => chain[0] == i,
                Dir::Down => chain[chain.len() - 1] == i,
            };
            if !at_hosts {
                return err(
                    key,
                    "only allowed on the hosts' access hop: the first hop of the up chain or the last of the down chain",
                );
            }
            if h.wifi {
                return err(key, "not allowed on a WiFi hop (its stations are its hosts)");
            }
            for (k, name) in h.hosts.iter().enumerate() {
                if !valid_name(name) {
                    return err(
                        format!("{key}[{k}]"),
                        format!("{name:?} is not allowed; a host name starts with a letter and has 1 to 32 letters, digits, '_' or '-'"),
                    );
                }
                if h.hosts[..k].contains(name) {
                    return err(format!("{key}[{k}]"), format!("{name:?} names two hosts"));
                }
            }
            if let Some((j, other)) = first {
                if other != &h.hosts {
                    return err(
                        key,
                        format!("must list the hosts of topology.hops[{j}].hosts, in the same order (a host's uplink and downlink)"),
                    );
                }
            }
            first = Some((i, &h.hosts));
            links += h.hosts.len() - 1;
        }
        if links > MAX_HOPS {
            return err(
                "topology.hops",
                format!("{links} links (every host's counted) is out of range; allowed 1 to {MAX_HOPS}"),
            );
        }
        Ok(())
    }

    /// The WiFi medium and its two hops: the access point's is the last of the down chain, the
    /// stations' the first of the up chain; neither has a wired rate, loss or device queue.
    fn validate_wifi(&self) -> Result<(), String> {
        let hops = self.topology.hops();
        let wifi: Vec<&HopRef> = hops.iter().filter(|h| h.spec.wifi).collect();
        let Some(w) = &self.topology.wifi else {
            if let Some(h) = wifi.first() {
                return err(
                    format!("{}.wifi", h.key),
                    "needs a medium: add [topology.wifi] with its stations, e.g. stations = [{ name = \"laptop\" }]",
                );
            }
            return Ok(());
        };
        w.validate()?;
        for d in Dir::BOTH {
            let chain: Vec<&HopRef> = hops.iter().filter(|h| h.dir == d).collect();
            let on: Vec<&&HopRef> = chain.iter().filter(|h| h.spec.wifi).collect();
            let (pos, what) = match d {
                Dir::Down => (
                    chain.len() - 1,
                    "the access point's: the last hop of the down chain",
                ),
                Dir::Up => (0, "the stations': the first hop of the up chain"),
            };
            match on.as_slice() {
                [] => {
                    return err(
                        "topology.wifi",
                        format!(
                            "no {} hop is on the medium; mark {} with wifi = true",
                            d.name(),
                            what
                        ),
                    )
                }
                [h] if h.key == chain[pos].key => {
                    for (k, set) in [
                        ("rate", h.spec.rate.is_some()),
                        ("trace", h.spec.trace.is_some()),
                        ("slot", h.spec.slot.is_some()),
                        ("docsis", h.spec.docsis.is_some()),
                        ("loss", h.spec.loss > 0.0),
                        ("device_queue", h.spec.device_queue.is_some()),
                        ("shaper", h.spec.shaper.is_some()),
                    ] {
                        if set {
                            return err(
                                format!("{}.{k}", h.key),
                                "not allowed on a WiFi hop: its rates, losses and driver queues are \
                                 topology.wifi's (stations[].mcs, stations[].fer, driver_limit)",
                            );
                        }
                    }
                }
                [h] => {
                    return err(
                        format!("{}.wifi", h.key),
                        format!("the WiFi hop of the {} direction must be {what}", d.name()),
                    )
                }
                [_, h, ..] => {
                    return err(
                        format!("{}.wifi", h.key),
                        format!(
                            "a second WiFi hop in the {} direction; allowed: one per direction",
                            d.name()
                        ),
                    )
                }
            }
        }
        Ok(())
    }

    fn validate_flow(&self, models: &mut flow::FlowModels, i: usize, f: &FlowSpec) -> Result<(), String> {
        let key = |k: &str| format!("flows[{i}].{k}");
        let common = flow::common_keys().iter().map(String::as_str);
        let allowed: Vec<&str> = common.chain(f.kind.keys()).collect();
        for k in f.keys.keys() {
            if !allowed.contains(&k.as_str()) {
                return err(
                    key(k),
                    format!("not a key of a {} flow; allowed: {}", f.kind, allowed.join(", ")),
                );
            }
        }
        self.flow_route(f).map_err(|e| format!("flows[{i}].hops: {e}"))?;
        if let Some(st) = &f.station {
            match &self.topology.wifi {
                None => return err(key("station"), "needs a WiFi medium (topology.wifi)"),
                Some(w) if !w.stations.iter().any(|s| &s.name == st) => {
                    let names: Vec<&str> = w.stations.iter().map(|s| s.name.as_str()).collect();
                    return err(
                        key("station"),
                        format!("{st:?} is not a station; allowed: {}", names.join(", ")),
                    );
                }
                _ => {}
            }
        }
        let named = [("host", &f.host), ("server", &f.server)];
        for (k, h) in named.iter().filter_map(|(k, h)| h.as_ref().map(|h| (k, h))) {
            if !valid_name(h) {
                return err(
                    key(k),
                    format!("{h:?} is not allowed; a host name starts with a letter and has 1 to 32 letters, digits, '_' or '-'"),
                );
            }
        }
        if let Some(h) = &f.host {
            let hosts = self.hosts();
            if !hosts.is_empty() && !hosts.contains(h) {
                return err(
                    key("host"),
                    format!("{h:?} is not a host; allowed: {}", hosts.join(", ")),
                );
            }
        }
        if let Some(stop) = f.stop {
            let latest_start = f
                .start
                .as_ref()
                .map_or(0, |s| s.latest(f.count.map_or(1, |c| c.0)));
            if stop.0 <= latest_start {
                return err(
                    key("stop"),
                    format!(
                        "{} is not after the flow's start ({}); allowed: a time after start",
                        fmt_time(stop.0),
                        fmt_time(latest_start)
                    ),
                );
            }
        }
        if let Some(r) = f.rtt {
            if r.0 == 0 {
                return err(key("rtt"), "must be positive");
            }
        }
        if let Some(j) = f.host_jitter {
            check_time(&key("host_jitter"), j.0, 0, SEC)?;
        }
        if let Some(s) = f.rtt_spread {
            let rtt = f.rtt.unwrap_or(self.topology.rtt).0;
            if s.0 >= rtt {
                return err(
                    key("rtt_spread"),
                    format!(
                        "{} is not below the flow's rtt ({}); allowed: 0 up to (excluding) the rtt",
                        fmt_time(s.0),
                        fmt_time(rtt)
                    ),
                );
            }
        }
        let model = models
            .read(f, self.duration.0)
            .map_err(|e| format!("flows[{i}].{e}"))?;
        if let (FlowModel::Udp(u), Some(nic)) = (&model, f.nic_rate.unwrap_or(self.topology.nic_rate).0) {
            let rate = u.rate.map_or(0, |r| r.0);
            if rate > nic {
                return err(
                    key("rate"),
                    format!(
                        "{} is above the flow's NIC rate {} (the host sends no faster than its NIC); \
                         allowed: up to the NIC rate (the flow's or the topology's nic_rate)",
                        crate::units::fmt_rate(rate),
                        crate::units::fmt_rate(nic)
                    ),
                );
            }
        }
        let probe_size = match &model {
            FlowModel::Udp(u) => Some(u.packet_size),
            FlowModel::Ping(p) | FlowModel::Voip(p) => Some(p.packet_size),
            FlowModel::Tcp { .. } | FlowModel::Web { .. } | FlowModel::Webpage { .. } => None,
        };
        if let Some(ps) = probe_size {
            let lo = if f.kind.echoed() { 28 } else { 29 };
            if ps.0 < lo || ps.0 > self.topology.mtu.0 {
                return err(
                    key("packet_size"),
                    format!(
                        "{}B is out of range; allowed {lo}B to the path MTU {}B",
                        ps.0, self.topology.mtu.0
                    ),
                );
            }
        }
        // Web objects and pages go down, their requests up.
        if matches!(f.kind, FlowKind::Web | FlowKind::Webpage)
            && f.direction.is_some_and(|d| d != DirSpec::Down)
        {
            let what = if f.kind == FlowKind::Web {
                "a web flow's responses go down (its requests up)"
            } else {
                "a webpage flow's objects go down (its requests up)"
            };
            return err(key("direction"), format!("\"up\" is not allowed; {what}"));
        }
        Ok(())
    }
}

impl WifiSpec {
    /// Checks a driver's limits; `key` names where they come from.
    fn validate_driver(d: &crate::net::wifi::Driver, key: impl Fn(&str) -> String) -> Result<(), String> {
        check_time(
            &key("max_airtime"),
            d.max_airtime,
            100 * crate::units::US,
            10 * MS,
        )?;
        for (k, v, lo, hi) in [
            ("max_subframes", d.max_subframes as u64, 1, 64),
            ("max_ampdu_bytes", d.max_ampdu_bytes as u64, 1600, 65535),
            ("driver_limit", d.driver_limit as u64, 1, 100_000),
            ("hw_aggregates", d.hw_aggregates as u64, 1, 64),
            ("retries", d.retries as u64, 0, 100),
        ] {
            check_range(&key(k), v, lo, hi)?;
        }
        Ok(())
    }

    /// A rate control's name: one of `RateControl::NAMES`.
    fn validate_rate_control(name: &str, key: String) -> Result<(), String> {
        let names = crate::net::wifi_rate::RateControl::NAMES;
        if names.contains(&name) {
            return Ok(());
        }
        err(
            key,
            format!("{name:?} is not allowed; allowed: {}", names.join(", ")),
        )
    }

    /// Checks every value; errors name the key under `topology.wifi`.
    fn validate(&self) -> Result<(), String> {
        let key = |k: &str| format!("topology.wifi.{k}");
        if self.stations.is_empty() {
            return err(
                key("stations"),
                "missing or empty; a WiFi medium needs at least one station, e.g. stations = [{ name = \"laptop\" }]",
            );
        }
        Self::validate_driver(&self.driver(), key)?;
        let mut names: Vec<&str> = Vec::new();
        for (i, st) in self.stations.iter().enumerate() {
            let k = key(&format!("stations[{i}]"));
            if !valid_name(&st.name) {
                return err(
                    format!("{k}.name"),
                    format!("{:?} is not allowed; a station name starts with a letter and has 1 to 32 letters, digits, '_' or '-'", st.name),
                );
            }
            if names.contains(&st.name.as_str()) {
                return err(format!("{k}.name"), format!("{:?} names two stations", st.name));
            }
            names.push(&st.name);
            for (name, mcs) in [("mcs", Some(st.mcs)), ("up_mcs", st.up_mcs)] {
                if let Some(m) = mcs.filter(|&m| m > 31) {
                    return err(
                        format!("{k}.{name}"),
                        format!("{m} is out of range; allowed 0 to 31 (HT MCS)"),
                    );
                }
            }
            if !(0.0..1.0).contains(&st.fer) {
                return err(
                    format!("{k}.fer"),
                    format!("{} is out of range; allowed 0 <= fer < 1", st.fer),
                );
            }
            if let Some(rssi) = st.rssi {
                if !(-100.0..=0.0).contains(&rssi) || st.fer > 0.0 {
                    return err(
                        format!("{k}.rssi"),
                        format!("{rssi} is not allowed; allowed -100 to 0 (dBm), without fer"),
                    );
                }
            }
            if let Some(up) = st.up_rssi {
                if !(-100.0..=0.0).contains(&up) || st.rssi.is_none() {
                    return err(
                        format!("{k}.up_rssi"),
                        format!("{up} is not allowed; allowed -100 to 0 (dBm), with rssi"),
                    );
                }
            }
            Self::validate_rate_control(&st.rate_control, format!("{k}.rate_control"))?;
            Self::validate_driver(&self.station_driver(st), |d| format!("{k}.driver.{d}"))?;
        }
        if crate::net::wifi::Access::parse(&self.access).is_none() {
            return err(
                key("access"),
                format!(
                    "{:?} is not allowed; allowed: {}",
                    self.access,
                    crate::net::wifi::Access::NAMES.join(", ")
                ),
            );
        }
        let tables = crate::net::edca::EdcaTable::NAMES;
        for (k, v) in [("ap_edca", &self.ap_edca), ("station_edca", &self.station_edca)] {
            if !tables.contains(&v.as_str()) {
                return err(
                    key(k),
                    format!("{v:?} is not allowed; allowed: {}", tables.join(", ")),
                );
            }
        }
        let placements = crate::net::wifi::QDISC_PLACEMENTS;
        if !placements.contains(&self.qdisc_placement.as_str()) {
            return err(
                key("qdisc_placement"),
                format!(
                    "{:?} is not allowed; allowed: {}",
                    self.qdisc_placement,
                    placements.join(", ")
                ),
            );
        }
        if self.qdisc_placement != "root" && self.access != "edca" {
            return err(
                key("qdisc_placement"),
                format!(
                    "{:?} is not allowed with access = {:?}; allowed: \"root\" (one queue per transmitter), or access = \"edca\"",
                    self.qdisc_placement, self.access
                ),
            );
        }
        if self.access == "edca" {
            for (k, v, plain) in [("scheduler", &self.scheduler, "fifo"), ("txq", &self.txq, "fifo")] {
                if v != plain {
                    return err(
                        key(k),
                        format!("{v:?} is not allowed with access = \"edca\"; allowed: {plain:?} (per-AC mac80211 queues are not modelled)"),
                    );
                }
            }
        }
        let schedulers = crate::net::airtime::Scheduler::NAMES;
        if !schedulers.contains(&self.scheduler.as_str()) {
            return err(
                key("scheduler"),
                format!(
                    "{:?} is not allowed; allowed: {}",
                    self.scheduler,
                    schedulers.join(", ")
                ),
            );
        }
        let txqs = crate::net::txq::TxqKind::NAMES;
        if !txqs.contains(&self.txq.as_str()) {
            return err(
                key("txq"),
                format!("{:?} is not allowed; allowed: {}", self.txq, txqs.join(", ")),
            );
        }
        if self.txq_params.is_some() && self.txq != "fq_codel" {
            return err(
                key("txq_params"),
                format!(
                    "is not allowed with txq = {:?}; allowed: only with txq = \"fq_codel\"",
                    self.txq
                ),
            );
        }
        if let Err(e) = self.txq_params() {
            return err(key("txq_params"), e);
        }
        let us = crate::units::US;
        check_time(&key("airtime_quantum"), self.airtime_quantum.0, us, 100 * MS)?;
        for (k, v) in [
            ("aql_limit_low", self.aql_limit_low.0),
            ("aql_limit_high", self.aql_limit_high.0),
            ("aql_threshold", self.aql_threshold.0),
        ] {
            check_time(&key(k), v, 100 * us, 1000 * MS)?;
        }
        if self.aql_limit_high.0 < self.aql_limit_low.0 {
            return err(
                key("aql_limit_high"),
                format!(
                    "{} is below aql_limit_low ({}); allowed: at least aql_limit_low",
                    crate::units::fmt_time(self.aql_limit_high.0),
                    crate::units::fmt_time(self.aql_limit_low.0)
                ),
            );
        }
        Self::validate_rate_control(&self.rate_control, key("rate_control"))?;
        check_range(&key("per_slope"), self.per_slope, 0.1, 10.0)?;
        if self.width != 20 && self.width != 40 {
            return err(
                key("width"),
                format!("{} is not allowed; allowed: 20 or 40 (MHz)", self.width),
            );
        }
        if self.guard != "long" && self.guard != "short" {
            return err(
                key("guard"),
                format!(
                    "{:?} is not allowed; allowed: \"long\" (800 ns) or \"short\" (400 ns)",
                    self.guard
                ),
            );
        }
        if !crate::net::phy::LEGACY_RATES
            .iter()
            .any(|r| r.0 as u64 * 1_000_000 == self.ack_rate.0)
        {
            return err(
                key("ack_rate"),
                format!(
                    "{} is not a legacy OFDM rate; allowed: 6, 9, 12, 18, 24, 36, 48 or 54Mbps",
                    crate::units::fmt_rate(self.ack_rate.0)
                ),
            );
        }
        for (k, v, lo, hi) in [
            ("slot", self.slot.0, us, 100 * us),
            ("sifs", self.sifs.0, us, 100 * us),
        ] {
            check_time(&key(k), v, lo, hi)?;
        }
        for (k, v, lo, hi) in [
            ("aifsn", self.aifsn as u64, 1, 15),
            ("cw_min", self.cw_min as u64, 0, 1023),
            ("cw_max", self.cw_max as u64, self.cw_min as u64, 1023),
        ] {
            check_range(&key(k), v, lo, hi)?;
        }
        Ok(())
    }
}

mod memory;
#[cfg(test)]
mod tests;
