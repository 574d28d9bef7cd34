"""Low Latency DOCSIS (`lld`) and DOCSIS-PIE end to end on a 25 Mb/s upstream: queue protection
(RFC 9957) keeps the L queue short when an unresponsive flow sends ECT(1) above the rate, by
sending its excess to the classic queue (without it the L queue grows to seconds), while a TCP
Prague alone loses few packets to it (its slow start's overshoot); the built-in `docsis`
scenario runs, and its DOCSIS-PIE variant holds the delay near RFC 8034's 10 ms target."""

from __future__ import annotations

import aqmlab

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
