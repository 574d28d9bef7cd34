"""Flent's qdisc statistics of a run's queues: tc's raw records of the ``queue`` samples and, for
a discipline with sub-queues, of each sub-queue from the run's packets, and their grid."""

from __future__ import annotations

import numpy as np
import pyarrow.compute as pc

from aqmlab import metrics as M
from aqmlab.flent.series import T0, _Builder
from aqmlab.runtables import RunTables


def _queue_samples(run, hop: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The ``queue`` table's samples of one hop: their times (ns, sorted) and, at each,
    ``backlog_bytes``, ``backlog_pkts``, the cumulative ``drops`` and ``marks``, and ``delay`` (ms):
    the backlog's drain time at the scheduled rate, ``backlog_bytes * 8 / rate_bps``."""
    if run.tables.get("queue") is None:
        raise M.MissingTableError(f"run '{run.run_id}' has no 'queue' table; qdisc statistics need it")
    q = M._hop(run.tables, "queue", hop)
    t = q.column("t_ns").to_numpy().astype(np.int64)
    order = np.argsort(t, kind="stable")
    cols = {c: q.column(c).to_numpy().astype(np.float64)[order] for c in
            ("backlog_bytes", "backlog_pkts", "drops", "marks", "rate_bps")}  # fmt: skip
    rate = cols.pop("rate_bps")
    cols["delay"] = np.where(rate > 0, cols["backlog_bytes"] * 8 / np.maximum(rate, 1) * 1e3, 0)
    return t[order], cols


def _subqueue_samples(run, hop: str, name: str, t_ns: np.ndarray) -> dict[str, np.ndarray]:
    """What ``_queue_samples`` gives, at the times ``t_ns``, for sub-queue ``name`` of one
    hop, from its ``packets`` rows: the backlog (``metrics.backlog_steps``), the drops and
    marks up to each time (by ``t_out_ns``), and ``delay`` = the mean sojourn (ms) of the packets
    that started transmission since the previous time (NaN where none did)."""
    p = M._hop(run.tables, "packets", hop)
    sub = RunTables({"packets": p.filter(pc.equal(p.column("subqueue"), name))})
    cols = {}
    for unit in ("bytes", "pkts"):
        st, sv, _ = M.backlog_steps(sub, run.meta, hop, unit, "packets")
        i = np.searchsorted(st, t_ns, side="right") - 1
        cols[f"backlog_{unit}"] = np.where(i >= 0, sv[np.clip(i, 0, None)], 0.0)
    rows = sub["packets"]
    t_out = M._nullable_float(rows, "t_out_ns")
    for col, outcomes in (("drops", M.QUEUE_DROP_REASONS), ("marks", ("marked",))):
        events = np.sort(t_out[sub.isin("packets", "outcome", outcomes)])
        cols[col] = np.searchsorted(events, t_ns, side="right").astype(np.float64)
    sent = sub.isin("packets", "outcome", M.TRANSMITTED)
    order = np.argsort(t_out[sent], kind="stable")
    dep = t_out[sent][order]
    sojourn = (dep - M._nullable_float(rows, "t_enqueue_ns")[sent][order]) / 1e6
    k = np.searchsorted(dep, t_ns, side="right")
    n = np.diff(np.r_[0, k])
    total = np.diff(np.r_[0.0, np.r_[0.0, np.cumsum(sojourn)][k]])
    cols["delay"] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return cols


def _qdisc_stats(run, hop: str, b: _Builder) -> dict[str, tuple[list[dict], dict[str, np.ndarray]]]:
    """Flent's qdisc statistics (``_qdisc_raw``) of one hop's queue and, where its discipline
    has sub-queues (``meta['subqueues']``: dualpi2's ``l`` and ``c``) and the run kept its
    packets, of each sub-queue, at the queue's sample times: by interface name (the hop, or
    ``<hop>.<sub-queue>``)."""
    t, cols = _queue_samples(run, hop)
    out = {hop: _qdisc_raw(t, cols, b)}
    # the packets table has no row for a packet still queued when the run ends: no sample then
    t = t[t < int(run.meta["duration_ns"])]
    if run.tables.get("packets") is not None and "subqueue" in run.tables["packets"].column_names:
        for name in (run.meta.get("subqueues") or {}).get(hop) or []:
            out[f"{hop}.{name}"] = _qdisc_raw(t, _subqueue_samples(run, hop, name, t), b)
    return out


def _qdisc_raw(
    t_ns: np.ndarray, cols: dict[str, np.ndarray], b: _Builder
) -> tuple[list[dict], dict[str, np.ndarray]]:
    """tc's raw records of queue samples (``_queue_samples``) and their grid: ``dropped`` and
    ``ecn_mark`` per interval (format v4), a record without ``delay`` where it is NaN."""
    ts = t_ns / 1e9
    dropped = np.diff(np.r_[0.0, cols["drops"]])
    ecn = np.diff(np.r_[0.0, cols["marks"]])
    delay = cols["delay"]
    raw = []
    for i in range(ts.size):
        rec = {"t": T0 + float(ts[i]), "backlog_bytes": int(cols["backlog_bytes"][i]),
               "backlog_pkts": int(cols["backlog_pkts"][i]), "dropped": int(dropped[i]), "ecn_mark": int(ecn[i])}  # fmt: skip
        if np.isfinite(delay[i]):
            rec["delay"] = float(delay[i])
        raw.append(rec)
    grid: dict[str, np.ndarray] = {}
    for k in ("backlog_bytes", "backlog_pkts", "delay"):
        grid[k] = (
            np.interp(b.x, ts, cols[k], left=np.nan, right=np.nan) if ts.size else np.full(b.x.size, np.nan)
        )
    # per-interval counts on the grid: counter difference between grid points
    for k, v in (("dropped", cols["drops"]), ("ecn_mark", cols["marks"])):
        if ts.size:
            idx = np.searchsorted(ts, b.x, side="right") - 1
            c = np.where(idx >= 0, v[np.clip(idx, 0, None)], 0.0)
            grid[k] = np.r_[c[0], np.diff(c)]
        else:
            grid[k] = np.full(b.x.size, np.nan)
    return raw, grid
