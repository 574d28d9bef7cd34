//! The sender's side of delivery-rate sampling ([`RateSampler`], `rate.rs`): a snapshot at each
//! transmission, and a rate-based controller's turn, last on an ACK, with the sample.

use super::ack::Ack;
use super::state::TcpSender;
use crate::transport::cc::CaState;
use crate::units::Time;

impl TcpSender {
    /// Segments in flight (tcp_packets_in_flight: the pipe, a short segment counting whole).
    pub(super) fn pipe_segs(&self) -> u64 {
        self.sb.pipe().div_ceil(self.mss)
    }

    /// A transmission of segment `i` at `now` (new or again), `nothing_out` when it is the only
    /// one outstanding. Out of line: the send path of the other controllers stays as it was.
    #[inline(never)]
    pub(super) fn rate_sent(&mut self, i: u64, now: Time, nothing_out: bool) {
        let in_flight = self.pipe_segs();
        if let Some(r) = self.rate.as_mut() {
            let snap = r.snapshot(now, nothing_out, in_flight);
            self.sb.set_tx(i, snap);
        }
    }

    /// The rate-based controller's turn, last on an ACK (Linux tcp_cong_control with
    /// `cong_control`): the window loss recovery left is replaced by `cwnd_before` (BBR sets
    /// its own), then the sample goes to the controller.
    pub(super) fn rate_control(&mut self, a: &Ack, prior_in_flight: u64, cwnd_before: u64, now: Time) {
        let Some(r) = self.rate.as_mut() else {
            return;
        };
        // Linux's delivered_ce: AccECN's count of CE packets, else every segment an ECE ACK
        // delivers (tcp_count_delivered).
        let acc = self.sb.rate_acc();
        let ce = if a.ce_segs > 0 {
            a.ce_segs
        } else {
            acc.segs * a.ece as u64
        };
        let losses = a.newly_lost + a.rack_marked;
        let mut rs = r.sample(acc, losses, ce, now, a.rtt);
        for lost in r.lost_samples(acc, losses, now) {
            self.cc.on_segment_lost(&lost);
        }
        rs.prior_in_flight = prior_in_flight;
        rs.in_flight = self.pipe_segs();
        rs.pace_wait = self.pace_next.saturating_sub(now);
        rs.ca_state = if self.recovery.in_recovery {
            CaState::Recovery
        } else if self.recovery.loss_point.is_some() {
            CaState::Loss
        } else {
            CaState::Open
        };
        self.st.cwnd = cwnd_before;
        self.sync_state();
        self.cc.on_rate_sample(&mut rs, &mut self.st);
        if rs.mark_app_limited {
            self.mark_app_limited();
        }
    }

    /// tcp_rate_check_app_limited after a send round: less than a segment of data to send,
    /// room in the window, and no lost segment waiting to go again.
    pub(super) fn check_app_limited(&mut self, now: Time) {
        if self.app_has_data(now) {
            return;
        }
        let lost_waiting = self.sb.next_candidate().is_some_and(|(_, lost)| lost);
        if self.sb.pipe() < self.st.cwnd && !lost_waiting {
            self.mark_app_limited();
        }
    }

    fn mark_app_limited(&mut self) {
        let in_flight = self.pipe_segs();
        if let Some(r) = self.rate.as_mut() {
            r.mark_app_limited(in_flight);
        }
    }
}
