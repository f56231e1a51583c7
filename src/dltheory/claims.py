"""The claims ledger: every chapter states the paper's claims as checks with stable ids.

```python
ledger = claims.Ledger("sparse_scaling", scale=SCALE)
ledger.check("SS.alpha_N", "model-limited exponent equals alpha1 + alpha2 + 1",
             measured=fit.slope, predicted=2.0, tol=0.10)
ledger.check("CL.neg.rope_full_qk", "the control must fail", measured=cos_max, lo=1e-3)
ledger.report()   # shows the table, writes JSON, raises ClaimFailed if a hard claim failed
```

Verdicts
--------
``PASS``            the measurement is inside the tolerance (hard or soft claim);
``FAIL``            a hard claim out of tolerance: ``report()`` raises, so CI fails;
``NOT REPRODUCED``  a soft claim out of tolerance: the paper's statement did not hold here;
``INCONCLUSIVE``    a soft claim this scale cannot resolve (``ledger.inconclusive``), or a
                    soft measurement that came out non-finite.

A check is one of: ``predicted`` with ``tol`` (absolute) and/or ``rtol`` (relative), a
closed interval ``lo``/``hi`` (either end optional), or both. Measurements must be finite
unless ``allow_nonfinite=True`` (then a non-finite value is a FAIL for hard claims and
INCONCLUSIVE for soft ones). Nothing here ever writes a measured value: the chapter passes
what it measured.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import runtime

PASS, FAIL, NOT_REPRODUCED, INCONCLUSIVE = "PASS", "FAIL", "NOT REPRODUCED", "INCONCLUSIVE"
VERDICTS = (PASS, FAIL, NOT_REPRODUCED, INCONCLUSIVE)
KINDS = ("hard", "soft")


class ClaimFailed(AssertionError):
    """Raised by ``Ledger.report`` when at least one hard claim failed."""


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

    @property
    def ok(self) -> bool:
        return self.verdict != FAIL

    def __repr__(self) -> str:
        m = "not measured" if self.measured is None else f"measured {_fmt(self.measured)}"
        t = f", required {self.tolerance}" if self.tolerance else ""
        n = f"; {self.note}" if self.note else ""
        return f"{self.id} [{self.kind}]: {self.verdict} ({m}{t}{n})"


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


class Ledger:
    """Collects a chapter's claims; ``report()`` shows them, writes JSON and enforces them.

    Parameters
    ----------
    chapter : short chapter name, used in the JSON file name ``<chapter>.<scale>.json``.
    scale : the scale the chapter ran at (validated by ``runtime.scale``).
    device : what the chapter ran on (string), recorded in the JSON.
    results_dir : where the JSON goes (default ``runtime.results_dir()``).
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
        if tol is not None and tol < 0 or rtol is not None and rtol < 0:
            raise ValueError(f"tolerances must be >= 0 (tol={tol}, rtol={rtol})")
        if (tol is not None or rtol is not None) and p is None:
            raise ValueError(f"claim {id!r}: tol/rtol need a predicted value")
        if p is not None and tol is None and rtol is None:
            raise ValueError(f"claim {id!r}: a predicted value needs tol or rtol")
        if p is None and lo_ is None and hi_ is None:
            raise ValueError(f"claim {id!r}: give predicted+tol/rtol or an interval lo/hi")

        parts = []
        if p is not None:
            width = max(tol or 0.0, (rtol or 0.0) * abs(p))
            parts.append(f"|m - {_fmt(p)}| <= {_fmt(width)}")
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
            verdict = FAIL if kind == "hard" else INCONCLUSIVE
            note = (note + "; " if note else "") + "non-finite measurement"
        else:
            ok = True
            if p is not None:
                ok &= abs(m - p) <= max(tol or 0.0, (rtol or 0.0) * abs(p))
            if lo_ is not None:
                ok &= m >= lo_
            if hi_ is not None:
                ok &= m <= hi_
            verdict = PASS if ok else (FAIL if kind == "hard" else NOT_REPRODUCED)
        claim = Claim(id, statement, kind, m, p, tolerance, verdict, note)
        self.claims[id] = claim
        return claim

    def inconclusive(self, id: str, statement: str, measured: Any = None, *, note: str) -> Claim:
        """Record a soft claim that this scale cannot resolve; ``note`` says why."""
        if id in self.claims:
            raise ValueError(f"claim id {id!r} recorded twice in ledger {self.chapter!r}")
        m = _as_number(measured, "measured") if measured is not None else None
        claim = Claim(id, statement, "soft", m, None, "", INCONCLUSIVE, note)
        self.claims[id] = claim
        return claim

    # ------------------------------------------------------------------ output
    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims.values() if c.verdict == FAIL]

    def table(self):
        """The claims as a pandas DataFrame (one row per claim)."""
        import pandas as pd

        rows = [
            {"id": c.id, "kind": c.kind, "verdict": c.verdict,
             "measured": _fmt(c.measured) if c.measured is not None else "",
             "predicted": _fmt(c.predicted), "tolerance": c.tolerance,
             "statement": c.statement, "note": c.note}
            for c in self.claims.values()
        ]
        cols = ["id", "kind", "verdict", "measured", "predicted", "tolerance", "statement", "note"]
        return pd.DataFrame(rows, columns=cols)

    def to_dict(self, wall_s: float | None = None) -> dict:
        return {
            "chapter": self.chapter,
            "scale": self.scale,
            "device": self.device,
            "wall_s": round(wall_s if wall_s is not None else runtime.wall_time(), 3),
            "versions": runtime.versions(),
            "claims": [asdict(c) for c in self.claims.values()],
        }

    def path(self) -> Path:
        d = self.results_dir if self.results_dir is not None else runtime.results_dir()
        return d / f"{self.chapter}.{self.scale}.json"

    def write(self) -> Path:
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2, default=float) + "\n")
        return path

    def report(self, *, show: bool = True, write: bool = True, raise_on_fail: bool = True):
        """Show the table, write the JSON, and raise ``ClaimFailed`` if a hard claim failed."""
        df = self.table()
        if show:
            counts = df["verdict"].value_counts().to_dict()
            summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS if counts.get(v))
            print(f"{self.chapter} @ {self.scale}: {len(df)} claims: {summary}")
            runtime.display(df)
        if write:
            path = self.write()
            if show:
                print(f"[claims] {path}")
        if raise_on_fail and self.failed:
            ids = ", ".join(c.id for c in self.failed)
            raise ClaimFailed(f"{len(self.failed)} hard claim(s) failed in {self.chapter}: {ids}")
        return df


def load_results(directory: str | Path | None = None) -> list[dict]:
    """Read every ``<chapter>.<scale>.json`` ledger in ``directory`` (default results_dir)."""
    d = Path(directory) if directory is not None else runtime.results_dir()
    if not d.is_dir():
        return []
    out = []
    for p in sorted(d.glob("*.json")):
        try:
            out.append(json.loads(p.read_text()))
        except json.JSONDecodeError:
            continue
    return out


def expected_chapters(toc_path: str | Path | None = None) -> list[str]:
    """Ledger names of the chapters listed in ``_toc.yml``: ``book/03_sparse_scaling`` ->
    ``sparse_scaling`` (a chapter file is ``NN_<ledger name>``)."""
    import re

    import yaml

    path = Path(toc_path) if toc_path is not None else runtime.repo_root() / "_toc.yml"
    if not path.exists():
        return []
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(str(node["file"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(yaml.safe_load(path.read_text()))
    out = []
    for f in files:
        m = re.fullmatch(r"(?:.*/)?\d\d_(\w+)", f)
        if m:
            out.append(m.group(1))
    return out


def collect(results: list[dict], chapters: list[str], scale: str):
    """One table of every claim of every chapter at ``scale``.

    Returns (summary, claims): ``summary`` has a row per chapter (a chapter without a
    ledger at this scale shows as ``not run``, never as passed); ``claims`` a row per claim.
    """
    import pandas as pd

    scale = runtime.scale(scale)
    by_chapter = {r["chapter"]: r for r in results if r.get("scale") == scale}
    names = list(chapters) + [c for c in sorted(by_chapter) if c not in chapters]
    srows, crows = [], []
    for name in names:
        r = by_chapter.get(name)
        if r is None:
            srows.append({"chapter": name, "status": "not run", "claims": 0,
                          **{v: 0 for v in VERDICTS}, "wall_s": None, "device": ""})
            continue
        verdicts = [c["verdict"] for c in r["claims"]]
        status = "failed" if FAIL in verdicts else "ran"
        srows.append({"chapter": name, "status": status, "claims": len(verdicts),
                      **{v: verdicts.count(v) for v in VERDICTS},
                      "wall_s": r.get("wall_s"), "device": r.get("device", "")})
        for c in r["claims"]:
            crows.append({"chapter": name, "id": c["id"], "kind": c["kind"],
                          "verdict": c["verdict"],
                          "measured": _fmt(c["measured"]) if c["measured"] is not None else "",
                          "tolerance": c["tolerance"], "statement": c["statement"],
                          "note": c.get("note", "")})
    return pd.DataFrame(srows), pd.DataFrame(crows)
