"""The published scenario-1 table of the L4S tests, checked against the study's own batch file
and arithmetic: the run matrix of l4s.batch (Batch::l4s-s1-rttfair) and Jain's index of each
row's two D_SS."""

from __future__ import annotations

import itertools

from aqmlab.reproduce.l4s2020.table_s1 import S1, S1_COLUMNS

RATES = {50: "pfifo(1000)", 10: "pfifo(200)"}  # Arg::s1_50mbit / s1_10mbit: bandwidth, pfifo_limit
RTT_PAIRS = {(10, 10), (20, 10), (20, 20), (80, 80), (80, 20), (160, 10)}  # Arg::s1_rtt_*: rtt, rtt2
CC_PAIRS = set(itertools.product(("cubic", "prague"), repeat=2))  # for_vs


def test_rows_cover_the_batch_matrix_once():
    assert all(len(r) == len(S1_COLUMNS) for r in S1)
    runs = [(r[0], r[1], r[3], r[6], r[2], r[5]) for r in S1]
    expected = {
        (rate, q, rtt1, rtt2, cc1, cc2)
        for rate, pfifo in RATES.items()
        for q in ("dualpi2", pfifo, "cnq_codel_af", "fq_codel")
        for rtt1, rtt2 in RTT_PAIRS
        for cc1, cc2 in CC_PAIRS
    }
    assert len(runs) == len(set(runs)) == len(expected) == 192
    assert set(runs) == expected


def test_jains_index_agrees_with_the_printed_rates():
    # Jain's index of two rates, (a + b)^2 / (2 (a^2 + b^2)), printed to 3 decimals from unrounded
    # rates: the 2-decimal D_SS reproduce it to within 0.002
    for r in S1:
        a, b = r[4], r[7]
        assert abs((a + b) ** 2 / (2 * (a * a + b * b)) - r[8]) <= 0.002, r
