"""Cost of a path's length: the same UDP overload through chains of 1, 2, 4 and 8 hops.

    python bench/hops.py [--reps 3] [--duration 20]

4 x 300 Mb/s of 1500-byte CBR UDP cross k-1 hops of 10 Gb/s (no queue builds there) and then a
1 Gb/s pfifo of 1000 packets, recording off. Every extra hop serialises each packet once more,
so the work grows by one hop transmission per packet and hop. The script prints the wall time
per million packets delivered through the bottleneck, and the marginal cost of one extra hop
transmission, (wall(k) - wall(1)) / (hop transmissions(k) - hop transmissions(1)); cost linear in
the number of hops shows as a marginal cost that stays flat as k grows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, median_spread, run_child, stamp


def chain(k: int, duration: float) -> dict:
    hops = [{"name": f"fast{i}", "direction": "down", "rate": "10Gbps"} for i in range(k - 1)]
    hops.append({"name": "neck", "direction": "down", "rate": "1Gbps", "qdisc": "pfifo", "limit": "1000p"})
    hops.append({"name": "back", "direction": "up", "rate": "1Gbps"})
    return {
        "name": f"hops_{k}",
        "duration": f"{duration}s",
        "seed": 1,
        "topology": {"rtt": "20ms", "hops": hops},
        "flows": [
            {"kind": "udp", "direction": "down", "rate": "300Mbps", "count": 4, "packet_size": "1500B"}
        ],
        "record": {"level": "summary"},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=20.0)
    a = ap.parse_args()
    print(stamp(), machine())
    print(f"{'hops':>4} {'hop tx (M)':>10} {'s per M bottleneck pkts':>24} {'us per extra hop tx':>20}")
    first = None
    for k in (1, 2, 4, 8):
        runs = [run_child(chain(k, a.duration)) for _ in range(a.reps)]
        wall, lo, hi = median_spread([r["wall_s"] for r in runs])
        tx = runs[0]["tx_packets"]
        neck = runs[0]["down_tx_packets"]
        first = first or (wall, tx)
        marginal = (wall - first[0]) / (tx - first[1]) * 1e6 if k > 1 else float("nan")
        print(
            f"{k:>4} {tx / 1e6:>10.2f} {wall / neck * 1e6:>10.3f} ({lo / neck * 1e6:.3f}-{hi / neck * 1e6:.3f}) {marginal:>20.3f}"
        )


if __name__ == "__main__":
    main()
