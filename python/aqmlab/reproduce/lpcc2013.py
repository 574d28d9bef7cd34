"""lpcc2013 (Gong, Rossi, Testa, Valenti, Täht: AQM meets low-priority congestion control),
section 3c of experiments.md: the simulation campaign.

Five NewReno and five low-priority flows (LEDBAT, Nice or TCP-LP), backlogged from t = 0,
through a 4 Mb/s bottleneck with a 400-packet buffer, 50 ms RTT, 60 s, 10 replications, under
DropTail, RED, CHOKe, DRR, SFQ and CoDel: the sweep file ``scenarios/lpcc2013/sweep.toml``.
Per run (in the sweep workers, ``run_metrics``): the link utilisation eta, E[Q]/Q_max
(time-average backlog over the 400-packet limit) and TCP% (the best-effort flows' share of
the delivered bytes), all metrics.py's definitions; per case their mean and standard
deviation over the replications. Not yet here: the testbed matrix (3b), the sensitivity
campaign (3d: buffer, capacity, heterogeneous RTTs, on/off flows).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from aqmlab import metrics as M
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.sweep import SweepResult, parse_sweep

NAME = "lpcc2013"
DESCRIPTION = (
    "Gong et al. 2013/14, section 3c: 5 NewReno + 5 LEDBAT / Nice / TCP-LP flows under DropTail, RED, "
    "CHOKe, DRR, SFQ and CoDel on 4 Mb/s with a 400-packet buffer (10 reps): eta, E[Q]/Q_max, TCP%"
)
QDISCS = ["droptail", "red", "choke", "drr", "sfq", "codel"]
LPCCS = ["ledbat", "nice", "tcp_lp"]
SERIES = {"3c": None}
REPS = 10
"""Replications per case, as the study ran."""
FILTERS = {"--qdisc": ("qdiscs", QDISCS), "--lpcc": ("lpccs", LPCCS)}
"""The CLI's case filters: option -> (run() keyword, allowed values)."""
METRICS_FN = "aqmlab.reproduce.lpcc2013:run_metrics"
DIR = "down"
METRICS = [  # (key, title, scale, decimals)
    ("eta", "link utilisation eta: mean (std)", 1.0, 3),
    ("eq_qmax", "E[Q]/Q_max: mean (std)", 1.0, 3),
    ("tcp_pct", "TCP% (best-effort share of delivered bytes): mean (std)", 100.0, 1),
    ("qdelay_mean_ms", "mean queueing delay E[Q] in ms: mean (std)", 1.0, 0),
]


def sweep_file() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "lpcc2013" / "sweep.toml"))


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """The study's per-run numbers (computed in the sweep workers)."""
    eq_pkts = M.mean_backlog(tables, meta, DIR, "pkts")
    qdelay = M.mean_queue_delay_ms(tables, meta, DIR)
    return {
        "eta": M.utilization(tables, meta, DIR),
        "eq_qmax": M.normalized_mean_backlog(tables, meta, DIR),
        "eq_pkts": eq_pkts,
        "tcp_pct": M.class_share(tables, by="label", cls="be"),
        "qdelay_mean_ms": qdelay,
    }, {}


@dataclass
class Outcome:
    results: dict  # {metric: {lpcc: {qdisc: (mean, std, n)}}}
    runs: pd.DataFrame
    sweep: SweepResult
    report_dir: Path


def spec_for(reps: int, qdiscs=None, lpccs=None):
    spec = parse_sweep(sweep_file())
    spec.reps = reps
    if qdiscs:
        spec.select["params.qdisc"] = list(qdiscs)
    if lpccs:
        spec.select["params.lpcc"] = list(lpccs)
    return spec


def run(
    reps: int = 10,
    series: str = "3c",
    ex: Execution = DEFAULT_EXECUTION,
    qdiscs: list[str] | None = None,
    lpccs: list[str] | None = None,
    figures: bool = True,
) -> Outcome:
    """Runs (or resumes) the campaign, aggregates it, writes the figure and the HTML report."""
    del series  # one series
    spec = spec_for(reps, qdiscs, lpccs)
    res = ex.sweep(spec, METRICS_FN)
    o = Outcome(aggregate(res.table), res.table, res, ex.report_dir(spec.name))
    if figures:
        write_outputs(o)
    return o


def aggregate(runs: pd.DataFrame) -> dict:
    """{metric: {lpcc: {qdisc: (mean, std, n)}}} over the successful replications."""
    ok = runs[runs["status"] == "ok"]
    out: dict = {k: {lp: {} for lp in LPCCS} for k, *_ in METRICS}
    for k, *_ in METRICS:
        for lp in LPCCS:
            for q in QDISCS:
                case = ok[(ok["lpcc"] == lp) & (ok["qdisc"] == q)] if len(ok) else ok
                v = pd.to_numeric(case[k], errors="coerce").dropna().to_numpy() if k in case else np.array([])
                out[k][lp][q] = (
                    (float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size))
                    if v.size
                    else None
                )
    return out


def cell(v, scale: float, dec: int) -> str:
    if v is None:
        return "-"
    mean, std, _ = v
    return f"{mean * scale:.{dec}f} ({std * scale:.{dec}f})"


def print_tables(o: Outcome, console) -> None:
    from rich.table import Table

    for key, title, scale, dec in METRICS:
        t = Table(title=title)
        t.add_column("LPCC")
        for q in QDISCS:
            t.add_column(q, justify="right")
        for lp in LPCCS:
            if any(o.results[key][lp].get(q) for q in QDISCS):
                t.add_row(lp, *(cell(o.results[key][lp].get(q), scale, dec) for q in QDISCS))
        console.print(t)


def to_json(o: Outcome) -> dict:
    return {k: {lp: {q: (None if v is None else {"mean": v[0], "std": v[1], "runs": v[2]})
                     for q, v in per.items()} for lp, per in o.results[k].items()} for k, *_ in METRICS}  # fmt: skip


def figure(o: Outcome):
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
            ax.plot(
                [0, 1],
                [a[0], b[0]],
                color=st["color"],
                linestyle=st["linestyle"],
                marker="o",
                label=f"{lp} / {q}",
            )
            i += 1
    ax.set_xticks([0, 1], ["E[Q]/Q_max", "TCP%"])
    ax.set_ylim(0, 1.02)
    ax.set_title("lpcc2013 3c: queue occupancy vs best-effort share (mean over runs)")
    ax.legend(fontsize=7, ncol=2, loc="center", bbox_to_anchor=(0.5, -0.25))
    fig.tight_layout()
    return fig


def write_outputs(o: Outcome) -> list[Path]:
    from aqmlab import plots

    o.report_dir.mkdir(parents=True, exist_ok=True)
    fig_path = plots.save(figure(o), o.report_dir / "parallel.png")
    style = "body{font-family:sans-serif;max-width:1100px}td,th{padding:2px 8px;text-align:right}.l{text-align:left}"
    done = (f"{o.sweep.total} runs ({o.sweep.ran} run now, {o.sweep.skipped} reused), {len(o.sweep.failed)} failed; "
            f"dataset {html.escape(str(o.sweep.sweep_dir))}.")  # fmt: skip
    parts = ["<!doctype html><html><head><meta charset=utf-8><title>lpcc2013</title>",
             f"<style>{style}</style></head><body>", f"<h1>{html.escape(DESCRIPTION)}</h1>", f"<p>{done}</p>"]  # fmt: skip
    for key, title, scale, dec in METRICS:
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr><th class=l>LPCC</th>")
        parts += [f"<th>{q}</th>" for q in QDISCS] + ["</tr>"]
        for lp in LPCCS:
            parts.append(f"<tr><td class=l>{lp}</td>")
            parts += [f"<td>{cell(o.results[key][lp].get(q), scale, dec)}</td>" for q in QDISCS] + ["</tr>"]
        parts.append("</table>")
    b64 = base64.b64encode(fig_path.read_bytes()).decode("ascii")
    parts.append(f"<figure><img src='data:image/png;base64,{b64}'></figure></body></html>")
    (o.report_dir / "report.html").write_text("\n".join(parts))
    return [fig_path, o.report_dir / "report.html"]
