"""Depth expansion of post-normalised residual networks (arXiv 2605.08297, reconstructed).

Insert a zero-initialised residual block ``z + V relu(U z)`` (V = 0) at an intermediate
layer of a trained network; measure the first-order signal ``C = dR/dV`` at V = 0, build
jumpboard models along ``-C/||C||``, and decompose the change in test risk into the terms
of the paper's two routes.
"""

from .. import toolkit_getattr as _toolkit_getattr
from ..fitting import bootstrap_mean_ci
from . import checks, figures, rules
from .bounds import (
    Risks,
    RouteA,
    RouteB,
    fallback_select,
    hoeffding_failure,
    hoeffding_K,
    norm_bound_proxy,
    route_a,
    route_b,
)
from .config import CI_SETTINGS, DOMAIN, Config, sample_setting
from .data import Pool, image_pool, make_pool, pool_for
from .diagnostics import (
    CovMetrics,
    correlation,
    cov_metrics,
    eps_naive_bound,
    grad_covariance,
    lowrank_offdiag,
    rms,
    rmsnorm_jacobian_bound,
    rmsnorm_jacobian_norms,
)
from .experiments import (
    Expansion,
    depth_width_grid,
    expand,
    probe,
    progressive_deepening,
    risks_of,
    train,
    train_old,
)
from .models import (
    PostNormBlock,
    RMSNorm,
    SplitNet,
    ZeroInitBlock,
    insert_block,
    postnorm_convnet,
    postnorm_mlp,
)
from .signal import (
    Jumpboard,
    Signal,
    activation_grads,
    activation_grads_loop,
    clipped_ce,
    cosine,
    directional_t,
    first_order_signal,
    first_order_signal_autograd,
    jumpboard,
    null_mean_square,
    per_sample_loss,
    permutation_null,
    risk,
    risk_along,
    signal_matrix,
    slope_fd,
)

__all__ = [
    "CI_SETTINGS", "DOMAIN", "Config", "checks", "directional_t", "figures", "lowrank_offdiag",
    "rules",
    "null_mean_square", "pool_for", "rmsnorm_jacobian_norms", "sample_setting",
    "CovMetrics", "Expansion", "Jumpboard", "Pool", "PostNormBlock", "RMSNorm", "Risks",
    "RouteA", "RouteB", "Signal", "SplitNet", "ZeroInitBlock", "activation_grads",
    "activation_grads_loop", "bootstrap_mean_ci", "clipped_ce", "correlation", "cosine",
    "cov_metrics", "depth_width_grid", "eps_naive_bound", "expand", "fallback_select",
    "first_order_signal", "first_order_signal_autograd", "grad_covariance", "hoeffding_K",
    "hoeffding_failure", "image_pool", "insert_block", "jumpboard", "make_pool",
    "norm_bound_proxy", "per_sample_loss", "permutation_null", "postnorm_convnet",
    "postnorm_mlp", "probe", "progressive_deepening", "risk", "risk_along", "risks_of", "rms",
    "rmsnorm_jacobian_bound", "route_a", "route_b", "signal_matrix", "slope_fd", "train",
    "train_old",
]


# the toolkit functions (tools.py, quadratic.py: for a reader's own model), loaded on
# first use and kept out of the chapter's verdict-deciding imports
__getattr__ = _toolkit_getattr(__name__, ("tools", "quadratic"))
