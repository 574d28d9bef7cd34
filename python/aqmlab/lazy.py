"""``lazy(name)``: a module executed on first attribute access, so that commands and declarations
which do not need pyarrow, pandas, DuckDB or matplotlib start fast.

The module object is created at once and registered in ``sys.modules`` (an ``import`` of it
elsewhere finds the same object), its code runs at the first access of any attribute, from any
thread. That first load holds the module's own lock: another thread touching the module meanwhile
waits for it, instead of reading a half-executed module (Python 3.11's
``importlib.util.LazyLoader`` has no such lock: a second thread got an AttributeError), and the
loading thread itself, should the module's code reach the module object, reads it as it stands.
A module whose code raised leaves ``sys.modules``, as a failed import does.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import weakref
from types import ModuleType

# Each lazy module's lock (held for its first load, then dropped), keyed by the module object
# itself, held weakly: an entry goes with its module, and no other object can find it (an id()
# is reused once its object is gone).
_LOCKS: weakref.WeakKeyDictionary[ModuleType, threading.RLock] = weakref.WeakKeyDictionary()


class _Lazy(ModuleType):
    """A module whose code has not run yet."""

    def __getattribute__(self, attr: str):
        lock = _LOCKS.get(self)
        if lock is not None:
            with lock:
                if type(self) is _Lazy:
                    _load(self)
        return ModuleType.__getattribute__(self, attr)


class _Loading(ModuleType):
    """A module whose code is running: other threads wait for the end of the load."""

    def __getattribute__(self, attr: str):
        lock = _LOCKS.get(self)
        if lock is not None:
            with lock:  # re-entrant: the loading thread passes
                pass
        return ModuleType.__getattribute__(self, attr)


def _load(module: ModuleType) -> None:
    """Runs the module's code (its lock held); the module is plain afterwards. If its code
    raised, it leaves ``sys.modules`` as a failed import does, and stays lazy for those holding
    it: their next access runs the code again."""
    spec = ModuleType.__getattribute__(module, "__spec__")
    module.__class__ = _Loading
    try:
        spec.loader.exec_module(module)
    except BaseException:
        if sys.modules.get(spec.name) is module:
            del sys.modules[spec.name]
        module.__class__ = _Lazy
        raise
    module.__class__ = ModuleType
    _LOCKS.pop(module, None)


def lazy(name: str) -> ModuleType:
    """Module ``name``, executed on first attribute access; the loaded module when it already is."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    module = importlib.util.module_from_spec(spec)
    _LOCKS[module] = threading.RLock()
    module.__class__ = _Lazy
    sys.modules[name] = module
    return module
