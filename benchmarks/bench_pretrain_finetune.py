"""Benchmark the chapter's two kernels against naive baselines.

1. Batched torch GD over many (seed, λ, α) FT problems vs a Python loop of single problems.
2. The dual-Newton implicit-bias solver vs SLSQP on the primal, at equal accuracy.

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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    if args.quick:
        rows = [bench_gd(8, 100, 300), bench_bias(40)]
    else:
        rows = [bench_gd(32, 200, 2000), bench_bias(60), bench_bias(100)]
    print(f"{'name':<70} {'time_fast':>10} {'time_slow':>10} {'ratio':>8} {'max abs diff':>13}")
    for name, tf, ts, diff in rows:
        print(f"{name:<70} {tf:>9.3f}s {ts:>9.3f}s {ts / tf:>8.1f} {diff:>13.2e}")
    return rows


if __name__ == "__main__":
    main()
