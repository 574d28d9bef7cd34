"""PackMime-HTTP's offered load in ns-2.35 and in aqmlab, where nothing queues: codel2012's
web-only case (the script with no FTP and no CBR) on a bottleneck fast enough that every byte
offered is carried, many seeds, both simulators; and the expectation ns-2's source implies.

    python validation/ns2/packmime_load.py --rate 2 5 --seeds 400
    python validation/ns2/packmime_load.py --rate 5 --seeds 200 --sizes   # also per-exchange sizes

Per run and side: connections opened, request/response exchanges and their bytes (ns-2: PackMime's
samples log, PACKMIME_SAMPLES in tcl/codel2012.tcl; aqmlab: its ``web`` table) and the bytes the
downstream bottleneck sent (ns-2: its queue trace; aqmlab: ``tx_bytes``). The expectation:
E[response and request bytes per connection] from the fitted tables and constants of
packmime/packmime_ranvar.cc (the download table integrated over u = -log2(1 - p) up to 32, the
resolution of ns-2's uniform), times the connection rate.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import codel2012 as N
import numpy as np
import pandas as pd

import aqmlab.metrics as M
import aqmlab.reproduce.codel2012 as C
from aqmlab.api import simulate
from aqmlab.scenario import load

QUANTILES = [10, 25, 50, 75, 90, 99]
CACHE_CUTOFF = 275  # FSIZE_CACHE_CUTOFF: responses up to it are cache validations


def case(rate: float, bw: float, duration: int) -> dict:
    return {"bw": bw, "size": 1500, "ftps": 0, "web": rate, "cbrs": 0, "duration": duration}


def ns2_run(ns: str, run: dict, seed: int) -> tuple[dict, pd.DataFrame]:
    with tempfile.TemporaryDirectory() as tmp:
        trace, log = Path(tmp) / "queue.tr", Path(tmp) / "samples.txt"
        cmd = N.command(ns, "taildrop", run, seed, trace, [])
        subprocess.run(
            cmd, cwd=tmp, check=True, capture_output=True, env={**os.environ, "PACKMIME_SAMPLES": str(log)}
        )
        ex = pd.read_csv(
            log, sep=r"\s+", header=None, names=["t", "req", "rsp", "server"], dtype={"server": str}
        )
        pk = N.read_trace(trace)
        wire = pk.loc[pk["t_out"].notna(), "size"].sum()
    # Each connection has its own server agent, hence its own address.port.
    return {"conns": ex["server"].nunique(), "wire": wire}, ex[["req", "rsp"]]


def aqmlab_run(run: dict, seed: int) -> tuple[dict, pd.DataFrame]:
    sc = C.case_scenario(load(str(C.base_file())), qdisc="taildrop", **run)
    tables, meta = simulate(sc, seed)
    ex = tables["web"].to_pandas()
    ex = ex[ex["t_request_ns"].notna()].rename(columns={"req_bytes": "req", "rsp_bytes": "rsp"})
    return {"conns": ex["connection"].nunique(), "wire": M.tx_bytes(tables, meta, "down")}, ex[["req", "rsp"]]


def measure(side: str, ns: str, run: dict, seeds: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, exs = [], []
    for s in range(1, seeds + 1):
        r, ex = ns2_run(ns, run, s) if side == "ns-2" else aqmlab_run(run, s)
        rows.append({"seed": s, **r, "exchanges": len(ex), "req": ex["req"].sum(), "rsp": ex["rsp"].sum()})
        exs.append(ex)
    return pd.DataFrame(rows), pd.concat(exs, ignore_index=True)


def median_band(x: np.ndarray, k: int, draws: int = 20000) -> list[float]:
    """5th, 50th and 95th percentile of the median of k runs drawn without replacement."""
    rng = np.random.default_rng(0)
    meds = [np.median(rng.choice(x, k, replace=False)) for _ in range(draws)]
    return np.percentile(meds, [5, 50, 95]).round(0).tolist()


def report(side: str, runs: pd.DataFrame, ex: pd.DataFrame, duration: int, sizes: bool) -> None:
    kbps = runs["wire"].to_numpy() * 8 / duration / 1e3
    conns = runs["conns"] / duration
    print(f"  {side}: connections/s {conns.mean():.3f} +- {conns.std() / math.sqrt(len(runs)):.3f}, "
          f"exchanges/connection {runs['exchanges'].sum() / runs['conns'].sum():.3f}, "
          f"responses {runs['rsp'].median() * 8 / duration / 1e3:.1f} kb/s (median over runs)")  # fmt: skip
    print(f"    sent downstream, kb/s: percentiles {QUANTILES} {np.percentile(kbps, QUANTILES).round(0).tolist()}; "
          f"seeds 1-3 {kbps[:3].round(0).tolist()}; median of 3 runs (5/50/95 %) {median_band(kbps, 3)}, "
          f"of 10 runs {median_band(kbps, 10)}")  # fmt: skip
    if sizes:
        for col in ("req", "rsp"):
            print(
                f"    {col} bytes per exchange: percentiles {np.percentile(ex[col], QUANTILES).round(0).tolist()}"
            )
        print(f"    responses <= {CACHE_CUTOFF} B: {(ex['rsp'] <= CACHE_CUTOFF).mean():.4f}")


def ns2_tables(src: Path) -> dict[str, np.ndarray]:
    text = (src / "packmime" / "packmime_ranvar.cc").read_text()
    out = {}
    for m in re.finditer(
        r"PackMimeHTTPFileSizeRandomVariable::(FSIZE[01]_INVCDF_[AB]_[XY])\[\]\s*=\s*\{(.*?)\}",
        text,
        re.DOTALL,
    ):
        out[m.group(1)] = np.array([float(v) for v in m.group(2).split(",") if v.strip()])
    return out


def interpolate(x: np.ndarray, y: np.ndarray, at: np.ndarray) -> np.ndarray:
    """FX::LinearInterpolate: piecewise linear, the end segments extended."""
    i = np.clip(np.searchsorted(x[1:-1], at, side="right"), 0, len(x) - 2)
    return y[i] + (y[i + 1] - y[i]) / (x[i + 1] - x[i]) * (at - x[i])


def table_mean(t: dict, name: str, log_scale: bool) -> float:
    """E[(int) quantile(U)] of one fitted table: linear in p, or log2 bytes at log2(1 - p)."""
    x, y = t[f"{name}_X"], t[f"{name}_Y"]
    if log_scale:
        u = np.linspace(0, 32, 2_000_001)  # p = 1 - 2^-u, dp = ln 2 2^-u du
        return float(np.trapezoid(np.floor(2 ** interpolate(x, y, -u)) * math.log(2) * 2**-u, u))
    p = np.linspace(0, 1, 1_000_001)
    return float(np.trapezoid(np.floor(np.maximum(interpolate(x, y, p), 0)), p))


def expected(src: Path, rate: float) -> tuple[float, float, float]:
    """(exchanges, response bytes, request bytes) per connection, HTTP/1.1, from the source."""
    t = ns2_tables(src)
    log2r = math.log(rate) / math.log(2)
    logitinv = lambda x: 2**x / (1 + 2**x)
    run = lambda shape, scale: sum(math.exp(-((k / scale) ** shape)) for k in range(10000))
    # rfsize0: alternating runs of validations and downloads, lengths ceil(Weibull).
    ev, ed = run(logitinv(0.718 + 0.357 * log2r), 0.775), run(logitinv(1.293 + 0.316 * log2r), 3.11)
    share = ed / (ev + ed)
    cache, dl = table_mean(t, "FSIZE0_INVCDF_A", False), table_mean(t, "FSIZE0_INVCDF_B", True)
    req = (table_mean(t, "FSIZE1_INVCDF_A", False) + table_mean(t, "FSIZE1_INVCDF_B", True)) / 2
    # A persistent connection (0.09): pages 1 (0.82) or ceil(1 + Exp(0.417)); objects ceil(1 +
    # Exp(1.578)), or 1 with 0.69 on a page of several; E ceil(W) = 1 / (1 - e^(-1 / scale)).
    ceil_exp = lambda scale: 1 / (1 - math.exp(-1 / scale))
    objs = 1 + ceil_exp(1.578)
    n = 0.82 * objs + 0.18 * (1 + ceil_exp(0.417)) * (0.69 + 0.31 * objs)
    # Later responses after a download: 2^(L + sqrt(S) Z sqrt(2.43)), L ~ N(10.62, 0.94),
    # S ~ Gamma(3.22, rate 3.22); after a validation: the first response again.
    a = 2.43 * math.log(2) ** 2 / 2
    later = 2**10.62 * math.exp(0.94 * math.log(2) ** 2 / 2) * (1 - a / 3.22) ** -3.22
    extra = 0.09 * (n - 1)
    rsp = share * dl + (1 - share) * cache + extra * (share * later + (1 - share) * cache)
    return 1 + extra, rsp, req * (1 + extra)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns", default="/work/ns2-build/bin/ns", help="the ns binary of build.sh")
    ap.add_argument("--src", type=Path, default=Path("/work/ns2-build/src/ns-2.35"), help="its source tree")
    ap.add_argument("--rate", nargs="+", type=float, default=[2.0, 5.0], help="PackMime connections/s")
    ap.add_argument("--seeds", type=int, default=400)
    ap.add_argument("--duration", type=int, default=C.STATIC_S, help="s (the reproduction's static runs)")
    ap.add_argument("--bw", type=float, default=100.0, help="Mb/s: uncongested")
    ap.add_argument("--sizes", action="store_true", help="also the per-exchange size percentiles")
    a = ap.parse_args()
    for rate in a.rate:
        n, rsp, req = expected(a.src, rate)
        print(f"{rate:g}/s for {a.duration} s at {a.bw:g} Mb/s, seeds 1-{a.seeds}; ns-2's source implies "
              f"{n:.3f} exchanges, {rsp:.0f} response and {req:.0f} request bytes per connection: "
              f"{rate * rsp * 8 / 1e3:.1f} kb/s of responses")  # fmt: skip
        run = case(rate, a.bw, a.duration)
        for side in ("ns-2", "aqmlab"):
            report(side, *measure(side, a.ns, run, a.seeds), a.duration, a.sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
