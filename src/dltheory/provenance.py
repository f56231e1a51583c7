"""Where a result came from: the commit, whether the tree was dirty, and content hashes.

A claims ledger carries a ``provenance`` record so that a page showing it can tell whether
it still describes the code being built::

    {"commit": "3f2c...", "dirty": false, "package_version": "0.2.0",
     "source_sha256": {"chapter": "ab12...", "package": "cd34..."},
     "created": "2026-11-30T18:02:11Z", "device": "cpu", "scale": "smoke"}

``commit`` and ``dirty`` are ``None`` outside a git checkout (Colab installs from a wheel);
``source_sha256["chapter"]`` is ``None`` when the chapter's source file is not found.
The package hash covers every ``*.py`` file of the installed ``dltheory`` package, keyed
by its path relative to the package, so it is the same on every machine for the same code.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import subprocess
from pathlib import Path

from . import runtime

__all__ = ["chapter_source", "git_state", "package_sha256", "file_sha256", "record"]


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def package_sha256(package_dir: str | Path | None = None) -> str:
    """One SHA-256 over every ``*.py`` file of the package (relative path + bytes, sorted)."""
    root = Path(package_dir) if package_dir is not None else Path(__file__).resolve().parent
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def chapter_source(chapter: str, root: str | Path | None = None) -> Path | None:
    """The source of ledger ``chapter``: ``book/NN_<chapter>.py`` under the repository root
    (``None`` when absent, e.g. in Colab, where only the notebook is there)."""
    base = Path(root) if root is not None else runtime.repo_root()
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
    src = chapter_source(chapter, root)
    return {
        "commit": commit,
        "dirty": dirty,
        "package_version": __version__,
        "source_sha256": {
            "chapter": file_sha256(src) if src is not None else None,
            "package": package_sha256(),
        },
        "created": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": str(device),
        "scale": scale,
    }
