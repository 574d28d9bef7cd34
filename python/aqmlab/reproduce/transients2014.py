"""transients2014 (Järvinen & Kojo, IEEE LCN 2014): CoDel, PIE, HRED and SFQ-CoDel under load
transients from slow start (experiments.md section 2).

The setup is the sweep file ``scenarios/transients2014/sweep.toml`` over ``base.toml`` (7 qdisc
variants x 4 loads x 100 replications; ``--series 101`` lengthens the rest of the path from
11 ms to 101 ms one way). Every run is computed in a sweep worker, which returns the per-run
metrics (``run_metrics``) and stores the queueing delays of the transmitted packets (table
``qdelay``) for the pooled percentiles and CDFs; the packet table itself is only kept with
``--keep-packets``. All metric definitions are metrics.py's.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from aqmlab import metrics as M
from aqmlab import store
from aqmlab.reproduce import DEFAULT_EXECUTION, Execution
from aqmlab.sweep import SweepResult, parse_sweep, with_qdiscs

NAME = "transients2014"
DESCRIPTION = (
    "Järvinen & Kojo, LCN 2014: CoDel, PIE (default/thresh/update), HRED (2 variants) and "
    "SFQ-CoDel with 1+1..6+6 TCP slow-start transients on a 2 Mb/s, 162 ms RTT link (100 reps)"
)
QDISCS = ["codel", "pie", "pie_thresh", "pie_update", "hred", "hred_aggressive", "sfq_codel"]
LOADS = ["1+1", "2+2", "4+4", "6+6"]
SERIES = {"11": None, "101": "342ms"}  # rest-of-path one-way delay -> topology.rtt override
REPS = 100
"""Replications per case, as the study ran."""
FILTERS = {"--qdisc": ("qdiscs", QDISCS), "--load": ("loads", LOADS)}
"""The CLI's case filters: option -> (run() keyword, allowed values)."""
EXTENSIBLE = ("--qdisc",)
"""Filters whose other values add cases: any built-in discipline or module:Class next to the
study's (aqmlab.sweep.with_qdiscs; docs/python-qdisc.md)."""
METRICS_FN = "aqmlab.reproduce.transients2014:run_metrics"
DIR = "down"
METRIC_KEYS = [
    "queue_delay_p95_s", "queue_delay_max_median_s", "queue_delay_max_q1_s", "queue_delay_max_q3_s",
    "queue_delay_max_worst_s", "spike60_median_s", "spike60_q1_s", "spike60_q3_s", "spike100_median_s",
    "spike100_q1_s", "spike100_q3_s", "response_g1_median_s", "response_g1_q1_s", "response_g1_q3_s",
    "response_g2_median_s", "response_g2_q1_s", "response_g2_q3_s", "jain_response_median",
    "early_drops_total", "drops_total", "iw_share_at_peak_median", "runs", "runs_failed", "runs_incomplete_transfer",
]  # fmt: skip


def sweep_file() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "transients2014" / "sweep.toml"))


# --------------------------------------------------------------------------- per run (workers)


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict[str, pa.Table]]:
    """The study's per-run metrics (called in the sweep workers) and the ``qdelay`` table
    (queueing delay in ns of every transmitted packet of the bottleneck)."""
    q = M.qdisc_name(tables, meta, DIR)
    delays = M.sojourn_delays_ns(tables, meta, DIR)
    spike = M.spike_duration_defined(q)
    resp = M.group_response_times_s(tables)
    g1, g2 = resp.get(0), resp.get(1)
    by = M.drops_by_reason(tables, meta, DIR)
    out: dict[str, Any] = {
        "queue_delay_max_s": M.max_queue_delay_s(tables, meta, DIR),
        "queue_delay_p95_run_s": float(np.percentile(delays, 95)) / M.NS if delays.size else None,
        "spike60_s": M.spike_duration_s(tables, meta, DIR, threshold_delay_s=0.060)[0] if spike else None,
        "spike100_s": M.spike_duration_s(tables, meta, DIR, threshold_delay_s=0.100)[0] if spike else None,
        "response_g1_s": g1,
        "response_g2_s": g2,
        "jain_response": M.jain_index([g1, g2]) if g1 is not None and g2 is not None else None,
        "early_drops": M.aqm_drops(tables, meta, DIR),  # AQM drops: early + head (metrics.py)
        "drops_total": int(sum(by[r] for r in M.QUEUE_DROP_REASONS)),
        "group2_start_s": _group_start_s(tables, 1),
        "iw_share_at_peak": M.initial_window_share_at_peak(tables, meta, DIR),
    }
    pie = M.pie_engagement(meta, DIR)
    if pie is not None:
        out.update({f"pie_{k}": v for k, v in pie.items()})
    return out, {"qdelay": pa.table({"delay_ns": pa.array(delays, pa.int64())})}


def _group_start_s(tables: dict, group: int) -> float | None:
    f = tables["flows"]
    g = f.column("group").to_numpy()
    s = f.column("start_ns").to_numpy()[g == group]
    return float(s.min()) / M.NS if s.size else None


# --------------------------------------------------------------------------- the experiment


@dataclass
class Outcome:
    results: dict  # {metric: {qdisc: {load: value}}}
    runs: pd.DataFrame
    delays: dict  # (qdisc, load) -> np.ndarray of seconds
    notes: list[str]
    sweep: SweepResult
    report_dir: Path
    series: str


def spec_for(reps: int, series: str = "11", loads=None, qdiscs=None):
    spec = parse_sweep(sweep_file())
    spec.reps = reps
    if SERIES[series] is not None:
        spec.fixed["topology.rtt"] = SERIES[series]
        spec.name = f"{NAME}-{series}"
    if loads:
        spec.select["params.load"] = list(loads)
    if qdiscs:
        with_qdiscs(spec, list(qdiscs))
    return spec


def run(
    reps: int = 100,
    series: str = "11",
    ex: Execution = DEFAULT_EXECUTION,
    loads: list[str] | None = None,
    qdiscs: list[str] | None = None,
    figures: bool = True,
) -> Outcome:
    """Runs (or resumes) the experiment, aggregates it, writes figures and the HTML report."""
    spec = spec_for(reps, series, loads, qdiscs)
    res = ex.sweep(spec, METRICS_FN, keep=("flows", "links", "rate_schedule"))
    runs = res.table
    delays = _delays(Path(ex.out), runs)
    cases = QDISCS + [q for q in qdiscs or [] if q not in QDISCS]
    results = aggregate(runs, delays, LOADS, cases)  # every key; cases not run: runs = 0, values None
    notes = diagnose(runs, series)
    report_dir = ex.report_dir(spec.name)
    o = Outcome(results, runs, delays, notes, res, report_dir, series)
    if figures:
        write_outputs(o)
    return o


def _delays(root: Path, runs: pd.DataFrame) -> dict:
    """Queueing delays (s) of every transmitted packet per (qdisc, load), pooled over runs."""
    ok = runs[runs["status"] == "ok"]
    files = sorted({f for f in Path(root).resolve().glob("sweeps/*/qdelay/part-*.parquet")})
    if not files or not len(ok):
        return {}
    import pyarrow.compute as pc

    want = pa.array(sorted(set(ok["run_id"])), pa.string())
    parts = []
    for f in files:
        t = pq.read_table(f)
        t = t.filter(pc.is_in(t.column("run_id"), value_set=want))
        if t.num_rows:
            parts.append(t)
    if not parts:
        return {}
    t = pa.concat_tables(parts).to_pandas()
    t = t.drop_duplicates()  # a run stored twice (should not happen) must not count twice
    lab = ok.set_index("run_id")[["qdisc", "load"]]
    t = t.join(lab, on="run_id")
    return {(q, ld): g["delay_ns"].to_numpy() / M.NS for (q, ld), g in t.groupby(["qdisc", "load"])}


def aggregate(runs: pd.DataFrame, delays: dict, loads, qdiscs) -> dict:
    """{metric: {qdisc: {load: value}}} over the replications of every case."""
    res: dict[str, dict] = {k: {q: {} for q in qdiscs} for k in METRIC_KEYS}
    for q in qdiscs:
        for ld in loads:
            case = runs[(runs.get("qdisc") == q) & (runs.get("load") == ld)]
            ok = case[case["status"] == "ok"]

            def col(name, ok=ok):
                return ok[name].tolist() if name in ok and len(ok) else []

            mx = M.quartiles(col("queue_delay_max_s"))
            s60, s100 = M.quartiles(col("spike60_s")), M.quartiles(col("spike100_s"))
            r1, r2 = M.quartiles(col("response_g1_s")), M.quartiles(col("response_g2_s"))
            jn = M.quartiles(col("jain_response"))
            iw = M.quartiles(col("iw_share_at_peak"))
            d = delays.get((q, ld))
            vals = {
                "queue_delay_p95_s": M.pooled_percentile([d], 95) if d is not None else None,
                "queue_delay_max_median_s": mx["median"], "queue_delay_max_q1_s": mx["q1"],
                "queue_delay_max_q3_s": mx["q3"], "queue_delay_max_worst_s": mx["max"],
                "spike60_median_s": s60["median"], "spike60_q1_s": s60["q1"], "spike60_q3_s": s60["q3"],
                "spike100_median_s": s100["median"], "spike100_q1_s": s100["q1"], "spike100_q3_s": s100["q3"],
                "response_g1_median_s": r1["median"], "response_g1_q1_s": r1["q1"], "response_g1_q3_s": r1["q3"],
                "response_g2_median_s": r2["median"], "response_g2_q1_s": r2["q1"], "response_g2_q3_s": r2["q3"],
                "jain_response_median": jn["median"],
                "iw_share_at_peak_median": iw["median"],
                "early_drops_total": int(sum(col("early_drops"))) if len(ok) else None,
                "drops_total": int(sum(col("drops_total"))) if len(ok) else None,
                "runs": len(ok),
                "runs_failed": int(len(case) - len(ok)),
                "runs_incomplete_transfer": int(sum(1 for a, b in zip(col("response_g1_s"), col("response_g2_s"))
                                                    if _nan(a) or _nan(b))),
            }  # fmt: skip
            for k, v in vals.items():
                res[k][q][ld] = v
    return res


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x))


def diagnose(runs: pd.DataFrame, series: str) -> list[str]:
    """Plain-language notes on surprising behaviour, derived from the recorded data: an AQM
    variant that never dropped early, and for PIE why (its diagnostics)."""
    notes = []
    ok = runs[runs["status"] == "ok"]
    for q in QDISCS:
        case = ok[ok.get("qdisc") == q] if "qdisc" in ok else ok.iloc[0:0]
        if not len(case):
            continue
        early = int(case["early_drops"].sum())
        if q.startswith("pie") and "pie_rate_cycles_completed" in case:
            done = case["pie_rate_cycles_completed"].fillna(0)
            aband = case["pie_rate_cycles_abandoned"].fillna(0)
            burst = case["pie_burst_allowance_ms"]
            prob = case["pie_drop_prob"]
            never = int((done == 0).sum())
            msg = (
                f"{q}: {early} early drops in {len(case)} runs. Departure-rate measurements: "
                f"{int(done.sum())} completed, {int(aband.sum())} abandoned in total; {never} of "
                f"{len(case)} runs never completed one. Burst allowance at the end of the runs: "
                f"{_range(burst)} ms; drop probability at the end: {_range(prob)}."
            )
            if early == 0 and never == len(case):
                msg += (
                    " PIE never engaged: no rate measurement ever completed, so its delay estimate "
                    "stayed 0 and the burst allowance (reduced only by completed measurements in the "
                    "pie2013 profile) never ran out; the queue behaved as a FIFO. " + _pie_why(case)
                )
            notes.append(msg)
        elif early == 0 and q not in ("sfq_codel",):
            notes.append(f"{q}: no early drop in any of {len(case)} runs (only overflow drops: "
                         f"{int(case['drops_total'].sum())}).")  # fmt: skip
    iw = ok["iw_share_at_peak"].dropna() if "iw_share_at_peak" in ok else ok.iloc[0:0]
    if len(iw) and (iw == 0).mean() > 0.5:
        nz = iw[iw > 0]
        notes.append(
            f"share of the peak queue from initial windows: 0 in {len(iw) - len(nz)} of {len(iw)} runs"
            + (f" (in the other {len(nz)}: median {nz.median():.2f}, max {nz.max():.2f})" if len(nz) else "")
            + ". At a run's highest backlog the queued packets are, as a rule, beyond their flow's first iw "
            "(3) segments: the initial windows pass the queue in the first RTTs and the spike is built later "
            "by the windows slow start grows from them."
        )
    inc = ok[[_nan(a) or _nan(b) for a, b in zip(ok.get("response_g1_s", []), ok.get("response_g2_s", []))]]
    if len(inc):
        notes.append(f"{len(inc)} run(s) ended with an unfinished transfer (response time undefined).")
    fails = runs[runs["status"] != "ok"]
    for r in fails.head(10).to_dict("records"):
        notes.append(f"run {r['run_id']} failed: {r['error']}")
    return notes


def _range(s: pd.Series) -> str:
    s = s.dropna()
    if not len(s):
        return "n/a"
    lo, hi = float(s.min()), float(s.max())
    return f"{lo:.4g}" if lo == hi else f"{lo:.4g}..{hi:.4g}"


def _pie_why(case: pd.DataFrame) -> str:
    """The arithmetic behind 'no measurement completes', from the configured parameters."""
    q = {}
    spec = parse_sweep(sweep_file())
    for a in spec.axes:
        if "params.qdisc" in a:
            q = dict(zip(a["params.qdisc"], a["topology.down.qdisc"], strict=True))
    cfg = q.get(case["qdisc"].iloc[0], {})
    thr, unit = M.parse_limit(cfg.get("dq_threshold", "10p"))
    thr_b = thr * 1500 if unit == "pkts" else thr
    rate_txt = str(spec.base_scenario["topology"]["down"]["rate"])
    rate = float(rate_txt.removesuffix("Mbps")) * 1e6 if rate_txt.endswith("Mbps") else 2e6
    t_meas = thr_b * 8 / rate
    upd = cfg.get("t_update", "30ms")
    return (f"A measurement needs dq_threshold = {cfg.get('dq_threshold')} ({thr_b:.0f} B) to drain: "
            f"{t_meas * 1e3:.0f} ms at {rate / 1e6:g} Mb/s, longer than t_update = {upd}, so every cycle is abandoned "
            f"when the next update fires.")  # fmt: skip


# --------------------------------------------------------------------------- output


def to_json(o: Outcome) -> dict:
    keep = ["queue_delay_p95_s", "queue_delay_max_median_s", "queue_delay_max_worst_s", "spike60_median_s",
            "spike100_median_s", "response_g1_median_s", "response_g2_median_s", "jain_response_median",
            "early_drops_total"]  # fmt: skip
    rest = [k for k in METRIC_KEYS if k not in keep]
    return {k: o.results[k] for k in keep + rest}


TABLES = [
    ("95th percentile of queueing delay (ms), all packets", "queue_delay_p95_s", 1e3),
    ("maximum queueing delay per run (ms): median [q1, q3]", "queue_delay_max", 1e3),
    ("maximum queueing delay (ms): worst case over all runs", "queue_delay_max_worst_s", 1e3),
    ("spike duration above 60 ms (ms): median [q1, q3]", "spike60", 1e3),
    ("spike duration above 100 ms (ms): median [q1, q3]", "spike100", 1e3),
    ("group 1 response time (s): median [q1, q3]", "response_g1", 1),
    ("group 2 response time (s): median [q1, q3]", "response_g2", 1),
    ("Jain index of the two groups' response times: median", "jain_response_median", 1),
    ("early (AQM) drops, all runs", "early_drops_total", 1),
    ("share of the queue at its peak from initial windows: median", "iw_share_at_peak_median", 1),
]


def cell(o: Outcome, key: str, q: str, ld: str, scale: float) -> str:
    r = o.results

    def f(v):
        if v is None:
            return "–"
        return f"{v * scale:.0f}" if scale == 1e3 and abs(v * scale) >= 10 else f"{v * scale:.3g}"

    if f"{key}_median_s" in r:
        return f"{f(r[f'{key}_median_s'][q].get(ld))} [{f(r[f'{key}_q1_s'][q].get(ld))}, {f(r[f'{key}_q3_s'][q].get(ld))}]"
    v = r[key][q].get(ld)
    return str(v) if isinstance(v, int) else f(v)


def write_outputs(o: Outcome) -> list[Path]:
    from aqmlab import plots

    d = o.report_dir
    d.mkdir(parents=True, exist_ok=True)
    store._dump(d / "results.json", to_json(o))
    o.runs.to_csv(d / "runs.csv", index=False)
    figs = []
    loads = [ld for ld in LOADS if any(o.results["runs"][q].get(ld) for q in o.results["runs"])]
    qd = [q for q in o.results["runs"] if any(o.results["runs"][q].get(ld) for ld in loads)]
    # CDF of queueing delay for 4+4 (or the largest load run)
    cdf_load = "4+4" if "4+4" in loads else loads[-1]
    fig, ax = plots.plt.subplots(figsize=(8, 4.5))
    for q in qd:
        x = o.delays.get((q, cdf_load))
        if x is not None and x.size:
            xs, F = M.cdf(x * 1e3)
            ax.plot(xs, F, label=q)
    ax.set_xlabel("queueing delay (ms)")
    ax.set_ylabel("CDF")
    ax.set_title(f"transients2014 {cdf_load}: queueing delay of all packets ({o.series} ms series)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    figs.append(_save(plots, fig, d / f"delay_cdf_{cdf_load.replace('+', 'p')}.png"))
    for key, ylabel, scale in [
        ("queue_delay_max", "maximum queueing delay (ms)", 1e3),
        ("spike60", "spike duration > 60 ms (ms)", 1e3),
        ("spike100", "spike duration > 100 ms (ms)", 1e3),
        ("response_g1", "group 1 response time (s)", 1),
        ("response_g2", "group 2 response time (s)", 1),
    ]:
        fig, ax = plots.plt.subplots(figsize=(9, 4.5))
        w = 0.8 / max(len(qd), 1)
        for i, q in enumerate(qd):
            med = np.array([_v(o.results[f"{key}_median_s"][q].get(ld)) for ld in loads]) * scale
            lo = np.array([_v(o.results[f"{key}_q1_s"][q].get(ld)) for ld in loads]) * scale
            hi = np.array([_v(o.results[f"{key}_q3_s"][q].get(ld)) for ld in loads]) * scale
            xs = np.arange(len(loads)) + (i - (len(qd) - 1) / 2) * w
            ax.bar(xs, med, w, label=q, yerr=[np.nan_to_num(med - lo), np.nan_to_num(hi - med)], capsize=2)
        ax.set_xticks(np.arange(len(loads)), loads)
        ax.set_xlabel("load (flows per group)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel}: median, error bars = quartiles ({o.series} ms series)")
        ax.legend(fontsize=7, ncol=4)
        ax.grid(axis="y", alpha=0.3)
        figs.append(_save(plots, fig, d / f"{key}.png"))
    write_html(o, figs, d / "report.html")
    return figs


def _v(x) -> float:
    return np.nan if x is None else float(x)


def _save(plots, fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plots.plt.close(fig)
    return path


def write_html(o: Outcome, figs: list[Path], path: Path) -> Path:
    from aqmlab.report import CSS

    loads = [ld for ld in LOADS if any(o.results["runs"][q].get(ld) for q in o.results["runs"])]
    qd = [q for q in o.results["runs"] if any(o.results["runs"][q].get(ld) for ld in loads)]
    parts = [(f"<!doctype html><html><head><meta charset='utf-8'><title>transients2014</title>"
             f"<style>{CSS}</style></head><body>"),
             f"<h1>transients2014 — {html.escape(DESCRIPTION)}</h1>",
             (f"<p>{o.series} ms series; {o.sweep.total} runs ({o.sweep.ran} run now, {o.sweep.skipped} "
             f"reused), {len(o.sweep.failed)} failed; dataset {html.escape(str(o.sweep.sweep_dir))}.</p>"),
             "<h2>Notes (what the recorded data says)</h2><ul>"]  # fmt: skip
    parts += [f"<li>{html.escape(n)}</li>" for n in o.notes] or ["<li>nothing unusual</li>"]
    parts.append("</ul>")
    for title, key, scale in TABLES:
        parts.append(f"<h2>{html.escape(title)}</h2><table><tr><th class=l>qdisc</th>")
        parts += [f"<th>{ld}</th>" for ld in loads]
        parts.append("</tr>")
        for q in qd:
            parts.append(f"<tr><td class=l>{q}</td>")
            parts += [f"<td>{html.escape(cell(o, key, q, ld, scale))}</td>" for ld in loads]
            parts.append("</tr>")
        parts.append("</table>")
    pie_cols = [c for c in o.runs.columns if c.startswith("pie_")]
    if pie_cols:
        parts.append("<h2>PIE diagnostics per case (sum / range over runs)</h2><table><tr><th class=l>qdisc</th>"
                     "<th>load</th><th>rate cycles completed</th><th>abandoned</th><th>burst allowance ms at end</th>"
                     "<th>drop_prob at end</th><th>early drops</th></tr>")  # fmt: skip
        ok = o.runs[o.runs["status"] == "ok"]
        for q in [q for q in qd if q.startswith("pie")]:
            for ld in loads:
                c = ok[(ok["qdisc"] == q) & (ok["load"] == ld)]
                if not len(c):
                    continue
                parts.append(
                    f"<tr><td class=l>{q}</td><td>{ld}</td><td>{int(c['pie_rate_cycles_completed'].sum())}</td>"
                    f"<td>{int(c['pie_rate_cycles_abandoned'].sum())}</td><td>{_range(c['pie_burst_allowance_ms'])}</td>"
                    f"<td>{_range(c['pie_drop_prob'])}</td><td>{int(c['early_drops'].sum())}</td></tr>"
                )  # fmt: skip
        parts.append("</table>")
    for f in figs:
        b64 = base64.b64encode(Path(f).read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img src='data:image/png;base64,{b64}'><figcaption>{f.name}</figcaption></figure>"
        )
    parts.append("</body></html>")
    path.write_text("\n".join(parts))
    return path


def print_tables(o: Outcome, console) -> None:
    from rich.table import Table

    loads = [ld for ld in LOADS if any(o.results["runs"][q].get(ld) for q in o.results["runs"])]
    qd = [q for q in o.results["runs"] if any(o.results["runs"][q].get(ld) for ld in loads)]
    for title, key, scale in TABLES:
        t = Table(title=title)
        t.add_column("qdisc")
        for ld in loads:
            t.add_column(ld, justify="right")
        for q in qd:
            t.add_row(q, *(cell(o, key, q, ld, scale) for ld in loads))
        console.print(t)
    for n in o.notes:
        console.print(f"note: {n}", markup=False)
