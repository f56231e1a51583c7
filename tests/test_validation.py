"""The one validation module and the shared chapter-config base: every bad value is named,
with what is allowed, before any work is done."""

import importlib
import math
from pathlib import Path

import numpy as np
import pytest

from dltheory import runtime, validation
from dltheory.chapter_config import ChapterConfig, Knob, per_scale

CONFIGS = {
    "gradient_flow": "dltheory.gradient_flow",
    "conservation": "dltheory.conservation.config",
    "pretrain_finetune": "dltheory.pretrain_finetune.config",
    "sparse_scaling": "dltheory.sparse_scaling.config",
    "depth_expansion": "dltheory.depth_expansion.config",
}


def config_class(name):
    return importlib.import_module(CONFIGS[name]).Config


# --------------------------------------------------------------------------- values
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "1.0", None, [1.0], 2.5, -0.1])
def test_real_names_the_argument_and_range(value):
    with pytest.raises(ValueError, match=r"eta must .*\[0, 2\]"):
        validation.real("eta", value, 0.0, 2.0)


def test_real_open_ends_and_accepted_values():
    assert validation.real("x", np.float32(0.5), 0, 1) == 0.5
    with pytest.raises(ValueError, match=r"x must lie in \(0, 1\)"):
        validation.real("x", 0.0, 0, 1, lo_open=True, hi_open=True)
    with pytest.raises(ValueError, match=r"\(0, inf\)"):
        validation.real("x", math.inf, 0, math.inf, lo_open=True)


@pytest.mark.parametrize("value", [True, 2.5, math.nan, math.inf, "3", 0, 11, np.bool_(True)])
def test_integer_rejects_non_integers_and_out_of_range(value):
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 10\]"):
        validation.integer("n", value, 1, 10)


def test_integer_accepts_integral_floats_and_numpy_ints():
    assert validation.integer("n", 3.0, 1) == 3
    assert validation.integer("n", np.int64(7), 1, 10) == 7


def test_array_is_checked_entrywise():
    np.testing.assert_array_equal(validation.array("a", [0.0, 1.0], 0, 1), [0.0, 1.0])
    for bad in ([0.5, math.nan], [0.5, 2.0], [[0.1, -1.0]]):
        with pytest.raises(ValueError, match=r"a must lie in \[0, 1\]"):
            validation.array("a", bad, 0, 1)
    with pytest.raises(ValueError, match="a must be real numbers"):
        validation.array("a", ["x"], 0, 1)


def test_choice_lists_the_options():
    with pytest.raises(ValueError, match="'mlp', 'conv'"):
        validation.choice("arch", "cnn", ("mlp", "conv"))


def test_as_generator_is_the_one_seed_normaliser():
    a = validation.as_generator([3, 600, 1]).random(3)
    np.testing.assert_array_equal(a, np.random.default_rng([3, 600, 1]).random(3))
    assert runtime.as_generator is validation.as_generator
    g = np.random.default_rng(0)
    assert validation.as_generator(g) is g
    for bad in (None, True, 1.5, []):
        with pytest.raises(TypeError, match="seed must be"):
            validation.as_generator(bad)
    with pytest.raises(ValueError, match="seed"):
        validation.as_generator(-1)


# --------------------------------------------------------------------------- environment
@pytest.mark.parametrize("name, raw, allowed", [
    ("DLTHEORY_JOBS", "abc", "an integer"),
    ("DLTHEORY_JOBS", "0", "or -1"),
    ("DLTHEORY_THREADS", "abc", "an integer"),
    ("DLTHEORY_THREADS", "0", "an integer"),
    ("DLTHEORY_BUDGET", "abc", "seconds"),
    ("DLTHEORY_BUDGET", "-1", "seconds"),
    ("DLTHEORY_BUDGET", "nan", "seconds"),
    ("DLTHEORY_BUDGET", "inf", "seconds"),
    ("DLTHEORY_SCALE", "huge", "smoke, standard, paper, full"),
    ("DLTHEORY_BACKEND", "threads", "sequential"),
    ("DLTHEORY_CACHE", "maybe", "1/true"),
    ("DLTHEORY_PROGRESS", "2", "1/true"),
])
def test_bad_environment_names_the_variable_and_what_is_allowed(monkeypatch, name, raw, allowed):
    monkeypatch.setenv(name, raw)
    with pytest.raises(ValueError, match=rf"\${name}.*{allowed}"):
        validation.check_environment()


@pytest.mark.parametrize("name", ["DLTHEORY_CACHE_DIR", "DLTHEORY_FIG_DIR", "DLTHEORY_RESULTS_DIR"])
def test_a_file_where_a_folder_should_be_is_named_up_front(monkeypatch, tmp_path, name):
    f = tmp_path / "not_a_folder"
    f.write_text("x")
    monkeypatch.setenv(name, str(f / "sub"))
    with pytest.raises(ValueError, match=rf"\${name}.*not a folder"):
        validation.check_environment()
    monkeypatch.setenv(name, str(tmp_path / "new" / "folder"))   # creatable: fine
    assert validation.check_environment()[name] == Path(tmp_path / "new" / "folder")


def test_setup_checks_the_environment_first(monkeypatch):
    monkeypatch.setenv("DLTHEORY_THREADS", "abc")
    with pytest.raises(ValueError, match=r"\$DLTHEORY_THREADS"):
        runtime.setup("smoke", quiet=True)


def test_every_variable_the_package_reads_is_declared():
    """No module reads a DLTHEORY_* variable that ENVIRONMENT does not declare."""
    import re

    src = Path(validation.__file__).parent
    names = set()
    for f in src.rglob("*.py"):
        names |= set(re.findall(r'"(DLTHEORY_[A-Z_]+)"', f.read_text()))
    assert names <= set(validation.ENVIRONMENT), names - set(validation.ENVIRONMENT)
    with pytest.raises(KeyError, match="not a declared"):
        validation.env("DLTHEORY_NOPE")


# --------------------------------------------------------------------------- config base
def test_per_scale_transposes_triples():
    assert per_scale(n=(1, 2, 3)) == {"smoke": {"n": 1}, "standard": {"n": 2}, "paper": {"n": 3},
                                      "full": {"n": 3}}
    assert per_scale(n=(1, 2, 3, 4))["full"] == {"n": 4}
    with pytest.raises(ValueError, match="one value per scale"):
        per_scale(n=(1, 2))


@pytest.mark.parametrize("chapter", sorted(CONFIGS))
def test_chapter_configs_share_the_base(chapter):
    C = config_class(chapter)
    assert issubclass(C, ChapterConfig) and C.KNOBS
    mod = importlib.import_module(CONFIGS[chapter])
    assert mod.DOMAIN == C.domain() and mod.CI_SETTINGS is C.CI_SETTINGS
    for scale in runtime.SCALES:
        cfg = C.for_scale(scale)
        assert cfg.scale == scale and set(cfg.knobs) == set(C.domain())
    for s in C.CI_SETTINGS:
        assert C.is_valid(s) == (True, "")
    rng = np.random.default_rng(1)
    for _ in range(5):
        s = C.sample_setting(rng)
        assert set(s) == set(C.domain())
        assert all(lo <= s[k] <= hi for k, (lo, hi) in C.domain().items())
    assert C.corners(), "no corner of the declared box is valid"


@pytest.mark.parametrize("chapter", sorted(CONFIGS))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 10**9, -10**9, "x"])
def test_every_knob_rejects_bad_values_by_name(chapter, bad):
    C = config_class(chapter)
    for name in C.domain():
        with pytest.raises(ValueError, match=name):
            C.for_scale("smoke", **{name: bad})


@pytest.mark.parametrize("chapter", sorted(CONFIGS))
def test_unknown_settings_and_bad_budgets_are_named(chapter, monkeypatch):
    C = config_class(chapter)
    with pytest.raises(ValueError, match="unknown .*'NOT_A_KNOB'"):
        C.for_scale("smoke", NOT_A_KNOB=1)
    with pytest.raises(ValueError, match="budget"):
        C.for_scale("smoke", budget=-5.0)
    monkeypatch.setenv("DLTHEORY_BUDGET", "30")
    assert C.for_scale("smoke").budget == 30.0
    assert C.for_scale("smoke", budget=None).budget is None


def test_box_points_follow_joint_constraints():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Toy(ChapterConfig):
        KNOBS = {"A": Knob("a", 1, 4, integer=True), "B": Knob("b", 0.01, 1.0, log=True)}
        a: int = 2
        b: float = 0.1

        def validate(self):
            if self.a == 4 and self.b == 1.0:
                raise ValueError("A = 4 needs B < 1")

    assert Toy.corners() == [{"A": 1, "B": 0.01}, {"A": 1, "B": 1.0}, {"A": 4, "B": 0.01}]
    mids = Toy.edge_midpoints()
    assert {"A": 2, "B": 0.01} in mids and {"A": 1, "B": 0.1} in mids
    assert Toy.is_valid({"A": 4, "B": 1.0}) == (False, "A = 4 needs B < 1")
    assert Toy.for_scale("smoke", A=3).replace(B=0.5).knobs == {"SEED": 0, "A": 3, "B": 0.5}


def test_a_chapter_with_a_bad_variable_stops_in_its_first_cell(tmp_path):
    """Run as a script, the prologue stops at its parameters cell (before torch is
    imported), naming the variable (no bound on wall time: a busy machine differs)."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "DLTHEORY_JOBS": "abc", "DLTHEORY_RESULTS_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, str(repo / "book" / "00_gradient_flow.py")], env=env,
                       capture_output=True, text=True, timeout=300, cwd=repo)  # a hang guard
    assert r.returncode != 0
    assert "ValueError: $DLTHEORY_JOBS='abc': allowed values are an integer" in r.stderr


# --------------------------------------------------------------------------- papermill
# Issue 45: `-p seed 3` ran at SEED 0 and exited 0 (only UPPER_CASE unknown names were
# refused); `-r ALPHA1 1.0` (text) said "outside its domain [0.25, 4]"; TAU_K=True suggested
# TAU_K = 1, itself outside [1e-4, 1e-2]; WIDTH=64.5 named no range.
def _suggested(message: str, name: str) -> float:
    import re

    return float(re.search(rf"e\.g\. {name} = ([-+0-9.e]+)", message)[1])


@pytest.mark.parametrize("chapter", sorted(CONFIGS))
@pytest.mark.parametrize("bad, words", [
    (True, "a bool, but an? (integer|number) goes here"),
    ("1.0", "text, but an? (integer|number) goes here.*papermill's -r passes raw text"),
    ("abc", "text, but an? (integer|number) goes here"),
    (None, "None, but an? (integer|number) goes here"),
    ([1], "a list, but an? (integer|number) goes here"),
])
def test_a_parameter_of_the_wrong_type_says_what_goes_there(chapter, bad, words):
    """Every knob and SEED: the type is named before the range ("a number goes here", never
    "outside its domain"), the message names the range, and the value it suggests lies
    inside the domain."""
    C = config_class(chapter)
    for name, (lo, hi) in C.domain().items():
        with pytest.raises(ValueError) as err:
            C.for_scale("smoke", **{name: bad})
        msg = str(err.value)
        assert msg.startswith(f"{name} = {bad!r}: ") and "outside its domain" not in msg
        import re
        assert re.search(words, msg), msg
        assert validation.interval(lo, hi) in msg
        assert lo <= _suggested(msg, name) <= hi, msg


@pytest.mark.parametrize("chapter", sorted(CONFIGS))
def test_a_fraction_where_an_integer_goes_names_the_range(chapter):
    C = config_class(chapter)
    for name, (lo, hi) in C.domain().items():
        if name != "SEED" and not C.KNOBS[name].integer:
            continue
        for bad in (lo + 0.5, hi + 0.5):
            with pytest.raises(ValueError) as err:
                C.for_scale("smoke", **{name: bad})
            msg = str(err.value)
            assert f"{name} = {bad!r}: an integer goes here, in " \
                f"{validation.interval(lo, hi)}" in msg
            assert lo <= _suggested(msg, name) <= hi and _suggested(msg, name) % 1 == 0


def test_the_cases_of_the_issue():
    from dltheory.depth_expansion.config import Config as DE
    from dltheory.gradient_flow import Config as GF
    from dltheory.sparse_scaling.config import Config as SS

    with pytest.raises(ValueError, match=r"ALPHA1 = '1\.0': text, but a number goes here, in "
                                         r"\[0\.25, 4\] \(papermill's -r passes raw text"):
        SS.for_scale("smoke", ALPHA1="1.0")
    with pytest.raises(ValueError, match=r"TAU_K = True: a bool, but a number goes here, in "
                                         r"\[0\.0001, 0\.01\] \(e\.g\. TAU_K = 0\.005\)"):
        GF.for_scale("smoke", TAU_K=True)
    with pytest.raises(ValueError, match=r"WIDTH = 64\.5: an integer goes here, in \[16, 256\] "
                                         r"\(a fraction was given; e\.g\. WIDTH = 64\)"):
        DE.for_scale("smoke", WIDTH=64.5)
    with pytest.raises(ValueError, match=r"ALPHA1 = 9\.0 is outside its domain \[0\.25, 4\]"):
        SS.for_scale("smoke", ALPHA1=9.0)                     # a number out of range
    assert SS.for_scale("smoke", ALPHA1=2).alpha1 == 2.0      # an int where a float goes


def _injected(**params) -> dict:
    """A kernel's globals after papermill injected ``params`` (IPython keeps each executed
    cell's source in ``In``; papermill's cell starts ``# Parameters``)."""
    from papermill.translators import PythonTranslator

    source = PythonTranslator.codify(params)
    return {"In": ["", "from dltheory import runtime\nSEED = 0\n", source], **params}


@pytest.mark.parametrize("chapter", sorted(CONFIGS))
def test_a_parameter_in_another_case_is_refused_naming_the_allowed_ones(chapter):
    from dltheory import chapter_config

    C = config_class(chapter)
    allowed = ", ".join(["SEED", "SCALE", "BUDGET", *C.KNOBS])
    for name in ["SEED", *C.KNOBS]:
        for spelt in (name.lower(), name.title()):
            ns = _injected(**{spelt: 3})
            found = validation.injected_parameters(ns)
            assert found == [spelt]
            with pytest.raises(ValueError, match=rf"unknown parameter {spelt} \(did you mean "
                                                 rf"{name}\?\).*allowed: {allowed}$"):
                chapter_config.check_parameters(ns, C, injected=found)
    ns = _injected(not_a_knob=1, SEED=2)      # any name papermill injected counts
    with pytest.raises(ValueError, match="unknown parameter not_a_knob "):
        chapter_config.check_parameters(ns, C, injected=validation.injected_parameters(ns))
    chapter_config.check_parameters(_injected(SEED=2), C,
                                    injected=validation.injected_parameters(_injected(SEED=2)))


def test_start_refuses_a_lower_case_papermill_parameter():
    from dltheory import chapter

    with pytest.raises(ValueError, match=r"unknown parameter seed \(did you mean SEED\?\)"):
        chapter.start("gradient_flow", "smoke", namespace=_injected(seed=3))


def test_injected_parameters_reads_only_papermills_cell():
    assert validation.injected_parameters({}) == []
    assert validation.injected_parameters({"In": "not a list"}) == []
    ns = {"In": ["x = 1\n", "# Parameters\nseed = 3\nALPHA1 = \"1.0\"\n", "# Parameters\n(",
                 "# Parameters\nseed = 4\n"]}
    assert validation.injected_parameters(ns) == ["seed", "ALPHA1"]


@pytest.mark.parametrize("value, lo, hi, integer, default, want", [
    (True, 1e-4, 1e-2, False, 5e-3, 5e-3),      # the default, inside
    (True, 1e-4, 1e-2, False, None, 5.05e-3),   # else the middle (not 1)
    (64.5, 16, 256, True, None, 64),            # else the value pulled in and rounded
    (1e9 + 0.5, 16, 256, True, None, 256),
    ("x", 2, 100, True, 500, 51),               # a default outside the range is not used
])
def test_a_suggested_value_lies_inside_the_domain(value, lo, hi, integer, default, want):
    with pytest.raises(ValueError) as err:
        validation.parameter("P", value, lo, hi, integer=integer, default=default)
    assert _suggested(str(err.value), "P") == pytest.approx(want)


def test_papermill_with_a_lower_case_parameter_stops_the_notebook(tmp_path):
    """End to end: ``papermill book/00_gradient_flow.ipynb out.ipynb -p seed 3`` ran at SEED
    0 and exited 0; now the chapter's start cell refuses it (a few CPU seconds: the kernel
    stops before any experiment)."""
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "DLTHEORY_SCALE": "smoke", "DLTHEORY_RESULTS_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "papermill", str(repo / "book" /
                        "00_gradient_flow.ipynb"), str(tmp_path / "out.ipynb"), "-p", "seed",
                        "3", "--log-level", "ERROR", "--cwd", str(repo / "book")],
                       env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode != 0
    assert "unknown parameter seed (did you mean SEED?)" in r.stdout + r.stderr
    assert not list(tmp_path.glob("*.json"))                  # no ledger of a wrong run


def test_an_injected_notebook_constant_is_no_parameter():
    """``-p SPEC ...`` would replace the install cell's constant: ``ignore`` spares such
    constants in the namespace, never a name papermill injected."""
    from dltheory import chapter_config

    C = config_class("gradient_flow")
    ns = {"SPEC": "git+https://example", "SEED": 0}
    chapter_config.check_parameters(ns, C, ignore=("SPEC",))
    with pytest.raises(ValueError, match="unknown parameter SPEC "):
        chapter_config.check_parameters(ns, C, ignore=("SPEC",), injected=["SPEC"])
