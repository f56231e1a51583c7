"""Chapter 1's page: labelled equations referred to, theorem targets referred to."""

import re
from pathlib import Path

SRC = (Path(__file__).resolve().parents[2] / "book" / "01_conservation_laws.py").read_text()


def test_every_equation_label_is_referred_to_and_every_reference_labelled():
    assert "\\tag" not in SRC
    labels = re.findall(r"^# \$\$ \((cl-eq-[\w-]+)\)$", SRC, flags=re.M)
    refs = set(re.findall(r"\{eq\}`(cl-eq-[\w-]+)`", SRC))
    assert len(labels) >= 5 and len(set(labels)) == len(labels)
    assert refs == set(labels), sorted(refs ^ set(labels))


def test_theorem_targets_exist_for_every_reference():
    targets = set(re.findall(r"^# \((cl-(?:thm|prop)-[\w-]+)\)=$", SRC, flags=re.M))
    refs = set(re.findall(r"\{ref\}`[^<`]*<(cl-[\w-]+)>`", SRC))
    assert {"cl-thm-orth", "cl-thm-count", "cl-thm-complete"} <= targets
    assert refs <= targets, sorted(refs - targets)
