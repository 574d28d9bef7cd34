"""The claims of codel2012's text, each judged on the runs; every threshold stated once, beside
the words of the claim it comes from."""

from __future__ import annotations

import itertools

from aqmlab.lazy import lazy
from aqmlab.reproduce.codel2012.metrics import TIMELINE_STEP_S
from aqmlab.reproduce.codel2012.report import _first_timeline
from aqmlab.reproduce.codel2012.setup import DYN_STEPS, DYNAMIC_S, LARGE, QDISCS, SMALL
from aqmlab.reproduce.study import Claim, Outcome

np = lazy("numpy")
pd = lazy("pandas")

TARGET_MS = 5.0
"""CoDel's target in the script (codel.cc target_ 5 ms)."""
STEPS = [(DYNAMIC_S * k / len(DYN_STEPS), a, b) for k, (a, b) in enumerate(itertools.pairwise(DYN_STEPS), 1)]
"""The dynamic link's rate steps: (time s, rate factor before, after)."""
DROPS = [(t, b) for t, a, b in STEPS if b < a]
"""Its downward steps (50, 100 and 200 s) with the rate factor after each."""
UPJUMPS_AT_S = [t for t, a, b in STEPS if b > a]
"""Its upward steps (150 and 250 s)."""


def _dyn(o: Outcome, q: str, b: int, k: str) -> float:
    v = o.results["dynamic"][q][str(b)][k]
    if v is None:
        raise KeyError(f"1b {q} {b} not run")
    return v


def _within(measured: float, published: float, tol: float = 0.30) -> bool:
    return abs(measured - published) <= tol * abs(published)


FULL_BUFFER_S = 10.0
"""Claim 1, "tail drop keeps its buffer full: delay up to about 10 s" (830 packets at 1 Mb/s)."""


def claim_full_buffer(o: Outcome):
    mx = _dyn(o, "taildrop", 830, "max_ms") / 1e3
    return _within(mx, FULL_BUFFER_S), {"taildrop_830_max_s": mx}


def _in_control_ms(rate_mbps: float, size: int = 1500) -> float:
    """Claim 3's 'in control': the median sojourn within twice CoDel's target plus one packet's
    transmission at the new rate (a queue CoDel holds at its target still waits for the packet
    being sent)."""
    return 2 * TARGET_MS + size * 8 / (rate_mbps * 1e3)


def recovery_s(one: pd.DataFrame) -> list[float]:
    """Per downward rate step of the dynamic link: seconds from the step until the first timeline
    bin (median sojourn of the packets sent in it) that is back in control at the new rate."""
    out = []
    for t0, f in DROPS:
        after = one[(one["t_s"] > t0) & one["median_ms"].notna()]
        ok = after[after["median_ms"] <= _in_control_ms(100.0 * f)]
        out.append(float(ok["t_s"].iloc[0] - TIMELINE_STEP_S - t0) if len(ok) else float("inf"))
    return out


def _recovery(o: Outcome, q: str) -> list[float]:
    one = _first_timeline(o, q, 830)
    if one is None:
        raise KeyError(f"1b timeline of {q} not run")
    return recovery_s(one)


def claim_red_between(o: Outcome):
    """Claim 2: RED's delay below tail drop's (p95, 830 packets), and its recovery after the rate
    steps slower than CoDel's (mean over the steps)."""
    red, td = _dyn(o, "red", 830, "p95_ms"), _dyn(o, "taildrop", 830, "p95_ms")
    rr, rc = _recovery(o, "red"), _recovery(o, "codel")
    holds = red < td and float(np.mean(rr)) > float(np.mean(rc))
    return holds, {"red_p95_ms": red, "taildrop_p95_ms": td, "red_recovery_s": rr, "codel_recovery_s": rc}


ONE_INTERVAL_S = 0.100
"""Claim 3, "back in control within about 100 ms (one interval)": 'about' allows two intervals."""


def claim_codel_recovers(o: Outcome):
    rc = _recovery(o, "codel")
    return max(rc) <= 2 * ONE_INTERVAL_S, {"codel_recovery_s": rc, "bin_s": TIMELINE_STEP_S}


ALMOST_SAME = 0.10
"""Claim 4, "CoDel transfers almost the same total kilobytes as tail drop": within 10 %."""
UPJUMP_WINDOW_S = 10.0
"""... "the differences sit at the upward rate jumps": most (over half) of CoDel's deficit accrues
within 10 s after the upward steps."""


def _kbytes_at(one: pd.DataFrame, t: float) -> float:
    return float(one[one["t_s"] <= t + 1e-9]["kbytes"].iloc[-1])


def claim_same_kbytes(o: Outcome):
    kc, kt = _dyn(o, "codel", 830, "kbytes"), _dyn(o, "taildrop", 830, "kbytes")
    c, t = _first_timeline(o, "codel", 830), _first_timeline(o, "taildrop", 830)
    if c is None or t is None:
        raise KeyError("1b timelines not run")

    def deficit(x):
        return _kbytes_at(t, x) - _kbytes_at(c, x)

    total = deficit(DYNAMIC_S)
    at_jumps = sum(deficit(a + UPJUMP_WINDOW_S) - deficit(a) for a in UPJUMPS_AT_S)
    share = at_jumps / total if total > 0 else None
    holds = kc >= (1 - ALMOST_SAME) * kt and (share is None or share > 0.5)
    return holds, {
        "codel_over_taildrop_kbytes": kc / kt,
        "deficit_kb": total,
        "deficit_share_at_upjumps": share,
    }


SMALL_BUFFER_RATIO = 0.25
"""Claim 5, "with a 10-packet buffer, throughput is about 75 % lower for all three"."""
IDENTICAL = 0.02
"""... "(tail drop and CoDel identical)": within 2 %."""
SMALL_BUFFER_MAX_S = 0.120
"""... "tail drop's worst delay is about 120 ms"."""


def claim_small_buffer(o: Outcome):
    ratio = {q: _dyn(o, q, 10, "kbytes") / _dyn(o, q, 830, "kbytes") for q in QDISCS}
    td, cd = _dyn(o, "taildrop", 10, "kbytes"), _dyn(o, "codel", 10, "kbytes")
    mx = _dyn(o, "taildrop", 10, "max_ms") / 1e3
    holds = (all(_within(r, SMALL_BUFFER_RATIO) for r in ratio.values()) and abs(td - cd) <= IDENTICAL * td
             and _within(mx, SMALL_BUFFER_MAX_S))  # fmt: skip
    return holds, {"kbytes_10_over_830": ratio, "codel_over_taildrop_10": cd / td, "taildrop_10_max_s": mx}


CODEL_830 = {"median_ms": 2.7, "p75_ms": 5.0}
"""Claim 6, "a median delay of 2.7 ms, a 75th percentile of 5 ms" (each within 30 %) ..."""
CODEL_830_P95_BELOW_MS = 90.0
"""... "and stays below 90 ms for 95 % of the run"."""


def claim_codel_830(o: Outcome):
    m = {k: _dyn(o, "codel", 830, k) for k in ("median_ms", "p75_ms", "p95_ms")}
    holds = all(_within(m[k], v) for k, v in CODEL_830.items()) and m["p95_ms"] < CODEL_830_P95_BELOW_MS
    return holds, m


NEAR_TARGET = (0.5, 2.0)
"""Claim 7, "CoDel's median delay is near its 5 ms target at 3 Mbit/s and above with FTP loads":
within a factor of two of the target; "a little higher for bursty loads and at 3 Mbit/s": the
web-carrying loads' median above the FTP-only loads', and 3 Mb/s's above the faster rates'."""


def _by_load(o: Outcome, q: str, bw: float) -> dict:
    return o.results["static_by_load"][q].get(f"{bw:g}") or {}


def _median_of(values) -> float:
    v = [x for x in values if x is not None]
    if not v:
        raise ValueError("not run")
    return float(np.median(v))


def claim_codel_static(o: Outcome):
    ftp = {bw: _median_of(r["median_delay_ms"] for ld, r in _by_load(o, "codel", bw).items() if "web" not in ld)
           for bw in LARGE}  # fmt: skip
    bursty = {bw: _median_of(r["median_delay_ms"] for ld, r in _by_load(o, "codel", bw).items() if "web" in ld)
              for bw in LARGE}  # fmt: skip
    lo, hi = NEAR_TARGET
    near = all(lo * TARGET_MS <= v <= hi * TARGET_MS for v in ftp.values())
    higher_bursty = all(bursty[bw] > ftp[bw] for bw in LARGE)
    overall = {bw: o.results["static"]["codel"][f"{bw:g}"]["median_delay_ms"] for bw in LARGE}
    higher_at_3 = overall[3.0] > max(overall[bw] for bw in LARGE if bw != 3.0)
    return near and higher_bursty and higher_at_3, {"ftp_only_median_ms": ftp, "bursty_median_ms": bursty,
                                                    "all_loads_median_ms": overall}  # fmt: skip


SIMILAR = 0.30
"""Claim 8, "at 3 Mbit/s they are similar": RED within 30 % of CoDel in delay and utilisation."""


def claim_red_overcontrols(o: Outcome):
    sta = o.results["static"]
    m = {f"{bw:g}": {k: (sta["red"][f"{bw:g}"][k], sta["codel"][f"{bw:g}"][k]) for k in ("median_delay_ms", "utilization")}
         for bw in LARGE}  # fmt: skip
    if any(v is None for d in m.values() for pair in d.values() for v in pair):
        raise ValueError("a rate not run")
    lower = all(r < c for bw in ("10", "45", "100") for r, c in m[bw].values())
    similar = all(_within(r, c, SIMILAR) for r, c in m["3"].values())
    return lower and similar, {"red_vs_codel": m}


EXCESSIVE_MS = 100.0
"""Claim 9, "at 128 kbit/s - 1.5 Mbit/s, RED's median delays are excessive (100-200 ms)"."""


def claim_red_slow_links(o: Outcome):
    m = {f"{bw:g}": o.results["static"]["red"][f"{bw:g}"]["median_delay_ms"] for bw in SMALL}
    if any(v is None for v in m.values()):
        raise ValueError("a rate not run")
    return all(v >= EXCESSIVE_MS for v in m.values()), {"red_median_ms": m}


WEB_ONLY_UTILIZATION = 0.60
"""Claim 10, "web-only loads at low rates need a drop rate above 10 % to exceed 60 % utilisation":
every web-only case (each qdisc, small rate and web rate; the median over its runs) whose
utilisation is above 60 % ..."""
WEB_ONLY_DROP_RATE = 0.10
"""... has a drop rate above 10 %. With no case above 60 % the claim is not tested (None)."""


def claim_web_only(o: Outcome):
    cases = {f"{q} {bw} {ld}": c for q, by_rate in o.results["web_only"].items()
             for bw, by_load in by_rate.items() for ld, c in by_load.items()
             if c["utilization"] is not None and c["drop_rate"] is not None}  # fmt: skip
    if not cases:
        raise ValueError("no web-only case run")
    above = {k: c for k, c in cases.items() if c["utilization"] > WEB_ONLY_UTILIZATION}
    if not above:
        return None, {"highest_utilization": max(c["utilization"] for c in cases.values())}
    lowest = min(above, key=lambda k: above[k]["drop_rate"])
    return above[lowest]["drop_rate"] > WEB_ONLY_DROP_RATE, {
        "cases_above_60_pct": f"{len(above)} of {len(cases)}",
        "lowest_drop_rate_among_them": {lowest: above[lowest]},
    }


CLAIMS = (
    Claim("1", "Tail drop keeps its buffer full: delay up to about 10 s.", claim_full_buffer),
    Claim("2", "RED keeps the delay below tail drop's but responds more slowly to rate changes than CoDel.",
          claim_red_between),
    Claim("3", "CoDel spikes when the rate drops and is back in control within about 100 ms (one interval).",
          claim_codel_recovers),
    Claim("4", "CoDel transfers almost the same total kilobytes as tail drop; the differences sit at the upward "
          "rate jumps (150 s and 250 s).", claim_same_kbytes),
    Claim("5", "With a 10-packet buffer, throughput is about 75 % lower for all three (tail drop and CoDel "
          "identical); tail drop's worst delay is about 120 ms.", claim_small_buffer),
    Claim("6", "The large CoDel-managed buffer gives a median delay of 2.7 ms, a 75th percentile of 5 ms, and "
          "stays below 90 ms for 95 % of the run.", claim_codel_830),
    Claim("7", "CoDel's median delay is near its 5 ms target at 3 Mbit/s and above with FTP loads, a little "
          "higher for bursty loads and at 3 Mbit/s.", claim_codel_static),
    Claim("8", "At 10 Mbit/s and above, RED's delays and utilisations are lower than CoDel's (RED "
          "over-controls); at 3 Mbit/s they are similar.", claim_red_overcontrols),
    Claim("9", "At 128 kbit/s - 1.5 Mbit/s, RED's median delays are excessive (100-200 ms).", claim_red_slow_links),
    Claim("10", "Web-only loads at low rates need a drop rate above 10 % to exceed 60 % utilisation.",
          claim_web_only),
)  # fmt: skip
