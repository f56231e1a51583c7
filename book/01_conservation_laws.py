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
# # Conservation laws of SwiGLU, attention, RoPE and mixtures of experts
#
# Gradient flow often conserves functions of the parameters *whatever the data*:
# $h(\theta(t)) = h(\theta(0))$ for every data set and loss. *Conservation Laws for Modern
# Neural Architectures* (Tran, Bui, Lai Ngoc, Nguyen, Dam, Nguyen, ICML 2026,
# [arXiv:2606.17816](https://arxiv.org/abs/2606.17816)) {cite}`tran2026conservation`
# characterises all such laws for the blocks of a modern transformer. The figure counts them.

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

SCALE = runtime.scale()   # smoke | standard | paper | full: seeds, windows, real-data sizes
SEED = 0
D_MODEL = 4               # model width d of every block: 2-8
HIDDEN = 3                # hidden units m (SwiGLU, experts): 1-8
HEADS = 2                 # attention heads H: 1-4
HEAD_DIM = 2              # query/key head dim d_k, even, at most D_MODEL: 2-4
VALUE_DIM = 2             # value/output head dim d_v, at most D_MODEL: 1-4
EXPERTS = 3               # experts E, at most D_MODEL + 1: 2-6
TOPK = 2                  # routed experts k, at most EXPERTS

# %% tags=["hide-input"]
from dltheory import chapter, plotting
from dltheory.conservation import checks, figures
from dltheory.conservation import experiments as ex

cfg, ledger = chapter.start("conservation_laws", SCALE, SEED=SEED, D_MODEL=D_MODEL,
                            HIDDEN=HIDDEN, HEADS=HEADS, HEAD_DIM=HEAD_DIM,
                            VALUE_DIM=VALUE_DIM, EXPERTS=EXPERTS, TOPK=TOPK)
cfg = cfg.replace(device=ledger.device)   # the blocks live on the run's device

# %% tags=["remove-input"]
NAMES = [n for n in checks.COUNT_IDS if cfg.big_factor > 1 or not n.endswith("_big")]
NAMES += ["geglu", "reglu", "bilinear_glu", "chain_residual", "chain_plain",
          *checks.SIGMOIDS, *checks.NORMS]
counts = ex.counts(cfg, NAMES)          # section 4 checks these counts
runtime.show(figures.headline(counts, cfg), "cl_headline")

# %% [markdown]
# **The laws, counted.** For each block (at the dimensions of the parameters cell) the bar is
# the number of independent conservation laws found numerically, $D - \operatorname{rank}$ of
# the Jacobian rows and their Lie brackets, and the tick the number derived from the block's
# symmetries: smooth activations leave none, multiplicative blocks keep several (section 4).
# The last two rows are sigmoid routers: normalised, $\sigma(z)/\sum_e\sigma(z_e)$, and
# centred, $\sigma(z - \bar z)$; only a gate unchanged by a common shift of its logits keeps
# the router sum (section 4.3).
#
# ````{admonition} Takeaway
# :class: tip
# **The paper:** smooth activations (GELU, SiLU) kill every law, but the multiplicative
# structure of modern blocks brings laws back: one per hidden unit in SwiGLU,
# $Q_i^\top Q_i - K_i^\top K_i$ and $V_i^\top V_i - O_i^\top O_i$ per attention head, one
# per $2\times 2$ rotation block under RoPE, and the router sum $\sum_e W_e$ in a mixture of
# experts, "identical" for a normalised sigmoid router (the summary); the laws drift as
# $O(\tau^2 k)$ under GD. Our derivation (section 4.3): the router sum exists only for a gate
# unchanged by a common shift of its logits.
#
# Generated from the claims below, at the scale this page ran; for each
# sigmoid gate two lines: `CL.count.sigmoid.*`, the counted laws against the count derived
# from the gate's symmetries, and `CL.sigmoid_gating.*`, the paper's summary that a sigmoid
# router keeps the softmax router's $Em + d$ laws):
#
# ```{glue:md} cl_findings
# :format: myst
# ```
# ````
#
# The chapter checks every law numerically with `torch.func`, counts the independent laws
# with the Lie-algebra criterion of Marcotte, Gribonval and Peyré
# ([arXiv:2307.00144](https://arxiv.org/abs/2307.00144)) {cite}`marcotte2023conservation`
# for GELU/SiLU and SwiGLU {cite}`shazeer2020glu` feed-forward layers, multi-head attention
# {cite}`vaswani2017attention` with and without positional encodings (sinusoidal, RoPE
# {cite}`su2021roformer`), and mixtures of experts {cite}`shazeer2017outrageously` with dense,
# top-$k$ and sigmoid routing; it tests normalisation layers
# {cite}`ba2016layer,zhang2019root,henry2020query` as controls outside the theorem, and
# measures how GD, SGD, momentum, Adam {cite}`kingma2015adam` and weight decay break the laws,
# on synthetic tasks, a character-level language model and a small vision transformer
# {cite}`dosovitskiy2021image`.
#
# ```{note}
# Only the paper's abstract, the start of its introduction and a third-party summary were
# available. The laws, counts and the symbol mapping below are **reconstructions** that we
# verified numerically; the experiment protocol (model sizes, step sizes, data stand-ins) is
# ours, not the paper's.
# ```

# %% [markdown]
# ## 1. Conservation laws and how to find them
#
# Let $f(x;\theta)$ be a model with parameters $\theta\in\mathbb R^D$, trained by gradient
# flow $\dot\theta = -\nabla L(\theta)$ on $L(\theta) = \sum_n \ell(f(x_n;\theta), y_n)$.
# Since $\nabla L = \sum_n \sum_a \partial_a\ell\,\nabla_\theta f_a(x_n;\theta)$ with
# arbitrary coefficients $\partial_a \ell$, a function $h$ is conserved for **every** data
# set and loss iff
#
# \begin{gather*}
# \nabla h(\theta) \;\perp\; W_\theta \quad\text{for all }\theta, \tag{1.1}\\
# W_\theta := \operatorname{span}\{\nabla_\theta f_a(x;\theta):\
# \text{all inputs } x,\ \text{all outputs } a\}.
# \end{gather*}
#
# According to a third-party summary, the paper solves this system of PDEs in $h$ by
# complexifying the input $x$ and using the identity theorem for meromorphic functions,
# which would be why LayerNorm and other non-meromorphic pieces are outside its scope. **How many** independent laws are there?
# The span $W_\theta$ is not enough: rotation-like symmetries leave directions orthogonal to
# $W_\theta$ that cannot be integrated into laws. Marcotte et al. (2023) showed via Frobenius'
# theorem that the number of independent laws near $\theta$ is
#
# $$
# N(\theta) = D - \dim \operatorname{Lie}(W)(\theta), \tag{1.2}
# $$
#
# where $\operatorname{Lie}(W)$ is the Lie algebra generated by the vector fields
# $u_{x,a}(\theta) = \nabla_\theta f_a(x;\theta)$ under the bracket $[u,v] = \partial v\,u -
# \partial u\, v$. Numerically we sample Jacobian rows at random inputs (the rows of one matrix
# $J$), add brackets $[u,v] = H_v u - H_u v$ computed as Hessian-vector products with
# `torch.func.jvp`, and take SVD ranks in float64. One level of brackets already reaches
# the *certificate* $\operatorname{rank} = D - N_{\text{theory}}$ in every case below.
#
# ````{dropdown} How it is computed: the law counter
# ```{literalinclude} ../src/dltheory/conservation/lie.py
# :pyobject: count_laws
# ```
# ````
#
# **Noether's picture.** If $f(x; e^{sM}\theta) = f(x;\theta)$ for all $x$ and $s$, with a
# *symmetric* generator $M$ (a rescaling, the symmetric part of a $GL$ action), then
# $h = \tfrac12 \theta^\top M\theta$ is conserved. Antisymmetric generators (rotations) give
# no law. Every law of this chapter is of this kind.
#
# ## 2. The laws, with PyTorch names
#
# All blocks are bias-free (`bias=False`, as in LLaMA); weights are stored like
# `nn.Linear.weight` (out × in), the transpose of the paper's row-vector matrices.
#
# | block | model | laws (paper symbols) | PyTorch | # laws |
# |---|---|---|---|---|
# | GELU / SiLU FFN | $\sigma(xA)C$ | constants only | — | $0$ |
# | ReLU FFN | $\mathrm{relu}(xA)C$ | $\lVert A_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$ | `first.weight[i]`, `second.weight[:, i]` | $m$ |
# | linear | $xAC$ | $A^\top A - CC^\top$ | | $m(m+1)/2$ |
# | SwiGLU | $(\mathrm{SiLU}(xB)\odot xA)C$ | $\lVert A_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$ | `up.weight[i]`, `down.weight[:, i]` (not `gate`) | $m$ |
# | MHA | $\sum_i \mathrm{softmax}(XQ_iK_i^\top X^\top/\sqrt{d_k})XV_iO_i^\top$ | $Q_i^\top Q_i - K_i^\top K_i$, $V_i^\top V_i - O_i^\top O_i$ | `q.weight[i*dk:(i+1)*dk]` $=Q_i^\top$, `o.weight[:, i*dv:(i+1)*dv]` $=O_i$ | $H[\frac{d_k(d_k+1)}2 + \frac{d_v(d_v+1)}2]$ |
# | MHA + sinusoidal PE | same on $X + P$ | same | | same |
# | MHA + RoPE | $q_s^\top R_{t-s}k_t$ | $\lVert Q_i^{(j)}\rVert_F^2 - \lVert K_i^{(j)}\rVert_F^2$ per rotation pair $j$, and $V_i^\top V_i - O_i^\top O_i$ | pair $j$: columns $\{2j, 2j{+}1\}$ (RoFormer) or $\{j, j{+}d_k/2\}$ (HF `rotate_half`) | $H[\frac{d_k}2 + \frac{d_v(d_v+1)}2]$ |
# | MoE, softmax router | $\sum_e g_e(x) E_e(x)$, $g = \mathrm{softmax}(xW)$ | SwiGLU laws of each expert, and $\sum_e W_e$ | `router.weight.sum(0)` | $Em + d$ |
#
# Why these? SwiGLU is invariant under $(A_{:,i}, C_{i,:}) \to (\lambda A_{:,i},
# C_{i,:}/\lambda)$; SiLU is not homogeneous, so the gate $B$ carries nothing. Attention
# depends on $Q_i,K_i$ only through $Q_iK_i^\top$, invariant under $(Q_iG, K_iG^{-\top})$;
# RoPE keeps only the $G$ that commute with every rotation $R_n$, i.e. scaled rotations on
# each pair, whose symmetric part is one scalar per pair. A softmax is invariant under a
# common shift of its logits, so adding the same vector to every router row changes nothing,
# and the router sum is conserved (a *linear* law). The counts are our derivations from these
# symmetries, confirmed below; they were not read from the theorem statements.

# %% [markdown]
# ## 3. Orthogonality: every law is perpendicular to every Jacobian row
#
# For each block we draw random parameters and random inputs, compute all Jacobian rows with
# `vmap(jacrev(...))` and the gradients of the claimed laws with `jacrev`, and report the
# largest $|\cos|$ between a row and a law gradient. A true law gives rounding error
# ($\sim 10^{-16}$); the **negative controls** (a wrong law) must give a clearly non-zero
# value. Every block is built from the dimensions in the parameters cell.

# %%
orth = ex.orthogonality(cfg)
checks.orthogonality(ledger, cfg, orth)
runtime.display(orth.assign(what=orth.control.where(orth.control != "", orth.law))
                .groupby(["block", "what"], sort=False).max_cos.max().reset_index())

# %% [markdown]
# A claimed law passes at rounding level and a control must sit far above it (the claims
# `CL.orth.*` and `CL.neg.*` say whether they do in this run). The SwiGLU law lives
# on the **linear** ("up") branch, the RoPE law depends on the pairing convention of the
# implementation (with $d_k = 2$ there is a single pair and the two conventions coincide, so
# this control uses $d_k \ge 4$), and under RoPE only the traces of the $2\times 2$ diagonal
# blocks of $Q_i^\top Q_i - K_i^\top K_i$ survive.
#
# ## 4. Counting the laws
#
# Equation (1.2) in practice: `count_laws` stacks $J$ (Jacobian rows at random inputs) and
# $D$ random brackets and reports $D - \operatorname{rank}$. A rank read off too few samples
# is too small, and the count too large, with nothing in the spectrum to show it: a Switch
# top-1 mixture with six experts read off three Gaussian inputs per parameter can report
# twice its laws with a clean spectral gap, when two experts receive only a handful of
# inputs. The counter therefore accepts a count
# only when it is *determined*: at least $2D$ Jacobian rows; the first half of the rows
# already reaching the same rank; a gap of at least $10^{6}$ at the rank; no parameter left
# without gradient at every input. Otherwise it doubles the inputs and, past a cap, raises
# `UnderdeterminedCount`: it never returns an unchecked count. Saturation cannot see a region
# that no input reaches: two ReLU units with nearly parallel rows differ only on a thin wedge,
# which Gaussian inputs can miss (a law too many at some draws).
# The ReLU block's inputs are therefore placed in every activation sector ($d = 2$) or every
# sign pattern of every pair of units, from the first-layer rows. (Top-1 routing can leave an
# expert that *no* input reaches, when its router row lies inside the convex hull of the
# others; that is why the domain keeps $E \le d + 1$.)

# %%
checks.counts(ledger, cfg, counts)     # counts: computed for the figure at the top
runtime.display(figures.table(checks.count_table(counts, list(checks.COUNT_IDS))))

# %% tags=["hide-input"]
runtime.show(figures.spectra(counts, cfg), "cl_spectra")

# %% [markdown]
# The claims `CL.count.*` compare each count with the theorem's (above smoke also for
# attention with every width doubled, `standard`, or multiplied by four, `paper`). The dashed
# line marks $D - N_{\text{theory}}$, the dotted one the rank threshold. For GELU the
# spectrum has no gap: $W_\theta$ is the whole space and the only laws are constants. For
# attention with RoPE, $W$ alone (blue) stops short of the certificate: the missing
# directions are the antisymmetric (rotation) generators, and one level of brackets
# (orange) fills them. This is why $\dim W_\theta^\perp$ overcounts laws.
#
# ### 4.1 GLU variants and routing pitfalls
#
# GeGLU (GELU gate) keeps the SwiGLU count; ReGLU doubles it (the ReLU gate adds its own
# rescaling), and so does the bilinear GLU ($2m$). Sparse routing keeps the dense laws for
# top-$k$ and for Switch-style top-1 (`CL.count.moe_topk`, `CL.count.moe_switch`), but
# **not** for top-1 routing *renormalised* over the kept expert: then $g \equiv 1$, the router
# receives no gradient, and every router weight is conserved, $Em + Ed$ laws instead of
# $Em + d$ (`CL.count.moe_top1_renorm`). "Sparse = dense laws" fails for that router.
# In the table below a dash in the theory column means that no count is predicted: the three
# GLU variants are outside the paper's statements, and their counts are reported, not checked.

# %%
runtime.display(figures.table(checks.count_table(
    counts, ["geglu", "reglu", "bilinear_glu", "moe_top1_renorm"])))

# %% [markdown]
# ### 4.2 Residual connections: the law set of a stack is the union
#
# Marcotte et al. ([arXiv:2506.06194](https://arxiv.org/abs/2506.06194))
# {cite}`marcotte2025transformative` showed that residual blocks keep exactly the laws of
# the block in isolation. We stack RoPE attention and a SwiGLU, $Y = X + \mathrm{MHA}(X)$,
# $Z = Y + \mathrm{SwiGLU}(Y)$: the count is the sum of the two blocks' counts
# (`CL.residual_union`). Without the residual connections the output projection $O$ and the
# SwiGLU's input maps multiply directly, which adds a $GL(d)$ symmetry and up to
# $d(d+1)/2$ cross-layer laws (`CL.residual_union.plain`). With a single head of value
# dimension 1 the plain chain passes one number per token to the SwiGLU, whose units are then
# functions of one scalar with nearly collinear Jacobian columns: the spectrum has no gap in
# float64, the counter refuses, and that claim is INCONCLUSIVE there (decided from the knobs).
#
# ### 4.3 Sigmoid gating: the law count from the symmetries
#
# The summary states that a *normalised sigmoid* router has the laws of the softmax router,
# $Em + d$. Which laws a mixture $f(x) = \sum_e g_e(z)\,E_e(x)$, $z = Wx$, has follows from
# its continuous symmetries, one generator at a time (Noether's picture, section 1):
#
# 1. **Inside each expert, for any gate.** Expert $e$ is a SwiGLU, unchanged by
#    $(A^{(e)}_{:,i}, C^{(e)}_{i,:}) \to (\lambda A^{(e)}_{:,i}, C^{(e)}_{i,:}/\lambda)$; the
#    gate does not see the expert weights, so every gate keeps these $Em$ laws.
# 2. **The router translation.** Adding the same vector $a \in \mathbb R^d$ to every router
#    row, $W_e \to W_e + a$, shifts every logit by the same amount, $z \to z + (a^\top x)\mathbf 1$.
#    It is a symmetry of $f$ exactly when the gate is **shift-invariant**,
#    $g(z + c\mathbf 1) = g(z)$ for all $z$ and $c$; its $d$ generators then give the $d$ linear
#    laws $\sum_e W_e$. A softmax is shift-invariant, and so is a top-$k$ mask (the order of
#    the logits is kept) and the centred sigmoid $\sigma(z - \bar z)$ (the centred logits do
#    not move). $\sigma(z)$ is not, and neither division by $\sum_e \sigma(z_e)$ (over all
#    experts or over the kept top-$k$) nor a bias $b$ shared by all experts repairs it:
#    $\sigma$ is not an exponential, so the shift does not cancel in the ratio, and a constant
#    $b$ cannot absorb a shift $a^\top x$ that varies with the input.
#
# The derived count is therefore
#
# $$
# N_{\text{MoE}} = Em + d\cdot[\,g \text{ is shift-invariant}\,], \tag{4.1}
# $$
#
# $Em + d$ for softmax and the centred sigmoid, $Em$ for $\sigma(z)$, $\sigma(z)/\sum_e\sigma(z_e)$,
# $\sigma(z)$ renormalised over the top-$k$ and $\sigma(z + b)$. Below, the router translation
# is first applied to each gate function itself (`CL.gate_shift.*`, identities: they check
# the derivation's table against the code of the gates), then the counter of section 4 is
# compared with (4.1) for every sigmoid gate (`CL.count.sigmoid.*`, evidence), and
# separately with the summary's $Em + d$ (`CL.sigmoid_gating.*`, soft: the summary's
# sentence, checked as it is written). The summary's sentence can hold only for a
# shift-invariant gate: for the centred sigmoid it does, for the four other definitions
# it cannot.

# %%
shifts = ex.gate_shifts(cfg)
checks.sigmoid_gating(ledger, cfg, counts, shifts)
runtime.display(figures.table(checks.count_table(counts, list(checks.SIGMOIDS))
                              .assign(summary=ex.predicted_count(cfg, "moe_dense"))))

# %% [markdown]
# ### 4.4 Normalisation layers: outside the theorem, counted anyway
#
# The paper's proof needs meromorphic components; LayerNorm, RMSNorm and QK-norm (with
# $\epsilon = 0$, they contain $1/\sqrt{\cdot}$) are outside it. The counter does not care,
# so we use them as controls and predict their laws from their symmetries. (a) A norm gain
# $\gamma_j$ (and bias $\beta_j$) followed by SwiGLU: scaling $(\gamma_j,\beta_j)$ by $c$ and
# column $j$ of the gate and up maps by $1/c$ leaves both pre-activations unchanged, a
# cross-layer law $\gamma_j^2 + \beta_j^2 - \lVert B_{j,:}\rVert^2 - \lVert A_{j,:}\rVert^2$ per
# coordinate: $m + d$ laws. (b) A linear map $P$ feeding the norm is scale-invariant,
# $\lVert P\rVert_F^2$ is conserved, and LayerNorm's centring adds the $d$ linear laws
# $\mathbf 1^\top P$. (c) QK-norm makes $Q_i$ and $K_i$ *separately* scale-invariant: the
# matrix law $Q_i^\top Q_i - K_i^\top K_i$ is destroyed (control `CL.neg.qknorm_full_qk`)
# and only $\lVert Q_i\rVert_F^2$, $\lVert K_i\rVert_F^2$ survive, $H[2 + d_v(d_v+1)/2]$ laws.
# The SwiGLU and $V/O$ laws survive unchanged in every case. (LayerNorm over two coordinates
# maps every input to $\pm(1,-1)$, a degenerate block; its controls use $d \ge 3$.)

# %%
checks.normalisation(ledger, cfg, counts)
runtime.display(figures.table(checks.count_table(counts, list(checks.NORMS))))

# %% [markdown]
# The symmetries predict that normalisation does not remove the block laws, it adds its own
# (and QK-norm replaces the $Q/K$ law by two scale laws); `CL.norm.*` check the counts. The
# meromorphic restriction limits the paper's *proof* of completeness, not the laws.
#
# ## 5. Discrete time: the drift is exactly second order
#
# All laws here are quadratic forms $h(\theta) = \theta^\top S\theta$ (or linear). For any
# gradient $g\in W_\theta$ we have $\theta^\top S g = \tfrac12\langle\nabla h, g\rangle = 0$, so
# a step $\theta - \tau g$ changes the law by exactly
#
# $$
# h(\theta - \tau g) - h(\theta) = \tau^2\, q(g), \qquad q(g) = g^\top S g, \tag{1.3}
# $$
#
# the prologue's (P.1) for every block at once. Summing, $h_k - h_0 = \tau^2\sum_{j<k} q(g_j)$,
# hence
#
# $$
# |h_k - h_0| \;\le\; \lVert S\rVert\,\tau^2 \sum_{j<k}\lVert g_j\rVert^2 \;\le\; C\,\tau^2 k,
# \tag{1.4}
# $$
#
# with $\lVert S\rVert \le 1$ for every law of the table. Mini-batch SGD obeys the same
# identity. Three blocks (SwiGLU, RoPE attention, top-$k$ MoE, at twice the dimensions of
# the parameters cell) regress a random teacher of the same architecture plus noise; we fit
# $\log\text{err} = \alpha\log\tau + \beta\log k + c$ over $k\in\{10,\dots,80\}$ and four
# step sizes placed in the *early window* $\tau k\lambda_{\max} \le 0.32$, where
# $\lambda_{\max}$ is the sharpness at initialisation.
#
# **What is evidence here, and what is not.** In the early window the gradients barely
# change, so $\alpha = 2$, $\beta = 1$ follow from (1.3) by construction, and so does the
# bound (1.4). These checks are recorded as *identities*: they guard the code (a wrong law or
# a wrong update would break them), but cannot test the paper. The evidence comes in
# section 6: what happens once the gradients change.
#
# One thing (1.3) cannot see is a wrong gradient. Were the optimisers to step with twice the
# derivative of the loss, every law, every $q(g)$ and the identity would still agree with
# each other. So we first check the gradient itself against central differences of the loss
# along random directions of the parameter space (`CL.grad_vs_loss`, an identity: calculus on
# the book's own code; the top-$k$ mixture is left out because its routing is piecewise).

# %%
grads = ex.gradient_checks(cfg)
checks.gradient(ledger, cfg, grads)
win, ident, adam_win = ex.early_windows(cfg), ex.identity_runs(cfg), ex.adam_windows(cfg)
fits = checks.discrete(ledger, cfg, win, ident, adam_win, ex.sgd_walks(cfg))
runtime.display(fits.groupby(["block", "opt"], sort=False)[["alpha", "beta", "lam"]].mean()
                .reset_index().round(3))

# %% tags=["hide-input"]
if not checks.cut(win):                # a first round cut part-way: no figure of it
    runtime.show(figures.gd_collapse(win, fits, cfg), "cl_gd_collapse")

# %% [markdown]
# Dividing the drift by $\tau^2$ should collapse the four step sizes onto one line of slope
# close to 1 in $k$ (dashed): the drift is $\tau^2 k$ times a constant, as (1.3)–(1.4) say.
# Where the gradients start to change, the largest step bends away from it first.
#
# ## 6. Other optimisers, and the drift at matched progress
#
# * **SGD**: (1.3) holds step by step, so $\alpha\approx 2$. The $k$ exponent is not fixed:
#   in the early window the parameters barely move, so $h_k - h_0 \approx \tau^2\sum_{j<k}
#   q(g_j)$ with $g_j$ independent minibatch means of the per-sample gradients at
#   $\theta_0$, a random walk whose drift $\mathbb E\,q(g_j) = q(\bar g) +
#   \operatorname{tr}(S\operatorname{Cov} g_j)$ gives $k^1$ and whose noise gives $k^{1/2}$.
#   We simulate that walk from the per-sample gradients (1,000 realisations of the minibatch
#   sequence per block) and check that the measured exponent lies in the range of its
#   realisations (`CL.sgd.k_exponent`, a derivation: the book's model of its own SGD).
# * **Heavy-ball momentum** ($b_{k+1} = \mu b_k + g_k$, $\mu = 0.9$) mixes gradients taken at
#   earlier points: still $O(\tau^2)$ per step, with a much larger constant.
# * **Adam**: the update $m/(\sqrt v + \epsilon)$ is not in $W_\theta$, so
#   $h(\theta - \tau u) - h(\theta) = -2\tau\theta^\top S u + O(\tau^2)$: first order,
#   $\alpha = 1$ (`CL.adam.tau_exponent`, evidence, fitted on a window sixteen times shorter,
#   $\tau k\lambda_{\max} \le 0.02$, where the $O(\tau)$ corrections stay below 1%). The
#   exponent is fitted to each law's own drift and the median taken over the laws of each
#   block, then over the blocks: the law that drifts most can be one whose first-order
#   coefficient $\theta^\top S u$ changes along the window (Adam's sign-like direction
#   $m/\sqrt v$ flips on coordinates whose gradient is small), and that one law would bend
#   the exponent of the largest drift. Even
#   the linear router sum moves,
#   except with two experts: the two router rows then have opposite gradients, Adam's
#   element-wise updates are opposite too, and the sum is kept exactly (an identity).
# * **Router sum**: the shift symmetry makes the router rows' gradients sum to zero, so GD,
#   SGD and heavy ball keep $\sum_e W_e$ to rounding error (`CL.router_sum`, an identity: it
#   restates the orthogonality of section 3).
# * **Weight decay**: exactly $h_{k+1} = (1-\tau\lambda)^2 h_k + \tau^2 q(g_k)$ (an identity),
#   so the laws decay like $(1-\tau\lambda)^{2k}$ (`CL.wd.decay`, a derivation: the book's
#   recurrence against its own form without the $\tau^2 q$ terms). We check it at $\tau\lambda = 0.05$ after
#   $k = 20$ steps, where the factor is $0.129$ and its small-$\tau\lambda$ form
#   $e^{-2\tau\lambda k}$ is $5\%$ higher: the check sees the difference.
#
# **Matched progress.** Comparing optimisers at equal $\tau$ and $k$ is unfair: they learn at
# different speeds. In the flow limit $h_k - h_0 \approx \tau F(\tau k)$ with
# $F(t) = \int_0^t q(g(s))\,ds$, so *at a fixed amount of learning* (we stop when the loss has
# halved) the GD drift is proportional to $\tau$: slope 1 against the learning rate. Adam
# drifts at first order per step, $\sim \eta k$, and reaches the same loss after
# $k^* \propto 1/\eta$ steps: slope 0. Neither follows from (1.3) alone; the first needs the
# iterates to track the flow, the second Adam's sign-like steps. We read the drift where the
# loss crosses half its start (interpolated between the two steps around it) and average
# the slopes over two blocks and eight seeds.
#
# The GD steps, $\tau\lambda \in [0.05, 0.4]$, are placed by the sharpness *along the flow
# path*: the larger of $\lambda_{\max}$ at the start and where a probe run with the smallest
# step crosses the target. Small blocks can sharpen many times over before the loss halves
# (27-fold at one seed with $d = 2$, $m = 1$), and steps placed by the initial sharpness then
# run at the edge of stability, not along the flow. A (block, seed) whose grid would need more
# than 4,000 steps is left out, decided by the probe before any drift is measured; with fewer
# than three quarters of the pairs left, both claims are INCONCLUSIVE.

# %%
mp = ex.matched_progress(cfg)
slopes = checks.matched(ledger, cfg, mp)
runtime.display(slopes.groupby(["block", "opt"], sort=False).slope.mean().reset_index().round(3))

# %% tags=["hide-input"]
if not checks.cut(mp):
    runtime.show(figures.matched(mp, cfg), "cl_matched")

# %% tags=["hide-input"]
if not checks.cut(win):
    runtime.show(figures.optimisers(win, fits, ident, cfg), "cl_optimisers")

# %% [markdown]
# The prediction at matched loss: halving GD's step halves its drift (slope 1), while Adam's
# drift does not depend on its learning rate (slope 0), so a smaller Adam step would not buy
# better conservation (`CL.matched.*`). On the fixed grid (second figure, left) GD and SGD
# should drift like $\tau^2$, Adam like $\tau$, heavy ball at second order with a larger
# constant. Right: under weight decay the laws follow $(1-\tau\lambda)^{2k}$ (dashed),
# towards *balanced* weights.
#
# ## 7. A character-level language model on real text
#
# The paper validates the laws on WikiText-103 and Penn Treebank. Offline we use the
# standard library's help text (`pydoc_data`, about 0.45 M characters; at the `paper` scale
# WikiText-103 word tokens when the file is on disk) and a model *embedding → RoPE attention
# (causal) → top-2 SwiGLU mixture of experts → unembedding*, with residual connections (four
# layers at the `paper` scale), trained on cross-entropy with full-batch GD. Inside the
# network the block laws are unchanged. Beyond the early window the gradients decay, $\beta$
# drops below 1, and the flow argument of section 6 predicts $\alpha - \beta = 1$ on any
# window while GD tracks the flow: `CL.lm.late_window` checks it on the widest window whose
# largest step has $\tau\lambda_{\max} \le 0.1$ ($\tau k\lambda_{\max} \le 3.2$; on the widest
# one, 32, the largest step is $\tau\lambda_{\max} = 0.8$ and GD has left the flow).
# The early-window exponent and the router sum of the language model are identities, as in
# section 5.
#
# ```{note}
# Sizes and costs. At `smoke` the model has 23 k parameters. `paper` (d = 128, four layers,
# 1.9 M parameters, sequences of 64 tokens in batches of 256) is sized for about 8 minutes
# on one H100 (an estimate from its FLOP count; no GPU was at hand); on a CPU its sweeps
# take many hours (the paper step of CI runs them under a budget). `full` takes
# our reconstruction of the paper's runs, whose sizes it does not state (d = 256, m = 512,
# 8 experts, 256-token sequences, 13.6 M parameters, 2,000-step runs): an estimated 1-2
# hours on one H100, in float64. Under `DLTHEORY_BUDGET` a sweep whose first round would
# not fit is not started, and its claims say so.
# ```

# %%
lm_step = ex.lm_step_seconds(cfg)      # cost estimate: under a budget, run only what fits
lm, lm_runs = ex.lm_windows(cfg, lm_step), ex.lm_long(cfg, lm_step)
vit = ex.vit_windows(cfg, ex.vit_step_seconds(cfg))
real = checks.real_data(ledger, cfg, lm, vit, ex.skip_reasons)
for why in ex.skip_reasons.values():
    print(why)
if real["lm"] is not None:
    runtime.display(real["lm"].groupby("window")[["alpha", "beta"]].mean()
                    .assign(gap=lambda t: t.alpha - t.beta).reset_index().round(3))

# %% tags=["hide-input"]
if lm is not None and lm_runs is not None:
    runtime.show(figures.lm(real["lm"], lm_runs, cfg, lm.data.iloc[0]), "cl_lm")

# %% [markdown]
# Left: in the early window (grey) the identity gives $\alpha\approx2$, $\beta\approx1$; as
# the window grows, $\beta$ drops and the flow argument says $\alpha$ follows $1+\beta$
# (triangles against the dashed line, `CL.lm.late_window`). Right: along longer runs GD
# (solid) and SGD (batch $B/4$, dotted) keep the router sum at rounding level by the shift
# symmetry while the quadratic families drift slowly; Adam (dashed), with a learning rate a
# hundred times smaller, moves every family, the router sum included.
#
# ## 8. A small vision transformer on digits
#
# The paper also uses CIFAR-10 and ImageNet. Offline we use scikit-learn's 8×8 digits in 16
# patches of $2\times2$ pixels (at the `paper` scale CIFAR-10 in grey levels when it is on
# disk), a one-block ViT (patch embedding, attention with sinusoidal PE, SwiGLU, residuals,
# mean pooling) and the same two windows as the language model (`CL.vit.late_window`, soft).

# %% tags=["hide-input"]
if vit is not None:
    runtime.display(real["vit"].groupby("window")[["alpha", "beta"]].mean()
                    .assign(gap=lambda t: t.alpha - t.beta).reset_index().round(3))
if lm is not None and vit is not None:
    runtime.show(figures.real_data_tau(lm, vit, cfg), "cl_real_data_tau")

# %% [markdown]
# Circles: the early window, where the identity makes the curves for different $k$ coincide
# (drift linear in $k$) with slope 2 in $\tau$. Squares: a wider window, where the curves
# fan out once the gradients shrink ($\beta < 1$) and the flow argument has $\alpha$ follow
# $1 + \beta$. Each step still obeys (1.3); only the *summed* $q(g_j)$ stops growing
# linearly.

# %% [markdown]
# ## 9. Limitations
#
# * **Data independence.** A law here must hold for *every* data set. A specific data set can
#   conserve more (for instance inputs confined to a subspace).
# * **Generic parameters.** Counts are for generic $\theta$: an unreachable expert, dead ReLU
#   units or a rank-deficient head map add laws; the counter refuses such points.
# * **Discrete time.** Laws are exact only for the flow. GD and SGD break them at second
#   order, momentum with a larger constant, Adam at first order; weight decay drives them to 0.
# * **Sigmoid routers.** By (4.1) only a shift-invariant gate has the softmax laws: of the
#   five definitions, the centred sigmoid; the paper's own definition was not available.
# * **Our protocol is not the paper's.** Model sizes, step sizes and data are stand-ins; no
#   Penn Treebank or ImageNet stand-in beyond the text and digits above.

# %% [markdown]
# ## Explore
#
# Law counts against the block dimensions. In Jupyter or Colab the sliders redraw the
# predicted counts (theory only, instant); the static book shows the defaults.

# %% tags=["hide-input"]
plotting.explore(figures.explore_counts, name="cl_explore", D_MODEL=(2, 8, 1, D_MODEL),
                 HIDDEN=(1, 8, 1, HIDDEN), HEADS=(1, 4, 1, HEADS),
                 HEAD_DIM=(2, 4, 2, HEAD_DIM), VALUE_DIM=(1, 4, 1, VALUE_DIM),
                 EXPERTS=(2, 6, 1, EXPERTS))

# %% [markdown]
# ## Exercises
#
# 1. Show that with a router bias $b$ the sum $\sum_e b_e$ is a further law, and check it with
#    `count_laws`.
# 2. Why does ReGLU have $2m$ laws? Find the second rescaling symmetry.
#
# ```{dropdown} Solution to 1
# A bias $b \in \mathbb R^E$ enters the logits as $xW + b$, and a softmax is unchanged when
# the same number is added to every logit, so $b \mapsto b + c\mathbf 1$ is a symmetry. Its
# generator is a constant vector, $\mathbf 1$: the gradient with respect to $b$ is a sum over
# inputs of softmax Jacobians applied to vectors, and each Jacobian maps onto vectors whose
# entries sum to zero (it is symmetric and annihilates $\mathbf 1$). So $\langle \mathbf 1,
# \nabla_b L\rangle = 0$ and $\sum_e b_e$ is conserved, one law more: $Em + d + 1$. In
# code: add a bias to the router of `MoE` and compare `count_laws(...).laws` with and
# without it.
# ```
#
# ```{dropdown} Solution to 2
# ReLU is positively homogeneous, so $(B_{:,i}, C_{i,:}) \to (\lambda B_{:,i}, C_{i,:}/\lambda)$
# for $\lambda>0$ is a second symmetry besides the one on $(A_{:,i}, C_{i,:})$; each gives a
# law, $\lVert A_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$ and
# $\lVert B_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$.
# ```
#
# ## Claims
#
# Every check above is an entry of the chapter's ledger; identities are shown but not counted
# as evidence. The table is also collected on the {doc}`reproduction page <reproduction>`.

# %%
FINDINGS = ["CL.count.swiglu", "CL.count.mha_rope", "CL.count.moe_dense",
            *(f"CL.count.sigmoid.{g}" for g in checks.SIGMOIDS),   # our derived counts
            *(f"CL.sigmoid_gating.{g}" for g in checks.SIGMOIDS),  # the paper's summary
            "CL.adam.tau_exponent", "CL.matched.gd_slope", "CL.lm.late_window"]
ledger.glue("cl_findings", FINDINGS)
ledger.findings(FINDINGS)

# %%
chapter.finish(ledger)
