"""Run the ns-3 re-creation of transients2014 (transients.cc) over every cell and print the
study's metrics, computed as aqmlab's ``reproduce transients2014`` computes them.

A cell is (series, qdisc, load); every cell runs ``--reps`` replications (seeds 1..reps) on a
process pool. Each run's JSON is cached under ``out/runs/`` and reused; the aggregate goes to
``out/ns3_<series>.json``.

    bash validation/transients2014/build.sh
    python validation/transients2014/run.py --reps 100 --series 11 101 -j 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
BIN = OUT / "transients"
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]
SERIES = {"11": "162ms", "101": "342ms"}  # rest-of-path one-way delay -> base RTT
MULTI_QUEUE = {"sfq_codel"}  # spike duration is not defined for them (one queue per flow)


TAG = {"name": "", "args": []}  # a variant of the ns-3 setup (--tag / --ns3-arg)


def run_path(series: str, qdisc: str, load: str, seed: int, tag: str | None = None) -> Path:
    tag = TAG["name"] if tag is None else tag
    runs = f"runs_{tag}" if tag else "runs"
    return OUT / runs / series / qdisc / load.replace("+", "p") / f"{seed}.json"


def run_one(args: tuple[str, str, str, int, str, list[str]]) -> str:
    series, qdisc, load, seed, tag, extra = args
    path = run_path(series, qdisc, load, seed, tag)
    if path.exists():
        return "cached"
    n = int(load.split("+")[0])
    cmd = [str(BIN), f"--qdisc={qdisc}", f"--n={n}", f"--seed={seed}", f"--rtt={SERIES[series]}", *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
    data = json.loads(res.stdout)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
    return "ran"


def aqm_drop(qdisc: str, reason: str) -> bool:
    """Drops decided by the AQM (as aqmlab's early + forced + head), not by a full buffer."""
    if "Unforced" in reason or "Target exceeded" in reason:
        return True
    return qdisc.startswith("hred") and reason == "Forced drop"  # RED: average above 2 max_th


def quart(values) -> dict:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if not v.size:
        return {"q1": None, "median": None, "q3": None, "max": None, "n": 0}
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"q1": float(q1), "median": float(med), "q3": float(q3), "max": float(v.max()), "n": int(v.size)}


def response(run: dict) -> tuple[float | None, float | None]:
    out = []
    for g in (0, 1):
        fl = [f for f in run["flows"] if f["group"] == g]
        if any(f["completed_s"] is None for f in fl):
            out.append(None)
        else:
            out.append(max(f["completed_s"] for f in fl) - min(f["first_syn_s"] for f in fl))
    return out[0], out[1]


def jain(xs) -> float | None:
    if any(x is None for x in xs):
        return None
    x = np.asarray(xs, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


RTO_LOOP = 20  # a flow with more RTOs than this is stuck in ns-3's spurious-RTO loop (README)


def rto_loop(run: dict) -> bool:
    return max(f["rtos"] for f in run["flows"]) > RTO_LOOP


def aggregate(series: str, qdisc: str, load: str, reps: int, exclude_loops: bool = False) -> dict:
    runs = []
    for s in range(1, reps + 1):
        p = run_path(series, qdisc, load, s)
        if p.exists():
            runs.append(json.loads(p.read_text()))
    loops = [r["seed"] for r in runs if rto_loop(r)]
    if exclude_loops:
        runs = [r for r in runs if not rto_loop(r)]
    if not runs:
        return {"runs": 0}
    delays = np.concatenate([np.asarray(r["delays_ns"], dtype=float) for r in runs]) / 1e9
    sojourn = np.concatenate([np.asarray(r["qdisc_sojourn_ns"], dtype=float) for r in runs]) / 1e9
    resp = [response(r) for r in runs]
    mx = quart([r["max_delay_s"] for r in runs])
    spike = qdisc not in MULTI_QUEUE
    s60 = quart([r["spike60_s"] for r in runs]) if spike else quart([])
    s100 = quart([r["spike100_s"] for r in runs]) if spike else quart([])
    r1, r2 = quart([a for a, _ in resp]), quart([b for _, b in resp])
    flows = [f for r in runs for f in r["flows"]]
    return {
        "runs": len(runs),
        "queue_delay_p95_s": float(np.percentile(delays, 95)),
        "queue_delay_max_median_s": mx["median"],
        "queue_delay_max_q1_s": mx["q1"],
        "queue_delay_max_q3_s": mx["q3"],
        "queue_delay_max_worst_s": mx["max"],
        "spike60_median_s": s60["median"],
        "spike60_q1_s": s60["q1"],
        "spike60_q3_s": s60["q3"],
        "spike100_median_s": s100["median"],
        "spike100_q1_s": s100["q1"],
        "spike100_q3_s": s100["q3"],
        "response_g1_median_s": r1["median"],
        "response_g1_q1_s": r1["q1"],
        "response_g1_q3_s": r1["q3"],
        "response_g2_median_s": r2["median"],
        "response_g2_q1_s": r2["q1"],
        "response_g2_q3_s": r2["q3"],
        "jain_response_median": quart([jain(x) for x in resp])["median"],
        "early_drops_total": sum(c for r in runs for k, c in r["drops"].items() if aqm_drop(qdisc, k)),
        "drops_total": sum(c for r in runs for c in r["drops"].values()),
        "runs_incomplete_transfer": sum(1 for a, b in resp if a is None or b is None),
        # ns-3 only: what the AQM itself sees (enqueue to qdisc dequeue), and TCP counters
        "qdisc_sojourn_p95_s": float(np.percentile(sojourn, 95)),
        "rtos_total": sum(f["rtos"] for f in flows),
        "recoveries_total": sum(f["recoveries"] for f in flows),
        "retx_bytes_total": sum(f["retx_bytes"] for f in flows),
        "tx_unknown_total": sum(r["tx_unknown"] for r in runs),
        "drop_unknown_total": sum(r.get("drop_unknown", 0) for r in runs),
        "rto_loop_seeds": loops,
        "rto_loop_runs_excluded": exclude_loops,
        "settings": runs[0]["settings"],
    }


def fmt_ms(v) -> str:
    return "–" if v is None else f"{v * 1e3:.0f}"


def fmt_q(c: dict, key: str, scale: float = 1e3, nd: int = 0) -> str:
    m, a, b = c.get(f"{key}_median_s"), c.get(f"{key}_q1_s"), c.get(f"{key}_q3_s")
    if m is None:
        return "–"
    return f"{m * scale:.{nd}f} [{a * scale:.{nd}f}, {b * scale:.{nd}f}]"


def print_tables(res: dict, series: str) -> None:
    tables = [
        ("95th percentile of queueing delay (ms)", lambda c: fmt_ms(c.get("queue_delay_p95_s"))),
        ("max queueing delay per run (ms): median [q1, q3]", lambda c: fmt_q(c, "queue_delay_max")),
        ("max queueing delay, worst run (ms)", lambda c: fmt_ms(c.get("queue_delay_max_worst_s"))),
        ("spike > 60 ms (ms): median [q1, q3]", lambda c: fmt_q(c, "spike60")),
        ("spike > 100 ms (ms): median [q1, q3]", lambda c: fmt_q(c, "spike100")),
        ("group 1 response time (s): median [q1, q3]", lambda c: fmt_q(c, "response_g1", 1, 2)),
        ("group 2 response time (s): median [q1, q3]", lambda c: fmt_q(c, "response_g2", 1, 2)),
        ("AQM drops, all runs", lambda c: str(c.get("early_drops_total", "–"))),
        ("qdisc's own sojourn p95 (ms, ns-3 only)", lambda c: fmt_ms(c.get("qdisc_sojourn_p95_s"))),
        ("RTOs, all runs", lambda c: str(c.get("rtos_total", "–"))),
        (
            "runs with a spurious-RTO loop (seeds)",
            lambda c: " ".join(map(str, c.get("rto_loop_seeds", []))) or "0",
        ),
    ]
    for title, f in tables:
        print(f"\n{title} — ns-3, {series} ms series")
        print("| qdisc | " + " | ".join(LOADS) + " |")
        print("|---|" + "---|" * len(LOADS))
        for q in QDISCS:
            cells = [f(res[q][ld]) if res[q][ld].get("runs") else "–" for ld in LOADS]
            print(f"| {q} | " + " | ".join(cells) + " |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--series", nargs="+", default=["11"], choices=list(SERIES))
    ap.add_argument("--qdisc", nargs="+", default=QDISCS, choices=QDISCS)
    ap.add_argument("--load", nargs="+", default=LOADS, choices=LOADS)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument(
        "--exclude-rto-loops",
        action="store_true",
        help=f"leave out runs with a flow of more than {RTO_LOOP} RTOs (writes ns3_<series>_noloops.json)",
    )
    ap.add_argument(
        "--tag", default="", help="name of a variant: runs in out/runs_TAG/, aggregate ns3_<series>_TAG.json"
    )
    ap.add_argument(
        "--ns3-arg", action="append", default=[], help="extra program argument, e.g. --ns3-arg=--tcp=..."
    )
    a = ap.parse_args()
    if a.ns3_arg and not a.tag:
        ap.error("--ns3-arg needs --tag")
    TAG["name"], TAG["args"] = a.tag, a.ns3_arg
    if not BIN.exists():
        print(f"missing {BIN}: run bash {HERE / 'build.sh'}", file=sys.stderr)
        return 1
    todo = [
        (s, q, ld, r, a.tag, a.ns3_arg)
        for s in a.series
        for q in a.qdisc
        for ld in a.load
        for r in range(1, a.reps + 1)
    ]
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        outcome = list(ex.map(run_one, todo, chunksize=8))
    ran = outcome.count("ran")
    print(
        f"{len(todo)} runs ({ran} run now, {len(todo) - ran} cached) in {time.time() - t0:.0f} s",
        file=sys.stderr,
    )
    for s in a.series:
        res = {q: {ld: aggregate(s, q, ld, a.reps, a.exclude_rto_loops) for ld in LOADS} for q in QDISCS}
        suffix = "_".join(x for x in (a.tag, "noloops" if a.exclude_rto_loops else "") if x)
        name = f"ns3_{s}_{suffix}.json" if suffix else f"ns3_{s}.json"
        meta = {"reps": a.reps, "series": s, "tag": a.tag, "ns3_args": a.ns3_arg, "results": res}
        (OUT / name).write_text(json.dumps(meta, indent=1))
        print_tables(res, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
