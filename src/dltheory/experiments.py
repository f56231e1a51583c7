"""Cached, resumable sweeps that run sequentially, on local processes or on a cluster.

A chapter's experiment is a list of *tasks* and one pure *task function*::

    from dltheory import experiments

    def drift_task(cfg: Config, task: dict) -> list[dict]:  # module level: picklable
        seeds = np.arange(cfg.n_seeds)                      # all seeds in one batch
        drift = batched_drift(cfg, task["tau"], seeds)      # (n_seeds,), one computation
        return [{"seed": int(s), "drift": float(d)} for s, d in zip(seeds, drift)]

    tasks = [{"tau": t} for t in cfg.taus]
    df = experiments.sweep(drift_task, tasks, config=cfg, name="ch0_drift")
    # columns: tau, seed, drift; one row per (tau, seed)

``sweep`` returns one tidy ``pandas.DataFrame``: each task's keys are prepended to every row
the function returns (a dict is one row; a list of dicts or a DataFrame several rows), in
task order.

**Task functions.** ``fn(config, task)`` must be a module-level function (it is pickled to
other processes) and pure: its result depends only on ``config``, ``task`` and the code.
``config`` is a frozen dataclass of plain values (it is part of the cache key); ``task`` is
a dict of plain values (ints, floats, strings, tuples). Seed every random draw from values
in ``config``/``task``. Return plain values: floats/ints/strings, lists, dicts, NumPy arrays
and scalars of numeric dtype, DataFrames of those (``float(x)``, not a tensor).

**Batch seeds inside a task.** One task should be one device-sized computation: put the
seeds (and small sizes) on a leading batch axis and run them together (batched NumPy or
torch linear algebra, ``torch.func.vmap``, ``torch.func.stack_module_state`` for ensembles
of small models), with no host syncs (``.item()``, ``.cpu()``) inside the inner loop.
A task per (seed, size) of a few milliseconds spends its time in overhead and caching.

**dtype.** Name the dtype in the task function (``torch.float64`` for identities and
exact theory comparisons; ``torch.float32`` for training-type experiments on a GPU where
the claim's tolerance allows) and state the choice in the Config. Worker processes start
fresh, so ``sweep`` hands them the calling process's torch default dtype, but explicit is
better.

**Cache and resume.** Every finished task is stored in one file under
``$DLTHEORY_CACHE_DIR`` (default ``<repo>/_build/cache/<scale>``, the scale taken from
``config.scale`` when the Config has one), in a folder named after the sweep. The key is the
sweep name, the task function, ``config`` (without its ``budget`` and ``budget_weights``
fields, so that a larger budget reuses a smaller run's tasks), ``task``, the torch default
dtype, whether CUDA is present, the planted mutations (``mutations.active()``: a mutated run
never serves its results to a clean one) and a digest of the code the task runs
(``code_digest``: the task function's module, the Config's module and every ``dltheory``
module they import, transitively, by a static scan of their ``import`` statements; without
``figures.py``/``plotting.py``, so a colour change recomputes no sweep, and without the
engine and budget modules, which decide which tasks run, not what they return). Floats in
``task`` and ``config`` enter the key rounded to ``KEY_DIGITS`` (12) significant digits, so
a grid point computed on another CPU (a last bit from another SIMD path) finds its task,
while grid points that differ in their 9th digit stay apart. Editing the
code a task runs invalidates its old results instead of silently reusing them; code reached
only through ``importlib`` at run time is not seen by the scan. An interrupted sweep
(Ctrl-C, a time limit, a lost Colab runtime) therefore resumes by running it again: finished
tasks are loaded, only the missing ones are computed, and the table equals an uninterrupted
run. Give ``name`` a chapter prefix (``"de_line_search"``) so that chapters running side by
side never share a folder. ``cache=False`` (or ``DLTHEORY_CACHE=0``) switches the cache off;
deleting the folder clears it. A cache that cannot be written (a full disk, a read-only
shared folder) is still read; what is computed is returned, not cached, with one line
naming the folder (``[cache] cannot write the cache folder ...``).

Each file holds a magic line (``DLTHEORY-TASK 2``; files of another version are recomputed),
a header line with the task's full key and the sha256 of the payload, then the payload: the
result as data-only JSON (``dumps_payload``: floats by ``repr``, exact, NaN and infinities
included; NumPy arrays and scalars of numeric dtypes as their dtype, shape and raw bytes;
tuples, dicts with any plain keys and DataFrames (columns, dtypes, index) tagged so that
they come back as they went in). Reading a file runs no code whatever it holds: only JSON
parsing and NumPy ``frombuffer`` of numeric dtypes; a crafted file (a pickle, say) is
reported as corrupt and recomputed. The checksum sits in the same file, so it guards against
bit rot and truncation only: someone who can write the cache folder can change a number and
its checksum together, and that is not detected. A result that is not plain data (a tensor,
an object) is returned but not cached, with one warning line. A file is written to a unique
temporary name and moved into place (``os.replace``), so a reader, or a second process
writing the same task, sees a whole file or none. A file that fails its check (checksum, a
key other than the task's, truncation, an unreadable payload) is reported in one line,
``[cache] de_line_search: task {'width': 64} corrupt (checksum mismatch); recomputed``,
computed again and overwritten. ``stats()`` counts tasks computed (corrupt ones included)
and tasks loaded, over every sweep of this process.

**Invariants.** Every sweep's results are checked by ``dltheory.invariants`` (no chapter
asks for it): results that differ only in a seed-like key or column (``seed``, ``draw``,
``block``, ``start``, ...) must differ, and the declared tasks must be distinct and each
kept task must give a row. The counts compared are in ``invariants.records()``; a violation
is a FAIL identity on the running chapter's ledger (``<PREFIX>.engine.distinct_draws.<sweep>``,
``<PREFIX>.engine.grid.<sweep>``). ``invariants.argument_effects(fn, config, task)`` says
which arguments of a task move its output (a test for an ignored knob).

**Rounds and budgets.** ``rounds="seed"`` (a task key) or ``rounds=callable(task) -> int``
groups the tasks into rounds, run in ascending order of their index (within a round in the
given task order, so put the cheapest grid points first)::

    tasks = [{"width": w, "seed": s} for s in range(cfg.n_seeds) for w in cfg.widths]
    df = experiments.sweep(width_task, tasks, config=cfg, name="de_width", rounds="seed")
    done, planned = df.attrs["rounds"]

Without a chapter budget every round runs. With one (``budget.start(cfg.budget, ...)``, see
``dltheory.budget``) the sweep gets an allotment of wall time when it starts, and the unit of
time is the task: the engine times every task it computes and starts the next uncached task
only when its estimated cost (the measured time of the task at the same place in an earlier
round, else the longest task so far) fits in what is left of the allotment and of the
chapter's budget; a sweep with no result yet runs one task even with no time left (never an
empty table). A round may
therefore end part-way. Cached tasks cost nothing and are loaded as long as they extend the
run without a gap. The table holds the completed rounds, in the given task order (the
unbudgeted table restricted to the first ``done`` rounds), or, when no round completed, the
tasks of the first round that ran (a prefix in run order); either way it is fixed by what
ran. ``df.attrs["rounds"] = (done, planned)``, ``df.attrs["tasks"] = (in the table,
planned)``, and ``budget.record()`` lists both under the sweep's name. A rerun with the same
cache loads the finished tasks for free and adds tasks as its budget allows. Sweeps without
``rounds`` are not cut by the budget (the chapter declared them indivisible).

**Progress.** A tqdm bar where ``runtime.progress_enabled()`` (a terminal, a live
notebook); elsewhere outside a notebook (stderr a pipe or a log, ``CI``, ``progress=False``)
one line to stderr every ``HEARTBEAT_S`` (20) seconds while a sweep computes, ``[sweep]
pf_curves: 12/40 tasks, 3/10 rounds, 61 s``, so a script is never silent for long;
``$DLTHEORY_PROGRESS=0`` turns both off. Notebook outputs get no lines.

**Backends** (``backend=`` or ``$DLTHEORY_BACKEND``), all through ``joblib.Parallel``:

- ``sequential`` (default): in this process, the right choice on one GPU (batch inside the
  task instead);
- ``loky``: local worker processes (``$DLTHEORY_JOBS`` of them, default all cores), for
  CPU-bound sweeps of independent tasks;
- ``dask``: a ``dask.distributed`` cluster. With ``$DLTHEORY_DASK_SCHEDULER=tcp://host:8786``
  the engine connects a ``distributed.Client`` to that scheduler; otherwise it uses the
  client already created in this process (``Client(cluster)``), or starts a local cluster.
  Start a cluster with ``dask scheduler`` on one machine and ``dask worker tcp://host:8786``
  on each of the others; every worker needs this package installed.

Results always come back to the calling process, which writes the cache, so workers need no
shared file system. Ray plugs in the same way through joblib: ``from ray.util.joblib import
register_ray; register_ray()`` and then ``with joblib.parallel_config(backend="ray",
n_jobs=-1): experiments.sweep(..., backend="active")`` (``"active"`` uses whatever joblib
backend the caller configured). One GPU is best used by one process with batched tasks
(``sequential``); ``loky`` and ``dask`` pay off for many independent CPU tasks or machines.

The worked example is the prologue: ``gradient_flow.drift_task`` (a block of starts, all
their GD runs advanced together by ``gradient_flow.gd_drift_batched``) and
``gradient_flow.drift_sweep(cfg)``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import budget, invariants, runtime, validation

BACKENDS = ("sequential", "loky", "dask")
ENV_BACKEND = "DLTHEORY_BACKEND"
ENV_CACHE_DIR = "DLTHEORY_CACHE_DIR"
ENV_CACHE = "DLTHEORY_CACHE"
ENV_JOBS = "DLTHEORY_JOBS"
ENV_DASK_SCHEDULER = "DLTHEORY_DASK_SCHEDULER"
BUDGET_FIELDS = ("budget", "budget_weights")   # Config fields left out of the cache key
_MAGIC = b"DLTHEORY-TASK 2\n"                  # first line of every cached task file (2: JSON data)

_STATS = {"computed": 0, "cached": 0}
_STATS_LOCK = threading.Lock()
_DASK_CLIENT = None


# --------------------------------------------------------------------------- bookkeeping
def stats() -> dict[str, int]:
    """Tasks computed and tasks loaded from the cache, over every sweep in this process."""
    with _STATS_LOCK:
        return dict(_STATS)


def reset_stats() -> None:
    """Set both counters of ``stats()`` back to zero."""
    with _STATS_LOCK:
        _STATS.update(computed=0, cached=0)


def _count(key: str, n: int = 1) -> None:
    with _STATS_LOCK:
        _STATS[key] += n


def cache_dir(config: Any = None) -> Path:
    """``$DLTHEORY_CACHE_DIR``, else ``<repo>/_build/cache/<scale>`` (scale from
    ``config.scale`` when present, else ``runtime.scale()``)."""
    env = validation.env(ENV_CACHE_DIR)
    if env is not None:
        return env
    s = getattr(config, "scale", None)
    return runtime.repo_root() / "_build" / "cache" / runtime.scale(s)


def resolve_backend(backend: str | None = None) -> str:
    """``backend`` if given, else ``$DLTHEORY_BACKEND``, else ``sequential``; ``"active"``
    defers to the caller's ``joblib.parallel_config``. Raises ``ValueError`` otherwise."""
    b = backend if backend is not None else (validation.env(ENV_BACKEND) or "sequential")
    b = str(b).strip().lower()
    if b not in (*BACKENDS, "active"):
        raise ValueError(
            f"unknown backend {b!r} (from argument or ${ENV_BACKEND}); "
            f"valid backends: {', '.join(BACKENDS)} (or 'active' for the caller's joblib backend)"
        )
    return b


# --------------------------------------------------------------------------- code digest
#: modules left out of a task's code digest: figures decide outputs no sweep computes, and
#: the engine / budget decide which tasks run, never what a task returns (the payload
#: format is versioned by ``_MAGIC``)
DIGEST_EXCLUDED = ("figures.py", "plotting.py")
DIGEST_EXCLUDED_MODULES = ("dltheory.experiments", "dltheory.budget")


def _module_file(modname: str) -> Path | None:
    """The source file of ``modname`` inside the ``dltheory`` tree, found without importing."""
    root = Path(__file__).resolve().parent
    parts = modname.split(".")
    if parts[0] != root.name:
        return None
    base = root.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _module_name(path: Path) -> str:
    root = Path(__file__).resolve().parent
    rel = path.resolve().relative_to(root).with_suffix("")
    parts = [root.name, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modname: str | None) -> set[str]:
    """``dltheory`` modules that the source at ``path`` imports (anywhere in it: a static
    AST scan, so a name built at run time through ``importlib`` is not seen)."""
    import ast

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return set()
    is_pkg = path.name == "__init__.py"
    package = (modname if is_pkg else (modname or "").rpartition(".")[0]) if modname else ""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not package:
                    continue
                up = package.split(".")
                up = up[:len(up) - (node.level - 1)] if node.level > 1 else up
                base = ".".join([*up, node.module] if node.module else up)
            else:
                base = node.module or ""
            subs = [f"{base}.{a.name}" for a in node.names if a.name != "*"]
            found = [s for s in subs if _module_file(s) is not None]
            out.update(found)
            if len(found) < len(subs) or not subs:
                out.add(base)      # some names are attributes of ``base`` itself
    return {m for m in out if _module_file(m) is not None}


@functools.cache
def _module_closure(start: str) -> tuple[str, ...]:
    """Files (as text keys) of ``start`` and every ``dltheory`` module it imports,
    transitively, without ``DIGEST_EXCLUDED``/``DIGEST_EXCLUDED_MODULES``."""
    first = Path(start)
    seen: dict[str, Path] = {}
    todo: list[tuple[Path, str | None]] = [(first, None)]
    with contextlib.suppress(ValueError):
        todo = [(first, _module_name(first))]
    while todo:
        path, name = todo.pop()
        key = str(path.resolve())
        if key in seen:
            continue
        seen[key] = path
        for m in sorted(_imports(path, name)):
            f = _module_file(m)
            if (f is None or f.name in DIGEST_EXCLUDED or m in DIGEST_EXCLUDED_MODULES
                    or str(f.resolve()) in seen):
                continue
            todo.append((f, m))
    return tuple(sorted(seen))


def code_files(fn: Callable, config: Any = None) -> list[Path]:
    """The source files whose code a task ``fn(config, task)`` runs: ``fn``'s module, the
    Config's module and every ``dltheory`` module they import, transitively (a static scan
    of ``import`` statements); ``figures.py``, ``plotting.py``, the engine and the budget
    are left out (see ``DIGEST_EXCLUDED``)."""
    starts = []
    for modname in (getattr(fn, "__module__", None),
                    type(config).__module__ if config is not None else None):
        mod = sys.modules.get(modname or "")
        f = getattr(mod, "__file__", None)
        if f and f.endswith(".py"):
            starts.append(f)
    files: set[str] = set()
    for s in starts:
        files.update(_module_closure(str(Path(s).resolve())))
    return [Path(f) for f in sorted(files)]


def code_digest(fn: Callable, config: Any = None) -> str:
    """sha256 (16 hex digits) over the files of ``code_files(fn, config)`` (path relative to
    the package and content) and the source of ``fn`` itself. An edit of any code the task
    runs changes it; an edit of a figure module or of an unrelated chapter does not."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in code_files(fn, config):
        with contextlib.suppress(ValueError):
            h.update(str(f.resolve().relative_to(root)).encode())
        h.update(b"\0" + _file_bytes(str(f)) + b"\0")
    with contextlib.suppress(OSError, TypeError):
        h.update(inspect.getsource(fn).encode())
    return h.hexdigest()[:16]


@functools.cache
def _file_bytes(path: str) -> bytes:
    return Path(path).read_bytes()


# --------------------------------------------------------------------------- payload codec
class PayloadError(ValueError):
    """A task result that the data-only cache format cannot hold, or a payload it cannot
    read."""


def _enc(x: Any) -> Any:
    """A task result as JSON data. JSON's own types stand for themselves (lists, strings,
    ints, floats: Python writes floats by ``repr``, exact, and NaN/Infinity); everything
    else is a one-key object naming its type: ``{"d": [[k, v], ...]}`` a dict, ``{"t": [...]}``
    a tuple, ``{"a": [dtype, shape, base64]}`` a numeric NumPy array (raw bytes, exact),
    ``{"s": [dtype, base64]}`` a NumPy scalar, ``{"f": {...}}`` a DataFrame (its columns,
    dtypes, values and index)."""
    import numpy as np

    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, int) and type(x) is int:
        return x
    if type(x) is float:
        return x
    if isinstance(x, (list,)):
        return [_enc(v) for v in x]
    if isinstance(x, tuple) and type(x) is tuple:
        return {"t": [_enc(v) for v in x]}
    if isinstance(x, dict):
        return {"d": [[_enc(k), _enc(v)] for k, v in x.items()]}
    if isinstance(x, np.ndarray):
        return {"a": _enc_array(x)}
    if isinstance(x, np.generic):
        dt = _plain_dtype(x.dtype)
        return {"s": [dt.str, _b64(np.asarray(x, dtype=dt).tobytes())]}
    if _is_frame(x):
        cols = [_enc_column(x.iloc[:, i]) for i in range(x.shape[1])]
        return {"f": {"columns": cols, "names": _enc_column(x.columns.to_series()),
                      "index": _enc_column(x.index.to_series()), "n": int(len(x))}}
    raise PayloadError(f"a {type(x).__module__}.{type(x).__qualname__} is not plain data")


def _plain_dtype(dt):
    import numpy as np

    dt = np.dtype(dt)
    if dt.kind not in "biufc" or dt.fields is not None:
        raise PayloadError(f"NumPy dtype {dt} is not plain numbers")
    return dt


def _b64(b: bytes) -> str:
    import base64

    return base64.b64encode(b).decode("ascii")


def _enc_array(a) -> list:
    import numpy as np

    dt = _plain_dtype(a.dtype)
    return [dt.str, list(a.shape), _b64(np.ascontiguousarray(a, dtype=dt).tobytes())]


def _enc_column(col) -> dict:
    import numpy as np

    dt = col.dtype
    if isinstance(dt, np.dtype) and dt.kind in "biufc":
        return {"a": _enc_array(col.to_numpy())}
    if isinstance(dt, np.dtype) and dt.kind == "O":
        return {"o": [_enc(v) for v in col.tolist()]}
    if str(dt) in _EXT_DTYPES:
        return {"x": [str(dt), [_enc(None if v is pd_na() else v) for v in col.tolist()]]}
    raise PayloadError(f"a DataFrame column of dtype {dt} is not plain data")


def _dec(x: Any) -> Any:
    """Inverse of ``_enc``; ``PayloadError`` on anything it did not write."""
    if x is None or isinstance(x, (bool, str, int, float)):
        return x
    if isinstance(x, list):
        return [_dec(v) for v in x]
    if not (isinstance(x, dict) and len(x) == 1):
        raise PayloadError("not a tagged value")
    (tag, v), = x.items()
    if tag == "t":
        return tuple(_dec(e) for e in _list(v))
    if tag == "d":
        out = {}
        for kv in _list(v):
            k, val = _list(kv, 2)
            out[_hashable(_dec(k))] = _dec(val)
        return out
    if tag == "a":
        return _dec_array(v)
    if tag == "s":
        import numpy as np

        dt, raw = _list(v, 2)
        arr = np.frombuffer(_unb64(raw), dtype=_plain_dtype(dt))
        if arr.size != 1:
            raise PayloadError("a scalar of the wrong size")
        return arr[0]
    if tag == "f":
        return _dec_frame(v)
    raise PayloadError(f"unknown tag {tag!r}")


def _list(v: Any, n: int | None = None) -> list:
    if not isinstance(v, list) or (n is not None and len(v) != n):
        raise PayloadError("malformed value")
    return v


def _hashable(k: Any) -> Any:
    try:
        hash(k)
    except TypeError as e:
        raise PayloadError("unhashable dict key") from e
    return k


def _unb64(s: Any) -> bytes:
    import base64
    import binascii

    if not isinstance(s, str):
        raise PayloadError("malformed bytes")
    try:
        return base64.b64decode(s.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as e:
        raise PayloadError("malformed bytes") from e


def _dec_array(v: Any):
    import numpy as np

    dt, shape, raw = _list(v, 3)
    if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in _list(shape)):
        raise PayloadError("malformed shape")
    flat = np.frombuffer(_unb64(raw), dtype=_plain_dtype(dt))
    if flat.size != int(np.prod(shape, dtype=np.int64)):
        raise PayloadError("array size does not match its shape")
    return flat.reshape(shape).copy()


def _dec_column(v: Any):
    if not (isinstance(v, dict) and len(v) == 1):
        raise PayloadError("malformed column")
    (tag, data), = v.items()
    if tag == "a":
        return _dec_array(data)
    if tag == "o":
        import numpy as np

        vals = [_dec(e) for e in _list(data)]
        out = np.empty(len(vals), dtype=object)
        out[:] = vals
        return out
    if tag == "x":
        import pandas as pd

        name, vals = _list(data, 2)
        if name not in _EXT_DTYPES:
            raise PayloadError(f"column dtype {name!r} not allowed")
        return pd.array([_dec(e) for e in _list(vals)], dtype=name)
    raise PayloadError("malformed column")


#: pandas extension dtypes a cached DataFrame column may have (rebuilt by name: no code runs)
_EXT_DTYPES = ("str", "string", "boolean", "Int8", "Int16", "Int32", "Int64", "UInt8",
               "UInt16", "UInt32", "UInt64", "Float32", "Float64")


def pd_na():
    import pandas as pd

    return pd.NA


def _dec_frame(v: Any):
    import pandas as pd

    if not (isinstance(v, dict) and set(v) == {"columns", "names", "index", "n"}):
        raise PayloadError("malformed DataFrame")
    n = v["n"]
    index = _dec_column(v["index"])
    names = _dec_column(v["names"])
    cols = [_dec_column(d) for d in _list(v["columns"])]
    if len(index) != n or any(len(d) != n for d in cols) or len(names) != len(cols):
        raise PayloadError("DataFrame columns of different lengths")
    df = pd.DataFrame(dict(enumerate(cols)), index=pd.Index(index))
    df.columns = pd.Index(names)
    return df


def dumps_payload(value: Any) -> bytes:
    """A task result as data-only JSON (see ``_enc``); ``PayloadError`` when it is not data."""
    return json.dumps(_enc(value), separators=(",", ":"), allow_nan=True).encode()


def loads_payload(data: bytes) -> Any:
    """Read what ``dumps_payload`` wrote. Only JSON parsing and NumPy ``frombuffer`` of
    numeric dtypes run: reading a crafted file can never run code."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise PayloadError("not JSON") from e
    return _dec(obj)


# --------------------------------------------------------------------------- cache key
def _torch_dtype() -> str | None:
    torch = sys.modules.get("torch")
    return str(torch.get_default_dtype()).replace("torch.", "") if torch is not None else None


def _platform() -> str:
    """Part of the cache key: the torch default dtype and whether CUDA is used, so that a
    result computed on one kind of device is not served as another's."""
    torch = sys.modules.get("torch")
    if torch is None:
        return "numpy"
    return f"{_torch_dtype()}|{'cuda' if torch.cuda.is_available() else 'cpu'}"


#: significant digits a float keeps in a cache key. A float in a task or a Config may be
#: computed (a geometric grid, ``10 ** -k``), and its last bits depend on the machine's SIMD
#: path (NumPy's ``power`` differs by an ulp between AVX2 and AVX-512); 12 digits leave
#: 1000 ulps of a float64 to that noise, while values that differ in their 9th digit
#: (distinct grid points) still get distinct keys. Narrower floats keep their own
#: ``precision`` less 1 digit (float32: 5).
KEY_DIGITS = 12


def _key_float(x: Any) -> str:
    """The text of a float in a key: rounded to ``KEY_DIGITS`` significant digits (fewer
    for a narrower NumPy float), its type kept (``1`` and ``1.0`` stay apart); NaN and the
    infinities as themselves, ``-0.0`` as ``0.0``."""
    import math

    digits = KEY_DIGITS
    np_type = type(x).__module__ == "numpy"
    if np_type:
        import numpy as np

        digits = min(KEY_DIGITS, max(1, np.finfo(x.dtype).precision - 1))
    v = float(x)
    text = repr(v) if not math.isfinite(v) else repr(float(f"{v:.{digits}g}") + 0.0)
    return f"{type(x).__name__}({text})" if np_type else text


def _canon(x: Any) -> str:
    """Canonical text of a task value for its key: dicts with sorted keys, floats rounded
    (``_key_float``), the rest by ``repr`` (tells tuples from lists and ints from floats)."""
    import numbers

    if isinstance(x, dict):
        items = sorted(x.items(), key=lambda kv: repr(kv[0]))
        return "{" + ",".join(f"{_canon(k)}:{_canon(v)}" for k, v in items) + "}"
    if isinstance(x, (list, tuple)):
        inner = ",".join(_canon(v) for v in x)
        return f"[{inner}]" if isinstance(x, list) else f"({inner})"
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        return _key_float(x)
    if isinstance(x, complex) or type(x).__name__.startswith("complex"):
        return f"complex({_key_float(x.real)},{_key_float(x.imag)})"
    if type(x).__name__ == "ndarray":      # every element (repr would round and elide)
        return f"ndarray({x.dtype.str},{x.shape},{_canon(x.ravel().tolist())})"
    return repr(x)


def _key_value(x: Any) -> Any:
    """A Config field as its key sees it: floats (also inside tuples, lists, dicts and
    NumPy float arrays) as their rounded text (``_key_float``), the rest unchanged."""
    import numbers

    if isinstance(x, dict):
        return {k: _key_value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and type(x) in (list, tuple):
        return type(x)(_key_value(v) for v in x)
    if isinstance(x, numbers.Real) and not isinstance(x, numbers.Integral):
        return ("float", _key_float(x))
    if type(x).__name__ == "ndarray" and getattr(x.dtype, "kind", "") in "fc":
        return _canon(x)
    return x


def _config_digest(config: Any) -> str:
    """Digest of a Config's class and fields, without ``BUDGET_FIELDS`` (a budget decides
    how many rounds run, never what a task computes); floats rounded (``_key_value``)."""
    import joblib

    fields = [(f.name, _key_value(getattr(config, f.name))) for f in dataclasses.fields(config)
              if f.name not in BUDGET_FIELDS]
    return joblib.hash((type(config).__module__, type(config).__qualname__, fields))


# --------------------------------------------------------------------------- task store
def _entry(key: dict, payload: bytes) -> bytes:
    """A task file: magic line, header line (key and sha256 of the payload), payload."""
    head = json.dumps({"key": key, "sha256": hashlib.sha256(payload).hexdigest()},
                      sort_keys=True, separators=(",", ":"))
    return _MAGIC + head.encode() + b"\n" + payload


def _write_entry(path: Path, key: dict, value: Any) -> None:
    """Store ``value`` under ``key`` atomically: a unique temporary file in the same folder,
    then ``os.replace``, so readers and concurrent writers never see part of a file."""
    data = _entry(key, dumps_payload(value))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)           # mkstemp's 0600 would hide a shared cache from others
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_entry(path: Path, key: dict) -> tuple[Any, str | None]:
    """``(value, None)`` for a sound task file, ``(None, reason)`` for a corrupt one; raises
    ``FileNotFoundError`` when there is none."""
    data = path.read_bytes()
    head, sep, payload = data[len(_MAGIC):].partition(b"\n")
    if not data.startswith(_MAGIC) or not sep:
        if data.startswith(_MAGIC[:14]) and data[:len(_MAGIC)] != _MAGIC[:len(data)]:
            return None, f"old format {data[:len(_MAGIC)].strip().decode(errors='replace')!r}"
        return None, "truncated" if _MAGIC.startswith(data[:len(_MAGIC)]) else "bad magic"
    try:
        stored = json.loads(head)["key"]
    except (ValueError, KeyError, TypeError):
        return None, "unreadable header"
    if stored != key:
        task = stored.get("task") if isinstance(stored, dict) else None
        return None, f"key mismatch: the file holds task {task}"
    if data != _entry(key, payload):
        return None, "checksum mismatch"
    try:
        return loads_payload(payload), None
    except PayloadError as e:
        return None, f"unreadable payload: {e}"


@dataclasses.dataclass(frozen=True)
class _Store:
    """One sweep's cache folder: one file per task, named by a hash of the task's key."""

    folder: Path
    base: dict   # the key's parts shared by every task of the sweep

    def key(self, task: dict) -> dict:
        return {**self.base, "task": _canon(task)}

    def path(self, key: dict) -> Path:
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        return self.folder / f"{digest[:32]}.task"

    def load(self, task: dict) -> tuple[bool, Any, str | None]:
        """``(found, value, reason)``: reason names the corruption of a file that failed."""
        key = self.key(task)
        try:
            value, reason = _read_entry(self.path(key), key)
        except FileNotFoundError:
            return False, None, None
        except OSError as e:
            value, reason = None, f"unreadable: {e.strerror or type(e).__name__}"
        return reason is None, value, reason

    def save(self, task: dict, value: Any) -> None:
        """Store one result; a result that is not plain data is not cached (one warning line
        per sweep folder: the sweep still returns it)."""
        key = self.key(task)
        try:
            _write_entry(self.path(key), key, value)
        except PayloadError as e:
            if self.folder not in _UNCACHEABLE:
                _UNCACHEABLE.add(self.folder)
                print(f"[cache] {self.folder.name}: task {task} not cached ({e}); return "
                      "plain values (floats, ints, strings, lists, dicts, NumPy arrays, "
                      "DataFrames)", file=sys.stderr, flush=True)
        except OSError as e:     # a full disk, a read-only folder: the cache is optional
            root = self.folder.parent
            if root not in _UNWRITABLE:
                _UNWRITABLE.add(root)
                why = e.strerror or type(e).__name__
                print(f"[cache] cannot write the cache folder {root} ({why}): results are "
                      "computed, not cached (what it holds is still read)",
                      file=sys.stderr, flush=True)


_UNCACHEABLE: set[Path] = set()
#: cache roots a write failed in (one line each per process: a full disk or read-only
#: folder is named once, not once per task)
_UNWRITABLE: set[Path] = set()


def _open_store(fn: Callable, config: Any, name: str, dtype: str | None,
                cache: bool | str | Path | None) -> _Store | None:
    """The sweep's store (``None`` when caching is off)."""
    if not _use_cache(cache):
        return None
    root = Path(cache) if isinstance(cache, (str, Path)) else cache_dir(config)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    fn_id = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    from . import mutations

    base = {"sweep": name, "fn": fn_id, "config": _config_digest(config),
            "code": code_digest(fn, config), "dtype": dtype, "platform": _platform(),
            "mutations": sorted(mutations.active())}
    return _Store(root / safe, base)


# --------------------------------------------------------------------------- task runners
@dataclasses.dataclass(frozen=True)
class Uncached:
    """A task result that goes into the table but not into the cache (``no_cache``)."""

    value: Any


def no_cache(value: Any) -> Uncached:
    """Return this from a task function for a result that must not be cached: a transient
    failure (a dead kernel, a timeout) is then run again by the next sweep instead of being
    served as that task's result. The table gets ``value`` itself."""
    return Uncached(value)


def _compute(fn: Callable, config: Any, task: dict, dtype: str | None) -> Any:
    """Run one task (in this or a worker process) under the caller's torch default dtype."""
    if dtype is not None:
        import torch

        old = torch.get_default_dtype()
        torch.set_default_dtype(getattr(torch, dtype))
        try:
            return fn(config, dict(task))
        finally:
            torch.set_default_dtype(old)
    return fn(config, dict(task))


def _indexed(i: int, fn: Callable, config: Any, task: dict, dtype: str | None,
             mutation_ids: tuple[str, ...] = ()):
    """A task as a worker runs it: first the caller's active mutations are planted here
    (``mutations.sync``: idempotent, and undoes a worker's leftover entries from an earlier
    sweep), then the task."""
    from . import mutations

    mutations.sync(mutation_ids)
    return i, _compute(fn, config, task, dtype)


# --------------------------------------------------------------------------- backends
def _dask_client():
    """The Dask client: ``$DLTHEORY_DASK_SCHEDULER``, else the current one, else a new
    local cluster (kept for the rest of the process)."""
    global _DASK_CLIENT
    from distributed import Client

    addr = validation.env(ENV_DASK_SCHEDULER)
    if addr:
        if _DASK_CLIENT is None or _DASK_CLIENT.scheduler.address != addr:
            _DASK_CLIENT = Client(addr)
        return _DASK_CLIENT
    with contextlib.suppress(ValueError):
        return Client.current()
    if _DASK_CLIENT is None:
        _DASK_CLIENT = Client(processes=True)
    return _DASK_CLIENT


@contextlib.contextmanager
def _backend_context(backend: str, n_jobs: int | None):
    import joblib

    if backend == "active":
        yield n_jobs
    elif backend == "dask":
        _dask_client()
        with joblib.parallel_config(backend="dask"):
            yield n_jobs if n_jobs is not None else -1
    else:
        jobs = n_jobs if n_jobs is not None else validation.env(ENV_JOBS, -1)
        with joblib.parallel_config(backend=backend):
            yield jobs


# --------------------------------------------------------------------------- sweep
def _check_config(config: Any) -> None:
    if not (dataclasses.is_dataclass(config) and not isinstance(config, type)
            and type(config).__dataclass_params__.frozen):
        raise TypeError(
            f"config must be a frozen dataclass instance (it is part of the cache key), "
            f"got {type(config).__name__}"
        )


def _is_frame(x: Any) -> bool:
    return hasattr(x, "columns") and hasattr(x, "iloc")


def _frame(task: dict, result: Any, fn_name: str):
    """One task's rows as a DataFrame, the task's keys as the first columns."""
    import pandas as pd

    if not _is_frame(result):
        return pd.DataFrame(_rows(task, result, fn_name))
    df = result.reset_index(drop=True).copy()
    clash = [k for k in task if k in df.columns and not (df[k] == task[k]).all()]
    if clash:
        raise ValueError(f"{fn_name} returned columns that clash with the task's: {clash}")
    for k in reversed(list(task)):
        if k in df.columns:
            df = df.drop(columns=k)
        df.insert(0, k, [task[k]] * len(df))
    return df


def _rows(task: dict, result: Any, fn_name: str) -> list[dict]:
    recs = [result] if isinstance(result, dict) else list(result)
    out = []
    for r in recs:
        if not isinstance(r, dict):
            raise TypeError(f"{fn_name} must return a dict or a list of dicts, got {type(r).__name__}")
        clash = [k for k in r if k in task and r[k] != task[k]]
        if clash:
            raise ValueError(f"{fn_name} returned keys that clash with the task's: {clash}")
        out.append({**task, **r})
    return out


def _use_cache(cache: bool | str | Path | None) -> bool:
    if cache is None:
        return validation.env(ENV_CACHE, True)
    return cache is not False


def _round_groups(tasks: list[dict], rounds: str | Callable[[dict], int] | None) -> list[list[int]]:
    """Task indices per round: rounds in ascending order of their index, each in task order
    (one round of every task when ``rounds`` is None)."""
    if rounds is None:
        return [list(range(len(tasks)))] if tasks else []
    groups: dict[Any, list[int]] = {}
    for i, t in enumerate(tasks):
        if isinstance(rounds, str) and rounds not in t:
            raise ValueError(f"rounds={rounds!r} is not a key of task {t}")
        groups.setdefault(t[rounds] if isinstance(rounds, str) else rounds(t), []).append(i)
    return [groups[r] for r in sorted(groups)]


def _table(tasks: list[dict], results: dict[int, Any], fn_name: str):
    """The tidy table of the tasks in ``results``, in task order."""
    import pandas as pd

    order = sorted(results)
    if not any(_is_frame(results[i]) for i in order):      # fast path: records
        return pd.DataFrame([r for i in order for r in _rows(tasks[i], results[i], fn_name)])
    return pd.concat([_frame(tasks[i], results[i], fn_name) for i in order], ignore_index=True)


class _Run:
    """One sweep call: its tasks, cache, backend, results so far, progress bar and the wall
    time per computed task (what a budget's round estimate uses)."""

    def __init__(self, fn, config, tasks, name, store, backend, n_jobs, show):
        self.fn, self.config, self.tasks, self.name = fn, config, tasks, name
        self.store, self.backend, self.n_jobs, self.show = store, backend, n_jobs, show
        self.dtype = _torch_dtype()
        from . import mutations

        self.mutation_ids = tuple(mutations.active())
        self.results: dict[int, Any] = {}
        self.corrupt: dict[int, str] = {}
        self.seconds, self.computed = 0.0, 0
        self.cost: dict[int, float] = {}   # place in its round -> measured seconds of a task
        self.whole = True                  # this round is the first (see FIRST_ROUND_WHOLE)
        self.rounds_done = 0               # rounds completed so far
        self.place: dict[int, int] = {}    # task index -> place in its round
        self.bar = None
        self.beat: _Heartbeat | None = None
        self.n_rounds = 1                  # rounds planned (set by ``sweep``)

    def load(self, group: list[int]) -> tuple[dict[int, Any], list[int]]:
        """The cached results of a round's tasks, and the tasks left to compute."""
        loaded, todo = {}, []
        for i in group:
            found, value, reason = (self.store.load(self.tasks[i]) if self.store
                                    else (False, None, None))
            if found:
                loaded[i] = value
            else:
                todo.append(i)
                if reason:
                    self.corrupt[i] = reason
        return loaded, todo

    def fits(self, todo: list[int], allotted: float | None, elapsed: float) -> int:
        """How many of the next tasks ``todo`` (uncached, in run order) to start now: all
        without a budget (``allotted is None``); else as many as fit in what is left of the
        allotment (``allotted - elapsed`` seconds) and of the chapter's budget, each at its
        estimated cost: the measured time of the task at the same place in an earlier
        round, else the longest task measured so far in this sweep. Before any task of this
        sweep was timed, one task (a worker's worth on a parallel backend) starts when the
        time left is positive; when the sweep's share is spent but the chapter's budget is
        not, one task still starts if the sweep has no result at all (under the budget's
        deadline, ``budget.deadline``); with the chapter's budget spent, ``budget.Spent``.
        Sequential sweeps are asked again before every task."""
        if not todo or allotted is None or (first_round_whole() and self.whole):
            return len(todo)
        left = min(allotted - elapsed, budget.remaining() or 0.0)
        if left <= 0:           # a sweep's share spent: one task if it has no row yet
            if self.results:
                return 0
            if not budget.remaining():
                raise budget.Spent(self.name, "no time left before its first task")
            return 1
        if not self.cost:
            return min(len(todo), 1 if self.backend == "sequential" else _workers(self.n_jobs))
        worst, n, total = max(self.cost.values()), 0, 0.0
        for i in todo if self.backend != "sequential" else todo[:1]:
            total += self.cost.get(self.place.get(i, -1), worst)
            if total > left:
                break
            n += 1
        return n

    def accept(self, loaded: dict[int, Any]) -> None:
        self.results.update(loaded)
        _count("cached", len(loaded))
        if self.bar is not None:
            self.bar.update(len(loaded))

    def compute(self, todo: list[int]) -> None:
        """Compute the tasks (each stored as it arrives) and measure their wall time."""
        if not todo:
            return
        if self.show and self.bar is None:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=len(self.tasks), initial=len(self.results), desc=self.name,
                            unit="task", leave=False)
        if self.bar is None and self.beat is None and heartbeat_enabled():
            self.beat = _Heartbeat(self)
        t0 = budget.clock()
        results = self._execute(todo)
        try:
            for _ in todo:                          # one result per task, as they finish
                with budget.deadline(self.name):   # a task running at the deadline: Spent
                    i, value = next(results)
                self._done(i, value)                # stored outside the deadline
        finally:
            results.close()
        took = budget.clock() - t0
        self.seconds += took
        self.computed += len(todo)
        for i in todo:                  # a parallel batch: its wall time shared out
            self.cost[self.place.get(i, -1)] = took / len(todo)

    def _execute(self, todo: list[int]):
        """``(index, result)`` pairs from the backend, as they finish."""
        args = (self.fn, self.config)
        if self.backend == "sequential":
            yield from ((i, _compute(*args, self.tasks[i], self.dtype)) for i in todo)
            return
        import joblib

        with _backend_context(self.backend, self.n_jobs) as jobs:
            par = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
            yield from par(joblib.delayed(_indexed)(i, *args, self.tasks[i], self.dtype,
                                                    self.mutation_ids)
                           for i in todo)

    def _done(self, i: int, value: Any) -> None:
        keep = not isinstance(value, Uncached)
        value = value.value if not keep else value
        if self.store is not None and keep:
            self.store.save(self.tasks[i], value)
        if i in self.corrupt:
            print(f"[cache] {self.name}: task {self.tasks[i]} corrupt ({self.corrupt.pop(i)}); "
                  "recomputed", file=sys.stderr, flush=True)
        self.results[i] = value
        _count("computed")
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.beat is not None:
            self.beat.stop()


#: seconds between two progress lines of a sweep run without a progress bar
HEARTBEAT_S = 20.0


def heartbeat_enabled() -> bool:
    """Progress lines on stderr (``_Heartbeat``) where no bar shows: in a script or a
    pipe, not in a notebook (nbmake and the built book keep clean outputs), unless
    ``$DLTHEORY_PROGRESS=0``."""
    return validation.env(runtime.ENV_PROGRESS) is not False and not runtime.in_notebook()


class _Heartbeat:
    """One line to stderr every ``HEARTBEAT_S`` seconds while a sweep computes, from a
    daemon thread, so that a run outside a notebook without a progress bar (stderr not a
    terminal, ``CI``, ``progress=False``) is never silent for long: ``[sweep] pf_curves:
    12/40 tasks, 3/10 rounds, 61 s``. A sweep shorter than ``HEARTBEAT_S`` prints
    nothing."""

    def __init__(self, run: _Run):
        self.run, self.t0 = run, budget.clock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"heartbeat {run.name}",
                                       daemon=True)
        self.thread.start()

    def line(self) -> str:
        r = self.run
        rounds = f", {r.rounds_done}/{r.n_rounds} rounds" if r.n_rounds > 1 else ""
        return (f"[sweep] {r.name}: {len(r.results)}/{len(r.tasks)} tasks{rounds}, "
                f"{budget.clock() - self.t0:.0f} s")

    def _loop(self) -> None:
        while not self.done.wait(HEARTBEAT_S):
            print(self.line(), file=sys.stderr, flush=True)

    def stop(self) -> None:
        """No line after this returns (a line being printed is finished first)."""
        self.done.set()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout=5.0)


# A budget cuts at task granularity from the first round on: every chapter copes with a
# part of a round (the claims a cut sweep feeds are INCONCLUSIVE "had k of n tasks"). True:
# the first round of every sweep runs whole (a budget then bounds only the later rounds).
# ``$DLTHEORY_FIRST_ROUND_WHOLE`` (a flag: 1/0) overrides it.
FIRST_ROUND_WHOLE = False
ENV_FIRST_ROUND_WHOLE = "DLTHEORY_FIRST_ROUND_WHOLE"


def first_round_whole() -> bool:
    """Whether a budget spares the first round of a sweep (:data:`FIRST_ROUND_WHOLE`,
    overridden by ``$DLTHEORY_FIRST_ROUND_WHOLE``, a declared flag of
    :data:`dltheory.validation.ENVIRONMENT`)."""
    return bool(validation.env(ENV_FIRST_ROUND_WHOLE, FIRST_ROUND_WHOLE))


def _workers(n_jobs: int | None) -> int:
    """Worker processes a parallel backend uses (for the first batch under a budget)."""
    if n_jobs is not None and n_jobs > 0:
        return n_jobs
    n = validation.env(ENV_JOBS, -1) if n_jobs is None else n_jobs
    return n if n > 0 else max(1, (os.cpu_count() or 1) + 1 + n)


def _run_rounds(run: _Run, groups: list[list[int]], allotted: float | None
                ) -> tuple[int, list[int]]:
    """Run the rounds in order, each as far as the budget allows (``allotted``: the sweep's
    seconds, ``None``: everything); returns ``(rounds completed, task indices run, in run
    order)``. ``run.rounds_done`` follows along (read when ``budget.Spent`` interrupts)."""
    t0, ran = budget.clock(), []
    for group in groups:
        run.whole = run.rounds_done == 0
        run.place.update({i: p for p, i in enumerate(group)})
        loaded, todo = run.load(group)
        pos = 0
        if allotted is None:                # no budget: the round in one go
            run.accept(loaded)
            run.compute(todo)
            ran.extend(group)
            pos = len(group)
        while pos < len(group):             # the longest prefix that fits, in run order
            if group[pos] in loaded:
                run.accept({group[pos]: loaded[group[pos]]})
                ran.append(group[pos])
                pos += 1
                continue
            end = pos
            while end < len(group) and group[end] not in loaded:
                end += 1
            n = run.fits(group[pos:end], allotted, budget.clock() - t0)
            if n == 0:
                break
            run.compute(group[pos:pos + n])
            ran.extend(group[pos:pos + n])
            pos += n
        if pos < len(group):
            break
        run.rounds_done += 1
    return run.rounds_done, ran


def sweep(
    fn: Callable[[Any, dict], dict | Sequence[dict]],
    tasks: Iterable[dict],
    *,
    config: Any,
    name: str | None = None,
    backend: str | None = None,
    n_jobs: int | None = None,
    cache: bool | str | Path | None = None,
    progress: bool | None = None,
    rounds: str | Callable[[dict], int] | None = None,
):
    """Run ``fn(config, task)`` for every task and return one tidy DataFrame.

    Parameters
    ----------
    fn
        Module-level pure function ``(config, task) -> dict | list[dict]``: a dict (one
        row), a list of dicts or a DataFrame (several rows).
    tasks
        Dicts of plain values; their keys are prepended to every returned row.
    config
        A frozen dataclass of plain values (part of the cache key, except the fields
        ``budget`` and ``budget_weights``).
    name
        Label of the progress bar, of the cache folder and of the budget's record
        (default ``fn.__name__``).
    backend
        ``sequential`` | ``loky`` | ``dask`` | ``active`` (default ``$DLTHEORY_BACKEND``
        or ``sequential``).
    n_jobs
        Workers for loky/dask (default all).
    cache
        ``True``/``False``, or a folder (default on, under ``cache_dir(config)``).
    progress
        Show a tqdm bar (default ``runtime.progress_enabled()``); without one, outside a
        notebook, a line on stderr every ``HEARTBEAT_S`` seconds (``heartbeat_enabled``).
    rounds
        A task key (``"seed"``) or ``callable(task) -> int``: run the tasks in rounds,
        ascending, as far as the chapter budget allows (see the module docstring); the
        table then holds the completed rounds and ``df.attrs["rounds"] = (done, planned)``.
    """
    _check_config(config)
    tasks = [dict(t) for t in tasks]
    for t in tasks:
        if not all(isinstance(k, str) for k in t):
            raise TypeError(f"task keys must be strings, got {list(t)}")
    b = resolve_backend(backend)
    name = name or getattr(fn, "__name__", "sweep")
    groups = _round_groups(tasks, rounds)
    show = runtime.progress_enabled() if progress is None else progress
    run = _Run(fn, config, tasks, name, _open_store(fn, config, name, _torch_dtype(), cache),
               b, n_jobs, show)
    run.n_rounds = len(groups)
    allotted = budget.allot(name) if rounds is not None else None
    try:
        done, ran = _run_rounds(run, groups, allotted)
    except budget.Spent as spent:   # the chapter's budget ran out in this sweep
        spent.tasks = (len(run.results), len(tasks))
        budget.note_rounds(name, run.rounds_done, len(groups), spent.tasks)
        raise
    finally:
        run.close()
        budget.note_seconds(name, run.seconds)
    # the table: the completed rounds, or, when none completed, the part of the first
    # round that ran (a prefix in run order, so the table is fixed by what ran)
    keep = [i for g in groups[:done] for i in g] if done else ran
    kept = {i: run.results[i] for i in keep}
    df = _table(tasks, kept, getattr(fn, "__qualname__", repr(fn)))
    # every sweep, whatever the chapter: distinct seeds give distinct draws, and the
    # declared grid is the grid that ran (a violation is a FAIL on the chapter's ledger)
    invariants.check(name, tasks, run.results, kept)
    if rounds is not None:
        df.attrs["rounds"] = (done, len(groups))
        df.attrs["tasks"] = (len(kept), len(tasks))
        budget.note_rounds(name, done, len(groups), (len(kept), len(tasks)))
    return df


# the invariants module compares tasks and results the way the engine keys and stores them
invariants.use_engine(_canon, dumps_payload, PayloadError)
