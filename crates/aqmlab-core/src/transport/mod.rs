//! Transport endpoints behind one sans-I/O interface. An endpoint reacts to packets and timers,
//! given `now`, by pushing packets into an [`Outbox`]; it reports the deadline of its next timer.
//! The event loop owns time and carries packets (docs/architecture.md, principle 1).

use crate::packet::Packet;
use crate::queue::LocalVerdict;
use crate::record::rows::{CcReport, FlowReport};
use crate::units::Time;

pub mod cc;
pub mod tcp;
pub mod wire;

/// Packets an endpoint wants sent, in order.
pub type Outbox = Vec<Packet>;

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
    /// Fills in its congestion controller's state (a TCP sender's).
    fn cc_report(&self, _r: &mut CcReport) {}
    /// Whether the endpoint hears the verdict of a qdisc on its own host (`local_sender`), as
    /// a kernel TCP socket does; if so, a refused packet ends what it sends at that moment.
    fn hears_local_verdicts(&self) -> bool {
        false
    }
    /// The packets of one send that a qdisc on the endpoint's own host did not queue, in
    /// order of sending, each with its verdict (called only when some were refused).
    fn on_local_verdicts(&mut self, _refused: &[(Packet, LocalVerdict)], _now: Time) {}
    /// Its first hop is its own host's qdisc (`local_sender`); `edt`: that qdisc paces by
    /// departure time (`Qdisc::paces_departures`), and a pacing kernel TCP sender stamps its
    /// packets with their departure times instead of holding them back itself (Linux
    /// SK_PACING_FQ). Returns whether the endpoint counts what it has in its host and so wants
    /// [`Self::left_host`] (TCP Small Queues, `small_queues`).
    fn at_host(&mut self, _edt: bool) -> bool {
        false
    }
    /// One of its packets of `size` bytes left its own host's custody: its TX completion
    /// (Linux's `tcp_wfree`: the end of its transmission on a wired `local_sender` hop, the
    /// acknowledgement or the last failed try of a WiFi frame) or a drop by the qdisc or the
    /// driver.
    fn left_host(&mut self, _size: u32, _now: Time, _out: &mut Outbox) {}
}
