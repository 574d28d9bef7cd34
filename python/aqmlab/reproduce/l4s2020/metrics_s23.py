"""l4s2020's numbers of one scenario-2 or scenario-3 run, computed in the sweep workers
(``run_metrics``) from the flow's TCP RTT and delivered bytes sampled every 50 ms.

The study plots and quotes the TCP RTT that Flent's socket_stats read from ``ss`` every 0.05 s:
the kernel's smoothed RTT (tcp_info's ``tcpi_rtt``, srtt). aqmlab's ``flow_series.srtt_ns`` is the
same estimator (RFC 6298's SRTT as tcp_rtt_estimator keeps it), sampled at the same step.

- ``peak_rtt_ms``: the largest srtt sample from the first rate step to the flow's end (the
  README's "maximum TCP RTT", read from the run's .flent.gz).
- ``above_1s_s``: from the first step to the last srtt sample above 1 s (0 when none is): the
  spike's length as the README measures the 50 -> 1 Mbit/s run's ("lasts for over 30 seconds"
  of a plot whose scale the spike exceeded), read as the time the RTT stays above 1 s.
- ``induced_peak_ms``: ``peak_rtt_ms`` less the flow's base RTT (the README's "100ms ... induced
  delay" of the 50 -> 25 Mbit/s run).
- ``spike_s``: from the first step to the last srtt sample whose induced delay exceeds half the
  spike's induced peak: the spike's length without a threshold of the reproduction's choosing
  (the README's "the spike lasts around 5 seconds", read from its figure).
- ``goodput_mbit`` and ``utilisation``: the bytes the flow delivered from its start to its end,
  as a rate and as a share of what the bottleneck's rate schedule could carry over that time."""

from __future__ import annotations

from aqmlab.lazy import lazy

np = lazy("numpy")
M = lazy("aqmlab.metrics")

METRICS_FN = "aqmlab.reproduce.l4s2020.metrics_s23:run_metrics"
"""``run_metrics`` as the sweep workers import it; this module's source enters the run ids."""

SPIKE_RTT_S = 1.0
"""``above_1s_s``'s threshold (s)."""
METRICS = ("peak_rtt_ms", "above_1s_s", "induced_peak_ms", "spike_s", "goodput_mbit", "utilisation")


def after_step(t_s, srtt_s, step_s: float, base_s: float) -> dict:
    """The spike numbers of srtt samples (times and values in s) after a step at ``step_s``."""
    keep = t_s >= step_s
    t, r = t_s[keep], srtt_s[keep]
    if not t.size:
        return dict.fromkeys(METRICS[:4])
    peak = float(r.max())
    over = t[r > SPIKE_RTT_S]
    half = (peak - base_s) / 2
    wide = t[r - base_s > half]
    return {"peak_rtt_ms": peak * 1e3, "above_1s_s": float(over[-1] - step_s) if over.size else 0.0,
            "induced_peak_ms": (peak - base_s) * 1e3, "spike_s": float(wide[-1] - step_s) if wide.size else 0.0}  # fmt: skip


def capacity_bits(steps, t0: float, t1: float) -> float:
    """Bits a rate schedule of (time s, Mbit/s) steps carries over [t0, t1)."""
    total = 0.0
    for k, (s, r) in enumerate(steps):
        e = steps[k + 1][0] if k + 1 < len(steps) else t1
        total += max(0.0, min(e, t1) - max(s, t0)) * r * 1e6
    return total


BOTTLENECK = ("up", "up")
"""(direction, hop) of the data's bottleneck (scenarios/l4s2020/rate_step.toml)."""


def bottleneck_steps(tables) -> list[tuple[float, float]]:
    """The data bottleneck's rate steps as (time s, Mbit/s), from the run's ``rate_schedule`` table."""
    rs = tables["rate_schedule"]
    d, h = M._strcol(tables, "rate_schedule", "dir"), M._strcol(tables, "rate_schedule", "hop")
    keep = (d == BOTTLENECK[0]) & (h == BOTTLENECK[1])
    t, r = M._col(rs, "t_ns", np.int64)[keep], M._col(rs, "rate_bps", np.int64)[keep]
    order = np.argsort(t, kind="stable")
    return [(float(a) / 1e9, float(b) / 1e6) for a, b in zip(t[order], r[order], strict=True)]


def run_metrics(tables: dict, meta: dict) -> tuple[dict, dict]:
    """The module docstring's numbers of the run's one flow."""
    steps = bottleneck_steps(tables)
    f, fs = tables["flows"], tables["flow_series"]
    start = float(M._col(f, "start_ns", np.int64)[0]) / 1e9
    base = float(M._col(f, "base_rtt_ns", np.int64)[0]) / 1e9
    t = M._col(fs, "t_ns", np.int64)
    order = np.argsort(t, kind="stable")
    t = t[order] / 1e9
    srtt = M._col(fs, "srtt_ns", np.int64)[order] / 1e9
    d = M._col(fs, "delivered_bytes")[order]
    live = t > start
    out = after_step(t[live], srtt[live], float(steps[1][0]), base)
    end = float(t[-1])
    bits = float(d[-1]) * 8
    out["goodput_mbit"] = bits / (end - start) / 1e6
    out["utilisation"] = bits / capacity_bits(steps, start, end)
    return out, {}
