"""What each per-run column means, declared once: a readable name and its unit.

The ``runs`` catalog columns (``store.RUN_COLUMNS``, one flattened summary per run) and the
derived metrics of ``plots.metric_value`` are named here for axis labels, legends and tables.
Link metrics are declared once for the ``down`` direction; their ``up_`` twins are derived.
``label(column)`` gives "95th percentile queueing delay, down (ms)"; a column not declared
falls back to its own name with a unit read off its suffix, so nothing is ever unlabelled.
"""

from __future__ import annotations

_LINK = {
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
}

COLUMNS: dict[str, tuple[str, str]] = {
    "seed": ("seed", ""),
    "qdisc": ("queue discipline, down", ""),
    "up_qdisc": ("queue discipline, up", ""),
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
    "enorm": ("mean backlog / buffer size, down", "fraction"),
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
