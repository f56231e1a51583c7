import numpy as np
import pytest
import torch

from dltheory import runtime


def test_scale_resolution(monkeypatch):
    monkeypatch.delenv("DLTHEORY_SCALE", raising=False)
    monkeypatch.setenv("CI", "true")
    assert runtime.scale() == "smoke"
    monkeypatch.delenv("CI")
    assert runtime.scale() == "standard"
    monkeypatch.setenv("DLTHEORY_SCALE", "Paper")
    assert runtime.scale() == "paper"
    assert runtime.scale("smoke") == "smoke"  # an explicit argument wins


def test_unknown_scale_lists_valid_ones(monkeypatch):
    monkeypatch.setenv("DLTHEORY_SCALE", "huge")
    with pytest.raises(ValueError, match="smoke, standard, paper"):
        runtime.scale()


def test_explicit_cuda_without_gpu_raises():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        runtime.get_device("cuda")
    assert runtime.get_device(None).type == "cpu"
    assert runtime.get_device("auto").type == "cpu"


def test_setup_sets_threads_dtype_and_banner(capsys):
    before = torch.get_default_dtype()
    try:
        rt = runtime.setup("smoke", dtype="float64")
        assert rt.threads == 1 and torch.get_num_threads() == 1
        assert torch.get_default_dtype() == torch.float64
        out = capsys.readouterr().out
        assert "scale=smoke" in out and "device=cpu" in out and "torch" in out
        with pytest.raises(ValueError, match="dtype"):
            runtime.setup("smoke", dtype="float16", quiet=True)
    finally:
        torch.set_default_dtype(before)


def test_generators_are_seeded_and_strict():
    a = runtime.as_generator(3).standard_normal(4)
    b = runtime.as_generator(3).standard_normal(4)
    np.testing.assert_array_equal(a, b)
    g = np.random.default_rng(0)
    assert runtime.as_generator(g) is g
    with pytest.raises(TypeError):
        runtime.as_generator(None)


def test_show_saves_in_script_mode(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setenv("DLTHEORY_FIG_DIR", str(tmp_path))
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = runtime.show(fig, "a figure/1")
    assert path is not None and path.exists() and path.parent == tmp_path
    assert not runtime.in_notebook()


def test_progress_is_quiet_off_terminal(monkeypatch):
    monkeypatch.delenv("DLTHEORY_PROGRESS", raising=False)
    monkeypatch.setenv("CI", "true")
    assert list(runtime.progress(range(3))) == [0, 1, 2]
    assert not runtime.progress_enabled()
    monkeypatch.setenv("DLTHEORY_PROGRESS", "1")
    assert runtime.progress_enabled()


def test_best_of_returns_minimum_and_result():
    calls = []
    t, out = runtime.best_of(lambda: calls.append(1) or len(calls), repeats=3)
    assert out == 3 and len(calls) == 3 and t >= 0
    with pytest.raises(ValueError, match="repeats"):
        runtime.best_of(lambda: None, repeats=0)


def test_colab_shell_subclass_counts_as_notebook(monkeypatch):
    """Colab's shell is google.colab._shell.Shell, a ZMQInteractiveShell subclass."""
    import IPython

    class ZMQInteractiveShell:   # stands in for ipykernel's class (same name, same role)
        pass

    class Shell(ZMQInteractiveShell):
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())
    assert runtime.in_notebook()
    monkeypatch.setenv("DLTHEORY_STATIC", "1")
    assert not runtime.interactive()          # the book build: no live widgets
    monkeypatch.delenv("DLTHEORY_STATIC")
    monkeypatch.delenv("CI", raising=False)
    assert runtime.interactive()

    class TerminalInteractiveShell:
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: TerminalInteractiveShell())
    assert not runtime.in_notebook()


def test_colab_shell_gets_inline_figures(monkeypatch, tmp_path):
    import IPython
    import matplotlib.pyplot as plt
    from ipykernel.zmqshell import ZMQInteractiveShell

    class Shell(ZMQInteractiveShell):   # the name and base of google.colab._shell.Shell
        pass

    monkeypatch.setattr(IPython, "get_ipython", lambda: object.__new__(Shell))
    monkeypatch.setenv("DLTHEORY_FIG_DIR", str(tmp_path))
    fig = plt.figure()
    assert runtime.show(fig, name="inline") is None      # shown inline, not saved
    assert not list(tmp_path.iterdir())
    plt.close(fig)


def test_empty_scale_env_is_an_error(monkeypatch):
    monkeypatch.setenv("DLTHEORY_SCALE", "")
    with pytest.raises(ValueError, match="empty"):
        runtime.scale()


def test_display_keeps_meaningful_row_labels(capsys):
    import pandas as pd

    df = pd.DataFrame({"loss": [0.123456, 2.0]}, index=pd.Index([16, 32], name="width"))
    runtime.display(df)
    out = capsys.readouterr().out
    assert "width" in out and "32" in out and "0.1235" in out
    runtime.display(pd.DataFrame({"a": [1.0]}))
    assert "0 " not in capsys.readouterr().out.splitlines()[-1][:2]


def test_display_drops_row_numbers_after_filtering_and_shows_missing_as_dash(capsys):
    import pandas as pd

    df = pd.DataFrame({"model": ["a", "b", "c"], "theory": [1.0, float("nan"), 3.0]})
    runtime.display(df[df.model != "a"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["model", "theory"]          # no row-number column
    assert lines[1].split() == ["b", "—"] and "nan" not in " ".join(lines)
