//! The state BBR v3 keeps beyond v1's: the loss and ECN part of the model (the bounds, the
//! latest round's delivery, the ECN mark EWMA), which model.rs updates, and the PROBE_BW
//! cycle's probing state, which probe_bw.rs runs (tcp_bbr.c v3).

use crate::transport::cc::bbr::{BBR_SCALE, BBR_UNIT};
use crate::transport::cc::RateSample;
use crate::units::Time;

/// "None" for the bounds (Linux's ~0U).
pub(super) const UNSET: u64 = u64::MAX;
/// bbr_ecn_factor: a bound is cut by 1/3 of the ECN mark fraction.
const ECN_FACTOR: u64 = BBR_UNIT / 3;

/// The loss and ECN part of the model (counts in segments, bandwidths as v1's).
#[derive(Clone, Debug)]
pub(super) struct Model {
    /// The maxima of the previous and the current probing cycle.
    pub(super) bw_hi: [u64; 2],
    pub(super) bw_lo: u64,
    pub(super) inflight_hi: u64,
    pub(super) inflight_lo: u64,
    /// The highest delivery rate and delivered volume of the latest round.
    pub(super) bw_latest: u64,
    pub(super) inflight_latest: u64,
    pub(super) loss_round_delivered: u64,
    pub(super) loss_round_start: bool,
    pub(super) loss_in_round: bool,
    pub(super) ecn_in_round: bool,
    pub(super) loss_in_cycle: bool,
    pub(super) ecn_in_cycle: bool,
    pub(super) loss_events_in_round: u32,
    pub(super) startup_ecn_rounds: u32,
    /// ECN: the flow carries CE feedback; eligible (and under the RTT bound); EWMA of the CE
    /// fraction (1/256) and the counts at its last update.
    pub(super) ecn_seen: bool,
    pub(super) ecn_eligible: bool,
    pub(super) ecn_alpha: u64,
    pub(super) delivered_ce: u64,
    pub(super) alpha_last_delivered: u64,
    pub(super) alpha_last_delivered_ce: u64,
}

impl Default for Model {
    fn default() -> Model {
        Model {
            bw_hi: [0; 2],
            bw_lo: UNSET,
            inflight_hi: UNSET,
            inflight_lo: UNSET,
            bw_latest: 0,
            inflight_latest: 0,
            // bbr_init: ECN sampling starts after the first full flight is ACKed.
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_events_in_round: 0,
            startup_ecn_rounds: 0,
            ecn_seen: false,
            ecn_eligible: false,
            ecn_alpha: BBR_UNIT,
            delivered_ce: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
        }
    }
}

impl Model {
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    /// bbr_reset_congestion_signals, after probing.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// bbr_advance_latest_delivery_signals: a new loss round starts the latest filters over.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u64) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.unwrap_or(0);
        }
    }

    /// Counts the sample's CE-marked deliveries (Linux's tp->delivered_ce); ECN feedback
    /// shows that the flow negotiated ECN.
    pub(super) fn note_ce(&mut self, rs: &RateSample) {
        self.delivered_ce += rs.ce;
        self.ecn_seen |= rs.ce > 0;
    }

    /// bbr_ecn_cut: 1 - alpha x ecn_factor.
    pub(super) fn ecn_cut(&self) -> u64 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// bbr_advance_max_bw_filter: a cycle's maximum becomes the previous one (unless the
    /// cycle had no sample).
    pub(super) fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi = [self.bw_hi[1], 0];
    }
}

/// The phases of PROBE_BW and their pacing gains (bbr_pacing_gain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Up,
    Down,
    Cruise,
    Refill,
}

impl Phase {
    pub fn gain(self) -> u64 {
        match self {
            Phase::Up => BBR_UNIT * 5 / 4,
            Phase::Down => BBR_UNIT * 91 / 100,
            Phase::Cruise | Phase::Refill => BBR_UNIT,
        }
    }
}

/// What the ACKs arriving now say about the probing (bbr_ack_phase).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum AckPhase {
    #[default]
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// The probing state.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    pub(super) phase: Phase,
    pub(super) ack_phase: AckPhase,
    /// When the current phase (DOWN: the cycle) began, and the wait from then to the next probe.
    pub(super) cycle_mstamp: Time,
    pub(super) wait: Time,
    pub(super) rounds_since_probe: u64,
    /// inflight_hi grows by 1 per `up_cnt` segments ACKed in UP; `up_acks` counts them,
    /// `up_rounds` doubles the slope each round.
    pub(super) up_cnt: u64,
    pub(super) up_acks: u64,
    pub(super) up_rounds: u32,
    pub(super) bw_probe_samples: bool,
    pub(super) prev_probe_too_high: bool,
    pub(super) stopped_risky_probe: bool,
}

impl Default for Probe {
    fn default() -> Probe {
        Probe {
            phase: Phase::Up,
            ack_phase: AckPhase::Init,
            cycle_mstamp: 0,
            wait: 0,
            rounds_since_probe: 0,
            up_cnt: UNSET,
            up_acks: 0,
            up_rounds: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
        }
    }
}
