//! Test helpers shared by the sender's modules.

pub(super) use super::state::*;
pub(super) use crate::packet::{flags, Dir, Kind, Packet, SackBlock};
pub(super) use crate::transport::tcp::config::TcpConfig;
pub(super) use crate::transport::Endpoint;
pub(super) use crate::units::{Time, MS};

pub(super) const MSS: u64 = 1000;

/// A NewReno sender of 50 segments.
pub(super) fn config(sack: bool, iw: u32) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        iw,
        sack,
        cc: "newreno".into(),
        bytes: Some(50 * MSS),
        ..crate::transport::tcp::profiles::rfc()
    }
}

pub(super) fn established(sack: bool, iw: u32) -> (TcpSender, Vec<Packet>) {
    established_with(config(sack, iw))
}

pub(super) fn established_with(cfg: TcpConfig) -> (TcpSender, Vec<Packet>) {
    established_at(cfg, 100)
}

/// The SYN-ACK answering a sender's SYN sent at 0 (its timestamp echoed).
pub(super) fn synack() -> Packet {
    Packet {
        kind: Kind::Tcp,
        tcp_flags: flags::SYN | flags::ACK,
        ack: 1,
        ts_ecr: 0,
        ..Default::default()
    }
}

/// A sender whose SYN left at 0 and whose SYN-ACK arrives at `at` (the first RTT sample).
pub(super) fn established_at(cfg: TcpConfig, at: Time) -> (TcpSender, Vec<Packet>) {
    let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
    let mut out = vec![];
    s.start(0, &mut out);
    assert_eq!(out.len(), 1);
    out.clear();
    s.on_packet(&synack(), at, &mut out);
    if cfg.handshake_ack {
        // the handshake's pure ACK leaves first (`handshake_ack`); the tests look at the data
        let p = out.remove(0);
        assert_eq!((p.payload, p.tcp_flags, p.ts_ecr), (0, flags::ACK, 0));
    }
    (s, out)
}

pub(super) fn ack(s: &mut TcpSender, ack: u64, sacked: &[(u64, u64)], now: Time) -> Vec<Packet> {
    ack_echoing(s, ack, sacked, now, 100)
}

/// The same, echoing TSval `ts_ecr` (the send time of the segment it answers: an RTT sample).
pub(super) fn ack_echoing(
    s: &mut TcpSender,
    ack: u64,
    sacked: &[(u64, u64)],
    now: Time,
    ts_ecr: Time,
) -> Vec<Packet> {
    ack_blocks_echoing(s, ack, &sack_blocks(sacked), now, ts_ecr)
}

/// SACK blocks of segment ranges [a, b) (MSS-sized segments from sequence number 1).
pub(super) fn sack_blocks(sacked: &[(u64, u64)]) -> Vec<SackBlock> {
    sacked
        .iter()
        .map(|&(a, b)| SackBlock {
            start: 1 + a * MSS,
            end: 1 + b * MSS,
        })
        .collect()
}

/// A pure ACK of `ack` with SACK `blocks`, echoing TSval `ts_ecr`.
pub(super) fn ack_packet(ack: u64, blocks: &[SackBlock], ts_ecr: Time) -> Packet {
    let mut p = Packet {
        kind: Kind::Tcp,
        tcp_flags: flags::ACK,
        ack,
        ts_ecr,
        ..Default::default()
    };
    p.set_sacks(blocks);
    p
}

/// An ACK of `ack` with SACK `blocks` in sequence numbers (echoing TSval 100) at `now`, and what
/// the sender sends on it.
pub(super) fn ack_blocks(s: &mut TcpSender, ack: u64, blocks: &[SackBlock], now: Time) -> Vec<Packet> {
    ack_blocks_echoing(s, ack, blocks, now, 100)
}

pub(super) fn ack_blocks_echoing(
    s: &mut TcpSender,
    ack: u64,
    blocks: &[SackBlock],
    now: Time,
    ts_ecr: Time,
) -> Vec<Packet> {
    let mut out = vec![];
    s.on_packet(&ack_packet(ack, blocks, ts_ecr), now, &mut out);
    out
}

pub(super) fn segs(out: &[Packet]) -> Vec<u64> {
    out.iter().map(|p| (p.seq - 1) / MSS).collect()
}

/// A Linux-profile sender (RACK, TLP, PRR; MSS 1000) of `segments` segments whose
/// handshake took 100 ms; its initial window leaves at 100 ms.
pub(super) fn linux_sender(segments: u64, iw: u32) -> (TcpSender, Vec<Packet>) {
    linux_sender_with(segments, iw, 0)
}

/// `linux_sender` with its RACK and loss-probe timers on a kernel of `timer_hz` ticks a second.
pub(super) fn linux_sender_with(segments: u64, iw: u32, timer_hz: u32) -> (TcpSender, Vec<Packet>) {
    linux_sender_cfg(TcpConfig {
        iw,
        timer_hz,
        ..linux_config(segments)
    })
}

/// The configuration of `linux_sender` (IW 10).
pub(super) fn linux_config(segments: u64) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        iw: 10,
        cc: "newreno".into(),
        bytes: Some(segments * MSS),
        prr: true,
        rack: true,
        tlp: true,
        ..crate::transport::tcp::profiles::rfc()
    }
}

/// A sender of `cfg` whose handshake took 100 ms; its initial window leaves at 100 ms.
pub(super) fn linux_sender_cfg(cfg: TcpConfig) -> (TcpSender, Vec<Packet>) {
    let mut s = TcpSender::new(&cfg, 0, Dir::Up).unwrap();
    let mut out = vec![];
    s.start(0, &mut out);
    let synack = Packet {
        kind: Kind::Tcp,
        tcp_flags: flags::SYN | flags::ACK,
        ack: 1,
        ..Default::default()
    };
    out.clear();
    s.on_packet(&synack, 100 * MS, &mut out);
    (s, out)
}

/// An ACK at `now_ms` echoing a segment sent at `ecr_ms`.
pub(super) fn ack_ms(
    s: &mut TcpSender,
    una: u64,
    sacked: &[(u64, u64)],
    now_ms: u64,
    ecr_ms: u64,
) -> Vec<Packet> {
    ack_echoing(s, 1 + una * MSS, sacked, now_ms * MS, ecr_ms * MS)
}
