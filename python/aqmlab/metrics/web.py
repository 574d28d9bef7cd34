"""Web traffic metrics: the PackMime-HTTP exchanges (``web`` table) and the page fetches
(``webpage`` table) started at or after the warm-up W."""

from __future__ import annotations

import numpy as np

from aqmlab.metrics.base import NS, _need, _nullable_float


def _requested(tables: dict, warmup_s: float) -> np.ndarray:
    """Which ``web`` rows are exchanges requested at or after W."""
    t0 = _nullable_float(_need(tables, "web"), "t_request_ns")
    return ~np.isnan(t0) & (t0 >= warmup_s * NS)


def web_exchanges(tables: dict, warmup_s: float = 0.0) -> int:
    """Web exchanges requested at or after W."""
    return int(_requested(tables, warmup_s).sum())


def response_times_ms(tables: dict, warmup_s: float = 0.0) -> np.ndarray:
    """The response time (request SYN to the last response byte at the client) of each exchange
    requested at or after W that completed within the run, in ms."""
    rt = _nullable_float(_need(tables, "web"), "response_time_ns")[_requested(tables, warmup_s)]
    return rt[~np.isnan(rt)] / 1e6


def web_completed(tables: dict, warmup_s: float = 0.0) -> int:
    """Of the exchanges requested at or after W, those completed within the run."""
    return int(response_times_ms(tables, warmup_s).size)


def _started(tables: dict, warmup_s: float) -> np.ndarray:
    """Which ``webpage`` rows are fetches started at or after W."""
    return _need(tables, "webpage").column("t_start_ns").to_numpy().astype(np.float64) >= warmup_s * NS


def page_fetches(tables: dict, warmup_s: float = 0.0) -> int:
    """Page fetches started at or after W."""
    return int(_started(tables, warmup_s).sum())


def page_timeouts(tables: dict, warmup_s: float = 0.0) -> int:
    """Of the page fetches started at or after W, those that timed out."""
    w = _need(tables, "webpage")
    return int((w.column("timed_out").to_numpy()[_started(tables, warmup_s)] != 0).sum())


def fetch_times_s(
    tables: dict, warmup_s: float = 0.0, flow: int | None = None, end_s: float | None = None
) -> np.ndarray:
    """Page fetch times (start to the last object's last byte, http-getter's measure) of the
    fetches started at or after the warm-up that completed (by ``end_s`` when given), in seconds
    (NaN-free)."""
    w = _need(tables, "webpage")
    t0 = w.column("t_start_ns").to_numpy().astype(np.float64)
    keep = t0 >= warmup_s * NS
    if flow is not None:
        keep &= w.column("flow").to_numpy() == flow
    ft = _nullable_float(w, "fetch_time_ns")
    if end_s is not None:
        keep &= t0 + np.nan_to_num(ft, nan=np.inf) <= end_s * NS
    ft = ft[keep]
    return ft[~np.isnan(ft)] / NS
