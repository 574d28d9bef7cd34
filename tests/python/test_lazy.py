"""aqmlab.lazy: a module loaded on first use, once, whichever threads touch it first."""

from __future__ import annotations

import gc
import sys
import threading
import weakref
from pathlib import Path

import pytest

from aqmlab.lazy import lazy


def _module(tmp_path: Path, monkeypatch, name: str, code: str) -> str:
    """Module ``name`` with ``code``, importable for the test and gone from ``sys.modules`` after."""
    (tmp_path / f"{name}.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, name)
    return name


def test_threads_touching_a_module_while_it_loads_wait_for_the_whole_module(tmp_path: Path, monkeypatch):
    # The module takes 0.3 s to run: the other threads arrive while it is half executed (with
    # Python 3.11's LazyLoader they found no VALUE there).
    name = _module(
        tmp_path, monkeypatch, "aqmlab_slow_module", "import time\nRUNS = 1\ntime.sleep(0.3)\nVALUE = 42\n"
    )
    m = lazy(name)
    seen: list[object] = []

    def touch() -> None:
        try:
            seen.append(m.VALUE)
        except AttributeError as e:
            seen.append(e)

    threads = [threading.Thread(target=touch) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [42] * 4
    assert sys.modules[name] is m and m.RUNS == 1


def test_nothing_runs_before_the_first_use_and_the_loaded_module_is_returned_again(
    tmp_path: Path, monkeypatch
):
    mark = tmp_path / "ran"
    name = _module(
        tmp_path, monkeypatch, "aqmlab_marking_module", f"open({str(mark)!r}, 'a').write('x')\nVALUE = 1\n"
    )
    m = lazy(name)
    assert not mark.exists()
    assert m.VALUE == 1 and mark.read_text() == "x"
    assert lazy(name) is m
    assert m.VALUE == 1 and mark.read_text() == "x"


def test_a_module_reading_itself_while_it_loads_sees_what_it_has_so_far(tmp_path: Path, monkeypatch):
    code = "import sys\nA = 1\nB = sys.modules[__name__].A + 1\n"
    name = _module(tmp_path, monkeypatch, "aqmlab_self_reading_module", code)
    assert lazy(name).B == 2


def test_a_module_that_raises_raises_again_at_the_next_use(tmp_path: Path, monkeypatch):
    name = _module(tmp_path, monkeypatch, "aqmlab_failing_module", "A = 1\nraise RuntimeError('broken')\n")
    m = lazy(name)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="broken"):
            _ = m.A
        # as after a failed import: no half module for whoever scans sys.modules
        assert name not in sys.modules


def test_a_module_s_lock_goes_with_the_module(tmp_path: Path, monkeypatch):
    # Keyed by id(module), a lock outlived a module dropped before its first use, and its id
    # could be handed to a later object: the lock is the module's own, gone with it.
    from aqmlab import lazy as lazy_module

    name = _module(tmp_path, monkeypatch, "aqmlab_dropped_module", "VALUE = 1\n")
    before = len(lazy_module._LOCKS)
    m = lazy(name)
    assert len(lazy_module._LOCKS) == before + 1
    gone = weakref.ref(m)
    del sys.modules[name], m
    gc.collect()
    assert gone() is None
    assert len(lazy_module._LOCKS) == before
