"""Where a study's simulation time goes: goodbadwifi2015's runs by kind (test file and link), each
run by the Rust-only driver (``run_json``, built as README.md says) in a fresh process, its CPU
seconds (user + sys, ``os.wait4``: a loaded machine changes them little, unlike wall time).

    python bench/study_cost.py [--reps 1] [--every 1] [--test rrul --test wifi_rrul ...]

``--reps 1`` is the study's ``--quick``; ``--every N`` runs every Nth run of each kind only (the
kind's total is then its runs times the mean of those measured).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import core_binary, machine, stamp

from aqmlab.reproduce import goodbadwifi2015 as gbw
from aqmlab.sweep import parse_sweep


def sweeps(reps: int) -> list[tuple[str, dict]]:
    """(series, sweep document) of every sweep the whole study runs, as ``goodbadwifi2015.run``."""
    docs = {"web": gbw.web_doc, "wifi": gbw.wifi_doc}
    out = []
    for series in gbw.SERIES["all"]:
        doc = docs.get(series, gbw.sweep_doc)
        for test in gbw.TEST_FILES[series]:
            out.append((series, doc(test, reps, gbw.QDISCS, list(gbw.LINKS))))
    return out


def runs(reps: int) -> list[tuple[str, dict, int]]:
    """(kind, scenario, seed) of every run: kind = series/test @ link."""
    out = []
    for series, doc in sweeps(reps):
        spec = parse_sweep(doc)
        test = doc["name"].removeprefix(f"{gbw.NAME}-")
        for p in spec.all_points():
            kind = f"{series}: {test} @ {p.labels['link']}"
            out += [(kind, p.scenario, spec.seed_for(p, r)) for r in range(spec.reps)]
    return out


def cpu_seconds(binary: Path, sc: dict, seed: int) -> float:
    """The driver's user + sys CPU seconds on scenario `sc` with `seed`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(sc, f)
        f.flush()
        p = subprocess.Popen([str(binary), f.name, str(seed)], stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{binary} failed on {sc.get('name')}")
    return ru.ru_utime + ru.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--test", action="append", help="only the kinds whose name contains this (repeatable)")
    a = ap.parse_args()
    binary = core_binary()
    if binary is None:
        sys.exit("run_json is not built: cargo build --release -p aqmlab-core --example run_json")
    by_kind: dict[str, list] = defaultdict(list)
    for kind, sc, seed in runs(a.reps):
        if not a.test or any(t in kind for t in a.test):
            by_kind[kind].append((sc, seed))
    cost = {}
    for kind, items in by_kind.items():
        spent = [cpu_seconds(binary, sc, seed) for sc, seed in items[:: a.every]]
        cost[kind] = (len(items), sum(spent) / len(spent))
        print(f"# {kind}: {len(spent)} measured, {cost[kind][1]:.2f} s each", file=sys.stderr, flush=True)
    total = sum(n * each for n, each in cost.values())
    print(f"# study cost  {stamp()}  {machine()}  reps={a.reps} every={a.every}  total {total:.1f} CPU s")
    print("| run kind | runs | CPU s each | CPU s | share |")
    print("|---|---:|---:|---:|---:|")
    for kind, (n, each) in sorted(cost.items(), key=lambda kv: -kv[1][0] * kv[1][1]):
        print(f"| {kind} | {n} | {each:.2f} | {n * each:.1f} | {100 * n * each / total:.1f} % |")


if __name__ == "__main__":
    main()
