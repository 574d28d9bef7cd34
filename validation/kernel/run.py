#!/usr/bin/env python3
"""The simulated TCP against the Linux kernel's, case by case (validation/kernel/README.md).

Each case of a selection (matrix.py) runs simulated (`aqmlab.run`, one run per seed) and
emulated (`aqmlab emulate`: the kernel's TCP between two network namespaces through the same
qdisc and path code, one run per repeat) from one scenario. Results go to out/<selection>.json,
one entry per case as it finishes, so an interrupted matrix resumes where it stopped (`--redo`
runs the cases again). The table (compare.py) is printed at the end. Needs root, iperf3 and ping.

    sudo .venv/bin/python validation/kernel/run.py --select core
    sudo .venv/bin/python validation/kernel/run.py --select all --seeds 3 --repeats 2
    .venv/bin/python validation/kernel/compare.py out/core.json     # the table again
    .venv/bin/python validation/kernel/run.py --select core --resim  # a changed model against the stored kernel runs
    sudo .venv/bin/python validation/kernel/run.py --select core --only rrul_be --more --repeats 3  # more kernel runs
    sudo .venv/bin/python validation/kernel/run.py --select cc_pair --only codel --repeats 4 \
        --set sack_compress=false --sysctl net.ipv4.tcp_comp_sack_nr=0 --out out/cc_pair.nocomp.json  # one thing changed on both sides
    sudo .venv/bin/python validation/kernel/run.py --select core --only rrul_be-pie-10m --repeats 8 \
        --qdisc-set beta=0 --out out/core.pie_beta0.json  # the discipline changed, on both sides
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import compare
import matrix

import aqmlab
from aqmlab.emulate import emulate

HARNESS = matrix.harness_defaults()
"""The command-line switches that set an older simulated harness or change one thing of it, at
their defaults; each is kept in a results row when not at its default."""


def harness_changes(a: argparse.Namespace) -> dict:
    """The switches of `HARNESS` that the command line `a` moves from their defaults."""
    return {k: getattr(a, k) for k, d in HARNESS.items() if getattr(a, k) != d}


def simulate(case: matrix.Case, a: argparse.Namespace, emus: list[dict]) -> list[dict]:
    """The simulated side of a case: one run per seed, each group as late as the kernel's was in
    `emus` (`matrix.harness_lags`), the flows within it as the kernel's recorded groups began
    (`matrix.recorded_offsets`; with `--uniform-starts`, each flow's start drawn per seed)."""
    runs = []
    for s in range(1, a.seeds + 1):
        sc = matrix.cli_scenario(case, a, emus, s)
        sc = matrix.set_qdisc(matrix.set_tcp(sc, a.set), a.qdisc_set)
        runs.append(matrix.figures(aqmlab.run(sc, seed=s, warmup_s=a.warmup), a.warmup))
    return runs


def kernel_runs(case: matrix.Case, a: argparse.Namespace, done: int = 0) -> list[dict]:
    """The kernel's side of a case: `a.repeats` emulated runs, after `done` stored ones. Each
    run has its own seed (done + 1, done + 2, ...), as the simulated runs do: the emulator's
    own draws (a wire's random loss) then differ from run to run, where one seed would give
    every run the same losses."""
    sc = matrix.set_qdisc(matrix.scenario(case, a.duration, a.profile), a.qdisc_set)
    emus = []
    for k in range(a.repeats):
        res, _ = emulate(sc, seed=done + k + 1, warmup_s=a.warmup, sysctls=sysctls(a))
        emus.append(matrix.figures(res, a.warmup))
        emus[-1]["kernel_counters"] = res.meta["emulated"]["kernel_counters"]
        emus[-1]["machine"] = f"{res.meta['emulated']['kernel']}; {res.meta['emulated']['host']}"
    return emus


def sysctls(a: argparse.Namespace) -> dict[str, str]:
    """The kernel settings of `--sysctl NAME=VALUE`: the kernel's side of a run that changes one
    thing, as `--set` is the model's."""
    return dict(item.split("=", 1) for item in a.sysctl)


def run_case(case: matrix.Case, a: argparse.Namespace) -> dict:
    emus = kernel_runs(case, a)
    sims = simulate(case, a, emus)
    return {
        "case": case.as_dict(),
        "id": case.id,
        "profile": a.profile or "default",
        "set": a.set,
        **harness_changes(a),
        "sysctl": sysctls(a),
        **({"qdisc_set": a.qdisc_set} if a.qdisc_set else {}),
        "duration_s": a.duration,
        "warmup_s": a.warmup,
        "sim": sims,
        "emu": emus,
        "recorded": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "aqmlab": aqmlab.__version__,
    }


def simulate_row(row: dict, case: matrix.Case, a: argparse.Namespace) -> None:
    """Simulates a stored case again against its kernel runs, as the command line `a` asks,
    and writes into its results `row` what the simulated side ran with."""
    row.update(
        sim=simulate(case, a, row["emu"]),
        profile=a.profile or "default",
        set=a.set,
        aqmlab=aqmlab.__version__,
    )
    for key in HARNESS:
        row.pop(key, None)
    row.update(harness_changes(a))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--select", default="core", choices=list(matrix.SELECTIONS))
    ap.add_argument(
        "--duration", type=float, default=None, help="seconds per run (default: the selection's, 30)"
    )
    ap.add_argument(
        "--warmup", type=float, default=None, help="statistics after this (default: the selection's, 10)"
    )
    ap.add_argument(
        "--seeds", type=int, default=None, help="simulated runs per case (default: the selection's, 96)"
    )
    ap.add_argument("--repeats", type=int, default=1, help="emulated runs per case (default 1)")
    ap.add_argument(
        "--profile", default=None, help="the simulated TCP profile (default: the default profile)"
    )
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE on every simulated TCP flow")
    ap.add_argument(
        "--sysctl",
        action="append",
        default=[],
        help="NAME=VALUE set in the kernel's namespaces (net.ipv4.*); keep such runs in their own --out file",
    )
    ap.add_argument(
        "--qdisc-set",
        action="append",
        default=[],
        help="KEY=VALUE on the bottleneck's discipline both ways, on both sides; keep such runs in their own --out file",
    )
    matrix.harness_args(ap)  # keep runs with any of these in their own --out file
    ap.add_argument("--only", default=None, help="run only cases whose id contains this text")
    ap.add_argument("--out", type=Path, default=None, help="results file (default out/<select>.json)")
    ap.add_argument("--redo", action="store_true", help="run cases already in the results file again")
    ap.add_argument(
        "--resim",
        action="store_true",
        help="simulate the stored cases again, keeping their kernel runs (no root needed)",
    )
    ap.add_argument(
        "--more",
        action="store_true",
        help="add --repeats kernel runs to each stored case (two-way cells need several) and simulate it again",
    )
    a = ap.parse_args()
    duration, warmup = matrix.WINDOW_S.get(a.select, matrix.DEFAULT_WINDOW_S)
    a.duration = duration if a.duration is None else a.duration
    a.warmup = warmup if a.warmup is None else a.warmup
    a.seeds = matrix.SEEDS.get(a.select, matrix.DEFAULT_SEEDS) if a.seeds is None else a.seeds
    out = a.out or HERE / "out" / f"{a.select}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = {r["id"]: r for r in json.loads(out.read_text())} if out.exists() else {}
    todo = [c for c in matrix.cases(a.select) if a.only is None or a.only in c.id]
    for k, case in enumerate(todo):
        t = time.monotonic()
        if a.resim:
            if case.id in done:
                row = done[case.id]
                if row.get("qdisc_set", []) != a.qdisc_set:
                    raise SystemExit(
                        f"{case.id}: stored kernel runs have qdisc set {row.get('qdisc_set', [])}, not {a.qdisc_set}"
                    )
                a.duration, a.warmup = row["duration_s"], row["warmup_s"]
                simulate_row(row, case, a)
            continue
        if a.more and case.id in done:
            row = done[case.id]
            if row.get("sysctl", {}) != sysctls(a) or row.get("qdisc_set", []) != a.qdisc_set:
                raise SystemExit(
                    f"{case.id}: stored kernel runs have sysctl {row.get('sysctl', {})} and qdisc set "
                    f"{row.get('qdisc_set', [])}, not {sysctls(a)} and {a.qdisc_set}"
                )
            a.duration, a.warmup = row["duration_s"], row["warmup_s"]
            row["emu"] += kernel_runs(case, a, len(row["emu"]))
            simulate_row(row, case, a)
            row["recorded"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        elif case.id in done and not a.redo:
            continue
        else:
            done[case.id] = run_case(case, a)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(list(done.values()), indent=1))
        tmp.replace(out)
        print(f"[{k + 1}/{len(todo)}] {case.id} {time.monotonic() - t:.0f} s", flush=True)
    if a.resim:
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(list(done.values()), indent=1))
        tmp.replace(out)
    rows = [done[c.id] for c in todo if c.id in done]
    print(compare.table(rows))


if __name__ == "__main__":
    main()
