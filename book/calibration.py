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
# @title Install dltheory 0.1.0 in Colab { display-mode: "form" }
import importlib.metadata
import importlib.util
import subprocess
import sys

SPEC = "git+https://github.com/dltheory/dltheory@v0.1.0"  # this notebook's release
REPO, TAG = SPEC[4:].split("@")
missing = importlib.util.find_spec("dltheory") is None
have = None if missing else next(
    (d.version for d in importlib.metadata.distributions(name="dltheory")), "?")
if "google.colab" in sys.modules and have not in (TAG[1:], "?"):  # absent or another version
    ls = subprocess.run(["git", "ls-remote", REPO, "HEAD", f"refs/tags/{TAG}"],
                        capture_output=True, text=True)
    if ls.returncode:
        sys.exit(f"dltheory: cannot reach {REPO}: {ls.stderr.strip()[-300:]}")
    refs = {r: sha for sha, _, r in (x.partition("\t") for x in ls.stdout.splitlines())}
    ref = TAG if f"refs/tags/{TAG}" in refs else refs.get("HEAD", "main")
    print(f"dltheory: installing release {TAG}" if ref == TAG else
          f"dltheory: release {TAG} is not published yet, installing main at commit {ref}")
    widgets = [] if importlib.util.find_spec("ipywidgets") else ["ipywidgets"]  # Explore
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-U",
                          f"git+{REPO}@{ref}", *widgets], capture_output=True, text=True)
    if pip.returncode:
        sys.exit(f"dltheory: pip could not install it: {pip.stderr.strip()[-500:]}")
elif missing:
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
runtime.display(claims.style_table(summary.drop(columns=["detail", "calibrated", "cost"])))
for row in summary.itertuples():
    when = f"calibrated {row.calibrated}" if row.calibrated else ""
    print(textwrap.fill(f"{row.chapter}: " + "; ".join(x for x in (when, row.cost, row.detail)
                                                       if x),
                        width=88, subsequent_indent="    "))

# %% [markdown]
# **runs**: unmutated chapter runs (**off-default**: of them, runs away from the default
# setting); **false FAILs**: FAIL verdicts over all claims of those runs; **caught /
# planted**: planted errors that made at least one claim FAIL, of those tried;
# **median res.**: the median over evidence claims of their median resolution (the
# smallest relative error in a prediction the check is sure to catch).

# %% [markdown]
# ## What counts as evidence
#
# One rule for the whole book decides a claim's kind, and the kind is fixed before the run
# (each chapter's `rules.KINDS`; recording a claim with another kind is an error, never a
# relabelling by the data):
#
# - **Evidence** (`hard` or `soft`) is only what could fail on correct code if the paper
#   were wrong about the networks and data the chapter runs: a measured exponent, a level,
#   a held-out risk, a location, measured on those networks and data.
# - **Identities** are checks of the book's own code and design that hold by construction
#   when the code is right: calculus on the book's code (a gradient against the finite
#   difference of its loss, a discretisation order), a proved bound, a bookkeeping sum, a
#   fallback rule, and the *design guards* that say an experiment is what its statement
#   says (disjoint selection and held-out index sets, SGD batches that differ from
#   full-batch GD, a window where the statement puts it, an oracle grid that beats the
#   ridgeless fit, a batched implementation equal to the loop, intervals with
#   lo ≤ mean ≤ hi).
# - **Derivations** are the book's theory against itself: an exact sum against its
#   asymptotic form, or a formula against a Monte Carlo of its own model.
#
# Identities and derivations are shown, and a failing one stops the chapter (it is a bug),
# but they are never counted as evidence. Three more rules make a verdict honest about its
# power (`dltheory.claims`): a hard claim that passes with a resolution above its declared
# maximum (20% unless the chapter says why) is **WEAK** and fails; a rule that a loss of
# power can only make pass (absence of contradiction) must also show that it detects the
# effect it expects, else it is INCONCLUSIVE; and each chapter pre-registers which hard
# claims its scale decides, so that one of them INCONCLUSIVE at the defaults fails the run
# (a gate that closes where it should be open). A hard claim outside its regime is a hard
# INCONCLUSIVE, counted as such.
#
# The claims of each kind per chapter, from this build's ledger at this scale where there
# is one, else from the chapter's calibration record (the source column says which):

# %% tags=["hide-input"]
records, _ = calibration.load_dir(ROOT / "book" / "calibration", CALIBRATED_AT)
built = {d["chapter"]: d["claims"] for d in ledgers.load_results() if d["scale"] == SCALE}
kinds = claims.kinds_frame({
    ch: (f"ledger ({SCALE})", built[ch]) if ch in built
    else (f"calibration record ({CALIBRATED_AT})", records[ch]["claims"]) if ch in records
    else ("no ledger or record", [])
    for ch in ledgers.expected_chapters()})
runtime.display(claims.style_table(kinds))

# %% [markdown]
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

# %% [markdown]
# ## Automated mutation score
#
# The chapter-run calibration above plants a few chosen errors in the theory and runs whole
# chapters: it measures whether the *claims* catch them. This section measures the *unit
# tests*. A standard mutation tool (mutmut, pinned in `scripts/mutation_score.py`) makes
# every single-token change it knows (an operator, a constant, a comparison, a dropped or
# `None` argument, a string) to the functions of one theory module per chapter and of the
# judging module `dltheory.fitting`, and runs each mutant against that module's fast unit
# tests only (the **tests** column; per mutant, the ones that call the mutated function).
# A mutant is **killed** when a test fails, **survives** when none does, and has **no
# tests** when none calls its function; **score** is killed (timeouts included) over all
# three. Every survivor is triaged by reading it: **equivalent** (no input changes what the
# code computes or which inputs it refuses; the wording of an error message is not
# counted) or **caught by nothing** (and why). Where a module has more mutants than the run
# takes, the numbers are for a reproducible random sample of them (the **mutants** column).
# Not covered here: the other modules, decorated functions and module-level constants
# (mutmut does not mutate them), mutants of more than one token, the slower tests, and the
# chapter runs, which may still catch a mutant that survives here. The record is
# `book/records/mutation_score.json`, written by `scripts/mutation_score.py` from a
# temporary copy of the committed tree; a module whose source changed since is **stale**.

# %% tags=["hide-input"]
lines, per_module, survivors = calibration.mutation_tables(
    ROOT / "book" / "records" / "mutation_score.json", ROOT)
print("\n".join(textwrap.fill(x, width=88) for x in lines))
scores, tests, survivors = calibration.mutation_page_tables(per_module, survivors)
if len(scores):
    runtime.display(claims.style_table(scores))
    runtime.display(claims.style_table(tests))
for module, rows in survivors.groupby("module", sort=False) if len(survivors) else []:
    runtime.display(claims.style_table(rows.drop(columns="module"), caption=module))
