//! A shared 802.11n medium: an access point and its stations take turns on one channel.
//!
//! The model is at the level that moves queueing results (goodbadwifi2015 section 4's "WiFi"):
//! - Each transmitter (the AP, each station) has a driver below its qdisc, as Linux ath9k: one
//!   software queue per destination (ath9k's per-TID queue; the AP has one per station), fed by
//!   the qdisc while fewer than `driver_limit` frames are pending in the driver (ath9k
//!   `txq_max_pending`, default ATH_MAX_QDEPTH = ATH_TXBUF / 4 - ATH_TXBUF_RESERVE = 123, after
//!   which mac80211 stops the netdev queue), and a hardware queue of at most `hw_aggregates`
//!   formed A-MPDUs, the one on the air included (ATH_AGGR_MIN_QDEPTH = 2: ath_txq_schedule forms
//!   a new aggregate only below that depth). The qdisc sees none of these packets.
//! - Aggregates (ath_tx_form_aggr): subframes from one software queue, round robin over the
//!   destinations, while there are at most `max_subframes` (ath9k ATH_AMPDU_SUBFRAME_DEFAULT =
//!   32, half the 64-frame block-ack window; the standard allows 64), the A-MPDU is at most
//!   `max_ampdu_bytes` (65535, ATH_AMPDU_LIMIT_MAX) and its PPDU at most `max_airtime` (4 ms,
//!   ath_update_max_aggr_framelen's default TXOP limit). Each subframe is the IP packet with a
//!   QoS data MAC header (26 B), LLC/SNAP (8 B), FCS (4 B) and an MPDU delimiter (4 B,
//!   ATH_AGGR_DELIM_SZ), padded to 4 bytes except the last (IEEE 802.11n-2009 7.4a.3).
//! - Medium access (`Access`), a scenario choice: "equal", the first model: when the medium is
//!   idle, one transmitter with an aggregate in hardware is chosen uniformly at random (802.11
//!   DCF gives stations equal transmission opportunities in the long run, which is what makes a
//!   slow station drag a fast one: Heusse et al., "Performance anomaly of 802.11b", INFOCOM
//!   2003), at the cost of the mean backoff (CWmin / 2 slots), no collisions; or "dcf": each
//!   transmitter's own backoff, collisions and doubling windows (IEEE 802.11-2012 9.3.3, 9.19.2);
//!   or "edca": the same per access category (`edca.rs`), each transmitter with a software
//!   queue per destination and AC, a hardware queue, a backoff and a `driver_limit` per AC.
//!   Each transmission costs AIFS (SIFS + AIFSN x slot; best effort AIFSN 3), the backoff, the
//!   HT-mixed preamble, the payload symbols at the aggregate's PHY rate (IEEE 802.11n-2009
//!   20.4.3, TXTIME), SIFS and a block ACK (32 B) at a legacy rate (an ACK, 14 B, without
//!   aggregation: no delimiters); a collision the longest PPDU and the ACK timeout.
//! - A collided aggregate (no block ACK) is sent again whole, first in the hardware queue (the
//!   hardware's retry; no limit is modelled, as collisions in a row are rare). A subframe lost
//!   with the channel's loss at its MCS (`wifi_rate`) is retried in a later aggregate, at the
//!   head of its software queue, up to `retries` times (ath9k ATH_MAX_SW_RETRIES = 30); then
//!   dropped (reason `loss`). The rate control
//!   (`wifi_rate`) picks each aggregate's MCS and learns from its outcome.
//! - Each transmitter has its own `Driver` (the AP's ath9k values above by default; a station's
//!   may differ, e.g. iwlwifi's).
//!
//! - The AP's driver takes its destinations round robin (`topology.wifi.scheduler` "fifo", as
//!   ath9k before airtime fairness) or by mac80211's airtime deficit scheduler ("airtime",
//!   `airtime.rs`), and charges each station the PPDU airtime of the transmissions to it and
//!   from it (`Port::charge`) under either.
//!
//! - Between the AP's qdisc and its driver, `topology.wifi.txq`: the per-destination FIFOs fed
//!   up to `driver_limit` above ("fifo", the first model), or mac80211's per-station FQ-CoDel
//!   ("fq_codel", `txq.rs`), which takes every packet the qdisc gives (mac80211 does not stop
//!   the interface for frames it queues itself) and which the driver pulls from as it forms
//!   each aggregate (ath9k `ath_tx_form_aggr` -> `ieee80211_tx_dequeue`); the software queue
//!   per destination then holds only the frames to send again (ath9k's `tid->retry_q`, served
//!   first: `ath_tid_dequeue`), and the frame that did not fit in an aggregate.
//!
//! - `topology.wifi.rx_reorder`: each receiver hands a block-ack session's frames (one session
//!   per destination and AC) on in sequence order (`reorder.rs`, the default), or, the first
//!   model, each subframe as it arrives; `reorder_timeout` (100 ms) hands on a frame held
//!   behind a gap that long and discards the missing one when it comes.
//!
//! Not modelled: power save, RTS/CTS, beacons, multi-rate retry chains, the EIFS after a
//! collision.

use super::airtime::Airtime;
use super::edca::{self, AcParams, Contender, MAX_STAGE};
use super::phy::{Phy, LEGACY_PREAMBLE, SERVICE_BITS, SYMBOL, TAIL_BITS};
use super::reorder::Reorder;
use super::txq::Txq;
use super::wifi_rate::Radio;
use crate::packet::PktId;
use crate::queue::QueueCtx;
use crate::rng::Rng;
use crate::units::{Time, US};
use std::collections::VecDeque;

/// MAC overhead of one MPDU around the IP packet: QoS data header 26 B + LLC/SNAP 8 B + FCS 4 B.
pub const MPDU_OVERHEAD: u32 = 26 + 8 + 4;
/// The A-MPDU subframe delimiter (ATH_AGGR_DELIM_SZ).
pub const DELIMITER: u32 = 4;
/// Compressed block ACK frame (802.11n 7.2.1.8) and ACK frame, with FCS, in bytes.
const BLOCK_ACK_BYTES: u32 = 32;
const ACK_BYTES: u32 = 14;
/// aPHY-RX-START-Delay of the OFDM PHY at 20 MHz (IEEE 802.11-2012 Table 18-17): part of the
/// ACK timeout after which a transmitter gives a frame up (9.3.2.8).
const PHY_RX_START_DELAY: Time = 25 * US;

/// How the medium's transmitters take turns (scenario `topology.wifi.access`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Each time the medium is idle, one ready transmitter takes it, chosen uniformly, at the
    /// cost of the mean backoff; no collisions (the first model, kept to reproduce its results).
    Equal,
    /// 802.11 DCF with the best-effort EDCA parameters (IEEE 802.11-2012 9.3.3 and 9.19.2):
    /// each ready transmitter counts down its own backoff, drawn uniformly from 0..=CW; the
    /// medium goes to the lowest count after AIFS, the others keep what is left of theirs; two
    /// counts ending in the same slot collide (no block ACK: every subframe of both is retried,
    /// both double CW up to CWmax); a received block ACK resets CW to CWmin.
    Dcf,
    /// 802.11e EDCA with WMM's four access categories (`edca.rs`): each transmitter has a
    /// hardware queue, a driver limit and a backoff per AC, with the AC's own parameters; a
    /// packet's DSCP picks its AC.
    Edca,
}

impl Access {
    pub const NAMES: [&'static str; 3] = ["equal", "dcf", "edca"];

    pub fn parse(name: &str) -> Option<Access> {
        match name {
            "equal" => Some(Access::Equal),
            "dcf" => Some(Access::Dcf),
            "edca" => Some(Access::Edca),
            _ => None,
        }
    }
}

/// Where a transmitter's qdisc sits above its EDCA queues (scenario
/// `topology.wifi.qdisc_placement`): "root", one qdisc for every AC (a packet whose AC's queue is
/// stopped holds it: `Port::offer`); "mq", one per AC (`queue::mq`, fed by `Hops::wifi_fill`).
pub const QDISC_PLACEMENTS: [&str; 2] = ["root", "mq"];

/// The medium's MAC parameters (scenario `topology.wifi`), every one with its source.
#[derive(Clone, Debug, PartialEq)]
pub struct MacParams {
    pub access: Access,
    pub slot: Time,
    pub sifs: Time,
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Data bits per symbol of the legacy rate of the (block) ACK.
    pub ack_n_dbps: u32,
}

/// One transmitter's driver: its aggregation limits and its queues below the qdisc (the
/// AP's are `topology.wifi`'s, a station's its `driver` table over them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Driver {
    pub max_subframes: u32,
    pub max_ampdu_bytes: u32,
    pub max_airtime: Time,
    pub driver_limit: u32,
    pub hw_aggregates: u32,
    pub retries: u32,
    /// With EDCA: whether the voice AC is aggregated too (minstrel_ht's `minstrel_aggr_check`
    /// starts no block-ack session for AC_VO; iwlwifi dvm's `rs_tl_turn_on_agg` does, for
    /// every TID).
    pub aggregate_vo: bool,
}

impl MacParams {
    /// The time a transmission holds the medium besides its PPDU, on average: AIFS, the mean
    /// backoff, SIFS and the block ACK (`aggregated`) or ACK.
    pub fn overhead(&self, aggregated: bool) -> Time {
        self.aifs() + self.mean_backoff() + self.response(aggregated)
    }

    /// AIFS = SIFS + AIFSN x slot (IEEE 802.11-2012 9.19.2.3).
    pub fn aifs(&self) -> Time {
        self.sifs + self.aifsn as Time * self.slot
    }

    /// The mean of a backoff drawn from 0..=CWmin slots.
    pub fn mean_backoff(&self) -> Time {
        self.cw_min as Time * self.slot / 2
    }

    /// SIFS and the block ACK (`aggregated`) or ACK at the legacy control rate.
    pub fn response(&self, aggregated: bool) -> Time {
        let ack_bytes = if aggregated { BLOCK_ACK_BYTES } else { ACK_BYTES };
        let ack_sym = (SERVICE_BITS + 8 * ack_bytes + TAIL_BITS).div_ceil(self.ack_n_dbps) as Time;
        self.sifs + LEGACY_PREAMBLE + ack_sym * SYMBOL
    }

    /// How long a transmitter waits for a (block) ACK that does not come: SIFS + slot +
    /// aPHY-RX-START-Delay (IEEE 802.11-2012 9.3.2.8).
    pub fn ack_timeout(&self) -> Time {
        self.sifs + self.slot + PHY_RX_START_DELAY
    }

    /// The contention window after `stage` failed attempts (IEEE 802.11-2012 9.3.3).
    pub fn cw(&self, stage: u32) -> u32 {
        self.ac().cw(stage)
    }

    /// The single access category of "equal" and "dcf": the medium's AIFSN and windows.
    pub fn ac(&self) -> AcParams {
        AcParams {
            aifsn: self.aifsn,
            cw_min: self.cw_min,
            cw_max: self.cw_max,
            txop: 0,
        }
    }
}

impl Driver {
    /// Whether the driver forms A-MPDUs (acknowledged by a block ACK).
    pub fn aggregates(&self) -> bool {
        self.max_subframes > 1
    }

    /// Bytes a packet of `size` adds to an A-MPDU (`ampdu`) after the subframes already in it
    /// (the previous one padded to 4 bytes), or to a lone MPDU without aggregation.
    fn subframe(size: u32, ampdu: bool) -> u32 {
        if ampdu {
            DELIMITER + MPDU_OVERHEAD + size
        } else {
            MPDU_OVERHEAD + size
        }
    }

    /// The rate a transmitter reaches with back-to-back full aggregates of `mtu`-byte packets
    /// to a destination with `phy`: IP bytes per transmission over its airtime. A WiFi hop's
    /// nominal rate (the summary's rate, the bottleneck choice, utilisation) is this rate to
    /// its fastest destination: no traffic mix on the medium carries more.
    pub fn saturation_rate(&self, mac: &MacParams, phy: &Phy, mtu: u32) -> u64 {
        let mut n = 0u32;
        let mut len = 0u32;
        loop {
            let add = len.next_multiple_of(4) + Self::subframe(mtu, self.aggregates());
            if n > 0 && !self.fits(phy, n, add, self.max_subframes, self.max_airtime) {
                break;
            }
            n += 1;
            len = add;
            if n == self.max_subframes {
                break;
            }
        }
        let airtime = mac.overhead(self.aggregates()) + phy.ppdu(len);
        (n as u64 * mtu as u64 * 8 * 1_000_000_000) / airtime
    }

    /// Whether an A-MPDU of `n` subframes may grow to `len` bytes within `max_subframes` and a
    /// PPDU of `max_airtime`.
    fn fits(&self, phy: &Phy, n: u32, len: u32, max_subframes: u32, max_airtime: Time) -> bool {
        n < max_subframes && len <= self.max_ampdu_bytes && phy.ppdu(len) <= max_airtime
    }
}

/// An A-MPDU (or a lone MPDU) formed in a transmitter's hardware queue.
#[derive(Debug)]
pub struct Aggregate {
    pub dest: u16,
    /// Its access category (0 without EDCA).
    pub ac: u8,
    /// Whether it is an A-MPDU (acknowledged by a block ACK) rather than a lone MPDU.
    pub ampdu: bool,
    pub pkts: Vec<PktId>,
    pub bytes: u32,
    /// The PHY (MCS) it is sent with, the rate control's choice when it was formed.
    pub phy: Phy,
}

/// The driver of one transmitter (the AP or a station): its software queues, one per
/// destination and access category, and per access category a hardware queue of formed
/// aggregates and a backoff.
pub struct Port {
    /// The medium this port transmits on (an index into the world's media).
    pub medium: u32,
    pub driver: Driver,
    /// The link towards each destination (the AP: every station; a station: the AP): its
    /// PHY, channel and rate control.
    pub radios: Vec<Radio>,
    /// Per destination and AC (`queue`): the frames waiting for an aggregate (with mac80211's
    /// queues, `txq`, only the ones sent again and the one that did not fit).
    pub queues: Vec<VecDeque<PktId>>,
    /// mac80211's per-station FQ-CoDel (none: `queues` are the FIFOs the qdisc feeds).
    pub txq: Option<Box<Txq>>,
    /// The access categories: one (the medium's parameters) without EDCA, four with it.
    pub acs: Vec<Ac>,
    /// Whether this port's aggregate is on the air, and of which AC.
    pub on_air: bool,
    pub air_ac: usize,
    /// Frames in the driver: software queues, hardware queues and on the air.
    pub pending: u32,
    /// The packet the qdisc gave whose AC's queue is stopped (with EDCA): held, as Linux's
    /// `dev_requeue_skb` holds it, and the qdisc not dequeued until that AC wakes.
    pub stopped: Option<(usize, PktId)>,
    /// Retries so far of the packets at the heads of the software queues, by packet.
    pub retries: std::collections::HashMap<PktId, u32>,
    /// Emptied aggregate buffers, reused.
    spare: Vec<Vec<PktId>>,
    /// The airtime scheduler over the destinations (none: round robin, scheduler "fifo").
    pub airtime: Option<Box<Airtime>>,
    /// Per software queue, the block-ack session's numbering and the receiver's reorder buffer
    /// (`reorder`; empty: each subframe goes on as it arrives, the first model).
    rx: Vec<Reorder>,
    /// The reorder timer's expiry the hop's wake-up is set for (none: not armed).
    pub reorder_armed: Option<Time>,
    /// The sequence number of each frame aggregated and not yet acknowledged or given up.
    sn: std::collections::HashMap<PktId, u64>,
    pub stats: PortStats,
}

/// One access category of a transmitter: its parameters, hardware queue and backoff.
pub struct Ac {
    pub params: AcParams,
    /// Formed aggregates waiting for the medium (the one on the air is the medium's).
    pub hw: VecDeque<Aggregate>,
    /// The slots left of the backoff being counted down (none: draw one when ready).
    pub backoff: Option<u32>,
    /// Attempts failed in a row (the contention window's doubling).
    pub stage: u32,
    /// Frames of this AC in the driver (with EDCA, its queue stops at `driver_limit`).
    pub pending: u32,
    /// The next destination the round robin looks at.
    rr: usize,
}

impl Ac {
    fn new(params: AcParams) -> Ac {
        Ac {
            params,
            hw: VecDeque::new(),
            backoff: None,
            stage: 0,
            pending: 0,
            rr: 0,
        }
    }
}

/// Counters of one transmitter.
#[derive(Clone, Debug, Default)]
pub struct PortStats {
    pub txops: u64,
    pub subframes: u64,
    pub airtime: Time,
    pub retried: u64,
    /// Transmissions that collided with another transmitter's.
    pub collisions: u64,
    /// The sum over subframes sent of their MCS.
    pub mcs_sum: u64,
    /// Most frames the driver held at once.
    pub peak_pending: u32,
    /// The access point's only (`Port::charge`): PPDU airtime of its transmissions to each
    /// station, every attempt counted.
    pub tx_airtime: Vec<Time>,
    /// The access point's only: PPDU airtime of each station's transmissions it received whole.
    pub rx_airtime: Vec<Time>,
}

impl Port {
    /// A port with one access category per entry of `acs` (one: DCF or "equal"; four, in
    /// `edca`'s order: EDCA).
    pub fn new(medium: u32, driver: Driver, radios: Vec<Radio>, acs: &[AcParams]) -> Port {
        let radios_len = radios.len();
        Port {
            medium,
            driver,
            queues: (0..radios.len() * acs.len()).map(|_| VecDeque::new()).collect(),
            radios,
            acs: acs.iter().map(|&p| Ac::new(p)).collect(),
            on_air: false,
            air_ac: 0,
            pending: 0,
            stopped: None,
            retries: Default::default(),
            spare: Vec::new(),
            airtime: None,
            txq: None,
            rx: Vec::new(),
            reorder_armed: None,
            sn: Default::default(),
            stats: PortStats {
                tx_airtime: vec![0; radios_len],
                rx_airtime: vec![0; radios_len],
                ..PortStats::default()
            },
        }
    }

    /// The software queue of destination `dest` and access category `ac`.
    pub fn queue(&self, dest: usize, ac: usize) -> usize {
        dest * self.acs.len() + ac
    }

    /// The access category of a packet with this DSCP (0 without EDCA).
    pub fn ac_of(&self, dscp: u8) -> usize {
        if self.acs.len() == 1 {
            0
        } else {
            edca::ac_of(dscp)
        }
    }

    /// Turns on the receivers' reordering (`net::reorder`) of every block-ack session (one per
    /// destination and AC), with the reorder timeout `timeout` (none: frames wait for their gap).
    pub fn reorder(&mut self, timeout: Option<Time>) {
        self.rx = self.queues.iter().map(|_| Reorder::new(timeout)).collect();
    }

    /// Whether the receivers reorder.
    pub fn reorders(&self) -> bool {
        !self.rx.is_empty()
    }

    /// With reordering on: frame `id` of software queue `q` arrived whole (`got`) or was given
    /// up at `now`; appends to `out` the frames the receiver now hands on in order. False: the
    /// frame arrived below the receiver's window, which discards it.
    pub fn received(&mut self, q: usize, id: PktId, got: bool, now: Time, out: &mut Vec<PktId>) -> bool {
        let sn = self.sn.remove(&id).expect("numbered when aggregated");
        self.rx[q].arrive(sn, got.then_some(id), now, out)
    }

    /// The reorder timers due at `now`: appends to `out` the frames they hand on.
    pub fn expire_reorder(&mut self, now: Time, out: &mut Vec<PktId>) {
        for r in &mut self.rx {
            r.expire(now, out);
        }
    }

    /// The earliest reorder timer of the receivers (none: no frame held, or no timeout).
    pub fn reorder_deadline(&self) -> Option<Time> {
        self.rx.iter().filter_map(|r| r.deadline()).min()
    }

    /// Offers a packet from the qdisc to destination `dest`: with EDCA, a packet whose AC has
    /// `driver_limit` frames in the driver is held (`stopped`: ath9k's `ath_tx_start` stops
    /// that AC's mac80211 queue, and the qdisc's root then requeues what it dequeued for it);
    /// otherwise it is accepted.
    pub fn offer(&mut self, dest: usize, id: PktId, now: Time, ctx: &mut QueueCtx) {
        let ac = self.ac_of(ctx.dscp(id));
        if self.acs.len() > 1 && !self.ac_takes(ac) {
            self.stopped = Some((dest, id));
        } else {
            self.accept(dest, ac, id, now, ctx);
        }
    }

    /// Accepts the held packet if its AC has woken (fewer than `driver_limit` frames).
    pub fn wake(&mut self, now: Time, ctx: &mut QueueCtx) {
        if let Some((dest, id)) = self.stopped {
            let ac = self.ac_of(ctx.dscp(id));
            if self.ac_takes(ac) {
                self.stopped = None;
                self.accept(dest, ac, id, now, ctx);
            }
        }
    }

    /// Whether access category `ac`'s queue is awake: fewer than `driver_limit` of its frames in
    /// the driver (ath9k's `ath_txq_skb_done` wakes it below `txq_max_pending`).
    pub fn ac_takes(&self, ac: usize) -> bool {
        self.acs[ac].pending < self.driver.driver_limit
    }

    /// Puts a packet from the qdisc into the software queue of its destination and AC, or into
    /// mac80211's queues (whose limits may drop packets: `ctx` has them); with the airtime
    /// scheduler, mac80211's `ieee80211_txq_enqueue` then `schedule_and_wake_txq`.
    pub fn accept(&mut self, dest: usize, ac: usize, id: PktId, now: Time, ctx: &mut QueueCtx) {
        self.pending += 1;
        self.acs[ac].pending += 1;
        match self.txq.as_mut() {
            Some(q) => {
                let dropped = q.enqueue(dest, id, ctx, now);
                self.pending -= dropped;
                self.acs[ac].pending -= dropped;
            }
            None => {
                let q = self.queue(dest, ac);
                self.queues[q].push_back(id);
            }
        }
        if let Some(a) = self.airtime.as_mut() {
            a.schedule(dest, true, now);
        }
        self.stats.peak_pending = self.stats.peak_pending.max(self.pending);
    }

    /// A frame of access category `ac` left the driver (acknowledged or given up).
    pub fn left(&mut self, ac: usize) {
        self.pending -= 1;
        self.acs[ac].pending -= 1;
    }

    /// Whether frames wait for an aggregate to destination `dest` in access category `ac`.
    pub fn has_frames(&self, dest: usize, ac: usize) -> bool {
        !self.queues[self.queue(dest, ac)].is_empty()
            || self.txq.as_ref().is_some_and(|q| q.backlog(dest) > 0)
    }

    /// Whether the driver takes packets from the qdisc: with EDCA while no packet is held (each
    /// AC's limit applies as the packet is offered); otherwise below `driver_limit` frames, or
    /// always with mac80211's queues (which apply their own limits).
    pub fn takes(&self) -> bool {
        if self.acs.len() > 1 {
            return self.stopped.is_none();
        }
        self.txq.is_some() || self.pending < self.driver.driver_limit
    }

    fn hw_depth(&self, ac: usize) -> u32 {
        self.acs[ac].hw.len() as u32 + (self.on_air && self.air_ac == ac) as u32
    }

    /// Forms aggregates while an AC's hardware queue is below its depth and frames wait (`ctx`
    /// gives the packets' sizes and takes mac80211's CoDel drops): each AC on its own (ath9k's
    /// hardware queue per AC), the destinations taking turns round robin (scheduler "fifo"),
    /// or as the airtime scheduler gives them (`airtime`).
    pub fn form(&mut self, now: Time, ctx: &mut QueueCtx) {
        if self.airtime.is_some() {
            return self.form_fair(now, ctx);
        }
        let n = self.radios.len();
        for ac in 0..self.acs.len() {
            while self.hw_depth(ac) < self.driver.hw_aggregates {
                let rr = self.acs[ac].rr;
                let Some(dest) = (0..n).map(|k| (rr + k) % n).find(|&d| self.has_frames(d, ac)) else {
                    break;
                };
                self.acs[ac].rr = (dest + 1) % n;
                self.form_one(dest, ac, now, ctx);
            }
        }
    }

    /// The airtime scheduler's turns: scheduling rounds as ath9k's `ath_txq_schedule` runs
    /// them (each station `next_station` gives forms one aggregate if the hardware queue has room, then
    /// goes back on the list with `ieee80211_return_txq`), repeated while a round formed one
    /// and the hardware queue has room (ath9k runs a round at each enqueue and completion).
    /// One access category (validated: not with EDCA).
    fn form_fair(&mut self, now: Time, ctx: &mut QueueCtx) {
        loop {
            if self.hw_depth(0) >= self.driver.hw_aggregates {
                return;
            }
            let mut formed = false;
            self.airtime.as_mut().expect("a scheduler").start();
            while let Some(dest) = self.airtime.as_mut().expect("a scheduler").next_station() {
                if self.hw_depth(0) < self.driver.hw_aggregates && self.has_frames(dest, 0) {
                    self.form_one(dest, 0, now, ctx);
                    let agg = self.acs[0].hw.back().expect("formed");
                    let est = agg.phy.ppdu(agg.bytes);
                    self.airtime
                        .as_mut()
                        .expect("a scheduler")
                        .pending(dest, est, false);
                    formed = true;
                }
                let has_queue = self.has_frames(dest, 0);
                self.airtime
                    .as_mut()
                    .expect("a scheduler")
                    .schedule(dest, has_queue, now);
            }
            if !formed {
                return;
            }
        }
    }

    /// The most subframes and the longest PPDU of an aggregate of access category `ac`: the
    /// driver's, the AC's TXOP limit when it has one (a TXOP holder stays within it: IEEE
    /// 802.11-2012 9.19.2.2; ath9k's `ath_update_max_aggr_framelen` takes the queue's burst
    /// time), and one subframe for a voice AC the driver does not aggregate.
    fn limits(&self, ac: usize) -> (u32, Time) {
        let d = &self.driver;
        let p = &self.acs[ac].params;
        let air = if p.txop > 0 {
            d.max_airtime.min(p.txop)
        } else {
            d.max_airtime
        };
        let vo_single = self.acs.len() > 1 && ac == edca::AC_VO && !d.aggregate_vo;
        (if vo_single { 1 } else { d.max_subframes }, air)
    }

    /// Forms one aggregate for `dest` in access category `ac` (ath_tx_form_aggr) at the end of
    /// its hardware queue: frames from its software queue, then from mac80211's; the first that
    /// does not fit goes back to the software queue (ath9k puts it on `tid->retry_q`).
    fn form_one(&mut self, dest: usize, ac: usize, now: Time, ctx: &mut QueueCtx) {
        let d = self.driver;
        let (max_subframes, max_airtime) = self.limits(ac);
        let ampdu = max_subframes > 1;
        if let Some(q) = self.txq.as_mut() {
            q.expect(dest, self.radios[dest].expected_rate());
        }
        let phy = self.radios[dest].pick();
        let q = self.queue(dest, ac);
        let mut pkts = self.spare.pop().unwrap_or_default();
        let mut len = 0u32;
        while let Some(id) = self.next_frame(dest, q, now, ctx) {
            let add = len.next_multiple_of(4) + Driver::subframe(ctx.size(id), ampdu);
            if !pkts.is_empty() && !d.fits(&phy, pkts.len() as u32, add, max_subframes, max_airtime) {
                self.queues[q].push_front(id);
                break;
            }
            pkts.push(id);
            if let Some(r) = self.rx.get_mut(q) {
                self.sn.entry(id).or_insert_with(|| r.number());
            }
            len = add;
            if pkts.len() as u32 == max_subframes {
                break;
            }
        }
        self.acs[ac].hw.push_back(Aggregate {
            dest: dest as u16,
            ac: ac as u8,
            ampdu,
            pkts,
            bytes: len,
            phy,
        });
    }

    /// The next frame of software queue `q` (to `dest`): its head, else mac80211's next (its
    /// CoDel may drop packets on the way: they leave the driver's count).
    fn next_frame(&mut self, dest: usize, q: usize, now: Time, ctx: &mut QueueCtx) -> Option<PktId> {
        if let Some(id) = self.queues[q].pop_front() {
            return Some(id);
        }
        let (id, dropped) = self.txq.as_mut()?.dequeue(dest, ctx, now);
        self.pending -= dropped;
        self.acs[0].pending -= dropped;
        id
    }

    /// Charges the PPDU airtime of a transmission to destination `dest` (`rx` false: every
    /// attempt, as ath9k's `ath_tx_count_airtime` counts each try) or of a reception from it
    /// (`rx`: a frame received whole, as ath9k's `ath_rx_count_airtime`), to the per-station
    /// counters and the airtime scheduler's deficit (`ieee80211_sta_register_airtime`).
    pub fn charge(&mut self, dest: usize, airtime: Time, rx: bool, now: Time) {
        let counter = if rx {
            &mut self.stats.rx_airtime
        } else {
            &mut self.stats.tx_airtime
        };
        counter[dest] += airtime;
        if let Some(a) = self.airtime.as_mut() {
            a.register(dest, airtime, now);
        }
    }

    /// Frames `dest`'s aggregate of `airtime` left the hardware (`ieee80211_tx_status`: AQL's
    /// pending airtime falls), or went back to `dest`'s software queue for a retry: the
    /// station is put back on the scheduler's list.
    pub fn completed(&mut self, dest: usize, airtime: Time, retried: bool, now: Time) {
        if let Some(a) = self.airtime.as_mut() {
            a.pending(dest, airtime, true);
            if retried {
                a.schedule(dest, true, now);
            }
        }
    }

    /// After a transmission of the AC on the air: a collision doubles its contention window, a
    /// received (block) ACK resets it.
    pub fn settle(&mut self, collided: bool) {
        let ac = &mut self.acs[self.air_ac];
        ac.stage = if collided {
            (ac.stage + 1).min(MAX_STAGE)
        } else {
            0
        };
    }

    /// Returns an emptied aggregate's buffer for reuse.
    pub fn recycle(&mut self, mut pkts: Vec<PktId>) {
        pkts.clear();
        self.spare.push(pkts);
    }

    /// Packets held by the driver (the one held for a stopped AC, mac80211's, software and
    /// hardware queues, not the one on the air) and by its destinations' reorder buffers.
    pub fn held(&self) -> impl Iterator<Item = PktId> + '_ {
        let soft = self.queues.iter().flat_map(|q| q.iter().copied());
        let mac = self.txq.iter().flat_map(|q| q.held());
        let hw = self
            .acs
            .iter()
            .flat_map(|a| a.hw.iter().flat_map(|g| g.pkts.iter().copied()));
        self.stopped
            .map(|s| s.1)
            .into_iter()
            .chain(soft)
            .chain(mac)
            .chain(hw)
            .chain(self.rx.iter().flat_map(|r| r.held()))
    }
}

/// One shared channel: its transmitters (ports, by hop index) and the transmission on the air.
pub struct Medium {
    pub mac: MacParams,
    /// The hops (indices into the world's links) that transmit on this medium.
    pub ports: Vec<u32>,
    /// The transmissions on the air: each transmitter's hop and aggregate (two or more: a
    /// collision).
    pub on_air: Vec<(u32, Aggregate)>,
    pub rng: Rng,
    pub busy_time: Time,
}

impl Medium {
    /// Gives the idle medium to the next transmitter(s) by the medium's access model:
    /// `ports` are its transmitters in `self.ports` order. Each winner's head aggregate goes
    /// on the air; returns how long the medium is busy (none when no transmitter is ready).
    pub fn access(&mut self, ports: &mut [&mut Port]) -> Option<Time> {
        let mut ready: Vec<(usize, usize)> = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            for (a, ac) in p.acs.iter().enumerate() {
                if !ac.hw.is_empty() {
                    ready.push((i, a));
                }
            }
        }
        if ready.is_empty() {
            return None;
        }
        let (lead, winners) = match self.mac.access {
            Access::Equal => (self.mac.aifs() + self.mac.mean_backoff(), vec![self.pick(&ready)]),
            Access::Dcf | Access::Edca => self.contend(ports, &ready),
        };
        let mut ppdu = 0;
        let mut ampdu = false;
        for &(w, a) in &winners {
            let port = &mut ports[w];
            let agg = port.acs[a].hw.pop_front().expect("ready");
            ppdu = ppdu.max(agg.phy.ppdu(agg.bytes));
            ampdu = agg.ampdu;
            port.on_air = true;
            port.air_ac = a;
            port.stats.txops += 1;
            port.stats.subframes += agg.pkts.len() as u64;
            port.stats.mcs_sum += agg.phy.mcs as u64 * agg.pkts.len() as u64;
            self.on_air.push((self.ports[w], agg));
        }
        let tail = if winners.len() == 1 {
            self.mac.response(ampdu)
        } else {
            self.mac.ack_timeout()
        };
        let air = lead + ppdu + tail;
        for &(w, _) in &winners {
            ports[w].stats.airtime += air;
            ports[w].stats.collisions += (winners.len() > 1) as u64;
        }
        self.busy_time += air;
        Some(air)
    }

    /// Equal opportunities: one of the ready transmitters, uniformly (one AC each).
    fn pick(&mut self, ready: &[(usize, usize)]) -> (usize, usize) {
        if ready.len() == 1 {
            ready[0]
        } else {
            ready[self.rng.below(ready.len() as u64) as usize]
        }
    }

    /// DCF and EDCA: every ready AC without a backoff draws one from 0..=CW of its stage; the
    /// smallest AIFSN + count ends first and the others keep the rest of theirs (frozen while
    /// the medium is busy; `edca::contend`). An AC that lost an internal collision doubles its
    /// window. Returns SIFS plus the slots waited, and the (transmitter, AC) pairs whose count
    /// ended.
    fn contend(&mut self, ports: &mut [&mut Port], ready: &[(usize, usize)]) -> (Time, Vec<(usize, usize)>) {
        let mut cs = Vec::with_capacity(ready.len());
        for &(i, a) in ready {
            let ac = &mut ports[i].acs[a];
            let backoff = match ac.backoff {
                Some(b) => b,
                None => {
                    let b = self.rng.below(ac.params.cw(ac.stage) as u64 + 1) as u32;
                    ac.backoff = Some(b);
                    b
                }
            };
            cs.push(Contender {
                port: i,
                ac: a,
                aifsn: ac.params.aifsn,
                backoff,
            });
        }
        let round = edca::contend(&cs);
        for (x, &left) in cs.iter().zip(&round.left) {
            ports[x.port].acs[x.ac].backoff = (left > 0).then_some(left);
        }
        for &(i, a) in &round.internal {
            let ac = &mut ports[i].acs[a];
            ac.stage = (ac.stage + 1).min(MAX_STAGE);
        }
        (self.mac.sifs + round.slots as Time * self.mac.slot, round.winners)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use crate::queue::testutil::Harness;

    fn mac() -> MacParams {
        MacParams {
            access: Access::Equal,
            slot: 9 * US,
            sifs: 16 * US,
            aifsn: 3,
            cw_min: 15,
            cw_max: 1023,
            ack_n_dbps: 96,
        }
    }

    fn ath9k() -> Driver {
        Driver {
            max_subframes: 32,
            max_ampdu_bytes: 65535,
            max_airtime: 4000 * US,
            driver_limit: 123,
            hw_aggregates: 2,
            retries: 30,
            aggregate_vo: false,
        }
    }

    /// A pool of `n` packets of 1500 B (ids 0 to n - 1).
    fn pool(n: u32) -> Harness {
        let mut h = Harness::new();
        for _ in 0..n {
            h.packet(0, 1500, Ecn::NotEct);
        }
        h
    }

    fn ctx(h: &mut Harness) -> QueueCtx<'_> {
        QueueCtx {
            pool: &mut h.pool,
            events: &mut h.events,
        }
    }

    /// A port with one destination per PHY, no frame errors.
    fn port(driver: Driver, phys: &[Phy]) -> Port {
        Port::new(
            0,
            driver,
            phys.iter().map(|&p| Radio::fixed(p, 0.0)).collect(),
            &[mac().ac()],
        )
    }

    fn phy(mcs: u8) -> Phy {
        Phy {
            mcs,
            width40: false,
            short_gi: false,
        }
    }

    #[test]
    fn phy_rates_match_the_standard() {
        // IEEE 802.11n-2009 Tables 20-30..20-37: MCS 7 = 65 Mb/s, MCS 15 = 130 Mb/s (20 MHz,
        // 800 ns GI); MCS 15 at 40 MHz with the 400 ns GI = 300 Mb/s; MCS 0 = 6.5 Mb/s.
        assert_eq!(phy(7).rate_bps(), 65_000_000);
        assert_eq!(phy(15).rate_bps(), 130_000_000);
        assert_eq!(phy(0).rate_bps(), 6_500_000);
        let p = Phy {
            mcs: 15,
            width40: true,
            short_gi: true,
        };
        assert_eq!(p.rate_bps(), 300_000_000);
        // MCS 7, 20 MHz, short GI: 72.2 Mb/s.
        let p = Phy {
            mcs: 7,
            width40: false,
            short_gi: true,
        };
        assert_eq!(p.rate_bps() / 100_000, 722);
    }

    #[test]
    fn ppdu_duration_follows_txtime() {
        // One 1538-byte MPDU (a 1500-byte packet) at MCS 0: 16 + 12304 + 6 = 12326 bits over 26
        // bits/symbol = 475 symbols = 1900 us, plus 20 + 12 + 4 us of preamble = 1936 us.
        assert_eq!(phy(0).ppdu(1538), 1936 * US);
        // At MCS 15 (two streams, two HT-LTFs): ceil(12326 / 520) = 24 symbols = 96 us + 40 us.
        assert_eq!(phy(15).ppdu(1538), 136 * US);
        // Short GI: 24 symbols x 3.6 us = 86.4 us, rounded up to 88 us.
        let sgi = Phy {
            mcs: 15,
            width40: false,
            short_gi: true,
        };
        assert_eq!(sgi.ppdu(1538), 128 * US);
    }

    #[test]
    fn overheads_are_the_standard_intervals() {
        // AIFS[BE] = 16 + 3 x 9 = 43 us; mean backoff 15 x 9 / 2 = 67.5 us; SIFS 16 us; block
        // ACK of 32 B at 24 Mb/s: 20 us + ceil(278 / 96) = 3 symbols = 32 us. Total 158.5 us.
        assert_eq!(mac().overhead(true), 158_500);
        // Without aggregation an ACK of 14 B: 20 us + ceil(134 / 96) = 2 symbols = 28 us.
        assert_eq!(mac().overhead(false), 154_500);
    }

    #[test]
    fn aggregates_respect_every_limit() {
        // 32 subframes of 1500-byte packets at MCS 15: 31 x 1544 + 1542 = 49406 B, inside
        // 65535 B and 4 ms (761 symbols = 3044 us): the subframe count binds.
        let mut h = pool(40);
        let mut port = port(ath9k(), &[phy(15)]);
        for id in 0..40 {
            port.accept(0, 0, id, 0, &mut ctx(&mut h));
        }
        port.form(0, &mut ctx(&mut h));
        assert_eq!(port.acs[0].hw.len(), 2);
        assert_eq!(port.acs[0].hw[0].pkts.len(), 32);
        assert_eq!(port.acs[0].hw[0].bytes, 49406);
        assert_eq!(port.acs[0].hw[1].pkts.len(), 8);
        // At MCS 0 the 4 ms limit binds: two subframes (3086 B, 3836 us) fit, three do not.
        let mut port = super::tests::port(ath9k(), &[phy(0)]);
        for id in 0..10 {
            port.accept(0, 0, id, 0, &mut ctx(&mut h));
        }
        port.form(0, &mut ctx(&mut h));
        assert_eq!(port.acs[0].hw[0].pkts.len(), 2);
        assert!(phy(0).ppdu(port.acs[0].hw[0].bytes) <= 4000 * US);
        assert!(phy(0).ppdu(3 * 1544 - 2) > 4000 * US);
        // The byte limit binds for small limits.
        let small = Driver {
            max_ampdu_bytes: 8000,
            ..ath9k()
        };
        let mut port = super::tests::port(small, &[phy(15)]);
        for id in 0..10 {
            port.accept(0, 0, id, 0, &mut ctx(&mut h));
        }
        port.form(0, &mut ctx(&mut h));
        assert_eq!(port.acs[0].hw[0].pkts.len(), 5); // 4 x 1544 + 1542 = 7718 B; 6 would be 9262 B
    }

    #[test]
    fn mac80211_queues_feed_aggregates_and_keep_every_frame() {
        // With mac80211's queues (txq.rs) the driver pulls frames as it forms each aggregate
        // (ath_tx_form_aggr -> ieee80211_tx_dequeue); the frame that does not fit waits in the
        // station's software queue (ath9k's tid->retry_q) and goes first in the next one.
        use super::super::txq::TxqParams;
        let mut h = pool(10);
        let mut port = port(ath9k(), &[phy(0)]);
        port.txq = Some(Box::new(Txq::new(TxqParams::default(), 1, 1)));
        for id in 0..10 {
            port.accept(0, 0, id, 0, &mut ctx(&mut h));
        }
        assert!(port.queues[0].is_empty() && port.takes());
        port.form(0, &mut ctx(&mut h));
        // MCS 0: two 1500-byte subframes per aggregate (the 4 ms limit), two in hardware
        let aggs: Vec<&[PktId]> = port.acs[0].hw.iter().map(|a| &a.pkts[..]).collect();
        assert_eq!(aggs, vec![&[0, 1][..], &[2, 3][..]]);
        assert_eq!(port.queues[0], [4]);
        // conservation: every frame is still in the driver, and counted
        assert_eq!(port.held().count(), 10);
        assert_eq!(port.pending, 10);
    }

    #[test]
    fn round_robin_over_destinations() {
        let d = Driver {
            hw_aggregates: 4,
            ..ath9k()
        };
        let mut port = port(d, &[phy(15), phy(7)]);
        let mut h = pool(4);
        for id in 0..4 {
            port.accept((id % 2) as usize, 0, id, 0, &mut ctx(&mut h));
        }
        port.form(0, &mut ctx(&mut h));
        let dests: Vec<u16> = port.acs[0].hw.iter().map(|a| a.dest).collect();
        assert_eq!(dests, vec![0, 1]);
        assert_eq!(port.acs[0].hw[0].pkts, vec![0, 2]);
        assert_eq!(port.pending, 4);
    }

    #[test]
    fn the_airtime_scheduler_charges_each_station_its_ppdus() {
        // The AP with the airtime scheduler and two stations at MCS 15 and MCS 0, each with
        // 200 packets of 1500 B, on an "equal" medium (its only transmitter). To station 0: 32
        // subframes, 49406 B: ceil(395270 / 520) = 761 symbols = 3044 us + 40 us of preamble =
        // 3084 us. To station 1: 2 subframes, 3086 B: ceil(24710 / 26) = 951 symbols = 3804 us
        // + 36 us = 3840 us.
        use super::super::airtime::{Airtime, AirtimeParams};
        let p = AirtimeParams {
            quantum: 256 * US,
            aql: false,
            aql_low: 5000 * US,
            aql_high: 12_000 * US,
            aql_threshold: 24_000 * US,
        };
        let mut ap = port(ath9k(), &[phy(15), phy(0)]);
        ap.airtime = Some(Box::new(Airtime::new(p, 2)));
        let mut h = pool(400);
        for id in 0..400 {
            ap.accept((id / 200) as usize, 0, id, 0, &mut ctx(&mut h));
        }
        let mut medium = Medium {
            mac: mac(),
            ports: vec![0],
            on_air: Vec::new(),
            rng: Rng::from_seed(1),
            busy_time: 0,
        };
        // station 1 was queued last: at the head of the list, served first, then again (its
        // deficit is charged only when its transmission ends)
        ap.form(0, &mut ctx(&mut h));
        let dests: Vec<u16> = ap.acs[0].hw.iter().map(|a| a.dest).collect();
        assert_eq!(dests, vec![1, 1]);
        let mut sent = 0;
        for _ in 0..6 {
            let air = medium.access(&mut [&mut ap]).expect("ready");
            let (_, agg) = medium.on_air.pop().expect("on the air");
            let ppdu = agg.phy.ppdu(agg.bytes);
            // conservation: the medium's time is the PPDU and the fixed overhead
            assert_eq!(air, ppdu + mac().overhead(true));
            ap.charge(agg.dest as usize, ppdu, false, 0);
            ap.on_air = false;
            ap.pending -= agg.pkts.len() as u32;
            ap.completed(agg.dest as usize, ppdu, false, 0);
            ap.recycle(agg.pkts);
            ap.form(0, &mut ctx(&mut h));
            sent += 1;
        }
        assert_eq!(sent, 6);
        let want = |n0: u64, n1: u64| vec![n0 * 3084 * US, n1 * 3840 * US];
        // After 1's first transmission (-3840 us) 0, whose deficit is 0, forms the next
        // aggregates; 1's second leaves it at -7424 us, and 0 (charged 3084 us each time, a
        // quantum of 256 us per pass for both) is served three more times before 1's deficit
        // is back at 0: by hand from ieee80211_next_txq, 1, 1, 0, 0, 0, 0.
        assert_eq!(ap.stats.tx_airtime, want(4, 2));
        assert_eq!(
            ap.stats.airtime,
            4 * 3084 * US + 2 * 3840 * US + 6 * mac().overhead(true)
        );
    }

    /// A medium with DCF access and two stations, each with a one-packet aggregate (1500 B at
    /// MCS 15: a 1542-byte subframe, 24 symbols, a 136 us PPDU) and the backoff given.
    fn dcf_pair(backoffs: [u32; 2]) -> (Medium, Vec<Port>) {
        let m = MacParams {
            access: Access::Dcf,
            ..mac()
        };
        let mut ports = Vec::new();
        let mut h = pool(2);
        for (k, b) in backoffs.into_iter().enumerate() {
            let mut p = port(ath9k(), &[phy(15)]);
            p.accept(0, 0, k as PktId, 0, &mut ctx(&mut h));
            p.form(0, &mut ctx(&mut h));
            p.acs[0].backoff = Some(b);
            ports.push(p);
        }
        let medium = Medium {
            mac: m,
            ports: vec![0, 1],
            on_air: Vec::new(),
            rng: Rng::from_seed(1),
            busy_time: 0,
        };
        (medium, ports)
    }

    #[test]
    fn contention_windows_double_to_cw_max() {
        // IEEE 802.11-2012 9.3.3: CW = (CWmin + 1) x 2^retries - 1, at most CWmax.
        let m = mac();
        let cws: Vec<u32> = (0..8).map(|s| m.cw(s)).collect();
        assert_eq!(cws, vec![15, 31, 63, 127, 255, 511, 1023, 1023]);
    }

    #[test]
    fn the_lower_backoff_wins_and_the_other_keeps_the_rest() {
        // A counts 2 slots, B 5: A transmits after AIFS 43 us + 2 x 9 us = 61 us, then its
        // 136 us PPDU, SIFS 16 us and a block ACK (20 + 3 x 4 = 32 us): 245 us. B has 3 left.
        let (mut medium, mut ports) = dcf_pair([2, 5]);
        let mut refs: Vec<&mut Port> = ports.iter_mut().collect();
        let air = medium.access(&mut refs).expect("ready");
        assert_eq!(air, 245 * US);
        assert_eq!(medium.on_air.len(), 1);
        assert_eq!(medium.on_air[0].0, 0);
        assert_eq!(ports[0].acs[0].backoff, None);
        assert_eq!(ports[1].acs[0].backoff, Some(3));
        ports[0].settle(false);
        assert_eq!(ports[0].acs[0].stage, 0);
    }

    #[test]
    fn equal_backoffs_collide_and_both_double_their_window() {
        // Both count 3 slots: both transmit after 43 + 27 = 70 us; their 136 us PPDUs overlap,
        // no block ACK comes, each waits the ACK timeout SIFS 16 + slot 9 + 25 us = 50 us:
        // the medium is busy 256 us. Both then double CW: 15 -> 31.
        let (mut medium, mut ports) = dcf_pair([3, 3]);
        let mut refs: Vec<&mut Port> = ports.iter_mut().collect();
        let air = medium.access(&mut refs).expect("ready");
        assert_eq!(air, 256 * US);
        assert_eq!(medium.on_air.len(), 2);
        for p in &mut ports {
            assert_eq!(p.stats.collisions, 1);
            assert_eq!(p.acs[0].backoff, None);
            p.settle(true);
            assert_eq!(medium.mac.cw(p.acs[0].stage), 31);
        }
    }

    /// An EDCA port (the table given) with one destination at MCS 15.
    fn edca_port(table: super::edca::EdcaTable, driver: Driver) -> Port {
        Port::new(0, driver, vec![Radio::fixed(phy(15), 0.0)], &table.params())
    }

    #[test]
    fn edca_queues_by_dscp_and_limits_vi_to_its_txop() {
        // RRUL's marks over a station's queues: CS0 -> BE, CS1 -> BK, CS5 and EF -> VI (edca.rs
        // has the kernel's table), each AC its own hardware queue.
        use super::super::edca::{EdcaTable, AC_BE, AC_BK, AC_VI};
        let mut h = Harness::new();
        let mut port = edca_port(EdcaTable::Station, ath9k());
        for (dscp, n) in [(0, 1), (8, 1), (40, 20), (46, 20)] {
            h.dscp = dscp;
            for _ in 0..n {
                let id = h.packet(0, 1500, Ecn::NotEct);
                port.offer(0, id, 0, &mut ctx(&mut h));
            }
        }
        assert_eq!(
            port.acs.iter().map(|a| a.pending).collect::<Vec<_>>(),
            [1, 1, 40, 0]
        );
        port.form(0, &mut ctx(&mut h));
        assert_eq!(port.acs[AC_BE].hw[0].pkts, vec![0]);
        assert_eq!(port.acs[AC_BK].hw[0].pkts, vec![1]);
        // VI's TXOP limit of 3008 us binds before ath9k's 32 subframes: 31 subframes of 1500 B
        // at MCS 15 are 30 x 1544 + 1542 = 47862 B, ceil((16 + 382896 + 6) / 520) = 737
        // symbols = 2948 us + 40 us = 2988 us; 32 would take 3084 us.
        assert_eq!(port.acs[AC_VI].hw[0].pkts.len(), 31);
        assert_eq!(phy(15).ppdu(port.acs[AC_VI].hw[0].bytes), 2988 * US);
        assert!(port.acs[AC_VI].hw[0].ampdu);
    }

    #[test]
    fn voice_is_not_aggregated_where_the_driver_does_not() {
        // minstrel_ht starts no block-ack session for AC_VO: one MPDU per transmission, no
        // delimiter (1538 B), acknowledged by a plain ACK; iwlwifi dvm aggregates it.
        use super::super::edca::{EdcaTable, AC_VO};
        for (agg, want) in [(false, 1), (true, 3)] {
            let mut h = Harness::new();
            h.dscp = 48; // CS6 -> UP 6 -> VO
            let d = Driver {
                aggregate_vo: agg,
                ..ath9k()
            };
            let mut port = edca_port(EdcaTable::Ap, d);
            for _ in 0..3 {
                let id = h.packet(0, 1500, Ecn::NotEct);
                port.offer(0, id, 0, &mut ctx(&mut h));
            }
            port.form(0, &mut ctx(&mut h));
            assert_eq!(port.acs[AC_VO].hw[0].pkts.len(), want);
            assert_eq!(port.acs[AC_VO].hw[0].ampdu, agg);
            if !agg {
                assert_eq!(port.acs[AC_VO].hw[0].bytes, 1538);
            }
        }
    }

    #[test]
    fn a_full_ac_holds_the_qdisc() {
        // With two frames allowed per AC, a third BK packet is held (its AC's queue stopped)
        // and the qdisc is not dequeued until a BK frame leaves, even for other ACs.
        use super::super::edca::{EdcaTable, AC_BK};
        let mut h = Harness::new();
        h.dscp = 8;
        let d = Driver {
            driver_limit: 2,
            ..ath9k()
        };
        let mut port = edca_port(EdcaTable::Station, d);
        for _ in 0..3 {
            assert!(port.takes());
            let id = h.packet(0, 1500, Ecn::NotEct);
            port.offer(0, id, 0, &mut ctx(&mut h));
        }
        assert_eq!(port.stopped, Some((0, 2)));
        assert!(!port.takes());
        assert_eq!(port.held().count(), 3);
        port.wake(0, &mut ctx(&mut h));
        assert!(!port.takes());
        port.left(AC_BK);
        port.wake(0, &mut ctx(&mut h));
        assert!(port.takes());
        assert_eq!(port.acs[AC_BK].pending, 2);
    }

    #[test]
    fn an_ap_vi_frame_beats_a_station_be_frame_and_internal_losers_double() {
        // The AP (its own table) with a VI aggregate and backoff 3 (AIFSN 1: slot 4) against a
        // station with BE (AIFSN 3, backoff 1: slot 4) and VI (AIFSN 2, backoff 2: slot 4): all
        // end in slot 4. The station's VI beats its BE internally (BE doubles: CW 31), and
        // collides on the air with the AP's VI: lead SIFS + 4 x 9 = 52 us, the longer PPDU,
        // then the ACK timeout (50 us).
        use super::super::edca::{EdcaTable, AC_BE, AC_VI};
        let m = MacParams {
            access: Access::Edca,
            ..mac()
        };
        let mut h = Harness::new();
        let mut ap = edca_port(EdcaTable::Ap, ath9k());
        let mut sta = edca_port(EdcaTable::Station, ath9k());
        for (k, dscp) in [(0, 46), (1, 0), (1, 46)] {
            h.dscp = dscp;
            let id = h.packet(0, 1500, Ecn::NotEct);
            let port = if k == 0 { &mut ap } else { &mut sta };
            port.offer(0, id, 0, &mut ctx(&mut h));
            port.form(0, &mut ctx(&mut h));
        }
        ap.acs[AC_VI].backoff = Some(3);
        sta.acs[AC_BE].backoff = Some(1);
        sta.acs[AC_VI].backoff = Some(2);
        let mut medium = Medium {
            mac: m,
            ports: vec![0, 1],
            on_air: Vec::new(),
            rng: Rng::from_seed(1),
            busy_time: 0,
        };
        let air = medium.access(&mut [&mut ap, &mut sta]).expect("ready");
        assert_eq!(air, 52 * US + 136 * US + 50 * US);
        let sent: Vec<(u32, u8)> = medium.on_air.iter().map(|(p, a)| (*p, a.ac)).collect();
        assert_eq!(sent, vec![(0, AC_VI as u8), (1, AC_VI as u8)]);
        assert_eq!(sta.acs[AC_BE].stage, 1);
        assert_eq!(sta.acs[AC_BE].backoff, None);
        assert_eq!(sta.acs[AC_BE].params.cw(sta.acs[AC_BE].stage), 31);
        assert_eq!(sta.acs[AC_BE].hw.len(), 1);
        // Alone, the AP's VI (AIFSN 1) with backoff 0 goes after SIFS + 9 us = 25 us.
        sta.acs[AC_BE].hw.clear();
        ap.on_air = false;
        sta.on_air = false;
        medium.on_air.clear();
        h.dscp = 46;
        let id = h.packet(0, 1500, Ecn::NotEct);
        ap.offer(0, id, 0, &mut ctx(&mut h));
        ap.form(0, &mut ctx(&mut h));
        ap.acs[AC_VI].backoff = Some(0);
        let air = medium.access(&mut [&mut ap, &mut sta]).expect("ready");
        assert_eq!(air, 25 * US + 136 * US + mac().response(true));
    }
}
