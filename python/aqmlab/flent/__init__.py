"""Export a run to Flent's data format (version 4, ``.flent.gz``) so Flent 2.3 can plot it.

Follows Flent 2.3's data files (flent/resultset.py, FILEFORMAT_VERSION 4): top-level ``version``/``metadata``/``x_values``/
``results``/``raw_values``; the Flent test's exact series names; ``raw_values`` with absolute
epoch times on a synthetic, deterministic epoch (T0 = 2026-01-01T00:00:00Z + run time);
``results`` resampled on the 0.2 s grid; the mandatory metadata set.

Mapping (flows ordered by flow id; probe streams = flows present in ``probes``):

* TCP flows ``direction == "up"`` -> uploads, ``"down"`` -> downloads. Per-flow throughput is
  goodput from ``flow_series`` (delivered bytes between consecutive samples, Mbit/s); raw points
  ``{t, val, dur}`` like netperf's demo mode, mixed with ``{t, tcp_cwnd, tcp_rtt}`` like Flent's
  ``--socket-stats`` (``_socket_stats``) for its ``tcp_cwnd`` and ``tcp_rtt`` plots. A sample
  can exceed the link's rate, and the streams' sum with it: in-order delivery moves on in a burst
  where a retransmission fills a hole (a 30 s ``rrul`` at 10 Mb/s: the four streams of a
  direction summed above the rate in 13-16 of 145 samples, at most 1.5 times). netperf measures
  the same bursts: ``TCP_MAERTS`` counts the bytes its recv() calls return, in order, and
  ``TCP_STREAM`` those its send() calls write, which a full send buffer admits as cumulative
  ACKs free it (Linux tcp_input.c, tcp_check_space). The bytes the sender transmitted
  (``flow_series.sent_bytes``, retransmissions included) would overshoot more (53-54 of the
  145).
* Probe streams -> ``Ping (ms) ...`` series, raw ``{t, val, seq}`` with ``t`` the reply's
  arrival, as ``ping -D`` stamps it (answered probes only; the loss rate goes to
  ``SERIES_META[...]['PACKET_LOSS_RATE']``); a request/response stream (``pattern = "rr"``)
  gives netperf UDP_RR's interim results as Flent's netperf runner keeps them, raw ``{t, val}``
  (``aqmlab.flent.summary.rr_points``).
* Queue samples (``queue``) -> ``qdisc_stats_aqmlab-<dir>`` raw series ``{t, backlog_bytes,
  backlog_pkts, dropped, ecn_mark, delay}`` plus ``::dropped``/``::ecn_mark`` children, enabled
  with ``TEST_PARAMETERS`` ``qdisc_stats_hosts``/``qdisc_stats_interfaces``. ``dropped`` and
  ``ecn_mark`` are per-interval counts (format v4); ``delay`` (ms) is the backlog's drain time at
  the scheduled rate, ``backlog_bytes * 8 / rate_bps`` — an estimate, like the ``delay`` some
  qdiscs report, not a measured sojourn time.
* A discipline with sub-queues (dualpi2's ``l`` and ``c``, ``meta['subqueues']``) adds, when the
  run kept its packets, one more qdisc_stats host per sub-queue (``aqmlab-<dir>-<name>``,
  interface ``<dir>.<name>``), sampled when the queue is: backlog from the sub-queue's packets
  (``metrics.backlog_steps``), drops and marks by the time they left it, and ``delay`` = the mean
  sojourn of the packets that left it since the previous sample (none where none did). Flent's
  backlog, drops and delay plots draw every ``qdisc_stats_*`` series, so they show the queue
  and its sub-queues side by side. The run's end has no sub-queue sample: a packet still queued
  then has no packets row.
* Tests ``tcp_nup``/``tcp_ndown`` (tcp_nup.conf, tcp_ndown.conf: ``TCP upload::<i>``, i from 1)
  and ``rtt_fair_var_up``/``rtt_fair_var_down`` (rtt_fair.inc: a stream ``TCP <dir> <label>
  <host>`` per entry of HOSTS, a ``Ping (ms) ICMP <host>`` per host) record how each stream ran
  as Flent's per-stream test parameters (testenv.py ``for_stream_config``): ``cc_algos`` (netperf
  ``-K``; Flent records it per series as ``CONG_CONTROL``) and ``markings`` (the flow's
  ``dscp``). ``rtt_fair_var_*`` sends each stream to the host its flow names (``host``, as
  ``aqmlab-<host>``); a host with several flows is in HOSTS once per flow, told apart by the
  ``labels`` BE, BE2, BE3, ... (Flent's fairness index is then over streams, not hosts). A run
  whose TCP flows go one way and name two hosts or more is guessed as ``rtt_fair_var_*``, else as
  ``tcp_nup``/``tcp_ndown``. Built-ins: ``l4s`` and ``bbr_vs_cubic`` are ``tcp_ndown`` with
  ``cc_algos`` ``prague,cubic`` and ``bbr,cubic``: Flent's ``cubic_dctcp`` and ``cubic_bbr`` run
  the pair 4 ways (BE and CS1 each way, 8 streams, 4 pings), a different flow set. ``cake_home``
  is ``rtt_fair_var_down`` (hosts a and b) with its call through voip_mixin.inc.
* voip_mixin.inc (included by every netperf test: ``rrul``, ``rrul_be``, ``tcp_*``,
  ``rtt_fair*``): the test parameter ``voip_host`` adds the ``VoIP`` series of a voip flow (the
  one named with ``flow=``, else the run's only one) beside the test's own.
* A flow's ECN mode, which Flent does not record (the host's sysctl sets it), goes to
  ``SERIES_META[...]['AQMLAB_ECN']``.
* Test ``qdisc-stats`` (generic export of any run): the ``down`` queue as the ``qdisc-stats``
  series and its ``::backlog_pkts/::backlog_bytes/::dropped/::ecn_mark/::delay`` children.

* Tests ``voip`` and ``voip-1up``: a ``voip`` flow (irtt's stream) -> the ``VoIP`` series with
  irtt's raw records (``{t, seq, val (RTT), owd_up, owd_down, ipdv_up, ipdv_down, ipdv}``, ``t`` the
  reply's arrival; lost probes ``{t (send), seq, lost, lost_dir}``) and the children Flent's irtt
  runner makes (runners.py IrttRunner.parse with multi_results): one sample per STEP_SIZE, the
  first packet at or after it, ``::delay`` = its one-way delay up, ``::jitter`` = |its IPDV up|,
  ``::loss`` = probes lost since the previous sample, ``::rtt``. ``voip-1up`` adds the ``TCP
  upload``, ``voip-rrul`` the ``rrul_be`` flow set (voip-rrul.conf includes rrul_be.conf, so an
  aqmlab ``rrul`` run's marked flows take rrul_be's names).

* Tests ``http``, ``http-1down``, ``http-1up`` and ``http-rrul``: a ``webpage`` flow (Flent's
  http-getter) -> the ``HTTP latency`` series (ms; tests/http.inc), one raw ``{t, val}`` per
  completed page fetch as HttpGetterRunner parses http-getter's line: ``t`` = the fetch's end,
  ``val`` = its fetch time in ms (http-getter's get_loop times a cycle from its start to the last
  object); ``results`` on the grid as Flent's TimeseriesAggregator puts them (linear to the next
  fetch end, null where that is more than 5 steps = 1 s away). ``http-1down``/``http-1up`` add the one ``TCP
  download``/``TCP upload``, ``http-rrul`` the ``rrul_be`` flow set (http-rrul.conf includes
  rrul_be.conf, so an aqmlab ``rrul`` run's marked flows take rrul_be's names). A run with a
  voip flow too is guessed as ``voip``/``voip-1up``; ``--test http-1up`` gives its HTTP view.
  ``voip`` (voip.conf: the VoIP series alone) exports the stream of any run with one; the run's
  TCP flows are then load that the file does not record, as when Flent's voip test runs beside
  other traffic.
  Approximations: the webpage flow repeats fetches by http-getter's rule (a cycle every
  interval, or when the previous one ends) but at its own ``interval``, where Flent's HTTP tests
  pass ``-i`` STEP_SIZE (200 ms); a fetch that timed out or was cut by the run's end has no
  point, as http-getter prints none for a failed cycle (they count in ``SERIES_META['HTTP
  latency']['AQMLAB_NOT_COMPLETED']``), but http-getter stops at its first error and aqmlab goes
  on; ``HTTP_GETTER_URLLIST`` stays null (the page is a list of object sizes, not URLs);
  fetches that start before the warm-up are left out, as in the run's summary.

A Flent test carries one VoIP stream and one http-getter: a run with several ``voip`` or
``webpage`` flows exports each one by ``flow=`` (``export_flent(..., flow=ID)``, ``aqmlab export
--flent --flow ID``), the others left out.

``guess`` names the test a run's flows reproduce and why; ``notes`` says how the export differs
from a run of that test: the flows its series leave out (for a voip flow, the VoIP tests that
carry it), the ping series the run has no probe stream for, a host listed more than once, the
sub-queues, the flows' ECN modes, and the Flent test of the same pair of controllers
(``aqmlab export flent`` prints both).

Modules, one concern each: ``match`` (the tests, the run's flows as they see them, ``guess``),
``series`` (the grid and the per-flow series), ``qdisc`` (the queues' statistics), ``streams``
(which flow each series of a test carries, and its name), ``caveats`` (``notes``), ``export``
(``build``, ``write``, ``export_flent``).
"""

from __future__ import annotations

from aqmlab.flent.caveats import SMACKDOWN, notes
from aqmlab.flent.export import (
    FLENT_VERSION,
    HTTP_SERIES,
    LOCAL_HOST,
    VOIP_MIXIN_TESTS,
    build,
    export_flent,
    write,
)
from aqmlab.flent.match import (
    HTTP_TESTS,
    RTT_FAIR_VAR,
    STREAM_TESTS,
    SUPPORTED,
    VOIP_TESTS,
    guess,
    guess_test,
)
from aqmlab.flent.series import EPOCH, STEP, T0
from aqmlab.flent.streams import RRUL_BE_CLASSES, RRUL_BE_PINGS, RRUL_CLASSES, RRUL_PINGS, SERVER

__all__ = [
    "EPOCH",
    "FLENT_VERSION",
    "HTTP_SERIES",
    "HTTP_TESTS",
    "LOCAL_HOST",
    "RRUL_BE_CLASSES",
    "RRUL_BE_PINGS",
    "RRUL_CLASSES",
    "RRUL_PINGS",
    "RTT_FAIR_VAR",
    "SERVER",
    "SMACKDOWN",
    "STEP",
    "STREAM_TESTS",
    "SUPPORTED",
    "T0",
    "VOIP_MIXIN_TESTS",
    "VOIP_TESTS",
    "build",
    "export_flent",
    "guess",
    "guess_test",
    "notes",
    "write",
]
