//! DCTCP (RFC 8257) as Linux net/ipv4/tcp_dctcp.c runs it: Reno's window growth, and on an
//! ECN-Echo a reduction by alpha / 2 instead of a half, where alpha estimates the fraction of
//! bytes whose ACKs carried ECE.
//!
//! * alpha is a fixed-point fraction of 1024 (DCTCP_MAX_ALPHA), starting at 1024 (Linux's
//!   `dctcp_alpha_on_init` default); once per window of data (the ACK that starts a new round,
//!   Linux's `snd_una` passing `next_seq`) alpha = alpha - alpha >> 4 + (ECE bytes << 6) /
//!   acked bytes, i.e. alpha = (1 - g) alpha + g F with g = 1/16 (RFC 8257 3.3; Linux takes the
//!   whole alpha away once alpha >> 4 is 0, so that alpha can reach 0).
//! * On ECE (once per window, as the sender applies every ECN response): ssthresh = cwnd -
//!   cwnd alpha / 2048, at least 2 segments (`dctcp_ssthresh`); cwnd = ssthresh.
//! * On loss, RFC 8257 3.5 and Linux's `dctcp_react_to_loss`: half of the window, as Reno.
//!
//! The receiver side of RFC 8257 3.2 (ECE on every ACK of CE-marked data, an immediate ACK when
//! the CE state changes) is the TCP receiver's, chosen with [`echoes_each_ce`].

use super::reno::Reno;
use super::{
    half_flight, without_params, AckSample, CcInfo, CcState, CongestionControl, CongestionKind, Hystart,
    NoParams,
};
use crate::params::Group;
use crate::record::rows::CcReport;
use crate::units::Time;

/// alpha's scale (Linux DCTCP_MAX_ALPHA).
pub const MAX_ALPHA: u64 = 1024;
/// The EWMA gain g = 2^-SHIFT_G (Linux dctcp_shift_g, 4).
pub const SHIFT_G: u32 = 4;

/// Whether the receiver of a connection under controller `cc` echoes each CE mark (RFC 8257
/// 3.2) rather than latching ECE until CWR (RFC 3168).
pub fn echoes_each_ce(cc: &str) -> bool {
    cc == "dctcp"
}

#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    /// alpha x 1024.
    alpha: u64,
    acked_total: u64,
    acked_ece: u64,
}

impl Dctcp {
    pub fn new(mss: u64, hystart: Hystart) -> Dctcp {
        Dctcp {
            reno: Reno::new(mss, hystart),
            alpha: MAX_ALPHA,
            acked_total: 0,
            acked_ece: 0,
        }
    }

    /// alpha as a fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / MAX_ALPHA as f64
    }

    /// The end of a window of data: the EWMA step, then the counters start again.
    fn update_alpha(&mut self) {
        let decay = self.alpha >> SHIFT_G;
        self.alpha -= if decay == 0 { self.alpha } else { decay };
        if self.acked_ece > 0 {
            let f = (self.acked_ece << (10 - SHIFT_G)) / self.acked_total.max(1);
            self.alpha = (self.alpha + f).min(MAX_ALPHA);
        }
        self.acked_total = 0;
        self.acked_ece = 0;
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    /// tcp_dctcp.c dctcp_update_alpha, the `in_ack_event` hook: before the ACK's ECN response.
    fn on_ack_event(&mut self, ack: &AckSample, _st: &mut CcState) {
        self.acked_total += ack.acked_bytes;
        if ack.ece {
            self.acked_ece += ack.acked_bytes;
        }
        if ack.round_start {
            self.update_alpha();
        }
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        self.reno.on_ack(ack, st);
    }

    fn on_congestion_event(&mut self, now: Time, kind: CongestionKind, st: &mut CcState) {
        match kind {
            CongestionKind::Loss => self.reno.on_congestion_event(now, kind, st),
            CongestionKind::Ecn => {
                let cut = st.cwnd * self.alpha / (2 * MAX_ALPHA);
                st.ssthresh = (st.cwnd - cut).max(2 * st.mss);
                st.cwnd = st.ssthresh;
            }
        }
    }

    fn on_rto(&mut self, now: Time, first: bool, st: &mut CcState) {
        self.reno.on_rto(now, first, st);
        if first {
            st.ssthresh = half_flight(st);
        }
    }

    fn report(&self, r: &mut CcReport) {
        r.alpha = Some(self.alpha());
    }
}

pub static INFO: [CcInfo; 1] = [CcInfo {
    name: "dctcp",
    summary: "Data Center TCP: Reno growth, a reduction by alpha / 2 on ECN-Echo, alpha the EWMA of the marked fraction",
    reference: "RFC 8257; Linux tcp_dctcp.c",
    params: &[Group::of::<NoParams>()],
    needs_accecn: false,
    build: |p, ctx| without_params(p, Box::new(Dctcp::new(ctx.mss, ctx.hystart))),
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn st(cwnd: u64) -> CcState {
        CcState {
            cwnd,
            ssthresh: cwnd,
            mss: 1000,
            bytes_in_flight: cwnd,
            in_recovery: false,
            cwnd_limited: true,
            flight_cwnd_limited: true,
            srtt: None,
            abc: true,
        }
    }

    /// One window of `n` 1000-byte ACKs, the first `ece` of them with ECE.
    fn window(d: &mut Dctcp, s: &mut CcState, n: u64, ece: u64) {
        for k in 0..n {
            let a = AckSample {
                acked_bytes: 1000,
                ece: k < ece,
                round_start: k == n - 1,
                ..Default::default()
            };
            d.on_ack_event(&a, s);
            d.on_ack(&a, s);
        }
    }

    #[test]
    fn alpha_is_an_ewma_with_gain_one_sixteenth() {
        // by hand in Linux's fixed point: 1024 - 1024/16 = 960 with no mark; then half the bytes
        // marked: 960 - 60 + (0.5 << 6 = 32) = 932; all marked: 932 - 58 + 64 = 938
        let mut d = Dctcp::new(1000, Hystart::Off);
        let mut s = st(10_000);
        window(&mut d, &mut s, 10, 0);
        assert_eq!(d.alpha, 960);
        window(&mut d, &mut s, 10, 5);
        assert_eq!(d.alpha, 932);
        window(&mut d, &mut s, 10, 10);
        assert_eq!(d.alpha, 938);
        // RFC 8257 3.3 in real numbers: alpha = (1 - g) alpha + g F, within the 1/1024 steps
        let real = [(0.0, 1.0), (0.5, 0.0), (1.0, 0.0)]
            .iter()
            .fold(1.0, |a: f64, &(f, _)| a * 15.0 / 16.0 + f / 16.0);
        assert!((d.alpha() - real).abs() < 3.0 / 1024.0, "{} vs {real}", d.alpha());
        // with no marks alpha decays to exactly 0 (Linux's min_not_zero step)
        for _ in 0..200 {
            window(&mut d, &mut s, 10, 0);
        }
        assert_eq!(d.alpha, 0);
    }

    #[test]
    fn ece_cuts_by_alpha_over_two_and_loss_by_half() {
        let mut d = Dctcp::new(1000, Hystart::Off);
        let mut s = st(100_000);
        // alpha = 1 at start: a full halving
        d.on_congestion_event(0, CongestionKind::Ecn, &mut s);
        assert_eq!((s.cwnd, s.ssthresh), (50_000, 50_000));
        // alpha = 256/1024: cwnd (1 - 1/8)
        d.alpha = 256;
        let mut s = st(80_000);
        d.on_congestion_event(0, CongestionKind::Ecn, &mut s);
        assert_eq!(s.cwnd, 70_000);
        // alpha = 0: no cut; never below 2 segments
        d.alpha = 0;
        let mut s = st(80_000);
        d.on_congestion_event(0, CongestionKind::Ecn, &mut s);
        assert_eq!(s.cwnd, 80_000);
        d.alpha = MAX_ALPHA;
        let mut s = st(3_000);
        d.on_congestion_event(0, CongestionKind::Ecn, &mut s);
        assert_eq!(s.cwnd, 2_000);
        // a loss halves whatever alpha is
        d.alpha = 0;
        let mut s = st(80_000);
        d.on_congestion_event(0, CongestionKind::Loss, &mut s);
        assert_eq!(s.cwnd, 40_000);
    }
}
