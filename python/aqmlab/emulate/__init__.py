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

Modules, one concern each: ``units`` (the scenario's times, sizes and rates as numbers),
``netns`` (the namespaces, their TUNs, the environment check, the stale ones removed), ``plans``
(the scenario as tool runs, what they cannot do refused by key), ``tools`` (iperf3 and ping:
their command lines, servers and clients), ``reports`` (the tools' reports into the tables),
``run`` (``emulate``: the forwarder's thread, the tools or a command, the result).
"""

from __future__ import annotations

from aqmlab.emulate.netns import (
    CLIENT_IP,
    DEBIAN_PACKAGES,
    IFF_NO_PI,
    IFF_TUN,
    KERNEL_COUNTERS,
    NS_RE,
    SERVER_IP,
    SYSCTL_RE,
    TUNSETIFF,
    EmulationError,
    Namespaces,
    check_environment,
    check_sysctls,
    remove_stale,
)
from aqmlab.emulate.plans import (
    CC_KERNEL,
    CLIENT_PORT,
    ECN_NOT_EMULATED,
    PROTO,
    SERVER_PORT,
    TOOLS,
    UNSUPPORTED_FLOW_KEYS,
    FlowPlan,
    default_cc,
    kernel_ccs,
    plan,
)
from aqmlab.emulate.reports import PING_LINE, apply_reports
from aqmlab.emulate.run import emulate
from aqmlab.emulate.tools import GRACE_S, IPERF_INTERVAL_S, SNDBUF_MAX, Tools, grace_s, run_flows

__all__ = [
    "CC_KERNEL",
    "CLIENT_IP",
    "CLIENT_PORT",
    "DEBIAN_PACKAGES",
    "ECN_NOT_EMULATED",
    "GRACE_S",
    "IFF_NO_PI",
    "IFF_TUN",
    "IPERF_INTERVAL_S",
    "KERNEL_COUNTERS",
    "NS_RE",
    "PING_LINE",
    "PROTO",
    "SERVER_IP",
    "SERVER_PORT",
    "SNDBUF_MAX",
    "SYSCTL_RE",
    "TOOLS",
    "TUNSETIFF",
    "UNSUPPORTED_FLOW_KEYS",
    "EmulationError",
    "FlowPlan",
    "Namespaces",
    "Tools",
    "apply_reports",
    "check_environment",
    "check_sysctls",
    "default_cc",
    "emulate",
    "grace_s",
    "kernel_ccs",
    "plan",
    "remove_stale",
    "run_flows",
]
