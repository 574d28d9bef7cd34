"""The tables of a run as numpy columns: constants, per-table helpers (a hop's rows, string
columns as codes), percentiles and the run's hops and disciplines."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from aqmlab import _core
from aqmlab.metrics.keys import DIRECTIONS, QUANTILES

# MissingTableError and _nullable_float are the metrics package's names too (aqmlab.metrics.<name>)
from aqmlab.runtables import HopPackets, MissingTableError, RunTables, _col, _nullable_float  # noqa: F401

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


def _need(tables: Mapping[str, pa.Table], name: str) -> pa.Table:
    return RunTables.of(tables).need(name)


def _has(tables: Mapping[str, pa.Table], name: str) -> bool:
    return tables.get(name) is not None


def _window(meta: dict, warmup_s: float, end_s: float | None = None) -> tuple[int, int]:
    """The statistics window [W, E] in ns: from the warm-up to ``end_s`` (the run's end T_end when
    None, and never past it)."""
    end = int(meta["duration_ns"])
    if end_s is not None:
        if end_s < 0:
            raise ValueError(f"end_s must be >= 0, got {end_s}")
        end = min(end, round(end_s * NS))
    start = round(warmup_s * NS)
    if start < 0:
        raise ValueError(f"warmup_s must be >= 0, got {warmup_s}")
    return min(start, end), end


def _hop(tables: Mapping[str, pa.Table], name: str, hop: str) -> pa.Table:
    """The rows of one hop of table ``name`` (``RunTables.hop``: built once per run), named by
    ``hop`` (the one-hop shorthand's hops are named "down" and "up"), matched on the ``hop``
    column; tables stored before hops existed are matched on ``dir``. A null matches no name.
    MissingTableError without the table."""
    return RunTables.of(tables).hop(name, hop)


def _hop_packets(tables: Mapping[str, pa.Table], hop: str) -> HopPackets:
    """``HopPackets`` of one hop of the ``packets`` table, built once per run and hop."""
    return RunTables.of(tables).hop_packets(hop)


def _strcol(tables: Mapping[str, pa.Table], name: str, column: str) -> np.ndarray:
    """The string column ``column`` of table ``name`` as a numpy unicode array (via its
    distinct values, coded once per run: fast for the few distinct values of
    ``dir``/``outcome``/``kind``; nulls become "None")."""
    return RunTables.of(tables).strings(name, column)


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


def qdisc_config(meta: dict, hop: str) -> dict:
    """The qdisc table of a hop in the resolved scenario: ``topology[dir]['qdisc']`` for the
    shorthand, the ``topology.hops`` entry of that name otherwise (a WiFi station's link,
    "<hop>/<station>", runs its hop's); {} when absent."""
    try:
        topo = meta["scenario"]["topology"]
        name = hop.split("/")[0]
        entry = topo.get(name) or next(h for h in topo.get("hops", []) if h.get("name") == name)
        q = entry["qdisc"]
    except (KeyError, TypeError, AttributeError, StopIteration):
        return {}
    return q if isinstance(q, dict) else {"name": str(q)}


def qdisc_name(tables: dict[str, pa.Table], meta: dict, hop: str) -> str | None:
    """The discipline of a hop: from ``links.qdisc``, else from the scenario."""
    if _has(tables, "links"):
        lk = _hop(tables, "links", hop)
        if lk.num_rows:
            return str(lk.column("qdisc")[0].as_py())
    q = qdisc_config(meta, hop)
    return q.get("name") or q.get("kind") or q.get("type")


def hops(tables: dict[str, pa.Table], meta: dict) -> list[str]:
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
