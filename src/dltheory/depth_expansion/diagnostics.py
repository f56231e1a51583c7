"""Diagnostics behind the paper's assumptions: the activation-gradient covariance
(Assumption 3, "near-diagonal") and the regularity of the normalisation (non-degenerate
RMS versus the "epsilon-naive" constant).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .. import validation


@dataclass(frozen=True)
class CovMetrics:
    """Metrics of Sigma_g = Cov(g), g: (n, d).

    ``off_energy``: ``||Sigma - diag Sigma||_F^2 / ||Sigma||_F^2`` (0 = diagonal, -> 1 =
    dense); ``mean_abs_corr``: mean ``|corr_ij|`` over ``i != j``; ``top_ratio``:
    ``lambda_max / (tr Sigma / d)`` (1 = isotropic, d = rank one)."""

    off_energy: float
    mean_abs_corr: float
    top_ratio: float
    d: int


def grad_covariance(g: torch.Tensor) -> np.ndarray:
    """Sigma_g (d, d) from per-sample gradients g (n, d); for conv activations
    (n, c, H, W) the *channel* covariance with positions as extra observations."""
    if g.dim() == 4:
        g = g.permute(0, 2, 3, 1).reshape(-1, g.shape[1])
    if g.dim() != 2 or g.shape[0] < 2:
        raise ValueError(f"g must be (n >= 2, d) or (n, c, H, W), got {tuple(g.shape)}")
    x = g.detach().cpu().double().numpy()
    return np.cov(x, rowvar=False)


def cov_metrics(sigma: np.ndarray) -> CovMetrics:
    """Near-diagonality metrics of a covariance matrix (see ``CovMetrics``)."""
    sigma = np.asarray(sigma, dtype=float)
    if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1]:
        raise ValueError(f"sigma must be square, got {sigma.shape}")
    d = sigma.shape[0]
    diag = np.diag(np.diag(sigma))
    tot = float((sigma**2).sum())
    off = float(((sigma - diag) ** 2).sum()) / tot if tot > 0 else 0.0
    sd = np.sqrt(np.clip(np.diag(sigma), 1e-300, None))
    corr = sigma / np.outer(sd, sd)
    mac = float(np.abs(corr[~np.eye(d, dtype=bool)]).mean()) if d > 1 else 0.0
    lam = float(np.linalg.eigvalsh(sigma)[-1])
    tr = float(np.trace(sigma))
    return CovMetrics(off, mac, lam / (tr / d) if tr > 0 else float("nan"), d)


def correlation(sigma: np.ndarray) -> np.ndarray:
    """Correlation matrix of a covariance (for heat maps)."""
    sd = np.sqrt(np.clip(np.diag(sigma), 1e-300, None))
    return sigma / np.outer(sd, sd)


def rms(z: torch.Tensor) -> np.ndarray:
    """RMS(z_i) = sqrt(mean_j z_ij^2) per sample (n,), over all non-batch axes."""
    return z.detach().flatten(1).pow(2).mean(1).sqrt().cpu().numpy()


def rmsnorm_jacobian_bound(gain: torch.Tensor, r: float, eps: float) -> float:
    """Lipschitz bound of RMSNorm on {RMS(z) >= r}: ||g||_inf / sqrt(r^2 + eps).

    The Jacobian is J = (sqrt(d)/s) diag(g) (I - z z^T / s^2), s^2 = ||z||^2 + d eps, so
    ||J||_2 <= ||g||_inf sqrt(d) / s = ||g||_inf / sqrt(RMS(z)^2 + eps)."""
    r = validation.array("r", r, lo=0)
    eps = validation.real("eps", eps, lo=0, lo_open=True)
    out = float(gain.detach().abs().max()) / np.sqrt(r**2 + eps)
    return float(out) if out.ndim == 0 else out


def eps_naive_bound(gain: torch.Tensor, eps: float) -> float:
    """The epsilon-naive constant ||g||_inf / sqrt(eps) (no lower bound on ||z|| assumed)."""
    return rmsnorm_jacobian_bound(gain, 0.0, eps)


def rmsnorm_jacobian_norms(norm: torch.nn.Module, u: torch.Tensor) -> np.ndarray:
    """Measured ||J_N(u_i)||_2 (largest singular value of the exact Jacobian, by autograd)
    of the normalisation ``norm`` at each input u_i: u (n, d) -> (n,)."""
    from torch.func import jacrev, vmap

    if u.dim() != 2:
        raise ValueError(f"u must be (n, d), got {tuple(u.shape)}")
    with torch.no_grad():
        J = vmap(jacrev(lambda x: norm(x[None])[0]))(u.detach())
        return torch.linalg.matrix_norm(J, ord=2).cpu().double().numpy()


def lowrank_offdiag(d: int, r: int) -> float:
    """Low-rank null for the off-diagonal energy: Sigma = A A^T with A (d, r) Gaussian has
    E Sigma_ii^2 = r^2 + 2r and E Sigma_ij^2 = r (i != j), so its off-diagonal share of
    ||Sigma||_F^2 is about (d - 1) / (d - 1 + r + 2). A covariance of rank ~r (e.g. r = 9
    for 10-class cross-entropy gradients) sits near this value without any structure."""
    d = validation.integer("d", d, lo=1)
    r = validation.integer("r", r, lo=1)
    return (d - 1) / (d - 1 + r + 2)


def simulate_offdiag(d: int, r: int, *, draws: int, seed) -> tuple[float, float]:
    """Mean and standard error of the off-diagonal share of ||Sigma||_F^2 over ``draws``
    random rank-r covariances Sigma = A A^T, A (d, r) standard Gaussian (the simulation that
    ``lowrank_offdiag`` approximates)."""
    from ..runtime import as_generator

    d = validation.integer("d", d, lo=1)
    r = validation.integer("r", r, lo=1)
    rng = as_generator(seed)
    draws = validation.integer("draws", draws, lo=2)
    chunk = max(1, 4_000_000 // (d * d))
    share = np.empty(draws)
    for i in range(0, draws, chunk):
        A = rng.standard_normal((min(chunk, draws - i), d, r))
        S = A @ A.transpose(0, 2, 1)
        tot = (S**2).sum((1, 2))
        diag = (np.diagonal(S, axis1=1, axis2=2) ** 2).sum(1)
        share[i:i + len(A)] = 1 - diag / tot
    return float(share.mean()), float(share.std(ddof=1) / np.sqrt(len(share)))


def rotation_offdiag(sigma: np.ndarray) -> float:
    """Rotation null: the expected off-diagonal share of ||Q Sigma Q^T||_F^2 for a uniformly
    random rotation Q, i.e. a covariance with Sigma's spectrum and no preferred basis.
    With E (Q Sigma Q^T)_ii^2 = (2 tr Sigma^2 + (tr Sigma)^2) / (d (d + 2)) it is

        1 - (2 + PR) / (d + 2),   PR = (tr Sigma)^2 / tr Sigma^2 (participation ratio).

    An isotropic Sigma (PR = d) gives 0: it is diagonal in every basis, so only a spectrum
    whose null is above a threshold can show that the measured basis is special."""
    sigma = np.asarray(sigma, dtype=float)
    if sigma.ndim != 2 or sigma.shape[0] != sigma.shape[1]:
        raise ValueError(f"sigma must be square, got {sigma.shape}")
    d = sigma.shape[0]
    tr2 = float((sigma**2).sum())
    if tr2 <= 0:
        raise ValueError("sigma must not be zero")
    pr = float(np.trace(sigma)) ** 2 / tr2
    return 1.0 - (2.0 + pr) / (d + 2.0)


def simulate_rotation_offdiag(sigma: np.ndarray, *, draws: int, seed) -> tuple[float, float]:
    """Mean and s.e. of the off-diagonal share of Q Sigma Q^T over ``draws`` Haar rotations
    (what ``rotation_offdiag`` computes in closed form)."""
    from scipy.stats import special_ortho_group

    from ..runtime import as_generator

    sigma = np.asarray(sigma, dtype=float)
    rng = as_generator(seed)
    qs = special_ortho_group.rvs(sigma.shape[0], size=validation.integer("draws", draws, lo=2),
                                 random_state=rng)
    S = qs @ sigma @ qs.transpose(0, 2, 1)
    share = 1 - (np.diagonal(S, axis1=1, axis2=2) ** 2).sum(1) / (S**2).sum((1, 2))
    return float(share.mean()), float(share.std(ddof=1) / np.sqrt(draws))
