"""The environment page's execution table says ok / failed in words (an emoji shows as an
empty box without an emoji font)."""

import sys
from pathlib import Path

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "sphinxext"))
import exec_table_text  # noqa: E402


def _doc(cells):
    doc = new_document("t", get_default_settings(Parser))
    table, row = nodes.table(), nodes.row()
    for c in cells:
        row += nodes.entry("", nodes.paragraph("", c))
    table += row
    doc += table
    doc += nodes.paragraph("", "✅ outside a table stays")
    return doc


def test_status_emoji_become_words_in_tables_only():
    doc = _doc(["book/00_gradient_flow", "✅", "❌", "1.25"])
    assert exec_table_text.words_for_emoji(doc) == 2
    cells = [e.astext() for e in doc.findall(nodes.entry)]
    assert cells == ["book/00_gradient_flow", "ok", "failed", "1.25"]
    assert "✅ outside a table stays" in doc.astext()


def test_the_extension_is_loaded_by_the_book():
    cfg = (Path(__file__).resolve().parents[1] / "_config.yml").read_text()
    assert "exec_table_text: scripts/sphinxext" in cfg
