"""The two routes from L_test(f_old) to L_test(f_new) as exact telescoping identities, the
Hoeffding transfer of Route A, and the norm-based uniform-deviation proxy.

Risks of a model f: R_S (training set, n samples), R (population proxy), L_test (test set,
K samples). G(f) = R(f) - R_S(f) (training gap), T(f) = L_test(f) - R(f) (test sampling
error). Jumpboards: f_pop (Route A), f_S (Route B); margins

    Delta_R      = R(f_old) - R(f_pop)              population margin
    Delta_test   = L_test(f_old) - L_test(f_S)      finite test margin
    Delta_ERM^X  = R_S(f_X) - R_S(f_new) >= 0       Condition 2 (fallback) for X in {pop, S}

Route A (exact):  L_test(f_new) - L_test(f_old) = -Delta_R - Delta_ERM^pop
                                                  + [G(f_new) - G(f_pop)] + [T(f_new) - T(f_old)]
   bound:         L_test(f_new) <= L_test(f_old) - Delta_R/2 - Delta_ERM^pop + 2 eps_M
                  with probability >= 1 - delta - 2 exp(-K Delta_R^2 / (8 B^2)).
Route B (exact):  L_test(f_new) - L_test(f_old) = -Delta_test - Delta_ERM^S
                                                  + [(T+G)(f_new) - (T+G)(f_S)]
   bound:         L_test(f_new) <= L_test(f_old) - Delta_test - Delta_ERM^S + 2 (eps_M + eps_K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import validation


@dataclass(frozen=True)
class Risks:
    """The three risks of one model: training, population proxy (nan if none), test."""

    train: float
    pop: float
    test: float

    @property
    def G(self) -> float:
        return self.pop - self.train

    @property
    def T(self) -> float:
        return self.test - self.pop

    @property
    def TG(self) -> float:
        """(T + G)(f) = L_test(f) - R_S(f): needs no population."""
        return self.test - self.train


def fallback_select(candidates: dict[str, Risks]) -> str:
    """Condition 2's fallback rule: the name of the candidate with the smallest R_S.

    With the jumpboards among the candidates, Delta_ERM >= 0 holds by construction."""
    if not candidates:
        raise ValueError("candidates must not be empty")
    return min(candidates, key=lambda k: candidates[k].train)


@dataclass(frozen=True)
class RouteA:
    delta_R: float
    delta_erm: float
    gap_bracket: float     # G(f_new) - G(f_pop)
    test_bracket: float    # T(f_new) - T(f_old)
    lhs: float             # L_test(f_new) - L_test(f_old), measured directly
    eps_M: float           # plug-in max(|G(f_new)|, |G(f_pop)|)
    K: int
    B: float

    @property
    def identity_sum(self) -> float:
        return -self.delta_R - self.delta_erm + self.gap_bracket + self.test_bracket

    @property
    def rhs(self) -> float:
        """Route A bound on L_test(f_new) - L_test(f_old) with the plug-in eps_M."""
        return -self.delta_R / 2 - self.delta_erm + 2 * self.eps_M

    @property
    def failure_prob(self) -> float:
        return hoeffding_failure(self.K, self.delta_R, self.B)

    @property
    def K_needed(self) -> float:
        return hoeffding_K(self.delta_R, self.B, 0.05)


@dataclass(frozen=True)
class RouteB:
    delta_test: float
    delta_erm: float
    bracket: float         # (T+G)(f_new) - (T+G)(f_S)
    lhs: float
    eps_M: float           # plug-in max |G| over {f_new, f_S}
    eps_K: float           # plug-in max |T| over {f_new, f_S}

    @property
    def identity_sum(self) -> float:
        return -self.delta_test - self.delta_erm + self.bracket

    @property
    def rhs(self) -> float:
        return -self.delta_test - self.delta_erm + 2 * (self.eps_M + self.eps_K)


def route_a(old: Risks, f_pop: Risks, new: Risks, *, K: int, B: float) -> RouteA:
    """Route A terms from measured risks (needs the population proxy)."""
    return RouteA(
        delta_R=old.pop - f_pop.pop,
        delta_erm=f_pop.train - new.train,
        gap_bracket=new.G - f_pop.G,
        test_bracket=new.T - old.T,
        lhs=new.test - old.test,
        eps_M=max(abs(new.G), abs(f_pop.G)),
        K=int(K), B=float(B),
    )


def route_b(old: Risks, f_S: Risks, new: Risks) -> RouteB:
    """Route B terms from measured risks (only S and T are needed for the identity; the
    plug-in eps_M / eps_K use the population proxy when it is there)."""
    eps_M = max(abs(new.G), abs(f_S.G))
    eps_K = max(abs(new.T), abs(f_S.T))
    return RouteB(
        delta_test=old.test - f_S.test,
        delta_erm=f_S.train - new.train,
        bracket=new.TG - f_S.TG,
        lhs=new.test - old.test,
        eps_M=eps_M, eps_K=eps_K,
    )


def hoeffding_exponent(K: int, delta_R: float, B: float) -> float:
    """K Delta_R^2 / (8 B^2): Hoeffding's exponent for a mean of K differences in [-B, B]
    (range 2B) exceeding its expectation by Delta_R / 2, i.e. 2 K (Delta_R/2)^2 / (2B)^2."""
    return K * delta_R**2 / (8.0 * B**2)


def hoeffding_failure(K: int, delta_R: float, B: float) -> float:
    """2 exp(-K Delta_R^2 / (8 B^2)): probability that Route A's test transfer fails
    (capped at 1; equal to 1 when Delta_R <= 0)."""
    K = validation.integer("K", K, lo=1)
    B = validation.real("B", B, lo=0, lo_open=True)
    delta_R = validation.real("delta_R", delta_R, lo=-B, hi=B)
    if delta_R <= 0:
        return 1.0
    return min(1.0, 2.0 * math.exp(-hoeffding_exponent(K, delta_R, B)))


def hoeffding_K(delta_R: float, B: float, delta: float = 0.05) -> float:
    """Test-set size for failure probability ``delta``: K = 8 B^2 log(2/delta) / Delta_R^2."""
    B = validation.real("B", B, lo=0, lo_open=True)
    delta = validation.real("delta", delta, lo=0, hi=1, lo_open=True, hi_open=True)
    delta_R = validation.real("delta_R", delta_R, lo=-B, hi=B)
    if delta_R <= 0:
        return math.inf
    return math.log(2.0 / delta) / hoeffding_exponent(1, delta_R, B)


def norm_bound_proxy(n, *, a: float, b: float, B_z: float, L_loss: float = 1.0,
                     L_top: float = 1.0, B: float = 5.0, delta: float = 0.05):
    """Order-of-magnitude uniform deviation eps(n) for the block class
    {V relu(U .) : ||U||_F <= a, ||V||_F <= b} composed with an L_top-Lipschitz f_top and an
    L_loss-Lipschitz loss (vector contraction + Golowich-Rakhlin-Shamir, depth 2):

        eps(n) = 2 * sqrt(2) L_loss L_top a b B_z (sqrt(4 log 2) + 1) / sqrt(n)
                 + B sqrt(log(2/delta) / (2 n)).

    Vacuous at tutorial scale; what matters is the n^{-1/2} decay. ``n`` may be an array."""
    import numpy as np

    n = validation.array("n", n, lo=1)
    for name, v in (("a", a), ("b", b), ("B_z", B_z), ("L_loss", L_loss), ("L_top", L_top)):
        validation.real(name, v, lo=0)
    validation.real("B", B, lo=0, lo_open=True)
    validation.real("delta", delta, lo=0, hi=1, lo_open=True, hi_open=True)
    rad = math.sqrt(2) * L_loss * L_top * a * b * B_z * (math.sqrt(4 * math.log(2)) + 1)
    return 2 * rad / np.sqrt(n) + B * np.sqrt(math.log(2 / delta) / (2 * n))


@dataclass(frozen=True)
class Certificate:
    """What a held-out test set certifies about one fixed pair (f_old, f_new): with
    probability >= 1 - delta over the K test samples, R(f_new) - R(f_old) <= upper (and, the
    other one-sided statement, >= lower), where D = l(f_new) - l(f_old) in [-B, B]."""

    mean: float    # L_test(f_new) - L_test(f_old), the mean of D over the test set
    term: float    # the one-sided deviation for this pair (a per-pair eps_K)
    K: int
    delta: float

    @property
    def upper(self) -> float:
        return self.mean + self.term

    @property
    def lower(self) -> float:
        return self.mean - self.term


def heldout_term(sd: float, K: int, B: float, delta: float) -> float:
    """One-sided empirical-Bernstein deviation (Maurer & Pontil 2009, Thm 4) of a mean of K
    i.i.d. values in [-B, B] (range 2B) with sample s.d. ``sd`` (ddof = 1), at level delta:

        sqrt(2 sd^2 log(2/delta) / K) + 7 (2B) log(2/delta) / (3 (K - 1)).

    Valid because f_old and f_new are fixed before the test set is drawn (both depend on S
    only): no uniformity over the class is needed, unlike the theorems' eps_K."""
    K = validation.integer("K", K, lo=2)
    B = validation.real("B", B, lo=0, lo_open=True)
    sd = validation.real("sd", sd, lo=0)
    delta = validation.real("delta", delta, lo=0, hi=1, lo_open=True, hi_open=True)
    log_term = math.log(2.0 / delta)
    return math.sqrt(2.0 * sd**2 * log_term / K) + 7.0 * 2.0 * B * log_term / (3.0 * (K - 1))


def heldout_certificate(mean: float, sd: float, K: int, B: float,
                        delta: float) -> Certificate:
    """The held-out test-set certificate of one fixed pair (``heldout_term``)."""
    mean = validation.real("mean", mean, lo=-B, hi=B)
    return Certificate(float(mean), heldout_term(sd, K, B, delta), int(K), float(delta))
