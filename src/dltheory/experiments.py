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
in ``config``/``task``. Return plain floats/ints/strings (``float(x)``, not a tensor).

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

**Cache and resume.** Every finished task is stored with ``joblib.Memory`` under
``$DLTHEORY_CACHE_DIR`` (default ``<repo>/_build/cache/<scale>``, the scale taken from
``config.scale`` when the Config has one). The key is the task function, ``config``,
``task``, the torch default dtype, whether CUDA is present, and a digest of the source of
the package that defines the task function (all of ``dltheory`` for chapter code), so
editing the code invalidates old results instead of silently reusing them. An interrupted
sweep (Ctrl-C, a time limit, a lost Colab runtime) therefore resumes by running it again:
finished tasks are loaded, only the missing ones are computed, and the table equals an
uninterrupted run. Each sweep's cache lives in a folder named after ``name``; give it a
chapter prefix (``"de_line_search"``) so that chapters running side by side never share one.
``stats()`` counts tasks computed and loaded in this process. ``cache=False`` (or
``DLTHEORY_CACHE=0``) switches the cache off; deleting the folder clears it.

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
import os
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import runtime

BACKENDS = ("sequential", "loky", "dask")
ENV_BACKEND = "DLTHEORY_BACKEND"
ENV_CACHE_DIR = "DLTHEORY_CACHE_DIR"
ENV_CACHE = "DLTHEORY_CACHE"
ENV_JOBS = "DLTHEORY_JOBS"
ENV_DASK_SCHEDULER = "DLTHEORY_DASK_SCHEDULER"

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
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env)
    s = getattr(config, "scale", None)
    return runtime.repo_root() / "_build" / "cache" / runtime.scale(s)


def resolve_backend(backend: str | None = None) -> str:
    """``backend`` if given, else ``$DLTHEORY_BACKEND``, else ``sequential``; ``"active"``
    defers to the caller's ``joblib.parallel_config``. Raises ``ValueError`` otherwise."""
    b = backend if backend is not None else (os.environ.get(ENV_BACKEND) or "sequential")
    b = str(b).strip().lower()
    if b not in (*BACKENDS, "active"):
        raise ValueError(
            f"unknown backend {b!r} (from argument or ${ENV_BACKEND}); "
            f"valid backends: {', '.join(BACKENDS)} (or 'active' for the caller's joblib backend)"
        )
    return b


# --------------------------------------------------------------------------- cache key
@functools.cache
def _tree_digest(root: str) -> str:
    """sha256 over every ``*.py`` file under ``root`` (path and content)."""
    h = hashlib.sha256()
    base = Path(root)
    files = [base] if base.is_file() else sorted(base.rglob("*.py"))
    for f in files:
        h.update(str(f.relative_to(base) if f != base else f.name).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def code_digest(fn: Callable) -> str:
    """A digest of the code behind ``fn``: the source of the top-level package that defines
    it (the whole ``dltheory`` tree for chapter code), or its own module file / source."""
    mod = sys.modules.get(getattr(fn, "__module__", "") or "")
    top = (fn.__module__ or "").split(".")[0]
    parts = []
    pkg = sys.modules.get(top)
    pkg_file = getattr(pkg, "__file__", None)
    if pkg_file and Path(pkg_file).name == "__init__.py":
        parts.append(_tree_digest(str(Path(pkg_file).parent)))
    elif getattr(mod, "__file__", None):
        parts.append(_tree_digest(str(Path(mod.__file__))))
    with contextlib.suppress(OSError, TypeError):
        parts.append(hashlib.sha256(inspect.getsource(fn).encode()).hexdigest())
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


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


# --------------------------------------------------------------------------- task runners
_HANDOFF: list = []   # a result computed elsewhere, persisted by the cached call below


def _call(fn: Callable, config: Any, task: dict, digest: str, dtype: str | None,
          platform: str) -> Any:
    """The cached unit: ``fn(config, task)``. When a worker already computed the result,
    the parent hands it over here so that joblib.Memory stores it under the same key."""
    if _HANDOFF:
        return _HANDOFF.pop()
    return _compute(fn, config, task, dtype)


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


def _indexed(i: int, fn: Callable, config: Any, task: dict, dtype: str | None):
    return i, _compute(fn, config, task, dtype)


# --------------------------------------------------------------------------- backends
def _dask_client():
    """The Dask client: ``$DLTHEORY_DASK_SCHEDULER``, else the current one, else a new
    local cluster (kept for the rest of the process)."""
    global _DASK_CLIENT
    from distributed import Client

    addr = os.environ.get(ENV_DASK_SCHEDULER)
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
        jobs = n_jobs if n_jobs is not None else int(os.environ.get(ENV_JOBS) or -1)
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
        return os.environ.get(ENV_CACHE, "1") not in ("0", "false", "False", "off")
    return cache is not False


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
):
    """Run ``fn(config, task)`` for every task and return one tidy DataFrame.

    fn : module-level pure function ``(config, task) -> dict | list[dict]``.
    fn may return a dict (one row), a list of dicts or a DataFrame (several rows).
    tasks : dicts of plain values; their keys are prepended to every returned row.
    config : a frozen dataclass of plain values (part of the cache key).
    name : label of the progress bar and of the cache folder (default ``fn.__name__``).
    backend : ``sequential`` | ``loky`` | ``dask`` | ``active`` (default ``$DLTHEORY_BACKEND``
        or ``sequential``); n_jobs : workers for loky/dask (default all).
    cache : ``True``/``False``, or a folder (default on, under ``cache_dir(config)``).
    progress : show a tqdm bar (default ``runtime.progress_enabled()``).
    """
    import joblib
    import pandas as pd

    _check_config(config)
    tasks = [dict(t) for t in tasks]
    for t in tasks:
        if not all(isinstance(k, str) for k in t):
            raise TypeError(f"task keys must be strings, got {list(t)}")
    b = resolve_backend(backend)
    name = name or getattr(fn, "__name__", "sweep")
    dtype = _torch_dtype()
    results: list[Any] = [None] * len(tasks)

    cached = None
    if _use_cache(cache):
        root = Path(cache) if isinstance(cache, (str, Path)) else cache_dir(config)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        memory = joblib.Memory(location=str(root / safe), verbose=0)
        cached = memory.cache(_call)
        digest = code_digest(fn)
        plat = _platform()
        key = lambda t: (fn, config, t, digest, dtype, plat)  # noqa: E731

    todo = []
    for i, t in enumerate(tasks):
        if cached is not None and cached.check_call_in_cache(*key(t)):
            results[i] = cached(*key(t))
            _count("cached")
        else:
            todo.append(i)

    show = runtime.progress_enabled() if progress is None else progress
    bar = None
    if show and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), desc=name,
                   unit="task", leave=False)

    def done(i: int, value: Any) -> None:
        if cached is not None:
            _HANDOFF.append(value)
            try:
                value = cached(*key(tasks[i]))
            finally:
                _HANDOFF.clear()
        results[i] = value
        _count("computed")
        if bar is not None:
            bar.update(1)

    try:
        if todo and b == "sequential":
            for i in todo:
                done(i, _compute(fn, config, tasks[i], dtype))
        elif todo:
            with _backend_context(b, n_jobs) as jobs:
                par = joblib.Parallel(n_jobs=jobs, return_as="generator_unordered")
                for i, value in par(joblib.delayed(_indexed)(i, fn, config, tasks[i], dtype)
                                    for i in todo):
                    done(i, value)
    finally:
        if bar is not None:
            bar.close()

    fn_name = getattr(fn, "__qualname__", repr(fn))
    if not any(_is_frame(res) for res in results):     # fast path: records
        rows = [r for t, res in zip(tasks, results, strict=True) for r in _rows(t, res, fn_name)]
        return pd.DataFrame(rows)
    frames = [_frame(t, res, fn_name) for t, res in zip(tasks, results, strict=True)]
    return pd.concat(frames, ignore_index=True)

