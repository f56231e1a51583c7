#!/usr/bin/env bash
# A Colab-like Python environment for the chapter notebooks: bash scripts/colab_env.sh [DIR]
#
# DIR (default _build/colab_env) gets a virtual environment that holds only what a chapter
# notebook's install cell gives a Colab reader: the package installed from this checkout
# (`pip install .`, NOT editable: no checkout on the path), its declared dependencies
# (pyproject `dependencies`, versions held to requirements.txt's pins as constraints, so the
# numbers match the main ./.venv), ipykernel, and a stub `google.colab` that the kernel
# imports at start, as Colab's kernel has it in sys.modules. No myst_nb, no Jupyter Book, no
# jupytext, no seaborn, no ipywidgets, no dask: anything only the book build needs must be
# optional at run time.
#
# It registers the Jupyter kernel `dltheory-colab` in DIR/share/jupyter/kernels; put
# DIR/share/jupyter on JUPYTER_PATH and run the notebooks with that kernel, e.g.
#   JUPYTER_PATH=_build/colab_env/share/jupyter DLTHEORY_ROOT=$PWD \
#     python -m pytest --nbmake --nbmake-kernel=dltheory-colab book/00_gradient_flow.ipynb
# (scripts/test.sh does this in its nbmake step). The kernel's working directory is the
# notebook's folder; DLTHEORY_ROOT makes the ledgers land in the checkout's _build/ (without
# it an installed package writes under the working directory, saying so once).
#
# Sourced after scripts/setup.sh (the main ./.venv active, uv installed there). The
# dependencies are installed again only when requirements.txt or pyproject.toml changed
# (stamp); the package itself is rebuilt from the working tree on every call (seconds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ENV_DIR="${1:-_build/colab_env}"
ENV_ABS="$(realpath -m "$ENV_DIR")"
t0=$SECONDS
PY="$ENV_DIR/bin/python"
STAMP="$ENV_DIR/.deps-installed"
WANT=$(cat requirements.txt pyproject.toml <(python -V 2>&1) | sha256sum | cut -c1-16)
UV_ENV=$(python scripts/pip_to_uv.py env)
UV_ARGS=$(python scripts/pip_to_uv.py args)
# requirements.txt as constraints: the same versions as ./.venv, installing only what the
# package declares (a constraint installs nothing by itself)
CONSTRAINTS=$(mktemp)
grep -vE '^\s*(#|$)' requirements.txt | sed 's/\s*#.*$//' > "$CONSTRAINTS"
# the package is built from a copy of the files a clone would hold (tracked, plus new files
# git does not ignore): no build/ folder in the checkout, and no module deleted from src/
# left behind in a stale build/lib that would still ship
PKG=$(mktemp -d)
trap 'rm -rf "$CONSTRAINTS" "$PKG"' EXIT
if git rev-parse --git-dir >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard -- pyproject.toml README.md LICENSE src \
    | while IFS= read -r -d '' f; do [ -f "$f" ] && cp --parents -- "$f" "$PKG/"; done
else
  cp -r pyproject.toml README.md LICENSE src "$PKG/"
fi
# uv where setup.sh installed it (parallel, from its cache: seconds), else pip
if python -m uv --version >/dev/null 2>&1; then
  uvpip() { env $UV_ENV python -m uv pip "$@" --python "$PY" $UV_ARGS --constraint "$CONSTRAINTS" -q; }
  mkvenv() { python -m uv venv -q --python "$(python -c 'import sys; print(sys.executable)')" "$1"; }
  REINSTALL=(--reinstall-package dltheory)
else
  uvpip() { "$PY" -m pip install -q --constraint "$CONSTRAINTS" "${@:2}"; }
  mkvenv() { python -m venv "$1"; }
  REINSTALL=(--force-reinstall)
fi
if [ ! -x "$PY" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  rm -rf "$ENV_DIR"
  echo "   creating the Colab-like environment $ENV_DIR (torch==2.13.0 first, the package's declared dependencies, ipykernel)"
  mkvenv "$ENV_DIR"
  uvpip install torch==2.13.0
  uvpip install "$PKG" ipykernel
  echo "$WANT" > "$STAMP"
else
  # the package as it is now (non-editable: a copy in site-packages); its dependencies kept
  uvpip install "${REINSTALL[@]}" --no-deps "$PKG"
fi
# the stub of Colab's google.colab, imported by the kernel at start (an IPython startup file)
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$SITE/google/colab" "$ENV_DIR/ipython/profile_default/startup"
echo "# stub of Colab's google.colab (scripts/colab_env.sh)" > "$SITE/google/colab/__init__.py"
echo "import google.colab" > "$ENV_DIR/ipython/profile_default/startup/00-colab.py"
# ipykernel's own `python3` spec there would shadow the main environment's on JUPYTER_PATH
rm -rf "$ENV_DIR/share/jupyter/kernels/python3"
KDIR="$ENV_DIR/share/jupyter/kernels/dltheory-colab"
mkdir -p "$KDIR"
cat > "$KDIR/kernel.json" <<JSON
{"argv": ["$ENV_ABS/bin/python", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
 "display_name": "dltheory (Colab-like: pip install . only)", "language": "python",
 "env": {"IPYTHONDIR": "$ENV_ABS/ipython"}}
JSON
"$PY" -c "import dltheory, ipykernel, sys; assert 'site-packages' in dltheory.__file__, dltheory.__file__" \
  || { echo "colab_env: the package is not installed in $ENV_DIR" >&2; exit 1; }
for m in myst_nb jupyter_book jupytext seaborn; do
  if "$PY" -c "import $m" 2>/dev/null; then
    echo "colab_env: $m is importable in $ENV_DIR; it must not be (book-build only)" >&2; exit 1
  fi
done
echo "   Colab-like environment $ENV_DIR ready in $(( SECONDS - t0 )) s (kernel dltheory-colab)"
