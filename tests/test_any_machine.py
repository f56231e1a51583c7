"""Machine independence of the engine and the records (issue 45): cache keys do not depend
on the last bit of a computed float; only tracked source marks a record stale; a cache that
cannot be written degrades to computed-not-cached with one line; a sweep outside a notebook
is never silent for long."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from dltheory import experiments, provenance, runtime

PKG = Path(provenance.__file__).resolve().parent


@dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    a: float = 0.1
    grid: tuple = (1e-17, 0.3)


def square(cfg: Cfg, task: dict) -> dict:
    return {"y": cfg.a * task["x"] ** 2}


def slow(cfg: Cfg, task: dict) -> dict:
    time.sleep(0.3)
    return {"y": task["x"]}


TASKS = [{"x": float(x)} for x in range(4)]


def _key(task: dict, config=Cfg()) -> tuple:
    store = experiments._open_store(square, config, "key", None, True)
    return store.path(store.key(task)), store.base["config"]


def _up(x: float, n: int = 1) -> float:
    for _ in range(n):
        x = type(x)(np.nextafter(x, np.inf))     # the same type, one ulp up
    return x


@pytest.mark.parametrize("x", [0.1, 1e-17, 3.1622776601683795e-18, 2.5e5, -7.3, np.float64(0.3)])
def test_a_last_bit_keeps_the_key_and_a_ninth_digit_changes_it(x):
    assert _key({"x": x}) == _key({"x": _up(x)}) == _key({"x": _up(x, 3)})
    assert _key({"x": x}) != _key({"x": x * (1 + 3e-9)})
    assert _key({"x": 1}) != _key({"x": 1.0})          # the type stays in the key
    assert _key({"x": (x, 2)}) == _key({"x": (_up(x), 2)}) != _key({"x": [x, 2]})
    # the Config's floats, also inside tuples, the same way
    base = _key({"x": 1.0}, Cfg(a=x, grid=(x, 0.3)))[1]
    assert _key({"x": 1.0}, Cfg(a=_up(x), grid=(_up(x), 0.3)))[1] == base
    assert _key({"x": 1.0}, Cfg(a=x, grid=(x * (1 + 3e-9), 0.3)))[1] != base


def test_nan_inf_and_signed_zero_keys():
    assert _key({"x": float("nan")}) == _key({"x": float("nan")})
    assert _key({"x": float("inf")}) != _key({"x": -float("inf")})
    assert _key({"x": 0.0}) == _key({"x": -0.0})
    assert experiments._key_float(np.float32(1.0)) == experiments._key_float(np.nextafter(
        np.float32(1.0), np.float32(2.0)))


def _cache_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if "cannot write the cache folder" in ln]


def test_a_full_disk_degrades_to_computed_not_cached_with_one_line(monkeypatch, capsys, tmp_path):
    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(experiments, "_write_entry", full)
    monkeypatch.setattr(experiments, "_UNWRITABLE", set())
    plain = experiments.sweep(square, TASKS, config=Cfg(), cache=False)
    experiments.reset_stats()
    df = experiments.sweep(square, TASKS, config=Cfg(), cache=tmp_path / "c")
    assert df.equals(plain) and experiments.stats() == {"computed": 4, "cached": 0}
    experiments.sweep(square, TASKS, config=Cfg(a=2.0), cache=tmp_path / "c")
    (line,) = _cache_lines(capsys.readouterr().err)        # one line, not one per task
    assert str(tmp_path / "c") in line and os.strerror(errno.ENOSPC) in line


def _read_only(folder: Path, monkeypatch) -> None:
    """Make ``folder`` read-only: chmod where that binds, else (root) a writer that fails
    as a read-only folder does."""
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o555 if p.is_dir() else 0o444)
    probe = folder / ".probe"
    try:
        probe.write_text("")
        probe.unlink()
    except OSError:
        return

    def denied(*_a, **_k):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
    monkeypatch.setattr(experiments.tempfile, "mkstemp", denied)


def test_a_read_only_cache_is_read_and_named_once(monkeypatch, capsys, tmp_path):
    cache = tmp_path / "shared"
    first = experiments.sweep(square, TASKS, config=Cfg(), cache=cache)
    monkeypatch.setattr(experiments, "_UNWRITABLE", set())
    _read_only(cache, monkeypatch)
    try:
        experiments.reset_stats()
        capsys.readouterr()
        again = experiments.sweep(square, TASKS, config=Cfg(), cache=cache)
        assert again.equals(first) and experiments.stats() == {"computed": 0, "cached": 4}
        more = experiments.sweep(square, TASKS + [{"x": 9.0}, {"x": 10.0}], config=Cfg(), cache=cache)
        assert experiments.stats() == {"computed": 2, "cached": 8} and len(more) == 6
        (line,) = _cache_lines(capsys.readouterr().err)
        assert str(cache) in line
    finally:
        for p in [cache, *cache.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)


def test_a_sweep_outside_a_notebook_prints_progress_lines(monkeypatch, capsys):
    monkeypatch.setattr(experiments, "HEARTBEAT_S", 0.2)
    monkeypatch.setattr(runtime, "in_notebook", lambda: False)
    monkeypatch.delenv("DLTHEORY_PROGRESS", raising=False)
    tasks = [{"x": float(i), "r": i // 2} for i in range(4)]
    experiments.sweep(slow, tasks, config=Cfg(), cache=False, progress=False, rounds="r")
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("[sweep] slow:")]
    assert len(lines) >= 3 and "/4 tasks, " in lines[-1] and "/2 rounds" in lines[-1]
    # in a notebook (nbmake, the built book) and with DLTHEORY_PROGRESS=0: nothing
    monkeypatch.setattr(runtime, "in_notebook", lambda: True)
    experiments.sweep(slow, tasks[:2], config=Cfg(), cache=False, progress=False)
    monkeypatch.setattr(runtime, "in_notebook", lambda: False)
    monkeypatch.setenv("DLTHEORY_PROGRESS", "0")
    experiments.sweep(slow, tasks[:2], config=Cfg(), cache=False)
    time.sleep(0.3)
    assert "[sweep]" not in capsys.readouterr().err


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_only_tracked_source_counts_towards_staleness(tmp_path):
    repo = tmp_path / "checkout"
    pkg = repo / "src" / "dltheory"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "x")
    before = {ch: provenance.package_sha256(ch, pkg) for ch in (None, "sparse_scaling")}
    (pkg / "foo_backup.py").write_text("x = 1\n")                         # an editor backup
    (pkg / "sparse_scaling" / "windows_old.py").write_text("y = 2\n")
    assert {ch: provenance.package_sha256(ch, pkg) for ch in before} == before
    _git(repo, "add", "src/dltheory/foo_backup.py")                      # now it is source
    assert provenance.package_sha256(None, pkg) != before[None]
    # outside a git checkout (an installed package) every file counts, as before
    plain = tmp_path / "site" / "dltheory"
    shutil.copytree(PKG, plain, ignore=shutil.ignore_patterns("__pycache__"))
    h = provenance.package_sha256(None, plain)
    (plain / "foo_backup.py").write_text("x = 1\n")
    assert provenance.tracked_files(plain) is None
    assert provenance.package_sha256(None, plain) != h


def _nudge(v):
    """A value that differs from ``v`` in its 7th significant digit (or in kind)."""
    if isinstance(v, bool) or v is None:
        return not v if isinstance(v, bool) else 1
    if isinstance(v, int):
        return v + 1
    if isinstance(v, float):
        return v + max(abs(v), 1.0) * 1e-6
    if isinstance(v, str):
        return v + "x"
    if isinstance(v, tuple):
        return (_nudge(v[0]), *v[1:]) if v else (1,)
    if isinstance(v, dict):
        return {**v, "_nudged": 1}
    raise TypeError(type(v))


def _configs():
    import importlib

    from dltheory import chapter

    rows = chapter.REGISTRY.values() if isinstance(chapter.REGISTRY, dict) else chapter.REGISTRY
    return [importlib.import_module(f"dltheory.{c.subpackage}.config").Config.for_scale("smoke")
            for c in rows]


def test_every_config_field_is_in_the_key_and_the_budget_is_not():
    """Property over every chapter's Config: changing any field changes the key, a last bit
    of a float field does not, and the budget fields never do (a larger budget reuses a
    smaller run's tasks)."""
    import dataclasses

    for cfg in _configs():
        base = experiments._config_digest(cfg)
        for f in dataclasses.fields(cfg):
            v = getattr(cfg, f.name)
            other = object.__new__(type(cfg))           # no validation: any value goes
            for g in dataclasses.fields(cfg):
                object.__setattr__(other, g.name, getattr(cfg, g.name))
            object.__setattr__(other, f.name, _nudge(v))
            changed = experiments._config_digest(other) != base
            assert changed == (f.name not in experiments.BUDGET_FIELDS), (type(cfg), f.name)
            if type(v) is float and v != 0 and np.isfinite(v):
                object.__setattr__(other, f.name, _up(v))
                assert experiments._config_digest(other) == base, (type(cfg), f.name)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_staleness_digest_covers_every_judging_file_and_no_other(tmp_path):
    """Property over chapter 3's package digest in a committed copy: a code line added to
    any file it judges by changes it; one added to a figure module, a page-side reader or
    another chapter's module does not."""
    repo = tmp_path / "checkout"
    pkg = repo / "src" / "dltheory"
    shutil.copytree(PKG, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "x")
    judged = set(provenance._judging_files(pkg, "sparse_scaling"))
    assert judged and all("depth_expansion" not in p.parts for p in judged)
    base = provenance.package_sha256("sparse_scaling", pkg)
    for p in sorted(pkg.rglob("*.py")):
        text = p.read_text(encoding="utf-8")
        p.write_text(text + "\n_nudged = 1\n", encoding="utf-8")
        try:
            assert (provenance.package_sha256("sparse_scaling", pkg) != base) == (p in judged), p
        finally:
            p.write_text(text, encoding="utf-8")


def test_an_array_in_a_task_is_keyed_by_every_element():
    a = np.linspace(0.0, 1.0, 2000)
    b = a.copy()
    b[1000] += 1e-6                     # repr would elide the middle of both
    c = a.copy()
    c[1000] = np.nextafter(c[1000], 2.0)
    assert _key({"x": a}) != _key({"x": b}) and _key({"x": a}) == _key({"x": c})
    assert _key({"x": a}) != _key({"x": a.astype(np.float32)})


def test_the_code_digest_covers_every_file_the_task_runs(monkeypatch):
    """Property over the prologue's sweep task: a change to any file of its import closure
    changes its code digest; its figures, the engine and other chapters are not in it."""
    from dltheory.gradient_flow import config as gf_config
    from dltheory.gradient_flow import experiments as gf_exp

    fn, cfg = gf_exp.drift_task, gf_config.Config.for_scale("smoke")
    files = experiments.code_files(fn, cfg)
    names = {f.resolve().relative_to(PKG).as_posix() for f in files}
    assert "gradient_flow/experiments.py" in names and "gradient_flow/config.py" in names
    assert not any(n.endswith(("figures.py", "plotting.py")) or n.startswith("depth_expansion")
                   for n in names)
    assert "experiments.py" not in names and "budget.py" not in names
    base = experiments.code_digest(fn, cfg)
    real = experiments._file_bytes
    for f in files:
        monkeypatch.setattr(experiments, "_file_bytes",
                            lambda p, f=f: real(p) + (b"\n#" if p == str(f) else b""))
        assert experiments.code_digest(fn, cfg) != base, f
    monkeypatch.setattr(experiments, "_file_bytes", real)
    assert experiments.code_digest(fn, cfg) == base
