"""TCP Prague over AccECN through DualPI2: the built-in `l4s` scenario as shipped (30 s):
neither Prague nor CUBIC starves, the L queue's p99 stays under 2 ms (issue 36); the flow keys that
go with it are validated by key; emulation refuses what the kernel cannot be asked for."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.emulate import plan
from aqmlab.scenario import ScenarioError, builtin_path, load, resolve


@pytest.fixture(scope="module")
def l4s() -> dict:
    return aqmlab.run(builtin_path("l4s"), seed=1).summary


def test_prague_and_cubic_share_dualpi2_without_starving_either(l4s):
    # RFC 9332's coupling k = 2 aims at equal rates at equal RTTs. The RTTs are not equal here:
    # CUBIC's includes the C queue (about 14 ms at PI2's 15 ms target) on the 20 ms path,
    # Prague's about 0.1 ms of L queue, and a Reno-friendly classic flow's rate goes as 1/RTT,
    # so Prague is expected ahead by about 34/20 = 1.7. Issue 36's bound of 2:1 held for seed 1
    # only: over seeds 1-6 the ratio is 1.89-2.79 with the `rfc` profile and 2.11-2.74 with
    # `linux` (the default since issue 50). What a 2020 testbed measured is issue 51's to
    # compare; here neither flow may take more than three quarters of what they share.
    prague, cubic = (f["goodput_mbps"] for f in l4s["flows"])
    assert max(prague, cubic) <= 3 * min(prague, cubic), (prague, cubic)
    assert prague >= cubic, (prague, cubic)
    # together they fill most of the 100 Mb/s link
    assert prague + cubic > 85, (prague, cubic)


def test_the_l_queue_stays_below_two_ms(l4s):
    # issue 36 done-when, over the whole run. Prague's start-up overshoot (tcp_prague.c leaves
    # slow start only on an ACK whose packets were all CE-marked, so with delayed ACKs it runs on
    # past the first marks) puts the L queue up to ~50 ms in 0.1-0.3 s: p99 5.9 ms over a 10 s
    # run, 0.24 ms over the scenario's 30 s
    assert l4s["links"]["down"]["queues"]["l"]["queue_delay_ms"]["p99"] < 2.0


def test_after_start_up_the_l_queue_stays_below_two_ms():
    sc = load(builtin_path("l4s"))
    sc["duration"] = "10s"
    q = aqmlab.run(sc, seed=1, warmup_s=3).summary["links"]["down"]["queues"]
    assert q["l"]["queue_delay_ms"]["p99"] < 2.0
    # Prague's packets are ECT(1) and go to L (marked, not dropped); CUBIC's to C
    assert q["l"]["marks"] > 0 and q["l"]["drops"] == 0
    assert q["l"]["transmitted"] > 10_000 and q["c"]["transmitted"] > 10_000


BASE = {
    "name": "prague",
    "duration": "2s",
    "topology": {"rtt": "20ms", "down": {"rate": "20Mbps", "qdisc": "dualpi2"}, "up": {"rate": "20Mbps"}},
}


@pytest.mark.parametrize("ecn", ["off", "classic", "l4s"])
def test_prague_needs_accecn_named_by_key(ecn):
    flows = [{"kind": "tcp", "cc": "prague", "ecn": ecn}]
    with pytest.raises(
        ScenarioError, match=rf'flows\[0\]\.ecn: "{ecn}" with cc = "prague"; allowed: "accecn"'
    ):
        resolve({**BASE, "flows": flows})


def test_prague_negotiates_accecn_unless_told_otherwise():
    # tcp_prague.c's flags (TCP_CONG_NEEDS_ECN | TCP_CONG_NEEDS_ACCECN) make the kernel ask for
    # AccECN on a Prague socket whatever the ecn sysctl says: a flow naming only the controller
    # runs so (it was refused for want of ecn = "accecn")
    sc = resolve({**BASE, "flows": [{"kind": "tcp", "cc": "prague"}, {"kind": "tcp", "cc": "cubic"}]})
    assert [f["ecn"] for f in sc["flows"]] == ["accecn", False]  # off, as the resolved form writes it


def test_udp_refuses_accecn_and_receiver_ecn_is_validated():
    with pytest.raises(ScenarioError, match=r'flows\[0\]\.ecn: "accecn" is TCP feedback'):
        resolve({**BASE, "flows": [{"kind": "udp", "rate": "1Mbps", "ecn": "accecn"}]})
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.receiver_ecn: .*maybe"):
        resolve({**BASE, "flows": [{"kind": "tcp", "ecn": "accecn", "receiver_ecn": "maybe"}]})
    # written back when set; left out at its default ("accecn") so that resolved scenarios
    # without it read as before the key existed
    flows = [{"kind": "tcp", "ecn": "accecn", "receiver_ecn": "classic"}, {"kind": "tcp", "ecn": "accecn"}]
    resolved = resolve({**BASE, "flows": flows})["flows"]
    assert resolved[0]["receiver_ecn"] == "classic" and "receiver_ecn" not in resolved[1]
    assert resolved[0]["ecn"] == "accecn"


def test_prague_params_are_validated_and_written_back():
    flows = [{"kind": "tcp", "cc": "prague", "ecn": "accecn"}]
    resolved = resolve({**BASE, "flows": flows})
    assert resolved["flows"][0]["cc_params"] == {
        "rtt_target": "25ms",
        "rtt_transition": 4,
        "alpha_mode": 0,
        "integer_cwnd": "round_up",
        "loss_response": "at_once",
        "pacing_unit": "mtu",  # prague_update_pacing_rate counts tcp_mss_to_mtu
    }
    bad = [{**flows[0], "cc_params": {"rtt_target": "200ms"}}]
    with pytest.raises(
        ScenarioError, match=r"rtt_target: 200ms is out of range; allowed: 0s \(off\) up to 100ms"
    ):
        resolve({**BASE, "flows": bad})


def test_without_accecn_at_the_receiver_prague_runs_reno_without_ecn():
    # tcp_prague.c: no RFC 3168 fallback; the connection runs prague-reno, Not-ECT, so DualPI2
    # puts it in the C queue and nothing goes to L
    flows = [{"kind": "tcp", "cc": "prague", "ecn": "accecn", "receiver_ecn": "classic"}]
    down = aqmlab.run({**BASE, "flows": flows}, seed=1).summary["links"]["down"]
    assert down["queues"]["l"]["arrivals"] == 0 and down["queues"]["c"]["arrivals"] > 1000


@pytest.mark.parametrize(
    ("flow", "key"),
    [
        ({"kind": "tcp", "ecn": "accecn"}, r'flows\[0\]\.ecn: "accecn" is not emulated'),
        (
            {"kind": "tcp", "ecn": True, "receiver_ecn": "off"},
            r"flows\[0\]\.receiver_ecn: 'off' is not emulated",
        ),
        ({"kind": "tcp", "data_ecn": "ect1"}, r"flows\[0\]\.data_ecn: 'ect1' is not emulated"),
    ],
)
def test_emulation_refuses_accecn_by_key(flow, key):
    with pytest.raises(ScenarioError, match=key):
        plan(resolve({**BASE, "flows": [flow]}))
