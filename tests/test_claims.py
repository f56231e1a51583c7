import json
import math

import numpy as np
import pytest

from dltheory import claims


def _ledger(tmp_path, scale="smoke"):
    return claims.Ledger("demo", scale=scale, results_dir=tmp_path)


def test_verdicts(tmp_path):
    led = _ledger(tmp_path)
    assert led.check("a", "abs tol", 1.05, 1.0, tol=0.1).verdict == claims.PASS
    assert led.check("b", "abs tol miss", 1.2, 1.0, tol=0.1).verdict == claims.FAIL
    assert led.check("c", "soft miss", 1.2, 1.0, tol=0.1, kind="soft").verdict == claims.NOT_REPRODUCED
    assert led.check("d", "rel tol", 105.0, 100.0, rtol=0.06).verdict == claims.PASS
    assert led.check("e", "interval", 1.9, lo=1.8, hi=2.2).verdict == claims.PASS
    assert led.check("f", "lower bound", 1e-4, lo=1e-3).verdict == claims.FAIL
    assert led.check("g", "numpy scalar", np.float64(0.5), hi=1).verdict == claims.PASS
    assert led.inconclusive("h", "too small to tell", 0.3, note="smoke").verdict == claims.INCONCLUSIVE
    assert [c.id for c in led.failed] == ["b", "f"]


def test_boundaries_are_inclusive(tmp_path):
    led = _ledger(tmp_path)
    assert led.check("lo", "at lo", 1.8, lo=1.8, hi=2.2).verdict == claims.PASS
    assert led.check("tol", "at tol", 1.5, 1.0, tol=0.5).verdict == claims.PASS


def test_nonfinite_rejected_unless_marked(tmp_path):
    led = _ledger(tmp_path)
    with pytest.raises(ValueError, match="allow_nonfinite"):
        led.check("x", "nan", float("nan"), 1.0, tol=0.1)
    assert led.check("y", "nan hard", math.inf, 1.0, tol=0.1,
                     allow_nonfinite=True).verdict == claims.FAIL
    assert led.check("z", "nan soft", math.nan, 1.0, tol=0.1, kind="soft",
                     allow_nonfinite=True).verdict == claims.INCONCLUSIVE


def test_bad_specifications(tmp_path):
    led = _ledger(tmp_path)
    with pytest.raises(ValueError, match="predicted"):
        led.check("a", "tol without prediction", 1.0, tol=0.1)
    with pytest.raises(ValueError, match="tol or rtol"):
        led.check("b", "prediction without tol", 1.0, 1.0)
    with pytest.raises(ValueError, match="interval"):
        led.check("c", "nothing to compare", 1.0)
    with pytest.raises(ValueError, match="kind"):
        led.check("d", "bad kind", 1.0, lo=0, kind="medium")
    with pytest.raises(TypeError):
        led.check("e", "array", np.ones(3), lo=0)
    led.check("f", "once", 1.0, lo=0)
    with pytest.raises(ValueError, match="twice"):
        led.check("f", "twice", 1.0, lo=0)
    with pytest.raises(ValueError, match="scale"):
        claims.Ledger("demo", scale="huge")


def test_report_writes_json_and_raises_on_hard_failure(tmp_path, capsys):
    led = _ledger(tmp_path)
    led.check("ok", "passes", 2.0, 2.0, tol=0.1)
    led.check("soft", "soft miss", 3.0, 2.0, tol=0.1, kind="soft")
    df = led.report()
    assert list(df["verdict"]) == [claims.PASS, claims.NOT_REPRODUCED]
    data = json.loads((tmp_path / "demo.smoke.json").read_text())
    assert data["chapter"] == "demo" and data["scale"] == "smoke"
    assert {"wall_s", "versions", "device"} <= set(data)
    assert [c["id"] for c in data["claims"]] == ["ok", "soft"]
    led.check("bad", "hard miss", 5.0, 2.0, tol=0.1)
    with pytest.raises(claims.ClaimFailed, match="bad"):
        led.report()
    # the JSON is written before raising, so the reproduction page shows the failure
    data = json.loads((tmp_path / "demo.smoke.json").read_text())
    assert data["claims"][-1]["verdict"] == claims.FAIL


def test_collect_marks_missing_chapters_not_run(tmp_path):
    led = claims.Ledger("alpha", scale="smoke", results_dir=tmp_path)
    led.check("A.1", "x", 1.0, lo=0)
    led.write()
    other = claims.Ledger("beta", scale="standard", results_dir=tmp_path)
    other.check("B.1", "x", 1.0, lo=0)
    other.write()
    results = claims.load_results(tmp_path)
    summary, table = claims.collect(results, ["alpha", "beta"], "smoke")
    status = dict(zip(summary["chapter"], summary["status"], strict=True))
    assert status == {"alpha": "ran", "beta": "not run"}
    assert list(table["id"]) == ["A.1"]


def test_expected_chapters_from_toc(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nparts:\n- chapters:\n"
                   "  - file: book/00_gradient_flow\n  - file: book/reproduction\n"
                   "  - file: book/03_sparse_scaling\n")
    assert claims.expected_chapters(toc) == ["gradient_flow", "sparse_scaling"]
