"""Benchmark: the reduced (observed-coordinate Gram) solver against brute force.

Fast path: ``observe`` (Gram of the K(D) observed coordinates) + one SVD + the exact
target-averaged population loss. Slow path: the explicit D x N feature matrix, min-norm
least squares (LAPACK gelsd) for ``n_w`` targets, and a Monte Carlo test set for the loss.
Both give the same readout (column ``max rel diff theta``) and the same loss within the
Monte Carlo error (column ``loss z``: |MC - exact| / MC standard error, for the same
targets); ``E_w loss`` is the exact average over all targets, which the fast path also gives.
``ratio w/o S`` leaves out S = u Sigma u^T, which a sweep computes once per feature draw.

    python benchmarks/bench_sparse_scaling.py          # D = 1e4 and 1e5, N = 256
    python benchmarks/bench_sparse_scaling.py --quick  # tiny
    python benchmarks/bench_sparse_scaling.py --gd     # stratified vs plain GD-failure sampling

The ``--gd`` benchmark compares the stratified estimator of P_fail(D) (section 9) with plain
Monte Carlo on the same feature draw: ``efficiency`` = (variance x CPU time) of plain over
stratified, i.e. how many times fewer CPU seconds the stratified estimator needs for the
same standard error.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import dltheory.sparse_scaling as ss


def bench_one(D: int, N: int, M: int, n_w: int, n_test: int, seed: int = 0) -> dict:
    spec = ss.spectrum(M, 1.0, 0.0)
    X = ss.sample_sparse(spec, D, [seed, 1])
    u = ss.gaussian_features(N, M, seed + 2)
    W = np.random.default_rng([seed, 3]).standard_normal((M, n_w))

    t0 = time.perf_counter()
    S, _ = ss.feature_moments(u, spec.lam)                 # once per u, shared by every D
    t_S = time.perf_counter() - t0
    obs = ss.observe(X, spec)
    expected = ss.ridge_path(obs, u, S, [0.0])[0]          # E_w loss (all targets)
    A = ss.reduced_fit(obs, u[:, torch.as_tensor(obs.obs)]).numpy()
    theta_fast = A @ W[obs.obs]
    beta = u.numpy().T @ theta_fast                         # exact loss for these targets
    exact = float((spec.lam[:, None] * (beta - W) ** 2).sum(0).mean())
    t_fast = time.perf_counter() - t0

    t0 = time.perf_counter()
    un = u.numpy()
    Phi = np.asarray(X @ un.T)
    theta_slow = np.linalg.lstsq(Phi, np.asarray(X @ W), rcond=None)[0]
    losses = np.zeros(n_w)
    sq = []
    chunk = 20_000
    for k, start in enumerate(range(0, n_test, chunk)):
        Xt = ss.sample_sparse(spec, min(chunk, n_test - start), [seed, 4, k])
        err = (np.asarray(Xt @ un.T) @ theta_slow - np.asarray(Xt @ W)) ** 2   # (n, n_w)
        losses += err.sum(0)
        sq.append(err.mean(1))
    mc_per_point = np.concatenate(sq)
    mc = losses.sum() / (n_test * n_w)
    t_slow = time.perf_counter() - t0

    diff = np.linalg.norm(theta_fast - theta_slow) / np.linalg.norm(theta_slow)
    z = abs(mc - exact) / (mc_per_point.std() / np.sqrt(n_test))
    return {"name": f"D={D:.0e}, N={N}, K={obs.K}", "time_fast": t_fast, "time_slow": t_slow,
            "ratio": t_slow / t_fast, "ratio_wo_S": t_slow / (t_fast - t_S), "max rel diff theta": diff, "loss z": z,
            "loss exact": exact, "loss E_w": expected}


def bench_gd(D: int, plain: int, strat: tuple[int, int], seed: int = 0) -> dict:
    spec = ss.spectrum(4096, 3.0, -3.0)
    u = ss.gaussian_features(16, 4096, 600 + seed)
    eta = ss.population_step(u, spec.lam, 1.5)
    t0 = time.perf_counter()
    P = float(ss.fail_probability(spec, u, [D], plain, eta, seed)[0][0])
    t_p = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = ss.stratified_fail_probability(spec, u, D, eta, trials_in=strat[0], trials_out=strat[1],
                                       kappa=0.25, seed=[seed, 2])
    t_s = time.perf_counter() - t0
    var_p = max(P, r["P"]) * (1 - max(P, r["P"])) / plain      # binomial variance of plain MC
    return {"D": D, "P plain": P, "P strat": r["P"], "se plain": var_p**0.5, "se strat": r["se"],
            "time plain": t_p, "time strat": t_s, "efficiency": var_p * t_p / (r["se"] ** 2 * t_s)}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    ap.add_argument("--gd", action="store_true", help="stratified vs plain GD-failure sampling")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    if args.gd:
        rows = [bench_gd(D, n, (m, m // 4)) for D, n, m in ((1_000, 20_000, 2_000), (10_000, 10_000, 1_000),
                                                          (100_000, 2_000, 200))]
        print(f"{'D':>7s} {'P plain':>9s} {'P strat':>9s} {'se plain':>9s} {'se strat':>9s} "
              f"{'t plain':>8s} {'t strat':>8s} {'efficiency':>10s}")
        for r in rows:
            print(f"{r['D']:7d} {r['P plain']:9.2e} {r['P strat']:9.2e} {r['se plain']:9.1e} {r['se strat']:9.1e} "
                  f"{r['time plain']:8.2f} {r['time strat']:8.2f} {r['efficiency']:10.1f}")
        return rows
    if args.quick:
        cases = [(1_000, 64, 4096, 8, 20_000), (3_000, 64, 4096, 8, 20_000)]
    else:
        cases = [(10_000, 256, 32768, 16, 100_000), (100_000, 256, 32768, 16, 100_000)]
    rows = []
    with threadpool_limits(limits=1):
        for D, N, M, n_w, n_test in cases:
            rows.append(bench_one(D, N, M, n_w, n_test))
    print(f"{'name':28s} {'time_fast':>10s} {'time_slow':>10s} {'ratio':>8s} "
          f"{'max rel diff theta':>19s} {'loss z':>7s} {'E_w loss':>10s} {'ratio w/o S':>11s}")
    for r in rows:
        print(f"{r['name']:28s} {r['time_fast']:10.3f} {r['time_slow']:10.3f} {r['ratio']:8.1f} "
              f"{r['max rel diff theta']:19.2e} {r['loss z']:7.2f} {r['loss E_w']:10.3e} {r['ratio_wo_S']:11.1f}")
    return rows


if __name__ == "__main__":
    main()
