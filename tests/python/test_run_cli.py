"""End-to-end checks of `aqmlab run` / `validate` / `list` through the real core: the JSON
summary's keys, overrides, bad input (exit 2 naming the key), and bit-identical output files."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqmlab.cli import app

runner = CliRunner()

SCENARIO = """
name = "tiny"
duration = "3s"
seed = 4
[topology]
rtt = "40ms"
down = { rate = "5Mbps", qdisc = "pfifo", limit = "50p" }
up = { rate = "5Mbps", qdisc = { kind = "bfifo", limit = "150KB" } }
[[flows]]
kind = "udp"
direction = "down"
rate = "6Mbps"
packet_size = "1000B"
arrivals = "poisson"
[[flows]]
kind = "tcp"
direction = "up"
bytes = "200KB"
[[flows]]
kind = "ping"
interval = "100ms"
"""


@pytest.fixture
def scenario(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(SCENARIO)
    return p


def run_json(args: list[str]) -> dict:
    res = runner.invoke(app, ["run", *args, "--json", "--no-plot"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_run_json_has_the_contract_keys(scenario: Path, tmp_path: Path):
    s = run_json([str(scenario), "--out", str(tmp_path / "r")])
    for d in ("up", "down"):
        link = s["links"][d]
        assert set(link["queue_delay_ms"]) >= {"p50", "p95", "p99", "max", "mean"}
        assert {"utilization", "drops", "marks", "arrivals", "transmitted"} <= set(link)
    # 6 Mb/s of UDP into 5 Mb/s: the down link is saturated and drops about 1/6 of arrivals.
    down = s["links"]["down"]
    assert down["utilization"] > 0.97
    assert down["drops"] / down["arrivals"] == pytest.approx(1 / 6, abs=0.03)
    kinds = {f["kind"] for f in s["flows"]}
    assert kinds == {"udp", "tcp"}  # probes are reported under "probes"
    tcp = next(f for f in s["flows"] if f["kind"] == "tcp")
    assert tcp["bytes_delivered"] == 200_000 and tcp["completion_s"] > 0
    assert set(s["probes"][0]["rtt_ms"]) >= {"p50", "p95", "max", "mean"}
    assert s["events"] > 0 and s["wall_s"] > 0


def test_set_overrides_reach_the_core(scenario: Path, tmp_path: Path):
    s = run_json(
        [
            str(scenario),
            "--out",
            str(tmp_path),
            "--set",
            "topology.down.qdisc=codel",
            "--set",
            "flows.0.rate=1Mbps",
        ]
    )
    assert s["links"]["down"]["qdisc"] == "codel"
    # 1 Mb/s into 5 Mb/s: no overload, so (almost) no queue and no drops.
    assert s["links"]["down"]["drops"] == 0
    assert s["links"]["down"]["utilization"] < 0.3


def test_same_seed_gives_byte_identical_files(scenario: Path, tmp_path: Path):
    def digests(out: Path, seed: str) -> dict[str, str]:
        s = run_json([str(scenario), "--out", str(out), "--seed", seed])
        d = Path(s["run_dir"])
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.glob("*.parquet"))}

    a = digests(tmp_path / "a", "7")
    b = digests(tmp_path / "b", "7")
    c = digests(tmp_path / "c", "8")
    assert a == b and len(a) >= 6
    assert a["packets.parquet"] != c["packets.parquet"]


BAD = [
    ('duration = "0s"', "duration"),
    ('duration = "10"', "duration"),
    ("bogus = 1", "bogus"),
    ('[topology]\nrtt = "1ms"\ndown = { rate = "-5Mbps" }\nup = { rate = "1Mbps" }', "topology.down.rate"),
    (
        '[topology]\nrtt = "1ms"\ndown = { rate = "1Mbps", qdisc = "nosuch" }\nup = { rate = "1Mbps" }',
        "topology.down.qdisc",
    ),
    (
        (
            '[topology]\nrtt = "1ms"\ndown = { rate = "1Mbps", qdisc = { kind = "codel", target = "5" } }\n'
            'up = { rate = "1Mbps" }'
        ),
        "topology.down.qdisc.target",
    ),
    (
        '[topology]\nrtt = "1ms"\ndown = { rate = "1Mbps", loss = 1.5 }\nup = { rate = "1Mbps" }',
        "topology.down.loss",
    ),
    ('[[flows]]\nkind = "udp"\nrate = "1Mbps"\npacket_size = "9000B"', "flows[0].packet_size"),
    ('[[flows]]\nkind = "tcp"\ncc = "vegas"', "flows[0].cc"),
    ('[[flows]]\nkind = "tcp"\ncount = 0', "flows[0].count"),
    ('[[flows]]\nkind = "tcp"\nstart = "1s"\nstop = "500ms"', "flows[0].stop"),
    ('[[flows]]\nkind = "tcp"\nprofile = "ns2"', "flows[0].profile"),
    ('[[flows]]\nkind = "tcp"\nprofile = "ns2_sack1"\nmax_rto = "100ms"', "flows[0].max_rto"),
    ('[[flows]]\nkind = "tcp"\nhystart = "hystart++"', "flows[0].hystart"),
    ('[[flows]]\nkind = "udp"\nrate = "1Mbps"\ndscp = "AF51"', "flows[0].dscp"),
    ('[[flows]]\nkind = "udp"\nrate = "1Mbps"\ndscp = 64', "flows[0].dscp"),
    ('[[flows]]\nkind = "tcp"\non_off = { on = "0s", off = "1s" }', "flows[0].on_off.on"),
    (
        '[[flows]]\nkind = "tcp"\non_off = { on = "1s", off = "1s", distribution = "pareto" }',
        "flows[0].on_off",
    ),
    ('[[flows]]\nkind = "tcp"\ncc = "ledbat"\ncc_params = { target = "150ms" }', "flows[0].cc_params"),
    ('[[flows]]\nkind = "tcp"\ncc = "tcp_lp"\ncc_params = { treshold = 0.2 }', "flows[0].cc_params"),
    ('[[flows]]\nkind = "tcp"\ncc = "cubic"\ncc_params = { target = "25ms" }', "flows[0].cc_params"),
    (
        '[[flows]]\nkind = "udp"\nrate = "1Mbps"\nstart = { uniform = ["0s", "1s"], per = "host" }',
        "flows[0].start",
    ),
    ('[[flows]]\nkind = "udp"\nrate = "1Mbps"\nstart = { spread = ["1s", "0s"] }', "flows[0].start: spread"),
    ('[[flows]]\nkind = "udp"\nrate = "1Mbps"\nstart = { spread = "1s" }', "flows[0].start: spread"),
    ('[[flows]]\nkind = "udp"\nrate = "1Mbps"\nstart = { spread = ["0s", "1h"] }', "flows[0].start: spread"),
    ('[[flows]]\nkind = "tcp"\nquickack = -1', "flows[0].quickack"),
    ('[[flows]]\nkind = "tcp"\nsegs_per_ack = 0', "flows[0].segs_per_ack"),
    ('[[flows]]\nkind = "tcp"\ndelack_grid = 3', "flows[0].delack_grid"),
    ('[[flows]]\nkind = "tcp"\nfrto = "yes"', "flows[0].frto"),
    ('[[flows]]\nkind = "smoke"', "flows[0].kind"),
    (
        '[topology]\nrtt = "1ms"\n[[topology.hops]]\nname = "a"\ndirection = "up"\nrate = "1Mbps"\n',
        "topology.hops",
    ),
    (
        (
            '[topology]\nrtt = "1ms"\nhops = [{ name = "a", direction = "up", rate = "1Mbps" }, '
            '{ name = "a", direction = "down", rate = "1Mbps" }]'
        ),
        "topology.hops[1].name",
    ),
]


@pytest.mark.parametrize(("change", "key"), BAD)
def test_bad_scenarios_exit_2_naming_the_key(tmp_path: Path, change: str, key: str):
    base = {
        "head": 'name = "bad"\nduration = "1s"\n',
        "topo": '[topology]\nrtt = "1ms"\ndown = { rate = "1Mbps" }\nup = { rate = "1Mbps" }\n',
    }
    if change.startswith("[topology]"):
        text = base["head"] + change + "\n"
    elif change.startswith("[[flows]]"):
        text = base["head"] + base["topo"] + change + "\n"
    elif change.startswith("duration"):
        text = 'name = "bad"\n' + change + "\n" + base["topo"]
    else:
        text = change + "\n" + base["head"] + base["topo"]
    p = tmp_path / "bad.toml"
    p.write_text(text)
    for cmd in (["validate", str(p)], ["run", str(p), "--out", str(tmp_path)]):
        res = runner.invoke(app, cmd)
        assert res.exit_code == 2, (cmd, res.output)
        assert key in res.output and "Traceback" not in res.output, res.output


def test_bad_seed_and_error_text(tmp_path: Path):
    res = runner.invoke(app, ["run", "bufferbloat", "--seed", "-1"])
    assert res.exit_code == 2 and "seed" in res.output
    import aqmlab

    with pytest.raises(aqmlab.ScenarioError, match="seed"):
        aqmlab.run("bufferbloat", seed=-1)
    # Messages point at the user's key, not at positions in the JSON the core was handed.
    res = runner.invoke(app, ["run", "bufferbloat", "--set", "topology.down.rate=fast"])
    assert res.exit_code == 2 and "topology.down.rate" in res.output and "column" not in res.output


def test_unknown_scenario_and_bad_set_exit_2(tmp_path: Path):
    res = runner.invoke(app, ["run", "no-such-scenario"])
    assert res.exit_code == 2 and "bufferbloat" in res.output
    res = runner.invoke(app, ["run", "bufferbloat", "--set", "flows.7.rate=1Mbps"])
    assert res.exit_code == 2 and "flows.7" in res.output


def test_lists():
    res = runner.invoke(app, ["list", "qdiscs"])
    assert res.exit_code == 0
    for name in ["pfifo", "codel", "pie", "fq_codel", "red", "sfq", "sfq_codel", "fq_pie", "choke", "drr"]:
        assert name in res.output
    res = runner.invoke(app, ["list", "qdiscs", "pie"])
    assert res.exit_code == 0 and "profile" in res.output and "RFC 8033" in res.output
    assert runner.invoke(app, ["list", "qdiscs", "nosuch"]).exit_code == 2
    res = runner.invoke(app, ["list", "scenarios"])
    assert "bufferbloat" in res.output and "rrul_be" in res.output
    res = runner.invoke(app, ["list", "tcp"], terminal_width=300)
    assert res.exit_code == 0 and "ns2_sack1" in res.output and "rfc" in res.output, res.output
    # ns-2.35 ns-default.tcl: tcpTick_ 0.01, Agent/TCPSink/DelAck interval_ 100ms.
    assert "rto_tick=10ms" in res.output and "delack=100ms" in res.output, res.output
    # The controllers of the issue that brought L4S and BBR: each named where profiles are listed.
    assert all(cc in res.output for cc in ("dctcp", "prague", "bbr", "bbr3")), res.output
    # The controllers with their cc_params: RFC 6817 2.4.2's TARGET of 100 ms is LEDBAT's default.
    res = runner.invoke(app, ["list", "ccs"], terminal_width=300)
    assert res.exit_code == 0 and all(cc in res.output for cc in ("newreno", "cubic", "tcp_lp", "bbr3")), (
        res.output
    )
    res = runner.invoke(app, ["list", "ccs", "ledbat"], terminal_width=300)
    assert res.exit_code == 0 and '"100ms"' in res.output and "RFC 6817" in res.output, res.output
    assert "no cc_params" in runner.invoke(app, ["list", "ccs", "reno"]).output
    # BBR's one key and its default (tcp_bbr.c since Linux 5.10: only a lower RTT renews it)
    res = runner.invoke(app, ["list", "ccs", "bbr"], terminal_width=300)
    assert "min_rtt_renew" in res.output and '"lower"' in res.output, res.output
    assert runner.invoke(app, ["list", "ccs", "vegas"]).exit_code == 2
    assert runner.invoke(app, ["--version"]).exit_code == 0


@pytest.mark.parametrize(("build", "said"), [("plain", False), ("pgo", True)])
def test_version_names_a_profile_guided_build(monkeypatch, build, said):
    import aqmlab.cli.main as cli_main

    monkeypatch.setattr(cli_main, "BUILD", build)
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.startswith("aqmlab ")
    assert ("profile-guided build" in res.output) == said, res.output


def test_pgo_script_refuses_unknown_options():
    import subprocess

    script = Path(__file__).resolve().parents[2] / "scripts" / "pgo.sh"
    for args, named in ((["--fast"], "'--fast'"), (["--wheel", "x"], "--wheel x")):
        r = subprocess.run(
            ["bash", str(script), *args], check=False, capture_output=True, text=True, timeout=30
        )
        assert r.returncode == 2 and named in r.stderr and "--wheel" in r.stderr, r.stderr


def test_python_api_runs_and_overrides():
    import aqmlab

    r = aqmlab.run("bufferbloat", seed=3, duration="2s", topology__down__qdisc="fq_codel")
    assert r.meta["scenario"]["topology"]["down"]["qdisc"]["kind"] == "fq_codel"
    assert len(r.df("packets")) > 0


def test_summary_level_with_warmup_uses_whole_run_totals():
    import aqmlab

    # 12 Mb/s of UDP into 10 Mb/s from t = 0: the link is busy from the first packet's arrival
    # (12.5 ms of access delay) to the end, so the whole-run utilisation is just below 1.
    r = aqmlab.run("bufferbloat", record__level="summary", warmup_s=1.0)
    assert "packets" not in r.tables and "queue" not in r.tables
    assert r.summary["links"]["down"]["utilization"] == pytest.approx(1 - 0.0125 / 10, abs=0.002)
    # Goodput over the whole run cannot exceed the 10 Mb/s link rate.
    udp = next(f for f in r.summary["flows"] if f["kind"] == "udp")
    assert udp["goodput_mbps"] == pytest.approx(10 * (1 - 0.025 / 10), abs=0.05)


def warm5(tmp_path: Path) -> list[str]:
    return ["--out", str(tmp_path), "--warmup", "5"]


def test_cable_modem_reports_every_hop_and_the_bottleneck(tmp_path: Path):
    """The router's fq_codel does nothing in front of the slower modem FIFO (the queue and the
    latency build in the modem); shaped below the modem rate, the queue moves into fq_codel."""
    fast, shaped = (
        run_json(
            [
                "cable_modem",
                "--set",
                "duration=15s",
                "--set",
                f"topology.hops.0.rate={rate}",
                *warm5(tmp_path),
            ]
        )
        for rate in ("100Mbps", "1.9Mbps")
    )
    assert list(fast["links"]) == ["cmts", "router", "modem"]
    assert fast["bottleneck"] == {"up": "modem", "down": "cmts"}
    assert shaped["bottleneck"]["up"] == "router"
    # Unshaped: the modem's 256-packet FIFO at 2 Mb/s (6 ms a packet) holds the standing queue;
    # the router sees only the uploads' bursts (a receive window that opens after a recovery
    # lets out as many segments at once): under a hundredth of the modem's delay.
    modem_p50 = fast["links"]["modem"]["queue_delay_ms"]["p50"]
    assert modem_p50 > 500
    assert fast["links"]["router"]["queue_delay_ms"]["p95"] < modem_p50 / 100
    # Shaped: fq_codel holds the queue near its 5 ms target; the modem sees at most a packet.
    assert shaped["links"]["router"]["queue_delay_ms"]["p50"] < 30
    assert shaped["links"]["modem"]["queue_delay_ms"]["max"] < 7
    assert shaped["probes"][0]["rtt_ms"]["p50"] < fast["probes"][0]["rtt_ms"]["p50"] / 10
    # --qdisc cannot guess which hop to change: it says how instead of a traceback.
    res = runner.invoke(app, ["run", "cable_modem", "--qdisc", "codel", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "topology.hops" in res.output and "Traceback" not in res.output


def test_wifi_scenario_runs_every_station_and_names_the_air_the_bottleneck(tmp_path: Path):
    """The built-in WiFi scenario: the AP's hop and one link per station, utilisation within the
    medium's capacity; a fair-queueing station qdisc gives the downloads their ACKs back."""
    fifo, fq = (
        run_json(["wifi", "--set", "duration=15s", "--set", f"topology.hops.0.qdisc={q}", *warm5(tmp_path)])
        for q in ("pfifo_fast", "fq_codel")
    )
    assert list(fifo["links"]) == ["wan_down", "ap", "air/laptop", "wan_up", "air/phone"]
    assert fifo["bottleneck"] == {"down": "ap", "up": "air/laptop"}
    for r in (fifo, fq):
        assert all(0 <= lk["utilization"] <= 1.0 for lk in r["links"].values())
    # Behind the laptop's deep FIFO the downloads' ACKs wait with the uploads' data: the
    # downloads get a small share; fq_codel at the station lets the ACKs through.
    assert fifo["goodput_mbps"]["down"] < fifo["goodput_mbps"]["up"] / 3
    assert fq["goodput_mbps"]["down"] > 2 * fifo["goodput_mbps"]["down"]
    res = runner.invoke(
        app, ["run", "wifi", "--set", "topology.wifi.stations.1.mcs=40", "--out", str(tmp_path)]
    )
    assert res.exit_code == 2 and "topology.wifi.stations[1].mcs" in res.output, res.output


def test_voip_stream_on_an_idle_path_has_exact_one_way_delays_and_no_jitter():
    """irtt's VoIP stream (Flent's voip test): 200-byte packets every 20 ms. Alone on the path its
    one-way delay is the access paths (rtt/4 each side), the sender's 1 Gb/s NIC (1.6 us) and the
    hop's serialisation (1.6 ms at 1 Mb/s up, 0.16 ms at 10 Mb/s down), every time: no jitter."""
    import aqmlab

    sc = {
        "name": "voip",
        "duration": "10s",
        "topology": {"rtt": "40ms", "down": {"rate": "10Mbps"}, "up": {"rate": "1Mbps"}},
        "flows": [{"kind": "voip"}],
    }
    r = aqmlab.run(sc)
    (p,) = r.summary["probes"]
    assert r.summary["flows"] == []  # a probe stream, not traffic
    assert p["owd_ms"]["up"]["p50"] == pytest.approx(20 + 0.0016 + 1.6, abs=1e-6)
    assert p["owd_ms"]["down"]["p95"] == pytest.approx(20 + 0.0016 + 0.16, abs=1e-6)
    assert p["jitter_ms"] == {"up": 0.0, "down": 0.0} and p["ipdv_ms"] == {"up": 0.0, "down": 0.0}
    assert p["loss"] == 0.0
    assert r.tables["probes"].num_rows == 500  # one every 20 ms for 10 s


def test_a_typo_in_qdisc_list_stores_nothing(tmp_path: Path):
    res = runner.invoke(app, ["run", "bufferbloat", "--qdisc", "pfifo,codel,codle", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "--qdisc" in res.output and "codle" in res.output, res.output
    assert "topology.up" not in res.output
    assert not [p for p in tmp_path.iterdir() if p.is_dir()], "no run may be stored"


def test_a_conservation_violation_fails_the_run_with_exit_1(tmp_path: Path, monkeypatch):
    """The core raises RuntimeError when its packet-conservation check fails (checked in every
    build, not only in debug builds); the run is not stored and the command exits 1."""
    import importlib

    api = importlib.import_module("aqmlab.api")

    def broken(*_a, **_k):
        raise RuntimeError("packet conservation violated: flow 0: sent 3 != received 1 + dropped 1")

    monkeypatch.setattr(api._core, "run", broken)
    res = runner.invoke(app, ["run", "bufferbloat", "--out", str(tmp_path)])
    assert res.exit_code == 1 and "conservation" in res.output and "Traceback" not in res.output
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]


@pytest.mark.parametrize("warmup", ["-5", "nan", "10", "20"])
def test_warmup_outside_the_run_is_refused_before_running(tmp_path: Path, warmup: str):
    # bufferbloat runs 10 s: a warm-up of 10 s or more would leave nothing to measure.
    res = runner.invoke(app, ["run", "bufferbloat", "--warmup", warmup, "--out", str(tmp_path)])
    assert res.exit_code == 2 and "--warmup" in res.output and "Traceback" not in res.output, res.output
    assert not [p for p in tmp_path.iterdir() if p.is_dir()]


@pytest.mark.parametrize("name", ["rrul_be", "cable_modem", "bufferbloat", "pycodel"])
def test_a_run_given_its_resolution_has_the_metadata_and_tables_of_one_that_resolves_itself(name: str):
    # the CLI resolves a scenario to check it, then hands that resolution to the run instead of
    # having the core encode it into the metadata again: the same document either way
    from aqmlab.api import simulate
    from aqmlab.scenario import apply_overrides, load, resolve

    qdisc = {"kind": "python", "class": "aqmlab.examples.codel:Codel"}
    sets = {"duration": "1s"} | ({"topology.down.qdisc": qdisc} if name == "pycodel" else {})
    sc = apply_overrides(load("bufferbloat" if name == "pycodel" else name), sets)
    plain_tables, plain = simulate(sc, 5)
    given_tables, given = simulate(sc, 5, resolved=resolve(sc, 5))
    assert {k: v for k, v in given.items() if k != "wall_s"} == {
        k: v for k, v in plain.items() if k != "wall_s"
    }
    assert given["scenario"]["seed"] == 5 and "scenario" in plain
    assert given_tables.keys() == plain_tables.keys()
    assert all(given_tables[k].equals(plain_tables[k]) for k in plain_tables)


def test_a_spread_over_a_count_is_the_same_workload_as_entries_with_those_starts():
    # `start = { spread = [lo, hi] }` gives flow i of n the start lo + i (hi - lo) / n: five
    # flows over [0.2 s, 1.2 s] are the five entries starting at 0.2, 0.4, ..., 1.0 s. Every table
    # is the same but for the flows' entry: its index (`group`) and default label.
    from aqmlab.api import simulate

    head = {"name": "spread", "duration": "2s", "seed": 3, "record": {"level": "packets"}}
    head["topology"] = {
        "rtt": "20ms",
        "down": {"rate": "20Mbps", "qdisc": "fq_codel"},
        "up": {"rate": "20Mbps"},
    }
    flow = {"kind": "tcp", "direction": "down", "cc": "cubic", "bytes": "300KB"}
    spread, _ = simulate({**head, "flows": [{**flow, "count": 5, "start": {"spread": ["0.2s", "1.2s"]}}]})
    starts = ["0.2s", "0.4s", "0.6s", "0.8s", "1s"]
    listed, _ = simulate({**head, "flows": [{**flow, "start": t} for t in starts]})
    assert spread["flows"]["start_ns"].to_pylist() == [200_000_000 * k for k in range(1, 6)]
    assert spread["flows"]["group"].to_pylist() == [0] * 5
    assert listed["flows"]["group"].to_pylist() == list(range(5))
    assert spread.keys() == listed.keys() and spread["packets"].num_rows > 1000
    for name in spread:
        a, b = spread[name], listed[name]
        if name == "flows":
            a, b = a.drop_columns(["group", "label"]), b.drop_columns(["group", "label"])
        assert a.equals(b), name


def test_simulate_calls_meanwhile_in_another_thread_and_returns_after_it():
    # `aqmlab run` loads DuckDB, pandas and matplotlib this way while the core simulates
    import threading
    import time

    from aqmlab.api import simulate
    from aqmlab.scenario import apply_overrides, load

    done = []

    def meanwhile():
        time.sleep(0.5)  # longer than the run
        done.append(threading.get_ident())

    simulate(apply_overrides(load("bufferbloat"), {"duration": "1s"}), meanwhile=meanwhile)
    assert done and done[0] != threading.get_ident()


def test_a_run_says_when_no_seed_can_change_it(tmp_path: Path):
    """A run that drew from no random stream says so; one whose discipline drops at random does not."""
    said = {}
    for q in ("pfifo", "red"):
        res = runner.invoke(app, ["run", "rrul_be", "--set", "duration=2s", "--set", f"topology.down.qdisc={q}",
                                  "--no-plot", "--out", str(tmp_path / q)])  # fmt: skip
        assert res.exit_code == 0, res.output
        said[q] = "drew from no random stream" in " ".join(res.output.split())
    assert said == {"pfifo": True, "red": False}


# The console script ends the process itself (`main._exit`): a child that runs it as installed,
# with an atexit handler or a thread of its own to show what must still happen.
ENTRY = "import sys; from aqmlab.cli import entry; sys.argv[0] = 'aqmlab'; {before}; entry()"


def _entry(before: str, *args: str) -> subprocess.CompletedProcess:
    code = ENTRY.format(before=before)
    return subprocess.run(
        [sys.executable, "-c", code, *args], check=False, capture_output=True, text=True, timeout=120
    )


def test_the_console_script_runs_the_exit_handlers_and_keeps_status_and_output(
    tmp_path: Path, scenario: Path
):
    mark = tmp_path / "handler ran"
    handler = f"import atexit; atexit.register(lambda: open({str(mark)!r}, 'w').write('x'))"
    done = _entry(handler, "run", str(scenario), "--json", "--no-plot", "--out", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    assert mark.exists()
    # the whole JSON document came out, flushed before the end
    summary = json.loads(done.stdout)
    assert Path(summary["run_dir"]).is_dir()
    mark.unlink()
    refused = _entry(handler, "run", str(scenario), "--warmup", "-1", "--out", str(tmp_path / "runs"))
    assert refused.returncode == 2 and "--warmup" in refused.stderr
    assert mark.exists()


def test_the_console_script_waits_for_a_thread_left_running(tmp_path: Path):
    mark = tmp_path / "thread finished"
    thread = (
        "import threading, time; "
        f"threading.Thread(target=lambda: (time.sleep(0.5), open({str(mark)!r}, 'w').write('x'))).start()"
    )
    done = _entry(thread, "list", "qdiscs")
    assert done.returncode == 0, done.stderr
    assert "fq_codel" in done.stdout
    assert mark.exists()


def test_without_a_level_a_run_too_large_for_packet_rows_records_series_and_says_so(
    scenario: Path, tmp_path: Path
):
    # 2 hops x 5 Mb/s x 3 s / (8 x 1500 B) = 2,500 packet rows: above max_rows 1000
    exe = str(Path(sys.executable).parent / "aqmlab")
    r = subprocess.run([exe, "run", scenario, "--set", "record.max_rows=1000", "--out", tmp_path, "--no-plot"],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "note: record.level = series" in r.stderr and "max_rows" in r.stderr
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert json.loads((run / "meta.json").read_text())["scenario"]["record"]["level"] == "series"
    assert not (run / "packets.parquet").exists()
    fits = subprocess.run([exe, "run", scenario, "--set", "record.max_rows=2500", "--out", tmp_path / "b", "--no-plot"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert fits.returncode == 0 and "note: record.level" not in fits.stderr, fits.stderr
