"""The Study contract: what a reproduced study declares, and the one path every study runs through.

A study module builds one ``Study`` value. It declares its name, description, replications,
series, CLI options (``Option``: the flags of ``aqmlab reproduce`` come from these), its
``--quick`` reduction (``Quick``), the published tables it is compared with (``Published``) and
the claims of the paper's text (``Claim``), and three functions: ``run`` (runs or resumes its
sweeps and aggregates them into an ``Outcome``), ``tables`` (what it prints) and ``figures``.

``reproduce`` (this module) does the rest for every study alike: it applies ``--quick``, runs the
study, judges every published cell and claim (``verdicts``), prints the tables and the score
lines, writes ``results.json``, ``runs.csv``, the figures and the HTML report (report.py), and
counts runs over all of a study's sub-sweeps.

Agreement rule, stated once: a measured cell agrees with its published value when they differ by
at most ``TOLERANCE`` (30 %) of the published value, or when both are below the table's
``floor`` (a table states its own floor where its values sit near zero). Claims are judged by
code written from the claim's words, each threshold declared beside the sentence it comes from.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab.lazy import lazy

pd = lazy("pandas")

TOLERANCE = 0.30
"""A measured cell 'agrees' when |measured - published| <= TOLERANCE x |published|."""


@dataclass(frozen=True)
class Option:
    """A case filter of the study's CLI: ``--flag VALUE`` (repeatable) passed to ``run`` as
    ``keyword=[values]``; ``extensible``: values outside ``allowed`` add cases (any built-in
    discipline or module:Class next to the study's)."""

    flag: str
    keyword: str
    allowed: tuple[str, ...]
    help: str
    extensible: bool = False


@dataclass(frozen=True)
class Quick:
    """What ``--quick`` keeps: ``reps`` replications per case and, in ``grid``, fewer grid points
    (run() keyword -> the values kept). It never shortens a case or changes its setup: a quick
    run's cases are cases of the full run, with the same seeds, so its verdicts are the full run's
    measured on fewer samples."""

    reps: int
    grid: Mapping[str, tuple] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True)
class Table:
    """A table as printed and as shown in the report: a title, column heads and rows of text."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple[str, ...]]


Cells = Mapping[str, Mapping[str, float | None]]
"""row -> column -> value."""


@dataclass(frozen=True)
class Published:
    """One published table: its values as the paper printed them and where to find the measured
    counterpart of each cell in the study's ``Outcome`` (same unit)."""

    id: str
    title: str
    values: Cells
    measured: Callable[[Outcome], Cells]
    floor: float | None = None
    """Cells whose published and measured values are both below it agree (the table's own
    resolution near zero, stated with the table)."""
    series: tuple[str, ...] | None = None
    """The series that measure this table (None: every series)."""


Judgement = tuple[bool | None, dict]
"""(holds: True / False / None = not measured, the measured numbers it was judged on)."""


@dataclass(frozen=True)
class Claim:
    """A claim of the paper's text, with the code that judges it from an ``Outcome``."""

    id: str
    text: str
    judge: Callable[[Outcome], Judgement]
    series: tuple[str, ...] | None = None


@dataclass
class Outcome:
    """What a study's ``run`` returns: its aggregated results (the JSON document), every run of
    every sub-sweep, the sweeps themselves, notes from the recorded data, and study-private data
    for the figures (pooled delays, timelines)."""

    results: dict
    runs: pd.DataFrame
    sweeps: list
    series: str
    notes: list[str] = field(default_factory=list)
    data: Any = None


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    reps: int
    series: tuple[str, ...]
    """The study's series; the first is the default."""
    options: tuple[Option, ...]
    quick: Quick
    run: Callable[..., Outcome]
    """run(reps=, series=, ex=, **filters) -> Outcome: runs or resumes the study's sweeps."""
    tables: Callable[[Outcome], list[Table]]
    figures: Callable[[Outcome], dict]
    """{file name: matplotlib figure}."""
    published: tuple[Published, ...] = ()
    claims: tuple[Claim, ...] = ()
    series_help: str = ""

    def option(self, flag: str) -> Option | None:
        return next((o for o in self.options if o.flag == flag), None)


# --------------------------------------------------------------------------- verdicts


def agrees(published: float, measured: float | None, floor: float | None) -> bool | None:
    """The agreement rule (module docstring); None when nothing was measured."""
    if measured is None or pd.isna(measured):
        return None
    if floor is not None and abs(published) < floor and abs(measured) < floor:
        return True
    return abs(measured - published) <= TOLERANCE * abs(published)


def _ratio(published: float, measured: float | None) -> float | None:
    if measured is None or pd.isna(measured) or published == 0:
        return None
    return float(measured) / published


def _applies(series: tuple[str, ...] | None, ran: str) -> bool:
    return series is None or ran in series or ran == "all"


def judge_table(p: Published, o: Outcome) -> dict:
    meas = p.measured(o)
    cells = []
    for row, cols in p.values.items():
        for col, pub in cols.items():
            m = meas.get(row, {}).get(col)
            m = None if m is None or pd.isna(m) else float(m)
            cells.append({"row": row, "col": col, "published": pub, "measured": m,
                          "ratio": _ratio(pub, m), "within_30": agrees(pub, m, p.floor)})  # fmt: skip
    return {
        "title": p.title,
        "floor": p.floor,
        "cells": cells,
        "within_30": sum(1 for c in cells if c["within_30"]),
        "measured": sum(1 for c in cells if c["within_30"] is not None),
        "total": len(cells),
    }


def judge_claim(c: Claim, o: Outcome) -> dict:
    try:
        holds, measured = c.judge(o)
    except (KeyError, ValueError, IndexError, TypeError) as e:  # a part not run: not measured
        holds, measured = None, {"not measured": f"{type(e).__name__}: {e}"}
    return {"id": c.id, "text": c.text, "holds": holds, "measured": measured}


def verdicts(study: Study, o: Outcome) -> dict:
    """Every published cell and claim that the series run measures, judged."""
    return {
        "tables": {p.id: judge_table(p, o) for p in study.published if _applies(p.series, o.series)},
        "claims": [judge_claim(c, o) for c in study.claims if _applies(c.series, o.series)],
    }


def score_lines(v: dict) -> list[str]:
    """One line per table and one for the claims."""
    out = []
    for tid, t in v["tables"].items():
        out.append(f"{tid} ({t['title']}): {t['within_30']} of {t['total']} cells within 30 %"
                   + (f", {t['total'] - t['measured']} not measured" if t["measured"] < t["total"] else ""))  # fmt: skip
    cl = v["claims"]
    if cl:
        n = {k: sum(1 for c in cl if c["holds"] is k) for k in (True, False, None)}
        out.append(f"claims: {n[True]} hold, {n[False]} fail, {n[None]} not measured (of {len(cl)})")
    return out


def verdict_tables(v: dict) -> list[Table]:
    """The published-vs-measured tables and the claims list, as printable tables."""
    out = []
    for tid, t in v["tables"].items():
        rows = [(c["row"], c["col"], fmt(c["published"]), fmt(c["measured"]), fmt(c["ratio"], 2),
                 CELL_MARK[c["within_30"]]) for c in t["cells"]]  # fmt: skip
        out.append(Table(f"{tid}: {t['title']} — published vs measured",
                         ("row", "column", "published", "measured", "ratio", "within 30 %"), rows))  # fmt: skip
    if v["claims"]:
        rows = [
            (c["id"], c["text"], CLAIM_MARK[c["holds"]], _measured_text(c["measured"])) for c in v["claims"]
        ]
        out.append(Table("claims of the text", ("claim", "text", "verdict", "judged on"), rows))
    return out


CELL_MARK = {True: "yes", False: "NO", None: "-"}
CLAIM_MARK = {True: "holds", False: "FAILS", None: "not measured"}


def fmt(v, dec: int = 3) -> str:
    """A number for a table: '-' when missing, 4 significant digits otherwise."""
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return "-"
    if isinstance(v, bool | str):
        return str(v)
    if isinstance(v, int):
        return str(v)
    return f"{v:.{dec}f}" if dec != 3 else f"{v:.4g}"


def _measured_text(m) -> str:
    """A claim's measured numbers as one line, each number to 4 significant digits."""
    if isinstance(m, dict):
        return "; ".join(f"{k} {_nested(v)}" for k, v in m.items())
    return _nested(m)


def _nested(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_nested(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_nested(x) for x in v) + "]"
    return fmt(v)


# --------------------------------------------------------------------------- the run


@dataclass
class Reproduction:
    """A finished reproduction: the study's outcome, its verdicts, where its report went."""

    study: Study
    outcome: Outcome
    verdicts: dict
    report_dir: Path
    quick: bool

    def counts(self) -> dict:
        """Runs over every sub-sweep of the study."""
        s = self.outcome.sweeps
        return {"total": sum(x.total for x in s), "ran": sum(x.ran for x in s),
                "skipped": sum(x.skipped for x in s), "failed": sum(len(x.failed) for x in s),
                "wall_s": sum(x.wall_s for x in s)}  # fmt: skip

    def to_json(self) -> dict:
        return {**self.outcome.results, "study": self.study.name, "series": self.outcome.series,
                "quick": self.quick, "run_counts": self.counts(), "verdicts": self.verdicts}  # fmt: skip


def report_name(study: Study, series: str, quick: bool) -> str:
    s = "" if series == study.series[0] else f"-{series}"
    return f"{study.name}{s}" + ("-quick" if quick else "")


def reproduce(study: Study, *, ex, reps: int | None = None, series: str | None = None, quick: bool = False,
              filters: Mapping[str, Sequence[str]] | None = None, outputs: bool = True) -> Reproduction:  # fmt: skip
    """Runs (or resumes) ``study``, judges it against its published results, and writes its
    outputs (results.json, runs.csv, figures, report.html) under ``ex.report_dir``."""
    series = series or study.series[0]
    kw: dict[str, Any] = {k: list(v) for k, v in (filters or {}).items()}
    if quick:
        reps = min(reps or study.quick.reps, study.quick.reps)
        for k, keep in study.quick.grid.items():
            kw[k] = [v for v in kw[k] if v in keep] if k in kw else list(keep)
    o = study.run(reps=reps or study.reps, series=series, ex=ex, **kw)
    r = Reproduction(study, o, verdicts(study, o), ex.report_dir(report_name(study, series, quick)), quick)
    if outputs:
        write_outputs(r)
    return r


def write_outputs(r: Reproduction) -> list[Path]:
    from aqmlab import files, plots, store

    d = r.report_dir
    d.mkdir(parents=True, exist_ok=True)
    with files.whole(d / "results.json") as tmp:
        store._dump(tmp, r.to_json())
    with files.whole(d / "runs.csv") as tmp:
        r.outcome.runs.to_csv(tmp, index=False)
    figs = [plots.save(fig, d / name) for name, fig in r.study.figures(r.outcome).items()]
    study_report(r, figs, d / "report.html")
    return [d / "results.json", d / "runs.csv", *figs, d / "report.html"]


def print_reproduction(r: Reproduction, console) -> None:
    from rich.text import Text

    from aqmlab.richtable import FitTable

    for t in [*r.study.tables(r.outcome), *verdict_tables(r.verdicts)]:
        rt = FitTable(title=t.title)
        for i, c in enumerate(t.columns):
            rt.add_column(c, justify="left" if i == 0 else "right", overflow="fold")
        for row in t.rows:
            rt.add_row(*(Text(c) for c in row))  # plain text: "[...]" in a cell is not markup
        console.print(rt)
    for n in r.outcome.notes:
        console.print(f"note: {n}", markup=False)
    for line in score_lines(r.verdicts):
        console.print(line, markup=False)
    c = r.counts()
    console.print(f"{c['total']} runs ({c['ran']} run now, {c['skipped']} reused), {c['failed']} failed, "
                  f"{c['wall_s']:.1f} s wall", markup=False)  # fmt: skip
    console.print(f"report: {r.report_dir / 'report.html'}  figures: {r.report_dir}/*.png", markup=False)


_AGREE_CSS = "td.yes{background:#d8f0d8}td.no{background:#f6d0d0}td.na{background:#eee}"
_AGREE_CLASS = {True: "yes", False: "no", None: "na"}


def _html_table(title: str, columns, rows, classes=None) -> str:
    head = "".join(f"<th{' class=l' if i == 0 else ''}>{html.escape(c)}</th>" for i, c in enumerate(columns))
    body = []
    for k, row in enumerate(rows):
        cls = classes[k] if classes else None
        tds = "".join(
            f"<td class='{'l ' if i == 0 else ''}{cls or ''}'>{html.escape(str(v))}</td>"
            for i, v in enumerate(row)
        )
        body.append(f"<tr>{tds}</tr>")
    return f"<h2>{html.escape(title)}</h2><table><tr>{head}</tr>{''.join(body)}</table>"


def study_report(r: Reproduction, figures: Sequence[Path], out_path: str | Path) -> Path:
    """One self-contained HTML file for a reproduction (reproduce.study.Reproduction): the score,
    the study's tables, every published table beside the measured one (cells coloured by
    agreement), the claims with their verdicts and the numbers they were judged on, the notes
    and the figures."""
    from aqmlab import files
    from aqmlab.report import CSS

    st, o, v = r.study, r.outcome, r.verdicts
    c = r.counts()
    title = f"{st.name}{' (--quick)' if r.quick else ''}, series {o.series}"
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{CSS}{_AGREE_CSS}</style></head><body><h1>{html.escape(title)}</h1>",
             f"<p>{html.escape(st.description)}</p>",
             f"<p>{c['total']} runs ({c['ran']} run now, {c['skipped']} reused), {c['failed']} failed.</p>",
             "<h2>How close</h2><ul>"]  # fmt: skip
    parts += [f"<li>{html.escape(line)}</li>" for line in score_lines(v)] or ["<li>nothing published</li>"]
    parts.append("</ul>")
    for tid, t in v["tables"].items():
        rows = [(cl["row"], cl["col"], fmt(cl["published"]), fmt(cl["measured"]), fmt(cl["ratio"], 2),
                 CELL_MARK[cl["within_30"]]) for cl in t["cells"]]  # fmt: skip
        parts.append(_html_table(f"{tid}: {t['title']}", ("row", "column", "published", "measured", "ratio",
                                                          "within 30 %"), rows,
                                 [_AGREE_CLASS[cl["within_30"]] for cl in t["cells"]]))  # fmt: skip
    if v["claims"]:
        rows = [(cl["id"], cl["text"], CLAIM_MARK[cl["holds"]],
                 json.dumps(cl["measured"], default=str)) for cl in v["claims"]]  # fmt: skip
        parts.append(_html_table("Claims of the text", ("claim", "text", "verdict", "judged on"), rows,
                                 [_AGREE_CLASS[cl["holds"]] for cl in v["claims"]]))  # fmt: skip
    for t in st.tables(o):
        parts.append(_html_table(t.title, t.columns, t.rows))
    if o.notes:
        parts.append("<h2>Notes (what the recorded data says)</h2><ul>")
        parts += [f"<li>{html.escape(n)}</li>" for n in o.notes]
        parts.append("</ul>")
    for f in figures:
        b64 = base64.b64encode(Path(f).read_bytes()).decode("ascii")
        parts.append(f"<figure><img alt='{html.escape(Path(f).name)}' src='data:image/png;base64,{b64}'>"
                     f"<figcaption>{html.escape(Path(f).name)}</figcaption></figure>")  # fmt: skip
    parts.append("</body></html>\n")
    out_path = Path(out_path)
    with files.whole(out_path) as tmp:
        tmp.write_text("\n".join(parts), encoding="utf-8")
    return out_path
