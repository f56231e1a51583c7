"""Reading claims ledgers back: validation, staleness, and the reproduction tables.

Layering: this module imports ``dltheory.claims`` (which writes ledgers); ``claims`` never
imports it.

Every chapter writes ``<chapter>.<scale>.json`` (see ``dltheory.claims``). This module reads
a folder of them for the reproduction page and gives each chapter one status:

- ``ran``: a ledger whose sources match the tree being built, no claim failed;
- ``failed``: the same, with a FAIL (the chapter raised);
- ``stale``: the chapter file or the package changed since the ledger was written (or the
  ledger predates provenance records), so its verdicts describe other code;
- ``mutated``: a ledger written with a planted error active (``identity["mutation"]``): its
  verdicts describe deliberately broken code; ``MUTATED: <id>`` in the detail;
- ``off defaults``: a ledger of a run at other knob settings or another seed than the
  preset's (``identity["defaults"]`` False), no claim failed; the settings in the detail
  (``off defaults: SEED=3, ALPHA1=2.0``);
- ``not run``: no ledger at this scale: never shown as passed;
- ``error``: a corrupt, truncated, misnamed, duplicate or unknown ledger, or one whose
  written verdicts do not follow from its own stored values (named, never skipped
  silently).

Re-derivation: a schema-3 ledger stores each claim's measured value and check parameters,
so every written verdict and resolution is derived again here with ``claims.judge`` (the
rule the chapter ran). A claim whose verdict does not follow, or whose kind or verdict is
unknown, is shown with verdict ``error`` and counted as ``invalid`` (never in the verdict
counts), and its ledger's status is ``error``, the reason naming the claim. An older
schema cannot be re-derived: its ledger is ``stale`` (its sources changed since), or
``error`` if its provenance claims today's sources.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from . import records, runtime
from .claims import (
    EVIDENCE,
    FAIL,
    KINDS,
    SCHEMA,
    VERDICTS,
    Check,
    Html,
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
_ANY_NUMBER = records.Maybe(records.REAL)
#: what a ledger must look like before any field of it is shown (``records.problem``);
#: ``measured`` and ``predicted`` may be anything: ``claim_problem`` re-derives them
CLAIM_SHAPE = {"id": str, "statement": str, "kind": str, "verdict": str, "tolerance": str,
               "measured": records.ANY, "predicted?": records.ANY,
               "note?": records.Maybe(str), "resolution?": _ANY_NUMBER,
               "check?": records.Maybe(dict)}
LEDGER_SHAPE = {"chapter": str, "scale": str, "claims": [CLAIM_SHAPE],
                "identity?": records.Maybe(dict), "wall_s?": _ANY_NUMBER,
                "device?": records.Maybe(str),
                "provenance?": records.Maybe({"source_sha256?": records.Maybe(
                    records.Each(records.Maybe(str)))})}
STATUSES = ("ran", "failed", "stale", "mutated", "off defaults", "not run", "error")

__all__ = ["scan", "load_results", "expected_chapters", "staleness", "claim_problem",
           "budget_text", "collect", "show_page", "summary_markdown", "compact_summary",
           "STATUSES", "identity_status", "non_pass_first", "anchor_claims", "times_table",
           "read_times",
           "claim_links", "claim_link", "claim_sites", "book_sections", "heading_slug"]


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


def anchor_claims(styler, ids, links: dict | None = None) -> Any:
    """Give each claim row of a ``claims.style_table`` Styler an HTML anchor: the claim id
    as the ``id`` attribute of an empty span in its first cell, so that
    ``reproduction.html#SS.alpha_N`` links to the claim's row. With ``links``
    (``claim_links``), a line under the id links to the section that records the claim
    and to its code. Returns the Styler."""
    import html as _html

    data = styler.data
    col = "claim" if "claim" in data.columns else data.columns[0]
    for row, cid in zip(data.index, ids, strict=True):
        old = data.at[row, col]   # Html from style_table, else text to escape
        cell = f'<span id="{_html.escape(str(cid), quote=True)}"></span>' + (
            old if isinstance(old, Html) else _html.escape(str(old)))
        found = (links or {}).get(str(cid), {})
        parts = [f'<a href="{_html.escape(href, quote=True)}" '
                 f'title="{_html.escape(title, quote=True)}">{_html.escape(text)}</a>'
                 for key in ("section", "code") if key in found
                 for text, href, title in [found[key]]]
        if parts:
            cell += '<br><span style="font-size:0.85em">' + " · ".join(parts) + "</span>"
        data.at[row, col] = Html(cell)
    return styler


def _problem(data) -> str | None:
    if not isinstance(data, dict):
        return "not a JSON object"
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return f"missing keys {missing}"
    return records.problem(data, LEDGER_SHAPE)


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
        data, err = records.read(p)
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
        if r is not None:
            try:
                shown, facts = _chapter_row(r, root)
            except Exception as err:   # a ledger no check foresaw: named, never a crash
                why = f"{type(err).__name__}: {err}"
                row.update(status="error", detail=f"cannot be shown ({why[:200]})")
            else:
                row.update(facts)
                frames.append(_claims_frame(non_pass_first(shown), extra={"chapter": name}))
        if name in err_by_chapter:   # e.g. a duplicate beside this ledger: ambiguous
            row.update(status="error", detail=err_by_chapter[name]["error"])
        srows.append(row)
    for e in errors:
        if e["chapter"] not in chapters:
            srows.append({"chapter": e["chapter"] or e["file"], "status": "error",
                          "detail": f"{e['file']}: {e['error']}"})
    claims = (pd.concat(frames, ignore_index=True) if frames
              else _claims_frame([], extra={"chapter": ""}))
    return pd.DataFrame(srows), claims


def _status(r: dict, shown: list[dict], status: str | None, stale: str | None) -> str:
    """A ledger's status (see the module docstring) from its judged claims."""
    failed = any(c["verdict"] == FAIL for c in shown)
    base = status or ("stale" if stale else "failed" if failed else "ran")
    who = identity_status(r)[0]
    if who == "mutated" and base != "error":
        return "mutated"
    return "off defaults" if who == "off defaults" and base == "ran" else base


def _counts(shown: list[dict]) -> dict:
    """Verdict counts of the evidence, ``weak``, ``invalid``, identities, derivations and
    the median resolution, over the claims as shown."""
    import numpy as np

    valid = [c for c in shown if c["verdict"] != "error"]
    ev = [c for c in valid if c["kind"] in EVIDENCE]
    res = [c["resolution"] for c in ev if c.get("resolution") is not None]
    return {"evidence": len(ev), **{v: sum(c["verdict"] == v for c in ev) for v in VERDICTS},
            "weak": sum(is_weak(c["kind"], c["verdict"], c.get("resolution")) for c in ev),
            "invalid": len(shown) - len(valid),
            "identities": sum(c["kind"] == "identity" for c in valid),
            "derivations": sum(c["kind"] == "derivation" for c in valid),
            "median resolution": _pct(float(np.median(res))) if res else ""}


def _chapter_row(r: dict, root) -> tuple[list[dict], dict]:
    """The claims of one well-formed ledger as shown (``_judged``) and its summary facts."""
    stale = staleness(r, root)
    shown, problems, status = _judged(r, stale)
    wall = r.get("wall_s")
    detail = (identity_status(r)[1], _named(problems) if problems else stale or "")
    return shown, {
        "status": _status(r, [c for c in shown if c["verdict"] != "error"], status, stale),
        **_counts(shown), "budget": budget_text(r.get("budget")) or "invalid",
        "wall s": round(wall, 1) if wall is not None else None,
        "device": r.get("device") or "", "detail": "; ".join(x for x in detail if x)}


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
    import html

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in summary.iterrows():   # a ledger's text, escaped: no markup, no cell break
        cells = ["" if (v := r.get(c)) is None or v != v
                 else html.escape(" ".join(str(v).split())).replace("|", "\\|") for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: one entry of the times record (``budget.write_times``); other facts are allowed
TIME_SHAPE = {"seconds": records.Maybe(records.NUMBER), "when?": records.Maybe(str),
              "cores?": records.Maybe(records.INT),
              "load?": records.Maybe([records.Maybe(records.NUMBER)])}
_FACT_CHARS = 200   # a fact longer than this is cut on the page


def read_times(path: str | Path) -> tuple[dict, str | None]:
    """The times record at ``path`` (``budget.times_path(root)``) as ``(record, None)``, or
    ``({}, why)`` when it is missing, unreadable, cut, too large or nested too deep, or
    not a JSON object: the page says why and goes on."""
    data, why = records.read(path)
    if why is None and not isinstance(data, dict):
        why = f"not a JSON object ({type(data).__name__})"
    return (data, None) if why is None else ({}, why)


def _time_row(key: str, v) -> dict:
    """One row of ``times_table``; an entry of the wrong shape is a row that says so."""
    src, _, what = str(key).partition("/")
    row = {"source": src, "measurement": what or src, "seconds": None, "when": None,
           "cores": None, "load (1 min)": None, "facts": ""}
    v = {"seconds": v} if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    why = records.problem(v, TIME_SHAPE, "entry")
    if why is not None:
        return {**row, "facts": f"malformed entry ({why})"}
    extra = {k: x for k, x in v.items() if k not in ("seconds", "when", "load", "cores")}
    load = v.get("load") or [None]
    facts = ", ".join(f"{k} {x}" for k, x in extra.items())
    return {**row, "seconds": round(float(v["seconds"]), 1) if v["seconds"] is not None
            else None, "when": v.get("when"), "cores": v.get("cores"),
            "load (1 min)": load[0],
            "facts": facts if len(facts) <= _FACT_CHARS else facts[:_FACT_CHARS - 1] + "…"}


def times_table(record: dict | None = None):
    """The one record of measured times (:func:`dltheory.budget.times`; a page reads it
    with :func:`read_times` and hands it in) as a table: one row per key (``what`` split
    at its first ``/``: ``source``, the rest ``measurement``), its seconds, when, the cores
    and the 1-minute load then, and any other facts stored with it (``spent``, ``tasks``,
    ...). Sorted by key; empty when nothing was recorded. An entry of the wrong shape (a
    ``seconds`` that is text or a list) is a row whose facts say what is wrong."""
    import pandas as pd

    if record is None:
        from . import budget

        record = read_times(budget.times_path())[0]
    rows = [_time_row(key, v) for key, v in sorted(record.items(), key=lambda kv: str(kv[0]))]
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


# -- links from a claim id to the section that records it and to its code -------------------
#
# Static: nothing is executed. A claim id is matched against the string literals of the
# chapter's subpackage (``ast``), the function holding the best match is followed up its
# callers to one the book file calls (``checks.<function>(``), and that call's nearest
# preceding Markdown heading names the section.

#: rule tables that list every claim id: never taken as the code that records one
_RULE_TABLES = frozenset({"KINDS", "DECIDES", "MAX_RESOLUTION", "ENTRIES"})


def heading_slug(title: str) -> str:
    """The HTML id Sphinx gives the section of a MyST heading: docutils' ``make_id`` of the
    heading's text, Markdown markup dropped and ``$...$`` math kept as its TeX
    (``"4. The MoE law count"`` -> ``"the-moe-law-count"``, ``"The exponent $\\alpha_N$"``
    -> ``"the-exponent-alpha-n"``)."""
    import re

    from docutils.nodes import make_id

    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)      # [text](url) -> text
    text = re.sub(r"\$+([^$]*)\$+", r"\1", text)                # $tex$ -> tex
    text = re.sub(r"[`*]", "", text)
    return make_id(" ".join(text.split()).lower())


def book_sections(path: str | Path) -> list[tuple[int, int, str, str | None]]:
    """The headings of a percent-format book file, in order: ``(line, level, title, id)``,
    ``id`` the section's HTML id (``heading_slug``), ``None`` for a title that repeats an
    earlier one on the page (docutils numbers those). Only Markdown cells count."""
    sections, seen, markdown = [], set(), False
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.startswith("# %%"):
            markdown = "[markdown]" in line
            continue
        if markdown and line.startswith("# #"):
            hashes, _, title = line[2:].partition(" ")
            if hashes and set(hashes) == {"#"} and title.strip():
                slug = heading_slug(title.strip())
                sections.append((n, len(hashes), title.strip(), None if slug in seen else slug))
                seen.add(slug)
    return sections


def _literals(node, prefix: str):
    """``(text, whole)`` for each claim-id-like string literal under ``node``: a plain
    string starting with ``prefix + "."`` (``whole``), or the literal head of an f-string or
    a ``"..." + x`` sum (not ``whole``)."""
    import ast

    start = prefix + "."
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            if sub.value.startswith(start):
                yield sub.value, True
        elif isinstance(sub, ast.JoinedStr):
            head = ""
            for part in sub.values:
                if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                    break
                head += part.value
            whole = all(isinstance(p, ast.Constant) for p in sub.values)
            if head.startswith(start):
                yield head, whole
        elif (isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Add)
              and isinstance(sub.left, ast.Constant) and isinstance(sub.left.value, str)
              and sub.left.value.startswith(start)):
            yield sub.left.value, False


def _code_index(package_dir: Path, prefix: str) -> dict:
    """For a chapter's subpackage: its functions (``(module, qualname)`` -> ``(start line,
    end line, names used)``) and each function's claim-id literals ``(text, whole,
    inherited)``: its own, then (``inherited``) those of the module-level constants it
    names (an id list such as ``CLAIMS``, the rule tables left out)."""
    import ast

    functions, literals, constants = {}, {}, {}
    for path in sorted(package_dir.glob("*.py")):
        mod = path.stem
        if mod == "mutations":          # planted errors name claims, they do not record them
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name) and t.id not in _RULE_TABLES and node.value:
                        found = list(_literals(node.value, prefix))
                        if found:
                            constants.setdefault(t.id, []).extend(found)
            defs = [(node.name, node)] if isinstance(node, (ast.FunctionDef,
                                                            ast.AsyncFunctionDef)) else \
                [(f"{node.name}.{m.name}", m) for m in node.body
                 if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))] \
                if isinstance(node, ast.ClassDef) else []
            for qual, fn in defs:
                used = {s.id for s in ast.walk(fn) if isinstance(s, ast.Name)} | \
                    {s.attr for s in ast.walk(fn) if isinstance(s, ast.Attribute)}
                functions[(mod, qual)] = (fn.lineno, fn.end_lineno, used)
                literals[(mod, qual)] = [(t, w, False) for t, w in _literals(fn, prefix)]
    for key, (_, _, used) in functions.items():   # a constant's ids belong to its users
        for name in sorted(used & constants.keys()):
            literals[key] += [(t, w, True) for t, w in constants[name]]
    return {"functions": functions, "literals": literals}


def _book_calls(book: Path, modules: set[str]) -> dict:
    """``(module, function)`` -> ``(line, section)`` of its first call in the book file's
    code cells (``checks.record_gd(`` or ``de.checks.signal(``), ``section`` the nearest
    preceding heading (``book_sections``), ``None`` above the first one."""
    import re

    sections = book_sections(book)
    calls, markdown = {}, False
    call = re.compile(r"\b(\w+)\.(\w+)\s*\(")
    for n, line in enumerate(book.read_text().splitlines(), 1):
        if line.startswith("# %%"):
            markdown = "[markdown]" in line
            continue
        if markdown or line.lstrip().startswith("#"):
            continue
        for mod, fn in call.findall(line.split("  #")[0]):
            if mod in modules and (mod, fn) not in calls:
                above = [s for s in sections if s[0] < n]
                calls[(mod, fn)] = (n, above[-1] if above else None)
    return calls


def claim_sites(name: str, root: str | Path | None = None) -> dict:
    """What ``claim_link`` reads for chapter ``name`` (its ledger or subpackage name), from
    the sources under ``root`` (default: this package and the repository's book file; an
    installed copy without the book has no sections): ``{"chapter", "index", "calls",
    "sections", "reach"}`` (see ``_code_index``, ``_book_calls``, ``book_sections``);
    ``reach`` maps each function to ``(steps, called)``, the nearest function the book calls
    among it and its callers, ``steps`` calls away (absent when none is)."""
    from . import chapter

    ch = chapter.get(name)
    package = Path(__file__).resolve().parent if root is None else Path(root) / "src" / "dltheory"
    book = (runtime.repo_root() if root is None else Path(root)) / ch.book
    index = _code_index(package / ch.subpackage, ch.prefix)
    functions = index["functions"]
    calls = _book_calls(book, {m for m, _ in functions}) if book.exists() else {}
    by_name = {}
    for key in functions:
        by_name.setdefault(key[1].rpartition(".")[2], []).append(key)
    callers = {}
    for key, (_, _, used) in functions.items():
        for name_used in used & by_name.keys():
            for other in by_name[name_used]:
                if other != key:
                    callers.setdefault(other, []).append(key)
    reach = {}
    for key in functions:   # breadth first up the callers to a function the book calls
        todo, seen = [(0, key)], {key}
        while todo:
            steps, k = todo.pop(0)
            if k in calls:
                reach[key] = (steps, k)
                break
            for c in callers.get(k, []):
                if c not in seen:
                    seen.add(c)
                    todo.append((steps + 1, c))
    return {"chapter": ch, "index": index, "calls": calls,
            "sections": book_sections(book) if book.exists() else [], "reach": reach}


def claim_link(cid: str, sites: dict) -> dict | None:
    """Where claim ``cid`` is recorded, from ``claim_sites``: ``{"module", "function",
    "lines", "called", "section"}``, or ``None`` without a static match.

    ``function`` holds the id's longest matching literal in its own body (a whole string
    before an f-string head of the same length), else in a constant it names; among
    equals, the one nearest a call in the book (a function the book calls itself first). ``called`` is the function of that book
    call, ``section`` its heading ``(line, level, title, id)`` (``None`` if none).
    """
    index, calls, reach = sites["index"], sites["calls"], sites["reach"]
    best = []
    for key, found in index["literals"].items():
        for text, whole, inherited in found:
            if (text == cid) if whole else (cid.startswith(text) and
                                            len(text) > len(sites["chapter"].prefix) + 1):
                steps = reach[key][0] if key in reach else 1 << 30
                best.append((inherited, -(len(text) + whole * 0.5), steps, key))
    if not best:
        return None
    *_, key = min(best, key=lambda b: b[:3])   # stable: the first in file order
    start, end, _ = index["functions"][key]
    called = reach.get(key, (None, None))[1]
    return {"module": key[0], "function": key[1], "lines": (start, end), "called": called,
            "section": calls[called][1] if called else None}


def claim_links(name: str, ids, *, page: str = "", code: str | None = None,
                root: str | Path | None = None) -> dict[str, dict]:
    """Links for the claims ``ids`` of chapter ``name``: ``{id: {"section": (text, href),
    "code": (text, href)}}``, either missing where no static match was found.

    ``page`` goes before the chapter page's name (``""`` inside the book, where the pages
    sit side by side; the rendered book's ``book/`` URL elsewhere). ``code`` is the base of
    the source links (default: the repository's ``blob/main/`` on GitHub); a link names the
    function's lines of ``src/dltheory/<subpackage>/<module>.py`` (the API pages' viewcode
    source covers only the modules they document, never a chapter's ``checks``). Each link
    is ``(text, href, title)``: ``("§4.3", "01_conservation_laws.html#sigmoid-gating-...",
    "4.3 Sigmoid gating: ...")``, ``("code", "https://...#L160-L172",
    "checks.sigmoid_gating: src/dltheory/conservation/checks.py, lines 160-172")``. A chapter not in
    ``chapter.REGISTRY`` has none.
    """
    import dltheory

    from . import chapter

    if name not in chapter.names():
        return {}
    sites = claim_sites(name, root)
    ch = sites["chapter"]
    base = f"{dltheory.REPO_URL}/blob/main/" if code is None else code
    out = {}
    for cid in ids:
        link = claim_link(str(cid), sites)
        if link is None:
            continue
        entry = {}
        sec = link["section"]
        stem = Path(ch.book).stem
        if sec is not None and sec[3] is not None:
            number = sec[2].split()[0].rstrip(".")
            text = f"§{number}" if number[:1].isdigit() else sec[2]
            entry["section"] = (text, f"{page}{stem}.html#{sec[3]}", sec[2])
        start, end = link["lines"]
        path = f"src/dltheory/{ch.subpackage}/{link['module']}.py"
        entry["code"] = ("code", f"{base}{path}#L{start}-L{end}",
                         f"{link['module']}.{link['function']}: {path}, lines {start}-{end}")
        out[str(cid)] = entry
    return out
