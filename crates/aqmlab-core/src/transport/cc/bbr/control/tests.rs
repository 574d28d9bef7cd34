//! BBR's state machine worked by hand from tcp_bbr.c: 1000-byte segments, a path delivering
//! 100 segments per 100 ms round (bw = 100 x 2^24 / 100000 us = 16777 in segments/us << 24)
//! with a 100 ms minimum RTT, so one BDP is ceil(16777 x 100000 / 2^24) = 100 segments.

use super::*;
use crate::transport::cc::test_state;

const MSS: u64 = 1000;
const B: u64 = 16_777;

/// A valid sample at `now` ending a round of 100 segments delivered in 100 ms: the connection
/// had delivered `prior` when the sampled segment left and `prior + 100` now.
fn round(now: Time, prior: u64, in_flight: u64) -> RateSample {
    RateSample {
        now,
        delivered: Some(100),
        interval: Some(100 * MS),
        prior_delivered: prior,
        acked_sacked: 2,
        total_delivered: prior + 100,
        delivered_at: now,
        rtt: Some(100 * MS),
        prior_in_flight: in_flight,
        in_flight,
        ..RateSample::default()
    }
}

fn feed(b: &mut Bbr, st: &mut CcState, mut rs: RateSample) {
    b.on_rate_sample(&mut rs, st);
}

#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth_then_drain_then_probe_bw() {
    let mut b = Bbr::new(MSS);
    let mut st = test_state(300 * MSS, u64::MAX, 300 * MSS);
    // Round 1 sets full_bw = B (anything beats a threshold of 0); rounds 2, 3 and 4 bring no
    // 25 % growth (B < 5/4 B): full_bw_cnt 1, 2, 3, and the pipe is full at the fourth.
    for r in 0..3 {
        feed(&mut b, &mut st, round((r + 1) * 100 * MS, r * 100, 300));
        assert_eq!(b.mode(), Mode::Startup, "round {}", r + 1);
        assert_eq!(b.pacing_gain(), HIGH_GAIN);
    }
    assert_eq!(b.bw(), B);
    feed(&mut b, &mut st, round(400 * MS, 300, 300));
    assert!(b.full_bw_reached());
    // DRAIN: ssthresh = bbr_inflight(bw, 1) = BDP 100 + 3 TSO bursts of 2 (the STARTUP pacing
    // rate, B x 1000 B x 739/256 x 0.99 per us >> 24, is about 2.86 MB/s: 2790 B per 2^-10 s,
    // two segments) = 106, already even. In flight 300 + one burst: no drain yet.
    assert_eq!(b.mode(), Mode::Drain);
    assert_eq!(st.ssthresh, 106 * MSS);
    assert_eq!(b.pacing_gain(), DRAIN_GAIN);
    // 107 segments in flight (nothing left to pace): still draining; 106: the queue is gone.
    feed(&mut b, &mut st, round(500 * MS, 400, 107));
    assert_eq!(b.mode(), Mode::Drain);
    feed(&mut b, &mut st, round(600 * MS, 500, 106));
    assert_eq!(b.mode(), Mode::ProbeBw);
    // bbr_reset_probe_bw_mode: a random phase 7 - [0, 7) then one step on: never the 3/4 phase.
    assert_ne!(b.cycle_idx(), 1);
    assert_eq!(b.pacing_gain(), PACING_GAIN[b.cycle_idx()]);
}

#[test]
fn growth_of_a_quarter_per_round_keeps_startup_going() {
    // 100, 126, 158, 198, ... segments per round: each round's bw reaches 5/4 of full_bw.
    let mut b = Bbr::new(MSS);
    let mut st = test_state(300 * MSS, u64::MAX, 300 * MSS);
    let mut prior = 0;
    let mut n = 100u64;
    for r in 1..=8 {
        let mut rs = round(r * 100 * MS, prior, 300);
        rs.delivered = Some(n);
        rs.total_delivered = prior + n;
        feed(&mut b, &mut st, rs);
        assert_eq!(b.mode(), Mode::Startup, "round {r}");
        prior += n;
        n = n * 5 / 4 + 1;
    }
}

/// A BBR in PROBE_BW at phase `idx` since `t0`, the pacing rate 10 Mbit/s (2^-10 s of it is
/// 1220 B: TSO bursts of the minimum 2 segments).
fn probing(idx: usize, t0: Time) -> Bbr {
    let mut b = Bbr::new(MSS);
    b.mode = Mode::ProbeBw;
    b.full_bw_reached = true;
    b.cycle_idx = idx;
    b.cycle_mstamp = t0;
    b.min_rtt_us = Some(100_000);
    b.min_rtt_stamp = Some(t0);
    b.bw.reset(0, B);
    b.pacing_rate = 1_250_000;
    b.update_gains();
    b
}

/// The gain cycle's step alone on a sample at `now` with `inflight` segments (nothing paced
/// ahead); returns the phase after it.
fn step(b: &mut Bbr, now: Time, inflight: u64, losses: u64) -> usize {
    let mut rs = round(now, 0, inflight);
    rs.losses = losses;
    b.update_cycle_phase(&rs);
    b.update_gains();
    b.cycle_idx()
}

#[test]
fn probe_bw_cycles_5_4_then_3_4_then_six_phases_of_1_each_a_min_rtt_long() {
    // Phase 0 (5/4) ends once a min RTT has passed (strictly) and inflight reached
    // bbr_inflight(bw, 5/4): BDP ceil(B x 100000 x 320/256 / 2^24) = 125, + 3 x 2 = 131, even
    // 132, + 2 in phase 0 = 134; in the network at the next departure: inflight + one burst (2).
    let mut b = probing(0, 0);
    assert_eq!(b.pacing_gain(), BBR_UNIT * 5 / 4);
    assert_eq!(step(&mut b, 100 * MS, 200, 0), 0, "a min RTT, not more");
    assert_eq!(step(&mut b, 101 * MS, 131, 0), 0, "131 + 2 < 134");
    assert_eq!(step(&mut b, 101 * MS, 132, 0), 1, "132 + 2 = 134");
    // ... or on a loss once the phase is long enough.
    let mut b2 = probing(0, 0);
    assert_eq!(step(&mut b2, 101 * MS, 10, 1), 1);
    // Phase 1 (3/4) ends at a min RTT, or as soon as inflight is down to bbr_inflight(bw, 1)
    // = 100 + 6 = 106.
    assert_eq!(b.pacing_gain(), BBR_UNIT * 3 / 4);
    assert_eq!(step(&mut b, 150 * MS, 107, 0), 1);
    assert_eq!(step(&mut b, 150 * MS, 106, 0), 2);
    // Phases 2..7 (gain 1) last one min RTT each, whatever is in flight, then phase 0 again.
    let mut t = 150 * MS;
    for idx in 2..8 {
        assert_eq!(b.pacing_gain(), BBR_UNIT);
        assert_eq!(
            step(&mut b, t + 100 * MS, 1, 0),
            idx,
            "phase {idx} at one min RTT"
        );
        t += 100 * MS + 1_000;
        assert_eq!(step(&mut b, t, 1000, 0), (idx + 1) % 8);
    }
    assert_eq!(b.pacing_gain(), BBR_UNIT * 5 / 4);
}

#[test]
fn probe_rtt_after_10_s_without_a_lower_rtt_holds_4_segments_for_200_ms_and_a_round() {
    let mut b = probing(2, 0);
    let mut st = test_state(200 * MSS, u64::MAX, 150 * MSS);
    // 10 s after the min RTT was taken the filter has not expired yet (after() is strict).
    let mut rs = round(10 * SEC, 0, 150);
    rs.rtt = Some(120 * MS);
    feed(&mut b, &mut st, rs);
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert_eq!(b.min_rtt(), Some(100 * MS));
    // That sample set the window to min(200 + 2 acked, target) = 202 (target: 2 x BDP 200 + the
    // 2 segments of ACK aggregation's first epoch + 6 for TSO = 208). A millisecond later the
    // filter has expired: PROBE_RTT, the window saved (202) and cut to 4 segments, the
    // expired minimum replaced by the sample, the flight marked application-limited.
    let mut rs = round(10 * SEC + MS, 100, 150);
    rs.rtt = Some(120 * MS);
    b.on_rate_sample(&mut rs, &mut st);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    assert_eq!(st.cwnd, 4 * MSS);
    assert_eq!(b.prior_cwnd, 202);
    assert_eq!(b.min_rtt(), Some(120 * MS));
    assert!(rs.mark_app_limited);
    // The 200 ms start once no more than 4 segments are in flight (at 10.1 s); the round
    // starts then too (next_rtt_delivered = delivered now, 300). (The 100 ms RTT samples
    // lower the minimum again meanwhile, which does not end PROBE_RTT.)
    feed(&mut b, &mut st, round(10 * SEC + 50 * MS, 200, 5));
    assert_eq!(b.probe_rtt_done_stamp, None);
    feed(&mut b, &mut st, round(10 * SEC + 100 * MS, 200, 4));
    assert_eq!(b.probe_rtt_done_stamp, Some(10 * SEC + 300 * MS));
    // A round has passed (the sample's segment left after delivered reached 300) but not
    // 200 ms: still PROBE_RTT at 4 segments.
    feed(&mut b, &mut st, round(10 * SEC + 250 * MS, 300, 4));
    assert_eq!((b.mode(), st.cwnd), (Mode::ProbeRtt, 4 * MSS));
    // At 10.3 s exactly not yet (strictly after); then back to PROBE_BW with the saved window
    // 202, grown by the 2 segments acknowledged (the target, 200 + at least 4 of aggregation
    // + 6, is above).
    feed(&mut b, &mut st, round(10 * SEC + 300 * MS, 400, 4));
    assert_eq!(b.mode(), Mode::ProbeRtt);
    feed(&mut b, &mut st, round(10 * SEC + 301 * MS, 500, 4));
    assert_eq!(b.mode(), Mode::ProbeBw);
    assert_eq!(b.min_rtt_stamp, Some(10 * SEC + 301 * MS));
    assert_eq!(st.cwnd, 204 * MSS);
}

#[test]
fn only_a_lower_rtt_postpones_probe_rtt_since_linux_5_10() {
    // bbr_update_min_rtt since commit 1b9e2a8c99a5: a sample equal to the minimum (100 ms,
    // taken at 0) leaves its 10 s clock alone, so PROBE_RTT comes just after 10 s; with the
    // earlier rule (<=) the equal sample at 9 s renews it and PROBE_RTT waits until 19 s.
    for (renew, at_10s) in [
        (MinRttRenew::Lower, Mode::ProbeRtt),
        (MinRttRenew::LowerOrEqual, Mode::ProbeBw),
    ] {
        let mut b = probing(2, 0);
        b.min_rtt_renew = renew;
        let mut st = test_state(200 * MSS, u64::MAX, 150 * MSS);
        feed(&mut b, &mut st, round(9 * SEC, 0, 150));
        let mut rs = round(10 * SEC + MS, 100, 150);
        rs.rtt = Some(120 * MS);
        feed(&mut b, &mut st, rs);
        assert_eq!(b.mode(), at_10s, "{renew:?}");
    }
}

#[test]
fn first_round_of_recovery_conserves_packets_then_the_saved_window_returns() {
    // bbr_set_cwnd_to_recover_or_restore: entering recovery the window is what is in flight
    // plus what this ACK delivered; on exit at least the window saved at the loss.
    let mut b = probing(2, 0);
    let mut st = test_state(200 * MSS, u64::MAX, 150 * MSS);
    b.on_congestion_event(0, CongestionKind::Loss, &mut st);
    let mut rs = round(50 * MS, 0, 120);
    rs.ca_state = CaState::Recovery;
    rs.losses = 3;
    feed(&mut b, &mut st, rs);
    assert_eq!(st.cwnd, 122 * MSS, "120 in flight + 2 delivered");
    let mut rs = round(60 * MS, 0, 100);
    rs.ca_state = CaState::Open;
    feed(&mut b, &mut st, rs);
    assert_eq!(
        st.cwnd,
        202 * MSS,
        "max(122, saved 200) + 2, under the target 200 + 2 + 6"
    );
}

/// One step of the long-term estimator: a sample at `t_ms` with the connection's totals.
fn lt_step(b: &mut Bbr, round_start: bool, losses: u64, t_ms: u64, delivered: u64, lost: u64) {
    b.round_start = round_start;
    let rs = RateSample {
        now: t_ms * MS,
        delivered_at: t_ms * MS,
        losses,
        total_delivered: delivered,
        total_lost: lost,
        ..RateSample::default()
    };
    b.lt_sampling(&rs);
}

/// An interval from (`t0` ms, `d0` delivered, `l0` lost): 4 rounds, then a loss at `t1` ms
/// with the totals `d1`, `l1`.
fn lt_interval(b: &mut Bbr, (t0, d0, l0): (u64, u64, u64), (t1, d1, l1): (u64, u64, u64)) {
    for k in 1..=4 {
        lt_step(b, true, 0, t0 + k, d0 + k, l0);
    }
    lt_step(b, false, 1, t1, d1, l1);
}

#[test]
fn two_lossy_intervals_at_a_consistent_rate_are_taken_for_a_policer() {
    let mut b = probing(2, 0);
    // Sampling starts at the first loss; nothing before it counts.
    lt_step(&mut b, true, 0, 0, 0, 0);
    assert!(!b.lt.is_sampling);
    lt_step(&mut b, false, 1, 0, 0, 0);
    assert!(b.lt.is_sampling);
    // 400 delivered and 100 lost in 400 ms: 100 x 256 >= 50 x 400 (over 20 % lost); the rate
    // 400 x 2^24 / 400000 us = B. The first interval only records it.
    lt_interval(&mut b, (0, 0, 0), (400, 400, 100));
    assert_eq!((b.lt.bw, b.lt.use_bw), (B, false));
    // 300 in the next 400 ms: 12582, off by 4195 > B / 8 = 2097 (and far over 4 kbit/s): not
    // consistent, it replaces the first.
    lt_interval(&mut b, (400, 400, 100), (800, 700, 200));
    assert_eq!((b.lt.bw, b.lt.use_bw), (12_582, false));
    // 320 in 400 ms: 13421, within 1/8 of 12582: policed at their average, pacing gain 1.
    lt_interval(&mut b, (800, 700, 200), (1200, 1020, 300));
    assert!(b.lt.use_bw);
    assert_eq!(b.bw(), (12_582 + 13_421) / 2);
    assert_eq!(b.pacing_gain(), BBR_UNIT);
    // A loss rate under 20 % would not have ended the interval: 5 lost of 400 (checked apart).
    let mut c = probing(2, 0);
    lt_step(&mut c, false, 1, 0, 0, 0);
    lt_interval(&mut c, (0, 0, 0), (400, 400, 5));
    assert_eq!(c.lt.bw, 0);
    // The policed rate is used for 48 rounds of PROBE_BW, then sampling starts over.
    for _ in 0..47 {
        lt_step(&mut b, true, 0, 2000, 2000, 300);
    }
    assert!(b.lt.use_bw);
    lt_step(&mut b, true, 0, 2000, 2000, 300);
    assert!(!b.lt.use_bw);
    assert_eq!(b.bw(), B);
}
