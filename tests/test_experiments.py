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
    """The prologue's real drift sweep on a dask.distributed cluster whose worker is another
    process (one worker: each worker process and its nanny import torch, the cost of this
    test; a second worker adds nothing the first does not show)."""
    distributed = pytest.importorskip("distributed")
    from dltheory import gradient_flow as gf

    cfg = gf.Config.for_scale("smoke", n_seeds=4, seeds_per_task=1, k_max=100)
    plain = gf.drift_sweep(cfg, cache=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        on_dask = gf.drift_sweep(cfg, backend="dask")
    pd.testing.assert_frame_equal(on_dask, plain)
    assert experiments.stats() == {"computed": 8, "cached": 0}
    pd.testing.assert_frame_equal(gf.drift_sweep(cfg), plain)   # stored by the parent
    assert experiments.stats() == {"computed": 8, "cached": 4}


# --------------------------------------------------------------------------- cache integrity
def _store(cfg: Cfg = Cfg(), name: str = "toy"):
    return experiments._open_store(toy, cfg, name, experiments._torch_dtype(), None)


def _file_of(task: dict) -> Path:
    store = _store()
    return store.path(store.key(task))


def _corrupt_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("[cache]")]


def test_a_flipped_byte_in_each_file_is_named_recomputed_and_counted(capsys):
    plain = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    experiments.sweep(toy, TASKS, config=Cfg())
    for k, task in enumerate(TASKS):
        path = _file_of(task)
        data = bytearray(path.read_bytes())
        data[(k * 97 + 5) % len(data)] ^= 0x01          # header and payload positions
        path.write_bytes(bytes(data))
        experiments.reset_stats()
        capsys.readouterr()
        again = experiments.sweep(toy, TASKS, config=Cfg())
        pd.testing.assert_frame_equal(again, plain)
        assert experiments.stats() == {"computed": 1, "cached": 5}
        (line,) = _corrupt_lines(capsys.readouterr().err)
        assert line.startswith(f"[cache] toy: task {task} corrupt (") and line.endswith("; recomputed")
    experiments.reset_stats()
    experiments.sweep(toy, TASKS, config=Cfg())          # every entry was overwritten
    assert experiments.stats() == {"computed": 0, "cached": 6}


def test_every_single_byte_flip_of_a_file_is_detected():
    experiments.sweep(toy, TASKS[:1], config=Cfg())
    store = _store()
    key = store.key(TASKS[0])
    path = store.path(key)
    good = path.read_bytes()
    assert experiments._read_entry(path, key)[1] is None
    for pos in range(len(good)):
        data = bytearray(good)
        data[pos] ^= 0x20
        path.write_bytes(bytes(data))
        value, reason = experiments._read_entry(path, key)
        assert value is None and reason, pos


def test_truncated_files_and_a_bad_payload_are_recomputed(capsys):
    plain = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    experiments.sweep(toy, TASKS, config=Cfg())
    cuts = [0, 7, 40, -1, None]      # None: half the file; -1 cuts the payload only
    for task, cut in zip(TASKS, cuts, strict=False):
        path = _file_of(task)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2 if cut is None else cut])
    store = _store()
    key = store.key(TASKS[5])
    store.path(key).write_bytes(experiments._entry(key, b"not a payload"))
    experiments.reset_stats()
    capsys.readouterr()
    pd.testing.assert_frame_equal(experiments.sweep(toy, TASKS, config=Cfg()), plain)
    assert experiments.stats() == {"computed": 6, "cached": 0}
    lines = _corrupt_lines(capsys.readouterr().err)
    assert len(lines) == 6
    assert "(truncated)" in lines[0] and "(checksum mismatch)" in lines[3]
    assert "(unreadable payload: not JSON)" in lines[5]


def test_a_file_swapped_with_another_tasks_file_is_a_key_mismatch(capsys):
    plain = experiments.sweep(toy, TASKS, config=Cfg(), cache=False)
    experiments.sweep(toy, TASKS, config=Cfg())
    a, b = _file_of(TASKS[1]), _file_of(TASKS[4])
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    experiments.reset_stats()
    capsys.readouterr()
    pd.testing.assert_frame_equal(experiments.sweep(toy, TASKS, config=Cfg()), plain)
    assert experiments.stats() == {"computed": 2, "cached": 4}
    lines = _corrupt_lines(capsys.readouterr().err)
    assert len(lines) == 2 and all("key mismatch" in ln for ln in lines)
    assert f"task {TASKS[1]} corrupt" in lines[0] and "'i':4" in lines[0]


FRESH_SCRIPT = textwrap.dedent("""
    import json
    from dataclasses import dataclass
    from dltheory import experiments

    @dataclass(frozen=True)
    class C:
        scale: str = "smoke"

    def square(cfg, task):
        return {"sq": task["i"] ** 2}

    tasks = [{"i": i} for i in range(5)]
    for name in ("first_sweep", "second_sweep"):
        experiments.sweep(square, tasks, config=C(), name=name, progress=False)
    print("STATS", json.dumps(experiments.stats()))
""")


def _script_stats(script: Path) -> dict:
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return json.loads(next(ln for ln in out.splitlines() if ln.startswith("STATS"))[6:])


def test_a_fully_cached_rerun_in_a_fresh_process_computes_nothing(tmp_path):
    script = tmp_path / "two_sweeps.py"
    script.write_text(FRESH_SCRIPT)
    assert _script_stats(script) == {"computed": 10, "cached": 0}
    assert _script_stats(script) == {"computed": 0, "cached": 10}


WRITER_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from dltheory import experiments

    path, me = Path(sys.argv[1]), int(sys.argv[2])
    key = {"task": "shared"}
    for _ in range(150):
        experiments._write_entry(path, key, {"writer": me, "blob": chr(64 + me) * 300_000})
""")


def test_concurrent_writers_of_one_entry_never_give_a_corrupt_read(tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER_SCRIPT)
    path = tmp_path / "entry.task"
    writers = [subprocess.Popen([sys.executable, str(script), str(path), str(w)])
               for w in (1, 2)]
    reads = 0
    while any(w.poll() is None for w in writers) or reads == 0:
        try:
            value, reason = experiments._read_entry(path, {"task": "shared"})
        except FileNotFoundError:
            if all(w.poll() is not None for w in writers):   # writers died: never loop on
                break
            continue
        assert reason is None
        assert value["blob"] == chr(64 + value["writer"]) * 300_000
        reads += 1
    assert [w.wait() for w in writers] == [0, 0]
    assert reads > 0 and not list(tmp_path.glob(".*.tmp"))    # no temporary file left
