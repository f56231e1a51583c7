"""Asymmetric scaling laws from sparse features (chapter 3; Sous & Winer, arXiv:2605.23591).

Reconstructed model: coordinate j of x is active with probability p_j = j^-(a1+1) and then
carries a zero-mean amplitude of variance s_j^2 = j^-(a2+1); features phi = u x with a fixed
Gaussian u; target y = w^T x with w ~ N(0, I); a linear readout fitted by ridge / min-norm
least squares or by full-batch GD. Population losses are exact (Sigma is diagonal).
"""

from .. import toolkit_getattr as _toolkit_getattr
from . import relu
from .data import (
    Entries,
    SparseSpectrum,
    sample_dense,
    sample_entries,
    sample_sparse,
    spectrum,
)
from .gd import (
    fail_probability,
    gd_diverged,
    hessian_top_eigs,
    hit_probability,
    population_step,
    run_gd,
    sample_entries_hit,
    sample_problem,
    secular_fail_probability,
    stratified_fail_probability,
)
from .linear import (
    Observed,
    brute_force_fit,
    complement_leverage,
    dense_loss_infinite_width,
    dense_ridge_path,
    feature_moments,
    gaussian_features,
    loss_bayes_readout,
    loss_infinite_data,
    loss_infinite_width,
    observe,
    peak_location,
    reduced_fit,
    ridge_path,
)
from .sweeps import (
    bayes_grid,
    dense_infinite_width,
    dense_n_sweep,
    oracle_grid,
    sparse_infinite_width,
    sparse_n_sweep,
)
from .theory import (
    compute_cost,
    de_constant,
    envelope_frontier,
    expected_floor,
    expected_observed,
    expected_observed_inf,
    floor_constant,
    frontier_exponents,
    heaps_constant,
    kappa,
    loss_de,
    overparam_loss,
    two_term_frontier_exponents,
)

__all__ = [
    "Entries", "Observed", "SparseSpectrum", "bayes_grid", "brute_force_fit", "complement_leverage", "compute_cost", "de_constant",
    "dense_infinite_width", "dense_loss_infinite_width", "dense_n_sweep", "dense_ridge_path", "envelope_frontier", "expected_floor",
    "expected_observed", "expected_observed_inf", "fail_probability", "feature_moments", "floor_constant",
    "frontier_exponents", "gaussian_features", "gd_diverged", "heaps_constant",
    "hessian_top_eigs", "hit_probability", "kappa", "loss_bayes_readout", "loss_de", "loss_infinite_data", "loss_infinite_width",
    "observe", "oracle_grid", "sparse_infinite_width", "sparse_n_sweep", "overparam_loss", "peak_location", "population_step", "reduced_fit",
    "relu", "ridge_path", "run_gd", "sample_dense", "sample_entries", "sample_problem",
    "sample_entries_hit", "sample_sparse", "secular_fail_probability", "spectrum",
    "stratified_fail_probability", "two_term_frontier_exponents",
]


# the toolkit functions (tools.py, quadratic.py: for a reader's own model), loaded on
# first use and kept out of the chapter's verdict-deciding imports
__getattr__ = _toolkit_getattr(__name__, ("tools", "quadratic"))
