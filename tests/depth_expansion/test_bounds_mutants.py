"""Values and domain boundaries of dltheory.depth_expansion.bounds that the theorem tests
leave open (written against the mutants that survived scripts/mutation_score.py).

Each test names the independent fact it checks: the Hoeffding inequality solved by hand,
the Golowich-Rakhlin-Shamir constant of the docstring, homogeneity of a bound in each of its
constants, or a domain edge (just inside / just outside) that the docstrings state."""

import math

import numpy as np
import pytest

from dltheory import depth_expansion as de
from dltheory.depth_expansion.bounds import (
    Risks,
    hoeffding_failure,
    hoeffding_K,
    norm_bound_proxy,
    route_a,
)

N = np.array([10.0, 100.0, 1000.0])


def hoeffding_term(n, B, delta):
    """t with 2 exp(-2 n t^2 / B^2) = delta, solved by bisection: the two-sided Hoeffding
    deviation of a mean of n losses with range B."""
    out = []
    for m in np.atleast_1d(n):
        lo, hi = 0.0, 10.0 * B
        for _ in range(200):
            t = 0.5 * (lo + hi)
            lo, hi = (t, hi) if 2 * math.exp(-2 * m * t * t / B**2) > delta else (lo, t)
        out.append(0.5 * (lo + hi))
    return np.array(out)


def test_norm_bound_proxy_hoeffding_term_alone():
    """With a = 0 (a zero-norm class: no Rademacher complexity) the proxy is exactly the
    Hoeffding deviation of a [0, B] loss at confidence delta, here found by bisection on
    2 exp(-2 n t^2 / B^2) = delta rather than from the closed form."""
    for B, delta in ((5.0, 0.05), (0.7, 0.3)):
        eps = norm_bound_proxy(N, a=0.0, b=3.0, B_z=2.0, B=B, delta=delta)
        assert np.allclose(eps, hoeffding_term(N, B, delta), rtol=1e-9)


def test_norm_bound_proxy_complexity_term_constant_and_homogeneity():
    """The complexity term is 2 (twice the Rademacher complexity, symmetrisation) times
    sqrt(2) (vector contraction) L_loss L_top times the Golowich-Rakhlin-Shamir depth-2 bound
    a b B_z (sqrt(2 log(2) * 2) + 1) / sqrt(n); and it is linear in each of a, b, B_z, L_loss
    and L_top separately (doubling one doubles it)."""
    B, delta = 1e-6, 0.5
    base = dict(a=1.5, b=0.8, B_z=2.5, L_loss=1.3, L_top=0.7)

    def cplx(**kw):
        p = {**base, **kw}
        return (norm_bound_proxy(N, **p, B=B, delta=delta) - hoeffding_term(N, B, delta))

    grs = base["a"] * base["b"] * base["B_z"] * (math.sqrt(2 * math.log(2) * 2) + 1) / np.sqrt(N)
    expect = 2 * math.sqrt(2) * base["L_loss"] * base["L_top"] * grs
    assert np.allclose(cplx(), expect, rtol=1e-9)
    for k in base:
        assert np.allclose(cplx(**{k: 2 * base[k]}), 2 * expect, rtol=1e-9), k


def test_norm_bound_proxy_defaults_are_the_chapters():
    """The chapter's figures leave L_loss, L_top and delta out: their stated meaning is a
    1-Lipschitz loss and top (L = 1) at the chapter's confidence delta = 0.05, the same
    delta as hoeffding_K's default; B's default is Config's loss cap (5)."""
    kw = dict(a=1.7, b=0.9, B_z=2.2)
    assert np.allclose(norm_bound_proxy(N, **kw),
                       norm_bound_proxy(N, **kw, L_loss=1.0, L_top=1.0, B=de.Config.B,
                                        delta=0.05), rtol=1e-12)
    assert de.Config.B == 5.0


@pytest.mark.parametrize("kw, ok", [
    ({"n": 1.0}, True), ({"n": 0.999}, False),                 # n >= 1
    ({"a": 0.0}, True), ({"a": 0.5}, True), ({"a": -1e-9}, False),   # norms >= 0
    ({"b": 0.0}, True), ({"b": 0.5}, True), ({"b": -1e-9}, False),
    ({"B_z": 0.5}, True), ({"B_z": -1e-9}, False),
    ({"L_loss": 0.5}, True), ({"L_loss": -1e-9}, False),
    ({"L_top": 0.5}, True), ({"L_top": -1e-9}, False),
    ({"B": 0.0}, False), ({"B": 0.5}, True), ({"B": -1.0}, False),   # B > 0
    ({"delta": 0.999}, True), ({"delta": 1.0}, False), ({"delta": 1.5}, False),
    ({"delta": 1e-9}, True), ({"delta": -0.1}, False),         # 0 < delta < 1
])
def test_norm_bound_proxy_domain_edges(kw, ok):
    """The docstring's domain: n >= 1 samples, norms and Lipschitz constants >= 0, a loss
    range B > 0 and a confidence delta in (0, 1), just inside and just outside each end."""
    args = {"n": 10.0, "a": 1.0, "b": 1.0, "B_z": 1.0, **kw}
    n = args.pop("n")
    if ok:
        assert np.all(np.isfinite(norm_bound_proxy(n, **args)))
    else:
        with pytest.raises(ValueError):
            norm_bound_proxy(n, **args)


def test_hoeffding_failure_is_a_probability_and_the_cap_binds():
    """2 exp(-x) exceeds 1 for x < log 2: a probability is capped at 1. With K = 1,
    Delta_R = 0.1, B = 5 the exponent is 1/20000, so the failure probability is exactly 1;
    just past the cap (exponent 1) it is 2/e."""
    assert hoeffding_failure(1, 0.1, 5.0) == 1.0
    # K = 8 B^2 / Delta_R^2 = 20000 makes the exponent K Delta_R^2 / (8 B^2) = 1
    assert math.isclose(hoeffding_failure(20000, 0.1, 5.0), 2 / math.e, rel_tol=1e-9)


@pytest.mark.parametrize("args, ok", [
    ((1, 0.1, 5.0), True), ((0, 0.1, 5.0), False),               # K >= 1
    ((10, 0.1, 0.5), True), ((10, 0.0, 1e-9), True),             # any B > 0 ...
    ((10, 0.0, 0.0), False), ((10, 0.0, -1.0), False),           # ... but not B <= 0
    ((10, -0.5, 0.5), True), ((10, -0.6, 0.5), False),           # |Delta_R| <= B
    ((10, 0.5, 0.5), True), ((10, 0.6, 0.5), False),
])
def test_hoeffding_failure_domain_edges(args, ok):
    """Differences in [-B, B] with B > 0 (a range), K >= 1 test points, and a margin
    |Delta_R| <= B (a mean of such differences cannot move more): both ends of each."""
    if ok:
        assert 0.0 <= hoeffding_failure(*args) <= 1.0
    else:
        with pytest.raises(ValueError):
            hoeffding_failure(*args)


@pytest.mark.parametrize("args, ok", [
    ((0.1, 0.5), True), ((0.1, 0.0), False), ((0.1, -1.0), False),   # B > 0,
    ((0.0, 0.0), False),                                             # even with Delta_R = 0
    ((0.1, 5.0, 0.999), True), ((0.1, 5.0, 1.0), False),             # delta in (0, 1)
    ((0.1, 5.0, 1e-9), True), ((0.1, 5.0, 0.0), False), ((0.1, 5.0, -0.1), False),
    ((-0.5, 0.5), True), ((-0.6, 0.5), False),                       # |Delta_R| <= B
    ((0.5, 0.5), True), ((0.6, 0.5), False),
])
def test_hoeffding_K_domain_edges(args, ok):
    """hoeffding_K's domain: B > 0, delta in (0, 1) open, |Delta_R| <= B; just inside and
    just outside each end."""
    if ok:
        assert hoeffding_K(*args) > 0
    else:
        with pytest.raises(ValueError):
            hoeffding_K(*args)


def test_hoeffding_K_needs_a_positive_margin():
    """With no population margin (Delta_R = 0) no finite test set certifies a drop:
    K = 8 B^2 log(2/delta) / Delta_R^2 is infinite (not a division error)."""
    assert hoeffding_K(0.0, 5.0) == math.inf
    assert hoeffding_K(-0.1, 5.0) == math.inf


def test_route_a_carries_K_and_B_into_its_failure_probability():
    """RouteA.failure_prob is Hoeffding's 2 exp(-K Delta_R^2 / (8 B^2)) for the K and B given
    to route_a (written out here), and K_needed is 8 B^2 log(40) / Delta_R^2 at delta = 0.05."""
    old, fp, new = Risks(0.5, 0.9, 0.95), Risks(0.4, 0.6, 0.62), Risks(0.3, 0.61, 0.6)
    a = route_a(old, fp, new, K=300, B=2.0)
    dR = 0.9 - 0.6
    assert math.isclose(a.failure_prob, 2 * math.exp(-300 * dR**2 / (8 * 2.0**2)), rel_tol=1e-12)
    assert math.isclose(a.K_needed, 8 * 2.0**2 * math.log(40) / dR**2, rel_tol=1e-12)
    assert isinstance(a.K, int) and isinstance(a.B, float)
