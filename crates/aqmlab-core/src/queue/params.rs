//! A discipline's parameters declared once: each group of keys is one typed struct (serde +
//! schemars derive). Its serde field names are the keys the table accepts (and the unknown-key
//! check lists), its field types the values (parsed here, and typed in `aqmlab schema`), its doc
//! comments the help of `aqmlab list qdiscs NAME` and of the schema, its presets the defaults, and
//! the struct written back is the resolved table. A discipline's table is one or more groups
//! (e.g. PIE's keys and the `limit` of the queue it controls); [`QdiscInfo::params`] lists them.
//!
//! [`QdiscInfo::params`]: super::QdiscInfo::params

use super::{parse_params, LinkInfo, ParamDoc};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One group of a discipline's keys, as the registry holds it.
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

/// A group of keys with defaults: the struct is the resolved table. `C` is what the defaults may
/// depend on besides the keys: a discipline's link ([`LinkInfo`]), a flow's context.
pub trait Params<C = LinkInfo>: Serialize + DeserializeOwned + JsonSchema + Clone {
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
        parse_params(&v)
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
