#!/usr/bin/env bash
# Cut a release: bash scripts/release.sh vX.Y.Z   (see RELEASING.md)
#
# The chapter notebooks' install cells install `git+<repo>@v<version>` (dltheory.INSTALL_SPEC,
# written by scripts/pair.py). This script makes that tag exist, on the commit whose
# notebooks name it. It refuses, changing nothing, unless:
#   - the tag is v<version> of src/dltheory/__init__.py AND of pyproject.toml;
#   - the tag does not exist yet;
#   - the tracked tree is clean (the tag must name exactly what is committed);
#   - the notebooks are in step with their sources (python scripts/pair.py --check), so
#     their install cells name this version.
# Then it tags HEAD (annotated) and prints the push command; it pushes nothing itself.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
TAG="${1:-}"
die() { echo "release: $*" >&2; exit 1; }
[[ "$TAG" =~ ^v[0-9]+(\.[0-9]+)*([a-z0-9.+-]*)$ ]] || die "usage: bash scripts/release.sh vX.Y.Z (got '${TAG}')"
VERSION="${TAG#v}"
INIT=$(sed -nE 's/^__version__ = "([^"]+)".*/\1/p' src/dltheory/__init__.py)
TOML=$(sed -nE 's/^version = "([^"]+)".*/\1/p' pyproject.toml | head -n 1)
[ "$INIT" = "$VERSION" ] || die "tag $TAG but src/dltheory/__init__.py says __version__ = \"$INIT\": set it to \"$VERSION\" (and pyproject.toml), run python scripts/pair.py, commit, then tag"
[ "$TOML" = "$VERSION" ] || die "tag $TAG but pyproject.toml says version = \"$TOML\": set it to \"$VERSION\""
if git rev-parse -q --verify "refs/tags/$TAG" >/dev/null; then
  die "tag $TAG exists already (on $(git rev-list -n 1 "$TAG")); bump the version for a new release"
fi
[ -z "$(git status --porcelain --untracked-files=no)" ] || die "the tracked tree has uncommitted changes: commit them first"
if [ -f scripts/pair.py ]; then
  python scripts/pair.py --check >/dev/null || die "notebooks out of step with their sources: run python scripts/pair.py and commit"
fi
git tag -a "$TAG" -m "dltheory $VERSION"
echo "tagged $TAG at $(git rev-parse HEAD)"
echo "publish it: git push origin $TAG   (the notebooks of this commit then install exactly it)"
