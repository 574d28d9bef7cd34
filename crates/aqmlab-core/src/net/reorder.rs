//! Receive reordering of a block-ack session: the receiver hands the frames of an A-MPDU
//! session to its stack in sequence-number order (IEEE 802.11-2012 9.21.7.6; Linux
//! net/mac80211/rx.c `ieee80211_sta_manage_reorder_buf`, which holds a frame that arrives
//! after a gap, and `ieee80211_release_reorder_frames`, which releases the held ones once the
//! gap is filled or the window moves past it).
//!
//! The transmitter numbers each frame the first time it goes into an aggregate (a retried
//! frame keeps its number, as mac80211 gives the sequence number once, `ieee80211_tx_h_sequence`
//! or, with its intermediate queues, at `ieee80211_tx_dequeue`). A frame the transmitter gives
//! up (its retry limit) moves the window past it: the block ack request the driver then sends
//! (ath9k `ath_tx_complete_aggr` -> `ath_send_bar`; mac80211 `ieee80211_send_bar`) releases the
//! frames held behind it (`ieee80211_rx_h_ctrl` on a BAR).
//!
//! The reorder timeout (HT_RX_REORDER_BUF_TIMEOUT, HZ / 10 = 100 ms, the `timeout` of
//! [`Reorder::new`]): a frame held behind a gap for longer is handed on without the missing
//! ones, the window moving past them (`ieee80211_sta_reorder_release`, run at each arrival and
//! from the reorder timer armed for the oldest held frame's arrival plus the timeout); a frame
//! then arriving below the window is discarded as out of date (`ieee80211_sta_manage_reorder_buf`).
//! The timeout runs on the simulator's clock, not on jiffies. Not modelled: the transmitter's
//! window limit (a frame 64 or more after the oldest unacknowledged one waits, ath9k
//! `BAW_WITHIN`).

use crate::packet::PktId;
use crate::units::Time;
use std::collections::BTreeMap;

/// One session (one transmitter towards one destination): the numbering at the transmitter
/// and the reorder buffer at the receiver.
#[derive(Debug, Default)]
pub struct Reorder {
    /// The next sequence number the transmitter gives.
    next: u64,
    /// The receiver's window start: the next number it hands on.
    head: u64,
    /// Frames received after a gap (`Some`) or given up by the transmitter (`None`), by number,
    /// with the time each arrived (reorder_time).
    held: BTreeMap<u64, (Option<PktId>, Time)>,
    /// The reorder timeout (`None`: frames wait for the gap however long).
    timeout: Option<Time>,
}

impl Reorder {
    /// A session whose receiver hands on frames held longer than `timeout` (`None`: never).
    pub fn new(timeout: Option<Time>) -> Reorder {
        Reorder {
            timeout,
            ..Default::default()
        }
    }

    /// A sequence number for a frame entering its first aggregate.
    pub fn number(&mut self) -> u64 {
        self.next += 1;
        self.next - 1
    }

    /// Frame `sn` arrived whole (`Some(id)`) or was given up (`None`) at `now`: appends to `out`
    /// the frames now in order, the window start first. Returns false for a frame below the
    /// window (out of date: the timeout moved the window past it), which the receiver discards.
    pub fn arrive(&mut self, sn: u64, id: Option<PktId>, now: Time, out: &mut Vec<PktId>) -> bool {
        if sn < self.head {
            return false;
        }
        if sn != self.head {
            self.held.insert(sn, (id, now));
            self.expire(now, out);
            return true;
        }
        out.extend(id);
        self.head += 1;
        self.release_in_order(out);
        self.expire(now, out);
        true
    }

    /// Hands on the held frames from the window start up to the next gap.
    fn release_in_order(&mut self, out: &mut Vec<PktId>) {
        while let Some(entry) = self.held.first_entry().filter(|e| *e.key() == self.head) {
            out.extend(entry.remove().0);
            self.head += 1;
        }
    }

    /// The reorder timer's work at `now`: a held frame that waited past the timeout goes on,
    /// the window moving past the gap before it, and so do the frames right after it; the next
    /// gap whose first frame has not timed out stops the release.
    pub fn expire(&mut self, now: Time, out: &mut Vec<PktId>) {
        let Some(timeout) = self.timeout else { return };
        while let Some(entry) = self.held.first_entry() {
            if entry.get().1 + timeout > now {
                break;
            }
            self.head = *entry.key() + 1;
            out.extend(entry.remove().0);
            self.release_in_order(out);
        }
    }

    /// When the reorder timer fires: the first held frame's arrival plus the timeout.
    pub fn deadline(&self) -> Option<Time> {
        let timeout = self.timeout?;
        self.held.first_key_value().map(|(_, v)| v.1 + timeout)
    }

    /// The frames the receiver holds.
    pub fn held(&self) -> impl Iterator<Item = PktId> + '_ {
        self.held.values().filter_map(|v| v.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_after_a_gap_wait_for_it() {
        // Frames 0..4 sent; 1 is lost and retried: 0 goes on, 2 and 3 wait, and the retried 1
        // releases 1, 2, 3 in that order (9.21.7.6's in-order delivery).
        let mut r = Reorder::default();
        let ids: Vec<PktId> = (0..4).map(|i| i as PktId).collect();
        let sns: Vec<u64> = ids.iter().map(|_| r.number()).collect();
        assert_eq!(sns, [0, 1, 2, 3]);
        let mut out = Vec::new();
        r.arrive(0, Some(ids[0]), 0, &mut out);
        r.arrive(2, Some(ids[2]), 0, &mut out);
        r.arrive(3, Some(ids[3]), 0, &mut out);
        assert_eq!(out, [ids[0]]);
        assert_eq!(r.held().count(), 2);
        r.arrive(1, Some(ids[1]), 0, &mut out);
        assert_eq!(out, ids);
        assert_eq!(r.held().count(), 0);
    }

    #[test]
    fn a_frame_given_up_moves_the_window() {
        // Frame 0 is given up after frames 1 and 2 arrived: both go on, nothing for 0.
        let mut r = Reorder::default();
        (0..3).for_each(|_| {
            r.number();
        });
        let mut out = Vec::new();
        r.arrive(1, Some(11), 0, &mut out);
        r.arrive(2, Some(12), 0, &mut out);
        assert!(out.is_empty());
        r.arrive(0, None, 0, &mut out);
        assert_eq!(out, [11, 12]);
    }

    #[test]
    fn a_frame_held_past_the_timeout_goes_on_and_a_late_one_is_discarded() {
        // ieee80211_sta_reorder_release with HT_RX_REORDER_BUF_TIMEOUT 100 ms: frames 0..6; 0
        // arrives at 0 ms, 1 is lost, 2 and 3 arrive at 10 ms, 4 is lost, 5 arrives at 50 ms.
        // The timer is due at 110 ms (2's arrival plus the timeout): at 109 ms nothing goes;
        // at 110 ms 2 and 3 go (the window past 1) and 5, behind the gap at 4, waits until
        // 150 ms. 1's retry at 120 ms is below the window: discarded.
        let ms = crate::units::MS;
        let mut r = Reorder::new(Some(100 * ms));
        (0..6).for_each(|_| {
            r.number();
        });
        let mut out = Vec::new();
        assert!(r.arrive(0, Some(10), 0, &mut out));
        r.arrive(2, Some(12), 10 * ms, &mut out);
        r.arrive(3, Some(13), 10 * ms, &mut out);
        r.arrive(5, Some(15), 50 * ms, &mut out);
        assert_eq!((out.clone(), r.deadline()), (vec![10], Some(110 * ms)));
        r.expire(109 * ms, &mut out);
        assert_eq!(out, [10]);
        r.expire(110 * ms, &mut out);
        assert_eq!((out.clone(), r.deadline()), (vec![10, 12, 13], Some(150 * ms)));
        assert!(!r.arrive(1, Some(11), 120 * ms, &mut out), "out of date");
        assert_eq!(out, [10, 12, 13]);
        // 4's retry at 130 ms fills the gap before 5: both go at once.
        assert!(r.arrive(4, Some(14), 130 * ms, &mut out));
        assert_eq!((out, r.deadline()), (vec![10, 12, 13, 14, 15], None));
    }
}
