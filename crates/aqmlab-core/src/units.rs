//! Integer units: time in nanoseconds, rates in bit/s, sizes in bytes, and the parsers for the
//! unit strings scenario files use ("5ms", "10Mbps", "150KB", "100p").
//!
//! Follows docs/architecture.md principle 3: no floating-point time accumulates anywhere; serialisation time
//! rounds up to the next nanosecond.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// Simulation time and durations, in nanoseconds.
pub type Time = u64;

pub const NS: Time = 1;
pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// Time needed to put `bytes` on a link of `rate_bps`, rounded up to the nanosecond.
#[inline]
pub fn tx_time(bytes: u64, rate_bps: u64) -> Time {
    // bits x 1e9 fits 64 bits for any packet (up to 2.3 GB): the 128-bit division, a library
    // call, is only needed beyond that.
    match bytes.checked_mul(8 * SEC) {
        Some(bits) => bits.div_ceil(rate_bps),
        None => (bytes as u128 * 8 * SEC as u128).div_ceil(rate_bps as u128) as Time,
    }
}

/// Whole ticks of a clock running at `hz` ticks a second since time 0 (a kernel's jiffies at
/// CONFIG_HZ `hz`): floor(t x hz / 1 s), exact for every `hz`.
pub fn ticks(t: Time, hz: u32) -> u64 {
    (t as u128 * hz as u128 / SEC as u128) as u64
}

pub fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

/// The length of the exponent ("e9", "E-3") at the start of `s`; 0 when there is none. No unit
/// starts with "e" or "E", so "1e9s" is 1e9 seconds.
fn exponent_len(s: &str) -> usize {
    let b = s.as_bytes();
    if !matches!(b.first(), Some(b'e' | b'E')) {
        return 0;
    }
    let sign = usize::from(matches!(b.get(1), Some(b'+' | b'-')));
    let digits = b[1 + sign..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        0
    } else {
        1 + sign + digits
    }
}

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let mantissa = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let end = mantissa + exponent_len(&s[mantissa..]);
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

fn scaled(v: f64, mult: f64, what: &str, s: &str) -> Result<u64, String> {
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{s:?} is not a non-negative {what}"));
    }
    let x = (v * mult).round();
    if x > u64::MAX as f64 / 2.0 {
        return Err(format!("{s:?} is too large a {what}"));
    }
    Ok(x as u64)
}

/// Parses a duration: a number followed by s, ms, us or ns ("5ms", "0.65s").
/// The units of a duration, a rate and a size, each with its multiplier (declared once: the
/// parsers below and the scenario schema's patterns read them).
pub const TIME_UNITS: &[(&str, f64)] = &[("s", 1e9), ("ms", 1e6), ("us", 1e3), ("ns", 1.0)];
pub const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("Kbps", 1e3),
    ("kbps", 1e3),
    ("Mbps", 1e6),
    ("Gbps", 1e9),
];
pub const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1024.0 * 1024.0),
    ("GiB", 1024.0 * 1024.0 * 1024.0),
];
/// The unit of a limit in packets.
pub const PACKETS_UNIT: &str = "p";

fn unit_mult(units: &[(&str, f64)], unit: &str) -> Option<f64> {
    units.iter().find(|(u, _)| *u == unit).map(|(_, m)| *m)
}

/// A number with one of `units`, scaled to the base unit.
fn parse_unit(s: &str, units: &[(&str, f64)], what: &str, allowed: &str) -> Result<u64, String> {
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not {allowed}"))?;
    let mult = unit_mult(units, unit).ok_or_else(|| format!("{s:?} is not {allowed}"))?;
    scaled(v, mult, what, s)
}

/// A regular expression for a non-negative number followed by one of `units` (JSON Schema's
/// `pattern` dialect), as `split_number` and the parsers accept it.
pub fn unit_pattern(units: &[&str]) -> String {
    format!(
        r"^\s*\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*({})\s*$",
        units.join("|")
    )
}

pub fn parse_time(s: &str) -> Result<Time, String> {
    parse_unit(
        s,
        TIME_UNITS,
        "duration",
        "a number with a unit: s, ms, us or ns (e.g. \"50ms\")",
    )
}

pub fn parse_rate(s: &str) -> Result<u64, String> {
    let allowed = "a number with a unit: bps, Kbps, Mbps or Gbps (e.g. \"10Mbps\")";
    parse_unit(s, RATE_UNITS, "rate", allowed)
}

pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let allowed = "a number with a unit: B, KB, MB, GB, KiB, MiB or GiB (e.g. \"1500B\")";
    parse_unit(s, SIZE_UNITS, "size", allowed)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

pub fn parse_limit(s: &str) -> Result<Limit, String> {
    let allowed = "packets with `p` (\"100p\") or bytes with B/KB/MB/KiB/MiB (\"150KB\")";
    let (v, unit) = split_number(s).ok_or_else(|| format!("{s:?} is not {allowed}"))?;
    if unit == PACKETS_UNIT {
        if v.fract() != 0.0 {
            return Err(format!("{s:?} is not a whole number of packets"));
        }
        return Ok(Limit::Packets(scaled(v, 1.0, "packet count", s)?));
    }
    let mult = unit_mult(SIZE_UNITS, unit).ok_or_else(|| format!("{s:?} is not {allowed}"))?;
    Ok(Limit::Bytes(scaled(v, mult, "size", s)?))
}

pub fn fmt_time(t: Time) -> String {
    if t.is_multiple_of(SEC) {
        format!("{}s", t / SEC)
    } else if t.is_multiple_of(MS) {
        format!("{}ms", t / MS)
    } else if t.is_multiple_of(US) {
        format!("{}us", t / US)
    } else {
        format!("{t}ns")
    }
}

pub fn fmt_rate(r: u64) -> String {
    if r.is_multiple_of(1_000_000_000) && r > 0 {
        format!("{}Gbps", r / 1_000_000_000)
    } else if r.is_multiple_of(1_000_000) && r > 0 {
        format!("{}Mbps", r / 1_000_000)
    } else if r.is_multiple_of(1000) && r > 0 {
        format!("{}Kbps", r / 1000)
    } else {
        format!("{r}bps")
    }
}

/// Deserialises a unit string into an integer with the given parser; used by the newtypes below.
macro_rules! unit_newtype {
    ($name:ident, $inner:ty, $parse:expr, $fmt:expr, $units:expr, $expect:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        ($parse)(s).map($name).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; expected {}", $expect)))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; expected {}", $expect)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{v} has no unit; expected {}", $expect)))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&($fmt)(self.0))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let units: Vec<&str> = $units.iter().map(|u| u.0).collect();
                json_schema!({"type": "string", "pattern": unit_pattern(&units), "description": $expect})
            }
        }
    };
}

unit_newtype!(
    Dur,
    Time,
    parse_time,
    fmt_time,
    TIME_UNITS,
    "a duration such as \"50ms\" (units s, ms, us, ns)"
);
unit_newtype!(
    Rate,
    u64,
    parse_rate,
    fmt_rate,
    RATE_UNITS,
    "a rate such as \"10Mbps\" (units bps, Kbps, Mbps, Gbps)"
);
unit_newtype!(
    Size,
    u64,
    parse_bytes,
    |b: u64| format!("{b}B"),
    SIZE_UNITS,
    "a size such as \"1500B\" (units B, KB, MB, KiB, MiB)"
);

/// `#[serde(with = "as_dur")]`: a [`Time`] field read and written as a duration string, so that a
/// parameter struct keeps the integer its users compute with (its schema: `#[schemars(with = "Dur")]`).
pub mod as_dur {
    use super::{Dur, Time};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
        Dur(*t).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Time, D::Error> {
        Dur::deserialize(d).map(|t| t.0)
    }
}

/// `#[serde(with = "as_size")]`: a byte count read and written as a size string (its schema:
/// `#[schemars(with = "Size")]`).
pub mod as_size {
    use super::Size;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(b: &u64, s: S) -> Result<S::Ok, S::Error> {
        Size(*b).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Size::deserialize(d).map(|b| b.0)
    }
}

/// A host's NIC rate: a rate string, or "inf" for none (packets leave the host at once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicRate(pub Option<u64>);

impl<'de> Deserialize<'de> for NicRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d).map_err(|_| {
            de::Error::custom("expected a rate such as \"1Gbps\" (units bps, Kbps, Mbps, Gbps) or \"inf\"")
        })?;
        if s.trim() == "inf" {
            return Ok(NicRate(None));
        }
        match parse_rate(&s) {
            Ok(0) => Err(de::Error::custom(
                "0bps is not allowed; a NIC rate must be positive (or \"inf\")",
            )),
            Ok(r) => Ok(NicRate(Some(r))),
            Err(e) => Err(de::Error::custom(format!("{e}, or \"inf\""))),
        }
    }
}

impl JsonSchema for NicRate {
    fn schema_name() -> Cow<'static, str> {
        "NicRate".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({"anyOf": [g.subschema_for::<Rate>(), {"const": "inf"}]})
    }
}

impl Serialize for NicRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(r) => s.serialize_str(&fmt_rate(r)),
            None => s.serialize_str("inf"),
        }
    }
}

/// A buffer limit in a scenario file ("100p" or "150KB").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitSpec(pub Limit);

impl<'de> Deserialize<'de> for LimitSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)
            .map_err(|_| de::Error::custom("expected a limit string such as \"100p\" or \"150KB\""))?;
        parse_limit(&s).map(LimitSpec).map_err(de::Error::custom)
    }
}

impl JsonSchema for LimitSpec {
    fn schema_name() -> Cow<'static, str> {
        "Limit".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut units: Vec<&str> = SIZE_UNITS.iter().map(|u| u.0).collect();
        units.push(PACKETS_UNIT);
        json_schema!({"type": "string", "pattern": unit_pattern(&units),
                      "description": "packets with `p` (\"100p\") or bytes (\"150KB\")"})
    }
}

impl Serialize for LimitSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Limit::Packets(p) => s.serialize_str(&format!("{p}p")),
            Limit::Bytes(b) => s.serialize_str(&format!("{b}B")),
        }
    }
}

/// A key whose values are names, some keys also taking a boolean for two of them (`Hystart`,
/// `EcnMode`, TCP's `CwndLimited`): the names are declared once, in [`Named::ALL`], and read,
/// written and typed in the schema from there.
pub trait Named: Copy + PartialEq + 'static {
    /// The values and their names, in the order errors and the schema list them.
    const ALL: &'static [(&'static str, Self)];
    /// What `true` and `false` stand for.
    const BOOLS: (Self, Self);
    /// Whether those two are written back as the booleans (else every value as its name).
    const WRITES_BOOLS: bool;
    /// How the schema describes the key.
    const ABOUT: &'static str;

    fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, v)| *v == self).map_or("", |(n, _)| n)
    }

    fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, v)| *v)
    }

    /// The value of `v`, a name or a boolean; the error lists what is allowed.
    fn read(v: &serde_json::Value) -> Result<Self, String> {
        let found = match v {
            serde_json::Value::Bool(b) => Some(if *b { Self::BOOLS.0 } else { Self::BOOLS.1 }),
            serde_json::Value::String(s) => Self::parse(s),
            _ => None,
        };
        found.ok_or_else(|| {
            let names: Vec<String> = Self::ALL.iter().map(|(n, _)| format!("{n:?}")).collect();
            format!(
                "{v} is not allowed; allowed: {} (true = {:?}, false = {:?})",
                names.join(", "),
                Self::BOOLS.0.name(),
                Self::BOOLS.1.name()
            )
        })
    }

    /// The key's schema: one of the names, or a boolean.
    fn schema() -> Schema {
        let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
        let about = format!(
            "{} (true = {:?}, false = {:?})",
            Self::ABOUT,
            Self::BOOLS.0.name(),
            Self::BOOLS.1.name()
        );
        json_schema!({"description": about, "anyOf": [{"enum": names}, {"type": "boolean"}]})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(parse_time("50ms"), Ok(50 * MS));
        assert_eq!(parse_time("0.65s"), Ok(650 * MS));
        assert_eq!(parse_time("3us"), Ok(3 * US));
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("64Kbps"), Ok(64_000));
        assert_eq!(parse_bytes("150KB"), Ok(150_000));
        assert_eq!(parse_bytes("1KiB"), Ok(1024));
        assert_eq!(parse_limit("100p"), Ok(Limit::Packets(100)));
        assert_eq!(parse_limit("1MiB"), Ok(Limit::Bytes(1 << 20)));
        assert!(parse_time("50").is_err());
        assert!(parse_time("-5ms").is_err());
        assert!(parse_rate("10MB").is_err());
        assert!(parse_limit("1.5p").is_err());
    }

    #[test]
    fn parses_numbers_with_an_exponent() {
        assert_eq!(parse_time("1e9s"), Ok(1_000_000_000 * SEC));
        assert_eq!(parse_time("2.5E-3s"), Ok(2_500 * US));
        assert_eq!(parse_time("1e+2ms"), Ok(100 * MS));
        assert_eq!(parse_rate("1e7bps"), Ok(10_000_000));
        assert_eq!(parse_bytes("1.5e3B"), Ok(1_500));
        assert_eq!(parse_limit("1e3p"), Ok(Limit::Packets(1000)));
        // beyond the nanosecond counter's range: refused by name, never wrapped
        assert_eq!(
            parse_time("1e10s"),
            Err("\"1e10s\" is too large a duration".into())
        );
        // an "e" without digits is not an exponent
        assert!(parse_time("1es").is_err());
        assert!(parse_time("1e").is_err());
    }

    #[test]
    fn serialisation_time_rounds_up() {
        // 1500 B at 10 Mb/s = 1.2 ms exactly; 1 B at 3 bit/s = 8/3 s rounds up.
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
        assert_eq!(tx_time(1, 3), 2_666_666_667);
        // Beyond 64 bits of bit-nanoseconds (over 2.3 GB): 3 GB at 1 Gb/s = 24 s; 3 GB + 1 B
        // at 3 bit/s = 8e9 s + 8/3 s, rounded up.
        assert_eq!(tx_time(3_000_000_000, 1_000_000_000), 24 * SEC);
        assert_eq!(tx_time(3_000_000_001, 3), 8_000_000_000 * SEC + 2_666_666_667);
    }
}
