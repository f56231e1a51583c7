"""ReLU random features ``phi = relu(u x)`` on sparse data, with a stratified population loss.

There is no sufficient statistic now, so the D x N feature matrix is formed (in row chunks).
The readout is fitted by ridge for ``n_w`` targets at once (``Y = X W``). Its population loss
is a quadratic form in theta,

    l(theta) = theta^T C theta - 2 theta^T b + c,   C = E phi phi^T,  b = E phi y,  c = E y^2,

and C, b, c are estimated once per feature draw by a **stratified** expectation. Plain Monte
Carlo would miss the rare coordinates (a test set of n points only sees K(n) of them), so x
is split into a head (coordinates j <= J0, sampled) and a tail where, to first order in
P_tail = sum_{j>J0} p_j, at most one coordinate fires:

    E g(x) ~ w_0 E_head g(x_h) + sum_{j>J0} w_j E_head,+- g(x_h +- s_j e_j),
    w_0 = prod_{j>J0} (1 - p_j),   w_j = w_0 p_j/(1 - p_j).

The dropped mass (two or more tail events) is O(P_tail^2); both signs are used for every
head sample, so the odd cross terms cancel exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

from ..validation import as_generator
from .data import SparseSpectrum, check_penalties, sample_sparse


@dataclass(frozen=True)
class Moments:
    """Population moments of relu features and targets: C (N, N), b (N, n_w), c (n_w,)."""

    C: torch.Tensor
    b: torch.Tensor
    c: torch.Tensor


def relu_features(X: sp.spmatrix, u: torch.Tensor) -> torch.Tensor:
    """relu(X u^T) as a (D, N) tensor; X is a sparse (D, M) matrix."""
    uT = u.T.cpu().numpy()
    return torch.relu(torch.as_tensor(np.asarray(X @ uT), dtype=u.dtype, device=u.device))


def stratified_moments(spec: SparseSpectrum, u: torch.Tensor, W: np.ndarray, *, J0: int,
                       n_head: int, n_tail: int, seed) -> Moments:
    """Stratified estimates of C = E phi phi^T, b = E phi y, c = E y^2 for y = W^T x.

    W: (M, n_w) target weights; J0: head size; n_head: head samples for the head term;
    n_tail: head samples per tail coordinate (each used with both signs).
    """
    if not 0 < J0 < spec.M:
        raise ValueError(f"J0 must be in (0, M={spec.M}), got {J0}")
    rng = as_generator(seed)
    dt, dev = u.dtype, u.device
    Wt = torch.as_tensor(W, dtype=dt, device=dev)
    head = SparseSpectrum(spec.p[:J0], spec.s2[:J0])
    pt = spec.p[J0:]
    w0 = float(np.exp(np.sum(np.log1p(-pt))))
    wj = w0 * pt / (1 - pt)
    # head term
    Xh = sample_sparse(head, n_head, rng)
    Xh = sp.hstack([Xh, sp.csr_matrix((n_head, spec.M - J0))]).tocsr()
    Ph = relu_features(Xh, u)
    yh = torch.as_tensor(np.asarray(Xh @ W), dtype=dt, device=dev)
    C = w0 * (Ph.T @ Ph) / n_head
    b = w0 * (Ph.T @ yh) / n_head
    c = w0 * (yh * yh).mean(0)
    # tail terms: n_tail head samples, x_h +- s_j e_j for every tail coordinate j
    Xt = sample_sparse(head, n_tail, rng)
    Xt = sp.hstack([Xt, sp.csr_matrix((n_tail, spec.M - J0))]).tocsr()
    Ut = torch.as_tensor(np.asarray(Xt @ u.T.cpu().numpy()), dtype=dt, device=dev)  # (n_t, N)
    yt = torch.as_tensor(np.asarray(Xt @ W), dtype=dt, device=dev)                 # (n_t, n_w)
    s = torch.as_tensor(np.sqrt(spec.s2[J0:]), dtype=dt, device=dev)
    ws = torch.as_tensor(wj, dtype=dt, device=dev) / (2 * n_tail)
    uj = u[:, J0:].T                                                               # (T, N)
    for start in range(0, uj.shape[0], 256):
        sl = slice(start, start + 256)
        for sign in (1.0, -1.0):
            a = sign * s[sl]                                                       # (t,)
            Z = torch.relu(Ut[None, :, :] + a[:, None, None] * uj[sl][:, None, :])  # (t, n_t, N)
            Y = yt[None, :, :] + a[:, None, None] * Wt[J0:][sl][:, None, :]       # (t, n_t, n_w)
            wz = ws[sl][:, None, None]
            C += torch.einsum("tsa,tsb->ab", Z * wz, Z)
            b += torch.einsum("tsa,tsw->aw", Z * wz, Y)
            c += (wz * Y * Y).sum((0, 1))
    return Moments(C, b, c)


def ridge_path(X: sp.spmatrix, u: torch.Tensor, W: np.ndarray, mus_rel, Ns,
               chunk: int = 50_000) -> list[torch.Tensor]:
    """Ridge readouts for y = X W on relu features, nested over N.

    Returns, for each N in Ns, a tensor (n_mu, N, n_w) of theta for mu = mu_rel * mean eig.
    The Gram Phi^T Phi and Phi^T Y are accumulated in row chunks of the (D, N_max) features.
    """
    check_penalties("mus_rel", mus_rel)
    N_max = max(int(n) for n in Ns)
    uN = u[:N_max]
    G = torch.zeros(N_max, N_max, dtype=u.dtype, device=u.device)
    R = torch.zeros(N_max, W.shape[1], dtype=u.dtype, device=u.device)
    X = sp.csr_matrix(X)
    for start in range(0, X.shape[0], chunk):
        Xc = X[start:start + chunk]
        P = relu_features(Xc, uN)
        G += P.T @ P
        R += P.T @ torch.as_tensor(np.asarray(Xc @ W), dtype=u.dtype, device=u.device)
    mus = torch.as_tensor(np.asarray(mus_rel, dtype=float), dtype=u.dtype, device=u.device)
    out = []
    for N in map(int, Ns):
        e, E = torch.linalg.eigh(G[:N, :N])
        e = e.clamp_min(0)
        proj = E.T @ R[:N]
        filt = 1.0 / (e[None, :] + mus[:, None] * e.mean())                      # (n_mu, N)
        out.append(torch.einsum("ij,mj,jw->miw", E, filt, proj))
    return out


def population_loss(theta: torch.Tensor, mom: Moments, N: int | None = None) -> np.ndarray:
    """l = theta^T C theta - 2 theta^T b + c per target; theta (..., N, n_w) -> (..., n_w)."""
    N = theta.shape[-2] if N is None else N
    C, b = mom.C[:N, :N], mom.b[:N]
    quad = (theta * (C @ theta)).sum(-2)
    lin = (theta * b).sum(-2)
    return (quad - 2 * lin + mom.c).cpu().numpy()
