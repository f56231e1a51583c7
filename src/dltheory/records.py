"""Reading a JSON record that may be damaged or hostile: a bounded read and a shape check.

The pages (reproduction, calibration) show what ledgers, calibration records, the
mutation-score record and the times record hold. Any of them may be cut, hand-edited or
planted, so every reader goes through :func:`read` (a size cap; truncated, non-UTF-8,
non-JSON and too deeply nested text are one named problem, never an exception) and checks
the data with :func:`problem` against a declared shape before it touches a field::

    LEDGER = {"chapter": str, "claims": [{"id": str, "runs": INT}], "note?": Maybe(str)}
    data, why = records.read(path)
    why = why or records.problem(data, LEDGER)     # "claims[3].runs: an integer, got 'abc'"

Shapes: a type (``str``, ``dict``, ``list``; ``bool`` never passes for a number), ``NUMBER``
(a finite int or float), ``REAL`` (NaN and infinities too), ``INT``, ``ANY``, ``Maybe(shape)`` (``None`` too), ``OneOf(a, b)``,
``[shape]`` (a list of them), ``Each(shape)`` (an object whose every value has the shape,
keys text) and ``{key: shape}`` (an object with those keys; ``"key?"`` optional, other keys
allowed). Lists and objects longer than ``MAX_ITEMS`` and nesting deeper than ``MAX_DEPTH``
are problems too.

This module imports nothing from ``dltheory``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["read", "problem", "NUMBER", "REAL", "INT", "ANY", "Maybe", "OneOf", "Each",
           "MAX_BYTES", "MAX_ITEMS", "MAX_DEPTH"]

MAX_BYTES = 32 * 2**20     # the largest committed record is ~0.3 MB
MAX_ITEMS = 100_000        # entries of one list or object
MAX_DEPTH = 64             # records nest a few levels; json.loads recurses per level


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


NUMBER = _Marker("a finite number")
REAL = _Marker("a number")          # NaN and infinities too (json writes them)
INT = _Marker("an integer")
ANY = _Marker("anything")


@dataclass(frozen=True)
class Maybe:
    shape: Any


@dataclass(frozen=True)
class OneOf:
    """A value that matches any one of ``shapes`` (the first that fits)."""

    shapes: tuple

    def __init__(self, *shapes):
        object.__setattr__(self, "shapes", shapes)


@dataclass(frozen=True)
class Each:
    shape: Any


def read(path: str | Path, max_bytes: int | None = None) -> tuple[Any, str | None]:
    """``(data, None)`` for a readable JSON file, else ``(None, why)``: missing,
    unreadable, larger than ``max_bytes`` (default ``MAX_BYTES``), not UTF-8, not JSON
    (cut), or nested deeper than ``MAX_DEPTH`` (``json.loads`` would recurse to a
    ``RecursionError``)."""
    p = Path(path)
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    try:
        size = p.stat().st_size
        if size > max_bytes:
            return None, f"too large ({size} bytes; a record is at most {max_bytes})"
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None, "missing"
    except (OSError, UnicodeDecodeError) as err:
        return None, f"unreadable ({type(err).__name__})"
    depth = _max_depth(text)
    if depth > MAX_DEPTH:
        return None, f"nested {depth} levels deep (at most {MAX_DEPTH})"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError) as err:   # JSONDecodeError is a ValueError
        return None, f"unreadable or truncated JSON ({type(err).__name__})"


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)   # a JSON string, escapes included
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _max_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` outside JSON strings (strings dropped, then a
    running sum over the brackets: linear, and fast on a file of millions of them)."""
    import numpy as np

    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).encode()
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _scalar(value: Any, shape: Any) -> str | None:
    """The problem of a value against a type or marker shape (``None`` when it fits)."""
    if shape is ANY:
        return None
    if shape is NUMBER or shape is INT or shape is REAL:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (
            shape is REAL or (math.isfinite(value)
                              and (shape is NUMBER or float(value).is_integer())))
        return None if ok else f"{shape.name}, got {_show(value)}"
    if isinstance(shape, type):
        ok = isinstance(value, shape) and not (isinstance(value, bool) and shape is not bool)
        names = {str: "text", dict: "an object", list: "a list", bool: "true or false"}
        return None if ok else f"{names.get(shape, shape.__name__)}, got {_show(value)}"
    raise TypeError(f"not a shape: {shape!r}")


def problem(value: Any, shape: Any, where: str = "", depth: int = 0) -> str | None:
    """The first way ``value`` departs from ``shape`` (see the module docstring), as
    ``"where: what is wanted, got what"``, or ``None`` when it fits."""
    at = where or "the record"
    if depth > MAX_DEPTH:
        return f"{at}: nested deeper than {MAX_DEPTH} levels"
    if isinstance(shape, Maybe):
        return None if value is None else problem(value, shape.shape, where, depth)
    if isinstance(shape, OneOf):
        found = [problem(value, s, where, depth) for s in shape.shapes]
        return None if None in found else " or ".join(found)
    if isinstance(shape, list):
        return _list_problem(value, shape[0], where, depth)
    if isinstance(shape, (dict, Each)):
        return _object_problem(value, shape, where, depth)
    why = _scalar(value, shape)
    return None if why is None else f"{at}: {why}"


def _too_many(value: Any, at: str) -> str | None:
    return f"{at}: {len(value)} entries (at most {MAX_ITEMS})" if len(value) > MAX_ITEMS \
        else None


def _list_problem(value: Any, item: Any, where: str, depth: int) -> str | None:
    at = where or "the record"
    if not isinstance(value, list):
        return f"{at}: a list, got {_show(value)}"
    if (why := _too_many(value, at)) is not None:
        return why
    for i, x in enumerate(value):
        if (why := problem(x, item, f"{where}[{i}]", depth + 1)) is not None:
            return why
    return None


def _object_problem(value: Any, shape: dict | Each, where: str, depth: int) -> str | None:
    at = where or "the record"
    if not isinstance(value, dict):
        return f"{at}: an object, got {_show(value)}"
    if (why := _too_many(value, at)) is not None:
        return why
    if isinstance(shape, Each):
        items = [(k, shape.shape) for k in value]
    else:
        items = [(k.rstrip("?"), s) for k, s in shape.items()
                 if not k.endswith("?") or k.rstrip("?") in value]
    for key, sub in items:
        if key not in value:
            return f"{at}: no {key!r}"
        if (why := problem(value[key], sub, f"{where}.{key}" if where else str(key),
                           depth + 1)) is not None:
            return why
    return None
