"""goodbadwifi2015's tests as the study ran them: the qdiscs configured per direction's rate
(``qdisc_for``), the links, the scenario files of each series, and the sweeps over them (wired,
web, WiFi)."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

NAME = "goodbadwifi2015"
DESCRIPTION = (
    "Høiland-Jørgensen et al. 2015: RRUL, VoIP, RTT fairness, web and WiFi through pfifo_fast, ARED, PIE, "
    "CoDel, SFQ, fq_nocodel and fq_codel on 100/100, 10/10 and 10/1 Mb/s links, 50 ms, CUBIC (Linux 3.14)"
)
QDISCS = ["pfifo_fast", "ared", "pie", "codel", "sfq", "fq_nocodel", "fq_codel"]
LINKS = {"100/100": (100, 100), "10/10": (10, 10), "10/1": (10, 1)}
CROSS = ["1up", "rrul"]
SERIES = {
    "all": ["rrul", "voip", "rtt_fair", "wifi", "web"],
    "rrul": ["rrul"],
    "voip": ["voip"],
    "rtt_fair": ["rtt_fair"],
    "wifi": ["wifi"],
    "web": ["web"],
}
REPS = 30
"""Replications per case, as the study ran."""
TEST_FILES = {
    "rrul": ["rrul"],
    "voip": ["voip_1up", "voip_rrul"],
    "rtt_fair": ["rtt_fair"],
    "wifi": ["wifi_rrul", "voip_1up", "voip_rrul", "web_none", "web_1up", "web_rrul"],
    "web": ["web_none", "web_1up", "web_rrul"],
}
PAGES = ["small", "large"]
WEB_CROSS = ["1up", "rrul"]
PAGE_FLOW = {
    "kind": "webpage", "label": "page", "profile": "linux_3_14", "interval": "1s", "start": "5s", "stop": "145s"
}  # fmt: skip
"""http-getter as Flent's http tests run it: a fetch every second, 4 workers (the default), for
LENGTH after DELAY, as the load."""
WEB_BASE = {"web_none": ("voip_1up", 0), "web_1up": ("voip_1up", 1), "web_rrul": ("rrul", 0)}
"""Per web case: the scenario file lending its cross traffic, and its first flow kept (the VoIP
file's upload without its VoIP stream; all of RRUL)."""
WIFI = "wifi"
"""The link name of the WiFi runs (beside the wired LINKS)."""
WIFI_FILE = "wifi_rrul"
"""The WiFi setup; the other WiFi tests take their flows from their wired files."""
WIFI_HOPS = (0, 3)
"""The hops of wifi_rrul.toml that run the tested qdisc: the client's WiFi interface, the AP's."""


LINUX_RED = {"gentle": False, "wait": False, "max_p": 0.02}
"""Linux 3.14's sch_red where it departs from ARED's paper defaults: no gentle ramp (red.h
red_cmp_thresh and red_action: every arrival with qavg >= qth_max is a hard mark, dropped); drop
gaps uniform on [1, 1/p_b] (red_action draws qR once after each drop and marks when
p_b x qcount reaches it: the paper's uniformisation, ns-2's wait off); max_p starting at tc's
default probability 0.02 (iproute2 q_red.c), from where the 500 ms adaptation moves it."""


def qdisc_for(name: str, mbps: int) -> dict:
    """The study's configuration of ``name`` for a direction of ``mbps`` (docs/study-setups.md 4):
    FIFO and SFQ limits 127 packets at 1 and 10 Mb/s, 1000 at 100 (Linux txqueuelen); ARED's
    target delay 20 ms with min_th half of it at the link rate, at least one MTU (1514 B), and
    max_th 3 x min_th (2 MTU at 1 Mb/s), on the backlog in bytes with a drop probability that
    does not depend on the packet's size (Linux's sch_red: ``bytes = "linux"``) and Linux's drop
    rules (``LINUX_RED``); PIE as Linux 3.14 with target 20 ms, t_update 30 ms;
    CoDel and fq_codel targets 13 ms at 1 Mb/s (a packet's transmission time), else 5 ms."""
    fifo = "127p" if mbps <= 10 else "1000p"
    target = "13ms" if mbps <= 1 else "5ms"
    if name == "pfifo_fast":
        return {"kind": "pfifo_fast", "limit": fifo}
    if name == "ared":
        q = {
            "kind": "ared",
            "limit": fifo,
            "target_delay": "20ms",
            "min_th_floor": "1514B",
            "bytes": "linux",
            **LINUX_RED,
        }
        if mbps <= 1:
            # One and two 1514-byte frames, in packets of the link's 1500-byte mean size.
            q.update(min_th=1514 / 1500, max_th=3028 / 1500)
        return q
    if name == "pie":
        return {
            "kind": "pie",
            "profile": "linux_3_14",
            "target": "20ms",
            "t_update": "30ms",
            "limit": "1000p",
        }
    if name == "codel":
        return {"kind": "codel", "variant": "linux", "target": target, "interval": "100ms", "limit": "1000p"}
    if name == "sfq":
        return {"kind": "sfq", "limit": fifo}
    if name == "fq_codel":
        return {"kind": "fq_codel", "target": target, "interval": "100ms", "limit": "10240p"}
    if name == "fq_nocodel":
        return {"kind": "fq_nocodel", "limit": fifo}
    raise KeyError(f"unknown qdisc {name!r}; allowed: {', '.join(QDISCS)}")


def scenario_file(test: str) -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / NAME / f"{test}.toml"))


def _flows(test: str) -> list[dict]:
    """The flows of a scenario file."""
    return tomllib.loads(scenario_file(test).read_text())["flows"]


def web_cross(test: str) -> list[dict]:
    """A web case's cross traffic: none, the VoIP file's upload, or RRUL's flows."""
    base, first = WEB_BASE[test]
    if test == "web_none":
        return []
    cross = _flows(base)[first:]
    return cross[:1] if test == "web_1up" else cross


def web_doc(test: str, reps: int, qdiscs, links) -> dict:
    """The sweep of a web case: the page flow and the cross traffic of its base file, per
    (link, qdisc, page)."""
    base, cross = WEB_BASE[test][0], web_cross(test)
    cases = [(lk, q, p) for lk in links for q in qdiscs for p in PAGES]
    doc = sweep_doc(base, reps, qdiscs, links)
    doc["name"] = f"{NAME}-{test}"
    doc["seed_from"] = ["params.link", "params.page"]
    doc["zip"] = {
        "params.link": [lk for lk, _, _ in cases],
        "params.qdisc": [q for _, q, _ in cases],
        "params.page": [p for _, _, p in cases],
        "topology.down.rate": [f"{LINKS[lk][0]}Mbps" for lk, _, _ in cases],
        "topology.up.rate": [f"{LINKS[lk][1]}Mbps" for lk, _, _ in cases],
        "topology.down.qdisc": [qdisc_for(q, LINKS[lk][0]) for lk, q, _ in cases],
        "topology.up.qdisc": [qdisc_for(q, LINKS[lk][1]) for lk, q, _ in cases],
        "flows": [[{**PAGE_FLOW, "page": p}, *cross] for _, _, p in cases],
    }
    return doc


def wifi_doc(test: str, reps: int, qdiscs, links=None) -> dict:
    """The sweep of a test over WiFi: wifi_rrul.toml with the test's flows (a web test: per
    page), every qdisc on its two WiFi interfaces configured for 100 Mb/s."""
    pages = PAGES if test.startswith("web_") else [None]
    cases = [(q, p) for q in qdiscs for p in pages]
    zip_: dict[str, list] = {"params.link": [WIFI] * len(cases), "params.qdisc": [q for q, _ in cases]}
    zip_.update({f"topology.hops.{h}.qdisc": [qdisc_for(q, 100) for q, _ in cases] for h in WIFI_HOPS})
    if test.startswith("web_"):
        zip_["params.page"] = [p for _, p in cases]
        zip_["flows"] = [[{**PAGE_FLOW, "page": p}, *web_cross(test)] for _, p in cases]
    elif test != WIFI_FILE:
        zip_["flows"] = [_flows(test)] * len(cases)
    name = f"{NAME}-{test}" if test == WIFI_FILE else f"{NAME}-{WIFI}-{test}"
    doc = {"base": str(scenario_file(WIFI_FILE)), "name": name, "seed": 2015, "reps": reps, "zip": zip_}
    if test.startswith("web_"):
        doc["seed_from"] = ["params.page"]
    return doc


def sweep_doc(test: str, reps: int, qdiscs, links) -> dict:
    """The sweep of one scenario file: every (link, qdisc) case, common seeds across qdiscs."""
    cases = [(lk, q) for lk in links for q in qdiscs]
    return {
        "base": str(scenario_file(test)),
        "name": f"{NAME}-{test}",
        "seed": 2015,
        "reps": reps,
        "seed_from": ["params.link"],
        "zip": {
            "params.link": [lk for lk, _ in cases],
            "params.qdisc": [q for _, q in cases],
            "topology.down.rate": [f"{LINKS[lk][0]}Mbps" for lk, _ in cases],
            "topology.up.rate": [f"{LINKS[lk][1]}Mbps" for lk, _ in cases],
            "topology.down.qdisc": [qdisc_for(q, LINKS[lk][0]) for lk, q in cases],
            "topology.up.qdisc": [qdisc_for(q, LINKS[lk][1]) for lk, q in cases],
        },
    }
