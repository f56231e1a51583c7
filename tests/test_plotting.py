import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pytest

from dltheory import plotting


def test_use_style_is_idempotent_and_explicit():
    before = mpl.rcParams["axes.spines.top"]
    with mpl.rc_context():
        plotting.use_style()
        plotting.use_style()
        assert mpl.rcParams["axes.spines.top"] is False
    assert mpl.rcParams["axes.spines.top"] == before


def test_helpers_draw_theory_dashed_and_sim_as_markers():
    fig, ax = plt.subplots()
    x = np.geomspace(1, 100, 10)
    plotting.sim_vs_theory(ax, x, x**-1.0, x**-1.0, loglog=True)
    plotting.slope_line(ax, -1.0, anchor=(1, 1))
    sim_line, theory_line, slope = ax.get_lines()
    assert sim_line.get_linestyle() == "None" and sim_line.get_marker() == "o"
    assert theory_line.get_linestyle() == "--"
    assert ax.get_xscale() == "log"
    xs, ys = slope.get_data()
    np.testing.assert_allclose(np.log(ys[-1] / ys[0]) / np.log(xs[-1] / xs[0]), -1.0)
    plt.close(fig)
    assert plotting.scale_tag("smoke", "digits") == "digits, smoke scale"


def test_local_slope_panel_shows_the_exponent():
    fig, ax = plt.subplots()
    x = np.geomspace(1, 1e3, 12)
    plotting.local_slope_panel(ax, x, 2 * x**-1.5, x, x**-1.5, 1.5, var="N")
    sim_line, theory_line, level = ax.get_lines()
    np.testing.assert_allclose(sim_line.get_ydata(), 1.5)
    np.testing.assert_allclose(theory_line.get_ydata(), 1.5)
    assert theory_line.get_linestyle() == "--" and ax.get_xscale() == "log"
    plt.close(fig)


def test_explore_draws_defaults_once_when_static(monkeypatch, tmp_path):
    import matplotlib.pyplot as plt

    monkeypatch.setenv("DLTHEORY_FIG_DIR", str(tmp_path))
    seen = []

    def draw(alpha, kind):
        seen.append((alpha, kind))
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, alpha])
        return fig

    # shown once and not returned (a returned Figure is displayed again as the cell's value)
    assert plotting.explore(draw, name="demo", alpha=(0.5, 2.0, 0.1, 1.0), kind=["a", "b"]) is None
    assert seen == [(1.0, "a")]
    assert (tmp_path / "demo.png").exists()
    with pytest.raises(ValueError, match="knob alpha"):
        plotting.explore(draw, alpha=(0.5, 2.0, 0.1, 3.0))
    with pytest.raises(ValueError, match="at least one knob"):
        plotting.explore(draw)


def test_explore_without_ipywidgets_says_why_and_draws_the_defaults(monkeypatch, tmp_path,
                                                                   capsys):
    import builtins

    import matplotlib.pyplot as plt

    from dltheory import runtime

    monkeypatch.setenv("DLTHEORY_FIG_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "interactive", lambda: True)
    real_import = builtins.__import__

    def no_widgets(name, *args, **kw):
        if name == "ipywidgets":
            raise ImportError("No module named 'ipywidgets'")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_widgets)
    seen = []

    def draw(alpha):
        seen.append(alpha)
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, alpha])
        return fig

    assert plotting.explore(draw, name="demo", alpha=(0.5, 2.0, 0.1, 1.0)) is None
    assert seen == [1.0] and (tmp_path / "demo.png").exists()
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[explore]")]
    assert len(lines) == 1 and "ipywidgets is not installed" in lines[0]
