//! The phases of an ACK that belong to no optional feature: the intake into the scoreboard
//! with the RTT sample, the round and duplicate-ACK counts, window growth by the congestion
//! controller (with the window-validation gate of `usage.rs`), the end of a
//! transfer and the ECN response (RFC 3168 or AccECN feedback). Owns [`Ack`], what an ACK brought, as the phases
//! pass it on.

use super::super::accecn::Feedback;
use super::super::config::{GrowthCount, RackRetx, RttSample};
use super::super::scoreboard::RetxBound;
use super::state::{SenderState, TcpSender, DUP_THRESH};
use super::timers::Timer;
use crate::packet::{flags, Packet, SackBlock};
use crate::transport::cc::{AckSample, CongestionKind};
use crate::units::{Time, MS};

/// What an ACK brought, handed from phase to phase of [`TcpSender::on_ack`].
pub(super) struct Ack {
    /// snd_una advanced.
    pub(super) advanced: bool,
    /// Bytes newly acknowledged cumulatively, and newly SACKed.
    pub(super) acked_bytes: u64,
    pub(super) sacked_bytes: u64,
    /// Segments newly found lost by the DupThresh rule (RFC 6675 IsLost), and by RACK.
    pub(super) newly_lost: u64,
    pub(super) rack_marked: u64,
    /// Data is outstanding after the cumulative ACK.
    pub(super) outstanding: bool,
    /// A duplicate ACK (with SACK: one carrying new SACK information).
    pub(super) dup: bool,
    /// A new round starts: snd_una passed the highest sequence sent at the last start.
    pub(super) round_start: bool,
    /// The controller's RTT sample (`rtt_sample`), the one-way delay TSval - TSecr and the
    /// echo TSecr of an ACK that advances snd_una.
    pub(super) rtt: Option<Time>,
    pub(super) owd: Option<Time>,
    pub(super) ts_ecr: Option<Time>,
    /// The ACK signalled congestion: ECN-Echo (RFC 3168), or new CE marks (AccECN).
    pub(super) ece: bool,
    /// Packets newly known CE-marked (AccECN; 0 otherwise).
    pub(super) ce_segs: u64,
    /// The ACK widened the send window at snd_una (Linux FLAG_WIN_UPDATE without an advance).
    pub(super) win_update: bool,
    /// The D-SACK block it carries (RFC 2883 section 4: a first block below the cumulative
    /// ACK, or within the second; Linux tcp_check_dsack).
    pub(super) dsack: Option<SackBlock>,
}

impl Ack {
    /// The ACK advanced snd_una and marked nothing lost (Linux's `FLAG_SND_UNA_ADVANCED &&
    /// !newly_lost`, which grants PRR's extra segment under `prr_rule = "linux"`).
    pub(super) fn una_no_loss(&self) -> bool {
        self.advanced && self.newly_lost + self.rack_marked == 0
    }
}

impl TcpSender {
    /// The cumulative ACK and the SACK blocks into the scoreboard, the segments the DupThresh
    /// rule now finds lost, and the RTT sample: now - TSecr of an ACK advancing snd_una.
    pub(super) fn take_ack(&mut self, pkt: &Packet, now: Time) -> Ack {
        let ack = pkt.ack.min(self.high_data);
        let advanced = ack > self.snd_una;
        // The send window (RFC 9293 3.10.7.4, Linux tcp_may_update_window): from an ACK that
        // advances snd_una, or one at snd_una that widens it (a window update).
        let win_update = !advanced && ack == self.snd_una && pkt.wnd as u64 > self.rwnd;
        if pkt.wnd > 0 && (advanced || win_update) {
            self.rwnd = pkt.wnd as u64;
        }
        // RFC 7323 4.3: the receiver's segments all sit at the left edge of this end's window
        // (it sends no data), so each newer TSval becomes TS.Recent.
        self.ts_recent = self.ts_recent.max(pkt.ts_val);
        let mut acked_bytes = 0;
        let min_rtt = self.min_rtt.and_then(|m| now.checked_sub(m));
        let retx_bound = match self.cfg.rack_retx {
            RackRetx::Echo => RetxBound::both(Some(pkt.ts_ecr)),
            RackRetx::MinRtt => RetxBound::both(min_rtt),
            // tcp_skb_spurious_retrans compares the echo with the retransmission's TSval in
            // whole milliseconds: the last nanosecond of the echo's millisecond still counts.
            RackRetx::Linux => RetxBound {
                sack: min_rtt,
                cum: min_rtt.map(|b| b.min((pkt.ts_ecr / MS + 1) * MS - 1)),
            },
        };
        self.sb.begin_ack(retx_bound);
        if advanced {
            acked_bytes = ack - self.snd_una;
            self.sb.cum_ack(ack);
            self.snd_una = ack;
        }
        let (sacked_bytes, newly_lost) = self.take_sacks(pkt, advanced);
        // The echo an ACK that advances snd_una carries (RFC 7323 4.3), and the one-way delay.
        let ts_ecr = (advanced && now >= pkt.ts_ecr).then_some(pkt.ts_ecr);
        let owd = ts_ecr.and_then(|e| pkt.ts_val.checked_sub(e));
        let mut rtt = None;
        if self.cfg.rtt_sample == RttSample::Linux {
            let (timer, cc) = self.linux_rtt(pkt, advanced, now);
            if let Some(r) = timer {
                self.rtt.sample(r, self.snd_una, self.high_data);
                rtt = cc;
            }
        } else if let Some(e) = ts_ecr {
            let r = now - e;
            self.rtt.sample(r, self.snd_una, self.high_data);
            rtt = Some(r);
        }
        let outstanding = self.snd_una < self.high_data;
        let dup =
            ack == self.snd_una && outstanding && pkt.payload == 0 && (!self.cfg.sack || sacked_bytes > 0);
        let (ece, ce_segs) = self.ecn_feedback(pkt, acked_bytes + sacked_bytes);
        Ack {
            advanced,
            acked_bytes,
            sacked_bytes,
            newly_lost,
            rack_marked: 0,
            outstanding,
            dup,
            round_start: false,
            rtt,
            owd,
            ts_ecr,
            ece,
            ce_segs,
            win_update,
            dsack: dsack_block(pkt),
        }
    }

    /// Linux's RTT samples of an ACK at `now` (`rtt_sample = "linux"`; tcp_input.c
    /// tcp_clean_rtx_queue and tcp_ack_update_rtt): the timer's (seq_rtt_us: the oldest
    /// segment newly acknowledged, else the oldest newly SACKed) and the controller's
    /// (ca_rtt_us: the newest newly SACKed, else the newest newly acknowledged); none from a
    /// cumulative ACK of retransmitted data (Karn). Without either, an ACK that advances
    /// snd_una gives the timestamp echo's, in whole milliseconds as Linux's timestamps count
    /// them (tcp_rtt_tsopt_us: floor(now) - TSecr in ms, at least 1), for both.
    #[inline(never)]
    fn linux_rtt(&self, pkt: &Packet, advanced: bool, now: Time) -> (Option<Time>, Option<Time>) {
        let t = self.sb.rtt_times();
        let (mut timer, mut cc) = (None, None);
        if let (Some(first), Some(last), false) = (t.first_ackt, t.last_ackt, t.retx_acked) {
            (timer, cc) = (Some(now - first), Some(now - last));
        }
        if let (Some((_, first)), Some((_, last))) = (t.first_sackt, t.last_sackt) {
            timer = timer.or(Some(now - first));
            cc = Some(now - last);
        }
        if timer.is_none() && advanced && now >= pkt.ts_ecr {
            let ms = (now / MS).saturating_sub(pkt.ts_ecr / MS).max(1) * MS;
            return (Some(ms), Some(ms));
        }
        (timer, cc)
    }

    /// Whether the ACK signals congestion, and (AccECN) how many packets it reports newly
    /// CE-marked, counting the `delivered` bytes it acknowledges or SACKs in segments.
    fn ecn_feedback(&mut self, pkt: &Packet, delivered: u64) -> (bool, u64) {
        match self.feedback {
            Feedback::Off => (false, 0),
            Feedback::Classic => (pkt.tcp_flags & flags::ECE != 0, 0),
            Feedback::Accurate => {
                let n = self.ace.on_ack(pkt.tcp_flags, delivered.div_ceil(self.mss));
                (n > 0, n)
            }
        }
    }

    /// The SACK blocks: the bytes newly SACKed, and the segments the DupThresh rule newly
    /// finds lost (without RACK).
    #[inline(always)]
    fn take_sacks(&mut self, pkt: &Packet, advanced: bool) -> (u64, u64) {
        let (mut sacked_bytes, mut newly_lost) = (0, 0);
        // ns-2 Sack1 after a timeout: duplicate ACKs are ignored until a new ACK, and a new
        // ACK clears the scoreboard (its own SACK blocks unused).
        let ns2_reset = self.cfg.rto_sack_reset && self.recovery.loss_point.is_some();
        if ns2_reset && advanced {
            self.sb.discard_sacks();
            self.recovery.timeout_unacked = false;
        }
        if self.cfg.sack && !(ns2_reset && (advanced || self.recovery.timeout_unacked)) {
            let (blocks, n) = pkt.sacks();
            for b in &blocks[..n] {
                sacked_bytes += self.sb.sack(b.start, b.end);
            }
            if sacked_bytes > 0 && std::mem::take(&mut self.recovery.sack_cleared) {
                // ns-2's UpdateScoreBoard on an empty board: lost at DupThresh + 1 below fack_.
                newly_lost = self.sb.mark_lost_below_fack(DUP_THRESH as u64 + 1);
            } else if sacked_bytes > 0 && self.rack.is_none() {
                newly_lost = self.sb.update_lost();
            }
            if self.cfg.lost_rtx_by_order && (advanced || sacked_bytes > 0) {
                newly_lost += self.sb.relost_retransmissions(DUP_THRESH as u64 + 1);
            }
        }
        (sacked_bytes, newly_lost)
    }

    /// The round, the duplicate ACK count, and ECE.
    pub(super) fn count_ack(&mut self, a: &mut Ack) {
        if a.advanced && self.snd_una >= self.round_end {
            a.round_start = true;
            self.round_end = self.high_data;
        }
        if a.advanced {
            self.recovery.dupacks = 0;
            self.recovery.lt_bytes = 0;
        } else if a.dup {
            self.recovery.dupacks += 1;
        }
        if a.ece {
            self.n.ece_acks += 1;
        }
    }

    /// What the controller hears of ACK `a` (snd_una and snd_nxt as the ACK left them; the
    /// recovery step that may come between this and the growth sends only retransmissions).
    pub(super) fn ack_sample(&self, a: &Ack, now: Time) -> AckSample {
        AckSample {
            now,
            acked_bytes: a.acked_bytes,
            sacked_bytes: a.sacked_bytes,
            rtt: a.rtt,
            owd: a.owd,
            ts_ecr: a.ts_ecr,
            round_start: a.round_start,
            snd_una: self.snd_una,
            snd_nxt: self.high_data,
            ece: a.ece,
            ce_segs: a.ce_segs,
            // HyStart, its one reader, runs in slow start alone: no division on the other ACKs.
            pacing_rate: self
                .st
                .in_slow_start()
                .then(|| self.socket_pacing_rate())
                .flatten(),
            paced: self.pacing.is_some() || self.stamps(),
        }
    }

    /// Window growth (the controller skips growth while in recovery, and while the window
    /// does not limit the sender when the gate is on); `prior_flight` was in flight before
    /// the ACK (tcp_ack's prior_in_flight), `delivered` what the ACK newly delivered (counted
    /// instead of the cumulative bytes with `growth_count = "delivered"`).
    #[inline(always)]
    pub(super) fn grow_window(&mut self, sample: &AckSample, prior_flight: u64, delivered: u64) {
        self.sync_state();
        (self.st.cwnd_limited, self.st.flight_cwnd_limited) = self.window_limits(prior_flight);
        if self.cfg.growth_count == GrowthCount::Delivered
            && sample.acked_bytes > 0
            && !self.cc.counts_own_deliveries()
        {
            let sample = AckSample {
                acked_bytes: delivered,
                ..*sample
            };
            self.cc.on_ack(&sample, &mut self.st);
        } else {
            self.cc.on_ack(sample, &mut self.st);
        }
    }

    /// A persistent stream drops its acknowledged records; a finite transfer wholly
    /// acknowledged is done (true).
    pub(super) fn transfer_done(&mut self, now: Time) -> bool {
        if let Some(r) = self.records.as_mut() {
            r.acked(self.snd_una, self.mss);
        } else if self.data_end.is_some_and(|d| self.snd_una >= d) {
            self.state = SenderState::Done;
            self.n.completed = Some(now);
            self.timers.stop(Timer::Rto);
            return true;
        }
        false
    }

    /// ECN: react to a congestion signal once per window, never during loss recovery; with
    /// `cwr_prr` the window comes down by PRR over the CWR state (`cwr_on_ack`).
    pub(super) fn ecn_on_ack(&mut self, a: &Ack, now: Time) {
        if self.cwr_on_ack(a) {
            return;
        }
        let prior_cwnd = self.st.cwnd;
        if a.ece
            && !self.recovery.in_recovery
            && self.recovery.loss_point.is_none()
            && self.reduce(now, CongestionKind::Ecn)
        {
            self.n.ecn_reductions += 1;
            self.cwr_pending = self.feedback == Feedback::Classic;
            self.enter_cwr_prr(a, prior_cwnd);
        }
    }
}

/// The D-SACK block of `pkt`'s SACK option, if its first block is one (RFC 2883 section 4;
/// Linux tcp_check_dsack): it lies below the cumulative ACK, or within the second block.
fn dsack_block(pkt: &Packet) -> Option<SackBlock> {
    if pkt.n_sack == 0 {
        return None;
    }
    let (b, n) = pkt.sacks();
    (b[0].start < pkt.ack || n > 1 && b[0].start >= b[1].start && b[0].end <= b[1].end).then_some(b[0])
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::packet::{Ecn, EcnMode};
    use crate::transport::tcp::accecn;
    use crate::transport::tcp::config::RttSample;
    use crate::transport::tcp::receiver::TcpReceiver;

    /// A Linux-profile sender (`testutil::linux_sender`) of 20 segments taking its RTT samples
    /// by `rule`; its initial window of `iw` left at 100 ms.
    fn rtt_sender(rule: RttSample, iw: u32) -> (TcpSender, Vec<Packet>) {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw,
            cc: "newreno".into(),
            bytes: Some(20 * MSS),
            prr: true,
            rack: true,
            tlp: true,
            rtt_sample: rule,
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        out.clear();
        s.on_packet(&synack(), 100 * MS, &mut out);
        (s, out)
    }

    /// An ACK of the segments below `una` SACKing `sacked`, echoing TSval `ecr` (ns).
    fn rtt_ack(una: u64, sacked: &[(u64, u64)], ecr: Time) -> Packet {
        ack_packet(1 + una * MSS, &sack_blocks(sacked), ecr)
    }

    #[test]
    fn linux_takes_the_controllers_rtt_from_the_newest_segment_and_the_timers_from_the_oldest() {
        // tcp_clean_rtx_queue: seq_rtt_us from first_ackt (the oldest segment acknowledged),
        // ca_rtt_us from last_ackt (the newest). Segments 0-1 leave at 100 ms; the ACK of 0 at
        // 150 ms lets 2-3 go; one delayed ACK of 1 and 2 comes at 200 ms echoing segment 1's
        // TSval (RFC 7323's TS.Recent: the first segment it covers).
        for (rule, cc) in [(RttSample::Tsecr, 100), (RttSample::Linux, 50)] {
            let (mut s, _) = rtt_sender(rule, 2);
            let mut out = vec![];
            s.on_packet(&rtt_ack(1, &[], 100 * MS), 150 * MS, &mut out);
            assert_eq!(segs(&out), vec![2, 3]);
            let a = s.take_ack(&rtt_ack(3, &[], 100 * MS), 200 * MS);
            assert_eq!(a.rtt, Some(cc * MS), "{rule:?}");
        }
    }

    #[test]
    fn linux_falls_back_to_the_timestamp_at_1_ms_when_retransmitted_data_is_acknowledged() {
        // Karn's rule (tcp_clean_rtx_queue sets FLAG_RETRANS_DATA_ACKED, no seq_rtt_us) and no
        // new SACK: tcp_ack_update_rtt takes tcp_rtt_tsopt_us, whole milliseconds of the
        // timestamp clock: floor(201.2) - floor(150.5) = 51 ms where the echo says 50.7 ms.
        for (rule, rtt) in [(RttSample::Tsecr, 50_700_000), (RttSample::Linux, 51 * MS)] {
            let (mut s, out) = rtt_sender(rule, 4);
            assert_eq!(segs(&out), vec![0, 1, 2, 3]);
            let mut out = vec![];
            // segment 0 lost: three SACKed segments mark it lost (RACK's reordering window is
            // 0 with DupThresh segments SACKed) and it is sent again at 150.5 ms
            s.on_packet(&rtt_ack(0, &[(1, 2)], 100 * MS), 150 * MS, &mut out);
            s.on_packet(&rtt_ack(0, &[(1, 4)], 100 * MS), 150_500_000, &mut out);
            assert!(segs(&out).contains(&0), "{out:?}");
            let a = s.take_ack(&rtt_ack(4, &[], 150_500_000), 201_200_000);
            assert_eq!(a.rtt, Some(rtt), "{rule:?}");
        }
    }

    #[test]
    fn linux_samples_the_rtt_from_newly_sacked_segments() {
        // tcp_sacktag_one's first_sackt / last_sackt: an ACK that only SACKs gives both samples
        // (the timer's: SRTT moves); by its echo, one that does not advance snd_una gives none.
        for (rule, sampled) in [(RttSample::Tsecr, false), (RttSample::Linux, true)] {
            let (mut s, _) = rtt_sender(rule, 4);
            let before = s.rtt.srtt();
            let a = s.take_ack(&rtt_ack(0, &[(1, 3)], 100 * MS), 150 * MS);
            assert_eq!(a.rtt, sampled.then_some(50 * MS), "{rule:?}");
            assert_eq!(s.rtt.srtt() != before, sampled, "{rule:?}");
        }
    }

    /// cwnd (segments) after each of `rounds` rounds in which every ACK covers two segments
    /// (a delayed-ACK receiver, no loss), starting from an initial window of 4.
    fn slow_start_rounds(abc: bool, rounds: usize) -> Vec<u64> {
        let (mut s, out) = established_with(TcpConfig {
            mss: MSS as u32,
            iw: 4,
            cc: "newreno".into(),
            abc,
            ..crate::transport::tcp::profiles::rfc()
        });
        let mut round_end = out.len() as u64;
        let mut acked = 0;
        let mut cwnds = vec![];
        for _ in 0..rounds {
            while acked + 2 <= round_end {
                acked += 2;
                ack(&mut s, 1 + acked * MSS, &[], 200 + acked);
            }
            cwnds.push(s.cwnd() / MSS);
            round_end = (s.snd_nxt() - 1) / MSS;
        }
        cwnds
    }

    #[test]
    fn slow_start_growth_per_rtt_with_delayed_acks() {
        // ns-2 (tcp.cc TcpAgent::opencwnd, cwnd_ += 1 per new ACK): with one ACK per two
        // segments the window grows 1.5x per RTT: 4 -> 6 -> 9 -> 13 (9 segments: 4 ACKs
        // of two, the ninth segment's ACK falls in the next round).
        assert_eq!(slow_start_rounds(false, 3), vec![6, 9, 13]);
        // RFC 3465 byte counting (L = 2 SMSS): the window doubles per RTT.
        assert_eq!(slow_start_rounds(true, 3), vec![8, 16, 32]);
    }

    /// A SYN-ACK that grants classic ECN (RFC 3168: ECE alone).
    fn classic_synack() -> Packet {
        Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::SYN | flags::ACK | flags::ECE,
            ack: 1,
            ..Default::default()
        }
    }

    #[test]
    fn ecn_reduces_once_per_window_and_sets_cwr() {
        let cfg = TcpConfig {
            mss: MSS as u32,
            iw: 10,
            ecn: EcnMode::Classic,
            cc: "newreno".into(),
            ..crate::transport::tcp::profiles::rfc()
        };
        let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
        let mut out = vec![];
        s.start(0, &mut out);
        assert_eq!(out[0].tcp_flags, flags::SYN | flags::ECE | flags::CWR);
        assert_eq!(out[0].ecn, Ecn::NotEct);
        out.clear();
        s.on_packet(&classic_synack(), 100, &mut out);
        assert!(s.ecn_negotiated());
        assert!(out
            .iter()
            .all(|p| p.ecn == Ecn::Ect0 && p.tcp_flags & flags::CWR == 0));
        let mut a = Packet {
            kind: Kind::Tcp,
            tcp_flags: flags::ACK | flags::ECE,
            ack: 1 + MSS,
            ..Default::default()
        };
        out.clear();
        s.on_packet(&a, 200, &mut out);
        // FlightSize 9 segments -> ssthresh 4.5 segments; the first new segment carries CWR.
        assert_eq!(s.ecn_reductions(), 1);
        assert_eq!(s.cwnd(), 4500);
        assert!(
            out.is_empty(),
            "cwnd below FlightSize: nothing sent, and no retransmission"
        );
        for k in 2..10 {
            a.ack = 1 + k * MSS;
            s.on_packet(&a, 200 + k, &mut out);
        }
        assert_eq!(s.ecn_reductions(), 1, "one reduction per window");
        let first_new = out.iter().find(|p| p.payload > 0).unwrap();
        assert_ne!(first_new.tcp_flags & flags::CWR, 0);
        assert_eq!(out.iter().filter(|p| p.tcp_flags & flags::CWR != 0).count(), 1);
        assert_eq!(s.retransmits(), 0);
        // ACK beyond the data outstanding at the reduction: a new ECE reduces again.
        a.ack = 1 + 11 * MSS;
        s.on_packet(&a, 400, &mut out);
        assert_eq!(s.ecn_reductions(), 2);
    }

    #[test]
    fn an_ecn_reduction_comes_down_by_prr_in_the_cwr_state_as_linux() {
        // tcp_enter_cwr -> tcp_init_cwnd_reduction, then tcp_cwnd_reduction on each ACK:
        // sndcnt = ceil(ssthresh x prr_delivered / prior_cwnd) - prr_out while the packets in
        // flight exceed ssthresh (at least one segment until one is out), then at most
        // ssthresh - in flight; the state ends when an ACK passes the snd_nxt of the reduction
        // (tcp_end_cwnd_reduction: cwnd = ssthresh). NewReno, 10 segments out; the ECE ACK of
        // segment 0 grows the window to 11 (slow start) and sets ssthresh to FlightSize / 2,
        // 4.5 segments.
        use crate::transport::tcp::config::AckOrder;
        let cfg = |cwr_prr: bool, ack_order: AckOrder| TcpConfig {
            mss: MSS as u32,
            iw: 10,
            ecn: EcnMode::Classic,
            cc: "newreno".into(),
            prr: true,
            prr_rule: crate::transport::tcp::config::PrrRule::Linux,
            cwr_prr,
            ack_order,
            ..crate::transport::tcp::profiles::rfc()
        };
        let run_in = |cwr_prr: bool, order: AckOrder| {
            let mut s = TcpSender::new(&cfg(cwr_prr, order), 0, Dir::Up).unwrap();
            let mut out = vec![];
            s.start(0, &mut out);
            s.on_packet(&classic_synack(), 100, &mut out);
            let mut sent = vec![];
            for k in 1..=11u64 {
                let a = Packet {
                    kind: Kind::Tcp,
                    tcp_flags: flags::ACK | if k == 1 { flags::ECE } else { 0 },
                    ack: 1 + k * MSS,
                    ..Default::default()
                };
                let mut out = vec![];
                s.on_packet(&a, 200 + k, &mut out);
                sent.push(segs(&out));
            }
            (s, sent)
        };
        // The ACKs (1-based) that send, each the next new segment of 10-14.
        let sending = |sent: &[Vec<u64>]| -> Vec<u64> {
            assert_eq!(sent.concat(), (10..=14).collect::<Vec<u64>>());
            (1..)
                .zip(sent)
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, _)| k)
                .collect()
        };
        let run = |cwr_prr: bool| run_in(cwr_prr, AckOrder::GrowFirst);
        let (s, sent) = run(true);
        assert_eq!(s.ecn_reductions(), 1);
        // ceil(4.5 k / 11) after the k-th ACK: 1, 1, 2, 2, 3, 3, 3, 4, 4, 5 segments out in all;
        // the tenth ACK finds 4 in flight, below ssthresh: 0.5 segment of room, nothing sent.
        assert_eq!(sending(&sent), [1, 3, 5, 8, 11]);
        // The eleventh ACK passes segment 9's end: cwnd = ssthresh, then NewReno's growth.
        assert!((4500..5000).contains(&s.cwnd()), "{}", s.cwnd());
        // Off: cut to 4.5 segments at once and growing by NewReno's MSS^2 / cwnd an ACK (about
        // 5.5 segments by the 6th ACK), nothing sent until 4 are in flight (the 6th ACK).
        let (_, sent) = run(false);
        let first = sent.iter().position(|v| !v.is_empty());
        assert_eq!(first, Some(5));
        // `ack_order = "recovery_first"` (6.x: tcp_fastretrans_alert enters CWR before
        // tcp_cong_control, which does not grow the window in it): the ECE ACK leaves the window
        // at 10, PRR's divisor. ceil(4.5 k / 10): 1, 1, 2, 2, 3, 3, 4, 4, 5 segments out by the
        // 9th ACK (5 in flight, above ssthresh), none on the 10th (ceil(4.5) = 5 out already).
        let (s, sent) = run_in(true, AckOrder::RecoveryFirst);
        assert_eq!(sending(&sent), [1, 3, 5, 7, 9]);
        assert!((4500..5000).contains(&s.cwnd()), "{}", s.cwnd());
    }

    /// A sender and a receiver of `cfg` after the handshake between them, and the sender's
    /// first flight.
    fn handshake(cfg: &TcpConfig) -> (TcpSender, TcpReceiver, Vec<Packet>) {
        let mut s = TcpSender::new(cfg, 0, Dir::Up).unwrap();
        let mut r = TcpReceiver::new(cfg, 0, Dir::Up);
        let (mut out, mut back) = (vec![], vec![]);
        s.start(0, &mut out);
        r.on_packet(&out[0], 50, &mut back);
        out.clear();
        s.on_packet(&back[0], 100, &mut out);
        (s, r, out)
    }

    #[test]
    fn accecn_negotiates_end_to_end_and_falls_back_per_receiver() {
        use crate::transport::tcp::accecn::{Feedback, ReceiverEcn};
        let cfg = |cc: &'static str, rx: ReceiverEcn| TcpConfig {
            iw: 4,
            cc: cc.into(),
            ecn: EcnMode::AccEcn,
            receiver_ecn: rx,
            ..crate::transport::tcp::profiles::rfc()
        };
        // an AccECN receiver: AccECN, ECT(1) on data, Prague stays Prague
        let (s, _, out) = handshake(&cfg("prague", ReceiverEcn::Accecn));
        assert_eq!((s.feedback(), s.cc().name()), (Feedback::Accurate, "prague"));
        assert!(out
            .iter()
            .all(|p| p.ecn == Ecn::Ect1 && p.tcp_flags & flags::CWR == 0));
        // an RFC 3168 receiver: CUBIC falls back to classic ECN with ECT(0) (RFC 9768 3.1.2);
        // Prague to Reno without ECN (tcp_prague.c: no RFC 3168 fallback, prague-reno)
        let (s, _, out) = handshake(&cfg("cubic", ReceiverEcn::Classic));
        assert_eq!((s.feedback(), s.cc().name()), (Feedback::Classic, "cubic"));
        assert!(out.iter().all(|p| p.ecn == Ecn::Ect0));
        let (s, _, out) = handshake(&cfg("prague", ReceiverEcn::Classic));
        assert_eq!((s.feedback(), s.cc().name()), (Feedback::Off, "newreno"));
        assert!(out.iter().all(|p| p.ecn == Ecn::NotEct));
        // a receiver without ECN: none
        let (s, _, out) = handshake(&cfg("cubic", ReceiverEcn::Off));
        assert_eq!(s.feedback(), Feedback::Off);
        assert!(out.iter().all(|p| p.ecn == Ecn::NotEct));
    }

    #[test]
    fn accecn_ce_marks_reach_the_sender_through_the_ace_counter() {
        // four segments, the 2nd and 3rd CE-marked on the way; the receiver ACKs each (no
        // delayed ACK): ACE 5, 6, 7, 7; the sender counts 2 marks and reduces once
        let cfg = TcpConfig {
            iw: 4,
            ecn: EcnMode::AccEcn,
            delack: None,
            cc: "newreno".into(),
            ..crate::transport::tcp::profiles::rfc()
        };
        let (mut s, mut r, mut out) = handshake(&cfg);
        out[1].ecn = Ecn::Ce;
        out[2].ecn = Ecn::Ce;
        let mut acks = vec![];
        for p in &out {
            r.on_packet(p, 150, &mut acks);
        }
        let ace: Vec<u64> = acks.iter().map(|a| accecn::ace_of(a.tcp_flags)).collect();
        assert_eq!(ace, [5, 6, 7, 7]);
        assert_eq!(r.accecn_counters().cep, 7);
        let mut sent = vec![];
        for a in &acks {
            s.on_packet(a, 200, &mut sent);
        }
        assert_eq!((s.ece_acks(), s.ecn_reductions()), (2, 1));
        assert!(
            sent.iter().all(|p| p.tcp_flags & flags::CWR == 0),
            "no CWR with AccECN"
        );
    }

    #[test]
    fn each_mode_puts_its_codepoint_on_data_only_once_negotiated() {
        // RFC 3168 6.1.1: ECT(0) on data, never on the SYN; RFC 9331 4.1: an L4S sender uses
        // ECT(1); "off" negotiates nothing and sends Not-ECT
        let synack = classic_synack();
        for (mode, want) in [
            (EcnMode::Off, Ecn::NotEct),
            (EcnMode::Classic, Ecn::Ect0),
            (EcnMode::L4s, Ecn::Ect1),
        ] {
            let cfg = TcpConfig {
                iw: 4,
                ecn: mode,
                ..crate::transport::tcp::profiles::rfc()
            };
            let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
            let mut out = vec![];
            s.start(0, &mut out);
            assert_eq!(out[0].ecn, Ecn::NotEct, "{mode:?}: the SYN");
            assert_eq!(out[0].tcp_flags & flags::ECE != 0, mode.on(), "{mode:?}");
            out.clear();
            s.on_packet(&synack, 100, &mut out);
            assert_eq!(s.ecn_negotiated(), mode.on(), "{mode:?}");
            assert_eq!(out.len(), 4);
            assert!(out.iter().all(|p| p.ecn == want), "{mode:?}");
        }
    }
}
