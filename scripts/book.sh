#!/usr/bin/env bash
# Build the book: bash scripts/book.sh [extra jupyter-book options, e.g. -W -n --keep-going]
#
#   bash scripts/book.sh                            # smoke scale: a complete book in minutes
#   DLTHEORY_SCALE=standard bash scripts/book.sh    # the published book (about 40 min on 2 cores)
#   DLTHEORY_SCALE=paper bash scripts/book.sh       # the papers' sizes (one GPU)
#
# 1. installs what is missing (scripts/setup.sh);
# 2. executes, DLTHEORY_BOOK_JOBS (default 2) at a time, each reporting its progress, the
#    chapters whose outputs may have changed: their code cells, the package code their
#    verdicts use or their figure modules changed (scripts/execute_chapters.py), into the
#    execution cache of this scale (_build/.jupyter_cache/<scale>; jupyter-cache sees no
#    environment variables, hence one cache per scale; delete it to force a rerun); it
#    refuses to build with DLTHEORY_MUTATION set or from a ledger that records a mutation;
# 3. builds the HTML with jupyter-book, which takes every chapter from that cache (only the
#    reproduction page is executed by the build itself, as it reads the fresh ledgers).
# The whole build holds _build/.book.lock: a second build in this checkout waits for it.
# A build that stops on a failure marks the previous _build/html stale (a banner on every
# page, _build/html/STALE); the next build replaces it whole.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
t_start=$SECONDS
source scripts/setup.sh
# one build at a time in a checkout: a second one waits, saying which process holds the lock
if [ -z "${DLTHEORY_BOOK_LOCK_HELD:-}" ]; then
  exec python scripts/execute_chapters.py --hold-lock -- bash scripts/book.sh "$@"
fi
# A build that stops on a failure leaves no unmarked HTML: the previous _build/html gets a
# STALE file and a banner on every page (scripts/stale_html.py); the next build removes a
# marked folder and renders every page afresh.
python scripts/stale_html.py clear _build/html
on_exit() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    python scripts/stale_html.py mark _build/html "scripts/book.sh exited with status $rc" || true
  fi
}
trap on_exit EXIT
export DLTHEORY_SCALE="${DLTHEORY_SCALE:-smoke}"
SCALE=$(python -c "from dltheory import runtime; print(runtime.scale())")
export DLTHEORY_SCALE="$SCALE"
export DLTHEORY_STATIC=1   # a static page: explore cells draw their default figure, no widgets
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
CACHE="_build/.jupyter_cache/$SCALE"
mkdir -p _build/config
python - "$SCALE" "$CACHE" <<'PY'
import os, sys, yaml
scale, cache = sys.argv[1:]
cfg = yaml.safe_load(open("_config.yml"))
cfg["execute"]["cache"] = cache
# local Sphinx extensions are found relative to the config file, which moves to _build/config
for name, path in (cfg.get("sphinx", {}).get("local_extensions") or {}).items():
    cfg["sphinx"]["local_extensions"][name] = os.path.abspath(path)
from dltheory import atomic   # written whole or not at all (a full disk keeps the old one)
atomic.write_text(f"_build/config/_config.{scale}.yml", yaml.safe_dump(cfg, sort_keys=False))
PY
echo "== executing the chapters at scale '$SCALE' (cache: $CACHE)"
python scripts/execute_chapters.py "$CACHE"
echo "== building the HTML (jupyter-book; chapters from the cache)"
jupyter-book build . --config "_build/config/_config.$SCALE.yml" "$@"
# the one record of measured times (book/records/times.json): the whole build, named by
# how many chapters it executed (all of them: a build from scratch)
python - "$SCALE" "$(( SECONDS - t_start ))" <<'PY' || true
import sys
from pathlib import Path
from dltheory import budget
scale, seconds = sys.argv[1], float(sys.argv[2])
f = Path(f"_build/config/executed.{scale}")
done, total = (int(x) for x in f.read_text().split()) if f.exists() else (0, 0)
what = "whole book, every chapter executed" if done == total else f"build, {done} of {total} chapters executed"
budget.write_times({f"book.sh/{scale}/{what}": {"seconds": seconds, "chapters executed": done}})
PY
echo "== book built at scale '$SCALE' in $(( SECONDS - t_start )) s:" \
     "open $(pwd)/_build/html/index.html"
