#!/usr/bin/env bash
# Build the book: bash scripts/book.sh [extra jupyter-book options]
# Scale from DLTHEORY_SCALE (default: smoke under CI, else standard); one execution cache
# per scale (jupyter-cache does not see environment variables or src/ changes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh
SCALE=$(python -c "from dltheory import runtime; print(runtime.scale())")
export DLTHEORY_SCALE="$SCALE"
export DLTHEORY_STATIC=1   # a static page: explore cells draw their default figure, no widgets
mkdir -p _build/config
python - "$SCALE" <<'PY'
import os, sys, yaml
scale = sys.argv[1]
cfg = yaml.safe_load(open("_config.yml"))
cfg["execute"]["cache"] = f"_build/.jupyter_cache/{scale}"
# local Sphinx extensions are found relative to the config file, which moves to _build/config
for name, path in (cfg.get("sphinx", {}).get("local_extensions") or {}).items():
    cfg["sphinx"]["local_extensions"][name] = os.path.abspath(path)
yaml.safe_dump(cfg, open(f"_build/config/_config.{scale}.yml", "w"), sort_keys=False)
PY
jupyter-book build . --config "_build/config/_config.$SCALE.yml" "$@"
echo "book built at scale '$SCALE': open $(pwd)/_build/html/index.html"
