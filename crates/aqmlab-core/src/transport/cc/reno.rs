//! Reno / NewReno congestion control (RFC 5681 with RFC 3465 byte counting). The recovery
//! algorithm (NewReno RFC 6582 or SACK RFC 6675) lives in the TCP sender; this file is only the
//! window law: slow start with L = 2*SMSS, congestion avoidance +1 SMSS each time a full cwnd of
//! bytes has been acknowledged (RFC 3465 section 2.1), ssthresh = max(FlightSize/2, 2*SMSS) on
//! loss, ECE and RTO.

use super::hystart_pp::HystartPp;
use super::{
    half_flight, slow_start, without_params, AckSample, CcInfo, CcState, CongestionControl, CongestionKind,
    Hystart, NoParams,
};
use crate::params::Group;
use crate::units::Time;

#[derive(Clone, Debug)]
pub struct Reno {
    mss: u64,
    /// Bytes acknowledged in congestion avoidance since cwnd last grew.
    bytes_acked: u64,
    /// HyStart++ in the initial slow start (`Hystart::Rfc9406`; Linux's HyStart is CUBIC's).
    hspp: Option<HystartPp>,
}

impl Reno {
    pub fn new(mss: u64, hystart: Hystart) -> Reno {
        Reno {
            mss,
            bytes_acked: 0,
            hspp: (hystart == Hystart::Rfc9406).then(HystartPp::default),
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, ack: &AckSample, st: &mut CcState) {
        // tcp_reno_cong_avoid returns at once unless cwnd-limited.
        if st.in_recovery || ack.acked_bytes == 0 || !st.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_bytes;
        if st.in_slow_start() {
            acked = match &mut self.hspp {
                Some(h) => h.slow_start(ack, st),
                None => slow_start(st, acked),
            };
            if acked == 0 {
                return;
            }
        }
        if !st.abc {
            // ns-2 tcp/tcp.cc TcpAgent::opencwnd, windowOption_ 1: cwnd += 1/cwnd per new ACK.
            st.cwnd += st.mss * st.mss / st.cwnd;
            return;
        }
        self.bytes_acked += acked;
        if self.bytes_acked >= st.cwnd {
            self.bytes_acked -= st.cwnd;
            st.cwnd += self.mss;
        }
    }

    fn on_congestion_event(&mut self, _now: Time, _kind: CongestionKind, st: &mut CcState) {
        if let Some(h) = &mut self.hspp {
            h.end();
        }
        st.ssthresh = half_flight(st);
        st.cwnd = st.ssthresh;
        self.bytes_acked = 0;
    }

    fn on_rto(&mut self, _now: Time, first: bool, st: &mut CcState) {
        if let Some(h) = &mut self.hspp {
            h.end();
        }
        if first {
            st.ssthresh = half_flight(st);
        }
        self.bytes_acked = 0;
    }
}

/// Its registry entries: `reno` is another name of the same window law.
pub static INFO: [CcInfo; 2] = [
    CcInfo {
        name: "newreno",
        summary: "Reno's window law: slow start, +1 SMSS per window of data, half the flight on loss",
        reference: "RFC 5681, RFC 3465, RFC 6582",
        params: &[Group::of::<NoParams>()],
        needs_accecn: false,
        build: |p, ctx| without_params(p, Box::new(Reno::new(ctx.mss, ctx.hystart))),
    },
    CcInfo {
        name: "reno",
        summary: "newreno under another name",
        reference: "RFC 5681, RFC 3465, RFC 6582",
        params: &[Group::of::<NoParams>()],
        needs_accecn: false,
        build: |p, ctx| without_params(p, Box::new(Reno::new(ctx.mss, ctx.hystart))),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn st(cwnd: u64, ssthresh: u64) -> CcState {
        CcState {
            cwnd,
            ssthresh,
            mss: 1000,
            bytes_in_flight: cwnd,
            in_recovery: false,
            cwnd_limited: true,
            flight_cwnd_limited: true,
            srtt: None,
            abc: true,
        }
    }

    #[test]
    fn congestion_avoidance_one_mss_per_window() {
        let mut r = Reno::new(1000, Hystart::Off);
        let mut s = st(10_000, 5_000);
        // Ten 1-segment ACKs = one window: exactly +1 SMSS, on the tenth.
        for i in 0..10 {
            r.on_ack(
                &AckSample {
                    acked_bytes: 1000,
                    ..Default::default()
                },
                &mut s,
            );
            assert_eq!(s.cwnd, if i < 9 { 10_000 } else { 11_000 });
        }
        // Delayed ACKs (2 segments each) give the same growth per window: byte counting.
        let mut s2 = st(10_000, 5_000);
        let mut r2 = Reno::new(1000, Hystart::Off);
        for _ in 0..5 {
            r2.on_ack(
                &AckSample {
                    acked_bytes: 2000,
                    ..Default::default()
                },
                &mut s2,
            );
        }
        assert_eq!(s2.cwnd, 11_000);
    }

    #[test]
    fn congestion_avoidance_per_ack_without_byte_counting() {
        // ns-2 tcp.cc TcpAgent::opencwnd (windowOption_ 1): cwnd_ += 1/cwnd_ per new ACK, so
        // a window of delayed ACKs (one per two segments) adds about half a segment per RTT.
        let mut r = Reno::new(1000, Hystart::Off);
        let mut s = st(10_000, 5_000);
        s.abc = false;
        for _ in 0..5 {
            r.on_ack(
                &AckSample {
                    acked_bytes: 2000,
                    ..Default::default()
                },
                &mut s,
            );
        }
        // 10000 + 100 + 99 + 98 + 97 + 96 (integer bytes of 1000*1000/cwnd).
        assert_eq!(s.cwnd, 10_490);
    }

    #[test]
    fn loss_halves_flight_with_floor() {
        let mut r = Reno::new(1000, Hystart::Off);
        let mut s = st(20_000, u64::MAX);
        s.bytes_in_flight = 18_000;
        r.on_congestion_event(0, CongestionKind::Loss, &mut s);
        assert_eq!((s.ssthresh, s.cwnd), (9_000, 9_000));
        s.bytes_in_flight = 3_000;
        r.on_rto(0, true, &mut s);
        assert_eq!(s.ssthresh, 2_000);
        s.bytes_in_flight = 1_000;
        s.ssthresh = 7_000;
        r.on_rto(0, false, &mut s);
        assert_eq!(
            s.ssthresh, 7_000,
            "repeated timeout keeps ssthresh (RFC 5681 eq. 4 note)"
        );
    }

    #[test]
    fn no_growth_in_recovery() {
        let mut r = Reno::new(1000, Hystart::Off);
        let mut s = st(10_000, 5_000);
        s.in_recovery = true;
        r.on_ack(
            &AckSample {
                acked_bytes: 10_000,
                ..Default::default()
            },
            &mut s,
        );
        assert_eq!(s.cwnd, 10_000);
    }
}
