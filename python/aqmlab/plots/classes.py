"""The per-flow figures of many runs, drawn by run group and flow class: a run group is the runs
that differ only by replication (``run_groups``), a flow class the flows that differ only by
their place in their group (``flow_class``: 'download cubic down'). Each group and class is one
line, the mean over the group's runs of the class's mean per flow, in a band from the lowest to
the highest run; the colour names the group, the line style the class, and the legend lists the
groups, then the classes (``FlowClasses``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from aqmlab.plots.artists import _MARKERS
from aqmlab.plots.common import flow_label, run_groups

CLASS_RUNS = 3
"""A per-flow figure of more runs than this draws flow classes; of fewer, every flow."""

CLASS_NOTE = "line: mean per flow, averaged over runs\nband: lowest to highest run"
"""The legend title of a figure drawn by flow class."""

BAND_ALPHA = 0.18

_CLASS_DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)), (0, (8, 2)), (0, (3, 1, 1, 1))]


def by_classes(runs: Sequence, by_class: bool | None) -> bool:
    """Whether a per-flow figure of ``runs`` draws classes: ``by_class``, by default when there
    are more than ``CLASS_RUNS`` runs."""
    return len(runs) > CLASS_RUNS if by_class is None else bool(by_class)


def flow_class(info: dict) -> str:
    """A flow's class: its label (or kind), congestion control and direction, without its place
    in its group (``flow_label``)."""
    return flow_label(info, 0)


@dataclass
class FlowLine:
    """One flow's series in one run: the run's index among the figure's runs, the flow, its
    flows-table row, the number of flows of each group of the run, times (s) and values."""

    run: int
    flow: int
    info: dict
    sizes: dict
    t: np.ndarray
    y: np.ndarray


def _on_grid(grid: np.ndarray, ln: FlowLine, step: bool) -> np.ndarray:
    """A flow's values at the times ``grid``: a step series holds each sample until the next (and
    has none past its last), a line is interpolated between samples; NaN outside its samples."""
    if not ln.t.size:
        return np.full(grid.size, np.nan)
    if step:
        at = np.searchsorted(ln.t, grid, side="right") - 1
        out = ln.y[np.clip(at, 0, None)].astype(np.float64)
        out[(at < 0) | (grid > ln.t[-1])] = np.nan
        return out
    return np.interp(grid, ln.t, ln.y, left=np.nan, right=np.nan)


def _mean(rows: np.ndarray) -> np.ndarray:
    """The mean of each column over its finite values; NaN where it has none (no warning)."""
    ok = np.isfinite(rows)
    n = ok.sum(axis=0)
    total = np.where(ok, rows, 0.0).sum(axis=0)
    return np.divide(total, n, out=np.full(total.shape, np.nan), where=n > 0)


def class_mean(lines: Sequence[FlowLine], step: bool) -> tuple[np.ndarray, ...]:
    """(times, mean, lowest, highest) of one group's flows of one class: per run the mean over
    its flows at each time, then the mean, least and greatest over the runs."""
    grid = np.unique(np.concatenate([ln.t for ln in lines]))
    per_run: dict[int, list] = {}
    for ln in lines:
        per_run.setdefault(ln.run, []).append(_on_grid(grid, ln, step))
    runs = np.array([_mean(np.array(v)) for v in per_run.values()])
    return grid, _mean(runs), np.fmin.reduce(runs, axis=0), np.fmax.reduce(runs, axis=0)


class FlowClasses:
    """The groups and classes of a figure's flows, their styles and their legend entries."""

    def __init__(self, runs: Sequence, dirs: Sequence[str] | None, lines: Sequence[FlowLine]) -> None:
        groups = run_groups(runs, dirs)
        self.names = list(groups)
        self.sizes = [len(idx) for idx in groups.values()]
        self.group_of = {i: g for g, idx in enumerate(groups.values()) for i in idx}
        self.classes = list(dict.fromkeys(flow_class(ln.info) for ln in lines))

    def _group_style(self, g: int) -> dict:
        st = {"color": f"C{g % 10}"}
        if g >= 10:  # colours repeat: a marker tells the groups apart
            st.update(marker=_MARKERS[(g // 10 - 1) % len(_MARKERS)], markevery=0.1, markersize=3)
        return st

    def _class_style(self, c: int) -> dict:
        return {
            "linestyle": _CLASS_DASHES[c % len(_CLASS_DASHES)],
            "linewidth": 1.2 + 0.6 * (c // len(_CLASS_DASHES)),
        }

    def style(self, ln: FlowLine) -> dict:
        return {
            **self._group_style(self.group_of[ln.run]),
            **self._class_style(self.classes.index(flow_class(ln.info))),
        }

    def draw(self, ax, lines: Sequence[FlowLine], step: bool) -> None:
        """Per group and class, the mean line in its band (``class_mean``)."""
        mine: dict[tuple[int, str], list[FlowLine]] = {}
        for ln in lines:
            mine.setdefault((self.group_of[ln.run], flow_class(ln.info)), []).append(ln)
        for (g, _), part in sorted(mine.items(), key=lambda kv: (kv[0][0], self.classes.index(kv[0][1]))):
            t, mean, lo, hi = class_mean(part, step)
            st = self.style(part[0])
            where = {"step": "post"} if step else {}
            ax.fill_between(t, lo, hi, color=st["color"], alpha=BAND_ALPHA, linewidth=0, **where)
            if step:
                ax.step(t, mean, where="post", **st)
            else:
                ax.plot(t, mean, **st)

    def draw_each(self, ax, lines: Sequence[FlowLine]) -> None:
        """Every flow as a thin step line in its group's colour and class's style (for values with
        no mean, such as a controller's state)."""
        for ln in lines:
            ax.step(ln.t, ln.y, where="post", **{**self.style(ln), "linewidth": 0.6}, alpha=0.5)

    def legend_entries(self) -> tuple[list, list[str]]:
        """The groups (their colour and band, how many runs) and then the classes (their style)."""
        handles: list = [
            (
                Patch(color=self._group_style(g)["color"], alpha=BAND_ALPHA * 2),
                Line2D([], [], **self._group_style(g)),
            )
            for g in range(len(self.names))
        ]
        labels = [f"{n} ({k} run{'s' if k > 1 else ''})" for n, k in zip(self.names, self.sizes)]
        handles += [Line2D([], [], color="0.3", **self._class_style(c)) for c in range(len(self.classes))]
        return handles, labels + self.classes
