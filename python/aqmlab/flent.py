"""Export a run to Flent's data format (version 4, ``.flent.gz``) so Flent 2.3 can plot it.

Follows Flent 2.3's data files (flent/resultset.py, FILEFORMAT_VERSION 4): top-level ``version``/``metadata``/``x_values``/
``results``/``raw_values``; the Flent test's exact series names; ``raw_values`` with absolute
epoch times on a synthetic, deterministic epoch (T0 = 2026-01-01T00:00:00Z + run time);
``results`` resampled on the 0.2 s grid; the mandatory metadata set.

Mapping (flows ordered by flow id; probe streams = flows present in ``probes``):

* TCP flows ``direction == "up"`` -> uploads, ``"down"`` -> downloads. Per-flow throughput is
  goodput from ``flow_series`` (delivered bytes between consecutive samples, Mbit/s); raw points
  ``{t, val, dur}`` like netperf's demo mode, mixed with ``{t, tcp_cwnd, tcp_rtt}`` like Flent's
  ``--socket-stats`` (``_socket_stats``) for its ``tcp_cwnd`` and ``tcp_rtt`` plots.
* Probe streams -> ``Ping (ms) ...`` series, raw ``{t, val, seq}`` (answered probes only; the
  loss rate goes to ``SERIES_META[...]['PACKET_LOSS_RATE']``).
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
  object); ``results`` interpolated on the grid like Flent's TimeseriesAggregator (linear; null
  more than 5 steps = 1 s from the nearest fetch end, where Flent measures to the next one). ``http-1down``/``http-1up`` add the one ``TCP
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
"""

from __future__ import annotations

import datetime
import gzip
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.compute as pc

from aqmlab import files
from aqmlab import metrics as M

STEP = 0.2
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T0 = EPOCH.timestamp()
FLENT_VERSION = "2.3.0"
LOCAL_HOST = "aqmlab"
SERVER = "aqmlab-server"

RRUL_CLASSES = ("BE", "BK", "CS5", "EF")
RRUL_PINGS = ("Ping (ms) ICMP", "Ping (ms) UDP BE", "Ping (ms) UDP BK", "Ping (ms) UDP EF")
RRUL_BE_CLASSES = ("BE", "BE2", "BE3", "BE4")
RRUL_BE_PINGS = ("Ping (ms) ICMP", "Ping (ms) UDP BE1", "Ping (ms) UDP BE2", "Ping (ms) UDP BE3")

SUPPORTED = (
    "rrul", "rrul_be", "tcp_nup", "tcp_ndown", "tcp_1up", "ping", "rtt_fair4be", "rtt_fair_var_up",
    "rtt_fair_var_down", "voip", "voip-1up", "voip-rrul", "http", "http-1down", "http-1up", "http-rrul",
    "qdisc-stats",
)  # fmt: skip
# Tests whose conf includes netperf_definitions.inc, and with it voip_mixin.inc: the test parameter
# voip_host adds irtt's VoIP series beside the test's own.
VOIP_MIXIN_TESTS = ("rrul", "rrul_be", "tcp_nup", "tcp_ndown", "tcp_1up", "rtt_fair4be", "rtt_fair_var_up",
                    "rtt_fair_var_down")  # fmt: skip
# Flent's one-direction tests with one TCP stream per host (rtt_fair_var_up.conf, _down.conf), by
# the direction of their flows
RTT_FAIR_VAR = {"up": "rtt_fair_var_up", "down": "rtt_fair_var_down"}
# Flent's "smackdown" tests of CUBIC against another controller (cubic_bbr.conf, cubic_dctcp.conf,
# cubic_reno.conf), by the other controller; Prague is DCTCP's L4S successor
SMACKDOWN = {"bbr": "cubic_bbr", "dctcp": "cubic_dctcp", "prague": "cubic_dctcp", "reno": "cubic_reno"}
# Flent's tests of N streams one way (tcp_nup.conf, tcp_ndown.conf), by direction: the test and
# the word of its series and stream-count parameter
STREAM_TESTS = {"up": ("tcp_nup", "upload"), "down": ("tcp_ndown", "download")}
# Flent's HTTP tests by the TCP flows beside the fetches: (uploads, downloads) -> test
HTTP_TESTS = {(0, 0): "http", (0, 1): "http-1down", (1, 0): "http-1up", (4, 4): "http-rrul"}
# Flent's VoIP tests by the TCP flows beside the stream: (uploads, downloads) -> test
VOIP_TESTS = {(0, 0): "voip", (1, 0): "voip-1up", (4, 4): "voip-rrul"}
HTTP_SERIES = "HTTP latency"


def _iso(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _tables(run) -> dict:
    return {n: run.tables.get(n) for n in ("packets", "queue", "flow_series", "probes", "flows", "links")}


def _classify(run) -> tuple[list[dict], list[dict], list[int]]:
    """(upload TCP flows, download TCP flows, ping probe flow ids), each ordered by flow id; a
    voip stream is its own series, not a ping."""
    flows = run.tables.get("flows")
    if flows is None:
        raise M.MissingTableError(f"run '{run.run_id}' has no 'flows' table")
    voip = set(_voip_flows(run))
    probes = [p for p in M.probe_flows(_tables(run)) if p not in voip]
    rows = sorted(flows.to_pylist(), key=lambda r: r["flow"])
    tcp = [r for r in rows if r["kind"] == "tcp" and r["flow"] not in probes]
    return [r for r in tcp if r["direction"] == "up"], [r for r in tcp if r["direction"] == "down"], probes


def guess_test(run) -> str:
    """The Flent test whose flow set the run reproduces (ValueError when none fits)."""
    return guess(run)[0]


def guess(run) -> tuple[str, str]:
    """(the Flent test whose flow set the run reproduces, the flows that decide it); ValueError
    when none fits."""
    up, down, probes = _classify(run)
    nu, nd = len(up), len(down)
    tcp = f"{nu} upload and {nd} download TCP flows"
    if _voip_flows(run) and (nu, nd) in VOIP_TESTS:
        return VOIP_TESTS[(nu, nd)], f"a voip flow beside {tcp}"
    if _kind_flows(run, "webpage") and (nu, nd) in HTTP_TESTS:
        return HTTP_TESTS[(nu, nd)], f"a webpage flow beside {tcp}"
    if nu == 0 and nd == 0:
        if probes:
            return "ping", f"{len(probes)} probe stream(s) and no TCP flow"
        if run.tables.get("queue") is not None:
            return "qdisc-stats", "no TCP flow and no probe stream: the queue's statistics"
    elif nu == 4 and nd == 4 and len({r["base_rtt_ns"] for r in up}) == 1:
        marked = {str(_entry(run, int(r["flow"])).get("dscp") or "CS0") for r in up + down} - {"CS0"}
        if marked:  # rrul.conf marks its streams BE, BK (CS1), CS5 and EF; rrul_be.conf all BE
            return "rrul", f"{tcp}, all at one base RTT, marked {', '.join(sorted(marked))}"
        return "rrul_be", f"{tcp}, all at one base RTT, all best effort"
    elif nu == 1 and nd == 0:
        return "tcp_1up", tcp
    elif nu == 0 or nd == 0:
        d = "up" if nd == 0 else "down"
        hosts = _hosts(run, up or down)
        if None not in hosts and len(set(hosts)) > 1:
            return RTT_FAIR_VAR[d], f"{tcp} from {len(set(hosts))} hosts"
        return STREAM_TESTS[d][0], tcp
    elif nu == nd and nu <= 4:
        return "rtt_fair4be", f"{tcp}, at most 4 each way"
    raise ValueError(
        f"no Flent test matches {nu} upload and {nd} download TCP flows with {len(probes)} probe streams; "
        f"choose one with --test ({', '.join(SUPPORTED)}); 'qdisc-stats' exports any run's queue"
    )


class _Builder:
    """The grid and the series; samples before the warm-up ``warmup_s`` are left out (grid
    points become null, raw samples are dropped), so Flent's statistics cover the same window as
    aqmlab's summary."""

    def __init__(self, duration_s: float, warmup_s: float = 0.0):
        n = int(np.floor(duration_s / STEP + 1e-9)) + 1
        self.x = np.round(np.arange(n) * STEP, 6)
        self.warmup_s = warmup_s
        self.results: dict[str, list] = {}
        self.raw: dict[str, list] = {}
        self.series_meta: dict[str, dict] = {}

    def _grid(self, vals: np.ndarray) -> list:
        return [None if not np.isfinite(v) or x < self.warmup_s else float(v) for x, v in zip(self.x, vals)]

    def _raw(self, raw: list[dict]) -> list[dict]:
        return [p for p in raw if p["t"] - T0 >= self.warmup_s]

    def set(self, name: str, raw: list[dict], grid: np.ndarray) -> None:
        self.raw[name] = self._raw(raw)
        self.results[name] = self._grid(grid)

    def add(self, name: str, raw: list[dict], grid: np.ndarray, units: str, **meta: Any) -> None:
        self.set(name, raw, grid)
        raw = self.raw[name]
        vals = [p["val"] for p in raw if "val" in p]
        sm = {"UNITS": units, **meta}
        if vals:
            sm.update(MEAN_VALUE=float(np.mean(vals)), MIN_VALUE=float(min(vals)), MAX_VALUE=float(max(vals)))
        self.series_meta[name] = sm


def _rate_series(run, flow: int, b: _Builder) -> tuple[list[dict], np.ndarray]:
    fs = run.tables.get("flow_series")
    if fs is None:
        raise M.MissingTableError(
            f"run '{run.run_id}' has no 'flow_series' table; Flent throughput series need it"
        )
    f = fs.column("flow").to_numpy().astype(np.int64)
    t = fs.column("t_ns").to_numpy().astype(np.int64)[f == flow]
    d = fs.column("delivered_bytes").to_numpy().astype(np.float64)[f == flow]
    order = np.argsort(t, kind="stable")
    t, d = t[order] / 1e9, d[order]
    raw = []
    for i in range(1, t.size):
        dur = t[i] - t[i - 1]
        if dur > 0:
            raw.append(
                {"t": T0 + float(t[i]), "val": float((d[i] - d[i - 1]) * 8 / dur / 1e6), "dur": float(dur)}
            )
    grid = np.full(b.x.size, np.nan)
    if t.size >= 2:
        cum = np.interp(b.x, t, d, left=np.nan, right=np.nan)
        grid[1:] = (cum[1:] - cum[:-1]) * 8 / STEP / 1e6
    return sorted(raw + _socket_stats(run, flow, fs, f == flow), key=lambda p: p["t"]), grid


def _socket_stats(run, flow: int, fs, rows: np.ndarray) -> list[dict]:
    """What Flent's ``--socket-stats`` mixes into a TCP series (its ss poller, ss_iterate in
    runners.py): ``tcp_cwnd`` in segments (the congestion window over the flow's MSS, as ss
    prints ``cwnd:``) and ``tcp_rtt`` in ms (ss's ``rtt:``, the smoothed RTT), one point per
    ``flow_series`` sample with an RTT measured; Flent's ``tcp_cwnd`` and ``tcp_rtt`` plots draw
    them."""
    mss = _entry(run, flow).get("mss")
    if not mss or "cwnd_bytes" not in fs.column_names:
        return []
    t = fs.column("t_ns").to_numpy()[rows].astype(np.float64) / 1e9
    cwnd = fs.column("cwnd_bytes").to_numpy()[rows].astype(np.float64) / mss
    srtt = fs.column("srtt_ns").to_numpy()[rows].astype(np.float64) / 1e6
    return [
        {"t": T0 + float(a), "tcp_cwnd": round(float(c), 3), "tcp_rtt": float(r)}
        for a, c, r in sorted(zip(t, cwnd, srtt))
        if r > 0
    ]


def _interp_grid(t: np.ndarray, v: np.ndarray, b: _Builder) -> np.ndarray:
    """Samples (sorted times ``t`` in s) interpolated on the grid, null more than 1 s (5 steps,
    Flent's TimeseriesAggregator max_distance) from the nearest sample."""
    grid = np.full(b.x.size, np.nan)
    if t.size:
        grid = np.interp(b.x, t, v)
        idx = np.clip(np.searchsorted(t, b.x), 1, max(t.size - 1, 1))
        near = np.minimum(np.abs(b.x - t[idx - 1]), np.abs(b.x - t[np.minimum(idx, t.size - 1)]))
        grid[near > 1.0] = np.nan
    return grid


def _ping_series(run, flow: int, b: _Builder) -> tuple[list[dict], np.ndarray, float | None]:
    p = M.probe_table(_tables(run), flow)
    t = p.column("t_send_ns").to_numpy().astype(np.float64) / 1e9
    seq = p.column("seq").to_numpy().astype(np.int64)
    rtt = M._nullable_float(p, "rtt_ns") / 1e6
    ok = ~np.isnan(rtt)
    order = np.argsort(t[ok], kind="stable")
    t_ok, rtt_ok, seq_ok = t[ok][order], rtt[ok][order], seq[ok][order]
    raw = [{"t": T0 + float(a), "val": float(v), "seq": int(s)} for a, v, s in zip(t_ok, rtt_ok, seq_ok)]
    grid = _interp_grid(t_ok, rtt_ok, b)
    return raw, grid, M.probe_loss(_tables(run), flow, b.warmup_s, int(run.meta["duration_ns"]))


def _entry(run, flow: int) -> dict:
    """The resolved scenario entry (``flows[i]``) that made flow ``flow``."""
    group = next(r["group"] for r in run.tables["flows"].to_pylist() if r["flow"] == flow)
    entries = (run.meta.get("scenario") or {}).get("flows") or []
    return entries[group] if group < len(entries) else {}


def _hosts(run, rows: list[dict]) -> list[str | None]:
    """The ``host`` each flow of ``rows`` names (None where it names none)."""
    return [_entry(run, int(r["flow"])).get("host") for r in rows]


def _host_name(host: str | None) -> str:
    """The Flent host name of an aqmlab host (the server when the flow names none)."""
    return f"aqmlab-{host}" if host else SERVER


def _stream_params(run, rows: list[dict]) -> dict[str, str]:
    """Flent's per-stream test parameters (testenv.py STREAM_CONFIG_PARAM_NAMES, one comma-separated
    value per stream) that say how each flow of ``rows`` ran: its congestion control (netperf
    ``-K``) and its DSCP marking."""
    return {
        "cc_algos": ",".join(r["cc"] for r in rows),
        "markings": ",".join(str(_entry(run, int(r["flow"])).get("dscp") or "CS0") for r in rows),
    }


def _stream_labels(hosts: list[str]) -> list[str]:
    """A label per stream of rtt_fair.inc (series ``TCP <dir> <label> <host>``) that keeps two
    streams to one host apart: ``BE`` for a host's first, then ``BE2``, ``BE3``, ..."""
    seen: dict[str, int] = {}
    out = []
    for h in hosts:
        seen[h] = seen.get(h, 0) + 1
        out.append("BE" if seen[h] == 1 else f"BE{seen[h]}")
    return out


def _kind_flows(run, kind: str) -> list[int]:
    """The flows of ``kind``, by id."""
    rows = run.tables["flows"].select(["flow", "kind"]).to_pylist()
    return [int(r["flow"]) for r in rows if r["kind"] == kind]


def _voip_flows(run) -> list[int]:
    """The flows of kind ``voip`` (irtt streams), by id."""
    return _kind_flows(run, "voip")


def _http_series(run, flow: int, b: _Builder) -> tuple[list[dict], np.ndarray, int]:
    """http-getter's points of webpage flow ``flow`` (``{t: fetch end, val: fetch time ms}``, the
    fetches started at or after the warm-up that completed), their grid, and how many of those
    fetches did not complete."""
    w = run.tables.get("webpage")
    if w is None:
        raise M.MissingTableError(f"run '{run.run_id}' has no 'webpage' table; 'HTTP latency' needs it")
    mine = w.column("flow").to_numpy() == flow
    start = w.column("t_start_ns").to_numpy().astype(np.float64)[mine] / 1e9
    ft = M._nullable_float(w, "fetch_time_ns")[mine] / 1e9
    keep = start >= b.warmup_s
    done = keep & ~np.isnan(ft)
    end, ms = start[done] + ft[done], ft[done] * 1e3
    order = np.argsort(end, kind="stable")
    end, ms = end[order], ms[order]
    raw = [{"t": T0 + float(a), "val": float(v)} for a, v in zip(end, ms)]
    return raw, _interp_grid(end, ms, b), int(keep.sum() - done.sum())


def _voip_series(run, flow: int, b: _Builder) -> tuple[list[dict], dict[str, np.ndarray], dict]:
    """irtt's records of a VoIP stream, its sub-sampled children on the grid, and its metadata."""
    p = M.probe_table(_tables(run), flow)
    order = np.argsort(p.column("seq").to_numpy().astype(np.int64), kind="stable")
    seq = p.column("seq").to_numpy().astype(np.int64)[order]
    sent = p.column("t_send_ns").to_numpy().astype(np.float64)[order] / 1e9
    rtt, up, down = (M._nullable_float(p, c)[order] / 1e6 for c in ("rtt_ns", "owd_up_ns", "owd_down_ns"))
    raw: list[dict] = []
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in ("rtt", "delay", "jitter", "loss")}
    next_sample, lost = -np.inf, 0
    for i in range(seq.size):
        if np.isnan(rtt[i]):
            raw.append({"t": T0 + float(sent[i]), "seq": int(seq[i]), "lost": True, "lost_dir": None})
            lost += 1
            continue
        t = float(sent[i] + rtt[i] / 1e3)
        dp = {"t": T0 + t, "seq": int(seq[i]), "val": float(rtt[i]), "owd_up": float(up[i]),
              "owd_down": float(down[i])}  # fmt: skip
        if i > 0 and seq[i - 1] == seq[i] - 1 and not np.isnan(rtt[i - 1]):
            dp.update(ipdv_up=float(up[i] - up[i - 1]), ipdv_down=float(down[i] - down[i - 1]),
                      ipdv=float(rtt[i] - rtt[i - 1]))  # fmt: skip
        raw.append(dp)
        if t >= next_sample:
            for k, v in (("rtt", dp["val"]), ("delay", dp["owd_up"]), ("jitter", abs(dp.get("ipdv_up", 0.0))),
                         ("loss", float(lost))):  # fmt: skip
                samples[k].append((t, v))
            lost, next_sample = 0, t + STEP
    grid = {}
    for k, pts in samples.items():
        g = np.full(b.x.size, np.nan)
        if pts:
            ts, vs = np.array(pts).T
            idx = np.searchsorted(ts, b.x)
            ok = idx < ts.size
            ok[ok] &= ts[idx[ok]] - b.x[ok] < STEP
            g[ok] = vs[idx[ok]]
        grid[k] = g
    got = ~np.isnan(rtt)
    meta = {
        "RUNNER": "IrttRunner",
        "PACKETS_SENT": int(seq.size),
        "PACKETS_RECEIVED": int(got.sum()),
        "PACKET_LOSS_RATE": M.probe_loss(_tables(run), flow, b.warmup_s, int(run.meta["duration_ns"])),
        "RTT_MEAN": float(rtt[got].mean()) if got.any() else None,
        "OWD_UP_MEAN": float(up[got].mean()) if got.any() else None,
        "OWD_DOWN_MEAN": float(down[got].mean()) if got.any() else None,
        "IPDV_UP_MEAN": M.probe_ipdv_ms(_tables(run), flow, "up", b.warmup_s),
        "IPDV_DOWN_MEAN": M.probe_ipdv_ms(_tables(run), flow, "down", b.warmup_s),
        "AQMLAB_FLOW": flow,
    }
    return raw, grid, meta


def _queue_samples(run, direction: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The ``queue`` table's samples of one direction: their times (ns, sorted) and, at each,
    ``backlog_bytes``, ``backlog_pkts``, the cumulative ``drops`` and ``marks``, and ``delay`` (ms):
    the backlog's drain time at the scheduled rate, ``backlog_bytes * 8 / rate_bps``."""
    q = run.tables.get("queue")
    if q is None:
        raise M.MissingTableError(f"run '{run.run_id}' has no 'queue' table; qdisc statistics need it")
    q = M._filter_dir(q, direction)
    t = q.column("t_ns").to_numpy().astype(np.int64)
    order = np.argsort(t, kind="stable")
    cols = {c: q.column(c).to_numpy().astype(np.float64)[order] for c in
            ("backlog_bytes", "backlog_pkts", "drops", "marks", "rate_bps")}  # fmt: skip
    rate = cols.pop("rate_bps")
    cols["delay"] = np.where(rate > 0, cols["backlog_bytes"] * 8 / np.maximum(rate, 1) * 1e3, 0)
    return t[order], cols


def _subqueue_samples(run, direction: str, name: str, t_ns: np.ndarray) -> dict[str, np.ndarray]:
    """What ``_queue_samples`` gives, at the times ``t_ns``, for sub-queue ``name`` of one
    direction, from its ``packets`` rows: the backlog (``metrics.backlog_steps``), the drops and
    marks up to each time (by ``t_out_ns``), and ``delay`` = the mean sojourn (ms) of the packets
    that started transmission since the previous time (NaN where none did)."""
    p = M._filter_dir(run.tables["packets"], direction)
    sub = {"packets": p.filter(pc.equal(p.column("subqueue"), name))}
    cols = {}
    for unit in ("bytes", "pkts"):
        st, sv, _ = M.backlog_steps(sub, run.meta, direction, unit, "packets")
        i = np.searchsorted(st, t_ns, side="right") - 1
        cols[f"backlog_{unit}"] = np.where(i >= 0, sv[np.clip(i, 0, None)], 0.0)
    rows = sub["packets"]
    t_out = M._nullable_float(rows, "t_out_ns")
    for col, outcomes in (("drops", M.QUEUE_DROP_REASONS), ("marks", ("marked",))):
        events = np.sort(t_out[M._isin(rows, "outcome", outcomes)])
        cols[col] = np.searchsorted(events, t_ns, side="right").astype(np.float64)
    sent = M._isin(rows, "outcome", M.TRANSMITTED)
    order = np.argsort(t_out[sent], kind="stable")
    dep = t_out[sent][order]
    sojourn = (dep - M._nullable_float(rows, "t_enqueue_ns")[sent][order]) / 1e6
    k = np.searchsorted(dep, t_ns, side="right")
    n = np.diff(np.r_[0, k])
    total = np.diff(np.r_[0.0, np.r_[0.0, np.cumsum(sojourn)][k]])
    cols["delay"] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    return cols


def _qdisc_stats(run, direction: str, b: _Builder) -> dict[str, tuple[list[dict], dict[str, np.ndarray]]]:
    """Flent's qdisc statistics (``_qdisc_raw``) of one direction's queue and, where its discipline
    has sub-queues (``meta['subqueues']``: dualpi2's ``l`` and ``c``) and the run kept its
    packets, of each sub-queue, at the queue's sample times: by interface name (the direction, or
    ``<direction>.<sub-queue>``)."""
    t, cols = _queue_samples(run, direction)
    out = {direction: _qdisc_raw(t, cols, b)}
    # the packets table has no row for a packet still queued when the run ends: no sample then
    t = t[t < int(run.meta["duration_ns"])]
    if run.tables.get("packets") is not None and "subqueue" in run.tables["packets"].column_names:
        for name in (run.meta.get("subqueues") or {}).get(direction) or []:
            out[f"{direction}.{name}"] = _qdisc_raw(t, _subqueue_samples(run, direction, name, t), b)
    return out


def _qdisc_raw(
    t_ns: np.ndarray, cols: dict[str, np.ndarray], b: _Builder
) -> tuple[list[dict], dict[str, np.ndarray]]:
    """tc's raw records of queue samples (``_queue_samples``) and their grid: ``dropped`` and
    ``ecn_mark`` per interval (format v4), a record without ``delay`` where it is NaN."""
    ts = t_ns / 1e9
    dropped = np.diff(np.r_[0.0, cols["drops"]])
    ecn = np.diff(np.r_[0.0, cols["marks"]])
    delay = cols["delay"]
    raw = []
    for i in range(ts.size):
        rec = {"t": T0 + float(ts[i]), "backlog_bytes": int(cols["backlog_bytes"][i]),
               "backlog_pkts": int(cols["backlog_pkts"][i]), "dropped": int(dropped[i]), "ecn_mark": int(ecn[i])}  # fmt: skip
        if np.isfinite(delay[i]):
            rec["delay"] = float(delay[i])
        raw.append(rec)
    grid: dict[str, np.ndarray] = {}
    for k in ("backlog_bytes", "backlog_pkts", "delay"):
        grid[k] = (
            np.interp(b.x, ts, cols[k], left=np.nan, right=np.nan) if ts.size else np.full(b.x.size, np.nan)
        )
    # per-interval counts on the grid: counter difference between grid points
    for k, v in (("dropped", cols["drops"]), ("ecn_mark", cols["marks"])):
        if ts.size:
            idx = np.searchsorted(ts, b.x, side="right") - 1
            c = np.where(idx >= 0, v[np.clip(idx, 0, None)], 0.0)
            grid[k] = np.r_[c[0], np.diff(c)]
        else:
            grid[k] = np.full(b.x.size, np.nan)
    return raw, grid


def _add_voip(run, voip: int, b: _Builder) -> None:
    """irtt's ``VoIP`` series of voip flow ``voip`` and its children."""
    raw, grid, vmeta = _voip_series(run, voip, b)
    b.set("VoIP", raw, grid["rtt"])
    b.series_meta["VoIP"] = {"UNITS": "ms", "AQMLAB_FLOW": voip, **vmeta}
    # Children have results only: Flent's irtt runner gives them no raw values of their own.
    for k, units in (("rtt", "ms"), ("delay", "ms"), ("jitter", "ms"), ("loss", "count")):
        b.results[f"VoIP::{k}"] = b._grid(grid[k])
        b.series_meta[f"VoIP::{k}"] = {"UNITS": units}


def _mixin_voip(run, flow: int | None) -> int | None:
    """The voip flow a test with voip_mixin.inc carries: ``flow`` when it is one, else the run's
    only one (None when it has none or several)."""
    ids = _voip_flows(run)
    if flow in ids:
        return flow
    return ids[0] if len(ids) == 1 else None


def _ecn_mode(value: Any) -> str:
    """A flow's ``ecn`` key as its mode name (``true`` is classic, ``false`` off)."""
    return {True: "classic", False: "off", None: "off"}.get(value, value)


def _one_of(run, test: str, kind: str, flow: int | None) -> int:
    """The flow of ``kind`` a Flent test with one of them exports: ``flow`` when given, else the
    run's only one."""
    ids = _kind_flows(run, kind)
    if flow is not None:
        if flow not in ids:
            raise ValueError(f"flow={flow}: not a {kind} flow of run '{run.run_id}'; its {kind} flows: {ids}")
        return flow
    if not ids:
        raise ValueError(f"Flent test '{test}' needs a {kind} flow; run '{run.run_id}' has none")
    if len(ids) > 1:
        raise ValueError(
            f"Flent test '{test}' has one {kind} flow; the run has {len(ids)} ({ids}): choose one with flow"
        )
    return ids[0]


def _need_count(test: str, what: str, have: int, want: int) -> None:
    if have != want:
        raise ValueError(f"Flent test '{test}' needs {want} {what}, the run has {have}")


def _rrul_names(test: str, up: list[dict], down: list[dict], probes: list[int]) -> tuple[list, list, list]:
    """(TCP series name, flow row), (ping series name, probe flow) and the test's ping series of an
    rrul-shaped test; ``rrul`` marks its flows BE/BK/CS5/EF, ``rrul_be`` and ``http-rrul`` are all
    best effort."""
    cls, pings = (RRUL_CLASSES, RRUL_PINGS) if test == "rrul" else (RRUL_BE_CLASSES, RRUL_BE_PINGS)
    _need_count(test, "upload TCP flows", len(up), 4)
    _need_count(test, "download TCP flows", len(down), 4)
    if len(probes) > 4:
        raise ValueError(f"Flent test '{test}' has 4 ping series, the run has {len(probes)} probe streams")
    tcp_names = [(f"TCP upload {c}", r) for c, r in zip(cls, up)]
    tcp_names += [(f"TCP download {c}", r) for c, r in zip(cls, down)]
    return tcp_names, list(zip(pings, probes)), list(pings)


def _one_way(test: str, direction: str, up: list[dict], down: list[dict]) -> list[dict]:
    """The TCP flows of a test that runs streams one way only (``direction``); ValueError when the
    run has none that way or some the other way."""
    flows, other = (up, down) if direction == "up" else (down, up)
    if not flows or other:
        word = STREAM_TESTS[direction][1]
        raise ValueError(
            f"Flent test '{test}' needs only {word} TCP flows; the run has {len(up)} up and {len(down)} down"
        )
    return flows


def _rtt_fair_var(run, test: str, flows: list[dict], probes: list[int]) -> tuple[list, list, list, list]:
    """rtt_fair.inc's streams, one per flow of ``flows``, each to the host its flow names:
    (HOSTS, (TCP series name, flow row), the ping series the conf defines (one per host), (ping
    series name, probe flow): each host's first probe stream that names it)."""
    named = _hosts(run, flows)
    if None in named:
        missing = [int(r["flow"]) for r, h in zip(flows, named) if h is None]
        raise ValueError(
            f"Flent test '{test}' runs each stream to its own host: every TCP flow needs the flow key "
            f"'host'; flows {missing} name none"
        )
    hosts = [_host_name(h) for h in named]
    word = "upload" if flows[0]["direction"] == "up" else "download"
    tcp_names = [(f"TCP {word} {lab} {h}", r) for lab, h, r in zip(_stream_labels(hosts), hosts, flows)]
    slots = [f"Ping (ms) ICMP {h}" for h in dict.fromkeys(hosts)]
    by_host: dict[str, int] = {}
    for fid, h in zip(probes, _hosts(run, [{"flow": p} for p in probes])):
        if h is not None and _host_name(h) in hosts:
            by_host.setdefault(f"Ping (ms) ICMP {_host_name(h)}", fid)
    return hosts, tcp_names, slots, list(by_host.items())


def build(run, test: str | None = None, warmup_s: float | None = None, flow: int | None = None) -> dict:
    """The Flent data object (a dict) for ``run``; see the module docstring for the mapping.
    ``warmup_s``: samples before it are left out; None = the warm-up the run was summarised with.
    ``flow``: the voip or webpage flow a VoIP or HTTP test exports (None: the run's only one)."""
    test = test or guess_test(run)
    if test not in SUPPORTED:
        raise ValueError(f"unsupported Flent test '{test}'; supported: {', '.join(SUPPORTED)}")
    meta = run.meta
    duration = float(meta["duration_ns"]) / 1e9
    if warmup_s is None:
        warmup_s = float((run.summary or {}).get("warmup_s") or 0.0)
    b = _Builder(duration, warmup_s)
    up, down, probes = _classify(run)
    hosts = [SERVER]
    params: dict[str, str] = {}
    tcp_names: list[tuple[str, dict]] = []
    ping_names: list[tuple[str, int]] = []
    http_meta: dict[str, Any] = {}
    slots: list[str] = []  # the ping series the test's conf defines
    if test in ("rrul", "rrul_be"):
        tcp_names, ping_names, slots = _rrul_names(test, up, down, probes)
    elif test in ("tcp_nup", "tcp_ndown"):
        d = next(k for k, (t, _) in STREAM_TESTS.items() if t == test)
        flows, word = _one_way(test, d, up, down), STREAM_TESTS[d][1]
        params |= {f"{word}_streams": str(len(flows)), **_stream_params(run, flows)}
        tcp_names = [(f"TCP {word}::{i + 1}", r) for i, r in enumerate(flows)]
        slots = ["Ping (ms) ICMP"]
        ping_names = list(zip(slots, probes))
    elif test == "tcp_1up":
        _need_count(test, "upload TCP flows", len(up), 1)
        _need_count(test, "download TCP flows", len(down), 0)
        tcp_names = [("TCP upload", up[0])]
        slots = ["Ping (ms) ICMP"]
        ping_names = list(zip(slots, probes))
    elif test in RTT_FAIR_VAR.values():
        d = next(k for k, t in RTT_FAIR_VAR.items() if t == test)
        flows = _one_way(test, d, up, down)
        hosts, tcp_names, slots, ping_names = _rtt_fair_var(run, test, flows, probes)
        params |= {"labels": ",".join(_stream_labels(hosts)), **_stream_params(run, flows)}
    elif test == "ping":
        if not probes:
            raise ValueError(f"Flent test 'ping' needs probe streams; run '{run.run_id}' has none")
        ping_names = list(zip(("Ping (ms) ICMP", "Ping (ms) UDP"), probes))
    elif test in VOIP_TESTS.values():
        voip = _one_of(run, test, "voip", flow)
        nu, nd = next(k for k, v in VOIP_TESTS.items() if v == test)
        if test == "voip-rrul":  # voip-rrul.conf includes rrul_be.conf
            tcp_names, ping_names, slots = _rrul_names(test, up, down, probes)
        elif test == "voip-1up":
            _need_count(test, "upload TCP flows", len(up), nu)
            _need_count(test, "download TCP flows", len(down), nd)
            tcp_names = [("TCP upload", r) for r in up]
        _add_voip(run, voip, b)
    elif test in HTTP_TESTS.values():
        page = _one_of(run, test, "webpage", flow)
        nu, nd = next(k for k, v in HTTP_TESTS.items() if v == test)
        _need_count(test, "upload TCP flows", len(up), nu)
        _need_count(test, "download TCP flows", len(down), nd)
        if test == "http-rrul":  # http-rrul.conf includes rrul_be.conf
            tcp_names, ping_names, slots = _rrul_names(test, up, down, probes)
        else:
            tcp_names = [("TCP upload", r) for r in up] + [("TCP download", r) for r in down]
        raw, grid, failed = _http_series(run, page, b)
        b.add(HTTP_SERIES, raw, grid, "ms", RUNNER="HttpGetterRunner", AQMLAB_NOT_COMPLETED=failed,
              AQMLAB_FLOW=page)  # fmt: skip
        http_meta["HTTP_GETTER_WORKERS"] = _entry(run, page).get("workers")
    elif test == "rtt_fair4be":
        if len(up) > 4 or len(down) > 4 or len(probes) > 4:
            raise ValueError(
                f"Flent test 'rtt_fair4be' has 4 hosts; the run has {len(up)} up, {len(down)} down"
            )
        hosts = [f"aqmlab-host{i + 1}" for i in range(4)]
        tcp_names = [(f"TCP upload BE{i + 1} {hosts[i]}", r) for i, r in enumerate(up)]
        tcp_names += [(f"TCP download BE{i + 1} {hosts[i]}", r) for i, r in enumerate(down)]
        slots = [f"Ping (ms) ICMP{i + 1} {h}" for i, h in enumerate(hosts)]
        ping_names = list(zip(slots, probes))
    if test in VOIP_MIXIN_TESTS and (voip := _mixin_voip(run, flow)) is not None:
        _add_voip(run, voip, b)
        params["voip_host"] = _host_name(_entry(run, voip).get("host"))
    for name, row in tcp_names:
        raw, grid = _rate_series(run, int(row["flow"]), b)
        b.add(name, raw, grid, "Mbits/s", RUNNER="NetperfDemoRunner", CONG_CONTROL=row["cc"] or None,
              BYTES_SENT=int(row["bytes_sent"]), TCP_RETRANSMIT=int(row["retransmits"]),
              AQMLAB_FLOW=int(row["flow"]), AQMLAB_ECN=_ecn_mode(_entry(run, int(row["flow"])).get("ecn")))  # fmt: skip
    for name, fid in ping_names:
        raw, grid, loss = _ping_series(run, fid, b)
        b.add(name, raw, grid, "ms", RUNNER="PingRunner", PACKET_LOSS_RATE=loss, AQMLAB_FLOW=fid)
    dirs = [d for d in M.directions(_tables(run), meta) if run.tables.get("queue") is not None]
    if test == "qdisc-stats":
        if "down" not in dirs and not dirs:
            raise M.MissingTableError(f"run '{run.run_id}' has no 'queue' table; 'qdisc-stats' needs it")
        d = "down" if "down" in dirs else dirs[0]
        raw, grid = _qdisc_raw(*_queue_samples(run, d), b)
        b.set("qdisc-stats", raw, grid["delay"])
        b.series_meta["qdisc-stats"] = {"UNITS": "ms", "RUNNER": "TcRunner", "AQMLAB_DIR": d}
        for k, units in (("backlog_pkts", "packets"), ("backlog_bytes", "bytes"), ("dropped", "packets"),
                         ("ecn_mark", "packets"), ("delay", "ms")):  # fmt: skip
            name = f"qdisc-stats::{k}"
            b.add(name, [{"t": p["t"], "val": p[k]} for p in raw], grid[k], units)
        params["interface"] = d
    elif dirs:
        qhosts, ifaces = [], []
        for d in dirs:
            for iface, (raw, grid) in _qdisc_stats(run, d, b).items():
                h = f"aqmlab-{iface.replace('.', '-')}"
                qhosts.append(h)
                ifaces.append(iface)
                b.set(f"qdisc_stats_{h}", raw, grid["backlog_bytes"])
                b.series_meta[f"qdisc_stats_{h}"] = {"UNITS": "misc", "RUNNER": "TcRunner", "AQMLAB_DIR": d}
                for k in ("dropped", "ecn_mark"):
                    b.add(
                        f"qdisc_stats_{h}::{k}", [{"t": p["t"], "val": p[k]} for p in raw], grid[k], "packets"
                    )
        params["qdisc_stats_hosts"] = ",".join(qhosts)
        params["qdisc_stats_interfaces"] = ",".join(ifaces)
    scen = meta.get("scenario") or {}
    qd = {d: M.qdisc_name(_tables(run), meta, d) for d in M.directions(_tables(run), meta)}
    title = f"aqmlab {meta.get('name')} seed {meta.get('seed')} " + " ".join(
        f"{d}={q}" for d, q in qd.items()
    )
    metadata = {
        "NAME": test,
        "TITLE": title,
        "NOTE": f"exported by aqmlab from run {run.run_id} (simulated; synthetic epoch)",
        "TIME": _iso(T0),
        "T0": _iso(T0),
        "HOST": hosts[0],
        "HOSTS": hosts,
        "LOCAL_HOST": LOCAL_HOST,
        "LENGTH": duration,
        "TOTAL_LENGTH": duration,
        "STEP_SIZE": STEP,
        "TEST_PARAMETERS": params,
        "SERIES_META": b.series_meta,
        "FLENT_VERSION": FLENT_VERSION,
        "IP_VERSION": 4,
        "BATCH_NAME": None,
        "DATA_FILENAME": None,
        **http_meta,
        "AQMLAB": {
            "run_id": run.run_id,
            "seed": meta.get("seed"),
            "version": meta.get("version"),
            "qdisc": qd,
            "warmup_s": warmup_s,
            "scenario": scen.get("name", meta.get("name")),
            "absent_series": [n for n in slots if n not in dict(ping_names)],
        },
    }
    return {
        "version": 4,
        "metadata": metadata,
        "x_values": [float(x) for x in b.x],
        "results": b.results,
        "raw_values": b.raw,
    }


def notes(run, data: dict) -> list[str]:
    """How an export of ``run`` (``data``, from ``build``) differs from a run of its Flent test:
    the flows no series carries, the series the test has that the run cannot fill, and what the
    file records beyond or apart from the test's own series."""
    return [
        n for f in (_left_out, _absent, _stream_hosts, _subqueues, _ecn, _smackdown) for n in f(run, data)
    ]


def _left_out(run, data: dict) -> list[str]:
    """The flows no series carries and, for a voip flow left out, the VoIP tests that would carry
    it."""
    test = data["metadata"]["NAME"]
    carried = {m.get("AQMLAB_FLOW") for m in data["metadata"]["SERIES_META"].values()}
    rows = sorted(run.tables["flows"].select(["flow", "kind"]).to_pylist(), key=lambda r: r["flow"])
    left = [r for r in rows if r["flow"] not in carried]
    if not left:
        return []
    out = [
        f"left out (no series of '{test}' carries them): "
        + ", ".join(f"{r['kind']} flow {r['flow']}" for r in left)
    ]
    if any(r["kind"] == "voip" for r in left):
        up, down, _ = _classify(run)
        fits = {"voip": "the stream alone"}
        fits |= {t: f"with {nu} upload and {nd} download TCP flows" for (nu, nd), t in VOIP_TESTS.items()
                 if (nu, nd) == (len(up), len(down)) and t != "voip"}  # fmt: skip
        out.append(
            "Flent's VoIP tests carry a voip flow: " + "; ".join(f"--test {t} ({w})" for t, w in fits.items())
        )
    return out


def _absent(run, data: dict) -> list[str]:
    """The ping series the test runs that no probe stream of the run fills."""
    absent = data["metadata"]["AQMLAB"]["absent_series"]
    if not absent:
        return []
    return [
        f"absent (the run has no probe stream for them; Flent's '{data['metadata']['NAME']}' runs them and "
        + f"draws its plots without them): {', '.join(absent)}"
    ]


def _stream_hosts(run, data: dict) -> list[str]:
    """rtt_fair.inc runs one stream per host: a host with several flows is in HOSTS once per flow."""
    md = data["metadata"]
    hosts = md["HOSTS"]
    if md["NAME"] not in RTT_FAIR_VAR.values() or len(set(hosts)) == len(hosts):
        return []
    return [
        f"'{md['NAME']}' runs one stream per host: a host with several flows is listed once per flow in "
        + f"HOSTS ({', '.join(hosts)}) with the labels {md['TEST_PARAMETERS']['labels']}; Flent's fairness "
        + "index is over the streams, not the hosts"
    ]


def _subqueues(run, data: dict) -> list[str]:
    """The sub-queues exported as extra qdisc_stats hosts, or why they are not."""
    params = data["metadata"]["TEST_PARAMETERS"]
    pairs = zip(
        params.get("qdisc_stats_hosts", "").split(","), params.get("qdisc_stats_interfaces", "").split(",")
    )
    sub = [h for h, i in pairs if "." in i]
    if sub:
        return [
            f"sub-queues as extra qdisc_stats hosts: {', '.join(sub)} (their 'delay' is the mean sojourn of "
            + "the packets that left the sub-queue since the previous sample; the queue's is its backlog's "
            + "drain time at the link rate)"
        ]
    if (run.meta.get("subqueues") or {}) and "qdisc_stats_hosts" in params:
        return [
            "the sub-queues need the run's packets (record level 'packets'): only the whole queue is exported"
        ]
    return []


def _ecn(run, data: dict) -> list[str]:
    """The flows' ECN modes, which Flent does not record (the host's net.ipv4.tcp_ecn sets it)."""
    modes = [(m["AQMLAB_FLOW"], m["AQMLAB_ECN"]) for m in data["metadata"]["SERIES_META"].values()
             if m.get("AQMLAB_ECN", "off") != "off"]  # fmt: skip
    if not modes:
        return []
    return [
        "ECN, which Flent does not record, is in SERIES_META AQMLAB_ECN: "
        + ", ".join(f"flow {f} {m}" for f, m in modes)
    ]


def _smackdown(run, data: dict) -> list[str]:
    """For a pair of controllers Flent has a 'smackdown' test for: why the run is not that test."""
    md = data["metadata"]
    if md["NAME"] not in [t for t, _ in STREAM_TESTS.values()]:
        return []
    ccs = set(md["TEST_PARAMETERS"]["cc_algos"].split(","))
    tests = sorted(
        {SMACKDOWN[c] for c in ccs if c in SMACKDOWN} if "cubic" in ccs and len(ccs) == 2 else set()
    )
    return [
        f"Flent's '{t}' runs its pair of controllers 4 ways (BE and CS1 each way, with 4 pings); this run's "
        f"streams are '{md['NAME']}' with cc_algos {md['TEST_PARAMETERS']['cc_algos']}"
        for t in tests
    ]


def export_flent(
    run, test: str | None, out_path: str | Path, warmup_s: float | None = None, flow: int | None = None
) -> Path:
    """Write ``run`` as a Flent ``.flent.gz`` file for ``test`` (guessed when None); see ``build``
    for ``warmup_s`` and ``flow``."""
    return write(build(run, test, warmup_s, flow), out_path)


def write(data: dict, out_path: str | Path) -> Path:
    """Write the Flent data object ``data`` (``build``) to ``out_path`` (gzip, atomically)."""
    out_path = Path(out_path)
    data["metadata"]["DATA_FILENAME"] = out_path.name
    with files.whole(out_path) as tmp, gzip.GzipFile(tmp, "wb", mtime=0) as f:
        f.write(json.dumps(data, indent=2, sort_keys=True, allow_nan=False).encode("utf-8"))
    return out_path
