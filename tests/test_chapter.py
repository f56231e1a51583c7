"""The chapter registry: a throw-away sixth chapter needs one registry row (plus its own
subpackage and book files, and one ``_toc.yml`` line) and nothing else: ``chapter.start``
builds its Config and ledger, the mutation registry, provenance, the domain check and the
ledger pages find it."""

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dltheory
from dltheory import chapter, mutations, provenance, seeds

ROOT = Path(__file__).resolve().parents[1]

FILES = {
    "__init__.py": "from . import checks, experiments, figures, model\n",
    "model.py": '''
        def value(x):
            """The sixth chapter's theory: twice x."""
            return 2.0 * x
        ''',
    "config.py": '''
        from dataclasses import dataclass

        from dltheory.chapter_config import ChapterConfig, Knob


        @dataclass(frozen=True)
        class Config(ChapterConfig):
            KNOBS = {"X": Knob("x", 0.5, 4.0)}
            PRESETS = {"smoke": {}, "standard": {}, "paper": {}}
            CI_SETTINGS = [{"X": 1.0}, {"X": 3.0}]

            scale: str = "smoke"
            seed: int = 0
            x: float = 2.0


        DOMAIN = Config.domain()
        CI_SETTINGS = Config.CI_SETTINGS
        sample_setting = Config.sample_setting
        ''',
    "experiments.py": '''
        from . import model


        def table(cfg):
            return {"x": cfg.x, "y": model.value(cfg.x)}
        ''',
    "checks.py": '''
        def doubling(ledger, cfg, table):
            ledger.check("SX.doubling", "y = 2 x", table["y"], 2.0 * cfg.x, rtol=1e-12)
        ''',
    "figures.py": '''
        def curve(table, cfg):
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots()
            ax.plot([0, table["x"]], [0, table["y"]])
            return fig
        ''',
    "mutations.py": '''
        from dltheory.mutations import Mutation

        ENTRIES = [Mutation("sixth:triple", "dltheory.sixth.model:value", "y = 3 x",
                            "factor 1.5", "rescaling", lambda f: lambda x: 3.0 * x,
                            ("SX.doubling",))]
        ''',
    "rules.py": 'KINDS = {"SX.doubling": "hard"}\n',
}


@pytest.fixture
def sixth(tmp_path, monkeypatch):
    """``dltheory.sixth`` in a temporary directory on the package's path, and its one row."""
    pkg = tmp_path / "ext" / "sixth"
    pkg.mkdir(parents=True)
    for name, text in FILES.items():
        (pkg / name).write_text(textwrap.dedent(text).lstrip())
    monkeypatch.setattr(dltheory, "__path__", [*dltheory.__path__, str(tmp_path / "ext")])
    row = chapter.Chapter(5, "sixth", "dltheory.sixth", "SX", "book/05_sixth.py")
    monkeypatch.setattr(chapter, "REGISTRY", (*chapter.REGISTRY, row))   # the one row
    monkeypatch.setenv("DLTHEORY_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("DLTHEORY_FIG_DIR", str(tmp_path / "figures"))
    monkeypatch.delenv("DLTHEORY_MUTATION", raising=False)
    yield row
    mutations.deactivate()
    for name in [m for m in sys.modules if m == "dltheory.sixth" or
                 m.startswith("dltheory.sixth.")]:
        del sys.modules[name]


def test_registry_rows_and_lookups():
    assert chapter.names() == ["gradient_flow", "conservation_laws", "pretrain_finetune",
                               "sparse_scaling", "depth_expansion"]
    assert chapter.get("conservation").name == chapter.get("01").name == "conservation_laws"
    assert chapter.get(3).prefix == "SS"
    with pytest.raises(ValueError, match="gradient_flow, conservation_laws"):
        chapter.get("seventh")
    for c in chapter.REGISTRY:
        assert (ROOT / c.book).is_file(), c.book
        assert (ROOT / "src" / "dltheory" / c.subpackage / "config.py").is_file(), c
    assert dict(mutations.CHAPTERS)["gradient_flow"] == "dltheory.gradient_flow.mutations"
    assert dict(provenance.CHAPTER_MODULES)["conservation_laws"] == ("conservation",)


def test_a_sixth_chapter_needs_one_registry_row(sixth, capsys):
    cfg, ledger = chapter.start("sixth", "smoke", SEED=3, X=1.5)
    assert (cfg.x, cfg.seed, cfg.scale) == (1.5, 3, "smoke")
    assert ledger.chapter == "sixth" and ledger.echo and ledger.runtime.scale == "smoke"
    ident = ledger.identity
    assert ident["knobs"] == {"X": 1.5} and ident["seed"] == 3
    assert ident["defaults"] is False and ident["mutation"] is None
    assert ident["code"]["chapter"] is None          # no book/05_sixth.py in this test
    exp = chapter.module("sixth", "experiments")
    chapter.module("sixth", "checks").doubling(ledger, cfg, exp.table(cfg))
    assert chapter.module("sixth", "figures").curve(exp.table(cfg), cfg) is not None
    assert "SX.doubling [hard]: PASS" in capsys.readouterr().out       # the ledger echoes
    chapter.finish(ledger)
    assert (Path(ledger.path())).is_file()
    # the rules module is found (a declared kind is enforced)
    with pytest.raises(ValueError):
        ledger.check("SX.doubling", "y = 2 x", 3.0, 3.0, rtol=0.1, kind="soft")

    # the mutation registry, provenance and the domain check find it through the row
    assert mutations.ids("sixth") == ["sixth:triple"]
    verdicts = mutations.flips("sixth:triple", lambda: _verdicts(cfg, exp))
    assert verdicts == {"SX.doubling": ("PASS", "FAIL")}
    clean = _verdicts(cfg, exp)                    # a shared unmutated run gives the same
    assert mutations.flips("sixth:triple", lambda: _verdicts(cfg, exp), before=clean) == verdicts
    with mutations.apply("sixth:triple"), pytest.raises(RuntimeError, match="already planted"):
        mutations.flips("sixth:triple", lambda: _verdicts(cfg, exp))
    assert "sixth" in provenance.CHAPTER_MODULES
    assert provenance.package_sha256("sixth") != provenance.package_sha256("gradient_flow")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import domain_check

        assert domain_check.config_module("05").Config is type(cfg)
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _verdicts(cfg, exp):
    from dltheory import claims

    led = claims.Ledger("sixth", scale="smoke")
    chapter.module("sixth", "checks").doubling(led, cfg, exp.table(cfg))
    return {cid: c.verdict for cid, c in led.claims.items()}


def test_a_mutated_start_names_the_mutation_and_defaults(sixth, monkeypatch):
    monkeypatch.setenv("DLTHEORY_MUTATION", "sixth:triple")
    cfg, ledger = chapter.start("sixth", "smoke", echo=False)
    assert ledger.identity["mutation"] == "sixth:triple"
    assert ledger.identity["defaults"] is True and not ledger.echo


def test_toc_line_makes_it_an_expected_chapter(tmp_path):
    from dltheory import ledgers

    toc = (ROOT / "_toc.yml").read_text()
    (tmp_path / "_toc.yml").write_text(toc.replace(
        "      - file: book/04_depth_expansion\n",
        "      - file: book/04_depth_expansion\n      - file: book/05_sixth\n"))
    assert ledgers.expected_chapters(tmp_path / "_toc.yml")[-1] == "sixth"


def test_named_streams_are_stable_and_independent():
    a = seeds.numpy(7, "start", 3).standard_normal(4)
    assert np.array_equal(a, seeds.numpy(7, "start", 3).standard_normal(4))
    assert not np.array_equal(a, seeds.numpy(7, "start", 4).standard_normal(4))
    assert not np.array_equal(a, seeds.numpy(8, "start", 3).standard_normal(4))
    # an int name is its spawn key: stream (seed, i) is SeedSequence(seed).spawn(...)[i]
    child = np.random.SeedSequence(7).spawn(3)[2]
    assert np.array_equal(seeds.numpy(7, 2).random(3), np.random.default_rng(child).random(3))
    # a string's key is a fixed hash (SHA-256, not Python's salted hash): same everywhere
    assert seeds.key("start") == 0xC628EDCC
    assert seeds.torch_seed(7, "init") == 1582423997997399310
    t1 = seeds.torch(7, "init").initial_seed()
    assert t1 == seeds.torch(7, "init").initial_seed() == seeds.torch_seed(7, "init")
    assert t1 != seeds.torch(7, "init", 1).initial_seed() and 0 <= t1 < 2**63
    with pytest.raises(ValueError, match="seed"):
        seeds.numpy(-1, "x")
    with pytest.raises(ValueError, match="seed"):
        seeds.numpy(True)


def test_start_stops_on_a_misspelt_papermill_parameter():
    """A papermill ``-p K_FIXD 3`` lands in the notebook as a variable the chapter never
    reads: ``start`` names it before anything runs (the caller's globals by default)."""
    with pytest.raises(ValueError, match="unknown parameter K_FIXD.*allowed: .*K_FIXED"):
        chapter.start("gradient_flow", "smoke", namespace={"K_FIXD": 3, "SEED": 0})
    ns = {"__name__": "__main__", "K_FIXD": 3}
    with pytest.raises(ValueError, match="K_FIXD"):
        exec("from dltheory import chapter\nchapter.start('gradient_flow', 'smoke')", ns)
    assert chapter.start.__kwdefaults__["namespace"] is None


def test_start_ignores_imported_upper_case_objects():
    """An imported constant (``from ... import FULL_OVERLAP``, a Task) is not a parameter."""
    class Task:
        pass
    with pytest.raises(ValueError, match="unknown parameter K_FIXD$|unknown parameter K_FIXD "):
        chapter.start("gradient_flow", "smoke",
                      namespace={"FULL_OVERLAP": Task(), "K_FIXD": 3, "SEED": 0})


def test_a_run_whose_budget_ran_out_ends_with_its_ledger(sixth, monkeypatch, capsys):
    """``chapter.stopped``: the claims not reached are INCONCLUSIVE and say where the
    budget ran out; the ledger is written and the budget's summary is the last line."""
    import json
    import signal

    from dltheory import budget

    monkeypatch.setenv("DLTHEORY_BUDGET", "30")
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)     # start() wraps it in a script
    try:
        cfg, ledger = chapter.start("sixth", "smoke", echo=False)
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0       # the hard stop is armed
        assert sys.excepthook is not sys.__excepthook__
        chapter.stopped(budget.Spent("sixth_sweep", "no time left", (1, 4)))
    finally:
        budget.start(None)
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    data = json.loads(Path(ledger.path()).read_text())
    (claim,) = data["claims"]
    assert claim["id"] == "SX.doubling" and claim["verdict"] == "INCONCLUSIVE"
    assert "not reached" in claim["note"] and "had 1 of 4 tasks" in claim["note"]
    assert data["budget"]["seconds"] == 30.0
    assert data["budget"]["stopped"]["not_reached"] == ["SX.doubling"]
    assert capsys.readouterr().out.rstrip().splitlines()[-1].startswith("budget: 30 s")


def test_a_budgeted_script_ends_with_its_ledger_and_exit_status_0(tmp_path):
    """The prologue as a script with a budget far below its work: the budget's alarm stops
    it, the ledger holds every claim (those not reached INCONCLUSIVE), exit status 0."""
    import json
    import os
    import subprocess

    env = {**os.environ, "DLTHEORY_BUDGET": "0.5", "DLTHEORY_SCALE": "smoke",
           "MPLBACKEND": "Agg", "DLTHEORY_PROGRESS": "0", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, str(ROOT / "book" / "00_gradient_flow.py")],
                         env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "not reached are INCONCLUSIVE" in out.stdout
    assert out.stdout.rstrip().splitlines()[-1].startswith("budget: 0.5 s")
    data = json.loads((tmp_path / "claims" / "gradient_flow.smoke.json").read_text())
    from dltheory.gradient_flow import rules  # identities only: listed, not recorded

    stop = data["budget"]["stopped"]
    assert set(stop["not_reached"]) | {c["id"] for c in data["claims"]} == set(rules.KINDS)
    assert stop["not_reached"] and data["budget"]["seconds"] == 0.5


def test_notebook_cells_under_a_budget_end_the_run_without_failing(sixth, monkeypatch, capsys):
    """What ``chapter.start`` makes of each later cell in a kernel (``_BudgetCells``): a
    cell whose sweep finds the budget spent ends the run with its ledger and does not
    fail; later cells do not run and say why; a cell's last expression is still its value."""
    import ast

    from dltheory import budget

    monkeypatch.setenv("DLTHEORY_BUDGET", "30")
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    cells = ["x = 20\nx + 1",
             "import dltheory.budget as b\nraise b.Spent('sixth_sweep', 'no time left', (0, 3))",
             "x = 99\nx"]
    ns: dict = {}
    values = []
    try:
        _, ledger = chapter.start("sixth", "smoke", echo=False)
        for src in cells:
            code = compile(chapter._BudgetCells().visit(ast.parse(src)), "<cell>", "exec")
            exec(code, ns)
            values.append(ns["__dltheory_last__"])
    finally:
        budget.start(None)
    assert values == [21, None, None] and ns["x"] == 20          # the third cell did not run
    monkeypatch.delenv("DLTHEORY_BUDGET")
    chapter.start("sixth", "smoke", echo=False)         # a new run without a budget: cells run
    exec(compile(chapter._BudgetCells().visit(ast.parse("x = 5\nx")), "<cell>", "exec"), ns)
    assert ns["__dltheory_last__"] == 5 and not chapter._STOPPED[0]
    out = capsys.readouterr().out
    assert "1 evidence claim(s) not reached are INCONCLUSIVE" in out
    assert "[budget] not run: this chapter's budget ran out above" in out
    assert ledger.claims["SX.doubling"].verdict == "INCONCLUSIVE"
    assert Path(ledger.path()).is_file()
