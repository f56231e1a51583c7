"""The committed mutation-score record (scripts/mutation_score.py) and the page's reader of it.

CI checks that the record is consistent (counts add up, the score follows from them, every
survivor is triaged), not that its numbers are current.
"""

import hashlib
import json
from pathlib import Path

import pytest

from dltheory import calibration

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "book" / "records" / "mutation_score.json"


def _record(src_bytes: bytes) -> dict:
    return {
        "schema": 1, "tool": "mutmut 3.8.1", "wall_s": 12.3, "scope": "unit tests only",
        "score": "detected / (detected + survived + no tests)",
        "modules": {"m": {
            "path": "src/m.py", "tests": ["tests/test_m.py"], "deselected": [],
            "commit": "0123456789abcdef", "source_sha256": hashlib.sha256(src_bytes).hexdigest(),
            "mutants_generated": 10, "mutants_sampled": 4,
            "counts": {"killed": 2, "timeout": 0, "survived": 1, "no tests": 1},
            "score": 0.5, "survivor_triage": {"equivalent": 1, "caught by nothing": 1},
            "survivors": [
                {"file": "src/m.py", "line": 3, "status": "survived", "mutation": "- a => + b",
                 "triage": "equivalent: same value"},
                {"file": "src/m.py", "line": 5, "status": "no tests", "mutation": "- c => + d",
                 "triage": "caught by nothing: no test calls it"}]}}}


def test_tables_from_a_record(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_bytes(b"x = 1\n")
    (tmp_path / "rec.json").write_text(json.dumps(_record(b"x = 1\n")))
    lines, modules, survivors = calibration.mutation_tables(tmp_path / "rec.json", tmp_path)
    row = modules.iloc[0]
    assert (row.status, row.mutants, row.killed, row["no tests"], row.score) == (
        "current", "4 of 10 (sample)", 2, 1, "50.0%")
    assert list(survivors["file:line"]) == ["m.py:3", "m.py:5"]
    assert "mutmut 3.8.1 at commit 0123456" in lines[0] and "unit tests only" in lines[1]
    (tmp_path / "src" / "m.py").write_bytes(b"x = 2\n")   # the source changed since
    assert calibration.mutation_tables(tmp_path / "rec.json", tmp_path)[1].status[0] == "stale"


def test_no_record_says_so(tmp_path):
    lines, modules, survivors = calibration.mutation_tables(tmp_path / "none.json", tmp_path)
    assert "no mutation record" in lines[0] and modules.empty and survivors.empty


def test_committed_record_is_consistent():
    data = json.loads(RECORD.read_text())
    assert data["modules"]
    for name, m in data["modules"].items():
        c = m["counts"]
        assert sum(c.values()) == m["mutants_sampled"] <= m["mutants_generated"], name
        detected = c["killed"] + c["timeout"]
        assert m["score"] == pytest.approx(detected / (detected + c["survived"] + c["no tests"]))
        assert len(m["survivors"]) == c["survived"] + c["no tests"], name
        for s in m["survivors"]:
            assert s["triage"].startswith(("equivalent: ", "caught by nothing: ")), s
            assert s["file"] == m["path"] and s["line"] >= 1
        assert m["survivor_triage"]["untriaged"] == 0
    lines, modules, _ = calibration.mutation_tables(RECORD, ROOT)
    assert list(modules.module) == list(data["modules"])


def test_committed_triage_reproduces_the_record(capsys):
    """scripts/mutation_triage.json, re-applied, gives every survivor the triage it has in the
    record, and none of its rules is stale (matches no survivor)."""
    import copy
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import mutation_score

    data = json.loads(RECORD.read_text())
    again = copy.deepcopy(data)
    triage = json.loads(mutation_score.TRIAGE.read_text())
    assert mutation_score.apply_triage(again, triage) == 0
    assert "matches no survivor" not in capsys.readouterr().out
    assert [s["triage"] for m in again["modules"].values() for s in m["survivors"]] == \
        [s["triage"] for m in data["modules"].values() for s in m["survivors"]]


def test_page_tables_are_narrow_and_keep_the_counts(tmp_path):
    """The page shows detected = killed + timeout (the score's numerator), drops 'no tests'
    only when every module has none, puts the tests in their own table and lets code wrap;
    the text, read without the zero-width spaces, is unchanged."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_bytes(b"x = 1\n")
    rec = _record(b"x = 1\n")
    rec["modules"]["m"]["counts"]["timeout"] = 1
    (tmp_path / "rec.json").write_text(json.dumps(rec))
    _, modules, survivors = calibration.mutation_tables(tmp_path / "rec.json", tmp_path)
    scores, tests, surv = calibration.mutation_page_tables(modules, survivors)
    assert scores.detected[0] == 3 and "killed" not in scores and "timeout" not in scores
    assert scores["no tests"][0] == 1 and "tests" not in scores     # one module had one
    assert list(tests.columns) == ["module", "tests"]
    def strip(s):
        return s.str.replace("\u200b", "")

    assert list(strip(surv.mutation)) == list(survivors.mutation)
    assert list(strip(tests.tests)) == list(modules.tests)
    modules.loc[:, "no tests"] = 0
    assert "no tests" not in calibration.mutation_page_tables(modules, survivors)[0]
    empty = calibration.mutation_tables(tmp_path / "none.json", tmp_path)
    assert all(t.empty for t in calibration.mutation_page_tables(empty[1], empty[2]))
