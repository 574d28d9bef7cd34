//! The scenario values written by hand rather than derived: a rate or a rate schedule, a qdisc
//! given as a name or a table, a start time or a uniform draw, a DSCP as a number or a name, a
//! named value or a boolean (HyStart's variant, the ECN mode, TCP's window-growth rule). Each reads what the file may say and writes back the canonical
//! form the resolved scenario stores; errors say what was given and what is allowed.

use super::{DelaySpec, Dscp, QdiscSpec, RateSpec, StartPer, StartSpec};
use crate::packet::EcnMode;
use crate::transport::cc::Hystart;
use crate::transport::tcp::config::CwndLimited;
use crate::units::Named;
use crate::units::{parse_rate, parse_time, Dur, Rate, Time};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A value or a schedule of [time, value] steps, each value read by `parse`; `allowed` says
/// what may be written.
fn steps<T>(
    v: &Value,
    parse: fn(&str) -> Result<T, String>,
    allowed: &str,
) -> Result<Vec<(Time, T)>, String> {
    match v {
        Value::String(s) => Ok(vec![(0, parse(s)?)]),
        Value::Array(steps) if !steps.is_empty() => {
            let mut out = Vec::new();
            for (i, step) in steps.iter().enumerate() {
                let pair = step.as_array().filter(|p| p.len() == 2);
                let (Some(t), Some(x)) = pair.map_or((None, None), |p| (p[0].as_str(), p[1].as_str())) else {
                    return Err(format!(
                        "step {i}: {step} is not a [time, value] pair; allowed: {allowed}"
                    ));
                };
                let t = parse_time(t).map_err(|e| format!("step {i}: {e}"))?;
                let x = parse(x).map_err(|e| format!("step {i}: {e}"))?;
                out.push((t, x));
            }
            Ok(out)
        }
        _ => Err(format!("{v} is not {allowed}")),
    }
}

/// A schedule written back: one value when it has one step at 0, else its steps.
fn write_steps<S: Serializer, T: Serialize>(steps: Vec<(Dur, T)>, s: S) -> Result<S::Ok, S::Error> {
    if steps.len() == 1 && steps[0].0 .0 == 0 {
        steps.into_iter().next().expect("one step").1.serialize(s)
    } else {
        steps.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RateSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed =
            "a rate such as \"10Mbps\" or a schedule [[\"0s\", \"10Mbps\"], [\"5s\", \"2Mbps\"], ...]";
        steps(&Value::deserialize(d)?, parse_rate, allowed)
            .map(RateSpec)
            .map_err(de::Error::custom)
    }
}

impl Serialize for RateSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_steps(self.0.iter().map(|&(t, r)| (Dur(t), Rate(r))).collect(), s)
    }
}

impl<'de> Deserialize<'de> for DelaySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed = "a delay such as \"30ms\" or a schedule [[\"0s\", \"30ms\"], [\"15s\", \"45ms\"], ...]";
        steps(&Value::deserialize(d)?, parse_time, allowed)
            .map(DelaySpec)
            .map_err(de::Error::custom)
    }
}

impl Serialize for DelaySpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        write_steps(self.0.iter().map(|&(t, d)| (Dur(t), Dur(d))).collect(), s)
    }
}

impl<'de> Deserialize<'de> for QdiscSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(kind) => Ok(QdiscSpec {
                kind,
                params: Default::default(),
            }),
            Value::Object(mut m) => match m.remove("kind") {
                Some(Value::String(kind)) => Ok(QdiscSpec { kind, params: m }),
                _ => Err(de::Error::custom(
                    "a qdisc table needs `kind = \"<name>\"` (see `aqmlab list qdiscs`)",
                )),
            },
            v => Err(de::Error::custom(format!(
                "{v} is not allowed; allowed: a qdisc name (`aqmlab list qdiscs`) or a table with `kind`"
            ))),
        }
    }
}

impl Serialize for QdiscSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = serde_json::Map::new();
        m.insert("kind".into(), Value::String(self.kind.clone()));
        m.extend(self.params.clone());
        Value::Object(m).serialize(s)
    }
}

impl<'de> Deserialize<'de> for StartSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed = "a time (\"1s\"), { uniform = [\"0s\", \"0.65s\"], per = \"group\" | \"flow\" } \
                       or { spread = [\"0s\", \"1s\"] }";
        match Value::deserialize(d)? {
            Value::String(s) => parse_time(&s).map(StartSpec::At).map_err(de::Error::custom),
            Value::Object(m)
                if m.contains_key("uniform") && m.keys().all(|k| k == "uniform" || k == "per") =>
            {
                let per = match m.get("per") {
                    None => StartPer::Group,
                    Some(Value::String(p)) if p == "group" => StartPer::Group,
                    Some(Value::String(p)) if p == "flow" => StartPer::Flow,
                    Some(v) => {
                        return Err(de::Error::custom(format!(
                            "per: {v} is not allowed; allowed: \"group\" (one draw for the entry's flows) \
                             or \"flow\" (one draw per flow)"
                        )))
                    }
                };
                let (lo, hi) = time_range("uniform", &m["uniform"]).map_err(de::Error::custom)?;
                Ok(StartSpec::Uniform(lo, hi, per))
            }
            Value::Object(m) if m.contains_key("spread") && m.len() == 1 => {
                let (lo, hi) = time_range("spread", &m["spread"]).map_err(de::Error::custom)?;
                Ok(StartSpec::Spread(lo, hi))
            }
            v => Err(de::Error::custom(format!("{v} is not {allowed}"))),
        }
    }
}

/// The range `[lo, hi]` of a start's `key` (`uniform`, `spread`): two times, hi >= lo.
fn time_range(key: &str, v: &Value) -> Result<(Time, Time), String> {
    let allowed = "two times [lo, hi] with hi >= lo, such as [\"0s\", \"1s\"]";
    let Some([Value::String(lo), Value::String(hi)]) = v.as_array().map(Vec::as_slice) else {
        return Err(format!("{key}: {v} is not allowed; allowed: {allowed}"));
    };
    let (lo, hi) = (parse_time(lo), parse_time(hi));
    match (lo, hi) {
        (Ok(lo), Ok(hi)) if hi >= lo => Ok((lo, hi)),
        (Ok(_), Ok(_)) => Err(format!(
            "{key}: {v} is not allowed: the upper bound is below the lower bound; allowed: {allowed}"
        )),
        (Err(e), _) | (_, Err(e)) => Err(format!("{key}: {e}")),
    }
}

impl Serialize for StartSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = serde_json::Map::new();
        match *self {
            StartSpec::At(t) => return Dur(t).serialize(s),
            StartSpec::Uniform(lo, hi, per) => {
                m.insert("uniform".into(), serde_json::json!([Dur(lo), Dur(hi)]));
                m.insert("per".into(), per.name().into());
            }
            StartSpec::Spread(lo, hi) => {
                m.insert("spread".into(), serde_json::json!([Dur(lo), Dur(hi)]));
            }
        }
        Value::Object(m).serialize(s)
    }
}

impl Dscp {
    pub fn parse(s: &str) -> Option<u8> {
        let u = s.to_ascii_uppercase();
        let digit = |c: Option<char>| c.and_then(|c| c.to_digit(10));
        match u.as_str() {
            "BE" | "DF" => Some(0),
            "EF" => Some(46),
            "LE" => Some(1),
            "VA" => Some(44),
            _ if u.len() == 3 && u.starts_with("CS") => {
                digit(u.chars().nth(2)).filter(|&n| n <= 7).map(|n| 8 * n as u8)
            }
            _ if u.len() == 4 && u.starts_with("AF") => {
                let (x, y) = (digit(u.chars().nth(2))?, digit(u.chars().nth(3))?);
                ((1..=4).contains(&x) && (1..=3).contains(&y)).then_some((8 * x + 2 * y) as u8)
            }
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Dscp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let allowed = "0 to 63, or a name: BE, CS0-CS7, AF11-AF43, EF, LE, VA";
        match Value::deserialize(d)? {
            Value::Number(n) if n.as_u64().is_some_and(|v| v <= 63) => {
                Ok(Dscp(n.as_u64().unwrap_or(0) as u8))
            }
            Value::String(s) => Dscp::parse(&s)
                .map(Dscp)
                .ok_or_else(|| de::Error::custom(format!("{s:?} is not allowed; allowed: {allowed}"))),
            v => Err(de::Error::custom(format!(
                "{v} is not allowed; allowed: {allowed}"
            ))),
        }
    }
}

impl Serialize for Dscp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// A named value written back as the boolean that stands for it when the key writes those
/// (a key's values before it had more than two, so that a resolved scenario reads as it did),
/// else as its name.
fn write_named<T: Named, S: Serializer>(v: T, s: S) -> Result<S::Ok, S::Error> {
    match v {
        v if T::WRITES_BOOLS && v == T::BOOLS.0 => s.serialize_bool(true),
        v if T::WRITES_BOOLS && v == T::BOOLS.1 => s.serialize_bool(false),
        v => s.serialize_str(v.name()),
    }
}

/// The keys of named values ([`Named`]): read from a name or a boolean, written by
/// [`write_named`].
macro_rules! named_serde {
    ($($t:ident),*) => {$(
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $t::read(&Value::deserialize(d)?).map_err(de::Error::custom)
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                write_named(*self, s)
            }
        }
    )*};
}

named_serde!(Hystart, EcnMode, CwndLimited);
