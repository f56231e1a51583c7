"""Sphinx extension for the API reference page (book/api.md): a strict build that stays clean.

The package's docstrings are written for people reading the source (plain text, numpy-style
sections, ASCII formulas such as ``|cos|`` or ``f: R -> R``), not always as valid reST.
Rendering them unchecked would break the strict book build (``-W -n``) whenever a chapter
edits a docstring. So, for every docstring autodoc pulls in:

1. numpy-style sections are converted by napoleon (functions, classes, modules); property and
   attribute docstrings are left as written (napoleon would read ``X: text`` as a type);
2. the result is parsed as standalone reST; if docutils reports any warning or error, the
   docstring is shown verbatim as a literal block instead, named in the build log, and the
   build ends with a warning listing them (so the strict build fails: fix the docstring);
3. a relative cross-reference (``:class:`~.config.Config``` in ``pretrain_finetune.checks``)
   is made absolute the way Python reads it in the source: against the object's module,
   else its package (``from .config import Config``). Sphinx would instead search every
   module for a ``config.Config`` and warn when several chapters have one;
4. on the API page only, a Python cross-reference that does not resolve (``torch.Tensor``,
   ``np.ndarray``, a name in a docstring) is rendered as plain code instead of warning:
   there is no intersphinx in an offline build. Everywhere else ``-n`` stays strict.
"""

from __future__ import annotations

import io
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

API_DOCNAME = "book/api"
_MSG = re.compile(r"\((WARNING|ERROR|SEVERE)/\d\) (.*)")
# messages that only mean "plain docutils does not know this Sphinx role/directive"
_SPHINX_ONLY = ("Unknown interpreted text role", "Unknown directive type",
                'No role entry for', 'No directive entry for')
_verbatim: list[str] = []


def _rst_problems(text: str, env=None) -> list[str]:
    """Warnings and errors plain docutils reports for ``text`` (Sphinx-only roles excepted)."""
    from docutils.core import publish_doctree

    stream = io.StringIO()
    try:
        publish_doctree(text, settings_overrides={
            "report_level": 2, "halt_level": 5, "warning_stream": stream,
            "file_insertion_enabled": False, "raw_enabled": False, "_disable_config": True,
            "env": env,  # Sphinx roles (:func:, :math:, ...) look it up while parsing
        })
    except Exception as exc:  # noqa: BLE001 - any parser crash means "not clean"
        return [f"parser crashed: {exc}"]
    problems = []
    for line in stream.getvalue().splitlines():
        m = _MSG.search(line)
        if m and not m.group(2).startswith(_SPHINX_ONLY):
            problems.append(m.group(2))
    return problems


_RELATIVE = re.compile(r"(:[\w:]+:`~?)\.([\w.]+)`")


def _canonical(dotted: str) -> str | None:
    """The name Sphinx documents the object ``dotted`` under (a module by its own name, a
    class or function by where it is defined), or ``None`` when nothing has that name."""
    import importlib
    import types

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        if isinstance(obj, types.ModuleType):
            return obj.__name__
        if isinstance(getattr(obj, "__module__", None), str) and hasattr(obj, "__qualname__"):
            return f"{obj.__module__}.{obj.__qualname__}"
        return dotted
    return None


def _absolute(text: str, module: str, is_package: bool) -> str:
    """``text`` with each relative reference ``.x.y`` made absolute: what ``module.x.y``
    names where that exists, else what ``<package>.x.y`` names; left as written otherwise."""
    package = module if is_package else module.rpartition(".")[0]

    def fix(m: re.Match) -> str:
        for base in dict.fromkeys((module, package)):
            target = _canonical(f"{base}.{m.group(2)}") if base else None
            if target:
                return f"{m.group(1)}{target}`"
        return m.group(0)

    return _RELATIVE.sub(fix, text)


def _process_docstring(app: Sphinx, what, name, obj, options, lines: list[str]) -> None:
    from sphinx.ext.napoleon import _process_docstring as napoleon

    module = name if what == "module" else getattr(obj, "__module__", None)
    if isinstance(module, str):
        is_package = what == "module" and hasattr(obj, "__path__")
        lines[:] = _absolute("\n".join(lines), module, is_package).split("\n")
    original = list(lines)
    if what not in ("property", "attribute", "data"):
        napoleon(app, what, name, obj, options, lines)
    problems = _rst_problems("\n".join(lines), app.env)
    if not problems:
        return
    _verbatim.append(name)
    logger.info("api_docstrings: %s shown verbatim (%s)", name, problems[0])
    body = [ln.rstrip() for ln in original]
    while body and not body[-1]:
        body.pop()
    lines[:] = ["::", ""] + [("    " + ln) if ln else "" for ln in body] + [""]


def _missing_reference(app: Sphinx, env, node, contnode):
    if node.get("refdomain") == "py" and node.get("refdoc") == API_DOCNAME:
        return contnode if isinstance(contnode, nodes.Node) else None
    return None


def _report(app: Sphinx, exc) -> None:
    # a warning: the strict build (-W) fails, so no docstring reaches the page verbatim
    if exc is None and _verbatim:
        logger.warning("api_docstrings: %d docstring(s) not valid reST, shown verbatim: %s",
                       len(_verbatim), ", ".join(sorted(set(_verbatim))))


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx.ext.autodoc")
    app.setup_extension("sphinx.ext.napoleon")
    # replace napoleon's own docstring hook by the checked one above
    for listener in list(app.events.listeners.get("autodoc-process-docstring", [])):
        if getattr(listener.handler, "__module__", "") == "sphinx.ext.napoleon":
            app.disconnect(listener.id)
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("missing-reference", _missing_reference)
    app.connect("build-finished", _report)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
