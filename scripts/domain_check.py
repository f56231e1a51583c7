"""Run chapters at random settings of their declared parameter domain, at a scale.

    python scripts/domain_check.py --chapter 03 --n 10 --seed 0     # 10 random settings
    python scripts/domain_check.py --chapter 04 --ci                # the CI settings only
    python scripts/domain_check.py --chapter 03 --set ALPHA1=2.0 --set ALPHA2=-0.5

Each chapter's ``Config`` module (``dltheory.<subpackage>.config``) declares ``DOMAIN``
(headline knob -> range), ``sample_setting(rng)`` (a random valid setting) and
``CI_SETTINGS`` (a few off-default settings CI runs). A setting is injected with papermill
into the chapter's notebook (``SCALE`` included); the chapter writes its claims ledger to
a private folder, and this script lists every hard claim, identity or derivation that
FAILed, and the hard claims declared INCONCLUSIVE (out of the scale's reach at that
setting, a reason stated before the run), with the setting and the wall time. Exit status
1 if any setting failed or errored.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dltheory import chapter as chapter_registry

ROOT = Path(__file__).resolve().parents[1]
#: two-digit number -> subpackage, from the chapter registry
SUBPACKAGES = {c.code: c.subpackage for c in chapter_registry.REGISTRY}


def notebook(chapter: str) -> Path:
    hits = sorted((ROOT / "book").glob(f"{chapter}_*.ipynb"))
    if len(hits) != 1:
        raise ValueError(f"chapter {chapter!r}: expected one book/{chapter}_*.ipynb, "
                         f"found {[h.name for h in hits]}")
    return hits[0]


def config_module(chapter: str):
    """The config module of chapter ``chapter`` (two digits), ``<package>.config``."""
    codes = [c.code for c in chapter_registry.REGISTRY]
    if chapter not in codes:
        raise ValueError(f"chapter must be one of {codes}, got {chapter!r}")
    return chapter_registry.module(chapter, "config")


def execute(chapter: str, parameters: dict, scale: str = "smoke", *, env: dict | None = None,
            prepend: list | None = None, timeout: int = 600) -> dict:
    """Run chapter ``chapter`` (two digits) with papermill, ``SCALE`` and ``parameters``
    injected, private results/figure/cache folders, ``DLTHEORY_STATIC=1`` and one thread.

    env : extra environment variables for the kernel (``None`` values unset one);
    prepend : notebook cells put before the first cell.
    Returns ``{"ledger": the claims ledger JSON or None, "error": None or one line,
    "wall_s", "cpu_s"}`` (CPU of this process and its kernel). A hard FAIL raises
    ``ClaimFailed`` after the ledger is written: that is not an error here.
    """
    import resource

    import nbformat
    import papermill as pm

    sys.path.insert(0, str(ROOT / "scripts" / "sphinxext"))
    import kernel_encryption

    kernel_encryption.use_encryption()   # no plain-TCP kernel warning per run
    nb = nbformat.read(str(notebook(chapter)), as_version=4)
    nb.cells[:0] = list(prepend or [])

    def cpu():
        return sum(getattr(resource.getrusage(w), a) for w in
                   (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for a in ("ru_utime", "ru_stime"))

    with tempfile.TemporaryDirectory(prefix="chapter-run-") as tmp:
        full_env = {"DLTHEORY_RESULTS_DIR": f"{tmp}/claims", "DLTHEORY_FIG_DIR": f"{tmp}/fig",
                    "DLTHEORY_CACHE_DIR": f"{tmp}/cache", "DLTHEORY_STATIC": "1",
                    "DLTHEORY_SCALE": scale, "DLTHEORY_THREADS": "1", "OMP_NUM_THREADS": "1",
                    "MPLBACKEND": "Agg", **(env or {})}
        old = {k: os.environ.get(k) for k in full_env}
        _set_env(full_env)
        t0, c0, error = time.perf_counter(), cpu(), None
        try:
            pm.execute_notebook(nb, f"{tmp}/out.ipynb", cwd=str(ROOT), kernel_name="python3",
                                parameters={"SCALE": scale, **parameters},
                                progress_bar=False, execution_timeout=timeout)
        except Exception as err:   # a hard FAIL raises at the end; the ledger is written
            error = f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:300]}"
        finally:
            _set_env(old)
        wall, cpu_s = time.perf_counter() - t0, cpu() - c0
        ledgers = sorted(Path(f"{tmp}/claims").glob("*.json"))
        ledger = json.loads(ledgers[0].read_text()) if ledgers else None
    if ledger is not None and error and "ClaimFailed" in error:
        error = None
    elif ledger is None and error is None:
        error = "no ledger written"
    return {"ledger": ledger, "error": error, "wall_s": round(wall, 2), "cpu_s": round(cpu_s, 2)}


def _set_env(values: dict) -> None:
    """Set (value) or unset (None) each variable."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def run_setting(chapter: str, setting: dict, scale: str = "smoke",
                timeout: int = 600) -> dict:
    """Run one chapter at ``setting``; return {setting, wall_s, error, not_pass: [...],
    inconclusive: [...]}: the hard claims, identities and derivations that FAILed, and the
    hard claims the chapter declared out of reach at this setting (INCONCLUSIVE with the
    reason it states before the run; shown, not a failure)."""
    r = execute(chapter, setting, scale, timeout=timeout)
    cl = (r["ledger"] or {"claims": []})["claims"]
    checked = [c for c in cl if c["kind"] in ("hard", "identity", "derivation")]
    return {"setting": setting, "wall_s": round(r["wall_s"], 1), "error": r["error"],
            "not_pass": [_line(c) for c in checked if c["verdict"] not in ("PASS", "INCONCLUSIVE")],
            "inconclusive": [_line(c) for c in checked if c["verdict"] == "INCONCLUSIVE"]}


def _line(c: dict) -> str:
    return (f"{c['id']} [{c['kind']}] {c['verdict']} (measured {c['measured']}, "
            f"{c['tolerance'] or c.get('note', '')})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chapter", required=True, help="two-digit chapter number, e.g. 03")
    ap.add_argument("--n", type=int, default=5, help="random settings to run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", default="smoke")
    ap.add_argument("--ci", action="store_true", help="run the chapter's CI_SETTINGS")
    ap.add_argument("--set", action="append", default=[], metavar="KNOB=VALUE")
    args = ap.parse_args(argv)
    mod = config_module(args.chapter)
    if args.set:
        settings = [{k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}]
    elif args.ci:
        settings = list(mod.CI_SETTINGS)
    else:
        rng = np.random.default_rng(args.seed)
        settings = [mod.sample_setting(rng) for _ in range(args.n)]
    bad = 0
    for s in settings:
        r = run_setting(args.chapter, s, args.scale)
        ok = r["error"] is None and not r["not_pass"]
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {r['wall_s']:6.1f} s  {json.dumps(s)}")
        for line in r["not_pass"]:
            print(f"       {line}")
        for line in r["inconclusive"]:
            print(f"       (out of reach) {line}")
        if r["error"] and not r["not_pass"]:
            print(f"       {r['error']}")
    print(f"{len(settings) - bad}/{len(settings)} settings passed every hard claim")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
