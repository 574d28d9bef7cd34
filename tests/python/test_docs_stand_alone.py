"""The repository stands alone: every Markdown file that a tracked source, scenario or doc names
exists in the repository, and nothing points outside it (a clone from elsewhere has only what
is tracked)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEXT = (".py", ".rs", ".md", ".toml", ".sh", ".cc", ".txt")
CITED = re.compile(r"(?<![\w./-])((?:\.\./)*[\w./-]*\w\.md)\b")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in out.split() if p.endswith(TEXT) or p == ".ci/run"]


def _resolves(name: str, cited_in: Path) -> bool:
    if name.startswith("../"):
        return (cited_in.parent / name).resolve().is_relative_to(ROOT) and (cited_in.parent / name).exists()
    bare = Path(name)
    return any((base / bare).exists() for base in (ROOT, ROOT / "docs", cited_in.parent)) or any(
        p.name == bare.name for p in ROOT.glob(f"**/{bare.name}") if ".venv" not in p.parts
    )


def test_every_cited_markdown_file_is_in_the_repository():
    missing = []
    for f in _tracked():
        for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            missing += [f"{f.relative_to(ROOT)}:{n}: {m}" for m in CITED.findall(line) if not _resolves(m, f)]
    assert not missing, "\n".join(missing)
