//! CAKE's shaper (Linux sch_cake.c `cake_set_rate`, `cake_calc_overhead`, `cake_advance_shaper`):
//! deficit mode, as sch_fq, so it needs no burst size. Each packet advances the time the next may
//! leave by its adjusted length at the rate, with the rate kept as nanoseconds per byte in fixed
//! point (`rate_ns >> rate_shft`, 34 bits of mantissa); a failsafe clock runs at 1.5 times the
//! packet time. The adjusted length is the IP length plus the framing `overhead` (may be
//! negative), at least `mpu`, then rounded up to whole ATM cells (48 payload bytes in 53) or
//! PTM's 64/65 coding (one byte per 64 or part).

use crate::units::{fmt_rate, parse_rate, Rate, Time};
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;

/// The shaped rate: a rate, or "unlimited" (no shaping, as Linux's default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bandwidth(pub Option<u64>);

const UNLIMITED: &str = "unlimited";

impl<'de> Deserialize<'de> for Bandwidth {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d).map_err(|_| {
            de::Error::custom(
                "expected a rate such as \"20Mbps\" (units bps, Kbps, Mbps, Gbps) or \"unlimited\"",
            )
        })?;
        if s.trim() == UNLIMITED {
            return Ok(Bandwidth(None));
        }
        match parse_rate(&s) {
            Ok(0) => Err(de::Error::custom(
                "0bps is not allowed; allowed: a positive rate or \"unlimited\"",
            )),
            Ok(r) => Ok(Bandwidth(Some(r))),
            Err(e) => Err(de::Error::custom(format!("{e}, or \"unlimited\""))),
        }
    }
}

impl Serialize for Bandwidth {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(r) => s.serialize_str(&fmt_rate(r)),
            None => s.serialize_str(UNLIMITED),
        }
    }
}

impl JsonSchema for Bandwidth {
    fn schema_name() -> Cow<'static, str> {
        "Bandwidth".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({"anyOf": [g.subschema_for::<Rate>(), {"const": UNLIMITED}]})
    }
}

/// The link-layer cell framing compensated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Atm {
    /// none
    None,
    /// ATM: 48 payload bytes in each 53-byte cell (ADSL)
    Atm,
    /// PTM 64/65 coding (VDSL2)
    Ptm,
}

/// How a packet's length is charged to the shaper.
#[derive(Clone, Copy, Debug)]
pub struct Framing {
    pub overhead: i32,
    pub mpu: u32,
    pub atm: Atm,
}

impl Framing {
    /// The length the shaper charges for an IP packet of `len` bytes (`cake_calc_overhead`).
    pub fn adjusted(&self, len: u32) -> u32 {
        let len = (len as i64 + self.overhead as i64).max(self.mpu as i64).max(0) as u32;
        match self.atm {
            Atm::None => len,
            Atm::Atm => len.div_ceil(48) * 53,
            Atm::Ptm => len + len.div_ceil(64),
        }
    }
}

/// A rate as time per byte in fixed point (`cake_set_rate`): ns per byte = `ns >> shift`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteTime {
    pub ns: u64,
    pub shift: u32,
}

impl ByteTime {
    /// For `bytes_per_s` (0: unlimited, every duration 0).
    pub fn new(bytes_per_s: u64) -> ByteTime {
        const MIN_RATE: u64 = 64;
        if bytes_per_s == 0 {
            return ByteTime::default();
        }
        let mut shift = 34;
        let mut ns = (1_000_000_000u64 << shift) / bytes_per_s.max(MIN_RATE);
        while ns >> 34 != 0 {
            ns >>= 1;
            shift -= 1;
        }
        ByteTime { ns, shift }
    }

    /// The time `len` bytes take.
    pub fn duration(&self, len: u32) -> Time {
        (len as u64 * self.ns) >> self.shift
    }

    pub fn unlimited(&self) -> bool {
        self.ns == 0
    }
}

/// The global shaper's clocks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shaper {
    pub rate: ByteTime,
    pub next: Time,
    pub failsafe: Time,
}

impl Shaper {
    /// When the shaper lets the next packet go, if that is after `now`.
    pub fn throttled(&self, now: Time) -> Option<Time> {
        (self.next > now && self.failsafe > now).then(|| self.next.min(self.failsafe))
    }

    /// The queue was empty and a packet arrives at `now`: a clock in the past restarts at now.
    pub fn restart(&mut self, now: Time) {
        if self.next < now {
            self.next = now;
            self.failsafe = now;
        }
    }

    /// Charges a packet of adjusted length `len` (a dropped one does not move the failsafe).
    pub fn advance(&mut self, len: u32, dropped: bool) {
        let d = self.rate.duration(len);
        self.next += d;
        if !dropped {
            self.failsafe += d + (d >> 1);
        }
    }
}

/// A tin's own clock (`time_next_packet` of `cake_tin_data`): it never falls behind now by more
/// than it just charged, so a tin below its share is served first.
pub fn advance_tin(next: &mut Time, rate: &ByteTime, len: u32, now: Time) {
    let d = rate.duration(len);
    if *next < now {
        *next += d;
    } else if *next < now + d {
        *next = now + d;
    }
}
