"""DuckDB, loaded once with SIGINT and SIGTERM held until it is (``signals.deferred``): its native
module's initialisation aborts the whole process ("Critical nanobind error") when a signal
handler raises inside it, where a command's Ctrl-C must end it with one line. Imported by the
package before any module of it imports ``duckdb``, which then finds it loaded."""

import importlib

from aqmlab import signals

duckdb = signals.deferred(lambda: importlib.import_module("duckdb"))
