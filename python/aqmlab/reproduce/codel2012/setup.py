"""codel2012's cases as the authors' ns-2 script sets them up: the qdiscs, rates, loads, RTTs and
buffers of each part, and each case's scenario built from ``scenarios/codel2012/base.toml`` by
the script's formulas (``case_scenario``), as one sweep (``spec_for``)."""

from __future__ import annotations

import copy
import math
from importlib import resources
from pathlib import Path

from aqmlab.lazy import lazy
from aqmlab.scenario import load

sweep = lazy("aqmlab.sweep")

NAME = "codel2012"
DESCRIPTION = (
    "Nichols & Jacobson 2012 (ns-2 script v120513): static rates 3..100 Mb/s and 128 kb/s..1.5 Mb/s, "
    "the degrading-Wi-Fi link (830/10-packet buffers), RTT range with drop-share fairness, the consumer "
    "edge, and managing the right queue; CoDel vs RED vs tail drop"
)
QDISCS = ["taildrop", "red", "codel"]
QDISC_SPECS = {
    # Tail drop: the script's bottleneck names ns-2.35's Queue/DropTail, whose enque refuses an
    # arrival once the queue with it would reach queue-limit (queue/drop-tail.cc DropTail::enque:
    # `q_->length() + 1 >= qlim_`), so a bdp-packet limit holds bdp - 1 waiting packets.
    "taildrop": {"kind": "pfifo", "ns2_limit": True},
    # RED: the script sets no RED parameter (its bottleneck is `duplex-link ... CoDel`; a RED run
    # names RED there instead), so RED is ns-2.35's Queue/RED with ns-default.tcl's values:
    # self-configuring (q_weight_ -1: w_q = 1 - exp(-1 / (10 RTT C)), RTT = max(0.1 s,
    # 3 (link delay + 1/C)); thresh_ 0: min_th = max(5, targetdelay_ 5 ms x C / 2); maxthresh_ 0:
    # max_th = 3 min_th; gentle_, wait_ true; linterm_ 10: max_p 0.1) in byte mode (bytes_ and
    # queue_in_bytes_ true since 2004) with mean_pktsize_ 500: C counts 500-byte packets, queue
    # and thresholds are bytes / 500, a packet's drop probability is scaled by size / 500 and the
    # uniformising count is bytes since the last drop / 500 (red.cc modify_p, count_bytes);
    # red.cc enque's `qlen > 1` rule and min_th crossing (ns2_quirks); the link delay is the
    # script's bdelay, 10 ms. The buffer (`limit`, set by case_scenario) is the script's
    # queue-limit times mean_pktsize, in bytes, which red.cc enque compares with the backlog
    # before an arrival (`qlen >= qlim` drops: limit_before_arrival), so it holds one packet
    # more than a limit refusing an arrival that would pass it (4 vs 3 full-size packets in
    # 1b's 10-packet case). Why RED's utilisation stays below CoDel's at 45 and 100 Mb/s:
    # docs/sweeps.md.
    "red": {
        "kind": "red",
        "bytes": True,
        "count_bytes": True,
        "mean_pktsize": "500B",
        "ns2_quirks": True,
        "limit_before_arrival": True,
        "link_delay": "10ms",
    },
    "codel": {"kind": "codel", "variant": "ns2", "target": "5ms", "interval": "100ms"},
}
REPS = 10
"""Replications per case."""

LARGE = [3.0, 10.0, 45.0, 100.0]
SMALL = [0.128, 0.256, 0.512, 1.5]
LOADS = {  # name: (FTPs, PackMime connections per second, CBRs)
    "1ftp": (1, 0, 0),
    "4ftp": (4, 0, 0),
    "16ftp": (16, 0, 0),
    "50ftp": (50, 0, 0),
    "4ftp+web5+cbr": (4, 5, 1),
    "16ftp+web20+2cbr": (16, 20, 2),
    "1ftp+web80": (1, 80, 0),
}
SMALL_LOADS = ["1ftp", "4ftp", "4ftp+web5+cbr"]
RTTS = [10, 30, 50, 100, 200, 500]
RTT_LOADS = ["4ftp", "16ftp", "4ftp+web5+cbr"]
WEB_ONLY = {"web2": 2, "web5": 5, "web20": 20}
"""Claim 10's web-only loads (name: PackMime connections per second) at every ``SMALL`` rate: the
web rates the study runs beside FTPs, 5/s (its small-rate mix and the dynamic link) and 20/s (its
16-FTP mix), and 2/s (the consumer edge at 512 kb/s and 1.5 Mb/s); 80/s goes with the large rates
only."""
STATIC_S = 60
DYNAMIC_S = 300
DYN_STEPS = [1.0, 0.1, 0.01, 0.5, 0.01, 1.0]  # the script's bw_changes, every stopTime / 6
BUFFERS = [830, 10]
EDGE_RATES = [0.512, 1.5]


def base_file() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "codel2012" / "base.toml"))


def psize(bw_mbps: float) -> int:
    """The script's packet size: 1500 B, 500 B below 1 Mb/s."""
    return 500 if bw_mbps < 1.0 else 1500


def bdp_packets(bw_mbps: float, size: int) -> int:
    """round(bw x nominal_rtt / (8 psize)) with nominal_rtt = 100 ms (the script's `bdp`), rounded
    as Tcl's round() does, halves away from zero (12.5 -> 13 at 1.5 Mb/s and 1500 B), not to even."""
    return max(1, math.floor(bw_mbps * 1e6 * 0.1 / (8 * size) + 0.5))


def rate(mbps: float) -> str:
    return f"{round(mbps * 1000)}kbps"


def _tcp(base: dict, label: str, size: int, bdp: int) -> dict:
    f = copy.deepcopy(next(f for f in base["flows"] if f.get("label") == label))
    f["mss"] = size - 52  # segsize_ = psize - 40, the 12-byte timestamp option inside the header
    f["rwnd"] = f"{16 * bdp * (size - 52)}B"  # window_ = 16 bdp
    return f


def case_scenario(base: dict, *, bw: float, qdisc: str, ftps: int, web: float, cbrs: int, rtt_ms: int = 100,
                  size: int | None = None, limit: int | None = None, duration: int = STATIC_S,
                  schedule: list[float] | None = None) -> dict:  # fmt: skip
    """The base scenario set up for one case by the script's formulas."""
    size = size or psize(bw)
    bdp = bdp_packets(bw, size)
    sc = copy.deepcopy(base)
    link = {"rate": rate(bw), "limit": f"{limit or bdp}p", "qdisc": copy.deepcopy(QDISC_SPECS[qdisc])}
    if qdisc == "red":
        mean = int(QDISC_SPECS["red"]["mean_pktsize"].removesuffix("B"))
        link["qdisc"]["limit"] = f"{(limit or bdp) * mean}B"  # queue-limit x mean_pktsize_ (qib_)
    if schedule:
        step = duration / len(schedule)
        link["rate"] = [[f"{round(k * step * 1000)}ms", rate(bw * f)] for k, f in enumerate(schedule)]
    sc["topology"] = {"rtt": f"{rtt_ms}ms", "mtu": f"{size}B", "nic_rate": rate(10 * bw),
                      "down": link, "up": copy.deepcopy(link)}  # fmt: skip
    sc["duration"] = f"{duration}s"
    flows = []
    for k in range(ftps):
        f = _tcp(base, "ftp", size, bdp)
        f["count"] = 1
        f["rtt"] = f"{rtt_ms + 2 * (k + 1)}ms"  # the FTP k's client 1 + k ms further away
        flows.append(f)
    if web:
        w = _tcp(base, "web", size, bdp)
        w["conn_rate"] = web
        flows.append(w)
    cbr = next(f for f in base["flows"] if f.get("label") == "cbr")
    for k in range(cbrs):
        c = copy.deepcopy(cbr)
        if k:
            c["start"] = {"uniform": ["0s", f"{2 * k}s"], "per": "group"}
        flows.append(c)
    sc["flows"] = flows
    return sc


def edge_scenario(base: dict, *, bw: float, qdisc: str, duration: int) -> dict:
    """1d: symmetric bw; two-way CBR, one bulk download, web at 2/s, and uploads of 1 MB files
    separated by idle periods uniform in 5..15 s."""
    sc = case_scenario(base, bw=bw, qdisc=qdisc, ftps=1, web=2, cbrs=1, duration=duration)
    up_cbr = copy.deepcopy(sc["flows"][-1])
    up_cbr["direction"] = "up"
    up_cbr["label"] = "cbr_up"
    upload = copy.deepcopy(sc["flows"][0])
    upload.update(
        direction="up", label="upload", rtt="100ms", bytes="1000000B", repeat={"idle": ["5s", "15s"]}
    )
    sc["flows"] += [up_cbr, upload]
    return sc


def right_queue_scenario(base: dict, *, qdisc: str, shaped: bool, duration: int) -> dict:
    """A router (the qdisc) in front of a 2 Mb/s modem FIFO of 256 packets, upstream; the router at
    100 Mb/s line rate or shaped to 1.9 Mb/s (95% of the modem)."""
    sc = case_scenario(base, bw=2.0, qdisc=qdisc, ftps=2, web=0, cbrs=0, duration=duration)
    for f in sc["flows"]:
        f["direction"] = "up"
    sc["topology"] = {
        "rtt": "100ms", "mtu": "1500B", "nic_rate": "1Gbps",
        "hops": [
            {"name": "router", "direction": "up", "rate": "1.9Mbps" if shaped else "100Mbps",
             "qdisc": copy.deepcopy(QDISC_SPECS[qdisc]), "limit": "1000p"},
            {"name": "modem", "direction": "up", "rate": "2Mbps", "qdisc": "pfifo", "limit": "256p"},
            {"name": "cmts", "direction": "down", "rate": "20Mbps", "qdisc": "pfifo", "limit": "1000p"},
        ],
    }  # fmt: skip
    return sc


def cases(
    qdiscs: list[str] | None = None, loads: list[str] | None = None, rtts: list[str] | None = None
) -> list[dict]:
    """Every case of the selected qdiscs, 1a/1c loads and 1c RTTs (None: all; the web-only cases
    whatever the loads): {"params": labels, "scenario": the scenario}."""
    base = load(str(base_file()))
    qs = [q for q in QDISCS if not qdiscs or q in qdiscs]
    static_s, dyn_s = STATIC_S, DYNAMIC_S
    large_loads = [ld for ld in LOADS if not loads or ld in loads]
    small_loads = [ld for ld in SMALL_LOADS if not loads or ld in loads]
    rtt_loads = [ld for ld in RTT_LOADS if not loads or ld in loads]
    rtts = [r for r in RTTS if not rtts or str(r) in rtts]
    out = []

    def add(part: str, case: str, q: str, sc: dict, **labels) -> None:
        out.append({"params": {"part": part, "case": case, "qdisc": q, **labels}, "scenario": sc})

    for q in qs:
        for bw in LARGE:
            for ld in large_loads:
                f, w, c = LOADS[ld]
                sc = case_scenario(base, bw=bw, qdisc=q, ftps=f, web=w, cbrs=c, duration=static_s)
                add("1a", f"1a/{bw}/{ld}", q, sc, rate_mbps=bw, load=ld, size=1500)
        for bw in SMALL:
            for size in sorted({psize(bw), 500}):
                for ld in small_loads:
                    f, w, c = LOADS[ld]
                    sc = case_scenario(
                        base, bw=bw, qdisc=q, ftps=f, web=w, cbrs=c, size=size, duration=static_s
                    )
                    add("1a", f"1a/{bw}/{ld}/{size}", q, sc, rate_mbps=bw, load=ld, size=size)
            for ld, w in WEB_ONLY.items():
                sc = case_scenario(base, bw=bw, qdisc=q, ftps=0, web=w, cbrs=0, duration=static_s)
                add("web", f"web/{bw}/{ld}", q, sc, rate_mbps=bw, load=ld, size=psize(bw))
        for buf in BUFFERS:
            sc = case_scenario(base, bw=100.0, qdisc=q, ftps=4, web=5, cbrs=0, limit=buf, duration=dyn_s,
                               schedule=DYN_STEPS)  # fmt: skip
            add("1b", f"1b/{buf}", q, sc, buffer=buf)
        for r in rtts:
            for ld in rtt_loads:
                f, w, c = LOADS[ld]
                sc = case_scenario(base, bw=10.0, qdisc=q, ftps=f, web=w, cbrs=c, rtt_ms=r, duration=static_s)
                add("1c", f"1c/{r}/{ld}", q, sc, rtt_ms=r, load=ld)
        if q != "red":
            for bw in EDGE_RATES:
                add("1d", f"1d/{bw}", q, edge_scenario(base, bw=bw, qdisc=q, duration=static_s), rate_mbps=bw)
        for shaped in (False, True):
            sc = right_queue_scenario(base, qdisc=q, shaped=shaped, duration=static_s)
            add("right_queue", f"rq/{shaped}", q, sc, shaped=shaped)
    return out


def spec_for(reps: int, qdiscs=None, loads=None, rtts=None):
    cs = cases(qdiscs, loads, rtts)
    labels = ["part", "case", "qdisc", "rate_mbps", "load", "size", "buffer", "rtt_ms", "shaped"]
    z: dict[str, list] = {"topology": [], "flows": [], "duration": []}
    z.update({f"params.{k}": [] for k in labels})
    for c in cs:
        for k in ("topology", "flows", "duration"):
            z[k].append(c["scenario"][k])
        for k in labels:
            z[f"params.{k}"].append(c["params"].get(k, ""))
    doc = {"base": str(base_file()), "name": NAME, "seed": 2012, "reps": reps,
           "seed_from": ["params.case"], "zip": [z]}  # fmt: skip
    return sweep.parse_sweep(doc, base_dir=base_file().parent)
