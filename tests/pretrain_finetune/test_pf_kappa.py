"""Section 9: the first-layer shrink kappa is the lambda lever, and what the diagonal theory
predicts for it per task; the power calculation beside the stand-in's sign claims."""

import numpy as np
import pytest

from dltheory.pretrain_finetune import bias, checks, experiments, model
from dltheory.pretrain_finetune.config import Config


@pytest.mark.parametrize("c", [1e-3, 1.0])
@pytest.mark.parametrize(("kappa", "lam0"), [(0.25, 0.0), (0.25, 1.0), (0.5, -0.5), (1.2, 0.0)])
def test_shrunk_first_layer_has_the_scales_of_lambda_eff(c, kappa, lam0):
    """The c_d of the shrunk network (from its weights) agree with those of the network
    pretrained at lambda_eff, and with the formula bias.ft_scales at lambda_eff."""
    beta = np.random.default_rng(0).standard_normal(40)
    lam_eff = float(model.kappa_lambda_eff(kappa, lam0))
    assert -1 <= lam_eff <= 1
    shrunk = model.network_ft_scales(beta, c, lam0, 1e-3, kappa=kappa)
    np.testing.assert_allclose(shrunk, model.network_ft_scales(beta, c, lam_eff, 1e-3), rtol=1e-12)
    np.testing.assert_allclose(shrunk, bias.ft_scales(beta, c, lam_eff, 1e-3), rtol=1e-12)


def test_kappa_one_changes_nothing():
    beta = np.linspace(-2, 2, 9)
    np.testing.assert_array_equal(model.network_ft_scales(beta, 0.1, 0.3, 0.2, kappa=1.0),
                                  model.network_ft_scales(beta, 0.1, 0.3, 0.2))


def test_identity_gap_is_rounding_only():
    assert experiments.kappa_identity_gap(Config.for_scale("smoke")) < 1e-12


def test_theory_signs_at_the_default_setting():
    """At the chapter's defaults the shrink hurts full overlap and helps subset and new
    features, at lambda_0 = 0."""
    th = experiments.kappa_theory(Config.for_scale("smoke"), lam0s=(0.0,))
    assert checks.kappa_sign(th, "full overlap") == -1
    assert checks.kappa_sign(th, "subset") == 1
    assert checks.kappa_sign(th, "new features") == 1


def test_kappa_sign_zero_when_it_depends_on_lambda0():
    import pandas as pd

    th = pd.DataFrame({"task": ["subset", "subset"], "lam0": [0.0, 1.0], "change": [-0.1, 0.1]})
    assert checks.kappa_sign(th, "subset") == 0


def test_pairs_needed():
    """(1.96 + 0.84)^2 (s/m)^2: s/m = 1 needs 8 pairs, s/m = 2 needs 32; a zero mean: None."""
    x = np.array([0.0, 2.0] * 50)        # mean 1, s.d. ~1.005
    assert checks.pairs_needed(x) == 8
    assert checks.pairs_needed(x - 0.5) in (32, 33)
    assert checks.pairs_needed(np.array([-1.0, 1.0])) is None
