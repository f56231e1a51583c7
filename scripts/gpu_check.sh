#!/usr/bin/env bash
# Run every chapter as a plain script, all in parallel on one machine (one GPU, or the CPU),
# each under a time cap, then write _build/gpu/report.md and report.json: wall time, exit
# status, peak GPU memory, claims summary, tasks computed vs loaded from the cache.
#
#   bash scripts/gpu_check.sh [scale]          # scale: smoke | standard | paper (default standard)
#
# Environment:
#   DLTHEORY_GPU_CHECK_CHAPTERS  chapters to run (names such as "00_gradient_flow 03_sparse_scaling";
#                                default: every book/0*.py)
#   DLTHEORY_GPU_CHECK_CAP       per-chapter time cap in seconds (default 540)
#   DLTHEORY_GPU_CHECK_OUT       output folder (default _build/gpu)
#   DLTHEORY_CACHE_DIR           the sweep cache (default _build/cache/<scale>): a chapter that hit
#                                the cap resumes from its finished tasks when this is rerun
# Exit status: 0 when every chapter finished with its claims passing, 1 otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."

SCALE="${1:-${DLTHEORY_SCALE:-standard}}"
CAP="${DLTHEORY_GPU_CHECK_CAP:-540}"
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

echo "gpu_check: scale=$SCALE cap=${CAP}s chapters=${CHAPTERS[*]} threads/chapter=$THREADS out=$OUT"
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

"$PY" scripts/gpu_check_report.py "$OUT" "$SCALE" "$CAP" "$WALL" "${CHAPTERS[@]}"
for c in "${CHAPTERS[@]}"; do
  [ "$(cat "$OUT/$c.rc" 2>/dev/null)" = "0" ] || exit 1
done
exit 0
