//! The parameter machinery shared by every layer that reads a table of keys (a discipline's,
//! a flow's, TCP's, a congestion controller's): each group of keys is one typed struct (serde +
//! schemars derive). Its serde field names are the keys the table accepts (and the unknown-key
//! check lists), its field types the values (parsed here, and typed in `aqmlab schema`), its doc
//! comments the help of `aqmlab list` and of the schema, its presets the defaults, and the
//! struct written back is the resolved table. A discipline's table is one or more groups (e.g.
//! PIE's keys and the `limit` of the queue it controls; `queue::QdiscInfo::params` lists them),
//! a congestion controller's `cc_params` table one (`transport::cc::CcInfo::params`): the
//! unknown-key check ([`check_keys`]), the help ([`group_docs`]) and the schema properties
//! ([`group_properties`]) of both come from the groups here.
//! Errors name the key, the value and what is allowed, in one form for every table.

use crate::units::{fmt_time, Time};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One group of keys, as a discipline's registry entry (or TCP's, a flow kind's) holds it.
#[derive(Clone, Copy)]
pub struct Group {
    /// The keys, in declaration order.
    pub keys: fn() -> &'static [&'static str],
    /// The struct's schema: each key's value type and, from its doc comment, its help.
    pub schema: fn(&mut SchemaGenerator) -> Schema,
}

impl Group {
    pub const fn of<T: JsonSchema + DeserializeOwned>() -> Group {
        Group {
            keys: keys::<T>,
            schema: T::json_schema,
        }
    }

    /// The group's keys with their help (the doc comments, one line each).
    pub fn docs(&self) -> Vec<ParamDoc> {
        let schema = (self.schema)(&mut SchemaGenerator::default());
        let props = schema.get("properties").and_then(Value::as_object);
        (self.keys)()
            .iter()
            .map(|k| {
                let help = props
                    .and_then(|p| p.get(*k))
                    .and_then(|p| p.get("description"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                ParamDoc {
                    name: k,
                    help: help.split_whitespace().collect::<Vec<_>>().join(" "),
                }
            })
            .collect()
    }
}

/// Every key of `groups` (one table's groups, in order).
pub fn group_keys(groups: &[Group]) -> Vec<&'static str> {
    groups.iter().flat_map(|g| (g.keys)().iter().copied()).collect()
}

/// Every key of `groups` with its help, in order (what `aqmlab list` prints).
pub fn group_docs(groups: &[Group]) -> Vec<ParamDoc> {
    groups.iter().flat_map(|g| g.docs()).collect()
}

/// The schema properties of `groups` (each key's value type and help, from its struct), for
/// a table's schema in `aqmlab schema`.
pub fn group_properties(groups: &[Group], g: &mut SchemaGenerator) -> serde_json::Map<String, Value> {
    let mut props = serde_json::Map::new();
    for group in groups {
        if let Some(Value::Object(m)) = (group.schema)(g).get("properties") {
            props.extend(m.clone());
        }
    }
    props
}

/// Rejects a key of `table` that `groups` do not declare, naming it, `owner` (the discipline
/// or controller whose table it is) and every key that is allowed, with the closest as a
/// suggestion. The list is the groups' (what `aqmlab list` prints), so the accepted keys are
/// declared once.
pub fn check_keys(table: &Value, owner: &str, groups: &[Group]) -> Result<(), String> {
    let Value::Object(m) = table else {
        return Ok(());
    };
    let names = group_keys(groups);
    for k in m.keys() {
        if !names.contains(&k.as_str()) {
            let hint = closest(k, &names).map_or(String::new(), |c| format!(" (did you mean `{c}`?)"));
            let allowed = if names.is_empty() {
                format!("none ({owner} takes no parameters)")
            } else {
                names.join(", ")
            };
            return Err(format!(
                "{k}: unknown parameter of {owner}{hint}; allowed: {allowed}"
            ));
        }
    }
    Ok(())
}

/// A group of keys with defaults: the struct is the resolved table. `C` is what the defaults may
/// depend on besides the keys: a discipline's link (`queue::LinkInfo`), a flow's context.
pub trait Params<C>: Serialize + DeserializeOwned + JsonSchema + Clone {
    /// The key that names a preset (PIE's `profile`), read before the other keys.
    const PRESET: Option<&'static str> = None;
    /// The defaults of the preset `self` names, in `ctx` (a group without presets: itself).
    /// Defaults that belong to the discipline rather than to the preset stay as in `self`.
    fn preset(&self, _ctx: &C) -> Self {
        self.clone()
    }
    /// After the keys are read: the values that come from the context or from several keys,
    /// and the range checks (errors name the key, the value and what is allowed).
    fn finish(&mut self, _ctx: &C) -> Result<(), String> {
        Ok(())
    }
}

/// Reads the keys of `T` in `table` over `defaults` (or over the preset the table names instead):
/// what is left out keeps the preset's value, a wrong value is reported by key.
pub fn read<C, T: Params<C>>(table: &Value, defaults: T, ctx: &C) -> Result<T, String> {
    let own = |only: Option<&str>| -> Vec<(String, Value)> {
        let keys = keys::<T>();
        table
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| keys.contains(&k.as_str()) && only.is_none_or(|o| o == k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let over = |base: &T, keys: Vec<(String, Value)>| -> Result<T, String> {
        let mut v = serde_json::to_value(base).expect("parameters serialise");
        for (k, x) in keys {
            v[k.as_str()] = x;
        }
        parse(&v)
    };
    let base = match T::PRESET {
        Some(key) if table.get(key).is_some() => over(&defaults, own(Some(key)))?.preset(ctx),
        _ => defaults,
    };
    let mut p = over(&base, own(None))?;
    p.finish(ctx)?;
    Ok(p)
}

/// The serialised form of resolved parameters (every key written out).
pub fn written<T: Serialize>(p: &T) -> Value {
    serde_json::to_value(p).expect("parameters serialise")
}

/// The keys of a struct as serde reads them (after renames), in declaration order: what its
/// derived `Deserialize` passes to `deserialize_struct`.
pub fn keys<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Fields<'a>(&'a mut &'static [&'static str]);
    impl<'de> de::Deserializer<'de> for Fields<'_> {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

/// One key and its help, for `aqmlab list` (e.g. `aqmlab list qdiscs NAME`).
#[derive(Clone, Debug, Serialize)]
pub struct ParamDoc {
    pub name: &'static str,
    pub help: String,
}

/// Deserialises a parameter table into its config type, naming the offending key,
/// the value and what is allowed (an enum's variants are read off the enum itself).
pub fn parse<T: DeserializeOwned>(params: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize::<_, T>(params.clone()).map_err(|e| {
        let path = e.path().to_string();
        let shown_path = key_path(e.path());
        let inner = e.inner().to_string();
        let msg = allowed_message::<T>(params, e.path(), &inner)
            .unwrap_or_else(|| reword(&inner, params.get(&path)));
        if path == "." {
            msg
        } else {
            format!("{shown_path}: {msg}")
        }
    })
}

/// Rewords serde's type errors in the form every message takes, "<value> is not allowed;
/// allowed: <what>": "invalid type: integer `5`, expected a boolean" becomes "5 is not
/// allowed; allowed: a boolean", "unknown variant `x`, expected one of `a`, `b`" becomes
/// "\"x\" is not allowed; allowed: a, b". `value` is the offending value when known. Other
/// messages are returned as they are.
pub fn reword(msg: &str, value: Option<&Value>) -> String {
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((got, list)) = rest.split_once("`, expected one of ") {
            return format!("{got:?} is not allowed; allowed: {}", list.replace('`', ""));
        }
        if let Some((got, one)) = rest.split_once("`, expected ") {
            return format!("{got:?} is not allowed; allowed: {}", one.replace('`', ""));
        }
    }
    let Some(rest) = msg.strip_prefix("invalid type: ") else {
        return msg.to_string();
    };
    let Some((got, expected)) = rest.split_once(", expected ") else {
        return msg.to_string();
    };
    let shown = match value {
        Some(v) => v.to_string(),
        None => match got.split('`').nth(1) {
            Some(v) => v.to_string(),
            None => match got {
                "map" => "a table".to_string(),
                "sequence" => "a list".to_string(),
                g => g.strip_prefix("string ").unwrap_or(g).to_string(),
            },
        },
    };
    let expected = match expected {
        "string or map" => "a string",
        e => e,
    };
    format!("{shown} is not allowed; allowed: {expected}")
}

/// A key path as serde_path_to_error prints it ("flows[0].cc", "." for the top level), except
/// that an empty key is written `""`, so an error about it still names a visible key
/// ("flows[0].\"\"" rather than "flows[0].").
pub fn key_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for (i, seg) in path.iter().enumerate() {
        if !matches!(seg, Segment::Seq { .. }) && i > 0 {
            out.push('.');
        }
        match seg {
            Segment::Map { key } if key.is_empty() => out.push_str("\"\""),
            _ => out.push_str(&seg.to_string()),
        }
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// A range check with a message naming the key, the value and what is allowed.
pub fn check_range<T: PartialOrd + Copy + std::fmt::Display>(
    key: &str,
    v: T,
    lo: T,
    hi: T,
) -> Result<(), String> {
    check_range_fmt(key, v, lo, hi, |x| x.to_string())
}

/// A range check of a duration (ns), printed in units ("20s is out of range; allowed 1ns to 10s").
pub fn check_time(key: &str, v: Time, lo: Time, hi: Time) -> Result<(), String> {
    check_range_fmt(key, v, lo, hi, fmt_time)
}

/// A range check of a size in bytes, printed with its unit ("65537B ...; allowed 0B to 65536B").
pub fn check_bytes(key: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    check_range_fmt(key, v, lo, hi, |b| format!("{b}B"))
}

fn check_range_fmt<T: PartialOrd + Copy>(
    key: &str,
    v: T,
    lo: T,
    hi: T,
    fmt: impl Fn(T) -> String,
) -> Result<(), String> {
    if v < lo || v > hi {
        Err(format!(
            "{key}: {} is out of range; allowed {} to {}",
            fmt(v),
            fmt(lo),
            fmt(hi)
        ))
    } else {
        Ok(())
    }
}

/// The candidate within edit distance 2 of `word` (the closest; the first on ties), if any.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, &cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    candidates
        .iter()
        .map(|c| (distance(word, c), *c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Whether `msg` is one of serde's own messages about a value (a wrong type, an integer out of
/// its type's range, an unknown variant, an untagged enum none of whose forms fits), rather than
/// one of this crate's, which already say what is allowed.
pub fn is_serde_value_error(msg: &str) -> bool {
    [
        "invalid type: ",
        "invalid value: ",
        "unknown variant ",
        "expected ",
        "data did not match ",
    ]
    .iter()
    .any(|p| msg.starts_with(p))
        || msg.contains(" out of range")
}

/// The value at a serde_path_to_error path in `doc`, mutable.
fn at_path<'a>(doc: &'a mut Value, path: &serde_path_to_error::Path) -> Option<&'a mut Value> {
    use serde_path_to_error::Segment;
    let mut at = doc;
    for seg in path.iter() {
        at = match seg {
            Segment::Seq { index } => at.get_mut(*index)?,
            Segment::Map { key } => at.get_mut(key.as_str())?,
            _ => return None,
        };
    }
    Some(at)
}

/// What serde's "expected ..." says, in the words of this crate's messages: an integer type
/// becomes its range, a sequence a list, a struct a table.
fn expected_words(expected: &str) -> String {
    let int = |lo: i128, hi: i128| format!("an integer from {lo} to {hi}");
    match expected.trim_start_matches("a ").trim_start_matches("an ") {
        "u8" => int(0, u8::MAX.into()),
        "u16" => int(0, u16::MAX.into()),
        "u32" => int(0, u32::MAX.into()),
        "u64" | "usize" => int(0, u64::MAX.into()),
        "i8" => int(i8::MIN.into(), i8::MAX.into()),
        "i16" => int(i16::MIN.into(), i16::MAX.into()),
        "i32" => int(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => int(i64::MIN.into(), i64::MAX.into()),
        "f32" | "f64" => "a number".to_string(),
        "sequence" => "a list".to_string(),
        "string or map" => "a string".to_string(),
        e if e.starts_with("struct ") || e == "map" => "a table".to_string(),
        e if e.starts_with("tuple of ") => format!("a list of {}", &e[9..]),
        _ => expected.to_string(),
    }
}

/// Rewrites serde's message about the value at `path` of `doc` (the whole document being
/// deserialised into `T`) as "<value> is not allowed; allowed: <what>", `<what>` read off the
/// type: an enum's variants (asked of the enum itself with a string no variant has), an integer
/// type's range, or what serde says the type expects. `None` when the message is not serde's
/// or the value cannot be found. One mechanism for every key of a `T`.
pub fn allowed_message<T: DeserializeOwned>(
    doc: &Value,
    path: &serde_path_to_error::Path,
    msg: &str,
) -> Option<String> {
    if !is_serde_value_error(msg) {
        return None;
    }
    let mut probe = doc.clone();
    let slot = at_path(&mut probe, path)?;
    let shown = slot.to_string();
    *slot = Value::String("\u{1}".into());
    let mut allowed = None;
    if let Err(e) = serde_path_to_error::deserialize::<_, T>(probe) {
        let same = e.path().to_string() == path.to_string();
        let m = e.into_inner().to_string();
        if same {
            if let Some(i) = m.find("expected one of ") {
                allowed = Some(m[i + 16..].replace('`', ""));
            } else if let Some(i) = m.find("expected `") {
                // an enum of one or two variants: "expected `a`" or "expected `a` or `b`"
                allowed = Some(m[i + 9..].replace("` or `", ", ").replace('`', ""));
            } else if let Some(i) = m.find("expected ") {
                allowed = Some(expected_words(&m[i + 9..]));
            }
        }
    }
    let allowed = allowed.or_else(|| msg.rfind(", expected ").map(|i| expected_words(&msg[i + 11..])))?;
    if allowed == "value" || allowed.is_empty() {
        return None;
    }
    Some(format!("{shown} is not allowed; allowed: {allowed}"))
}
