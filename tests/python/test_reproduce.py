"""Reproduced studies whose tests have no file of their own (test_study_NAME.py), and metric
helpers they use."""

from __future__ import annotations

from aqmlab import metrics as M
from aqmlab.reproduce import metrics as SM


def test_metric_drop_share_jain_from_definition():
    import pyarrow as pa

    # x = drops / sent: 10/100 and 10/100 -> equal shares, index 1; 0/100 and 20/100 -> 1/2.
    f = pa.table({"label": ["ftp", "ftp", "web"], "packets_sent": pa.array([100, 100, 50], pa.uint64()),
                  "drops": pa.array([10, 10, 40], pa.uint64())})  # fmt: skip
    assert SM.drop_share_jain({"flows": f}, "label", "ftp") == 1.0
    f2 = f.set_column(2, "drops", pa.array([0, 20, 0], pa.uint64()))
    assert SM.drop_share_jain({"flows": f2}, "label", "ftp") == 0.5


def test_web_summary_from_definition():
    import pyarrow as pa

    # three exchanges: one before the warm-up, one completed in 250 ms, one never completed.
    w = pa.table({"t_request_ns": pa.array([0, 2 * 10**9, 3 * 10**9], pa.uint64()),
                  "response_time_ns": pa.array([10**8, 25 * 10**7, None], pa.uint64())})  # fmt: skip
    s = M.web_summary({"web": w}, warmup_s=1.0)
    assert (s["exchanges"], s["completed"], s["response_ms"]["p50"]) == (2, 1, 250.0)
