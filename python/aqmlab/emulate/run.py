"""One emulated run (``emulate``): the namespaces, the forwarder in a thread of this process, the
tools or a command, and the result assembled from the forwarder's tables and the tools' reports."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import threading
import time

from aqmlab import _core, metrics, signals
from aqmlab.api import Result, recorded
from aqmlab.emulate.netns import (
    CLIENT_IP,
    SERVER_IP,
    TUN_RING_PACKETS,
    Namespaces,
    _workdir,
    check_environment,
    check_sysctls,
)
from aqmlab.emulate.plans import PROTO, TOOLS, default_cc, kernel_ccs, plan
from aqmlab.emulate.reports import _T0, apply_reports
from aqmlab.emulate.tools import Tools, _version, grace_s, run_flows
from aqmlab.emulate.units import _bytes, _ns
from aqmlab.runtables import RunTables
from aqmlab.scenario import ScenarioError, check_values, resolve


def _kernel() -> str:
    u = os.uname()
    return f"{u.sysname} {u.release}"


def _host() -> str:
    """The processor the hosts' TCP and the emulator ran on: the kernel's queues follow the
    hosts' timing, so runs on two machines can differ (validation/kernel/README.md)."""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        model = "?"
    return f"{model}, {os.cpu_count()} CPUs"


def emulate(
    sc: dict,
    seed: int | None = None,
    command: list[str] | None = None,
    warmup_s: float = 0.0,
    realtime: bool = True,
    sysctls: dict[str, str] | None = None,
) -> tuple[Result, int | None]:
    """Runs scenario `sc` in real time through the emulator. With `command`, runs it on the
    client side instead of the scenario's flows (for as long as it takes) and returns its exit
    status too. `sysctls` sets kernel settings (net.ipv4.NAME: value) in both hosts' namespaces,
    e.g. to switch a mechanism of the kernel's TCP off as the model's keys do. Raises
    ScenarioError (a key emulation cannot honour) and EmulationError."""
    sysctls = dict(sysctls or {})
    check_sysctls(sysctls)
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
    classes = [[PROTO[p.kind], p.client_port, p.server_port, p.flow] for p in plans]
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
    with Namespaces(mtu=mtu, ecn=ecn, cc=default_cc(kernel_ccs()), sysctls=sysctls) as ns:
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
            tun_drops = ns.tun_drops()
    if "error" in outcome:
        raise outcome["error"]
    batches, meta_json = outcome["result"]
    meta = json.loads(meta_json)
    # the tools' reports replace three tables: the codes of the core's are not kept
    tables = dict(RunTables.decoded(batches))
    problems = [] if command else apply_reports(tables, plans, tools, meta["duration_ns"])
    problems += [
        f"the {'client' if side == 'c' else 'server'} host's TUN dropped {n} packets before the emulated path (its ring of "
        f"{TUN_RING_PACKETS} packets was full: the forwarder read too slowly)"
        for side, n in tun_drops.items()
        if n
    ]
    if not os.environ.get("AQMLAB_KEEP_TOOL_REPORTS"):
        shutil.rmtree(workdir, ignore_errors=True)
    meta["emulated"] = {
        "kernel": _kernel(),
        "host": _host(),
        "tools": {t: _version([t, "--version"] if t != "ping" else ["ping", "-V"]) for t in tools_needed},
        "command": command,
        "problems": problems,
        "tcp": "the kernel's own TCP: only cc and ecn of the flow keys apply",
        "default_cc": default_cc(kernel_ccs()),
        "sysctls": sysctls,
        "kernel_counters": counters,
        "tun_drops": tun_drops,
    }
    if command:
        meta["emulated"]["exit_status"] = status
    tables = RunTables(recorded(tables, meta["record"]["level"]))
    return Result(tables, meta, metrics.summarize(tables, meta, warmup_s=warmup_s)), status
