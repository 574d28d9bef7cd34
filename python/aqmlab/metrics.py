"""Metric definitions over the tables a run returns (docs/tables.md).

This module is the ONE place where aqmlab defines its metrics (docs/architecture.md, principle 6). Every
function takes the run's tables (``dict[str, pyarrow.Table]``) and its ``meta`` dict, works on
numpy arrays (vectorised), and documents the definition it implements and where it comes from.

Conventions
-----------
* Times in the tables are integer nanoseconds since the start of the run; the run ends at
  ``meta["duration_ns"]``.
* ``warmup_s``: every metric skips the first ``warmup_s`` seconds. The measured window is
  ``[W, T_end]`` with ``W = warmup_s * 1e9`` ns. How a row is assigned to the window is stated per
  metric (a packet's delay counts when it was *enqueued* in the window; a drop or transmission
  counts when ``t_out_ns`` is in the window; step functions are clipped to the window).
* Percentiles are numpy's default ("linear" interpolation between order statistics, i.e. type 7
  of Hyndman & Fan): the p50 of [0, 1, 2, 4] is 1.5.
* A *transmitted* packet is one whose outcome is ``sent`` or ``marked``. Packets that *entered*
  the queue are the transmitted ones plus the ones dropped from inside it (``head``,
  ``fat_flow`` and ``ack_filter`` drops); ``overlimit`` and ``early`` drops were refused at enqueue and never
  occupied the buffer.

Sources: docs/metrics.md (every summary key and catalog column), docs/study-setups.md section 2 (transients2014:
spike duration, group response time), section 3 (lpcc2013: TCP%, E[Q]/Q_max), section 4
(goodbadwifi2015: induced latency, goodput at the application).
"""

from __future__ import annotations

import functools
import json
import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aqmlab import _core

NS = 1_000_000_000
DIRECTIONS = ("down", "up")
TRANSMITTED = ("sent", "marked")
# The drop reasons as the core declares them (queue/mod.rs DropReason), in outcome-code order.
_REASONS = json.loads(_core.drop_reasons())
DROP_REASONS = tuple(r["name"] for r in _REASONS)
# Decided by a queue (every reason but random loss on the wire).
QUEUE_DROP_REASONS = tuple(r["name"] for r in _REASONS if r["by_queue"])
# Decided by the AQM rather than forced by a full buffer.
AQM_DROP_REASONS = tuple(r["name"] for r in _REASONS if r["by_aqm"])
# Outcomes of packets that entered the queue (and held buffer space).
ENTERED = TRANSMITTED + tuple(r["name"] for r in _REASONS if r["entered"])


SUMMARY_SCHEMA_VERSION = 2
"""Version of the layout of ``summarize``'s dict (summary.json, ``aqmlab run --json``): raised
when a key is renamed, removed or changes meaning; CHANGELOG.md lists each change."""


class MissingTableError(LookupError):
    """A metric or figure needs a table (or column) that the run did not record."""


# --------------------------------------------------------------------------- helpers


def _col(table: pa.Table, name: str, dtype=None) -> np.ndarray:
    arr = table.column(name).to_numpy(zero_copy_only=False)
    return arr.astype(dtype) if dtype is not None else arr


def _codes(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A string column as (codes, values), ``values[codes]`` being the column: one code per row
    into its few distinct values (nulls: "None", the last value). Built once per table object
    (``_cached``), or given by ``keep_codes``: a summary reads a hop's outcomes a dozen times."""
    return _cached(table, f"codes:{name}", lambda t: _encode(t, name))


def keep_codes(table: pa.Table, name: str, encoded: pa.DictionaryArray) -> None:
    """Takes the codes of ``table``'s string column ``name`` from ``encoded``, the same column
    dictionary-encoded (as the core sends it), rather than encoding the strings again."""
    _cached(table, f"codes:{name}", lambda _: _dictionary_codes(encoded))


def _encode(table: pa.Table, name: str) -> tuple[np.ndarray, np.ndarray]:
    col = table.column(name)
    if col.num_chunks != 1:
        col = col.combine_chunks() if col.num_chunks else pa.array([], pa.string())
    else:
        col = col.chunk(0)
    return _dictionary_codes(col if pa.types.is_dictionary(col.type) else pc.dictionary_encode(col))


def _dictionary_codes(col: pa.DictionaryArray) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray([str(v) for v in col.dictionary.to_pylist()] or [""], dtype=str)
    if not col.null_count:
        return col.indices.to_numpy(zero_copy_only=False), values
    idx = pc.fill_null(col.indices, 0).to_numpy(zero_copy_only=False)
    null = pc.is_null(col).to_numpy(zero_copy_only=False)
    return np.where(null, values.size, idx), np.append(values, "None")


def _strcol(table: pa.Table, name: str) -> np.ndarray:
    """A string column as a numpy unicode array (via its distinct values: fast for the few
    distinct values of ``dir``/``outcome``/``kind``; nulls become "None")."""
    idx, values = _codes(table, name)
    return values[idx] if idx.size else np.zeros(0, dtype=str)


def _isin(table: pa.Table, name: str, allowed) -> np.ndarray:
    """The rows whose string column ``name`` is one of ``allowed``: ``np.isin(_strcol(...),
    allowed)`` tested once per distinct value."""
    idx, values = _codes(table, name)
    return np.isin(values, allowed)[idx]


def _nullable_float(table: pa.Table, name: str) -> np.ndarray:
    """Column as float64 with nulls as NaN."""
    col = table.column(name)
    return np.asarray(col.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def _need(tables: dict[str, pa.Table], name: str) -> pa.Table:
    t = tables.get(name)
    if t is None:
        raise MissingTableError(f"table '{name}' was not recorded in this run")
    return t


def _has(tables: dict[str, pa.Table], name: str) -> bool:
    return tables.get(name) is not None


def _window(meta: dict, warmup_s: float) -> tuple[int, int]:
    end = int(meta["duration_ns"])
    start = round(warmup_s * NS)
    if start < 0:
        raise ValueError(f"warmup_s must be >= 0, got {warmup_s}")
    return min(start, end), end


def _filter_dir(table: pa.Table, direction: str) -> pa.Table:
    """The rows of one hop (``_hop_rows``) as a table. Built once per table object
    (``_cached``): a run summary filters the same tables dozens of times."""
    return _cached(table, f"dir:{direction}", lambda t: t.filter(pa.array(_hop_rows(t, direction))))


def _hop_rows(table: pa.Table, direction: str) -> np.ndarray:
    """Which rows are of one hop, named by ``direction``: a hop name (the one-hop shorthand's
    hops are named "down" and "up"), matched on the ``hop`` column; tables stored before hops
    existed are matched on ``dir``. A null matches no name."""
    col = "hop" if "hop" in table.column_names else "dir"
    idx, values = _codes(table, col)
    hit = values == direction
    if table.column(col).null_count:
        hit[-1] = False
    return hit[idx]


class _HopPackets:
    """The rows of one hop of a ``packets`` table (``_hop_rows``) as numpy columns: enqueue
    time and size (int64), ``t_out_ns`` (float64, NaN for null) and the outcome's code into
    ``values``. Taken from the whole table's columns by row index, without building a filtered
    table of every column (``_filter_dir``): a hop's summary needs these four. What the metrics
    compute from them is kept with them (``memo``)."""

    def __init__(self, p: pa.Table, direction: str):
        rows = np.flatnonzero(_hop_rows(p, direction))
        self.t_in = _col(p, "t_enqueue_ns")[rows].astype(np.int64)
        self.t_out = _nullable_float(p, "t_out_ns")[rows]
        self.size = _col(p, "size")[rows].astype(np.int64)
        codes, self.values = _codes(p, "outcome")
        self.outcome = codes[rows]
        self._memo: dict[tuple, Any] = {}

    def memo(self, key: tuple, build: Callable[[], Any]) -> Any:
        """``build()``, computed once per hop and ``key``: a run's summary, and a study's metrics
        after it, ask the same of a hop several times."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]

    def isin(self, allowed: tuple[str, ...]) -> np.ndarray:
        """The rows whose outcome is one of ``allowed``."""
        return self.memo(("isin", *allowed), lambda: np.isin(self.values, allowed)[self.outcome])

    def count_from(self, w: int, allowed: tuple[str, ...]) -> int:
        """How many rows with ``t_out >= w`` have an outcome in ``allowed``."""
        counted = self.memo(
            ("out from", w), lambda: np.bincount(self.outcome[self.t_out >= w], minlength=self.values.size)
        )
        return int(counted[np.isin(self.values, allowed)].sum())


def _hop_packets(tables: dict, direction: str) -> _HopPackets:
    """``_HopPackets`` of the ``packets`` table, built once per table object and hop."""
    return _cached(_need(tables, "packets"), f"hop packets:{direction}", lambda p: _HopPackets(p, direction))


def _float(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def percentiles(values: np.ndarray, qs=(50, 75, 95, 99)) -> dict[str, float | None]:
    """Linear-interpolation percentiles (numpy default) plus mean and max; None when empty."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    out: dict[str, float | None] = {}
    if values.size == 0:
        out.update({f"p{q}": None for q in qs})
        out["max"] = None
        out["mean"] = None
        return out
    ps = np.percentile(values, qs)
    out.update({f"p{q}": float(v) for q, v in zip(qs, ps)})
    out["max"] = float(values.max())
    out["mean"] = float(values.mean())
    return out


def cdf(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted values x and F(x_i) = (i + 1) / n (NaN excluded)."""
    v = np.asarray(values, dtype=np.float64)
    v = np.sort(v[~np.isnan(v)])
    n = v.size
    return v, (np.arange(1, n + 1, dtype=np.float64) / n if n else np.zeros(0))


def parse_limit(limit: str) -> tuple[float, str]:
    """A qdisc limit as the resolved scenario writes it, read by the core's own parser:
    ``"100p"`` -> (100, "pkts"), ``"150KB"`` -> (150000, "bytes")."""
    unit, value = _core.parse_limit(str(limit))
    return float(value), "pkts" if unit == "p" else "bytes"


def qdisc_config(meta: dict, direction: str) -> dict:
    """The qdisc table of a hop in the resolved scenario: ``topology[dir]['qdisc']`` for the
    shorthand, the ``topology.hops`` entry of that name otherwise (a WiFi station's link,
    "<hop>/<station>", runs its hop's); {} when absent."""
    try:
        topo = meta["scenario"]["topology"]
        name = direction.split("/")[0]
        hop = topo.get(name) or next(h for h in topo.get("hops", []) if h.get("name") == name)
        q = hop["qdisc"]
    except (KeyError, TypeError, AttributeError, StopIteration):
        return {}
    return q if isinstance(q, dict) else {"name": str(q)}


def qdisc_name(tables: dict[str, pa.Table], meta: dict, direction: str) -> str | None:
    """The discipline of a direction: from ``links.qdisc``, else from the scenario."""
    if _has(tables, "links"):
        lk = _filter_dir(tables["links"], direction)
        if lk.num_rows:
            return str(lk.column("qdisc")[0].as_py())
    q = qdisc_config(meta, direction)
    return q.get("name") or q.get("kind") or q.get("type")


def directions(tables: dict[str, pa.Table], meta: dict) -> list[str]:
    """The hops of the run: the down direction's chain first, then the up direction's, each in
    path order (the one-hop shorthand: "down", "up")."""
    if _has(tables, "links") and "hop" in tables["links"].column_names:
        rows = tables["links"].select(["dir", "hop"]).to_pylist()
        return [r["hop"] for d in DIRECTIONS for r in rows if r["dir"] == d]
    found: set[str] = set()
    for name in ("links", "queue", "packets", "rate_schedule"):
        if _has(tables, name) and tables[name].num_rows:
            found.update(str(d) for d in _col(tables[name], "dir"))
    if not found:
        try:
            found.update(meta["scenario"]["topology"].keys())
        except (KeyError, TypeError, AttributeError):
            pass
    order = [d for d in DIRECTIONS if d in found] + sorted(found - set(DIRECTIONS))
    return order


def bottlenecks(tables: dict[str, pa.Table]) -> dict[str, str]:
    """The bottleneck hop of each direction, as the core names it (``links.bottleneck``: the
    lowest rate of the chain, the first of equals); the direction's own name for runs stored
    before hops existed."""
    if _has(tables, "links") and "bottleneck" in tables["links"].column_names:
        rows = tables["links"].select(["dir", "hop", "bottleneck"]).to_pylist()
        return {r["dir"]: r["hop"] for r in rows if r["bottleneck"]}
    return {d: d for d in DIRECTIONS}


# --------------------------------------------------------------------------- queueing delay


def sojourn_times_ns(
    tables: dict, meta: dict, direction: str, warmup_s: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """(transmission start, sojourn delay) of each transmitted packet of one hop, in ns, as
    ``sojourn_delays_ns`` selects them (for delay against time)."""
    h = _hop_packets(tables, direction)
    w, _ = _window(meta, warmup_s)
    mask = h.isin(TRANSMITTED) & (h.t_in >= w)
    t_out = h.t_out[mask].astype(np.int64)
    return t_out, t_out - h.t_in[mask]


def sojourn_delays_ns(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> np.ndarray:
    """Queueing (sojourn) delay of each transmitted packet of one direction, in ns.

    Definition (docs/metrics.md; codel2012, docs/study-setups.md 1): time from a packet's enqueue to the start of its
    transmission on the bottleneck, ``t_out_ns - t_enqueue_ns``, for packets with outcome ``sent``
    or ``marked``; dropped packets have none. A packet counts when ``t_enqueue_ns >= W``.
    Needs the ``packets`` table (recording level ``packets``).
    """
    return sojourn_times_ns(tables, meta, direction, warmup_s)[1]


def _sojourn_rows(tables: dict, meta: dict, direction: str, warmup_s: float, name: str) -> pa.Table:
    """Rows of the sojourn histogram table ``name`` (``sojourn`` or ``sojourn_totals``) of one
    hop whose second of enqueue time starts at or after the warm-up W: exactly the packets
    ``sojourn_delays_ns`` counts when W is a whole number of seconds, else from the next whole
    second on."""
    w, _ = _window(meta, warmup_s)
    t = _filter_dir(tables[name], direction)
    return t.filter(pc.greater_equal(t.column("t_s"), -(-w // NS)))


def hist_percentiles(lo: np.ndarray, hi: np.ndarray, count: np.ndarray, qs=(50, 75, 95, 99)) -> dict:
    """``percentiles`` of values known as a histogram (bins [lo, hi) with their counts): each
    order statistic is its bin's midpoint (exact for bins one wide), interpolated linearly
    between ranks as numpy does. A bin of the sojourn histogram is at most 1/64 of its lower
    bound wide, so each value is within 1/128 of the exact one."""
    order = np.argsort(lo, kind="stable")
    lo, hi, count = (np.asarray(a, dtype=np.float64)[order] for a in (lo, hi, count))
    n = count.sum()
    if n == 0:
        return {f"p{q}": None for q in qs}
    mid = np.where(hi - lo <= 1, lo, (lo + hi - 1) / 2)
    ends = np.cumsum(count)

    def value(k: float) -> float:
        return float(mid[np.searchsorted(ends, k, side="right")])

    out = {}
    for q in qs:
        r = q / 100 * (n - 1)
        a, b = value(np.floor(r)), value(np.ceil(r))
        out[f"p{q}"] = a + (b - a) * (r - np.floor(r))
    return out


def queue_delay_stats_ms(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> dict:
    """p50/p75/p95/p99/max/mean of the sojourn delay (``sojourn_delays_ns``) in ms.

    From the ``packets`` table when recorded (exact); else from the sojourn histogram of the
    ``series`` level (``sojourn``: percentiles within 1/128 of the exact ones; ``sojourn_totals``:
    exact mean and max), which counts from the first whole second at or after the warm-up. All
    values are None when neither is recorded or no packet was transmitted.
    """
    if _has(tables, "packets"):
        w, _ = _window(meta, warmup_s)

        def stats() -> dict[str, float | None]:
            return percentiles(sojourn_delays_ns(tables, meta, direction, warmup_s) / 1e6)

        return dict(_hop_packets(tables, direction).memo(("delay stats", w), stats))
    if not _has(tables, "sojourn"):
        return percentiles(np.zeros(0))
    h = _sojourn_rows(tables, meta, direction, warmup_s, "sojourn")
    out = hist_percentiles(*(_col(h, c, np.float64) for c in ("lo_ns", "hi_ns", "count")))
    out = {k: None if v is None else v / 1e6 for k, v in out.items()}
    tot = _sojourn_rows(tables, meta, direction, warmup_s, "sojourn_totals")
    n = int(pc.sum(tot.column("packets")).as_py() or 0)
    out["max"] = int(pc.max(tot.column("max_ns")).as_py()) / 1e6 if n else None
    out["mean"] = int(pc.sum(tot.column("sum_ns")).as_py()) / n / 1e6 if n else None
    return out


def queue_delay_cdf_ms(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0):
    """Empirical CDF (x in ms, F) of the sojourn delay of transmitted packets (transients2014);
    without a ``packets`` table, from the sojourn histogram (x at each bin's end)."""
    if _has(tables, "packets") or not _has(tables, "sojourn"):
        return cdf(sojourn_delays_ns(tables, meta, direction, warmup_s) / 1e6)
    h = _sojourn_rows(tables, meta, direction, warmup_s, "sojourn")
    hi, count = _col(h, "hi_ns", np.float64), _col(h, "count", np.float64)
    order = np.argsort(hi, kind="stable")
    f = np.cumsum(count[order])
    return hi[order] / 1e6, f / f[-1] if f.size else f


# --------------------------------------------------------------------------- backlog


def backlog_steps(
    tables: dict, meta: dict, direction: str, unit: str = "bytes", source: str = "auto"
) -> tuple[np.ndarray, np.ndarray, bool]:
    """The queue backlog of one direction as a right-continuous step function.

    Returns ``(t_ns, value, exact)``: the backlog is ``value[i]`` on ``[t_ns[i], t_ns[i+1])``
    and ``value[-1]`` until the end of the run.

    * ``source="packets"`` (exact): every packet that entered the queue (outcome ``sent``,
      ``marked``, ``head``, ``fat_flow``, ``ack_filter``) adds its size (or 1 packet) at ``t_enqueue_ns`` and
      removes it at ``t_out_ns`` (start of transmission or drop from the queue); a null
      ``t_out_ns`` means still queued at the end. ``overlimit`` and ``early`` drops never
      entered. Events at the same instant are applied together, so a packet that is enqueued
      and starts transmission at the same nanosecond never counts, matching the ``queue`` table
      (backlog excludes the packet being transmitted).
    * ``source="queue"`` (approximate): the sampled ``backlog_bytes``/``backlog_pkts`` held
      constant from one sample to the next (sample-and-hold); exact only at the sample times.
    * ``"auto"``: packets when present, else queue.
    """
    _check_unit(unit)
    source = _backlog_source(tables, source)
    if source == "packets":
        return *_packet_backlog(_hop_packets(tables, direction), unit, int(meta["duration_ns"])), True
    if source == "queue":
        q = _filter_dir(_need(tables, "queue"), direction)
        t = _col(q, "t_ns", np.int64)
        v = _col(q, f"backlog_{unit}", np.float64)
        order = np.argsort(t, kind="stable")
        return t[order], v[order], False
    raise ValueError(f"source must be 'auto', 'packets' or 'queue', got {source!r}")


def _check_unit(unit: str) -> None:
    if unit not in ("bytes", "pkts"):
        raise ValueError(f"unit must be 'bytes' or 'pkts', got {unit!r}")


def _backlog_source(tables: dict, source: str) -> str:
    """``backlog_steps``'s source with "auto" resolved."""
    if source == "auto":
        return "packets" if _has(tables, "packets") else "queue"
    return source


def _packet_backlog(h: _HopPackets, unit: str, end: int) -> tuple[np.ndarray, np.ndarray]:
    """``backlog_steps`` from the ``packets`` rows of a hop."""
    m, order, times, last = h.memo(("changes", end), lambda: _queue_changes(h, end))
    size = h.size[m] if unit == "bytes" else np.ones(m.sum(), dtype=np.int64)
    deltas = np.concatenate([[0], size, -size])
    cum = np.cumsum(deltas[order])
    return times, cum[last].astype(np.float64)


def _queue_changes(h: _HopPackets, end: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What ``backlog_steps`` needs of a hop's packets in either unit: the rows that entered the
    queue, the stable time order of the changes [start, their enqueues, their departures], the
    instants of change, and which change is the last of its instant (the value after all
    changes at an instant is the running sum at its last one)."""
    m = h.isin(ENTERED)
    t_in, t_out_f = h.t_in[m], h.t_out[m]
    t_out = np.where(np.isnan(t_out_f), end + 1, t_out_f).astype(np.int64)
    times = np.concatenate([[0], t_in, t_out])
    order = np.argsort(times, kind="stable")
    times = times[order]
    last = np.r_[times[1:] != times[:-1], True]
    return m, order, times[last], last


def _clip_steps(t: np.ndarray, v: np.ndarray, w: int, end: int) -> tuple[np.ndarray, np.ndarray]:
    """Segment durations (ns) and values of a step function restricted to [w, end]."""
    if t.size == 0 or end <= w:
        return np.zeros(0), np.zeros(0)
    starts = np.maximum(t, w)
    ends = np.minimum(np.r_[t[1:], end], end)
    ends -= starts
    dur = np.maximum(ends, 0, out=ends).astype(np.float64)
    # before the first sample the value is unknown: treated as not covered
    return dur, v


def time_average(t: np.ndarray, v: np.ndarray, w: int, end: int) -> float | None:
    """Time average of a step function over [w, end] (covered part only)."""
    dur, val = _clip_steps(t, v, w, end)
    total = dur.sum()
    return float((dur * val).sum() / total) if total > 0 else None


def mean_backlog(
    tables: dict, meta: dict, direction: str, unit: str = "pkts", warmup_s: float = 0.0, source: str = "auto"
) -> float | None:
    """E[Q]: time-average queue length (bytes or packets) over the measured window.

    Definition (lpcc2013 E[Q]; codel2012 1d "mean queue"): (1 / (T_end - W)) * integral of the
    backlog step function over [W, T_end]; see ``backlog_steps`` for exact vs sampled.
    """
    w, end = _window(meta, warmup_s)
    if _backlog_source(tables, source) == "packets":
        _check_unit(unit)
        h = _hop_packets(tables, direction)
        return h.memo(("mean backlog", unit, w, end), lambda: _held_average(h, unit, w, end))
    t, v, _ = backlog_steps(tables, meta, direction, unit, source)
    return time_average(t, v, w, end)


def _held_average(h: _HopPackets, unit: str, w: int, end: int) -> float | None:
    """``mean_backlog`` from a hop's packets without the step function: the integral of the
    backlog over [w, end] is the sum, over the packets that entered the queue, of what each held
    (its size, or 1) times how long it was queued within [w, end] (from its enqueue to its
    departure, or to the end when still queued). Summed in integers and divided once, so the value
    is the exact ratio rounded once to a float."""
    if end <= w:
        return None
    m = h.isin(ENTERED)

    def durations() -> np.ndarray:
        out = h.t_out[m]
        out = np.where(np.isnan(out), end, np.minimum(out, end)).astype(np.int64)
        held = out - np.maximum(h.t_in[m], w)
        return np.maximum(held, 0, out=held)

    held = h.memo(("held", w, end), durations)
    return _exact_dot(held, h.size[m] if unit == "bytes" else None) / (end - w)


def _exact_dot(a: np.ndarray, b: np.ndarray | None) -> int:
    """``sum(a * b)`` (``sum(a)`` without ``b``) of non-negative int64 arrays, exactly: summed in
    int64 over slices short enough that no partial sum can overflow, the slices' sums added as
    Python integers."""
    if a.size == 0:
        return 0
    bound = int(a.max()) * (1 if b is None else int(b.max()))
    if bound >= 2**63:
        pairs = zip(a.tolist(), [1] * a.size if b is None else b.tolist(), strict=True)
        return sum(x * y for x, y in pairs)
    step = (2**63 - 1) // max(bound, 1)
    return sum(
        int(a[i : i + step].sum() if b is None else np.dot(a[i : i + step], b[i : i + step]))
        for i in range(0, a.size, step)
    )


def normalized_mean_backlog(
    tables: dict, meta: dict, direction: str, warmup_s: float = 0.0, source: str = "auto"
) -> float | None:
    """E[Q]/Q_max (lpcc2013 section 3c).

    Q_max is the qdisc limit of the direction in the resolved scenario,
    ``meta['scenario']['topology'][dir]['qdisc']['limit']`` (``"100p"`` or ``"150000B"``);
    E[Q] is taken in the same unit (packets for a packet limit, bytes for a byte limit).
    None when the limit is not given.
    """
    limit = qdisc_config(meta, direction).get("limit")
    if limit is None:
        return None
    qmax, unit = parse_limit(limit)
    eq = mean_backlog(tables, meta, direction, unit, warmup_s, source)
    return None if eq is None or qmax <= 0 else eq / qmax


def mean_queue_delay_ms(
    tables: dict, meta: dict, direction: str, warmup_s: float = 0.0, source: str = "auto"
) -> float | None:
    """Mean queueing delay in ms (lpcc2013 3c/3d "E[Q] in ms"): E[Q] in bytes drained at the
    link's rate, E[Q] x 8 / C (C = ``link_rate_bps`` at t = 0, the configured capacity)."""
    eq = mean_backlog(tables, meta, direction, "bytes", warmup_s, source)
    rate = link_rate_bps(tables, meta, direction)
    return None if eq is None or rate <= 0 else eq * 8.0 / rate * 1e3


def spike_threshold_bytes(delay_s: float, rate_bps: float) -> float:
    """A backlog threshold given as delay at the link rate: ``delay_s * rate_bps / 8`` bytes
    (transients2014: 60 ms at 2 Mb/s = 15000 B, 100 ms = 25000 B)."""
    return delay_s * rate_bps / 8.0


def link_rate_bps(tables: dict, meta: dict, direction: str, t_ns: int = 0) -> float:
    """The link's scheduled rate at ``t_ns`` (rate_schedule; links.rate_bps for t = 0)."""
    if _has(tables, "rate_schedule"):
        rs = _filter_dir(tables["rate_schedule"], direction)
        if rs.num_rows:
            t = _col(rs, "t_ns", np.int64)
            r = _col(rs, "rate_bps", np.float64)
            order = np.argsort(t, kind="stable")
            t, r = t[order], r[order]
            i = np.searchsorted(t, t_ns, side="right") - 1
            return float(r[max(i, 0)])
    lk = _filter_dir(_need(tables, "links"), direction)
    return float(lk.column("rate_bps")[0].as_py())


def spike_duration_s(
    tables: dict,
    meta: dict,
    direction: str,
    threshold_bytes: float | None = None,
    threshold_delay_s: float | None = None,
    warmup_s: float = 0.0,
    source: str = "auto",
) -> tuple[float, bool]:
    """Delay-spike duration (transients2014): the longest continuous period during which the
    queue holds MORE than a threshold of bytes.

    The threshold is given in bytes or as a delay at the link rate (``spike_threshold_bytes``
    with the rate at the start of the measured window). Computed on the backlog step function
    (``backlog_steps``) clipped to [W, T_end]: exact from the ``packets`` table, approximate
    (sample-and-hold of the ``queue`` samples) without it. Returns ``(seconds, exact)``;
    0.0 when the backlog never exceeds the threshold.
    """
    if (threshold_bytes is None) == (threshold_delay_s is None):
        raise ValueError("give exactly one of threshold_bytes or threshold_delay_s")
    w, end = _window(meta, warmup_s)
    if threshold_bytes is None:
        threshold_bytes = spike_threshold_bytes(threshold_delay_s, link_rate_bps(tables, meta, direction, w))
    t, v, exact = backlog_steps(tables, meta, direction, "bytes", source)
    dur, val = _clip_steps(t, v, w, end)
    above = (val > threshold_bytes) & (dur > 0)
    keep = dur > 0  # zero-length segments neither extend nor break a run
    dur, above = dur[keep], above[keep]
    if not above.any():
        return 0.0, exact
    run_id = np.cumsum(~above)  # constant inside a run of True
    sums = np.bincount(run_id[above], weights=dur[above])
    return float(sums.max() / NS), exact


# --------------------------------------------------------------------------- utilisation, drops


def capacity_bytes(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> float:
    """Bytes the link could carry over [W, T_end]: the integral of its rate schedule / 8.

    Without a ``rate_schedule`` table and with W = 0, ``links.capacity_bytes``.
    """
    w, end = _window(meta, warmup_s)
    if _has(tables, "rate_schedule"):
        rs = _filter_dir(tables["rate_schedule"], direction)
        if rs.num_rows:
            t = _col(rs, "t_ns", np.int64)
            r = _col(rs, "rate_bps", np.float64)
            order = np.argsort(t, kind="stable")
            dur, val = _clip_steps(t[order], r[order], w, end)
            return float((dur * val).sum() / 8.0 / NS)
    if w == 0 and _has(tables, "links"):
        return float(_filter_dir(tables["links"], direction).column("capacity_bytes")[0].as_py())
    raise MissingTableError("utilisation over a window needs the 'rate_schedule' table")


def _cum_at(t: np.ndarray, v: np.ndarray, at: int) -> float:
    """Value of a cumulative counter sampled at t at time ``at`` (last sample <= at; 0 before)."""
    i = np.searchsorted(t, at, side="right") - 1
    return float(v[i]) if i >= 0 else 0.0


def tx_bytes(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> float:
    """Bytes put on the link in [W, T_end].

    From ``packets`` (sum of sizes of transmitted packets with ``t_out_ns >= W``, exact), else
    ``links.tx_bytes`` minus the cumulative ``queue.tx_bytes`` at the last sample <= W (so from
    that sample on: see ``utilization``).
    """
    return _tx_bytes_window(tables, meta, direction, warmup_s)[0]


def _tx_bytes_window(tables: dict, meta: dict, direction: str, warmup_s: float) -> tuple[float, int]:
    """(bytes put on the link, the window start they are counted from): W itself from
    ``packets``, else the time of the last ``queue`` sample <= W."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        h = _hop_packets(tables, direction)
        return h.memo(("tx bytes", w), lambda: float(h.size[h.isin(TRANSMITTED) & (h.t_out >= w)].sum())), w
    total = float(_filter_dir(_need(tables, "links"), direction).column("tx_bytes")[0].as_py())
    if w == 0:
        return total, 0
    q = _filter_dir(_need(tables, "queue"), direction)
    t = _col(q, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    t = t[order]
    i = int(np.searchsorted(t, w, side="right")) - 1
    if i < 0:
        return total, 0
    return total - float(_col(q, "tx_bytes", np.float64)[order][i]), int(t[i])


def _bytes_on_wire(tables: dict, h, direction: str, w: int, end: int) -> float:
    """The transmitted bytes whose time on the wire falls in [w, end]: every packet whose
    transmission starts in it, less the part past `end` of the one still on the wire then, plus
    the part after `w` of one that started before `w`. A packet's time on the wire is its size at
    the link's scheduled rate when it starts; only those two edge packets move the count (by less
    than a packet), so that the utilisation never exceeds 1."""
    tx = h.isin(TRANSMITTED)
    t_out, size = h.t_out[tx], h.size[tx].astype(np.float64)
    total = float(size[t_out >= w].sum())
    rs = _filter_dir(tables["rate_schedule"], direction) if _has(tables, "rate_schedule") else None
    if rs is None or not rs.num_rows or not t_out.size:
        return total
    t = _col(rs, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    t, rate = t[order], _col(rs, "rate_bps", np.float64)[order]
    if not (rate > 0).any():
        return total
    longest = size.max() * 8 * NS / rate[rate > 0].min()
    edge = ((t_out >= w - longest) & (t_out < w)) | ((t_out > end - longest) & (t_out <= end))
    te, se = t_out[edge], size[edge]
    r = rate[np.maximum(np.searchsorted(t, te, side="right") - 1, 0)]
    ok = r > 0
    te, se, r = te[ok], se[ok], r[ok]
    on_wire = se * 8 * NS / r
    inside = np.clip(np.minimum(te + on_wire, end) - np.maximum(te, w), 0, None)
    counted = np.where(te >= w, se, 0.0)
    return total + float((se * inside / on_wire - counted).sum())


def utilization(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> float | None:
    """Link utilisation = bytes put on the link / capacity bytes over [W, T_end]
    (docs/metrics.md; capacity integrates the rate schedule when the rate varies). With the
    ``packets`` table the bytes are those on the wire within the window (``_bytes_on_wire``: the
    packet on the wire at T_end counts in part, as does one started before W). Without the
    ``packets`` table the transmitted bytes are known only at the ``queue`` samples, so both
    counts start at the last sample <= W (never a byte counted outside the capacity's window)."""
    sent, w = _tx_bytes_window(tables, meta, direction, warmup_s)
    if _has(tables, "packets"):
        h = _hop_packets(tables, direction)
        end = _window(meta, warmup_s)[1]
        sent = h.memo(("bytes on wire", w), lambda: _bytes_on_wire(tables, h, direction, w, end))
    cap = capacity_bytes(tables, meta, direction, w / NS)
    return sent / cap if cap > 0 else None


def drops_by_reason(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> dict[str, int]:
    """Drops of one direction by reason: ``overlimit``, ``early``, ``forced``, ``head``, ``fat_flow``,
    ``ack_filter`` (queue drops) and ``loss`` (random loss on the wire after transmission).

    Queue drops come from ``packets`` (rows with that outcome and ``t_out_ns >= W``) when recorded,
    else from the ``links`` totals (whole run: the warm-up cannot be applied to the split).
    ``loss`` always comes from ``links.drops_loss`` (whole run).
    """
    w, _ = _window(meta, warmup_s)
    out = {r: 0 for r in DROP_REASONS}
    links = _filter_dir(tables["links"], direction) if _has(tables, "links") else None
    if _has(tables, "packets"):
        h = _hop_packets(tables, direction)
        for r in QUEUE_DROP_REASONS:
            out[r] = h.count_from(w, (r,))
    elif links is not None and links.num_rows:
        for r in QUEUE_DROP_REASONS:
            # Runs stored before a reason existed have no column for it: none of those drops.
            if f"drops_{r}" in links.column_names:
                out[r] = int(links.column(f"drops_{r}")[0].as_py())
    if links is not None and links.num_rows:
        out["loss"] = int(links.column("drops_loss")[0].as_py())
    return out


def marks(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> int:
    """CE marks applied by the queue: ``packets`` rows with outcome ``marked`` and
    ``t_out_ns >= W``; else ``links.marks`` (W = 0) or the ``queue.marks`` counter difference."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        return _hop_packets(tables, direction).count_from(w, ("marked",))
    total = int(_filter_dir(_need(tables, "links"), direction).column("marks")[0].as_py())
    if w == 0 or not _has(tables, "queue"):
        return total
    q = _filter_dir(tables["queue"], direction)
    t = _col(q, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    return int(total - _cum_at(t[order], _col(q, "marks", np.float64)[order], w))


def arrivals(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> int:
    """Packets that reached the queue: ``packets`` rows with ``t_enqueue_ns >= W``, else
    ``links.arrivals`` (whole run)."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        h = _hop_packets(tables, direction)
        return h.memo(("arrivals", w), lambda: int((h.t_in >= w).sum()))
    return int(_filter_dir(_need(tables, "links"), direction).column("arrivals")[0].as_py())


def tx_packets(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> int:
    """Packets put on the link (transmitted, ``t_out_ns >= W``), else ``links.tx_packets``."""
    w, _ = _window(meta, warmup_s)
    if _has(tables, "packets"):
        return _hop_packets(tables, direction).count_from(w, TRANSMITTED)
    return int(_filter_dir(_need(tables, "links"), direction).column("tx_packets")[0].as_py())


# --------------------------------------------------------------------------- flows


# Per-flow lookups are served from an index built once per table object, so that metrics over
# N flows cost O(rows + N), not O(rows x N). The cache refers to the table weakly and its
# entries go with it: a process that summarises run after run (a sweep's worker) keeps none of
# the earlier runs' tables or what was built from them.
_INDEX: dict[tuple[int, str], tuple[weakref.ref, Any]] = {}


def _cached(table: pa.Table, kind: str, build) -> Any:
    """``build(table)``, built once while ``table`` lives (named ``kind`` among its entries)."""
    key = (id(table), kind)
    hit = _INDEX.get(key)
    if hit is not None and hit[0]() is table:
        return hit[1]
    value = build(table)
    _INDEX[key] = (weakref.ref(table, lambda _: _INDEX.pop(key, None)), value)
    return value


def _flow_index(f: pa.Table) -> dict[int, int]:
    """The row of each flow id in the ``flows`` table."""
    return {int(i): k for k, i in enumerate(f.column("flow").to_pylist())}


def _flow_pos(tables: dict, flow: int) -> int:
    k = _cached(_need(tables, "flows"), "index", _flow_index).get(int(flow))
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


def _sample_blocks(fs: pa.Table, flows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``_series_of_flows`` of ``fs`` and, per flow id of ``flows``, its block of samples
    [a, b) in that order (a = b = 0 for a flow without samples)."""
    t, d, ids, starts = _cached(fs, "series", _series_of_flows)
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

    def __init__(self, f: pa.Table, fs: pa.Table):
        t, d, a, b = _sample_blocks(fs, _col(f, "flow", np.int64))
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


def _flow_windows(tables: dict, meta: dict, warmup_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(goodput in bit/s, NaN for None; delivered bytes) of every ``flows`` row, as
    ``goodput_bps`` and ``delivered_bytes`` define them; computed once per tables and window."""
    f, fs = _need(tables, "flows"), tables.get("flow_series")
    kind = f"windows:{id(fs)}:{warmup_s!r}:{meta['duration_ns']}"
    return _cached(f, kind, lambda _: (fs, _compute_flow_windows(f, fs, meta, warmup_s)))[1]


def _compute_flow_windows(f: pa.Table, fs: pa.Table | None, meta: dict, warmup_s: float):
    w, end = _window(meta, warmup_s if fs is not None else 0.0)
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
    s = _FlowSamples(f, fs)
    delivered = np.rint(s.value_at(end) - s.value_at(w)).astype(np.int64)
    has = s.count > 0
    ia = s.before(t0)
    ib = np.where(finished, np.minimum(s.count - 1, s.before(t1)), s.count - 1)
    ok = has & (ia < s.count) & (ib > ia)
    a, b = (s.first + ia)[ok], (s.first + ib)[ok]
    gp[has] = np.nan
    gp[ok] = (s.d[b] - s.d[a]) * 8.0 * NS / (s.t[b] - s.t[a])
    return gp, delivered


def goodput_bps(tables: dict, meta: dict, flow: int, warmup_s: float = 0.0) -> float | None:
    """Goodput at the application (docs/metrics.md; goodbadwifi2015), bits per second.

    With ``flow_series``: (D(t_b) - D(t_a)) * 8 / (t_b - t_a), D = ``delivered_bytes`` (payload
    delivered in order to the receiving application), t_a = first sample >= max(W, start_ns),
    t_b = the first sample >= ``completed_ns`` for a finished finite transfer, else the last
    sample. A flow without samples, or any flow without the table (recording level
    ``summary``: only the whole-run total exists, so the warm-up cannot be applied):
    ``bytes_delivered`` * 8 / (end - max(W, start_ns)) with end = ``completed_ns`` or T_end.
    None when the window is empty.
    """
    return _float(_flow_windows(tables, meta, warmup_s)[0][_flow_pos(tables, flow)])


def delivered_bytes(tables: dict, meta: dict, flow: int, warmup_s: float = 0.0) -> int:
    """Payload the flow delivered to its application in the run's window [W, T_end]: D(T_end) -
    D(W) from ``flow_series`` (D at the last sample <= t, 0 before the first), the same window as
    the links' utilisation; without ``flow_series`` (level ``summary``, no warm-up possible) the
    whole-run ``flows.bytes_delivered``."""
    return int(_flow_windows(tables, meta, warmup_s)[1][_flow_pos(tables, flow)])


def goodput_totals_mbps(tables: dict, meta: dict, warmup_s: float = 0.0) -> dict[str, float | None]:
    """Aggregate goodput per direction and in total (Mbit/s): the payload every non-probe flow of
    that direction delivered in [W, T_end] (``delivered_bytes``) over T_end - W. One window for
    all flows and the links, so it never exceeds what the links carried; per-flow goodput
    (``goodput_bps``) is over each flow's own active part of the window and does not add up to
    this when flows start late or finish early."""
    w, end = _window(meta, warmup_s)
    if not _has(tables, "flow_series"):
        w = 0
    out: dict[str, float | None] = {"down": None, "up": None, "total": None}
    if not _has(tables, "flows") or end <= w:
        return out
    f = tables["flows"]
    traffic = ~_probe_rows(tables)
    delivered = _flow_windows(tables, meta, w / NS)[1]
    direction = _strcol(f, "direction")
    sums = {str(d): int(delivered[traffic & (direction == d)].sum()) for d in np.unique(direction[traffic])}
    for d, v in sums.items():
        out[d] = v * 8.0 * NS / (end - w) / 1e6
    if sums:
        out["total"] = sum(sums.values()) * 8.0 * NS / (end - w) / 1e6
    return out


def class_throughput_series(
    tables: dict, meta: dict, by: str = "label", step_s: float = 1.0
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per-class goodput over time (lpcc2013 3a's shares over time): the bin ends t_k = k x
    step_s and, per value of the ``by`` column (probes left out), the bytes delivered to the
    class's applications in (t_(k-1), t_k] x 8 / step_s in bits/s. Delivered bytes are read from
    ``flow_series`` as a step function (the last sample at or before each bin end)."""
    f = _need(tables, "flows")
    kinds, keys, ids = _strcol(f, "kind"), _strcol(f, by), _col(f, "flow", np.int64)
    end = int(meta["duration_ns"])
    step = round(step_s * NS)
    edges = np.arange(0, end + 1, step, dtype=np.int64)
    t_all, d_all, starts, ends = _sample_blocks(_need(tables, "flow_series"), ids)
    out: dict[str, np.ndarray] = {}
    for kind, k, a, b in zip(kinds, keys, starts.tolist(), ends.tolist(), strict=True):
        if str(kind) in PROBE_KINDS:
            continue
        t, d = t_all[a:b], d_all[a:b].astype(np.float64)
        at = np.searchsorted(t, edges, side="right") - 1
        cum = np.where(at >= 0, d[np.clip(at, 0, None)] if d.size else 0.0, 0.0)
        out[str(k)] = out.get(str(k), 0.0) + np.diff(cum) * 8.0 / step_s
    return edges[1:] / NS, out


def completion_time_s(tables: dict, flow: int) -> float | None:
    """Completion (response) time of a finite TCP transfer: ``completed_ns - first_syn_ns``
    (transients2014); None when the flow did not complete or is not TCP."""
    f = _need(tables, "flows")
    return _float(_completion_times_s(f)[_flow_pos(tables, flow)])


def _completion_times_s(f: pa.Table) -> np.ndarray:
    """``completion_time_s`` of every ``flows`` row, NaN for None."""

    def build(f: pa.Table) -> np.ndarray:
        done, syn = (_optional_ns(f, c) for c in ("completed_ns", "first_syn_ns"))
        both = ~np.isnan(done) & ~np.isnan(syn)
        out = np.full(f.num_rows, np.nan)
        out[both] = (done[both].astype(np.int64) - syn[both].astype(np.int64)) / NS
        return out

    return _cached(f, "completion", build)


def group_response_times_s(tables: dict) -> dict[int, float | None]:
    """Response time per flow group (transients2014): from the first SYN of the group to the
    last ACK of the group's last-finishing flow, i.e. max(completed_ns) - min(first_syn_ns)
    over the flows of the ``group``. None for a group with an unfinished flow."""
    f = _need(tables, "flows")
    out: dict[int, float | None] = {}
    groups = _col(f, "group", np.int64)
    syn = _nullable_float(f, "first_syn_ns")
    done = _nullable_float(f, "completed_ns")
    for g in np.unique(groups):
        m = groups == g
        if np.isnan(done[m]).any() or np.isnan(syn[m]).all():
            out[int(g)] = None
        else:
            out[int(g)] = float((np.nanmax(done[m]) - np.nanmin(syn[m])) / NS)
    return out


def jain_index(values) -> float | None:
    """Jain's fairness index (R. Jain, D. Chiu, W. Hawe, DEC-TR-301, 1984): (sum x)^2 / (n * sum x^2).

    1 when all equal, 1/n when one value has everything; None for an empty or all-zero input.
    """
    x = np.asarray(list(values), dtype=np.float64)
    if x.size == 0:
        return None
    s2 = float((x * x).sum())
    return None if s2 == 0 else float(x.sum() ** 2 / (x.size * s2))


def drop_share_jain(tables: dict, by: str = "label", cls: str | None = None) -> float | None:
    """codel2012 1c's fairness (docs/study-setups.md 1): Jain's index over the sources' drop shares
    x = (packets of the source dropped) / (packets it sent), over the flows whose ``by`` column is
    ``cls`` (all flows when None) that sent anything. None without such a flow or without drops.
    """
    f = _need(tables, "flows")
    sent = _col(f, "packets_sent", np.float64)
    keep = sent > 0
    if cls is not None:
        keep &= _strcol(f, by) == str(cls)
    return jain_index(_col(f, "drops", np.float64)[keep] / sent[keep])


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
    f = _need(tables, "flows")
    if traffic_only:
        f = f.filter(pa.array(~np.isin(_strcol(f, "kind"), PROBE_KINDS)))
    key = _strcol(f, by)
    q = _col(f, quantity, np.float64)
    total = q.sum()
    return float(q[key == str(cls)].sum() / total) if total > 0 else None


def per_class_jain(
    tables: dict, meta: dict, by: str = "cc", warmup_s: float = 0.0
) -> dict[str, float | None]:
    """Jain's index over the goodputs inside each class (lpcc2013 3d: F_X), probes excluded."""
    f = _need(tables, "flows")
    kinds = _strcol(f, "kind")
    keys = _strcol(f, by)
    ids = _col(f, "flow", np.int64)
    out = {}
    for k in np.unique(keys[~np.isin(kinds, PROBE_KINDS)]):
        sel = ids[(keys == k) & (~np.isin(kinds, PROBE_KINDS))]
        out[str(k)] = jain_index([goodput_bps(tables, meta, int(i), warmup_s) or 0.0 for i in sel])
    return out


def intra_fairness(
    tables: dict, meta: dict, classes: tuple[str, ...], by: str = "label", warmup_s: float = 0.0
) -> float | None:
    """lpcc2013 3d's intra-protocol fairness F = (F_TCP + F_LPCC) / 2: the mean over ``classes``
    (values of the ``by`` column) of Jain's index over the goodputs inside each class
    (``per_class_jain``). None when a class is absent or has no goodput."""
    pj = per_class_jain(tables, meta, by, warmup_s)
    vals = [pj.get(c) for c in classes]
    return None if not vals or any(v is None for v in vals) else float(np.mean(vals))


# --------------------------------------------------------------------------- probes

# Flow kinds that are latency probes (echoed round trips), not traffic: no goodput.
PROBE_KINDS = ("ping", "voip")


def probe_table(tables: dict, flow: int, warmup_s: float = 0.0) -> pa.Table:
    p = _need(tables, "probes")
    m = (_col(p, "flow", np.int64) == flow) & (_col(p, "t_send_ns", np.int64) >= round(warmup_s * NS))
    return p.filter(pa.array(m))


def probe_rtt_ms(tables: dict, flow: int, warmup_s: float = 0.0) -> np.ndarray:
    """RTT (ms) of each answered probe sent at or after W (lost probes excluded)."""
    p = probe_table(tables, flow, warmup_s)
    r = _nullable_float(p, "rtt_ns")
    return r[~np.isnan(r)] / 1e6


def induced_latency_ms(tables: dict, flow: int, warmup_s: float = 0.0) -> np.ndarray:
    """Induced latency (docs/metrics.md; goodbadwifi2015): measured RTT minus the base
    (empty-queue) RTT ``flows.base_rtt_ns`` of the probe flow, in ms."""
    base = int(_flow_row(tables, flow)["base_rtt_ns"]) / 1e6
    return probe_rtt_ms(tables, flow, warmup_s) - base


def ping_queueing_delay_ms(tables: dict, flow: int, warmup_s: float = 0.0) -> np.ndarray:
    """Queueing delay as the lpcc2013 testbed measured it (3b): the RTT of each answered ping
    sent at or after W minus the minimum RTT seen among them, in ms. Unlike
    ``induced_latency_ms`` it needs no knowledge of the path's base RTT."""
    r = probe_rtt_ms(tables, flow, warmup_s)
    return r - r.min() if r.size else r


def probe_owd_ms(tables: dict, flow: int, direction: str, warmup_s: float = 0.0) -> np.ndarray:
    """One-way delay (ms) of answered probes in one direction (``owd_up_ns``/``owd_down_ns``)."""
    v = _probe_owd_ns(tables, flow, direction, warmup_s)[1]
    return v[~np.isnan(v)] / 1e6


def probe_ipdv_ms(tables: dict, flow: int, direction: str, warmup_s: float = 0.0) -> float | None:
    """Mean IPDV in one direction as irtt and Flent's VoIP test report it ("jitter" there): the
    mean absolute instantaneous packet delay variation, |D_i - D_(i-1)| over consecutive probes
    (sequence numbers i - 1 and i) that both arrived (RFC 3393 IPDV with consecutive selection).
    None with fewer than two such probes."""
    p, owd = _probe_owd_ns(tables, flow, direction, warmup_s)
    seq = _col(p, "seq", np.int64)
    order = np.argsort(seq, kind="stable")
    seq, owd = seq[order], owd[order]
    pair = (np.diff(seq) == 1) & ~np.isnan(owd[1:]) & ~np.isnan(owd[:-1])
    if not pair.any():
        return None
    return float(np.abs(np.diff(owd))[pair].mean() / 1e6)


def probe_jitter_ms(tables: dict, flow: int, direction: str, warmup_s: float = 0.0) -> float | None:
    """Interarrival jitter in one direction (RFC 3550 6.4.1, the RTP receiver's estimator), in
    ms: the probes that arrived, in order of arrival at the receiving end (the server for
    ``up``: send time + one-way delay up; the client for ``down``: send time + RTT), with
    D = the difference of the one-way delays (transit times) of each and the one received
    before it, and J updated at each arrival by J += (|D| - J) / 16 from J = 0. The value
    after the last arrival; None with fewer than two arrivals. In closed form
    J_N = sum_k |D_k| (1/16) (15/16)^(N-k)."""
    p, owd = _probe_owd_ns(tables, flow, direction, warmup_s)
    back = _nullable_float(p, "rtt_ns") if direction == "down" else owd
    arrival = _col(p, "t_send_ns", np.float64) + back
    got = ~np.isnan(owd) & ~np.isnan(arrival)
    order = np.argsort(arrival[got], kind="stable")
    d = np.abs(np.diff(owd[got][order]))
    if d.size == 0:
        return None
    weights = (15 / 16) ** np.arange(d.size - 1, -1, -1, dtype=np.float64) / 16
    return float((d * weights).sum() / 1e6)


def _probe_owd_ns(tables: dict, flow: int, direction: str, warmup_s: float) -> tuple[pa.Table, np.ndarray]:
    """The probes of a stream sent at or after W and their one-way delay in ``direction`` (ns,
    NaN when lost)."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'up' or 'down', got {direction!r}")
    p = probe_table(tables, flow, warmup_s)
    return p, _nullable_float(p, f"owd_{direction}_ns")


def probe_counts(
    tables: dict, flow: int, warmup_s: float = 0.0, end_ns: int | None = None, up_only: bool = False
) -> dict[str, int]:
    """The probes of a stream sent at or after W by fate: ``sent``, ``answered``, ``lost`` and
    ``in_flight``. THE in-flight rule (docs/metrics.md): a probe whose reply did not arrive is
    in flight at the end, neither answered nor lost, when it was sent less than the path's
    maximum delay before the run's end ``end_ns``; the path's maximum delay is the longest RTT
    any probe of the stream had in the run (0 without an answer). irtt likewise waits after its
    last send for late replies. Without ``end_ns`` every unanswered probe is lost. ``up_only``:
    only the probes that never reached the echo server count as lost (``lost_up``: a one-way
    stream's loss, as D-ITG measures it); those lost on the way back count as answered."""
    p = probe_table(tables, flow, warmup_s)
    rtt = _nullable_float(p, "rtt_ns")
    answered = ~np.isnan(rtt)
    unanswered = ~answered
    if end_ns is not None:
        longest = float(np.nanmax(rtt)) if answered.any() else 0.0
        in_flight = unanswered & (_col(p, "t_send_ns", np.float64) + longest > end_ns)
    else:
        in_flight = np.zeros(p.num_rows, dtype=bool)
    lost = unanswered & ~in_flight
    if up_only:
        lost &= _col(p, "lost_up", bool)
    return {"sent": int(p.num_rows), "answered": int(p.num_rows - lost.sum() - in_flight.sum()),
            "lost": int(lost.sum()), "in_flight": int(in_flight.sum())}  # fmt: skip


def probe_loss(
    tables: dict, flow: int, warmup_s: float = 0.0, end_ns: int | None = None, up_only: bool = False
) -> float | None:
    """Probe loss rate: lost / (sent - in flight) over the probes sent at or after W, with the
    in-flight rule and ``up_only`` of ``probe_counts`` (None when no probe's fate is known)."""
    c = probe_counts(tables, flow, warmup_s, end_ns, up_only)
    known = c["sent"] - c["in_flight"]
    return c["lost"] / known if known else None


def _probe_rows(tables: dict) -> np.ndarray:
    """The ``flows`` rows that are probe streams (kind in PROBE_KINDS or present in ``probes``)."""
    f = tables["flows"]
    return _isin(f, "kind", PROBE_KINDS) | np.isin(_col(f, "flow", np.int64), probe_flows(tables))


def probe_flows(tables: dict) -> list[int]:
    """Flow ids that appear in the probes table."""
    if not _has(tables, "probes") or tables["probes"].num_rows == 0:
        return []
    return sorted(int(x) for x in np.unique(_col(tables["probes"], "flow", np.int64)))


# --------------------------------------------------------------------------- aggregation, transients


@functools.cache
def flow_queue_qdiscs() -> frozenset[str]:
    """The built-in disciplines that keep one queue per flow, as the core says (`flow_queues`)."""
    return frozenset(q["name"] for q in json.loads(_core.qdiscs()) if q["flow_queues"])


def spike_duration_defined(qdisc: str | None) -> bool:
    """transients2014 defines the delay-spike duration on THE bottleneck queue; it is not
    defined for schedulers with one queue per flow (SFQ-CoDel, fq_codel, ...)."""
    return qdisc not in flow_queue_qdiscs()


def aqm_drops(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> int:
    """Drops decided by the AQM rather than forced by a full buffer: ``early`` (refused at
    enqueue: RED/HRED, PIE), ``forced`` (RED's average above its drop-everything threshold) plus
    ``head`` (dropped when leaving the queue: CoDel, SFQ-CoDel).
    ``overlimit`` (tail drop on a full buffer), ``fat_flow`` (overflow of a flow-queueing
    scheduler) and ``ack_filter`` (CAKE's ACK filter) are not counted. See ``drops_by_reason`` for the window."""
    by = drops_by_reason(tables, meta, direction, warmup_s)
    return int(sum(by[r] for r in AQM_DROP_REASONS))


def max_queue_delay_s(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> float | None:
    """Maximum queueing (sojourn) delay of a run in seconds (transients2014): the largest
    ``sojourn_delays_ns`` of the direction; None when no packet was transmitted."""
    d = sojourn_delays_ns(tables, meta, direction, warmup_s)
    return float(d.max()) / NS if d.size else None


HEADER_ONLY_MAX_BYTES = 80  # a TCP/IP header with options (SYN, SYN-ACK, pure ACK) is at most 60 B


def initial_window_share_at_peak(tables: dict, meta: dict, direction: str) -> float | None:
    """transients2014 "which packets sit in the queue during the highest spike": at the first
    instant of the run's maximum backlog (bytes, ``backlog_steps`` from ``packets``), the share
    of the queued packets that belong to their flow's initial window, i.e. are among the first
    ``iw`` data packets (larger than HEADER_ONLY_MAX_BYTES) the flow put into this queue, ``iw``
    from the flow's ``[[flows]]`` entry of the resolved scenario (default 10). A packet is queued
    at t when ``t_enqueue_ns <= t < t_out_ns``. None when the queue is empty at its peak."""
    p = _filter_dir(_need(tables, "packets"), direction)
    if p.num_rows == 0:
        return None
    outcome = _strcol(p, "outcome")
    t_in = _col(p, "t_enqueue_ns", np.int64)
    t_out_f = _nullable_float(p, "t_out_ns")
    t_out = np.where(np.isnan(t_out_f), int(meta["duration_ns"]) + 1, t_out_f).astype(np.int64)
    flow = _col(p, "flow", np.int64)
    size = _col(p, "size", np.int64)
    t, v, _ = backlog_steps(tables, meta, direction, "bytes", "packets")
    if v.size == 0 or v.max() <= 0:
        return None
    peak = int(t[int(np.argmax(v))])
    queued = np.isin(outcome, ENTERED) & (t_in <= peak) & (t_out > peak)
    if not queued.any():
        return None
    # rank of each data packet within its flow, by arrival at the queue
    data = size > HEADER_ONLY_MAX_BYTES
    idx = np.flatnonzero(data)
    order = idx[np.lexsort((t_in[idx], flow[idx]))]
    f_sorted = flow[order]
    starts = np.r_[0, np.flatnonzero(f_sorted[1:] != f_sorted[:-1]) + 1]
    rank_sorted = np.arange(order.size) - np.repeat(starts, np.diff(np.r_[starts, order.size]))
    rank = np.full(p.num_rows, -1)
    rank[order] = rank_sorted
    groups = dict(zip(_col(tables["flows"], "flow", np.int64).tolist(),
                      _col(tables["flows"], "group", np.int64).tolist(), strict=True))  # fmt: skip
    entries = (meta.get("scenario") or {}).get("flows") or []
    iw_of_flow = np.array([int((entries[groups[f]] if groups.get(f, -1) < len(entries) else {}).get("iw") or 10)
                           for f in flow.tolist()]) if flow.size else np.zeros(0, int)  # fmt: skip
    in_iw = data & (rank >= 0) & (rank < iw_of_flow)
    return float((queued & in_iw).sum() / queued.sum())


def quartiles(values) -> dict[str, float | None]:
    """Median and quartiles over replications (docs/metrics.md): {q1, median, q3, min, max, n}
    of the non-missing values (None/NaN skipped), numpy's linear percentiles."""
    v = np.asarray([np.nan if x is None else x for x in values], dtype=np.float64)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return {"q1": None, "median": None, "q3": None, "min": None, "max": None, "n": 0}
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"q1": float(q1), "median": float(med), "q3": float(q3), "min": float(v.min()),
            "max": float(v.max()), "n": int(v.size)}  # fmt: skip


def pooled_percentile(arrays, q: float) -> float | None:
    """The q-th percentile of the union of several runs' samples (e.g. the 95th percentile of
    queueing delay over all packets of all replications of a case, transients2014)."""
    parts = [np.asarray(a, dtype=np.float64) for a in arrays]
    v = np.concatenate(parts) if parts else np.zeros(0)
    return float(np.percentile(v, q)) if v.size else None


def qdisc_diagnostics(meta: dict, direction: str) -> dict[str, float]:
    """The discipline's own counters at the end of the run (``meta['qdisc_diagnostics']``)."""
    d = (meta.get("qdisc_diagnostics") or {}).get(direction) or {}
    return {str(k): float(v) for k, v in d.items()}


def pie_engagement(meta: dict, direction: str) -> dict[str, Any] | None:
    """Whether PIE ever left its burst-protection mode, from its diagnostics (docs/disciplines.md 7.3).

    Returns None for a non-PIE discipline, else the counters ``rate_cycles_completed``,
    ``rate_cycles_abandoned``, ``burst_allowance_ms`` (at the end), ``drop_prob`` (at the end),
    ``early_drops`` and ``engaged``: False when no departure-rate measurement ever completed
    (the rate-based delay estimate is then 0 and, in the pie2013 profile, the burst allowance
    never falls, so no packet can be dropped early).
    """
    q = qdisc_config(meta, direction)
    if (q.get("kind") or q.get("name")) not in ("pie",):
        return None
    d = qdisc_diagnostics(meta, direction)
    keys = ("rate_cycles_completed", "rate_cycles_abandoned", "burst_allowance_ms", "drop_prob",
            "early_drops", "updates", "avg_dq_rate_bps")  # fmt: skip
    out: dict[str, Any] = {k: d.get(k) for k in keys}
    done = d.get("rate_cycles_completed")
    out["engaged"] = None if done is None else bool(done > 0 or (d.get("early_drops") or 0) > 0)
    return out


# --------------------------------------------------------------------------- run summary


def link_summary(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> dict:
    """The per-direction block of ``summarize``.

    At recording level ``summary`` (no ``packets`` and no ``queue`` table) only whole-run totals
    exist, so the warm-up cannot be applied: the block then describes the whole run.
    """
    has_q = _has(tables, "packets") or _has(tables, "queue")
    if not has_q:
        warmup_s = 0.0
    by = drops_by_reason(tables, meta, direction, warmup_s)
    return {
        "qdisc": qdisc_name(tables, meta, direction),
        "utilization": _float(utilization(tables, meta, direction, warmup_s)),
        "queue_delay_ms": {
            k: v
            for k, v in queue_delay_stats_ms(tables, meta, direction, warmup_s).items()
            if k in ("p50", "p75", "p95", "p99", "max", "mean")
        },
        "drops": int(sum(by[r] for r in QUEUE_DROP_REASONS)),
        "drops_by_reason": by,
        "marks": marks(tables, meta, direction, warmup_s),
        "arrivals": arrivals(tables, meta, direction, warmup_s),
        "transmitted": tx_packets(tables, meta, direction, warmup_s),
        "tx_bytes": int(tx_bytes(tables, meta, direction, warmup_s)),
        "mean_backlog_pkts": _float(mean_backlog(tables, meta, direction, "pkts", warmup_s))
        if has_q
        else None,
        "mean_backlog_bytes": _float(mean_backlog(tables, meta, direction, "bytes", warmup_s))
        if has_q
        else None,
        "backlog_exact": bool(_has(tables, "packets")),
        **subqueues_summary(tables, meta, direction, warmup_s),
    }


def subqueues_summary(tables: dict, meta: dict, direction: str, warmup_s: float = 0.0) -> dict:
    """``{"queues": {name: block}}`` for a hop whose discipline has sub-queues
    (``meta['subqueues']``: dualpi2's ``l`` and ``c``), else ``{}``. Each block has the link
    block's packet counts and queueing delay, over the ``packets`` rows of that sub-queue; its
    values are None without the ``packets`` table (the other levels keep no sub-queue)."""
    names = (meta.get("subqueues") or {}).get(direction)
    if not names:
        return {}
    p = tables.get("packets") if _has(tables, "packets") else None
    if p is None or "subqueue" not in p.column_names:
        none = {"queue_delay_ms": percentiles(np.zeros(0)), "drops": None, "drops_by_reason": None}
        return {"queues": {n: {**none, **dict.fromkeys(("marks", "arrivals", "transmitted", "tx_bytes"))}
                           for n in names}}  # fmt: skip
    p = _filter_dir(p, direction)
    return {"queues": {n: _queue_block({"packets": p.filter(pc.equal(p.column("subqueue"), n))}, meta,
                                       direction, warmup_s) for n in names}}  # fmt: skip


def _queue_block(sub: dict, meta: dict, direction: str, warmup_s: float) -> dict:
    """The block of one sub-queue from its own ``packets`` rows (``sub``)."""
    by = drops_by_reason(sub, meta, direction, warmup_s)
    by = {r: by[r] for r in QUEUE_DROP_REASONS}
    return {
        "queue_delay_ms": queue_delay_stats_ms(sub, meta, direction, warmup_s),
        "drops": int(sum(by.values())),
        "drops_by_reason": by,
        "marks": marks(sub, meta, direction, warmup_s),
        "arrivals": arrivals(sub, meta, direction, warmup_s),
        "transmitted": tx_packets(sub, meta, direction, warmup_s),
        "tx_bytes": int(tx_bytes(sub, meta, direction, warmup_s)),
    }


def web_summary(tables: dict, warmup_s: float = 0.0) -> dict:
    """Web (PackMime-HTTP) exchanges requested at or after the warm-up: how many, how many
    completed within the run, and the response time (request SYN to the last response byte at
    the client) of the completed ones, in ms (p50/p95/p99/max/mean)."""
    w = _need(tables, "web")
    t0 = _nullable_float(w, "t_request_ns")
    asked = ~np.isnan(t0) & (t0 >= warmup_s * NS)
    rt = _nullable_float(w, "response_time_ns")[asked]
    done = rt[~np.isnan(rt)]
    st = percentiles(done / 1e6, (50, 95, 99))
    return {"exchanges": int(asked.sum()), "completed": int(done.size), "response_ms": st}


def fetch_times_s(tables: dict, warmup_s: float = 0.0, flow: int | None = None) -> np.ndarray:
    """Page fetch times (start to the last object's last byte, http-getter's measure) of the
    fetches started at or after the warm-up that completed, in seconds (NaN-free)."""
    w = _need(tables, "webpage")
    t0 = w.column("t_start_ns").to_numpy().astype(np.float64)
    keep = t0 >= warmup_s * NS
    if flow is not None:
        keep &= w.column("flow").to_numpy() == flow
    ft = _nullable_float(w, "fetch_time_ns")[keep]
    return ft[~np.isnan(ft)] / NS


def webpage_summary(tables: dict, warmup_s: float = 0.0) -> dict:
    """Page fetches started at or after the warm-up: how many, how many completed and timed out,
    and the completed ones' fetch time in ms (p50/p95/p99/max/mean)."""
    w = _need(tables, "webpage")
    started = w.column("t_start_ns").to_numpy().astype(np.float64) >= warmup_s * NS
    timed_out = int((w.column("timed_out").to_numpy()[started] != 0).sum())
    ft = fetch_times_s(tables, warmup_s)
    return {
        "fetches": int(started.sum()),
        "completed": int(ft.size),
        "timed_out": timed_out,
        "fetch_ms": percentiles(ft * 1e3, (50, 95, 99)),
    }


def summarize(tables: dict[str, pa.Table], meta: dict, warmup_s: float = 0.0) -> dict:
    """The run summary printed by ``aqmlab run --json`` and stored as ``summary.json``.

    JSON-serialisable (plain floats, ints, None). ``drops`` counts queue drops (overlimit,
    early, forced, head, fat_flow, ack_filter); random link loss is reported under ``drops_by_reason['loss']``.
    Probe streams (kind ``ping`` or present in ``probes``) are listed under ``probes``, not
    ``flows``.
    """
    out: dict[str, Any] = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "name": meta.get("name"),
        "seed": meta.get("seed"),
        "wall_s": _float(meta.get("wall_s")),
        "events": meta.get("events"),
        "warmup_s": float(warmup_s),
        "links": {d: link_summary(tables, meta, d, warmup_s) for d in directions(tables, meta)},
        "bottleneck": bottlenecks(tables),
        "goodput_mbps": goodput_totals_mbps(tables, meta, warmup_s),
        "flows": [],
        "probes": [],
    }
    if _has(tables, "flows"):
        out["flows"] = flow_summaries(tables, meta, warmup_s)
    if _has(tables, "web") and tables["web"].num_rows:
        out["web"] = web_summary(tables, warmup_s)
    if _has(tables, "webpage") and tables["webpage"].num_rows:
        out["webpage"] = webpage_summary(tables, warmup_s)
    out["probes"] = [probe_summary(tables, meta, fid, warmup_s) for fid in probe_flows(tables)]
    return out


def flow_summaries(tables: dict, meta: dict, warmup_s: float = 0.0) -> list[dict]:
    """The ``flows`` block of ``summarize``: one entry per flow that is not a probe stream, read
    column by column (``goodput_bps``, ``delivered_bytes`` and ``completion_time_s`` for all
    flows at once)."""
    f = tables["flows"]
    keep = np.flatnonzero(~_probe_rows(tables))
    gp, delivered = _flow_windows(tables, meta, warmup_s)
    done = _completion_times_s(f)
    names = ("flow", "kind", "direction", "label", "cc", "retransmits", "rto_count")
    cols = [f.column(c).take(keep).to_pylist() for c in names]
    return [
        {
            "id": fid,
            "kind": kind,
            "direction": direction,
            "label": label,
            "cc": cc,
            "goodput_mbps": None if math.isnan(g) else g / 1e6,
            "bytes_delivered": int(b),
            "retransmits": retransmits,
            "rto_count": rto,
            "completion_s": _float(c),
        }
        for fid, kind, direction, label, cc, retransmits, rto, g, b, c in zip(
            *cols, gp[keep].tolist(), delivered[keep].tolist(), done[keep].tolist(), strict=True
        )
    ]


def probe_summary(tables: dict, meta: dict, flow: int, warmup_s: float = 0.0) -> dict:
    """The block of one probe stream (ping or VoIP) in ``summarize``: RTT, induced latency,
    one-way delay and jitter per direction, and loss by the in-flight rule of ``probe_counts``."""
    end = int(meta["duration_ns"])
    ind = percentiles(induced_latency_ms(tables, flow, warmup_s), (50,))
    return {
        "id": flow,
        "rtt_ms": percentiles(probe_rtt_ms(tables, flow, warmup_s), (50, 95, 99)),
        "induced_ms": {"p50": ind["p50"], "mean": ind["mean"]},
        "counts": probe_counts(tables, flow, warmup_s, end),
        "loss": probe_loss(tables, flow, warmup_s, end),
        "owd_ms": {d: percentiles(probe_owd_ms(tables, flow, d, warmup_s), (50, 95, 99)) for d in DIRECTIONS},
        "jitter_ms": {d: probe_jitter_ms(tables, flow, d, warmup_s) for d in DIRECTIONS},
        "ipdv_ms": {d: probe_ipdv_ms(tables, flow, d, warmup_s) for d in DIRECTIONS},
    }
