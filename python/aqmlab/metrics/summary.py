"""The run summary (summary.json, ``aqmlab run --json``): the per-hop, per-flow and per-probe
blocks and ``summarize``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aqmlab.metrics.base import (
    DIRECTIONS,
    NS,
    QUEUE_DROP_REASONS,
    SUMMARY_SCHEMA_VERSION,
    _float,
    _has,
    _hop,
    _need,
    _nullable_float,
    bottlenecks,
    directions,
    percentiles,
    qdisc_name,
)
from aqmlab.metrics.catalogue import SHORT_QUANTILES, STATS
from aqmlab.metrics.flows import (
    _completion_times_s,
    _flow_windows,
    _probe_rows,
    goodput_totals_mbps,
    probe_flows,
)
from aqmlab.metrics.probes import (
    induced_latency_ms,
    probe_counts,
    probe_ipdv_ms,
    probe_jitter_ms,
    probe_loss,
    probe_owd_ms,
    probe_rtt_ms,
)
from aqmlab.metrics.queue import (
    arrivals,
    drops_by_reason,
    marks,
    mean_backlog,
    queue_delay_stats_ms,
    tx_bytes,
    tx_packets,
    utilization,
)
from aqmlab.runtables import RunTables


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
            k: v for k, v in queue_delay_stats_ms(tables, meta, direction, warmup_s).items() if k in STATS
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
        **station_airtime(meta, direction),
    }


STATION_AIRTIME = {
    "station_airtime_s": "wifi_station_airtime_s",
    "station_airtime_share": "wifi_station_airtime_share",
}
"""The summary keys of a WiFi station's hop and the core's diagnostics they copy."""


def station_airtime(meta: dict, direction: str) -> dict:
    """A WiFi station's hop (``air/laptop``): the airtime the access point charged the station
    over the whole run (its transmissions to it and the station's own received, PPDU airtime)
    and its share of all stations' (``meta['qdisc_diagnostics']``); ``{}`` for any other hop."""
    d = (meta.get("qdisc_diagnostics") or {}).get(direction) or {}
    return {k: float(d[src]) for k, src in STATION_AIRTIME.items() if src in d}


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
    p = _hop(tables, "packets", direction)
    return {"queues": {n: _queue_block(RunTables({"packets": p.filter(pc.equal(p.column("subqueue"), n))}),
                                       meta, direction, warmup_s) for n in names}}  # fmt: skip


def _queue_block(sub: RunTables, meta: dict, direction: str, warmup_s: float) -> dict:
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
    st = percentiles(done / 1e6, SHORT_QUANTILES)
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
        "fetch_ms": percentiles(ft * 1e3, SHORT_QUANTILES),
    }


def summarize(tables: Mapping[str, pa.Table], meta: dict, warmup_s: float = 0.0) -> dict:
    """The run summary printed by ``aqmlab run --json`` and stored as ``summary.json``, of a
    run's ``RunTables`` (or of any mapping of its tables: then what is built for it is built
    for this call only).

    JSON-serialisable (plain floats, ints, None). ``drops`` counts queue drops (overlimit,
    early, forced, head, fat_flow, ack_filter); random link loss is reported under ``drops_by_reason['loss']``.
    Probe streams (kind ``ping`` or present in ``probes``) are listed under ``probes``, not
    ``flows``.
    """
    tables = RunTables.of(tables)
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
    done = _completion_times_s(tables)
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
        "rtt_ms": percentiles(probe_rtt_ms(tables, flow, warmup_s), SHORT_QUANTILES),
        "induced_ms": {"p50": ind["p50"], "mean": ind["mean"]},
        "counts": probe_counts(tables, flow, warmup_s, end),
        "loss": probe_loss(tables, flow, warmup_s, end),
        "owd_ms": {
            d: percentiles(probe_owd_ms(tables, flow, d, warmup_s), SHORT_QUANTILES) for d in DIRECTIONS
        },
        "jitter_ms": {d: probe_jitter_ms(tables, flow, d, warmup_s) for d in DIRECTIONS},
        "ipdv_ms": {d: probe_ipdv_ms(tables, flow, d, warmup_s) for d in DIRECTIONS},
    }
