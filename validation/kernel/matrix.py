"""The cases of the simulation-vs-kernel matrix and the figures taken from each run.

A case is one scenario (a discipline, a traffic mix, a rate, a base RTT, a congestion
controller) that both `aqmlab.run` (the simulated TCP) and `aqmlab emulate` (the kernel's TCP
through the same path and qdisc code) can run. `cases(selection)` lists them; `scenario(case)`
writes the scenario both sides run; `figures(result, warmup)` takes the numbers a cell compares.
run.py drives them; compare.py judges and prints them. Kept apart from both so that the test
suite's short form (tests/python/test_emulate.py) uses the same definitions.
"""

from __future__ import annotations

import functools
import itertools
import json
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import aqmlab
from aqmlab import metrics
from aqmlab.emulate.plans import IPERF3_COOKIE_B, FlowPlan
from aqmlab.reproduce.l4s2020 import setup as l4s

QDISCS = ["pfifo", "codel", "pie", "fq_codel", "cake", "red", "sfq", "fq_pie"]
# A flow mix per name: each entry is one `[[flows]]` group. The probe (a 100 ms ping) is in all.
TRAFFIC = ["bulk1", "bulk4", "rrul_be", "voip_up", "web_bulk", "step", "rtt_mix", "rtt_pair", "cc_pair"]
RATES_MBPS = [1, 10, 100]
RTTS_MS = [10, 50, 150]
CCS = ["cubic", "bbr"]
# The labels of the TCP flow classes, by the direction their data takes.
TCP_CLASSES = {"down": ["down", "web", "near", "down_cc2"], "up": ["up", "near_up"]}
# `rtt_mix`: a download over the path's RTT beside one whose own RTT is this fraction of it
# (per-flow access delays, as the simulator and the emulator build them).
NEAR_RTT_FRACTION = 0.2
# The rate step of `step`: the down link's rate falls from 50 to 5 Mbit/s half-way.
STEP_MBPS = (50, 5)
# G.711 over RTP: 160 B of voice + 12 RTP + 8 UDP + 20 IP every 20 ms (64 kbit/s of payload).
VOIP_PACKET_B = 200
VOIP_RATE = "80kbps"
# `web_bulk`'s short transfers: a 100 kB object (a median web page's size order) every 3 s.
WEB_BYTES = "100KB"
WEB_EVERY_S = 3
# The kernel's flows begin when iperf3's control exchange lets them (src/iperf_server_api.c
# `iperf_run_server`: the server enters TEST_RUNNING, tells its client so, and in reverse mode
# sends from then on; src/iperf_client_api.c `iperf_run_client`: a client sends once that message
# has reached it). So a download's data begins at its server's TEST_RUNNING and an upload's one
# trip of that message later, down the path and behind the downloads' first windows: in traced
# two-way runs the uploads' data began 30-510 ms after the downloads' (rtt / 2 plus up to 40
# packet times; validation/kernel/README.md), though they had connected with them. The simulated
# side draws each flow's start uniformly over this many ms after its nominal one and makes a
# later group's data begin as much later as the kernel's did (`harness_lags`, from the
# `first_data_s` of one kernel run drawn per seed; no lag for a case whose kernel runs did not
# record them): by opening
# its connections together and holding their first write (`first_writes`), as the kernel's
# streams did (every SYN of a traced two-way run within 15 ms), as long before the data as
# iperf3's (`connect_early`; an iperf3 client writes its cookie first, `preamble`), or, without
# `hold_writes`, by
# opening them that much later (the harness until 2026-11-27, whose later handshakes crossed
# the queue the first group had built: an upload's first RTT sample, and BBR's minimum RTT,
# then carried it). Flows told to start at one instant start at the same
# nanosecond in the model, and a discipline without randomness (CoDel, FIFO) then gives one and
# the same trajectory for every seed: one sample of a system whose two-way queues move by a third
# when the starts move by a few milliseconds.
START_SPREAD_MS = 20
# iperf3's hosts' own work in its start: from a cookie's arrival to the first data segment, one
# round trip or half of one later (`connect_early`). Traced at 100 Mbit/s and 50 ms (two runs,
# eight upload streams: each one's data left its client 3.4-6.8 ms more than a round trip after
# its cookie, 4.3 ms at the median).
IPERF3_CONTROL_S = 0.004
# How much after the first iperf3 test's streams the kernel's later test (the emulator starts its
# clients in the scenario's order) opened its own, its first SYN after the first test's, in seven
# traced two-way runs (`rrul_be`: the FIFO at 1, 10 and 100 Mbit/s, CoDel at 100 Mbit/s and at
# 10 Mbit/s over 150 ms, PIE at 100 and 10 Mbit/s). Which side of the other test's first windows
# an upload's cookie is acknowledged on follows from it (`connect_early`). A case whose own
# kernel runs recorded their connections (`syn_s`) draws from those instead
# (`recorded_connect_lags`).
TRACED_CONNECT_LAGS_MS = (11.5, 9.8, 14.7, 4.1, 6.1, 3.2, 3.4)
# The emulated hosts' own time per round trip (us), beyond the NIC serialisation both sides
# model: the kernel's receiver takes 25-35 us more than the model's (p10-p50; p90 38-62) from a
# data segment leaving the bottleneck to its ACK reaching the reverse hop, and its sender 23-31
# us more (p10-p50; p90 41) from an ACK leaving the reverse hop to the data it releases reaching
# the forward hop (two kernels, the forwarder and its TUNs on two CPUs; traced at 10 and 50
# Mbit/s, validation/kernel/README.md section "The hosts' own time"). A drop-tail queue's phase
# effects turn on fractions of a packet time, so each simulated seed adds one value drawn
# uniformly from this range to every flow's base RTT (`sim_scenario`'s `host_latency`).
HOST_LATENCY_US = (50.0, 80.0)
# Within a group (iperf3's streams of one test), the kernel's flows began their data as each
# run recorded (`first_data_s`): most often 0.4-0.5 ms apart in stream order, in some runs with
# a stream 3-12 ms (at 10 ms RTT up to 75 ms) after the others. A group of several flows of the
# simulated side takes, per seed, the offsets of one such recorded group (`recorded_offsets`:
# the same group of a stored case with the same traffic, rate, RTT and start order, any
# discipline or controller) and holds each flow's first write by its offset, its flows
# connecting together; the uniform draw over `START_SPREAD_MS` stays for a flow alone in its
# group and where no run recorded its starts. The draw matters: two-way CoDel at 100 Mbit/s
# reads p50 13.8 ms down over 20 ms of uniform spread and 22.5 over 1 ms (12 seeds), 18.9 with
# the recorded offsets (96 seeds), the kernel 17.6 (validation/kernel/README.md, "The streams'
# recorded starts").
OUT = Path(__file__).resolve().parent / "out"


@dataclass(frozen=True)
class Case:
    qdisc: str
    traffic: str
    rate_mbps: int
    rtt_ms: int
    cc: str = "cubic"
    # `rtt_pair`'s second flow's base RTT (ms); the queue's limit in packets; `cc_pair`'s
    # second flow's congestion controller
    rtt2_ms: int = 0
    limit_p: int = 1000
    cc2: str = ""
    # random loss on the down path's wire after the queue, per mille (`loss` selection)
    loss_permille: int = 0
    # `rrul_be`: the downloads start this much after the uploads (`start_order`, `upload_lag`)
    down_late_ms: int = 0
    # classic ECN (RFC 3168) on every TCP flow and the bottleneck's discipline marking (`ecn`
    # selection; the kernel's namespaces then run net.ipv4.tcp_ecn = 1)
    ecn: bool = False
    # `rrul_be`: the uploads start this much after the downloads (`upload_lag` selection)
    up_late_ms: int = 0

    @property
    def id(self) -> str:
        rtt = f"{self.rtt_ms}ms" + (f"+{self.rtt2_ms}ms" if self.rtt2_ms else "")
        limit = f"-{self.limit_p}p" if self.limit_p != 1000 else ""
        loss = f"-loss{self.loss_permille}pm" if self.loss_permille else ""
        cc = self.cc + (f"+{self.cc2}" if self.cc2 else "")
        late = f"-downlate{self.down_late_ms}ms" if self.down_late_ms else ""
        late += f"-uplate{self.up_late_ms}ms" if self.up_late_ms else ""
        ecn = "-ecn" if self.ecn else ""
        return f"{self.traffic}-{self.qdisc}-{self.rate_mbps}m-{rtt}{limit}{loss}{late}{ecn}-{cc}"

    def as_dict(self) -> dict:
        return asdict(self)


def cases(selection: str) -> list[Case]:
    """The cases of a named selection (`SELECTIONS`), in run order, without repeats."""
    if selection not in SELECTIONS:
        raise ValueError(f"selection {selection!r}; allowed: {', '.join(SELECTIONS)}")
    seen: dict[str, Case] = {}
    for c in SELECTIONS[selection]():
        seen.setdefault(c.id, c)
    return list(seen.values())


def _core() -> list[Case]:
    """Every discipline under every traffic mix at 10 Mbit/s, 50 ms, CUBIC (but the RTT mixes)."""
    return [Case(q, t, 10, 50) for t in TRAFFIC if t not in PAIRS for q in QDISCS]


# The traffic mixes of two unlike flows, each with its own selection.
PAIRS = ("rtt_mix", "rtt_pair", "cc_pair")
# `cc_pair`'s shallow FIFO: one bandwidth-delay product at 10 Mbit/s and 50 ms (62.5 kB).
BDP_10M_50MS_P = 42


def _cc_pair() -> list[Case]:
    """CUBIC against BBR: one download of each through a deep FIFO (1000 packets), a FIFO of one
    BDP, CoDel, PIE and fq_codel at 10 Mbit/s, 50 ms. Which takes more depends on the buffer
    (BBR's window is two of its BDP estimates whatever the queue; CUBIC fills the buffer)."""
    both = {"cc": "cubic", "cc2": "bbr"}
    return [
        Case("pfifo", "cc_pair", 10, 50, **both),
        Case("pfifo", "cc_pair", 10, 50, limit_p=BDP_10M_50MS_P, **both),
    ] + [Case(q, "cc_pair", 10, 50, **both) for q in ("codel", "pie", "fq_codel")]


def _rtt_mix() -> list[Case]:
    """RTT unfairness: a 50 ms and a 10 ms download sharing the bottleneck."""
    return [Case(q, "rtt_mix", 10, 50) for q in ("pfifo", "codel", "pie", "fq_codel")]


def _rates() -> list[Case]:
    """The rate axis: 1 and 100 Mbit/s for the single-queue AQMs, FIFO and fq_codel."""
    qd = ["pfifo", "codel", "pie", "fq_codel"]
    return [Case(q, t, r, 50) for r in (1, 100) for t in ("bulk4", "rrul_be") for q in qd]


# l4s2020's pfifo pairs whose winner the model and the study's one run disagree on
# (docs/studies.md): (rate, RTT pair) as the study's setup names them.
L4S_PAIRS = (("50", "80/20"), ("50", "160/10"), ("10", "80/20"))


def _l4s_pairs() -> list[Case]:
    """`L4S_PAIRS`: two CUBIC uploads at their own RTTs through the study's FIFO (its limit at
    that rate: l4s.batch `pfifo_limit`), counted over D_SS's last minute of 180 s, each direction
    shaped by HTB as the testbed's was (`fl`: `qdisc bidir htb RATE QDISC`; `scenario`)."""
    out = []
    for rate, pair in L4S_PAIRS:
        far, near = l4s.RTT_PAIRS[pair]
        out.append(
            Case("pfifo", "rtt_pair", l4s.RATES[rate], far, rtt2_ms=near, limit_p=l4s.PFIFO_LIMIT[rate])
        )
    return out


def _rtts() -> list[Case]:
    """The RTT axis: 10 and 150 ms at 10 Mbit/s."""
    qd = ["pfifo", "codel", "pie", "fq_codel"]
    return [Case(q, t, 10, rtt) for rtt in (10, 150) for t in ("bulk4", "rrul_be") for q in qd]


def _bbr() -> list[Case]:
    """The kernel's BBR against the model's."""
    return [
        Case(q, t, 10, 50, "bbr")
        for t in ("bulk1", "bulk4", "rrul_be")
        for q in ("pfifo", "codel", "fq_codel")
    ]


def _short() -> list[Case]:
    """The test suite's short form: one-way and two-way CoDel, two-way fq_codel."""
    return [
        Case("codel", "bulk1", 10, 50),
        Case("codel", "rrul_be", 10, 50),
        Case("fq_codel", "rrul_be", 10, 50),
    ]


def _low_rtt() -> list[Case]:
    """A LAN's RTT: 2 ms at 100 Mbit/s, one and four downloads through a FIFO and fq_codel."""
    return [Case(q, t, 100, 2) for t in ("bulk1", "bulk4") for q in ("pfifo", "fq_codel")]


def _limit() -> list[Case]:
    """The emulator's own limit: one bulk flow through a FIFO at rising rates, 10 ms; where
    the kernel's goodput falls below the simulated one, the forwarder no longer keeps up."""
    return [Case("pfifo", "bulk1", r, 10) for r in (100, 200, 400, 800)]


def _home() -> list[Case]:
    """The built-in `cake_home` link as one host can run it (the emulator has one client host):
    CAKE shaping a 25 / 2.5 Mbit/s line at 20 / 2 Mbit/s, 40 ms, five downloads and a G.711 call.
    Issue 50 opened with its retransmission timeouts (13-20 per flow under the `rfc` profile)."""
    return [Case("cake", "home", 20, 40)]


# The two-way cells measured after their start (the `steady*` selections, `WINDOW_S`): the
# disciplines, and each selection's rate (Mbit/s) and RTT (ms).
STEADY_QDISCS = ("pfifo", "codel", "pie", "fq_codel")
STEADY = {"steady": (10, 50), "steady100": (100, 50), "steady150ms": (10, 150), "long100": (100, 50)}


def _steady(selection: str) -> list[Case]:
    """`rrul_be` through `STEADY_QDISCS` at the selection's rate and RTT (`STEADY`)."""
    rate, rtt = STEADY[selection]
    return [Case(q, "rrul_be", rate, rtt) for q in STEADY_QDISCS]


def _rrul40() -> list[Case]:
    """`rrul_be` through CoDel and PIE at 10 and 100 Mbit/s, 50 ms, CUBIC, in the run this
    comparison began with: 40 s, statistics from 15 s (the window `WINDOW_S` gives it)."""
    return [Case(q, "rrul_be", rate, 50) for rate in (10, 100) for q in ("codel", "pie")]


def _upload_lag() -> list[Case]:
    """`rrul40`'s two-way PIE at 100 Mbit/s with the uploads' data some 20 ms sooner and later
    than iperf3 starts them by itself (31-37 ms after the downloads'): the start's two modes
    (validation/kernel/README.md, "The start at 100 Mbit/s") against the uploads' lag, on both
    sides, the model drawing its starts from each case's own kernel runs."""
    return [Case("pie", "rrul_be", 100, 50, down_late_ms=20), Case("pie", "rrul_be", 100, 50, up_late_ms=20)]


def _loss() -> list[Case]:
    # One download through a FIFO with random loss on the wire behind it: the senders' answer to
    # losses the queue did not cause (an open loop: no AQM feeds back on the answer).
    return [Case("pfifo", "bulk1", 10, 50, cc=cc, loss_permille=10) for cc in ("bbr", "cubic")]


def _ecn() -> list[Case]:
    """Classic ECN (RFC 3168): four downloads and `rrul_be` through the marking AQMs at 10
    Mbit/s, 50 ms, every TCP flow negotiating ECN: the receivers' and senders' ECN rules."""
    return [Case(q, t, 10, 50, ecn=True) for t in ("bulk4", "rrul_be") for q in ("codel", "pie", "fq_codel")]


def _start_order() -> list[Case]:
    # Two-way traffic through the deep FIFO at 100 Mbit/s with the downloads started 100 ms
    # after the uploads, where iperf3 starts the uploads' data one control message after the
    # downloads': whether the group that starts first keeps the larger queue (the kernel's down
    # queue sits above its up queue in `rates`, `steady100` and `long100`).
    return [Case("pfifo", "rrul_be", 100, 50, down_late_ms=100)]


def _all() -> list[Case]:
    return list(itertools.chain(_core(), _rates(), _rtts(), _bbr(), _rtt_mix(), _low_rtt()))


SELECTIONS = {
    "core": _core,
    "rates": _rates,
    "rtts": _rtts,
    "bbr": _bbr,
    "limit": _limit,
    "short": _short,
    "home": _home,
    "rtt_mix": _rtt_mix,
    "low_rtt": _low_rtt,
    "l4s_pairs": _l4s_pairs,
    "cc_pair": _cc_pair,
    "loss": _loss,
    "start_order": _start_order,
    "ecn": _ecn,
    "rrul40": _rrul40,
    "upload_lag": _upload_lag,
    **{name: functools.partial(_steady, name) for name in STEADY},
    "all": _all,
}
# Run length and warm-up (s) per selection, where not the default `DEFAULT_WINDOW_S`. Eight
# CUBIC flows at 100 Mbit/s leave their start's overshoot 20-45 s in (the model's queue per
# second, four seeds of `rrul_be` through PIE): statistics after 10 s measure how long that
# lasts as much as the steady state, so `steady100` runs 60 s and counts from 30 s. Over 150 ms
# the start's aftermath reaches past 10 s too (the kernel's two-way CoDel runs read 13-34 ms
# over 10-30 s, 15-18 ms over 30-90 s): `steady150ms` and `steady` (the `core` two-way cells)
# count from 30 s over 60 s (CUBIC's epochs last some 3 s at 150 ms). The `steady*` cases are
# other selections' under another window, so `all` (one window) leaves them out. `long100` is
# `steady100` over 300 s runs: some of the model's seeds keep their start's overflows past 60 s
# (two-way PIE, twelve seeds: p95 47.6 ms over 30-60 s, 34.0 over 30-300 s). `cc_pair` counts from
# 20 s over 60 s: past BBR's start-up and its first ProbeRTT (10 s after its min RTT was taken).
DEFAULT_WINDOW_S = (30.0, 10.0)
# Simulated runs per case, where not `DEFAULT_SEEDS`: a two-way PIE cell's mean over 24 seeds
# moved by a tenth from one draw of the flows' starts to the next (p50 20.6 and 18.8 ms, rates'
# PIE at 100 Mbit/s down, a standard error of 2 ms); 96 halve that. `long100`'s 300 s runs keep
# 24 (their means move by 2 % between draws).
DEFAULT_SEEDS = 96
SEEDS = {"long100": 24}
WINDOW_S = {
    "steady": (90.0, 30.0),
    "steady100": (60.0, 30.0),
    "steady150ms": (90.0, 30.0),
    "long100": (300.0, 30.0),
    "l4s_pairs": (180.0, 119.0),
    "cc_pair": (60.0, 20.0),
    "rrul40": (40.0, 15.0),
    "upload_lag": (40.0, 15.0),
}


def scenario(case: Case, duration_s: float, profile: str | None = None) -> dict:
    """The scenario both sides run. `profile` None leaves the TCP profile to the default."""
    rate = f"{case.rate_mbps}Mbps"
    qdisc = {"kind": case.qdisc, "ecn": True} if case.ecn else case.qdisc
    down = {"rate": rate, "qdisc": qdisc, "limit": f"{case.limit_p}p"}
    up = dict(down)
    if case.loss_permille:
        down["loss"] = case.loss_permille / 1000
    tcp = {
        "kind": "tcp",
        "cc": case.cc,
        **({"profile": profile} if profile else {}),
        **({"ecn": "classic"} if case.ecn else {}),
    }
    flows: list[dict] = []
    if case.traffic == "home":
        # cake_home.toml's line and shapers; CAKE's host isolation has one host to isolate here
        down = {"rate": "25Mbps", "qdisc": {"kind": "cake", "bandwidth": "20Mbps"}}
        up = {"rate": "2500Kbps", "qdisc": {"kind": "cake", "bandwidth": "2Mbps"}}
        flows.append({**tcp, "label": "down", "direction": "down", "count": 5, "start": "1s"})
        flows += _voip()
    elif case.traffic == "bulk1":
        flows.append({**tcp, "label": "down", "direction": "down", "start": "1s"})
    elif case.traffic in ("bulk4", "step"):
        flows.append({**tcp, "label": "down", "direction": "down", "count": 4, "start": "1s"})
    elif case.traffic == "rtt_mix":
        near = f"{case.rtt_ms * NEAR_RTT_FRACTION:g}ms"
        flows.append({**tcp, "label": "down", "direction": "down", "start": "1s"})
        flows.append({**tcp, "label": "near", "direction": "down", "start": "1s", "rtt": near})
    elif case.traffic == "cc_pair":
        flows.append({**tcp, "label": "down", "direction": "down", "start": "1s"})
        flows.append({**tcp, "cc": case.cc2, "label": "down_cc2", "direction": "down", "start": "1s"})
    elif case.traffic == "rtt_pair":
        flows.append({**tcp, "label": "up", "direction": "up", "start": "1s"})
        flows.append(
            {**tcp, "label": "near_up", "direction": "up", "start": "1s", "rtt": f"{case.rtt2_ms}ms"}
        )
    elif case.traffic == "rrul_be":
        down_at, up_at = (f"{1 + ms / 1000:g}s" for ms in (case.down_late_ms, case.up_late_ms))
        flows.append({**tcp, "label": "down", "direction": "down", "count": 4, "start": down_at})
        flows.append({**tcp, "label": "up", "direction": "up", "count": 4, "start": up_at})
    elif case.traffic == "voip_up":
        flows.append({**tcp, "label": "up", "direction": "up", "start": "1s"})
        flows += _voip()
    elif case.traffic == "web_bulk":
        flows.append({**tcp, "label": "down", "direction": "down", "start": "1s"})
        n = max(1, int((duration_s - 4) // WEB_EVERY_S))
        for k in range(n):
            flows.append(
                {**tcp, "label": "web", "direction": "down", "bytes": WEB_BYTES,
                 "start": f"{3 + k * WEB_EVERY_S}s"}
            )  # fmt: skip
    else:
        raise ValueError(f"traffic {case.traffic!r}; allowed: {', '.join(TRAFFIC)}")
    if case.traffic == "rtt_pair":
        down["shaper"] = up["shaper"] = "htb"
    if case.traffic == "step":
        hi, lo = STEP_MBPS
        down["rate"] = [["0s", f"{hi}Mbps"], [f"{duration_s / 2:g}s", f"{lo}Mbps"]]
    flows.append({"kind": "ping", "interval": "100ms"})
    return {
        "name": f"kernel_{case.id}",
        "duration": f"{duration_s:g}s",
        "topology": {"rtt": f"{case.rtt_ms}ms", "down": down, "up": up},
        "flows": flows,
        "record": {"level": "packets", "interval": "100ms"},
    }


def _voip() -> list[dict]:
    """A G.711-sized UDP stream each way (`VOIP_RATE`, `VOIP_PACKET_B`)."""
    return [
        {"kind": "udp", "label": f"voip_{d}", "direction": d, "arrivals": "cbr",
         "rate": VOIP_RATE, "packet_size": f"{VOIP_PACKET_B}B", "start": "0.5s"}
        for d in ("up", "down")
    ]  # fmt: skip


def sim_scenario(
    case: Case,
    duration_s: float,
    profile: str | None = None,
    lags: list[float] | None = None,
    hold_writes: bool = True,
    pairs=(),
    offsets: dict[int, list[tuple[float, ...]]] | None = None,
    seed: int = 1,
    cookies: bool = True,
    connects: list[tuple[float, ...]] | None = None,
    host_latency: bool = True,
    host_jitter_us: float = 0.0,
) -> dict:
    """The scenario the simulated side runs with `seed`: `scenario`'s with each group's data
    `lags` (one per TCP group, in order, s: `harness_lags`) later: with `hold_writes`, the group
    connects at its own start and holds its first write (`first_write`, `first_writes`), as the
    kernel's iperf3 streams connect together and the uploads wait for the test to begin; without,
    it connects that much later. Within a group of several flows with `offsets` for it (per TCP
    group index, `recorded_offsets`), each flow begins as much later as in one recorded group
    drawn for the seed; every other flow's start is drawn per seed over `START_SPREAD_MS` after
    its own (`start = { uniform = [...], per = "flow" }`). `pairs`: the `set_tcp` keys the caller
    puts on the flows, under which the handshakes are timed. With `cookies`, a flow whose data
    an iperf3 client sends writes iperf3's cookie first, as it connects (`preamble`,
    `FlowPlan.preamble_b`), and a later test of a set connects as much after the set's first
    as in one kernel run of `connects` drawn for the seed (`recorded_connect_lags`), else one
    of `TRACED_CONNECT_LAGS_MS`. With `host_latency`, every flow's base RTT is longer by one
    draw for the seed from `HOST_LATENCY_US`, the emulated hosts' own time. With
    `host_latency` and `host_jitter_us`, part of that time is per packet: every host of the
    scenario takes timing noise uniform in [0, host_jitter_us) on each packet it sends
    (`host_jitter`, mean half of it at each of a flow's two hosts), and the draw is shorter by
    host_jitter_us (not below 0), so that the hosts' time per round trip keeps its mean."""
    sc = scenario(case, duration_s, profile)
    if cookies:
        for f in sc["flows"]:
            if b := FlowPlan(0, f["kind"], f.get("direction", "down"), 0.0, 0.0, f).preamble_b:
                f["preamble"] = f"{b}B"
    groups = _tcp_groups(sc)
    lags = lags or [0.0] * len(groups)
    recorded = [len(ids) > 1 and bool((offsets or {}).get(k)) for k, (_, ids) in enumerate(groups)]
    writes = (
        first_writes(case, duration_s, profile, lags, pairs, recorded) if hold_writes else [0.0] * len(groups)
    )
    early = (
        connect_early(case, duration_s, lags, writes)
        if hold_writes and cookies
        else [(0.0, False)] * len(groups)
    )
    rng = np.random.default_rng([seed, zlib.crc32(case.id.encode())])
    # a later test's streams open one recorded lag after the first's, the same for all its flows
    draw = np.random.default_rng([seed, zlib.crc32(case.id.encode()), 1])
    if connects:
        late = connects[draw.integers(len(connects))]
    else:
        late = (draw.choice(TRACED_CONNECT_LAGS_MS) / 1e3,) * len(groups)
    flows, k = [], 0
    for f in sc["flows"]:
        if f["kind"] != "tcp":
            flows.append(f)
            continue
        lag, w, (a, later) = lags[k], writes[k], early[k]
        a -= late[k] if later else 0.0
        if a or later:
            # the data as before, the connection `a` sooner; a write that came once connected
            # comes one round trip after the connection opens (the handshake at its sender)
            w = a + (w or _rtt_s(case, f))
        t0 = _ms(f["start"]) + (0.0 if hold_writes else lag * 1e3) - a * 1e3
        if recorded[k]:
            drawn = offsets[k][rng.integers(len(offsets[k]))]
            for off in drawn:
                one = {**f, "count": 1}
                if hold_writes:
                    one.update(start=f"{t0:g}ms", first_write=f"{(w + off) * 1e3:.3f}ms")
                else:
                    one["start"] = f"{t0 + off * 1e3:.3f}ms"
                flows.append(one)
        else:
            f["start"] = {"uniform": [f"{t0:g}ms", f"{t0 + START_SPREAD_MS:g}ms"], "per": "flow"}
            if w:
                f["first_write"] = f"{w * 1e3:.3f}ms"
            flows.append(f)
        k += 1
    sc["flows"] = flows
    if host_latency:
        extra_us = np.random.default_rng([seed, zlib.crc32(case.id.encode()), 2]).uniform(*HOST_LATENCY_US)
        extra_us = max(extra_us - host_jitter_us, 0.0)
        for entry in (sc["topology"], *flows):
            if "rtt" in entry:
                entry["rtt"] = f"{float(entry['rtt'].removesuffix('ms')) * 1e3 + extra_us:.3f}us"
        if host_jitter_us:
            sc["topology"]["host_jitter"] = f"{host_jitter_us:g}us"
    return sc


# The switches of run.py's, trace.py's and profile.py's simulated side that set an older harness
# or change one thing of it: (flag, default, help). Kept in each results row when set (run.py).
HARNESS_SWITCHES = (
    (
        "--connect-late",
        False,
        (
            "a later simulated group connects as late as the kernel's data began, instead of connecting at its "
            "start and holding its first write (the harness until 2026-11-27)"
        ),
    ),
    (
        "--uniform-starts",
        False,
        (
            "draw each simulated flow's start uniformly over matrix.START_SPREAD_MS, not as the kernel's recorded "
            "groups began (the harness until 2026-11-27)"
        ),
    ),
    (
        "--no-cookie",
        False,
        (
            "the simulated flows neither write iperf3's cookie nor connect as long before their data as "
            "iperf3's did (the harness until 2026-11-28)"
        ),
    ),
    (
        "--no-host-latency",
        False,
        (
            "the simulated paths without the emulated hosts' own time per round trip (matrix.HOST_LATENCY_US; "
            "the harness until 2026-11-29)"
        ),
    ),
    (
        "--median-lags",
        False,
        (
            "every simulated seed's groups as late as the median of the kernel's runs (over each group's flows), "
            "not as one kernel run drawn for the seed (the harness until 2026-11-29, evening)"
        ),
    ),
    (
        "--mixed-starts",
        False,
        (
            "each simulated seed draws its groups' lag, its connections' times and each group's flows' offsets "
            "apart, the offsets from every stored kernel run of the case's start (matrix.start_key), not all "
            "three from the one kernel run drawn for it (the harness until 2026-11-29, night)"
        ),
    ),
    (
        "--host-jitter",
        0.0,
        (
            "timing noise of every simulated host, microseconds (topology.host_jitter; default 0), taken from "
            "the hosts' time per round trip (matrix.HOST_LATENCY_US), whose mean it keeps; 40 spreads the "
            "receivers' turnaround as the kernel's spreads at 100 Mbit/s (validation/kernel/README.md, "
            '"The hosts\' time, packet by packet")'
        ),
    ),
)


def harness_args(ap) -> None:
    """Adds `HARNESS_SWITCHES` to the argparse parser `ap`."""
    for flag, default, text in HARNESS_SWITCHES:
        if isinstance(default, bool):
            ap.add_argument(flag, action="store_true", help=text)
        else:
            ap.add_argument(flag, type=type(default), default=default, help=text)


def harness_defaults() -> dict:
    """Each of `HARNESS_SWITCHES` at its default: the current harness."""
    return {flag.removeprefix("--").replace("-", "_"): d for flag, d, _ in HARNESS_SWITCHES}


def cli_scenario(case: Case, a, emus: list[dict], seed: int) -> dict:
    """`sim_scenario` with `seed` as run.py's and trace.py's command line `a` asks (its duration,
    profile and `--set` keys, and `HARNESS_SWITCHES`), each group as late, its flows and its
    connections as the kernel's runs `emus` recorded them (`harness_lags`, `recorded_offsets`,
    `recorded_connect_lags`), all three from the one run drawn for the seed (`drawn_run`): the
    seed's start is that run's (validation/kernel/README.md, "One kernel run's whole start a
    seed"). With `--mixed-starts` (or `--median-lags`) each is drawn apart, the flows' offsets
    from every stored run of the case's `start_key`."""
    one = None if a.mixed_starts or a.median_lags else drawn_run(case, emus, seed)
    runs = emus if one is None else [one]
    return sim_scenario(
        case,
        a.duration,
        a.profile,
        harness_lags(case, a.duration, a.profile, runs, a.set, None if a.median_lags else seed),
        not a.connect_late,
        a.set,
        None if a.uniform_starts else recorded_offsets(case, a.duration, runs, stored=one is None),
        seed=seed,
        cookies=not a.no_cookie,
        connects=recorded_connect_lags(case, a.duration, runs),
        host_latency=not a.no_host_latency,
        host_jitter_us=a.host_jitter,
    )


def _handshakes(case: Case, duration_s: float, profile: str | None, pairs=()) -> list[float]:
    """Per TCP group, the median time from its start to its flows' first data at the nominal
    starts (s; `nominal_first_data`, `pairs` a tuple): the model's handshake."""
    sc, first = nominal_first_data(case, duration_s, profile, tuple(pairs))
    out = []
    for f, ids in _tcp_groups(sc):
        hs = [first[str(i)] - _ms(f["start"]) / 1e3 for i in ids if str(i) in first]
        out.append(float(np.median(hs)) if hs else 0.0)
    return out


def _rtt_s(case: Case, f: dict) -> float:
    """The base round trip of flow entry `f` of `case`'s scenario (s): its own `rtt`, else the
    path's."""
    return float(f.get("rtt", f"{case.rtt_ms}ms").removesuffix("ms")) / 1e3


def connect_early(
    case: Case, duration_s: float, lags: list[float], writes: list[float]
) -> list[tuple[float, bool]]:
    """Per TCP group, how much sooner than its start its connections open (s; negative: later),
    so that they open as long before the data as iperf3's did, and whether it is a later test of
    its set. An iperf3 client connects, writes its cookie once connected (one round trip), the
    cookie reaches the server (half of one) and the test begins there; a sending server (-R)
    sends at once, a sending client waits for the message that the test runs (another half);
    each after `IPERF3_CONTROL_S` of the hosts' own work. The groups of one start and one round
    trip (iperf3's control exchange takes a number of them) are a set: the kernel's iperf3
    clients, started together, open their streams within a few ms (section "Connections opened
    together"), a later test's some ms after the first's (`sim_scenario` draws it
    per seed: `recorded_connect_lags`, `TRACED_CONNECT_LAGS_MS`); the set's clients connect as long before the data of the group whose
    data comes first (`lags`) as its role asks, or at the start if that is later (the data came
    late through a queue its handshake crossed, as a short transfer's behind a bulk one's). A
    group's data leaves its sender `writes` after its start (`first_writes`; 0: once connected,
    one round trip). The model opens a download's
    connection from its sender, the server: its SYN leaves half a round trip after the client's
    would have."""
    groups = _tcp_groups(scenario(case, duration_s))

    def client_sends(f: dict) -> bool:
        return FlowPlan(0, "tcp", f["direction"], 0.0, 0.0, f).preamble_b > 0

    def key(f: dict) -> tuple:
        return f["start"], _rtt_s(case, f)

    syn = {}
    for k, (f, _) in sorted(enumerate(groups), key=lambda g: lags[g[0]]):
        if key(f) not in syn:
            rtt = _rtt_s(case, f)
            data = writes[k] or rtt
            # never after the start: data later than that came through a loaded queue
            syn[key(f)] = min(0.0, data - (2.0 if client_sends(f) else 1.5) * rtt - IPERF3_CONTROL_S)
    sets = [key(f) for f, _ in groups]
    return [
        (-(syn[sets[k]] + (0.0 if client_sends(f) else _rtt_s(case, f) / 2)), sets[k] in sets[:k])
        for k, (f, _) in enumerate(groups)
    ]


def first_writes(
    case: Case,
    duration_s: float,
    profile: str | None,
    lags: list[float],
    pairs=(),
    recorded: list[bool] | None = None,
) -> list[float]:
    """Per TCP group, when its first write comes after its start (s; 0: at once) for its data
    to begin `lags` later than it would at once: the lag plus the group's handshake, the median
    time from start to first data of its flows at the nominal starts (`nominal_first_data`); for
    a group whose flows take `recorded` offsets, the lag plus the handshake even at no lag, so
    that each offset counts from the handshake's end."""
    recorded = recorded or [False] * len(lags)
    if not any(lags) and not any(recorded):
        return [0.0] * len(lags)
    hs = _handshakes(case, duration_s, profile, tuple(pairs))
    return [
        lag + h if (lag > 0 or rec) and h else 0.0 for lag, rec, h in zip(lags, recorded, hs, strict=True)
    ]


def start_key(case: Case) -> tuple:
    """What a group's recorded starts depend on: the flows (traffic and start order), the rate
    and the RTT (the uploads' test message crosses the downloads' first windows), not the
    discipline or the controller (the streams begin before any queue is held)."""
    return (case.traffic, case.rate_mbps, case.rtt_ms, case.down_late_ms, case.up_late_ms)


@functools.cache
def _stored_first_data(key: tuple) -> tuple[tuple[str, dict], ...]:
    """(case id, `first_data_s`) of every kernel run stored in a selection's results file
    (`OUT`/<selection>.json) whose case has `start_key` `key`."""
    out = []
    for sel in SELECTIONS:
        path = OUT / f"{sel}.json"
        if not path.exists():
            continue
        for row in json.loads(path.read_text()):
            if start_key(Case(**row["case"])) == key:
                out += [(row["id"], run["first_data_s"]) for run in row["emu"] if run.get("first_data_s")]
    return tuple(out)


def recorded_offsets(
    case: Case, duration_s: float, emus: list[dict], stored: bool = True
) -> dict[int, list[tuple[float, ...]]]:
    """Per TCP group index of `case` with several flows, how much later than the group's first
    each of its flows began its data (s, in flow order), one tuple per kernel run that recorded
    it: `emus` (the case's own runs) and, with `stored`, the stored runs of the other cases with
    its `start_key`."""
    others = _stored_first_data(start_key(case)) if stored else ()
    runs = [fd for cid, fd in others if cid != case.id]
    runs += [e["first_data_s"] for e in emus if e.get("first_data_s")]
    out: dict[int, list[tuple[float, ...]]] = {}
    for k, (_, ids) in enumerate(_tcp_groups(scenario(case, duration_s))):
        for fd in runs:
            t = [fd.get(str(i)) for i in ids]
            if len(ids) > 1 and None not in t:
                out.setdefault(k, []).append(tuple(x - min(t) for x in t))
    return out


def recorded_connect_lags(case: Case, duration_s: float, emus: list[dict]) -> list[tuple[float, ...]]:
    """Per kernel run of `emus` that recorded when its connections opened (`syn_s`), how much
    after the first SYN of its set's first group (`connect_early`: the groups of one start and one
    round trip) each TCP group's first SYN came (s, one per group of `scenario`, in order; 0 for
    a set's first group). Both sides' clients open every connection, so all these SYNs cross the
    same hop."""
    groups = _tcp_groups(scenario(case, duration_s))
    sets = [(f["start"], _rtt_s(case, f)) for f, _ in groups]
    out = []
    for run in emus:
        syn = run.get("syn_s") or {}
        first = [min((syn[str(i)] for i in ids if str(i) in syn), default=None) for _, ids in groups]
        if None in first:
            continue
        lead = {}
        for key, t in zip(sets, first, strict=True):
            lead.setdefault(key, t)
        out.append(tuple(t - lead[key] for key, t in zip(sets, first, strict=True)))
    return out


def _tcp_groups(sc: dict) -> list[tuple[dict, range]]:
    """Each TCP flow entry of `sc` with the flow ids its `count` gives it, in order."""
    out, fid = [], 0
    for f in sc["flows"]:
        n = f.get("count", 1)
        if f["kind"] == "tcp":
            out.append((f, range(fid, fid + n)))
        fid += n
    return out


@functools.cache
def nominal_first_data(
    case: Case, duration_s: float, profile: str | None, pairs=()
) -> tuple[dict, dict[str, float]]:
    """`scenario` with every flow at its nominal start (`pairs`, a tuple, its `set_tcp` keys),
    run with seed 1, and when each TCP flow's data began there (`first_data_s`); kept per case,
    as `harness_lags` and `first_writes` both read it."""
    sc = set_tcp(scenario(case, duration_s, profile), list(pairs))
    return sc, first_data_s(aqmlab.run(sc, seed=1))


def first_data_s(res) -> dict[str, float]:
    """When each TCP flow's data began (flow id -> s): its first data segment's arrival at a hop
    of its data's direction, from the packets table, the same rule on both sides (a segment of
    more payload than iperf3's cookie, which the kernel's uploads send first)."""
    pk = res.tables["packets"]
    flow = pk.column("flow").to_numpy()
    payload = pk.column("payload").to_numpy()
    dirs = np.asarray(pk.column("dir").to_pylist(), dtype=object)
    t_in = pk.column("t_enqueue_ns").to_numpy()
    out = {}
    for f in res.tables["flows"].to_pylist():
        sel = (flow == f["flow"]) & (payload > IPERF3_COOKIE_B) & (dirs == f["direction"])
        if f["kind"] == "tcp" and sel.any():
            out[str(f["flow"])] = float(t_in[sel].min()) / 1e9
    return out


def syn_s(res) -> dict[str, float]:
    """When each TCP flow's connection opened (flow id -> s): its first SYN's arrival at a hop,
    from the packets table (the kernel's downloads are opened by their client, up; the model's
    by their server, down)."""
    pk = res.tables["packets"]
    flow = pk.column("flow").to_numpy()
    flags = pk.column("tcp_flags").to_numpy()
    t_in = pk.column("t_enqueue_ns").to_numpy()
    syn = (flags & SYN_FLAG != 0) & (flags & ACK_FLAG == 0)
    out = {}
    for f in res.tables["flows"].to_pylist():
        sel = syn & (flow == f["flow"])
        if f["kind"] == "tcp" and sel.any():
            out[str(f["flow"])] = float(t_in[sel].min()) / 1e9
    return out


def harness_lags(
    case: Case, duration_s: float, profile: str | None, emus: list[dict], pairs=(), seed: int | None = 1
) -> list[float] | None:
    """How much later than the model's each TCP group's data began in one kernel run of `emus`
    drawn for `seed` (s, one per group of `scenario`, in order), relative to the run's soonest
    flow; None when no kernel run recorded its flows' `first_data_s`. A flow's lateness is the
    kernel's first data less the model's in a run with every flow at its nominal start (seed 1,
    `pairs` its `set_tcp` keys), so the handshake counts on both sides; a group's is its first
    flow's (the others follow it by `recorded_offsets`). One run a seed, as the kernel's lag
    varies from run to run (iperf3's uploads 27-46 ms after its downloads in twelve runs of
    `rrul40`'s PIE at 100 Mbit/s) and the start's mode with it (validation/kernel/README.md,
    "The uploads' lag, run by run"). With `seed` None, one lag a group for every seed, the median
    over its flows and the runs (the harness until 2026-11-29, evening). The kernel's lateness
    before its first flow (iperf3's exchange) is left out: it moves every flow alike."""
    kernel = [e["first_data_s"] for e in emus if e.get("first_data_s")]
    if not kernel:
        return None
    sc, nominal = nominal_first_data(case, duration_s, profile, tuple(pairs))

    def lateness(run: dict) -> dict:
        d = {fid: run[fid] - nominal[fid] for fid in run if fid in nominal}
        first = min(d.values())
        return {fid: v - first for fid, v in d.items()}

    groups = [[str(i) for i in ids] for _, ids in _tcp_groups(sc)]
    if seed is None:
        late = [lateness(run) for run in kernel]
        return [float(np.median([r[i] for r in late for i in ids if i in r] or [0.0])) for ids in groups]
    run = lateness(drawn_run(case, emus, seed)["first_data_s"])
    return [min((run[i] for i in ids if i in run), default=0.0) for ids in groups]


def drawn_run(case: Case, emus: list[dict], seed: int) -> dict | None:
    """The kernel run of `emus` whose start seed `seed` takes (among those that recorded their
    flows' `first_data_s`; stream `[seed, case, 3]`), or None when none did."""
    runs = [e for e in emus if e.get("first_data_s")]
    if not runs:
        return None
    return runs[np.random.default_rng([seed, zlib.crc32(case.id.encode()), 3]).integers(len(runs))]


def _key_value(kv: str) -> tuple[str, object]:
    """KEY=VALUE: a VALUE that reads as JSON (true, 3, {"hystart_round": "passed"}) is that,
    else a string."""
    k, _, v = kv.partition("=")
    try:
        return k, json.loads(v)
    except ValueError:
        return k, v


def set_qdisc(sc: dict, pairs: list[str]) -> dict:
    """`sc` with each KEY=VALUE of `pairs` on the bottleneck's discipline both ways (a run that
    changes the discipline on both sides: the emulator runs the same one)."""
    for d in ("down", "up"):
        hop = sc["topology"][d]
        q = hop["qdisc"] if isinstance(hop["qdisc"], dict) else {"kind": hop["qdisc"]}
        hop["qdisc"] = {**q, **dict(map(_key_value, pairs))}
    return sc


def set_tcp(sc: dict, pairs: list[str]) -> dict:
    """`sc` with each KEY=VALUE of `pairs` on every TCP flow (a run that changes one thing); a
    VALUE as `_key_value` reads it, and a table merges into the flow's own (`cc_params`)."""
    for kv in pairs:
        k, val = _key_value(kv)
        for f in sc["flows"]:
            if f["kind"] == "tcp":
                f[k] = {**f[k], **val} if isinstance(val, dict) and isinstance(f.get(k), dict) else val
    return sc


def _ms(t: str) -> float:
    """A start time of `scenario` ("1s", "3s") in milliseconds."""
    return float(t.removesuffix("s")) * 1e3


def packet_time_ms(case: Case) -> float:
    """One 1500-byte packet's transmission time at the case's (lowest) rate."""
    rate = STEP_MBPS[1] if case.traffic == "step" else case.rate_mbps
    return 1500 * 8 / (rate * 1e6) * 1e3


# TCP's SYN and ACK flags (RFC 9293 3.1), as the packets table's `tcp_flags` holds them.
SYN_FLAG, ACK_FLAG = 0x02, 0x10
# A TCP segment above this many IP bytes carries data (20 B of IP, at most 60 of TCP header).
MAX_HEADER_B = 80


def _transfer_s(pk, finite: dict) -> dict[int, float]:
    """Each complete finite transfer's time on the path: from its first data segment's arrival at
    a hop of its data's direction to its last data segment's departure, from the packets table,
    the same on both sides. The flows' own completion times are not comparable: the kernel's
    transfer starts after iperf3's control exchange (a cookie and state messages over their own
    round trips), and its reports give no completion time. A transfer is complete when the data
    that left that hop covers its bytes (each sequence number counted once): one the run's end
    cut short, as the kernel's late transfers behind a deep queue, would count a fraction of its
    time (its first round alone: 0 s)."""
    flow = pk.column("flow").to_numpy()
    size = pk.column("size").to_numpy()
    seq = pk.column("seq").to_numpy()
    payload = pk.column("payload").to_numpy()
    dirs = np.asarray(pk.column("dir").to_pylist(), dtype=object)
    sent = np.isin(np.asarray(pk.column("outcome").to_pylist(), dtype=object), ["sent", "marked"])
    t_in, t_out = pk.column("t_enqueue_ns").to_numpy(), pk.column("t_out_ns").to_numpy()
    out = {}
    for fid, f in finite.items():
        sel = (flow == fid) & (size > MAX_HEADER_B) & (dirs == f["direction"])
        left = dict(zip(seq[sel & sent].tolist(), payload[sel & sent].tolist(), strict=True))
        if sel.any() and sum(left.values()) >= f["bytes_target"]:
            out[fid] = float(t_out[sel].max() - t_in[sel].min()) / 1e9
    return out


# A window at most this many segments, reached from at least `_OPEN` segments, is a timeout's
# (Linux tcp_enter_loss sets one segment; a fast recovery with PRR keeps about half).
_COLLAPSED, _OPEN = 2.5, 4.0


def _window_timeouts(fs) -> int:
    """Timeouts read from the TCP flows' window series (every 100 ms on both sides), the same
    rule for the model and the kernel: the window falls to at most two segments from at least
    four. The kernel's counters (`TCPTimeouts`) count every socket of its namespaces, iperf3's
    control connections too, which time out behind a deep queue where the data flows do not.
    Meant for paths of many packets: where a fair share is a few packets (1 Mbit/s, 50 ms), fast
    recoveries leave windows of two segments as well."""
    flow = fs.column("flow").to_numpy()
    t = fs.column("t_ns").to_numpy()
    segs = fs.column("cwnd_bytes").to_numpy(zero_copy_only=False).astype(float) / 1448
    n = 0
    for f in np.unique(flow):
        w = segs[flow == f][np.argsort(t[flow == f], kind="stable")]
        w = w[~np.isnan(w) & (w > 0)]
        was_open = np.maximum.accumulate(w) >= _OPEN
        low = w <= _COLLAPSED
        n += int((low[1:] & ~low[:-1] & was_open[:-1]).sum())
    return n


# A round trip's data arriving at the bottleneck as one burst: counted in PIE's update steps
# (RFC 8033's T_UPDATE, 15 ms), a block of two seconds whose counts vary more than this (their
# coefficient of variation) is bursty. Two-way traffic starts that way on both sides (each
# direction's ACKs leave the other queue in trains), and the queue's head then saws from ~20 to
# ~80 ms each round trip (validation/kernel/README.md, "Two-way PIE at 10 Mbit/s: a start that
# comes in bursts").
BURST_BIN_S = 0.015
BURST_BLOCK_S = 2.0
BURST_CV = 1.2


def bursty_until_s(t_in_ns: np.ndarray, start_s: float, end_s: float) -> float:
    """When the data arriving at a bottleneck stops coming as one burst a round trip: the start
    of the first `BURST_BLOCK_S` block from `start_s` on whose counts per `BURST_BIN_S` have a
    coefficient of variation below `BURST_CV` (`end_s` when none has)."""
    t = np.sort(t_in_ns) / 1e9
    per_block = round(BURST_BLOCK_S / BURST_BIN_S)
    for b0 in np.arange(start_s, end_s - BURST_BLOCK_S + 1e-9, BURST_BLOCK_S):
        edges = b0 + BURST_BIN_S * np.arange(per_block + 1)
        n = np.diff(np.searchsorted(t, edges))
        if n.mean() > 0 and n.std() / n.mean() < BURST_CV:
            return float(b0)
    return float(end_s)


def _acks_per_seg(data: np.ndarray, acks: np.ndarray) -> float | None:
    """The ACKs that came back per TCP data segment sent one way (both masks over the
    bottleneck's packets after the warm-up, the ACKs those of the other direction)."""
    n = int(data.sum())
    return int(acks.sum()) / n if n else None


def timeline(res, step_s: float = 1.0) -> list[dict]:
    """Per direction and step: packets in, drops, sojourn p50 / p95 of what was sent (ms), and
    the summed congestion windows of the TCP flows whose data goes that way (segments)."""
    pk = res.tables["packets"].to_pandas()
    fs = res.tables["flow_series"].to_pandas()
    flows = res.tables["flows"].to_pandas()
    end = res.meta["duration_ns"] / 1e9
    rows = []
    for d in ("down", "up"):
        p = pk[pk.dir == d]
        tcp = flows[(flows.kind == "tcp") & (flows.direction == d)].flow
        for t0 in np.arange(0, end, step_s):
            x = p[(p.t_enqueue_ns >= t0 * 1e9) & (p.t_enqueue_ns < (t0 + step_s) * 1e9)]
            sent = x[x.outcome.isin(["sent", "marked"])]
            soj = (sent.t_out_ns - sent.t_enqueue_ns) / 1e6
            w = fs[(fs.flow.isin(tcp)) & (fs.t_ns >= t0 * 1e9) & (fs.t_ns < (t0 + step_s) * 1e9)]
            # each flow's mean window over the step, summed: the two sides sample at different
            # instants (the kernel's flows at their own iperf3 intervals), so no instant has them all
            cwnd = w.groupby("flow").cwnd_bytes.mean().sum() / 1448 if len(w) else 0.0
            rows.append(
                {
                    "dir": d,
                    "t": float(t0),
                    "in": len(x),
                    "drops": int(len(x) - len(sent)),
                    "q50": float(np.median(soj)) if len(soj) else 0.0,
                    "q95": float(np.percentile(soj, 95)) if len(soj) else 0.0,
                    "cwnd": float(cwnd),
                }
            )
    return rows


def figures(res, warmup_s: float) -> dict:
    """What a cell compares, after the warm-up: per direction the bottleneck's sojourn p50 / p95
    / p99 (every transmitted packet, ms), its drops and CE marks, the ACKs that came back per
    TCP data segment (`acks_per_seg`, arrivals at both bottlenecks); per flow label the goodput
    (Mb/s, summed), the packets of its flows dropped at any hop after the warm-up, UDP loss (%),
    short transfers' mean completion time (s); the probe's RTT
    p50 (ms); and over the whole run the TCP retransmissions, timeouts (simulated only) and the
    timeouts the windows show (both sides, `_window_timeouts`), when each TCP flow's data began
    (`first_data_s`) and when its connection opened (`syn_s`)."""
    t, meta, s = res.tables, res.meta, res.summary
    pk = t["packets"]
    t_enq = pk.column("t_enqueue_ns").to_numpy()
    outcome = np.asarray(pk.column("outcome").to_pylist(), dtype=object)
    dirs = np.asarray(pk.column("dir").to_pylist(), dtype=object)
    after = t_enq >= warmup_s * 1e9
    tcp_ids = [f["flow"] for f in t["flows"].to_pylist() if f["kind"] == "tcp"]
    tcp_data = np.isin(pk.column("flow").to_numpy(), tcp_ids) & (
        pk.column("payload").to_numpy(zero_copy_only=False) > 0
    )
    end_s = meta["duration_ns"] / 1e9
    # the receivers' ACKs: pure TCP segments (SYNs aside, none after the warm-up)
    tcp_acks = np.isin(pk.column("flow").to_numpy(), tcp_ids) & (
        pk.column("payload").to_numpy(zero_copy_only=False) == 0
    )
    out: dict = {"dirs": {}, "labels": {}}
    for d in ("down", "up"):
        q = metrics.sojourn_delays_ns(t, meta, d, warmup_s=warmup_s) / 1e6
        sel = after & (dirs == d)
        pct = [float(x) for x in np.percentile(q, [50, 95, 99])] if len(q) else [None] * 3
        out["dirs"][d] = {
            "q50": pct[0],
            "q95": pct[1],
            "q99": pct[2],
            "drops": int((sel & ~np.isin(outcome, ["sent", "marked"])).sum()),
            "marks": int((sel & (outcome == "marked")).sum()),
            "bursty_until_s": bursty_until_s(t_enq[(dirs == d) & tcp_data], 1.0, end_s),
            "acks_per_seg": _acks_per_seg(after & tcp_data & (dirs == d), after & tcp_acks & (dirs != d)),
        }
    flows = t["flows"].to_pylist()
    by_id = {f["flow"]: f for f in flows}
    dropped = after & ~np.isin(outcome, ["sent", "marked"])
    flow_of = pk.column("flow").to_numpy()
    for f in s["flows"]:
        lab = out["labels"].setdefault(f["label"], {"goodput": 0.0, "n": 0, "completion": [], "drops": 0})
        lab["goodput"] += f["goodput_mbps"] or 0.0
        lab["n"] += 1
        lab["drops"] += int((dropped & (flow_of == f["id"])).sum())
        if f.get("completion_s") is not None:
            lab["completion"].append(f["completion_s"])
        if f["kind"] == "udp":
            row = by_id[f["id"]]
            sent = row["packets_sent"]
            lab["loss_pct"] = 100 * (1 - row["packets_received"] / sent) if sent else None
    for lab in out["labels"].values():
        c = lab.pop("completion")
        lab["completion_s"] = float(np.mean(c)) if c else None
    transfers = _transfer_s(pk, {f["flow"]: f for f in flows if f["bytes_target"]})
    for f in s["flows"]:
        if by_id[f["id"]]["bytes_target"]:
            out["labels"][f["label"]].setdefault("transfers", {})
        if f["id"] in transfers:
            out["labels"][f["label"]]["transfers"][str(f["id"])] = transfers[f["id"]]
    for lab in out["labels"].values():
        t = list(lab.get("transfers", {}).values())
        lab["transfer_s"] = float(np.mean(t)) if t else None
    tcp = [f for f in s["flows"] if f["kind"] == "tcp"]
    out["retx"] = sum(f["retransmits"] or 0 for f in tcp)
    out["rto"] = sum(f["rto_count"] or 0 for f in tcp)
    # fast recoveries entered (the kernel's side: TCPSackRecovery among `kernel_counters`)
    rec = [f["fast_recoveries"] for f in res.tables["flows"].to_pylist() if f["kind"] == "tcp"]
    out["recoveries"] = sum(r or 0 for r in rec) if not meta.get("emulator") else None
    out["rto_window"] = _window_timeouts(res.tables["flow_series"])
    out["rtt50"] = s["probes"][0]["rtt_ms"]["p50"] if s["probes"] else None
    out["first_data_s"] = first_data_s(res)
    out["syn_s"] = syn_s(res)
    emu = meta.get("emulator")
    if emu:
        out["emulator"] = {k: emu.get(k) for k in ("late_us_p50", "late_us_p99", "cpu_s", "wall_s")}
        out["problems"] = meta.get("emulated", {}).get("problems", [])
        out["tun_drops"] = meta.get("emulated", {}).get("tun_drops")
    return out
