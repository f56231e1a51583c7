"""A claim's verdict line links its id to that claim's row on the reproduction page.

The line (``Claim._repr_html_``, shown by an echoing ledger in a notebook) points at
``reproduction.html#<id>``; the reproduction page gives each row that anchor
(``ledgers.anchor_claims``). Checked on a ledger here, and on the built book when there is
one (every verdict link of every chapter page lands on an anchor that exists).
"""

import html
import re
from pathlib import Path

import pytest

from dltheory import BOOK_URL, claims, ledgers

ROOT = Path(__file__).resolve().parents[1]
HREF = re.compile(r'<div class="dltheory-verdict"[^>]*><a href="([^"]+)"')


def _ledger():
    led = claims.Ledger("gradient_flow", "smoke")
    led.check("GF.one", "a law $h$ holds", 1.0, 1.0, tol=0.1)
    led.inconclusive("GF.two", "not decided <here>", note="too few <seeds>", kind="soft")
    return led


def test_the_verdict_line_links_its_id_in_the_book_and_to_the_published_page(monkeypatch):
    led = _ledger()
    monkeypatch.setenv("DLTHEORY_STATIC", "1")          # the book build
    line = led.claims["GF.one"]._repr_html_()
    assert HREF.search(line).group(1) == "reproduction.html#GF.one"
    assert ">PASS</span>" in line and "GF.one [hard]" not in line    # id linked, verdict styled
    text = re.sub(r"<[^>]+>", "", line)
    assert html.unescape(text) == repr(led.claims["GF.one"])       # the same line as text
    monkeypatch.setenv("DLTHEORY_STATIC", "0")          # Jupyter, Colab
    line = led.claims["GF.two"]._repr_html_()
    assert HREF.search(line).group(1) == f"{BOOK_URL}book/reproduction.html#GF.two"
    assert "<seeds>" not in line and "&lt;seeds&gt;" in line       # escaped


def test_the_linked_anchor_exists_on_the_reproduction_table(monkeypatch):
    monkeypatch.setenv("DLTHEORY_STATIC", "1")
    led = _ledger()
    table = led.table()
    page = ledgers.anchor_claims(claims.style_table(table), table["id"]).to_html()
    anchors = set(re.findall(r'<span id="([^"]+)"></span>', page))
    for c in led.claims.values():
        fragment = HREF.search(c._repr_html_()).group(1).split("#", 1)[1]
        assert fragment in anchors, (fragment, anchors)


def test_the_echo_prints_the_line_outside_a_notebook(capsys):
    led = claims.Ledger("gradient_flow", "smoke", echo=True)
    led.check("GF.one", "s", 1.0, 1.0, tol=0.1)
    assert capsys.readouterr().out.startswith("GF.one [hard]: PASS")


BUILT = ROOT / "_build" / "html" / "book"


@pytest.mark.skipif(not (BUILT / "reproduction.html").is_file(), reason="no built book")
def test_every_verdict_link_of_the_built_book_has_its_anchor():
    anchors = set(re.findall(r'id="([^"]+)"', (BUILT / "reproduction.html").read_text()))
    missing = []
    for page in sorted(BUILT.glob("[0-9][0-9]_*.html")):
        for href in HREF.findall(page.read_text()):
            if href.startswith("reproduction.html#") and \
                    html.unescape(href.split("#", 1)[1]) not in anchors:
                missing.append(f"{page.name}: {href}")
    assert not missing, "verdict links without an anchor on the reproduction page:\n" + \
        "\n".join(missing)
