"""Benchmark: per-sample activation gradients at the insertion point.

fast: one backward pass of the summed loss (samples do not interact in a post-norm
RMSNorm network, so d(sum_j l_j)/dz_i = d l_i/dz_i); slow: one backward pass per sample.
Prints name, time_fast, time_slow, ratio, max abs diff.

    python benchmarks/bench_depth_expansion.py [--quick]
"""

from __future__ import annotations

import argparse

import torch

from dltheory import runtime
from dltheory.depth_expansion import activation_grads, activation_grads_loop, postnorm_mlp


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    sizes = [(64, 32, 4)] if args.quick else [(256, 64, 4), (1024, 64, 4), (1024, 128, 8)]
    rows = []
    print(f"{'name':<28}{'time_fast':>11}{'time_slow':>11}{'ratio':>9}{'max_abs_diff':>14}")
    for n, width, depth in sizes:
        gen = torch.Generator().manual_seed(0)
        X = torch.randn(n, 40, generator=gen, dtype=torch.float64)
        y = torch.randint(0, 10, (n,), generator=gen)
        model = postnorm_mlp(40, 10, width=width, depth=depth, seed=0).to(torch.float64)
        l = depth // 2
        t_fast, (_, g_fast) = runtime.best_of(lambda: activation_grads(model, l, X, y), 3)  # noqa: B023
        t_slow, g_slow = runtime.best_of(lambda: activation_grads_loop(model, l, X, y), 1)  # noqa: B023
        diff = float((g_fast - g_slow).abs().max())
        name = f"act_grads n={n} d={width} L={depth}"
        rows.append({"name": name, "time_fast": t_fast, "time_slow": t_slow,
                     "ratio": t_slow / t_fast, "max_abs_diff": diff})
        print(f"{name:<28}{t_fast:>11.4f}{t_slow:>11.4f}{t_slow / t_fast:>9.1f}{diff:>14.2e}")
    return rows


if __name__ == "__main__":
    main()
