"""fq (Linux sch_fq) end to end: its pacing holds a flow to `maxrate` on an otherwise idle link
(the hop is served at fq's wake-ups), and flows share the link by its credit round robin."""

from __future__ import annotations

import aqmlab


def run(qdisc: dict, flows: list[dict]) -> list[float]:
    sc = {
        "name": "fq",
        "duration": "10s",
        "topology": {"rtt": "20ms", "down": {"rate": "10Mbps", "qdisc": qdisc}, "up": {"rate": "10Mbps"}},
        "flows": flows,
    }
    return [f["goodput_mbps"] for f in aqmlab.run(sc, seed=1).summary["flows"]]


def test_maxrate_paces_a_flow_below_the_link_rate():
    # 4 Mb/s offered, fq's maxrate 2 Mb/s on a 10 Mb/s link: the flow gets 2 Mb/s (a quantum of
    # 3000 B per 12 ms); the link idles between its bursts
    udp = {"kind": "udp", "direction": "down", "rate": "4Mbps", "packet_size": "1500B"}
    (got,) = run({"kind": "fq", "maxrate": "2Mbps"}, [udp])
    assert abs(got - 2.0) < 0.1, got


def test_backlogged_flows_share_the_link_equally():
    # two UDP flows offering 8 and 6 Mb/s into 10 Mb/s: fq's round robin gives each 5 Mb/s
    flows = [
        {"kind": "udp", "direction": "down", "rate": r, "packet_size": "1500B"} for r in ("8Mbps", "6Mbps")
    ]
    got = run({"kind": "fq"}, flows)
    assert all(abs(g - 5.0) < 0.25 for g in got), got
