"""Calibration records: the statistics of size and power, their schema, and the page.

``scripts/calibrate.py`` runs a chapter over seeds, settings and planted errors and writes
``book/calibration/<chapter>.<scale>.json``; this module holds what the tool and the
calibration page (``book/calibration.py``) share: the exact Clopper-Pearson bound, the
per-claim summary (false FAILs, the planted errors each claim catches), the schema check,
the report lines and the page's tables. A record::

    {"schema", "chapter", "scale", "provenance", "wall_s", "cpu_s", "settings": {...},
     "runs": [{"setting", "seed", "mutation", "verdicts": {id: verdict}, "wall_s", "cpu_s",
               "error", "flipped": [...]}],
     "claims": {id: {"kind", "runs", "false_fail", "false_fail_upper95", "caught_by",
                     "median_resolution"}},
     "mutations": {id: {"target", "description", "size", "kind", "expected", "flipped",
                        "error"}}}
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from . import records
from .records import INT, NUMBER, Each, Maybe, OneOf

SCHEMA = 1
RUN_KEYS = ("setting", "seed", "mutation", "verdicts", "wall_s", "cpu_s", "error")
CLAIM_KEYS = ("kind", "runs", "false_fail", "false_fail_upper95", "caught_by")
TOP_KEYS = ("chapter", "scale", "provenance", "runs", "claims")

#: the shape of a record (``records.problem``): every field the tool, the page and the
#: report read, with its type; other keys are allowed
RUN_SHAPE = {"setting": dict, "seed": Maybe(INT), "mutation": Maybe(str),
             "verdicts": Each(str), "wall_s": Maybe(NUMBER), "cpu_s": Maybe(NUMBER),
             "error": Maybe(str), "flipped?": [str]}
CLAIM_SHAPE = {"kind": str, "runs": INT, "false_fail": INT,
               "false_fail_upper95": Maybe(NUMBER), "caught_by": [str],
               "median_resolution?": Maybe(NUMBER), "weak?": Maybe(INT)}
MUTATION_SHAPE = {"size": OneOf(str, NUMBER), "kind": str, "expected": [str],
                  "flipped": [str], "error": Maybe(str), "target?": str,
                  "description?": str}
RECORD_SHAPE = {"chapter": str, "scale": str,
                "provenance": {"source_sha256": Maybe(Each(Maybe(str))),
                               "created?": Maybe(str), "commit?": Maybe(str)},
                "runs": [RUN_SHAPE], "claims": Each(CLAIM_SHAPE),
                "mutations?": Each(MUTATION_SHAPE), "settings?": dict,
                "wall_s?": Maybe(NUMBER), "cpu_s?": Maybe(NUMBER)}
SETTINGS_SHAPE = {"corners?": Maybe(INT), "edges?": Maybe(INT), "random?": Maybe(INT),
                  "left_out?": Maybe(INT), "invalid?": list}


# --------------------------------------------------------------------------- statistics
def clopper_pearson_upper(failures: int, n: int, level: float = 0.95) -> float | None:
    """Exact one-sided upper confidence bound on a rate from ``failures`` out of ``n``
    (1 when every run failed; ``None`` without runs)."""
    from scipy.stats import beta

    if n <= 0:
        return None
    if failures >= n:
        return 1.0
    return float(beta.ppf(level, failures + 1, n - failures))


def _fill_flipped(runs: list[dict]) -> list[dict]:
    """Set each mutated run's ``flipped``: the claims that FAIL or go WEAK with the mutation
    and did neither unmutated at the same setting and seed. Returns the unmutated runs."""
    plain = [r for r in runs if not r["mutation"]]
    base = {(json.dumps(r["setting"], sort_keys=True), r["seed"]): r["verdicts"] for r in plain}
    for r in runs:
        if r["mutation"]:
            ref = base.get((json.dumps(r["setting"], sort_keys=True), r["seed"]), {})
            r["flipped"] = sorted(c for c, v in r["verdicts"].items()
                                  if v in ("FAIL", "WEAK")
                                  and ref.get(c) not in ("FAIL", "WEAK", None))
    return plain


def summarise(runs: list[dict], kinds: dict, resolutions: dict) -> dict:
    """Per claim: runs, false FAILs, their 95% upper bound, WEAK verdicts (a hard claim that
    resolved worse than its declared maximum: a run that stops, not a false FAIL), the
    mutations that flip it (to FAIL or WEAK: both stop the run), and the median resolution
    over unmutated runs; also fills each mutated run's ``flipped``."""
    plain = _fill_flipped(runs)
    out = {}
    for cid in sorted({c for r in runs for c in r["verdicts"]}):
        seen = [r["verdicts"][cid] for r in plain if cid in r["verdicts"]]
        fails = sum(v == "FAIL" for v in seen)
        res = [x for x in resolutions.get(cid, []) if x is not None]
        out[cid] = {"kind": kinds.get(cid, ""), "runs": len(seen), "false_fail": fails,
                    "weak": sum(v == "WEAK" for v in seen),
                    "false_fail_upper95": clopper_pearson_upper(fails, len(seen)),
                    "caught_by": sorted(r["mutation"] for r in runs
                                        if r["mutation"] and cid in r.get("flipped", [])),
                    "median_resolution": float(np.median(res)) if res else None}
    return out


def validate(data) -> list[str]:
    """Schema problems of a calibration file (empty when well formed): first its shape
    (``RECORD_SHAPE``: keys, types, sizes; one problem names the first departure), then
    what the numbers must satisfy (false FAILs within the runs, the bound above the rate,
    ``caught_by`` naming mutations that ran)."""
    if not isinstance(data, dict):
        return ["not a JSON object"]
    probs = [f"missing key {k!r}" for k in TOP_KEYS if k not in data]
    if probs:
        return probs
    shape = records.problem(data, RECORD_SHAPE) or \
        records.problem(data.get("settings", {}), SETTINGS_SHAPE, "settings")
    if shape:
        return [shape]
    mutations = {r["mutation"] for r in data["runs"]}
    for cid, c in data["claims"].items():
        if not 0 <= c["false_fail"] <= c["runs"]:
            probs.append(f"claim {cid}: false_fail {c['false_fail']} not in [0, runs]")
        ub = c["false_fail_upper95"]
        if c["runs"] and not (ub is not None and c["false_fail"] / c["runs"] <= ub <= 1):
            probs.append(f"claim {cid}: upper bound {ub!r} below the rate or above 1")
        if not set(c["caught_by"]) <= mutations:
            probs.append(f"claim {cid}: caught_by names mutations that did not run")
    return probs


# --------------------------------------------------------------------------- report and page
def report_lines(data: dict) -> list[str]:
    """The calibration tool's report of a (valid) record, one line per fact."""
    plain = [r for r in data["runs"] if not r["mutation"]]
    lines = [f"{data['chapter']} @ {data['scale']}: {len(plain)} unmutated runs, "
             f"{len(data['runs']) - len(plain)} mutated, {data.get('wall_s')} s wall, "
             f"{data.get('cpu_s')} s CPU (chapter runs)"]
    s = data.get("settings") or {}
    if s.get("corners") is not None and None not in (s.get("edges"), s.get("random"),
                                                      s.get("left_out")):
        lines.append(f"settings: {s['corners']} corners, {s['edges']} edge midpoints, "
                     f"{s['random']} random; {s['left_out']} corners/edges left out "
                     f"(raise --settings); {len(s.get('invalid') or [])} refused by the "
                     f"Config")
    for cid, c in data["claims"].items():
        ub = c["false_fail_upper95"]
        lines.append(f"  {cid:32s} {c['kind']:9s} {c['false_fail']}/{c['runs']} false FAIL "
                     f"(<= {ub:.1%} at 95%)  caught by {len(c['caught_by'])}"
                     if ub is not None else f"  {cid:32s} {c['kind']:9s} no unmutated run")
    for mid, m in data.get("mutations", {}).items():
        lines.append(f"  [mutation] {mid}: flipped {m['flipped'] or 'nothing'}"
                     + (f" (error: {m['error']})" if m["error"] else ""))
    errors = [r for r in data["runs"] if r["error"]]
    for r in errors:
        lines.append(f"  error: seed {r['seed']} {r['setting']} {r['mutation']}: {r['error']}")
    return lines


def load_dir(directory: str | Path, scale: str = "smoke") -> tuple[dict, dict]:
    """``({chapter: record}, {file: problem})`` for every ``<chapter>.<scale>.json`` there."""
    found, bad = {}, {}
    for p in sorted(Path(directory).glob(f"*.{scale}.json")):
        data, why = records.read(p)
        if why is not None:
            bad[p.name] = why
            continue
        probs = validate(data)
        if not probs and p.name != f"{data['chapter']}.{data['scale']}.json":
            probs = [f"holds {data['chapter']}.{data['scale']}"]
        if probs:
            bad[p.name] = "; ".join(probs)
        else:
            found[data["chapter"]] = data
    return found, bad


def _pct(x) -> str:
    return "" if x is None else "0%" if x == 0 else f"{x:.1%}" if x >= 0.001 else f"{x:.2g}"


def _cost(data: dict) -> str:
    """What a calibration cost: ``118 s wall, 218 CPU-s`` or ``6518 s wall, 1.5
    CPU-hours`` (its chapter runs)."""
    wall, cpu = data.get("wall_s"), data.get("cpu_s")
    parts = ([f"{wall:.0f} s wall"] if wall is not None else []) + \
        ([f"{cpu:.0f} CPU-s" if cpu < 3600 else f"{cpu / 3600:.1f} CPU-hours"]
         if cpu is not None else [])
    return ", ".join(parts)


_SUMMARY_COLUMNS = ["chapter", "status", "runs", "off-default", "errors", "false FAILs",
                    "caught / planted", "median res.", "calibrated", "cost", "detail"]


def _summary_row(ch: str, data: dict) -> dict:
    """The page's summary row of one chapter's (valid) record."""
    from . import ledgers

    plain = [r for r in data["runs"] if not r["mutation"]]
    cl, muts, prov = data["claims"], data.get("mutations", {}), data["provenance"]
    res = [c.get("median_resolution") for c in cl.values()
           if c["kind"] in ("hard", "soft") and c.get("median_resolution") is not None]
    stale = ledgers.staleness(data)
    return {"chapter": ch, "status": "stale" if stale else "calibrated",
            "runs": len(plain), "off-default": sum(bool(r["setting"]) for r in plain),
            "errors": sum(bool(r["error"]) for r in data["runs"]),
            "false FAILs": sum(c["false_fail"] for c in cl.values()),
            "caught / planted": (f"{sum(bool(m['flipped']) for m in muts.values())}"
                                 f" / {len(muts)}") if muts else "not run",
            "median res.": _pct(float(np.median(res))) if res else "",
            "calibrated": "{} at {}".format(str(prov.get("created") or "")[:10],
                                            str(prov.get("commit") or "an unknown commit")[:7]),
            "cost": _cost(data), "detail": stale or ""}


def _claim_rows(ch: str, data: dict) -> list[dict]:
    return [{"chapter": ch, "claim": cid, "kind": c["kind"], "runs": c["runs"],
             "false FAIL": c["false_fail"], "95% upper": _pct(c["false_fail_upper95"]),
             "caught by": ", ".join(m.partition(":")[2] for m in c["caught_by"])
             or "none of the planted errors"} for cid, c in data["claims"].items()]


def _mutation_rows(ch: str, data: dict) -> list[dict]:
    return [{"chapter": ch, "mutation": mid.partition(":")[2], "size": m["size"],
             "kind": m["kind"], "expected": ", ".join(m["expected"]) or "(none)",
             "flipped": ", ".join(m["flipped"]) or "nothing", "detail": m["error"] or ""}
            for mid, m in data.get("mutations", {}).items()]


def page_tables(directory: str | Path, chapters: list[str], scale: str = "smoke"):
    """What the calibration page shows: ``(summary, claims, mutations)`` DataFrames; a
    chapter without a file is "not calibrated yet", one whose sources changed "stale", a
    file that cannot be read or has the wrong shape an "error" row naming why."""
    import pandas as pd

    found, bad = load_dir(directory, scale)
    srows, crows, mrows = [], [], []
    blank = dict.fromkeys(_SUMMARY_COLUMNS, "")
    for ch in chapters:
        data = found.get(ch)
        file_problem = bad.get(f"{ch}.{scale}.json")
        if data is None:
            srows.append({**blank, "chapter": ch, "detail": file_problem or "",
                          "status": "error" if file_problem else "not calibrated yet"})
            continue
        srows.append(_summary_row(ch, data))
        crows += _claim_rows(ch, data)
        mrows += _mutation_rows(ch, data)
    for name, why in bad.items():
        if name.split(".")[0] not in chapters:
            srows.append({**blank, "chapter": name, "status": "error", "detail": why})
    return pd.DataFrame(srows, columns=_SUMMARY_COLUMNS), pd.DataFrame(crows), \
        pd.DataFrame(mrows)


# --------------------------------------------------------------------------- mutation score
#: the mutation-score record's shape (what ``mutation_tables`` reads; other keys allowed)
SURVIVOR_SHAPE = {"file": str, "line": INT, "status": str, "mutation": str, "triage": str}
MODULE_SHAPE = {"path": str, "commit": str, "source_sha256": str, "tests": [str],
                "deselected": [str], "mutants_sampled": INT, "mutants_generated": INT,
                "score": Maybe(NUMBER),
                "counts": {"killed": INT, "timeout": INT, "survived": INT, "no tests": INT},
                "survivor_triage": {"equivalent": INT, "caught by nothing": INT},
                "survivors": [SURVIVOR_SHAPE]}
MUTATION_SCORE_SHAPE = {"tool": str, "wall_s": NUMBER, "score": str, "scope": str,
                        "modules": Each(MODULE_SHAPE)}


def _bad_path(data: dict) -> str | None:
    """A module path that is not a relative path to a ``.py`` file inside the checkout
    (the record only names ``src/dltheory/...`` modules: the page hashes them, and reads
    nothing else)."""
    for name, m in data["modules"].items():
        parts = Path(m["path"]).parts
        if Path(m["path"]).is_absolute() or ".." in parts or not m["path"].endswith(".py"):
            return (f"modules.{name}.path: a .py file inside the checkout, got "
                    f"{m['path']!r}")
    return None


def mutation_tables(path: str | Path, root: str | Path):
    """The page's "Automated mutation score" section, from the record that
    ``scripts/mutation_score.py`` writes (``book/records/mutation_score.json``):
    ``(lines, modules, survivors)``: lines of text (tool, commit, sample, wall time, scope),
    one row per module (a module whose source under ``root`` changed since is "stale"), one
    row per surviving mutant with its triage. Without a record: one line saying so."""
    import hashlib

    import pandas as pd

    data, why = records.read(path)
    if why == "missing":
        return ["no mutation record: run scripts/mutation_score.py"], pd.DataFrame(), \
            pd.DataFrame()
    why = why or records.problem(data, MUTATION_SCORE_SHAPE) or _bad_path(data)
    if why is not None:
        return [f"the mutation record {Path(path).name} cannot be shown: {why} (run "
                "scripts/mutation_score.py again)"], pd.DataFrame(), pd.DataFrame()
    rows, surv, commits = [], [], set()
    for name, m in data["modules"].items():
        c, src = m["counts"], Path(root) / m["path"]
        stale = not src.is_file() or hashlib.sha256(src.read_bytes()).hexdigest() != m["source_sha256"]
        commits.add(m["commit"][:7])
        t = m["survivor_triage"]
        rows.append({"module": name, "status": "stale" if stale else "current",
                     "tests": ", ".join(x.removeprefix("tests/") for x in m["tests"])
                     + (f" ({len(m['deselected'])} slow tests deselected)" if m["deselected"] else ""),
                     "mutants": (f"{m['mutants_sampled']} of {m['mutants_generated']} (sample)"
                                 if m["mutants_sampled"] < m["mutants_generated"]
                                 else f"{m['mutants_generated']} (all)"),
                     "killed": c["killed"], "timeout": c["timeout"], "survived": c["survived"],
                     "no tests": c["no tests"], "score": _pct(m["score"]),
                     "equivalent": t["equivalent"], "caught by nothing": t["caught by nothing"]})
        surv += [{"module": name, "file:line": f"{s['file'].removeprefix('src/')}:{s['line']}",
                  "status": s["status"], "mutation": s["mutation"], "triage": s["triage"]}
                 for s in m["survivors"]]
    lines = [f"{data['tool']} at commit {', '.join(sorted(commits))}, "
             f"{data['wall_s']:.0f} s of mutation runs; score = {data['score']}.",
             f"Scope: {data['scope']}."]
    return lines, pd.DataFrame(rows), pd.DataFrame(surv)


def wrappable(text, after: str = r"[,.(=/:]"):
    """``text`` (a Series of strings) with a zero-width space after each character matching
    ``after``, so that a long path or line of code wraps inside its table column instead of
    pushing the next columns past the page's edge."""
    return text.str.replace(f"({after})", "\\1\u200b", regex=True)


def mutation_page_tables(modules, survivors):
    """The three tables the calibration page shows from :func:`mutation_tables`' frames,
    each narrow enough for the book's column: the scores (``detected`` = killed + timeout, as
    the score counts them; ``no tests`` only when a mutant had none), each module's tests, and
    the survivors with their code wrappable. Empty frames stay empty."""
    if modules.empty:
        return modules, modules, survivors
    scores = modules.assign(module=wrappable(modules.module, r"[.]"))
    scores.insert(scores.columns.get_loc("killed"), "detected", scores.killed + scores.timeout)
    gone = ["tests", "killed", "timeout"] + (["no tests"] if (scores["no tests"] == 0).all()
                                             else [])
    tests = modules[["module", "tests"]].assign(tests=wrappable(modules.tests))
    if not survivors.empty:
        survivors = survivors.assign(mutation=wrappable(survivors.mutation, r"[,.(=]"))
    return scores.drop(columns=gone), tests, survivors
