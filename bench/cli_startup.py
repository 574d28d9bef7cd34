"""Wall time of the quick `aqmlab` commands (`--help`, `list qdiscs`, `validate rrul_be`), each
in a fresh process, median of --reps. The target is < 0.5 s: those commands import only typer,
rich and the core; pyarrow, pandas, DuckDB and matplotlib load only in the commands that use them.

    python bench/cli_startup.py [--reps 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = (["--help"], ["list", "qdiscs"], ["validate", "rrul_be"])
ENTRY = "import sys; from aqmlab.cli import entry; sys.argv[0] = 'aqmlab'; entry()"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    print("| command | median s | min-max s |")
    print("|---|---:|---:|")
    for args in COMMANDS:
        walls = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", ENTRY, *args], check=True, capture_output=True)
            walls.append(time.perf_counter() - t0)
        print(
            f"| aqmlab {' '.join(args)} | {statistics.median(walls):.2f} | {min(walls):.2f}-{max(walls):.2f} |"
        )


if __name__ == "__main__":
    main()
