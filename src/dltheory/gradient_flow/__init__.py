"""The prologue: gradient flow and gradient descent on the diagonal linear network.

Built like every chapter: ``model`` (the science: data, loss, gradient, GD, the flow, the
law), ``config`` (``Config``), ``experiments`` (``f(cfg) -> table``), ``checks``
(``f(ledger, cfg, table)``), ``figures`` (``f(table, cfg) -> Figure``) and ``mutations``
(``ENTRIES``). The names the book and the tests use are re-exported here.
"""

from . import checks, experiments, figures, model
from .config import CI_SETTINGS, DOMAIN, Config, sample_setting
from .experiments import drift_sweep, drift_task, flow_error_sweep, flow_error_task, identity_run
from .figures import scalar_explorer
from .model import (
    Problem,
    Trajectory,
    balance,
    flow,
    gd,
    gd_drift_batched,
    gd_to_flow_error,
    grad,
    loss,
    loss_gradient_ratio,
    q,
    residual_grad,
    scalar_problem,
    sparse_regression,
)

__all__ = ["checks", "experiments", "figures", "model", "CI_SETTINGS", "DOMAIN", "Config",
           "sample_setting", "drift_sweep", "drift_task", "flow_error_sweep",
           "flow_error_task", "identity_run", "scalar_explorer", "Problem", "Trajectory",
           "balance", "flow", "gd", "gd_drift_batched", "gd_to_flow_error", "grad", "loss",
           "loss_gradient_ratio", "q", "residual_grad", "scalar_problem", "sparse_regression"]
