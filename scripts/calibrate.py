"""Size and power of a chapter's checks: re-run it over seeds, settings and planted errors.

    python scripts/calibrate.py gradient_flow --seeds 3 --settings 2 --mutations --out _build/calibration
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
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
from dltheory.calibration import (  # noqa: E402  (the page shares these)
    SCHEMA,
    report_lines,
    summarise,
    validate,
)


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


def draw_settings(mod, k: int, scale: str, rng_seed: int = 0) -> dict:
    """``k`` settings off the defaults: the valid corners, then the valid edge midpoints,
    then random ones (``Config.sample_setting``). Returns ``{"settings", "domain",
    "corners", "edges", "random", "left_out", "invalid": [{"setting", "reason"}]}``."""
    cls = mod.Config
    valid, invalid = [], []
    for where, p, ok, why in cls.box(scale) if k > 0 else []:
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


def run_chapter(cfg: RunConfig, task: dict) -> dict:
    """Task function: one chapter run at ``task["setting"]`` (JSON), ``task["seed"]``, with
    ``task["mutation"]`` ("" for none). Returns the verdicts, kinds and resolutions of its
    ledger (JSON strings), wall and CPU seconds (this process and its kernel), and the
    error if the run broke off before writing a ledger. Only a finished run with a ledger is
    cached: a dead kernel, a timeout or an error is returned uncached
    (``experiments.no_cache``), so the next calibration runs it again."""
    from dltheory import experiments

    r = _domain_check().execute(
        cfg.number, {"SEED": task["seed"], **json.loads(task["setting"])}, cfg.scale,
        env={"DLTHEORY_MUTATION": task["mutation"] or None}, prepend=[_activation_cell()],
        timeout=cfg.timeout)
    data = r["ledger"] or {"claims": []}
    cl = data["claims"]
    out = {"verdicts": json.dumps({c["id"]: c["verdict"] for c in cl}),
            "kinds": json.dumps({c["id"]: c["kind"] for c in cl}),
            "resolutions": json.dumps({c["id"]: c.get("resolution") for c in cl}),
            "device": data.get("device", ""), "wall_s": r["wall_s"], "cpu_s": r["cpu_s"],
            "error": r["error"]}
    finished = r["ledger"] is not None and r["error"] is None
    return out if finished else experiments.no_cache(out)


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
    sources = f"{provenance.code_sha256(src) if src else ''}|{provenance.package_sha256(chapter)}"
    # the record describes the code the runs started with: an edit during the calibration
    # leaves it stale on the page instead of attributing old runs to new code
    prov = provenance.record(chapter, scale, "unknown", ROOT)
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
    prov["device"] = next((d for d in df["device"] if d), "unknown")
    now = f"{provenance.code_sha256(src) if src else ''}|{provenance.package_sha256(chapter)}"
    if now != sources:
        print(f"[calibrate] {chapter}: its code changed during the calibration; the record "
              "describes the code it started with and is shown as stale", file=sys.stderr)
    return {"schema": SCHEMA, "chapter": chapter, "scale": scale,
            "provenance": prov,
            "wall_s": round(time.perf_counter() - t0, 1),
            "cpu_s": round(float(df["cpu_s"].sum()), 1),
            "settings": {k: v for k, v in drawn.items() if k != "settings"},
            "runs": runs, "claims": claims, "mutations": muts}


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
    if (args.mutation or args.mutations) and args.seeds < 1:
        # a planted error is caught when it flips a claim that the unmutated runs at the
        # defaults PASS: without one, every entry would read 'caught by nothing'
        ap.error("--mutations/--mutation need --seeds >= 1 (unmutated runs at the defaults "
                 "to compare the planted errors with)")
    data = calibrate(args.chapter, seeds=args.seeds, settings=args.settings,
                     with_mutations=args.mutation or args.mutations, scale=args.scale, backend=args.backend,
                     n_jobs=args.jobs, cache=False if args.no_cache else None,
                     timeout=args.timeout)
    problems = validate(data)
    if problems:
        raise RuntimeError(f"calibration record malformed: {problems}")
    out = Path(args.out) / f"{data['chapter']}.{data['scale']}.json"
    from dltheory import atomic

    atomic.write_json(out, data, indent=1, sort_keys=False)   # a full disk keeps the old one
    print("\n".join(report_lines(data)))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
