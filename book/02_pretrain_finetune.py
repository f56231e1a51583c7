# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # How pretraining shapes the inductive bias of fine-tuning
#
# A network is pretrained (PT) on one task and fine-tuned (FT) on another. Which solution
# does fine-tuning find? For diagonal linear networks the answer is exact: gradient flow
# minimises a separable potential whose per-coordinate scale depends on the *pretrained*
# weights and on three initialisation knobs: the absolute PT scale $c_{PT}$, the relative
# scale of the two layers $\lambda_{PT}$, and the readout re-initialisation $\gamma_{FT}$.
# A replica calculation then turns that potential into a generalisation error. This chapter
# rebuilds both steps of Anguita, Locatello, Saxe, Mondelli, Mancini, Lippl & Dominé,
# *A Theory of How Pretraining Shapes Inductive Bias in Fine-Tuning* (arXiv:2602.20062,
# ICML 2026), and checks every formula against trained networks.
#
# ```{admonition} Takeaway
# Fine-tuning a diagonal network from pretrained weights minimises
# $\sum_d c_d\,\psi(\beta_d/c_d)$ with $c_d = (1+\lambda_{PT})(c_{PT}+\sqrt{c_{PT}^2+\beta_{PT,d}^2})+\gamma_{FT}^2$.
# Its sparsity ($\ell$-order) and its reliance on pretrained features (PD) trade off:
# $1 \le \ell + \mathrm{PD} \le 2$. Which corner generalises best depends on the task:
# full overlap wants lazy reuse ($\lambda_{PT}=+1$); a sparse subset of the PT features
# wants the rich, PT-dependent regime ($\lambda_{PT}$ just above $-1$); new features want
# learning from scratch ($\lambda_{PT}=-1$). A smaller first layer (negative $\lambda_{PT}$)
# is the lever.
# ```
#
# ```{note}
# **What is a reconstruction.** Only the paper's abstract, introduction, a summary and the
# first author's public code repositories were available. The potentials, the replica equations and the data model below were re-derived
# from scratch and are checked numerically here; they match the summary's Theorem 4.1 up to
# constant factors (see *Conventions*). The definitions of $\ell$-order, PD and the four
# regimes follow the summary; the exact figure sizes of the paper are unknown. The
# nonlinear experiments (ResNet-18 on CIFAR-100, transformers on modular addition) are
# replaced by small CPU stand-ins of this book's own design (a ReLU net on digits, a tiny
# transformer on $\mathbb Z_{30}$); their verdicts are soft.
# ```

# %% tags=["remove-cell"]
# Colab bootstrap: install dltheory only when it is not importable (plain Python, no magics).
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("dltheory") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "git+https://github.com/dltheory/dltheory@main"], check=True)

# %% tags=["parameters"]
from dltheory import runtime

SCALE = runtime.scale()
SEED = 0
# §1-2: a small PT/FT instance trained by GD (the closed form needs no large sizes)
D_SMALL, N_PT_SMALL, N_FT_SMALL = 40, 25, 12
TAUS = runtime.by_scale(SCALE, [0.02, 0.01], [0.04, 0.02, 0.01, 0.005], [0.04, 0.02, 0.01, 0.005])
C_PT_SMALL = (0.05, 0.5)  # PT scales for the implicit-bias checks
LAM_PT_SMALL = (-0.8, 0.0, 0.8)
GAMMA_SMALL = 0.3  # readout re-init for the small FT checks
# §3: (ℓ, PD) grids
GRID = runtime.by_scale(SCALE, 60, 200, 200)
# §4-8: the teacher-student sweeps (ρ_PT = 0.2 everywhere). The exact minimisers run in
# NumPy on the CPU at every scale; `paper` is untested here (estimated 30-60 min)
C_PT, GAMMA = 1e-3, 1e-3  # "small" PT scale and readout re-init of the regime settings
D_SIM = runtime.by_scale(SCALE, 400, 1000, 2000)
SEEDS_SIM = runtime.by_scale(SCALE, 8, 3, 10)
ALPHAS_SIM = runtime.by_scale(SCALE, [0.15, 0.3], [0.15, 0.3, 0.5], [0.1, 0.2, 0.3, 0.5])
ALPHAS_THEORY = runtime.by_scale(SCALE, 10, 30, 60)  # points on each replica curve
D_GD, ALPHA_GD = runtime.by_scale(SCALE, 200, 300, 1000), 0.3  # networks trained by GD
LAMS = [-1.0, -0.999, -0.99, -0.9, -0.5, 0.0, 0.5, 1.0]
ALPHAS_PT_IMPERFECT = runtime.by_scale(SCALE, [0.45], [0.45, 0.55], [0.4, 0.45, 0.5, 0.55, 0.6])
ALPHAS_FT_IMPERFECT = runtime.by_scale(SCALE, [0.2, 0.35, 0.5], [0.2, 0.35, 0.5], [0.2, 0.35, 0.5])
N_NODES = runtime.by_scale(SCALE, 81, 121, 161)  # Gauss-Hermite nodes of the replica solver
# §8: the nonlinear stand-in (two-layer ReLU net on digits; ResNet/CIFAR is not run here)
VISION_PT_STEPS = runtime.by_scale(SCALE, 200, 300, 1000)
VISION_SEEDS = runtime.by_scale(SCALE, 3, 5, 10)
VISION_N = runtime.by_scale(SCALE, [10, 30], [10, 30, 100], [10, 20, 50, 100, 200])
# §8: one-layer transformer on modular addition (p = 30); not run at smoke (CPU budget)
MODADD_SEEDS = runtime.by_scale(SCALE, 0, 3, 5)
MODADD_STEPS = runtime.by_scale(SCALE, (600, 150), (600, 150), (2000, 500))  # (PT, FT) AdamW steps

# %%
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from scipy.stats import spearmanr

from dltheory import claims, datasets, plotting
from dltheory.pretrain_finetune import (
    CORNERS,
    FULL_OVERLAP,
    NEW_FEATURES,
    REGIMES,
    SUBSET,
    DiagWeights,
    Task,
    binary_task,
    finetune_mlp,
    flow_weights_from_beta,
    ft_scales,
    invariants,
    l_order_pd,
    learned_l_pd,
    mean_ci,
    min_l1,
    min_l2,
    pretrain_mlp,
    pt_then_ft,
    readout_reinit,
    rebalance,
    replica_error,
    run_exact,
    run_gd_ft,
    solve_bias,
    solve_bias_slsqp,
    tilted_params,
    train_gd,
    uniform_init,
)

rt = runtime.setup(SCALE)
plotting.use_style()
ledger = claims.Ledger("pretrain_finetune", scale=SCALE, device=rt.device)
T_START = time.process_time()

# %% [markdown]
# ## Conventions
#
# | symbol | meaning |
# |---|---|
# | $\beta = w_+\odot v_+ - w_-\odot v_-$ | the diagonal network's linear predictor, $f(x)=\beta^\top x$ |
# | $L = \lVert X\beta - y\rVert^2/2N$ | squared loss, full batch |
# | $\tau$, $k$, $t=\tau k$ | GD step size, step, time (the prologue's notation; the "lr") |
# | $c=w_0^2+v_0^2$, $\lambda=(w_0^2-v_0^2)/c$ | absolute and relative PT scale ($w$ = first layer) |
# | $\gamma$ (= $\gamma_{FT}$) | readout re-initialisation before FT: $v_\pm(0)=\gamma$ |
# | $\psi(x) = x\,\mathrm{asinh}\,x - \sqrt{1+x^2} + 1$ | hyperbolic entropy ($h$ stays the prologue's conservation law) |
#
# **Mapping to the paper.** The paper (per the summary) writes the FT potential as Azulay et
# al.'s $q_k$ with $\sqrt{k_d} = 2c_{PT}(1+\lambda_{PT})(1+\sqrt{1+\beta_{PT,d}^2/c_{PT}^2}) + \gamma^2$.
# Since $q_k(z) = \tfrac12 c_d\,\psi(z/c_d)$ when $\sqrt k = 2c_d$, this is our potential with
# $c_d = \sqrt{k_d}/2$ and $\gamma_{\text{here}}^2 = \gamma_{\text{paper}}^2/2$. The first
# author's code uses an absolute $\lambda_{\text{code}} = c\,\lambda$. Constant rescalings
# move transitions along the $c$ and $\gamma$ axes by $O(1)$ factors; they change no
# qualitative conclusion.
#
# ## 1. The model and its conservation laws
#
# Each coordinate has two pathways; per coordinate and with $g = \nabla_\beta L$, gradient
# flow reads $\dot w_\pm = \mp g v_\pm$, $\dot v_\pm = \mp g w_\pm$. With the *dual time*
# $s(t) = -\int_0^t g$ (which stays in the row space of $X$) it integrates in closed form:
#
# $$
# w_\pm = w_0\cosh s \pm v_0 \sinh s,\qquad v_\pm = v_0\cosh s \pm w_0\sinh s,\qquad
# \beta = c\,\sinh(2s).
# $$
#
# Only $c$ enters $\beta$; $\lambda$ only decides how the change is split between the layers.
# Two quantities are conserved: $w_\pm^2 - v_\pm^2 = c\lambda$ (the prologue's
# $u^2 - v^2$ law, one per pathway) and $w_+w_- + v_+v_- = c$. At the end of PT,
# $s_d = \tfrac12\mathrm{asinh}(\beta_{PT,d}/c)$, so the pretrained weights are explicit
# functions of the pretrained $\beta$. We train the network by GD on a small problem for
# several step sizes and compare.

# %%
rng = np.random.default_rng(SEED)
beta_star_small = np.zeros(D_SMALL)
beta_star_small[:5] = 1.5 * rng.choice([-1.0, 1.0], 5)  # 5 active coordinates of size 1.5
X_pt_small = rng.standard_normal((N_PT_SMALL, D_SMALL))
y_pt_small = X_pt_small @ beta_star_small
configs = [(c, lam) for c in C_PT_SMALL for lam in LAM_PT_SMALL]
cs, lams_cfg = np.array([c for c, _ in configs]), np.array([lam for _, lam in configs])
B = len(configs)
Xb = torch.as_tensor(np.broadcast_to(X_pt_small, (B, N_PT_SMALL, D_SMALL)).copy())
yb = torch.as_tensor(np.broadcast_to(y_pt_small, (B, N_PT_SMALL)).copy())

pt_runs = {}
rows = []
for tau in TAUS:
    res = train_gd(Xb, yb, uniform_init(cs, lams_cfg, (B, D_SMALL)), tau, max_steps=400_000)
    W = res.weights.numpy()
    pt_runs[tau] = W
    w_err = inv_err = 0.0
    for i, (c, lam) in enumerate(configs):
        Wi = DiagWeights(W.wp[i], W.wm[i], W.vp[i], W.vm[i])
        Wc = flow_weights_from_beta(Wi.beta, c, lam)
        w_err = max(w_err, *(np.abs(getattr(Wi, k) - getattr(Wc, k)).max() for k in ("wp", "wm", "vp", "vm")))
        Ip, Im, Ic = invariants(Wi)
        inv_err = max(inv_err, np.abs(Ip - c * lam).max(), np.abs(Im - c * lam).max(), np.abs(Ic - c).max())
    rows.append({"tau": tau, "steps": res.steps, "max loss": float(res.loss.max()),
                 "max |W_GD - W_closed|": w_err, "max invariant drift": inv_err})
flow_df = pd.DataFrame(rows)
runtime.display(flow_df)

# %%
fig, ax = plt.subplots()
plotting.sim(ax, flow_df["tau"], flow_df["max |W_GD - W_closed|"], label="weights vs closed form",
             color=plotting.color(0))
plotting.sim(ax, flow_df["tau"], flow_df["max invariant drift"], label="invariant drift",
             color=plotting.color(1), marker="s")
plotting.loglog(ax, xlabel=r"step size $\tau$", ylabel="max abs error",
                title=f"GD vs gradient flow ({plotting.scale_tag(SCALE, 'D=40, N=25')})")
plotting.slope_line(ax, 1.0, anchor=(flow_df["tau"].iloc[-1], flow_df["max |W_GD - W_closed|"].iloc[-1]),
                    offset=0.6, label="slope 1 (O(τ))")
ax.xaxis.set_minor_formatter(plt.NullFormatter())
ax.set_xticks(list(TAUS), [f"{t:g}" for t in TAUS])
ax.legend()
runtime.show(fig, "pf_flow_vs_gd")

# %% [markdown]
# Both errors run parallel to the dotted slope-1 line: GD differs from gradient flow by $O(\tau)$,
# so halving the step halves the error, and the closed form *is* the $\tau \to 0$ limit.
# For the conservation laws this is the prologue's drift bound $C\tau^2 k$ read at the end of
# training: reaching a fixed time $t$ takes $k = t/\tau$ steps, so the drift is $O(\tau)$.

# %%
err = flow_df["max |W_GD - W_closed|"].to_numpy()
drift = flow_df["max invariant drift"].to_numpy()
ratios = err[:-1] / err[1:]
dratios = drift[:-1] / drift[1:]
worst = lambda r: r[np.argmax(np.abs(r - 2))]
ledger.check("PF.flow.closed_form", "GD weights -> closed form: error halves with the step (worst ratio)",
             worst(ratios), lo=1.7, hi=2.3, note=f"ratios {np.round(ratios, 3).tolist()}")
ledger.check("PF.flow.closed_form_abs", "closed-form weight error at tau = 0.01",
             err[list(TAUS).index(0.01)], hi=5e-3)
ledger.check("PF.flow.invariants", "w^2 - v^2 = c*lam and w+w- + v+v- = c drift O(tau) (worst ratio)",
             worst(dratios), lo=1.7, hi=2.3,
             note=f"drift at tau=0.01: {drift[list(TAUS).index(0.01)]:.2e}")

# %% [markdown]
# ## 2. The implicit bias of PT and of FT
#
# Because $\beta = c\sinh(2s)$ with $s \in \mathrm{row}(X)$, the GD solution satisfies the
# optimality conditions of a convex problem. With $\psi'(x) = \mathrm{asinh}\,x$:
#
# $$
# \hat\beta_{PT} = \arg\min_{X_{PT}\beta = y_{PT}} \sum_d c\,\psi(\beta_d/c).
# $$
#
# $\psi$ behaves like $x^2/2$ near 0 and like $|x|\log|x|$ far out: large $c$ gives the
# minimum-$\ell_2$ interpolant (lazy), small $c$ approaches minimum $\ell_1$ (rich).
#
# **FT with rebalanced pathways.** Before FT we set both first layers to
# $a_d = w_{+,d} + w_{-,d}$ and the readouts to $\gamma$, so $\beta_{FT}(0) = 0$. The same
# argument gives the FT potential $\sum_d c_d\,\psi(\beta_d/c_d)$ with $c_d = a_d^2 + \gamma^2$.
# The closed form of §1 gives $a_d^2 = (1+\lambda)(c + \sqrt{c^2+\beta_{PT,d}^2})$:
#
# $$
# \hat\beta_{FT} = \arg\min_{X_{FT}\beta = y_{FT}} \sum_d c_d\,\psi\!\left(\frac{\beta_d}{c_d}\right),
# \qquad c_d = (1+\lambda_{PT})\Big(c_{PT} + \sqrt{c_{PT}^2 + \beta_{PT,d}^2}\Big) + \gamma^2 .
# $$
#
# Pretrained coordinates (large $|\beta_{PT,d}|$) get a large scale, hence a cheap,
# $\ell_2$-like cost; untouched ones keep $c_d \approx 2c(1+\lambda)+\gamma^2$.
#
# We solve these problems exactly through the smooth dual
# $\min_\nu \sum_d c_d\cosh((X^\top\nu)_d) - \nu^\top y$ by Newton's method with
# continuation in the scale of $c$ (`solve_bias`), then compare with GD.

# %%
tau_ref = 0.01
W_pt = pt_runs[tau_ref]
rows, pt_gap, pt_sep = [], 0.0, np.inf
b_l1, b_l2 = min_l1(X_pt_small, y_pt_small), min_l2(X_pt_small, y_pt_small)
for i, (c, lam) in enumerate(configs):
    bq = solve_bias(X_pt_small, y_pt_small, c).beta
    gap = np.abs(W_pt.beta[i] - bq).max()
    d1, d2 = np.linalg.norm(bq - b_l1), np.linalg.norm(bq - b_l2)
    pt_gap, pt_sep = max(pt_gap, gap), min(pt_sep, d1, d2)
    rows.append({"c": c, "lambda": lam, "max|b_GD - b_Q|": gap, "||b_Q - b_l1||": d1, "||b_Q - b_l2||": d2})
runtime.display(pd.DataFrame(rows))
ledger.check("PF.bias.pt", "GD-pretrained beta = argmin sum c psi(beta/c) (max |diff|, tau=0.01)", pt_gap, hi=5e-3)
ledger.check("PF.bias.pt_not_l1_l2", "the PT minimiser differs from min-l1 and min-l2 (min Euclidean distance)",
             pt_sep, lo=0.25)

# %% [markdown]
# The minimiser does not depend on $\lambda$ (rows with the same $c$ agree), and it is
# neither the $\ell_1$ nor the $\ell_2$ interpolant. Now fine-tune from these GD-pretrained
# weights, once with rebalanced pathways and once the way earlier work did it (keep
# $w_\pm$, set $v_\pm=\gamma$). The latter starts from $\beta_{FT}(0) = \gamma(w_+ - w_-)\neq 0$
# and its potential is *tilted*:
# $Q_d(\beta) = r_d\,\psi(\beta/r_d) - \varphi_d\beta$, with $\bar c_d = (w_+^2+w_-^2)/2+\gamma^2$,
# $\beta_{0,d} = \gamma(w_+-w_-)$, $r_d = \sqrt{\bar c_d^2-\beta_{0,d}^2}$ and
# $\varphi_d = \mathrm{asinh}(\beta_{0,d}/r_d)$. The tilt makes the FT bias depend on the
# *sign* of the pretrained coefficients; rebalancing removes it and leaves an even potential.

# %%
beta_ft_small = np.zeros(D_SMALL)
beta_ft_small[[0, 1, 2, 7]] = rng.choice([-1.0, 1.0], 4)  # 3 shared PT features + 1 new one
X_ft_small = rng.standard_normal((N_FT_SMALL, D_SMALL))
y_ft_small = X_ft_small @ beta_ft_small
Xf = torch.as_tensor(np.broadcast_to(X_ft_small, (B, N_FT_SMALL, D_SMALL)).copy())
yf = torch.as_tensor(np.broadcast_to(y_ft_small, (B, N_FT_SMALL)).copy())
Wt = DiagWeights(*(torch.as_tensor(getattr(W_pt, k)) for k in ("wp", "wm", "vp", "vm")))
ft_reb = train_gd(Xf, yf, rebalance(Wt, GAMMA_SMALL), tau_ref, max_steps=400_000).weights.numpy().beta
ft_til = train_gd(Xf, yf, readout_reinit(Wt, GAMMA_SMALL), tau_ref, max_steps=400_000).weights.numpy().beta
rows, gap_reb, gap_til, til_vs_reb = [], 0.0, 0.0, 0.0
for i, (c, lam) in enumerate(configs):
    cd = ft_scales(W_pt.beta[i], c, lam, GAMMA_SMALL)
    b_reb = solve_bias(X_ft_small, y_ft_small, cd).beta
    r, phi, _ = tilted_params(W_pt.wp[i], W_pt.wm[i], GAMMA_SMALL)
    b_til = solve_bias(X_ft_small, y_ft_small, r, phi).beta
    g1, g2 = np.abs(ft_reb[i] - b_reb).max(), np.abs(ft_til[i] - b_til).max()
    gap_reb, gap_til = max(gap_reb, g1), max(gap_til, g2)
    til_vs_reb = max(til_vs_reb, np.abs(b_til - b_reb).max())
    rows.append({"c": c, "lambda": lam, "rebalanced: max|GD - Q|": g1,
                 "not rebalanced: max|GD - tilted Q|": g2, "max|tilted - rebalanced|": np.abs(b_til - b_reb).max()})
runtime.display(pd.DataFrame(rows))
ledger.check("PF.bias.ft", "rebalanced FT: GD = argmin sum c_d psi(beta/c_d) (max |diff|, tau=0.01)", gap_reb, hi=5e-3)
ledger.check("PF.bias.ft_tilted", "non-rebalanced FT: GD = argmin of the tilted potential (max |diff|)",
             gap_til, hi=5e-3, note=f"tilted vs rebalanced minimisers differ by up to {til_vs_reb:.2f}")

# %% [markdown]
# GD lands on the predicted minimiser in both protocols, and the two protocols land on
# different solutions. The rest of the chapter uses the rebalanced protocol, whose bias
# depends on $|\beta_{PT}|$ only.
#
# **Is the solver right?** On tiny problems the dual-Newton minimiser agrees with three
# independent references: linear programming in the $\ell_1$ limit ($c \to 0$), least
# squares in the $\ell_2$ limit ($c\to\infty$), and SLSQP on the primal at an intermediate
# $c$. (Small $c$ is only *logarithmically* close to $\ell_1$: the correction decays like
# $1/\log(1/c)$.)

# %%
beta_cmp = {"c=1e-12 vs linprog (l1)": (solve_bias(X_pt_small, y_pt_small, 1e-12).beta, b_l1),
            "c=1e4 vs lstsq (l2)": (solve_bias(X_pt_small, y_pt_small, 1e4).beta, b_l2),
            "c=0.5 vs SLSQP": (solve_bias(X_pt_small, y_pt_small, 0.5).beta,
                               solve_bias_slsqp(X_pt_small, y_pt_small, 0.5))}
runtime.display(pd.DataFrame([{"check": k, "max |diff|": np.abs(a - b).max()} for k, (a, b) in beta_cmp.items()]))

# %% [markdown]
# ## 3. The shape of the FT potential: four regimes and a trade-off
#
# Two numbers summarise the per-coordinate cost $Q_d = c_d \psi(|\beta_{FT,d}|/c_d)$:
#
# * the **$\ell$-order** $\ell = \partial\log Q_d/\partial\log|\beta_{FT,d}| = x\,\mathrm{asinh}(x)/\psi(x)$,
#   $x = |\beta_{FT,d}|/c_d$: 1 is $\ell_1$-like (sparse), 2 is $\ell_2$-like;
# * the **pretraining dependence** $\mathrm{PD} = \partial\log Q_d/\partial\log|\beta_{PT,d}|$:
#   0 means the cost ignores pretraining, $-1$ means it is inversely proportional to the
#   pretrained coefficient. By the chain rule $\mathrm{PD} = (1-\ell)\,\varepsilon$ with
#   $\varepsilon = \partial\log c_d/\partial\log|\beta_{PT,d}| \in [0,1)$.
#
# Hence $\ell + \mathrm{PD} = 1 + (\ell-1)(1-\varepsilon) \in [1, 2]$: a cost cannot be both
# fully sparse ($\ell=1$) and fully PT-dependent ($\mathrm{PD}=-1$). The four corners:
#
# | regime | init | $c_d$ | potential | $(\ell,\mathrm{PD})$ |
# |---|---|---|---|---|
# | I rich, PT-independent | $\lambda_{PT}\to-1$, $\gamma\to0$ | $\approx\gamma^2$ | $\ell_1$ (from scratch) | (1, 0) |
# | II lazy, PT-dependent | $c_{PT}\to0$, $\lambda_{PT}=+1$ | $\approx 2\lvert\beta_{PT,d}\rvert$ | $\sum\beta_d^2/\lvert\beta_{PT,d}\rvert$ | (2, −1) |
# | III lazy, PT-independent | $c_{PT}\to\infty$ or $\gamma\to\infty$ | const | $\ell_2$ (kernel) | (2, 0) |
# | IV rich, PT-dependent | $c_{PT}$ small, $\lambda_{PT}$ near $-1$ | $\approx(1+\lambda)\lvert\beta_{PT,d}\rvert$ | weighted $\ell_1$ on PT features | on the edge $\ell+\mathrm{PD}=1$, between I and II |

# %%
lam_grid = np.linspace(-1, 1, GRID)
logc_grid = np.linspace(-5, 2, GRID)
LL, LC = np.meshgrid(lam_grid, logc_grid)
ell_map = np.empty_like(LL)
pd_map = np.empty_like(LL)
for j, lam in enumerate(lam_grid):
    ell_map[:, j], pd_map[:, j] = l_order_pd(1.0, 1.0, 10.0**logc_grid, lam, GAMMA)
# the trade-off on a larger grid: all (|beta_FT|, |beta_PT|, c, lambda, gamma) combinations
bf, bp, lc, lg = np.meshgrid(np.logspace(-3, 2, 25), np.logspace(-3, 2, 25), np.linspace(-5, 2, 15),
                             np.linspace(-4, 1, 8), indexing="ij")
sums = []
for lam in np.linspace(-1, 1, 21):
    e_, p_ = l_order_pd(bf, bp, 10.0**lc, lam, 10.0**lg)
    sums.append(e_ + p_)
sums = np.concatenate([s.ravel() for s in sums])

fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
ext = (-1, 1, logc_grid[0], logc_grid[-1])
for ax, m, name, cmap in ((axes[0], ell_map, r"$\ell$-order", "viridis"), (axes[1], pd_map, "PD", "magma")):
    im = ax.imshow(m, origin="lower", extent=ext, aspect="auto", cmap=cmap)
    fig.colorbar(im, ax=ax)
    ax.set_xlabel(r"$\lambda_{PT}$")
    ax.set_ylabel(r"$\log_{10} c_{PT}$")
    ax.set_title(f"{name} at $|\\beta_{{FT}}|=|\\beta_{{PT}}|=1$, $\\gamma=10^{{-3}}$", fontsize=9)
    ax.grid(False)
tri = np.array([[1, 0], [2, 0], [2, -1], [1, 0]])
axes[2].plot(tri[:, 0], tri[:, 1], color="0.3", lw=1)
axes[2].scatter(ell_map.ravel()[::7], pd_map.ravel()[::7], s=3, c=LL.ravel()[::7], cmap="coolwarm", alpha=0.6)
for name, k in CORNERS.items():
    e_, p_ = l_order_pd(k["beta_ft"], k["beta_pt"], k["c_pt"], k["lam_pt"], k["gamma"])
    axes[2].annotate(name, (float(e_), float(p_)), fontsize=10, weight="bold")
axes[2].set_xlabel(r"$\ell$-order")
axes[2].set_ylabel("PD")
axes[2].set_title(r"all points lie in $1 \leq \ell+\mathrm{PD} \leq 2$", fontsize=9)
fig.suptitle(f"Regimes of the FT potential ({plotting.scale_tag(SCALE, 'closed form')})", fontsize=10)
runtime.show(fig, "pf_regimes")

# %% [markdown]
# Left and middle: small $c_{PT}$ and $\lambda_{PT}$ away from $-1$ is lazy *and*
# PT-dependent (regime II, bottom right); large $c_{PT}$ is the kernel regime III (top);
# the column $\lambda_{PT}=-1$ is regime I; the band just right of it is regime IV.
# Right: every grid point (coloured by $\lambda_{PT}$) falls in the triangle between the
# corners; none crosses the diagonal $\ell + \mathrm{PD} = 1$. Since the bound is an identity
# of the closed form, the ledger entry `PF.tradeoff` below is a consistency check of the
# implementation (over a much larger grid), not an independent test.

# %%
corner_rows, corner_err = [], 0.0
for name, k in CORNERS.items():
    e_, p_ = l_order_pd(k["beta_ft"], k["beta_pt"], k["c_pt"], k["lam_pt"], k["gamma"])
    corner_err = max(corner_err, abs(float(e_) - k["expect"][0]), abs(float(p_) - k["expect"][1]))
    corner_rows.append({"regime": name, "c_PT": k["c_pt"], "lambda_PT": k["lam_pt"], "|b_FT|": k["beta_ft"],
                        "l": float(e_), "PD": float(p_), "brief (l, PD)": k["expect"]})
runtime.display(pd.DataFrame(corner_rows))
ledger.check("PF.regimes.corners", "(l, PD) at the four regime corners vs the brief's table (max abs diff)",
             corner_err, hi=0.02)
ledger.check("PF.tradeoff", "consistency check of the closed form: 1 <= l + PD <= 2 on the whole grid "
             "(max violation)",
             max(0.0, 1 - sums.min(), sums.max() - 2), hi=1e-9,
             note=f"{sums.size} points; min {sums.min():.6f}, max {sums.max():.6f}")

# %% [markdown]
# ## 4. Replica theory of the fine-tuning error
#
# **Data.** Teacher–student with $x\sim\mathcal N(0, I_D)$ and noiseless labels. A fraction
# $\rho_{PT}$ of coordinates is active in PT; an FT coordinate is active with probability
# $\rho_{sh}$ if it was active in PT and $\rho_{new}$ otherwise, so the FT density is
# $\rho_{FT} = \rho_{PT}\rho_{sh} + (1-\rho_{PT})\rho_{new}$. Active entries are
# $\pm 1/\sqrt{\rho_{PT}}$ in the PT teacher and $\pm 1/\sqrt{\rho_{FT}}$ in the FT teacher
# (random signs), so $\mathbb E\beta^{*2}=1$. $N = \alpha D$, and the error is
# $e = \lVert\hat\beta - \beta^*\rVert^2/D$. We use three tasks with $\rho_{PT}=0.2$:
# *full overlap* $(\rho_{sh},\rho_{new})=(1,0)$, *subset* $(0.5, 0)$ and *new features* $(0, 0.05)$.
#
# **Replica equations** (a reconstruction: the replica-symmetric MAP decoupling of Rangan,
# Fletcher & Goyal, arXiv:0906.3234, in its noiseless interpolation limit, which coincides
# with AMP state evolution). Each coordinate behaves like a scalar denoising problem
# $u = B + \sigma Z$ solved with the potential's proximal map:
#
# $$
# \eta(u) = \arg\min_b \tfrac12 (b-u)^2 + \theta\, C\,\psi(b/C)
# \;\Leftrightarrow\; b + \theta\,\mathrm{asinh}(b/C) = u,
# \qquad \eta'(u) = \frac{1}{1 + \theta/\sqrt{C^2+\eta^2}},
# $$
#
# $$
# \alpha\,\sigma^2 = \mathbb E\big[(\eta(B+\sigma Z) - B)^2\big],\qquad
# \alpha = \mathbb E\big[\eta'(B+\sigma Z)\big],\qquad e = \alpha\sigma^2,
# $$
#
# where $(B, C)$ is distributed like $(|\beta^*_{FT,d}|, c_d)$: the effective noise is
# $\sigma^2$ and the effective regularisation $\theta$ (the code calls $\sigma$ `tau`; in
# this chapter $\tau$ is the GD step). Expectations use Gauss–Hermite quadrature; the prox
# is a safeguarded Newton solve. In the $\ell_2$ limit ($c\to\infty$) the equations give
# $e = (1-\alpha)\,\mathbb E B^2$ exactly.
#
# **Finite-$D$ normalisation.** The replica error is normalised by $\mathbb E\beta^{*2}=1$.
# A finite teacher has its own energy $\lVert\beta^*\rVert^2/D$, which fluctuates with its
# number of active coordinates: only $\rho_{FT}D$ of them, 4% of $D$ on new features. In the
# $\ell_2$ limit the expected error is exactly proportional to that energy. We therefore
# divide each simulated error by its teacher's energy, i.e. report
# $\lVert\hat\beta-\beta^*\rVert^2/\lVert\beta^*\rVert^2$, which has the same replica
# limit; the table also lists the raw error and the mean teacher energy.
#
# The four regime settings below use $c_{PT}=\gamma=10^{-3}$ and I: $\lambda_{PT}=-1$,
# II: $\lambda_{PT}=+1$, III: $c_{PT}=10$ ($\lambda_{PT}=0$), IV: $\lambda_{PT}=-0.9$.

# %%
l2_dev = max(abs(replica_error(FULL_OVERLAP, a, 1e3, 0.0, GAMMA, n_nodes=N_NODES).error - (1 - a))
             for a in (0.15, 0.3, 0.5))
ledger.check("PF.replica.l2_limit", "replica e = (1 - alpha) E B^2 at c = 1e3 (max abs diff, alpha in .15/.3/.5)",
             l2_dev, hi=0.01)

TASKS = {"full overlap": FULL_OVERLAP, "subset rho_sh=0.5": SUBSET, "new features": NEW_FEATURES}
alpha_curve = np.linspace(0.05, 0.6, ALPHAS_THEORY)
theory = {(t, r): np.array([replica_error(task, a, *REGIMES[r], GAMMA, n_nodes=N_NODES).error for a in alpha_curve])
          for t, task in TASKS.items() for r in REGIMES}
sim_rows = []
for t, task in TASKS.items():
    for r, (c, lam) in REGIMES.items():
        for a in ALPHAS_SIM:
            runs = [run_exact(task, D_SIM, a, c, lam, GAMMA, seed=1000 * SEED + s) for s in range(SEEDS_SIM)]
            errs = [run.rel_error for run in runs]  # ||b - b*||^2 / ||b*||^2
            sim_rows.append({"task": t, "regime": r, "alpha_FT": a,
                             "replica": replica_error(task, a, c, lam, GAMMA, n_nodes=N_NODES).error,
                             "sim": np.mean(errs), "sem": np.std(errs) / np.sqrt(len(errs)),
                             "sim (raw, /D)": np.mean([run.error for run in runs]),
                             "teacher energy": np.mean([run.teacher_energy for run in runs])})
            energies = [run.teacher_energy for run in runs]  # same teachers for every (regime, alpha)
    print(f"{t}: teacher energy ||b*||^2/D over the {SEEDS_SIM} seeds in "
          f"[{min(energies):.2f}, {max(energies):.2f}]")
sim_df = pd.DataFrame(sim_rows)
runtime.display(sim_df.round(4))

# %%
fig, axes = plt.subplots(1, 3, figsize=(11, 3.3), sharey=True)
for ax, t in zip(axes, TASKS, strict=True):
    for i, r in enumerate(REGIMES):
        col = plotting.color(i)
        plotting.theory(ax, alpha_curve, theory[(t, r)], color=col, label=None)
        sub = sim_df[(sim_df.task == t) & (sim_df.regime == r)]
        plotting.sim(ax, sub["alpha_FT"], sub["sim"], yerr=sub["sem"], color=col, label=f"regime {r}")
    ax.set_title(t)
    ax.set_xlabel(r"$\alpha_{FT} = N_{FT}/D$")
axes[0].set_ylabel(r"FT error $\|\hat\beta-\beta^*\|^2/\|\beta^*\|^2$")
axes[0].legend()
fig.suptitle(f"Replica (dashed) vs exact minimisers (markers, D={D_SIM}, {SEEDS_SIM} seeds; "
             f"{plotting.scale_tag(SCALE, 'teacher-student')})", fontsize=10)
runtime.show(fig, "pf_replica_vs_sim")

# %% [markdown]
# Dashed lines are the replica predictions, markers the exact finite-$D$ minimisers (mean ±
# s.e. over seeds, each error divided by its teacher's energy). On full overlap the lazy,
# PT-dependent regime II is best, with IV catching up only once it too recovers the teacher;
# on new features II is by far the worst until $\alpha_{FT}$ is large (its cost on new
# coordinates is enormous) and regime I wins. On the subset task as defined here ($\rho_{sh}=0.5$: half of the PT features are
# reused) II is again best or tied at every $\alpha_{FT}$, with IV second; regime IV wins
# only on sparser subsets ($\rho_{sh}\le 0.25$, §5). With the normalisation the kernel
# regime III, whose error is smooth in $\alpha$, sits on its replica curve to within a few
# per cent; the largest remaining deviations are where a curve changes fast (the recovery
# transitions of I, II and IV), which finite $D$ smears out and where the seed-to-seed spread
# is largest. Without the normalisation, a teacher with more or fewer active coordinates
# than average shifts every marker of its task up or down together (the printed energy
# range shows by how much at this scale).

# %%
rho_s = spearmanr(sim_df.replica, sim_df.sim).statistic
med = float(np.median(np.abs(sim_df.replica - sim_df.sim)))
ledger.check("PF.replica.vs_sim", "replica vs exact minimisers: Spearman rank correlation", rho_s, lo=0.95,
             note=f"{len(sim_df)} points, D={D_SIM}, {SEEDS_SIM} seeds")
ledger.check("PF.replica.vs_sim_median", "replica vs exact minimisers: median |diff|", med, hi=0.05)

# %% [markdown]
# **Networks, not just minimisers.** The comparison above uses the exact minimiser of the
# potential. Now train the network itself: end-of-PT weights from the closed form (exact for
# gradient flow and much cheaper than GD from a $10^{-3}$ initialisation), rebalance, then
# full-batch GD on the FT data.

# %%
gd_rows = []
for r, tau in (("II", 0.04), ("III", 0.004), ("IV", 0.04)):
    c, lam = REGIMES[r]
    run = run_exact(FULL_OVERLAP, D_GD, ALPHA_GD, c, lam, GAMMA, seed=SEED + 7)
    e_gd, _, steps, loss = run_gd_ft(run, c, lam, GAMMA, tau, max_steps=200_000, tol=1e-10)
    gd_rows.append({"regime": r, "tau": tau, "steps": steps, "final loss": loss, "e(exact)": run.error,
                    "e(GD)": e_gd, "|diff|": abs(e_gd - run.error)})
gd_df = pd.DataFrame(gd_rows)
runtime.display(gd_df)
ledger.check("PF.replica.vs_gd", "GD-trained networks vs the exact minimiser's error (max |diff|)",
             gd_df["|diff|"].max(), hi=0.03, note=f"full overlap, D={D_GD}, alpha_FT={ALPHA_GD}")

# %% [markdown]
# ## 5. Which regime wins depends on the task
#
# We sweep $\lambda_{PT}$ at $c_{PT}=\gamma=10^{-3}$ (replica theory; the curves are cheap)
# for three kinds of task.

# %%
sweeps = {
    ("full overlap", 0.1): (FULL_OVERLAP, 0.1), ("full overlap", 0.2): (FULL_OVERLAP, 0.2),
    ("subset rho_sh=0.1", 0.1): (Task(0.2, 0.1, 0.0), 0.1),
    ("subset rho_sh=0.25", 0.1): (Task(0.2, 0.25, 0.0), 0.1),
    ("subset rho_sh=0.25", 0.2): (Task(0.2, 0.25, 0.0), 0.2),
    ("new features", 0.15): (NEW_FEATURES, 0.15),
}
if SCALE != "smoke":
    sweeps[("new features", 0.1)] = (NEW_FEATURES, 0.1)
    sweeps[("new features", 0.2)] = (NEW_FEATURES, 0.2)
sweep_err = {k: np.array([replica_error(task, a, C_PT, lam, GAMMA, n_nodes=N_NODES).error for lam in LAMS])
             for k, (task, a) in sweeps.items()}
best = {k: LAMS[int(np.argmin(v))] for k, v in sweep_err.items()}
tab = pd.DataFrame({f"{k[0]}, a={k[1]}": v for k, v in sweep_err.items()}, index=[f"lam={x:g}" for x in LAMS]).T
tab["best lambda"] = [best[k] for k in sweep_err]
runtime.display(tab.round(3).reset_index(names="task, alpha_FT"))

# %%
fig, ax = plt.subplots(figsize=(8, 3.6))
xpos = np.arange(len(LAMS))
for i, (k, v) in enumerate(sweep_err.items()):
    plotting.theory(ax, xpos, v / v.max(), color=plotting.color(i), marker="o", ms=3, label=f"{k[0]}, α={k[1]}")
    j = int(np.argmin(v))
    ax.plot(xpos[j], v[j] / v.max(), marker="*", ms=12, color=plotting.color(i), ls="none", zorder=5)
ax.set_xticks(xpos, [f"{x:g}" for x in LAMS], rotation=30)
ax.set_xlabel(r"$\lambda_{PT}$ (first layer small $\leftarrow$ $\rightarrow$ large)")
ax.set_ylabel("FT error / max over λ")
ax.set_title(f"Best relative scale per task (replica, {plotting.scale_tag(SCALE)}); ★ = best")
ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
runtime.show(fig, "pf_lambda_sweeps")

# %% [markdown]
# The minimum moves with the task: full overlap is best at $\lambda_{PT}=+1$ (reuse the
# pretrained features lazily); a sparse subset of PT features is best at an intermediate,
# negative $\lambda_{PT}\in[-0.999,-0.9]$ (regime IV: select among PT features, sparsely);
# new features are best at exactly $\lambda_{PT}=-1$, since any $1+\lambda>0$ makes PT
# coordinates cheap and the FT solution leaks onto them.

# %%
ledger.check("PF.best_lambda.full_overlap", "full overlap: best lambda_PT is +1 (min over alpha_FT in .1/.2)",
             min(best[k] for k in best if k[0] == "full overlap"), predicted=1.0, tol=1e-12)
sub_best = [best[k] for k in best if k[0].startswith("subset")]
ledger.check("PF.best_lambda.subset", "subset of PT features: best lambda_PT in [-0.999, -0.9] (worst case)",
             max(sub_best, key=lambda x: abs(x + 0.95)), lo=-0.999, hi=-0.9, note=f"bests {sub_best}")
ledger.check("PF.best_lambda.new_features", "new features: best lambda_PT is -1 (max over alpha_FT)",
             max(best[k] for k in best if k[0] == "new features"), predicted=-1.0, tol=1e-12)

# %% [markdown]
# **Simulated confirmation.** At the two extreme $\lambda_{PT}$ the exact finite-$D$
# minimisers (errors normalised by the teacher's energy, as above) order the same way as the
# theory.

# %%
conf_rows = []
for (name, a), (task, _) in [(("full overlap", 0.2), (FULL_OVERLAP, 0)), (("new features", 0.15), (NEW_FEATURES, 0))]:
    for lam in (-1.0, 1.0):
        errs = [run_exact(task, D_SIM, a, C_PT, lam, GAMMA, seed=2000 + s).rel_error for s in range(SEEDS_SIM)]
        conf_rows.append({"task": name, "alpha_FT": a, "lambda": lam, "sim": np.mean(errs),
                          "replica": sweep_err[(name, a)][LAMS.index(lam)]})
conf_df = pd.DataFrame(conf_rows)
runtime.display(conf_df.round(4))
sim_order_ok = float(all(
    np.sign(g.sim.iloc[1] - g.sim.iloc[0]) == np.sign(g.replica.iloc[1] - g.replica.iloc[0])
    for _, g in conf_df.groupby("task")))
ledger.check("PF.best_lambda.sim_order", "simulations order lambda = -1 vs +1 as the replica theory (1 = yes)",
             sim_order_ok, predicted=1.0, tol=0.0, kind="soft")

# %% [markdown]
# ## 6. The learned solution moves along the trade-off
#
# Evaluate $(\ell, \mathrm{PD})$ at the *learned* $\hat\beta_{FT}$ (mean over the active
# coordinates shared with PT) as $\lambda_{PT}$ goes from $-1$ to $+1$ (full overlap,
# $\alpha_{FT}=0.3$, exact minimisers).

# %%
lams_path = [-1.0, -0.999, -0.99, -0.9, -0.5, 0.0, 0.5, 1.0]
path = np.array([learned_l_pd(run_exact(FULL_OVERLAP, D_SIM, 0.3, C_PT, lam, GAMMA, seed=SEED + 11), C_PT, lam, GAMMA)
                 for lam in lams_path])
fig, ax = plt.subplots(figsize=(4.6, 3.6))
ax.plot(tri[:, 0], tri[:, 1], color="0.3", lw=1)
ax.plot(path[:, 0], path[:, 1], color="0.6", lw=0.8, zorder=1)
sc = ax.scatter(path[:, 0], path[:, 1], c=lams_path, cmap="coolwarm", zorder=3)
fig.colorbar(sc, ax=ax, label=r"$\lambda_{PT}$")
ax.set_xlabel(r"$\ell$-order of $\hat\beta_{FT}$")
ax.set_ylabel("PD")
ax.set_title(f"Learned path ({plotting.scale_tag(SCALE, f'D={D_SIM}')})")
runtime.show(fig, "pf_learned_path")
dist_start = np.abs(path[0] - np.array([1.0, 0.0])).max()
dist_end = np.abs(path[-1] - np.array([2.0, -1.0])).max()
ledger.check("PF.learned_path", "learned (l, PD) go from ~(1, 0) at lam=-1 to ~(2, -1) at lam=+1 (max sup-distance)",
             max(dist_start, dist_end), hi=0.25,
             note=f"start {np.round(path[0], 3).tolist()}, end {np.round(path[-1], 3).tolist()}")
ledger.check("PF.learned_path.tradeoff", "learned points satisfy l + PD >= 1", float((path.sum(1)).min()), lo=1 - 1e-9)
edge = path[1:].sum(1) - 1  # lambda_PT > -1
print(f"lambda_PT > -1: l + PD - 1 in [{edge.min():.1e}, {edge.max():.1e}]; "
      f"lambda_PT = -1: l + PD - 1 = {path[0].sum() - 1:.3f}")

# %% [markdown]
# The learned solution starts near the sparse, PT-independent corner and slides towards
# the lazy, PT-dependent corner. Every point with $\lambda_{PT} > -1$, regime IV included,
# lies on the edge $\ell + \mathrm{PD} = 1$ (the printed gap is tiny): with
# $c_{PT}=\gamma=10^{-3}$ the FT scale $c_d$ is nearly proportional to $|\beta_{PT,d}|$ on the
# shared coordinates, so $\varepsilon \approx 1$ and $\ell + \mathrm{PD} = 1 +
# (\ell-1)(1-\varepsilon) \approx 1$. Moving $\lambda_{PT}$ slides the solution along that
# edge, trading sparsity for PT dependence; only at $\lambda_{PT}=-1$, where $c_d=\gamma^2$
# ignores pretraining, does it leave the edge. "About $(1, 0)$" is checked with a tolerance of 0.25 in sup-norm (our
# choice; the issue gives none): at $\lambda_{PT}=-1$ the $\ell$-order exceeds 1 by a
# logarithmic correction, $\ell \approx 1 + 1/(\log(2|\beta|/c_d) - 1)$, and more so on
# coordinates that FT has not yet recovered.
#
# ## 7. Imperfect pretraining
#
# With $\alpha_{PT}<1$ pretraining does not recover $\beta^*_{PT}$. A two-stage replica
# calculation handles it: solve the PT channel (with $C\equiv c_{PT}$), draw
# $\hat\beta_{PT} = \eta(B_{PT}+\sigma_{PT}Z')$, and average the FT channel over $Z'$ as well.

# %%
lams_imp = [-0.999, -0.99, -0.9, -0.5, 0.0, 1.0]
imp_rows = []
for a_pt in [None, *ALPHAS_PT_IMPERFECT]:
    for a_ft in ALPHAS_FT_IMPERFECT:
        e = [replica_error(FULL_OVERLAP, a_ft, C_PT, lam, GAMMA, alpha_pt=a_pt, n_nodes=N_NODES).error for lam in lams_imp]
        imp_rows.append({"alpha_PT": "perfect" if a_pt is None else a_pt, "alpha_FT": a_ft,
                         **{f"lam={lam:g}": v for lam, v in zip(lams_imp, e, strict=True)},
                         "best lambda": lams_imp[int(np.argmin(e))], "e(+1) - min e": e[-1] - min(e)})
imp_df = pd.DataFrame(imp_rows)
runtime.display(imp_df.round(4))

# %%
fig, ax = plt.subplots(figsize=(7.4, 3.5))
pt_levels = list(dict.fromkeys(imp_df.alpha_PT))  # "perfect", then each alpha_PT
line_styles = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1))]
for _, row in imp_df.iterrows():
    v = np.array([row[f"lam={lam:g}"] for lam in lams_imp])
    j = pt_levels.index(row["alpha_PT"])
    ax.plot(np.arange(len(lams_imp)), v, color=plotting.color(ALPHAS_FT_IMPERFECT.index(row["alpha_FT"])),
            ls=line_styles[j % len(line_styles)], marker="os^Dv"[j % 5], ms=3, lw=1.2,
            label=f"α_PT={row['alpha_PT']}, α_FT={row['alpha_FT']}")
ax.set_xticks(np.arange(len(lams_imp)), [f"{x:g}" for x in lams_imp])
ax.set_xlabel(r"$\lambda_{PT}$")
ax.set_ylabel("FT error (replica)")
ax.set_title(f"Imperfect PT, full overlap ({plotting.scale_tag(SCALE)}): "
             "colour = α_FT, line style = α_PT", fontsize=9)
ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
runtime.show(fig, "pf_imperfect_pt")

# %%
for a_pt in ALPHAS_PT_IMPERFECT:
    sub = imp_df[imp_df.alpha_PT == a_pt]
    print(f"alpha_PT={a_pt}: " + "; ".join(
        f"alpha_FT={r.alpha_FT}: best lambda {r['best lambda']:g}, e(+1) - min e = {r['e(+1) - min e']:.4f}"
        for _, r in sub.iterrows()))
perfect = imp_df[imp_df.alpha_PT == "perfect"]
imperfect = imp_df[(imp_df.alpha_PT == 0.45) & (imp_df.alpha_FT >= 0.35)]
ledger.check("PF.imperfect_pt", "imperfect PT (alpha_PT=0.45, alpha_FT>=0.35): best lambda_PT <= -0.5 (max over alpha_FT)",
             imperfect["best lambda"].max(), hi=-0.5)
ledger.check("PF.imperfect_pt.perfect", "perfect PT: lambda_PT = +1 attains the minimal error (max e(+1) - min e)",
             perfect["e(+1) - min e"].max(), hi=1e-9,
             note="at alpha_FT >= 0.35 every lambda >= -0.5 reaches zero error (ties)")

# %% [markdown]
# With perfect PT, $\lambda_{PT}=+1$ is (one of) the best choices. With imperfect PT the
# pretrained magnitudes are wrong and the lazy PT-dependent regime inherits the errors. With
# little FT data ($\alpha_{FT}=0.2$) a non-negative $\lambda_{PT}$ still wins: reusing
# imperfect features beats learning with too few examples. Once FT has enough data, a
# *negative* $\lambda_{PT}$ (a smaller first layer), which lets FT refine the features, wins
# even on full overlap: at $\alpha_{FT}=0.5$ the best choice is $\lambda_{PT}$ just above
# $-1$ (the margin shrinks as PT improves, since then every error is small). How much FT data
# is "enough" depends on how good PT was: at $\alpha_{PT}=0.45$ a mildly negative
# $\lambda_{PT}$ already wins at $\alpha_{FT}=0.35$, by a small margin, whereas with better
# PT ($\alpha_{PT}=0.55$, run at the standard scale and above) $\lambda_{PT}=+1$ is still
# best there. The printout above gives the winner and its margin for each $\alpha_{PT}$ run
# at this scale.
#
# ## 8. The absolute scale, and the nonlinear analogues
#
# The two summaries of the paper disagree on the direction of the absolute-scale effect in
# ResNets ("increasing $c_{PT}$ degrades" vs "decreasing the absolute scale degrades"). The
# diagonal theory answers for its own setting: on full overlap, raising $c_{PT}$ pushes FT
# into the kernel regime III and hurts.

# %%
c_sweep = np.logspace(-3, 1, 5)
e_c = np.array([replica_error(FULL_OVERLAP, 0.2, c, 0.0, GAMMA, n_nodes=N_NODES).error for c in c_sweep])
runtime.display(pd.DataFrame({"c_PT": c_sweep, "FT error (full overlap, lam=0, alpha_FT=0.2)": e_c}))
ledger.check("PF.abs_scale", "diagonal theory: increasing c_PT degrades FT on full overlap (e(c=10) - e(c=1e-3) > 0)",
             e_c[-1] - e_c[0], lo=0.0, kind="soft",
             note="so 'decreasing the absolute scale degrades' is not what the diagonal model predicts")

# %% [markdown]
# **A nonlinear stand-in.** The paper tests the theory's levers on ResNet-18 (CIFAR-100 →
# held-out classes, SVHN). Here, on one CPU, a two-layer ReLU network (256 hidden units) is
# pretrained on digits 0–7 and fine-tuned on "8 vs 9" (new classes) with $n$ examples, by
# full-batch GD on both layers. The interventions, read through the diagonal theory:
# first-layer scale $\kappa$ ($W_1 \leftarrow \kappa W_1$, the $\lambda_{PT}$ lever),
# readout re-initialisation scale $\gamma$ (× the default $1/\sqrt{H}$), and a global scale
# $s$ ($\kappa=\gamma=s$). We also track the participation ratio (PR) of the hidden layer on
# test images and its ENSD with the pre-FT representation (both centred). This stand-in and
# its protocol are this book's own; its results say nothing definite about ResNets.

# %%
split = datasets.digits(seed=SEED)
mlp_pt = pretrain_mlp(split.X_train, split.y_train, list(range(8)), steps=VISION_PT_STEPS, seed=SEED)
X_pool, y_pool, X_te, y_te = binary_task(split, (8, 9))
INTERVENTIONS = {"default": (1.0, 1.0), "small first layer (kappa=0.25)": (0.25, 1.0),
                 "small readout (gamma=0.1)": (1.0, 0.1), "global x0.5": (0.5, 0.5), "global x2": (2.0, 2.0)}
vis_rows = []
for seed in range(VISION_SEEDS):
    rng_v = np.random.default_rng(100 + seed)
    for n in VISION_N:
        idx = rng_v.choice(len(X_pool), n, replace=False)
        for name, (kappa, gamma) in INTERVENTIONS.items():
            o = finetune_mlp(mlp_pt, X_pool[idx], y_pool[idx], X_te, y_te, kappa=kappa, gamma=gamma, seed=seed)
            vis_rows.append({"seed": seed, "n": n, "intervention": name, "acc": o.test_acc,
                             "PR pre": o.pr_pre, "PR post": o.pr_post, "ENSD": o.ensd,
                             "ENSD / PR post": o.ensd / o.pr_post})
vis_df = pd.DataFrame(vis_rows)
runtime.display(vis_df.groupby(["intervention", "n"])[["acc", "PR post", "ENSD", "ENSD / PR post"]]
                .mean().round(3).reset_index())

# %%
fig, ax = plt.subplots(figsize=(5.4, 3.5))
for i, name in enumerate(INTERVENTIONS):
    g = vis_df[vis_df.intervention == name].groupby("n")["acc"]
    plotting.sim(ax, g.mean().index, g.mean(), yerr=g.sem(), color=plotting.color(i), label=name, ls="-", lw=0.8)
ax.set_xscale("log")
ax.set_xlabel("FT examples n")
ax.set_ylabel("test accuracy (8 vs 9)")
ax.set_title(f"Digits stand-in, PT on 0-7 ({plotting.scale_tag(SCALE, f'{VISION_SEEDS} seeds')})")
ax.legend(fontsize=7)
runtime.show(fig, "pf_digits_standin")


# %%
def paired(a, b, ns=None):
    """Per-(seed, n) differences of accuracy between interventions a and b."""
    sub = vis_df if ns is None else vis_df[vis_df.n.isin(ns)]
    piv = sub.pivot_table(index=["seed", "n"], columns="intervention", values="acc")
    return (piv[a] - piv[b]).to_numpy()


effects = []  # one row per paired effect: the summary printed below


def soft_sign_claim(id_, statement, diffs, note=""):
    """PASS/NOT REPRODUCED only when the 95% interval excludes 0; else INCONCLUSIVE."""
    m, lo, hi = mean_ci(diffs)
    note = f"mean {m:+.4f}, 95% CI [{lo:+.4f}, {hi:+.4f}] over {len(diffs)} paired samples" + (f"; {note}" if note else "")
    if lo > 0 or hi < 0:
        claim = ledger.check(id_, statement, m, lo=0.0, kind="soft", note=note)
    else:
        claim = ledger.inconclusive(id_, statement, m, note=note)
    effects.append({"claim": id_, "mean diff": m, "95% lo": lo, "95% hi": hi, "pairs": len(diffs),
                    "verdict": claim.verdict})


soft_sign_claim("PF.vision.early_scale", "digits stand-in: smaller first-layer scale (kappa=0.25) helps FT accuracy",
                paired("small first layer (kappa=0.25)", "default"))
mid = [VISION_N[len(VISION_N) // 2]]
soft_sign_claim("PF.vision.readout_gamma", f"digits stand-in: smaller readout re-init helps at intermediate n={mid[0]}",
                paired("small readout (gamma=0.1)", "default", mid))
soft_sign_claim("PF.vision.abs_scale", "digits stand-in: larger global scale degrades FT (acc(x0.5) - acc(x2))",
                paired("global x0.5", "global x2"),
                note="this is the 'increasing c_PT degrades' direction; the opposite sign would support the seed summary")
k = vis_df[vis_df.intervention == "small first layer (kappa=0.25)"]
pr_drop = float((k["PR post"] / k["PR pre"]).mean())
ensd_ratio = float((k["ENSD"] / k["PR post"]).mean())
ensd_default = float(vis_df[vis_df.intervention == "default"]["ENSD / PR post"].mean())
pr_note = (f"PR_post/PR_pre = {pr_drop:.3f}, ENSD/PR_post = {ensd_ratio:.3f} "
           f"(default intervention: {ensd_default:.3f})")
if ensd_ratio >= 0.8:
    ledger.check("PF.vision.pr_ensd", "kappa=0.25: PR falls (PR_post/PR_pre < 1) while ENSD stays high",
                 pr_drop, hi=1.0, kind="soft", note=pr_note)
else:
    ledger.check("PF.vision.pr_ensd", "kappa=0.25: ENSD stays high (ENSD/PR_post >= 0.8) while PR falls",
                 ensd_ratio, lo=0.8, kind="soft", note=pr_note)
runtime.display(pd.DataFrame(effects).round(4))
print(pr_note)
# %% [markdown]
# Read these effects through the summary table above (and the ledger): each is a paired
# accuracy difference with its seed-level 95% interval, and an interval that covers zero is
# INCONCLUSIVE, not a result. On this stand-in the levers act weakly, and a few seeds do not
# settle them:
#
# * a smaller first layer ($\kappa=0.25$, the $\lambda_{PT}<0$ lever) gives at most a small
#   gain in accuracy: its mean difference is positive, but its interval excludes zero only
#   narrowly at the standard scale and not at all at the smoke scale;
# * a smaller readout re-initialisation ($\gamma=0.1$) did **not** help: its mean difference
#   is negative (see the ledger for whether the interval excludes zero at this scale);
# * the global $\times0.5$ scale beat $\times2$ on average, the "increasing $c_{PT}$
#   degrades" direction that the diagonal theory predicts (above), not the opposite one;
# * $\kappa=0.25$ compresses the hidden representation strongly (PR falls to a fraction of
#   its pre-FT value), and what remains is aligned with the pre-FT representation (ENSD about
#   equal to the new PR). That alignment is not specific to $\kappa=0.25$, however: the
#   ENSD/PR ratio is close to one for every intervention, the default included (table), so
#   only the drop in PR, not the alignment, distinguishes the PT-dependent rich regime here.
#
# **Modular addition.** A one-layer transformer (width 64, 4 heads) is pretrained on
# $(a+b) \bmod 6$ for $a, b \in \mathbb Z_{30}$, then fine-tuned (new readout, 30% of the
# pairs, a fixed budget of AdamW steps) on $(a+b) \bmod 3$ (a prime factor PT already
# uses) or on $\bmod 5$ and $\bmod 10$ (a new prime factor), with the token embedding
# multiplied by $\kappa_{emb}\in\{0.25, 1\}$ before FT. The claim is that the smaller
# embedding helps more on tasks with a new prime factor. Caveats: the FT budget is short,
# so this measures how *fast* FT generalises, and the mod-3 task is near its ceiling either
# way. The protocol is this book's own.

# %%
if MODADD_SEEDS:
    ma_rows = [{"seed": seed, "modulus": r.modulus, "kappa_emb": r.kappa, "test acc": r.test_acc}
               for seed in range(MODADD_SEEDS)
               for r in pt_then_ft(30, 6, [3, 5, 10], [0.25, 1.0], frac=0.3, pt_steps=MODADD_STEPS[0],
                                   ft_steps=MODADD_STEPS[1], seed=SEED + seed)]
    ma_df = pd.DataFrame(ma_rows)
    runtime.display(ma_df.pivot_table(index="modulus", columns="kappa_emb", values="test acc").round(3).reset_index())
    piv = ma_df.pivot_table(index=["seed", "modulus"], columns="kappa_emb", values="test acc")
    gain = (piv[0.25] - piv[1.0]).unstack("modulus")  # rows: seeds
    soft_sign_claim("PF.transformer.new_prime", "modular addition: embedding scale 0.25 helps more on new-prime tasks "
                    "(gain on mod 5/10 minus gain on mod 3)",
                    ((gain[5] + gain[10]) / 2 - gain[3]).to_numpy(),
                    note=f"{MODADD_STEPS[1]} FT steps; mean gains {gain.mean().round(3).to_dict()}")
else:
    ledger.inconclusive("PF.transformer.new_prime", "modular addition: lower embedding scale helps more with a new prime factor",
                        note="not run at smoke scale (CPU budget); run at standard or paper")

# %% [markdown]
# ## Claims
#
# Every claim of the chapter, what was measured at this scale and the verdict.

# %%
print(f"chapter CPU time: {time.process_time() - T_START:.1f} s (after imports)")
ledger.report()
