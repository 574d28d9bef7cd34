//! Finite transfers repeated after idle gaps (codel2012 1d's uploads: 1 MB files separated by idle
//! periods uniform in 5..15 s; the CoDel script's FTPs re-send their file 0.3 s after finishing):
//! a flow key `repeat = { idle = ["5s", "15s"] }` on a TCP flow with `bytes`.
//!
//! Each transfer is a fresh TCP connection (handshake, initial window) with the flow's settings,
//! opened when the previous one is fully acknowledged plus an idle time drawn uniformly from the
//! range (stream `repeat/<flow>`); transfers are told apart by `Packet::conn` (the transfer
//! number), so late packets of a finished transfer are ignored. No new transfer opens at or after
//! the flow's stop.

use crate::packet::{Dir, Packet};
use crate::record::rows::{CcReport, FlowReport};
use crate::rng::Rng;
use crate::transport::tcp::{TcpConfig, TcpReceiver, TcpSender};
use crate::transport::{Endpoint, Outbox};
use crate::units::Time;

/// The sending end: the current transfer's sender and when the next one opens.
pub struct RepeatSender {
    cfg: TcpConfig,
    flow: u32,
    dir: Dir,
    idle: (Time, Time),
    rng: Rng,
    stop: Time,
    transfer: u32,
    cur: TcpSender,
    next_open: Option<Time>,
    /// Transfers completed, and the counters of the closed ones.
    pub completed: u32,
    done: FlowReport,
}

impl RepeatSender {
    pub fn new(
        cfg: TcpConfig,
        flow: u32,
        dir: Dir,
        idle: (Time, Time),
        rng: Rng,
        stop: Time,
    ) -> Result<Self, String> {
        let cur = TcpSender::new(&cfg, flow, dir)?;
        Ok(RepeatSender {
            cfg,
            flow,
            dir,
            idle,
            rng,
            stop,
            transfer: 0,
            cur,
            next_open: None,
            completed: 0,
            done: FlowReport::default(),
        })
    }

    fn emit(&mut self, out: &mut Outbox, from: usize) {
        for p in &mut out[from..] {
            p.conn = self.transfer;
        }
    }

    fn after(&mut self, now: Time) {
        if self.next_open.is_none() && self.cur.completed().is_some() {
            self.completed += 1;
            let gap = self.rng.range_u64(self.idle.0, self.idle.1);
            self.next_open = Some(now + gap).filter(|&t| t < self.stop);
            if self.next_open.is_none() {
                self.next_open = Some(Time::MAX); // no further transfer
            }
        }
    }
}

impl Endpoint for RepeatSender {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        let from = out.len();
        self.cur.start(now, out);
        self.emit(out, from);
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if pkt.conn != self.transfer {
            return;
        }
        let from = out.len();
        self.cur.on_packet(pkt, now, out);
        self.emit(out, from);
        self.after(now);
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        if self.next_open.is_some_and(|t| t <= now) {
            let Ok(next) = TcpSender::new(&self.cfg, self.flow, self.dir) else {
                return;
            };
            let old = std::mem::replace(&mut self.cur, next);
            old.report(&mut self.done);
            self.transfer += 1;
            self.next_open = None;
            let from = out.len();
            self.cur.start(now, out);
            self.emit(out, from);
            return;
        }
        let from = out.len();
        self.cur.on_timer(now, out);
        self.emit(out, from);
        self.after(now);
    }

    fn next_timer(&self) -> Option<Time> {
        match (self.cur.next_timer(), self.next_open.filter(|&t| t < Time::MAX)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn report(&self, r: &mut FlowReport) {
        add(r, &self.done);
        self.cur.report(r);
    }

    fn cc_report(&self, r: &mut CcReport) {
        self.cur.cc_report(r);
    }
}

/// The receiving end: a fresh receiver for each transfer.
pub struct RepeatReceiver {
    cfg: TcpConfig,
    flow: u32,
    dir: Dir,
    transfer: u32,
    cur: TcpReceiver,
    done: FlowReport,
}

impl RepeatReceiver {
    pub fn new(cfg: TcpConfig, flow: u32, dir: Dir) -> Self {
        let cur = TcpReceiver::new(&cfg, flow, dir);
        RepeatReceiver {
            cfg,
            flow,
            dir,
            transfer: 0,
            cur,
            done: FlowReport::default(),
        }
    }
}

impl Endpoint for RepeatReceiver {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if pkt.conn < self.transfer {
            return;
        }
        if pkt.conn > self.transfer {
            let old = std::mem::replace(&mut self.cur, TcpReceiver::new(&self.cfg, self.flow, self.dir));
            old.report(&mut self.done);
            self.transfer = pkt.conn;
        }
        let from = out.len();
        self.cur.on_packet(pkt, now, out);
        for p in &mut out[from..] {
            p.conn = self.transfer;
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        let from = out.len();
        self.cur.on_timer(now, out);
        for p in &mut out[from..] {
            p.conn = self.transfer;
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.cur.next_timer()
    }

    fn report(&self, r: &mut FlowReport) {
        add(r, &self.done);
        self.cur.report(r);
    }
}

/// Adds the counters of closed transfers.
pub(crate) fn add(r: &mut FlowReport, d: &FlowReport) {
    r.packets_sent += d.packets_sent;
    r.bytes_sent += d.bytes_sent;
    r.bytes_delivered += d.bytes_delivered;
    r.packets_received += d.packets_received;
    r.retransmits += d.retransmits;
    r.rto_count += d.rto_count;
    r.fast_recoveries += d.fast_recoveries;
    r.tlp_probes += d.tlp_probes;
    r.spurious_rtos += d.spurious_rtos;
    r.ecn_reductions += d.ecn_reductions;
}
