"""lpcc2013 (Gong, Rossi, Testa, Valenti, Täht: AQM meets low-priority congestion control):
every experiment of experiments.md section 3.

* 3a: 5 NewReno + 5 LEDBAT through 10 Mb/s with a 500-packet buffer under DropTail and RED:
  each class's throughput over time (``metrics.class_throughput_series``) and a table.
* 3b: the Linux 3.2 testbed (``scenarios/lpcc2013/testbed.toml``: HTB rate, netem 30 ms,
  127-packet FIFO / RED / SFQ, NewReno against libutp-LEDBAT or TCP-LP, N = 2 and 10, 60 s,
  3 runs) at 500 kb/s and 10 Mb/s: TCP% and the queueing delay of a 1 s ping (RTT minus the
  minimum RTT seen, ``metrics.ping_queueing_delay_ms``).
* 3c: the campaign of ``scenarios/lpcc2013/sweep.toml`` (every LPCC x DropTail, RED, CHOKe,
  DRR, SFQ, CoDel, 10 runs): eta, E[Q]/Q_max, TCP%, the parallel-coordinates figure.
* 3d: sensitivity around 3c's setting (LEDBAT; DropTail, where it yields, and SFQ, where it
  takes its share) to Q_max, capacity, RTT heterogeneity, N per class and the duty cycle of
  on/off sources: TCP%, fairness F = (F_TCP + F_LPCC)/2, eta, mean queueing delay.

3c runs its sweep file; 3a, 3b and 3d run one sweep of explicit cases (``cases``). Per run
(``run_metrics``, in the workers) every number is a metrics.py definition. ``--reps`` is 3c's
replication count; the other parts run min(reps, their own count). ``--quick``: one run per
case, 20 s runs, 3b at 500 kb/s only, fewer 3d values.
"""

from __future__ import annotations

import base64
import copy
import html
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from aqmlab import metrics as M
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.scenario import load
from aqmlab.sweep import SweepResult, parse_sweep

NAME = "lpcc2013"
DESCRIPTION = (
    "Gong et al. 2013/14: NewReno vs LEDBAT / Nice / TCP-LP under AQMs: 3a shares over time, 3b the "
    "Linux testbed matrix (500 kb/s, 10 Mb/s), 3c the 4 Mb/s campaign (6 qdiscs, 10 reps), 3d sensitivity"
)
QDISCS = ["droptail", "red", "choke", "drr", "sfq", "codel"]
LPCCS = ["ledbat", "nice", "tcp_lp"]
SERIES = {"all": None, "3a": None, "3b": None, "3c": None, "3d": None}
REPS = 10
"""3c's replications per case, as the study ran."""
FILTERS = {"--qdisc": ("qdiscs", QDISCS), "--lpcc": ("lpccs", LPCCS)}
"""The CLI's case filters (3c's cases): option -> (run() keyword, allowed values)."""
QUICK = True
"""`--quick` is an option of this experiment."""
METRICS_FN = "aqmlab.reproduce.lpcc2013:run_metrics"
DIR = "down"
CLASSES = ("be", "lp")
"""Flow labels of the best-effort and the low-priority class in every scenario."""
METRICS = [  # 3c: (key, title, scale, decimals)
    ("eta", "link utilisation eta: mean (std)", 1.0, 3),
    ("eq_qmax", "E[Q]/Q_max: mean (std)", 1.0, 3),
    ("tcp_pct", "TCP% (best-effort share of delivered bytes): mean (std)", 100.0, 1),
    ("qdelay_mean_ms", "mean queueing delay E[Q] in ms: mean (std)", 1.0, 0),
]
QUICK_S = 20
"""Run length of ``--quick`` (s)."""

# 3a (experiments.md 3a): 10 Mb/s, 500 packets, DropTail vs RED; the rest as 3c's base.
A_QDISCS = ["droptail", "red"]
A_RATE, A_LIMIT = "10Mbps", "500p"
A_STEP_S = 1.0
"""3a's time bins (s): the study's figure plots shares over a 60 s run."""

# 3b (experiments.md 3b): the testbed matrix.
B_QDISCS = {"fifo": "pfifo", "red": "red", "sfq": "sfq"}
"""tc's FIFO; RED with aqmlab's self-configuring defaults (the study's "state of the art"
configuration is not given further; thresholds from a 5 ms target); SFQ (Linux's 127-packet
default comes from testbed.toml's limit)."""
B_LPCCS = ["ledbat", "tcp_lp"]
B_RATES = ["500kbps", "10Mbps"]
B_LOADS = {"1+1": 1, "5+5": 5}

# 3d: one parameter at a time around 3c's base (4 Mb/s, 400 packets, 50 ms, 5 + 5, LEDBAT).
D_QDISCS = ["droptail", "sfq"]
D_VALUES = {
    "qmax": [100, 200, 300, 400],  # packets
    "capacity": [0.25, 1.0, 4.0, 10.0],  # Mb/s
    "rtt": ["homogeneous", "heterogeneous"],
    "n": [1, 2, 3, 4, 5],  # flows per class
    "duty": [0.1, 0.25, 0.5, 1.0],
}
D_QUICK_VALUES = {"qmax": [100, 400], "capacity": [1.0, 4.0], "rtt": ["homogeneous", "heterogeneous"],
                  "n": [1, 5], "duty": [0.25, 1.0]}  # fmt: skip
D_RTT_SPREAD = "40ms"
"""Heterogeneous RTTs: uniform in 50 +- 40 ms per flow and seed (mean 50 ms as the study; the
spread, not given, spans 10..90 ms)."""
D_CYCLE_S = 10.0
"""On/off cycle: exponential on and off periods of means duty x 10 s and (1 - duty) x 10 s
(the study gives the duty cycle only); every flow of both classes is an on/off source."""
PART_REPS = 3
"""Runs per case of 3a, 3b and 3d: 3b's 3 runs (the study's); 3a and 3d, where the study does
not say, the same (3a's figure shows the first run)."""


def _scenarios() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "lpcc2013"))


def sweep_file() -> Path:
    return _scenarios() / "sweep.toml"


def lpcc_params(lpcc: str) -> dict:
    """The ``cc_params`` 3c's sweep gives ``lpcc`` (TCP-LP's drawn host clocks), which 3b's
    testbed runs take too."""
    z = next(z for z in tomllib.loads(sweep_file().read_text())["zip"] if "flows.1.cc" in z)
    return copy.deepcopy(z["flows.1.cc_params"][z["flows.1.cc"].index(lpcc)])


def qdisc_specs() -> dict:
    """3c's qdisc name -> topology.down.qdisc, as sweep.toml declares them (shared by 3a, 3d)."""
    z = next(z for z in tomllib.loads(sweep_file().read_text())["zip"] if "params.qdisc" in z)
    return dict(zip(z["params.qdisc"], z["topology.down.qdisc"], strict=True))


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """The study's per-run numbers (computed in the sweep workers) and each class's throughput
    over time (extra table ``shares``, 60 rows a run: 3a's figure)."""
    pings = [int(i) for i, k in zip(M._col(tables["flows"], "flow"), M._strcol(tables["flows"], "kind"),
                                    strict=True) if k == "ping"]  # fmt: skip
    ping_q = np.concatenate([M.ping_queueing_delay_ms(tables, i) for i in pings]) if pings else np.array([])
    out = {
        "eta": M.utilization(tables, meta, DIR),
        "eq_qmax": M.normalized_mean_backlog(tables, meta, DIR),
        "eq_pkts": M.mean_backlog(tables, meta, DIR, "pkts"),
        "tcp_pct": M.class_share(tables, by="label", cls="be", traffic_only=True),
        "qdelay_mean_ms": M.mean_queue_delay_ms(tables, meta, DIR),
        "fairness": M.intra_fairness(tables, meta, CLASSES),
        "ping_qdelay_ms": float(ping_q.mean()) if ping_q.size else None,
    }
    t, per = M.class_throughput_series(tables, meta, "label", A_STEP_S)
    extra = {"shares": pa.table({"t_s": t, **{f"{c}_bps": per.get(c, np.zeros_like(t)) for c in CLASSES}})}
    return out, extra


# --------------------------------------------------------------------------- cases


def _with_qdisc(sc: dict, spec) -> dict:
    sc["topology"]["down"]["qdisc"] = copy.deepcopy(spec)
    return sc


def _lp(sc: dict) -> dict:
    return next(f for f in sc["flows"] if f.get("label") == "lp")


def cases(quick: bool, parts: tuple[str, ...]) -> list[dict]:
    """The cases of 3a, 3b and 3d: {"params": labels, "scenario": the scenario}."""
    base, testbed, specs = (
        load(str(_scenarios() / "base.toml")),
        load(str(_scenarios() / "testbed.toml")),
        qdisc_specs(),
    )
    dur = f"{QUICK_S}s" if quick else None
    out: list[dict] = []

    def add(sc: dict, **labels) -> None:
        if dur:
            sc["duration"] = dur
        case = "/".join(str(v) for v in labels.values())
        out.append({"params": {"case": case, **labels}, "scenario": sc})

    if "3a" in parts:
        for q in A_QDISCS:
            sc = _with_qdisc(copy.deepcopy(base), specs[q])
            sc["topology"]["down"].update(rate=A_RATE, limit=A_LIMIT)
            add(sc, part="3a", qdisc=q)
    if "3b" in parts:
        for rate in B_RATES[:1] if quick else B_RATES:
            for lp in B_LPCCS:
                for q, spec in B_QDISCS.items():
                    for load_name, n in B_LOADS.items():
                        sc = _with_qdisc(copy.deepcopy(testbed), spec)
                        sc["topology"]["down"]["rate"] = rate
                        for f in sc["flows"]:
                            if f["kind"] == "tcp":
                                f["count"] = n
                        if lp != "ledbat":
                            _lp(sc)["cc"] = lp
                            _lp(sc)["cc_params"] = lpcc_params(lp)
                        add(sc, part="3b", rate=rate, lpcc=lp, qdisc=q, load=load_name)
    if "3d" in parts:
        for param, values in (D_QUICK_VALUES if quick else D_VALUES).items():
            for q in D_QDISCS:
                for v in values:
                    sc = _with_qdisc(copy.deepcopy(base), specs[q])
                    _sensitivity(sc, param, v)
                    add(sc, part="3d", param=param, qdisc=q, value=v)
    return out


def _sensitivity(sc: dict, param: str, v) -> None:
    """Sets one 3d parameter on a copy of 3c's base scenario."""
    if param == "qmax":
        sc["topology"]["down"]["limit"] = f"{v}p"
    elif param == "capacity":
        sc["topology"]["down"]["rate"] = sc["topology"]["up"]["rate"] = f"{v}Mbps"
    elif param == "rtt" and v == "heterogeneous":
        for f in sc["flows"]:
            f["rtt_spread"] = D_RTT_SPREAD
    elif param == "n":
        for f in sc["flows"]:
            f["count"] = v
    elif param == "duty" and v < 1.0:
        for f in sc["flows"]:
            f["on_off"] = {"on": f"{v * D_CYCLE_S:g}s", "off": f"{(1 - v) * D_CYCLE_S:g}s"}


PART_LABELS = ["part", "case", "qdisc", "lpcc", "rate", "load", "param", "value"]


def parts_spec(reps: int, quick: bool, parts: tuple[str, ...]):
    """One sweep of the 3a, 3b and 3d cases; None when none is asked."""
    cs = cases(quick, parts)
    if not cs:
        return None
    z: dict[str, list] = {"topology": [], "flows": [], "duration": []}
    z.update({f"params.{k}": [] for k in PART_LABELS})
    for c in cs:
        for k in ("topology", "flows", "duration"):
            z[k].append(c["scenario"][k])
        for k in PART_LABELS:
            z[f"params.{k}"].append(str(c["params"].get(k, "")))
    doc = {"base": str(_scenarios() / "base.toml"), "name": f"{NAME}-parts" + ("-quick" if quick else ""),
           "seed": 2013, "reps": 1 if quick else min(reps, PART_REPS),
           "seed_from": ["params.case"], "zip": [z]}  # fmt: skip
    return parse_sweep(doc, base_dir=_scenarios())


def spec_for(reps: int, qdiscs=None, lpccs=None, quick: bool = False):
    """3c's sweep (sweep.toml), filtered; ``quick``: 20 s runs under its own name."""
    spec = parse_sweep(sweep_file())
    spec.reps = reps
    if quick:
        spec.fixed["duration"] = f"{QUICK_S}s"
        spec.name = f"{NAME}-quick"
    if qdiscs:
        spec.select["params.qdisc"] = list(qdiscs)
    if lpccs:
        spec.select["params.lpcc"] = list(lpccs)
    return spec


# --------------------------------------------------------------------------- the experiment


@dataclass
class Outcome:
    results: dict  # 3c: {metric: {lpcc: {qdisc: (mean, std, n)}}}
    runs: pd.DataFrame  # 3c's runs
    parts: pd.DataFrame  # the runs of 3a, 3b and 3d
    shares: pd.DataFrame  # 3a's class throughputs over time (run_id, t_s, be_bps, lp_bps)
    sweeps: list[SweepResult]
    report_dir: Path

    @property
    def sweep(self) -> SweepResult:
        """One summary of every sweep run (the CLI's run count line)."""
        s = self.sweeps
        return _Totals(sum(x.total for x in s), sum(x.ran for x in s), sum(x.skipped for x in s),
                       [f for x in s for f in x.failed], sum(x.wall_s for x in s),
                       ", ".join(str(x.sweep_dir) for x in s))  # fmt: skip


@dataclass
class _Totals:
    total: int
    ran: int
    skipped: int
    failed: list
    wall_s: float
    sweep_dir: str


def run(
    reps: int = REPS,
    series: str = "all",
    ex: Execution = DEFAULT_EXECUTION,
    qdiscs: list[str] | None = None,
    lpccs: list[str] | None = None,
    quick: bool = False,
    figures: bool = True,
) -> Outcome:
    """Runs (or resumes) the parts asked (``series``: all, 3a, 3b, 3c or 3d), aggregates them and
    writes the figures and the HTML report."""
    parts = ("3a", "3b", "3c", "3d") if series == "all" else (series,)
    sweeps, runs3c, parts_runs, shares = [], pd.DataFrame(), pd.DataFrame(), pd.DataFrame()
    if "3c" in parts:
        res = ex.sweep(spec_for(1 if quick else reps, qdiscs, lpccs, quick), METRICS_FN)
        sweeps.append(res)
        runs3c = res.table
    spec = parts_spec(reps, quick, parts)
    if spec is not None:
        res = ex.sweep(spec, METRICS_FN)
        sweeps.append(res)
        parts_runs = res.table
        d = res.sweep_dir / "shares"
        if d.exists():
            import pyarrow.parquet as pq

            shares = pq.read_table(d).to_pandas()
    name = NAME + ("-quick" if quick else "")
    o = Outcome(aggregate(runs3c), runs3c, parts_runs, shares, sweeps, ex.report_dir(name))
    if figures:
        write_outputs(o)
    return o


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


def aggregate(runs: pd.DataFrame) -> dict:
    """3c: {metric: {lpcc: {qdisc: (mean, std, n)}}} over the successful replications."""
    out: dict = {k: {lp: {} for lp in LPCCS} for k, *_ in METRICS}
    for k, *_ in METRICS:
        for lp in LPCCS:
            for q in QDISCS:
                v = _values(_ok(runs, lpcc=lp, qdisc=q), k)
                out[k][lp][q] = (
                    (float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size))
                    if v.size
                    else None
                )
    return out


PART_METRICS = {  # JSON key -> (run metric, scale)
    "tcp_share_pct": ("tcp_pct", 100.0),
    "utilization": ("eta", 1.0),
    "mean_queue_ms": ("qdelay_mean_ms", 1.0),
    "fairness": ("fairness", 1.0),
}


def part_3a(o: Outcome) -> dict:
    """{metric: {qdisc: mean}}."""
    return {k: {q: _mean(_ok(o.parts, part="3a", qdisc=q), m, s) for q in A_QDISCS}
            for k, (m, s) in PART_METRICS.items()}  # fmt: skip


def part_3b(o: Outcome) -> dict:
    """{rate: {"tcp_share_pct" | "mean_queue_ms": {lpcc: {qdisc: {load: mean}}}}}; the queueing
    delay is the ping's (the testbed's measure)."""
    keys = {"tcp_share_pct": ("tcp_pct", 100.0), "mean_queue_ms": ("ping_qdelay_ms", 1.0)}
    return {rate: {k: {lp: {q: {ld: _mean(_ok(o.parts, part="3b", rate=rate, lpcc=lp, qdisc=q, load=ld), m, s)
                                for ld in B_LOADS} for q in B_QDISCS} for lp in B_LPCCS}
                   for k, (m, s) in keys.items()} for rate in B_RATES}  # fmt: skip


def part_3d(o: Outcome) -> dict:
    """{param: {metric: {qdisc: {value: mean}}}} for the values run."""
    out: dict = {}
    for param, values in D_VALUES.items():
        runs = _ok(o.parts, part="3d", param=param)
        if not len(runs):
            continue
        vals = [str(v) for v in values if len(_ok(runs, value=v))]
        out[param] = {k: {q: {v: _mean(_ok(runs, qdisc=q, value=v), m, s) for v in vals} for q in D_QDISCS}
                      for k, (m, s) in PART_METRICS.items()}  # fmt: skip
    return out


def to_json(o: Outcome) -> dict:
    """{"3a": ..., "3b": {"tcp_share_pct" | "mean_queue_ms": {lpcc: {qdisc: {load: v}}}, "10Mbps": the
    same}, "3c": {"tcp_share_pct" | "eq_over_qmax" | "utilization" | "mean_queue_ms": {lpcc: {qdisc:
    v}}}, "3d": ...}: means over the runs, TCP% in percent; parts not run are left out."""
    out: dict = {}
    if len(o.parts) and len(_ok(o.parts, part="3a")):
        out["3a"] = part_3a(o)
    if len(o.parts) and len(_ok(o.parts, part="3b")):
        b = part_3b(o)
        out["3b"] = {**b[B_RATES[0]], B_RATES[1]: b[B_RATES[1]]}
    if len(o.runs):
        keys = {"tcp_share_pct": ("tcp_pct", 100.0), "eq_over_qmax": ("eq_qmax", 1.0),
                "utilization": ("eta", 1.0), "mean_queue_ms": ("qdelay_mean_ms", 1.0)}  # fmt: skip
        out["3c"] = {k: {lp: {q: (None if (v := o.results[m][lp][q]) is None else v[0] * s) for q in QDISCS}
                         for lp in LPCCS} for k, (m, s) in keys.items()}  # fmt: skip
    if len(o.parts) and len(_ok(o.parts, part="3d")):
        out["3d"] = part_3d(o)
    return out


# --------------------------------------------------------------------------- tables, figures, report


def _fmt(v, dec: int = 2) -> str:
    return "-" if v is None else f"{v:.{dec}f}"


def cell(v, scale: float, dec: int) -> str:
    if v is None:
        return "-"
    mean, std, _ = v
    return f"{mean * scale:.{dec}f} ({std * scale:.{dec}f})"


def tables(o: Outcome) -> list[tuple[str, list[str], list[list[str]]]]:
    """Every table of the report: (title, header, rows), for the console and the HTML report."""
    out = []
    j = to_json(o)
    dec = {"tcp_share_pct": 1, "utilization": 3, "mean_queue_ms": 0, "fairness": 3}
    if "3a" in j:
        out.append(("3a: 5 NewReno + 5 LEDBAT, 10 Mb/s, 500 packets (mean over runs)", ["qdisc", *PART_METRICS],
                    [[q, *(_fmt(j["3a"][k][q], dec[k]) for k in PART_METRICS)] for q in A_QDISCS]))  # fmt: skip
    b = part_3b(o) if "3b" in j else {}
    for rate, per in b.items():
        if all(v is None for lp in per["tcp_share_pct"].values() for q in lp.values() for v in q.values()):
            continue
        head = (
            ["LPCC", "qdisc"] + [f"TCP% {ld}" for ld in B_LOADS] + [f"ping qdelay ms {ld}" for ld in B_LOADS]
        )
        rows = [[lp, q, *(_fmt(per["tcp_share_pct"][lp][q][ld], 1) for ld in B_LOADS),
                 *(_fmt(per["mean_queue_ms"][lp][q][ld], 0) for ld in B_LOADS)]
                for lp in B_LPCCS for q in B_QDISCS]  # fmt: skip
        out.append((f"3b: testbed at {rate}, 127 packets, 30 ms (mean over runs)", head, rows))
    if len(o.runs):
        for key, title, scale, d in METRICS:
            rows = [[lp, *(cell(o.results[key][lp].get(q), scale, d) for q in QDISCS)]
                    for lp in LPCCS if any(o.results[key][lp].get(q) for q in QDISCS)]  # fmt: skip
            out.append((f"3c: {title}", ["LPCC", *QDISCS], rows))
    for param, per in j.get("3d", {}).items():
        vals = list(per["tcp_share_pct"][D_QDISCS[0]])
        rows = [[q, v, *(_fmt(per[k][q][v], dec[k]) for k in PART_METRICS)] for q in D_QDISCS for v in vals]
        out.append(
            (f"3d: sensitivity to {param} (LEDBAT; mean over runs)", ["qdisc", param, *PART_METRICS], rows)
        )
    return out


def print_tables(o: Outcome, console) -> None:
    from rich.table import Table

    for title, head, rows in tables(o):
        t = Table(title=title)
        for i, h in enumerate(head):
            t.add_column(h, justify="left" if i < 2 else "right")
        for r in rows:
            t.add_row(*r)
        console.print(t)


def figure_3c(o: Outcome):
    """The study's parallel-coordinates view: per (LPCC, qdisc) a line from E[Q]/Q_max (left
    axis) to TCP% (right axis), both on [0, 1]."""
    import matplotlib.pyplot as plt

    from aqmlab.plots import style

    fig, ax = plt.subplots(figsize=(7, 5))
    i = 0
    for lp in LPCCS:
        for q in QDISCS:
            a, b = o.results["eq_qmax"][lp].get(q), o.results["tcp_pct"][lp].get(q)
            if a is None or b is None:
                continue
            st = style(i)
            ax.plot([0, 1], [a[0], b[0]], color=st["color"], linestyle=st["linestyle"], marker="o",
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
        runs = _ok(o.parts, part="3a", qdisc=q).sort_values("rep")
        if len(runs) and len(o.shares):
            s = o.shares[o.shares["run_id"] == runs["run_id"].iloc[0]]
            for c, name in zip(CLASSES, ("NewReno (best effort)", "LEDBAT (low priority)"), strict=True):
                ax.plot(s["t_s"], s[f"{c}_bps"] / 1e6, label=name)
        ax.set_title(f"3a: {q}, 10 Mb/s, 500 packets")
        ax.set_xlabel("time (s)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("class throughput (Mb/s)")
    fig.tight_layout()
    return fig


def figure_3d(o: Outcome, param: str, per: dict):
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


def write_outputs(o: Outcome) -> list[Path]:
    from aqmlab import plots

    o.report_dir.mkdir(parents=True, exist_ok=True)
    figs = []
    if len(_ok(o.parts, part="3a")):
        figs.append(plots.save(figure_3a(o), o.report_dir / "shares_3a.png"))
    if len(o.runs):
        figs.append(plots.save(figure_3c(o), o.report_dir / "parallel.png"))
    for param, per in to_json(o).get("3d", {}).items():
        figs.append(plots.save(figure_3d(o, param, per), o.report_dir / f"sensitivity_{param}.png"))
    s = o.sweep
    style = "body{font-family:sans-serif;max-width:1100px}td,th{padding:2px 8px;text-align:right}"
    parts = ["<!doctype html><html><head><meta charset=utf-8><title>lpcc2013</title>",
             f"<style>{style}</style></head><body>", f"<h1>{html.escape(DESCRIPTION)}</h1>",
             (f"<p>{s.total} runs ({s.ran} run now, {s.skipped} reused), {len(s.failed)} failed; "
              f"datasets {html.escape(s.sweep_dir)}.</p>")]  # fmt: skip
    for title, head, rows in tables(o):
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr>")
        parts += [f"<th>{html.escape(h)}</th>" for h in head] + ["</tr>"]
        for r in rows:
            parts += ["<tr>", *(f"<td>{html.escape(str(c))}</td>" for c in r), "</tr>"]
        parts.append("</table>")
    for f in figs:
        b64 = base64.b64encode(f.read_bytes()).decode("ascii")
        parts.append(f"<figure><img src='data:image/png;base64,{b64}'></figure>")
    parts.append("</body></html>")
    (o.report_dir / "report.html").write_text("\n".join(parts))
    return [*figs, o.report_dir / "report.html"]
