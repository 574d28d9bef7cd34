//! A transmitter's radio link to one destination: its channel (the frame error rate of each
//! MCS) and its rate control (which MCS the next aggregate uses).
//!
//! - Channel: a fixed frame error rate, or a received signal strength (dBm) from which each
//!   MCS's error rate follows: the standard's minimum sensitivity of the MCS (IEEE 802.11-2012
//!   Table 20-22, where a 4096-octet PSDU is lost with probability 0.1; 40 MHz needs 3 dB more)
//!   and a logistic waterfall around it, `slope` nepers of the loss odds per dB (an assumption:
//!   a coded OFDM link goes from 10 % to about 0.1 % loss within a few dB). A subframe of
//!   `len` bytes is lost with 1 - (1 - PER_4096)^(len / 4096).
//! - Rate control: a fixed MCS; Minstrel HT as Linux's mac80211 ran it on ath9k
//!   (net/mac80211/rc80211_minstrel_ht.c, Linux 3.14); or iwlwifi's rate scaling as the DVM
//!   firmware's driver ran it (drivers/net/wireless/iwlwifi/dvm/rs.c, Linux 3.14), each over
//!   the MCS of one channel width and guard interval (no group changes).

use super::phy::Phy;
use crate::rng::Rng;
use crate::units::{Time, MS};

/// Minimum input sensitivity per MCS of one stream at 20 MHz, dBm (IEEE 802.11-2012 Table
/// 20-22): a 4096-octet PSDU is lost with probability 0.1 there. More streams use the same.
const SENSITIVITY_20: [f64; 8] = [-82.0, -79.0, -77.0, -74.0, -70.0, -66.0, -65.0, -64.0];
/// The PSDU length of the sensitivity's 10 % loss.
const SENSITIVITY_BYTES: f64 = 4096.0;

/// The loss of subframes to or from one destination.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Channel {
    /// The same frame error rate at every MCS and length.
    Fixed(f64),
    /// A received signal strength (dBm) and the waterfall's slope (per dB).
    Signal { rssi: f64, slope: f64 },
}

impl Channel {
    /// The probability that a subframe of `len` bytes sent with `phy` is lost.
    pub fn loss(&self, phy: &Phy, len: u32) -> f64 {
        match *self {
            Channel::Fixed(fer) => fer,
            Channel::Signal { rssi, slope } => {
                let widen = if phy.width40 { 3.0 } else { 0.0 };
                let margin = rssi - (SENSITIVITY_20[phy.mcs as usize % 8] + widen);
                let per = 1.0 / (1.0 + 9.0 * (slope * margin).exp());
                1.0 - (1.0 - per).powf(len as f64 / SENSITIVITY_BYTES)
            }
        }
    }
}

/// The loss of each subframe of one aggregate (`Channel::loss` at its PHY), computed once for
/// a run of subframes of the same length (an `exp` and a `powf` each time otherwise).
pub struct AggregateLoss {
    channel: Channel,
    phy: Phy,
    last: Option<(u32, f64)>,
}

impl AggregateLoss {
    pub fn new(channel: Channel, phy: Phy) -> AggregateLoss {
        AggregateLoss {
            channel,
            phy,
            last: None,
        }
    }

    /// The probability that a subframe of `len` bytes is lost.
    #[inline]
    pub fn of(&mut self, len: u32) -> f64 {
        match self.last {
            Some((n, loss)) if n == len => loss,
            _ => {
                let loss = self.channel.loss(&self.phy, len);
                self.last = Some((len, loss));
                loss
            }
        }
    }
}

/// How a transmitter picks the MCS of each aggregate to one destination.
pub enum RateControl {
    Fixed,
    Minstrel(Box<Minstrel>),
    Iwl(Box<IwlRs>),
}

impl RateControl {
    pub const NAMES: [&'static str; 3] = ["fixed", "minstrel_ht", "iwlwifi"];

    /// The rate control named `name` over MCS 0..=`max_mcs` of `base`'s width and guard.
    pub fn new(name: &str, base: Phy, max_mcs: u8, rng: &mut Rng) -> Option<RateControl> {
        match name {
            "fixed" => Some(RateControl::Fixed),
            "minstrel_ht" => Some(RateControl::Minstrel(Box::new(Minstrel::new(base, max_mcs, rng)))),
            "iwlwifi" => Some(RateControl::Iwl(Box::new(IwlRs::new(base, max_mcs)))),
            _ => None,
        }
    }
}

/// One destination as a transmitter sees it: the PHY (its MCS when fixed), the channel and
/// the rate control.
pub struct Radio {
    pub phy: Phy,
    pub channel: Channel,
    pub rc: RateControl,
}

impl Radio {
    pub fn fixed(phy: Phy, fer: f64) -> Radio {
        Radio {
            phy,
            channel: Channel::Fixed(fer),
            rc: RateControl::Fixed,
        }
    }

    /// The PHY of the next aggregate.
    pub fn pick(&mut self) -> Phy {
        let mcs = match &mut self.rc {
            RateControl::Fixed => return self.phy,
            RateControl::Minstrel(m) => m.pick(),
            RateControl::Iwl(r) => r.pick(),
        };
        Phy { mcs, ..self.phy }
    }

    /// An aggregate of `sent` subframes at `mcs` got `acked` of them through, at `now`.
    pub fn report(&mut self, mcs: u8, sent: u32, acked: u32, now: Time) {
        match &mut self.rc {
            RateControl::Fixed => {}
            RateControl::Minstrel(m) => m.report(mcs, sent, acked, now),
            RateControl::Iwl(r) => r.report(mcs, sent, acked, now),
        }
    }

    /// The rate control's expected throughput: the PHY rate of the MCS it now prefers (what
    /// mac80211 asks the rate control for, `sta_get_expected_throughput`; minstrel_ht's own
    /// estimate also discounts losses and per-frame overhead).
    pub fn expected_rate(&self) -> u64 {
        Phy {
            mcs: self.best(),
            ..self.phy
        }
        .rate_bps()
    }

    /// The MCS the rate control now prefers (its throughput-best), for diagnostics.
    pub fn best(&self) -> u8 {
        match &self.rc {
            RateControl::Fixed => self.phy.mcs,
            RateControl::Minstrel(m) => m.max_tp as u8,
            RateControl::Iwl(r) => r.cur as u8,
        }
    }
}

/// MINSTREL_SCALE: probabilities are fixed point with 16 fraction bits.
const SCALE: u32 = 16;
/// EWMA_LEVEL: the weight (percent) of the old probability in each update.
pub const EWMA_LEVEL: u64 = 75;
/// Statistics are recomputed every update_interval / 2 (update_interval 100 ms).
const UPDATE_EVERY: Time = 50 * MS;
/// SAMPLE_COLUMNS of the sample table.
const SAMPLE_COLUMNS: usize = 10;
/// AVG_PKT_SIZE: the packet a rate's duration is computed for.
const AVG_PKT_BITS: u32 = 1200 * 8;

/// MINSTREL_FRAC.
fn frac(val: u64, div: u64) -> u64 {
    (val << SCALE) / div
}

/// minstrel_ewma: the new value weighted 100 - `weight` percent, the old `weight`.
pub fn ewma(old: u64, new: u64, weight: u64) -> u64 {
    (new * (100 - weight) + old * weight) / 100
}

/// One rate's counters (struct minstrel_rate_stats).
#[derive(Clone, Debug, Default)]
pub struct RateStats {
    pub attempts: u64,
    pub success: u64,
    /// EWMA of the success probability, fixed point.
    pub probability: u64,
    pub att_hist: u64,
    pub cur_tp: u64,
    pub sample_skipped: u32,
}

impl RateStats {
    /// minstrel_calc_rate_ewma: folds this interval's success ratio into the probability (the
    /// first one replaces it) and starts a new interval.
    pub fn update(&mut self) {
        if self.attempts > 0 {
            self.sample_skipped = 0;
            let cur = frac(self.success, self.attempts);
            self.probability = if self.att_hist == 0 {
                cur
            } else {
                ewma(self.probability, cur, EWMA_LEVEL)
            };
            self.att_hist += self.attempts;
        } else {
            self.sample_skipped += 1;
        }
        self.success = 0;
        self.attempts = 0;
    }
}

/// Minstrel HT's state for one station (struct minstrel_ht_sta), its rates the MCS 0..=max.
pub struct Minstrel {
    pub rates: Vec<RateStats>,
    /// Data duration (us) of an average packet at each rate (MCS_DURATION).
    duration: Vec<u64>,
    /// Per-A-MPDU overhead (us): a 0-byte frame and an ACK at 6 Mb/s (mi->overhead).
    overhead: u64,
    avg_ampdu_len: u64,
    ampdu_len: u64,
    ampdu_packets: u64,
    pub max_tp: usize,
    pub max_tp2: usize,
    pub max_prob: usize,
    sample_wait: u32,
    sample_tries: u32,
    sample_count: u32,
    sample_slow: u32,
    /// The sample table: per column a random order of the rates; `sample_at` walks it.
    sample_table: Vec<usize>,
    sample_at: usize,
    stats_update: Time,
    /// Streams of each rate (the max_prob rate is single-stream).
    streams: Vec<u32>,
}

/// ieee80211_frame_duration for an OFDM frame of `len` bytes at 6 Mb/s, SIFS included.
fn frame_duration_6m(len: u64) -> u64 {
    16 + 16 + 4 + 4 * ((16 + 8 * (len + 4) + 6) * 10).div_ceil(4 * 60)
}

impl Minstrel {
    pub fn new(base: Phy, max_mcs: u8, rng: &mut Rng) -> Minstrel {
        let n = max_mcs as usize + 1;
        let phys: Vec<Phy> = (0..=max_mcs).map(|mcs| Phy { mcs, ..base }).collect();
        let duration = phys
            .iter()
            .map(|p| AVG_PKT_BITS.div_ceil(p.n_dbps()) as u64 * p.symbol() / 1000)
            .collect();
        let mut sample_table = Vec::with_capacity(SAMPLE_COLUMNS * n);
        for _ in 0..SAMPLE_COLUMNS {
            let mut col: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                col.swap(i, rng.below(i as u64 + 1) as usize);
            }
            sample_table.extend(col);
        }
        Minstrel {
            rates: vec![RateStats::default(); n],
            duration,
            overhead: frame_duration_6m(0) + frame_duration_6m(10),
            avg_ampdu_len: frac(1, 1),
            ampdu_len: 0,
            ampdu_packets: 0,
            max_tp: 0,
            max_tp2: 0,
            max_prob: 0,
            // With multi-rate retry (ath9k): sample more at first, without delay.
            sample_wait: 0,
            sample_tries: 4,
            sample_count: 16,
            sample_slow: 0,
            sample_table,
            sample_at: 0,
            stats_update: 0,
            streams: phys.iter().map(Phy::streams).collect(),
        }
    }

    /// minstrel_ht_calc_tp: packets per second at this rate over the average A-MPDU, times
    /// the success probability; nothing below 10 %.
    fn calc_tp(&mut self, i: usize) {
        let r = &mut self.rates[i];
        if r.probability < frac(1, 10) {
            r.cur_tp = 0;
            return;
        }
        let usecs = self.overhead / (self.avg_ampdu_len >> SCALE).max(1) + self.duration[i];
        r.cur_tp = ((1_000_000 / usecs) * r.probability) >> SCALE;
    }

    /// minstrel_ht_update_stats: new probabilities and throughputs, then the best rates.
    pub fn update_stats(&mut self) {
        if self.ampdu_packets > 0 {
            let cur = frac(self.ampdu_len, self.ampdu_packets);
            self.avg_ampdu_len = ewma(self.avg_ampdu_len, cur, EWMA_LEVEL);
            self.ampdu_len = 0;
            self.ampdu_packets = 0;
        }
        self.sample_slow = 0;
        // One group per stream count; up to half of each group's rates sampled per interval.
        self.sample_count = 4 * self.streams.iter().max().copied().unwrap_or(1);
        let (mut cur_prob, mut cur_prob_tp, mut cur_tp, mut cur_tp2) = (0, 0, 0, 0);
        (self.max_tp, self.max_tp2, self.max_prob) = (0, 0, 0);
        for i in 0..self.rates.len() {
            self.rates[i].update();
            self.calc_tp(i);
            let r = &self.rates[i];
            // The lowest single-stream rate is kept out of the choice.
            if r.cur_tp == 0 || i == 0 {
                continue;
            }
            let single = self.streams[i] == 1;
            if single && ((r.cur_tp > cur_prob_tp && r.probability > frac(3, 4)) || r.probability > cur_prob)
            {
                (self.max_prob, cur_prob, cur_prob_tp) = (i, r.probability, r.cur_tp);
            }
            if r.cur_tp > cur_tp {
                (self.max_tp2, cur_tp2) = (self.max_tp, cur_tp);
                (self.max_tp, cur_tp) = (i, r.cur_tp);
            } else if r.cur_tp > cur_tp2 {
                (self.max_tp2, cur_tp2) = (i, r.cur_tp);
            }
        }
    }

    /// minstrel_get_sample_rate: the next rate of the sample table when a sample is due;
    /// rates slower than the best are sampled only when skipped 20 intervals, twice at most.
    fn sample_rate(&mut self) -> Option<usize> {
        if self.sample_wait > 0 {
            self.sample_wait -= 1;
            return None;
        }
        if self.sample_tries == 0 {
            return None;
        }
        self.sample_tries -= 1;
        let idx = self.sample_table[self.sample_at];
        self.sample_at = (self.sample_at + 1) % self.sample_table.len();
        if self.duration[idx] > self.duration[self.max_tp] {
            if self.rates[idx].sample_skipped < 20 {
                return None;
            }
            self.sample_slow += 1;
            if self.sample_slow > 3 {
                return None;
            }
        }
        Some(idx)
    }

    /// minstrel_ht_get_rate: a sample rate when one is due, else the best throughput rate.
    /// (ath9k's multi-rate retry chain is not modelled: an aggregate uses one rate.)
    pub fn pick(&mut self) -> u8 {
        self.sample_rate().unwrap_or(self.max_tp) as u8
    }

    /// minstrel_ht_tx_status: counts the A-MPDU at its rate, schedules the next samples and
    /// recomputes the statistics when an update is due.
    pub fn report(&mut self, mcs: u8, sent: u32, acked: u32, now: Time) {
        self.ampdu_packets += 1;
        self.ampdu_len += sent as u64;
        if self.sample_wait == 0 && self.sample_tries == 0 && self.sample_count > 0 {
            self.sample_wait = 16 + 2 * (self.avg_ampdu_len >> SCALE) as u32;
            self.sample_tries = 2;
            self.sample_count -= 1;
        }
        let r = &mut self.rates[mcs as usize];
        r.attempts += sent as u64;
        r.success += acked as u64;
        if now > self.stats_update + UPDATE_EVERY {
            self.update_stats();
            self.stats_update = now;
        }
    }
}

/// IWL_RATE_MAX_WINDOW: the outcomes each rate's history keeps.
const IWL_WINDOW: u32 = 62;
/// IWL_RATE_SCALE_FLUSH_INTVL: every rate's history is cleared this often.
const IWL_FLUSH: Time = 3000 * MS;
/// Success ratios are scaled by 128 x 100 (IWL_RATE_DECREASE_TH etc.).
const IWL_DECREASE_TH: u64 = 1920;
const IWL_INCREASE_TH: u64 = 8960;
const IWL_HIGH_TH: u64 = 10880;
/// IWL_RATE_MIN_FAILURE_TH / IWL_RATE_MIN_SUCCESS_TH: a window decides only with these.
const IWL_MIN_FAILURE: u32 = 6;
const IWL_MIN_SUCCESS: u32 = 8;

/// One rate's history (struct iwl_rate_scale_data): the last 62 outcomes as bits.
#[derive(Clone, Copy, Debug, Default)]
struct IwlWindow {
    data: u64,
    counter: u32,
    success: u32,
}

impl IwlWindow {
    fn push(&mut self, ok: bool) {
        if self.counter == IWL_WINDOW {
            let oldest = 1u64 << (IWL_WINDOW - 1);
            self.success -= (self.data & oldest != 0) as u32;
            self.data &= !oldest;
            self.counter -= 1;
        }
        self.data = (self.data << 1) | ok as u64;
        self.success += ok as u32;
        self.counter += 1;
    }

    fn enough(&self) -> bool {
        self.counter - self.success >= IWL_MIN_FAILURE || self.success >= IWL_MIN_SUCCESS
    }

    /// 128 x 100 x success / counter.
    fn ratio(&self) -> u64 {
        128 * 100 * self.success as u64 / self.counter.max(1) as u64
    }
}

/// iwlwifi's rate scaling (rs_rate_scale_perform) within one MCS table: a success history
/// per rate; down when the current rate's success ratio is under 15 %, up when it is at
/// least 70 % and the next rate is unknown or better, the neighbour with the higher expected
/// throughput otherwise; every history is cleared every 3 s. (The table switches, MIMO/SISO
/// and antenna toggling, are not modelled.)
pub struct IwlRs {
    windows: Vec<IwlWindow>,
    /// Expected throughput of each rate (its PHY rate, Mb/s x 10).
    expected: Vec<u64>,
    pub cur: usize,
    flush_at: Time,
}

impl IwlRs {
    pub fn new(base: Phy, max_mcs: u8) -> IwlRs {
        let expected = (0..=max_mcs)
            .map(|mcs| Phy { mcs, ..base }.rate_bps() / 100_000)
            .collect();
        IwlRs {
            windows: vec![IwlWindow::default(); max_mcs as usize + 1],
            expected,
            cur: max_mcs as usize,
            flush_at: IWL_FLUSH,
        }
    }

    pub fn pick(&self) -> u8 {
        self.cur as u8
    }

    /// Expected throughput of rate `i` from its history, none until it has enough history.
    fn tpt(&self, i: usize) -> Option<u64> {
        let w = &self.windows[i];
        w.enough().then(|| w.ratio() * self.expected[i] / 128)
    }

    pub fn report(&mut self, mcs: u8, sent: u32, acked: u32, now: Time) {
        if now >= self.flush_at {
            self.windows.fill(IwlWindow::default());
            self.flush_at = now + IWL_FLUSH;
        }
        let w = &mut self.windows[mcs as usize];
        for k in 0..sent {
            w.push(k < acked);
        }
        if mcs as usize != self.cur || !self.windows[self.cur].enough() {
            return;
        }
        self.cur = (self.cur as i64 + self.scale_action()) as usize;
    }

    /// -1 (down), 0 or +1 (up), as rs_rate_scale_perform decides within a table.
    fn scale_action(&self) -> i64 {
        let i = self.cur;
        let ratio = self.windows[i].ratio();
        let current = ratio * self.expected[i] / 128;
        let low = i.checked_sub(1);
        let high = (i + 1 < self.windows.len()).then_some(i + 1);
        let low_tpt = low.and_then(|l| self.tpt(l));
        let high_tpt = high.and_then(|h| self.tpt(h));
        let mut action = if ratio < IWL_DECREASE_TH || current == 0 {
            -1
        } else {
            match (low_tpt, high_tpt) {
                (None, None) if high.is_some() && ratio >= IWL_INCREASE_TH => 1,
                (None, None) => 0,
                (Some(l), Some(h)) if l < current && h < current => 0,
                (_, Some(h)) => (h > current && ratio >= IWL_INCREASE_TH) as i64,
                (Some(l), None) if l > current => -1,
                (Some(_), None) => (high.is_some() && ratio >= IWL_INCREASE_TH) as i64,
            }
        };
        // Stay when the ratio is high or the current rate still beats the lower one's best.
        if action == -1 {
            match low {
                None => action = 0,
                Some(l) if ratio > IWL_HIGH_TH || current > 100 * self.expected[l] => action = 0,
                _ => {}
            }
        }
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phy(mcs: u8) -> Phy {
        Phy {
            mcs,
            width40: false,
            short_gi: false,
        }
    }

    #[test]
    fn minstrel_ewma_follows_the_source() {
        // minstrel_calc_rate_ewma: the first interval's ratio is taken as it is; then
        // p = (cur x (100 - 75) + old x 75) / 100 in 16-bit fixed point. 3 of 4 (49152) after
        // 1 of 2 (32768): (49152 x 25 + 32768 x 75) / 100 = 36864 (0.5625).
        let mut r = RateStats {
            attempts: 2,
            success: 1,
            ..Default::default()
        };
        r.update();
        assert_eq!(r.probability, 32768);
        (r.attempts, r.success) = (4, 3);
        r.update();
        assert_eq!(r.probability, 36864);
        // An interval without attempts keeps it and counts a skipped sample.
        r.update();
        assert_eq!((r.probability, r.sample_skipped), (36864, 1));
    }

    #[test]
    fn minstrel_picks_the_best_throughput_rate() {
        // MCS 7 fails 95 % (tp 0: under 10 %), MCS 6 and 5 succeed: MCS 6 (58.5 Mb/s) is the
        // best throughput, MCS 5 the second.
        let mut m = Minstrel::new(phy(0), 7, &mut Rng::from_seed(1));
        for (mcs, ok) in [(5, 100), (6, 100), (7, 5)] {
            m.rates[mcs].attempts = 100;
            m.rates[mcs].success = ok;
        }
        m.update_stats();
        assert_eq!((m.max_tp, m.max_tp2), (6, 5));
        assert_eq!(m.rates[7].cur_tp, 0);
    }

    #[test]
    fn signal_loss_is_ten_percent_at_the_sensitivity() {
        // IEEE 802.11-2012 Table 20-22: MCS 7 at 20 MHz, -64 dBm, 4096 octets: PER 10 %.
        let c = Channel::Signal {
            rssi: -64.0,
            slope: 1.5,
        };
        assert!((c.loss(&phy(7), 4096) - 0.1).abs() < 1e-12);
        // Half the length: 1 - 0.9^0.5.
        assert!((c.loss(&phy(7), 2048) - (1.0 - 0.9f64.sqrt())).abs() < 1e-12);
        // Lower MCS are more robust at the same signal.
        assert!(c.loss(&phy(3), 4096) < 1e-4);
    }

    #[test]
    fn aggregate_loss_is_the_channel_loss_of_each_length() {
        // The same probability, to the bit, as the channel gives each subframe on its own, over
        // runs of equal and changing lengths (a loss remembered for one length is never
        // reused for another).
        let c = Channel::Signal {
            rssi: -60.0,
            slope: 1.5,
        };
        let mut losses = AggregateLoss::new(c, phy(7));
        for len in [1538, 1538, 90, 90, 1538, 4096, 90, 1538] {
            assert_eq!(
                losses.of(len).to_bits(),
                c.loss(&phy(7), len).to_bits(),
                "{len} B"
            );
        }
    }

    #[test]
    fn iwl_steps_down_under_fifteen_percent_and_up_at_seventy() {
        let mut rs = IwlRs::new(phy(0), 7);
        assert_eq!(rs.cur, 7);
        // 1 of 10 through at MCS 7: a ratio of 10 % < 15 %: down to MCS 6.
        rs.report(7, 10, 1, 0);
        assert_eq!(rs.cur, 6);
        // All through at MCS 6: MCS 7's expected throughput (10 % of 65 Mb/s) is lower, MCS 5
        // unknown: stay.
        rs.report(6, 10, 10, 0);
        assert_eq!(rs.cur, 6);
        // After the flush interval MCS 7's history is gone: with the ratio >= 70 % and the
        // higher rate unknown, up again.
        rs.report(6, 10, 10, IWL_FLUSH);
        assert_eq!(rs.cur, 7);
    }
}
