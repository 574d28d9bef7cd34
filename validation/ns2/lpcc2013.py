"""lpcc2013's simulation (3a, 3c) in ns-2.35: runs tcl/lpcc.tcl over the study's cells and
computes, from the bottleneck queue's trace and the senders' cumulative ACKs, the numbers
``aqmlab reproduce lpcc2013 --json`` reports (same keys, same definitions: E[Q]/Q_max the
time-average backlog in packets over the packet limit, E[Q] in ms the mean backlog in bytes
drained at the link rate, eta the bytes put on the link over its capacity, TCP% the best-effort
class's share of the acknowledged bytes).

    python validation/ns2/lpcc2013.py --reps 10
    python validation/ns2/lpcc2013.py --reps 10 --qdisc sfq --tag sfq400 --set Queue/SFQ/maxqueue_=400
    python validation/ns2/lpcc2013.py --reps 10 --compare aqmlab.json

ns-2.35 has TCP-LP (``tcp_lp``) but no LEDBAT, Nice or CHOKe (README.md); ``newreno`` runs both
classes as NewReno, a control for the queue's own effect. Every run's numbers are cached in
out/lpcc_runs[_TAG]/ and reused; the aggregate goes to out/ns2_lpcc2013[_TAG].json as
{"meta": ..., "results": {"3a": {key: {qdisc: v}}, "3c": {key: {lpcc: {qdisc: v}}}}}. Replication
r seeds ns-2's default RNG and the start jitter with r.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from aqmlab.reproduce import lpcc2013 as L

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
SCRIPT = HERE / "tcl" / "lpcc.tcl"
QDISCS = ["droptail", "red", "sfq", "drr", "codel"]
"""lpcc2013's disciplines that ns-2.35 has (CHOKe's ns-2 source was not found)."""
LPCCS = ["tcp_lp", "newreno"]
DURATION_S = 60.0
N_PER_CLASS = 5
PARTS = {  # part -> (rate Mb/s, limit packets, lpccs): 3c's base.toml; 3a with LEDBAT in the study
    "3c": (4.0, 400, LPCCS),
    "3a": (float(L.A_RATE.removesuffix("Mbps")), int(L.A_LIMIT.removesuffix("p")), ["tcp_lp"]),
}
KEYS = {  # JSON key -> the run's number (and the scale aqmlab reports it in)
    "tcp_share_pct": ("tcp_pct", 100.0),
    "eq_over_qmax": ("eq_qmax", 1.0),
    "utilization": ("eta", 1.0),
    "mean_queue_ms": ("qdelay_mean_ms", 1.0),
    "mean_queue_pkts": ("eq_pkts", 1.0),
    "fairness": ("fairness", 1.0),
}


def time_average(times: list[float], values: list[int], end: float) -> float:
    """The time average over [0, end] of a step function (values[i] from times[i])."""
    t = np.append(np.asarray(times, dtype=float), end)
    return float(np.sum(np.diff(t) * np.asarray(values, dtype=float)) / end)


def parse_trace(path: Path, duration: float) -> dict:
    """Bytes put on the link, and the time-average backlog in packets and bytes."""
    size: dict[str, int] = {}
    times, pkts, byts = [0.0], [0], [0]
    sent = 0
    for line in path.read_text().splitlines():
        f = line.split()
        ev, t, uid, sz = f[0], float(f[1]), f[11], int(f[5])
        if ev == "+":
            size[uid] = sz
            pkts.append(pkts[-1] + 1)
            byts.append(byts[-1] + sz)
        elif ev in "-d" and uid in size:
            pkts.append(pkts[-1] - 1)
            byts.append(byts[-1] - size.pop(uid))
            sent += sz if ev == "-" else 0
        else:
            continue
        times.append(t)
    return {"sent": sent, "eq_pkts": time_average(times, pkts, duration),
            "eq_bytes": time_average(times, byts, duration)}  # fmt: skip


def jain(xs: list[float]) -> float:
    x = np.asarray(xs, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if x.any() else 1.0


def run_metrics(
    tr: dict, acked: dict[str, list[float]], rate_bps: float, limit: int, duration: float
) -> dict:
    """One run's numbers under aqmlab's run-metric names (reproduce/lpcc2013/metrics.py run_metrics)."""
    be, lp = sum(acked["be"]), sum(acked["lp"])
    return {
        "eta": tr["sent"] * 8 / (rate_bps * duration),
        "eq_qmax": tr["eq_pkts"] / limit,
        "eq_pkts": tr["eq_pkts"],
        "qdelay_mean_ms": tr["eq_bytes"] * 8 / rate_bps * 1e3,
        "tcp_pct": be / (be + lp) if be + lp else None,
        "fairness": (jain(acked["be"]) + jain(acked["lp"])) / 2,
    }


def run_path(tag: str, part: str, lpcc: str, qdisc: str, seed: int) -> Path:
    runs = f"lpcc_runs_{tag}" if tag else "lpcc_runs"
    return OUT / runs / part / lpcc / qdisc / f"{seed}.json"


def run_one(ns: str, tag: str, part: str, lpcc: str, qdisc: str, seed: int, sets: list[str]) -> str:
    path = run_path(tag, part, lpcc, qdisc, seed)
    if path.exists():
        return "cached"
    rate, limit, _ = PARTS[part]
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "queue.tr"
        cmd = [ns, str(SCRIPT), qdisc, lpcc, str(N_PER_CLASS), f"{rate:g}", str(limit), str(seed),
               f"{DURATION_S:g}", str(trace), *sets]  # fmt: skip
        res = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
        tr = parse_trace(trace, DURATION_S)
    acked: dict[str, list[float]] = {"be": [], "lp": []}
    for ln in res.stdout.splitlines():
        if ln.startswith("flow "):
            _, cls, _, b = ln.split()
            acked[cls].append(max(float(b), 0.0))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(run_metrics(tr, acked, rate * 1e6, limit, DURATION_S)))
    return "ran"


def mean(runs: list[dict], key: str, scale: float) -> float | None:
    v = [r[key] for r in runs if r.get(key) is not None]
    return float(np.mean(v) * scale) if v else None


def results(tag: str, reps: int, qdiscs: list[str]) -> dict:
    """{"3c": {key: {lpcc: {qdisc: mean}}}, "3a": {key: {qdisc: mean}}} (3a: TCP-LP)."""
    out: dict = {}
    for part, (_, _, lpccs) in PARTS.items():
        cells = {}
        for lp in lpccs:
            for q in qdiscs:
                runs = [json.loads(p.read_text()) for s in range(1, reps + 1)
                        if (p := run_path(tag, part, lp, q, s)).exists()]  # fmt: skip
                if runs:
                    cells[lp, q] = runs
        if not cells:
            continue
        if part == "3a":
            out[part] = {k: {q: mean(r, m, s) for (_, q), r in cells.items()} for k, (m, s) in KEYS.items()}
        else:
            res: dict = {}
            for k, (m, s) in KEYS.items():
                for (lp, q), r in cells.items():
                    res.setdefault(k, {}).setdefault(lp, {})[q] = mean(r, m, s)
            out[part] = res
    return out


def fmt(v: float | None, key: str) -> str:
    if v is None:
        return "–"
    return f"{v:.1f}" if key in ("tcp_share_pct", "mean_queue_ms", "mean_queue_pkts") else f"{v:.3f}"


def compare(ns: dict, aq: dict) -> list[str]:
    """3c side by side, aqmlab / ns-2, per key and qdisc, for the LPCCs both ran; and each AQM's
    shrink of E[Q]/Q_max against DropTail."""
    lines = []
    c_ns, c_aq = ns.get("3c", {}), aq.get("3c", {})
    for key in ("eq_over_qmax", "tcp_share_pct", "mean_queue_ms", "utilization"):
        lines += [
            f"\n{key}: aqmlab / ns-2",
            "| LPCC | " + " | ".join(QDISCS) + " |",
            "|---" * (len(QDISCS) + 1) + "|",
        ]
        for lp in c_ns.get(key, {}):
            a = c_aq.get(key, {}).get(lp, {})
            n = c_ns[key][lp]
            lines.append(
                f"| {lp} | "
                + " | ".join(f"{fmt(a.get(q), key)} / {fmt(n.get(q), key)}" for q in QDISCS)
                + " |"
            )
    lines += ["\nDropTail's E[Q]/Q_max over each AQM's (ns-2)", "| LPCC | " + " | ".join(QDISCS[1:]) + " |",
              "|---" * len(QDISCS) + "|"]  # fmt: skip
    for lp, per in c_ns.get("eq_over_qmax", {}).items():
        dt = per.get("droptail")
        lines.append(f"| {lp} | " + " | ".join(f"{dt / per[q]:.1f}" if dt and per.get(q) else "–"
                                               for q in QDISCS[1:]) + " |")  # fmt: skip
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="/work/ns2-build/bin/ns", help="the ns binary of build.sh")
    ap.add_argument("--reps", type=int, default=L.REPS)
    ap.add_argument("--part", nargs="+", default=list(PARTS), choices=list(PARTS))
    ap.add_argument("--qdisc", nargs="+", default=QDISCS, choices=QDISCS)
    ap.add_argument("--lpcc", nargs="+", default=LPCCS, choices=LPCCS)
    ap.add_argument(
        "--set", action="append", default=[], metavar="CLASS/VAR=VALUE", help="a changed ns-2 default"
    )
    ap.add_argument("--tag", default="", help="name of a variant (needed with --set)")
    ap.add_argument("--compare", type=Path, help="`aqmlab reproduce lpcc2013 --json` output to put beside")
    a = ap.parse_args()
    if a.set and not a.tag:
        ap.error("--set needs --tag")
    if not Path(a.ns).exists():
        ap.error(f"--ns {a.ns}: no such file (run validation/ns2/build.sh)")
    done = [run_one(a.ns, a.tag, part, lp, q, r, a.set) for part in a.part for lp in PARTS[part][2]
            if lp in a.lpcc for q in a.qdisc for r in range(1, a.reps + 1)]  # fmt: skip
    print(f"{len(done)} runs, {done.count('ran')} run now", file=sys.stderr)
    res = results(a.tag, a.reps, a.qdisc)
    name = f"ns2_lpcc2013_{a.tag}.json" if a.tag else "ns2_lpcc2013.json"
    meta = {"reps": a.reps, "set": a.set, "tag": a.tag, "n_per_class": N_PER_CLASS, "duration_s": DURATION_S}
    (OUT / name).write_text(json.dumps({"meta": meta, "results": res}, indent=1))
    print(f"wrote {OUT / name}", file=sys.stderr)
    if a.compare:
        aq = json.loads(a.compare.read_text())
        print("\n".join(compare(res, aq.get("results", aq))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
