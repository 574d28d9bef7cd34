"""The whole `aqmlab run` process on a large scenario against the core's own share (issue: the
whole process within 2x of the core). Writes the ns-3 anchor dumbbell (`_common.dumbbell`) with
N flows as a TOML file, flow i starting at exactly i/N s (i x 10^9 // N ns), runs `aqmlab run
FILE --warmup W --out TMP` in a fresh process and prints its CPU and wall seconds by phase
(``time.thread_time`` and ``time.perf_counter`` around the named functions: the CPU of the main
thread, where the core simulates; what other threads do, writing the tables or loading
matplotlib, counts in the whole process), the child's total CPU seconds and peak RSS
(``os.wait4``), its wall seconds from start to exit, and the core's own wall time
(``meta.wall_s``).

    python bench/whole_run.py [--flows 10000] [--rate 1Gbps] [--duration 3] [--level packets] [--count]

``--count`` declares the same flows as one ``[[flows]]`` entry with ``count = N`` and
``start = { spread = ["0s", "1s"] }``, which gives flow i the same start i/N s: the same
workload (the same results), written in a few hundred bytes instead of megabytes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import dumbbell

CHILD = r"""
import atexit, json, pathlib, sys, time
t_start, w_start = time.thread_time(), time.perf_counter()
from aqmlab import _core, api, metrics
from aqmlab.cli import main
spent = {}
def add(phase, cpu, wall):
    c, w = spent.get(phase, (0.0, 0.0))
    spent[phase] = (c + cpu, w + wall)
def timed(owner, attr, phase):
    f = getattr(owner, attr)
    def wrapper(*a, **k):
        t, w = time.thread_time(), time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            add(phase, time.thread_time() - t, time.perf_counter() - w)
    setattr(owner, attr, wrapper)
PHASES = [
    (main, "_scenario", "load TOML, overrides"),
    (main, "resolve", "resolve (check_values, core, JSON)"),
    (_core, "run", "core: build, simulate, tables, meta JSON"),
    (api, "simulate", "simulate (all)"),
    (metrics, "summarize", "metrics.summarize"),
    # the tables written in a thread while summarising, then the rest (or all after it: before);
    # since issue 54 the CLI calls api.run_and_store, which simulates too
    (*((api, "run_and_store") if hasattr(api, "run_and_store") else (main, "_summarize_and_store")
       if hasattr(main, "_summarize_and_store") else (api.Result, "save")),
     "store: the tables (or the wait for them), JSON, rename, catalog"),
    # the figure of a single run: drawn inside the storing (while the tables are written), or after it
    (*((main._RunFigure, "draw") if hasattr(main, "_RunFigure") else (main, "_figures")), "figure"),
]
STORE = PHASES[-2][2]
for owner, attr, phase in PHASES:
    timed(owner, attr, phase)
t_imports = time.thread_time() - t_start, time.perf_counter() - w_start
sys.argv = ["aqmlab", *sys.argv[1:]]
def report():
    spent["imports"] = t_imports
    if (hasattr(api, "run_and_store") or hasattr(main, "_summarize_and_store")) and STORE in spent:
        # its summarising (and figure; and simulating, in run_and_store): phases of their own
        inside = [spent["metrics.summarize"], *([spent["figure"]] if hasattr(main, "_RunFigure") else []),
                  *([spent["simulate (all)"]] if hasattr(api, "run_and_store") else [])]
        spent[STORE] = tuple(b - sum(x) for b, *x in zip(spent[STORE], *inside))
    every = spent.pop("simulate (all)")
    core = spent["core: build, simulate, tables, meta JSON"]
    check = spent.setdefault("check_values in simulate", (0.0, 0.0))
    spent["decoding the tables and the meta; waiting for the modules loaded meanwhile"] = tuple(e - c - k for e, c, k in zip(every, core, check))
    runs = sorted(p for p in pathlib.Path(sys.argv[-1]).iterdir() if p.is_dir())
    meta = json.loads((runs[-1] / "meta.json").read_text())
    spent["core wall_s (meta)"] = (meta["wall_s"], meta["wall_s"])
    print(json.dumps(spent), file=sys.stderr)
# As the console script runs (it ends the process itself), reporting on the way out.
atexit.register(report)
main.entry()
"""


def toml_value(v) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + "}"
    return json.dumps(v)


def to_toml(sc: dict) -> str:
    """The benchmark's scenario dict as TOML (flat values and tables; `flows` an array of tables)."""
    lines = [f"{k} = {toml_value(v)}" for k, v in sc.items() if k != "flows"]
    lines += [
        "",
        *("[[flows]]\n" + "\n".join(f"{k} = {toml_value(v)}" for k, v in f.items()) for f in sc["flows"]),
    ]
    return "\n".join(lines) + "\n"


def measure(flows: int, rate: str, duration: float, level: str, warmup: float, count: bool) -> dict:
    """One `aqmlab run` of the dumbbell in a fresh process: ``phases`` {phase: (CPU s, wall s)},
    ``cpu_s`` and ``wall_s`` of the whole process, ``core`` (CPU s, wall s of ``_core.run``),
    ``core_wall_s`` (``meta.wall_s``) and ``rss_mb`` (peak)."""
    sc = dumbbell(flows, rate, "fq_codel", duration, level)
    if count:
        sc["flows"] = [{**sc["flows"][0], "count": flows, "start": {"spread": ["0s", "1s"]}}]
    else:
        for i, f in enumerate(sc["flows"]):
            f["start"] = f"{i * 10**9 // flows}ns"
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"{sc['name']}.toml"
        path.write_text(to_toml(sc))
        out = Path(d) / "runs"
        args = ["run", str(path), "--warmup", str(warmup), "--out", str(out)]
        with tempfile.TemporaryFile("w+") as errf:
            wall = time.perf_counter()
            p = subprocess.Popen([sys.executable, "-c", CHILD, *args], stdout=subprocess.DEVNULL, stderr=errf)
            _, status, ru = os.wait4(p.pid, 0)
            wall = time.perf_counter() - wall
            errf.seek(0)
            text = errf.read()
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"aqmlab run failed:\n{text}")
    spent = json.loads(text.strip().splitlines()[-1])
    core_wall = spent.pop("core wall_s (meta)")[0]
    return {
        "phases": spent,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "wall_s": wall,
        "core": spent["core: build, simulate, tables, meta JSON"],
        "core_wall_s": core_wall,
        "rss_mb": ru.ru_maxrss / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=10000)
    ap.add_argument("--rate", default="1Gbps")
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--level", default="packets")
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--count", action="store_true", help="one [[flows]] entry with count = N")
    a = ap.parse_args()
    try:
        m = measure(a.flows, a.rate, a.duration, a.level, a.warmup, a.count)
    except RuntimeError as e:
        sys.exit(str(e))
    declared = "one entry with count and spread starts" if a.count else "one entry per flow"
    print(f"# {a.flows} flows ({declared}) x {a.rate}, {a.duration:g} s, {a.level}, --warmup {a.warmup:g}")
    print("| phase | CPU s | wall s |\n|---|---:|---:|")
    for phase, (cpu, w) in m["phases"].items():
        print(f"| {phase} | {cpu:.2f} | {w:.2f} |")
    (core_cpu, core_w), total, wall = m["core"], m["cpu_s"], m["wall_s"]
    print(f"| whole process (CPU: user + sys; wall: start to exit) | {total:.2f} | {wall:.2f} |")
    print(f"| outside the core (whole less core) | {total - core_cpu:.2f} | {wall - core_w:.2f} |")
    print(
        f"whole / core: CPU {total / core_cpu:.2f}, wall {wall / core_w:.2f}; core wall_s {m['core_wall_s']:.2f}; "
        f"peak RSS {m['rss_mb']:.0f} MB"
    )


if __name__ == "__main__":
    main()
