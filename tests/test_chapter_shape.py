"""Every chapter teaches first and reads as a book: the shape of scripts/chapter_shape.py.

The rules are tested on a small synthetic chapter that has the shape, and on one planted
breach at a time; then every real chapter is measured.
"""

import sys
from pathlib import Path

import jupytext
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import chapter_shape  # noqa: E402

F = "```"
GOOD = f"""# %% [markdown]
# # Title
#
# ## Overview
#
# The question. Read the [prologue](00_gradient_flow.md) first; how the verdicts are
# reached: [How this book checks itself](checking.md).

# %% tags=["parameters", "hide-input"]
SCALE = "smoke"

# %% tags=["remove-input"]
print("headline figure")

# %% [markdown]
# ## 1. The model
#
# $$
# h = u^2 - v^2
# $$ (gf-eq-law)
#
# By {{eq}}`gf-eq-law` the law holds.
#
# {F}{{admonition}} How it is computed
# :class: dropdown
# **Scales and cost.** `DLTHEORY_BUDGET` and the family-wise rule, folded away.
# {F}
#
# ### 1.1 A step

# %%
x = 1

# %% tags=["remove-cell"]
FINDINGS = ["GF.a"]
ledger.glue("findings", FINDINGS)

# %% [markdown]
# ## Summary
#
# - one idea
# - another idea
#
# ## Exercises
#
# {F}{{admonition}} Exercise 1
# Do this.
# {F}
#
# {F}{{admonition}} Solution
# :class: dropdown
# Done.
# {F}
#
# {F}{{admonition}} Exercise 2
# Do that.
# {F}
#
# {F}{{admonition}} Solution
# :class: dropdown
# Done.
# {F}
#
# {F}{{admonition}} Exercise 3
# And this.
# {F}
#
# {F}{{admonition}} Solution
# :class: dropdown
# Done.
# {F}
#
# ## Claims
"""


def problems(text: str) -> list[str]:
    return chapter_shape.outline_problems(jupytext.reads(text, fmt="py:percent").cells)


def test_the_synthetic_chapter_has_the_shape():
    assert problems(GOOD) == []


@pytest.mark.parametrize("old, new, expect", [
    ("# ## Overview\n", "# ## Conventions\n", "not 'Overview'"),
    ("# ## Summary\n", "# ## Recap\n", "unnumbered section 'Recap'"),
    ("# - another idea\n", "", "Summary has 1 bullets"),
    ("# ## Claims\n", "# ## Claims\n#\n# ## Explore\n", "back matter"),
    ("# ## 1. The model\n", "# ## 2. The model\n", "should be number 1"),
    ("# ### 1.1 A step\n", "# ### 1.2 A step\n", "should be 1.1"),
    ("# {F}{{admonition}} Exercise 3\n# And this.\n# {F}\n",
     "", "2 exercises"),
    (":class: dropdown\n# Done.\n# {F}\n#\n# ## Claims", "Done.\n# {F}\n#\n# ## Claims",
     "'Exercise 3' is not followed"),
    ("# ### 1.1 A step\n", "# ### 1.1 A step\n#\n# **Scales and cost.** Seeds.\n",
     "bookkeeping heading 'Scales and cost.'"),
    ("# ### 1.1 A step\n", "# ### 1.1 The claims ledger\n", "bookkeeping heading"),
    ("# ### 1.1 A step\n", "# ### 1.1 A step\n#\n# Set `DLTHEORY_BUDGET=60`.\n",
     "bookkeeping term 'DLTHEORY_BUDGET'"),
    ("# ### 1.1 A step\n", "# ### 1.1 A step\n#\n# {F}{{admonition}} Calibration\n"
     "# Text.\n# {F}\n", "bookkeeping admonition 'Calibration'"),
    ("# By {{eq}}`gf-eq-law`", "# By Eq. (1.2)", "hand-numbered"),
    ("# h = u^2 - v^2\n", "# h = u^2 - v^2 \\tag{{1}}\n", "hand-numbered"),
    ("(checking.md)", "(reproduction.md)", "no link to checking.md"),
    ('# %% tags=["remove-cell"]\nFINDINGS', '# %%\nFINDINGS', "bookkeeping cell"),
    ("x = 1\n", "x = 1  # " + "y" * 90 + "\n", "code line of"),
    ("x = 1\n", "from dltheory import gradient_flow as gf\n", "alias"),
    ('# %% tags=["remove-input"]\nprint', '# %% tags=["hide-input"]\nprint',
     "no headline figure"),
    ('# %% tags=["parameters", "hide-input"]', '# %% tags=["parameters"]', "visible code"),
])
def test_each_planted_breach_is_caught(old, new, expect):
    old, new = old.format(F=F), new.format(F=F)
    assert old in GOOD, old
    found = problems(GOOD.replace(old, new, 1))
    assert any(expect in p for p in found), found


def test_a_paragraph_that_links_the_checking_page_may_name_its_rules():
    linked = GOOD.replace("# ### 1.1 A step\n", "# ### 1.1 A step\n#\n# A threshold set by "
                          "the family-wise rule\n# of [the checking page](checking.md).\n")
    assert problems(linked) == []
    unlinked = linked.replace("[the checking page](checking.md).", "the checking page.\n#\n"
                              "# [How this book checks itself](checking.md)")
    assert any("family-wise" in p for p in problems(unlinked))


def test_the_folded_method_block_is_not_main_flow():
    lines, directives = chapter_shape.parse_markdown(
        f"{F}{{admonition}} How it is computed\n:class: dropdown\n**Budget.** x\n{F}\nafter")
    assert [ln.dropdown for ln in lines] == [True, False]
    assert directives[0].dropdown and directives[0].title == "How it is computed"


@pytest.mark.parametrize("src", chapter_shape.chapters(), ids=lambda p: p.name)
def test_chapter_shape(src):
    shape = chapter_shape.measure(src)
    assert not shape.breaches(), f"{src.name}: {'; '.join(shape.breaches())}"


@pytest.mark.parametrize("module", chapter_shape.figure_modules(),
                         ids=lambda p: p.parent.name)
def test_every_public_figure_function_has_a_docstring(module):
    assert chapter_shape.undocumented_figures(module) == []


def test_an_undocumented_figure_function_is_found(tmp_path):
    f = tmp_path / "figures.py"
    f.write_text('def drift(table, cfg):\n    """Drawn: x."""\n\n\ndef bare(table, cfg):\n'
                 '    return None\n\n\ndef _helper():\n    pass\n')
    assert chapter_shape.undocumented_figures(f) == ["bare"]
