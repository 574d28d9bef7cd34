//! CAKE's ACK filter (Linux sch_cake.c `cake_ack_filter`, `cake_tcph_may_drop`,
//! `cake_tcph_sack_compare`; the `ack-filter` and `ack-filter-aggressive` modes). When a TCP
//! packet carrying an ACK (and no SYN) joins the tail of a flow queue, the older packets of the
//! same connection and direction in that queue are searched, head first, for pure ACKs it makes
//! redundant, and the one nearest the head is dropped:
//!
//! * an older packet is *eligible* when its flags are ACK alone (ECE and CWR aside; AE, in the
//!   header's reserved nibble, must be clear), it carries no data, its timestamps (TSval, TSecr)
//!   are not later than the arrival's, its cumulative ACK is not beyond the arrival's, and its
//!   SACK blocks are covered by the arrival's, none of them a D-SACK (below its own ACK); with
//!   the same cumulative ACK the arrival must SACK strictly more bytes;
//! * the first eligible ACK is remembered with its ECE and CWR bits; a later packet of the
//!   connection with other ECE/CWR bits forgets it (dropping it would lose ECN feedback);
//! * `on`: the remembered ACK is dropped when a second eligible one is found behind it (the
//!   arrival makes both redundant);
//! * `aggressive`: also when it is the only one, if it sits just ahead of the arrival and their
//!   ECE/CWR bits match.
//!
//! Modelled on what aqmlab's packets carry: a connection is the packet's flow, transfer
//! (`conn`) and direction (the kernel's 5-tuple: a transfer's ACKs carry its own sequence
//! space); sequence numbers and timestamps are 64-bit and do not wrap, so the kernel's modular
//! comparisons become plain ones. Left out, as aqmlab's packets have none of them: TCP options
//! other than SACK and timestamps (any other option makes the kernel keep the packet), the PSH,
//! URG and RST flags (any of them likewise), and IPv6 or 6in4 headers. The kernel reads no
//! receive window, so neither does this filter.

use crate::packet::{flags, Kind, Packet, PacketPool, SackBlock};
use crate::queue::util::PacketQueue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// The `ack_filter` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AckFilter {
    /// no filtering (default, as Linux)
    Off,
    /// drop an ACK when two queued ones are redundant (`ack-filter`)
    On,
    /// also drop a lone redundant ACK just ahead of the arrival (`ack-filter-aggressive`)
    Aggressive,
}

/// The ECN feedback bits the filter keeps consistent.
const ECN_FLAGS: u16 = flags::ECE | flags::CWR;

/// Whether `a` and `b` are TCP packets of one connection in one direction.
fn same_connection(a: &Packet, b: &Packet) -> bool {
    a.kind == Kind::Tcp && a.flow == b.flow && a.conn == b.conn && a.dir == b.dir
}

/// How the SACK information of `a` compares with that of `b` (`cake_tcph_sack_compare`):
/// Greater when `a` SACKs something `b` does not, or holds a D-SACK; Less when `b` covers every
/// block of `a` and SACKs more bytes in all; Equal otherwise (no SACKs on either, or the same
/// coverage).
fn sack_compare(a: &Packet, b: &Packet) -> Ordering {
    let ((a_blocks, na), (b_blocks, nb)) = (a.sacks(), b.sacks());
    let (sa, sb) = (&a_blocks[..na], &b_blocks[..nb]);
    match (sa.is_empty(), sb.is_empty()) {
        (true, true) => return Ordering::Equal,
        (false, true) => return Ordering::Greater,
        (true, false) => return Ordering::Less,
        (false, false) => {}
    }
    let covered = |x: &SackBlock| sb.iter().any(|y| y.start <= x.start && y.end >= x.end);
    if sa.iter().any(|x| x.start < a.ack || !covered(x)) {
        return Ordering::Greater;
    }
    let bytes = |s: &[SackBlock]| s.iter().map(|x| x.end - x.start).sum::<u64>();
    if bytes(sb) > bytes(sa) {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// Whether the older packet `old` of the arrival's connection is a pure ACK that `new` makes
/// redundant (`cake_tcph_may_drop` and the checks around it in `cake_ack_filter`).
fn redundant(old: &Packet, new: &Packet) -> bool {
    if old.tcp_flags & !ECN_FLAGS != flags::ACK
        || old.ts_val > new.ts_val
        || old.ts_ecr > new.ts_ecr
        || old.payload != 0
        || old.ack > new.ack
    {
        return false;
    }
    match sack_compare(old, new) {
        Ordering::Greater => false,
        Ordering::Equal => old.ack < new.ack,
        Ordering::Less => true,
    }
}

/// The position in `q` of the ACK to drop now that a packet joined its tail
/// (`cake_ack_filter`), if any; `aggressive` as the mode `ack-filter-aggressive`.
pub fn victim(q: &PacketQueue, pool: &PacketPool, aggressive: bool) -> Option<usize> {
    let n = q.len();
    let new = pool.get(q.back()?);
    if n < 2 || new.kind != Kind::Tcp || new.tcp_flags & (flags::ACK | flags::SYN) != flags::ACK {
        return None;
    }
    // the first eligible ACK and its ECN bits
    let mut first: Option<(usize, u16)> = None;
    for (i, id) in q.iter().take(n - 1).enumerate() {
        let old = pool.get(id);
        if !same_connection(old, new) {
            continue;
        }
        let ecn = old.tcp_flags & ECN_FLAGS;
        if first.is_some_and(|(_, f)| f != ecn) {
            first = None;
        }
        if !redundant(old, new) {
            continue;
        }
        match first {
            Some((k, _)) => return Some(k),
            None => first = Some((i, ecn)),
        }
    }
    let (k, ecn) = first?;
    (aggressive && k + 2 == n && ecn == new.tcp_flags & ECN_FLAGS).then_some(k)
}
