"""TCP cost of aqmlab on the ns-3 anchor dumbbell.

    python bench/tcp_dumbbell.py [--quick] [--reps 3] [--duration 60] [--qdiscs pfifo,fq_codel]

N CUBIC bulk flows, 50 ms base RTT, 1500-byte packets, pfifo 1000p or fq_codel at a 100 Mb/s
bottleneck (N = 8, 64, 256) and N = 8 at 1 Gb/s; 60 s. For each: bottleneck packets per
wall-second (both directions: data + ACKs, as ns-3's count of the bottleneck device is data only,
the data-direction count is printed too), events per packet, with recording ``packets``
(default) and ``summary`` (off). The last column is the cost per data packet relative to the
N = 8 / 100 Mb/s case of the same qdisc and recording level: TCP's costs must be per packet, not
per flow or per window (target: <= 1.5).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import dumbbell, fmt_rate, machine, median_spread, run_child, stamp

CASES = [(8, "100Mbps"), (64, "100Mbps"), (256, "100Mbps"), (8, "1Gbps")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 s runs, 1 repetition")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--qdiscs", default="pfifo,fq_codel")
    ap.add_argument("--levels", default="packets,summary")
    a = ap.parse_args()
    if a.quick:
        a.duration, a.reps = 10.0, 1
    print(f"# tcp_dumbbell  {stamp()}  {machine()}  reps={a.reps}  {a.duration:g} s")
    print(
        "| qdisc | recording | N x rate | data pkts | all pkts | all pkts/wall-s (median, min-max) "
        "| data pkts/wall-s | events/pkt | goodput Mb/s | p50 qdelay ms | peak RSS MB | cost/pkt vs N=8 |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for q in a.qdiscs.split(","):
        for level in a.levels.split(","):
            base = None
            for n, rate in CASES:
                runs = [
                    run_child(dumbbell(n, rate, q, a.duration, level), warmup_s=5.0) for _ in range(a.reps)
                ]
                pps, lo, hi = median_spread([r["pkts_per_wall_s"] for r in runs])
                dpps = median_spread([r["down_tx_packets"] / r["wall_s"] for r in runs])[0]
                rss = median_spread([r["peak_rss_mb"] for r in runs])[0]
                r = runs[0]
                cost = 1.0 / dpps
                if base is None:
                    base = cost
                qd = r["queue_delay_ms"].get("p50")
                qds = "-" if qd is None else f"{qd:.1f}"
                print(
                    f"| {q} | {level} | {n} x {rate} | {r['down_tx_packets']:,} | {r['tx_packets']:,} "
                    f"| {fmt_rate(pps)} ({fmt_rate(lo)}-{fmt_rate(hi)}) | {fmt_rate(dpps)} "
                    f"| {r['events_per_packet']:.2f} | {r['goodput_mbps']:.1f} | {qds} | {rss:.0f} "
                    f"| {cost / base:.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
