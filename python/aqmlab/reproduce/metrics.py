"""Metrics that only the studies (reproduce/) use: transients2014's delay spikes, AQM drops and
initial-window share, lpcc2013's class throughput and fairness, codel2012's drop-share fairness,
and the aggregation over replications."""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np

from aqmlab import _core
from aqmlab.metrics.base import (
    AQM_DROP_REASONS,
    ENTERED,
    NS,
    _col,
    _hop,
    _need,
    _nullable_float,
    _strcol,
    _window,
    qdisc_config,
)
from aqmlab.metrics.flows import PROBE_KINDS, _sample_blocks, goodput_bps, jain_index
from aqmlab.metrics.queue import (
    _clip_steps,
    backlog_steps,
    drops_by_reason,
    link_rate_bps,
    mean_backlog,
    sojourn_delays_ns,
)
from aqmlab.runtables import RunTables, encode, strings


def mean_queue_delay_ms(
    tables: dict, meta: dict, hop: str, warmup_s: float = 0.0, source: str = "auto"
) -> float | None:
    """Mean queueing delay in ms (lpcc2013 3c/3d "E[Q] in ms"): E[Q] in bytes drained at the
    link's rate, E[Q] x 8 / C (C = ``link_rate_bps`` at t = 0, the configured capacity)."""
    eq = mean_backlog(tables, meta, hop, "bytes", warmup_s, source)
    rate = link_rate_bps(tables, meta, hop)
    return None if eq is None or rate <= 0 else eq * 8.0 / rate * 1e3


def spike_threshold_bytes(delay_s: float, rate_bps: float) -> float:
    """A backlog threshold given as delay at the link rate: ``delay_s * rate_bps / 8`` bytes
    (transients2014: 60 ms at 2 Mb/s = 15000 B, 100 ms = 25000 B)."""
    return delay_s * rate_bps / 8.0


def spike_duration_s(
    tables: dict,
    meta: dict,
    hop: str,
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
        threshold_bytes = spike_threshold_bytes(threshold_delay_s, link_rate_bps(tables, meta, hop, w))
    t, v, exact = backlog_steps(tables, meta, hop, "bytes", source)
    dur, val = _clip_steps(t, v, w, end)
    above = (val > threshold_bytes) & (dur > 0)
    keep = dur > 0  # zero-length segments neither extend nor break a run
    dur, above = dur[keep], above[keep]
    if not above.any():
        return 0.0, exact
    run_id = np.cumsum(~above)  # constant inside a run of True
    sums = np.bincount(run_id[above], weights=dur[above])
    return float(sums.max() / NS), exact


def class_throughput_series(
    tables: dict, meta: dict, by: str = "label", step_s: float = 1.0
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per-class goodput over time (lpcc2013 3a's shares over time): the bin ends t_k = k x
    step_s and, per value of the ``by`` column (probes left out), the bytes delivered to the
    class's applications in (t_(k-1), t_k] x 8 / step_s in bits/s. Delivered bytes are read from
    ``flow_series`` as a step function (the last sample at or before each bin end)."""
    f = _need(tables, "flows")
    kinds, keys, ids = (
        _strcol(tables, "flows", "kind"),
        _strcol(tables, "flows", by),
        _col(f, "flow", np.int64),
    )
    end = int(meta["duration_ns"])
    step = round(step_s * NS)
    edges = np.arange(0, end + 1, step, dtype=np.int64)
    _need(tables, "flow_series")
    t_all, d_all, starts, ends = _sample_blocks(RunTables.of(tables), ids)
    out: dict[str, np.ndarray] = {}
    for kind, k, a, b in zip(kinds, keys, starts.tolist(), ends.tolist(), strict=True):
        if str(kind) in PROBE_KINDS:
            continue
        t, d = t_all[a:b], d_all[a:b].astype(np.float64)
        at = np.searchsorted(t, edges, side="right") - 1
        cum = np.where(at >= 0, d[np.clip(at, 0, None)] if d.size else 0.0, 0.0)
        out[str(k)] = out.get(str(k), 0.0) + np.diff(cum) * 8.0 / step_s
    return edges[1:] / NS, out


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


def drop_share_jain(tables: dict, by: str = "label", cls: str | None = None) -> float | None:
    """codel2012 1c's fairness (docs/study-setups.md 1): Jain's index over the sources' drop shares
    x = (packets of the source dropped) / (packets it sent), over the flows whose ``by`` column is
    ``cls`` (all flows when None) that sent anything. None without such a flow or without drops.
    """
    f = _need(tables, "flows")
    sent = _col(f, "packets_sent", np.float64)
    keep = sent > 0
    if cls is not None:
        keep &= _strcol(tables, "flows", by) == str(cls)
    return jain_index(_col(f, "drops", np.float64)[keep] / sent[keep])


def per_class_jain(
    tables: dict, meta: dict, by: str = "cc", warmup_s: float = 0.0
) -> dict[str, float | None]:
    """Jain's index over the goodputs inside each class (lpcc2013 3d: F_X), probes excluded."""
    f = _need(tables, "flows")
    kinds = _strcol(tables, "flows", "kind")
    keys = _strcol(tables, "flows", by)
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


@functools.cache
def flow_queue_qdiscs() -> frozenset[str]:
    """The built-in disciplines that keep one queue per flow, as the core says (`flow_queues`)."""
    return frozenset(q["name"] for q in json.loads(_core.qdiscs()) if q["flow_queues"])


def spike_duration_defined(qdisc: str | None) -> bool:
    """transients2014 defines the delay-spike duration on THE bottleneck queue; it is not
    defined for schedulers with one queue per flow (SFQ-CoDel, fq_codel, ...)."""
    return qdisc not in flow_queue_qdiscs()


def aqm_drops(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> int:
    """Drops decided by the AQM rather than forced by a full buffer: ``early`` (refused at
    enqueue: RED/HRED, PIE), ``forced`` (RED's average above its drop-everything threshold) plus
    ``head`` (dropped when leaving the queue: CoDel, SFQ-CoDel).
    ``overlimit`` (tail drop on a full buffer), ``fat_flow`` (overflow of a flow-queueing
    scheduler) and ``ack_filter`` (CAKE's ACK filter) are not counted. See ``drops_by_reason`` for the window."""
    by = drops_by_reason(tables, meta, hop, warmup_s)
    return int(sum(by[r] for r in AQM_DROP_REASONS))


def max_queue_delay_s(tables: dict, meta: dict, hop: str, warmup_s: float = 0.0) -> float | None:
    """Maximum queueing (sojourn) delay of a run in seconds (transients2014): the largest
    ``sojourn_delays_ns`` of the hop; None when no packet was transmitted."""
    d = sojourn_delays_ns(tables, meta, hop, warmup_s)
    return float(d.max()) / NS if d.size else None


HEADER_ONLY_MAX_BYTES = 80  # a TCP/IP header with options (SYN, SYN-ACK, pure ACK) is at most 60 B


def initial_window_share_at_peak(tables: dict, meta: dict, hop: str) -> float | None:
    """transients2014 "which packets sit in the queue during the highest spike": at the first
    instant of the run's maximum backlog (bytes, ``backlog_steps`` from ``packets``), the share
    of the queued packets that belong to their flow's initial window, i.e. are among the first
    ``iw`` data packets (larger than HEADER_ONLY_MAX_BYTES) the flow put into this queue, ``iw``
    from the flow's ``[[flows]]`` entry of the resolved scenario (default 10). A packet is queued
    at t when ``t_enqueue_ns <= t < t_out_ns``. None when the queue is empty at its peak."""
    p = _hop(tables, "packets", hop)
    if p.num_rows == 0:
        return None
    outcome = strings(encode(p, "outcome"))
    t_in = _col(p, "t_enqueue_ns", np.int64)
    t_out_f = _nullable_float(p, "t_out_ns")
    t_out = np.where(np.isnan(t_out_f), int(meta["duration_ns"]) + 1, t_out_f).astype(np.int64)
    flow = _col(p, "flow", np.int64)
    size = _col(p, "size", np.int64)
    t, v, _ = backlog_steps(tables, meta, hop, "bytes", "packets")
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


def qdisc_diagnostics(meta: dict, hop: str) -> dict[str, float]:
    """The discipline's own counters at the end of the run (``meta['qdisc_diagnostics']``)."""
    d = (meta.get("qdisc_diagnostics") or {}).get(hop) or {}
    return {str(k): float(v) for k, v in d.items()}


def pie_engagement(meta: dict, hop: str) -> dict[str, Any] | None:
    """Whether PIE ever left its burst-protection mode, from its diagnostics (docs/disciplines.md 7.3).

    Returns None for a non-PIE discipline, else the counters ``rate_cycles_completed``,
    ``rate_cycles_abandoned``, ``burst_allowance_ms`` (at the end), ``drop_prob`` (at the end),
    ``early_drops`` and ``engaged``: False when no departure-rate measurement ever completed
    (the rate-based delay estimate is then 0 and, in the pie2013 profile, the burst allowance
    never falls, so no packet can be dropped early).
    """
    q = qdisc_config(meta, hop)
    if (q.get("kind") or q.get("name")) not in ("pie",):
        return None
    d = qdisc_diagnostics(meta, hop)
    keys = ("rate_cycles_completed", "rate_cycles_abandoned", "burst_allowance_ms", "drop_prob",
            "early_drops", "updates", "avg_dq_rate_bps")  # fmt: skip
    out: dict[str, Any] = {k: d.get(k) for k in keys}
    done = d.get("rate_cycles_completed")
    out["engaged"] = None if done is None else bool(done > 0 or (d.get("early_drops") or 0) > 0)
    return out
