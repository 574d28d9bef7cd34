//! What delivery-rate estimation (Linux net/ipv4/tcp_rate.c) keeps per segment and per ACK: the
//! snapshot a transmission takes of the connection's delivery state ([`TxSnap`], tcp_skb_cb's
//! `tx`) and what one ACK delivered ([`RateAcc`]). The scoreboard holds them with its segments;
//! the sender's rate sampler (`sender::rate`) takes and reads them. Below both.

use crate::units::Time;

/// The delivery state when a segment was (last) sent (tcp_skb_cb's `tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TxSnap {
    /// The connection's delivered count, and the time of its last delivery.
    pub(crate) delivered: u64,
    pub(crate) delivered_at: Time,
    /// The send time of the flight's first segment (the last one delivered before this
    /// transmission), and of this one.
    pub(crate) first_tx: Time,
    pub(crate) sent_at: Time,
    pub(crate) app_limited: bool,
    /// Segments in flight once this one left, the connection's lost and CE-delivered counts
    /// then (BBR v3's tx.in_flight, tx.lost, tx.delivered_ce).
    pub(crate) in_flight: u64,
    pub(crate) lost: u64,
    pub(crate) delivered_ce: u64,
}

/// What one ACK delivered: how many segments, and the snapshot of the most recently sent
/// one (the highest delivered count: tcp_rate_skb_delivered); and the snapshots of the
/// segments it marked lost, in marking order (tcp_skb_mark_lost's `skb_marked_lost` hook).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RateAcc {
    pub(crate) segs: u64,
    pub(crate) best: Option<TxSnap>,
    pub(crate) lost: Vec<TxSnap>,
}

impl RateAcc {
    pub(crate) fn delivered(&mut self, tx: TxSnap) {
        self.segs += 1;
        if self.best.is_none_or(|b| tx.delivered > b.delivered) {
            self.best = Some(tx);
        }
    }
}
