"""The series of a Flent file: the 0.2 s grid on the synthetic epoch (``_Builder``, which leaves out
what precedes the warm-up) and the builders of the per-flow series: a TCP flow's throughput with
its socket-stats points, a probe stream's pings, a webpage flow's HTTP latency, a voip flow's
VoIP series and its children."""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np

from aqmlab import metrics as M
from aqmlab.flent.match import _entry
from aqmlab.flent.summary import arrival_order, probe_points, step_values

STEP = 0.2
EPOCH = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T0 = EPOCH.timestamp()


class _Builder:
    """The grid and the series; samples before the warm-up ``warmup_s`` are left out (grid
    points become null, raw samples are dropped), so Flent's statistics cover the same window as
    aqmlab's summary."""

    def __init__(self, duration_s: float, warmup_s: float = 0.0):
        n = int(np.floor(duration_s / STEP + 1e-9)) + 1
        self.x = np.round(np.arange(n) * STEP, 6)
        self.warmup_s = warmup_s
        self.results: dict[str, list] = {}
        self.raw: dict[str, list] = {}
        self.series_meta: dict[str, dict] = {}

    def _grid(self, vals: np.ndarray) -> list:
        return [None if not np.isfinite(v) or x < self.warmup_s else float(v) for x, v in zip(self.x, vals)]

    def _raw(self, raw: list[dict]) -> list[dict]:
        return [p for p in raw if p["t"] - T0 >= self.warmup_s]

    def set(self, name: str, raw: list[dict], grid: np.ndarray) -> None:
        self.raw[name] = self._raw(raw)
        self.results[name] = self._grid(grid)

    def add(self, name: str, raw: list[dict], grid: np.ndarray, units: str, **meta: Any) -> None:
        self.set(name, raw, grid)
        raw = self.raw[name]
        vals = [p["val"] for p in raw if "val" in p]
        sm = {"UNITS": units, **meta}
        if vals:
            sm.update(MEAN_VALUE=float(np.mean(vals)), MIN_VALUE=float(min(vals)), MAX_VALUE=float(max(vals)))
        self.series_meta[name] = sm


def _rate_series(run, flow: int, b: _Builder) -> tuple[list[dict], np.ndarray]:
    fs = run.tables.get("flow_series")
    if fs is None:
        raise M.MissingTableError(
            f"run '{run.run_id}' has no 'flow_series' table; Flent throughput series need it"
        )
    f = fs.column("flow").to_numpy().astype(np.int64)
    t = fs.column("t_ns").to_numpy().astype(np.int64)[f == flow]
    d = fs.column("delivered_bytes").to_numpy().astype(np.float64)[f == flow]
    order = np.argsort(t, kind="stable")
    t, d = t[order] / 1e9, d[order]
    raw = []
    for i in range(1, t.size):
        dur = t[i] - t[i - 1]
        if dur > 0:
            raw.append(
                {"t": T0 + float(t[i]), "val": float((d[i] - d[i - 1]) * 8 / dur / 1e6), "dur": float(dur)}
            )
    grid = np.full(b.x.size, np.nan)
    if t.size >= 2:
        cum = np.interp(b.x, t, d, left=np.nan, right=np.nan)
        grid[1:] = (cum[1:] - cum[:-1]) * 8 / STEP / 1e6
    return sorted(raw + _socket_stats(run, flow, fs, f == flow), key=lambda p: p["t"]), grid


def _socket_stats(run, flow: int, fs, rows: np.ndarray) -> list[dict]:
    """What Flent's ``--socket-stats`` mixes into a TCP series (its ss poller, ss_iterate in
    runners.py): ``tcp_cwnd`` in segments (the congestion window over the flow's MSS, as ss
    prints ``cwnd:``) and ``tcp_rtt`` in ms (ss's ``rtt:``, the smoothed RTT), one point per
    ``flow_series`` sample with an RTT measured; Flent's ``tcp_cwnd`` and ``tcp_rtt`` plots draw
    them."""
    mss = _entry(run, flow).get("mss")
    if not mss or "cwnd_bytes" not in fs.column_names:
        return []
    t = fs.column("t_ns").to_numpy()[rows].astype(np.float64) / 1e9
    cwnd = fs.column("cwnd_bytes").to_numpy()[rows].astype(np.float64) / mss
    srtt = fs.column("srtt_ns").to_numpy()[rows].astype(np.float64) / 1e6
    return [
        {"t": T0 + float(a), "tcp_cwnd": round(float(c), 3), "tcp_rtt": float(r)}
        for a, c, r in sorted(zip(t, cwnd, srtt))
        if r > 0
    ]


def _interp_grid(t: np.ndarray, v: np.ndarray, b: _Builder) -> np.ndarray:
    """Samples (sorted times ``t`` in s) on the grid as Flent's TimeseriesAggregator puts them
    (``summary.step_values``: the line to the next sample when it is at most 1 s away)."""
    return step_values(t, v, b.x)


def _ping_series(run, flow: int, b: _Builder) -> tuple[list[dict], np.ndarray, float | None]:
    """A probe stream's points as Flent's runner reads its tool: ping's (``{t: the reply's
    arrival, val: RTT ms, seq}``, ping -D stamping each reply as it prints it), or for a
    request/response stream (``pattern = "rr"``) netperf UDP_RR's interim results (``{t, val}``,
    ``summary.rr_points``)."""
    p = M.probe_table(run.tables, flow)
    send = p.column("t_send_ns").to_numpy().astype(np.int64)
    rtt = M._nullable_float(p, "rtt_ns")
    end = int(run.meta["duration_ns"])
    pattern = _entry(run, flow).get("pattern")
    if pattern == "rr":
        t, v = probe_points(send, rtt, pattern, end)
        raw = [{"t": T0 + float(a), "val": float(x)} for a, x in zip(t, v)]
    else:
        order = arrival_order(send, rtt)
        # the summary's window is by send time: a probe sent before the warm-up stays out
        order = order[send[order] >= round(b.warmup_s * 1e9)]
        t, v = (send[order] + rtt[order]) / 1e9, rtt[order] / 1e6
        seq = p.column("seq").to_numpy().astype(np.int64)[order]
        raw = [{"t": T0 + float(a), "val": float(x), "seq": int(k)} for a, x, k in zip(t, v, seq)]
    return raw, _interp_grid(t, v, b), M.probe_loss(run.tables, flow, b.warmup_s, end)


def _http_series(run, flow: int, b: _Builder) -> tuple[list[dict], np.ndarray, int]:
    """http-getter's points of webpage flow ``flow`` (``{t: fetch end, val: fetch time ms}``, the
    fetches started at or after the warm-up that completed), their grid, and how many of those
    fetches did not complete."""
    w = run.tables.get("webpage")
    if w is None:
        raise M.MissingTableError(f"run '{run.run_id}' has no 'webpage' table; 'HTTP latency' needs it")
    mine = w.column("flow").to_numpy() == flow
    start = w.column("t_start_ns").to_numpy().astype(np.float64)[mine] / 1e9
    ft = M._nullable_float(w, "fetch_time_ns")[mine] / 1e9
    keep = start >= b.warmup_s
    done = keep & ~np.isnan(ft)
    end, ms = start[done] + ft[done], ft[done] * 1e3
    order = np.argsort(end, kind="stable")
    end, ms = end[order], ms[order]
    raw = [{"t": T0 + float(a), "val": float(v)} for a, v in zip(end, ms)]
    return raw, _interp_grid(end, ms, b), int(keep.sum() - done.sum())


def _voip_series(run, flow: int, b: _Builder) -> tuple[list[dict], dict[str, np.ndarray], dict]:
    """irtt's records of a VoIP stream, its sub-sampled children on the grid, and its metadata."""
    p = M.probe_table(run.tables, flow)
    order = np.argsort(p.column("seq").to_numpy().astype(np.int64), kind="stable")
    seq = p.column("seq").to_numpy().astype(np.int64)[order]
    sent = p.column("t_send_ns").to_numpy().astype(np.float64)[order] / 1e9
    rtt, up, down = (M._nullable_float(p, c)[order] / 1e6 for c in ("rtt_ns", "owd_up_ns", "owd_down_ns"))
    raw: list[dict] = []
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in ("rtt", "delay", "jitter", "loss")}
    next_sample, lost = -np.inf, 0
    for i in range(seq.size):
        if np.isnan(rtt[i]):
            raw.append({"t": T0 + float(sent[i]), "seq": int(seq[i]), "lost": True, "lost_dir": None})
            lost += 1
            continue
        t = float(sent[i] + rtt[i] / 1e3)
        dp = {"t": T0 + t, "seq": int(seq[i]), "val": float(rtt[i]), "owd_up": float(up[i]),
              "owd_down": float(down[i])}  # fmt: skip
        if i > 0 and seq[i - 1] == seq[i] - 1 and not np.isnan(rtt[i - 1]):
            dp.update(ipdv_up=float(up[i] - up[i - 1]), ipdv_down=float(down[i] - down[i - 1]),
                      ipdv=float(rtt[i] - rtt[i - 1]))  # fmt: skip
        raw.append(dp)
        if t >= next_sample:
            for k, v in (("rtt", dp["val"]), ("delay", dp["owd_up"]), ("jitter", abs(dp.get("ipdv_up", 0.0))),
                         ("loss", float(lost))):  # fmt: skip
                samples[k].append((t, v))
            lost, next_sample = 0, t + STEP
    grid = {}
    for k, pts in samples.items():
        g = np.full(b.x.size, np.nan)
        if pts:
            ts, vs = np.array(pts).T
            idx = np.searchsorted(ts, b.x)
            ok = idx < ts.size
            ok[ok] &= ts[idx[ok]] - b.x[ok] < STEP
            g[ok] = vs[idx[ok]]
        grid[k] = g
    got = ~np.isnan(rtt)
    meta = {
        "RUNNER": "IrttRunner",
        "PACKETS_SENT": int(seq.size),
        "PACKETS_RECEIVED": int(got.sum()),
        "PACKET_LOSS_RATE": M.probe_loss(run.tables, flow, b.warmup_s, int(run.meta["duration_ns"])),
        "RTT_MEAN": float(rtt[got].mean()) if got.any() else None,
        "OWD_UP_MEAN": float(up[got].mean()) if got.any() else None,
        "OWD_DOWN_MEAN": float(down[got].mean()) if got.any() else None,
        "IPDV_UP_MEAN": M.probe_ipdv_ms(run.tables, flow, "up", b.warmup_s),
        "IPDV_DOWN_MEAN": M.probe_ipdv_ms(run.tables, flow, "down", b.warmup_s),
        "AQMLAB_FLOW": flow,
    }
    return raw, grid, meta


def _add_voip(run, voip: int, b: _Builder) -> None:
    """irtt's ``VoIP`` series of voip flow ``voip`` and its children."""
    raw, grid, vmeta = _voip_series(run, voip, b)
    b.set("VoIP", raw, grid["rtt"])
    b.series_meta["VoIP"] = {"UNITS": "ms", "AQMLAB_FLOW": voip, **vmeta}
    # Children have results only: Flent's irtt runner gives them no raw values of their own.
    for k, units in (("rtt", "ms"), ("delay", "ms"), ("jitter", "ms"), ("loss", "count")):
        b.results[f"VoIP::{k}"] = b._grid(grid[k])
        b.series_meta[f"VoIP::{k}"] = {"UNITS": units}
