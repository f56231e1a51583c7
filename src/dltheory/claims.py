"""The claims ledger: every chapter states the paper's claims as checks with stable ids.

```python
ledger = claims.Ledger("sparse_scaling", scale=SCALE)
ledger.check("SS.alpha_N", "model-limited exponent equals alpha1 + alpha2 + 1",
             measured=fit.slope, predicted=2.0, tol=cfg.tol_alpha_N)
ledger.check("CL.neg.rope_full_qk", "the control must fail", measured=cos_max, lo=1e-3)
ledger.check("PF.energy", "E_PT + E_FT = E (bookkeeping)", gap, predicted=0.0, tol=1e-12,
             kind="identity")
ledger.check("DE.routeB", "route B slope", fit.slope, -1.0, tol=cfg.tol_routeB,
             rounds=(done, cfg.rounds_needed))     # budgeted sweep: INCONCLUSIVE if short
ledger.inconclusive("DE.joint", "joint scaling", kind="hard", note="unpowered below 8 seeds")
ledger.report()   # shows the table, writes JSON, raises ClaimFailed if a hard claim failed
```

Kinds
-----
``hard``        evidence; out of tolerance is ``FAIL`` and ``report()`` raises (CI fails);
``soft``        evidence the paper states but this book may not reproduce: out of tolerance
                is ``NOT REPRODUCED``;
``identity``    holds by construction (a bookkeeping identity, a fallback rule, a formula
                compared with itself);
``derivation``  the book's theory against its own theory (an exact sum against its
                asymptotic form). Identities and derivations are shown, never counted as
                evidence; a failing one is a bug, so it is ``FAIL`` and raises.

An evidence claim is ``INCONCLUSIVE`` when (a) the chapter says so before the run, with a
reason (``ledger.inconclusive``, hard or soft: never raises), (b) it had fewer rounds than
it needs (``check(..., rounds=(done, needed))``, budgeted runs), (c) its measurement is
non-finite (soft only; a hard one FAILs), or (d) it is soft and would PASS with a
resolution above 100%: such a check cannot detect an error of the prediction's own size.

Resolution
----------
An evidence claim compared with a theory value ``predicted`` gets a ``resolution``: the
smallest relative error in the prediction that the check is guaranteed to detect. With
tolerance half-width ``w`` and measurement ``m``, a prediction ``p(1 +/- e)`` fails the
check for every sign once ``|p| e > w + |m - p|``, so ``resolution = (w + |m - p|) / |p|``.
A check with resolution above ``WEAK_RESOLUTION`` (25%) is shown as weak: it would pass
even if the theory were off by that much (hard claims stay as they are; soft PASSes above
100% become INCONCLUSIVE, rule (d)).

A check is one of: ``predicted`` with ``tol`` (absolute) and/or ``rtol`` (relative), a
closed interval ``lo``/``hi`` (either end optional; ``predicted`` may accompany it), or
both. Measurements must be finite unless ``allow_nonfinite=True``. Tolerances must be
finite. Nothing here ever writes a measured value: the chapter passes what it measured.

The verdict rule is one pure function, ``judge(kind, measured, Check)``; each claim stores
its ``Check`` in the JSON (schema 3), so the reproduction page (``dltheory.ledgers``)
re-derives every written verdict and names a ledger whose verdicts do not follow.
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

from . import runtime

PASS, FAIL, NOT_REPRODUCED, INCONCLUSIVE = "PASS", "FAIL", "NOT REPRODUCED", "INCONCLUSIVE"
VERDICTS = (PASS, FAIL, NOT_REPRODUCED, INCONCLUSIVE)
KINDS = ("hard", "soft", "identity", "derivation")
EVIDENCE = ("hard", "soft")
WEAK_RESOLUTION = 0.25
BLIND_RESOLUTION = 1.0   # a soft PASS resolving worse than this is INCONCLUSIVE
SCHEMA = 3   # ledger JSON layout version (3: machine-readable check per claim, budget)

__all__ = ["Check", "Claim", "ClaimFailed", "Judgement", "Ledger", "KINDS", "VERDICTS",
           "EVIDENCE", "WEAK_RESOLUTION", "BLIND_RESOLUTION", "SCHEMA", "judge", "is_weak",
           "resolution", "style_table", "atomic_write_text"]


class ClaimFailed(AssertionError):
    """Raised by ``Ledger.report`` when a hard claim, an identity or a derivation failed."""


@dataclass(frozen=True)
class Check:
    """What a verdict is derived from, stored with each claim (JSON ``"check"``).

    ``predicted`` with ``tol``/``rtol``, and/or an interval ``lo``/``hi``; ``rounds``
    ``(done, needed)`` for a budgeted sweep; ``reason`` for a claim declared INCONCLUSIVE
    before the run (then no tolerance is needed).
    """

    predicted: float | None = None
    tol: float | None = None
    rtol: float | None = None
    lo: float | None = None
    hi: float | None = None
    rounds: tuple[int, int] | None = None
    reason: str | None = None

    @classmethod
    def from_dict(cls, d: Any) -> Check:
        """The ``Check`` a JSON claim stores; ``TypeError`` on anything else."""
        if not isinstance(d, dict):
            raise TypeError(f"check parameters must be an object, got {type(d).__name__}")
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise TypeError(f"unknown check parameters {sorted(unknown)}")
        nums = {k: _as_number(d.get(k), k) for k in ("predicted", "tol", "rtol", "lo", "hi")}
        rounds = d.get("rounds")
        return cls(**nums, rounds=tuple(rounds) if isinstance(rounds, list) else rounds,
                   reason=d.get("reason"))

    def __post_init__(self):
        for name in ("predicted", "tol", "rtol", "lo", "hi"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not math.isfinite(v)):
                raise ValueError(f"{name} must be finite, got {v!r}")
        if (self.tol or 0) < 0 or (self.rtol or 0) < 0:
            raise ValueError(f"tol and rtol must be >= 0, got tol={self.tol}, "
                             f"rtol={self.rtol}")
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
    verdict = PASS if ok else (NOT_REPRODUCED if kind == "soft" else FAIL)
    res = resolution(measured, c.predicted, width) if kind in EVIDENCE else None
    if kind == "soft" and ok and res is not None and res > BLIND_RESOLUTION:
        shown = _pct(res) if math.isfinite(res) else "unbounded (one-sided check)"
        return Judgement(INCONCLUSIVE, tolerance, res, (
            f"resolution {shown} > {_pct(BLIND_RESOLUTION)}: cannot detect an error of the "
            f"prediction's own size",), True)
    return Judgement(verdict, tolerance, res, (), ok)


def _tolerance(c: Check) -> tuple[str, float | None]:
    """The tolerance as text, and its half-width around ``predicted`` (``None`` without
    a prediction; for an interval, its half-width on the far side)."""
    parts, width = [], None
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
        return self.verdict != FAIL

    @property
    def weak(self) -> bool:
        """An evidence claim whose check cannot detect a 25% error in its prediction."""
        return is_weak(self.kind, self.verdict, self.resolution)

    def __repr__(self) -> str:
        m = "not measured" if self.measured is None else f"measured {_fmt(self.measured)}"
        t = f", required {self.tolerance}" if self.tolerance else ""
        r = f", resolves {_pct(self.resolution)}" if self.resolution is not None else ""
        n = f"; {self.note}" if self.note else ""
        return " ".join(f"{self.id} [{self.kind}]: {self.verdict} ({m}{t}{r}{n})".split("\n"))


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
    results_dir : where the JSON goes (default ``runtime.results_dir()``); it is created and
        checked for writing here, so a bad directory fails before the chapter runs.
    """

    def __init__(self, chapter: str, scale: str, *, device: Any = "cpu",
                 results_dir: str | Path | None = None):
        if not chapter or not chapter.replace("_", "").isalnum():
            raise ValueError(f"chapter must be a plain identifier, got {chapter!r}")
        self.chapter = chapter
        self.scale = runtime.scale(scale)
        self.device = str(device)
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
    ) -> Claim:
        """Record one claim and return it with its verdict (it never raises on a miss).

        ``rounds=(done, needed)``: a budgeted sweep finished ``done`` of the ``needed``
        rounds; when ``done < needed`` the claim is INCONCLUSIVE whatever was measured
        (``measured`` may then be ``None`` or non-finite)."""
        return self._record(id, statement, kind, measured, note, allow_nonfinite,
                            predicted=predicted, tol=tol, rtol=rtol, lo=lo, hi=hi,
                            rounds=None if rounds is None else tuple(
                                int(x) if isinstance(x, numbers.Integral)
                                and not isinstance(x, bool) else x for x in rounds))

    def inconclusive(self, id: str, statement: str, measured: Any = None, *, note: str,
                     predicted: Any = None, kind: str = "soft") -> Claim:
        """Record an evidence claim (``kind`` hard or soft) as INCONCLUSIVE for a reason
        stated before the run (``note``: what this scale cannot resolve). Never raises on
        the measurement; the reason is shown and stored."""
        return self._record(id, statement, kind, measured, "", True, predicted=predicted,
                            reason=note)

    def _record(self, id: str, statement: str, kind: str, measured: Any, note: str,
                allow_nonfinite: bool, **check: Any) -> Claim:
        if id in self.claims:
            raise ValueError(f"claim id {id!r} recorded twice in ledger {self.chapter!r}")
        m = _as_number(measured, "measured")
        nums = {k: _as_number(v, k) for k, v in check.items() if k not in ("rounds", "reason")}
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
        return claim

    # ------------------------------------------------------------------ output
    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims.values() if c.verdict == FAIL]

    def table(self):
        """The claims as a pandas DataFrame (one row per claim, in the order checked)."""
        return _claims_frame([asdict(c) for c in self.claims.values()])

    def summary(self) -> str:
        """One line: evidence verdict counts, weak checks, identities, derivations."""
        return _summary_line(self.chapter, self.scale, [asdict(c) for c in self.claims.values()])

    def to_dict(self, wall_s: float | None = None) -> dict:
        """The JSON ledger (schema 3): run facts, provenance, the engine's cache counts and
        the budget record (``None`` where those modules are absent), and the claims."""
        from . import provenance

        return {
            "schema": SCHEMA,
            "chapter": self.chapter,
            "scale": self.scale,
            "device": self.device,
            "wall_s": round(wall_s if wall_s is not None else runtime.wall_time(), 3),
            "versions": runtime.versions(),
            "provenance": provenance.record(self.chapter, self.scale, self.device),
            "engine": _optional_record("experiments", "stats"),
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

    def report(self, *, show: bool = True, write: bool = True, raise_on_fail: bool = True):
        """Show the table once, write the JSON, raise ``ClaimFailed`` if a hard claim, an
        identity or a derivation failed. Returns ``None`` (so a notebook does not show the
        table twice); ``table()`` gives the DataFrame."""
        if show:
            print(self.summary())
            runtime.display(style_table(self.table()))
        if write:
            path = self.write()
            if show:
                print(f"[claims] {_relative(path)}")
        if raise_on_fail and self.failed:
            ids = ", ".join(c.id for c in self.failed)
            raise ClaimFailed(f"{len(self.failed)} claim(s) failed in {self.chapter}: {ids}")


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
        out.append({**(extra or {}), "id": c["id"], "kind": c["kind"], "verdict": c["verdict"],
                    "measured": _show(c["measured"]), "predicted": _show(c.get("predicted")),
                    "tolerance": c["tolerance"],
                    "resolution": _pct(r) + (" (weak)" if weak else ""),
                    "statement": c["statement"], "note": c.get("note", "")})
    return pd.DataFrame(out, columns=[*(extra or {}), *COLUMNS])


VERDICT_STYLE = {
    PASS: "color: #1a7f37; font-weight: 600",
    FAIL: "color: #cf222e; font-weight: 700",
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
            "claim": re.sub(r"([._])", r"\1<wbr>", html.escape(r["id"])) + small(r["kind"]),
            "verdict": r["verdict"],
            "measured": _nobreak_numbers(r["measured"])
                        + small(f"predicted {r['predicted']}" if r["predicted"] else "",
                                _nobreak_numbers),
            "tolerance": _nobreak_numbers(r["tolerance"]),
            "resolution": html.escape(r["resolution"]),
            "statement": _with_math(r["statement"]) + small(r["note"], _with_math),
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
    resolution, statement (note below)."""

    def verdict_css(v):
        return VERDICT_STYLE.get(v, "")

    plain = df
    muted_rows, is_claims = [], {"id", "kind", "statement", "note"} <= set(df.columns)
    if is_claims:
        df, muted_rows = _compact_claims(df.reset_index(drop=True))
    if len(df):   # a column empty in every row says nothing: leave it out
        df = df[[c for c in df.columns if not all(_empty(v) for v in df[c])]]
    if not is_claims and "evidence" in df.columns:   # "4 NOT REPRODUCED" stays on one line
        df = df.assign(evidence=[", ".join(f'<span style="white-space:nowrap">{html.escape(p)}'
                                           "</span>" for p in str(v).split(", ") if p)
                                 for v in df["evidence"]])
    sty = df.style.hide(axis="index")
    if is_claims:
        sty = sty.set_properties(subset=["claim"], **{"overflow-wrap": "normal",
                                                      "min-width": "8em"})
    if caption:
        sty = sty.set_caption(caption)
    for col in ("verdict", "status"):
        if col in df.columns:
            sty = sty.map(verdict_css, subset=[col])
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
    # cell properties carry only an id selector, so the table rules above set no wrapping
    nowrap = [c for c in NOWRAP if c in df.columns]
    if nowrap:
        sty = sty.set_properties(subset=nowrap, **{"white-space": "nowrap"})
    wrap = [c for c in df.columns if c not in NOWRAP]
    if wrap:   # long words may break anywhere only in the prose columns
        sty = sty.set_properties(subset=wrap, **{"white-space": "normal",
                                                 "overflow-wrap": "normal"})
    prose = [c for c in ("claim", "statement", "note", "detail") if c in df.columns]
    if prose:
        sty = sty.set_properties(subset=prose, **{"overflow-wrap": "anywhere"})
    for col in ("statement", "note"):
        if col in df.columns:
            sty = sty.set_properties(subset=[col], **{"min-width": "12em"})
    if "detail" in df.columns:   # the summary's last column: narrow enough to fit the page
        sty = sty.set_properties(subset=["detail"], **{"min-width": "7em"})
    if "chapter" in df.columns:   # a chapter's title (the reproduction page) may wrap
        sty = sty.set_properties(subset=["chapter"], **{"min-width": "9em"})
    sty.plain_text = plain   # what runtime.display prints outside a notebook
    return sty
