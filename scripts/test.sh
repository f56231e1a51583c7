#!/usr/bin/env bash
# Run every check: lint, unit tests (incl. notebook pairing), the planted-error tests, the
# fast numeric unit tests again under a narrower SIMD dispatch (scripts/other_simd.py), every
# chapter under nbmake at the smoke scale, every chapter at the paper scale with a 30 s
# budget (CPU), a strict book build at smoke, the MathJax check of its formulas and of its
# text (no TeX left untypeset, no literal fence), and the same text check in Chromium.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
# every DLTHEORY_* variable set is checked once, here (dltheory.validation's table)
python -m dltheory.validation --check || exit 2
export DLTHEORY_SCALE="${DLTHEORY_SCALE:-smoke}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export DLTHEORY_STATIC=1   # no live widgets under nbmake or in the book build
JOBS="${DLTHEORY_JOBS:-2}"
t0=$SECONDS
echo "== ruff"
ruff check .
mkdir -p _build
echo "== unit tests (two processes), the planted-error tests and the unit tests under a narrower SIMD"
# Single-process passes side by side instead of one after the other on two workers each:
# the two cores stay busy to the end (a two-worker pass idles a core in its tail: 84-91%
# measured) and no worker start-up is paid twice. The planted-error tests judge each
# chapter's registry entries against its checks on smoke-sized experiments, computed once
# per test file (module fixtures). Chapter runs and domain corners are the later steps' work.
# The third pass runs the fast numeric unit tests again as a narrower CPU computes
# (scripts/other_simd.py: NumPy's widest SIMD dispatch off, OpenBLAS, ATen and MKL one level
# down), so a test that depends on the last bit of a float fails here, not on a reader's CPU.
# Each pass logs one line per test (-v) under _build/; a line every 20 s says how far they are.
SIMD_TESTS=(tests/test_fitting.py tests/test_fitting_mutants.py tests/test_gradient_flow.py
  tests/test_gradient_flow_mutants.py tests/test_claims.py tests/test_claims_mutants.py
  tests/test_toolkit.py tests/test_any_machine.py tests/conservation tests/depth_expansion
  tests/pretrain_finetune tests/sparse_scaling)
# left out of that pass for time (the first pass runs them): the two-stage replica
# quadratures, the walk budget cut, the toolkit's linear-net laws, the random-shape law
# counts and the bracket-level counts (each over 15 s), and the staleness digests (no float)
SIMD_SKIP="two_stage or walks_cut_alone or linear_net_laws or random_shapes or bracket_levels or staleness"
SIMD_ENV=$(python scripts/other_simd.py)
echo "   narrower SIMD: ${SIMD_ENV##*# }"
t=$SECONDS
# The unit tests run as two processes (the chapters' test folders; the rest), so the longest
# of the four passes is not one process's whole unit suite: on two cores that one alone took
# longer than the other three (224 s of 233 s, idle clean clone, measured).
CHAPTER_TESTS=(tests/conservation tests/depth_expansion tests/pretrain_finetune tests/sparse_scaling)
python scripts/cpu_time.py _build/unit_cpu.json -- \
  python -m pytest -v -p no:xdist -m "not chapter_run and not registry" --durations=10 \
  "${CHAPTER_TESTS[@]}" > _build/unit.log 2>&1 &
UNIT=$!
python scripts/cpu_time.py _build/unit2_cpu.json -- \
  python -m pytest -v -p no:xdist -m "not chapter_run and not registry" --durations=10 \
  $(printf -- '--ignore=%s ' "${CHAPTER_TESTS[@]}") tests > _build/unit2.log 2>&1 &
UNIT2=$!
# the Colab-like environment of the nbmake step below, built meanwhile (mostly file copies);
# DLTHEORY_COLAB_ENV=0 runs the chapters in ./.venv's kernel instead (quicker, less faithful)
COLAB=$(python -m dltheory.validation DLTHEORY_COLAB_ENV 1)
if [ "$COLAB" != False ]; then
  bash scripts/colab_env.sh _build/colab_env > _build/colab_env.log 2>&1 &
  COLAB_ENV=$!
  KERNEL=(--nbmake-kernel=dltheory-colab)
else
  (echo "   DLTHEORY_COLAB_ENV=0: the chapters run in ./.venv's kernel") > _build/colab_env.log &
  COLAB_ENV=$!
  KERNEL=()
fi
python scripts/cpu_time.py _build/registry_cpu.json -- \
  python -m pytest -v -p no:xdist -m "registry and not chapter_run" --durations=5 tests \
  > _build/registry.log 2>&1 &
REGISTRY=$!
(
  eval "$SIMD_ENV"
  exec python scripts/cpu_time.py _build/simd_cpu.json -- \
    python -m pytest -v -p no:xdist -m "not chapter_run and not registry" -k "not ($SIMD_SKIP)" \
    --durations=5 "${SIMD_TESTS[@]}"
) > _build/simd.log 2>&1 &
SIMD=$!
progress() {   # one line every 20 s: the tests each pass has finished so far
  local line n ok bad
  while sleep 20 && kill -0 $$ 2>/dev/null; do
    line=""
    for n in unit unit2 registry simd; do
      ok=$(grep -cE ' (PASSED|SKIPPED|XFAIL|XPASS)' "_build/$n.log" 2>/dev/null || true)
      bad=$(grep -cE ' (FAILED|ERROR)' "_build/$n.log" 2>/dev/null || true)
      line+="$n ${ok:-0} done"
      [ "${bad:-0}" = 0 ] || line+=" ($bad FAILED)"
      line+="; "
    done
    echo "   $((SECONDS - t)) s: ${line%; }"
  done
}
progress & PROGRESS=$!
rc_unit=0; rc_registry=0; rc_simd=0
wait "$UNIT" || rc_unit=$?
wait "$UNIT2" || rc_unit=$?
T_UNIT=$((SECONDS - t))
wait "$SIMD" || rc_simd=$?
wait "$REGISTRY" || rc_registry=$?
T_REGISTRY=$((SECONDS - t))
kill "$PROGRESS" 2>/dev/null || true
beat() {       # "LABEL: N s" every 20 s while a step that prints little runs (ends with us)
  local t0=$SECONDS
  while sleep 20 && kill -0 $$ 2>/dev/null; do echo "   ... $1: $((SECONDS - t0)) s"; done
}
summary() {    # a pass's log from its first section (failures, durations, the count) on
  awk '/^=+ (FAILURES|ERRORS|warnings summary|slowest|short test summary)/{on=1} on' "$1"
}
echo "-- unit tests ($T_UNIT s; every test's line in _build/unit.log and unit2.log)"
summary _build/unit.log; summary _build/unit2.log
echo "-- planted-error tests ($T_REGISTRY s from the same start)"; summary _build/registry.log
echo "-- unit tests under the narrower SIMD (from the same start)"; summary _build/simd.log
[ "$rc_unit" = 0 ] || { echo "the unit tests failed" >&2; exit 1; }
[ "$rc_registry" = 0 ] || { echo "the planted-error tests failed" >&2; exit 1; }
[ "$rc_simd" = 0 ] || { echo "the unit tests failed under a narrower SIMD (${SIMD_ENV##*# }): a result that depends on the last bit of a float?" >&2; exit 1; }
CPU_UNIT=$(python -c "import json; print(round(sum(json.load(open(f'_build/{n}_cpu.json'))['cpu_s'] for n in ('unit', 'unit2')), 1))")
read -r T_SIMD CPU_SIMD < <(python -c "import json; d = json.load(open('_build/simd_cpu.json')); print(round(d['wall_s']), d['cpu_s'])")
echo "== chapters under nbmake (scale $DLTHEORY_SCALE), in a Colab-like environment"
# its own pytest call: exit 5 (nothing collected) must fail, so it is not masked.
# --overwrite keeps the executed outputs; they go into the book's execution cache, so the
# strict build below does not run every chapter a second time; the committed, output-free
# notebooks are then written again from their sources (also if anything fails).
# The chapters and the toolkit run in the kernel of a bare venv holding only what their
# install cell gives a Colab reader (scripts/colab_env.sh: `pip install .`, not editable,
# ipykernel, a stub google.colab; no myst_nb or Jupyter Book); DLTHEORY_ROOT puts their
# ledgers in this checkout. The two pages that read records (reproduction, calibration)
# belong to the book build and run in ./.venv's kernel.
trap 'python scripts/pair.py >/dev/null' EXIT
t=$SECONDS
beat "chapters under nbmake" & BEAT=$!
wait "$COLAB_ENV" || { cat _build/colab_env.log; echo "the Colab-like environment could not be built" >&2; exit 1; }
cat _build/colab_env.log
JUPYTER_PATH="$PWD/_build/colab_env/share/jupyter" DLTHEORY_ROOT="$PWD" \
  python -m pytest -q -n "$JOBS" --nbmake "${KERNEL[@]}" --nbmake-timeout=1200 \
  --overwrite --durations=8 book/[0-9][0-9]_*.ipynb book/toolkit.ipynb
python -m pytest -q -p no:xdist --nbmake --nbmake-timeout=1200 --overwrite \
  book/reproduction.ipynb book/calibration.ipynb
T_NBMAKE=$((SECONDS - t))
kill "$BEAT" 2>/dev/null || true
python scripts/cache_executed.py "_build/.jupyter_cache/$DLTHEORY_SCALE" book/[0-9][0-9]_*.ipynb book/toolkit.ipynb
echo "== what the executed chapters show: no warning, traceback or machine path; a verdict under every check"
DLTHEORY_REQUIRE_EXECUTED=1 python -m pytest -q tests/test_book_outputs.py
python scripts/pair.py >/dev/null
echo "== every chapter at the paper scale on the CPU, ${DLTHEORY_PAPER_BUDGET:-30} s budget each, beside the strict book build"
# the paper code paths (sizes, float32 sweeps, tasks under a budget) run here before any
# GPU sees them; every chapter must end with its ledger, a budget record and no hard FAIL.
# 30 s: on two shared cores the four chapters after the prologue stop inside their first
# sweeps at 60 s too (measured, idle: 0-14 tasks each), so a longer budget mostly buys more of
# the same first sweep and a longer CI.
# A budget is wall time (its end is a deadline: chapter.stopped), so the five chapters run
# beside the book build, niced: the build (one Sphinx process) keeps a core, the chapters
# share what is left and cover less of their sweeps. Time over the budget is printed as a
# figure, not a failure; the cap (10 x budget + 1200 s) only stops a hang. Under a budget
# the chapters' pre-registered decidability rule is off (claims.Ledger keys on
# identity["budget"]).
t=$SECONDS
(
  export DLTHEORY_GPU_CHECK_OUT=_build/paper_cpu DLTHEORY_CACHE_DIR=_build/paper_cpu/cache
  export DLTHEORY_RESULTS_DIR=_build/paper_cpu/claims DLTHEORY_FIG_DIR=_build/paper_cpu/figures
  nice -n 10 bash scripts/gpu_check.sh paper --budget "${DLTHEORY_PAPER_BUDGET:-30}" \
    > _build/paper_step.log 2>&1
  echo $? > _build/paper_step.rc
  echo $((SECONDS - t)) > _build/paper_step.s
) &
PAPER=$!
echo "== strict book build (scale $DLTHEORY_SCALE)"
t_book=$SECONDS
bash scripts/book.sh -W -n --keep-going
T_BOOK=$((SECONDS - t_book))
wait "$PAPER" || true
echo "== the paper step (it ran beside the build)"
cat _build/paper_step.log
T_PAPER=$(cat _build/paper_step.s)
[ "$(cat _build/paper_step.rc)" = 0 ] || { echo "the paper step failed" >&2; exit 1; }
echo "== MathJax check of every formula in the built book"
bash scripts/check_math.sh _build/html
echo "== the built pages in Chromium: no untypeset TeX, literal MyST fence or glue role in their text"
# the same text check as check_math.sh's, made on each page as the browser shows it after
# MathJax has run; where no Chromium is installed (apt-get install chromium), it is skipped
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
   || [ -n "${CHROMIUM:-}" ]; then
  python scripts/screenshots.py --html _build/html --check-text
else
  echo "   skipped: no Chromium on this machine; check_math.sh above checked the HTML's text"
fi
# the one record of measured times (book/records/times.json; dltheory.budget.times reads it)
python -c "import sys; from dltheory import budget; k = 'test.sh/' + sys.argv[1] + '/'; budget.write_times({k + n: float(v) for n, v in zip(sys.argv[2::2], sys.argv[3::2])})" \
  "$DLTHEORY_SCALE" "unit tests" "$T_UNIT" "unit tests, CPU seconds" "$CPU_UNIT" \
  "unit tests, narrower SIMD" "$T_SIMD" "unit tests, narrower SIMD, CPU seconds" "$CPU_SIMD" \
  "planted-error tests" "$T_REGISTRY" "nbmake" "$T_NBMAKE" "paper step" "$T_PAPER" \
  "strict book build" "$T_BOOK" "all checks" "$((SECONDS - t0))" || true
echo "== all checks passed in $((SECONDS - t0)) s"
