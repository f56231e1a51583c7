"""Test-wide settings: headless matplotlib and one thread (2 shared cores in CI)."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

matplotlib.use("Agg")
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _results_in_tmp(tmp_path, monkeypatch):
    """Ledgers, figures and sweep caches written by tests go to a temporary folder, never
    to _build (a test must not pass by loading an earlier run's cached result)."""
    monkeypatch.setenv("DLTHEORY_RESULTS_DIR", str(tmp_path / "claims"))
    monkeypatch.setenv("DLTHEORY_FIG_DIR", str(tmp_path / "figures"))
    monkeypatch.setenv("DLTHEORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DLTHEORY_TIMES", str(tmp_path / "times.json"))
