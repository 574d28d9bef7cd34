//! Transmission: the SYN, new segments and retransmissions, the window loop (RFC 6675
//! NextSeg / RFC 6582 / plain new data), what the application lets out (on periods, `stop`,
//! Nagle, persistent streams), the restart after idle and TCP Nice's probes below one segment.

use super::super::accecn::{self, Feedback};
use super::super::config::{NextSeg, Psh, TsoDefer};
use super::state::{SenderState, TcpSender};
use super::timers::Timer;
use crate::packet::{flags, Ecn, Kind, Packet};
use crate::transport::wire::{ack_size, HEADER, SYN_SIZE};
use crate::transport::Outbox;
use crate::units::{Time, MS};

impl TcpSender {
    pub(super) fn emit(&mut self, p: Packet, out: &mut Outbox) {
        if let Some(prr) = self.prr.as_mut().filter(|_| self.recovery.reducing()) {
            prr.out += p.payload as u64;
        }
        self.n.packets_sent += 1;
        self.n.bytes_sent += p.size as u64;
        if let Some(h) = self.host.as_mut() {
            h.bytes += p.size as u64;
        }
        out.push(p);
    }

    pub(super) fn send_syn(&mut self, now: Time, out: &mut Outbox) {
        let f = flags::SYN
            | match self.asked_feedback() {
                Feedback::Off => 0,
                asked => accecn::syn_flags(asked == Feedback::Accurate),
            };
        let p = Packet {
            flow: self.flow,
            size: SYN_SIZE,
            kind: Kind::Tcp,
            dir: self.dir,
            tcp_flags: f,
            ts_val: now,
            ..Packet::default()
        };
        self.syn_sent += 1;
        self.emit(p, out);
        self.timers.arm(Timer::Rto, self.rto_at(now));
    }

    /// The handshake's third segment, a pure ACK of the SYN-ACK (`handshake_ack`).
    pub(super) fn send_handshake_ack(&mut self, now: Time, out: &mut Outbox) {
        let p = Packet {
            flow: self.flow,
            size: ack_size(0),
            kind: Kind::Tcp,
            dir: self.dir,
            tcp_flags: flags::ACK,
            seq: 1,
            ack: 1,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ..Packet::default()
        };
        self.emit(p, out);
    }

    // Built in place in its callers (a Packet returned out of line is copied: the send path's
    // cost).
    #[inline(always)]
    pub(super) fn segment(&self, i: u64, now: Time) -> Packet {
        let start = self.sb.seg_start(i);
        let end = self.sb.seg_end(i);
        // `last`: the end of an application write (a record, or the transfer with its FIN)
        let (seq, len, last, fin) = match &self.records {
            Some(r) => {
                let (seq, len, last) = r.to_wire(start, end);
                (seq, len, last, false)
            }
            None => {
                let fin = self.data_end == Some(end);
                (start, end - start, fin, fin)
            }
        };
        let push = last && self.cfg.psh != Psh::Off;
        Packet {
            flow: self.flow,
            size: len as u32 + HEADER,
            kind: Kind::Tcp,
            dir: self.dir,
            ecn: Ecn::NotEct,
            tcp_flags: flags::ACK | if fin { flags::FIN } else { 0 } | if push { flags::PSH } else { 0 },
            seq,
            ack: 1,
            payload: len as u32,
            ts_val: now,
            ts_ecr: self.ts_recent,
            ..Packet::default()
        }
    }

    #[inline(always)]
    pub(super) fn send_new(&mut self, now: Time, out: &mut Outbox) {
        let idle = self.cfg.idle_restart
            && self.sb.outstanding() == 0
            && self.last_data_sent.is_some_and(|t| now - t > self.rtt.rto());
        if idle {
            self.restart_window(now - self.last_data_sent.unwrap_or(now));
        }
        self.last_data_sent = Some(now);
        let i = self.sb.push_new(now);
        if self.rate.is_some() {
            // The new segment is the only one outstanding: a flight of its own.
            self.rate_sent(i, now, self.sb.outstanding() == 1);
        }
        let mut p = self.segment(i, now);
        p.ecn = self.codepoint();
        if self.cwr_pending {
            p.tcp_flags |= flags::CWR;
            self.cwr_pending = false;
        }
        if self.recovery.dupacks > 0 && !self.recovery.in_recovery && self.recovery.loss_point.is_none() {
            self.recovery.lt_bytes += self.sb.seg_end(i) - self.high_data;
        }
        self.high_data = self.sb.seg_end(i);
        self.emit(p, out);
    }

    /// Linux tcp_cwnd_restart after `idle` without data in flight: ssthresh =
    /// max(ssthresh, 3/4 cwnd); cwnd halved once per RTO of idleness beyond the first, never
    /// below the restart window min(IW, cwnd).
    pub(super) fn restart_window(&mut self, idle: Time) {
        let cwnd = self.st.cwnd;
        self.st.ssthresh = self.st.ssthresh.max(cwnd / 2 + cwnd / 4);
        let restart = (self.cfg.iw as u64 * self.mss).min(cwnd);
        let rto = self.rtt.rto().max(1);
        let mut w = cwnd;
        let mut left = idle as i128 - rto as i128;
        while left > 0 && w > restart {
            w /= 2;
            left -= rto as i128;
        }
        self.st.cwnd = w.max(restart);
        self.n.idle_restarts += 1;
    }

    pub(super) fn retransmit(&mut self, i: u64, now: Time, out: &mut Outbox) {
        if self.cfg.rto_rearm && i == self.sb.first_idx() && !self.timers.armed(Timer::Rack) {
            self.timers.arm(Timer::Rto, self.rto_at(now));
        }
        self.last_data_sent = Some(now);
        self.sb.retransmitted(i, now);
        if self.rate.is_some() {
            self.rate_sent(i, now, false);
        }
        if let Some(f) = &mut self.frto {
            f.retrans_stamp.get_or_insert(now);
        }
        let p = self.segment(i, now);
        self.n.retransmits += 1;
        self.emit(p, out);
    }

    #[inline(always)]
    pub(super) fn can_send_new(&self, now: Time) -> bool {
        let next = self.sb.next_idx();
        let end = self.sb.seg_end(next);
        self.app_has_data(now) && end - self.snd_una <= self.rwnd && !self.nagle_holds(next)
    }

    /// Whether the application has new data for the sender at `now`.
    #[inline]
    pub(super) fn app_has_data(&self, now: Time) -> bool {
        let has_data = self.data_end.is_none_or(|d| self.high_data < d);
        let stopped = self.cfg.stop.is_some_and(|s| now >= s);
        has_data && !stopped && (self.app_on(now) || self.high_data < self.preamble_end)
    }

    /// Classic Nagle (ns-2 tcp-full.cc foutput): new segment `i` waits when it is shorter than
    /// the MSS, data is outstanding and it is under half the receive window.
    /// On a persistent stream the length is the segment's on the wire (a record's short tail).
    pub(super) fn nagle_holds(&self, i: u64) -> bool {
        if !self.cfg.nagle {
            return false;
        }
        let len = match &self.records {
            Some(r) => r.to_wire(self.sb.seg_start(i), self.sb.seg_end(i)).1,
            None => self.sb.seg_len(i),
        };
        len < self.mss && self.snd_una < self.high_data && 2 * len < self.rwnd
    }

    /// Whether the application has data to hand over at `now` (an on period), and otherwise
    /// when its next on period starts.
    pub(super) fn app_on(&self, now: Time) -> bool {
        self.on_periods.is_empty() || self.next_on(now) == Some(now)
    }

    pub(super) fn next_on(&self, now: Time) -> Option<Time> {
        let i = self.on_periods.partition_point(|p| p.1 <= now);
        self.on_periods.get(i).map(|p| p.0.max(now))
    }

    /// Transmits what the window allows (RFC 6675 NextSeg / RFC 6582 / plain new data), in
    /// paced bursts when pacing is on.
    pub(super) fn send_loop(&mut self, now: Time, out: &mut Outbox) {
        if self.state != SenderState::Established {
            return;
        }
        self.timers.stop(Timer::Pace);
        let pass = self.usage_pass(now);
        let burst = self.pacing.and_then(|p| self.pacing_burst(&p));
        match burst {
            Some((segs, rate)) if self.stamps() => self.send_stamped(now, out, segs, rate),
            _ => {
                self.send_burst(now, out, burst);
            }
        }
        if let Some(nxt) = pass {
            self.record_usage(nxt);
        }
        if self.rate.is_some() {
            self.check_app_limited(now);
        }
        if !self.timers.armed(Timer::Rto) && self.sb.outstanding() > 0 {
            self.timers.arm(Timer::Rto, self.rto_at(now));
        }
        if !self.timers.armed(Timer::Probe) {
            self.arm_pto(now);
        }
        if !self.on_periods.is_empty() && !self.app_on(now) {
            self.timers.set(Timer::App, self.next_on(now));
        }
    }

    /// The window loop of [`Self::send_loop`]: at most `burst` segments when pacing.
    #[inline(always)]
    pub(super) fn send_window(&mut self, now: Time, out: &mut Outbox, burst: Option<u64>) {
        if self.paced_out(now) {
            return;
        }
        let start = out.len();
        let newreno_fr = !self.cfg.sack && self.recovery.in_recovery;
        self.rate_halving_round();
        let frto_new = self.frto.as_ref().is_some_and(|f| f.new);
        let sack1 = self.sack1_recovery();
        let mut gso = self.gso_packet(burst);
        loop {
            if burst.is_some_and(|b| (out.len() - start) as u64 >= b) {
                // The burst is full: whatever the window still allows waits for the next one
                // (at once, stamped for later, when the host's fq paces).
                if !self.stamps() {
                    self.timers.arm(Timer::Pace, self.pace_next);
                }
                break;
            }
            let cwnd = self.send_window_size(out.len() > start);
            let sent = (out.len() - start) as u64;
            let cand = if newreno_fr {
                None
            } else {
                self.sb.next_candidate()
            };
            // ns-2's Sack1 recovery resends every hole below the highest SACKed segment first.
            let cand = cand.map(|(i, lost)| {
                (
                    i,
                    lost || (sack1 && self.sb.highest_sacked().is_some_and(|h| i < h)),
                )
            });
            // Rule 1: a lost segment (also the go-back-N retransmissions after an RTO), except
            // while F-RTO sends new data instead (RFC 5682 step 2.b).
            if let (Some((i, true)), false) = (cand, frto_new) {
                if self.room(cwnd, sent) {
                    gso.close(out);
                    self.retransmit(i, now, out);
                    continue;
                }
                break;
            }
            // Rule 2: new data (in Linux's tcp_write_xmit, which TCP Small Queues stop).
            let can_send_new = self.can_send_new(now) && !self.small_queue_stops();
            if can_send_new && sack1 {
                if self.room(cwnd, sent) {
                    self.send_new_in(&mut gso, now, out);
                    continue;
                }
                break;
            }
            if can_send_new {
                let (in_flight, mut allowed) = if self.cfg.sack {
                    (self.sb.pipe(), cwnd)
                } else {
                    (self.flight(), cwnd)
                };
                if !self.cfg.sack && !self.recovery.in_recovery && self.recovery.loss_point.is_none() {
                    // RFC 3042 limited transmit.
                    allowed += self.recovery.dupacks.min(2) as u64 * self.mss;
                }
                if !self.cfg.sack && self.recovery.loss_point.is_some() {
                    // Go-back-N after an RTO: the pipe of retransmissions governs.
                    if self.sb.pipe() + self.mss <= cwnd {
                        self.send_new_in(&mut gso, now, out);
                        continue;
                    }
                    break;
                }
                if self.st.cwnd < self.probe_below && !self.recovery.in_recovery {
                    if self.probe_due(now, (out.len() - start) as u64) {
                        self.send_new_in(&mut gso, now, out);
                        continue;
                    }
                    break;
                }
                if in_flight + self.mss <= allowed {
                    if gso.segs == 0 && self.tso_defers(now, allowed - in_flight, gso.autosize) {
                        // tcp_tso_should_defer's first case: the window, not the receiver's,
                        // holds the packet back.
                        let next = self.sb.seg_start(self.sb.next_idx());
                        let rwnd_room = (self.snd_una + self.rwnd).saturating_sub(next);
                        self.usage.deferred |= allowed - in_flight < rwnd_room;
                        break;
                    }
                    self.send_new_in(&mut gso, now, out);
                    continue;
                }
                break;
            }
            // Rules 3 and 4 (SACK recovery only; not in ns-2's Sack1), as `nextseg` keeps them.
            let rules = self.cfg.nextseg;
            if self.cfg.sack
                && self.recovery.in_recovery
                && !sack1
                && rules != NextSeg::Lost
                && self.sb.pipe() + self.mss <= cwnd
            {
                // Rule 3 only below the highest SACKed segment (RFC 6675 NextSeg (1.b)).
                if let Some((i, false)) = cand {
                    if self.sb.highest_sacked().is_some_and(|h| i < h) {
                        gso.close(out);
                        self.retransmit(i, now, out);
                        continue;
                    }
                }
                if rules == NextSeg::Rfc6675 && !self.recovery.rescue_done {
                    self.recovery.rescue_done = true;
                    if let Some(i) = self.sb.highest_unsacked() {
                        if !self.sb.seg(i).is_some_and(|s| s.retx) {
                            gso.close(out);
                            self.retransmit(i, now, out);
                            continue;
                        }
                    }
                }
            }
            break;
        }
        gso.close(out);
        if sack1 {
            self.sack1_sent((out.len() - start) as u64);
        }
    }

    /// The GSO packet new data leaves in, as Linux's tcp_write_xmit cuts it: at most the TSO
    /// autosize (tcp_tso_segs) and half the window (tcp_cwnd_test's `halfcwnd`: "at least 2
    /// GSO packets in flight") segments; tracked with `psh = "skb"` only. A paced sender's
    /// `burst` is that autosize already.
    fn gso_packet(&mut self, burst: Option<u64>) -> GsoPacket {
        let skb = self.cfg.psh == Psh::Skb;
        let autosize = match burst {
            _ if !skb && self.cfg.tso_defer == TsoDefer::Off => 0,
            Some(segs) => segs,
            None => self.autosize_segs(),
        };
        let max = if skb {
            autosize.min((self.st.cwnd / self.mss / 2).max(1))
        } else {
            0
        };
        GsoPacket {
            segs: 0,
            max,
            autosize,
            last: 0,
        }
    }

    /// Linux's tcp_tso_should_defer (4.20 on) before a GSO packet of new data that `room` bytes
    /// of the window allow: whether it waits for the next ACK instead.
    #[inline(always)]
    fn tso_defers(&self, now: Time, room: u64, autosize: u64) -> bool {
        if self.cfg.tso_defer == TsoDefer::Off
            || self.recovery.in_recovery
            || self.recovery.loss_point.is_some()
            || self.cc.caps_window_by_flight()
        {
            return false;
        }
        // "Avoid bursty behavior by allowing defer only if the last write was recent (1 ms)"
        if self.last_data_sent.is_none_or(|t| now > t + MS) {
            return false;
        }
        let next = self.sb.seg_start(self.sb.next_idx());
        let limit = room.min((self.snd_una + self.rwnd).saturating_sub(next));
        // a full-sized packet, or a third of the window (sysctl_tcp_tso_win_divisor 3)
        if limit >= autosize * self.mss || limit >= self.rwnd.min(self.st.cwnd) / 3 {
            return false;
        }
        // An application that has no more than the window lets out (a transfer's end) sends
        // it: a FIN is never deferred, and this model's writes end with the transfer or record.
        if self.data_end.is_some_and(|d| d <= next + limit) || self.is_stream() {
            return false;
        }
        // The next ACK is due: the oldest unacknowledged segment's (Linux's rtx queue head).
        let (Some(head), Some(srtt)) = (self.sb.seg(self.sb.first_idx()), self.rtt.srtt()) else {
            return false;
        };
        if self.sb.outstanding() == 0 {
            return false;
        }
        match self.cfg.tso_defer {
            TsoDefer::HalfSrtt => now >= head.xmit_ts + srtt / 2,
            // "If next ACK is likely to come too late, ie in more than min(1ms, half srtt), do
            // not defer."
            _ => head.xmit_ts + srtt <= now + (srtt / 2).min(MS),
        }
    }

    /// New data as part of the GSO packet `gso`.
    fn send_new_in(&mut self, gso: &mut GsoPacket, now: Time, out: &mut Outbox) {
        self.send_new(now, out);
        if gso.max == 0 {
            return;
        }
        gso.segs += 1;
        gso.last = out.len() - 1;
        if gso.segs == gso.max {
            gso.close(out);
        }
    }

    /// A window below `probe_below` (TCP Nice, nice.rs; libutp's LEDBAT, ledbat.rs): whether the
    /// next new segment may go, `sent` segments having gone in this call. A probe of
    /// probe_below / SMSS segments leaves with nothing else in flight, probe_below / cwnd RTTs
    /// (the controller's `probe_rtt`, else the smoothed RTT) after the last data sent; until then
    /// the pacing wake-up is armed for that time.
    pub(super) fn probe_due(&mut self, now: Time, sent: u64) -> bool {
        if sent > 0 {
            return sent * self.mss < self.probe_below;
        }
        if self.flight() > 0 {
            return false;
        }
        let (Some(rtt), Some(last)) = (self.cc.probe_rtt().or(self.rtt.srtt()), self.last_data_sent) else {
            return true;
        };
        let wait = rtt as u128 * self.probe_below as u128 / self.st.cwnd.max(1) as u128;
        let at = last.saturating_add(wait.min(Time::MAX as u128) as Time);
        if now >= at {
            return true;
        }
        self.pace_next = at;
        self.timers.arm(Timer::Pace, at);
        false
    }
}

/// The segments of new data sent as one GSO packet so far (`psh = "skb"`). Linux
/// (__tcp_transmit_skb, since 5.4: "tcp: force a PSH flag on TSO packets") flags every
/// packet of more than one segment with PSH, whose last segment carries it after
/// segmentation; a single segment keeps only the flag of a write's end.
pub(super) struct GsoPacket {
    segs: u64,
    /// Its largest size in segments (0: `psh` is not "skb", no packet is tracked).
    max: u64,
    /// The TSO autosize (with `psh = "skb"` or `tso_defer`; else 0).
    autosize: u64,
    /// Where its last segment is in the outbox.
    last: usize,
}

impl GsoPacket {
    /// Ends the packet (a retransmission, or the window loop's end, comes next).
    fn close(&mut self, out: &mut Outbox) {
        if self.segs > 1 {
            out[self.last].tcp_flags |= flags::PSH;
        }
        self.segs = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::transport::tcp::config::{NextSeg, Psh, TsoDefer, TsoSegs};

    /// The segments (indices) of `out` that carry PSH.
    fn pushed(out: &[Packet]) -> Vec<u64> {
        out.iter()
            .filter(|p| p.tcp_flags & flags::PSH != 0)
            .map(|p| (p.seq - 1) / MSS)
            .collect()
    }

    fn psh_sender(psh: Psh, bytes: u64, tso_segs: Option<u32>, iw: u32) -> (TcpSender, Vec<Packet>) {
        established_at(
            TcpConfig {
                psh,
                bytes: Some(bytes),
                tso_segs: TsoSegs(tso_segs),
                ..config(true, iw)
            },
            100 * MS,
        )
    }

    #[test]
    fn the_opener_acknowledges_the_syn_ack_before_its_data_when_asked() {
        // RFC 9293 3.5, Linux tcp_rcv_synsent_state_process -> tcp_send_ack: the SYN-ACK (its
        // TSval 40) is answered by a 52-byte pure ACK echoing it, then the initial window.
        let syn_ack = Packet {
            ts_val: 40,
            ..synack()
        };
        for on in [false, true] {
            let cfg = TcpConfig {
                handshake_ack: on,
                ..config(true, 2)
            };
            let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
            let mut out = vec![];
            s.start(0, &mut out);
            out.clear();
            s.on_packet(&syn_ack, 100 * MS, &mut out);
            let wire: Vec<(u64, u32, u32, u16, Time)> = out
                .iter()
                .map(|p| (p.seq, p.payload, p.size, p.tcp_flags, p.ts_ecr))
                .collect();
            let data = [
                (1, 1000, 1052, flags::ACK, 40),
                (1001, 1000, 1052, flags::ACK, 40),
            ];
            if on {
                assert_eq!(wire[0], (1, 0, 52, flags::ACK, 40));
                assert_eq!(wire[1..], data);
            } else {
                assert_eq!(wire, data);
            }
        }
    }

    #[test]
    fn psh_ends_each_write_and_each_gso_packet_of_two_or_more() {
        // A write of 2.5 segments (two full, one of 500 B with the FIN): tcp_push flags its
        // last segment; "off" flags none; "skb" also the GSO packet of 0 and 1.
        for (psh, expect) in [(Psh::Off, vec![]), (Psh::Write, vec![2]), (Psh::Skb, vec![1, 2])] {
            let (_, out) = psh_sender(psh, 2500, None, 10);
            assert_eq!((segs(&out), pushed(&out)), (vec![0, 1, 2], expect), "{psh:?}");
        }
        // GSO packets of the TSO autosize: the handshake's 100 ms RTT and the initial window of
        // 10 x 1000 B give a slow-start pacing rate of 200 % x 10,000 B / 100 ms = 200,000 B/s,
        // 195 B a ms (2^-10 s), under one segment: tcp_min_tso_segs' 2. The initial window
        // leaves as five packets of two, each flagged on its second segment.
        let (_, out) = psh_sender(Psh::Skb, 50 * MSS, None, 10);
        assert_eq!(pushed(&out), vec![1, 3, 5, 7, 9]);
        // Packets of 3 (tso_segs = 3): 0-2, 3-5, 6-8 and 9 alone, where the window ends, which
        // a single segment does not flag; the ACK of segment 0 (cwnd 11) sends 10 and 11, a
        // packet of two.
        let (mut s, out) = psh_sender(Psh::Skb, 50 * MSS, Some(3), 10);
        assert_eq!((segs(&out), pushed(&out)), ((0..10).collect(), vec![2, 5, 8]));
        let out = ack(&mut s, 1 + MSS, &[], 200 * MS);
        assert_eq!((segs(&out), pushed(&out)), (vec![10, 11], vec![11]));
        // A window of 3 segments: half of it (tcp_cwnd_test's halfcwnd) caps a packet at one
        // segment, so nothing is flagged.
        let (_, out) = psh_sender(Psh::Skb, 50 * MSS, None, 3);
        assert_eq!((segs(&out), pushed(&out)), (vec![0, 1, 2], vec![]));
    }

    /// A sender of 50 segments (SACK, NewReno growth of one segment per ACK) with the `linux`
    /// profile's PSH and the deferral `rule` whose handshake took 100 ms (SRTT 100 ms).
    fn deferring_sender(rule: TsoDefer) -> TcpSender {
        let (s, out) = established_at(
            TcpConfig {
                psh: Psh::Skb,
                tso_defer: rule,
                abc: false,
                ..config(true, 10)
            },
            100 * MS,
        );
        assert_eq!(segs(&out), (0..10).collect::<Vec<_>>());
        s
    }

    #[test]
    fn tso_deferral_holds_a_lone_segment_for_the_next_ack_as_linux() {
        // tcp_output.c tcp_tso_should_defer. The ACK of segment 0 at 200 ms (cwnd 11, 9 in
        // flight) lets out a packet of two (10, 11: a full autosized packet goes at once). A
        // SACK of 5 at 200.5 ms leaves room for one segment: under the autosize (2) and a
        // third of the window, the last transmission 0.5 ms ago, the oldest segment sent 100.5
        // ms ago (at least half an SRTT; its ACK expected 0.5 ms ago, within 1 ms): it waits
        // under either rule. At 201.5 ms the last transmission is over 1 ms old and 12 goes
        // alone, unflagged; without deferral it goes at 200.5 ms.
        use TsoDefer::{AckDue, HalfSrtt, Off};
        for (rule, at, expect) in [
            (HalfSrtt, 200_500, vec![]),
            (AckDue, 200_500, vec![]),
            (HalfSrtt, 201_500, vec![12]),
            (AckDue, 201_500, vec![12]),
            (Off, 200_500, vec![12]),
        ] {
            let mut s = deferring_sender(rule);
            let out = ack_echoing(&mut s, 1 + MSS, &[], 200 * MS, 100 * MS);
            assert_eq!((segs(&out), pushed(&out)), (vec![10, 11], vec![11]));
            let out = ack_echoing(&mut s, 1 + MSS, &[(5, 6)], at * MS / 1000, 100 * MS);
            assert_eq!(
                (segs(&out), pushed(&out)),
                (expect, vec![]),
                "{rule:?} at {at} us"
            );
        }
    }

    #[test]
    fn tso_deferral_waits_for_an_ack_due_within_1_ms_in_linux_6_18() {
        // The whole initial window ACKed at 200 ms: 11 segments go (10-20, the last alone: its
        // oldest unacknowledged segment left just now). Segment 10's ACK at 260 ms (an RTT
        // sample of 60 ms: SRTT 95 ms) lets out a pair (21, 22); a SACK of 15 at 260.5 ms leaves
        // room for one segment, the oldest unacknowledged (11) sent 60.5 ms ago. Half an SRTT
        // has passed, so Linux 4.20-6.17 waits; its ACK is expected some 30 ms from now, more
        // than 1 ms away, so 6.18 sends 23 at once (295ce1eb36ae: "If next ACK is likely to
        // come too late, ie in more than min(1ms, half srtt), do not defer").
        for (rule, expect) in [
            (TsoDefer::HalfSrtt, vec![]),
            (TsoDefer::AckDue, vec![23]),
            (TsoDefer::Off, vec![23]),
        ] {
            let mut s = deferring_sender(rule);
            let out = ack_echoing(&mut s, 1 + 10 * MSS, &[], 200 * MS, 100 * MS);
            assert_eq!(segs(&out), (10..21).collect::<Vec<_>>(), "{rule:?}");
            let out = ack_echoing(&mut s, 1 + 11 * MSS, &[], 260 * MS, 200 * MS);
            assert_eq!((segs(&out), pushed(&out)), (vec![21, 22], vec![22]), "{rule:?}");
            let out = ack_echoing(&mut s, 1 + 11 * MSS, &[(15, 16)], 260 * MS + MS / 2, 200 * MS);
            assert_eq!(segs(&out), expect, "{rule:?}");
        }
    }

    /// TCP Nice's windows below one segment (Venkataramani et al., OSDI 2002, 3.1): with W < 1
    /// one packet every 1/W RTTs, with nothing else in flight; the Linux prototype (3.2) sends
    /// two every 2/W RTTs below a window of two. The controller is held at W (no Vegas step, no
    /// detector) so that only the sender's rule acts; RTT 100 ms.
    #[test]
    fn nice_windows_below_one_segment_send_one_probe_every_1_over_w_rtts() {
        for (n, w_bytes, wait_rtts) in [(1u64, 250u64, 4u64), (2, 500, 4), (1, 125, 8)] {
            let params = serde_json::json!({
                "alpha": 0.0, "beta": 1000.0, "t": 1.0, "min_cwnd": 0.1, "probe_segments": n
            });
            let (mut s, out) = established_at(
                TcpConfig {
                    mss: MSS as u32,
                    iw: n as u32,
                    cc: "nice".into(),
                    cc_params: params,
                    bytes: Some(100 * MSS),
                    ..crate::transport::tcp::profiles::rfc()
                },
                100 * MS,
            );
            assert_eq!(out.len() as u64, n);
            (s.st.cwnd, s.st.ssthresh) = (w_bytes, w_bytes);
            // Each probe's ACK returns one RTT after it left; the next probe leaves 1/W RTTs
            // (2/W for pairs) after the previous one, and not a nanosecond before.
            let mut sent_at = 100 * MS;
            for k in 1..=3u64 {
                let p = Packet {
                    kind: Kind::Tcp,
                    tcp_flags: flags::ACK,
                    ack: 1 + k * n * MSS,
                    ts_ecr: sent_at,
                    ..Default::default()
                };
                let mut out = vec![];
                s.on_packet(&p, sent_at + 100 * MS, &mut out);
                assert!(out.is_empty(), "round {k}: nothing before the probe time");
                let due = sent_at + wait_rtts * 100 * MS;
                assert_eq!(s.next_timer(), Some(due), "round {k}, {n} x {w_bytes} B");
                s.on_timer(due - 1, &mut out);
                assert!(out.is_empty());
                s.on_timer(due, &mut out);
                assert_eq!(segs(&out), (k * n..(k + 1) * n).collect::<Vec<_>>());
                sent_at = due;
            }
        }
    }

    #[test]
    fn stop_ends_new_data_but_not_loss_recovery() {
        let (mut s, out) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 6,
            cc: "newreno".into(),
            stop: Some(150),
            ..crate::transport::tcp::profiles::rfc()
        });
        assert_eq!(
            segs(&out),
            vec![0, 1, 2, 3, 4, 5],
            "before stop: the initial window"
        );
        // After stop an ACK opening the window (slow start: cwnd 6 -> 7, one segment out of
        // the pipe) sends nothing new.
        assert!(ack(&mut s, 1 + MSS, &[], 200).is_empty());
        // Data already sent is still recovered: the third SACK with three segments SACKed
        // above segment 1 makes it lost (RFC 6675 IsLost) and it is retransmitted.
        assert!(ack(&mut s, 1 + MSS, &[(2, 3)], 201).is_empty());
        assert!(ack(&mut s, 1 + MSS, &[(2, 4)], 202).is_empty());
        assert_eq!(segs(&ack(&mut s, 1 + MSS, &[(2, 5)], 203)), vec![1]);
        assert_eq!(s.snd_nxt(), 1 + 6 * MSS, "no new data after stop");
    }

    #[test]
    fn nagle_holds_a_short_tail_while_data_is_outstanding() {
        // ns-2 tcp-full.cc foutput (nodelay_ false): a segment shorter than maxseg_ goes when
        // nothing is outstanding (quiet), not while the first three are unacknowledged.
        for nagle in [false, true] {
            let (mut s, out) = established_with(TcpConfig {
                bytes: Some(3 * MSS + 100),
                nagle,
                ..config(true, 4)
            });
            let sizes: Vec<u32> = out.iter().map(|p| p.payload).collect();
            if !nagle {
                assert_eq!(sizes, [MSS as u32, MSS as u32, MSS as u32, 100]);
                continue;
            }
            assert_eq!(sizes, [MSS as u32; 3]);
            assert!(
                ack(&mut s, 1 + 2 * MSS, &[], 200).is_empty(),
                "one segment still out"
            );
            let out = ack(&mut s, 1 + 3 * MSS, &[], 201);
            assert_eq!(out.iter().map(|p| p.payload).collect::<Vec<_>>(), [100]);
        }
    }

    /// A persistent stream's records follow one another byte for byte on the wire (each one's
    /// last segment short, no FIN), and the wire's ACK and SACK edges map back: the SACKs of the
    /// second record find the first record's lost short segment (RFC 6675 IsLost: three
    /// segments SACKed above it), which goes again with its own 500 bytes.
    #[test]
    fn persistent_stream_records_are_contiguous_on_the_wire() {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            sack: true,
            cc: "newreno".into(),
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut s = TcpSender::stream(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        s.write(2500, 0, &mut out);
        assert_eq!(out.len(), 1, "only the SYN before the handshake");
        out.clear();
        s.on_packet(&synack(), 100, &mut out);
        let wire = |out: &[Packet]| -> Vec<(u64, u32)> { out.iter().map(|p| (p.seq, p.payload)).collect() };
        assert_eq!(wire(&out), [(1, 1000), (1001, 1000), (2001, 500)]);
        assert!(out.iter().all(|p| p.tcp_flags & flags::FIN == 0));
        out.clear();
        s.write(4000, 110, &mut out);
        assert_eq!(
            wire(&out),
            [(2501, 1000), (3501, 1000), (4501, 1000), (5501, 1000)]
        );
        // SACKs of the second record, from its start on the wire
        let sacked = |end: u64| [SackBlock { start: 2501, end }];
        ack_blocks(&mut s, 2001, &[], 200);
        ack_blocks(&mut s, 2001, &sacked(3501), 201);
        ack_blocks(&mut s, 2001, &sacked(4501), 202);
        let out = ack_blocks(&mut s, 2001, &sacked(5501), 203);
        assert!(s.in_recovery());
        assert_eq!(wire(&out), [(2001, 500)], "the short segment again, nothing else");
        ack_blocks(&mut s, 6501, &[], 300);
        assert_eq!((s.pipe(), s.state()), (0, SenderState::Established));
        let mut out = vec![];
        s.write(100, 400, &mut out);
        assert_eq!(wire(&out), [(6501, 100)]);
    }

    #[test]
    fn the_forward_retransmit_resends_a_hole_below_the_highest_sack_not_yet_lost() {
        // Ten segments, all the data, leave at 100 ms; 0 and 7 are lost. RFC 6675's IsLost
        // without RACK: 0 is lost at the third SACKed segment above it (202 ms) and resent;
        // RFC 6675's rescue (rule 4) then sends 9, the highest outstanding, which Linux never
        // did. The SACK of 8 (206 ms) puts 7 below the highest SACKed segment with two SACKed
        // above it, not yet lost; no new data may go. NextSeg rule 3 (RFC 6675 4, and Linux
        // before 4.11: tcp_xmit_retransmit_queue's forward retransmit when
        // tcp_can_forward_retransmit) resends it there; Linux since 4.11 (`"lost"`) resends
        // only what is marked lost.
        for (rules, first, seven) in [
            (NextSeg::Rfc6675, vec![0, 9], vec![7]),
            (NextSeg::Forward, vec![0], vec![7]),
            (NextSeg::Lost, vec![0], vec![]),
        ] {
            let (mut s, out) = linux_sender_cfg(TcpConfig {
                rack: false,
                tlp: false,
                nextseg: rules,
                ..linux_config(10)
            });
            assert_eq!(segs(&out), (0..10).collect::<Vec<_>>());
            let mut sent = vec![];
            for k in 2..=7 {
                sent.extend(segs(&ack_ms(&mut s, 0, &[(1, k)], 198 + k, 100)));
            }
            assert_eq!(sent, first, "{rules:?}");
            let sent = segs(&ack_ms(&mut s, 0, &[(1, 7), (8, 9)], 206, 100));
            assert_eq!(sent, seven, "{rules:?}");
        }
    }
}
