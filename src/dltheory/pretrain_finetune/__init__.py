"""Chapter 2: how pretraining shapes the inductive bias of fine-tuning.

Diagonal linear networks trained by PT then FT; the implicit-bias potentials, their exact
minimisers, the (ℓ-order, PD) regimes and the replica theory of the FT generalisation error.
"""

from .. import toolkit_getattr as _toolkit_getattr
from .bias import (
    BiasSolution,
    ft_scales,
    h,
    min_l1,
    min_l2,
    potential,
    solve_bias,
    solve_bias_slsqp,
    tilted_params,
)
from .config import CI_SETTINGS, DOMAIN, Config, sample_setting
from .data import (
    FULL_OVERLAP,
    NEW_FEATURES,
    SUBSET,
    Task,
    gen_error,
    make_tasks,
    rel_error,
    sample_design,
    sample_teachers,
)
from .experiments import REGIMES, FTRun, learned_l_pd, run_exact, run_gd_ft
from .modarith import ModArithResult, TinyTransformer, pt_then_ft
from .model import (
    DiagWeights,
    GDResult,
    flow_weights,
    flow_weights_from_beta,
    init_scales,
    invariants,
    readout_reinit,
    rebalance,
    train_gd,
    train_gd_loop,
    uniform_init,
)
from .regimes import CORNERS, corner_values, l_order_pd, l_order_pd_fd, l_order_x
from .replica import (
    ReplicaResult,
    ScalarChannel,
    ft_atoms,
    gauss_hermite,
    panel_nodes,
    prox,
    prox_deriv,
    replica_error,
    replica_pt_error,
)
from .representations import ensd, participation_ratio
from .vision import (
    FTOutcome,
    MLPParams,
    binary_task,
    finetune_mlp,
    pretrain_mlp,
    shift_task,
)

__all__ = [
    "CI_SETTINGS", "DOMAIN", "Config", "sample_setting", "make_tasks", "panel_nodes", "shift_task",
    "BiasSolution", "ft_scales", "h", "min_l1", "min_l2", "potential", "solve_bias",
    "solve_bias_slsqp", "tilted_params",
    "FULL_OVERLAP", "NEW_FEATURES", "SUBSET", "Task", "gen_error", "rel_error", "sample_design",
    "sample_teachers",
    "REGIMES", "FTRun", "learned_l_pd", "run_exact", "run_gd_ft",
    "DiagWeights", "GDResult", "flow_weights", "flow_weights_from_beta", "init_scales",
    "invariants", "readout_reinit", "rebalance", "train_gd", "train_gd_loop", "uniform_init",
    "CORNERS", "corner_values", "l_order_pd", "l_order_pd_fd", "l_order_x",
    "ReplicaResult", "ScalarChannel", "ft_atoms", "gauss_hermite", "prox", "prox_deriv",
    "replica_error", "replica_pt_error",
    "ensd", "participation_ratio",
    "ModArithResult", "TinyTransformer", "pt_then_ft",
    "FTOutcome", "MLPParams", "binary_task", "finetune_mlp", "pretrain_mlp",
]


# the toolkit functions (tools.py, quadratic.py: for a reader's own model), loaded on
# first use and kept out of the chapter's verdict-deciding imports
__getattr__ = _toolkit_getattr(__name__, ("tools", "quadratic"))
