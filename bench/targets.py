"""The speed targets of "speed at scale", measured in one sitting and printed beside their bounds.

    python bench/targets.py [--reps 3] [--duration 10] [--studies] [--ns3-dir bench/ns3]

Every figure comes from one run of this script, the cases alternated within each repetition so
that they share the machine's state (wall times on a shared VM move by 10 % between sittings,
and by up to 50 % at 10,000 flows):

* **ns-3 ratio**: the ns-3 anchor dumbbell of ``compare.py`` (8 CUBIC flows, fq_codel, 100 Mb/s,
  50 ms), aqmlab recording ``packets`` (as ``compare.py``) against ns-3 3.44 (bench/ns3, built by
  bench/ns3/build.sh): the median of aqmlab's data packets per wall-second over the median of
  ns-3's. Without the ns-3 program the row says so.
* **events per data packet** at 8 flows: the same aqmlab runs' events over the down bottleneck's
  transmissions (exact: the same in every run).
* **per-packet cost against the flows**: the time of the simulation (``meta.wall_s``: building
  the world and running it) per data packet through the extension, recording ``summary``, at 8 and
  256 flows at 100 Mb/s and 10,000 flows at 1 Gb/s; the ratios of the medians.
* **the whole process against its core**: ``whole_run.py``'s 10,000-flow ``aqmlab run`` (one
  entry with ``count`` and spread starts, recording ``packets``, ``--warmup 1``): wall time from
  start to exit over the wall time of ``_core.run``, and peak RSS.
* with ``--studies``, the full ``aqmlab reproduce codel2012 --jobs 2`` and ``goodbadwifi2015
  --jobs 2``, against half of the wall times the issue measured (233 s and 18.5 min); about
  20 minutes more.

Results being bit-identical is checked by ``digests.py`` against a reference output, not here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import dumbbell, machine, run_child, stamp
from whole_run import measure

SMALL, MIDDLE, LARGE = (8, "100Mbps"), (256, "100Mbps"), (10000, "1Gbps")
CONSOLE = "import sys; from aqmlab.cli import entry; sys.argv[0] = 'aqmlab'; entry()"


@dataclass(frozen=True)
class Target:
    """One bound: what is measured, the bound as written, and the test of a measured value."""

    what: str
    bound: str
    met: Callable[[float], bool]
    unit: str


TARGETS = {
    "ns3": Target("8 flows, fq_codel, 100 Mb/s: data packets per wall-second, aqmlab / ns-3", ">= 250", lambda v: v >= 250, "x"),
    "events": Target("events per data packet at 8 flows", "<= 3.5", lambda v: v <= 3.5, ""),
    "middle": Target("per-packet cost, 256 / 8 flows", "<= 1.3", lambda v: v <= 1.3, ""),
    "large": Target("per-packet cost, 10,000 flows at 1 Gb/s / 8 flows", "<= 2.5", lambda v: v <= 2.5, ""),
    "whole": Target("10,000-flow `aqmlab run`: whole process / core, wall", "<= 2", lambda v: v <= 2, ""),
    "rss": Target("10,000-flow `aqmlab run`: peak RSS", "<= 1024", lambda v: v <= 1024, " MB"),
    "codel2012": Target("full `reproduce codel2012 --jobs 2`, wall", "<= 116.5 (half of 233)", lambda v: v <= 116.5, " s"),
    "goodbadwifi2015": Target(
        "full `reproduce goodbadwifi2015 --jobs 2`, wall", "<= 555 (half of 18.5 min)", lambda v: v <= 555, " s"
    ),
}  # fmt: skip


def per_packet_ns(flows: int, rate: str, duration: float) -> float:
    """The simulation's wall time per down-bottleneck data packet, in ns (recording ``summary``)."""
    r = run_child(dumbbell(flows, rate, "fq_codel", duration, "summary"))
    return r["wall_s"] / r["down_tx_packets"] * 1e9


def study_wall_s(name: str) -> float:
    """Wall seconds of the full ``aqmlab reproduce NAME --jobs 2``, in a fresh process."""
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", CONSOLE, "reproduce", name, "--jobs", "2", "--out", d, "--json"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=float, default=10.0, help="simulated seconds of every run")
    ap.add_argument("--studies", action="store_true", help="also the two full studies (about 20 min)")
    ap.add_argument("--ns3-dir", default=os.environ.get("AQMLAB_NS3_DIR", str(HERE / "ns3")))
    a = ap.parse_args()
    sys.path.insert(0, a.ns3_dir)
    try:
        from run import BINARY, run_ns3  # bench/ns3/run.py
    except ImportError:
        BINARY, run_ns3 = None, None
    with_ns3 = BINARY is not None and BINARY.exists()

    warmup = min(5.0, a.duration / 2)  # what the goodput and delays skip; no bearing on speed
    ours, theirs, events, cost, whole, rss = [], [], [], {SMALL: [], MIDDLE: [], LARGE: []}, [], []
    for _ in range(a.reps):
        r = run_child(dumbbell(*SMALL, "fq_codel", a.duration, "packets"), warmup_s=warmup)
        ours.append(r["down_tx_packets"] / r["wall_s"])
        events.append(r["events"] / r["down_tx_packets"])
        if with_ns3:
            theirs.append(run_ns3(*SMALL, "fq_codel", a.duration, warmup=warmup)["pkts_per_wall_s"])
        for case, runs in cost.items():
            runs.append(per_packet_ns(*case, a.duration))
        m = measure(*LARGE, a.duration, "packets", 1.0, count=True)
        whole.append(m["wall_s"] / m["core"][1])
        rss.append(m["rss_mb"])

    med = statistics.median
    measured = {
        "events": (med(events), f"{min(events):.3f}-{max(events):.3f}"),
        "middle": (med(cost[MIDDLE]) / med(cost[SMALL]), _ns(cost, MIDDLE)),
        "large": (med(cost[LARGE]) / med(cost[SMALL]), _ns(cost, LARGE)),
        "whole": (med(whole), _spread(whole)),
        "rss": (med(rss), _spread(rss, 0)),
    }
    if with_ns3:
        ratios = [o / t for o, t in zip(ours, theirs, strict=True)]
        measured["ns3"] = (
            med(ours) / med(theirs),
            f"runs {_spread(ratios, 0)}; {med(ours):,.0f} / {med(theirs):,.0f} pkts/s",
        )
    if a.studies:
        for name in ("codel2012", "goodbadwifi2015"):
            measured[name] = (study_wall_s(name), "one run")

    print(f"# targets  {stamp()}  {machine()}  reps={a.reps}  {a.duration:g} s")
    print("| target | bound | measured (median) | spread, detail | met |\n|---|---|---:|---|---|")
    for key, t in TARGETS.items():
        if key not in measured:
            why = "without bench/ns3's program (bench/ns3/build.sh)" if key == "ns3" else "with --studies"
            print(f"| {t.what} | {t.bound}{t.unit} | - | measured {why} | - |")
            continue
        v, detail = measured[key]
        shown = f"{v:.0f}" if v >= 100 else f"{v:.3g}"
        print(
            f"| {t.what} | {t.bound}{t.unit} | {shown}{t.unit} | {detail} | {'yes' if t.met(v) else 'no'} |"
        )
    print(
        f"\nns per data packet (median): {', '.join(f'{n} x {r} {med(c):.0f}' for (n, r), c in cost.items())}"
    )


def _spread(xs: list[float], digits: int = 2) -> str:
    return f"{min(xs):.{digits}f}-{max(xs):.{digits}f}"


def _ns(cost: dict, case: tuple[int, str]) -> str:
    return f"{statistics.median(cost[case]):.0f} / {statistics.median(cost[SMALL]):.0f} ns"


if __name__ == "__main__":
    main()
