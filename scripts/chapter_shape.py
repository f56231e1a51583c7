"""Chapter shape: does each chapter read as a book rather than a lab notebook?

    python scripts/chapter_shape.py            # a table for every chapter; exit 1 on a breach

Limits (DESIGN.md, "Chapter shape"): at most 700 lines per chapter source (550 until the
third round added to every chapter two or more exercises with folded solutions, a folded
"how it is computed" source block and a verdict line per check; the other limits, which
keep a chapter a book rather than a lab notebook, are unchanged); a parameters
cell of at most 15 code lines; no visible code cell (not tagged hide-input, remove-cell,
remove-input or hide-cell) over 15 code lines; prose at least 45% of non-blank lines.
Code lines are non-blank lines that are not comments; prose lines are non-blank lines of
Markdown cells.

Outline, the same in every chapter: content sections numbered ``## 1. Title``, ``## 2. ...``
in order, their subsections ``### 1.1 Title``; an unnumbered section only before section 1
(e.g. ``## Conventions``) or as back matter at the end, in the order ``## Explore``,
``## Exercises``, ``## Claims`` (the last two required). First screen: every code cell
before section 1 is hidden (the install, parameters and set-up cells) and one of them is
``remove-input``: the headline figure, shown before any code.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES, MAX_PARAMS, MAX_VISIBLE, MIN_PROSE = 700, 15, 15, 0.45
HIDDEN = {"hide-input", "remove-cell", "remove-input", "hide-cell"}
BACK_MATTER = ("Explore", "Exercises", "Claims")
_H2, _H3 = re.compile(r"^## (?!#)(.*)$", re.M), re.compile(r"^### (?!#)(.*)$", re.M)
_NUM2, _NUM3 = re.compile(r"^(\d+)\. \S"), re.compile(r"^(\d+)\.(\d+) \S")


@dataclass
class Shape:
    name: str
    lines: int
    params: int
    largest_visible: int
    prose: float
    outline: list[str] = field(default_factory=list)

    def breaches(self) -> list[str]:
        out = list(self.outline)
        if self.lines > MAX_LINES:
            out.append(f"{self.lines} lines > {MAX_LINES}")
        if self.params > MAX_PARAMS:
            out.append(f"parameters cell {self.params} code lines > {MAX_PARAMS}")
        if self.largest_visible > MAX_VISIBLE:
            out.append(f"a visible code cell of {self.largest_visible} code lines > "
                       f"{MAX_VISIBLE}")
        if self.prose < MIN_PROSE:
            out.append(f"prose {self.prose:.0%} < {MIN_PROSE:.0%}")
        return out


def _code_lines(src: str) -> int:
    return sum(1 for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def outline_problems(cells) -> list[str]:
    """What breaks the common outline and first screen (see the module docstring)."""
    out, numbered, back, sub, first_screen = [], 0, [], 0, []
    for c in cells:
        if c.cell_type == "code":
            if numbered == 0 and not back:
                first_screen.append(set(c.metadata.get("tags", [])))
            continue
        heads = sorted([(m.start(), 2, m.group(1).strip()) for m in _H2.finditer(c.source)]
                       + [(m.start(), 3, m.group(1).strip()) for m in _H3.finditer(c.source)])
        for _, level, title in heads:
            if level == 2:
                m = _NUM2.match(title)
                if m:
                    if back:
                        out.append(f"numbered section {title!r} after the back matter")
                    elif int(m.group(1)) != numbered + 1:
                        out.append(f"section {title!r} should be number {numbered + 1}")
                    numbered, sub = int(m.group(1)), 0
                elif title in BACK_MATTER:
                    back.append(title)
                elif numbered or back:
                    out.append(f"unnumbered section {title!r} between numbered sections "
                               f"(back matter is {', '.join(BACK_MATTER)})")
            elif numbered and not back:
                m = _NUM3.match(title)
                if not m or int(m.group(1)) != numbered or int(m.group(2)) != sub + 1:
                    out.append(f"subsection {title!r} should be {numbered}.{sub + 1}")
                sub = int(m.group(2)) if m else sub + 1
    if numbered == 0:
        out.append("no numbered section (## 1. Title)")
    if [b for b in BACK_MATTER if b in back] != back or back[-2:] != list(BACK_MATTER[1:]):
        out.append(f"back matter {back} is not {', '.join(BACK_MATTER)} in that order, "
                   "ending with Exercises and Claims")
    if any(not HIDDEN & tags for tags in first_screen):
        out.append("visible code before section 1 (the first screen is prose and a figure)")
    if not any("remove-input" in tags for tags in first_screen):
        out.append("no headline figure (a remove-input cell) before section 1")
    return out


def measure(path: Path) -> Shape:
    nb = jupytext.read(path)
    prose = sum(1 for c in nb.cells if c.cell_type == "markdown"
                for ln in c.source.splitlines() if ln.strip())
    code = [c for c in nb.cells if c.cell_type == "code"]
    ncode = sum(_code_lines(c.source) for c in code)
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    visible = [_code_lines(c.source) for c in code
               if not HIDDEN & set(c.metadata.get("tags", []))]
    return Shape(path.name, len(path.read_text().splitlines()),
                 _code_lines(params[0].source) if params else 0,
                 max(visible, default=0), prose / max(prose + ncode, 1),
                 outline_problems(nb.cells))


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.py"))


def main() -> int:
    bad = 0
    print(f"{'chapter':28s} {'lines':>5s} {'params':>6s} {'max visible':>11s} {'prose':>6s}")
    for p in chapters():
        s = measure(p)
        print(f"{s.name:28s} {s.lines:5d} {s.params:6d} {s.largest_visible:11d} "
              f"{s.prose:6.0%}  {'; '.join(s.breaches()) or 'ok'}")
        bad += bool(s.breaches())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
