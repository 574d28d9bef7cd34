//! The DOCSIS upstream MAC's request-grant cycle (DOCSIS 3.1 MULPI spec, "Upstream Bandwidth
//! Allocation": MAPs, contention requests, piggybacked requests, grants), as a gate on a hop's
//! dequeue like netem's slots (`slot.rs`): a hop's `docsis` (docs/access-links.md, "Cable
//! upstream (DOCSIS)"), whose `rate` is the Max Sustained Rate.
//!
//! The model, each choice named:
//! * Time is cut into MAP intervals of `map` (2 ms) starting at 0; each MAP carries the grants
//!   the CMTS made for it.
//! * A modem with no request outstanding and data to send makes a contention request at the
//!   start of the next MAP (its contention opportunity; contention is never lost here), asking
//!   for its whole backlog. While it is granted, each burst it sends piggybacks a request for
//!   what is queued behind it, so a busy modem needs no new contention request.
//! * The CMTS grants a MAP from the requests it has `rg_delay` (the request-grant delay: the
//!   request's trip, the scheduler's work and the MAP's advance) before the MAP starts: what
//!   was requested and not yet granted, at most `max_rate` x `map` bytes (the Max Sustained
//!   Rate's share of one MAP; no token-bucket burst beyond it).
//! * In a granted MAP packets leave while its grant lasts; a packet is taken whole and counts
//!   after it is taken, and what it overruns is taken from the next grant, so the long-run rate
//!   is the granted one exactly.

use crate::units::{Time, SEC};

/// The MAC's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacConfig {
    /// The MAP interval.
    pub map: Time,
    /// From a request's transmission to the earliest start of a MAP that can grant it.
    pub rg_delay: Time,
    /// The Max Sustained Rate (bit/s), which bounds each MAP's grant.
    pub max_rate: u64,
}

impl MacConfig {
    /// The most one MAP grants (bytes).
    pub fn grant_cap(&self) -> u64 {
        (self.max_rate as u128 * self.map as u128 / (8 * SEC as u128)) as u64
    }

    /// The start of the first MAP at or after `t`.
    pub fn map_at_or_after(&self, t: Time) -> Time {
        t.div_ceil(self.map) * self.map
    }
}

/// The upstream MAC state of one modem.
pub struct Mac {
    cfg: MacConfig,
    /// Requests sent (time, bytes), oldest first, not yet seen by the CMTS's scheduler.
    requests: std::collections::VecDeque<(Time, u64)>,
    /// Bytes requested and known to the CMTS, not yet granted.
    owed: u64,
    /// Whether a request is outstanding (sent and not fully granted).
    outstanding: bool,
    /// The MAP whose grant is current (its start), and the bytes left of it (negative: overrun).
    map_start: Option<Time>,
    left: i64,
    /// Bytes overrun into the next grant.
    debt: u64,
    /// The MAP start the hop's wake-up is set for, if any.
    pub armed: Option<Time>,
    /// Counters: contention requests, piggybacked requests, MAPs that granted something.
    pub contention: u64,
    pub piggyback: u64,
    pub grants: u64,
}

impl Mac {
    pub fn new(cfg: MacConfig) -> Mac {
        Mac {
            cfg,
            requests: Default::default(),
            owed: 0,
            outstanding: false,
            map_start: None,
            left: 0,
            debt: 0,
            armed: None,
            contention: 0,
            piggyback: 0,
            grants: 0,
        }
    }

    fn request(&mut self, t: Time, bytes: u64) {
        if bytes > 0 {
            self.requests.push_back((t, bytes));
            self.outstanding = true;
        }
    }

    /// The CMTS builds the grant of the MAP starting at `start`.
    fn grant(&mut self, start: Time) {
        while let Some(&(t, b)) = self.requests.front() {
            if t + self.cfg.rg_delay > start {
                break;
            }
            self.requests.pop_front();
            self.owed += b;
        }
        let g = self.owed.min(self.cfg.grant_cap());
        self.owed -= g;
        let paid = g.min(self.debt);
        self.debt -= paid;
        self.left = (g - paid) as i64;
        self.map_start = Some(start);
        if g > 0 {
            self.grants += 1;
        }
        if self.owed == 0 && self.requests.is_empty() {
            self.outstanding = false;
        }
    }

    /// Whether a packet may leave at `now` with `backlog` bytes queued (it included); `Err`
    /// holds the time to look again (a MAP's start).
    /// The current MAP's grant is built first, so that what is left of an earlier MAP's grant
    /// is never taken for one (a grant lasts its MAP only); a contention request made at the
    /// MAP's start is too late for it (the request-grant delay is at least a MAP).
    pub fn may_send(&mut self, backlog: u64, now: Time) -> Result<(), Time> {
        let current = now / self.cfg.map * self.cfg.map;
        if self.map_start != Some(current) {
            self.grant(current);
        }
        if !self.outstanding && self.left <= 0 {
            // A contention request at the next MAP boundary (now, if one starts now).
            let t = self.cfg.map_at_or_after(now);
            if t > now {
                return Err(t);
            }
            self.contention += 1;
            self.request(t, backlog);
        }
        if self.left > 0 {
            Ok(())
        } else {
            Err(current + self.cfg.map)
        }
    }

    /// A packet of `bytes` left at `now`; `behind` bytes remain queued.
    pub fn sent(&mut self, bytes: u32, behind: u64, now: Time) {
        self.left -= bytes as i64;
        if self.left < 0 {
            self.debt += (-self.left) as u64;
            self.left = 0;
        }
        // Piggyback: the burst asks for what is queued behind it, less what is already owed
        // or on its way (requested, not granted).
        let asked = self.owed + self.requests.iter().map(|r| r.1).sum::<u64>() + self.left as u64;
        if self.left == 0 && behind > asked {
            self.piggyback += 1;
            self.request(now, behind - asked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{tx_time, MS, US};

    fn mac() -> Mac {
        Mac::new(MacConfig {
            map: 2 * MS,
            rg_delay: 4 * MS,
            max_rate: 20_000_000,
        })
    }

    /// An idle modem, one packet at 0.3 ms, MAPs every 2 ms, request-grant delay 4 ms: the
    /// contention request goes at the next MAP start (2 ms), the CMTS can grant it in the MAP
    /// starting at 2 + 4 = 6 ms: an access delay of 5.7 ms.
    #[test]
    fn idle_access_delay_is_the_map_arithmetic() {
        let mut m = mac();
        let arrival = 300 * US;
        assert_eq!(m.may_send(1500, arrival), Err(2 * MS));
        assert_eq!(m.may_send(1500, 2 * MS), Err(4 * MS));
        assert_eq!(m.contention, 1);
        assert_eq!(m.may_send(1500, 4 * MS), Err(6 * MS));
        assert_eq!(m.may_send(1500, 6 * MS), Ok(()));
        m.sent(1500, 0, 6 * MS);
        assert_eq!(6 * MS - arrival, 5_700 * US);
        assert_eq!((m.grants, m.piggyback), (1, 0));
    }

    /// A saturating sender on a 20 Mb/s Max Sustained Rate: 5000 B per 2 ms MAP (20e6 x 0.002 /
    /// 8), piggybacked requests keep every MAP granted; over 10 s it gets 20 Mb/s within 1 %.
    #[test]
    fn saturating_flow_gets_the_max_rate() {
        let mut m = mac();
        assert_eq!(m.cfg.grant_cap(), 5000);
        // The hop's PHY serialises at 100 Mb/s: 120 us per 1500-byte packet.
        let tx = tx_time(1500, 100_000_000);
        let mut now = 0;
        let mut sent = 0u64;
        let end = 10 * SEC;
        let backlog = 1_000_000;
        while now < end {
            match m.may_send(backlog, now) {
                Ok(()) => {
                    m.sent(1500, backlog - 1500, now);
                    sent += 1500;
                    now += tx;
                }
                Err(t) => now = t,
            }
        }
        let rate = sent as f64 * 8.0 / 10.0;
        assert!((rate / 20e6 - 1.0).abs() < 0.01, "{rate}");
        assert_eq!(m.contention, 1);
        assert!(m.piggyback > 0);
    }
}
