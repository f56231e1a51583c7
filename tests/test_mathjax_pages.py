"""A page whose only math is in an executed output (a claims table, class mathjax_process)
loads MathJax (scripts/sphinxext/vendored_mathjax.py); a page with no math at all does not."""

import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


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
