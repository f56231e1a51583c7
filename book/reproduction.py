# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Reproduction status
#
# Every chapter ends with a ledger of the paper's claims: what was predicted, what this book
# measured, the tolerance, and a verdict. This page gathers the ledgers written by the
# chapters of this build (the JSON files under `_build/claims/`). A chapter that did not run
# at this scale shows as **not run**, never as passed.
#
# Verdicts: `PASS` (within tolerance), `FAIL` (a hard claim outside its tolerance; the
# chapter then raises and the build fails), `NOT REPRODUCED` (a soft claim that did not hold
# here), `INCONCLUSIVE` (a soft claim the scale cannot resolve).

# %% tags=["remove-cell"]
# Colab bootstrap: install dltheory only when it is not importable (plain Python, no magics).
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("dltheory") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "git+https://github.com/dltheory/dltheory@main"], check=True)

# %% tags=["parameters"]
from dltheory import runtime

SCALE = runtime.scale()

# %% tags=["hide-input"]
import pandas as pd

from dltheory import claims

pd.set_option("display.max_colwidth", 90)
results = claims.load_results()
chapters = claims.expected_chapters()
summary, table = claims.collect(results, chapters, SCALE)
print(f"scale: {SCALE}; ledgers found in {runtime.results_dir()}: {len(results)}")
runtime.display(summary)

# %% [markdown]
# ## Every claim
#
# One row per claim, in chapter order. The `note` column carries the details a verdict
# depends on (fit windows, intervals, the reason a soft claim is inconclusive).

# %% tags=["hide-input"]
runtime.display(table if len(table) else "no ledgers at this scale yet")
