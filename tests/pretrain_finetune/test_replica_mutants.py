"""Edges of dltheory.pretrain_finetune.replica that the solver tests leave open (written
against the mutants that survived scripts/mutation_score.py): a channel without mass, and
theta_for started from a guess far from the root.

Each test names its independent fact: the defining equation E[eta'] = alpha checked at the
returned theta (and its uniqueness: E[eta'] decreases in theta), or a domain statement."""

import numpy as np
import pytest

from dltheory.pretrain_finetune import ScalarChannel


def _channel():
    return ScalarChannel([0.3, 0.7], [1 / np.sqrt(0.3), 0.0], [0.5, 0.5])


def test_channel_without_mass_is_refused():
    """Atom weights p are a distribution up to scale: all-zero weights (no mass) are refused;
    one positive weight is enough."""
    with pytest.raises(ValueError, match="mass"):
        ScalarChannel([0.0, 0.0], [1.0, 0.5], [1.0, 1.0])
    assert ScalarChannel([0.0, 2.0], [1.0, 0.5], [1.0, 1.0]).EB2 == pytest.approx(0.25)


@pytest.mark.parametrize("factor", [1e-6, 1e6])
def test_theta_for_from_a_far_guess_solves_the_defining_equation(factor):
    """theta(tau) solves E[eta'] = alpha; E[eta'] decreases in theta, so the root is unique
    and a guess a million times too small or too large (the bracket must widen below or
    above it) returns the same theta as the unguided search, with E[eta'] = alpha there."""
    ch, tau, alpha = _channel(), 0.8, 0.5
    theta = ch.theta_for(tau, alpha)
    assert ch.state(tau, theta)[1] == pytest.approx(alpha, abs=1e-9)
    got = ch.theta_for(tau, alpha, guess=factor * theta)
    assert got == pytest.approx(theta, rel=1e-8)
