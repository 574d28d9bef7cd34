"""Every plot kind renders to a non-empty file; errors name the kind or the missing table."""

from pathlib import Path

import pytest
import synth

from aqmlab import metrics, plots
from aqmlab.store import RunData


def mk(name, seed=1, qdisc="codel", ds=1.0, gs=1.0, drop=()):
    t, m = synth.scaled_run(name, seed, qdisc, ds, gs)
    for d in drop:
        t.pop(d)
    return RunData(path=Path(name), meta=m, summary=metrics.summarize(t, m), scenario=m["scenario"], tables=t)


@pytest.fixture
def runs():
    out = []
    for i, (q, ds, gs) in enumerate([("codel", 1.0, 1.0), ("codel", 1.5, 0.9), ("codel", 0.8, 1.1),
                                     ("pie", 2.0, 1.2), ("pie", 2.5, 1.0), ("pfifo", 3.0, 1.3)]):  # fmt: skip
        out.append(mk(f"{q}-{i}", i, q, ds, gs))
    return out


@pytest.mark.parametrize("kind", sorted(plots.KINDS))
@pytest.mark.parametrize("ext", ["png", "svg", "pdf"])
def test_every_kind_renders(runs, kind, ext, tmp_path):
    fig = plots.figure(kind, runs)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_legend() is not None
    assert "qdisc: down=" in ax.get_title()
    out = plots.save(fig, tmp_path / f"{kind}.{ext}")
    assert out.stat().st_size > 1000


def test_title_names_scenario_and_qdiscs(runs):
    title = plots.figure("delay_cdf", runs[:2]).axes[0].get_title()
    assert "codel-0" in title and "down=codel up=pfifo" in title


def test_box_groups_by_qdisc(runs):
    fig = plots.box(runs, "queue_delay_p95_ms", "qdisc")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == ["codel", "pfifo", "pie"]


def test_latency_axis_inverted(runs):
    ax = plots.ellipse(runs, by="qdisc").axes[0]
    lo, hi = ax.get_ylim()
    assert lo > hi
    assert len(ax.patches) == 2  # codel and pie have >= 2 runs; pfifo only a marker


def test_unknown_kind_lists_kinds(runs):
    with pytest.raises(plots.UnknownKind, match="unknown plot kind 'nope'; kinds: delay_ts, backlog_ts"):
        plots.figure("nope", runs)


def test_missing_table_is_named():
    r = mk("series-only", drop=("packets",))
    with pytest.raises(
        metrics.MissingTableError, match="run 'series-only' has no 'packets' table.*delay_cdf"
    ):
        plots.figure("delay_cdf", [r])
    # backlog falls back on the queue samples
    assert plots.figure("backlog_ts", [r]) is not None


def test_bad_extension(runs, tmp_path):
    with pytest.raises(ValueError, match="unsupported figure format"):
        plots.save(plots.figure("rtt_cdf", runs), tmp_path / "x.gif")


def test_runs_of_different_grid_points_are_never_pooled(runs):
    # the synthetic runs differ in their grid value delay_scale: by default each is its own group
    keys, groups = plots.grouped(runs)
    assert keys == ["qdisc", "delay_scale"] and len(groups) == len(runs)
    assert len(plots.ellipse(runs).axes[0].patches) == 0  # one run per group: markers only
    keys, groups = plots.grouped(runs, "qdisc")
    assert sorted(len(g) for g in groups.values()) == [1, 2, 3]


def test_unknown_group_key_names_what_is_allowed(runs):
    with pytest.raises(
        ValueError, match=r"by: unknown key 'nope'; allowed: qdisc, up_qdisc, seed, delay_scale"
    ):
        plots.box(runs, "queue_delay_p95_ms", by="nope")
