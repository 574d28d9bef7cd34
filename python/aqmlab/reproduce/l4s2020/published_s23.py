"""What the L4S tests published of scenario 2 ("Codel Rate Step"), and where the measured
counterpart of each value is. Scenario 3 ("Codel Variable Rate") has its runs listed in the
README's "Full Results" with links to their plots and nothing said of them beyond "See the
Scenario 3 results, in particular for TCP Prague through fq_codel": no value to judge, so its
runs are reported, not judged.

Every value is from the README at e21cd91 (github.com/heistp/l4s-tests), section "Intra-Flow
Latency Spikes (Lab Tests)" (Figures 10 to 13) and "Underutilization with Bursty Links (Lab
Tests)" (Figures 20 and 21). One is a number read from the run's Flent data (the peak RTT); the
others are read from figures by the authors, in words ("around", "over", "about"): the contract's
30 % is the tolerance they are judged with, and a lower bound ("over 30 seconds") is judged as
its value."""

from __future__ import annotations

from aqmlab.reproduce.l4s2020.setup_s23 import s2_case
from aqmlab.reproduce.study import Claim, Outcome, Published

STEP_1 = s2_case("clean", 1, 80, "fq_codel", "prague")
"""Figure 13: Prague through fq_codel, 50 -> 1 Mbit/s at 80 ms."""
STEP_25 = s2_case("clean", 25, 80, "fq_codel", "prague")
"""Figure 11: Prague through fq_codel, 50 -> 25 Mbit/s at 80 ms."""
STEP_25_CUBIC = s2_case("clean", 25, 80, "fq_codel", "cubic")
"""Figure 10: CUBIC through fq_codel, 50 -> 25 Mbit/s at 80 ms."""
BURSTY_PRAGUE = s2_case("bursty", 25, 20, "dualpi2", "prague")
"""Figure 21: Prague through dualpi2, 50 -> 25 Mbit/s at 20 ms, bursty."""
BURSTY_CUBIC = s2_case("bursty", 25, 20, "fq_codel", "cubic")
"""Figure 20: CUBIC through fq_codel, the same step, RTT and bursts."""
JUDGED = (STEP_1, STEP_25, STEP_25_CUBIC, BURSTY_PRAGUE, BURSTY_CUBIC)
"""The scenario-2 runs the published values and the claim need (``--quick`` runs these)."""

SPIKE = "S2 RTT spike"
BURST = "S2 bursty link"

S2_SPIKE = {
    # "a review of the .flent.gz file shows the maximum TCP RTT to be 4346ms, and we can see that
    # the spike lasts for over 30 seconds" (Figure 13)
    STEP_1: {"peak_rtt_ms": 4346.0, "above_1s_s": 30.0},
    # "100ms is a significant induced delay ... we can see that the spike lasts around 5 seconds"
    # (Figure 11)
    STEP_25: {"induced_peak_ms": 100.0, "spike_s": 5.0},
}
"""Prague's RTT spikes through fq_codel (metrics_s23 names each column)."""
S2_BURST = {
    # "the lower TCP RTT of TCP Prague comes with a tradeoff of about a 50% reduction in link
    # utilization" (Figure 21 against Figure 20)
    f"{BURSTY_PRAGUE} against {BURSTY_CUBIC}": {"utilisation_loss": 0.50},
}
"""The bursty link's cost to Prague in dualpi2: 1 - its utilisation / CUBIC's in fq_codel."""

LONGER = 2.0
"""Claim s2: "much longer" is read as at least twice CUBIC's spike (``spike_s``)."""


def _runs(o: Outcome) -> dict:
    return {r["case"]: r["measured"] for r in o.results.get("s23", [])}


def measured_spike(o: Outcome) -> dict:
    runs = _runs(o)
    return {case: {k: runs[case][k] for k in cols} for case, cols in S2_SPIKE.items() if case in runs}


def utilisation_loss(runs: dict) -> float:
    return 1 - runs[BURSTY_PRAGUE]["utilisation"] / runs[BURSTY_CUBIC]["utilisation"]


def measured_burst(o: Outcome) -> dict:
    runs = _runs(o)
    if BURSTY_PRAGUE not in runs or BURSTY_CUBIC not in runs:
        return {}
    return {next(iter(S2_BURST)): {"utilisation_loss": utilisation_loss(runs)}}


def claim_longer(o: Outcome):
    runs = _runs(o)
    prague, cubic = runs[STEP_25]["spike_s"], runs[STEP_25_CUBIC]["spike_s"]
    return prague >= LONGER * cubic, {"prague_spike_s": prague, "cubic_spike_s": cubic}


PUBLISHED_S2 = (
    Published(SPIKE, "Prague through fq_codel after the rate step: peak RTT, time above 1 s, induced peak, spike "
              "length (README, Figures 11 and 13)", S2_SPIKE, measured_spike),
    Published(BURST, "Prague through dualpi2 against CUBIC through fq_codel over the bursty link (README, Figures "
              "20 and 21)", S2_BURST, measured_burst),
)  # fmt: skip
CLAIMS_S2 = (
    Claim("s2", "Scenario 2, 50 -> 25 Mbit/s at 80 ms through fq_codel: the induced latency spike has a much longer "
          "duration for TCP Prague than CUBIC (Figures 10 and 11; at least twice as long).", claim_longer),
)  # fmt: skip
