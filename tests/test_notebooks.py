"""The chapters' paired notebooks: in sync with their .py sources, stripped of outputs,
bootstrapping from the one install URL, one parameters cell, listed in the TOC."""

import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

import dltheory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import pair  # noqa: E402  (scripts/pair.py writes the notebooks; the tests use its renderer)

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
    fix = f"run `python scripts/pair.py book/{src.name}`"
    assert twin.exists(), f"{twin.name} missing: {fix}"
    assert twin.read_text() == pair.render(src), f"{twin.name} is out of sync: {fix}"
    nb = nbformat.read(twin, as_version=4)
    py = jupytext.read(src)
    assert [c.cell_type for c in py.cells] == [c.cell_type for c in nb.cells]
    for a, b in zip(py.cells, nb.cells, strict=True):
        assert a.metadata.get("tags", []) == b.metadata.get("tags", [])
        if a.cell_type == "code":
            assert a.source == b.source
    for c in _code_cells(nb):
        assert c.get("outputs", []) == [], f"{twin.name} holds outputs: strip them"
        assert c.get("execution_count") is None, f"{twin.name} holds execution counts"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    assert nb.metadata.get("accelerator") == "GPU"          # Colab offers a GPU runtime


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_notebook_reads_cleanly_in_a_viewer(src):
    """No MyST directive fences or roles reach a notebook viewer; solutions are folded."""
    nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    assert "Running this notebook" in first_md.source and "SCALE" in first_md.source
    for c in nb.cells:
        if c.cell_type != "markdown":
            continue
        assert not re.search(r"^(```|:::)\{", c.source, re.M), c.source[:300]
        assert not re.search(r"\{(doc|eq|cite|ref|numref)[:\w]*\}`", c.source), c.source[:300]
        if "Solution" in c.source:
            assert "<details>" in c.source


def test_pair_rewrites_myst_for_viewers():
    md = ("Intro {doc}`the notation <notation>` and {eq}`P.1`, {cite:p}`a, b`.\n\n"
          "```{admonition} Takeaway\n:class: tip\nIt holds.\n```\n\n"
          "```{dropdown} Solution to 1\nThe answer is $2$.\n```\n\n"
          "```{note}\nA note.\n```")
    out = pair._markdown(md)
    assert "[the notation](notation.md)" in out and "(P.1)" in out and "[a, b]" in out
    assert "> **Takeaway**" in out and "> It holds." in out and ":class:" not in out
    assert "<details><summary>Solution to 1</summary>" in out and "</details>" in out
    assert "> **Note**" in out and "```" not in out


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_first_code_cell_is_the_colab_bootstrap(src):
    first = _code_cells(jupytext.read(src))[0]
    assert "remove-cell" in first.metadata.get("tags", [])
    assert BOOTSTRAP in first.source, f"{src.name}: bootstrap must install {BOOTSTRAP}"
    assert 'find_spec("dltheory") is None' in first.source
    # installs only in Colab; elsewhere one line says how to install
    assert '"google.colab" in sys.modules' in first.source
    assert "pip install -e ." in first.source and ".venv/bin/activate" in first.source
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


WORDS = re.compile(r"\b(issues?|brief|the lead)\b|/(?:work|tmp|home|root)/", re.I)


def test_no_internal_words_or_machine_paths_reach_readers():
    """Readers never see our process words ("issue", "brief") or a builder's paths."""
    hits = []
    for p in [*BOOK.glob("*.py"), *BOOK.glob("*.md"), *(ROOT / "src").rglob("*.py")]:
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if WORDS.search(line) and "noqa: words" not in line:
                hits.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)
