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
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES, MAX_PARAMS, MAX_VISIBLE, MIN_PROSE = 700, 15, 15, 0.45
HIDDEN = {"hide-input", "remove-cell", "remove-input", "hide-cell"}


@dataclass
class Shape:
    name: str
    lines: int
    params: int
    largest_visible: int
    prose: float

    def breaches(self) -> list[str]:
        out = []
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
                 max(visible, default=0), prose / max(prose + ncode, 1))


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
