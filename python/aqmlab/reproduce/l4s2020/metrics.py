"""l4s2020's numbers of one run, computed in the sweep workers (``run_metrics``): each flow's
steady-state delivery rate D_SS and Jain's index of the two.

The study's D_SS (steady_state.go, ``ssDeliveryRate``) is the mean of a flow's non-zero
``tcp_delivery_rate`` samples, polled by Flent every 0.05 s, whose times lie strictly between
61 s and 1 s before the flow's last sample. Linux's tcp_delivery_rate is the rate of the last
ACK's delivery sample: the segments delivered over about one round trip before it. aqmlab's
sample is the goodput of each ``record.interval`` (the testbed file's 50 ms): the growth of
``flow_series.delivered_bytes`` over the interval, taken at the interval's end. Over the 60 s
window both average to the bytes delivered per second; the single samples differ (one RTT of
delivery against one interval of it), and so does how often a sample is zero."""

from __future__ import annotations

from aqmlab.lazy import lazy

np = lazy("numpy")
M = lazy("aqmlab.metrics")

METRICS_FN = "aqmlab.reproduce.l4s2020.metrics:run_metrics"
"""``run_metrics`` as the sweep workers import it; this module's source enters the run ids."""

WINDOW_S = 60.0
"""D_SS's window (the study's steady_state run with a 60 s trailing window)."""
END_GAP_S = 1.0
"""The window ends this long before the last sample (ssDeliveryRate: tstart = tlast - win - 1)."""
FLOWS = ("flow1", "flow2")
"""The two uploads' labels in every case (scenarios/l4s2020/testbed.toml)."""


def steady_state_mbit(t_ns, delivered_bytes) -> float | None:
    """D_SS in Mbit/s of one flow's samples (times in ns, cumulative delivered bytes): the mean of
    the non-zero interval goodputs whose interval ends lie in (last - 61 s, last - 1 s); None
    without one."""
    t = np.asarray(t_ns, dtype=np.float64) / 1e9
    d = np.asarray(delivered_bytes, dtype=np.float64)
    if t.size < 2:
        return None
    rate = np.diff(d) * 8.0 / np.diff(t) / 1e6
    end = t[1:]
    start = t[-1] - WINDOW_S - END_GAP_S
    keep = (end > start) & (end < start + WINDOW_S) & (rate != 0)
    return float(rate[keep].mean()) if keep.any() else None


def jain(a: float | None, b: float | None) -> float | None:
    """Jain's index of two rates, (a + b)^2 / (2 (a^2 + b^2))."""
    if a is None or b is None or a * a + b * b == 0:
        return None
    return (a + b) ** 2 / (2 * (a * a + b * b))


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """``dss1_mbit``, ``dss2_mbit`` (flows ``flow1`` and ``flow2``) and their ``jain``."""
    f, fs = tables["flows"], tables["flow_series"]
    ids = dict(
        zip(M._strcol(tables, "flows", "label").tolist(), M._col(f, "flow", np.int64).tolist(), strict=True)
    )
    sid, t, d = M._col(fs, "flow", np.int64), M._col(fs, "t_ns", np.int64), M._col(fs, "delivered_bytes")
    out: dict = {}
    for k, label in enumerate(FLOWS, 1):
        m = sid == ids[label]
        order = np.argsort(t[m], kind="stable")
        out[f"dss{k}_mbit"] = steady_state_mbit(t[m][order], d[m][order])
    out["jain"] = jain(out["dss1_mbit"], out["dss2_mbit"])
    return out, {}
