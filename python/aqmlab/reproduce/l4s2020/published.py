"""l4s2020's published scenario-1 table (table_s1.S1) as the study judges it: the dualpi2, pfifo
and fq_codel rows (cnq_codel_af is out of scope) gathered into pairs, and where the measured
counterpart of each pair is.

A pair is the two flows of a run as (congestion control, RTT), whichever was flow 1. The batch ran
cubic against prague in both orders at equal RTTs (flow 1 and flow 2 swapped): those two runs are
one pair, and each flow's D_SS is the mean of both orders. Under pfifo the two orders of one pair
differ by up to 2x (50 Mbit/s, 20 ms: prague 5.88 or 12.24 Mbit/s), so the pair is judged on that
mean, not on one run. At unequal RTTs flow 1 always had the longer one, so each run is a pair of
its own. Where both flows are the same (cubic against cubic at 10 ms) the run is its own pair
with two indistinguishable flows: each flow's D_SS is the mean of the two. Per rate and qdisc:
3 equal-RTT pairs of cubic against prague, 6 of identical flows, 12 at unequal RTTs; 21 pairs,
126 in all, of 144 runs."""

from __future__ import annotations

from collections import defaultdict

from aqmlab.reproduce.l4s2020.setup import QDISCS, RATES
from aqmlab.reproduce.l4s2020.table_s1 import S1
from aqmlab.reproduce.study import Outcome, Published

COLUMNS = ("D_SS A", "D_SS B")
"""A pair's two cells (Mbit/s): flow A and flow B of its row label."""


def study_qdisc(name: str) -> str:
    """A qdisc name of the published table as the study's cases name it: pfifo(N) is pfifo."""
    return name.split("(")[0]


def in_scope(row: tuple) -> bool:
    return study_qdisc(row[1]) in QDISCS


def flow_name(cc: str, rtt_ms) -> str:
    return f"{cc} {int(rtt_ms)} ms"


def pair_row(cc1: str, rtt1, cc2: str, rtt2) -> tuple[str, str, str]:
    """(row label, flow A, flow B) of a run's pair; A and B in a fixed order whatever the run's."""
    a, b = sorted((flow_name(cc1, rtt1), flow_name(cc2, rtt2)))
    return f"A {a}, B {b}", a, b


def table_id(rate, qdisc: str) -> str:
    return f"S1 {qdisc} {int(rate)} Mbit/s"


def pairs(runs) -> dict:
    """{table id: {row: {"D_SS A": mean, "D_SS B": mean}}} of runs given as (rate, qdisc, cc1,
    rtt1, dss1, cc2, rtt2, dss2); a flow's mean is over every D_SS of that (cc, RTT) in the pair's
    runs (both flows' when the two are the same); a pair with a missing D_SS has no value."""
    acc: dict = {}
    for rate, q, cc1, rtt1, d1, cc2, rtt2, d2 in runs:
        row, a, b = pair_row(cc1, rtt1, cc2, rtt2)
        flows, per = acc.setdefault((table_id(rate, study_qdisc(q)), row), ((a, b), defaultdict(list)))
        per[flow_name(cc1, rtt1)].append(d1)
        per[flow_name(cc2, rtt2)].append(d2)
    out: dict = defaultdict(dict)
    for (tid, row), (flows, per) in acc.items():
        out[tid][row] = {col: mean_or_none(per[f]) for col, f in zip(COLUMNS, flows, strict=True)}
    return dict(out)


def mean_or_none(values) -> float | None:
    """The mean; None when a value is missing."""
    return None if any(v is None for v in values) else sum(values) / len(values)


PUBLISHED_RUNS = [r[:8] for r in S1 if in_scope(r)]
"""The 144 published runs in scope, (rate, qdisc, cc1, rtt1, dss1, cc2, rtt2, dss2)."""
PUBLISHED_PAIRS = pairs(PUBLISHED_RUNS)
"""The published pairs, {table id: {row: {column: Mbit/s}}}."""
TABLE_IDS = tuple(table_id(r, q) for r in RATES.values() for q in QDISCS)


def _measured(tid: str):
    def measured(o: Outcome) -> dict:
        return o.results.get("pairs", {}).get(tid, {})

    return measured


PUBLISHED = tuple(
    Published(tid, "each pair's D_SS (Mbit/s), the mean of both orders where the batch ran two",
              PUBLISHED_PAIRS[tid], _measured(tid))
    for tid in TABLE_IDS
)  # fmt: skip
