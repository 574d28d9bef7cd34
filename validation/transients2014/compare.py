"""Compare aqmlab's ``reproduce transients2014`` with the ns-3 re-creation, cell by cell.

Reads ``out/ns3_<series>.json`` (written by run.py) and aqmlab's results: runs
``aqmlab reproduce transients2014 --json`` once per series (stored under ``out/aqmlab/``, its
JSON cached in ``out/aqmlab_<series>.json``; ``--rerun`` ignores the cache). Prints one markdown
table per series: aqmlab vs ns-3 and the relative difference (aqmlab - ns-3) / ns-3, with cells
beyond ``--flag`` (15 %) in bold.

    python validation/transients2014/compare.py --series 11 101 --reps 100
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]
COLUMNS = [  # (header, metric key, scale, decimals)
    ("p95 ms", "queue_delay_p95_s", 1e3, 0),
    ("max median ms", "queue_delay_max_median_s", 1e3, 0),
    ("max worst ms", "queue_delay_max_worst_s", 1e3, 0),
    ("spike >60 ms, ms", "spike60_median_s", 1e3, 0),
    ("spike >100 ms, ms", "spike100_median_s", 1e3, 0),
    ("resp. g1 s", "response_g1_median_s", 1, 2),
    ("resp. g2 s", "response_g2_median_s", 1, 2),
]


def aqmlab_exe() -> str:
    here = Path(sys.executable).parent / "aqmlab"
    return str(here) if here.exists() else (shutil.which("aqmlab") or "aqmlab")


def aqmlab_results(series: str, reps: int, jobs: int, rerun: bool) -> dict:
    cache = OUT / f"aqmlab_{series}.json"
    if cache.exists() and not rerun:
        data = json.loads(cache.read_text())
        if data.get("reps") == reps:
            return data["results"]
    cmd = [aqmlab_exe(), "reproduce", "transients2014", "--reps", str(reps), "--series", series]
    cmd += ["--out", str(OUT / "aqmlab"), "--json", "--jobs", str(jobs)]
    print("running: " + " ".join(cmd), file=sys.stderr)
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    results = json.loads(res.stdout[res.stdout.index("{") :])
    OUT.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"reps": reps, "series": series, "results": results}, indent=1))
    return results


def rel(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return (a - b) / b


def cell(a: float | None, n: float | None, scale: float, nd: int, flag: float) -> str:
    if a is None and n is None:
        return "–"
    fa = "–" if a is None else f"{a * scale:.{nd}f}"
    fn = "–" if n is None else f"{n * scale:.{nd}f}"
    r = rel(a, n)
    if r is None:
        return f"{fa} vs {fn}"
    txt = f"{fa} vs {fn} ({r * 100:+.0f}%)"
    return f"**{txt}**" if abs(r) > flag else txt


def table(series: str, aq: dict, ns: dict, flag: float) -> list[str]:
    lines = [
        f"#### {series} ms series: aqmlab vs ns-3 (relative difference; bold beyond {flag * 100:.0f}%)",
        "",
        "| qdisc | load | " + " | ".join(h for h, *_ in COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    for q in QDISCS:
        for ld in LOADS:
            nc = ns[q][ld]
            if not nc.get("runs"):
                continue
            vals = [cell(aq[k][q].get(ld), nc.get(k), s, nd, flag) for _, k, s, nd in COLUMNS]
            lines.append(f"| {q} | {ld} | " + " | ".join(vals) + " |")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", nargs="+", default=["11"], choices=["11", "101"])
    ap.add_argument("--reps", type=int, default=100, help="aqmlab replications per case")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--flag", type=float, default=0.15, help="relative difference shown in bold")
    ap.add_argument("--rerun", action="store_true", help="rerun aqmlab even if its JSON is cached")
    ap.add_argument("--ns3", default="", help="ns-3 aggregate: '' or 'noloops' (run.py --exclude-rto-loops)")
    ap.add_argument(
        "--variant", help="compare out/aqmlab_<series>_<VARIANT>.json (aqmlab_variant.py) instead"
    )
    a = ap.parse_args()
    for s in a.series:
        nf = OUT / (f"ns3_{s}_{a.ns3}.json" if a.ns3 else f"ns3_{s}.json")
        if not nf.exists():
            print(f"missing {nf}: run validation/transients2014/run.py --series {s}", file=sys.stderr)
            return 1
        nsd = json.loads(nf.read_text())
        if a.variant:
            vd = json.loads((OUT / f"aqmlab_{s}_{a.variant}.json").read_text())
            aq, what = vd["results"], f"aqmlab ({' '.join(vd['sets'])}) {vd['reps']} reps"
        else:
            aq, what = aqmlab_results(s, a.reps, a.jobs, a.rerun), f"aqmlab {a.reps} reps"
        print(f"\n{what} vs ns-3 {nsd['reps']} reps per cell\n")
        print("\n".join(table(s, aq, nsd["results"], a.flag)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
