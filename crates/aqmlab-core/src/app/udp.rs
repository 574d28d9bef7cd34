//! UDP datagram sources and their sink. A source sends fixed-size datagrams at a rate, either
//! isochronously (`cbr`: the k-th packet leaves at start + floor(k * size * 8 / rate)) or as a
//! Poisson process (`poisson`: exponential gaps with the same mean), between `start` and `stop`.

use crate::packet::{Dir, Ecn, Kind, Packet};
use crate::record::rows::FlowReport;
use crate::rng::Rng;
use crate::transport::{Endpoint, Outbox};
use crate::units::{Time, SEC};

/// When a UDP source's packets leave: evenly spaced ("cbr") or as a Poisson process ("poisson").
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    Cbr,
    Poisson,
}

pub struct UdpSource {
    flow: u32,
    dir: Dir,
    size: u32,
    rate_bps: u64,
    arrivals: Arrivals,
    start: Time,
    stop: Time,
    ecn: Ecn,
    rng: Rng,
    sent: u64,
    next: Option<Time>,
    report: FlowReport,
}

impl UdpSource {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        dir: Dir,
        size: u32,
        rate_bps: u64,
        arrivals: Arrivals,
        stop: Time,
        ecn: Ecn,
        rng: Rng,
    ) -> UdpSource {
        UdpSource {
            flow,
            dir,
            size,
            rate_bps,
            arrivals,
            start: 0,
            stop,
            ecn,
            rng,
            sent: 0,
            next: None,
            report: FlowReport::default(),
        }
    }

    fn schedule_next(&mut self, now: Time) {
        let t = match self.arrivals {
            Arrivals::Cbr => {
                let bits = self.sent as u128 * self.size as u128 * 8 * SEC as u128;
                self.start + (bits / self.rate_bps as u128) as Time
            }
            Arrivals::Poisson => {
                let mean = self.size as f64 * 8.0 * SEC as f64 / self.rate_bps as f64;
                now + self.rng.exponential(mean).round() as Time
            }
        };
        self.next = (t < self.stop).then_some(t);
    }
}

impl Endpoint for UdpSource {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.start = now;
        self.next = (now < self.stop).then_some(now);
        self.on_timer(now, out);
    }

    fn on_packet(&mut self, _pkt: &Packet, _now: Time, _out: &mut Outbox) {}

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(t) = self.next {
            if t > now {
                break;
            }
            out.push(Packet {
                flow: self.flow,
                size: self.size,
                kind: Kind::Udp,
                dir: self.dir,
                ecn: self.ecn,
                seq: self.sent,
                payload: self.size,
                ts_val: now,
                ..Packet::default()
            });
            self.sent += 1;
            self.report.packets_sent += 1;
            self.report.bytes_sent += self.size as u64;
            self.schedule_next(now);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.next
    }

    fn report(&self, r: &mut FlowReport) {
        r.packets_sent += self.report.packets_sent;
        r.bytes_sent += self.report.bytes_sent;
    }
}

/// Counts what arrives.
#[derive(Default)]
pub struct UdpSink {
    packets: u64,
    bytes: u64,
}

impl Endpoint for UdpSink {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}
    fn on_packet(&mut self, pkt: &Packet, _now: Time, _out: &mut Outbox) {
        self.packets += 1;
        self.bytes += pkt.payload as u64;
    }
    fn on_timer(&mut self, _now: Time, _out: &mut Outbox) {}
    fn next_timer(&self) -> Option<Time> {
        None
    }
    fn report(&self, r: &mut FlowReport) {
        r.packets_received += self.packets;
        r.bytes_delivered += self.bytes;
    }
}
