#!/usr/bin/env python3
"""The simulated side of one case with its base RTT moved by fractions of a packet time: how much
a result owes to the phase of the flows' packets against the bottleneck's service, which the
model's exact timing keeps fixed from seed to seed (a drop-tail gateway's phase effects: S. Floyd,
V. Jacobson, "On Traffic Phase Effects in Packet-Switched Gateways", Internetworking: Research
and Experience 3(3), 1992). Prints each flow label's goodput per offset and the mean over one
packet time; no root needed.

    .venv/bin/python validation/kernel/phase.py rtt_pair-pfifo-50m-160ms+10ms-cubic --select l4s_pairs
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matrix

import aqmlab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("--select", default="core", choices=list(matrix.SELECTIONS))
    ap.add_argument("--steps", type=int, default=24, help="offsets over one packet time (default 24)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    case = next((c for c in matrix.cases(a.select) if c.id == a.case), None)
    if case is None:
        raise SystemExit(f"case {a.case!r} is not in selection {a.select!r}")
    duration, warmup = matrix.WINDOW_S.get(a.select, matrix.DEFAULT_WINDOW_S)
    stored = matrix.OUT / f"{a.select}.json"
    rows = json.loads(stored.read_text()) if stored.exists() else []
    emus = [r for row in rows if row["id"] == case.id for r in row["emu"]]
    # the matrix's own simulated side for this seed (its start one kernel run's), then shifted
    harness = argparse.Namespace(duration=duration, profile=None, set=[], **matrix.harness_defaults())
    step_us = matrix.packet_time_ms(case) * 1e3 / a.steps
    shares = []
    for k in range(a.steps + 1):
        sc = matrix.cli_scenario(case, harness, emus, a.seed)
        rtt_us = float(sc["topology"]["rtt"].removesuffix("us"))
        sc["topology"]["rtt"] = f"{rtt_us + k * step_us:.3f}us"
        fig = matrix.figures(aqmlab.run(sc, seed=a.seed, warmup_s=warmup), warmup)
        shares.append({label: v["goodput"] for label, v in sorted(fig["labels"].items())})
        cells = "  ".join(f"{label} {g:7.2f}" for label, g in shares[-1].items())
        print(f"base RTT + {k * step_us:7.1f} us: {cells}", flush=True)
    period = shares[:-1]  # the last offset is the first's, one packet time on
    means = "  ".join(f"{label} {np.mean([s[label] for s in period]):7.2f}" for label in period[0])
    print(f"mean over one packet time ({a.steps} offsets): {means}")


if __name__ == "__main__":
    main()
