"""lpcc2013's sweeps run and what it reports: each part's means over the runs (``results``), the
tables and the figures."""

from __future__ import annotations

from aqmlab.lazy import lazy
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.reproduce.lpcc2013.metrics import CLASSES, METRICS_FN
from aqmlab.reproduce.lpcc2013.setup import (
    A_QDISCS,
    B_LOADS,
    B_LPCCS,
    B_QDISCS,
    B_RATES,
    D_QDISCS,
    D_VALUES,
    LPCCS,
    PARTS,
    QDISCS,
    REPS,
    parts_spec,
    spec_for,
)
from aqmlab.reproduce.study import Outcome, Table

np = lazy("numpy")
pd = lazy("pandas")
sweep = lazy("aqmlab.sweep")

METRICS = [  # 3c: (run metric, title, scale, decimals)
    ("eta", "link utilisation eta: mean (std)", 1.0, 3),
    ("eq_qmax", "E[Q]/Q_max: mean (std)", 1.0, 3),
    ("tcp_pct", "TCP% (best-effort share of delivered bytes): mean (std)", 100.0, 1),
    ("qdelay_mean_ms", "mean queueing delay E[Q] in ms: mean (std)", 1.0, 0),
]
C_KEYS = {"tcp_share_pct": ("tcp_pct", 100.0), "eq_over_qmax": ("eq_qmax", 1.0), "utilization": ("eta", 1.0),
          "mean_queue_ms": ("qdelay_mean_ms", 1.0)}  # fmt: skip
"""3c's JSON keys -> (run metric, scale)."""
B_KEYS = {"tcp_share_pct": ("tcp_pct", 100.0), "mean_queue_ms": ("ping_qdelay_ms", 1.0)}
"""3b's JSON keys -> (run metric, scale): the queueing delay is the ping's (the testbed's measure)."""
PART_METRICS = {  # 3a's and 3d's JSON key -> (run metric, scale, decimals)
    "tcp_share_pct": ("tcp_pct", 100.0, 1),
    "utilization": ("eta", 1.0, 3),
    "mean_queue_ms": ("qdelay_mean_ms", 1.0, 0),
    "mean_queue_pkts": ("eq_pkts", 1.0, 1),
    "fairness": ("fairness", 1.0, 3),
}


def run(reps: int = REPS, series: str = "all", ex: Execution = DEFAULT_EXECUTION, qdiscs: list[str] | None = None,
        lpccs: list[str] | None = None, rates: list[str] | None = None,
        sensitivity: list[str] | None = None) -> Outcome:  # fmt: skip
    """Runs (or resumes) the parts asked (``series``: all, 3a, 3b, 3c or 3d) and aggregates them.
    ``qdiscs``/``lpccs`` filter 3c, ``rates`` 3b, ``sensitivity`` 3d's points ("qmax=100")."""
    parts = PARTS if series == "all" else (series,)
    sweeps, frames, shares = [], [], pd.DataFrame()
    if "3c" in parts:
        res = ex.sweep(spec_for(reps, qdiscs, lpccs), METRICS_FN)
        sweeps.append(res)
        frames.append(res.table.assign(part="3c"))
    spec = parts_spec(reps, parts, rates, sensitivity)
    if spec is not None:
        res = ex.sweep(spec, METRICS_FN)
        sweeps.append(res)
        frames.append(res.table)
        shares = sweep.read_extra(ex.root, "shares", _ok(res.table)["run_id"])
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return Outcome(results(runs), runs, sweeps, series, data=shares)


def _ok(runs: pd.DataFrame, **match) -> pd.DataFrame:
    if not len(runs):
        return runs
    m = runs["status"] == "ok"
    for k, v in match.items():
        m &= runs[k].astype(str) == str(v)
    return runs[m]


def _values(df: pd.DataFrame, key: str) -> np.ndarray:
    return pd.to_numeric(df[key], errors="coerce").dropna().to_numpy() if key in df else np.array([])


def _mean(df: pd.DataFrame, key: str, scale: float = 1.0) -> float | None:
    v = _values(df, key)
    return float(v.mean() * scale) if v.size else None


def _std(df: pd.DataFrame, key: str, scale: float = 1.0) -> float | None:
    """The sample std over the runs; None for fewer than two."""
    v = _values(df, key)
    return float(v.std(ddof=1) * scale) if v.size > 1 else None


def part_3a(runs: pd.DataFrame) -> dict:
    """{metric: {qdisc: mean}}."""
    return {k: {q: _mean(_ok(runs, part="3a", qdisc=q), m, s) for q in A_QDISCS}
            for k, (m, s, _) in PART_METRICS.items()}  # fmt: skip


def part_3b(runs: pd.DataFrame) -> dict:
    """{rate: {"tcp_share_pct" | "mean_queue_ms": {lpcc: {qdisc: {load: mean}}}}}."""
    return {rate: {k: {lp: {q: {ld: _mean(_ok(runs, part="3b", rate=rate, lpcc=lp, qdisc=q, load=ld), m, s)
                                for ld in B_LOADS} for q in B_QDISCS} for lp in B_LPCCS}
                   for k, (m, s) in B_KEYS.items()} for rate in B_RATES}  # fmt: skip


def part_3c(runs: pd.DataFrame) -> dict:
    """{"tcp_share_pct" | "eq_over_qmax" | "utilization" | "mean_queue_ms": {lpcc: {qdisc: mean}}}."""
    return {k: {lp: {q: _mean(_ok(runs, part="3c", lpcc=lp, qdisc=q), m, s) for q in QDISCS} for lp in LPCCS}
            for k, (m, s) in C_KEYS.items()}  # fmt: skip


def part_3d(runs: pd.DataFrame) -> dict:
    """{param: {metric: {qdisc: {value: mean}}}} for the values run."""
    out: dict = {}
    for param, values in D_VALUES.items():
        d = _ok(runs, part="3d", param=param)
        if not len(d):
            continue
        vals = [str(v) for v in values if len(_ok(d, value=v))]
        out[param] = {k: {q: {v: _mean(_ok(d, qdisc=q, value=v), m, s) for v in vals} for q in D_QDISCS}
                      for k, (m, s, _) in PART_METRICS.items()}  # fmt: skip
    return out


def results(runs: pd.DataFrame) -> dict:
    """{"3a": ..., "3b": {"tcp_share_pct" | "mean_queue_ms": {lpcc: {qdisc: {load: v}}}, "10Mbps": the
    same}, "3c": {"tcp_share_pct" | "eq_over_qmax" | "utilization" | "mean_queue_ms": {lpcc: {qdisc:
    v}}}, "3d": ...}: means over the runs, TCP% in percent; parts not run are left out."""
    out: dict = {}
    if len(_ok(runs, part="3a")):
        out["3a"] = part_3a(runs)
    if len(_ok(runs, part="3b")):
        b = part_3b(runs)
        out["3b"] = {**b[B_RATES[0]], B_RATES[1]: b[B_RATES[1]]}
    if len(_ok(runs, part="3c")):
        out["3c"] = part_3c(runs)
    if len(_ok(runs, part="3d")):
        out["3d"] = part_3d(runs)
    return out


def _fixed(v: float | None, dec: int) -> str:
    """A table number with ``dec`` decimals; '-' when missing."""
    return "-" if v is None else f"{v:.{dec}f}"


def _mean_std(df: pd.DataFrame, key: str, scale: float, dec: int) -> str:
    """'mean (std)'; the std of one run is '-'."""
    m = _mean(df, key, scale)
    return "-" if m is None else f"{m:.{dec}f} ({_fixed(_std(df, key, scale), dec)})"


def tables(o: Outcome) -> list[Table]:
    """What the study prints: 3a, 3b per rate, 3c per metric, 3d per parameter."""
    j, out = o.results, []
    if "3a" in j:
        out.append(Table("3a: 5 NewReno + 5 LEDBAT, 10 Mb/s, 500 packets (mean over runs)", ("qdisc", *PART_METRICS),
                         [(q, *(_fixed(j["3a"][k][q], d) for k, (_, _, d) in PART_METRICS.items()))
                          for q in A_QDISCS]))  # fmt: skip
    if "3b" in j:
        out += _tables_3b(part_3b(o.runs))
    if "3c" in j:
        for key, title, scale, d in METRICS:
            rows = [(lp, *(_mean_std(_ok(o.runs, part="3c", lpcc=lp, qdisc=q), key, scale, d) for q in QDISCS))
                    for lp in LPCCS if len(_ok(o.runs, part="3c", lpcc=lp))]  # fmt: skip
            out.append(Table(f"3c: {title}", ("LPCC", *QDISCS), rows))
    for param, per in j.get("3d", {}).items():
        vals = list(per["tcp_share_pct"][D_QDISCS[0]])
        rows = [(q, v, *(_fixed(per[k][q][v], d) for k, (_, _, d) in PART_METRICS.items()))
                for q in D_QDISCS for v in vals]  # fmt: skip
        out.append(Table(f"3d: sensitivity to {param} (LEDBAT; mean over runs)", ("qdisc", param, *PART_METRICS),
                         rows))  # fmt: skip
    return out


def _tables_3b(b: dict) -> list[Table]:
    out = []
    for rate, per in b.items():
        if all(v is None for lp in per["tcp_share_pct"].values() for q in lp.values() for v in q.values()):
            continue
        head = (
            "LPCC",
            "qdisc",
            *(f"TCP% {ld}" for ld in B_LOADS),
            *(f"ping qdelay ms {ld}" for ld in B_LOADS),
        )
        rows = [(lp, q, *(_fixed(per["tcp_share_pct"][lp][q][ld], 1) for ld in B_LOADS),
                 *(_fixed(per["mean_queue_ms"][lp][q][ld], 0) for ld in B_LOADS))
                for lp in B_LPCCS for q in B_QDISCS]  # fmt: skip
        out.append(Table(f"3b: testbed at {rate}, 30 ms (mean over runs)", head, rows))
    return out


def figures(o: Outcome) -> dict:
    """3a's shares over time, 3c's parallel coordinates, one figure per 3d parameter."""
    figs = {}
    if len(_ok(o.runs, part="3a")):
        figs["shares_3a.png"] = figure_3a(o)
    if "3c" in o.results:
        figs["parallel.png"] = figure_3c(o.results["3c"])
    for param, per in o.results.get("3d", {}).items():
        figs[f"sensitivity_{param}.png"] = figure_3d(param, per)
    return figs


def figure_3c(c: dict):
    """The study's parallel-coordinates view: per (LPCC, qdisc) a line from E[Q]/Q_max (left
    axis) to TCP% (right axis), both on [0, 1]."""
    import matplotlib.pyplot as plt

    from aqmlab.plots import style

    fig, ax = plt.subplots(figsize=(7, 5))
    i = 0
    for lp in LPCCS:
        for q in QDISCS:
            a, b = c["eq_over_qmax"][lp][q], c["tcp_share_pct"][lp][q]
            if a is None or b is None:
                continue
            st = style(i)
            ax.plot([0, 1], [a, b / 100.0], color=st["color"], linestyle=st["linestyle"], marker="o",
                    label=f"{lp} / {q}")  # fmt: skip
            i += 1
    ax.set_xticks([0, 1], ["E[Q]/Q_max", "TCP%"])
    ax.set_ylim(0, 1.02)
    ax.set_title("lpcc2013 3c: queue occupancy vs best-effort share (mean over runs)")
    ax.legend(fontsize=7, ncol=2, loc="center", bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    return fig


def figure_3a(o: Outcome):
    """Each class's throughput over time in the first run of DropTail and of RED."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(A_QDISCS), figsize=(11, 4), sharey=True)
    for ax, q in zip(axes, A_QDISCS, strict=True):
        runs = _ok(o.runs, part="3a", qdisc=q).sort_values("rep")
        if len(runs) and len(o.data):
            s = o.data[o.data["run_id"] == runs["run_id"].iloc[0]]
            for c, name in zip(CLASSES, ("NewReno (best effort)", "LEDBAT (low priority)"), strict=True):
                ax.plot(s["t_s"], s[f"{c}_bps"] / 1e6, label=name)
        ax.set_title(f"3a: {q}, 10 Mb/s, 500 packets")
        ax.set_xlabel("time (s)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("class throughput (Mb/s)")
    fig.tight_layout()
    return fig


def figure_3d(param: str, per: dict):
    """TCP% and fairness F against one 3d parameter, one line per qdisc."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, k in zip(axes, ("tcp_share_pct", "fairness"), strict=True):
        for q in D_QDISCS:
            xs = list(per[k][q])
            ax.plot(range(len(xs)), [np.nan if per[k][q][v] is None else per[k][q][v] for v in xs],
                    marker="o", label=q)  # fmt: skip
            ax.set_xticks(range(len(xs)), xs)
        ax.set_xlabel(param)
        ax.set_ylabel(k)
        ax.legend(fontsize=8)
    fig.suptitle(f"lpcc2013 3d: sensitivity to {param} (5+5 LEDBAT around 3c's setting)")
    fig.tight_layout()
    return fig
