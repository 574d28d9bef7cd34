"""The figures across runs: the delay and RTT CDFs, and the per-run metrics in groups (box, bar,
ellipse, parallel coordinates)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Ellipse

from aqmlab import columns
from aqmlab import metrics as M
from aqmlab.plots.artists import _MARKERS, RunLines, _fig, _legend, _line, _title, style
from aqmlab.plots.common import (
    _fmt_value,
    _hops,
    _metric_columns,
    _metric_label,
    _need,
    _params,
    _probe_names,
    _qdisc_dirs,
    _warmup,
    group_value,
    metric_value,
    run_labels,
    short_key,
    shown_dirs,
    varying_params,
)
from aqmlab.store import flatten_summary


def delay_cdf(runs: Sequence, direction: str | None = None, warmup_s: float | None = None) -> Figure:
    """CDF of the per-packet queueing delay, one curve per run and hop of the shown
    direction(s), from the warm-up on (``_warmup``)."""
    shown = shown_dirs(runs, direction)
    fig, ax = _fig(_title(runs, "Queueing delay CDF", shown), "queueing delay (ms)", "cumulative probability")
    hops = [_hops(run, shown) for run in runs]
    style = RunLines(runs, shown, [len(h) for h in hops])
    for j, (run, lab, names) in enumerate(zip(runs, run_labels(runs, shown), hops)):
        _need(run, "packets", "delay_cdf")
        for k, hop in enumerate(names):
            x, f = M.queue_delay_cdf_ms(run.tables, run.meta, hop, _warmup(run, warmup_s))
            if x.size:
                name = f"{lab}, {hop}" if len(names) > 1 else lab
                ax.step(np.r_[0, x], np.r_[0, f], where="post", **_line(style.index(j, k)), label=name)
    ax.set_ylim(0, 1.02)
    _legend(ax)
    return fig


def rtt_cdf(
    runs: Sequence, warmup_s: float | None = None, induced: bool = False, direction: str | None = None
) -> Figure:
    """CDF of probe RTT (or induced latency = RTT - base RTT) per run and probe stream, from the
    warm-up on (``_warmup``)."""
    xl = "induced latency (ms)" if induced else "RTT (ms)"
    fig, ax = _fig(_title(runs, "Probe " + xl.split(" (")[0] + " CDF"), xl, "cumulative probability")
    dirs = shown_dirs(runs, direction)
    for run in runs:
        _need(run, "probes", "rtt_cdf")
    probes = [_probe_names(run) for run in runs]
    style = RunLines(runs, dirs, [len(p) for p in probes])
    for j, (run, lab, names) in enumerate(zip(runs, run_labels(runs, dirs), probes)):
        for k, (f, name) in enumerate(names.items()):
            fn = M.induced_latency_ms if induced else M.probe_rtt_ms
            x, c = M.cdf(fn(run.tables, f, _warmup(run, warmup_s)))
            if x.size:
                ax.step(
                    x, c, where="post", **_line(style.index(j, k)), label=f"{lab}, {name}" if name else lab
                )
    ax.set_ylim(0, 1.02)
    _legend(ax)
    return fig


def _by_keys(runs: Sequence, by: str | Sequence[str] | None) -> list[str]:
    """The grouping keys: ``by`` as given ('qdisc,rate' or a list), else the qdisc and every grid
    key whose value differs between the runs, so that runs of different grid points are never
    pooled into one box or ellipse."""
    if by is None:
        return ["qdisc", *varying_params(runs)]
    keys = [k.strip() for k in by.split(",")] if isinstance(by, str) else [str(k) for k in by]
    keys = [k for k in keys if k]
    params = sorted({p for r in runs for p in _params(r)})
    shorts = {p.removeprefix("params.").split(".")[-1] for p in params}
    cols = set(flatten_summary(runs[0].summary, runs[0].meta)) if runs else set()
    for k in keys:
        if k not in params and k not in shorts and k not in cols:
            allowed = ", ".join(["qdisc", "up_qdisc", "seed", *params]) + ", or a runs column"
            raise ValueError(f"by: unknown key {k!r}; allowed: {allowed}")
    if not keys:
        raise ValueError("by: no key given; allowed: qdisc, seed, a grid key, or a runs column")
    return keys


def _natural(s: str) -> list:
    """Sort key putting '5Mbps' before '10Mbps'."""
    return [
        (0, float(x), "") if re.fullmatch(r"\d+(\.\d+)?", x) else (1, 0.0, x)
        for x in re.split(r"(\d+(?:\.\d+)?)", s)
    ]


def _group_key(run, keys: Sequence[str], qdirs: Sequence[str] | None = None) -> tuple[str, ...]:
    params = _params(run)
    out = []
    for k in keys:
        if k in params or k in ("qdisc", "up_qdisc", "seed"):
            out.append(group_value(run, k, qdirs))
            continue
        # a short grid key ('rate' for 'topology.down.rate')
        full = [p for p in params if p.removeprefix("params.").split(".")[-1] == k]
        out.append(_fmt_value(params[full[0]]) if len(full) == 1 else group_value(run, k))
    return tuple(out)


def _group_name(keys: Sequence[str], values: Sequence[str], sep: str = ", ") -> str:
    return sep.join(
        v if k in ("qdisc", "up_qdisc") else f"{short_key(k, keys)}={v}" for k, v in zip(keys, values)
    )


def grouped(
    runs: Sequence, by: str | Sequence[str] | None = None, direction: str | None = None
) -> tuple[list[str], dict[tuple, list]]:
    """Runs grouped by the ``by`` keys (see ``_by_keys``): (keys, {values: runs}) in natural order.
    The key ``qdisc`` is the discipline of the shown direction(s) (``_qdisc_dirs``)."""
    keys = _by_keys(runs, by)
    qdirs = _qdisc_dirs(runs, shown_dirs(runs, direction))
    out: dict[tuple, list] = {}
    for r in runs:
        out.setdefault(_group_key(r, keys, qdirs), []).append(r)
    order = sorted(out, key=lambda g: [_natural(v) for v in g])
    return keys, {g: out[g] for g in order}


def _key_names(runs: Sequence, keys: Sequence[str], dirs: Sequence[str]) -> str:
    """The grouping keys for an axis label: 'up qdisc, rate' when one direction's discipline
    groups the runs."""
    qdirs = _qdisc_dirs(runs, dirs)
    qd = f"{qdirs[0]} qdisc" if len(qdirs) == 1 else "qdisc"
    return ", ".join(qd if k == "qdisc" else short_key(k, keys) for k in keys)


def _grouped_values(runs, cols, by, direction):
    """(keys, box names, values): per group, one box per column (the shown directions' twins
    of a link metric, named after their direction when there are several)."""
    keys, groups = grouped(runs, by, direction)
    names, vals = [], []
    for g, rs in groups.items():
        for col in cols:
            d = "up" if col.startswith("up_") else "down"
            names.append(_group_name(keys, g, "\n") + (f"\n{d}" if len(cols) > 1 else ""))
            vals.append([v for v in (metric_value(r, col) for r in rs) if v is not None])
    return keys, names, vals


def _group_fig(runs: Sequence, cols: Sequence[str], keys: Sequence[str], dirs: Sequence[str]):
    """The figure of a grouped metric: titled and labelled with the metric and the group keys."""
    what = _key_names(runs, keys, dirs)
    return _fig(_title(runs, f"{columns.quantity(cols[0])} by {what}", dirs), what, _metric_label(cols, dirs))


def _grouped_metric(runs: Sequence, metric: str | None, default: str, by, direction: str | None):
    """What box and bar draw from: the figure (``_group_fig``) and, per group, the box names and
    values (``_grouped_values``) of ``metric``, or of the link metric ``default`` in the shown
    direction(s)."""
    dirs = shown_dirs(runs, direction)
    cols = _metric_columns(metric, default, dirs)
    keys, names, vals = _grouped_values(runs, cols, by, direction)
    return (*_group_fig(runs, cols, keys, dirs), names, vals)


def _by_arg(by, group_by):
    return by if by is not None else group_by


def box(
    runs: Sequence,
    metric: str | None = None,
    group_by: str | None = None,
    by: str | Sequence[str] | None = None,
    direction: str | None = None,
) -> Figure:
    """Box plot of a per-run metric across runs (by default ``queue_delay_p95_ms`` of the shown
    direction(s)), one box per group: by default the qdisc and every grid value that differs
    between the runs (``by`` chooses: 'qdisc', 'qdisc,rate', ...)."""
    fig, ax, names, vals = _grouped_metric(
        runs, metric, "queue_delay_p95_ms", _by_arg(by, group_by), direction
    )
    nonempty = [(n, v) for n, v in zip(names, vals) if v]
    if nonempty:
        ax.boxplot([v for _, v in nonempty], tick_labels=[n for n, _ in nonempty])
        # the runs, not the values: a run has one in each shown direction's box
        cols = _metric_columns(metric, "queue_delay_p95_ms", shown_dirs(runs, direction))
        n = sum(any(metric_value(r, c) is not None for c in cols) for r in runs)
        ax.plot([], [], color="C1", label=f"median over runs (box: quartiles); n = {n} runs")
    _legend(ax)
    return fig


def bar(
    runs: Sequence,
    metric: str | None = None,
    group_by: str | None = None,
    by: str | Sequence[str] | None = None,
    direction: str | None = None,
) -> Figure:
    """Median of a per-run metric (by default ``queue_delay_p50_ms`` of the shown direction(s))
    per group with quartile (25th-75th) error bars; groups as in ``box``."""
    fig, ax, names, vals = _grouped_metric(
        runs, metric, "queue_delay_p50_ms", _by_arg(by, group_by), direction
    )
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
    group_by: str | None = None,
    nstd: float = 1.0,
    by: str | Sequence[str] | None = None,
    direction: str | None = None,
) -> Figure:
    """Latency-goodput ellipse plot (RFC 7928 section 2.7, Flent's ``ellipsis``; goodbadwifi2015
    figures): per group (as in ``box``), a marker at the median and the ``nstd``-sigma covariance
    ellipse of the per-run (goodput, latency) points; the latency axis is inverted (better is
    up-right)."""
    fig, ax = _fig(_title(runs, "Latency vs goodput"), columns.label(x_metric), columns.label(y_metric))
    keys, groups = grouped(runs, _by_arg(by, group_by), direction)
    i = 0
    for g, rs in groups.items():
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
        st = style(i)
        color, mk = st["color"], _MARKERS[(i // 10) % 5]
        med = np.median(pts, axis=0)
        ax.plot(*med, mk, color=color, label=f"{_group_name(keys, g)} (n={len(pts)})")
        ax.plot(pts[:, 0], pts[:, 1], ".", color=color, alpha=0.4)
        if len(pts) >= 2:
            cov = np.cov(pts, rowvar=False)
            vals, vecs = np.linalg.eigh(cov)
            vals = np.clip(vals, 0, None)
            angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
            w, h = 2 * nstd * np.sqrt(vals[-1]), 2 * nstd * np.sqrt(vals[0])
            ax.add_patch(
                Ellipse(
                    tuple(pts.mean(axis=0)),
                    w,
                    h,
                    angle=angle,
                    fill=False,
                    color=color,
                    linestyle=st["linestyle"],
                )
            )
        i += 1
    ax.autoscale_view()
    ax.invert_yaxis()
    _legend(ax)
    return fig


def parallel(
    runs: Sequence,
    left: str | None = None,
    right: str = "tcp_share",
    class_by: str = "lpcc",
    qdisc_by: str = "qdisc",
    direction: str | None = None,
) -> Figure:
    """Parallel coordinates of two metrics per (class, qdisc) pair (lpcc2013 3c: E[Q]/Q_max vs
    TCP%): one line per pair from its median ``left`` value (x = 0; by default ``enorm`` of each
    shown direction) to its median ``right`` value (x = 1). The class is
    ``meta['params'][class_by]`` or, by default, the non-NewReno/CUBIC congestion controllers of
    the run's TCP flows."""
    dirs = shown_dirs(runs, direction)
    lefts = _metric_columns(left, "enorm", dirs)
    unit = {columns.unit(lefts[0]), columns.unit(right)}
    ylabel = f"value ({unit.pop()})" if len(unit) == 1 and "" not in unit else "value"
    lname = columns.name(lefts[0]) if len(lefts) == 1 else columns.quantity(lefts[0])
    fig, ax = _fig(_title(runs, f"{lname} vs {columns.name(right)} per (class, qdisc)"), "metric", ylabel)
    qdirs = _qdisc_dirs(runs, dirs)
    pairs: dict[tuple[str, str], list] = {}
    for r in runs:
        cls = (r.meta.get("params") or {}).get(class_by)
        if cls is None:
            ccs = sorted(
                {f.get("cc") for f in r.summary.get("flows", []) if f.get("cc")} - {"newreno", "cubic"}
            )
            cls = "+".join(ccs) or "-"
        pairs.setdefault((str(cls), group_value(r, qdisc_by, qdirs)), []).append(r)
    lines = [(cls, q, rs, col) for (cls, q), rs in sorted(pairs.items()) for col in lefts]
    for i, (cls, q, rs, col) in enumerate(lines):
        lv = [v for v in (metric_value(r, col) for r in rs) if v is not None]
        rv = [v for v in (metric_value(r, right) for r in rs) if v is not None]
        d = f", {'up' if col.startswith('up_') else 'down'}" if len(lefts) > 1 else ""
        if lv and rv:
            ax.plot([0, 1], [np.median(lv), np.median(rv)], **_line(i, marker="o"), label=f"{cls} / {q}{d}")
    ax.set_xticks([0, 1], [lname, columns.name(right)])
    ax.set_xlim(-0.2, 1.2)
    _legend(ax)
    return fig
