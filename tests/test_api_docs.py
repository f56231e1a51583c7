"""The API page (book/api.md) without a Sphinx build: every module it names imports, every
docstring it pulls in is valid reST after napoleon (the build would show it verbatim and
fail), and a relative cross-reference resolves the way Python reads it."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts" / "sphinxext"))
import api_docstrings  # noqa: E402

MODULES = re.findall(r"^\.\. automodule:: ([\w.]+)", (ROOT / "book" / "api.md").read_text(), re.M)


def _documented(mod):
    """(name, what, object) of what ``automodule :members:`` renders for ``mod``."""
    yield mod.__name__, "module", mod
    names = getattr(mod, "__all__", None)
    for name, obj in vars(mod).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if names is None and getattr(obj, "__module__", None) != mod.__name__:
            continue
        if names is not None and name not in names:
            continue
        yield f"{mod.__name__}.{name}", "class" if inspect.isclass(obj) else "function", obj


def _problems(name, what, obj) -> list[str]:
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring, NumpyDocstring

    doc = inspect.getdoc(obj)
    if not doc:
        return []
    lines = doc.splitlines()
    module = name if what == "module" else obj.__module__
    lines = api_docstrings._absolute("\n".join(lines), module, hasattr(obj, "__path__")).split("\n")
    cfg = Config(napoleon_use_param=True, napoleon_use_rtype=True)
    lines = GoogleDocstring(NumpyDocstring(lines, cfg, what=what, name=name, obj=obj).lines(),
                            cfg, what=what, name=name, obj=obj).lines()
    return api_docstrings._rst_problems("\n".join(lines))


def test_the_page_names_modules_that_import():
    assert len(MODULES) > 30
    for name in MODULES:
        importlib.import_module(name)


@pytest.mark.parametrize("modname", MODULES)
def test_every_docstring_on_the_page_is_valid_rest(modname):
    bad = {}
    for name, what, obj in _documented(importlib.import_module(modname)):
        problems = _problems(name, what, obj)
        if problems:
            bad[name] = problems[0]
    assert not bad, f"shown verbatim by the build: {bad}"


def test_relative_references_resolve_against_the_module_then_its_package():
    text = "of the :class:`~.config.Config`; see :mod:`.rules` and :func:`.nowhere`"
    out = api_docstrings._absolute(text, "dltheory.pretrain_finetune.checks", False)
    assert ":class:`~dltheory.pretrain_finetune.config.Config`" in out
    assert ":mod:`dltheory.pretrain_finetune.rules`" in out
    assert ":func:`.nowhere`" in out  # nothing of that name: left for Sphinx
    # a package's own docstring: ``.x`` is inside the package
    out = api_docstrings._absolute(":func:`.drift_sweep`", "dltheory.gradient_flow", True)
    assert out == ":func:`dltheory.gradient_flow.experiments.drift_sweep`"  # where it is defined
    # a name imported into the module: the target is where it is defined
    out = api_docstrings._absolute(":func:`.spectrum`", "dltheory.sparse_scaling.experiments", False)
    assert out == ":func:`dltheory.sparse_scaling.data.spectrum`"
