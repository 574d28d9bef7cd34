"""Metric definitions over the tables a run returns (docs/tables.md).

This package is the ONE place where aqmlab defines its metrics (docs/architecture.md, principle 6). Every
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

from aqmlab.metrics.base import (
    AQM_DROP_REASONS,
    DIRECTIONS,
    DROP_REASONS,
    ENTERED,
    NS,
    QUEUE_DROP_REASONS,
    SUMMARY_SCHEMA_VERSION,
    TRANSMITTED,
    MissingTableError,
    _col,
    _filter_dir,
    _isin,
    _nullable_float,
    _strcol,
    bottlenecks,
    cdf,
    directions,
    keep_codes,
    parse_limit,
    percentiles,
    qdisc_config,
    qdisc_name,
)
from aqmlab.metrics.flows import (
    PROBE_KINDS,
    class_share,
    completion_time_s,
    delivered_bytes,
    goodput_bps,
    goodput_totals_mbps,
    jain_index,
    probe_flows,
)
from aqmlab.metrics.probes import (
    induced_latency_ms,
    ping_queueing_delay_ms,
    probe_counts,
    probe_ipdv_ms,
    probe_jitter_ms,
    probe_loss,
    probe_owd_ms,
    probe_rtt_ms,
    probe_table,
)
from aqmlab.metrics.queue import (
    _sojourn_rows,
    arrivals,
    backlog_steps,
    capacity_bytes,
    drops_by_reason,
    hist_percentiles,
    link_rate_bps,
    marks,
    mean_backlog,
    normalized_mean_backlog,
    queue_delay_cdf_ms,
    queue_delay_stats_ms,
    sojourn_delays_ns,
    sojourn_times_ns,
    time_average,
    tx_bytes,
    tx_packets,
    utilization,
)
from aqmlab.metrics.summary import (
    fetch_times_s,
    flow_summaries,
    link_summary,
    probe_summary,
    subqueues_summary,
    summarize,
    web_summary,
    webpage_summary,
)

__all__ = [
    "AQM_DROP_REASONS",
    "DIRECTIONS",
    "DROP_REASONS",
    "ENTERED",
    "NS",
    "PROBE_KINDS",
    "QUEUE_DROP_REASONS",
    "SUMMARY_SCHEMA_VERSION",
    "TRANSMITTED",
    "MissingTableError",
    "_col",
    "_filter_dir",
    "_isin",
    "_nullable_float",
    "_sojourn_rows",
    "_strcol",
    "arrivals",
    "backlog_steps",
    "bottlenecks",
    "capacity_bytes",
    "cdf",
    "class_share",
    "completion_time_s",
    "delivered_bytes",
    "directions",
    "drops_by_reason",
    "fetch_times_s",
    "flow_summaries",
    "goodput_bps",
    "goodput_totals_mbps",
    "hist_percentiles",
    "induced_latency_ms",
    "jain_index",
    "keep_codes",
    "link_rate_bps",
    "link_summary",
    "marks",
    "mean_backlog",
    "normalized_mean_backlog",
    "parse_limit",
    "percentiles",
    "ping_queueing_delay_ms",
    "probe_counts",
    "probe_flows",
    "probe_ipdv_ms",
    "probe_jitter_ms",
    "probe_loss",
    "probe_owd_ms",
    "probe_rtt_ms",
    "probe_summary",
    "probe_table",
    "qdisc_config",
    "qdisc_name",
    "queue_delay_cdf_ms",
    "queue_delay_stats_ms",
    "sojourn_delays_ns",
    "sojourn_times_ns",
    "subqueues_summary",
    "summarize",
    "time_average",
    "tx_bytes",
    "tx_packets",
    "utilization",
    "web_summary",
    "webpage_summary",
]
