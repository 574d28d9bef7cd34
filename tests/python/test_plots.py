"""Every plot kind renders to a non-empty file; errors name the kind or the missing table."""

from pathlib import Path

import matplotlib
import numpy as np
import pytest
import synth

from aqmlab import metrics, plots
from aqmlab.plots import artists
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
    # a figure of stacked panels labels time under the last one
    assert any(a.get_xlabel() for a in fig.axes) and ax.get_ylabel() and ax.get_legend() is not None
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


def _dots_figure(cls, x, y):
    fig, ax = artists._fig("dots", "x", "y")
    ax.add_line(cls(x, y, **artists._dots(0, ms=2), label="dots"))
    ax.autoscale_view()
    artists._legend(ax)
    return fig


def _pixels(path):
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB")).astype(int)


def test_pixel_dots_mark_the_pixels_every_point_marks(tmp_path):
    # Matplotlib's own drawing of every point (a plain Line2D) is the reference. Points that
    # repeat the same spot many times, as a queue's packets do, and lone points: the decimated
    # series marks exactly the same pixels; only the antialiased rim of a stacked dot, blended
    # once instead of many times, may be lighter.
    from matplotlib.lines import Line2D

    rng = np.random.default_rng(3)
    x = np.r_[rng.uniform(0, 10, 20_000), np.repeat(rng.uniform(0, 10, 50), 40)]
    y = np.r_[rng.exponential(5, 20_000), np.repeat(rng.uniform(0, 60, 50), 40)]
    ref = _pixels(plots.save(_dots_figure(Line2D, x, y), tmp_path / "all.png"))
    got = _pixels(plots.save(_dots_figure(plots.PixelDots, x, y), tmp_path / "dots.png"))
    background = np.array([255, 255, 255])
    assert ((ref != background).any(axis=2) == (got != background).any(axis=2)).all()
    # and no pixel is nearer the series' colour than with every point drawn (8-bit rounding aside)
    c0 = (np.array(matplotlib.colors.to_rgb("C0")) * 255).round().astype(int)
    assert (np.abs(got - c0) >= np.abs(ref - c0) - 1).all()
    assert (got != ref).any()  # the stacked dots' rims are lighter


def test_pixel_dots_draw_one_marker_per_pixel_and_keep_all_in_a_vector_file(tmp_path):
    from matplotlib.lines import Line2D

    x = np.r_[np.zeros(500), 1.0, 2.0]  # 500 points on one spot and two apart
    y = np.r_[np.zeros(500), 1.0, 2.0]
    svg = [plots.save(_dots_figure(cls, x, y), tmp_path / f"{cls.__name__}.svg").read_text().count("<use ")
           for cls in (Line2D, plots.PixelDots)]  # fmt: skip
    assert svg[0] == svg[1] > 502  # every point (and the glyphs of the text)
    fig = _dots_figure(plots.PixelDots, x, y)
    drawn = []
    fig.canvas.get_renderer().draw_markers = lambda gc, mk, mt, path, trans, rgb=None: drawn.append(len(path))
    fig.canvas.draw()
    assert max(drawn) == 3  # the series; the ticks are markers of one point each


def _legend_figures():
    """Axes whose best legend place differs: a queue's dots (sorted times, a free corner), dots
    over the whole axes (no free place: the counts decide), lines crowding the upper corners, a
    step series, lines with gaps (NaN: counted whole), an ellipse patch, places that tie."""
    from matplotlib.patches import Ellipse

    rng = np.random.default_rng(11)
    t = np.sort(rng.uniform(0, 10, 30_000))
    yield "queue dots", [(plots.PixelDots, t, rng.exponential(3, t.size))]
    yield "dots everywhere", [(plots.PixelDots, rng.uniform(0, 1, 8000), rng.uniform(0, 1, 8000)),
                              (plots.PixelDots, rng.uniform(0, 1, 5000), rng.uniform(0, 1, 5000))]  # fmt: skip
    x = np.linspace(0, 1, 2000)
    yield "upper lines", [(None, x, 1 - (x - 0.5) ** 2), (None, x, 0.9 + 0.05 * np.sin(20 * x))]
    yield "steps", [("step", x, np.floor(10 * x) ** 2)]
    gappy = np.where(rng.uniform(size=x.size) < 0.05, np.nan, np.sin(6 * x))
    yield "gaps", [(None, x, gappy), (plots.PixelDots, x, -gappy)]
    yield "ellipse", [(Ellipse, (0.5, 0.5), (0.9, 0.9)), (None, x, x)]
    # the axes' rim and both diagonals: the places at the middle of each side tie (badness 1),
    # and the first of them in matplotlib's order wins
    yield "ties", [(None, np.array([0, 1, 1, 0, 0, 1.0]), np.array([0, 0, 1, 1, 0, 1.0])),
                   (None, np.array([0, 1.0]), np.array([1, 0.0]))]  # fmt: skip


def _legend_figure(series, legend: str):
    fig, ax = artists._fig("legend", "x", "y")
    for i, (kind, x, y) in enumerate(series):
        if kind is None:
            ax.plot(x, y, **artists._line(i), label=f"s{i}")
        elif kind == "step":
            ax.step(x, y, where="post", **artists._line(i), label=f"s{i}")
        elif kind is plots.PixelDots:
            ax.add_line(kind(x, y, **artists._dots(i, ms=2), label=f"s{i}"))
        else:
            ax.add_patch(kind(x, *y, alpha=0.3, label=f"s{i}"))
    ax.autoscale_view()
    if legend == "ours":
        artists._legend(ax)
    else:
        ax.legend(fontsize=7, loc="best")
    return fig


@pytest.mark.parametrize(("name", "series"), list(_legend_figures()))
def test_best_legend_takes_matplotlibs_own_place(name, series, tmp_path):
    # Matplotlib's own search (Legend._find_best_position) is the reference: at every call of a
    # drawing, with the same legend, axes and renderer, the place is the same, and the PNG is
    # the same byte for byte as with matplotlib's own legend.
    from matplotlib.legend import Legend

    fig = _legend_figure(series, "ours")
    leg = fig.axes[0].get_legend()
    assert isinstance(leg, plots.BestLegend)
    places = []
    ours = leg._find_best_position

    def both(width, height, renderer):
        places.append(
            (ours(width, height, renderer), Legend._find_best_position(leg, width, height, renderer))
        )
        return places[-1][0]

    leg._find_best_position = both
    plots.save(fig, tmp_path / "checked.png")
    assert places and all(a == b for a, b in places), places
    own = plots.save(_legend_figure(series, "matplotlib"), tmp_path / "own.png").read_bytes()
    assert plots.save(_legend_figure(series, "ours"), tmp_path / "ours.png").read_bytes() == own


def test_best_legend_places_differ_between_the_figures(tmp_path):
    # the figures above exercise more than one place (the test could not pass by always
    # choosing the first)
    seen = set()
    for _, series in _legend_figures():
        fig = _legend_figure(series, "matplotlib")
        fig.canvas.draw()
        leg = fig.axes[0].get_legend()
        seen.add(tuple(np.round(leg.get_window_extent().bounds, 3)))
    assert len(seen) >= 3, seen


@pytest.mark.parametrize("kind", sorted(plots.KINDS))
def test_every_kind_draws_41_runs_named_with_dollars(kind, tmp_path):
    # From the 41st line on, lines carry markers: one figure then got both 'markersize' and
    # 'ms' (a TypeError); a '$' in a name is text, not the start of TeX (it stopped the draw).
    # (two scenario names: a title names up to three and counts more)
    many = [mk(f"cost $5 ^$ {i % 2}", i, ("codel", "pie")[i % 2], 1 + i / 41, 1.0) for i in range(41)]
    fig = plots.figure(kind, many)
    out = plots.save(fig, tmp_path / f"{kind}.png")
    assert out.stat().st_size > 1000
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    assert any("$" in t for t in texts), texts[:5]


def test_srtt_ts_draws_each_tcp_flows_smoothed_rtt_never_below_the_base_rtt():
    from aqmlab import api

    res = api.run("rrul_be", seed=1, duration="6s")
    run = RunData(path=Path("srtt"), meta=res.meta, summary=res.summary, scenario=res.meta["scenario"],
                  tables=res.tables)  # fmt: skip
    fig = plots.figure("srtt_ts", [run])
    lines = [ln for ln in fig.axes[0].get_lines() if not ln.get_label().startswith("_")]
    tcp = [f for f in res.tables["flows"].to_pylist() if f["kind"] == "tcp"]
    assert len(lines) == len(tcp)
    base_ms = float(res.meta["scenario"]["topology"]["rtt"].removesuffix("ms"))  # the path without a queue
    for ln in lines:
        y = np.asarray(ln.get_ydata(), dtype=float)
        y = y[~np.isnan(y)]
        assert y.size and y.min() >= base_ms, (ln.get_label(), y.min())
