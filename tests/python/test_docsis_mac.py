"""The DOCSIS upstream MAC (`docsis` on a hop) end to end: an idle modem's ping waits for the
next MAP start (its contention request) and the request-grant delay rounded up to a MAP, worked
by hand below; the built-in `docsis_mac` runs with the MAC's counters; a bad key exits 2 naming
it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import aqmlab
from aqmlab.cli import app

MS = 1_000_000


def _owd_up(up: dict) -> list[int]:
    """One-way upstream times (ns) of 1500-byte pings every 100 ms up an otherwise idle hop."""
    sc = {
        "name": "docsis_idle",
        "duration": "1s",
        "topology": {"rtt": "20ms", "up": up, "down": {"rate": "300Mbps"}},
        "flows": [{"kind": "ping", "interval": "100ms", "packet_size": "1500B"}],
    }
    p = aqmlab.run(sc, seed=1).tables["probes"].to_pandas()
    return list(p["owd_up_ns"])


def test_an_idle_modems_access_delay_is_the_map_arithmetic():
    # Control: the hop serialises at the channel's rate, no MAC. With it, a ping sent at
    # k x 100 ms reaches the hop 5 ms (rtt / 4) + 12 us (its 1 Gb/s NIC) later, 1.012 ms into a
    # 2 ms MAP: the contention request goes at the next MAP start (0.988 ms on), the grant
    # comes 4 ms later: 4.988 ms more than the control, for every ping.
    plain = _owd_up({"rate": "122.88Mbps"})
    mac = _owd_up({"rate": "25Mbps", "docsis": {}})
    assert len(plain) == len(mac) == 10
    assert [m - p for m, p in zip(mac, plain)] == [4_988_000] * 10
    # MAPs of 3 ms: 5.012 ms is 2.012 ms into the MAP of 3 ms; the request at 6 ms is granted in
    # the MAP at or after 6 + 4 = 10 ms, i.e. at 12 ms: 6.988 ms more.
    mac = _owd_up({"rate": "25Mbps", "docsis": {"map": "3ms"}})
    assert mac[0] - plain[0] == 6_988_000


def test_the_docsis_mac_scenario():
    r = aqmlab.run("docsis_mac", duration="5s")
    up = r.summary["links"]["up"]
    # CUBIC from 1 s: most of 4 of the 5 seconds at 25 Mb/s carried (0.86 with the `linux`
    # profile's PSH on GSO packets and TSO deferral, 0.96 with PSH on the writes' ends only)
    assert up["tx_bytes"] > 0.8 * 4 * 25e6 / 8
    # the pings before the upload starts (0 to 0.9 s) wait at least one request-grant delay
    p = r.tables["probes"].to_pandas()
    idle = p[p["t_send_ns"] < 1_000_000_000]
    assert (idle["owd_up_ns"] >= 10 * MS + 4 * MS).all()


def test_a_bad_docsis_key_exits_2_naming_it(tmp_path: Path):
    res = CliRunner().invoke(
        app, ["run", "docsis_mac", "--set", "topology.up.docsis.rg_delay=1ms", "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    line = res.output.strip()
    assert line == "error: topology.up.docsis.rg_delay: 1ms is out of range; allowed 2ms (one MAP) to 1s", (
        line
    )
