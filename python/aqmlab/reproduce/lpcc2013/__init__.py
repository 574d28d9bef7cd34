"""lpcc2013 (Gong, Rossi, Testa, Valenti, Täht: AQM meets low-priority congestion control):
every experiment of docs/study-setups.md section 3, as four series.

* 3a: 5 NewReno + 5 LEDBAT through 10 Mb/s with a 500-packet buffer under DropTail and RED:
  each class's throughput over time (``reproduce.metrics.class_throughput_series``) and a table.
* 3b: the Linux 3.2 testbed (``scenarios/lpcc2013/testbed.toml``: HTB, netem 30 ms,
  1000-packet FIFO, RED, 127-packet SFQ, NewReno against libutp-LEDBAT or TCP-LP, N = 2 and 10, 60 s,
  3 runs) at 500 kb/s and 10 Mb/s: TCP% and the queueing delay of a 1 s ping (RTT minus the
  minimum RTT seen, ``metrics.ping_queueing_delay_ms``), against the study's Table I.
* 3c: the campaign of ``scenarios/lpcc2013/sweep.toml`` (every LPCC x DropTail, RED, CHOKe,
  DRR, SFQ, CoDel, 10 runs): eta, E[Q]/Q_max, TCP%, the parallel-coordinates figure.
* 3d: sensitivity around 3c's setting (LEDBAT; DropTail, where it yields, and SFQ, where it
  takes its share) to Q_max, capacity, RTT heterogeneity, N per class and the duty cycle of
  on/off sources: TCP%, fairness F = (F_TCP + F_LPCC)/2, eta, mean queueing delay.

3c runs its sweep file; 3a, 3b and 3d are one sweep of explicit cases (``cases``), always all of
them, of which ``run`` selects the ones asked (so a reduced run's cases and seeds are the full
run's). Per run (``run_metrics``, in the workers) every number is a definition of aqmlab.metrics
or of reproduce/metrics.py.
``--reps`` is 3c's replication count; the other parts run min(reps, ``PART_REPS``). ``--quick``:
3 runs per case (3c's 10 cut to the other parts' 3), 3b at 500 kb/s only (Table I), two values
of each 3d parameter (the shortest and the study's 400-packet buffer among them); every case as
long and set up as in the full run.

Modules: ``setup`` (the parts' cases and their scenarios, 3c's sweep file), ``metrics`` (a run's
numbers, in the sweep workers), ``report`` (the sweeps run, each part's results, the tables and
figures), ``published`` (Table I), ``claims`` (the claims of the text); ``STUDY`` is declared
here.
"""

from __future__ import annotations

from aqmlab.reproduce.lpcc2013.claims import (
    A_DROPTAIL_QUEUE_PKTS,
    A_DROPTAIL_TCP_PCT,
    A_RED_QUEUE_BELOW_PKTS,
    A_RED_UTIL_LOWER,
    AQM_DELAY_BELOW_MS,
    AQM_TCP_PCT,
    AQMS,
    CLAIMS,
    CLOSE_POINTS,
    D_FULL,
    D_SHORT,
    FAIR_PCT,
    QUEUE_SHRINK_MIN,
    SHARE_POINTS,
    SHORT_QUEUE,
    claim_3a,
    claim_ledbat_share,
    claim_priority_order,
    claim_queue_shrink,
    claim_short_buffer,
)
from aqmlab.reproduce.lpcc2013.metrics import A_STEP_S, CLASSES, DIR, METRICS_FN, run_metrics
from aqmlab.reproduce.lpcc2013.published import (
    B_NAMES,
    PUBLISHED,
    TABLE_I,
    TABLE_I_DELAY_FLOOR_MS,
    TABLE_I_RATE,
)
from aqmlab.reproduce.lpcc2013.report import (
    B_KEYS,
    C_KEYS,
    METRICS,
    PART_METRICS,
    figure_3a,
    figure_3c,
    figure_3d,
    figures,
    part_3a,
    part_3b,
    part_3c,
    part_3d,
    results,
    run,
    tables,
)
from aqmlab.reproduce.lpcc2013.setup import (
    A_LIMIT,
    A_QDISCS,
    A_RATE,
    B_LOADS,
    B_LPCCS,
    B_QDISCS,
    B_RATES,
    B_RED_TC,
    D_CYCLE_S,
    D_QDISCS,
    D_QUICK_VALUES,
    D_RTT_SPREAD,
    D_VALUES,
    DESCRIPTION,
    LPCCS,
    NAME,
    PART_LABELS,
    PART_REPS,
    PARTS,
    QDISCS,
    QUICK_3D,
    REPS,
    cases,
    d_point,
    lpcc_params,
    parts_spec,
    qdisc_specs,
    spec_for,
    sweep_file,
    tc_red,
)
from aqmlab.reproduce.study import Option, Quick, Study

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    reps=REPS,
    series=("all", *PARTS),
    options=(
        Option("--qdisc", "qdiscs", tuple(QDISCS), "only these 3c qdiscs"),
        Option("--lpcc", "lpccs", tuple(LPCCS), "only these 3c low-priority controllers"),
    ),
    quick=Quick(
        reps=PART_REPS,
        grid={"rates": (TABLE_I_RATE,), "sensitivity": QUICK_3D},
        note="3 runs per case (3c's 10 cut to 3a/3b/3d's 3), 3b at 500 kb/s (Table I), two values of each "
        "3d parameter; 3a and 3c whole",
    ),
    run=run,
    tables=tables,
    figures=figures,
    published=PUBLISHED,
    claims=CLAIMS,
    series_help="3a shares over time, 3b the testbed (Table I), 3c the campaign, 3d sensitivity",
)

__all__ = [
    "AQMS",
    "AQM_DELAY_BELOW_MS",
    "AQM_TCP_PCT",
    "A_DROPTAIL_QUEUE_PKTS",
    "A_DROPTAIL_TCP_PCT",
    "A_LIMIT",
    "A_QDISCS",
    "A_RATE",
    "A_RED_QUEUE_BELOW_PKTS",
    "A_RED_UTIL_LOWER",
    "A_STEP_S",
    "B_KEYS",
    "B_LOADS",
    "B_LPCCS",
    "B_NAMES",
    "B_QDISCS",
    "B_RATES",
    "B_RED_TC",
    "CLAIMS",
    "CLASSES",
    "CLOSE_POINTS",
    "C_KEYS",
    "DESCRIPTION",
    "DIR",
    "D_CYCLE_S",
    "D_FULL",
    "D_QDISCS",
    "D_QUICK_VALUES",
    "D_RTT_SPREAD",
    "D_SHORT",
    "D_VALUES",
    "FAIR_PCT",
    "LPCCS",
    "METRICS",
    "METRICS_FN",
    "NAME",
    "PARTS",
    "PART_LABELS",
    "PART_METRICS",
    "PART_REPS",
    "PUBLISHED",
    "QDISCS",
    "QUEUE_SHRINK_MIN",
    "QUICK_3D",
    "REPS",
    "SHARE_POINTS",
    "SHORT_QUEUE",
    "STUDY",
    "TABLE_I",
    "TABLE_I_DELAY_FLOOR_MS",
    "TABLE_I_RATE",
    "cases",
    "claim_3a",
    "claim_ledbat_share",
    "claim_priority_order",
    "claim_queue_shrink",
    "claim_short_buffer",
    "d_point",
    "figure_3a",
    "figure_3c",
    "figure_3d",
    "figures",
    "lpcc_params",
    "part_3a",
    "part_3b",
    "part_3c",
    "part_3d",
    "parts_spec",
    "qdisc_specs",
    "results",
    "run",
    "run_metrics",
    "spec_for",
    "sweep_file",
    "tables",
    "tc_red",
]
