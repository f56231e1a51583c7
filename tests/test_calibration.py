"""The calibration tool (scripts/calibrate.py), its committed files and the error registry.

CI checks the schema of every committed ``book/calibration/*.json``, not its numbers.
"""

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.stats import binomtest

from dltheory import calibration, ledgers, mutations

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import calibrate  # noqa: E402

COMMITTED = sorted((ROOT / "book" / "calibration").glob("*.json"))


# --------------------------------------------------------------------------- committed files
@pytest.mark.parametrize("path", COMMITTED, ids=[p.name for p in COMMITTED])
def test_committed_calibration_schema(path):
    data = json.loads(path.read_text())
    assert calibration.validate(data) == []
    assert path.name == f"{data['chapter']}.{data['scale']}.json"
    assert data["chapter"] in ledgers.expected_chapters()
    # (a file may name entries since removed from the registry: the page shows it stale)
    assert all(r["mutation"] == "" or r["mutation"].startswith(data["chapter"] + ":")
               for r in data["runs"])


def test_page_reads_every_chapter(tmp_path):
    (tmp_path / "gradient_flow.smoke.json").write_text("{not json")
    summary, _, _ = calibration.page_tables(tmp_path, ["gradient_flow", "sparse_scaling"])
    assert list(summary.status) == ["error", "not calibrated yet"]


def test_validate_names_problems():
    assert calibration.validate([]) == ["not a JSON object"]
    good = {"chapter": "x", "scale": "smoke", "provenance": {"source_sha256": {}},
            "runs": [{"setting": {}, "seed": 0, "mutation": "", "verdicts": {"A": "FAIL"},
                      "wall_s": 1.0, "cpu_s": 1.0, "error": None}],
            "claims": {"A": {"kind": "hard", "runs": 1, "false_fail": 1,
                             "false_fail_upper95": 1.0, "caught_by": []}}}
    assert calibration.validate(good) == []
    bad = json.loads(json.dumps(good))
    bad["claims"]["A"].update(false_fail=2, caught_by=["gradient_flow:q_sign"])
    probs = calibration.validate(bad)
    assert any("false_fail" in p for p in probs) and any("caught_by" in p for p in probs)


# --------------------------------------------------------------------------- statistics
@pytest.mark.parametrize("x, n", [(0, 1), (0, 30), (1, 30), (3, 40), (0, 300), (7, 9)])
def test_clopper_pearson_matches_scipy(x, n):
    # the one-sided 95% upper bound is the upper end of the two-sided exact 90% interval
    want = binomtest(x, n).proportion_ci(confidence_level=0.90, method="exact").high
    assert calibration.clopper_pearson_upper(x, n) == pytest.approx(want, rel=1e-9)
    if x == 0:
        assert calibration.clopper_pearson_upper(0, n) == pytest.approx(1 - 0.05 ** (1 / n))


def test_clopper_pearson_edges():
    assert calibration.clopper_pearson_upper(5, 5) == 1.0
    assert calibration.clopper_pearson_upper(0, 0) is None


def test_summarise_counts_false_fails_and_flips():
    def run(mutation, verdicts, seed=0, setting=None):
        return {"setting": setting or {}, "seed": seed, "mutation": mutation, "verdicts": verdicts}

    runs = [run("", {"A": "PASS", "B": "FAIL"}), run("", {"A": "FAIL", "B": "PASS"}, seed=1),
            run("", {"A": "PASS", "B": "PASS"}, setting={"K": 2}),
            run("m1", {"A": "FAIL", "B": "FAIL"}), run("m2", {"A": "PASS", "B": "PASS"})]
    out = calibration.summarise(runs, {"A": "hard", "B": "identity"}, {"A": [0.1, 0.3]})
    assert out["A"]["runs"] == 3 and out["A"]["false_fail"] == 1
    assert out["A"]["caught_by"] == ["m1"]
    assert out["B"]["caught_by"] == []          # B already FAILed unmutated at seed 0
    assert out["A"]["median_resolution"] == pytest.approx(0.2)
    assert runs[4]["flipped"] == []


# --------------------------------------------------------------------------- settings
def test_settings_start_with_corners_and_list_refusals():
    from dltheory.sparse_scaling import config

    drawn = calibrate.draw_settings(config, 12, "smoke")
    assert len(drawn["settings"]) == 12
    corners = [p for w, p, _, _ in config.Config.box("smoke") if w == "corner"]
    ok = [c for c in corners if config.Config.is_valid(c, "smoke")[0]]
    assert drawn["settings"][: len(ok)] == ok and drawn["corners"] == len(ok)
    refused = [i["setting"] for i in drawn["invalid"]]
    assert {"ALPHA1": 0.25, "ALPHA2": -4.0} in refused    # alpha2 < -alpha1


def test_plan_gives_each_setting_its_own_seed():
    tasks, drawn = calibrate.plan("gradient_flow", "00", 3, 5, ["gradient_flow:q_sign"], "smoke")
    plain = [t for t in tasks if not t["mutation"]]
    assert [t["seed"] for t in plain[:3]] == [0, 1, 2]
    assert len({t["seed"] for t in plain}) == len(plain) == 8
    assert drawn["corners"] == 4 and drawn["edges"] == 1
    assert [t["mutation"] for t in tasks if t["mutation"]] == ["gradient_flow:q_sign"]


# --------------------------------------------------------------------------- registry
ALL = [m for c in mutations.CHAPTERS for m in mutations.registry(c)]


def test_registry_sizes():
    for chapter in mutations.CHAPTERS:
        assert len(mutations.registry(chapter)) >= (3 if chapter == "gradient_flow" else 6)


def _aliases(obj):
    return sorted((name, attr) for name, mod in list(sys.modules.items())
                  if name.startswith("dltheory") and mod is not None
                  for attr, value in list(vars(mod).items()) if value is obj)


@pytest.mark.parametrize("m", ALL, ids=[m.id for m in ALL])
def test_entry_target_exists_and_apply_undoes(m):
    owner, attr, original = mutations.resolve(m.target)
    before = _aliases(original)
    with mutations.apply(m):
        patched = mutations.resolve(m.target)[2]
        assert patched is not original
        if not isinstance(owner, type):      # every alias re-bound to the mutant
            assert _aliases(original) == [] and _aliases(patched) == before
    assert mutations.resolve(m.target)[2] is original
    assert _aliases(original) == before


def test_unknown_id_lists_valid_ones():
    with pytest.raises(ValueError, match="gradient_flow:q_sign"):
        mutations.get("gradient_flow:no_such_error")


def test_activate_from_env_once_and_deactivate():
    from dltheory import gradient_flow as gf

    original = gf.q
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            m = mutations.activate_from_env({mutations.ENV: "gradient_flow:q_sign"})
            mutations.activate_from_env({mutations.ENV: "gradient_flow:q_sign"})
        assert gf.q is not original and mutations.active() == [m.id]
        assert out.getvalue() == f"[mutation] {m.id}: {m.description}\n"
    finally:
        mutations.deactivate()
    assert gf.q is original and mutations.active() == []
    assert mutations.activate_from_env({}) is None


def test_core_imports_no_chapter():
    code = ("import sys, dltheory.mutations as m; m.REGISTRY; "
            "print(sorted(k for k in sys.modules if k.startswith(('torch', 'dltheory.conservation'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_mutations_without_a_default_run_are_refused(capsys):
    """With --seeds 0 no unmutated run exists to compare with: every entry would read
    'caught by nothing'. The script stops before running anything."""
    with pytest.raises(SystemExit) as e:
        calibrate.main(["gradient_flow", "--seeds", "0", "--mutations"])
    assert e.value.code == 2 and "--seeds >= 1" in capsys.readouterr().err


# --------------------------------------------------------------------------- end to end
def test_calibrate_prologue_end_to_end(tmp_path, monkeypatch):
    """One unmutated run and one planted error, through the engine (cache off)."""
    monkeypatch.setenv("DLTHEORY_CACHE", "0")
    rc = calibrate.main(["gradient_flow", "--seeds", "1", "--mutation", "gradient_flow:q_sign",
                         "--out", str(tmp_path)])
    assert rc == 0
    data = json.loads((tmp_path / "gradient_flow.smoke.json").read_text())
    assert calibration.validate(data) == []
    assert [r["mutation"] for r in data["runs"]] == ["", "gradient_flow:q_sign"]
    assert all(r["error"] is None and r["verdicts"] for r in data["runs"])
    assert data["claims"]["GF.identity"]["kind"] == "identity"
