"""What the package's modules import. No module imports one that imports it back, directly or
through others: each module's imports that run when it is loaded (``import`` and ``from ...
import`` outside function bodies, and the modules it names to ``lazy(...)`` or
``import_module(...)``) form an acyclic graph, so that the order the modules' code runs in never
depends on which one is imported first; the packages split by concern (``sweep``, ``store``)
keep their layers that way. And simulating a run (``aqmlab.api``) loads neither DuckDB nor
pandas, which only storing and reading results need (``aqmlab.store``)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python" / "aqmlab"
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# The compiled core: a module that imports none of the package's.
CORE = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["maturin"]["module-name"]


def module_names(package: Path = PACKAGE) -> dict[str, Path | None]:
    """Every module of the package: dotted name -> file (a package is its ``__init__.py``; the
    compiled core has none here)."""
    out: dict[str, Path | None] = {CORE: None}
    for f in sorted(package.rglob("*.py")):
        rel = f.relative_to(package.parent).with_suffix("")
        names = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(names)] = f
    return out


def executed(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module that run when it is imported: all but the bodies of its functions
    (an import there runs at the call, when every module is loaded)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo += [n for n in ast.iter_child_nodes(node) if not isinstance(n, FUNCTIONS)]


def imported(name: str, path: Path, known: set[str], at_load: bool = True) -> set[str]:
    """The modules among ``known`` that module ``name`` (file ``path``) imports: when it is loaded
    (``at_load``), or anywhere in its file, function bodies included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        if target in known:
            found.add(target)

    tree = ast.parse(path.read_text(), str(path))
    for node in executed(tree) if at_load else ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:  # a submodule by name, else a name of the module ``base``
                sub = f"{base}.{alias.name}"
                add(sub if sub in known else base)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("lazy", "import_module")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            add(node.args[0].value)
    found.discard(name)
    return found


def import_graph(package: Path = PACKAGE, at_load: bool = True) -> dict[str, set[str]]:
    modules = module_names(package)
    return {
        name: imported(name, path, set(modules), at_load) if path else set() for name, path in modules.items()
    }


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated at the end), or
    None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return [*path[path.index(n) :], n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_graph_is_read_from_every_kind_of_import():
    graph = import_graph()
    assert "aqmlab.sweep.orchestrate" in graph["aqmlab.sweep"]  # from .orchestrate import ...
    assert "aqmlab.store" in graph["aqmlab.api"]  # lazy("aqmlab.store")
    assert "aqmlab.layout" in graph["aqmlab.api"]  # from aqmlab import layout


def test_no_module_of_the_package_imports_itself_through_others():
    found = circle(import_graph())
    assert found is None, "import circle: " + " -> ".join(found)


def test_no_file_imports_itself_through_others_even_inside_a_function():
    # an import in a function body runs later, but it still ties the two files together: a
    # module that needs the one that needs it is one concern split in two
    found = circle(import_graph(at_load=False))
    assert found is None, "import circle (function bodies counted): " + " -> ".join(found)


def test_a_circle_inside_a_function_is_seen(tmp_path):
    pkg = tmp_path / "aqmlab"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from aqmlab import b\n")
    (pkg / "b.py").write_text("def f():\n    from aqmlab import a\n")
    assert circle(import_graph(pkg)) is None
    assert circle(import_graph(pkg, at_load=False)) == ["aqmlab.a", "aqmlab.b", "aqmlab.a"]


def test_a_circle_injected_into_the_package_is_seen(tmp_path):
    # the rule on a copy of the package, one line added each time: a child importing a name of
    # its package, whose __init__ imports the child (store/, sweep/); a module importing one
    # that imports it (runtables from metrics.base, which it imports); the same inside a
    # function, seen by the graph that counts function bodies
    import shutil

    cases = [
        (
            "store/write.py",
            "from aqmlab.store import DEFAULT_ROOT\n",
            True,
            {"aqmlab.store", "aqmlab.store.write"},
        ),
        (
            "sweep/worker.py",
            "from aqmlab.sweep import run_sweep\n",
            True,
            {"aqmlab.sweep", "aqmlab.sweep.worker"},
        ),
        (
            "runtables.py",
            "from aqmlab.metrics import base\n",
            True,
            {"aqmlab.runtables", "aqmlab.metrics.base"},
        ),
        ("runtables.py", "def f():\n    from aqmlab.metrics import base\n", False, {"aqmlab.runtables"}),
    ]
    for i, (file, line, at_load, ends) in enumerate(cases):
        pkg = tmp_path / str(i) / "aqmlab"
        shutil.copytree(PACKAGE, pkg, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        assert circle(import_graph(pkg, at_load=False)) is None
        (pkg / file).write_text((pkg / file).read_text() + line)
        found = circle(import_graph(pkg, at_load=at_load))
        assert found is not None and ends <= set(found), (file, found)


def test_a_circle_is_found():
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None


LONGEST = 600  # lines: a module longer than this holds more than one concern


def test_no_module_is_longer_than_600_lines():
    lines = {name: len(path.read_text().splitlines()) for name, path in module_names().items() if path}
    assert lines, "no module found"
    too_long = {name: n for name, n in lines.items() if n > LONGEST}
    assert not too_long, f"modules over {LONGEST} lines: {too_long}"


SIMULATE = """
import sys

class Absent:  # pandas and DuckDB cannot be imported: pyarrow then converts without pandas
    def find_spec(self, name, path=None, target=None):
        if {block} and name.partition(".")[0] in ("pandas", "duckdb"):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, Absent())
from aqmlab import api

res = api.run("bufferbloat", seed=1, duration="1s")
assert res.summary["links"], res.summary
print(" ".join(sorted(m for m in ("duckdb", "pandas") if m in sys.modules)))
"""


def _simulate(block: bool) -> str:
    code = SIMULATE.format(block=block)
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_simulating_a_run_loads_no_duckdb_and_needs_no_pandas():
    # the store (DuckDB, pandas) is loaded only to store; pyarrow imports pandas by itself when
    # there is one, to convert to numpy, so pandas is kept out by making it unimportable
    assert "duckdb" not in _simulate(block=False).split()
    assert _simulate(block=True) == ""
