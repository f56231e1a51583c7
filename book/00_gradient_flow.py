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
# Much of deep-learning theory is stated for **gradient flow**, the continuous-time limit
# $\dot\theta = -\nabla L(\theta)$, while networks are trained with **gradient descent**,
# $\theta_{k+1} = \theta_k - \tau\,\nabla L(\theta_k)$. This prologue measures the gap on
# the smallest models where it can be computed exactly, and introduces the notation that
# chapters 1 and 2 reuse: a *conservation law* $h(\theta)$, its discrete-time drift, and the
# two rates $\tau^2 k$ (drift of a law) and $\tau$ (distance from the flow at fixed time
# $t=\tau k$), in the sense of the conservation laws of gradient flows of Marcotte,
# Gribonval and Peyré ([arXiv:2307.00144](https://arxiv.org/abs/2307.00144))
# {cite}`marcotte2023conservation`. Symbols are collected on the
# [notation page](notation.md).
#
# ```{admonition} Takeaway
# :class: tip
# Gradient flow conserves $h = u^2 - v^2$ exactly. Gradient descent breaks it only at second
# order: each step changes $h$ by exactly $\tau^2 q(g)$, so the drift after $k$ steps is
# $O(\tau^2 k)$, while the iterates themselves stay $O(\tau)$ away from the flow at a fixed
# time $t = \tau k$. There is no paper here, so nothing below is evidence in the book's
# sense: each check holds the book's own code to calculus (the gradient against the loss it
# descends, the exact identity and the drift rates that follow from it) or to a theorem
# (Euler's method is first order), the guards every later chapter stands on.
# ```

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
from dltheory import gradient_flow as gf

cfg, ledger = chapter.start("gradient_flow", SCALE, SEED=SEED, K_FIXED=K_FIXED, TAU_K=TAU_K)

# %% tags=["remove-input"]
drift = gf.drift_sweep(cfg)    # one row per (start, sweep, tau, k); reused in section 2.3
runtime.show(gf.figures.drift(drift, cfg), "prologue_drift")

# %% [markdown]
# *The headline result.* On the diagonal linear network of §2, gradient descent breaks the
# flow's conservation law only at second order: after $k$ steps of size $\tau$ the law has drifted by about $\tau^2 k$ (dashed: the
# prediction with the gradients frozen at their initial values, no fitted constant). Left:
# slope 2 in $\tau$ at fixed $k$; right: slope 1 in $k$ while the gradients barely move
# (shaded), then saturation as the loss goes to zero (§2.3).

# %% [markdown]
# ## 1. The two-parameter model
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
# \begin{align*}
# h_{k+1} - h_k &= (u - \tau g_u)^2 - (v - \tau g_v)^2 - u^2 + v^2 \\
#  &= \underbrace{-2\tau\,(u g_u - v g_v)}_{=\,0} + \tau^2 \underbrace{(g_u^2 - g_v^2)}_{q(g)}
#  \tag{P.1}
# \end{align*}
#
# The first-order term is exactly the flow's zero; what is left is $\tau^2 q(g)$. Here
# $q(g) = r^2 (v^2 - u^2) = -r^2 h$, so GD *shrinks* $|h|$ by the factor $1 - \tau^2 r_k^2$
# at each step: it drifts towards balanced weights.
#
# The figure follows the flow and GD with a large step from the same unbalanced start.

# %% tags=["hide-input"]
runtime.show(gf.figures.scalar_paths(), "prologue_scalar_paths")

# %% [markdown]
# Left: the flow (dashed) slides along the hyperbola through its start until it meets the
# curve of minima $uv = 1$. GD with a large step ($\tau = 0.4$) visibly leaves the hyperbola and
# lands on a more balanced minimum. Right: along the flow $h$ is constant; under GD it decays
# by $\tau^2 r_k^2 h_k$ per step, a lot for $\tau = 0.4$ and barely for $\tau = 0.1$.
#
# ## 2. The diagonal linear network
#
# The same law holds coordinate-wise for the **diagonal linear network**
# $f(x) = \langle u \odot v, x\rangle$, $\beta = u \odot v \in \mathbb R^d$, trained on
# $L = \frac{1}{2n}\lVert X\beta - y\rVert^2$: with $r = X^\top (X\beta - y)/n$ the
# gradients are $g_u = v\odot r$, $g_v = u \odot r$, and $h = u^{\odot 2} - v^{\odot 2}$ is
# conserved by the flow, one law per coordinate. Chapter 2 builds on exactly this invariant.
# We use $n = 20$ Gaussian samples, $d = 50$ and a 3-sparse teacher (all sizes, seed
# counts and tolerances are in `gf.Config`; the float64 dtype is needed because the
# smallest drifts measured below are differences of $h$ values of order 1, several orders
# of magnitude smaller than $h$ itself).
#
# ### 2.1 The gradient is the derivative of the loss
#
# Everything below runs on the formula $g = (v\odot r,\ u \odot r)$. Were it off by a
# factor, say twice the true gradient, GD and the flow would both still conserve $h$ and
# (P.1) would still hold exactly, because they all use the same $g$; only a comparison with
# the loss itself can tell. Along random unit directions $w$ of $\mathbb R^{2d}$ we set the
# directional derivative $\langle g, w\rangle$ against the central difference
# $(L(\theta + \varepsilon w) - L(\theta - \varepsilon w))/2\varepsilon$ at five points of a
# GD run; their ratio must be 1 up to finite-difference error, of order $\varepsilon^2$
# for a central difference (the ledger below prints the measured deviation).

# %%
run = gf.identity_run(cfg)    # one GD run and the gradient against finite differences
tr = run["trajectory"]
gf.checks.grad_vs_loss(ledger, cfg, run)

# %% [markdown]
# ### 2.2 The one-step identity is exact
#
# Summing (P.1) over steps, $h_k - h_0 = \tau^2 \sum_{j<k} q(g_j)$ holds *exactly*, so
# the difference of the two sides must be rounding error only. This is algebra, not a
# prediction that could fail on data, so the ledger records it as an *identity*: it
# guards the code (a wrong quadratic form or update breaks it) but is not counted as
# evidence.

# %%
print(f"loss {tr.loss[0]:.3f} -> {tr.loss[-1]:.2e} after {cfg.steps_id} steps (tau={cfg.tau_id})")
print(f"max_k |(h_k - h_0) - tau^2 sum q(g_j)| = {tr.identity_error:.2e}")
print(f"for scale: max |h_k - h_0| = {np.abs(tr.h - tr.h[0]).max():.2e}")
gf.checks.identity(ledger, cfg, run)

# %% [markdown]
# ### 2.3 The drift is second order in $\tau$ and first order in $k$
#
# Eq. (P.1) bounds the drift: $\lVert h_k - h_0\rVert \le \tau^2 \sum_{j<k} \lVert q(g_j)\rVert
# \le C\,\tau^2 k$. We measure the exponents separately. At a fixed, small number of steps
# $k$ (so that $\tau k \ll 1$ and the gradients barely change), the drift should grow as
# $\tau^2$. At a fixed $\tau$ it should grow as $k$ while the gradients are still close to
# their initial values, and then saturate as training converges and $q(g_j) \to 0$; hence
# the $k$ exponent is fitted on an early window. We repeat over several random starts; all
# runs of a block of starts advance together as one batched computation (on the GPU when
# there is one), and each block is cached, so an interrupted run resumes where it stopped.
#
# ````{dropdown} How it is computed: GD with the exact drift accumulator
# ```{literalinclude} ../src/dltheory/gradient_flow/model.py
# :pyobject: gd
# ```
# ````
#
# Both exponents follow from the exact identity (P.1): the drift *is* $\tau^2 \sum_{j<k}
# q(g_j)$, and while $\tau k \ll 1$ the gradients move by a relative $O(\tau k)$, so the
# sum is $k\,q(g_0)\,(1 + O(\tau k))$. Once the identity passes they can only miss if the
# fit leaves that window, so the ledger lists them as identities (as chapter 1 does),
# each within $0.1$ of its exponent: the correction's size at $\tau k \le 0.1$.

# %%
fit_tau, fit_k = gf.checks.drift_fits(drift, cfg)
print(f"tau exponent at k={cfg.k_fixed}: {fit_tau.slope:.3f}  (95% CI {fit_tau.lo:.3f}..{fit_tau.hi:.3f})")
print(f"k exponent, k <= {cfg.k_early}, tau={cfg.tau_k}: {fit_k.slope:.3f}  "
      f"(95% CI {fit_k.lo:.3f}..{fit_k.hi:.3f})")

# %%
gf.checks.drift(ledger, cfg, drift)

# %% [markdown]
# The figure at the top of the page shows this sweep. Left: markers are the measured drift
# after $k$ = `K_FIXED` steps (mean and spread over random starts); the dashed line is the
# leading-order prediction $\tau^2 k\,\lVert q(g_0)\rVert$ from (P.1) with the gradients
# frozen at their initial values (slope 2, no fitted constant). Right: the drift grows with
# slope 1 while the gradients are still near their initial values (shaded window) and
# flattens once the loss is small, because $q(g_j) \to 0$: the bound $C\tau^2 k$ is tight
# early and loose late.
#
# ### 2.4 GD tracks the flow with error $O(\tau)$ at fixed time
#
# The conservation-law drift is $O(\tau^2)$, but the iterates themselves are only
# first-order accurate: GD is the explicit Euler scheme for the flow, whose global error at
# a fixed time $t = \tau k$ is $O(\tau)$. We compare GD after $k = t/\tau$ steps with a
# high-accuracy ODE solution (scipy's `DOP853`, relative tolerance $10^{-12}$).

# %%
flow_err = gf.flow_error_sweep(cfg)    # one row per tau

# %% tags=["hide-input"]
runtime.show(gf.figures.gd_to_flow(flow_err, cfg), "prologue_gd_to_flow")

# %%
gf.checks.flow_order(ledger, cfg, flow_err)

# %% [markdown]
# The error halves with the step size: slope 1, as for any first-order scheme. Two orders
# therefore coexist: the *law* drifts at $O(\tau^2)$ per unit of $k$, but the *trajectory*
# is only $O(\tau)$-close to the flow. Chapter 1 measures the same $\tau^2 k$ law on
# attention, SwiGLU and mixture-of-experts blocks, where $q$ is a larger quadratic form;
# chapter 2 uses the invariant $u^2 - v^2$ to solve the flow in closed form.
#
# ## Explore
#
# Step size and start. On the two-parameter model, move the step size $\tau$ and the starting weight $u_0$
# (with $v_0 = 0.1$). The star is where the flow lands: the point where its hyperbola
# $u^2 - v^2 = h_0$ meets the minima $uv = 1$. The GD path lands elsewhere, on a more
# balanced minimum the larger $\tau$ is. At a minimum the curvature is $u^2 + v^2$, and GD
# can settle there only if $\tau < 2/(u^2+v^2)$: with a large step and an unbalanced start
# it diverges instead. In a live notebook the sliders redraw at once; in the book the
# defaults are shown.

# %% tags=["hide-input"]
plotting.explore(gf.scalar_explorer, name="prologue_explore",
                 tau=(0.02, 0.6, 0.02, 0.4), u0=(0.5, 3.0, 0.1, 2.0))

# %% [markdown]
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
# ```{dropdown} Solution to 2
# Not exactly. Heavy ball takes $\Delta_k = \theta_{k+1} - \theta_k = -\tau g_k +
# \beta\,\Delta_{k-1}$. Expanding $h$ as in (P.1), the gradient term still vanishes, but
# the momentum term pairs today's weights with yesterday's step, and
# $u_k\Delta u_{k-1} - v_k \Delta v_{k-1} = \tfrac12\,(d_{k-1} + q(\Delta_{k-1}))$ with
# $d_k = h_{k+1} - h_k$. So the exact one-step law becomes a recursion,
# $d_k = \beta\, d_{k-1} + q(\Delta_k) + \beta\, q(\Delta_{k-1})$ (checked numerically
# to $10^{-15}$ on the scalar model with $\beta = 0.9$). Every term is still quadratic in
# the steps, so the drift stays $O(\tau^2 k)$, with a constant of order
# $(1+\beta)/(1-\beta)$ larger. Chapter 1 measures what survives for momentum and Adam.
# ```
#
# ## Claims
#
# Each check above is an entry of the chapter's ledger; the table is also collected on the
# {doc}`reproduction page <reproduction>`. By the book's kinds rule (stated on the
# calibration page) none of them is evidence: evidence is what could fail on correct code if
# a paper were wrong about the networks and data a chapter runs, and the prologue checks the
# book's code against calculus and a theorem. The gradient against the loss and the exact
# identity with its two drift rates are *identities*; GD's first order towards the flow is
# a *derivation* (Euler's method is first order). Both still fail on plausible errors (a
# gradient twice its loss's, or one without the $1/n$, is off by a factor; a flow
# integrated with the wrong speed gives order 0); their tolerances come from the spread
# over seeds that `gf.Config` states. The *resolution* column is the smallest relative
# error in a prediction that the check is sure to catch. How often each check fails at
# settings across the declared
# domain, and which planted errors it catches, is measured on the calibration page.

# %%
chapter.finish(ledger)
