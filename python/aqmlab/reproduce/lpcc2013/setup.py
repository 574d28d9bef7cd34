"""lpcc2013's cases as the study ran them: the qdiscs and low-priority controllers, 3a's link, 3b's
testbed matrix (with its tc RED line, ``tc_red``), 3d's sensitivity grid; 3c's sweep file
(``spec_for``) and the one sweep of 3a, 3b and 3d's explicit cases (``cases``, ``parts_spec``)."""

from __future__ import annotations

import copy
import tomllib
from importlib import resources
from pathlib import Path

from aqmlab.lazy import lazy
from aqmlab.scenario import load

sweep = lazy("aqmlab.sweep")

NAME = "lpcc2013"
DESCRIPTION = (
    "Gong et al. 2013/14: NewReno vs LEDBAT / Nice / TCP-LP under AQMs: 3a shares over time, 3b the "
    "Linux testbed matrix (500 kb/s, 10 Mb/s), 3c the 4 Mb/s campaign (6 qdiscs, 10 reps), 3d sensitivity"
)
PARTS = ("3a", "3b", "3c", "3d")
QDISCS = ["droptail", "red", "choke", "drr", "sfq", "codel"]
LPCCS = ["ledbat", "nice", "tcp_lp"]
REPS = 10
"""3c's replications per case, as the study ran."""

# 3a: 10 Mb/s, 500 packets, DropTail vs RED; the rest as 3c's base.
A_QDISCS = ["droptail", "red"]
A_RATE, A_LIMIT = "10Mbps", "500p"

# 3b: the testbed matrix.
B_RED_TC = {"limit": 16000, "min": 1500, "max": 4500, "avpkt": 800, "burst": 5, "probability": 0.02}
"""3b's RED as a `tc qdisc add .. red` line (bytes): the study calls its RED "state of the art" and
gives no values; this is the RED line a co-author (Täht) published in 2011-12 for a shaped uplink
carrying BitTorrent beside other traffic (the deBloat scripts' `red min 1500 max 4500 probability
0.02 avpkt 800 limit 16000 burst 5`), the setting closest to the study's own question. Its `ecn`
is left out (neither iperf's NewReno nor uTP sends ECT), and so is tc's default `bandwidth` of
10 Mbit/s for the idle-time decay (aqmlab decays at the link's rate)."""


def tc_red(line: dict) -> dict:
    """aqmlab's ``red`` for a tc red line (``B_RED_TC``'s keys, bytes) on Linux 3.2 (iproute2 tc/q_red.c and tc/tc_red.c;
    net/sched/sch_red.c, include/net/red.h): byte thresholds against the backlog in bytes with a
    size-blind drop test (``bytes = "linux"``, thresholds in ``avpkt``-size packets); the EWMA
    weight 2^-Wlog with Wlog the least from 1 up with burst + 1 - min/avpkt <= (1 - (1 - W)^burst)/W
    (tc_red_eval_ewma); the drop probability at max (max - min) / 2^Plog with Plog the number of
    doublings of probability / (max - min) that pass 1 (tc_red_eval_P: 3.2 draws qR below 2^Plog,
    red_random, and drops once (avg - min) x count reaches it); above max every arrival is dropped
    (no gentle region in 3.2), the paper's count rule (no ``wait``)."""
    lo, hi, avpkt, burst = line["min"], line["max"], line["avpkt"], line["burst"]
    a = burst + 1 - lo / avpkt
    wlog = next(w for w in range(1, 32) if a <= (1 - (1 - 2.0**-w) ** burst) / 2.0**-w)
    per_byte = line["probability"] / (hi - lo)
    plog = next(i for i in range(32) if per_byte * 2**i > 1)
    return {"kind": "red", "limit": f"{line['limit']}B", "bytes": "linux", "mean_pktsize": f"{avpkt}B",
            "min_th": lo / avpkt, "max_th": hi / avpkt, "w_q": 2.0**-wlog,
            "max_p": (hi - lo) / 2**plog, "gentle": False, "wait": False}  # fmt: skip


B_QDISCS = {"fifo": "pfifo", "red": tc_red(B_RED_TC), "sfq": "sfq"}
"""HTB's class leaf: pfifo and SFQ at their Linux defaults (1000 packets, txqueuelen; 127), see
testbed.toml; RED as ``B_RED_TC``."""
B_LPCCS = ["ledbat", "tcp_lp"]
B_RATES = ["500kbps", "10Mbps"]
B_LOADS = {"1+1": 1, "5+5": 5}

# 3d: one parameter at a time around 3c's base (4 Mb/s, 400 packets, 50 ms, 5 + 5, LEDBAT).
D_QDISCS = ["droptail", "sfq"]
D_VALUES = {
    "qmax": [100, 200, 300, 400],  # packets
    "capacity": [0.25, 1.0, 4.0, 10.0],  # Mb/s
    "rtt": ["homogeneous", "heterogeneous"],
    "n": [1, 2, 3, 4, 5],  # flows per class
    "duty": [0.1, 0.25, 0.5, 1.0],
}
D_QUICK_VALUES = {"qmax": [100, 400], "capacity": [1.0, 4.0], "rtt": ["homogeneous", "heterogeneous"],
                  "n": [1, 5], "duty": [0.25, 1.0]}  # fmt: skip
"""The 3d values ``--quick`` keeps: the shortest and the full buffer (the shorter-buffer claim)
and two of every other parameter."""
D_RTT_SPREAD = "40ms"
"""Heterogeneous RTTs: uniform in 50 +- 40 ms per flow and seed (mean 50 ms as the study; the
spread, not given, spans 10..90 ms)."""
D_CYCLE_S = 10.0
"""On/off cycle: exponential on and off periods of means duty x 10 s and (1 - duty) x 10 s
(the study gives the duty cycle only); every flow of both classes is an on/off source."""
PART_REPS = 3
"""Runs per case of 3a, 3b and 3d: 3b's 3 runs (the study's); 3a and 3d, where the study does
not say, the same (3a's figure shows the first run)."""


def d_point(param: str, value) -> str:
    """A 3d grid point as ``run``'s ``sensitivity`` names it: "qmax=100"."""
    return f"{param}={value}"


QUICK_3D = tuple(d_point(p, v) for p, vs in D_QUICK_VALUES.items() for v in vs)
"""``--quick``'s 3d points."""


def _scenarios() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "lpcc2013"))


def sweep_file() -> Path:
    return _scenarios() / "sweep.toml"


def lpcc_params(lpcc: str) -> dict:
    """The ``cc_params`` 3c's sweep gives ``lpcc`` (TCP-LP's drawn host clocks), which 3b's
    testbed runs take too."""
    z = next(z for z in tomllib.loads(sweep_file().read_text())["zip"] if "flows.1.cc" in z)
    return copy.deepcopy(z["flows.1.cc_params"][z["flows.1.cc"].index(lpcc)])


def qdisc_specs() -> dict:
    """3c's qdisc name -> topology.down.qdisc, as sweep.toml declares them (shared by 3a, 3d)."""
    z = next(z for z in tomllib.loads(sweep_file().read_text())["zip"] if "params.qdisc" in z)
    return dict(zip(z["params.qdisc"], z["topology.down.qdisc"], strict=True))


def _with_qdisc(sc: dict, spec) -> dict:
    sc["topology"]["down"]["qdisc"] = copy.deepcopy(spec)
    return sc


def _lp(sc: dict) -> dict:
    return next(f for f in sc["flows"] if f.get("label") == "lp")


def cases() -> list[dict]:
    """Every case of 3a, 3b and 3d: {"params": labels, "scenario": the scenario}."""
    base, testbed, specs = (
        load(str(_scenarios() / "base.toml")),
        load(str(_scenarios() / "testbed.toml")),
        qdisc_specs(),
    )
    out: list[dict] = []

    def add(sc: dict, **labels) -> None:
        case = "/".join(str(v) for v in labels.values())
        out.append({"params": {"case": case, **labels}, "scenario": sc})

    for q in A_QDISCS:
        sc = _with_qdisc(copy.deepcopy(base), specs[q])
        sc["topology"]["down"].update(rate=A_RATE, limit=A_LIMIT)
        add(sc, part="3a", qdisc=q)
    for rate in B_RATES:
        for lp in B_LPCCS:
            for q, spec in B_QDISCS.items():
                for load_name, n in B_LOADS.items():
                    add(_testbed_case(testbed, spec, rate, lp, n), part="3b", rate=rate, lpcc=lp, qdisc=q,
                        load=load_name)  # fmt: skip
    for param, values in D_VALUES.items():
        for q in D_QDISCS:
            for v in values:
                sc = _with_qdisc(copy.deepcopy(base), specs[q])
                _sensitivity(sc, param, v)
                add(sc, part="3d", param=param, qdisc=q, value=v)
    return out


def _testbed_case(testbed: dict, spec, rate: str, lp: str, n: int) -> dict:
    """One 3b case: the testbed with ``spec`` at ``rate``, ``n`` flows per class, LPCC ``lp``."""
    sc = _with_qdisc(copy.deepcopy(testbed), spec)
    sc["topology"]["down"]["rate"] = rate
    for f in sc["flows"]:
        if f["kind"] == "tcp":
            f["count"] = n
    if lp != "ledbat":
        # the kernel's module on a TCP socket, where LEDBAT is libutp's uTP over UDP
        _lp(sc).pop("udp_socket", None)
        _lp(sc)["cc"] = lp
        _lp(sc)["cc_params"] = lpcc_params(lp)
    return sc


def _sensitivity(sc: dict, param: str, v) -> None:
    """Sets one 3d parameter on a copy of 3c's base scenario."""
    if param == "qmax":
        sc["topology"]["down"]["limit"] = f"{v}p"
    elif param == "capacity":
        sc["topology"]["down"]["rate"] = sc["topology"]["up"]["rate"] = f"{v}Mbps"
    elif param == "rtt" and v == "heterogeneous":
        for f in sc["flows"]:
            f["rtt_spread"] = D_RTT_SPREAD
    elif param == "n":
        for f in sc["flows"]:
            f["count"] = v
    elif param == "duty" and v < 1.0:
        for f in sc["flows"]:
            f["on_off"] = {"on": f"{v * D_CYCLE_S:g}s", "off": f"{(1 - v) * D_CYCLE_S:g}s"}


PART_LABELS = ["part", "case", "qdisc", "lpcc", "rate", "load", "param", "value"]


def _wanted(p: dict, parts, rates, sensitivity) -> bool:
    """Whether a case of ``cases`` is asked: its part, 3b's rate, 3d's point (None: all)."""
    if p["part"] not in parts:
        return False
    if p["part"] == "3b":
        return not rates or p["rate"] in rates
    if p["part"] == "3d":
        return not sensitivity or d_point(p["param"], p["value"]) in sensitivity
    return True


def parts_spec(reps: int, parts, rates=None, sensitivity=None):
    """One sweep of every 3a, 3b and 3d case, selecting the asked ones; None when none is."""
    cs = cases()
    chosen = [c["params"]["case"] for c in cs if _wanted(c["params"], parts, rates, sensitivity)]
    if not chosen:
        return None
    z: dict[str, list] = {"topology": [], "flows": [], "duration": []}
    z.update({f"params.{k}": [] for k in PART_LABELS})
    for c in cs:
        for k in ("topology", "flows", "duration"):
            z[k].append(c["scenario"][k])
        for k in PART_LABELS:
            z[f"params.{k}"].append(str(c["params"].get(k, "")))
    doc = {"base": str(_scenarios() / "base.toml"), "name": f"{NAME}-parts", "seed": 2013,
           "reps": min(reps, PART_REPS), "seed_from": ["params.case"], "zip": [z]}  # fmt: skip
    spec = sweep.parse_sweep(doc, base_dir=_scenarios())
    spec.select["params.case"] = chosen
    return spec


def spec_for(reps: int, qdiscs=None, lpccs=None):
    """3c's sweep (sweep.toml), filtered."""
    spec = sweep.parse_sweep(sweep_file())
    spec.reps = reps
    if qdiscs:
        spec.select["params.qdisc"] = list(qdiscs)
    if lpccs:
        spec.select["params.lpcc"] = list(lpccs)
    return spec
