"""The chapters' paired notebooks: in sync with their .py sources, stripped of outputs,
bootstrapping from the one install URL, one parameters cell, listed in the TOC."""

from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

import dltheory

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
SOURCES = sorted(p for p in BOOK.glob("*.py") if p.read_text().startswith("# ---\n# jupyter:"))
BOOTSTRAP = f'"{dltheory.INSTALL_SPEC}"'


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_there_are_chapters():
    assert any(p.name.startswith("00_") for p in SOURCES), SOURCES


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_pair_is_in_sync_and_stripped(src):
    twin = src.with_suffix(".ipynb")
    assert twin.exists(), f"{twin.name} missing: run `jupytext --to ipynb book/{src.name}`"
    py = jupytext.read(src)
    nb = nbformat.read(twin, as_version=4)
    assert [c.cell_type for c in py.cells] == [c.cell_type for c in nb.cells], (
        f"{twin.name} is out of sync with {src.name}: run `jupytext --to ipynb book/{src.name}`")
    for a, b in zip(py.cells, nb.cells, strict=True):
        assert a.source == b.source, (
            f"{twin.name} differs from {src.name} at:\n{a.source[:200]}\n"
            f"run `jupytext --to ipynb book/{src.name}`")
        assert a.metadata.get("tags", []) == b.metadata.get("tags", [])
    for c in _code_cells(nb):
        assert c.get("outputs", []) == [], f"{twin.name} holds outputs: strip them"
        assert c.get("execution_count") is None, f"{twin.name} holds execution counts"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_first_code_cell_is_the_colab_bootstrap(src):
    first = _code_cells(jupytext.read(src))[0]
    assert "remove-cell" in first.metadata.get("tags", [])
    assert BOOTSTRAP in first.source, f"{src.name}: bootstrap must install {BOOTSTRAP}"
    assert 'find_spec("dltheory") is None' in first.source
    assert "!" not in first.source and "%" not in first.source   # no magics


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_one_parameters_cell_and_no_magics(src):
    nb = jupytext.read(src)
    params = [c for c in _code_cells(nb) if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, f"{src.name}: exactly one parameters cell, found {len(params)}"
    assert "runtime.scale()" in params[0].source
    for c in _code_cells(nb):
        for line in c.source.splitlines():
            assert not line.lstrip().startswith(("!", "%")), f"{src.name}: magic {line!r}"


def test_toc_lists_existing_pages_and_every_chapter():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    for f in [toc["root"], *files]:
        stem = ROOT / f
        assert any(stem.with_suffix(s).exists() for s in (".md", ".py")), f"TOC entry {f} missing"
    chapters = {f"book/{p.stem}" for p in SOURCES}
    assert chapters <= set(files), f"chapters not in the TOC: {sorted(chapters - set(files))}"


def test_install_url_lives_in_one_place():
    assert dltheory.INSTALL_SPEC.startswith("git+https://")
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert dltheory.REPO_URL == cfg["repository"]["url"]
