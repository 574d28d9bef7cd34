//! The 802.11n PHY (IEEE 802.11n-2009 clause 20, the HT-mixed format): a station's MCS, its
//! data rate and the airtime of a PPDU, and the legacy OFDM rates of the control responses.
//! Below both the medium (`wifi`) and the rate control (`wifi_rate`), which each take a `Phy`.

use crate::units::{Time, US};

/// Data bits per OFDM symbol of one spatial stream, MCS 0-7 (IEEE 802.11n-2009 Tables 20-30
/// and 20-34): 20 MHz and 40 MHz channels. MCS 8-31 use 2-4 streams of the same modulation.
const N_DBPS_20: [u32; 8] = [26, 52, 78, 104, 156, 208, 234, 260];
const N_DBPS_40: [u32; 8] = [54, 108, 162, 216, 324, 432, 486, 540];

/// Legacy OFDM rates (Mb/s) and their data bits per symbol (IEEE 802.11-2012 Table 18-4), for
/// the control response (ACK / block ACK).
pub const LEGACY_RATES: [(u32, u32); 8] = [
    (6, 24),
    (9, 36),
    (12, 48),
    (18, 72),
    (24, 96),
    (36, 144),
    (48, 192),
    (54, 216),
];

/// OFDM symbol with the long guard interval; the short one is 3.6 us.
pub const SYMBOL: Time = 4 * US;
const SYMBOL_SGI: Time = 3_600;
/// SERVICE field bits and tail bits per encoder (20.3.11).
pub const SERVICE_BITS: u32 = 16;
pub const TAIL_BITS: u32 = 6;
/// Legacy preamble + L-SIG (L-STF 8 + L-LTF 8 + L-SIG 4 us).
pub const LEGACY_PREAMBLE: Time = 20 * US;
/// HT-SIG (8 us) + HT-STF (4 us); each HT-LTF 4 us.
const HT_SIG_STF: Time = 12 * US;
const HT_LTF: Time = 4 * US;

/// One station's PHY: its MCS on the medium's channel width and guard interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phy {
    pub mcs: u8,
    pub width40: bool,
    pub short_gi: bool,
}

impl Phy {
    pub fn streams(&self) -> u32 {
        self.mcs as u32 / 8 + 1
    }

    /// Data bits per OFDM symbol over all streams.
    pub fn n_dbps(&self) -> u32 {
        let per = if self.width40 { N_DBPS_40 } else { N_DBPS_20 };
        per[self.mcs as usize % 8] * self.streams()
    }

    pub fn symbol(&self) -> Time {
        if self.short_gi {
            SYMBOL_SGI
        } else {
            SYMBOL
        }
    }

    /// The PHY data rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        self.n_dbps() as u64 * 1_000_000_000 / self.symbol()
    }

    /// Duration of an HT-mixed PPDU carrying `psdu` bytes (TXTIME of 20.4.3: the preamble, the
    /// HT-LTFs of the streams, then whole symbols; with the short guard interval the data part
    /// rounds up to a multiple of 4 us).
    pub fn ppdu(&self, psdu: u32) -> Time {
        let n_ltf = match self.streams() {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        // Rates above 300 Mb/s use two BCC encoders, each with its tail.
        let n_es = if self.rate_bps() > 300_000_000 { 2 } else { 1 };
        let bits = SERVICE_BITS + 8 * psdu + TAIL_BITS * n_es;
        let n_sym = bits.div_ceil(self.n_dbps()) as Time;
        let data = (n_sym * self.symbol()).div_ceil(SYMBOL) * SYMBOL;
        LEGACY_PREAMBLE + HT_SIG_STF + n_ltf * HT_LTF + data
    }
}
