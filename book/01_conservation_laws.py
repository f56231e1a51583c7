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
# characterises all such laws for the blocks of a modern transformer. *Which functions of
# the weights does each block conserve, how many are there, how do we know the list is
# complete, and how fast do real optimisers break them?*
#
# ## Overview
#
# **Before you start.** The [prologue](00_gradient_flow.md): a conservation law from a
# rescaling symmetry, the one-step identity of gradient descent and its $\tau^2 k$ drift.
# Linear algebra (rank, singular values), Jacobians, and the blocks of a transformer
# (attention, SwiGLU feed-forward layers, mixtures of experts). The symbols are collected on
# the [notation page](notation.md).
#
# **After this chapter you can**
#
# - state the criterion that makes a function a conservation law for *every* data set and
#   loss (its gradient is orthogonal to every Jacobian row), and check a claimed law with it;
# - count the independent laws of any PyTorch module with the Lie-algebra criterion of
#   Marcotte, Gribonval and Peyré, and read the count off a singular-value spectrum;
# - derive the laws of SwiGLU, multi-head attention, RoPE and mixtures of experts from their
#   symmetries, and show that a list of laws is complete;
# - predict how GD, SGD, momentum, Adam and weight decay break the laws, and measure it.
#
# ```{note}
# Only the paper's abstract, the start of its introduction and a third-party summary were
# available. The laws, counts and the symbol mapping below are **reconstructions** that we
# verified numerically; the proof sketch follows the summary's description of the method;
# the experiment protocol (model sizes, step sizes, data stand-ins) is ours, not the paper's.
# ```
#
# Each result is checked on this page as it runs; how those verdicts are reached is
# explained once, in [How this book checks itself](checking.md).

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

SCALE = runtime.scale()   # smoke | standard | paper | full
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
from dltheory.conservation import checks, experiments, figures

cfg, ledger = chapter.start("conservation_laws", SCALE, SEED=SEED, D_MODEL=D_MODEL,
                            HIDDEN=HIDDEN, HEADS=HEADS, HEAD_DIM=HEAD_DIM,
                            VALUE_DIM=VALUE_DIM, EXPERTS=EXPERTS, TOPK=TOPK)
cfg = cfg.replace(device=ledger.device)   # the blocks live on the run's device

# %% tags=["remove-input"]
NAMES = [n for n in checks.COUNT_IDS if cfg.big_factor > 1 or not n.endswith("_big")]
NAMES += ["geglu", "reglu", "bilinear_glu", "chain_residual", "chain_plain",
          *checks.SIGMOIDS, *checks.NORMS]
counts = experiments.counts(cfg, NAMES)   # section 4 checks these counts
runtime.show(figures.headline(counts, cfg), "cl_headline")

# %% [markdown]
# **The laws, counted.** For each block (at the dimensions of the parameters cell) the bar is
# the number of independent conservation laws found numerically, $D - \dim\operatorname{Lie}(W)$
# from the Jacobian rows and their Lie brackets (section 1), and the tick the number derived
# from the block's symmetries: smooth activations leave none, multiplicative blocks keep
# several (section 4). The last two rows are sigmoid routers: normalised,
# $\sigma(z)/\sum_e\sigma(z_e)$, and centred, $\sigma(z - \bar z)$; only a gate unchanged by
# a common shift of its logits keeps the router sum (section 4.3).
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

# %% [markdown]
# ## 1. Conservation laws and how to find them
#
# Let $f(x;\theta)$ be a model with parameters $\theta\in\mathbb R^D$, trained by gradient
# flow $\dot\theta = -\nabla L(\theta)$ on $L(\theta) = \sum_n \ell(f(x_n;\theta), y_n)$.
# Along the flow, $\frac{d}{dt}h(\theta) = -\langle\nabla h, \nabla L\rangle$, and
# $\nabla L = \sum_n \sum_a \partial_a\ell\,\nabla_\theta f_a(x_n;\theta)$ with coefficients
# $\partial_a \ell$ that the data and the loss can make anything.
#
# (cl-thm-orth)=
# ```{admonition} Theorem 1 (laws for every data set and loss)
# :class: important
# A differentiable $h$ is conserved by the gradient flow of every data set and every loss
# if and only if, for all $\theta$,
#
# $$
# \nabla h(\theta) \;\perp\; W_\theta, \qquad W_\theta := \operatorname{span}\{\nabla_\theta
# f_a(x;\theta):\ \text{all inputs } x,\ \text{all outputs } a\}.
# $$ (cl-eq-perp)
# ```
#
# *Why.* If {eq}`cl-eq-perp` holds, every term of $\langle\nabla h,\nabla L\rangle$ vanishes.
# Conversely, one example $(x, y)$ and a loss whose derivative at $\theta$ picks the output
# $a$ make $\nabla L$ a multiple of the single row $\nabla_\theta f_a(x;\theta)$, which $\nabla h$
# must then be orthogonal to. Section 3 tests {eq}`cl-eq-perp` for every law of the chapter.
#
# ### 1.1 How many laws: the Lie algebra of the Jacobian rows
#
# **How many** independent laws are there? The span $W_\theta$ is not enough: the flows of
# different data sets do not commute, and going along one field, then another, then back,
# leaves the parameters displaced along their *bracket*. The data sets together sweep out a
# leaf whose tangent space is the Lie algebra the fields generate, and a law must be constant
# on that whole leaf.
#
# (cl-thm-count)=
# ```{admonition} Theorem 2 (the number of laws; Marcotte, Gribonval and Peyré 2023)
# :class: important
# Let $\operatorname{Lie}(W)$ be the Lie algebra generated by the vector fields
# $u_{x,a}(\theta) = \nabla_\theta f_a(x;\theta)$ under the bracket
# $[u,v] = \partial v\,u - \partial u\, v$. Near a point where its dimension is locally
# constant, the number of functionally independent conservation laws is
#
# $$
# N(\theta) = D - \dim \operatorname{Lie}(W)(\theta).
# $$ (cl-eq-count)
# ```
#
# The proof is Frobenius' theorem: the fields of $\operatorname{Lie}(W)$ are tangent to a
# foliation of dimension $\dim\operatorname{Lie}(W)$, and its $N$ transverse coordinates are the
# laws. So $D - \dim W_\theta$ can overcount: rotation-like symmetries leave directions
# orthogonal to $W_\theta$ that brackets fill and no law survives.
#
# Numerically we sample Jacobian rows at random inputs (the rows of one matrix $J$), add $D$
# random brackets $[u, v] = H_v u - H_u v$ (Hessian-vector products with `torch.func.jvp`),
# then $D$ nested ones $[u, [v, w]]$ and deeper, level by level, and take SVD ranks in
# float64. A level that adds no rank means the algebra has closed; reaching the certificate
# $\operatorname{rank} = D - N_{\text{theory}}$ ends it too (no law can be missing from a
# rank that high). For every block of the paper one level reaches the certificate; a
# residual MLP with biases behind an affine LayerNorm needs $[W,[W,W]]$, and one level
# would report a law that does not exist (a unit test,
# `tests/conservation/test_bracket_levels.py`, holds the counter to that case).
#
# ````{admonition} How it is computed: the law counter
# :class: dropdown
# ```{literalinclude} ../src/dltheory/conservation/lie.py
# :pyobject: count_laws
# ```
# The unit tests compare its counts on seven modules with normalisation layers and biases
# with an independent count: the conserved quadratic forms found by
# `quadratic_laws` (a null space over many parameter points, no brackets) are true laws, so
# their number of functionally independent ones is a lower bound, and
# $D - \operatorname{rank}$ of any elements of $\operatorname{Lie}(W)$ an upper bound; the two
# meet on every module. If every level up to the deepest still raised the rank, the count is
# only an upper bound and the counter says so (`LawCount.closed`).
# ````
#
# ### 1.2 Where laws come from: symmetries
#
# **Noether's picture.** If $f(x; e^{sM}\theta) = f(x;\theta)$ for all $x$ and $s$, with a
# *symmetric* generator $M$ (a rescaling, the symmetric part of a $GL$ action), then
# $h = \tfrac12 \theta^\top M\theta$ is conserved: differentiating the invariance in $s$ gives
# $\langle \nabla_\theta f_a, M\theta\rangle = 0$, which is {eq}`cl-eq-perp` for
# $\nabla h = M\theta$. Antisymmetric generators (rotations) give no law. Every law of this
# chapter is of this kind.
#
# ### 1.3 Why a list of laws is complete
#
# (cl-thm-complete)=
# ```{admonition} Theorem 3 (a complete list)
# :class: important
# Let $h_1, \dots, h_n$ be conservation laws (each satisfies {eq}`cl-eq-perp`) whose
# gradients are linearly independent at $\theta$. If $n = N(\theta)$ of {eq}`cl-eq-count`,
# then near $\theta$ every conservation law is a function of $h_1, \dots, h_n$.
# ```
#
# *Proof.* Differentiating $\langle\nabla h, u\rangle \equiv 0$ along a second field $v$, and
# $\langle\nabla h, v\rangle \equiv 0$ along $u$, and subtracting (the Hessian of $h$ is
# symmetric) shows that a law's gradient is orthogonal to $[u, v]$ too, hence to all of
# $\operatorname{Lie}(W)(\theta)$, whose orthogonal complement has dimension $N(\theta) = n$.
# The $n$ independent gradients $\nabla h_i$ span that complement, so any law has
# $\nabla h = \sum_i c_i(\theta)\nabla h_i$, and by the constant-rank theorem $h$ is locally a
# function of the $h_i$. $\square$
#
# Completeness therefore rests on two numbers that the chapter measures: the listed laws are
# conserved (section 3), and they are functionally independent and exactly as many as the
# counted laws (section 4.5). Neither the count nor the list alone would do: a list can be
# short of a law, and a count alone names none.
#
# ````{admonition} Proof sketch: how the paper excludes laws for GELU and SiLU (reconstructed)
# :class: dropdown
# The seed summary describes the method in one paragraph: the authors reduce conservation to
# the PDE system {eq}`cl-eq-perp` for all inputs, view the orthogonality conditions as
# complex-valued functions, restrict them to particular subspaces and use the identity
# theorem for meromorphic functions to obtain constraints on $\nabla h$ that no longer depend
# on the input; the laws are then the functions constant on the level sets of the resulting
# "characteristic invariants". The steps below are our reconstruction for one feed-forward
# layer, $f(x) = \sum_i C_i\,\sigma(a_i\cdot x)$.
#
# 1. *The PDE in the input.* The Jacobian rows are $\partial f/\partial C_i = \sigma(a_i\cdot x)$
#    and $\partial f/\partial a_i = C_i\,\sigma'(a_i\cdot x)\,x$. Writing $\gamma_i =
#    \partial h/\partial C_i$ and $\alpha_i = \partial h/\partial a_i$, {eq}`cl-eq-perp` reads,
#    for every input $x$,
#    $\sum_i \big[\sigma(a_i\cdot x)\,\gamma_i\cdot e + \sigma'(a_i\cdot x)\,(\alpha_i\cdot x)\,
#    (C_i\cdot e)\big] = 0$ for each output direction $e$.
# 2. *Complexify.* For GELU and SiLU both $\sigma$ and $\sigma'$ extend to meromorphic
#    functions of a complex input, so the left-hand side, zero on all real $x$, is zero on a
#    complex neighbourhood too (identity theorem).
# 3. *Separate the units.* Restricted to a complex line $x = z\,v$, unit $i$ contributes
#    functions of $z\,(a_i\cdot v)$ whose singularities (SiLU: poles where
#    $1 + e^{-z\,a_i\cdot v} = 0$) or growth (GELU: $\Phi$ grows like $e^{-z^2(a_i\cdot v)^2/2}$
#    along imaginary directions) sit at places fixed by $a_i\cdot v$. For generic rows these
#    differ between units and cannot cancel, so each unit's coefficients vanish on their own:
#    $\gamma_i = 0$ and $\alpha_i = 0$. Hence $\nabla h = 0$: only constants are conserved.
# 4. *Where laws survive.* For ReLU or a linear unit, $\sigma(t) = t\,\sigma'(t)$, and the
#    two terms of step 1 share the factor $\sigma'(a_i\cdot x)$; $\alpha_i = a_i$,
#    $\gamma_i = -C_i$ solves the equation: the rescaling law
#    $\lVert a_i\rVert^2 - \lVert C_i\rVert^2$. In SwiGLU the *linear* branch is homogeneous in
#    this way and the SiLU gate is not, which is why its law lives on the up branch.
#
# The same separation fails for pieces that are not meromorphic ($\sqrt{\cdot}$ in a
# normalisation layer), the limitation the summary names; section 4.4 counts such layers
# with Theorem 2 instead.
# ````
#
# ## 2. The laws, with PyTorch names
#
# (cl-thm-laws)=
# ```{admonition} Theorem 4 (the paper's laws, as reconstructed here)
# :class: important
# For generic parameters, the conservation laws of gradient flow for every data set are
# generated by: none (constants only) for GELU and SiLU feed-forward layers;
# $\lVert A_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$ per hidden unit for SwiGLU;
# $Q_i^\top Q_i - K_i^\top K_i$ and $V_i^\top V_i - O_i^\top O_i$ per head for multi-head
# attention, with or without sinusoidal positional encoding; under RoPE, one
# $\lVert Q_i^{(j)}\rVert_F^2 - \lVert K_i^{(j)}\rVert_F^2$ per rotation pair $j$ instead of
# the $Q/K$ matrix law; for a mixture of SwiGLU experts, each expert's laws and the router
# sum $\sum_e W_e$, the same for top-$k$ routing as for dense routing.
# ```
#
# The seed summary lists these invariants; the table writes them in PyTorch's names.
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
cos_table = experiments.orthogonality(cfg)
checks.orthogonality(ledger, cfg, cos_table)
runtime.display(cos_table.assign(what=cos_table.control.where(cos_table.control != "",
                                                              cos_table.law))
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
# Equation {eq}`cl-eq-count` in practice: `count_laws` stacks $J$ (Jacobian rows at random
# inputs) and the brackets of section 1.1 and reports $D - \operatorname{rank}$. A rank read
# off too few inputs is too small, and the count too large, so the counter accepts a count
# only when the samples determine it, and otherwise adds inputs or refuses.
#
# ````{admonition} How it is computed: when a count is accepted
# :class: dropdown
# A rank read off too few samples is too small, and the count too large, with nothing in the
# spectrum to show it: a Switch top-1 mixture with six experts read off three Gaussian inputs
# per parameter can report twice its laws with a clean spectral gap, when two experts receive
# only a handful of inputs. The counter therefore accepts a count only when it is
# *determined*: at least $2D$ Jacobian rows; each half of the rows already reaching the same
# rank; a gap of at least $10^{6}$ at the rank; no parameter without gradient at every input
# other than those declared structural (the router of renormalised top-1 routing, which never
# gets a gradient). Otherwise it doubles the inputs and, past a cap, raises
# `UnderdeterminedCount`, and the claim is INCONCLUSIVE: it never returns an unchecked count.
# Saturation cannot see a region that no input reaches: two ReLU units with nearly parallel
# rows differ only on a thin wedge, which Gaussian inputs can miss (a law too many at some
# draws). The ReLU block's inputs are therefore placed in every activation sector ($d = 2$)
# or every sign pattern of every pair of units, from the first-layer rows, and the top-1
# mixtures' inputs in every expert's routing cone (all of them for the renormalised router,
# every other one for Switch-style routing): an expert whose cone is thin is rarely chosen
# by Gaussian inputs, which would leave the rank unsaturated or, with the renormalised
# router whose own weights never get a gradient, have its weights counted as laws. Top-1
# routing can leave an expert that *no* input reaches, when its router row lies inside the
# convex hull of the others; that is why the domain keeps $E \le d + 1$.
# ````

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
# The seed summary states that a *normalised sigmoid* router leaves the laws of the softmax
# router unchanged (which we count as $Em + d$). Which laws a mixture $f(x) = \sum_e g_e(z)\,E_e(x)$, $z = Wx$, has follows from
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
# N_{\text{MoE}} = Em + d\cdot[\,g \text{ is shift-invariant}\,],
# $$ (cl-eq-moe)
#
# $Em + d$ for softmax and the centred sigmoid, $Em$ for $\sigma(z)$, $\sigma(z)/\sum_e\sigma(z_e)$,
# $\sigma(z)$ renormalised over the top-$k$ ($k \ge 2$) and $\sigma(z + b)$. Top-1 routing
# renormalised over the kept expert is the exception to {eq}`cl-eq-moe`, with either gate:
# $g = s_{e^*}/s_{e^*} = 1$, so the router gets no gradient at all and all of its $Ed$ weights
# are conserved, $Em + Ed$ laws (section 4.1 counts the softmax case; the unit tests count
# the sigmoid one). Below, the router translation
# is first applied to each gate function itself (`CL.gate_shift.*`, identities: they check
# the derivation's table against the code of the gates), then the counter of section 4 is
# compared with {eq}`cl-eq-moe` for every sigmoid gate (`CL.count.sigmoid.*`, evidence), and
# separately with the summary's "unchanged", $Em + d$ (`CL.sigmoid_gating.*`, soft: the
# summary's sentence, checked as it is written). The summary's sentence can hold only for a
# shift-invariant gate: for the centred sigmoid it does, for the four other definitions
# it cannot.

# %%
shift_table = experiments.gate_shifts(cfg)
checks.sigmoid_gating(ledger, cfg, counts, shift_table)
softmax_count = experiments.predicted_count(cfg, "moe_dense")
runtime.display(figures.table(checks.count_table(counts, list(checks.SIGMOIDS))
                              .assign(summary=softmax_count)))

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
# ### 4.5 The lists are complete
#
# {ref}`Theorem 3 <cl-thm-complete>` turns the count into a completeness proof for a list:
# the listed laws are conserved (section 3), and if their gradients have rank equal to the
# counted $N = D - \dim\operatorname{Lie}(W)$, no law is missing. For each of the paper's
# blocks we stack the gradients of every listed law (the matrix laws
# $Q_i^\top Q_i - K_i^\top K_i$ entry by entry, so that dependent entries are counted once)
# at the parameters the count used, and compare their rank with the count
# (`CL.complete.*`). A list short of a family, say without the $V/O$ laws of attention,
# has a rank below the count and fails.

# %%
checks.completeness(ledger, cfg, counts)

# %% [markdown]
# ## 5. Discrete time: the drift is exactly second order
#
# All laws here are quadratic forms $h(\theta) = \theta^\top S\theta$ (or linear), so the
# prologue's one-step identity carries over to every block at once.
#
# (cl-prop-step)=
# ```{admonition} Proposition 5 (one gradient step breaks a law at second order)
# :class: important
# For a law $h(\theta) = \theta^\top S\theta$ and any gradient $g \in W_\theta$,
#
# $$
# h(\theta - \tau g) - h(\theta) = \tau^2\, q(g), \qquad q(g) = g^\top S g.
# $$ (cl-eq-step)
# ```
#
# *Proof.* Expand: $h(\theta - \tau g) = h(\theta) - 2\tau\,\theta^\top S g + \tau^2 g^\top S g$,
# and $\theta^\top S g = \tfrac12\langle\nabla h, g\rangle = 0$ by {eq}`cl-eq-perp`. $\square$
#
# Summing over the steps, $h_k - h_0 = \tau^2\sum_{j<k} q(g_j)$, hence
#
# $$
# |h_k - h_0| \;\le\; \lVert S\rVert\,\tau^2 \sum_{j<k}\lVert g_j\rVert^2 \;\le\; C\,\tau^2 k,
# $$ (cl-eq-bound)
#
# with $\lVert S\rVert \le 1$ for every law of the table: the paper's $O(\tau^2 k)$. Mini-batch SGD obeys the same
# identity. Three blocks (SwiGLU, RoPE attention, top-$k$ MoE, at twice the dimensions of
# the parameters cell) regress a random teacher of the same architecture plus noise; we fit
# $\log\text{err} = \alpha\log\tau + \beta\log k + c$ over $k\in\{10,\dots,80\}$ and four
# step sizes placed in the *early window* $\tau k\lambda_{\max} \le 0.32$, where
# $\lambda_{\max}$ is the sharpness at initialisation.
#
# In the early window the gradients barely change, so $\alpha = 2$, $\beta = 1$ follow from
# {eq}`cl-eq-step` by construction, and so does the bound {eq}`cl-eq-bound`: these checks
# guard the code (a wrong law or a wrong update would break them) but cannot test the paper.
# The tests of the paper come in section 6: what happens once the gradients change.
#
# One thing {eq}`cl-eq-step` cannot see is a wrong gradient. Were the optimisers to step with twice the
# derivative of the loss, every law, every $q(g)$ and the identity would still agree with
# each other. So we first check the gradient itself against central differences of the loss
# along random directions of the parameter space (`CL.grad_vs_loss`, an identity: calculus on
# the book's own code; the top-$k$ mixture is left out because its routing is piecewise).

# %%
grad_table = experiments.gradient_checks(cfg)
checks.gradient(ledger, cfg, grad_table)
win, ident = experiments.early_windows(cfg), experiments.identity_runs(cfg)
adam_win = experiments.adam_windows(cfg)
fits = checks.discrete(ledger, cfg, win, ident, adam_win, experiments.sgd_walks(cfg))
runtime.display(fits.groupby(["block", "opt"], sort=False)[["alpha", "beta", "lam"]]
                .mean().reset_index().round(3))

# %% tags=["hide-input"]
if not checks.cut(win):                # a first round cut part-way: no figure of it
    runtime.show(figures.gd_collapse(win, fits, cfg), "cl_gd_collapse")

# %% [markdown]
# Dividing the drift by $\tau^2$ should collapse the four step sizes onto one line of slope
# close to 1 in $k$ (dashed): the drift is $\tau^2 k$ times a constant, as {eq}`cl-eq-step`
# and {eq}`cl-eq-bound` say.
# Where the gradients start to change, the largest step bends away from it first.
#
# ## 6. Other optimisers, and the drift at matched progress
#
# * **SGD**: {eq}`cl-eq-step` holds step by step, so $\alpha\approx 2$. The $k$ exponent is not fixed:
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
# $k^* \propto 1/\eta$ steps: slope 0. Neither follows from {eq}`cl-eq-step` alone; the first needs the
# iterates to track the flow, the second Adam's sign-like steps. We read the drift where the
# loss crosses half its start (interpolated between the two steps around it) and average
# the slopes over two blocks and eight seeds.
#
# ```{admonition} How it is computed: the step sizes at matched progress
# :class: dropdown
# The GD steps, $\tau\lambda \in [0.05, 0.4]$, are placed by the sharpness *along the flow
# path*: the larger of $\lambda_{\max}$ at the start and where a probe run with the smallest
# step crosses the target. Small blocks can sharpen many times over before the loss halves,
# and steps placed by the initial sharpness then run at the edge of stability, not along the
# flow. A (block, seed) whose grid would need more than 4,000 steps is left out, decided by
# the probe before any drift is measured; with fewer than three quarters of the pairs left,
# both claims are INCONCLUSIVE.
# ```

# %%
matched_table = experiments.matched_progress(cfg)
slopes = checks.matched(ledger, cfg, matched_table)
runtime.display(slopes.groupby(["block", "opt"], sort=False).slope.mean()
                .reset_index().round(3))

# %% tags=["hide-input"]
if not checks.cut(matched_table):
    runtime.show(figures.matched(matched_table, cfg), "cl_matched")

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
# ```{admonition} How it is computed: the sizes of the language model
# :class: dropdown
# At `smoke` the model has 23 k parameters. `paper` (d = 128, four layers,
# 1.9 M parameters, sequences of 64 tokens in batches of 256) is sized for about 8 minutes
# on one H100 (an estimate from its FLOP count; no GPU was at hand); on a CPU its sweeps
# take many hours (the paper step of CI runs them under a budget). `full` takes
# our reconstruction of the paper's runs, whose sizes it does not state (d = 256, m = 512,
# 8 experts, 256-token sequences, 13.6 M parameters, 2,000-step runs): an estimated 1-2
# hours on one H100, in float64. Under `DLTHEORY_BUDGET` a sweep whose first round would
# not fit is not started, and its claims say so.
# ```

# %%
lm_step = experiments.lm_step_seconds(cfg)   # seconds per step: run only what fits
lm, lm_runs = experiments.lm_windows(cfg, lm_step), experiments.lm_long(cfg, lm_step)
vit = experiments.vit_windows(cfg, experiments.vit_step_seconds(cfg))
real = checks.real_data(ledger, cfg, lm, vit, experiments.skip_reasons)
for why in experiments.skip_reasons.values():
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
# $1 + \beta$. Each step still obeys {eq}`cl-eq-step`; only the *summed* $q(g_j)$ stops growing
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
# * **Sigmoid routers.** By {eq}`cl-eq-moe` only a shift-invariant gate has the softmax
#   laws: of the five definitions, the centred sigmoid; the paper's own definition was not
#   available. Top-1 routing renormalised over the kept expert freezes the router with either
#   gate ($Em + Ed$ laws).
# * **Our protocol is not the paper's.** Model sizes, step sizes and data are stand-ins; no
#   Penn Treebank or ImageNet stand-in beyond the text and digits above.

# %% [markdown]
# ## Summary
#
# - A function of the weights is conserved for every data set and loss exactly when its
#   gradient is orthogonal to every Jacobian row ({eq}`cl-eq-perp`); the number of
#   independent laws is $D - \dim\operatorname{Lie}(W)$ ({eq}`cl-eq-count`), and the brackets
#   matter: the Jacobian rows alone overcount under RoPE, and one bracket level overcounts
#   a LayerNorm block with biases.
# - Laws come from symmetries with a symmetric generator: a rescaling per hidden unit on
#   SwiGLU's linear branch, $GL(d_k)$ and $GL(d_v)$ per attention head, one scaled rotation
#   per RoPE pair, the router translation of a shift-invariant gate ({eq}`cl-eq-moe`).
#   Smooth activations leave none.
# - A list of conserved, functionally independent laws as long as the count is complete
#   ({ref}`Theorem 3 <cl-thm-complete>`): the chapter checks both numbers for the paper's
#   blocks.
# - Gradient descent and SGD break every law at second order per step
#   ({eq}`cl-eq-step`), so the drift grows like $\tau^2 k$ ({eq}`cl-eq-bound`); Adam breaks
#   them at first order, and weight decay drives them to balanced weights.
#
# **The paper's claims** (after the seed summary): smooth activations (GELU, SiLU) kill
# every law, but the multiplicative structure of modern blocks brings laws back: one per
# hidden unit in SwiGLU, $Q_i^\top Q_i - K_i^\top K_i$ and $V_i^\top V_i - O_i^\top O_i$ per
# attention head, one per $2\times 2$ rotation block under RoPE, and the router sum
# $\sum_e W_e$ in a mixture of experts, unchanged for a normalised sigmoid router; the laws
# drift as $O(\tau^2 k)$ under GD. Our derivation (section 4.3): the router sum exists only
# for a gate unchanged by a common shift of its logits. What this run found (for each
# sigmoid gate two lines: `CL.count.sigmoid.*`, the counted laws against the count derived
# from the gate's symmetries, and `CL.sigmoid_gating.*`, the summary's sentence):

# %% tags=["remove-input"]
FINDINGS = ["CL.count.swiglu", "CL.count.mha_rope", "CL.count.moe_dense",
            "CL.complete.mha", "CL.complete.mha_rope",
            *(f"CL.count.sigmoid.{g}" for g in checks.SIGMOIDS),   # our derived counts
            *(f"CL.sigmoid_gating.{g}" for g in checks.SIGMOIDS),  # the summary's
            "CL.adam.tau_exponent", "CL.matched.gd_slope", "CL.lm.late_window"]
ledger.findings(FINDINGS)

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
# ```{admonition} Exercise 1
# Show that with a router bias $b$ the sum $\sum_e b_e$ is a further law, and check it with
# `count_laws`.
# ```
#
# ```{admonition} Solution
# :class: dropdown
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
# ```{admonition} Exercise 2
# Why does ReGLU have $2m$ laws? Find the second rescaling symmetry.
# ```
#
# ```{admonition} Solution
# :class: dropdown
# ReLU is positively homogeneous, so $(B_{:,i}, C_{i,:}) \to (\lambda B_{:,i}, C_{i,:}/\lambda)$
# for $\lambda>0$ is a second symmetry besides the one on $(A_{:,i}, C_{i,:})$; each gives a
# law, $\lVert A_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$ and
# $\lVert B_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$.
# ```
#
# ```{admonition} Exercise 3
# A two-layer linear network $f(x) = xAC$ with $A \in \mathbb R^{d\times m}$,
# $C\in\mathbb R^{m\times o}$ and $m \le \min(d, o)$. Find its laws from the symmetry
# $(A, C) \to (AG, G^{-1}C)$ and count them.
# ```
#
# ```{admonition} Solution
# :class: dropdown
# With $G = e^{sM}$, $\frac{d}{ds}(Ae^{sM}, e^{-sM}C)|_{s=0} = (AM, -MC)$, and
# {eq}`cl-eq-perp` for the quadratic $h = \operatorname{tr}(M^\top(A^\top A - CC^\top))/2$
# holds because $\nabla h = (AM, -MC)$ for symmetric $M$ is that generator. So every entry
# of the symmetric matrix $A^\top A - CC^\top$ is conserved: $m(m+1)/2$ laws, the
# symmetric part of $\mathfrak{gl}(m)$; the antisymmetric $M$ (rotations) give none. This is
# the linear row of the table in section 2 and the count `CL.count.linear` checks.
# ```
#
# ```{admonition} Exercise 4
# Use {ref}`Theorem 3 <cl-thm-complete>` to prove the SwiGLU list
# $h_i = \lVert A_{:,i}\rVert^2 - \lVert C_{i,:}\rVert^2$, $i = 1,\dots,m$, complete, given
# that the counter finds $m$ laws.
# ```
#
# ```{admonition} Solution
# :class: dropdown
# Each $h_i$ is conserved (section 3). Its gradient is $(2A_{:,i}, -2C_{i,:})$ on the
# parameters of unit $i$ and zero elsewhere; the units' parameters are disjoint, so at any
# point where no column $A_{:,i}$ vanishes the $m$ gradients are linearly independent. With
# $N = m$ from {eq}`cl-eq-count`, Theorem 3 says every law is locally a function of
# $h_1, \dots, h_m$: the gate $B$ carries none. `CL.complete.swiglu` checks the same rank.
# ```
#
# ## Claims
#
# Every verdict line above is an entry of the chapter's ledger, collected with the other
# chapters' on the {doc}`reproduction page <reproduction>`; what the verdicts and the kinds
# of claim mean: [How this book checks itself](checking.md).

# %%
chapter.finish(ledger)
