"""codel2012 in ns-2.35: runs tcl/codel2012.tcl (the setups of the authors' "Codel test script
v120513") over a subset of the cases of ``aqmlab reproduce codel2012`` and writes the same JSON
keys as ``aqmlab reproduce codel2012 --json`` (its results and its claims' verdicts, judged by
aqmlab's own code on the ns-2 runs).

    python validation/ns2/codel2012.py                      # the default subset, 3 seeds
    python validation/ns2/codel2012.py --part 1b --tag nored_ptc --set Queue/RED/q_weight_=0.002
    python validation/ns2/codel2012.py --aqmlab --part 1b        # the same subset and seeds in aqmlab

The cases, their parameters and the aggregation are aqmlab's (python/aqmlab/reproduce/codel2012/:
``LARGE``, ``SMALL``, ``LOADS``, ``psize``, ``results``, the claims); each run's metrics come from
the downstream bottleneck queue's trace with aqmlab's definitions (docs/metrics.md: the sojourn
of a transmitted packet is ns-2's '+' to '-', dropped packets have none; utilisation = bytes sent
/ the link's capacity over the run). Every run is cached in out/codel2012_SIDE_runs[_TAG]/ and
reused; the aggregate goes to out/SIDE_codel2012[_TAG].json (SIDE: ns2, or aqmlab with
``--aqmlab``). Seed r seeds ns-2's default RNG, ns-random and PackMime's three RNGs, and is
aqmlab's run seed (the simulators draw their own random numbers: cells agree in distribution,
not run by run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

import aqmlab.reproduce.codel2012 as C
from aqmlab.api import simulate
from aqmlab.reproduce.study import Outcome, verdicts
from aqmlab.scenario import apply_overrides, load

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SCRIPT = HERE / "tcl" / "codel2012.tcl"
PARTS = ("1a", "1b", "1c", "web")
# The default subset, covering every claim of the study that these parts decide: 1b whole (claims
# 1-6), 1a at every rate with an FTP-only and a web-carrying load per rate group (claims 7-9),
# 1c at three RTTs; the web-only cases of aqmlab (claim 10), every one.
SUBSET = {
    "1a_large_loads": ("4ftp", "16ftp", "4ftp+web5+cbr", "16ftp+web20+2cbr"),
    "1a_large_qdiscs": ("red", "codel"),
    "1a_small_loads": C.SMALL_LOADS,
    "1a_small_qdiscs": ("red", "codel"),
    "1c_rtts": (10, 100, 500),
    "1c_loads": ("4ftp",),
}


def _load(ld: str) -> dict:
    f, w, c = C.LOADS[ld]
    return {"ftps": f, "web": w, "cbrs": c}


def cases(parts: list[str]) -> list[dict]:
    """The selected cases: "params" labelled as aqmlab's cases() labels them, "run" the keyword
    arguments of aqmlab's case_scenario (less the qdisc) that set the case up."""
    out = []

    def add(part, case, q, run, **labels):
        out.append({"params": {"part": part, "case": case, "qdisc": q, **labels}, "run": run})

    if "1a" in parts:
        for bw in C.LARGE:
            for q in SUBSET["1a_large_qdiscs"]:
                for ld in SUBSET["1a_large_loads"]:
                    run = {"bw": bw, "size": 1500, **_load(ld)}
                    add("1a", f"1a/{bw}/{ld}", q, run, rate_mbps=bw, load=ld, size=1500)
        for bw in C.SMALL:
            for size in sorted({C.psize(bw), 500}):
                for q in SUBSET["1a_small_qdiscs"]:
                    for ld in SUBSET["1a_small_loads"]:
                        run = {"bw": bw, "size": size, **_load(ld)}
                        add("1a", f"1a/{bw}/{ld}/{size}", q, run, rate_mbps=bw, load=ld, size=size)
    if "1b" in parts:
        for q in C.QDISCS:
            for buf in C.BUFFERS:
                run = {"bw": 100.0, "size": 1500, "ftps": 4, "web": 5, "cbrs": 0, "limit": buf,
                       "duration": C.DYNAMIC_S, "schedule": C.DYN_STEPS}  # fmt: skip
                add("1b", f"1b/{buf}", q, run, buffer=buf)
    if "1c" in parts:
        for q in C.QDISCS:
            for r in SUBSET["1c_rtts"]:
                for ld in SUBSET["1c_loads"]:
                    run = {"bw": 10.0, "size": 1500, "rtt_ms": r, **_load(ld)}
                    add("1c", f"1c/{r}/{ld}", q, run, rtt_ms=r, load=ld)
    if "web" in parts:
        for bw in C.SMALL:
            for q in C.QDISCS:
                for ld, w in C.WEB_ONLY.items():
                    run = {"bw": bw, "size": C.psize(bw), "ftps": 0, "web": w, "cbrs": 0}
                    add("web", f"web/{bw}/{ld}", q, run, rate_mbps=bw, load=ld, size=C.psize(bw))
    return out


def command(ns: str, q: str, run: dict, seed: int, trace: Path, sets: list[str]) -> list[str]:
    args = [q, run["ftps"], run["web"], run["cbrs"], run["bw"], run["size"], run.get("limit", 0),
            run.get("rtt_ms", 100), run.get("duration", C.STATIC_S), int("schedule" in run), seed, trace]  # fmt: skip
    return [ns, str(SCRIPT), *map(str, args), *sets]


def read_trace(path: Path) -> pd.DataFrame:
    """One row per packet that reached the queue: t_in, t_out (NaN if dropped), size, dropped."""
    tr = pd.read_csv(path, sep=" ", header=None, usecols=[0, 1, 5, 11], names=["ev", "t", "size", "uid"])
    plus = tr[tr["ev"] == "+"].set_index("uid")
    out = tr[tr["ev"] == "-"].set_index("uid")["t"]
    drop = tr[tr["ev"] == "d"].set_index("uid")["t"]
    pk = pd.DataFrame({"t_in": plus["t"], "size": plus["size"]})
    pk["t_out"] = out.reindex(pk.index)
    pk["dropped"] = drop.reindex(pk.index).notna()
    return pk.sort_values("t_in")


def capacity_bytes(run: dict) -> float:
    dur = run.get("duration", C.STATIC_S)
    steps = run.get("schedule", [1.0])
    return sum(run["bw"] * 1e6 * f * dur / len(steps) for f in steps) / 8


def mean_queue_pkts(pk: pd.DataFrame, duration: float) -> float:
    """The time average of the number of packets in the queue (a packet counts from '+' to '-'
    or 'd')."""
    leave = pk["t_out"].fillna(pk["t_in"]).to_numpy()  # ns-2 drops at arrival or at dequeue
    return float(np.clip(leave - pk["t_in"].to_numpy(), 0, None).sum() / duration)


def timeline(sent: pd.DataFrame, duration: float) -> dict:
    """aqmlab's codel2012 timeline: per TIMELINE_STEP_S bin, median and p95 sojourn (ms) of the
    packets sent in it, and the cumulative kB sent by the bin's end."""
    step = C.TIMELINE_STEP_S
    n = round(duration / step)
    idx = np.minimum((sent["t_out"].to_numpy() / step).astype(int), n - 1)
    d = (sent["t_out"] - sent["t_in"]).to_numpy() * 1e3
    kb = np.cumsum(np.bincount(idx, weights=sent["size"].to_numpy(), minlength=n)) / 1e3
    med, p95 = [None] * n, [None] * n
    order = np.argsort(idx, kind="stable")
    bounds = np.searchsorted(idx[order], np.arange(n + 1))
    for k in range(n):
        x = d[order[bounds[k] : bounds[k + 1]]]
        if x.size:
            med[k], p95[k] = float(np.median(x)), float(np.percentile(x, 95))
    return {"t_s": [round((k + 1) * step, 6) for k in range(n)], "median_ms": med, "p95_ms": p95,
            "kbytes": kb.tolist()}  # fmt: skip


def metrics(pk: pd.DataFrame, run: dict) -> dict:
    """aqmlab's run_metrics for the downstream bottleneck ('down_*')."""
    sent = pk[pk["t_out"].notna()]
    d = (sent["t_out"] - sent["t_in"]).to_numpy() * 1e3
    dur = run.get("duration", C.STATIC_S)
    p50, p75, p95 = np.percentile(d, [50, 75, 95])
    m = {"down_median_ms": p50, "down_p75_ms": p75, "down_p95_ms": p95, "down_max_ms": d.max(),
         "down_utilization": sent["size"].sum() / capacity_bytes(run),
         "down_drop_rate": pk["dropped"].sum() / len(pk), "down_mean_queue_pkts": mean_queue_pkts(pk, dur),
         "down_kbytes": sent["size"].sum() / 1e3}  # fmt: skip
    out = {k: float(v) for k, v in m.items()}
    if "schedule" in run:
        out["timeline"] = timeline(sent, dur)
    return out


def run_path(side: str, tag: str, c: dict, seed: int) -> Path:
    runs = f"codel2012_{side}_runs" + (f"_{tag}" if tag else "")
    return OUT / runs / c["params"]["case"].replace("/", "_") / c["params"]["qdisc"] / f"{seed}.json"


def ns2_metrics(ns: str, c: dict, seed: int, sets: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "queue.tr"
        cmd = command(ns, c["params"]["qdisc"], c["run"], seed, trace, sets)
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
        return metrics(read_trace(trace), c["run"])


def aqmlab_metrics(c: dict, seed: int, sets: list[str]) -> dict:
    """The same case in aqmlab (its case_scenario, with scenario overrides), measured by its
    reproduction's run_metrics."""
    sc = C.case_scenario(load(str(C.base_file())), qdisc=c["params"]["qdisc"], **c["run"])
    tables, meta = simulate(apply_overrides(sc, sets), seed)
    m, extra = C.run_metrics(tables, meta)
    if "timeline" in extra:
        m["timeline"] = extra["timeline"].to_pydict()
    return m


def run_one(side: str, ns: str, tag: str, c: dict, seed: int, sets: list[str]) -> str:
    path = run_path(side, tag, c, seed)
    if path.exists():
        return "cached"
    m = ns2_metrics(ns, c, seed, sets) if side == "ns2" else aqmlab_metrics(c, seed, sets)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(m))
    return "ran"


def outcome(side: str, tag: str, cs: list[dict], reps: int) -> Outcome:
    """The runs as aqmlab's sweep table (same columns) and timelines, aggregated by aqmlab's code."""
    rows, tls = [], []
    for c in cs:
        for seed in range(1, reps + 1):
            p = run_path(side, tag, c, seed)
            if not p.exists():
                continue
            m = json.loads(p.read_text())
            run_id = f"{c['params']['case']}/{c['params']['qdisc']}/{seed}"
            tl = m.pop("timeline", None)
            rows.append({**c["params"], **m, "rep": seed - 1, "run_id": run_id, "status": "ok"})
            if tl:
                tls.append(pd.DataFrame({**tl, "run_id": run_id}))
    runs = pd.DataFrame(rows)
    data = pd.concat(tls, ignore_index=True) if tls else pd.DataFrame()
    return Outcome(C.results(runs), runs, [], "all", data=data)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="/work/ns2-build/bin/ns", help="the ns binary of build.sh")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--part", nargs="+", default=list(PARTS), choices=PARTS)
    ap.add_argument("--qdisc", nargs="+", default=C.QDISCS, choices=C.QDISCS)
    ap.add_argument("--rate", nargs="+", type=float, default=None, help="only the cases at these Mb/s")
    ap.add_argument(
        "--set", action="append", default=[], metavar="CLASS/VAR=VALUE", help="a changed ns-2 default"
    )
    ap.add_argument("--buffer-bdp", type=float, default=None, metavar="K",
                    help="bottleneck buffer K x bdp packets in the static cases (the script: 1)")  # fmt: skip
    ap.add_argument("--tag", default="", help="name of a variant (needed with --set or --buffer-bdp)")
    ap.add_argument(
        "--aqmlab", action="store_true", help="run the subset in aqmlab instead (--set: scenario keys)"
    )
    a = ap.parse_args()
    side = "aqmlab" if a.aqmlab else "ns2"
    if (a.set or a.buffer_bdp) and not a.tag:
        ap.error("--set and --buffer-bdp need --tag")
    if not Path(a.ns).exists():
        ap.error(f"--ns {a.ns}: no such file (run validation/ns2/build.sh)")
    cs = [
        c
        for c in cases(a.part)
        if c["params"]["qdisc"] in a.qdisc and (not a.rate or c["run"]["bw"] in a.rate)
    ]
    for c in cs:
        if a.buffer_bdp and "schedule" not in c["run"]:
            r = c["run"]
            r["limit"] = round(a.buffer_bdp * C.bdp_packets(r["bw"], r["size"]))
    done = [run_one(side, a.ns, a.tag, c, seed, a.set) for c in cs for seed in range(1, a.reps + 1)]
    print(f"{len(done)} runs, {done.count('ran')} run now", file=sys.stderr)
    o = outcome(side, a.tag, cases(list(PARTS)), a.reps)
    meta = {
        "reps": a.reps,
        "parts": a.part,
        "set": a.set,
        "buffer_bdp": a.buffer_bdp,
        "tag": a.tag,
        "subset": SUBSET,
    }
    doc = {**o.results, "study": C.NAME, "series": "all", "quick": False,
           "run_counts": {"total": len(o.runs), "failed": 0}, "verdicts": verdicts(C.STUDY, o), "meta": meta}  # fmt: skip
    name = OUT / (f"{side}_codel2012" + (f"_{a.tag}" if a.tag else "") + ".json")
    name.write_text(json.dumps(doc, indent=1, default=float))
    print(f"wrote {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
