"""Figures over stored runs (matplotlib, Agg backend).

Every figure function takes a list of loaded runs (``store.RunData``, or anything with
``run_id``, ``meta``, ``summary`` and a ``tables`` mapping) plus keyword options and returns a
``matplotlib.figure.Figure`` with labelled axes (units), a legend and a title naming the
scenario and the qdisc per direction. ``save(fig, path)`` writes PNG/SVG/PDF by extension.

``KINDS`` maps a kind name to its function; ``figure(kind, runs, **opts)`` dispatches and
raises ``UnknownKind`` listing the kinds. A figure that needs a table the run did not record
raises ``metrics.MissingTableError`` naming the run, the table and the figure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Ellipse

from aqmlab import metrics as M
from aqmlab.store import flatten_summary

NS = 1e9


class UnknownKind(ValueError):
    """An unknown plot kind (the message lists the kinds)."""


# --------------------------------------------------------------------------- helpers


def _tables(run) -> dict:
    return {name: run.tables.get(name) for name in ("packets", "queue", "flow_series", "probes", "flows",
                                                     "links", "rate_schedule")}  # fmt: skip


def _need(run, table: str, fig: str):
    t = run.tables.get(table)
    if t is None:
        level = (run.meta.get("record") or {}).get("level", "?")
        raise M.MissingTableError(
            f"run '{run.run_id}' has no '{table}' table (recording level '{level}'); figure '{fig}' needs it"
        )
    return t


def qdisc_label(run) -> str:
    """'down=codel up=pfifo' from the summary (or the scenario); every hop by name for a path
    of hops ('router=fq_codel modem=pfifo cmts=pfifo')."""
    parts = []
    links = (run.summary or {}).get("links") or {}
    for d in links or ("down", "up"):
        q = (links.get(d) or {}).get("qdisc") or M.qdisc_config(run.meta, d).get("name")
        if q:
            parts.append(f"{d}={q}")
    return " ".join(parts)


def run_label(run) -> str:
    """Legend label: the discipline(s) and the seed ('codel s1', 'down=pie up=pfifo s3')."""
    qd = qdisc_label(run)
    names = {p.split("=", 1)[1] for p in qd.split()}
    return f"{names.pop() if len(names) == 1 else qd} s{run.meta.get('seed', '?')}"


def _title(runs: Sequence, what: str) -> str:
    scen = sorted({(r.meta.get("scenario") or {}).get("name") or r.meta.get("name") or "?" for r in runs})
    qd = sorted({qdisc_label(r) for r in runs})
    params = sorted({json.dumps(r.meta.get("params"), sort_keys=True) for r in runs if r.meta.get("params")})
    t = f"{what} — {', '.join(scen)}\nqdisc: {'; '.join(qd)}"
    if params and len(params) <= 3:
        t += "\n" + "; ".join(params)
    elif params:
        t += f"\n{len(params)} parameter sets"
    return t


def _fig(title: str, xlabel: str, ylabel: str, figsize=(8, 4.5)):
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def _legend(ax) -> None:
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=7, loc="best")
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.plot([], [], label="no data")
        ax.legend(fontsize=7)


def _dirs(run, direction: str | None) -> list[str]:
    return [direction] if direction else M.directions(_tables(run), run.meta)


def metric_value(run, name: str) -> float | None:
    """A per-run scalar: a flattened summary column (store.RUN_COLUMNS, e.g.
    ``queue_delay_p95_ms``, ``utilization``, ``goodput_mbps_total``, ``probe_induced_mean_ms``)
    or ``enorm`` (E[Q]/Q_max, down), ``tcp_share`` (share of delivered bytes of kind tcp)."""
    if name == "enorm":
        return M.normalized_mean_backlog(_tables(run), run.meta, "down")
    if name == "tcp_share":
        return M.class_share(_tables(run), "kind", "tcp")
    row = flatten_summary(run.summary, run.meta)
    if name not in row:
        raise KeyError(f"unknown metric '{name}'; known: {', '.join(sorted(row))}, enorm, tcp_share")
    v = row[name]
    return None if v is None else float(v)


def group_value(run, key: str) -> str:
    """A run's group for ``key``: meta['params'][key], else a flattened summary column
    (``qdisc``, ``up_qdisc``, ``seed``...), else the scenario's top-level value."""
    params = run.meta.get("params") or {}
    if key in params:
        return str(params[key])
    row = flatten_summary(run.summary, run.meta)
    if row.get(key) is not None:
        return str(row[key])
    v = (run.meta.get("scenario") or {}).get(key)
    return str(v) if v is not None else "?"


def _groups(runs, group_by: str) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in runs:
        out.setdefault(group_value(r, group_by), []).append(r)
    return out


# --------------------------------------------------------------------------- time series


def delay_timeseries(runs: Sequence, direction: str | None = None, warmup_s: float = 0.0) -> Figure:
    """Queueing (sojourn) delay of each transmitted packet against its enqueue time."""
    fig, ax = _fig(_title(runs, "Per-packet queueing delay"), "time (s)", "queueing delay (ms)")
    for run in runs:
        _need(run, "packets", "delay_ts")
        for d in _dirs(run, direction):
            p = run.tables["packets"]
            t = M._filter_dir(p, d)
            out = t.column("outcome").to_numpy(zero_copy_only=False).astype(str)
            m = np.isin(out, M.TRANSMITTED)
            t_in = t.column("t_enqueue_ns").to_numpy().astype(np.float64)[m]
            ok = t_in >= warmup_s * NS
            delay = M.sojourn_delays_ns(_tables(run), run.meta, d, warmup_s) / 1e6
            ax.plot(t_in[ok] / NS, delay, ".", ms=2, label=f"{run_label(run)} {d}")
    _legend(ax)
    return fig


def backlog_timeseries(runs: Sequence, direction: str | None = None, unit: str = "bytes") -> Figure:
    """Queue backlog over time (queue samples; the exact step function from packets if no samples)."""
    ylabel = "backlog (bytes)" if unit == "bytes" else "backlog (packets)"
    fig, ax = _fig(_title(runs, "Queue backlog"), "time (s)", ylabel)
    for run in runs:
        if run.tables.get("queue") is None and run.tables.get("packets") is None:
            _need(run, "queue", "backlog_ts")
        for d in _dirs(run, direction):
            t, v, exact = M.backlog_steps(_tables(run), run.meta, d, unit)
            t = np.r_[t, run.meta["duration_ns"]]
            v = np.r_[v, v[-1] if v.size else 0]
            ax.step(t / NS, v, where="post", label=f"{run_label(run)} {d}{'' if exact else ' (sampled)'}")
    _legend(ax)
    return fig


def _flow_series_by_flow(run, fig: str):
    fs = _need(run, "flow_series", fig)
    flows = run.tables.get("flows")
    info = {}
    if flows is not None:
        for r in flows.to_pylist():
            info[int(r["flow"])] = r
    flow = fs.column("flow").to_numpy().astype(np.int64)
    t = fs.column("t_ns").to_numpy().astype(np.int64)
    for f in np.unique(flow):
        m = flow == f
        order = np.argsort(t[m], kind="stable")
        yield int(f), info.get(int(f), {}), fs.filter(m).take(order)


def goodput_timeseries(runs: Sequence, smoothing: int = 1) -> Figure:
    """Per-flow goodput (Mbit/s) between consecutive flow_series samples (delivered bytes)."""
    fig, ax = _fig(_title(runs, "Per-flow goodput"), "time (s)", "goodput (Mbit/s)")
    for run in runs:
        for f, info, tab in _flow_series_by_flow(run, "goodput_ts"):
            if info.get("kind") == "ping":
                continue
            t = tab.column("t_ns").to_numpy().astype(np.float64)
            d = tab.column("delivered_bytes").to_numpy().astype(np.float64)
            if t.size < 2:
                continue
            rate = np.diff(d) * 8 / (np.diff(t) / NS) / 1e6
            if smoothing > 1:
                rate = np.convolve(rate, np.ones(smoothing) / smoothing, mode="same")
            lab = f"{run.run_id} flow {f} {info.get('label', '')} {info.get('cc', '')}".rstrip()
            ax.plot(t[1:] / NS, rate, label=lab)
    _legend(ax)
    return fig


def cwnd_timeseries(runs: Sequence) -> Figure:
    """TCP congestion window (bytes) of each TCP flow."""
    fig, ax = _fig(_title(runs, "TCP congestion window"), "time (s)", "cwnd (bytes)")
    for run in runs:
        for f, info, tab in _flow_series_by_flow(run, "cwnd_ts"):
            cw = tab.column("cwnd_bytes").to_numpy().astype(np.float64)
            if info.get("kind", "tcp") != "tcp" or not cw.any():
                continue
            t = tab.column("t_ns").to_numpy().astype(np.float64)
            ax.step(t / NS, cw, where="post", label=f"{run.run_id} flow {f} {info.get('cc', '')}".rstrip())
    _legend(ax)
    return fig


def rtt_timeseries(runs: Sequence) -> Figure:
    """Probe RTT (ms) against send time; lost probes are not drawn."""
    fig, ax = _fig(_title(runs, "Probe RTT"), "time (s)", "RTT (ms)")
    for run in runs:
        p = _need(run, "probes", "rtt_ts")
        for f in M.probe_flows(_tables(run)):
            t = M.probe_table(_tables(run), f)
            rtt = M._nullable_float(t, "rtt_ns")
            ts = t.column("t_send_ns").to_numpy().astype(np.float64)
            ok = ~np.isnan(rtt)
            ax.plot(ts[ok] / NS, rtt[ok] / 1e6, ".-", ms=3, label=f"{run_label(run)} probe {f}")
        del p
    _legend(ax)
    return fig


# --------------------------------------------------------------------------- distributions


def delay_cdf(runs: Sequence, direction: str | None = "down", warmup_s: float = 0.0) -> Figure:
    """CDF of the per-packet queueing delay, one curve per run and direction."""
    fig, ax = _fig(_title(runs, "Queueing delay CDF"), "queueing delay (ms)", "cumulative probability")
    for run in runs:
        _need(run, "packets", "delay_cdf")
        for d in _dirs(run, direction):
            x, f = M.queue_delay_cdf_ms(_tables(run), run.meta, d, warmup_s)
            if x.size:
                ax.step(np.r_[0, x], np.r_[0, f], where="post", label=f"{run_label(run)} {d}")
    ax.set_ylim(0, 1.02)
    _legend(ax)
    return fig


def rtt_cdf(runs: Sequence, warmup_s: float = 0.0, induced: bool = False) -> Figure:
    """CDF of probe RTT (or induced latency = RTT - base RTT) per run and probe stream."""
    xl = "induced latency (ms)" if induced else "RTT (ms)"
    fig, ax = _fig(_title(runs, "Probe " + xl.split(" (")[0] + " CDF"), xl, "cumulative probability")
    for run in runs:
        _need(run, "probes", "rtt_cdf")
        for f in M.probe_flows(_tables(run)):
            fn = M.induced_latency_ms if induced else M.probe_rtt_ms
            x, c = M.cdf(fn(_tables(run), f, warmup_s))
            if x.size:
                ax.step(x, c, where="post", label=f"{run_label(run)} probe {f}")
    ax.set_ylim(0, 1.02)
    _legend(ax)
    return fig


def _unit_of(metric: str) -> str:
    if metric.endswith("_ms"):
        return "ms"
    if "mbps" in metric:
        return "Mbit/s"
    if "backlog_bytes" in metric:
        return "bytes"
    if "backlog_pkts" in metric:
        return "packets"
    return (
        "fraction"
        if metric in ("utilization", "up_utilization", "enorm", "tcp_share", "probe_loss")
        else "count"
    )


def _grouped_values(runs, metric, group_by):
    groups = _groups(runs, group_by)
    names = sorted(groups)
    vals = [[v for v in (metric_value(r, metric) for r in groups[g]) if v is not None] for g in names]
    return names, vals


def box(runs: Sequence, metric: str = "queue_delay_p95_ms", group_by: str = "qdisc") -> Figure:
    """Box plot of a per-run metric across runs, one box per value of ``group_by``."""
    names, vals = _grouped_values(runs, metric, group_by)
    fig, ax = _fig(_title(runs, f"{metric} by {group_by}"), group_by, f"{metric} ({_unit_of(metric)})")
    nonempty = [(n, v) for n, v in zip(names, vals) if v]
    if nonempty:
        ax.boxplot([v for _, v in nonempty], tick_labels=[n for n, _ in nonempty])
        ax.plot([], [], color="C1", label=f"median of {metric} over runs (box: quartiles)")
    _legend(ax)
    return fig


def bar(runs: Sequence, metric: str = "queue_delay_p50_ms", group_by: str = "qdisc") -> Figure:
    """Median of a per-run metric per group with quartile (25th-75th) error bars."""
    names, vals = _grouped_values(runs, metric, group_by)
    fig, ax = _fig(_title(runs, f"{metric} by {group_by}"), group_by, f"{metric} ({_unit_of(metric)})")
    med, lo, hi, keep = [], [], [], []
    for n, v in zip(names, vals):
        if v:
            q1, q2, q3 = np.percentile(v, [25, 50, 75])
            med.append(q2)
            lo.append(q2 - q1)
            hi.append(q3 - q2)
            keep.append(n)
    if keep:
        ax.bar(keep, med, yerr=[lo, hi], capsize=4, label="median over runs, error bars: quartiles")
    _legend(ax)
    return fig


def ellipse(
    runs: Sequence,
    x_metric: str = "goodput_mbps_total",
    y_metric: str = "probe_induced_mean_ms",
    group_by: str = "qdisc",
    nstd: float = 1.0,
) -> Figure:
    """Latency-goodput ellipse plot (RFC 7928 section 2.7, Flent's ``ellipsis``; goodbadwifi2015
    figures): per group, a marker at the median and the ``nstd``-sigma covariance ellipse of the
    per-run (goodput, latency) points; the latency axis is inverted (better is up-right)."""
    fig, ax = _fig(
        _title(runs, "Latency vs goodput"),
        f"{x_metric} ({_unit_of(x_metric)})",
        f"{y_metric} ({_unit_of(y_metric)})",
    )
    for i, (g, rs) in enumerate(sorted(_groups(runs, group_by).items())):
        pts = np.array(
            [
                (x, y)
                for x, y in ((metric_value(r, x_metric), metric_value(r, y_metric)) for r in rs)
                if x is not None and y is not None
            ],
            dtype=np.float64,
        ).reshape(-1, 2)
        if not len(pts):
            continue
        color = f"C{i % 10}"
        med = np.median(pts, axis=0)
        ax.plot(*med, "o", color=color, label=f"{group_by}={g} (n={len(pts)})")
        ax.plot(pts[:, 0], pts[:, 1], ".", color=color, alpha=0.4)
        if len(pts) >= 2:
            cov = np.cov(pts, rowvar=False)
            vals, vecs = np.linalg.eigh(cov)
            vals = np.clip(vals, 0, None)
            angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
            w, h = 2 * nstd * np.sqrt(vals[-1]), 2 * nstd * np.sqrt(vals[0])
            ax.add_patch(Ellipse(tuple(pts.mean(axis=0)), w, h, angle=angle, fill=False, color=color))
    ax.autoscale_view()
    ax.invert_yaxis()
    _legend(ax)
    return fig


def parallel(
    runs: Sequence,
    left: str = "enorm",
    right: str = "tcp_share",
    class_by: str = "lpcc",
    qdisc_by: str = "qdisc",
) -> Figure:
    """Parallel coordinates of two metrics per (class, qdisc) pair (lpcc2013 3c: E[Q]/Q_max vs
    TCP%): one line per pair from its median ``left`` value (x = 0) to its median ``right`` value
    (x = 1). The class is ``meta['params'][class_by]`` or, by default, the non-NewReno/CUBIC
    congestion controllers of the run's TCP flows."""
    fig, ax = _fig(_title(runs, f"{left} vs {right} per (class, qdisc)"), "metric", "value (fraction)")
    pairs: dict[tuple[str, str], list] = {}
    for r in runs:
        cls = (r.meta.get("params") or {}).get(class_by)
        if cls is None:
            ccs = sorted(
                {f.get("cc") for f in r.summary.get("flows", []) if f.get("cc")} - {"newreno", "cubic"}
            )
            cls = "+".join(ccs) or "-"
        pairs.setdefault((str(cls), group_value(r, qdisc_by)), []).append(r)
    for i, ((cls, q), rs) in enumerate(sorted(pairs.items())):
        lv = [v for v in (metric_value(r, left) for r in rs) if v is not None]
        rv = [v for v in (metric_value(r, right) for r in rs) if v is not None]
        if lv and rv:
            ax.plot([0, 1], [np.median(lv), np.median(rv)], "o-", color=f"C{i % 10}", label=f"{cls} / {q}")
    ax.set_xticks([0, 1], [left, right])
    ax.set_xlim(-0.2, 1.2)
    _legend(ax)
    return fig


KINDS: dict[str, Callable[..., Figure]] = {
    "delay_ts": delay_timeseries,
    "backlog_ts": backlog_timeseries,
    "goodput_ts": goodput_timeseries,
    "cwnd_ts": cwnd_timeseries,
    "rtt_ts": rtt_timeseries,
    "delay_cdf": delay_cdf,
    "rtt_cdf": rtt_cdf,
    "box": box,
    "bar": bar,
    "ellipse": ellipse,
    "parallel": parallel,
}


def figure(kind: str, runs: Sequence, **opts: Any) -> Figure:
    """Draw figure ``kind`` for ``runs``; UnknownKind lists the known kinds."""
    if kind not in KINDS:
        raise UnknownKind(f"unknown plot kind '{kind}'; kinds: {', '.join(KINDS)}")
    if not runs:
        raise ValueError("no runs to plot")
    return KINDS[kind](list(runs), **opts)


def save(fig: Figure, path: str | Path) -> Path:
    """Save as PNG, SVG or PDF chosen by the file extension; closes the figure."""
    path = Path(path)
    ext = path.suffix.lower().lstrip(".")
    if ext not in ("png", "svg", "pdf"):
        raise ValueError(f"unsupported figure format '{path.suffix}'; use .png, .svg or .pdf")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=ext, dpi=120)
    plt.close(fig)
    return path
