# ---
# jupyter:
#   jupytext:
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
# Much of deep-learning theory is proved for **gradient flow**, the continuous-time limit
# $\dot\theta = -\nabla L(\theta)$, while networks are trained with **gradient descent**
# (GD), $\theta_{k+1} = \theta_k - \tau\,\nabla L(\theta_k)$. Take the smallest network
# there is, $f(x) = u\,v\,x$: the flow keeps $u^2 - v^2$ fixed forever. *What does gradient
# descent keep of it, and how fast does it lose the rest?*
#
# ## Overview
#
# **Before you start.** The chain rule and gradients, least-squares regression, and the
# idea of Euler's method for an ordinary differential equation. Nothing from the later
# chapters; the symbols are collected on the [notation page](notation.md).
#
# **After this prologue you can**
#
# - find the conservation law that a rescaling symmetry gives the flow, and see why it holds;
# - compute exactly how one GD step changes that law (a second-order term $\tau^2 q(g)$),
#   and predict the two rates that follow: the law drifts as $\tau^2 k$, while the iterates
#   stay only $O(\tau)$ close to the flow at a fixed time;
# - read the same rates off a simulation, as chapters 1 and 2 do on larger models.
#
# The notation introduced here, a conservation law $h(\theta)$ and its discrete-time drift,
# is the one chapters 1 and 2 reuse. It follows the conservation laws of gradient flows of
# Marcotte, Gribonval and Peyré ([arXiv:2307.00144](https://arxiv.org/abs/2307.00144))
# {cite}`marcotte2023conservation`. Each result below is checked on this page as it runs;
# how those verdicts are reached is explained once, in
# [How this book checks itself](checking.md).

# %% tags=["remove-cell"]
# @title Install dltheory 0.1.0 in Colab { display-mode: "form" }
import importlib.metadata
import importlib.util
import subprocess
import sys

SPEC = "git+https://github.com/dltheory/dltheory@v0.1.0"  # this notebook's release
REPO, TAG = SPEC[4:].split("@")
missing = importlib.util.find_spec("dltheory") is None
have = None if missing else next(
    (d.version for d in importlib.metadata.distributions(name="dltheory")), "?")
if "google.colab" in sys.modules and have not in (TAG[1:], "?"):  # absent or another version
    ls = subprocess.run(["git", "ls-remote", REPO, "HEAD", f"refs/tags/{TAG}"],
                        capture_output=True, text=True)
    if ls.returncode:
        sys.exit(f"dltheory: cannot reach {REPO}: {ls.stderr.strip()[-300:]}")
    refs = {r: sha for sha, _, r in (x.partition("\t") for x in ls.stdout.splitlines())}
    ref = TAG if f"refs/tags/{TAG}" in refs else refs.get("HEAD", "main")
    print(f"dltheory: installing release {TAG}" if ref == TAG else
          f"dltheory: release {TAG} is not published yet, installing main at commit {ref}")
    widgets = [] if importlib.util.find_spec("ipywidgets") else ["ipywidgets"]  # Explore
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-U",
                          f"git+{REPO}@{ref}", *widgets], capture_output=True, text=True)
    if pip.returncode:
        sys.exit(f"dltheory: pip could not install it: {pip.stderr.strip()[-500:]}")
elif missing:
    sys.exit("dltheory is not installed: run `pip install -e .` in the repository "
             "(or activate its environment: `. .venv/bin/activate`)")

# %% tags=["parameters", "hide-input"]
from dltheory import runtime

SCALE = runtime.scale()   # smoke | standard | paper: sizes and seed counts per scale
SEED = 0
K_FIXED = 10              # drift vs tau after this many steps, in [2, 100]
TAU_K = 5e-3              # drift vs k at this step size, in [1e-4, 1e-2]
# (the fit windows follow both knobs into tau k <= 0.1, where the rates hold)

# %% tags=["hide-input"]
import numpy as np

from dltheory import chapter, plotting
from dltheory.gradient_flow import checks, experiments, figures

cfg, ledger = chapter.start("gradient_flow", SCALE, SEED=SEED, K_FIXED=K_FIXED,
                            TAU_K=TAU_K)

# %% tags=["remove-input"]
drift_table = experiments.drift_sweep(cfg)   # a row per (start, sweep, tau, k); section 4
runtime.show(figures.drift(drift_table, cfg), "prologue_drift")

# %% [markdown]
# *Where this prologue ends up.* On a diagonal linear network (section 3), gradient descent
# breaks the flow's conservation law only at second order: after $k$ steps of size $\tau$
# the law has drifted by about $\tau^2 k$ (dashed: the prediction with the gradients frozen
# at their initial values, no fitted constant). Left: slope 2 in $\tau$ at fixed $k$;
# right: slope 1 in $k$ while the gradients barely move (shaded), then saturation as the
# loss goes to zero (section 4).
#
# ## 1. A conservation law of the flow
#
# Take $f(x) = u\,v\,x$ and one example $(x, y) = (1, 1)$, so
# $L(u, v) = \tfrac12 (uv - 1)^2$. With the residual $r = uv - 1$ the gradient is
# $g = (g_u, g_v) = (v r,\; u r)$. Differentiate $h(u, v) = u^2 - v^2$ along the flow
# $\dot u = -g_u$, $\dot v = -g_v$:
#
# $$
# \frac{d}{dt}\,(u^2 - v^2) = -2\,(u g_u - v g_v) = -2\,(uvr - vur) = 0 .
# $$ (gf-eq-law)
#
# (gf-prop-law)=
# ```{admonition} Proposition 1 (a conservation law)
# :class: important
# For $L(u, v) = \tfrac12(uv - 1)^2$, every solution of the gradient flow keeps
# $h = u^2 - v^2$ constant: it stays on the hyperbola $u^2 - v^2 = h_0$ through its start.
# ```
#
# *Why there is such a law.* The model does not change under the rescaling
# $(u, v) \mapsto (e^{s} u, e^{-s} v)$, so the loss is constant along that curve and the
# gradient is perpendicular to it: $\langle g, (u, -v)\rangle = u g_u - v g_v = 0$, which is
# exactly the bracket in {eq}`gf-eq-law`. In the spirit of Noether's theorem, each
# one-parameter symmetry of the loss gives one conserved quantity; chapter 1 counts them
# for modern layers.
#
# ## 2. One step of gradient descent
#
# A GD step moves along $-g$ by a finite amount, and the law is quadratic, so the
# first-order cancellation of {eq}`gf-eq-law` leaves a second-order remainder. Expand one
# step:
#
# \begin{align*}
# h_{k+1} - h_k &= (u - \tau g_u)^2 - (v - \tau g_v)^2 - u^2 + v^2 \\
#  &= \underbrace{-2\tau\,(u g_u - v g_v)}_{=\,0} + \tau^2 \underbrace{(g_u^2 - g_v^2)}_{q(g)} .
# \end{align*}
#
# (gf-prop-step)=
# ```{admonition} Proposition 2 (the one-step identity)
# :class: important
# For every step size $\tau$ and every step $k$ of gradient descent on this model,
#
# $$
# h_{k+1} - h_k = \tau^2\, q(g_k), \qquad q(g) = g_u^2 - g_v^2 .
# $$ (gf-eq-step)
#
# It is exact (no Taylor remainder), because $h$ is quadratic.
# ```
#
# The first-order term is exactly the flow's zero; what is left is $\tau^2 q(g)$. Here
# $q(g) = r^2 (v^2 - u^2) = -r^2 h$, so
#
# $$
# h_{k+1} = (1 - \tau^2 r_k^2)\, h_k :
# $$ (gf-eq-scalar)
#
# as long as $\tau |r_k| < 1$, each step *shrinks* $|h|$, and GD drifts towards balanced
# weights. The figure follows the flow and GD with a large step from the same unbalanced
# start.

# %% tags=["hide-input"]
runtime.show(figures.scalar_paths(), "prologue_scalar_paths")

# %% [markdown]
# Left: the flow (dashed) slides along the hyperbola through its start until it meets the
# curve of minima $uv = 1$. GD with a large step ($\tau = 0.4$) visibly leaves the
# hyperbola and lands on a more balanced minimum. Right: along the flow $h$ is constant;
# under GD it decays by the factor of {eq}`gf-eq-scalar` at each step, a lot for
# $\tau = 0.4$ and barely for $\tau = 0.1$.
#
# ## 3. The diagonal linear network
#
# The same law holds coordinate by coordinate for the **diagonal linear network**
# $f(x) = \langle u \odot v, x\rangle$, $\beta = u \odot v \in \mathbb R^d$, trained on
# $L = \frac{1}{2n}\lVert X\beta - y\rVert^2$. With $r = X^\top (X\beta - y)/n$ the
# gradients are $g_u = v\odot r$ and $g_v = u \odot r$, so the computation of
# {eq}`gf-eq-law` runs in each coordinate: the flow conserves
# $h = u^{\odot 2} - v^{\odot 2}$, one law per coordinate, and GD changes it by
# $\tau^2 q(g)$ with $q(g) = g_u^{\odot 2} - g_v^{\odot 2}$, as in {eq}`gf-eq-step`.
# Chapter 2 builds on exactly this invariant. We take $n = 20$ Gaussian samples,
# $d = 50$ and a 3-sparse teacher (the sizes live in the prologue's `Config`), in float64.
#
# ```{admonition} Why float64
# :class: dropdown
# The smallest drifts measured below are differences of $h$ values of order 1 that are
# several orders of magnitude smaller than $h$ itself; in float32 they would be lost in
# the rounding of $h$.
# ```
#
# ### 3.1 The gradient is the derivative of the loss
#
# Everything below runs on the formula $g = (v\odot r,\ u \odot r)$, so we first hold it
# to the loss it claims to differentiate. Along random unit directions $w$ of
# $\mathbb R^{2d}$, the directional derivative $\langle g, w\rangle$ must match the central
# difference $(L(\theta + \varepsilon w) - L(\theta - \varepsilon w))/2\varepsilon$ up to
# an error of order $\varepsilon^2$; we compare them at five points of one GD run. (Why
# this check is the one that can see a wrong gradient, when {eq}`gf-eq-step` cannot:
# {ref}`How this book checks itself <checking-planted>`.)

# %%
gd_run = experiments.identity_run(cfg)   # one GD run, and its gradient against the loss
checks.grad_vs_loss(ledger, cfg, gd_run)

# %% [markdown]
# ### 3.2 The one-step identity holds exactly
#
# Summing {eq}`gf-eq-step` over the steps gives
#
# $$
# h_k - h_0 = \tau^2 \sum_{j<k} q(g_j) ,
# $$ (gf-eq-sum)
#
# an equality with no approximation in it. On the run above, the two sides may differ only
# by rounding error, far below the drift itself.

# %%
trajectory = gd_run["trajectory"]
print(f"loss {trajectory.loss[0]:.3f} -> {trajectory.loss[-1]:.2e} "
      f"after {cfg.steps_id} steps (tau={cfg.tau_id})")
print(f"max_k |(h_k - h_0) - tau^2 sum q(g_j)| = {trajectory.identity_error:.2e}")
print(f"the drift itself: max_k |h_k - h_0| = "
      f"{np.abs(trajectory.h - trajectory.h[0]).max():.2e}")
checks.identity(ledger, cfg, gd_run)

# %% [markdown]
# ## 4. The drift is second order in $\tau$ and first order in $k$
#
# Equation {eq}`gf-eq-sum` bounds the drift by the size of the gradients along the way:
#
# $$
# \lVert h_k - h_0\rVert \le \tau^2 \sum_{j<k} \lVert q(g_j)\rVert \le C\,\tau^2 k ,
# \qquad C = \max_{j<k} \lVert q(g_j)\rVert .
# $$ (gf-eq-rate)
#
# While $\tau k \ll 1$ the gradients move by a relative $O(\tau k)$, so the sum is
# $k\,q(g_0)\,(1 + O(\tau k))$: at a fixed, small number of steps the drift grows as
# $\tau^2$, and at a fixed $\tau$ it grows as $k$. Once training converges, $q(g_j) \to 0$
# and the drift saturates, so the $k$ exponent is read on an early window, $\tau k \le 0.1$.
# We measure both exponents over several random starts.
#
# ````{admonition} How it is computed: GD with the exact drift accumulator
# :class: dropdown
# All runs of a block of starts advance together as one batched computation (on the GPU
# when there is one), and each block is cached, so an interrupted run resumes where it
# stopped. The step and the accumulator of {eq}`gf-eq-sum`:
#
# ```{literalinclude} ../src/dltheory/gradient_flow/model.py
# :pyobject: gd
# ```
# ````
#
# Both exponents follow from the exact identity, so once it holds they can only miss if
# a fit leaves the window where the gradients are nearly frozen; each is required within
# $0.1$ of its exponent, the size of the $O(\tau k)$ correction at $\tau k \le 0.1$.

# %%
fit_tau, fit_k = checks.drift_fits(drift_table, cfg)
print(f"tau exponent at k={cfg.k_fixed}: {fit_tau.slope:.3f}  "
      f"(95% CI {fit_tau.lo:.3f}..{fit_tau.hi:.3f})")
print(f"k exponent, k <= {cfg.k_early}, tau={cfg.tau_k}: {fit_k.slope:.3f}  "
      f"(95% CI {fit_k.lo:.3f}..{fit_k.hi:.3f})")
checks.drift(ledger, cfg, drift_table)

# %% [markdown]
# The figure at the top of the page shows this sweep. Left: markers are the measured drift
# after $k$ = `K_FIXED` steps (mean and spread over random starts); the dashed line is the
# leading-order prediction $\tau^2 k\,\lVert q(g_0)\rVert$ of {eq}`gf-eq-rate` with the
# gradients frozen at their initial values (slope 2, no fitted constant). Right: the drift
# grows with slope 1 while the gradients are still near their initial values (shaded
# window) and flattens once the loss is small, because $q(g_j) \to 0$: the bound
# $C\tau^2 k$ is tight early and loose late.
#
# ## 5. Gradient descent tracks the flow only to first order
#
# The *law* drifts at second order, but the *iterates* do not: GD is the explicit Euler
# scheme for the flow, and Euler's method is first order.
#
# (gf-thm-euler)=
# ```{admonition} Theorem (Euler's method is first order)
# :class: important
# Let $\nabla L$ be Lipschitz with constant $\Lambda$ on a neighbourhood of the flow's path
# $\theta(t)$, $0 \le t \le T$. Then for $\tau$ small enough, GD from the same start
# satisfies, at every $k$ with $t = \tau k \le T$,
#
# $$
# \lVert \theta_k - \theta(\tau k)\rVert \le C(T)\,\tau ,
# $$ (gf-eq-euler)
#
# with $C(T)$ depending on $\Lambda$, $T$ and the flow's curvature, not on $\tau$.
# ```
#
# ```{admonition} Proof sketch
# :class: dropdown
# One step makes a *local* error of order $\tau^2$: by Taylor's theorem
# $\theta(t + \tau) = \theta(t) - \tau \nabla L(\theta(t)) + O(\tau^2)$, while GD takes
# exactly the first two terms. The errors made so far are carried forward by the step map,
# which is Lipschitz with constant $1 + \tau\Lambda$, so after $k = T/\tau$ steps they add
# up to at most $\sum_{j<k} (1 + \tau\Lambda)^{k-j}\,O(\tau^2)
# \le k\, e^{\Lambda T} O(\tau^2) = O(\tau)$ (the discrete Gronwall inequality). One order
# is lost because the number of steps to reach time $T$ grows as $1/\tau$. For the law, the
# first-order term cancels *exactly* at every step (equation {eq}`gf-eq-step`), so no order is lost
# there in the same way: it drifts as $\tau^2$ per step.
# ```
#
# We compare GD after $k = t/\tau$ steps with a high-accuracy solution of the flow
# (scipy's `DOP853`, relative tolerance $10^{-12}$) at a fixed time $t$; by
# {eq}`gf-eq-euler` the distance should halve with the step size.

# %%
flow_error_table = experiments.flow_error_sweep(cfg)    # a row per tau

# %% tags=["hide-input"]
runtime.show(figures.gd_to_flow(flow_error_table, cfg), "prologue_gd_to_flow")

# %%
checks.flow_order(ledger, cfg, flow_error_table)

# %% [markdown]
# Slope 1, as for any first-order scheme. Two orders therefore coexist: the *law* drifts
# at $O(\tau^2)$ per step, but the *trajectory* is only $O(\tau)$-close to the flow.
# Chapter 1 measures the same $\tau^2 k$ law on attention, SwiGLU and mixture-of-experts
# blocks, where $q$ is a larger quadratic form; chapter 2 uses the invariant $u^2 - v^2$ to
# solve the flow in closed form.
#
# ## Summary
#
# - A rescaling symmetry of the model, $(u, v) \mapsto (e^s u, e^{-s} v)$, makes the
#   gradient perpendicular to $(u, -v)$, so the flow conserves $h = u^2 - v^2$
#   (equation {eq}`gf-eq-law`).
# - One GD step changes the law by exactly $\tau^2 q(g)$ (equation {eq}`gf-eq-step`): the
#   first-order term is the flow's zero. On the scalar model this shrinks $|h|$, so large
#   steps land on more balanced minima (equation {eq}`gf-eq-scalar`).
# - Hence the law drifts as $\tau^2 k$ while the gradients are nearly frozen, and saturates
#   as training converges (equation {eq}`gf-eq-rate`).
# - The iterates themselves are only first-order accurate: $O(\tau)$ from the flow at a
#   fixed time (equation {eq}`gf-eq-euler`). Theory stated for the flow transfers to GD law by law
#   far better than trajectory by trajectory.
#
# What this run found for each of these statements (generated from its checks):

# %% tags=["remove-input"]
ledger.findings(["GF.grad_vs_loss", "GF.identity", "GF.tau_exponent", "GF.k_exponent",
                 "GF.gd_to_flow_order"])

# %% [markdown]
# ## Explore
#
# Step size and start. On the two-parameter model, move the step size $\tau$ and the
# starting weight $u_0$ (with $v_0 = 0.1$). The star is where the flow lands: the point
# where its hyperbola $u^2 - v^2 = h_0$ meets the minima $uv = 1$. The GD path lands
# elsewhere, on a more balanced minimum the larger $\tau$ is. With a large step and an
# unbalanced start it diverges instead (exercise 3 says when). In a live notebook the
# sliders redraw at once; in the book the defaults are shown.

# %% tags=["hide-input"]
plotting.explore(figures.scalar_explorer, name="prologue_explore",
                 tau=(0.02, 0.6, 0.02, 0.4), u0=(0.5, 3.0, 0.1, 2.0))

# %% [markdown]
# ## Exercises
#
# ```{admonition} Exercise 1
# Show that for the scalar model $h_{k+1} = (1 - \tau^2 r_k^2)\, h_k$. What does GD with a
# large step prefer among the minima $uv = 1$?
# ```
#
# ```{admonition} Solution
# :class: dropdown
# $q(g) = g_u^2 - g_v^2 = r^2 v^2 - r^2 u^2 = -r^2 h$, so {eq}`gf-eq-step` gives the
# product formula {eq}`gf-eq-scalar`. While $\tau |r_k| < 1$ every step shrinks $|h|$, so
# GD lands closer to the balanced minimum $u = v = 1$ than the flow from the same start,
# and the more so the larger $\tau$.
# ```
#
# ```{admonition} Exercise 2
# Run GD on the one-dimensional flow $\dot\theta = -\lambda\theta$ ($\lambda > 0$) with
# step $\tau$. Compute $\theta_k$ exactly and show that at a fixed time $t = \tau k$ the
# error $\lvert\theta_k - \theta(t)\rvert$ is $\tfrac12 \lambda^2 t\, e^{-\lambda t}
# \lvert\theta_0\rvert\,\tau + O(\tau^2)$: first order, as {eq}`gf-eq-euler` says.
# ```
#
# ```{admonition} Solution
# :class: dropdown
# $\theta_k = (1 - \lambda\tau)^k \theta_0$ and $\theta(t) = e^{-\lambda t}\theta_0$. With
# $\log(1 - \lambda\tau) = -\lambda\tau - \tfrac12\lambda^2\tau^2 + O(\tau^3)$ and
# $k = t/\tau$, $(1 - \lambda\tau)^{t/\tau} = e^{-\lambda t}\,
# e^{-\lambda^2 t\tau/2 + O(\tau^2)} = e^{-\lambda t}\,(1 - \tfrac12\lambda^2 t\,\tau +
# O(\tau^2))$. The difference from $e^{-\lambda t}\theta_0$ is the stated first-order term.
# The local error per step is $O(\tau^2)$; the $t/\tau$ steps cost one order.
# ```
#
# ```{admonition} Exercise 3
# At a minimum $uv = 1$ of the scalar model, compute the Hessian of $L$ and show that GD can
# settle there only if $\tau < 2/(u^2 + v^2)$. Which minima can a GD run with a large step
# reach, and how does that square with exercise 1?
# ```
#
# ```{admonition} Solution
# :class: dropdown
# $\partial_u^2 L = v^2$, $\partial_v^2 L = u^2$, $\partial_u\partial_v L = r + uv$, and
# $r = 0$ at a minimum, so the Hessian is $w w^\top$ with $w = (v, u)$: eigenvalues $0$
# (along the valley of minima) and $u^2 + v^2$. GD on a quadratic is stable along a
# direction of curvature $\lambda$ iff $\lvert 1 - \tau\lambda\rvert < 1$, i.e.
# $\tau < 2/\lambda$. On $uv = 1$, $u^2 + v^2 \ge 2$ with equality at the balanced minimum,
# so a large step can only settle on minima close to balanced: the drift of exercise 1
# pushes it there, and from a start too unbalanced for the step it diverges instead (the
# Explore panel shows both).
# ```
#
# ```{admonition} Exercise 4
# Replace GD by heavy-ball momentum, $\Delta_k = \theta_{k+1} - \theta_k = -\tau g_k +
# \beta\,\Delta_{k-1}$. Is {eq}`gf-eq-step` still exact? How fast does the law drift?
# ```
#
# ```{admonition} Solution
# :class: dropdown
# Not as it stands. Write $d_k = h_{k+1} - h_k = 2(u_k\Delta u_k - v_k\Delta v_k) +
# q(\Delta_k)$. The gradient term still vanishes, but the momentum term pairs today's
# weights with yesterday's step, and
# $u_k\Delta u_{k-1} - v_k \Delta v_{k-1} = \tfrac12\,(d_{k-1} + q(\Delta_{k-1}))$. So the
# exact one-step law becomes a recursion,
# $d_k = \beta\, d_{k-1} + q(\Delta_k) + \beta\, q(\Delta_{k-1})$ (expand both sides to
# check it). Every term is still quadratic in the steps, so the drift stays
# $O(\tau^2 k)$, with a constant of order $(1+\beta)/(1-\beta)$ larger. Chapter 1
# measures what survives for momentum and Adam.
# ```
#
# ## Claims
#
# Every verdict line above is an entry of this page's ledger, collected with the other
# chapters' on the {doc}`reproduction page <reproduction>`. The prologue has no paper: its
# checks hold the book's own code to calculus (the gradient against its loss, the exact
# identity {eq}`gf-eq-sum` and the two rates that follow from it) and to a theorem (Euler's
# method, {eq}`gf-eq-euler`). They guard everything the later chapters build on, and none of
# them counts as *evidence* about a paper, which is why the summary line of the table below
# counts no evidence claims. What the kinds of claim mean, and how often the checks are
# wrong: [How this book checks itself](checking.md).

# %%
chapter.finish(ledger)
