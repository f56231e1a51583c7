"""Sweeps over N and D built from the exact losses in :mod:`.linear`.

Each returns plain numpy arrays so the chapter only fits and plots. Seeds are explicit:
data seeds are ``[seed, i]`` lists fed to ``numpy.random.default_rng``.
"""

from __future__ import annotations

import numpy as np
import torch

from .data import SparseSpectrum, sample_dense, sample_entries, sample_sparse
from .linear import (
    complement_leverage,
    dense_loss_infinite_width,
    dense_ridge_path,
    loss_infinite_width,
    observe,
    ridge_path,
)


def _infinite_width(loss, spec: SparseSpectrum, Ds, n_seeds: int, seed) -> np.ndarray:
    """``loss(D, [*seed, s, i])`` on the grid ``n_seeds x Ds``; ``seed`` an int or a tuple
    of ints (a named stream, e.g. ``(cfg.seed, seeds.key("alpha_D"), k)``)."""
    base = list(seed) if isinstance(seed, (tuple, list)) else [seed]
    out = np.empty((n_seeds, len(Ds)))
    for s in range(n_seeds):
        for i, D in enumerate(Ds):
            out[s, i] = loss(int(D), [*base, s, i])
    return out


def sparse_infinite_width(spec: SparseSpectrum, Ds, n_seeds: int, seed, device=None) -> np.ndarray:
    """E_w l at N = infinity on sampled sparse data, (n_seeds, len(Ds))."""
    return _infinite_width(lambda D, sd: loss_infinite_width(observe(sample_sparse(spec, D, sd), spec, device=device)),
                           spec, Ds, n_seeds, seed)


def dense_infinite_width(spec: SparseSpectrum, Ds, n_seeds: int, seed, device=None) -> np.ndarray:
    """E_w l at N = infinity on dense Gaussian data with the same Sigma, (n_seeds, len(Ds))."""
    return _infinite_width(lambda D, sd: dense_loss_infinite_width(sample_dense(spec, D, sd), spec.lam, device=device),
                           spec, Ds, n_seeds, seed)


def sparse_n_sweep(spec: SparseSpectrum, u: torch.Tensor, S: torch.Tensor, D: int, Ns,
                   mus_rel, seed, device=None) -> dict:
    """Ridgeless and oracle-ridge E_w l over nested N for one sparse data set.

    Returns dict with ``ridgeless`` and ``ridge`` (len(Ns),), ``rank``, ``K`` and ``T_obs``.
    ``mus_rel`` must start with 0 (the ridgeless fit); the oracle takes the min over all.
    """
    if mus_rel[0] != 0:
        raise ValueError("mus_rel must start with 0 (the min-norm fit)")
    obs = observe(sample_sparse(spec, int(D), seed), spec, device=device)
    L = np.array([ridge_path(obs, u[:N], S[:N, :N], mus_rel) for N in map(int, Ns)])
    return {"ridgeless": L[:, 0], "ridge": L.min(1), "rank": obs.rank, "K": obs.K,
            "T_obs": obs.T_obs}


def dense_n_sweep(spec: SparseSpectrum, u: torch.Tensor, S: torch.Tensor, D: int, Ns,
                  mus_rel, seed) -> dict:
    """Ridgeless and oracle-ridge E_w l over nested N for one dense data set (rank = D)."""
    if mus_rel[0] != 0:
        raise ValueError("mus_rel must start with 0 (the min-norm fit)")
    X = sample_dense(spec, int(D), seed)
    L = np.array([dense_ridge_path(X, u[:N], S[:N, :N], spec.lam, mus_rel)
                  for N in map(int, Ns)])
    return {"ridgeless": L[:, 0], "ridge": L.min(1), "rank": min(int(D), spec.M)}


def oracle_grid(spec: SparseSpectrum, u: torch.Tensor, S: torch.Tensor, Ns, Ds, mus_rel,
                seed, device=None) -> tuple[np.ndarray, np.ndarray]:
    """Oracle-ridge E_w l on the (N, D) grid, shape (len(Ns), len(Ds)), and rank per D.

    The data sets are nested (the first D rows of one stream of max(Ds) samples), so each
    column is one learning curve and the D-direction noise is correlated, as in training.
    """
    out = np.empty((len(Ns), len(Ds)))
    ranks = np.empty(len(Ds), dtype=int)
    X_all = sample_sparse(spec, int(max(Ds)), seed)
    for i, D in enumerate(Ds):
        obs = observe(X_all[: int(D)], spec, device=device)
        ranks[i] = obs.rank
        for k, N in enumerate(map(int, Ns)):
            out[k, i] = ridge_path(obs, u[:N], S[:N, :N], mus_rel).min()
    return out, ranks


def bayes_grid(spec: SparseSpectrum, u: torch.Tensor, Ns, Ds, seed, *,
               infinite_data: bool = False):
    """E_w l of the Bayes-optimal readout on the (N, D) grid, (len(Ns), len(Ds)); nested data.

    Needs only which coordinates each data prefix observed, and the complement leverages
    of the features (one QR per u for all N). With ``infinite_data`` also returns the
    model-limited loss l_inf(N) = sum_j lambda_j (1 - P_jj) of the same features,
    (len(Ns),), as ``(grid, l_inf)``: the D = infinity column of the same surface.
    """
    lam = torch.as_tensor(spec.lam, dtype=u.dtype, device=u.device)
    comps = complement_leverage((u[: max(map(int, Ns))] * lam.sqrt()).T, Ns)
    e = sample_entries(spec, int(max(Ds)), seed)
    first = np.full(spec.M, np.iinfo(np.int64).max)
    np.minimum.at(first, e.col, e.row)                      # first row that activates j
    out = np.empty((len(Ns), len(Ds)))
    for i, D in enumerate(Ds):
        seen = torch.as_tensor(first < int(D), device=u.device)
        T_obs = float(lam[~seen].sum())
        for k, c in enumerate(comps):
            out[k, i] = T_obs + float((lam * c)[seen].sum())
    if infinite_data:
        return out, np.array([float((lam * c).sum()) for c in comps])
    return out
