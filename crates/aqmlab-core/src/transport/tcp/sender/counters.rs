//! What the sender counts, and their share of the flow's report ([`FlowReport`]); the sender's
//! accessors for inspection read them (`mod.rs`).

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
        r.fast_recoveries += self.fast_recoveries;
        r.tlp_probes += self.tlp_probes;
        r.spurious_rtos += self.spurious_rtos;
        r.first_syn = r.first_syn.or(self.first_syn);
        r.completed = r.completed.or(self.completed);
        r.ecn_reductions += self.ecn_reductions;
    }
}
