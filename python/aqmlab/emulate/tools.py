"""The traffic tools of a run (iperf3 for TCP and UDP, ping for probes): their command lines, their
servers and clients in the namespaces, the time they get to report, their versions."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from aqmlab.emulate.netns import CLIENT_IP, SERVER_IP, Namespaces, _sh
from aqmlab.emulate.plans import CC_KERNEL, SERVER_PORT, FlowPlan, iperf_block
from aqmlab.emulate.units import _bytes, _ns, _rate

IPERF_INTERVAL_S = 0.1
# Time the tools get after the scenario's end to report, at least (iperf3 exchanges its results
# over its control connection, behind whatever the bottleneck still holds: over a second for a
# full 1000-packet FIFO at 10 Mb/s); `grace_s` adds what the path's buffers and the senders'
# unsent data take to drain at the slowest rate.
GRACE_S = 5.0
# Bytes a sender may still hold unsent when the test ends (net.ipv4.tcp_wmem's default maximum,
# 4 MiB): with -R, iperf3's server finishes only once they are delivered.
SNDBUF_MAX = 4 << 20


def _tool_args(p: FlowPlan, json_file: str) -> list[str]:
    f = p.entry
    if p.kind == "ping":
        payload = _bytes(f["packet_size"]) - 28
        interval = _ns(f["interval"]) / 1e9
        count = max(1, int(p.length_s / interval))
        return ["ping", "-D", "-n", "-i", f"{interval:g}", "-s", str(payload), "-c", str(count), SERVER_IP]
    target, cport = (CLIENT_IP, p.server_port) if p.swapped else (SERVER_IP, p.client_port)
    args = ["iperf3", "-c", target, "-p", str(SERVER_PORT + p.flow), "--cport", str(cport)]
    args += ["-J", "--logfile", json_file, "--get-server-output", "-i", str(IPERF_INTERVAL_S)]
    if f.get("bytes") is not None:
        n = _bytes(f["bytes"])
        args += ["-n", str(n)] + (["-l", str(iperf_block(n))] if p.kind == "tcp" else [])
    else:
        args += ["-t", f"{p.length_s:g}"]
    if p.receiving_client:
        args.append("-R")
    if p.kind == "tcp":
        args += ["-C", CC_KERNEL[f["cc"]]]
    else:
        args += ["-u", "-b", str(_rate(f["rate"])), "-l", str(_bytes(f["packet_size"]) - 28)]
    return args


@dataclass
class Tools:
    """The tool processes of one run and where their reports go."""

    ns: Namespaces
    workdir: Path
    servers: list[subprocess.Popen] = field(default_factory=list)
    clients: dict[int, tuple[subprocess.Popen, float]] = field(default_factory=dict)

    def start_servers(self, plans: list[FlowPlan], extra: list[list[str]]) -> None:
        # each iperf3 server on the side its client does not run on (`FlowPlan.swapped`)
        ports = {side: [SERVER_PORT + p.flow for p in plans if p.kind != "ping" and _server_side(p) == side]
                 for side in ("c", "s")}  # fmt: skip
        for side, side_ports in ports.items():
            for port in side_ports:
                args = ["iperf3", "-s", "-1", "-J", "-i", str(IPERF_INTERVAL_S), "-p", str(port)]
                self.servers.append(self.ns.popen(side, args, stdout=subprocess.DEVNULL))
        for cmd in extra:
            self.servers.append(self.ns.popen("s", cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 5
        for side, side_ports in ports.items():
            while side_ports and time.monotonic() < deadline:
                listening = _sh("ss", "-Hltn", ns=self.ns.name(side), check=False).stdout
                if all(f":{port} " in listening for port in side_ports):
                    break
                time.sleep(0.02)

    def launch(self, p: FlowPlan, t0_ns: int) -> None:
        args = _tool_args(p, str(self.workdir / f"flow{p.flow}.json"))
        # ping reports on stdout: into a file, so a long run never fills a pipe
        with open(self.workdir / f"flow{p.flow}.txt", "w") as log:
            proc = self.ns.popen("s" if p.swapped else "c", args, stdout=log, stderr=subprocess.STDOUT)
        self.clients[p.flow] = (proc, (time.monotonic_ns() - t0_ns) / 1e9)

    def stop(self) -> None:
        for proc in [*self.servers, *(c for c, _ in self.clients.values())]:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _server_side(p: FlowPlan) -> str:
    """The namespace an iperf3 flow's server runs in: the server host's, or the client host's
    for a swapped flow."""
    return "c" if p.swapped else "s"


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


def _version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr).strip() else "unknown"
