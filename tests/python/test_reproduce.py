"""Reproduced studies whose tests have no file of their own (test_study_NAME.py), and metric
helpers they use."""

from __future__ import annotations

from aqmlab import metrics as M
from aqmlab.reproduce import Execution


def test_goodbadwifi2015_quick_shows_the_studys_orderings(tmp_path):
    """The quick reproduction (10/10 and 10/1, shortened tests, 2 runs) with the study's FIFO
    and fq_codel: fair queueing keeps the RRUL latency an order of magnitude below the FIFO's
    at both links, gives the VoIP stream no loss where the FIFO loses some, and shares the
    four uploads of different RTTs more evenly (Jain's index), but over WiFi cannot reach the
    queues below it; the JSON has the issue's shape."""
    from aqmlab.reproduce import goodbadwifi2015 as G

    o = G.run(ex=Execution(out=tmp_path, jobs=1), quick=True, qdiscs=["pfifo_fast", "fq_codel"])
    # rrul, voip x 2, rtt_fair on two links; wifi; web (3 cases x 2 pages) on 10/10: 2 qdiscs, 2 runs
    assert o.counts["failed"] == 0 and o.counts["total"] == 2 * 2 * 4 * 2 + 2 * 2 + 3 * 2 * 2 * 2
    j = G.to_json(o)
    for lk in ("10/10", "10/1"):
        fifo, fq = (
            j["rrul_induced_latency_ms"]["pfifo_fast"][lk],
            j["rrul_induced_latency_ms"]["fq_codel"][lk],
        )
        assert fq < fifo / 10, (lk, fq, fifo)
        assert j["rrul_goodput_down_mbps"]["fq_codel"][lk] > 8
    assert j["voip_loss_pct"]["fq_codel"]["rrul"]["1"] == 0 < j["voip_loss_pct"]["pfifo_fast"]["rrul"]["1"]
    for rate in ("10", "1"):
        assert j["rtt_fair_jain"]["fq_codel"][rate] > j["rtt_fair_jain"]["pfifo_fast"][rate]
    assert set(j["voip_loss_pct"]["fq_codel"]) == {"1up", "rrul"}
    # Over WiFi the driver's queues below the qdisc hold the latency fq_codel removes on a wire.
    assert (
        j["wifi_rrul"]["fq_codel"]["induced_latency_ms"]
        > 5 * j["rrul_induced_latency_ms"]["fq_codel"]["10/10"]
    )
    # The small page behind RRUL: the FIFO's standing queue slows every fetch's many round trips
    # far more than fq_codel, whose page flows are sparse (the study's ordering).
    web = j["web_fetch_norm"]
    assert web["fq_codel"]["small"]["rrul"]["10/10"] < web["pfifo_fast"]["small"]["rrul"]["10/10"]
    assert web["fq_codel"]["small"]["1up"]["10/10"] < web["pfifo_fast"]["small"]["1up"]["10/10"]
    assert web["pfifo_fast"]["small"]["1up"]["10/10"] > 1.5
    assert (tmp_path / "reproduce" / "goodbadwifi2015-quick" / "report.html").exists()
    for fig in ("rrul", "transient", "voip_cdf", "web"):
        assert (tmp_path / "reproduce" / "goodbadwifi2015-quick" / f"{fig}.png").stat().st_size > 5000


def test_metric_drop_share_jain_from_definition():
    import pyarrow as pa

    # x = drops / sent: 10/100 and 10/100 -> equal shares, index 1; 0/100 and 20/100 -> 1/2.
    f = pa.table({"label": ["ftp", "ftp", "web"], "packets_sent": pa.array([100, 100, 50], pa.uint64()),
                  "drops": pa.array([10, 10, 40], pa.uint64())})  # fmt: skip
    assert M.drop_share_jain({"flows": f}, "label", "ftp") == 1.0
    f2 = f.set_column(2, "drops", pa.array([0, 20, 0], pa.uint64()))
    assert M.drop_share_jain({"flows": f2}, "label", "ftp") == 0.5


def test_web_summary_from_definition():
    import pyarrow as pa

    # three exchanges: one before the warm-up, one completed in 250 ms, one never completed.
    w = pa.table({"t_request_ns": pa.array([0, 2 * 10**9, 3 * 10**9], pa.uint64()),
                  "response_time_ns": pa.array([10**8, 25 * 10**7, None], pa.uint64())})  # fmt: skip
    s = M.web_summary({"web": w}, warmup_s=1.0)
    assert (s["exchanges"], s["completed"], s["response_ms"]["p50"]) == (2, 1, 250.0)
