"""The claims ledger: every chapter states the paper's claims as checks with stable ids.

```python
ledger = claims.Ledger("sparse_scaling", scale=SCALE)
ledger.check("SS.alpha_N", "model-limited exponent equals alpha1 + alpha2 + 1",
             measured=fit.slope, predicted=2.0, tol=cfg.tol_alpha_N)
ledger.check("CL.neg.rope_full_qk", "the control must fail", measured=cos_max, lo=1e-3)
ledger.check("PF.energy", "E_PT + E_FT = E (bookkeeping)", gap, predicted=0.0, tol=1e-12,
             kind="identity")
ledger.report()   # shows the table, writes JSON, raises ClaimFailed if a hard claim failed
```

Kinds
-----
``hard``      evidence; out of tolerance is ``FAIL`` and ``report()`` raises (CI fails);
``soft``      evidence the paper states but this book may not reproduce: out of tolerance
              is ``NOT REPRODUCED``; ``ledger.inconclusive`` records what a scale cannot
              resolve as ``INCONCLUSIVE``;
``identity``  holds by construction (a bookkeeping identity, a fallback rule, a formula
              compared with itself). Shown, never counted as evidence; a failing identity
              is a bug, so it is ``FAIL`` and raises like a hard claim.

Resolution
----------
An evidence claim compared with a theory value ``predicted`` gets a ``resolution``: the
smallest relative error in the prediction that the check is guaranteed to detect. With
tolerance half-width ``w`` and measurement ``m``, a prediction ``p(1 +/- e)`` fails the
check for every sign once ``|p| e > w + |m - p|``, so ``resolution = (w + |m - p|) / |p|``.
A check with resolution above ``WEAK_RESOLUTION`` (25%) is shown as weak: it would pass
even if the theory were off by that much.

A check is one of: ``predicted`` with ``tol`` (absolute) and/or ``rtol`` (relative), a
closed interval ``lo``/``hi`` (either end optional; ``predicted`` may accompany it), or
both. Measurements must be finite unless ``allow_nonfinite=True`` (then a non-finite value
is a FAIL for hard claims and INCONCLUSIVE for soft ones). Tolerances must be finite.
Nothing here ever writes a measured value: the chapter passes what it measured.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import runtime

PASS, FAIL, NOT_REPRODUCED, INCONCLUSIVE = "PASS", "FAIL", "NOT REPRODUCED", "INCONCLUSIVE"
VERDICTS = (PASS, FAIL, NOT_REPRODUCED, INCONCLUSIVE)
KINDS = ("hard", "soft", "identity")
EVIDENCE = ("hard", "soft")
WEAK_RESOLUTION = 0.25
SCHEMA = 2   # ledger JSON layout version (2: kinds incl. identity, resolution, provenance)

__all__ = ["Claim", "ClaimFailed", "Ledger", "KINDS", "VERDICTS", "WEAK_RESOLUTION",
           "style_table", "atomic_write_text"]


class ClaimFailed(AssertionError):
    """Raised by ``Ledger.report`` when at least one hard claim or identity failed."""


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

    @property
    def ok(self) -> bool:
        return self.verdict != FAIL

    @property
    def weak(self) -> bool:
        """An evidence claim whose check cannot detect a 25% error in its prediction."""
        return (self.kind in EVIDENCE and self.resolution is not None
                and self.resolution > WEAK_RESOLUTION)

    def __repr__(self) -> str:
        m = "not measured" if self.measured is None else f"measured {_fmt(self.measured)}"
        t = f", required {self.tolerance}" if self.tolerance else ""
        r = f", resolves {_pct(self.resolution)}" if self.resolution is not None else ""
        n = f"; {self.note}" if self.note else ""
        return f"{self.id} [{self.kind}]: {self.verdict} ({m}{t}{r}{n})"


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
    ) -> Claim:
        """Record one claim and return it with its verdict (it never raises on a miss)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if id in self.claims:
            raise ValueError(f"claim id {id!r} recorded twice in ledger {self.chapter!r}")
        m = _as_number(measured, "measured")
        p = _as_number(predicted, "predicted")
        lo_, hi_ = _as_number(lo, "lo"), _as_number(hi, "hi")
        tol_, rtol_ = _as_number(tol, "tol"), _as_number(rtol, "rtol")
        for name, v in (("tol", tol_), ("rtol", rtol_), ("lo", lo_), ("hi", hi_),
                        ("predicted", p)):
            if v is not None and not math.isfinite(v):
                raise ValueError(f"claim {id!r}: {name} must be finite, got {v}")
        if (tol_ is not None and tol_ < 0) or (rtol_ is not None and rtol_ < 0):
            raise ValueError(f"claim {id!r}: tol and rtol must be >= 0, got tol={tol_}, "
                             f"rtol={rtol_}")
        if lo_ is not None and hi_ is not None and lo_ > hi_:
            raise ValueError(f"claim {id!r}: empty interval lo={lo_} > hi={hi_}")
        if (tol_ is not None or rtol_ is not None) and p is None:
            raise ValueError(f"claim {id!r}: tol/rtol need a predicted value")
        if p is not None and tol_ is None and rtol_ is None and lo_ is None and hi_ is None:
            raise ValueError(f"claim {id!r}: a predicted value needs tol or rtol (or lo/hi)")
        if p is None and lo_ is None and hi_ is None:
            raise ValueError(f"claim {id!r}: give predicted+tol/rtol or an interval lo/hi")

        parts, width = [], None
        if tol_ is not None or rtol_ is not None:
            width = max(tol_ or 0.0, (rtol_ or 0.0) * abs(p))
            parts.append(f"|m - {_fmt(p)}| <= {_fmt(width)}")
        elif p is not None:   # interval around a prediction: its half-width on the far side
            width = max(p - lo_ if lo_ is not None else math.inf,
                        hi_ - p if hi_ is not None else math.inf)
        if lo_ is not None and hi_ is not None:
            parts.append(f"in [{_fmt(lo_)}, {_fmt(hi_)}]")
        elif lo_ is not None:
            parts.append(f">= {_fmt(lo_)}")
        elif hi_ is not None:
            parts.append(f"<= {_fmt(hi_)}")
        tolerance = " and ".join(parts)

        if not math.isfinite(m):
            if not allow_nonfinite:
                raise ValueError(
                    f"claim {id!r}: measured value is {m}; pass allow_nonfinite=True if a "
                    f"non-finite measurement is a legitimate outcome"
                )
            verdict = INCONCLUSIVE if kind == "soft" else FAIL
            note = (note + "; " if note else "") + "non-finite measurement"
        else:
            ok = True
            if width is not None and (tol_ is not None or rtol_ is not None):
                ok &= abs(m - p) <= width
            if lo_ is not None:
                ok &= m >= lo_
            if hi_ is not None:
                ok &= m <= hi_
            verdict = PASS if ok else (NOT_REPRODUCED if kind == "soft" else FAIL)
        res = resolution(m, p, width) if kind in EVIDENCE else None
        claim = Claim(id, statement, kind, m, p, tolerance, verdict, note, res)
        self.claims[id] = claim
        return claim

    def inconclusive(self, id: str, statement: str, measured: Any = None, *, note: str,
                     predicted: Any = None) -> Claim:
        """Record a soft claim that this scale cannot resolve; ``note`` says why."""
        if id in self.claims:
            raise ValueError(f"claim id {id!r} recorded twice in ledger {self.chapter!r}")
        m = _as_number(measured, "measured") if measured is not None else None
        p = _as_number(predicted, "predicted")
        claim = Claim(id, statement, "soft", m, p, "", INCONCLUSIVE, note)
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
        """One line: evidence verdict counts, weak checks, identities."""
        return _summary_line(self.chapter, self.scale, [asdict(c) for c in self.claims.values()])

    def to_dict(self, wall_s: float | None = None) -> dict:
        from . import provenance

        engine = None
        try:
            from . import experiments

            engine = experiments.stats()
        except (ImportError, AttributeError):
            pass
        return {
            "schema": SCHEMA,
            "chapter": self.chapter,
            "scale": self.scale,
            "device": self.device,
            "wall_s": round(wall_s if wall_s is not None else runtime.wall_time(), 3),
            "versions": runtime.versions(),
            "provenance": provenance.record(self.chapter, self.scale, self.device),
            "engine": engine,
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
        """Show the table once, write the JSON, raise ``ClaimFailed`` if a hard claim or an
        identity failed. Returns ``None`` (so a notebook does not show the table twice);
        ``table()`` gives the DataFrame."""
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
    ids = [r for r in rows if r["kind"] == "identity"]
    counts = ", ".join(f"{sum(r['verdict'] == v for r in ev)} {v}" for v in VERDICTS
                       if any(r["verdict"] == v for r in ev)) or "none"
    weak = sum(1 for r in ev if r.get("resolution") is not None
               and r["resolution"] > WEAK_RESOLUTION)
    bad_id = sum(r["verdict"] == FAIL for r in ids)
    return (f"{chapter} @ {scale}: {len(ev)} evidence claims ({counts}"
            f"{f'; {weak} weak' if weak else ''}); {len(ids)} identities"
            f"{f' ({bad_id} FAILED)' if bad_id else ''}")


COLUMNS = ["id", "kind", "verdict", "measured", "predicted", "tolerance", "resolution",
           "statement", "note"]


def _claims_frame(rows: list[dict], extra: dict | None = None):
    import pandas as pd

    out = []
    for c in rows:
        r = c.get("resolution")
        weak = c["kind"] in EVIDENCE and r is not None and r > WEAK_RESOLUTION
        out.append({**(extra or {}), "id": c["id"], "kind": c["kind"], "verdict": c["verdict"],
                    "measured": _fmt(c["measured"]) if c["measured"] is not None else "",
                    "predicted": _fmt(c.get("predicted")), "tolerance": c["tolerance"],
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


NOWRAP = ("verdict", "status", "resolution", "chapter")


def _compact_claims(df):
    """Six columns that fit a book's text column: the kind under the id, the prediction
    under the measurement, the note under the statement (HTML-escaped text)."""
    import html
    import re

    import pandas as pd

    def small(text):
        return (f'<br><span style="color:#6e7781; font-size:0.92em">'
                f'{html.escape(str(text))}</span>' if text else "")

    rows = []
    for _, r in df.iterrows():
        rows.append({   # <wbr>: long dotted ids break after a dot or underscore only
            "claim": re.sub(r"([._])", r"\1<wbr>", html.escape(r["id"])) + small(r["kind"]),
            "verdict": r["verdict"],
            "measured": html.escape(r["measured"])
                        + small(f"predicted {r['predicted']}" if r["predicted"] else ""),
            "tolerance": html.escape(r["tolerance"]).replace("= ", "=&nbsp;"),
            "resolution": html.escape(r["resolution"]),
            "statement": html.escape(r["statement"]) + small(r["note"]),
        })
    out = pd.DataFrame(rows, columns=["claim", "verdict", "measured", "tolerance",
                                      "resolution", "statement"])
    return out, [i for i, k in enumerate(df["kind"]) if k == "identity"]


def style_table(df, caption: str | None = None):
    """A pandas Styler for a claims (or summary) table: no index, coloured verdicts
    (PASS green, FAIL red, NOT REPRODUCED orange, INCONCLUSIVE grey, identities muted),
    text wrapping inside the text column. A claims table (``Ledger.table()``) is shown in
    six columns: claim (kind below), verdict, measured (prediction below), tolerance,
    resolution, statement (note below)."""

    def verdict_css(v):
        return VERDICT_STYLE.get(v, "")

    plain = df
    muted_rows, is_claims = [], {"id", "kind", "statement", "note"} <= set(df.columns)
    if is_claims:
        df, muted_rows = _compact_claims(df.reset_index(drop=True))
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
    if wrap:
        sty = sty.set_properties(subset=wrap, **{"white-space": "normal",
                                                 "overflow-wrap": "anywhere"})
    for col in ("statement", "note", "detail"):
        if col in df.columns:
            sty = sty.set_properties(subset=[col], **{"min-width": "12em"})
    sty.plain_text = plain   # what runtime.display prints outside a notebook
    return sty
