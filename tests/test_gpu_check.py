"""scripts/gpu_check.sh on the CPU: capped runs resume, budgets are passed to the chapters,
and the report carries what the GPU-scale comparison needs (budget spent, rounds, median
resolution, verdict counts, a side-by-side column from another report)."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = str(REPO / "scripts" / "gpu_check.sh")


def _env(tmp_path, **extra):
    return {**os.environ, "DLTHEORY_GPU_CHECK_CHAPTERS": "00_gradient_flow",
            "DLTHEORY_GPU_CHECK_OUT": str(tmp_path / "gpu"),
            "DLTHEORY_CACHE_DIR": str(tmp_path / "cache"),
            "DLTHEORY_RESULTS_DIR": str(tmp_path / "claims"),
            "DLTHEORY_FIG_DIR": str(tmp_path / "fig"), "PYTHON": sys.executable, **extra}


def _report(tmp_path):
    rep = json.loads((tmp_path / "gpu" / "report.json").read_text())
    (row,) = rep["chapters"]
    return rep, row


@pytest.mark.chapter_run
def test_capped_run_resumes_and_the_report_names_budget_rounds_and_resolution(tmp_path):
    capped = subprocess.run(["bash", SCRIPT, "smoke"], env=_env(tmp_path, DLTHEORY_GPU_CHECK_CAP="1"),
                            capture_output=True, text=True, timeout=120)
    assert capped.returncode == 1
    _, row = _report(tmp_path)
    assert (row["status_text"], row["exit"], row["runs"]) == ("capped, resume by rerunning", 124, 1)

    env = _env(tmp_path, DLTHEORY_GPU_CHECK_SAVE_DIR=str(tmp_path / "saved"))
    done = subprocess.run(["bash", SCRIPT, "smoke", "--budget", "30", "--save"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rep, row = _report(tmp_path)
    assert (row["status"], row["exit"], row["runs"], rep["scale"]) == ("ok", 0, 2, "smoke")
    assert rep["budget_s"] == 30.0 and rep["cap_s"] == 1500.0    # 10 * 30 + 1200: a hang stop
    assert rep["problems"] == [] and rep["budget_figures"][0].startswith(
        "00_gradient_flow: budget 30 s, spent ")
    claims = row["claims"]
    # the prologue's claims are identities and a derivation (no evidence, no resolution)
    assert claims["evidence"].get("FAIL", 0) == 0 and sum(claims["identity"].values()) >= 1
    assert claims["budget"]["seconds"] == 30.0 and claims["budget"]["spent"] >= 0
    md = (tmp_path / "gpu" / "report.md").read_text()
    assert "| 00_gradient_flow | ok |" in md and "budget 30.0 s" in md and "## Check" in md
    saved = list((tmp_path / "saved").glob("smoke-cpu-*"))
    assert sorted(p.suffix for p in saved) == [".json", ".md"], saved


@pytest.mark.chapter_run
def test_side_by_side_column_from_another_report(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"device": "NVIDIA H200", "chapters": [
        {"chapter": "00_gradient_flow", "claims": {"median_resolution": 0.05,
                                                   "budget": {"rounds": {"gf_drift": [4, 4]}}}}]}))
    env = _env(tmp_path, DLTHEORY_GPU_CHECK_COMPARE=str(other))
    done = subprocess.run(["bash", SCRIPT, "smoke"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    md = (tmp_path / "gpu" / "report.md").read_text()
    assert "vs NVIDIA H200" in md and "5% (gf_drift 4/4)" in md


def test_bad_budget_stops_before_any_chapter(tmp_path):
    r = subprocess.run(["bash", SCRIPT, "smoke", "--budget", "abc"], env=_env(tmp_path),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "DLTHEORY_BUDGET" in r.stderr


def test_a_cap_that_a_library_rewraps_is_still_a_cap(tmp_path):
    """The SIGTERM may land in code that catches the Capped it raises and raises another
    error (seen under load in CI): the sidecar still says capped, exit 124."""
    chapter = tmp_path / "99_wraps.py"
    chapter.write_text("import os, signal, time\n"
                       "try:\n"
                       "    os.kill(os.getpid(), signal.SIGTERM)\n"
                       "    time.sleep(5)\n"
                       "except BaseException as err:\n"
                       "    raise RuntimeError('a task failed') from err\n")
    side = tmp_path / "side.json"
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check_run.py"),
                          str(chapter), str(side)], capture_output=True, text=True, timeout=60)
    rec = json.loads(side.read_text())
    assert (run.returncode, rec["status"], rec["exit"]) == (124, "capped", 124), run.stderr
    assert "surfacing as RuntimeError" in rec["error"]


def _report_module():
    spec = importlib.util.spec_from_file_location("gpu_check_report",
                                                  REPO / "scripts" / "gpu_check_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_check_fails_on_errors_and_missing_records_never_on_time():
    """The paper step's verdict: a chapter over its budget (a loaded machine) is a figure;
    an error, a hard FAIL, a cap, no ledger or no budget record is a failure."""
    check = _report_module().check
    rec = {"seconds": 60.0, "spent": 95.0, "overrun": 35.0, "held": False, "startup": 12.0,
           "rounds": {"ss_gd": [0, 8]}, "tasks": {"ss_gd": [3, 64]}}

    def row(ch, status="ok", budget=rec, ledger=True):
        return {"chapter": ch, "status": status, "status_text": status, "error": "",
                "wall_s": 130.0, "claims": {"budget": budget} if ledger else None}

    problems, figures = check([row("slow")], 60.0)
    assert problems == [] and figures == [
        "slow: budget 60 s, spent 95.0 s (over by 35.0 s), bound 1.25 x budget NOT held, "
        "wall 130 s (start-up 12.0 s), tasks 3/64; ss_gd 0/8"]
    problems, _ = check([row("a", "claims failed"), row("b", ledger=False),
                         row("c", budget=None), row("d", budget={**rec, "seconds": 30.0})], 60.0)
    assert [p.split(":")[0] for p in problems] == ["a", "b", "c", "d"]
    assert check([row("e", budget=None)], None) == ([], [])     # no budget: no record needed
