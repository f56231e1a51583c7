"""Fixed-step full-batch GD on sparse data: the lambda_max criterion and explicit runs.

GD on ``L(theta) = (1/2D) |Phi theta - y|^2`` with ``Phi = X u^T`` (D, N) has the constant
Hessian ``H = Phi^T Phi / D``; from a generic start it diverges iff ``eta lambda_max(H) > 2``.
The step is set from the population Hessian, ``eta = c / lambda_max(u Sigma u^T)`` with
c < 2, so the failures counted here come only from the finite sample: a rare coordinate
with a large amplitude, active once, adds a spike ``s_j^2 |u_j|^2 / D`` to H.

The trial sampler computes lambda_max(H) for many independent data sets at once without
forming X: rows that only contain the always-active coordinate (p_j = 1) contribute the
same rank-one term, so only the rows with a rarer coordinate are formed explicitly.
"""

from __future__ import annotations

import numpy as np
import torch

from .data import SparseSpectrum, check_number, rng_from, sample_entries, sample_sparse


def population_step(u: torch.Tensor, lam, c: float = 1.8) -> float:
    """eta = c / lambda_max(u diag(lambda) u^T): stable on the population problem if c < 2."""
    c = check_number("c", c, 0.0, 2.0, lo_open=True, hi_open=True)
    lam = torch.as_tensor(lam, dtype=u.dtype, device=u.device)
    return float(c / torch.linalg.eigvalsh((u * lam) @ u.T).max())


def hessian_top_eigs(spec: SparseSpectrum, u: torch.Tensor, D: int, trials: int, seed, *,
                     rows_per_chunk: int = 200_000) -> np.ndarray:
    """lambda_max(X u^T u X^T... ) i.e. of H = u X^T X u^T / D for ``trials`` data sets, (trials,).

    Rademacher amplitudes; at most one coordinate may have p_j = 1 (true for p_j = j^-(a1+1)).
    """
    p = spec.p
    on = np.flatnonzero(p >= 1.0)
    if on.size > 1:
        raise ValueError("hessian_top_eigs supports at most one always-active coordinate")
    rest = type(spec)(np.where(p >= 1.0, 0.0, p), spec.s2, spec.alpha1, spec.alpha2)
    N = u.shape[0]
    dev = u.device
    uT = u.T.contiguous()                                    # (M, N)
    u_on = uT[int(on[0])] * float(np.sqrt(spec.s2[on[0]])) if on.size else None
    rng = rng_from(seed)
    exp_rows = max(1.0, D * float(np.sum(rest.p)))
    chunk = int(max(1, min(trials, rows_per_chunk // exp_rows)))
    out = []
    for start in range(0, trials, chunk):
        R = min(chunk, trials - start)
        e = sample_entries(rest, D, rng, trials=R)
        key = e.trial * D + e.row
        ukey, rid = np.unique(key, return_inverse=True)      # rows holding a rare coordinate
        t_of = ukey // D
        n_rows = np.bincount(t_of, minlength=R)
        first = np.concatenate([[0], np.cumsum(n_rows)[:-1]])
        pos = np.arange(ukey.size) - first[t_of]
        width = int(max(1, n_rows.max(initial=0)))
        rid_t = torch.as_tensor(rid, device=dev)
        vals = torch.as_tensor(e.val, dtype=u.dtype, device=dev)[:, None]
        rows = torch.zeros(ukey.size, N, dtype=u.dtype, device=dev)
        rows.index_add_(0, rid_t, vals * uT[torch.as_tensor(e.col, device=dev)])
        if u_on is not None:                                 # +- s_on u_on in every row
            xi = torch.as_tensor(rng.integers(0, 2, ukey.size) * 2.0 - 1.0, dtype=u.dtype,
                                 device=dev)
            rows += xi[:, None] * u_on[None, :]
        pad = torch.zeros(R, width, N, dtype=u.dtype, device=dev)
        pad[torch.as_tensor(t_of, device=dev), torch.as_tensor(pos, device=dev)] = rows
        H = pad.transpose(1, 2) @ pad
        if u_on is not None:
            rest_rows = torch.as_tensor(D - n_rows, dtype=u.dtype, device=dev)
            H += rest_rows[:, None, None] * torch.outer(u_on, u_on)[None]
        out.append(torch.linalg.eigvalsh(H / D)[:, -1].cpu().numpy())
    return np.concatenate(out)


def fail_probability(spec: SparseSpectrum, u: torch.Tensor, Ds, trials: int, eta: float,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """P_fail(D) = fraction of trials with eta lambda_max(H) > 2, and the failure counts."""
    eta = check_number("eta", eta, 0.0, np.inf, lo_open=True)
    check_number("trials", trials, 1, np.inf)
    counts = []
    for i, D in enumerate(Ds):
        lmax = hessian_top_eigs(spec, u, int(D), int(trials), [seed, i])
        counts.append(int(np.sum(eta * lmax > 2.0)))
    counts = np.asarray(counts)
    return counts / float(trials), counts


def sample_problem(spec: SparseSpectrum, u: torch.Tensor, D: int, seed: int):
    """One explicit regression problem: Phi (D, N), y (D,), lambda_max(Phi^T Phi / D)."""
    rng = rng_from(seed)
    X = sample_sparse(spec, D, rng)
    w = rng.standard_normal(spec.M)
    Phi = torch.as_tensor(X @ u.cpu().numpy().T, dtype=u.dtype, device=u.device)
    y = torch.as_tensor(X @ w, dtype=u.dtype, device=u.device)
    lmax = float(torch.linalg.eigvalsh(Phi.T @ Phi / D).max())
    return Phi, y, lmax


def run_gd(Phi: torch.Tensor, y: torch.Tensor, eta: float, steps: int) -> np.ndarray:
    """Full-batch GD from theta = 0; returns the training loss (1/2D)|Phi theta - y|^2 per step."""
    eta = check_number("eta", eta, 0.0, np.inf, lo_open=True)
    check_number("steps", steps, 1, np.inf)
    D, N = Phi.shape
    theta = torch.zeros(N, dtype=Phi.dtype, device=Phi.device)
    losses = []
    for _ in range(int(steps)):
        r = Phi @ theta - y
        losses.append(float(0.5 * (r @ r) / D))
        if not np.isfinite(losses[-1]) or losses[-1] > 1e200:
            break
        theta = theta - eta * (Phi.T @ r) / D
    return np.asarray(losses)


def gd_diverged(losses: np.ndarray) -> bool:
    """Explicit outcome: the loss ends non-finite or above its starting value."""
    return bool(not np.isfinite(losses[-1]) or losses[-1] > losses[0])
