//! What the sender counts: the flow's report ([`FlowReport`]) and the accessors for inspection.

use super::TcpSender;
use crate::record::rows::FlowReport;
use crate::units::Time;

#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) packets_sent: u64,
    pub(super) bytes_sent: u64,
    pub(super) retransmits: u64,
    pub(super) rto_count: u64,
    /// Tail loss probes sent.
    pub(super) tlp_probes: u64,
    /// Retransmission timeouts found spurious and undone.
    pub(super) spurious_rtos: u64,
    pub(super) ecn_reductions: u64,
    /// Window reductions for a local qdisc's verdict (`local.rs`; not in the flow's report).
    pub(super) local_reductions: u64,
    pub(super) ece_acks: u64,
    pub(super) fast_recoveries: u64,
    pub(super) acks_received: u64,
    /// Window restarts after idle.
    pub(super) idle_restarts: u64,
    pub(super) first_syn: Option<Time>,
    pub(super) completed: Option<Time>,
}

impl Counters {
    /// Adds the counts to the flow's report.
    pub(super) fn report(&self, r: &mut FlowReport) {
        r.packets_sent += self.packets_sent;
        r.bytes_sent += self.bytes_sent;
        r.retransmits += self.retransmits;
        r.rto_count += self.rto_count;
        r.tlp_probes += self.tlp_probes;
        r.spurious_rtos += self.spurious_rtos;
        r.first_syn = r.first_syn.or(self.first_syn);
        r.completed = r.completed.or(self.completed);
        r.ecn_reductions += self.ecn_reductions;
    }
}

impl TcpSender {
    /// Fast recoveries entered (loss detected by duplicate ACKs / SACK).
    pub fn fast_recoveries(&self) -> u64 {
        self.n.fast_recoveries
    }
    /// ACKs received with ECE set.
    pub fn ece_acks(&self) -> u64 {
        self.n.ece_acks
    }
    pub fn retransmits(&self) -> u64 {
        self.n.retransmits
    }
    pub fn rto_count(&self) -> u64 {
        self.n.rto_count
    }
    /// Tail loss probes sent.
    pub fn tlp_probes(&self) -> u64 {
        self.n.tlp_probes
    }
    /// Retransmission timeouts found spurious and undone (F-RTO / timestamps).
    pub fn spurious_rtos(&self) -> u64 {
        self.n.spurious_rtos
    }
    pub fn ecn_reductions(&self) -> u64 {
        self.n.ecn_reductions
    }
    /// Window reductions for a local qdisc's verdict (Linux 3.2's tcp_enter_cwr).
    pub fn local_reductions(&self) -> u64 {
        self.n.local_reductions
    }
    /// Time the ACK covering the last data byte arrived (finite transfers).
    pub fn completed(&self) -> Option<Time> {
        self.n.completed
    }
    /// ACKs processed in the established state.
    pub fn acks_received(&self) -> u64 {
        self.n.acks_received
    }
    /// Window restarts after idle.
    pub fn idle_restarts(&self) -> u64 {
        self.n.idle_restarts
    }
}
