"""lpcc2013's numbers of one run, computed in the sweep workers (``run_metrics``): utilisation,
queue occupancy and delay, the best-effort share, fairness, the ping's queueing delay, and each
class's throughput over time."""

from __future__ import annotations

from aqmlab.lazy import lazy

np = lazy("numpy")
pa = lazy("pyarrow")
M = lazy("aqmlab.metrics")
SM = lazy("aqmlab.reproduce.metrics")

METRICS_FN = "aqmlab.reproduce.lpcc2013.metrics:run_metrics"
"""``run_metrics`` as the sweep workers import it; this module's source enters the run ids."""

DIR = "down"
CLASSES = ("be", "lp")
"""Flow labels of the best-effort and the low-priority class in every scenario."""
A_STEP_S = 1.0
"""3a's time bins (s): the study's figure plots shares over a 60 s run."""


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """The study's per-run numbers (computed in the sweep workers) and each class's throughput
    over time (extra table ``shares``, 60 rows a run: 3a's figure)."""
    pings = [int(i) for i, k in zip(M._col(tables["flows"], "flow"), M._strcol(tables, "flows", "kind"),
                                    strict=True) if k == "ping"]  # fmt: skip
    ping_q = np.concatenate([M.ping_queueing_delay_ms(tables, i) for i in pings]) if pings else np.array([])
    out = {
        "eta": M.utilization(tables, meta, DIR),
        "eq_qmax": M.normalized_mean_backlog(tables, meta, DIR),
        "eq_pkts": M.mean_backlog(tables, meta, DIR, "pkts"),
        "tcp_pct": M.class_share(tables, by="label", cls="be", traffic_only=True),
        "qdelay_mean_ms": SM.mean_queue_delay_ms(tables, meta, DIR),
        "fairness": SM.intra_fairness(tables, meta, CLASSES),
        "ping_qdelay_ms": float(ping_q.mean()) if ping_q.size else None,
    }
    t, per = SM.class_throughput_series(tables, meta, "label", A_STEP_S)
    extra = {"shares": pa.table({"t_s": t, **{f"{c}_bps": per.get(c, np.zeros_like(t)) for c in CLASSES}})}
    return out, extra
