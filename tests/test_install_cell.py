"""The Colab install cell (``scripts/pair.py``'s ``INSTALL``, the first code cell of every
book file and notebook), run offline with a fake ``git`` and a fake pip."""

import importlib.metadata
import importlib.util
import os
import stat
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import pair  # noqa: E402


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def colab(tmp_path, monkeypatch):
    """A fake Colab: ``google.colab`` imported, ``git`` on PATH answering from
    ``$FAKE_TAGS``, and ``sys.executable`` a pip that logs its arguments (and fails when
    ``$FAKE_PIP_FAIL`` is set)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _script(bin_dir / "git", 'test -n "$FAKE_GIT_DOWN" && { echo "no network" >&2; exit 128; }\n'
                             'printf "%s" "$FAKE_TAGS"\n')
    log = tmp_path / "pip.log"
    py = _script(tmp_path / "python", f'echo "$@" >> {log}\n'
                                      'test -n "$FAKE_PIP_FAIL" && '
                                      '{ echo "ERROR: no such ref" >&2; exit 1; }\nexit 0\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(sys, "executable", str(py))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    return log


def _installed(monkeypatch, version):
    """Pretend dltheory ``version`` is installed (``None``: absent)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: (
        None if name == "dltheory" and version is None else real(name, *a)))
    dist = types.SimpleNamespace(version=version)
    monkeypatch.setattr(importlib.metadata, "distributions",
                        lambda **kw: iter([dist] if version else []))


def _run():
    exec(compile(pair.INSTALL, "install-cell", "exec"), {})


def test_release_tag_installed_with_one_line(colab, monkeypatch, capsys):
    _installed(monkeypatch, None)
    monkeypatch.setenv("FAKE_TAGS", "0123abc\tHEAD\nabc123\trefs/tags/v0.1.0\n")
    _run()
    assert capsys.readouterr().out == "dltheory: installing release v0.1.0\n"
    args = colab.read_text()
    assert "-U git+https://github.com/dltheory/dltheory@v0.1.0" in args


def test_main_when_the_tag_is_not_published(colab, monkeypatch, capsys):
    _installed(monkeypatch, "0.0.9")           # an older copy is upgraded
    sha = "5c56133e0f1d2c3b4a5968778695a4b3c2d1e0f9"
    monkeypatch.setenv("FAKE_TAGS", f"{sha}\tHEAD\n")
    _run()
    out = capsys.readouterr()
    # the cell says plainly which commit it installs, and installs exactly that commit
    assert out.out == ("dltheory: release v0.1.0 is not published yet, installing main at "
                       f"commit {sha}\n")
    assert out.err == ""
    assert f"git+https://github.com/dltheory/dltheory@{sha}" in colab.read_text()


def test_the_named_version_is_left_alone(colab, monkeypatch, capsys):
    import dltheory

    _installed(monkeypatch, dltheory.__version__)
    _run()
    assert capsys.readouterr().out == "" and not colab.exists()


def test_failures_end_the_cell_with_one_message(colab, monkeypatch):
    _installed(monkeypatch, None)
    monkeypatch.setenv("FAKE_GIT_DOWN", "1")
    with pytest.raises(SystemExit, match="cannot reach https://github.com/dltheory/dltheory"):
        _run()
    monkeypatch.delenv("FAKE_GIT_DOWN")
    monkeypatch.setenv("FAKE_PIP_FAIL", "1")
    with pytest.raises(SystemExit, match="pip could not install it: ERROR: no such ref"):
        _run()


def test_outside_colab_a_missing_package_says_how(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    _installed(monkeypatch, None)
    with pytest.raises(SystemExit, match="pip install -e ."):
        _run()


def test_every_book_file_holds_the_one_cell():
    import jupytext

    for src in pair.sources():
        first = next(c for c in jupytext.read(src).cells if c.cell_type == "code")
        assert first.source == pair.INSTALL, f"{src.name}: run python scripts/pair.py --install-cell"
