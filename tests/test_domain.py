"""Each chapter declares its parameter domain, rejects values outside it, and passes every
hard claim at a few off-default settings inside it (its CI_SETTINGS), at smoke."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import domain_check  # noqa: E402

CHAPTERS = sorted(domain_check.SUBPACKAGES)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_domain_is_declared_and_sampled_inside(chapter):
    mod = domain_check.config_module(chapter)
    assert mod.DOMAIN and len(mod.CI_SETTINGS) >= 2
    rng = np.random.default_rng(0)
    for _ in range(20):
        s = mod.sample_setting(rng)
        for knob, value in s.items():
            if knob in mod.DOMAIN and isinstance(mod.DOMAIN[knob], tuple):
                lo, hi = mod.DOMAIN[knob]
                assert lo <= value <= hi, (knob, value)


def _ci_cases():
    cases = []
    for ch in CHAPTERS:
        try:
            settings = domain_check.config_module(ch).CI_SETTINGS
        except (ImportError, AttributeError):
            settings = [None]
        cases += [pytest.param(ch, s, id=f"{ch}-{i}") for i, s in enumerate(settings)]
    return cases


@pytest.mark.parametrize(("chapter", "setting"), _ci_cases())
def test_ci_setting_passes_every_hard_claim(chapter, setting):
    assert setting is not None, f"chapter {chapter} declares no CI_SETTINGS"
    r = domain_check.run_setting(chapter, setting, "smoke")
    assert r["error"] is None and not r["not_pass"], r
