"""The webpage flow through the Python layer: its table reaches the run summary, with fetch times
on an idle path equal to the analytic count of round trips (name lookup, then per connection a
handshake and the responses' slow-start rounds), over persistent connections or one per object;
the resolved scenario writes the defaults of timeout and persistent."""

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


def _idle_page(page: str, persistent: bool) -> dict:
    return {
        "name": "page", "duration": "10s", "seed": 1,
        "topology": {"rtt": "50ms", "down": {"rate": "1Gbps"}, "up": {"rate": "1Gbps"}},
        "flows": [{"kind": "webpage", "page": page, "interval": "2s", "iw": 10, "mss": 1448,
                   "delack": False, "persistent": persistent}],
        "record": {"level": "summary"},
    }  # fmt: skip


def test_idle_small_page_fetch_in_the_run_summary():
    # 16 kB main document (12 segments of 1448 B: IW 10 then 20, 2 rounds), then two 20 kB
    # objects in parallel (14 segments, 2 rounds each): 1 (lookup) + (1 + 2) + (1 + 2) = 7 RTT.
    # Persistent: the first object rides the main document's connection (window 10 + 12: 1
    # round), the second opens one (1 + 2): the same 7 RTT.
    for persistent in (False, True):
        s = run_dict(_idle_page("small", persistent)).summary["webpage"]
        assert s["fetches"] == 5 and s["completed"] == 5 and s["timed_out"] == 0
        assert abs(s["fetch_ms"]["mean"] - 7 * 50) < 2.0


def test_idle_large_page_persistent_saves_handshakes_and_slow_start():
    # 100 kB main document (70 segments: 10, 20, 40 -> 3 rounds), then 109 objects of 26606 or
    # 26607 B (19 segments each, 2 rounds from IW 10) over 4 workers.
    # One connection per object: 109 objects in ceil(109 / 4) = 28 waves of 1 + 2 RTT:
    # 1 + (1 + 3) + 28 * 3 = 89 RTT.
    # Persistent: worker 0's connection starts at window 10 + 70 and the others' from their
    # first object's 10 + 19 on, so after a worker's first object each takes 1 round: worker 0
    # takes object 1 (t 5 + 1 = 6), workers 1-3 open theirs for objects 2-4 (t 5 + 3 = 8);
    # worker 0 alone then fetches objects 5 and 6 (t 7, 8); from t 8 all four take one object
    # per round: the remaining 109 - 6 = 103 objects in 26 rounds, t 8 + 26 = 34 RTT.
    times = {}
    for persistent in (False, True):
        s = run_dict(_idle_page("large", persistent)).summary["webpage"]
        assert s["completed"] >= 1
        times[persistent] = s["fetch_ms"]["mean"]
    assert abs(times[False] - 89 * 50) < 10.0, times
    assert abs(times[True] - 34 * 50) < 10.0, times


def _page_against_bulk(qdisc: str, hash_connections: bool) -> float:
    """The page's share of the bottleneck: its 4 workers each fetching a 50 MB object (all
    backlogged for the whole run) against 2 bulk TCP downloads through `qdisc`."""
    big = "50MB"
    sc = {
        "name": "page-vs-bulk", "duration": "30s", "seed": 1,
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "qdisc": qdisc},
                     "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "webpage", "objects": ["1000B", big, big, big, big], "workers": 4,
                   "interval": "100s", "hash_connections": hash_connections},
                  {"kind": "tcp", "count": 2}],
        "record": {"level": "summary"},
    }  # fmt: skip
    flows = run_dict(sc).summary["flows"]
    page = sum(f["bytes_delivered"] for f in flows if f["kind"] == "webpage")
    return page / sum(f["bytes_delivered"] for f in flows)


def test_hashing_qdiscs_share_per_connection():
    # Linux's fq_codel and sfq hash each packet's 5-tuple (sch_fq_codel.c fq_codel_classify ->
    # skb_get_hash; sch_sfq.c sfq_hash), and each of the page's connections has its own port:
    # N = 4 backlogged connections and M = 2 bulk flows get 1/(N + M) of the link each under
    # round robin, the page N/(N + M) = 2/3. With the page as one 5-tuple it is one of 1 + M
    # flows: 1/3.
    for qdisc in ("fq_codel", "sfq"):
        on, off = _page_against_bulk(qdisc, True), _page_against_bulk(qdisc, False)
        assert abs(on - 4 / 6) < 0.04, (qdisc, on)
        assert abs(off - 1 / 3) < 0.04, (qdisc, off)
