"""Flow metrics: goodput and delivered bytes per flow, completion times, Jain's index and class
shares."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from aqmlab.metrics.base import (
    NS,
    _col,
    _float,
    _has,
    _nullable_float,
    _strcol,
    _window,
)
from aqmlab.runtables import RunTables


def _flow_index(f: pa.Table) -> dict[int, int]:
    """The row of each flow id in the ``flows`` table."""
    return {int(i): k for k, i in enumerate(f.column("flow").to_pylist())}


def _flow_pos(tables: dict, flow: int) -> int:
    rt = RunTables.of(tables)
    k = rt.built(("flow index",), lambda: _flow_index(rt.need("flows"))).get(int(flow))
    if k is None:
        raise KeyError(f"flow {flow} not in the flows table")
    return k


def _flow_row(tables: dict, flow: int) -> dict:
    return tables["flows"].slice(_flow_pos(tables, flow), 1).to_pylist()[0]


def _series_of_flows(fs: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``flow_series`` sorted by (flow, t): times, delivered bytes, and the flow ids present with
    the first row of each (ascending; the next id's first row, or the end, closes a block)."""
    flow = _col(fs, "flow", np.int64)
    t = _col(fs, "t_ns", np.int64)
    order = np.lexsort((t, flow))
    flow, t = flow[order], t[order]
    d = _col(fs, "delivered_bytes", np.float64)[order]
    ids, starts = np.unique(flow, return_index=True)
    return t, d, ids, starts


def _sample_blocks(
    tables: RunTables, flows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_series_of_flows`` of the run's ``flow_series`` (built once per run) and, per flow id of
    ``flows``, its block of samples [a, b) in that order (a = b = 0 for a flow without
    samples)."""
    t, d, ids, starts = tables.built(("flow series",), lambda: _series_of_flows(tables["flow_series"]))
    k = np.searchsorted(ids, flows)
    found = k < ids.size
    found[found] = ids[k[found]] == flows[found]
    a, b = np.zeros((2, flows.size), np.int64)
    a[found], b[found] = starts[k[found]], np.r_[starts[1:], t.size][k[found]]
    return t, d, a, b


def _optional_ns(f: pa.Table, name: str) -> np.ndarray:
    """A nullable time column of ``flows`` as float64, NaN for null (all NaN in runs stored
    before the column existed)."""
    return _nullable_float(f, name) if name in f.column_names else np.full(f.num_rows, np.nan)


class _FlowSamples:
    """``flow_series`` arranged for questions asked of every flow at once: the samples of each
    ``flows`` row form one block (row ``k``: ``first[k]`` to ``first[k] + count[k]``), in time
    order; ``row`` is each sample's ``flows`` row."""

    def __init__(self, tables: RunTables):
        f = tables["flows"]
        t, d, a, b = _sample_blocks(tables, _col(f, "flow", np.int64))
        self.count = b - a
        self.first = np.cumsum(self.count) - self.count
        self.row = np.repeat(np.arange(f.num_rows), self.count)
        pick = a[self.row] + np.arange(self.row.size) - self.first[self.row]
        self.t, self.d = t[pick], d[pick]

    def before(self, x: np.ndarray, inclusive: bool = False) -> np.ndarray:
        """Per row k, its samples at times < x[k] (<= with ``inclusive``): a position within
        its block, as ``np.searchsorted(t, x, "right" if inclusive else "left")``."""
        x = np.broadcast_to(x, self.count.shape)[self.row]
        hit = self.t <= x if inclusive else self.t < x
        return np.bincount(self.row[hit], minlength=self.count.size)

    def value_at(self, at: int) -> np.ndarray:
        """Per row, the delivered bytes at the last sample <= ``at`` (0 before the first)."""
        i = self.before(np.int64(at), inclusive=True)
        return np.where(i > 0, self.d[np.maximum(self.first + i - 1, 0)] if self.d.size else 0.0, 0.0)


def _flow_windows(
    tables: dict, meta: dict, warmup_s: float, end_s: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(goodput in bit/s, NaN for None; delivered bytes) of every ``flows`` row, as
    ``goodput_bps`` and ``delivered_bytes`` define them; computed once per tables and window."""
    rt = RunTables.of(tables)
    rt.need("flows")
    key = ("flow windows", warmup_s, end_s, meta["duration_ns"])
    return rt.built(key, lambda: _compute_flow_windows(rt, meta, warmup_s, end_s))


def _compute_flow_windows(tables: RunTables, meta: dict, warmup_s: float, end_s: float | None):
    f, fs = tables["flows"], tables.get("flow_series")
    w, end = _window(meta, warmup_s if fs is not None else 0.0, end_s)
    t0 = np.maximum(w, _col(f, "start_ns", np.int64))
    done = _optional_ns(f, "completed_ns")
    finished = ~np.isnan(done)
    t1 = np.where(finished, np.nan_to_num(done), end).astype(np.int64)
    total = _col(f, "bytes_delivered", np.float64)
    gp = np.full(f.num_rows, np.nan)
    ok = t1 > t0
    gp[ok] = total[ok] * 8.0 * NS / (t1 - t0)[ok]
    if fs is None:
        return gp, _col(f, "bytes_delivered", np.int64)
    s = _FlowSamples(tables)
    delivered = np.rint(s.value_at(end) - s.value_at(w)).astype(np.int64)
    has = s.count > 0
    ia = s.before(t0)
    ib = np.minimum(s.count - 1, s.before(t1))
    ok = has & (ia < s.count) & (ib > ia)
    a, b = (s.first + ia)[ok], (s.first + ib)[ok]
    gp[has] = np.nan
    gp[ok] = (s.d[b] - s.d[a]) * 8.0 * NS / (s.t[b] - s.t[a])
    return gp, delivered


def goodput_bps(
    tables: dict, meta: dict, flow: int, warmup_s: float = 0.0, end_s: float | None = None
) -> float | None:
    """Goodput at the application (docs/metrics.md; goodbadwifi2015), bits per second, in the
    window [W, E] (E = ``end_s``, default the run's end T_end).

    With ``flow_series``: (D(t_b) - D(t_a)) * 8 / (t_b - t_a), D = ``delivered_bytes`` (payload
    delivered in order to the receiving application), t_a = first sample >= max(W, start_ns),
    t_b = the first sample >= ``completed_ns`` for a finished finite transfer, else >= E (the
    last sample when none is). A flow without samples, or any flow without the table
    (recording level ``summary``: only the whole-run total exists, so the warm-up cannot be
    applied): ``bytes_delivered`` * 8 / (end - max(W, start_ns)) with end = ``completed_ns`` or
    E. None when the window is empty.
    """
    return _float(_flow_windows(tables, meta, warmup_s, end_s)[0][_flow_pos(tables, flow)])


def delivered_bytes(tables: dict, meta: dict, flow: int, warmup_s: float = 0.0) -> int:
    """Payload the flow delivered to its application in the run's window [W, T_end]: D(T_end) -
    D(W) from ``flow_series`` (D at the last sample <= t, 0 before the first), the same window as
    the links' utilisation; without ``flow_series`` (level ``summary``, no warm-up possible) the
    whole-run ``flows.bytes_delivered``."""
    return int(_flow_windows(tables, meta, warmup_s)[1][_flow_pos(tables, flow)])


def goodput_totals_mbps(
    tables: dict, meta: dict, warmup_s: float = 0.0, end_s: float | None = None
) -> dict[str, float | None]:
    """Aggregate goodput per direction and in total (Mbit/s): the payload every non-probe flow of
    that direction delivered in [W, E] (``delivered_bytes``; E = ``end_s``, default T_end) over
    E - W. One window for all flows and the links, so it never exceeds what the links carried;
    per-flow goodput (``goodput_bps``) is over each flow's own active part of the window and does
    not add up to this when flows start late or finish early."""
    w, end = _window(meta, warmup_s, end_s)
    if not _has(tables, "flow_series"):
        w = 0
    out: dict[str, float | None] = {"down": None, "up": None, "total": None}
    if not _has(tables, "flows") or end <= w:
        return out
    traffic = ~_probe_rows(tables)
    delivered = _flow_windows(tables, meta, w / NS, end_s)[1]
    direction = _strcol(tables, "flows", "direction")
    sums = {str(d): int(delivered[traffic & (direction == d)].sum()) for d in np.unique(direction[traffic])}
    for d, v in sums.items():
        out[d] = v * 8.0 * NS / (end - w) / 1e6
    if sums:
        out["total"] = sum(sums.values()) * 8.0 * NS / (end - w) / 1e6
    return out


def traffic_rows(tables: dict) -> np.ndarray:
    """The ``flows`` rows of the flows that are not probe streams, in table order (none without
    the table): the ``flows`` block of a run summary."""
    if not _has(tables, "flows"):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(~_probe_rows(tables))


def rows_column(tables: dict, column: str, rows: np.ndarray) -> list:
    """Column ``column`` of the ``flows`` rows ``rows`` as recorded (Python values)."""
    return tables["flows"].column(column).take(rows).to_pylist()


def rows_goodput_mbps(
    tables: dict, meta: dict, rows: np.ndarray, warmup_s: float = 0.0
) -> list[float | None]:
    """``goodput_bps`` of the ``flows`` rows ``rows``, in Mbit/s (all flows computed at once)."""
    return [
        None if math.isnan(g) else g / 1e6 for g in _flow_windows(tables, meta, warmup_s)[0][rows].tolist()
    ]


def rows_delivered_bytes(tables: dict, meta: dict, rows: np.ndarray, warmup_s: float = 0.0) -> list[int]:
    """``delivered_bytes`` of the ``flows`` rows ``rows``."""
    return [int(b) for b in _flow_windows(tables, meta, warmup_s)[1][rows].tolist()]


def rows_completion_s(tables: dict, rows: np.ndarray) -> list[float | None]:
    """``completion_time_s`` of the ``flows`` rows ``rows``."""
    return [_float(c) for c in _completion_times_s(tables)[rows].tolist()]


def completion_time_s(tables: dict, flow: int) -> float | None:
    """Completion (response) time of a finite TCP transfer: ``completed_ns - first_syn_ns``
    (transients2014); None when the flow did not complete or is not TCP."""
    return _float(_completion_times_s(tables)[_flow_pos(tables, flow)])


def _completion_times_s(tables: dict) -> np.ndarray:
    """``completion_time_s`` of every ``flows`` row, NaN for None (built once per run)."""
    rt = RunTables.of(tables)

    def build() -> np.ndarray:
        f = rt.need("flows")
        done, syn = (_optional_ns(f, c) for c in ("completed_ns", "first_syn_ns"))
        both = ~np.isnan(done) & ~np.isnan(syn)
        out = np.full(f.num_rows, np.nan)
        out[both] = (done[both].astype(np.int64) - syn[both].astype(np.int64)) / NS
        return out

    return rt.built(("completion times",), build)


def jain_index(values) -> float | None:
    """Jain's fairness index (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984): (sum x)^2 / (n * sum x^2).

    1 when all equal, 1/n when one value has everything; None for an empty or all-zero input.
    """
    x = np.asarray(list(values), dtype=np.float64)
    if x.size == 0:
        return None
    s2 = float((x * x).sum())
    return None if s2 == 0 else float(x.sum() ** 2 / (x.size * s2))


def class_share(
    tables: dict,
    by: str = "kind",
    cls: str = "tcp",
    quantity: str = "bytes_delivered",
    traffic_only: bool = False,
) -> float | None:
    """Share of a flow class in a per-flow quantity, e.g. lpcc2013's TCP% = delivered bytes
    of the best-effort TCP class / all delivered bytes. ``by`` is a ``flows`` column
    (``kind``, ``cc``, ``label``, ``group``...) and ``cls`` its value; ``traffic_only`` leaves
    the latency probes (``PROBE_KINDS``, e.g. the testbed's ping) out of the total. None when
    the total is 0.
    """
    rt = RunTables.of(tables)
    q = _col(rt.need("flows"), quantity, np.float64)
    key = rt.strings("flows", by)
    if traffic_only:
        keep = ~rt.isin("flows", "kind", PROBE_KINDS)
        key, q = key[keep], q[keep]
    total = q.sum()
    return float(q[key == str(cls)].sum() / total) if total > 0 else None


# Flow kinds that are latency probes (echoed round trips), not traffic: no goodput.
PROBE_KINDS = ("ping", "voip")


def _probe_rows(tables: dict) -> np.ndarray:
    """The ``flows`` rows that are probe streams (kind in PROBE_KINDS or present in ``probes``)."""
    rt = RunTables.of(tables)
    return rt.isin("flows", "kind", PROBE_KINDS) | np.isin(
        _col(rt["flows"], "flow", np.int64), probe_flows(tables)
    )


def probe_flows(tables: dict) -> list[int]:
    """Flow ids that appear in the probes table."""
    if not _has(tables, "probes") or tables["probes"].num_rows == 0:
        return []
    return [int(x) for x in RunTables.of(tables).flow_ids("probes")]
