"""Verdict-rule details of dltheory.claims that tests/test_claims.py leaves open (written
against the mutants that survived scripts/mutation_score.py).

Each test names the independent fact it checks: a JSON round trip (what the ledger stores
re-reads to the same check), a property of the rule (a one-sided interval cannot bound an
error; the tolerance does not depend on the power rule), or the stated meaning of a field
(an INCONCLUSIVE claim keeps what it measured, a skipped id is one claim)."""

import json
from dataclasses import asdict

import numpy as np
import pytest

from dltheory import claims


def _ledger(tmp_path, **kw):
    return claims.Ledger("demo", scale="smoke", results_dir=tmp_path, **kw)


@pytest.mark.parametrize("check", [
    claims.Check(predicted=2.0, tol=0.1, max_resolution=0.2, detected=True,
                 detection="the effect is 6 se from 0"),
    claims.Check(lo=1.0, guard=True),
    claims.Check(predicted=1.0, lo=0.5, hi=1.5, rounds=(2, 3)),
    claims.Check(reason="unpowered at smoke"),
])
def test_check_survives_the_json_round_trip(check):
    """The reproduction page re-derives verdicts from the checks a ledger stores: every
    field (detection, guard, rounds, reason) reads back from JSON to the same Check."""
    back = claims.Check.from_dict(json.loads(json.dumps(asdict(check))))
    assert back == check


def test_weak_keeps_the_tolerance_and_names_the_cap(tmp_path):
    """The tolerance a claim must meet does not depend on the power rule: a WEAK claim shows
    the same tolerance text as the same check without a cap; its note names the cap (20%)
    and its reason says the resolution is above it."""
    capped = claims.judge("hard", 1.1, claims.Check(predicted=1.0, tol=0.5, max_resolution=0.2))
    plain = claims.judge("hard", 1.1, claims.Check(predicted=1.0, tol=0.5))
    assert capped.verdict == claims.WEAK and plain.verdict == claims.PASS
    assert capped.tolerance == plain.tolerance != ""
    assert "max 20%" in capped.notes[0]
    c = _ledger(tmp_path).check("w", "a weak pass", 1.1, 1.0, tol=0.5)
    assert c.verdict == claims.WEAK and c.reason == "resolution above its max 20%"


def test_one_sided_interval_around_a_prediction_has_unbounded_resolution():
    """With a prediction and only an upper bound, nothing bounds an error below: the
    resolution is infinite, so a hard claim with a cap is WEAK; with both bounds the
    half-width is the far side's."""
    j = claims.judge("hard", 1.2, claims.Check(predicted=1.0, hi=1.5))
    assert j.verdict == claims.PASS and j.resolution == float("inf")
    j = claims.judge("hard", 1.2, claims.Check(predicted=1.0, hi=1.5, max_resolution=0.5))
    assert j.verdict == claims.WEAK
    j = claims.judge("hard", 1.0, claims.Check(predicted=1.0, lo=0.9, hi=1.5))
    assert j.resolution == pytest.approx(0.5)


def test_reasons_of_verdicts_that_are_not_a_pass(tmp_path):
    """Claim.reason: a short budgeted sweep says how many rounds it had; an INCONCLUSIVE
    claim without a check gives its note; a failing guard 'does not hold' (with its detail
    when there is one); a FAIL without a measurement says so, with its requirement."""
    led = _ledger(tmp_path)
    assert led.check("r", "budgeted", None, 1.0, tol=0.1, rounds=(1, 3)).reason \
        == "had 1 of 3 rounds"
    bare = claims.Claim("x", "s", "hard", None, None, "", claims.INCONCLUSIVE, note="too few seeds")
    assert bare.reason == "too few seeds"
    assert claims.Claim("y", "s", "hard", None, None, "", claims.INCONCLUSIVE).reason == "undecided"
    assert led.guard("g1", "disjoint", False).reason == "does not hold"
    assert led.guard("g2", "disjoint", False, "2 shared").reason == "does not hold: 2 shared"
    nm = claims.Claim("z", "s", "hard", None, None, ">= 1", claims.FAIL)
    assert nm.reason == "not measured, required >= 1"


def test_complex_measurement_is_not_a_real_number(tmp_path):
    """A measurement or check value must be a real scalar: a complex numpy scalar (even with
    zero imaginary part) is refused, as is a complex predicted value read from a check."""
    with pytest.raises(TypeError, match="real scalar"):
        _ledger(tmp_path).check("c", "complex", np.complex128(1 + 1j), lo=0.0)
    with pytest.raises(TypeError, match="real scalar"):
        claims.Check.from_dict({"predicted": np.complex128(1 + 0j), "tol": 0.1})


def test_zero_is_written_as_zero_in_a_tolerance():
    """An identity's tolerance around 0 reads '|m - 0| <= 1.000e-12': zero is written as
    '0', not in scientific notation."""
    j = claims.judge("identity", 0.0, claims.Check(predicted=0.0, tol=1e-12))
    assert j.tolerance == "|m - 0| <= 1.000e-12"


def test_inconclusive_keeps_what_was_measured_and_predicted(tmp_path):
    """An INCONCLUSIVE claim still shows its measurement and prediction (the table and the
    findings print them next to the reason)."""
    c = _ledger(tmp_path).inconclusive("i", "too small", 0.3, note="smoke", predicted=0.5)
    assert (c.verdict, c.measured, c.predicted) == (claims.INCONCLUSIVE, 0.3, 0.5)


def test_skip_takes_a_single_id(tmp_path):
    """skip('an.id', why) records that one claim (a string is one id, not its characters)."""
    out = _ledger(tmp_path).skip("DE.joint", "left out by the budget")
    assert [c.id for c in out] == ["DE.joint"]
    assert out[0].verdict == claims.INCONCLUSIVE and out[0].reason == "left out by the budget"


def test_ledger_json_rounds_wall_time_and_names_the_device(tmp_path):
    """The JSON ledger stores the wall time to the millisecond and the device the ledger
    ran on (default the CPU) in its provenance."""
    d = _ledger(tmp_path).to_dict(wall_s=12.34567)
    assert d["wall_s"] == 12.346
    assert d["device"] == d["provenance"]["device"] == "cpu"
    d = _ledger(tmp_path, device="cuda:1").to_dict(wall_s=0.0)
    assert d["provenance"]["device"] == "cuda:1"


def test_atomic_write_creates_missing_folders(tmp_path):
    """atomic_write_text writes into a folder that does not exist yet (it creates it)."""
    path = tmp_path / "a" / "b" / "ledger.json"
    claims.atomic_write_text(path, "{}\n")
    assert path.read_text() == "{}\n"


def test_summary_counts_weak_checks(tmp_path):
    """The summary line counts evidence claims that pass with a resolution worse than 25%
    (a soft claim resolving 40% is shown '1 weak')."""
    led = _ledger(tmp_path)
    led.check("s", "soft, coarse", 1.2, 1.0, tol=0.2, kind="soft")
    assert "1 weak" in led.summary()
    assert "weak" in led.table()["resolution"][0]


def test_off_the_defaults_undecided_claims_are_reported_not_raised(tmp_path, capsys):
    """Off the defaults, a claim pre-registered as decided but left INCONCLUSIVE is printed
    by report() (by id), and report() does not raise."""
    class Rules:
        DECIDES = {"smoke": ("a",)}
    led = _ledger(tmp_path, rules=Rules, identity={"defaults": False})
    led.inconclusive("a", "not decided here", note="off the defaults", kind="hard")
    led.report(show=True, write=False)
    out = capsys.readouterr().out
    assert "undecided here (reported, not enforced): a" in out


def test_ledger_json_stores_the_engine_counts(tmp_path):
    """Under 'engine' the JSON ledger stores dltheory.experiments.stats(): the tasks the
    sweep engine computed and loaded from its cache in this process."""
    from dltheory import experiments

    assert _ledger(tmp_path).to_dict(wall_s=0.0)["engine"] == experiments.stats()


def test_table_and_summary_name_the_cap_and_empty_evidence(tmp_path):
    """A WEAK row's resolution shows the cap it exceeded ('> max 20%'); a ledger with no
    evidence claim says so in its summary ('0 evidence claims (none)')."""
    led = _ledger(tmp_path)
    led.check("w", "weak", 1.1, 1.0, tol=0.5)
    assert led.table()["resolution"][0] == "60% > max 20%"
    only = _ledger(tmp_path)
    only.check("i", "an identity", 0.0, 0.0, tol=1e-12, kind="identity")
    assert "0 evidence claims (none)" in only.summary()


def test_findings_words_and_run_description(tmp_path):
    """The findings prose: a guard that holds is '**Holds**' (a check of the book's code); a
    mutated run is named with its mutation; a run at the defaults is not called 'off the
    defaults'; the header is followed by a blank line so Markdown starts the list."""
    led = _ledger(tmp_path, identity={"defaults": True})
    led.guard("g", "index sets are disjoint", True)
    text = led.findings_text(["g"])
    assert "- **Holds**: index sets are disjoint" in text
    assert "off the defaults" not in text
    assert "**What this build found** (`smoke`):\n\n- " in text
    mut = _ledger(tmp_path, identity={"defaults": True, "mutation": "drop_ridge"})
    mut.guard("g", "index sets are disjoint", True)
    assert "MUTATED (drop_ridge)" in mut.findings_text("g")


def test_kinds_frame_counts_each_kind_and_the_evidence():
    """kinds_frame: one row per chapter with its claims per kind, evidence = hard + soft, and
    where the count comes from."""
    rows = [{"kind": k} for k in ("hard", "hard", "soft", "identity")]
    df = claims.kinds_frame({"ch": ("ledger", rows)})
    assert list(df.columns) == ["chapter", *claims.KINDS, "evidence", "source"]
    assert df.iloc[0].to_dict() == {"chapter": "ch", "hard": 2, "soft": 1, "identity": 1,
                                    "derivation": 0, "evidence": 3, "source": "ledger"}


def test_reason_of_a_short_sweep_is_the_rules_not_the_callers_note(tmp_path):
    """An INCONCLUSIVE claim's reason is the rule's own (re-derived from its check: 'had 1
    of 3 rounds'), while its note keeps the caller's text as well."""
    c = _ledger(tmp_path).check("r", "budgeted", None, 1.0, tol=0.1, rounds=(1, 3),
                                note="the sweep was cut")
    assert c.reason == "had 1 of 3 rounds"
    assert c.note == "the sweep was cut; had 1 of 3 rounds"


def test_book_table_cells(tmp_path):
    """The book's six-column claims table: the prediction under the measurement (numbers
    kept on one line), nothing under a measurement without prediction, the tolerance text,
    and 'none' for the resolution of a one-sided check (unbounded)."""
    led = _ledger(tmp_path)
    led.check("a", "with prediction", 1.05, 1.0, tol=0.1)
    led.check("c", "interval only", 2.0, lo=1.0)
    led.check("o", "one-sided", 1.2, 1.0, hi=1.5)
    rows = claims.style_table(led.table()).data.to_dict("records")
    nb = '<span style="white-space:nowrap">{}</span>'
    assert rows[0]["measured"].endswith(f"predicted {nb.format(1)}</span>")
    assert rows[1]["measured"] == nb.format(2)
    assert rows[1]["tolerance"] == "&gt;= " + nb.format(1)
    assert rows[2]["resolution"] == "none &gt; max 20%"


def test_kinds_frame_of_no_chapter_keeps_its_columns():
    """With no chapter recorded yet the kinds table is empty but keeps its header."""
    df = claims.kinds_frame({})
    assert len(df) == 0 and list(df.columns) == ["chapter", *claims.KINDS, "evidence", "source"]


def _colour(sty, row, col):
    return dict(sty.ctx.get((row, col), [])).get("color")


def test_styled_table_colours_verdicts_and_mutes_identities(tmp_path):
    """style_table's documented marks (computed cell styles, not the CSS text): a verdict
    cell has its verdict's colour and no other cell of an evidence row does; every cell of an
    identity row but the verdict is muted; the caption is shown. On a summary table the
    status is coloured and each verdict count of the evidence column stays on one line."""
    import pandas as pd

    led = _ledger(tmp_path)
    led.check("a", "evidence", 1.05, 1.0, tol=0.1)
    led.guard("g", "a guard", True)
    sty = claims.style_table(led.table(), caption="Claims of demo")
    sty._compute()
    green, grey = "#1a7f37", "#8c959f"
    assert _colour(sty, 0, 1) == green and _colour(sty, 1, 1) == green
    assert all(_colour(sty, 0, j) is None for j in (0, 2, 3, 4, 5))
    assert all(_colour(sty, 1, j) == grey for j in (0, 2, 3, 4, 5))
    assert "<caption>Claims of demo</caption>" in sty.to_html()
    df = pd.DataFrame({"chapter": ["x"], "status": ["stale"],
                       "evidence": ["4 PASS, 1 NOT REPRODUCED"]})
    sty = claims.style_table(df)
    sty._compute()
    assert _colour(sty, 0, 1) == "#bc4c00"
    nb = '<span style="white-space:nowrap">{}</span>'
    assert sty.data["evidence"][0] == nb.format("4 PASS") + ", " + nb.format("1 NOT REPRODUCED")
