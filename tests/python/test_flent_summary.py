"""Flent 2014-2015's latency summary (aqmlab.flent.summary) against vectors worked by hand from
netperf-wrapper's aggregators.py, runners.py and formatters.py and netperf's netlib.c, and a
request/response probe simulated over an idle path (its RTT known)."""

from __future__ import annotations

import numpy as np
import pytest

import aqmlab
from aqmlab import metrics as M
from aqmlab.flent import summary as S

MS = 1_000_000


def ns(*ms: float) -> np.ndarray:
    return np.array([round(m * MS) for m in ms], dtype=np.int64)


def test_step_values_interpolate_within_a_second_and_repeat_the_last_point_once():
    t, v = np.array([1.0, 2.0]), np.array([10.0, 20.0])
    grid = np.round(np.arange(4, 13) * 0.2, 6)  # 0.8 .. 2.4
    got = S.step_values(t, v, grid)
    # 0.8: before the first point, more than half a step from it; 1.0 .. 1.8 on the line;
    # 2.0: past the last point, which it takes once; later steps repeat nothing.
    want = [np.nan, 10, 12, 14, 16, 18, 20, np.nan, np.nan]
    np.testing.assert_allclose(got, want)


def test_step_values_leave_a_gap_where_the_next_point_is_over_a_second_away():
    t, v = np.array([0.0, 3.0]), np.array([0.0, 30.0])
    got = S.step_values(t, v, np.round(np.arange(16) * 0.2, 6))
    # Steps 0 .. 1.8 s are more than 1 s before the point at 3 s; 2.0 .. 2.8 s interpolate.
    want = [np.nan] * 10 + [20, 22, 24, 26, 28, 30]
    np.testing.assert_allclose(got, want)


def test_rr_points_report_each_interval_of_two_tenths_at_its_first_reply():
    # Replies every 60 ms from 60 ms: netperf reports at the first one 0.2 s or more after the
    # interval began (240 ms: 4 transactions, 16.67 trans/s as printed, 60.0 ms), then at 480 ms.
    send = ns(0, 60, 120, 180, 240, 300, 360, 420, 480)
    rtt = np.full(send.size, 60.0 * MS)
    t, v = S.rr_points(send, rtt)
    np.testing.assert_allclose(t, [0.24, 0.48])
    np.testing.assert_allclose(v, [1000 / 16.67, 1000 / 16.67])
    # The reply at 540 ms opens an interval that only the stream's end reports (netperf's
    # demo_interval_final): at 560 ms, one transaction over 80 ms (12.5 trans/s, 80 ms).
    t, v = S.rr_points(send, rtt, end_ns=560 * MS)
    np.testing.assert_allclose(t, [0.24, 0.48, 0.56])
    np.testing.assert_allclose(v, [1000 / 16.67, 1000 / 16.67, 80.0])


def test_rr_points_restart_the_interval_at_a_timeout_and_drop_a_period_out_of_band():
    # 50 ms replies until 200 ms (one report, 50 ms); the probe sent at 200 ms is lost and
    # times out at 2.2 s (netperf's demo_reset); replies then come every 50 ms again.
    send = ns(0, 50, 100, 150, 200, 2200, 2250, 2300, 2350, 2400)
    rtt = np.array([50, 50, 50, 50, np.nan, 50, 50, 50, 50, 50], dtype=float) * MS
    t, v = S.rr_points(send, rtt)
    np.testing.assert_allclose(t, [0.2, 2.4])
    np.testing.assert_allclose(v, [50.0, 50.0])
    # A reply 2.25 s late (no timeout: netperf 2.6.0) ends a period 11 times the first.
    send = ns(0, 50, 100, 150, 200, 2450)
    rtt = np.array([50, 50, 50, 50, 2250, 50], dtype=float) * MS
    t, v = S.rr_points(send, rtt)
    np.testing.assert_allclose(t, [0.2])


def test_mean_span_averages_the_series_per_step_and_takes_the_minimum_off():
    # Two series on one grid from 0: a flat 50 ms one and one that steps from 50 to 250 ms.
    t = np.round(np.arange(11) * 0.2, 6)
    a = (t, np.full(t.size, 50.0))
    b = (t, np.where(t < 1.0, 50.0, 250.0))
    # The grid runs from 0 to 1.8 s (ceil(2.0 / 0.2) = 10 steps): the mean per step is 50 for
    # five steps and 150 for five; less its minimum, 0 and 100: a mean of 50.
    assert S.mean_induced_latency_ms([a, b]) == pytest.approx(50.0)
    # Cutting 0.4 s from the head and none from the tail: 3 steps of 0 and 5 of 100.
    assert S.mean_induced_latency_ms([a, b], (0.4, 0.0)) == pytest.approx(62.5)
    assert S.mean_induced_latency_ms([(np.array([]), np.array([]))]) is None


def test_a_request_response_probe_on_an_idle_path_reports_its_round_trip():
    rtt_ms = 50
    sc = {
        "duration": "5s",
        "topology": {"rtt": f"{rtt_ms}ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "ping", "packet_size": "29B", "pattern": "rr"}],
    }
    res = aqmlab.run(sc)
    p = M.probe_table(res.tables, 0)
    send = p.column("t_send_ns").to_numpy().astype(np.int64)
    rtt = M._nullable_float(p, "rtt_ns")
    # One probe out at a time: each leaves as the last reply arrives.
    np.testing.assert_array_equal(send[1:], send[:-1] + rtt[:-1].astype(np.int64))
    # The path's round trip plus two 29-byte serialisations at 10 Mb/s (23.2 us each).
    one = rtt_ms + 2 * 29 * 8 / 10e6 * 1e3
    _, v = S.rr_points(send, rtt)
    assert v.size > 20
    np.testing.assert_allclose(v, one, rtol=2e-3)
