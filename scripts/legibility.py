#!/usr/bin/env python3
"""The smallest text of every figure a chapter shows, as the book shows it.

    DLTHEORY_SCALE=smoke python scripts/legibility.py book/04_depth_expansion.py

Runs the chapter script with ``dltheory.runtime.show`` wrapped: before each figure is shown
(and saved, as usual), ``plotting.smallest_text_px`` gives the height in screen pixels of its
smallest visible text at the book's column width. Prints one line per figure and exits 1 when
any is under ``plotting.MIN_TEXT_PX``. For looking at figures while writing them (the unit
tests check the figures that once failed it); it runs the whole chapter, so it is not in CI.
"""

from __future__ import annotations

import runpy
import sys

import matplotlib

matplotlib.use("Agg")

from dltheory import plotting, runtime  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.exit(__doc__)
    show, small_ones = runtime.show, []

    def measured_show(fig=None, name=None):
        import matplotlib.pyplot as plt

        px, text = plotting.smallest_text_px(fig if fig is not None else plt.gcf())
        small = px < plotting.MIN_TEXT_PX
        if small:
            small_ones.append(str(name))
        print(f"[legibility] {'SMALL' if small else 'ok   '} {name}: {px:.1f} px ({text[:40]!r})",
              file=sys.stderr)
        return show(fig, name)

    runtime.show = measured_show
    sys.argv = [argv[0]]
    runpy.run_path(argv[0], run_name="__main__")
    print(f"[legibility] {len(small_ones)} figure(s) under {plotting.MIN_TEXT_PX:g} px"
          + (f": {', '.join(small_ones)}" if small_ones else ""), file=sys.stderr)
    return 1 if small_ones else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
