"""Shared by the property-based test (test_fuzz.py) and the long campaign
(bench/fuzz_scenarios.py): mutations of a valid scenario and the rule every answer must follow.

The rule (docs/architecture.md, principle 7): a scenario either validates, or raises ScenarioError whose one
line names the key that was changed (or a key under it); nothing else may escape."""

from __future__ import annotations

import datetime
import re

BASE = {
    "name": "fuzz",
    "duration": "2s",
    "seed": 1,
    "topology": {
        "rtt": "20ms",
        "down": {"rate": "10Mbps", "qdisc": "pfifo", "limit": "100p"},
        "up": {"rate": "10Mbps", "qdisc": "codel"},
    },
    "flows": [
        {"kind": "tcp", "direction": "down", "count": 2, "start": "0s"},
        {"kind": "udp", "direction": "up", "rate": "1Mbps"},
        {"kind": "ping", "interval": "100ms"},
    ],
    "record": {"level": "series", "interval": "100ms"},
}

KEYS = [
    "name", "duration", "seed", "description", "record.level", "record.interval",
    "topology.rtt", "topology.mtu", "topology.down.rate", "topology.down.limit", "topology.down.loss",
    "topology.down.qdisc", "topology.up.rate", "topology.up.qdisc", "topology.up.qdisc.target",
    "topology.up.qdisc.interval", "topology.up.device_queue", "topology.down.local_sender",
    "flows.0.kind", "flows.0.count", "flows.0.start", "flows.0.cc", "flows.0.bytes", "flows.0.iw",
    "flows.0.mss", "flows.0.direction", "flows.0.label", "flows.0.ecn", "flows.1.rate",
    "flows.1.packet_size", "flows.1.arrivals", "flows.2.interval", "flows.3", "topology", "flows",
    "record", "nosuch", "topology.down.nosuch", "flows.0.nosuch",
    "flows.0.cc_params", "flows.0.cc_params.target", "flows.0.hops", "flows.0.on_off", "flows.0.on_off.on",
    "flows.0.on_off.distribution", "flows.0.start.per", "flows.0.dscp", "flows.0.hystart", "flows.0.profile", "record.max_rows", "record.max_memory",
    "topology.wifi", "topology.wifi.stations", "topology.wifi.max_subframes", "topology.wifi.stations.0.mcs",
    "topology.down.wifi", "topology.up.wifi", "flows.0.station", "flows.2.kind", "topology.wifi.txq",
    "topology.wifi.txq_params", "topology.wifi.txq_params.target", "topology.wifi.scheduler",
    "flows.0.udp_socket", "flows.0.page", "flows.0.objects", "flows.0.workers", "flows.0.timeout", "flows.0.interval",
    "topology.down.shaper", "topology.down.htb_burst", "topology.down.htb_cburst", "topology.up.delay",
    "topology.up.delay_limit", "topology.up.delay_jitter",
]  # fmt: skip

STRINGS = [
    "", "0", "1", "-1", "abc", "10Mbps", "0Mbps", "1e30Mbps", "1ns", "0s", "-5s", "5", "1.5s",
    "1000p", "0p", "1p", "100KB", "1e400", "nan", "inf", "tcp", "udp", "ping", "cubic", "reno",
    "down", "up", "both", "codel", "pie", "fq_codel", "red", "codle", "packets", "series",
    "summary", "a/b", ".x", "x" * 300, "a\x00b", "ü", "\U0001f600", "1 s", "10 Mbps", "[1,2]",
    "ledbat", "tcp_lp", "nice", "flow", "group", "exponential", "rfc9406", "linux_3_14", "EF", "AF41", "CS8",
    "pfifo_fast", "voip", "laptop", "webpage", "small", "large", "htb",
]  # fmt: skip

OTHER = [
    0, 1, -1, 2**63, 2**64, -(2**64), 10**30, 0.0, -0.0, 1.5, -1.5, 1e308, float("nan"), float("inf"),
    True, False, [], [1, "a"], {}, {"kind": "codel"}, {"kind": "red", "min_th": 5}, {"a": {"b": 1}},
    ["down"], ["up", "down"], ["nosuch"], {"target": "25ms"}, {"on": "1s", "off": "1s"},
    {"uniform": ["0s", "1s"], "per": "flow"},
    ["56kB", "1kB"], ["0B"], ["1kB", -3],
    {"stations": [{"name": "laptop"}]}, [{"name": "laptop", "mcs": 40}], {"stations": []},
    datetime.date(1979, 5, 27), datetime.datetime(1979, 5, 27, 7, 32), datetime.time(7, 32),
]  # fmt: skip


def apply(sc: dict, path: str, value) -> dict:
    """A copy of ``sc`` with ``path`` set to ``value``, through the same ``set_key`` as --set."""
    from aqmlab.scenario import apply_overrides

    return apply_overrides(sc, {path: value})


def key_named(msg: str, path: str) -> bool:
    """Whether the one-line message names ``path``, an ancestor of it (down to its first two
    segments), or a key under it; list indices may be written ``flows[0]`` or ``flows.0``."""
    if "\n" in msg.strip():
        return False
    norm = re.sub(r"\[(\d+)\]", r".\1", msg)
    parts = path.split(".")
    return any(".".join(parts[:n]) in norm for n in range(len(parts), min(2, len(parts)) - 1, -1))


def check(sc: dict, paths: list[str]) -> str:
    """Validate ``sc`` (changed at ``paths``) as ``aqmlab validate`` does. Returns "ok" or
    "error"; raises AssertionError when the message names none of the changed keys (any other
    exception propagates as it would to the user)."""
    from aqmlab.scenario import ScenarioError, resolve

    try:
        resolve(sc)
        return "ok"
    except ScenarioError as e:
        assert any(key_named(str(e), p) for p in paths), f"{paths}: message names none of them: {e}"
        return "error"
