"""aqmlab against ns-3 on the same dumbbell, back to back.

    python bench/compare.py [--reps 3] [--duration 60] [--scenarios 8x100Mbps,...] [--qdiscs ...]
                            [--ns3-dir bench/ns3] [--level packets]

For each scenario (N CUBIC bulk flows, 50 ms base RTT, pfifo 1000p or fq_codel at the
bottleneck: N = 8, 64, 256 at 100 Mb/s and N = 8 at 1 Gb/s) it runs aqmlab and ns-3
alternately --reps times and prints the medians: data packets through the bottleneck per
wall-second (ns-3 counts the bottleneck device's data direction; aqmlab's number here is the
same direction), peak RSS, the aqmlab/ns-3 speed ratio (target >= 20), and goodput and queueing
delay of both so the reader can see that the same work was done.

aqmlab's peak RSS is given three ways: the whole Python process (interpreter, pyarrow, numpy,
the recorded tables and the Python metrics over them), the same process's high-water mark when
the simulation had returned its tables, and the Rust core alone (the run_json example with
recording off, built by `cargo build --release -p aqmlab-core --example run_json`; found via
$AQMLAB_CORE_BIN or $CARGO_TARGET_DIR; "-" if not built). ns-3's is its whole process.

The ns-3 side is bench/ns3/run.py's ``run_ns3`` (built by bench/ns3/build.sh), imported at run
time from --ns3-dir (default: the repository's bench/ns3; override with $AQMLAB_NS3_DIR).
aqmlab runs with recording level --level (default ``packets``: one row per bottleneck packet,
the comparable of ns-3's sojourn-time trace).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import dumbbell, fmt_rate, machine, median_spread, run_child, run_core, stamp

SCENARIOS = "8x100Mbps,64x100Mbps,256x100Mbps,8x1Gbps"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--warmup", type=float, default=5.0)
    ap.add_argument("--scenarios", default=SCENARIOS)
    ap.add_argument("--qdiscs", default="fq_codel,pfifo")
    ap.add_argument("--level", default="packets", help="aqmlab recording level")
    ap.add_argument("--ns3-dir", default=os.environ.get("AQMLAB_NS3_DIR", str(HERE / "ns3")))
    a = ap.parse_args()

    sys.path.insert(0, a.ns3_dir)
    from run import run_ns3  # bench/ns3/run.py

    print(f"# compare  {stamp()}  {machine()}  reps={a.reps}  {a.duration:g} s  aqmlab recording={a.level}")
    print(
        "| scenario | qdisc | aqmlab pkts/wall-s | ns-3 pkts/wall-s | ratio (min-max) "
        "| aqmlab RSS MB: process / after run / core only | ns-3 RSS MB "
        "| goodput Mb/s aqmlab / ns-3 | p50 qdelay ms aqmlab / ns-3 | p95 qdelay ms aqmlab / ns-3 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for scen in a.scenarios.split(","):
        n, rate = scen.split("x")
        for q in a.qdiscs.split(","):
            ours, theirs, core = [], [], []
            for _ in range(a.reps):
                c = run_core(dumbbell(int(n), rate, q, a.duration, "summary"))
                if c is not None:
                    core.append(c["peak_rss_mb"])
                r = run_child(dumbbell(int(n), rate, q, a.duration, a.level), warmup_s=a.warmup)
                r["data_pps"] = r["down_tx_packets"] / r["wall_s"]
                ours.append(r)
                theirs.append(
                    run_ns3(int(n), rate, q, a.duration, warmup=a.warmup, limit=1000 if q == "pfifo" else 0)
                )
            ratios = [o["data_pps"] / t["pkts_per_wall_s"] for o, t in zip(ours, theirs)]
            rmed, rlo, rhi = median_spread(ratios)
            med = lambda xs: median_spread(xs)[0]
            o_pps = med([o["data_pps"] for o in ours])
            t_pps = med([t["pkts_per_wall_s"] for t in theirs])
            o_rss = med([o["peak_rss_mb"] for o in ours])
            o_run = med([o["run_rss_mb"] for o in ours])
            c_rss = f"{med(core):.0f}" if core else "-"
            t_rss = med([t["peak_rss_mb"] for t in theirs])
            o, t = ours[0], theirs[0]
            oq, tq = o["queue_delay_ms"], t["queue_delay_ms"]
            print(
                f"| {n} x {rate} | {q} | {fmt_rate(o_pps)} | {fmt_rate(t_pps)} | {rmed:.0f}x ({rlo:.0f}-{rhi:.0f}) "
                f"| {o_rss:.0f} / {o_run:.0f} / {c_rss} | {t_rss:.0f} | {o['goodput_mbps']:.1f} / {t['goodput_mbps']:.1f} "
                f"| {_ms(oq.get('p50'))} / {_ms(tq['p50'])} "
                f"| {_ms(oq.get('p95'))} / {_ms(tq['p95'])} |",
                flush=True,
            )


def _ms(v: float | None) -> str:
    """A delay in ms; "-" when the run did not record it (``--level summary`` keeps no sojourn
    times, so its delay percentiles are None)."""
    return "-" if v is None else f"{v:.2f}"


if __name__ == "__main__":
    main()
