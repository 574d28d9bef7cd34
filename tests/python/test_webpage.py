"""The webpage flow through the Python layer: its table reaches the run summary, with fetch times
on an idle path equal to the analytic count of round trips (name lookup, then per object a
handshake and the response's slow-start rounds from the initial window)."""

from __future__ import annotations

import pyarrow as pa

from aqmlab import metrics as M
from aqmlab.api import run_dict


def test_webpage_summary_from_definition():
    # three fetches: one before the warm-up, one completed in 700 ms, one timed out.
    w = pa.table({"flow": pa.array([0, 0, 0], pa.uint32()),
                  "t_start_ns": pa.array([0, 2 * 10**9, 3 * 10**9], pa.uint64()),
                  "fetch_time_ns": pa.array([10**8, 7 * 10**8, None], pa.uint64()),
                  "timed_out": pa.array([0, 0, 1], pa.uint32())})  # fmt: skip
    s = M.webpage_summary({"webpage": w}, warmup_s=1.0)
    assert (s["fetches"], s["completed"], s["timed_out"]) == (2, 1, 1)
    assert s["fetch_ms"]["mean"] == 700.0


def test_idle_small_page_fetch_in_the_run_summary():
    # 16 kB main document (12 segments of 1448 B: IW 10 then 20, 2 rounds), then two 20 kB
    # objects in parallel (14 segments, 2 rounds each): 1 (lookup) + (1 + 2) + (1 + 2) = 7 RTT.
    sc = {
        "name": "page", "duration": "10s", "seed": 1,
        "topology": {"rtt": "50ms", "down": {"rate": "1Gbps"}, "up": {"rate": "1Gbps"}},
        "flows": [{"kind": "webpage", "page": "small", "interval": "2s", "iw": 10, "mss": 1448,
                   "delack": False}],
        "record": {"level": "summary"},
    }  # fmt: skip
    r = run_dict(sc)
    s = r.summary["webpage"]
    assert s["fetches"] == 5 and s["completed"] == 5 and s["timed_out"] == 0
    assert abs(s["fetch_ms"]["mean"] - 7 * 50) < 2.0
