//! The few IPv4 header fields the emulator reads and the one it writes (RFC 791): the TOS
//! byte's DSCP and ECN bits (RFC 2474, RFC 3168 section 5), the protocol and the transport
//! ports (TCP RFC 9293, UDP RFC 768), TCP's sequence and acknowledgement numbers, flags and
//! data length (RFC 9293 section 3.1, the AE bit of RFC 9768), and the header checksum (RFC
//! 1071), recomputed after a CE mark.

/// What classification needs of one IPv4 packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub proto: u8,
    pub tos: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// Source and destination ports (TCP, UDP); 0 for other protocols and for fragments.
    pub sport: u16,
    pub dport: u16,
    /// TCP's own fields; `None` for other protocols, fragments and cut headers.
    pub tcp: Option<Tcp>,
}

/// The TCP header fields the packets table records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tcp {
    pub seq: u32,
    pub ack: u32,
    /// The flags as the core numbers them (`aqmlab_core::packet::flags`): byte 13 of the header,
    /// with bit 0 of byte 12 (AE) as 0x100.
    pub flags: u16,
    /// Data bytes: the IP total length less both headers.
    pub payload: u32,
}

pub const TCP: u8 = 6;
pub const UDP: u8 = 17;
pub const ICMP: u8 = 1;

/// Parses the header of `pkt`; `None` when it is not a well-formed IPv4 packet.
pub fn parse(pkt: &[u8]) -> Option<Header> {
    if pkt.len() < 20 || pkt[0] >> 4 != 4 {
        return None;
    }
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    if ihl < 20 || pkt.len() < ihl {
        return None;
    }
    let proto = pkt[9];
    // Only the first fragment (offset 0) carries the transport header.
    let first_fragment = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff == 0;
    let (sport, dport) = if (proto == TCP || proto == UDP) && first_fragment && pkt.len() >= ihl + 4 {
        (
            u16::from_be_bytes([pkt[ihl], pkt[ihl + 1]]),
            u16::from_be_bytes([pkt[ihl + 2], pkt[ihl + 3]]),
        )
    } else {
        (0, 0)
    };
    let tcp = (proto == TCP && first_fragment && pkt.len() >= ihl + 20).then(|| {
        let t = &pkt[ihl..];
        let word = |i: usize| u32::from_be_bytes([t[i], t[i + 1], t[i + 2], t[i + 3]]);
        let total = u16::from_be_bytes([pkt[2], pkt[3]]) as usize;
        Tcp {
            seq: word(4),
            ack: word(8),
            flags: ((t[12] as u16 & 1) << 8) | t[13] as u16,
            payload: total.saturating_sub(ihl + (t[12] >> 4) as usize * 4) as u32,
        }
    });
    Some(Header {
        proto,
        tos: pkt[1],
        src: [pkt[12], pkt[13], pkt[14], pkt[15]],
        dst: [pkt[16], pkt[17], pkt[18], pkt[19]],
        sport,
        dport,
        tcp,
    })
}

/// The RFC 1071 Internet checksum of `hdr` (whose checksum field must be zero or is included).
pub fn checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = hdr
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]) as u32)
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Sets the ECN field to CE (0b11) and rewrites the header checksum.
pub fn mark_ce(pkt: &mut [u8]) {
    let ihl = (pkt[0] & 0x0f) as usize * 4;
    pkt[1] |= 0b11;
    pkt[10] = 0;
    pkt[11] = 0;
    let c = checksum(&pkt[..ihl]);
    pkt[10..12].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example header of RFC 1071 section 3 / the widely used Wikipedia IPv4 example:
    /// 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7, whose checksum is 0xb861.
    const EXAMPLE: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0,
        0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn checksum_of_a_known_header() {
        let mut h = EXAMPLE;
        h[10] = 0;
        h[11] = 0;
        assert_eq!(checksum(&h), 0xb861);
        // A header with its checksum in place sums to zero (RFC 1071 section 1).
        assert_eq!(checksum(&EXAMPLE), 0);
    }

    #[test]
    fn ce_mark_keeps_the_header_valid() {
        let mut h = EXAMPLE;
        h[1] = 0b10; // ECT(0)
        h[10] = 0;
        h[11] = 0;
        let c = checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        mark_ce(&mut h);
        assert_eq!(h[1] & 3, 3);
        assert_eq!(checksum(&h), 0);
    }

    #[test]
    fn ports_and_protocol() {
        let mut p = EXAMPLE.to_vec();
        p.extend_from_slice(&[0x9c, 0x40, 0x14, 0x51]); // 40000 -> 5201
        let h = parse(&p).unwrap();
        assert_eq!((h.proto, h.sport, h.dport), (UDP, 40000, 5201));
        assert_eq!(h.dst, [192, 168, 0, 199]);
        assert!(parse(&p[..19]).is_none());
        assert_eq!(h.tcp, None);
        let mut v6 = p.clone();
        v6[0] = 0x60;
        assert!(parse(&v6).is_none());
    }

    /// A SYN-ACK as RFC 9293 section 3.1 lays it out: 20 bytes of IP (total length 64), then
    /// ports, sequence 0x01020304, acknowledgement 0xa0b0c0d1, data offset 11 words (44 bytes:
    /// options), flags SYN|ACK|ECE with AE set (RFC 9768), no data.
    #[test]
    fn tcp_fields() {
        let mut p = EXAMPLE.to_vec();
        p[2..4].copy_from_slice(&64u16.to_be_bytes());
        p[9] = TCP;
        p.extend_from_slice(&[
            0x14, 0x51, 0x9c, 0x40, 1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd1, 0xb1, 0x52,
        ]);
        p.resize(64, 0);
        let t = parse(&p).unwrap().tcp.unwrap();
        assert_eq!((t.seq, t.ack), (0x0102_0304, 0xa0b0_c0d1));
        assert_eq!(t.flags, 0x100 | 0x40 | 0x10 | 0x02);
        assert_eq!(t.payload, 0);
        // the same with 1000 data bytes after the header: the length counts them
        p[2..4].copy_from_slice(&1064u16.to_be_bytes());
        p.resize(1064, 0);
        assert_eq!(parse(&p).unwrap().tcp.unwrap().payload, 1000);
        // a later fragment carries no TCP header
        p[6] = 0x00;
        p[7] = 0x10;
        assert_eq!(parse(&p).unwrap().tcp, None);
    }
}
