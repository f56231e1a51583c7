"""The sweep engine: cached == uncached, resume after an interruption (an exception and a
real SIGINT), loky and a real dask.distributed cluster give the same table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dltheory import experiments

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    a: float = 2.0
    width: int = 3


def toy(cfg: Cfg, task: dict) -> list[dict]:
    """Several rows per task, seeded from the task."""
    if os.environ.get("TOY_FAIL_AT") == str(task["i"]):
        raise RuntimeError(f"planted failure at task {task['i']}")
    x = np.random.default_rng(task["i"]).standard_normal(cfg.width)
    return [{"j": j, "y": float(cfg.a * x[j])} for j in range(cfg.width)]


def toy_frame(cfg: Cfg, task: dict) -> pd.DataFrame:
    return pd.DataFrame({"j": range(cfg.width), "y": [task["i"] * cfg.a] * cfg.width})


TASKS = [{"i": i, "label": f"t{i}"} for i in range(6)]


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("DLTHEORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DLTHEORY_BACKEND", raising=False)
    monkeypatch.delenv("TOY_FAIL_AT", raising=False)
    experiments.reset_stats()


def test_table_shape_and_task_keys_prepended():
    df = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    assert list(df.columns) == ["i", "label", "j", "y"]
    assert len(df) == 6 * 3
    assert df["i"].tolist() == [i for i in range(6) for _ in range(3)]
    assert experiments.stats() == {"computed": 6, "cached": 0}
    one = experiments.sweep(toy_frame, [{"i": 2}], config=Cfg(), cache=False)
    assert one["y"].tolist() == [4.0, 4.0, 4.0]


def test_cached_equals_uncached():
    plain = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    first = experiments.sweep(toy, TASKS, config=Cfg())
    assert experiments.stats() == {"computed": 12, "cached": 0}
    second = experiments.sweep(toy, TASKS, config=Cfg())
    assert experiments.stats() == {"computed": 12, "cached": 6}
    pd.testing.assert_frame_equal(first, plain)
    pd.testing.assert_frame_equal(second, plain)
    # a different config is a different key: computed again, not served from the cache
    experiments.sweep(toy, TASKS, config=Cfg(a=3.0))
    assert experiments.stats() == {"computed": 18, "cached": 6}


def test_resume_after_exception_computes_only_the_rest(monkeypatch):
    plain = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    experiments.reset_stats()
    monkeypatch.setenv("TOY_FAIL_AT", "4")
    with pytest.raises(RuntimeError, match="planted failure at task 4"):
        experiments.sweep(toy, TASKS, config=Cfg())
    assert experiments.stats() == {"computed": 4, "cached": 0}
    monkeypatch.delenv("TOY_FAIL_AT")
    resumed = experiments.sweep(toy, TASKS, config=Cfg())
    assert experiments.stats() == {"computed": 6, "cached": 4}
    pd.testing.assert_frame_equal(resumed, plain)


SIGINT_SCRIPT = textwrap.dedent("""
    import json, signal, sys, time
    from dataclasses import dataclass
    from dltheory import experiments

    # a shell's background job inherits SIGINT ignored; restore Ctrl-C's KeyboardInterrupt
    signal.signal(signal.SIGINT, signal.default_int_handler)

    @dataclass(frozen=True)
    class C:
        scale: str = "smoke"

    def slow(cfg, task):
        print("start", task["i"], flush=True)
        time.sleep(0.4)
        return {"sq": task["i"] ** 2}

    df = experiments.sweep(slow, [{"i": i} for i in range(8)], config=C(), progress=False)
    print("STATS", json.dumps([experiments.stats(), df["sq"].tolist()]), flush=True)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_resume_after_real_sigint(tmp_path):
    script = tmp_path / "slow_sweep.py"
    script.write_text(SIGINT_SCRIPT)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    t0 = time.time()
    for line in proc.stdout:          # tasks 0-3 are finished (and stored) once 4 starts
        if line.strip() == "start 4":
            break
        assert time.time() - t0 < 60
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout
    stats_line = next(ln for ln in out.splitlines() if ln.startswith("STATS"))
    stats, values = json.loads(stats_line.split(" ", 1)[1])
    assert stats == {"computed": 4, "cached": 4}
    assert values == [i * i for i in range(8)]
    assert [ln for ln in out.splitlines() if ln.startswith("start")] == [
        f"start {i}" for i in range(4, 8)]


def test_loky_gives_the_same_table():
    plain = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    par = experiments.sweep(toy, TASKS, config=Cfg(), backend="loky", n_jobs=2)
    pd.testing.assert_frame_equal(par, plain)
    again = experiments.sweep(toy, TASKS, config=Cfg(), backend="loky", n_jobs=2)
    pd.testing.assert_frame_equal(again, plain)
    assert experiments.stats() == {"computed": 12, "cached": 6}
    import joblib  # "active": the caller's joblib backend (how Ray plugs in)

    with joblib.parallel_config(backend="loky", n_jobs=2):
        active = experiments.sweep(toy, TASKS, config=Cfg(a=5.0), backend="active")
    pd.testing.assert_frame_equal(active, experiments.sweep(toy, TASKS, config=Cfg(a=5.0), cache=False))


def test_backend_and_config_validation(monkeypatch):
    with pytest.raises(ValueError, match="sequential, loky, dask"):
        experiments.sweep(toy, TASKS, config=Cfg(), backend="threads")
    monkeypatch.setenv("DLTHEORY_BACKEND", "spark")
    with pytest.raises(ValueError, match="DLTHEORY_BACKEND"):
        experiments.resolve_backend()

    @dataclass
    class Mutable:
        a: float = 1.0

    with pytest.raises(TypeError, match="frozen dataclass"):
        experiments.sweep(toy, TASKS, config=Mutable())
    with pytest.raises(TypeError, match="frozen dataclass"):
        experiments.sweep(toy, TASKS, config={"a": 1})


def test_default_cache_dir_follows_the_config_scale(monkeypatch):
    monkeypatch.delenv("DLTHEORY_CACHE_DIR")
    d = experiments.cache_dir(Cfg(scale="standard"))
    assert d.parts[-3:] == ("_build", "cache", "standard")


def test_dask_cluster_runs_the_prologue_sweep_like_sequential():
    """The prologue's real drift sweep on a two-process dask.distributed cluster."""
    distributed = pytest.importorskip("distributed")
    from dltheory import gradient_flow as gf

    cfg = gf.Config.for_scale("smoke", n_seeds=4, seeds_per_task=1, k_max=100)
    plain = gf.drift_sweep(cfg, cache=False)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        on_dask = gf.drift_sweep(cfg, backend="dask")
    pd.testing.assert_frame_equal(on_dask, plain)
    assert experiments.stats() == {"computed": 8, "cached": 0}
    pd.testing.assert_frame_equal(gf.drift_sweep(cfg), plain)   # stored by the parent
    assert experiments.stats() == {"computed": 8, "cached": 4}


def test_gpu_check_script_reports_on_cpu(tmp_path):
    """scripts/gpu_check.sh on the prologue at smoke: first capped (1 s), then complete,
    with a report naming the cap, the claims, the tasks and the number of runs."""
    env = {**os.environ, "DLTHEORY_GPU_CHECK_CHAPTERS": "00_gradient_flow",
           "DLTHEORY_GPU_CHECK_OUT": str(tmp_path / "gpu"),
           "DLTHEORY_RESULTS_DIR": str(tmp_path / "claims"), "PYTHON": sys.executable}
    script = str(REPO / "scripts" / "gpu_check.sh")
    capped = subprocess.run(["bash", script, "smoke"], env={**env, "DLTHEORY_GPU_CHECK_CAP": "1"},
                            capture_output=True, text=True, timeout=120)
    assert capped.returncode == 1
    rep = json.loads((tmp_path / "gpu" / "report.json").read_text())
    (row,) = rep["chapters"]
    assert (row["status_text"], row["exit"], row["runs"]) == ("capped, resume by rerunning", 124, 1)
    done = subprocess.run(["bash", script, "smoke"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rep = json.loads((tmp_path / "gpu" / "report.json").read_text())
    (row,) = rep["chapters"]
    assert (row["status"], row["exit"], row["runs"], rep["scale"]) == ("ok", 0, 2, "smoke")
    assert row["claims"]["evidence"] == {"PASS": 3} and row["claims"]["identity"] == {"PASS": 1}
    assert row["tasks"]["computed"] + row["tasks"]["cached"] == 5
    md = (tmp_path / "gpu" / "report.md").read_text()
    assert "| 00_gradient_flow | ok | 0 |" in md and "3 PASS" in md
