"""Console tables that never cut a number: ``FitTable``, the one table class every command and
study prints with."""

from __future__ import annotations

import dataclasses
import re

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table

STATISTIC = re.compile(r"p\d+(\.\d+)?|max|min|mean|median")


class FitTable(Table):
    """A table that never cuts a cell to fit the terminal. Each column is at least as wide as
    its longest word (a header wraps between words, a number never); when the columns do not fit
    side by side at that, the table is printed as several tables of the same rows, each with the
    first column (the row's name) and as many of the next as fit, as pandas prints a wide frame."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.glued: set[int] = set()

    def add_column(self, header: str = "", *args, **kwargs) -> None:
        """``Table.add_column``. A column headed by a statistic alone ("p95", "max") says what
        it measures through the column before it, and is never printed apart from it."""
        if STATISTIC.fullmatch(str(header)):
            self.glued.add(len(self.columns))
        super().add_column(header, *args, **kwargs)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        measured = [self._measure_column(console, options, c) for c in self.columns]
        width = options.max_width
        if sum(m.maximum for m in measured) + len(measured) + 1 <= width:
            yield from super().__rich_console__(console, options)
            return
        blocks = _column_blocks([m.minimum for m in measured], width, self.glued)
        for i, cols in enumerate(blocks):
            part = Table(title=self.title if i == 0 else f"{self.title or 'table'} (continued)",
                         box=self.box, show_lines=self.show_lines, caption=self.caption)  # fmt: skip
            sizes = _share([measured[j].minimum for j in cols], [measured[j].maximum for j in cols],
                           width - len(cols) - 1)  # fmt: skip
            for k, (j, w) in enumerate(zip(cols, sizes)):
                c = self.columns[j]
                # a word wider than the whole terminal folds rather than being cut
                part.columns.append(dataclasses.replace(c, _index=k, _cells=list(c._cells), overflow="fold",
                                                        width=w - self._get_padding_width(j)))  # fmt: skip
            part.rows = list(self.rows)
            yield part


def _share(least: list[int], most: list[int], room: int) -> list[int]:
    """Column widths from their least (longest word) towards their most (longest line), the
    room beyond the least handed out one character at a time to the columns still short."""
    widths = list(least)
    spare = room - sum(widths)
    while spare > 0 and any(w < m for w, m in zip(widths, most)):
        for k, m in enumerate(most):
            if spare and widths[k] < m:
                widths[k] += 1
                spare -= 1
    return widths


def _column_blocks(need: list[int], width: int, glued: set[int] = frozenset()) -> list[list[int]]:
    """Columns grouped so that each group's widths (``need``, padding included) and its borders
    (one between columns and one at each edge) fit ``width``: the first column in every group,
    the others in order, a column of ``glued`` in the group of the one before it. One group
    when all fit."""
    runs: list[list[int]] = []
    for j in range(1, len(need)):
        if j in glued and runs:
            runs[-1].append(j)
        else:
            runs.append([j])
    blocks = [[0]]
    for run in runs:
        block = blocks[-1]
        wide = sum(need[k] for k in block + run) + len(block + run) + 1
        if wide > width and len(block) > 1:
            blocks.append([0])
        blocks[-1].extend(run)
    return blocks
