"""The built-in bbr_vs_cubic scenario: under a flow-queueing bottleneck (fq_codel, cake) each of
two backlogged flows gets half the link whatever its controller (DRR with equal quanta: RFC 8290
section 4, sch_cake.c's DRR++), which a FIFO does not enforce."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.scenario import load


def shares(qdisc: str) -> tuple[float, float]:
    sc = load("bbr_vs_cubic")
    sc["duration"] = "12s"
    sc["topology"]["down"]["qdisc"] = qdisc
    flows = aqmlab.run(sc, seed=1, warmup_s=4.0).summary["flows"]
    rates = {f["label"]: f["goodput_mbps"] for f in flows}
    return rates["bbr"], rates["cubic"]


@pytest.mark.parametrize("qdisc", ["fq_codel", "cake"])
def test_flow_queueing_gives_each_controller_half(qdisc):
    bbr, cubic = shares(qdisc)
    assert bbr + cubic > 0.9 * 50, (bbr, cubic)
    assert 0.4 < bbr / (bbr + cubic) < 0.6, (bbr, cubic)


def test_each_fast_recovery_follows_a_loss():
    """The flows table's `fast_recoveries` (Linux's TCPSackRecovery): through a CoDel queue both
    flows lose packets and recover, and no flow enters more recoveries than it lost packets (a
    recovery starts from a loss; a loss episode of several packets is one recovery)."""
    sc = load("bbr_vs_cubic")
    sc["duration"] = "12s"
    sc["topology"]["down"]["qdisc"] = "codel"
    for f in aqmlab.run(sc, seed=1).tables["flows"].to_pylist():
        if f["kind"] == "tcp":
            assert 1 <= f["fast_recoveries"] <= f["drops"], f
