//! The rows of the tables a run returns, as the layers that produce them fill them: a flow's
//! counters (`FlowReport`, from its endpoints) and its controller's state (`CcReport`), a hop's (`LinkStats`, from its link), a web
//! exchange's and a page fetch's records (from the applications), and the rows the run's
//! collection builds from them (`FlowRow`, `LinkRow`, ...). Declared here, below the producers,
//! so that the tables (`tables.rs`) never look above the record layer.

use crate::packet::Dir;
use crate::queue::DropReason;
use crate::units::Time;

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
    /// TCP: retransmitted segments and RTO expiries; fast recoveries entered; tail loss probes
    /// sent; timeouts found spurious and undone.
    pub retransmits: u64,
    pub rto_count: u64,
    pub fast_recoveries: u64,
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

/// Where a controller's state machine stands (`flow_series.cc_state`): BBR's modes
/// (tcp_bbr.c `enum bbr_mode`), and for BBR v3 the four phases of PROBE_BW in its place
/// (`enum bbr_pacing_gain_phase`, draft-ietf-ccwg-bbr's ProbeBW_DOWN .. ProbeBW_UP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcPhase {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
}

impl CcPhase {
    /// The names, in code order (the dictionary of the `cc_state` column).
    pub const NAMES: [&'static str; 8] = [
        "startup",
        "drain",
        "probe_bw",
        "probe_rtt",
        "probe_bw_down",
        "probe_bw_cruise",
        "probe_bw_refill",
        "probe_bw_up",
    ];
}

/// A controller's own estimates and settings at one moment, as the `flow_series` table records
/// them; None where the controller has no such quantity (docs/transports.md 3.12).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcReport {
    /// The slow-start threshold in bytes (the sender's, which the controller sets); None while
    /// it is unbounded (no congestion signal yet).
    pub ssthresh: Option<u64>,
    /// DCTCP's and Prague's alpha, BBR v3's ECN alpha: the estimated fraction of CE-marked
    /// data, 0 to 1.
    pub alpha: Option<f64>,
    /// BBR's bandwidth estimate, payload bits per second.
    pub bw_bps: Option<u64>,
    /// The controller's minimum RTT (BBR's min_rtt, CUBIC's delay_min).
    pub min_rtt: Option<Time>,
    /// BBR's pacing gain (1 = the bandwidth estimate).
    pub pacing_gain: Option<f64>,
    /// BBR's mode (v3: PROBE_BW's phase in its place).
    pub phase: Option<CcPhase>,
    /// CUBIC's W_max in bytes: the window the cubic curve returns to; None before the first
    /// reduction (and after a timeout, which clears it).
    pub w_max: Option<u64>,
}

/// Counters of one hop.
#[derive(Clone, Debug, Default)]
pub struct LinkStats {
    pub arrivals: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops: [u64; DropReason::ALL.len()],
    pub marks: u64,
}

impl LinkStats {
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// One exchange as the run produced it (the `web` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExchangeRecord {
    pub connection: u32,
    /// Position of the exchange on its connection.
    pub index: u32,
    pub req_bytes: u64,
    pub rsp_bytes: u64,
    /// When the client sent the request's SYN (None: not within the run).
    pub requested: Option<Time>,
    /// When the last byte of the response reached the client (None: not within the run).
    pub completed: Option<Time>,
}

/// One page fetch as the run produced it (the `webpage` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FetchRecord {
    pub index: u32,
    pub start: Time,
    /// When the last object's last byte arrived (None: timed out or cut by the run's end).
    pub completed: Option<Time>,
    pub timed_out: bool,
    pub objects_done: u32,
}

/// One row of the `flows` table.
#[derive(Clone, Debug)]
pub struct FlowRow {
    pub kind: String,
    pub direction: Dir,
    pub group: u32,
    pub label: String,
    pub cc: String,
    /// The DSCP its packets carry (the flow's `dscp`; 0 for none).
    pub dscp: u8,
    pub start: Time,
    pub base_rtt: Time,
    pub bytes_target: u64,
    pub report: FlowReport,
    pub drops: u64,
    pub marks: u64,
}

/// One row of the `links` table: one per hop.
#[derive(Clone, Debug)]
pub struct LinkRow {
    pub dir: Dir,
    pub hop: String,
    /// The hop with the lowest (initial) rate of its direction; the first of equals.
    pub bottleneck: bool,
    pub delay: Time,
    pub qdisc: String,
    pub rate_bps: u64,
    pub capacity_bytes: u64,
    pub stats: LinkStats,
    pub backlog_bytes: u64,
    pub backlog_pkts: u64,
    pub schedule: Vec<(Time, u64)>,
    pub diagnostics: Vec<(&'static str, f64)>,
    /// The names of its discipline's sub-queues (`Qdisc::subqueues`), if it has any.
    pub subqueues: Vec<&'static str>,
}

/// One row of the `probes` table.
#[derive(Clone, Copy, Debug)]
pub struct ProbeRow {
    pub flow: u32,
    pub seq: u64,
    pub sent: Time,
    pub reply: Option<(Time, Time, Time)>,
    /// The probe never reached the echo server.
    pub lost_up: bool,
}

/// One row of the `web` table: an exchange of a web flow.
#[derive(Clone, Copy, Debug)]
pub struct WebRow {
    pub flow: u32,
    pub rec: ExchangeRecord,
}

/// One row of the `webpage` table: a page fetch of a webpage flow.
#[derive(Clone, Copy, Debug)]
pub struct PageRow {
    pub flow: u32,
    pub rec: FetchRecord,
}
