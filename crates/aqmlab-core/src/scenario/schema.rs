//! The JSON Schema (draft 2020-12) of the scenario format, for editor completion and for
//! validation in other tools (`aqmlab schema`). It is derived, not written: the structs of
//! `scenario` give the keys, their types, defaults and doc comments (schemars' derive, which reads
//! the same serde attributes the parser obeys); the hand-parsed values (units, qdiscs, start
//! times, ...) describe themselves below from the tables their parsers use; the flow kinds' keys
//! come from `FlowKind::keys`, the qdiscs and their parameters (value types and help) from the qdisc
//! registry's typed parameter structs (`crate::params`), the
//! controllers and their `cc_params` from the controller registry's (`transport::cc::registry`), the TCP profiles from `PROFILES` and the web pages from `PAGES`.
//!
//! What the schema cannot say (a value's range that depends on other keys, a route's hop names)
//! stays with `aqmlab validate`.

use super::flow::common_keys;
use super::{DelaySpec, Dscp, FlowKind, FlowSpec, QdiscSpec, RateSpec, Scenario, StartSpec, TraceSpec};
use crate::app::webpage::PAGES;
use crate::packet::EcnMode;
use crate::params::group_properties;
use crate::queue::registry as qdiscs;
use crate::transport::cc::{registry as ccs, Hystart};
use crate::transport::tcp::config::CwndLimited;
use crate::transport::tcp::{DelAck, Rwnd, TsoSegs, PROFILES};
use crate::units::Named;
use crate::units::{Dur, Rate, Size};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Value};
use std::borrow::Cow;

/// Python disciplines are named `module:Class` (`aqmlab.pyqdisc`).
const PYTHON_QDISC_PATTERN: &str = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$";

/// `Dscp::parse`'s names in either case (JSON Schema patterns have no case-insensitive flag).
const DSCP_NAME_PATTERN: &str =
    "^([Bb][Ee]|[Dd][Ff]|[Ee][Ff]|[Ll][Ee]|[Vv][Aa]|[Cc][Ss][0-7]|[Aa][Ff][1-4][1-3])$";

impl JsonSchema for RateSpec {
    fn schema_name() -> Cow<'static, str> {
        "RateSchedule".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let step = json!({"type": "array", "prefixItems": [g.subschema_for::<Dur>(), g.subschema_for::<Rate>()],
                          "minItems": 2, "maxItems": 2});
        json_schema!({
            "description": "a rate, or a schedule of [time, rate] steps",
            "anyOf": [g.subschema_for::<Rate>(), {"type": "array", "minItems": 1, "items": step}]
        })
    }
}

impl JsonSchema for DelaySpec {
    fn schema_name() -> Cow<'static, str> {
        "DelaySchedule".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let dur = g.subschema_for::<Dur>();
        let step =
            json!({"type": "array", "prefixItems": [dur.clone(), dur.clone()], "minItems": 2, "maxItems": 2});
        json_schema!({
            "description": "a delay, or a schedule of [time, delay] steps",
            "anyOf": [dur, {"type": "array", "minItems": 1, "items": step}]
        })
    }
}

impl JsonSchema for TraceSpec {
    fn schema_name() -> Cow<'static, str> {
        "Trace".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "a trace file in Mahimahi's format (one delivery opportunity per line, \
                            its time in ms), relative to the scenario's file; or its lines",
            "anyOf": [{"type": "string", "minLength": 1}, {
                "type": "object", "required": ["ms"], "additionalProperties": false,
                "properties": {
                    "file": {"type": "string"},
                    "ms": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 0}}
                }
            }]
        })
    }
}

impl JsonSchema for QdiscSpec {
    fn schema_name() -> Cow<'static, str> {
        "Qdisc".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let qdiscs = qdiscs::all();
        let names: Vec<&str> = qdiscs.iter().map(|q| q.name).collect();
        let tables: Vec<Value> = qdiscs
            .iter()
            .map(|q| {
                let mut props = serde_json::Map::new();
                props.insert("kind".into(), json!({"const": q.name}));
                // each key's value type and help from its struct
                props.extend(group_properties(q.params, g));
                json!({"type": "object", "description": q.summary, "properties": props,
                       "required": ["kind"], "additionalProperties": false})
            })
            .collect();
        let python = json!({"type": "object", "required": ["kind"],
                            "properties": {"kind": {"type": "string", "pattern": PYTHON_QDISC_PATTERN}}});
        json_schema!({
            "description": "a queue discipline: its name, or a table with `kind` and its parameters \
                            (`aqmlab list qdiscs`); `module:Class` for one written in Python",
            "anyOf": [{"enum": names}, {"type": "string", "pattern": PYTHON_QDISC_PATTERN},
                      {"oneOf": tables}, python]
        })
    }
}

impl JsonSchema for StartSpec {
    fn schema_name() -> Cow<'static, str> {
        "Start".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let dur = g.subschema_for::<Dur>();
        let range = json_schema!({"type": "array", "prefixItems": [dur.clone(), dur.clone()], "minItems": 2, "maxItems": 2});
        json_schema!({
            "description": "a time; an offset drawn uniformly per run seed; or the entry's flows \
                            spread evenly, flow i of n at lo + i (hi - lo) / n",
            "anyOf": [dur, {
                "type": "object", "required": ["uniform"], "additionalProperties": false,
                "properties": {
                    "uniform": range.clone(),
                    "per": {"enum": ["group", "flow"]}
                }
            }, {
                "type": "object", "required": ["spread"], "additionalProperties": false,
                "properties": {"spread": range}
            }]
        })
    }
}

impl JsonSchema for Dscp {
    fn schema_name() -> Cow<'static, str> {
        "Dscp".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "0 to 63, or a name: BE, DF, CS0-CS7, AF11-AF43, EF, LE, VA",
            "anyOf": [{"type": "integer", "minimum": 0, "maximum": 63},
                      {"type": "string", "pattern": DSCP_NAME_PATTERN}]
        })
    }
}

impl JsonSchema for DelAck {
    fn schema_name() -> Cow<'static, str> {
        "DelAck".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({"description": "a delayed-ACK timer, true (40 ms) or false (ACK every segment)",
                      "anyOf": [g.subschema_for::<Dur>(), {"type": "boolean"}]})
    }
}

/// The keys of named values ([`Named`]): one of the names, or a boolean.
macro_rules! named_schema {
    ($($t:ident),*) => {$(
        impl JsonSchema for $t {
            fn schema_name() -> Cow<'static, str> {
                stringify!($t).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                $t::schema()
            }
        }
    )*};
}

named_schema!(Hystart, EcnMode, CwndLimited);

impl JsonSchema for Rwnd {
    fn schema_name() -> Cow<'static, str> {
        "Rwnd".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let segments = json!({"type": "object", "required": ["segments"], "additionalProperties": false,
                              "properties": {"segments": {"type": "integer", "minimum": 1}}});
        json_schema!({"description": "a receive window: a size, or a number of segments of the mss",
                      "anyOf": [g.subschema_for::<Size>(), segments]})
    }
}

impl JsonSchema for TsoSegs {
    fn schema_name() -> Cow<'static, str> {
        "TsoSegs".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"description": "segments per paced burst, or \"auto\" (Linux tcp_tso_autosize)",
                      "anyOf": [{"const": "auto"}, {"type": "integer", "minimum": 1, "maximum": 64}]})
    }
}

/// The schema of a scenario (the TOML file read as JSON, or the resolved scenario
/// `aqmlab validate --json` prints).
pub fn scenario_schema() -> Value {
    let mut root = serde_json::to_value(schemars::schema_for!(Scenario)).expect("schemas serialise");
    root["title"] = json!("aqmlab scenario");
    let flow_name = FlowSpec::schema_name();
    // The kinds' keys: each group's struct gives its keys' value types and help.
    let mut kind_props = serde_json::Map::new();
    let mut g = SchemaGenerator::default();
    // Each controller's `cc_params` keys (value types and help) from its struct, applied when
    // the entry names the controller.
    let cc_tables: Vec<Value> = ccs::all()
        .iter()
        .map(|c| {
            let table = json!({"type": ["object", "null"], "description": c.summary,
                               "properties": group_properties(c.params, &mut g),
                               "additionalProperties": false});
            json!({"if": {"properties": {"cc": {"const": c.name}}, "required": ["cc"]},
                   "then": {"properties": {"cc_params": table}}})
        })
        .collect();
    for kind in FlowKind::ALL {
        for group in kind.groups() {
            if let Some(Value::Object(m)) = (group.schema)(&mut g).get("properties") {
                kind_props.extend(m.clone());
            }
        }
    }
    let defs = serde_json::to_value(g.take_definitions(true)).expect("schemas serialise");
    if let (Some(root_defs), Value::Object(more)) = (root["$defs"].as_object_mut(), defs) {
        for (k, v) in more {
            root_defs.entry(k).or_insert(v);
        }
    }
    let flow = &mut root["$defs"][flow_name.as_ref()];
    flow.as_object_mut()
        .expect("an object schema")
        .remove("additionalProperties");
    let props = flow["properties"].as_object_mut().expect("properties");
    props.extend(kind_props);
    let kinds: Vec<&str> = FlowKind::ALL.iter().map(|k| k.name()).collect();
    flow["properties"]["kind"] =
        json!({"enum": kinds, "description": "the flow's kind; it decides the other keys"});
    flow["properties"]["cc"] =
        json!({"enum": ccs::names(), "description": "congestion control (`aqmlab list ccs`)"});
    let profiles: Vec<&str> = PROFILES.iter().map(|p| p.name()).collect();
    flow["properties"]["profile"] =
        json!({"enum": profiles, "description": "TCP profile (`aqmlab list tcp`)"});
    let pages: Vec<&str> = PAGES.iter().map(|p| p.0).collect();
    flow["properties"]["page"] = json!({"enum": pages, "description": "a built-in web page"});
    // Each kind accepts the common keys and its own groups' (`FlowKind::groups`), as `validate`
    // checks.
    let per_kind: Vec<Value> = FlowKind::ALL
        .iter()
        .map(|kind| {
            let mut keys: Vec<&str> = common_keys().iter().map(String::as_str).collect();
            keys.extend(kind.keys());
            json!({"if": {"properties": {"kind": {"const": kind.name()}}}, "then": {"propertyNames": {"enum": keys}}})
        })
        .collect();
    flow["allOf"] = Value::Array(per_kind.into_iter().chain(cc_tables).collect());
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flow_key_of_every_kind_is_a_property() {
        let root = scenario_schema();
        let props = root["$defs"][FlowSpec::schema_name().as_ref()]["properties"]
            .as_object()
            .expect("properties")
            .clone();
        for kind in FlowKind::ALL {
            for key in common_keys().iter().map(String::as_str).chain(kind.keys()) {
                assert!(props.contains_key(key), "{kind}: {key} is not in the schema");
            }
        }
    }

    /// A schema with its `$ref` followed (into the root's `$defs`).
    fn resolved<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => resolved(root, &root["$defs"][r.trim_start_matches("#/$defs/")]),
            None => s,
        }
    }

    /// Whether a key's schema (or one of its `anyOf` forms) is an enum or an integer.
    fn enum_or_integer(root: &Value, s: &Value) -> bool {
        let s = resolved(root, s);
        let integer =
            |t: &Value| t == "integer" || t.as_array().is_some_and(|a| a.contains(&json!("integer")));
        s.get("enum").is_some()
            || s.get("type").is_some_and(integer)
            || ["anyOf", "oneOf"].iter().any(|k| {
                s.get(*k)
                    .and_then(Value::as_array)
                    .is_some_and(|forms| forms.iter().any(|f| enum_or_integer(root, f)))
            })
    }

    /// Every enum-valued and integer-valued key below `s`, as a path of object keys and list
    /// indices (a list's first item).
    fn keys(root: &Value, s: &Value, at: Vec<Value>, out: &mut Vec<Vec<Value>>, depth: usize) {
        let s = resolved(root, s);
        if depth > 6 {
            return;
        }
        if enum_or_integer(root, s) && !at.is_empty() {
            out.push(at.clone());
        }
        let mut forms: Vec<&Value> = vec![s];
        for k in ["anyOf", "oneOf"] {
            if let Some(a) = s.get(k).and_then(Value::as_array) {
                forms.extend(a.iter().map(|f| resolved(root, f)));
            }
        }
        for f in forms {
            if let Some(props) = f.get("properties").and_then(Value::as_object) {
                for (k, v) in props {
                    let mut p = at.clone();
                    p.push(json!(k));
                    keys(root, v, p, out, depth + 1);
                }
            }
            if f.get("type") == Some(&json!("array")) {
                if let Some(items) = f.get("items").filter(|i| i.is_object()) {
                    let mut p = at.clone();
                    p.push(json!(0));
                    keys(root, items, p, out, depth + 1);
                }
            }
        }
    }

    /// A valid scenario to set keys in.
    fn base() -> Value {
        json!({
            "duration": "10s",
            "topology": {"rtt": "50ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
            "flows": [{"kind": "tcp"}],
            "record": {"level": "summary"},
        })
    }

    #[test]
    fn every_enum_and_integer_key_refuses_wrong_values_naming_key_value_and_allowed() {
        let root = scenario_schema();
        let mut found = Vec::new();
        keys(&root, &root, Vec::new(), &mut found, 0);
        found.sort_by_key(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        found.dedup();
        assert!(found.len() > 20, "only {} keys found", found.len());
        let wrong = [
            json!(true),
            json!(7),
            json!("bogus"),
            json!(-1),
            json!(2.5),
            json!(null),
            json!([1]),
        ];
        let mut checked = 0;
        let mut bad = Vec::new();
        for path in &found {
            // a flow's kind-specific key is tried on a flow of a kind that has it
            let kind = match path.as_slice() {
                [f, _, k] if f == "flows" => FlowKind::ALL
                    .iter()
                    .find(|kind| kind.keys().iter().any(|x| Some(*x) == k.as_str()))
                    .copied(),
                _ => None,
            };
            let shown: Vec<String> = path
                .iter()
                .map(|s| match s {
                    Value::Number(n) => format!("[{n}]"),
                    s => format!(".{}", s.as_str().unwrap_or_default()),
                })
                .collect();
            let key = shown.concat().trim_start_matches('.').replace(".[", "[");
            for v in &wrong {
                let mut sc = base();
                if let Some(kind) = kind {
                    sc["flows"][0]["kind"] = json!(kind.name());
                }
                let mut at = &mut sc;
                for s in path {
                    at = match s {
                        Value::Number(n) => {
                            let i = n.as_u64().unwrap_or(0) as usize;
                            if !at.is_array() {
                                *at = json!([{}]);
                            }
                            &mut at[i]
                        }
                        s => &mut at[s.as_str().unwrap_or_default()],
                    };
                }
                *at = v.clone();
                let Err(e) = super::super::parse(&sc.to_string()) else {
                    continue;
                };
                if !e.starts_with(&format!("{key}:")) {
                    // refused for another key first (an item missing a key it needs)
                    continue;
                }
                checked += 1;
                let msg = e[key.len() + 1..].trim();
                let generic = msg.starts_with("expected") || msg.starts_with("invalid");
                if generic || !msg.contains("allowed") || !msg.contains(&v.to_string()) {
                    bad.push(format!("{key} = {v}: {e}"));
                }
            }
        }
        assert!(bad.is_empty(), "{} messages:\n{}", bad.len(), bad.join("\n"));
        assert!(checked > 100, "only {checked} refusals checked");
    }
}
