"""Chapter time budgets: sweeps run in rounds, and a round starts only while it fits.

``DLTHEORY_BUDGET`` (seconds per chapter, a positive finite number; unset or empty: no
budget) turns a scale's preset into an upper bound. A chapter starts its budget right
after building its Config, whose ``budget`` field holds ``from_env()``::

    from dltheory import budget

    cfg = Config.for_scale(SCALE)
    budget.start(cfg.budget, cfg.budget_weights)     # None: no budget, every round runs
    df = experiments.sweep(task, tasks, config=cfg, name="de_line_search", rounds="seed")
    ok, why = budget.enough(df, need=3)              # (False, "2 of 3 rounds needed (budget 60 s)")

**Allotments.** ``allot(name)`` is the wall time the sweep ``name`` may spend when it starts
now: its share of the time the chapter has left,

    allot(s) = remaining() * w_s / (w_s + sum of w_t over sweeps t named in ``weights``
                                     that have not run yet + w_rest when s is named),

with ``w_s = weights[s]`` for a named sweep and ``w_rest = 1 - sum(weights)`` (at least 0)
for every sweep not named. Time a finished sweep did not use therefore rolls over to the
later ones, and time it overspent is taken from them. Shares that sum to 1 split the whole
budget between the named sweeps; shares below 1 keep the rest for sweeps not named and for
the chapter's other work. A name in ``weights`` that is never a sweep (``"fits": 0.1``)
keeps its share in reserve to the end: that is how a chapter reserves time for fits and
figures after its sweeps; ``remaining()`` tells such code how much time is left. Without
weights every sweep may use all the time left (first come, first served); name the sweeps
in ``weights`` to split the budget. A sweep not named gets no fair split of the rest among
other unnamed sweeps, because the engine cannot know how many will follow.

**Rounds** (``experiments.sweep(..., rounds="seed")``): the engine measures the wall time
per computed task in the sweep and starts a round only when its uncached tasks, at that
cost, fit in what is left of the sweep's allotment and of the chapter's budget. Cached tasks
cost nothing and are always loaded. The first round always runs, so a budget never yields an
empty table: a budget that is too small is exceeded by at most one round per sweep. A round
whose cost cannot be estimated yet (nothing computed so far in this sweep) starts when the
allotment has time left. ``record()`` is what the claims ledger stores.

This is a low layer: it imports only ``dltheory.validation`` (which parses the variable)
and the standard library.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import validation

ENV_BUDGET = "DLTHEORY_BUDGET"

_LOCK = threading.Lock()


# --------------------------------------------------------------------------- validation
def from_env() -> float | None:
    """The chapter budget in seconds from ``$DLTHEORY_BUDGET`` (``None`` when unset or
    empty). Raises ``ValueError`` naming the variable and the allowed values (a number of
    seconds in (0, inf)) for anything else: ``abc``, ``-1``, ``nan``, ``inf``, ``0``."""
    return validation.env(ENV_BUDGET)


def _seconds(value: Any) -> float | None:
    """Budget seconds given to ``start`` (``None``: no budget), checked like the variable."""
    if value is None:
        return None
    return validation.real("budget seconds", value, 0.0, math.inf, lo_open=True)


def _weights(weights: Mapping[str, float] | Iterable[tuple[str, float]] | None) -> dict[str, float]:
    """Sweep name -> share >= 0, from a mapping or pairs (a frozen Config may hold a tuple)."""
    items = dict(weights.items() if isinstance(weights, Mapping) else (weights or ()))
    bad = [k for k in items if not isinstance(k, str)]
    if bad:
        raise ValueError(f"budget weights are keyed by sweep names (strings), got {bad}")
    return {k: validation.real(f"budget weight of {k!r}", w, 0.0, math.inf) for k, w in items.items()}


# --------------------------------------------------------------------------- the budget
@dataclass
class Budget:
    """One chapter's budget: its seconds (``None``: none), shares and the rounds its sweeps
    completed. Use the module functions; ``current()`` returns the process-wide one."""

    seconds: float | None = None
    weights: dict[str, float] = field(default_factory=dict)
    t0: float = field(default_factory=time.perf_counter)
    rounds: dict[str, list[int]] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.seconds is not None

    def spent(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float | None:
        return None if self.seconds is None else max(0.0, self.seconds - self.spent())

    def allot(self, name: str) -> float | None:
        rest = max(0.0, 1.0 - sum(self.weights.values()))
        own = self.weights.get(name, rest)
        later = sum(w for s, w in self.weights.items() if s != name and s not in self.rounds)
        total = own + later + (rest if name in self.weights else 0.0)
        left = self.remaining()
        if left is None:
            return None
        return left * own / total if total > 0 else left

    def note(self, name: str, done: int, planned: int) -> None:
        prev = self.rounds.get(name, [0, 0])
        self.rounds[name] = [prev[0] + int(done), prev[1] + int(planned)]

    def record(self) -> dict:
        return {
            "seconds": self.seconds,
            "spent": round(self.spent(), 3),
            "complete": all(d == p for d, p in self.rounds.values()),
            "rounds": {k: list(v) for k, v in self.rounds.items()},
        }


_CURRENT = Budget()


def start(seconds: float | None, weights: Mapping[str, float] | Iterable[tuple[str, float]]
          | None = None) -> Budget:
    """Start the process-wide chapter budget now (``seconds=None``: no budget, every round
    of every sweep runs), with sweep shares ``weights`` (see the module docstring); forget
    the rounds of sweeps run before. Raises ``ValueError`` for seconds that are not positive
    and finite, or for negative shares."""
    global _CURRENT
    b = Budget(_seconds(seconds), _weights(weights))
    with _LOCK:
        _CURRENT = b
    return b


def current() -> Budget:
    """The process-wide budget (an inactive one until ``start`` is called)."""
    return _CURRENT


def allot(sweep_name: str) -> float | None:
    """Seconds the sweep ``sweep_name`` may spend if it starts now (``None``: no budget)."""
    with _LOCK:
        return _CURRENT.allot(sweep_name)


def remaining() -> float | None:
    """Seconds left in the chapter budget (never below 0; ``None``: no budget)."""
    return _CURRENT.remaining()


def note_rounds(sweep_name: str, done: int, planned: int) -> None:
    """Record that a sweep completed ``done`` of its ``planned`` rounds (the engine calls
    this; a sweep run twice under one name adds up)."""
    with _LOCK:
        _CURRENT.note(sweep_name, done, planned)


def record() -> dict:
    """What the ledger stores: ``{"seconds": float | None, "spent": float, "complete": bool,
    "rounds": {sweep_name: [done, planned]}}``; ``complete`` when every sweep ran every
    planned round; ``spent`` is the wall time since ``start``."""
    with _LOCK:
        return _CURRENT.record()


def enough(df_or_rounds: Any, need: int) -> tuple[bool, str]:
    """Whether a sweep completed at least ``need`` rounds, and a reason for the ledger.

    df_or_rounds : a sweep's DataFrame (``df.attrs["rounds"]``) or ``(done, planned)``.
    Returns e.g. ``(False, "2 of 3 rounds needed (budget 60 s)")`` or
    ``(True, "5 of 5 rounds done (3 needed)")``."""
    attrs = getattr(df_or_rounds, "attrs", None)
    pair = attrs.get("rounds") if attrs is not None else df_or_rounds
    try:
        done, planned = (int(x) for x in pair)
    except (TypeError, ValueError):
        raise TypeError("enough() needs a DataFrame from sweep(..., rounds=...) or a "
                        f"(done, planned) pair; got {type(df_or_rounds).__name__}") from None
    if done >= need:
        return True, f"{done} of {planned} rounds done ({need} needed)"
    secs = _CURRENT.seconds
    why = f"budget {secs:g} s" if secs is not None and planned >= need else f"{planned} planned"
    return False, f"{done} of {need} rounds needed ({why})"
