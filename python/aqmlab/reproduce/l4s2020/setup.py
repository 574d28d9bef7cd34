"""l4s2020's scenario-1 cases as the study's scripts configured them (docs/study-setups.md 5): the
rates with their pfifo limits, the qdiscs, the flows' RTT pairs and congestion-control pairs, the
2020 variants of TCP Prague and dualpi2, and the one sweep of the cases asked (``spec_for``).
Every case is scenarios/l4s2020/testbed.toml with its rate, qdisc, RTTs and controllers set."""

from __future__ import annotations

import copy
from importlib import resources
from pathlib import Path

from aqmlab.lazy import lazy
from aqmlab.scenario import load

sweep = lazy("aqmlab.sweep")

NAME = "l4s2020"
DESCRIPTION = (
    "Heist and Morton 2020, L4S tests: scenario 1 (RTT fairness, two 180 s uploads through HTB at 50 and 10 Mbit/s "
    "over dualpi2, pfifo and fq_codel), scenario 2 (one upload whose rate steps from 50 Mbit/s, clean or bursty) and "
    "scenario 3 (variable rate), CUBIC and TCP Prague as the L4S team's 2020 kernel ran them"
)
REPS = 1
"""One run per row, as the study ran (l4s.batch: one repetition)."""
SEED = 2020

RATES = {"50": 50, "10": 10}
"""The bottleneck rates in Mbit/s (l4s.batch: Arg::s1_50mbit, Arg::s1_10mbit, `bandwidth`)."""
PFIFO_LIMIT = {"50": 1000, "10": 200}
"""pfifo's limit in packets at each rate (Arg::s1_50mbit, Arg::s1_10mbit: `pfifo_limit`)."""
QDISCS = ("dualpi2", "pfifo", "fq_codel")
"""The qdiscs reproduced; the study's fourth, cnq_codel_af (the authors' approximate-fairness CoDel
of their SCE work), is not modelled in aqmlab and is out of scope."""
RTT_PAIRS = {"10/10": (10, 10), "20/10": (20, 10), "20/20": (20, 20), "80/80": (80, 80), "80/20": (80, 20),
             "160/10": (160, 10)}  # fmt: skip
"""(flow 1, flow 2) base RTTs in ms (Arg::s1_rtt_*: `rtt`, `rtt2`; each flow's netem delay twice)."""
CC_PAIRS = (("cubic", "cubic"), ("cubic", "prague"), ("prague", "cubic"), ("prague", "prague"))
"""(flow 1, flow 2) congestion controls (l4s.batch `for_vs`: both orders of cubic and prague)."""
SCENARIOS = ("1", "2", "3")
"""The study's scenarios reproduced: 1 (RTT fairness), 2 (rate step), 3 (variable rate)."""
DURATION_S = 180
"""Flent's tcp_2up length (Batch::l4s-s1-rttfair: `length`)."""

PRAGUE_2020 = {
    "alpha_mode": 1,
    "rtt_target": "0s",
    "integer_cwnd": "carry",
    "loss_response": "per_ack",
    "pacing_unit": "mtu",
}
"""tcp_prague.c at L4STeam/linux b256dae (MODULE_VERSION "0.5"): alpha starts at 1 (prague_init:
upscaled_alpha = PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G), RTT independence off (the module parameter
prague_rtt_scaling = RTT_CONTROL_NONE, read in prague_init), an integer cwnd with a carry of less
than a segment (prague_update_cwnd), and a loss answered by halving the carry, stepped into cwnd
one segment per ACK with no PRR and ssthresh left alone (prague_enter_loss, prague_ssthresh, the
cong_control hook), and its pacing rate the window in MTU-sized packets per SRTT
(prague_update_pacing_rate: tcp_mss_to_mtu; the kernel paces it itself, the client's veth having
no qdisc, and holds each packet back by its payload)."""
CUBIC_ECN = "classic"
"""CUBIC under the testbed's net.ipv4.tcp_ecn = 3 (the AccECN patches: request AccECN out, accept
it in): AccECN negotiated, ECT(0) sent, RFC 3168's response; aqmlab's ECT(0) sender with RFC 3168's
response and feedback (docs/transports.md 1.5)."""
SERIES = {"div127": 127, "div64": 64}
"""dualpi2's PI divisor per series: 127 in the 2019 netdev submission (sch_dualpi2.c,
calculate_probability; also L4STeam/linux 29c297fd), 64 in the later files (e1ec6e79 and
dejeneboru/mdtcp-mprague 715833c6, __scale_delta). Which b256dae held is unknown; the default
series is the only dated revision's 127."""
DUALPI2_2020 = {"kind": "dualpi2", "min_qlen_step": 2}
"""dualpi2 with no arguments as of 2020: today's defaults plus the step applied only when the L
queue held more than one packet at the arrival (sch_dualpi2.c, dualpi2_qdisc_enqueue: apply_step =
qdisc_qlen(l_queue) > 1); ``pi_divisor`` per series (``SERIES``)."""


def base_file() -> Path:
    return Path(str(resources.files("aqmlab") / "scenarios" / "l4s2020" / "testbed.toml"))


def qdisc_spec(qdisc: str, rate: str, divisor: int) -> dict | str:
    """The leaf of HTB's class: dualpi2 as of 2020, pfifo with the rate's limit, fq_codel's defaults."""
    if qdisc == "dualpi2":
        return {**DUALPI2_2020, "pi_divisor": divisor}
    if qdisc == "pfifo":
        return {"kind": "pfifo", "limit": f"{PFIFO_LIMIT[rate]}p"}
    return "fq_codel"


def flow(base: dict, cc: str, rtt_ms: int) -> dict:
    """A flow of the testbed file with ``cc`` (Prague's 2020 parameters, CUBIC's ECN) over ``rtt_ms``."""
    f = copy.deepcopy(base)
    f.pop("cc_params", None)
    f.pop("ecn", None)
    f.update(cc=cc, rtt=f"{rtt_ms}ms")
    if cc == "prague":
        f["cc_params"] = dict(PRAGUE_2020)
    else:
        f["ecn"] = CUBIC_ECN
    return f


def case_name(rate: str, qdisc: str, rtts: str, ccs: tuple[str, str]) -> str:
    return f"{rate}/{qdisc}/{rtts}/{ccs[0]}-{ccs[1]}"


def _asked(value: str, asked) -> bool:
    return not asked or value in asked


def cases(divisor: int, qdiscs=None, rates=None, rtts=None) -> list[dict]:
    """The asked cases (None: all): {"params": labels, "scenario": the scenario}."""
    base = load(str(base_file()))
    flows = base["flows"]
    out = []
    for rate, mbit in RATES.items():
        for q in QDISCS:
            for rtt, ms in RTT_PAIRS.items():
                if not _asked(rate, rates) or not _asked(q, qdiscs) or not _asked(rtt, rtts):
                    continue
                for ccs in CC_PAIRS:
                    sc = copy.deepcopy(base)
                    sc["duration"] = f"{DURATION_S}s"
                    spec = qdisc_spec(q, rate, divisor)
                    for d in ("up", "down"):
                        sc["topology"][d].update(rate=f"{mbit}Mbps", qdisc=copy.deepcopy(spec))
                    sc["flows"] = [flow(f, cc, r) for f, cc, r in zip(flows, ccs, ms, strict=True)]
                    labels = {"rate": rate, "qdisc": q, "rtts": rtt, "cc1": ccs[0], "cc2": ccs[1]}
                    out.append({"params": {"case": case_name(rate, q, rtt, ccs), **labels}, "scenario": sc})
    return out


LABELS = ("case", "rate", "qdisc", "rtts", "cc1", "cc2")


def spec_for(series: str, reps: int = REPS, qdiscs=None, rates=None, rtts=None):
    """The sweep of the asked cases of ``series``, ``reps`` runs each; the seed comes from the case alone, so a reduced
    run's cases and seeds are the full run's. None when no case is asked."""
    return case_sweep(
        cases(SERIES[series], qdiscs, rates, rtts), f"{NAME}-{series}", reps, ("topology", "flows"), LABELS
    )


def case_sweep(
    cs: list[dict],
    name: str,
    reps: int,
    keys: tuple[str, ...],
    labels: tuple[str, ...],
    base: Path | None = None,
):
    """One sweep over the scenario file ``base`` (the testbed's by default) zipping the cases'
    scenario ``keys`` and their ``labels`` as params, ``reps`` runs each, every case's seed from its
    name (`params.case`) alone. None for no case."""
    base = base or base_file()
    if not cs:
        return None
    z: dict[str, list] = {k: [] for k in keys}
    z.update({f"params.{k}": [] for k in labels})
    for c in cs:
        for k in keys:
            z[k].append(c["scenario"][k])
        for k in labels:
            z[f"params.{k}"].append(c["params"][k])
    doc = {"base": str(base), "name": name, "seed": SEED, "reps": reps,
           "seed_from": ["params.case"], "zip": [z]}  # fmt: skip
    return sweep.parse_sweep(doc, base_dir=base.parent)
