"""The tables of a run as numpy columns: constants, per-table helpers (a hop's rows, string
columns as codes), percentiles and the run's hops and disciplines."""

from __future__ import annotations

import json
import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aqmlab import _core
from aqmlab.metrics.catalogue import DIRECTIONS, QUANTILES

NS = 1_000_000_000


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


def percentiles(values: np.ndarray, qs=QUANTILES) -> dict[str, float | None]:
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
