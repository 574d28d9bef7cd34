"""The figures over time: per-packet queueing delay, backlog, goodput, cwnd, the congestion
controllers' state and probe RTT."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure

from aqmlab import metrics as M
from aqmlab.plots.artists import _MARKERS, PixelDots, RunLines, _dots, _fig, _legend, _line, _title
from aqmlab.plots.classes import CLASS_NOTE, FlowClasses, FlowLine, by_classes
from aqmlab.plots.common import (
    NS,
    _hops,
    _need,
    _probe_names,
    _warmup,
    flow_label,
    run_labels,
    shown_dirs,
)


def delay_timeseries(runs: Sequence, direction: str | None = None, warmup_s: float | None = None) -> Figure:
    """Queueing (sojourn) delay of each transmitted packet against its enqueue time, from the
    warm-up on (``_warmup``), at the hops of the shown direction(s)."""
    shown = shown_dirs(runs, direction)
    fig, ax = _fig(_title(runs, "Per-packet queueing delay", shown), "time (s)", "queueing delay (ms)")
    hops = [_hops(run, shown) for run in runs]
    style = RunLines(runs, shown, [len(h) for h in hops])
    for j, (run, lab, names) in enumerate(zip(runs, run_labels(runs, shown), hops)):
        _need(run, "packets", "delay_ts")
        for k, hop in enumerate(names):
            t_out, delay = M.sojourn_times_ns(run.tables, run.meta, hop, _warmup(run, warmup_s))
            t_in = t_out - delay
            label = f"{lab}, {hop}" if len(names) > 1 else lab
            ax.add_line(
                PixelDots(t_in / NS, delay / 1e6, **_dots(style.index(j, k), markersize=2), label=label)
            )
    ax.autoscale_view()
    _legend(ax)
    return fig


def backlog_timeseries(runs: Sequence, direction: str | None = None, unit: str = "bytes") -> Figure:
    """Queue backlog over time (queue samples; the exact step function from packets if no samples)
    at the hops of the shown direction(s)."""
    shown = shown_dirs(runs, direction)
    ylabel = "backlog (bytes)" if unit == "bytes" else "backlog (packets)"
    fig, ax = _fig(_title(runs, "Queue backlog", shown), "time (s)", ylabel)
    hops = [_hops(run, shown) for run in runs]
    style = RunLines(runs, shown, [len(h) for h in hops])
    for j, (run, lab, names) in enumerate(zip(runs, run_labels(runs, shown), hops)):
        if run.tables.get("queue") is None and run.tables.get("packets") is None:
            _need(run, "queue", "backlog_ts")
        for k, hop in enumerate(names):
            t, v, exact = M.backlog_steps(run.tables, run.meta, hop, unit)
            t = np.r_[t, run.meta["duration_ns"]]
            v = np.r_[v, v[-1] if v.size else 0]
            name = f"{lab}, {hop}" if len(names) > 1 else lab
            ax.step(
                t / NS,
                v,
                where="post",
                **_line(style.index(j, k)),
                label=f"{name}{'' if exact else ' (sampled)'}",
            )
    _legend(ax)
    return fig


def _flow_series_by_flow(run, fig: str):
    """(flow id, its flows-table row with a '_rank' within its group, its flow_series rows, the
    number of flows of each group)."""
    fs = _need(run, "flow_series", fig)
    flows = run.tables.get("flows")
    info: dict[int, dict] = {}
    sizes: dict = {}
    if flows is not None:
        for r in sorted(flows.to_pylist(), key=lambda r: int(r["flow"])):
            r = dict(r)
            r["_rank"] = sizes.get(r.get("group"), 0) + 1
            sizes[r.get("group")] = r["_rank"]
            info[int(r["flow"])] = r
    flow = fs.column("flow").to_numpy().astype(np.int64)
    t = fs.column("t_ns").to_numpy().astype(np.int64)
    for f in np.unique(flow):
        m = flow == f
        order = np.argsort(t[m], kind="stable")
        yield int(f), info.get(int(f), {}), fs.filter(m).take(order), sizes


def _flow_lines(runs: Sequence, kind: str, values) -> list[FlowLine]:
    """Every flow's series in every run, from ``values(info, its flow_series rows)``: (times in
    s, values), or None to leave the flow out."""
    out = []
    for i, run in enumerate(runs):
        for f, info, tab, sizes in _flow_series_by_flow(run, kind):
            got = values(info, tab)
            if got is not None:
                out.append(FlowLine(i, f, info, sizes, *got))
    return out


def _draw_flows(
    ax, runs: Sequence, lines: Sequence[FlowLine], dirs, step: bool, by_class: bool | None
) -> None:
    """The flows' lines and the legend: every flow (named by run and flow) for a few runs, else
    by run group and flow class (``classes``)."""
    if by_classes(runs, by_class):
        fc = FlowClasses(runs, dirs, lines)
        fc.draw(ax, lines, step)
        handles, labels = fc.legend_entries()
        _legend(ax, handles=handles, labels=labels, title=CLASS_NOTE)
        return
    names = run_labels(runs, dirs)
    for i, ln in enumerate(lines):
        lab = flow_label(ln.info, ln.flow, ln.sizes)
        kw = {**_line(i), "label": f"{names[ln.run]}: {lab}" if len(runs) > 1 else lab}
        if step:
            ax.step(ln.t, ln.y, where="post", **kw)
        else:
            ax.plot(ln.t, ln.y, **kw)
    _legend(ax)


def goodput_timeseries(
    runs: Sequence, smoothing: int = 1, direction: str | None = None, by_class: bool | None = None
) -> Figure:
    """Per-flow goodput (Mbit/s) between consecutive flow_series samples (delivered bytes); of
    more than ``CLASS_RUNS`` runs (or with ``by_class``), by run group and flow class
    (``classes``)."""
    fig, ax = _fig(_title(runs, "Per-flow goodput"), "time (s)", "goodput (Mbit/s)")

    def rate(info, tab):
        t = tab.column("t_ns").to_numpy().astype(np.float64)
        d = tab.column("delivered_bytes").to_numpy().astype(np.float64)
        if info.get("kind") in M.PROBE_KINDS or t.size < 2:
            return None
        r = np.diff(d) * 8 / (np.diff(t) / NS) / 1e6
        if smoothing > 1:
            r = np.convolve(r, np.ones(smoothing) / smoothing, mode="same")
        return t[1:] / NS, r

    lines = _flow_lines(runs, "goodput_ts", rate)
    _draw_flows(ax, runs, lines, shown_dirs(runs, direction), False, by_class)
    return fig


def _tcp_series(runs: Sequence, direction: str | None, column: str, kind: str, what: str, unit: str,
                scale: float = 1.0, by_class: bool | None = None) -> Figure:  # fmt: skip
    """One flow_series column of each TCP flow over time, a step per sample (``scale`` applied;
    a sample of 0, where the flow had none yet, left out); by class as ``goodput_timeseries``."""
    fig, ax = _fig(_title(runs, what), "time (s)", unit)

    def values(info, tab):
        v = tab.column(column).to_numpy().astype(np.float64)
        if info.get("kind", "tcp") != "tcp" or not v.any():
            return None
        return tab.column("t_ns").to_numpy().astype(np.float64) / NS, np.where(v > 0, v * scale, np.nan)

    lines = _flow_lines(runs, kind, values)
    _draw_flows(ax, runs, lines, shown_dirs(runs, direction), True, by_class)
    return fig


def cwnd_timeseries(runs: Sequence, direction: str | None = None, by_class: bool | None = None) -> Figure:
    """TCP congestion window (bytes) of each TCP flow (by class as ``goodput_timeseries``)."""
    return _tcp_series(runs, direction, "cwnd_bytes", "cwnd_ts", "TCP congestion window", "cwnd (bytes)",
                       by_class=by_class)  # fmt: skip


def srtt_timeseries(runs: Sequence, direction: str | None = None, by_class: bool | None = None) -> Figure:
    """The smoothed RTT (ms) each TCP sender keeps (RFC 6298's SRTT; Linux's srtt_us), per flow:
    the path's base RTT plus the queueing its packets and ACKs met (by class as
    ``goodput_timeseries``)."""
    return _tcp_series(runs, direction, "srtt_ns", "srtt_ts", "TCP smoothed RTT", "SRTT (ms)", 1e-6, by_class)


CC_PANELS = (
    ("cc_alpha", "alpha", 1.0),
    ("cc_bw_bps", "bandwidth est.\n(Mbit/s)", 1e-6),
    ("cc_pacing_gain", "pacing gain", 1.0),
    ("cc_state", "state", None),
    ("cc_min_rtt_ns", "min RTT (ms)", 1e-6),
    ("cc_w_max_bytes", "W_max (kB)", 1e-3),
)
"""The panels of ``cc_ts``: flow_series column, axis label, scale (None: state names)."""


def has_cc_state(run) -> bool:
    """Whether ``run`` recorded a congestion controller's state (a non-null ``CC_PANELS`` column of
    its flow_series): what ``cc_ts`` draws."""
    fs = run.tables.get("flow_series")
    cols = [c for c, _, _ in CC_PANELS if fs is not None and c in fs.column_names]
    return any(fs.column(c).null_count < fs.num_rows for c in cols)


def _cc_values(tab, col: str, scale: float | None, states: list[str]) -> np.ndarray:
    """A controller-state column as floats, NaN for null; a state is its place in ``states``,
    which gains the names in the order they first occur."""
    if scale is not None:
        return M._nullable_float(tab, col) * scale
    names = tab.column(col).to_pylist()
    states += [v for v in dict.fromkeys(names) if v is not None and v not in states]
    return np.array([np.nan if v is None else states.index(v) for v in names], dtype=np.float64)


def cc_timeseries(runs: Sequence, direction: str | None = None, by_class: bool | None = None) -> Figure:
    """The congestion controllers' own state per TCP flow, one panel per quantity that a flow
    has (flow_series' ``cc_*`` columns): DCTCP's and Prague's alpha, BBR's bandwidth estimate,
    pacing gain and state (the states upwards in the order they first occur), the controller's
    minimum RTT, CUBIC's W_max. Each flow keeps its line style across the panels; of more than
    ``CLASS_RUNS`` runs (or with ``by_class``), each panel by run group and flow class
    (``classes``; the states, which have no mean, every flow thin in its group's colour)."""
    states: list[str] = []
    panels_of: dict[str, list[FlowLine]] = {c: [] for c, _, _ in CC_PANELS}
    flows: list[FlowLine] = []  # one per flow with any controller state, in order
    for i, run in enumerate(runs):
        for f, info, tab, sizes in _flow_series_by_flow(run, "cc_ts"):
            vals = {c: _cc_values(tab, c, k, states) for c, _, k in CC_PANELS if c in tab.column_names}
            vals = {c: v for c, v in vals.items() if not np.isnan(v).all()}
            if vals:
                t = tab.column("t_ns").to_numpy().astype(np.float64) / NS
                flows.append(FlowLine(i, f, info, sizes, t, np.empty(0)))
                for c, v in vals.items():
                    panels_of[c].append(FlowLine(i, f, info, sizes, t, v))
    panels = [p for p in CC_PANELS if panels_of[p[0]]] or [("", "controller state", 1.0)]
    fig, axes = plt.subplots(
        len(panels), 1, sharex=True, squeeze=False, figsize=(8, 1.2 + 1.6 * len(panels)), layout="constrained"
    )
    axes = axes[:, 0]
    axes[0].set_title(_title(runs, "Congestion-controller state"), fontsize=9)
    axes[-1].set_xlabel("time (s)")
    dirs = shown_dirs(runs, direction)
    classes = FlowClasses(runs, dirs, flows) if by_classes(runs, by_class) and flows else None
    names = run_labels(runs, dirs)
    for ax, (col, ylabel, scale) in zip(axes, panels):
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if classes is not None and scale is None:
            classes.draw_each(ax, panels_of[col])
        elif classes is not None:
            classes.draw(ax, panels_of[col], True)
        else:
            here = {(ln.run, ln.flow): ln for ln in panels_of.get(col, [])}
            for i, fl in enumerate(flows):
                lab = flow_label(fl.info, fl.flow, fl.sizes)
                lab = f"{names[fl.run]}: {lab}" if len(runs) > 1 else lab
                ln = here.get((fl.run, fl.flow))
                if ln is not None:
                    ax.step(ln.t, ln.y, where="post", **_line(i), label=lab)
                elif ax is axes[0]:
                    ax.plot([], [], **_line(i), label=lab)  # every flow in the one legend
        if scale is None:
            ax.set_yticks(range(len(states)), states, fontsize=7)
    if classes is not None:
        handles, labels = classes.legend_entries()
        _legend(axes[0], whole_figure=True, handles=handles, labels=labels, title=CLASS_NOTE)
    else:
        _legend(axes[0], whole_figure=True)
    return fig


def rtt_timeseries(runs: Sequence, direction: str | None = None) -> Figure:
    """Probe RTT (ms) against send time; lost probes are not drawn."""
    fig, ax = _fig(_title(runs, "Probe RTT"), "time (s)", "RTT (ms)")
    dirs = shown_dirs(runs, direction)
    for run in runs:
        _need(run, "probes", "rtt_ts")
    probes = [_probe_names(run) for run in runs]
    style = RunLines(runs, dirs, [len(p) for p in probes])
    for j, (run, lab, names) in enumerate(zip(runs, run_labels(runs, dirs), probes)):
        for k, (f, name) in enumerate(names.items()):
            t = M.probe_table(run.tables, f)
            rtt = M._nullable_float(t, "rtt_ns")
            ts = t.column("t_send_ns").to_numpy().astype(np.float64)
            ok = ~np.isnan(rtt)
            i = style.index(j, k)
            ax.plot(ts[ok] / NS, rtt[ok] / 1e6, **_line(i, marker=_MARKERS[(i // 10) % 5], markersize=3),
                    label=f"{lab}, {name}" if name else lab)  # fmt: skip
    _legend(ax)
    return fig


# --------------------------------------------------------------------------- distributions
