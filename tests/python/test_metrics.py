"""Metrics against hand-computed values (see synth.py's docstring for the derivations)."""

import json

import numpy as np
import pyarrow as pa
import pytest
import synth
from synth import MS

from aqmlab import metrics as M
from aqmlab.reproduce import metrics as SM


@pytest.fixture
def tiny():
    return synth.run()


def test_sojourn_delays(tiny):
    t, m = tiny
    assert sorted(M.sojourn_delays_ns(t, m, "down")) == [0, 1 * MS, 2 * MS, 4 * MS]
    s = M.queue_delay_stats_ms(t, m, "down")
    assert s["mean"] == pytest.approx(1.75)  # (0+1+2+4)/4
    assert s["max"] == pytest.approx(4.0)
    assert s["p50"] == pytest.approx(1.5)  # between 1 and 2
    assert s["p75"] == pytest.approx(2.5)  # rank 2.25 -> 2 + 0.25*(4-2)
    x, f = M.queue_delay_cdf_ms(t, m, "down")
    assert list(x) == [0.0, 1.0, 2.0, 4.0]
    assert list(f) == [0.25, 0.5, 0.75, 1.0]
    # warm-up 5 ms: only p5 (enqueued at 10 ms) counts
    assert list(M.sojourn_delays_ns(t, m, "down", warmup_s=0.005)) == [4 * MS]
    assert M.queue_delay_stats_ms(t, m, "up")["max"] == pytest.approx(0.8)


def test_delay_stats_none_without_packets():
    t, m = synth.run(drop=("packets",))
    s = M.queue_delay_stats_ms(t, m, "down")
    assert all(v is None for v in s.values())
    with pytest.raises(M.MissingTableError, match="packets"):
        M.sojourn_delays_ns(t, m, "down")


def test_backlog_step_function_exact(tiny):
    t, m = tiny
    ts, v, exact = M.backlog_steps(t, m, "down", "bytes", "packets")
    assert exact
    # value on [ts[i], ts[i+1])
    got = {int(a): float(b) for a, b in zip(ts, v)}
    assert got[0] == 2000 and got[1 * MS] == 1500 and got[2 * MS] == 500
    assert got[3 * MS] == 0 and got[10 * MS] == 1000 and got[14 * MS] == 0


def test_mean_backlog_exact_and_sampled(tiny):
    t, m = tiny
    assert M.mean_backlog(t, m, "down", "bytes", source="packets") == pytest.approx(400.0)  # 8000 B*ms/20ms
    assert M.mean_backlog(t, m, "down", "pkts", source="packets") == pytest.approx(0.45)  # 9 pkt*ms / 20 ms
    # the 1 ms samples hit every change point here, so sample-and-hold gives the same numbers
    assert M.mean_backlog(t, m, "down", "bytes", source="queue") == pytest.approx(400.0)
    assert M.mean_backlog(t, m, "up", "bytes", source="packets") == pytest.approx(4.0)  # 100 B * 0.8/20
    # E[Q]/Q_max with limit "100p"
    assert M.normalized_mean_backlog(t, m, "down") == pytest.approx(0.45 / 100)
    # byte limit "150000B" -> E[Q] in bytes
    assert M.normalized_mean_backlog(t, m, "up") == pytest.approx(4.0 / 150000)
    # warm-up 10 ms: window [10, 20) ms holds 1000 B for 4 ms -> 400 B over 10 ms
    assert M.mean_backlog(t, m, "down", "bytes", warmup_s=0.010) == pytest.approx(400.0)
    # warm-up 2 ms: [2,3) 500, [10,14) 1000 -> 4500 / 18
    assert M.mean_backlog(t, m, "down", "bytes", warmup_s=0.002) == pytest.approx(4500 / 18)


def test_mean_backlog_known_step_function():
    """E[Q] of a sampled step function: samples 0, 4, 2, 0 pkts every 5 ms over 20 ms = 1.5."""
    q = pa.table(
        {
            "t_ns": pa.array([0, 5 * MS, 10 * MS, 15 * MS], pa.uint64()),
            "dir": ["down"] * 4,
            "backlog_bytes": pa.array([0, 6000, 3000, 0], pa.uint64()),
            "backlog_pkts": pa.array([0, 4, 2, 0], pa.uint64()),
            "tx_bytes": pa.array([0] * 4, pa.uint64()),
            "drops": pa.array([0] * 4, pa.uint64()),
            "marks": pa.array([0] * 4, pa.uint64()),
            "rate_bps": pa.array([8_000_000] * 4, pa.uint64()),
        }
    )
    m = {"duration_ns": 20 * MS}
    assert M.mean_backlog({"queue": q}, m, "down", "pkts") == pytest.approx(1.5)
    assert M.mean_backlog({"queue": q}, m, "down", "bytes") == pytest.approx(2250.0)


@pytest.mark.parametrize(
    ("rows", "size", "held_ns"),
    [
        (4096, 1 << 20, 1 << 40),  # each product fits in 64 bits, their sum (2^72) does not
        (3, (1 << 32) - 1, (1 << 52) + 7),  # one product alone exceeds 2^63
    ],
)
def test_mean_backlog_exact_beyond_64_bits(rows, size, held_ns):
    """E[Q] from packets is the integral of what each packet held over its time in the queue,
    divided by the window: with sums past 2^63 it still equals Python's exact integer ratio."""
    end = held_ns + 5
    starts = [1 + (i % 3) for i in range(rows)]
    p = pa.table(
        {
            "dir": ["down"] * rows,
            "size": pa.array([size - (i % 2) for i in range(rows)], pa.uint32()),
            "t_enqueue_ns": pa.array(starts, pa.uint64()),
            "t_out_ns": pa.array([s + held_ns for s in starts[:-1]] + [None], pa.uint64()),
            "outcome": ["sent"] * rows,
        }
    )
    m = {"duration_ns": end}
    held = [min(s + held_ns, end) - s for s in starts[:-1]] + [end - starts[-1]]
    sizes = p["size"].to_pylist()
    assert M.mean_backlog({"packets": p}, m, "down", "pkts") == sum(held) / end
    assert M.mean_backlog({"packets": p}, m, "down", "bytes") == sum(s * h for s, h in zip(sizes, held)) / end


def test_spike_duration_exact(tiny):
    t, m = tiny
    # > 600 B: [0,2) ms (2000, 1500) and [10,14) ms (1000): longest 4 ms
    assert SM.spike_duration_s(t, m, "down", threshold_bytes=600) == (pytest.approx(0.004), True)
    # > 1200 B: [0,2) ms
    assert SM.spike_duration_s(t, m, "down", threshold_bytes=1200)[0] == pytest.approx(0.002)
    # strictly more than: 1500 B only on [0,1)
    assert SM.spike_duration_s(t, m, "down", threshold_bytes=1500)[0] == pytest.approx(0.001)
    assert SM.spike_duration_s(t, m, "down", threshold_bytes=2000)[0] == 0.0
    # as delay at the link rate: 1 ms at 8 Mb/s = 1000 B -> >1000 B on [0,2) ms only
    assert SM.spike_duration_s(t, m, "down", threshold_delay_s=0.001)[0] == pytest.approx(0.002)
    # warm-up 1 ms clips the first spike: [1,2) ms above 1200 B
    assert SM.spike_duration_s(t, m, "down", threshold_bytes=1200, warmup_s=0.001)[0] == pytest.approx(0.001)


def test_spike_duration_hand_sequence():
    """Enqueue/dequeue sequence: A 1500 B in at 0 out at 30 ms, B 1500 B in at 10 out at 50,
    C 1500 B in at 20 out at 60 (sent); D overlimit at 25 never enters.
    Backlog: [0,10) 1500, [10,20) 3000, [20,30) 4500, [30,50) 3000, [50,60) 1500.
    > 2000 B from 10 to 50 ms = 40 ms; > 3000 B from 20 to 30 = 10 ms."""
    p = pa.table(
        {
            "dir": ["down"] * 4,
            "flow": pa.array([0, 0, 0, 0], pa.uint32()),
            "size": pa.array([1500] * 4, pa.uint32()),
            "t_enqueue_ns": pa.array([0, 10 * MS, 20 * MS, 25 * MS], pa.uint64()),
            "t_out_ns": pa.array([30 * MS, 50 * MS, 60 * MS, 25 * MS], pa.uint64()),
            "outcome": ["sent", "sent", "marked", "overlimit"],
        }
    )
    m = {"duration_ns": 100 * MS}
    assert SM.spike_duration_s({"packets": p}, m, "down", threshold_bytes=2000)[0] == pytest.approx(0.040)
    assert SM.spike_duration_s({"packets": p}, m, "down", threshold_bytes=3000)[0] == pytest.approx(0.010)
    assert SM.spike_threshold_bytes(0.060, 2_000_000) == pytest.approx(15000)
    assert SM.spike_threshold_bytes(0.100, 2_000_000) == pytest.approx(25000)


def test_spike_duration_approximate_from_queue():
    t, m = synth.run(drop=("packets",))
    d, exact = SM.spike_duration_s(t, m, "down", threshold_bytes=600)
    assert not exact
    assert d == pytest.approx(0.004)  # the 1 ms samples catch every change here


def test_utilization_with_rate_step(tiny):
    t, m = tiny
    assert M.capacity_bytes(t, m, "down") == pytest.approx(15000)  # 10ms*1000 + 10ms*500
    assert M.utilization(t, m, "down") == pytest.approx(4000 / 15000)
    assert M.utilization(t, m, "up") == pytest.approx(200 / 2500)
    # warm-up 10 ms: capacity 10 ms * 500 B/ms = 5000 B, transmitted p5 (1000 B, at 14 ms)
    assert M.capacity_bytes(t, m, "down", 0.010) == pytest.approx(5000)
    assert M.utilization(t, m, "down", 0.010) == pytest.approx(1000 / 5000)
    # without packets: links.tx_bytes minus the cumulative counter sampled at 10 ms (3000)
    t2, m2 = synth.run(drop=("packets",))
    assert M.utilization(t2, m2, "down", 0.010) == pytest.approx(1000 / 5000)


def test_drops_marks_counts(tiny):
    t, m = tiny
    by = M.drops_by_reason(t, m, "down")
    zero = {"early", "forced", "fat_flow", "ack_filter"}
    assert by == {"overlimit": 1, "head": 1, "loss": 2} | dict.fromkeys(zero, 0)
    assert M.marks(t, m, "down") == 1
    assert M.arrivals(t, m, "down") == 6 and M.tx_packets(t, m, "down") == 4
    # warm-up 1 ms: the overlimit drop (0.5 ms) is out, the head drop (3 ms) stays; mark at 2 ms stays
    by = M.drops_by_reason(t, m, "down", 0.001)
    assert by["overlimit"] == 0 and by["head"] == 1
    t2, m2 = synth.run(drop=("packets",))
    assert M.drops_by_reason(t2, m2, "down")["overlimit"] == 1
    assert M.marks(t2, m2, "down", 0.003) == 0  # counter 1 at 3 ms, total 1


def test_goodput_completion_group(tiny):
    t, m = tiny
    assert M.goodput_bps(t, m, 0) == pytest.approx(2850 * 8 / 0.019)  # 150 B/ms = 1.2 Mb/s
    assert M.goodput_bps(t, m, 0) == pytest.approx(1.2e6)
    assert M.goodput_bps(t, m, 1) == pytest.approx(1000 * 8 / 0.015)  # 1..16 ms
    assert M.goodput_bps(t, m, 3) == pytest.approx(500 * 8 / 0.016)  # 2..18 ms
    assert M.goodput_bps(t, m, 0, warmup_s=0.009) == pytest.approx(1.2e6)
    # without flow_series: bytes_delivered over [start, completed or end]
    t2, m2 = synth.run(drop=("flow_series",))
    assert M.goodput_bps(t2, m2, 0) == pytest.approx(2850 * 8 / 0.020)
    assert M.goodput_bps(t2, m2, 1) == pytest.approx(1000 * 8 / 0.015)
    assert M.completion_time_s(t, 1) == pytest.approx(0.015)
    assert M.completion_time_s(t, 3) == pytest.approx(0.016)
    assert M.completion_time_s(t, 0) is None
    g = SM.group_response_times_s(t)
    assert g[1] == pytest.approx(0.017)  # first SYN 1 ms, last ACK 18 ms
    assert g[0] is None  # unfinished


def test_jain_and_shares(tiny):
    assert M.jain_index([1, 1, 1, 1]) == pytest.approx(1.0)
    assert M.jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert M.jain_index([1, 3]) == pytest.approx(16 / 20)
    assert M.jain_index([]) is None
    t, m = tiny
    # delivered bytes: cubic 2850, ledbat 1000+500, ping 400 -> total 4750
    assert M.class_share(t, "cc", "cubic") == pytest.approx(2850 / 4750)
    assert M.class_share(t, "kind", "tcp") == pytest.approx(4350 / 4750)
    assert M.class_share(t, "cc", "cubic", traffic_only=True) == pytest.approx(2850 / 4350)  # ping left out
    pj = SM.per_class_jain(t, m, "cc")
    g1, g3 = 1000 * 8 / 0.015, 500 * 8 / 0.016
    assert pj["ledbat"] == pytest.approx((g1 + g3) ** 2 / (2 * (g1**2 + g3**2)))
    assert pj["cubic"] == pytest.approx(1.0)
    # F = (F_cubic + F_ledbat) / 2 over the hand-computed goodputs above
    j = (g1 + g3) ** 2 / (2 * (g1**2 + g3**2))
    assert SM.intra_fairness(t, m, ("cubic", "ledbat"), by="cc") == pytest.approx((1.0 + j) / 2)
    assert SM.intra_fairness(t, m, ("cubic", "reno"), by="cc") is None  # no reno flow


def test_ping_queueing_delay_is_rtt_minus_the_minimum_seen(tiny):
    t, _m = tiny
    assert list(M.ping_queueing_delay_ms(t, 2)) == [0, 2, 4, 0]  # rtt 10, 12, 14, 10 ms
    # The minimum is the smallest RTT seen, not the path's base RTT: with every RTT raised by
    # 5 ms the queueing delays are the same (induced latency would grow by 5 ms).
    pr = t["probes"]
    up = [None if x is None else x + 5 * MS for x in pr["rtt_ns"].to_pylist()]
    t2 = dict(
        t, probes=pr.set_column(pr.schema.get_field_index("rtt_ns"), "rtt_ns", pa.array(up, pa.uint64()))
    )
    assert list(M.ping_queueing_delay_ms(t2, 2)) == [0, 2, 4, 0]
    assert list(M.induced_latency_ms(t2, 2)) == [5, 7, 9, 5]
    # From 10 ms on only the probes at 12 and 16 ms count: rtt 14 and 10 ms.
    assert list(M.ping_queueing_delay_ms(t, 2, warmup_s=0.010)) == [4, 0]


def test_mean_queue_delay_ms(tiny):
    t, m = tiny
    # E[Q] = 400 B (test_mean_backlog_exact_and_sampled) at 8 Mb/s: 400 x 8 / 8e6 s = 0.4 ms
    assert SM.mean_queue_delay_ms(t, m, "down", source="packets") == pytest.approx(0.4)
    # 4 B at 1 Mb/s = 0.032 ms
    assert SM.mean_queue_delay_ms(t, m, "up", source="packets") == pytest.approx(0.032)


def test_probes(tiny):
    t, _m = tiny
    assert list(M.probe_rtt_ms(t, 2)) == [10, 12, 14, 10]
    assert list(M.induced_latency_ms(t, 2)) == [0, 2, 4, 0]
    assert float(np.mean(M.induced_latency_ms(t, 2))) == pytest.approx(1.5)
    assert list(M.probe_owd_ms(t, 2, "up")) == [5, 5, 6, 5]
    assert list(M.probe_owd_ms(t, 2, "down")) == [5, 7, 8, 5]
    assert M.probe_loss(t, 2) == pytest.approx(0.2)
    assert M.probe_loss(t, 2, warmup_s=0.010) == 0.0  # probes at 12 and 16 ms answered
    # one-way (D-ITG's loss): probe 2 reached the echo server, only its reply was lost
    assert M.probe_loss(t, 2, up_only=True) == 0.0
    lost_up = t["probes"].set_column(7, "lost_up", pa.array([False, False, True, False, False]))
    assert M.probe_loss({**t, "probes": lost_up}, 2, up_only=True) == pytest.approx(0.2)
    # IPDV over consecutive probes that both arrived (seq 0-1 and 3-4; probe 2 was lost):
    # up |5 - 5| and |5 - 6| -> mean 0.5 ms; down |7 - 5| and |5 - 8| -> mean 2.5 ms.
    assert M.probe_ipdv_ms(t, 2, "up") == pytest.approx(0.5)
    assert M.probe_ipdv_ms(t, 2, "down") == pytest.approx(2.5)
    assert M.probe_ipdv_ms(t, 2, "up", warmup_s=0.014) is None  # one probe left
    # RFC 3550 6.4.1 by hand, J += (|D| - J) / 16 from 0 over the arrivals in order. Up (the server
    # receives at 5, 9, 18, 21 ms) transits 5, 5, 6, 5: |D| = 0, 1, 1 -> 0, 1/16, 1/16 + (1 - 1/16)/16.
    assert M.probe_jitter_ms(t, 2, "up") == pytest.approx(1 / 16 + 15 / 256)
    # Down (the client receives at 10, 16, 26, 26 ms) transits 5, 7, 8, 5: |D| = 2, 1, 3.
    j = 0.0
    for d in (2, 1, 3):
        j += (d - j) / 16
    assert M.probe_jitter_ms(t, 2, "down") == pytest.approx(j) == pytest.approx(0.355957031)
    assert M.probe_jitter_ms(t, 2, "up", warmup_s=0.014) is None  # one arrival left


def test_rfc3550_jitter_converges_to_a_constant_delay_variation():
    # transit alternating 5 and 6 ms: every |D| is 1 ms, so J_N = 1 - (15/16)^N ms (RFC 3550's
    # estimator is a first-order filter with gain 1/16); arrivals reordered by their send time
    # are taken in the order they arrived
    import pyarrow as pa

    n = 200
    owd = [5 * synth.MS + (i % 2) * synth.MS for i in range(n)]
    probes = pa.table({"flow": pa.array([0] * n, pa.uint32()), "seq": pa.array(range(n), pa.uint64()),
                       "t_send_ns": pa.array([20 * synth.MS * i for i in range(n)], pa.uint64()),
                       "rtt_ns": pa.array([2 * o for o in owd], pa.uint64()),
                       "owd_up_ns": pa.array(owd, pa.uint64()), "owd_down_ns": pa.array(owd, pa.uint64()),
                       "lost": pa.array([False] * n, pa.bool_())})  # fmt: skip
    for d in ("up", "down"):
        assert M.probe_jitter_ms({"probes": probes}, 0, d) == pytest.approx(1 - (15 / 16) ** (n - 1))


def test_a_stream_s_probes_are_its_rows_of_the_table_sent_from_w_in_table_order():
    # three streams interleaved (ids not in row order) in a table of two chunks: each stream's
    # probes are, by definition, the rows with its id sent at or after W, in the table's order
    from aqmlab.runtables import RunTables

    flows = [7, 3, 7, 9, 3, 3, 7, 9, 7, 3]
    sends = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    rows = [
        {"flow": f, "seq": i, "t_send_ns": t * MS} for i, (f, t) in enumerate(zip(flows, sends, strict=True))
    ]
    schema = pa.schema([("flow", pa.uint32()), ("seq", pa.uint64()), ("t_send_ns", pa.uint64())])
    table = pa.concat_tables([pa.Table.from_pylist(rows[:4], schema), pa.Table.from_pylist(rows[4:], schema)])
    rt = RunTables({"probes": table})
    for flow in (3, 7, 9, 4):
        for w in (0, 5):
            want = [r["seq"] for r in rows if r["flow"] == flow and r["t_send_ns"] >= w * MS]
            assert M.probe_table(rt, flow, w / 1000).column("seq").to_pylist() == want, (flow, w)
    assert M.probe_table(rt, 7, 0.005) is M.probe_table(rt, 7, 0.005)  # built once per stream and W
    assert M.probe_flows(rt) == [3, 7, 9]


def test_probes_in_flight_at_the_end_are_neither_answered_nor_lost(tiny):
    t, _m = tiny
    # the longest answered RTT is 14 ms: with the run ending at 20 ms the unanswered probe sent
    # at 8 ms (8 + 14 > 20) may still be on its way; with the end at 40 ms it is lost
    assert M.probe_counts(t, 2, end_ns=20 * synth.MS) == {"sent": 5, "answered": 4, "lost": 0, "in_flight": 1}
    assert M.probe_counts(t, 2, end_ns=40 * synth.MS) == {"sent": 5, "answered": 4, "lost": 1, "in_flight": 0}
    assert M.probe_loss(t, 2, end_ns=20 * synth.MS) == 0.0
    assert M.probe_loss(t, 2, end_ns=40 * synth.MS) == pytest.approx(1 / 5)


def test_parse_limit():
    assert M.parse_limit("100p") == (100, "pkts")
    assert M.parse_limit("150000B") == (150000, "bytes")
    assert M.parse_limit("150KB") == (150000, "bytes")  # decimal kilo, as the scenario units
    assert M.parse_limit("1KiB") == (1024, "bytes")
    with pytest.raises(ValueError, match="lots"):
        M.parse_limit("lots")


def test_flow_queue_disciplines_are_the_per_flow_schedulers():
    # By construction of the algorithms: SFQ, DRR and the FQ family schedule one queue per flow
    # (or hash bucket); FIFO, RED, PIE, CoDel, CHOKe, BLUE and pfifo_fast's bands do not.
    per_flow = SM.flow_queue_qdiscs()
    assert {"sfq", "drr", "fq_codel", "fq_pie", "sfq_codel"} <= per_flow
    assert not per_flow & {"pfifo", "bfifo", "red", "pie", "codel", "choke", "blue", "pfifo_fast"}


def test_summarize(tiny):
    t, m = tiny
    s = M.summarize(t, m)
    json.dumps(s)  # JSON-serialisable
    assert s["name"] == "tiny" and s["seed"] == 7 and s["events"] == 1234
    d = s["links"]["down"]
    assert d["qdisc"] == "codel"
    assert d["utilization"] == pytest.approx(4000 / 15000)
    assert d["queue_delay_ms"]["p50"] == pytest.approx(1.5)
    assert d["queue_delay_ms"]["p99"] == pytest.approx(2 + 0.97 * 2)  # rank 2.97 of [0,1,2,4]
    assert d["drops"] == 2 and d["drops_by_reason"]["loss"] == 2 and d["marks"] == 1
    assert d["arrivals"] == 6 and d["transmitted"] == 4 and d["tx_bytes"] == 4000
    assert d["mean_backlog_pkts"] == pytest.approx(0.45) and d["mean_backlog_bytes"] == pytest.approx(400)
    assert [f["id"] for f in s["flows"]] == [0, 1, 3]
    f0 = s["flows"][0]
    assert f0["goodput_mbps"] == pytest.approx(1.2) and f0["retransmits"] == 1 and f0["completion_s"] is None
    assert s["flows"][1]["completion_s"] == pytest.approx(0.015)
    (p,) = s["probes"]
    # The summary's loss leaves out probes sent within the longest answered RTT (14 ms) of the
    # 20 ms end, whose replies could not arrive: of the probes at 0 and 4 ms none was lost.
    assert p["id"] == 2 and p["loss"] == 0.0
    assert M.probe_loss(t, 2, end_ns=40 * synth.MS) == pytest.approx(0.2)
    assert p["rtt_ms"]["p50"] == pytest.approx(11.0) and p["rtt_ms"]["max"] == pytest.approx(14)
    assert p["rtt_ms"]["mean"] == pytest.approx(11.5)
    assert p["induced_ms"] == {"p50": pytest.approx(1.0), "mean": pytest.approx(1.5)}
    assert p["owd_ms"]["up"]["p50"] == pytest.approx(5.0) and p["owd_ms"]["down"]["p95"] == pytest.approx(
        7.85
    )
    assert p["ipdv_ms"] == {"up": pytest.approx(0.5), "down": pytest.approx(2.5)}
    assert p["jitter_ms"]["up"] == pytest.approx(1 / 16 + 15 / 256)
    assert p["counts"] == {"sent": 5, "answered": 4, "lost": 0, "in_flight": 1}
    assert p["owd_ms"]["down"]["p99"] == pytest.approx(7 + 0.97 * 1)  # rank 2.97 of [5, 5, 7, 8]
    assert s["schema_version"] == M.SUMMARY_SCHEMA_VERSION
    s2 = M.summarize(*synth.run(drop=("packets",)))
    assert s2["links"]["down"]["queue_delay_ms"]["p50"] is None
    assert s2["links"]["down"]["mean_backlog_bytes"] == pytest.approx(400)


def test_goodput_and_utilisation_share_one_window():
    # A bulk flow and three 150 kB transfers that start late and finish early through a 20 Mb/s
    # FIFO, 3 s warm-up. Every aggregate is over [W, T_end]: the links' utilisation is at most 1
    # and the flows' payload at most what the link carried (payload = bytes on the wire less the
    # 52 B of IP/TCP headers per 1500 B packet). The per-flow rates are each over the flow's own
    # active time: the short transfers run at several Mb/s for well under a second, so their sum
    # can exceed the link's capacity, which is why the aggregate is not that sum.
    import aqmlab

    sc = {
        "name": "window", "duration": "8s",
        "topology": {"rtt": "40ms", "down": {"rate": "20Mbps", "limit": "100p"}, "up": {"rate": "20Mbps"}},
        "flows": [{"kind": "tcp", "cc": "cubic"},
                  {"kind": "tcp", "cc": "cubic", "count": 3, "bytes": "150kB", "start": "5s"}],
        "record": {"level": "packets", "interval": "10ms"},
    }  # fmt: skip
    r = aqmlab.run(sc, seed=1, warmup_s=3.0)
    s = r.summary
    util = s["links"]["down"]["utilization"]
    assert 0.9 < util <= 1.0
    carried_payload_mbps = util * 20 * (1448 / 1500)
    total = s["goodput_mbps"]["total"]
    assert total == pytest.approx(sum(f["bytes_delivered"] for f in s["flows"]) * 8 / 5.0 / 1e6)
    # ACK-clocked delivery lags transmission by at most one window's worth in flight at T_end
    assert total <= carried_payload_mbps * 1.02
    # the sum of per-flow rates exceeds even the link's payload capacity: not an aggregate (the
    # aggregate stays within it, give or take the packet on the wire at W, delivered whole)
    one_packet_mbps = 1448 * 8 / 5.0 / 1e6
    assert sum(f["goodput_mbps"] for f in s["flows"]) > 20 * (1448 / 1500) + one_packet_mbps > total


def test_utilisation_never_exceeds_one_with_a_warmup_between_samples():
    # A saturated 10 Mb/s FIFO (UDP at twice the rate) recorded every 100 ms, warm-up 1.05 s: the
    # transmitted bytes are known only at the samples, so counting them from the 1.0 s sample
    # against the capacity of [1.05 s, 3 s] would claim 2.0 / 1.95 = 1.026 of the link.
    import aqmlab

    sc = {
        "name": "sat", "duration": "3s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "limit": "50p"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "20Mbps"}],
        "record": {"level": "series", "interval": "100ms"},
    }  # fmt: skip
    util = aqmlab.run(sc, seed=1, warmup_s=1.05).summary["links"]["down"]["utilization"]
    assert util == pytest.approx(1.0, abs=1e-3) and util <= 1.0


def test_class_throughput_series_bins_the_delivered_bytes(tiny):
    t, m = tiny
    # 10 ms bins over the 20 ms run. cubic (flow 0) delivers 150 B per ms, samples at 0..19 ms:
    # 1500 B by 10 ms (1.2 Mb/s), 2850 B by 20 ms (1350 B: 1.08 Mb/s). ledbat: flow 1 has 630 B by 10 ms (70 x 9) and 1000 B by 20 ms; flow 3 500 B by
    # 20 ms: 630 B then 870 B. The ping is left out.
    ends, per = SM.class_throughput_series(t, m, by="cc", step_s=0.010)
    assert list(ends) == pytest.approx([0.010, 0.020])
    assert set(per) == {"cubic", "ledbat"}
    assert list(per["cubic"]) == pytest.approx([1.2e6, 1.08e6])
    assert list(per["ledbat"]) == pytest.approx([630 * 800, 870 * 800])


def test_drop_reasons_follow_the_core():
    """The drop reasons the metrics use are the core's: a real run's packets outcomes are
    "sent", "marked" or a queue's reason, and its links table has one drops column each;
    the AQM's reasons are the queue's own decisions other than a full buffer or a full flow
    queue (tail drop and fq overflow are not the AQM's)."""
    from aqmlab.api import simulate

    sc = {
        "name": "reasons",
        "duration": "2s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "qdisc": "red"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "15Mbps"}],
    }
    tables, _ = simulate(sc)
    seen = set(tables["packets"].column("outcome").to_pylist())
    assert "early" in seen and seen <= set(M.TRANSMITTED + M.QUEUE_DROP_REASONS)
    assert {c for c in tables["links"].column_names if c.startswith("drops_")} == {
        f"drops_{r}" for r in M.DROP_REASONS
    }
    assert "loss" not in M.QUEUE_DROP_REASONS and set(M.QUEUE_DROP_REASONS) | {"loss"} == set(M.DROP_REASONS)
    assert set(M.AQM_DROP_REASONS) == set(M.QUEUE_DROP_REASONS) - {"overlimit", "fat_flow", "ack_filter"}
    assert set(M.ENTERED) == set(M.TRANSMITTED) | {"head", "fat_flow", "ack_filter"}


def test_sojourn_histogram_agrees_with_the_packets():
    """The series level's sojourn histogram against the packets level's table of the same run
    (the recording level does not change the simulation: the flows tables are identical, so
    these are two computations from the same packets): every transmitted packet after the
    warm-up is counted once, the mean and max are exact, and each percentile is within 1/128 of
    the exact order statistics it interpolates (the bins are at most 1/64 of their lower bound
    wide). A warm-up that is not a whole second counts from the next whole second."""
    from aqmlab.api import simulate
    from aqmlab.scenario import load

    sc = load("rrul_be")
    sc["duration"] = "12s"
    sc["topology"]["down"]["qdisc"] = "codel"
    sc["record"] = {"level": "packets"}
    tables, meta = simulate(sc)
    sc["record"] = {"level": "series"}
    no_packets, meta_series = simulate(sc)
    assert "packets" not in no_packets and no_packets["flows"].equals(tables["flows"])
    assert tables["sojourn"].num_rows == 0  # the packets level has every sojourn exactly
    for hop in ("down", "up"):
        for warmup, exact_from in ((5.0, 5.0), (5.5, 6.0), (0.0, 0.0)):
            d = np.sort(M.sojourn_delays_ns(tables, meta, hop, exact_from)).astype(float)
            h = M._sojourn_rows(no_packets, meta_series, hop, warmup, "sojourn")
            assert int(pa.compute.sum(h.column("count")).as_py()) == d.size
            got = M.queue_delay_stats_ms(no_packets, meta, hop, warmup)
            assert got["mean"] == pytest.approx(d.mean() / 1e6, rel=1e-12)
            assert got["max"] == pytest.approx(d.max() / 1e6, rel=1e-12)
            for q in (50, 75, 95, 99):
                r = q / 100 * (d.size - 1)
                a, b = d[int(np.floor(r))], d[int(np.ceil(r))]
                exact = a + (b - a) * (r - np.floor(r))
                assert abs(got[f"p{q}"] * 1e6 - exact) <= max(a, b) / 128 + 1, (hop, warmup, q)
            x, f = M.queue_delay_cdf_ms(no_packets, meta, hop, warmup)
            assert f[-1] == 1.0 and x[-1] * 1e6 >= d.max()


def test_summarising_a_run_keeps_none_of_its_tables():
    # a sweep's worker summarises run after run: once a run's tables are gone, so is their memory
    import gc

    gc.collect()  # what earlier tests left in reference cycles, freed now rather than below
    base = pa.total_allocated_bytes()
    t, m = synth.run()
    M.summarize(t, m)
    assert pa.total_allocated_bytes() > base
    del t
    gc.collect()
    assert pa.total_allocated_bytes() == base


def test_a_summary_is_the_same_whatever_was_asked_before():
    """The tables as the core sent them (their string columns' codes taken from the core's
    dictionaries, each hop's results kept for later questions, first asked for another window)
    summarise exactly as fresh copies of them do (codes from the strings, nothing kept)."""
    from aqmlab.api import simulate
    from aqmlab.scenario import load

    sc = load("rrul_be")
    sc["duration"] = "4s"
    sc["record"] = {"level": "packets"}
    tables, meta = simulate(sc)
    for warmup in (0.0, 1.5):
        fresh = {name: pa.Table.from_batches(t.to_batches(), t.schema) for name, t in tables.items()}
        assert M.summarize(tables, meta, warmup) == M.summarize(fresh, meta, warmup), warmup


def test_a_null_hop_is_of_no_hop():
    t = pa.table({"hop": ["down", None, "None", "up"], "x": [1, 2, 3, 4]})
    assert M._hop({"links": t}, "links", "down")["x"].to_pylist() == [1]
    assert M._hop({"links": t}, "links", "None")["x"].to_pylist() == [3]


def test_goodput_window_can_end_before_the_run():
    # A constant 4 Mb/s UDP stream through an idle 10 Mb/s link from 0 to 3 s of a 4 s run: over
    # [1 s, 3 s] it delivers 4 Mb/s; over [1 s, 4 s] the same bytes spread over 3 s, two thirds
    # of that. The stream's own rate, per-flow and aggregate, in either window.
    import aqmlab

    sc = {
        "name": "end", "duration": "4s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
        "flows": [{"kind": "udp", "rate": "4Mbps", "stop": "3s"}, {"kind": "ping", "interval": "100ms"}],
        "record": {"level": "series", "interval": "100ms"},
    }  # fmt: skip
    r = aqmlab.run(sc, seed=1, warmup_s=1.0)
    t, meta = r.tables, r.meta
    to_end = M.goodput_totals_mbps(t, meta, 1.0)["down"]
    to_stop = M.goodput_totals_mbps(t, meta, 1.0, end_s=3.0)["down"]
    assert to_stop == pytest.approx(4.0, rel=0.03)
    assert to_end == pytest.approx(to_stop * 2 / 3, rel=0.01)
    assert M.goodput_bps(t, meta, 0, 1.0, end_s=3.0) / 1e6 == pytest.approx(to_stop, rel=0.01)
    assert M.goodput_totals_mbps(t, meta, 1.0, end_s=9.0) == M.goodput_totals_mbps(t, meta, 1.0)
    with pytest.raises(ValueError, match="end_s"):
        M.goodput_totals_mbps(t, meta, 1.0, end_s=-1.0)
    # the ping's probes sent in [1 s, 3 s): one every 100 ms
    assert M.probe_rtt_ms(t, 1, 1.0, end_s=3.0).size == 20
    assert M.probe_rtt_ms(t, 1, 1.0).size > 20
    c = M.probe_counts(t, 1, 1.0, int(meta["duration_ns"]), sent_before_ns=3 * 10**9)
    assert c == {"sent": 20, "answered": 20, "lost": 0, "in_flight": 0}
