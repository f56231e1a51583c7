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


def _at_root(root, monkeypatch):
    """Make ``root`` the repository the package sees (``$DLTHEORY_ROOT``; the working
    directory too, for a package that still finds it there)."""
    monkeypatch.chdir(root)
    monkeypatch.setenv("DLTHEORY_ROOT", str(root))


def _write(res, chapter, root, monkeypatch):
    _at_root(root, monkeypatch)
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
    src = root / "book" / "01_alpha.py"
    src.write_text(src.read_text() + "\n# %% [markdown]\n# A new paragraph of prose.\n")
    assert _status(res, root)[0]["alpha"] == "ran"          # prose does not decide verdicts
    src.write_text(src.read_text() + "\n# %%\nx = 2\n")
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
for _ in range(200):
    led.write()
"""


def test_concurrent_writers_never_show_a_partial_ledger(tmp_path):
    import subprocess
    import sys
    import time

    res = tmp_path / "claims"
    res.mkdir()
    sizes = (40, 90)   # two writers, two different complete ledgers at one path
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(res), str(n)])
             for n in sizes]
    path, reads = res / "alpha.smoke.json", 0
    while any(p.poll() is None for p in procs):
        time.sleep(0.0005)        # a reader that polls, not one that spins (CPU for the writers)
        if not path.exists():
            continue
        data = json.loads(path.read_text())          # never empty, never truncated
        n = len(data["claims"])
        assert n in sizes and data["claims"][-1]["id"] == f"c{n - 1}"
        reads += 1
    assert [p.returncode for p in procs] == [0, 0]
    assert reads > 0 and json.loads(path.read_text())["chapter"] == "alpha"
    assert [p.name for p in res.iterdir()] == ["alpha.smoke.json"]   # no temp files left


# ------------------------------------------------------------------ version 3: re-derivation
def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _row(summary, chapter="alpha"):
    return summary.set_index("chapter").loc[chapter]


def test_every_kind_round_trips_without_error(tmp_path, monkeypatch):
    root, res = _repo(tmp_path), tmp_path / "claims"
    _at_root(root, monkeypatch)
    led = claims.Ledger("alpha", scale="smoke", results_dir=res)
    led.check("a.hard", "x", 1.05, 1.0, tol=0.1)
    led.check("a.soft", "x", 3.0, 1.0, rtol=0.2, kind="soft")             # NOT REPRODUCED
    led.check("a.blind", "x", 1.0, 1.0, rtol=2.0, kind="soft")            # INCONCLUSIVE
    led.check("a.interval", "x", 1.9, 2.0, lo=1.8, hi=2.2)
    led.check("a.short", "x", 9.0, 1.0, tol=0.1, rounds=(2, 5))
    led.check("a.nan", "x", float("nan"), 1.0, tol=0.1, kind="soft", allow_nonfinite=True)
    led.inconclusive("a.declared", "x", 0.5, kind="hard", note="unpowered here")
    led.check("a.id", "x", 0.0, 0.0, tol=1e-12, kind="identity")
    led.check("a.der", "x", 1.001, 1.0, rtol=0.01, kind="derivation")
    led.write()
    status, summary, table = _status(res, root)
    row = _row(summary)
    assert status["alpha"] == "ran" and row["detail"] == "" and row["invalid"] == 0
    assert (row["evidence"], row["identities"], row["derivations"]) == (7, 1, 1)
    assert (row["PASS"], row["NOT REPRODUCED"], row["INCONCLUSIVE"]) == (2, 1, 4)
    assert row["budget"] == "—"                     # no budget record (yet)
    assert "error" not in set(table["verdict"])
    compact = ledgers.compact_summary(summary)
    assert {"identities", "derivations", "budget"} <= set(compact.columns)
    assert "derivations" in ledgers.summary_markdown(summary)


@pytest.mark.parametrize("tamper, says", [
    (lambda c: c.update(measured=3.1), "tampered or corrupt: alpha.1 written PASS, "
                                       "measured 3.1 outside |m - 1| <= 0.1"),
    (lambda c: c.update(verdict="PASS", measured=3.1, resolution=2.2),
     "alpha.1 written PASS, measured 3.1 outside"),
    (lambda c: c.update(resolution=0.01), "alpha.1 written resolution 0.01"),
    (lambda c: c["check"].update(tol=0.15), "alpha.1 written resolution"),
    (lambda c: c.update(predicted=7.0), "alpha.1 shows predicted 7.0"),
    (lambda c: c.update(verdict="MOSTLY PASS"), "alpha.1: unknown verdict 'MOSTLY PASS'"),
    (lambda c: c.update(kind="medium"), "alpha.1: unknown kind 'medium'"),
    (lambda c: c.pop("check"), "alpha.1 check not re-derivable"),
    (lambda c: c["check"].update(tol="wide"), "alpha.1 check not re-derivable"),
])
def test_a_verdict_that_does_not_rederive_is_an_error(tmp_path, monkeypatch, tamper, says):
    root, res = _repo(tmp_path), tmp_path / "claims"
    path = _write(res, "alpha", root, monkeypatch)
    _edit(path, lambda d: tamper(d["claims"][0]))
    status, summary, table = _status(res, root)
    row = _row(summary)
    assert status["alpha"] == "error" and says in row["detail"]
    assert row["invalid"] == 1 and row["PASS"] == 0 and row["identities"] == 1  # not dropped
    shown = table.set_index("id").loc["alpha.1"]
    assert shown["verdict"] == "error" and says in shown["note"]


def test_older_schema_is_never_silently_passed(tmp_path, monkeypatch):
    root, res = _repo(tmp_path), tmp_path / "claims"
    path = _write(res, "alpha", root, monkeypatch)
    _edit(path, lambda d: d.update(schema=2))
    status, summary, _ = _status(res, root)     # provenance says: today's sources
    assert status["alpha"] == "error"
    assert "schema 2: verdicts not re-derivable" in _row(summary)["detail"]
    (root / "book" / "01_alpha.py").write_text("x = 1  # chapter alpha, edited\n")
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "stale"
    assert _row(summary)["detail"].startswith("schema 2: verdicts not re-derivable; the code of")
    _edit(path, lambda d: d["claims"][0].update(verdict="GOOD ENOUGH"))
    status, summary, _ = _status(res, root)     # old schema: kinds and verdicts still checked
    assert status["alpha"] == "error" and _row(summary)["invalid"] == 1
    _edit(path, lambda d: d.update(schema=9))
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "error" and "schema 9 unknown" in _row(summary)["detail"]


@pytest.mark.parametrize("budget, shown", [
    (None, "—"),
    ({"seconds": None, "spent": 3.0, "complete": True, "rounds": {"a": [5, 5]}}, "—"),
    ({"seconds": 60.0, "spent": 41.0, "complete": True, "rounds": {"a": [5, 5]}}, "full"),
    ({"seconds": 60.0, "spent": 60.2, "complete": False,
      "rounds": {"a": [3, 5], "b": [1, 1]}}, "3/5 rounds"),
    ({"seconds": 60.0, "spent": 60.2, "complete": False,
      "rounds": {"a": [3, 5], "b": [1, 4]}}, "1/4 rounds (+1 sweeps short)"),
])
def test_budget_column(tmp_path, monkeypatch, budget, shown):
    root, res = _repo(tmp_path), tmp_path / "claims"
    path = _write(res, "alpha", root, monkeypatch)
    _edit(path, lambda d: d.update(budget=budget))
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "ran" and _row(summary)["budget"] == shown


def test_malformed_budget_is_an_error(tmp_path, monkeypatch):
    root, res = _repo(tmp_path), tmp_path / "claims"
    path = _write(res, "alpha", root, monkeypatch)
    _edit(path, lambda d: d.update(budget={"rounds": "lots"}))
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "error" and "budget record malformed" in _row(summary)["detail"]


def test_budget_record_travels_from_the_run_to_the_page(tmp_path, monkeypatch):
    from dltheory import budget

    root, res = _repo(tmp_path), tmp_path / "claims"
    budget.start(60.0)
    try:
        budget.note_rounds("sweep", 3, 5)
        path = _write(res, "alpha", root, monkeypatch)
    finally:
        budget.start(None)          # the budget is process-wide: leave none behind
    assert json.loads(path.read_text())["budget"]["rounds"] == {"sweep": [3, 5]}
    status, summary, _ = _status(res, root)
    assert status["alpha"] == "ran" and _row(summary)["budget"] == "3/5 rounds"


def test_code_hash_ignores_prose_tags_and_blank_lines(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("# %% [markdown]\n# Prose.\n\n# %%\nx = 1\n")
    b.write_text("# %% [markdown]\n# Other prose.\n# %% tags=['remove-input']\n\nx = 1\n\n")
    assert provenance.code_sha256(a) == provenance.code_sha256(b)
    b.write_text("# %%\nx = 2\n")
    assert provenance.code_sha256(a) != provenance.code_sha256(b)


def test_package_hash_covers_only_the_code_a_chapter_runs(tmp_path):
    pkg = tmp_path / "pkg"
    for rel in ["claims.py", "ledgers.py", "sparse_scaling/theory.py",
                "sparse_scaling/figures.py", "conservation/laws.py"]:
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(f"# {rel}\n")
    before = {ch: provenance.package_sha256(ch, pkg) for ch in provenance.CHAPTER_MODULES}

    def changed(rel):
        (pkg / rel).write_text((pkg / rel).read_text() + "y = 1\n")
        now = {ch: provenance.package_sha256(ch, pkg) for ch in provenance.CHAPTER_MODULES}
        out = {ch for ch in now if now[ch] != before[ch]}
        before.update(now)
        return out

    assert changed("conservation/laws.py") == {"conservation_laws"}
    assert changed("sparse_scaling/theory.py") == {"sparse_scaling"}
    assert changed("sparse_scaling/figures.py") == set()       # figures draw, never judge
    assert changed("ledgers.py") == set()
    assert changed("claims.py") == set(provenance.CHAPTER_MODULES)
    with pytest.raises(ValueError):
        provenance.package_sha256("no_such_chapter", pkg)


def test_hashes_ignore_comments_but_not_code(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "claims.py").write_text("x = 1  # one\n")
    before = provenance.package_sha256("sparse_scaling", pkg)
    (pkg / "claims.py").write_text("# a comment line\n\nx = 1  # one\n")
    assert provenance.package_sha256("sparse_scaling", pkg) == before
    (pkg / "claims.py").write_text("x = 2  # one\n")
    assert provenance.package_sha256("sparse_scaling", pkg) != before
