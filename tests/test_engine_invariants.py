"""Invariants the engine checks for every sweep (issue 47, ``dltheory.invariants``): distinct
seeds give distinct draws, and the declared grid is the grid that ran. Toy sweeps: a task
that ignores its seed (or a row stream that ignores its start) trips the first, a repeated
task or a task that returns no row trips the second, and each violation is a FAIL identity
on the chapter's ledger without the chapter writing a guard."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from dltheory import chapter, claims, experiments, invariants


@dataclass(frozen=True)
class Cfg:
    scale: str = "smoke"
    n: int = 3


def seeded(cfg: Cfg, task: dict) -> dict:
    rng = np.random.default_rng([task["seed"], 7])
    return {"x": float(rng.normal()), "w": task["w"]}


def ignores_seed(cfg: Cfg, task: dict) -> dict:
    rng = np.random.default_rng(7)                # the seed never reaches the stream
    return {"x": float(rng.normal()), "w": task["w"]}


def deterministic(cfg: Cfg, task: dict) -> dict:
    return {"y": task["w"] ** 2}


def batched(cfg: Cfg, task: dict) -> pd.DataFrame:
    starts = np.arange(cfg.n) + cfg.n * task["block"]
    x = [np.random.default_rng([int(s), 1]).normal() for s in starts]
    return pd.DataFrame({"start": starts, "x": x})


def batched_one_stream(cfg: Cfg, task: dict) -> pd.DataFrame:
    starts = np.arange(cfg.n) + cfg.n * task["block"]
    x = [np.random.default_rng([0, 1]).normal() for _ in starts]   # every start, one stream
    return pd.DataFrame({"start": starts, "x": x})


def rows_one_stream(cfg: Cfg, task: dict) -> list[dict]:
    return [{"seed": s, "x": float(np.random.default_rng(task["w"]).normal())} for s in range(3)]


def maybe_empty(cfg: Cfg, task: dict) -> list[dict]:
    return [] if task["w"] == 2 else [{"y": task["w"]}]


TASKS = [{"w": w, "seed": s} for w in (1, 2) for s in range(3)]


@pytest.fixture(autouse=True)
def _no_run(monkeypatch):
    monkeypatch.setattr(chapter, "_RUN", [None])
    invariants.reset()


def _sweep(fn, tasks, name):
    experiments.sweep(fn, tasks, config=Cfg(), name=name, cache=False, progress=False)
    return invariants.records()[name]


def test_distinct_seeds_pass_and_a_task_that_ignores_its_seed_trips(capsys, monkeypatch):
    monkeypatch.setattr(invariants, "_SINK", [None])     # no chapter run: one stderr line
    rec = _sweep(seeded, TASKS, "inv_ok")
    assert rec["draws"]["groups"] == 2 and rec["draws"]["collapsed"] == []
    assert rec["grid"] == {"planned": 6, "distinct": 6, "kept": 6, "empty": 0,
                           "duplicates": 0, "problems": []}
    assert rec["seconds"] >= 0                          # recorded (no bound on wall time)
    assert "[invariants]" not in capsys.readouterr().err
    rec = _sweep(ignores_seed, TASKS, "inv_bad")
    assert rec["draws"]["n_collapsed"] == 2, rec
    assert "identical results" in rec["draws"]["collapsed"][0]
    assert "[invariants] sweep inv_bad: distinct seeds give distinct draws: FAILS" \
        in capsys.readouterr().err


def test_rows_that_ignore_their_start_or_seed_trip():
    assert _sweep(batched, [{"block": b} for b in range(2)], "inv_rows")["draws"]["collapsed"] == []
    rec = _sweep(batched_one_stream, [{"block": b} for b in range(2)], "inv_rows_bad")
    assert rec["draws"]["n_collapsed"] == 3, rec                # 2 blocks alike, 2 rows each
    assert any("rows with start = 0 and start = 1" in c for c in rec["draws"]["collapsed"])
    rec = _sweep(rows_one_stream, [{"w": 1}], "inv_list_bad")
    assert rec["draws"]["n_collapsed"] == 1 and "seed" in rec["draws"]["collapsed"][0]


def test_tasks_without_a_seed_are_not_compared():
    rec = _sweep(deterministic, [{"w": w} for w in range(4)], "inv_det")
    assert rec["draws"] == {"groups": 0, "rows": 0, "collapsed": [], "n_collapsed": 0}


def test_a_grid_with_a_repeated_or_empty_point_is_named():
    rec = _sweep(maybe_empty, [{"w": 1}, {"w": 2}, {"w": 3}, {"w": 1}], "inv_grid")["grid"]
    assert (rec["planned"], rec["distinct"], rec["empty"], rec["duplicates"]) == (4, 3, 1, 1)
    assert any("declared more than once" in p for p in rec["problems"])
    assert any("{'w': 2} returned no row" in p for p in rec["problems"])


def test_a_collapse_is_a_fail_identity_on_the_chapter_ledger(monkeypatch, tmp_path):
    """With a chapter run in progress, the engine records the violation on its ledger (a
    guard: kind identity, FAIL), and the ledger's report raises; the chapter wrote no
    guard."""
    ledger = claims.Ledger("gradient_flow", "smoke", results_dir=tmp_path)
    # what chapter.start hands the engine: the sink that writes on this run's ledger
    monkeypatch.setattr(chapter, "_RUN", [ledger])
    monkeypatch.setattr(invariants, "_SINK", [chapter._invariant_sink(ledger, "GF")])
    _sweep(seeded, TASKS, "inv_ok")
    assert ledger.claims == {}                         # correct code: nothing added
    _sweep(ignores_seed, TASKS, "inv_bad")
    _sweep(ignores_seed, TASKS, "inv_bad")             # once per sweep and invariant
    _sweep(maybe_empty, [{"w": 2}], "inv_grid")
    c = ledger.claims["GF.engine.distinct_draws.inv_bad"]
    assert (c.kind, c.verdict) == ("identity", "FAIL") and "identical results" in c.note
    assert ledger.claims["GF.engine.grid.inv_grid"].verdict == "FAIL"
    with pytest.raises(claims.ClaimFailed, match="GF.engine.distinct_draws.inv_bad"):
        ledger.report(show=False)


# --------------------------------------------------------------------------- arguments
@dataclass(frozen=True)
class HB:
    scale: str = "smoke"
    lr: float = 0.1
    momentum: float = 0.9
    steps: int = 5
    seed: int = 0


def heavy_ball(cfg: HB, task: dict) -> dict:
    rng = np.random.default_rng([cfg.seed, task["stream"]])
    x, v = rng.normal(size=3), np.zeros(3)
    for _ in range(cfg.steps):
        v = cfg.momentum * v - cfg.lr * x
        x = x + v
    return {"x": x}


def heavy_ball_planted(cfg: HB, task: dict) -> dict:
    rng = np.random.default_rng([cfg.seed, 0])      # the stream index dropped
    x, v = rng.normal(size=3), np.zeros(3)
    _ = cfg.momentum                                 # read, never used: plain GD
    for _ in range(cfg.steps):
        v = -cfg.lr * x
        x = x + v
    return {"x": x}


def test_every_argument_of_a_task_changes_its_output_and_an_ignored_one_is_named():
    ok = invariants.argument_effects(heavy_ball, HB(), {"stream": 3})
    assert ok == {"moved": ["stream", "config.lr", "config.momentum", "config.seed",
                            "config.steps"], "ignored": [], "unvaried": []}
    bad = invariants.argument_effects(heavy_ball_planted, HB(), {"stream": 3})
    assert bad["ignored"] == ["stream", "config.momentum"], bad


def test_every_argument_of_the_prologues_tasks_changes_their_output():
    """The prologue's two sweep tasks on a small Config: each task key and each Config
    field the task reads moves its output (the last block, which ``n_seeds`` clips, moved
    to the first, and its block size down, so that no block is empty; the dtype to
    float32)."""
    import dataclasses

    from dltheory.gradient_flow import config as gf_config
    from dltheory.gradient_flow import experiments as gf_exp

    cfg = dataclasses.replace(gf_config.Config.for_scale("smoke"), k_max=20, n_tau=3,
                              n_seeds=3, seeds_per_task=2)
    alt = {"config.dtype": "float32", "block": 0, "config.seeds_per_task": 1}
    drift = invariants.argument_effects(gf_exp.drift_task, cfg, {"block": 1}, alternatives=alt)
    assert drift["ignored"] == [] and drift["unvaried"] == [], drift
    assert {"block", "config.seed", "config.k_fixed", "config.init_noise"} <= set(drift["moved"])
    flow = invariants.argument_effects(gf_exp.flow_error_task, cfg, {"tau": 0.01},
                                       alternatives=alt)
    assert flow["ignored"] == [] and flow["unvaried"] == [], flow
    assert {"tau", "config.t_fixed", "config.seed"} <= set(flow["moved"])


def at_the_floor(cfg: Cfg, task: dict) -> list[dict]:
    rng = np.random.default_rng([task["seed"], 3])
    return [{"law": "a", "residual": 2.0 ** -53, "count": 35, "rate": 1.0},
            {"law": "b", "residual": float(rng.normal()) * 1e-17}]


def test_results_at_the_rounding_floor_or_round_are_not_compared():
    """An identity's residual at the last bit, a count or a rate of 1.0 is the same for
    every draw: not a collapse (chapter 1's orthogonality sweep gives 1.1e-16 for two
    draws)."""
    rec = _sweep(at_the_floor, TASKS, "inv_floor")["draws"]
    assert rec["groups"] == 2 and rec["collapsed"] == [], rec


def test_replay_every_prologue_start_from_one_stream_is_a_ledger_fail(monkeypatch, tmp_path):
    """Issue 47's first miss, replayed: the prologue's random starts all drawn from one
    stream (the start index dropped from the stream name). The prologue writes no guard;
    the engine's invariant records a FAIL on its ledger. The correct code adds nothing."""
    import dataclasses

    from dltheory import seeds
    from dltheory.gradient_flow import config as gf_config
    from dltheory.gradient_flow import experiments as gf_exp

    cfg = dataclasses.replace(gf_config.Config.for_scale("smoke"), k_max=20, n_tau=3,
                              n_seeds=2, seeds_per_task=2)
    ledger = claims.Ledger("gradient_flow", "smoke", results_dir=tmp_path)
    # what chapter.start hands the engine: the sink that writes on this run's ledger
    monkeypatch.setattr(chapter, "_RUN", [ledger])
    monkeypatch.setattr(invariants, "_SINK", [chapter._invariant_sink(ledger, "GF")])
    gf_exp.drift_sweep(cfg, cache=False, progress=False)
    assert ledger.claims == {}
    monkeypatch.setattr(gf_config.Config, "start", lambda self, which: (
        self.init_u + self.init_noise * seeds.numpy(self.seed, "start").standard_normal(self.d),
        np.full(self.d, self.init_v)))
    gf_exp.drift_sweep(cfg, cache=False, progress=False)
    c = ledger.claims["GF.engine.distinct_draws.prologue_drift"]
    assert c.verdict == "FAIL" and "start = 0 and start = 1" in c.note, c.note


def test_chapter_start_hands_the_engine_its_ledger(monkeypatch, tmp_path):
    """chapter.start installs the sink: a collapse in a sweep run after it lands on that
    run's ledger as a FAIL identity, with no guard written by the chapter."""
    monkeypatch.setattr(invariants, "_SINK", [None])
    monkeypatch.setattr(chapter, "_RUN", [None])
    monkeypatch.setenv("DLTHEORY_RESULTS_DIR", str(tmp_path))
    cfg, ledger = chapter.start("gradient_flow", "smoke", echo=False)
    _sweep(ignores_seed, TASKS, "inv_started")
    c = ledger.claims["GF.engine.distinct_draws.inv_started"]
    assert (c.kind, c.verdict) == ("identity", "FAIL")
