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

**Tasks, not rounds, are the unit of time** (``experiments.sweep(..., rounds="seed")``):
the engine times every task it computes on the machine that runs it and starts a task only
when its estimated cost fits in what is left of the sweep's allotment and of the chapter's
budget. The estimate of a task is the measured time of the task at the same place in an
earlier round (rounds usually repeat one grid over seeds), else the longest task measured
so far in this sweep; nothing is assumed: the first task of a sweep is timed. A sweep
whose share is spent but that has no result yet starts one task while the chapter has
time left (an empty table would stop the chapter's code). **The budget's end is a
deadline** (``deadline``): a task still running when the chapter's seconds are up is
interrupted (SIGALRM, on POSIX in the main thread) and stores nothing, and a sweep with no
result and no time left starts nothing: both raise ``Spent``, and ``chapter.start`` makes
the run end there with its ledger (``chapter.stopped``: the evidence claims not reached
are INCONCLUSIVE, "not reached: the 60 s budget ran out in <sweep>, which had k of n
tasks"; ``record()["stopped"]`` lists every claim not reached). In a script the budget
also arms a hard stop (``arm_hard_stop``) at ``seconds * (1 + HARD_MARGIN * (BOUND - 1))``
that interrupts any code (fits, figures), so a budgeted script ends with its ledger
within ``BOUND * seconds`` of the start, up to the time a single compiled operation (one
large matrix product, one eigendecomposition) takes to return.

A round may therefore end part-way. The table holds the completed rounds (or, when none
completed, the tasks of the first round that ran), so it is deterministic given what ran: ``df.attrs["rounds"] = (complete, planned)`` and
``df.attrs["tasks"] = (in the table, planned)``; ``coverage(df)`` words it ("had 12 of 64
tasks, 0 of 8 rounds") for an INCONCLUSIVE claim. Cached tasks cost nothing and are loaded
as long as they extend the run without a gap. A chapter's own work outside its sweeps
(fits, figures, claims) is inside the budget: the shares it names in ``weights`` that are
not sweeps (``"fits"``, ``"figures"``) are kept back for it.

**What is recorded.** ``record()`` is what the claims ledger stores under ``"budget"``:
the seconds, the time spent, the overrun (``max(0, spent - seconds)``), the bound the run
promises (``1.25 * seconds``) and whether it held, the measured start-up before the budget
started, and per sweep the rounds and tasks done of those planned. ``banner()`` is the
first line a budgeted run prints (``budget.start`` prints it), ``summary()`` the last
(``chapter.finish`` prints it after the ledger).

This is a low layer: it imports only ``dltheory.validation`` (which parses the variable)
and the standard library.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
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
    return validation.real("budget seconds", value, 0.0, validation.MAX_SECONDS, lo_open=True)


def _weights(weights: Mapping[str, float] | Iterable[tuple[str, float]] | None) -> dict[str, float]:
    """Sweep name -> share >= 0, from a mapping or pairs (a frozen Config may hold a tuple)."""
    items = dict(weights.items() if isinstance(weights, Mapping) else (weights or ()))
    bad = [k for k in items if not isinstance(k, str)]
    if bad:
        raise ValueError(f"budget weights are keyed by sweep names (strings), got {bad}")
    return {k: validation.real(f"budget weight of {k!r}", w, 0.0, math.inf) for k, w in items.items()}


# --------------------------------------------------------------------------- the budget
BOUND = 1.25   # a budgeted chapter ends within BOUND * seconds (plus its start-up)


def _process_age() -> float | None:
    """Seconds since this process started (Linux ``/proc``; ``None`` elsewhere): the
    start-up a budget cannot cover (interpreter, imports, data) when ``start`` is called."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        import os

        return max(0.0, up - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


@dataclass
class Budget:
    """One chapter's budget: its seconds (``None``: none), shares, and the rounds and tasks
    its sweeps completed. Use the module functions; ``current()`` returns the process-wide
    one. ``clock`` is the time source (tests pass a fake one)."""

    seconds: float | None = None
    weights: dict[str, float] = field(default_factory=dict)
    clock: Any = time.perf_counter
    t0: float | None = None
    startup: float | None = None
    rounds: dict[str, list[int]] = field(default_factory=dict)
    tasks: dict[str, list[int]] = field(default_factory=dict)
    stopped: dict | None = None    # where the budget ran out, when the run ended early
    sweep_seconds: dict[str, float] = field(default_factory=dict)   # computing, per sweep

    def __post_init__(self):
        if self.t0 is None:
            self.t0 = self.clock()

    @property
    def active(self) -> bool:
        return self.seconds is not None

    def spent(self) -> float:
        return self.clock() - self.t0

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

    def note(self, name: str, done: int, planned: int, tasks: tuple[int, int] | None = None) -> None:
        prev = self.rounds.get(name, [0, 0])
        self.rounds[name] = [prev[0] + int(done), prev[1] + int(planned)]
        if tasks is not None:
            prev = self.tasks.get(name, [0, 0])
            self.tasks[name] = [prev[0] + int(tasks[0]), prev[1] + int(tasks[1])]

    def record(self) -> dict:
        spent = self.spent()
        done = sum(d for d, _ in self.tasks.values())
        planned = sum(p for _, p in self.tasks.values())
        secs = self.seconds
        return {
            "seconds": secs,
            "spent": round(spent, 3),
            "overrun": None if secs is None else round(max(0.0, spent - secs), 3),
            "bound": None if secs is None else round(BOUND * secs, 3),
            "held": None if secs is None else spent <= BOUND * secs,
            "startup": None if self.startup is None else round(self.startup, 3),
            "complete": all(d == p for d, p in self.rounds.values()),
            "covered": round(done / planned, 4) if planned else 1.0,
            "rounds": {k: list(v) for k, v in self.rounds.items()},
            "tasks": {k: list(v) for k, v in self.tasks.items()},
            "stopped": self.stopped,
            "sweep_seconds": {k: round(v, 3) for k, v in self.sweep_seconds.items()},
        }

    def banner(self) -> str:
        if self.seconds is None:
            return "budget: none (every round of every sweep runs)"
        up = "" if self.startup is None else f"; start-up before it {self.startup:.1f} s"
        return (f"budget: {self.seconds:g} s for this chapter (${ENV_BUDGET}); sweeps run the "
                f"tasks that fit, the run ends within {BOUND * self.seconds:.4g} s{up}")

    def summary(self) -> str:
        rec = self.record()
        if self.seconds is None:
            return f"budget: none; {rec['spent']:.1f} s spent, every planned task ran"
        short = [f"{k} {d}/{p}" for k, (d, p) in self.rounds.items() if d < p]
        done = sum(d for d, _ in self.tasks.values())
        planned = sum(p for _, p in self.tasks.values())
        over = (f", over by {rec['overrun']:.1f} s" if rec["overrun"] else "")
        held = "held" if rec["held"] else f"NOT held (bound {rec['bound']:.4g} s)"
        cover = (f"{done} of {planned} tasks ({100 * rec['covered']:.0f}%) in "
                 f"{len(self.rounds)} sweeps")
        rounds = ("every round ran" if not short
                  else "rounds done/planned: " + ", ".join(short))
        return (f"budget: {self.seconds:g} s, spent {rec['spent']:.1f} s{over} ({held}); "
                f"covered {cover}; {rounds}")


_CURRENT = Budget()


# --------------------------------------------------------------------------- deadlines
class Spent(BaseException):
    """The chapter's budget ran out. Raised by the engine when a sweep with no result
    finds no time left, and by the budget's alarm when a task is still running at the end
    of the budget (or, in a script, anything at the hard stop). A ``BaseException``, like
    ``KeyboardInterrupt``, so chapter code that handles ``Exception`` does not swallow it;
    ``chapter.start`` makes the run end with its ledger (``chapter.stopped``): the claims
    not reached are INCONCLUSIVE. ``where``: the sweep (or ``"chapter code"``);
    ``tasks``: ``(done, planned)`` of that sweep when known.

    Making one stops the budget's alarms (``disarm``): the run is ending, and an alarm
    still due (the hard stop after a task's deadline) would otherwise interrupt the code
    that writes its ledger."""

    def __init__(self, where: str, why: str, tasks: tuple[int, int] | None = None):
        disarm()
        super().__init__(f"budget spent in {where}: {why}")
        self.where, self.why, self.tasks = where, why, tasks


# the hard stop (scripts only): clock time at which any code is interrupted, or None
_HARD: list[float | None] = [None]
HARD_MARGIN = 0.8   # the hard stop: seconds + HARD_MARGIN * (BOUND - 1) * seconds


def _signals() -> bool:
    """Whether this process can use the alarm here (POSIX, main thread)."""
    return (hasattr(signal, "setitimer") and
            threading.current_thread() is threading.main_thread())


def _arm(at: float | None, where: str, why: str) -> None:
    """SIGALRM raising ``Spent(where, why)`` when the budget's clock reaches ``at``
    (``None``: disarm). The alarm runs on wall time; the budget's clock is ``perf_counter``
    unless a test fakes it (then the alarm is not used)."""
    if not _signals():
        return
    if at is None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return

    def on_alarm(signum, frame):
        raise Spent(where, why)       # making it stops every alarm (Spent.__init__)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(at - _CURRENT.clock(), 1e-4))


def _rearm_hard() -> None:
    if _HARD[0] is not None:
        _arm(_HARD[0], "chapter code",
             f"still running at the hard stop, {_HARD[0] - _CURRENT.t0:.4g} s after the start")
    else:
        _arm(None, "", "")


def _real_clock() -> bool:
    return _CURRENT.clock is time.perf_counter


@contextmanager
def deadline(where: str):
    """Run a task under the chapter's budget: raise ``Spent`` if no time is left, and
    interrupt the task (SIGALRM, main thread, POSIX) if it is still running when the
    budget's seconds are up. Without a budget (or with a fake clock) it does nothing.
    A task cut off stores nothing: what it computed is lost, and the sweep says how many
    of its tasks had finished."""
    b = _CURRENT
    if not b.active:
        yield
        return
    end = b.t0 + b.seconds
    if b.clock() >= end:
        raise Spent(where, f"no time left of {b.seconds:g} s")
    if not _real_clock():
        yield
        return
    _arm(end, where, f"a task was still running when the {b.seconds:g} s ran out")
    try:
        yield
    finally:
        _rearm_hard()


def arm_hard_stop() -> float | None:
    """In a script: interrupt any code (``Spent``) at ``seconds * (1 + HARD_MARGIN *
    (BOUND - 1))`` after the start, so the run ends with its ledger within ``BOUND *
    seconds`` even when work outside the sweeps overruns. Not used in a notebook kernel
    (an alarm between cells would hit the kernel, not the chapter). Returns the stop's
    clock time (``None``: no budget, or no alarm here)."""
    b = _CURRENT
    if not b.active or not _signals() or not _real_clock():
        return None
    _HARD[0] = b.t0 + b.seconds * (1 + HARD_MARGIN * (BOUND - 1))
    _rearm_hard()
    return _HARD[0]


def note_seconds(sweep_name: str, seconds: float) -> None:
    """Add the wall seconds a sweep spent computing tasks (``record()["sweep_seconds"]``:
    where a chapter's time goes, with or without a budget; cached tasks cost nothing)."""
    with _LOCK:
        _CURRENT.sweep_seconds[sweep_name] = _CURRENT.sweep_seconds.get(sweep_name, 0.0) + seconds


def note_stop(where: str, why: str, not_reached: Iterable[str]) -> None:
    """Record that the run ended early (``record()["stopped"]``): where the budget ran out,
    why, and the claim ids of the chapter's rules it did not reach."""
    with _LOCK:
        _CURRENT.stopped = {"where": where, "why": why, "not_reached": sorted(not_reached)}


def disarm() -> None:
    """Stop every alarm of the budget (``chapter.finish`` calls it before the ledger)."""
    _HARD[0] = None
    _arm(None, "", "")


def start(seconds: float | None, weights: Mapping[str, float] | Iterable[tuple[str, float]]
          | None = None, *, clock: Any = None, echo: bool | None = None) -> Budget:
    """Start the process-wide chapter budget now (``seconds=None``: no budget, every round
    of every sweep runs), with sweep shares ``weights`` (see the module docstring); forget
    the rounds of sweeps run before. ``clock``: a time source (default
    ``time.perf_counter``; tests pass a fake one). ``echo`` (default: when a budget is
    set) prints ``banner()``. Raises ``ValueError`` for seconds that are not positive and
    finite, or for negative shares."""
    global _CURRENT
    kw = {} if clock is None else {"clock": clock}
    b = Budget(_seconds(seconds), _weights(weights), startup=_process_age(), **kw)
    disarm()
    with _LOCK:
        _CURRENT = b
    if echo or (echo is None and b.active):
        print(b.banner(), flush=True)
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


def clock() -> float:
    """The budget's time source now (what the engine times tasks with)."""
    return _CURRENT.clock()


def note_rounds(sweep_name: str, done: int, planned: int,
                tasks: tuple[int, int] | None = None) -> None:
    """Record that a sweep completed ``done`` of its ``planned`` rounds and, optionally,
    ``tasks = (done, planned)`` tasks (the engine calls this; a sweep run twice under one
    name adds up)."""
    with _LOCK:
        _CURRENT.note(sweep_name, done, planned, tasks)


def record() -> dict:
    """What the ledger stores under ``"budget"``::

        {"seconds": 60.0 | None, "spent": 58.3, "overrun": 0.0 | None,
         "bound": 75.0 | None, "held": True | None, "startup": 4.1 | None,
         "complete": False, "covered": 0.42,
         "rounds": {sweep: [done, planned]}, "tasks": {sweep: [done, planned]}}

    ``spent``: wall seconds since ``start`` (the chapter's whole work: sweeps, fits, figures,
    claims up to the moment the ledger is written); ``overrun``: ``max(0, spent - seconds)``;
    ``held``: ``spent <= bound = 1.25 * seconds``; ``startup``: seconds the process ran before
    the budget started (not covered by it); ``complete``: every sweep ran every planned
    round; ``covered``: tasks in the sweeps' tables over tasks planned (1.0 with no sweeps)."""
    with _LOCK:
        return _CURRENT.record()


def banner() -> str:
    """The first line of a budgeted run: the budget, its bound and the start-up before it."""
    return _CURRENT.banner()


def summary() -> str:
    """The last line of a run: budget, time spent and overrun, what it covered (tasks done
    of those planned, the sweeps short of rounds with done/planned)."""
    return _CURRENT.summary()


def coverage(df_or_attrs: Any) -> str:
    """What a sweep's table holds, in words for an INCONCLUSIVE claim: ``"had 12 of 64
    tasks, 0 of 8 rounds"`` (from ``df.attrs`` of ``sweep(..., rounds=...)``)."""
    attrs = getattr(df_or_attrs, "attrs", df_or_attrs) or {}
    t, r = attrs.get("tasks"), attrs.get("rounds")
    parts = []
    if t:
        parts.append(f"had {t[0]} of {t[1]} tasks")
    if r:
        parts.append(f"{r[0]} of {r[1]} rounds")
    return ", ".join(parts) or "no record of rounds"


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
    tasks = attrs.get("tasks") if attrs is not None else None
    had = f"; had {tasks[0]} of {tasks[1]} tasks" if tasks else ""
    return False, f"{done} of {need} rounds needed ({why}{had})"


# --------------------------------------------------------------------------- time record
ENV_TIMES = "DLTHEORY_TIMES"


def times_path(root: Any = None) -> Any:
    """The one record of measured build and chapter times: ``$DLTHEORY_TIMES``, else
    ``<root>/book/records/times.json``. The pages that show the record pass ``root``
    (``runtime.repo_root()``); without it, the checkout holding the working directory
    (the scripts that write times run at the repository root): the package never looks
    for the record through its own location, and an installed copy has no ``book/``."""
    from pathlib import Path

    env = validation.env(ENV_TIMES)
    if env:
        return Path(env)
    if root is None:
        here = Path.cwd().resolve()
        root = next((p for p in (here, *here.parents)
                     if (p / "_config.yml").is_file() and (p / "book").is_dir()), None)
        if root is None:
            raise ValueError(f"no record of times: {here} is not inside a checkout of the "
                             f"book; set ${ENV_TIMES} to the record's path")
    return Path(root) / "book" / "records" / "times.json"


def times(path: Any = None) -> dict:
    """The measured times: ``{key: {"seconds": float, "when": "2026-12-02T19:50:00Z",
    "load": [1, 5, 15 min], "cores": int, ...facts}}`` with keys such as
    ``"test.sh/unit tests"``, ``"gpu_check/paper/budget 60/cpu/03_sparse_scaling"`` (``{}``
    when nothing was recorded). The README, the intro and the notebooks quote from here.
    A record that cannot be read (cut, not JSON, nested too deep, too large, not an
    object) is ``{}`` with one warning line naming it, so a writer rebuilds it rather than
    fail a build (``records.read``)."""
    import sys
    from pathlib import Path

    from . import records

    p = Path(path) if path is not None else times_path()
    data, why = records.read(p)
    if why is None and not isinstance(data, dict):
        why = f"not a JSON object ({type(data).__name__})"
    if why is not None and why != "missing":
        print(f"[warning] the record of times {p} is {why}: starting it again", file=sys.stderr,
              flush=True)
    return data if why is None else {}


def write_times(entries: Mapping[str, Any], path: Any = None) -> None:
    """Add or replace entries of the time record (``key -> seconds`` or ``key -> {"seconds":
    ..., **facts}``), each stamped with the time, the load average and the cores; written
    atomically (a temporary file, then ``os.replace``) under a lock file beside it."""
    from pathlib import Path

    p = Path(path) if path is not None else times_path()
    p.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock

    with FileLock(str(p) + ".lock"):   # two writers at once (the build, the paper step)
        _write_times_locked(p, entries)


def _write_times_locked(p: Any, entries: Mapping[str, Any]) -> None:
    import json
    import os
    import tempfile

    data = times(p)
    stamp = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "load": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
             "cores": os.cpu_count()}
    for key, value in entries.items():
        facts = dict(value) if isinstance(value, Mapping) else {"seconds": value}
        data[str(key)] = {**facts, **stamp}
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(dict(sorted(data.items())), indent=2) + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, p)
