"""Delivery traces in Mahimahi's format, for a hop's ``trace`` (the core's ``net/trace.rs`` has
mm-link's semantics): reading a user's file, writing one, and two generators of synthetic traces,
so that tests and examples need no outside data.

A trace file has one line per delivery opportunity, the time in milliseconds from the trace's
start, non-decreasing; an opportunity carries one 1500-byte packet (mm-link(1); the traces of
Mahimahi's ``traces/`` directory and of Pantheon are in this format). The trace repeats, its
period being its last time.

A scenario names a file relative to its own file (``load`` anchors the path); what reaches the
core is the file's lines (``inline``), so the stored scenario holds the trace it ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

PACKET_BYTES = 1500
"""The IP packet one opportunity is for (mm-link counts 1504 bytes: its TUN header's 4 more)."""


class TraceFileError(ValueError):
    """A trace file that cannot be read; the message names the file and the line."""


def read(path: str | Path) -> list[int]:
    """The lines of the trace file at ``path``, checked as mm-link checks them (a blank line, a
    line that is not a whole number of ms, a time before the one above it, no lines, or a last
    time of 0 are refused)."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise TraceFileError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise TraceFileError(f"{p}: is a directory; allowed: a trace file") from None
    except UnicodeDecodeError as e:
        raise TraceFileError(f"{p}: byte {e.start} is not text; allowed: one time in ms per line") from None
    except OSError as e:
        raise TraceFileError(f"{p}: {e.strerror}") from None
    ms: list[int] = []
    for i, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s.isdigit():
            shown = repr(line) if s else "a blank line"
            raise TraceFileError(
                f"{p}: line {i}: {shown} is not allowed; allowed: a time in ms (0, 1, 2, ...)"
            )
        t = int(s)
        if ms and t < ms[-1]:
            raise TraceFileError(
                f"{p}: line {i}: {t} ms is before the line above it ({ms[-1]} ms); allowed: non-decreasing times"
            )
        ms.append(t)
    if not ms:
        raise TraceFileError(f"{p}: the file is empty; allowed: one time in ms per delivery opportunity")
    if ms[-1] == 0:
        raise TraceFileError(
            f"{p}: the trace lasts 0 ms (its last time is its period); allowed: a last time above 0"
        )
    return ms


def write(path: str | Path, ms: Iterable[int]) -> None:
    """Writes a trace file: one time in ms per line."""
    Path(path).write_text("".join(f"{int(t)}\n" for t in ms))


def mean_rate_bps(ms: Sequence[int]) -> float:
    """A trace's mean rate in 1500-byte packets: lines x 1500 x 8 bits over its period."""
    return len(ms) * PACKET_BYTES * 8 * 1000 / ms[-1]


def _opportunities(rates_bps: Iterable[int]) -> list[int]:
    """The opportunities of a capacity given per millisecond (ms 1, 2, ...: the rate over the
    ms ending then): each ms adds its bits to a credit, and every full packet of credit is an
    opportunity at that ms; integer arithmetic, so a constant rate gives its exact count."""
    out: list[int] = []
    credit = 0  # bits x 1000
    per_packet = PACKET_BYTES * 8 * 1000
    for m, rate in enumerate(rates_bps, start=1):
        credit += int(rate)
        n, credit = divmod(credit, per_packet)
        out.extend([m] * n)
    return out


def from_rates(rates_bps: Sequence[float], interval_ms: int = 1000) -> list[int]:
    """A trace replaying a series of rates, each held for ``interval_ms`` (e.g. a measured
    throughput series of one value per second). Rate 0 is an outage. The period is the last
    opportunity's time, so a series should end on a rate above 0."""
    if interval_ms < 1:
        raise ValueError(f"interval_ms: {interval_ms} is not allowed; allowed: 1 or more")
    if any(r < 0 for r in rates_bps):
        raise ValueError("rates_bps: a negative rate is not allowed")
    ms = _opportunities(int(r) for r in rates_bps for _ in range(interval_ms))
    if not ms:
        raise ValueError("rates_bps: the series carries no packet")
    return ms


def gilbert_elliott(
    duration_ms: int,
    good_bps: float,
    bad_bps: float,
    p_good_bad: float,
    p_bad_good: float,
    seed: int = 1,
) -> list[int]:
    """A trace from a two-state Markov (Gilbert-Elliott) capacity model: each millisecond the
    link is good (``good_bps``) or bad (``bad_bps``, 0 for an outage) and moves from good to
    bad with probability ``p_good_bad``, back with ``p_bad_good`` (mean sojourns 1/p ms; the
    stationary share of bad time is p_good_bad / (p_good_bad + p_bad_good)). Starts good;
    the same arguments give the same trace."""
    for name, p in (("p_good_bad", p_good_bad), ("p_bad_good", p_bad_good)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{name}: {p} is out of range; allowed 0 to 1")
    import numpy as np

    rng = np.random.default_rng(seed)
    draws = rng.random(duration_ms)
    good = True
    rates = []
    for u in draws:
        rates.append(good_bps if good else bad_bps)
        good = (u >= p_good_bad) if good else (u < p_bad_good)
    return from_rates(rates, interval_ms=1)


def _hop_traces(sc: dict) -> Iterable[tuple[str, dict]]:
    """(key, hop table) of every hop of ``sc`` with a ``trace``, keys as the core names them."""
    topo = sc.get("topology")
    if not isinstance(topo, dict):
        return
    for d in ("down", "up"):
        if isinstance(topo.get(d), dict) and "trace" in topo[d]:
            yield f"topology.{d}", topo[d]
    hops = topo.get("hops")
    if isinstance(hops, list):
        for i, h in enumerate(hops):
            if isinstance(h, dict) and "trace" in h:
                yield f"topology.hops[{i}]", h


def anchor(sc: dict, base: Path) -> None:
    """Makes the relative trace paths of ``sc`` (a scenario just read from a file in ``base``)
    relative to that file's directory."""
    for _, hop in _hop_traces(sc):
        t = hop["trace"]
        if isinstance(t, str) and t and not Path(t).is_absolute():
            hop["trace"] = str(base / t)


def inline(sc: dict) -> dict:
    """``sc`` with each trace file replaced by its lines (``{file, ms}``, what the core takes);
    ``sc`` itself is not changed (the tables on the way to a trace are copied, the rest shared).
    Raises TraceFileError naming the key."""
    if not any(isinstance(h["trace"], str) for _, h in _hop_traces(sc)):
        return sc
    topo = dict(sc["topology"])
    out = {**sc, "topology": topo}
    for d in ("down", "up"):
        if isinstance(topo.get(d), dict):
            topo[d] = dict(topo[d])
    if isinstance(topo.get("hops"), list):
        topo["hops"] = [dict(h) if isinstance(h, dict) else h for h in topo["hops"]]
    for key, hop in _hop_traces(out):
        if isinstance(hop["trace"], str):
            try:
                hop["trace"] = {"file": hop["trace"], "ms": read(hop["trace"])}
            except TraceFileError as e:
                raise TraceFileError(f"{key}.trace: {e}") from None
    return out
