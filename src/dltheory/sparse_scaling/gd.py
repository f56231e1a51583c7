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
from scipy import stats

from .. import validation
from ..validation import as_generator
from .data import (
    Entries,
    SparseSpectrum,
    _dedupe_rows,
    sample_entries,
    sample_sparse,
)


def population_step(u: torch.Tensor, lam, c: float = 1.8) -> float:
    """eta = c / lambda_max(u diag(lambda) u^T): stable on the population problem if c < 2."""
    c = validation.real("c", c, 0.0, 2.0, lo_open=True, hi_open=True)
    lam = torch.as_tensor(lam, dtype=u.dtype, device=u.device)
    return float(c / torch.linalg.eigvalsh((u * lam) @ u.T).max())


def _concat(parts, trials: int, D: int, M: int) -> Entries:
    cat = [np.concatenate([getattr(e, k) for e in parts]) for k in ("trial", "row", "col", "val")]
    return Entries(*cat, trials, D, M)


def _count_law(p: np.ndarray, D: int, p_poisson: float = 1e-4) -> np.ndarray:
    """P(coordinate j active at least once among D rows), under :func:`sample_entries`' law
    (Binomial counts for p_j >= p_poisson, Poisson counts below)."""
    return np.where(p >= p_poisson, -np.expm1(D * np.log1p(-np.minimum(p, 1 - 1e-16))),
                    -np.expm1(-D * p))


def hit_probability(spec: SparseSpectrum, mask, D: int) -> float:
    """P(A): at least one coordinate of ``mask`` is active among the D rows (exact)."""
    q = _count_law(spec.p[np.asarray(mask, bool)], int(D))
    return float(-np.expm1(np.sum(np.log1p(-q))))


def sample_entries_hit(spec: SparseSpectrum, D: int, seed, *, trials: int = 1,
                       p_poisson: float = 1e-4) -> Entries:
    """:func:`sample_entries` for ``spec`` conditioned on at least one non-zero entry.

    The counts of different coordinates are independent, so the condition is met exactly by
    drawing the first active coordinate J (in index order) from
    P(J = j) = q_j prod_{k<j} (1 - q_k) / P(A), its count from the law truncated to >= 1,
    and the coordinates after J unconditionally; those before J stay empty. Rademacher
    amplitudes. Coordinates with p_j >= 1/4 (drawn row by row) are not supported.
    """
    rng = as_generator(seed)
    D, trials = int(D), int(trials)
    cols = np.flatnonzero(spec.p > 0)
    if cols.size == 0 or spec.p[cols].max() >= 0.25:
        raise ValueError("sample_entries_hit needs 0 < p_j < 1/4 on at least one coordinate")
    p = spec.p[cols]
    q = _count_law(p, D, p_poisson)
    log_surv = np.concatenate([[0.0], np.cumsum(np.log1p(-q))])      # P(no hit in cols[:i])
    cdf = -np.expm1(log_surv[1:])                                      # P(first hit <= i)
    i = np.minimum(np.searchsorted(cdf, rng.random(trials) * cdf[-1], side="right"), cols.size - 1)
    mu = D * p[i]
    lo = np.where(p[i] >= p_poisson, stats.binom.cdf(0, D, p[i]), stats.poisson.cdf(0, mu))
    v = lo + rng.random(trials) * (1 - lo)
    c = np.where(p[i] >= p_poisson, stats.binom.ppf(v, D, p[i]), stats.poisson.ppf(v, mu))
    c = np.maximum(c, 1).astype(np.int64)
    rest = sample_entries(spec, D, rng, trials=trials, p_poisson=p_poisson)
    keep = rest.col > cols[i][rest.trial]
    t_new = np.repeat(np.arange(trials), c)
    c_new = np.repeat(cols[i], c)
    trial = np.concatenate([rest.trial[keep], t_new])
    col = np.concatenate([rest.col[keep], c_new])
    row = np.concatenate([rest.row[keep], rng.integers(0, D, t_new.size)])
    row = _dedupe_rows(trial, col, row, D, spec.M, rng)
    val = np.concatenate([rest.val[keep],
                          np.sqrt(spec.s2[c_new]) * (rng.integers(0, 2, t_new.size) * 2.0 - 1.0)])
    return Entries(trial, row, col, val, trials, D, spec.M)


def _restrict(spec: SparseSpectrum, mask) -> SparseSpectrum:
    return type(spec)(np.where(mask, spec.p, 0.0), spec.s2, spec.alpha1, spec.alpha2)


def hessian_top_eigs(spec: SparseSpectrum, u: torch.Tensor, D: int, trials: int, seed, *,
                     hit=None, rows_per_chunk: int = 200_000) -> np.ndarray:
    """lambda_max of H = u X^T X u^T / D for ``trials`` independent data sets, (trials,).

    Rademacher amplitudes; at most one coordinate may have p_j = 1 (true for p_j = j^-(a1+1)).
    ``hit`` (bool mask over coordinates, optional) makes this a draw from one stratum:
    ``("in", mask)`` conditions on at least one coordinate of the mask being active,
    ``("out", mask)`` on none of them being active.
    """
    p = spec.p
    on = np.flatnonzero(p >= 1.0)
    if on.size > 1:
        raise ValueError("hessian_top_eigs supports at most one always-active coordinate")
    rest = _restrict(spec, p < 1.0)
    cand = None
    if hit is not None:
        side, mask = hit
        if side not in ("in", "out"):
            raise ValueError(f"hit must be ('in' | 'out', mask), got {side!r}")
        mask = np.asarray(mask, bool) & (p < 1.0)
        cand = _restrict(spec, mask) if side == "in" else None
        rest = _restrict(rest, ~mask)
    N = u.shape[0]
    dev = u.device
    uT = u.T.contiguous()                                    # (M, N)
    u_on = uT[int(on[0])] * float(np.sqrt(spec.s2[on[0]])) if on.size else None
    rng = as_generator(seed)
    exp_rows = max(1.0, D * float(np.sum(rest.p)))
    chunk = int(max(1, min(trials, rows_per_chunk // exp_rows)))
    out = []
    for start in range(0, trials, chunk):
        R = min(chunk, trials - start)
        e = sample_entries(rest, D, rng, trials=R)
        if cand is not None:
            e = _concat([e, sample_entries_hit(cand, D, rng, trials=R)], R, D, spec.M)
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


def spike_mask(spec: SparseSpectrum, unorm2, D: int, eta: float, kappa: float) -> np.ndarray:
    """Coordinates whose single-hit spike s_j^2 |u_j|^2 / D exceeds kappa * 2/eta."""
    return (spec.s2 * np.asarray(unorm2, float) / float(D) > kappa * 2.0 / eta) & (spec.p < 1.0)


def stratified_fail_probability(spec: SparseSpectrum, u: torch.Tensor, D: int, eta: float, *,
                                trials_in: int, trials_out: int, kappa: float, seed) -> dict:
    """P_fail(D) = P(A) f_in + (1 - P(A)) f_out, with A = {a coordinate with a spike above
    kappa * 2/eta is active}: unbiased for any kappa; kappa only moves the variance.

    Returns P, its standard error se, P(A) and the two stratum failure fractions.
    """
    eta = validation.real("eta", eta, 0.0, np.inf, lo_open=True)
    validation.real("kappa", kappa, 0.0, 1.0, lo_open=True)
    validation.real("trials_in", trials_in, 1, np.inf)
    validation.real("trials_out", trials_out, 1, np.inf)
    mask = spike_mask(spec, (u**2).sum(0).cpu().numpy(), D, eta, kappa)
    rng = as_generator(seed)
    pa = hit_probability(spec, mask, D) if mask.any() else 0.0
    f_in = f_out = 0.0
    var = 0.0
    if pa > 0:
        f_in = float(np.mean(eta * hessian_top_eigs(spec, u, D, trials_in, rng, hit=("in", mask)) > 2))
        var += pa**2 * f_in * (1 - f_in) / trials_in
    if pa < 1:
        f_out = float(np.mean(eta * hessian_top_eigs(spec, u, D, trials_out, rng, hit=("out", mask)) > 2))
        var += (1 - pa) ** 2 * f_out * (1 - f_out) / trials_out
    return {"P": pa * f_in + (1 - pa) * f_out, "se": float(np.sqrt(var)), "P_A": pa,
            "f_in": f_in, "f_out": f_out}


def fail_probability(spec: SparseSpectrum, u: torch.Tensor, Ds, trials: int, eta: float,
                     seed) -> tuple[np.ndarray, np.ndarray]:
    """Plain Monte Carlo: P_fail(D) = fraction of trials with eta lambda_max(H) > 2, and the
    failure counts. ``seed``: an int or a list of ints (D number i appends i)."""
    eta = validation.real("eta", eta, 0.0, np.inf, lo_open=True)
    validation.real("trials", trials, 1, np.inf)
    counts = []
    for i, D in enumerate(Ds):
        lmax = hessian_top_eigs(spec, u, int(D), int(trials), [*np.ravel(seed).tolist(), i])
        counts.append(int(np.sum(eta * lmax > 2.0)))
    counts = np.asarray(counts)
    return counts / float(trials), counts


def sample_problem(spec: SparseSpectrum, u: torch.Tensor, D: int, seed: int):
    """One explicit regression problem: Phi (D, N), y (D,), lambda_max(Phi^T Phi / D)."""
    rng = as_generator(seed)
    X = sample_sparse(spec, D, rng)
    w = rng.standard_normal(spec.M)
    Phi = torch.as_tensor(X @ u.cpu().numpy().T, dtype=u.dtype, device=u.device)
    y = torch.as_tensor(X @ w, dtype=u.dtype, device=u.device)
    lmax = float(torch.linalg.eigvalsh(Phi.T @ Phi / D).max())
    return Phi, y, lmax


def run_gd(Phi: torch.Tensor, y: torch.Tensor, eta: float, steps: int) -> np.ndarray:
    """Full-batch GD from theta = 0; returns the training loss (1/2D)|Phi theta - y|^2 per step."""
    eta = validation.real("eta", eta, 0.0, np.inf, lo_open=True)
    validation.real("steps", steps, 1, np.inf)
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


def secular_fail_probability(spec: SparseSpectrum, u: torch.Tensor, eta: float, Ds) -> np.ndarray:
    """Large-D prediction of P_fail(D): single spikes against the population Hessian.

    As D grows the sample Hessian tends to B = u diag(lambda) u^T, and the cross terms of a
    rare row are O(D^-1/2). A coordinate j active once adds s_j^2 u_j u_j^T / D, and
    lambda_max(B + s_j^2 u_j u_j^T / D) > 2/eta iff (rank-one secular equation)
    s_j^2 g_j / D > 1 with g_j = u_j^T (2/eta - B)^-1 u_j. Hence
    P_fail(D) ~ 1 - exp(-D sum_j p_j 1[s_j^2 g_j > D]), whose slope tends to -nu.
    Requires eta lambda_max(B) < 2.
    """
    eta = validation.real("eta", eta, 0.0, np.inf, lo_open=True)
    lam = torch.as_tensor(spec.lam, dtype=u.dtype, device=u.device)
    B = (u * lam) @ u.T
    w, V = torch.linalg.eigh(B)
    if float(eta * w.max()) >= 2:
        raise ValueError(f"eta lambda_max(B) = {float(eta * w.max()):.3g} must be < 2")
    z = V.T @ u                                               # (N, M)
    g = ((z**2) / (2.0 / eta - w)[:, None]).sum(0).cpu().numpy()
    p = np.where(spec.p < 1.0, spec.p, 0.0)
    out = [-np.expm1(-float(D) * np.sum(p[spec.s2 * g > float(D)])) for D in np.atleast_1d(Ds)]
    return np.array(out)
