"""codel2012 (K. Nichols, V. Jacobson, "Controlling Queue Delay", ACM Queue 2012), docs/study-setups.md
section 1, set up as the authors' ns-2 script "Codel test script v120513" (see
``scenarios/codel2012/base.toml`` for every value and its source). Each case is built from the
base scenario by the script's formulas (``case_scenario``): bottleneck buffer = bdp =
round(bw x 100 ms / (8 psize)) packets, access links 10 x bw, psize 500 B below 1 Mb/s, the FTP
k's client 1 + k ms further away, CBR k starting uniform(0, 2) s after CBR k-1.

Parts (``--quick`` keeps every case of 1b, 1d, the web-only loads and the right queue, the 1a
rates with two of its loads and three of 1c's RTTs, one replication each, every run as long as the
full one's):

* 1a static rates: large (3, 10, 45, 100 Mb/s) and small (128, 256, 512 kb/s, 1.5 Mb/s, also with
  500-byte packets) bandwidths under the load mixes ``LOADS`` (FTPs, PackMime connections/s,
  CBRs); per run the median sojourn delay of the packets sent on the bottleneck (dropped ones
  excluded) and the utilisation; box plots by bandwidth, CoDel vs RED vs tail drop.
* web-only loads at the small rates (claim 10): the script run with no FTP and no CBR (its
  ``f`` = 0: ``ns codel.tcl 0 w 0 {b}Mb``) at each small rate with the ``WEB_ONLY`` PackMime
  rates; per run the drop rate and utilisation of the bottleneck.
* 1b the dynamic link: 100 Mb/s nominal, 4 FTPs + web at 5/s, the rate stepping every 50 s to
  10, 1, 50, 1, 100 Mb/s (the script's `bw_changes` 0.1, 0.01, 0.5, 0.01, 1.0 at k 300/6 s),
  830- and 10-packet buffers; delay against time and cumulative kB delivered; median, 75th and
  95th percentile.
* 1c RTT range: RTTs 10..500 ms at 10 Mb/s under the 1a loads; median delay, utilisation and
  Jain's index of the per-FTP drop share (drops / packets sent).
* 1d consumer edge: symmetric 512 kb/s and 1.5 Mb/s, two-way 64 kb/s CBR, one bulk download,
  web at 2/s and an upload; per direction drop rate, mean queue and data delivered; CoDel vs tail
  drop.
* "Manage the right queue": a router queue (the qdisc) in front of a 2 Mb/s modem FIFO of 256
  packets, upstream: with the router at line rate the queue builds in the modem whatever the
  router runs; shaped to 95% of the modem rate the router's qdisc holds it.

Deviations, each named in the scenario comments: runs of the static and RTT parts last
``STATIC_S`` (the script runs 300 s); FTPs are bulk transfers (the script's repeated 10 MB files
come from a local ns-2 change); each of 1d's uploads is a fresh connection (``repeat``); the FTPs
run the ``ns2_linux`` profile (ns-2's TCP/Linux with its CUBIC module) and the web flows
``ns2_fulltcp`` (ns-2's Full-TCP/Sack), but the web flow carries each exchange on its own pair of
one-way transfers (app/web.rs).

Modules: ``setup`` (the cases and their scenarios, by the script's formulas), ``metrics`` (a
run's numbers, in the sweep workers), ``report`` (the sweep run, the results per case, the tables
and figures), ``claims`` (the claims of the text); ``STUDY`` is declared here.
"""

from __future__ import annotations

from aqmlab.reproduce.codel2012.claims import (
    ALMOST_SAME,
    CLAIMS,
    CODEL_830,
    CODEL_830_P95_BELOW_MS,
    DROPS,
    EXCESSIVE_MS,
    FULL_BUFFER_S,
    IDENTICAL,
    NEAR_TARGET,
    ONE_INTERVAL_S,
    SIMILAR,
    SMALL_BUFFER_MAX_S,
    SMALL_BUFFER_RATIO,
    STEPS,
    TARGET_MS,
    UPJUMP_WINDOW_S,
    UPJUMPS_AT_S,
    WEB_ONLY_DROP_RATE,
    WEB_ONLY_UTILIZATION,
    claim_codel_830,
    claim_codel_recovers,
    claim_codel_static,
    claim_full_buffer,
    claim_red_between,
    claim_red_overcontrols,
    claim_red_slow_links,
    claim_same_kbytes,
    claim_small_buffer,
    claim_web_only,
    recovery_s,
)
from aqmlab.reproduce.codel2012.metrics import (
    METRICS_FN,
    TIMELINE_STEP_S,
    binned_median_p95,
    run_metrics,
    timeline,
)
from aqmlab.reproduce.codel2012.report import figures, results, run, tables
from aqmlab.reproduce.codel2012.setup import (
    BUFFERS,
    DESCRIPTION,
    DYN_STEPS,
    DYNAMIC_S,
    EDGE_RATES,
    LARGE,
    LOADS,
    NAME,
    QDISC_SPECS,
    QDISCS,
    REPS,
    RTT_LOADS,
    RTTS,
    SMALL,
    SMALL_LOADS,
    STATIC_S,
    WEB_ONLY,
    base_file,
    bdp_packets,
    case_scenario,
    cases,
    edge_scenario,
    psize,
    rate,
    right_queue_scenario,
    spec_for,
)
from aqmlab.reproduce.study import Option, Quick, Study

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    reps=REPS,
    series=("all",),
    options=(Option("--qdisc", "qdiscs", tuple(QDISCS), "only these qdiscs"),),
    quick=Quick(
        reps=1,
        grid={"loads": ("4ftp", "4ftp+web5+cbr"), "rtts": ("10", "100", "500")},
        note="1a/1c loads 4ftp and 4ftp+web5+cbr, RTTs 10, 100, 500 ms",
    ),
    run=run,
    tables=tables,
    figures=figures,
    claims=CLAIMS,
)

__all__ = [
    "ALMOST_SAME",
    "BUFFERS",
    "CLAIMS",
    "CODEL_830",
    "CODEL_830_P95_BELOW_MS",
    "DESCRIPTION",
    "DROPS",
    "DYNAMIC_S",
    "DYN_STEPS",
    "EDGE_RATES",
    "EXCESSIVE_MS",
    "FULL_BUFFER_S",
    "IDENTICAL",
    "LARGE",
    "LOADS",
    "METRICS_FN",
    "NAME",
    "NEAR_TARGET",
    "ONE_INTERVAL_S",
    "QDISCS",
    "QDISC_SPECS",
    "REPS",
    "RTTS",
    "RTT_LOADS",
    "SIMILAR",
    "SMALL",
    "SMALL_BUFFER_MAX_S",
    "SMALL_BUFFER_RATIO",
    "SMALL_LOADS",
    "STATIC_S",
    "STEPS",
    "STUDY",
    "TARGET_MS",
    "TIMELINE_STEP_S",
    "UPJUMPS_AT_S",
    "UPJUMP_WINDOW_S",
    "WEB_ONLY",
    "WEB_ONLY_DROP_RATE",
    "WEB_ONLY_UTILIZATION",
    "base_file",
    "bdp_packets",
    "binned_median_p95",
    "case_scenario",
    "cases",
    "claim_codel_830",
    "claim_codel_recovers",
    "claim_codel_static",
    "claim_full_buffer",
    "claim_red_between",
    "claim_red_overcontrols",
    "claim_red_slow_links",
    "claim_same_kbytes",
    "claim_small_buffer",
    "claim_web_only",
    "edge_scenario",
    "figures",
    "psize",
    "rate",
    "recovery_s",
    "results",
    "right_queue_scenario",
    "run",
    "run_metrics",
    "spec_for",
    "tables",
    "timeline",
]
