"""Chapter shape: does each chapter teach first, and read as a book rather than a lab notebook?

    python scripts/chapter_shape.py            # a table for every chapter; exit 1 on a breach

The shape (DESIGN.md "Version 5", issue 48 "Teach first"):

Size. At most 700 lines per chapter source (the cap was 550, then 700 when every chapter
gained exercises with folded solutions, a folded source block and a verdict line per check;
the project's hook, ../shared/tools/chapter_shape.py, holds the same 700). Version 5 adds
derivations, a Summary and exercises within it: the bookkeeping a chapter loses moves to
book/checking.md and method detail to dropdowns and docstrings. A cap stays
so that a chapter remains one sitting's reading: what does not fit goes into the package or
a dropdown, not onto the page. A parameters cell of at most 15 code lines; no visible code
cell (not tagged hide-input, remove-cell, remove-input or hide-cell) over 15 code lines; no
code line a reader can see or unfold over 88 characters (the column clips it); prose at
least 45% of non-blank lines. Code lines are non-blank lines that are not comments; prose
lines are non-blank lines of Markdown cells.

Outline. The first section is ``## Overview`` (the question, what to know first, what the
reader will be able to do), the only unnumbered section before the content; content
sections numbered ``## 1. Title``, ``## 2. ...`` in order, subsections ``### 1.1 Title``;
then the back matter in the order ``## Summary`` (with bullets), ``## Explore`` (optional),
``## Exercises`` (at least three ``{admonition} Exercise N``, each followed by an
``{admonition} Solution`` with ``:class: dropdown``), ``## Claims`` (last). First screen:
every code cell before section 1 is hidden and one of them is ``remove-input`` (the
headline figure, shown before any code).

Bookkeeping aside. How the book checks itself (scales, cost, budgets, claim kinds,
resolution, calibration, the family-wise rule) lives on book/checking.md, which every
chapter links; method paragraphs go into folded dropdowns. The robust rule: outside a
dropdown (``{dropdown}``, or a directive with ``:class: dropdown``) no heading, admonition
title or bold lead-in (``**Scales and cost.**``) names a bookkeeping topic, and no prose
names an environment variable (``DLTHEORY_...``), the family-wise rule or the kinds rule
(a paragraph that links checking.md may name them). Bookkeeping cells (``.glue(`` calls,
``FINDINGS`` lists) are ``remove-cell`` or ``remove-input``. Equations are labelled (``$$ ... $$ (gf-eq-...)``)
and referenced with ``{eq}``: no ``\\tag{...}`` and no hand-typed "Eq. (1.2)". One import
vocabulary: no ``import ... as`` alias of a dltheory module. Every public function of a
chapter's ``figures.py`` has a docstring saying what it draws from which columns.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES, MAX_PARAMS, MAX_VISIBLE, MIN_PROSE, MAX_COLUMN = 700, 15, 15, 0.45, 88
MIN_EXERCISES = 3
HIDDEN = {"hide-input", "remove-cell", "remove-input", "hide-cell"}
REMOVED = {"remove-cell", "remove-input"}
BACK_MATTER = ("Summary", "Explore", "Exercises", "Claims")
REQUIRED_BACK = ("Summary", "Exercises", "Claims")
_NUM2, _NUM3 = re.compile(r"^(\d+)\. \S"), re.compile(r"^(\d+)\.(\d+) \S")
_HEAD = re.compile(r"^(#{1,6}) (.*)$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*(\{[\w:-]+\})?\s*(.*)$")
_BOLD_LEAD = re.compile(r"^\s*(?:[-*+]\s+|\d+\.\s+)?\*\*([^*]+)\*\*")
# Headings, admonition titles and bold lead-ins outside a dropdown that name bookkeeping.
BOOKKEEPING_TITLE = re.compile(
    r"scales?\s+and\s+(?:cost|budget)|\bbudgets?\b|\bledger\b|\bclaim kinds?\b|"
    r"\bkinds of claims?\b|\bevidence kinds?\b|\bwhat is evidence\b|\bconventions\b|"
    r"\bcalibrat|\bfamily-wise\b|\bresolution\b(?!-)|\bhow it is (?:computed|checked)\b|"
    r"\bhow this book checks\b", re.I)
# Words in prose outside a dropdown that belong to the checking page.
BOOKKEEPING_TERM = re.compile(r"DLTHEORY_[A-Z_]+|\bfamily-wise\b|\bkinds rule\b", re.I)
_CHECKING_LINK = re.compile(r"\[[^\]]*\]\(checking(?:\.md)?(?:#[^)]*)?\)|"
                            r"\{doc\}`[^`]*<checking>`|\{doc\}`checking`")
_HAND_EQ = re.compile(r"\\tag\{|\b[Ee]q(?:uation)?s?\.?\s*\((?:[A-Z]|\d+)\.\d+\)")
_ALIAS = re.compile(r"^\s*(?:from\s+dltheory(?:\.\w+)*\s+import\s+.*\bas\b|"
                    r"import\s+dltheory(?:\.\w+)*\s+as\b)", re.M)
_BOOKKEEPING_CODE = re.compile(r"\.glue\(|^\s*FINDINGS\s*=", re.M)


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


@dataclass
class Line:
    """One Markdown line: its text and the directives (name, title, classes) around it."""
    text: str
    fenced: bool            # inside any fence (a directive or a code block)
    dropdown: bool          # inside a folded directive
    code: bool              # inside a literal code block (not a directive)


@dataclass
class Directive:
    name: str
    title: str
    classes: list[str]
    dropdown: bool          # folded itself or inside a folded one
    depth: int = 0          # how many fences enclose it
    at: int = 0             # the index of the first Markdown line after its opening


def _code_lines(src: str) -> int:
    return sum(1 for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def parse_markdown(src: str) -> tuple[list[Line], list[Directive]]:
    """Split a Markdown cell into lines that know their enclosing fences, and its directives.

    A fence opens with three or more backticks (or tildes), optionally ``{name}`` and a
    title; it closes with a line of the same character at least as long. Directive options
    (``:class: dropdown``) follow the opening line.
    """
    lines, directives, stack = [], [], []   # stack: (char, length, directive or None)
    rows = src.splitlines()
    i = 0
    while i < len(rows):
        row = rows[i]
        m = _FENCE.match(row)
        if m and stack and m.group(1)[0] == stack[-1][0] and len(m.group(1)) >= stack[-1][1] \
                and not m.group(2) and not m.group(3).strip():
            stack.pop()
            i += 1
            continue
        if m and not (stack and stack[-1][2] is None):   # no directive inside a code block
            fence, name = m.group(1), (m.group(2) or "").strip("{}")
            classes, j = [], i + 1
            while j < len(rows) and re.match(r"^\s*:[\w-]+:", rows[j]):
                opt = re.match(r"^\s*:class:\s*(.*)$", rows[j])
                if opt:
                    classes += opt.group(1).split()
                j += 1
            if name:
                folded = (name in ("dropdown", "toggle") or "dropdown" in classes
                          or any(d.dropdown for *_, d in stack if d))
                d = Directive(name, m.group(3).strip(), classes, folded, len(stack),
                              len(lines))
                directives.append(d)
            else:
                d = None
            stack.append((fence[0], len(fence), d))
            i = j
            continue
        lines.append(Line(row, bool(stack), any(d.dropdown for *_, d in stack if d),
                          any(d is None for *_, d in stack)))
        i += 1
    return lines, directives


def _paragraphs(lines: list[Line]) -> tuple[list[int], set[int]]:
    """Each line's paragraph (blank lines and fences separate them), and the paragraphs
    that link checking.md."""
    para, linked, n, fenced = [], set(), 0, False
    for ln in lines:
        if not ln.text.strip() or ln.fenced != fenced:
            n += 1
        fenced = ln.fenced
        para.append(n)
        if _CHECKING_LINK.search(ln.text):
            linked.add(n)
    return para, linked


def _strip_links(text: str) -> str:
    return _CHECKING_LINK.sub("", text)


def _exercise_problems(directives: list[Directive]) -> list[str]:
    out, count = [], 0
    for k, d in enumerate(directives):
        if d.name == "admonition" and re.match(r"Exercise \d+", d.title):
            count += 1
            follows = next((e for e in directives[k + 1:] if e.depth <= d.depth), None)
            if (follows is None or follows.name != "admonition"
                    or not follows.title.startswith("Solution")
                    or "dropdown" not in follows.classes):
                out.append(f"{d.title!r} is not followed by an {{admonition}} Solution "
                           "with :class: dropdown")
    if count < MIN_EXERCISES:
        out.append(f"{count} exercises (`{{admonition}} Exercise N`) < {MIN_EXERCISES}")
    return out


def outline_problems(cells) -> list[str]:
    """What breaks the shape of the module docstring (everything but the line counts)."""
    out, numbered, back, sub, first_screen, heads2 = [], 0, [], 0, [], []
    section, exercise_dirs, summary_bullets, links_checking = None, [], 0, False
    for c in cells:
        tags = set(c.metadata.get("tags", []))
        if c.cell_type == "code":
            if numbered == 0 and not back:
                first_screen.append(tags)
            if _ALIAS.search(c.source):
                out.append("a dltheory module imported under an alias ('import ... as'): "
                           "use `from dltheory.<package> import checks, experiments, figures`")
            if _BOOKKEEPING_CODE.search(c.source) and not REMOVED & tags:
                out.append("a bookkeeping cell (.glue( or FINDINGS) is not remove-cell or "
                           "remove-input")
            if not REMOVED & tags:
                long = [ln for ln in c.source.splitlines() if len(ln) > MAX_COLUMN]
                if long:
                    out.append(f"a code line of {len(long[0])} characters > {MAX_COLUMN} "
                               f"(clipped at the column): {long[0][:40]!r}...")
            continue
        lines, directives = parse_markdown(c.source)
        if _CHECKING_LINK.search(c.source):
            links_checking = True
        section_before = [section]          # the section in force before each line
        para, linked = _paragraphs(lines)
        for k, ln in enumerate(lines):
            section_before.append(section)
            if _HAND_EQ.search(ln.text) and not ln.code:
                out.append(f"a hand-numbered equation ({_HAND_EQ.search(ln.text).group(0)!r}):"
                           " label it ($$ ... $$ (label)) and refer with {eq}")
            if ln.code or ln.dropdown:
                continue
            m = _HEAD.match(ln.text) if not ln.fenced else None
            bold = _BOLD_LEAD.match(ln.text)
            for title in ([m.group(2)] if m else []) + ([bold.group(1)] if bold else []):
                if BOOKKEEPING_TITLE.search(title):
                    out.append(f"bookkeeping heading {title.strip()!r} in the main flow (it "
                               "belongs on checking.md, or in a dropdown)")
            term = BOOKKEEPING_TERM.search(_strip_links(ln.text))
            if term and para[k] not in linked:   # a paragraph that links checking.md may
                out.append(f"bookkeeping term {term.group(0)!r} in the main flow (it belongs "
                           "on checking.md, or in a dropdown)")
            if section == "Summary" and re.match(r"^\s*[-*+]\s+\S", ln.text):
                summary_bullets += 1
            if not m or ln.fenced or len(m.group(1)) not in (2, 3):
                continue
            level, title = len(m.group(1)), m.group(2).strip()
            if level == 2:
                heads2.append(title)
                n = _NUM2.match(title)
                if n:
                    if back:
                        out.append(f"numbered section {title!r} after the back matter")
                    elif int(n.group(1)) != numbered + 1:
                        out.append(f"section {title!r} should be number {numbered + 1}")
                    numbered, sub, section = int(n.group(1)), 0, None
                elif title in BACK_MATTER:
                    back.append(title)
                    section = title
                elif title == "Overview" and not numbered and not back:
                    section = title
                else:
                    out.append(f"unnumbered section {title!r}: the only one before section 1 "
                               f"is Overview, the back matter is {', '.join(BACK_MATTER)}")
            elif numbered and not back:
                n = _NUM3.match(title)
                if not n or int(n.group(1)) != numbered or int(n.group(2)) != sub + 1:
                    out.append(f"subsection {title!r} should be {numbered}.{sub + 1}")
                sub = int(n.group(2)) if n else sub + 1
        section_before.append(section)
        for d in directives:
            if section_before[d.at + 1] == "Exercises":
                exercise_dirs.append(d)
            if not d.dropdown and d.name in ("admonition", "note", "tip", "important",
                                             "warning", "topic", "sidebar") \
                    and BOOKKEEPING_TITLE.search(d.title):
                out.append(f"bookkeeping admonition {d.title!r} in the main flow (fold it: "
                           ":class: dropdown, or move it to checking.md)")
    if not heads2 or heads2[0] != "Overview":
        out.append(f"the first section is {heads2[0] if heads2 else None!r}, not 'Overview'")
    if numbered == 0:
        out.append("no numbered section (## 1. Title)")
    if [b for b in BACK_MATTER if b in back] != back or not back or back[-1] != "Claims" \
            or any(b not in back for b in REQUIRED_BACK):
        out.append(f"back matter {back} is not Summary, [Explore], Exercises, Claims "
                   "in that order")
    if "Summary" in back and summary_bullets < 2:
        out.append(f"the Summary has {summary_bullets} bullets (the ideas, in a few bullets)")
    if "Exercises" in back:
        out += _exercise_problems(exercise_dirs)
    if not links_checking:
        out.append("no link to checking.md ('How this book checks itself')")
    if any(not HIDDEN & tags for tags in first_screen):
        out.append("visible code before section 1 (the first screen is prose and a figure)")
    if not any("remove-input" in tags for tags in first_screen):
        out.append("no headline figure (a remove-input cell) before section 1")
    return list(dict.fromkeys(out))


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


def undocumented_figures(path: Path) -> list[str]:
    """The public functions of a chapter's ``figures.py`` without a docstring (each must say
    what it draws from which columns: theory dashed, simulation as markers)."""
    import ast

    tree = ast.parse(path.read_text())
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and not n.name.startswith("_") and not ast.get_docstring(n)]


def figure_modules() -> list[Path]:
    return sorted((ROOT / "src" / "dltheory").glob("*/figures.py"))


def chapters() -> list[Path]:
    return sorted((ROOT / "book").glob("[0-9][0-9]_*.py"))


def main() -> int:
    bad = 0
    print(f"{'chapter':28s} {'lines':>5s} {'params':>6s} {'max visible':>11s} {'prose':>6s}")
    for p in chapters():
        s = measure(p)
        print(f"{s.name:28s} {s.lines:5d} {s.params:6d} {s.largest_visible:11d} "
              f"{s.prose:6.0%}  {'ok' if not s.breaches() else ''}")
        for b in s.breaches():
            print(f"    - {b}")
        bad += bool(s.breaches())
    for f in figure_modules():
        missing = undocumented_figures(f)
        if missing:
            print(f"{f.relative_to(ROOT)}: figure functions without a docstring: "
                  f"{', '.join(missing)}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
