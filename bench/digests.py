"""Digests of everything a set of runs records: the check that a refactoring or an optimisation
changed no result.

Runs every built-in scenario file (the study directories included, sweep files excluded) under
its own discipline and under each of ``--qdisc`` in turn, shortened to ``--duration``, and prints
one line per run with two SHA-256 digests: of every recorded table (Arrow IPC bytes), and of the
run's metadata less its wall-clock fields (the resolved scenario among it). Run it before and
after a change and diff the two outputs:

    python bench/digests.py > before.txt   # on the old code
    python bench/digests.py > after.txt    # on the new code
    diff before.txt after.txt              # empty: bit-identical results

``--summaries 0,2`` adds, per run, the SHA-256 of its summary.json text (``summarize`` at each
warm-up given, in seconds, written as the store writes it, less ``wall_s``): the check that a change to the
metrics left every summary as it was. ``--level`` records at another level than ``packets``
(``series`` and ``summary`` summarise from the histograms and the whole-run totals).

A change that adds a key with a default that keeps the old behaviour changes the second digest
of every run that resolves the key, and only it: the tables' digest says the results are the
same. A change that adds columns to a table changes the first digest; ``--without
packets.seq,flows.dscp`` digests the tables without the named columns (a name absent from a table
is ignored, so the old code's output is comparable), which checks that every other column is
unchanged.

``--cc cubic,reno,...`` (or ``--cc all``, every controller the core registers) adds, for each
file with a TCP flow, one run per controller with every TCP flow of the file running it (its
``cc_params`` left out, as they belong to the file's own controller), under the file's own
disciplines: the check for a change to the controllers. ``--only rtt_fair,l4s`` keeps the
named scenario files.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from pathlib import Path

import pyarrow as pa

from aqmlab import api, metrics, scenario

SCENARIOS = Path(scenario.__file__).resolve().parent / "scenarios"
QDISCS = "pfifo,red,codel,pie,fq_codel,sfq"
# Metadata that differs between two identical runs.
VOLATILE = ("wall_s",)


def scenario_files() -> list[Path]:
    """Every built-in scenario file but the sweep definitions."""
    return sorted(p for p in SCENARIOS.rglob("*.toml") if p.name != "sweep.toml")


def digest(tables: dict[str, pa.Table], meta: dict, without: tuple[str, ...] = ()) -> str:
    """The tables' digest and the metadata's, separated by a space; ``without``: TABLE.COLUMN
    names left out of the tables."""
    h = hashlib.sha256()
    for name in sorted(tables):
        gone = [c.split(".", 1)[1] for c in without if c.split(".", 1)[0] == name]
        table = tables[name].drop_columns([c for c in gone if c in tables[name].column_names])
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        h.update(name.encode())
        h.update(sink.getvalue().to_pybytes())
    stable = {k: v for k, v in meta.items() if k not in VOLATILE}
    m = hashlib.sha256(json.dumps(stable, sort_keys=True, default=str).encode())
    return f"{h.hexdigest()} {m.hexdigest()}"


def summary_digests(tables: dict[str, pa.Table], meta: dict, warmups: list[float]) -> str:
    """The digest of each warm-up's summary.json text (less its wall-clock fields), separated by
    spaces."""
    docs = (
        {k: v for k, v in metrics.summarize(tables, meta, w).items() if k not in VOLATILE} for w in warmups
    )
    texts = (json.dumps(d, indent=2, sort_keys=True) for d in docs)
    return " ".join(hashlib.sha256(t.encode()).hexdigest() for t in texts)


def variants(sc: dict, qdiscs: list[str], ccs: list[str] = ()):
    """(label, scenario) for the file's own disciplines, each of ``qdiscs`` on every hop, and
    each of ``ccs`` on every TCP flow (files with one)."""
    yield "own", sc
    for q in qdiscs:
        v = copy.deepcopy(sc)
        topo = v["topology"]
        hops = topo.get("hops") or [topo[d] for d in ("down", "up") if d in topo]
        for hop in hops:
            hop["qdisc"] = q
        yield q, v
    if not any(f.get("kind") == "tcp" for f in sc.get("flows", [])):
        return
    for cc in ccs:
        v = copy.deepcopy(sc)
        for f in v["flows"]:
            if f.get("kind") == "tcp":
                f["cc"] = cc
                f.pop("cc_params", None)
        yield f"cc={cc}", v


def all_ccs() -> list[str]:
    """Every controller the core registers (the schema's `cc` values)."""
    from aqmlab import _core

    return json.loads(_core.schema())["$defs"]["FlowSpec"]["properties"]["cc"]["enum"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", default="8s", help="each run's length (default 8s)")
    ap.add_argument("--qdisc", default=QDISCS, help=f"disciplines put on every hop (default {QDISCS})")
    ap.add_argument("--cc", default="", help="controllers put on every TCP flow (or `all`; default none)")
    ap.add_argument("--only", default="", help="scenario names to run (default every file)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--without", default="", help="TABLE.COLUMN,... left out of the digest (added columns)")
    ap.add_argument(
        "--summaries", default="", help="warm-ups (s), e.g. 0,2: digest each run's summary at each"
    )
    ap.add_argument("--level", default="packets", help="the recording level of every run (default packets)")
    args = ap.parse_args()
    warmups = [float(w) for w in args.summaries.split(",") if w]
    qdiscs = [q for q in args.qdisc.split(",") if q]
    ccs = all_ccs() if args.cc == "all" else [c for c in args.cc.split(",") if c]
    only = {n for n in args.only.split(",") if n}
    without = tuple(c for c in args.without.split(",") if c)
    bad = [c for c in without if "." not in c]
    if bad:
        ap.error(f"--without: {bad[0]!r} is not TABLE.COLUMN")
    for path in scenario_files():
        name = path.relative_to(SCENARIOS).with_suffix("").as_posix()
        if only and name not in only:
            continue
        base = scenario.load(path)
        base["duration"] = args.duration
        base.setdefault("record", {})["level"] = args.level
        for label, sc in variants(base, qdiscs, ccs):
            try:
                tables, meta = api.simulate(sc, args.seed)
            except scenario.ScenarioError as e:
                # a controller the file's flows cannot run (Prague under classic ECN): the
                # message is compared instead
                print(f"{name} {label} rejected: {e}")
                continue
            sums = f" {summary_digests(tables, meta, warmups)}" if warmups else ""
            print(f"{name} {label} {digest(tables, meta, without)}{sums}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
