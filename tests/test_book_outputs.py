"""What the executed chapters show a reader: no warnings, tracebacks or machine paths, and a
verdict under every cell that checks claims.

The executed notebooks are taken from the book's execution cache of the scale in
``DLTHEORY_SCALE`` (default ``smoke``), ``_build/.jupyter_cache/<scale>`` (or the folder in
``DLTHEORY_EXEC_CACHE``), matched to the
chapters' current code: ``scripts/book.sh`` fills it (``scripts/execute_chapters.py``), and so
does ``scripts/test.sh`` (nbmake, then ``scripts/cache_executed.py``), which runs this file
right after. A chapter without an execution of its current code is skipped, unless
``DLTHEORY_REQUIRE_EXECUTED=1`` (as in ``scripts/test.sh``), which makes it a failure.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
SCALE = os.environ.get("DLTHEORY_SCALE", "smoke")
CACHE = Path(os.environ.get("DLTHEORY_EXEC_CACHE", ROOT / "_build" / ".jupyter_cache" / SCALE))
CHAPTERS = sorted(p for p in BOOK.glob("[0-9][0-9]_*.py")
                  if p.read_text().startswith("# ---\n# jupyter:"))
VERDICTS = ("PASS", "FAIL", "NOT REPRODUCED", "INCONCLUSIVE")

WARNING = re.compile(r"\b[A-Z]\w*Warning\b(?::|\s*\()|^\s*warnings\.warn\(", re.M)
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\w+Error: ", re.M)
# a builder's absolute paths: this checkout, the environment, home and temp folders
_places = {str(ROOT), sys.prefix, str(Path.home()), tempfile.gettempdir(), os.getcwd(),
           "/home", "/Users", "/root", "/tmp", "/work", "/opt", "/usr", "/var", "/private",
           "/mnt", "/srv"}
MACHINE_PATH = re.compile(
    r"(?<![\w.:/~-])(?:"
    + "|".join(re.escape(p) for p in sorted(_places, key=len, reverse=True) if len(p) > 1)
    + r")/[\w.~-]+")
# a cell that records claims: a chapter's check helper called with the ledger, or the ledger
CHECK_CELL = re.compile(r"\b(?:checks\.\w+\(\s*ledger\b|ledger\.(?:check|identity|derivation|"
                        r"inconclusive)\()")


def _texts(output) -> list[str]:
    """Every piece of text an output shows (stream, error, text/* and JSON data)."""
    if output.get("output_type") == "stream":
        return [output.get("text", "")]
    if output.get("output_type") == "error":
        return ["\n".join(output.get("traceback", [])) or output.get("ename", "error")]
    out = []
    for mime, value in (output.get("data") or {}).items():
        if mime.startswith("text/") or mime.endswith("json"):
            out.append(value if isinstance(value, str) else "".join(map(str, value)))
    return out


def _executed(src: Path):
    """The executed notebook of ``src``'s current code from the execution cache, or None."""
    if not CACHE.is_dir():
        return None
    from jupyter_cache import get_cache

    cache = get_cache(str(CACHE))
    try:   # the cache keeps code cells only: merge its outputs into the whole notebook
        return cache.merge_match_into_notebook(
            jupytext.reads(src.read_text(), fmt="py:percent"))[1]
    except KeyError:
        return None


def _get(src: Path):
    nb = _executed(src)
    if nb is None:
        msg = (f"{src.name}: no execution of its current code at scale {SCALE!r} in "
               f"{CACHE} (run scripts/book.sh or scripts/test.sh)")
        if os.environ.get("DLTHEORY_REQUIRE_EXECUTED") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    return nb


def _where(nb, i: int) -> str:
    heads = [h for c in nb.cells[:i + 1] if c.cell_type == "markdown"
             for h in re.findall(r"^#{1,3}\s+(.+)$", c.source, re.M)]
    return f"cell {i} ({heads[-1][:60] if heads else 'start'})"


@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_outputs_hold_no_warning_traceback_or_machine_path(src):
    nb = _get(src)
    problems = []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            for text in _texts(output):
                for what, rx in (("warning", WARNING), ("traceback", TRACEBACK),
                                 ("absolute path", MACHINE_PATH)):
                    m = rx.search(text)
                    if m:
                        line = next(ln for ln in text[m.start():].splitlines() or [""])
                        start = text.rfind("\n", 0, m.start()) + 1
                        problems.append(f"{_where(nb, i)}: {what}: "
                                        f"{(text[start:m.start()] + line).strip()[:160]!r}")
    assert not problems, f"{src.name} at scale {SCALE}:\n" + "\n".join(problems)


@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_every_check_cell_shows_its_verdicts(src):
    nb = _get(src)
    silent = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not CHECK_CELL.search(cell.source):
            continue
        shown = "\n".join(t for o in cell.get("outputs", []) for t in _texts(o))
        if not any(v in shown for v in VERDICTS):
            first = next(ln for ln in cell.source.splitlines() if CHECK_CELL.search(ln))
            silent.append(f"{_where(nb, i)}: {first.strip()[:90]}")
    assert not silent, (f"{src.name}: check cells without a verdict in their output "
                        "(print one line per claim):\n" + "\n".join(silent))


def test_patterns():
    assert WARNING.search("/x/y.py:3: UserWarning: Tight layout not applied")
    assert WARNING.search("FutureWarning: the default will change")
    assert not WARNING.search("a warning about nothing; Warnings section")
    assert TRACEBACK.search("Traceback (most recent call last):\n  File")
    assert MACHINE_PATH.search(f"saved to {ROOT}/_build/figures/a.png")
    assert MACHINE_PATH.search("see /home/someone/x.py")
    assert not MACHINE_PATH.search("the ratio 1/tmp and _build/figures/a.png, 3/4")
    assert CHECK_CELL.search("checks.record_gd(ledger, cfg, gd)")
    assert CHECK_CELL.search("de.checks.signal(ledger, cfg, ex)")
    assert CHECK_CELL.search('print(ledger.check("GF.x", "s", measured=1))')
    assert not CHECK_CELL.search("NAMES = checks.COUNT_IDS")


def test_cache_executed_keys_match_the_book(tmp_path):
    """A notebook nbmake executed (pair.py's install cell, outputs, timing metadata) goes
    into the cache under the key the book build computes from the chapter's .py."""
    import shutil
    import subprocess

    import nbformat
    from jupyter_cache import get_cache

    src = CHAPTERS[0]
    work = tmp_path / "book"
    work.mkdir()
    shutil.copy(src, work / src.name)
    nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(code):
        cell.execution_count = i + 1
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{i}\n")]
        cell.metadata["execution"] = {"iopub.status.idle": "2026-12-01T00:00:00Z"}
    nbformat.write(nb, work / src.with_suffix(".ipynb").name)
    cache = tmp_path / "cache"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "cache_executed.py"), str(cache),
                    str(work / src.with_suffix(".ipynb").name)], check=True,
                   capture_output=True)
    book_nb = jupytext.reads(src.read_text(), fmt="py:percent")
    get_cache(str(cache)).match_cache_notebook(book_nb)   # KeyError if the keys differ
