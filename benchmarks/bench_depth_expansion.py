"""Benchmarks of the depth-expansion chapter.

1. Per-sample activation gradients at the insertion point. fast: one backward pass of the
   summed loss (samples do not interact in a post-norm RMSNorm network, so
   d(sum_j l_j)/dz_i = d l_i/dz_i); slow: one backward pass per sample. Prints name,
   time_fast, time_slow, ratio, max abs diff.
2. ``--paper`` (``--scale paper`` or ``full``): the preset's heaviest sweep (the width x
   depth grid) timed on a few of its tasks with the epochs cut to ``--epochs``; prints the
   time per epoch of each task and the extrapolated time of the full sweep (every cell,
   every seed, the preset's maximum epochs; cells that reach the target training loss stop
   earlier), next to the estimate of ``depth_expansion.cost``. A CIFAR-10 grid (``full``)
   is timed on 1000 random CIFAR-shaped images and scaled to CIFAR-10's 50000, or with
   ``--digits`` on the digits fallback (16x16); the paper grid is on digits.
3. ``--sims``: the simulations that make the theorems falsifiable (routes, Hoeffding,
   low-rank null) on synthetic losses at the chapter's smoke sizes.

    python benchmarks/bench_depth_expansion.py [--quick] [--paper [--scale full] [--epochs 2]
                                               [--digits]] [--sims]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import torch

from dltheory import runtime
from dltheory.depth_expansion import Config, activation_grads, activation_grads_loop, postnorm_mlp
from dltheory.depth_expansion import experiments as dx


def act_grads(quick: bool) -> list[dict]:
    sizes = [(64, 32, 4)] if quick else [(256, 64, 4), (1024, 64, 4), (1024, 128, 8)]
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


def paper_grid(epochs: int, cells, digits: bool = False, scale: str = "paper") -> dict:
    from dltheory.depth_expansion import cost as cost_model

    cfg = Config.for_scale(scale, device="cpu")
    digits = digits or cfg.conv_data != "cifar10"
    short = dataclasses.replace(cfg, grid_epochs=epochs, grid_target_ce=0.0, n_pop=10_000,
                                align_ns=(1000,), prog_n=4000,  # small pool: time training
                                conv_n_signal=1000)
    from dltheory.depth_expansion import data

    data.pool_for(short)   # generate the pools before timing
    if cfg.grid_arch == "conv" and digits:   # the fallback when CIFAR-10 is not on disk
        short = dataclasses.replace(short, conv_data="")
        scale_up = 1.0
    elif cfg.grid_arch == "conv":   # CIFAR-shaped stand-in: 1000 random 3x32x32 images
        gen = torch.Generator().manual_seed(0)
        n_img, scale_up = 1000, 50_000 / 1000
        fake = data.Pool("CIFAR-shaped random", torch.randn(n_img, 3, 32, 32, generator=gen,
                                                            dtype=torch.float32),
                         torch.randint(0, 10, (n_img,), generator=gen),
                         torch.randn(2000, 3, 32, 32, generator=gen, dtype=torch.float32),
                         torch.randint(0, 10, (2000,), generator=gen), None, None, 10)
        data.images_for = data.grid_images = lambda _cfg: fake   # noqa: E731 (benchmark only)
    else:
        scale_up = 1.0
    per_epoch = {}
    for w, L in cells:
        t = time.process_time()   # CPU time of this process (1 thread): load-independent
        fn = dx.conv_grid_task if cfg.grid_arch == "conv" else dx.grid_task
        fn(short, {"width": w, "depth": L, "seed": cfg.seed})
        per_epoch[(w, L)] = scale_up * (time.process_time() - t) / epochs
        print(f"paper grid task ({cfg.grid_arch}, {data.grid_images(short).name}) width={w} "
              f"depth={L}: {per_epoch[(w, L)]:.2f} CPU s per epoch ({epochs} epochs + probe)")
    # cost model fitted to the timed cells: time per epoch ~ c * cost(w, L)
    cost = (lambda w, L: L * w**2) if cfg.grid_arch == "conv" else Config.cost
    c = sum(per_epoch[k] / cost(*k) for k in per_epoch) / len(per_epoch)
    total = sum(c * cost(w, L) * cfg.grid_epochs * cfg.grid_seeds
                for w in cfg.grid_widths for L in cfg.grid_depths)
    print(f"estimated full {scale} grid on this CPU (1 thread): {total / 3600:.1f} h "
          f"({len(cfg.grid_widths) * len(cfg.grid_depths) * cfg.grid_seeds} tasks, up to "
          f"{cfg.grid_epochs} epochs each); cost model: "
          f"{cost_model.sweep_seconds(cfg, 'grid') / 3600:.1f} h on CPU, "
          f"{cost_model.sweep_seconds(cfg, 'grid', 'cuda') / 60:.1f} min on one GPU")
    return {"per_epoch": per_epoch, "total_s": total}


def sims() -> dict:
    """CPU seconds of the chapter's simulations at smoke sizes (n = 4000, K = 2000)."""
    import numpy as np

    from dltheory.depth_expansion import diagnostics, transfer

    rng = np.random.default_rng(0)
    base = np.minimum(rng.exponential(0.8, 3000), 5.0)
    L = np.stack([base, base * 0.97, base * 0.96, base * 0.95], 1)
    L = np.concatenate([L, transfer.complementary(L[:, 3], 5.0)], 1)
    out = {}
    for name, fn in (
            ("routes (2000 + 2000 draws)",
             lambda: transfer.simulate_routes(L, n=4000, K=2000, delta=0.05, draws=2000, seed=0)),
            ("hoeffding (400k test sets x 4)",
             lambda: transfer.simulate_hoeffding(2000, [0.1, 0.2, 0.3, 0.4], 5.0,
                                                 draws=400_000, seed=0)),
            ("low-rank null (600 draws, d = 64, r = 9)",
             lambda: diagnostics.simulate_offdiag(64, 9, draws=600, seed=0))):
        t = time.process_time()
        fn()
        out[name] = time.process_time() - t
        print(f"{name:<44}{out[name]:>8.2f} CPU s")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a few seconds)")
    ap.add_argument("--paper", action="store_true", help="time the paper grid on a few tasks")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--digits", action="store_true",
                    help="time on the digits fallback (16x16) instead of CIFAR-shaped images")
    ap.add_argument("--cells", default="16x2,32x2", help="WxL,... cells to time")
    ap.add_argument("--scale", default="paper", choices=("paper", "full"))
    ap.add_argument("--sims", action="store_true", help="time the theorem simulations")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    if args.paper:
        cells = [tuple(int(v) for v in c.split("x")) for c in args.cells.split(",")]
        return paper_grid(args.epochs, cells, digits=args.digits, scale=args.scale)
    if args.sims:
        return sims()
    return act_grads(args.quick)


if __name__ == "__main__":
    main()
