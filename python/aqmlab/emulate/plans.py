"""A resolved scenario as tool runs (``plan``: one ``FlowPlan`` per flow), refusing by its key
what real tools and the kernel's TCP cannot do; the kernel's congestion controls."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aqmlab.emulate.units import _bytes, _ns
from aqmlab.scenario import ScenarioError

# Ports: iperf3 servers listen on SERVER_PORT + flow; the client side's data socket is bound to
# CLIENT_PORT + flow (iperf3 --cport), which is how the forwarder tells the flows apart.
SERVER_PORT = 5201
CLIENT_PORT = 40000
TOOLS = {"tcp": "iperf3", "udp": "iperf3", "ping": "ping"}
PROTO = {"tcp": 6, "udp": 17, "ping": 1}
# iperf3's client writes a 37-byte cookie on each data connection as it opens (src/iperf_api.c,
# COOKIE_SIZE; `iperf_create_streams`), before the test runs: a flow's data is what follows it.
IPERF3_COOKIE_B = 37
# Flow keys the emulator cannot honour with real tools: each one rejected by name.
UNSUPPORTED_FLOW_KEYS = {
    "hops": "per-flow routes (every flow crosses the whole path)",
    "on_off": "on/off periods",
    "first_write": "a held first write (iperf3 writes once its test starts)",
    "preamble": f"an application preamble (iperf3 writes its own {IPERF3_COOKIE_B}-byte cookie on each data connection)",
    "host_jitter": "a modelled host's timing noise (the emulated hosts are real and have their own)",
}


# ECN modes the kernel cannot be asked for per flow, and why.
ECN_NOT_EMULATED = {
    "l4s": "the kernel sets ECT(1) only under an L4S congestion control",
    "accecn": "the kernel negotiates AccECN only by the system-wide net.ipv4.tcp_ecn setting",
}


# TCP keys the kernel runs only at their default: (default, why).
TCP_KEYS_DEFAULT_ONLY = {
    "receiver_ecn": ("accecn", "the receiver is this host's own stack"),
    "data_ecn": ("negotiated", "Linux keeps a TCP socket's ECN bits its own: ip_sock_set_tos"),
}


# iperf3 writes a transfer (`-n`) in whole blocks (`-l`) and stops after the write that reaches
# the count, so with its default TCP block (128 KiB) a 100 kB transfer sends 131,072 bytes. A
# block is at most 1 MiB (iperf3 3.12 refuses a larger `-l`); below 1 KiB a transfer would be
# written a few bytes at a time.
IPERF_BLOCK_MAX = 1 << 20
IPERF_BLOCK_MIN = 1 << 10


def iperf_block(n: int) -> int | None:
    """The block size that makes iperf3 write exactly ``n`` bytes: the largest divisor of ``n``
    up to IPERF_BLOCK_MAX, None when it falls below IPERF_BLOCK_MIN."""
    if n <= IPERF_BLOCK_MAX:
        return n
    k = -(-n // IPERF_BLOCK_MAX)
    while n // k >= IPERF_BLOCK_MIN:
        if n % k == 0:
            return n // k
        k += 1
    return None


def _seconds(ns: int) -> float:
    return ns / 1e9


@dataclass
class FlowPlan:
    """One scenario flow as a tool invocation."""

    flow: int
    kind: str
    direction: str
    start_s: float
    length_s: float
    entry: dict

    @property
    def swapped(self) -> bool:
        """A finite upload runs with iperf3's roles swapped (its server on the client host, its
        client on the server host receiving with -R): iperf3 ends a sender-side client's test
        once the bytes are written into the socket, and the server then closes with data still
        in flight (the kernel resets the rest), while a receiving client ends it when the last
        byte has arrived."""
        return self.kind == "tcp" and self.direction == "up" and self.entry.get("bytes") is not None

    @property
    def client_port(self) -> int:
        """The flow's port on the client host's side (how the forwarder tells flows apart): the
        iperf3 client's `--cport`, or the swapped server's listening port."""
        if self.kind == "ping":
            return 0
        return SERVER_PORT + self.flow if self.swapped else CLIENT_PORT + self.flow

    @property
    def server_port(self) -> int:
        """The flow's port on the server host's side where the client-side one is shared (a
        swapped server's control and data connections): the swapped client's `--cport`; 0
        for any."""
        return CLIENT_PORT + self.flow if self.swapped else 0

    @property
    def receiving_client(self) -> bool:
        """Whether iperf3's client receives the data (-R)."""
        return self.direction == "down" or self.swapped

    @property
    def preamble_b(self) -> int:
        """The bytes the flow's data sender writes before its data: iperf3's cookie when the
        client sends (a receiving client writes it against the data: not the sender's)."""
        return IPERF3_COOKIE_B if self.kind == "tcp" and not self.receiving_client else 0


def kernel_ccs() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def default_cc(available: list[str]) -> str:
    """The congestion control each namespace starts its sockets with: one that never turns on
    the kernel's internal pacing. A socket keeps `sk_pacing_status` once a controller's init has
    set it (tcp_bbr.c bbr_init sets SK_PACING_NEEDED; tcp_cong.c
    tcp_reinit_congestion_control never clears it), and iperf3's server accepts a connection
    with the namespace's default before it applies the client's `-C`. With BBR as the default
    (a namespace inherits the host's), every CUBIC flow the server sends would be paced at
    tcp_update_pacing_rate's 120 % of cwnd/SRTT, which a host whose default is CUBIC does not
    do. A flow that asks for BBR still gets its pacing: bbr_init runs when `-C bbr` is applied
    to the established socket."""
    return next((cc for cc in ("cubic", "reno") if cc in available), available[0])


# aqmlab's `cc` names and the kernel's module names for the same algorithm.
CC_KERNEL = {"cubic": "cubic", "reno": "reno", "newreno": "reno", "bbr": "bbr"}


def _last_hops(topo: dict) -> list[str]:
    """The keys of each direction's last hop."""
    if "hops" not in topo:
        return [f"topology.{d}" for d in ("down", "up") if d in topo]
    last = {h.get("direction"): f"topology.hops[{i}]" for i, h in enumerate(topo["hops"])}
    return list(last.values())


def plan(resolved: dict) -> list[FlowPlan]:
    """The tool runs of a resolved scenario; ScenarioError naming the key for what real tools
    cannot do."""
    duration = _ns(resolved["duration"])
    topo = resolved["topology"]
    if topo.get("host_jitter") is not None:
        raise ScenarioError(
            f"topology.host_jitter: emulation does not support {UNSUPPORTED_FLOW_KEYS['host_jitter']}; remove the key"
        )
    for i, hop in enumerate(topo.get("hops", [])):
        if len(hop.get("hosts", [])) > 1:
            raise ScenarioError(
                f"topology.hops[{i}].hosts: emulation runs one client host; allowed: at most one host"
            )
    hops = {f"topology.hops[{i}]": h for i, h in enumerate(topo.get("hops", []))}
    hops.update({f"topology.{d}": topo[d] for d in ("down", "up") if d in topo})
    for key, hop in hops.items():
        if hop.get("local_sender"):
            raise ScenarioError(
                f"{key}.local_sender: emulation runs every qdisc in its forwarder, not in a sending "
                "host; allowed: false"
            )
        if isinstance(hop.get("delay"), list):
            raise ScenarioError(
                f"{key}.delay: a delay schedule is not emulated (the forwarder's pipes hold one "
                'delay); allowed: one delay such as "30ms"'
            )
        for k in ("delay_limit", "delay_jitter"):
            if hop.get(k) is not None:
                raise ScenarioError(f"{key}.{k}: emulation does not model netem's queue; remove the key")
    for key in _last_hops(topo):
        delay = hops[key].get("delay", "0s")
        if _ns(delay):
            raise ScenarioError(
                f"{key}.delay: {delay} after the last hop of a direction is not emulated; "
                "allowed: 0s (put the delay in topology.rtt)"
            )
    plans: list[FlowPlan] = []
    pings = 0
    available = kernel_ccs()
    for g, f in enumerate(resolved["flows"]):
        key = f"flows[{g}]"
        kind = f["kind"]
        if kind not in TOOLS:
            raise ScenarioError(
                f"{key}.kind: {kind!r} is not available in emulation; allowed: {', '.join(TOOLS)}"
            )
        for k, why in UNSUPPORTED_FLOW_KEYS.items():
            if f.get(k) is not None:
                raise ScenarioError(f"{key}.{k}: emulation does not support {why}; remove the key")
        ecn = f.get("ecn")
        if ecn in ECN_NOT_EMULATED:
            raise ScenarioError(
                f'{key}.ecn: "{ecn}" is not emulated ({ECN_NOT_EMULATED[ecn]}); allowed: false, true'
            )
        for k, (default, why) in TCP_KEYS_DEFAULT_ONLY.items():
            if f.get(k, default) != default:
                raise ScenarioError(
                    f'{key}.{k}: {f[k]!r} is not emulated ({why}); allowed: "{default}" (the default)'
                )
        start = f.get("start", 0)
        if not isinstance(start, (int, str)) or (isinstance(start, str) and start.startswith("uniform")):
            raise ScenarioError(
                f"{key}.start: {start!r} is not available in emulation; allowed: a fixed time"
            )
        if kind == "tcp":
            cc = CC_KERNEL.get(f["cc"])
            if cc is None or cc not in available:
                allowed = [a for a, k in CC_KERNEL.items() if k in available]
                raise ScenarioError(
                    f"{key}.cc: {f['cc']!r} is not available in emulation (this kernel has "
                    f"{', '.join(available)}); allowed: {', '.join(allowed)}"
                )
        if kind == "tcp" and f.get("bytes") is not None and iperf_block(_bytes(f["bytes"])) is None:
            raise ScenarioError(
                f"{key}.bytes: {f['bytes']} cannot be sent exactly by iperf3 (it writes whole blocks "
                f"of {IPERF_BLOCK_MIN}-{IPERF_BLOCK_MAX} bytes); allowed: up to {IPERF_BLOCK_MAX} bytes, "
                f"or a size with a divisor in that range"
            )
        if kind == "udp" and f.get("arrivals") != "cbr":
            raise ScenarioError(
                f"{key}.arrivals: {f['arrivals']!r} is not available in emulation; allowed: cbr"
            )
        if kind == "ping":
            pings += f["count"]
            if pings > 1:
                raise ScenarioError(f"{key}.count: emulation runs at most one ping flow; allowed: 1")
        start_ns = _ns(start)
        stop_ns = min(_ns(f["stop"]), duration) if f.get("stop") is not None else duration
        for _ in range(f["count"]):
            plans.append(
                FlowPlan(
                    len(plans), kind, f["direction"], _seconds(start_ns), _seconds(stop_ns - start_ns), f
                )
            )
    ecn = {bool(f.get("ecn")) for f in resolved["flows"] if f["kind"] == "tcp"}
    if len(ecn) > 1:
        raise ScenarioError(
            "flows[].ecn: emulation sets ECN per namespace (net.ipv4.tcp_ecn); allowed: the same ecn on every tcp flow"
        )
    return plans
