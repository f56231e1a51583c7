"""Issue 45, part B: a chapter runs in Colab (only what its install cell installs), from any
folder, and every environment variable is declared and checked in one place.

Each test replays one defect found by the issue's fault run (named in its docstring) and
shows what happens now. Every chapter notebook executed in a bare, Colab-like environment
(``pip install .`` + ipykernel + a stub ``google.colab``) is ``scripts/test.sh``'s nbmake
step (``scripts/colab_env.sh``); here, the pieces it rests on, in seconds."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dltheory import chapter, runtime, validation

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "dltheory"
PY = sys.executable


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DLTHEORY_")}
    env.update(OMP_NUM_THREADS="1", PATH=f"{Path(PY).parent}{os.pathsep}{os.environ['PATH']}")
    env.update(extra)
    return env


# --------------------------------------------------------------------------- 1. Colab
def test_glue_publishes_what_myst_nb_glue_publishes_without_importing_it(monkeypatch):
    """Defect: ``Ledger.glue`` imported ``myst_nb`` (only in the ``book`` extra), so every
    chapter but the prologue stopped in Colab with ModuleNotFoundError before its ledger.
    Now it publishes the same display (MIME types, metadata) with IPython alone, with
    ``myst_nb`` made unimportable."""
    import IPython.display
    from myst_nb.ext import glue as myst_glue

    from dltheory import claims

    monkeypatch.setattr(runtime, "in_notebook", lambda: True)
    ledger = claims.Ledger("gradient_flow", scale="smoke", device="cpu", echo=False)
    ledger.check("gf-x", "a claim", measured=1.0, predicted=1.0, tol=0.1, kind="identity")
    theirs: list = []
    monkeypatch.setattr(myst_glue, "ipy_display", lambda *a, **kw: theirs.append((a, kw)))
    from IPython.display import Markdown

    text = ledger.findings_text(["gf-x"])
    myst_glue.glue("key", Markdown(text), display=False)

    ours: list = []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **kw: ours.append((a, kw)))
    monkeypatch.setitem(sys.modules, "myst_nb", None)         # import myst_nb -> ImportError
    assert ledger.glue("key", ["gf-x"]) == text
    assert ours == theirs and ours[0][1]["metadata"]["scrapbook"]["name"] == "key"
    assert claims.GLUE_PREFIX == myst_glue.GLUE_PREFIX


# names a module is imported by -> the distribution that provides it
DIST = {"sklearn": "scikit-learn", "yaml": "PyYAML", "mnist1d": "mnist1d", "torch": "torch",
        "numpy": "numpy", "scipy": "scipy", "matplotlib": "matplotlib", "pandas": "pandas",
        "threadpoolctl": "threadpoolctl", "tqdm": "tqdm", "joblib": "joblib",
        "filelock": "filelock", "jinja2": "jinja2"}
# imported only inside a function, on a path a Colab run never needs or guarded there
OPTIONAL = {
    "IPython": "present in every Jupyter/Colab kernel; in_notebook() is False without it",
    "ipywidgets": "Explore cells: a static figure with one line when missing",
    "distributed": "the dask backend (extra `dask`); a missing one is named in chapter.start",
    "docutils": "ledgers.heading_slug: the book build's reproduction page only",
    "torchvision": "datasets: real CIFAR loaders, guarded (a clear error names the package)",
}


def _third_party_imports(path: Path) -> set[tuple[str, bool]]:
    """(top-level module, imported at module level) for every import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for n in names:
            root = n.split(".")[0]
            if root in sys.stdlib_module_names or root in ("dltheory", "__future__"):
                continue
            out.add((root, id(node) in top))
    return out


def test_every_import_a_chapter_makes_is_declared_or_optional():
    """Defect class: a chapter's run needed a module the install cell does not install
    (``myst_nb``). Now every third-party module the package and the chapter notebooks
    import is a declared dependency (pyproject ``dependencies``) or, imported inside a
    function only, listed here as optional with what happens without it."""
    import tomllib

    declared = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in
                tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]}
    files = sorted(SRC.rglob("*.py")) + sorted((ROOT / "book").glob("[0-9][0-9]_*.py")) \
        + [ROOT / "book" / "toolkit.py"]
    bad = []
    for f in files:
        for mod, top_level in _third_party_imports(f):
            dist = DIST.get(mod, mod).lower()
            if dist in declared:
                continue
            if mod in OPTIONAL and not top_level:
                continue
            bad.append(f"{f.relative_to(ROOT)}: {mod}" + (" (module level)" if top_level else ""))
    assert not bad, "undeclared imports (declare them in pyproject or guard them): " + ", ".join(bad)


def test_the_ci_runs_the_chapters_in_the_colab_like_environment():
    """The Done-when test: scripts/test.sh's nbmake step executes every chapter notebook
    and the toolkit in the kernel of scripts/colab_env.sh's venv (``pip install .``,
    non-editable, + ipykernel + a stub google.colab), with the ledgers in the checkout."""
    test_sh = (ROOT / "scripts" / "test.sh").read_text()
    env_sh = (ROOT / "scripts" / "colab_env.sh").read_text()
    assert "scripts/colab_env.sh" in test_sh and "--nbmake-kernel=dltheory-colab" in test_sh
    assert 'uvpip install "$PKG" ipykernel' in env_sh and " -e " not in env_sh
    assert "import google.colab" in env_sh


# --------------------------------------------------------------------------- 3. any folder
def _copy_checkout(dest: Path) -> Path:
    """A minimal checkout: _config.yml, src/dltheory (a copy) and the prologue, in git."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "_config.yml", dest / "_config.yml")
    shutil.copytree(SRC, dest / "src" / "dltheory",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "book").mkdir(exist_ok=True)
    if not (dest / "book" / "00_gradient_flow.py").exists():
        shutil.copy(ROOT / "book" / "00_gradient_flow.py", dest / "book")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    subprocess.run(["git", "add", "."], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=dest, check=True)
    return dest


MINI_CHAPTER = """\
from dltheory import chapter

cfg, ledger = chapter.start("gradient_flow", "smoke")
ledger.check("GF.mini", "one is one", 1.0, 1.0, tol=0.1, kind="identity")
chapter.finish(ledger)
"""


@pytest.mark.parametrize("whole", [
    False,                                          # the prologue's start and finish only
    pytest.param(True, marks=pytest.mark.chapter_run),   # the whole prologue at smoke
])
def test_a_chapter_run_from_another_folder_writes_into_its_checkout(tmp_path, whole):
    """Defect: ``cd elsewhere && python <checkout>/book/00_...py`` wrote ``_build/`` under
    the working directory with an empty provenance (no commit, no source digests). Now the
    root comes from the package's location: the ledger lands in the checkout's ``_build/``
    with its commit and both digests, and nothing is written where the run started."""
    co = tmp_path / "co"
    co.mkdir()
    if not whole:
        (co / "book").mkdir()
        (co / "book" / "00_gradient_flow.py").write_text(MINI_CHAPTER)
    co = _copy_checkout(co)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = subprocess.run([PY, str(co / "book" / "00_gradient_flow.py")], cwd=elsewhere,
                       env=_env(PYTHONPATH=str(co / "src"), DLTHEORY_SCALE="smoke"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert not any(elsewhere.iterdir()), sorted(elsewhere.rglob("*"))
    ledger = json.loads((co / "_build" / "claims" / "gradient_flow.smoke.json").read_text())
    prov = ledger["provenance"]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=co, capture_output=True,
                          text=True).stdout.strip()
    assert prov["commit"] == head
    assert prov["source_sha256"]["chapter"] and prov["source_sha256"]["package"]
    assert ledger["identity"]["code"]["chapter"] == prov["source_sha256"]["chapter"]


_WHERE = ("from dltheory import runtime, provenance; import json; "
          "print(json.dumps([str(runtime.repo_root()), str(runtime.results_dir()), "
          "provenance.record('gradient_flow', 'smoke', 'cpu')['commit']]))")


def test_an_installed_package_writes_under_the_working_folder_and_says_so_once(tmp_path):
    """Colab: the package installed (not in a checkout) writes under the working folder's
    ``_build/`` and says so in one line; ``$DLTHEORY_ROOT`` names another folder."""
    site = tmp_path / "site-packages"
    shutil.copytree(SRC, site / "dltheory", ignore=shutil.ignore_patterns("__pycache__"))
    work = tmp_path / "content"
    work.mkdir()
    code = _WHERE + "; runtime.repo_root()"
    r = subprocess.run([PY, "-c", code], cwd=work, env=_env(PYTHONPATH=str(site)),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    said, data = r.stdout.splitlines()[0], json.loads(r.stdout.splitlines()[-1])
    assert said.startswith("dltheory: the package is installed, not in a checkout: outputs "
                           f"go under {work / '_build'}") and "DLTHEORY_ROOT" in said
    assert r.stdout.count("not in a checkout") == 1
    assert data == [str(work), str(work / "_build" / "claims"), None]
    other = tmp_path / "out"
    other.mkdir()
    r = subprocess.run([PY, "-c", _WHERE], cwd=work, capture_output=True, text=True,
                       env=_env(PYTHONPATH=str(site), DLTHEORY_ROOT=str(other)), timeout=120)
    assert json.loads(r.stdout)[:2] == [str(other), str(other / "_build" / "claims")]
    assert "not in a checkout" not in r.stdout


def test_the_checkout_is_found_from_the_package_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("DLTHEORY_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    assert runtime.checkout_root() == ROOT and runtime.repo_root() == ROOT
    monkeypatch.setenv("DLTHEORY_ROOT", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=r"DLTHEORY_ROOT=.*not an existing folder"):
        runtime.repo_root()


def test_a_copy_installed_from_git_records_its_commit(monkeypatch, tmp_path):
    """Colab installs ``git+<repo>@<sha or tag>``: the ledger's provenance records the
    commit pip installed (PEP 610 ``direct_url.json``), where no checkout gives one."""
    import importlib.metadata
    import types

    from dltheory import provenance

    sha = "0123456789abcdef0123456789abcdef01234567"
    record = json.dumps({"url": "https://github.com/dltheory/dltheory",
                         "vcs_info": {"vcs": "git", "commit_id": sha, "requested_revision": "main"}})
    monkeypatch.setattr(importlib.metadata, "distribution",
                        lambda name: types.SimpleNamespace(read_text=lambda f: record))
    monkeypatch.setenv("DLTHEORY_ROOT", str(tmp_path))          # no checkout there
    assert runtime.installed_commit() == sha
    prov = provenance.record("gradient_flow", "smoke", "cpu")
    assert prov["commit"] == sha and prov["dirty"] is None
    monkeypatch.setattr(importlib.metadata, "distribution",       # an editable install
                        lambda name: types.SimpleNamespace(
                            read_text=lambda f: '{"url": "file:///x", "dir_info": {"editable": true}}'))
    assert runtime.installed_commit() is None


# --------------------------------------------------------------------------- 4. release
def _release(tmp_path: Path, tag: str, version_in_init: str, version_in_toml: str):
    repo = tmp_path / "r"
    (repo / "src" / "dltheory").mkdir(parents=True)
    (repo / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "release.sh", repo / "scripts")
    (repo / "src" / "dltheory" / "__init__.py").write_text(f'__version__ = "{version_in_init}"\n')
    (repo / "pyproject.toml").write_text(f'[project]\nname = "dltheory"\nversion = "{version_in_toml}"\n')
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false",
           "-c", "tag.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=repo, check=True)
    env = _env(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    r = subprocess.run(["bash", "scripts/release.sh", tag], cwd=repo, env=env,
                       capture_output=True, text=True, timeout=60)
    tags = subprocess.run(["git", "tag"], cwd=repo, capture_output=True, text=True).stdout.split()
    return r, tags


def test_release_tags_only_a_matching_version(tmp_path):
    """Defect: the install cells pin ``@v0.1.0``, a tag that never existed. Now
    ``scripts/release.sh vX`` cuts the tag the cells name, refusing a tag that differs from
    the package's version (``__init__`` and pyproject)."""
    r, tags = _release(tmp_path / "a", "v0.1.0", "0.1.0", "0.1.0")
    assert r.returncode == 0, r.stderr and tags == ["v0.1.0"]
    r, tags = _release(tmp_path / "b", "v0.2.0", "0.1.0", "0.1.0")
    assert r.returncode != 0 and "0.1.0" in r.stderr and tags == []
    r, tags = _release(tmp_path / "c", "v0.1.0", "0.1.0", "0.1.1")
    assert r.returncode != 0 and "pyproject" in r.stderr and tags == []


# --------------------------------------------------------------------------- 5. environment
@pytest.mark.parametrize("value", ["0", "-1", "abc", ""])
def test_book_jobs_is_refused_with_its_range_before_the_lock(tmp_path, value):
    """Defect: ``DLTHEORY_BOOK_JOBS=0`` (or negative) made scripts/book.sh wait forever
    holding the build lock; ``abc`` died in a bare ``int()``. Now the variable is declared
    with the others and a bad value stops the build at once, naming the range, with no
    lock taken."""
    r = subprocess.run([PY, str(ROOT / "scripts" / "execute_chapters.py"), "--hold-lock",
                        "--", "true"], cwd=tmp_path, env=_env(DLTHEORY_BOOK_JOBS=value),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "$DLTHEORY_BOOK_JOBS" in r.stderr and "an integer in [1, 1024]" in r.stderr
    assert "Traceback" not in r.stderr


def test_book_jobs_option_is_checked_like_the_variable(capsys):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import execute_chapters
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    with pytest.raises(SystemExit):
        execute_chapters.main(["cache", "--jobs", "0"])
    assert "an integer in [1, 1024]" in capsys.readouterr().err


def test_every_variable_the_scripts_read_is_declared():
    """Every ``DLTHEORY_*`` name in the scripts, the package and the CI entry is declared
    in ``validation.ENVIRONMENT`` (one place; ``python -m dltheory.validation`` lists them)."""
    import re

    names = set()
    for f in [*(ROOT / "scripts").glob("*.sh"), *(ROOT / "scripts").glob("*.py"),
              *SRC.rglob("*.py"), ROOT / ".ci" / "run"]:
        names |= set(re.findall(r"DLTHEORY_[A-Z][A-Z_]*[A-Z]", f.read_text(encoding="utf-8")))
    assert names - set(validation.ENVIRONMENT) == set()


@pytest.mark.parametrize("value", ["1e12", "inf", "31622401"])
def test_a_budget_above_a_year_is_refused_with_the_range(monkeypatch, value):
    """Defect: ``DLTHEORY_BUDGET=1e12`` crashed in ``signal.setitimer`` (OverflowError).
    Now the variable, and a budget given in code, above a year are refused naming the
    allowed range."""
    from dltheory import budget

    monkeypatch.setenv("DLTHEORY_BUDGET", value)
    with pytest.raises(ValueError, match=r"DLTHEORY_BUDGET.*\(0, 31622400\]"):
        validation.check_environment()
    monkeypatch.delenv("DLTHEORY_BUDGET")
    with pytest.raises(ValueError, match=r"budget seconds .*\(0, 3.16224e\+07\]"):
        budget.start(1e12)
    assert validation.env("DLTHEORY_BUDGET") is None


def test_a_closed_dask_scheduler_stops_the_first_cell_naming_the_variable(monkeypatch):
    """Defect: a closed Dask scheduler timed out after the chapter's start-up without
    naming ``DLTHEORY_DASK_SCHEDULER``. Now ``chapter.start`` connects first and stops
    within its connect timeout, naming the variable and the address."""
    pytest.importorskip("distributed")
    import socket

    with socket.socket() as s:        # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("DLTHEORY_BACKEND", "dask")
    monkeypatch.setenv("DLTHEORY_DASK_SCHEDULER", f"tcp://127.0.0.1:{port}")
    monkeypatch.setattr(chapter, "DASK_CONNECT_S", 1)
    with pytest.raises(RuntimeError, match=rf"\$DLTHEORY_DASK_SCHEDULER='tcp://127.0.0.1:{port}'"):
        chapter.start("gradient_flow", "smoke", namespace={})   # within DASK_CONNECT_S


# --------------------------------------------------------------------------- 6. stale HTML
def _fake_checkout(tmp_path: Path, exec_rc: int) -> tuple[Path, dict]:
    """A throw-away checkout where scripts/book.sh runs for real but its steps are stubs:
    setup does nothing, the chapters' execution exits ``exec_rc``, ``jupyter-book`` writes
    a fresh index page."""
    co = tmp_path / "co"
    (co / "scripts").mkdir(parents=True, exist_ok=True)
    for f in ("book.sh", "stale_html.py"):
        shutil.copy(ROOT / "scripts" / f, co / "scripts")
    shutil.copy(ROOT / "_config.yml", co)
    (co / "scripts" / "setup.sh").write_text("true\n")
    (co / "scripts" / "execute_chapters.py").write_text(f"import sys; sys.exit({exec_rc})\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    jb = bin_dir / "jupyter-book"
    jb.write_text("#!/bin/sh\nmkdir -p _build/html && "
                  "echo '<html><body><p>new</p></body></html>' > _build/html/index.html\n")
    jb.chmod(0o755)
    env = _env(DLTHEORY_BOOK_LOCK_HELD="1", DLTHEORY_TIMES=str(tmp_path / "times.json"),
               PATH=f"{bin_dir}{os.pathsep}{Path(PY).parent}{os.pathsep}{os.environ['PATH']}")
    return co, env


def test_a_build_that_stops_marks_the_old_pages_stale_and_the_next_replaces_them(tmp_path):
    """Defect: when a build stopped on a failure the previous ``_build/html`` stayed,
    unmarked, showing old verdicts as current. Now every old page gets a banner and the
    folder a STALE file; the next build removes the marked folder and renders afresh."""
    co, env = _fake_checkout(tmp_path, exec_rc=1)
    html = co / "_build" / "html"
    (html / "sub").mkdir(parents=True)
    (html / "index.html").write_text("<html><body class='x'><p>old PASS</p></body></html>")
    (html / "sub" / "page.html").write_text("<html><body><p>old</p></body></html>")
    r = subprocess.run(["bash", "scripts/book.sh"], cwd=co, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0
    assert "marked stale" in r.stderr
    assert (html / "STALE").is_file()
    for page in (html / "index.html", html / "sub" / "page.html"):
        assert "Stale pages: the last build" in page.read_text()
    co2, env2 = _fake_checkout(tmp_path, exec_rc=0)
    r = subprocess.run(["bash", "scripts/book.sh"], cwd=co, env=env2, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    assert not (html / "STALE").exists() and not (html / "sub").exists()
    assert "Stale" not in (html / "index.html").read_text()
