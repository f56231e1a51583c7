"""The two routes and the Hoeffding transfer as predictions that can fail, by simulation.

The bounds of ``bounds`` hold by construction when their deviations are the plug-in
``max |G|`` and ``max |T|`` of the models involved. Here the deviations are what the theorems
say they are, uniform deviations at a stated probability, and the bounds are judged on fresh
draws:

* a finite *population* of per-sample losses ``L`` (N, m), one column per model (the
  chapter's population half B, or the worst case below), stands in for the data
  distribution: R(f) is a column mean, a training set is n draws with replacement, a test
  set K draws;
* ``eps_M(delta)`` and ``eps_K(delta)`` are the (1 - delta)-quantiles of
  ``max_f |R(f) - R_S(f)|`` and ``max_f |L_test(f) - R(f)|`` over the models of the class,
  estimated on *calibration* draws;
* on independent *fresh* draws, Route B's bracket ``(T+G)(f_new) - (T+G)(f_S)`` must stay
  under its deviation term ``2 (eps_M + eps_K)`` except with probability <= 2 delta, and
  Route A's training-gap bracket ``G(f_new) - G(f_pop)`` under ``2 eps_M`` except with
  probability <= delta (coverage); the deviation term is read off ``RouteA.rhs`` /
  ``RouteB.rhs``, so a wrong constant there is seen.

**Worst case.** The brackets reach the deviation terms for a *complementary pair*: models with
per-sample losses ``l`` and ``B - l``. Then G(f_2) = -G(f_1) and T(f_2) = -T(f_1) exactly, so
Route B's bracket is ``2 (G + T)(f_1)`` and the class's deviations are ``|G(f_1)|``,
``|T(f_1)|``: the bracket equals ``2 (eps_M + eps_K)`` whenever both deviations are at their
quantiles with the same sign. With the central limit theorem (G, T independent, standard
deviations s / sqrt(n), s / sqrt(K)) the tightness of the bounds on that pair is

    Route B:  q_{1-2 delta}(bracket) / (2 (eps_M + eps_K))
                  = z_{1-2 delta} sqrt(1/n + 1/K) / (z_{1-delta/2} (1/sqrt(n) + 1/sqrt(K))),
    Route A:  q_{1-delta}(G bracket) / (2 eps_M) = z_{1-delta} / z_{1-delta/2},

independent of the loss distribution (``tightness_route_b``, ``tightness_route_a``): a
deviation term too small by a factor 2 doubles the measured ratio, one too large halves it.

**Hoeffding.** Route A needs the test-set event ``T(f_new) - T(f_old) <= Delta_R / 2``; with
per-sample differences D in [-B, B] Hoeffding bounds its failure by
``2 exp(-K Delta_R^2 / (8 B^2))``. The worst case for the bound is D = +-B with probability
1/2 each, whose failure probability is an exact binomial tail (``rademacher_tail``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import validation
from ..runtime import as_generator
from . import bounds


def _means(L: np.ndarray, size: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Column means of ``draws`` samples of ``size`` rows of L drawn with replacement:
    (draws, m), in chunks of at most ~4M drawn indices."""
    N = L.shape[0]
    out = np.empty((draws, L.shape[1]))
    chunk = max(1, min(draws, 4_000_000 // size))
    for i in range(0, draws, chunk):
        k = min(chunk, draws - i)
        idx = rng.integers(0, N, size=(k, size)) + (N * np.arange(k))[:, None]
        counts = np.bincount(idx.ravel(), minlength=k * N).reshape(k, N)
        out[i:i + k] = counts @ L / size
    return out


@dataclass(frozen=True)
class Draws:
    """Risks of every model (columns) on ``draws`` independent (S, test) pairs: train
    (draws, m) and test (draws, m), with the population risks pop (m,)."""

    train: np.ndarray
    test: np.ndarray
    pop: np.ndarray

    @property
    def G(self) -> np.ndarray:
        return self.pop - self.train

    @property
    def T(self) -> np.ndarray:
        return self.test - self.pop

    def risks(self, d: int, j: int) -> bounds.Risks:
        return bounds.Risks(float(self.train[d, j]), float(self.pop[j]), float(self.test[d, j]))


def draw(L, *, n: int, K: int, draws: int, seed) -> Draws:
    """``draws`` independent training sets (n) and test sets (K) from the population L."""
    L = validation.array("L", L)
    if L.ndim != 2 or L.shape[0] < 2:
        raise ValueError(f"L must be (N >= 2, m), got {L.shape}")
    n = validation.integer("n", n, lo=1)
    K = validation.integer("K", K, lo=1)
    draws = validation.integer("draws", draws, lo=2)
    rng = as_generator(seed)
    return Draws(_means(L, n, draws, rng), _means(L, K, draws, rng), L.mean(0))


def uniform_deviations(cal: Draws, cols, delta: float) -> tuple[float, float]:
    """(eps_M, eps_K): the (1 - delta)-quantiles of max_f |G(f)| and max_f |T(f)| over the
    models ``cols``, from calibration draws."""
    delta = validation.real("delta", delta, lo=0, hi=1, lo_open=True, hi_open=True)
    cols = list(cols)
    return (float(np.quantile(np.abs(cal.G[:, cols]).max(1), 1 - delta)),
            float(np.quantile(np.abs(cal.T[:, cols]).max(1), 1 - delta)))


def route_b_draws(fresh: Draws, old: int, f_S: int, new: int, eps_M: float, eps_K: float):
    """Route B on every fresh draw: (bracket, deviation term read off ``RouteB.rhs``, lhs,
    rhs), arrays (draws,)."""
    out = np.empty((fresh.train.shape[0], 4))
    for d in range(len(out)):
        r_old, r_S, r_new = (fresh.risks(d, j) for j in (old, f_S, new))
        rb = bounds.route_b(r_old, r_S, r_new)
        rb = bounds.RouteB(rb.delta_test, rb.delta_erm, rb.bracket, rb.lhs, eps_M, eps_K)
        out[d] = (rb.bracket, rb.rhs + rb.delta_test + rb.delta_erm, rb.lhs, rb.rhs)
    return out.T


def route_a_draws(fresh: Draws, old: int, f_pop: int, new: int, eps_M: float):
    """Route A on every fresh draw: (G bracket, deviation term read off ``RouteA.rhs``,
    test bracket, Delta_R / 2, lhs, rhs), arrays (draws,)."""
    out = np.empty((fresh.train.shape[0], 6))
    for d in range(len(out)):
        r_old, r_pop, r_new = (fresh.risks(d, j) for j in (old, f_pop, new))
        ra = bounds.route_a(r_old, r_pop, r_new, K=1, B=1.0e9)
        ra = bounds.RouteA(ra.delta_R, ra.delta_erm, ra.gap_bracket, ra.test_bracket, ra.lhs,
                           eps_M, ra.K, ra.B)
        out[d] = (ra.gap_bracket, ra.rhs + ra.delta_R / 2 + ra.delta_erm, ra.test_bracket,
                  ra.delta_R / 2, ra.lhs, ra.rhs)
    return out.T


def tightness_route_b(n: int, K: int, delta: float) -> float:
    """CLT prediction of q_{1-2 delta}(bracket) / (2 (eps_M + eps_K)) on a complementary pair."""
    z = stats.norm.ppf
    return float(z(1 - 2 * delta) * math.sqrt(1 / n + 1 / K)
                 / (z(1 - delta / 2) * (1 / math.sqrt(n) + 1 / math.sqrt(K))))


def tightness_route_a(delta: float) -> float:
    """CLT prediction of q_{1-delta}(G bracket) / (2 eps_M) on a complementary pair."""
    z = stats.norm.ppf
    return float(z(1 - delta) / z(1 - delta / 2))


def complementary(losses: np.ndarray, B: float) -> np.ndarray:
    """The worst-case pair for the routes' deviation terms: columns (l, B - l)."""
    losses = validation.array("losses", losses, lo=0, hi=B).ravel()
    return np.stack([losses, B - losses], axis=1)


@dataclass(frozen=True)
class RouteSim:
    """Coverage and tightness of one route on one population (see the module doc)."""

    coverage_fail: float   # fraction of fresh draws whose bracket exceeds the deviation term
    allowed: float         # the theorem's failure probability (delta or 2 delta)
    tightness: float       # quantile of the bracket / deviation term
    predicted: float       # its CLT prediction (worst case only; nan otherwise)
    eps_M: float
    eps_K: float
    draws: int


def _route(cal: Draws, fresh: Draws, route: str, old: int, fx: int, new: int,
           delta: float, worst: bool, n: int, K: int) -> RouteSim:
    eps_M, eps_K = uniform_deviations(cal, [fx, new], delta)
    if route == "B":
        br, dev, *_ = route_b_draws(fresh, old, fx, new, eps_M, eps_K)
        q, allowed = 1 - 2 * delta, 2 * delta
        pred = tightness_route_b(n, K, delta) if worst else float("nan")
    else:
        br, dev, *_ = route_a_draws(fresh, old, fx, new, eps_M)
        q, allowed = 1 - delta, delta
        pred = tightness_route_a(delta) if worst else float("nan")
    return RouteSim(float((br > dev).mean()), allowed, float(np.quantile(br, q) / dev.mean()),
                    pred, eps_M, eps_K, int(fresh.train.shape[0]))


def simulate_routes(L: np.ndarray, *, n: int, K: int, delta: float, draws: int, seed
                    ) -> dict[str, RouteSim]:
    """Coverage and tightness of both routes on one chapter instance and on its worst case.

    Columns of L (per-sample losses on the population): old, f_pop, f_S, f_new, then the
    complementary pair (l, B - l) built from f_new's losses. ``draws`` calibration draws
    give eps_M, eps_K (over the two models of each bracket); as many fresh draws judge the
    bounds. Keys: "A", "B" (the instance: f_X = f_pop, f_S), "A_worst", "B_worst" (the pair:
    old = new = l, f_X = B - l; old cancels from both brackets)."""
    L = validation.array("L", L)
    if L.ndim != 2 or L.shape[1] != 6:
        raise ValueError(f"L must be (N, 6) (old, pop, S, new, l, B - l), got {L.shape}")
    rng = as_generator(seed)
    cal = draw(L, n=n, K=K, draws=draws, seed=rng)
    fresh = draw(L, n=n, K=K, draws=draws, seed=rng)
    return {"A": _route(cal, fresh, "A", 0, 1, 3, delta, False, n, K),
            "B": _route(cal, fresh, "B", 0, 2, 3, delta, False, n, K),
            "A_worst": _route(cal, fresh, "A", 4, 5, 4, delta, True, n, K),
            "B_worst": _route(cal, fresh, "B", 4, 5, 4, delta, True, n, K)}


def failure_count(K: int, margin: float, B: float) -> int:
    """The largest number of +B values among K (each +-B) whose mean does *not* exceed
    ``margin``: the transfer fails iff the count is above it. The mean exceeds ``margin``
    iff the count exceeds ``K (1 + margin / B) / 2``; when that threshold is an integer (at
    K = 10 000 and Delta_R = 2 B x / sqrt(K) with x = 1, 1.5, 2, 2.5 it is) a tie is not a
    failure, so a threshold within float round-off (1e-9 relative) of an integer is that
    integer, whichever side of it the floating-point product lands on."""
    K = validation.integer("K", K, lo=1)
    t = K * (1 + margin / B) / 2
    r = round(t)
    return int(r) if abs(t - r) <= 1e-9 * max(1.0, abs(t)) else math.floor(t)


def rademacher_tail(K: int, margin: float, B: float) -> float:
    """Exact P(mean of K values +-B (probability 1/2 each) > margin): a binomial tail,
    ties (mean exactly ``margin``) excluded (``failure_count``)."""
    return float(stats.binom.sf(failure_count(K, margin, B), K, 0.5))


def simulate_hoeffding(K: int, delta_R, B: float, *, draws: int, seed) -> np.ndarray:
    """Failure frequency of the transfer event ``mean_K(D) - E D <= Delta_R / 2`` for the
    worst-case D = +-B, over ``draws`` simulated test sets of size K, at each Delta_R
    (counts of +B values compared in integers, so a tie is not a failure)."""
    rng = as_generator(seed)
    b = rng.binomial(K, 0.5, size=validation.integer("draws", draws, lo=2))
    return np.array([float((b > failure_count(K, d / 2, B)).mean())
                     for d in np.atleast_1d(delta_R)])


def simulate_transfer_event(diff: np.ndarray, K: int, delta_R: float, *, draws: int,
                            seed) -> float:
    """Failure frequency of ``mean_K(D) - E D > Delta_R / 2`` for the per-sample loss
    differences ``diff`` = l(f_new) - l(f_old) of a chapter instance (its population half
    B), over ``draws`` test sets of size K drawn with replacement."""
    diff = validation.array("diff", diff).ravel()
    m = _means(diff[:, None], validation.integer("K", K, lo=1), draws, as_generator(seed))[:, 0]
    return float((m - diff.mean() > delta_R / 2).mean())


def simulate_certificate(diff: np.ndarray, K: int, B: float, delta: float, *, draws: int,
                         seed) -> float:
    """Failure frequency of the held-out certificate (``bounds.heldout_certificate``) for
    one fixed pair: over ``draws`` test sets of size K drawn with replacement from the
    per-sample loss differences ``diff`` = l(f_new) - l(f_old) (the chapter's population
    half B), how often its upper end lies below the population difference ``diff.mean()``.
    The certificate promises at most ``delta``."""
    diff = validation.array("diff", diff, lo=-B, hi=B).ravel()
    K = validation.integer("K", K, lo=2)
    both = np.stack([diff, diff**2], axis=1)
    m = _means(both, K, validation.integer("draws", draws, lo=2), as_generator(seed))
    sd = np.sqrt(np.maximum(m[:, 1] - m[:, 0] ** 2, 0.0) * K / (K - 1))
    mean = np.clip(m[:, 0], -B, B)
    up = np.array([bounds.heldout_certificate(float(a), float(s), K, B, delta).upper
                   for a, s in zip(mean, sd, strict=True)])
    return float((up < diff.mean()).mean())
