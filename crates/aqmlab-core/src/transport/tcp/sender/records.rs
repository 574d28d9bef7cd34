//! Persistent streams: the records an application writes on one connection, mapped between
//! the scoreboard's fixed segment grid and the bytes on the wire.

use std::collections::VecDeque;

/// The records written on a persistent stream not yet wholly acknowledged, oldest first:
/// (start in the scoreboard's sequence space, start on the wire, length), and the wire end.
#[derive(Debug)]
pub(super) struct Records {
    pub(super) recs: VecDeque<(u64, u64, u64)>,
    pub(super) wire_end: u64,
}

impl Records {
    /// The scoreboard sequence number of wire sequence number `w` (an ACK or SACK edge); the
    /// end of the written data (`data_end` in the scoreboard's space) is the last record's end.
    pub(super) fn to_seg(&self, w: u64, mss: u64, data_end: u64) -> u64 {
        let i = self.recs.partition_point(|r| r.1 <= w);
        match i.checked_sub(1).map(|i| self.recs[i]) {
            Some((s, ws, len)) if w >= ws + len => s + len.div_ceil(mss) * mss,
            Some((s, ws, _)) => s + (w - ws),
            // Below every record kept (acknowledged data): below snd_una.
            None => match self.recs.front() {
                Some(&(s, ws, _)) => s.saturating_sub(ws - w),
                None => data_end.saturating_sub(self.wire_end.saturating_sub(w)),
            },
        }
    }

    /// The wire range of the segment [start, end) of the scoreboard's space: (seq, length).
    pub(super) fn to_wire(&self, start: u64, end: u64) -> (u64, u64) {
        let i = self.recs.partition_point(|r| r.0 <= start) - 1;
        let (s, ws, len) = self.recs[i];
        (ws + (start - s), end.min(s + len) - start)
    }

    /// Drops the records wholly acknowledged by `snd_una`.
    pub(super) fn acked(&mut self, snd_una: u64, mss: u64) {
        while self
            .recs
            .front()
            .is_some_and(|r| r.0 + r.2.div_ceil(mss) * mss <= snd_una)
        {
            self.recs.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::*;

    /// A persistent stream's records follow one another byte for byte on the wire (each one's
    /// last segment short, no FIN), and the wire's ACK and SACK edges map back: the SACKs of the
    /// second record find the first record's lost short segment (RFC 6675 IsLost: three
    /// segments SACKed above it), which goes again with its own 500 bytes.
    #[test]
    pub(super) fn persistent_stream_records_are_contiguous_on_the_wire() {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            sack: true,
            cc: "newreno".into(),
            ..crate::transport::tcp::rfc()
        };
        let mut s = TcpSender::stream(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        s.write(2500, 0, &mut out);
        assert_eq!(out.len(), 1, "only the SYN before the handshake");
        out.clear();
        let synack = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK,
            ack: 1,
            ..Default::default()
        };
        s.on_packet(&synack, 100, &mut out);
        let wire = |out: &[Packet]| -> Vec<(u64, u32)> { out.iter().map(|p| (p.seq, p.payload)).collect() };
        assert_eq!(wire(&out), [(1, 1000), (1001, 1000), (2001, 500)]);
        assert!(out.iter().all(|p| p.tcp_flags & flags::FIN == 0));
        out.clear();
        s.write(4000, 110, &mut out);
        assert_eq!(
            wire(&out),
            [(2501, 1000), (3501, 1000), (4501, 1000), (5501, 1000)]
        );
        let wire_ack = |s: &mut TcpSender, ack: u64, sack_end: Option<u64>, now: Time| {
            let mut p = Packet {
                kind: Kind::Tcp,
                tcp_flags: flags::ACK,
                ack,
                ts_ecr: 100,
                ..Default::default()
            };
            if let Some(e) = sack_end {
                p.set_sacks(&[SackBlock { start: 2501, end: e }]);
            }
            let mut out = vec![];
            s.on_packet(&p, now, &mut out);
            out
        };
        wire_ack(&mut s, 2001, None, 200);
        wire_ack(&mut s, 2001, Some(3501), 201);
        wire_ack(&mut s, 2001, Some(4501), 202);
        let out = wire_ack(&mut s, 2001, Some(5501), 203);
        assert!(s.in_recovery());
        assert_eq!(wire(&out), [(2001, 500)], "the short segment again, nothing else");
        wire_ack(&mut s, 6501, None, 300);
        assert_eq!((s.pipe(), s.state()), (0, SenderState::Established));
        let mut out = vec![];
        s.write(100, 400, &mut out);
        assert_eq!(wire(&out), [(6501, 100)]);
    }
}
