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
//! frames held behind it (`ieee80211_rx_h_ctrl` on a BAR). Not modelled: the reorder timeout
//! (HT_RX_REORDER_BUF_TIMEOUT, 100 ms), as a lost subframe here is retried in the next
//! aggregate to its destination or given up; the transmitter's window limit (a frame 64 or
//! more after the oldest unacknowledged one waits, ath9k `BAW_WITHIN`).

use crate::packet::PktId;
use std::collections::BTreeMap;

/// One session (one transmitter towards one destination): the numbering at the transmitter
/// and the reorder buffer at the receiver.
#[derive(Debug, Default)]
pub struct Reorder {
    /// The next sequence number the transmitter gives.
    next: u64,
    /// The receiver's window start: the next number it hands on.
    head: u64,
    /// Frames received after a gap (`Some`) or given up by the transmitter (`None`), by number.
    held: BTreeMap<u64, Option<PktId>>,
}

impl Reorder {
    /// A sequence number for a frame entering its first aggregate.
    pub fn number(&mut self) -> u64 {
        self.next += 1;
        self.next - 1
    }

    /// Frame `sn` arrived whole (`Some(id)`) or was given up (`None`): appends to `out` the
    /// frames now in order, the window start first.
    pub fn arrive(&mut self, sn: u64, id: Option<PktId>, out: &mut Vec<PktId>) {
        if sn != self.head {
            self.held.insert(sn, id);
            return;
        }
        out.extend(id);
        self.head += 1;
        while let Some(entry) = self.held.first_entry().filter(|e| *e.key() == self.head) {
            out.extend(entry.remove());
            self.head += 1;
        }
    }

    /// The frames the receiver holds.
    pub fn held(&self) -> impl Iterator<Item = PktId> + '_ {
        self.held.values().flatten().copied()
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
        r.arrive(0, Some(ids[0]), &mut out);
        r.arrive(2, Some(ids[2]), &mut out);
        r.arrive(3, Some(ids[3]), &mut out);
        assert_eq!(out, [ids[0]]);
        assert_eq!(r.held().count(), 2);
        r.arrive(1, Some(ids[1]), &mut out);
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
        r.arrive(1, Some(11), &mut out);
        r.arrive(2, Some(12), &mut out);
        assert!(out.is_empty());
        r.arrive(0, None, &mut out);
        assert_eq!(out, [11, 12]);
    }
}
