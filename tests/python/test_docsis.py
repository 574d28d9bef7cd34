"""Low Latency DOCSIS (`lld`) and DOCSIS-PIE end to end on a 25 Mb/s upstream: queue protection
(RFC 9957) keeps the L queue short when an unresponsive flow sends ECT(1) above the rate, by
sending its excess to the classic queue (without it the L queue grows to seconds), while a TCP
Prague alone loses few packets to it (its slow start's overshoot); a loss-based CUBIC that labels
its data ECT(1) without negotiating ECN is sanctioned packet by packet as RFC 9957's rule says;
the built-in `docsis` scenario runs, and its DOCSIS-PIE variant holds the delay near RFC 8034's
10 ms target."""

from __future__ import annotations

import collections

import pytest

import aqmlab
from aqmlab.scenario import ScenarioError, resolve

PRAGUE = {"kind": "tcp", "direction": "up", "cc": "prague", "ecn": "accecn", "label": "prague"}
# an unresponsive sender labelled ECT(1), above the rate: the L queue's misbehaving flow
FLOOD = {"kind": "udp", "direction": "up", "rate": "30Mbps", "ecn": "l4s", "label": "udp"}


def _up(flows: list, qdisc) -> dict:
    sc = {
        "name": "docsis_test",
        "duration": "10s",
        "topology": {"rtt": "20ms", "up": {"rate": "25Mbps", "qdisc": qdisc}, "down": {"rate": "300Mbps"}},
        "flows": flows,
    }
    return aqmlab.run(sc, seed=1).summary["links"]["up"]


def test_queue_protection_keeps_the_l_queue_short_against_an_unresponsive_flow():
    # Every packet is ECT(1), so only a sanction puts one in the C queue.
    on = _up([PRAGUE, FLOOD], {"kind": "lld"})["queues"]
    off = _up([PRAGUE, FLOOD], {"kind": "lld", "qprot": False})["queues"]
    assert on["c"]["arrivals"] > 1000 and off["c"]["arrivals"] < 10
    assert on["l"]["queue_delay_ms"]["p99"] < 3.0
    assert off["l"]["queue_delay_ms"]["p99"] > 100.0
    # Prague alone: a few percent of its packets at most (slow start's overshoot of the ramp)
    alone = _up([PRAGUE], {"kind": "lld"})["queues"]
    assert alone["l"]["arrivals"] > 10_000
    assert alone["c"]["arrivals"] < 0.05 * alone["l"]["arrivals"]


def test_a_classic_ecn_flow_labelled_ect1_is_not_sanctioned_but_underuses_the_link():
    # CUBIC sending ECT(1) with RFC 3168 feedback halves on a mark, so the ramp (1.28 ms to
    # 1.80 ms at 25 Mb/s: FLOOR = 2 x 2000 B x 8 / 25 Mb/s) keeps its queue below CRITICALqL
    # (= MAXTH, 1.80 ms); RFC 9957 sanctions only above it, so the flow stays in the L queue, and
    # pays for its label in throughput instead (its window is cut as a classic window).
    q = _up([{"kind": "tcp", "direction": "up", "cc": "cubic", "ecn": "l4s"}], {"kind": "lld"})
    prague = _up([PRAGUE], {"kind": "lld"})
    assert q["queues"]["l"]["queue_delay_ms"]["p99"] < 1.80
    assert q["queues"]["c"]["arrivals"] < 0.01 * q["queues"]["l"]["arrivals"]
    assert q["utilization"] < prague["utilization"] - 0.1


def test_the_docsis_scenario_and_its_docsis_pie_variant():
    r = aqmlab.run("docsis", duration="10s")
    q = r.summary["links"]["up"]["queues"]
    assert q["l"]["queue_delay_ms"]["p99"] < 2.0
    assert q["c"]["arrivals"] > 1000
    pie = aqmlab.run(
        "docsis",
        duration="10s",
        topology__up__qdisc={"kind": "pie", "profile": "docsis"},
        topology__up__limit="312500B",
    ).summary["links"]["up"]
    assert 5.0 < pie["queue_delay_ms"]["p50"] < 25.0
    assert pie["drops"] > 0


# RFC 9957's constants and the ramp it reads (MULPI's defaults), by hand for the `docsis`
# scenario's 25 Mb/s upstream: the L queue's delay is its bytes over the rate (320 ns a byte);
# MINTH = max(MAXTH 1 ms - RANGE 2^19 ns, FLOOR = 2 frames of 2000 B at the rate = 1.28 ms) =
# 1.28 ms, MAXTH = MINTH + 2^19 ns = 1,804,288 ns, which is CRITICALqL; CRITICALqLSCORE 4 ms;
# LG_AGING 19, so a byte at probNative 1 adds 2^(30 - 19) ns of score (a second taken as 2^30
# ns); MAX_QLSCORE 5 s.
NS_PER_BYTE = 8e9 / 25e6
MINTH = max(1_000_000 - 2**19, 2 * 2000 * NS_PER_BYTE)
CRITICAL_QL = MINTH + 2**19
CRITICAL_SCORE = 4e6
NS_PER_CONGESTED_BYTE = 2.0 ** (30 - 19)
MAX_SCORE = 5e9


def _qprot_replay(packets) -> list[tuple[int, bool, bool, bool]]:
    """Every ECT(1) arrival at the modem replayed through RFC 9957's qprotect: the L queue's
    delay with the packet in it, the ramp's probNative at that delay, the flow's bucket charged
    probNative x size (its expiry no earlier than now, the score capped at MAX_QLSCORE), and the
    sanction rule qdelay > CRITICALqL and qdelay x score > CRITICALqL x CRITICALqLSCORE. The L
    queue is rebuilt from the packets the run put in it (FIFO, each gone at its `t_out_ns`). A
    departure at the very nanosecond of an arrival may have come before or after it, so the
    replay keeps both: the rule is monotone in the delay and the score, so a packet must be
    sanctioned if the lower bound says so and may be only if the upper bound does. Returns
    (flow, must, may, sanctioned) per arrival."""
    up = packets[(packets.hop == "up") & packets.ecn.isin(["ect1", "ce"])]
    up = up.sort_values("t_enqueue_ns", kind="stable")
    queue: collections.deque = collections.deque()
    t_exp: dict[tuple[int, int], float] = {}
    out = []
    cols = (up.t_enqueue_ns, up.t_out_ns, up["size"], up.flow, up.subqueue)
    for t, t_out, size, flow, subqueue in zip(*cols, strict=True):
        while queue and queue[0][0] < t:
            queue.popleft()
        ahead_hi = sum(s for _, s in queue)
        ahead_lo = ahead_hi - sum(s for d, s in queue if d == t)
        verdict = []
        for bound, ahead in ((0, ahead_lo), (1, ahead_hi)):
            q = (ahead + size) * NS_PER_BYTE
            p_native = min(max((q - MINTH) / (CRITICAL_QL - MINTH), 0.0), 1.0)
            e = max(t_exp.get((flow, bound), 0.0), t) + p_native * size * NS_PER_CONGESTED_BYTE
            t_exp[(flow, bound)] = e = min(e, t + MAX_SCORE)
            verdict.append(q > CRITICAL_QL and q * (e - t) > CRITICAL_QL * CRITICAL_SCORE)
        out.append((flow, verdict[0], verdict[1], subqueue == "c"))
        if subqueue == "l":
            queue.append((t_out, size))
    return out


def test_a_loss_based_flow_labelled_ect1_is_sanctioned_by_rfc_9957s_rule():
    # CUBIC with `data_ecn = "ect1"` and no ECN negotiated: its data enters the L queue, its
    # receiver echoes none of the ramp's marks, so only drops (or the reordering its sanctioned
    # packets cause) slow it. Without queue protection it fills the L queue (seconds of delay)
    # and starves the Prague flow beside it; with it, its packets leave the L queue for the C
    # queue whenever the L queue passes CRITICALqL.
    r = aqmlab.run("docsis", duration="10s", flows__1__data_ecn="ect1")
    flows = r.tables["flows"].to_pandas().set_index("label")
    assert flows.loc["cubic", "marks"] > 100 and flows.loc["cubic", "ecn_reductions"] == 0
    rows = _qprot_replay(r.tables["packets"].to_pandas())
    # RFC 9957's rule holds packet by packet: no sanction it forbids, none it requires missing
    assert not [x for x in rows if x[3] and not x[2]]
    assert not [x for x in rows if x[1] and not x[3]]
    per_flow = {f: [x for x in rows if x[0] == f] for f in (0, 1)}  # prague, cubic
    must = {f: sum(x[1] for x in v) for f, v in per_flow.items()}
    sanctioned = {f: sum(x[3] for x in v) for f, v in per_flow.items()}
    # and the replay decides: few arrivals are left to the order of a departure at their
    # nanosecond (sanctioned under one order, not under the other)
    assert must[1] > 200 and sum(x[2] and not x[1] for x in rows) < 0.15 * sum(must.values())
    # every packet that left the L queue for the C queue is one the discipline counted; the
    # discipline counts a sanction at the arrival, the table a packet at its departure, so the
    # packets still queued when the run ends (its last `queue` sample) may be counted only there
    counted = r.meta["qdisc_diagnostics"]["up"]["qprot_sanctions"]
    queue = r.tables["queue"].to_pandas()
    left_in_queue = queue[queue.hop == "up"].sort_values("t_ns").backlog_pkts.iloc[-1]
    assert sum(sanctioned.values()) <= counted <= sum(sanctioned.values()) + left_in_queue
    # the mislabelled flow is the one sanctioned: several times Prague's share of its packets
    # (Prague's own stays at a per cent or two)
    share = {f: sanctioned[f] / len(per_flow[f]) for f in (0, 1)}
    assert share[0] < 0.02 and share[1] > 4 * share[0]
    up = r.summary["links"]["up"]["queues"]["l"]["queue_delay_ms"]
    off = aqmlab.run(
        "docsis",
        duration="10s",
        flows__1__data_ecn="ect1",
        topology__up__qdisc={"kind": "lld", "qprot": False},
    )
    assert (
        up["p99"]
        < CRITICAL_QL / 1e6
        < off.summary["links"]["up"]["queues"]["l"]["queue_delay_ms"]["p99"] / 100
    )
    delivered = off.tables["flows"].to_pandas().set_index("label")["bytes_delivered"]
    assert delivered["prague"] < 0.05 * delivered["cubic"] < flows.loc["prague", "bytes_delivered"]


def test_data_ecn_is_validated_and_written_out_only_when_set():
    base = {
        "name": "x",
        "duration": "1s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
    }
    with pytest.raises(
        ScenarioError, match=r'flows\[0\]\.data_ecn: "ce" is not allowed; allowed: negotiated, .*ect1'
    ):
        resolve({**base, "flows": [{"kind": "tcp", "data_ecn": "ce"}]})
    flows = resolve({**base, "flows": [{"kind": "tcp", "data_ecn": "ect1"}, {"kind": "tcp"}]})["flows"]
    assert flows[0]["data_ecn"] == "ect1" and "data_ecn" not in flows[1]
