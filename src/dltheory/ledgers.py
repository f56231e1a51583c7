"""Reading claims ledgers back: validation, staleness, and the reproduction tables.

Layering: this module imports ``dltheory.claims`` (which writes ledgers); ``claims`` never
imports it.

Every chapter writes ``<chapter>.<scale>.json`` (see ``dltheory.claims``). This module reads
a folder of them for the reproduction page and gives each chapter one status:

``ran``      a ledger whose sources match the tree being built, no claim failed;
``failed``   the same, with a FAIL (the chapter raised);
``stale``    the chapter file or the package changed since the ledger was written (or the
             ledger predates provenance records), so its verdicts describe other code;
``not run``  no ledger at this scale: never shown as passed;
``error``    a corrupt, truncated, misnamed, duplicate or unknown ledger (named, never
             skipped silently).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import runtime
from .claims import EVIDENCE, VERDICTS, WEAK_RESOLUTION, _claims_frame, _pct, style_table

REQUIRED = ("chapter", "scale", "claims")
CLAIM_KEYS = ("id", "statement", "kind", "measured", "verdict", "tolerance")
STATUSES = ("ran", "failed", "stale", "not run", "error")

__all__ = ["scan", "load_results", "expected_chapters", "staleness", "collect", "show_page",
           "summary_markdown", "compact_summary", "STATUSES"]


def _problem(data) -> str | None:
    if not isinstance(data, dict):
        return "not a JSON object"
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return f"missing keys {missing}"
    if not isinstance(data["claims"], list):
        return "'claims' is not a list"
    for i, c in enumerate(data["claims"]):
        if not isinstance(c, dict) or any(k not in c for k in CLAIM_KEYS):
            return f"claim #{i} lacks one of {list(CLAIM_KEYS)}"
    return None


def scan(directory: str | Path | None = None) -> tuple[list[dict], list[dict]]:
    """Read every ``*.json`` in ``directory`` (default ``runtime.results_dir()``).

    Returns ``(ledgers, errors)``: ``ledgers`` are the well-formed ones (each with a
    ``"_file"`` key holding its file name); ``errors`` one ``{"file", "chapter", "scale",
    "error"}`` per unreadable, malformed, misnamed or duplicate file.
    """
    d = Path(directory) if directory is not None else runtime.results_dir()
    if not d.is_dir():
        return [], []
    ledgers, errors, seen = [], [], {}
    for p in sorted(d.glob("*.json")):
        stem = p.name[: -len(".json")]
        chapter, _, scale = stem.rpartition(".")
        err = None
        try:
            data = json.loads(p.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            data, err = None, f"unreadable or truncated JSON ({type(e).__name__})"
        if err is None:
            err = _problem(data)
        if err is None and (data["chapter"], data["scale"]) != (chapter, scale):
            err = (f"file name says {chapter or '?'}.{scale or '?'} but it holds "
                   f"{data['chapter']}.{data['scale']}")
        if err is None and (chapter, scale) in seen:
            err = f"duplicate of {seen[(chapter, scale)]}"
        if err is not None:
            errors.append({"file": p.name, "chapter": chapter, "scale": scale, "error": err})
            continue
        seen[(chapter, scale)] = p.name
        ledgers.append({**data, "_file": p.name})
    return ledgers, errors


def load_results(directory: str | Path | None = None) -> list[dict]:
    """The well-formed ledgers in ``directory`` (``scan`` also returns the bad ones)."""
    return scan(directory)[0]


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
    return [m.group(1) for f in files if (m := re.fullmatch(r"(?:.*/)?\d\d_(\w+)", f))]


def staleness(ledger: dict, root: str | Path | None = None) -> str | None:
    """Why ``ledger`` no longer describes the tree at ``root`` (``None`` when current)."""
    from . import provenance

    prov = ledger.get("provenance")
    if not isinstance(prov, dict) or "source_sha256" not in prov:
        return "written before provenance was recorded"
    shas = prov["source_sha256"] or {}
    reasons = []
    src = provenance.chapter_source(ledger["chapter"], root)
    if src is not None and shas.get("chapter") and shas["chapter"] != provenance.file_sha256(src):
        reasons.append(f"chapter source {src.name} changed")
    if shas.get("package") and shas["package"] != provenance.package_sha256():
        reasons.append("package dltheory changed")
    return "; ".join(reasons) or None


def collect(results: list[dict], chapters: list[str], scale: str, *,
            errors: list[dict] | None = None, root: str | Path | None = None):
    """One table of every claim of every chapter at ``scale``.

    Returns ``(summary, claims)``: ``summary`` has a row per chapter with its status (see
    the module docstring), evidence and identity counts, the median resolution of its
    evidence, and the reason for a stale or error status; ``claims`` a row per claim.
    Ledgers of chapters not in ``chapters`` are reported as errors (unknown chapter).
    """
    import numpy as np
    import pandas as pd

    scale = runtime.scale(scale)
    errors = [e for e in (errors or []) if e.get("scale") not in set(runtime.SCALES) - {scale}]
    by_chapter = {}
    for r in results:
        if r.get("scale") != scale:
            continue
        if r["chapter"] not in chapters:
            errors.append({"file": r.get("_file", f"{r['chapter']}.{scale}.json"),
                           "chapter": r["chapter"], "scale": scale,
                           "error": "unknown chapter (not in _toc.yml)"})
            continue
        by_chapter[r["chapter"]] = r
    err_by_chapter = {e["chapter"]: e for e in errors}
    srows, frames = [], []
    for name in chapters:
        r = by_chapter.get(name)
        row = {"chapter": name, "status": "not run", "evidence": 0,
               **{v: 0 for v in VERDICTS}, "weak": 0, "identities": 0,
               "median resolution": "", "wall s": None, "device": "", "detail": ""}
        if r is None:
            if name in err_by_chapter:
                row.update(status="error", detail=err_by_chapter[name]["error"])
            srows.append(row)
            continue
        ev = [c for c in r["claims"] if c["kind"] in EVIDENCE]
        res = [c["resolution"] for c in ev if c.get("resolution") is not None]
        stale = staleness(r, root)
        failed = any(c["verdict"] == "FAIL" for c in r["claims"])
        row.update(
            status="stale" if stale else ("failed" if failed else "ran"),
            evidence=len(ev), **{v: sum(c["verdict"] == v for c in ev) for v in VERDICTS},
            weak=sum(x > WEAK_RESOLUTION for x in res),
            identities=sum(c["kind"] == "identity" for c in r["claims"]),
            **{"median resolution": _pct(float(np.median(res))) if res else "",
               "wall s": round(r["wall_s"], 1) if r.get("wall_s") is not None else None,
               "device": r.get("device", ""),
               "detail": stale or ""})
        if name in err_by_chapter:   # e.g. a duplicate beside this ledger: ambiguous
            row.update(status="error", detail=err_by_chapter[name]["error"])
        srows.append(row)
        frames.append(_claims_frame(r["claims"], extra={"chapter": name}))
    for e in errors:
        if e["chapter"] not in chapters:
            srows.append({"chapter": e["chapter"] or e["file"], "status": "error",
                          "detail": f"{e['file']}: {e['error']}"})
    claims = (pd.concat(frames, ignore_index=True) if frames
              else _claims_frame([], extra={"chapter": ""}))
    return pd.DataFrame(srows), claims


def compact_summary(summary):
    """The summary for display: verdict counts in one column, no device column."""
    def verdicts(r):
        parts = [f"{int(r[v])} {v}" for v in VERDICTS if r.get(v) == r.get(v) and r.get(v)]
        weak = r.get("weak")
        if weak == weak and weak:
            parts.append(f"({int(weak)} weak)")
        return ", ".join(parts)

    out = summary.copy()
    out["evidence verdicts"] = out.apply(verdicts, axis=1) if len(out) else []
    if "wall s" in out.columns:
        out["wall s"] = [f"{x:.0f}" if x == x and x is not None else "" for x in out["wall s"]]
    out = out.rename(columns={"evidence verdicts": "evidence", "evidence": "n evidence",
                              "median resolution": "median res."})
    keep = ["chapter", "status", "evidence", "identities", "median res.", "wall s", "detail"]
    return out[[c for c in keep if c in out.columns]]


def summary_markdown(summary) -> str:
    """The per-chapter summary as a Markdown table (for README.md)."""
    cols = ["chapter", "status", "evidence", "PASS", "FAIL", "NOT REPRODUCED", "INCONCLUSIVE",
            "weak", "identities", "median resolution"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in summary.iterrows():
        cells = ["" if (v := r.get(c)) is None or v != v else str(v) for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def show_page(scale: str, directory: str | Path | None = None, *, markdown: bool = False):
    """What the reproduction page shows: the summary, then every claim (``markdown``: the
    summary as a Markdown table only). Returns ``(summary, claims)``."""
    found, errors = scan(directory)
    chapters = expected_chapters()
    summary, table = collect(found, chapters, scale, errors=errors)
    if markdown:
        print(summary_markdown(summary))
        return summary, table
    where = os.path.relpath(runtime.results_dir(), runtime.repo_root()) \
        if _inside(runtime.results_dir(), runtime.repo_root()) else "$DLTHEORY_RESULTS_DIR"
    print(f"scale {scale}: {len(found)} ledger(s) read from {where}, {len(errors)} unreadable")
    runtime.display(style_table(compact_summary(summary)))
    if not any(r.get("scale") == scale for r in found):
        print(f"No ledger at scale {scale!r} yet. Run a chapter to the end (its last cell "
              f"writes {where}/<chapter>.{scale}.json in this runtime), then run this page "
              f"again; in Colab: open a chapter, Runtime -> Run all, then come back here.")
    return summary, table


def _inside(path: Path, root: Path) -> bool:
    try:
        Path(path).resolve().relative_to(Path(root).resolve())
        return True
    except ValueError:
        return False
