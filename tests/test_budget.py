"""Chapter budgets and sweeps in rounds: round order, only completed rounds, fewer rounds
under a small budget, resume adds rounds, the budget is not part of the cache key, the
ledger's record and the validation of ``DLTHEORY_BUDGET``."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
import pytest

from dltheory import budget, experiments

CALLS: list[tuple] = []


@dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    nap: float = 0.0
    budget: float | None = None
    budget_weights: tuple = ()


def nap(cfg: Cfg, task: dict) -> dict:
    """Sleeps ``cfg.nap`` seconds (a task of known cost); records the call order."""
    CALLS.append((task["width"], task["seed"]))
    time.sleep(cfg.nap)
    return {"y": task["width"] * 10 + task["seed"]}


def grid(widths=(4, 2, 8), seeds=(2, 0, 1)) -> list[dict]:
    return [{"width": w, "seed": s} for w in widths for s in seeds]


@pytest.fixture(autouse=True)
def _fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("DLTHEORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DLTHEORY_BACKEND", raising=False)
    monkeypatch.delenv(budget.ENV_BUDGET, raising=False)
    experiments.reset_stats()
    CALLS.clear()
    budget.start(None)
    yield
    budget.start(None)


def test_rounds_run_in_order_and_the_table_keeps_task_order():
    df = experiments.sweep(nap, grid(), config=Cfg(), name="b_order", rounds="seed")
    assert CALLS == [(w, s) for s in (0, 1, 2) for w in (4, 2, 8)]
    assert list(zip(df["width"], df["seed"], strict=True)) == [(t["width"], t["seed"]) for t in grid()]
    assert df.attrs["rounds"] == (3, 3)
    by_callable = experiments.sweep(nap, grid(), config=Cfg(), name="b_order",
                                    rounds=lambda t: -t["seed"])        # reversed rounds
    pd.testing.assert_frame_equal(by_callable, df)
    with pytest.raises(ValueError, match="rounds='step' is not a key"):
        experiments.sweep(nap, grid(), config=Cfg(), name="b_order", rounds="step")


def test_no_budget_runs_every_round_like_a_plain_sweep():
    plain = experiments.sweep(nap, grid(), config=Cfg(), cache=False)
    df = experiments.sweep(nap, grid(), config=Cfg(), cache=False, rounds="seed")
    pd.testing.assert_frame_equal(df, plain)
    assert df.attrs["rounds"] == (3, 3)
    on_loky = experiments.sweep(nap, grid(), config=Cfg(), cache=False, rounds="seed",
                                backend="loky", n_jobs=2)
    pd.testing.assert_frame_equal(on_loky, plain)
    assert budget.record()["rounds"] == {"nap": [6, 6]} and budget.record()["complete"]


def test_a_tiny_budget_runs_only_the_first_round():
    full = experiments.sweep(nap, grid(), config=Cfg(), cache=False)
    budget.start(1e-3)
    df = experiments.sweep(nap, grid(), config=Cfg(nap=0.01), name="b_tiny", rounds="seed")
    assert df.attrs["rounds"] == (1, 3)
    expected = full[full["seed"] == 0].reset_index(drop=True)    # only whole rounds
    pd.testing.assert_frame_equal(df, expected)
    rec = budget.record()
    assert rec["rounds"] == {"b_tiny": [1, 3]} and rec["complete"] is False


def test_a_small_budget_gives_whole_rounds_equal_to_the_full_table():
    tasks = grid(widths=(1, 3), seeds=range(6))
    full = experiments.sweep(nap, tasks, config=Cfg(), cache=False)
    budget.start(0.25)
    df = experiments.sweep(nap, tasks, config=Cfg(nap=0.03), name="b_small", rounds="seed")
    done, planned = df.attrs["rounds"]
    assert 1 <= done < planned == 6
    sub = full[full["seed"] < done].reset_index(drop=True)
    pd.testing.assert_frame_equal(df, sub)
    assert budget.record()["spent"] < 0.25 + 0.2              # at most about one round over


def test_a_rerun_loads_cached_rounds_and_adds_rounds():
    tasks = grid(widths=(1,), seeds=range(4))
    cfg = Cfg(nap=0.3)
    counts = []
    for _ in range(2):                      # each run: cached rounds free, one new round
        budget.start(0.15)
        experiments.reset_stats()
        df = experiments.sweep(nap, tasks, config=cfg, name="b_resume", rounds="seed")
        counts.append((df.attrs["rounds"], experiments.stats()))
    assert counts == [((1, 4), {"computed": 1, "cached": 0}),
                      ((2, 4), {"computed": 1, "cached": 1})]
    budget.start(None)
    experiments.reset_stats()
    df = experiments.sweep(nap, tasks, config=cfg, name="b_resume", rounds="seed")
    assert df.attrs["rounds"] == (4, 4) and experiments.stats() == {"computed": 2, "cached": 2}
    assert df["seed"].tolist() == [0, 1, 2, 3]


def test_the_budget_is_not_part_of_the_cache_key():
    small = Cfg(budget=5.0, budget_weights=(("b_key", 0.5),))
    experiments.sweep(nap, grid(), config=small, name="b_key", rounds="seed")
    experiments.reset_stats()
    big = Cfg(budget=500.0)
    experiments.sweep(nap, grid(), config=big, name="b_key", rounds="seed")
    assert experiments.stats() == {"computed": 0, "cached": 9}
    experiments.sweep(nap, grid(), config=Cfg(nap=1e-6), name="b_key", rounds="seed")
    assert experiments.stats() == {"computed": 9, "cached": 9}  # other fields still count


def test_record_schema_and_enough():
    budget.start(60.0, {"b_a": 0.5})
    a = experiments.sweep(nap, grid(), config=Cfg(), name="b_a", rounds="seed")
    experiments.sweep(nap, grid(), config=Cfg(), name="b_b", rounds="seed")
    rec = budget.record()
    assert set(rec) == {"seconds", "spent", "complete", "rounds"}
    assert rec["seconds"] == 60.0 and isinstance(rec["spent"], float) and rec["complete"] is True
    assert rec["rounds"] == {"b_a": [3, 3], "b_b": [3, 3]}
    assert budget.enough(a, 3) == (True, "3 of 3 rounds done (3 needed)")
    assert budget.enough((2, 5), 3) == (False, "2 of 3 rounds needed (budget 60 s)")
    budget.start(None)
    assert budget.enough((2, 2), 3) == (False, "2 of 3 rounds needed (2 planned)")
    with pytest.raises(TypeError, match="rounds"):
        budget.enough(pd.DataFrame(), 1)
    assert budget.record() == {"seconds": None, "spent": budget.record()["spent"],
                               "complete": True, "rounds": {}}


def test_allotments_split_the_time_left_by_weight():
    b = budget.start(100.0, {"a": 0.5, "b": 0.3, "fits": 0.1})
    approx = lambda x: pytest.approx(x, rel=1e-3)  # noqa: E731  (time passes in between)
    assert budget.allot("a") == approx(50.0)
    assert budget.allot("b") == approx(30.0)
    assert budget.allot("other") == approx(10.0)   # the rest, 1 - 0.9, unnamed sweeps
    budget.note_rounds("a", 1, 1)                     # a finished: its share rolls over
    assert budget.allot("b") == approx(100.0 * 0.3 / 0.5)
    budget.note_rounds("b", 1, 1)
    assert budget.allot("other") == approx(100.0 * 0.1 / 0.2)   # "fits" keeps its share
    assert 99.0 < budget.remaining() <= 100.0 and budget.current() is b
    budget.start(100.0)                               # no weights: all the time left
    assert budget.allot("x") == approx(100.0)
    budget.start(None)
    assert budget.allot("x") is None and budget.remaining() is None
    with pytest.raises(ValueError, match="budget weight of 'a' must lie in"):
        budget.start(10.0, {"a": -1.0})
    with pytest.raises(ValueError, match="keyed by sweep names"):
        budget.start(10.0, {1: 0.5})


@pytest.mark.parametrize("bad", ["abc", "-1", "nan", "inf", "0"])
def test_bad_budget_values_raise_naming_the_variable(monkeypatch, bad):
    monkeypatch.setenv(budget.ENV_BUDGET, bad)
    with pytest.raises(ValueError, match=r"\$DLTHEORY_BUDGET=.*allowed values are a number of "
                                         r"seconds in \(0, inf\)"):
        budget.from_env()
    with pytest.raises(ValueError, match=r"budget seconds must .*\(0, inf\)"):
        budget.start(bad if bad == "abc" else float(bad))


def test_good_budget_values(monkeypatch):
    for text, value in (("", None), (" ", None), ("60", 60.0), ("2.5e2", 250.0)):
        monkeypatch.setenv(budget.ENV_BUDGET, text)
        assert budget.from_env() == value
    monkeypatch.delenv(budget.ENV_BUDGET)
    assert budget.from_env() is None
