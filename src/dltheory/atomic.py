"""Atomic file writes: a reader (or a full disk, or a kill) never leaves part of a file.

Every artefact the book writes (figures, calibration records, timing files, HTML inputs,
cache entries) goes through a temporary file in the same folder, flushed to disk, and
``os.replace`` onto the target: the target holds the previous content or the new one, never
a cut one. When the write fails (``ENOSPC``, a kill before the rename) the temporary file is
removed and the previous file is left as it was::

    from dltheory import atomic

    atomic.write_text(path, json.dumps(record))
    atomic.savefig(fig, "_build/figures/smoke/loss.png")
    data = atomic.read_json(path, default={})   # a cut or empty file: one warning, default

``read_json`` is for auxiliary files that can be rebuilt (timings, indexes): a missing file
gives ``default`` silently, an unreadable one gives ``default`` with one warning line naming
the file, never an exception.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["write_bytes", "write_text", "write_json", "savefig", "writer", "read_json"]


def writer(path: str | os.PathLike, write: Callable[[IO[bytes]], Any], *,
           mode: int = 0o644) -> Path:
    """Call ``write(f)`` on a temporary binary file next to ``path``, then move it onto
    ``path`` (``os.replace``); on any failure the temporary file is removed and ``path``
    keeps its previous content. Returns ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)            # mkstemp's 0600 would hide a shared file from others
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    return writer(path, lambda f: f.write(data))


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically."""
    return write_bytes(path, text.encode(encoding))


def write_json(path: str | os.PathLike, obj: Any, **kw) -> Path:
    """``json.dumps(obj, **kw)`` plus a newline, written atomically."""
    return write_text(path, json.dumps(obj, **kw) + "\n")


def savefig(fig, path: str | os.PathLike, **kw) -> Path:
    """``fig.savefig`` to ``path`` atomically (the format from the suffix unless given)."""
    path = Path(path)
    kw.setdefault("format", path.suffix.lstrip(".") or "png")
    return writer(path, lambda f: fig.savefig(f, **kw))


def read_json(path: str | os.PathLike, default: Any = None, *, what: str = "file") -> Any:
    """The JSON in ``path``; ``default`` when it is missing, or, with one warning line
    naming it, when it is empty, cut or not JSON (an auxiliary file is rebuilt, never
    fatal)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    except (OSError, UnicodeDecodeError) as e:
        print(f"[warning] {what} {path} unreadable ({type(e).__name__}); rebuilt",
              file=sys.stderr, flush=True)
        return default
    try:
        return json.loads(text)
    except ValueError as e:
        why = "empty" if not text.strip() else f"not JSON: {e}"
        print(f"[warning] {what} {path} {why}; rebuilt", file=sys.stderr, flush=True)
        return default
