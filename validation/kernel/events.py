"""Each data sender's congestion states and windows, read from the kernel's own events.

    sudo .venv/bin/python validation/kernel/events.py cc_pair-pfifo-10m-50ms-42p-cubic+bbr --duration 60 --warmup 20

Runs `trace.py CASE` (both sides) with two of the kernel's tracepoints recording:
`tcp:tcp_probe` (each segment a socket receives, with its window, slow start threshold and SRTT
before it acts) and `tcp:tcp_cong_state_set` (each change of the congestion state: 0 Open, 1
Disorder, 2 CWR, 3 Recovery, 4 Loss). Per data sender after `--warmup` seconds (from the run's
first segment, iperf3's control connection's, within a few ms of the emulated run's start): the recoveries
it entered, how many of them in the same call that ended the one before (Recovery, Open,
Recovery at one timestamp: tcp_input.c `tcp_fastretrans_alert` steps D and E, the model's
`recovery_reentry`), its timeouts (Loss), the time its window spent at each size (by ACK), the
mean window, the ACKs by the segments they newly cover and the mean SRTT. Beside it the model's
window and SRTT from its `flow_series` (sampled every `record.interval`, which estimates the time
shares without bias; trace.py keeps it in out/trace/CASE/sim.flow_series.parquet).
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import deferral

from aqmlab.emulate.plans import CLIENT_PORT

PROBE = re.compile(
    r"\s([\d.]+): tcp_probe: .*?src=\S+:(\d+) dest=\S+:(\d+) .*?data_len=(\d+) snd_nxt=\S+ "
    r"snd_una=(\S+) snd_cwnd=(\d+) ssthresh=(\d+) snd_wnd=\d+ srtt=(\d+)"
)
STATE = re.compile(r"\s([\d.]+): tcp_cong_state_set: .*?sport=(\d+) dport=(\d+) .*?cong_state=(\d)")
RECOVERY, LOSS = 3, 4
SAME_CALL_S = 1e-5
"""Two state changes this close belong to one ACK's processing."""
BINS = (2, 3, 4, 5, 6, 8, 12)
"""Window sizes (segments) the time shares are reported by: each bin up to the next."""


def _flow(a: int, b: int) -> int | None:
    """The matrix flow a connection carries: its client end's port less CLIENT_PORT."""
    return next((p - CLIENT_PORT for p in (a, b) if CLIENT_PORT <= p < CLIENT_PORT + 1000), None)


def kernel_senders(text: str, min_acks: int = 500) -> tuple[float, dict[int, dict]]:
    """The time of the run's first received segment (iperf3's control connection opens it), and
    per flow with at least `min_acks` pure ACKs received (its data sender): the ACKs' times,
    snd_una, window (segments), SRTT (ms) and slow start threshold (segments), and its
    congestion state changes."""
    acks: dict[int, list] = defaultdict(list)
    t0 = None
    for m in PROBE.finditer(text):
        t0 = float(m[1]) if t0 is None else t0
        f = _flow(int(m[2]), int(m[3]))
        if f is not None and int(m[4]) == 0:
            acks[f].append((float(m[1]), int(m[5], 16), int(m[6]), int(m[8]) / 1e3, int(m[7])))
    states: dict[int, list] = defaultdict(list)
    for m in STATE.finditer(text):
        f = _flow(int(m[2]), int(m[3]))
        if f is not None:
            states[f].append((float(m[1]), int(m[4])))
    return t0 or 0.0, {f: {"acks": a, "states": states[f]} for f, a in acks.items() if len(a) >= min_acks}


def _shares(windows: np.ndarray, weights: np.ndarray) -> str:
    idx = np.digitize(windows, BINS)
    tot = weights.sum()
    parts = []
    for k in range(1, len(BINS) + 1):
        lo = BINS[k - 1]
        label = f"{lo}+" if k == len(BINS) else (f"{lo}" if BINS[k] == lo + 1 else f"{lo}-{BINS[k] - 1}")
        parts.append(f"{label}:{weights[idx == k].sum() / tot:.3f}")
    below = weights[idx == 0].sum() / tot
    return (f"<2:{below:.3f} " if below else "") + " ".join(parts)


def kernel_report(f: int, s: dict, t0: float, warmup: float, mss: int) -> list[str]:
    a = np.array(s["acks"])
    t = a[:, 0] - t0
    keep = t >= warmup
    t, una, cwnd, srtt = t[keep], a[keep, 1], a[keep, 2], a[keep, 3]
    dt = np.diff(t)
    st = [(ts - t0, c) for ts, c in s["states"]]
    after = [k for k, (ts, _) in enumerate(st) if ts >= warmup]
    entries = [k for k in after if st[k][1] == RECOVERY and k and st[k - 1][1] != RECOVERY]
    reentries = [
        k for k in entries if k > 1 and st[k - 1][1] == 0 and st[k - 2][1] == RECOVERY
        and st[k][0] - st[k - 1][0] < SAME_CALL_S
    ]  # fmt: skip
    losses = sum(st[k][1] == LOSS and (not k or st[k - 1][1] != LOSS) for k in after)
    cover = Counter(min(round(d / mss), 3) for d in np.diff(una) if d > 0)
    n = sum(cover.values()) or 1
    return [
        (
            f"flow {f} kernel: {len(entries)} recoveries, {len(reentries)} of them re-entered in one call, "
            f"{losses} timeouts; ACKs covering 1 / 2 / 3+ segments {cover[1] / n:.2f} / {cover[2] / n:.2f} / "
            f"{cover[3] / n:.2f}; mean SRTT {srtt.mean():.1f} ms"
        ),
        f"        window (by ACK) mean {np.average(cwnd[:-1], weights=dt):.2f}: {_shares(cwnd[:-1], dt)}",
    ]


# The kernel's slow start threshold until something sets it (TCP_INFINITE_SSTHRESH).
INFINITE_SSTHRESH = 0x7FFFFFFF


def kernel_slow_start_end(s: dict, t0: float) -> str:
    """When a sender's slow start threshold was first set (s from `t0`), the window then and the
    threshold (segments), and what set it: a congestion state other than Open entered by then
    (a recovery, a timeout, an ECN reduction), else HyStart."""
    a = np.array(s["acks"])
    set_ = np.flatnonzero(a[:, 4] < INFINITE_SSTHRESH)
    if not len(set_):
        return "still in slow start"
    k = set_[0]
    t = a[k, 0]
    cause = "a state change" if any(0 < c and ts <= t for ts, c in s["states"]) else "HyStart"
    return f"{t - t0:.3f} s at window {int(a[k, 2])}, ssthresh {int(a[k, 4])} ({cause})"


def model_slow_start_end(f: int, fs: pd.DataFrame, mss: int) -> str:
    """The model's: the first `flow_series` sample with a slow start threshold (s), the window
    and the threshold then (segments)."""
    x = fs[(fs.flow == f) & fs.ssthresh_bytes.notna()].sort_values("t_ns")
    if x.empty:
        return "still in slow start"
    r = x.iloc[0]
    return (
        f"by {r.t_ns / 1e9:.3f} s at window {int(r.cwnd_bytes / mss)}, ssthresh {int(r.ssthresh_bytes / mss)}"
    )


def model_report(f: int, fs: pd.DataFrame, warmup: float, mss: int) -> list[str]:
    x = fs[(fs.flow == f) & (fs.t_ns >= warmup * 1e9) & (fs.cwnd_bytes > 0)].sort_values("t_ns")
    if x.empty:
        return [f"flow {f} model: no samples"]
    w = x.cwnd_bytes.to_numpy() / mss
    return [
        f"flow {f}  model: mean SRTT {x.srtt_ns.mean() / 1e6:.1f} ms; window (every sample) mean {w.mean():.2f}: "
        + _shares(w, np.ones_like(w))
    ]


def main() -> None:
    a = deferral.case_args(__doc__.splitlines()[0], slow_start=True)
    events = {"tcp/tcp_probe": "", "tcp/tcp_cong_state_set": ""}
    t0, senders = kernel_senders(
        deferral.record(a.case, a.duration, events, a.seed), 50 if a.slow_start else 500
    )
    if not senders:
        raise SystemExit("no data sender with enough ACKs in the kernel's events")
    fs = pd.read_parquet(HERE / "out" / "trace" / a.case / "sim.flow_series.parquet")
    if a.slow_start:
        for f in sorted(senders):
            print(f"flow {f} slow start ended: kernel {kernel_slow_start_end(senders[f], t0)}; "
                  f"model {model_slow_start_end(f, fs, a.mss)}")  # fmt: skip
        return
    for f in sorted(senders):
        print(
            "\n".join(
                kernel_report(f, senders[f], t0, a.warmup, a.mss) + model_report(f, fs, a.warmup, a.mss)
            )
        )


if __name__ == "__main__":
    main()
