#!/usr/bin/env python3
"""One case of the matrix, simulated and emulated, second by second: what each side's queue,
drops and windows did over time (the first step of tracing a difference to its mechanism).

Both runs' `packets` and `flow_series` tables are kept as Parquet in out/trace/<case>/ for a
closer look (sim.packets.parquet, kernel.packets.parquet, ...). Keys after the case id change
the simulated side only (`--set rack=false`: one TCP key on every TCP flow), which is how a run
that changes one thing is made. Needs root, iperf3 and ping (or `--sim-only`).

    sudo .venv/bin/python validation/kernel/trace.py rrul_be-pie-10m-50ms-cubic
    .venv/bin/python validation/kernel/trace.py rrul_be-pie-10m-50ms-cubic --sim-only --set hystart=off
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import matrix

import aqmlab


def case_of(case_id: str) -> matrix.Case:
    for sel in matrix.SELECTIONS:
        for c in matrix.cases(sel):
            if c.id == case_id:
                return c
    raise SystemExit(f"case {case_id!r} is in no selection of matrix.py")


def timeline(res, step_s: float = 1.0) -> list[dict]:
    """Per direction and step: packets in, drops, sojourn p50 / p95 of what was sent (ms), and
    the summed congestion windows of the TCP flows whose data goes that way (segments)."""
    pk = res.tables["packets"].to_pandas()
    fs = res.tables["flow_series"].to_pandas()
    flows = res.tables["flows"].to_pandas()
    end = res.meta["duration_ns"] / 1e9
    rows = []
    for d in ("down", "up"):
        p = pk[pk.dir == d]
        tcp = flows[(flows.kind == "tcp") & (flows.direction == d)].flow
        for t0 in np.arange(0, end, step_s):
            x = p[(p.t_enqueue_ns >= t0 * 1e9) & (p.t_enqueue_ns < (t0 + step_s) * 1e9)]
            sent = x[x.outcome.isin(["sent", "marked"])]
            soj = (sent.t_out_ns - sent.t_enqueue_ns) / 1e6
            w = fs[(fs.flow.isin(tcp)) & (fs.t_ns >= t0 * 1e9) & (fs.t_ns < (t0 + step_s) * 1e9)]
            # each flow's mean window over the step, summed: the two sides sample at different
            # instants (the kernel's flows at their own iperf3 intervals), so no instant has them all
            cwnd = w.groupby("flow").cwnd_bytes.mean().sum() / 1448 if len(w) else 0.0
            rows.append(
                {
                    "dir": d,
                    "t": float(t0),
                    "in": len(x),
                    "drops": int(len(x) - len(sent)),
                    "q50": float(np.median(soj)) if len(soj) else 0.0,
                    "q95": float(np.percentile(soj, 95)) if len(soj) else 0.0,
                    "cwnd": float(cwnd),
                }
            )
    return rows


ACK_MAX = 200
"""A packet of at most this many bytes is a pure ACK (52 bytes with timestamps, SACK blocks 12
more each); every data segment of the matrix is a full 1500-byte packet."""


def drops_by_kind(res, warmup_s: float) -> list[str]:
    """Per direction after the warm-up: data segments and pure ACKs at the bottleneck, and how
    many of each its discipline dropped (a head drop removes whatever the queue held first, so
    which of the two it finds decides how many congestion signals the flows get)."""
    pk = res.tables["packets"].to_pandas()
    pk = pk[pk.t_enqueue_ns >= warmup_s * 1e9]
    out = []
    for d in ("down", "up"):
        x = pk[pk.dir == d]
        kept = x.outcome.isin(["sent", "marked"])
        ack = x["size"] <= ACK_MAX
        out.append(f"{d}: data {int((~ack).sum())} dropped {int((~ack & ~kept).sum())}, "
                   f"ACKs {int(ack.sum())} dropped {int((ack & ~kept).sum())}")  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=10.0, help="seconds before the drop counts")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE on every simulated TCP flow")
    ap.add_argument("--sim-only", action="store_true", help="print the simulated side alone")
    a = ap.parse_args()
    case = case_of(a.case)
    sc = matrix.scenario(case, a.duration, a.profile)
    sim_sc = matrix.set_tcp(matrix.sim_scenario(case, a.duration, a.profile), a.set)
    out = HERE / "out" / "trace" / case.id
    out.mkdir(parents=True, exist_ok=True)
    sides = {"sim": aqmlab.run(sim_sc, seed=a.seed)}
    if not a.sim_only:
        from aqmlab.emulate import emulate

        sides["kernel"] = emulate(sc)[0]
    lines = {}
    for name, res in sides.items():
        for t in ("packets", "flow_series"):
            res.tables[t].to_pandas().to_parquet(out / f"{name}.{t}.parquet")
        lines[name] = timeline(res)
    print("dir   t  | " + " | ".join(f"{n:>6}: in drops q50 q95 cwnd" for n in sides))
    for k in range(len(lines["sim"])):
        r0 = lines["sim"][k]
        cells = [
            f"{r['in']:5d} {r['drops']:4d} {r['q50']:6.1f} {r['q95']:6.1f} {r['cwnd']:5.1f}"
            for r in (lines[n][k] for n in sides)
        ]
        print(f"{r0['dir']:4} {r0['t']:4.0f} | " + " | ".join(cells))
    for name, res in sides.items():
        print(f"{name:>6} after {a.warmup:g} s: " + "; ".join(drops_by_kind(res, a.warmup)))


if __name__ == "__main__":
    main()
