"""Where a result came from: the commit, whether the tree was dirty, and content hashes.

A claims ledger carries a ``provenance`` record so that a page showing it can tell whether
it still describes the code being built::

    {"commit": "3f2c...", "dirty": false, "package_version": "0.2.0",
     "source_sha256": {"chapter": "ab12...", "package": "cd34..."},
     "created": "2026-11-30T18:02:11Z", "device": "cpu", "scale": "smoke"}

``commit`` and ``dirty`` are ``None`` outside a git checkout (Colab installs from a wheel);
``source_sha256["chapter"]`` is ``None`` when the chapter's source file is not found.

Both hashes cover the code that decides a chapter's verdicts, and nothing else, so that a
record goes stale when (and only when) that code changes:

* ``chapter``: the chapter's code cells (:func:`code_sha256`); its prose, cell tags,
  comments and blank lines are left out, so rewording a paragraph does not invalidate a
  calibration.
* ``package``: the ``*.py`` files (without comment and blank lines) of the installed
  ``dltheory`` package that the chapter runs (in a git checkout only the files git tracks:
  an untracked editor backup changes nothing, :func:`tracked_files`) (:func:`package_sha256` with its name): the
  shared modules and the chapter's own subpackage, keyed by path relative to the package
  so the hash is the same on every machine. Other chapters' modules, the figure modules
  (they draw, they never judge) and the page-side readers (``ledgers``, ``calibration``)
  are left out. Without a chapter name it covers every file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import subprocess
from pathlib import Path

from . import chapter as _chapter
from . import runtime

__all__ = ["chapter_source", "git_state", "package_sha256", "file_sha256", "code_sha256",
           "record", "run_identity", "CHAPTER_MODULES"]


#: chapter (ledger name) -> its own subpackage, relative to the package (``chapter.REGISTRY``)
CHAPTER_MODULES = _chapter.View(lambda c: (c.subpackage,))
#: files that never decide a verdict: figures draw, the page-side readers re-check, the
#: toolkit (tools, quadratic) serves a reader's own model
NOT_JUDGING = ("figures.py", "plotting.py", "ledgers.py", "calibration.py",
               "tools.py", "quadratic.py", "toolkit.py")


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def code_sha256(path: str | Path) -> str:
    """SHA-256 of the code cells of a percent-format notebook source (hex).

    Markdown cells, cell headers (their tags and titles), comment lines and blank lines are
    dropped (:func:`_logic`); every other line counts."""
    keep, code = [], True
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            code = "[markdown]" not in line and "[md]" not in line
            continue
        if code:
            keep.append(line)
    return hashlib.sha256(_logic("\n".join(keep)).encode()).hexdigest()


def _logic(text: str) -> str:
    """``text`` without blank lines, comment-only lines and trailing spaces: what runs.

    Plain text rules, not the ``ast``, so that the hash is the same under every Python
    version (a docstring still counts; a comment at the end of a code line too)."""
    return "\n".join(ln.rstrip() for ln in text.splitlines()
                     if ln.strip() and not ln.lstrip().startswith("#"))


def tracked_files(root: Path) -> set[Path] | None:
    """The files under ``root`` that git tracks (resolved paths), or ``None`` when ``root``
    is not inside a git checkout, git is missing, or git tracks nothing there (an installed
    package, a wheel in Colab, a virtual environment inside a checkout): then every file
    counts. An untracked file (an editor backup ``foo_backup.py``) is not the package's
    code, so it must not mark a record stale."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "."], cwd=root,
                             capture_output=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
    return {(root / n).resolve() for n in names} or None


def _judging_files(root: Path, chapter: str | None) -> list[Path]:
    files = [p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts]
    tracked = tracked_files(root)
    if tracked is not None:
        files = [p for p in files if p.resolve() in tracked]
    if chapter is None:
        return files
    if chapter not in CHAPTER_MODULES:
        raise ValueError(f"unknown chapter {chapter!r}; expected one of {sorted(CHAPTER_MODULES)}")
    others = {m for ch, mods in CHAPTER_MODULES.items() if ch != chapter for m in mods}
    return [p for p in files
            if p.relative_to(root).parts[0] not in others and p.name not in NOT_JUDGING]


def package_sha256(chapter: str | None = None, package_dir: str | Path | None = None) -> str:
    """One SHA-256 over the package files that ``chapter`` runs (relative path + bytes,
    sorted; see the module docstring), or over every ``*.py`` file without a chapter."""
    root = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in _judging_files(root, chapter):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(_logic(p.read_text(encoding="utf-8")).encode() + b"\0")
    return h.hexdigest()


def chapter_source(chapter: str, root: str | Path | None = None) -> Path | None:
    """The source of ledger ``chapter``: ``book/NN_<chapter>.py`` under the repository root
    (``None`` when absent, e.g. in Colab, where only the notebook is there)."""
    base = Path(root) if root is not None else runtime.repo_root()
    if chapter in CHAPTER_MODULES:
        path = base / _chapter.get(chapter).book
        return path if path.is_file() else None
    hits = sorted((base / "book").glob(f"[0-9][0-9]_{chapter}.py"))
    return hits[0] if len(hits) == 1 else None


def git_state(root: str | Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout at ``root``; (None, None) outside a git checkout."""
    base = Path(root) if root is not None else runtime.repo_root()
    if not (base / ".git").exists():
        return None, None
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=base, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=base, capture_output=True, text=True, timeout=10,
                                check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit or None, bool(status.strip())


def record(chapter: str, scale: str, device: str, root: str | Path | None = None) -> dict:
    """The provenance record of a ledger written now (see the module docstring)."""
    from . import __version__

    commit, dirty = git_state(root)
    if commit is None:   # an installed copy (Colab): the commit pip installed it from, if any
        commit = runtime.installed_commit()
    src = chapter_source(chapter, root)
    return {
        "commit": commit,
        "dirty": dirty,
        "package_version": __version__,
        "source_sha256": {
            "chapter": code_sha256(src) if src is not None else None,
            "package": package_sha256(chapter if chapter in CHAPTER_MODULES else None),
        },
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": str(device),
        "scale": scale,
    }


def run_identity(cfg, chapter: str) -> dict:
    """The identity of a chapter run, carried by its ledger under ``"identity"``::

        {"scale": "smoke", "knobs": {"ALPHA1": 1.0, "ALPHA2": 0.0}, "seed": 0,
         "defaults": True, "mutation": None, "backend": "sequential", "budget": None,
         "code": {"chapter": <code_sha256 of the book file>, "package": <package_sha256>}}

    ``knobs`` by their parameters-cell names (``SEED`` apart, as ``seed``); ``defaults``:
    knobs and seed equal the preset's (``Config.for_scale(scale)``); ``mutation``: the
    planted entries (``mutations.active()``, joined by ``+``) or ``None``; ``backend``:
    ``experiments.resolve_backend()``; ``budget``: the Config's seconds or ``None``;
    ``code["chapter"]`` is ``None`` where the book file is absent (Colab)."""
    from . import experiments, mutations

    knobs = dict(cfg.knobs)
    seed = knobs.pop("SEED", getattr(cfg, "seed", None))
    default = dict(type(cfg).for_scale(cfg.scale).knobs)
    active = mutations.active()
    src = chapter_source(chapter)
    return {
        "scale": cfg.scale,
        "knobs": knobs,
        "seed": seed,
        "defaults": dict(cfg.knobs) == default,
        "mutation": "+".join(active) if active else None,
        "backend": experiments.resolve_backend(),
        "budget": getattr(cfg, "budget", None),
        "code": {"chapter": code_sha256(src) if src is not None else None,
                 "package": package_sha256(chapter)},
    }
