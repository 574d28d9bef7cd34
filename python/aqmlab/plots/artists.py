"""How the figures draw: the line and marker styles, one dot per pixel (``PixelDots``), the
legend that takes matplotlib's own best place (``BestLegend``), the title and the axes."""

from __future__ import annotations

import json
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.legend import Legend
from matplotlib.legend_handler import HandlerTuple
from matplotlib.lines import Line2D
from matplotlib.path import Path as MplPath
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from aqmlab.plots.common import _is_qdisc_key, qdisc_label, run_groups

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


class RunLines:
    """The style index (``style``) of each line a figure draws for its runs. When the runs fall in
    groups that differ only by replication (``run_groups``; at most ten groups, one of several
    runs), a group keeps one colour and its runs' lines (each replication's, each hop's) differ in
    line style or marker: line ``k`` of run ``j`` is ``group + 10 * (its place in the group's
    lines)``. Otherwise the lines are numbered in the order they are drawn."""

    def __init__(self, runs: Sequence, dirs: Sequence[str] | None, counts: Sequence[int]) -> None:
        groups = list(run_groups(runs, dirs).values())
        self._at: dict[int, tuple[int, int]] | None = None
        if len(groups) <= len(_COLOURS) and any(len(g) > 1 for g in groups):
            self._at = {}
            for g, members in enumerate(groups):
                place = 0
                for j in members:
                    self._at[j] = (g, place)
                    place += counts[j]
        self._next = 0

    def index(self, run: int, line: int) -> int:
        """The index of line ``line`` of run ``run`` (the ``run``-th of the figure's runs)."""
        if self._at is not None:
            g, place = self._at[run]
            return g + len(_COLOURS) * (place + line)
        self._next += 1
        return self._next - 1


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


TITLE_NAMES = 3
"""A title names at most this many scenarios, disciplines or parameter sets; more are counted."""


def _title(runs: Sequence, what: str, dirs: Sequence[str] | None = None) -> str:
    """The scenario(s), what is drawn (for the directions ``dirs`` of a link figure), every run's
    disciplines and its grid values other than the disciplines (each list counted past
    ``TITLE_NAMES``)."""
    if dirs is not None:
        what = f"{what} ({' and '.join(dirs)} link{'s' if len(dirs) > 1 else ''})"
    scen = sorted({(r.meta.get("scenario") or {}).get("name") or r.meta.get("name") or "?" for r in runs})
    qd = sorted({qdisc_label(r) for r in runs})
    grid = [
        {k: v for k, v in (r.meta.get("params") or {}).items() if not _is_qdisc_key(str(k))} for r in runs
    ]
    params = sorted({json.dumps(g, sort_keys=True) for g in grid if g})  # the disciplines are named above
    listed = lambda names, sep, many: sep.join(names) if len(names) <= TITLE_NAMES else f"{len(names)} {many}"
    t = f"{what} — {listed(scen, ', ', 'scenarios')}\nqdisc: {listed(qd, '; ', 'disciplines')}"
    if params:
        t += "\n" + listed(params, "; ", "parameter sets")
    return t


def _fig(title: str, xlabel: str, ylabel: str, figsize=(8, 4.5)):
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    ax.set_title(title, fontsize=9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


LEGEND_MOST = 30
"""The most entries a legend lists (one column beside the axes); the rest are counted."""

LEGEND_ROW_IN = 0.15
"""The height of a row of a 6-point legend, inches (0.143 drawn at 90 dpi, 0.130 at 120), and
``LEGEND_PAD_IN`` the rest of a legend beside the axes and the figure's edge; a figure is made
tall enough for its legend (``_fit_legend``)."""
LEGEND_PAD_IN = 0.35


def _fit_legend(ax, rows: int, whole_figure: bool) -> None:
    """Make the figure tall enough for a legend of ``rows`` rows beside the axes (which begins at
    the axes' top, under their title) or beside the whole figure (at its top)."""
    fig = ax.figure
    title = ax.get_title()
    above = 0.0 if whole_figure or not title else 0.17 * (title.count("\n") + 1) + 0.1
    need = LEGEND_ROW_IN * rows + LEGEND_PAD_IN + above
    if need > fig.get_figheight():
        fig.set_figheight(need)


def _legend(ax, whole_figure: bool = False, handles=None, labels=None, title: str | None = None) -> None:
    """The axes' legend, of their labelled lines or of ``handles`` and ``labels`` (beside them for
    many lines; beside the whole figure with ``whole_figure``, for stacked panels), the figure's
    last touch: its texts, from run, flow and sweep names, are set literal (a ``$`` in a name is
    no TeX)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if len(handles) > LEGEND_MOST:
        # more lines than a legend can name and leave room for the axes: the first ones, and a
        # count of the rest
        more = len(handles) - (LEGEND_MOST - 1)
        handles = [*handles[: LEGEND_MOST - 1], Line2D([], [], linestyle="none")]
        labels = [*labels[: LEGEND_MOST - 1], f"... and {more} more lines"]
    rows = len(handles) + (title.count("\n") + 1 if title else 0)
    opts = {
        "fontsize": 6,
        "title": title,
        "title_fontsize": 6,
        "handler_map": {tuple: HandlerTuple(ndivide=1)},
    }
    if len(handles) > 8 or (title and handles):
        _fit_legend(ax, rows, whole_figure)
    if len(handles) > 8 and whole_figure:
        # many lines for panels stacked on one time axis: one legend beside them all
        ax.figure.legend(handles, labels, loc="outside right upper", **opts)
    elif (len(handles) > 8 or title) and handles:
        # many lines: the legend goes beside the axes, never over the data
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), **opts)
    elif handles:
        ax.legend_ = BestLegend(ax, handles, labels, fontsize=7, loc="best")
        ax.legend_._remove_method = ax._remove_legend
    else:
        ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
        ax.plot([], [], label="no data")
        ax.legend(fontsize=7)
    for t in ax.figure.findobj(Text):
        t.set_parse_math(False)
