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


def test_by_scale():
    assert runtime.by_scale("smoke", 1, 2, 3) == 1
    assert runtime.by_scale("paper", 1, 2, 3) == 3
    with pytest.raises(ValueError):
        runtime.by_scale("tiny", 1, 2, 3)


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
    t1 = torch.randn(3, generator=runtime.torch_generator(5))
    t2 = torch.randn(3, generator=runtime.torch_generator(5))
    assert torch.equal(t1, t2)


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
