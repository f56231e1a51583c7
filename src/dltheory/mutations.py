"""Planted errors in the theory: a registry of plausible slips, applied by monkeypatching.

A check that no plausible error in the theory can flip is an identity, not evidence. Each
chapter therefore declares a list of :class:`Mutation` entries: one theory function (or
class attribute) of the package, a plausible wrong version of it (an exponent off by
10-20%, a gradient twice its loss's, an off-by-one, a dropped term, a swapped regime
boundary, a wrong constant in a bound) and its size. The chapters' mutation tests and
``scripts/calibrate.py`` (which re-runs whole chapters with one entry active) both use it::

    from dltheory import mutations

    m = mutations.get("sparse_scaling:heaps_prefactor_high")
    with mutations.apply(m):          # patched here, restored on exit
        ...                           # run the experiment / the checks
    mutations.registry("sparse_scaling")   # the chapter's entries, in order

**Targets** are ``"module:qualname"`` strings, e.g. ``"dltheory.sparse_scaling.theory:loss_de"``
or ``"dltheory.sparse_scaling.config:Config.alpha_N"``. The entry's ``factory`` receives
the original object (for a class attribute: the raw ``__dict__`` entry, e.g. a
``property``) and returns the replacement. A module-level target is replaced in its module
*and* under every name that re-binds the same object in a loaded ``dltheory`` module
(``from .bias import ft_scales`` makes ``regimes.ft_scales`` one), so a caller that imported
the function by name sees the mutant too; undoing restores all of them, including aliases
created by modules first imported while the mutation was active. A class attribute is
patched on the class, which every alias shares. Not reachable: a reference captured in a
default argument or a closure before the patch (no entry targets one).

**In a chapter run** ``activate_from_env()`` (called at the chapter's start) applies the
entry named by ``$DLTHEORY_MUTATION`` for the rest of the process and prints one line
``[mutation] <id>: <description>``; an unknown id raises ``ValueError`` listing the valid ones.

**Everywhere a task runs.** ``active()`` lists the entries planted in this process (by
``activate_from_env`` or inside an ``apply`` block). ``experiments.sweep`` puts these ids in
every task's cache key (a mutated run never shares cached results with a clean one) and
sends them with every task to loky / Dask workers, which call ``sync(ids)`` before running
it: the worker then has exactly those entries planted (idempotent; a worker reused from an
earlier sweep drops the entries that sweep had and this one does not).

**Entries** live next to the code they break: ``<package>/mutations.py`` of each chapter
in ``dltheory.chapter.REGISTRY``, each defining ``ENTRIES``. They are imported on demand,
so importing this module imports no chapter. ``catches`` names the claims expected to FAIL
under the entry (the chapter's mutation tests assert it); an empty ``catches`` marks an
entry no current claim is known to catch (the calibration shows it).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from . import chapter as _chapter

__all__ = ["Mutation", "REGISTRY", "CHAPTERS", "ENV", "registry", "get", "ids", "resolve",
           "apply", "flips", "activate_from_env", "deactivate", "active", "sync"]

ENV = "DLTHEORY_MUTATION"

#: chapter (ledger name) -> module holding its ``ENTRIES`` (``chapter.REGISTRY``)
CHAPTERS = _chapter.View(lambda c: f"{c.package}.mutations")

#: the kinds of slip an entry plants (``Mutation.kind``)
KINDS = ("rescaling", "exponent", "off-by-one", "dropped term", "sign", "constant",
         "regime boundary", "bound constant")


@dataclass(frozen=True)
class Mutation:
    """One planted error. ``id`` is ``"<chapter>:<name>"``; ``target`` ``"module:qualname"``;
    ``size`` says how large the error is (``"+10% exponent"``, ``"factor 2"``);
    ``factory(original) -> replacement``; ``catches``: claim ids expected to FAIL (empty:
    no current claim is known to catch it)."""

    id: str
    target: str
    description: str
    size: str
    kind: str
    factory: Callable[[Any], Any]
    catches: tuple[str, ...] = ()

    def __post_init__(self):
        chapter, sep, name = self.id.partition(":")
        if not sep or chapter not in CHAPTERS or not name:
            raise ValueError(f"mutation id must be '<chapter>:<name>' with chapter one of "
                             f"{sorted(CHAPTERS)}, got {self.id!r}")
        if ":" not in self.target:
            raise ValueError(f"target must be 'module:qualname', got {self.target!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    @property
    def chapter(self) -> str:
        return self.id.partition(":")[0]


# --------------------------------------------------------------------------- registry
def registry(chapter: str) -> tuple[Mutation, ...]:
    """The entries of ``chapter`` (imports its entry module on first use)."""
    if chapter not in CHAPTERS:
        raise ValueError(f"chapter must be one of {sorted(CHAPTERS)}, got {chapter!r}")
    entries = tuple(importlib.import_module(CHAPTERS[chapter]).ENTRIES)
    wrong = [m.id for m in entries if m.chapter != chapter]
    seen: set[str] = set()
    dup = [m.id for m in entries if m.id in seen or seen.add(m.id)]
    if wrong or dup:
        raise ValueError(f"{CHAPTERS[chapter]}.ENTRIES: ids of another chapter {wrong}, "
                         f"duplicate ids {dup}")
    return entries


class _LazyRegistry(Mapping):
    """``REGISTRY[chapter]``: the chapter's entries, imported when first asked for."""

    def __getitem__(self, chapter: str) -> tuple[Mutation, ...]:
        if chapter not in CHAPTERS:
            raise KeyError(chapter)
        return registry(chapter)

    def __iter__(self) -> Iterator[str]:
        return iter(CHAPTERS)

    def __len__(self) -> int:
        return len(CHAPTERS)


REGISTRY: Mapping[str, tuple[Mutation, ...]] = _LazyRegistry()


def ids(chapter: str | None = None) -> list[str]:
    """Every entry id (of one chapter, or of all: that imports every entry module)."""
    chapters = [chapter] if chapter is not None else list(CHAPTERS)
    return [m.id for c in chapters for m in registry(c)]


def get(mutation_id: str) -> Mutation:
    """The entry ``mutation_id``; ``ValueError`` listing the valid ids when unknown."""
    chapter = str(mutation_id).partition(":")[0]
    if chapter in CHAPTERS:
        for m in registry(chapter):
            if m.id == mutation_id:
                return m
    raise ValueError(f"unknown mutation {mutation_id!r}; valid ids: {', '.join(ids())}")


# --------------------------------------------------------------------------- patching
def resolve(target: str) -> tuple[Any, str, Any]:
    """``"module:qualname"`` -> (owner, attribute, original). For a class attribute the
    original is the raw ``__dict__`` entry (a ``property``, a function, ...)."""
    modname, _, qual = target.partition(":")
    owner: Any = importlib.import_module(modname)
    *path, attr = qual.split(".")
    for part in path:
        owner = getattr(owner, part)
    if isinstance(owner, type):
        for klass in owner.__mro__:
            if attr in vars(klass):
                return owner, attr, vars(klass)[attr]
        raise AttributeError(f"{target}: class {owner.__name__} has no attribute {attr!r}")
    if not hasattr(owner, attr):
        raise AttributeError(f"{target}: {owner!r} has no attribute {attr!r}")
    return owner, attr, getattr(owner, attr)


def _package_modules() -> list[Any]:
    return [m for name, m in list(sys.modules.items())
            if m is not None and (name == "dltheory" or name.startswith("dltheory."))]


def _rebind(old: Any, new: Any) -> list[tuple[Any, str]]:
    """Set every module-level name bound to ``old`` in a loaded dltheory module to ``new``."""
    hits = []
    for mod in _package_modules():
        for name, value in list(vars(mod).items()):
            if value is old:
                setattr(mod, name, new)
                hits.append((mod, name))
    return hits


@contextlib.contextmanager
def apply(mutation: Mutation | str):
    """Plant ``mutation`` (an entry or its id) inside the ``with`` block; always undone."""
    m = get(mutation) if isinstance(mutation, str) else mutation
    owner, attr, original = resolve(m.target)
    replacement = m.factory(original)
    if isinstance(owner, type):
        had = attr in vars(owner)
        setattr(owner, attr, replacement)
        _APPLIED.append(m.id)
        try:
            yield m
        finally:
            _forget(m.id)
            if had:
                setattr(owner, attr, original)
            else:
                delattr(owner, attr)
        return
    setattr(owner, attr, replacement)
    _rebind(original, replacement)
    _APPLIED.append(m.id)
    try:
        yield m
    finally:
        _forget(m.id)
        setattr(owner, attr, original)
        _rebind(replacement, original)   # also aliases made while it was active


_ACTIVE: dict[str, contextlib.ExitStack] = {}
_APPLIED: list[str] = []     # ids planted right now, by any ``apply`` block (in order)


def _forget(mid: str) -> None:
    for i in range(len(_APPLIED) - 1, -1, -1):
        if _APPLIED[i] == mid:
            del _APPLIED[i]
            return


def activate_from_env(environ: Mapping[str, str] | None = None) -> Mutation | None:
    """Apply the entry named by ``$DLTHEORY_MUTATION`` for the rest of the process (once:
    a second call with the same id does nothing) and print ``[mutation] <id>: <description>``.
    Returns the entry, or ``None`` when the variable is unset or empty."""
    env = os.environ if environ is None else environ
    mid = (env.get(ENV) or "").strip()
    if not mid:
        return None
    m = get(mid)
    if mid not in _ACTIVE:
        _plant(m)
        print(f"[mutation] {m.id}: {m.description}", flush=True)
    return m


def _plant(m: Mutation) -> None:
    stack = contextlib.ExitStack()
    stack.enter_context(apply(m))
    _ACTIVE[m.id] = stack


def active() -> list[str]:
    """Ids of the entries planted in this process now (by ``activate_from_env``, ``sync`` or
    an ``apply`` block), each once, in the order they were planted."""
    return list(dict.fromkeys(_APPLIED))


def sync(mutation_ids: tuple[str, ...] | list[str]) -> None:
    """Make the planted entries of this process exactly ``mutation_ids`` (what a worker calls
    before each task): plant the missing ones for the rest of the process, undo those planted
    by ``activate_from_env``/``sync`` that are not listed. Idempotent. Entries inside a
    running ``apply`` block are left alone."""
    wanted = list(dict.fromkeys(mutation_ids))
    for mid in [k for k in _ACTIVE if k not in wanted]:
        _ACTIVE.pop(mid).close()
    for mid in wanted:
        if mid not in _APPLIED:
            _plant(get(mid))


def deactivate() -> None:
    """Undo every entry applied by ``activate_from_env`` (latest first)."""
    while _ACTIVE:
        _ACTIVE.popitem()[1].close()


def flips(mutation: Mutation | str, run: Callable[[], Mapping[str, str]],
          claim_ids: tuple[str, ...] | None = None, *,
          before: Mapping[str, str] | None = None) -> dict[str, tuple[str, str]]:
    """``{claim: (verdict unmutated, verdict with the mutation)}`` for ``claim_ids``
    (default: the entry's ``catches``); ``run()`` returns ``{claim id: verdict}``, e.g. by
    running a chapter's check functions on a fresh ledger. The mutation tests assert
    ``flips(m, run) == {c: ("PASS", "FAIL") for c in m.catches}``.

    ``before``: the unmutated verdicts of this same ``run`` when the caller already has them
    (one unmutated run shared by the entries that use it); else ``run()`` is called first."""
    m = get(mutation) if isinstance(mutation, str) else mutation
    ids_ = m.catches if claim_ids is None else claim_ids
    if active():
        raise RuntimeError(f"flips: {active()} already planted; the unmutated run would not be")
    before = run() if before is None else before
    with apply(m):
        after = run()
    return {c: (before.get(c, "missing"), after.get(c, "missing")) for c in ids_}
