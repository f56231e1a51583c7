"""Edges of dltheory.pretrain_finetune.replica that the solver tests leave open (written
against the mutants that survived scripts/mutation_score.py): a channel without mass,
theta_for started from a guess far from the root, and the two-stage FT atoms.

Each test names its independent fact: the defining equation E[eta'] = alpha checked at the
returned theta (and its uniqueness: E[eta'] decreases in theta), a domain statement, or
the atoms' weights forming a probability distribution."""

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


def test_two_stage_ft_atoms_are_a_distribution_over_the_pt_noise():
    """With a finite PT sample (alpha_PT = 0.6) the FT atoms run over (category, Z'): their
    weights are the four categories' probabilities times quadrature weights of E over Z'
    (each summing to 1), so they sum to 1 and give E[B_FT^2] of the task's atoms; the PT
    stage they come from is the PT replica prediction replica_pt_error(task, 0.6, c_PT)."""
    from dltheory.pretrain_finetune import Task
    from dltheory.pretrain_finetune.replica import ft_atoms, replica_pt_error

    task = Task(0.2, 0.5, 0.1)
    P, B, C, pt = ft_atoms(task, 1e-3, 0.0, 1e-3, alpha_pt=0.6)
    p, _, b_ft = task.atoms()
    assert P.sum() == pytest.approx(1.0, abs=1e-4)
    assert P @ B**2 == pytest.approx(p @ b_ft**2, rel=1e-4)
    assert np.all(np.isfinite(C) & (C > 0))
    ref = replica_pt_error(task, 0.6, 1e-3)
    assert (pt.tau, pt.theta) == pytest.approx((ref.tau, ref.theta), rel=1e-12)
