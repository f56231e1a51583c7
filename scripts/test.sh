#!/usr/bin/env bash
# Run every check: lint, unit tests (incl. notebook pairing), every chapter under nbmake at
# the smoke scale, a strict book build at smoke and the MathJax check of its formulas.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
export DLTHEORY_SCALE="${DLTHEORY_SCALE:-smoke}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export DLTHEORY_STATIC=1   # no live widgets under nbmake or in the book build
JOBS="${DLTHEORY_JOBS:-2}"
t0=$SECONDS
echo "== ruff"
ruff check .
echo "== unit tests"
python -m pytest -q -n "$JOBS" tests
echo "== chapters under nbmake (scale $DLTHEORY_SCALE)"
# its own pytest call: exit 5 (nothing collected) must fail, so it is not masked
python -m pytest -q -n "$JOBS" --nbmake --nbmake-timeout=1200 book/
echo "== strict book build (scale $DLTHEORY_SCALE)"
bash scripts/book.sh -W -n --keep-going
echo "== MathJax check of every formula in the built book"
bash scripts/check_math.sh _build/html
echo "== all checks passed in $((SECONDS - t0)) s"
