#!/usr/bin/env bash
# Create ./.venv if needed and install the pinned toolchain and dltheory into it.
# Sourced by scripts/book.sh and scripts/test.sh; safe to run again: when requirements.txt,
# pyproject.toml and the Python version are unchanged since the last complete install, it
# only checks that the packages import. Every step says what it installs, and a line at
# least every 15 s says that it is still at it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# run LABEL CMD...: run CMD quietly (output to a log), with a progress line every 15 s and
# pip's summary lines; on failure show the end of the log.
run() {
  local label=$1 log start rc=0 last=0
  shift
  log=$(mktemp)
  start=$SECONDS
  "$@" >"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if (( SECONDS - start - last >= 15 )); then
      last=$(( SECONDS - start ))
      echo "   ... $label: ${last} s"
    fi
  done
  wait "$pid" || rc=$?
  # pip's one-line summaries (what it installed), shortened
  grep -E "^(Successfully installed|Installed [0-9]+ packages)" "$log" | cut -c1-300 | sed 's/^/   /' || true
  if (( rc != 0 )); then
    echo "   $label failed (exit $rc); the end of its output:" >&2
    tail -n 30 "$log" | sed 's/^/   | /' >&2
    rm -f "$log"
    return "$rc"
  fi
  echo "   $label: done in $(( SECONDS - start )) s"
  rm -f "$log"
}

t_setup=$SECONDS
echo "== checking the environment ./.venv"
if [ ! -x .venv/bin/python ]; then
  echo "== creating the virtual environment ./.venv"
  run "python -m venv .venv" "${PYTHON:-python3}" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# no byte-compiling of every installed module (torch alone has thousands): Python compiles
# what it imports, on first use, and keeps it; saves about a minute on 2 cores
export PIP_NO_COMPILE=1
# ... which needs Python to keep what it compiled. With PYTHONDONTWRITEBYTECODE set (as on
# some CI images) every process compiled torch, scipy and matplotlib again: about 7 CPU-s per
# process, measured, and CI starts dozens of them (test workers, kernels, chapter runs).
# This project's own ./.venv keeps its byte code.
unset PYTHONDONTWRITEBYTECODE
STAMP=.venv/.dltheory-installed
UV_VERSION=0.13.9
WANT=$(cat requirements.txt pyproject.toml <(python -V 2>&1) | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] \
   && python -c "import dltheory, torch, jupyter_book" 2>/dev/null; then
  echo "   up to date (requirements.txt and pyproject.toml unchanged since the last install)"
else
  rm -f "$STAMP"
  echo "== installing into ./.venv (a few minutes the first time; pip's own cache makes it faster)"
  # uv (pinned, from the package index) installs the same pins as pip, with parallel
  # downloads and unpacking: about 40 s instead of about 170 s on 2 idle cores. pip's
  # configuration (find-links, index URLs, constraints, certificate) is passed on to it.
  # Where uv cannot be installed or fails, pip does the same steps.
  if [ "${DLTHEORY_INSTALLER:-uv}" = uv ] && run "uv==$UV_VERSION" python -m pip install "uv==$UV_VERSION" \
     && UV_ENV=$(python scripts/pip_to_uv.py env) && UV_ARGS=$(python scripts/pip_to_uv.py args) \
     && echo "-- torch==2.13.0 (pinned), requirements.txt and dltheory (-e .) in one uv call" \
     && run "uv pip install" env $UV_ENV python -m uv pip install --python "$(command -v python)" \
          $UV_ARGS torch==2.13.0 -r requirements.txt -e .; then
    :
  else
    echo "-- uv not available or failed: pip"
    echo "-- pip itself"
    run "pip" python -m pip install -U pip
    echo "-- torch==2.13.0 first (pinned: an unpinned torch pulls a multi-GB CUDA build)"
    run "torch" python -m pip install torch==2.13.0
    echo "-- the pinned toolchain in requirements.txt: $(grep -cvE '^\s*(#|$)' requirements.txt) packages" \
         "(numpy, scipy, pandas, matplotlib, jupyter-book, pytest, ...) and their dependencies"
    run "requirements.txt" python -m pip install -r requirements.txt
    echo "-- dltheory itself, editable (pip install -e .)"
    run "dltheory" python -m pip install -e .
  fi
  python -c "import dltheory, torch, jupyter_book" || {
    echo "setup failed: packages missing" >&2; exit 1; }
  echo "$WANT" > "$STAMP"
  echo "== installed in $(( SECONDS - t_setup )) s"
fi
