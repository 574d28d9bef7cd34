"""The cost of a discipline written in Python: the worked CoDel (aqmlab.examples.codel) against
the built-in `codel` on the same runs.

    python bench/pyqdisc.py [--reps 3] [--duration 30]

Two workloads, both directions under the discipline, recording off: rrul_be (4 TCP flows each
way and a ping, 10/10 Mb/s: few packets, most time elsewhere in the core) and the UDP overload of
core_udp.py at 100 Mb/s (every event is a queue event). Prints bottleneck packets per
wall-second for each (median of --reps fresh child processes, with min-max) and the slowdown.
The two runs are the same simulation (tests/python/test_pyqdisc.py checks it packet for packet).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fmt_rate, machine, median_spread, run_child, stamp

from aqmlab.scenario import apply_overrides, load

PYCODEL = {"kind": "python", "class": "aqmlab.examples.codel:Codel"}


def workloads(duration: float) -> dict[str, dict]:
    udp = {
        "name": "udp_overload",
        "duration": f"{duration}s",
        "record": {"level": "summary"},
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps"}, "up": {"rate": "100Mbps"}},
        "flows": [{"kind": "udp", "direction": "down", "rate": "40Mbps", "count": 3}],
    }
    rrul = apply_overrides(load("rrul_be"), {"duration": f"{duration}s", "record.level": "summary"})
    return {"rrul_be": rrul, "udp 1.2x overload, 100 Mb/s": udp}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=30.0)
    a = ap.parse_args()
    print(f"# {stamp()} {machine()}")
    print("| workload | built-in codel, pkts/s | Python CoDel, pkts/s | slowdown |")
    print("|---|---|---|---|")
    for name, sc in workloads(a.duration).items():
        rates = {}
        for label, q in (("rust", "codel"), ("python", PYCODEL)):
            v = apply_overrides(sc, {"topology.down.qdisc": q, "topology.up.qdisc": q})
            runs = [run_child(v) for _ in range(a.reps)]
            rates[label] = median_spread([r["pkts_per_wall_s"] for r in runs])
        (r, rlo, rhi), (p, plo, phi) = rates["rust"], rates["python"]
        print(f"| {name} | {fmt_rate(r)} ({fmt_rate(rlo)}-{fmt_rate(rhi)}) | "
              f"{fmt_rate(p)} ({fmt_rate(plo)}-{fmt_rate(phi)}) | {r / p:.1f}x |")  # fmt: skip


if __name__ == "__main__":
    main()
