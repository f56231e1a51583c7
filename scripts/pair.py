"""Write each chapter's Colab notebook from its percent-format source.

    python scripts/pair.py                 # every book/*.py chapter
    python scripts/pair.py book/03_sparse_scaling.py [...]
    python scripts/pair.py --check         # exit 1 if a notebook is out of date

The ``.py`` (jupytext percent) is the source of truth and the book renders it with MyST.
A notebook viewer (Colab, GitHub, nbviewer, JupyterLab) does not know MyST, so the paired
``.ipynb`` gets the same cells with MyST constructs rewritten to plain Markdown:

- admonitions (```` ```{admonition} Title ````, ``{note}``, ``{tip}``, ``{warning}``,
  ``{important}``, ``{exercise}``) become block quotes with a bold title;
- ``{dropdown}`` and ``{solution}`` become folded HTML ``<details>`` blocks;
- roles become text: ``{doc}`` links to the sibling notebook or page, ``{eq}`` gives
  ``(label)``, ``{cite}`` gives ``[key]``, ``{ref}``/``{numref}`` their text;
- the first Markdown cell gains a short "Running this notebook" note (GPU runtime, scale).

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
ADMONITIONS = {"note": "Note", "tip": "Tip", "warning": "Warning", "important": "Important",
               "seealso": "See also", "hint": "Hint", "caution": "Caution"}
FOLDED = {"dropdown", "solution"}
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w-]+)\}[ \t]*(?P<arg>.*)$")
ROLE = re.compile(r"\{(?P<role>[\w:-]+)\}`(?P<body>[^`]*)`")
RUNNING = (
    "\n\n> **Running this notebook.** In Colab choose *Runtime → Change runtime type → GPU*. "
    "The first cell installs `dltheory` when it is missing. The scale is set in the "
    "`parameters` cell: `SCALE = \"smoke\"` (a minute on a CPU), `\"standard\"` (the "
    "rendered book, a few minutes) or `\"paper\"` (the paper's sizes, a GPU); by default it "
    "comes from the environment variable `DLTHEORY_SCALE`."
)


def _doc_link(body: str) -> str:
    m = re.fullmatch(r"\s*(?P<text>.*?)\s*<(?P<target>[^>]+)>\s*", body)
    text, target = (m["text"], m["target"]) if m else (None, body.strip())
    stem = target.split("/")[-1]
    for ext in (".ipynb", ".md"):
        if (BOOK / f"{stem}{ext}").exists():
            return f"[{text or stem}]({stem}{ext})"
    return text or stem


def _role(m: re.Match) -> str:
    role, body = m["role"], m["body"]
    if role == "doc":
        return _doc_link(body)
    if role == "eq":
        return f"({body})"
    if role.startswith("cite"):
        return "[" + ", ".join(k.strip() for k in body.split(",")) + "]"
    if role in ("ref", "numref", "term"):
        mm = re.fullmatch(r"\s*(.*?)\s*<[^>]+>\s*", body)
        return mm[1] if mm else body
    return f"`{body}`"


def _convert_block(name: str, arg: str, body: list[str]) -> list[str]:
    body = [ln for ln in body if not re.match(r"^:[\w-]+:", ln)]   # directive options
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    text = _markdown("\n".join(body)).split("\n")
    if name in FOLDED:
        title = arg or ("Solution" if name == "solution" else "Details")
        return [f"<details><summary>{_markdown(title)}</summary>", "", *text, "", "</details>"]
    title = arg or ADMONITIONS.get(name, name.capitalize())
    return [f"> **{_markdown(title)}**", ">", *[f"> {ln}".rstrip() for ln in text]]


def _markdown(src: str) -> str:
    """Rewrite the MyST constructs of one Markdown cell for a notebook viewer."""
    lines, out, i = src.split("\n"), [], 0
    while i < len(lines):
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
    return ROLE.sub(_role, "\n".join(out))


def notebook_for(src: Path):
    """The Colab notebook of chapter source ``src`` (an nbformat NotebookNode)."""
    nb = jupytext.read(src)
    first_md = True
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:03d}"   # stable ids: the notebook changes only with its source
        cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
        if cell.cell_type == "markdown":
            cell.source = _markdown(cell.source)
            if first_md:
                cell.source += RUNNING
                first_md = False
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    meta = {"kernelspec": nb.metadata.get("kernelspec", {"display_name": "Python 3",
                                                          "language": "python",
                                                          "name": "python3"}),
            "language_info": {"name": "python"},
            "accelerator": "GPU",
            "colab": {"provenance": [], "gpuType": "T4"}}
    nb.metadata = meta
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def render(src: Path) -> str:
    return nbformat.writes(notebook_for(src)) + "\n"


def sources() -> list[Path]:
    return sorted(p for p in BOOK.glob("*.py") if p.read_text().startswith("# ---\n# jupyter:"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--check", action="store_true", help="only report stale notebooks")
    args = ap.parse_args(argv)
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
