#!/usr/bin/env python3
"""Judges and prints the simulation-vs-kernel matrix (run.py's results file).

A cell is one case and one loaded direction (one that carries TCP data). It is within bounds
when the simulated sojourn p50 and p95 are within 15 % of the kernel's or within one packet time
at the case's rate, and every TCP flow class's goodput within 5 % (validation/kernel/README.md).
Simulated figures are the mean over seeds (each with its own flow starts), the kernel's the mean
over repeats; the p50 range column gives the lowest and highest single run of each side, the
spread a mean is drawn from. A cell outside the bounds is marked "within noise" when each
measure that is out (the sojourn p50 and p95, a flow class's goodput; not the short transfers'
times) has means that differ by less than twice the standard error of their difference (each
side's run-to-run standard deviation over the square root of its runs, at least two runs a
side): at those run counts the two cannot be told apart, and more runs are needed to judge it
(run.py --more).

    .venv/bin/python validation/kernel/compare.py out/core.json [--markdown]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import matrix

DELAY_TOL = 0.15
GOODPUT_TOL = 0.05


def _mean(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def _dir(runs: list[dict], d: str, key: str) -> float | None:
    return _mean([r["dirs"][d][key] for r in runs])


def _label(runs: list[dict], lab: str, key: str) -> float | None:
    return _mean([r["labels"].get(lab, {}).get(key) for r in runs])


def _transfers(sim: list[dict], emu: list[dict], lab: str) -> tuple[float | None, float | None]:
    """The mean time on the path of `lab`'s short transfers on each side, over the transfers
    complete on both (by flow id, each its mean over the runs where it completed): the kernel's
    later transfers can start seconds after the model's (iperf3's control exchange crosses the
    same queues first) and miss the run's end, and those left out of one side are left out of
    both. Runs recorded before the per-transfer figures compare the plain means."""
    per = [[r["labels"].get(lab, {}).get("transfers") for r in runs] for runs in (sim, emu)]
    if any(t is None for side in per for t in side):
        return _label(sim, lab, "transfer_s"), _label(emu, lab, "transfer_s")
    means = [{f: float(np.mean([t[f] for t in side if f in t])) for f in set().union(*side)} for side in per]
    both = sorted(means[0].keys() & means[1].keys())
    if not both:
        return None, None
    return tuple(float(np.mean([m[f] for f in both])) for m in means)


def _range(runs: list[dict], d: str, key: str) -> str:
    vals = [r["dirs"][d][key] for r in runs if r["dirs"][d][key] is not None]
    return f"{min(vals):.1f}-{max(vals):.1f} ({len(vals)})" if vals else "-"


def _sd_err(vals: list) -> float | None:
    """The standard error of one side's mean (None below two runs)."""
    vals = [v for v in vals if v is not None]
    return float(np.std(vals, ddof=1) / np.sqrt(len(vals))) if len(vals) >= 2 else None


def within_noise(sim: list, emu: list) -> bool:
    """Per-run values of one measure on each side: the two means differ by less than twice the
    standard error of their difference."""
    se = (_sd_err(sim), _sd_err(emu))
    a, b = _mean(sim), _mean(emu)
    if None in se or a is None or b is None:
        return False
    return abs(a - b) < 2 * float(np.hypot(*se))


def _noisy(sim: list[dict], emu: list[dict], value) -> bool:
    """`within_noise` of one measure, `value(run)`, over each side's runs."""
    return within_noise([value(r) for r in sim], [value(r) for r in emu])


def delay_ok(sim: float | None, kern: float | None, pkt_ms: float) -> bool:
    if sim is None or kern is None:
        return sim is None and kern is None
    return abs(sim - kern) <= max(DELAY_TOL * kern, pkt_ms)


def goodput_ok(sim: float | None, kern: float | None) -> bool:
    if sim is None or kern is None:
        return False
    return abs(sim - kern) <= GOODPUT_TOL * kern


def cells(row: dict) -> list[dict]:
    """The judged cells of one case: one per loaded direction."""
    case = matrix.Case(**row["case"])
    pkt = matrix.packet_time_ms(case)
    sim, emu = row["sim"], row["emu"]
    labels = {lab for r in sim for lab in r["labels"]}
    out = []
    for d, classes in matrix.TCP_CLASSES.items():
        labs = [lab for lab in classes if lab in labels]
        if not labs:
            continue
        c = {"id": row["id"], "dir": d, "pkt_ms": pkt}
        for key in ("q50", "q95", "q99", "drops", "marks"):
            c[key] = (_dir(sim, d, key), _dir(emu, d, key))
        c["q50_range"] = (_range(sim, d, "q50"), _range(emu, d, "q50"))
        c["goodput"] = {lab: (_label(sim, lab, "goodput"), _label(emu, lab, "goodput")) for lab in labs}
        # each class's drops, where both sides' runs recorded them (since 2026-11-27)
        c["label_drops"] = {
            lab: v
            for lab in labs
            if None not in (v := (_label(sim, lab, "drops"), _label(emu, lab, "drops")))
        }
        c["ok_delay"] = delay_ok(*c["q50"], pkt) and delay_ok(*c["q95"], pkt)
        # the short transfers are judged by their mean time on the path (matrix._transfer_s),
        # within the delay tolerance, shown beside their goodput
        bulk = [lab for lab in c["goodput"] if lab != "web"]
        c["ok_goodput"] = all(goodput_ok(*c["goodput"][lab]) for lab in bulk)
        if "web" in labs:
            c["web_transfer_s"] = _transfers(sim, emu, "web")
            c["ok_goodput"] &= delay_ok(*c["web_transfer_s"], 0.0)
        c["ok"] = c["ok_delay"] and c["ok_goodput"]
        # out of bounds, but each measure that is out within the noise of its runs
        delay_noise = c["ok_delay"] or all(
            _noisy(sim, emu, lambda r, k=k, d=d: r["dirs"][d][k]) for k in ("q50", "q95")
        )
        goodput_noise = c["ok_goodput"] or (
            "web" not in labs
            and all(
                _noisy(sim, emu, lambda r, lab=lab: r["labels"].get(lab, {}).get("goodput")) for lab in bulk
            )
        )
        c["noise"] = not c["ok"] and delay_noise and goodput_noise
        out.append(c)
    return out


def _f(v: float | None, nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def _pair(p: tuple, nd: int = 1) -> str:
    a, b = p
    ratio = f" ({a / b:.2f})" if a is not None and b not in (None, 0) else ""
    return f"{_f(a, nd)} / {_f(b, nd)}{ratio}"


def table(rows: list[dict]) -> str:
    head = (
        "| case | dir | sojourn p50 ms sim / kernel (ratio) | p50 range (runs) sim; kernel | p95 | p99 "
        "| goodput Mb/s per class | drops | ping p50 ms | retx / RTOs / recoveries sim; kernel | within |"
    )
    lines = [head, "|" + "---|" * 11]
    n_ok = n_noise = n = 0
    for row in rows:
        sim, emu = row["sim"], row["emu"]
        kc = [r.get("kernel_counters", {}) for r in emu]
        # the timeouts the data flows' windows show, where the runs recorded them; at 1 Mbit/s
        # (a path of four packets) recoveries leave windows of two segments too, so not there
        win = [_mean([r.get("rto_window") for r in runs]) for runs in (sim, emu)]
        if row["case"]["rate_mbps"] < 10:
            win = [None, None]
        retx = (
            f"{_f(_mean([r['retx'] for r in sim]), 0)} / {_f(_mean([r['rto'] for r in sim]), 1)} / "
            f"{_f(_mean([r.get('recoveries') for r in sim]), 0)}; "
            f"{_f(_mean([k.get('TcpRetransSegs') for k in kc]), 0)} / "
            f"{_f(_mean([k.get('TcpExtTCPTimeouts') for k in kc]), 1)} / "
            f"{_f(_mean([k.get('TcpExtTCPSackRecovery') for k in kc]), 0)}"
            + (f" (windows {_f(win[0], 1)}; {_f(win[1], 1)})" if win[1] is not None else "")
        )
        ping = _pair((_mean([r["rtt50"] for r in sim]), _mean([r["rtt50"] for r in emu])))
        for c in cells(row):
            n += 1
            n_ok += c["ok"]
            n_noise += c["noise"]
            gp = ", ".join(f"{lab} {_pair(v, 2)}" for lab, v in c["goodput"].items())
            if "web_transfer_s" in c:
                gp += f"; web transfer s {_pair(c['web_transfer_s'], 3)}"
            drops = _pair(c["drops"], 0)
            if len(c["label_drops"]) > 1:
                drops += " (" + ", ".join(f"{lab} {_pair(v, 0)}" for lab, v in c["label_drops"].items()) + ")"
            acks = [_mean([r["dirs"][c["dir"]].get("acks_per_seg") for r in runs]) for runs in (sim, emu)]
            if acks[1] is not None:
                drops += f"; ACKs per segment {_pair(tuple(acks), 2)}"
            verdict = "yes" if c["ok"] else ("delay" if not c["ok_delay"] else "goodput") + " off"
            if c["noise"]:
                verdict = "within noise"
            lines.append(
                f"| {c['id']} | {c['dir']} | {_pair(c['q50'])} | {'; '.join(c['q50_range'])} "
                f"| {_pair(c['q95'])} | {_pair(c['q99'])} "
                f"| {gp} | {drops} | {ping} | {retx} | {verdict} |"
            )
    lines.append("")
    lines.append(
        f"{n_ok} of {n} cells within bounds (sojourn p50 and p95 within 15 % or one packet time, goodput within 5 %)"
        + (f"; {n_noise} more within the noise of their runs" if n_noise else "")
    )
    machines = Counter(e.get("machine", "not recorded") for row in rows for e in row["emu"])
    lines += [f"kernel runs on {m}: {k}" for m, k in machines.most_common()]
    changed = Counter(
        (", ".join(row.get("set") or []), ", ".join(f"{k}={v}" for k, v in (row.get("sysctl") or {}).items()))
        for row in rows
    )
    lines += [
        f"changed: model {model or 'nothing'}; kernel {kernel or 'nothing'} ({k} cases)"
        for (model, kernel), k in changed.items()
        if model or kernel
    ]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+")
    a = ap.parse_args()
    rows = [r for p in a.results for r in json.loads(p.read_text())]
    print(table(rows))


if __name__ == "__main__":
    main()
