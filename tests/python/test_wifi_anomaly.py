"""The 802.11 performance anomaly and airtime fairness (wifi_anomaly.toml, docs/architecture.md,
WiFi, "Scheduler"): the expected throughputs are worked from the 802.11 timing, not read off a
run."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from aqmlab import api
from aqmlab.cli import app
from aqmlab.scenario import ScenarioError, load, resolve

STATIONS = ("fast1", "fast2", "slow")

# One 1500-byte packet per transmission (no aggregation): the PPDU of its 1538-byte MPDU takes
# 136 us at MCS 15 and 1936 us at MCS 0 (IEEE 802.11n-2009 20.4.3); each transmission also holds
# the medium for AIFS 43 us, the mean backoff 67.5 us (CWmin 15 x 9 us / 2), SIFS 16 us and an
# ACK of 28 us (docs/architecture.md, WiFi, "Timing").
OVERHEAD_US = 43 + 67.5 + 16 + 28
FAST_US, SLOW_US = 136 + OVERHEAD_US, 1936 + OVERHEAD_US
UDP_BITS = 1500 * 8  # a UDP flow's goodput counts its packets (packet_size, the IP packet) whole


def _run(scheduler: str, kind: str, **wifi) -> dict:
    sc = load("wifi_anomaly")
    sc["duration"] = "12s"
    sc["topology"]["wifi"]["scheduler"] = scheduler
    sc["topology"]["wifi"].update(wifi)
    if kind == "udp":
        sc["flows"] = [
            {"kind": "udp", "label": s, "direction": "down", "rate": "30Mbps", "packet_size": "1500B",
             "start": "0s", "station": s}
            for s in STATIONS
        ]  # fmt: skip
    if kind == "tcp+ping":
        sc["flows"] += [
            {"kind": "ping", "label": f"ping {s}", "interval": "100ms", "start": "0s", "station": s}
            for s in STATIONS
        ]
    return api.run_dict(sc, seed=1, warmup_s=4).summary


def _goodput(summary: dict) -> dict[str, float]:
    return {f["label"]: f["goodput_mbps"] for f in summary["flows"]}


def _shares(summary: dict) -> list[float]:
    return [summary["links"][f"air/{s}"]["station_airtime_share"] for s in STATIONS]


@pytest.fixture(scope="module")
def udp() -> dict[str, dict]:
    return {s: _run(s, "udp") for s in ("fifo", "airtime")}


def test_round_robin_gives_every_station_the_slow_ones_throughput(udp):
    """Heusse et al. (INFOCOM 2003): equal transmission opportunities, so each saturated station
    gets one packet per round of 2 fast and 1 slow transmission, whatever its own rate."""
    per_round_s = (2 * FAST_US + SLOW_US) / 1e6
    expected = UDP_BITS / per_round_s / 1e6  # 4.49 Mb/s each
    g = _goodput(udp["fifo"])
    for s in STATIONS:
        assert g[s] == pytest.approx(expected, rel=0.03), (s, g)
    # the slow station's transmissions take most of the air
    shares = _shares(udp["fifo"])
    assert shares[2] == pytest.approx(1936 / (2 * 136 + 1936), rel=0.05)


def test_airtime_scheduler_equalises_airtime_and_the_fast_stations_gain(udp):
    """The deficit scheduler gives each station the same PPDU airtime: a fast station sends
    1936 / 136 packets per slow one; over a second of n slow packets, n (2 x 1936 / 136 x FAST +
    SLOW) = 1 s."""
    shares = _shares(udp["airtime"])
    assert all(sh == pytest.approx(1 / 3, rel=0.1) for sh in shares), shares
    assert sum(shares) == pytest.approx(1.0)
    ratio = 1936 / 136
    n_slow = 1e6 / (2 * ratio * FAST_US + SLOW_US)
    g, before = _goodput(udp["airtime"]), _goodput(udp["fifo"])
    for s in ("fast1", "fast2"):
        assert g[s] == pytest.approx(n_slow * ratio * UDP_BITS / 1e6, rel=0.03), g  # 16.5 Mb/s
        assert g[s] > 3 * before[s]
    assert g["slow"] == pytest.approx(n_slow * UDP_BITS / 1e6, rel=0.05), g  # 1.16 Mb/s


def test_tcp_downloads_show_the_anomaly_and_its_end():
    """The same with the built-in scenario's TCP downloads (their ACKs, sent by the stations,
    are charged to them too): round robin holds the fast stations near the slow one's
    throughput; the airtime scheduler evens the airtime out and the fast stations gain."""
    fifo, fair = _run("fifo", "tcp"), _run("airtime", "tcp")
    g0, g1 = _goodput(fifo), _goodput(fair)
    for s in ("fast1", "fast2"):
        assert g0[s] < 1.5 * g0["slow"], g0
        assert g1[s] > 2 * g0[s], (g0, g1)
    assert all(sh == pytest.approx(1 / 3, rel=0.1) for sh in _shares(fair)), _shares(fair)


def test_fq_codel_in_the_mac_ends_the_queueing_delay_under_load():
    """The TCP downloads with a ping to each station (Hoiland-Jorgensen et al., ATC 2017,
    section 5: latency under load). mac80211's queues serve a ping, a sparse flow, ahead of its
    station's download (fq_tin_dequeue's new list); under round robin the ping then waits for
    its station's next turn, at most a round of two fast and one slow transmission (2 x 290 +
    2090 us = 2.7 ms) behind the two aggregates already in hardware: its induced delay stays
    within four rounds (10.7 ms). FIFOs below the qdisc that hold every packet (the scenario
    before mac80211's queues) queue the downloads' whole windows ahead of it: seconds."""
    fq = _run("fifo", "tcp+ping")
    fifo = _run("fifo", "tcp+ping", txq="fifo", driver_limit=100_000)
    round_ms = (2 * FAST_US + SLOW_US) / 1000
    for k in range(3):
        assert fq["probes"][k]["induced_ms"]["p50"] < 4 * round_ms, fq["probes"][k]
        assert fifo["probes"][k]["induced_ms"]["p50"] > 100 * round_ms, fifo["probes"][k]
    # the shares are the anomaly's either way: the queues do not change whose turn it is
    for s in (fq, fifo):
        assert _shares(s)[2] == pytest.approx(1936 / (2 * 136 + 1936), rel=0.05)


def test_txq_keys_are_validated_by_name():
    """A wrong txq, or a txq_params key, exits 2 naming the key, the value and what is allowed."""
    res = CliRunner().invoke(app, ["validate", "wifi_anomaly", "--set", "topology.wifi.txq=codel"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert 'topology.wifi.txq: "codel" is not allowed; allowed: fifo, fq_codel' in res.output, res.output
    sc = load("wifi_anomaly")
    sc["topology"]["wifi"]["txq_params"] = {"target": "500ms", "interval": "100ms"}
    with pytest.raises(
        ScenarioError, match=r"topology\.wifi\.txq_params: interval: 100ms is out of range; allowed 500ms"
    ):
        resolve(sc)
    sc["topology"]["wifi"]["txq_params"] = {"quantum": "300B", "flow": 8}
    with pytest.raises(
        ScenarioError, match=r"topology\.wifi\.txq_params: flow: unknown key; allowed: flows, quantum"
    ):
        resolve(sc)
    sc["topology"]["wifi"]["txq_params"] = {"slow_stations": "yes"}
    with pytest.raises(
        ScenarioError, match=r'txq_params: slow_stations: "yes" is not allowed; allowed: a boolean'
    ):
        resolve(sc)
    sc["topology"]["wifi"]["txq"] = "fifo"
    sc["topology"]["wifi"]["txq_params"] = {}
    with pytest.raises(ScenarioError, match=r'topology\.wifi\.txq_params: is not allowed with txq = "fifo"'):
        resolve(sc)
