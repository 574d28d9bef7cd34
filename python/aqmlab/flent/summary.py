"""A run's "mean induced latency" as Flent computed it when it was netperf-wrapper (0.10, the
version of 2014-2015): each latency probe's series as its runner parsed the tool's output, the
series on one grid of 0.2 s steps, their mean per step (the test's ``Ping (ms) avg``), and that
mean's "mean_span" over the run (the combine mode of its ``box_combine``, ``ellipsis_combine``
and ``cdf_combine`` plots, whose axes read "Mean induced latency (ms)").

Sources, all in github.com/tohojo/flent before its rename (netperf_wrapper/): runners.py
``PingRunner`` (a point per reply: its arrival, as ``ping -D`` stamps it, and its RTT) and
``NetperfDemoRunner.parse`` (netperf's interim results, those of a sampling period more than an
order of magnitude off the running mean left out), transformers.py ``rr_to_ms``, aggregators.py
``TimeseriesAggregator``, runners.py ``AverageRunner`` and formatters.py ``_combine_data``.
netperf's side is src/netlib.c ``demo_interval_tick`` (with ``-D -0.2``, demo mode 2: after
each transaction, an interim result once 0.2 s have passed since the last) and ``demo_reset``
(a receive timeout restarts the interval, src/nettest_omni.c ``send_omni_inner``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

STEP_S = 0.2
"""Flent's step (settings.py ``STEP_SIZE``): the grid, ping's ``-i`` and netperf's ``-D -0.2``."""
MAX_DISTANCE_S = 5 * STEP_S
"""A step takes a series' value only this close to its next point (``max_distance``), half a step
before the series' first point."""
DEMO_ALPHA = 0.5
"""Weight of the running mean of netperf's sampling periods (``NetperfDemoRunner.parse``)."""
DEMO_BAND = 10.0
"""A period this many times longer or shorter than that mean is left out (same)."""


def arrival_order(send_ns: np.ndarray, rtt_ns: np.ndarray) -> np.ndarray:
    """The answered probes' indices in the order their replies arrived."""
    ok = np.flatnonzero(~np.isnan(rtt_ns))
    return ok[np.argsort(send_ns[ok] + rtt_ns[ok], kind="stable")]


def ping_points(send_ns: np.ndarray, rtt_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """ping's points: per answered probe, the reply's arrival (s) and the RTT (ms), by arrival."""
    order = arrival_order(send_ns, rtt_ns)
    return (send_ns[order] + rtt_ns[order]) / 1e9, rtt_ns[order] / 1e6


def rr_points(
    send_ns: np.ndarray, rtt_ns: np.ndarray, end_ns: int | None = None, step_s: float = STEP_S
) -> tuple[np.ndarray, np.ndarray]:
    """A request/response stream (``pattern = "rr"``) as Flent read netperf UDP_RR's demo mode:
    the interim results (end, ms = 1000 / transactions per second) the runner kept, rounded as
    netperf prints them (a rate that prints as 0.00 has no latency: ``rr_to_ms`` gives None).

    netperf counts a transaction at each reply and reports once ``step_s`` has passed since the
    interval began; a send that no reply triggered followed a receive timeout, which restarts the
    interval with nothing counted; at the stream's end (``end_ns``, None: no end) what the last
    interval counted is reported (``demo_interval_final``). The parser keeps a result whose
    period lies within DEMO_BAND of the running mean of the kept ones (that mean starts at the
    first period)."""
    sends = np.sort(send_ns.astype(np.int64))
    ok = ~np.isnan(rtt_ns)
    replies = np.sort((send_ns[ok] + rtt_ns[ok]).astype(np.int64))
    if sends.size == 0:
        return np.array([]), np.array([])
    timeouts = np.setdiff1d(sends[1:], replies)
    events = sorted([(int(t), 1) for t in replies] + [(int(t), 0) for t in timeouts])
    start, units, step_ns = int(sends[0]), 0, round(step_s * 1e9)
    t_out: list[float] = []
    v_out: list[float] = []
    avg = None
    if end_ns is not None:
        events = [e for e in events if e[0] < end_ns] + [(int(end_ns), 2)]
    for t, kind in events:
        if kind == 0:
            start, units = t, 0
            continue
        units += kind == 1
        if t - start >= step_ns or (kind == 2 and units > 0):
            # As netperf prints it: the period to the ms, the rate to two decimals.
            dur, rate = round((t - start) / 1e9, 3), round(units * 1e9 / (t - start), 2)
            avg = dur if avg is None else avg
            if avg / DEMO_BAND < dur < avg * DEMO_BAND:
                if rate > 0:
                    t_out.append(t / 1e9)
                    v_out.append(1000.0 / rate)
                avg = DEMO_ALPHA * avg + (1 - DEMO_ALPHA) * dur
            start, units = t, 0
    return np.asarray(t_out), np.asarray(v_out)


def probe_points(
    send_ns: np.ndarray, rtt_ns: np.ndarray, pattern: str | None, end_ns: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A probe stream's points as Flent's runner read its tool: ``rr_points`` for a
    request/response stream (``pattern = "rr"``, ending at ``end_ns``), else ``ping_points``."""
    return rr_points(send_ns, rtt_ns, end_ns) if pattern == "rr" else ping_points(send_ns, rtt_ns)


def step_values(t: np.ndarray, v: np.ndarray, grid: np.ndarray, step_s: float = STEP_S) -> np.ndarray:
    """A series (sorted times ``t``, values ``v``) on the grid as TimeseriesAggregator puts it (NaN
    for None): at step g, the line between the last point at or before g and the first after
    it, if that one is at most MAX_DISTANCE_S away; before the first point its value within half
    a step; past the last point its value once, at the first step within MAX_DISTANCE_S of it
    whose previous step holds another value."""
    out = np.full(grid.size, np.nan)
    if t.size == 0:
        return out
    i = np.searchsorted(t, grid, side="right")
    inner = (i > 0) & (i < t.size)
    j = i[inner]
    g = grid[inner]
    near = np.abs(g - t[j]) <= MAX_DISTANCE_S
    line = v[j - 1] + (v[j] - v[j - 1]) / (t[j] - t[j - 1]) * (g - t[j - 1])
    out[np.flatnonzero(inner)[near]] = line[near]
    head = (i == 0) & (np.abs(grid - t[0]) <= min(MAX_DISTANCE_S, step_s * 0.5))
    out[head] = v[0]
    for k in np.flatnonzero(i == t.size):
        if abs(grid[k] - t[-1]) <= MAX_DISTANCE_S:
            before = out[k - 1] if k > 0 else np.nan
            if not (np.isnan(before) or before == v[-1]):
                out[k] = v[-1]
    return out


def mean_induced_latency_ms(
    series: Sequence[tuple[np.ndarray, np.ndarray]],
    cutoff_s: tuple[float, float] | None = None,
    step_s: float = STEP_S,
) -> float | None:
    """The run's mean induced latency from its latency series ``(t s, ms)``: on a grid from the
    earliest point to past the latest, the mean per step of the series with a value there, then
    the mean of that mean less its minimum ("mean_span"), after leaving out ``cutoff_s`` = (head,
    tail) seconds of steps (None: nothing, as ``ellipsis_combine``; ``box_combine`` cuts Flent's
    DELAY, 5 s, at each end). None without a value."""
    series = [(t, v) for t, v in series if t.size]
    if not series:
        return None
    t0 = min(float(t[0]) for t, _ in series)
    t_max = max(float(t[-1]) for t, _ in series)
    grid = t0 + step_s * np.arange(int(np.ceil((t_max - t0) / step_s)))
    values = np.vstack([step_values(t, v, grid, step_s) for t, v in series])
    have = ~np.isnan(values)
    n = have.sum(axis=0)
    avg = np.where(n > 0, np.where(have, values, 0.0).sum(axis=0) / np.maximum(n, 1), np.nan)
    if cutoff_s is not None:
        head, tail = int(cutoff_s[0] / step_s), int(cutoff_s[1] / step_s)
        avg = avg[head : avg.size - tail if tail else None]
    avg = avg[~np.isnan(avg)]
    return float(np.mean(avg - avg.min())) if avg.size else None
