"""Invariants the sweep engine checks for every sweep, whatever the chapter.

``experiments.sweep`` calls :func:`check` on the results it returns; nothing in a chapter
asks for it. Two invariants:

* **Distinct draws.** Random streams give distinct draws: results that differ only in a
  seed-like key (:data:`SEED_KEYS`, integer values: ``seed``, ``useed``, ``draw``,
  ``stream``, ``block``, ``start``, ...) must differ. Two comparisons, both by a hash of
  the values (no copy is kept): tasks that are equal except in one seed-like key must not
  return identical results (the seed-like keys of the rows left out), and inside one
  task's result, rows that carry distinct values of a seed-like column must not be
  identical in every other column. Only results holding a float that carries its draw are
  compared (``_bearing``: above the rounding floor ``TINY`` and not a round number), so an
  identity's residual of 1.1e-16 for every draw, or a count, is no collapse. A collapse (two
  distinct seeds, identical outputs: every start drawn from one stream, a seed index
  dropped from a stream name) is recorded with an example.
* **The declared grid is the grid that ran.** Every task appears once in the declared list
  (two tasks with one cache key would share one result) and every task kept in the table
  contributed at least one row (a task returning no rows drops its grid point from the
  table silently). A budget's cut is not a mismatch: it is recorded as ``(kept, planned)``.

Each sweep's record (:func:`records`, also ``df.attrs["invariants"]``) holds the counts it
compared. A violation surfaces on the chapter's ledger as a FAIL of an automatic identity
(``<PREFIX>.engine.distinct_draws.<sweep>`` or ``<PREFIX>.engine.grid.<sweep>``, a
``Ledger.guard``), so ``chapter.finish`` raises; outside a chapter run it is printed once.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from typing import Any

#: task keys and row columns that name a random stream (integer values only): results that
#: differ only in one of them must differ
SEED_KEYS = ("seed", "seeds", "useed", "draw", "stream", "block", "start", "rep", "replicate")

_RECORDS: dict[str, dict] = {}
_LOCK = threading.Lock()


def is_seed_key(name: Any) -> bool:
    """A task key or column that names a random stream: one of :data:`SEED_KEYS`, or a name
    ending in ``_seed``."""
    return isinstance(name, str) and (name in SEED_KEYS or name.endswith("_seed"))


def _is_int(v: Any) -> bool:
    return type(v).__name__ in ("int", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                "uint32", "uint64") and not isinstance(v, bool)


#: the engine's canonical task key and payload serialiser, handed in by ``dltheory.experiments``
#: when it is imported (:func:`use_engine`): this module imports no engine, chapter or ledger
_ENGINE: dict[str, Any] = {}


def use_engine(canon: Any, dump: Any, payload_error: type) -> None:
    """Hand in the engine's ``canon(task) -> str`` and ``dump(obj) -> bytes`` (raising
    ``payload_error`` on what it cannot serialise); ``dltheory.experiments`` calls it."""
    _ENGINE.update(canon=canon, dump=dump, payload_error=payload_error)


def _canon(task: Any) -> str:
    if "canon" not in _ENGINE:
        raise RuntimeError("dltheory.invariants needs the engine: import dltheory.experiments")
    return _ENGINE["canon"](task)


def _digest(obj: Any) -> str:
    """A hash of a value's data (exact floats; arrays by their bytes)."""
    try:
        data = _ENGINE["dump"](obj)
    except (_ENGINE.get("payload_error", TypeError), KeyError):
        data = repr(obj).encode()
    return hashlib.sha256(data).hexdigest()[:24]


def _is_frame(x: Any) -> bool:
    return hasattr(x, "columns") and hasattr(x, "iloc")


#: a float under this in magnitude sits at the rounding floor (an identity's residual,
#: 1.1e-16 for every draw) and carries no trace of its draw
TINY = 1e-12


def _bearing(a: Any) -> Any:
    """Which floats of ``a`` (array-like) carry their draw: finite, above the rounding floor
    (``TINY``) and not a round number (a multiple of 1/1024: a count, a rate of 1.0)."""
    import numpy as np

    a = np.asarray(a, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isfinite(a) & (np.abs(a) >= TINY) & (np.mod(a * 1024.0, 1.0) != 0.0)


def _floor(obj: Any) -> tuple[Any, int]:
    """``obj`` with its floats under ``TINY`` set to 0, and how many of its floats carry
    their draw (``_bearing``): results with none (identities at the rounding floor, counts)
    are not compared."""
    import numpy as np

    if _is_frame(obj):
        out, n = obj.copy(), 0
        for c in obj.columns:
            col = obj[c]
            if getattr(col.dtype, "kind", "") == "f":
                v = col.to_numpy(dtype=float)
                out[c] = np.where(np.abs(v) < TINY, 0.0, v)
                n += int(_bearing(v).sum())
        return out, n
    if isinstance(obj, dict):
        items = [(k, _floor(v)) for k, v in obj.items()]
        return {k: v for k, (v, _) in items}, sum(n for _, (_, n) in items)
    if isinstance(obj, (list, tuple)):
        items = [_floor(v) for v in obj]
        return type(obj)(v for v, _ in items), sum(n for _, n in items)
    if isinstance(obj, np.ndarray) and obj.dtype.kind == "f":
        return np.where(np.abs(obj) < TINY, 0.0, obj).astype(obj.dtype), int(_bearing(obj).sum())
    if isinstance(obj, (float, np.floating)):
        return (type(obj)(0.0) if abs(obj) < TINY else obj), int(_bearing(obj))
    return obj, 0


def _strip(result: Any) -> Any:
    """A task's result without its seed-like keys (rows) or columns (a DataFrame)."""
    if _is_frame(result):
        return result.drop(columns=[c for c in result.columns if is_seed_key(c)])
    if isinstance(result, dict):
        return {k: v for k, v in result.items() if not is_seed_key(k)}
    if isinstance(result, (list, tuple)):
        return [_strip(r) for r in result]
    return result


def _row_collapses(result: Any) -> list[str]:
    """Inside one result: rows with distinct values of a seed-like column and identical
    values in every other column (one example per column)."""
    if _is_frame(result):
        cols = [c for c in result.columns if is_seed_key(c)]
        if not cols or len(result) < 2:
            return []
        import pandas as pd

        out = []
        for c in cols:
            if result[c].dtype.kind not in "iu":
                continue
            rest, _ = _floor(result.drop(columns=[c]))
            h = pd.util.hash_pandas_object(rest, index=False)
            floats = [d for d in result.columns if d != c
                      and getattr(result[d].dtype, "kind", "") == "f"]
            bearing = (_bearing(result[floats].to_numpy(dtype=float)).any(axis=1) if floats
                       else [False] * len(result))
            seen: dict[int, Any] = {}
            for hv, s, b in zip(h.to_numpy(), result[c].to_numpy(), bearing, strict=True):
                if not b:
                    continue
                if hv in seen and seen[hv] != s:
                    out.append(f"rows with {c} = {seen[hv]} and {c} = {s} are identical")
                    break
                seen.setdefault(hv, s)
        return out
    if not isinstance(result, list) or len(result) < 2:
        return []
    out = []
    cols = {k for r in result if isinstance(r, dict) for k in r if is_seed_key(k)}
    for c in sorted(cols):
        seen = {}
        for r in result:
            if not isinstance(r, dict) or not _is_int(r.get(c)):
                continue
            rest, n = _floor({k: v for k, v in r.items() if k != c})
            if not n:
                continue
            hv = _digest(rest)
            if hv in seen and seen[hv] != r[c]:
                out.append(f"rows with {c} = {seen[hv]} and {c} = {r[c]} are identical")
                break
            seen.setdefault(hv, r[c])
    return out


def distinct_draws(tasks: list[dict], results: dict[int, Any]) -> dict:
    """The distinct-draws record of one sweep: ``groups`` (sets of tasks that differ only
    in a seed-like key, compared), ``rows`` (results with a seed-like column, compared row
    by row) and ``collapsed`` (examples, empty when every draw is distinct)."""
    collapsed: list[str] = []
    groups = 0
    hashes: dict[int, str] = {}
    keys = sorted({k for t in tasks for k in t if is_seed_key(k)})
    for k in keys:
        by_rest: dict[str, list[int]] = {}
        for i in results:
            t = tasks[i]
            if k in t and _is_int(t[k]):
                by_rest.setdefault(_canon({a: v for a, v in t.items() if a != k}), []).append(i)
        for idx in by_rest.values():
            if len({tasks[i][k] for i in idx}) < 2:
                continue
            groups += 1
            seen: dict[str, int] = {}
            for i in idx:
                if i not in hashes:
                    rest, n = _floor(_strip(results[i]))
                    hashes[i] = _digest(rest) if n else ""
                if not hashes[i]:           # nothing in it carries its draw
                    continue
                j = seen.setdefault(hashes[i], i)
                if tasks[j][k] != tasks[i][k]:
                    collapsed.append(f"tasks {tasks[j]} and {tasks[i]} returned identical "
                                     "results")
                    break
    rows = 0
    for i, r in results.items():
        found = _row_collapses(r)
        rows += bool(_is_frame(r) and any(is_seed_key(c) for c in r.columns)
                     or isinstance(r, list) and any(isinstance(x, dict) and
                                                    any(is_seed_key(c) for c in x) for x in r))
        collapsed += [f"task {tasks[i]}: {f}" for f in found]
    return {"groups": groups, "rows": rows, "collapsed": collapsed[:5],
            "n_collapsed": len(collapsed)}


def grid(tasks: list[dict], kept: dict[int, Any]) -> dict:
    """The grid record of one sweep: ``planned`` tasks, ``distinct`` task keys, ``kept``
    tasks (a budget may cut), ``empty`` (kept tasks that returned no row) and
    ``duplicates`` (declared more than once); ``problems`` names each mismatch."""
    canon = [_canon(t) for t in tasks]
    dups = sorted({c for c in canon if canon.count(c) > 1}) if len(set(canon)) < len(canon) else []

    def n_rows(r: Any) -> int:
        if _is_frame(r):
            return len(r)
        return 1 if isinstance(r, dict) else len(r) if isinstance(r, (list, tuple)) else 1

    empty = [tasks[i] for i in sorted(kept) if n_rows(kept[i]) == 0]
    problems = [f"task {d} declared more than once" for d in dups[:3]]
    problems += [f"task {t} returned no row" for t in empty[:3]]
    return {"planned": len(tasks), "distinct": len(set(canon)), "kept": len(kept),
            "empty": len(empty), "duplicates": len(dups), "problems": problems}


def check(name: str, tasks: list[dict], results: dict[int, Any], kept: dict[int, Any]) -> dict:
    """Both invariants of one sweep; the record is stored (:func:`records`) and each
    violation recorded on the chapter's ledger (:func:`_surface`)."""
    import time

    t0 = time.perf_counter()
    rec = {"draws": distinct_draws(tasks, results), "grid": grid(tasks, kept)}
    rec["seconds"] = round(time.perf_counter() - t0, 4)      # what the check cost
    with _LOCK:
        _RECORDS[name] = rec
    if rec["draws"]["collapsed"]:
        _surface(name, "distinct_draws",
                 f"sweep {name}: distinct seeds give distinct draws",
                 f"{rec['draws']['n_collapsed']} collapse(s): "
                 + "; ".join(rec["draws"]["collapsed"]))
    if rec["grid"]["problems"]:
        _surface(name, "grid", f"sweep {name}: the declared grid is the grid that ran",
                 "; ".join(rec["grid"]["problems"]))
    return rec


def records() -> dict[str, dict]:
    """The invariants' record of every sweep run in this process, by sweep name."""
    with _LOCK:
        return {k: dict(v) for k, v in _RECORDS.items()}


def reset() -> None:
    with _LOCK:
        _RECORDS.clear()


_SINK: list[Any] = [None]   # set by chapter.start: records a failed invariant on its ledger


def report_to(sink: Any) -> None:
    """Where a failed invariant goes: ``sink(name, what, statement, detail) -> bool``, set by
    ``chapter.start`` for the chapter run in this process; ``None``, or a sink that returns
    ``False`` (its run has ended), leaves one line on stderr.
    The engine never imports the chapter or the ledger; the chapter hands its sink in."""
    _SINK[0] = sink


def _surface(name: str, what: str, statement: str, detail: str) -> None:
    """A failed invariant to the sink ``chapter.start`` handed in (a FAIL identity on its
    ledger, once per sweep and invariant), else one line on stderr."""
    if _SINK[0] is not None and _SINK[0](name, what, statement, detail):
        return
    print(f"[invariants] {statement}: FAILS ({detail})", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- arguments
def _recording(config: Any) -> tuple[Any, set[str]]:
    """A copy of a frozen dataclass ``config`` that records the names of the fields read
    on it (also inside its own methods and properties)."""
    import dataclasses

    names = {f.name for f in dataclasses.fields(config)}
    read: set[str] = set()
    base = type(config)

    def __getattribute__(self, attr):
        if attr in names:
            read.add(attr)
        return base.__getattribute__(self, attr)

    cls = type(base.__name__, (base,), {"__getattribute__": __getattribute__,
                                        "__module__": base.__module__})
    copy = object.__new__(cls)
    for n in names:
        object.__setattr__(copy, n, getattr(config, n))
    return copy, read


def _moved(v: Any, alternatives: dict, name: str) -> tuple[bool, Any]:
    """A value other than ``v`` for argument ``name``: ``alternatives[name]`` if given,
    else an int + 1, a float * 1.25 (0.1 for 0), a bool negated; ``(False, None)`` when
    none is known (a string, a tuple)."""
    if name in alternatives:
        return True, alternatives[name]
    if isinstance(v, bool):
        return True, not v
    if _is_int(v):
        return True, type(v)(v + 1)
    if isinstance(v, float):
        return True, v * 1.25 if v else 0.1
    return False, None


def argument_effects(fn: Any, config: Any, task: dict, *, alternatives: dict | None = None,
                     config_fields: Any = "read", skip: Any = ()) -> dict:
    """Whether each declared argument of a sweep task changes its output: every key of
    ``task`` (the seed and stream index included) and the Config fields ``fn`` reads
    (``config_fields="read"``: recorded while ``fn(config, task)`` runs, inside the
    Config's own methods too; or an explicit list). Each is moved alone (``_moved``;
    ``alternatives`` gives a value for a string, a tuple or any other), ``fn`` is run
    again and its output compared by hash. Returns ``{"moved": [...], "ignored": [...],
    "unvaried": [...]}``: ``ignored`` names the arguments whose change left the output
    identical (an ignored knob: momentum never used, a seed index dropped from a stream
    name), ``unvaried`` those without a known other value (or in ``skip``)."""
    import dataclasses

    alternatives = dict(alternatives or {})
    if config_fields == "read":
        rec, read = _recording(config)
        base = _digest(fn(rec, dict(task)))
        fields = sorted(read)
    else:
        base = _digest(fn(config, dict(task)))
        fields = list(config_fields)
    out: dict[str, list[str]] = {"moved": [], "ignored": [], "unvaried": []}
    for where, name, value in ([("task", k, v) for k, v in task.items()]
                               + [("config", f, getattr(config, f)) for f in fields]):
        label = name if where == "task" else f"config.{name}"
        ok, new = _moved(value, alternatives, label if label in alternatives else name)
        if not ok or name in skip or label in skip:
            out["unvaried"].append(label)
            continue
        if where == "task":
            result = fn(config, {**task, name: new})
        else:
            result = fn(dataclasses.replace(config, **{name: new}), dict(task))
        out["moved" if _digest(result) != base else "ignored"].append(label)
    return out
