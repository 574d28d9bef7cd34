"""Files written whole or not at all: a figure, a table, a report is written under a temporary
name beside its place and renamed into it, so that an interrupt, a full disk or a crash never
leaves a file cut short where a reader looks for it (docs/architecture.md, principle 8)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def whole(path: str | Path) -> Iterator[Path]:
    """The temporary path to write ``path``'s content to; renamed to ``path`` when the block ends
    normally, removed when it raises (an interrupt included)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
