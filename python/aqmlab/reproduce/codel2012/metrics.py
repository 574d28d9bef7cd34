"""codel2012's numbers of one run, computed in the sweep workers (``run_metrics``): per hop the
sojourn percentiles, utilisation, drop rate, mean queue and kB sent, the FTPs' drop-share
fairness, and the dynamic link's timeline."""

from __future__ import annotations

from aqmlab.lazy import lazy

np = lazy("numpy")
pa = lazy("pyarrow")
M = lazy("aqmlab.metrics")
SM = lazy("aqmlab.reproduce.metrics")

METRICS_FN = "aqmlab.reproduce.codel2012.metrics:run_metrics"
"""``run_metrics`` as the sweep workers import it; this module's source enters the run ids."""


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """Per run and hop (``down``/``up``; the right-queue path's ``router``/``modem``/``cmts``): the
    sojourn percentiles of the packets it sent, utilisation, drop rate, mean queue and kB sent;
    the FTPs' drop-share fairness; for the dynamic link a 1-second timeline of delay and
    cumulative kB (extra table ``timeline``)."""
    out: dict = {}
    for d in M._strcol(tables, "links", "hop"):
        st = M.queue_delay_stats_ms(tables, meta, d)
        out[f"{d}_median_ms"], out[f"{d}_p75_ms"], out[f"{d}_p95_ms"] = st["p50"], st["p75"], st["p95"]
        out[f"{d}_max_ms"] = st["max"]
        out[f"{d}_utilization"] = M.utilization(tables, meta, d)
        arr = M.arrivals(tables, meta, d)
        drops = sum(M.drops_by_reason(tables, meta, d).values())
        out[f"{d}_drop_rate"] = drops / arr if arr else None
        out[f"{d}_mean_queue_pkts"] = M.mean_backlog(tables, meta, d, "pkts")
        out[f"{d}_kbytes"] = M.tx_bytes(tables, meta, d) / 1e3
    out["drop_share_jain"] = SM.drop_share_jain(tables, "label", "ftp")
    extra = {}
    rate = meta.get("scenario", {}).get("topology", {}).get("down", {}).get("rate")
    if isinstance(rate, list) and len(rate) > 1:
        extra["timeline"] = timeline(tables, meta, TIMELINE_STEP_S)
    return out, extra


TIMELINE_STEP_S = 0.05
"""The dynamic link's timeline bins: fine enough to see CoDel's recovery within one interval."""


def timeline(tables: dict, meta: dict, step_s: float) -> pa.Table:
    """Per ``step_s`` of the run: median and 95th percentile of the down bottleneck's sojourn delay
    of the packets sent in it, and the cumulative kB the bottleneck sent by its end."""
    t_out, delay = M.sojourn_times_ns(tables, meta, "down")
    end = int(meta["duration_ns"])
    edges = np.arange(0, end + 1, int(step_s * 1e9))
    idx = np.searchsorted(edges, t_out, side="right") - 1
    order = np.argsort(idx, kind="stable")
    idx, delay = idx[order], delay[order] / 1e6
    starts = np.searchsorted(idx, np.arange(len(edges)))  # bin k: delay[starts[k]:starts[k + 1]]
    q = M._hop(tables, "queue", "down")
    qt, qb = M._col(q, "t_ns"), M._col(q, "tx_bytes", np.float64)
    at = np.searchsorted(qt, edges[1:], side="right") - 1  # cumulative bytes at each bin's end
    median, p95 = binned_median_p95(delay, starts)
    return pa.table({"t_s": edges[1:] / 1e9, "median_ms": median, "p95_ms": p95,
                     "kbytes": np.where(at >= 0, qb[np.maximum(at, 0)], 0.0) / 1e3})  # fmt: skip


def binned_median_p95(values: np.ndarray, starts: np.ndarray) -> tuple[list, list]:
    """``np.median`` and ``np.percentile(.., 95)`` of each bin ``values[starts[k]:starts[k + 1]]``
    (None for an empty bin): one numpy call per distinct bin size over all bins of that size
    (thousands of bins per run, a few hundred sizes), each row computed as the 1-D call does."""
    counts = np.diff(starts)
    median, p95 = np.full(counts.size, np.nan), np.full(counts.size, np.nan)
    for n in np.unique(counts[counts > 0]):
        ks = np.flatnonzero(counts == n)
        rows = values[starts[ks][:, None] + np.arange(n)]
        median[ks], p95[ks] = np.median(rows, axis=1), np.percentile(rows, 95, axis=1)
    empty = counts == 0

    def listed(a: np.ndarray) -> list:
        return [None if e else v for e, v in zip(empty, a.tolist())]

    return listed(median), listed(p95)
