"""Rewrites the column tables of docs/tables.md from the core's declarations
(crates/aqmlab-core/src/record/tables.rs), between the generated-section markers.

    python scripts/tables_doc.py          # rewrite docs/tables.md
    python scripts/tables_doc.py --check  # exit 1 when the file is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

from aqmlab import _core

DOC = Path(__file__).resolve().parent.parent / "docs" / "tables.md"
BEGIN = "<!-- begin: written by scripts/tables_doc.py from record/tables.rs -->\n"
END = "<!-- end: written by scripts/tables_doc.py -->\n"


def current(text: str) -> str:
    """``text`` with its generated section replaced by the core's declarations."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + _core.tables_doc() + END + tail


def main() -> int:
    text = DOC.read_text()
    new = current(text)
    if "--check" in sys.argv[1:]:
        if new != text:
            print(f"{DOC} is out of date: run python scripts/tables_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
