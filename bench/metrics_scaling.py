"""Post-processing cost against the number of flows (issue: metrics must be linear in flows).

Simulates N UDP flows (1 kb/s each, 2 s, series recording) for N in 1k, 10k, 100k and times
``metrics.summarize`` alone. Prints seconds, microseconds per flow and the ratio to the smallest
N's per-flow cost (1.0 = linear).

    python bench/metrics_scaling.py [--flows 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import time

from aqmlab import metrics
from aqmlab.api import simulate


def scenario(n: int) -> dict:
    return {
        "name": f"flows{n}", "duration": "2s",
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps"}, "up": {"rate": "100Mbps"}},
        "flows": [{"kind": "udp", "rate": "1kbps", "count": n}],
        "record": {"level": "series", "interval": "100ms"},
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, nargs="+", default=[1000, 10000, 100000])
    a = ap.parse_args()
    base = None
    print(f"{'flows':>8} {'summarize s':>12} {'us/flow':>9} {'ratio':>6}")
    for n in a.flows:
        tables, meta = simulate(scenario(n), 1)
        t0 = time.perf_counter()
        metrics.summarize(tables, meta, warmup_s=0.5)
        dt = time.perf_counter() - t0
        per = dt / n * 1e6
        base = base or per
        print(f"{n:>8} {dt:>12.3f} {per:>9.1f} {per / base:>6.2f}")


if __name__ == "__main__":
    main()
