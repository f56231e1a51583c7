"""Collect the sidecars of ``scripts/gpu_check.sh`` into report.json and report.md.

    python scripts/gpu_check_report.py OUT_DIR SCALE CAP_S WALL_S CHAPTER...

For each chapter: status and exit code (a chapter stopped at the time cap is "capped,
resume by rerunning": its finished tasks are cached), wall seconds, peak GPU and host
memory, tasks computed vs loaded from the cache, the claims summary from the ledger the
chapter wrote in this run, and how many consecutive runs the chapter has needed at this
scale (kept in OUT_DIR/history.json).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path


def claims_summary(ledger_paths: list[str]) -> dict | None:
    """Verdict counts of evidence claims and of identities from the ledger JSON(s)."""
    if not ledger_paths:
        return None
    evidence, identity = Counter(), Counter()
    for p in ledger_paths:
        data = json.loads(Path(p).read_text())
        for c in data.get("claims", []):
            (identity if c.get("kind") == "identity" else evidence)[c["verdict"]] += 1
    return {"evidence": dict(evidence), "identity": dict(identity),
            "ledgers": [Path(p).name for p in ledger_paths]}


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
    report = {"scale": scale, "cap_s": float(cap), "wall_s": float(wall),
              "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "chapters": rows}
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    hist_path.write_text(json.dumps(history, indent=2) + "\n")

    lines = [f"# GPU check: scale `{scale}`", "",
             f"All chapters in parallel, cap {float(cap):.0f} s per chapter, "
             f"{float(wall):.0f} s in all. Created {report['created']}.", "",
             "| chapter | status | exit | wall s | peak GPU MiB | peak RSS MiB | tasks computed "
             "| tasks cached | claims (evidence) | identities | runs |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        t = r.get("tasks") or {}
        c = r["claims"]
        lines.append(
            f"| {r['chapter']} | {r['status_text']} | {r['exit']} | "
            f"{'' if r['wall_s'] is None else r['wall_s']} | "
            f"{'-' if r.get('peak_gpu_mib') is None else r['peak_gpu_mib']} | "
            f"{'' if r.get('peak_rss_mib') is None else r['peak_rss_mib']} | "
            f"{t.get('computed', '')} | {t.get('cached', '')} | "
            f"{_fmt_counts(c['evidence']) if c else 'no ledger in this run'} | "
            f"{_fmt_counts(c['identity']) if c else ''} | {r['runs']} |")
    errs = [r for r in rows if r.get("error") and r["status"] not in ("capped",)]
    if errs:
        lines += ["", "## Errors", ""]
        lines += [f"- {r['chapter']}: {r['error']} (log: `{r['chapter']}.log`)" for r in errs]
    lines += ["", "Devices: " + ", ".join(sorted({str(r.get('device')) for r in rows})), ""]
    (out_dir / "report.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return report


if __name__ == "__main__":
    if len(sys.argv) < 6:
        sys.exit("usage: gpu_check_report.py OUT_DIR SCALE CAP_S WALL_S CHAPTER...")
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
