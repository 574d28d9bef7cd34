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
//!   was requested and not yet granted, at most [`MacConfig::grant_cap`].
//! * The Max Sustained Rate is enforced one of two ways ([`RateShaper`], the key
//!   `rate_shaper`): `per_map` (the default) caps each MAP's grant at `max_rate` x `map` bytes,
//!   no burst above it; `token_bucket` shapes the modem's requests by the service flow's token
//!   bucket (MULPI's Max Sustained Traffic Rate, Maximum Traffic Burst and Peak Traffic Rate, as
//!   CableLabs' ns-2 DOCSIS link, docsislink.cc `DocsisLink::makeRequest`, and ns-3 DOCSIS
//!   model, cm-net-device.cc `CmNetDevice::ShapeRequest` and `UpdateTokenBucket`, apply it),
//!   and the CMTS grants up to the channel's capacity of a MAP. With the token bucket, a modem
//!   without a grant in a MAP requests, at the MAP's start, what it holds beyond what it already
//!   asked for (ns-2's `handleMapIntTimer`: a request at each MAP without a grant), so that a
//!   request cut short by the bucket is followed by the next as tokens come.
//! * In a granted MAP packets leave while its grant lasts; a packet is taken whole and counts
//!   after it is taken, and what it overruns is taken from the next grant, so the long-run rate
//!   is the granted one exactly.

use crate::queue::ShaperState;
use crate::units::{Time, SEC};

/// How the MAC holds the modem to its Max Sustained Rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateShaper {
    /// Each MAP grants at most the rate's share of one MAP (no burst above it).
    PerMap,
    /// MULPI's token bucket on the modem's requests.
    TokenBucket(Bucket),
}

/// A service flow's token bucket (MULPI's QoS parameters of an upstream service flow).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// The Maximum Traffic Burst (bytes): the bucket's depth, full at the start.
    pub max_burst: u64,
    /// The Peak Traffic Rate (bit/s; 0 = none): a request asks at most this rate's bytes since
    /// the previous one.
    pub peak_rate: u64,
}

/// The MAC's configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MacConfig {
    /// The MAP interval.
    pub map: Time,
    /// From a request's transmission to the earliest start of a MAP that can grant it.
    pub rg_delay: Time,
    /// The Max Sustained Rate (bit/s).
    pub max_rate: u64,
    /// The upstream channel's rate (bit/s), at which a grant's packets leave.
    pub channel_rate: u64,
    pub shaper: RateShaper,
}

impl MacConfig {
    /// The most one MAP grants (bytes): the Max Sustained Rate's share of a MAP (`per_map`) or
    /// the channel's (`token_bucket`, whose requests carry the rate).
    pub fn grant_cap(&self) -> u64 {
        let rate = match self.shaper {
            RateShaper::PerMap => self.max_rate,
            RateShaper::TokenBucket(_) => self.channel_rate,
        };
        (rate as u128 * self.map as u128 / (8 * SEC as u128)) as u64
    }

    /// The start of the first MAP at or after `t`.
    pub fn map_at_or_after(&self, t: Time) -> Time {
        t.div_ceil(self.map) * self.map
    }
}

/// The state of a token bucket. Tokens are kept in bit-nanoseconds (bytes x 8 x 10^9), so that
/// the Max Sustained Rate's credit is exact however often it is added (ns-3 truncates each
/// update's increment to whole bytes).
struct Tokens {
    bucket: Bucket,
    max_rate: u64,
    /// Max Sustained Rate tokens, bytes x 8 x SEC.
    msr: u128,
    /// The last request's time.
    last: Time,
}

/// Bytes to bit-nanoseconds.
const UNIT: u128 = 8 * SEC as u128;

impl Tokens {
    fn new(bucket: Bucket, max_rate: u64) -> Tokens {
        Tokens {
            bucket,
            max_rate,
            msr: bucket.max_burst as u128 * UNIT,
            last: 0,
        }
    }

    /// The Max Sustained Rate tokens at `now` (bytes x 8 x SEC), the bucket refilled to then.
    fn msr_at(&self, now: Time) -> u128 {
        let credit = (now - self.last) as u128 * self.max_rate as u128;
        (self.msr + credit).min(self.bucket.max_burst as u128 * UNIT)
    }

    /// A request for `bytes` at `now` cut to the tokens (ns-3 `ShapeRequest`): at most the
    /// Max Sustained Rate tokens, refilled since the last request and capped at the Maximum
    /// Traffic Burst, and, with a Peak Traffic Rate, at most its bytes since the last request;
    /// the Max Sustained Rate tokens pay for what is asked.
    fn shape(&mut self, bytes: u64, now: Time) -> u64 {
        let msr = self.msr_at(now);
        let mut asked = (bytes as u128).min(msr / UNIT);
        if self.bucket.peak_rate > 0 {
            let peak = (now - self.last) as u128 * self.bucket.peak_rate as u128 / UNIT;
            asked = asked.min(peak);
        }
        self.msr = msr - asked * UNIT;
        self.last = now;
        asked as u64
    }
}

/// The upstream MAC state of one modem.
pub struct Mac {
    cfg: MacConfig,
    /// The token bucket (`token_bucket`).
    tokens: Option<Tokens>,
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
            tokens: match cfg.shaper {
                RateShaper::PerMap => None,
                RateShaper::TokenBucket(b) => Some(Tokens::new(b, cfg.max_rate)),
            },
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

    /// The token bucket's state at `now`, if the MAC shapes by one (what RFC 8034's
    /// DOCSIS-PIE estimates its delay from).
    pub fn shaper_state(&self, now: Time) -> Option<ShaperState> {
        self.tokens.as_ref().map(|t| ShaperState {
            msr_tokens: (t.msr_at(now) / UNIT) as u64,
            msr_tokens_last_request: (t.msr / UNIT) as u64,
            max_rate: t.max_rate,
            peak_rate: t.bucket.peak_rate,
        })
    }

    /// Sends a request at `t` for `bytes`, cut by the token bucket if there is one; whether
    /// anything was asked.
    fn request(&mut self, t: Time, bytes: u64) -> bool {
        let bytes = match self.tokens.as_mut() {
            Some(tokens) => tokens.shape(bytes, t),
            None => bytes,
        };
        if bytes > 0 {
            self.requests.push_back((t, bytes));
            self.outstanding = true;
        }
        bytes > 0
    }

    /// Bytes asked for and not yet sent: owed by the CMTS, on their way to it, or left of the
    /// current grant.
    fn asked(&self) -> u64 {
        self.owed + self.requests.iter().map(|r| r.1).sum::<u64>() + self.left.max(0) as u64
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
        // per_map: a contention request when nothing is outstanding, for the whole backlog;
        // token_bucket: a request in each MAP without a grant for what was not yet asked.
        let ask = match self.tokens {
            None if !self.outstanding => backlog,
            None => 0,
            Some(_) => backlog.saturating_sub(self.asked()),
        };
        if ask > 0 && self.left <= 0 {
            // A contention request at the next MAP boundary (now, if one starts now).
            let t = self.cfg.map_at_or_after(now);
            if t > now {
                return Err(t);
            }
            if self.request(t, ask) || self.tokens.is_none() {
                self.contention += 1;
            }
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
        let asked = self.asked();
        if self.left == 0 && behind > asked && self.request(now, behind - asked) {
            self.piggyback += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{tx_time, MS, US};

    fn config(shaper: RateShaper) -> MacConfig {
        MacConfig {
            map: 2 * MS,
            rg_delay: 4 * MS,
            max_rate: 20_000_000,
            channel_rate: 122_880_000,
            shaper,
        }
    }

    fn mac() -> Mac {
        Mac::new(config(RateShaper::PerMap))
    }

    fn bucket(max_burst: u64, peak_rate: u64) -> RateShaper {
        RateShaper::TokenBucket(Bucket { max_burst, peak_rate })
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

    /// The token bucket by hand, 20 Mb/s (2500 B a millisecond), 3044 B deep, full at 0: a
    /// request takes what is there, the bucket refills at the rate and never above its depth.
    #[test]
    fn token_bucket_vectors() {
        let b = Bucket {
            max_burst: 3044,
            peak_rate: 0,
        };
        let mut t = Tokens::new(b, 20_000_000);
        assert_eq!(t.shape(10_000, 0), 3044);
        assert_eq!(t.shape(10_000, MS), 2500);
        // 1250 there, 1150 left
        assert_eq!(t.shape(100, 1500 * US), 100);
        // 1150 + 2500 capped at 3044
        assert_eq!(t.shape(5000, 2500 * US), 3044);
        // A Peak Traffic Rate of 40 Mb/s (5000 B a ms) in a deep bucket: a request asks at most
        // the peak's bytes since the previous one (none at 0, where there was none before).
        let b = Bucket {
            max_burst: 100_000,
            peak_rate: 40_000_000,
        };
        let mut t = Tokens::new(b, 20_000_000);
        assert_eq!(t.shape(100_000, 0), 0);
        assert_eq!(t.shape(100_000, MS), 5000);
        assert_eq!(t.shape(100_000, 1200 * US), 1000);
        // 100000 - 5000 + 500 - 1000 left
        assert_eq!((t.msr_at(1200 * US) / UNIT) as u64, 94_500);
        // Credit is exact: 1 Mb/s is 0.125 B a microsecond; a request every microsecond for
        // 8 ms from an empty bucket gets 8 ms x 125 B/ms = 1000 B in all (whole bytes each).
        let b = Bucket {
            max_burst: 10_000,
            peak_rate: 0,
        };
        let mut t = Tokens::new(b, 1_000_000);
        assert_eq!(t.shape(10_000, 0), 10_000);
        let got: u64 = (1..=8000).map(|i| t.shape(10_000, i * US)).sum();
        assert_eq!(got, 1000);
    }

    /// What DOCSIS-PIE is given, by hand (20 Mb/s: 2500 B a millisecond; 3044 B deep): a
    /// request at 0 takes the whole bucket; 1 ms later it holds 2500 B, while the count the
    /// request left is 0; at 2 ms it is full again (5000 capped at 3044); a request of 1000 B
    /// leaves 2044 B, and 0.2 ms later there are 2044 + 500 = 2544 B.
    #[test]
    fn shaper_state_now_and_as_the_last_request_left_it() {
        let mut m = Mac::new(config(bucket(3044, 0)));
        assert!(m.request(0, 10_000));
        let s = m.shaper_state(MS).expect("a bucket");
        assert_eq!((s.msr_tokens, s.msr_tokens_last_request), (2500, 0));
        assert_eq!(m.shaper_state(2 * MS).map(|s| s.msr_tokens), Some(3044));
        assert!(m.request(2 * MS, 1000));
        let s = m.shaper_state(2200 * US).expect("a bucket");
        assert_eq!((s.msr_tokens, s.msr_tokens_last_request), (2544, 2044));
    }

    /// Sends `packets` of 1500 B queued at 0.3 ms through `m` (the channel's 122.88 Mb/s, 97657
    /// ns a packet, between them); (MAP start, packets that left in it), for each MAP that
    /// carried some.
    fn bursts(m: &mut Mac, packets: u64) -> Vec<(Time, u64)> {
        let tx = tx_time(1500, 122_880_000);
        let (mut now, mut backlog) = (300 * US, packets * 1500);
        let mut per_map: Vec<(Time, u64)> = Vec::new();
        while backlog > 0 {
            match m.may_send(backlog, now) {
                Ok(()) => {
                    backlog -= 1500;
                    m.sent(1500, backlog, now);
                    let start = now / (2 * MS) * (2 * MS);
                    match per_map.last_mut() {
                        Some((s, n)) if *s == start => *n += 1,
                        _ => per_map.push((start, 1)),
                    }
                    now += tx;
                }
                Err(t) => now = t,
            }
        }
        per_map
    }

    /// 40 packets (60000 B) at once into a full 30000-byte bucket at 20 Mb/s (2.5 B a us), by
    /// hand: the contention request at 2 ms takes the bucket, 30000 B; the MAP of 4 ms has no
    /// grant yet, so the modem asks again, for the 5000 B gained since. At 6 ms the first is
    /// granted whole (the channel carries 30720 B a MAP): 20 packets, the last leaving 19 x
    /// 97657 ns after 6 ms, at 7.855483 ms, where it piggybacks a request for the 9638 B gained
    /// since 4 ms. At 8 ms the 5000 B of 4 ms: 4 packets (1000 B overrun into the next grant). At 10
    /// ms no request has matured (7.855 + 4 > 10): nothing leaves. At 12 ms the 9638 B less the
    /// 1000 overrun: 6 packets. So the bucket lets a burst through at the channel's rate, then
    /// holds the modem to its rate. Without it (`per_map`) each MAP grants 5000 B from 6 ms: 4
    /// packets (1000 B overrun), 3 (500 B), 3, 4.
    #[test]
    fn a_full_bucket_lets_a_burst_through_then_the_rate() {
        let mut m = Mac::new(config(bucket(30_000, 0)));
        let b = bursts(&mut m, 40);
        assert_eq!(&b[..3], &[(6 * MS, 20), (8 * MS, 4), (12 * MS, 6)]);
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 40);
        let mut m = mac();
        let b = bursts(&mut m, 40);
        let want = [(6 * MS, 4), (8 * MS, 3), (10 * MS, 3), (12 * MS, 4)];
        assert_eq!(&b[..4], &want);
    }

    /// Bytes a modem holding `backlog` bytes sends in 10 s, 1500-byte packets leaving at the
    /// channel's 122.88 Mb/s whenever its MAC lets them; the MAC and the time after.
    fn saturated(mut m: Mac, backlog: u64) -> (u64, Mac, Time) {
        let tx = tx_time(1500, 122_880_000);
        let (mut now, mut sent) = (0, 0u64);
        while now < 10 * SEC {
            match m.may_send(backlog, now) {
                Ok(()) => {
                    m.sent(1500, backlog - 1500, now);
                    sent += 1500;
                    now += tx;
                }
                Err(t) => now = t,
            }
        }
        (sent, m, now)
    }

    /// A bucket shallower than a MAP's worth of the rate caps every request at its depth, and a
    /// busy modem asks once a MAP (its burst's piggyback): 3044 B every 2 ms, 12.176 Mb/s, not
    /// 20, whatever the backlog (the ns-2 and ns-3 models' request shaping does the same).
    #[test]
    fn a_shallow_bucket_holds_a_busy_modem_below_the_rate() {
        let (sent, ..) = saturated(Mac::new(config(bucket(3044, 0))), 1_000_000);
        let rate = sent as f64 * 8.0 / 10.0;
        assert!((rate / 12_176_000.0 - 1.0).abs() < 0.01, "{rate}");
    }

    /// A saturating modem with a 250000-byte bucket (100 ms of 20 Mb/s) sends no more than the
    /// bucket's bound, its depth plus the rate's bytes, and within 1 % of it over 10 s.
    #[test]
    fn a_saturating_modem_stays_within_the_token_bucket_bound() {
        let (sent, m, now) = saturated(Mac::new(config(bucket(250_000, 0))), 100_000_000);
        let bound = 250_000 + 20_000_000 / 8 * 10;
        // a packet taken whole may overrun the last grant by less than one packet
        assert!(sent <= bound + 1500, "{sent} > {bound}");
        assert!(sent as f64 > 0.99 * bound as f64, "{sent}");
        assert_eq!(m.shaper_state(now).map(|s| s.max_rate), Some(20_000_000));
    }
}
