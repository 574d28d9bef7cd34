"""Run the ns-3 re-creation of lpcc2013 3c (lpcc.cc) over every (LPCC, qdisc) cell and store
the study's metrics per cell (mean and standard deviation over the seeds).

Each run's JSON is cached under ``out/runs[_TAG]/`` and reused; the aggregate goes to
``out/ns3[_TAG].json``. ``--tag`` with ``--ns3-arg`` runs a variant of the setup (one model
choice changed), e.g. TcpLedbat with slow start:

    bash validation/lpcc2013/build.sh
    python validation/lpcc2013/run.py --reps 10 -j 2
    python validation/lpcc2013/run.py --reps 10 --lpcc ledbat --tag ss --ns3-arg=--ledbat-ss=1
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
BIN = OUT / "lpcc"
LPCCS = ["ledbat", "tcp_lp"]  # ns-3 has no TCP Nice
CONTROL = "newreno"  # --lpcc newreno: NewReno in both classes (the fairness baseline)
QDISCS = ["pfifo", "red", "codel", "fq_codel"]  # ns-3 has no CHOKe, DRR or SFQ
METRICS = ["tcp_share_pct", "eq_over_qmax", "utilization", "mean_queue_ms"]


def run_path(tag: str, lpcc: str, qdisc: str, seed: int) -> Path:
    return OUT / (f"runs_{tag}" if tag else "runs") / lpcc / qdisc / f"{seed}.json"


def run_one(args: tuple[str, str, str, int, list[str]]) -> str:
    tag, lpcc, qdisc, seed, extra = args
    path = run_path(tag, lpcc, qdisc, seed)
    if path.exists():
        return "cached"
    cmd = [str(BIN), f"--lpcc={lpcc}", f"--qdisc={qdisc}", f"--seed={seed}", *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
    data = json.loads(res.stdout)
    data["args"] = extra
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
    return "ran"


def aggregate(tag: str, lpcc: str, qdisc: str, reps: int) -> dict:
    runs = [
        json.loads(p.read_text()) for s in range(1, reps + 1) if (p := run_path(tag, lpcc, qdisc, s)).exists()
    ]
    if not runs:
        return {"runs": 0}
    out: dict = {"runs": len(runs)}
    for m in METRICS:
        v = np.array([r[m] for r in runs], dtype=float)
        out[m] = [float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0]
    for cls in ("be", "lp"):
        fl = [f for r in runs for f in r["flows"] if f["class"] == cls]
        n = max(len(runs), 1)
        out[cls] = {
            "recoveries_per_run": sum(f["recoveries"] for f in fl) / n,
            "rtos_per_run": sum(f["rtos"] for f in fl) / n,
            "cuts_half_per_run": sum(f["cuts_half"] for f in fl) / n,
            "cuts_to_one_per_run": sum(f["cuts_to_one"] for f in fl) / n,
            "mean_cwnd_segs": float(np.mean([f["mean_cwnd_segs"] for f in fl])) if fl else None,
        }
    out["drops_per_run"] = {
        k: sum(r["drops"].get(k, 0) for r in runs) / len(runs)
        for k in sorted({k for r in runs for k in r["drops"]})
    }
    out["settings"] = runs[0]["settings"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--lpcc", nargs="+", default=LPCCS, choices=[*LPCCS, CONTROL])
    ap.add_argument("--qdisc", nargs="+", default=QDISCS, choices=QDISCS)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument(
        "--tag", default="", help="name of a variant: runs in out/runs_TAG/, aggregate out/ns3_TAG.json"
    )
    ap.add_argument(
        "--ns3-arg", action="append", default=[], help="program argument, e.g. --ns3-arg=--ledbat-ss=1"
    )
    a = ap.parse_args()
    if a.ns3_arg and not a.tag:
        ap.error("--ns3-arg needs --tag")
    if not BIN.exists():
        print(f"missing {BIN}: run bash {HERE / 'build.sh'}", file=sys.stderr)
        return 1
    todo = [(a.tag, lp, q, s, a.ns3_arg) for lp in a.lpcc for q in a.qdisc for s in range(1, a.reps + 1)]
    t0 = time.time()
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        outcome = list(ex.map(run_one, todo))
    ran = outcome.count("ran")
    print(f"{len(todo)} runs ({ran} run now) in {time.time() - t0:.0f} s", file=sys.stderr)
    path = OUT / (f"ns3_{a.tag}.json" if a.tag else "ns3.json")
    res = json.loads(path.read_text())["results"] if path.exists() else {}  # other cells stay
    for lp in a.lpcc:
        res.setdefault(lp, {}).update({q: aggregate(a.tag, lp, q, a.reps) for q in a.qdisc})
    path.write_text(
        json.dumps({"reps": a.reps, "tag": a.tag, "ns3_args": a.ns3_arg, "results": res}, indent=1)
    )
    for lp in a.lpcc:
        for q in a.qdisc:
            c = res[lp][q]
            print(
                f"{lp:7s} {q:9s} TCP% {c['tcp_share_pct'][0]:6.1f}  E[Q]/Qmax {c['eq_over_qmax'][0]:.3f}"
                f"  eta {c['utilization'][0]:.3f}  lp window cuts outside recovery: to >1 seg {c['lp']['cuts_half_per_run']:.0f}"
                f"  to-1 {c['lp']['cuts_to_one_per_run']:.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
