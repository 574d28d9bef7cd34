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
}

/// One tin's share: its rate is the shaped rate `>> rate_shift`; `quantum` is its DRR weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TinShare {
    pub rate_shift: u32,
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

impl TinMode {
    /// Each tin's share, in tin order.
    pub fn shares(self) -> &'static [TinShare] {
        const fn s(rate_shift: u32, quantum: u16) -> TinShare {
            TinShare { rate_shift, quantum }
        }
        const ONE: [TinShare; 1] = [s(0, 65535)];
        const THREE: [TinShare; 3] = [s(0, 1024), s(4, 64), s(2, 256)];
        const FOUR: [TinShare; 4] = [s(0, 1024), s(4, 64), s(1, 512), s(2, 256)];
        match self {
            TinMode::Besteffort => &ONE,
            TinMode::Diffserv3 => &THREE,
            TinMode::Diffserv4 => &FOUR,
        }
    }

    /// The tin of a packet with DSCP `dscp`.
    pub fn tin(self, dscp: u8) -> usize {
        let d = (dscp & 63) as usize;
        match self {
            TinMode::Besteffort => 0,
            TinMode::Diffserv3 => DIFFSERV3[d] as usize,
            TinMode::Diffserv4 => DIFFSERV4[d] as usize,
        }
    }
}
