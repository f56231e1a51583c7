# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   mystnb:
#     execution_mode: force
# ---

# %% [markdown]
# # Calibration: how often a check is wrong
#
# A verdict is a statistical decision, so it has two error rates. **Size**: how often a
# hard claim FAILs although the theory is right. Each chapter is re-run over many seeds at
# its default setting and over settings across its declared domain (every corner and
# edge midpoint of the knob box first, then random ones, each with its own seed); every
# FAIL there is a *false FAIL*. With $x$ false FAILs in $n$ runs the table gives the exact
# one-sided 95% Clopper-Pearson upper bound on the rate: with no false FAIL in 30 runs the
# rate is below 9.5%, in 300 runs below 1%. **Power**: which plausible errors in the
# theory make a claim FAIL. The registry `dltheory.mutations` plants them one at a time
# (an exponent off by 10-20%, a gradient twice its loss's, an off-by-one, a dropped term,
# a wrong constant in a bound), each in its own chapter run at the defaults; a claim
# *catches* an error when it FAILs with it and passed without it at the same seed.
# A claim that catches nothing planted is only as good as the list of errors tried; an
# error that no claim catches is a gap in the chapter's checks.
#
# The numbers come from `scripts/calibrate.py` (one chapter run per task of
# `dltheory.experiments`, so it resumes and runs on local processes or a Dask cluster),
# committed as `book/calibration/<chapter>.smoke.json`. A file whose chapter code cells or
# package code (the shared modules and the chapter's own, figures excepted) changed since
# is marked **stale**; a chapter without a file says so.

# %% tags=["remove-cell"]
# Install dltheory in Colab only; elsewhere say how (plain Python, no magics).
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("dltheory") is None:
    if "google.colab" in sys.modules:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                        "git+https://github.com/dltheory/dltheory@main"], check=True)
    else:
        sys.exit("dltheory is not installed: run `pip install -e .` in the repository "
                 "(or activate its environment: `. .venv/bin/activate`)")

# %% tags=["parameters", "remove-cell"]
from dltheory import runtime

SCALE = runtime.scale()
CALIBRATED_AT = "smoke"   # the committed calibrations are smoke-scale chapter runs

# %% tags=["hide-input"]

import textwrap

from dltheory import calibration, claims, ledgers

ROOT = runtime.repo_root()
summary, per_claim, per_mutation = calibration.page_tables(
    ROOT / "book" / "calibration", ledgers.expected_chapters(), CALIBRATED_AT)
runtime.display(claims.style_table(summary.drop(columns=["detail", "calibrated"])))
for row in summary.itertuples():
    when = f"calibrated {row.calibrated}" if row.calibrated else ""
    print(textwrap.fill(f"{row.chapter}: " + "; ".join(x for x in (when, row.detail) if x),
                        width=88, subsequent_indent="    "))

# %% [markdown]
# **runs**: unmutated chapter runs (**off-default**: of them, runs away from the default
# setting); **false FAILs**: FAIL verdicts over all claims of those runs; **caught /
# planted**: planted errors that made at least one claim FAIL, of those tried;
# **median res.**: the median over evidence claims of their median resolution (the
# smallest relative error in a prediction the check is sure to catch).
#
# ## Per claim
#
# One row per claim: the unmutated runs it was checked in, its false FAILs and the 95%
# upper bound on its false-FAIL rate, and the planted errors it caught.

# %% tags=["hide-input"]
for chapter, rows in per_claim.groupby("chapter", sort=False) if len(per_claim) else []:
    runtime.display(claims.style_table(rows.drop(columns="chapter"), caption=chapter))

# %% [markdown]
# ## Per planted error
#
# Each error of the registry that was tried: its size, the claims expected to catch it
# (none: no current claim is known to), and the claims it made FAIL.

# %% tags=["hide-input"]
for chapter, rows in per_mutation.groupby("chapter", sort=False) if len(per_mutation) else []:
    runtime.display(claims.style_table(rows.drop(columns="chapter"), caption=chapter))
