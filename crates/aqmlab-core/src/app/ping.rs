//! Latency probes (like ping / irtt): the client sends a small packet every `interval`, or (like
//! netperf's UDP_RR) the next one when a reply arrives; the server echoes each at once, stamping
//! its receive time. The client records, per probe, the RTT
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

/// When a probe client sends (the `ping` and `voip` key `pattern`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// One probe every `interval`, whatever comes back (ping, irtt).
    Interval,
    /// Request and response, as netperf's UDP_RR loops (nettest_omni.c `send_omni_inner`: a
    /// send, then a receive that any datagram ends): the next probe leaves when a reply arrives,
    /// whichever probe it answers, or when `timeout` has passed since the last one left with no
    /// reply (netperf's `-e` receive timeout). Without a timeout a lost probe ends the stream.
    Rr,
}

/// What sets the client's next send.
#[derive(Clone, Copy, Debug)]
enum Pace {
    Interval(Time),
    Rr { timeout: Option<Time> },
}

pub struct PingClient {
    flow: u32,
    size: u32,
    pace: Pace,
    stop: Time,
    /// The next send (`Interval`) or the running receive timeout (`Rr`).
    next: Option<Time>,
    pub records: Vec<ProbeRecord>,
    replies: u64,
}

impl PingClient {
    /// A client sending `size`-byte probes until `stop`: with `Pattern::Interval` every
    /// `interval`; with `Pattern::Rr` on each reply, or `timeout` after a send without one
    /// (`None`: no timeout).
    pub fn new(
        flow: u32,
        size: u32,
        pattern: Pattern,
        interval: Time,
        timeout: Option<Time>,
        stop: Time,
    ) -> PingClient {
        let pace = match pattern {
            Pattern::Interval => Pace::Interval(interval),
            Pattern::Rr => Pace::Rr { timeout },
        };
        PingClient {
            flow,
            size,
            pace,
            stop,
            next: None,
            records: Vec::new(),
            replies: 0,
        }
    }

    /// Sends probe number `records.len()` at `now`.
    fn send(&mut self, now: Time, out: &mut Outbox) {
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
    }

    /// A request/response client's next request, at `now`, with its receive timeout.
    fn request(&mut self, now: Time, timeout: Option<Time>, out: &mut Outbox) {
        self.next = None;
        if now < self.stop {
            self.send(now, out);
            self.next = timeout.map(|t| now + t);
        }
    }
}

impl Endpoint for PingClient {
    fn start(&mut self, now: Time, out: &mut Outbox) {
        match self.pace {
            Pace::Interval(_) => {
                self.next = (now < self.stop).then_some(now);
                self.on_timer(now, out);
            }
            Pace::Rr { timeout } => self.request(now, timeout, out),
        }
    }

    fn on_packet(&mut self, pkt: &Packet, now: Time, out: &mut Outbox) {
        if let Some(r) = self.records.get_mut(pkt.seq as usize) {
            if r.reply.is_none() {
                r.reply = Some((now - r.sent, pkt.ts_ecr - r.sent, now - pkt.ts_ecr));
                self.replies += 1;
            }
        }
        if let Pace::Rr { timeout } = self.pace {
            // Any datagram ends netperf's receive, a late reply to an earlier request too.
            self.request(now, timeout, out);
        }
    }

    fn on_timer(&mut self, now: Time, out: &mut Outbox) {
        match self.pace {
            Pace::Interval(interval) => {
                while let Some(t) = self.next {
                    if t > now {
                        break;
                    }
                    self.send(now, out);
                    let n = t + interval;
                    self.next = (n < self.stop).then_some(n);
                }
            }
            Pace::Rr { timeout } => {
                if self.next.is_some_and(|t| t <= now) {
                    self.request(now, timeout, out);
                }
            }
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
    use crate::units::{MS, SEC};

    fn reply_to(seq: u64, echoed: Time) -> Packet {
        Packet {
            kind: Kind::ProbeReply,
            dir: Dir::Down,
            seq,
            ts_ecr: echoed,
            ..Packet::default()
        }
    }

    fn seqs(out: &[Packet]) -> Vec<u64> {
        out.iter().map(|p| p.seq).collect()
    }

    #[test]
    fn a_request_response_client_sends_on_each_reply_and_on_its_timeout() {
        // netperf's UDP_RR loop with `-e 2`: a request, then a receive that the first datagram
        // or the 2 s timeout ends, then the next request at once.
        let mut c = PingClient::new(1, 29, Pattern::Rr, 200 * MS, Some(2 * SEC), 60 * SEC);
        let mut out = vec![];
        c.start(0, &mut out);
        assert_eq!((seqs(&out), c.next_timer()), (vec![0], Some(2 * SEC)));
        c.on_packet(&reply_to(0, 25 * MS), 50 * MS, &mut out);
        assert_eq!(
            (seqs(&out), c.next_timer()),
            (vec![0, 1], Some(50 * MS + 2 * SEC))
        );
        // Probe 1 is late: the timeout sends probe 2, and probe 1's reply, when it comes,
        // ends the wait for probe 2 (netperf cannot tell them apart) and sends probe 3.
        c.on_timer(50 * MS + 2 * SEC, &mut out);
        assert_eq!(seqs(&out), vec![0, 1, 2]);
        c.on_packet(&reply_to(1, SEC), 2100 * MS, &mut out);
        assert_eq!((seqs(&out), c.next_timer()), (vec![0, 1, 2, 3], Some(4100 * MS)));
        assert_eq!(c.records[1].reply, Some((2050 * MS, 950 * MS, 1100 * MS)));
        assert_eq!(c.records[2].reply, None);
    }

    #[test]
    fn without_a_timeout_a_lost_request_ends_the_stream() {
        // netperf before its `-e` option (2.6.0): the receive waits for ever.
        let mut c = PingClient::new(1, 29, Pattern::Rr, 200 * MS, None, 60 * SEC);
        let mut out = vec![];
        c.start(0, &mut out);
        assert_eq!(c.next_timer(), None);
        c.on_timer(30 * SEC, &mut out);
        assert_eq!(seqs(&out), vec![0]);
    }

    #[test]
    fn no_request_leaves_at_or_after_the_stop() {
        let mut c = PingClient::new(1, 29, Pattern::Rr, 200 * MS, Some(2 * SEC), SEC);
        let mut out = vec![];
        c.start(0, &mut out);
        c.on_packet(&reply_to(0, 500 * MS), SEC, &mut out);
        assert_eq!((seqs(&out), c.next_timer()), (vec![0], None));
    }

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
