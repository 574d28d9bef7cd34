"""aqmlab's lpcc2013 3c (the sweep of ``aqmlab reproduce lpcc2013 --series 3c``: same scenario,
seeds and per-run metrics) with optional scenario overrides, to test one model choice.

Stores {lpcc: {qdisc: {metric: [mean, std]}}} as ``out/aqmlab_<tag>.json`` (compare.py reads
it). ``--lpcc newreno`` is the control: NewReno in both classes (the LEDBAT cells with the
second flow group's controller set to NewReno).

    python validation/lpcc2013/aqmlab_variant.py --tag base --reps 10
    python validation/lpcc2013/aqmlab_variant.py --tag devq1p --set topology.down.device_queue=1p
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from aqmlab.reproduce import lpcc2013 as L
from aqmlab.scenario import parse_value
from aqmlab.sweep import run_sweep

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
CONTROL = "newreno"
METRICS = {"tcp_share_pct": ("tcp_pct", 100.0), "eq_over_qmax": ("eq_qmax", 1.0),
           "utilization": ("eta", 1.0), "mean_queue_ms": ("qdelay_mean_ms", 1.0)}  # fmt: skip
"""compare.py's metric -> (lpcc2013.run_metrics key, scale)."""
EXTRA_QDISCS = {"fq_codel": ("sfq", {"kind": "fq_codel", "target": "5ms", "interval": "100ms"})}
"""Cells beyond 3c's: name -> (the 3c cell whose queue they replace, topology.down.qdisc); FQ-CoDel
is ns-3's only flow-queueing discipline."""
LIKE_NS3 = {"tcp_lp": {"clock": "exact", "clock_offset": "0s"}}
"""Per controller, what makes aqmlab's cells like-for-like with ns-3's: its TcpLp reads both
timestamps off one exact clock (aqmlab's default is the kernel's two jiffies clocks)."""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--lpcc", nargs="+", default=["ledbat", "tcp_lp"], choices=[*L.LPCCS, CONTROL])
    ap.add_argument("--qdisc", nargs="+", default=L.QDISCS, choices=[*L.QDISCS, *EXTRA_QDISCS])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    a = ap.parse_args()
    path = OUT / f"aqmlab_{a.tag}.json"
    doc = json.loads(path.read_text()) if path.exists() else {"tag": a.tag, "results": {}}
    doc["sets"], doc["reps"] = a.sets, a.reps
    total = failed = 0
    for lp in a.lpcc:
        for q in a.qdisc:  # one sweep per cell: its table needs no mapping back to the cell
            cell_q, queue = EXTRA_QDISCS.get(q, (q, None))
            spec = L.spec_for(a.reps, [cell_q], ["ledbat"] if lp == CONTROL else [lp])
            if queue is not None:
                for axis in spec.axes:
                    if "topology.down.qdisc" in axis:
                        axis["topology.down.qdisc"] = [queue] * len(axis["topology.down.qdisc"])
            for axis in spec.axes:  # this cell's controller only (overrides may be specific to it)
                if "flows.1.cc" in axis:
                    axis["params.lpcc"] = [lp]
                    axis["flows.1.cc"] = [lp]  # the control: the low-priority group runs NewReno too
                    own = L.lpcc_params(lp) if lp in L.LPCCS else {}
                    axis["flows.1.cc_params"] = [LIKE_NS3.get(lp, own)]
            spec.select["params.lpcc"] = [lp]
            for s in a.sets:
                k, v = s.split("=", 1)
                spec.fixed[k] = parse_value(v)
            spec.name = f"{spec.name}-{a.tag}-{lp}-{q}"
            res = run_sweep(spec, out=OUT / "aqmlab_variants", jobs=a.jobs, metrics_fn=L.METRICS_FN)
            total, failed = total + res.total, failed + len(res.failed)
            ok = res.table[res.table["status"] == "ok"]
            cell = {"runs": len(ok)}
            for name, (key, scale) in METRICS.items():
                v = np.asarray(ok[key], dtype=float) * scale
                cell[name] = [float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else 0.0]
            doc["results"].setdefault(lp, {})[q] = cell
    path.write_text(json.dumps(doc, indent=1))
    print(f"wrote {path} ({total} runs, {failed} failed)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
