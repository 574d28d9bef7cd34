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

import json
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Ellipse
from matplotlib.path import Path as MplPath
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from aqmlab import api, columns, files, store
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
        raise M.MissingTableError(
            f"run '{run.run_id}' has no '{table}' table ({missing_reason(run, table)}); figure '{fig}' needs it"
        )
    return t


def missing_reason(run, table: str) -> str:
    """Why a run has no ``table``, and how to record it."""
    level = (run.meta.get("record") or {}).get("level", "?")
    need = next(t["level"] for t in store.LAYOUT if t["name"] == table)
    low = level in api.LEVELS and api.LEVELS.index(level) < api.LEVELS.index(need)
    sweep_dir = getattr(run, "sweep_dir", None)
    if sweep_dir is None:
        return f"recording level '{level}'" + (f"; record.level = '{need}' records it" if low else "")
    steps = [f"record.level = '{need}' in its [set]"] if low else []
    steps += ["--keep-packets"] if table == "packets" else []
    why = f"sweep '{store.sweep_name(str(sweep_dir))}' did not store it"
    if not steps:
        return why
    return f"{why}: rerun it with {' and '.join(steps)} and a new --out (runs already complete are not recomputed)"


def _row(run) -> dict:
    return flatten_summary(run.summary or {}, run.meta)


def shown_dirs(runs: Sequence, direction: str | None = None) -> list[str]:
    """The directions figures of ``runs`` show: ``direction`` ('up', 'down', 'both'), by default
    those where the runs' load is (``columns.shown_dirs``)."""
    return columns.shown_dirs(direction, [_row(r) for r in runs])


def _link_dir(run) -> dict[str, str]:
    """Each link (hop) of the run -> its direction."""
    return store.link_dirs(run.tables)


def _hops(run, dirs: Sequence[str]) -> list[str]:
    """The run's hops in the directions ``dirs``, in path order."""
    ld = _link_dir(run)
    return [h for h in M.directions(_tables(run), run.meta) if ld.get(h, h) in dirs]


def qdisc_label(run, dirs: Sequence[str] | None = None) -> str:
    """'down=codel up=pfifo' from the summary (or the scenario); every hop by name for a path
    of hops ('router=fq_codel modem=pfifo cmts=pfifo'); only the links of ``dirs`` when given."""
    parts = []
    links = (run.summary or {}).get("links") or {}
    ld = _link_dir(run)
    for d in links or ("down", "up"):
        if dirs is not None and ld.get(d, d) not in dirs:
            continue
        q = (links.get(d) or {}).get("qdisc") or M.qdisc_config(run.meta, d).get("name")
        if q:
            parts.append(f"{d}={q}")
    return " ".join(parts)


def _qdisc_short(run, dirs: Sequence[str] | None = None) -> str:
    """'codel' when every hop (of ``dirs``) runs the same discipline, else 'down=pie up=pfifo'."""
    qd = qdisc_label(run, dirs)
    names = {p.split("=", 1)[1] for p in qd.split()}
    return names.pop() if len(names) == 1 else qd


def _qdisc_dirs(runs: Sequence, dirs: Sequence[str]) -> list[str]:
    """The directions whose discipline a legend names: the shown ones, and any other whose
    discipline differs between ``runs`` (so that runs differing in it are told apart)."""
    varying = [d for d in columns.DIRECTIONS if len({qdisc_label(r, [d]) for r in runs}) > 1]
    return [d for d in columns.DIRECTIONS if d in dirs or d in varying]


def _params(run) -> dict:
    return {str(k): v for k, v in (run.meta.get("params") or {}).items()}


def _is_qdisc_key(key: str) -> bool:
    return key in ("qdisc", "up_qdisc") or key.endswith((".qdisc", ".qdisc.kind"))


def varying_params(runs: Sequence) -> list[str]:
    """The grid keys (meta['params']) whose values differ between ``runs``, in first-seen order;
    keys naming the discipline are left out (the qdisc is always shown)."""
    keys: dict[str, set] = {}
    for r in runs:
        for k in _params(r):
            keys.setdefault(k, set())
    for k in keys:
        keys[k] = {json.dumps(_params(r).get(k), sort_keys=True, default=str) for r in runs}
    return [k for k, vals in keys.items() if len(vals) > 1 and not _is_qdisc_key(k)]


def short_key(key: str, keys: Sequence[str] = ()) -> str:
    """'topology.down.rate' -> 'rate' (more segments when another key ends the same way)."""
    parts = key.removeprefix("params.").split(".")
    for n in range(1, len(parts) + 1):
        tail = ".".join(parts[-n:])
        if not any(o != key and (o == tail or o.endswith("." + tail)) for o in keys):
            return tail
    return key


def _fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def run_labels(runs: Sequence, dirs: Sequence[str] | None = None) -> list[str]:
    """Readable legend labels for ``runs``, one each: the discipline (of the directions ``dirs``
    and any whose discipline differs, ``_qdisc_dirs``; all when None), then the grid values that
    differ between the runs ('pie, rate=10Mbps'), then the scenario and the seed only where
    they tell runs apart. Never a run id unless two runs are otherwise identical."""
    runs = list(runs)
    vary = varying_params(runs)
    qdirs = None if dirs is None else _qdisc_dirs(runs, dirs)
    labels = []
    for r in runs:
        parts = [_qdisc_short(r, qdirs)]
        parts += [f"{short_key(k, vary)}={_fmt_value(_params(r).get(k, '-'))}" for k in vary]
        labels.append(", ".join(parts))
    if len(set(labels)) < len(labels):
        scen = [(r.meta.get("scenario") or {}).get("name") or r.meta.get("name") or "?" for r in runs]
        if len(set(scen)) > 1:
            labels = [f"{s}: {lab}" for s, lab in zip(scen, labels)]
    if len(set(labels)) < len(labels):
        seeds = [r.meta.get("seed") for r in runs]
        if len(set(map(str, seeds))) > 1:
            labels = [f"{lab}, seed {s}" for lab, s in zip(labels, seeds)]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} [{r.run_id[-8:]}]" for lab, r in zip(labels, runs)]
    return labels


def flow_label(info: dict, flow: int, group_sizes: dict | None = None) -> str:
    """A flow by what it is: its label (the scenario's ``label``, else kind and group), its
    congestion control and direction, and its place in its group ('bulk cubic down',
    'tcp1 #2 ledbat down')."""
    lab = info.get("label") or info.get("kind") or "flow"
    grp = info.get("group")
    if group_sizes and grp is not None and group_sizes.get(grp, 1) > 1:
        lab += f" #{info.get('_rank', flow)}"
    extra = [x for x in (info.get("cc"), info.get("direction")) if x]
    return " ".join([lab, *extra])


# Line styles: 10 colours x 4 dash patterns (x 5 markers) before anything repeats.
_COLOURS = [f"C{i}" for i in range(10)]
_DASHES = ["-", "--", ":", "-."]
_MARKERS = ["o", "s", "^", "D", "v"]


def style(i: int) -> dict:
    """The i-th line's colour, line style and marker; no combination repeats before 200 lines
    (colour changes fastest, then the dash pattern, then the marker)."""
    return {
        "color": _COLOURS[i % 10],
        "linestyle": _DASHES[(i // 10) % 4],
        "marker": _MARKERS[(i // 40) % 5],
    }


def _line(i: int, **kw) -> dict:
    """Keyword arguments of the i-th line plot (markers only from the 41st line)."""
    st = style(i)
    if i < 40:
        st.pop("marker")
    else:
        st["markevery"] = 0.1
        st["markersize"] = 3
    return {**st, **kw}


def _dots(i: int, **kw) -> dict:
    """Keyword arguments of the i-th scatter series: colour, then marker shape."""
    st = style(i)
    return {"color": st["color"], "marker": _MARKERS[(i // 10) % 5], "linestyle": "none", **kw}


class PixelDots(Line2D):
    """A scatter series (``_dots``) that draws one marker per pixel its points fall on in a
    raster image (PNG); a vector one (SVG, PDF) has them all.

    The Agg renderer stamps a series' marker, rasterised once, at each point's display
    position rounded to a whole pixel (``floor(x + 0.5)``, y likewise from the top), so all
    points of a pixel land on the same spot. At draw time, with the axes laid out, the points
    are mapped to their pixels and one point per pixel is kept; a point within ``EDGE`` of a
    pixel of a rounding boundary is always kept (the renderer's own arithmetic might round it
    the other way). The pixels marked are the renderer's; what differs from drawing every
    point is only the shading at a dot's antialiased rim, where the same stamp blended twice
    is a little darker than once. A million packets at 120 dpi fall on some 10^5 pixels."""

    EDGE = 1e-6

    def __init__(self, *args, **kw) -> None:
        super().__init__(*args, **kw)
        self._kept: tuple[bytes, np.ndarray] | None = None

    def draw(self, renderer) -> None:
        if not isinstance(renderer, RendererAgg):  # a vector file keeps every point
            return super().draw(renderer)
        x, y = self.get_xdata(orig=False), self.get_ydata(orig=False)
        where = self.get_transform().get_affine().get_matrix().tobytes()
        if self._kept is None or self._kept[0] != where:  # a figure is drawn twice to lay it out
            xy = self.get_transform().transform(np.column_stack([x, y]))
            self._kept = where, _one_per_pixel(xy[:, 0], xy[:, 1], self.EDGE)
        keep = self._kept[1]
        self.set_data(x[keep], y[keep])
        try:
            super().draw(renderer)
        finally:
            self.set_data(x, y)


def _one_per_pixel(x: np.ndarray, y: np.ndarray, edge: float) -> np.ndarray:
    """The indices of the display positions (x, y) that ``PixelDots`` draws: one per whole
    pixel (any one: they draw the same), every one within ``edge`` of a rounding boundary, no
    non-finite one (the renderer skips those)."""
    idx = np.flatnonzero(np.isfinite(x) & np.isfinite(y))
    if not idx.size:
        return idx
    x, y = x[idx] + 0.5, y[idx] + 0.5
    px, py = np.floor(x), np.floor(y)
    fx, fy = x - px, y - py
    near = (fx < edge) | (fx > 1 - edge) | (fy < edge) | (fy > 1 - edge)
    ix, iy = (px - px.min()).astype(np.int64), (py - py.min()).astype(np.int64)
    key = ix * (int(iy.max()) + 1) + iy
    pick = np.full(int(key.max()) + 1, -1, dtype=np.int64)
    pick[key] = np.arange(key.size)  # for a pixel hit several times, any one of its points
    chosen = np.zeros(key.size, dtype=bool)
    chosen[pick[pick >= 0]] = True
    return idx[chosen | near]


class BestLegend(Legend):
    """A legend at ``loc="best"`` placed where matplotlib's own search puts it, found with less
    work on series of many points.

    Matplotlib (``Legend._find_best_position``) tries the nine places in order and takes the
    first of least badness: per line, its vertices strictly inside the box plus 1 if the line's
    path meets the box; plus the scatter offsets inside and the boxes of patches and texts
    overlapping it. It counts every vertex of every line for each place, at each layout pass.
    Here a line's segments lying wholly more than ``MARGIN`` display pixels left or right of a
    place (both ends beyond it on the same side) are left out of that place's test: such a
    segment meets no box and has no vertex in it, also in floating point (the margin is some
    10^12 times the rounding of coordinates of a few thousand pixels). What remains is the
    contiguous run of the path from the first segment kept to the last, whose vertices keep
    their order (a path visits its segments in order), and matplotlib's own ``count_contains``
    and ``intersects_bbox`` count on it. A line with codes, non-finite vertices or fewer than
    two vertices is counted whole. For a time series the run is the part of the axes' width
    the box spans."""

    MARGIN = 1.0

    def _find_best_position(self, width, height, renderer):
        bboxes, lines, offsets = self._auto_legend_data(renderer)
        box = Bbox.from_bounds(0, 0, width, height)
        parts = [_LineParts(p) for p in lines]
        best = None
        for idx in range(1, len(self.codes)):
            l, b = self._get_anchored_bbox(idx, box, self.get_bbox_to_anchor(), renderer)
            place = Bbox.from_bounds(l, b, width, height)
            badness = place.count_contains(offsets) + place.count_overlaps(bboxes)
            for part in parts:
                run = part.near(place.x0 - self.MARGIN, place.x1 + self.MARGIN)
                badness += place.count_contains(run.vertices) + run.intersects_bbox(place, filled=False)
            if best is None or badness < best[0]:
                best = badness, (l, b)
            if badness == 0:
                break
        return best[1]


class _LineParts:
    """The vertices of one line's path (display coordinates) and, for an x range, the
    contiguous run of them that a box spanning it can meet (``BestLegend``)."""

    def __init__(self, path: MplPath) -> None:
        self.whole = path
        v = self.vertices = path.vertices
        cut = path.codes is None and len(v) >= 2 and np.isfinite(v).all()
        self.x = np.ascontiguousarray(v[:, 0]) if cut else None
        self._runs: dict[tuple[float, float], MplPath] = {}

    def near(self, lo: float, hi: float) -> MplPath:
        """The path from the first to the last segment not wholly left of ``lo`` nor wholly
        right of ``hi``; the whole path when it cannot be cut."""
        if self.x is None:
            return self.whole
        if (lo, hi) not in self._runs:
            left, right = self.x < lo, self.x > hi
            kept = np.flatnonzero(~((left[:-1] & left[1:]) | (right[:-1] & right[1:])))
            run = self.vertices[kept[0] : kept[-1] + 2] if kept.size else self.vertices[:0]
            self._runs[lo, hi] = MplPath(run)
        return self._runs[lo, hi]


def _title(runs: Sequence, what: str, dirs: Sequence[str] | None = None) -> str:
    """The scenario(s), what is drawn (for the directions ``dirs`` of a link figure) and every
    run's disciplines."""
    if dirs is not None:
        what = f"{what} ({' and '.join(dirs)} link{'s' if len(dirs) > 1 else ''})"
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
    """The axes' legend (beside them for many lines), the figure's last touch: its texts, from
    run, flow and sweep names, are set literal (a ``$`` in a name is no TeX)."""
    handles, _ = ax.get_legend_handles_labels()
    if len(handles) > 8:
        # many lines: the legend goes beside the axes, never over the data
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=math.ceil(len(handles) / 30))
    elif handles:
        _, labels = ax.get_legend_handles_labels()
        ax.legend_ = BestLegend(ax, handles, labels, fontsize=7, loc="best")
        ax.legend_._remove_method = ax._remove_legend
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.plot([], [], label="no data")
        ax.legend(fontsize=7)
    for t in ax.figure.findobj(Text):
        t.set_parse_math(False)


def metric_value(run, name: str) -> float | None:
    """A per-run scalar: a flattened summary column (store.RUN_COLUMNS, e.g.
    ``queue_delay_p95_ms``, ``utilization``, ``goodput_mbps_total``, ``probe_induced_mean_ms``)
    or ``enorm`` (E[Q]/Q_max of the down bottleneck; ``up_enorm`` the up one's), ``tcp_share``
    (share of delivered bytes of kind tcp)."""
    if name.removeprefix("up_") == "enorm":
        d = "up" if name.startswith("up_") else "down"
        return M.normalized_mean_backlog(
            _tables(run), run.meta, (run.summary.get("bottleneck") or {}).get(d, d)
        )
    if name == "tcp_share":
        return M.class_share(_tables(run), "kind", "tcp")
    row = _row(run)
    if name not in row:
        raise KeyError(
            f"unknown metric '{name}'; known: {', '.join(sorted(row))}, enorm, up_enorm, tcp_share"
        )
    v = row[name]
    return None if v is None else float(v)


def _metric_columns(metric: str | None, default: str, dirs: Sequence[str]) -> list[str]:
    """The columns a figure draws: ``metric`` as given, or the link metric ``default`` for each
    shown direction."""
    return [metric] if metric is not None else [columns.in_direction(default, d) for d in dirs]


def _metric_label(cols: Sequence[str], dirs: Sequence[str]) -> str:
    return columns.label(cols[0]) if len(cols) == 1 else columns.label_dirs(cols[0], dirs)


def group_value(run, key: str, dirs: Sequence[str] | None = None) -> str:
    """A run's group for ``key``: meta['params'][key], else for ``qdisc`` the discipline of the
    directions ``dirs`` (all when None; ``_qdisc_short``), else a flattened summary column
    (``up_qdisc``, ``seed``...), else the scenario's top-level value."""
    params = run.meta.get("params") or {}
    if key in params:
        return str(params[key])
    if key == "qdisc":
        return _qdisc_short(run, dirs)
    row = _row(run)
    if row.get(key) is not None:
        return str(row[key])
    v = (run.meta.get("scenario") or {}).get(key)
    return str(v) if v is not None else "?"


# --------------------------------------------------------------------------- time series


def _warmup(run, warmup_s: float | None) -> float:
    """The warm-up a figure of ``run`` skips: ``warmup_s``, else the one its summary was made with
    (so that a figure and the run's table cover the same window)."""
    if warmup_s is not None:
        return warmup_s
    return float((getattr(run, "summary", None) or {}).get("warmup_s") or 0.0)


def delay_timeseries(runs: Sequence, direction: str | None = None, warmup_s: float | None = None) -> Figure:
    """Queueing (sojourn) delay of each transmitted packet against its enqueue time, from the
    warm-up on (``_warmup``), at the hops of the shown direction(s)."""
    shown = shown_dirs(runs, direction)
    fig, ax = _fig(_title(runs, "Per-packet queueing delay", shown), "time (s)", "queueing delay (ms)")
    i = 0
    for run, lab in zip(runs, run_labels(runs, shown)):
        _need(run, "packets", "delay_ts")
        dirs = _hops(run, shown)
        for d in dirs:
            t_out, delay = M.sojourn_times_ns(_tables(run), run.meta, d, _warmup(run, warmup_s))
            t_in = t_out - delay
            label = f"{lab}, {d}" if len(dirs) > 1 else lab
            ax.add_line(PixelDots(t_in / NS, delay / 1e6, **_dots(i, markersize=2), label=label))
            i += 1
    ax.autoscale_view()
    _legend(ax)
    return fig


def backlog_timeseries(runs: Sequence, direction: str | None = None, unit: str = "bytes") -> Figure:
    """Queue backlog over time (queue samples; the exact step function from packets if no samples)
    at the hops of the shown direction(s)."""
    shown = shown_dirs(runs, direction)
    ylabel = "backlog (bytes)" if unit == "bytes" else "backlog (packets)"
    fig, ax = _fig(_title(runs, "Queue backlog", shown), "time (s)", ylabel)
    i = 0
    for run, lab in zip(runs, run_labels(runs, shown)):
        if run.tables.get("queue") is None and run.tables.get("packets") is None:
            _need(run, "queue", "backlog_ts")
        dirs = _hops(run, shown)
        for d in dirs:
            t, v, exact = M.backlog_steps(_tables(run), run.meta, d, unit)
            t = np.r_[t, run.meta["duration_ns"]]
            v = np.r_[v, v[-1] if v.size else 0]
            name = f"{lab}, {d}" if len(dirs) > 1 else lab
            ax.step(t / NS, v, where="post", **_line(i), label=f"{name}{'' if exact else ' (sampled)'}")
            i += 1
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


def goodput_timeseries(runs: Sequence, smoothing: int = 1, direction: str | None = None) -> Figure:
    """Per-flow goodput (Mbit/s) between consecutive flow_series samples (delivered bytes)."""
    fig, ax = _fig(_title(runs, "Per-flow goodput"), "time (s)", "goodput (Mbit/s)")
    i = 0
    for run, rlab in zip(runs, run_labels(runs, shown_dirs(runs, direction))):
        for f, info, tab, sizes in _flow_series_by_flow(run, "goodput_ts"):
            if info.get("kind") in M.PROBE_KINDS:
                continue
            t = tab.column("t_ns").to_numpy().astype(np.float64)
            d = tab.column("delivered_bytes").to_numpy().astype(np.float64)
            if t.size < 2:
                continue
            rate = np.diff(d) * 8 / (np.diff(t) / NS) / 1e6
            if smoothing > 1:
                rate = np.convolve(rate, np.ones(smoothing) / smoothing, mode="same")
            lab = flow_label(info, f, sizes)
            ax.plot(t[1:] / NS, rate, **_line(i), label=f"{rlab}: {lab}" if len(runs) > 1 else lab)
            i += 1
    _legend(ax)
    return fig


def cwnd_timeseries(runs: Sequence, direction: str | None = None) -> Figure:
    """TCP congestion window (bytes) of each TCP flow."""
    fig, ax = _fig(_title(runs, "TCP congestion window"), "time (s)", "cwnd (bytes)")
    i = 0
    for run, rlab in zip(runs, run_labels(runs, shown_dirs(runs, direction))):
        for f, info, tab, sizes in _flow_series_by_flow(run, "cwnd_ts"):
            cw = tab.column("cwnd_bytes").to_numpy().astype(np.float64)
            if info.get("kind", "tcp") != "tcp" or not cw.any():
                continue
            t = tab.column("t_ns").to_numpy().astype(np.float64)
            lab = flow_label(info, f, sizes)
            ax.step(t / NS, cw, where="post", **_line(i), label=f"{rlab}: {lab}" if len(runs) > 1 else lab)
            i += 1
    _legend(ax)
    return fig


CC_PANELS = (
    ("cc_alpha", "alpha", 1.0),
    ("cc_bw_bps", "bandwidth est.\n(Mbit/s)", 1e-6),
    ("cc_pacing_gain", "pacing gain", 1.0),
    ("cc_state", "state", None),
    ("cc_min_rtt_ns", "min RTT (ms)", 1e-6),
    ("cc_w_max_bytes", "W_max (kB)", 1e-3),
)
"""The panels of ``cc_ts``: flow_series column, axis label, scale (None: state names)."""


def _cc_values(tab, col: str, scale: float | None, states: list[str]) -> np.ndarray:
    """A controller-state column as floats, NaN for null; a state is its place in ``states``,
    which gains the names in the order they first occur."""
    if scale is not None:
        return M._nullable_float(tab, col) * scale
    names = tab.column(col).to_pylist()
    states += [v for v in dict.fromkeys(names) if v is not None and v not in states]
    return np.array([np.nan if v is None else states.index(v) for v in names], dtype=np.float64)


def cc_timeseries(runs: Sequence, direction: str | None = None) -> Figure:
    """The congestion controllers' own state per TCP flow, one panel per quantity that a flow
    has (flow_series' ``cc_*`` columns): DCTCP's and Prague's alpha, BBR's bandwidth estimate,
    pacing gain and state (the states upwards in the order they first occur), the controller's
    minimum RTT, CUBIC's W_max. Each flow keeps its line style across the panels."""
    series = []  # (label, times in s, {column: values})
    states: list[str] = []
    for run, rlab in zip(runs, run_labels(runs, shown_dirs(runs, direction))):
        for f, info, tab, sizes in _flow_series_by_flow(run, "cc_ts"):
            vals = {c: _cc_values(tab, c, k, states) for c, _, k in CC_PANELS if c in tab.column_names}
            vals = {c: v for c, v in vals.items() if not np.isnan(v).all()}
            if vals:
                lab = flow_label(info, f, sizes)
                t = tab.column("t_ns").to_numpy().astype(np.float64) / NS
                series.append((f"{rlab}: {lab}" if len(runs) > 1 else lab, t, vals))
    panels = [p for p in CC_PANELS if any(p[0] in v for _, _, v in series)] or [("", "controller state", 1.0)]
    fig, axes = plt.subplots(
        len(panels), 1, sharex=True, squeeze=False, figsize=(8, 1.2 + 1.6 * len(panels)), layout="constrained"
    )
    axes = axes[:, 0]
    axes[0].set_title(_title(runs, "Congestion-controller state"), fontsize=9)
    axes[-1].set_xlabel("time (s)")
    for ax, (col, ylabel, scale) in zip(axes, panels):
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        for i, (lab, t, vals) in enumerate(series):
            if col in vals:
                ax.step(t, vals[col], where="post", **_line(i), label=lab)
            elif ax is axes[0]:
                ax.plot([], [], **_line(i), label=lab)  # every flow in the one legend
        if scale is None:
            ax.set_yticks(range(len(states)), states, fontsize=7)
    _legend(axes[0])
    return fig


def _probe_names(run) -> dict[int, str]:
    """Probe flow id -> a readable name, empty when the run has one probe stream."""
    tabs = _tables(run)
    ids = list(M.probe_flows(tabs))
    if len(ids) <= 1:
        return {f: "" for f in ids}
    info: dict[int, dict] = {}
    if tabs.get("flows") is not None:
        info = {int(r["flow"]): r for r in tabs["flows"].to_pylist()}
    names = {f: (info.get(f) or {}).get("label") or "probe" for f in ids}
    if len(set(names.values())) < len(ids):
        ranks: dict[str, int] = {}
        for f in ids:
            ranks[names[f]] = ranks.get(names[f], 0) + 1
            names[f] = f"{names[f]} #{ranks[names[f]]}"
    return names


def rtt_timeseries(runs: Sequence, direction: str | None = None) -> Figure:
    """Probe RTT (ms) against send time; lost probes are not drawn."""
    fig, ax = _fig(_title(runs, "Probe RTT"), "time (s)", "RTT (ms)")
    i = 0
    for run, lab in zip(runs, run_labels(runs, shown_dirs(runs, direction))):
        _need(run, "probes", "rtt_ts")
        for f, name in _probe_names(run).items():
            t = M.probe_table(_tables(run), f)
            rtt = M._nullable_float(t, "rtt_ns")
            ts = t.column("t_send_ns").to_numpy().astype(np.float64)
            ok = ~np.isnan(rtt)
            ax.plot(ts[ok] / NS, rtt[ok] / 1e6, **_line(i, marker=_MARKERS[(i // 10) % 5], markersize=3),
                    label=f"{lab}, {name}" if name else lab)  # fmt: skip
            i += 1
    _legend(ax)
    return fig


# --------------------------------------------------------------------------- distributions


def delay_cdf(runs: Sequence, direction: str | None = None, warmup_s: float | None = None) -> Figure:
    """CDF of the per-packet queueing delay, one curve per run and hop of the shown
    direction(s), from the warm-up on (``_warmup``)."""
    shown = shown_dirs(runs, direction)
    fig, ax = _fig(_title(runs, "Queueing delay CDF", shown), "queueing delay (ms)", "cumulative probability")
    i = 0
    for run, lab in zip(runs, run_labels(runs, shown)):
        _need(run, "packets", "delay_cdf")
        dirs = _hops(run, shown)
        for d in dirs:
            x, f = M.queue_delay_cdf_ms(_tables(run), run.meta, d, _warmup(run, warmup_s))
            if x.size:
                name = f"{lab}, {d}" if len(dirs) > 1 else lab
                ax.step(np.r_[0, x], np.r_[0, f], where="post", **_line(i), label=name)
                i += 1
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
    i = 0
    for run, lab in zip(runs, run_labels(runs, shown_dirs(runs, direction))):
        _need(run, "probes", "rtt_cdf")
        for f, name in _probe_names(run).items():
            fn = M.induced_latency_ms if induced else M.probe_rtt_ms
            x, c = M.cdf(fn(_tables(run), f, _warmup(run, warmup_s)))
            if x.size:
                ax.step(x, c, where="post", **_line(i), label=f"{lab}, {name}" if name else lab)
                i += 1
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
    dirs = shown_dirs(runs, direction)
    cols = _metric_columns(metric, "queue_delay_p95_ms", dirs)
    keys, names, vals = _grouped_values(runs, cols, _by_arg(by, group_by), direction)
    fig, ax = _group_fig(runs, cols, keys, dirs)
    nonempty = [(n, v) for n, v in zip(names, vals) if v]
    if nonempty:
        ax.boxplot([v for _, v in nonempty], tick_labels=[n for n, _ in nonempty])
        ax.plot(
            [],
            [],
            color="C1",
            label=f"median over runs (box: quartiles); n = {sum(len(v) for _, v in nonempty)} runs",
        )
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
    dirs = shown_dirs(runs, direction)
    cols = _metric_columns(metric, "queue_delay_p50_ms", dirs)
    keys, names, vals = _grouped_values(runs, cols, _by_arg(by, group_by), direction)
    fig, ax = _group_fig(runs, cols, keys, dirs)
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
