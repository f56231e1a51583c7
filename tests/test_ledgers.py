"""Reading ledgers back: stale, error, not run; never a silent skip, never an absolute path."""

import json
import shutil

import pytest

from dltheory import claims, ledgers, provenance


def _repo(tmp_path):
    """A miniature checkout: _toc.yml and one chapter source under book/."""
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "01_alpha.py").write_text("# chapter alpha\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                                       "- file: book/01_alpha\n- file: book/02_beta\n")
    return tmp_path


def _write(res, chapter, root, monkeypatch):
    monkeypatch.chdir(root)
    led = claims.Ledger(chapter, scale="smoke", results_dir=res)
    led.check(f"{chapter}.1", "x", 1.0, 1.0, tol=0.1)
    led.check(f"{chapter}.id", "x", 0.0, 0.0, tol=1e-9, kind="identity")
    return led.write()


def _status(res, root):
    found, errors = ledgers.scan(res)
    chapters = ledgers.expected_chapters(root / "_toc.yml")
    summary, table = ledgers.collect(found, chapters, "smoke", errors=errors, root=root)
    return dict(zip(summary["chapter"], summary["status"], strict=True)), summary, table


def test_statuses_ran_not_run_and_stale(tmp_path, monkeypatch):
    root, res = _repo(tmp_path), tmp_path / "claims"
    _write(res, "alpha", root, monkeypatch)
    assert provenance.chapter_source("alpha", root).name == "01_alpha.py"
    status, summary, table = _status(res, root)
    assert status == {"alpha": "ran", "beta": "not run"}
    row = summary.set_index("chapter").loc["alpha"]
    assert row["evidence"] == 1 and row["identities"] == 1
    (root / "book" / "01_alpha.py").write_text("# chapter alpha, edited\n")
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "stale"
    assert "01_alpha.py changed" in summary.set_index("chapter").loc["alpha", "detail"]


def test_errors_are_named_not_skipped(tmp_path, monkeypatch):
    root, res = _repo(tmp_path), tmp_path / "claims"
    path = _write(res, "alpha", root, monkeypatch)
    shutil.copy(path, res / "alpha.smoke.copy.json")        # duplicate, misnamed
    (res / "beta.smoke.json").write_text('{"chapter": "beta", "sca')      # truncated
    (res / "gamma.smoke.json").write_text(json.dumps({"chapter": "gamma", "scale": "smoke",
                                                      "claims": []}))  # unknown chapter
    (res / "delta.smoke.json").write_text(json.dumps({"chapter": "delta"}))  # malformed
    status, summary, _ = _status(res, root)
    assert status["beta"] == "error" and status["gamma"] == "error"
    assert status["delta"] == "error"
    text = " ".join(str(x) for x in summary["detail"])
    assert "truncated" in text and "unknown chapter" in text and "missing keys" in text
    assert "alpha.smoke.copy.json" in text
    assert str(tmp_path) not in text                 # no absolute paths


def test_ledger_without_provenance_is_stale(tmp_path, monkeypatch):
    root, res = _repo(tmp_path), tmp_path / "claims"
    path = _write(res, "alpha", root, monkeypatch)
    data = json.loads(path.read_text())
    del data["provenance"]
    path.write_text(json.dumps(data))
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "stale"


@pytest.mark.parametrize("scale", ["standard"])
def test_other_scale_is_not_run(tmp_path, monkeypatch, scale):
    root, res = _repo(tmp_path), tmp_path / "claims"
    _write(res, "alpha", root, monkeypatch)
    found, errors = ledgers.scan(res)
    summary, _ = ledgers.collect(found, ["alpha"], scale, errors=errors, root=root)
    assert list(summary["status"]) == ["not run"]


WRITER = """
import sys
from dltheory import claims
led = claims.Ledger("alpha", scale="smoke", results_dir=sys.argv[1])
for i in range(int(sys.argv[2])):
    led.check(f"c{i}", "x" * 200, float(i), lo=-1.0)
data = led.to_dict()
led.to_dict = lambda wall_s=None: data    # the write path only, not provenance 400 times
for _ in range(400):
    led.write()
"""


def test_concurrent_writers_never_show_a_partial_ledger(tmp_path):
    import subprocess
    import sys

    res = tmp_path / "claims"
    res.mkdir()
    sizes = (40, 90)   # two writers, two different complete ledgers at one path
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(res), str(n)])
             for n in sizes]
    path, reads = res / "alpha.smoke.json", 0
    while any(p.poll() is None for p in procs):
        if not path.exists():
            continue
        data = json.loads(path.read_text())          # never empty, never truncated
        n = len(data["claims"])
        assert n in sizes and data["claims"][-1]["id"] == f"c{n - 1}"
        reads += 1
    assert [p.returncode for p in procs] == [0, 0]
    assert reads > 0 and json.loads(path.read_text())["chapter"] == "alpha"
    assert [p.name for p in res.iterdir()] == ["alpha.smoke.json"]   # no temp files left
