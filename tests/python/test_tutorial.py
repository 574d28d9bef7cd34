"""docs/tutorial.md as a reader follows it: its scenario files saved, its commands run in order
in an empty directory, and every line it shows them print printed again, in that order (what the
tutorial marks as shortened, run ids, paths and wall times aside)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "tutorial.md"
BIN = Path(sys.executable).parent
# what differs from one run of the tutorial to the next: run ids and paths with a time stamp,
# wall times; and the tutorial's own notes on what it shortened, in parentheses
VARIES = re.compile(r"aqmlab-results/|events in|s wall|^\(")


def steps(text: str) -> list[tuple[str, str, list[str]]]:
    """The tutorial in order: ("file", name, its lines) for a TOML block, saved under the last
    file name the text before it names; ("shell", script, the lines shown) for a block of
    ``$ `` commands, a command running on over the lines that close its quotes."""
    out: list[tuple[str, str, list[str]]] = []
    lines, i, prose = text.splitlines(), 0, []
    while i < len(lines):
        if not lines[i].startswith("```"):
            prose.append(lines[i])
            i += 1
            continue
        kind, body = lines[i][3:].strip(), []
        i += 1
        while not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if kind == "toml":
            names = re.findall(r"`([\w.-]+\.toml)`", "\n".join(prose))
            out.append(("file", names[-1], body))
        elif body and body[0].startswith("$ "):
            script, shown, j = [], [], 0
            while j < len(body):
                if body[j].startswith("$ "):
                    cmd = body[j][2:]
                    while cmd.count('"') % 2:
                        j += 1
                        cmd += "\n" + body[j]
                    script.append(cmd)
                else:
                    shown.append(body[j].rstrip())
                j += 1
            out.append(("shell", "\n".join(script), shown))
        prose = []
    return out


def test_the_tutorial_reads_as_it_runs(tmp_path):
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "COLUMNS": "400", "TERM": "dumb"}
    done = 0
    for kind, what, lines in steps(DOC.read_text()):
        if kind == "file":
            (tmp_path / what).write_text("\n".join(lines) + "\n")
            continue
        r = subprocess.run(["bash", "-c", what], check=False, cwd=tmp_path, env=env, text=True, timeout=300,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        printed = [line.rstrip() for line in r.stdout.splitlines()]
        at = 0
        for want in lines:
            if not want.strip() or VARIES.search(want.strip()):
                continue
            assert want in printed[at:], (
                f"after `{what.splitlines()[-1]}`, not printed:\n{want}\n" + "\n".join(printed)
            )
            at = printed.index(want, at) + 1
        done += 1
    assert done >= 5, "the tutorial's command blocks"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('Save this as `a.toml`:\n```toml\nx = 1\n```\n', [("file", "a.toml", ["x = 1"])]),
        ('```\n$ aqmlab query "select 1,\n    2"\nout\n$ echo 2\n2\n```\n',
         [("shell", 'aqmlab query "select 1,\n    2"\necho 2', ["out", "2"])]),
    ],
)  # fmt: skip
def test_steps_reads_files_and_commands(text, want):
    assert steps(text) == want
