"""The run summary of a real run against a plain computation of each definition (docs/metrics.md)
row by row in Python: what `summarize` computes column-wise (codes, cached filters, sample
blocks, step functions) must be the same numbers."""

from collections import Counter

import numpy as np
import pytest

import aqmlab
from aqmlab import metrics as M

W_S = 1.0
SCENARIO = {
    "name": "reference", "duration": "4s",
    "topology": {"rtt": "20ms",
                 "down": {"rate": "10Mbps", "qdisc": {"kind": "fq_codel", "limit": "60p", "ecn": True}},
                 "up": {"rate": "2Mbps", "qdisc": "pfifo", "limit": "20p"}},
    "flows": [{"kind": "tcp", "cc": "cubic", "count": 6, "start": {"uniform": ["0s", "0.5s"], "per": "flow"}},
              {"kind": "tcp", "cc": "cubic", "direction": "up", "count": 2},
              {"kind": "tcp", "cc": "reno", "bytes": "100kB", "start": "1s", "ecn": True},
              {"kind": "udp", "rate": "3Mbps", "start": "0.2s", "stop": "2.5s"}],
    "record": {"level": "packets", "interval": "10ms"},
}  # fmt: skip


@pytest.fixture(scope="module")
def run():
    return aqmlab.run(SCENARIO, seed=3, warmup_s=W_S)


def _window(r) -> tuple[int, int]:
    return round(W_S * M.NS), int(r.meta["duration_ns"])


def _plain_link(rows: list[dict], w: int, end: int) -> dict:
    """One hop's block from its packets, one row at a time."""
    sent = [p for p in rows if p["outcome"] in ("sent", "marked")]
    counted = [p for p in rows if p["t_out_ns"] is not None and p["t_out_ns"] >= w]
    delays = [(p["t_out_ns"] - p["t_enqueue_ns"]) / 1e6 for p in sent if p["t_enqueue_ns"] >= w]
    drops = Counter(p["outcome"] for p in counted if p["outcome"] not in ("sent", "marked"))
    # the backlog's integral over [w, end]: each packet that entered the queue is in it from its
    # enqueue to its departure (still queued at the end: to the end)
    held = [(p, max(0, min(end if p["t_out_ns"] is None else p["t_out_ns"], end) - max(p["t_enqueue_ns"], w)))
            for p in rows if p["outcome"] in M.ENTERED]  # fmt: skip
    return {
        "arrivals": sum(p["t_enqueue_ns"] >= w for p in rows),
        "transmitted": sum(p in sent for p in counted),
        "tx_bytes": sum(p["size"] for p in counted if p["outcome"] in ("sent", "marked")),
        "marks": sum(p["outcome"] == "marked" for p in counted),
        "drops_by_reason": {r: drops.get(r, 0) for r in M.QUEUE_DROP_REASONS},
        "delays": delays,
        "mean_backlog_pkts": sum(d for _, d in held) / (end - w),
        "mean_backlog_bytes": sum(p["size"] * d for p, d in held) / (end - w),
    }


def test_link_blocks_are_the_row_by_row_counts(run):
    w, end = _window(run)
    rows = run.tables["packets"].to_pylist()
    links = run.summary["links"]
    assert set(links) == {"down", "up"}
    for hop, got in links.items():
        want = _plain_link([p for p in rows if p["hop"] == hop], w, end)
        for key in ("arrivals", "transmitted", "tx_bytes", "marks"):
            assert got[key] == want[key], (hop, key)
        assert {r: got["drops_by_reason"][r] for r in M.QUEUE_DROP_REASONS} == want["drops_by_reason"]
        assert got["drops"] == sum(want["drops_by_reason"].values()) > 0
        q = got["queue_delay_ms"]
        assert q["max"] == max(want["delays"])
        assert q["mean"] == pytest.approx(np.mean(want["delays"]), rel=1e-12)
        assert q["p95"] == pytest.approx(np.percentile(want["delays"], 95), rel=1e-12)
        for unit in ("pkts", "bytes"):
            assert got[f"mean_backlog_{unit}"] == want[f"mean_backlog_{unit}"], (hop, unit)
    assert links["down"]["marks"] > 0


def _delivered_at(samples: list[tuple[int, int]], t: int) -> int:
    """D(t): the delivered bytes at the last sample at or before t (0 before the first)."""
    return max((d for ts, d in samples if ts <= t), default=0)


def _plain_goodput(samples: list[tuple[int, int]], flow: dict, w: int) -> float | None:
    """``goodput_bps`` by its definition: from the first sample at or after max(W, start) to the
    first sample at or after the completion (a finished transfer) or the last sample."""
    t0 = max(w, flow["start_ns"])
    a = next((s for s in samples if s[0] >= t0), None)
    done = flow["completed_ns"]
    b = next((s for s in samples if s[0] >= done), samples[-1]) if done is not None else samples[-1]
    if a is None or b[0] <= a[0]:
        return None
    return (b[1] - a[1]) * 8 * M.NS / (b[0] - a[0])


def test_flow_blocks_are_the_per_flow_computations(run):
    w, end = _window(run)
    rows = run.tables["flow_series"].to_pylist()
    series = sorted((s["flow"], s["t_ns"], s["delivered_bytes"]) for s in rows)
    flows = {f["flow"]: f for f in run.tables["flows"].to_pylist()}
    totals: Counter = Counter()
    summary = run.summary["flows"]
    assert [f["id"] for f in summary] == sorted(flows)
    for f in summary:
        samples = [(t, d) for fid, t, d in series if fid == f["id"]]
        delivered = _delivered_at(samples, end) - _delivered_at(samples, w)
        assert f["bytes_delivered"] == delivered
        gp = _plain_goodput(samples, flows[f["id"]], w)
        assert f["goodput_mbps"] == (None if gp is None else pytest.approx(gp / 1e6, rel=1e-12))
        totals[f["direction"]] += delivered
    got = run.summary["goodput_mbps"]
    for d in ("down", "up"):
        assert got[d] == pytest.approx(totals[d] * 8 * M.NS / (end - w) / 1e6, rel=1e-12)
    assert any(f["completion_s"] is not None for f in summary)
