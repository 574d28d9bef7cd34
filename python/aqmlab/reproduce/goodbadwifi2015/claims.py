"""The claims of goodbadwifi2015's text, each judged at every link it was run on, and those of its
section 7 on the WiFi series (W1-W5); every threshold stated once, beside the words of the claim it
comes from."""

from __future__ import annotations

from aqmlab.lazy import lazy
from aqmlab.reproduce.goodbadwifi2015.published import TABLE2, TABLE2_ROWS
from aqmlab.reproduce.goodbadwifi2015.report import _links
from aqmlab.reproduce.goodbadwifi2015.setup import PAGES, QDISCS, WEB_CROSS
from aqmlab.reproduce.study import TOLERANCE, Claim, Outcome, agrees

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


# --------------------------------------------------------------------------- over WiFi (section 7)


def _every_qdisc(per_qdisc: dict, what: str) -> dict:
    """{qdisc: value} over the seven qdiscs; ValueError naming those without a value."""
    missing = [q for q in QDISCS if per_qdisc.get(q) is None]
    if missing:
        raise ValueError(f"no WiFi {what} for {', '.join(missing)}")
    return {q: per_qdisc[q] for q in QDISCS}


def _wifi_rrul(o: Outcome, key: str) -> dict:
    return _every_qdisc({q: v.get(key) for q, v in o.results["wifi_rrul"].items()}, key)


def _wifi_voip_loss(o: Outcome, cross: str) -> dict:
    loss = o.results["wifi_voip_loss_pct"]
    return _every_qdisc({q: v.get(cross) for q, v in loss.items()}, f"VoIP loss beside {cross}")


WIFI_FLOOR_MS = 100.0
"""Claim W1, "under RRUL every qdisc ... with a floor of about 100 ms": the lowest of the seven
qdiscs' induced latencies is about 100 ms, "about" being the agreement rule's 30 % (70-130 ms):
no qdisc gets far below it, and the best one gets near it."""


def claim_wifi_floor(o: Outcome):
    lat = _wifi_rrul(o, "induced_latency_ms")
    floor = min(lat.values())
    return bool(agrees(WIFI_FLOOR_MS, floor, None)), {"lowest_ms": floor, "induced_latency_ms": lat}


def claim_wifi_wired_order(o: Outcome):
    """Claim W2, "every qdisc keeps the same latency ordering as wired": the wired ordering as the
    study words it (claims 1 and 2: pfifo_fast highest, the FQ schemes lowest), over WiFi: the
    FIFO's induced latency above every other qdisc's, each FQ scheme's below every single-queue
    AQM's. Judged by groups, as the text orders them: it orders no qdiscs within a group."""
    lat = _wifi_rrul(o, "induced_latency_ms")
    fifo_top = lat[FIFO] > max(_others(lat, (FIFO,)))
    fq_below = max(lat[q] for q in FQ_SCHEMES) < min(lat[q] for q in SINGLE_QUEUE_AQMS)
    return fifo_top and fq_below, {"fifo_highest": fifo_top, "fq_below_single_queue_aqms": fq_below,
                                   "induced_latency_ms": lat}  # fmt: skip


ALMOST_NOTHING = 0.1
"""Claim W3, "upstream throughput drops to almost nothing although the link is nominally
symmetric": each qdisc's upstream goodput at most a tenth of its downstream. A symmetric link
shared fairly gives the two directions 1:1; a tenth leaves the upstream under 10 % of the total,
an order of magnitude below its fair half."""


def claim_wifi_upstream_starved(o: Outcome):
    down, up = _wifi_rrul(o, "goodput_down_mbps"), _wifi_rrul(o, "goodput_up_mbps")
    ratio = {q: up[q] / down[q] for q in QDISCS}
    return all(r <= ALMOST_NOTHING for r in ratio.values()), {
        "up_over_down": ratio,
        "goodput_down_mbps": down,
        "goodput_up_mbps": up,
    }


ONE_STREAM_LOSS_PCT = (0.2, 0.5)
"""Claim W4, "VoIP loss with one competing stream is small (0.2-0.5 %) and alike for every qdisc":
each qdisc's mean loss within the range, widened by the agreement rule's 30 % (0.14-0.65 %);
"alike" is the range itself: no qdisc outside it."""


def claim_wifi_voip_one_stream(o: Outcome):
    loss = _wifi_voip_loss(o, "1up")
    lo, hi = ONE_STREAM_LOSS_PCT[0] * (1 - TOLERANCE), ONE_STREAM_LOSS_PCT[1] * (1 + TOLERANCE)
    return all(lo <= v <= hi for v in loss.values()), {"loss_pct": loss, "range_pct": [lo, hi]}


AQM_RRUL_1MBIT_PCT = [TABLE2[r][3] for r, q in TABLE2_ROWS.items() if q in SINGLE_QUEUE_AQMS]
"""Table 2's loss of ARED, PIE and CoDel beside RRUL at 1 Mbit/s (its fourth column)."""
VERY_HIGH_PCT = min(AQM_RRUL_1MBIT_PCT) * (1 - TOLERANCE)
"""Claim W5, "under RRUL [VoIP loss] is very high for the single-queue AQMs ... following the low
effective upstream bandwidth": as high as on the study's slowest uplink, Table 2's RRUL column at
1 Mbit/s (ARED 26.33, PIE 14.03, CoDel 10.60 %): each single-queue AQM's mean loss at least the
lowest of the three less the agreement rule's 30 % (7.42 %)."""


def claim_wifi_voip_rrul(o: Outcome):
    """Claim W5: VERY_HIGH_PCT for the single-queue AQMs, and "far lower for the flow-queueing
    ones": each FQ scheme's loss at most the lowest single-queue AQM's over BY_FAR (claim 2's
    "by far"). The upstream goodput of the same runs beside it (the bandwidth it follows)."""
    loss = _wifi_voip_loss(o, "rrul")
    aqm = min(loss[q] for q in SINGLE_QUEUE_AQMS)
    high = aqm >= VERY_HIGH_PCT
    lower = max(loss[q] for q in FQ_SCHEMES) <= aqm / BY_FAR
    up = {q: o.results["wifi_voip_goodput_mbps"].get(q, {}).get("rrul", {}).get("up") for q in QDISCS}
    return high and lower, {"loss_pct": loss, "single_queue_very_high": high, "fq_far_lower": lower,
                            "goodput_up_mbps": up}  # fmt: skip


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
    Claim("W1", "Over WiFi, under RRUL every qdisc has a latency floor of about 100 ms (queueing in the driver and "
          "hardware).", claim_wifi_floor, ("wifi",)),
    Claim("W2", "Over WiFi every qdisc keeps the same latency ordering as wired.", claim_wifi_wired_order,
          ("wifi",)),
    Claim("W3", "Over WiFi upstream throughput drops to almost nothing although the link is nominally symmetric "
          "(airtime unfairness of the device combination).", claim_wifi_upstream_starved, ("wifi",)),
    Claim("W4", "Over WiFi VoIP loss with one competing stream is small (0.2-0.5 %) and alike for every qdisc.",
          claim_wifi_voip_one_stream, ("wifi",)),
    Claim("W5", "Over WiFi under RRUL VoIP loss is very high for the single-queue AQMs and far lower for the "
          "flow-queueing ones, following the low effective upstream bandwidth.", claim_wifi_voip_rrul, ("wifi",)),
)  # fmt: skip
