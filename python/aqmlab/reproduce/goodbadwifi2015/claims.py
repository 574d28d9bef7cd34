"""The claims of goodbadwifi2015's text, each judged at every link it was run on; every threshold
stated once, beside the words of the claim it comes from."""

from __future__ import annotations

from aqmlab.lazy import lazy
from aqmlab.reproduce.goodbadwifi2015.report import _links
from aqmlab.reproduce.goodbadwifi2015.setup import PAGES, QDISCS, WEB_CROSS
from aqmlab.reproduce.study import Claim, Outcome, agrees

np = lazy("numpy")

FIFO = "pfifo_fast"
SINGLE_QUEUE_AQMS = ("ared", "pie", "codel")
"""Claim 3, "the single-queue AQMs (ARED, PIE, CoDel)"."""
FQ_SCHEMES = ("sfq", "fq_nocodel", "fq_codel")
"""Claims 1 and 5, "the FQ schemes (SFQ, fq_nocodel, fq_codel)"."""


def _complete(table: dict, qdiscs=QDISCS) -> dict:
    """{case: {qdisc: value}} from a results table {qdisc: {case: value}}, over the cases (links,
    rates) measured for every one of ``qdiscs``."""
    cases = [c for c in table.get(qdiscs[0], {}) if all(table.get(q, {}).get(c) is not None for q in qdiscs)]
    return {c: {q: table[q][c] for q in qdiscs} for c in cases}


def _by_case(table: dict, qdiscs=QDISCS) -> dict:
    """``_complete``; ValueError when no case was measured for every one of ``qdiscs``."""
    out = _complete(table, qdiscs)
    if not out:
        raise ValueError(f"no case measured for all of {', '.join(qdiscs)}")
    return out


def _others(values: dict, group) -> list[float]:
    return [v for q, v in values.items() if q not in group]


def claim_fq_best_rrul(o: Outcome):
    """Claim 1 at every link: each FQ scheme's median induced latency below every other qdisc's,
    and its median goodput (down + up) at least every other qdisc's."""
    lat = _by_case(o.results["rrul_induced_latency_ms"])
    down, up = _by_case(o.results["rrul_goodput_down_mbps"]), _by_case(o.results["rrul_goodput_up_mbps"])
    good = {lk: {q: down[lk][q] + up[lk][q] for q in QDISCS} for lk in lat}
    lowest = all(max(v[q] for q in FQ_SCHEMES) < min(_others(v, FQ_SCHEMES)) for v in lat.values())
    best = all(min(v[q] for q in FQ_SCHEMES) >= max(_others(v, FQ_SCHEMES)) for v in good.values())
    return lowest and best, {"induced_latency_ms": lat, "goodput_mbps": good}


BY_FAR = 2.0
"""Claim 2, "pfifo_fast has by far the highest induced latency": at least twice the next highest."""


def claim_fifo_highest(o: Outcome):
    lat = _by_case(o.results["rrul_induced_latency_ms"])
    ratio = {lk: v[FIFO] / max(_others(v, (FIFO,))) for lk, v in lat.items()}
    return all(r >= BY_FAR for r in ratio.values()), {
        "fifo_over_next_highest": ratio,
        "induced_latency_ms": lat,
    }


def claim_aqm_fairness(o: Outcome):
    """Claim 3 at every rate: each single-queue AQM's median Jain's index below the FIFO's."""
    jain = _by_case(o.results["rtt_fair_jain"], (FIFO, *SINGLE_QUEUE_AQMS))
    return all(v[q] < v[FIFO] for v in jain.values() for q in SINGLE_QUEUE_AQMS), {"jain": jain}


FQ_CODEL_LOSS = 0.05
"""Claim 4, "fq_codel at 1 Mbit/s loses about 5 % of throughput in the RTT-fairness test": the
four uploads' total goodput under fq_codel that much below the median of the other qdiscs'
totals at 1 Mbit/s; "about": within the agreement rule's 30 %."""
LOSS_RATE = "1"
"""... "at 1 Mbit/s": the uploads' rate (the 10/1 link)."""
SUFFERS_RTOS = 1.0
"""... "(the 10 ms flow suffers retransmission timeouts)": at least one per run, on average."""


def claim_fq_codel_loss(o: Outcome):
    total = _by_case(o.results["rtt_fair_goodput_mbps"])[LOSS_RATE]
    loss = 1 - total["fq_codel"] / float(np.median(_others(total, ("fq_codel",))))
    rtos = o.results["rtt_fair_rto"]["fq_codel"][LOSS_RATE]["10ms"]
    holds = agrees(FQ_CODEL_LOSS, loss, None) and rtos >= SUFFERS_RTOS
    return holds, {"throughput_loss": loss, "total_goodput_mbps": total, "fq_codel_10ms_rtos_per_run": rtos}


FOLLOW_TAU = 0.5
"""Claim 5, "web page fetch times follow latency": across the qdiscs, the lower latency goes with
the faster fetch in at least three of four pairs (Kendall's tau >= 0.5), RRUL-loaded fetches
against the latency RRUL's probes measure in the same runs."""


def kendall_tau(x: list[float], y: list[float]) -> float:
    """Kendall's tau-a: (concordant - discordant pairs) / all pairs."""
    pairs = [(i, j) for i in range(len(x)) for j in range(i + 1, len(x))]
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i, j in pairs)
    return float(s / len(pairs))


def claim_web_follows_latency(o: Outcome):
    """Claim 5 at every link and page: tau(fetch time under RRUL, latency) >= FOLLOW_TAU, and
    "the FQ schemes fetch fastest under load": under either load each FQ scheme's normalised
    fetch time below every other qdisc's. Judged on the cases where every qdisc completed a
    fetch in the window; the others are listed."""
    fetch, lat = o.results["web_fetch_norm"], o.results["web_rrul_induced_latency_ms"]
    tau, fastest, left_out = {}, {}, []
    for p in PAGES:
        latency = _complete({q: lat.get(q, {}).get(p, {}) for q in QDISCS})
        for c in WEB_CROSS:
            table = {q: fetch.get(q, {}).get(p, {}).get(c, {}) for q in QDISCS}
            done = _complete(table)
            left_out += [f"{p} {c} {lk}" for lk in _links(table) if lk not in done]
            for lk, v in done.items():
                fastest[f"{p} {c} {lk}"] = max(v[q] for q in FQ_SCHEMES) < min(_others(v, FQ_SCHEMES))
                if c == "rrul" and lk in latency:
                    tau[f"{p} {lk}"] = kendall_tau([v[q] for q in QDISCS], [latency[lk][q] for q in QDISCS])
    if not tau or not fastest:
        raise ValueError("no web case with a completed fetch for every qdisc")
    holds = all(t >= FOLLOW_TAU for t in tau.values()) and all(fastest.values())
    return holds, {
        "kendall_tau": tau,
        "fq_fastest": fastest,
        "left out (a qdisc with no completed fetch)": ", ".join(left_out) or "none",
    }


CLAIMS = (
    Claim("1", "The FQ schemes (SFQ, fq_nocodel, fq_codel) give the lowest latency and the best goodput in RRUL.",
          claim_fq_best_rrul, ("rrul",)),
    Claim("2", "pfifo_fast has by far the highest induced latency.", claim_fifo_highest, ("rrul",)),
    Claim("3", "The single-queue AQMs (ARED, PIE, CoDel) make RTT fairness worse than the FIFO.",
          claim_aqm_fairness, ("rtt_fair",)),
    Claim("4", "fq_codel at 1 Mbit/s loses about 5 % of throughput in the RTT-fairness test (the 10 ms flow "
          "suffers retransmission timeouts).", claim_fq_codel_loss, ("rtt_fair",)),
    Claim("5", "Web page fetch times follow latency: the FQ schemes fetch fastest under load.",
          claim_web_follows_latency, ("web",)),
)  # fmt: skip
