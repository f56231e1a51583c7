import json
import math

import numpy as np
import pytest

from dltheory import claims, ledgers


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
    assert led.check("tol", "at tol", 10.5, 10.0, tol=0.5).verdict == claims.PASS


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
    assert led.report() is None          # shown once: nothing for the notebook to echo
    assert list(led.table()["verdict"]) == [claims.PASS, claims.NOT_REPRODUCED]
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
    results = ledgers.load_results(tmp_path)
    summary, table = ledgers.collect(results, ["alpha", "beta"], "smoke")
    status = dict(zip(summary["chapter"], summary["status"], strict=True))
    assert status == {"alpha": "ran", "beta": "not run"}
    assert list(table["id"]) == ["A.1"]


def test_expected_chapters_from_toc(tmp_path):
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nparts:\n- chapters:\n"
                   "  - file: book/00_gradient_flow\n  - file: book/reproduction\n"
                   "  - file: book/03_sparse_scaling\n")
    assert ledgers.expected_chapters(toc) == ["gradient_flow", "sparse_scaling"]


# ------------------------------------------------------------------ version 2: kinds etc.
def test_identity_kind_is_shown_not_counted(tmp_path):
    led = _ledger(tmp_path)
    led.check("ev", "evidence", 2.0, 2.0, tol=0.1)
    ident = led.check("id", "bookkeeping", 1e-15, 0.0, tol=1e-12, kind="identity")
    assert ident.verdict == claims.PASS and ident.resolution is None
    line = led.summary()
    assert "1 evidence claims (1 PASS)" in line and "1 identities" in line
    bad = led.check("id2", "broken bookkeeping", 1e-3, 0.0, tol=1e-12, kind="identity")
    assert bad.verdict == claims.FAIL          # a failing identity is a bug: it raises
    with pytest.raises(claims.ClaimFailed, match="id2"):
        led.report(show=False)


def test_resolution_is_the_smallest_detected_relative_error(tmp_path):
    led = _ledger(tmp_path)
    c = led.check("a", "x", 2.05, 2.0, tol=0.1)
    assert c.resolution == pytest.approx((0.1 + 0.05) / 2.0)
    # the definition: a prediction off by more than the resolution, either sign, FAILs
    for sign in (+1, -1):
        wrong = 2.0 * (1 + sign * (c.resolution + 1e-9))
        assert led.check(f"w{sign}", "x", 2.05, wrong, tol=0.1).verdict == claims.FAIL
    r = led.check("b", "relative", 10.0, 10.0, rtol=0.3)
    assert r.resolution == pytest.approx(0.3) and r.weak
    assert led.check("c", "interval around p", 1.0, 1.0, lo=0.9, hi=1.2).resolution == \
        pytest.approx(0.2)
    assert led.check("d", "one-sided", 1.0, 1.0, lo=0.5).resolution == float("inf")
    assert led.check("e", "no prediction", 1.0, lo=0.5).resolution is None
    assert led.check("f", "zero prediction", 0.01, 0.0, tol=0.1).resolution is None
    data = json.loads(led.write().read_text())
    assert data["claims"][0]["resolution"] == pytest.approx(0.075)


@pytest.mark.parametrize("bad", [{"tol": math.nan}, {"rtol": math.inf}, {"lo": math.nan},
                                 {"predicted": math.nan, "tol": 0.1}])
def test_nonfinite_tolerance_is_an_error_not_a_fail(tmp_path, bad):
    led = _ledger(tmp_path)
    kw = {"predicted": 1.0, **bad} if "predicted" not in bad else bad
    if "lo" in bad:
        kw.pop("predicted")
    with pytest.raises(ValueError, match="must be finite"):
        led.check("x", "nan tolerance", 1.0, **kw)


def test_unwritable_results_dir_fails_at_creation(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match="not writable"):
        claims.Ledger("demo", scale="smoke", results_dir=blocker / "claims")


def test_ledger_json_has_provenance(tmp_path):
    led = _ledger(tmp_path)
    led.check("a", "x", 1.0, lo=0)
    data = json.loads(led.write().read_text())
    prov = data["provenance"]
    assert set(prov) == {"commit", "dirty", "package_version", "source_sha256", "created",
                         "device", "scale"}
    assert set(prov["source_sha256"]) == {"chapter", "package"}
    assert len(prov["source_sha256"]["package"]) == 64 and prov["scale"] == "smoke"
    assert {c["kind"] for c in data["claims"]} <= set(claims.KINDS)


def test_style_table_colours_verdicts(tmp_path):
    led = _ledger(tmp_path)
    led.check("p", "x", 1.0, lo=0)
    led.check("f", "x", -1.0, lo=0, kind="soft")
    html = claims.style_table(led.table()).to_html()
    assert "#1a7f37" in html and "#bc4c00" in html and "white-space: normal" in html


# ------------------------------------------------------------------ version 3
def test_derivation_is_shown_raises_and_is_not_evidence(tmp_path):
    led = _ledger(tmp_path)
    led.check("ev", "evidence", 2.0, 2.0, tol=0.1)
    d = led.check("sum", "exact sum vs its asymptotic form", 1.001, 1.0, rtol=0.01,
                  kind="derivation")
    assert d.verdict == claims.PASS and d.resolution is None and not d.weak
    line = led.summary()
    assert "1 evidence claims (1 PASS)" in line and "0 identities, 1 derivations" in line
    led.check("sum2", "broken asymptotics", 2.0, 1.0, rtol=0.01, kind="derivation")
    assert "1 evidence claims" in led.summary() and "2 derivations (1 FAILED)" in led.summary()
    with pytest.raises(claims.ClaimFailed, match="sum2"):
        led.report(show=False)


def test_soft_pass_blind_to_its_own_size_is_inconclusive(tmp_path):
    led = _ledger(tmp_path)
    c = led.check("s", "loose soft", 1.0, 1.0, rtol=1.5, kind="soft")
    assert c.verdict == claims.INCONCLUSIVE and c.resolution == pytest.approx(1.5)
    assert "resolution 150% > 100%: cannot detect an error of the prediction's own size" \
        in c.note
    one_sided = led.check("s1", "one-sided soft", 2.0, 1.0, lo=0.5, kind="soft")
    assert one_sided.verdict == claims.INCONCLUSIVE and "unbounded" in one_sided.note
    # a miss is a finding whatever the resolution: it stays NOT REPRODUCED
    assert led.check("s2", "far miss", 5.0, 1.0, tol=0.1, kind="soft").verdict == \
        claims.NOT_REPRODUCED
    h = led.check("h", "loose hard", 1.0, 1.0, rtol=1.5)
    assert h.verdict == claims.WEAK and h.weak           # hard: too weak to pass (rule 4)
    assert led.check("s3", "tight soft", 1.0, 1.0, rtol=0.2, kind="soft").verdict == \
        claims.PASS


def test_inconclusive_hard_claims_and_rounds(tmp_path):
    led = _ledger(tmp_path)
    h = led.inconclusive("h", "hard, unpowered here", 0.3, kind="hard", note="needs 8 seeds")
    assert h.verdict == claims.INCONCLUSIVE and h.kind == "hard" and h.note == "needs 8 seeds"
    with pytest.raises(ValueError, match="only evidence"):
        led.inconclusive("i", "an identity cannot be unresolved", note="x", kind="identity")
    with pytest.raises(ValueError, match="reason"):
        led.inconclusive("e", "no reason", note=" ")
    short = led.check("r", "budgeted", 9.0, 1.0, tol=0.1, rounds=(3, 5))   # would FAIL
    assert short.verdict == claims.INCONCLUSIVE and short.note == "had 3 of 5 rounds"
    assert short.tolerance == "|m - 1| <= 0.1" and short.resolution is None
    assert led.check("r0", "no round done", None, 1.0, tol=0.1, rounds=(0, 5)).verdict == \
        claims.INCONCLUSIVE
    assert led.check("rn", "nan while short", math.nan, 1.0, tol=0.1, rounds=(1, 2),
                     kind="soft").verdict == claims.INCONCLUSIVE
    assert led.check("rf", "all rounds", 9.0, 1.0, tol=0.1, rounds=(5, 5)).verdict == \
        claims.FAIL
    assert led.check("np", "numpy counts", 1.0, 1.0, tol=0.1,
                     rounds=(np.int64(2), np.int64(4))).check.rounds == (2, 4)
    for bad in [(5,), (-1, 5), (1, 0), (1.5, 2), (True, 2), ("a", 2)]:
        with pytest.raises((ValueError, TypeError), match="rounds"):
            led.check(f"bad{bad}", "bad rounds", 1.0, 1.0, tol=0.1, rounds=bad)
    with pytest.raises(ValueError, match="only evidence"):
        led.check("ri", "identity with rounds", 0.0, 0.0, tol=1e-9, kind="identity",
                  rounds=(1, 2))
    with pytest.raises(ValueError, match="measured"):
        led.check("none", "no measurement, full rounds", None, 1.0, tol=0.1)
    assert [c.id for c in led.failed] == ["rf"]      # INCONCLUSIVE hard claims never raise


def test_schema4_json_stores_checks_that_rederive(tmp_path):
    led = _ledger(tmp_path)
    led.check("a", "tol", 1.05, 1.0, tol=0.1, rtol=0.01)
    led.check("b", "interval", 1.9, 2.0, lo=1.8, hi=2.2, kind="soft")
    led.check("c", "short", 1.0, 1.0, tol=0.1, rounds=(1, 3))
    led.inconclusive("d", "declared", kind="hard", note="why not", predicted=2.0)
    led.check("e", "identity", 0.0, 0.0, tol=1e-12, kind="identity")
    data = json.loads(led.write().read_text())
    assert data["schema"] == claims.SCHEMA == 4 and "budget" in data
    assert data["claims"][0]["check"] == {"predicted": 1.0, "tol": 0.1, "rtol": 0.01,
                                          "lo": None, "hi": None, "rounds": None,
                                          "reason": None, "max_resolution": 0.2,
                                          "detected": None, "detection": None,
                                          "guard": False}
    assert data["claims"][1]["check"]["max_resolution"] is None      # soft: no power rule
    assert data["claims"][2]["check"]["rounds"] == [1, 3]
    assert data["claims"][3]["check"]["reason"] == "why not"
    for c, claim in zip(data["claims"], led.claims.values(), strict=True):
        j = claims.judge(c["kind"], c["measured"], claims.Check.from_dict(c["check"]))
        assert (j.verdict, j.resolution, j.tolerance) == \
            (claim.verdict, claim.resolution, claim.tolerance)
    with pytest.raises(TypeError, match="unknown check parameters"):
        claims.Check.from_dict({"predicted": 1.0, "sigma": 2})
    with pytest.raises(ValueError, match="kind"):
        claims.judge("medium", 1.0, claims.Check(lo=0.0))


def test_repr_is_one_line(tmp_path):
    c = _ledger(tmp_path).check("a", "x", 1.0, 1.0, tol=0.1, note="two\nlines")
    assert "\n" not in repr(c) and repr(c).startswith("a [hard]: PASS (measured 1")


# ------------------------------------------------------------------ version 4: ledger rules
from types import SimpleNamespace  # noqa: E402

DEFAULTS = {"scale": "smoke", "defaults": True, "mutation": None, "budget": None}


def _ruled(tmp_path, rules=None, identity=DEFAULTS, **kw):
    return claims.Ledger("demo", scale="smoke", results_dir=tmp_path, identity=identity,
                         rules=rules, **kw)


def test_echo_prints_one_line_per_claim_with_reason(tmp_path, capsys):
    led = _ruled(tmp_path, echo=True)
    led.check("a", "passes", 2.01, 2.0, tol=0.1)
    led.inconclusive("b", "unpowered", kind="hard", note="needs 8 seeds, smoke has 2")
    led.check("c", "budgeted", 9.0, 1.0, tol=0.1, rounds=(1, 4))
    led.check("d", "loose", 1.0, 1.0, rtol=0.5)
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and out[0] == repr(led.claims["a"])
    assert out[0].startswith("a [hard]: PASS (measured 2.01, required |m - 2| <= 0.1, resolves")
    assert out[1].endswith("- needs 8 seeds, smoke has 2") and "Claims table" not in out[1]
    assert out[2].endswith("- had 1 of 4 rounds")
    assert out[3].startswith("d [hard]: WEAK") and "resolves 50% > max 20%" in out[3]
    quiet = _ruled(tmp_path / "q")
    quiet.check("a", "passes", 2.01, 2.0, tol=0.1)
    assert capsys.readouterr().out == ""


def test_identity_is_written_and_skip_records_inconclusive(tmp_path):
    led = _ruled(tmp_path, identity={**DEFAULTS, "knobs": {"SEED": 0}})
    got = led.skip(["x", ("y", "y's statement")], "the budget left this sweep out")
    assert [c.verdict for c in got] == [claims.INCONCLUSIVE] * 2
    assert led.claims["y"].statement == "y's statement" and led.claims["x"].kind == "hard"
    assert led.claims["x"].reason == "the budget left this sweep out"
    data = json.loads(led.write().read_text())
    assert data["identity"]["knobs"] == {"SEED": 0} and data["decides"] == []
    with pytest.raises(TypeError, match="identity"):
        claims.Ledger("demo", scale="smoke", results_dir=tmp_path, identity=["defaults"])


def test_kinds_are_fixed_before_the_run(tmp_path):
    rules = SimpleNamespace(KINDS={"h": "hard", "s": "soft", "g": "identity"})
    led = _ruled(tmp_path, rules)
    with pytest.raises(ValueError, match="declared 'hard'.*recorded as 'soft'"):
        led.check("h", "relabelled", 1.0, 1.0, tol=0.1, kind="soft")
    # outside its regime a hard claim is a hard INCONCLUSIVE, never a soft one
    with pytest.raises(ValueError, match="declared 'hard'"):
        led.inconclusive("h", "out of regime", note="beta > 1")   # default kind soft
    assert led.inconclusive("h", "out of regime", note="beta > 1", kind="hard").kind == "hard"
    assert led.skip(["s"], "not run")[0].kind == "soft"          # skip takes the declared kind
    led.guard("g", "sets disjoint", True, "0 shared")
    led.check("new", "not declared yet", 1.0, lo=0)
    assert led.undeclared() == ["new"]
    with pytest.raises(ValueError, match="unknown kinds"):
        _ruled(tmp_path, SimpleNamespace(KINDS={"h": "evidence"}))


def test_decidability_is_pre_registered_at_the_defaults(tmp_path):
    rules = SimpleNamespace(KINDS={"a": "hard", "b": "hard", "c": "soft"},
                            DECIDES={"smoke": ("a", "b"), "paper": ("c",)})
    led = _ruled(tmp_path, rules)
    led.check("a", "decided", 1.0, 1.0, tol=0.1)
    led.inconclusive("b", "gate closed", kind="hard", note="only 3 of 16 pairs reach progress")
    with pytest.raises(claims.Undecided, match="b INCONCLUSIVE at the defaults.*3 of 16 pairs"):
        led.report(show=False)
    assert json.loads(led.path().read_text())["decides"] == ["a", "b"]   # written first
    missing = _ruled(tmp_path / "m", rules)
    missing.check("a", "decided", 1.0, 1.0, tol=0.1)
    with pytest.raises(claims.Undecided, match="b INCONCLUSIVE.*never recorded"):
        missing.report(show=False)
    # off the defaults, mutated or under a budget it is reported, not enforced
    for identity in ({**DEFAULTS, "defaults": False}, {**DEFAULTS, "mutation": "demo:x"},
                     {**DEFAULTS, "budget": 60.0}, None):
        off = _ruled(tmp_path / "off", rules, identity=identity)
        off.check("a", "decided", 1.0, 1.0, tol=0.1)
        off.inconclusive("b", "gate closed", kind="hard", note="closed")
        assert off.undecided() == [("b", "closed")]
        off.report(show=False)
    with pytest.raises(ValueError, match="not hard"):
        _ruled(tmp_path, SimpleNamespace(KINDS={"c": "soft"}, DECIDES={"smoke": ("c",)}))
    both = _ruled(tmp_path / "b", rules)
    both.check("a", "fails", 2.0, 1.0, tol=0.1)
    with pytest.raises(claims.ClaimFailed, match="a FAIL.*b INCONCLUSIVE") as err:
        both.report(show=False)
    assert type(err.value) is claims.ClaimFailed


def test_power_is_part_of_the_verdict(tmp_path):
    rules = SimpleNamespace(MAX_RESOLUTION={"wide": (0.5, "10 seeds at smoke: se 20%")})
    led = _ruled(tmp_path, rules)
    # an sd used for an se: the band widens and the check can no longer fail
    tight = led.check("tight", "se band", 1.02, 1.0, tol=0.025)
    loose = led.check("loose", "sd band", 1.02, 1.0, tol=0.025 * 20)
    assert tight.verdict == claims.PASS and loose.verdict == claims.WEAK
    assert led.check("wide", "allowed wider", 1.0, 1.0, tol=0.4).verdict == claims.PASS
    assert led.check("soft", "soft as before", 1.0, 1.0, tol=0.5,
                     kind="soft").verdict == claims.PASS
    assert led.check("miss", "a miss stays FAIL", 3.0, 1.0, tol=0.5).verdict == claims.FAIL
    with pytest.raises(claims.ClaimFailed, match="loose WEAK: resolves 52% > max 20%"):
        led.report(show=False)
    # the stored check carries the maximum: the verdict re-derives from the JSON alone
    data = json.loads(led.path().read_text())
    for c in data["claims"]:
        j = claims.judge(c["kind"], c["measured"], claims.Check.from_dict(c["check"]))
        assert j.verdict == c["verdict"]
    # a schema-3 check (no maximum) re-derives as it was written then
    old = {k: v for k, v in data["claims"][1]["check"].items()
           if k in ("predicted", "tol", "rtol", "lo", "hi", "rounds", "reason")}
    assert claims.judge("hard", 1.02, claims.Check.from_dict(old)).verdict == claims.PASS
    with pytest.raises(ValueError, match="MAX_RESOLUTION"):
        _ruled(tmp_path, SimpleNamespace(MAX_RESOLUTION={"x": 0.5}))


def test_absence_of_contradiction_must_detect_its_effect(tmp_path):
    rules = SimpleNamespace(DECIDES={"smoke": ("agrees",)})
    led = _ruled(tmp_path, rules)
    # "the simulation does not contradict the theory's best lambda": passes under any loss
    # of power unless the run also shows it detects the effect the theory predicts
    c = led.check("agrees", "sim agrees", 0.1, lo=-1.0, hi=1.0,
                  detects=(False, "oracle lambda within 0.4 se of 0"))
    assert c.verdict == claims.INCONCLUSIVE
    assert c.reason == "expected effect not detected: oracle lambda within 0.4 se of 0"
    with pytest.raises(claims.Undecided, match="agrees"):
        led.report(show=False)
    ok = _ruled(tmp_path / "ok", rules)
    assert ok.check("agrees", "sim agrees", 0.1, lo=-1.0, hi=1.0,
                    detects=(np.bool_(True), "oracle lambda 6 se from 0")).verdict == claims.PASS
    ok.report(show=False)
    # a contradiction is a finding whatever the detection
    assert ok.check("x", "contradicted", 5.0, lo=-1.0, hi=1.0,
                    detects=(False, "none")).verdict == claims.FAIL
    with pytest.raises(ValueError, match="detects"):
        ok.check("y", "bad", 0.0, lo=-1.0, detects=(1, "why"))
    with pytest.raises(ValueError, match="only evidence"):
        ok.check("z", "identity", 0.0, lo=-1.0, kind="identity", detects=(True, "why"))


def test_guards_record_identities_and_a_failing_one_raises(tmp_path):
    led = _ruled(tmp_path)
    sel, held = np.arange(0, 50), np.arange(50, 100)
    g = led.guard("split.disjoint", "selection and held-out index sets are disjoint",
                  len(np.intersect1d(sel, held)) == 0, "0 shared of 50 + 50")
    assert (g.kind, g.verdict, g.tolerance) == ("identity", claims.PASS, "holds")
    assert repr(g) == ("split.disjoint [identity]: PASS (holds: 0 shared of 50 + 50)")
    led.report(show=False)
    same = np.arange(0, 50)      # the planted degenerate split: held-out is the selection half
    bad = led.guard("split.disjoint2", "selection and held-out index sets are disjoint",
                    len(np.intersect1d(sel, same)) == 0, "50 shared of 50 + 50")
    assert bad.verdict == claims.FAIL and "does not hold" in bad.reason
    with pytest.raises(claims.ClaimFailed, match="split.disjoint2 FAIL"):
        led.report(show=False)
    with pytest.raises(ValueError, match="bool"):
        led.guard("g", "x", 1.0, "")
    data = json.loads(led.path().read_text())
    assert data["claims"][0]["check"]["guard"] is True


def test_findings_are_generated_from_the_verdicts(tmp_path):
    def run(predicted):
        led = _ruled(tmp_path, identity={**DEFAULTS, "knobs": {}})
        led.check("SS.alpha_N", "the exponent is $\\alpha_1 + \\alpha_2 + 1$", 2.03,
                  predicted, tol=0.1, kind="soft")
        led.inconclusive("SS.joint", "joint law", kind="hard", note="needs 8 seeds")
        return led.findings_text(["SS.alpha_N", "SS.joint", "SS.absent"],
                                 paper="the exponent is the sum of the two plus one")
    right, planted = run(2.0), run(2.6)    # planted: a prediction 30% too high
    assert right != planted
    assert right.startswith("**The paper:** the exponent is the sum of the two plus one")
    assert "- **Reproduced** at `smoke`: the exponent is $\\alpha_1 + \\alpha_2 + 1$ " \
           "(`SS.alpha_N`, soft): measured 2.03 against the predicted 2" in right
    assert "**Not reproduced** at `smoke`" in planted and "predicted 2.6" in planted
    assert "Reproduced" not in planted.replace("Not reproduced", "")
    assert "- **Inconclusive** at `smoke`: joint law (`SS.joint`, hard): needs 8 seeds." \
        in right
    assert "- `SS.absent`: not recorded in this run." in right
    led = _ruled(tmp_path, identity={**DEFAULTS, "defaults": False, "knobs": {"ALPHA1": 2}})
    led.check("a", "x", 1.0, 1.0, rtol=0.5)
    text = led.findings("a")                 # outside a notebook: the Markdown text
    assert "off the defaults (ALPHA1=2)" in text and "**Not decided (the check is too " \
        "weak)**" in text and "above its maximum 20%" in text
    assert led.glue("k", ["a"]) == text      # nothing to glue outside a notebook


def test_text_table_wraps_to_the_width(tmp_path):
    led = _ruled(tmp_path)
    led.check("a.long_id", "a long statement " * 20, 1.0, 1.0, tol=0.1, note="note " * 40)
    led.inconclusive("b", "short", kind="hard", note="why " * 30)
    text = claims.text_table(led.table(), width=72)
    assert max(len(line) for line in text.splitlines()) <= 72
    assert text.splitlines()[0].startswith("a.long_id [hard] PASS: measured 1")
    assert "note: note" in text
    assert max(len(x) for x in claims.text_table(led.table(), width=200).splitlines()) > 72


def test_claims_table_html_is_typeset_by_mathjax(tmp_path):
    led = _ruled(tmp_path)
    led.check("a", "rank $D - \\operatorname{rank}(W)$", 1.0, lo=0)
    html_ = claims.style_table(led.table()).to_html()
    assert 'class="mathjax_process"' in html_ and "mathjax_ignore" not in html_
    assert "\\(D - \\operatorname{rank}(W)\\)" in html_
