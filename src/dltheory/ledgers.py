"""Reading claims ledgers back: validation, staleness, and the reproduction tables.

Layering: this module imports ``dltheory.claims`` (which writes ledgers); ``claims`` never
imports it.

Every chapter writes ``<chapter>.<scale>.json`` (see ``dltheory.claims``). This module reads
a folder of them for the reproduction page and gives each chapter one status:

``ran``      a ledger whose sources match the tree being built, no claim failed;
``failed``   the same, with a FAIL (the chapter raised);
``stale``    the chapter file or the package changed since the ledger was written (or the
             ledger predates provenance records), so its verdicts describe other code;
``mutated``  a ledger written with a planted error active (``identity["mutation"]``): its
             verdicts describe deliberately broken code; ``MUTATED: <id>`` in the detail;
``off defaults`` a ledger of a run at other knob settings or another seed than the
             preset's (``identity["defaults"]`` False), no claim failed; the settings in
             the detail (``off defaults: SEED=3, ALPHA1=2.0``);
``not run``  no ledger at this scale: never shown as passed;
``error``    a corrupt, truncated, misnamed, duplicate or unknown ledger, or one whose
             written verdicts do not follow from its own stored values (named, never
             skipped silently).

Re-derivation: a schema-3 ledger stores each claim's measured value and check parameters,
so every written verdict and resolution is derived again here with ``claims.judge`` (the
rule the chapter ran). A claim whose verdict does not follow, or whose kind or verdict is
unknown, is shown with verdict ``error`` and counted as ``invalid`` (never in the verdict
counts), and its ledger's status is ``error``, the reason naming the claim. An older
schema cannot be re-derived: its ledger is ``stale`` (its sources changed since), or
``error`` if its provenance claims today's sources.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from . import runtime
from .claims import (
    EVIDENCE,
    FAIL,
    KINDS,
    SCHEMA,
    VERDICTS,
    Check,
    _as_number,
    _claims_frame,
    _fmt,
    _pct,
    _show,
    is_weak,
    judge,
    style_table,
)

REQUIRED = ("chapter", "scale", "claims")
CLAIM_KEYS = ("id", "statement", "kind", "measured", "verdict", "tolerance")
STATUSES = ("ran", "failed", "stale", "mutated", "off defaults", "not run", "error")

__all__ = ["scan", "load_results", "expected_chapters", "staleness", "claim_problem",
           "budget_text", "collect", "show_page", "summary_markdown", "compact_summary",
           "STATUSES", "identity_status", "non_pass_first", "anchor_claims", "times_table"]


def identity_status(ledger: dict) -> tuple[str | None, str]:
    """``("mutated", "MUTATED: <id>")``, ``("off defaults", "off defaults: SEED=3, ...")``
    or ``(None, "")`` from a ledger's ``identity`` (read defensively: a ledger without one,
    written before identities existed, is taken as a default, unmutated run)."""
    ident = ledger.get("identity")
    if not isinstance(ident, dict):
        return None, ""
    mutation = ident.get("mutation")
    if mutation:
        return "mutated", f"MUTATED: {mutation}"
    if ident.get("defaults") is False:
        knobs = ident.get("knobs") if isinstance(ident.get("knobs"), dict) else {}
        seed = ident.get("seed")
        parts = ([f"SEED={seed}"] if seed is not None and "SEED" not in knobs else []) + \
            [f"{k}={v}" for k, v in knobs.items()]
        return "off defaults", "off defaults: " + (", ".join(parts) or "settings not recorded")
    return None, ""


def non_pass_first(claims: list[dict]) -> list[dict]:
    """The claims with every non-PASS verdict first (each group in ledger order)."""
    return sorted(claims, key=lambda c: c.get("verdict") == "PASS")


def anchor_claims(styler, ids) -> Any:
    """Give each claim row of a ``claims.style_table`` Styler an HTML anchor: the claim id
    as the ``id`` attribute of an empty span in its first cell, so that
    ``reproduction.html#SS.alpha_N`` links to the claim's row. Returns the Styler."""
    import html as _html

    data = styler.data
    col = "claim" if "claim" in data.columns else data.columns[0]
    for row, cid in zip(data.index, ids, strict=True):
        data.at[row, col] = f'<span id="{_html.escape(str(cid), quote=True)}"></span>' \
            + str(data.at[row, col])
    return styler


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
        if not all(isinstance(c[k], str) for k in ("id", "statement", "tolerance")):
            return f"claim #{i}: id, statement and tolerance must be text"
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


def toc_files(toc_path: str | Path | None = None) -> list[str]:
    """Every ``file`` entry of ``_toc.yml`` (default: the repository's), in order."""
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
    return files


def expected_chapters(toc_path: str | Path | None = None) -> list[str]:
    """Ledger names of the chapters listed in ``_toc.yml``: ``book/03_sparse_scaling`` ->
    ``sparse_scaling`` (a chapter file is ``NN_<ledger name>``)."""
    import re

    files = toc_files(toc_path)
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
    if src is not None and shas.get("chapter") and shas["chapter"] != provenance.code_sha256(src):
        reasons.append(f"the code of {src.name} changed")
    chapter = ledger["chapter"] if ledger["chapter"] in provenance.CHAPTER_MODULES else None
    if shas.get("package") and shas["package"] != provenance.package_sha256(chapter):
        reasons.append("the package code it runs changed")
    return "; ".join(reasons) or None


def claim_problem(claim: dict, rederive: bool = True) -> str | None:
    """Why ``claim`` (one JSON claim) cannot be shown as written, or ``None``.

    An unknown kind or verdict is always a problem; with ``rederive`` (schema 3) the
    verdict and resolution must also be what ``claims.judge`` derives from the stored
    measured value and check parameters, and the shown prediction the one checked.
    """
    cid, kind, written = claim.get("id", "?"), claim["kind"], claim["verdict"]
    if kind not in KINDS:
        return f"{cid}: unknown kind {kind!r}"
    if written not in VERDICTS:
        return f"{cid}: unknown verdict {written!r}"
    if not rederive:
        return None
    try:
        m = _as_number(claim["measured"], "measured")
        check = Check.from_dict(claim.get("check"))
        j = judge(kind, m, check)
        shown = _as_number(claim.get("predicted"), "predicted")
    except (TypeError, ValueError) as err:
        return f"corrupt: {cid} check not re-derivable ({err})"
    if j.verdict != written:
        why = (f"measured {_fmt(m)} {'within' if j.within else 'outside'} {j.tolerance}"
               if j.within is not None and not j.notes
               else f"re-derived {j.verdict}" + (f" ({'; '.join(j.notes)})" if j.notes else ""))
        return f"tampered or corrupt: {cid} written {written}, {why}"
    r = claim.get("resolution")
    if not ((r is None and j.resolution is None)
            or (isinstance(r, (int, float)) and j.resolution is not None
                and math.isclose(r, j.resolution, rel_tol=1e-9))):
        return (f"tampered or corrupt: {cid} written resolution {r!r}, re-derived "
                f"{_pct(j.resolution) or None}")
    if shown != check.predicted:
        return f"tampered or corrupt: {cid} shows predicted {shown}, checked {check.predicted}"
    return None


def _schema_problem(ledger: dict, stale: str | None) -> tuple[str, str] | None:
    """``(status, reason)`` for a ledger this reader cannot re-derive: an older schema is
    ``stale`` (its sources changed since), or ``error`` if its provenance claims today's
    sources (which write schema ``SCHEMA``); an unknown schema is an ``error``."""
    schema = ledger.get("schema")
    if schema == SCHEMA:
        return None
    if schema is None or (isinstance(schema, int) and not isinstance(schema, bool)
                          and schema < SCHEMA):
        old = f"{'no schema' if schema is None else f'schema {schema}'}: verdicts not " \
              f"re-derivable"
        if stale:
            return "stale", f"{old}; {stale}"
        return "error", f"{old}, yet its provenance matches today's sources (schema {SCHEMA})"
    return "error", f"schema {schema!r} unknown to this reader (schema {SCHEMA})"


def budget_text(budget) -> str | None:
    """What the reproduction page says about a run's budget: ``—`` (no budget set or no
    record), ``full``, or the shortest sweep as ``3/5 rounds`` (``+k`` other sweeps short);
    ``None`` for a malformed record."""
    if budget is None:
        return "—"
    if not isinstance(budget, dict) or not isinstance(budget.get("complete"), bool):
        return None
    rounds = budget.get("rounds") or {}
    try:
        short = sorted((d / p, d, p) for d, p in rounds.values() if d < p)
    except (TypeError, ValueError, ZeroDivisionError, AttributeError):
        return None
    if short:
        _, d, p = short[0]
        return f"{d}/{p} rounds" + (f" (+{len(short) - 1} sweeps short)" if len(short) > 1
                                    else "")
    if not budget["complete"]:
        return "partial"
    return "—" if budget.get("seconds") is None else "full"


def _judged(ledger: dict, stale: str | None) -> tuple[list[dict], list[str], str | None]:
    """The ledger's claims as shown (a claim with a problem shows verdict ``error``, its
    reason in the note), the problems, and the status they impose (or ``None``)."""
    schema = _schema_problem(ledger, stale)
    rows, problems = [], []
    for c in ledger["claims"]:
        why = claim_problem(c, rederive=schema is None)
        if why:
            problems.append(why)
            c = {**c, "verdict": "error", "resolution": None,
                 "note": "; ".join(x for x in (why, _show(c.get("note"))) if x)}
        rows.append(c)
    if budget_text(ledger.get("budget")) is None:
        problems.append(f"budget record malformed: {ledger.get('budget')!r}"[:200])
    status = "error" if problems else schema[0] if schema else None
    if schema:
        problems.insert(0, schema[1])
    return rows, problems, status


def _named(problems: list[str]) -> str:
    return "; ".join(problems[:2]) + (f" (+{len(problems) - 2} more)" if len(problems) > 2
                                      else "")


def collect(results: list[dict], chapters: list[str], scale: str, *,
            errors: list[dict] | None = None, root: str | Path | None = None):
    """One table of every claim of every chapter at ``scale``.

    Returns ``(summary, claims)``: ``summary`` has a row per chapter with its status (see
    the module docstring), evidence verdict counts, ``invalid`` (claims with an unknown
    kind or verdict, or whose written verdict does not re-derive: counted here, never in
    the verdict columns), identity and derivation counts, the median resolution of its
    evidence, the budget, and the reason for a stale or error status; ``claims`` a row
    per claim. Ledgers of chapters not in ``chapters`` are reported as errors.
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
               **{v: 0 for v in VERDICTS}, "weak": 0, "invalid": 0, "identities": 0,
               "derivations": 0, "median resolution": "", "budget": "", "wall s": None,
               "device": "", "detail": ""}
        if r is None:
            if name in err_by_chapter:
                row.update(status="error", detail=err_by_chapter[name]["error"])
            srows.append(row)
            continue
        stale = staleness(r, root)
        shown, problems, status = _judged(r, stale)
        valid = [c for c in shown if c["verdict"] != "error"]
        ev = [c for c in valid if c["kind"] in EVIDENCE]
        res = [c["resolution"] for c in ev if c.get("resolution") is not None]
        failed = any(c["verdict"] == FAIL for c in valid)
        who, who_detail = identity_status(r)
        base = status or ("stale" if stale else "failed" if failed else "ran")
        if who == "mutated" and base != "error":
            base = "mutated"
        elif who == "off defaults" and base == "ran":
            base = "off defaults"
        row.update(
            status=base,
            evidence=len(ev), **{v: sum(c["verdict"] == v for c in ev) for v in VERDICTS},
            weak=sum(is_weak(c["kind"], c["verdict"], c.get("resolution")) for c in ev),
            invalid=len(shown) - len(valid),
            identities=sum(c["kind"] == "identity" for c in valid),
            derivations=sum(c["kind"] == "derivation" for c in valid),
            budget=budget_text(r.get("budget")) or "invalid",
            **{"median resolution": _pct(float(np.median(res))) if res else "",
               "wall s": round(r["wall_s"], 1) if r.get("wall_s") is not None else None,
               "device": r.get("device", ""),
               "detail": "; ".join(x for x in (who_detail, _named(problems) if problems
                                                else stale or "") if x)})
        if name in err_by_chapter:   # e.g. a duplicate beside this ledger: ambiguous
            row.update(status="error", detail=err_by_chapter[name]["error"])
        srows.append(row)
        frames.append(_claims_frame(non_pass_first(shown), extra={"chapter": name}))
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
        for key, text in (("weak", "({} weak)"), ("invalid", "{} invalid")):
            n = r.get(key)
            if n == n and n:
                parts.append(text.format(int(n)))
        return ", ".join(parts)

    out = summary.copy()
    out["evidence verdicts"] = out.apply(verdicts, axis=1) if len(out) else []
    if "wall s" in out.columns:
        out["wall s"] = [f"{x:.0f}" if x == x and x is not None else "" for x in out["wall s"]]
    out = out.rename(columns={"evidence verdicts": "evidence", "evidence": "n evidence",
                              "median resolution": "median res."})
    keep = ["chapter", "status", "evidence", "identities", "derivations", "median res.",
            "budget", "wall s", "detail"]
    return out[[c for c in keep if c in out.columns]]


def summary_markdown(summary) -> str:
    """The per-chapter summary as a Markdown table (for README.md)."""
    cols = ["chapter", "status", "evidence", "PASS", "FAIL", "NOT REPRODUCED", "INCONCLUSIVE",
            "weak", "invalid", "identities", "derivations", "median resolution", "budget"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in summary.iterrows():
        cells = ["" if (v := r.get(c)) is None or v != v else str(v) for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def times_table(record: dict | None = None):
    """The one record of measured times (:func:`dltheory.budget.times`) as a table: one row
    per key (``what`` split at its first ``/``: ``source``, the rest ``measurement``), its
    seconds, when, the cores and the 1-minute load then, and any other facts stored with it
    (``spent``, ``tasks``, ...). Sorted by key; empty when nothing was recorded."""
    import pandas as pd

    from . import budget

    rec = budget.times() if record is None else record
    rows = []
    for key, v in sorted(rec.items()):
        v = v if isinstance(v, dict) else {"seconds": v}
        src, _, what = key.partition("/")
        load = v.get("load") or [None]
        extra = {k: x for k, x in v.items() if k not in ("seconds", "when", "load", "cores")}
        rows.append({"source": src, "measurement": what or src,
                     "seconds": round(float(v["seconds"]), 1) if v.get("seconds") is not None
                     else None,
                     "when": v.get("when"), "cores": v.get("cores"), "load (1 min)": load[0],
                     "facts": ", ".join(f"{k} {x}" for k, x in extra.items())})
    return pd.DataFrame(rows, columns=["source", "measurement", "seconds", "when", "cores",
                                       "load (1 min)", "facts"])


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
    n_scale = sum(r.get("scale") == scale for r in found)
    print(f"scale {scale}: {n_scale} ledger(s) read from {where}, {len(errors)} unreadable")
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
