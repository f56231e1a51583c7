"""The book's download menu offers the paired .ipynb of a Jupytext page
(scripts/sphinxext/notebook_download.py), built with the book's theme and MyST-NB."""

import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def test_a_py_page_with_a_paired_notebook_offers_it(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'scripts' / 'sphinxext')!r})\n"
        "extensions = ['myst_nb', 'notebook_download']\n"
        "html_theme = 'sphinx_book_theme'\n"
        "nb_execution_mode = 'off'\n"
        "nb_custom_formats = {'.py': ['jupytext.reads', {'fmt': 'py:percent'}]}\n"
        "exclude_patterns = ['_build', 'book/*.ipynb']\n")
    (tmp_path / "index.md").write_text("# Home\n\n```{toctree}\nbook/page\nbook/other\n```\n")
    page = "# %% [markdown]\n# # A page\n\n# %%\nx = 1\n"
    (tmp_path / "book" / "page.py").write_text(page)
    (tmp_path / "book" / "other.py").write_text(page.replace("A page", "Unpaired"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nbformat.write(nb, tmp_path / "book" / "page.ipynb")
    out = tmp_path / "_build"
    r = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(tmp_path),
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    copied = out / "_sources" / "book" / "page.ipynb"
    assert copied.read_text() == (tmp_path / "book" / "page.ipynb").read_text()
    html = (out / "book" / "page.html").read_text()
    assert "download-notebook-button" in html and "_sources/book/page.ipynb" in html
    # a page without a paired notebook offers none
    assert "download-notebook-button" not in (out / "book" / "other.html").read_text()
