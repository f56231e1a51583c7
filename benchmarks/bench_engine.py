"""The prologue's drift sweep: seeds batched on the device vs a Python loop over seeds.

    python benchmarks/bench_engine.py [--quick] [--scale standard] [--repeats 3]

All three variants run the same GD trajectories (every start x every step size of the
drift-vs-tau sweep for ``k_fixed`` steps, and every start at ``tau_k`` for ``k_max`` steps)
from the same inputs and must return the same drift values:

- ``loop numpy``: the first edition's code, ``gradient_flow.gd`` once per (start, tau);
- ``loop torch``: the batched kernel called with one trajectory at a time (batch of 1);
- ``batched``: ``gradient_flow.gd_drift_batched`` once for all trajectories.

The table shows best-of-``repeats`` wall seconds, the speed-up of ``batched`` over each
loop and the largest relative difference of the drift values. A second table times the
engine itself (``experiments.sweep`` cold, then loaded from its cache).
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np
import pandas  # noqa: F401  (imported up front: the engine timing excludes the first import)

from dltheory import experiments, runtime
from dltheory import gradient_flow as gf


def inputs(cfg: gf.Config):
    p, _ = cfg.problem()
    starts = [cfg.start(cfg.seed + 100 + s) for s in range(cfg.n_seeds)]
    U0 = np.stack([u for u, _ in starts])
    V0 = np.stack([v for _, v in starts])
    return p, U0, V0


def loop_numpy(cfg, p, U0, V0):
    d_tau = np.array([[gf.gd(p, u, v, tau=t, steps=cfg.k_fixed).drift[-1] for t in cfg.taus]
                      for u, v in zip(U0, V0, strict=True)])
    d_k = np.array([gf.gd(p, u, v, tau=cfg.tau_k, steps=cfg.k_max).drift[1:]
                    for u, v in zip(U0, V0, strict=True)])
    return d_tau, d_k


def loop_torch(cfg, p, U0, V0):
    d_tau = np.array([[gf.gd_drift_batched(p, u[None], v[None], t, steps=cfg.k_fixed)[0, -1]
                       for t in cfg.taus] for u, v in zip(U0, V0, strict=True)])
    d_k = np.array([gf.gd_drift_batched(p, u[None], v[None], cfg.tau_k, steps=cfg.k_max)[0, 1:]
                    for u, v in zip(U0, V0, strict=True)])
    return d_tau, d_k


def batched(cfg, p, U0, V0):
    S, T = len(U0), cfg.n_tau
    d_tau = gf.gd_drift_batched(p, np.repeat(U0, T, 0), np.repeat(V0, T, 0),
                                np.tile(cfg.taus, S), steps=cfg.k_fixed)[:, -1].reshape(S, T)
    d_k = gf.gd_drift_batched(p, U0, V0, cfg.tau_k, steps=cfg.k_max)[:, 1:]
    return d_tau, d_k


def rel_diff(a, b) -> float:
    return float(max(np.max(np.abs(x - y) / np.abs(y)) for x, y in zip(a, b, strict=True)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke sizes, one repeat")
    ap.add_argument("--scale", default="standard", choices=["smoke", "standard", "paper"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    scale = "smoke" if args.quick else args.scale
    repeats = 1 if args.quick else args.repeats
    runtime.set_threads(1)
    cfg = gf.Config.for_scale(scale)
    p, U0, V0 = inputs(cfg)
    runs = cfg.n_seeds * (cfg.n_tau + 1)
    steps = cfg.n_seeds * (cfg.n_tau * cfg.k_fixed + cfg.k_max)
    print(f"scale={scale}: {cfg.n_seeds} starts x ({cfg.n_tau} taus x {cfg.k_fixed} steps + "
          f"{cfg.k_max} steps) = {runs} trajectories, {steps} GD steps, d={cfg.d}, n={cfg.n}, "
          f"1 CPU thread, best of {repeats}")
    batched(cfg, p, U0[:1], V0[:1])   # warm-up (torch's first kernels)
    t_b, ref = runtime.best_of(lambda: batched(cfg, p, U0, V0), repeats)
    print(f"{'variant':12s} {'seconds':>9s} {'batched speed-up':>17s} {'max rel diff':>13s}")
    for name, fn in (("loop numpy", loop_numpy), ("loop torch", loop_torch)):
        t, out = runtime.best_of(lambda f=fn: f(cfg, p, U0, V0), repeats)
        print(f"{name:12s} {t:9.3f} {t / t_b:16.1f}x {rel_diff(out, ref):13.1e}")
    print(f"{'batched':12s} {t_b:9.3f} {1.0:16.1f}x {0.0:13.1e}")

    with tempfile.TemporaryDirectory() as tmp:
        tasks = [{"block": b} for b in range(-(-cfg.n_seeds // cfg.seeds_per_task))]
        t_cold, df = runtime.best_of(lambda: experiments.sweep(
            gf.drift_task, tasks, config=cfg, cache=tmp, progress=False), 1)
        t_warm, df2 = runtime.best_of(lambda: experiments.sweep(
            gf.drift_task, tasks, config=cfg, cache=tmp, progress=False), repeats)
        same = df.equals(df2)
    print(f"engine: drift sweep of {len(tasks)} task(s), {len(df)} rows: cold {t_cold:.3f} s, "
          f"from cache {t_warm:.3f} s, identical table: {same}")


if __name__ == "__main__":
    main()
