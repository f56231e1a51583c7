"""Training loops and the chapter's experiments: one expansion with every term of the two
routes, progressive deepening, and the depth x width grid.

All functions take explicit seeds; nothing touches global RNG state (models are built
under ``torch.random.fork_rng``; mini-batches come from a seeded ``torch.Generator``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.nn import functional as F

from . import bounds, diagnostics
from . import signal as sg
from .data import Pool
from .models import SplitNet, ZeroInitBlock, insert_block, postnorm_mlp


def train(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor, *, epochs: int,
          lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128, seed: int = 0,
          params=None, warmup_steps: int = 0, stop_at: float | None = None) -> list[float]:
    """AdamW on unclipped cross-entropy for ``epochs`` passes over (X, y); only ``params``
    (default: all) are updated. Linear warmup over ``warmup_steps``. With ``stop_at``,
    stops after the first epoch whose mean training loss is <= stop_at (early stopping to a
    matched training loss). Returns the mean training loss of each epoch run."""
    if epochs < 0 or lr <= 0 or batch_size < 1:
        raise ValueError(f"need epochs >= 0, lr > 0, batch_size >= 1; got epochs={epochs}, "
                         f"lr={lr}, batch_size={batch_size}")
    params = [p for p in (model.parameters() if params is None else params) if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    gen = torch.Generator().manual_seed(int(seed))
    n = len(y)
    hist, step = [], 0
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen).to(y.device)
        tot = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            if warmup_steps:
                for grp in opt.param_groups:
                    grp["lr"] = lr * min(1.0, (step + 1) / warmup_steps)
            loss = F.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
            step += 1
        hist.append(tot / n)
        if stop_at is not None and hist[-1] <= stop_at:
            break
    model.eval()
    return hist


def risks_of(model, pool: Pool, Xs, ys, X_pop, y_pop, B: float) -> bounds.Risks:
    """Training risk on (Xs, ys), population proxy on (X_pop, y_pop), test risk on the pool."""
    pop = sg.risk(model, X_pop, y_pop, B) if X_pop is not None else float("nan")
    return bounds.Risks(sg.risk(model, Xs, ys, B), pop, sg.risk(model, pool.X_test, pool.y_test, B))


@dataclass
class Expansion:
    """Everything measured for one insertion into one trained old model."""

    n: int
    seed: int
    l: int
    risks: dict[str, bounds.Risks]          # old, pop, S, trained, new, control
    chosen: str                             # fallback choice for f_new
    sig_S: sg.Signal
    sig_pop: sg.Signal
    gamma_test: float
    cos: float                              # cos(C_S, C_pop)
    null: np.ndarray                        # permutation null of ||C|| on the population half
    z_score: float
    fd_slope: float                         # central difference of R_pop along -v_pop
    delta_R_ci: tuple[float, float, float]  # mean, lo, hi on the evaluation half
    jb_pop: sg.Jumpboard
    jb_S: sg.Jumpboard
    route_a: bounds.RouteA
    route_b: bounds.RouteB
    curves: dict[str, np.ndarray] = field(default_factory=dict)   # R(eta) on train/test/pop
    models: dict[str, torch.nn.Module] = field(default_factory=dict)  # old, pop, S, trained, control, new


def expand(old: SplitNet, pool: Pool, *, n: int, seed: int, l: int, etas, B: float = 5.0,
           block_epochs: int = 5, lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128,
           n_perm: int = 100, fd_eta: float = 1e-5) -> Expansion:
    """Insert a zero-init block before layer ``l`` of the trained ``old`` model and measure:
    gamma on S / pop-half A / test with a permutation null, the finite-difference slope, the
    two jumpboards (v and eta* from S, and from pop-half A), Delta_R with a bootstrap CI on
    pop-half B, block-only training with the fallback rule, the control "train f_old for
    the same extra epochs", and the Route A / Route B terms (R := risk on pop-half B)."""
    Xs, ys = pool.train_subset(n)
    half = len(pool.y_pop) // 2
    XA, yA = pool.X_pop[:half], pool.y_pop[:half]
    XB, yB = pool.X_pop[half:], pool.y_pop[half:]
    block = ZeroInitBlock(old.stem[0].out_features, seed=seed + 1000).to(pool.X_train.device)

    sig_S = sg.first_order_signal(old, l, block, Xs, ys, B)
    sig_pop = sg.first_order_signal(old, l, block, XA, yA, B)
    gamma_test = sg.first_order_signal(old, l, block, pool.X_test, pool.y_test, B).gamma
    null = sg.permutation_null(sig_pop, n_perm=n_perm, seed=seed)
    z = _zscore(sig_pop.gamma, null)
    fd = sg.slope_fd(old, l, block, XA, yA, sig_pop.v, fd_eta, B)

    jb_pop = sg.jumpboard(old, l, block, XA, yA, sig_pop.v, etas, B)
    jb_S = sg.jumpboard(old, l, block, Xs, ys, sig_S.v, etas, B)
    m_pop = insert_block(old, l, jb_pop.block(block))
    m_S = insert_block(old, l, jb_S.block(block))
    diff = (sg.per_sample_loss(old, XB, yB, B) - sg.per_sample_loss(m_pop, XB, yB, B)).cpu()
    ci = sg.bootstrap_mean_ci(diff.numpy(), seed=seed)

    trained_block = copy.deepcopy(block)
    trained_block.V.weight.requires_grad_(True)
    m_tr = insert_block(old, l, trained_block)
    train(m_tr, Xs, ys, epochs=block_epochs, lr=lr, wd=wd, batch_size=batch_size, seed=seed + 7,
          params=trained_block.parameters())
    control = copy.deepcopy(old)
    train(control, Xs, ys, epochs=block_epochs, lr=lr, wd=wd, batch_size=batch_size,
          seed=seed + 7)

    r = {name: risks_of(m, pool, Xs, ys, XB, yB, B) for name, m in
         (("old", old), ("pop", m_pop), ("S", m_S), ("trained", m_tr), ("control", control))}
    chosen = bounds.fallback_select({k: r[k] for k in ("trained", "pop", "S")})
    r["new"] = r[chosen]
    ra = bounds.route_a(r["old"], r["pop"], r["new"], K=len(pool.y_test), B=B)
    rb = bounds.route_b(r["old"], r["S"], r["new"])
    curves = {"eta": jb_pop.etas,
              "train": sg.risk_along(old, l, block, Xs, ys, sig_pop.v, jb_pop.etas, B),
              "test": sg.risk_along(old, l, block, pool.X_test, pool.y_test, sig_pop.v,
                                    jb_pop.etas, B),
              "pop": sg.risk_along(old, l, block, XB, yB, sig_pop.v, jb_pop.etas, B),
              "pop_A": jb_pop.risks}
    models = {"old": old, "pop": m_pop, "S": m_S, "trained": m_tr, "control": control}
    models["new"] = models[chosen]
    return Expansion(n, seed, l, r, chosen, sig_S, sig_pop, gamma_test,
                     sg.cosine(sig_S.C, sig_pop.C), null, float(z), fd, ci, jb_pop, jb_S, ra, rb,
                     curves, models)


def train_old(pool: Pool, *, n: int, width: int, depth: int, epochs: int, seed: int,
              lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128,
              warmup_steps: int = 0, stop_at: float | None = None
              ) -> tuple[SplitNet, list[float]]:
    """Build and train a post-norm residual MLP on the first ``n`` training samples
    (``stop_at``: early-stop at that training loss, see ``train``)."""
    Xs, ys = pool.train_subset(n)
    model = postnorm_mlp(Xs.shape[1], pool.n_classes, width=width, depth=depth, seed=seed)
    model = model.to(device=Xs.device, dtype=Xs.dtype)
    hist = train(model, Xs, ys, epochs=epochs, lr=lr, wd=wd, batch_size=batch_size, seed=seed,
                 warmup_steps=warmup_steps, stop_at=stop_at)
    return model, hist


def _zscore(x: float, null: np.ndarray) -> float:
    return float((x - null.mean()) / null.std(ddof=1))


def probe(model: SplitNet, pool: Pool, *, n: int, l: int, seed: int, B: float = 5.0,
          n_cov: int = 2000, n_perm: int = 20) -> dict:
    """Signal, alignment and gradient-covariance metrics of a zero-init block before layer
    ``l`` of ``model`` (no training): gamma_S, gamma_pop, cos(C_S, C_pop), the observability
    z-score z_S of gamma_S against its permutation null on S, E||g||, Sigma_g metrics on the
    population proxy, and RMS(z) of the block inputs."""
    Xs, ys = pool.train_subset(n)
    width = model.stem[0].out_features
    block = ZeroInitBlock(width, seed=seed + 1000).to(Xs.device)
    sS = sg.first_order_signal(model, l, block, Xs, ys, B)
    sP = sg.first_order_signal(model, l, block, pool.X_pop, pool.y_pop, B)
    sigma = diagnostics.grad_covariance(sP.g[:n_cov])
    cm = diagnostics.cov_metrics(sigma)
    return {"gamma_S": sS.gamma, "gamma_pop": sP.gamma, "cos": sg.cosine(sS.C, sP.C),
            "z_S": _zscore(sS.gamma, sg.permutation_null(sS, n_perm=n_perm, seed=seed)),
            "g_norm": float(sP.g.norm(dim=1).mean()),
            "off_energy": cm.off_energy, "mean_abs_corr": cm.mean_abs_corr,
            "top_ratio": cm.top_ratio, "sigma": sigma,
            "rms": diagnostics.rms(sP.z)}


def progressive_deepening(pool: Pool, *, n: int, width: int, depth0: int, rounds: int,
                          epochs: int, seed: int, lr: float = 3e-3, wd: float = 0.05,
                          batch_size: int = 128, B: float = 5.0) -> list[dict]:
    """Start from a trained ``depth0``-block model; each round inserts one zero-init block in
    the middle, measures its first-order signal (gamma_S, gamma_pop), then trains the whole
    model for ``epochs``. Row k (k = 0..rounds): depth, gammas of the block inserted in
    round k (nan for k = 0), train / test / pop risks after training."""
    Xs, ys = pool.train_subset(n)
    model, _ = train_old(pool, n=n, width=width, depth=depth0, epochs=epochs, seed=seed, lr=lr,
                         wd=wd, batch_size=batch_size)
    rows = []
    for k in range(rounds + 1):
        gS = gP = float("nan")
        if k > 0:
            l = model.depth // 2
            block = ZeroInitBlock(width, seed=seed + 100 + k).to(Xs.device)
            gS = sg.first_order_signal(model, l, block, Xs, ys, B).gamma
            gP = sg.first_order_signal(model, l, block, pool.X_pop, pool.y_pop, B).gamma
            model = insert_block(model, l, block)
            train(model, Xs, ys, epochs=epochs, lr=lr, wd=wd, batch_size=batch_size,
                  seed=seed + k)
        rk = risks_of(model, pool, Xs, ys, pool.X_pop, pool.y_pop, B)
        rows.append({"round": k, "depth": model.depth, "gamma_S": gS, "gamma_pop": gP,
                     "train": rk.train, "test": rk.test, "pop": rk.pop})
    return rows


def depth_width_grid(pool: Pool, *, n: int, widths, depths, epochs: int, seed: int,
                     lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128,
                     B: float = 5.0, warmup_steps: int = 0) -> list[dict]:
    """Train a post-norm MLP for every (width, depth) and record train / test / pop risk and
    ``probe`` metrics at the middle layer. Learning rate ``lr / sqrt(max(1, depth / 4))``
    (a mild depth scaling that keeps deep, wide nets from diverging)."""
    rows = []
    Xs, ys = pool.train_subset(n)
    for w in widths:
        for L in depths:
            lr_L = lr / math.sqrt(max(1.0, L / 4))
            model, hist = train_old(pool, n=n, width=w, depth=L, epochs=epochs, seed=seed,
                                    lr=lr_L, wd=wd, batch_size=batch_size,
                                    warmup_steps=warmup_steps)
            rk = risks_of(model, pool, Xs, ys, pool.X_pop, pool.y_pop, B)
            pr = probe(model, pool, n=n, l=L // 2, seed=seed, B=B)
            rows.append({"width": w, "depth": L, "train": rk.train, "test": rk.test,
                         "pop": rk.pop, "train_ce_last": hist[-1], **pr})
    return rows
