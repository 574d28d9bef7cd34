"""The congestion controllers' state in flow_series (the ``cc_*`` and ``ssthresh_bytes``
columns) from a real run, and the ``cc_ts`` figure that draws it, also through ``aqmlab plot``."""

import math

import pyarrow as pa
import pytest
import typer
from typer.testing import CliRunner

from aqmlab import metrics, plots, store
from aqmlab.api import simulate
from aqmlab.cli import results

# DCTCP (ECN, marked by fq_codel's 1 ms CE threshold), BBR and CUBIC (no ECN: CoDel drops)
SCENARIO = {
    "name": "cc_state",
    "duration": "4s",
    "topology": {
        "rtt": "20ms",
        "down": {"rate": "20Mbps", "qdisc": {"kind": "fq_codel", "ce_threshold": "1ms"}},
        "up": {"rate": "20Mbps"},
    },
    "flows": [
        {"kind": "tcp", "cc": "dctcp", "ecn": True},
        {"kind": "tcp", "cc": "bbr"},
        {"kind": "tcp", "cc": "cubic"},
    ],
    "record": {"level": "series", "interval": "5ms"},
}


@pytest.fixture(scope="module")
def run():
    return simulate(SCENARIO)


def _flow(tables, flow: int) -> dict[str, list]:
    fs = tables["flow_series"]
    return fs.filter(pa.compute.equal(fs["flow"], flow)).to_pydict()


def test_columns_are_typed_and_null_where_a_controller_lacks_the_quantity(run):
    tables, _ = run
    schema = tables["flow_series"].schema
    assert schema.field("cc_alpha").type == pa.float64()
    assert schema.field("cc_pacing_gain").type == pa.float64()
    assert schema.field("cc_bw_bps").type == pa.uint64()
    dctcp, bbr, cubic = (_flow(tables, f) for f in range(3))
    # DCTCP: alpha from 1 (Linux's initial value) down to the marked fraction, a fraction
    assert dctcp["cc_alpha"][0] == 1.0 and all(0.0 <= a <= 1.0 for a in dctcp["cc_alpha"])
    assert min(dctcp["cc_alpha"]) < 0.5
    assert set(dctcp["cc_bw_bps"]) == {None} and set(dctcp["cc_state"]) == {None}
    # BBR: STARTUP first at 2/ln 2, later PROBE_BW; a bandwidth estimate below the link's rate
    assert bbr["cc_state"][0] == "startup" and "probe_bw" in bbr["cc_state"]
    assert set(bbr["cc_state"]) <= {"startup", "drain", "probe_bw", "probe_rtt"}
    assert math.isclose(bbr["cc_pacing_gain"][0], 2 / math.log(2), abs_tol=0.002)
    assert 0 < bbr["cc_bw_bps"][-1] <= 20e6
    assert set(bbr["cc_alpha"]) == {None} and set(bbr["cc_w_max_bytes"]) == {None}
    # CUBIC: delay_min at least the base RTT; W_max once it has reduced its window
    assert all(r is None or r >= 20_000_000 for r in cubic["cc_min_rtt_ns"])
    assert cubic["cc_min_rtt_ns"][-1] is not None and cubic["cc_w_max_bytes"][-1] > 0
    assert cubic["ssthresh_bytes"][-1] < cubic["cc_w_max_bytes"][-1]  # ssthresh = 0.7 x cwnd
    assert set(cubic["cc_state"]) == {None} and set(cubic["cc_pacing_gain"]) == {None}


def test_cc_ts_draws_one_panel_per_quantity_and_every_flow_in_one_legend(run, tmp_path):
    tables, meta = run
    store.write_run(tmp_path, "cc", tables, meta, metrics.summarize(tables, meta))
    fig = plots.figure("cc_ts", [store.load_run(tmp_path / "cc")])
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels == [
        "alpha",
        "bandwidth est.\n(Mbit/s)",
        "pacing gain",
        "state",
        "min RTT (ms)",
        "W_max (kB)",
    ]
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(legend) == 3 and "dctcp" in legend[0] and "cubic" in legend[2]
    states = [t.get_text() for t in fig.axes[3].get_yticklabels()]
    assert states[0] == "startup" and "probe_bw" in states
    app = typer.Typer()
    app.callback()(lambda: None)
    results.register(app)
    out = tmp_path / "cc.png"
    res = CliRunner().invoke(app, ["plot", "cc", "--kind", "cc_ts", "-o", str(out), "--root", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert out.stat().st_size > 1000
