"""Argument and environment checks: the one place that says what a value may be.

Every public function of the package validates its arguments with these helpers before any
work is done, so a bad value stops with a ``ValueError`` that names the argument, the
allowed range and the value, never with a message from deep inside numpy, scipy or torch::

    eta = validation.real("eta", eta, 0.0, math.inf, lo_open=True)   # (0, inf)
    n = validation.integer("n_perm", n_perm, 2)                       # [2, inf]
    lam = validation.array("lam", lam, -1.0, 1.0)                     # entrywise [-1, 1]

The environment variables the package reads are declared in ``ENVIRONMENT`` (name ->
parser and allowed values) and read through :func:`env`; :func:`check_environment` parses
every one that is set, and ``runtime.setup`` calls it when a chapter starts, so
``DLTHEORY_JOBS=abc`` or a file where ``DLTHEORY_CACHE_DIR`` should be stops the chapter in
its first cell with the variable's name and what is allowed.

This module is the lowest layer of the package: it imports nothing from ``dltheory``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["real", "integer", "array", "choice", "as_generator", "interval", "parameter",
           "injected_parameters", "ENVIRONMENT", "env", "check_environment"]


# --------------------------------------------------------------------------- values
def interval(lo: float, hi: float, lo_open: bool = False, hi_open: bool = False) -> str:
    """``[lo, hi]`` with round brackets on open or infinite ends, e.g. ``(0, inf)``."""
    left = "(" if lo_open or lo == -math.inf else "["
    right = ")" if hi_open or hi == math.inf else "]"
    return f"{left}{lo:g}, {hi:g}{right}"


def _inside(v, lo: float, hi: float, lo_open: bool, hi_open: bool):
    """Elementwise ``v`` in the interval (a bool, or a bool array for an array ``v``)."""
    return np.logical_and(v > lo if lo_open else v >= lo, v < hi if hi_open else v <= hi)


def real(name: str, value: Any, lo: float = -math.inf, hi: float = math.inf, *,
         lo_open: bool = False, hi_open: bool = False) -> float:
    """``value`` as a finite float in the interval, else ``ValueError`` naming ``name``.

    NaN and infinities are always rejected (an infinite bound only means "unbounded").
    """
    rng = interval(lo, hi, lo_open, hi_open)
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a real number in {rng}, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in {rng}, got {value!r}") from None
    if not math.isfinite(v) or not _inside(v, lo, hi, lo_open, hi_open):
        raise ValueError(f"{name} must lie in {rng} (a finite number), got {value!r}")
    return v


def integer(name: str, value: Any, lo: float = -math.inf, hi: float = math.inf) -> int:
    """``value`` as an int in ``[lo, hi]`` (an integral float such as ``3.0`` is accepted;
    ``bool``, NaN, infinities and fractions are not), else ``ValueError`` naming ``name``."""
    rng = interval(lo, hi)
    ok_type = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok_type:
        is_float = isinstance(value, (float, np.floating))
        if not (is_float and math.isfinite(value) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer in {rng}, got {value!r}")
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in {rng}, got {value!r}")
    return v


def array(name: str, value: Any, lo: float = -math.inf, hi: float = math.inf, *,
          lo_open: bool = False, hi_open: bool = False) -> np.ndarray:
    """``value`` as a float array whose entries are finite and lie in the interval."""
    rng = interval(lo, hi, lo_open, hi_open)
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be real numbers in {rng}, got {value!r}") from None
    if a.size:
        bad = ~np.isfinite(a) | ~_inside(a, lo, hi, lo_open, hi_open)
        if bad.any():
            raise ValueError(f"{name} must lie in {rng} (finite, entrywise), "
                             f"got {a[bad].ravel()[0]!r}")
    return a


# --------------------------------------------------------------------------- parameters
def _example(value: Any, lo: float, hi: float, integer: bool, default: Any) -> int | float:
    """A value to suggest for a parameter, always inside ``[lo, hi]``: the default when it
    lies there, else the given number pulled into the range (rounded for an integer), else
    the middle of the range."""
    def inside(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and \
            math.isfinite(v) and lo <= v <= hi and (not integer or float(v).is_integer())
    if inside(default):
        return int(default) if integer else default
    v = value.item() if isinstance(value, np.generic) else value
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
        v = min(max(v, lo), hi)
        if integer:
            v = min(max(round(v), math.ceil(lo)), math.floor(hi))
        return v
    if math.isfinite(lo) and math.isfinite(hi):
        mid = (lo + hi) / 2
        return int(mid) if integer else float(f"{mid:.4g}")
    return lo if math.isfinite(lo) else hi if math.isfinite(hi) else 0


def parameter(name: str, value: Any, lo: float, hi: float, *, integer: bool = False,
              default: Any = None) -> int | float:
    """A parameters-cell value (``-p NAME value`` under papermill), checked in order:

    1. its type: a number (an integer where ``integer``; an integral float such as ``10.0``
       is taken as ``10``, an int as a float where a float goes); anything else is
       ``"NAME = 'abc': text, but a number goes here, in [lo, hi] (e.g. NAME = 3)"`` (a
       bool, None, a list likewise), a fraction where an integer goes ``"NAME = 64.5: an
       integer goes here, in [16, 256] (a fraction was given; e.g. NAME = 64)"``;
    2. its range: ``"NAME = 9 is outside its domain [lo, hi] (an integer)"``, NaN and
       infinities included.

    Every message names the range, and a suggested value (``default`` when it lies in the
    range) always lies inside it. Returns the value as an int or a float."""
    rng = interval(lo, hi)
    what = "an integer" if integer else "a number"
    v = value.item() if isinstance(value, np.generic) else value
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if not number or (integer and math.isfinite(v) and not float(v).is_integer()):
        example = f"e.g. {name} = {_example(v, lo, hi, integer, default)!r}"
        if number:      # a fraction where an integer goes
            raise ValueError(f"{name} = {value!r}: an integer goes here, in {rng} "
                             f"(a fraction was given; {example})")
        given = ("a bool" if isinstance(v, bool) else "text" if isinstance(v, (str, bytes))
                 else "None" if v is None else f"a {type(v).__name__}")
        hint = "papermill's -r passes raw text, -p a number; " if _parses(v) and \
            isinstance(v, (str, bytes)) else ""
        raise ValueError(f"{name} = {value!r}: {given}, but {what} goes here, in {rng} "
                         f"({hint}{example})")
    if not (math.isfinite(v) and lo <= v <= hi):
        raise ValueError(f"{name} = {value!r} is outside its domain {rng} "
                         f"({'an integer' if integer else 'a finite number'})")
    return int(v) if integer else float(v)


def _parses(text: Any) -> bool:
    try:
        float(text)
        return True
    except (TypeError, ValueError):
        return False


def injected_parameters(namespace: dict) -> list[str]:
    """The names papermill injected into a notebook kernel (``-p NAME value``), any case.

    Papermill adds a cell after the parameters cell, tagged ``injected-parameters``, whose
    source starts ``# Parameters`` and holds one assignment per parameter; a kernel does not
    see cell tags, but IPython keeps every executed cell's source in ``In`` (in
    ``namespace``, a notebook's globals). Returns the names assigned in such cells, in
    order; ``[]`` outside a kernel or without an injected cell."""
    import ast

    history = namespace.get("In") if isinstance(namespace, dict) else None
    names: list[str] = []
    for source in history if isinstance(history, list) else []:
        if not isinstance(source, str) or source.lstrip().split("\n", 1)[0].strip() != \
                "# Parameters":
            continue
        try:
            body = ast.parse(source).body
        except SyntaxError:
            continue
        for node in body:
            if isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
    return list(dict.fromkeys(names))


def choice(name: str, value: Any, options: Iterable) -> Any:
    """``value`` if it is one of ``options``, else ``ValueError`` listing them."""
    options = tuple(options)
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")
    return value


def as_generator(seed: int | Sequence[int] | np.random.Generator) -> np.random.Generator:
    """A numpy Generator from an int >= 0, a sequence of such ints (``[seed, section, i]``,
    mixed by ``SeedSequence``) or a Generator (returned as is). No ``None``: every stochastic
    call site names its seed."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        return np.random.default_rng(integer("seed", seed, 0))
    if isinstance(seed, (list, tuple, np.ndarray)) and len(seed) > 0:
        return np.random.default_rng([integer("seed", s, 0) for s in seed])
    raise TypeError(f"seed must be an int >= 0, a non-empty sequence of them or a numpy "
                    f"Generator, got {type(seed).__name__}: {seed!r}")


# --------------------------------------------------------------------------- environment
@dataclass(frozen=True)
class EnvVar:
    """One environment variable: what it does, what is allowed, how it is parsed."""

    name: str
    allowed: str
    parse: Callable[[str, str], Any]
    doc: str


def _parse_choice(*options: str) -> Callable[[str, str], str]:
    def parse(name: str, raw: str) -> str:
        v = raw.strip().lower()
        if v not in options:
            what = "is set but empty" if not v else f"={raw!r}"
            raise ValueError(f"${name} {what}: allowed values are {', '.join(options)} "
                             f"(or unset it)")
        return v
    return parse


def _parse_flag(name: str, raw: str) -> bool:
    v = raw.strip().lower()
    if v in ("1", "true", "on", "yes"):
        return True
    if v in ("0", "false", "off", "no", ""):
        return False
    raise ValueError(f"${name}={raw!r}: allowed values are 1/true/on/yes or 0/false/off/no")


def _parse_int(lo: int, hi: float = math.inf, extra: tuple[int, ...] = ()):
    def parse(name: str, raw: str) -> int:
        allowed = f"an integer in {interval(lo, hi)}" + "".join(f" or {e}" for e in extra)
        try:
            v = int(raw.strip())
        except ValueError:
            raise ValueError(f"${name}={raw!r}: allowed values are {allowed}") from None
        if not (lo <= v <= hi or v in extra):
            raise ValueError(f"${name}={raw!r}: allowed values are {allowed}")
        return v
    return parse


MAX_SECONDS = 366 * 86400.0   # a budget or cap above a year is refused (signal.setitimer
                              # overflows near 1e10 s; no run here is meant to last a year)
MAX_JOBS = 1024               # chapters or workers at a time


def _parse_seconds(name: str, raw: str) -> float | None:
    if not raw.strip():
        return None
    try:
        v = float(raw)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and 0 < v <= MAX_SECONDS):
        raise ValueError(f"${name}={raw!r}: allowed values are a number of seconds in "
                         f"(0, {MAX_SECONDS:.0f}] (at most a year; unset or empty: "
                         f"{'no budget' if name == 'DLTHEORY_BUDGET' else 'the default'})")
    return v


def _parse_existing_dir(name: str, raw: str) -> Path:
    p = Path(raw).expanduser()
    if not raw.strip() or not p.is_dir():
        what = " is set but empty" if not raw.strip() else f"={raw!r} is not an existing folder"
        raise ValueError(f"${name}{what}: allowed values are an existing folder (unset it "
                         f"for the default)")
    return p


def _parse_dir(name: str, raw: str) -> Path:
    p = Path(raw).expanduser()
    if not raw.strip():
        raise ValueError(f"${name} is set but empty: allowed values are a folder path "
                         f"(unset it for the default)")
    for q in (p, *p.parents):
        if q.exists():
            if not q.is_dir():
                raise ValueError(f"${name}={raw!r}: {q} exists and is not a folder; allowed "
                                 f"values are a folder path (existing, or creatable)")
            if not os.access(q, os.W_OK | os.X_OK):
                raise ValueError(f"${name}={raw!r}: {q} is not writable; allowed values are "
                                 f"a writable folder path")
            break
    return p


def _parse_text(name: str, raw: str) -> str:
    if not raw.strip():
        raise ValueError(f"${name} is set but empty (unset it, or give a value)")
    return raw.strip()


def _parse_optional_text(name: str, raw: str) -> str | None:
    """Text, where empty means unset (the scripts pass an empty value for "none")."""
    return raw.strip() or None


SCALE_NAMES = ("smoke", "standard", "paper", "full")

ENVIRONMENT: dict[str, EnvVar] = {v.name: v for v in (
    EnvVar("DLTHEORY_SCALE", " | ".join(SCALE_NAMES), _parse_choice(*SCALE_NAMES),
           "preset sizes (default smoke under CI, else standard)"),
    EnvVar("DLTHEORY_BUDGET", f"seconds in (0, {MAX_SECONDS:.0f}]", _parse_seconds,
           "time budget per chapter; sweeps run the rounds that fit"),
    EnvVar("DLTHEORY_FIRST_ROUND_WHOLE", "1 or 0", _parse_flag,
           "a budget spares the first round of every sweep (default 0: it cuts there too)"),
    EnvVar("DLTHEORY_THREADS", "an integer >= 1", _parse_int(1),
           "torch and BLAS threads per process"),
    EnvVar("DLTHEORY_JOBS", f"an integer in [1, {MAX_JOBS}], or -1 (all cores)",
           _parse_int(1, MAX_JOBS, extra=(-1,)),
           "worker processes of the loky/dask backends"),
    EnvVar("DLTHEORY_BACKEND", "sequential | loky | dask | active",
           _parse_choice("sequential", "loky", "dask", "active"), "how sweeps run their tasks"),
    EnvVar("DLTHEORY_DASK_SCHEDULER", "a scheduler address (tcp://host:8786)", _parse_text,
           "the Dask scheduler of the dask backend"),
    EnvVar("DLTHEORY_CACHE", "1 or 0", _parse_flag, "the sweep cache on or off"),
    EnvVar("DLTHEORY_CACHE_DIR", "a writable folder", _parse_dir, "where sweeps cache tasks"),
    EnvVar("DLTHEORY_RESULTS_DIR", "a writable folder", _parse_dir, "where ledgers go"),
    EnvVar("DLTHEORY_DATA_DIR", "a writable folder", _parse_dir,
           "real data sets (CIFAR-10) found or stored here"),
    EnvVar("DLTHEORY_FIG_DIR", "a writable folder", _parse_dir, "where scripts save figures"),
    EnvVar("DLTHEORY_PROGRESS", "1 or 0", _parse_flag, "progress bars on or off"),
    EnvVar("DLTHEORY_STATIC", "1 or 0", _parse_flag, "no live widgets (book build, tests)"),
    EnvVar("DLTHEORY_TIMES", "a file path", _parse_text,
           "the record of measured times (default book/records/times.json)"),
    EnvVar("DLTHEORY_MUTATION", "a planted-error id of dltheory.mutations", _parse_text,
           "apply one planted error (calibration runs only)"),
    # --- where outputs go, and the scripts' own variables (scripts/*.sh and *.py read them
    # through validation.env, or `python -m dltheory.validation NAME DEFAULT` in bash)
    EnvVar("DLTHEORY_ROOT", "an existing folder", _parse_existing_dir,
           "the root outputs (_build/) go under (default: the checkout the package is "
           "imported from, else the working directory)"),
    EnvVar("DLTHEORY_BOOK_JOBS", f"an integer in [1, {MAX_JOBS}]", _parse_int(1, MAX_JOBS),
           "chapters scripts/book.sh executes at a time (default 2)"),
    EnvVar("DLTHEORY_BOOK_LOCK_HELD", "1 or 0", _parse_flag,
           "set by scripts/execute_chapters.py for the build it runs under the lock"),
    EnvVar("DLTHEORY_PAPER_BUDGET", f"seconds in (0, {MAX_SECONDS:.0f}]", _parse_seconds,
           "scripts/test.sh: the budget of each chapter in the paper step (default 30)"),
    EnvVar("DLTHEORY_INSTALLER", "uv | pip", _parse_choice("uv", "pip"),
           "scripts/setup.sh: which installer (default uv, pip where uv fails)"),
    EnvVar("DLTHEORY_EXEC_CACHE", "a folder", _parse_optional_text,
           "tests/test_book_outputs.py: the execution cache it reads"),
    EnvVar("DLTHEORY_REQUIRE_EXECUTED", "1 or 0", _parse_flag,
           "tests/test_book_outputs.py: a missing executed chapter fails (scripts/test.sh)"),
    EnvVar("DLTHEORY_COLAB_ENV", "1 or 0", _parse_flag,
           "scripts/test.sh: run the chapters under nbmake in the bare Colab-like venv "
           "(default 1; scripts/colab_env.sh)"),
    EnvVar("DLTHEORY_GPU_CHECK_OUT", "a writable folder", _parse_dir,
           "scripts/gpu_check.sh: its output folder (default _build/gpu)"),
    EnvVar("DLTHEORY_GPU_CHECK_CAP", f"seconds in (0, {MAX_SECONDS:.0f}]", _parse_seconds,
           "scripts/gpu_check.sh: the hard cap per chapter"),
    EnvVar("DLTHEORY_GPU_CHECK_CHAPTERS", "chapter stems, by commas or spaces", _parse_optional_text,
           "scripts/gpu_check.sh: which chapters (default all)"),
    EnvVar("DLTHEORY_GPU_CHECK_SAVE", "a folder", _parse_optional_text,
           "scripts/gpu_check_report.py: where --save copies the report"),
    EnvVar("DLTHEORY_GPU_CHECK_SAVE_DIR", "a folder", _parse_optional_text,
           "scripts/gpu_check.sh: where --save copies the report (default benchmarks/gpu)"),
    EnvVar("DLTHEORY_GPU_CHECK_COMPARE", "a report.json path", _parse_optional_text,
           "scripts/gpu_check_report.py: another device's report to compare with"),
)}


def env(name: str, default: Any = None) -> Any:
    """The parsed value of environment variable ``name`` (declared in ``ENVIRONMENT``), or
    ``default`` when it is unset. A bad value raises ``ValueError`` naming the variable and
    what is allowed."""
    var = ENVIRONMENT.get(name)
    if var is None:
        raise KeyError(f"{name} is not a declared dltheory environment variable; declared: "
                       f"{', '.join(ENVIRONMENT)}")
    raw = os.environ.get(name)
    return default if raw is None else var.parse(name, raw)


def check_environment() -> dict[str, Any]:
    """Parse every declared variable that is set; return ``{name: value}``. Raises the
    first ``ValueError`` (naming the variable and its allowed values)."""
    return {name: env(name) for name in ENVIRONMENT if name in os.environ}


def main(argv: Sequence[str] | None = None) -> int:
    """The shell scripts' reader of the declared variables::

        python -m dltheory.validation --check          # every set DLTHEORY_* variable
        python -m dltheory.validation NAME [DEFAULT]   # NAME's parsed value, else DEFAULT
        python -m dltheory.validation --list           # the declaration table

    A bad value exits 2 with the variable's name and what is allowed (no traceback)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ["--list"]:
            for v in ENVIRONMENT.values():
                print(f"{v.name:30s} {v.allowed:45s} {v.doc}")
        elif args[:1] == ["--check"]:
            check_environment()
            unknown = sorted(k for k in os.environ
                             if k.startswith("DLTHEORY_") and k not in ENVIRONMENT)
            if unknown:
                print(f"warning: {', '.join(unknown)} set but not a dltheory variable "
                      f"(declared: python -m dltheory.validation --list)", file=sys.stderr)
        elif len(args) in (1, 2) and not args[0].startswith("-"):
            value = env(args[0], args[1] if len(args) == 2 else None)
            print("" if value is None else value)
        else:
            print(main.__doc__, file=sys.stderr)
            return 2
    except (KeyError, ValueError) as e:
        print(str(e).strip("'\""), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
