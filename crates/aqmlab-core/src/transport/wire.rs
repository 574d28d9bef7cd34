//! What every TCP segment and its pacing are on the wire, below both the endpoints (`tcp`) and
//! the congestion controllers (`cc`), which each read them: the header bytes, the sizes of a SYN
//! and a pure ACK, and Linux's pacing parameters.

/// IP + TCP + timestamp option bytes on every segment.
pub const HEADER: u32 = 52;
/// Size of a SYN or SYN-ACK.
pub const SYN_SIZE: u32 = 60;

/// Size of a pure ACK carrying `n_sack` SACK blocks.
pub fn ack_size(n_sack: usize) -> u32 {
    if n_sack == 0 {
        HEADER
    } else {
        HEADER + 4 + 8 * n_sack as u32
    }
}

/// Pacing as Linux does it with the fq qdisc or TCP's internal pacing (net/ipv4/tcp_output.c,
/// tcp_update_pacing_rate and tcp_tso_autosize; net/sched/sch_fq.c): the pacing rate is
/// max(cwnd, packets in flight) / SRTT times `ss_ratio` percent while cwnd < ssthresh / 2, else
/// `ca_ratio` percent; segments leave in bursts of `tso_segs` (one TSO/GSO packet), each burst
/// delaying the next by its length at the pacing rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// net.ipv4.tcp_pacing_ss_ratio (default 200).
    pub ss_ratio: u32,
    /// net.ipv4.tcp_pacing_ca_ratio (default 120).
    pub ca_ratio: u32,
    /// Segments per burst; `None` = autosizing: the bytes of 2^-`burst_shift` s at the pacing
    /// rate, at least `min_burst` segments and at most 64 KB (gso_max_size).
    pub tso_segs: Option<u32>,
    pub burst_shift: u32,
    pub min_burst: u64,
    /// The window counted in IP packets (MSS + headers, `tcp_mss_to_mtu`) rather than in
    /// payload: tcp_prague.c's `prague_update_pacing_rate` (L4STeam/linux, b256dae of 2020 and
    /// later) multiplies the window by the MTU, while the sender holds each packet back by its
    /// payload (tcp_update_skb_after_send), so it paces (MSS + headers) / MSS faster than a
    /// payload rate. Linux's own tcp_update_pacing_rate counts `mss_cache` (false).
    pub wire_rate: bool,
    /// Linux 5.19 on (tcp_output.c tcp_tso_autosize, net.ipv4.tcp_tso_rtt_log 9): an autosized
    /// burst also holds gso_max_size (64 KB) >> (min RTT in us >> `rtt_log`) bytes, a segment
    /// or more below about 3 ms; 0: not added (earlier kernels, or a controller's own size).
    pub rtt_log: u32,
}

impl Pacing {
    /// Linux's defaults: the ratios 200 and 120 percent, autosized bursts of 2^-10 s
    /// (sk_pacing_shift 10), at least 2 segments (tcp_min_tso_segs).
    pub const LINUX: Pacing = Pacing {
        ss_ratio: 200,
        ca_ratio: 120,
        tso_segs: None,
        burst_shift: 10,
        min_burst: 2,
        wire_rate: false,
        rtt_log: 9,
    };
}
