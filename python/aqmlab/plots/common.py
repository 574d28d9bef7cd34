"""What the figures read of a run: its tables and summary row, which hops and directions a figure
shows, the labels that tell runs and flows apart, and the per-run metrics and groups."""

from __future__ import annotations

import json
from collections.abc import Sequence

from aqmlab import api, columns, store
from aqmlab import metrics as M
from aqmlab.store import flatten_summary

NS = 1e9


class UnknownKind(ValueError):
    """An unknown plot kind (the message lists the kinds)."""


# --------------------------------------------------------------------------- helpers


def _need(run, table: str, fig: str):
    t = run.tables.get(table)
    if t is None:
        raise M.MissingTableError(
            f"run '{run.run_id}' has no '{table}' table ({missing_reason(run, table)}); figure '{fig}' needs it"
        )
    return t


def missing_reason(run, table: str) -> str:
    """Why a run has no ``table``, and how to record it."""
    level = (run.meta.get("record") or {}).get("level", "?")
    need = next(t["level"] for t in store.LAYOUT if t["name"] == table)
    low = level in api.LEVELS and api.LEVELS.index(level) < api.LEVELS.index(need)
    sweep_dir = getattr(run, "sweep_dir", None)
    if sweep_dir is None:
        return f"recording level '{level}'" + (f"; record.level = '{need}' records it" if low else "")
    steps = [f"record.level = '{need}' in its [set]"] if low else []
    steps += ["--keep-packets"] if table == "packets" else []
    why = f"sweep '{store.sweep_name(str(sweep_dir))}' did not store it"
    if not steps:
        return why
    return f"{why}: rerun it with {' and '.join(steps)} and a new --out (runs already complete are not recomputed)"


def _row(run) -> dict:
    return flatten_summary(run.summary or {}, run.meta)


def shown_dirs(runs: Sequence, direction: str | None = None) -> list[str]:
    """The directions figures of ``runs`` show: ``direction`` ('up', 'down', 'both'), by default
    those where the runs' load is (``columns.shown_dirs``)."""
    return columns.shown_dirs(direction, [_row(r) for r in runs])


def _link_dir(run) -> dict[str, str]:
    """Each link (hop) of the run -> its direction."""
    return store.link_dirs(run.tables)


def _hops(run, dirs: Sequence[str]) -> list[str]:
    """The run's hops in the directions ``dirs``, in path order."""
    ld = _link_dir(run)
    return [h for h in M.hops(run.tables, run.meta) if ld.get(h, h) in dirs]


def qdisc_label(run, dirs: Sequence[str] | None = None) -> str:
    """'down=codel up=pfifo' from the summary (or the scenario); every hop by name for a path
    of hops ('router=fq_codel modem=pfifo cmts=pfifo'); only the links of ``dirs`` when given."""
    parts = []
    links = (run.summary or {}).get("links") or {}
    ld = _link_dir(run)
    for d in links or ("down", "up"):
        if dirs is not None and ld.get(d, d) not in dirs:
            continue
        q = (links.get(d) or {}).get("qdisc") or M.qdisc_config(run.meta, d).get("name")
        if q:
            parts.append(f"{d}={q}")
    return " ".join(parts)


def _qdisc_short(run, dirs: Sequence[str] | None = None) -> str:
    """'codel' when every hop (of ``dirs``) runs the same discipline, else 'down=pie up=pfifo'."""
    qd = qdisc_label(run, dirs)
    names = {p.split("=", 1)[1] for p in qd.split()}
    return names.pop() if len(names) == 1 else qd


def _qdisc_dirs(runs: Sequence, dirs: Sequence[str]) -> list[str]:
    """The directions whose discipline a legend names: the shown ones, and any other whose
    discipline differs between ``runs`` (so that runs differing in it are told apart)."""
    varying = [d for d in columns.DIRECTIONS if len({qdisc_label(r, [d]) for r in runs}) > 1]
    return [d for d in columns.DIRECTIONS if d in dirs or d in varying]


def _params(run) -> dict:
    return {str(k): v for k, v in (run.meta.get("params") or {}).items()}


def _is_qdisc_key(key: str) -> bool:
    return key in ("qdisc", "up_qdisc") or key.endswith((".qdisc", ".qdisc.kind"))


def varying_params(runs: Sequence) -> list[str]:
    """The grid keys (meta['params']) whose values differ between ``runs``, in first-seen order;
    keys naming the discipline are left out (the qdisc is always shown)."""
    keys: dict[str, set] = {}
    for r in runs:
        for k in _params(r):
            keys.setdefault(k, set())
    for k in keys:
        keys[k] = {json.dumps(_params(r).get(k), sort_keys=True, default=str) for r in runs}
    return [k for k, vals in keys.items() if len(vals) > 1 and not _is_qdisc_key(k)]


def short_key(key: str, keys: Sequence[str] = ()) -> str:
    """'topology.down.rate' -> 'rate' (more segments when another key ends the same way)."""
    parts = key.removeprefix("params.").split(".")
    for n in range(1, len(parts) + 1):
        tail = ".".join(parts[-n:])
        if not any(o != key and (o == tail or o.endswith("." + tail)) for o in keys):
            return tail
    return key


def _fmt_value(v) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


SEED_DIGITS = 6
"""A run made alone is told from its twins by its seed when every seed has at most this many
digits (one a person typed, ``--seed 7``); a derived seed, 19 digits from a sweep, never."""


def replication(run) -> int | None:
    """The run's replication in its sweep (the stored ``rep``, from 0); None for a run made alone."""
    rep = getattr(run, "rep", None)
    return None if rep is None else int(rep)


def _sweep_of(run) -> str | None:
    sweep_dir = getattr(run, "sweep_dir", None)
    return None if sweep_dir is None else store.sweep_name(str(sweep_dir))


def point_labels(runs: Sequence, dirs: Sequence[str] | None = None) -> list[str]:
    """What tells ``runs`` apart but their replication: the discipline (of the directions
    ``dirs`` and any whose discipline differs, ``_qdisc_dirs``; all when None), then the grid
    values that differ between the runs ('pie, rate=10Mbps'), then the scenario and the sweep
    only where they tell runs apart. Runs with the same label differ only by their seed: they are
    replications of one grid point (``run_groups``)."""
    runs = list(runs)
    vary = varying_params(runs)
    qdirs = None if dirs is None else _qdisc_dirs(runs, dirs)
    labels = []
    for r in runs:
        parts = [_qdisc_short(r, qdirs)]
        parts += [f"{short_key(k, vary)}={_fmt_value(_params(r).get(k, '-'))}" for k in vary]
        labels.append(", ".join(parts))
    for where in (
        lambda r: (r.meta.get("scenario") or {}).get("name") or r.meta.get("name") or "?",
        lambda r: _sweep_of(r) or "single run",
    ):
        if len(set(labels)) < len(labels):
            names = [where(r) for r in runs]
            if len(set(names)) > 1:
                labels = [f"{n}: {lab}" for n, lab in zip(names, labels)]
    return labels


def run_groups(runs: Sequence, dirs: Sequence[str] | None = None) -> dict[str, list[int]]:
    """The runs that differ only by replication: their ``point_labels`` label -> their indices
    in ``runs``, in the order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i, lab in enumerate(point_labels(runs, dirs)):
        groups.setdefault(lab, []).append(i)
    return groups


def run_labels(runs: Sequence, dirs: Sequence[str] | None = None) -> list[str]:
    """Readable legend labels for ``runs``, one each: ``point_labels``, then, where they tell runs
    apart, the replication of a sweep's run ('codel, rep 2'), the seed of a run made alone when
    it is short (``SEED_DIGITS``), and last the end of the run id. Never a sweep's derived seed."""
    runs = list(runs)
    labels = point_labels(runs, dirs)
    if len(set(labels)) < len(labels):
        reps = [replication(r) for r in runs]
        labels = [lab if n is None else f"{lab}, rep {n}" for lab, n in zip(labels, reps)]
    if len(set(labels)) < len(labels):
        seeds = [None if replication(r) is not None else r.meta.get("seed") for r in runs]
        known = [str(s) for s in seeds if s is not None]
        if len(set(known)) > 1 and all(len(s.lstrip("-")) <= SEED_DIGITS for s in known):
            labels = [lab if s is None else f"{lab}, seed {s}" for lab, s in zip(labels, seeds)]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} [{r.run_id[-8:]}]" for lab, r in zip(labels, runs)]
    return labels


def flow_label(info: dict, flow: int, group_sizes: dict | None = None) -> str:
    """A flow by what it is: its label (the scenario's ``label``, else kind and group), its
    congestion control (unless the label names it) and direction, and its place in its group
    ('bulk cubic down', 'tcp1 #2 ledbat down', 'bbr down')."""
    lab = name = info.get("label") or info.get("kind") or "flow"
    grp = info.get("group")
    if group_sizes and grp is not None and group_sizes.get(grp, 1) > 1:
        lab += f" #{info.get('_rank', flow)}"
    extra = [x for x in (info.get("cc"), info.get("direction")) if x and x != name]
    return " ".join([lab, *extra])


# Line styles: 10 colours x 4 dash patterns (x 5 markers) before anything repeats.


def metric_value(run, name: str) -> float | None:
    """A per-run scalar: a flattened summary column (store.RUN_COLUMNS, e.g.
    ``queue_delay_p95_ms``, ``utilization``, ``goodput_mbps_total``, ``probe_induced_mean_ms``)
    or ``enorm`` (E[Q]/Q_max of the down bottleneck; ``up_enorm`` the up one's), ``tcp_share``
    (share of delivered bytes of kind tcp)."""
    if name.removeprefix("up_") == "enorm":
        d = "up" if name.startswith("up_") else "down"
        return M.normalized_mean_backlog(
            run.tables, run.meta, (run.summary.get("bottleneck") or {}).get(d, d)
        )
    if name == "tcp_share":
        return M.class_share(run.tables, "kind", "tcp")
    row = _row(run)
    if name not in row:
        raise KeyError(
            f"unknown metric '{name}'; known: {', '.join(sorted(row))}, enorm, up_enorm, tcp_share"
        )
    v = row[name]
    return None if v is None else float(v)


def _metric_columns(metric: str | None, default: str, dirs: Sequence[str]) -> list[str]:
    """The columns a figure draws: ``metric`` as given, or the link metric ``default`` for each
    shown direction."""
    return [metric] if metric is not None else [columns.in_direction(default, d) for d in dirs]


def _metric_label(cols: Sequence[str], dirs: Sequence[str]) -> str:
    return columns.label(cols[0]) if len(cols) == 1 else columns.label_dirs(cols[0], dirs)


def group_value(run, key: str, dirs: Sequence[str] | None = None) -> str:
    """A run's group for ``key``: meta['params'][key], else for ``qdisc`` the discipline of the
    directions ``dirs`` (all when None; ``_qdisc_short``), else a flattened summary column
    (``up_qdisc``, ``seed``...), else the scenario's top-level value."""
    params = run.meta.get("params") or {}
    if key in params:
        return str(params[key])
    if key == "qdisc":
        return _qdisc_short(run, dirs)
    row = _row(run)
    if row.get(key) is not None:
        return str(row[key])
    v = (run.meta.get("scenario") or {}).get(key)
    return str(v) if v is not None else "?"


# --------------------------------------------------------------------------- time series


def _warmup(run, warmup_s: float | None) -> float:
    """The warm-up a figure of ``run`` skips: ``warmup_s``, else the one its summary was made with
    (so that a figure and the run's table cover the same window)."""
    if warmup_s is not None:
        return warmup_s
    return float((getattr(run, "summary", None) or {}).get("warmup_s") or 0.0)


def _probe_names(run) -> dict[int, str]:
    """Probe flow id -> a readable name, empty when the run has one probe stream."""
    tabs = run.tables
    ids = list(M.probe_flows(tabs))
    if len(ids) <= 1:
        return {f: "" for f in ids}
    info: dict[int, dict] = {}
    if tabs.get("flows") is not None:
        info = {int(r["flow"]): r for r in tabs["flows"].to_pylist()}
    names = {f: (info.get(f) or {}).get("label") or "probe" for f in ids}
    if len(set(names.values())) < len(ids):
        ranks: dict[str, int] = {}
        for f in ids:
            ranks[names[f]] = ranks.get(names[f], 0) + 1
            names[f] = f"{names[f]} #{ranks[names[f]]}"
    return names
