"""scripts/gpu_check.sh on the CPU: capped runs resume, budgets are passed to the chapters,
and the report carries what the GPU-scale comparison needs (budget spent, rounds, median
resolution, verdict counts, a side-by-side column from another report)."""

import json
import os
import subprocess
import sys
from pathlib import Path

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
    assert rep["budget_s"] == 30.0 and rep["cap_s"] == 158.0     # ceil(1.25 * 30 + 120)
    claims = row["claims"]
    assert claims["evidence"].get("FAIL", 0) == 0 and sum(claims["evidence"].values()) >= 1
    assert claims["budget"]["seconds"] == 30.0 and claims["budget"]["spent"] >= 0
    assert 0 < claims["median_resolution"] < 1
    md = (tmp_path / "gpu" / "report.md").read_text()
    assert "| 00_gradient_flow | ok |" in md and "budget 30.0 s" in md
    saved = list((tmp_path / "saved").glob("smoke-cpu-*"))
    assert sorted(p.suffix for p in saved) == [".json", ".md"], saved


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
