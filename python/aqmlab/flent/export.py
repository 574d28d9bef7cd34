"""The Flent data object of a run (``build``: its series by test, its metadata) and the
``.flent.gz`` file (``write``, ``export_flent``)."""

from __future__ import annotations

import datetime
import gzip
import json
import textwrap
from pathlib import Path
from typing import Any

from aqmlab import files
from aqmlab import metrics as M
from aqmlab.flent.match import (
    HTTP_TESTS,
    RTT_FAIR_VAR,
    STREAM_TESTS,
    SUPPORTED,
    VOIP_TESTS,
    _classify,
    _entry,
    guess_test,
)
from aqmlab.flent.qdisc import _qdisc_raw, _qdisc_stats, _queue_samples
from aqmlab.flent.series import STEP, T0, _add_voip, _Builder, _http_series, _ping_series, _rate_series
from aqmlab.flent.streams import (
    SERVER,
    _host_name,
    _mixin_voip,
    _need_count,
    _one_of,
    _one_way,
    _rrul_names,
    _rtt_fair_var,
    _stream_labels,
    _stream_params,
)

FLENT_VERSION = "2.3.0"
LOCAL_HOST = "aqmlab"
# Characters per line of the exported TITLE (_title)
TITLE_WIDTH = 40
# Tests whose conf includes netperf_definitions.inc, and with it voip_mixin.inc: the test parameter
# voip_host adds irtt's VoIP series beside the test's own.
VOIP_MIXIN_TESTS = ("rrul", "rrul_be", "tcp_nup", "tcp_ndown", "tcp_1up", "rtt_fair4be", "rtt_fair_var_up",
                    "rtt_fair_var_down")  # fmt: skip
HTTP_SERIES = "HTTP latency"


def _iso(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _title(text: str) -> str:
    """``text`` in lines of at most TITLE_WIDTH characters, so that Flent's plots show it whole:
    they put the file's TITLE under the plot's name as one centred line of the figure's title
    (plotters.py, _annotate_plot: ``figure.suptitle`` at 14 points on a 6.4-inch figure), which
    cuts a longer line at the figure's edges."""
    return "\n".join(textwrap.wrap(text, TITLE_WIDTH, break_on_hyphens=False))


def _ecn_mode(value: Any) -> str:
    """A flow's ``ecn`` key as its mode name (``true`` is classic, ``false`` off)."""
    return {True: "classic", False: "off", None: "off"}.get(value, value)


def build(run, test: str | None = None, warmup_s: float | None = None, flow: int | None = None) -> dict:
    """The Flent data object (a dict) for ``run``; see the package's docstring (``aqmlab.flent``)
    for the mapping. ``warmup_s``: samples before it are left out; None = the warm-up the run was
    summarised with. ``flow``: the voip or webpage flow a VoIP or HTTP test exports (None: the
    run's only one)."""
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
    hops = [h for h in M.hops(run.tables, meta) if run.tables.get("queue") is not None]
    if test == "qdisc-stats":
        if not hops:
            raise M.MissingTableError(f"run '{run.run_id}' has no 'queue' table; 'qdisc-stats' needs it")
        hop = "down" if "down" in hops else hops[0]
        raw, grid = _qdisc_raw(*_queue_samples(run, hop), b)
        b.set("qdisc-stats", raw, grid["delay"])
        b.series_meta["qdisc-stats"] = {"UNITS": "ms", "RUNNER": "TcRunner", "AQMLAB_DIR": hop}
        for k, units in (("backlog_pkts", "packets"), ("backlog_bytes", "bytes"), ("dropped", "packets"),
                         ("ecn_mark", "packets"), ("delay", "ms")):  # fmt: skip
            name = f"qdisc-stats::{k}"
            b.add(name, [{"t": p["t"], "val": p[k]} for p in raw], grid[k], units)
        params["interface"] = hop
    elif hops:
        qhosts, ifaces = [], []
        for hop in hops:
            for iface, (raw, grid) in _qdisc_stats(run, hop, b).items():
                h = f"aqmlab-{iface.replace('.', '-')}"
                qhosts.append(h)
                ifaces.append(iface)
                b.set(f"qdisc_stats_{h}", raw, grid["backlog_bytes"])
                b.series_meta[f"qdisc_stats_{h}"] = {"UNITS": "misc", "RUNNER": "TcRunner", "AQMLAB_DIR": hop}
                for k in ("dropped", "ecn_mark"):
                    b.add(
                        f"qdisc_stats_{h}::{k}", [{"t": p["t"], "val": p[k]} for p in raw], grid[k], "packets"
                    )
        params["qdisc_stats_hosts"] = ",".join(qhosts)
        params["qdisc_stats_interfaces"] = ",".join(ifaces)
    scen = meta.get("scenario") or {}
    qd = {h: M.qdisc_name(run.tables, meta, h) for h in M.hops(run.tables, meta)}
    title = _title(
        f"aqmlab {meta.get('name')} seed {meta.get('seed')} " + " ".join(f"{d}={q}" for d, q in qd.items())
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
