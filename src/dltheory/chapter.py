"""The chapters of the book: one registry row each, and the start and end of a chapter run.

``REGISTRY`` is the one list of chapters. Everything that needs to know them reads it: the
mutation registry (``<package>.mutations``), provenance (which files a chapter's hash
covers), the calibration and domain-check scripts (``<package>.config``), the ledgers.
Adding a chapter is one row here, its subpackage with the role files, its book file and one
``_toc.yml`` line::

    <package>/config.py       Config (sizes and knobs)
    <package>/experiments.py  f(cfg) -> table
    <package>/checks.py       f(ledger, cfg, table) -> None   (the ledger prints)
    <package>/figures.py      f(table, cfg) -> Figure
    <package>/mutations.py    ENTRIES
    <package>/rules.py        KINDS, DECIDES, MAX_RESOLUTION   (optional)

A chapter's setup cell is ``cfg, ledger = chapter.start("sparse_scaling", SCALE, SEED=SEED,
ALPHA1=ALPHA1)`` and its last cell ``chapter.finish(ledger)``. The process settings that
``start`` made (device, threads, dtype, versions) are ``ledger.runtime`` (a
``runtime.Runtime``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Chapter", "REGISTRY", "View", "get", "names", "module", "start", "finish",
           "stopped"]


@dataclass(frozen=True)
class Chapter:
    """One chapter of the book."""

    number: int            # 0 for the prologue
    name: str              # ledger name (``<name>.<scale>.json``, mutation id prefix)
    package: str           # its subpackage, e.g. "dltheory.conservation"
    prefix: str            # claim id prefix, e.g. "CL" for "CL.adam_exponent"
    book: str              # its source, relative to the repository root

    @property
    def subpackage(self) -> str:
        """The subpackage's directory name under ``dltheory`` (``"conservation"``)."""
        return self.package.rpartition(".")[2]

    @property
    def code(self) -> str:
        """Two-digit number, as in the book file name (``"01"``)."""
        return f"{self.number:02d}"


#: every chapter, in book order: the one place that lists them
REGISTRY: tuple[Chapter, ...] = (
    Chapter(0, "gradient_flow", "dltheory.gradient_flow", "GF", "book/00_gradient_flow.py"),
    Chapter(1, "conservation_laws", "dltheory.conservation", "CL",
            "book/01_conservation_laws.py"),
    Chapter(2, "pretrain_finetune", "dltheory.pretrain_finetune", "PF",
            "book/02_pretrain_finetune.py"),
    Chapter(3, "sparse_scaling", "dltheory.sparse_scaling", "SS", "book/03_sparse_scaling.py"),
    Chapter(4, "depth_expansion", "dltheory.depth_expansion", "DE",
            "book/04_depth_expansion.py"),
)


class View(Mapping):
    """A read-only mapping ledger name -> ``value(chapter)`` over ``REGISTRY``, read at every
    lookup (so a row added at runtime is seen), e.g. ``mutations.CHAPTERS``."""

    def __init__(self, value: Callable[[Chapter], Any]):
        self._value = value

    def _rows(self) -> dict:
        return {c.name: self._value(c) for c in REGISTRY}

    def __getitem__(self, key):
        return self._rows()[key]

    def __iter__(self):
        return iter(self._rows())

    def __len__(self) -> int:
        return len(REGISTRY)

    def __repr__(self) -> str:
        return f"View({self._rows()!r})"


def names() -> list[str]:
    """The ledger names of every chapter, in book order."""
    return [c.name for c in REGISTRY]


def get(name: str | int) -> Chapter:
    """The chapter called ``name`` (ledger name, subpackage name, or number / two-digit
    code); ``ValueError`` listing the names otherwise."""
    for c in REGISTRY:
        if name in (c.name, c.subpackage, c.code) or (
                isinstance(name, int) and not isinstance(name, bool) and name == c.number):
            return c
    raise ValueError(f"unknown chapter {name!r}; chapters: {', '.join(names())}")


def module(name: str | int, role: str, *, optional: bool = False):
    """The chapter's ``role`` module (``"config"``, ``"mutations"``, ``"rules"``, ...);
    ``None`` for an ``optional`` one the chapter does not have."""
    modname = f"{get(name).package}.{role}"
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as e:
        if optional and e.name == modname:
            return None
        raise


#: UPPER_CASE names the chapters' install cell defines before ``start``
NOTEBOOK_CONSTANTS = ("SPEC", "REPO", "TAG")


def start(name: str, scale: str | None = None, *, device: str | None = None,
          dtype: str = "float64", echo: bool = True, namespace: dict | None = None,
          **knobs: Any):
    """Start a chapter run; returns ``(cfg, ledger)``.

    ``knobs``: the parameters cell's names (``SEED=0, ALPHA1=1.0``; Config field names work
    too). In order: ``Config.for_scale(scale, **knobs)`` (an unknown or ill-typed knob is a
    ``ValueError`` naming it), ``runtime.setup`` (environment check, threads, device, dtype,
    the chapter's budget, the mutation named by ``$DLTHEORY_MUTATION``, one banner line),
    the plot style, and the ``claims.Ledger`` carrying the run identity
    (``provenance.run_identity``) and the chapter's ``rules`` module where it has one;
    ``echo``: the ledger prints each claim as it is recorded. ``ledger.runtime`` is the
    ``runtime.Runtime`` of the run.

    ``namespace``: the notebook's globals (default: the caller's, when it is a script or a
    kernel's ``__main__``). An UPPER_CASE name there that is neither a knob nor ``SEED``,
    ``SCALE``, ``BUDGET`` (a papermill ``-p K_FIXD 3`` typo) is a ``ValueError`` naming it
    and the allowed parameters (``chapter_config.check_parameters``)."""
    import sys

    from . import (
        chapter_config,
        claims,
        invariants,
        mutations,
        plotting,
        provenance,
        runtime,
        validation,
    )

    ch = get(name)
    config_cls = module(ch.name, "config").Config
    if namespace is None:
        caller = sys._getframe(1).f_globals
        namespace = caller if caller.get("__name__") == "__main__" else {}
    # papermill injects plain values; an imported constant (a Task, a module) is no parameter
    plain = {k: v for k, v in namespace.items()
             if isinstance(v, (bool, int, float, str, type(None)))}
    chapter_config.check_parameters(plain, config_cls, ignore=NOTEBOOK_CONSTANTS,
                                    injected=validation.injected_parameters(namespace))
    cfg = config_cls.for_scale(scale, **knobs)
    rt = runtime.setup(cfg.scale, config=cfg, device=device, dtype=dtype)
    connect_dask()
    mutations.activate_from_env()     # idempotent: plants $DLTHEORY_MUTATION once, if set
    plotting.use_style()
    ledger = claims.Ledger(ch.name, scale=cfg.scale, device=rt.device,
                           identity=provenance.run_identity(cfg, ch.name), echo=echo,
                           rules=module(ch.name, "rules", optional=True))
    ledger.runtime = rt
    _RUN[0] = ledger
    invariants.report_to(_invariant_sink(ledger, ch.prefix))
    _end_with_ledger_when_spent()
    return cfg, ledger


def _invariant_sink(ledger: Any, prefix: str) -> Callable[[str, str, str, str], bool]:
    """A failed engine invariant of sweep ``name`` as a FAIL identity
    ``<prefix>.engine.<what>.<name>`` on ``ledger`` (once per sweep and invariant)."""
    def sink(name: str, what: str, statement: str, detail: str) -> bool:
        if _RUN[0] is not ledger:         # that run has ended: not its ledger's business
            return False
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
        cid = f"{prefix}.engine.{what}.{safe}"
        if cid not in ledger.claims:
            ledger.guard(cid, statement, False, detail)
        return True
    return sink


DASK_CONNECT_S = 10   # seconds start() waits for the scheduler $DLTHEORY_DASK_SCHEDULER names


def connect_dask(timeout: float | None = None) -> None:
    """With the dask backend and ``$DLTHEORY_DASK_SCHEDULER`` set, connect to it now (in
    the chapter's first cell, within ``timeout`` seconds), so that a closed or wrong
    scheduler stops the run at once with the variable's name, not at the first sweep after
    the chapter's start-up. Without the variable a local cluster starts on first use."""
    from . import experiments, validation

    timeout = DASK_CONNECT_S if timeout is None else timeout
    if experiments.resolve_backend() != "dask":
        return
    addr = validation.env(experiments.ENV_DASK_SCHEDULER)
    if addr is None:
        return
    try:
        from distributed import Client
    except ImportError:
        raise RuntimeError("DLTHEORY_BACKEND=dask needs dask.distributed: "
                           "pip install 'dltheory[dask]'") from None
    try:
        client = Client(addr, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as e:
        raise RuntimeError(
            f"${experiments.ENV_DASK_SCHEDULER}={addr!r}: no Dask scheduler answered there "
            f"within {timeout:g} s ({type(e).__name__}: {str(e)[:200]}); start one "
            f"(`dask scheduler`), correct the address, or unset it (a local cluster) or "
            f"$DLTHEORY_BACKEND (no Dask)") from None
    experiments._DASK_CLIENT = client   # the sweeps use this connection


_RUN: list[Any] = [None]   # the ledger of the chapter run in this process
_STOPPED = [False]         # the run ended early (budget.Spent): later cells do not run

# what every notebook cell becomes under a budget: a Spent ends the run with its ledger
# (and the cell does not fail); once it has, later cells say so and do not run
_CELL = """
if __import__("dltheory.chapter", fromlist=["_"])._skip_cell():
    __dltheory_last__ = None
else:
    try:
        pass
    except __import__("dltheory.budget", fromlist=["_"]).Spent as __dltheory_spent__:
        __import__("dltheory.chapter", fromlist=["_"]).stopped(__dltheory_spent__)
        __dltheory_last__ = None
"""


class _BudgetCells:
    """An IPython AST transformer (``shell.ast_transformers``): wraps a cell as ``_CELL``
    does, keeping its last expression as the cell's displayed value."""

    def visit(self, module):
        import ast

        body = list(module.body)
        if not body or any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                           for n in body):
            return module
        last = body.pop() if isinstance(body[-1], ast.Expr) else None
        if last is not None:
            body.append(ast.Assign(targets=[ast.Name("__dltheory_last__", ast.Store())],
                                   value=last.value, lineno=last.lineno,
                                   col_offset=last.col_offset))
        tree = ast.parse(_CELL)
        tree.body[0].orelse[0].body = body or [ast.Pass()]
        if last is not None:
            tree.body.append(ast.Expr(ast.Name("__dltheory_last__", ast.Load())))
        return ast.fix_missing_locations(tree)


def _skip_cell() -> bool:
    """In a notebook whose run ended early: say so and skip the cell."""
    if _STOPPED[0]:
        print("[budget] not run: this chapter's budget ran out above (see its ledger)")
    return _STOPPED[0]


def _end_with_ledger_when_spent() -> None:
    """Under a budget, make ``budget.Spent`` end the run with its ledger (``stopped``): in
    a script through ``sys.excepthook`` (and the budget's hard stop is armed); in a Jupyter
    kernel every cell is wrapped (``_BudgetCells``: the cell does not fail, later cells say
    that the run ended and do not run; no alarm between cells)."""
    import sys

    from . import budget, runtime

    _STOPPED[0] = False            # a new run: cells run again (also without a budget)
    if not budget.current().active:
        return
    if runtime.in_notebook():
        from IPython import get_ipython

        shell = get_ipython()
        if not any(isinstance(t, _BudgetCells) for t in shell.ast_transformers):
            shell.ast_transformers.append(_BudgetCells())
        return
    previous = sys.excepthook

    def hook(etype, value, tb):
        if not issubclass(etype, budget.Spent):
            return previous(etype, value, tb)
        import os

        try:
            stopped(value)
            code = 0
        except BaseException as e:   # noqa: BLE001 - a failed hard claim among those reached
            print(f"{type(e).__name__}: {e}", file=sys.stderr)
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)   # the run ended with its ledger: not an error exit

    hook.dltheory = True
    if not getattr(sys.excepthook, "dltheory", False):   # once per process
        sys.excepthook = hook
    budget.arm_hard_stop()        # after the hook: a stop due at once still ends with a ledger


def stopped(spent, ledger=None) -> None:
    """End a run whose budget ran out (``spent``: the ``budget.Spent``): each evidence
    claim of the chapter's rules (``KINDS``) not recorded yet is INCONCLUSIVE, "not
    reached", saying where the budget ran out and how many tasks that sweep had; then
    ``finish`` (the table, the ledger, the budget's last line)."""
    from . import budget, claims

    budget.disarm()
    _STOPPED[0] = True
    ledger = ledger if ledger is not None else _RUN[0]
    if ledger is None:
        raise RuntimeError("no chapter run in this process (chapter.start was not called)")
    secs = budget.current().seconds
    had = (f", which had {spent.tasks[0]} of {spent.tasks[1]} tasks"
           if getattr(spent, "tasks", None) else "")
    why = (f"not reached: the {secs:g} s budget ran out in {spent.where}{had} "
           f"({spent.why})")
    unreached = [cid for cid in ledger.kinds if cid not in ledger.claims]
    evidence = [cid for cid in unreached if ledger.kinds[cid] in claims.EVIDENCE]
    budget.note_stop(spent.where, spent.why, unreached)
    others = len(unreached) - len(evidence)
    print(f"[budget] {why}; {len(evidence)} evidence claim(s) not reached are INCONCLUSIVE"
          + (f", {others} identity/derivation claim(s) not reached are listed in the "
             "ledger's budget record" if others else ""), flush=True)
    ledger.skip(evidence, why)
    finish(ledger)


def finish(ledger) -> None:
    """End a chapter run: ``ledger.report()`` (the claims table, the JSON, and
    ``ClaimFailed`` on a failed hard claim), then the budget's summary as the run's last
    line (also when the report raises), so a budgeted run's first and last lines state the
    budget and what it covered."""
    from . import budget

    budget.disarm()
    try:
        ledger.report()
    finally:
        print(budget.summary(), flush=True)
