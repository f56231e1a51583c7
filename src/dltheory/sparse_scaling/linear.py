"""Exact population losses of the linear random-feature readout, with no Monte Carlo.

Features ``phi = u x`` with a fixed Gaussian ``u`` (N, M); target ``y = w^T x`` with
``w_j ~ N(0, tau_j)`` (default tau = 1); readout ``theta`` fitted on D samples by ridge
(or min-norm least squares, mu = 0). Since Sigma = diag(lambda), the population loss of
any readout is ``l = sum_j lambda_j (beta_j - w_j)^2`` with ``beta = u^T theta``, and its
average over w is a trace. The data enter only through the Gram matrix of the observed
coordinates, ``G = X_obs^T X_obs = L L^T`` (K x K, L is K x r with r = rank X), because
``y = X_obs w_obs`` and ``Phi = X_obs V^T`` with ``V = u[:, obs]``. Writing
``Z = L^T V^T = P s Q^T`` (thin SVD, r x N), every ridge solution is

    theta = A w_obs,   A = Q diag(f) P^T L^T,   f = s/(s^2 + mu)   (f = 1/s at mu = 0),

and the target-averaged loss splits into three terms (all exact):

    E_w l = sum_obs lambda_k tau_k [(I - V^T A)(I - V^T A)^T ... ]   observed error
          + tr(S_unobs A T A^T)                                      leakage
          + T_obs = sum_unobs lambda_j tau_j                         never-seen floor,

with ``S_unobs = sum_{j unobserved} lambda_j u_j u_j^T``. One SVD per (N, D) gives the
whole ridge path, each mu in O(r^2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from .. import seeds
from .data import SparseSpectrum, check_penalties


@dataclass(frozen=True)
class Observed:
    """What the linear fit sees of one sparse data set.

    obs: (K,) observed coordinate indices; L: (K, r) tensor with G = L L^T;
    lam_obs, tau_obs: (K,) tensors; T_obs: never-seen floor sum_unobs lambda_j tau_j;
    total: sum_j lambda_j tau_j; D: sample count.
    """

    obs: np.ndarray
    L: torch.Tensor
    lam_obs: torch.Tensor
    tau_obs: torch.Tensor
    T_obs: float
    total: float
    D: int

    @property
    def K(self) -> int:
        return int(self.obs.size)

    @property
    def rank(self) -> int:
        return int(self.L.shape[1])


def observe(X: sp.spmatrix, spec: SparseSpectrum, *, tau=None, device=None,
            rtol: float = 1e-10) -> Observed:
    """Reduce a sparse data matrix X (D, M) to its observed-coordinate Gram factor.

    The rank and the factor come from the column-equilibrated Gram
    ``Gs = C^-1 G C^-1``, ``C = diag(G_kk)^(1/2)``: ``Gs = Q diag(g) Q^T`` and
    ``L = C Q_r diag(g_r)^(1/2)`` over the eigenvalues not above ``rtol * max(g)`` dropped,
    so ``G = L L^T``. Rescaling a column changes neither the rank nor the column space,
    while the eigenvalues of G itself span the squared amplitudes (1e12 and more at the
    domain's edge, alpha2 = 1): a threshold on them dropped observed coordinates of small
    amplitude, which are as identifiable as loud ones. In Gs a coordinate counts by its
    pattern, and only exact linear dependences give eigenvalues at rounding level.
    The columns of L are not orthogonal (use :func:`row_space_leverage` for projections).
    """
    X = sp.csc_matrix(X)
    D, M = X.shape
    if M != spec.M:
        raise ValueError(f"X has {M} columns but the spectrum has M={spec.M}")
    tau = np.ones(M) if tau is None else np.asarray(tau, dtype=float)
    if tau.shape != (M,):
        raise ValueError(f"tau must have shape ({M},), got {tau.shape}")
    obs = np.flatnonzero(np.diff(X.indptr) > 0)
    Xo = X[:, obs]
    G = torch.as_tensor((Xo.T @ Xo).toarray(), dtype=torch.float64, device=device)
    c = torch.sqrt(torch.diagonal(G))                     # > 0: every kept column is nonzero
    g, Q = torch.linalg.eigh(G / c[:, None] / c[None, :])
    keep = g > rtol * g.max()
    L = c[:, None] * Q[:, keep] * torch.sqrt(g[keep])
    lt = spec.lam * tau
    unobs = np.ones(M, dtype=bool)
    unobs[obs] = False
    as_t = lambda a: torch.as_tensor(a, dtype=torch.float64, device=device)
    return Observed(obs, L, as_t(spec.lam[obs]), as_t(tau[obs]), float(lt[unobs].sum()),
                    float(lt.sum()), int(D))


def gaussian_features(N: int, M: int, seed: int, *names, device=None) -> torch.Tensor:
    """u (N, M) with i.i.d. N(0, 1) entries; sweeps over N use its leading rows (nested).

    Drawn on the named stream ``seeds.torch(seed, "features", *names)``. The scale of u is
    irrelevant for min-norm fits and for losses minimised over mu.
    """
    g = seeds.torch(int(seed), "features", *names)
    return torch.randn(int(N), int(M), generator=g, dtype=torch.float64).to(device)


def feature_moments(u: torch.Tensor, lam, tau=None) -> tuple[torch.Tensor, torch.Tensor]:
    """S = u diag(lambda) u^T and S2 = u diag(lambda^2 tau) u^T, both (N, N)."""
    lam = torch.as_tensor(lam, dtype=u.dtype, device=u.device)
    tau = torch.ones_like(lam) if tau is None else torch.as_tensor(tau, dtype=u.dtype,
                                                                    device=u.device)
    return (u * lam) @ u.T, (u * (lam * lam * tau)) @ u.T


def complement_leverage(Bt: torch.Tensor, Ns) -> list[torch.Tensor]:
    """c_j = 1 - P_jj for the projector P on the span of the first n columns of Bt, nested n.

    Bt: (M, n_max) with rows graded by size (row j = sqrt(lambda_j) u_j: a scaled feature
    matrix). Returns one (M,) tensor per n in Ns. The losses of this chapter are sums
    ``sum_j lambda_j c_j``; forming them as ``tr Sigma - tr(S^-1 S_2)`` (normal equations)
    cancels catastrophically once the spectrum is steep. Here one Householder QR of the
    row-sorted Bt serves every nested n; rows with leverage <= 1/2 use ``1 - |Q_1 row|^2``
    (no cancellation there), and rows with leverage > 1/2 get ``|Q_2^T e_j|^2`` directly from
    the reflectors, so every c_j is computed with a small relative error.
    """
    M, n_max = Bt.shape
    Ns = [int(n) for n in Ns]
    if any(n < 1 or n > n_max or n >= M for n in Ns):
        raise ValueError(f"every N must be in [1, min(n_max={n_max}, M-1={M - 1})], got {Ns}")
    order = torch.argsort(torch.linalg.norm(Bt, dim=1), descending=True)
    a, tau = torch.geqrf(Bt[order])
    out = []
    for n in Ns:
        Q1 = torch.linalg.householder_product(a[:, :n], tau[:n])
        lev = (Q1 * Q1).sum(1)
        c = 1.0 - lev
        head = torch.nonzero(lev > 0.5).flatten()
        if head.numel():
            E = torch.zeros(M, head.numel(), dtype=Bt.dtype, device=Bt.device)
            E[head, torch.arange(head.numel(), device=Bt.device)] = 1.0
            R = torch.ormqr(a[:, :n], tau[:n], E, left=True, transpose=True)
            c[head] = (R[n:] ** 2).sum(0)
        back = torch.empty_like(c)
        back[order] = c
        out.append(back)
    return out


def loss_infinite_data(u: torch.Tensor, lam, Ns, tau=None) -> np.ndarray:
    """E_w min_theta l(theta) at D = infinity for each N (leading rows of u), (len(Ns),).

    Equals ``sum_j lambda_j tau_j (1 - P_jj)`` with P the projector on the row space of
    ``u Lambda^(1/2)``, computed stably by :func:`complement_leverage` (the normal-equation
    form ``tr Sigma - tr(S^-1 S_2)`` loses all precision for steep spectra). This is the
    model-limited loss; it depends on Sigma only, so sparse and dense data share it.
    """
    lam_t = torch.as_tensor(np.asarray(lam, dtype=float), dtype=u.dtype, device=u.device)
    lt = lam_t if tau is None else lam_t * torch.as_tensor(np.asarray(tau, dtype=float),
                                                           dtype=u.dtype, device=u.device)
    n_max = max(int(n) for n in Ns)
    cs = complement_leverage((u[:n_max] * lam_t.sqrt()).T, Ns)
    return np.array([float((lt * c).sum()) for c in cs])


def loss_infinite_data_normal_eq(S: torch.Tensor, S2: torch.Tensor, total: float, Ns) -> np.ndarray:
    """The unstable normal-equation form ``total - tr(S_N^-1 S2_N)`` (kept for comparison only)."""
    out = []
    for N in Ns:
        N = int(N)
        C = torch.linalg.cholesky(S[:N, :N])
        out.append(total - float(torch.cholesky_solve(S2[:N, :N], C).diagonal().sum()))
    return np.asarray(out)


def _filter(s: torch.Tensor, mus_rel, rtol: float) -> torch.Tensor:
    """(n_mu, r) spectral filters f = s/(s^2 + mu), mu = mu_rel * mean(s^2); 1/s at mu=0."""
    mus = torch.as_tensor(np.asarray(mus_rel, dtype=float), dtype=s.dtype, device=s.device)
    scale = (s * s).mean()
    f = s[None, :] / (s[None, :] ** 2 + mus[:, None] * scale)
    pinv = torch.where(s > rtol * s.max(), 1.0 / s, torch.zeros_like(s))
    return torch.where(mus[:, None] == 0, pinv[None, :], f)


def _svd_factor(Lt: torch.Tensor, V: torch.Tensor):
    """Thin SVD of Z = Lt V^T (r, N) -> P (r, q), s (q,), Q (N, q)."""
    P, s, Qh = torch.linalg.svd(Lt @ V.T, full_matrices=False)
    return P, s, Qh.T


def reduced_fit(obs: Observed, V: torch.Tensor, mu_rel: float = 0.0,
                rtol: float = 1e-10) -> torch.Tensor:
    """The map A (N, K) with theta = A w_obs (ridge with mu = mu_rel mean(s^2); 0: min-norm).

    V = u[:N, obs.obs] (N, K). Equivalent to least squares on Phi = X u^T (D, N), y = X w.
    """
    check_penalties("mu_rel", mu_rel)
    Lt = obs.L.T
    P, s, Q = _svd_factor(Lt, V)
    f = _filter(s, [mu_rel], rtol)[0]
    return (Q * f) @ (P.T @ Lt)


def _path(Lt, V, lt_o, t_o, S, mus_rel, rtol, S_o=None):
    """Shared core: (n_mu,) linear and quadratic parts of the loss for design y = Lt w_o."""
    P, s, Q = _svd_factor(Lt, V)
    F = _filter(s, mus_rel, rtol)                          # (n_mu, q)
    B = P.T @ Lt                                          # (q, K)
    c = ((B * lt_o[None, :]) * (Q.T @ V)).sum(1)          # (q,)   tr(Lam_o V^T A T_o) = f.c
    BTB = (B * t_o[None, :]) @ B.T                        # (q, q)
    W = (Q.T @ S @ Q) * BTB                               # quadratic form, all coordinates
    lin = F @ c
    quad = ((F @ W) * F).sum(1)
    if S_o is None:
        return lin, quad, None
    quad_o = ((F @ ((Q.T @ S_o @ Q) * BTB)) * F).sum(1)
    return lin, quad, quad_o


def ridge_path(obs: Observed, u: torch.Tensor, S: torch.Tensor, mus_rel, *,
               decompose: bool = False, rtol: float = 1e-10):
    """Target-averaged population loss along a ridge path, sparse data.

    u: (N, M) features; S: (N, N) = u diag(lambda) u^T; mus_rel: relative ridges (0 is
    the min-norm fit). Returns a numpy array (n_mu,) of E_w l, or with ``decompose`` an
    array (n_mu, 3) of [observed error, leakage, never-seen floor].
    """
    check_penalties("mus_rel", mus_rel)
    V = u[:, torch.as_tensor(obs.obs, device=u.device)]
    lt_o = obs.lam_obs * obs.tau_obs
    S_o = (V * obs.lam_obs) @ V.T if decompose else None
    lin, quad, quad_o = _path(obs.L.T, V, lt_o, obs.tau_obs, S, mus_rel, rtol, S_o)
    total = obs.total - 2 * lin + quad
    if not decompose:
        return total.cpu().numpy()
    observed = float(lt_o.sum()) - 2 * lin + quad_o
    leak = quad - quad_o
    floor = torch.full_like(leak, obs.T_obs)
    return torch.stack([observed, leak, floor], 1).cpu().numpy()


def loss_bayes_readout(obs: Observed, comp: torch.Tensor) -> float:
    """E_w l of the Bayes-optimal readout given the data: theta = S^-1 V Lam_o w_obs.

    With noise-free data, w_obs is identified (when X_obs has full column rank) and the
    unobserved w_j keep their prior mean 0, so the posterior-mean readout minimises
    E[l | data]. Its loss is ``T_obs + sum_obs lambda_k tau_k c_k`` with ``c_k = 1 - P_kk``
    the complement leverages of the N features (:func:`complement_leverage`, one per u and
    N): the never-seen floor plus the model-limited error on the observed coordinates.
    comp: (M,) complement leverages for this N.
    """
    idx = torch.as_tensor(obs.obs, device=comp.device)
    return obs.T_obs + float((obs.lam_obs * obs.tau_obs * comp[idx]).sum())


def loss_infinite_width(obs: Observed) -> float:
    """E_w l at N = infinity (min-norm in x-space): T_obs + sum_obs lambda_k tau_k (1 - P_kk).

    P is the projector on the row space of X_obs; with u^T u -> I the predictor is P w.
    """
    c = 1 - row_space_leverage(obs)
    return obs.T_obs + float((obs.lam_obs * obs.tau_obs * c).sum())


def row_space_leverage(obs: Observed) -> torch.Tensor:
    """P_kk, (K,), for P the projector on the row space of X_obs (= the column space of L).

    L = C Q_r g_r^(1/2) (:func:`observe`) spans C times the span of Q_r, so P is the
    projector on the span of C Q_r: a thin QR of the row-graded C Q_r (Householder, stable
    under row scaling, as in :func:`complement_leverage`); 1 for every k at full rank."""
    K, r = obs.L.shape
    if r == K:
        return torch.ones(K, dtype=obs.L.dtype, device=obs.L.device)
    return 1 - complement_leverage(obs.L, [r])[0]


# ------------------------------------------------------------------------- dense baseline
def dense_ridge_path(X, u: torch.Tensor, S: torch.Tensor, lam, mus_rel,
                     rtol: float = 1e-10) -> np.ndarray:
    """E_w l (tau = 1) along a ridge path for dense data X (D, M) and features u (N, M)."""
    check_penalties("mus_rel", mus_rel)
    X = torch.as_tensor(X, dtype=u.dtype, device=u.device)
    lam_t = torch.as_tensor(lam, dtype=u.dtype, device=u.device)
    lin, quad, _ = _path(X, u, lam_t, torch.ones_like(lam_t), S, mus_rel, rtol)
    return (lam_t.sum() - 2 * lin + quad).cpu().numpy()


def dense_loss_infinite_width(X, lam, device=None) -> float:
    """E_w l at N = infinity for dense X (D, M), D < M: sum_j lambda_j (1 - P_jj), P the
    projector on the row space of X (stable QR form of tr Sigma - tr((XX^T)^-1 X Sigma X^T))."""
    X = torch.as_tensor(X, dtype=torch.float64, device=device)
    lam = torch.as_tensor(lam, dtype=torch.float64, device=device)
    c = complement_leverage(X.T, [X.shape[0]])[0]
    return float((lam * c).sum())


def brute_force_fit(Phi: np.ndarray, y: np.ndarray, mu: float = 0.0) -> np.ndarray:
    """Reference solver: min-norm least squares (mu = 0) or ridge on the explicit D x N Phi."""
    mu = check_penalties("mu", mu)[0]
    if mu == 0:
        return np.linalg.lstsq(Phi, y, rcond=None)[0]
    N = Phi.shape[1]
    return np.linalg.solve(Phi.T @ Phi + mu * np.eye(N), Phi.T @ y)


def peak_location(Ns, loss_ridgeless, loss_ridge) -> int:
    """N at the interpolation peak: argmax of the ridgeless / oracle-ridge loss ratio."""
    Ns = np.asarray(Ns)
    return int(Ns[np.argmax(np.asarray(loss_ridgeless) / np.asarray(loss_ridge))])
