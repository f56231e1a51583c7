"""Records that are damaged or hostile never break a page and never reach it as markup.

Issue 45: a ledger's verdict or file name, a calibration mutation's size or error and a
times fact reached the reproduction and calibration pages unescaped (a pandas Styler
escapes nothing); a calibration record whose ``claims`` is a list, a mutation without
``flipped``, a claim whose ``runs`` is text, a mutation-score record without ``counts``,
a times entry whose ``seconds`` is ``"abc"`` or a list, and a deeply nested file crashed
the pages. Each table is rendered here the way the page renders it
(``claims.style_table(...).to_html()``, ``ledgers.anchor_claims`` for the claim rows).
"""

import copy
import json
from pathlib import Path

import pytest

from dltheory import calibration, claims, ledgers, records

XSS = "<img src=x onerror=alert(1)>"
XSS_FILE = XSS + ".smoke.json"          # a legal file name on Linux
ODD = [None, "abc", [1, 2], {"a": 1}, -1, True, float("nan")]


def _html(df, caption=None) -> str:
    return claims.style_table(df, caption=caption).to_html() if len(df) else ""


def _clean(html: str) -> None:
    assert "<img" not in html, html[html.find("<img") - 200:html.find("<img") + 100]
    assert "onerror=alert(1)>" not in html


def _paths(value, at=()):
    """Every path to a value inside nested dicts and lists (the value itself included)."""
    yield at
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*at, i))


def _set(data, path, value):
    out = copy.deepcopy(data)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


def _rename_key(data, path, new):
    out = copy.deepcopy(data)
    node = out
    for k in path[:-1]:
        node = node[k]
    node[new] = node.pop(path[-1])
    return out


# --------------------------------------------------------------------------- ledgers
def _repo(tmp_path, monkeypatch):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "01_alpha.py").write_text("# chapter alpha\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n"
                                       "- file: book/01_alpha\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DLTHEORY_ROOT", str(tmp_path))
    return tmp_path


def _ledger(res) -> dict:
    led = claims.Ledger("alpha", scale="smoke", results_dir=res)
    led.check("alpha.1", "x is $1$", 1.0, 1.0, tol=0.1, note="a note")
    led.check("alpha.id", "bookkeeping", 0.0, 0.0, tol=1e-9, kind="identity")
    data = json.loads(led.write().read_text())
    data["provenance"]["source_sha256"]["package"] = None   # no package hash per variant
    return data


def _reproduction_frames(res, root):
    """What the reproduction page shows of the ledgers in ``res``: (summary, claims)."""
    found, errors = ledgers.scan(res)
    summary, table = ledgers.collect(found, ["alpha"], "smoke", errors=errors, root=root)
    assert summary.to_string()       # what a script prints: text
    return ledgers.compact_summary(summary), table


def _render_reproduction(frames) -> str:
    """The frames of several ledgers (``_reproduction_frames``) rendered at once, as the
    page renders them (one Styler per table: fast enough to try every field)."""
    import pandas as pd

    summary = pd.concat([f[0] for f in frames], ignore_index=True)
    table = pd.concat([f[1] for f in frames], ignore_index=True)
    out = _html(summary)
    for chapter, rows in table.groupby("chapter", sort=False):
        sty = claims.style_table(rows.drop(columns="chapter").reset_index(drop=True),
                                 caption=chapter)
        out += ledgers.anchor_claims(sty, rows["id"], {}).to_html()
    return out


def _reproduction_html(res, root) -> str:
    return _render_reproduction([_reproduction_frames(res, root)])


def test_every_ledger_field_is_escaped_or_refused(tmp_path, monkeypatch):
    """The payload in every text field and key of a ledger: the page builds, and nothing
    of it is markup (a planted verdict is an error row that names it, escaped)."""
    root = _repo(tmp_path, monkeypatch)
    res = tmp_path / "claims"
    good = _ledger(res)
    path = res / "alpha.smoke.json"
    frames = []
    for at in _paths(good):
        if at and isinstance(good_value := _get(good, at), str):
            path.write_text(json.dumps(_set(good, at, XSS + good_value)))
            frames.append(_reproduction_frames(res, root))
    assert len(frames) > 20
    _clean(_render_reproduction(frames))
    path.write_text(json.dumps({**good, "identity": {"mutation": XSS}}))
    html = _reproduction_html(res, root)
    _clean(html)
    assert "MUTATED: &lt;img" in html
    path.unlink()
    (res / XSS_FILE).write_text(json.dumps(good))                      # a hostile file name
    html = _reproduction_html(res, root)
    _clean(html)
    assert "&lt;img src=x onerror=alert(1)&gt;.smoke.json" in html


def _get(data, path):
    for k in path:
        data = data[k]
    return data


def test_a_planted_verdict_is_an_error_row_shown_escaped(tmp_path, monkeypatch):
    root = _repo(tmp_path, monkeypatch)
    res = tmp_path / "claims"
    good = _ledger(res)
    (res / "alpha.smoke.json").write_text(json.dumps(_set(good, ("claims", 0, "verdict"), XSS)))
    found, errors = ledgers.scan(res)
    summary, table = ledgers.collect(found, ["alpha"], "smoke", errors=errors, root=root)
    assert summary.status[0] == "error" and "unknown verdict" in summary.detail[0]
    assert table.verdict[0] == "error"
    html = _reproduction_html(res, root)
    _clean(html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


@pytest.mark.parametrize("odd", ODD, ids=repr)
def test_any_value_anywhere_in_a_ledger_builds_the_page(tmp_path, monkeypatch, odd):
    """Every field of a ledger replaced by a value of another type: a row that says what
    is wrong (or the value shown as text), never an exception."""
    root = _repo(tmp_path, monkeypatch)
    res = tmp_path / "claims"
    good = _ledger(res)
    path = res / "alpha.smoke.json"
    frames = []
    for at in _paths(good):
        if at and at[0] not in ("versions", "engine"):   # facts no page reads
            path.write_text(json.dumps(_set(good, at, odd)))
            frames.append(_reproduction_frames(res, root))
    path.write_text(json.dumps(odd))
    frames.append(_reproduction_frames(res, root))
    unforeseen = [d for f in frames for d in f[0]["detail"] if "cannot be shown" in d]
    assert unforeseen == []          # every damage is named by the checks, not the net
    _clean(_render_reproduction(frames))


def test_deep_huge_and_cut_ledgers_are_error_rows(tmp_path, monkeypatch):
    root = _repo(tmp_path, monkeypatch)
    res = tmp_path / "claims"
    good = _ledger(res)
    path = res / "alpha.smoke.json"
    cases = {
        "[" * 100_000 + "]" * 100_000: "nested 100000 levels deep",    # RecursionError
        json.dumps({**good, "claims": good["claims"] * 8}): "entries (at most 15)",
        json.dumps(good)[:-40]: "truncated JSON",
        json.dumps({**good, "claims": {"alpha.1": good["claims"][0]}}): "claims: a list",
        json.dumps({**good, "wall_s": "abc"}): "wall_s: a number, got 'abc'",
    }
    monkeypatch.setattr(records, "MAX_ITEMS", 15)
    for text, why in cases.items():
        path.write_text(text)
        found, errors = ledgers.scan(res)
        summary, _ = ledgers.collect(found, ["alpha"], "smoke", errors=errors, root=root)
        assert summary.status[0] == "error" and why in summary.detail[0], summary.detail[0]
    monkeypatch.setattr(records, "MAX_BYTES", 100)
    path.write_text(json.dumps(good))
    assert "too large" in ledgers.scan(res)[1][0]["error"]


def test_the_readme_table_escapes_and_keeps_its_cells(tmp_path, monkeypatch):
    import pandas as pd

    md = ledgers.summary_markdown(pd.DataFrame([{"chapter": XSS, "status": "a | b"}]))
    assert "<img" not in md and "a \\| b" in md


# --------------------------------------------------------------------------- calibration
def _record() -> dict:
    """A small calibration record that ``calibration.validate`` accepts."""
    return {
        "schema": 1, "chapter": "alpha", "scale": "smoke", "wall_s": 10.0, "cpu_s": 20.0,
        "provenance": {"source_sha256": {}, "created": "2026-12-01T00:00:00Z",
                       "commit": "0123456789abcdef"},
        "settings": {"corners": 1, "edges": 0, "random": 0, "left_out": 0, "invalid": []},
        "runs": [{"setting": {}, "seed": 0, "mutation": "", "verdicts": {"A.x": "PASS"},
                  "wall_s": 1.0, "cpu_s": 1.0, "error": None},
                 {"setting": {}, "seed": 0, "mutation": "alpha:m", "verdicts": {"A.x": "FAIL"},
                  "wall_s": 1.0, "cpu_s": 1.0, "error": None, "flipped": ["A.x"]}],
        "claims": {"A.x": {"kind": "hard", "runs": 1, "false_fail": 0, "weak": 0,
                           "false_fail_upper95": 0.95, "caught_by": ["alpha:m"],
                           "median_resolution": 0.1}},
        "mutations": {"alpha:m": {"target": "dltheory.x:f", "description": "a sign",
                                  "size": "factor 2", "kind": "sign", "expected": ["A.x"],
                                  "flipped": ["A.x"], "error": None}},
    }


def _calibration_frames(directory, chapters=("alpha",)):
    return calibration.page_tables(directory, list(chapters))


def _render_calibration(frames) -> str:
    """The page's tables of several records' frames, rendered at once as the page does."""
    import pandas as pd

    summary, per_claim, per_mutation = (pd.concat([f[i] for f in frames], ignore_index=True)
                                        for i in range(3))
    out = _html(summary.drop(columns=["detail", "calibrated", "cost"]))   # (the page
    # prints calibrated, cost and detail: text, which MyST-NB escapes)
    for frame in (per_claim, per_mutation):
        for chapter, rows in frame.groupby("chapter", sort=False) if len(frame) else []:
            out += _html(rows.drop(columns="chapter"), caption=chapter)
    return out


def _calibration_html(directory, chapters=("alpha",)) -> tuple[str, object]:
    frames = _calibration_frames(directory, chapters)
    return _render_calibration([frames]), frames[0]


def test_the_small_record_is_valid_and_shown(tmp_path):
    assert calibration.validate(_record()) == []
    (tmp_path / "alpha.smoke.json").write_text(json.dumps(_record()))
    _, summary = _calibration_html(tmp_path)
    assert summary.status[0] in ("calibrated", "stale") and summary["caught / planted"][0] == "1 / 1"


def test_every_calibration_field_is_escaped(tmp_path):
    good = _record()
    path = tmp_path / "alpha.smoke.json"
    frames = []
    for at in _paths(good):
        if not at:
            continue
        value = _get(good, at)
        variants = [_set(good, at, XSS + value)] if isinstance(value, str) else []
        if isinstance(at[-1], str) and at[-2:-1] in (("claims",), ("mutations",)):
            variants.append(_rename_key(good, at, XSS + at[-1]))     # a hostile id
        for v in variants:
            path.write_text(json.dumps(v))
            frames.append(_calibration_frames(tmp_path))
    assert len(frames) > 15
    _clean(_render_calibration(frames))
    for name in (XSS_FILE, "alpha.smoke.json"):
        (tmp_path / name).write_text("{cut")
    html, summary = _calibration_html(tmp_path)
    _clean(html)
    assert list(summary.status) == ["error", "error"] and "&lt;img" in html


@pytest.mark.parametrize("field, value, why", [
    (("claims",), [], "claims: an object, got list"),
    (("mutations", "alpha:m", "flipped"), None, "mutations.alpha:m.flipped: a list"),
    (("claims", "A.x", "runs"), "30", "claims.A.x.runs: an integer, got '30'"),
    (("runs",), "abc", "runs: a list, got 'abc'"),
    (("mutations", "alpha:m", "size"), [XSS], "mutations.alpha:m.size"),
    (("provenance",), None, "provenance: an object"),
    (("settings", "corners"), "4", "settings.corners: an integer"),
])
def test_a_malformed_calibration_record_is_an_error_row(tmp_path, field, value, why):
    bad = _set(_record(), field, value)
    if field == ("mutations", "alpha:m", "flipped"):
        del bad["mutations"]["alpha:m"]["flipped"]
        why = "mutations.alpha:m: no 'flipped'"
    (tmp_path / "alpha.smoke.json").write_text(json.dumps(bad))
    html, summary = _calibration_html(tmp_path)
    assert list(summary.status) == ["error"] and why in summary.detail[0], summary.detail[0]
    _clean(html)


@pytest.mark.parametrize("odd", ODD, ids=repr)
def test_any_value_anywhere_in_a_calibration_record_builds_the_page(tmp_path, odd):
    good = _record()
    path = tmp_path / "alpha.smoke.json"
    frames = []
    for at in _paths(good):
        if at:
            bad = _set(good, at, odd)
            path.write_text(json.dumps(bad))
            frames.append(_calibration_frames(tmp_path))
            if calibration.validate(bad) == []:         # what the tool prints of it
                assert calibration.report_lines(bad)
    _clean(_render_calibration(frames))
    path.write_text("[" * 50_000)
    _, summary = _calibration_html(tmp_path)
    assert "nested" in summary.detail[0]


def test_the_calibration_page_shows_chapter_fours_line_and_survives_a_cut_record(tmp_path):
    """Chapter 4 read its calibration record in its second-to-last cell: a truncated file
    cost it its ledger. The calibration page shows every chapter's calibration (runs, false
    FAILs, planted errors caught, cost); a cut record there is one error row."""
    repo = Path(__file__).resolve().parents[1]
    for path in ("book/04_depth_expansion.py", "src/dltheory/depth_expansion/checks.py"):
        assert "calibration_summary" not in (repo / path).read_text()
    rec = _record()
    rec["chapter"] = "depth_expansion"
    (tmp_path / "depth_expansion.smoke.json").write_text(json.dumps(rec))
    _, summary = _calibration_html(tmp_path, ["depth_expansion"])
    assert summary.cost[0] == "10 s wall, 20 CPU-s" and summary.runs[0] == 1
    (tmp_path / "depth_expansion.smoke.json").write_text(json.dumps(rec)[:100])
    _, summary = _calibration_html(tmp_path, ["depth_expansion"])
    assert summary.status[0] == "error" and "truncated" in summary.detail[0]


def test_the_package_reads_no_record_through_its_own_location():
    import re

    src = Path(calibration.__file__).resolve().parent
    pattern = re.compile(r"__file__.*parents\[\d\]|parents\[\d\].*[\"']book[\"']")
    hits = [f"{p.name}:{n}" for p in src.rglob("*.py")
            for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []


# --------------------------------------------------------------------------- mutation score
def _score_record(tmp_path) -> dict:
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src" / "m.py").write_text("x = 1\n")
    return {"schema": 1, "tool": "mutmut 3", "score": "killed / all", "scope": "one module",
            "wall_s": 12.0,
            "modules": {"pkg.m": {
                "path": "src/m.py", "tool": "mutmut", "tests": ["tests/test_m.py"],
                "deselected": [], "commit": "0123456789", "source_sha256": "0" * 64,
                "mutants_generated": 3, "mutants_sampled": 3, "score": 0.5,
                "counts": {"killed": 1, "timeout": 0, "survived": 1, "no tests": 0},
                "survivor_triage": {"equivalent": 1, "caught by nothing": 0},
                "survivors": [{"file": "src/m.py", "line": 1, "status": "survived",
                               "mutation": "x = 1 => x = 2", "triage": "equivalent: why"}]}}}


def _score_html(tmp_path, data) -> tuple[list, str]:
    path = tmp_path / "mutation_score.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    lines, modules, survivors = calibration.mutation_tables(path, tmp_path)
    scores, tests, survivors = calibration.mutation_page_tables(modules, survivors)
    out = _html(scores) + _html(tests)
    for module, rows in survivors.groupby("module", sort=False) if len(survivors) else []:
        out += _html(rows.drop(columns="module"), caption=module)
    return lines, out


def test_every_mutation_score_field_is_escaped(tmp_path):
    good = _score_record(tmp_path)
    lines, html = _score_html(tmp_path, good)
    assert "pkg.<wbr>m" in html or "pkg.\u200bm" in html
    for at in _paths(good):
        if at and isinstance(value := _get(good, at), str) and at[-1] != "path":
            _clean(_score_html(tmp_path, _set(good, at, XSS + value))[1])
    _clean(_score_html(tmp_path, _rename_key(good, ("modules", "pkg.m"), XSS))[1])


@pytest.mark.parametrize("change, why", [
    (lambda d: d["modules"]["pkg.m"].pop("counts"), "modules.pkg.m: no 'counts'"),
    (lambda d: d["modules"]["pkg.m"].update(path="/etc/passwd"), "a .py file inside the"),
    (lambda d: d["modules"]["pkg.m"].update(path="../../x.py"), "a .py file inside the"),
    (lambda d: d["modules"]["pkg.m"].update(path="data/huge.bin"), "a .py file inside the"),
    (lambda d: d.update(modules=[]), "modules: an object, got list"),
    (lambda d: d["modules"]["pkg.m"]["survivors"][0].update(line="7"), "line: an integer"),
])
def test_a_malformed_mutation_score_is_one_line_and_no_table(tmp_path, change, why):
    data = _score_record(tmp_path)
    change(data)
    lines, html = _score_html(tmp_path, data)
    assert html == "" and len(lines) == 1 and why in lines[0], lines


@pytest.mark.parametrize("odd", ODD, ids=repr)
def test_any_value_anywhere_in_a_mutation_score_builds_the_page(tmp_path, odd):
    good = _score_record(tmp_path)
    for at in _paths(good):
        if at:
            _score_html(tmp_path, _set(good, at, odd))
    assert "nested" in _score_html(tmp_path, "{" * 10_000)[0][0]


# --------------------------------------------------------------------------- times
def _times_html(tmp_path, data) -> tuple[str, str | None]:
    path = tmp_path / "times.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    record, why = ledgers.read_times(path)
    return _html(ledgers.times_table(record)), why


def test_times_facts_and_keys_are_escaped(tmp_path):
    good = {"test.sh/unit tests": {"seconds": 12.5, "when": "2026-12-01T00:00:00Z",
                                   "load": [1.0, 1.0, 1.0], "cores": 2, "commit": "abc"}}
    for data in ({"test.sh/unit tests": {**good["test.sh/unit tests"], "commit": XSS}},
                 {"test.sh/unit tests": {**good["test.sh/unit tests"], "when": XSS}},
                 {XSS: good["test.sh/unit tests"]}, {"a/" + XSS: 3.0}):
        html, why = _times_html(tmp_path, data)
        assert why is None and "&lt;img" in html
        _clean(html)


@pytest.mark.parametrize("seconds", ["abc", [1, 2], {"a": 1}, True, float("nan")], ids=repr)
def test_a_malformed_times_entry_is_a_row_that_says_so(tmp_path, seconds):
    data = {"ok/one": 1.5, "bad/two": {"seconds": seconds, "cores": 2}}
    table = ledgers.times_table(data)
    assert list(table.seconds[:1]) == [None] or table.seconds.isna()[0]   # bad/two first
    assert "malformed entry (entry.seconds" in table.facts[0]
    assert table.seconds[1] == 1.5
    _clean(_html(table))


@pytest.mark.parametrize("text, why", [
    ("[" * 100_000, "nested"), ('{"a/b": {"seconds": 1', "truncated"), ("[1, 2]", "not a JSON"),
    ("\xff\xfe", "unreadable")])
def test_an_unreadable_times_record_is_named_not_raised(tmp_path, text, why):
    path = tmp_path / "times.json"
    path.write_bytes(text.encode("latin-1"))
    record, problem = ledgers.read_times(path)
    assert record == {} and why in problem
    assert ledgers.times_table(record).empty


def test_times_path_comes_from_the_variable_or_the_root_never_the_package(tmp_path,
                                                                         monkeypatch):
    from dltheory import budget

    monkeypatch.setenv("DLTHEORY_TIMES", str(tmp_path / "t.json"))
    assert budget.times_path(tmp_path / "root") == tmp_path / "t.json"
    monkeypatch.delenv("DLTHEORY_TIMES")
    assert budget.times_path(tmp_path) == tmp_path / "book" / "records" / "times.json"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="DLTHEORY_TIMES"):
        budget.times_path()


@pytest.mark.parametrize("text, depth", [
    ("{}", 1), ("[[1], {}]", 2), ('{"a": "[[[["}', 1), ('{"a": "x\\"[[["}', 1),
    ('{"a": "x\\\\", "b": [[1]]}', 3), ("[" * 1000 + "]" * 1000, 1000), ('"[{"', 0)])
def test_nesting_is_counted_outside_strings(text, depth):
    assert records._max_depth(text) == depth


def test_a_deep_record_is_refused_before_json_recurses(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[" * (records.MAX_DEPTH + 1) + "]" * (records.MAX_DEPTH + 1))
    assert records.read(path) == (None, f"nested {records.MAX_DEPTH + 1} levels deep "
                                        f"(at most {records.MAX_DEPTH})")
    path.write_text("[" * records.MAX_DEPTH + "]" * records.MAX_DEPTH)
    assert records.read(path)[1] is None
    assert records.read(tmp_path / "none.json") == (None, "missing")


def test_markup_built_here_is_kept_and_text_is_escaped():
    import pandas as pd

    df = pd.DataFrame([{"chapter": claims.Html('<a href="01_x.html">One &amp; two</a>'),
                        "status": XSS, "evidence": "3 PASS, 1 NOT REPRODUCED"}])
    html = claims.style_table(df, caption=XSS).to_html()
    assert '<a href="01_x.html">One &amp; two</a>' in html                # Html: as is
    assert '<span style="white-space:nowrap">1 NOT REPRODUCED</span>' in html
    _clean(html)
    assert html.count("&lt;img src=x onerror=alert(1)&gt;") == 2          # cell and caption
    link = claims.style_table(df, caption=claims.Html("<b>t</b>")).to_html()
    assert "<b>t</b>" in link


@pytest.mark.parametrize("text", ["[" * 100_000, '{"a/b": {"seconds": 1', "[1, 2]"])
def test_a_damaged_times_record_is_rebuilt_by_its_writer(tmp_path, capsys, text):
    from dltheory import budget

    path = tmp_path / "times.json"
    path.write_text(text)
    assert budget.times(path) == {}
    assert "[warning] the record of times" in capsys.readouterr().err
    budget.write_times({"test.sh/unit tests": 3.0}, path)
    assert list(budget.times(path)) == ["test.sh/unit tests"]
