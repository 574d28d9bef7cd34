//! The forwarder end to end without root: Unix datagram socket pairs stand in for the two TUN
//! devices (both deliver one whole packet per read). Expected values follow from the path's
//! definition: a FIFO of 3 packets behind a serialiser keeps 1 + 3 of a burst and drops the
//! rest at the tail; back-to-back transmissions at 1 Mb/s start exactly size * 8 us apart (the
//! forwarder chains them at nominal times); bytes arrive unchanged and never before the
//! propagation delay has passed.

use aqmlab_emu::{forward, Io};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

fn seqpacket_pair() -> [RawFd; 2] {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK,
            0,
            fds.as_mut_ptr(),
        )
    };
    assert_eq!(r, 0);
    fds
}

/// An IPv4/UDP packet of `len` bytes from 10.0.0.1:40000 to 10.0.0.2:5201 carrying `seq`.
fn packet(len: usize, seq: u8) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&[10, 0, 0, 1]);
    p[16..20].copy_from_slice(&[10, 0, 0, 2]);
    p[20..22].copy_from_slice(&40000u16.to_be_bytes());
    p[22..24].copy_from_slice(&5201u16.to_be_bytes());
    p[28] = seq;
    p
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[test]
fn a_burst_through_a_three_packet_fifo() {
    let sc = aqmlab_core::scenario::parse(
        r#"{"name": "fwd", "duration": "2s",
            "topology": {"rtt": "20ms",
                         "down": {"rate": "1Mbps", "qdisc": "pfifo", "limit": "3p"},
                         "up": {"rate": "1Mbps", "qdisc": "pfifo", "limit": "3p"}}}"#,
    )
    .expect("valid scenario");
    let [client_app, client_fwd] = seqpacket_pair();
    let [server_app, server_fwd] = seqpacket_pair();
    let mut stop = [0; 2];
    // SAFETY: `stop` has room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(stop.as_mut_ptr()) }, 0);
    let t0 = monotonic_ns();
    let io = Io {
        client: client_fwd,
        server: server_fwd,
        stop: stop[0],
        t0,
        realtime: false,
    };
    let fwd = std::thread::spawn(move || forward(&sc, 1, &io, &[]));

    let sent: Vec<Vec<u8>> = (0..10).map(|k| packet(1000, k)).collect();
    let start = Instant::now();
    for p in &sent {
        // SAFETY: `p` is valid for its length.
        let n = unsafe { libc::write(client_app, p.as_ptr().cast(), p.len()) };
        assert_eq!(n, p.len() as isize);
    }
    // 4 packets take 32 ms of serialisation after 10 ms of propagation: wait well past that.
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    while start.elapsed() < Duration::from_millis(400) {
        // SAFETY: `buf` is valid for its length.
        let n = unsafe { libc::read(server_app, buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            got.push((buf[..n as usize].to_vec(), monotonic_ns() - t0));
        } else {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    // SAFETY: writing one byte to the pipe's write end.
    unsafe { libc::write(stop[1], b"x".as_ptr().cast(), 1) };
    let (run, stats) = fwd.join().expect("forwarder thread").expect("forwarder ran");

    // FIFO of 3 behind the serialiser: the first is on the wire, 3 wait, 6 are tail-dropped.
    assert_eq!(got.len(), 4, "delivered");
    for (k, (bytes, _)) in got.iter().enumerate() {
        assert_eq!(bytes, &sent[k], "packet {k} unchanged and in order");
    }
    let up = &run.links[0];
    assert_eq!(up.stats.arrivals, 10);
    assert_eq!(up.stats.tx_packets, 4);
    assert_eq!(up.stats.drops[0], 6, "overlimit drops");
    assert_eq!(stats.packets, 10);
    // Each arrives no sooner than the propagation (rtt/2 = 10 ms) plus its serialisation.
    for (k, (_, at)) in got.iter().enumerate() {
        assert!(
            *at >= 10_000_000 + (k as u64 + 1) * 8_000_000,
            "packet {k} at {at} ns"
        );
    }
    // Back-to-back transmissions start exactly 1000 B * 8 / 1 Mb/s = 8 ms apart.
    let p = &run.packets;
    let sent_at: Vec<u64> = (0..p.t_out.len())
        .filter(|&i| p.outcome[i] == 0)
        .map(|i| p.t_out[i])
        .collect();
    assert_eq!(sent_at.len(), 4);
    for w in sent_at.windows(2) {
        assert_eq!(w[1] - w[0], 8_000_000);
    }
    // The queue is reached after the client-side access delay (rtt/4 = 5 ms).
    assert!(sent_at[0] >= 5_000_000, "first transmission at {} ns", sent_at[0]);
}
