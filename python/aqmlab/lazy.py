"""``lazy(name)``: a module executed on first attribute access (importlib.util.LazyLoader), so that
commands and declarations which do not need pyarrow, pandas, DuckDB or matplotlib start fast."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy(name: str) -> ModuleType:
    """Module ``name``, executed on first attribute access; the loaded module when it already is."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
