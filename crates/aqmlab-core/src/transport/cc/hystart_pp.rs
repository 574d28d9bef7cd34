//! HyStart++ (RFC 9406): slow start that leaves early on a rise of the per-round minimum RTT.
//!
//! Per round (an RTT, `AckSample::round_start`) the minimum RTT of the first samples is kept.
//! Once a round has N_RTT_SAMPLE = 8 samples and the previous round had any, a current minimum
//! of at least last + clamp(last / 8, 4 ms, 16 ms) ends slow start proper and starts
//! Conservative Slow Start (CSS): growth a quarter of slow start's (CSS_GROWTH_DIVISOR 4). A
//! CSS round whose minimum falls back below the RTT that started CSS resumes slow start (the
//! rise was spurious); after CSS_ROUNDS = 5 rounds, ssthresh = cwnd and congestion avoidance
//! begins. Slow start adds min(acked, L x SMSS) per ACK with L = 8 (RFC 9406 4.2 for senders
//! that do not pace; one SMSS per ACK without byte counting, as ns-2). As the RFC recommends,
//! HyStart++ runs in the initial slow start only: the first loss, ECN reduction or timeout
//! ends it, and later slow starts are the controller's plain ones.

use super::{slow_start, AckSample, CcState};
use crate::units::{Time, MS};

const MIN_RTT_THRESH: Time = 4 * MS;
const MAX_RTT_THRESH: Time = 16 * MS;
const MIN_RTT_DIVISOR: Time = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_GROWTH_DIVISOR: u64 = 4;
const CSS_ROUNDS: u32 = 5;
/// Segments per ACK slow start may add (RFC 9406 4.2, non-paced).
const L: u64 = 8;

#[derive(Clone, Debug, Default)]
pub struct HystartPp {
    last_round_min: Option<Time>,
    round_min: Option<Time>,
    samples: u32,
    /// `Some(baseline RTT)` while in CSS.
    css_baseline: Option<Time>,
    css_rounds: u32,
    /// The initial slow start is over: plain slow start from now on.
    done: bool,
}

impl HystartPp {
    /// True while in Conservative Slow Start.
    pub fn in_css(&self) -> bool {
        self.css_baseline.is_some()
    }

    /// True once HyStart++ has handed over to congestion avoidance or a congestion signal
    /// ended it.
    pub fn done(&self) -> bool {
        self.done
    }

    /// A congestion signal (loss, ECN, timeout): HyStart++ is over.
    pub fn end(&mut self) {
        self.done = true;
        self.css_baseline = None;
    }

    /// Window growth for one ACK in slow start (cwnd < ssthresh). Returns the acknowledged
    /// bytes left for congestion avoidance (as [`slow_start`]).
    pub fn slow_start(&mut self, ack: &AckSample, st: &mut CcState) -> u64 {
        if self.done {
            return slow_start(st, ack.acked_bytes);
        }
        if ack.round_start {
            self.last_round_min = self.round_min;
            self.round_min = None;
            self.samples = 0;
            if self.in_css() {
                self.css_rounds += 1;
                if self.css_rounds >= CSS_ROUNDS {
                    st.ssthresh = st.cwnd;
                    self.done = true;
                    self.css_baseline = None;
                    return ack.acked_bytes;
                }
            }
        }
        if let Some(rtt) = ack.rtt {
            self.round_min = Some(self.round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        if self.samples >= N_RTT_SAMPLE {
            match (self.css_baseline, self.round_min, self.last_round_min) {
                (None, Some(cur), Some(last)) => {
                    let thresh = (last / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                    if cur >= last + thresh {
                        self.css_baseline = Some(cur);
                        self.css_rounds = 0;
                    }
                }
                (Some(base), Some(cur), _) if cur < base => self.css_baseline = None,
                _ => {}
            }
        }
        let inc = ack.acked_bytes.min(if st.abc { L * st.mss } else { st.mss });
        let inc = if self.in_css() {
            inc / CSS_GROWTH_DIVISOR
        } else {
            inc
        };
        let room = st.ssthresh.saturating_sub(st.cwnd);
        st.cwnd += inc.min(room);
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn state() -> CcState {
        CcState {
            cwnd: 10 * MSS,
            ssthresh: u64::MAX,
            mss: MSS,
            bytes_in_flight: 0,
            in_recovery: false,
            cwnd_limited: true,
            flight_cwnd_limited: true,
            srtt: None,
            abc: true,
        }
    }

    /// One round of `acks` ACKs of one segment each, every one with RTT `rtt_ms`.
    fn round(h: &mut HystartPp, st: &mut CcState, acks: u32, rtt_ms: u64) {
        for k in 0..acks {
            let ack = AckSample {
                acked_bytes: MSS,
                rtt: Some(rtt_ms * MS),
                round_start: k == 0,
                ..AckSample::default()
            };
            h.slow_start(&ack, st);
        }
    }

    #[test]
    fn a_rise_of_an_eighth_of_the_min_rtt_starts_css_and_five_rounds_end_slow_start() {
        // RFC 9406 section 4.2: last round's minimum 100 ms gives RttThresh = clamp(12.5 ms,
        // 4 ms, 16 ms); a round whose 8 first samples are all >= 112.5 ms enters CSS.
        let (mut h, mut st) = (HystartPp::default(), state());
        round(&mut h, &mut st, 10, 100);
        assert_eq!(st.cwnd, 20 * MSS, "slow start: one segment per segment acked");
        round(&mut h, &mut st, 10, 112);
        assert!(!h.in_css(), "112 ms < 100 + 12.5 ms");
        round(&mut h, &mut st, 10, 130);
        assert!(h.in_css(), "130 ms >= 112 + clamp(14, 4, 16) ms");
        // In CSS each acked segment adds a quarter of a segment. The 8th sample (the 8th ACK)
        // enters CSS, so the round grows by 7 segments and then 3 quarters (ACKs 8 to 10).
        assert_eq!(st.cwnd, 30 * MSS + 7 * MSS + 3 * MSS / 4);
        let before = st.cwnd;
        round(&mut h, &mut st, 8, 130);
        assert_eq!(st.cwnd, before + 2 * MSS);
        // CSS_ROUNDS = 5 rounds in CSS, then congestion avoidance: ssthresh = cwnd.
        for _ in 0..3 {
            round(&mut h, &mut st, 8, 130);
        }
        assert!(h.in_css() && st.ssthresh == u64::MAX);
        round(&mut h, &mut st, 8, 130);
        assert!(h.done() && !h.in_css());
        assert!(st.ssthresh < u64::MAX && !st.in_slow_start());
    }

    #[test]
    fn a_fall_below_the_css_baseline_resumes_slow_start() {
        // RFC 9406 4.2: in CSS, a round minimum below cssBaselineMinRtt means the rise was
        // spurious: back to slow start (full growth), CSS rounds no longer counted.
        let (mut h, mut st) = (HystartPp::default(), state());
        round(&mut h, &mut st, 10, 50);
        round(&mut h, &mut st, 10, 60);
        assert!(h.in_css(), "60 >= 50 + max(4, 6.25) ms");
        round(&mut h, &mut st, 10, 55);
        assert!(!h.in_css());
        let before = st.cwnd;
        round(&mut h, &mut st, 10, 55);
        assert_eq!(st.cwnd, before + 10 * MSS);
    }

    #[test]
    fn small_rtts_use_the_4_ms_floor_and_a_signal_ends_it() {
        let (mut h, mut st) = (HystartPp::default(), state());
        round(&mut h, &mut st, 10, 10);
        round(&mut h, &mut st, 10, 13);
        assert!(!h.in_css(), "13 < 10 + 4 ms (the floor; 10/8 is below it)");
        round(&mut h, &mut st, 10, 17);
        assert!(h.in_css());
        h.end();
        let before = st.cwnd;
        round(&mut h, &mut st, 10, 40);
        // Plain slow start afterwards (the shared RFC 3465 rule).
        assert_eq!(st.cwnd, before + 10 * MSS);
        assert!(!h.in_css());
    }
}
