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
# # Prologue: gradient flow, gradient descent and what they conserve
#
# Much of deep-learning theory is stated for **gradient flow**, the continuous-time limit
# $\dot\theta = -\nabla L(\theta)$, while networks are trained with **gradient descent**,
# $\theta_{k+1} = \theta_k - \tau\,\nabla L(\theta_k)$. This prologue measures the gap on
# the smallest models where it can be computed exactly, and introduces the notation that
# chapters 1 and 2 reuse: a *conservation law* $h(\theta)$, its discrete-time drift, and the
# two rates $\tau^2 k$ (drift of a law) and $\tau$ (distance from the flow at fixed time
# $t=\tau k$). Symbols are collected on the [notation page](notation.md).
#
# ```{admonition} Takeaway
# :class: tip
# Gradient flow conserves $h = u^2 - v^2$ exactly. Gradient descent breaks it only at second
# order: each step changes $h$ by exactly $\tau^2 q(g)$, so the drift after $k$ steps is
# $O(\tau^2 k)$, while the iterates themselves stay $O(\tau)$ away from the flow at a fixed
# time $t = \tau k$. All four statements are checked below to the stated tolerances.
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
N, D, K_SPARSE = 20, 50, 3            # diagonal network: samples, width, teacher sparsity
INIT_U, INIT_V, INIT_NOISE = 0.5, 0.3, 0.1
TAU_ID, STEPS_ID = 0.05, 200          # the exact one-step identity (P.1)
N_TAU = runtime.by_scale(SCALE, 6, 12, 24)
TAU_RANGE = (1e-3, 1e-2)              # drift vs tau at fixed k (tau * k stays small)
K_FIXED = 10
TAU_K, K_MAX = 5e-3, runtime.by_scale(SCALE, 400, 2_000, 10_000)
K_EARLY = 20                          # early window for the k exponent
T_FIXED = 2.0                         # GD -> flow at fixed time t = tau k
TAUS_FLOW = runtime.by_scale(SCALE, [0.04, 0.02, 0.01, 0.005],
                             [0.08, 0.04, 0.02, 0.01, 0.005, 0.0025],
                             [0.08, 0.04, 0.02, 0.01, 0.005, 0.0025, 0.00125, 0.000625])
N_SEEDS = runtime.by_scale(SCALE, 2, 8, 32)

# %%
import matplotlib.pyplot as plt
import numpy as np

from dltheory import claims, fitting, plotting
from dltheory import gradient_flow as gf

rt = runtime.setup(SCALE)
plotting.use_style()
ledger = claims.Ledger("gradient_flow", scale=SCALE, device=rt.device)

# %% [markdown]
# ## The two-parameter model
#
# Take $f(x) = u\,v\,x$ and one example $(x, y) = (1, 1)$, so
# $L(u, v) = \tfrac12 (uv - 1)^2$. With the residual $r = uv - 1$ the gradient is
# $g = (g_u, g_v) = (v r,\; u r)$. Along the flow
#
# $$
# \frac{d}{dt}\,(u^2 - v^2) = -2\,(u g_u - v g_v) = -2\,(uvr - vur) = 0,
# $$
#
# so $h(u, v) = u^2 - v^2$ is a **conservation law**: every flow line stays on one
# hyperbola $u^2 - v^2 = h_0$. The reason is a symmetry: $f$ does not change under the
# rescaling $(u, v) \mapsto (e^{s} u, e^{-s} v)$, and Noether-style, each such one-parameter
# symmetry of the loss gives one conserved quantity. For one GD step,
#
# $$
# \begin{aligned}
# h_{k+1} - h_k &= (u - \tau g_u)^2 - (v - \tau g_v)^2 - u^2 + v^2 \\
#  &= \underbrace{-2\tau\,(u g_u - v g_v)}_{=\,0} + \tau^2 \underbrace{(g_u^2 - g_v^2)}_{q(g)}
# \end{aligned}
# \tag{P.1}
# $$
#
# The first-order term is exactly the flow's zero; what is left is $\tau^2 q(g)$. Here
# $q(g) = r^2 (v^2 - u^2) = -r^2 h$, so GD *shrinks* $|h|$ by the factor $1 - \tau^2 r_k^2$
# at each step: it drifts towards balanced weights.
#
# The figure follows the flow and GD with a large step from the same unbalanced start.

# %% tags=["hide-input"]
scalar = gf.scalar_problem(x=1.0, y=1.0)
u0s, v0s = np.array([2.0]), np.array([0.1])
t_grid = np.linspace(0.0, 6.0, 400)
U_flow, V_flow = gf.flow(scalar, u0s, v0s, t_grid)
runs = {tau: gf.gd(scalar, u0s, v0s, tau=tau, steps=int(6.0 / tau)) for tau in (0.1, 0.4)}

fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.5))
ax = axes[0]
h0 = gf.balance(u0s, v0s)[0]
uu = np.linspace(np.sqrt(h0), 2.4, 300)
ax.plot(uu, np.sqrt(uu**2 - h0), color="0.75", lw=3, label=r"$u^2-v^2=h_0$")
uu = np.linspace(1.5, 2.4, 300)
ax.plot(uu, 1 / uu, color="0.85", lw=1, ls="-", label=r"minima $uv=1$")
plotting.theory(ax, U_flow[:, 0], V_flow[:, 0], label="gradient flow")
for i, (tau, tr) in enumerate(runs.items()):
    plotting.sim(ax, tr.U[:12, 0], tr.V[:12, 0], color=plotting.color(i + 1),
                 label=rf"GD, $\tau={tau}$ (first 12 steps)", ms=4, ls="-", lw=0.6)
ax.set(xlim=(1.5, 2.3), ylim=(0, 0.85), xlabel="$u$", ylabel="$v$",
       title=r"$f(x)=uvx$, $(x,y)=(1,1)$: flow vs GD")
ax.legend(loc="lower left")
ax = axes[1]
for i, (tau, tr) in enumerate(runs.items()):
    k = np.arange(tr.h.shape[0])
    plotting.sim(ax, tau * k, tr.h[:, 0], color=plotting.color(i + 1), ms=3,
                 label=rf"GD, $\tau={tau}$")
ax.axhline(h0, **plotting.THEORY, label="flow: $h(t)=h_0$")
ax.set(xlabel=r"time $t=\tau k$", ylabel=r"$h = u^2 - v^2$",
       title=r"the law $h$ along the runs")
ax.legend()
runtime.show(fig, "prologue_scalar_paths")

# %% [markdown]
# Left: the flow (dashed) slides along the hyperbola through its start until it meets the
# curve of minima $uv = 1$. GD with a large step ($\tau = 0.4$) visibly leaves the hyperbola and
# lands on a more balanced minimum. Right: along the flow $h$ is constant; under GD it decays
# by $\tau^2 r_k^2 h_k$ per step, a lot for $\tau = 0.4$ and barely for $\tau = 0.1$.
#
# ## The diagonal linear network
#
# The same law holds coordinate-wise for the **diagonal linear network**
# $f(x) = \langle u \odot v, x\rangle$, $\beta = u \odot v \in \mathbb R^d$, trained on
# $L = \frac{1}{2n}\lVert X\beta - y\rVert^2$: with $r = X^\top (X\beta - y)/n$ the
# gradients are $g_u = v\odot r$, $g_v = u \odot r$, and $h = u^{\odot 2} - v^{\odot 2}$ is
# conserved by the flow, one law per coordinate. Chapter 2 builds on exactly this invariant.
# We use $n = 20$ Gaussian samples, $d = 50$ and a 3-sparse teacher.
#
# ### Check 1: the one-step identity is exact
#
# Summing (P.1) over steps, $h_k - h_0 = \tau^2 \sum_{j<k} q(g_j)$ holds *exactly*, so
# the difference of the two sides must be rounding error only.

# %%
problem, beta_star = gf.sparse_regression(N, D, K_SPARSE, seed=SEED)
rng = runtime.as_generator(SEED + 1)
u0 = INIT_U + INIT_NOISE * rng.standard_normal(D)
v0 = np.full(D, INIT_V)

tr = gf.gd(problem, u0, v0, tau=TAU_ID, steps=STEPS_ID)
print(f"loss {tr.loss[0]:.3f} -> {tr.loss[-1]:.2e} after {STEPS_ID} steps (tau={TAU_ID})")
print(f"max_k |(h_k - h_0) - tau^2 sum q(g_j)| = {tr.identity_error:.2e}")
print(f"for scale: max |h_k - h_0| = {np.abs(tr.h - tr.h[0]).max():.2e}")
ledger.check("GF.identity", "h_k - h_0 = tau^2 sum_j q(g_j) exactly for GD (eq. P.1)",
             measured=tr.identity_error, hi=1e-12)

# %% [markdown]
# ### Check 2: the drift is second order in $\tau$ and first order in $k$
#
# Eq. (P.1) bounds the drift: $\lVert h_k - h_0\rVert \le \tau^2 \sum_{j<k} \lVert q(g_j)\rVert
# \le C\,\tau^2 k$. We measure the exponents separately. At a fixed, small number of steps
# $k$ (so that $\tau k \ll 1$ and the gradients barely change), the drift should grow as
# $\tau^2$. At a fixed $\tau$ it should grow as $k$ while the gradients are still close to
# their initial values, and then saturate as training converges and $q(g_j) \to 0$; hence
# the $k$ exponent is fitted on an early window. We repeat over several random starts.

# %%
taus = np.geomspace(*TAU_RANGE, N_TAU)
ks = np.arange(1, K_MAX + 1)
drift_tau, drift_k, q0 = [], [], []
for s in range(N_SEEDS):
    r = runtime.as_generator(SEED + 100 + s)
    u0_s = INIT_U + INIT_NOISE * r.standard_normal(D)
    drift_tau.append([gf.gd(problem, u0_s, v0, tau=t, steps=K_FIXED).drift[-1] for t in taus])
    drift_k.append(gf.gd(problem, u0_s, v0, tau=TAU_K, steps=K_MAX).drift[1:])
    q0.append(np.linalg.norm(gf.q(*gf.grad(problem, u0_s, v0))))
drift_tau, drift_k, q0 = np.array(drift_tau), np.array(drift_k), np.mean(q0)

fit_tau = fitting.bootstrap_slope(taus, drift_tau, n_boot=500, seed=SEED)
fit_k = fitting.bootstrap_slope(ks, drift_k, window=(1, K_EARLY), n_boot=500, seed=SEED)
print(f"tau exponent at k={K_FIXED}: {fit_tau.slope:.3f}  (95% CI {fit_tau.lo:.3f}..{fit_tau.hi:.3f})")
print(f"k exponent, k <= {K_EARLY}, tau={TAU_K}: {fit_k.slope:.3f}  (95% CI {fit_k.lo:.3f}..{fit_k.hi:.3f})")

# %% tags=["hide-input"]
fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4))
ax = axes[0]
plotting.sim(ax, taus, drift_tau.mean(0), yerr=drift_tau.std(0), label=f"GD, k={K_FIXED}")
plotting.theory(ax, taus, taus**2 * K_FIXED * q0, label=r"$\tau^2 k\,\|q(g_0)\|$")
plotting.loglog(ax, xlabel=r"step size $\tau$", ylabel=r"drift $\|h_k-h_0\|$",
                title=f"drift at fixed k ({plotting.scale_tag(SCALE, 'Gaussian data')})")
ax.legend()
ax = axes[1]
mean_k = drift_k.mean(0)
plotting.sim(ax, ks, mean_k, label=rf"GD, $\tau={TAU_K}$", ms=2, marker=".")
plotting.theory(ax, ks[: 10 * K_EARLY], TAU_K**2 * ks[: 10 * K_EARLY] * q0,
                label=r"$\tau^2 k\,\|q(g_0)\|$ (slope 1)")
ax.axvspan(1, K_EARLY, color="0.9", zorder=0, label="fit window")
plotting.loglog(ax, xlabel="steps $k$", ylabel=r"drift $\|h_k-h_0\|$",
                title="drift vs steps: linear, then saturating")
ax.legend()
runtime.show(fig, "prologue_drift")

ledger.check("GF.tau_exponent", "drift at fixed k scales as tau^2", measured=fit_tau.slope,
             lo=1.8, hi=2.2, note=f"95% CI [{fit_tau.lo:.3f}, {fit_tau.hi:.3f}], {N_SEEDS} starts")
ledger.check("GF.k_exponent", "drift at fixed tau grows linearly in k (early window)",
             measured=fit_k.slope, lo=0.7, hi=1.2,
             note=f"window k <= {K_EARLY}; 95% CI [{fit_k.lo:.3f}, {fit_k.hi:.3f}]")

# %% [markdown]
# Left: markers are the measured drift after $k = 10$ steps (mean and spread over random
# starts); the dashed line is the leading-order prediction $\tau^2 k\,\lVert q(g_0)\rVert$
# from (P.1) with the gradients frozen at their initial values (slope 2, no fitted constant). Right: the drift grows with slope 1
# while the gradients are still near their initial values (shaded window) and flattens once
# the loss is small, because $q(g_j) \to 0$: the bound $C\tau^2 k$ is tight early and loose
# late.
#
# ### Check 3: GD tracks the flow with error $O(\tau)$ at fixed time
#
# The conservation-law drift is $O(\tau^2)$, but the iterates themselves are only
# first-order accurate: GD is the explicit Euler scheme for the flow, whose global error at
# a fixed time $t = \tau k$ is $O(\tau)$. We compare GD after $k = t/\tau$ steps with a
# high-accuracy ODE solution (scipy's `DOP853`, relative tolerance $10^{-12}$).

# %%
taus_flow = np.array(TAUS_FLOW)
err = gf.gd_to_flow_error(problem, u0, v0, t=T_FIXED, taus=taus_flow)
fit_order = fitting.loglog_fit(taus_flow, err)
print(f"GD -> flow error at t={T_FIXED}: order {fit_order.slope:.3f}")

fig, ax = plt.subplots()
plotting.sim(ax, taus_flow, err, label=rf"$\|\theta_{{k}}^{{GD}} - \theta(t)\|$, $t={T_FIXED}$")
plotting.slope_line(ax, 1.0, x=taus_flow, anchor=(taus_flow[-1], err[-1]), offset=0.6,
                    label=r"slope 1 ($\tau$)")
plotting.loglog(ax, xlabel=r"step size $\tau$", ylabel="distance to the flow",
                title=f"GD vs gradient flow at fixed time ({plotting.scale_tag(SCALE)})")
ax.legend()
runtime.show(fig, "prologue_gd_to_flow")

ledger.check("GF.gd_to_flow_order", "GD is O(tau) away from the flow at fixed t = tau k",
             measured=fit_order.slope, lo=0.8, hi=1.2,
             note=f"t = {T_FIXED}; flow from scipy DOP853 (rtol 1e-12)")

# %% [markdown]
# The error halves with the step size: slope 1, as for any first-order scheme. Two orders
# therefore coexist: the *law* drifts at $O(\tau^2)$ per unit of $k$, but the *trajectory*
# is only $O(\tau)$-close to the flow. Chapter 1 measures the same $\tau^2 k$ law on
# attention, SwiGLU and mixture-of-experts blocks, where $q$ is a larger quadratic form;
# chapter 2 uses the invariant $u^2 - v^2$ to solve the flow in closed form.
#
# ## Exercises
#
# 1. Show that for the scalar model $h_{k+1} = (1 - \tau^2 r_k^2)\, h_k$. What does GD with
#    a large step prefer among the minima $uv = 1$?
# 2. Replace GD by heavy-ball momentum. Is (P.1) still exact? (Chapter 1 answers this.)
#
# ```{dropdown} Solution to 1
# $q(g) = g_u^2 - g_v^2 = r^2 (v^2 - u^2) = -r^2 h$, so (P.1) gives the product formula.
# Every step shrinks $|h|$, so GD lands closer to the balanced minimum $u = v = 1$ than the
# flow from the same start, and the more so the larger $\tau$.
# ```
#
# ## Claims
#
# Each check above is an entry of the chapter's ledger; the table is also collected on the
# {doc}`reproduction page <reproduction>`.

# %%
ledger.report()
