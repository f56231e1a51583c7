"""Size and power of a chapter's checks: re-run it over seeds, settings and planted errors.

    python scripts/calibrate.py gradient_flow --seeds 3 --settings 2 --mutations --out /tmp/cal
    python scripts/calibrate.py 03 --seeds 20 --settings 12 --mutations --backend loky

Runs (each one whole chapter run at ``--scale``, a task of ``dltheory.experiments``, so an
interrupted calibration resumes and runs on loky or a Dask cluster):

* ``--seeds N`` unmutated runs at the default setting, SEED = 0 .. N-1;
* ``--settings K`` unmutated runs off the defaults, each with its own seed: first every
  corner, then every edge midpoint of the knob box the chapter's Config declares (its
  ``DOMAIN`` without ``SEED``; a log knob takes its geometric midpoint), skipping and
  listing the combinations the Config refuses (``is_valid``: its ``ValueError``), then
  random settings from its ``sample_setting``; when K is smaller than the valid corners
  and edge midpoints, the output says how many were left out;
* ``--mutations``: one run per entry of the chapter's part of ``dltheory.mutations``, at the
  defaults with SEED = 0, the entry applied in the chapter's kernel (``$DLTHEORY_MUTATION``;
  a first cell calls ``dltheory.mutations.activate_from_env()``).

Each run is the chapter's notebook executed with papermill (parameters ``SCALE``, ``SEED`` and
the setting injected, like ``scripts/domain_check.py``) with private results, figure and
cache folders, ``DLTHEORY_STATIC=1`` and one thread. Writes ``OUT/<chapter>.<scale>.json``::

    {"chapter", "scale", "provenance", "wall_s", "cpu_s", "settings": {...},
     "runs": [{"setting", "seed", "mutation", "verdicts": {id: verdict}, "wall_s", "cpu_s",
               "error", "flipped": [...]}],
     "claims": {id: {"kind", "runs", "false_fail", "false_fail_upper95", "caught_by",
                     "median_resolution"}},
     "mutations": {id: {"target", "description", "size", "kind", "expected", "flipped",
                        "error"}}}

``false_fail`` counts FAILs of the claim in unmutated runs (only hard claims and
identities can FAIL); ``false_fail_upper95`` is the exact one-sided 95% Clopper-Pearson
upper bound on its rate. A mutation *flips* a claim when the claim FAILs with it and did not
FAIL in the unmutated run at the same setting and seed. The calibration page
(``book/calibration.py``) reads the files committed in ``book/calibration/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
SCHEMA = 1
RUN_KEYS = ("setting", "seed", "mutation", "verdicts", "wall_s", "cpu_s", "error")
CLAIM_KEYS = ("kind", "runs", "false_fail", "false_fail_upper95", "caught_by")
TOP_KEYS = ("chapter", "scale", "provenance", "runs", "claims")


def _domain_check():
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    import domain_check

    return domain_check


# --------------------------------------------------------------------------- chapters
def chapter_ids() -> dict[str, str]:
    """Ledger name -> two-digit number, from ``book/NN_<name>.py``."""
    return {p.stem[3:]: p.stem[:2] for p in sorted((ROOT / "book").glob("[0-9][0-9]_*.py"))}


def resolve_chapter(name: str) -> tuple[str, str]:
    """``"03"`` or ``"sparse_scaling"`` -> ("sparse_scaling", "03")."""
    ids = chapter_ids()
    for chapter, num in ids.items():
        if name in (chapter, num):
            return chapter, num
    raise ValueError(f"unknown chapter {name!r}; valid: {', '.join(f'{n} ({c})' for c, n in ids.items())}")


def config_module(num: str):
    """The chapter's config module (the prologue's is ``dltheory.gradient_flow``)."""
    if num == "00":
        import dltheory.gradient_flow as gf

        return gf
    return _domain_check().config_module(num)


def box_points(config_cls) -> list[tuple[str, dict]]:
    """``("corner" | "edge", setting)`` for every corner, then every edge midpoint (one knob
    at its (log-)midpoint, the others at an end), of the Config's knob box, valid or not."""
    knobs = config_cls.KNOBS
    names = list(knobs)

    def ends(n):
        return knobs[n].lo, knobs[n].hi

    pts = [("corner", dict(zip(names, c, strict=True))) for c in itertools.product(*map(ends, names))]
    for mid in names:
        others = [n for n in names if n != mid]
        for c in itertools.product(*map(ends, others)):
            s = {**dict(zip(others, c, strict=True)), mid: knobs[mid].midpoint()}
            pts.append(("edge", {n: s[n] for n in names}))
    return pts


def draw_settings(mod, k: int, scale: str, rng_seed: int = 0) -> dict:
    """``k`` settings off the defaults: the valid corners, then the valid edge midpoints,
    then random ones (``Config.sample_setting``). Returns ``{"settings", "domain",
    "corners", "edges", "random", "left_out", "invalid": [{"setting", "reason"}]}``."""
    cls = mod.Config
    valid, invalid = [], []
    for where, p in box_points(cls) if k > 0 else []:
        ok, why = cls.is_valid(p, scale)
        if ok:
            valid.append((where, p))
        else:
            invalid.append({"setting": p, "reason": why.splitlines()[0]})
    chosen = valid[:k]
    rng = np.random.default_rng(rng_seed)
    randoms = [cls.sample_setting(rng, scale) for _ in range(k - len(chosen))]
    return {"settings": [p for _, p in chosen] + randoms,
            "domain": {n: list(v) for n, v in getattr(mod, "DOMAIN", cls.domain()).items()},
            "corners": sum(w == "corner" for w, _ in chosen),
            "edges": sum(w == "edge" for w, _ in chosen), "random": len(randoms),
            "left_out": len(valid) - len(chosen), "invalid": invalid}


# --------------------------------------------------------------------------- one run
@dataclasses.dataclass(frozen=True)
class RunConfig:
    """What a chapter run depends on besides its task (part of the engine's cache key)."""

    chapter: str
    number: str
    scale: str
    sources: str          # chapter + package digest: edited code never reuses old runs
    timeout: int = 1800


def _activation_cell():
    import nbformat

    return nbformat.v4.new_code_cell(
        "import dltheory.mutations\ndltheory.mutations.activate_from_env()",
        metadata={"tags": ["remove-cell"]})


def _set_env(values: dict) -> None:
    """Set (value) or unset (None) each variable."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def run_chapter(cfg: RunConfig, task: dict) -> dict:
    """Task function: one chapter run at ``task["setting"]`` (JSON), ``task["seed"]``, with
    ``task["mutation"]`` ("" for none). Returns the verdicts, kinds and resolutions of its
    ledger (JSON strings), wall and CPU seconds (this process and its kernel), and the
    error if the run broke off before writing a ledger."""
    import resource
    import tempfile

    import nbformat
    import papermill as pm

    nb = nbformat.read(str(_domain_check().notebook(cfg.number)), as_version=4)
    nb.cells.insert(0, _activation_cell())
    setting = json.loads(task["setting"])

    def cpu():
        return sum(getattr(resource.getrusage(w), a) for w in
                   (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for a in ("ru_utime", "ru_stime"))

    with tempfile.TemporaryDirectory(prefix="calibrate-") as tmp:
        env = {"DLTHEORY_RESULTS_DIR": f"{tmp}/claims", "DLTHEORY_FIG_DIR": f"{tmp}/fig",
               "DLTHEORY_CACHE_DIR": f"{tmp}/cache", "DLTHEORY_STATIC": "1",
               "DLTHEORY_SCALE": cfg.scale, "DLTHEORY_MUTATION": task["mutation"] or None,
               "DLTHEORY_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        old = {k: os.environ.get(k) for k in env}
        _set_env(env)
        t0, c0, error = time.perf_counter(), cpu(), None
        try:
            pm.execute_notebook(nb, f"{tmp}/out.ipynb", cwd=str(ROOT), kernel_name="python3",
                                parameters={"SCALE": cfg.scale, "SEED": task["seed"], **setting},
                                progress_bar=False, execution_timeout=cfg.timeout)
        except Exception as err:   # a FAIL raises ClaimFailed after writing the ledger
            error = f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:300]}"
        finally:
            _set_env(old)
        wall, cpu_s = time.perf_counter() - t0, cpu() - c0
        ledgers = sorted(Path(f"{tmp}/claims").glob("*.json"))
        data = json.loads(ledgers[0].read_text()) if ledgers else {"claims": []}
    if ledgers and error and "ClaimFailed" in error:
        error = None
    elif not ledgers and error is None:
        error = "no ledger written"
    cl = data["claims"]
    return {"verdicts": json.dumps({c["id"]: c["verdict"] for c in cl}),
            "kinds": json.dumps({c["id"]: c["kind"] for c in cl}),
            "resolutions": json.dumps({c["id"]: c.get("resolution") for c in cl}),
            "device": data.get("device", ""), "wall_s": round(wall, 2),
            "cpu_s": round(cpu_s, 2), "error": error}


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


def summarise(runs: list[dict], kinds: dict, resolutions: dict) -> dict:
    """Per claim: runs, false FAILs, their 95% upper bound, the mutations that flip it, and
    the median resolution over unmutated runs; also fills each mutated run's ``flipped``."""
    plain = [r for r in runs if not r["mutation"]]
    base = {(json.dumps(r["setting"], sort_keys=True), r["seed"]): r["verdicts"] for r in plain}
    for r in runs:
        if r["mutation"]:
            ref = base.get((json.dumps(r["setting"], sort_keys=True), r["seed"]), {})
            r["flipped"] = sorted(c for c, v in r["verdicts"].items()
                                  if v == "FAIL" and ref.get(c) not in ("FAIL", None))
    out = {}
    for cid in sorted({c for r in runs for c in r["verdicts"]}):
        seen = [r["verdicts"][cid] for r in plain if cid in r["verdicts"]]
        fails = sum(v == "FAIL" for v in seen)
        res = [x for x in resolutions.get(cid, []) if x is not None]
        out[cid] = {"kind": kinds.get(cid, ""), "runs": len(seen), "false_fail": fails,
                    "false_fail_upper95": clopper_pearson_upper(fails, len(seen)),
                    "caught_by": sorted(r["mutation"] for r in runs
                                        if r["mutation"] and cid in r.get("flipped", [])),
                    "median_resolution": float(np.median(res)) if res else None}
    return out


def validate(data) -> list[str]:
    """Schema problems of a calibration file (empty when well formed)."""
    if not isinstance(data, dict):
        return ["not a JSON object"]
    probs = [f"missing key {k!r}" for k in TOP_KEYS if k not in data]
    if probs:
        return probs
    if not isinstance(data["provenance"], dict) or "source_sha256" not in data["provenance"]:
        probs.append("provenance lacks source_sha256")
    for i, r in enumerate(data["runs"]):
        missing = [k for k in RUN_KEYS if k not in r] if isinstance(r, dict) else ["all"]
        if missing:
            probs.append(f"run #{i} lacks {missing}")
        elif not isinstance(r["verdicts"], dict) or not isinstance(r["setting"], dict):
            probs.append(f"run #{i}: verdicts and setting must be objects")
    mutations = {r.get("mutation") for r in data["runs"] if isinstance(r, dict)}
    for cid, c in data["claims"].items():
        missing = [k for k in CLAIM_KEYS if k not in c]
        if missing:
            probs.append(f"claim {cid} lacks {missing}")
            continue
        if not 0 <= c["false_fail"] <= c["runs"]:
            probs.append(f"claim {cid}: false_fail {c['false_fail']} not in [0, runs]")
        ub = c["false_fail_upper95"]
        if c["runs"] and not (isinstance(ub, float) and c["false_fail"] / c["runs"] <= ub <= 1):
            probs.append(f"claim {cid}: upper bound {ub!r} below the rate or above 1")
        if not set(c["caught_by"]) <= mutations:
            probs.append(f"claim {cid}: caught_by names mutations that did not run")
    return probs


# --------------------------------------------------------------------------- calibrate
def plan(chapter: str, num: str, seeds: int, settings: int, with_mutations: bool | list[str],
         scale: str) -> tuple[list[dict], dict]:
    """The tasks of a calibration and the settings report (``with_mutations``: all entries,
    or a list of entry ids)."""

    drawn = draw_settings(config_module(num), settings, scale)
    tasks = [{"setting": "{}", "seed": s, "mutation": ""} for s in range(seeds)]
    for i, s in enumerate(drawn["settings"]):
        s = dict(s)
        seed = int(s.pop("SEED", 1000 + i))
        tasks.append({"setting": json.dumps(s, sort_keys=True), "seed": seed, "mutation": ""})
    if with_mutations:
        tasks += [{"setting": "{}", "seed": 0, "mutation": m.id} for m in _entries(chapter, with_mutations)]
    return tasks, drawn


def _entries(chapter: str, which: bool | list[str]):
    from dltheory import mutations

    entries = mutations.registry(chapter)
    if which is True:
        return entries
    unknown = set(which) - {m.id for m in entries}
    if unknown:
        raise ValueError(f"not entries of {chapter}: {sorted(unknown)}; valid: "
                         f"{', '.join(m.id for m in entries)}")
    return [m for m in entries if m.id in which]


def calibrate(chapter: str, *, seeds: int = 3, settings: int = 0,
              with_mutations: bool | list[str] = False,
              scale: str = "smoke", backend: str | None = None, n_jobs: int | None = None,
              cache: bool | str | None = None, timeout: int = 1800) -> dict:
    """Run the calibration of ``chapter`` and return the calibration record (see above)."""
    from dltheory import experiments, provenance

    chapter, num = resolve_chapter(chapter)
    tasks, drawn = plan(chapter, num, seeds, settings, with_mutations, scale)
    src = provenance.chapter_source(chapter, ROOT)
    sources = f"{provenance.file_sha256(src) if src else ''}|{provenance.package_sha256()}"
    cfg = RunConfig(chapter, num, scale, sources, timeout)
    t0 = time.perf_counter()
    df = experiments.sweep(run_chapter, tasks, config=cfg, name=f"calibrate_{chapter}",
                           backend=backend, n_jobs=n_jobs, cache=cache, progress=False)
    runs, kinds, res = [], {}, {}
    for r in df.to_dict("records"):
        kinds.update(json.loads(r["kinds"]))
        if not r["mutation"]:
            for cid, x in json.loads(r["resolutions"]).items():
                res.setdefault(cid, []).append(x)
        runs.append({"setting": json.loads(r["setting"]), "seed": int(r["seed"]),
                     "mutation": r["mutation"], "verdicts": json.loads(r["verdicts"]),
                     "wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
                     "error": r["error"] if isinstance(r["error"], str) else None})
    claims = summarise(runs, kinds, res)
    muts = {}
    if with_mutations:
        by_id = {r["mutation"]: r for r in runs if r["mutation"]}
        for m in _entries(chapter, with_mutations):
            muts[m.id] = {"target": m.target, "description": m.description, "size": m.size,
                          "kind": m.kind, "expected": list(m.catches),
                          "flipped": by_id[m.id]["flipped"], "error": by_id[m.id]["error"]}
    device = next((d for d in df["device"] if d), "unknown")
    return {"schema": SCHEMA, "chapter": chapter, "scale": scale,
            "provenance": provenance.record(chapter, scale, device, ROOT),
            "wall_s": round(time.perf_counter() - t0, 1),
            "cpu_s": round(float(df["cpu_s"].sum()), 1),
            "settings": {k: v for k, v in drawn.items() if k != "settings"},
            "runs": runs, "claims": claims, "mutations": muts}


def report_lines(data: dict) -> list[str]:
    plain = [r for r in data["runs"] if not r["mutation"]]
    lines = [f"{data['chapter']} @ {data['scale']}: {len(plain)} unmutated runs, "
             f"{len(data['runs']) - len(plain)} mutated, {data['wall_s']} s wall, "
             f"{data['cpu_s']} s CPU (chapter runs)"]
    s = data["settings"]
    if s.get("corners") is not None:
        lines.append(f"settings: {s['corners']} corners, {s['edges']} edge midpoints, "
                     f"{s['random']} random; {s['left_out']} corners/edges left out "
                     f"(raise --settings); {len(s['invalid'])} refused by the Config")
    for cid, c in data["claims"].items():
        ub = c["false_fail_upper95"]
        lines.append(f"  {cid:32s} {c['kind']:9s} {c['false_fail']}/{c['runs']} false FAIL "
                     f"(<= {ub:.1%} at 95%)  caught by {len(c['caught_by'])}"
                     if ub is not None else f"  {cid:32s} {c['kind']:9s} no unmutated run")
    for mid, m in data["mutations"].items():
        lines.append(f"  [mutation] {mid}: flipped {m['flipped'] or 'nothing'}"
                     + (f" (error: {m['error']})" if m["error"] else ""))
    errors = [r for r in data["runs"] if r["error"]]
    for r in errors:
        lines.append(f"  error: seed {r['seed']} {r['setting']} {r['mutation']}: {r['error']}")
    return lines


# --------------------------------------------------------------------------- the page
def load_dir(directory: str | Path, scale: str = "smoke") -> tuple[dict, dict]:
    """``({chapter: record}, {file: problem})`` for every ``<chapter>.<scale>.json`` there."""
    found, bad = {}, {}
    for p in sorted(Path(directory).glob(f"*.{scale}.json")):
        try:
            data = json.loads(p.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            bad[p.name] = f"unreadable ({type(err).__name__})"
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
    return "" if x is None else f"{x:.1%}" if x >= 0.001 else f"{x:.2g}"


def page_tables(directory: str | Path, chapters: list[str], scale: str = "smoke"):
    """What the calibration page shows: ``(summary, claims, mutations)`` DataFrames; a
    chapter without a file is "not calibrated yet", one whose sources changed "stale"."""
    import pandas as pd

    from dltheory import ledgers

    found, bad = load_dir(directory, scale)
    srows, crows, mrows = [], [], []
    blank = dict.fromkeys(["chapter", "status", "runs", "off-default", "errors", "false FAILs",
                           "caught / planted", "median res.", "created", "detail"], "")
    for ch in chapters:
        data = found.get(ch)
        file_problem = bad.get(f"{ch}.{scale}.json")
        if data is None:
            srows.append({**blank, "chapter": ch, "detail": file_problem or "",
                          "status": "error" if file_problem else "not calibrated yet"})
            continue
        plain = [r for r in data["runs"] if not r["mutation"]]
        cl = data["claims"]
        muts = data.get("mutations", {})
        res = [c.get("median_resolution") for c in cl.values()
               if c["kind"] in ("hard", "soft") and c.get("median_resolution") is not None]
        stale = ledgers.staleness(data)
        srows.append({"chapter": ch, "status": "stale" if stale else "calibrated",
                      "runs": len(plain), "off-default": sum(bool(r["setting"]) for r in plain),
                      "errors": sum(bool(r["error"]) for r in data["runs"]),
                      "false FAILs": sum(c["false_fail"] for c in cl.values()),
                      "caught / planted": (f"{sum(bool(m['flipped']) for m in muts.values())}"
                                           f" / {len(muts)}") if muts else "not run",
                      "median res.": _pct(float(np.median(res))) if res else "",
                      "created": data["provenance"].get("created", ""),
                      "detail": stale or ""})
        for cid, c in cl.items():
            crows.append({"chapter": ch, "claim": cid, "kind": c["kind"], "runs": c["runs"],
                          "false FAIL": c["false_fail"],
                          "95% upper": _pct(c["false_fail_upper95"]),
                          "caught by": ", ".join(m.partition(":")[2] for m in c["caught_by"])
                          or "none of the planted errors"})
        for mid, m in muts.items():
            mrows.append({"chapter": ch, "mutation": mid.partition(":")[2], "size": m["size"],
                          "kind": m["kind"], "expected": ", ".join(m["expected"]) or "(none)",
                          "flipped": ", ".join(m["flipped"]) or "nothing",
                          "detail": m["error"] or ""})
    for name, why in bad.items():
        if name.split(".")[0] not in chapters:
            srows.append({**blank, "chapter": name, "status": "error", "detail": why})
    return pd.DataFrame(srows), pd.DataFrame(crows), pd.DataFrame(mrows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("chapter", help="ledger name (sparse_scaling) or number (03)")
    ap.add_argument("--seeds", type=int, default=3, help="unmutated runs at the defaults")
    ap.add_argument("--settings", type=int, default=0, help="unmutated runs off the defaults")
    ap.add_argument("--mutations", action="store_true", help="one run per registry entry")
    ap.add_argument("--mutation", action="append", default=[], metavar="ID",
                    help="run only this registry entry (repeatable)")
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--out", default=str(ROOT / "_build" / "calibration"))
    ap.add_argument("--backend", default=None, help="sequential | loky | dask (engine)")
    ap.add_argument("--jobs", type=int, default=None, help="workers for loky / dask")
    ap.add_argument("--no-cache", action="store_true", help="rerun every chapter run")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per chapter run")
    args = ap.parse_args(argv)
    data = calibrate(args.chapter, seeds=args.seeds, settings=args.settings,
                     with_mutations=args.mutation or args.mutations, scale=args.scale, backend=args.backend,
                     n_jobs=args.jobs, cache=False if args.no_cache else None,
                     timeout=args.timeout)
    problems = validate(data)
    if problems:
        raise RuntimeError(f"calibration record malformed: {problems}")
    out = Path(args.out) / f"{data['chapter']}.{data['scale']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print("\n".join(report_lines(data)))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
