"""l4s2020's sweep run and what it reports: each run's D_SS beside the published row, the pairs
(published.py), the per-row tables and the measured-against-published figure."""

from __future__ import annotations

from aqmlab.lazy import lazy
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.reproduce.l4s2020 import report_s23
from aqmlab.reproduce.l4s2020.metrics import METRICS_FN
from aqmlab.reproduce.l4s2020.published import (
    COLUMNS,
    PUBLISHED_PAIRS,
    PUBLISHED_RUNS,
    TABLE_IDS,
    mean_or_none,
    pairs,
    study_qdisc,
)
from aqmlab.reproduce.l4s2020.setup import QDISCS, RATES, RTT_PAIRS, SCENARIOS, SERIES, spec_for
from aqmlab.reproduce.study import Outcome, Table, fmt

pd = lazy("pandas")

NOTES = (
    "cnq_codel_af, the study's fourth qdisc (the authors' approximate-fairness CoDel), is not modelled: its 48 rows "
    + "are out of scope.",
    "Pairs: cubic against prague at equal RTTs ran in both orders; each flow's D_SS is the mean of both, and the pair "
    + "is judged on that mean (the two orders differ by up to 2x under pfifo).",
)


def run(reps: int = 1, series: str = "div127", ex: Execution = DEFAULT_EXECUTION, qdiscs: list[str] | None = None,
        rates: list[str] | None = None, rtts: list[str] | None = None, scenarios: list[str] | None = None,
        cases23: list[str] | None = None) -> Outcome:  # fmt: skip
    """Runs (or resumes) the asked cases of ``series`` (dualpi2's PI divisor, setup.SERIES), ``reps``
    runs each (the study ran one; more are averaged per case): scenario 1's (filtered by qdisc,
    rate and RTT pair) and scenario 2's and 3's (``cases23``: only these case names) of the asked
    ``scenarios`` (None: all three)."""
    scenarios = scenarios or list(SCENARIOS)
    spec = spec_for(series, reps, qdiscs, rates, rtts) if "1" in scenarios else None
    sweeps, runs = [], pd.DataFrame()
    if spec is not None:
        res = ex.sweep(spec, METRICS_FN)
        sweeps.append(res)
        runs = res.table
    res1 = results(runs, series)
    s23 = report_s23.sweep(ex, series, reps, scenarios, cases23)
    if s23 is not None:
        sweeps.append(s23)
        runs = pd.concat([runs, s23.table], ignore_index=True)
    rows23 = report_s23.results(s23.table if s23 is not None else pd.DataFrame())
    return Outcome({**res1, "s23": rows23}, runs, sweeps, series, notes=[*NOTES, *report_s23.NOTES_S23])


def measured_runs(runs: pd.DataFrame) -> dict:
    """{(rate, qdisc, cc1, rtt1, cc2, rtt2): (dss1, dss2, jain)}, each the mean over the case's
    successful runs (None when one has none)."""
    per: dict = {}
    if not len(runs):
        return per
    for r in runs[runs["status"] == "ok"].to_dict("records"):
        rtt1, rtt2 = RTT_PAIRS[str(r["rtts"])]
        key = (RATES[str(r["rate"])], str(r["qdisc"]), r["cc1"], rtt1, r["cc2"], rtt2)
        per.setdefault(key, []).append([None if pd.isna(r.get(k)) else float(r[k]) for k in METRICS])
    return {key: tuple(mean_or_none(v) for v in zip(*rows, strict=True)) for key, rows in per.items()}


METRICS = ("dss1_mbit", "dss2_mbit", "jain")
"""A run's numbers (metrics.run_metrics)."""


def results(runs: pd.DataFrame, series: str) -> dict:
    """{"pi_divisor": dualpi2's, "runs": [each published row run, published and measured], "pairs":
    {table id: {row: {"D_SS A", "D_SS B"}}} of the measured runs (a pair is measured when all its
    published runs were)}."""
    meas = measured_runs(runs)
    rows, ran = [], []
    for pub in PUBLISHED_RUNS:
        rate, q, cc1, rtt1, d1, cc2, rtt2, d2 = pub
        m = meas.get((rate, study_qdisc(q), cc1, rtt1, cc2, rtt2))
        if m is None:
            continue
        rows.append({"rate_mbit": rate, "qdisc": q, "cc1": cc1, "rtt1_ms": rtt1, "cc2": cc2, "rtt2_ms": rtt2,
                     "published": {"dss1_mbit": d1, "dss2_mbit": d2},
                     "measured": {"dss1_mbit": m[0], "dss2_mbit": m[1], "jain": m[2]}})  # fmt: skip
        ran.append((rate, q, cc1, rtt1, m[0], cc2, rtt2, m[1]))
    measured_pairs = pairs(ran)
    published_counts = _runs_per_pair(PUBLISHED_RUNS)
    ran_counts = _runs_per_pair(ran)
    complete = {tid: {row: cells for row, cells in per.items() if ran_counts[tid, row] == published_counts[tid, row]}
                for tid, per in measured_pairs.items()}  # fmt: skip
    return {"pi_divisor": SERIES[series], "runs": rows, "pairs": complete}


def _runs_per_pair(runs) -> dict:
    """{(table id, row): runs of the pair}."""
    out: dict = {}
    for r in runs:
        for tid, per in pairs([r]).items():
            for row in per:
                out[tid, row] = out.get((tid, row), 0) + 1
    return out


def tables(o: Outcome) -> list[Table]:
    """Per rate and qdisc run, its published rows with the measured D_SS and Jain's index; the
    scenario-2 and scenario-3 runs."""
    return [*tables_s1(o), *report_s23.tables(o.results.get("s23", []))]


def tables_s1(o: Outcome) -> list[Table]:
    out = []
    for rate in RATES.values():
        for q in QDISCS:
            rows = [r for r in o.results["runs"] if r["rate_mbit"] == rate and study_qdisc(r["qdisc"]) == q]
            if not rows:
                continue
            body = [(f"{r['cc1']} {r['rtt1_ms']} ms", fmt(r["published"]["dss1_mbit"]), fmt(r["measured"]["dss1_mbit"]),
                     f"{r['cc2']} {r['rtt2_ms']} ms", fmt(r["published"]["dss2_mbit"]), fmt(r["measured"]["dss2_mbit"]),
                     fmt(_published_jain(r)), fmt(r["measured"]["jain"])) for r in rows]  # fmt: skip
            out.append(Table(f"scenario 1, {rows[0]['qdisc']} at {rate} Mbit/s: each run's D_SS (Mbit/s), published "
                             "and measured", ("flow 1", "published", "measured", "flow 2", "published", "measured",
                                              "Jain published", "Jain measured"), body))  # fmt: skip
    return out


def _published_jain(r: dict) -> float:
    a, b = r["published"]["dss1_mbit"], r["published"]["dss2_mbit"]
    return (a + b) ** 2 / (2 * (a * a + b * b))


def figures(o: Outcome) -> dict:
    """Each pair's two D_SS, measured against published, per rate."""
    if not o.results["pairs"]:
        return {}
    return {"dss_pairs.png": figure_pairs(o.results["pairs"])}


def figure_pairs(measured: dict):
    import matplotlib.pyplot as plt
    import numpy as np

    from aqmlab.plots import style

    fig, axes = plt.subplots(1, len(RATES), figsize=(11, 5))
    for ax, rate in zip(axes, RATES.values(), strict=True):
        for i, q in enumerate(QDISCS):
            tid = next(t for t in TABLE_IDS if t.endswith(f" {rate} Mbit/s") and t.split()[1] == q)
            per = measured.get(tid, {})
            xs = [PUBLISHED_PAIRS[tid][row][c] for row in per for c in COLUMNS]
            ys = [per[row][c] for row in per for c in COLUMNS]
            if xs:
                ax.scatter(xs, ys, color=style(i)["color"], label=q, s=18)
        top = rate * 1.05
        line = np.array([0, top])
        ax.plot(line, line, color="k", lw=0.8)
        ax.fill_between(line, 0.7 * line, 1.3 * line, color="k", alpha=0.08, label="within 30 %")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_title(f"{rate} Mbit/s")
        ax.set_xlabel("published D_SS (Mbit/s)")
        ax.set_ylabel("measured D_SS (Mbit/s)")
        ax.legend(fontsize=8)
    fig.suptitle("l4s2020 scenario 1: each pair's flows, D_SS averaged over both orders")
    fig.tight_layout()
    return fig
