"""Queue disciplines written in Python: `qdisc = { kind = "python", class = "module:Class", ... }`.

The contract (the tutorial is docs/python-qdisc.md; the adapter is crates/aqmlab-py/src/pyqdisc.rs):

- The class is built as ``Class(link, **params)``: ``link`` is a :class:`Link` (the hop's rate,
  MTU and its ``limit`` key, if the scenario gives one); ``params`` are the other keys of the
  scenario's qdisc table. Keyword defaults of ``__init__`` are written out in the resolved
  scenario (``aqmlab validate``), like a built-in discipline's.
- ``enqueue(now, pkt, queue)`` returns one of :data:`ENQUEUE_VERDICTS`: "enqueue", "mark" (set CE
  and enqueue), "drop" (an early, AQM drop) or "overlimit" (the buffer is full: a tail drop).
- ``dequeue(now, pkt, queue)`` gets the head packet, already taken out of the queue, and returns
  one of :data:`DEQUEUE_VERDICTS`: "send", "mark" (set CE and send) or "drop" (a head drop; it is
  then called again with the next head). It is also called with ``pkt=None`` when the queue is
  empty; its return value is then ignored.
- Optional: ``timer(now, queue)``, called at the time ``next_timer()`` returns (ns, or None for
  no timer); ``next_timer`` is asked after every call.
- ``now`` and ``pkt.enqueued_at`` are integer ns; ``pkt`` has ``flow``, ``dir``, ``size`` (IP
  bytes), ``dscp``, ``ecn`` ("not_ect", "ect1", "ect0", "ce") and ``ecn_capable``; ``queue`` has
  ``packets`` and ``bytes`` (before the arrival at enqueue, after taking the head out at dequeue).

The packets themselves stay in the simulator's FIFO, and every drop and mark is counted as a
built-in discipline's. Mistakes that can be seen before a run (a class that does not import, a
missing method, an unknown parameter, a parameter the class rejects with ValueError or TypeError)
raise ScenarioError naming the key; an exception or a verdict outside the lists during the run
raises :class:`QdiscError` with the simulated time and the user's traceback.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import json
import os
import sys
import traceback
from dataclasses import dataclass

from aqmlab import _core
from aqmlab.scenario import ScenarioError

KIND = "python"
ENQUEUE_VERDICTS = ("enqueue", "mark", "drop", "overlimit")
DEQUEUE_VERDICTS = ("send", "mark", "drop")
REQUIRED = ("enqueue", "dequeue")
"""The methods every class must have (``timer`` with ``next_timer`` are optional)."""


def time_ns(text: str | int) -> int:
    """A duration as scenario files write it ("5ms", "1.5s"; an integer is ns) in integer ns."""
    return text if isinstance(text, int) else _core.parse_time(str(text))


def limit(text: str) -> tuple[str, int]:
    """A buffer limit as scenario files write it ("1000p", "64kB") as ("p", packets) or ("B", bytes)."""
    return _core.parse_limit(str(text))


def over_limit(lim: tuple[str, int], packets: int, bytes_: int) -> bool:
    """Whether a queue of ``packets`` / ``bytes_`` exceeds ``lim`` (counted in its own unit)."""
    unit, n = lim
    return (packets if unit == "p" else bytes_) > n


@dataclass(frozen=True)
class Link:
    """What a discipline may know about the hop it serves when it is built."""

    rate_bps: int
    """The hop's rate at time 0."""
    mtu: int
    """The largest packet on the path (IP bytes)."""
    limit: tuple[str, int] | None
    """The hop's ``limit`` key as ("p", packets) or ("B", bytes); None when the scenario has none."""

    def limit_or(self, default: str) -> tuple[str, int]:
        """The hop's limit, else ``default`` ("1000p", "64kB")."""
        return self.limit or limit(default)


def is_class_path(text: str) -> bool:
    """Whether ``text`` names a class as ``module:Class`` (what `--qdisc` accepts besides names)."""
    return ":" in text


def qdisc_table(class_path: str) -> dict:
    """The scenario's qdisc table for a class path given on the command line."""
    return {"kind": KIND, "class": class_path}


def _import_dirs() -> None:
    """The current directory is importable, as with ``python -m``: the `aqmlab` script itself
    does not put it on sys.path, and a sweep worker may not either (see AQMLAB_PYTHONPATH)."""
    for d in [os.getcwd(), *filter(None, os.environ.get("AQMLAB_PYTHONPATH", "").split(os.pathsep))]:
        if d not in sys.path:
            sys.path.append(d)


def load_class(path: object, key: str = "qdisc.class") -> type:
    """The class named by ``module:Class``, checked for the methods of the contract."""
    if not isinstance(path, str) or path.count(":") != 1 or not all(path.split(":")):
        raise ScenarioError(f"{key}: {path!r} is not allowed; allowed: a class path module:Class, "
                            f"e.g. \"aqmlab.examples.codel:Codel\"")  # fmt: skip
    module, name = path.split(":")
    _import_dirs()
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and module.startswith(e.name):
            raise ScenarioError(
                f"{key}: {path!r}: no module named {e.name!r} (looked in the current directory and sys.path)"
            ) from None
        raise ScenarioError(f"{key}: {path!r}: importing it failed: {_last_line(e)}") from None
    except Exception as e:  # noqa: BLE001 - any error of the user's module is reported, with its key
        raise ScenarioError(f"{key}: {path!r}: importing it failed: {_last_line(e)}") from None
    cls = getattr(mod, name, None)
    if not inspect.isclass(cls):
        raise ScenarioError(f"{key}: {path!r}: module {module!r} has no class {name!r}")
    missing = [m for m in REQUIRED if not callable(getattr(cls, m, None))]
    if missing:
        raise ScenarioError(f"{key}: {path!r} has no method {', '.join(missing)}; "
                            f"a discipline needs: {', '.join(REQUIRED)}")  # fmt: skip
    if callable(getattr(cls, "timer", None)) != callable(getattr(cls, "next_timer", None)):
        raise ScenarioError(f"{key}: {path!r} must define timer and next_timer together")
    return cls


def _last_line(e: BaseException) -> str:
    return "".join(traceback.format_exception_only(e)).strip().splitlines()[-1]


def _params_of(cls: type) -> tuple[dict, bool]:
    """The keyword parameters of ``cls(link, ...)`` with their defaults (``inspect.Parameter.empty``
    when required), and whether it takes any keyword (``**kwargs``)."""
    sig = inspect.signature(cls)
    ps = list(sig.parameters.values())[1:]  # the first is the link
    named = {p.name: p.default for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return named, any(p.kind == p.VAR_KEYWORD for p in ps)


def build(params_json: str, rate_bps: int, mtu: int, limit: str | None, key: str) -> tuple[object, str, str]:
    """Builds the discipline of one hop (called by the core): (instance, resolved parameters as
    JSON, class path)."""
    params = json.loads(params_json)
    path = params.pop("class", None)
    if path is None:
        raise ScenarioError(f"{key}.class: missing; allowed: a class path module:Class")
    cls = load_class(path, f"{key}.class")
    named, any_kw = _params_of(cls)
    for k in params:
        if k not in named and not any_kw:
            near = difflib.get_close_matches(k, list(named), n=1)
            hint = f" (did you mean `{near[0]}`?)" if near else ""
            raise ScenarioError(f"{key}.{k}: unknown parameter of {path}{hint}; "
                                f"allowed: {', '.join(named) or 'none'}")  # fmt: skip
    missing = [k for k, d in named.items() if d is inspect.Parameter.empty and k not in params]
    if missing:
        raise ScenarioError(f"{key}.{missing[0]}: missing; {path} requires it")
    link = Link(rate_bps, mtu, _core.parse_limit(limit) if limit else None)
    try:
        obj = cls(link, **params)
    except (ValueError, TypeError) as e:
        raise ScenarioError(f"{key}: {path} rejected its parameters {params}: {e}") from None
    except Exception as e:  # noqa: BLE001 - a defect of the user's class, shown with its traceback
        raise ScenarioError(
            f"{key}: building {path} failed:\n{''.join(traceback.format_exception(e))}"
        ) from None
    resolved = {
        "class": path,
        **{k: d for k, d in named.items() if d is not inspect.Parameter.empty},
        **params,
    }
    try:
        text = json.dumps(resolved)
    except TypeError:
        text = json.dumps({**resolved, **{k: repr(v) for k, v in resolved.items() if k not in params}})
    return obj, text, path


class QdiscError(Exception):
    """A discipline written in Python failed during a run: it raised, or returned a verdict that is
    not allowed. The run stopped at that simulated time and was not stored."""

    def __init__(self, message: str, time_ns: int, user_traceback: str):
        super().__init__(message)
        self.time_ns = time_ns
        self.user_traceback = user_traceback


def failure(err: BaseException, raised: bool, now: int, method: str, class_path: str, key: str) -> QdiscError:
    """The QdiscError for a failure of the discipline at ``key`` (called by the core)."""
    where = f"{key} ({class_path}.{method}) at simulated time {now / 1e9:.9f} s (t = {now} ns)"
    if raised:
        tb = "".join(traceback.format_exception(err))
        return QdiscError(f"{where} raised {_last_line(err)}", now, tb)
    return QdiscError(f"{where}: {err}", now, "")
