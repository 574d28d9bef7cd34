#!/usr/bin/env python3
"""One case second by second, as a mean over several kernel runs and many simulated seeds: when a
difference between the two sides appears (the start's slow start, its first losses, the climb
after them) and whether it then persists or closes.

Per direction and second: packets into the bottleneck, drops, the sojourn p50 (ms, with its
standard error over the runs) and the summed windows of the TCP flows sending that way (segments;
the kernel's from tcp_info as iperf3 reports it every 0.1 s, the model's from `flow_series`).
After the table, per side: the fast recoveries per run and, for the kernel, its HyStart exits
(tcp_cubic.c `hystart_update`'s counters: exits by the ACK train and by the delay increase, and
the mean window at them; the counters are the namespaces', so they count iperf3's control
connections too: each sends its report at the end of a run in a slow start of its own, which
ends by a HyStart exit once the report is long: 8 exits in every 6 s run of two-way traffic at
100 Mbit/s, 16 in every 30 s run). The kernel runs are kept in out/profile/<case>.<duration>s.json and
reused; `--runs` adds to them. Each simulated seed starts its groups and flows as one of those
same kernel runs did (drawn for the seed), so both sides' means are over the same starts. Needs
root, iperf3 and ping for new kernel runs.

    sudo .venv/bin/python validation/kernel/profile.py rrul_be-pie-100m-50ms-cubic --runs 8
    .venv/bin/python validation/kernel/profile.py rrul_be-pie-100m-50ms-cubic --seeds 32  # stored runs
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

HYSTART = (
    "TcpExtTCPHystartTrainDetect",
    "TcpExtTCPHystartTrainCwnd",
    "TcpExtTCPHystartDelayDetect",
    "TcpExtTCPHystartDelayCwnd",
)


def kernel_runs(case: matrix.Case, duration_s: float, store: Path, more: int) -> list[dict]:
    """The stored kernel runs of `case` over `duration_s`, with `more` new ones added (each its
    per-second timeline, the kernel's TCP counters and when each flow's data began)."""
    from aqmlab.emulate import emulate

    runs = json.loads(store.read_text()) if store.exists() else []
    for _ in range(more):
        res = emulate(matrix.scenario(case, duration_s), seed=len(runs) + 1)[0]
        runs.append(
            {
                "timeline": matrix.timeline(res),
                "kernel_counters": res.meta["emulated"]["kernel_counters"],
                "first_data_s": matrix.first_data_s(res),
                "syn_s": matrix.syn_s(res),
            }
        )
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(runs))
        print(f"kernel run {len(runs)} done", file=sys.stderr, flush=True)
    return runs


def model_runs(case: matrix.Case, duration_s: float, kernel: list[dict], seeds: int) -> list[dict]:
    """`seeds` simulated runs, each group and flow starting as one of the compared `kernel` runs
    drawn for the seed began them (`matrix.cli_scenario`): the two sides' starts come from the
    same runs, as the uploads' lag decides the start's mode (validation/kernel/README.md, "The
    uploads' lag, run by run")."""
    a = argparse.Namespace(duration=duration_s, profile=None, set=[], **matrix.harness_defaults())
    out = []
    for s in range(1, seeds + 1):
        res = aqmlab.run(matrix.cli_scenario(case, a, kernel, s), seed=s)
        flows = res.tables["flows"].to_pandas()
        out.append(
            {
                "timeline": matrix.timeline(res),
                "recoveries": int(flows[flows.kind == "tcp"].fast_recoveries.sum()),
            }
        )
    return out


def mean_profile(runs: list[dict], direction: str, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Per second, the mean of `key` over `runs` and its standard error."""
    m = np.array([[r[key] for r in run["timeline"] if r["dir"] == direction] for run in runs], dtype=float)
    return m.mean(0), m.std(0, ddof=1) / np.sqrt(len(m)) if len(m) > 1 else np.zeros(m.shape[1])


def table(model: list[dict], kernel: list[dict]) -> list[str]:
    keys = ("in", "drops", "q50", "cwnd")
    out = [
        f"dir    t | model ({len(model)} seeds): in drops q50 (se) cwnd | kernel ({len(kernel)} runs): same"
    ]
    for d in ("down", "up"):
        sides = [{k: mean_profile(runs, d, k) for k in keys} for runs in (model, kernel)]
        for t in range(len(sides[0]["in"][0])):
            cells = [
                f"{s['in'][0][t]:6.0f} {s['drops'][0][t]:5.1f} {s['q50'][0][t]:5.1f} ({s['q50'][1][t]:4.1f}) "
                f"{s['cwnd'][0][t]:6.0f}"
                for s in sides
            ]
            out.append(f"{d:4} {t:4d} | " + " | ".join(cells))
    return out


def counters(model: list[dict], kernel: list[dict]) -> list[str]:
    rec_m = [r["recoveries"] for r in model]
    rec_k = [r["kernel_counters"].get("TcpExtTCPSackRecovery", 0) for r in kernel]
    se = {k: np.std(v, ddof=1) / np.sqrt(len(v)) for k, v in (("m", rec_m), ("k", rec_k))}
    out = [
        f"fast recoveries per run: model {np.mean(rec_m):.1f} (se {se['m']:.1f}), "
        + f"kernel {np.mean(rec_k):.1f} (se {se['k']:.1f})"
    ]
    hy = [[r["kernel_counters"].get(k) for k in HYSTART] for r in kernel]
    hy = [h for h in hy if None not in h]
    if hy:
        train, train_cwnd, delay, delay_cwnd = np.array(hy, dtype=float).sum(0)
        out.append(
            f"kernel HyStart exits per run ({len(hy)} runs): by the ACK train {train / len(hy):.1f} "
            f"(mean window {train_cwnd / max(train, 1):.1f}), by the delay increase {delay / len(hy):.1f} "
            f"(mean window {delay_cwnd / max(delay, 1):.1f})"
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("case")
    ap.add_argument(
        "--select", default="rates", choices=list(matrix.SELECTIONS), help="the selection the case is in"
    )
    ap.add_argument("--duration", type=float, default=matrix.DEFAULT_WINDOW_S[0])
    ap.add_argument("--runs", type=int, default=0, help="kernel runs to add to the stored ones")
    ap.add_argument("--seeds", type=int, default=32, help="simulated runs (default 32)")
    a = ap.parse_args()
    case = next((c for c in matrix.cases(a.select) if c.id == a.case), None)
    if case is None:
        raise SystemExit(f"case {a.case!r} is not in selection {a.select!r}")
    store = matrix.OUT / "profile" / f"{case.id}.{a.duration:g}s.json"
    kernel = kernel_runs(case, a.duration, store, a.runs)
    if not kernel:
        raise SystemExit(f"no stored kernel runs in {store}: add some with --runs N (needs root)")
    model = model_runs(case, a.duration, kernel, a.seeds)
    print("\n".join(table(model, kernel) + counters(model, kernel)))


if __name__ == "__main__":
    main()
