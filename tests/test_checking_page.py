"""book/checking.md ("How this book checks itself") states the ledger's rules; its numbers
are the code's constants, and every reference a chapter makes into it has its target."""

import re
from pathlib import Path

import yaml

from dltheory import budget, claims

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "book" / "checking.md").read_text()


def test_the_page_is_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "book/checking" in files


def test_the_rules_it_states_are_the_code_constants():
    pct = lambda x: f"{x:.0%}"   # noqa: E731
    assert f"its maximum ({pct(claims.MAX_RESOLUTION)}" in PAGE
    assert f"resolving worse than {pct(claims.WEAK_RESOLUTION)}" in PAGE
    assert f"resolution above {pct(claims.BLIND_RESOLUTION)} is `INCONCLUSIVE`" in PAGE
    assert f"within {budget.BOUND:g} times the budget" in PAGE
    for verdict in claims.VERDICTS:
        assert f"- `{verdict}`" in PAGE, verdict
    for kind in claims.KINDS:
        assert f"`{kind}`" in PAGE, kind


def test_every_reference_into_the_page_has_its_target():
    targets = set(re.findall(r"^\((checking-[\w-]+)\)=$", PAGE, re.M))
    assert {"checking-kinds", "checking-planted", "checking-budgets"} <= targets
    for src in sorted((ROOT / "book").glob("*.py")) + sorted((ROOT / "book").glob("*.md")):
        text = src.read_text()
        for ref in re.findall(r"<(checking-[\w-]+)>`", text):
            assert ref in targets, f"{src.name}: {{ref}} to {ref!r}, which checking.md lacks"
        # MyST makes no heading anchors here (myst_heading_anchors is unset): a section of
        # the page is reached with {ref}`text <checking-...>`, not checking.md#anchor
        assert not re.search(r"\(checking\.md#", text), f"{src.name}: use {{ref}} to a target"
