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
from dltheory import ledgers

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
        if a.cell_type == "code" and b.source != pair.INSTALL:
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
    assert f"[the notation]({dltheory.BOOK_URL}book/notation.html)" in out
    assert "(P.1)" in out and "[[a, b]](" in out
    assert "> **Takeaway**" in out and "> It holds." in out and ":class:" not in out
    assert "<details><summary>Solution to 1</summary>" in out and "</details>" in out
    assert "> **Note**" in out and "```" not in out


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_first_code_cell_is_the_colab_bootstrap(src):
    """The source's first code cell is the (hidden) install cell; the notebook's is pair.py's
    short, collapsed one, pinned to the release of this package version."""
    first = _code_cells(jupytext.read(src))[0]
    assert pair.is_install_cell(first), f"{src.name}: first code cell must be the install cell"
    assert 'find_spec("dltheory") is None' in first.source
    nb_first = _code_cells(nbformat.read(src.with_suffix(".ipynb"), as_version=4))[0]
    assert nb_first.source == pair.INSTALL
    assert BOOTSTRAP in nb_first.source and f"@v{dltheory.__version__}" in BOOTSTRAP
    assert nb_first.metadata.get("cellView") == "form"              # collapsed in Colab
    assert nb_first.metadata.get("jupyter", {}).get("source_hidden")  # and in Jupyter
    assert len(nb_first.source.splitlines()) <= 30     # collapsed; tested in test_install_cell
    assert "!" not in nb_first.source and "%" not in nb_first.source   # no magics


def test_version_is_one_number():
    """The install tag comes from dltheory.__version__, which pyproject.toml repeats."""
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta.get("version") == dltheory.__version__


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_sources_and_notebooks_are_not_jupytext_paired(src):
    """pair.py writes the notebooks: no jupytext pairing in the source header, the notebook
    metadata or jupytext.toml (Jupyter with jupytext would otherwise rewrite the notebook
    from the source, MyST and all, when a reader saves the .py)."""
    header = src.read_text().split("# ---\n", 2)[1]
    assert "formats:" not in header, f"{src.name}: drop the 'formats:' line of its header"
    nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
    assert "jupytext" not in nb.metadata
    toml = ROOT / "jupytext.toml"
    assert not toml.exists() or not re.search(r"^\s*formats\s*=", toml.read_text(), re.M)


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_notebook_links_work_outside_the_book(src):
    """Colab opens one notebook: links to the book's pages are absolute."""
    nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
    first_md = next(c for c in nb.cells if c.cell_type == "markdown")
    assert first_md.source.split("\n\n")[1].startswith("> **Running this notebook.**")
    for c in nb.cells:
        if c.cell_type == "markdown":
            rel = re.findall(r"\]\((?![a-z][\w+.-]*:|#)([^)\s]+)\)", c.source)
            assert not rel, f"{src.name}: relative links {rel}"


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
    files = ledgers.toc_files(ROOT / "_toc.yml")
    for f in [toc["root"], *files]:
        stem = ROOT / f
        assert any(stem.with_suffix(s).exists() for s in (".md", ".py")), f"TOC entry {f} missing"
    chapters = {f"book/{p.stem}" for p in SOURCES}
    assert chapters <= set(files), f"chapters not in the TOC: {sorted(chapters - set(files))}"


def test_pair_shows_package_source_for_viewers():
    """A folded "how it is computed" block with {literalinclude} shows the function's current
    source in the notebook too, with its address; package roles link the API page."""
    md = ("````{dropdown} How it is computed\n```{literalinclude} ../src/dltheory/plotting.py\n"
          ":pyobject: slope_line\n```\n````\n\n{py:func}`~dltheory.plotting.slope_line`")
    out = pair._markdown(md)
    assert "<details><summary>How it is computed</summary>" in out
    assert "def slope_line(ax, slope" in out and "return ax\n```" in out
    assert "def loglog" not in out and "{literalinclude}" not in out
    assert f"/blob/v{dltheory.__version__}/src/dltheory/plotting.py#L" in out
    assert f"[`slope_line`]({dltheory.BOOK_URL}book/api.html#dltheory.plotting.slope_line)" in out


def test_install_url_lives_in_one_place():
    assert dltheory.INSTALL_SPEC.startswith("git+https://")
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert dltheory.REPO_URL == cfg["repository"]["url"]
    assert dltheory.BOOK_URL == cfg["html"]["baseurl"]


WORDS = re.compile(r"\b(issues?|brief|the lead)\b|/(?:work|tmp|home|root)/", re.I)


def test_no_internal_words_or_machine_paths_reach_readers():
    """Readers never see our process words ("issue", "brief") or a builder's paths."""
    hits = []
    for p in [*BOOK.glob("*.py"), *BOOK.glob("*.md"), *(ROOT / "src").rglob("*.py")]:
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if WORDS.search(line) and "noqa: words" not in line:
                hits.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not hits, "\n".join(hits)


PAPERS = {"tran2026conservation": "2606.17816", "anguita2026pretraining": "2602.20062",
          "sous2026asymmetric": "2605.23591", "cheng2026mechanism": "2605.08297"}


def _bib() -> dict[str, str]:
    text = (BOOK / "references.bib").read_text()
    return {m[1]: m[2] for m in re.finditer(r"^@\w+\{([\w:-]+),(.*?)^\}", text, re.M | re.S)}


def test_bibliography_links_every_work():
    """Every entry has a URL (arXiv page or DOI); the four papers link their arXiv page."""
    bib = _bib()
    assert len(bib) == len(set(bib))
    for key, body in bib.items():
        assert re.search(r"^\s*url\s*=\s*\{https://", body, re.M), f"{key}: no url"
    for key, arxiv in PAPERS.items():
        assert f"https://arxiv.org/abs/{arxiv}" in bib.get(key, ""), key


def test_every_cited_key_is_in_the_bibliography():
    bib = _bib()
    for p in [*BOOK.glob("*.py"), *BOOK.glob("*.md")]:
        for body in re.findall(r"\{cite[:\w]*\}`([^`]+)`", p.read_text()):
            for key in (k.strip() for k in body.split(",")):
                assert key in bib, f"{p.name}: {{cite}} key {key!r} not in book/references.bib"


def test_book_config_links_source_and_lists_the_prologue_first():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "sphinx.ext.viewcode" in cfg["sphinx"]["extra_extensions"]   # API -> [source]
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    first = toc["parts"][0]["chapters"][0]["file"]
    assert first == "book/00_gradient_flow", first


def test_every_book_source_carries_its_jupytext_header():
    """scripts/pair.py pairs only sources that start with the jupytext header: a chapter that
    lost it (chapter 1 did, in a trim) kept a stale notebook and its executed outputs in CI."""
    root = Path(__file__).resolve().parents[1]
    missing = [p.name for p in sorted((root / "book").glob("*.py"))
               if not p.read_text().startswith("# ---\n# jupyter:")]
    assert not missing, missing
