//! The window a TCP receiver advertises: the constant `rwnd` (`rcv_window = "fixed"`), or, with
//! `rcv_window = "linux"`, the window Linux 6.18 advertises as it grows its receive buffer
//! ("dynamic right-sizing") for an application that reads each segment as it lands.
//!
//! Linux's rules, by file and function (net/ipv4/tcp_input.c, tcp_output.c, tcp_minisocks.c,
//! include/net/tcp.h; the 2025 receive-side series, commits 65c5287892e9 to 572be9bf9d0d, and
//! aa251c84636c):
//! * Buffer and window are tied by the payload share of buffer memory, `scaling_ratio` / 256
//!   (tcp_win_from_space, tcp_space_from_win): 128 (TCP_DEFAULT_SCALING_RATIO) until the first
//!   full-sized segment, then that segment's length x 256 over its memory, skb->truesize
//!   (tcp_measure_rcv_mss), which the NIC driver decides (`rcv_truesize`); the window clamp
//!   follows at once (tcp_set_window_clamp).
//! * Start (the passive side, tcp_openreq_init_rwin -> tcp_select_initial_window): the window
//!   is the buffer `rcvbuf` (tcp_rmem[1]) at ratio 128, rounded down to whole segments; the
//!   window scale is the least that lets `rcvbuf_max` (tcp_rmem[2]) be advertised; the SYN-ACK
//!   offers at most 65535 (RFC 7323 2.2). At establishment tcp_init_buffer_space sets the clamp
//!   to that space less one segment (tcp_app_win 31), rcv_ssthresh to at most the clamp and the
//!   first measure of what the application read, rcvq_space.space, to 10 segments.
//! * Each segment with data (tcp_rcv_rtt_measure_ts): a receiver RTT sample from the echoed
//!   timestamp on the millisecond clock, 0 ms skipped; a lower sample replaces the estimate,
//!   a higher one moves it by 1/8 (tcp_rcv_rtt_update).
//! * Each in-order segment (tcp_event_data_recv): the ratio as above; a window-based RTT sample
//!   once the data a window ago is in (tcp_rcv_rtt_measure, lowering only); tcp_grow_window for
//!   128 bytes or more: rcv_ssthresh grows by two segments (or twice the segment) while below
//!   min(window clamp, free space), and the ACK then goes at once (icsk_ack.quick |= 1).
//! * Each out-of-order segment (tcp_data_queue_ofo): tcp_grow_window (SACK only), then
//!   tcp_rcvbuf_grow at the same measure, which provisions the out-of-order span.
//! * Each read (tcp_recvmsg -> tcp_rcv_space_adjust): at most once per receiver RTT, when the
//!   application read more than the last measure in that time, tcp_rcvbuf_grow: window = 2 x
//!   read + 4 x read x (read - last) / last + the out-of-order span; buffer = that at the
//!   current ratio, at most `rcvbuf_max`; the clamp follows a larger buffer.
//! * Each ACK (tcp_select_window, __tcp_select_window): the window is the free space, the
//!   buffer less what it holds, at most rcv_ssthresh, rounded up to the scale's unit; with less
//!   than half the space free it is the free space rounded down (quick ACKs end); it never
//!   moves its right edge left (tcp_shrink_window 0).
//!
//! Simplifications (documented): every segment takes `rcv_truesize` of memory (one buffer per
//! packet), out-of-order data its bytes' share at the ratio; no memory pressure (tcp_mem), pruning or collapsing; the
//! application reads at once, so the receive queue is empty at each read and the buffer holds
//! only the segment being processed and the out-of-order data; `rwnd` caps the window clamp (as
//! TCP_WINDOW_CLAMP would).
//!
//! `rcv_window = "linux_5"` follows the same functions as the 5.x series has them (read in a 5.x
//! net/ipv4/tcp_input.c, include/net/tcp.h and net/ipv4/tcp_output.c; the rules the L4S team's
//! 2020 kernel inherited). The rest is shared; these differ, each marked `linux_5` below:
//! * No measured ratio: the window is the buffer less its 2^tcp_adv_win_scale-th part
//!   (include/net/tcp.h tcp_win_from_space, tcp_adv_win_scale 1: space - space / 2), whatever
//!   the segments' memory (tcp_measure_rcv_mss only tracks rcv_mss).
//! * tcp_rcv_space_adjust: window = 2 x read + 16 segments (advmss), plus twice that times
//!   (read - last) / last; the buffer is that many whole segments (rounded down) of the memory
//!   one is budgeted, SKB_TRUESIZE(advmss + MAX_TCP_HEADER) raised by 128 until half of it holds
//!   a segment; at most tcp_rmem[2]. Out-of-order data neither adds a span nor grows the buffer
//!   (tcp_data_queue_ofo calls tcp_grow_window only).
//! * tcp_rcv_rtt_update smooths every timestamp sample by 1/8, lower ones too (a window-based
//!   sample still only lowers); tcp_rcv_rtt_measure_ts counts a 0 ms sample as 1 ms.
//! * tcp_init_buffer_space: the first measure is min(rcv_wnd, 10 segments), rcv_ssthresh aside.

use super::config::{RcvWindow, TcpConfig};
use crate::units::Time;

/// TCP_DEFAULT_SCALING_RATIO: half of the buffer's memory counted as window.
const DEFAULT_RATIO: u64 = 128;
/// TCP_INIT_CWND: the first measure of a round trip's reads is 10 segments.
const INIT_SPACE_SEGS: u64 = 10;
/// tcp_grow_window acts on segments of at least 128 bytes (tcp_event_data_recv).
const GROW_MIN_LEN: u64 = 128;
/// The largest window scale (TCP_MAX_WSCALE, RFC 7323 2.3).
const MAX_WSCALE: u32 = 14;
/// `linux_5`: the memory SKB_TRUESIZE adds to a segment on x86-64 with 64-byte cache lines:
/// SKB_DATA_ALIGN(sizeof(struct sk_buff)) 256 + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))
/// 320 (include/linux/skbuff.h).
const SKB_OVERHEAD: u64 = 576;
/// `linux_5`: MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER) with MAX_HEADER 176 (a
/// distribution config: LL_MAX_HEADER 128 with wireless, + 48 with tunnels; include/net/tcp.h,
/// include/linux/netdevice.h).
const MAX_TCP_HEADER: u64 = 320;
/// net.core.rmem_max's default (SK_RMEM_MAX, 212992 bytes with 4 KiB pages): one bound of the
/// window scale (tcp_select_initial_window).
const RMEM_MAX: u64 = 212_992;

/// What an ACK learns from the window: the value it carries and whether quick ACKs end.
pub struct Advertised {
    pub wnd: u64,
    /// Less than half the buffer is free: Linux clears icsk_ack.quick.
    pub end_quick: bool,
}

/// Linux's receive-buffer state of one connection (names as tcp_sock's).
#[derive(Clone, Debug)]
pub struct LinuxWindow {
    /// `rcv_window = "linux_5"`: Linux 5.x's rules where they differ.
    linux5: bool,
    advmss: u64,
    wscale: u32,
    /// A segment's memory (`rcv_truesize`) and the ratio a full-sized one gives.
    truesize: u64,
    driver_ratio: u64,
    ratio: u64,
    rcvbuf: u64,
    rcvbuf_max: u64,
    /// `rwnd`: the window clamp's ceiling.
    clamp_cap: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    rcv_wnd: u64,
    rcv_wup: u64,
    rcv_mss: u64,
    /// rcvq_space: the last measure of a round trip's reads, from where and when.
    space: u64,
    space_seq: u64,
    space_time_us: u64,
    /// rcv_rtt_est: the receiver's RTT estimate in microseconds x 8 (0: none yet), and the
    /// window-based sample's sequence and start.
    rtt_us8: u64,
    rtt_seq: u64,
    rtt_time_us: Option<u64>,
    last_tsecr: Option<Time>,
    established: bool,
}

fn us(t: Time) -> u64 {
    t / 1_000
}

fn ms(t: Time) -> u64 {
    t / 1_000_000
}

fn align_up(x: u64, unit: u64) -> u64 {
    x.div_ceil(unit) * unit
}

/// tcp_win_from_space: the window `space` bytes of buffer give.
fn win_from_space(linux5: bool, ratio: u64, space: u64) -> u64 {
    if linux5 {
        // linux_5: include/net/tcp.h tcp_win_from_space, tcp_adv_win_scale 1
        space - (space >> 1)
    } else {
        (space * ratio) >> 8
    }
}

impl LinuxWindow {
    pub fn new(cfg: &TcpConfig) -> LinuxWindow {
        let advmss = cfg.mss as u64;
        let rcvbuf = cfg.rcvbuf;
        let linux5 = cfg.rcv_window == RcvWindow::Linux5;
        // tcp_select_initial_window: the space at the default ratio, whole segments.
        let space = win_from_space(linux5, DEFAULT_RATIO, rcvbuf);
        let rcv_wnd = if space > advmss {
            space - space % advmss
        } else {
            space
        };
        let scale_space = space.max(cfg.rcvbuf_max).max(RMEM_MAX);
        let wscale = (scale_space.ilog2().saturating_sub(15)).min(MAX_WSCALE);
        LinuxWindow {
            linux5,
            advmss,
            wscale,
            truesize: cfg.rcv_truesize,
            driver_ratio: ((advmss << 8) / cfg.rcv_truesize).max(1),
            ratio: DEFAULT_RATIO,
            rcvbuf,
            rcvbuf_max: cfg.rcvbuf_max,
            clamp_cap: cfg.rwnd_bytes(),
            window_clamp: (0xffff_u64 << wscale).min(cfg.rwnd_bytes()),
            rcv_ssthresh: rcv_wnd,
            rcv_wnd,
            rcv_wup: 1,
            // tcp_initialize_rcv_mss: min(advmss, rcv_wnd / 2, TCP_MSS_DEFAULT 536), >= 88.
            rcv_mss: advmss.min(rcv_wnd / 2).clamp(88, 536),
            space: 0,
            space_seq: 1,
            space_time_us: 0,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time_us: None,
            last_tsecr: None,
            established: false,
        }
    }

    fn win_from_space(&self, space: u64) -> u64 {
        win_from_space(self.linux5, self.ratio, space)
    }

    fn space_from_win(&self, win: u64) -> u64 {
        (win << 8) / self.ratio
    }

    /// The SYN-ACK's window: unscaled, at most 65535.
    pub fn syn_window(&self) -> u64 {
        self.rcv_wnd.min(0xffff)
    }

    /// tcp_init_buffer_space, at the first segment after the handshake.
    fn establish(&mut self, now: Time, rcv_nxt: u64) {
        self.established = true;
        let maxwin = self.win_from_space(self.rcvbuf);
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin;
        }
        // tcp_app_win 31 reserves one segment
        if self.window_clamp > 2 * self.advmss && self.window_clamp + self.advmss > maxwin {
            self.window_clamp = (2 * self.advmss).max(maxwin.saturating_sub(self.advmss));
        }
        // linux_5: tcp_init_buffer_space takes the measure before rcv_ssthresh is clamped and
        // without it
        let first = if self.linux5 {
            self.rcv_wnd
        } else {
            self.rcv_ssthresh.min(self.window_clamp).min(self.rcv_wnd)
        };
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.space = first.min(INIT_SPACE_SEGS * self.advmss);
        self.space_seq = rcv_nxt;
        self.space_time_us = us(now);
    }

    /// tcp_rcv_rtt_update: `sample_us`, window-based or from a timestamp.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        if self.rtt_us8 == 0 || (m < self.rtt_us8 && (win_dep || !self.linux5)) {
            self.rtt_us8 = m;
        } else if !win_dep {
            // linux_5 (tcp_rcv_rtt_update): a timestamp sample moves the estimate by 1/8 either
            // way
            self.rtt_us8 = self.rtt_us8 - (self.rtt_us8 >> 3) + sample_us;
        }
    }

    /// The receiver's RTT estimate in microseconds x 8, 0 before the first sample (rcv_rtt_est).
    pub fn rtt_us8(&self) -> u64 {
        self.rtt_us8
    }

    /// A segment with `len` bytes of data arrived echoing `ts_ecr` (tcp_rcv_rtt_measure_ts).
    pub fn on_segment(&mut self, len: u64, ts_ecr: Time, now: Time, rcv_nxt: u64) {
        if !self.established {
            self.establish(now, rcv_nxt);
        }
        if self.last_tsecr == Some(ts_ecr) {
            return;
        }
        self.last_tsecr = Some(ts_ecr);
        if len >= self.rcv_mss {
            let mut delta = ms(now).saturating_sub(ms(ts_ecr));
            if self.linux5 {
                // linux_5: tcp_rcv_rtt_measure_ts takes a 0 ms sample as 1 ms
                delta = delta.max(1);
            }
            if delta > 0 {
                self.rtt_update(delta * 1_000, false);
            }
        }
    }

    /// tcp_set_window_clamp with the clamp `val`.
    fn set_window_clamp(&mut self, val: u64) {
        let new = val.min(self.clamp_cap);
        if new == self.window_clamp {
            return;
        }
        if new < self.window_clamp {
            self.rcv_ssthresh = self.rcv_ssthresh.min(new);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
        self.window_clamp = new;
    }

    /// tcp_grow_window for a segment of `len` bytes, `held` bytes of memory in the buffer
    /// (the segment included). True when it grew (the ACK goes at once).
    fn grow(&mut self, len: u64, held: u64) -> bool {
        let free = self.win_from_space(self.rcvbuf.saturating_sub(held));
        let room = self.window_clamp.min(free) as i64 - self.rcv_ssthresh as i64;
        if room <= 0 {
            return false;
        }
        let truesize = self.truesize;
        let mut incr = if self.win_from_space(truesize) <= len {
            2 * self.advmss
        } else {
            // __tcp_grow_window: a segment small for its memory grows a small window only
            let mut t = self.win_from_space(truesize) >> 1;
            let mut window = self.win_from_space(self.rcvbuf_max) >> 1;
            let mut incr = 0;
            while self.rcv_ssthresh <= window {
                if t <= len {
                    incr = 2 * self.rcv_mss;
                    break;
                }
                t >>= 1;
                window >>= 1;
            }
            incr
        };
        if incr == 0 {
            return false;
        }
        incr = incr.max(2 * len);
        self.rcv_ssthresh += (room as u64).min(incr);
        true
    }

    /// An in-order segment of `len` bytes took rcv_nxt to `rcv_nxt` (tcp_event_data_recv);
    /// `ooo_bytes` are held out of order. True when the ACK goes at once.
    pub fn on_in_order(&mut self, len: u64, rcv_nxt: u64, ooo_bytes: u64, now: Time) -> bool {
        // tcp_measure_rcv_mss
        if len >= self.rcv_mss {
            // linux_5 has no measured ratio
            if !self.linux5 && len != self.rcv_mss && self.ratio != self.driver_ratio {
                self.ratio = self.driver_ratio;
                self.set_window_clamp(self.win_from_space(self.rcvbuf));
                self.space = self.space.min(self.window_clamp);
            }
            self.rcv_mss = len.min(self.advmss);
        }
        // tcp_rcv_rtt_measure
        if let Some(t) = self.rtt_time_us.filter(|_| rcv_nxt >= self.rtt_seq) {
            self.rtt_update((us(now) - t).max(1), true);
        }
        if self.rtt_time_us.is_none() || rcv_nxt >= self.rtt_seq {
            self.rtt_seq = rcv_nxt + self.rcv_wnd;
            self.rtt_time_us = Some(us(now));
        }
        let held = self.held(ooo_bytes) + self.truesize;
        len >= GROW_MIN_LEN && self.grow(len, held)
    }

    /// An out-of-order segment of `len` bytes was queued (tcp_data_queue_ofo); `ooo_end` is
    /// the end of the highest out-of-order data. True when the ACK goes at once.
    pub fn on_out_of_order(
        &mut self,
        len: u64,
        sack: bool,
        ooo_bytes: u64,
        ooo_end: u64,
        rcv_nxt: u64,
    ) -> bool {
        let grew = sack && self.grow(len, self.held(ooo_bytes));
        // linux_5: tcp_data_queue_ofo does not grow the buffer
        if !self.linux5 {
            self.rcvbuf_grow(self.space, ooo_end.saturating_sub(rcv_nxt));
        }
        grew
    }

    /// The application read everything up to `rcv_nxt` (tcp_rcv_space_adjust); `ooo_span` is
    /// the out-of-order data's reach beyond it.
    pub fn on_read(&mut self, rcv_nxt: u64, ooo_span: u64, now: Time) {
        let t = us(now).saturating_sub(self.space_time_us);
        if self.rtt_us8 == 0 || t < self.rtt_us8 >> 3 {
            return;
        }
        let copied = rcv_nxt - self.space_seq;
        if copied > self.space && self.linux5 {
            self.rcvbuf_grow_5(copied);
        } else if copied > self.space {
            self.rcvbuf_grow(copied, ooo_span);
        }
        self.space_seq = rcv_nxt;
        self.space_time_us = us(now);
    }

    /// tcp_rcvbuf_grow with the new measure `newval`.
    fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let old = self.space;
        self.space = newval;
        let mut rcvwin = newval << 1;
        // slow start: let the sender double its rate (none before a first measure)
        let grow = (rcvwin * (newval - old.min(newval))).checked_div(old);
        rcvwin += grow.unwrap_or(0) << 1;
        rcvwin += ooo_span;
        self.raise_rcvbuf(self.space_from_win(rcvwin));
    }

    /// linux_5: tcp_rcv_space_adjust (net/ipv4/tcp_input.c, 5.x) after a round trip that read
    /// `copied`, more than the last measure.
    fn rcvbuf_grow_5(&mut self, copied: u64) {
        let old = self.space;
        self.space = copied;
        let mut rcvwin = 2 * copied + 16 * self.advmss;
        // slow start: let the sender double its rate
        let grow = (rcvwin * (copied - old)).checked_div(old);
        rcvwin += grow.unwrap_or(0) << 1;
        let mut rcvmem = self.advmss + MAX_TCP_HEADER + SKB_OVERHEAD;
        while self.win_from_space(rcvmem) < self.advmss {
            rcvmem += 128;
        }
        self.raise_rcvbuf(rcvwin / self.advmss * rcvmem);
    }

    /// The buffer becomes `rcvbuf` (at most `rcvbuf_max`) if that is larger; the clamp follows.
    fn raise_rcvbuf(&mut self, rcvbuf: u64) {
        let rcvbuf = rcvbuf.min(self.rcvbuf_max);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf).min(self.clamp_cap);
        }
    }

    /// Memory of `bytes` of out-of-order data.
    fn held(&self, bytes: u64) -> u64 {
        (bytes << 8) / self.driver_ratio
    }

    /// The window an ACK at `rcv_nxt` advertises (tcp_select_window), `ooo_bytes` held out of
    /// order.
    pub fn advertise(&mut self, rcv_nxt: u64, ooo_bytes: u64) -> Advertised {
        let unit = 1u64 << self.wscale;
        let allowed = self.win_from_space(self.rcvbuf);
        let full = self.window_clamp.min(allowed);
        let mut free = self.win_from_space(self.rcvbuf.saturating_sub(self.held(ooo_bytes)));
        let mss = self.rcv_mss.min(full);
        let mut end_quick = false;
        let mut new = 'sel: {
            if free < full / 2 {
                end_quick = true;
                free -= free % unit;
                if free < allowed >> 4 || free < mss {
                    break 'sel 0;
                }
            }
            align_up(free.min(self.rcv_ssthresh), unit)
        };
        let cur = (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        if new < cur {
            new = align_up(cur, unit);
        }
        self.rcv_wnd = new;
        self.rcv_wup = rcv_nxt;
        Advertised { wnd: new, end_quick }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::config::RcvWindow;
    use crate::transport::tcp::profiles::rfc;
    use crate::units::MS;

    fn linux_cfg() -> TcpConfig {
        TcpConfig {
            rcv_window: RcvWindow::Linux,
            ..rfc()
        }
    }

    #[test]
    fn the_first_window_is_the_default_buffers_half_in_whole_segments() {
        // tcp_select_initial_window: 128 KiB x 128/256 = 65536, rounded down to 45 x 1448; the
        // scale lets 32 MiB through (ilog2(2^25) - 15 = 10), 6 MiB needs 7 (ilog2 = 22).
        let w = LinuxWindow::new(&linux_cfg());
        assert_eq!((w.rcv_wnd, w.syn_window(), w.wscale), (65_160, 65_160, 10));
        let six = LinuxWindow::new(&TcpConfig {
            rcvbuf_max: 6 << 20,
            ..linux_cfg()
        });
        assert_eq!(six.wscale, 7);
        // tcp_init_buffer_space: the clamp is the space less one segment (tcp_app_win 31), the
        // first measure 10 segments (the kernel's tracepoint: space=14480).
        let mut w = w;
        w.establish(100 * MS, 1);
        assert_eq!(
            (w.window_clamp, w.rcv_ssthresh, w.space),
            (64_088, 64_088, 14_480)
        );
    }

    /// Feeds `n` full in-order segments 1 ms apart from 100 ms on (the application reading
    /// each): the next sequence number and how many of them hastened an ACK.
    fn in_order_segments(w: &mut LinuxWindow, n: u64) -> (u64, u32) {
        let (mut nxt, mut quick) = (1, 0);
        for k in 0..n {
            let now = 100 * MS + k * MS;
            w.on_segment(1448, 0, now, nxt);
            nxt += 1448;
            quick += w.on_in_order(1448, nxt, 0, now) as u32;
        }
        (nxt, quick)
    }

    #[test]
    fn full_segments_open_the_window_to_the_clamp_a_veth_buffer_gives() {
        // Values of the kernel's tcp_rcvbuf_grow tracepoint for a download through a veth pair
        // (Linux 6.18): scaling_ratio=160, window_clamp=81920 (131072 x 160/256),
        // rcv_ssthresh=80480 (the clamp less the 2304-byte segment being queued, 1440 at that
        // ratio), rcv_wnd=80896 (80480 rounded up to 1024, the unit of scale 10).
        let mut w = LinuxWindow::new(&linux_cfg());
        let (nxt, quick) = in_order_segments(&mut w, 20);
        assert_eq!((w.ratio, w.window_clamp, w.rcv_ssthresh), (160, 81_920, 80_480));
        assert_eq!(w.advertise(nxt, 0).wnd, 80_896);
        // each segment grew rcv_ssthresh by 2 x 1448 until the room ran out: 65160 -> 80480
        // takes 6 segments (5 x 2896 = 14480 short by 840), each ACKed at once
        assert_eq!(quick, 6);
    }

    #[test]
    fn the_buffer_grows_from_what_was_read_in_a_round_trip_as_the_kernel_grew_it() {
        // Consecutive tcp_rcvbuf_grow events of that trace: (copied, space before) -> the
        // rcvbuf the next event shows. rcvwin = 2 copied + 4 copied (copied - space) / space,
        // rcvbuf = rcvwin x 256 / 160; the kernel's own values agree to a few bytes.
        let mut w = LinuxWindow::new(&linux_cfg());
        w.establish(0, 1);
        w.ratio = 160;
        for (copied, space, kernel) in [
            (30_408, 15_928, 274_224),
            (56_472, 30_408, 490_499),
            (91_224, 56_472, 651_196),
        ] {
            w.space = space;
            w.rcvbuf_grow(copied, 0);
            assert!(
                w.rcvbuf.abs_diff(kernel) <= 8,
                "{copied}: {} vs {kernel}",
                w.rcvbuf
            );
            assert_eq!(w.window_clamp, w.rcvbuf * 160 / 256);
        }
        // a round trip that read no more than the last measure leaves the buffer alone: after
        // 91224 read, 95568 give 2 x 95568 + 4 x 95568 x 4344 / 91224 = 209338 of window, less
        // than the 406997 the buffer already gives (the trace's next events: no growth)
        let before = w.rcvbuf;
        w.rcvbuf_grow(95_568, 0);
        assert_eq!(w.rcvbuf, before);
    }

    #[test]
    fn the_right_edge_never_moves_left_and_the_cap_holds() {
        let mut w = LinuxWindow::new(&TcpConfig {
            rwnd: crate::transport::tcp::config::Rwnd::Bytes(100_000),
            ..linux_cfg()
        });
        w.establish(0, 1);
        w.ratio = 160;
        w.rcvbuf_grow(1_000_000, 0);
        assert_eq!(w.window_clamp, 100_000, "rwnd caps the clamp");
        // a window of 80 KB advertised at 1; out-of-order data filling most of the buffer
        // leaves less free space than the window's remainder, which is kept
        w.rcv_ssthresh = 80_000;
        let first = w.advertise(1, 0).wnd;
        let held = w.rcvbuf * 160 / 256 - 1000;
        let next = w.advertise(10_001, held);
        assert_eq!(next.wnd, align_up(1 + first - 10_001, 1024));
        assert!(next.end_quick);
    }

    fn linux5_cfg() -> TcpConfig {
        TcpConfig {
            rcv_window: RcvWindow::Linux5,
            rcvbuf_max: 6 << 20,
            ..rfc()
        }
    }

    #[test]
    fn linux_5_window_is_the_buffer_less_its_half_rounded_up() {
        // tcp_win_from_space with tcp_adv_win_scale 1: space - (space >> 1); 2345 -> 1173 where
        // 6.18's ratio 128 gives 2345 x 128 / 256 = 1172
        assert_eq!(win_from_space(true, DEFAULT_RATIO, 2345), 1173);
        assert_eq!(win_from_space(false, DEFAULT_RATIO, 2345), 1172);
        assert_eq!(win_from_space(true, 200, 131_072), 65_536, "no ratio in 5.x");
    }

    #[test]
    fn linux_5_starts_as_tcp_select_initial_window_and_tcp_init_buffer_space_did() {
        // tcp_rmem[1] 131072: full space 131072 - 65536 = 65536, rounded down to whole 1448-byte
        // segments 45 x 1448 = 65160; tcp_rmem[2] 6 MiB = 6291456 halves 7 times to 49152 <=
        // 65535: scale 7
        let mut w = LinuxWindow::new(&linux5_cfg());
        assert_eq!((w.rcv_wnd, w.syn_window(), w.wscale), (65_160, 65_160, 7));
        // tcp_init_buffer_space: clamp max(2 x 1448, 65536 - 1448) = 64088, the first measure
        // min(65160, 10 x 1448) = 14480
        w.establish(0, 1);
        assert_eq!(
            (w.window_clamp, w.rcv_ssthresh, w.space),
            (64_088, 64_088, 14_480)
        );
    }

    #[test]
    fn linux_5_full_segments_leave_the_window_at_the_clamp() {
        // No scaling_ratio: a veth segment (truesize 2304, half 1152 <= 1448) would grow
        // rcv_ssthresh by 2 x 1448, but it already sits at the clamp 64088 (room 0), so nothing
        // grows and no ACK is hastened; the window is 64088 rounded up to 128 (scale 7): 64128
        let mut w = LinuxWindow::new(&linux5_cfg());
        let (nxt, quick) = in_order_segments(&mut w, 20);
        assert_eq!((w.ratio, w.window_clamp, w.rcv_ssthresh), (128, 64_088, 64_088));
        assert_eq!(quick, 0);
        assert_eq!(w.advertise(nxt, 0).wnd, 64_128);
        // out-of-order data does not grow the buffer in 5.x (tcp_data_queue_ofo)
        w.on_out_of_order(1448, true, 1448, nxt + 2 * 1448, nxt);
        assert_eq!(w.rcvbuf, 131_072);
    }

    #[test]
    fn linux_5_buffer_grows_by_whole_segments_of_budgeted_memory() {
        // tcp_rcv_space_adjust (5.x) with advmss 1448. Segment memory: SKB_TRUESIZE(1448 + 320)
        // = 1768 + 256 + 320 = 2344, whose half 1172 < 1448, so +128 five times: 2984 (1492).
        let mut w = LinuxWindow::new(&linux5_cfg());
        w.establish(0, 1);
        // 28960 read after a measure of 14480: rcvwin = 2 x 28960 + 16 x 1448 = 81088, grow
        // = 81088 x 14480 / 14480 = 81088, rcvwin = 81088 + 2 x 81088 = 243264 = 168 segments,
        // rcvbuf = 168 x 2984 = 501312, clamp = 501312 - 250656 = 250656
        w.rcvbuf_grow_5(28_960);
        assert_eq!((w.rcvbuf, w.window_clamp, w.space), (501_312, 250_656, 28_960));
        // 57920 after 28960: rcvwin = 115840 + 23168 = 139008, + 2 x 139008 = 417024 = 288
        // segments: rcvbuf 288 x 2984 = 859392, clamp 429696
        w.rcvbuf_grow_5(57_920);
        assert_eq!((w.rcvbuf, w.window_clamp), (859_392, 429_696));
        // 1 MB after 57920 asks for far more than tcp_rmem[2] = 6291456: capped, clamp half
        w.rcvbuf_grow_5(1_000_000);
        assert_eq!((w.rcvbuf, w.window_clamp), (6_291_456, 3_145_728));
    }

    #[test]
    fn linux_5_receiver_rtt_smooths_lower_timestamp_samples_too() {
        // tcp_rcv_rtt_update (5.x), the estimate kept x 8: 50 ms is 400000 us; a 40 ms
        // timestamp sample gives 400000 - 400000/8 + 40000 = 390000 (48.75 ms), not 40 ms; a
        // window-based 30 ms sample, lower, replaces it
        let mut w = LinuxWindow::new(&linux5_cfg());
        w.rtt_update(50_000, false);
        w.rtt_update(40_000, false);
        assert_eq!(w.rtt_us8, 390_000);
        w.rtt_update(30_000, true);
        assert_eq!(w.rtt_us8 >> 3, 30_000);
        // tcp_rcv_rtt_measure_ts: a 0 ms timestamp sample counts as 1 ms: 30 - 30/8 + 1 ms
        w.on_segment(1448, 5 * MS, 5 * MS, 1);
        assert_eq!(w.rtt_us8, 240_000 - 30_000 + 1_000);
    }

    #[test]
    fn receiver_rtt_takes_lower_samples_at_once_and_higher_ones_by_an_eighth() {
        // tcp_rcv_rtt_update (2025): 50 ms, then 100 ms -> 50 + 50/8 = 56.25, then 40 at once
        let mut w = LinuxWindow::new(&linux_cfg());
        w.rtt_update(50_000, false);
        w.rtt_update(100_000, false);
        assert_eq!(w.rtt_us8 >> 3, 56_250);
        w.rtt_update(200_000, true);
        assert_eq!(w.rtt_us8 >> 3, 56_250, "a window-based sample only lowers");
        w.rtt_update(40_000, true);
        assert_eq!(w.rtt_us8 >> 3, 40_000);
    }
}
