"""The claims ledger: every chapter states the paper's claims as checks with stable ids.

A chapter records its claims like this::

    ledger = claims.Ledger("sparse_scaling", scale=SCALE, identity=provenance.run_identity(cfg,
                           "sparse_scaling"), echo=True, rules=sparse_scaling.rules)
    ledger.check("SS.alpha_N", "model-limited exponent equals alpha1 + alpha2 + 1",
                 measured=fit.slope, predicted=2.0, tol=cfg.tol_alpha_N)
    ledger.check("CL.neg.rope_full_qk", "the control must fail", measured=cos_max, lo=1e-3)
    ledger.check("PF.energy", "E_PT + E_FT = E (bookkeeping)", gap, predicted=0.0, tol=1e-12,
                 kind="identity")
    ledger.check("DE.routeB", "route B slope", fit.slope, -1.0, tol=cfg.tol_routeB,
                 rounds=(done, cfg.rounds_needed))     # budgeted sweep: INCONCLUSIVE if short
    ledger.check("PF.best_lambda.sim_agrees", "sim does not contradict the theory", z, lo=-2,
                 hi=2, detects=(abs(z_effect) > 3, f"oracle lambda {z_effect:.1f} se from 0"))
    ledger.guard("PF.split.disjoint", "selection and held-out index sets are disjoint",
                 not set(sel) & set(held), f"{len(set(sel) & set(held))} shared")
    ledger.inconclusive("DE.joint", "joint scaling", kind="hard", note="unpowered below 8 seeds")
    ledger.skip(["DE.a", "DE.b"], "the budget left this sweep out")
    ledger.report()   # shows the table, writes JSON, raises ClaimFailed (see "Rules")

Kinds: one rule for the book
----------------------------
A claim is **evidence** (``hard`` or ``soft``) only if it could fail on correct code if
the paper were wrong about the networks and data the chapter runs. Everything else is
shown but never counted as evidence:

- ``hard``: evidence; out of tolerance is ``FAIL`` and ``report()`` raises (CI fails);
- ``soft``: evidence the paper states but this book may not reproduce: out of tolerance
  is ``NOT REPRODUCED``;
- ``identity``: a check of the book's own code or design that holds by construction when
  the code is right: calculus on the book's code (a gradient against its loss's finite
  difference, a discretisation order), a proved bound, a bookkeeping sum, a fallback
  rule, a design guard (``guard``);
- ``derivation``: the book's theory against itself: an exact sum against its asymptotic
  form, or a formula against a Monte Carlo of its own model.

A failing identity or derivation is a bug, so it is ``FAIL`` and raises.

Rules
-----
A chapter's ``rules`` module (``Ledger(rules=...)``; every attribute optional) fixes before
the run what the data may not change:

1. ``KINDS: dict[id, kind]``: each claim's kind. Recording a claim with another kind
   raises ``ValueError``; a hard claim outside its regime is a hard INCONCLUSIVE with its
   reason (``inconclusive(..., kind="hard")``), never relabelled soft. A claim absent from
   ``KINDS`` is allowed while chapters migrate; ``undeclared()`` lists them.
2. ``DECIDES: dict[scale, tuple[id, ...]]``: pre-registered decidability, from the
   chapter's calibration record: the hard claims this scale decides at the defaults. At
   the defaults (``identity["defaults"]`` true, no ``identity["mutation"]``, no
   ``identity["budget"]``) a listed claim that comes out INCONCLUSIVE, or is never
   recorded, makes ``report()`` raise ``Undecided`` (a ``ClaimFailed``) naming it and its
   note: a gate that closes where it should be open (an inverted comparison, a
   self-contradictory reachability count) fails the run. Off the defaults, mutated or
   under a budget it is only reported.
3. ``MAX_RESOLUTION: dict[id, (max, why)]``: power is part of the verdict. A hard claim
   that would PASS with a resolution above its maximum (``MAX_RESOLUTION``, 20%, unless
   its rules say why not) is ``WEAK``, and ``report()`` raises: a band widened by an sd
   used for an se passes nothing silently. Soft claims keep rule (d) below.
4. Absence of contradiction. A rule that a loss of power can only make pass ("the
   simulation does not contradict the theory", "no knob moves it the wrong way") must also
   show that the effect it expects is detected in the same run:
   ``check(..., detects=(detected, why))``. When ``detected`` is false a would-be PASS is
   INCONCLUSIVE ("expected effect not detected: why"), which rule 2 turns into a failure
   at the defaults; a contradiction is still FAIL / NOT REPRODUCED.
5. Design guards: ``guard(id, statement, ok, detail)`` records an ``identity`` saying the
   experiment is what its statement says (disjoint index sets for selection and held-out
   halves, SGD batches that differ from full-batch GD, a window where the statement puts
   it, an oracle grid that beats the ridgeless fit, a batched implementation equal to the
   loop, intervals ordered lo <= mean <= hi). A guard that does not hold is ``FAIL``.

An evidence claim is ``INCONCLUSIVE`` when (a) the chapter says so before the run, with a
reason (``ledger.inconclusive`` or ``ledger.skip``), (b) it had fewer rounds than it needs
(``check(..., rounds=(done, needed))``, budgeted runs), (c) its measurement is non-finite
(soft only; a hard one FAILs), (d) it is soft and would PASS with a resolution above 100%:
such a check cannot detect an error of the prediction's own size, or (e) it would pass
without detecting the effect it expects (rule 4).

Resolution
----------
An evidence claim compared with a theory value ``predicted`` gets a ``resolution``: the
smallest relative error in the prediction that the check is guaranteed to detect. With
tolerance half-width ``w`` and measurement ``m``, a prediction ``p(1 +/- e)`` fails the
check for every sign once ``|p| e > w + |m - p|``, so ``resolution = (w + |m - p|) / |p|``.
A one-sided check with a prediction resolves nothing (``inf``); an interval without a
prediction has no resolution (a bound: rule 3 does not apply). Tables mark a resolution
above ``WEAK_RESOLUTION`` (25%) as weak.

A check is one of: ``predicted`` with ``tol`` (absolute) and/or ``rtol`` (relative), a
closed interval ``lo``/``hi`` (either end optional; ``predicted`` may accompany it), or
both. Measurements must be finite unless ``allow_nonfinite=True``. Tolerances must be
finite. Nothing here ever writes a measured value: the chapter passes what it measured.

The verdict rule is one pure function, ``judge(kind, measured, Check)``; each claim stores
its ``Check`` in the JSON (schema 4: with ``max_resolution``, ``detected``/``detection``
and ``guard``), so the reproduction page (``dltheory.ledgers``) re-derives every written
verdict and names a ledger whose verdicts do not follow. A schema-3 check has no
``max_resolution`` and re-derives as it was judged then (``READABLE_SCHEMAS``).

Findings in the prose
---------------------
``ledger.findings(ids, paper=...)`` is Markdown saying what this build found for those
claims (reproduced / not reproduced / inconclusive with its reason / too weak / failed,
measured against predicted), generated from the verdicts; ``ledger.glue(key, ids)`` glues
it (``myst_nb.glue``, type Markdown) so a takeaway near the top of a chapter pastes it with
the ``{glue:md}`` role naming ``key``, although the claims are recorded further down. This works because
MyST-NB 1.x collects every glued output of the executed notebook before it parses the page
(``NotebookClientBase.__enter__`` -> ``extract_glue_data``): the book's execution modes
``cache``, ``force`` and ``off`` resolve a key glued later in the same notebook. The
``inline`` mode collects glue cell by cell and would not; a notebook run as plain Jupyter
shows the literal role. So a chapter puts the paper's claim in prose, the generated
findings with ``{glue:md}`` under it, and also shows ``ledger.findings(...)`` once after
its checks (what Jupyter and Colab readers see).
"""

from __future__ import annotations

import contextlib
import html
import json
import math
import numbers
import os
import re
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, NamedTuple

from . import BOOK_URL, runtime, validation

PASS, FAIL, WEAK, NOT_REPRODUCED, INCONCLUSIVE = (
    "PASS", "FAIL", "WEAK", "NOT REPRODUCED", "INCONCLUSIVE")
VERDICTS = (PASS, FAIL, WEAK, NOT_REPRODUCED, INCONCLUSIVE)
KINDS = ("hard", "soft", "identity", "derivation")
EVIDENCE = ("hard", "soft")
MAX_RESOLUTION = 0.20    # a hard claim resolving worse than this is WEAK (rules may say why not)
WEAK_RESOLUTION = 0.25   # shown as "(weak)" in tables (soft claims, and hard ones allowed more)
BLIND_RESOLUTION = 1.0   # a soft PASS resolving worse than this is INCONCLUSIVE
SCHEMA = 4   # ledger JSON layout (3: check per claim, budget; 4: + power, detection, guard
#              fields in each check, the run identity and the pre-registered decidable ids)
READABLE_SCHEMAS = (3, 4)   # schemas whose verdicts ``judge`` re-derives (3: no power rule)

__all__ = ["Check", "Claim", "ClaimFailed", "Undecided", "Judgement", "Ledger", "KINDS",
           "VERDICTS", "EVIDENCE", "MAX_RESOLUTION", "WEAK_RESOLUTION", "BLIND_RESOLUTION",
           "SCHEMA", "READABLE_SCHEMAS", "judge", "is_weak", "resolution", "style_table",
           "text_table", "kind_counts", "atomic_write_text", "Html", "html_join"]


class ClaimFailed(AssertionError):
    """Raised by ``Ledger.report`` when a hard claim, an identity, a derivation or a guard
    FAILed, or a hard claim is WEAK (its check resolves worse than its declared maximum)."""


class Undecided(ClaimFailed):
    """Raised by ``Ledger.report`` at the defaults when a hard claim the chapter's rules
    pre-register as decidable at this scale (``rules.DECIDES``) came out INCONCLUSIVE or was
    never recorded (and nothing FAILed or was WEAK: then ``ClaimFailed`` names all)."""


@dataclass(frozen=True)
class Check:
    """What a verdict is derived from, stored with each claim (JSON ``"check"``).

    ``predicted`` with ``tol``/``rtol``, and/or an interval ``lo``/``hi``; ``rounds``
    ``(done, needed)`` for a budgeted sweep; ``reason`` for a claim declared INCONCLUSIVE
    before the run (then no tolerance is needed). ``max_resolution``: the largest
    resolution a hard claim may have and still PASS (else ``WEAK``; ``None``: no power rule,
    as in schema-3 ledgers). ``detected``/``detection``: for a rule that can only pass under
    a loss of power, whether the expected effect was detected and how (``False``: a would-be
    PASS is INCONCLUSIVE). ``guard``: a design guard (``Ledger.guard``), measured 1 if it
    holds and 0 if not.
    """

    predicted: float | None = None
    tol: float | None = None
    rtol: float | None = None
    lo: float | None = None
    hi: float | None = None
    rounds: tuple[int, int] | None = None
    reason: str | None = None
    max_resolution: float | None = None
    detected: bool | None = None
    detection: str | None = None
    guard: bool = False

    @classmethod
    def from_dict(cls, d: Any) -> Check:
        """The ``Check`` a JSON claim stores (schema 3 or 4); ``TypeError`` on anything
        else."""
        if not isinstance(d, dict):
            raise TypeError(f"check parameters must be an object, got {type(d).__name__}")
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown check parameters {sorted(unknown)}")
        nums = {k: _as_number(d.get(k), k)
                for k in ("predicted", "tol", "rtol", "lo", "hi", "max_resolution")}
        rounds = d.get("rounds")
        for flag in ("detected", "guard"):
            if d.get(flag) is not None and not isinstance(d.get(flag), bool):
                raise TypeError(f"{flag} must be true, false or null, got {d.get(flag)!r}")
        return cls(**nums, rounds=tuple(rounds) if isinstance(rounds, list) else rounds,
                   reason=d.get("reason"), detected=d.get("detected"),
                   detection=d.get("detection"), guard=bool(d.get("guard", False)))

    def __post_init__(self):
        for name in ("predicted", "tol", "rtol", "lo", "hi", "max_resolution"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v)):
                raise ValueError(f"{name} must be finite, got {v!r}")
        if (self.tol or 0) < 0 or (self.rtol or 0) < 0:
            raise ValueError(f"tol and rtol must be >= 0, got tol={self.tol}, "
                             f"rtol={self.rtol}")
        if self.max_resolution is not None and self.max_resolution <= 0:
            raise ValueError(f"max_resolution must be > 0, got {self.max_resolution}")
        if self.lo is not None and self.hi is not None and self.lo > self.hi:
            raise ValueError(f"empty interval lo={self.lo} > hi={self.hi}")
        if (self.tol is not None or self.rtol is not None) and self.predicted is None:
            raise ValueError("tol/rtol need a predicted value")
        r = self.rounds
        if r is not None and (not isinstance(r, tuple) or len(r) != 2
                              or any(isinstance(x, bool) or not isinstance(x, int) for x in r)
                              or r[0] < 0 or r[1] < 1):
            raise ValueError(f"rounds must be (done >= 0, needed >= 1), got {r!r}")
        if self.reason is not None and (not isinstance(self.reason, str)
                                        or not self.reason.strip()):
            raise ValueError(f"an inconclusive claim needs a reason, got {self.reason!r}")
        if self.detected is not None and (
                not isinstance(self.detected, bool) or not isinstance(self.detection, str)
                or not self.detection.strip()):
            raise ValueError(f"detects must be (bool, why) with a non-empty why, got "
                             f"({self.detected!r}, {self.detection!r})")

    @property
    def short(self) -> bool:
        """Fewer rounds done than needed."""
        return self.rounds is not None and self.rounds[0] < self.rounds[1]


class Judgement(NamedTuple):
    """What ``judge`` derives: the verdict, the tolerance text, the resolution, notes the
    rule adds (non-finite, rounds, resolution), and whether the measurement met the
    tolerance (``None`` when it was not compared)."""

    verdict: str
    tolerance: str
    resolution: float | None
    notes: tuple[str, ...]
    within: bool | None


def judge(kind: str, measured: float | None, check: Check) -> Judgement:
    """The verdict rule (pure): ``Ledger.check``, ``Ledger.inconclusive`` and the
    reproduction page's re-derivation all call it. Raises ``ValueError`` for an unknown
    kind or an invalid check (naming the parameter)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    c = check
    tolerance, width = _tolerance(c)
    if (c.reason is not None or c.rounds is not None) and kind not in EVIDENCE:
        raise ValueError(f"only evidence claims (hard, soft) can be inconclusive or "
                         f"budgeted; a {kind} holds or fails")
    if c.detected is not None and kind not in EVIDENCE:
        raise ValueError(f"only evidence claims (hard, soft) take detects=; a {kind} holds "
                         f"or fails")
    if c.guard and kind != "identity":
        raise ValueError(f"a guard is an identity, not a {kind}")
    if c.reason is not None:
        return Judgement(INCONCLUSIVE, tolerance, None, (), None)
    if c.predicted is not None and width is None and c.lo is None and c.hi is None:
        raise ValueError("a predicted value needs tol or rtol (or lo/hi)")
    if c.predicted is None and c.lo is None and c.hi is None:
        raise ValueError("give predicted+tol/rtol or an interval lo/hi")
    if c.short:
        return Judgement(INCONCLUSIVE, tolerance, None,
                         (f"had {c.rounds[0]} of {c.rounds[1]} rounds",), None)
    if measured is None:
        raise ValueError("no measured value (only an inconclusive claim may lack one)")
    if not math.isfinite(measured):
        return Judgement(INCONCLUSIVE if kind == "soft" else FAIL, tolerance, None,
                         ("non-finite measurement",), None)
    ok = True
    if c.tol is not None or c.rtol is not None:
        ok &= abs(measured - c.predicted) <= width
    if c.lo is not None:
        ok &= measured >= c.lo
    if c.hi is not None:
        ok &= measured <= c.hi
    ok = bool(ok)
    verdict = PASS if ok else (NOT_REPRODUCED if kind == "soft" else FAIL)
    res = resolution(measured, c.predicted, width) if kind in EVIDENCE else None
    if ok and c.detected is False:   # absence of contradiction without the effect: no test
        return Judgement(INCONCLUSIVE, tolerance, res,
                         (f"expected effect not detected: {c.detection}",), True)
    if kind == "soft" and ok and res is not None and res > BLIND_RESOLUTION:
        shown = _pct(res) if math.isfinite(res) else "unbounded (one-sided check)"
        return Judgement(INCONCLUSIVE, tolerance, res, (
            f"resolution {shown} > {_pct(BLIND_RESOLUTION)}: cannot detect an error of the "
            f"prediction's own size",), True)
    if (kind == "hard" and ok and c.max_resolution is not None and res is not None
            and res > c.max_resolution):
        shown = _pct(res) if math.isfinite(res) else "unbounded (one-sided check)"
        return Judgement(WEAK, tolerance, res, (
            f"resolution {shown} > max {_pct(c.max_resolution)}: would pass with the "
            f"prediction off by {shown}",), True)
    return Judgement(verdict, tolerance, res, (), ok)


def _tolerance(c: Check) -> tuple[str, float | None]:
    """The tolerance as text, and its half-width around ``predicted`` (``None`` without
    a prediction; for an interval, its half-width on the far side)."""
    parts, width = [], None
    if c.guard:
        return "holds", None
    if c.tol is not None or c.rtol is not None:
        width = max(c.tol or 0.0, (c.rtol or 0.0) * abs(c.predicted))
        parts.append(f"|m - {_fmt(c.predicted)}| <= {_fmt(width)}")
    elif c.predicted is not None and (c.lo is not None or c.hi is not None):
        width = max(c.predicted - c.lo if c.lo is not None else math.inf,
                    c.hi - c.predicted if c.hi is not None else math.inf)
    if c.lo is not None and c.hi is not None:
        parts.append(f"in [{_fmt(c.lo)}, {_fmt(c.hi)}]")
    elif c.lo is not None:
        parts.append(f">= {_fmt(c.lo)}")
    elif c.hi is not None:
        parts.append(f"<= {_fmt(c.hi)}")
    return " and ".join(parts), width


def is_weak(kind: str, verdict: str, res: float | None) -> bool:
    """An evidence verdict (not INCONCLUSIVE) whose check cannot detect a 25% error in its
    prediction; the one definition used by claims, summaries and the reproduction page."""
    return (kind in EVIDENCE and verdict != INCONCLUSIVE and res is not None
            and res > WEAK_RESOLUTION)


@dataclass(frozen=True, repr=False)
class Claim:
    """One checked claim. Its repr is the one-line verdict a chapter shows after a check."""

    id: str
    statement: str
    kind: str
    measured: Any
    predicted: Any
    tolerance: str
    verdict: str
    note: str = ""
    resolution: float | None = None
    check: Check | None = None

    @property
    def ok(self) -> bool:
        """Not a failure: neither FAIL nor WEAK."""
        return self.verdict not in (FAIL, WEAK)

    @property
    def weak(self) -> bool:
        """An evidence claim whose check cannot detect a 25% error in its prediction."""
        return is_weak(self.kind, self.verdict, self.resolution)

    @property
    def reason(self) -> str:
        """Why the verdict is not a plain PASS, in a few words ("" for a PASS): the reason
        an INCONCLUSIVE claim was not decided, the resolution of a WEAK one, the requirement
        a FAIL or NOT REPRODUCED missed."""
        return _reason(self.kind, self.verdict, self.measured, self.tolerance, self.note,
                       self.check)

    def __repr__(self) -> str:
        """``id [kind]: VERDICT (measured m, required t, resolves r)``, and for a claim that
        is not a PASS its short reason after a dash; one line."""
        c = self.check
        if c is not None and c.guard:
            body = f"holds{'' if self.verdict == PASS else ' NOT'}"
            line = f"{self.id} [{self.kind}]: {self.verdict} ({body}" + \
                (f": {self.note})" if self.note else ")")
            return _one_line(line)
        parts = ["not measured" if self.measured is None else f"measured {_show(self.measured)}"]
        if self.tolerance and self.verdict != INCONCLUSIVE:
            parts.append(f"required {self.tolerance}")
        if self.resolution is not None and self.verdict != INCONCLUSIVE:
            cap = c.max_resolution if c is not None and self.verdict == WEAK else None
            parts.append(f"resolves {_pct(self.resolution)}"
                         + (f" > max {_pct(cap)}" if cap is not None else ""))
        line = f"{self.id} [{self.kind}]: {self.verdict} ({', '.join(parts)})"
        why = self.reason if self.verdict == INCONCLUSIVE else ""
        return _one_line(line + (f" - {why}" if why else ""))

    def _repr_html_(self) -> str:
        """The verdict line of ``repr`` as one line of HTML (what a notebook and the book
        show after a check): the id links to its row on the reproduction page
        (``reproduction_link``), the verdict in its table colour; the rest escaped."""
        text = repr(self)
        head = f"{self.id} [{self.kind}]: {self.verdict}"
        if not text.startswith(head):   # cut by _one_line: show it escaped, unlinked
            return f'<div class="dltheory-verdict">{html.escape(text)}</div>'
        link = html.escape(reproduction_link(self.id), quote=True)
        return ('<div class="dltheory-verdict" style="font-family: var(--pst-font-family-'
                'monospace, monospace); font-size: 0.85em; line-height: 1.4">'
                f'<a href="{link}" title="this claim on the reproduction page">'
                f'{html.escape(self.id)}</a> [{html.escape(self.kind)}]: '
                f'<span style="{VERDICT_STYLE.get(self.verdict, "")}">'
                f'{html.escape(self.verdict)}</span>{html.escape(text[len(head):])}</div>')


def reproduction_link(cid: str) -> str:
    """Where claim ``cid``'s row is on the reproduction page (``ledgers.anchor_claims``
    gives each row the id as its anchor): relative in the book build
    (``$DLTHEORY_STATIC``, chapter pages sit beside ``reproduction.html``), else the
    published book (Jupyter, Colab, scripts)."""
    base = "" if validation.env(runtime.ENV_STATIC, False) else f"{BOOK_URL}book/"
    return f"{base}reproduction.html#{cid}"


def _echo(claim: Claim) -> None:
    """Show a claim's verdict line as it is recorded: in a notebook as a display whose
    HTML links the id (text/plain is the same line), elsewhere printed."""
    if runtime.in_notebook():
        from IPython.display import display

        display(claim)
    else:
        print(repr(claim))


GLUE_PREFIX = "application/papermill.record/"   # myst_nb.ext.glue.GLUE_PREFIX (Ledger.glue)
REASON_CHARS = 160   # the reason shown in a verdict line; the full note is in the table


def _one_line(text: str, limit: int = 100 + REASON_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _reason(kind, verdict, measured, tolerance, note, check) -> str:
    """The short reason behind a verdict that is not a PASS (see ``Claim.reason``)."""
    if verdict == PASS:
        return ""
    if verdict == INCONCLUSIVE:
        if check is not None and check.reason:
            return check.reason
        if check is not None:
            try:
                notes = judge(kind, measured, check).notes
            except ValueError:
                notes = ()
            if notes:
                return "; ".join(notes)
        return note or "undecided"
    if verdict == WEAK and check is not None and check.max_resolution is not None:
        return f"resolution above its max {_pct(check.max_resolution)}"
    if check is not None and check.guard:
        return f"does not hold: {note}" if note else "does not hold"
    shown = "not measured" if measured is None else f"measured {_show(measured)}"
    return f"{shown}, required {tolerance}" if tolerance else shown


def _as_number(x: Any, name: str) -> float | None:
    if x is None:
        return None
    if hasattr(x, "item") and getattr(x, "ndim", 0) == 0:  # numpy / torch scalars
        x = x.item()
    if isinstance(x, bool):
        return float(x)
    try:
        return float(x)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a real scalar, got {type(x).__name__}: {x!r}") from err


def _fmt(x: float | None) -> str:
    if x is None:
        return ""
    if x == 0 or (1e-3 <= abs(x) < 1e4):
        return f"{x:.4g}"
    return f"{x:.3e}"


def _pct(r: float | None) -> str:
    if r is None:
        return ""
    if not math.isfinite(r):
        return "none"
    if r < 1e-3:   # exact checks (counts, identities to rounding): any error is detected
        return "<0.1%"
    return f"{100 * r:.2g}%" if r < 0.1 else f"{100 * r:.0f}%"


def resolution(measured: float, predicted: float | None, width: float | None) -> float | None:
    """``(width + |measured - predicted|) / |predicted|``; ``None`` without a nonzero
    prediction or a finite measurement, ``inf`` for a one-sided (unbounded) check."""
    if predicted is None or predicted == 0 or width is None or not math.isfinite(measured):
        return None
    return (width + abs(measured - predicted)) / abs(predicted)


class Ledger:
    """Collects a chapter's claims; ``report()`` shows them, writes JSON and enforces them.

    Parameters
    ----------
    chapter : short chapter name, used in the JSON file name ``<chapter>.<scale>.json``.
    scale : the scale the chapter ran at (validated by ``runtime.scale``).
    device : what the chapter ran on (string), recorded in the JSON.
    identity : the run identity (``provenance.run_identity``: scale, knobs, seed,
        ``defaults``, ``mutation``, ``budget``, code digests), written under ``"identity"``;
        it says whether the run is at the defaults, where rule 3 (decidability) applies.
    echo : print ``repr(claim)`` (one line) as each claim is recorded.
    rules : the chapter's rules module (or any object) with optional ``KINDS``,
        ``DECIDES`` and ``MAX_RESOLUTION`` (see the module docstring); ``None``: every
        kind allowed, nothing pre-registered, every hard claim's maximum resolution 20%.
    results_dir : where the JSON goes (default ``runtime.results_dir()``); it is created and
        checked for writing here, so a bad directory fails before the chapter runs.
    """

    def __init__(self, chapter: str, scale: str, *, device: Any = "cpu",
                 identity: dict | None = None, echo: bool = False, rules: Any = None,
                 results_dir: str | Path | None = None):
        if not chapter or not chapter.replace("_", "").isalnum():
            raise ValueError(f"chapter must be a plain identifier, got {chapter!r}")
        if identity is not None and not isinstance(identity, dict):
            raise TypeError(f"identity must be a dict, got {type(identity).__name__}")
        self.chapter = chapter
        self.scale = runtime.scale(scale)
        self.device = str(device)
        self.identity = identity
        self.echo = bool(echo)
        self.kinds, self.decides, self.max_resolution = _read_rules(rules, self.scale)
        self.results_dir = Path(results_dir) if results_dir is not None else None
        self.claims: dict[str, Claim] = {}
        _check_writable(self.path().parent)

    # ------------------------------------------------------------------ recording
    def check(
        self,
        id: str,
        statement: str,
        measured: Any,
        predicted: Any = None,
        *,
        tol: float | None = None,
        rtol: float | None = None,
        lo: float | None = None,
        hi: float | None = None,
        kind: str = "hard",
        note: str = "",
        allow_nonfinite: bool = False,
        rounds: tuple[int, int] | None = None,
        detects: tuple[bool, str] | None = None,
    ) -> Claim:
        """Record one claim and return it with its verdict (it never raises on a miss).

        ``rounds=(done, needed)``: a budgeted sweep finished ``done`` of the ``needed``
        rounds; when ``done < needed`` the claim is INCONCLUSIVE whatever was measured
        (``measured`` may then be ``None`` or non-finite).

        ``detects=(detected, why)``: for a rule that a loss of power can only make pass
        (absence of contradiction), whether the effect the rule expects was detected in this
        run and how (``why``, e.g. "the oracle lambda differs from 0 by 6 se"); when it was
        not, a would-be PASS is INCONCLUSIVE (see the module docstring)."""
        if detects is not None:
            if not (isinstance(detects, tuple) and len(detects) == 2):
                raise ValueError(f"claim {id!r}: detects must be (bool, why), got {detects!r}")
            detected, why = detects
            if type(detected).__name__ not in ("bool", "bool_"):
                raise ValueError(f"claim {id!r}: detects[0] must be a bool, got {detected!r}")
            detects = (bool(detected), why)
        return self._record(id, statement, kind, measured, note, allow_nonfinite,
                            predicted=predicted, tol=tol, rtol=rtol, lo=lo, hi=hi,
                            rounds=None if rounds is None else tuple(
                                int(x) if isinstance(x, numbers.Integral)
                                and not isinstance(x, bool) else x for x in rounds),
                            detected=None if detects is None else detects[0],
                            detection=None if detects is None else detects[1])

    def inconclusive(self, id: str, statement: str, measured: Any = None, *, note: str,
                     predicted: Any = None, kind: str = "soft") -> Claim:
        """Record an evidence claim (``kind`` hard or soft) as INCONCLUSIVE for a reason
        stated before the run (``note``: what this scale cannot resolve). Never raises on
        the measurement; the reason is shown and stored."""
        return self._record(id, statement, kind, measured, "", True, predicted=predicted,
                            reason=note)

    def skip(self, ids: Any, why: str, *, kind: str | None = None) -> list[Claim]:
        """Record each of ``ids`` INCONCLUSIVE with the reason ``why`` (e.g. a sweep the
        budget left out). ``ids``: claim ids, or ``(id, statement)`` pairs; ``kind``: the
        kind of every one (default: each id's declared kind in ``rules.KINDS``, else
        ``"hard"``). Returns the claims recorded."""
        if isinstance(ids, str):
            ids = [ids]
        out = []
        for item in ids:
            cid, statement = (item, f"{item}: not measured in this run") \
                if isinstance(item, str) else item
            out.append(self.inconclusive(cid, statement, note=why,
                                         kind=kind or self.kinds.get(cid, "hard")))
        return out

    def guard(self, id: str, statement: str, ok: Any, detail: str = "") -> Claim:
        """Record a design guard: an ``identity`` that says the experiment is what its
        statement says (index sets disjoint, SGD batches differ from GD, a window where the
        statement puts it, an oracle grid that beats the ridgeless fit, batched == loop,
        lo <= mean <= hi). ``ok`` is whether it holds, ``detail`` what was compared (shown,
        stored). A guard that does not hold is FAIL, and ``report()`` raises."""
        if type(ok).__name__ not in ("bool", "bool_"):
            raise ValueError(f"guard {id!r}: ok must be a bool, got {type(ok).__name__}")
        return self._record(id, statement, "identity", 1.0 if ok else 0.0, str(detail),
                            False, lo=1.0, guard=True)

    def _record(self, id: str, statement: str, kind: str, measured: Any, note: str,
                allow_nonfinite: bool, **check: Any) -> Claim:
        if id in self.claims:
            raise ValueError(f"claim id {id!r} recorded twice in ledger {self.chapter!r}")
        declared = self.kinds.get(id)
        if declared is not None and kind != declared:
            raise ValueError(f"claim {id!r} is declared {declared!r} in the chapter's rules "
                             f"(KINDS) but recorded as {kind!r}: a claim's kind is fixed "
                             f"before the run")
        if kind == "hard":
            check["max_resolution"] = self.max_resolution.get(id, (MAX_RESOLUTION, ""))[0]
        m = _as_number(measured, "measured")
        nums = {k: _as_number(v, k) for k, v in check.items()
                if k not in ("rounds", "reason", "detected", "detection", "guard")}
        try:
            c = Check(**{**check, **nums})
            if (m is not None and not math.isfinite(m) and not allow_nonfinite
                    and not (c.short and kind in EVIDENCE)):
                raise ValueError(f"measured value is {m}; pass allow_nonfinite=True if a "
                                 f"non-finite measurement is a legitimate outcome")
            j = judge(kind, m, c)
        except ValueError as err:
            raise ValueError(f"claim {id!r}: {err}") from None
        note = "; ".join(n for n in (note, c.reason or "", *j.notes) if n)
        claim = Claim(id, statement, kind, m, c.predicted, j.tolerance, j.verdict, note,
                      j.resolution, c)
        self.claims[id] = claim
        if self.echo:
            _echo(claim)
        return claim

    # ------------------------------------------------------------------ rules
    @property
    def at_defaults(self) -> bool:
        """The run is at the chapter's defaults: its identity says ``defaults`` and has no
        mutation and no budget in force (rule 3 applies only here)."""
        i = self.identity or {}
        return bool(i.get("defaults")) and i.get("mutation") is None \
            and i.get("budget") is None

    def undeclared(self) -> list[str]:
        """Recorded claim ids the rules' ``KINDS`` does not declare (all of them when the
        chapter has no ``KINDS``): allowed while chapters migrate, listed so none is
        forgotten."""
        return [cid for cid in self.claims if cid not in self.kinds]

    def undecided(self) -> list[tuple[str, str]]:
        """``(id, why)`` for each claim pre-registered as decidable at this scale
        (``rules.DECIDES[scale]``) that came out INCONCLUSIVE or was never recorded
        (whatever the run's identity; ``report()`` raises on them only at the defaults)."""
        out = []
        for cid in self.decides:
            c = self.claims.get(cid)
            if c is None:
                out.append((cid, "never recorded"))
            elif c.verdict == INCONCLUSIVE:
                out.append((cid, c.note or c.reason or "INCONCLUSIVE"))
        return out

    # ------------------------------------------------------------------ output
    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims.values() if c.verdict == FAIL]

    @property
    def weak_claims(self) -> list[Claim]:
        """Hard claims whose verdict is WEAK (resolution above their maximum)."""
        return [c for c in self.claims.values() if c.verdict == WEAK]

    def table(self):
        """The claims as a pandas DataFrame (one row per claim, in the order checked)."""
        return _claims_frame([asdict(c) for c in self.claims.values()])

    def summary(self) -> str:
        """One line: evidence verdict counts, weak checks, identities, derivations."""
        return _summary_line(self.chapter, self.scale, [asdict(c) for c in self.claims.values()])

    def findings_text(self, ids: Any, *, paper: str | None = None) -> str:
        """Markdown saying what this build found for ``ids`` at its scale, generated from
        the verdicts (see ``findings``)."""
        return _findings(self, [ids] if isinstance(ids, str) else list(ids), paper)

    def findings(self, ids: Any, *, paper: str | None = None):
        """What this build found for the claims ``ids``: reproduced / not reproduced /
        inconclusive (with its reason) / too weak / failed, with measured and predicted
        numbers, generated from the verdicts at the scale it ran. ``paper``: the paper's
        claim in a sentence, put first. An IPython ``Markdown`` in a notebook, the Markdown
        text in a script."""
        text = self.findings_text(ids, paper=paper)
        if runtime.in_notebook():
            from IPython.display import Markdown

            return Markdown(text)
        return text

    def glue(self, key: str, ids: Any, *, paper: str | None = None) -> str:
        """Glue ``findings(ids)`` as Markdown under ``key`` (``myst_nb.glue``, not shown
        where glued) so the page can paste it with the ``{glue:md}`` role anywhere, also above
        this cell (see "Findings in the prose" in the module docstring). Outside a notebook
        nothing is glued. Returns the Markdown text.

        Published as ``myst_nb.glue(key, Markdown(text), display=False)`` publishes it (a
        display whose MIME types carry the ``application/papermill.record/`` prefix and whose
        metadata names the key under ``scrapbook``), without importing ``myst_nb``: it is
        only in the ``book`` extra, and a Colab kernel holds only the package."""
        text = self.findings_text(ids, paper=paper)
        if runtime.in_notebook():
            from IPython.core.formatters import format_display_data
            from IPython.display import Markdown, display

            bundle, metadata = format_display_data(Markdown(text))
            metadata["scrapbook"] = {"name": key, "mime_prefix": GLUE_PREFIX}
            display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True,
                    metadata=metadata)
        return text

    def to_dict(self, wall_s: float | None = None) -> dict:
        """The JSON ledger (schema 4): run facts, provenance, the run identity, the ids
        pre-registered as decidable at this scale, the engine's cache counts and the budget
        record (``None`` where those modules are absent), and the claims."""
        from . import provenance

        return {
            "schema": SCHEMA,
            "chapter": self.chapter,
            "scale": self.scale,
            "device": self.device,
            "wall_s": round(wall_s if wall_s is not None else runtime.wall_time(), 3),
            "versions": runtime.versions(),
            "provenance": provenance.record(self.chapter, self.scale, self.device),
            "identity": self.identity,
            "decides": list(self.decides),
            "engine": _optional_record("experiments", "stats"),
            "invariants": _optional_record("invariants", "records"),
            "budget": _optional_record("budget", "record"),
            "claims": [asdict(c) for c in self.claims.values()],
        }

    def path(self) -> Path:
        d = self.results_dir if self.results_dir is not None else runtime.results_dir()
        return d / f"{self.chapter}.{self.scale}.json"

    def write(self) -> Path:
        """Write the JSON ledger atomically (see ``atomic_write_text``); returns its path."""
        path = self.path()
        atomic_write_text(path, json.dumps(self.to_dict(), indent=2, default=float) + "\n")
        return path

    def problems(self) -> list[str]:
        """What makes ``report()`` raise, one line each: FAILed claims (guards, identities
        and derivations included), WEAK hard claims, and at the defaults the pre-registered
        claims left undecided."""
        out = [f"{c.id} FAIL ({c.reason})" for c in self.failed]
        out += [f"{c.id} WEAK: resolves {_pct(c.resolution)} > max "
                f"{_pct(c.check.max_resolution)} (a pass that could not detect an error of "
                f"that size)" for c in self.weak_claims]
        if self.at_defaults:
            out += [f"{cid} INCONCLUSIVE at the defaults, pre-registered as decided at "
                    f"{self.scale}: {why}" for cid, why in self.undecided()]
        return out

    def report(self, *, show: bool = True, write: bool = True, raise_on_fail: bool = True):
        """Show the table once, write the JSON, and raise ``ClaimFailed`` if a hard claim,
        an identity, a derivation or a guard FAILed or a hard claim is WEAK (``Undecided``
        when the only problems are pre-registered claims left INCONCLUSIVE at the
        defaults). Returns ``None`` (so a notebook does not show the table twice);
        ``table()`` gives the DataFrame."""
        if show:
            print(self.summary())
            if runtime.in_notebook():
                runtime.display(style_table(self.table()))
            else:
                print(text_table(self.table()))
            undecided = self.undecided()
            if undecided and not self.at_defaults:
                print(f"[claims] off the defaults: {len(undecided)} claim(s) pre-registered "
                      f"as decided at {self.scale} undecided here (reported, not enforced): "
                      + ", ".join(cid for cid, _ in undecided))
            if self.kinds and self.undeclared():
                print(f"[claims] {len(self.undeclared())} claim(s) without a declared kind: "
                      + ", ".join(self.undeclared()))
        if write:
            path = self.write()
            if show:
                print(f"[claims] {_relative(path)}")
        problems = self.problems()
        if raise_on_fail and problems:
            only_undecided = not self.failed and not self.weak_claims
            cls = Undecided if only_undecided else ClaimFailed
            raise cls(f"{len(problems)} claim(s) failed in {self.chapter}: "
                      + "; ".join(problems))


def _read_rules(rules: Any, scale: str) -> tuple[dict, tuple, dict]:
    """``(KINDS, DECIDES[scale], MAX_RESOLUTION)`` of a chapter's rules, validated:
    ``ValueError`` naming what is wrong."""
    if rules is None:
        return {}, (), {}
    kinds = dict(getattr(rules, "KINDS", None) or {})
    bad = {k: v for k, v in kinds.items() if v not in KINDS}
    if bad:
        raise ValueError(f"rules.KINDS: unknown kinds {bad} (kinds: {KINDS})")
    decides_all = getattr(rules, "DECIDES", None) or {}
    if not isinstance(decides_all, dict):
        raise ValueError("rules.DECIDES must be a dict {scale: (claim id, ...)}")
    decides = tuple(decides_all.get(scale, ()))
    not_hard = [cid for cid in decides if cid in kinds and kinds[cid] != "hard"]
    if not_hard:
        raise ValueError(f"rules.DECIDES[{scale!r}] lists claims that are not hard: "
                         f"{not_hard}")
    max_res = dict(getattr(rules, "MAX_RESOLUTION", None) or {})
    for cid, v in max_res.items():
        if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], (int, float))
                and not isinstance(v[0], bool) and math.isfinite(v[0]) and v[0] > 0
                and isinstance(v[1], str) and v[1].strip()):
            raise ValueError(f"rules.MAX_RESOLUTION[{cid!r}] must be (max > 0, why), got "
                             f"{v!r}")
    return kinds, decides, max_res


def _optional_record(module: str, function: str) -> Any:
    """``dltheory.<module>.<function>()``, or ``None`` where that module or function does
    not exist (yet); errors inside the function itself propagate."""
    import importlib

    try:
        fn = getattr(importlib.import_module(f".{module}", __package__), function)
    except (ImportError, AttributeError):
        return None
    return fn()


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new one, never an
    empty or partial one, whatever the number of concurrent writers: each write goes to its
    own temporary file in the same folder (``mkstemp``), is flushed to disk, then renamed
    over ``path`` (``os.replace`` is atomic within a file system)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)   # mkstemp makes it owner-only; a ledger is for every reader
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _check_writable(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-"):
            pass
    except OSError as err:
        raise ValueError(
            f"results directory {directory} is not writable ({err.strerror}); set "
            f"${runtime.ENV_RESULTS} to a writable folder") from err


def _relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(runtime.repo_root()))
    except ValueError:
        return path.name


def _summary_line(chapter: str, scale: str, rows: list[dict]) -> str:
    ev = [r for r in rows if r["kind"] in EVIDENCE]
    counts = ", ".join(f"{sum(r['verdict'] == v for r in ev)} {v}" for v in VERDICTS
                       if any(r["verdict"] == v for r in ev)) or "none"
    weak = sum(is_weak(r["kind"], r["verdict"], r.get("resolution")) for r in ev)
    shown = []
    for kind, plural in (("identity", "identities"), ("derivation", "derivations")):
        of_kind = [r for r in rows if r["kind"] == kind]
        bad = sum(r["verdict"] == FAIL for r in of_kind)
        shown.append(f"{len(of_kind)} {plural}{f' ({bad} FAILED)' if bad else ''}")
    return (f"{chapter} @ {scale}: {len(ev)} evidence claims ({counts}"
            f"{f'; {weak} weak' if weak else ''}); {', '.join(shown)}")


COLUMNS = ["id", "kind", "verdict", "measured", "predicted", "tolerance", "resolution",
           "statement", "note"]


def _show(x: Any) -> str:
    """A number as ``_fmt`` writes it; anything else (a corrupt ledger's value) as text."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return _fmt(x)
    return "" if x is None else str(x)


def _claims_frame(rows: list[dict], extra: dict | None = None):
    import pandas as pd

    out = []
    for c in rows:
        r = c.get("resolution")
        weak = is_weak(c["kind"], c["verdict"], r)
        cap = (c.get("check") or {}).get("max_resolution") if c["verdict"] == WEAK else None
        out.append({**(extra or {}), "id": c["id"], "kind": c["kind"], "verdict": c["verdict"],
                    "measured": _show(c["measured"]), "predicted": _show(c.get("predicted")),
                    "tolerance": c["tolerance"],
                    "resolution": _pct(r) + (f" > max {_pct(cap)}" if cap
                                              else " (weak)" if weak else ""),
                    "statement": c["statement"], "note": c.get("note", "")})
    return pd.DataFrame(out, columns=[*(extra or {}), *COLUMNS])


VERDICT_STYLE = {
    PASS: "color: #1a7f37; font-weight: 600",
    FAIL: "color: #cf222e; font-weight: 700",
    WEAK: "color: #cf222e; font-weight: 700",
    NOT_REPRODUCED: "color: #bc4c00; font-weight: 600",
    INCONCLUSIVE: "color: #6e7781; font-weight: 600",
    "identity": "color: #8c959f",
    "stale": "color: #bc4c00; font-weight: 600",
    "error": "color: #cf222e; font-weight: 700",
    "not run": "color: #6e7781",
    "ran": "color: #1a7f37",
    "failed": "color: #cf222e; font-weight: 700",
}


NOWRAP = ("verdict", "status", "resolution")


class Html(str):
    """Text that is already HTML, built here from escaped parts (a link, a span around an
    escaped value): ``style_table`` passes it through; every other cell, and a caption that
    is not ``Html``, is escaped (the pandas Styler escapes nothing by itself), so a ledger's
    or record's text never reaches a page as markup."""

    def __html__(self) -> str:      # markupsafe's protocol, which the Styler's escape uses
        return self


def html_join(parts, sep: str = ", ") -> Html:
    """``parts`` (text, or ``Html`` left as it is) escaped and joined as ``Html``."""
    return Html(sep.join(p if isinstance(p, Html) else html.escape(str(p)) for p in parts))


_NUMBER = re.compile(r"[-+−]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?%?")
_TEX = re.compile(r"(?<![\\$])\$(?!\$)([^$]+?)(?<!\\)\$")


def _nobreak_numbers(text: str) -> str:
    """HTML-escaped text whose numbers (``-1.2e-3``, ``25%``) never break across lines."""
    return _NUMBER.sub(lambda m: f'<span style="white-space:nowrap">{m[0]}</span>',
                       html.escape(str(text)))


def _with_math(text: str) -> str:
    """HTML-escaped text whose ``$...$`` TeX MathJax typesets (as ``\\(...\\)``)."""
    return _TEX.sub(lambda m: f"\\({m[1]}\\)", html.escape(str(text)))


def _compact_claims(df):
    """Six columns that fit a book's text column: the kind under the id, the prediction
    under the measurement, the note under the statement (HTML-escaped text; ``$...$`` in a
    statement or note is typeset; numbers do not break)."""
    import pandas as pd

    def small(text, inner=html.escape):
        return (f'<br><span style="color:#6e7781; font-size:0.92em">'
                f'{inner(str(text))}</span>' if text else "")

    rows = []
    for _, r in df.iterrows():
        rows.append({   # <wbr>: long dotted ids break after a dot or underscore only
            "claim": Html(re.sub(r"([._])", r"\1<wbr>", html.escape(str(r["id"])))
                          + small(r["kind"])),
            "verdict": str(r["verdict"]),    # text: style_table escapes it
            "measured": Html(_nobreak_numbers(r["measured"])
                             + small(f"predicted {r['predicted']}" if r["predicted"] else "",
                                     _nobreak_numbers)),
            "tolerance": Html(_nobreak_numbers(r["tolerance"])),
            "resolution": Html(html.escape(str(r["resolution"]))),
            "statement": Html(_with_math(r["statement"]) + small(r["note"], _with_math)),
        })
    out = pd.DataFrame(rows, columns=["claim", "verdict", "measured", "tolerance",
                                      "resolution", "statement"])
    return out, [i for i, k in enumerate(df["kind"]) if k in ("identity", "derivation")]


def _empty(value) -> bool:
    return value is None or (isinstance(value, float) and value != value) \
        or str(value).strip() in ("", "—", "-", "nan", "None")


def style_table(df, caption: str | None = None):
    """A pandas Styler for a claims (or summary) table: no index, coloured verdicts
    (PASS green, FAIL red, NOT REPRODUCED orange, INCONCLUSIVE grey; identities and
    derivations muted),
    text wrapping inside the text column. A claims table (``Ledger.table()``) is shown in
    six columns: claim (kind below), verdict, measured (prediction below), tolerance,
    resolution, statement (note below). Every cell and the caption are HTML-escaped
    unless they are ``Html`` (markup built from escaped parts): the tables show what
    ledgers and records hold, and a record may be damaged or hostile."""
    plain = df
    muted_rows, is_claims = [], {"id", "kind", "statement", "note"} <= set(df.columns)
    if is_claims:
        df, muted_rows = _compact_claims(df.reset_index(drop=True))
    if len(df):   # a column empty in every row says nothing: leave it out
        df = df[[c for c in df.columns if not all(_empty(v) for v in df[c])]]
    if not is_claims and "evidence" in df.columns:   # "4 NOT REPRODUCED" stays on one line
        df = df.assign(evidence=[_unbroken_parts(v) for v in df["evidence"]])
    sty = df.style.hide(axis="index").format(escape="html")
    # MyST marks each page section mathjax_ignore (it typesets its own math nodes); the
    # class mathjax_process (in myst_mathjax_classes) makes MathJax typeset this table's
    # \(...\) again inside it
    sty = sty.set_table_attributes('class="mathjax_process"')
    if is_claims:
        sty = sty.set_properties(subset=["claim"], **{"overflow-wrap": "normal",
                                                      "min-width": "8em"})
    if caption:
        sty = sty.set_caption(caption if isinstance(caption, Html)
                              else html.escape(str(caption)))
    for col in ("verdict", "status"):
        if col in df.columns:
            sty = sty.map(_verdict_css, subset=[col])
    if muted_rows:
        sty = sty.map(lambda _: VERDICT_STYLE["identity"],
                      subset=(muted_rows, [c for c in df.columns if c != "verdict"]))
    sty = sty.set_table_styles([
        {"selector": "", "props": "width: 100%; font-size: 0.78em; border-collapse: collapse;"},
        {"selector": "caption", "props": "caption-side: top; text-align: left; "
                                         "font-weight: 600; font-size: 1.1em;"},
        {"selector": "td, th", "props": "padding: 2px 5px; vertical-align: top; "
                                        "text-align: left; border-bottom: 1px solid #e5e5e5;"},
        {"selector": "th", "props": "white-space: nowrap;"},
    ])
    sty = _column_layout(sty, list(df.columns))
    sty.plain_text = plain   # what runtime.display prints outside a notebook
    return sty


def _verdict_css(v) -> str:
    return VERDICT_STYLE.get(v, "") if isinstance(v, str) else ""


def _unbroken_parts(value) -> Html:
    """``"4 PASS, 1 NOT REPRODUCED"`` with each part kept on one line (escaped)."""
    return Html(", ".join(f'<span style="white-space:nowrap">{html.escape(p)}</span>'
                          for p in str(value).split(", ") if p))


#: (columns, CSS) set per cell after the table rules: cell properties carry only an id
#: selector, so the table rules set no wrapping; long words may break anywhere only in the
#: prose columns; the summary's detail is narrow enough to fit the page; a chapter's
#: title (the reproduction page) may wrap
_COLUMN_CSS = (
    (NOWRAP, {"white-space": "nowrap"}),
    (None, {"white-space": "normal", "overflow-wrap": "normal"}),     # every other column
    (("claim", "statement", "note", "detail"), {"overflow-wrap": "anywhere"}),
    (("statement", "note"), {"min-width": "12em"}),
    (("detail",), {"min-width": "7em"}),
    (("chapter",), {"min-width": "9em"}),
)


def _column_layout(sty, columns: list):
    for names, css in _COLUMN_CSS:
        subset = [c for c in columns if c not in NOWRAP] if names is None else \
            [c for c in names if c in columns]
        if subset:
            sty = sty.set_properties(subset=subset, **css)
    return sty


# ------------------------------------------------------------------ text for scripts
def text_table(df, width: int | None = None) -> str:
    """A table as text that fits ``width`` columns (default: the terminal's,
    ``shutil.get_terminal_size``). A claims table (``Ledger.table()``) is one block per
    claim: ``id [kind] VERDICT``, then measured / predicted / tolerance / resolution, then
    the statement and the note, each wrapped and indented; any other table is
    ``DataFrame.to_string`` with its columns wrapped to the width."""
    import shutil
    import textwrap

    width = max(40, width or shutil.get_terminal_size((100, 24)).columns)
    if not {"id", "kind", "verdict", "statement"} <= set(df.columns):
        return df.to_string(index=False, line_width=width, max_colwidth=max(20, width // 2))
    out = []
    for _, r in df.iterrows():
        facts = [f"measured {r['measured']}" if r["measured"] else "not measured"]
        facts += [f"predicted {r['predicted']}"] if r.get("predicted") and not str(
            r.get("tolerance", "")).startswith("|m - ") else []     # |m - p| names it
        facts += [f"required {r['tolerance']}"] if r.get("tolerance") else []
        facts += [f"resolves {r['resolution']}"] if r.get("resolution") else []
        out.append(textwrap.fill(f"{r['id']} [{r['kind']}] {r['verdict']}: "
                                 + ", ".join(facts), width, subsequent_indent="    "))
        for label, text in (("", r["statement"]), ("note: ", r.get("note") or "")):
            if text:
                out.append(textwrap.fill(label + str(text), width, initial_indent="    ",
                                         subsequent_indent="    "))
    return "\n".join(out)


# ------------------------------------------------------------------ findings for the prose
FINDING_WORDS = {PASS: "Reproduced", NOT_REPRODUCED: "Not reproduced",
                 INCONCLUSIVE: "Inconclusive", FAIL: "Failed",
                 WEAK: "Not decided (the check is too weak)"}


def _finding(c: Claim, scale: str) -> str:
    """One Markdown bullet for a recorded claim."""
    what = f"{c.statement} (`{c.id}`, {c.kind})"
    if c.kind not in EVIDENCE:
        word = "Holds" if c.verdict == PASS else "Does not hold"
        guard = c.check is not None and c.check.guard     # a guard's number is 1 or 0
        nums = "" if guard or c.measured is None else f": measured {_show(c.measured)}" + (
            f" (required {c.tolerance})" if c.tolerance else "")
        return f"- **{word}**: {what}{nums}; a check of the book's own code, not evidence."
    nums = "" if c.measured is None else f"measured {_show(c.measured)}"
    if c.predicted is not None and c.measured is not None:
        nums += f" against the predicted {_show(c.predicted)}"
    if c.tolerance and c.measured is not None:
        nums += f" (required {c.tolerance})"
    if c.verdict == INCONCLUSIVE:
        tail = c.reason + (f"; {nums}" if nums else "")
    elif c.verdict == WEAK:
        tail = f"{nums}; it resolves {_pct(c.resolution)}, above its maximum " \
               f"{_pct(c.check.max_resolution)}"
    else:
        tail = nums
    return f"- **{FINDING_WORDS[c.verdict]}** at `{scale}`: {what}" + \
        (f": {tail}." if tail else ".")


def _findings(ledger: Ledger, ids: list[str], paper: str | None) -> str:
    i = ledger.identity or {}
    run = f"`{ledger.scale}`"
    if i.get("mutation"):
        run += f", MUTATED ({i['mutation']})"
    elif i and not i.get("defaults", True):
        run += f", off the defaults ({', '.join(f'{k}={v}' for k, v in (i.get('knobs') or {}).items())})"
    if i.get("budget") is not None:
        run += f", budget {i['budget']} s"
    lines = [f"**The paper:** {paper}", ""] if paper else []
    lines.append(f"**What this build found** ({run}):")
    lines.append("")
    for cid in ids:
        c = ledger.claims.get(cid)
        lines.append(_finding(c, ledger.scale) if c is not None
                     else f"- `{cid}`: not recorded in this run.")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ kinds per chapter
def kind_counts(rows: Any) -> dict[str, int]:
    """How many claims of each kind (``KINDS`` order) in ``rows``: JSON claims or a
    calibration record's ``{id: {"kind": ...}}``."""
    kinds = [r["kind"] for r in (rows.values() if isinstance(rows, dict) else rows)]
    return {k: kinds.count(k) for k in KINDS}


def kinds_frame(sources: dict[str, tuple[str, Any]]):
    """One row per chapter: the claims of each kind and where the count comes from.
    ``sources``: chapter -> ``(source, rows)`` with rows as ``kind_counts`` takes them."""
    import pandas as pd

    out = []
    for chapter, (source, rows) in sources.items():
        n = kind_counts(rows)
        out.append({"chapter": chapter, **n, "evidence": n["hard"] + n["soft"],
                    "source": source})
    return pd.DataFrame(out, columns=["chapter", *KINDS, "evidence", "source"])
