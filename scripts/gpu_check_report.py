"""Collect the sidecars of ``scripts/gpu_check.sh`` into report.json and report.md.

    python scripts/gpu_check_report.py OUT_DIR SCALE CAP_S WALL_S CHAPTER...

For each chapter: status and exit code (a chapter stopped at the time cap is "capped,
resume by rerunning": its finished tasks are cached), wall seconds, the budget and the time
its sweeps spent, rounds done per sweep (from the ledger's ``budget`` record), the median
resolution of its evidence claims (the figure of merit: what a budget buys), peak GPU and
host memory, tasks computed vs loaded from the cache, the verdict counts, and how many
consecutive runs the chapter has needed at this scale (kept in OUT_DIR/history.json).

``$DLTHEORY_GPU_CHECK_COMPARE`` names another report.json (e.g. the CPU run of the same
command, committed under benchmarks/gpu/): its median resolution and rounds are shown side
by side. ``$DLTHEORY_GPU_CHECK_SAVE`` names a folder (benchmarks/gpu) that receives a copy
of the report as ``<scale>-<device>-<date>.{md,json}``.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from dltheory import validation  # the one table of the DLTHEORY_* variables


def claims_summary(ledger_paths: list[str]) -> dict | None:
    """Verdict counts per kind group, the median resolution of the evidence claims and the
    ledger's budget record, from the ledger JSON(s) the chapter wrote in this run."""
    if not ledger_paths:
        return None
    evidence, other, res, budgets = Counter(), Counter(), [], []
    for p in ledger_paths:
        data = json.loads(Path(p).read_text())
        budgets.append(data.get("budget"))
        for c in data.get("claims", []):
            if c.get("kind") in ("hard", "soft"):
                evidence[c["verdict"]] += 1
                r = c.get("resolution")
                if c["verdict"] != "INCONCLUSIVE" and isinstance(r, (int, float)) and r == r:
                    res.append(float(r))
            else:
                other[f"{c.get('kind')} {c['verdict']}"] += 1
    return {"evidence": dict(evidence), "identity": dict(other),
            "median_resolution": statistics.median(res) if res else None,
            "resolved": len(res), "budget": budgets[0] if len(budgets) == 1 else budgets,
            "ledgers": [Path(p).name for p in ledger_paths]}


def _rounds(budget: dict | None) -> str:
    if not isinstance(budget, dict) or not budget.get("rounds"):
        return "-"
    return ", ".join(f"{k} {d}/{n}" for k, (d, n) in sorted(budget["rounds"].items()))


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.3g}%"


def _fmt_counts(c: dict) -> str:
    return ", ".join(f"{n} {v}" for v, n in sorted(c.items())) or "none"


def main(out: str, scale: str, cap: str, wall: str, chapters: list[str]) -> dict:
    out_dir = Path(out)
    hist_path = out_dir / "history.json"
    history = json.loads(hist_path.read_text()) if hist_path.exists() else {}
    rows = []
    for ch in chapters:
        side = out_dir / f"{ch}.json"
        rc_file = out_dir / f"{ch}.rc"
        rc = int(rc_file.read_text().strip()) if rc_file.exists() else None
        rec = json.loads(side.read_text()) if side.exists() else {
            "chapter": ch, "status": "killed" if rc in (124, 137) else "no record",
            "exit": rc, "error": "no sidecar (killed before it could write one)",
            "wall_s": None, "ledgers": [], "tasks": None, "peak_gpu_mib": None,
            "peak_rss_mib": None, "device": None}
        if rc is not None:
            rec["exit"] = rc
        if rec["status"] in ("capped", "killed"):
            rec["status_text"] = "capped, resume by rerunning"
        else:
            rec["status_text"] = rec["status"]
        rec["claims"] = claims_summary(rec.get("ledgers") or [])
        key = f"{ch}@{scale}"
        prev = history.get(key, {"runs": 0, "done": True})
        runs = 1 if prev.get("done", True) else prev["runs"] + 1
        done = rec["status"] in ("ok", "claims failed")
        history[key] = {"runs": runs, "done": done, "last": rec["status"]}
        rec["runs"] = runs
        rows.append(rec)
    devices = sorted({str(r.get("device")) for r in rows if r.get("device")})
    report = {"scale": scale, "cap_s": float(cap), "wall_s": float(wall),
              "budget_s": validation.env("DLTHEORY_BUDGET"),
              "device": ", ".join(devices) or "unknown", "commit": _commit(),
              "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "chapters": rows}
    other = _load_compare()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    hist_path.write_text(json.dumps(history, indent=2) + "\n")

    lines = [f"# GPU check: scale `{scale}` on {report['device']}", "",
             f"All chapters in parallel, budget {report['budget_s'] or 'none'} s and cap "
             f"{float(cap):.0f} s per chapter, {float(wall):.0f} s in all. Commit "
             f"{report['commit']}, created {report['created']}.", "",
             "| chapter | status | wall s | budget spent s | rounds done / planned | median resolution "
             + (f"| vs {other['device']} " if other else "")
             + "| peak GPU MiB | tasks computed / cached | claims (evidence) | identities, derivations | runs |",
             "|---|---|---|---|---|---|" + ("---|" if other else "") + "---|---|---|---|---|"]
    for r in rows:
        t = r.get("tasks") or {}
        c = r["claims"] or {}
        b = c.get("budget") if isinstance(c.get("budget"), dict) else {}
        cmp = ""
        if other:
            o = other["chapters"].get(r["chapter"], {})
            cmp = f"| {_pct(o.get('median_resolution'))} ({o.get('rounds', '-')}) "
        lines.append(
            f"| {r['chapter']} | {r['status_text']} | {'' if r['wall_s'] is None else r['wall_s']} | "
            f"{'-' if not b else round(b.get('spent', 0.0), 1)} | {_rounds(b)} | "
            f"{_pct(c.get('median_resolution'))} {cmp}| "
            f"{'-' if r.get('peak_gpu_mib') is None else r['peak_gpu_mib']} | "
            f"{t.get('computed', '')} / {t.get('cached', '')} | "
            f"{_fmt_counts(c['evidence']) if c else 'no ledger in this run'} | "
            f"{_fmt_counts(c['identity']) if c else ''} | {r['runs']} |")
    early = [r for r in rows if r["status"] == "ok" and str(r.get("error", "")).startswith("ended early")]
    if early:   # a budget that ran out: the run ended with its ledger (chapter.stopped)
        lines += ["", "## Ended early: the budget ran out (claims not reached are INCONCLUSIVE)", ""]
        lines += [f"- {r['chapter']}: {r['error'][len('ended early: '):]}" for r in early]
    errs = [r for r in rows if r.get("error") and r["status"] not in ("capped",) and r not in early]
    if errs:
        lines += ["", "## Errors", ""]
        lines += [f"- {r['chapter']}: {r['error']} (log: `{r['chapter']}.log`)" for r in errs]
    lines += ["", "Median resolution: the median, over the evidence claims that resolved, of the "
              "smallest relative error in the prediction the check would detect (lower is "
              "better); rounds: seeds of every grid point completed within the budget.", ""]
    problems, figures = check(rows, report["budget_s"])
    _record_times(report)
    report["problems"], report["budget_figures"] = problems, figures
    (out_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    if figures:
        lines += ["## Budgets (figures, not failures: the wall time of a shared machine varies)", ""]
        lines += [f"- {f}" for f in figures] + [""]
    lines += ["## Check", ""] + ([f"- FAIL {p}" for p in problems] or
                                 ["- every chapter ran to its ledger with a budget record "
                                  "and no hard FAIL"]) + [""]
    text = "\n".join(lines)
    (out_dir / "report.md").write_text(text)
    save = validation.env("DLTHEORY_GPU_CHECK_SAVE")
    if save:
        slug = re.sub(r"[^a-z0-9]+", "-", report["device"].lower()).strip("-")
        stem = Path(save) / f"{scale}-{slug}-{report['created'][:10]}"
        stem.parent.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
        stem.with_suffix(".md").write_text(text)
        print(f"[gpu_check] saved {stem}.md/.json")
    print(text)
    return report


def check(rows: list[dict], budget_s: float | None) -> tuple[list[str], list[str]]:
    """What the check asserts, and the budget figures it prints.

    Problems (each fails the check): a chapter that did not end ``ok`` (an error, a hard
    FAIL, a cap or kill), that wrote no ledger, or, under a budget, whose ledger has no
    budget record of that budget. Figures (never failures): per chapter the budget, the
    time it spent, the overrun, whether the 1.25 x budget bound held, the wall time with its
    start-up, and the tasks done of those planned."""
    problems, figures = [], []
    for r in rows:
        ch = r["chapter"]
        if r["status"] != "ok":
            problems.append(f"{ch}: {r['status_text']}" + (f" ({r['error']})" if r.get("error") else ""))
        c = r.get("claims") or {}
        if not c:
            problems.append(f"{ch}: no ledger written")
            continue
        b = c.get("budget")
        if budget_s is None:
            continue
        if not isinstance(b, dict) or b.get("seconds") != budget_s:
            problems.append(f"{ch}: ledger has no record of the {budget_s:g} s budget ({b!r})"[:300])
            continue
        tasks = b.get("tasks") or {}
        done = sum(d for d, _ in tasks.values())
        planned = sum(p for _, p in tasks.values())
        over = b.get("overrun")
        held = b.get("held")
        figures.append(
            f"{ch}: budget {budget_s:g} s, spent {b.get('spent', 0):.1f} s"
            + (f" (over by {over:.1f} s)" if over else "")
            + ("" if held is None else ", bound 1.25 x budget " + ("held" if held else "NOT held"))
            + (f", wall {r['wall_s']:.0f} s" if r.get("wall_s") is not None else "")
            + (f" (start-up {b['startup']:.1f} s)" if b.get("startup") is not None else "")
            + f", tasks {done}/{planned}; {_rounds(b)}")
    return problems, figures


def _record_times(report: dict) -> None:
    """Each chapter's wall time into the one record of times (``dltheory.budget.times``)."""
    try:
        from dltheory import budget
    except ImportError:
        return
    b = report["budget_s"]
    where = f"gpu_check/{report['scale']}/budget {'none' if b is None else f'{b:g}'}/{report['device']}"
    entries = {}
    for r in report["chapters"]:
        if r.get("wall_s") is None:
            continue
        rec = (r.get("claims") or {}).get("budget")
        entries[f"{where}/{r['chapter']}"] = {
            "seconds": r["wall_s"], "status": r["status"], "commit": report["commit"],
            "spent": rec.get("spent") if isinstance(rec, dict) else None,
            "covered": rec.get("covered") if isinstance(rec, dict) else None}
    entries[f"{where}/all chapters in parallel"] = {"seconds": report["wall_s"],
                                                     "commit": report["commit"]}
    budget.write_times(entries)


def _commit() -> str:
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _load_compare() -> dict | None:
    """The other device's report (``$DLTHEORY_GPU_CHECK_COMPARE``) as {device, chapters:
    {name: {median_resolution, rounds}}}, or None."""
    path = validation.env("DLTHEORY_GPU_CHECK_COMPARE")
    if not path:
        return None
    data = json.loads(Path(path).read_text())
    chapters = {}
    for r in data.get("chapters", []):
        c = r.get("claims") or {}
        b = c.get("budget") if isinstance(c.get("budget"), dict) else None
        chapters[r["chapter"]] = {"median_resolution": c.get("median_resolution"),
                                  "rounds": _rounds(b)}
    return {"device": data.get("device", Path(path).stem), "chapters": chapters}


if __name__ == "__main__":
    if len(sys.argv) < 6:
        sys.exit("usage: gpu_check_report.py OUT_DIR SCALE CAP_S WALL_S CHAPTER...")
    rep = main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    sys.exit(1 if rep["problems"] else 0)
