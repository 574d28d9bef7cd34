//! The tables a run returns, declared once: each table's name, the recording level that keeps
//! it, and its columns (name, type, meaning) together with their data. The Python binding
//! exports them generically as Arrow record batches, the store and the recording levels take
//! the names and levels from here, and docs/tables.md's column tables are written from the same
//! declarations (`tables_markdown`; a test keeps the file in step).

use super::rows::{CcPhase, FlowRow, LinkRow, PageRow, ProbeRow, WebRow};
use super::{
    outcome_names, sojourn_bin_range, FlowSeriesColumns, HeaderRow, Level, Nullable, PacketColumns,
    QueueColumns, SojournHist,
};
use crate::packet::{Dir, Ecn};
use crate::queue::{DropReason, SUBQUEUES};

/// A column's values.
pub enum Data {
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    /// Null where a value does not exist (a lost probe's RTT, a fetch not completed).
    OptU64(Nullable<u64>),
    /// A fraction or ratio, null where the quantity does not exist.
    OptF64(Nullable<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// Strings from a small set: codes into the names (dictionary-encoded).
    Dict(Vec<u8>, Vec<String>),
    /// The same, null where there is no value.
    OptDict(Nullable<u8>, Vec<String>),
}

impl Data {
    /// The column's type as docs/tables.md writes it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Data::U16(_) => "uint16",
            Data::U32(_) => "uint32",
            Data::U64(_) => "uint64",
            Data::OptU64(_) => "uint64, nullable",
            Data::OptF64(_) => "float64, nullable",
            Data::Bool(_) => "bool",
            Data::Str(_) | Data::Dict(..) => "string",
            Data::OptDict(..) => "string, nullable",
        }
    }
}

pub struct Column {
    pub name: String,
    pub meaning: &'static str,
    pub data: Data,
}

pub struct Table {
    pub name: &'static str,
    /// What one row is.
    pub row: &'static str,
    /// The lowest recording level that keeps the table.
    pub level: Level,
    pub columns: Vec<Column>,
}

/// Everything a run records, by value (a run's result less its metadata).
#[derive(Default)]
pub struct Recorded {
    pub packets: PacketColumns,
    pub queue: QueueColumns,
    pub flow_series: FlowSeriesColumns,
    pub sojourn: SojournHist,
    pub flows: Vec<FlowRow>,
    pub links: Vec<LinkRow>,
    pub probes: Vec<ProbeRow>,
    pub web: Vec<WebRow>,
    pub webpage: Vec<PageRow>,
}

/// Builds columns as (name, meaning, data) triples.
fn cols(list: Vec<(&str, &'static str, Data)>) -> Vec<Column> {
    list.into_iter()
        .map(|(name, meaning, data)| Column {
            name: name.to_string(),
            meaning,
            data,
        })
        .collect()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// One field of every header record (a column of the `packets` table).
fn field<T>(rows: &[HeaderRow], f: impl Fn(&HeaderRow) -> T) -> Vec<T> {
    rows.iter().map(f).collect()
}

/// Direction names in `Dir` code order.
const DIRS: [&str; 2] = ["up", "down"];

fn dirs(it: impl Iterator<Item = Dir>) -> Data {
    Data::Dict(it.map(|d| d as u8).collect(), names(&DIRS))
}

impl Recorded {
    /// The tables, in the order the store writes them. With no rows (`Recorded::default()`)
    /// they are the declarations alone.
    pub fn tables(self) -> Vec<Table> {
        let hops: Vec<String> = self.links.iter().map(|l| l.hop.clone()).collect();
        let p = self.packets;
        let q = self.queue;
        let s = self.flow_series;
        let (w, wp, pr, f, l) = (&self.web, &self.webpage, &self.probes, &self.flows, &self.links);
        let u64s = |v: Vec<u64>| Data::U64(v);
        let fcol = |g: &dyn Fn(&FlowRow) -> u64| Data::U64(f.iter().map(g).collect());
        let lcol = |g: &dyn Fn(&LinkRow) -> u64| Data::U64(l.iter().map(g).collect());
        let mut link_cols = cols(vec![
            ("dir", "direction", dirs(l.iter().map(|x| x.dir))),
            ("hop", "hop name", Data::Str(hops.clone())),
            (
                "bottleneck",
                "the hop with the lowest initial rate of its direction (the first of equals)",
                Data::Bool(l.iter().map(|x| x.bottleneck).collect()),
            ),
            (
                "delay_ns",
                "propagation delay after the hop, before the next one",
                lcol(&|x| x.delay),
            ),
            (
                "qdisc",
                "discipline name",
                Data::Str(l.iter().map(|x| x.qdisc.clone()).collect()),
            ),
            ("rate_bps", "the rate the hop can carry at t = 0: its line rate, or its qdisc's shaped rate when lower (CAKE's bandwidth), HTB's class rate, a trace's mean rate", lcol(&|x| x.rate_bps)),
            (
                "capacity_bytes",
                "bytes the link could carry over the run (integral of its rate schedule)",
                lcol(&|x| x.capacity_bytes),
            ),
            (
                "arrivals",
                "packets that reached the queue",
                lcol(&|x| x.stats.arrivals),
            ),
            (
                "tx_packets",
                "packets put on the link",
                lcol(&|x| x.stats.tx_packets),
            ),
            ("tx_bytes", "bytes put on the link", lcol(&|x| x.stats.tx_bytes)),
        ]);
        for reason in DropReason::ALL {
            link_cols.push(Column {
                name: format!("drops_{}", reason.name()),
                meaning: "drops for this reason (one column per drop reason of the core)",
                data: lcol(&|x| x.stats.drops[reason as usize]),
            });
        }
        link_cols.extend(cols(vec![
            ("marks", "CE marks", lcol(&|x| x.stats.marks)),
            (
                "backlog_bytes",
                "bytes left queued at the end",
                lcol(&|x| x.backlog_bytes),
            ),
            (
                "backlog_pkts",
                "packets left queued at the end",
                lcol(&|x| x.backlog_pkts),
            ),
        ]));
        // The sojourn histogram's non-empty bins and its per-second totals, hop by hop.
        let hop_dir = |h: usize| l.get(h).map_or(Dir::Up, |x| x.dir);
        let mut hist: Vec<(usize, u32, u64, u64, u64)> = Vec::new();
        let mut sums: Vec<(usize, u32, (u64, u64, u64))> = Vec::new();
        for (h, secs) in self.sojourn.hops.iter().enumerate() {
            for (t, sh) in secs.iter().enumerate().filter(|(_, sh)| sh.packets > 0) {
                for (b, &n) in sh.counts.iter().enumerate().filter(|(_, &n)| n > 0) {
                    let (lo, hi) = sojourn_bin_range(b);
                    hist.push((h, t as u32, lo, hi, n as u64));
                }
                sums.push((h, t as u32, (sh.packets, sh.sum, sh.max)));
            }
        }
        let steps: Vec<(Dir, u8, u64, u64)> = l
            .iter()
            .enumerate()
            .flat_map(|(k, x)| x.schedule.iter().map(move |&(t, rate)| (x.dir, k as u8, t, rate)))
            .collect();
        let mut packet_cols = cols(vec![
            ("dir", "direction", Data::Dict(p.dir, names(&DIRS))),
            ("hop", "hop name", Data::Dict(p.hop, hops.clone())),
            ("flow", "flow id (index into `flows`)", Data::U32(p.flow)),
            ("size", "IP bytes", Data::U32(p.size)),
            ("t_enqueue_ns", "arrival at the queue", u64s(p.t_enqueue)),
            (
                "t_out_ns",
                "start of transmission (sent/marked) or time of the drop; with a `device_queue` \
                         on the link, the time the packet left the qdisc for the device queue",
                u64s(p.t_out),
            ),
            (
                "outcome",
                "`sent`, `marked` (sent with CE set by the queue), or the drop reason: \
                         `overlimit`, `early`, `head`, `fat_flow`, `forced` (RED's average above its \
                         drop-everything threshold), `ack_filter` (a queued ACK made redundant by a \
                         later one, CAKE)",
                Data::Dict(p.outcome, names(&outcome_names())),
            ),
            (
                "ecn",
                "the ECN codepoint (RFC 3168) as the packet left the hop (`ce` on every `marked` row): \
                 `not_ect`, `ect1`, `ect0`, `ce`",
                Data::Dict(field(&p.hdr, |h| h.ecn), names(&Ecn::NAMES)),
            ),
            (
                "seq",
                "TCP: the first sequence number carried (a byte offset: the SYN is 0, data starts \
                 at 1); UDP, voip and probes: the packet's number",
                u64s(field(&p.hdr, |h| h.seq)),
            ),
            (
                "ack",
                "TCP: the acknowledgement number carried (the next byte expected); 0 for other packets",
                u64s(field(&p.hdr, |h| h.ack)),
            ),
            (
                "payload",
                "TCP: the data bytes carried (0 for a pure ACK or a SYN; `size` less the headers); \
                 a UDP datagram: its `size`; probes: 0",
                Data::U32(field(&p.hdr, |h| h.payload)),
            ),
            (
                "tcp_flags",
                "TCP header flags: FIN 0x01, SYN 0x02, PSH 0x08 (the kernel's senders in `aqmlab \
                 emulate`; aqmlab's set none), ACK 0x10, ECE 0x40, CWR 0x80, AE 0x100 (RFC \
                 9768); every TCP segment has SYN or ACK set, other packets 0",
                Data::U16(field(&p.hdr, |h| h.tcp_flags)),
            ),
        ]);
        if let Some(subq) = p.subq {
            packet_cols.extend(cols(vec![(
                "subqueue",
                "the sub-queue of the hop's discipline the packet was put in (`l` or `c` of dualpi2; \
                 `-` at a hop whose discipline has none); only when some hop's discipline has sub-queues",
                Data::Dict(subq, names(&SUBQUEUES)),
            )]));
        }
        vec![
            Table {
                name: "packets",
                row: "one row per packet and hop queue it reached",
                level: Level::Packets,
                columns: packet_cols,
            },
            Table {
                name: "queue",
                row: "every hop's queue sampled every `record.interval`",
                level: Level::Series,
                columns: cols(vec![
                    ("t_ns", "sample time (0, interval, 2 interval, ...)", u64s(q.t)),
                    ("dir", "direction", Data::Dict(q.dir, names(&DIRS))),
                    ("hop", "hop name", Data::Dict(q.hop, hops.clone())),
                    (
                        "backlog_bytes",
                        "bytes queued at `t_ns` (excluding the packet being transmitted)",
                        u64s(q.backlog_bytes),
                    ),
                    (
                        "backlog_pkts",
                        "packets queued at `t_ns` (excluding the packet being transmitted)",
                        u64s(q.backlog_pkts),
                    ),
                    ("tx_bytes", "cumulative bytes put on the link", u64s(q.tx_bytes)),
                    ("drops", "cumulative drops (all reasons)", u64s(q.drops)),
                    ("marks", "cumulative CE marks", u64s(q.marks)),
                    ("rate_bps", "the link's scheduled rate at `t_ns`, at most its qdisc's shaped rate", u64s(q.rate_bps)),
                ]),
            },
            Table {
                name: "flow_series",
                row: "per-flow state every `record.interval`",
                level: Level::Series,
                columns: cols(vec![
                    ("t_ns", "sample time", u64s(s.t)),
                    ("flow", "flow id", Data::U32(s.flow)),
                    (
                        "delivered_bytes",
                        "cumulative payload bytes delivered in order to the receiving application",
                        u64s(s.delivered_bytes),
                    ),
                    (
                        "sent_bytes",
                        "cumulative IP bytes the source sent (retransmissions included)",
                        u64s(s.sent_bytes),
                    ),
                    ("cwnd_bytes", "TCP congestion window (0 for non-TCP)", u64s(s.cwnd_bytes)),
                    ("srtt_ns", "TCP smoothed RTT (0 = no sample yet / non-TCP)", u64s(s.srtt)),
                    (
                        "ssthresh_bytes",
                        "TCP slow-start threshold (null while unbounded: no congestion signal yet, or non-TCP)",
                        Data::OptU64(s.ssthresh),
                    ),
                    (
                        "cc_alpha",
                        "the controller's estimate of the fraction of CE-marked data, 0 to 1: DCTCP's and \
                         Prague's alpha, BBR v3's ECN alpha once it uses ECN (null for other controllers)",
                        Data::OptF64(s.cc_alpha),
                    ),
                    (
                        "cc_bw_bps",
                        "BBR's bandwidth estimate, payload bits per second: the rate its pacing is based on \
                         (null for other controllers)",
                        Data::OptU64(s.cc_bw_bps),
                    ),
                    (
                        "cc_min_rtt_ns",
                        "the controller's minimum RTT: BBR's min_rtt, CUBIC's delay_min (null before a sample \
                         and for other controllers)",
                        Data::OptU64(s.cc_min_rtt),
                    ),
                    (
                        "cc_pacing_gain",
                        "BBR's pacing gain: the pacing rate over the bandwidth estimate, 1 % margin aside \
                         (null for other controllers)",
                        Data::OptF64(s.cc_pacing_gain),
                    ),
                    (
                        "cc_state",
                        "BBR's mode: `startup`, `drain`, `probe_bw`, `probe_rtt`; BBR v3 names PROBE_BW's \
                         phase: `probe_bw_down`, `probe_bw_cruise`, `probe_bw_refill`, `probe_bw_up` (null for \
                         other controllers)",
                        Data::OptDict(s.cc_state, names(&CcPhase::NAMES)),
                    ),
                    (
                        "cc_w_max_bytes",
                        "CUBIC's W_max, the window its curve returns to (null before the first reduction, \
                         after a timeout, and for other controllers)",
                        Data::OptU64(s.cc_w_max),
                    ),
                ]),
            },
            Table {
                name: "sojourn",
                row: "one row per non-empty bin of a hop's sojourn histogram in one second of enqueue time; \
                      recorded at the `series` level only (`packets` has every sojourn)",
                level: Level::Series,
                columns: cols(vec![
                    ("dir", "direction", dirs(hist.iter().map(|r| hop_dir(r.0)))),
                    ("hop", "hop name", Data::Dict(hist.iter().map(|r| r.0 as u8).collect(), hops.clone())),
                    (
                        "t_s",
                        "the second of the packets' enqueue time (t_enqueue_ns // 1e9)",
                        Data::U32(hist.iter().map(|r| r.1).collect()),
                    ),
                    (
                        "lo_ns",
                        "the bin's lowest sojourn (exact bins below 64 ns, then 64 bins per power of two)",
                        u64s(hist.iter().map(|r| r.2).collect()),
                    ),
                    ("hi_ns", "the bin's end (exclusive)", u64s(hist.iter().map(|r| r.3).collect())),
                    (
                        "count",
                        "transmitted (sent or marked) packets with a sojourn in [lo_ns, hi_ns)",
                        u64s(hist.iter().map(|r| r.4).collect()),
                    ),
                ]),
            },
            Table {
                name: "sojourn_totals",
                row: "one row per hop and second of enqueue time with transmitted packets; recorded at \
                      the `series` level only",
                level: Level::Series,
                columns: cols(vec![
                    ("dir", "direction", dirs(sums.iter().map(|r| hop_dir(r.0)))),
                    ("hop", "hop name", Data::Dict(sums.iter().map(|r| r.0 as u8).collect(), hops.clone())),
                    (
                        "t_s",
                        "the second of the packets' enqueue time",
                        Data::U32(sums.iter().map(|r| r.1).collect()),
                    ),
                    ("packets", "transmitted packets", u64s(sums.iter().map(|r| r.2 .0).collect())),
                    ("sum_ns", "the sum of their sojourns (exact)", u64s(sums.iter().map(|r| r.2 .1).collect())),
                    ("max_ns", "the largest of their sojourns (exact)", u64s(sums.iter().map(|r| r.2 .2).collect())),
                ]),
            },
            Table {
                name: "probes",
                row: "one row per latency probe",
                level: Level::Summary,
                columns: cols(vec![
                    ("flow", "probe stream's flow id", Data::U32(pr.iter().map(|x| x.flow).collect())),
                    ("seq", "probe number", u64s(pr.iter().map(|x| x.seq).collect())),
                    ("t_send_ns", "send time", u64s(pr.iter().map(|x| x.sent).collect())),
                    (
                        "rtt_ns",
                        "round trip (null when lost)",
                        Data::OptU64(pr.iter().map(|x| x.reply.map(|r| r.0)).collect()),
                    ),
                    (
                        "owd_up_ns",
                        "one-way delay up (null when lost)",
                        Data::OptU64(pr.iter().map(|x| x.reply.map(|r| r.1)).collect()),
                    ),
                    (
                        "owd_down_ns",
                        "one-way delay down (null when lost)",
                        Data::OptU64(pr.iter().map(|x| x.reply.map(|r| r.2)).collect()),
                    ),
                    (
                        "lost",
                        "no reply by the end of the run",
                        Data::Bool(pr.iter().map(|x| x.reply.is_none()).collect()),
                    ),
                    (
                        "lost_up",
                        "never reached the echo server (lost on the way up)",
                        Data::Bool(pr.iter().map(|x| x.lost_up).collect()),
                    ),
                ]),
            },
            Table {
                name: "web",
                row: "one row per request/response exchange of a web (PackMime-HTTP) flow",
                level: Level::Summary,
                columns: cols(vec![
                    ("flow", "the web flow's id", Data::U32(w.iter().map(|x| x.flow).collect())),
                    (
                        "connection",
                        "connection number (in opening order)",
                        Data::U32(w.iter().map(|x| x.rec.connection).collect()),
                    ),
                    (
                        "exchange",
                        "the exchange's position on its connection",
                        Data::U32(w.iter().map(|x| x.rec.index).collect()),
                    ),
                    (
                        "req_bytes",
                        "request size (application bytes)",
                        u64s(w.iter().map(|x| x.rec.req_bytes).collect()),
                    ),
                    (
                        "rsp_bytes",
                        "response size (application bytes)",
                        u64s(w.iter().map(|x| x.rec.rsp_bytes).collect()),
                    ),
                    (
                        "t_request_ns",
                        "when the client sent the request's SYN (null when not reached in the run)",
                        Data::OptU64(w.iter().map(|x| x.rec.requested).collect()),
                    ),
                    (
                        "response_time_ns",
                        "from the request's SYN to the last byte of the response at the client \
                         (null when not completed)",
                        Data::OptU64(
                            w.iter()
                                .map(|x| x.rec.requested.zip(x.rec.completed).map(|(a, b)| b - a))
                                .collect(),
                        ),
                    ),
                ]),
            },
            Table {
                name: "webpage",
                row: "one row per page fetch of a webpage flow",
                level: Level::Summary,
                columns: cols(vec![
                    ("flow", "the webpage flow's id", Data::U32(wp.iter().map(|x| x.flow).collect())),
                    (
                        "fetch",
                        "the fetch's number, in start order",
                        Data::U32(wp.iter().map(|x| x.rec.index).collect()),
                    ),
                    (
                        "t_start_ns",
                        "when the fetch started (its name lookup was sent)",
                        u64s(wp.iter().map(|x| x.rec.start).collect()),
                    ),
                    (
                        "fetch_time_ns",
                        "from the start to the last byte of the page's last object at the client \
                         (null when not completed)",
                        Data::OptU64(wp.iter().map(|x| x.rec.completed.map(|t| t - x.rec.start)).collect()),
                    ),
                    (
                        "timed_out",
                        "1 when the fetch was abandoned at its timeout",
                        Data::U32(wp.iter().map(|x| u32::from(x.rec.timed_out)).collect()),
                    ),
                    (
                        "objects_done",
                        "objects (main document included) complete when the fetch ended or the run did",
                        Data::U32(wp.iter().map(|x| x.rec.objects_done).collect()),
                    ),
                ]),
            },
            Table {
                name: "flows",
                row: "one row per flow",
                level: Level::Summary,
                columns: cols(vec![
                    ("flow", "flow id", Data::U32((0..f.len() as u32).collect())),
                    (
                        "kind",
                        "the flow's kind (`udp`, `ping`, `voip`, `tcp`, `web`, `webpage`)",
                        Data::Str(f.iter().map(|x| x.kind.clone()).collect()),
                    ),
                    (
                        "direction",
                        "data direction (`up`/`down`; probes: `up`)",
                        dirs(f.iter().map(|x| x.direction)),
                    ),
                    (
                        "group",
                        "index of the `[[flows]]` entry it came from (`count = N` makes N flows of one group)",
                        Data::U32(f.iter().map(|x| x.group).collect()),
                    ),
                    (
                        "label",
                        "the entry's `label` or `\"<kind><group>\"`",
                        Data::Str(f.iter().map(|x| x.label.clone()).collect()),
                    ),
                    (
                        "cc",
                        "TCP congestion controller, empty otherwise",
                        Data::Str(f.iter().map(|x| x.cc.clone()).collect()),
                    ),
                    (
                        "dscp",
                        "the DSCP (RFC 2474) of the flow's packets both ways (its `dscp`; 0 for none)",
                        Data::U32(f.iter().map(|x| u32::from(x.dscp)).collect()),
                    ),
                    ("start_ns", "start time (after any drawn offset)", fcol(&|x| x.start)),
                    (
                        "base_rtt_ns",
                        "the flow's base (empty-queue, zero-size) RTT",
                        fcol(&|x| x.base_rtt),
                    ),
                    ("bytes_target", "finite transfer size; 0 = unlimited", fcol(&|x| x.bytes_target)),
                    (
                        "packets_sent",
                        "packets sent by the source, retransmissions included",
                        fcol(&|x| x.report.packets_sent),
                    ),
                    (
                        "bytes_sent",
                        "bytes sent by the source, retransmissions included",
                        fcol(&|x| x.report.bytes_sent),
                    ),
                    ("packets_received", "packets received by the sink", fcol(&|x| x.report.packets_received)),
                    (
                        "bytes_delivered",
                        "payload delivered in order to the application",
                        fcol(&|x| x.report.bytes_delivered),
                    ),
                    ("retransmits", "TCP retransmissions", fcol(&|x| x.report.retransmits)),
                    ("rto_count", "TCP retransmission timeouts", fcol(&|x| x.report.rto_count)),
                    (
                        "fast_recoveries",
                        "TCP fast recoveries entered (Linux's TCPSackRecovery and TCPRenoRecovery)",
                        fcol(&|x| x.report.fast_recoveries),
                    ),
                    ("tlp_probes", "TCP tail loss probes sent (`tlp`)", fcol(&|x| x.report.tlp_probes)),
                    (
                        "spurious_rtos",
                        "TCP timeouts found spurious and undone (`frto`)",
                        fcol(&|x| x.report.spurious_rtos),
                    ),
                    (
                        "ecn_reductions",
                        "TCP window reductions for ECN echoes",
                        fcol(&|x| x.report.ecn_reductions),
                    ),
                    (
                        "first_syn_ns",
                        "TCP: first SYN sent",
                        Data::OptU64(f.iter().map(|x| x.report.first_syn).collect()),
                    ),
                    (
                        "completed_ns",
                        "TCP: last ACK of a finite transfer received",
                        Data::OptU64(f.iter().map(|x| x.report.completed).collect()),
                    ),
                    (
                        "drops",
                        "packets of this flow dropped at the bottleneck (all reasons)",
                        fcol(&|x| x.drops),
                    ),
                    ("marks", "packets of this flow CE-marked at the bottleneck", fcol(&|x| x.marks)),
                ]),
            },
            Table {
                name: "links",
                row: "one row per hop, in path order, the up chain first",
                level: Level::Summary,
                columns: link_cols,
            },
            Table {
                name: "rate_schedule",
                row: "one row per step of a hop's rate",
                level: Level::Summary,
                columns: cols(vec![
                    ("dir", "direction", dirs(steps.iter().map(|s| s.0))),
                    ("hop", "hop name", Data::Dict(steps.iter().map(|s| s.1).collect(), hops)),
                    ("t_ns", "when the step takes effect", u64s(steps.iter().map(|s| s.2).collect())),
                    ("rate_bps", "the rate in force from `t_ns` on, at most its qdisc's shaped rate", u64s(steps.iter().map(|s| s.3).collect())),
                ]),
            },
        ]
    }
}

/// The column tables of docs/tables.md, written from the declarations: one section per table.
pub fn tables_markdown() -> String {
    let mut out = String::new();
    let mut all = Recorded::default();
    all.packets.subq = Some(Vec::new());
    for t in all.tables() {
        let levels = match t.level {
            Level::Packets => "recording level `packets`",
            Level::Series => "levels `packets`, `series`",
            Level::Summary => "every level",
        };
        out.push_str(&format!("## `{}` — {} ({levels})\n", t.name, t.row));
        out.push_str("| column | type | meaning |\n|---|---|---|\n");
        for c in &t.columns {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                c.name,
                c.data.type_name(),
                c.meaning
            ));
        }
        out.push('\n');
    }
    out
}
