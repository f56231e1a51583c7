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
# # Reproduction status
#
# Every chapter ends with a ledger of the paper's claims: what the theory predicts, what
# this book measured, the tolerance, and a verdict. This page reads the ledgers the chapters
# wrote (`_build/claims/<chapter>.<scale>.json`) and is executed afresh on every build,
# never taken from the execution cache.
#
# **Evidence and identities.** `hard` and `soft` claims are *evidence*: a measurement that
# could have come out otherwise. An `identity` holds by construction (a bookkeeping
# identity, a fallback rule, a formula compared with itself); it is shown, never counted
# as evidence. **Resolution** is the smallest relative error in a prediction that its check
# is sure to catch: `5%` means a theory off by 5% either way would have FAILed. Checks
# that would let a 25% error through are marked *weak*. A `derivation` checks the book's
# theory against its own theory (an exact sum against its asymptotic form); like an
# identity it is shown and must hold, but it is not evidence.
#
# **In a notebook (Colab):** run the chapters first. Each chapter's last cell writes its
# ledger in the runtime it ran in, and this page shows the ledgers it finds there. Until
# there are any, it shows the results published with the rendered book.
#
# **Status of a chapter.** `ran` (its ledger matches the code being built), `failed` (a hard
# claim failed), `stale` (the chapter's code cells or the package code it runs changed
# after the ledger was written, so its verdicts describe other code; prose and figure
# modules do not count), `mutated` (the ledger was written with a planted error active:
# `MUTATED: <id>`; the book build refuses such a chapter), `off defaults` (a run at other
# knob settings or another seed than the preset's, shown with them, e.g.
# `off defaults: ALPHA1=2`), `not run` (no ledger at this scale: never
# shown as passed), `error` (a corrupt, duplicate or unknown ledger, named). Every verdict
# is re-derived here from the measured value and the check stored beside it; a claim whose
# written verdict does not follow is counted under **invalid** and makes its ledger `error`.
# **budget**: `full` when every sweep ran all its rounds, `3/5 rounds` when a time budget
# (`DLTHEORY_BUDGET`) stopped the shortest sweep early, `—` without a budget.

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
MARKDOWN = "--markdown" in sys.argv and not runtime.in_notebook()   # README table

# %% tags=["remove-cell"]
import html
import os
import re

import dltheory
from dltheory import budget, claims, ledgers


def chapter_link(name: str) -> str:
    """The chapter's title, linked to its page (in the book) or its rendered page: markup
    (``claims.Html``) built from escaped parts; any other name as plain text, which the
    table escapes (a damaged ledger's name is shown, never interpreted)."""
    book = runtime.repo_root() / "book"
    ok = isinstance(name, str) and re.fullmatch(r"\w+", name)
    src = next(iter(sorted(book.glob(f"[0-9][0-9]_{name}.py"))), None) if ok else None
    if src is None:
        return str(name)
    title = next((ln[4:].strip() for ln in src.read_text().splitlines()
                  if ln.startswith("# # ")), name)
    if not runtime.in_notebook():   # a script prints the title
        return title
    in_book = os.environ.get("DLTHEORY_STATIC") == "1"   # set by the book build
    href = f"{src.stem}.html" if in_book else f"{dltheory.BOOK_URL}book/{src.stem}.html"
    return claims.Html(f'<a href="{html.escape(href)}">{html.escape(title)}</a>')


# %% tags=["hide-input"]
found, unreadable = ledgers.scan()
summary, table = ledgers.collect(found, ledgers.expected_chapters(), SCALE, errors=unreadable)
if MARKDOWN:
    print(ledgers.summary_markdown(summary))
else:
    shown = ledgers.compact_summary(summary)
    shown["chapter"] = [chapter_link(c) for c in shown["chapter"]]
    n_read = sum(r.get("scale") == SCALE for r in found)
    print(f"scale {SCALE}: {n_read} ledger(s) read, {len(unreadable)} unreadable")
    runtime.display(claims.style_table(shown))

# %% tags=["remove-input"]
# No local ledger (a fresh Colab runtime): run the chapters first; until then, the
# book's published reproduction page.
PUBLISHED = f"{dltheory.BOOK_URL}book/reproduction.html"
if not MARKDOWN and not any(r.get("scale") == SCALE for r in found):
    print(f"No ledger at scale {SCALE!r} here yet: run the chapters first (each one's last "
          "cell writes its ledger), then this page again.")
    if runtime.in_notebook():
        from IPython.display import HTML

        runtime.display(HTML(
            f'<p>The published results (<a href="{PUBLISHED}">{PUBLISHED}</a>), until the '
            f'chapters have run here:</p><iframe src="{PUBLISHED}" width="100%" '
            'height="600" style="border:1px solid #ccc"></iframe>'))

# %% [markdown]
# ## Every claim
#
# One row per claim, in chapter order, the claims that did not PASS first; each claim id is
# an anchor (`reproduction.html#SS.alpha_N` links to its row). Under each claim id is its
# kind, then two links: the chapter section that records the claim (`§4.3`) and the
# function whose code checks it (its lines on GitHub). Under the measured value, the
# prediction; under the statement, in grey, the note a verdict depends on (fit windows,
# intervals, the reason a soft claim is inconclusive).

# %% tags=["hide-input"]
PAGES = "" if os.environ.get("DLTHEORY_STATIC") == "1" else f"{dltheory.BOOK_URL}book/"
for chapter, rows in ([] if MARKDOWN else table.groupby("chapter", sort=False)):
    runtime.display(ledgers.anchor_claims(
        claims.style_table(rows.drop(columns="chapter"), caption=chapter_link(chapter)),
        rows["id"], ledgers.claim_links(chapter, rows["id"], page=PAGES)))

# %% [markdown]
# ## Measured times
#
# The one record of measured times (`book/records/times.json`, written by `scripts/test.sh`,
# `scripts/book.sh` and `scripts/gpu_check.sh`): how long each step and chapter took, when,
# on how many cores and under what load. Every time this book quotes comes from here; a
# time measured on a loaded machine says so in its load column.

# %% tags=["hide-input"]
if not MARKDOWN:
    record, unread = ledgers.read_times(budget.times_path(runtime.repo_root()))
    times = ledgers.times_table(record)
    if unread not in (None, "missing"):
        print(f"The record of times cannot be shown: {unread}.")
    elif times.empty:
        print("No time recorded yet: scripts/test.sh, scripts/book.sh and "
              "scripts/gpu_check.sh write book/records/times.json.")
    else:
        runtime.display(claims.style_table(times))
