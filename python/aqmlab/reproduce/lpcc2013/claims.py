"""The claims of lpcc2013's text, each judged on its part's runs; every threshold stated once,
beside the words of the claim it comes from."""

from __future__ import annotations

from aqmlab.reproduce.lpcc2013.setup import A_QDISCS, D_VALUES, LPCCS, QDISCS
from aqmlab.reproduce.study import TOLERANCE, Claim, Outcome

SHARE_POINTS = 5.0
"""'about' for a TCP% (claims 1 and 3): within 5 percentage points."""
FAIR_PCT = 50.0
"""Equal shares: TCP% = 50 (five flows of each class; one of each in 3b)."""
A_DROPTAIL_TCP_PCT = 99.0
"""Claim 1, "DropTail TCP% about 99 %": within SHARE_POINTS."""
A_DROPTAIL_QUEUE_PKTS = 400.0
"""... "with about 400 packets queued on average": within the study's 30 % (study.TOLERANCE)."""
A_RED_QUEUE_BELOW_PKTS = 4.0
"""... "RED: average queue below 4 packets" ..."""
A_RED_UTIL_LOWER = 0.03
"""... "utilisation about 3 % lower": 1 - eta_RED / eta_DropTail within 30 % of 3 % ..."""
# ... "and the two classes share about equally": RED's TCP% within SHARE_POINTS of FAIR_PCT.

AQMS = [q for q in QDISCS if q != "droptail"]
"""The claims' "AQMs": every 3c discipline but DropTail (the schedulers DRR and SFQ included, as
the claims name SFQ among them)."""
QUEUE_SHRINK_MIN = 14.0
"""Claim 2, "the AQMs make the queue 14 (SFQ) to 77 (RED) times smaller": every AQM's E[Q] at
least 14 times below DropTail's with the same LPCC (77, RED's, tops the range: not a bound)."""
AQM_DELAY_BELOW_MS = 85.0
"""... "the queueing delay under every AQM stays below 85 ms (SFQ is the worst case)": every
(LPCC, AQM) pair's mean queueing delay below 85 ms, SFQ's the largest of the AQMs per LPCC."""
AQM_TCP_PCT = (35.0, 46.0)
"""Claim 3, "TCP's share falls to 35 % (CoDel) to 46 % (CHOKe) with LEDBAT": every AQM's TCP%
with LEDBAT within 35..46 % widened by SHARE_POINTS each side (the names mark the range's ends;
which AQM sits where is reported, not judged)."""
CLOSE_POINTS = 20.0
"""Claim 4, "all (LPCC, AQM) pairs end close together: short queue, priorities gone": the TCP%
of every pair within 20 points of every other's and of FAIR_PCT (claim 5's "priorities lost"
too) ..."""
SHORT_QUEUE = 0.1
"""... and every pair's E[Q]/Q_max below a tenth of the buffer."""


def _need(v, what: str) -> float:
    if v is None:
        raise KeyError(f"{what} not run")
    return float(v)


def _within(measured: float, published: float, tol: float = TOLERANCE) -> bool:
    return abs(measured - published) <= tol * abs(published)


def claim_3a(o: Outcome):
    a = o.results["3a"]
    tcp = {q: _need(a["tcp_share_pct"][q], f"3a {q}") for q in A_QDISCS}
    queue = {q: _need(a["mean_queue_pkts"][q], f"3a {q}") for q in A_QDISCS}
    eta = {q: _need(a["utilization"][q], f"3a {q}") for q in A_QDISCS}
    lower = 1 - eta["red"] / eta["droptail"]
    parts = {
        "droptail TCP% about 99": abs(tcp["droptail"] - A_DROPTAIL_TCP_PCT) <= SHARE_POINTS,
        "droptail queue about 400": _within(queue["droptail"], A_DROPTAIL_QUEUE_PKTS),
        "red queue below 4": queue["red"] < A_RED_QUEUE_BELOW_PKTS,
        "red utilisation about 3 % lower": _within(lower, A_RED_UTIL_LOWER),
        "red shares about equally": abs(tcp["red"] - FAIR_PCT) <= SHARE_POINTS,
    }
    return all(parts.values()), {"tcp_pct": tcp, "mean_queue_pkts": queue, "utilization": eta,
                                 "red_utilization_lower": lower, "parts": parts}  # fmt: skip


def _c(o: Outcome, key: str, lp: str, q: str) -> float:
    return _need(o.results["3c"][key][lp][q], f"3c {lp}/{q}")


def claim_queue_shrink(o: Outcome):
    shrink = {lp: {q: _c(o, "eq_over_qmax", lp, "droptail") / _c(o, "eq_over_qmax", lp, q) for q in AQMS}
              for lp in LPCCS}  # fmt: skip
    delay = {lp: {q: _c(o, "mean_queue_ms", lp, q) for q in AQMS} for lp in LPCCS}
    parts = {
        "every AQM 14x smaller": all(v >= QUEUE_SHRINK_MIN for s in shrink.values() for v in s.values()),
        "every AQM below 85 ms": all(v < AQM_DELAY_BELOW_MS for d in delay.values() for v in d.values()),
        "SFQ the worst": all(max(d, key=d.get) == "sfq" for d in delay.values()),
    }
    return all(parts.values()), {"droptail_over_aqm_queue": shrink, "aqm_delay_ms": delay, "parts": parts}


def claim_ledbat_share(o: Outcome):
    tcp = {q: _c(o, "tcp_share_pct", "ledbat", q) for q in AQMS}
    lo, hi = AQM_TCP_PCT
    holds = all(lo - SHARE_POINTS <= v <= hi + SHARE_POINTS for v in tcp.values())
    return holds, {"ledbat_tcp_pct": tcp, "lowest": min(tcp, key=tcp.get), "highest": max(tcp, key=tcp.get)}


def _priorities_gone(tcp: list[float]) -> bool:
    """CLOSE_POINTS' reading: the shares within 20 points of each other and of the fair share."""
    return max(tcp) - min(tcp) <= CLOSE_POINTS and all(abs(v - FAIR_PCT) <= CLOSE_POINTS for v in tcp)


def claim_priority_order(o: Outcome):
    dt = {lp: _c(o, "tcp_share_pct", lp, "droptail") for lp in LPCCS}
    tcp = {f"{lp}/{q}": _c(o, "tcp_share_pct", lp, q) for lp in LPCCS for q in AQMS}
    eq = {f"{lp}/{q}": _c(o, "eq_over_qmax", lp, q) for lp in LPCCS for q in AQMS}
    parts = {
        "droptail: ledbat lowest, then nice, then tcp_lp": dt["ledbat"] > dt["nice"] > dt["tcp_lp"],
        "AQMs: short queue": all(v < SHORT_QUEUE for v in eq.values()),
        "AQMs: priorities gone": _priorities_gone(list(tcp.values())),
    }
    return all(parts.values()), {"droptail_tcp_pct": dt, "aqm_tcp_pct": tcp, "aqm_eq_over_qmax": eq,
                                 "parts": parts}  # fmt: skip


D_SHORT, D_FULL = str(min(D_VALUES["qmax"])), str(max(D_VALUES["qmax"]))
"""Claim 5, "a shorter DropTail buffer": 3d's shortest (100 packets) against the study's 400, both
3d cases (LEDBAT, DropTail)."""


def claim_short_buffer(o: Outcome):
    d = o.results["3d"]["qmax"]
    q = {b: _need(d["mean_queue_ms"]["droptail"][b], f"3d qmax {b}") for b in (D_SHORT, D_FULL)}
    tcp = {b: _need(d["tcp_share_pct"]["droptail"][b], f"3d qmax {b}") for b in (D_SHORT, D_FULL)}
    parts = {"less queue": q[D_SHORT] < q[D_FULL], "priorities lost": _priorities_gone([tcp[D_SHORT]])}
    return all(parts.values()), {"droptail_mean_queue_ms": q, "droptail_tcp_pct": tcp, "parts": parts}


CLAIMS = (
    Claim("1", "10 Mbit/s, 500 packets, 5 NewReno + 5 LEDBAT: DropTail TCP% about 99 % with about 400 packets "
          "queued on average; RED: average queue below 4 packets, utilisation about 3 % lower, and the two "
          "classes share about equally.", claim_3a, ("3a",)),
    Claim("2", "Against a full DropTail buffer, the AQMs make the queue 14 (SFQ) to 77 (RED) times smaller; the "
          "queueing delay under every AQM stays below 85 ms (SFQ is the worst case).", claim_queue_shrink,
          ("3c",)),
    Claim("3", "Under the AQMs, TCP's share falls to 35 % (CoDel) to 46 % (CHOKe) with LEDBAT.",
          claim_ledbat_share, ("3c",)),
    Claim("4", "Under DropTail the priority order is LEDBAT lowest, then NICE, then TCP-LP; under every AQM all "
          "(LPCC, AQM) pairs end close together: short queue, priorities gone.", claim_priority_order, ("3c",)),
    Claim("5", "A shorter DropTail buffer behaves like an AQM: less queue, priorities lost.", claim_short_buffer,
          ("3d",)),
)  # fmt: skip
