"""Figures over stored runs (matplotlib, Agg backend).

Every figure function takes a list of loaded runs (``store.RunData``, or anything with
``run_id``, ``meta``, ``summary`` and a ``tables`` mapping) plus keyword options and returns a
``matplotlib.figure.Figure`` with labelled axes (units), a legend and a title naming the
scenario and the qdisc per direction. ``save(fig, path)`` writes PNG/SVG/PDF by extension.

Every kind takes ``direction``: "up", "down" or "both"; by default the direction(s) where the
runs' load is (``columns.shown_dirs``). The link figures (queueing delay, backlog, the per-run
link metrics of box/bar/parallel) show those directions' bottlenecks, and legends and groups
name the discipline of those directions, plus any direction whose discipline differs between
the runs, never another direction's alone.

``KINDS`` maps a kind name to its function; ``figure(kind, runs, **opts)`` dispatches and
raises ``UnknownKind`` listing the kinds. A figure that needs a table the run did not record
raises ``metrics.MissingTableError`` naming the run, the table and the figure.
"""

from __future__ import annotations

import importlib

import matplotlib

from aqmlab import signals

matplotlib.use("Agg")

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# pyplot (and with it matplotlib's projections) imported whole, a Ctrl-C or SIGTERM taken after
# the import (`signals.deferred`)
plt = signals.deferred(lambda: importlib.import_module("matplotlib.pyplot"))

from matplotlib.figure import Figure

from aqmlab import files
from aqmlab.plots.artists import BestLegend, PixelDots, style
from aqmlab.plots.common import (
    NS,
    UnknownKind,
    flow_label,
    group_value,
    metric_value,
    missing_reason,
    qdisc_label,
    run_labels,
    short_key,
    shown_dirs,
    varying_params,
)
from aqmlab.plots.distributions import bar, box, delay_cdf, ellipse, grouped, parallel, rtt_cdf
from aqmlab.plots.series import (
    backlog_timeseries,
    cc_timeseries,
    cwnd_timeseries,
    delay_timeseries,
    goodput_timeseries,
    has_cc_state,
    rtt_timeseries,
    srtt_timeseries,
)

__all__ = [
    "GROUPED", "KINDS", "METRIC_OPTIONS", "NS", "WINDOWED", "BestLegend", "PixelDots", "UnknownKind",
    "backlog_timeseries", "bar", "box", "cc_timeseries", "cwnd_timeseries", "delay_cdf", "delay_timeseries",
    "ellipse", "figure", "flow_label", "goodput_timeseries", "group_value", "grouped", "has_cc_state",
    "metric_value", "missing_reason", "parallel", "plt", "qdisc_label", "rtt_cdf", "rtt_timeseries", "run_labels", "save",
    "short_key", "shown_dirs", "srtt_timeseries", "style", "varying_params",
]  # fmt: skip

WINDOWED = ("delay_ts", "delay_cdf", "rtt_cdf")
"""The kinds that skip a warm-up (their ``warmup_s`` option; by default the run's own)."""

GROUPED = ("box", "bar", "ellipse")
"""The kinds that group runs (their ``by`` option)."""

METRIC_OPTIONS = {"box": ("metric",), "bar": ("metric",), "ellipse": ("x_metric", "y_metric")}
"""The kinds that draw a per-run metric the user chooses, and their options for it (``metric_value``
names the metrics)."""

KINDS: dict[str, Callable[..., Figure]] = {
    "delay_ts": delay_timeseries,
    "backlog_ts": backlog_timeseries,
    "goodput_ts": goodput_timeseries,
    "cwnd_ts": cwnd_timeseries,
    "srtt_ts": srtt_timeseries,
    "cc_ts": cc_timeseries,
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
    try:
        with files.whole(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=120)
    finally:
        plt.close(fig)
    return path
