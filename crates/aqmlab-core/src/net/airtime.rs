//! Airtime fairness in the access point's driver: mac80211's deficit round robin over stations
//! in airtime, with the Airtime Queue Limit (AQL), as Linux 6.x has it (net/mac80211/tx.c and
//! sta_info.c after "wifi: mac80211: switch airtime fairness back to deficit round-robin
//! scheduling", 2022, and its follow-ups: the deficit net of AQL's pending airtime, the
//! recently-active window, the per-PHY AQL limit). The algorithm is the one ath9k had in its own
//! code from Linux 4.11 (drivers/net/wireless/ath/ath9k/xmit.c `ath_txq_schedule`, 300 us
//! quantum; Hoiland-Jorgensen et al., "Ending the Anomaly", USENIX ATC 2017) before mac80211
//! took it over in 5.1. The virtual-time scheduler mac80211 used from 5.14 to 5.19 is not
//! modelled.
//!
//! One list of active stations (mac80211's `local->active_txqs[ac]`; the model has one access
//! category, best effort) in scheduling order, and per station:
//! - a deficit (`sta->airtime[ac].deficit`) that each transmission to it and each reception
//!   from it lowers by its airtime (`ieee80211_sta_register_airtime`) while the station was
//!   active in the last `ACTIVE_WINDOW`, and that the scheduler raises by the quantum
//!   (`sta->airtime_weight`, IEEE80211_DEFAULT_AIRTIME_WEIGHT = 256 us) each time it passes
//!   over the station with a negative deficit;
//! - with AQL, the estimated airtime of its frames handed to the hardware and not yet
//!   completed (`aql_tx_pending`, `ieee80211_sta_update_pending_airtime`), which counts against
//!   the deficit (`ieee80211_sta_deficit`) and holds the station back above its limits
//!   (`ieee80211_txq_airtime_check`).
//!
//! The driver runs scheduling rounds (`ath_txq_schedule`): `start` opens one
//! (`ieee80211_txq_schedule_start`), `next_station` gives the next station to serve
//! (`ieee80211_next_txq`), `schedule` puts a station (back) on the list
//! (`__ieee80211_schedule_txq`, via `ieee80211_return_txq` and at enqueue).

use crate::units::{Time, MS};
use std::collections::VecDeque;

/// How long after its last queued frame a station's airtime still counts against its deficit
/// and a station with a negative deficit stays on the list (AIRTIME_ACTIVE_DURATION = HZ / 10,
/// net/mac80211/ieee80211_i.h).
pub const ACTIVE_WINDOW: Time = 100 * MS;

/// How the access point's driver picks the station whose queue forms the next aggregate
/// (scenario `topology.wifi.scheduler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Round robin over the stations with frames queued, one aggregate each (ath9k before
    /// airtime fairness: `ath_txq_schedule` over its `axq_acq` list).
    Fifo,
    /// mac80211's airtime deficit round robin (this module).
    Airtime,
}

impl Scheduler {
    pub const NAMES: [&'static str; 2] = ["fifo", "airtime"];

    pub fn parse(name: &str) -> Option<Scheduler> {
        match name {
            "fifo" => Some(Scheduler::Fifo),
            "airtime" => Some(Scheduler::Airtime),
            _ => None,
        }
    }
}

/// The scheduler's parameters (scenario `topology.wifi`), each with its source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AirtimeParams {
    /// Added to a negative deficit per pass (`sta->airtime_weight`: 256 us in mac80211,
    /// ATH_AIRTIME_QUANTUM = 300 us in ath9k's own scheduler).
    pub quantum: Time,
    /// Whether the driver reports AQL (NL80211_EXT_FEATURE_AQL: ath10k, ath11k, mt76 do; ath9k
    /// does not, and then nothing is pending).
    pub aql: bool,
    /// A station below this pending airtime may always be served (aql_txq_limit_low,
    /// IEEE80211_DEFAULT_AQL_TXQ_LIMIT_L = 5000 us).
    pub aql_low: Time,
    /// ... and below this one while the whole radio is below `aql_threshold`
    /// (aql_txq_limit_high, IEEE80211_DEFAULT_AQL_TXQ_LIMIT_H = 12000 us).
    pub aql_high: Time,
    /// The radio's pending airtime above which stations get only `aql_low`
    /// (IEEE80211_AQL_THRESHOLD = 24000 us).
    pub aql_threshold: Time,
}

/// The scheduler's state over the access point's stations.
#[derive(Clone, Debug)]
pub struct Airtime {
    p: AirtimeParams,
    /// The active stations in scheduling order (`active_txqs`).
    active: VecDeque<u16>,
    listed: Vec<bool>,
    /// Per station: deficit (ns), AQL pending airtime, when it last had frames queued, the
    /// round it was last served in.
    deficit: Vec<i64>,
    pending: Vec<Time>,
    last_active: Vec<Option<Time>>,
    served: Vec<u64>,
    /// The radio's pending airtime (`aql_total_pending_airtime`).
    total_pending: Time,
    /// The current round (`schedule_round`): 0 while the per-PHY AQL limit holds rounds back.
    round: u64,
    rounds: u64,
}

impl Airtime {
    pub fn new(p: AirtimeParams, stations: usize) -> Airtime {
        Airtime {
            p,
            active: VecDeque::new(),
            listed: vec![false; stations],
            deficit: vec![0; stations],
            pending: vec![0; stations],
            last_active: vec![None; stations],
            served: vec![0; stations],
            total_pending: 0,
            round: 0,
            rounds: 0,
        }
    }

    pub fn deficit(&self, s: usize) -> i64 {
        self.deficit[s]
    }

    /// The stations on the list, in order.
    pub fn order(&self) -> Vec<usize> {
        self.active.iter().map(|&s| s as usize).collect()
    }

    /// The deficit net of the pending airtime (`ieee80211_sta_deficit`).
    fn net_deficit(&self, s: usize) -> i64 {
        self.deficit[s] - self.pending[s] as i64
    }

    fn recently_active(&self, s: usize, now: Time) -> bool {
        self.last_active[s].is_some_and(|t| now - t <= ACTIVE_WINDOW)
    }

    /// Puts station `s` on the list if it is not there and has frames queued (`has_queue`) or a
    /// negative deficit it is still paying off (`ieee80211_txq_keep_active`): a station with
    /// frames goes to the head (it moves back only once its deficit is negative), a kept one
    /// to the tail (`__ieee80211_schedule_txq`). A station put on the list with frames is
    /// active from then (`ieee80211_txq_set_active`).
    pub fn schedule(&mut self, s: usize, has_queue: bool, now: Time) {
        if self.listed[s] {
            return;
        }
        let keep = self.net_deficit(s) < 0 && self.recently_active(s, now);
        if !(has_queue || keep) {
            return;
        }
        if has_queue {
            self.active.push_front(s as u16);
            self.last_active[s] = Some(now);
        } else {
            self.active.push_back(s as u16);
        }
        self.listed[s] = true;
    }

    /// Whether station `s` may have more frames in the hardware under AQL
    /// (`ieee80211_txq_airtime_check`).
    pub fn may_queue(&self, s: usize) -> bool {
        !self.p.aql
            || self.pending[s] < self.p.aql_low
            || (self.total_pending < self.p.aql_threshold && self.pending[s] < self.p.aql_high)
    }

    /// The radio's AQL limit for a round: the high limit for the first active station and half
    /// the low one for each other (`ieee80211_txq_schedule_airtime_check`).
    fn radio_may_queue(&self) -> bool {
        let n = self.active.len() as Time;
        !self.p.aql || n == 0 || self.total_pending < (n - 1) * self.p.aql_low / 2 + self.p.aql_high
    }

    /// Opens a scheduling round (`ieee80211_txq_schedule_start`): none while the radio is above
    /// its AQL limit.
    pub fn start(&mut self) {
        if self.radio_may_queue() {
            self.rounds += 1;
            self.round = self.rounds;
        } else {
            self.round = 0;
        }
    }

    /// The next station to serve in this round, taken off the list (`ieee80211_next_txq`): the
    /// head, unless its net deficit is negative (then it gains a quantum and moves to the
    /// tail) or AQL holds it (it moves to the tail); none when a full pass found no station AQL
    /// allows, or the head was already served this round.
    pub fn next_station(&mut self) -> Option<usize> {
        if self.round == 0 {
            return None;
        }
        let mut head = None;
        let mut eligible = false;
        loop {
            let s = *self.active.front()? as usize;
            if head == Some(s) {
                if !eligible {
                    return None;
                }
                eligible = false;
            }
            head.get_or_insert(s);
            let aql_ok = self.may_queue(s);
            let d = self.net_deficit(s);
            eligible |= aql_ok;
            if d < 0 {
                self.deficit[s] += self.p.quantum as i64;
            }
            if d < 0 || !aql_ok {
                self.active.rotate_left(1);
                continue;
            }
            if self.served[s] == self.round {
                return None;
            }
            self.active.pop_front();
            self.listed[s] = false;
            self.served[s] = self.round;
            return Some(s);
        }
    }

    /// Charges station `s` the airtime of a transmission to it or a reception from it, while it
    /// was recently active (`ieee80211_sta_register_airtime`).
    pub fn register(&mut self, s: usize, airtime: Time, now: Time) {
        if self.recently_active(s, now) {
            self.deficit[s] -= airtime as i64;
        }
    }

    /// Frames of estimated airtime `t` handed to the hardware for station `s` (`done` false) or
    /// completed (`done` true): AQL's pending airtime (`ieee80211_sta_update_pending_airtime`).
    pub fn pending(&mut self, s: usize, t: Time, done: bool) {
        if !self.p.aql {
            return;
        }
        if done {
            self.pending[s] -= t;
            self.total_pending -= t;
        } else {
            self.pending[s] += t;
            self.total_pending += t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn params(aql: bool) -> AirtimeParams {
        AirtimeParams {
            quantum: 256 * US,
            aql,
            aql_low: 5 * MS,
            aql_high: 12 * MS,
            aql_threshold: 24 * MS,
        }
    }

    /// One scheduling round as ath9k's `ath_txq_schedule` runs it: serve the station
    /// `next_station` gives (one transmission of `ppdu[s]`, charged at once), return it with frames
    /// still queued, until `next_station` gives none. Returns the stations served.
    fn round(a: &mut Airtime, ppdu: &[Time], now: Time) -> Vec<usize> {
        a.start();
        let mut out = Vec::new();
        while let Some(s) = a.next_station() {
            a.register(s, ppdu[s], now);
            a.schedule(s, true, now);
            out.push(s);
        }
        out
    }

    #[test]
    fn deficits_follow_the_kernel_rule_by_hand() {
        // Two backlogged stations whose transmissions take 1 ms (A = 0) and 4 ms (B = 1),
        // quantum 256 us, both queued at t = 0 (B first, so A, queued last, heads the list);
        // each transmission charged as it is served. Worked by hand from ieee80211_next_txq and
        // __ieee80211_schedule_txq (deficits in us):
        // round 1: A (0) served: -1000, back to the head. A < 0: -744, to the tail; B (0)
        //   served: -4000, back to the head. B -3744, A -488, B -3488, A -232, B -3232, A +24,
        //   B -2976, each to the tail; A >= 0 but served this round: none. (24, -2976)
        // round 2: A served: -976; A -720, B -2720, A -464, B -2464, A -208, B -2208, A +48,
        //   B -1952; A served already: none. (48, -1952)
        // round 3: A served: -952, then the same seven passes: (72, -928)
        // round 4: A served: -928, then A and B each gain four quanta: (96, 96)
        // round 5: A served: -904; A -648 to the tail; B (96) served: -3904; B -3648, A -392,
        //   B -3392, A -136, B -3136, A +120, B -2880; A served already: (120, -2880), round
        //   1's state with 96 us more each: the pattern repeats every four rounds.
        // A takes 1000 us per round and gains 4 x 256 = 1024: B waits until A's surplus and
        // B's quanta meet, which makes the shares equal over the long run (next test).
        let mut a = Airtime::new(params(false), 2);
        let ppdu = [1000 * US, 4000 * US];
        a.schedule(1, true, 0);
        a.schedule(0, true, 0);
        assert_eq!(a.order(), vec![0, 1]);
        let want: [(&[usize], i64, i64); 4] = [
            (&[0, 1], 24, -2976),
            (&[0], 48, -1952),
            (&[0], 72, -928),
            (&[0], 96, 96),
        ];
        for (picks, da, db) in want {
            assert_eq!(round(&mut a, &ppdu, 0), picks);
            assert_eq!((a.deficit(0), a.deficit(1)), (da * 1000, db * 1000));
        }
        assert_eq!(round(&mut a, &ppdu, 0), vec![0, 1]);
        assert_eq!((a.deficit(0), a.deficit(1)), (120_000, -2_880_000));
    }

    #[test]
    fn airtime_shares_converge_to_equal() {
        // The same pair over a long run: A is served about four times as often as B, so each
        // has half of the airtime, within DRR's bound of one transmission and one quantum.
        let mut a = Airtime::new(params(false), 2);
        let ppdu = [1000 * US, 4000 * US];
        a.schedule(0, true, 0);
        a.schedule(1, true, 0);
        let mut air = [0; 2];
        let mut served = [0u64; 2];
        for _ in 0..10_000 {
            for s in round(&mut a, &ppdu, 0) {
                air[s] += ppdu[s];
                served[s] += 1;
            }
        }
        assert!(air[0].abs_diff(air[1]) <= 4000 * US + 256 * US, "{air:?}");
        assert!(served[0].abs_diff(4 * served[1]) <= 5, "{served:?}");
    }

    #[test]
    fn airtime_is_charged_only_while_recently_active() {
        // ieee80211_sta_register_airtime charges a station that had frames queued within the
        // last 100 ms (AIRTIME_ACTIVE_DURATION); one that never had any is not charged.
        let mut a = Airtime::new(params(false), 2);
        a.schedule(0, true, 0);
        a.start();
        assert_eq!(a.next_station(), Some(0));
        a.register(0, 500 * US, ACTIVE_WINDOW);
        a.register(0, 500 * US, ACTIVE_WINDOW + 1);
        a.register(1, 500 * US, 0);
        assert_eq!((a.deficit(0), a.deficit(1)), (-500_000, 0));
        // ieee80211_txq_keep_active: emptied with a negative deficit within the window, it
        // stays listed, at the tail; a station with frames goes to the head.
        a.schedule(0, false, ACTIVE_WINDOW);
        a.schedule(1, true, ACTIVE_WINDOW);
        assert_eq!(a.order(), vec![1, 0]);
        // after the window it leaves the list
        let mut b = Airtime::new(params(false), 1);
        b.schedule(0, true, 0);
        b.start();
        assert_eq!(b.next_station(), Some(0));
        b.register(0, 500 * US, 0);
        b.schedule(0, false, ACTIVE_WINDOW + 1);
        assert!(b.order().is_empty());
    }

    #[test]
    fn aql_holds_a_station_over_its_limits() {
        // ieee80211_txq_airtime_check: below the low limit always; below the high one while
        // the radio is under its threshold; never above the high limit.
        let mut a = Airtime::new(params(true), 3);
        a.pending(0, 4999 * US, false);
        assert!(a.may_queue(0));
        a.pending(0, 1000 * US, false); // 5999 us: above low, below high, radio 5999 us
        assert!(a.may_queue(0));
        a.pending(1, 12_000 * US, false); // at the high limit
        assert!(!a.may_queue(1));
        a.pending(2, 11_000 * US, false); // radio 28999 us > 24 ms: only the low limit
        assert!(!a.may_queue(0) && !a.may_queue(2));
        a.pending(1, 12_000 * US, true);
        assert!(a.may_queue(0)); // radio 16999 us again
                                 // Pending airtime counts against the deficit (ieee80211_sta_deficit): station 1 with
                                 // 100 us pending is passed over once, gaining a quantum (256 us), and served after 0.
        let mut b = Airtime::new(params(true), 2);
        b.schedule(0, true, 0);
        b.schedule(1, true, 0);
        b.pending(1, 100 * US, false);
        b.start();
        assert_eq!(b.next_station(), Some(0));
        assert_eq!(b.deficit(1), 256_000);
        assert_eq!(b.next_station(), Some(1));
        // The radio's limit for a round (ieee80211_txq_schedule_airtime_check): with two
        // stations listed, 12 ms + 5 ms / 2 = 14.5 ms; at 14.5 ms pending no round opens.
        let mut c = Airtime::new(params(true), 2);
        c.schedule(0, true, 0);
        c.schedule(1, true, 0);
        c.pending(0, 14_500 * US, false);
        c.start();
        assert_eq!(c.next_station(), None);
        c.pending(0, US, true);
        c.start();
        assert_eq!(c.next_station(), Some(1));
    }
}
