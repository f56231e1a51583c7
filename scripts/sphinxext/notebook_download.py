"""Sphinx extension: a ``.ipynb`` entry in every notebook page's download menu.

The chapters are Jupytext percent sources (``book/NN_*.py``) paired with output-free
notebooks (``book/NN_*.ipynb``, what Colab opens). sphinx-book-theme lists a ``.ipynb``
download only when the page context names one (``ipynb_source``), which MyST-NB does not do
for a ``.py`` source. For each page whose source has a paired notebook beside it, this sets
``ipynb_source`` (before the theme builds its buttons, priority 501) and copies the notebook
to ``_sources/`` of the HTML output, where the theme's link points.
"""

import shutil
from pathlib import Path


def _add_ipynb(app, pagename, templatename, context, doctree):
    if app.builder.format != "html" or pagename not in app.env.found_docs:
        return
    src = Path(app.env.doc2path(pagename))
    twin = src.with_suffix(".ipynb")
    if src.suffix != ".py" or not twin.is_file():
        return
    rel = f"{pagename}.ipynb"
    dest = Path(app.outdir) / "_sources" / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(twin, dest)
    context["ipynb_source"] = rel


def setup(app):
    app.connect("html-page-context", _add_ipynb, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
