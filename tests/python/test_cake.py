"""CAKE end to end: flows' `host` and `server` keys reach it on a plain path, and host isolation
shares the link between hosts first: a host with one TCP flow gets about half of a 20 Mb/s shaped
downlink against a host with four (per flow it would get a fifth)."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.scenario import ScenarioError


def downlink_share(isolation: str, own_servers: bool) -> float:
    """Host a's share of the goodput: 1 download to host a, 4 to host b, through CAKE shaped at
    20 Mb/s (below the 100 Mb/s link) with `isolation`; from one server, or each from its own."""
    qdisc = {"kind": "cake", "bandwidth": "20Mbps", "diffserv": "besteffort", "isolation": isolation}
    flows = [{"kind": "tcp", "direction": "down", "host": h} for h in "abbbb"]
    if own_servers:
        flows = [{**f, "server": f"s{k}"} for k, f in enumerate(flows)]
    sc = {
        "name": "cake_hosts",
        "duration": "20s",
        "topology": {"rtt": "20ms", "down": {"rate": "100Mbps", "qdisc": qdisc}, "up": {"rate": "100Mbps"}},
        "flows": flows,
    }
    goodput = [f["goodput_mbps"] for f in aqmlab.run(sc, seed=1).summary["flows"]]
    assert len(goodput) == 5
    # the shaper holds the whole at the shaped rate, not the link's
    assert 17.0 < sum(goodput) < 20.0, goodput
    return goodput[0] / sum(goodput)


@pytest.mark.parametrize(
    ("isolation", "own_servers", "share"),
    [
        # per flow: a fifth
        ("flows", False, 0.2),
        # by destination (client) host first: half each
        ("dual-dsthost", False, 0.5),
        # triple-isolate divides a flow's quantum by the larger of its two hosts' bulk flow
        # counts: one server for all (5 flows) makes it per flow, a server per flow leaves the
        # client hosts' counts (1 and 4), half each
        ("triple-isolate", False, 0.2),
        ("triple-isolate", True, 0.5),
    ],
)
def test_hosts_share_the_link_first(isolation, own_servers, share):
    got = downlink_share(isolation, own_servers)
    assert abs(got - share) < 0.06, got


def test_host_names_are_validated():
    topo = {"rtt": "20ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}}
    sc = {"name": "x", "duration": "1s", "topology": topo, "flows": [{"kind": "tcp", "host": "1a"}]}
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.host: \"1a\" is not allowed; a host name starts"):
        aqmlab.run(sc, seed=1)
    sc = {**sc, "flows": [{"kind": "tcp", "server": ""}]}
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.server: \"\" is not allowed"):
        aqmlab.run(sc, seed=1)


def test_cake_home_gives_the_one_flow_host_half_the_downlink():
    # the done-when: host a's one download against host b's four, through the built-in
    # home gateway (dual-dsthost down): about half each, where per-flow fairness gives a fifth
    res = aqmlab.run("cake_home", duration="20s")
    goodput = {"a-download": 0.0, "b-download": 0.0}
    for f in res.summary["flows"]:
        goodput[f["label"]] += f["goodput_mbps"]
    a, b = goodput["a-download"], goodput["b-download"]
    assert 17.0 < a + b < 20.0, (a, b)
    assert abs(a / (a + b) - 0.5) < 0.06, (a, b)


def test_cake_home_ack_filter_drops_only_pure_acks_of_the_uplink():
    # the built-in home gateway with its uplink narrowed to 500 kb/s (the 2 Mb/s one carries the
    # five downloads' ACKs without queueing them) and the ACK filter on: ACKs of a download queue
    # behind one another, and a later one makes the earlier redundant (sch_cake.c's
    # cake_ack_filter); the filter drops nothing but pure ACKs, and every arrival is accounted
    up = {"topology__up__qdisc__bandwidth": "500Kbps", "topology__up__qdisc__ack_filter": "on"}
    res = aqmlab.run("cake_home", duration="10s", **up)
    links = res.df("links").set_index("dir")
    assert links.loc["up", "drops_ack_filter"] > 0
    assert links.loc["down", "drops_ack_filter"] == 0
    pk = res.df("packets")
    dropped = pk[pk["outcome"] == "ack_filter"]
    assert len(dropped) == links.loc["up", "drops_ack_filter"]
    downloads = {f["id"] for f in res.summary["flows"] if f["label"].endswith("-download")}
    assert set(dropped["flow"]) <= downloads and (dropped["dir"] == "up").all()
    # a pure ACK is a header (52 B) with at most 3 SACK blocks (4 + 24 B)
    assert dropped["size"].max() <= 52 + 4 + 3 * 8
    for d in ("up", "down"):
        rows = pk[(pk["dir"] == d) & (pk["hop"] == d)]
        assert len(rows) + links.loc[d, "backlog_pkts"] == links.loc[d, "arrivals"]
