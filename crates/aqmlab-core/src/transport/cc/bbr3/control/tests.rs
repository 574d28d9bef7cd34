//! BBR v3's rules worked by hand from google/bbr's v3 tcp_bbr.c: 1000-byte segments, a path
//! delivering 100 segments per 102.4 ms round with a 102.4 ms minimum RTT, so the bandwidth
//! is 100 x 2^24 / 102400 us = 16384 exactly (segments/us << 24) and one BDP is 100 segments.

use super::*;
use crate::transport::cc::test_state;
use crate::units::SEC;

const MSS: u64 = 1000;
const B: u64 = 16_384;
const RTT: Time = 102_400 * US;

/// A valid sample at `now` ending a round of 100 segments delivered in one RTT: the
/// connection had delivered `prior` when the sampled segment left and `prior + 100` now.
fn round(now: Time, prior: u64, in_flight: u64) -> RateSample {
    RateSample {
        now,
        delivered: Some(100),
        interval: Some(RTT),
        prior_delivered: prior,
        acked_sacked: 2,
        total_delivered: prior + 100,
        delivered_at: now,
        rtt: Some(RTT),
        prior_in_flight: in_flight,
        in_flight,
        ..RateSample::default()
    }
}

/// A BBR v3 past STARTUP, in PROBE_BW's DOWN since `t0` (bbr_start_bw_probe_down), with the
/// model above, a 200-segment window and a 1 MB/s pacing rate (2^-10 s of it is under one
/// segment: TSO bursts of the minimum 2).
fn probing(t0: Time, delivered: u64) -> Bbr3 {
    let mut b = Bbr3::new(MSS);
    b.mode = Mode::ProbeBw;
    b.full_bw_reached = true;
    b.min_rtt_us = Some(RTT / US);
    b.min_rtt_stamp = Some(t0);
    b.probe_rtt_min_us = Some(RTT / US);
    b.probe_rtt_min_stamp = Some(t0);
    b.init_cwnd = Some(10);
    b.cwnd = 200;
    b.has_seen_rtt = true;
    b.pacing_rate = 1_000_000;
    b.m.bw_hi = [B, B];
    b.delivered = delivered;
    b.next_rtt_delivered = delivered;
    b.start_probe_down(t0);
    b.update_gains();
    b
}

fn feed(b: &mut Bbr3, st: &mut CcState, mut rs: RateSample) -> RateSample {
    b.on_rate_sample(&mut rs, st);
    rs
}

#[test]
fn gains_are_the_v3_constants() {
    // bbr_startup_pacing_gain 256 x 277/100 + 1 = 710 (2.77), bbr_drain_gain 256 x 1000/2885
    // = 88, PROBE_BW: UP 5/4 = 320, DOWN 256 x 91/100 = 232, CRUISE and REFILL 256.
    assert_eq!(Bbr3::new(MSS).pacing_gain(), 710);
    assert_eq!(DRAIN_GAIN, 88);
    let gains = [Phase::Up, Phase::Down, Phase::Cruise, Phase::Refill].map(Phase::gain);
    assert_eq!(gains, [320, 232, 256, 256]);
}

#[test]
fn probe_bw_goes_down_cruise_refill_up_and_down_again() {
    let mut b = probing(0, 0);
    let mut st = test_state(200 * MSS, u64::MAX, 200 * MSS);
    let wait = b.p.wait;
    // bbr_pick_probe_wait: 2 s plus less than 1 s; 0 or 1 rounds already counted.
    assert!((2 * SEC..3 * SEC).contains(&wait), "{wait}");
    assert!(b.p.rounds_since_probe < 2);
    assert_eq!((b.phase(), b.pacing_gain()), (Phase::Down, 232));
    // DOWN holds until in the network is at most bbr_inflight(bw, 1) = the BDP (100; 3 bursts
    // of 2 and 4 segments are less) -- inflight_hi is unset, so no headroom bound.
    feed(&mut b, &mut st, round(RTT, 0, 101));
    assert_eq!(b.phase(), Phase::Down);
    feed(&mut b, &mut st, round(2 * RTT, 100, 100));
    assert_eq!((b.phase(), b.pacing_gain()), (Phase::Cruise, 256));
    // CRUISE until the wait has passed (strictly; 4 rounds are far below Reno's
    // min(63, target inflight 100) rounds).
    feed(&mut b, &mut st, round(wait, 200, 100));
    assert_eq!(b.phase(), Phase::Cruise);
    let mut rs = round(wait + 1, 300, 100);
    rs.prior_delivered = 250; // within the round: REFILL starts mid-round
    rs.total_delivered = 400;
    feed(&mut b, &mut st, rs);
    assert_eq!((b.phase(), b.pacing_gain()), (Phase::Refill, 256));
    assert_eq!(
        (b.m.bw_lo, b.m.inflight_lo),
        (UNSET, UNSET),
        "lower bounds lifted"
    );
    // REFILL lasts until a segment sent after it began is ACKed (a round): then UP, gains
    // 5/4 and 2 + 1/4 for the window, its samples now count as probe feedback.
    feed(&mut b, &mut st, round(wait + RTT / 2, 399, 100));
    assert_eq!(b.phase(), Phase::Refill);
    feed(&mut b, &mut st, round(wait + RTT, 400, 100));
    assert_eq!((b.phase(), b.pacing_gain(), b.cwnd_gain), (Phase::Up, 320, 576));
    assert!(b.p.bw_probe_samples);
    // UP ends when the bandwidth grew less than 25 % for 3 rounds (full_bw_now) while
    // inflight_hi (unset) did not hold the window back.
    for k in 1..=2 {
        feed(&mut b, &mut st, round(wait + (k + 1) * RTT, 400 + 100 * k, 100));
        assert_eq!(b.phase(), Phase::Up, "round {k}");
    }
    let t_down = wait + 4 * RTT;
    feed(&mut b, &mut st, round(t_down, 700, 100));
    assert_eq!((b.phase(), b.pacing_gain()), (Phase::Down, 232));
    assert_eq!(b.p.cycle_mstamp, t_down, "the next wait counts from here");
}

/// A BBR v3 in UP whose samples reflect its probe, with window `cwnd`.
fn probing_up(cwnd: u64) -> Bbr3 {
    let mut b = probing(0, 0);
    b.cwnd = cwnd;
    b.p.phase = Phase::Up;
    b.p.bw_probe_samples = true;
    b.update_gains();
    b
}

/// A sample whose flight had `tx_in_flight` segments, `lost` of them lost since.
fn lossy(now: Time, tx_in_flight: u64, lost: u64) -> RateSample {
    RateSample {
        tx_in_flight,
        lost,
        losses: lost,
        ..round(now, 0, tx_in_flight)
    }
}

#[test]
fn more_than_2_percent_loss_in_up_cuts_inflight_hi_and_ends_the_probe() {
    // bbr_is_inflight_too_high: lost > tx_in_flight x 5/256 (bbr_loss_thresh 2 %): of 256 in
    // flight, 5 lost is not too high, 6 is.
    let b = probing_up(150);
    assert!(!b.is_inflight_too_high(&lossy(0, 256, 5)));
    assert!(b.is_inflight_too_high(&lossy(0, 256, 6)));
    // bbr_handle_inflight_too_high: inflight_hi = max(tx_in_flight, target x (1 - beta)):
    // the target is min(bbr_inflight(bw, 1) = 100 + 2 in UP, cwnd 150) = 102, x 180/256 = 71.
    let mut b = probing_up(150);
    b.update_cycle_phase(&lossy(RTT, 130, 3), B, true, 150);
    assert_eq!(b.m.inflight_hi, 130, "what was in flight");
    assert_eq!(b.phase(), Phase::Down);
    assert!(b.p.prev_probe_too_high && !b.p.bw_probe_samples);
    let mut b = probing_up(150);
    b.update_cycle_phase(&lossy(RTT, 50, 2), B, true, 150);
    assert_eq!(b.m.inflight_hi, 71, "not below 70 % of the target");
    // Application-limited samples do not cut it (they did not probe the volume), though the
    // probe still ends; DOWN's own check then finds 52 (50 and a burst) in the network under
    // the BDP and no ceiling: CRUISE on the same ACK.
    let mut b = probing_up(150);
    let mut rs = lossy(RTT, 50, 2);
    rs.is_app_limited = true;
    b.update_cycle_phase(&rs, B, true, 150);
    assert_eq!((b.m.inflight_hi, b.phase()), (UNSET, Phase::Cruise));
}

#[test]
fn a_lost_segment_sets_inflight_hi_where_the_loss_rate_crossed_2_percent() {
    // bbr_inflight_hi_from_lost_skb: 300 in flight when the segment left, 3 lost since
    // (itself included): inflight_prev 299, lost_prev 2; the budget ceil(299 x 5/256) = 6;
    // prefix (6 - 2) x 256 / 251 = 4: inflight_hi 303 ((2 + 4) / (299 + 4) = 1.98 %).
    assert_eq!(Bbr3::inflight_hi_from_lost(&lossy(0, 300, 3)), 303);
    // Earlier losses already over the budget: no prefix (200, 5: budget ceil(995/256) = 4).
    assert_eq!(Bbr3::inflight_hi_from_lost(&lossy(0, 200, 5)), 199);
    // Through the hook while probing: 6 lost of 300 is over 2 % (5.86); lost_prev 5 is
    // under the budget 6 by one segment, which is its own prefix 256/251 = 1: inflight_hi
    // 299 + 1 = 300 ((5 + 1) / 300 = 2 %), and UP ends. 3 lost of 300 would not trigger it.
    let mut b = probing_up(400);
    b.on_segment_lost(&lossy(RTT, 300, 3));
    assert_eq!((b.m.inflight_hi, b.phase()), (UNSET, Phase::Up));
    assert!(b.m.loss_in_round && b.m.loss_in_cycle, "bbr_note_loss");
    b.on_segment_lost(&lossy(RTT, 300, 6));
    assert_eq!((b.m.inflight_hi, b.phase()), (300, Phase::Down));
    // DOWN starts a cycle with its signals cleared (bbr_reset_congestion_signals).
    assert!(!b.m.loss_in_round && !b.m.loss_in_cycle);
}

#[test]
fn a_lossy_round_outside_probing_cuts_the_lower_bounds_to_70_percent() {
    // bbr_adapt_lower_bounds in CRUISE: bw_lo and inflight_lo start from max_bw and the
    // window, then x 180/256, not below the latest round's rate and volume.
    let mut b = probing(0, 0);
    b.p.phase = Phase::Cruise;
    b.m.loss_in_round = true;
    b.m.loss_round_start = true;
    b.m.bw_latest = 1000;
    b.m.inflight_latest = 60;
    b.update_congestion_signals(&round(RTT, 0, 100), B, 200);
    assert_eq!(b.m.bw_lo, B * 180 / 256);
    assert_eq!(b.m.inflight_lo, 140, "200 x 180/256 = 140.6");
    assert!(!b.m.loss_in_round, "reset for the next round");
    // ... and the window follows: min(cwnd, inflight_lo).
    assert_eq!(b.bound_cwnd(200), 140);
    // While probing (UP) the same round leaves them alone.
    let mut b = probing_up(200);
    b.m.loss_in_round = true;
    b.m.loss_round_start = true;
    b.update_congestion_signals(&round(RTT, 0, 100), B, 200);
    assert_eq!((b.m.bw_lo, b.m.inflight_lo), (UNSET, UNSET));
}

/// A round of `delivered` segments, `ce` of them CE-marked, ending at `total` delivered.
fn ce_round(b: &mut Bbr3, total: u64, ce: u64) {
    let rs = RateSample {
        total_delivered: total,
        ce,
        ..RateSample::default()
    };
    b.m.note_ce(&rs);
    b.update_ecn_alpha(&rs);
}

#[test]
fn ecn_alpha_is_an_ewma_of_the_ce_fraction_with_gain_1_16_and_cuts_inflight_lo() {
    let mut b = probing(0, 0);
    b.min_rtt_us = Some(1000);
    // alpha starts at 1 (256): a fully marked round keeps it, 240 x 256/256 + 16 x 256/256.
    ce_round(&mut b, 100, 100);
    assert!(b.m.ecn_eligible);
    assert_eq!(b.m.ecn_alpha, 256);
    // No marks: 240 x 256 / 256 = 240; again: 240 x 240 / 256 = 225.
    ce_round(&mut b, 200, 0);
    assert_eq!(b.m.ecn_alpha, 240);
    ce_round(&mut b, 300, 0);
    assert_eq!(b.m.ecn_alpha, 225);
    // Half marked (ratio 128): 225 x 240/256 = 210 (210.9), + 16 x 128/256 = 8: 218.
    ce_round(&mut b, 400, 50);
    assert_eq!(b.m.ecn_alpha, 218);
    // bbr_ecn_cut: 256 - 218 x 85/256 (ecn_factor 1/3) = 256 - 72 = 184; a round with CE
    // outside probing cuts inflight_lo (from the window, 200) to 200 x 184/256 = 143.
    assert_eq!(b.m.ecn_cut(), 184);
    b.p.phase = Phase::Cruise;
    b.m.ecn_in_round = true;
    b.m.loss_round_start = true;
    b.update_congestion_signals(&round(RTT, 0, 100), B, 200);
    assert_eq!(b.m.inflight_lo, 143);
    assert_eq!(b.m.bw_lo, UNSET, "ECN bounds the volume only");
}

#[test]
fn ecn_is_ignored_above_a_5_ms_min_rtt() {
    // bbr_ecn_max_rtt_us: at 102.4 ms the marks change nothing.
    let mut b = probing(0, 0);
    ce_round(&mut b, 100, 100);
    ce_round(&mut b, 200, 0);
    assert!(!b.m.ecn_eligible);
    assert_eq!(b.m.ecn_alpha, 256);
}

#[test]
fn startup_ends_on_a_recovery_round_with_6_loss_events_and_over_2_percent_loss() {
    // bbr_check_loss_too_high_in_startup, at the end of a loss round (the sampled segment was
    // sent after it began: prior_delivered >= loss_round_delivered 1000).
    let run = |events: u64| {
        let mut b = Bbr3::new(MSS);
        b.next_rtt_delivered = 10_000; // no packet-timed round ends here
        b.m.loss_round_delivered = 1000;
        let mut st = test_state(200 * MSS, u64::MAX, 200 * MSS);
        for k in 1..=events {
            let mut rs = lossy(k * MS, 200, k);
            rs.losses = 1;
            rs.prior_delivered = if k == events { 1000 } else { 900 };
            rs.total_delivered = rs.prior_delivered + 100;
            rs.ca_state = CaState::Recovery;
            feed(&mut b, &mut st, rs);
        }
        (b, st)
    };
    // 5 events (5 lost of 200, over 2 %) are not enough.
    let (b, _) = run(5);
    assert_eq!((b.mode(), b.full_bw_reached), (Mode::Startup, false));
    assert_eq!(
        b.m.loss_events_in_round, 0,
        "the count starts over with the round"
    );
    // 6: the pipe is full; inflight_hi = max(bbr_inflight(max_bw, 1) = BDP 100, the latest
    // round's 100 delivered); DRAIN at once, ssthresh shows that inflight.
    let (b, st) = run(6);
    assert!(b.full_bw_reached);
    assert_eq!(b.m.inflight_hi, 100);
    assert_eq!(b.mode(), Mode::Drain);
    assert_eq!(st.ssthresh, 100 * MSS);
}

#[test]
fn probe_rtt_every_5_s_holds_half_a_bdp_for_200_ms_and_a_round() {
    let mut b = probing(0, 0);
    b.p.phase = Phase::Cruise;
    b.p.wait = 10 * SEC;
    let mut st = test_state(200 * MSS, u64::MAX, 150 * MSS);
    // 5 s after the 5 s filter's minimum was taken it has not expired (strictly after).
    let mut rs = round(5 * SEC, 0, 150);
    rs.rtt = Some(RTT + MS);
    feed(&mut b, &mut st, rs);
    assert_eq!(b.mode(), Mode::ProbeBw);
    let cwnd = st.cwnd / MSS;
    // Then PROBE_RTT: the window saved and cut to max(4, bbr_bdp(bw, 1/2)) = 50, the flight
    // marked application-limited.
    let mut rs = round(5 * SEC + MS, 100, 150);
    rs.rtt = Some(RTT + MS);
    let rs = feed(&mut b, &mut st, rs);
    assert_eq!(b.mode(), Mode::ProbeRtt);
    assert_eq!(st.cwnd, 50 * MSS);
    assert_eq!(b.prior_cwnd, cwnd);
    assert!(rs.mark_app_limited);
    assert_eq!(b.p.ack_phase, AckPhase::ProbeStopping);
    // 200 ms from when no more than 50 are in flight, and a round.
    feed(&mut b, &mut st, round(5 * SEC + 50 * MS, 200, 51));
    assert_eq!(b.probe_rtt_done_stamp, None);
    feed(&mut b, &mut st, round(5 * SEC + 100 * MS, 200, 50));
    assert_eq!(b.probe_rtt_done_stamp, Some(5 * SEC + 300 * MS));
    feed(&mut b, &mut st, round(5 * SEC + 250 * MS, 300, 50));
    assert_eq!((b.mode(), st.cwnd), (Mode::ProbeRtt, 50 * MSS));
    feed(&mut b, &mut st, round(5 * SEC + 300 * MS, 400, 50));
    assert_eq!(b.mode(), Mode::ProbeRtt);
    // Out: PROBE_BW through DOWN straight to CRUISE (bbr_exit_probe_rtt), the window back to
    // at least the saved one; the next PROBE_RTT 5 s from now.
    feed(&mut b, &mut st, round(5 * SEC + 301 * MS, 500, 50));
    assert_eq!((b.mode(), b.phase()), (Mode::ProbeBw, Phase::Cruise));
    assert!(st.cwnd >= cwnd * MSS, "{} vs {cwnd}", st.cwnd);
    assert_eq!(b.probe_rtt_min_stamp, Some(5 * SEC + 301 * MS));
}
