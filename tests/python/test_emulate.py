"""`aqmlab emulate` for real: the kernel's TCP, iperf3 and ping between two namespaces through
the forwarder. Each run lasts a few seconds. Expected values come from the configured path (the
rate, the base RTT, serialisation times), from invariants (packet conservation per hop, every
drop of a single TCP flow is a retransmission the kernel counts), and from the kernel (a bad CE
checksum would make it discard the packets). Needs root, iproute2, iperf3 and ping
(scripts/test.sh installs them); skipped otherwise. Timing figures are in bench/emulate.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import aqmlab
from aqmlab import emulate as emu
from aqmlab import store
from aqmlab.api import run_dict
from aqmlab.cli import app
from aqmlab.emulate import netns
from aqmlab.emulate.plans import iperf_block
from aqmlab.scenario import ScenarioError, resolve

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "validation" / "kernel"))
import compare as kernel_compare
import matrix as kernel_matrix
import run as kernel_run

runner = CliRunner()
ROOT = os.geteuid() == 0
TOOLS = all(shutil.which(t) for t in ("ip", "iperf3", "ping"))
needs_root = pytest.mark.skipif(
    not (ROOT and TOOLS and os.path.exists("/dev/net/tun")),
    reason="emulation needs root, /dev/net/tun, iproute2, iperf3 and ping (scripts/test.sh installs them as root)",
)


def scenario(tmp_path: Path, down: str, flows: str, duration: str = "3s", name: str = "emu") -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(
        f"""
name = "{name}"
duration = "{duration}"
[topology]
rtt = "50ms"
down = {down}
up = {{ rate = "10Mbps", qdisc = "pfifo", limit = "1000p" }}
{flows}
"""
    )
    return p


PING = '[[flows]]\nkind = "ping"\ninterval = "50ms"\n'
BULK = '[[flows]]\nkind = "tcp"\ndirection = "down"\ncc = "cubic"\n'


def emulate_json(args: list[str]) -> dict:
    res = runner.invoke(app, ["emulate", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@needs_root
def test_unloaded_ping_sees_the_configured_path(tmp_path: Path):
    sc = scenario(tmp_path, '{ rate = "10Mbps", qdisc = "pfifo", limit = "100p" }', PING, "2s")
    s = emulate_json([str(sc), "--out", str(tmp_path / "r")])
    run = store.load_run(Path(s["run_dir"]))
    rtt = run.tables["probes"].to_pandas()
    assert not rtt["lost"].any()
    # 84-byte echo request and reply: 67.2 us of serialisation each way at 10 Mb/s on top of the
    # 50 ms of propagation. Nothing can come back sooner (ping prints 0.1 ms steps, rounding
    # down by at most 0.05 ms); an unloaded path adds little more (a loose bound: how little
    # depends on the machine's load, bench/emulate.py measures it).
    floor_ms = 50 + 2 * 84 * 8 / 10e6 * 1e3
    ms = rtt["rtt_ns"] / 1e6
    assert ms.min() >= floor_ms - 0.05
    assert ms.median() < floor_ms + 5.0
    assert run.meta["emulated"]["kernel"].startswith("Linux")
    assert run.meta["emulated"]["host"].endswith(f", {os.cpu_count()} CPUs")
    # As root the forwarder held its precise-wake-up settings (SCHED_FIFO, and the zero
    # CPU-latency request wherever the kernel offers /dev/cpu_dma_latency).
    e = run.meta["emulator"]
    assert e["realtime"] and e["cpu_latency_qos"] == Path("/dev/cpu_dma_latency").exists()


@needs_root
def test_a_flow_with_its_own_rtt_crosses_its_own_access_delays(tmp_path: Path):
    # per-flow RTTs as the simulator builds them: rtt/4 of the flow's own rtt on each side of
    # the hops; the topology's 50 ms for the rest
    flows = (
        '[[flows]]\nkind = "ping"\ninterval = "50ms"\nrtt = "120ms"\n'
        '[[flows]]\nkind = "tcp"\ndirection = "down"\ncc = "cubic"\nrtt = "20ms"\n'
    )
    sc = scenario(tmp_path, '{ rate = "10Mbps", qdisc = "codel" }', flows, "3s")
    run = store.load_run(Path(emulate_json([str(sc), "--out", str(tmp_path / "r")])["run_dir"]))
    ms = run.tables["probes"].to_pandas()["rtt_ns"].dropna() / 1e6
    assert ms.min() >= 120.0 and ms.median() < 120.0 + 10.0
    # the kernel's smoothed RTT of the TCP flow (tcp_info via iperf3): 20 ms plus CoDel's queue,
    # never the topology's 50
    srtt = run.tables["flow_series"].to_pandas().query("flow == 1 and srtt_ns > 0")["srtt_ns"] / 1e6
    assert 20.0 <= srtt.min() < 35.0
    assert run.tables["flows"].to_pandas().set_index("flow").loc[1, "base_rtt_ns"] == 20_000_000


@needs_root
def test_bulk_tcp_fills_the_link_and_every_drop_is_retransmitted(tmp_path: Path):
    finite = '[[flows]]\nkind = "tcp"\ndirection = "down"\nbytes = "1500000B"\nstart = "0.5s"\n'
    sc = scenario(tmp_path, '{ rate = "10Mbps", qdisc = "pfifo", limit = "30p" }', BULK + PING + finite, "4s")
    s = emulate_json([str(sc), "--out", str(tmp_path / "r")])
    run = store.load_run(Path(s["run_dir"]))
    # a finite download carries exactly its bytes (iperf3 writes whole blocks: two of 750,000
    # here) and ends when the receiver has them all
    dl = run.tables["flows"].to_pandas().set_index("flow").loc[2]
    assert (dl["bytes_sent"], dl["bytes_delivered"]) == (1_500_000, 1_500_000)
    assert run.meta["emulated"]["problems"] == []
    links = run.tables["links"].to_pandas().set_index("dir")
    down = links.loc["down"]
    # conservation at the hop: every arrival was sent, dropped or is still queued (or on the wire)
    drops = sum(int(down[c]) for c in links.columns if c.startswith("drops_"))
    assert down["arrivals"] - drops - down["tx_packets"] - down["backlog_pkts"] in (0, 1)
    # a 30-packet FIFO under CUBIC overflows; the kernel retransmits each dropped segment of the
    # flow (spurious retransmissions could add a few, never fewer). iperf3 reads the sender's
    # counter when the test ends, so drops in the last half second may not be counted yet.
    pk = run.tables["packets"].to_pandas()
    lost = pk[(pk["flow"] == 0) & ~pk["outcome"].isin(["sent", "marked"])]
    assert len(lost) > 0
    assert s["flows"][0]["retransmits"] >= (lost["t_out_ns"] < 3.5e9).sum()
    # the link never carries more than its rate: tx bytes over the busy time <= 10 Mb/s
    q = run.tables["queue"].to_pandas()
    qd = q[q["dir"] == "down"]
    rate = (
        (qd["tx_bytes"].iloc[-1] - qd["tx_bytes"].iloc[10])
        * 8
        / ((qd["t_ns"].iloc[-1] - qd["t_ns"].iloc[10]) / 1e9)
    )
    assert 0.85 * 10e6 < rate <= 10e6 * 1.001
    assert s["goodput_mbps"]["down"] > 0.8 * 10 * 1448 / 1500 * (3 / 4)
    # the post-run commands work on an emulated run unchanged
    for cmd in (["report", s["run_dir"], "-o", str(tmp_path / "r.html")],
                ["export", "flent", s["run_dir"], "-o", str(tmp_path / "x.flent.gz")]):  # fmt: skip
        res = runner.invoke(app, cmd)
        assert res.exit_code == 0, res.output


@needs_root
def test_the_sending_hosts_nic_serialises_its_packets_at_nic_rate(tmp_path: Path):
    # The kernel hands a GSO packet's segments to its TUN together; the scenario's hosts have
    # NICs (`nic_rate`, the simulator's FIFO serialiser in front of the access path). At a
    # 50 Mb/s NIC a 1500-byte packet takes 240 us, so the download's packets reach the 100 Mb/s
    # bottleneck at least 240 us apart and the flow carries at most 50 Mb/s.
    sc = scenario(tmp_path, '{ rate = "100Mbps", qdisc = "pfifo", limit = "1000p" }', BULK, "3s")
    sc.write_text(sc.read_text().replace('rtt = "50ms"', 'rtt = "50ms"\nnic_rate = "50Mbps"'))
    s = emulate_json([str(sc), "--out", str(tmp_path / "r")])
    pk = store.load_run(Path(s["run_dir"])).tables["packets"].to_pandas()
    data = pk[(pk["flow"] == 0) & (pk["dir"] == "down") & (pk["size"] == 1500)]
    gaps = data["t_enqueue_ns"].sort_values().diff().dropna()
    assert len(gaps) > 1000
    assert gaps.min() >= 240_000
    assert s["goodput_mbps"]["down"] <= 50 * 1448 / 1500


@needs_root
def test_an_htb_shaped_hop_charges_tcs_rate_table(tmp_path: Path):
    # `shaper = "htb"`: HTB's class gates a serialiser at the interface's line rate, as a leaf
    # qdisc under `tc ... htb rate 10mbit` on an Ethernet device. A backlogged class sends a
    # packet each time its tokens cover it, and a packet costs what tc's rate table says: its
    # length with the 14-byte Ethernet header, rounded up to the table's 8-byte cell (tc/tc_core.c
    # tc_calc_rtable with tc's default mtu 1600; sch_htb.c htb_charge_class): 1514 -> 1520 bytes,
    # 1.216 ms at 10 Mbit/s, where a serialiser at the rate spaces 1500-byte packets 1.2 ms apart.
    hop = '{ rate = "10Mbps", qdisc = "pfifo", limit = "100p", shaper = "htb" }'
    sc = scenario(tmp_path, hop, BULK, "4s")
    s = emulate_json([str(sc), "--out", str(tmp_path / "r")])
    pk = store.load_run(Path(s["run_dir"])).tables["packets"].to_pandas()
    data = pk[(pk["flow"] == 0) & (pk["dir"] == "down") & (pk["size"] == 1500) & (pk["outcome"] == "sent")]
    out = data["t_out_ns"].sort_values()
    gaps = out.diff().dropna()
    assert len(gaps) > 1000
    cost_ns = 1520 * 8 * 1e9 / 10e6
    assert np.median(gaps) == pytest.approx(cost_ns, abs=64)
    late = out[out > 1e9]
    rate = 1500 * 8 * (len(late) - 1) / ((late.iloc[-1] - late.iloc[0]) / 1e9)
    assert 0.9 * 10e6 < rate <= 10e6 * 1500 / 1520 * 1.001


@needs_root
def test_a_finite_upload_is_delivered_whole(tmp_path: Path):
    # iperf3 ends a sending client's test once its bytes are written into the socket, and its
    # server then closes with data in flight: an upload runs with the roles swapped, the
    # receiving client (-R) on the server host ending the test when the last byte is in
    upload = '[[flows]]\nkind = "tcp"\ndirection = "up"\nbytes = "400000B"\n'
    sc = scenario(tmp_path, '{ rate = "10Mbps", qdisc = "pfifo", limit = "100p" }', upload + PING, "2s")
    run = store.load_run(Path(emulate_json([str(sc), "--out", str(tmp_path / "r")])["run_dir"]))
    up = run.tables["flows"].to_pandas().set_index("flow").loc[0]
    assert (up["bytes_sent"], up["bytes_delivered"]) == (400_000, 400_000)
    assert run.meta["emulated"]["problems"] == []
    # the forwarder read the segments' TCP headers: sequence numbers count from each side's SYN
    # (0), and the upload's data from byte 1 to 400,000 (iperf3's 37-byte cookie goes the
    # other way, from the swapped client: the down direction's first data)
    pk = run.tables["packets"].to_pandas()
    flow = pk[pk["flow"] == 0]
    data = flow[(flow["dir"] == "up") & (flow["payload"] > 0)]
    assert data["seq"].min() == 1 and (data["seq"] + data["payload"]).max() == 400_001
    cookie = flow[(flow["dir"] == "down") & (flow["payload"] > 0)]
    assert (cookie["seq"].iloc[0], cookie["payload"].iloc[0]) == (1, 37)
    # the SYN comes from the swapped client (down), the SYN-ACK from the upload's sender (up)
    syn = flow[(flow["tcp_flags"] & 0x02) != 0]
    assert list(syn["dir"][:2]) == ["down", "up"] and list(syn["seq"][:2]) == [0, 0]


@needs_root
def test_ce_marks_rewrite_the_header_the_kernel_accepts(tmp_path: Path):
    flows = BULK + "ecn = true\n"
    sc = scenario(
        tmp_path, '{ rate = "10Mbps", qdisc = { kind = "codel", ecn = true }, limit = "1000p" }', flows, "4s"
    )
    s = emulate_json([str(sc), "--out", str(tmp_path / "r")])
    down = s["links"]["down"]
    # CoDel marks instead of dropping; a marked packet with a bad checksum would be discarded by
    # the receiving kernel and the transfer would stall, so goodput near the rate shows the
    # rewritten header is valid
    assert down["marks"] > 0
    assert down["drops"] == 0
    assert s["flows"][0]["retransmits"] == 0
    assert s["goodput_mbps"]["down"] > 6.0


def wifi_scenario(flows: str, duration: str = "4s") -> dict:
    """A 100 Mb/s wired hop each way and an 802.11n access point with one MCS 4 station."""
    return tomllib.loads(f"""
name = "emu_wifi"
duration = "{duration}"
[topology]
rtt = "50ms"
[topology.wifi]
stations = [{{ name = "sta", mcs = 4 }}]
[[topology.hops]]
name = "air"
direction = "up"
wifi = true
qdisc = "pfifo"
[[topology.hops]]
name = "wan_up"
direction = "up"
rate = "100Mbps"
[[topology.hops]]
name = "wan_down"
direction = "down"
rate = "100Mbps"
[[topology.hops]]
name = "ap"
direction = "down"
wifi = true
qdisc = "fq_codel"
{flows}
""")


@needs_root
def test_a_wifi_hop_carries_its_saturation_rate_and_its_airtime():
    """The shared medium runs in real time: a UDP download offered above the AP's capacity
    leaves the AP at the saturation throughput of full aggregates (the hop's nominal rate, from
    the 802.11n airtime formula, tests in wifi_checks.rs), and a ping pays the airtime of its
    two frames as the simulator computes it for the same path."""
    udp = '[[flows]]\nkind = "udp"\ndirection = "down"\nrate = "45Mbps"\npacket_size = "1500B"\n'
    res, _ = emu.emulate(wifi_scenario(udp), warmup_s=1)
    links = res.tables["links"].to_pandas().set_index("hop")
    nominal = float(links.loc["ap", "rate_bps"])
    assert 30e6 < nominal < 40e6  # MCS 4 is 39 Mb/s on the air
    q = res.tables["queue"].to_pandas()
    ap = q[(q["hop"] == "ap") & (q["t_ns"] >= 1e9)]
    rate = (
        (ap["tx_bytes"].iloc[-1] - ap["tx_bytes"].iloc[0])
        * 8
        / ((ap["t_ns"].iloc[-1] - ap["t_ns"].iloc[0]) / 1e9)
    )
    assert abs(rate / nominal - 1) < 0.03, (rate, nominal)
    ping = '[[flows]]\nkind = "ping"\ninterval = "50ms"\nstation = "sta"\n'
    sc = wifi_scenario(ping, "3s")
    sim = run_dict(sc).tables["probes"].to_pandas()["rtt_ns"].min() / 1e6
    assert sim > 50 + 0.2  # two frames' airtime (DIFS, backoff, preambles, block ACK) on top of 50 ms
    res, _ = emu.emulate(sc)
    ms = res.tables["probes"].to_pandas()["rtt_ns"].dropna() / 1e6
    assert len(ms) > 40
    # ping prints 0.1 ms steps (rounding down by at most 0.05 ms); the machine adds a little
    assert ms.min() >= sim - 0.05
    assert ms.median() < sim + 5.0


def test_a_namespace_may_default_to_cubic_on_a_host_that_allows_only_reno_and_bbr(tmp_path: Path):
    # A host whose own default is BBR may allow only "reno bbr" to unprivileged sockets and
    # other namespaces; the kernel refuses another namespace a default outside that list
    # (tcp_cong.c tcp_set_default_congestion_control, EPERM). The list gains the one entry.
    allowed = tmp_path / "tcp_allowed_congestion_control"
    allowed.write_text("reno bbr\n")
    netns.allow_cc("cubic", allowed)
    assert allowed.read_text().split() == ["reno", "bbr", "cubic"]
    netns.allow_cc("cubic", allowed)
    assert allowed.read_text().split() == ["reno", "bbr", "cubic"]


@needs_root
def test_the_namespaces_default_to_cubic_whatever_the_host_allows():
    with netns.Namespaces(cc="cubic") as ns:
        for side in ("c", "s"):
            out = netns._sh("sysctl", "-n", "net.ipv4.tcp_congestion_control", ns=ns.name(side))
            assert out.stdout.strip() == "cubic"


@needs_root
@pytest.mark.parametrize("ring, dropped", [(None, 0), (500, 500)])
def test_a_tun_drops_what_finds_its_ring_full_and_the_run_counts_it(monkeypatch, ring, dropped):
    # drivers/net/tun.c `tun_net_xmit` puts each packet in a ring of txqueuelen entries for the
    # reader and drops it when the ring is full (tx_dropped); a TUN's own default is 500. With
    # no forwarder reading, 1000 datagrams from the client host fill a ring of 500 and lose the
    # rest; the emulator's ring (`TUN_RING_PACKETS`) holds them all.
    if ring:
        monkeypatch.setattr(netns, "TUN_RING_PACKETS", ring)
    send = f"import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nfor _ in range(1000): s.sendto(b'x' * 100, ('{netns.SERVER_IP}', 9))"
    with netns.Namespaces() as ns:
        netns._sh(sys.executable, "-c", send, ns=ns.name("c"))
        assert ns.tun_drops() == {"c": dropped, "s": 0}


def test_a_tcp_model_the_kernel_lacks_is_a_user_error(tmp_path: Path):
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', BULK.replace("cubic", "ledbat"))
    res = runner.invoke(app, ["emulate", str(sc)])
    assert res.exit_code == 2
    assert "flows[0].cc" in res.output and "ledbat" in res.output


@pytest.mark.parametrize(
    ("item", "named"),
    [
        ("net.core.rmem_max=1000000", "net.core.rmem_max"),  # host-wide in part: not a namespace's
        ("kernel.hz=100", "kernel.hz"),
        ("net.ipv4.tcp_recovery", "net.ipv4.tcp_recovery"),  # no value
        ("net.ipv4.tcp_rmem=4096 87380 6291456", "net.ipv4.tcp_rmem"),
    ],
)
def test_a_sysctl_outside_the_namespaces_tcp_settings_is_a_user_error(tmp_path: Path, item: str, named: str):
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', PING)
    res = runner.invoke(app, ["emulate", str(sc), "--sysctl", item])
    assert res.exit_code == 2
    assert "--sysctl" in res.output and named in res.output and "allowed" in res.output


@needs_root
def test_a_sysctl_is_set_in_both_namespaces_and_a_refused_one_is_one_line():
    # net.ipv4.tcp_comp_sack_nr has a copy per network namespace (netns_ipv4), 44 by default
    with netns.Namespaces(sysctls={"net.ipv4.tcp_comp_sack_nr": "0"}) as ns:
        for side in ("c", "s"):
            out = netns._sh("sysctl", "-n", "net.ipv4.tcp_comp_sack_nr", ns=ns.name(side))
            assert out.stdout.strip() == "0"
    refused = netns.Namespaces(sysctls={"net.ipv4.no_such_setting": "1"})
    with pytest.raises(emu.EmulationError, match="net.ipv4.no_such_setting=1 was refused"):
        refused.__enter__()
    listed = netns._sh("ip", "netns", "list").stdout
    assert refused.name("c") not in listed and refused.name("s") not in listed


def test_a_missing_command_is_a_user_error(tmp_path: Path):
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', "")
    res = runner.invoke(app, ["emulate", str(sc), "--", "no-such-program-here", "-x"])
    assert res.exit_code == 2
    assert "COMMAND" in res.output and "no-such-program-here" in res.output


def test_without_privileges_one_line_and_exit_2(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', PING)
    res = runner.invoke(app, ["emulate", str(sc)])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0 and "root" in res.output


@pytest.mark.parametrize(
    ("tool", "package"), [("ping", "iputils-ping"), ("ip", "iproute2"), ("iperf3", "iperf3")]
)
def test_a_missing_tool_names_the_debian_package_that_provides_it(monkeypatch, tool: str, package: str):
    # Debian ships /bin/ping in iputils-ping and /bin/ip in iproute2 (packages.debian.org)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(os.path, "exists", lambda p: p == "/dev/net/tun" or os.path.lexists(p))
    monkeypatch.setattr(shutil, "which", lambda t: None if t == tool else f"/usr/bin/{t}")
    with pytest.raises(emu.EmulationError, match=rf"`{tool}`.*\(Debian: apt-get install {package}\)$"):
        emu.check_environment(["iperf3", "ping"])


CLI = [sys.executable, "-c", "from aqmlab.cli import entry; entry()"]


def _ours(pid: int) -> list[str]:
    return [n for n in netns._namespaces() if n.startswith(f"aqmlab-{pid}-")]


def _wait_for(cond, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return False


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_removes_the_namespaces(tmp_path: Path, sig):
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', PING, "30s")
    p = subprocess.Popen([*CLI, "emulate", str(sc), "--out", str(tmp_path / "r")], stderr=subprocess.PIPE)
    assert _wait_for(lambda: len(_ours(p.pid)) == 2)
    time.sleep(0.5)
    p.send_signal(sig)
    _, said = p.communicate(timeout=20)
    assert _ours(p.pid) == []
    assert p.returncode == 128 + sig and b"interrupted: nothing stored" in said, (p.returncode, said)


@needs_root
def test_after_kill_9_the_next_start_removes_what_was_left(tmp_path: Path):
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', BULK, "30s", name="long")
    p = subprocess.Popen([*CLI, "emulate", str(sc), "--out", str(tmp_path / "r")])
    assert _wait_for(lambda: len(_ours(p.pid)) == 2)
    # wait for the iperf3 server to run inside the server namespace
    assert _wait_for(
        lambda: netns._sh("ip", "netns", "pids", f"aqmlab-{p.pid}-s", check=False).stdout.strip()
    )
    left_pids = netns._sh("ip", "netns", "pids", f"aqmlab-{p.pid}-s", check=False).stdout.split()
    p.kill()
    p.wait()
    # kill -9 runs no clean-up: the namespaces and the tools inside outlive the process
    assert len(_ours(p.pid)) == 2
    short = scenario(tmp_path, '{ rate = "10Mbps" }', PING, "1s", name="short")
    emulate_json([str(short), "--out", str(tmp_path / "r")])
    assert _ours(p.pid) == []
    assert not netns._workdir(p.pid).exists()
    for pid in left_pids:
        assert (
            not Path(f"/proc/{pid}").exists()
            or Path(f"/proc/{pid}/status").read_text().find("State:\tZ") >= 0
        )


@needs_root
@pytest.mark.parametrize(
    ("test", "series", "tool"), [("ping", "Ping (ms) ICMP", "ping"), ("voip", "VoIP::rtt", "irtt")]
)
def test_flent_runs_between_the_namespaces(tmp_path: Path, test: str, series: str, tool: str):
    resultset = pytest.importorskip("flent.resultset")
    if shutil.which(tool) is None:
        pytest.skip(f"flent {test} needs {tool} (scripts/test.sh installs it as root)")
    sc = scenario(tmp_path, '{ rate = "10Mbps" }', "", "5s")
    data = tmp_path / "flent"
    data.mkdir()
    flent = [sys.executable, "-m", "flent", test, "-H", emu.SERVER_IP, "-l", "3", "-D", str(data)]
    res = runner.invoke(app, ["emulate", str(sc), "--out", str(tmp_path / "r"), "--json", "--", *flent])
    assert res.exit_code == 0, res.output
    (path,) = data.glob("*.flent.gz")
    r = resultset.load(str(path))
    rtts = [v for v in r.series(series) if v is not None]
    # Flent's probes cross the emulated 50 ms path: no reply sooner; the median adds little (a
    # loose bound: how little depends on the machine's load, bench/emulate.py measures it)
    assert len(rtts) >= 5
    assert min(rtts) >= 50.0
    assert sorted(rtts)[len(rtts) // 2] < 60.0


@pytest.mark.parametrize(
    ("size", "block"),
    [(100_000, 100_000), (1 << 20, 1 << 20), (3_000_000, 1_000_000), (2_500_000, 625_000), (1_048_583, None)],
)
def test_a_finite_transfer_is_written_in_blocks_that_add_up_to_it(size: int, block: int | None):
    # iperf3 stops after the write that reaches -n: blocks must divide the size, at most 1 MiB
    # (iperf3 refuses more), at least 1 KiB; 1,048,583 is a prime above 1 MiB
    assert iperf_block(size) == block
    if block is None:
        resolved = {
            "duration": "1s",
            "topology": {"down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
            "flows": [{"kind": "tcp", "direction": "down", "cc": "cubic", "bytes": f"{size}B", "count": 1}],
        }
        with pytest.raises(
            ScenarioError, match=r"flows\[0\]\.bytes: 1048583B cannot be sent exactly by iperf3"
        ):
            emu.plan(resolved)


def test_a_hop_with_several_hosts_is_a_user_error():
    resolved = {
        "duration": "1s",
        "topology": {"hops": [{"name": "access", "direction": "down", "hosts": ["a", "b"]}]},
        "flows": [],
    }
    with pytest.raises(ScenarioError, match=r"topology\.hops\[0\]\.hosts: emulation runs one client host"):
        emu.plan(resolved)


def test_a_modelled_hosts_timing_noise_is_a_user_error():
    resolved = {
        "duration": "1s",
        "topology": {"host_jitter": "50us", "down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
        "flows": [],
    }
    with pytest.raises(
        ScenarioError, match=r"topology\.host_jitter: emulation does not support a modelled host"
    ):
        emu.plan(resolved)


def test_a_qdisc_in_the_sending_host_is_a_user_error():
    resolved = {
        "duration": "1s",
        "topology": {"down": {"rate": "1Mbps", "local_sender": True}, "up": {"rate": "1Mbps"}},
        "flows": [],
    }
    with pytest.raises(ScenarioError, match=r"topology\.down\.local_sender: emulation runs every qdisc"):
        emu.plan(resolved)


@pytest.mark.parametrize(
    ("down", "error"),
    [
        ({"delay": "5ms", "delay_limit": "10p"}, r"topology\.down\.delay_limit: emulation does not model"),
        ({"delay": "5ms"}, r"topology\.down\.delay: 5ms after the last hop of a direction is not emulated"),
    ],
)
def test_netems_queue_and_a_delay_after_the_last_hop_are_user_errors(down: dict, error: str):
    resolved = {
        "duration": "1s",
        "topology": {"down": {"rate": "1Mbps", **down}, "up": {"rate": "1Mbps"}},
        "flows": [],
    }
    with pytest.raises(ScenarioError, match=error):
        emu.plan(resolved)


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("on_off", {"on": "1s", "off": "1s"}, "on/off periods"),
        ("first_write", "500ms", "a held first write"),
        ("preamble", "37B", "an application preamble"),
        ("host_jitter", "50us", "a modelled host's timing noise"),
    ],
)
def test_flow_keys_no_tool_can_honour_are_user_errors(key: str, value, why: str):
    # iperf3 sends from its test's start to its end: it has no off periods and no held write
    resolved = {
        "duration": "1s",
        "topology": {"down": {"rate": "1Mbps"}, "up": {"rate": "1Mbps"}},
        "flows": [{"kind": "tcp", key: value}],
    }
    with pytest.raises(ScenarioError, match=rf"flows\[0\]\.{key}: emulation does not support {why}"):
        emu.plan(resolved)


def test_every_kernel_matrix_case_is_a_scenario_both_sides_run():
    """Each case of every selection passes the simulator's validation and plans as the
    emulator's tool runs, each TCP flow keeping the controller its case names (`cc`, and
    `cc_pair`'s `cc2` on its second flow); a case whose controller this kernel lacks is left out."""
    available = set(emu.kernel_ccs())
    planned = 0
    for selection in kernel_matrix.SELECTIONS:
        for case in kernel_matrix.cases(selection):
            if {case.cc, case.cc2} - {""} - available:
                continue
            plans = emu.plan(resolve(kernel_matrix.scenario(case, 30.0), 1))
            ccs = [p.entry["cc"] for p in plans if p.kind == "tcp"]
            assert ccs and set(ccs) == {case.cc, case.cc2} - {""}, case.id
            planned += 1
    assert planned >= len(kernel_matrix.cases("core"))


# The short form of the simulation-vs-kernel matrix (validation/kernel/): the same scenario
# simulated and run with the kernel's own TCP, judged by the matrix's own code; marked `alone`,
# so that scripts/test.sh runs it after the rest with no other test beside it (the kernel's
# queues follow its hosts' timing: with the suite's other worker busy, one CoDel flow's median
# read 2.6 ms where the model and quiet kernel runs read 1.2-1.5, in CI on 2026-11-29). The
# simulated side is the mean of 8 seeds, each with its own flow starts (`matrix.sim_scenario`),
# each group's data as late as the kernel run's began (`matrix.
# harness_lags`: its connections open as iperf3's did, before the data, and hold their first
# write; an upload writes iperf3's cookie first), the flows of a group as a recorded kernel
# group's (`matrix.recorded_offsets`), every flow's base RTT longer by the hosts' own time
# (`matrix.HOST_LATENCY_US`). About 80 s.
KERNEL_MATRIX_ARGS = argparse.Namespace(
    duration=20.0,
    warmup=8.0,
    seeds=8,
    repeats=1,
    profile=None,
    set=[],
    sysctl=[],
    qdisc_set=[],
    **kernel_matrix.harness_defaults(),
)


@pytest.fixture(scope="module")
def matrix_rows() -> dict[str, dict]:
    return {c.id: kernel_run.run_case(c, KERNEL_MATRIX_ARGS) for c in kernel_matrix.cases("short")}


def emulator_kept_time(row: dict) -> None:
    """Skips, saying so, when the emulator's deliveries ran late by more than a quarter of a
    packet time at 99 % (validation/kernel/README.md: 24-42 us on a quiet machine, hundreds when
    the hosts' TCP and the tools share the CPUs with other work): the kernel's packets then reach
    it and its hosts off their times, and the kernel's queue is not a clean measure of its TCP."""
    late = max(e["emulator"]["late_us_p99"] for e in row["emu"])
    bound = 1e3 * kernel_matrix.packet_time_ms(kernel_matrix.Case(**row["case"])) / 4
    if late > bound:
        pytest.skip(
            f"the emulator ran late (p99 {late} us > {bound:.0f} us) in {row['id']}: the machine is loaded"
        )
    # The kernel's own TCP keeps time on the hosts' CPUs, not the forwarder's: with other work
    # beside the test's (two pytest workers and the emulation load a 2-core machine about 2),
    # one CoDel flow's median sojourn read 2.6-2.7 ms where quiet runs read 1.8 or less while the
    # forwarder still kept time (2026-11-25, load average 5-10 on 2 cores).
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > 2 * cores:
        pytest.skip(f"the machine is loaded (load average {load:.1f} on {cores} cores) in {row['id']}")


@needs_root
@pytest.mark.alone
def test_kernel_matrix_one_flow_codel_and_two_way_fq_codel_match_the_kernel(matrix_rows):
    for row in matrix_rows.values():
        emulator_kept_time(row)
    # one flow through CoDel: the median sojourn within the matrix's bound (15 % or one packet
    # time) and goodput within 5 % in every run of validation/kernel/README.md, on both machines
    # it ran on. Its p95 rests on the few CoDel drop cycles of 12 s of statistics and on the
    # hosts: 6.3 ms in both 40 s kernel runs of this machine (the model 5.2-6.3 per seed), 7.4 ms
    # in one 20 s run on another machine whose p50 agreed (1.8 against 1.5): it is held to 30 %.
    for cell in kernel_compare.cells(matrix_rows["bulk1-codel-10m-50ms-cubic"]):
        assert kernel_compare.delay_ok(*cell["q50"], cell["pkt_ms"]), json.dumps(cell)
        assert cell["ok_goodput"], json.dumps(cell)
        sim95, kernel95 = cell["q95"]
        assert 0.7 < sim95 / kernel95 < 1.3, json.dumps(cell)
    # two-way fq_codel: the medians, within one packet time in every run; its p95 and goodput
    # moved past the bounds once while the rest of the test suite loaded both CPUs
    for cell in kernel_compare.cells(matrix_rows["rrul_be-fq_codel-10m-50ms-cubic"]):
        assert kernel_compare.delay_ok(*cell["q50"], cell["pkt_ms"]), cell


@needs_root
@pytest.mark.alone
def test_kernel_matrix_two_way_codel_queue_is_the_kernels_order(matrix_rows):
    # The gap issue 50 opened with: the kernel's two-way CoDel queue read 2-5x below the model's
    # because the emulated server paced every CUBIC flow (BBR's pacing state left on its
    # sockets, `emulate.default_cc`); a paced kernel reads about 7 ms. Unpaced, one kernel run's
    # median sojourn was 16.6-36.4 ms over twenty runs on a quiet machine (22-36 ms on an
    # earlier one; 13-16 ms while the rest of the test suite or another emulation loaded both
    # CPUs) against the model's ensemble mean of 25.9 ms (24 seeds of 30 s; 15-34 ms per seed;
    # 1.07 of the kernel's quiet mean): both sides are draws from a wide distribution
    # (validation/kernel/README.md). This short form's 8 seeds of 20 s read 26.8 ms down and
    # 28.3 up (2026-11-27) with the uploads' data 74 ms after the downloads', as the kernel's
    # began (`matrix.harness_lags`), and each group's flows as one stored kernel group's began
    # (`matrix.recorded_offsets`; 23.3 / 23.3 with each flow's start drawn over 20 ms; 8 s of
    # warm-up leave more of the start in them). The bound leaves room for the loaded kernel's
    # lowest draws (28.3 / 13 = 2.2) and the quiet kernel's highest (26.8 / 36 = 0.74), and
    # fails a paced kernel (26.8 / 7 = 3.8 and above).
    row = matrix_rows["rrul_be-codel-10m-50ms-cubic"]
    for cell in kernel_compare.cells(row):
        sim, kernel = cell["q50"]
        assert 0.4 < sim / kernel < 2.8, cell
    assert row["emu"][0]["kernel_counters"]["TcpRetransSegs"] > 0
    assert emu.default_cc(emu.kernel_ccs()) == "cubic"


def test_the_simulated_groups_start_as_late_as_the_kernels_began_their_data():
    # iperf3 starts an upload's data one control message after the download's (src/
    # iperf_client_api.c: a client sends once the server's TEST_RUNNING reaches it): a kernel
    # run whose downloads began at 1.250 s and uploads at 1.320 s is 70 ms later on the way up.
    # The model's flows of one RTT take the same handshake: its up group connects 70 ms late,
    # or (`hold_writes`) with the downloads, as iperf3's streams do, holding its first write
    # (`first_write`); either way its data comes 70 ms after theirs (within the 20 ms draw).
    case = kernel_matrix.Case("pfifo", "rrul_be", 10, 50)
    first = {str(i): 1.250 + 0.001 * (i % 4) if i < 4 else 1.320 + 0.001 * (i % 4) for i in range(8)}
    lags = kernel_matrix.harness_lags(case, 3.0, None, [{"first_data_s": first}, {}])
    # each group's first flow, less the model's own handshake (alike to 0.2 ms)
    assert lags == pytest.approx([0.0, 0.070], abs=5e-4)
    # the harness until 2026-11-29 (evening): each group's median over its four flows
    assert kernel_matrix.harness_lags(case, 3.0, None, [{"first_data_s": first}], seed=None) == pytest.approx(
        [0.0015, 0.0715], abs=5e-4
    )
    assert kernel_matrix.harness_lags(case, 3.0, None, [{}]) is None  # no recorded starts: drawn
    # With iperf3's start (`cookies`, `matrix.connect_early`) the clients' SYNs leave together and
    # the up test's one traced lag later, and the model opens a download from its server half a
    # round trip after its client's SYN would have left: the up group's SYNs lead by 25 ms less
    # that lag.
    lag_ms = kernel_matrix.TRACED_CONNECT_LAGS_MS
    for hold, cookies, (lo, hi) in [
        (False, False, (0.0715, 0.0715)),
        (True, False, (0.0, 0.0)),
        (True, True, (min(lag_ms) / 1e3 - 0.025, max(lag_ms) / 1e3 - 0.025)),
    ]:
        sc = kernel_matrix.sim_scenario(case, 3.0, None, lags, hold, cookies=cookies)
        sim = aqmlab.run(sc, seed=1)
        began = kernel_matrix.first_data_s(sim)
        down, up = (np.median([began[str(i)] for i in ids]) for ids in (range(4), range(4, 8)))
        assert 0.0715 - 0.020 < up - down < 0.0715 + 0.020
        pk = sim.tables["packets"]
        flow, t_in = pk.column("flow").to_numpy(), pk.column("t_enqueue_ns").to_numpy()
        syn = [t_in[flow == i].min() / 1e9 for i in range(8)]  # each connection's SYN
        gap = np.median(syn[4:]) - np.median(syn[:4])
        assert lo - 0.020 < gap < hi + 0.020, (hold, cookies, syn)


def test_each_seed_takes_the_lag_of_one_kernel_run():
    # Two kernel runs whose uploads began 30 ms and 60 ms after their downloads: each seed's up
    # group is as late as one of them, the same run for the same seed, and both runs are drawn
    # over sixteen seeds; none takes their mean (45 ms), which no kernel run had.
    case = kernel_matrix.Case("pfifo", "rrul_be", 10, 50)
    runs = [
        {"first_data_s": {str(i): 1.25 + (lag if i >= 4 else 0.0) for i in range(8)}}
        for lag in (0.030, 0.060)
    ]
    drawn = [kernel_matrix.harness_lags(case, 3.0, None, runs, seed=s)[1] for s in range(1, 17)]
    assert all(min(abs(d - 0.030), abs(d - 0.060)) < 5e-4 for d in drawn), drawn
    assert {round(d, 2) for d in drawn} == {0.03, 0.06}
    assert drawn == [kernel_matrix.harness_lags(case, 3.0, None, runs, seed=s)[1] for s in range(1, 17)]
    assert kernel_matrix.harness_lags(case, 3.0, None, runs, seed=None)[1] == pytest.approx(0.045, abs=5e-4)


def test_each_seed_starts_as_one_kernel_run_did():
    # Two kernel runs that differ in all three things a start is drawn from: the uploads' lag
    # (30 / 60 ms after the downloads' data), the downloads' offsets within their group (0, 0.5,
    # 0.9, 12 ms / 0, 6, 7, 8 ms) and the upload test's connections after the download test's
    # (9.2 / 20 ms). Every seed's simulated start is one run's in all three (its data to the
    # 0.2 ms a handshake may differ by, its SYNs to the us, the model opening a download from its
    # server half a round trip after its client would), and both runs are drawn over eight
    # seeds. (The harness before, `--mixed-starts`, fails this at seed 1: run 0's lag, offsets
    # from other stored runs, run 1's connections.)
    case = kernel_matrix.Case("pfifo", "rrul_be", 10, 50)
    runs = []
    for lag, offs, conn in (
        (0.030, (0.0, 0.0005, 0.0009, 0.012), 0.0092),
        (0.060, (0.0, 0.006, 0.007, 0.008), 0.020),
    ):
        first = {str(i): 1.25 + offs[i] for i in range(4)} | {
            str(4 + i): 1.25 + lag + 0.0001 * i for i in range(4)
        }
        syn = {str(i): 1.0 + 0.0001 * i for i in range(4)} | {str(4 + i): 1.0 + conn for i in range(4)}
        runs.append({"first_data_s": first, "syn_s": syn, "want": (lag, offs, conn)})
    a = argparse.Namespace(duration=3.0, profile=None, set=[], **kernel_matrix.harness_defaults())
    taken = set()
    for seed in range(1, 9):
        res = aqmlab.run(kernel_matrix.cli_scenario(case, a, runs, seed), seed=seed)
        began, syn = kernel_matrix.first_data_s(res), kernel_matrix.syn_s(res)
        down = [began[str(i)] for i in range(4)]
        got_offs = [t - min(down) for t in down]
        got_lag = began["4"] - min(down)
        got_conn = min(syn[str(i)] for i in range(4, 8)) - min(syn[str(i)] for i in range(4)) + 0.025
        match = [
            k
            for k, r in enumerate(runs)
            if got_lag == pytest.approx(r["want"][0], abs=2e-3)
            and got_offs == pytest.approx(list(r["want"][1]), abs=2e-4)
            and got_conn == pytest.approx(r["want"][2], abs=2e-6)
        ]
        assert len(match) == 1, (seed, got_lag, got_offs, got_conn)
        assert kernel_matrix.drawn_run(case, runs, seed) is runs[match[0]]
        taken.add(match[0])
    assert taken == {0, 1}


def test_a_later_test_connects_as_long_after_the_first_as_a_kernel_run_recorded():
    # A kernel run whose four download connections opened at 1.000-1.003 s and whose upload test
    # opened its own 9.2 ms after the first of them (iperf3's clients, started in order): the
    # model's upload group connects 9.2 ms after its download group's client would have, which
    # the model opens from its server half a round trip (25 ms) later, for every seed. A run
    # without `syn_s`, or without one group's, records nothing.
    case = kernel_matrix.Case("pfifo", "rrul_be", 10, 50)
    syn = {str(i): 1.0 + 0.001 * i for i in range(4)} | {str(4 + i): 1.0092 + 0.0004 * i for i in range(4)}
    runs = [{"syn_s": syn}, {}, {"syn_s": {k: v for k, v in syn.items() if int(k) < 4}}]
    connects = kernel_matrix.recorded_connect_lags(case, 3.0, runs)
    assert connects == [pytest.approx((0.0, 0.0092))]
    together = {0: [(0.0,) * 4], 1: [(0.0,) * 4]}  # each group's flows at once, not drawn over 20 ms
    for seed in (1, 2, 3):
        sc = kernel_matrix.sim_scenario(
            case, 3.0, None, [0.0, 0.07], True, (), together, seed, connects=connects
        )
        got = kernel_matrix.syn_s(aqmlab.run(sc, seed=seed))
        down, up = (min(got[str(i)] for i in ids) for ids in (range(4), range(4, 8)))
        assert up - down == pytest.approx(0.0092 - 0.025, abs=2e-6), seed  # starts written to the µs


def test_the_simulated_flows_of_a_group_begin_as_a_recorded_kernel_group_did():
    # A kernel run whose downloads began 0, 0.5, 0.9 and 12 ms after the first of them and whose
    # uploads began 0.1-0.3 ms apart, 70 ms after: the model's groups connect together, each flow
    # holding its first write by the handshake, its group's lag and its own recorded offset, so
    # its data begins that much after its group's first (to the 0.2 ms its handshake may differ).
    case = kernel_matrix.Case("pfifo", "rrul_be", 10, 50)
    down, up = (0.0, 0.0005, 0.0009, 0.012), (0.0, 0.0001, 0.0002, 0.0003)
    first = {str(i): 1.25 + down[i] for i in range(4)} | {str(4 + i): 1.32 + up[i] for i in range(4)}
    run = {"first_data_s": first}
    offsets = kernel_matrix.recorded_offsets(case, 3.0, [run], stored=False)
    assert [list(v) for v in offsets[0]] == [pytest.approx(down)]
    assert [list(v) for v in offsets[1]] == [pytest.approx(up)]
    lags = kernel_matrix.harness_lags(case, 3.0, None, [run])
    for seed in (1, 2):
        sc = kernel_matrix.sim_scenario(case, 3.0, None, lags, True, (), offsets, seed=seed)
        began = kernel_matrix.first_data_s(aqmlab.run(sc, seed=seed))
        for ids, want in ((range(4), down), (range(4, 8), up)):
            t = [began[str(i)] for i in ids]
            assert [x - min(t) for x in t] == pytest.approx(want, abs=2e-4), (seed, t)
        assert 0.070 - 0.002 < began["4"] - began["0"] < 0.070 + 0.002
    # a flow alone in its group has nothing recorded to follow: its start is drawn (20 ms)
    alone = kernel_matrix.Case("pfifo", "rtt_mix", 10, 50)
    rtt_mix_first = {"0": 1.25, "1": 1.2504}
    assert kernel_matrix.recorded_offsets(alone, 3.0, [{"first_data_s": rtt_mix_first}], stored=False) == {}


def test_a_run_leaves_its_bursts_at_the_first_block_whose_counts_vary_little():
    # Arrivals one burst a round trip (20 packets at once every 130 ms) until 7 s, then one
    # packet every 1.2 ms: counted per 15 ms, the bursts leave most counts 0 and one 20 (a CV
    # near sqrt(130 / 15 - 1) = 2.8), the even arrivals 12 or 13 in every count (a CV near
    # 0.04). Blocks of 2 s from 1 s: 1-3, 3-5 and 5-7 s hold bursts, 7-9 s is the first even.
    bursts = np.concatenate([np.full(20, t) for t in np.arange(0.0, 7.0, 0.130)])
    even = np.arange(7.0, 30.0, 0.0012)
    t_ns = np.concatenate([bursts, even]) * 1e9
    assert kernel_matrix.bursty_until_s(t_ns, 1.0, 30.0) == 7.0
    # even from the start: the first block; bursts throughout: the run's end
    assert kernel_matrix.bursty_until_s(even * 1e9 - 7e9, 1.0, 20.0) == 1.0
    always = np.concatenate([np.full(20, t) for t in np.arange(0.0, 30.0, 0.130)]) * 1e9
    assert kernel_matrix.bursty_until_s(always, 1.0, 30.0) == 30.0


def test_a_discipline_key_changes_both_directions_on_both_sides():
    # run.py --qdisc-set: the key lands on the bottleneck's discipline both ways, a discipline
    # named by its kind alone becomes a table, and the scenario still resolves with the value.
    case = kernel_matrix.Case("pie", "rrul_be", 10, 50)
    sc = kernel_matrix.set_qdisc(kernel_matrix.scenario(case, 5.0), ["beta=0", 'target="20ms"'])
    for d in ("down", "up"):
        assert sc["topology"][d]["qdisc"] == {"kind": "pie", "beta": 0, "target": "20ms"}
    resolved = resolve(sc, 1)
    for d in ("down", "up"):
        q = resolved["topology"][d]["qdisc"]
        assert q["beta"] == 0.0 and q["target"] == "20ms" and q["alpha"] == 0.125


def test_a_runs_figures_say_when_each_connection_opened():
    # matrix.syn_s: a flow's first SYN at a hop. Hosts a quarter of the 40 ms RTT (10 ms) from
    # the bottleneck, serialising at 1 Gb/s (a 60-byte SYN in 480 ns): an upload starting at
    # 1 s and a download at 1.2 s (opened from its server in the model) reach their hops 10 ms
    # and 480 ns later; the UDP flow has none.
    sc = {"name": "syn", "duration": "2s",
          "topology": {"rtt": "40ms", "down": {"rate": "10Mbps"}, "up": {"rate": "10Mbps"}},
          "flows": [{"kind": "tcp", "direction": "up", "start": "1s"},
                    {"kind": "tcp", "direction": "down", "start": "1.2s"},
                    {"kind": "udp", "rate": "100Kbps", "start": "1s"}]}  # fmt: skip
    got = kernel_matrix.syn_s(aqmlab.run(sc, seed=1))
    assert got == pytest.approx({"0": 1.010000480, "1": 1.210000480}, abs=1e-9)


def test_the_simulated_flows_write_iperf3s_cookie_where_its_client_sends():
    # iperf3's client writes a 37-byte cookie on each data stream it opens (src/iperf_api.c,
    # COOKIE_SIZE 37): the data sender's own bytes for an upload, the receiver's for a download
    # (-R) and for a finite upload, which the emulator runs with the roles swapped.
    case = kernel_matrix.Case("pfifo", "rrul_be", 10, 50)
    sc = kernel_matrix.sim_scenario(case, 5.0, seed=1)
    tcp = [f for f in sc["flows"] if f["kind"] == "tcp"]
    assert {f["direction"] for f in tcp} == {"down", "up"}
    for f in tcp:
        assert f.get("preamble") == ("37B" if f["direction"] == "up" else None), f
    assert all(
        "preamble" not in f for f in kernel_matrix.sim_scenario(case, 5.0, seed=1, cookies=False)["flows"]
    )
    finite_up = emu.FlowPlan(0, "tcp", "up", 0.0, 1.0, {"kind": "tcp", "bytes": "100KB"})
    assert finite_up.receiving_client and finite_up.preamble_b == 0
    # and the scenario resolves with the key on the four uploads
    resolved = [
        (f["direction"], f["count"], f.get("preamble")) for f in resolve(sc, 1)["flows"] if f["kind"] == "tcp"
    ]
    assert resolved == [("down", 4, None), ("up", 4, "37B")]


def test_a_cell_is_within_noise_when_each_measure_out_is_within_twice_its_standard_error():
    # compare.within_noise: means 2.0 and 3.0, each side's runs 1, 2, 3 and 2, 3, 4 (sd 1 over
    # sqrt(3) runs): the difference's standard error is sqrt(2/3) = 0.816, twice that 1.63 > 1.
    assert kernel_compare.within_noise([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    # tight runs 0.9-1.1 against 1.4-1.6: 0.5 apart, twice the error 2 x sqrt(2 x 0.01 / 3) = 0.16
    assert not kernel_compare.within_noise([0.9, 1.0, 1.1], [1.4, 1.5, 1.6])
    # one run a side gives no error: never within noise
    assert not kernel_compare.within_noise([1.0], [1.0, 1.1])
    # a goodput cell: one class 25 % off, its kernel runs spread wide, the delays in bounds
    run = lambda q, g: {"dirs": {"down": {"q50": q, "q95": q, "q99": q, "drops": 0, "marks": 0}},
                        "labels": {"down": {"goodput": g}}}  # fmt: skip
    row = {"id": "x", "case": kernel_matrix.Case("pfifo", "bulk1", 10, 50).as_dict(),
           "sim": [run(10.0, g) for g in (7.0, 7.2, 7.4)],
           "emu": [run(10.0, g) for g in (6.0, 9.0, 12.0)]}  # fmt: skip
    (cell,) = kernel_compare.cells(row)
    assert cell["ok_delay"] and not cell["ok_goodput"] and cell["noise"]
    row["emu"] = [run(10.0, g) for g in (8.9, 9.0, 9.1)]
    (cell,) = kernel_compare.cells(row)
    assert not cell["ok_goodput"] and not cell["noise"]


def test_each_class_s_drops_add_up_to_the_bottleneck_s():
    # Two downloads of two classes (cc_pair) through a FIFO of 42 packets for 8 s: every packet
    # the queue drops after the warm-up is one of theirs or the ping's, so the classes' drops
    # and the probe's add up to the direction's (a conservation of the packets table).
    case = kernel_matrix.Case("pfifo", "cc_pair", 10, 50, cc="cubic", limit_p=42, cc2="bbr")
    res = aqmlab.run(kernel_matrix.scenario(case, 8.0), seed=1, warmup_s=2.0)
    fig = kernel_matrix.figures(res, 2.0)
    pk = res.tables["packets"].to_pandas()
    probe = {p["id"] for p in res.summary["probes"]}
    probe_drops = int(
        ((pk.t_enqueue_ns >= 2e9) & pk.flow.isin(probe) & ~pk.outcome.isin(["sent", "marked"])).sum()
    )
    labels = fig["labels"]
    assert set(labels) == {"down", "down_cc2"} and all(v["drops"] > 0 for v in labels.values())
    assert sum(v["drops"] for v in labels.values()) + probe_drops == fig["dirs"]["down"]["drops"]


def test_each_kernel_run_draws_its_own_seed_after_the_stored_ones(monkeypatch):
    # The emulator's own draws (a wire's random loss) follow the run's seed: runs that shared one
    # would all lose the same packets. kernel_runs numbers them on from the runs stored.
    seeds = []

    def fake_emulate(sc, seed=None, **kw):
        seeds.append(seed)
        raise StopIteration  # the harness's bookkeeping after the run is not under test

    monkeypatch.setattr(kernel_run, "emulate", fake_emulate)
    args = argparse.Namespace(**{**vars(KERNEL_MATRIX_ARGS), "repeats": 1})
    for done in (0, 3):
        with pytest.raises(StopIteration):
            kernel_run.kernel_runs(kernel_matrix.cases("loss")[0], args, done)
    assert seeds == [1, 4]


def test_the_loss_cases_lose_packets_on_the_down_wire_only_at_their_rate():
    # matrix.Case.loss_permille is the down hop's `loss` (after its queue), the up hop keeps
    # none; with it a simulated download loses about that share of the data packets that
    # crossed the hop, each loss repaired by one retransmission: within four Poisson standard
    # deviations of 1 % of them (a retransmission lost again counts twice, rarely at 1 %).
    case = next(c for c in kernel_matrix.cases("loss") if c.cc == "cubic")
    sc = kernel_matrix.scenario(case, 20.0)
    assert sc["topology"]["down"]["loss"] == 0.01 and "loss" not in sc["topology"]["up"]
    res = aqmlab.run(sc, seed=1)
    p = res.tables["packets"].to_pandas()
    crossed = int(((p.hop == "down") & (p.payload > 0) & (p.outcome == "sent")).sum())
    retx = int(res.tables["flows"].to_pandas().query("kind == 'tcp'").retransmits.sum())
    expected = 0.01 * crossed
    assert abs(retx - expected) <= 4 * expected**0.5 + 2, (retx, crossed)


def test_the_simulated_paths_carry_the_emulated_hosts_own_time_one_draw_a_seed():
    # matrix.HOST_LATENCY_US: the kernel's hosts take tens of microseconds per round trip that
    # the model's NIC serialisation leaves out; each seed adds one draw from that range to every
    # flow's base RTT, the path's (160 ms) and a flow's own (10 ms) alike, and none without it.
    # With `host_jitter_us` (run.py's --host-jitter) that much of it is per packet: each host's
    # noise, mean half of it per host, so the fixed part is that much shorter and the mean per
    # round trip the same.
    lo, hi = kernel_matrix.HOST_LATENCY_US
    j = 40.0
    case = kernel_matrix.Case("pfifo", "rtt_pair", 50, 160, rtt2_ms=10)
    draws = []
    for seed in range(1, 9):
        sc = kernel_matrix.sim_scenario(case, 5.0, seed=seed)
        assert "host_jitter" not in sc["topology"]
        extra = float(sc["topology"]["rtt"].removesuffix("us")) - 160e3
        own = [float(f["rtt"].removesuffix("us")) - 10e3 for f in sc["flows"] if "rtt" in f]
        assert lo <= extra < hi and own == [pytest.approx(extra, abs=1e-3)], (seed, extra, own)
        assert kernel_matrix.sim_scenario(case, 5.0, seed=seed)["topology"]["rtt"] == sc["topology"]["rtt"]
        noisy = kernel_matrix.sim_scenario(case, 5.0, seed=seed, host_jitter_us=j)
        assert noisy["topology"]["host_jitter"] == "40us"
        assert float(noisy["topology"]["rtt"].removesuffix("us")) - 160e3 == pytest.approx(
            extra - j, abs=1e-3
        )
        draws.append(extra)
    assert len(set(draws)) == len(draws)
    plain = kernel_matrix.sim_scenario(case, 5.0, seed=1, host_latency=False, host_jitter_us=j)
    assert plain["topology"]["rtt"] == "160ms" and "host_jitter" not in plain["topology"]
    assert [f["rtt"] for f in plain["flows"] if "rtt" in f] == ["10ms"]
