"""The book's figure style keeps text legible at the column width (plotting.use_style)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from dltheory import plotting  # noqa: E402


@pytest.fixture
def styled():
    with matplotlib.rc_context():
        plotting.use_style()
        yield
    plt.close("all")


@pytest.mark.parametrize("width,panels", [(5.0, 1), (9.0, 2), (10.0, 2), (11.0, 3)])
def test_default_text_is_legible_at_column_width(styled, width, panels):
    fig, axs = plt.subplots(1, panels, figsize=(width, 3.4), squeeze=False)
    for ax in axs[0]:
        ax.plot([1, 10], [1, 100], label="theory")
        ax.set(xscale="log", yscale="log", xlabel="$N$", ylabel="loss", title="panel")
        ax.legend()
    px, text = plotting.smallest_text_px(fig)
    assert px >= plotting.MIN_TEXT_PX, f"{text!r} is {px:.1f} px at {width} in"


def test_smallest_text_px_sees_explicit_small_fonts(styled):
    fig, ax = plt.subplots(figsize=(11, 3))
    ax.plot([0, 1], [0, 1], label="tiny")
    ax.legend(fontsize=6)
    px, text = plotting.smallest_text_px(fig)
    assert text == "tiny" and px < plotting.MIN_TEXT_PX
