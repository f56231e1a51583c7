"""Sphinx extension: load the vendored MathJax once per page, not every file of it.

jupyter-book adds every ``*.js`` file found under an ``html_static_path`` folder to every
page. With MathJax 3 vendored under ``_static/mathjax`` that meant ~35 synchronous script
tags per page (``tex-mml-chtml.js`` a second time, ``all-packages.js``, ``noerrors.js``, ...),
which changes MathJax's TeX configuration from the one the book sets and slows every page.
MathJax itself is added once by ``sphinx.ext.mathjax`` (``mathjax_path``) and loads the TeX
extensions it needs on demand, from the same vendored folder.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config

PREFIX = "mathjax/"


def _drop_vendored_js(app: Sphinx, config: Config) -> None:
    def keep(entry) -> bool:
        name = entry[0] if isinstance(entry, (list, tuple)) else entry
        return not str(name).startswith(PREFIX)

    config.html_js_files = [e for e in config.html_js_files if keep(e)]


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _drop_vendored_js)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
