//! Transport endpoints behind one sans-I/O interface. An endpoint reacts to packets and timers,
//! given `now`, by pushing packets into an [`Outbox`]; it reports the deadline of its next timer.
//! The event loop owns time and carries packets (docs/architecture.md, principle 1).

use crate::packet::Packet;
use crate::units::Time;

pub mod cc;
pub mod tcp;

/// Packets an endpoint wants sent, in order.
pub type Outbox = Vec<Packet>;

/// Per-flow counters an endpoint contributes to the run's results. Each endpoint fills the
/// fields it knows; the flow's two endpoints together fill the record.
#[derive(Clone, Debug, Default)]
pub struct FlowReport {
    /// Packets and bytes (IP) the source put on the path, retransmissions included.
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Payload bytes delivered in order to the receiving application.
    pub bytes_delivered: u64,
    pub packets_received: u64,
    /// TCP: retransmitted segments and RTO expiries; tail loss probes sent; timeouts found
    /// spurious and undone.
    pub retransmits: u64,
    pub rto_count: u64,
    pub tlp_probes: u64,
    pub spurious_rtos: u64,
    /// TCP: time of the first SYN and of the last ACK of a finite transfer.
    pub first_syn: Option<Time>,
    pub completed: Option<Time>,
    /// TCP: congestion window (bytes) and smoothed RTT now.
    pub cwnd_bytes: u64,
    pub srtt: Option<Time>,
    /// TCP: ECN congestion reductions and ECE-marked ACKs seen.
    pub ecn_reductions: u64,
}

/// The sans-I/O endpoint interface.
pub trait Endpoint {
    /// Starts the endpoint's activity (first transmission) at `now`.
    fn start(&mut self, now: Time, out: &mut Outbox);
    /// Handles a packet addressed to this endpoint.
    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox);
    /// Runs timer work due at `now`.
    fn on_timer(&mut self, now: Time, out: &mut Outbox);
    /// Deadline of the next timer, if any.
    fn next_timer(&self) -> Option<Time>;
    /// Adds this endpoint's counters to `r`.
    fn report(&self, r: &mut FlowReport);
}
