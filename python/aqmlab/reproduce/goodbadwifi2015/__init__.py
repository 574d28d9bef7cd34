"""goodbadwifi2015 (Høiland-Jørgensen, Hurtig, Brunstrom: "The Good, the Bad and the WiFi:
Modern AQMs in a residential setting", Computer Networks 89, 2015): Flent's tests through seven
queue disciplines on residential links.

Links 100/100, 10/10 and 10/1 Mb/s (down/up), 50 ms base RTT, Linux 3.14's TCP CUBIC; each
direction's qdisc configured for that direction's rate as the study lists it (``qdisc_for``).
Series (scenario files in ``scenarios/goodbadwifi2015/``):

* ``rrul``: mean TCP goodput per direction over the window [10 s, 145 s] (the load runs Flent's
  LENGTH, 140 s from 5 s; the probes TOTAL_LENGTH, 150 s) and mean induced latency (Flent's
  "Mean induced latency" of the whole run: its "Ping (ms) avg" less its minimum,
  ``aqmlab.flent.summary``), per run; the study plots medians over the runs with 1-sigma ellipses (here:
  the figure ``rrul.png``); and the transient, the ICMP ping's RTT over the first 25 s (the load
  starts at 5 s), point-wise mean over the runs (``transient.png``).
* ``voip``: D-ITG's VoIP stream upstream beside one TCP upload (``1up``) or RRUL (``rrul``):
  the stream's one-way loss (packets that never reached the receiver, in %: D-ITG's, not round
  trips) and its one-way delay upstream averaged over each 200 ms (Flent's step, as ITGDec
  reports it), pooled over the runs for the CDFs (``voip_cdf.png``). The stream crosses
  the uplink, so the study's 1, 10 and 100 Mbit/s VoIP rates are the uplinks of the 10/1, 10/10
  and 100/100 links (the JSON keys the VoIP results by that upstream rate).
* ``rtt_fair``: four CUBIC uploads at 10, 50, 200 and 500 ms for 600 s: Jain's index over their
  goodputs, each one's mean goodput, their total and each one's retransmission timeouts.
* ``wifi``: every test the study ran over WiFi (RRUL, VoIP beside one upload and beside RRUL,
  web unloaded and beside either) over an 802.11n link behind 100/100 Mb/s (``wifi_rrul.toml``:
  the ath9k AP with Minstrel HT, the iwlwifi 5100 client, EDCA with WMM's four access
  categories), the tested qdisc on both WiFi interfaces; each test's flows are those of its
  wired file, its runs on link "wifi".
* ``web``: Flent's http-getter fetching a page every second (``webpage`` flow: a name lookup,
  the main document, the objects over 4 workers), the small (56 kB in 3 requests) or large page
  (3 MB in 110 requests), unloaded, beside one TCP upload (``1up``) or beside RRUL (``rrul``):
  each run's mean fetch time over the fetches started in the window, normalised by the mean of
  the unloaded runs of the same qdisc, link and page; mean and standard deviation over the runs;
  the RRUL-loaded runs' induced latency beside it. The cases reuse voip_1up.toml (its upload) and
  rrul.toml (its flows), the page flow put first.

Compared with the study's Table 2 (average VoIP loss, the mean over runs) and judged against
five claims of its text (``CLAIMS``), each at every link it was run on, and five of its section 7
on the WiFi series (W1-W5: the latency floor, the wired ordering, the starved upstream, the VoIP
loss beside one upload and beside RRUL). ``--quick`` runs one
replication of every case (the study ran 30), each as long and set up as in the full run: every
published cell and claim needs all seven qdiscs and the claims hold for every link.

Modules: ``setup`` (the qdiscs per rate, the links, the scenario files and sweeps), ``metrics``
(a run's numbers, in the sweep workers), ``report`` (the sweeps run, the results per case, the
tables and figures), ``published`` (Table 2), ``claims`` (the claims of the text); ``STUDY`` is
declared here.
"""

from __future__ import annotations

from aqmlab.reproduce.goodbadwifi2015.claims import (
    ALMOST_NOTHING,
    BY_FAR,
    CLAIMS,
    FIFO,
    FOLLOW_TAU,
    FQ_CODEL_LOSS,
    FQ_SCHEMES,
    LOSS_RATE,
    ONE_STREAM_LOSS_PCT,
    SINGLE_QUEUE_AQMS,
    SUFFERS_RTOS,
    VERY_HIGH_PCT,
    WIFI_FLOOR_MS,
    claim_aqm_fairness,
    claim_fifo_highest,
    claim_fq_best_rrul,
    claim_fq_codel_loss,
    claim_web_follows_latency,
    claim_wifi_floor,
    claim_wifi_upstream_starved,
    claim_wifi_voip_one_stream,
    claim_wifi_voip_rrul,
    claim_wifi_wired_order,
    kendall_tau,
)
from aqmlab.reproduce.goodbadwifi2015.metrics import METRICS_FN, STEP_NS, TRANSIENT_S, WARMUP_S, run_metrics
from aqmlab.reproduce.goodbadwifi2015.published import (
    PUBLISHED,
    TABLE2,
    TABLE2_CROSS,
    TABLE2_FLOOR,
    TABLE2_RATES,
    TABLE2_ROWS,
    table2_measured,
)
from aqmlab.reproduce.goodbadwifi2015.report import (
    ALL_LINKS,
    GOODPUT_KEYS,
    LINK_TABLES,
    RRUL_KEYS,
    aggregate,
    figures,
    results,
    run,
    tables,
)
from aqmlab.reproduce.goodbadwifi2015.setup import (
    CROSS,
    DESCRIPTION,
    LINKS,
    LINUX_RED,
    NAME,
    PAGE_FLOW,
    PAGES,
    QDISCS,
    REPS,
    SERIES,
    TEST_FILES,
    WEB_BASE,
    WEB_CROSS,
    WIFI,
    WIFI_FILE,
    WIFI_HOPS,
    qdisc_for,
    scenario_file,
    sweep_doc,
    web_cross,
    web_doc,
    wifi_doc,
)
from aqmlab.reproduce.study import Option, Quick, Study

STUDY = Study(
    name=NAME,
    description=DESCRIPTION,
    reps=REPS,
    series=tuple(SERIES),
    options=(
        Option("--qdisc", "qdiscs", tuple(QDISCS), "only these qdiscs"),
        Option(
            "--link",
            "links",
            tuple(LINKS),
            "only these wired links, down/up Mb/s (the WiFi test has its own)",
        ),
    ),
    quick=Quick(reps=1, note="every case, as long as in the full run"),
    run=run,
    tables=tables,
    figures=figures,
    published=PUBLISHED,
    claims=CLAIMS,
    series_help="all: every test; the others: that test alone",
)

__all__ = [
    "ALL_LINKS",
    "ALMOST_NOTHING",
    "BY_FAR",
    "CLAIMS",
    "CROSS",
    "DESCRIPTION",
    "FIFO",
    "FOLLOW_TAU",
    "FQ_CODEL_LOSS",
    "FQ_SCHEMES",
    "GOODPUT_KEYS",
    "LINKS",
    "LINK_TABLES",
    "LINUX_RED",
    "LOSS_RATE",
    "METRICS_FN",
    "NAME",
    "ONE_STREAM_LOSS_PCT",
    "PAGES",
    "PAGE_FLOW",
    "PUBLISHED",
    "QDISCS",
    "REPS",
    "RRUL_KEYS",
    "SERIES",
    "SINGLE_QUEUE_AQMS",
    "STEP_NS",
    "STUDY",
    "SUFFERS_RTOS",
    "TABLE2",
    "TABLE2_CROSS",
    "TABLE2_FLOOR",
    "TABLE2_RATES",
    "TABLE2_ROWS",
    "TEST_FILES",
    "TRANSIENT_S",
    "VERY_HIGH_PCT",
    "WARMUP_S",
    "WEB_BASE",
    "WEB_CROSS",
    "WIFI",
    "WIFI_FILE",
    "WIFI_FLOOR_MS",
    "WIFI_HOPS",
    "aggregate",
    "claim_aqm_fairness",
    "claim_fifo_highest",
    "claim_fq_best_rrul",
    "claim_fq_codel_loss",
    "claim_web_follows_latency",
    "claim_wifi_floor",
    "claim_wifi_upstream_starved",
    "claim_wifi_voip_one_stream",
    "claim_wifi_voip_rrul",
    "claim_wifi_wired_order",
    "figures",
    "kendall_tau",
    "qdisc_for",
    "results",
    "run",
    "run_metrics",
    "scenario_file",
    "sweep_doc",
    "table2_measured",
    "tables",
    "web_cross",
    "web_doc",
    "wifi_doc",
]
