"""The run summary (summary.json, ``aqmlab run --json``), assembled from the metric catalogue:
each key's value is its catalogue rule's (``catalogue.Metric.compute``), written at the key's
place in its block, in catalogue order. What is declared here is only the layout of the blocks
the key patterns name: which hops, sub-queues, flows and probe streams a run has, and which
tables a block's rules read.

Adding a metric is one ``Metric`` in the catalogue: its key, definition, unit, window, rule and
catalog columns."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise, repeat
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from aqmlab.metrics.base import _has, _hop, hops
from aqmlab.metrics.catalogue import ABSENT, CATALOGUE, Metric
from aqmlab.metrics.flows import probe_flows, traffic_rows
from aqmlab.runtables import RunTables


@dataclass(frozen=True)
class At:
    """Where a summary value is computed: the run's tables, metadata and warm-up W, and within a
    block its hop (``links.HOP`` and its sub-queues) or its items (``flows[i]``: their rows of the
    ``flows`` table; ``probes[i]``: the streams' flow ids)."""

    tables: RunTables
    meta: dict
    warmup_s: float
    hop: str = ""
    items: Sequence = ()

    @property
    def hop_args(self) -> tuple[RunTables, dict, str, float]:
        """(tables, meta, hop, W): the arguments of a hop metric (``metrics.queue``)."""
        return self.tables, self.meta, self.hop, self.warmup_s

    @property
    def end_ns(self) -> int:
        """The run's end T_end."""
        return int(self.meta["duration_ns"])

    @property
    def queued(self) -> bool:
        """Whether the queue was recorded over time (the ``packets`` or the ``queue`` table): at
        recording level ``summary`` only whole-run totals exist."""
        return _has(self.tables, "packets") or _has(self.tables, "queue")


@dataclass(frozen=True)
class Keyed:
    """A block written once per name (``links.HOP``: each hop; ``queues.{l,c}``: each
    sub-queue), as a dict by name; ``enter`` gives the place of a name's values. Left out when
    there are no names, unless ``always``."""

    names: Callable[[At], Sequence[str]]
    enter: Callable[[At, str], At]
    always: bool = False

    def value(self, at: At, fields: list) -> Any:
        names = self.names(at)
        if not names and not self.always:
            return ABSENT
        return {n: _fill(fields, self.enter(at, n)) for n in names}


@dataclass(frozen=True)
class Rows:
    """A list block (``flows[i]``, ``probes[i]``): one dict per item of ``items``; each rule
    gives the column of its key over all items at once (``At.items``)."""

    items: Callable[[At], Sequence]

    def value(self, at: At, fields: list) -> list[dict]:
        items = self.items(at)
        if len(items) == 0:
            return []
        at = replace(at, items=items)
        names = [name for name, _ in fields]
        columns = [m.compute(at) for _, m in fields]
        return list(map(dict, map(zip, repeat(names), zip(*columns, strict=True))))  # a dict per item


@dataclass(frozen=True)
class Present:
    """A block written when the run has what it describes (``web``, ``webpage``)."""

    when: Callable[[At], bool]

    def value(self, at: At, fields: list) -> Any:
        return _fill(fields, at) if self.when(at) else ABSENT


def _hop_at(at: At, hop: str) -> At:
    """A hop's place. Without the ``packets`` and ``queue`` tables only whole-run totals exist, so
    the warm-up cannot be applied: the hop's block then describes the whole run."""
    return replace(at, hop=hop, warmup_s=at.warmup_s if at.queued else 0.0)


def _subqueue_at(at: At, name: str) -> At:
    """A sub-queue's place: its own ``packets`` rows of the hop (no table without them: the
    other levels keep no sub-queue)."""
    p = at.tables.get("packets")
    if p is None or "subqueue" not in p.column_names:
        return replace(at, tables=RunTables({}))
    p = _hop(at.tables, "packets", at.hop)
    return replace(at, tables=RunTables({"packets": p.filter(pc.equal(p.column("subqueue"), name))}))


def _has_rows(name: str) -> Callable[[At], bool]:
    return lambda at: _has(at.tables, name) and at.tables[name].num_rows > 0


BLOCKS = {
    "links.HOP": Keyed(lambda at: hops(at.tables, at.meta), _hop_at, always=True),
    "links.HOP.queues.{l,c}": Keyed(
        lambda at: (at.meta.get("subqueues") or {}).get(at.hop) or [], _subqueue_at
    ),
    "flows[i]": Rows(lambda at: traffic_rows(at.tables)),
    "probes[i]": Rows(lambda at: probe_flows(at.tables)),
    "web": Present(_has_rows("web")),
    "webpage": Present(_has_rows("webpage")),
}
"""The blocks the catalogue's key patterns name (every other key is a value of the summary's top
level), by their pattern."""

_VARIABLE = re.compile(r"^(HOP|DIR|REASON|\{.*\})$")


def _fixed(rest: str) -> str:
    """The fixed name a value or block is written at: the first part of its pattern below its
    block ("queue_delay_ms" of ``queue_delay_ms.{p50,...}``, "flows" of ``flows[i]``)."""
    name = rest.split(".")[0].removesuffix("[i]")
    if not name or _VARIABLE.match(name):
        raise ValueError(f"summary key pattern {rest!r}: it needs a fixed name below its block")
    return name


def _parent(pattern: str) -> str:
    """The block a key pattern (or a block's) is in: the longest block that prefixes it; "" for
    the top level."""
    return max((b for b in BLOCKS if pattern.startswith(f"{b}.")), key=len, default="")


def _layout(metrics: Sequence[Metric]) -> dict[str, list[tuple[str, Metric | str]]]:
    """Each block's fields in catalogue order, by block ("" the top level): (name, its metric, or
    the block written there). A block takes the place of its first key. ValueError for a name
    declared twice in a block, or a list block holding a block."""
    fields: dict[str, list[tuple[str, Metric | str]]] = {"": [], **{b: [] for b in BLOCKS}}
    for m in metrics:
        if m.compute is None:
            continue
        block = _parent(m.key)
        chain = [block]
        while chain[-1]:
            chain.append(_parent(chain[-1]))
        for inner, outer in pairwise(chain):
            entry = (_fixed(inner[len(outer) + 1 if outer else 0 :]), inner)
            if entry not in fields[outer]:
                fields[outer].append(entry)
        fields[block].append((_fixed(m.key[len(block) + 1 if block else 0 :]), m))
    for block, entries in fields.items():
        names = [name for name, _ in entries]
        twice = {n for n in names if names.count(n) > 1}
        if twice:
            raise ValueError(f"summary block {block or 'top level'!r}: {sorted(twice)} declared twice")
        if isinstance(BLOCKS.get(block), Rows) and any(isinstance(p, str) for _, p in entries):
            raise ValueError(f"list block {block!r} cannot hold a block")
    return fields


LAYOUT = _layout(CATALOGUE)
"""The summary's blocks and their fields, from the catalogue."""


def _fill(fields: list, at: At) -> dict:
    """A block's dict: each field's value at ``at``, in order (a key whose rule gives ABSENT, or a
    block left out, is not written)."""
    out: dict[str, Any] = {}
    for name, part in fields:
        v = part.compute(at) if isinstance(part, Metric) else BLOCKS[part].value(at, LAYOUT[part])
        if v is not ABSENT:
            out[name] = v
    return out


def summarize(tables: Mapping[str, pa.Table], meta: dict, warmup_s: float = 0.0) -> dict:
    """The run summary printed by ``aqmlab run --json`` and stored as ``summary.json``, of a
    run's ``RunTables`` (or of any mapping of its tables: then what is built for it is built
    for this call only): every key the catalogue declares, by its rule.

    JSON-serialisable (plain floats, ints, None). ``drops`` counts queue drops (overlimit,
    early, forced, head, fat_flow, ack_filter); random link loss is reported under ``drops_by_reason['loss']``.
    Probe streams (kind ``ping`` or present in ``probes``) are listed under ``probes``, not
    ``flows``.
    """
    return _fill(LAYOUT[""], At(RunTables.of(tables), meta, warmup_s))


def _block(pattern: str, tables: Mapping[str, pa.Table], meta: dict, warmup_s: float = 0.0) -> dict:
    """One block of the top level of ``summarize`` (``web``, ``webpage``), computed alone."""
    return _fill(LAYOUT[pattern], At(RunTables.of(tables), meta, warmup_s))


def web_summary(tables: Mapping[str, pa.Table], warmup_s: float = 0.0) -> dict:
    """The ``web`` block of ``summarize``: the PackMime-HTTP exchanges requested at or after the
    warm-up, those completed within the run, and the completed ones' response time in ms."""
    return _block("web", tables, {}, warmup_s)


def webpage_summary(tables: Mapping[str, pa.Table], warmup_s: float = 0.0) -> dict:
    """The ``webpage`` block of ``summarize``: the page fetches started at or after the warm-up,
    those completed and timed out, and the completed ones' fetch time in ms."""
    return _block("webpage", tables, {}, warmup_s)
