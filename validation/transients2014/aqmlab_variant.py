"""aqmlab's transients2014 with extra scenario overrides, to test a model difference.

Runs the same sweep as ``aqmlab reproduce transients2014`` (same seeds, same metrics) with
``--set KEY=VALUE`` overrides added to every run, and stores the aggregate as
``out/aqmlab_<series>_<tag>.json`` in the format compare.py reads (``compare.py --variant TAG``).

Keys under ``topology.down.qdisc.`` are set inside the qdisc table of every cell run (of those
named by ``--qdisc``): the qdisc is an axis of the sweep. ``--qset NAME:KEY=VALUE`` sets a key
of the qdisc table of the study's qdisc NAME only (e.g. ``--qset codel:variant=linux``). Example (ns-3's one-packet device queue below the bottleneck qdisc):

    python validation/transients2014/aqmlab_variant.py --tag devq1p \\
        --set topology.down.device_queue=1p --series 11 --reps 100
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from aqmlab.reproduce import transients2014 as T
from aqmlab.scenario import parse_value
from aqmlab.sweep import run_sweep

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
QDISC_KEY = "topology.down.qdisc"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tag", required=True)
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--qset", action="append", default=[], metavar="QDISC:KEY=VALUE")
    ap.add_argument("--series", default="11", choices=list(T.SERIES))
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--qdisc", nargs="+", default=None)
    ap.add_argument("--load", nargs="+", default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args()
    spec = T.spec_for(a.reps, a.series, a.load, a.qdisc)
    qsets = []  # (key in the qdisc table, value, the qdisc names it applies to or None = all)
    for s in a.sets:
        k, v = s.split("=", 1)
        if k.startswith(QDISC_KEY + "."):
            qsets.append((k[len(QDISC_KEY) + 1 :], v, a.qdisc))
    for s in a.qset:
        name, kv = s.split(":", 1)
        k, v = kv.split("=", 1)
        qsets.append((k, v, [name]))
    for k, v, only in qsets:  # the qdisc is an axis: set the key in the named cells' tables
        for axis in spec.axes:
            if QDISC_KEY in axis:
                names = axis["params.qdisc"]
                axis[QDISC_KEY] = [
                    {**q, k: parse_value(v)} if only is None or n in only else q
                    for n, q in zip(names, axis[QDISC_KEY], strict=True)
                ]
    for s in a.sets:
        k, v = s.split("=", 1)
        if not k.startswith(QDISC_KEY + "."):
            spec.fixed[k] = parse_value(v)
    spec.name = f"{spec.name}-{a.tag}"
    root = OUT / "aqmlab_variants"
    res = run_sweep(spec, out=root, jobs=a.jobs, keep=("flows", "links", "rate_schedule"),
                    metrics_fn=T.METRICS_FN)  # fmt: skip
    results = T.aggregate(res.table, T._delays(root, res.table), T.LOADS, T.QDISCS)
    out = OUT / f"aqmlab_{a.series}_{a.tag}.json"
    payload = {
        "reps": a.reps,
        "series": a.series,
        "sets": a.sets + [f"qset {q}" for q in a.qset],
        "results": results,
    }
    out.write_text(json.dumps(payload, indent=1))
    print(f"wrote {out} ({res.total} runs, {len(res.failed)} failed)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
