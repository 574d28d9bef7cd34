//! Delivery-rate estimation as Linux net/ipv4/tcp_rate.c: every transmission takes a snapshot
//! of the connection's delivery state ([`TxSnap`]), every ACK turns the most recently sent
//! segment it delivered into a [`RateSample`]: the segments delivered since that snapshot over
//! the longer of the flight's send phase and its ACK phase. Counts in segments, as Linux counts
//! packets. Kept only for a rate-based controller ([`CongestionControl::rate_based`]), which
//! runs on the sample last on each ACK (`rate_control.rs`, the sender's side).
//!
//! [`CongestionControl::rate_based`]: crate::transport::cc::CongestionControl::rate_based

use crate::transport::cc::RateSample;
use crate::transport::tcp::delivery::{RateAcc, TxSnap};
use crate::units::Time;

/// The connection's delivery state (tcp_sock's delivered, delivered_mstamp, first_tx_mstamp,
/// app_limited, lost, delivered_ce) and the minimum RTT that bounds a valid interval.
#[derive(Clone, Debug, Default)]
pub(super) struct RateSampler {
    delivered: u64,
    delivered_at: Time,
    first_tx: Time,
    /// 0: not application-limited; else the delivered count that ends the bubble.
    app_limited: u64,
    lost: u64,
    delivered_ce: u64,
    min_rtt: Option<Time>,
}

impl RateSampler {
    /// tcp_rate_skb_sent: the snapshot of a segment sent at `now`, `in_flight` segments in
    /// flight with it; with nothing outstanding the sampling starts here.
    pub(super) fn snapshot(&mut self, now: Time, nothing_out: bool, in_flight: u64) -> TxSnap {
        if nothing_out {
            self.first_tx = now;
            self.delivered_at = now;
        }
        TxSnap {
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx: self.first_tx,
            sent_at: now,
            app_limited: self.app_limited != 0,
            in_flight,
            lost: self.lost,
            delivered_ce: self.delivered_ce,
        }
    }

    /// tcp_rate_gen: the sample of an ACK at `now` that delivered `acc` (`ce` of it reported
    /// CE-marked) and marked `losses` segments lost, with RTT sample `rtt`.
    pub(super) fn sample(
        &mut self,
        acc: &RateAcc,
        losses: u64,
        ce: u64,
        now: Time,
        rtt: Option<Time>,
    ) -> RateSample {
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        self.delivered += acc.segs;
        self.delivered_ce += ce;
        self.lost += losses;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if acc.segs > 0 {
            self.delivered_at = now;
        }
        let mut rs = RateSample {
            now,
            acked_sacked: acc.segs,
            losses,
            total_delivered: self.delivered,
            total_lost: self.lost,
            delivered_at: self.delivered_at,
            rtt,
            ce,
            ..RateSample::default()
        };
        let Some(best) = acc.best else {
            return rs;
        };
        // The send phase ends at the most recently sent delivered segment, which starts the
        // next flight's.
        self.first_tx = best.sent_at;
        rs.prior_delivered = best.delivered;
        rs.is_app_limited = best.app_limited;
        rs.delivered = Some(self.delivered - best.delivered);
        rs.delivered_ce = self.delivered_ce - best.delivered_ce;
        rs.lost = self.lost - best.lost;
        rs.tx_in_flight = best.in_flight;
        let send_phase = best.sent_at - best.first_tx;
        let ack_phase = now - best.delivered_at;
        let interval = send_phase.max(ack_phase);
        rs.interval = (interval >= self.min_rtt.unwrap_or(0)).then_some(interval);
        rs
    }

    /// The samples BBR v3's `bbr_skb_marked_lost` builds for the segments an ACK at `now`
    /// marked lost (`losses` in all, the connection's lost count already including them): each
    /// one's tx_in_flight, the losses since it was sent (counting itself) and its app-limited
    /// flag, with the connection's delivered count.
    pub(super) fn lost_samples<'a>(
        &self,
        acc: &'a RateAcc,
        losses: u64,
        now: Time,
    ) -> impl Iterator<Item = RateSample> + 'a {
        let (before, total_delivered) = (self.lost - losses, self.delivered);
        acc.lost.iter().enumerate().map(move |(k, tx)| RateSample {
            now,
            total_delivered,
            tx_in_flight: tx.in_flight,
            lost: (before + k as u64 + 1).saturating_sub(tx.lost),
            is_app_limited: tx.app_limited,
            ..RateSample::default()
        })
    }

    /// tcp_rate_check_app_limited's outcome: the data in flight (`in_flight` segments) is
    /// application-limited until it is delivered.
    pub(super) fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::MS;

    fn snap(delivered: u64, delivered_at: Time, first_tx: Time, sent_at: Time) -> TxSnap {
        TxSnap {
            delivered,
            delivered_at,
            first_tx,
            sent_at,
            ..TxSnap::default()
        }
    }

    #[test]
    fn the_interval_is_the_longer_of_the_send_and_ack_phases() {
        // tcp_rate.c tcp_rate_gen: 10 segments delivered since the snapshot; the segment was
        // sent 20 ms after its flight's first (send phase 20 ms), the snapshot's last delivery
        // was 50 ms before this ACK (ACK phase 50 ms): interval 50 ms.
        let mut r = RateSampler {
            delivered: 10,
            ..RateSampler::default()
        };
        let acc = RateAcc {
            segs: 10,
            best: Some(snap(10, 100 * MS, 110 * MS, 130 * MS)),
            ..RateAcc::default()
        };
        let rs = r.sample(&acc, 0, 0, 150 * MS, Some(40 * MS));
        assert_eq!(rs.delivered, Some(10));
        assert_eq!(rs.interval, Some(50 * MS));
        assert_eq!((rs.total_delivered, rs.delivered_at), (20, 150 * MS));
        // ACK compression: the same ten ACKed in a burst 5 ms after the snapshot's delivery,
        // while they took 20 ms to send: the send phase (20 ms) bounds the rate.
        let mut r = RateSampler {
            delivered: 10,
            ..RateSampler::default()
        };
        let rs = r.sample(&acc, 0, 0, 105 * MS, None);
        assert_eq!(rs.interval, Some(20 * MS));
        // An interval below the minimum RTT is no sample (its delivered count stays).
        let mut r = RateSampler {
            delivered: 10,
            min_rtt: Some(30 * MS),
            ..RateSampler::default()
        };
        let rs = r.sample(&acc, 0, 0, 105 * MS, None);
        assert_eq!((rs.delivered, rs.interval), (Some(10), None));
    }

    #[test]
    fn the_most_recently_sent_delivered_segment_is_sampled() {
        // tcp_rate_skb_delivered keeps the highest prior delivered count; the send phase of the
        // next flight starts at that segment's send time.
        let mut acc = RateAcc::default();
        acc.delivered(snap(5, 10 * MS, 0, 12 * MS));
        acc.delivered(snap(7, 11 * MS, 0, 14 * MS));
        acc.delivered(snap(6, 11 * MS, 0, 13 * MS));
        assert_eq!((acc.segs, acc.best.map(|b| b.delivered)), (3, Some(7)));
        let mut r = RateSampler {
            delivered: 8,
            ..RateSampler::default()
        };
        r.sample(&acc, 0, 0, 60 * MS, None);
        assert_eq!(r.snapshot(61 * MS, false, 0).first_tx, 14 * MS);
        // Nothing outstanding: the next segment starts a flight of its own.
        assert_eq!(r.snapshot(70 * MS, true, 0), snap(11, 70 * MS, 70 * MS, 70 * MS));
    }

    #[test]
    fn app_limited_lasts_until_the_bubble_is_delivered() {
        // tcp_rate_check_app_limited: app_limited = delivered + in flight; a sample whose
        // segment was sent in the bubble is app-limited; once delivered passes it, it clears.
        let mut r = RateSampler::default();
        r.mark_app_limited(4);
        let s = r.snapshot(0, true, 0);
        assert!(s.app_limited);
        let acc = RateAcc {
            segs: 4,
            best: Some(s),
            ..RateAcc::default()
        };
        let rs = r.sample(&acc, 0, 0, 10 * MS, None);
        assert!(rs.is_app_limited, "a segment sent in the bubble");
        assert!(
            r.snapshot(10 * MS, false, 0).app_limited,
            "4 delivered: not past 4 yet"
        );
        let acc = RateAcc {
            segs: 1,
            best: Some(snap(4, 10 * MS, 0, 10 * MS)),
            ..RateAcc::default()
        };
        r.sample(&acc, 0, 0, 20 * MS, None);
        assert!(!r.snapshot(20 * MS, false, 0).app_limited);
    }

    #[test]
    fn a_sample_carries_its_flights_in_flight_and_what_was_lost_and_marked_since() {
        // The v3 branch's tcp_rate.c: tx.in_flight is what was in flight once the segment
        // left (7 here); lost and delivered_ce are the connection's counts since then.
        let mut r = RateSampler::default();
        let s = r.snapshot(0, true, 7);
        r.sample(&RateAcc::default(), 2, 0, MS, None);
        let acc = RateAcc {
            segs: 5,
            best: Some(s),
            ..RateAcc::default()
        };
        let rs = r.sample(&acc, 1, 3, 50 * MS, None);
        assert_eq!((rs.tx_in_flight, rs.lost, rs.delivered_ce, rs.ce), (7, 3, 3, 3));
        // bbr_skb_marked_lost's samples, in marking order: the connection's lost count at
        // each mark (4 then 5, the 3 before plus this ACK's 2) less the segment's own.
        let marked = |in_flight, lost| TxSnap {
            in_flight,
            lost,
            app_limited: lost == 0,
            ..TxSnap::default()
        };
        let acc = RateAcc {
            lost: vec![marked(10, 0), marked(12, 2)],
            ..RateAcc::default()
        };
        r.sample(&acc, 2, 0, 60 * MS, None);
        let got: Vec<_> = r
            .lost_samples(&acc, 2, 60 * MS)
            .map(|l| (l.tx_in_flight, l.lost, l.is_app_limited, l.total_delivered))
            .collect();
        assert_eq!(got, [(10, 4, true, 5), (12, 3, false, 5)]);
    }
}
