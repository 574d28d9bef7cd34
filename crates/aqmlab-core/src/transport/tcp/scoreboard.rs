//! The sender's per-segment scoreboard for SACK loss recovery (RFC 6675) and RTO recovery.
//!
//! Segments are never re-segmented, so segment i always covers [1 + i*MSS, 1 + (i+1)*MSS)
//! (the last one of a finite transfer may be shorter) and a sequence number maps to its segment
//! by division. The scoreboard holds one small record per outstanding segment in a VecDeque
//! (front = the segment at snd_una); unsent data is not represented at all.
//!
//! Cost: everything a normal ACK triggers is amortised O(SACK blocks + segments newly acked,
//! SACKed or declared lost):
//! * SACKed ranges are also kept as a range set of segment indices, so a SACK block that repeats
//!   known information is skipped in O(log n) and only the gaps it fills are visited;
//! * IsLost (RFC 6675 section 4) is evaluated in its segment-granular form: a segment is lost
//!   when DupThresh = 3 SACKed segments lie above it (for full-sized segments this is the same
//!   as "more than 2*SMSS bytes SACKed above"). Lost segments are therefore exactly the
//!   unSACKed segments below the third-highest SACKed segment; that frontier only moves up, and
//!   a cursor (`lost_pos`) marks each segment at most once;
//! * `pipe` (RFC 6675 SetPipe) is maintained incrementally: an outstanding segment counts once
//!   if it is neither SACKed nor lost, plus once more while a retransmission of it is in flight
//!   (RFC 6675 counts "retransmitted" for octets below HighRxt; here a retransmission stops
//!   counting when the segment is SACKed/acked or an RTO declares everything lost);
//! * NextSeg uses a cursor (`rtx_pos`, i.e. HighRxt + 1 in segment units) that only moves up
//!   except when an RTO restarts it at snd_una.
//!
//! An RTO is O(outstanding segments) once (mark everything lost, RFC 6675 section 5.1, keeping
//! the SACK information, or discarding it as ns-2's Sack1 does).

use super::delivery::{RateAcc, TxSnap};
use super::ranges::RangeSet;
use std::collections::VecDeque;

const DUP_THRESH: usize = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seg {
    pub sacked: bool,
    pub lost: bool,
    /// A retransmission of this segment is in flight.
    pub retx: bool,
    /// Retransmitted at least once.
    pub ever_retx: bool,
    /// When its latest transmission left (RACK's per-segment time; read only when RACK is
    /// on). Kept in the record, so that an ACK reads one ring at the scoreboard's front.
    pub xmit_ts: u64,
}

/// ns-2 ScoreBoard1's retransmission ids: the retransmissions in flight in the order sent, each
/// (id, segment, the next new segment when it left); the next id; the highest id delivered.
#[derive(Clone, Debug, Default)]
struct RtxIds {
    inflight: VecDeque<(u64, u64, u64)>,
    next: u64,
    acked: Option<u64>,
}

/// The send times Linux takes an ACK's RTT samples from (tcp_input.c tcp_clean_rtx_queue's
/// first_ackt / last_ackt and FLAG_RETRANS_DATA_ACKED, tcp_sacktag_one's first_sackt /
/// last_sackt): of the never-retransmitted segments it newly acknowledges cumulatively (not
/// SACKed before), the oldest and newest; whether it cumulatively acknowledges one ever
/// retransmitted; of the never-retransmitted segments it newly SACKs, the lowest's and the
/// highest's (Linux walks the SACK blocks sorted by sequence).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttTimes {
    pub first_ackt: Option<u64>,
    pub last_ackt: Option<u64>,
    pub retx_acked: bool,
    /// (segment index, send time) of the lowest and highest.
    pub first_sackt: Option<(u64, u64)>,
    pub last_sackt: Option<(u64, u64)>,
}

/// The most recently sent segment among those an ACK delivered (RFC 8985 RACK_update): its
/// transmission time and index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delivered {
    pub xmit_ts: u64,
    pub idx: u64,
}

/// For RACK, the latest send time at which a retransmitted segment's delivery by the current
/// ACK counts as the retransmission's, when SACKed and when cumulatively acknowledged (none:
/// no retransmitted one counts that way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RetxBound {
    pub sack: Option<u64>,
    pub cum: Option<u64>,
}

impl RetxBound {
    /// The same bound for both ways of delivery.
    pub fn both(bound: Option<u64>) -> Self {
        RetxBound {
            sack: bound,
            cum: bound,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// Index of `segs[0]`.
    first: u64,
    mss: u64,
    /// Exclusive end of the data in sequence space (finite transfers).
    data_end: Option<u64>,
    pipe: u64,
    /// SACKed segment indices, as ranges.
    sacked: RangeSet,
    /// The (up to) DupThresh highest SACKed segment indices, descending.
    top: [u64; DUP_THRESH],
    n_top: usize,
    /// Segments below this index have been examined for the IsLost rule.
    lost_pos: u64,
    /// NextSeg cursor: segments below are SACKed or already retransmitted.
    rtx_pos: u64,
    /// RACK: transmissions in time order (time, segment index), stale entries dropped lazily;
    /// kept only when `rack` is on.
    rack: bool,
    sent_order: VecDeque<(u64, u64)>,
    /// RACK: the latest send times of a retransmitted segment whose delivery by the ACK being
    /// applied counts as the retransmission's, and the most recently sent segment the ACK
    /// delivered.
    retx_bound: RetxBound,
    delivered: Option<Delivered>,
    /// Delivery-rate sampling (Linux tcp_rate.c): each outstanding segment's snapshot of the
    /// connection's delivery state at its latest transmission, parallel to `segs` and kept
    /// only when `rate` is on; and what the current ACK delivered.
    rate: bool,
    tx: VecDeque<TxSnap>,
    rate_acc: RateAcc,
    /// The highest never-retransmitted segment the current ACK delivered (F-RTO, RFC 5682).
    orig_delivered: Option<u64>,
    /// Bytes the current ACK's cumulative part covered that were SACKed before it (delivered
    /// then, not now).
    acked_sacked: u64,
    /// ns-2's retransmission ids, kept only for [`Self::relost_retransmissions`].
    rtx_ids: Option<RtxIds>,
    /// The current ACK's [`RttTimes`], kept only with `rtt_sample = "linux"` (boxed: the
    /// scoreboard stays as small as without it).
    rtt_times: Option<Box<RttTimes>>,
    /// Work counter: segment records and ranges visited by per-ACK operations (not by
    /// `mark_all_lost`), for the cost tests.
    work: u64,
}

impl Scoreboard {
    pub fn new(mss: u64, data_end: Option<u64>) -> Scoreboard {
        Scoreboard {
            segs: VecDeque::new(),
            first: 0,
            mss,
            data_end,
            pipe: 0,
            sacked: RangeSet::new(),
            top: [0; DUP_THRESH],
            n_top: 0,
            lost_pos: 0,
            rtx_pos: 0,
            rack: false,
            sent_order: VecDeque::new(),
            retx_bound: RetxBound::default(),
            delivered: None,
            rate: false,
            tx: VecDeque::new(),
            rate_acc: RateAcc::default(),
            orig_delivered: None,
            acked_sacked: 0,
            rtx_ids: None,
            rtt_times: None,
            work: 0,
        }
    }

    /// Keeps each ACK's [`RttTimes`].
    pub fn with_rtt_times(mut self) -> Scoreboard {
        self.rtt_times = Some(Box::default());
        self
    }

    /// The current ACK's [`RttTimes`] (all empty unless kept).
    pub fn rtt_times(&self) -> RttTimes {
        self.rtt_times.as_deref().copied().unwrap_or_default()
    }

    /// Keeps the transmissions in time order for RACK.
    pub fn with_rack(mut self) -> Scoreboard {
        self.rack = true;
        self
    }

    /// Numbers the retransmissions as ns-2's ScoreBoard1 does ([`Self::relost_retransmissions`]).
    pub fn with_rtx_ids(mut self) -> Scoreboard {
        self.rtx_ids = Some(RtxIds::default());
        self
    }

    /// Keeps a delivery-rate snapshot per outstanding segment ([`Self::set_tx`]).
    pub fn with_rate(mut self) -> Scoreboard {
        self.rate = true;
        self
    }

    /// Segment `i`'s delivery-rate snapshot, taken at its latest transmission.
    pub(crate) fn set_tx(&mut self, i: u64, snap: TxSnap) {
        self.tx[(i - self.first) as usize] = snap;
    }

    /// What the current ACK delivered, for the rate sample.
    pub(crate) fn rate_acc(&self) -> &RateAcc {
        &self.rate_acc
    }

    /// Starts applying an ACK; for RACK, a retransmitted segment it delivers counts as delivered
    /// by its retransmission when that was sent at or before `retx_bound`'s time for the way
    /// it is delivered (the TCP key `rack_retx`).
    pub fn begin_ack(&mut self, retx_bound: RetxBound) {
        self.retx_bound = retx_bound;
        self.delivered = None;
        self.orig_delivered = None;
        self.acked_sacked = 0;
        self.rate_acc = RateAcc::default();
        if let Some(t) = self.rtt_times.as_deref_mut() {
            *t = RttTimes::default();
        }
    }

    /// Of the bytes the current ACK acknowledged cumulatively, those SACKed before it.
    pub fn acked_were_sacked(&self) -> u64 {
        self.acked_sacked
    }

    /// The highest segment the current ACK delivered (acknowledged or SACKed) that was never
    /// retransmitted.
    pub fn orig_delivered(&self) -> Option<u64> {
        self.orig_delivered
    }

    /// The most recently sent segment the current ACK delivered.
    pub fn delivered(&self) -> Option<Delivered> {
        self.delivered
    }

    /// Notes the delivery of segment `i` (record `s`, last sent at `xmit_ts` when RACK is on),
    /// SACKed or cumulatively acknowledged (`bound`: `retx_bound`'s time for that).
    fn note_delivered(&mut self, i: u64, s: &Seg, xmit_ts: Option<u64>, bound: Option<u64>) {
        if !s.ever_retx {
            self.orig_delivered = Some(self.orig_delivered.map_or(i, |o| o.max(i)));
        }
        let Some(xmit_ts) = xmit_ts else {
            return;
        };
        if s.ever_retx && bound.is_none_or(|b| b < xmit_ts) {
            return; // ambiguous: the ACK may be for an earlier transmission
        }
        let d = Delivered { xmit_ts, idx: i };
        if self.delivered.is_none_or(|x| d > x) {
            self.delivered = Some(d);
        }
    }

    /// RFC 8985 RACK_detect_loss over the transmissions sent before `rack` (the most recently
    /// sent delivered segment): every segment still neither delivered nor lost whose
    /// `xmit_ts + wait <= now` is marked lost (a lost retransmission too: it may be sent
    /// again). Returns the number marked and the earliest time another would expire.
    pub fn rack_detect(&mut self, rack: Delivered, wait: u64, now: u64) -> (u64, Option<u64>) {
        let mut marked = 0;
        let mut k = 0;
        while k < self.sent_order.len() {
            let (ts, i) = self.sent_order[k];
            self.work += 1;
            // This transmission is still in flight: not delivered, not superseded by a later
            // one, not yet declared lost (a lost segment in flight again is a retransmission).
            let live = i.checked_sub(self.first).is_some_and(|o| {
                self.segs
                    .get(o as usize)
                    .is_some_and(|s| !s.sacked && (!s.lost || s.retx) && s.xmit_ts == ts)
            });
            if !live {
                if k == 0 {
                    self.sent_order.pop_front();
                } else {
                    k += 1;
                }
                continue;
            }
            if (Delivered { xmit_ts: ts, idx: i }) >= rack {
                return (marked, None); // sent after the latest delivered segment
            }
            if ts + wait > now {
                return (marked, Some(ts + wait));
            }
            marked += self.mark_lost_again(i) as u64;
            if k == 0 {
                self.sent_order.pop_front();
            } else {
                k += 1;
            }
        }
        (marked, None)
    }

    /// Marks segment `i` lost at its latest transmission: a retransmission in flight is lost
    /// (it leaves the pipe and NextSeg may send the segment again), and so is every earlier
    /// copy, the original too when it was never deemed lost (a hole resent by NextSeg rule 3
    /// or the rescue, which the pipe counts twice).
    fn mark_lost_again(&mut self, i: u64) -> bool {
        let len = self.seg_len(i);
        let o = (i - self.first) as usize;
        let retx = self.segs[o].retx;
        if retx {
            self.segs[o].retx = false;
            self.pipe -= len;
        }
        let changed = self.mark_lost(i) || retx;
        self.rtx_pos = self.rtx_pos.min(i);
        changed
    }

    /// First sequence number of segment `i` (data starts at 1: the SYN took 0).
    pub fn seg_start(&self, i: u64) -> u64 {
        1 + i * self.mss
    }

    pub fn seg_end(&self, i: u64) -> u64 {
        let e = self.seg_start(i + 1);
        self.data_end.map_or(e, |d| e.min(d))
    }

    pub fn seg_len(&self, i: u64) -> u64 {
        self.seg_end(i) - self.seg_start(i)
    }

    /// Index of the next segment never sent.
    pub fn next_idx(&self) -> u64 {
        self.first + self.segs.len() as u64
    }

    pub fn first_idx(&self) -> u64 {
        self.first
    }

    pub fn outstanding(&self) -> usize {
        self.segs.len()
    }

    pub fn pipe(&self) -> u64 {
        self.pipe
    }

    /// Segment records and ranges visited so far by per-ACK operations.
    pub fn work(&self) -> u64 {
        self.work
    }

    pub fn seg(&self, i: u64) -> Option<&Seg> {
        i.checked_sub(self.first).and_then(|o| self.segs.get(o as usize))
    }

    fn contrib(&self, s: &Seg, len: u64) -> u64 {
        let mut c = 0;
        if !s.sacked && !s.lost {
            c += len;
        }
        if s.retx {
            c += len;
        }
        c
    }

    /// Records the first transmission of the next new segment at `now`; returns its index.
    #[inline(always)]
    pub fn push_new(&mut self, now: u64) -> u64 {
        let i = self.next_idx();
        self.segs.push_back(Seg {
            xmit_ts: now,
            ..Seg::default()
        });
        self.pipe += self.seg_len(i);
        if self.rate {
            self.tx.push_back(TxSnap::default());
        }
        if self.rack {
            self.sent_order.push_back((now, i));
        }
        i
    }

    /// Records a retransmission of segment `i` at `now`.
    pub fn retransmitted(&mut self, i: u64, now: u64) {
        let len = self.seg_len(i);
        let o = (i - self.first) as usize;
        let s = &mut self.segs[o];
        debug_assert!(!s.retx);
        s.retx = true;
        s.ever_retx = true;
        s.xmit_ts = now;
        self.pipe += len;
        let nxt = self.next_idx();
        if let Some(r) = &mut self.rtx_ids {
            r.inflight.push_back((r.next, i, nxt));
            r.next += 1;
        }
        if self.rack {
            self.sent_order.push_back((now, i));
        }
    }

    /// Undoes the latest [`Self::push_new`]: the segment did not leave after all (a qdisc on
    /// the sender's own host refused it, Linux's NET_XMIT_DROP).
    pub fn unpush(&mut self) {
        let i = self.next_idx() - 1;
        let len = self.seg_len(i);
        let s = self.segs.pop_back().expect("a segment was pushed");
        debug_assert_eq!(
            s,
            Seg {
                xmit_ts: s.xmit_ts,
                ..Seg::default()
            }
        );
        self.pipe -= len;
        if self.rate {
            self.tx.pop_back();
        }
        if self.rack && self.sent_order.back().is_some_and(|&(_, j)| j == i) {
            self.sent_order.pop_back();
        }
        self.rtx_pos = self.rtx_pos.min(i);
        self.lost_pos = self.lost_pos.min(i);
    }

    /// Undoes [`Self::retransmitted`] for segment `i`: the retransmission did not leave (a
    /// local NET_XMIT_DROP), so the segment is a candidate again. Its `ever_retx` stays (Karn's
    /// rule then skips its RTT sample, the cautious side), as does RACK's time of it.
    pub fn unretransmit(&mut self, i: u64) {
        let len = self.seg_len(i);
        let s = &mut self.segs[(i - self.first) as usize];
        debug_assert!(s.retx);
        s.retx = false;
        self.pipe -= len;
        self.rtx_pos = self.rtx_pos.min(i);
        if let Some(r) = &mut self.rtx_ids {
            if r.inflight.back().is_some_and(|&(_, j, _)| j == i) {
                r.inflight.pop_back();
            }
        }
    }

    /// ns-2's ScoreBoard1::UpdateScoreBoard test of the retransmissions in flight, after an
    /// ACK: those it delivered raise the highest delivered id; one still in flight is lost again
    /// when a segment first sent after it is SACKed (its `snd_nxt` at or below `fack_`) or when
    /// one sent more than `gap` retransmissions later has been delivered. Returns the number
    /// marked (each may be sent again).
    pub fn relost_retransmissions(&mut self, gap: u64) -> u64 {
        let Some(mut r) = self.rtx_ids.take() else {
            return 0;
        };
        let RtxIds { inflight, acked, .. } = &mut r;
        inflight.retain(|&(id, i, _)| {
            let s = self.seg(i);
            if s.is_none_or(|s| s.sacked) {
                *acked = Some(acked.map_or(id, |a| a.max(id)));
                return false;
            }
            s.is_some_and(|s| s.retx)
        });
        let (fack, acked) = (self.highest_sacked(), r.acked);
        let mut n = 0;
        r.inflight.retain(|&(id, i, nxt)| {
            let lost = fack.is_some_and(|f| f >= nxt) || acked.is_some_and(|a| id + gap < a);
            if lost {
                n += self.mark_lost_again(i) as u64;
            }
            !lost
        });
        self.work += r.inflight.len() as u64;
        self.rtx_ids = Some(r);
        n
    }

    /// Cumulative ACK `ack` (sequence number): drops fully acknowledged segments. Returns the
    /// number of segments removed and whether any of them had been retransmitted.
    pub fn cum_ack(&mut self, ack: u64) -> (u64, bool) {
        let mut n = 0;
        let mut any_retx = false;
        while !self.segs.is_empty() && self.seg_end(self.first) <= ack {
            let s = self.segs.pop_front().unwrap_or_default();
            let ts = self.rack.then_some(s.xmit_ts);
            if self.rate {
                let tx = self.tx.pop_front().unwrap_or_default();
                if !s.sacked {
                    self.rate_acc.delivered(tx);
                }
            }
            let len = self.seg_len(self.first);
            if let Some(t) = self.rtt_times.as_deref_mut() {
                if s.ever_retx {
                    t.retx_acked = true;
                } else if !s.sacked {
                    t.first_ackt.get_or_insert(s.xmit_ts);
                    t.last_ackt = Some(s.xmit_ts);
                }
            }
            if s.sacked {
                self.acked_sacked += len;
            } else {
                self.note_delivered(self.first, &s, ts, self.retx_bound.cum);
            }
            self.pipe -= self.contrib(&s, len);
            any_retx |= s.ever_retx;
            self.first += 1;
            n += 1;
            self.work += 1;
        }
        if n > 0 {
            // Trim the SACK range set and the top-3 below the new front.
            self.work += self.sacked.remove_below(self.first) as u64;
            let keep = self.top[..self.n_top]
                .iter()
                .filter(|&&t| t >= self.first)
                .count();
            self.n_top = keep;
            self.lost_pos = self.lost_pos.max(self.first);
            self.rtx_pos = self.rtx_pos.max(self.first);
        }
        (n, any_retx)
    }

    fn note_top(&mut self, i: u64) {
        // Keep the DupThresh highest SACKed indices (descending).
        let n = self.n_top;
        if n == DUP_THRESH && i <= self.top[n - 1] {
            return;
        }
        let mut pos = n.min(DUP_THRESH - 1);
        if n < DUP_THRESH {
            self.n_top += 1;
        }
        while pos > 0 && self.top[pos - 1] < i {
            self.top[pos] = self.top[pos - 1];
            pos -= 1;
        }
        self.top[pos] = i;
    }

    fn mark_sacked(&mut self, a: u64, b: u64) -> u64 {
        let mut bytes = 0;
        for i in a..b {
            let len = self.seg_len(i);
            let o = (i - self.first) as usize;
            let s = self.segs[o];
            self.pipe -= self.contrib(&s, len);
            let ts = self.rack.then_some(s.xmit_ts);
            if self.rate {
                self.rate_acc.delivered(self.tx[o]);
            }
            self.note_delivered(i, &s, ts, self.retx_bound.sack);
            if let Some(t) = self.rtt_times.as_deref_mut().filter(|_| !s.ever_retx) {
                if t.first_sackt.is_none_or(|(k, _)| i < k) {
                    t.first_sackt = Some((i, s.xmit_ts));
                }
                if t.last_sackt.is_none_or(|(k, _)| i > k) {
                    t.last_sackt = Some((i, s.xmit_ts));
                }
            }
            let s = &mut self.segs[o];
            s.sacked = true;
            s.retx = false;
            bytes += len;
            self.work += 1;
        }
        for i in (a.max(b.saturating_sub(DUP_THRESH as u64))..b).rev() {
            self.note_top(i);
        }
        bytes
    }

    /// Applies one SACK block [start, end) (sequence numbers). Returns bytes newly SACKed.
    /// Segments only partly covered are ignored; blocks outside the outstanding data are
    /// clipped (D-SACK blocks below snd_una are thereby ignored).
    pub fn sack(&mut self, start: u64, end: u64) -> u64 {
        if start >= end || end <= 1 {
            return 0;
        }
        let mss = self.mss;
        let s_idx = (start - 1) / mss;
        let mut a = if self.seg_start(s_idx) < start {
            s_idx + 1
        } else {
            s_idx
        };
        let mut b = (end - 1) / mss;
        if self.data_end.is_some_and(|d| end >= d) {
            b = self.next_idx();
        }
        a = a.max(self.first);
        b = b.min(self.next_idx());
        if a >= b {
            return 0;
        }
        // Walk the known SACKed ranges touching [a, b] and fill the gaps between them.
        let mut cur = a;
        let mut gaps: [(u64, u64); 8] = [(0, 0); 8];
        let mut n_gaps = 0;
        let mut overflow = false;
        let touching = self.sacked.touching(a, b);
        for &(s, e) in &self.sacked.as_slice()[touching] {
            self.work += 1;
            if s > cur {
                if n_gaps < gaps.len() {
                    gaps[n_gaps] = (cur, s);
                    n_gaps += 1;
                } else {
                    overflow = true;
                }
            }
            cur = cur.max(e);
        }
        if cur < b {
            if n_gaps < gaps.len() {
                gaps[n_gaps] = (cur, b);
                n_gaps += 1;
            } else {
                overflow = true;
            }
        }
        let mut bytes = 0;
        if overflow {
            // Rare: more than 8 holes filled by one block; visit the block segment by segment.
            for i in a..b {
                self.work += 1;
                if !self.segs[(i - self.first) as usize].sacked {
                    bytes += self.mark_sacked(i, i + 1);
                }
            }
        } else {
            for &(ga, gb) in &gaps[..n_gaps] {
                bytes += self.mark_sacked(ga, gb);
            }
        }
        self.sacked.insert(a, b);
        bytes
    }

    /// Applies the IsLost rule after a batch of SACK blocks: marks newly lost segments.
    /// Returns the number of segments newly marked lost.
    pub fn update_lost(&mut self) -> u64 {
        if self.n_top < DUP_THRESH {
            return 0;
        }
        let frontier = self.top[DUP_THRESH - 1];
        let mut n = 0;
        let mut i = self.lost_pos.max(self.first);
        while i < frontier {
            n += self.mark_lost(i) as u64;
            i += 1;
            self.work += 1;
        }
        self.lost_pos = self.lost_pos.max(frontier);
        n
    }

    /// Declares segment `i` lost (if outstanding and not SACKed). Returns true if it changed.
    pub fn mark_lost(&mut self, i: u64) -> bool {
        let Some(o) = i.checked_sub(self.first) else {
            return false;
        };
        let len = self.seg_len(i);
        match self.segs.get_mut(o as usize) {
            Some(s) if !s.sacked && !s.lost => {
                s.lost = true;
                self.pipe -= len;
                if self.rate {
                    self.rate_acc.lost.push(self.tx[o as usize]);
                }
                true
            }
            _ => false,
        }
    }

    /// RTO (RFC 6675 5.1): every unSACKed segment is lost, no retransmission is in flight, and
    /// NextSeg restarts at snd_una. SACK information is kept.
    pub fn mark_all_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.retx = false;
            if !s.sacked {
                s.lost = true;
            }
        }
        self.pipe = 0;
        self.lost_pos = self.next_idx();
        self.rtx_pos = self.first;
        if let Some(r) = &mut self.rtx_ids {
            r.inflight.clear();
        }
    }

    /// ns-2 Sack1's ClearScoreBoard after a timeout: the SACK information is forgotten, so the
    /// segments it covered count as lost (with everything else outstanding) and go again in
    /// order. Only called while everything outstanding is marked lost.
    pub fn discard_sacks(&mut self) {
        for s in self.segs.iter_mut() {
            if s.sacked {
                s.sacked = false;
                s.lost = true;
            }
        }
        self.sacked.clear();
        self.n_top = 0;
        self.rtx_pos = self.first;
    }

    /// ns-2 TCP/Linux's ClearScoreBoard at the end of a recovery: the SACK, loss and
    /// retransmission state of every outstanding segment is forgotten, so each counts once in
    /// the pipe (`packets_in_flight` = snd_nxt - snd_una), and the IsLost rule and NextSeg start
    /// over at snd_una.
    pub fn forget(&mut self) {
        for s in self.segs.iter_mut() {
            s.sacked = false;
            s.lost = false;
            s.retx = false;
        }
        self.sacked.clear();
        self.n_top = 0;
        self.pipe = self.pipe_slow();
        self.lost_pos = self.first;
        self.rtx_pos = self.first;
        if let Some(r) = &mut self.rtx_ids {
            r.inflight.clear();
        }
    }

    /// ns-2's ScoreBoard1::UpdateScoreBoard on a board just forgotten: every unSACKed
    /// outstanding segment at least `gap` below the highest SACKed one is lost. Returns the
    /// number marked.
    pub fn mark_lost_below_fack(&mut self, gap: u64) -> u64 {
        let Some(end) = self.highest_sacked().and_then(|f| (f + 1).checked_sub(gap)) else {
            return 0;
        };
        let mut n = 0;
        for i in self.first..end {
            n += self.mark_lost(i) as u64;
            self.work += 1;
        }
        self.lost_pos = self.lost_pos.max(end);
        n
    }

    /// Undo of a spurious timeout (Linux tcp_undo_cwnd_reduction with unmark_loss): no segment
    /// is lost any more; each counts in the pipe again, and the IsLost rule looks at them anew.
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.lost = false;
        }
        self.pipe = self.pipe_slow();
        self.lost_pos = self.first;
        if self.rack {
            // RACK dropped the transmissions it found lost; in flight again, each is one to
            // watch (Linux keeps them on tsorted_sent_queue, tcp_rack_detect_loss).
            let first = self.first;
            let mut order: Vec<(u64, u64)> = (self.segs.iter().enumerate())
                .filter(|(_, s)| !s.sacked)
                .map(|(o, s)| (s.xmit_ts, first + o as u64))
                .collect();
            order.sort_unstable();
            self.sent_order = order.into();
        }
    }

    /// The first segment at or above the NextSeg cursor that is neither SACKed nor already
    /// retransmitted: (index, lost?). Advances the cursor over segments it passes.
    pub fn next_candidate(&mut self) -> Option<(u64, bool)> {
        let mut i = self.rtx_pos.max(self.first);
        let end = self.next_idx();
        while i < end {
            self.work += 1;
            let s = self.segs[(i - self.first) as usize];
            if !s.sacked && !s.retx {
                self.rtx_pos = i;
                return Some((i, s.lost));
            }
            i += 1;
        }
        self.rtx_pos = end;
        None
    }

    /// The highest outstanding unSACKed segment (for the RFC 6675 rescue retransmission).
    pub fn highest_unsacked(&self) -> Option<u64> {
        let n = self.segs.len();
        (0..n)
            .rev()
            .find(|&o| !self.segs[o].sacked)
            .map(|o| self.first + o as u64)
    }

    /// The highest SACKed segment index.
    pub fn highest_sacked(&self) -> Option<u64> {
        (self.n_top > 0).then_some(self.top[0])
    }

    pub fn head_lost(&self) -> bool {
        self.segs.front().is_some_and(|s| s.lost)
    }

    /// Whether any outstanding segment is marked lost and not SACKed since (Linux's `lost_out`
    /// above 0: retransmitted or not). A scan of the outstanding segments: asked once per
    /// recovery, at its end.
    pub fn any_lost(&self) -> bool {
        self.segs.iter().any(|s| s.lost && !s.sacked)
    }

    /// Number of SACKed outstanding segments (from the range set).
    pub fn sacked_segments(&self) -> u64 {
        self.sacked.len()
    }

    /// Recomputes pipe from scratch (tests / debug assertions).
    pub fn pipe_slow(&self) -> u64 {
        (0..self.segs.len())
            .map(|o| self.contrib(&self.segs[o], self.seg_len(self.first + o as u64)))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 100;

    fn board(n: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(MSS, None);
        for _ in 0..n {
            sb.push_new(0);
        }
        sb
    }

    fn seq(i: u64) -> u64 {
        1 + i * MSS
    }

    #[test]
    fn rack_watches_the_segments_an_undone_timeout_gave_back() {
        // A timeout marks segments 0-3 lost (sent at 10-13 ms); RACK passes over them as
        // lost. The timeout proves spurious and is undone: in flight again, segment 1 (never
        // delivered) must be found lost once segment 4, sent later, is SACKed: without it
        // waiting for a retransmission timeout.
        let mut sb = Scoreboard::new(MSS, None).with_rack();
        for t in 10..14 {
            sb.push_new(t);
        }
        sb.mark_all_lost();
        let latest = Delivered { xmit_ts: 13, idx: 3 };
        sb.rack_detect(latest, 0, 100);
        sb.unmark_lost();
        sb.cum_ack(seq(1));
        sb.push_new(50);
        sb.begin_ack(RetxBound::both(Some(0)));
        sb.sack(seq(2), seq(5));
        let (marked, _) = sb.rack_detect(Delivered { xmit_ts: 50, idx: 4 }, 5, 100);
        assert_eq!(
            marked, 1,
            "segment 1, sent at 11 ms, before the delivered 50 ms one"
        );
        assert!(sb.seg(1).is_some_and(|s| s.lost));
    }

    #[test]
    fn rack_takes_both_copies_of_a_hole_resent_before_it_was_lost_out_of_the_pipe() {
        // Segments 0-3 leave at 10 ms; 2 and 3 are SACKed. Segment 0 is lost by then, but 1 is
        // still only a hole when NextSeg rule 3 (or the rescue) resends it at 20 ms: the pipe
        // (RFC 6675) counts its original and the retransmission, 2 segments with 0's. A segment
        // sent at 30 ms is SACKed at 100 ms and RACK (wait 5 ms) finds 1's retransmission
        // overdue: that copy and the original are both lost, the pipe holds neither, and NextSeg
        // may send 1 again. Before, only the original left the pipe, and 1 stayed "lost with a
        // retransmission in flight" until the retransmission timer.
        let mut sb = Scoreboard::new(MSS, None).with_rack();
        for _ in 0..4 {
            sb.push_new(10);
        }
        sb.begin_ack(RetxBound::both(Some(0)));
        sb.sack(seq(2), seq(4));
        assert!(sb.mark_lost(0));
        assert_eq!(sb.pipe(), MSS, "segment 1 alone");
        sb.retransmitted(1, 20);
        assert_eq!(sb.pipe(), 2 * MSS);
        sb.push_new(30);
        sb.begin_ack(RetxBound::both(Some(0)));
        sb.sack(seq(4), seq(5));
        let (marked, _) = sb.rack_detect(Delivered { xmit_ts: 30, idx: 4 }, 5, 100);
        assert_eq!(marked, 1);
        let one = sb.seg(1).copied().unwrap_or_default();
        assert!(one.lost && !one.retx);
        assert_eq!(sb.pipe(), 0);
        assert_eq!(sb.pipe(), sb.pipe_slow());
    }

    #[test]
    fn segments_marked_lost_hand_their_send_snapshots_to_the_rate_sample() {
        // BBR v3's skb_marked_lost sees each newly lost segment's flight once: SACKed or
        // already lost segments are not marked again; the next ACK starts an empty list.
        let mut sb = Scoreboard::new(MSS, None).with_rate();
        for i in 0..4 {
            sb.push_new(0);
            let snap = TxSnap {
                in_flight: i + 1,
                ..TxSnap::default()
            };
            sb.set_tx(i, snap);
        }
        sb.begin_ack(RetxBound::both(Some(0)));
        sb.sack(seq(2), seq(3));
        assert!(sb.mark_lost(1) && sb.mark_lost(0));
        assert!(!sb.mark_lost(1) && !sb.mark_lost(2));
        let flights: Vec<u64> = sb.rate_acc().lost.iter().map(|t| t.in_flight).collect();
        assert_eq!(flights, [2, 1]);
        sb.begin_ack(RetxBound::both(Some(0)));
        assert!(sb.rate_acc().lost.is_empty());
    }

    #[test]
    fn sack_marks_only_new_segments_and_pipe_tracks() {
        let mut sb = board(10);
        assert_eq!(sb.pipe(), 1000);
        assert_eq!(sb.sack(seq(3), seq(5)), 200);
        assert_eq!(
            sb.sack(seq(3), seq(6)),
            100,
            "repeated block: only segment 5 is new"
        );
        assert_eq!(sb.sack(seq(8), seq(9)), 100);
        assert_eq!(sb.pipe(), 600);
        assert_eq!(sb.sacked_segments(), 4);
        assert_eq!(sb.pipe(), sb.pipe_slow());
        // A block that spans the gap merges the ranges.
        assert_eq!(sb.sack(seq(3), seq(9)), 200);
        assert_eq!(sb.sacked_segments(), 6);
        // Partially covered segments are not SACKed.
        assert_eq!(sb.sack(seq(9) + 1, seq(10)), 0);
    }

    #[test]
    fn is_lost_needs_three_sacked_segments_above() {
        let mut sb = board(10);
        sb.sack(seq(4), seq(6));
        assert_eq!(sb.update_lost(), 0);
        assert!(!sb.head_lost());
        sb.sack(seq(7), seq(8));
        // Top three SACKed: 7, 5, 4 -> segments 0..4 (not SACKed) are lost; 6 is not.
        assert_eq!(sb.update_lost(), 4);
        assert!(sb.head_lost());
        assert!(!sb.seg(6).unwrap().lost);
        assert_eq!(sb.pipe(), 10 * MSS - 3 * MSS - 4 * MSS);
        sb.sack(seq(9), seq(10));
        // Top: 9, 7, 5 -> nothing new below 5 except... 0..4 already lost.
        assert_eq!(sb.update_lost(), 0);
        sb.sack(seq(8), seq(9));
        // Top: 9, 8, 7 -> 6 lost now.
        assert_eq!(sb.update_lost(), 1);
        assert_eq!(sb.pipe(), sb.pipe_slow());
    }

    #[test]
    fn next_seg_cursor_and_retransmission_accounting() {
        let mut sb = board(8);
        sb.sack(seq(2), seq(3));
        sb.sack(seq(4), seq(7));
        sb.update_lost();
        // Top: 6, 5, 4 -> 0, 1, 3 lost.
        assert_eq!(sb.next_candidate(), Some((0, true)));
        sb.retransmitted(0, 0);
        assert_eq!(sb.next_candidate(), Some((1, true)));
        sb.retransmitted(1, 0);
        assert_eq!(sb.next_candidate(), Some((3, true)));
        sb.retransmitted(3, 0);
        assert_eq!(sb.next_candidate(), Some((7, false)));
        assert_eq!(sb.pipe(), sb.pipe_slow());
        // pipe: segment 7 (1) + 3 retransmissions = 4 segments.
        assert_eq!(sb.pipe(), 4 * MSS);
        let (n, retx) = sb.cum_ack(seq(2));
        assert_eq!((n, retx), (2, true));
        assert_eq!(sb.pipe(), 2 * MSS);
        assert_eq!(sb.highest_unsacked(), Some(7));
    }

    #[test]
    fn rto_marks_everything_lost_and_keeps_sacks() {
        let mut sb = board(6);
        sb.sack(seq(3), seq(4));
        sb.mark_all_lost();
        assert_eq!(sb.pipe(), 0);
        assert_eq!(sb.next_candidate(), Some((0, true)));
        sb.retransmitted(0, 0);
        assert_eq!(sb.next_candidate(), Some((1, true)));
        sb.retransmitted(1, 0);
        sb.retransmitted(2, 0);
        assert_eq!(
            sb.next_candidate(),
            Some((4, true)),
            "segment 3 is SACKed: skipped"
        );
        assert_eq!(sb.pipe(), 3 * MSS);
        assert_eq!(sb.pipe(), sb.pipe_slow());
    }

    #[test]
    fn forgotten_board_is_rebuilt_from_one_ack_as_ns2_scoreboard1() {
        // Ten segments outstanding after a recovery: the receiver holds 1, 3, 5, 7, 8 (all
        // SACKed before) and 0's retransmission is in flight. ns-2 TCP/Linux clears its
        // scoreboard (ClearScoreBoard): packets_in_flight = snd_nxt - snd_una = 10. The next ACK
        // carries Sack1's three newest blocks, 7-8, 5, 3 (1 left out). UpdateScoreBoard on the
        // empty board: fack_ = 8, lost_seq_threshold = fack_ - (3 + 1) = 4, so 0, 1, 2 and 4
        // (unSACKed, at most 4) are lost, 6 and 9 stay in flight: packets_in_flight = 10 -
        // sack_out_ 4 - fack_out_ 4 = 2, and GetNextRetran offers 0, 1, 2, 4 in that order.
        let mut sb = board(10);
        for (a, b) in [(1, 2), (3, 4), (5, 6), (7, 9)] {
            sb.sack(seq(a), seq(b));
        }
        sb.update_lost();
        sb.retransmitted(0, 0);
        sb.forget();
        assert_eq!(sb.pipe(), 10 * MSS);
        assert_eq!(sb.sacked_segments(), 0);
        for (a, b) in [(7, 9), (5, 6), (3, 4)] {
            sb.sack(seq(a), seq(b));
        }
        assert_eq!(sb.mark_lost_below_fack(DUP_THRESH as u64 + 1), 4);
        let lost: Vec<u64> = (0..10).filter(|&i| sb.seg(i).unwrap().lost).collect();
        assert_eq!(lost, [0, 1, 2, 4]);
        assert_eq!(sb.pipe(), 2 * MSS);
        assert_eq!(sb.pipe(), sb.pipe_slow());
        let mut resent = vec![];
        while let Some((i, true)) = sb.next_candidate() {
            sb.retransmitted(i, 0);
            resent.push(i);
        }
        assert_eq!(resent, [0, 1, 2, 4]);
    }

    #[test]
    fn retransmissions_are_lost_again_by_the_order_they_left_as_ns2_scoreboard1() {
        // ns-2 ScoreBoard1::UpdateScoreBoard: a retransmission (its rtx id, t_seqno_ when it
        // left) is lost again once the id of a delivered retransmission exceeds its own by more
        // than dupack_threshold + 1 = 4, or once fack_ reaches its t_seqno_. Sixteen segments,
        // 12-15 SACKed: 0-11 lost; 0-5 resent (ids 0-5, t_seqno_ 16).
        let mut sb = Scoreboard::new(MSS, None).with_rtx_ids();
        for _ in 0..16 {
            sb.push_new(0);
        }
        sb.sack(seq(12), seq(16));
        assert_eq!(sb.update_lost(), 12);
        for i in 0..6 {
            sb.retransmitted(i, 0);
        }
        // Id 5 SACKed: only id 0 is more than four behind it.
        sb.sack(seq(5), seq(6));
        assert_eq!(sb.relost_retransmissions(DUP_THRESH as u64 + 1), 1);
        assert_eq!(sb.next_candidate(), Some((0, true)));
        sb.retransmitted(0, 0);
        // New segment 16 leaves and is SACKed: fack_ 16 reaches every t_seqno_ (16), so the
        // four retransmissions still in flight (1-4) and 0's second one (id 6) are lost again.
        sb.push_new(0);
        sb.sack(seq(16), seq(17));
        assert_eq!(sb.relost_retransmissions(DUP_THRESH as u64 + 1), 5);
        // Nothing is in flight: 0-4 and 6-11 lost, the rest SACKed.
        assert_eq!(sb.pipe(), 0);
        assert_eq!(sb.pipe(), sb.pipe_slow());
        let again: Vec<u64> = (0..6)
            .filter(|&i| sb.seg(i).is_some_and(|s| s.lost && !s.retx && !s.sacked))
            .collect();
        assert_eq!(again, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn finite_last_segment_is_short() {
        let mut sb = Scoreboard::new(MSS, Some(1 + 250));
        for _ in 0..3 {
            sb.push_new(0);
        }
        assert_eq!(sb.seg_len(2), 50);
        assert_eq!(sb.pipe(), 250);
        assert_eq!(sb.sack(seq(2), 251), 50);
        assert_eq!(sb.cum_ack(251).0, 3);
        assert_eq!(sb.pipe(), 0);
    }

    #[test]
    fn cum_ack_trims_sack_state() {
        let mut sb = board(10);
        sb.sack(seq(3), seq(6));
        sb.update_lost();
        sb.cum_ack(seq(4));
        assert_eq!(sb.sacked_segments(), 2);
        assert_eq!(sb.pipe(), sb.pipe_slow());
        // Only 2 SACKed remain (4, 5); a SACK of 8 makes the top three 8, 5, 4: nothing
        // unSACKed lies below 4, so nothing new is lost (6 and 7 have only 1 SACKed above).
        sb.sack(seq(8), seq(9));
        assert_eq!(sb.update_lost(), 0);
        assert!(!sb.seg(6).unwrap().lost && !sb.seg(7).unwrap().lost);
        sb.sack(seq(9), seq(10));
        // Top 9, 8, 5: 6 and 7 have only two SACKed segments above them: still not lost.
        assert_eq!(sb.update_lost(), 0);
        assert_eq!(sb.pipe(), sb.pipe_slow());
    }
}
