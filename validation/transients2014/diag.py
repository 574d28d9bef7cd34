"""Per-cell counters behind the aqmlab vs ns-3 differences (means per run unless noted).

Needs run.py's per-run JSON and the aqmlab results compare.py stored under out/aqmlab/.

    python validation/transients2014/diag.py --series 11 --qdisc codel sfq_codel
"""

from __future__ import annotations

import argparse
import glob
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]
SEG = 1460


def aqm_drop(qdisc: str, reason: str) -> bool:
    if "Unforced" in reason or "Target exceeded" in reason:
        return True
    return qdisc.startswith("hred") and reason == "Forced drop"


def ns3_cell(series: str, q: str, ld: str) -> dict:
    runs = [
        json.loads(Path(f).read_text())
        for f in glob.glob(str(OUT / "runs" / series / q / ld.replace("+", "p") / "*.json"))
    ]
    if not runs:
        return {}
    fl = [f for r in runs for f in r["flows"]]
    return {
        "pkts": np.mean([len(r["delays_ns"]) for r in runs]),
        "aqm_drops": np.mean([sum(c for k, c in r["drops"].items() if aqm_drop(q, k)) for r in runs]),
        "retx_segs": sum(f["retx_bytes"] for f in fl) / SEG / len(runs),
        "rtos": sum(f["rtos"] for f in fl) / len(runs),
        "spike60_med_ms": float(np.median([r["spike60_s"] for r in runs])) * 1e3,
        "delay_p50_ms": float(np.median(np.concatenate([r["delays_ns"] for r in runs]))) / 1e6,
    }


def aqmlab_tables(series: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    name = "transients2014" if series == "11" else f"transients2014-{series}"
    runs = pd.read_csv(OUT / "aqmlab" / "reproduce" / name / "runs.csv")
    sweep = [
        d
        for d in glob.glob(str(OUT / "aqmlab" / "sweeps" / f"{name}-*"))
        if Path(d).name.count("-") == name.count("-") + 1
    ]
    flows = pd.concat(
        [pq.read_table(f).to_pandas() for d in sweep for f in glob.glob(f"{d}/flows/*.parquet")]
    )
    return runs, flows


def aqmlab_cell(runs: pd.DataFrame, flows: pd.DataFrame, q: str, ld: str) -> dict:
    c = runs[(runs["qdisc"] == q) & (runs["load"] == ld) & (runs["status"] == "ok")]
    if not len(c):
        return {}
    f = flows[flows["run_id"].isin(set(c["run_id"])) & (flows["kind"] == "tcp")]
    n = len(c)
    return {
        "pkts": float("nan"),
        "aqm_drops": float(c["early_drops"].mean()),
        "retx_segs": float(f["retransmits"].sum()) / n,
        "rtos": float(f["rto_count"].sum()) / n,
        "spike60_med_ms": float(c["spike60_s"].median()) * 1e3
        if c["spike60_s"].notna().any()
        else float("nan"),
        "delay_p50_ms": float(c["queue_delay_p50_ms"].median()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--series", default="11", choices=["11", "101"])
    ap.add_argument("--qdisc", nargs="+", default=QDISCS, choices=QDISCS)
    a = ap.parse_args()
    runs, flows = aqmlab_tables(a.series)
    keys = ["aqm_drops", "retx_segs", "rtos", "spike60_med_ms", "delay_p50_ms"]
    print(
        f"#### {a.series} ms series, per run (aqmlab vs ns-3); ns-3 packets transmitted per run in the last column\n"
    )
    print(
        "| qdisc | load | AQM drops | retransmitted segments | RTOs | spike>60ms median ms | delay p50 ms (aqmlab: median of run p50s; ns-3: pooled) | ns-3 pkts |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for q in a.qdisc:
        for ld in LOADS:
            x, y = aqmlab_cell(runs, flows, q, ld), ns3_cell(a.series, q, ld)
            if not x or not y:
                continue
            cells = [f"{x[k]:.1f} vs {y[k]:.1f}" for k in keys]
            print(f"| {q} | {ld} | " + " | ".join(cells) + f" | {y['pkts']:.0f} |")


if __name__ == "__main__":
    main()
