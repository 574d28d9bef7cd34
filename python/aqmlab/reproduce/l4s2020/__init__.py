"""l4s2020 (P. Heist, J. Morton, "L4S Tests", 2020): scenarios 1 (RTT fairness), 2 (rate step)
and 3 (variable rate) as the study's scripts set them up (docs/study-setups.md 5), with TCP Prague
and dualpi2 as the L4S team's 2020 kernel ran them.

Scenario 1: every dualpi2, pfifo and fq_codel row of the published fairness table (table_s1.S1)
is one case: two uploads for 180 s through HTB at 50 or 10 Mbit/s, the flows' RTTs (10, 10) to
(160, 10) ms, cubic and prague in both orders; one run each, as published. cnq_codel_af's rows are
out of scope (not modelled). Per run (``metrics.run_metrics``, in the workers) each flow's D_SS and
Jain's index; the published rows are judged in pairs (published.py: the mean of both orders where
the batch ran two), each pair's two D_SS against the published within 30 %, and two claims: at
least 80 % of the pairs within 30 % on both flows, and every pair's winner the published one.

Scenarios 2 and 3 (setup_s23): one upload for 60 s whose bottleneck rate steps (50 Mbit/s to 25,
10, 5 or 1 at 30 s; 100, 50, 10, 90, 5 Mbit/s), RTT 20 or 80 ms, prague or cubic, fq_codel or
dualpi2, clean or through netem's slots; 64 and 16 runs. Per run (``metrics_s23.run_metrics``)
the RTT spike after the first step and the utilisation; scenario 2's published values
(published_s23: Prague's spikes through fq_codel, the bursty link's utilisation loss) and one
claim are judged, scenario 3 (nothing published) is reported.

Series: dualpi2's PI divisor, ``div127`` (the default: the 2019 submission, the only dated
revision) or ``div64`` (the later files); which one b256dae held is not known
(docs/study-setups.md 5). ``--quick``: scenario 1's RTT pairs (20, 20) and (80, 20) only, every
qdisc at both rates; scenario 2's five runs its published values and claim need; each case as in
the full run (same seed).

Modules: ``setup`` (scenario 1's cases and their scenarios), ``metrics`` (a run's D_SS, in the
sweep workers), ``table_s1`` (the published table), ``published`` (its pairs and the published
tables), ``claims``, ``report`` (the sweep runs, the tables and the figure); ``setup_s23``,
``metrics_s23``, ``published_s23`` and ``report_s23`` the same for scenarios 2 and 3; ``STUDY`` is
declared here.
"""

from __future__ import annotations

from aqmlab.reproduce.l4s2020.claims import (
    CLAIMS,
    PAIR_SHARE,
    WINNER_MARGIN,
    claim_pairs,
    claim_winners,
    winner,
)
from aqmlab.reproduce.l4s2020.metrics import (
    END_GAP_S,
    FLOWS,
    METRICS_FN,
    WINDOW_S,
    jain,
    run_metrics,
    steady_state_mbit,
)
from aqmlab.reproduce.l4s2020.published import (
    COLUMNS,
    PUBLISHED,
    PUBLISHED_PAIRS,
    PUBLISHED_RUNS,
    TABLE_IDS,
    pair_row,
    pairs,
)
from aqmlab.reproduce.l4s2020.published_s23 import CLAIMS_S2, JUDGED, PUBLISHED_S2
from aqmlab.reproduce.l4s2020.report import NOTES, figures, results, run, tables
from aqmlab.reproduce.l4s2020.setup import (
    CC_PAIRS,
    CUBIC_ECN,
    DESCRIPTION,
    DUALPI2_2020,
    DURATION_S,
    NAME,
    PFIFO_LIMIT,
    PRAGUE_2020,
    QDISCS,
    RATES,
    REPS,
    RTT_PAIRS,
    SCENARIOS,
    SERIES,
    base_file,
    cases,
    spec_for,
)
from aqmlab.reproduce.study import Option, Quick, Study

QUICK_RTTS = ("20/20", "80/20")
"""``--quick``'s RTT pairs: one equal (cubic against prague in both orders) and one unequal."""

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    reps=REPS,
    series=tuple(SERIES),
    options=(
        Option("--qdisc", "qdiscs", QDISCS, "only these qdiscs (the study's cnq_codel_af is not modelled)"),
        Option("--rate", "rates", tuple(RATES), "only these rates (Mbit/s)"),
        Option("--rtt", "rtts", tuple(RTT_PAIRS), "only these scenario-1 RTT pairs (flow 1/flow 2, ms)"),
        Option(
            "--scenario",
            "scenarios",
            SCENARIOS,
            "only these scenarios (1 RTT fairness, 2 rate step, 3 variable rate)",
        ),
    ),
    quick=Quick(
        reps=REPS,
        grid={"rtts": QUICK_RTTS, "cases23": JUDGED},
        note="scenario 1's RTT pairs 20/20 and 80/20: every qdisc at both rates, both orders of cubic against prague; "
        + "scenario 2's five runs its published values and claim need; no scenario-3 run; each case as in the full run",
    ),
    run=run,
    tables=tables,
    figures=figures,
    published=(*PUBLISHED, *PUBLISHED_S2),
    claims=(*CLAIMS, *CLAIMS_S2),
    series_help="dualpi2's PI divisor: div127 (the 2019 submission, default) or div64 (the later files)",
)

__all__ = [
    "CC_PAIRS",
    "CLAIMS",
    "COLUMNS",
    "CUBIC_ECN",
    "DESCRIPTION",
    "DUALPI2_2020",
    "DURATION_S",
    "END_GAP_S",
    "FLOWS",
    "METRICS_FN",
    "NAME",
    "NOTES",
    "PAIR_SHARE",
    "PFIFO_LIMIT",
    "PRAGUE_2020",
    "PUBLISHED",
    "PUBLISHED_PAIRS",
    "PUBLISHED_RUNS",
    "QDISCS",
    "QUICK_RTTS",
    "RATES",
    "REPS",
    "RTT_PAIRS",
    "SCENARIOS",
    "SERIES",
    "STUDY",
    "TABLE_IDS",
    "WINDOW_S",
    "WINNER_MARGIN",
    "base_file",
    "cases",
    "claim_pairs",
    "claim_winners",
    "figures",
    "jain",
    "pair_row",
    "pairs",
    "results",
    "run",
    "run_metrics",
    "spec_for",
    "steady_state_mbit",
    "tables",
    "winner",
]
