"""The reproduction page's links from a claim id to its chapter section and its code.

Static only (no chapter runs, no chapter package imported: each ``rules.py`` is loaded by
path for its ``KINDS``): every claim id of every chapter links to a heading of its book
page, under which the book calls a checks function that reaches the linked function, whose
source holds the id (or the literal head of the f-string that builds it).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from pathlib import Path

import pandas as pd
import pytest

from dltheory import chapter, claims, ledgers

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [c.name for c in chapter.REGISTRY]


def claim_ids(name: str) -> list[str]:
    ch = chapter.get(name)
    path = ROOT / "src" / "dltheory" / ch.subpackage / "rules.py"
    spec = importlib.util.spec_from_file_location(f"_rules_{ch.subpackage}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.KINDS)


@functools.cache
def parsed(subpackage: str, module: str):
    """A chapter module's source and its functions by name."""
    src = (ROOT / "src" / "dltheory" / subpackage / f"{module}.py").read_text()
    return src, {n.name: n for n in ast.walk(ast.parse(src))
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.fixture(scope="module")
def sites():
    return {name: ledgers.claim_sites(name) for name in CHAPTERS}


@pytest.mark.parametrize("name", CHAPTERS)
def test_every_claim_links_to_a_heading_and_a_function(name, sites):
    ch, s = chapter.get(name), sites[name]
    ids = claim_ids(name)
    book_lines = (ROOT / ch.book).read_text().splitlines()
    headings = {sec[3]: sec for sec in s["sections"] if sec[3]}
    misses = []
    for cid in ids:
        link = ledgers.claim_link(cid, s)
        if link is None or link["section"] is None:
            misses.append(cid)
            continue
        # the function exists and its source holds the id or the literal head building it
        src, defs = parsed(ch.subpackage, link["module"])
        fn = defs[link["function"].rpartition(".")[2]]
        assert (fn.lineno, fn.end_lineno) == link["lines"], cid
        body = ast.get_source_segment(src, fn)
        literal = max((t for t, whole, _ in s["index"]["literals"][(link["module"],
                                                                    link["function"])]
                       if (t == cid if whole else cid.startswith(t))), key=len, default=None)
        assert literal is not None, cid
        assert literal in body or literal in src, (cid, literal)   # else a constant it names
        # the book calls the reaching function below the linked heading, before the next one
        mod, called = link["called"]
        line, sec = s["calls"][(mod, called)]
        assert re.search(rf"\b{mod}\.{called}\s*\(", book_lines[line - 1]), (cid, line)
        assert headings[sec[3]] == sec and sec[0] < line, cid
        assert not [h for h in s["sections"] if sec[0] < h[0] < line], cid
    assert len(misses) <= 0.1 * len(ids), misses


def test_ids_built_in_f_strings_take_the_longest_literal_head(sites):
    s = sites["conservation_laws"]
    count = ledgers.claim_link("CL.count.relu", s)
    assert count["function"] == "count_claims"            # the f-string's function ...
    assert count["called"] == ("checks", "counts")        # ... reached from the book's call
    assert ledgers.claim_link("CL.count.sigmoid.sigmoid_norm", s)["function"] == \
        "sigmoid_gating"
    assert ledgers.claim_link("CL.no_such_family", s) is None
    route = ledgers.claim_link("DE.routeA.coverage", sites["depth_expansion"])
    assert route["called"] == ("checks", "theorems")     # a helper, reached from the book


def test_heading_slugs_are_docutils_section_ids():
    assert ledgers.heading_slug("4. The MoE law count") == "the-moe-law-count"
    assert ledgers.heading_slug("3. The model-limited exponent $\\alpha_N$") == \
        "the-model-limited-exponent-alpha-n"
    assert ledgers.heading_slug("2.1 `grad` is *the* [derivative](x.html)") == \
        "grad-is-the-derivative"


@pytest.mark.parametrize("name", CHAPTERS)
def test_slugs_match_a_built_page(name, sites):
    ch = chapter.get(name)
    page = ROOT / "_build" / "html" / "book" / f"{Path(ch.book).stem}.html"
    if not page.exists() or page.stat().st_mtime < (ROOT / ch.book).stat().st_mtime:
        pytest.skip(f"no build of {ch.book} newer than its source")
    ids = set(re.findall(r'<section\b[^>]*\bid="([^"]+)"', page.read_text()))
    assert {sec[3] for sec in sites[name]["sections"] if sec[3]} <= ids


def test_links_render_under_the_claim_id():
    rows = pd.DataFrame([{"id": "CL.count.relu", "kind": "hard", "verdict": "PASS",
                          "measured": "1", "predicted": "1", "tolerance": "0", "resolution":
                          "exact", "statement": "s", "note": ""}])
    links = ledgers.claim_links("conservation_laws", rows["id"])
    html = ledgers.anchor_claims(claims.style_table(rows), rows["id"], links).to_html()
    assert '<span id="CL.count.relu"></span>' in html
    assert 'href="01_conservation_laws.html#counting-the-laws"' in html
    assert re.search(r'href="https://github.com/dltheory/dltheory/blob/main/src/dltheory/'
                     r'conservation/checks.py#L\d+-L\d+"', html)
    assert ledgers.claim_links("no_such_chapter", ["X.y"]) == {}
