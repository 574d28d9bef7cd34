"""The figures and the report of a 15-run sweep (rrul_be x 5 disciplines x 3 replications) are
readable: every run named by its discipline and replication, never by its derived seed; every
legend, title and tick label inside the figure and apart; no matplotlib warning; per-flow
figures drawn by run group and flow class, with as many legend entries as groups and classes."""

from __future__ import annotations

import itertools
import re
import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import aqmlab
from aqmlab import plots, report, store
from aqmlab.plots.artists import LEGEND_MOST

QDISCS = ["pfifo", "codel", "pie", "fq_codel", "cake"]
REPS = 3
PER_FLOW = ("goodput_ts", "cwnd_ts", "srtt_ts", "cc_ts")
SEED = re.compile(r"\d{10,}")  # a derived seed has 19 digits; no other label has ten in a row


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep15")
    sweep = {
        "base": "rrul_be", "name": "fig15", "seed": 1, "reps": REPS, "set": {"duration": "6s"},
        "zip": {"params.qdisc": QDISCS, "topology.down.qdisc": QDISCS, "topology.up.qdisc": QDISCS},
    }  # fmt: skip
    table = aqmlab.sweep(sweep, jobs=2, out=out, keep_packets=True)
    assert (table["status"] == "ok").all() and len(table) == len(QDISCS) * REPS
    loaded = [store.load_run(str(p), out) for p in store.sweep_run_paths(out, "fig15")]
    return sorted(loaded, key=lambda r: (r.row["point"], r.row["rep"]))  # the order the sweep declares


def _texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def _legends(fig) -> list:
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend() is not None)]


def _inside(inner, outer, tol: float = 1.0) -> bool:
    return (inner.x0 >= outer.x0 - tol and inner.y0 >= outer.y0 - tol and inner.x1 <= outer.x1 + tol
            and inner.y1 <= outer.y1 + tol)  # fmt: skip


def _tcp_flows(run) -> list[tuple]:
    """The run's TCP flows, read from its flows table: (label, cc, direction) each."""
    return [
        (f["label"], f["cc"], f["direction"]) for f in run.tables["flows"].to_pylist() if f["kind"] == "tcp"
    ]


@pytest.mark.parametrize("dpi", [90, 120])  # the report's and `aqmlab plot`'s
@pytest.mark.parametrize("kind", sorted(plots.KINDS))
def test_every_figure_of_a_15_run_sweep_is_readable(runs, kind, dpi):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a constrained-layout or any other warning fails
        fig = plots.figure(kind, runs)
        fig.set_dpi(dpi)
        fig.canvas.draw()
    texts = _texts(fig)
    assert not [t for t in texts if SEED.search(t)], texts
    legends = _legends(fig)
    assert legends, kind
    for leg in legends:
        assert _inside(leg.get_window_extent(), fig.bbox), (kind, leg.get_window_extent(), fig.bbox)
        assert len(leg.texts) <= LEGEND_MOST
    for ax in fig.axes:
        assert _inside(ax.title.get_window_extent(), fig.bbox)
        ticks = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text() and t.get_visible()]
        ticks = [b for b in ticks if _inside(b, ax.bbox.expanded(1.5, 3))]  # the ones drawn
        for a, b in itertools.pairwise(ticks):
            assert not a.overlaps(b), (kind, [t.get_text() for t in ax.get_xticklabels()])
    labels = [t.get_text() for leg in legends for t in leg.texts]
    if kind in PER_FLOW:
        # one entry per run group (a discipline's 3 replications) and per flow class
        # (rrul_be's flows other than its probe are TCP: the goodput figure has the same classes)
        assert len(labels) == len(QDISCS) + len(set(_tcp_flows(runs[0]))) == len(QDISCS) + 2
        assert labels[: len(QDISCS)] == [f"{q} ({REPS} runs)" for q in QDISCS]
    plots.plt.close(fig)


def test_a_sweeps_runs_are_named_by_discipline_and_replication(runs):
    assert plots.run_labels(runs) == [f"{q}, rep {r}" for q in QDISCS for r in range(REPS)]
    fig = plots.figure("rtt_cdf", runs)
    assert [t.get_text() for t in fig.axes[0].get_legend().texts] == plots.run_labels(runs)
    # a discipline's replications share its colour and differ in line style; no two lines alike
    lines = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("_")]
    colours = [matplotlib.colors.to_hex(ln.get_color()) for ln in lines]
    for q in range(len(QDISCS)):
        assert len(set(colours[q * REPS : (q + 1) * REPS])) == 1
    assert len(set(colours)) == len(QDISCS)
    assert len({(c, ln.get_linestyle(), ln.get_marker()) for c, ln in zip(colours, lines)}) == len(runs)


def test_the_class_line_is_the_mean_over_runs_of_the_mean_per_flow(runs):
    # pie draws random numbers: its replications differ. The expectation is computed here from
    # the stored flow_series (delivered bytes): per run the mean per-flow rate of the download
    # flows at each sample, then the mean, least and greatest over the three runs.
    pie = [r for r in runs if r.meta["params"]["qdisc"] == "pie"]
    per_run = []
    for r in pie:
        fs = r.tables["flow_series"].to_pandas()
        down = {f["flow"] for f in r.tables["flows"].to_pylist() if f["label"] == "download"}
        rates = []
        for _, g in fs[fs["flow"].isin(down)].groupby("flow"):
            g = g.sort_values("t_ns")
            rates.append(
                np.diff(g["delivered_bytes"].to_numpy(float)) * 8 / np.diff(g["t_ns"].to_numpy(float)) * 1e3
            )
        per_run.append(np.mean(rates, axis=0))
    want = np.mean(per_run, axis=0)
    assert np.ptp(per_run, axis=0).max() > 0.1  # the runs differ: the band is not a line
    ax = plots.figure("goodput_ts", runs).axes[0]
    colour = matplotlib.colors.to_rgba(f"C{QDISCS.index('pie')}")
    drawn = [ln for ln in ax.get_lines() if matplotlib.colors.to_rgba(ln.get_color()) == colour
             and ln.get_linestyle() == "-"]  # fmt: skip
    assert len(drawn) == 1
    np.testing.assert_allclose(drawn[0].get_ydata(), want, rtol=1e-9)
    band = [c for c in ax.collections if matplotlib.colors.to_rgba(c.get_facecolor()[0])[:3] == colour[:3]]
    lo, hi = np.min(per_run, axis=0), np.max(per_run, axis=0)
    ys = np.concatenate([p.vertices[:, 1] for c in band[:1] for p in c.get_paths()])
    assert np.isclose(ys.min(), lo.min()) and np.isclose(ys.max(), hi.max())


def test_the_box_plot_counts_runs_not_values(runs):
    # rrul_be loads both directions: each run has a value in the down and in the up box
    ax = plots.figure("box", runs).axes[0]
    assert len(ax.get_xticklabels()) == 2 * len(QDISCS)
    assert ax.get_legend().texts[0].get_text().endswith(f"n = {len(runs)} runs")


def test_three_runs_still_draw_every_flow(runs):
    three = runs[:3]
    tcp = sum(len(_tcp_flows(r)) for r in three)
    ax = plots.figure("cwnd_ts", three).axes[0]
    labels = [t.get_text() for t in ax.get_legend().texts]
    assert len(labels) == tcp and all(lab.startswith("pfifo, rep ") for lab in labels)


def test_the_report_of_the_sweep_names_no_seed(runs, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = report.write_report(runs, tmp_path / "r.html").read_text()
    visible = re.sub(r"data:image/png;base64,[^'\"]+", "", text)
    start = visible.index("<h2>Runs side by side</h2>")
    table = visible[start : visible.index("</table>", start)]
    assert [m for m in re.findall(r"<tr><td class=l>(.*?)</td>", table)] == plots.run_labels(runs)
    assert not SEED.search(table)
    assert Path(tmp_path / "r.html").stat().st_size > 10_000


def _alone(name: str, seed: int):
    from aqmlab import api

    res = api.run("rrul_be", seed=seed, overrides={"duration": "2s", "topology.down.qdisc": "pfifo",
                                                   "topology.up.qdisc": "pfifo"})  # fmt: skip
    return store.RunData(path=Path(name), meta=res.meta, summary=res.summary, scenario=res.meta["scenario"],
                         tables=res.tables)  # fmt: skip


def test_runs_made_alone_and_runs_of_several_roots_are_told_apart(runs):
    short = [_alone("a", 7), _alone("b", 8)]
    assert plots.run_labels(short) == ["pfifo, seed 7", "pfifo, seed 8"]  # seeds as typed
    long = [_alone("run-a", 4539992932799893031), _alone("run-b", 5287383170097589215)]
    assert plots.run_labels(long) == ["pfifo [run-a]", "pfifo [run-b]"]  # never a derived seed
    # a sweep's pfifo runs and a pfifo run made alone: the sweep's name, then the replication
    mixed = plots.run_labels([*runs[:REPS], short[0]])
    assert mixed == [*(f"fig15: pfifo, rep {r}" for r in range(REPS)), "single run: pfifo"]


def test_plot_and_report_take_a_sweeps_runs_in_the_order_it_declares(runs):
    from aqmlab.cli.results import _select

    root = Path(runs[0].sweep_dir).parent.parent
    got = _select(["fig15"], root, None)
    assert [(r.meta["params"]["qdisc"], r.rep) for r in got] == [(q, n) for q in QDISCS for n in range(REPS)]
