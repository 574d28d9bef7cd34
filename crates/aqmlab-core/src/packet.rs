//! Packets and the slab that owns them. Components move packets by index (`PktId`); the slab
//! recycles slots through a free list, so the steady state allocates nothing (docs/architecture.md,
//! principle 5). Sizes are IP-level bytes on the wire (1500 for a full-sized TCP segment).

use crate::units::Named;
use crate::units::Time;

pub type PktId = u32;

/// The two ECN bits of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

/// The 802.1d user priority of a packet with this DSCP (6 bits), as Linux's
/// `cfg80211_classify8021d` (net/wireless/util.c, as in 3.14) takes it for a WiFi interface:
/// `(tos & 0xfc) >> 5` with tos = dscp << 2, the DSCP's top three bits (CS1 -> 1, CS5 and EF ->
/// 5, CS0 -> 0). Read by the WiFi access categories (`net::edca`) and by pfifo_fast's bands on
/// a WiFi hop.
pub fn user_priority(dscp: u8) -> u8 {
    (dscp & 0x3f) >> 3
}

impl Ecn {
    /// The codepoints' names in code order (the `packets` table's `ecn` column).
    pub const NAMES: [&'static str; 4] = ["not_ect", "ect1", "ect0", "ce"];

    /// ECN-capable transport (ECT(0), ECT(1)) or already marked.
    #[inline]
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// How a flow's sender uses ECN (the flow key `ecn`): the codepoint it puts on its data packets
/// and whether it negotiates ECN at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EcnMode {
    /// Not ECN-capable: Not-ECT.
    #[default]
    Off,
    /// Classic ECN (RFC 3168): ECT(0).
    Classic,
    /// The L4S identifier (RFC 9331): ECT(1).
    L4s,
    /// Accurate ECN feedback (RFC 9768) with the L4S identifier ECT(1), as RFC 9331 4.2 asks of
    /// a scalable sender; falls back to classic ECN (ECT(0)) when the receiver answers the
    /// handshake as an RFC 3168 host (transport/tcp/accecn.rs).
    AccEcn,
}

/// The key's values (`false` and `true` stand for `off` and `classic`, and are how those two are
/// written back, as before the mode had a third value).
impl Named for EcnMode {
    const ALL: &'static [(&'static str, EcnMode)] = &[
        ("off", EcnMode::Off),
        ("classic", EcnMode::Classic),
        ("l4s", EcnMode::L4s),
        ("accecn", EcnMode::AccEcn),
    ];
    const BOOLS: (EcnMode, EcnMode) = (EcnMode::Classic, EcnMode::Off);
    const WRITES_BOOLS: bool = true;
    const ABOUT: &'static str = "ECN use: \"off\" (Not-ECT), \"classic\" (RFC 3168, ECT(0)), \"l4s\" (RFC 9331, ECT(1)) or \"accecn\" (RFC 9768 feedback, ECT(1))";
}

impl EcnMode {
    /// Whether the sender is ECN-capable (negotiates ECN, marks its packets ECT).
    #[inline]
    pub fn on(self) -> bool {
        self != EcnMode::Off
    }

    /// The codepoint of the packets the sender marks ECN-capable.
    #[inline]
    pub fn codepoint(self) -> Ecn {
        match self {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s | EcnMode::AccEcn => Ecn::Ect1,
        }
    }
}

/// What a packet carries; decides which endpoint handles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Kind {
    /// A UDP datagram of a constant-bit-rate or VoIP source.
    #[default]
    Udp = 0,
    /// A latency probe on its way out (client -> server).
    Probe = 1,
    /// The echo of a probe (server -> client).
    ProbeReply = 2,
    /// A TCP segment (data, pure ACK, SYN, FIN).
    Tcp = 3,
}

/// TCP header flags.
pub mod flags {
    pub const FIN: u16 = 0x01;
    pub const SYN: u16 = 0x02;
    /// Push (RFC 9293 3.1): Linux sets it on the segment that ends an application write
    /// (tcp_push's tcp_mark_push).
    pub const PSH: u16 = 0x08;
    pub const ACK: u16 = 0x10;
    pub const ECE: u16 = 0x40;
    pub const CWR: u16 = 0x80;
    /// Accurate ECN (RFC 9768 3.1), the header bit 8 (formerly NS).
    pub const AE: u16 = 0x100;
}

/// Which way a packet crosses the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Dir {
    /// client -> server
    #[default]
    Up = 0,
    /// server -> client
    Down = 1,
}

impl Dir {
    pub const BOTH: [Dir; 2] = [Dir::Up, Dir::Down];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn reverse(self) -> Dir {
        match self {
            Dir::Up => Dir::Down,
            Dir::Down => Dir::Up,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Dir::Up => "up",
            Dir::Down => "down",
        }
    }
}

/// A SACK block: [start, end) in sequence space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

pub const MAX_SACK_BLOCKS: usize = 3;

/// A SACK block as the option carries it: its edges as 32-bit sequence numbers (RFC 2018
/// section 3), read back against the ACK's cumulative acknowledgement, from which a block lies
/// less than 2^31 bytes away (RFC 9293 section 3.4's sequence arithmetic). Holding the option's
/// own width leaves room on the packet's second line for the advertised window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireSack {
    left: u32,
    right: u32,
}

/// The 64-bit sequence number nearest `anchor` whose low 32 bits are `wire`.
#[inline]
fn unwrap_near(anchor: u64, wire: u32) -> u64 {
    anchor.wrapping_add(wire.wrapping_sub(anchor as u32) as i32 as i64 as u64)
}

/// A packet. Laid out by use (`repr(C)`, 128 bytes aligned to 64, so two cache lines in the
/// slab): the first line holds what the hops, the qdiscs and a receiving endpoint read; the
/// second what only an ACK's receiver reads (the cumulative ACK, the echoed timestamp, the SACK
/// blocks). A packet in flight for a round trip is out of the caches at many flows, and this
/// way a hop or a data segment's delivery touches one line.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(64))]
pub struct Packet {
    /// Scenario-wide flow index (one TCP connection, one UDP source, one probe stream, one
    /// web client/server pair).
    pub flow: u32,
    /// Which transfer of a flow that multiplexes many (a web flow: 2 x exchange + 0 for the
    /// request, + 1 for the response); 0 otherwise.
    pub conn: u32,
    /// The connection a 5-tuple flow hash tells apart within the flow (`conn >> 1`: a request and
    /// its response travel on one connection), set by the host when the flow's
    /// `hash_connections` is on; 0 otherwise, so a flow without connections keeps its key.
    pub tuple_conn: u32,
    /// IP-level length in bytes.
    pub size: u32,
    /// Payload bytes (TCP data length; 0 for a pure ACK).
    pub payload: u32,
    pub kind: Kind,
    pub dir: Dir,
    pub ecn: Ecn,
    /// Differentiated Services code point (RFC 2474), set from the flow's `dscp` for both
    /// directions; the IP TOS byte is `dscp << 2 | ecn`.
    pub dscp: u8,
    /// The sub-queue of its current hop's discipline it was put in (`queue::SUBQUEUES`; 0 at a
    /// hop whose discipline has none; reset by the link at each arrival).
    pub subq: u8,
    pub n_sack: u8,
    /// TCP flags (see [`flags`]).
    pub tcp_flags: u16,
    /// The flow's client host (its `host` key: 0 for the first host named, or for none) and
    /// server host (its `server` key: 0 for none, the one server, else 1 + its number).
    /// Host-isolating disciplines (CAKE) tell hosts apart by them.
    pub host: u16,
    pub server: u16,
    /// First sequence number carried (TCP: byte offset; probes/UDP: packet number).
    pub seq: u64,
    /// When the packet entered the bottleneck queue (set by the link; read by qdiscs).
    pub enqueued_at: Time,
    /// Its earliest departure time from the sending host (Linux's `skb->tstamp`, EDT): set by
    /// a pacing sender whose host's qdisc is fq (`Qdisc::paces_departures`), which holds it
    /// until then and clears it as it leaves (a router forwarding it sees none); 0 for none.
    pub tstamp: Time,
    /// Sender timestamp (the TCP timestamp option TSval, or a probe's send time).
    pub ts_val: Time,
    // Second line.
    /// Cumulative acknowledgement (TCP).
    pub ack: u64,
    /// Echoed timestamp (TSecr).
    pub ts_ecr: Time,
    /// The SACK option's blocks, `n_sack` of them ([`Packet::sacks`], [`Packet::set_sacks`]).
    pub sack: [WireSack; MAX_SACK_BLOCKS],
    /// The receive window a TCP receiver's segment advertises, in bytes (the header's window
    /// field shifted by the window scale); 0 on a segment that advertises none (the sender's
    /// data segments: the model's receivers never send data, and never advertise a zero
    /// window, having no persist timer to answer it).
    pub wnd: u32,
}

impl Packet {
    /// The SACK blocks it carries, in the option's order.
    #[inline]
    pub fn sacks(&self) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let n = (self.n_sack as usize).min(MAX_SACK_BLOCKS);
        let mut out = [SackBlock::default(); MAX_SACK_BLOCKS];
        for (b, w) in out.iter_mut().zip(&self.sack[..n]) {
            *b = SackBlock {
                start: unwrap_near(self.ack, w.left),
                end: unwrap_near(self.ack, w.right),
            };
        }
        (out, n)
    }

    /// Writes `blocks` (at most [`MAX_SACK_BLOCKS`]) as its SACK option; `ack` must be set first.
    #[inline]
    pub fn set_sacks(&mut self, blocks: &[SackBlock]) {
        for (w, b) in self.sack.iter_mut().zip(blocks) {
            *w = WireSack {
                left: b.start as u32,
                right: b.end as u32,
            };
        }
        self.n_sack = blocks.len().min(MAX_SACK_BLOCKS) as u8;
    }
}

/// A slab of packets addressed by `PktId`, with a free list.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
}

impl PacketPool {
    pub fn new() -> PacketPool {
        PacketPool::default()
    }

    /// A slot holding a copy of `p` (taken by reference: copied once, straight into the slot).
    #[inline]
    pub fn alloc(&mut self, p: &Packet) -> PktId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = *p;
                id
            }
            None => {
                self.slots.push(*p);
                (self.slots.len() - 1) as PktId
            }
        }
    }

    #[inline]
    pub fn release(&mut self, id: PktId) {
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Packets currently allocated (for conservation checks).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Slots ever allocated (the high-water mark of simultaneous packets).
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}

/// Checks of the cache-line layouts of the structures a packet reads (`repr(C)`, 64-byte lines).
#[cfg(test)]
pub(crate) mod layout {
    /// Asserts that the field at `offset` of `size` bytes lies wholly on 64-byte line `line`.
    pub(crate) fn on_line(field: &str, offset: usize, size: usize, line: usize) {
        let (first, last) = (offset / 64, (offset + size - 1) / 64);
        assert_eq!(
            (first, last),
            (line, line),
            "{field} (bytes {offset}..{}) is not on line {line}",
            offset + size
        );
    }

    #[test]
    fn a_hop_and_a_data_segments_receiver_read_one_line_of_a_packet() {
        use super::*;
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!((size_of::<Packet>(), align_of::<Packet>()), (128, 64));
        macro_rules! line {
            ($line:expr, $($f:ident: $t:ty),*) => {
                $(on_line(stringify!($f), offset_of!(Packet, $f), size_of::<$t>(), $line);)*
            };
        }
        line!(0, flow: u32, conn: u32, tuple_conn: u32, size: u32, payload: u32, kind: Kind,
            dir: Dir, ecn: Ecn, dscp: u8, subq: u8, n_sack: u8, tcp_flags: u16, host: u16,
            server: u16, seq: u64, enqueued_at: Time, tstamp: Time, ts_val: Time);
        line!(1, ack: u64, ts_ecr: Time, sack: [WireSack; MAX_SACK_BLOCKS], wnd: u32);
    }

    #[test]
    fn sack_edges_come_back_across_the_32_bit_wrap_and_below_the_ack() {
        use super::*;
        let mut p = Packet {
            ack: (1 << 32) - 100,
            ..Packet::default()
        };
        // one block past the wrap of the 32-bit space, one D-SACK below the ACK (RFC 2883)
        let blocks = [
            SackBlock {
                start: (1 << 32) + 500,
                end: (1 << 32) + 1500,
            },
            SackBlock {
                start: (1 << 32) - 3000,
                end: (1 << 32) - 2000,
            },
        ];
        p.set_sacks(&blocks);
        let (got, n) = p.sacks();
        assert_eq!((n, &got[..n]), (2, &blocks[..]));
    }
}
