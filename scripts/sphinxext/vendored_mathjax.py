"""Sphinx extension: load the vendored MathJax once per page, not every file of it.

jupyter-book adds every ``*.js`` file found under an ``html_static_path`` folder to every
page. With MathJax 3 vendored under ``_static/mathjax`` that meant ~35 synchronous script
tags per page (``tex-mml-chtml.js`` a second time, ``all-packages.js``, ``noerrors.js``, ...),
which changes MathJax's TeX configuration from the one the book sets and slows every page.
MathJax itself is added once by ``sphinx.ext.mathjax`` (``mathjax_path``) and loads the TeX
extensions it needs on demand, from the same vendored folder.

Sphinx adds MathJax only to pages with math nodes of their own. A page whose math is all in
executed outputs (the reproduction and calibration pages: claims tables rendered as HTML
with class ``mathjax_process``) got no MathJax, and its ``\\(...\\)`` stayed raw TeX. Such a
page is marked as having equations after it is read (``doctree-read`` runs after the math
domain's own collection), so MathJax is loaded there too.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config

PREFIX = "mathjax/"


def _drop_vendored_js(app: Sphinx, config: Config) -> None:
    def keep(entry) -> bool:
        name = entry[0] if isinstance(entry, (list, tuple)) else entry
        return not str(name).startswith(PREFIX)

    config.html_js_files = [e for e in config.html_js_files if keep(e)]


MARK = "mathjax_process"   # the class claims.style_table gives a table with TeX in it


def _math_in_outputs(app: Sphinx, doctree) -> None:
    if any(n.get("format") == "html" and MARK in n.astext() for n in doctree.findall(nodes.raw)):
        app.env.get_domain("math").data["has_equations"][app.env.docname] = True


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _drop_vendored_js)
    app.connect("doctree-read", _math_in_outputs)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
