//! BBR v3 as google/bbr's v3 branch runs it (net/ipv4/tcp_bbr.c, BBR_VERSION 3; the IETF's
//! draft-ietf-ccwg-bbr describes the same algorithm). Beside v1's estimates (the bandwidth, a
//! maximum over the last one or two probing cycles, and the minimum RTT) it keeps bounds from
//! loss and ECN: `inflight_hi`/`bw_hi` (the long-term ceiling its probes found, cut by 30 % on
//! a round with over 2 % loss or, with ECN, over half the packets CE-marked) and
//! `inflight_lo`/`bw_lo` (short-term floors cut by 30 % per lossy round, by alpha/3 per round
//! with CE marks, while it is not probing).
//!
//! * STARTUP (pacing gain 2.77, window gain 2) until the bandwidth grew less than 25 % in 3
//!   rounds, or a recovery round had 6 loss events and over 2 % loss, or 2 rounds had over
//!   half their packets CE-marked; DRAIN (gain 1/2.885) down to one BDP.
//! * PROBE_BW cycles DOWN (0.91) until what is in flight is below both the BDP and
//!   inflight_hi less 15 % headroom; CRUISE (1.0) until the next probe, 2 to 3 s after DOWN
//!   began (or after min(63, BDP) rounds, Reno's time scale); REFILL (1.0) for a round with
//!   the lower bounds lifted; UP (1.25, window gain 2.25) raising inflight_hi by a slope that
//!   doubles each round, until the loss or ECN rate is too high, the bandwidth stops growing,
//!   or inflight reaches a ceiling that was too high before.
//! * PROBE_RTT when the minimum RTT of the last 5 s is not lower than what was known: the
//!   window at half the BDP for 200 ms and a round.
//!
//! Units as in Linux (see the v1 module). The random parts of the probing schedule (a wait
//! of 2 s plus up to 1 s, and 0 or 1 rounds) are drawn from a hash of the time DOWN began,
//! deterministic per run. ECN is used once the flow has seen CE feedback and only while the
//! minimum RTT is at most 5 ms (bbr_ecn_max_rtt_us: the branch's ECN logic is meant for
//! shallow-threshold marking in data centres). Not modelled: the fast path for
//! application-limited ACKs (an optimisation), Protective Load Balancing, the undo of a
//! spurious recovery, the restart after idle, the loss-probe (TLP) recovery hook.

mod control;
mod model;
mod probe_bw;
mod state;

pub use control::{Bbr3, INFO, STARTUP_GAIN};
