"""One look for every figure: theory dashed and dark, simulation as markers, log-log with
the predicted slope drawn.

``use_style()`` is the only function in ``dltheory`` that touches matplotlib's rcParams;
chapters call it once. The helpers draw on an ``ax`` they are given and return it.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import numpy as np

# The book's text column at a 1280 px wide window (sphinx-book-theme, measured on the built
# book). A figure wider than COLUMN_PX is shown scaled down to it, so a text of s points in
# a figure W inches wide appears s * COLUMN_PX / (72 W) px high: at 10.5 pt, 9 px or more
# up to W = 11 in, the widest row of panels the chapters draw (2-3 panels); a wider figure
# needs fewer panels per row. ``smallest_text_px`` checks a figure.
COLUMN_PX = 688
MIN_TEXT_PX = 9.0

STYLE = {
    "figure.figsize": (5.0, 3.4),
    "figure.dpi": 110,
    "font.size": 11.5,
    "axes.titlesize": 11.5,
    "axes.labelsize": 11.5,
    "xtick.labelsize": 10.5,
    "ytick.labelsize": 10.5,
    "legend.fontsize": 10.5,
    "legend.title_fontsize": 10.5,
    "figure.titlesize": 12.5,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.5,
    "lines.markersize": 5,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "figure.constrained_layout.use": True,
}

# one palette for the book (colour-blind safe, Okabe-Ito order)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
THEORY = {"color": "0.15", "ls": "--", "lw": 1.4, "zorder": 3}
SIM = {"marker": "o", "ls": "none", "ms": 5, "alpha": 0.9, "zorder": 4}


def use_style() -> None:
    """Apply the book's matplotlib style (idempotent)."""
    mpl.rcParams.update(STYLE)
    mpl.rcParams["axes.prop_cycle"] = mpl.cycler(color=list(PALETTE))


def smallest_text_px(fig, column_px: float = COLUMN_PX) -> tuple[float, str]:
    """The height in screen pixels of the smallest visible text of ``fig`` as the book shows
    it (scaled down to ``column_px`` when wider), and that text. For a check such as
    ``assert smallest_text_px(fig)[0] >= MIN_TEXT_PX``.

    fig: a drawn matplotlib Figure; the width is that of its tight bounding box (as the
    inline backend saves it).
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width_in = fig.get_tightbbox(renderer).width
    scale = min(1.0, column_px / (width_in * fig.dpi))
    best = (float("inf"), "")
    for t in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text")):
        if not t.get_visible() or not str(t.get_text()).strip():
            continue
        if getattr(t, "axes", None) is not None and not t.axes.get_visible():
            continue
        px = float(t.get_fontsize() / 72 * fig.dpi * scale)
        if px < best[0]:
            best = (px, str(t.get_text()))
    return best


def color(i: int) -> str:
    """The i-th palette colour (cycles)."""
    return PALETTE[i % len(PALETTE)]


def theory(ax, x, y, *, label: str | None = "theory", **kw):
    """A theory curve: dashed, dark unless a colour is given."""
    style = {**THEORY, **kw}
    ax.plot(x, y, label=label, **style)
    return ax


def sim(ax, x, y, *, yerr=None, label: str | None = "simulation", **kw):
    """Simulation points: markers, with error bars when ``yerr`` is given."""
    style = {**SIM, **kw}
    if yerr is None:
        ax.plot(x, y, label=label, **style)
    else:
        ax.errorbar(x, y, yerr=yerr, label=label, capsize=2, **style)
    return ax


def sim_vs_theory(ax, x, y_sim, y_theory, *, yerr=None, x_theory=None, color_idx: int = 0,
                  label: str | None = None, loglog: bool = False):
    """Markers for the simulation and a dashed line of the same colour for the theory."""
    c = color(color_idx)
    sim(ax, x, y_sim, yerr=yerr, color=c, label=f"{label} (sim)" if label else "simulation")
    xt = x if x_theory is None else x_theory
    theory(ax, xt, y_theory, color=c, label=f"{label} (theory)" if label else "theory")
    if loglog:
        ax.set_xscale("log")
        ax.set_yscale("log")
    return ax


def slope_line(ax, slope: float, *, x: Sequence[float] | None = None, anchor=None,
               label: str | None = None, offset: float = 1.0, **kw):
    """Draw a reference line ``y = c x^slope`` on a log-log axis.

    x: the x-range of the line (default: the axis' current x-limits); anchor: a point
    (x0, y0) the line passes through (default: the geometric centre of the data limits),
    multiplied by ``offset`` so the line can sit just beside the data.
    """
    if x is None:
        x = ax.get_xlim()
    x = np.asarray(x, dtype=float)
    if anchor is None:
        xl, yl = ax.get_xlim(), ax.get_ylim()
        anchor = (np.sqrt(xl[0] * xl[1]), np.sqrt(yl[0] * yl[1]))
    x0, y0 = anchor
    xs = np.geomspace(x.min(), x.max(), 50)
    ys = offset * y0 * (xs / x0) ** slope
    style = {"color": "0.45", "ls": ":", "lw": 1.2, "zorder": 2, **kw}
    ax.plot(xs, ys, label=label if label is not None else f"slope {slope:g}", **style)
    return ax


def loglog(ax, *, xlabel: str | None = None, ylabel: str | None = None, title: str | None = None):
    """Set log scales and labels in one call."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return ax


def scale_tag(scale_name: str, data: str | None = None) -> str:
    """Text for figure titles naming the data and the scale: ``'digits, smoke scale'``."""
    return f"{data}, {scale_name} scale" if data else f"{scale_name} scale"


def local_slope_panel(ax, x_sim, y_sim, x_theory, y_theory, predicted: float, *,
                      var: str = "x", sim_label: str = "sampled",
                      theory_label: str = "theory", predicted_label: str | None = None):
    """The local exponent ``-d log y / d log x`` of a simulated curve (markers) and of its
    theory (dashed), with the predicted asymptotic exponent as a dotted level."""
    from .fitting import local_slopes

    xm, sl = local_slopes(x_sim, y_sim)
    sim(ax, xm, -sl, label=sim_label)
    xm, sl = local_slopes(x_theory, y_theory)
    theory(ax, xm, -sl, label=theory_label)
    ax.axhline(predicted, color="0.5", ls=":", label=predicted_label or f"predicted {predicted:g}")
    ax.set(xscale="log", xlabel=var, ylabel=rf"$-d\log\ell/d\log {var}$", title="local slope")
    ax.legend()
    return ax


def explore(draw, *, name: str = "explore", **knobs):
    """Redraw theory curves over a chapter's headline knobs.

    ``draw(**values) -> Figure`` draws the theory (no simulation: it must be instant). Each
    knob is ``(lo, hi, step, default)`` (a slider; ints give an integer slider) or a list of
    options (a dropdown whose first entry is the default). In a live Jupyter or Colab kernel
    (``runtime.interactive()``) this shows sliders that redraw on release; in the static
    book, under nbmake and in scripts it draws the defaults once through ``runtime.show``,
    and so it does, saying why in one line, in a live kernel without ``ipywidgets``.
    Returns ``None``: the figure is shown once (a returned Figure would be displayed a second
    time as the cell's value).
    """
    from . import runtime

    if not knobs:
        raise ValueError("explore needs at least one knob, e.g. alpha1=(0.25, 4.0, 0.05, 1.0)")
    defaults = {}
    for key, spec in knobs.items():
        if isinstance(spec, (list, tuple)) and len(spec) == 4 and not isinstance(spec, list):
            lo, hi, step, default = spec
            if not (lo <= default <= hi) or step <= 0:
                raise ValueError(f"knob {key}: need lo <= default <= hi and step > 0, got "
                                 f"{spec}")
            defaults[key] = default
        elif isinstance(spec, list) and spec:
            defaults[key] = spec[0]
        else:
            raise ValueError(f"knob {key}: give (lo, hi, step, default) or a non-empty list "
                             f"of options, got {spec!r}")
    if not runtime.interactive():
        runtime.show(draw(**defaults), name=name)
        return None
    try:
        import ipywidgets as w
    except ImportError:
        print("[explore] ipywidgets is not installed, so no sliders: the figure at the "
              "defaults (`pip install ipywidgets` for them)")
        runtime.show(draw(**defaults), name=name)
        return None
    import matplotlib.pyplot as plt

    controls = {}
    for key, spec in knobs.items():
        if isinstance(spec, list):
            controls[key] = w.Dropdown(options=spec, value=spec[0], description=key)
        else:
            lo, hi, step, default = spec
            cls = w.IntSlider if all(isinstance(v, int) for v in spec) else w.FloatSlider
            controls[key] = cls(min=lo, max=hi, step=step, value=default, description=key,
                                continuous_update=False)

    def _redraw(**values):          # returns None: interact would display a Figure again
        draw(**values)
        plt.show()

    w.interact(_redraw, **controls)
    return None
