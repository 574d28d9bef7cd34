//! 802.11e/WMM access categories (`topology.wifi.access = "edca"`): which access category (AC)
//! a packet's DSCP puts it in, each AC's contention parameters per role, and EDCA's contention
//! between every AC of every transmitter on the medium.
//!
//! - DSCP to user priority: Linux's `cfg80211_classify8021d` (net/wireless/util.c, as in 3.14)
//!   takes the DS field's three precedence bits, `(tos & 0xfc) >> 5`, i.e. the DSCP's top three
//!   bits: CS1 -> 1, CS5 and EF -> 5, CS0 -> 0. (Linux 6.5 moved to RFC 8325's table, which
//!   maps EF to 6; the study's kernels are older.)
//! - User priority to AC: mac80211's `ieee802_1d_to_ac` (net/mac80211/wme.c, used by
//!   `ieee80211_select_queue`): 1 and 2 -> BK, 0 and 3 -> BE, 4 and 5 -> VI, 6 and 7 -> VO.
//! - Each AC contends with its own AIFSN, CWmin, CWmax and TXOP limit. The access point uses
//!   its own queues' parameters (hostapd's `tx_queue` defaults, `hostapd_config_defaults` in
//!   src/ap/ap_config.c: the AP's EDCA table of IEEE 802.11-2012, BE's CWmax 63, VI and VO with
//!   AIFSN 1); a station those the AP advertises in its WMM element (hostapd's `wmm_ac_params`
//!   defaults, IEEE 802.11-2012 Table 8-105), which mac80211 applies to the station's queues
//!   (`ieee80211_sta_wmm_params`, net/mac80211/mlme.c) and the driver to the hardware
//!   (ath9k `ath9k_conf_tx`, iwlwifi dvm `iwlagn_mac_conf_tx`).
//! - Contention (IEEE 802.11-2012 9.19.2): after the medium goes idle each AC with a frame waits
//!   its AIFS = SIFS + AIFSN x slot, then counts its backoff down one slot at a time. The AC
//!   whose AIFSN + backoff is the smallest transmits; the others keep the slots left (an AC
//!   whose AIFS had not ended counted none), as ns-3's `ChannelAccessManager` counts them. Two
//!   ACs of one transmitter ending in the same slot collide internally (9.19.2.4): the higher AC
//!   transmits, the lower one doubles its window as after a collision on the air; two
//!   transmitters ending in the same slot collide on the air.

use crate::packet::user_priority;
use crate::units::{Time, US};

/// The access categories, in priority order (an internal collision goes to the higher).
pub const AC_BK: usize = 0;
pub const AC_BE: usize = 1;
pub const AC_VI: usize = 2;
pub const AC_VO: usize = 3;
pub const N_AC: usize = 4;
pub const AC_NAMES: [&str; N_AC] = ["bk", "be", "vi", "vo"];

/// mac80211's `ieee802_1d_to_ac`, by user priority.
const UP_TO_AC: [usize; 8] = [AC_BE, AC_BK, AC_BK, AC_BE, AC_VI, AC_VI, AC_VO, AC_VO];

/// The access category of a packet with this DSCP.
pub fn ac_of(dscp: u8) -> usize {
    UP_TO_AC[user_priority(dscp) as usize]
}

/// One AC's contention parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcParams {
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// The TXOP limit (0: one frame, an A-MPDU being one PPDU, per access).
    pub txop: Time,
}

/// Backoff stages the contention window may double through (1023 = 16 << 6 - 1 is reached
/// from CWmin 15 at stage 6; the cap only keeps the shift finite).
pub const MAX_STAGE: u32 = 10;

impl AcParams {
    /// The contention window after `stage` failed attempts: (CWmin + 1) x 2^stage - 1, at most
    /// CWmax (IEEE 802.11-2012 9.3.3, 9.19.2.5).
    pub fn cw(&self, stage: u32) -> u32 {
        (((self.cw_min + 1) << stage.min(MAX_STAGE)) - 1).min(self.cw_max)
    }
}

const fn ac(aifsn: u32, cw_min: u32, cw_max: u32, txop_us: u64) -> AcParams {
    AcParams {
        aifsn,
        cw_min,
        cw_max,
        txop: txop_us * US,
    }
}

/// A role's table of the four ACs (scenario `topology.wifi.ap_edca` and `station_edca`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdcaTable {
    /// The access point's own queues: hostapd's `tx_queue` defaults (aCWmin 15, aCWmax 1023 of
    /// the OFDM PHY): BK 7/15/1023, BE 3/15/63, VI 1/7/15 with a 3.0 ms burst, VO 1/3/7 with
    /// 1.5 ms; the bursts reach the driver as TXOP limits in 32 us units, rounded
    /// (`(burst x 100 + 16) / 32` in hostapd's nl80211 driver): 3008 us and 1504 us.
    Ap,
    /// The WMM parameters the access point advertises and its stations use: hostapd's
    /// `wmm_ac_params` defaults: BK 7/15/1023, BE 3/15/1023, VI 2/7/15 with 3008 us, VO
    /// 2/3/7 with 1504 us.
    Station,
}

impl EdcaTable {
    pub const NAMES: [&'static str; 2] = ["ap", "station"];

    pub fn parse(name: &str) -> Option<EdcaTable> {
        match name {
            "ap" => Some(EdcaTable::Ap),
            "station" => Some(EdcaTable::Station),
            _ => None,
        }
    }

    /// The four ACs' parameters, indexed by AC (`AC_BK` ..).
    pub fn params(self) -> [AcParams; N_AC] {
        match self {
            EdcaTable::Ap => [
                ac(7, 15, 1023, 0),
                ac(3, 15, 63, 0),
                ac(1, 7, 15, 3008),
                ac(1, 3, 7, 1504),
            ],
            EdcaTable::Station => [
                ac(7, 15, 1023, 0),
                ac(3, 15, 1023, 0),
                ac(2, 7, 15, 3008),
                ac(2, 3, 7, 1504),
            ],
        }
    }
}

/// One contender: a transmitter (its index among the medium's), one of its ACs, that AC's
/// AIFSN and the backoff slots it has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contender {
    pub port: usize,
    pub ac: usize,
    pub aifsn: u32,
    pub backoff: u32,
}

/// The outcome of one contention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// Slots after SIFS until the winners transmit: the smallest AIFSN + backoff.
    pub slots: u32,
    /// The transmitting (port, AC) pairs: one per port whose count ended (two or more: a
    /// collision on the air).
    pub winners: Vec<(usize, usize)>,
    /// The (port, AC) pairs that lost an internal collision.
    pub internal: Vec<(usize, usize)>,
    /// The backoff each contender has left afterwards, in the order given (0 for the winners
    /// and the internal losers, who draw anew).
    pub left: Vec<u32>,
}

/// Resolves one contention among `c`, whose backoffs are drawn.
pub fn contend(c: &[Contender]) -> Round {
    let slots = c.iter().map(|x| x.aifsn + x.backoff).min().expect("a contender");
    let mut winners: Vec<(usize, usize)> = Vec::new();
    let mut internal = Vec::new();
    let mut left = Vec::with_capacity(c.len());
    for x in c {
        let counted = slots.saturating_sub(x.aifsn);
        let rest = x.backoff - counted.min(x.backoff);
        left.push(rest);
        if x.aifsn + x.backoff != slots {
            continue;
        }
        match winners.iter_mut().find(|w| w.0 == x.port) {
            Some(w) if w.1 < x.ac => {
                internal.push(*w);
                w.1 = x.ac;
            }
            Some(_) => internal.push((x.port, x.ac)),
            None => winners.push((x.port, x.ac)),
        }
    }
    Round {
        slots,
        winners,
        internal,
        left,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dscp_maps_as_linux_3_14() {
        // cfg80211_classify8021d: (tos & 0xfc) >> 5; ieee802_1d_to_ac. RRUL's marks: CS0 (0) ->
        // UP 0 -> BE; CS1 (8) -> UP 1 -> BK; CS5 (40) -> UP 5 -> VI; EF (46) -> UP 5 -> VI.
        // Others by hand: AF21 (18) -> UP 2 -> BK; CS3 (24) -> 3 -> BE; AF41 (34) -> 4 -> VI;
        // CS6 (48) -> 6 -> VO; CS7 (56) -> 7 -> VO.
        for (dscp, up, want) in [
            (0, 0, AC_BE),
            (8, 1, AC_BK),
            (40, 5, AC_VI),
            (46, 5, AC_VI),
            (18, 2, AC_BK),
            (24, 3, AC_BE),
            (34, 4, AC_VI),
            (48, 6, AC_VO),
            (56, 7, AC_VO),
        ] {
            assert_eq!(user_priority(dscp), up, "dscp {dscp}");
            assert_eq!(ac_of(dscp), want, "dscp {dscp}");
        }
    }

    #[test]
    fn aifs_per_ac_and_role() {
        // AIFS = SIFS 16 us + AIFSN x 9 us (5 GHz OFDM). The AP's own: BK 79, BE 43, VI 25,
        // VO 25 us; a station's: BK 79, BE 43, VI 34, VO 34 us.
        let aifs = |t: EdcaTable| t.params().map(|p| 16 + 9 * p.aifsn);
        assert_eq!(aifs(EdcaTable::Ap), [79, 43, 25, 25]);
        assert_eq!(aifs(EdcaTable::Station), [79, 43, 34, 34]);
        // Windows: BE doubles 15, 31, 63 and stops at the AP's 63 but a station's 1023; VI
        // 7, 15, 15.
        let ap = EdcaTable::Ap.params();
        let sta = EdcaTable::Station.params();
        assert_eq!(
            (0..4).map(|s| ap[AC_BE].cw(s)).collect::<Vec<_>>(),
            [15, 31, 63, 63]
        );
        assert_eq!(sta[AC_BE].cw(6), 1023);
        assert_eq!((0..3).map(|s| sta[AC_VI].cw(s)).collect::<Vec<_>>(), [7, 15, 15]);
        // hostapd's burst 30 and 15 (0.1 ms): (3000 + 16) / 32 = 94 and (1500 + 16) / 32 = 47
        // units of 32 us.
        assert_eq!(ap[AC_VI].txop, 94 * 32 * US);
        assert_eq!(ap[AC_VO].txop, 47 * 32 * US);
        assert_eq!(ap[AC_VI].txop, sta[AC_VI].txop);
    }

    fn c(port: usize, ac: usize, aifsn: u32, backoff: u32) -> Contender {
        Contender {
            port,
            ac,
            aifsn,
            backoff,
        }
    }

    #[test]
    fn the_smallest_aifs_plus_backoff_wins_and_the_others_keep_their_rest() {
        // The AP's VI (AIFSN 1, backoff 4: slot 5) against a station's BE (AIFSN 3, backoff 6:
        // slot 9) and BK (AIFSN 7, backoff 2: slot 9). The AP transmits after SIFS + 5 slots;
        // BE counted 5 - 3 = 2 slots (4 left), BK none (its AIFS would end at slot 7).
        let r = contend(&[c(0, AC_VI, 1, 4), c(1, AC_BE, 3, 6), c(1, AC_BK, 7, 2)]);
        assert_eq!(r.slots, 5);
        assert_eq!(r.winners, vec![(0, AC_VI)]);
        assert!(r.internal.is_empty());
        assert_eq!(r.left, vec![0, 4, 2]);
    }

    #[test]
    fn an_internal_collision_goes_to_the_higher_ac() {
        // One transmitter's BE (3 + 2) and VI (2 + 3) both end at slot 5: VI transmits, BE
        // lost an internal collision (IEEE 802.11-2012 9.19.2.4). Given in either order.
        for order in [[(AC_BE, 3, 2), (AC_VI, 2, 3)], [(AC_VI, 2, 3), (AC_BE, 3, 2)]] {
            let cs: Vec<Contender> = order.iter().map(|&(a, n, b)| c(0, a, n, b)).collect();
            let r = contend(&cs);
            assert_eq!(r.slots, 5);
            assert_eq!(r.winners, vec![(0, AC_VI)]);
            assert_eq!(r.internal, vec![(0, AC_BE)]);
        }
        // Two transmitters ending in the same slot collide on the air (both transmit).
        let r = contend(&[c(0, AC_BE, 3, 1), c(1, AC_VI, 2, 2)]);
        assert_eq!(r.winners, vec![(0, AC_BE), (1, AC_VI)]);
    }

    #[test]
    fn one_ac_each_is_dcf() {
        // With one AC of equal AIFSN everywhere the rule is DCF's: the lowest backoff wins after
        // AIFS + that many slots and the others keep the difference.
        let r = contend(&[c(0, AC_BE, 3, 2), c(1, AC_BE, 3, 5)]);
        assert_eq!(
            (r.slots, r.winners.clone(), r.left.clone()),
            (5, vec![(0, AC_BE)], vec![0, 3])
        );
    }
}
