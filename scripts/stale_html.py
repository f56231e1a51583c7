#!/usr/bin/env python3
"""Mark a built book's HTML stale when a build stops on a failure (``scripts/book.sh``).

    python scripts/stale_html.py mark  _build/html "the chapters' execution failed (exit 1)"
    python scripts/stale_html.py clear _build/html

A build that stops part-way (a chapter fails, a hard FAIL under ``-W``, an interrupted
Sphinx run) must not leave the previous pages looking current: a reader who opens them
would take the old verdicts for this code's. ``mark`` writes ``STALE`` (why, when) into
the folder and puts a red banner at the top of every page, saying that the last build
stopped and these pages come from an earlier one. ``clear`` (the start of the next
build) removes a marked folder whole, so that the next build renders every page afresh
(Sphinx only rewrites pages whose sources changed, which would keep stale banners or stale
pages); an unmarked folder is left alone.
"""

from __future__ import annotations

import datetime as _dt
import html
import re
import shutil
import sys
from pathlib import Path

MARKER = "STALE"
BANNER_ID = "dltheory-stale-build"
BODY = re.compile(r"<body[^>]*>", re.I)


def banner(why: str, when: str) -> str:
    return (f'<div id="{BANNER_ID}" role="alert" style="background:#b00020;color:#fff;'
            f'padding:0.8em 1.2em;font:600 1rem/1.4 sans-serif;position:relative;z-index:9999">'
            f"Stale pages: the last build ({html.escape(when)}) stopped on a failure "
            f"({html.escape(why)}). These pages come from an earlier build and may show old "
            f"verdicts; rebuild with <code>bash scripts/book.sh</code>.</div>")


def mark(folder: Path, why: str) -> int:
    """Write ``STALE`` and a banner into every page of ``folder``; returns the pages marked
    (0 when there is no folder: nothing to mislead anyone)."""
    if not folder.is_dir():
        return 0
    when = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    (folder / MARKER).write_text(f"the build of {when} stopped on a failure: {why}\n"
                                 "these pages come from an earlier build\n")
    n = 0
    for page in folder.rglob("*.html"):
        try:
            text = page.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if BANNER_ID in text:
            continue
        m = BODY.search(text)
        if m is None:
            continue
        page.write_text(text[:m.end()] + banner(why, when) + text[m.end():], encoding="utf-8")
        n += 1
    return n


def clear(folder: Path) -> bool:
    """Remove ``folder`` when it is marked stale; returns whether it was."""
    if (folder / MARKER).is_file():
        shutil.rmtree(folder)
        return True
    return False


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("mark", "clear"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    folder = Path(argv[1])
    if argv[0] == "mark":
        n = mark(folder, argv[2] if len(argv) > 2 else "see the build log")
        if n or (folder / MARKER).exists():
            print(f"the build stopped: the previous pages in {folder} are marked stale "
                  f"({n} pages carry a banner; {folder / MARKER})", file=sys.stderr)
    elif clear(folder):
        print(f"removed {folder}: it held the stale pages of a build that had stopped; "
              "every page is rendered afresh")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
