"""Every table the commands print, at a real terminal of 80 and of 200 columns: no cell is cut
(no ellipsis; every number of the table printed into a pipe, where nothing limits the width, is
on the terminal whole, as often), and no line is wider than the terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import sys
import termios
from collections import Counter
from pathlib import Path

import pytest

from aqmlab.richtable import _column_blocks

AQMLAB = str(Path(sys.executable).parent / "aqmlab")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def in_terminal(cols: int, *args) -> str:
    """What ``aqmlab ARGS`` prints on a pseudo-terminal ``cols`` wide (window size set before the
    command starts), escape sequences removed."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: wait for the parent to size the terminal, then run the command
        os.read(0, 1)
        os.execv(AQMLAB, [AQMLAB, *map(str, args)])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    os.write(fd, b"\n")
    out = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.decode(errors="replace")
    # a line redrawn (a progress bar) shows what was written after its last carriage return
    lines = ANSI.sub("", out.decode()).replace("\r\n", "\n").split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)


def in_pipe(*args) -> str:
    import subprocess

    return subprocess.run([AQMLAB, *map(str, args)], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    r = tmp_path_factory.mktemp("width")
    in_pipe("run", "rrul_be", "--set", "duration=6s", "--out", r)
    return r


COMMANDS = {
    "run": ["run", "rrul_be", "--set", "duration=6s", "--out", "{tmp}"],
    "compare": [
        "run",
        "rrul_be",
        "--qdisc",
        "pfifo,codel,fq_codel",
        "--set",
        "duration=6s",
        "--out",
        "{tmp}",
    ],
    "runs": ["runs", "--root", "{root}"],
    "show": ["show", "{run}", "--root", "{root}"],
    "list qdiscs": ["list", "qdiscs"],
    "list cake": ["list", "qdiscs", "cake"],
    "list tcp": ["list", "tcp"],
    "list ccs": ["list", "ccs"],
    "list ledbat": ["list", "ccs", "ledbat"],
    "list metrics": ["list", "metrics"],
    "list scenarios": ["list", "scenarios"],
    "list experiments": ["list", "experiments"],
    "sweep": ["sweep", "{sweep}", "--out", "{tmp}"],
}
SWEEP = """base = "rrul_be"
name = "w"
seed = 1
reps = 2
[set]
duration = "4s"
[grid]
"topology.down.qdisc" = ["pfifo", "codel"]
"""


@pytest.mark.parametrize("cols", [80, 200])
@pytest.mark.parametrize("command", COMMANDS)
def test_no_table_cuts_a_number(tmp_path, root, command, cols):
    run = next(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    sweep = tmp_path / "w.toml"
    sweep.write_text(SWEEP)
    args = [a.format(tmp=tmp_path / "t", root=root, run=run, sweep=sweep) for a in COMMANDS[command]]
    shown = in_terminal(cols, *args)
    piped = in_pipe(*[a.replace(str(tmp_path / "t"), str(tmp_path / "p")) for a in args])
    assert "…" not in shown, shown
    wide = [line for line in shown.splitlines() if len(line) > cols]
    assert not wide, "\n".join(wide)
    # run names and paths differ between the two invocations: compare the tables' numbers only
    tables = lambda text: [ln for ln in text.splitlines() if ln.startswith(("│", "┃"))]
    want = Counter(n for ln in tables(piped) for n in NUMBER.findall(ln))
    have = Counter(n for ln in tables(shown) for n in NUMBER.findall(ln))
    missing = want - have
    assert not missing, f"numbers cut or lost at {cols} columns: {dict(missing)}\n{shown}"


def test_column_blocks_fit_and_keep_a_statistic_with_its_column():
    # widths include padding; a block of k columns has k + 1 borders
    need = [7, 9, 9, 8, 7, 8]
    assert _column_blocks(need, 200) == [[0, 1, 2, 3, 4, 5]]
    blocks = _column_blocks(need, 30)
    assert all(sum(need[j] for j in b) + len(b) + 1 <= 30 for b in blocks)
    assert [b[0] for b in blocks] == [0] * len(blocks)
    assert sorted({j for b in blocks for j in b}) == list(range(6))
    # column 4 glued to 3: never the first after the key column of a block
    glued = _column_blocks(need, 30, {4})
    assert all(b[1] != 4 for b in glued if len(b) > 1)
