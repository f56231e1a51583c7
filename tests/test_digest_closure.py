"""The cache key and the staleness digest, tested against what they must cover (issue 47).

* Cache key: changing any field of a task (its seed and stream index included) or of a
  Config changes the sweep's cache key; equal inputs give equal keys (hypothesis).
* Code digest: changing any byte of any file in a task's import closure changes the digest;
  the closure follows relative imports of every level (``from . import``, ``from .. import
  x``, ``from ..kit import y``, ``from ... import``) on a toy package, and the engine's
  closure of every module of the real package equals one computed independently by the
  standard library's ``modulefinder`` (its bytecode scan and its own relative-name
  resolution).
* Staleness digest: every module that a chapter's verdicts import (its checks, rules,
  config, experiments, and the kit's claims and chapter code, transitively) is a judging
  file of that chapter.

Each of the three misses of issue 47 is replayed (a seed left out of the key; ``from ..
import x`` resolved one level too shallow; ``rules.py`` counted as non-judging) and shown to
fail the property that guards it. Mutants are built in memory (a monkeypatched function or
constant, a mutant compiled from an edited copy of the source); the tree is never edited.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import modulefinder
import sys
import types
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from dltheory import chapter, experiments, provenance

PKG = Path(experiments.__file__).resolve().parent
SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


# --------------------------------------------------------------------------- cache key
@dataclasses.dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    seed: int = 0
    stream: int = 0
    lr: float = 0.1
    sizes: tuple = (8, 16)
    name: str = "a"
    flag: bool = False
    budget: float | None = None


def toy_task(cfg, task):
    return {"y": 0.0}


FIELDS = [f.name for f in dataclasses.fields(Cfg)]
#: the fields a key leaves out, as documented (a budget decides how many tasks run, not
#: what they return); the property reads this, not the engine's own constant
BUDGET_ONLY = ("budget", "budget_weights")
scalars = st.one_of(
    st.integers(-10**6, 10**6),
    st.floats(allow_nan=False, allow_infinity=True, width=64),
    st.text(max_size=4),
    st.booleans(),
    st.tuples(st.integers(0, 9), st.integers(0, 9)),
)


def _distinct(a, b) -> bool:
    """Two values the key must tell apart: another type, or another value (floats: apart
    in their 9th significant digit, the documented resolution of a key)."""
    if type(a) is not type(b):
        return True
    if isinstance(a, float):
        return not math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0)
    return a != b


def _path(task: dict, cfg=Cfg(), tmp=Path("/nonexistent-cache")) -> Path:
    store = experiments._open_store(toy_task, cfg, "key", None, tmp)
    return store.path(store.key(task))


task_dicts = st.fixed_dictionaries(
    {"seed": st.integers(0, 10**6), "stream": st.integers(0, 64)},
    optional={"tau": st.floats(1e-6, 1e3), "width": st.integers(1, 4096), "opt": st.text(max_size=3)})


def _task_key_check(task, data):
    field = data.draw(st.sampled_from(sorted(task)))
    new = data.draw(scalars)
    other = {**task, field: new}
    assert _path(dict(task)) == _path(dict(task))                   # equal in, equal key
    assert _path(task) == _path(dict(reversed(list(task.items()))))  # order of keys: same task
    if _distinct(task[field], new):
        assert _path(task) != _path(other), (field, task[field], new)


def _cfg_draw(data) -> Cfg:
    return Cfg(scale=data.draw(st.sampled_from(["smoke", "standard"])),
               seed=data.draw(st.integers(0, 10**6)), stream=data.draw(st.integers(0, 64)),
               lr=data.draw(st.floats(1e-8, 10.0)),
               sizes=data.draw(st.tuples(st.integers(1, 99), st.integers(1, 99))),
               name=data.draw(st.text(max_size=3)), flag=data.draw(st.booleans()))


def _config_key_check(data):
    cfg = _cfg_draw(data)
    field = data.draw(st.sampled_from(FIELDS))
    old = getattr(cfg, field)
    new = data.draw({"sizes": st.tuples(st.integers(1, 99), st.integers(1, 99)),
                     "lr": st.floats(1e-8, 10.0), "flag": st.booleans(),
                     "budget": st.one_of(st.none(), st.floats(1, 1e4))}.get(field, scalars))
    other = dataclasses.replace(cfg, **{field: new})
    task = {"seed": 1}
    assert _path(task, cfg) == _path(task, dataclasses.replace(cfg))
    if field in BUDGET_ONLY:
        assert _path(task, cfg) == _path(task, other)               # a budget reuses tasks
    elif _distinct(old, new):
        assert _path(task, cfg) != _path(task, other), (field, old, new)


#: a replayed miss needs one counterexample, not the smallest one
REPLAY = settings(SETTINGS, phases=[Phase.explicit, Phase.generate])


def _prop(check, how: settings, **strategies):
    """``check`` as a hypothesis test under ``how`` (a new wrapper each call)."""
    @functools.wraps(check)
    def run(*a, **k):
        return check(*a, **k)

    return given(**strategies)(how(run))


def _task_key_property(how: settings = SETTINGS):
    _prop(_task_key_check, how, task=task_dicts, data=st.data())()


def _config_key_property(how: settings = SETTINGS):
    _prop(_config_key_check, how, data=st.data())()


def test_any_task_field_changes_the_key_and_equal_tasks_share_it():
    _task_key_property()


def test_any_config_field_changes_the_key_and_equal_configs_share_it():
    _config_key_property()


def test_replay_a_seed_left_out_of_the_key_is_caught(monkeypatch):
    """The miss of issue 47 (a seed-5 run reused seed 0's table), planted twice: the task's
    ``seed`` dropped from its canonical text, and the Config's ``seed`` counted with the
    budget fields. Each fails its property."""
    real = experiments._canon
    monkeypatch.setattr(experiments, "_canon", lambda x: real(
        {k: v for k, v in x.items() if k != "seed"} if isinstance(x, dict) else x))
    with pytest.raises(AssertionError):
        _task_key_property(REPLAY)
    monkeypatch.setattr(experiments, "_canon", real)
    monkeypatch.setattr(experiments, "BUDGET_FIELDS", (*experiments.BUDGET_FIELDS, "seed"))
    with pytest.raises(AssertionError):
        _config_key_property(REPLAY)


# --------------------------------------------------------------------------- closures
class _EdgeFinder(modulefinder.ModuleFinder):
    """``modulefinder`` (bytecode scan, its own relative-import resolution) recording, for
    each module it scans, the modules that module's own import statements name: the target
    module, each name of a ``from`` list that is a submodule, and the package itself when a
    name is an attribute of it (the engine's documented reach; a parent package's
    ``__init__`` is not counted as run by a child's import)."""

    def __init__(self, root: Path):
        super().__init__(path=[str(root)])
        self.edges: dict[str, set[str]] = {}
        self._scanning: list[str] = []

    def scan_code(self, co, m):
        self._scanning.append(m.__name__)
        try:
            super().scan_code(co, m)
        finally:
            self._scanning.pop()

    def _safe_import_hook(self, name, caller, fromlist, level=-1):
        super()._safe_import_hook(name, caller, fromlist, level)
        if level and level > 0 and caller is not None:
            try:
                parent = self.determine_parent(caller, level=level)
            except (ImportError, KeyError):
                return
            base = f"{parent.__name__}.{name}" if name else parent.__name__
        else:
            base = name
        subs = [f"{base}.{x}" for x in (fromlist or []) if x != "*"]
        found = [s for s in subs if s in self.modules]
        out = self.edges.setdefault(self._scanning[-1], set())
        out.update(found)
        if len(found) < len(subs) or not subs:
            out.add(base)


def _module_names(pkg: Path) -> list[str]:
    names = []
    for p in sorted(pkg.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        rel = p.relative_to(pkg.parent).with_suffix("").parts
        names.append(".".join(rel[:-1] if rel[-1] == "__init__" else rel))
    return names


_FINDERS: dict[Path, _EdgeFinder] = {}


def _finder(pkg: Path) -> _EdgeFinder:
    """The edges of every module of ``pkg`` (the real package's computed once: the scan
    does not depend on the engine)."""
    if pkg == PKG and PKG in _FINDERS:
        return _FINDERS[PKG]
    f = _EdgeFinder(pkg.parent)
    for n in _module_names(pkg):
        f.import_hook(n)
    if pkg == PKG:
        _FINDERS[PKG] = f
    return f


def _independent_closure(f: _EdgeFinder, start: str, digest_rules: bool = True) -> set[str]:
    """Files reached from ``start`` through ``f``'s edges, inside the package; with
    ``digest_rules`` the engine's documented exclusions are neither counted nor followed,
    without it only the drawing modules (``DRAWING``) are not."""
    top = start.split(".")[0]
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for d in f.edges.get(m, ()):
            mod = f.modules.get(d)
            if mod is None or not d.startswith(top + ".") and d != top or not mod.__file__:
                continue
            if digest_rules and (Path(mod.__file__).name in experiments.DIGEST_EXCLUDED
                                 or d in experiments.DIGEST_EXCLUDED_MODULES):
                continue
            if not digest_rules and Path(mod.__file__).name in DRAWING:
                continue
            todo.append(d)
    return {str(Path(f.modules[m].__file__).resolve()) for m in seen}


def _closure_mismatches(pkg: Path = PKG, only: tuple[str, ...] = ()) -> list[str]:
    """Modules (every one, or ``only`` these) whose engine closure
    (``experiments._module_closure``) differs from the independent one; empty when they all
    agree."""
    f = _finder(pkg)
    bad = []
    experiments._module_closure.cache_clear()
    for n in only or _module_names(pkg):
        path = str(Path(f.modules[n].__file__).resolve())
        engine = set(experiments._module_closure(path))
        ind = _independent_closure(f, n)
        if engine != ind:
            rel = lambda s: sorted(Path(x).relative_to(pkg).as_posix() for x in s)  # noqa: E731
            bad.append(f"{n}: engine only {rel(engine - ind)}, modulefinder only {rel(ind - engine)}")
    experiments._module_closure.cache_clear()
    return bad


def test_the_engine_closure_of_every_module_equals_modulefinders():
    bad = _closure_mismatches()
    assert not bad, "\n".join(bad)


def _shallow_imports():
    """The engine's ``_imports`` with ``from .. import x`` resolved one level too shallow
    (compiled from an edited copy of its source; the file is untouched)."""
    import inspect
    import textwrap

    src = textwrap.dedent(inspect.getsource(experiments._imports))
    old = "up[:len(up) - (node.level - 1)]"
    assert src.count(old) == 1, "the replayed line moved: update the replay"
    ns = dict(vars(experiments))
    exec(compile(src.replace(old, "up[:len(up) - (node.level - 2)]"), "<mutant>", "exec"), ns)
    return ns["_imports"]


def test_replay_a_relative_import_one_level_too_shallow_is_caught(monkeypatch):
    assert _closure_mismatches(only=("dltheory.gradient_flow.experiments",)) == []
    monkeypatch.setattr(experiments, "_imports", _shallow_imports())
    bad = _closure_mismatches(only=("dltheory.gradient_flow.experiments",))
    assert len(bad) == 1 and "seeds.py" in bad[0] and "runtime.py" in bad[0], bad


# --------------------------------------------------------------------------- toy package
TOY = {
    "__init__.py": "",
    "experiments.py": "ENGINE = 1\n",                    # the engine: never in a digest
    "seeds.py": "def stream(i):\n    return i\n",
    "x.py": "from .seeds import stream\nX = stream(1)\n",
    "unused.py": "U = 0\n",
    "kit/__init__.py": "from .y import Y\nK = 5\n",
    "kit/y.py": "Y = 2\n",
    "kit/z.py": "Z = 3\n",
    "chap/__init__.py": "from . import unused_here\n",  # a parent package: not run by the scan
    "chap/unused_here.py": "W = 0\n",
    "chap/figures.py": "from ..kit import z\n",           # a figure module: never in a digest
    "chap/helper.py": "H = 4\n",
    "chap/task.py": ("from . import helper\n"
                     "from .. import x\n"
                     "from ..kit import y\n"
                     "from ..kit import K\n"
                     "from .. import experiments\n"
                     "from .figures import z as _z\n"
                     "from .sub import deep\n"
                     "def task(cfg, t):\n    return helper.H + x.X + y.Y + K + deep.D\n"),
    "chap/sub/__init__.py": "",
    "chap/sub/deep.py": ("from ... import seeds\n"
                         "from ..helper import H\n"
                         "import dltheory.kit.z\n"
                         "D = seeds.stream(H) + dltheory.kit.z.Z\n"),
}
TOY_CLOSURE = {"chap/task.py", "chap/helper.py", "x.py", "seeds.py", "kit/__init__.py",
               "kit/y.py", "kit/z.py", "chap/sub/deep.py"}


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    """A toy ``dltheory`` tree under ``tmp_path`` that the engine's scan reads (its
    ``__file__`` pointed there), a module object for its task and the task function."""
    pkg = tmp_path / "dltheory"
    for rel, text in TOY.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    monkeypatch.setattr(experiments, "__file__", str(pkg / "experiments.py"))
    mod = types.ModuleType("dltheory.chap.task")
    mod.__file__ = str(pkg / "chap" / "task.py")
    monkeypatch.setitem(sys.modules, "dltheory.chap.task", mod)
    fn = types.FunctionType(toy_task.__code__, {}, "task")
    fn.__module__ = "dltheory.chap.task"

    def digest() -> str:
        experiments._module_closure.cache_clear()
        experiments._file_bytes.cache_clear()
        return experiments.code_digest(fn)

    yield pkg, fn, digest
    experiments._module_closure.cache_clear()
    experiments._file_bytes.cache_clear()


def test_toy_closure_follows_every_relative_level(toy):
    pkg, fn, digest = toy
    files = {f.resolve().relative_to(pkg).as_posix() for f in experiments.code_files(fn)}
    assert files == TOY_CLOSURE
    f = _finder(pkg)
    assert _independent_closure(f, "dltheory.chap.task") == {
        str((pkg / r).resolve()) for r in TOY_CLOSURE}


def _unchanged_by_a_byte(pkg: Path, digest) -> list[str]:
    """Files of the toy closure whose last byte, changed, leaves the digest as it was."""
    base, missed = digest(), []
    for rel in sorted(TOY_CLOSURE):
        p = pkg / rel
        data = p.read_bytes()
        p.write_bytes(data[:-1] + bytes([(data[-1] + 1) % 256]))
        try:
            if digest() == base:
                missed.append(rel)
        finally:
            p.write_bytes(data)
    assert digest() == base
    return missed


def test_any_byte_of_any_file_in_the_closure_changes_the_digest(toy):
    pkg, fn, digest = toy
    base = digest()
    rels = sorted(TOY_CLOSURE)

    @given(i=st.integers(0, len(rels) - 1), pos=st.integers(0, 10**6), delta=st.integers(1, 255))
    @SETTINGS
    def prop(i, pos, delta):
        p = pkg / rels[i]
        data = p.read_bytes()
        assume(data)
        k = pos % len(data)
        p.write_bytes(data[:k] + bytes([(data[k] + delta) % 256]) + data[k + 1:])
        try:
            assert digest() != base, (rels[i], k)
        finally:
            p.write_bytes(data)
        assert digest() == base

    prop()
    # outside the closure (figures, the engine, an unimported module, a parent's __init__)
    for rel in ("chap/figures.py", "experiments.py", "unused.py", "chap/__init__.py"):
        p = pkg / rel
        data = p.read_bytes()
        p.write_bytes(data + b"\n# edited\n")
        try:
            assert digest() == base, rel
        finally:
            p.write_bytes(data)


def test_replay_shallow_relative_import_drops_the_kit_from_the_digest(toy, monkeypatch):
    pkg, fn, digest = toy
    assert _unchanged_by_a_byte(pkg, digest) == []
    monkeypatch.setattr(experiments, "_imports", _shallow_imports())
    missed = _unchanged_by_a_byte(pkg, digest)
    assert "x.py" in missed and "kit/y.py" in missed, missed


# --------------------------------------------------------------------------- staleness
#: modules that only draw (a figure, the plot style ``chapter.start`` sets): never judging
DRAWING = ("figures.py", "plotting.py")


def _chapters():
    rows = chapter.REGISTRY.values() if isinstance(chapter.REGISTRY, dict) else chapter.REGISTRY
    return list(rows)


def _unjudged(pkg: Path = PKG) -> list[str]:
    """Per chapter, the modules its verdicts import (from its checks, rules, config and
    experiments and the kit's claims and chapter modules, transitively, only the drawing
    modules left out) that its staleness digest does not judge by."""
    f = _finder(pkg)
    bad = []
    for ch in _chapters():
        starts = [f"{ch.package}.{m}" for m in ("checks", "rules", "config", "experiments")
                  if f"{ch.package}.{m}" in f.modules] + ["dltheory.claims", "dltheory.chapter"]
        verdict = set().union(*(_independent_closure(f, s, digest_rules=False) for s in starts))
        judged = {str(p.resolve()) for p in provenance._judging_files(pkg, ch.name)}
        bad += [f"{ch.name}: {Path(p).relative_to(pkg).as_posix()}" for p in sorted(verdict - judged)]
    return bad


def test_every_module_a_chapters_verdicts_import_is_judging():
    bad = _unjudged()
    assert not bad, "\n".join(bad)


def test_replay_rules_counted_as_non_judging_is_caught(monkeypatch):
    monkeypatch.setattr(provenance, "NOT_JUDGING", (*provenance.NOT_JUDGING, "rules.py"))
    bad = _unjudged()
    assert {f"{c.name}: {c.subpackage}/rules.py" for c in _chapters()} <= set(bad), bad
