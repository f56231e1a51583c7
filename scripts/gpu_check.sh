#!/usr/bin/env bash
# Run every chapter as a plain script, all in parallel on one machine (one GPU, or the CPU),
# each under a time cap, then write _build/gpu/report.md and report.json: wall time, exit
# status, peak GPU memory, claims summary, tasks computed vs loaded from the cache.
#
#   bash scripts/gpu_check.sh [scale] [--budget SECONDS] [--save]
#        scale: smoke | standard | paper | full (default standard)
#        --budget: the time budget of every chapter (DLTHEORY_BUDGET); sweeps run the tasks
#                  that fit. The cap, 10 x budget + 1200 s, only stops a hang: far above
#                  any honest run, also on a loaded machine (a budget bounds the chapter's
#                  work, not the machine's speed); time over the budget is printed as a
#                  figure, never a failure
#        --save:   also copy the report to benchmarks/gpu/<scale>-<device>-<date>.{md,json}
#
#   DLTHEORY_BUDGET=90 bash scripts/gpu_check.sh paper --save    # the GPU run of the book
#   DLTHEORY_BUDGET=100 bash scripts/gpu_check.sh paper          # the same on the CPU
#
# Environment:
#   DLTHEORY_GPU_CHECK_CHAPTERS  chapters to run (names such as "00_gradient_flow 03_sparse_scaling";
#                                default: every book/0*.py)
#   DLTHEORY_BUDGET              seconds per chapter (same as --budget)
#   DLTHEORY_GPU_CHECK_CAP       per-chapter time cap in seconds (default 540, or from the budget)
#   DLTHEORY_GPU_CHECK_SAVE_DIR  where --save copies the report (default benchmarks/gpu)
#   DLTHEORY_GPU_CHECK_COMPARE   a report.json of another device (e.g. the CPU row in
#                                benchmarks/gpu/) to show side by side
#   DLTHEORY_GPU_CHECK_OUT       output folder (default _build/gpu)
#   DLTHEORY_CACHE_DIR           the sweep cache (default _build/cache/<scale>): a chapter that hit
#                                the cap resumes from its finished tasks when this is rerun
# Exit status: 0 when every chapter ended ok with a ledger (and, under a budget, a budget
# record in it) and no hard FAIL; 1 otherwise (the report's "Check" section says why).
set -uo pipefail
cd "$(dirname "$0")/.."

SCALE="${DLTHEORY_SCALE:-standard}"
SAVE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --budget) export DLTHEORY_BUDGET="$2"; shift 2 ;;
    --budget=*) export DLTHEORY_BUDGET="${1#--budget=}"; shift ;;
    --save) SAVE=1; shift ;;
    -*) echo "gpu_check: unknown option $1" >&2; exit 2 ;;
    *) SCALE="$1"; shift ;;
  esac
done
# every DLTHEORY_* variable set (the budget, the cap, the output folder, ...) is checked
# first, by the package's one table of them (dltheory.validation), naming what is allowed
"${PYTHON:-python}" -m dltheory.validation --check || exit 2
if [ -n "${DLTHEORY_BUDGET:-}" ]; then
  # checked by the package (a positive finite number of seconds); the cap stops a hang
  # only: a budgeted chapter ends within 1.25 x budget + start-up, which a loaded machine
  # can stretch (start-up of minutes under load 10), so the cap is far above that
  CAP="${DLTHEORY_GPU_CHECK_CAP:-$("${PYTHON:-python}" -c "import math, sys; from dltheory import validation as v; b = v.env('DLTHEORY_BUDGET'); print(math.ceil(10 * b + 1200))")}" || exit 2
else
  CAP="${DLTHEORY_GPU_CHECK_CAP:-540}"
fi
OUT="${DLTHEORY_GPU_CHECK_OUT:-_build/gpu}"
PY="${PYTHON:-python}"

if [ -n "${DLTHEORY_GPU_CHECK_CHAPTERS:-}" ]; then
  CHAPTERS=()
  for c in ${DLTHEORY_GPU_CHECK_CHAPTERS//,/ }; do
    c="${c%.py}"; c="${c#book/}"
    [ -f "book/$c.py" ] || { echo "gpu_check: no chapter book/$c.py" >&2; exit 2; }
    CHAPTERS+=("$c")
  done
else
  CHAPTERS=()
  for f in book/0*.py; do CHAPTERS+=("$(basename "$f" .py)"); done
fi

CORES="$(nproc 2>/dev/null || echo 2)"
THREADS=$(( CORES / ${#CHAPTERS[@]} )); [ "$THREADS" -ge 1 ] || THREADS=1
mkdir -p "$OUT"
for c in "${CHAPTERS[@]}"; do rm -f "$OUT/$c.json" "$OUT/$c.rc" "$OUT/$c.log"; done

echo "gpu_check: scale=$SCALE budget=${DLTHEORY_BUDGET:-none} cap=${CAP}s chapters=${CHAPTERS[*]} threads/chapter=$THREADS out=$OUT"
export DLTHEORY_SCALE="$SCALE" DLTHEORY_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS"
export MPLBACKEND=Agg DLTHEORY_PROGRESS=0 PYTHONUNBUFFERED=1

T0=$(date +%s)
for c in "${CHAPTERS[@]}"; do
  (
    timeout -k 20 "$CAP" "$PY" scripts/gpu_check_run.py "book/$c.py" "$OUT/$c.json" \
      > "$OUT/$c.log" 2>&1
    echo $? > "$OUT/$c.rc"
  ) &
done
wait
WALL=$(( $(date +%s) - T0 ))

SAVE_DIR=""; [ "$SAVE" = 1 ] && SAVE_DIR="${DLTHEORY_GPU_CHECK_SAVE_DIR:-benchmarks/gpu}"
DLTHEORY_GPU_CHECK_SAVE="$SAVE_DIR" "$PY" scripts/gpu_check_report.py "$OUT" "$SCALE" "$CAP" "$WALL" "${CHAPTERS[@]}"
RC=$?
for c in "${CHAPTERS[@]}"; do
  [ "$(cat "$OUT/$c.rc" 2>/dev/null)" = "0" ] || RC=1
done
exit "$RC"
