"""The Python API: `aqmlab.run(...)` runs one scenario in the Rust core and returns a `Result`
with the summary (aqmlab.metrics) and the recorded tables (pyarrow; `.df(name)` for pandas);
`run_and_store` runs one and stores it as `aqmlab run` does.
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aqmlab import _core, layout, metrics, signals, traces
from aqmlab.lazy import lazy
from aqmlab.runtables import RunTables
from aqmlab.scenario import ScenarioError, apply_overrides, for_core, load

store = lazy("aqmlab.store")  # DuckDB and pandas: not needed to simulate (``simulate``'s ``meanwhile``)


@dataclass
class Result:
    """One run: `summary` (dict), `meta` (dict, with the resolved scenario) and `tables` (a
    ``RunTables``: table name -> pyarrow.Table, with what the metrics built from them)."""

    tables: RunTables
    meta: dict
    summary: dict = field(default_factory=dict)
    path: Path | None = None

    def df(self, name: str):
        """Table `name` as a pandas DataFrame."""
        return self.tables[name].to_pandas()

    def table(self):
        """The summary as a pandas table, one row per hop: the columns `aqmlab run` prints
        (``catalogue.LINK_VIEW``: discipline, utilisation, queueing delay in ms, packet counts)."""
        import pandas as pd

        from aqmlab.metrics import catalogue

        rows = [{"hop": hop, **{v.header: v.value(link) for v in catalogue.LINK_VIEW}}
                for hop, link in self.summary["links"].items()]  # fmt: skip
        return pd.DataFrame(rows).set_index("hop")

    def _repr_html_(self) -> str:
        """Jupyter shows a run as its summary table."""
        title = f"<p><b>{self.meta['name']}</b> (seed {self.meta['seed']})</p>"
        return title + self.table().to_html(float_format=lambda x: f"{x:.2f}", na_rep="-")

    @property
    def scenario(self) -> dict:
        return self.meta["scenario"]

    def save(self, root: Path | str | None = None, run_id: str | None = None) -> Path:
        """Writes the run atomically under `root` (default ``./aqmlab-results``,
        ``store.DEFAULT_ROOT``) and adds it to the catalog."""
        root = Path(root) if root is not None else store.DEFAULT_ROOT
        run_id = run_id or store.new_run_id(self.meta["name"], self.meta["seed"])
        self.path = store.save_run(root, run_id, self.tables, self.meta, self.summary)
        return self.path


class SimulationError(RuntimeError):
    """The simulator broke one of its own invariants (packet conservation): a defect of aqmlab,
    not of the scenario. The run is not stored."""


Progress = Callable[[int, int, int, float], Any]
"""Called about every 0.5 s of wall time during a run as ``progress(now_ns, duration_ns, events,
wall_s)``: the simulated time reached, the run's duration, the events so far, the wall time so
far."""


def simulate(
    sc: dict,
    seed: int | None = None,
    progress: Progress | None = None,
    resolved: dict | None = None,
    meanwhile: Callable[[], Any] | None = None,
) -> tuple[RunTables, dict]:
    """Runs a scenario dict in the core: the recorded tables (those its recording level keeps,
    as the run's ``RunTables``) and the metadata. Raises ScenarioError for invalid scenarios and SimulationError when the
    core's packet-conservation check fails. A signal whose handler raises (Ctrl-C:
    KeyboardInterrupt) stops the run within some 50 ms of wall time and propagates.
    ``resolved``, if given, is ``scenario.resolve(sc, seed)``: ``sc`` was checked then, and the
    metadata takes it as its ``scenario`` (the same scenario and seed resolve to the same
    document) instead of the core encoding it again and Python decoding it again.
    ``meanwhile``, if given, is called in a thread while the core simulates (which it does
    without the GIL: on another CPU), and has returned when ``simulate`` returns or raises; what
    it raises is its own business (loading the modules the caller needs next, say)."""
    if seed is not None and not (isinstance(seed, int) and 0 <= seed < 2**64):
        raise ScenarioError(f"seed: {seed!r} is not allowed; allowed: an integer from 0 to 2^64 - 1")
    # with ``resolved``, ``sc`` was checked and its trace files read once already
    text = for_core(sc) if resolved is None else json.dumps(traces.inline(sc))
    helper = threading.Thread(target=meanwhile, name="meanwhile") if meanwhile is not None else None
    if helper is not None:
        helper.start()
    try:
        batches, meta_json = _core.run(text, seed, progress, resolved is None)
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    except RuntimeError as e:
        raise SimulationError(str(e)) from None
    finally:
        if helper is not None:
            helper.join()
    meta = json.loads(meta_json)
    if resolved is not None:
        meta["scenario"] = resolved
    return RunTables.decoded(recorded(batches, meta["record"]["level"])), meta


# Recording levels, least kept first.
LEVELS = ("summary", "series", "packets")


def recorded(tables: dict, level: str) -> dict:
    """The tables a run keeps at ``record.level``: those whose declared level (layout.LAYOUT)
    is at most ``level``."""
    lowest = {t["name"]: LEVELS.index(t["level"]) for t in layout.LAYOUT}
    return {name: t for name, t in tables.items() if lowest[name] <= LEVELS.index(level)}


def run_dict(
    sc: dict,
    seed: int | None = None,
    warmup_s: float = 0.0,
    progress: Progress | None = None,
    resolved: dict | None = None,
) -> Result:
    """Runs a scenario dict (already overridden) and summarises it; ``resolved`` as ``simulate``
    takes it."""
    tables, meta = simulate(sc, seed, progress, resolved)
    return Result(tables, meta, metrics.summarize(tables, meta, warmup_s=warmup_s))


def run(
    scenario: str | Path | dict,
    seed: int | None = None,
    overrides: list[str] | dict[str, Any] | None = None,
    warmup_s: float = 0.0,
    progress: Progress | None = None,
    **set_keys: Any,
) -> Result:
    """Runs `scenario` (a TOML path, a built-in name, or a dict).

    `overrides` are `key.path=value` strings or a {path: value} mapping; keyword arguments are
    overrides too, with `__` for the dots (`topology__down__rate="2Mbps"`). Ctrl-C stops the run
    (KeyboardInterrupt; nothing is kept); `progress` is described at ``Progress``.
    """
    sc = apply_overrides(load(scenario), overrides)
    sc = apply_overrides(sc, {k.replace("__", "."): v for k, v in set_keys.items()})
    return run_dict(sc, seed=seed, warmup_s=warmup_s, progress=progress)


class StoreFailed(Exception):
    """Storing a run failed (a full or read-only disk, a damaged catalog): ``error`` is what was
    raised, ``path`` the run's directory when the run was written but the catalog not updated
    (else None)."""

    def __init__(self, error: Exception, path: Path | None):
        super().__init__(str(error))
        self.error, self.path = error, path


def run_and_store(
    sc: dict,
    resolved: dict,
    out_dir: Path,
    interrupts: Interrupts,
    seed: int | None = None,
    warmup_s: float = 0.0,
    progress: Callable[[], AbstractContextManager[Progress]] | None = None,
    stored: Callable[[Result], Any] | None = None,
    draw: Callable[[Result, Any], Any] | None = None,
    preload: Sequence[Any] = (),
) -> Result:
    """Runs a scenario dict and stores it under ``out_dir``, as ``aqmlab run`` does; the run,
    stored. ``resolved`` is ``scenario.resolve(sc, seed)`` (``simulate``).

    While the core simulates (``progress()``, if given, being the context of its progress
    reporter), the store and the lazily loaded modules ``preload`` are loaded on the other CPU
    (``aqmlab.lazy``: DuckDB, pandas and matplotlib take some 0.9 s to load). The run is then
    summarised while its tables are written (``store.RunWriter``: on the other CPU too, pyarrow
    releasing the GIL), ``draw(result, writer)`` (a figure into ``writer.tmp``) is called while
    they still are, and the run is published and handed to ``stored``, ``interrupts`` holding an
    interrupt off until both are done: what the caller reports after an interrupt includes this
    run. An interrupt or error before that leaves nothing stored; a failure to store raises
    StoreFailed."""

    def load() -> None:  # an error loading one shows where it is used
        for m in (store, *preload):
            with contextlib.suppress(Exception):
                _ = m.__doc__

    with progress() if progress is not None else contextlib.nullcontext() as reporter:
        tables, meta = simulate(sc, seed, reporter, resolved, meanwhile=load)
    import duckdb  # loaded by the store

    writer = None
    try:
        with store.RunWriter(out_dir, store.new_run_id(meta["name"], meta["seed"]), tables) as writer:
            res = Result(tables, meta, metrics.summarize(tables, meta, warmup_s=warmup_s))
            if draw is not None:
                draw(res, writer)
            with interrupts.held():
                res.path = writer.finish(meta, res.summary)
                if stored is not None:
                    stored(res)
    except (OSError, duckdb.Error) as e:
        raise StoreFailed(e, writer and writer.path) from e
    return res


class Interrupts:
    """While ``catching()``, SIGINT and SIGTERM raise KeyboardInterrupt in the main thread (a run
    in progress stops within some 50 ms of wall time), the first of them only: later ones are
    ignored, so that what the interrupt sets off (stopping workers, keeping finished runs)
    completes. Within ``held()`` the first one waits until the block ends. Off the main thread
    nothing changes."""

    def __init__(self) -> None:
        self.fired = False
        self._held = 0
        self._pending = False

    def _handler(self, signum: int, frame: Any) -> None:
        if self.fired:
            return
        signals.note(signum)
        self.fired = True
        if self._held:
            self._pending = True
            return
        raise KeyboardInterrupt

    @contextmanager
    def catching(self) -> Iterator[Interrupts]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        previous = {s: signal.signal(s, self._handler) for s in signals.STOP_SIGNALS}
        try:
            if signals.take_early():  # a signal during start-up that some import swallowed
                raise signals.Stopped
            yield self
            if self.fired and not self._pending:
                # the handler's KeyboardInterrupt was raised where Python drops exceptions (a
                # weakref callback, a __del__): the block ran on, and the signal is heeded now
                raise KeyboardInterrupt
        finally:
            for s, h in previous.items():
                signal.signal(s, h)

    @contextmanager
    def held(self) -> Iterator[None]:
        """A block that an interrupt does not cut (writing a run): it is raised at its end."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        if self._pending and not self._held:
            self._pending = False
            raise KeyboardInterrupt
