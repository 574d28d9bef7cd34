"""README.md's ten-line example as a reader runs it: its Python block, run as a script, prints
the lines the README shows after it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def example(text: str) -> tuple[str, list[str]]:
    """The section's Python block and the plain block after it (what the README says it prints)."""
    section = text.split("## A ten-line example", 1)[1]
    code, shown = re.findall(r"```(?:python)?\n(.*?)```", section, flags=re.DOTALL)[:2]
    return code, shown.splitlines()


def test_the_ten_line_example_prints_what_the_readme_shows(tmp_path):
    code, shown = example(README.read_text())
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       check=False, timeout=300)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == shown, r.stdout
