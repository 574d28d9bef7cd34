"""transients2014 in ns-2.35: runs tcl/transients.tcl over the study's cells and computes, from
the bottleneck queue's trace, the metrics ``aqmlab reproduce transients2014 --json`` reports
(same keys, same definitions: docs/metrics.md; queueing delay from enqueue to the start of
transmission, ns-2's '+' to '-' of a packet; dropped packets have none).

    python validation/ns2/transients.py --reps 100 --series 11 -j 2
    python validation/ns2/transients.py --reps 30 --qdisc hred --tag nogentle --set Queue/RED/gentle_=false

Every run's metrics are cached in out/runs[_TAG]/ and reused; the aggregate is written to
out/ns2_<series>[_TAG].json as {"meta": ..., "results": {metric: {qdisc: {load: value}}}}.
Replication r seeds ns-2's default RNG with r (RED's and PIE's coins) and draws group 2's start
offset uniformly in [0, OFFSET_MAX_S) from numpy's generator seeded with (OFFSET_SEED, r), the same
offset for every qdisc (common random numbers, as aqmlab's sweep does).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SCRIPT = HERE / "tcl" / "transients.tcl"
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel", "droptail"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]
SERIES = ["11", "101"]
MULTI_QUEUE = {"sfq_codel"}  # spike durations are not defined for it (one queue per flow)
LIMIT_PACKETS = 100  # the bottleneck buffer of tcl/transients.tcl
RATE_BPS = 2e6
OFFSET_MAX_S = 0.65
OFFSET_SEED = 2014
SPIKES = {"spike60": 0.060, "spike100": 0.100}  # threshold as a delay at the link rate


def parse_trace(path: Path) -> dict:
    """Per-packet sojourns (s) of transmitted packets, drops (AQM drops: the buffer not full),
    and the backlog in bytes as a step function."""
    enq: dict[str, float] = {}
    size: dict[str, int] = {}
    delays, times, backlog = [], [0.0], [0]
    packets = bytes_ = drops = aqm_drops = 0
    for line in path.read_text().splitlines():
        f = line.split()
        ev, t, uid, sz = f[0], float(f[1]), f[11], int(f[5])
        if ev == "+":
            enq[uid], size[uid] = t, sz
            packets, bytes_ = packets + 1, bytes_ + sz
        elif ev in "-d" and uid in enq:
            full = packets >= LIMIT_PACKETS  # with this packet (ns-2 DropTail keeps at most qlim_ - 1)
            packets, bytes_ = packets - 1, bytes_ - size[uid]
            t_in = enq.pop(uid)
            if ev == "-":
                delays.append(t - t_in)
            else:
                drops += 1
                aqm_drops += not full
        else:
            continue
        times.append(t)
        backlog.append(bytes_)
    return {"delays": delays, "times": times, "backlog": backlog, "drops": drops, "aqm_drops": aqm_drops}


def longest_above(times: list[float], backlog: list[int], threshold: float) -> float:
    """The longest continuous period during which the backlog exceeds threshold bytes."""
    best = run = 0.0
    for i in range(len(times) - 1):
        dt = times[i + 1] - times[i]
        if backlog[i] > threshold:
            run += dt
            best = max(best, run)
        elif dt > 0:
            run = 0.0
    return best


def jain(xs: list[float]) -> float:
    x = np.asarray(xs, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def response_times(flow_lines: list[str]) -> list[float | None]:
    """Per group: from its start (the first SYN) to the last ACK of its last-finishing flow."""
    out = []
    for g in ("0", "1"):
        rows = [ln.split() for ln in flow_lines if ln.split()[1] == g]
        done = [float(r[4]) for r in rows]
        out.append(None if min(done) < 0 else max(done) - float(rows[0][3]))
    return out


def run_path(tag: str, series: str, qdisc: str, load: str, seed: int) -> Path:
    runs = f"runs_{tag}" if tag else "runs"
    return OUT / runs / series / qdisc / load.replace("+", "p") / f"{seed}.json"


def run_one(job: tuple) -> str:
    ns, tag, series, qdisc, load, seed, segment, sets = job
    path = run_path(tag, series, qdisc, load, seed)
    if path.exists():
        return "cached"
    n = load.split("+")[0]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "queue.tr"
        offset = np.random.default_rng([OFFSET_SEED, seed]).uniform(0, OFFSET_MAX_S)
        cmd = [ns, str(SCRIPT), qdisc, n, str(seed), f"{offset:.9f}", series, str(segment), str(trace), *sets]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
        tr = parse_trace(trace)
    g1, g2 = response_times([ln for ln in res.stdout.splitlines() if ln.startswith("flow ")])
    spike = qdisc not in MULTI_QUEUE
    run = {
        "delays": tr["delays"],
        "queue_delay_max_s": max(tr["delays"]),
        **{
            f"{k}_s": longest_above(tr["times"], tr["backlog"], s * RATE_BPS / 8) if spike else None
            for k, s in SPIKES.items()
        },
        "response_g1_s": g1,
        "response_g2_s": g2,
        "jain_response": jain([g1, g2]) if g1 is not None and g2 is not None else None,
        "early_drops": tr["aqm_drops"],
        "drops_total": tr["drops"],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run))
    return "ran"


def quartiles(values: list) -> dict:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if not v.size:
        return {"q1": None, "median": None, "q3": None, "max": None}
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"q1": float(q1), "median": float(med), "q3": float(q3), "max": float(v.max())}


def aggregate(runs: list[dict]) -> dict:
    """One cell's results under aqmlab's keys."""
    d = np.concatenate([r["delays"] for r in runs])
    out = {
        "queue_delay_p95_s": float(np.percentile(d, 95)),
        "queue_delay_median_s": float(np.percentile(d, 50)),
    }
    mx = quartiles([r["queue_delay_max_s"] for r in runs])
    out.update({f"queue_delay_max_{k}_s": mx[k] for k in ("q1", "median", "q3")})
    out["queue_delay_max_worst_s"] = mx["max"]
    for key in (*SPIKES, "response_g1", "response_g2"):
        q = quartiles([r[f"{key}_s"] for r in runs])
        out.update({f"{key}_{k}_s": q[k] for k in ("q1", "median", "q3")})
    out["jain_response_median"] = quartiles([r["jain_response"] for r in runs])["median"]
    out["early_drops_total"] = sum(r["early_drops"] for r in runs)
    out["drops_total"] = sum(r["drops_total"] for r in runs)
    out["runs"] = len(runs)
    out["runs_incomplete_transfer"] = sum(
        r["response_g1_s"] is None or r["response_g2_s"] is None for r in runs
    )
    return out


def results(tag: str, series: str, qdiscs: list[str], reps: int) -> dict:
    res: dict[str, dict] = {}
    for q in qdiscs:
        for ld in LOADS:
            paths = [run_path(tag, series, q, ld, s) for s in range(1, reps + 1)]
            runs = [json.loads(p.read_text()) for p in paths if p.exists()]
            if not runs:
                continue
            for k, v in aggregate(runs).items():
                res.setdefault(k, {}).setdefault(q, {})[ld] = v
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="/work/ns2-build/bin/ns", help="the ns binary of build.sh")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--series", nargs="+", default=["11"], choices=SERIES)
    ap.add_argument("--qdisc", nargs="+", default=QDISCS, choices=QDISCS)
    ap.add_argument("--load", nargs="+", default=LOADS, choices=LOADS)
    ap.add_argument(
        "--segment", type=int, default=1000, help="TCP payload bytes (ns-2 packetSize_, its default)"
    )
    ap.add_argument(
        "--set", action="append", default=[], metavar="CLASS/VAR=VALUE", help="a changed ns-2 default"
    )
    ap.add_argument("--tag", default="", help="name of a variant (needed with --set or another --segment)")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    a = ap.parse_args()
    if (a.set or a.segment != 1000) and not a.tag:
        ap.error("--set and --segment need --tag")
    if not Path(a.ns).exists():
        ap.error(f"--ns {a.ns}: no such file (run validation/ns2/build.sh)")
    jobs = [
        (a.ns, a.tag, s, q, ld, r, a.segment, a.set)
        for s in a.series
        for q in a.qdisc
        for ld in a.load
        for r in range(1, a.reps + 1)
    ]
    with ProcessPoolExecutor(max_workers=a.jobs) as ex:
        done = list(ex.map(run_one, jobs, chunksize=4))
    print(f"{len(jobs)} runs, {done.count('ran')} run now", file=sys.stderr)
    for s in a.series:
        meta = {"series": s, "reps": a.reps, "segment": a.segment, "set": a.set, "tag": a.tag}
        name = f"ns2_{s}_{a.tag}.json" if a.tag else f"ns2_{s}.json"
        (OUT / name).write_text(
            json.dumps({"meta": meta, "results": results(a.tag, s, a.qdisc, a.reps)}, indent=1)
        )
        print(f"wrote {OUT / name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
