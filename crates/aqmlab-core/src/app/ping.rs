//! Latency probes (like ping / irtt): the client sends a small packet every `interval`; the
//! server echoes it at once, stamping its receive time. The client records, per probe, the RTT
//! and both one-way delays (the simulator's clocks are perfect); a probe without a reply by the
//! end of the run is lost. The server keeps which probes reached it, so that a lost probe's
//! direction is known (irtt's `lost_dir`; a one-way stream's loss, as D-ITG measures it).

use crate::packet::{Dir, Kind, Packet};
use crate::record::rows::FlowReport;
use crate::transport::{Endpoint, Outbox};
use crate::units::Time;

/// One probe's fate, as the client saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeRecord {
    pub seq: u64,
    pub sent: Time,
    /// (rtt, owd_up, owd_down) when the reply came back.
    pub reply: Option<(Time, Time, Time)>,
}

pub struct PingClient {
    flow: u32,
    size: u32,
    interval: Time,
    stop: Time,
    next: Option<Time>,
    pub records: Vec<ProbeRecord>,
    replies: u64,
}

impl PingClient {
    pub fn new(flow: u32, size: u32, interval: Time, stop: Time) -> PingClient {
        PingClient {
            flow,
            size,
            interval,
            stop,
            next: None,
            records: Vec::new(),
            replies: 0,
        }
    }
}

impl Endpoint for PingClient {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        self.next = (now < self.stop).then_some(now);
        self.on_timer(now, out);
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, _out: &mut Outbox) {
        if let Some(r) = self.records.get_mut(pkt.seq as usize) {
            if r.reply.is_none() {
                r.reply = Some((now - r.sent, pkt.ts_ecr - r.sent, now - pkt.ts_ecr));
                self.replies += 1;
            }
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        while let Some(t) = self.next {
            if t > now {
                break;
            }
            let seq = self.records.len() as u64;
            self.records.push(ProbeRecord {
                seq,
                sent: now,
                reply: None,
            });
            out.push(Packet {
                flow: self.flow,
                size: self.size,
                kind: Kind::Probe,
                dir: Dir::Up,
                seq,
                ts_val: now,
                ..Packet::default()
            });
            let n = t + self.interval;
            self.next = (n < self.stop).then_some(n);
        }
    }

    fn next_timer(&self) -> Option<Time> {
        self.next
    }

    fn report(&self, r: &mut FlowReport) {
        r.packets_sent += self.records.len() as u64;
        r.bytes_sent += self.records.len() as u64 * self.size as u64;
        r.packets_received += self.replies;
    }
}

/// Echoes probes back to the client.
#[derive(Default)]
pub struct PingServer {
    echoed: u64,
    size: u64,
    /// Per probe number, whether the probe reached the server.
    reached: Vec<bool>,
}

impl PingServer {
    /// Whether probe `seq` reached the server.
    pub fn reached(&self, seq: u64) -> bool {
        self.reached.get(seq as usize).copied().unwrap_or(false)
    }
}

impl Endpoint for PingServer {
    fn start(&mut self, _now: Time, _out: &mut Outbox) {}
    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        self.echoed += 1;
        self.size += pkt.size as u64;
        let k = pkt.seq as usize;
        if self.reached.len() <= k {
            self.reached.resize(k + 1, false);
        }
        self.reached[k] = true;
        out.push(Packet {
            kind: Kind::ProbeReply,
            dir: Dir::Down,
            ts_ecr: now,
            ..*pkt
        });
    }
    fn on_timer(&mut self, _now: Time, _out: &mut Outbox) {}
    fn next_timer(&self) -> Option<Time> {
        None
    }
    fn report(&self, r: &mut FlowReport) {
        r.packets_received += self.echoed;
        r.packets_sent += self.echoed;
        r.bytes_sent += self.size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_knows_which_probes_reached_it() {
        // Probes 0 and 2 arrive, 1 is lost on the way up: the server echoes two and knows
        // that 1 never came (its loss is upstream; a probe that arrived but whose echo is lost
        // is lost downstream).
        let mut srv = PingServer::default();
        let mut out = vec![];
        for seq in [0u64, 2] {
            let p = Packet {
                kind: Kind::Probe,
                dir: Dir::Up,
                seq,
                size: 120,
                ..Packet::default()
            };
            srv.on_packet(&p, 10 + seq, &mut out);
        }
        assert_eq!(out.len(), 2);
        assert_eq!(
            (0..4).map(|k| srv.reached(k)).collect::<Vec<_>>(),
            vec![true, false, true, false]
        );
    }
}
