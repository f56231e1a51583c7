"""A page whose only math is in an executed output (a claims table, class mathjax_process)
loads MathJax (scripts/sphinxext/vendored_mathjax.py); a page with no math at all does not.
A findings list (a text/markdown output) typesets its $...$ math under the book's
configuration, and the raw-text check (scripts/mathcheck) catches it where it does not."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
MATHJAX_FULL = ROOT / "scripts" / "mathcheck" / "node_modules" / "mathjax-full"


def test_math_in_an_html_output_loads_mathjax(tmp_path):
    (tmp_path / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'scripts' / 'sphinxext')!r})\n"
        "extensions = ['myst_nb', 'vendored_mathjax']\n"
        "nb_execution_mode = 'off'\n"
        "exclude_patterns = ['_build']\n")
    (tmp_path / "index.md").write_text("# Home\n\n```{toctree}\ntable\nplain\n```\n")
    out = nbformat.v4.new_output("display_data", data={
        "text/html": '<table class="mathjax_process"><tr><td>\\(\\sigma(z)\\)</td></tr></table>',
        "text/plain": "table"})
    for name, outputs in (("table", [out]), ("plain", [])):
        nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_markdown_cell(f"# {name}\n\nno math in the text"),
            nbformat.v4.new_code_cell("show()", outputs=outputs)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    build = tmp_path / "_build"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path),
                        str(build)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "mathjax" in (build / "table.html").read_text().lower().split("<body")[0]
    assert "mathjax" not in (build / "plain.html").read_text().lower().split("<body")[0]


FINDING = ("**What this build found** (`smoke`):\n\n- **Reproduced** at `smoke`: the loss "
           "is $\\sum_d c_d\\,\\psi(\\beta/c_d)$ (`SS.sum`, hard): measured 0.5.\n")


def _build_findings_pages(tmp_path: Path, render_format: str) -> Path:
    """Build two pages whose only output is FINDING as text/markdown (what
    ``Ledger.findings`` displays), with the book's MyST settings and its
    ``nb_render_markdown_format``: ``findings`` as the book renders it, ``planted`` with the
    cell set back to MyST-NB's default, CommonMark (the bug). Returns the HTML folder."""
    book = yaml.safe_load((ROOT / "_config.yml").read_text())
    lines = ["import sys", f"sys.path.insert(0, {str(ROOT / 'scripts' / 'sphinxext')!r})",
             "extensions = ['myst_nb', 'vendored_mathjax']", "nb_execution_mode = 'off'",
             "exclude_patterns = ['_build']",
             f"myst_enable_extensions = {book['parse']['myst_enable_extensions']!r}",
             "myst_mathjax_classes = "
             f"{book['sphinx']['config']['myst_mathjax_classes']!r}",
             f"nb_render_markdown_format = {render_format!r}",
             # the book's vendored MathJax, so that Chromium typesets offline as the book does
             f"html_static_path = [{str(ROOT / '_static')!r}]",
             f"mathjax_path = {book['sphinx']['config']['mathjax_path']!r}"]
    (tmp_path / "conf.py").write_text("\n".join(lines) + "\n")
    (tmp_path / "index.md").write_text("# Home\n\n```{toctree}\nfindings\nplanted\n```\n")
    out = nbformat.v4.new_output("display_data", data={"text/markdown": FINDING,
                                                       "text/plain": "<Markdown>"})
    for name, meta in (("findings", {}),
                       ("planted", {"mystnb": {"markdown_format": "commonmark"}})):
        nb = nbformat.v4.new_notebook(cells=[
            nbformat.v4.new_markdown_cell(f"# {name}\n\nThe law $h = u^2 - v^2$."),
            nbformat.v4.new_code_cell("ledger.findings(FINDINGS)", outputs=[out],
                                      metadata=meta)])
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nbformat.write(nb, tmp_path / f"{name}.ipynb")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path),
                        str(tmp_path / "_build")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    return tmp_path / "_build"


def test_the_book_typesets_a_findings_list_and_the_raw_text_check_sees_one_that_is_not(
        tmp_path):
    book = yaml.safe_load((ROOT / "_config.yml").read_text())
    fmt = book["sphinx"]["config"].get("nb_render_markdown_format")
    assert fmt == "myst", "text/markdown outputs must be parsed as MyST to typeset $...$"
    build = _build_findings_pages(tmp_path, fmt)
    page, planted = ((build / f"{n}.html").read_text() for n in ("findings", "planted"))
    assert "$\\sum_d" not in page          # no raw dollar math: a math node instead
    assert "\\(\\sum_d c_d\\,\\psi(\\beta/c_d)\\)" in page
    assert "$\\sum_d c_d" in planted
    checked = []
    if shutil.which("node") is not None and MATHJAX_FULL.is_dir():   # the HTML, in node
        r = subprocess.run(["node", str(ROOT / "scripts" / "mathcheck" / "check_math.js"),
                            str(build)], capture_output=True, text=True)
        errors = [ln for ln in r.stdout.splitlines() if ln.startswith("MATH ERROR")]
        assert r.returncode == 1 and len(errors) == 1, r.stdout[-2000:]
        assert "planted.html: untypeset single-dollar math" in errors[0], errors
        checked.append("node")
    if any(shutil.which(c) for c in (os.environ.get("CHROMIUM"), "chromium",
                                     "chromium-browser", "google-chrome") if c):
        r = subprocess.run([sys.executable, str(ROOT / "scripts" / "screenshots.py"), "--html",
                            str(build), "--check-text"], capture_output=True, text=True,
                           timeout=300)                 # the page as Chromium shows it
        found = [ln for ln in r.stdout.splitlines() if ln.startswith("RAW TEXT")]
        assert r.returncode == 1 and len(found) == 1, (r.stdout + r.stderr)[-2000:]
        assert "planted.html: untypeset single-dollar math" in found[0], found
        checked.append("chromium")
    if not checked:
        pytest.skip("the raw-text checks need node with mathjax-full (bash scripts/check_math.sh "
                    "installs it) or Chromium")
