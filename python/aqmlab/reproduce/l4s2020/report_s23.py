"""l4s2020's scenario-2 and scenario-3 sweep and what it reports: each run's spike and utilisation
numbers (metrics_s23), one table per scenario."""

from __future__ import annotations

from aqmlab.lazy import lazy
from aqmlab.reproduce.l4s2020.metrics_s23 import METRICS, METRICS_FN
from aqmlab.reproduce.l4s2020.setup_s23 import LABELS, spec_for
from aqmlab.reproduce.study import Table, fmt

pd = lazy("pandas")

NOTES_S23 = (
    "Scenarios 2 and 3: the bottleneck is HTB's class, changed at each of the harness's steps as tc class change "
    + "does (its rate as a schedule); Flent's flow runs from 5 s to 65 s, the harness's steps count from 0.",
    "Scenario 3 is reported, not judged: the README publishes no value of it.",
)


def sweep(ex, series: str, reps: int, scenarios, names):
    """The scenario-2/3 sweep of the asked cases, or None when none is asked."""
    spec = spec_for(series, reps, scenarios, names)
    return None if spec is None else ex.sweep(spec, METRICS_FN)


def results(runs) -> list[dict]:
    """Per case: its labels and its numbers, each the mean over the case's successful runs."""
    if not len(runs):
        return []
    ok = runs[runs["status"] == "ok"]
    out = []
    for case, g in ok.groupby("case", sort=False):
        r = g.iloc[0]
        means = {k: None if g[k].isna().any() else float(g[k].mean()) for k in METRICS}
        out.append({**{k: str(r[k]) for k in LABELS}, "measured": means})
    return out


HEADS = (
    "peak RTT (ms)",
    "RTT > 1 s (s)",
    "induced peak (ms)",
    "spike (s)",
    "goodput (Mbit/s)",
    "utilisation",
)


def tables(rows: list[dict]) -> list[Table]:
    out = []
    for sc, what in (("2", "rate step from 50 Mbit/s at 30 s"), ("3", "rates 100, 50, 10, 90, 5 Mbit/s")):
        mine = [r for r in rows if r["scenario"] == sc]
        if mine:
            body = [(r["case"], *(fmt(r["measured"][k]) for k in METRICS)) for r in mine]
            out.append(Table(f"scenario {sc}, {what}: each run after the first step", ("case", *HEADS), body))
    return out
