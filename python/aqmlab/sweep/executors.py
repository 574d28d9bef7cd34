"""The executors: batches run on a local process pool (or in this process), on Dask or on Ray,
each batch's rows handed back as it finishes; and the supervisor of the processes a sweep
started (its descendants, from /proc), which stops them after an interrupt."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from aqmlab.sweep.definition import SweepError
from aqmlab.sweep.worker import _WORKER, Batch, _counting, _PoolWorker, run_batch

EXECUTORS = ("local", "dask", "ray")
POLL_S = 0.25
"""Wall time between two looks of the parent at its workers (finished runs, the progress bar)."""
STOP_GRACE_S = 1.5
"""On an interrupt, the wall time workers get to write their finished runs and exit."""


def _execute(batches: list[Batch], executor: str, jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    """Runs the batches on ``executor``, handing each one's rows to ``on_done``, which returns the
    batches to run next (the runs that waited for it: ``_Schedule``), and the count of runs
    finished so far (where the executor tells) to ``on_ran``. On an interrupt it cancels what it
    can within STOP_GRACE_S; ``run_sweep`` stops the processes left."""
    if not batches:
        return
    run = {"local": _execute_local, "dask": _execute_dask, "ray": _execute_ray}.get(executor)
    if run is None:
        raise SweepError(f"--executor {executor!r}: unknown; allowed: {', '.join(EXECUTORS)}")
    run(batches, jobs, scheduler, on_done, on_ran)


def _execute_local(batches: list[Batch], jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    """With one job, or one batch to run and no pool started, a batch runs in this process."""
    import multiprocessing as mp

    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    counter = ctx.Value("q", 0)
    count = _counting(counter)

    def ran_here() -> None:
        count()
        on_ran(counter.value)

    queue, pending, pool = list(batches), set(), None
    _WORKER["ran"] = ran_here
    try:
        while queue or pending:
            if pool is None and (jobs <= 1 or len(queue) == 1):
                queue += on_done(run_batch(queue.pop(0)))
                continue
            pool = pool or ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_PoolWorker.init,
                                               initargs=(counter, os.getpid()))  # fmt: skip
            pending |= {pool.submit(_PoolWorker.run, b) for b in queue}
            queue = []
            done, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            on_ran(counter.value)
            for f in done:
                queue += on_done(f.result())
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        _WORKER["ran"] = None
    if pool is not None:
        pool.shutdown()


def _execute_dask(batches: list[Batch], jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise SweepError(
            "--executor dask: dask.distributed is not installed (pip install 'aqmlab[dask]')"
        ) from None
    cluster = None
    if scheduler:
        client = Client(scheduler)
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)

    def close() -> None:
        try:
            client.close()
        finally:
            if cluster is not None:
                cluster.close()

    def stop() -> None:
        # The workers run batches off their main thread, out of reach of signals; a Ctrl-C
        # reached them too, so that a step may fail on a worker that is gone. The cluster is
        # closed whatever failed before: its nannies, in this process, would otherwise start a
        # new worker for each one ``_stop_started`` ends, which runs a batch after the count of
        # the runs kept was taken.
        try:
            with contextlib.suppress(Exception):
                client.run(_interrupt_runs)
            with contextlib.suppress(Exception):
                client.cancel(futs, force=True)
        finally:
            close()

    futs = []
    try:
        futs = client.map(_dask_batch, batches, pure=False)
        running = as_completed(futs)
        for f in running:
            more = client.map(_dask_batch, on_done(f.result()), pure=False)
            futs += more
            running.update(more)
    except BaseException:
        _within(STOP_GRACE_S, stop)
        raise
    close()


def _interrupt_runs() -> None:
    from aqmlab import _core

    _core.interrupt_runs()


class BatchInterrupted(Exception):
    """A batch whose run in progress was stopped (its finished runs are written)."""


def _dask_batch(batch: Batch) -> list[dict]:
    """``run_batch`` as a Dask task: an interrupt is an ordinary error there (a KeyboardInterrupt
    would take the worker down)."""
    try:
        return run_batch(batch)
    except KeyboardInterrupt:
        raise BatchInterrupted from None


def _execute_ray(batches: list[Batch], jobs: int, scheduler: str | None, on_done, on_ran) -> None:
    try:
        import ray
    except ImportError:
        raise SweepError(
            "--executor ray: ray is not installed (pip install 'aqmlab[ray]' or pip install ray)"
        ) from None
    # workers start elsewhere: the driver's directory stays importable (aqmlab.pyqdisc)
    env = {"env_vars": {"AQMLAB_PYTHONPATH": os.pathsep.join(
        filter(None, [os.getcwd(), os.environ.get("AQMLAB_PYTHONPATH")]))}}  # fmt: skip
    ours = not ray.is_initialized()
    ray.init(address=scheduler, ignore_reinit_error=True, runtime_env=env) if scheduler else ray.init(
        num_cpus=jobs, ignore_reinit_error=True, runtime_env=env
    )
    remote = ray.remote(run_batch)
    refs = [remote.remote(b) for b in batches]

    def stop() -> None:
        # a cancelled task gets KeyboardInterrupt: its run stops, its finished runs are written
        for r in refs:
            ray.cancel(r)
        ray.wait(refs, num_returns=len(refs), timeout=STOP_GRACE_S)
        if ours:
            ray.shutdown()

    try:
        while refs:
            ready, refs = ray.wait(refs, num_returns=1, timeout=POLL_S)
            for r in ready:
                refs += [remote.remote(b) for b in on_done(ray.get(r))]
    except BaseException:
        _within(2 * STOP_GRACE_S, stop)
        raise


def _within(seconds: float, fn: Callable[[], Any]) -> None:
    """Calls ``fn`` (an executor's cleanup after an interrupt), waiting for it ``seconds`` at most;
    its errors are dropped (what it leaves running is stopped by ``_stop_started``)."""

    def call() -> None:
        try:
            fn()
        except BaseException:  # noqa: BLE001, S110 - best effort, the processes are killed next
            pass

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(seconds)


def _descendants() -> set[int]:
    """The processes below this one (children, theirs, ...), from /proc; where there is no
    /proc, the children started by multiprocessing."""
    import multiprocessing as mp

    proc = Path("/proc")
    if not proc.is_dir():
        return {p.pid for p in mp.active_children()}
    parent: dict[int, int] = {}
    for d in proc.iterdir():
        stat = _stat(d.name)
        if stat is not None and stat[0] != "Z":
            parent[int(d.name)] = stat[1]
    below, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier} - below
        below |= frontier
    return below


def _stat(pid: str) -> tuple[str, int] | None:
    """(state, parent pid) of a process from /proc/PID/stat; None if it is gone or not a pid."""
    if not pid.isdigit():
        return None
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid = text[text.rindex(")") + 2 :].split()[:2]  # the name may hold spaces or ')'
    return state, int(ppid)


def _stop_started(before: set[int]) -> None:
    """Stops every process started below this one since ``before`` was taken (the workers and
    what they started): SIGTERM, on which a local worker writes its finished runs and exits, then
    SIGKILL to any left after STOP_GRACE_S; at once to one that ignores SIGTERM (a helper such as
    multiprocessing's resource tracker)."""
    deadline = time.monotonic() + STOP_GRACE_S
    signalled: set[int] = set()
    while (left := _descendants() - before) and time.monotonic() < deadline:
        for pid in left - signalled:
            _kill(pid, signal.SIGKILL if _ignores(pid, signal.SIGTERM) else signal.SIGTERM)
        signalled |= left
        time.sleep(0.05)
    for pid in left:
        _kill(pid, signal.SIGKILL)


def _ignores(pid: int, sig: int) -> bool:
    """Whether process ``pid`` ignores signal ``sig`` (its SigIgn mask in /proc/PID/status)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in lines if line.startswith("SigIgn:")), 0)
    return bool(mask >> (sig - 1) & 1)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
