"""What each per-run column means, declared once: a readable name and its unit.

The ``runs`` catalog columns (``store.RUN_COLUMNS``, one flattened summary per run) and the
derived metrics of ``plots.metric_value`` are named here for axis labels, legends and tables.
Link metrics are declared once for the ``down`` direction; their ``up_`` twins are derived
(``in_direction``). ``label(column)`` gives "95th percentile queueing delay, down (ms)"; a column
not declared falls back to its own name with a unit read off its suffix, so nothing is ever
unlabelled.

Which direction a table or figure shows is decided once, by ``loaded_dirs``: the direction(s)
where the run's load is (see there); ``shown_dirs`` applies a ``--dir`` choice over many runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

DIRECTIONS = ("down", "up")
DIR_CHOICES = ("up", "down", "both")
"""The values of ``--dir``: one direction, or both."""

_LINK = {
    "qdisc": ("queue discipline", ""),
    "queue_delay_p50_ms": ("median queueing delay", "ms"),
    "queue_delay_p95_ms": ("95th percentile queueing delay", "ms"),
    "queue_delay_p99_ms": ("99th percentile queueing delay", "ms"),
    "queue_delay_max_ms": ("maximum queueing delay", "ms"),
    "queue_delay_mean_ms": ("mean queueing delay", "ms"),
    "utilization": ("bottleneck utilisation", "fraction"),
    "drops": ("drops at the bottleneck", "packets"),
    "marks": ("CE marks at the bottleneck", "packets"),
    "mean_backlog_pkts": ("mean backlog", "packets"),
    "mean_backlog_bytes": ("mean backlog", "bytes"),
    "enorm": ("mean backlog / buffer size", "fraction"),
}

COLUMNS: dict[str, tuple[str, str]] = {
    "seed": ("seed", ""),
    "dir": ("loaded direction(s)", ""),
    "sweep": ("sweep", ""),
    "duration_s": ("simulated duration", "s"),
    "warmup_s": ("warm-up skipped by the metrics", "s"),
    "wall_s": ("wall-clock time", "s"),
    "events": ("events processed", "count"),
    **{k: (f"{name}, down", unit) for k, (name, unit) in _LINK.items()},
    **{f"up_{k}": (f"{name}, up", unit) for k, (name, unit) in _LINK.items()},
    "goodput_mbps_total": ("total goodput", "Mbit/s"),
    "goodput_mbps_down": ("goodput, down", "Mbit/s"),
    "goodput_mbps_up": ("goodput, up", "Mbit/s"),
    "n_flows": ("flows", "count"),
    "retransmits": ("TCP retransmissions", "packets"),
    "probe_rtt_p50_ms": ("median probe RTT", "ms"),
    "probe_rtt_p95_ms": ("95th percentile probe RTT", "ms"),
    "probe_rtt_mean_ms": ("mean probe RTT", "ms"),
    "probe_induced_mean_ms": ("mean induced latency (probe RTT - base RTT)", "ms"),
    "probe_loss": ("probe loss", "fraction"),
    "tcp_share": ("TCP share of delivered bytes", "fraction"),
}
"""column -> (readable name, unit); "" for a unitless label."""


def unit(column: str) -> str:
    """The column's unit ("ms", "Mbit/s", "fraction", ...); "" when it has none."""
    if column in COLUMNS:
        return COLUMNS[column][1]
    if column.endswith("_ms"):
        return "ms"
    if column.endswith("_s"):
        return "s"
    if "mbps" in column:
        return "Mbit/s"
    if column.endswith("_bytes"):
        return "bytes"
    if column.endswith("_pkts"):
        return "packets"
    return ""


def name(column: str) -> str:
    """The column's readable name (the column itself when it is not declared)."""
    return COLUMNS[column][0] if column in COLUMNS else column


def label(column: str) -> str:
    """An axis label: readable name and unit, "95th percentile queueing delay, down (ms)"."""
    u = unit(column)
    return f"{name(column)} ({u})" if u else name(column)


def quantity(column: str) -> str:
    """What the column measures, without the direction of a link metric: "95th percentile
    queueing delay" for ``up_queue_delay_p95_ms``; ``name`` for any other column."""
    base = column.removeprefix("up_")
    return _LINK[base][0] if base in _LINK else name(column)


def label_dirs(column: str, dirs: Iterable[str]) -> str:
    """The axis label of a link metric drawn for several directions: "95th percentile queueing
    delay, down and up (ms)"; ``label`` for any other column."""
    if not is_link(column):
        return label(column)
    u = unit(column)
    text = f"{quantity(column)}, {' and '.join(dirs)}"
    return f"{text} ({u})" if u else text


def in_direction(column: str, direction: str) -> str:
    """The column of a link metric for ``direction``: ``queue_delay_p95_ms`` is the down link's,
    ``up_queue_delay_p95_ms`` its up twin; a column that is not a link metric is returned as is."""
    base = column.removeprefix("up_")
    if base not in _LINK:
        return column
    return base if direction == "down" else f"up_{base}"


def is_link(column: str) -> bool:
    """Whether ``column`` is a link metric (one column per direction)."""
    return column.removeprefix("up_") in _LINK


LOAD_SHARE = 0.5
"""A direction is loaded when its bottleneck's utilisation is at least this share of the busiest
direction's (``loaded_dirs``)."""

IDLE_UTILISATION = 0.05
"""Below this utilisation on every direction a run is idle and every direction is shown."""


def loaded_dirs(row: Mapping) -> list[str]:
    """The direction(s) where a run's load is, from its bottleneck utilisations (a ``runs`` row or
    ``store.flatten_summary``: ``utilization`` down, ``up_utilization`` up). The rule: a direction
    is loaded when its utilisation is at least ``LOAD_SHARE`` of the busiest direction's; when no
    direction reaches ``IDLE_UTILISATION`` (an idle path) or none reports one, every direction.
    Four uploads on a 20/2 Mbit/s path (up 1.0, down 0.007: the ACKs) give ["up"]; rrul's four
    flows each way give both."""
    util = {}
    for d in DIRECTIONS:
        u = row.get(in_direction("utilization", d))
        if u is not None and not math.isnan(u):  # NaN: a missing value in a pandas row
            util[d] = float(u)
    top = max(util.values(), default=0.0)
    if top < IDLE_UTILISATION:
        return list(DIRECTIONS)
    return [d for d in DIRECTIONS if util.get(d, 0.0) >= LOAD_SHARE * top]


def dir_name(dirs: Iterable[str]) -> str:
    """'down', 'up' or 'both' for a list of directions."""
    dirs = [d for d in DIRECTIONS if d in set(dirs)]
    return dirs[0] if len(dirs) == 1 else "both"


def shown_dirs(choice: str | None, rows: Iterable[Mapping]) -> list[str]:
    """The directions a table or figure over ``rows`` shows: ``choice`` ('up', 'down', 'both'),
    or, when None, every direction loaded in at least one of the rows (``loaded_dirs``)."""
    if choice is not None:
        if choice not in DIR_CHOICES:
            raise ValueError(f"--dir: {choice!r} is not allowed; allowed: {', '.join(DIR_CHOICES)}")
        return list(DIRECTIONS) if choice == "both" else [choice]
    found = {d for r in rows for d in loaded_dirs(r)}
    return [d for d in DIRECTIONS if d in found] or list(DIRECTIONS)
