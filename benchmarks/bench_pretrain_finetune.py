"""Benchmark the chapter's kernels against naive baselines.

1. Batched torch GD over many (seed, λ, α) FT problems vs a Python loop of single problems.
2. The dual-Newton implicit-bias solver vs SLSQP on the primal, at equal accuracy.
3. The replica solver on graded Gauss-Legendre panels vs the same solver on a brute-force
   uniform rule (20001 points), at a point where Gauss-Hermite found a spurious root.
4. The batched torch dual Newton (all seeds at once) vs one numpy solve per seed.

Prints a table: name, time_fast, time_slow, ratio, max abs diff. ``--quick`` for a tiny run.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from dltheory.pretrain_finetune import (  # noqa: E402
    FULL_OVERLAP,
    DiagWeights,
    flow_weights_from_beta,
    ft_scales,
    rebalance,
    sample_design,
    sample_teachers,
    solve_bias,
    solve_bias_slsqp,
    train_gd,
    train_gd_loop,
)


def _ft_problems(n_problems: int, d: int, steps_alpha=(0.2, 0.3), lams=(-0.5, 0.0, 1.0)):
    """Stack FT problems over (seed, λ, α) with a common N (the largest α; extra rows are
    copies, so every problem is a valid interpolation problem)."""
    n = round(max(steps_alpha) * d)
    Xs, ys, Ws = [], [], []
    for i in range(n_problems):
        lam = lams[i % len(lams)]
        s_pt, s_ft = sample_teachers(FULL_OVERLAP, d, seed=i)
        W = rebalance(flow_weights_from_beta(s_pt, 1e-2, lam), 0.05)
        X = sample_design(n, d, seed=10_000 + i)
        Xs.append(X)
        ys.append(X @ s_ft)
        Ws.append(W)
    t = lambda k: torch.as_tensor(np.stack([getattr(w, k) for w in Ws]))
    return torch.as_tensor(np.stack(Xs)), torch.as_tensor(np.stack(ys)), DiagWeights(t("wp"), t("wm"), t("vp"), t("vm"))


def bench_gd(n_problems: int, d: int, steps: int):
    X, y, W = _ft_problems(n_problems, d)
    t0 = time.perf_counter()
    a = train_gd(X, y, W, 0.02, max_steps=steps, tol=0.0)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = train_gd_loop(X, y, W, 0.02, max_steps=steps, tol=0.0)
    t_slow = time.perf_counter() - t0
    diff = float((a.weights.beta - b.weights.beta).abs().max())
    return (f"GD batched ({n_problems} problems, D={d}, {steps} steps) vs loop", t_fast, t_slow, diff)


def bench_bias(d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    s_pt, s_ft = sample_teachers(FULL_OVERLAP, d, rng)
    X = sample_design(round(0.3 * d), d, rng)
    y = X @ s_ft
    c = ft_scales(s_pt, 0.05, -0.5, 0.1)
    t0 = time.perf_counter()
    fast = solve_bias(X, y, c).beta
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = solve_bias_slsqp(X, y, c, maxiter=2000)
    t_slow = time.perf_counter() - t0
    return (f"implicit bias: dual Newton vs SLSQP (D={d}, N={X.shape[0]})", t_fast, t_slow,
            float(np.abs(fast - slow).max()))


def bench_replica(n_uniform: int = 20001):
    from dltheory.pretrain_finetune import ScalarChannel, prox, prox_deriv

    class Uniform(ScalarChannel):
        def state(self, tau, theta):
            z = np.linspace(-9, 9, n_uniform)
            w = np.exp(-z**2 / 2)
            w /= w.sum()
            u = self.B[:, None] + tau * z[None, :]
            b = prox(u, theta, self.C[:, None])
            pw = self.p[:, None] * w[None, :]
            return float(np.sum(pw * (b - self.B[:, None]) ** 2)), float(np.sum(pw * prox_deriv(b, theta, self.C[:, None])))

    atoms = ([0.5, 0.5], [np.sqrt(2.0), 0.0], [1e-2, 1e-2])
    t0 = time.perf_counter()
    fast = ScalarChannel(*atoms).solve(0.95).error
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = Uniform(*atoms).solve(0.95).error
    t_slow = time.perf_counter() - t0
    return (f"replica (rho=0.5, alpha=0.95, c=1e-2): graded panels vs {n_uniform}-pt rule", t_fast, t_slow,
            abs(fast - slow))


def bench_batched_newton(n_seeds: int, d: int):
    from dltheory.pretrain_finetune import Task, run_exact
    from dltheory.pretrain_finetune.bias import solve_bias_batched

    runs = [run_exact(Task(0.2, 1.0, 0.0), d, 0.3, 1e-2, 0.5, 0.1, seed=s) for s in range(n_seeds)]
    X = np.stack([r.X for r in runs])
    y = np.einsum("bnd,bd->bn", X, np.stack([r.star_ft for r in runs]))
    c = np.stack([r.c_d for r in runs])
    t0 = time.perf_counter()
    fast, _ = solve_bias_batched(X, y, c)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = np.stack([solve_bias(X[i], y[i], c[i]).beta for i in range(n_seeds)])
    t_slow = time.perf_counter() - t0
    return (f"dual Newton batched torch ({n_seeds} seeds, D={d}) vs numpy loop", t_fast, t_slow,
            float(np.abs(fast - slow).max()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    if args.quick:
        rows = [bench_gd(8, 100, 300), bench_bias(40), bench_replica(4001), bench_batched_newton(2, 100)]
    else:
        rows = [bench_gd(32, 200, 2000), bench_bias(60), bench_bias(100), bench_replica(),
                bench_batched_newton(8, 400)]
    print(f"{'name':<70} {'time_fast':>10} {'time_slow':>10} {'ratio':>8} {'max abs diff':>13}")
    for name, tf, ts, diff in rows:
        print(f"{name:<70} {tf:>9.3f}s {ts:>9.3f}s {ts / tf:>8.1f} {diff:>13.2e}")
    return rows


if __name__ == "__main__":
    main()
