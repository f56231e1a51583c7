#!/usr/bin/env python3
"""Execute the book's chapters, a few at a time, and put them into the execution cache.

    python scripts/execute_chapters.py CACHE_DIR [--jobs 2] [--timeout 1200] [book/NN_x.py ...]

``scripts/book.sh`` runs this before ``jupyter-book build``: the build then finds every
chapter in the execution cache (jupyter-cache, keyed by the code of the chapter's cells)
and only renders. Without it MyST-NB would execute the chapters one after the other, in
silence, for as long as they take.

- Chapters run in parallel (``--jobs``, default 2), longest first (by their last run time),
  each in its own kernel with one thread (``OMP_NUM_THREADS=1``), in ``book/`` as MyST-NB
  would run them, and from the same ``.py`` source, so the cache key is the one the build
  computes.
- Each chapter says what it is doing: a line when it enters a section (``## `` heading),
  and a line at least every 20 s while a cell runs (section, cell number, elapsed time).
- A chapter is run again exactly when something that decides its outputs changed since its
  last run: its code cells (the execution cache's key), the package code its verdicts
  depend on (``provenance.package_sha256(chapter)``) or its figure modules (its
  subpackage's ``figures.py`` and ``plotting.py``: figures are outputs too). The digest of
  the last two is kept in ``<cache>/dltheory_inputs.json`` (:func:`inputs_digest`). A
  figure-only change runs the chapter again, but its sweeps come from the sweep cache,
  which only the code the tasks run invalidates. One that fails prints the end of its
  traceback, is not cached, and makes this script exit 1 after the others finished.
- A chapter whose ledger records a mutation (``identity["mutation"]``, a planted error) is
  not rendered: this script exits 1 naming it; with ``$DLTHEORY_MUTATION`` set it refuses
  to start.
- ``--hold-lock -- CMD ...`` runs CMD holding ``_build/.book.lock`` (``filelock``): a second
  build in the same checkout waits, saying which process holds it (``scripts/book.sh``).
- The timing and input records are written atomically; an empty or cut one is named in one
  warning line and rebuilt. An executed chapter's source gets a new modification time, so Sphinx reads it
  again even when its text did not change (e.g. after the cache was deleted).
- Kernels talk to this script over CurveZMQ (see ``scripts/sphinxext/kernel_encryption.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
HEARTBEAT_S = 20
HEADING = re.compile(r"^##\s+(.+)$", re.M)
ANSI = re.compile(r"\x1b\[[0-9;]*m")
FORCED = "execution_mode: force"   # pages MyST-NB executes on every build (they read ledgers)
LOCK = ROOT / "_build" / ".book.lock"
FIGURE_MODULES = ("figures.py",)


def chapter_name(src: Path) -> str:
    """The ledger name of a chapter source: ``book/03_sparse_scaling.py`` -> ``sparse_scaling``."""
    stem = src.stem
    return stem[3:] if len(stem) > 3 and stem[:2].isdigit() and stem[2] == "_" else stem


def inputs_digest(src: Path, package_dir: Path | None = None) -> str:
    """sha256 of what decides a chapter's outputs besides its own code cells: the package
    code its verdicts depend on (``provenance.package_sha256``) and its figure modules
    (every ``figures.py`` of its own modules, and ``plotting.py``). A page that is no
    chapter gets the whole package."""
    import hashlib

    from dltheory import provenance

    root = Path(package_dir) if package_dir is not None else Path(provenance.__file__).parent
    name = chapter_name(src)
    own = getattr(provenance, "CHAPTER_MODULES", {}).get(name)
    h = hashlib.sha256()
    h.update(provenance.package_sha256(name if own else None, package_dir=root).encode())
    figs = [root / "plotting.py"]
    for m in own or ():
        base = root / m
        if base.is_dir():
            figs += sorted(p for p in base.rglob("*.py") if p.name in FIGURE_MODULES)
    for f in figs:
        if f.is_file():
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def ledger_mutation(src: Path, scale: str | None = None) -> str | None:
    """The mutation recorded in the chapter's ledger at this scale (``None``: none, or no
    ledger); read defensively, so a ledger without an identity counts as unmutated."""
    from dltheory import runtime

    path = runtime.results_dir() / f"{chapter_name(src)}.{runtime.scale(scale)}.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ident = data.get("identity") if isinstance(data, dict) else None
    return (ident or {}).get("mutation") if isinstance(ident, dict) else None


def hold_lock(cmd: list[str], lock: Path = LOCK) -> int:
    """Run ``cmd`` holding ``lock``; when another process holds it, say which and wait."""
    from filelock import FileLock, Timeout

    lock.parent.mkdir(parents=True, exist_ok=True)
    pid_file = lock.with_suffix(".pid")
    fl = FileLock(str(lock))
    try:
        fl.acquire(timeout=0)
    except Timeout:
        try:
            holder = pid_file.read_text().strip()
        except OSError:
            holder = "unknown"
        print(f"another build holds {lock.relative_to(ROOT) if lock.is_relative_to(ROOT) else lock}"
              f" (PID {holder}); waiting for it to finish", flush=True)
        fl.acquire()
    try:
        pid_file.write_text(f"{os.getpid()}\n")
        env = {**os.environ, "DLTHEORY_BOOK_LOCK_HELD": "1"}
        return subprocess.call(cmd, env=env)
    finally:
        with contextlib.suppress(OSError):
            pid_file.unlink()
        fl.release()


def chapters() -> list[Path]:
    """The executable pages of the TOC (jupytext .py sources), without those the build
    executes itself every time (``mystnb: execution_mode: force`` in their header)."""
    from dltheory import ledgers

    files = ledgers.toc_files(ROOT / "_toc.yml")
    out = []
    for f in files:
        p = (ROOT / f).with_suffix(".py")
        text = p.read_text() if p.exists() else ""
        if text.startswith("# ---\n# jupyter:") and FORCED not in text.split("# ---\n", 2)[1]:
            out.append(p)
    return out


def _label(src: Path) -> str:
    return src.stem


def _say(label: str, msg: str) -> None:
    # one write per line: two chapters share the terminal, and a line written in pieces
    # could be split by the other's
    sys.stdout.write(f"  [{label}] {msg}\n")
    sys.stdout.flush()


def read_source(src: Path):
    """The notebook MyST-NB builds from ``src`` (same reader, so the same cache key)."""
    import jupytext

    return jupytext.reads(src.read_text(), fmt="py:percent")


def run_one(src: Path, out: Path, timeout: int) -> int:
    """Execute one chapter in this process, reporting progress; write the executed notebook."""
    sys.path.insert(0, str(ROOT / "scripts" / "sphinxext"))
    import kernel_encryption
    import nbformat
    from nbclient import NotebookClient

    kernel_encryption.use_encryption()
    label = _label(src)
    nb = read_source(src)
    original_meta = [copy.deepcopy(c.metadata) for c in nb.cells]
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    section = {}
    current = "start"
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown":
            heads = HEADING.findall(c.source)
            if heads:
                current = heads[-1].strip()
        section[i] = current
    state = {"cell": None, "t_cell": time.time(), "last": time.time(), "section": None}
    t0 = time.time()
    lock = threading.Lock()

    def say(msg):
        with lock:
            _say(label, f"{msg} ({time.time() - t0:.0f} s)")
            state["last"] = time.time()

    def on_start(cell, cell_index):
        n = code.index(cell_index) + 1
        state.update(cell=(cell_index, n), t_cell=time.time())
        if section[cell_index] != state["section"]:
            state["section"] = section[cell_index]
            say(f"cell {n}/{len(code)}: {section[cell_index]}")

    stop = threading.Event()

    def heartbeat():
        while not stop.wait(1.0):
            if state["cell"] and time.time() - state["last"] >= HEARTBEAT_S:
                idx, n = state["cell"]
                say(f"at cell {n}/{len(code)} ({section[idx]}) for "
                    f"{time.time() - state['t_cell']:.0f} s")

    threading.Thread(target=heartbeat, daemon=True).start()
    client = NotebookClient(nb, timeout=timeout, allow_errors=False, record_timing=False,
                            resources={"metadata": {"path": str(src.parent)}},
                            on_cell_execute=on_start)
    say("starting kernel")
    try:
        client.execute()
    except Exception as err:   # CellExecutionError, timeouts, a dead kernel
        stop.set()
        text = ANSI.sub("", str(err)).strip().splitlines()
        _say(label, f"FAILED after {time.time() - t0:.0f} s in {state['section']}:")
        sys.stdout.write("".join(f"      {line}\n" for line in text[-25:]))
        sys.stdout.flush()
        return 1
    stop.set()
    for c, meta in zip(nb.cells, original_meta, strict=True):
        c.metadata = meta   # the cache key hashes cell metadata: keep the source's
    nb.metadata.setdefault("dltheory", {})["execution_seconds"] = round(time.time() - t0, 1)
    nbformat.write(nb, out)
    _say(label, f"done in {time.time() - t0:.0f} s")
    return 0


def select(srcs: list[Path], cache, inputs: dict, digest: dict) -> list[Path]:
    """The chapters to execute, each with a line saying why (or why not): its code cells
    are not in the execution cache, or the digest of the package and figure code it uses
    (``digest[src]``) is not the one recorded at its last run (``inputs``), or its ledger
    records a mutation."""
    todo = []
    for src in srcs:
        try:
            cache.match_cache_notebook(read_source(src))
        except KeyError:
            todo.append(src)
            continue
        if inputs.get(src.stem) != digest[src]:
            print(f"  [{_label(src)}] the package code or figure modules it uses changed "
                  "since its last run: executed again", flush=True)
            todo.append(src)
        elif ledger_mutation(src):
            print(f"  [{_label(src)}] its ledger was written under a mutation: executed again",
                  flush=True)
            todo.append(src)
        else:
            print(f"  [{_label(src)}] unchanged since its last run: taken from the cache",
                  flush=True)
    return todo


def _jobs(raw: str) -> int:
    """``--jobs``: parsed like ``$DLTHEORY_BOOK_JOBS`` (an integer >= 1, never 0: no
    chapter would ever start, and the build would wait forever holding its lock)."""
    from dltheory import validation

    try:
        return validation.ENVIRONMENT["DLTHEORY_BOOK_JOBS"].parse("--jobs", raw)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).replace("$--jobs", "--jobs")) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    from dltheory import validation

    try:   # every variable this build reads, before the lock is taken or a chapter starts
        validation.check_environment()
        jobs = validation.env("DLTHEORY_BOOK_JOBS", 2)
    except ValueError as e:
        print(f"execute_chapters: {e}", file=sys.stderr, flush=True)
        return 2
    if argv[:1] == ["--hold-lock"]:
        cmd = argv[2:] if argv[1:2] == ["--"] else argv[1:]
        return hold_lock(cmd)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache", type=Path, help="jupyter-cache folder of this scale")
    ap.add_argument("files", nargs="*", type=Path, help="chapters (default: the TOC's)")
    ap.add_argument("--jobs", type=_jobs, default=jobs,
                    help="chapters at a time (default $DLTHEORY_BOOK_JOBS, else 2)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per cell")
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)   # worker mode
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        return run_one(args.one.resolve(), args.out, args.timeout)

    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from dltheory import atomic, budget

    mutation = (os.environ.get("DLTHEORY_MUTATION") or "").strip()
    if mutation:
        print(f"DLTHEORY_MUTATION={mutation} is set: a book built now would show a planted "
              "error; unset it to build the book", flush=True)
        return 1
    cache = get_cache(str(args.cache))
    times_file = args.cache / "dltheory_times.json"
    inputs_file = args.cache / "dltheory_inputs.json"
    times = _record(atomic.read_json(times_file, {}, what="timing file"))
    inputs = _record(atomic.read_json(inputs_file, {}, what="input-digest file"))
    srcs = [p.resolve() for p in (args.files or chapters())]
    digest = {src: inputs_digest(src) for src in srcs}
    todo = select(srcs, cache, inputs, digest)
    scale = args.cache.resolve().name        # _build/.jupyter_cache/<scale>
    # how many of the chapters this build executes (book.sh names its time record by it)
    atomic.write_text(ROOT / "_build" / "config" / f"executed.{scale}",
                      f"{len(todo)} {len(srcs)}\n")
    if not todo:
        return 0
    todo.sort(key=lambda p: -times.get(p.stem, 1e9))   # unknown or slow ones first
    work = ROOT / "_build" / "executed" / args.cache.resolve().name   # absolute: workers run in book/
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
    print(f"executing {len(todo)} chapter(s), {args.jobs} at a time: "
          + ", ".join(p.stem for p in todo), flush=True)
    running: dict[Path, tuple[subprocess.Popen, float]] = {}
    failed, pending = [], list(todo)
    while pending or running:
        while pending and len(running) < args.jobs:
            src = pending.pop(0)
            cmd = [sys.executable, __file__, str(args.cache), "--one", str(src),
                   "--out", str(work / f"{src.stem}.ipynb"), "--timeout", str(args.timeout)]
            running[src] = (subprocess.Popen(cmd, env=env, cwd=src.parent), time.time())
        time.sleep(0.5)
        for src, (proc, t_start) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[src]
            if proc.returncode:
                failed.append(src.stem)
                continue
            nb = nbformat.read(work / f"{src.stem}.ipynb", as_version=4)
            seconds = nb.metadata.pop("dltheory", {}).get("execution_seconds",
                                                          time.time() - t_start)
            if ledger_mutation(src):
                print(f"  [{_label(src)}] its ledger records the mutation "
                      f"{ledger_mutation(src)}: not rendered", flush=True)
                failed.append(src.stem)
                continue
            cache.cache_notebook_bundle(CacheBundleIn(nb, str(src),
                                                      data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            times[src.stem] = seconds
            budget.write_times(   # the one record of measured times
                {f"book.sh/{scale}/{src.stem}": round(float(seconds), 1)})
            inputs[src.stem] = digest[src]
            atomic.write_json(times_file, times, indent=1)
            atomic.write_json(inputs_file, inputs, indent=1)
            # Sphinx re-reads only sources newer than its last build: without this, a chapter
            # executed again with unchanged text (its cache deleted) kept its old page
            os.utime(src)
    if failed:
        print("failed: " + ", ".join(failed) + " (the traceback's end is above)", flush=True)
        return 1
    return 0


def _record(data) -> dict:
    """A ``{chapter: value}`` record read back (anything else: rebuilt empty)."""
    return dict(data) if isinstance(data, dict) else {}


if __name__ == "__main__":
    sys.exit(main())
