"""Inputs that used to get a traceback or a misleading answer (issue: trustworthy numbers): each
must exit 2 before anything runs or is stored, with one line naming the key, the value and what is
allowed."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aqmlab.cli import app
from aqmlab.scenario import MAX_DEPTH, ScenarioError, check_values, copied

runner = CliRunner()

HEAD = 'name = "{name}"\nduration = "{duration}"\n'
TOPO = '[topology]\nrtt = "10ms"\ndown = { rate = "1Mbps" }\nup = { rate = "1Mbps" }\n'
FLOW = '[[flows]]\nkind = "udp"\ndirection = "down"\nrate = "0.5Mbps"\n'


def _scenario(tmp_path: Path, name: str = "t", duration: str = "1s", extra: str = "") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(HEAD.format(name=name, duration=duration) + extra + TOPO + FLOW)
    return p


def _fails(args: list[str], *needles: str, root: Path | None = None) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    for n in needles:
        assert n in res.output, (n, res.output)
    if root is not None:  # nothing was run or stored
        assert not root.exists() or not any(root.iterdir()), list(root.iterdir())
    return res.output


def test_toml_date_names_the_key(tmp_path: Path):
    p = _scenario(tmp_path, duration="1s")
    p.write_text(p.read_text().replace('duration = "1s"', "duration = 1979-05-27"))
    for cmd in ("validate", "run"):
        _fails(
            [cmd, str(p), "--out", str(tmp_path / "r")] if cmd == "run" else [cmd, str(p)], "duration", "1979"
        )
    _fails(["validate", "bufferbloat", "--set", "topology.rtt=1979-05-27T07:32:00"], "topology.rtt")


def test_non_utf8_and_deep_nesting(tmp_path: Path):
    p = tmp_path / "bin.toml"
    p.write_bytes(b'name = "\xff\xfe"\n')
    _fails(["validate", str(p)], "UTF-8", str(p))
    p = tmp_path / "deep.toml"
    p.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    _fails(["validate", str(p)], "nested")
    _fails(["validate", "bufferbloat", "--set", "x=" + "[" * 3000 + "]" * 3000])


def test_value_checks_name_the_full_key_path_and_stop_at_the_documented_depth():
    def error(sc: dict) -> str:
        with pytest.raises(ScenarioError) as e:
            check_values(sc)
        return str(e.value)

    sc = {"flows": [{"kind": "tcp"}, {"kind": "udp", "": {"rate": float("nan")}}]}
    assert error(sc) == 'flows.1."".rate: nan is not allowed; allowed: a finite number'
    sc = {"topology": {"hops": [{}, {"delay": datetime.time(7, 32)}]}}
    assert error(sc).startswith("topology.hops.1.delay: 07:32:00 is a TOML date/time")

    def nested(levels: int) -> dict:  # `levels` tables and lists below the top, then a value
        v: object = 1
        for i in range(levels):
            v = [v] if i % 2 else {"k": v}
        return {"x": v}

    check_values(nested(MAX_DEPTH - 1))  # the value sits at depth MAX_DEPTH
    assert error(nested(MAX_DEPTH)).endswith(f"nested deeper than {MAX_DEPTH} levels; not allowed")


def test_a_copied_scenario_shares_no_table_or_list():
    sc = {"topology": {"hops": [{"name": "a"}]}, "flows": [{"kind": "tcp", "objects": [1, 2]}]}
    c = copied(sc)
    assert c == sc
    c["topology"]["hops"][0]["name"] = "b"
    c["flows"][0]["objects"].append(3)
    assert sc == {"topology": {"hops": [{"name": "a"}]}, "flows": [{"kind": "tcp", "objects": [1, 2]}]}


@pytest.mark.parametrize("name", ["a/b", ".hidden", "x" * 300, "a\x00b"])
def test_unstorable_names_rejected_before_the_run(tmp_path: Path, name: str):
    p = _scenario(tmp_path, name=name.replace("\x00", "\\u0000"))
    _fails(["run", str(p), "--out", str(tmp_path / "r"), "--no-plot"], "name", root=tmp_path / "r")


@pytest.mark.parametrize("w", ["-5", "nan", "inf"])
def test_bad_warmup(tmp_path: Path, w: str):
    _fails(["run", str(_scenario(tmp_path)), "--warmup", w, "--out", str(tmp_path / "r")], "--warmup")


def test_warmup_not_shorter_than_the_run(tmp_path: Path):
    p = _scenario(tmp_path, duration="1500ms")
    _fails(
        ["run", str(p), "--warmup", "2", "--out", str(tmp_path / "r")],
        "--warmup",
        "1500ms",
        root=tmp_path / "r",
    )


def test_out_is_a_file(tmp_path: Path):
    f = tmp_path / "file"
    f.write_text("x")
    _fails(["run", str(_scenario(tmp_path)), "--out", str(f)], "--out")


def test_bad_qdisc_list_runs_nothing(tmp_path: Path):
    out = _fails(
        ["run", str(_scenario(tmp_path)), "--qdisc", "pfifo,codel,codle", "--out", str(tmp_path / "r")],
        "--qdisc",
        "codle",
        "fq_codel",
        root=tmp_path / "r",
    )
    assert "topology.up.qdisc" not in out


def test_summary_level_with_default_figure(tmp_path: Path):
    res = runner.invoke(
        app, ["run", str(_scenario(tmp_path)), "--set", "record.level=summary", "--out", str(tmp_path / "r")]
    )
    assert res.exit_code == 0 and res.exception is None, res.output
    assert "no figure" in res.output


def test_list_keeps_square_brackets():
    # RED's help text says "[min_th, max_th]"; rich markup used to swallow it.
    res = runner.invoke(app, ["list", "qdiscs"])
    assert res.exit_code == 0 and "[min_th, max_th]" in res.output


def test_conservation_violation_fails_the_run_with_exit_1(tmp_path: Path, monkeypatch):
    """The core raises RuntimeError when a run breaks packet conservation (sent = received +
    dropped + queued + in transit); the command must exit 1 with the message and store nothing,
    where it used to exit 0 with the violation as a string in meta."""
    from aqmlab import _core, api

    def broken(scenario_json, seed, *rest):
        raise RuntimeError("packet conservation violated: flow 0: sent 10 != 9 received + 0 dropped")

    monkeypatch.setattr(_core, "run", broken)
    res = runner.invoke(app, ["run", str(_scenario(tmp_path)), "--out", str(tmp_path / "r")])
    assert res.exit_code == 1, res.output
    assert "conservation" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    assert issubclass(api.SimulationError, RuntimeError)


def test_comparison_table_reports_drops_per_direction(tmp_path: Path):
    """Overload on the down link only: the table's drops must match each direction's summary,
    not their sum under one "drops" heading."""
    p = tmp_path / "s.toml"
    topo = TOPO.replace('down = { rate = "1Mbps" }', 'down = { rate = "1Mbps", limit = "20p" }')
    p.write_text(HEAD.format(name="t", duration="2s") + topo + FLOW.replace("0.5Mbps", "2Mbps"))
    args = ["run", str(p), "--qdisc", "pfifo,codel", "--no-plot", "--out", str(tmp_path / "r")]
    res = runner.invoke(app, [*args, "--json"])
    docs = __import__("json").loads(res.stdout)
    res = runner.invoke(app, args)  # by default only the loaded direction, down
    assert res.exit_code == 0 and "drops down" in res.output and "drops up" not in res.output
    res = runner.invoke(app, [*args, "--dir", "both"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    header = next(line for line in lines if "drops down" in line)
    cols = [c.strip() for c in header.split("┃")]
    for q in ("pfifo", "codel"):
        row = [c.strip() for c in next(line for line in lines if line.startswith(f"│ {q} ")).split("│")]
        down, up = docs[q]["links"]["down"]["drops"], docs[q]["links"]["up"]["drops"]
        assert down > 0 and up == 0
        assert row[cols.index("drops down")] == str(down) and row[cols.index("drops up")] == "0"


def test_rtt_spread_and_libutp_knobs_are_validated(tmp_path: Path):
    # A spread as large as the RTT would allow a zero RTT; knobs of LEDBAT's libutp mode are
    # checked like the others.
    d = Path(__file__).parents[2] / "python" / "aqmlab" / "scenarios" / "lpcc2013"
    base, testbed = str(d / "base.toml"), str(d / "testbed.toml")
    _fails(["validate", base, "--set", "flows.0.rtt_spread=50ms"], "flows[0].rtt_spread", "50ms")
    _fails(["validate", base, "--set", "flows.1.cc_params.increase_per_rtt=0"], "increase_per_rtt", "0")
    _fails(["validate", base, "--set", "flows.1.cc_params.flight_cap=3"], "flight_cap")
    _fails(["validate", testbed, "--set", "flows.1.cc_params.slow_start_exit=0.9"], "slow_start_exit", "0.9")
    _fails(["validate", testbed, "--set", "flows.1.cc_params.rtt_cap=1"], "rtt_cap")
    assert runner.invoke(app, ["validate", testbed]).exit_code == 0


def test_webpage_persistent_must_be_a_boolean_and_resolve_writes_its_defaults(tmp_path: Path):
    p = tmp_path / "w.toml"
    page = '[[flows]]\nkind = "webpage"\nstart = "1s"\n'
    p.write_text(HEAD.format(name="w", duration="5s") + TOPO + page + 'persistent = "yes"\n')
    _fails(["validate", str(p)], "flows[0].persistent", '"yes"', "boolean")
    p.write_text(HEAD.format(name="w", duration="5s") + TOPO + page + "dns_attempts = 9\n")
    _fails(["validate", str(p)], "dns_attempts", "9", "allowed 1 to 5")
    p.write_text(HEAD.format(name="w", duration="5s") + TOPO + page + 'dns_timeout = "0s"\n')
    _fails(["validate", str(p)], "dns_timeout", "0s")
    p.write_text(HEAD.format(name="w", duration="5s") + TOPO + page)
    res = runner.invoke(app, ["validate", "--json", str(p)])
    assert res.exit_code == 0, res.output
    # timeout: the flow's length, from its start (1 s) to the end of the run (5 s).
    assert '"timeout": "4s"' in res.output and '"persistent": true' in res.output, res.output
    # the name lookup: glibc's RES_TIMEOUT and RES_DFLRETRY
    assert '"dns_timeout": "5s"' in res.output and '"dns_attempts": 2' in res.output, res.output


def test_bad_qdisc_item_is_named_with_the_closest_discipline(tmp_path: Path):
    out = _fails(
        ["run", str(_scenario(tmp_path)), "--qdisc", "pfifo,fq_codle", "--out", str(tmp_path / "r")],
        "'fq_codle' is not a queue discipline",
        "did you mean 'fq_codel'?",
        "allowed: ",
        "pie",
        root=tmp_path / "r",
    )
    assert "'pfifo,fq_codle'" not in out and out.count("\n") == 1


@pytest.mark.parametrize(
    ("spelling", "resolved"), [("1e0s", "1s"), ("1.5E3ms", "1500ms"), ("2.5e-1 s", "250ms")]
)
def test_durations_with_an_exponent_are_numbers_with_a_unit(spelling: str, resolved: str):
    res = runner.invoke(app, ["validate", "bufferbloat", "--set", f'duration="{spelling}"', "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["duration"] == resolved


def test_a_duration_beyond_the_clock_is_refused_by_name():
    # time is a 64-bit count of nanoseconds: 2^63 ns is about 292 years, 1e10 s is 317 years
    _fails(["validate", "bufferbloat", "--set", "duration=1e10s"], "duration", "1e10s", "too large")


def test_nic_rate_inf_is_accepted_as_the_readme_documents():
    for value in ("inf", '"inf"'):
        res = runner.invoke(app, ["validate", "bufferbloat", "--set", f"topology.nic_rate={value}", "--json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.output)["topology"]["nic_rate"] == "inf"
    _fails(["validate", "bufferbloat", "--set", "topology.nic_rate=nan"], "topology.nic_rate", "nan")


def test_an_empty_key_is_named_visibly():
    _fails(["validate", "bufferbloat", "--set", 'flows.0.""=3'], 'flows[0]."":')
    _fails(["validate", "bufferbloat", "--set", '""=3'], '"":')
    _fails(["validate", "bufferbloat", "--set", 'topology.down.qdisc.""=3'], 'topology.down.qdisc."":')


def _mount_tmpfs(path: Path, options: str) -> bool:
    path.mkdir()
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "none", str(path)],
                          capture_output=True, check=False).returncode == 0  # fmt: skip


@pytest.fixture
def mounted(tmp_path: Path):
    """A tmpfs mounted at tmp_path/m with the given options (needs the right to mount)."""
    mounts = []

    def mount(options: str) -> Path:
        m = tmp_path / f"m{len(mounts)}"
        if not _mount_tmpfs(m, options):
            pytest.skip("cannot mount a tmpfs here (needs root)")
        mounts.append(m)
        return m

    yield mount
    for m in mounts:
        subprocess.run(["umount", "--lazy", str(m)], check=False)  # a writer may still hold a file


def test_out_on_a_read_only_file_system_fails_before_the_run(tmp_path: Path, mounted):
    ro = mounted("ro,size=1m")
    out = _fails(
        ["run", str(_scenario(tmp_path)), "--out", str(ro / "results")],
        f"--out: {ro / 'results'}",
        "read-only file system",
    )
    assert out.count("\n") == 1


def test_out_on_a_full_file_system_is_one_line_and_stores_nothing(tmp_path: Path, mounted):
    full = mounted("size=16k")
    out = _fails(
        ["run", str(_scenario(tmp_path, duration="3s")), "--out", str(full), "--set", "record.level=packets"],
        f"--out: {full}",
        "No space left on device",
        "not stored",
    )
    assert out.count("\n") == 1
    assert [p.name for p in full.iterdir() if not p.name.startswith("catalog")] == []


@pytest.mark.parametrize(
    ("sets", "needles"),
    [
        (["topology.down.shaper=tbf"], ["topology.down.shaper", "tbf", "htb"]),
        (["topology.down.htb_burst=3000B"], ["topology.down.htb_burst", 'shaper = "htb"']),
        (
            ["topology.down.shaper=htb", "topology.down.htb_burst=0B"],
            ["topology.down.htb_burst", "0B", "allowed 1B"],
        ),
        (["topology.down.delay_limit=10p"], ["topology.down.delay_limit", "needs a delay"]),
        (["topology.down.delay=5ms", "topology.down.delay_limit=10KB"], ["delay_limit", "10000B", '"1000p"']),
        (
            ["topology.down.delay=5ms", "topology.down.delay_jitter=6ms"],
            ["delay_jitter", "6ms", "allowed 0s to"],
        ),
    ],
)
def test_htb_and_netem_keys_name_the_key_value_and_what_is_allowed(tmp_path: Path, sets, needles):
    args = ["validate", str(_scenario(tmp_path))]
    for s in sets:
        args += ["--set", s]
    _fails(args, *needles)


@pytest.mark.parametrize(
    ("setting", "needles"),
    [
        ("record.level=1", ["record.level: 1 is not allowed; allowed: summary, series, packets"]),
        ("flows.0.kind=true", ["flows[0].kind: true is not allowed; allowed: tcp, udp, "]),
        ("flows.0.direction=1", ["flows[0].direction: 1 is not allowed; allowed: up, down"]),
        ("flows.0.count=-1", ["flows[0].count: -1 is out of range; allowed: an integer from 1 to 100000"]),
        ("flows.0.count=2.5", ["flows[0].count: 2.5 is not allowed; allowed: an integer from 1 to 100000"]),
    ],
)
def test_wrong_typed_values_name_the_key_the_value_and_what_is_allowed(tmp_path: Path, setting, needles):
    out = _fails(["validate", str(_scenario(tmp_path)), "--set", setting], *needles)
    assert len(out.strip().splitlines()) == 1, out
    assert "expected" not in out, out
