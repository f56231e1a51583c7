"""Every chapter reads as a book: the limits of scripts/chapter_shape.py (DESIGN.md)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import chapter_shape  # noqa: E402


@pytest.mark.parametrize("src", chapter_shape.chapters(), ids=lambda p: p.name)
def test_chapter_shape(src):
    shape = chapter_shape.measure(src)
    assert not shape.breaches(), f"{src.name}: {'; '.join(shape.breaches())}"
