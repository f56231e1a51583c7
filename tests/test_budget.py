"""Chapter budgets and sweeps in rounds: round order, tasks cut at task granularity by the
measured cost (a fake clock: no wall time in any assertion), the table fixed by what ran,
resume adds tasks, the budget is not part of the cache key, the ledger's record, the first
and last lines of a budgeted run, and the validation of ``DLTHEORY_BUDGET``."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest

from dltheory import budget, experiments

CALLS: list[tuple] = []


class FakeClock:
    """A time source that moves only when a task says so."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


CLOCK = FakeClock()


@dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    nap: float = 0.0
    by_width: bool = False      # a task costs nap * width instead of nap
    budget: float | None = None
    budget_weights: tuple = ()


def nap(cfg: Cfg, task: dict) -> dict:
    """Costs ``cfg.nap`` seconds of the fake clock (times the width with ``by_width``);
    records the call order."""
    CALLS.append((task["width"], task["seed"]))
    CLOCK.t += cfg.nap * (task["width"] if cfg.by_width else 1)
    return {"y": task["width"] * 10 + task["seed"]}


def grid(widths=(4, 2, 8), seeds=(2, 0, 1)) -> list[dict]:
    return [{"width": w, "seed": s} for w in widths for s in seeds]


def start(seconds, weights=None):
    return budget.start(seconds, weights, clock=CLOCK)


@pytest.fixture(autouse=True)
def _fresh(tmp_path, monkeypatch):
    monkeypatch.setenv("DLTHEORY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DLTHEORY_BACKEND", raising=False)
    monkeypatch.delenv(budget.ENV_BUDGET, raising=False)
    experiments.reset_stats()
    CALLS.clear()
    budget.start(None)
    monkeypatch.setattr(experiments, "FIRST_ROUND_WHOLE", False)   # cut at tasks throughout
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


def test_a_budget_cuts_tasks_and_the_table_keeps_whole_rounds():
    full = experiments.sweep(nap, grid(), config=Cfg(), cache=False)
    start(5.0)                                   # tasks of 1 s: five run, round 2 part-way
    df = experiments.sweep(nap, grid(), config=Cfg(nap=1.0), name="b_cut", rounds="seed")
    assert len(CALLS) - 9 == 5                   # 9 calls of the unbudgeted sweep before
    assert (df.attrs["rounds"], df.attrs["tasks"]) == ((1, 3), (3, 9))
    pd.testing.assert_frame_equal(df, full[full["seed"] == 0].reset_index(drop=True))
    rec = budget.record()
    assert rec["rounds"] == {"b_cut": [1, 3]} and rec["tasks"] == {"b_cut": [3, 9]}
    assert (rec["spent"], rec["overrun"], rec["held"], rec["complete"]) == (5.0, 0.0, True, False)
    assert rec["covered"] == pytest.approx(3 / 9, abs=1e-4)


def test_a_first_round_that_does_not_fit_ends_part_way_as_a_prefix():
    start(2.5)
    tasks = grid(seeds=(0,))                     # one round of three tasks
    df = experiments.sweep(nap, tasks, config=Cfg(nap=1.0), name="b_part", rounds="seed")
    assert (df.attrs["rounds"], df.attrs["tasks"]) == ((0, 1), (2, 3))
    assert df["width"].tolist() == [4, 2]        # the first two tasks in run order
    assert budget.coverage(df) == "had 2 of 3 tasks, 0 of 1 rounds"
    ok, why = budget.enough(df, 1)
    assert not ok and why == "0 of 1 rounds needed (budget 2.5 s; had 2 of 3 tasks)"


def test_no_time_left_runs_no_task_and_cached_tasks_still_load():
    tasks = grid(seeds=(0, 1))
    cached = [tasks[0], tasks[2], tasks[5]]      # (4, 0), (2, 0) and (8, 1)
    experiments.sweep(nap, cached, config=Cfg(nap=1.0), name="b_none", rounds="seed")
    CALLS.clear()
    start(1.0)
    CLOCK.t += 5.0                               # the chapter spent its budget elsewhere
    df = experiments.sweep(nap, tasks, config=Cfg(nap=1.0), name="b_none", rounds="seed")
    assert CALLS == [] and df.attrs["tasks"] == (2, 6) and df.attrs["rounds"] == (0, 2)
    assert df["width"].tolist() == [4, 2]        # the cached prefix of round 0, not (8, 1)
    assert budget.record()["overrun"] == 4.0 and budget.record()["held"] is False
    # a sweep with nothing cached and no time left starts nothing: the budget is Spent
    with pytest.raises(budget.Spent) as spent:
        experiments.sweep(nap, tasks, config=Cfg(nap=0.5), name="b_fresh", rounds="seed")
    assert CALLS == [] and spent.value.tasks == (0, 6) and spent.value.where == "b_fresh"
    assert budget.record()["tasks"]["b_fresh"] == [0, 6] and budget.record()["overrun"] == 4.0


def test_a_spent_share_still_starts_one_task_while_the_chapter_has_time():
    start(10.0, {"first": 0.1, "rest": 0.9})
    CLOCK.t += 2.0                                # the share of "first" (1 s) is spent
    df = experiments.sweep(nap, grid(seeds=(0,)), config=Cfg(nap=0.5), name="first",
                           rounds="seed")
    assert CALLS == [(4, 0)] and df.attrs["tasks"] == (1, 3)


def test_the_cost_of_a_task_is_its_place_in_an_earlier_round():
    """Tasks of 1, 2 and 8 s: round 0 is timed; in round 1 the 8 s task is known to cost 8,
    so it does not start with 6 s left (the longest-so-far rule alone would have let a
    cheap first-round estimate through)."""
    start(20.0)
    tasks = grid(widths=(1, 2, 8), seeds=(0, 1))
    df = experiments.sweep(nap, tasks, config=Cfg(nap=1.0, by_width=True), name="b_place",
                           rounds="seed")
    assert CALLS == [(1, 0), (2, 0), (8, 0), (1, 1), (2, 1)]
    assert (df.attrs["rounds"], df.attrs["tasks"]) == ((1, 2), (3, 6))
    assert budget.record()["spent"] == 14.0


def test_a_task_longer_than_the_budget_is_the_overrun_on_record():
    start(1.0)
    df = experiments.sweep(nap, grid(seeds=(0,)), config=Cfg(nap=3.0), name="b_over",
                           rounds="seed")
    assert df.attrs["tasks"] == (1, 3)
    rec = budget.record()
    assert (rec["spent"], rec["overrun"], rec["bound"], rec["held"]) == (3.0, 2.0, 1.25, False)
    assert budget.summary().startswith("budget: 1 s, spent 3.0 s, over by 2.0 s (NOT held")


def test_a_rerun_loads_cached_tasks_and_adds_tasks():
    tasks = grid(widths=(1,), seeds=range(4))
    cfg = Cfg(nap=1.0)
    counts = []
    for _ in range(2):                      # each run: cached tasks free, two new ones
        start(2.5)
        experiments.reset_stats()
        df = experiments.sweep(nap, tasks, config=cfg, name="b_resume", rounds="seed")
        counts.append((df.attrs["rounds"], experiments.stats()))
    assert counts == [((2, 4), {"computed": 2, "cached": 0}),
                      ((4, 4), {"computed": 2, "cached": 2})]
    budget.start(None)
    experiments.reset_stats()
    df = experiments.sweep(nap, tasks, config=cfg, name="b_resume", rounds="seed")
    assert df.attrs["rounds"] == (4, 4) and experiments.stats() == {"computed": 0, "cached": 4}
    assert df["seed"].tolist() == [0, 1, 2, 3]


def test_first_and_last_lines_of_a_budgeted_run(capsys):
    b = start(60.0)
    first = capsys.readouterr().out.strip()
    assert first == b.banner() and first.startswith("budget: 60 s for this chapter "
                                                    "($DLTHEORY_BUDGET)")
    assert "ends within 75 s" in first
    experiments.sweep(nap, grid(), config=Cfg(nap=1.0), name="b_lines", rounds="seed")
    CLOCK.t += 0.5                               # figures and claims after the sweeps
    assert budget.summary() == ("budget: 60 s, spent 9.5 s (held); covered 9 of 9 tasks "
                                "(100%) in 1 sweeps; every round ran")
    start(5.0)                                   # tasks of 2 s: two run, none of round 0's third
    experiments.sweep(nap, grid(), config=Cfg(nap=2.0), name="b_lines", rounds="seed")
    assert budget.summary().endswith("covered 2 of 9 tasks (22%) in 1 sweeps; rounds "
                                     "done/planned: b_lines 0/3")
    budget.start(None, echo=False)
    assert capsys.readouterr().out.count("budget:") == 1 and budget.banner().startswith(
        "budget: none")


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
    assert set(rec) == {"seconds", "spent", "overrun", "bound", "held", "startup", "complete",
                        "covered", "rounds", "tasks", "stopped",
                        "sweep_seconds"}
    assert rec["seconds"] == 60.0 and isinstance(rec["spent"], float) and rec["complete"] is True
    assert rec["rounds"] == {"b_a": [3, 3], "b_b": [3, 3]} and rec["stopped"] is None
    assert budget.enough(a, 3) == (True, "3 of 3 rounds done (3 needed)")
    assert budget.enough((2, 5), 3) == (False, "2 of 3 rounds needed (budget 60 s)")
    budget.start(None)
    assert budget.enough((2, 2), 3) == (False, "2 of 3 rounds needed (2 planned)")
    with pytest.raises(TypeError, match="rounds"):
        budget.enough(pd.DataFrame(), 1)
    rec = budget.record()
    assert {k: rec[k] for k in ("seconds", "overrun", "held", "complete", "covered", "rounds")} \
        == {"seconds": None, "overrun": None, "held": None, "complete": True, "covered": 1.0,
            "rounds": {}}


def test_allotments_split_the_time_left_by_weight():
    b = start(100.0, {"a": 0.5, "b": 0.3, "fits": 0.1})
    approx = lambda x: pytest.approx(x, rel=1e-9)  # noqa: E731
    assert budget.allot("a") == approx(50.0)
    assert budget.allot("b") == approx(30.0)
    assert budget.allot("other") == approx(10.0)   # the rest, 1 - 0.9, unnamed sweeps
    budget.note_rounds("a", 1, 1)                     # a finished: its share rolls over
    assert budget.allot("b") == approx(100.0 * 0.3 / 0.5)
    budget.note_rounds("b", 1, 1)
    assert budget.allot("other") == approx(100.0 * 0.1 / 0.2)   # "fits" keeps its share
    assert budget.remaining() == 100.0 and budget.current() is b
    start(100.0)                               # no weights: all the time left
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
                                         r"seconds in \(0, 31622400\] \(at most a year"):
        budget.from_env()
    with pytest.raises(ValueError, match=r"budget seconds must .*\(0, 3.16224e\+07\]"):
        budget.start(bad if bad == "abc" else float(bad))


def test_good_budget_values(monkeypatch):
    for text, value in (("", None), (" ", None), ("60", 60.0), ("2.5e2", 250.0)):
        monkeypatch.setenv(budget.ENV_BUDGET, text)
        assert budget.from_env() == value
    monkeypatch.delenv(budget.ENV_BUDGET)
    assert budget.from_env() is None


def test_the_time_record_adds_entries_and_reads_back(tmp_path, monkeypatch):
    path = tmp_path / "times.json"
    monkeypatch.setenv(budget.ENV_TIMES, str(path))
    assert budget.times() == {}
    budget.write_times({"test.sh/unit tests": 12.5})
    budget.write_times({"gpu_check/paper/budget 60/cpu/03": {"seconds": 80.0, "spent": 70.1}})
    rec = budget.times()
    assert set(rec) == {"test.sh/unit tests", "gpu_check/paper/budget 60/cpu/03"}
    assert rec["test.sh/unit tests"]["seconds"] == 12.5 and rec["test.sh/unit tests"]["cores"]
    assert rec["gpu_check/paper/budget 60/cpu/03"]["spent"] == 70.1
    assert budget.times(path) == rec
    from dltheory import ledgers  # the reproduction page's table of the record

    t = ledgers.times_table()
    assert list(t["source"]) == ["gpu_check", "test.sh"]
    assert list(t["seconds"]) == [80.0, 12.5] and t["facts"][0] == "spent 70.1"
    assert ledgers.times_table({}).empty


def test_the_first_round_runs_whole_while_chapters_need_it(monkeypatch):
    monkeypatch.setattr(experiments, "FIRST_ROUND_WHOLE", True)
    start(2.5)
    df = experiments.sweep(nap, grid(), config=Cfg(nap=1.0), name="b_whole", rounds="seed")
    assert (df.attrs["rounds"], df.attrs["tasks"]) == ((1, 3), (3, 9))
    assert len(CALLS) == 3 and budget.record()["overrun"] == 0.5


# ---------------------------------------------------------------- the deadline (real clock)
def slow(cfg: Cfg, task: dict) -> dict:
    """Sleeps ``cfg.nap`` real seconds, then marks that it finished."""
    import time

    time.sleep(cfg.nap)
    CALLS.append(("finished", task["width"]))
    return {"y": 1.0}


def test_a_task_running_when_the_budget_ends_is_cut_and_stores_nothing():
    budget.start(0.2)
    with pytest.raises(budget.Spent) as spent:      # a 60 s task: only the alarm ends it
        experiments.sweep(slow, grid(widths=(1, 2), seeds=(0,)), config=Cfg(nap=60.0),
                          name="b_cut", rounds="seed")
    assert CALLS == [] and experiments.stats()["computed"] == 0
    assert spent.value.where == "b_cut" and spent.value.tasks == (0, 2)
    assert "still running" in spent.value.why
    assert budget.record()["tasks"]["b_cut"] == [0, 2]
    import signal

    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0    # no alarm left behind


def test_a_sweep_without_rounds_is_cut_too():
    budget.start(0.2)
    with pytest.raises(budget.Spent):
        experiments.sweep(slow, grid(widths=(1,), seeds=(0,)), config=Cfg(nap=60.0),
                          name="b_whole")
    assert CALLS == []


def test_the_hard_stop_interrupts_code_outside_the_sweeps_and_tasks_restore_it():
    import signal
    import time

    budget.start(30.0)
    at = budget.arm_hard_stop()
    assert at == pytest.approx(budget.current().t0 + 30.0 * (1 + budget.HARD_MARGIN * 0.25))
    experiments.sweep(slow, grid(widths=(1,), seeds=(0,)), config=Cfg(nap=0.0),
                      name="b_quick", rounds="seed")
    left = signal.getitimer(signal.ITIMER_REAL)[0]
    assert 0 < left <= 36.0                         # the task's deadline gave way to it again
    budget.start(0.1)
    budget.arm_hard_stop()
    with pytest.raises(budget.Spent) as spent:
        time.sleep(60)
    assert spent.value.where == "chapter code"
    budget.disarm()
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


@pytest.mark.parametrize("whole_first_round", [False, True])
def test_a_cut_task_leaves_no_alarm_to_interrupt_the_ledger(whole_first_round, monkeypatch):
    """A task's deadline fires (Spent) with the hard stop still due 20% later: making the
    Spent stops every alarm, so the code that ends the run (``chapter.stopped`` writing the
    ledger) is not interrupted by the hard stop (it was, as 'Error in sys.excepthook')."""
    import signal
    import time

    monkeypatch.setattr(experiments, "FIRST_ROUND_WHOLE", whole_first_round)
    budget.start(0.2)
    budget.arm_hard_stop()
    with pytest.raises(budget.Spent) as spent:
        experiments.sweep(slow, grid(widths=(1,), seeds=(0,)), config=Cfg(nap=60.0),
                          name="b_cut_then_ledger", rounds="seed")
    assert "still running" in spent.value.why
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0
    time.sleep(0.3)          # past the hard stop (0.24 s): nothing fires
    budget.disarm()
