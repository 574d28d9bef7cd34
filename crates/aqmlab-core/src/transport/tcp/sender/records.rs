//! Persistent streams: the records an application writes on one connection, mapped between
//! the scoreboard's fixed segment grid and the bytes on the wire. A bulk flow with a preamble
//! is two records: the preamble, and its data as one open record that never ends.

use std::collections::VecDeque;

/// The records written on a persistent stream not yet wholly acknowledged, oldest first:
/// (start in the scoreboard's sequence space, start on the wire, length), and the wire end.
#[derive(Debug)]
pub(super) struct Records {
    pub(super) recs: VecDeque<(u64, u64, u64)>,
    pub(super) wire_end: u64,
}

/// The length of an open record (a bulk flow's data after its preamble): never reached.
const OPEN: u64 = 1 << 62;

impl Records {
    /// A bulk flow's: `preamble` bytes, then its data from the next segment boundary on.
    pub(super) fn preamble(preamble: u64, mss: u64) -> Records {
        let data = 1 + preamble.div_ceil(mss) * mss;
        Records {
            recs: VecDeque::from([(1, 1, preamble), (data, 1 + preamble, OPEN)]),
            wire_end: 1 + preamble + OPEN,
        }
    }

    /// Whether the last record is open (a bulk flow's data): then no edge lies past it.
    pub(super) fn open(&self) -> bool {
        self.recs.back().is_some_and(|r| r.2 == OPEN)
    }

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

    /// The wire range of the segment [start, end) of the scoreboard's space: (seq, length,
    /// whether it ends its record).
    pub(super) fn to_wire(&self, start: u64, end: u64) -> (u64, u64, bool) {
        let i = self.recs.partition_point(|r| r.0 <= start) - 1;
        let (s, ws, len) = self.recs[i];
        (ws + (start - s), end.min(s + len) - start, end >= s + len)
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
