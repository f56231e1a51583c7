"""Training loops and the chapter's experiments: one expansion with every term of the two
routes, progressive deepening, and the depth x width grid.

All functions take explicit seeds; nothing touches global RNG state (models are built
under ``torch.random.fork_rng``; mini-batches come from a seeded ``torch.Generator``).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch.nn import functional as F

from .. import fitting, seeds, validation
from . import bounds, diagnostics, rules
from . import signal as sg
from .data import Pool
from .models import SplitNet, ZeroInitBlock, insert_block, postnorm_mlp


def train(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor, *, epochs: int,
          lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128, seed: int = 0,
          params=None, warmup_steps: int = 0, stop_at: float | None = None,
          decay: bool = False, stream: tuple = ()) -> list[float]:
    """AdamW on unclipped cross-entropy for ``epochs`` passes over (X, y); only ``params``
    (default: all) are updated. Linear warmup over ``warmup_steps``. With ``stop_at``,
    stops after the first epoch whose mean training loss is <= stop_at (early stopping to a
    matched training loss); ``decay``: the learning rate falls linearly to 0 over the run.
    Mini-batch order: the stream ``(seed, "batch order", *stream)``. Returns the mean
    training loss of each epoch run."""
    validation.integer("epochs", epochs, lo=0)
    validation.integer("batch_size", batch_size, lo=1)
    validation.real("lr", lr, lo=0, lo_open=True)
    validation.real("wd", wd, lo=0)
    if stop_at is not None:
        validation.real("stop_at", stop_at, lo=0)
    params = [p for p in (model.parameters() if params is None else params) if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    gen = seeds.torch(seed, "batch order", *stream)
    n = len(y)
    hist, step = [], 0
    total = epochs * math.ceil(n / batch_size)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen).to(y.device)
        tot = torch.zeros((), device=y.device)   # summed on the device: no sync per step
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            if warmup_steps or decay:
                f = min(1.0, (step + 1) / warmup_steps) if warmup_steps else 1.0
                if decay:
                    f *= 1.0 - step / total
                for grp in opt.param_groups:
                    grp["lr"] = lr * f
            loss = F.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.detach() * len(idx)
            step += 1
        hist.append(float(tot) / n)
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
    fd_slope: float                         # central difference of R_pop along -v_pop (float64)
    gamma64: float                          # gamma_pop on half A in float64 (FD prediction)
    heldout: tuple[float, float]            # (<C_B, v_A>, t): Condition 1 on half B
    raw_test: float                         # L_test of the unshrunk training-set jumpboard
    raw_se: float                           # s.e. of its paired test margin (per sample)
    raw_eta: float                          # its step (line search on S, before the shrink)
    t_train: float                          # Condition 1 on S, cross-fitted on its halves
    null_sq_pred: float                     # exact permutation mean of ||C_pi||^2
    delta_R_ci: tuple[float, float, float]  # mean, lo, hi on the evaluation half
    jb_pop: sg.Jumpboard
    jb_S: sg.Jumpboard
    route_a: bounds.RouteA
    route_b: bounds.RouteB
    curves: dict[str, np.ndarray] = field(default_factory=dict)   # R(eta) on train/test/pop
    models: dict[str, torch.nn.Module] = field(default_factory=dict)  # old, pop, S, trained, control, new
    halves_shared: int = 0                  # population samples in both halves (design: 0)


def population_halves(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Index sets of the population's two halves: A chooses directions and steps, B
    evaluates (disjoint by design; ``DE.split.halves_disjoint`` checks it)."""
    half = validation.integer("n", n, lo=2) // 2
    return torch.arange(half), torch.arange(half, n)


def expand(old: SplitNet, pool: Pool, *, n: int, seed: int, l: int, etas, B: float = 5.0,
           block_epochs: int = 5, lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128,
           n_perm: int = 100, fd_eta: float = 1e-5, ci_level: float = 0.95,
           curves: bool | int = True, shrink: bool = True,
           with_control: bool = True, n_fd: int = 1000) -> Expansion:
    """Insert a zero-init block before layer ``l`` of the trained ``old`` model and measure:
    gamma on S / pop-half A / test with a permutation null and its exact mean, the
    finite-difference slope (float64), the held-out test of Condition 1 (direction from half
    A, slope on half B), the two jumpboards (v and eta* from S, and from pop-half A),
    Delta_R with a bootstrap CI on pop-half B, block-only training with the fallback rule,
    the control "train f_old for the same extra epochs", and the Route A / Route B terms
    (R := risk on pop-half B). ``curves``: also R(eta) on train / test / half B (figure;
    an int: on at most that many samples of each).
    ``shrink``: each jumpboard's line-search step is multiplied by
    ``signal.selection_shrink`` of the sample that chose its direction. The slope check
    uses the first ``n_fd`` samples of half A. Without
    ``with_control`` the control is the old model itself (not trained further)."""
    validation.integer("n_perm", n_perm, lo=2)
    validation.real("fd_eta", fd_eta, lo=0, lo_open=True)
    Xs, ys = pool.train_subset(n)
    iA, iB = population_halves(len(pool.y_pop))
    shared = len(set(iA.tolist()) & set(iB.tolist()))
    iA, iB = iA.to(pool.y_pop.device), iB.to(pool.y_pop.device)
    XA, yA = pool.X_pop[iA], pool.y_pop[iA]
    XB, yB = pool.X_pop[iB], pool.y_pop[iB]
    dev, dt = pool.X_train.device, pool.X_train.dtype
    block = ZeroInitBlock(old.stem[0].out_features, seed=seed).to(device=dev, dtype=dt)

    sig_S = sg.first_order_signal(old, l, block, Xs, ys, B)
    sig_pop = sg.first_order_signal(old, l, block, XA, yA, B)
    gamma_test = sg.first_order_signal(old, l, block, pool.X_test, pool.y_test, B).gamma
    null = sg.permutation_null(sig_pop, n_perm=n_perm, seed=seed)
    null_sq_pred = sg.null_mean_square(sig_pop.g, sig_pop.phi)
    z = _zscore(sig_pop.gamma, null)
    sig_B = sg.first_order_signal(old, l, block, XB, yB, B)
    heldout = sg.directional_t(sig_B.g, sig_B.phi, sig_pop.v)
    # Condition 1 on S, cross-fitted: direction from the first half of S, slope on the second
    h = len(ys) // 2
    C1 = sg.signal_matrix(sig_S.g[:h], sig_S.phi[:h])
    t_train = sg.directional_t(sig_S.g[h:], sig_S.phi[h:], C1 / C1.norm())[1]
    # first-order slope in float64 (a float64 copy of the model, block and half A)
    old64, block64 = copy.deepcopy(old).double(), copy.deepcopy(block).double()
    k = min(len(yA), n_fd)
    s64 = sg.first_order_signal(old64, l, block64, XA[:k].double(), yA[:k], B)
    fd = sg.slope_fd(old64, l, block64, XA[:k].double(), yA[:k], s64.v, fd_eta, B)

    jb_pop = sg.jumpboard(old, l, block, XA, yA, sig_pop.v, etas, B)
    jb_S = sg.jumpboard(old, l, block, Xs, ys, sig_S.v, etas, B)
    # test margin of the plain line-search step from S (before the shrink), for comparison
    raw_d = (sg.per_sample_loss(old, pool.X_test, pool.y_test, B).double()
             - sg.per_sample_loss(insert_block(old, l, jb_S.block(block)), pool.X_test,
                                  pool.y_test, B).double())
    raw_test = sg.risk(old, pool.X_test, pool.y_test, B) - float(raw_d.mean())
    raw_se, raw_eta = float(raw_d.std() / math.sqrt(len(raw_d))), jb_S.eta
    if shrink:   # the step found on the sample that chose v, shrunk for its selection bias
        jb_pop = dataclasses.replace(jb_pop, eta=jb_pop.eta * sg.selection_shrink(sig_pop))
        jb_S = dataclasses.replace(jb_S, eta=jb_S.eta * sg.selection_shrink(sig_S))
    m_pop = insert_block(old, l, jb_pop.block(block))
    m_S = insert_block(old, l, jb_S.block(block))
    diff = (sg.per_sample_loss(old, XB, yB, B) - sg.per_sample_loss(m_pop, XB, yB, B)).cpu()
    ci = fitting.bootstrap_mean_ci(diff.double().numpy(), seed=seed, level=ci_level)

    trained_block = copy.deepcopy(block)
    trained_block.V.weight.requires_grad_(True)
    m_tr = insert_block(old, l, trained_block)
    train(m_tr, Xs, ys, epochs=block_epochs, lr=lr, wd=wd, batch_size=batch_size, seed=seed,
          params=trained_block.parameters(), stream=("after expansion",))
    control = copy.deepcopy(old)
    if with_control:
        train(control, Xs, ys, epochs=block_epochs, lr=lr, wd=wd, batch_size=batch_size,
              seed=seed, stream=("after expansion",))

    r = {name: risks_of(m, pool, Xs, ys, XB, yB, B) for name, m in
         (("old", old), ("pop", m_pop), ("S", m_S), ("trained", m_tr), ("control", control))}
    chosen = bounds.fallback_select({k: r[k] for k in ("trained", "pop", "S")})
    r["new"] = r[chosen]
    ra = bounds.route_a(r["old"], r["pop"], r["new"], K=len(pool.y_test), B=B)
    rb = bounds.route_b(r["old"], r["S"], r["new"])
    cv = {}
    if curves:   # for the figure only: at most n_curve samples of each set
        k = int(curves) if not isinstance(curves, bool) else len(ys)
        along = lambda X, y: sg.risk_along(old, l, block, X[:k], y[:k], sig_pop.v,  # noqa: E731
                                           jb_pop.etas, B)
        cv = {"eta": jb_pop.etas, "train": along(Xs, ys), "test": along(pool.X_test, pool.y_test),
              "pop": along(XB, yB), "pop_A": jb_pop.risks}
    models = {"old": old, "pop": m_pop, "S": m_S, "trained": m_tr, "control": control}
    models["new"] = models[chosen]
    return Expansion(n, seed, l, r, chosen, sig_S, sig_pop, gamma_test,
                     sg.cosine(sig_S.C, sig_pop.C), null, float(z), fd, s64.gamma, heldout,
                     raw_test, raw_se, raw_eta, float(t_train), null_sq_pred, ci, jb_pop, jb_S,
                     ra, rb, cv, models, halves_shared=shared)


def train_old(pool: Pool, *, n: int, width: int, depth: int, epochs: int, seed: int,
              lr: float = 3e-3, wd: float = 0.05, batch_size: int = 128,
              warmup_steps: int = 0, stop_at: float | None = None, decay: bool = False
              ) -> tuple[SplitNet, list[float]]:
    """Build and train a post-norm residual MLP on the first ``n`` training samples
    (``stop_at``: early-stop at that training loss, see ``train``)."""
    Xs, ys = pool.train_subset(n)
    model = postnorm_mlp(Xs.shape[1], pool.n_classes, width=width, depth=depth, seed=seed)
    model = model.to(device=Xs.device, dtype=Xs.dtype)
    hist = train(model, Xs, ys, epochs=epochs, lr=lr, wd=wd, batch_size=batch_size, seed=seed,
                 warmup_steps=warmup_steps, stop_at=stop_at, decay=decay)
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
    block = ZeroInitBlock(width, seed=seed).to(device=Xs.device, dtype=Xs.dtype)
    sS = sg.first_order_signal(model, l, block, Xs, ys, B)
    sP = sg.first_order_signal(model, l, block, pool.X_pop, pool.y_pop, B)
    sigma = diagnostics.grad_covariance(sP.g[:n_cov])
    cm = diagnostics.cov_metrics(sigma)
    null_S = sg.permutation_null(sS, n_perm=n_perm, seed=seed)
    return {"gamma_S": sS.gamma, "gamma_pop": sP.gamma, "cos": sg.cosine(sS.C, sP.C),
            "z_S": _zscore(sS.gamma, null_S), "ratio_S": sS.gamma / float(null_S.mean()),
            "offdiag_null": diagnostics.lowrank_offdiag(width, pool.n_classes - 1),
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
    round k (nan for k = 0) with the population's mean activation-gradient norm g_norm and
    the scale-free coherence gamma_pop / (mean ||g|| mean ||phi||) (up to a constant factor
    fixed by the sample), train / test / pop risks after training."""
    Xs, ys = pool.train_subset(n)
    model, _ = train_old(pool, n=n, width=width, depth=depth0, epochs=epochs, seed=seed, lr=lr,
                         wd=wd, batch_size=batch_size)
    rows = []
    for k in range(rounds + 1):
        gS = gP = gn = coh = float("nan")
        if k > 0:
            l = model.depth // 2
            block = ZeroInitBlock(width, seed=seed, stream=("round", k)).to(
                device=Xs.device, dtype=Xs.dtype)
            gS = sg.first_order_signal(model, l, block, Xs, ys, B).gamma
            sP = sg.first_order_signal(model, l, block, pool.X_pop, pool.y_pop, B)
            gP, gn = sP.gamma, float(sP.g.norm(dim=1).mean())
            coh = gP / (gn * float(sP.phi.norm(dim=1).mean()))
            model = insert_block(model, l, block)
            train(model, Xs, ys, epochs=epochs, lr=lr, wd=wd, batch_size=batch_size,
                  seed=seed, stream=("round", k))
        rk = risks_of(model, pool, Xs, ys, pool.X_pop, pool.y_pop, B)
        rows.append({"round": k, "depth": model.depth, "gamma_S": gS, "gamma_pop": gP,
                     "g_norm": gn, "coherence": coh,
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


# --------------------------------------------------------------------------------------
# Sweeps used by the chapter: module-level task functions (config, task) -> row(s), run
# through ``dltheory.experiments.sweep`` (cached, resumable, any backend), and one
# function per experiment returning a tidy DataFrame.
# --------------------------------------------------------------------------------------

def device_kind(cfg) -> str:
    """"cuda" when the chapter's tensors go to a GPU, else "cpu" (for the cost model)."""
    dev = str(cfg.device)
    return "cuda" if dev.startswith("cuda") or (dev == "auto" and torch.cuda.is_available()) \
        else "cpu"


def _sweep(fn, tasks, cfg, name, *, rounds: str | None = "seed"):
    """Run a sweep of the chapter, in rounds of ``rounds`` (a task key) under the chapter
    budget. Under a budget, a sweep whose *first* round the cost model (``cost``) puts above
    the sweep's allotment is not started: the returned table is empty, with
    ``attrs["skipped"]`` (the reason) and ``attrs["rounds"] = (0, planned)``; the checks
    make its claims INCONCLUSIVE with that reason (decided from the sizes, before running).
    A sweep whose first round the budget ends part-way returns the same empty table, its
    reason "had k of n tasks of the first round"."""
    from .. import budget
    from .. import experiments as engine
    from . import cost

    full = f"depth_expansion.{name}"
    rounds = rounds if rounds is not None and all(rounds in t for t in tasks) else None
    planned = len({t[rounds] for t in tasks}) if rounds else 1
    allot = budget.allot(full)
    if allot is not None:
        dev = device_kind(cfg)
        need = cost.round_seconds(cfg, name.split("_")[0], dev)
        if need > allot:
            df = pd.DataFrame()
            df.attrs["rounds"] = (0, planned)
            df.attrs["skipped"] = (f"not run under this budget: one round of the {name} sweep "
                                   f"needs about {need:.0f} s on {dev} (cost model of "
                                   f"depth_expansion.cost), its share of the budget was "
                                   f"{allot:.0f} s")
            budget.note_rounds(full, 0, planned)
            return df
    df = engine.sweep(fn, tasks, config=cfg, name=full, rounds=rounds)
    df.attrs.setdefault("rounds", (planned, planned))
    if rounds and df.attrs["rounds"][0] == 0:
        # the budget ended the first round part-way: its table lacks cells (a grid's,
        # the twin) that the checks read, so its claims are INCONCLUSIVE, never decided
        # on part of a round
        first = min(t[rounds] for t in tasks)
        n_first = sum(t[rounds] == first for t in tasks)
        had = df.attrs.get("tasks", (len(df), len(tasks)))[0]
        cut = pd.DataFrame()
        cut.attrs["rounds"] = df.attrs["rounds"]
        cut.attrs["tasks"] = (had, len(tasks))
        cut.attrs["skipped"] = (f"had {had} of {n_first} tasks of the {name} sweep's first "
                                f"round under this budget (a round is the unit the checks "
                                f"read)")
        return cut
    return df


def skipped(df) -> str | None:
    """The reason a sweep's table is empty (not run under the budget), else None."""
    return getattr(df, "attrs", {}).get("skipped")


# The chapter's tables: name -> (columns, level of the expansions' index or None).
TABLES = {
    "old_models": (["epochs", "train_old", "test_old", "pop_old"], None),
    "signal": (["gamma_S", "gamma_pop", "fd_slope", "gamma64", "t_cond1", "z_perm", "cos"],
               "old"),
    "jumpboards": (["eta_pop", "delta_R", "delta_R_lo", "delta_R_hi", "t_train", "eta_S",
                    "delta_test", "cos"], "old"),
    "condition2": (["chosen", "test_old", "test_new", "test_control", "delta_erm_pop",
                    "delta_erm_S"], "old"),
    "routes": (["lhs", "delta_R", "test_bracket", "rhsA", "failure_prob", "K_needed",
                "delta_test", "rhsB"], "old"),
    "theorems": (["A_worst_tightness", "A_worst_predicted", "B_worst_tightness",
                  "B_worst_predicted", "A_tightness", "B_tightness", "B_worst_coverage_fail",
                  "event_fail", "event_bound"], None),
    "degenerate": (["train_old", "test_old", "gamma_S", "gamma_pop", "cos", "delta_test"],
                   None),
    "conv": (["data", "train_ce", "gamma_S", "gamma_test", "z", "cos", "delta_test"], None),
    "transformer": (["train_ce", "test", "gamma", "fd_slope", "t_cond1", "eta", "delta_R",
                     "delta_R_lo"], None),
}


def view(df, cols=None, model: str | None = None):
    """A sweep's table for display (``model``: one level of the expansions' index, ``cols``:
    its columns, or the name of one of the chapter's ``TABLES``), or the one-line reason
    when the sweep was not run."""
    why = skipped(df)
    if why:
        return why
    if isinstance(cols, str):
        cols, model = TABLES[cols]
    out = df.loc[model] if model is not None else df
    return out[cols] if cols is not None else out


def _old_model(cfg, pool, seed: int, *, twin: bool = False):
    epochs = cfg.budget_epochs(cfg.twin_max_epochs if twin else cfg.epochs_old)
    return train_old(pool, n=cfg.n_train, width=cfg.width, depth=cfg.depth, epochs=epochs,
                     seed=seed, lr=cfg.lr_old, wd=0.0 if twin else cfg.wd, batch_size=cfg.batch,
                     stop_at=cfg.twin_target_ce if twin else None, decay=twin,
                     warmup_steps=cfg.warmup_old)


def _function_preservation(cfg, model: SplitNet, X: torch.Tensor) -> dict:
    """max |logits_new - logits_old| over every insertion point, for the matrix and the
    ReZero block (float64), and for a whole post-norm block N(z + 0) inserted instead."""
    from .models import PostNormBlock

    m64, X64 = copy.deepcopy(model).double(), X.double()
    worst = 0.0
    with torch.no_grad():
        base = m64(X64)
        for kind in ("mlp", "rezero"):
            for l in range(m64.depth + 1):
                blk = ZeroInitBlock(cfg.width, kind=kind, seed=1).to(device=X.device,
                                                                     dtype=torch.float64)
                worst = max(worst, float((insert_block(m64, l, blk)(X64) - base).abs().max()))
        pn = PostNormBlock(cfg.width).to(device=X.device, dtype=torch.float64)
        pn.V.weight.zero_()
        pn.V.bias.zero_()
        pn.norm.gain.copy_(m64.blocks[cfg.l_star].norm.gain)
        post = float((insert_block(m64, cfg.l_star, pn)(X64) - base).abs().max())
    return {"fp_max": worst, "postnorm_diff": post}


def _regularity(cfg, model: SplitNet, X: torch.Tensor) -> dict:
    """RMS of the pre-normalisation sums u = z + V relu(U z) in every block, and the exact
    Jacobian norm of block l_star's RMSNorm at n_lip of them against the bound."""
    with torch.no_grad():
        z = model.stem(X)
        pre = []
        for b in model.blocks:
            pre.append(z + b.V(torch.relu(b.U(z))))
            z = b(z)
    norm = model.blocks[cfg.l_star].norm
    u = pre[cfg.l_star][:cfg.n_lip].double()
    n64 = copy.deepcopy(norm).double()
    measured = diagnostics.rmsnorm_jacobian_norms(n64, u)
    bound = diagnostics.rmsnorm_jacobian_bound(n64.gain, diagnostics.rms(u), n64.eps)
    rms_pre = np.concatenate([diagnostics.rms(p) for p in pre])
    r1 = float(np.quantile(rms_pre, 0.01))
    return {"lip_ratio_max": float((measured / bound).max()),
            "lip_ratio_min": float((measured / bound).min()),
            "rms_r1": r1, "norm_eps": norm.eps,
            "lip_r": diagnostics.rmsnorm_jacobian_bound(norm.gain, r1, norm.eps),
            "lip_naive": diagnostics.eps_naive_bound(norm.gain, norm.eps),
            "rms_pre": rms_pre.astype(np.float32)}


def _losses_B(cfg, pool: Pool, e: Expansion) -> np.ndarray:
    """Per-sample clipped losses on population half B of f_old, f_pop, f_S, f_new:
    (N_B, 4) float32 (the population of the routes' simulations)."""
    iB = population_halves(len(pool.y_pop))[1].to(pool.y_pop.device)
    XB, yB = pool.X_pop[iB], pool.y_pop[iB]
    return torch.stack([sg.per_sample_loss(e.models[k], XB, yB, cfg.B)
                        for k in ("old", "pop", "S", "new")], 1).cpu().numpy().astype(np.float32)


def _small_rms(cfg, norm, seed: int) -> dict:
    """RMSNorm where eps dominates: exact Jacobian norms of ``norm`` (float64) at inputs of
    RMS from rms_lo to rms_hi times sqrt(eps) (random directions, log-spaced radii) and at
    u = 0, against the bound and the eps-naive constant."""
    n64 = copy.deepcopy(norm).double()
    gen = seeds.torch(seed, "small-rms inputs")
    d = n64.gain.numel()
    k = rules.N_SMALL_RMS
    u = torch.randn(k, d, generator=gen, dtype=torch.float64)
    r = torch.logspace(math.log10(rules.RMS_LO), math.log10(rules.RMS_HI), k, dtype=torch.float64)
    u = u / u.pow(2).mean(1, keepdim=True).sqrt() * (r * math.sqrt(n64.eps))[:, None]
    u = torch.cat([u, torch.zeros(1, d, dtype=torch.float64)])
    measured = diagnostics.rmsnorm_jacobian_norms(n64, u)
    bound = diagnostics.rmsnorm_jacobian_bound(n64.gain, diagnostics.rms(u), n64.eps)
    naive = diagnostics.eps_naive_bound(n64.gain, n64.eps)
    ratio = measured / bound
    return {"small_ratio_min": float(ratio.min()), "small_ratio_max": float(ratio.max()),
            "naive_ratio_max": float(measured.max() / naive),
            "naive_ratio_at0": float(measured[-1] / naive)}


def _lipschitz(cfg, model: SplitNet, pool: Pool) -> dict:
    """The constants the theorems assume: the largest gradient norm of the clipped loss in
    the logits (population sample) and, at n_lip samples, the exact Jacobian norm of f_top
    against its certified per-sample bound."""
    from . import lipschitz as lp

    with torch.no_grad():
        logits = torch.cat([model(pool.X_pop[i:i + 8192]) for i in range(0, len(pool.y_pop),
                                                                             8192)])
    gl = lp.loss_grad_norms(logits, pool.y_pop, cfg.B)
    m64 = copy.deepcopy(model).double()
    with torch.no_grad():
        z = m64.bottom(pool.X_pop[:cfg.n_lip].double(), cfg.l_star)
    J = lp.top_jacobian_norms(m64, cfg.l_star, z)
    bound = lp.top_lipschitz_bounds(m64, cfg.l_star, z)
    return {"loss_grad_max": float(gl.max()), "loss_grad_share_above1": float((gl > 1).mean()),
            "loss_lip": lp.loss_lipschitz(cfg.B), "top_jac_max": float(J.max()),
            "top_ratio_max": float((J / bound).max()), "top_bound_max": float(bound.max()),
            **_small_rms(cfg, model.blocks[cfg.l_star].norm, cfg.seed)}


def expansion_task(cfg, task: dict) -> dict:
    """One trained old model (task["model"]: "old" with weight decay, or the interpolating
    "twin") of seed task["seed"], expanded at cfg.l_star: every number the chapter's
    sections on the signal, the jumpboards, Condition 2, the routes and the normalisation
    use (plain floats, plus a few arrays for the figures)."""
    from . import data

    pool = data.pool_for(cfg)
    twin = task["model"] == "twin"
    old, hist = _old_model(cfg, pool, task["seed"], twin=twin)
    return measure_expansion(cfg, pool, old, hist, task["seed"], twin=twin)


def measure_expansion(cfg, pool: Pool, old: SplitNet, hist: list[float], seed: int, *,
                      twin: bool = False) -> dict:
    """The row of ``expansion_task`` for an already trained old model (tests plant errors
    in the theory and call this on a small model)."""
    first = seed == cfg.seed
    e = expand(old, pool, n=cfg.n_train, seed=seed, l=cfg.l_star, etas=cfg.etas,
               B=cfg.B, block_epochs=cfg.budget_epochs(cfg.block_epochs, floor=1), lr=cfg.lr_old,
               wd=cfg.wd, batch_size=cfg.batch, n_perm=cfg.n_perm_eff, fd_eta=cfg.fd_eta,
               ci_level=cfg.ci_level, curves=cfg.n_curve if first and not twin else False,
               with_control=not twin)
    r, ra, rb = e.risks, e.route_a, e.route_b
    dl = (sg.per_sample_loss(e.models["new"], pool.X_test, pool.y_test, cfg.B).double()
          - sg.per_sample_loss(old, pool.X_test, pool.y_test, cfg.B).double())
    direct, direct_se = float(dl.mean()), float(dl.std() / math.sqrt(len(dl)))
    row = {"epochs": len(hist), "train_ce": hist[-1],
           "gamma_S": e.sig_S.gamma, "gamma_pop": e.sig_pop.gamma, "gamma_test": e.gamma_test,
           "gamma64": e.gamma64, "fd_slope": e.fd_slope,
           "heldout_slope": e.heldout[0], "t_cond1": e.heldout[1],
           "null_mean": float(e.null.mean()), "null_sd": float(e.null.std(ddof=1)),
           "null_sq_mean": float((e.null**2).mean()),
           "null_sq_se": float((e.null**2).std(ddof=1) / math.sqrt(len(e.null))),
           "null_sq_pred": e.null_sq_pred, "z_perm": e.z_score,
           "mean_part": float(e.sig_pop.g.mean(0).norm() * e.sig_pop.phi.mean(0).norm()),
           "cos": e.cos, "eta_pop": e.jb_pop.eta, "eta_S": e.jb_S.eta,
           "t_train": e.t_train, "kappa_S": sg.selection_shrink(e.sig_S),
           "kappa_pop": sg.selection_shrink(e.sig_pop),
           "delta_R": e.delta_R_ci[0], "delta_R_lo": e.delta_R_ci[1],
           "delta_R_hi": e.delta_R_ci[2], "delta_test": rb.delta_test, "chosen": e.chosen,
           "delta_test_raw": r["old"].test - e.raw_test, "delta_test_raw_se": e.raw_se,
           "eta_S_raw": e.raw_eta,
           "erm_trained": min(r[j].train - r["trained"].train for j in ("pop", "S")),
           "delta_erm_pop": ra.delta_erm, "delta_erm_S": rb.delta_erm,
           "gap_bracket": ra.gap_bracket, "test_bracket": ra.test_bracket,
           "tg_bracket": rb.bracket, "lhs": ra.lhs, "lhs_direct": direct,
           "lhs_se": direct_se, "halves_shared": e.halves_shared,
           "idA_sum": ra.identity_sum, "idB_sum": rb.identity_sum,
           "rhsA": ra.rhs, "rhsB": rb.rhs, "eps_M": ra.eps_M, "eps_M_B": rb.eps_M,
           "eps_K_B": rb.eps_K, "failure_prob": ra.failure_prob, "K_needed": ra.K_needed,
           "null": e.null.astype(np.float32), "curves": e.curves or None,
           "z_max": float(e.sig_pop.z.norm(dim=1).max()),
           "losses_B": _losses_B(cfg, pool, e),
           "U_norm": float(ZeroInitBlock(cfg.width, seed=seed).U.weight.detach().norm())}
    for name in ("old", "new", "control", "trained"):
        for part in ("train", "pop", "test"):
            row[f"{part}_{name}"] = getattr(r[name], part)
    if not twin:
        row.update(_regularity(cfg, old, pool.X_pop[:4000]))
        row.update(_lipschitz(cfg, old, pool))
        if first:
            row.update(_function_preservation(cfg, old, pool.X_test[:128]))
    return row


def expansions(cfg) -> pd.DataFrame:
    """The main demonstration: one row per old model (cfg.seeds) plus the interpolating
    twin (seed cfg.seed), indexed by (model, seed)."""
    tasks = [{"model": "old", "seed": s} for s in cfg.seeds] + [{"model": "twin",
                                                                   "seed": cfg.seed}]
    df = _sweep(expansion_task, tasks, cfg, "expansion")
    return df if skipped(df) else _keep_attrs(df, df.set_index(["model", "seed"]))


def alignment_task(cfg, task: dict) -> dict:
    """cos(C_S, C_pop) of a model trained on n samples for a fixed number of steps."""
    from . import data

    pool = data.pool_for(cfg)
    n, s = task["n"], task["seed"]
    ep = max(1, round(cfg.align_steps_eff * cfg.batch / n))
    m, _ = train_old(pool, n=n, width=cfg.width, depth=cfg.depth, epochs=ep, seed=s,
                     lr=cfg.lr_old, wd=cfg.wd, batch_size=cfg.batch,
                     warmup_steps=math.ceil(n / cfg.batch))
    blk = ZeroInitBlock(cfg.width, seed=s).to(device=pool.X_train.device,
                                                      dtype=pool.X_train.dtype)
    Xs, ys = pool.train_subset(n)
    cS = sg.first_order_signal(m, cfg.l_star, blk, Xs, ys, cfg.B).C
    cP = sg.first_order_signal(m, cfg.l_star, blk, pool.X_pop, pool.y_pop, cfg.B).C
    return {"epochs": ep, "cos": sg.cosine(cS, cP)}


def alignment(cfg) -> pd.DataFrame:
    """Data and the first-order direction: one row per (n, seed)."""
    tasks = [{"n": n, "seed": s} for n in cfg.align_ns
             for s in range(cfg.seed, cfg.seed + cfg.align_seeds)]
    return _sweep(alignment_task, tasks, cfg, "alignment")


def grid_task(cfg, task: dict) -> dict:
    """One (width, depth, seed) cell: train / test / pop risk and the probe at the middle
    layer (lr / sqrt(max(1, depth / 4)); trained to cfg.grid_target_ce when it is > 0)."""
    from . import data

    pool = data.pool_for(cfg)
    w, L, s = task["width"], task["depth"], task["seed"]
    model, hist = train_old(pool, n=cfg.n_train, width=w, depth=L, epochs=cfg.grid_epochs,
                            seed=s, lr=cfg.lr / math.sqrt(max(1.0, L / 4)), wd=cfg.wd,
                            batch_size=cfg.batch, stop_at=cfg.grid_target_ce or None)
    Xs, ys = pool.train_subset(cfg.n_train)
    rk = risks_of(model, pool, Xs, ys, pool.X_pop, pool.y_pop, cfg.B)
    pr = probe(model, pool, n=cfg.n_train, l=L // 2, seed=s, B=cfg.B)
    keep_sigma = L == max(cfg.grid_depths) and s == cfg.seed
    pr["sigma"] = pr["sigma"].astype(np.float32) if keep_sigma else None
    pr.pop("rms")
    return {"epochs": len(hist), "train": rk.train, "test": rk.test, "pop": rk.pop, **pr}


def conv_grid_task(cfg, task: dict) -> dict:
    """One (channels, depth, seed) cell of the conv grid: a post-norm GroupNorm conv ResNet
    on the grid images, trained until its training CE reaches cfg.grid_target_ce (at most
    cfg.grid_epochs epochs; ``reached`` says whether it did); the signal of a conv block
    inserted in the middle (before block depth // 2) on train and test images (test stands
    in for the population), and the channel covariance of the test activation gradients
    (positions count as observations)."""
    from . import data
    from .models import postnorm_convnet

    imgs = data.grid_images(cfg)
    w, L, s = task["width"], task["depth"], task["seed"]
    dev, dt = imgs.X_train.device, imgs.X_train.dtype
    net = postnorm_convnet(imgs.X_train.shape[1], imgs.n_classes, channels=w, depth=L,
                           seed=s).to(device=dev, dtype=dt)
    hist = train(net, imgs.X_train, imgs.y_train, epochs=cfg.grid_epochs,
                 lr=cfg.grid_lr / math.sqrt(max(1.0, L / 4)), wd=cfg.wd,
                 batch_size=cfg.grid_batch, seed=s, stop_at=cfg.grid_target_ce or None)
    blk = ZeroInitBlock(w, kind="conv", seed=s).to(device=dev, dtype=dt)
    k = cfg.conv_n_signal
    sS = sg.first_order_signal(net, L // 2, blk, imgs.X_train[:k], imgs.y_train[:k], cfg.B)
    sT = sg.first_order_signal(net, L // 2, blk, imgs.X_test[:k], imgs.y_test[:k], cfg.B)
    sigma = diagnostics.grad_covariance(sT.g)
    cm = diagnostics.cov_metrics(sigma)
    keep = L == max(cfg.grid_depths) and s == cfg.seed
    return {"epochs": len(hist), "train_ce": hist[-1],
            "reached": bool(cfg.grid_target_ce and hist[-1] <= cfg.grid_target_ce),
            "train": sg.risk(net, imgs.X_train, imgs.y_train, cfg.B),
            "test": sg.risk(net, imgs.X_test, imgs.y_test, cfg.B), "gamma_S": sS.gamma,
            "gamma_pop": sT.gamma, "cos": sg.cosine(sS.C, sT.C), "off_energy": cm.off_energy,
            "top_ratio": cm.top_ratio,
            "offdiag_null": diagnostics.lowrank_offdiag(w, imgs.n_classes - 1),
            "rotation_null": diagnostics.rotation_offdiag(sigma),
            "sigma": sigma.astype(np.float32) if keep else None}


def grid(cfg) -> pd.DataFrame:
    """Width x depth grid of old models: one row per (width, depth, seed); conv ResNets on
    images (cfg.grid_arch = "conv") or post-norm MLPs on MNIST-1D ("mlp")."""
    tasks = [{"width": w, "depth": L, "seed": s} for w in cfg.grid_widths
             for L in cfg.grid_depths for s in range(cfg.seed, cfg.seed + cfg.grid_seeds)]
    fn = conv_grid_task if cfg.grid_arch == "conv" else grid_task
    return _sweep(fn, tasks, cfg, f"grid_{cfg.grid_arch}")


def observability_task(cfg, task: dict) -> dict:
    """A model of width task["width"] early-stopped at cfg.obs_target_ce, probed at the
    middle layer: the alignment cos, the z-score and the size-free ratio gamma_S / null."""
    from . import data

    pool = data.pool_for(cfg)
    w, s = task["width"], task["seed"]
    m, h = train_old(pool, n=cfg.n_train, width=w, depth=4, epochs=cfg.obs_max_epochs,
                     seed=s, lr=cfg.lr, wd=cfg.wd, batch_size=cfg.batch,
                     stop_at=cfg.obs_target_ce)
    pr = probe(m, pool, n=cfg.n_train, l=2, seed=s, B=cfg.B)
    return {"epochs": len(h), "train_ce": h[-1], "cos": pr["cos"], "z": pr["z_S"],
            "ratio": pr["ratio_S"], "off_energy": pr["off_energy"],
            "offdiag_null": pr["offdiag_null"]}


def observability(cfg) -> pd.DataFrame:
    tasks = [{"width": w, "seed": s} for w in cfg.obs_widths
             for s in range(cfg.seed, cfg.seed + cfg.obs_seeds)]
    return _sweep(observability_task, tasks, cfg, "observability")


def regression_task(cfg, task: dict) -> dict:
    """Assumption 3 where the activation-gradient covariance can have structure: a post-norm
    MLP of width ``reg_width`` with a ``reg_outputs``-dimensional regression head (squared
    loss) on the MNIST-1D inputs, target ``tanh(A x)`` for a fixed random A (no class
    bottleneck: per-sample g_i = J_top(z_i)^T (f(x_i) - y_i) spans up to reg_outputs >
    reg_width directions). Sigma_g at the middle layer on population half B: its
    off-diagonal energy, the rotation null of its own spectrum, the rank-reg_outputs null."""
    from . import data

    pool = data.pool_for(cfg)
    s = int(task["seed"])
    gen = seeds.torch(s, "regression target")
    Xs, _ = pool.train_subset(cfg.n_train)
    d_in = Xs.shape[1]
    A = torch.randn(cfg.reg_outputs, d_in, generator=gen, dtype=torch.float64) / math.sqrt(d_in)
    A = A.to(device=Xs.device, dtype=Xs.dtype)
    scale = Xs.std()
    Xh = pool.X_pop[len(pool.X_pop) // 2:][:cfg.reg_n_cov]

    def target(X):
        return torch.tanh(X / scale @ A.T)

    model = postnorm_mlp(d_in, cfg.reg_outputs, width=cfg.reg_width, depth=4, seed=s)
    model = model.to(device=Xs.device, dtype=Xs.dtype)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.wd)
    g_ = seeds.torch(s, "batch order")
    Ys = target(Xs)
    for _ in range(cfg.reg_epochs):
        perm = torch.randperm(len(Xs), generator=g_).to(Xs.device)
        for i in range(0, len(Xs), cfg.batch):
            idx = perm[i:i + cfg.batch]
            loss = 0.5 * (model(Xs[idx]) - Ys[idx]).pow(2).sum(1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    model.eval()
    l = model.depth // 2
    with torch.no_grad():
        z = model.bottom(Xh, l)
        base = float(0.5 * (Ys - Ys.mean(0)).pow(2).sum(1).mean())
        fit = float(0.5 * (model(Xh) - target(Xh)).pow(2).sum(1).mean())
    z = z.detach().requires_grad_(True)
    (g,) = torch.autograd.grad(0.5 * (model.top(z, l) - target(Xh)).pow(2).sum(), z)
    sigma = diagnostics.grad_covariance(g)
    cm = diagnostics.cov_metrics(sigma)
    return {"off_energy": cm.off_energy, "rotation_null": diagnostics.rotation_offdiag(sigma),
            "rank_null": diagnostics.lowrank_offdiag(cfg.reg_width, cfg.reg_outputs),
            "participation": float(np.trace(sigma)) ** 2 / float((sigma**2).sum()),
            "r2": 1.0 - fit / base, "sigma": sigma}


def regression(cfg) -> pd.DataFrame:
    tasks = [{"seed": s} for s in range(cfg.seed, cfg.seed + cfg.reg_seeds)]
    return _sweep(regression_task, tasks, cfg, "regression")


def progressive_task(cfg, task: dict) -> list[dict]:
    from . import data

    return progressive_deepening(data.pool_for(cfg), n=cfg.prog_n, width=64, depth0=2,
                                 rounds=cfg.prog_rounds, epochs=cfg.prog_epochs,
                                 seed=task["seed"], lr=cfg.lr, wd=cfg.wd,
                                 batch_size=cfg.batch, B=cfg.B)


def progressive(cfg) -> pd.DataFrame:
    return _sweep(progressive_task, [{"seed": cfg.seed}], cfg, "progressive", rounds=None)


def conv_task(cfg, task: dict) -> dict:
    """A post-norm GroupNorm conv ResNet of task["channels"] channels on the image pool:
    function preservation of a conv block, its signal on train and test with a
    permutation null, the training-set jumpboard's test margin, and the *channel*
    covariance of the activation gradients against its low-rank null."""
    from . import data
    from .models import postnorm_convnet

    imgs = data.images_for(cfg)
    c, s = task["channels"], task["seed"]
    dev, dt = imgs.X_train.device, imgs.X_train.dtype
    net = postnorm_convnet(imgs.X_train.shape[1], imgs.n_classes, channels=c, depth=2,
                           seed=s).to(device=dev, dtype=dt)
    hist = train(net, imgs.X_train, imgs.y_train, epochs=cfg.conv_epochs, lr=cfg.lr,
                 wd=cfg.wd, batch_size=cfg.batch, seed=s)
    blk = ZeroInitBlock(c, kind="conv", seed=s).to(device=dev, dtype=dt)
    k = cfg.conv_n_signal
    Xc, yc, Xt, yt = imgs.X_train[:k], imgs.y_train[:k], imgs.X_test[:k], imgs.y_test[:k]
    with torch.no_grad():
        fp = float((insert_block(net, 1, blk)(Xt[:512]) - net(Xt[:512])).abs().max())
    cs = sg.first_order_signal(net, 1, blk, Xc, yc, cfg.B)
    ct = sg.first_order_signal(net, 1, blk, Xt, yt, cfg.B)
    null = sg.permutation_null(ct, n_perm=cfg.n_perm, seed=s)
    jb = sg.jumpboard(net, 1, blk, Xc, yc, cs.v, cfg.etas, cfg.B)
    jb_net = insert_block(net, 1, jb.block(blk))
    cm = diagnostics.cov_metrics(diagnostics.grad_covariance(ct.g))
    return {"data": imgs.name, "train_ce": hist[-1], "fp": fp, "gamma_S": cs.gamma,
            "gamma_test": ct.gamma, "z": _zscore(ct.gamma, null), "cos": sg.cosine(cs.C, ct.C),
            "eta": jb.eta, "delta_test": sg.risk(net, Xt, yt, cfg.B) - sg.risk(jb_net, Xt, yt,
                                                                                 cfg.B),
            "off_energy": cm.off_energy, "top_ratio": cm.top_ratio,
            "offdiag_null": diagnostics.lowrank_offdiag(c, imgs.n_classes - 1)}


def conv(cfg) -> pd.DataFrame:
    tasks = [{"channels": c, "seed": cfg.seed} for c in cfg.conv_widths]
    df = _sweep(conv_task, tasks, cfg, "conv", rounds=None)
    return df if skipped(df) else _keep_attrs(df, df.set_index("channels"))


def transformer_task(cfg, task: dict) -> dict:
    """The insertion in a small pre-norm Transformer (``transformer``): function
    preservation, the first-order slope (float64 finite difference), Condition 1 held out
    (direction from population half A, t on half B), and the population jumpboard (line
    search on half A, margin on half B with a bootstrap interval)."""
    from . import transformer as tf

    s = task["seed"]
    pool = tf.sequence_pool(cfg.tf_n_train, cfg.tf_n_test, cfg.tf_n_pop, seed=s,
                            length=cfg.tf_len, n_classes=cfg.tf_classes, noise=cfg.tf_noise)
    net = tf.prenorm_transformer(cfg.tf_classes, cfg.tf_len, cfg.tf_classes, d=cfg.tf_d,
                                 depth=cfg.tf_depth, seed=s)
    hist = train(net, pool.X_train, pool.y_train, epochs=cfg.tf_epochs, lr=cfg.lr, wd=cfg.wd,
                 batch_size=cfg.tf_batch, seed=s)
    l, B = cfg.tf_l, cfg.B
    half = len(pool.y_pop) // 2
    XA, yA, XB, yB = pool.X_pop[:half], pool.y_pop[:half], pool.X_pop[half:], pool.y_pop[half:]
    blk = ZeroInitBlock(cfg.tf_d, seed=s)
    with torch.no_grad():
        fp = float((insert_block(net, l, blk)(pool.X_test[:256]) - net(pool.X_test[:256]))
                   .abs().max())
    sA = sg.first_order_signal(net, l, blk, XA, yA, B)
    sB = sg.first_order_signal(net, l, blk, XB, yB, B)
    slope_B, t = sg.directional_t(sB.g, sB.phi, sA.v)
    net64, blk64 = copy.deepcopy(net).double(), copy.deepcopy(blk).double()
    k = min(half, 1000)
    s64 = sg.first_order_signal(net64, l, blk64, XA[:k], yA[:k], B)
    fd = sg.slope_fd(net64, l, blk64, XA[:k], yA[:k], s64.v, cfg.fd_eta, B)
    jb = sg.jumpboard(net, l, blk, XA, yA, sA.v, cfg.etas, B)
    m = insert_block(net, l, jb.block(blk))
    diff = (sg.per_sample_loss(net, XB, yB, B) - sg.per_sample_loss(m, XB, yB, B)).double()
    mean, lo, hi = fitting.bootstrap_mean_ci(diff.numpy(), seed=s, level=cfg.ci_level)
    null = sg.permutation_null(sA, n_perm=cfg.n_perm_eff, seed=s)
    return {"train_ce": hist[-1], "train": sg.risk(net, pool.X_train, pool.y_train, B),
            "test": sg.risk(net, pool.X_test, pool.y_test, B),
            "pop": sg.risk(net, XB, yB, B), "fp": fp, "gamma": sA.gamma, "gamma64": s64.gamma,
            "fd_slope": fd, "heldout_slope": slope_B, "t_cond1": t, "eta": jb.eta,
            "delta_R": mean, "delta_R_lo": lo, "delta_R_hi": hi,
            "z_perm": _zscore(sA.gamma, null)}


def transformer(cfg) -> pd.DataFrame:
    """One row per seed (cfg.tf_seeds seeds from cfg.seed)."""
    tasks = [{"seed": s} for s in range(cfg.seed, cfg.seed + cfg.tf_seeds)]
    df = _sweep(transformer_task, tasks, cfg, "transformer")
    return df if skipped(df) else _keep_attrs(df, df.set_index("seed"))


def _keep_attrs(src: pd.DataFrame, dst: pd.DataFrame) -> pd.DataFrame:
    dst.attrs.update(src.attrs)
    return dst


def theorem_sims(cfg, ex: pd.DataFrame) -> dict:
    """The simulations that make the theorems falsifiable (``transfer``; all in numpy, from
    the expansion table): per old model, coverage and tightness of both routes on its own
    instance and on its worst case (the complementary pair built from f_new's losses on
    half B); the held-out certificate's failure frequency on test sets redrawn from half B
    (``transfer.simulate_certificate``); the Hoeffding transfer on the worst-case +-B test losses at the chapter's K
    (Delta_R = 2 B x / sqrt(K) for x in rules.HOEFF_X) and at the K the bound asks for at the
    chapter's margin; the same transfer event on each instance's own loss differences; and
    the low-rank null against simulated rank-r covariances."""
    from .. import budget
    from . import transfer as tr

    old = ex.xs("old", level="model") if not skipped(ex) else pd.DataFrame()
    rows, t0 = [], time.perf_counter()
    for seed, r in old.iterrows():
        left, per = budget.remaining(), (time.perf_counter() - t0) / max(len(rows), 1)
        if rows and left is not None and left < 2 * per:
            break   # under a budget: the seeds done so far (the note counts them)
        L = np.asarray(r.losses_B, dtype=np.float64)
        L = np.concatenate([L, tr.complementary(np.clip(L[:, 3], 0, cfg.B), cfg.B)], 1)
        sims = tr.simulate_routes(L, n=cfg.n_train, K=cfg.n_test, delta=cfg.route_delta,
                                  draws=rules.ROUTE_DRAWS,
                                  seed=seeds.numpy(int(seed), "route simulation"))
        ev = tr.simulate_transfer_event(L[:, 3] - L[:, 0], cfg.n_test, max(r.delta_R, 0.0),
                                        draws=rules.ROUTE_DRAWS,
                                        seed=seeds.numpy(int(seed), "transfer event"))
        cert = tr.simulate_certificate(np.clip(L[:, 3] - L[:, 0], -cfg.B, cfg.B), cfg.n_test,
                                       cfg.B, cfg.route_delta, draws=rules.ROUTE_DRAWS,
                                       seed=seeds.numpy(int(seed), "held-out certificate"))
        row = {"seed": seed, "event_fail": ev, "cert_fail": cert,
               "event_bound": bounds.hoeffding_failure(cfg.n_test, min(max(r.delta_R, 0.0),
                                                                        cfg.B), cfg.B)}
        for k, v in sims.items():
            row.update({f"{k}_{f}": getattr(v, f) for f in ("coverage_fail", "allowed",
                                                           "tightness", "predicted", "eps_M",
                                                           "eps_K")})
        rows.append(row)
    routes = pd.DataFrame(rows).set_index("seed") if rows else pd.DataFrame()
    if skipped(ex):
        routes.attrs["skipped"] = skipped(ex)
    K, B = cfg.n_test, cfg.B
    deltas = [2 * B * x / math.sqrt(K) for x in rules.HOEFF_X]
    freq = tr.simulate_hoeffding(K, deltas, B, draws=rules.HOEFF_DRAWS,
                                seed=seeds.numpy(cfg.seed, "hoeffding", "grid"))
    hoeff = pd.DataFrame({"x": rules.HOEFF_X, "K": K, "delta_R": deltas, "freq": freq,
                          "bound": [bounds.hoeffding_failure(K, d, B) for d in deltas],
                          "exact": [tr.rademacher_tail(K, d / 2, B) for d in deltas]})
    dR = (float(old.delta_R.median()) if len(old) and (old.delta_R > 0).all()
          else rules.HOEFF_MARGIN)
    Kstar = int(math.ceil(bounds.hoeffding_K(dR, B, cfg.route_delta)))
    fK = float(tr.simulate_hoeffding(Kstar, [dR], B, draws=rules.HOEFF_DRAWS,
                                     seed=seeds.numpy(cfg.seed, "hoeffding", "K*"))[0])
    hoeff_K = {"delta_R": dR, "K": Kstar, "freq": fK,
               "bound": bounds.hoeffding_failure(Kstar, dR, B)}
    rng = seeds.numpy(cfg.seed, "low-rank null")
    lr_rows = []
    for d in sorted({8, 16, cfg.width}):
        for rk in rules.LOWRANK_RANKS:
            m, se = diagnostics.simulate_offdiag(d, rk, draws=rules.LOWRANK_DRAWS, seed=rng)
            lr_rows.append({"d": d, "r": rk, "simulated": m, "se": se,
                            "closed_form": diagnostics.lowrank_offdiag(d, rk)})
    return {"routes": routes, "hoeffding": hoeff, "hoeffding_K": hoeff_K,
            "lowrank": pd.DataFrame(lr_rows)}
