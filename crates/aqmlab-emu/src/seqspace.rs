//! TCP sequence and acknowledgement numbers relative to each direction's initial sequence
//! number, as the packets table counts them (the SYN is 0, data starts at 1) and as Wireshark
//! shows them by default ("relative sequence numbers"). The 32-bit numbers wrap (RFC 9293
//! section 3.4); each is unwrapped to the 64-bit offset nearest the highest one seen.

use aqmlab_core::packet::{flags, Dir};
use std::collections::HashMap;

/// One direction's sequence space: its ISN, the highest offset seen, the end of the data sent
/// (the offset after its last byte) and the highest acknowledgement of it.
#[derive(Clone, Copy, Debug)]
struct Space {
    isn: u32,
    top: u64,
    data_end: u64,
    acked: u64,
}

impl Space {
    fn offset(&mut self, n: u32) -> u64 {
        let low = n.wrapping_sub(self.isn) as u64;
        let base = self.top & !0xffff_ffff;
        // of base + low and its neighbours one wrap away, the one nearest the top
        let off = [base.checked_sub(1 << 32), Some(base), Some(base + (1 << 32))]
            .into_iter()
            .flatten()
            .map(|b| b + low)
            .min_by_key(|&c| c.abs_diff(self.top))
            .unwrap_or(low);
        self.top = self.top.max(off);
        off
    }
}

/// The sequence spaces of every connection the forwarder has seen open, by flow and the
/// direction its bytes take.
#[derive(Default)]
pub struct SeqSpaces {
    spaces: HashMap<(u32, Dir), Space>,
}

impl SeqSpaces {
    /// The relative (seq, ack) of a segment of `flow` going `d` (with `payload` data bytes and
    /// `flags`); a SYN sets `d`'s ISN. Numbers of a space whose SYN was not seen read 0.
    pub fn relative(
        &mut self,
        flow: u32,
        d: Dir,
        flags: u16,
        seq: u32,
        ack: u32,
        payload: u32,
    ) -> (u64, u64) {
        if flags & flags::SYN != 0 {
            let space = Space {
                isn: seq,
                top: 0,
                data_end: 0,
                acked: 0,
            };
            self.spaces.insert((flow, d), space);
        }
        let s = self.spaces.get_mut(&(flow, d)).map_or(0, |sp| {
            let s = sp.offset(seq);
            if payload > 0 {
                sp.data_end = sp.data_end.max(s + payload as u64);
            }
            s
        });
        let a = match self.spaces.get_mut(&(flow, d.reverse())) {
            Some(sp) if flags & flags::ACK != 0 => {
                let a = sp.offset(ack);
                sp.acked = sp.acked.max(a);
                a
            }
            _ => 0,
        };
        (s, a)
    }

    /// The data bytes `flow` sent going `d` (the highest offset of its data: 0 when it sent
    /// none) and how many of them the other end acknowledged; `None` without its SYN.
    pub fn stream(&self, flow: u32, d: Dir) -> Option<(u64, u64)> {
        let sp = self.spaces.get(&(flow, d))?;
        let end = sp.data_end.max(1);
        Some((end - 1, sp.acked.min(end).saturating_sub(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYN: u16 = flags::SYN;
    const ACK: u16 = flags::ACK;

    #[test]
    fn offsets_count_from_the_syn_across_a_wrap() {
        let mut s = SeqSpaces::default();
        let isn = u32::MAX - 99;
        assert_eq!(s.relative(0, Dir::Up, SYN, isn, 0, 0), (0, 0));
        // the server's SYN-ACK acknowledges ISN + 1, the SYN's one sequence number
        assert_eq!(
            s.relative(0, Dir::Down, SYN | ACK, 7, isn.wrapping_add(1), 0),
            (0, 1)
        );
        assert_eq!(s.relative(0, Dir::Up, ACK, isn.wrapping_add(1), 8, 1000), (1, 1));
        // 1000 bytes later the 32-bit number has wrapped past zero
        assert_eq!(
            s.relative(0, Dir::Up, ACK, isn.wrapping_add(1001), 8, 0),
            (1001, 1)
        );
        // a retransmission from before the wrap stays below it, 4 GiB on stays above
        assert_eq!(s.relative(0, Dir::Up, ACK, isn.wrapping_add(1), 8, 1000).0, 1);
        let far = (1u64 << 32) + 1001;
        for k in 1..=8u64 {
            s.relative(0, Dir::Up, ACK, isn.wrapping_add((far * k / 8) as u32), 8, 0);
        }
        assert_eq!(
            s.relative(0, Dir::Up, ACK, isn.wrapping_add(far as u32), 8, 0).0,
            far
        );
        // a connection whose SYN was not seen
        assert_eq!(s.relative(5, Dir::Up, ACK, 123, 456, 0), (0, 0));
    }

    #[test]
    fn a_stream_is_delivered_when_its_last_data_byte_is_acknowledged() {
        let mut s = SeqSpaces::default();
        s.relative(0, Dir::Down, SYN, 500, 0, 0);
        s.relative(0, Dir::Up, SYN | ACK, 9, 501, 0);
        assert_eq!(s.stream(0, Dir::Down), Some((0, 0)));
        // 3000 bytes in two segments; the first acknowledged (ack = 1 + 1448)
        s.relative(0, Dir::Down, ACK, 501, 10, 1448);
        s.relative(0, Dir::Down, ACK, 501 + 1448, 10, 1552);
        s.relative(0, Dir::Up, ACK, 10, 501 + 1448, 0);
        assert_eq!(s.stream(0, Dir::Down), Some((3000, 1448)));
        // then the FIN (one sequence number, no data) and its acknowledgement: all 3000 bytes
        s.relative(0, Dir::Down, ACK | flags::FIN, 3501, 10, 0);
        s.relative(0, Dir::Up, ACK, 10, 3502, 0);
        assert_eq!(s.stream(0, Dir::Down), Some((3000, 3000)));
        assert_eq!(s.stream(1, Dir::Down), None);
    }
}
