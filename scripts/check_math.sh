#!/usr/bin/env bash
# Typeset every formula of the built book with MathJax 3.2.2 (node) and fail on any formula
# MathJax rejects ("\tag not allowed in split", undefined macros, unbalanced braces), which
# the strict Sphinx build cannot see; and fail on text a reader would see raw: TeX delimiters
# MathJax leaves untypeset (in a region the page's configuration ignores), single-dollar
# $...$ math (Markdown rendered without MyST's dollarmath, e.g. an output parsed as
# CommonMark), literal MyST fences and unresolved glue roles (the patterns:
# scripts/mathcheck/raw_text.json). Run after a build:
#   bash scripts/check_math.sh [HTML_DIR]        (default: _build/html)
# Needs Node.js >= 18 and npm; installs mathjax-full (pinned in scripts/mathcheck/) on first use.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
HTML_DIR="${1:-_build/html}"
need_node() {
  echo "check_math: FAILED: $1" >&2
  echo "  The MathJax check needs Node.js >= 18 and npm. Install them, e.g." >&2
  echo "    sudo apt-get install -y nodejs npm      # Debian/Ubuntu" >&2
  echo "  (or see https://nodejs.org), then run this script again." >&2
  exit 1
}
command -v node >/dev/null 2>&1 || need_node "node not found on PATH"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 18 ] || need_node "node $(node --version) is too old"
MJ=scripts/mathcheck/node_modules/mathjax-full/package.json
want=$(node -p 'require("./scripts/mathcheck/package.json").dependencies["mathjax-full"]')
have=$( [ -f "$MJ" ] && node -p "require('./$MJ').version" || echo none)
if [ "$have" != "$want" ]; then
  command -v npm >/dev/null 2>&1 || need_node "npm not found on PATH (needed once to install mathjax-full $want)"
  echo "check_math: installing mathjax-full $want (npm ci)"
  (cd scripts/mathcheck && npm ci --silent --no-audit --no-fund)
fi
node scripts/mathcheck/check_math.js "$HTML_DIR"
