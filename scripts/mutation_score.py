"""Automated mutation score of the theory, experiment and judging code against its unit tests.

    python scripts/mutation_score.py                      # every module below, writes the record
    python scripts/mutation_score.py --modules fitting    # a subset (the others kept from the record)
    python scripts/mutation_score.py --list               # the sampled mutants, run nothing

For each module of ``MODULES``, mutmut (pinned: ``MUTMUT``, installed with pip when missing)
generates every single-token mutant of the module (an operator, a constant, a comparison, a
removed argument, a string: mutmut's own operators), a reproducible sample of at most
``--sample`` of them is drawn (``random.Random(f"{seed}:{module}")`` over the sorted mutant
names), and each sampled mutant is run against the module's fast unit tests (``tests``:
files or test ids, ``deselect``: the slow ones left out). mutmut runs, per mutant, only the
selected tests that call the mutated function.

All of it happens in a temporary copy of the committed tree (``git archive HEAD``): the
working tree's ``src`` is never mutated (calibration runs may be importing it). Every mutmut
process runs under ``nice -n 15`` with one thread and one worker (``--max-children 1``).

Writes ``book/records/mutation_score.json``: per module the tool and version, the test
command, the sample, the counts per status, the score and every survivor (file:line, the
mutation as ``- old`` / ``+ new``, and its triage). Triage is human work: it is read from
``scripts/mutation_triage.json`` (``{"rules": [{"path": glob, "function": name (optional),
"match": regex searched in the mutation, "triage": text}]}``, the first matching rule wins);
a survivor that no rule matches is written as ``untriaged`` and the script exits 1. A triage
starts with ``equivalent:`` (no input changes what the code computes or which inputs it
refuses; the wording of an error message is not counted) or ``caught by nothing:`` (and why).

Score = detected / (detected + survived + no tests), detected = killed + timeout: a mutant
whose function no selected test calls ("no tests") counts as not detected.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import importlib.metadata
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "book" / "records" / "mutation_score.json"
TRIAGE = ROOT / "scripts" / "mutation_triage.json"
MUTMUT = "3.8.1"
SAMPLE = 160   # mutants per module unless its entry says "sample"
SEED = 0
STATUSES = ("killed", "timeout", "survived", "no tests", "skipped", "suspicious", "segfault",
            "not checked")

# one theory module per chapter and two judging modules (fitting, claims), each with its
# fast unit tests
MODULES = {
    "gradient_flow.model": {
        "path": "src/dltheory/gradient_flow/model.py",
        "tests": ["tests/test_gradient_flow.py", "tests/test_bad_input.py",
                  "tests/test_gradient_flow_mutants.py"]},
    "conservation.laws": {
        "path": "src/dltheory/conservation/laws.py",
        "tests": ["tests/conservation/test_conservation_laws.py",
                  "tests/conservation/test_conservation_counts.py",
                  # the only tests of QK-norm, NormSwiGLU and renormalised top-1 routing
                  "tests/conservation/test_counter_domain.py",
                  "tests/conservation/test_laws_mutants.py"]},
    "sparse_scaling.linear": {
        "path": "src/dltheory/sparse_scaling/linear.py",
        "tests": ["tests/sparse_scaling/test_sparse_scaling_exact.py",
                  "tests/sparse_scaling/test_sparse_scaling_theory.py",
                  "tests/sparse_scaling/test_config_and_inputs.py",
                  "tests/sparse_scaling/test_linear_mutants.py"]},
    "depth_expansion.bounds": {
        "path": "src/dltheory/depth_expansion/bounds.py",
        "tests": ["tests/depth_expansion/test_theorems.py",
                  "tests/depth_expansion/test_depth_expansion_theory.py",
                  "tests/depth_expansion/test_config_and_inputs.py",
                  "tests/depth_expansion/test_bounds_mutants.py"],
        "sample": 10_000},  # small: every mutant
    "fitting": {
        "path": "src/dltheory/fitting.py",
        "tests": ["tests/test_fitting.py", "tests/test_bad_input.py",
                  "tests/test_fitting_mutants.py"]},
    "pretrain_finetune.replica": {
        "path": "src/dltheory/pretrain_finetune/replica.py",
        "tests": ["tests/pretrain_finetune/test_pf_replica_domain.py",
                  "tests/pretrain_finetune/test_pf_theory.py::test_replica_l2_limit_and_recovery",
                  "tests/pretrain_finetune/test_pf_theory.py::test_replica_vs_finite_d_minimiser",
                  "tests/pretrain_finetune/test_pf_inputs.py",
                  "tests/pretrain_finetune/test_replica_mutants.py"],
        "sample": 60,   # its tests solve the replica equations: ~20 s per surviving mutant
        "deselect": [
            "tests/pretrain_finetune/test_pf_replica_domain.py::"
            "test_two_stage_quadrature_at_the_corner_of_the_domain",
            "tests/pretrain_finetune/test_pf_replica_domain.py::"
            "test_two_stage_uses_the_quadrature_setting_and_approaches_perfect_pt",
            "tests/pretrain_finetune/test_pf_replica_domain.py::"
            "test_pt_replica_matches_exact_minimisers_on_the_domain[0.2-0.95-0.01]"]},
    "claims": {  # the judging module: verdict rules, WEAK resolution, decidability
        "path": "src/dltheory/claims.py",
        "tests": ["tests/test_claims.py", "tests/test_claims_mutants.py"]},
}


def ensure_mutmut() -> None:
    try:
        have = importlib.metadata.version("mutmut")
    except importlib.metadata.PackageNotFoundError:
        have = None
    if have != MUTMUT:
        print(f"installing mutmut=={MUTMUT} (found {have})", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", f"mutmut=={MUTMUT}"],
                       check=True)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pytest_args(spec: dict) -> list[str]:
    return [*spec["tests"], *(f"--deselect={d}" for d in spec.get("deselect", []))]


def test_command(spec: dict) -> str:
    return " ".join(["python -m pytest -x -q -m 'not chapter_run'", *pytest_args(spec)])


def copy_tree(dest: Path) -> str:
    """The committed tree (HEAD) into ``dest``; returns its commit."""
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", commit,
                              "src", "tests", "book", "pyproject.toml"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def write_config(dest: Path, spec: dict) -> None:
    def lines(xs):
        return "\n".join("    " + x for x in xs)
    (dest / "setup.cfg").write_text(
        "[mutmut]\nsource_paths=src\n"
        f"only_mutate=\n    {spec['path']}\n"
        f"pytest_add_cli_args_test_selection=\n{lines(pytest_args(spec))}\n"
        "pytest_add_cli_args=\n    -m\n    not chapter_run\n    -p\n    no:cacheprovider\n"
        "also_copy=\n    book/\n"
        "use_git_change_detection=false\n")
    # mutmut reads [tool.mutmut] from pyproject.toml before setup.cfg; there is none
    assert "[tool.mutmut]" not in (dest / "pyproject.toml").read_text()


def enumerate_mutants(dest: Path, rel: str) -> dict[str, dict]:
    """Every mutant of ``rel``: name -> {function, line, mutation}, from mutmut's generator."""
    from difflib import unified_diff

    import libcst as cst
    from mutmut.mutation.diff_apply import read_mutant_function, read_original_function
    from mutmut.mutation.file_mutation import mutate_file_contents
    from mutmut.utils.format_utils import get_mutant_name

    source = (dest / rel).read_text()
    mutated = mutate_file_contents(rel, source, None, None)
    module = cst.parse_module(mutated.code)
    src_lines = source.split("\n")
    out = {}
    for short in mutated.mutant_names:
        name = get_mutant_name(Path(rel), short)
        a, b = (cst.Module([f(module, name)]).code.strip().split("\n")
                for f in (read_original_function, read_mutant_function))
        diff = "\n".join(unified_diff(a, b, lineterm=""))
        func = readable_function(short)
        out[name] = {"function": func, **locate(diff, src_lines, func)}
    return out


def readable_function(short: str) -> str:
    """``x_f__mutmut_3`` -> ``f``; ``xǁCǁm__mutmut_2`` -> ``C.m``."""
    base = short.partition("__mutmut_")[0]
    if base.startswith("x\u01c1"):
        _, cls, meth = base.split("\u01c1")
        return f"{cls}.{meth}"
    return base[2:]


def locate(diff: str, src_lines: list[str], func: str) -> dict:
    """The source line of a mutant and its mutation (``- old => + new``) from mutmut's diff
    of the function."""
    minus, plus, hunk_start, offset = [], [], 1, None
    k = 0
    for line in diff.split("\n"):
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            hunk_start = int(re.match(r"@@ -(\d+)", line).group(1))
            k = 0
            continue
        if line.startswith("-"):
            minus.append(line[1:])
            if offset is None:
                offset = hunk_start + k - 1
        elif line.startswith("+"):
            plus.append(line[1:])
        if not line.startswith("+"):
            k += 1
    name = func.split(".")[-1]
    defs = [i for i, s in enumerate(src_lines)
            if re.match(rf"\s*(async\s+)?def\s+{re.escape(name)}\b", s)]
    start = defs[0] if defs else 0
    old = minus[0] if minus else ""
    candidates = [i for i, s in enumerate(src_lines) if s.strip() == old.strip() and i >= start]
    guess = start + (offset or 0)
    line = min(candidates, key=lambda i: abs(i - guess)) if candidates else guess
    squash = " / ".join(s.strip() for s in minus), " / ".join(s.strip() for s in plus)
    return {"line": line + 1, "mutation": f"- {squash[0]} => + {squash[1]}"}


def sample(names: list[str], k: int, seed: int, module: str) -> list[str]:
    names = sorted(names)
    if len(names) <= k:
        return names
    return sorted(random.Random(f"{seed}:{module}").sample(names, k))


def run_module(module: str, spec: dict, k: int, seed: int, list_only: bool) -> dict:
    from mutmut.stats import status_by_exit_code

    tmp = Path(tempfile.mkdtemp(prefix=f"mutation-{module}-"))
    try:
        commit = copy_tree(tmp)
        write_config(tmp, spec)
        mutants = enumerate_mutants(tmp, spec["path"])
        chosen = sample(list(mutants), k, seed, module)
        print(f"== {module}: {len(chosen)} of {len(mutants)} mutants, tests: {test_command(spec)}",
              flush=True)
        if list_only:
            for n in chosen:
                print(f"  {n}  {spec['path']}:{mutants[n]['line']}  {mutants[n]['mutation']}")
            return {}
        env = {k_: v for k_, v in os.environ.items() if k_ not in ("PYTHONPATH",)}
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MPLBACKEND="Agg", DLTHEORY_STATIC="1", PYTHONHASHSEED="0")
        t0 = time.monotonic()
        log = tmp / "mutmut.log"
        with open(log, "w") as f:
            rc = subprocess.run(["nice", "-n", "15", sys.executable, "-m", "mutmut", "run",
                                 "--max-children", "1", *chosen],
                                cwd=tmp, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
        wall = time.monotonic() - t0
        meta = json.loads((tmp / "mutants" / (spec["path"] + ".meta")).read_text())
        codes = meta["exit_code_by_key"]
        if rc != 0 or any(codes.get(n) is None for n in chosen):
            tail = log.read_text()[-3000:]
            raise SystemExit(f"mutmut failed on {module} (exit {rc}):\n{tail}")
        status = {n: status_by_exit_code[codes[n]] for n in chosen}
        counts = {s: sum(v == s for v in status.values()) for s in STATUSES}
        detected = counts["killed"] + counts["timeout"]
        judged = detected + counts["survived"] + counts["no tests"]
        survivors = [{"mutant": n.rpartition(".")[2], "status": status[n],
                      "file": spec["path"], **mutants[n]}
                     for n in chosen if status[n] in ("survived", "no tests")]
        return {
            "path": spec["path"], "tool": f"mutmut {MUTMUT}", "test_command": test_command(spec),
            "tests": spec["tests"], "deselected": spec.get("deselect", []),
            "commit": commit, "source_sha256": sha256(tmp / spec["path"]),
            "mutants_generated": len(mutants), "mutants_sampled": len(chosen),
            "sample": (f"all {len(mutants)}" if len(chosen) == len(mutants) else
                       f"{len(chosen)} of {len(mutants)}: random.Random('{seed}:{module}')"
                       ".sample(sorted mutant names)"),
            "counts": counts, "score": detected / judged if judged else None,
            "wall_s": round(wall, 1), "survivors": survivors}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def apply_triage(record: dict, triage: dict) -> int:
    """Fill each survivor's ``triage`` from the first rule that matches it (``path``: a glob;
    ``function``: optional; ``match``: a regex searched in the mutation); returns how many
    survivors no rule matches. Rules that match nothing are named (stale triage)."""
    missing, used = 0, set()
    for mod in record["modules"].values():
        for s in mod["survivors"]:
            t = None
            for i, rule in enumerate(triage.get("rules", [])):
                if (fnmatch.fnmatch(s["file"], rule["path"])
                        and rule.get("function", s["function"]) == s["function"]
                        and re.search(rule["match"], s["mutation"])):
                    t = rule["triage"]
                    used.add(i)
                    break
            if t is not None and not t.startswith(("equivalent:", "caught by nothing:")):
                raise SystemExit(f"triage must start 'equivalent:' or 'caught by nothing:': {t}")
            s["triage"] = t or "untriaged"
            missing += t is None
        mod["survivor_triage"] = {
            c: sum(s["triage"].startswith(c) for s in mod["survivors"])
            for c in ("equivalent", "caught by nothing", "untriaged")}
    for i, rule in enumerate(triage.get("rules", [])):
        if i not in used and any(fnmatch.fnmatch(m["path"], rule["path"])
                                 for m in record["modules"].values()):
            print(f"triage rule matches no survivor: {rule['path']} {rule.get('function', '')} "
                  f"{rule['match']!r}")
    return missing


def finish(record: dict, triage: dict, out: Path) -> int:
    """Order, describe, triage and write the record; returns how many survivors lack triage."""
    record["modules"] = {m: record["modules"][m] for m in MODULES if m in record["modules"]}
    for mod in record["modules"].values():
        mod["survivors"].sort(key=lambda s: (s["line"], s["mutant"]))
    record.update({
        "schema": 1,
        "tool": f"mutmut {MUTMUT}",
        "score": "detected / (detected + survived + no tests), detected = killed + timeout",
        "scope": ("single-token mutants (mutmut's operators) of the functions and methods of "
                  "each module, decorated functions and module-level constants excepted "
                  "(mutmut does not mutate them), run against that module's fast unit tests "
                  "only; a sampled module's numbers are for its sample"),
        "wall_s": round(sum(m["wall_s"] for m in record["modules"].values()), 1),
    })
    missing = apply_triage(record, triage)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modules", nargs="*", default=list(MODULES), choices=list(MODULES))
    ap.add_argument("--sample", type=int, default=None,
                    help=f"mutants per module (default: the module's 'sample', else {SAMPLE})")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--out", type=Path, default=RECORD)
    ap.add_argument("--list", action="store_true", help="print the sampled mutants only")
    ap.add_argument("--retriage", action="store_true",
                    help="re-apply scripts/mutation_triage.json to the record, run nothing")
    a = ap.parse_args()
    ensure_mutmut()
    triage = json.loads(TRIAGE.read_text()) if TRIAGE.exists() else {}
    record = json.loads(a.out.read_text()) if a.out.exists() else {}
    record.setdefault("modules", {})
    if not a.retriage:
        t0 = time.monotonic()
        for module in a.modules:
            spec = MODULES[module]
            res = run_module(module, spec, a.sample or spec.get("sample", SAMPLE), a.seed, a.list)
            if not res:
                continue
            record["modules"][module] = res
            finish(record, triage, a.out)   # after each module: an interrupted run keeps it
            c = res["counts"]
            print(f"   score {res['score']:.3f}: killed {c['killed']}, timeout {c['timeout']}, "
                  f"survived {c['survived']}, no tests {c['no tests']} ({res['wall_s']} s)",
                  flush=True)
        if a.list:
            return 0
        print(f"mutation runs: {time.monotonic() - t0:.0f} s")
    missing = finish(record, triage, a.out)
    print(f"wrote {a.out}" + (f"; {missing} survivors untriaged" if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
