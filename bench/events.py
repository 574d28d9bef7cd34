"""Where a TCP run's events and instructions go, per bottleneck data packet, as flows grow.

    python bench/events.py [--callgrind | --cachegrind] [--qdisc fq_codel] [--cases 8x100Mbps:10,256x100Mbps:10,10000x1Gbps:3]

Each case (N flows x bottleneck rate : seconds) is the ns-3 anchor dumbbell of ``_common.dumbbell``
with recording ``summary``, run by the Rust-only driver (``run_json``: build it first, see
README.md). Prints the events per data packet (the down bottleneck's transmissions) by kind
(``sim::EventKind``, the kinds that occur); with ``--callgrind`` also the instructions of the whole process, of the event
loop (``World::run_watched``) and of building the world from the scenario, from
``valgrind --tool=callgrind`` (exact and repeatable on a shared machine, unlike wall time); with
``--cachegrind`` instead the whole process's instructions and misses of the first-level data cache
(``valgrind --tool=cachegrind --cache-sim=yes``, which simulates the host's cache geometry): what a
change of memory layout moves, again without the noise of wall time.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import core_binary, dumbbell, machine, stamp

CASES = "8x100Mbps:10,256x100Mbps:10,10000x1Gbps:3"
# Inclusive instructions of these functions (callgrind_annotate --inclusive=yes).
PARTS = {
    "loop": "aqmlab_core::sim::World::run_watched",
    "build": "aqmlab_core::scenario::build::prepare_with",
}


def run(binary: Path, sc: dict, tool: str | None) -> tuple[dict, dict[str, int]]:
    """run_json's JSON for scenario `sc`, and under valgrind's `tool` its counts: with callgrind the
    instructions (total and PARTS), with cachegrind the instructions and first-level data misses."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sc.json"
        path.write_text(json.dumps(sc))
        prof = Path(d) / f"{tool}.out"
        pre = [] if tool is None else ["valgrind", f"--tool={tool}", f"--{tool}-out-file={prof}"]
        if tool == "cachegrind":
            pre.append("--cache-sim=yes")
        out = subprocess.run([*pre, str(binary), str(path)], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        counts = {"callgrind": lambda: instructions(prof), "cachegrind": lambda: cache_misses(out.stderr)}
        return r, counts[tool]() if tool else {}


def cache_misses(report: str) -> dict[str, int]:
    """The instructions and first-level data-cache misses (reads + writes) of cachegrind's summary."""
    out = {}
    for key, label in (("total", "I   refs"), ("d1", "D1  misses")):
        m = re.search(rf"{label}:\s+([\d,]+)", report)
        out[key] = int(m.group(1).replace(",", ""))
    return out


def instructions(prof: Path) -> dict[str, int]:
    text = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no", str(prof)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(.*?\)\s+(.*)$", line)
        if not m:
            continue
        n, what = int(m.group(1).replace(",", "")), m.group(2)
        if what.startswith("PROGRAM TOTALS"):
            out["total"] = n
        for part, fn in PARTS.items():
            # callgrind_annotate can list a function under two spellings of its source file
            # (relative to the working directory and absolute; the binary's name after only
            # one), with its callees counted under either: the largest count is the function's.
            if re.search(f":{re.escape(fn)}( \\[.*\\])?$", what):
                out[part] = max(out.get(part, 0), n)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=CASES)
    ap.add_argument("--qdisc", default="fq_codel")
    tools = ap.add_mutually_exclusive_group()
    tools.add_argument("--callgrind", action="store_const", const="callgrind", dest="tool")
    tools.add_argument("--cachegrind", action="store_const", const="cachegrind", dest="tool")
    a = ap.parse_args()
    binary = core_binary()
    if binary is None:
        sys.exit("run_json is not built: cargo build --release -p aqmlab-core --example run_json")
    print(f"# events  {stamp()}  {machine()}  qdisc={a.qdisc}")
    rows = []
    for case in a.cases.split(","):
        shape, secs = case.split(":")
        n, rate = shape.split("x")
        r, ir = run(binary, dumbbell(int(n), rate, a.qdisc, float(secs), "summary"), a.tool)
        rows.append((f"{n} x {rate}, {secs} s", r, ir))
    kinds = [k for k in rows[0][1]["event_kinds"] if any(r["event_kinds"][k] for _, r, _ in rows)]
    head = ["case", "data pkts", "events/data pkt", *kinds]
    if a.tool == "callgrind":
        head += ["Ir total", "Ir loop", "Ir build", "Ir loop/event", "Ir loop/data pkt"]
    if a.tool == "cachegrind":
        head += ["Ir total", "D1 misses", "D1 misses/data pkt"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for name, r, ir in rows:
        pkts = r["down_tx_packets"]
        cells = [name, f"{pkts:,}", f"{r['events'] / pkts:.3f}"]
        cells += [f"{r['event_kinds'][k] / pkts:.3f}" for k in kinds]
        if a.tool == "callgrind":
            cells += [f"{ir[p] / 1e6:.1f} M" for p in ("total", "loop", "build")]
            cells += [f"{ir['loop'] / r['events']:.0f}", f"{ir['loop'] / pkts:.0f}"]
        if a.tool == "cachegrind":
            cells += [f"{ir['total'] / 1e6:.1f} M", f"{ir['d1'] / 1e6:.3f} M", f"{ir['d1'] / pkts:.1f}"]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
