//! Runs one scenario given as a JSON file and prints events (by kind), bottleneck packets and
//! wall time: a Python-free driver for profiling (`perf record`, `valgrind --tool=callgrind`).
//! The digest covers what the run recorded, not how many events it took.
//!
//! `cargo run --release -p aqmlab-core --example run_json -- scenario.json [seed]`

use aqmlab_core::packet::Dir;
use aqmlab_core::sim::EventKind;
use std::time::Instant;

/// The extension's allocator (crates/aqmlab-py/src/lib.rs says why).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: run_json SCENARIO.json [SEED]");
    let json = std::fs::read_to_string(path).expect("readable scenario file");
    let sc = aqmlab_core::scenario::parse(&json).expect("valid scenario");
    let seed = args.get(2).map_or(sc.seed, |s| s.parse().expect("integer seed"));
    let t0 = Instant::now();
    let r = aqmlab_core::scenario::build::run(&sc, seed).expect("runs");
    let wall = t0.elapsed().as_secs_f64();
    let tx: u64 = r.links.iter().map(|l| l.stats.tx_packets).sum();
    // The down direction's bottleneck: the data packets of the usual download scenario.
    let down_tx: u64 = r
        .links
        .iter()
        .filter(|l| l.bottleneck && l.dir == Dir::Down)
        .map(|l| l.stats.tx_packets)
        .sum();
    let kinds: Vec<String> = EventKind::ALL
        .iter()
        .map(|&k| format!("\"{}\": {}", k.name(), r.event_kinds[k as usize]))
        .collect();
    // A digest of everything recorded, to check that an optimisation changed nothing.
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let pk = &r.packets;
    for i in 0..pk.flow.len() {
        h.add(&[
            pk.dir[i] as u64,
            pk.flow[i] as u64,
            pk.size[i] as u64,
            pk.t_enqueue[i],
            pk.t_out[i],
            pk.outcome[i] as u64,
        ]);
    }
    h.add(&r.queue.t);
    h.add(&r.queue.backlog_bytes);
    h.add(&r.queue.drops);
    h.add(&r.flow_series.delivered_bytes);
    h.add(&r.flow_series.cwnd_bytes);
    h.add(&r.flow_series.srtt);
    for f in &r.flows {
        h.add(
            format!("{:?}", f.report)
                .as_bytes()
                .iter()
                .map(|&b| b as u64)
                .collect::<Vec<_>>()
                .as_slice(),
        );
    }
    for l in &r.links {
        h.add(
            format!("{:?}", l.stats)
                .as_bytes()
                .iter()
                .map(|&b| b as u64)
                .collect::<Vec<_>>()
                .as_slice(),
        );
    }
    println!(
        "{{\"wall_s\": {wall:.4}, \"events\": {}, \"tx_packets\": {tx}, \"down_tx_packets\": {down_tx}, \"pkts_per_wall_s\": {:.0}, \"events_per_packet\": {:.3}, \"events_per_down_packet\": {:.3}, \"event_kinds\": {{{}}}, \"packet_rows\": {}, \"digest\": \"{:016x}\"}}",
        r.events,
        tx as f64 / wall,
        r.events as f64 / tx.max(1) as f64,
        r.events as f64 / down_tx.max(1) as f64,
        kinds.join(", "),
        r.packets.flow.len(),
        h.0
    );
}

struct Fnv(u64);

impl Fnv {
    fn add(&mut self, xs: &[u64]) {
        for &x in xs {
            for b in x.to_le_bytes() {
                self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
}
