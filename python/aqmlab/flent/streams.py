"""Which flow each of a test's series carries: the flows a test needs (and the errors when the run
has others), the series names of the rrul-shaped and rtt_fair tests, the hosts and Flent's
per-stream test parameters."""

from __future__ import annotations

from aqmlab.flent.match import STREAM_TESTS, _entry, _hosts, _kind_flows, _voip_flows

SERVER = "aqmlab-server"

RRUL_CLASSES = ("BE", "BK", "CS5", "EF")
RRUL_PINGS = ("Ping (ms) ICMP", "Ping (ms) UDP BE", "Ping (ms) UDP BK", "Ping (ms) UDP EF")
RRUL_BE_CLASSES = ("BE", "BE2", "BE3", "BE4")
RRUL_BE_PINGS = ("Ping (ms) ICMP", "Ping (ms) UDP BE1", "Ping (ms) UDP BE2", "Ping (ms) UDP BE3")


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


def _mixin_voip(run, flow: int | None) -> int | None:
    """The voip flow a test with voip_mixin.inc carries: ``flow`` when it is one, else the run's
    only one (None when it has none or several)."""
    ids = _voip_flows(run)
    if flow in ids:
        return flow
    return ids[0] if len(ids) == 1 else None


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
