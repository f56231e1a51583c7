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


# Which tests are unit tests (helper B, issue #31): these run whole chapters or the corners
# of a chapter's domain, the work of the nbmake, paper and calibration steps. They carry the
# ``chapter_run`` marker, so the unit pass (``-m "not chapter_run"``) leaves them out;
# ``pytest -m chapter_run`` still runs them. Where what they check is checked in CI:
CHAPTER_RUNS = {
    # every hard claim at each chapter's CI_SETTINGS (whole chapters at smoke): the
    # calibration runs 12 off-default settings per chapter, corners first, and its committed
    # records (book/calibration, tests/test_calibration.py::test_committed_calibration_schema)
    # show no false FAIL; nbmake and the paper step run every chapter at its defaults
    ("test_domain.py", "test_ci_setting_passes_every_hard_claim"),
    # two whole prologue runs through scripts/calibrate.py: the calibration itself; the
    # schema of its output stays checked by test_committed_calibration_schema
    ("test_calibration.py", "test_calibrate_prologue_end_to_end"),
    # gpu_check.sh running the prologue (marked in the file too): the paper step of
    # scripts/test.sh runs gpu_check.sh on every chapter and asserts its report
    ("test_gpu_check.py", "test_capped_run_resumes_and_the_report_names_budget_rounds_and_resolution"),
    ("test_gpu_check.py", "test_side_by_side_column_from_another_report"),
}


# The planted-error tests (each chapter's tests/<chapter>/test_mutations.py) run a chapter's
# experiments once at smoke-sized inputs and its checks per registry entry: not units either.
# They carry ``registry``; scripts/test.sh runs them as their own step after the unit pass.
REGISTRY_FILES = ("test_mutations.py",)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in REGISTRY_FILES:
            item.add_marker(pytest.mark.registry)
        if (item.path.name, getattr(item, "originalname", item.name)) in CHAPTER_RUNS:
            item.add_marker(pytest.mark.chapter_run)


@pytest.fixture(scope="module")
def unmutated():
    """``get(key, run)``: the unmutated verdicts of ``run`` (``{claim: verdict}``), run once
    per key and module and shared by the planted-error tests that judge the same experiment
    (``mutations.flips(m, run, before=get(key, run))``): the entries change nothing
    before they are applied, so one clean run serves them all."""
    memo: dict = {}

    def get(key, run):
        if key not in memo:
            memo[key] = dict(run())
        return memo[key]
    return get
