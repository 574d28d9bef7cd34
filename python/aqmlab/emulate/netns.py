"""The two network namespaces and their TUN devices: the environment an emulation needs (root,
/dev/net/tun, the programs), their set-up and removal, the namespaces a killed run left behind,
and the kernel's TCP counters and the TUNs' drops in them."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from aqmlab.storelock import pid_exists

CLIENT_IP = "10.199.0.1"
SERVER_IP = "10.199.0.2"
NS_RE = re.compile(r"^aqmlab-(\d+)-[cs]$")
# Debian packages of the programs whose name differs from their package's.
DEBIAN_PACKAGES = {"ip": "iproute2", "ping": "iputils-ping"}
TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
# Packets a TUN holds for the forwarder to read (its txqueuelen). A TUN drops what finds its ring
# full (drivers/net/tun.c `tun_net_xmit`: the skb is orphaned, then `ptr_ring_produce` fails ->
# tx_dropped), and the ring is the device's tx_queue_len, 500 for a TUN by default (tun.c
# `tun_setup`; a change resizes it, `tun_queue_resize`). The orphaning has already returned the
# socket's TCP Small Queues budget (`tcp_wfree`), so nothing holds the senders back: four bulk
# senders answering one ACK train at 100 Mbit/s overflowed 500 (validation/kernel/README.md,
# "Drops in the hosts' TUNs"). A real NIC stops its queue when its ring is full and the socket
# waits (TSQ); the model's hosts never drop (net::nic_departure). The ring's pointers cost 8 bytes
# each: 2^18 hold any window the kernel's senders reach here. What still overflows is reported
# (`Namespaces.tun_drops`).
TUN_RING_PACKETS = 1 << 18


# The kernel's TCP counters an emulated run reports (`Namespaces.tcp_counters`): retransmitted
# segments, timeouts, tail loss probes, spurious timeouts undone, SACK recoveries, and the
# reductions undone as spurious (tcp_input.c `tcp_try_undo_recovery`, `tcp_try_undo_partial`,
# `tcp_try_undo_dsack`, `tcp_try_undo_loss`) or by a tail loss probe that repaired nothing
# (`tcp_process_tlp_ack`: TCPLossProbeRecovery counts the probes that did repair a loss), and
# the D-SACK blocks sent for data below rcv_nxt and received (`tcp_dsack_set`, `tcp_check_dsack`),
# and the receivers' ACKs sent by the delayed-ACK timer (tcp_timer.c `tcp_delack_timer_handler`),
# the duplicates that put a receiver in quick-ACK mode (tcp_input.c `tcp_data_queue`,
# DelayedACKLost) and the ACKs SACK compression held (`__tcp_ack_snd_check`, TCPAckCompressed),
# and CUBIC's HyStart exits from slow start by each of its tests with the windows summed at them
# (tcp_cubic.c `hystart_update`: the ACK train's and the delay increase's).
KERNEL_COUNTERS = [
    "TcpRetransSegs",
    "TcpExtTCPTimeouts",
    "TcpExtTCPLossProbes",
    "TcpExtTCPLossProbeRecovery",
    "TcpExtTCPSpuriousRTOs",
    "TcpExtTCPSackRecovery",
    "TcpExtTCPFullUndo",
    "TcpExtTCPPartialUndo",
    "TcpExtTCPDSACKUndo",
    "TcpExtTCPLossUndo",
    "TcpExtTCPDSACKOldSent",
    "TcpExtTCPDSACKRecv",
    "TcpExtDelayedACKs",
    "TcpExtDelayedACKLost",
    "TcpExtTCPAckCompressed",
    "TcpExtTCPHystartTrainDetect",
    "TcpExtTCPHystartTrainCwnd",
    "TcpExtTCPHystartDelayDetect",
    "TcpExtTCPHystartDelayCwnd",
]


class EmulationError(Exception):
    """The machine cannot run an emulation (privileges, a missing tool): one line, exit 2."""


SYSCTL_RE = re.compile(r"^net\.ipv4\.[a-z0-9_]+$")
"""The kernel settings a run may change in its two namespaces (`sysctls`): the per-namespace TCP
and IPv4 ones under net.ipv4 (tcp_comp_sack_nr, tcp_early_retrans, tcp_frto, ...), never a
host-wide one."""


def check_sysctls(sysctls: dict[str, str]) -> None:
    """Each NAME=VALUE a run sets in its namespaces, checked before anything starts."""
    for name, value in sysctls.items():
        if not SYSCTL_RE.match(name):
            raise EmulationError(
                f"--sysctl: {name!r} is not allowed; allowed: a net.ipv4 setting (net.ipv4.NAME), "
                "which each network namespace has its own copy of"
            )
        if not value or any(c.isspace() for c in value):
            raise EmulationError(
                f"--sysctl: {name}={value!r} is not allowed; allowed: a value without spaces"
            )


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


ALLOWED_CC = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def allow_cc(name: str, allowed: Path = ALLOWED_CC) -> None:
    """Adds `name` to the host's list of congestion controls that any network namespace may
    make its default. Only the initial namespace may default to one outside that list
    (tcp_cong.c `tcp_set_default_congestion_control` answers EPERM otherwise), and a host whose
    own default is BBR may list only "reno bbr": the namespaces' CUBIC default would then be
    refused. The list is host-wide; an entry added is left in place (removing it could refuse a
    concurrent emulation), and adding one changes no socket's algorithm."""
    names = allowed.read_text().split()
    if name not in names:
        allowed.write_text(" ".join([*names, name]) + "\n")


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
    # Settings changed in both namespaces after the defaults above (`check_sysctls`).
    sysctls: dict[str, str] = field(default_factory=dict)
    pid: int = field(default_factory=os.getpid)
    fds: dict[str, int] = field(default_factory=dict)

    def name(self, side: str) -> str:
        return f"aqmlab-{self.pid}-{side}"

    def dev(self, side: str) -> str:
        """The TUN device of `side`."""
        return f"aq{side}{self.pid}"

    def __enter__(self):
        remove_stale()
        allow_cc(self.cc)
        try:
            for side, (me, peer) in {"c": (CLIENT_IP, SERVER_IP), "s": (SERVER_IP, CLIENT_IP)}.items():
                ns, dev = self.name(side), self.dev(side)
                _sh("ip", "netns", "add", ns)
                self.fds[side] = _open_tun(dev, self.mtu)
                _sh("ip", "link", "set", dev, "netns", ns)
                for cmd in [
                    ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"],
                    ["sysctl", "-qw", f"net.ipv4.tcp_ecn={1 if self.ecn else 2}"],
                    ["sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1"],
                    ["sysctl", "-qw", f"net.ipv4.tcp_congestion_control={self.cc}"],
                    ["ip", "link", "set", "lo", "up"],
                    ["ip", "link", "set", dev, "txqueuelen", str(TUN_RING_PACKETS)],
                    ["ip", "link", "set", dev, "mtu", str(self.mtu), "up"],
                    ["ip", "addr", "add", f"{me}/32", "dev", dev],
                    ["ip", "route", "add", f"{peer}/32", "dev", dev],
                ]:
                    _sh(*cmd, ns=ns)
                for name, value in self.sysctls.items():
                    done = _sh("sysctl", "-qw", f"{name}={value}", check=False, ns=ns)
                    if done.returncode:
                        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "refused"
                        raise EmulationError(f"--sysctl: {name}={value} was refused by the kernel: {why}")
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

    def tun_drops(self) -> dict[str, int]:
        """Packets each side's TUN dropped on the way from its host's stack to the forwarder (its
        tx_dropped: a full ring, `TUN_RING_PACKETS`), by side ("c", "s")."""
        out = {}
        for side in ("c", "s"):
            path = f"/sys/class/net/{self.dev(side)}/statistics/tx_dropped"
            done = _sh("cat", path, check=False, ns=self.name(side))
            out[side] = int(done.stdout.strip()) if done.stdout.strip().isdigit() else 0
        return out

    def popen(self, side: str, args: list[str], **kw) -> subprocess.Popen:
        kw = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **kw}
        return subprocess.Popen(["ip", "netns", "exec", self.name(side), *args], text=True, **kw)
