"""Print lpcc2013 3c side by side: aqmlab (out/aqmlab_<tag>.json, aqmlab_variant.py) against
ns-3 (out/ns3[_<tag>].json, run.py), one markdown row per (LPCC, qdisc) with TCP%, E[Q]/Q_max
and utilisation, mean (std) over the seeds, and ns-3's relative difference from aqmlab.

    python validation/lpcc2013/compare.py                      # aqmlab base vs ns-3 as shipped
    python validation/lpcc2013/compare.py --ns3 lpgate --lpcc tcp_lp
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
# aqmlab's qdisc -> ns-3's counterpart; None: ns-3 has no such discipline. FqCoDel stands in for
# SFQ only as "a queue per flow": it is not SFQ (DRR over hashed queues with CoDel in each);
# aqmlab's fq_codel cell (aqmlab_variant.py) is the like-for-like one.
PAIRS = {"droptail": "pfifo", "red": "red", "codel": "codel", "fq_codel": "fq_codel", "sfq": "fq_codel",
         "drr": None, "choke": None}  # fmt: skip
METRICS = [("tcp_share_pct", "TCP%", 1), ("eq_over_qmax", "E[Q]/Q_max", 3), ("utilization", "eta", 3)]


def load(name: str) -> dict:
    path = OUT / name
    if not path.exists():
        sys.exit(f"missing {path}: run aqmlab_variant.py / run.py first")
    return json.loads(path.read_text())["results"]


def fmt(cell: dict | None, key: str, dec: int) -> str:
    if not cell or not cell.get("runs"):
        return "–"
    m, s = cell[key]
    return f"{m:.{dec}f} ({s:.{dec}f})"


def rel(a: dict | None, b: dict | None, key: str) -> str:
    if not a or not b or not a.get("runs") or not b.get("runs") or a[key][0] == 0:
        return "–"
    return f"{(b[key][0] - a[key][0]) / a[key][0] * 100:+.0f}%"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aqmlab", default="base", help="aqmlab tag (out/aqmlab_TAG.json)")
    ap.add_argument("--ns3", default="", help="ns-3 variant tag (out/ns3_TAG.json; empty: as shipped)")
    ap.add_argument("--lpcc", nargs="+", default=["ledbat", "tcp_lp", "newreno"])
    a = ap.parse_args()
    aq = load(f"aqmlab_{a.aqmlab}.json")
    ns = load(f"ns3_{a.ns3}.json" if a.ns3 else "ns3.json")
    head = ["LPCC", "qdisc (aqmlab / ns-3)"]
    for _, title, _ in METRICS:
        head += [f"{title} aqmlab", f"{title} ns-3", "diff"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for lp in a.lpcc:
        for q, q3 in PAIRS.items():
            ca = aq.get(lp, {}).get(q)
            cn = ns.get(lp, {}).get(q3) if q3 else None
            if ca is None and cn is None:
                continue
            row = [lp, f"{q} / {q3 or 'none'}"]
            for key, _, dec in METRICS:
                row += [fmt(ca, key, dec), fmt(cn, key, dec), rel(ca, cn, key)]
            print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
