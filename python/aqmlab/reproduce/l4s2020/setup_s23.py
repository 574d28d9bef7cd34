"""l4s2020's scenario-2 and scenario-3 cases as the study's batch configured them (l4s.batch,
Batch::l4s-s2-codel-rate-step and Batch::l4s-s3-codel-variable-rate; docs/study-setups.md 5): one
upload whose bottleneck rate steps, clean or through a bursty hop (netem's slots), and the one sweep
of the cases asked (``spec_for``). Every case is scenarios/l4s2020/rate_step.toml (scenario 2) or
variable_rate.toml (scenario 3) with its rate schedule, qdisc, RTT, congestion control and
burstiness set."""

from __future__ import annotations

import copy
from importlib import resources
from pathlib import Path

from aqmlab.lazy import lazy
from aqmlab.reproduce.l4s2020.setup import CUBIC_ECN, DUALPI2_2020, NAME, PRAGUE_2020, SERIES, case_sweep
from aqmlab.scenario import load

sweep = lazy("aqmlab.sweep")

FLENT_DELAY_S = 5
"""Flent starts its flows DELAY seconds into a test (flent's tests, DELAY = 5 by default) and
the harness's step timer starts at the setup, before Flent: the flow runs from 5 s, the steps are
at the batch's times from 0 (``fl``, ``qdisc``: ``sleep $after`` then ``tc class change``)."""
LENGTH_S = 60
"""The flow's length (Arg::s2_lowrtt, s2_medrtt, s3_lowrtt, s3_medrtt: ``length``)."""
RTTS = (20, 80)
"""Base RTTs in ms (``netem delay 10ms`` and ``40ms`` each way: Arg::s2_lowrtt, s2_medrtt)."""
CCS = ("prague", "cubic")
"""Arg::s2_prague, s2_cubic (and s3's)."""
QDISCS = ("fq_codel", "dualpi2")
"""Arg::s2_fq_codel, s2_dualpi2 (and s3's); the qdisc is the same before and after each step
(``qdisc bidir after 30 htb RATE1`` changes the class's rate and names no qdisc)."""

S2_RATE = 50
"""Scenario 2's rate before the step, Mbit/s (Batch::s2-codel-rate-step: ``bandwidth``)."""
S2_STEP_S = 30
"""Scenario 2's step time (Arg::s2_lowrtt, s2_medrtt: ``delay1``)."""
S2_RATES1 = (25, 10, 5, 1)
"""Scenario 2's rate after the step, Mbit/s (Arg::s2_bandwidth1_*)."""
S2_BURSTS = {"clean": None, "bursty": 16}
"""Scenario 2's burstiness (its file names' ``burstname``) and the bursty stage's slot packet budget
(Arg::s2_lowrtt_bursty, s2_medrtt_bursty: ``slot 800us 5ms packets 16``; clean: no stage)."""

S3_SCHEDULE = ((0, 100), (25, 50), (30, 10), (35, 90), (50, 5))
"""Scenario 3's rate steps, (time s, Mbit/s) (Batch::s3-codel-variable-rate ``bandwidth``;
Batch::l4s-s3-codel-variable-rate ``delay1``..``delay4``, ``bandwidth1``..``bandwidth4``)."""
S3_BURSTS = {"not_bursty": None, "bursty": 32}
"""Scenario 3's burstiness and the bursty stage's slot packet budget (Arg::s3_*_bursty: ``packets 32``)."""
S3_FQ_CODEL_ECN = {"prague": True, "cubic": False}
"""Scenario 3's fq_codel: ``fq_codel ecn`` for Prague, ``fq_codel noecn`` for CUBIC (Arg::s3_prague,
s3_cubic: ``fq_codel_ecn``); scenario 2's has no argument (ECN on for both)."""

SLOT = {"min": "800us", "max": "5ms"}
"""The bursty stage's slots (``netem delay 200us slot 800us 5ms packets N limit 10000``)."""
SLOT_DELAY = "200us"
"""The bursty stage's own netem delay."""
SLOT_LIMIT = "10000p"
"""The bursty stage's netem limit."""
SLOT_LINE = "1Gbps"
"""The rate the bursty hop serialises at: the testbed's ifb and veths have none, aqmlab's hop
needs one; the interface rate of the rest of the testbed (``topology.nic_rate``'s default)."""


BASE_FILES = {"2": "rate_step.toml", "3": "variable_rate.toml"}
"""Each scenario's built-in file (scenarios/l4s2020/), its cases' base."""


def base_file(scenario: str = "2") -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "l4s2020" / BASE_FILES[scenario]))


def schedule(steps) -> list[list[str]]:
    """A hop's rate schedule of (time s, Mbit/s) steps."""
    return [[f"{t}s", f"{r}Mbps"] for t, r in steps]


def qdisc_spec(qdisc: str, scenario: int, cc: str, divisor: int) -> dict | str:
    if qdisc == "dualpi2":
        return {**DUALPI2_2020, "pi_divisor": divisor}
    if scenario == 3:
        return {"kind": "fq_codel", "ecn": S3_FQ_CODEL_ECN[cc]}
    return "fq_codel"


def slot_hop(name: str, direction: str, packets: int) -> dict:
    """The bursty stage on the middlebox's ingress, in front of the direction's bottleneck."""
    return {"name": name, "direction": direction, "rate": SLOT_LINE, "delay": SLOT_DELAY,
            "qdisc": {"kind": "pfifo", "limit": SLOT_LIMIT}, "slot": {**SLOT, "packets": packets}}  # fmt: skip


def scenario(base: dict, steps, qdisc, cc: str, rtt_ms: int, slot_packets: int | None) -> dict:
    sc = copy.deepcopy(base)
    hops = []
    for hop in sc["topology"]["hops"]:
        if slot_packets is not None:
            hops.append(slot_hop(f"burst_{hop['name']}", hop["direction"], slot_packets))
        hops.append({**hop, "rate": schedule(steps), "qdisc": copy.deepcopy(qdisc)})
    sc["topology"]["hops"] = hops
    f = copy.deepcopy(sc["flows"][0])
    f.pop("cc_params", None)
    f.pop("ecn", None)
    f.update(cc=cc, rtt=f"{rtt_ms}ms", start=f"{FLENT_DELAY_S}s", stop=f"{FLENT_DELAY_S + LENGTH_S}s")
    if cc == "prague":
        f["cc_params"] = dict(PRAGUE_2020)
    else:
        f["ecn"] = CUBIC_ECN
    sc["flows"] = [f]
    sc["duration"] = f"{FLENT_DELAY_S + LENGTH_S}s"
    return sc


def s2_case(burst: str, rate1: int, rtt: int, qdisc: str, cc: str) -> str:
    return f"s2/{burst}/{rate1}/{rtt}/{qdisc}/{cc}"


def s3_case(burst: str, rtt: int, qdisc: str, cc: str) -> str:
    return f"s3/{burst}/{rtt}/{qdisc}/{cc}"


def s2_cases(divisor: int) -> list[dict]:
    base = load(str(base_file()))
    out = []
    for burst, packets in S2_BURSTS.items():
        for rate1 in S2_RATES1:
            for rtt in RTTS:
                for q in QDISCS:
                    for cc in CCS:
                        steps = steps_of({"scenario": "2", "rate1": rate1})
                        sc = scenario(base, steps, qdisc_spec(q, 2, cc, divisor), cc, rtt, packets)
                        labels = {"scenario": "2", "burst": burst, "rate1": str(rate1), "rtt": str(rtt), "qdisc": q,
                                  "cc": cc}  # fmt: skip
                        out.append(
                            {"params": {"case": s2_case(burst, rate1, rtt, q, cc), **labels}, "scenario": sc}
                        )
    return out


def s3_cases(divisor: int) -> list[dict]:
    base = load(str(base_file("3")))
    out = []
    for burst, packets in S3_BURSTS.items():
        for rtt in RTTS:
            for q in QDISCS:
                for cc in CCS:
                    sc = scenario(base, S3_SCHEDULE, qdisc_spec(q, 3, cc, divisor), cc, rtt, packets)
                    labels = {
                        "scenario": "3",
                        "burst": burst,
                        "rate1": "-",
                        "rtt": str(rtt),
                        "qdisc": q,
                        "cc": cc,
                    }
                    out.append({"params": {"case": s3_case(burst, rtt, q, cc), **labels}, "scenario": sc})
    return out


LABELS = ("case", "scenario", "burst", "rate1", "rtt", "qdisc", "cc")


def cases(divisor: int, scenarios=("2", "3"), names=None) -> list[dict]:
    """The asked cases of the asked scenarios (``names``: only these case names; None: all)."""
    cs = [*(s2_cases(divisor) if "2" in scenarios else []), *(s3_cases(divisor) if "3" in scenarios else [])]
    return [c for c in cs if not names or c["params"]["case"] in names]


def spec_for(series: str, reps: int, scenarios, names=None):
    """The sweep of the asked cases of ``series``; each case's seed comes from its name alone. None without one."""
    keys = ("topology", "flows", "duration")
    cs = cases(SERIES[series], scenarios, names)
    return case_sweep(cs, f"{NAME}-s23-{series}", reps, keys, LABELS, base_file())


def steps_of(params: dict) -> tuple[tuple[int, int], ...]:
    """A case's rate steps, (time s, Mbit/s), from its labels."""
    if str(params["scenario"]) == "3":
        return S3_SCHEDULE
    return ((0, S2_RATE), (S2_STEP_S, int(params["rate1"])))
