"""Put notebooks that nbmake just executed into the book's execution cache.

    python scripts/cache_executed.py CACHE_DIR book/01_x.ipynb [...]

``scripts/test.sh`` runs every chapter once under nbmake (``--overwrite`` writes the
outputs into the notebooks), then calls this, so the strict book build that follows takes
those outputs from jupyter-cache instead of executing every chapter a second time. The
cache key is the hash of the code cells, their metadata and the kernelspec. The paired
notebook has the code of its ``.py`` source except its install cell (``scripts/pair.py``
writes a shorter one), so the cached notebook takes its code from the ``.py`` next to it:
the key is then the one the build computes from that source. A notebook whose code cells do
not line up with its source's is not cached (the build executes that chapter again).
Only complete executions are cached (jupyter-cache checks the execution counts). Each
cached chapter's input digest (``execute_chapters.inputs_digest``: the package and figure
code it ran) is recorded beside it, so ``book.sh`` reruns it when that code changes; a
chapter whose ledger records a mutation is not cached.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    import jupytext
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import execute_chapters as ex

    from dltheory import atomic

    cache = get_cache(argv[0])
    inputs_file = Path(argv[0]) / "dltheory_inputs.json"
    inputs = ex._record(atomic.read_json(inputs_file, {}, what="input-digest file"))
    for path in argv[1:]:
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:   # the executor adds timing metadata; the key hashes it
            cell.metadata = {k: v for k, v in cell.metadata.items() if k == "tags"}
        src = Path(path).with_suffix(".py")
        if ex.ledger_mutation(src):
            print(f"not cached: {Path(path).name} ran under the mutation {ex.ledger_mutation(src)}")
            continue
        if src.exists():
            ours = [c for c in nb.cells if c.cell_type == "code"]
            theirs = [c for c in jupytext.read(src).cells if c.cell_type == "code"]
            if len(ours) != len(theirs):
                print(f"not cached: {Path(path).name} does not match {src.name}")
                continue
            for a, b in zip(ours, theirs, strict=True):
                a.source = b.source
        rec = cache.cache_notebook_bundle(CacheBundleIn(nb, str(Path(path).resolve())),
                                          overwrite=True)
        if src.exists():
            inputs[src.resolve().stem] = ex.inputs_digest(src.resolve())
            atomic.write_json(inputs_file, inputs, indent=1)
        print(f"cached {Path(path).name} (record {rec.pk})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
