"""`aqmlab emulate`: the kernel's own TCP and real tools through aqmlab's path model, in real
time.

Two network namespaces, a client side and a server side, each hold one TUN device (a point-to-
point IPv4 link, no ARP, no IPv6). The forwarder (crates/aqmlab-emu, called through
`_core.emulate` in a thread of this process) holds the other end of both devices and moves
every packet across the scenario's path: the same qdisc, serialiser, delay and loss code the
simulator runs (docs/architecture.md, "Emulation"). The flows run as real tools (`TOOLS`):
iperf3 for TCP and UDP, ping for latency probes; `aqmlab emulate SCENARIO -- COMMAND` runs any
command on the client side instead (Flent, with iperf3 and irtt servers waiting on the server
side).

Names: namespaces `aqmlab-<pid>-c` / `aqmlab-<pid>-s`, devices `aqc<pid>` / `aqs<pid>`; every
start removes the namespaces (and the processes inside) of aqmlab processes that no longer
exist, so a kill -9 leaves nothing behind after the next start.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from aqmlab import _core, metrics, signals
from aqmlab.api import Result, _decode, recorded
from aqmlab.scenario import ScenarioError, check_values, resolve
from aqmlab.storelock import pid_exists

CLIENT_IP = "10.199.0.1"
SERVER_IP = "10.199.0.2"
NS_RE = re.compile(r"^aqmlab-(\d+)-[cs]$")
# Ports: iperf3 servers listen on SERVER_PORT + flow; the client side's data socket is bound to
# CLIENT_PORT + flow (iperf3 --cport), which is how the forwarder tells the flows apart.
SERVER_PORT = 5201
CLIENT_PORT = 40000
TOOLS = {"tcp": "iperf3", "udp": "iperf3", "ping": "ping"}
# Debian packages of the programs whose name differs from their package's.
DEBIAN_PACKAGES = {"ip": "iproute2", "ping": "iputils-ping"}
PROTO = {"tcp": 6, "udp": 17, "ping": 1}
IPERF_INTERVAL_S = 0.1
# Time the tools get after the scenario's end to report, at least (iperf3 exchanges its results
# over its control connection, behind whatever the bottleneck still holds: over a second for a
# full 1000-packet FIFO at 10 Mb/s); `grace_s` adds what the path's buffers and the senders'
# unsent data take to drain at the slowest rate.
GRACE_S = 5.0
# Bytes a sender may still hold unsent when the test ends (net.ipv4.tcp_wmem's default maximum,
# 4 MiB): with -R, iperf3's server finishes only once they are delivered.
SNDBUF_MAX = 4 << 20
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
# Flow keys the emulator cannot honour with real tools: each one rejected by name.
UNSUPPORTED_FLOW_KEYS = {
    "rtt": "per-flow RTTs (every flow shares the topology's rtt)",
    "rtt_spread": "per-flow RTTs (every flow shares the topology's rtt)",
    "hops": "per-flow routes (every flow crosses the whole path)",
    "on_off": "on/off periods",
}


# The kernel's TCP counters an emulated run reports (`Namespaces.tcp_counters`): retransmitted
# segments, timeouts, tail loss probes, spurious timeouts undone, SACK recoveries.
KERNEL_COUNTERS = [
    "TcpRetransSegs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPLossProbes",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPSackRecovery",
]


# ECN modes the kernel cannot be asked for per flow, and why.
ECN_NOT_EMULATED = {
    "l4s": "the kernel sets ECT(1) only under an L4S congestion control",
    "accecn": "the kernel negotiates AccECN only by the system-wide net.ipv4.tcp_ecn setting",
}


class EmulationError(Exception):
    """The machine cannot run an emulation (privileges, a missing tool): one line, exit 2."""


def _sh(*args: str, check: bool = True, ns: str | None = None) -> subprocess.CompletedProcess:
    cmd = ["ip", "netns", "exec", ns, *args] if ns else list(args)
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def check_environment(tools: list[str]) -> None:
    """Root (CAP_NET_ADMIN), /dev/net/tun, iproute2 and the tools the run needs."""
    if os.geteuid() != 0:
        raise EmulationError(
            "aqmlab emulate needs root (network namespaces and TUN devices); run it with sudo"
        )
    if not os.path.exists("/dev/net/tun"):
        raise EmulationError("aqmlab emulate needs /dev/net/tun (the tun kernel module)")
    for t in ["ip", *tools]:
        if shutil.which(t) is None:
            raise EmulationError(
                f"aqmlab emulate needs `{t}`; install it (Debian: apt-get install {DEBIAN_PACKAGES.get(t, t)})"
            )


def _namespaces() -> list[str]:
    listing = _sh("ip", "netns", "list", check=False).stdout
    return [line.split()[0] for line in listing.splitlines() if line.strip()]


def _remove_namespace(name: str) -> None:
    """Kills what runs in namespace `name`, then deletes it (its TUN goes with it)."""
    for pid in _sh("ip", "netns", "pids", name, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    _sh("ip", "netns", "del", name, check=False)


def _workdir(pid: int) -> Path:
    """Where the tools of process `pid`'s run write their reports."""
    return Path(tempfile.gettempdir()) / f"aqmlab-emulate-{pid}"


def remove_stale() -> list[str]:
    """Removes the namespaces and tool report directories of aqmlab processes that are gone
    (after a kill -9)."""
    stale = [n for n in _namespaces() if (m := NS_RE.match(n)) and not pid_exists(int(m.group(1)))]
    for n in stale:
        _remove_namespace(n)
    for d in Path(tempfile.gettempdir()).glob("aqmlab-emulate-*"):
        pid = d.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not pid_exists(int(pid)):
            shutil.rmtree(d, ignore_errors=True)
    return stale


def _open_tun(name: str, mtu: int) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


@dataclass
class Namespaces:
    """The two namespaces and their TUNs; a context manager that always removes them."""

    mtu: int = 1500
    ecn: bool = False
    # Each namespace's net.ipv4.tcp_congestion_control (`default_cc`).
    cc: str = "cubic"
    pid: int = field(default_factory=os.getpid)
    fds: dict[str, int] = field(default_factory=dict)

    def name(self, side: str) -> str:
        return f"aqmlab-{self.pid}-{side}"

    def __enter__(self):
        remove_stale()
        try:
            for side, (me, peer) in {"c": (CLIENT_IP, SERVER_IP), "s": (SERVER_IP, CLIENT_IP)}.items():
                ns, dev = self.name(side), f"aq{side}{self.pid}"
                _sh("ip", "netns", "add", ns)
                self.fds[side] = _open_tun(dev, self.mtu)
                _sh("ip", "link", "set", dev, "netns", ns)
                for cmd in [
                    ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
                    ["sysctl", "-qw", f"net.ipv4.tcp_ecn={1 if self.ecn else 2}"],
                    ["sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"],
                    ["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={self.cc}"],
                    ["ip", "link", "set", "lo", "up"],
                    ["ip", "link", "set", dev, "mtu", str(self.mtu), "up"],
                    ["ip", "addr", "add", f"{me}/32", "dev", dev],
                    ["ip", "route", "add", f"{peer}/32", "dev", dev],
                ]:
                    _sh(*cmd, ns=ns)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for side in ("c", "s"):
            _remove_namespace(self.name(side))
            fd = self.fds.pop(side, None)
            if fd is not None:
                os.close(fd)

    def tcp_counters(self) -> dict[str, int]:
        """The kernel's TCP counters (`KERNEL_COUNTERS`) summed over both namespaces: each
        namespace counts its own sockets (/proc/net/netstat's TcpExt and /proc/net/snmp's Tcp
        lines, as `nstat` reads them)."""
        total = dict.fromkeys(KERNEL_COUNTERS, 0)
        for side in ("c", "s"):
            for path in ("/proc/net/netstat", "/proc/net/snmp"):
                lines = _sh("cat", path, check=False, ns=self.name(side)).stdout.splitlines()
                for names, values in zip(lines[::2], lines[1::2]):
                    prefix = names.split(":", 1)[0]
                    for k, v in zip(names.split()[1:], values.split()[1:]):
                        key = f"{prefix}{k}"
                        if key in total and v.lstrip("-").isdigit():
                            total[key] += int(v)
        return total

    def popen(self, side: str, args: list[str], **kw) -> subprocess.Popen:
        kw = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kw}
        return subprocess.Popen(["ip", "netns", "exec", self.name(side), *args], text=True, **kw)


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
    def client_port(self) -> int:
        return 0 if self.kind == "ping" else CLIENT_PORT + self.flow


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
        for k in ("shaper", "delay_limit", "delay_jitter"):
            if hop.get(k) is not None:
                raise ScenarioError(
                    f"{key}.{k}: emulation does not model HTB or netem's queue; remove the key"
                )
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
        if f.get("receiver_ecn", "accecn") != "accecn":
            raise ScenarioError(
                f"{key}.receiver_ecn: {f['receiver_ecn']!r} is not emulated (the receiver is this "
                'host\'s own stack); allowed: "accecn" (the default)'
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


_UNIT_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _ns(value) -> int:
    """A resolved time ("50ms", 30, "1.5s") in ns."""
    if isinstance(value, (int, float)):
        return round(value * 1e9)
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(ns|us|ms|s)\s*", str(value))
    if not m:
        raise ScenarioError(f"{value!r} is not a time")
    return round(float(m.group(1)) * _UNIT_NS[m.group(2)])


def _tool_args(p: FlowPlan, json_file: str) -> list[str]:
    f = p.entry
    if p.kind == "ping":
        payload = _bytes(f["packet_size"]) - 28
        interval = _ns(f["interval"]) / 1e9
        count = max(1, int(p.length_s / interval))
        return ["ping", "-D", "-n", "-i", f"{interval:g}", "-s", str(payload), "-c", str(count), SERVER_IP]
    args = ["iperf3", "-c", SERVER_IP, "-p", str(SERVER_PORT + p.flow), "--cport", str(p.client_port)]
    args += ["-J", "--logfile", json_file, "--get-server-output", "-i", str(IPERF_INTERVAL_S)]
    if f.get("bytes") is not None:
        args += ["-n", str(_bytes(f["bytes"]))]
    else:
        args += ["-t", f"{p.length_s:g}"]
    if p.direction == "down":
        args.append("-R")
    if p.kind == "tcp":
        args += ["-C", CC_KERNEL[f["cc"]]]
    else:
        args += ["-u", "-b", str(_rate(f["rate"])), "-l", str(_bytes(f["packet_size"]) - 28)]
    return args


def _bytes(v) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMG]?)i?B?\s*", str(v))
    return round(float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]) if m else int(v)


def _rate(v) -> int:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kKMG]?)bps\s*", str(v))
    return (
        round(float(m.group(1)) * {"": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)])
        if m
        else int(v)
    )


@dataclass
class Tools:
    """The tool processes of one run and where their reports go."""

    ns: Namespaces
    workdir: Path
    servers: list[subprocess.Popen] = field(default_factory=list)
    clients: dict[int, tuple[subprocess.Popen, float]] = field(default_factory=dict)

    def start_servers(self, plans: list[FlowPlan], extra: list[list[str]]) -> None:
        ports = [SERVER_PORT + p.flow for p in plans if p.kind != "ping"]
        for port in ports:
            self.servers.append(
                self.ns.popen(
                    "s",
                    ["iperf3", "-s", "-1", "-J", "-i", str(IPERF_INTERVAL_S), "-p", str(port)],
                    stdout=subprocess.DEVNULL,
                )
            )
        for cmd in extra:
            self.servers.append(self.ns.popen("s", cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 5
        while ports and time.monotonic() < deadline:
            listening = _sh("ss", "-Hltn", ns=self.ns.name("s"), check=False).stdout
            if all(f":{port} " in listening for port in ports):
                return
            time.sleep(0.02)

    def launch(self, p: FlowPlan, t0_ns: int) -> None:
        args = _tool_args(p, str(self.workdir / f"flow{p.flow}.json"))
        # ping reports on stdout: into a file, so a long run never fills a pipe
        with open(self.workdir / f"flow{p.flow}.txt", "w") as log:
            proc = self.ns.popen("c", args, stdout=log, stderr=subprocess.STDOUT)
        self.clients[p.flow] = (proc, (time.monotonic_ns() - t0_ns) / 1e9)

    def stop(self) -> None:
        for proc in [*self.servers, *(c for c, _ in self.clients.values())]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def grace_s(resolved: dict, plans: list[FlowPlan]) -> float:
    """How long after the scenario's end the tools may take to report: `GRACE_S`, plus, per
    direction, every hop's full buffer and each TCP sender's unsent data drained at that
    direction's slowest rate. Only a cap: tools that finish sooner end the wait."""
    topo = resolved["topology"]
    hops = topo.get("hops") or [dict(topo[d], direction=d) for d in ("down", "up") if d in topo]
    mtu = _bytes(topo.get("mtu", 1500))
    extra = 0.0
    for d in ("down", "up"):
        chain = [h for h in hops if h.get("direction", d) == d]
        rates = [_rate(r) for h in chain for r in _rates_of(h.get("rate"))]
        slowest = min((r for r in rates if r > 0), default=0)
        if not slowest:
            continue
        held = sum(_limit_bytes(h.get("limit"), mtu) for h in chain)
        held += SNDBUF_MAX * sum(1 for p in plans if p.kind == "tcp" and p.direction == d)
        extra = max(extra, held * 8 / slowest)
    return GRACE_S + extra


def _rates_of(rate) -> list:
    """A hop's rate values: one, or each step's of a schedule."""
    if rate is None:
        return []
    return [step[1] for step in rate] if isinstance(rate, list) else [rate]


def _limit_bytes(limit, mtu: int) -> int:
    if limit is None:
        return 0
    m = re.fullmatch(r"\s*(\d+)\s*p\s*", str(limit))
    return int(m.group(1)) * mtu if m else _bytes(limit)


def run_flows(plans: list[FlowPlan], tools: Tools, t0_ns: int, end_s: float, grace: float = GRACE_S) -> None:
    """Starts each tool at its flow's start time and waits for them (or the end plus grace)."""
    for p in sorted(plans, key=lambda p: p.start_s):
        delay = p.start_s - (time.monotonic_ns() - t0_ns) / 1e9
        if delay > 0:
            time.sleep(delay)
        tools.launch(p, t0_ns)
    deadline = t0_ns / 1e9 + end_s + grace
    for proc, _ in tools.clients.values():
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic_ns() / 1e9))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _iperf_report(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def apply_reports(tables: dict, plans: list[FlowPlan], tools: Tools, duration_ns: int) -> list[str]:
    """Fills the `flows`, `flow_series` and `probes` tables from the tools' reports; returns
    problems (a tool that failed) as lines for the run's metadata."""
    problems: list[str] = []
    rows = tables["flows"].to_pylist()
    series: list[dict] = []
    probes: list[dict] = []
    for p in plans:
        _, launched_s = tools.clients[p.flow]
        row = rows[p.flow]
        row["start_ns"] = round(launched_s * 1e9)
        if p.kind == "ping":
            probes += _ping_probes(p, (tools.workdir / f"flow{p.flow}.txt").read_text(), launched_s)
            continue
        rep = _iperf_report(tools.workdir / f"flow{p.flow}.json")
        if rep is None or "error" in rep:
            problems.append(f"flow {p.flow}: iperf3 failed: {rep.get('error') if rep else 'no report'}")
            continue
        client_side = rep
        server_side = rep.get("server_output_json") or {}
        # the receiver is the server for up flows, the client for down flows (-R)
        sender, receiver = (client_side, server_side) if p.direction == "up" else (server_side, client_side)
        _fill_row(row, p, rep.get("end", {}))
        series += _series(p, sender, receiver, launched_s, duration_ns)
    tables["flows"] = pa.Table.from_pylist(rows, schema=tables["flows"].schema)
    tables["flow_series"] = pa.Table.from_pylist(series, schema=tables["flow_series"].schema)
    tables["probes"] = pa.Table.from_pylist(probes, schema=tables["probes"].schema)
    return problems


def _fill_row(row: dict, p: FlowPlan, end: dict) -> None:
    """The flow's totals from the client's report, which holds both ends' (iperf3 exchanges
    them): the sender's bytes and retransmissions (tcp_info.tcpi_total_retrans), the
    receiver's bytes."""
    if p.kind == "tcp":
        sent, got = end.get("sum_sent", {}), end.get("sum_received", {})
        row["bytes_sent"] = int(sent.get("bytes", 0))
        row["retransmits"] = int(sent.get("retransmits", 0) or 0)
        row["bytes_delivered"] = int(got.get("bytes", 0))
    else:
        s = end.get("sum", {})
        row["packets_sent"] = int(s.get("packets", 0))
        row["bytes_sent"] = int(s.get("bytes", 0))
        row["packets_received"] = max(0, int(s.get("packets", 0)) - int(s.get("lost_packets", 0)))
        row["bytes_delivered"] = round(int(s.get("bytes", 0)) * (1 - float(s.get("lost_percent", 0)) / 100))


def _series(p: FlowPlan, sender: dict, receiver: dict, launched_s: float, duration_ns: int) -> list[dict]:
    """flow_series rows from the tools' 0.1 s intervals: delivered bytes from the receiver,
    cwnd and RTT from the sender (Linux tcp_info via iperf3)."""
    out = []
    delivered = sent = 0
    s_iv = sender.get("intervals", [])
    for k, iv in enumerate(receiver.get("intervals", [])):
        st = iv["streams"][0]
        delivered += int(st["bytes"])
        t_ns = round((launched_s + st["end"]) * 1e9)
        if t_ns > duration_ns:
            break
        snd = s_iv[k]["streams"][0] if k < len(s_iv) else {}
        sent += int(snd.get("bytes", 0))
        out.append(
            {
                "t_ns": t_ns,
                "flow": p.flow,
                "delivered_bytes": delivered,
                "sent_bytes": sent,
                "cwnd_bytes": int(snd.get("snd_cwnd", 0)),
                "srtt_ns": int(snd.get("rtt", 0)) * 1000,
            }
        )
    return out


PING_LINE = re.compile(r"^\[(\d+\.\d+)\] .*icmp_seq=(\d+) .*time=([0-9.]+) ms")


def _ping_probes(p: FlowPlan, text: str, launched_s: float) -> list[dict]:
    """One probe per echo request ping sent: the reply's RTT from ping's own report; send
    times from the reply's timestamp (-D) minus the RTT, on the run's clock."""
    offset = time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC)
    m_tx = re.search(r"(\d+) packets transmitted", text)
    sent = int(m_tx.group(1)) if m_tx else 0
    interval = _ns(p.entry["interval"])
    replies = {}
    for line in text.splitlines():
        m = PING_LINE.match(line)
        if m:
            seq, rtt_ns = int(m.group(2)), round(float(m.group(3)) * 1e6)
            replies[seq] = (round((float(m.group(1)) - offset) * 1e9) - rtt_ns, rtt_ns)
    rows = []
    for seq in range(1, sent + 1):
        t_send, rtt = replies.get(seq, (round(launched_s * 1e9) + (seq - 1) * interval, None))
        rows.append(
            {
                "flow": p.flow,
                "seq": seq - 1,
                "t_send_ns": max(0, t_send - _T0["ns"]),
                "rtt_ns": rtt,
                "owd_up_ns": None,
                "owd_down_ns": None,
                "lost": rtt is None,
                "lost_up": None,  # ping does not tell which way a probe was lost
            }
        )
    return rows


# The run's time 0 on CLOCK_MONOTONIC, for converting tool timestamps.
_T0 = {"ns": 0}


def _kernel() -> str:
    u = os.uname()
    return f"{u.sysname} {u.release}"


def _version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr).strip() else "unknown"


def emulate(
    sc: dict,
    seed: int | None = None,
    command: list[str] | None = None,
    warmup_s: float = 0.0,
    realtime: bool = True,
) -> tuple[Result, int | None]:
    """Runs scenario `sc` in real time through the emulator. With `command`, runs it on the
    client side instead of the scenario's flows (for as long as it takes) and returns its exit
    status too. Raises ScenarioError (a key emulation cannot honour) and EmulationError."""
    check_values(sc)
    resolved = resolve(sc, seed)
    plans = [] if command else plan(resolved)
    tools_needed = sorted({TOOLS[p.kind] for p in plans})
    if command and shutil.which(command[0]) is None:
        raise ScenarioError(
            f"COMMAND: {command[0]!r} was not found; allowed: a program on PATH or a path to one"
        )
    check_environment(tools_needed)
    if command:
        # the command runs instead of the scenario's flows, for as long as it takes; the
        # recording covers the scenario's duration (or the command's run time if shorter)
        sc = {**sc, "flows": []}
        resolved = resolve(sc, seed)
    ecn = any(f.get("ecn") for f in resolved["flows"] if f["kind"] == "tcp")
    classes = [[PROTO[p.kind], p.client_port, p.flow] for p in plans]
    end_s = _ns(resolved["duration"]) / 1e9
    workdir = _workdir(os.getpid())
    workdir.mkdir(parents=True, exist_ok=True)
    if not os.environ.get("AQMLAB_KEEP_TOOL_REPORTS"):
        # also after Ctrl-C or SIGTERM; after a kill -9 the next start removes it
        atexit.register(shutil.rmtree, workdir, True)
    status = None
    outcome: dict = {}
    if threading.current_thread() is threading.main_thread():
        # SIGTERM cleans up like Ctrl-C does (kill -9 is left to the next start)
        signal.signal(signal.SIGTERM, signals.interrupt)
    mtu = _bytes(resolved["topology"].get("mtu", 1500))
    with Namespaces(mtu=mtu, ecn=ecn, cc=default_cc(kernel_ccs())) as ns:
        tools = Tools(ns, workdir)
        extra = [["iperf3", "-s"], ["irtt", "server"]] if command else []
        extra = [c for c in extra if shutil.which(c[0])]
        tools.start_servers(plans, extra)
        stop_r, stop_w = os.pipe()
        t0 = time.monotonic_ns()
        _T0["ns"] = t0

        def forwarder() -> None:
            try:
                outcome["result"] = _core.emulate(
                    json.dumps(sc), seed, ns.fds["c"], ns.fds["s"], stop_r, t0, json.dumps(classes), realtime
                )
            except Exception as e:  # noqa: BLE001 (re-raised in the main thread)
                outcome["error"] = e

        thread = threading.Thread(target=forwarder, name="aqmlab-emulator")
        thread.start()
        try:
            if command:
                env = {
                    **os.environ,
                    "AQMLAB_SERVER": SERVER_IP,
                    "AQMLAB_CLIENT": CLIENT_IP,
                    "AQMLAB_SERVER_NS": ns.name("s"),
                }
                status = subprocess.run(
                    ["ip", "netns", "exec", ns.name("c"), *command], check=False, env=env
                ).returncode
            else:
                run_flows(plans, tools, t0, end_s, grace_s(resolved, plans))
                remaining = t0 / 1e9 + end_s - time.monotonic_ns() / 1e9
                if remaining > 0:
                    time.sleep(remaining)
        finally:
            os.write(stop_w, b"x")
            thread.join()
            os.close(stop_r)
            os.close(stop_w)
            tools.stop()
            counters = ns.tcp_counters()
    if "error" in outcome:
        raise outcome["error"]
    batches, meta_json = outcome["result"]
    meta = json.loads(meta_json)
    tables = {name: _decode(b) for name, b in batches.items()}
    problems = [] if command else apply_reports(tables, plans, tools, meta["duration_ns"])
    if not os.environ.get("AQMLAB_KEEP_TOOL_REPORTS"):
        shutil.rmtree(workdir, ignore_errors=True)
    meta["emulated"] = {
        "kernel": _kernel(),
        "tools": {t: _version([t, "--version"] if t != "ping" else ["ping", "-V"]) for t in tools_needed},
        "command": command,
        "problems": problems,
        "tcp": "the kernel's own TCP: only cc and ecn of the flow keys apply",
        "default_cc": default_cc(kernel_ccs()),
        "kernel_counters": counters,
    }
    if command:
        meta["emulated"]["exit_status"] = status
    tables = recorded(tables, meta["record"]["level"])
    return Result(tables, meta, metrics.summarize(tables, meta, warmup_s=warmup_s)), status
