#!/usr/bin/env bash
# Create ./.venv if needed and install the pinned toolchain and dltheory into it.
# Sourced by scripts/book.sh and scripts/test.sh; safe to run again (pip skips what is there).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q -U pip 2>&1 | grep -v "^WARNING: Location" || true
# torch first, pinned: an unpinned torch pulls a multi-GB CUDA build
python -m pip install -q torch==2.13.0 2>&1 | grep -v "^WARNING: Location" || true
python -m pip install -q -r requirements.txt 2>&1 | grep -v "^WARNING: Location" || true
python -m pip install -q -e . 2>&1 | grep -v "^WARNING: Location" || true
python -c "import dltheory, torch, jupyter_book" || { echo "setup failed: packages missing" >&2; exit 1; }
