"""Integrity of what a page shows (issue #27): the sweep cache key (mutations, code digest),
data-only cache payloads, mutations in worker processes, knob checks, figure display,
atomic writes, calibration caching, the book build's re-execution rule, lock and refusal,
and the reproduction page's statuses."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dltheory import experiments, mutations

REPO = Path(__file__).resolve().parents[1]
MUTANT = "sparse_scaling:heaps_prefactor_high"      # targets theory.heaps_constant (+10%)


@dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    a: float = 1.0


def heaps_task(cfg: Cfg, task: dict) -> dict:
    """A tiny task through a theory function that a registry entry mutates."""
    from dltheory.sparse_scaling import theory

    return {"heaps": theory.heaps_constant(task["a1"]), "active": ",".join(mutations.active())}


def records_task(cfg: Cfg, task: dict) -> list[dict]:
    rng = np.random.default_rng(task["i"])
    return [{"x": float(rng.standard_normal()), "v": rng.standard_normal(3),
             "n": np.int64(task["i"]), "t": (1, "a"), "nan": float("nan"), "inf": -np.inf}]


TASKS = [{"a1": 0.5}, {"a1": 1.0}, {"a1": 2.0}]


@pytest.fixture(autouse=True)
def _clean(tmp_path, monkeypatch):
    monkeypatch.setenv("DLTHEORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DLTHEORY_BACKEND", raising=False)
    monkeypatch.delenv("DLTHEORY_MUTATION", raising=False)
    mutations.deactivate()
    experiments.reset_stats()
    yield
    mutations.deactivate()


# --------------------------------------------------------------------------- 1. cache key
def test_a_mutated_run_then_a_clean_run_gives_the_clean_table(monkeypatch):
    clean = experiments.sweep(heaps_task, TASKS, config=Cfg(), cache=False)
    monkeypatch.setenv("DLTHEORY_MUTATION", MUTANT)
    mutations.activate_from_env()
    mutated = experiments.sweep(heaps_task, TASKS, config=Cfg())
    np.testing.assert_allclose(mutated["heaps"], 1.1 * clean["heaps"], rtol=1e-12)
    mutations.deactivate()
    experiments.reset_stats()
    again = experiments.sweep(heaps_task, TASKS, config=Cfg())
    pd.testing.assert_frame_equal(again, clean)
    assert experiments.stats() == {"computed": 3, "cached": 0}     # nothing served from the mutant


def test_the_code_digest_follows_the_code_a_task_runs(monkeypatch):
    from dltheory.sparse_scaling import experiments as ss

    files = {p.relative_to(REPO / "src" / "dltheory").as_posix()
             for p in experiments.code_files(ss._alpha_n_task)}
    assert {"sparse_scaling/experiments.py", "sparse_scaling/theory.py",
            "sparse_scaling/config.py"} <= files
    assert not {f for f in files if f.endswith(("figures.py", "plotting.py"))}
    assert not {f for f in files if f.startswith(("conservation/", "depth_expansion/"))}
    before = experiments.code_digest(ss._alpha_n_task)
    real = experiments._file_bytes

    def edited(name):
        def fake(path):
            data = real(path)
            return data + b"\n# edited\n" if path.endswith(name) else data
        return fake

    monkeypatch.setattr(experiments, "_file_bytes", edited("sparse_scaling/figures.py"))
    assert experiments.code_digest(ss._alpha_n_task) == before          # a figure edit: same key
    monkeypatch.setattr(experiments, "_file_bytes", edited("dltheory/plotting.py"))
    assert experiments.code_digest(ss._alpha_n_task) == before
    monkeypatch.setattr(experiments, "_file_bytes", edited("sparse_scaling/theory.py"))
    assert experiments.code_digest(ss._alpha_n_task) != before          # a theory edit: new key


# --------------------------------------------------------------------------- 2. payloads
def test_payloads_round_trip_exactly():
    df = experiments.sweep(records_task, [{"i": 0}, {"i": 1}], config=Cfg())
    experiments.reset_stats()
    again = experiments.sweep(records_task, [{"i": 0}, {"i": 1}], config=Cfg())
    assert experiments.stats() == {"computed": 0, "cached": 2}
    for a, b in zip(df.to_dict("records"), again.to_dict("records"), strict=True):
        assert a["x"] == b["x"] and a["n"] == b["n"] and b["t"] == (1, "a")
        np.testing.assert_array_equal(a["v"], b["v"])
        assert np.isnan(b["nan"]) and b["inf"] == -np.inf
    assert df.dtypes.tolist() == again.dtypes.tolist()
    rec = records_task(Cfg(), {"i": 3})
    back = experiments.loads_payload(experiments.dumps_payload(rec))
    assert type(back[0]["n"]) is np.int64 and back[0]["v"].dtype == np.float64
    frame = pd.DataFrame({"f": [0.1, 1 / 3], "s": ["a", None], "b": [True, False],
                          "o": [(1, 2), {"k": 1.5}]}, index=[4, 9])
    back = experiments.loads_payload(experiments.dumps_payload(frame))
    pd.testing.assert_frame_equal(back, frame)


class _Boom:
    def __reduce__(self):
        return (Path.write_text, (_Boom.target, "pwned"))


def _files(tmp_path):
    return sorted((tmp_path / "cache").rglob("*.task"))


def test_a_crafted_pickle_file_is_rejected_and_recomputed(tmp_path, capsys):
    clean = experiments.sweep(heaps_task, TASKS, config=Cfg())
    _Boom.target = tmp_path / "executed"
    for f in _files(tmp_path):
        head = f.read_bytes().split(b"\n")[1]
        key = json.loads(head)["key"]
        f.write_bytes(experiments._entry(key, pickle.dumps(_Boom())))   # a valid checksum
    experiments.reset_stats()
    capsys.readouterr()
    again = experiments.sweep(heaps_task, TASKS, config=Cfg())
    assert not _Boom.target.exists()                                   # never executed
    pd.testing.assert_frame_equal(again, clean)
    assert experiments.stats() == {"computed": 3, "cached": 0}
    assert capsys.readouterr().err.count("unreadable payload") == 3


def test_old_pickled_files_are_recomputed(tmp_path, capsys):
    clean = experiments.sweep(heaps_task, TASKS, config=Cfg())
    for f in _files(tmp_path):
        f.write_bytes(b"DLTHEORY-TASK 1\n" + f.read_bytes().split(b"\n", 1)[1])
    experiments.reset_stats()
    capsys.readouterr()
    pd.testing.assert_frame_equal(experiments.sweep(heaps_task, TASKS, config=Cfg()), clean)
    assert experiments.stats()["computed"] == 3
    assert "old format 'DLTHEORY-TASK 1'" in capsys.readouterr().err


def test_a_tampered_value_is_caught_by_its_checksum(tmp_path, capsys):
    clean = experiments.sweep(heaps_task, TASKS, config=Cfg())
    f = _files(tmp_path)[0]
    data = f.read_bytes()
    magic, head, payload = data.split(b"\n", 2)
    value = json.loads(payload)
    value["d"][0][1] = 123.0                     # change the number, keep the checksum
    f.write_bytes(magic + b"\n" + head + b"\n" + json.dumps(value).encode())
    experiments.reset_stats()
    capsys.readouterr()
    pd.testing.assert_frame_equal(experiments.sweep(heaps_task, TASKS, config=Cfg()), clean)
    assert "checksum mismatch" in capsys.readouterr().err


def test_a_result_that_is_not_data_is_returned_but_not_cached(capsys):
    out = experiments.sweep(_object_task, [{"i": 0}], config=Cfg())
    assert isinstance(out["o"][0], _Opaque)
    assert "not cached" in capsys.readouterr().err
    experiments.reset_stats()
    experiments.sweep(_object_task, [{"i": 0}], config=Cfg())
    assert experiments.stats() == {"computed": 1, "cached": 0}


class _Opaque:
    pass


def _object_task(cfg, task):
    return {"o": _Opaque()}


def test_crafted_payloads_raise_payload_error_only():
    for bad in (b"\x80\x04K\x01.", b'{"zz": 1}', b'{"a": ["|O", [1], "AA=="]}',
                b'{"a": ["<f8", [3], "AAAAAAAAAAA="]}', b'{"s": ["<f8", 5]}', b"[1, {}]"):
        with pytest.raises(experiments.PayloadError):
            experiments.loads_payload(bad)


# --------------------------------------------------------------------------- 3. workers
def test_a_loky_worker_sees_the_active_mutation(monkeypatch):
    pytest.importorskip("joblib")
    clean = experiments.sweep(heaps_task, TASKS, config=Cfg(), cache=False)
    monkeypatch.setenv("DLTHEORY_BACKEND", "loky")
    monkeypatch.setenv("DLTHEORY_JOBS", "1")
    monkeypatch.setenv("DLTHEORY_MUTATION", MUTANT)
    mutations.activate_from_env()
    mutated = experiments.sweep(heaps_task, TASKS, config=Cfg(), cache=False)
    np.testing.assert_allclose(mutated["heaps"], 1.1 * clean["heaps"], rtol=1e-12)
    assert set(mutated["active"]) == {MUTANT}
    mutations.deactivate()
    again = experiments.sweep(heaps_task, TASKS, config=Cfg(), cache=False)   # same worker
    pd.testing.assert_frame_equal(again, clean)


def test_sync_is_idempotent_and_drops_leftovers():
    from dltheory.sparse_scaling import theory

    original = theory.heaps_constant
    mutations.sync([MUTANT])
    mutations.sync([MUTANT])
    assert mutations.active() == [MUTANT]
    assert theory.heaps_constant(1.0) == pytest.approx(1.1 * original(1.0))
    mutations.sync([])
    assert mutations.active() == [] and theory.heaps_constant is original
    with mutations.apply(MUTANT):
        assert mutations.active() == [MUTANT]
        mutations.sync([MUTANT])                 # planted by the block: not planted twice
        assert theory.heaps_constant(1.0) == pytest.approx(1.1 * original(1.0))
    assert mutations.active() == []


# --------------------------------------------------------------------------- 4. knobs
def _toy_config():
    from dataclasses import dataclass as dc

    from dltheory.chapter_config import ChapterConfig, Knob

    @dc(frozen=True)
    class Toy(ChapterConfig):
        KNOBS = {"K_FIXED": Knob("k_fixed", 1, 50, integer=True), "ALPHA1": Knob("alpha1", 0.1, 4.0)}
        k_fixed: int = 5
        alpha1: float = 1.0
        n_rows: int = 3

    return Toy


def test_papermill_parameters_are_checked_by_type():
    Toy = _toy_config()
    with pytest.raises(ValueError, match=r"'K_FIXD'.*allowed parameters: SEED, SCALE, BUDGET, K_FIXED, ALPHA1"):
        Toy.for_scale("smoke", K_FIXD=3)
    with pytest.raises(ValueError, match="ALPHA1 = True: a bool"):
        Toy.for_scale("smoke", ALPHA1=True)
    with pytest.raises(ValueError, match="K_FIXED = False: a bool"):
        Toy.for_scale("smoke", K_FIXED=False)
    with pytest.raises(ValueError, match=r"SEED = 3\.5: an integer"):
        Toy.for_scale("smoke", SEED=3.5)
    with pytest.raises(ValueError, match=r"K_FIXED = 10\.5: an integer"):
        Toy.for_scale("smoke", K_FIXED=10.5)
    with pytest.raises(ValueError, match=r"n_rows = 2\.5: an integer"):
        Toy.for_scale("smoke", n_rows=2.5)
    cfg = Toy.for_scale("smoke", SEED=3.0, K_FIXED=10.0, ALPHA1=2, n_rows=np.int64(4))
    assert (type(cfg.seed), type(cfg.k_fixed), type(cfg.alpha1), type(cfg.n_rows)) == (int, int, float, int)
    assert (cfg.seed, cfg.k_fixed, cfg.alpha1, cfg.n_rows) == (3, 10, 2.0, 4)
    assert cfg == Toy.for_scale("smoke", SEED=3, K_FIXED=10, ALPHA1=2.0, n_rows=4)
    assert type(Toy(k_fixed=7.0).k_fixed) is int                     # direct construction too
    with pytest.raises(ValueError, match="ALPHA1"):
        Toy(alpha1=True)


def test_unknown_parameters_of_a_notebook_namespace():
    from dltheory.chapter_config import check_parameters, unknown_parameters

    Toy = _toy_config()
    ns = {"SEED": 0, "SCALE": None, "BUDGET": None, "K_FIXED": 5, "ALPHA1": 1.0,
          "K_FIXD": 3, "ALPHA3": 0.5, "np": np, "_PRIVATE": 1, "cfg": None, "In": []}
    assert unknown_parameters(ns, Toy) == ["ALPHA3", "K_FIXD"]
    assert unknown_parameters(ns, Toy, ignore=("ALPHA3",)) == ["K_FIXD"]
    with pytest.raises(ValueError, match="unknown parameters ALPHA3, K_FIXD .*allowed: SEED"):
        check_parameters(ns, Toy)
    check_parameters({"SEED": 1, "ALPHA1": 2.0}, Toy)


# --------------------------------------------------------------------------- 5. figures
def test_a_notebook_shows_the_figure_under_agg(monkeypatch):
    import IPython
    import IPython.display
    import matplotlib
    import matplotlib.pyplot as plt
    from ipykernel.zmqshell import ZMQInteractiveShell

    from dltheory import runtime

    matplotlib.use("Agg")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    monkeypatch.setattr(IPython, "get_ipython", lambda: object.__new__(ZMQInteractiveShell))
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kw: shown.append(obj))
    assert runtime.show(fig, "x") is None
    assert len(shown) == 1 and isinstance(shown[0], IPython.display.Image)
    assert shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.fignum_exists(fig.number)                 # closed: not shown twice


def test_a_script_saves_per_scale_and_prints_a_relative_path(monkeypatch, capsys, tmp_path):
    import matplotlib.pyplot as plt

    from dltheory import runtime

    monkeypatch.delenv("DLTHEORY_FIG_DIR", raising=False)
    monkeypatch.setattr(runtime, "repo_root", lambda: tmp_path)
    monkeypatch.setenv("DLTHEORY_SCALE", "standard")
    fig, _ = plt.subplots()
    path = runtime.show(fig, "loss curve")
    assert path == tmp_path / "_build" / "figures" / "standard" / "loss_curve.png"
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert capsys.readouterr().out.strip() == "[figure] _build/figures/standard/loss_curve.png"


# --------------------------------------------------------------------------- 6. atomic writes
def test_a_cut_or_empty_auxiliary_json_is_named_and_rebuilt(tmp_path, capsys):
    from dltheory import atomic

    f = tmp_path / "dltheory_times.json"
    atomic.write_json(f, {"03_sparse_scaling": 12.5, "04_depth_expansion": 40.0})
    assert atomic.read_json(f, {}) == {"03_sparse_scaling": 12.5, "04_depth_expansion": 40.0}
    f.write_text(f.read_text()[:17])
    assert atomic.read_json(f, {}, what="timing file") == {}
    f.write_text("")
    assert atomic.read_json(f, {}, what="timing file") == {}
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(str(f) in line and "rebuilt" in line for line in err)
    assert "empty" in err[1]
    assert atomic.read_json(tmp_path / "missing.json", {"x": 1}) == {"x": 1}


def _full_disk(tmp_path):
    """A 64 KiB tmpfs when this process may mount one, else ``None``."""
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       capture_output=True)
    return mnt if r.returncode == 0 else None


def test_a_full_disk_leaves_the_previous_file(tmp_path, monkeypatch):
    import errno
    import os
    import subprocess

    import matplotlib.pyplot as plt

    from dltheory import atomic

    mnt = _full_disk(tmp_path)
    try:
        where = mnt or tmp_path
        record, png = where / "record.json", where / "figure.png"
        atomic.write_text(record, '{"ok": true}\n')
        fig, ax = plt.subplots()
        ax.plot([0, 1])
        atomic.savefig(fig, png)
        before = (record.read_bytes(), png.read_bytes())
        if mnt is None:                    # no tmpfs here: the write fails as ENOSPC would
            real = os.fdopen

            class Full:
                def __init__(self, f):
                    self.f = f

                def __enter__(self):
                    return self

                def __exit__(self, *a):
                    self.f.close()

                def write(self, b):
                    raise OSError(errno.ENOSPC, "No space left on device")

                def flush(self):
                    pass

                def fileno(self):
                    return self.f.fileno()

            monkeypatch.setattr(atomic.os, "fdopen", lambda fd, mode: Full(real(fd, mode)))
        with pytest.raises(OSError) as err:
            atomic.write_bytes(record, b"x" * 200_000)
        assert err.value.errno == errno.ENOSPC
        fig2, ax2 = plt.subplots(figsize=(30, 30), dpi=200)
        ax2.imshow(np.random.default_rng(0).random((400, 400)))
        with pytest.raises(OSError):
            atomic.savefig(fig2, png)
        plt.close("all")
        assert (record.read_bytes(), png.read_bytes()) == before
        assert sorted(p.name for p in where.iterdir()) == ["figure.png", "record.json"]
    finally:
        if mnt is not None:
            subprocess.run(["umount", str(mnt)], check=False)


# --------------------------------------------------------------------------- 8. book build
def _ex():
    import importlib
    import sys

    sys.path.insert(0, str(REPO / "scripts"))
    return importlib.import_module("execute_chapters")


def test_a_theory_edit_reruns_exactly_the_chapters_that_use_it(tmp_path, monkeypatch):
    import shutil

    ex = _ex()
    monkeypatch.setenv("DLTHEORY_RESULTS_DIR", str(tmp_path / "claims"))   # no ledgers
    pkg = tmp_path / "dltheory"
    shutil.copytree(REPO / "src" / "dltheory", pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    books = sorted((REPO / "book").glob("0[0-4]_*.py"))
    before = {b.stem: ex.inputs_digest(b, pkg) for b in books}
    theory = pkg / "sparse_scaling" / "theory.py"
    theory.write_text(theory.read_text() + "\n\ndef heaps_constant_edited(a):\n    return 2 * a\n")
    after = {b.stem: ex.inputs_digest(b, pkg) for b in books}
    assert [s for s in before if before[s] != after[s]] == ["03_sparse_scaling"]
    figs = pkg / "depth_expansion" / "figures.py"
    figs.write_text(figs.read_text() + "\n# a colour changed\n")
    again = {b.stem: ex.inputs_digest(b, pkg) for b in books}
    assert [s for s in after if after[s] != again[s]] == ["04_depth_expansion"]
    (pkg / "plotting.py").write_text((pkg / "plotting.py").read_text() + "\n# style\n")
    last = {b.stem: ex.inputs_digest(b, pkg) for b in books}
    assert all(last[s] != again[s] for s in again)                  # every chapter's figures

    class Cache:                       # every chapter's code cells are in the cache
        def match_cache_notebook(self, nb):
            return object()

    recorded = dict(before)            # the digests of the last build
    now = {b: after[b.stem] for b in books}
    assert ex.select(books, Cache(), recorded, now) == [REPO / "book" / "03_sparse_scaling.py"]
    recorded.update({b.stem: after[b.stem] for b in books})
    assert ex.select(books, Cache(), recorded, now) == []


def test_the_build_refuses_a_mutated_ledger_and_a_mutation_in_the_environment(tmp_path, monkeypatch, capsys):
    ex = _ex()
    monkeypatch.setenv("DLTHEORY_RESULTS_DIR", str(tmp_path))
    src = REPO / "book" / "03_sparse_scaling.py"
    assert ex.ledger_mutation(src, "smoke") is None                       # no ledger
    (tmp_path / "sparse_scaling.smoke.json").write_text(json.dumps({"chapter": "sparse_scaling"}))
    assert ex.ledger_mutation(src, "smoke") is None                       # no identity
    (tmp_path / "sparse_scaling.smoke.json").write_text(
        json.dumps({"identity": {"mutation": MUTANT}}))
    assert ex.ledger_mutation(src, "smoke") == MUTANT
    monkeypatch.setenv("DLTHEORY_MUTATION", MUTANT)
    assert ex.main([str(tmp_path / "jc"), str(src)]) == 1
    assert "DLTHEORY_MUTATION=sparse_scaling:heaps_prefactor_high is set" in capsys.readouterr().out


def test_a_second_build_waits_and_names_the_holder(tmp_path):
    import subprocess
    import sys
    import time

    lock = tmp_path / "book.lock"
    code = (f"import sys; sys.path.insert(0, {str(REPO / 'scripts')!r}); "
            "import execute_chapters as ex; from pathlib import Path; "
            f"sys.exit(ex.hold_lock(sys.argv[1:], Path({str(lock)!r})))")
    marker = tmp_path / "first-done"
    first = subprocess.Popen([sys.executable, "-c", code, sys.executable, "-c",
                              f"import time, pathlib; time.sleep(3); pathlib.Path({str(marker)!r}).write_text('x')"])
    for _ in range(200):
        if lock.with_suffix(".pid").exists():
            break
        time.sleep(0.05)
    second = subprocess.run([sys.executable, "-c", code, sys.executable, "-c",
                             f"import pathlib, sys; sys.exit(0 if pathlib.Path({str(marker)!r}).exists() else 3)"],
                            capture_output=True, text=True)
    first.wait()
    assert second.returncode == 0                           # ran only after the first finished
    assert f"(PID {first.pid}); waiting" in second.stdout


# --------------------------------------------------------------------------- 7. calibrate
def test_calibrate_caches_finished_runs_only(monkeypatch):
    import importlib
    import sys
    import types

    sys.path.insert(0, str(REPO / "scripts"))
    cal = importlib.import_module("calibrate")
    outcomes = []

    def execute(number, params, scale, **kw):
        kind = outcomes.pop(0)
        ledger = {"claims": [{"id": "X.a", "verdict": "PASS", "kind": "hard"}], "device": "cpu"}
        if kind == "ok":
            return {"ledger": ledger, "error": None, "wall_s": 1.0, "cpu_s": 1.0}
        return {"ledger": None, "error": kind, "wall_s": 1.0, "cpu_s": 1.0}

    monkeypatch.setattr(cal, "_domain_check", lambda: types.SimpleNamespace(execute=execute))
    cfg = cal.RunConfig("sparse_scaling", "03", "smoke", "digest")
    tasks = [{"setting": "{}", "seed": 0, "mutation": ""}]
    for transient in ("DeadKernelError: kernel died", "CellTimeoutError: 1800 s",
                      "no ledger written"):
        outcomes[:] = [transient]
        experiments.reset_stats()
        df = experiments.sweep(cal.run_chapter, tasks, config=cfg, name="calibrate_x")
        assert df["error"][0] == transient and experiments.stats()["computed"] == 1
    outcomes[:] = ["ok"]
    experiments.reset_stats()
    df = experiments.sweep(cal.run_chapter, tasks, config=cfg, name="calibrate_x")
    assert df["error"][0] is None and experiments.stats() == {"computed": 1, "cached": 0}
    experiments.reset_stats()
    again = experiments.sweep(cal.run_chapter, tasks, config=cfg, name="calibrate_x")
    assert experiments.stats() == {"computed": 0, "cached": 1}
    assert again["verdicts"][0] == df["verdicts"][0]


# --------------------------------------------------------------------------- 9. reproduction page
def _mini_repo(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "01_alpha.py").write_text("# chapter alpha\n")
    (tmp_path / "book" / "02_beta.py").write_text("# chapter beta\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                                       "- file: book/01_alpha\n- file: book/02_beta\n")
    return tmp_path


def _ledger(res, chapter, identity, monkeypatch, root, scale="smoke"):
    from dltheory import claims

    monkeypatch.chdir(root)
    led = claims.Ledger(chapter, scale=scale, results_dir=res)
    led.check(f"{chapter}.1", "x", 1.0, 1.0, tol=0.1)
    led.check(f"{chapter}.2", "y", 3.0, 1.0, rtol=0.2, kind="soft")      # NOT REPRODUCED
    path = Path(led.write())
    data = json.loads(path.read_text())
    if identity is not None:
        data["identity"] = identity
    path.write_text(json.dumps(data))


def test_off_default_and_mutated_ledgers_get_their_own_status(tmp_path, monkeypatch, capsys):
    from dltheory import ledgers

    root, res = _mini_repo(tmp_path), tmp_path / "claims"
    _ledger(res, "alpha", {"scale": "smoke", "knobs": {"ALPHA1": 2}, "seed": 0,
                           "defaults": False, "mutation": None}, monkeypatch, root)
    _ledger(res, "beta", {"scale": "smoke", "knobs": {}, "seed": 0, "defaults": True,
                          "mutation": MUTANT}, monkeypatch, root)
    _ledger(res, "beta", None, monkeypatch, root, scale="standard")      # another scale
    found, errors = ledgers.scan(res)
    summary, table = ledgers.collect(found, ledgers.expected_chapters(root / "_toc.yml"),
                                     "smoke", errors=errors, root=root)
    rows = summary.set_index("chapter")
    assert rows.loc["alpha", "status"] == "off defaults"
    assert rows.loc["alpha", "detail"] == "off defaults: SEED=0, ALPHA1=2"
    assert rows.loc["beta", "status"] == "mutated"
    assert rows.loc["beta", "detail"] == f"MUTATED: {MUTANT}"
    alpha = table[table["chapter"] == "alpha"]
    assert alpha["verdict"].tolist() == ["NOT REPRODUCED", "PASS"]       # non-PASS first
    assert ledgers.identity_status({"claims": []}) == (None, "")         # an old ledger
    monkeypatch.setattr(ledgers.runtime, "results_dir", lambda: res)
    monkeypatch.setattr(ledgers, "expected_chapters", lambda: ["alpha", "beta"])
    ledgers.show_page("smoke", res)
    assert "scale smoke: 2 ledger(s) read" in capsys.readouterr().out   # not the standard one


def test_claim_ids_are_anchors():
    import pandas as pd

    from dltheory import claims, ledgers

    rows = pd.DataFrame([{"id": "SS.alpha_N", "kind": "hard", "verdict": "PASS",
                          "measured": "1", "predicted": "1", "tolerance": "0.1",
                          "resolution": "5%", "statement": "s", "note": ""}])
    html = ledgers.anchor_claims(claims.style_table(rows), rows["id"]).to_html()
    assert '<span id="SS.alpha_N"></span>' in html
