//! CAKE's priority tins (Linux sch_cake.c `cake_config_*` and the DSCP tables): the mode
//! decides how many tins there are, which DSCP goes to which, and each tin's share: its rate
//! (a fraction of the shaped rate, above which it competes at its bandwidth weight) and its
//! DRR weight when unshaped.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The Diffserv presets (tc-cake's keywords).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TinMode {
    /// one tin for everything
    Besteffort,
    /// latency sensitive (CS7, CS6, EF, VA, TOS4), best effort, low priority (LE, CS1)
    Diffserv3,
    /// latency sensitive, streaming media, best effort, background
    Diffserv4,
    /// eight classes: background (LE), high throughput (AF1x, CS1), best effort, video (AF3x,
    /// AF4x, CS3), low-latency transactions (AF2x), interactive (CS2), minimum latency (EF, VA,
    /// CS4, CS5), network control (CS6, CS7)
    Diffserv8,
    /// eight tins by the IP precedence (the DSCP's top three bits)
    Precedence,
}

/// One tin's share: `rate` in bytes per second (0: unshaped); `quantum` is its DRR weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TinShare {
    pub rate: u64,
    pub quantum: u16,
}

/// The tin of each DSCP in diffserv3: 0 best effort, 1 low priority, 2 latency sensitive.
const DIFFSERV3: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, //
    1, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 0, 2, 0, 2, 0, //
    2, 0, 0, 0, 0, 0, 0, 0, //
    2, 0, 0, 0, 0, 0, 0, 0, //
];

/// The tin of each DSCP in diffserv4: 0 best effort, 1 background, 2 streaming, 3 latency
/// sensitive.
const DIFFSERV4: [u8; 64] = [
    0, 1, 0, 0, 2, 0, 0, 0, //
    1, 0, 0, 0, 0, 0, 0, 0, //
    2, 0, 2, 0, 2, 0, 2, 0, //
    2, 0, 2, 0, 2, 0, 2, 0, //
    3, 0, 2, 0, 2, 0, 2, 0, //
    3, 0, 0, 0, 3, 0, 3, 0, //
    3, 0, 0, 0, 0, 0, 0, 0, //
    3, 0, 0, 0, 0, 0, 0, 0, //
];

/// The tin of each DSCP in diffserv8 (0 background ... 7 network control).
const DIFFSERV8: [u8; 64] = [
    2, 0, 1, 2, 4, 2, 2, 2, //
    1, 2, 1, 2, 1, 2, 1, 2, //
    5, 2, 4, 2, 4, 2, 4, 2, //
    3, 2, 3, 2, 3, 2, 3, 2, //
    6, 2, 3, 2, 3, 2, 3, 2, //
    6, 2, 2, 2, 6, 2, 6, 2, //
    7, 2, 2, 2, 2, 2, 2, 2, //
    7, 2, 2, 2, 2, 2, 2, 2, //
];

impl TinMode {
    /// Each tin's share of the shaped rate `rate` (bytes per second), in tin order: fixed
    /// fractions (`cake_config_diffserv3/4`), or for the eight-tin modes each tin 7/8 of the
    /// one below, rate and quantum alike, from 256 (`cake_config_diffserv8/precedence`).
    pub fn shares(self, rate: u64) -> Vec<TinShare> {
        let shifted = |shifts: &[(u32, u16)]| {
            shifts
                .iter()
                .map(|&(shift, quantum)| TinShare {
                    rate: rate >> shift,
                    quantum,
                })
                .collect()
        };
        match self {
            TinMode::Besteffort => shifted(&[(0, 65535)]),
            TinMode::Diffserv3 => shifted(&[(0, 1024), (4, 64), (2, 256)]),
            TinMode::Diffserv4 => shifted(&[(0, 1024), (4, 64), (1, 512), (2, 256)]),
            TinMode::Diffserv8 | TinMode::Precedence => {
                let (mut rate, mut quantum) = (rate, 256u32);
                (0..8)
                    .map(|_| {
                        let s = TinShare {
                            rate,
                            quantum: quantum.max(1) as u16,
                        };
                        rate = (rate * 7) >> 3;
                        quantum = (quantum * 7) >> 3;
                        s
                    })
                    .collect()
            }
        }
    }

    /// The tin of a packet with DSCP `dscp`.
    pub fn tin(self, dscp: u8) -> usize {
        let d = (dscp & 63) as usize;
        match self {
            TinMode::Besteffort => 0,
            TinMode::Diffserv3 => DIFFSERV3[d] as usize,
            TinMode::Diffserv4 => DIFFSERV4[d] as usize,
            TinMode::Diffserv8 => DIFFSERV8[d] as usize,
            TinMode::Precedence => d >> 3,
        }
    }
}
