"""L4S in the summary: a dualpi2 hop reports its L and C queues apart (links.HOP.queues), the two
blocks add up to the hop's, and the L queue's delay is the step's, not the PI target's; the
`ecn` flow key takes "l4s"; emulation refuses it, naming the key; the 2020 variants of DualPI2
and Prague resolve and run."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.emulate import plan
from aqmlab.scenario import ScenarioError, resolve

SC = {
    "name": "l4s",
    "duration": "10s",
    "topology": {"rtt": "20ms", "down": {"rate": "50Mbps", "qdisc": "dualpi2"}, "up": {"rate": "50Mbps"}},
    "flows": [{"kind": "tcp", "ecn": "l4s"}, {"kind": "tcp", "ecn": True}],
}


@pytest.fixture(scope="module")
def down() -> dict:
    return aqmlab.run(SC, seed=1).summary["links"]["down"]


def test_the_two_queues_add_up_to_the_hop(down):
    q = down["queues"]
    assert set(q) == {"l", "c"}
    for k in ("arrivals", "transmitted", "tx_bytes", "marks", "drops"):
        assert q["l"][k] + q["c"][k] == down[k], k
    # each flow's data went to its own queue: both carried traffic
    assert q["l"]["transmitted"] > 1000 and q["c"]["transmitted"] > 1000


def test_the_l_queue_is_held_by_the_step_and_the_c_queue_by_pi2(down):
    # RFC 9332: the L queue is marked from 1 ms of sojourn (the step), the C queue is held
    # around the PI2 target (15 ms) by p_C = p'^2
    q = down["queues"]
    assert q["l"]["queue_delay_ms"]["p99"] < 2.0
    assert q["l"]["queue_delay_ms"]["p99"] < q["c"]["queue_delay_ms"]["p50"]
    assert q["l"]["marks"] > 0


def test_no_queues_block_without_sub_queues():
    sc = {**SC, "duration": "2s", "topology": {**SC["topology"], "down": {"rate": "50Mbps", "qdisc": "pie"}}}
    assert "queues" not in aqmlab.run(sc, seed=1).summary["links"]["down"]


def test_ecn_mode_is_validated_and_written_back():
    with pytest.raises(
        ScenarioError,
        match=r"flows\[0\]\.ecn: \"l5s\" is not allowed; allowed: \"off\", \"classic\", \"l4s\", \"accecn\"",
    ):
        aqmlab.run({**SC, "flows": [{"kind": "tcp", "ecn": "l5s"}]}, seed=1)
    resolved = resolve({**SC, "flows": [{"kind": "udp", "rate": "1Mbps", "ecn": "classic"}]})
    assert resolved["flows"][0]["ecn"] is True


def test_emulation_refuses_l4s_by_key():
    resolved = resolve(SC)
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.ecn: \"l4s\" is not emulated"):
        plan(resolved)


def _l4s2020(qdisc: dict, cc_params: dict) -> dict:
    """SC with `qdisc` on the bottleneck and a Prague flow with `cc_params` beside the classic one."""
    prague = {"kind": "tcp", "cc": "prague", "ecn": "accecn", "cc_params": cc_params}
    down = {"rate": "50Mbps", "qdisc": qdisc}
    return {
        **SC,
        "duration": "3s",
        "topology": {**SC["topology"], "down": down},
        "flows": [prague, SC["flows"][1]],
    }


def test_the_2020_variants_resolve_run_and_are_validated_by_key():
    # docs/study-setups.md 5: dualpi2 as submitted in 2019 (PI increment / 127, the step only for
    # packets that found two in the L queue) and tcp_prague.c of 2020 (alpha from 1, no RTT
    # independence, the integer window moved by a carry, a loss stepped into cwnd per ACK)
    qdisc = {"kind": "dualpi2", "pi_divisor": 127, "min_qlen_step": 2}
    cc_params = {"alpha_mode": 1, "rtt_target": "0s", "integer_cwnd": "carry", "loss_response": "per_ack"}
    sc = _l4s2020(qdisc, cc_params)
    r = resolve(sc)
    assert {k: r["topology"]["down"]["qdisc"][k] for k in qdisc} == qdisc
    assert r["flows"][0]["cc_params"] == {**cc_params, "rtt_transition": 4, "pacing_unit": "mtu"}
    q = aqmlab.run(sc, seed=1).summary["links"]["down"]["queues"]
    assert q["l"]["transmitted"] > 1000 and q["c"]["transmitted"] > 1000
    with pytest.raises(ScenarioError, match=r"qdisc\.pi_divisor: 100 is not allowed; allowed 64 or 127"):
        resolve(_l4s2020({**qdisc, "pi_divisor": 100}, cc_params))
    with pytest.raises(ScenarioError, match=r"cc_params: alpha_mode: 2 is out of range; allowed 0 to 1"):
        resolve(_l4s2020(qdisc, {"alpha_mode": 2}))
    with pytest.raises(
        ScenarioError, match=r'integer_cwnd: "floor" is not allowed; allowed: round_up, carry'
    ):
        resolve(_l4s2020(qdisc, {"integer_cwnd": "floor"}))
    with pytest.raises(
        ScenarioError, match=r'loss_response: "halve" is not allowed; allowed: at_once, per_ack'
    ):
        resolve(_l4s2020(qdisc, {"loss_response": "halve"}))
    assert resolve(_l4s2020(qdisc, {}))["flows"][0]["cc_params"]["loss_response"] == "at_once"
    with pytest.raises(ScenarioError, match=r'pacing_unit: "bytes" is not allowed; allowed: mss, mtu'):
        resolve(_l4s2020(qdisc, {"pacing_unit": "bytes"}))
    # tcp_prague.c's prague_update_pacing_rate counts the window in MTU-sized packets
    assert resolve(_l4s2020(qdisc, {}))["flows"][0]["cc_params"]["pacing_unit"] == "mtu"
