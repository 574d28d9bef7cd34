"""Puts aqmlab, ns-2 and the published values of transients2014 side by side (Markdown), and
judges the study's claims on the ns-2 results with aqmlab's own judges.

    aqmlab reproduce transients2014 --json > aqmlab_11.json
    python validation/ns2/transients.py --reps 100
    python validation/ns2/compare.py aqmlab_11.json validation/ns2/out/ns2_11.json

Any other study whose ns-2 runner writes the JSON of ``aqmlab reproduce STUDY --json`` (its
results, "study" and "verdicts"; e.g. codel2012.py) is compared generically: every number both
sides have, by its path in the results, then each claim's verdict and measured values side by
side.

    aqmlab reproduce codel2012 --json > aqmlab_codel2012.json
    python validation/ns2/codel2012.py
    python validation/ns2/compare.py aqmlab_codel2012.json validation/ns2/out/ns2_codel2012.json

Differences between aqmlab and ns-2 above FLAG (15 %) are marked with '!'.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import aqmlab.reproduce.transients2014 as T
from aqmlab.reproduce.study import Outcome, verdicts

FLAG = 0.15
METRICS = [  # (key, title, scale to the printed unit)
    ("queue_delay_p95_s", "p95 queueing delay (ms)", 1e3),
    ("queue_delay_median_s", "median queueing delay (ms)", 1e3),
    ("queue_delay_max_median_s", "max queueing delay per run, median (ms)", 1e3),
    ("spike60_median_s", "spike > 60 ms, median (ms)", 1e3),
    ("spike100_median_s", "spike > 100 ms, median (ms)", 1e3),
    ("response_g1_median_s", "group 1 response time, median (s)", 1),
    ("response_g2_median_s", "group 2 response time, median (s)", 1),
    ("early_drops_total", "AQM drops, all runs", 1),
]


def value(res: dict, key: str, q: str, ld: str) -> float | None:
    v = res.get(key, {}).get(q, {}).get(ld)
    return None if v is None else float(v)


def rel(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "–"
    d = a / b - 1
    return f"{d:+.0%}" + (" !" if abs(d) > FLAG else "")


def num(v: float | None, scale: float) -> str:
    if v is None:
        return "–"
    x = v * scale
    return f"{x:.0f}" if abs(x) >= 100 or scale == 1e3 else f"{x:.3g}"


def table_ii(aq: dict, ns: dict) -> list[str]:
    out = [
        "| qdisc | load | published | aqmlab | ns-2 | aqmlab vs ns-2 | ns-2 vs published |",
        "|---|---|---|---|---|---|---|",
    ]
    for q, cols in T.TABLE_II.items():
        for ld, pub in cols.items():
            a, n = value(aq, "queue_delay_p95_s", q, ld), value(ns, "queue_delay_p95_s", q, ld)
            out.append(
                f"| {q} | {ld} | {pub * 1e3:.0f} | {num(a, 1e3)} | {num(n, 1e3)} | {rel(a, n)} | {rel(n, pub)} |"
            )
    return out


def metric_table(aq: dict, ns: dict, key: str, scale: float, qdiscs: list[str]) -> list[str]:
    out = ["| qdisc | " + " | ".join(T.LOADS) + " |", "|---|" + "---|" * len(T.LOADS)]
    for q in qdiscs:
        cells = []
        for ld in T.LOADS:
            a, n = value(aq, key, q, ld), value(ns, key, q, ld)
            cells.append(f"{num(a, scale)} / {num(n, scale)} ({rel(a, n)})")
        out.append(f"| {q} | " + " | ".join(cells) + " |")
    return out


def judged(results: dict, series: str) -> dict:
    return verdicts(T.STUDY, Outcome(results=results, runs=None, sweeps=[], series=series))


def claims_table(aq: dict, ns: dict, series: str) -> list[str]:
    va, vn = judged(aq, series), judged(ns, series)
    out = ["| claim | aqmlab | ns-2 | ns-2 measured |", "|---|---|---|---|"]
    for ca, cn in zip(va["claims"], vn["claims"]):
        meas = json.dumps(cn["measured"], default=lambda x: round(x, 4) if isinstance(x, float) else str(x))
        out.append(f"| {ca['id']} | {ca['holds']} | {cn['holds']} | {meas} |")
    t = vn["tables"].get("Table II")
    if t:
        out.append(
            f"\nns-2: {t['within_30']} of {t['measured']} measured Table II cells within 30 % of the published."
        )
    return out


NOT_RESULTS = {"study", "series", "quick", "run_counts", "verdicts", "meta"}


def leaves(doc, path: tuple = ()):
    """(path, number) for every number in a nested results dict (run counts left out)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k != "runs":
                yield from leaves(v, (*path, str(k)))
    elif isinstance(doc, int | float) and not isinstance(doc, bool):
        yield path, float(doc)


def generic(aq: dict, ns_doc: dict) -> list[str]:
    """Any study: every number both sides report, then the claims, judged on each side."""
    res = {k: v for k, v in ns_doc.items() if k not in NOT_RESULTS}
    mine = dict(leaves({k: v for k, v in aq.items() if k not in NOT_RESULTS}))
    out = [f"{ns_doc['study']}; ns-2: {ns_doc.get('meta')}", "", "| result | aqmlab | ns-2 | aqmlab vs ns-2 |",
           "|---|---|---|---|"]  # fmt: skip
    for path, n in leaves(res):
        a = mine.get(path)
        if a is not None:
            out.append(f"| {'.'.join(path)} | {a:.4g} | {n:.4g} | {rel(a, n)} |")
    out += [
        "",
        "| claim (published) | aqmlab | ns-2 | aqmlab measured | ns-2 measured |",
        "|---|---|---|---|---|",
    ]
    mine_claims = {c["id"]: c for c in aq.get("verdicts", {}).get("claims", [])}
    for c in ns_doc["verdicts"]["claims"]:
        m = mine_claims.get(c["id"], {})
        out.append(f"| {c['id']}. {c['text']} | {m.get('holds')} | {c['holds']} | {short(m.get('measured'))} | "
                   f"{short(c['measured'])} |")  # fmt: skip
    return out


def short(measured) -> str:
    return json.dumps(rounded(measured))


def rounded(v):
    if isinstance(v, dict):
        return {k: rounded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [rounded(x) for x in v]
    return float(f"{v:.3g}") if isinstance(v, float) else v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("aqmlab_json", help="aqmlab reproduce STUDY --json output")
    ap.add_argument("ns2_json", help="the ns-2 runner's JSON (transients.py: out/ns2_<series>.json)")
    a = ap.parse_args()
    aq = json.loads(Path(a.aqmlab_json).read_text())
    ns_doc = json.loads(Path(a.ns2_json).read_text())
    if "study" in ns_doc:
        print("\n".join(generic(aq, ns_doc)))
        return 0
    ns, series = ns_doc["results"], ns_doc["meta"]["series"]
    qdiscs = [
        q
        for q in [*T.QDISCS, "droptail"]
        if q in ns.get("queue_delay_p95_s", {}) or q in aq.get("queue_delay_p95_s", {})
    ]
    lines = [f"series {series} ms; ns-2: {ns_doc['meta']}", ""]
    if series == "11":
        lines += ["Table II (95th percentile of queueing delay, ms)", "", *table_ii(aq, ns), ""]
    for key, title, scale in METRICS:
        lines += [
            f"{title}: aqmlab / ns-2 (aqmlab vs ns-2)",
            "",
            *metric_table(aq, ns, key, scale, qdiscs),
            "",
        ]
    if series == "11":
        lines += ["Claims (aqmlab's judges)", "", *claims_table(aq, ns, series)]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
