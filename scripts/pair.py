"""Write each chapter's Colab notebook from its percent-format source.

    python scripts/pair.py                 # every book/*.py chapter
    python scripts/pair.py book/03_sparse_scaling.py [...]
    python scripts/pair.py --check         # exit 1 if a notebook is out of date
    python scripts/pair.py --install-cell  # write INSTALL into every source's install cell

The ``.py`` (jupytext percent) is the source of truth and the book renders it with MyST.
A notebook viewer (Colab, GitHub, nbviewer, JupyterLab) does not know MyST, so the paired
``.ipynb`` gets the same cells with MyST constructs rewritten to plain Markdown:

- admonitions (```` ```{admonition} Title ````, ``{note}``, ``{tip}``, ``{warning}``,
  ``{important}``, ``{exercise}``) become block quotes with a bold title;
- ``{dropdown}``, ``{solution}`` and admonitions with ``:class: dropdown`` become folded
  HTML ``<details>`` blocks;
- a ``{glue:md}`` directive (findings the executed book pastes) becomes a sentence saying
  where a notebook shows them;
- labelled equations (``$$ ... $$ (label)``) get ``\\tag{label}`` and MyST targets
  (``(label)=``) are dropped;
- roles become text: ``{doc}`` links to the page in the rendered book, ``{eq}`` gives
  ``(label)``, ``{cite}`` gives ``[key]`` linked to the book's bibliography,
  ``{ref}``/``{numref}`` their text; relative links to the book's pages (``notation.md``,
  ``01_conservation_laws.py``) become absolute links to the rendered book
  (``dltheory.BOOK_URL``), since a notebook opened in Colab has no sibling files;
- a short "Running this notebook" note follows the title, before anything else;
- the install cell (the source's first code cell, tagged ``remove-cell``; every book file
  holds ``INSTALL``, written there by ``python scripts/pair.py --install-cell``) is
  collapsed. In Colab it installs ``dltheory.INSTALL_SPEC`` (with ``ipywidgets`` when
  missing) where dltheory is absent or another version: the release tag of the package
  version the notebook was written from (``v<__version__>``), checked first with
  ``git ls-remote``, else the commit ``main`` points at (by its hash), saying which in one
  line; pip's output is captured
  (a failure ends the cell with pip's last lines). Elsewhere it stops where dltheory is
  missing, saying how to install it. The committed notebook
  cannot name its own commit, but it can name the release it belongs to, and the version is
  kept in one place (``dltheory.__version__``), so notebook and package stay in step: a
  notebook saved from Colab keeps installing the package its text was written for.

The notebook asks Colab for a GPU runtime (``accelerator`` metadata), holds no outputs,
and is not marked as jupytext-paired (so saving it in Jupyter never rewrites the source).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
sys.path.insert(0, str(ROOT / "src"))
import dltheory  # noqa: E402  (the install spec and the book's address live there)

ADMONITIONS = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important",
               "seealso": "See also", "hint": "Hint", "caution": "Caution"}
FOLDED = {"dropdown", "solution"}
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[ \t]*(?P<arg>.*)$")
GLUED = ("*(The rendered book shows here what its run found for these claims; in this "
         "notebook, run it: each check prints its verdict, and the Claims section at the "
         "end shows them all.)*")
TARGET = re.compile(r"^\([\w:.-]+\)=\s*$")
EQ_LABEL = re.compile(r"^\$\$\s*\((?P<label>[\w:.-]+)\)\s*$")
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`")
RUNNING = (
    "> **Running this notebook.** In Colab: *Runtime → Change runtime type → GPU*, then "
    "*Runtime → Run all*; the first (collapsed) cell installs `dltheory` "
    f"{dltheory.__version__}. Pick the size in the `parameters` cell: `SCALE = \"smoke\"` "
    "(a minute on a CPU), `\"standard\"` (as in the rendered book, a few minutes) or "
    "`\"paper\"` (the paper's sizes, a GPU); by default it comes from `DLTHEORY_SCALE`. "
    f"The rendered book: <{dltheory.BOOK_URL}>."
)
INSTALL = f"""\
# @title Install dltheory {dltheory.__version__} in Colab {{ display-mode: "form" }}
import importlib.metadata
import importlib.util
import subprocess
import sys

SPEC = "{dltheory.INSTALL_SPEC}"  # this notebook's release
REPO, TAG = SPEC[4:].split("@")
missing = importlib.util.find_spec("dltheory") is None
have = None if missing else next(
    (d.version for d in importlib.metadata.distributions(name="dltheory")), "?")
if "google.colab" in sys.modules and have not in (TAG[1:], "?"):  # absent or another version
    ls = subprocess.run(["git", "ls-remote", REPO, "HEAD", f"refs/tags/{{TAG}}"],
                        capture_output=True, text=True)
    if ls.returncode:
        sys.exit(f"dltheory: cannot reach {{REPO}}: {{ls.stderr.strip()[-300:]}}")
    refs = {{r: sha for sha, _, r in (x.partition("\\t") for x in ls.stdout.splitlines())}}
    ref = TAG if f"refs/tags/{{TAG}}" in refs else refs.get("HEAD", "main")
    print(f"dltheory: installing release {{TAG}}" if ref == TAG else
          f"dltheory: release {{TAG}} is not published yet, installing main at commit {{ref}}")
    widgets = [] if importlib.util.find_spec("ipywidgets") else ["ipywidgets"]  # Explore
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-U",
                          f"git+{{REPO}}@{{ref}}", *widgets], capture_output=True, text=True)
    if pip.returncode:
        sys.exit(f"dltheory: pip could not install it: {{pip.stderr.strip()[-500:]}}")
elif missing:
    sys.exit("dltheory is not installed: run `pip install -e .` in the repository "
             "(or activate its environment: `. .venv/bin/activate`)")"""
INSTALL_META = {"cellView": "form", "jupyter": {"source_hidden": True},
                "tags": ["remove-cell"]}
LINK = re.compile(r"\]\((?P<target>(?![a-z][\w+.-]*:|#|/)[^)\s]+?)"
                  r"\.(?P<ext>md|py|ipynb)(?P<anchor>#[^)\s]*)?\)")


def page_url(stem: str, anchor: str = "") -> str:
    """The rendered book's address of page ``book/<stem>``."""
    return f"{dltheory.BOOK_URL}book/{stem}.html{anchor}"


def _doc_link(body: str) -> str:
    m = re.fullmatch(r"\s*(?P<text>.*?)\s*<(?P<target>[^>]+)>\s*", body)
    text, target = (m["text"], m["target"]) if m else (None, body.strip())
    stem = target.split("/")[-1]
    for ext in (".py", ".md"):
        if (BOOK / f"{stem}{ext}").exists():
            return f"[{text or stem}]({page_url(stem)})"
    return text or stem


def _role(m: re.Match) -> str:
    role, body = m["role"], m["body"]
    if role == "doc":
        return _doc_link(body)
    if role == "eq":
        return f"({body})"
    if role.startswith("cite"):
        keys = ", ".join(k.strip() for k in body.split(","))
        return f"[[{keys}]]({page_url('bibliography')})"
    if role.removeprefix("py:") in ("func", "class", "meth", "mod", "obj", "attr", "data"):
        mm = re.fullmatch(r"\s*(.*?)\s*<([^>]+)>\s*", body)
        text, target = (mm[1], mm[2]) if mm else (body.strip().lstrip("~"), body.strip())
        target = target.lstrip("~.")
        text = text if mm else (target.rsplit(".", 1)[-1] if body.strip().startswith("~")
                                else target)
        return f"[`{text}`]({page_url('api', '#' + target)})"
    if role in ("ref", "numref", "term"):
        mm = re.fullmatch(r"\s*(.*?)\s*<[^>]+>\s*", body)
        return mm[1] if mm else body
    return f"`{body}`"


def _source_of(path: str, options: dict[str, str]) -> tuple[str, str]:
    """The code a ``{literalinclude}`` shows (``:pyobject:`` or ``:lines:`` of a file given
    relative to ``book/``) and its address on GitHub at this version's release tag."""
    import ast

    file = (BOOK / path).resolve()
    lines = file.read_text().splitlines()
    first, last = 1, len(lines)
    if "pyobject" in options:
        *outer, name = options["pyobject"].split(".")
        nodes = ast.parse(file.read_text()).body
        for part in outer:   # Class.method
            nodes = next(n.body for n in nodes if getattr(n, "name", None) == part)
        node = next(n for n in nodes if getattr(n, "name", None) == name)
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        last = node.end_lineno
    elif "lines" in options:
        a, _, b = options["lines"].partition("-")
        first, last = int(a), int(b or a)
    rel = file.relative_to(ROOT).as_posix()
    url = f"{dltheory.REPO_URL}/blob/v{dltheory.__version__}/{rel}#L{first}-L{last}"
    return "\n".join(lines[first - 1:last]), url


def _convert_block(name: str, arg: str, body: list[str]) -> list[str]:
    n_opts = 0   # directive options: the lines right after the opening fence
    while n_opts < len(body) and re.match(r"^:[\w-]+:", body[n_opts]):
        n_opts += 1
    opts = dict(re.match(r"^:([\w-]+):\s*(.*)$", ln).groups() for ln in body[:n_opts])
    body = body[n_opts:]
    if name.startswith("glue"):    # a value glued by the executed book: not in a notebook
        return [GLUED]
    if name == "literalinclude":   # the package's own source, read now (not a copy to keep)
        code, url = _source_of(arg, opts)
        return [f"```{opts.get('language', 'python')}", code, "```", "",
                f"([source on GitHub]({url}))"]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    text = _markdown("\n".join(body)).split("\n")
    if name in FOLDED or "dropdown" in opts.get("class", "").split():   # folded admonition
        title = arg or ("Solution" if name == "solution" else "Details")
        return [f"<details><summary>{_markdown(title)}</summary>", "", *text, "", "</details>"]
    title = arg or ADMONITIONS.get(name, name.capitalize())
    return [f"> **{_markdown(title)}**", ">", *[f"> {ln}".rstrip() for ln in text]]


def _markdown(src: str) -> str:
    """Rewrite the MyST constructs of one Markdown cell for a notebook viewer."""
    lines, out, i = src.split("\n"), [], 0
    while i < len(lines):
        if TARGET.match(lines[i]):   # a MyST target "(label)=": nothing to show
            i += 1
            continue
        eq = EQ_LABEL.match(lines[i])
        if eq:                       # "$$ (label)" closes a labelled equation: \tag it
            out += [f"\\tag{{{eq['label']}}}", "$$"]
            i += 1
            continue
        m = FENCE.match(lines[i])
        if not m or m["name"] in ("math",):
            out.append(lines[i])
            i += 1
            continue
        fence, depth, j = m["fence"], 0, i + 1
        while j < len(lines):   # find the matching close (nested fences of the same kind)
            if FENCE.match(lines[j]) and FENCE.match(lines[j])["fence"] == fence:
                depth += 1
            elif lines[j].strip() == fence:
                if depth == 0:
                    break
                depth -= 1
            j += 1
        out.extend(_convert_block(m["name"], m["arg"].strip(), lines[i + 1:j]))
        i = j + 1
    text = ROLE.sub(_role, "\n".join(out))
    return LINK.sub(lambda m: f"]({page_url(Path(m['target']).name, m['anchor'] or '')})", text)


def notebook_for(src: Path):
    """The Colab notebook of chapter source ``src`` (an nbformat NotebookNode)."""
    nb = jupytext.read(src)
    first_md = first_code = True
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:03d}"   # stable ids: the notebook changes only with its source
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
        if cell.cell_type == "markdown":
            cell.source = _markdown(cell.source)
            if first_md:
                cell.source = _with_running_note(cell.source)
                first_md = False
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            if first_code and is_install_cell(cell):
                cell.source, cell.metadata = INSTALL, dict(INSTALL_META)
            first_code = False
    meta = {"kernelspec": nb.metadata.get("kernelspec", {"display_name": "Python 3",
                                                          "language": "python",
                                                          "name": "python3"}),
            "language_info": {"name": "python"},
            "accelerator": "GPU",
            "colab": {"provenance": [], "gpuType": "T4"}}
    nb.metadata = meta
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def is_install_cell(cell) -> bool:
    """The source's install cell: its first code cell, hidden in the book, installing
    dltheory when it is missing."""
    return ("remove-cell" in cell.metadata.get("tags", [])
            and 'find_spec("dltheory")' in cell.source)


def _with_running_note(source: str) -> str:
    """The first Markdown cell with the running note right after its title."""
    lines = source.split("\n")
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join([*lines[:at], "", RUNNING, *([""] if lines[at:] and lines[at].strip()
                                                   else []), *lines[at:]]).lstrip("\n")


def render(src: Path) -> str:
    return nbformat.writes(notebook_for(src)) + "\n"


def sources() -> list[Path]:
    return sorted(p for p in BOOK.glob("*.py") if p.read_text().startswith("# ---\n# jupyter:"))


INSTALL_CELL = re.compile(r'^# %% tags=\["remove-cell"\]\n(?:(?!# %%).*\n)*?(?=\n*# %%)', re.M)


def set_install_cell(src: Path) -> bool:
    """Write ``INSTALL`` into the source's install cell (the first ``remove-cell`` code
    cell that mentions ``find_spec("dltheory")``), leaving every other cell as it is.
    Returns whether the file changed."""
    text = src.read_text()
    for m in INSTALL_CELL.finditer(text):
        if 'find_spec("dltheory")' in m.group(0):
            new = text[:m.start()] + '# %% tags=["remove-cell"]\n' + INSTALL + "\n" + text[m.end():]
            if new != text:
                src.write_text(new)
            return new != text
    raise ValueError(f"{src.name}: no install cell (a remove-cell with find_spec(\"dltheory\"))")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true", help="only report stale notebooks")
    ap.add_argument("--install-cell", action="store_true",
                    help="first write INSTALL into each source's install cell")
    args = ap.parse_args(argv)
    if args.install_cell:
        for src in args.files or sources():
            if set_install_cell(src.resolve()):
                print(f"wrote the install cell of {src.resolve().relative_to(ROOT)}")
    stale = []
    for src in args.files or sources():
        src = src.resolve()
        twin, text = src.with_suffix(".ipynb"), render(src)
        if twin.exists() and twin.read_text() == text:
            continue
        if args.check:
            stale.append(twin.name)
        else:
            twin.write_text(text)
            print(f"wrote {twin.relative_to(ROOT)}")
    if stale:
        print("out of date: " + ", ".join(stale) + " (run: python scripts/pair.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
