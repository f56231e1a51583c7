"""The chapter's experiments: one function per experiment, ``(config, ...) -> tidy DataFrame``.

Each experiment is a list of tasks run by ``dltheory.experiments.sweep`` (cached, resumable,
distributable) through a module-level task function ``_task_*(config, task) -> row(s)``. All
computations are float64 (identities and exponent fits need it); blocks live on
``config.device``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import torch

from .. import seeds
from . import laws as L
from . import rules
from .config import Config
from .lie import UnderdeterminedCount, count_laws, jacobian_rows, law_gradients, max_abs_cos
from .models import FFN, MHA, Chain, MoE, NormSwiGLU, SwiGLU
from .networks import TinyLM, TinyViT, ce_loss, lm_batch, patchify, teacher_regression
from .train import early_window, gradient_fd_ratio, sharpness, train

OPTS = ("gd", "sgd", "heavy_ball", "adam")


def _sweep(fn, tasks, config, name, rounds=None):
    """``dltheory.experiments.sweep``; ``rounds`` (a task key, e.g. ``"seed"``) runs the
    tasks in rounds under the chapter budget (``df.attrs["rounds"] = (done, planned)``)."""
    from .. import experiments as engine

    return engine.sweep(fn, tasks, config=config, name=name, rounds=rounds)


# --------------------------------------------------------------------------- budget guards
def affordable(name: str, seconds: float) -> tuple[bool, str]:
    """Whether a sweep whose first round is estimated at ``seconds`` fits what the chapter
    budget allots to ``name`` now (always, without a budget), and the reason for the ledger.
    The engine always runs a sweep's first round, so a sweep that cannot afford it is not
    started at all: its claims are INCONCLUSIVE for a reason decided before the run."""
    from .. import budget

    allot = budget.allot(name)
    if allot is None or seconds <= allot:
        return True, ""
    return False, (f"not run: one round of {name} is estimated at {seconds:.0f} s on this "
                   f"device, {allot:.0f} s of the chapter budget were left for it")


@functools.lru_cache(maxsize=4)
def _flop_rate(device: str) -> float:
    """float64 FLOP/s of this device on a 384 x 384 matmul (a few milliseconds): the unit of
    the cost probes below."""
    import time

    dev = torch.device(device)
    A = torch.randn(384, 384, dtype=torch.float64, generator=seeds.torch(0, "flop_probe")).to(dev)
    (A @ A).sum().item()
    t0 = time.perf_counter()
    for _ in range(4):
        (A @ A).sum().item()
    return 4 * 2 * 384 ** 3 / max(time.perf_counter() - t0, 1e-9)


def _step_seconds(model, n_tokens: int, device: str) -> float:
    """Estimated seconds of one recorded GD step: 6 FLOP per parameter and token (forward
    and backward) at the device's measured float64 rate, and at least 2 ms (launch latency
    and the per-step law records)."""
    D = sum(p.numel() for p in model.parameters())
    return max(6.0 * D * n_tokens / _flop_rate(device), 2e-3)


def _window_steps(cfg: Config, n_windows: int, ks) -> int:
    """GD steps of one seed's window sweeps: every window x tau x max(ks), plus the
    sharpness power iteration (30 Hessian-vector products, about 3 steps each)."""
    return n_windows * len(cfg.tau_ratios) * int(max(ks)) + 90


def _f64(fn):
    @functools.wraps(fn)
    def wrapped(*a, **kw):
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            return fn(*a, **kw)
        finally:
            torch.set_default_dtype(old)
    return wrapped


def _gen(cfg: Config, *names) -> torch.Generator:
    """The chapter's torch stream ``names`` (what is drawn, then which block / draw)."""
    return seeds.torch(cfg.seed, *names)


def _seed(cfg: Config, *names) -> int:
    """The integer seed of the stream ``names``, for a function that makes its own
    generators from it (``train``: one per run, so every step size sees the same batches)."""
    return seeds.torch_seed(cfg.seed, *names)


def _dev(cfg):
    return torch.device(cfg.device)


# --------------------------------------------------------------------------- the blocks
def blocks(cfg: Config) -> dict:
    """``name -> (constructor(*stream) -> module, input shape)``. Every size follows the knobs; the
    weights are drawn from ``seeds.torch(cfg.seed, "init", *stream)``, stream = (name, draw)."""
    d, m, H, dk, dv, E, k, T, o = cfg.d, cfg.m, cfg.H, cfg.dk, cfg.dv, cfg.E, cfg.k, cfg.T, cfg.o
    rk = cfg.rope_dk
    rd = max(d, rk)
    ln = max(d, 3)
    f = cfg.big_factor
    def g(*s):
        return _gen(cfg, "init", *s)

    tok, seq, rseq = (d,), (T, d), (T, rd)
    return {
        "linear": (lambda *s: FFN(d, min(m, d), d, "linear", gen=g(*s)), tok),
        "relu": (lambda *s: FFN(d, m, o, "relu", gen=g(*s)), tok),
        "gelu": (lambda *s: FFN(d, m, o, "gelu", gen=g(*s)), tok),
        "silu": (lambda *s: FFN(d, m, o, "silu", gen=g(*s)), tok),
        "swiglu": (lambda *s: SwiGLU(d, m, o, gen=g(*s)), tok),
        "swiglu_d": (lambda *s: SwiGLU(d, m, d, gen=g(*s)), tok),
        "mha": (lambda *s: MHA(d, H, dk, dv, T, gen=g(*s)), seq),
        "mha_sin": (lambda *s: MHA(d, H, dk, dv, T, pe="sin", gen=g(*s)), seq),
        "mha_rope": (lambda *s: MHA(d, H, dk, dv, T, pe="rope", gen=g(*s)), seq),
        "mha_rope_half": (lambda *s: MHA(rd, H, rk, dv, T, pe="rope", rope_style="half",
                                        gen=g(*s)), rseq),
        "mha_rope_interleaved_rk": (lambda *s: MHA(rd, H, rk, dv, T, pe="rope", gen=g(*s)), rseq),
        "moe_dense": (lambda *s: MoE(d, m, E, o, gen=g(*s)), tok),
        "moe_topk": (lambda *s: MoE(d, m, E, o, topk=k, gen=g(*s)), tok),
        "moe_switch": (lambda *s: MoE(d, m, E, o, topk=1, gen=g(*s)), tok),
        "moe_top1_renorm": (lambda *s: MoE(d, m, E, o, topk=1, renorm=True, gen=g(*s)), tok),
        "geglu": (lambda *s: SwiGLU(d, m, o, act="gelu", gen=g(*s)), tok),
        "reglu": (lambda *s: SwiGLU(d, m, o, act="relu", gen=g(*s)), tok),
        "bilinear_glu": (lambda *s: SwiGLU(d, m, o, act="linear", gen=g(*s)), tok),
        "sigmoid": (lambda *s: MoE(d, m, E, o, gate="sigmoid", gen=g(*s)), tok),
        "sigmoid_norm": (lambda *s: MoE(d, m, E, o, gate="sigmoid_norm", gen=g(*s)), tok),
        "sigmoid_topk_norm": (lambda *s: MoE(d, m, E, o, gate="sigmoid_topk_norm",
                                            topk=rules.sparse_k(cfg), gen=g(*s)), tok),
        "sigmoid_centred": (lambda *s: MoE(d, m, E, o, gate="sigmoid_centred", gen=g(*s)), tok),
        "sigmoid_bias": (lambda *s: MoE(d, m, E, o, gate="sigmoid_bias", gen=g(*s)), tok),
        "rmsnorm_swiglu": (lambda *s: NormSwiGLU(d, m, o, "rms", gen=g(*s)), tok),
        # LayerNorm over 2 coordinates maps every input to +-(1, -1): generic only for d >= 3
        "layernorm_swiglu": (lambda *s: NormSwiGLU(ln, m, o, "layer", gen=g(*s)), (ln,)),
        "linear_rmsnorm_swiglu": (lambda *s: NormSwiGLU(d, m, o, "rms", proj=True, gen=g(*s)),
                                  tok),
        "linear_layernorm_swiglu": (lambda *s: NormSwiGLU(ln, m, o, "layer", proj=True,
                                                         gen=g(*s)), (ln,)),
        "mha_qknorm": (lambda *s: MHA(d, H, dk, dv, T, qk_norm=True, gen=g(*s)), seq),
        "mha_big": (lambda *s: MHA(f * d, H, f * dk, f * dv, T, gen=g(*s)), (T, f * d)),
        "mha_rope_big": (lambda *s: MHA(f * d, H, f * dk, f * dv, T, pe="rope", gen=g(*s)),
                         (T, f * d)),
        "chain_residual": (lambda *s: Chain(MHA(d, H, dk, dv, T, pe="rope", gen=g(*s)),
                                           SwiGLU(d, m, d, gen=g(*s, "ffn"))), seq),
        "chain_plain": (lambda *s: Chain(MHA(d, H, dk, dv, T, pe="rope", gen=g(*s)),
                                        SwiGLU(d, m, d, gen=g(*s, "ffn")), residual=False), seq),
    }


def theory_for(name: str, model) -> int | None:
    """The predicted count of a named block, or None where nothing is predicted."""
    if name == "moe_top1_renorm":
        return L.renorm_top1_count(model)
    try:
        return L.theory_count(model)
    except ValueError:
        return None


def listed_rank(model, rtol: float) -> int:
    """The functional rank of a block's listed laws (``laws.laws_for``): the rank of their
    gradients at the block's parameters (as ``QuadraticLaws.functional_rank``), i.e. how
    many of them are functionally independent there."""
    fams = L.laws_for(model)
    if not fams:
        return 0
    G = torch.cat([law_gradients(model, f).reshape(-1, sum(p.numel() for p in
                                                        model.parameters())) for f in fams])
    s = torch.linalg.svdvals(G)
    return int((s > rtol * s[0]).sum()) if s[0] > 0 else 0


@_f64
def listed_rank_of(cfg: Config, name: str) -> int:
    """``listed_rank`` of block ``name`` at this setting, at the parameters the count used
    (built afresh like ``predicted_count``, so that a changed law list changes it)."""
    return listed_rank(blocks(cfg)[name][0](name).to(_dev(cfg)), cfg.rtol_rank)


def structural_unreached(name: str) -> tuple[str, ...]:
    """The parameters of block ``name`` that get no gradient by structure, and only those:
    renormalised top-1 routing has g = 1 for the kept expert, so its router (E d weights)
    never gets a gradient. Any other parameter without gradient (an expert that no sampled
    input reaches) makes the counter add inputs or refuse."""
    return ("router.weight",) if name == "moe_top1_renorm" else ()


def predicted_count(cfg: Config, name: str) -> int | None:
    """The theory count of block ``name`` at this setting (built afresh, so that a changed
    theory function changes the prediction)."""
    return theory_for(name, blocks(cfg)[name][0](name))


def _inputs(cfg, model, shape, n, *names):
    return torch.randn(n, *shape, generator=_gen(cfg, *names)).to(_dev(cfg))


ORTH_BLOCKS = ("swiglu", "mha", "mha_sin", "mha_rope", "mha_rope_half", "moe_dense", "moe_topk",
               "moe_switch", "rmsnorm_swiglu", "linear_layernorm_swiglu", "mha_qknorm")
CONTROLS = {  # control: (block, negative-control family or a callable, why it must fail)
    "gelu_relu_law": ("gelu", "ReLU law on a GELU FFN"),
    "silu_relu_law": ("silu", "ReLU law on a SiLU FFN"),
    "swiglu_gate_branch": ("swiglu", "gate branch instead of up"),
    "rope_wrong_pairing": ("mha_rope_half", "interleaved pairing on a rotate_half RoPE"),
    "rope_full_qk": ("mha_rope_interleaved_rk", r"full $Q^\top Q - K^\top K$ under RoPE"),
    "moe_sigmoid_router_sum": ("sigmoid", "router sum with sigmoid gates"),
    "qknorm_full_qk": ("mha_qknorm", r"$Q^\top Q - K^\top K$ under QK-norm"),
}


def _control_family(name, model):
    if name == "qknorm_full_qk":
        return L.qk_laws(model.H, model.dk)
    return L.negative_control(name, model)


@_f64
def _task_orth(cfg: Config, task: dict) -> list[dict]:
    make, shape = blocks(cfg)[task["block"]]
    b, s = task["block"], task["draw"]
    model = make(b, s).to(_dev(cfg))
    J = jacobian_rows(model, _inputs(cfg, model, shape, max(cfg.n_sparse, 16), "orth_inputs", b,
                                     s))
    if task["control"]:
        fams = [(task["control"], _control_family(task["control"], model))]
    else:
        fams = [(f.name, f) for f in L.laws_for(model)]
    return [{"law": n, "max_cos": max_abs_cos(J, law_gradients(model, f))} for n, f in fams]


def orthogonality(cfg: Config) -> pd.DataFrame:
    """max ``|cos|`` between Jacobian rows and law gradients: block, control, draw, law, max_cos
    (control = "" for the claimed laws)."""
    tasks = [{"block": b, "control": "", "draw": s} for b in ORTH_BLOCKS
             for s in range(cfg.orth_seeds)]
    tasks += [{"block": b, "control": c, "draw": s} for c, (b, _) in CONTROLS.items()
              for s in range(cfg.orth_seeds)]
    return _sweep(_task_orth, tasks, cfg, "cl_orthogonality", rounds="draw")


def _sector_inputs(model, n_per: int, gen: torch.Generator) -> torch.Tensor:
    """Inputs of a ReLU FFN on d = 2 in every activation region: the m units' boundary
    lines split the plane into 2m sectors, some very narrow (the narrowest has a mass of order
    1 / m^2, and Gaussian inputs miss it often enough to leave a law too many); ``n_per``
    inputs strictly inside each sector, decided from the first-layer rows."""
    w = model.first.weight.detach().cpu().to(torch.float64)
    normal = torch.atan2(w[:, 1], w[:, 0])
    edges = torch.sort(torch.cat([normal + math.pi / 2, normal - math.pi / 2])
                       % (2 * math.pi)).values
    widths = torch.diff(torch.cat([edges, edges[:1] + 2 * math.pi]))
    u = 0.05 + 0.9 * torch.rand(len(edges), n_per, generator=gen, dtype=torch.float64)
    ang = (edges[:, None] + u * widths[:, None]).reshape(-1)
    r = torch.sqrt(-2 * torch.log(torch.rand(len(ang), generator=gen, dtype=torch.float64)))
    x = torch.stack([r * torch.cos(ang), r * torch.sin(ang)], 1)
    p0 = next(model.parameters())
    return x.to(dtype=p0.dtype, device=p0.device)


def _pair_inputs(model, n_per: int, gen: torch.Generator) -> torch.Tensor:
    """Inputs of a ReLU FFN (any d) realising every sign pattern of every pair of units:
    two units with nearly parallel rows are separated only on a thin wedge that Gaussian
    inputs can miss (a law too many). For each pair (i, j) and signs (s_i, s_j), ``n_per``
    points with a_i.x = s_i t_i, a_j.x = s_j t_j (t > 0) plus a random component orthogonal
    to both, rescaled to a Gaussian-like norm (a positive rescaling keeps the pattern)."""
    w = model.first.weight.detach().cpu().to(torch.float64)
    m, d = w.shape
    xs = []
    for i in range(m):
        for j in range(i + 1, m):
            a = w[[i, j]]
            for si in (1.0, -1.0):
                for sj in (1.0, -1.0):
                    t = 0.5 + torch.rand(n_per, 2, generator=gen, dtype=torch.float64)
                    b = t * torch.tensor([si, sj], dtype=torch.float64)
                    y = torch.linalg.lstsq(a, b.T).solution.T          # in span(a_i, a_j)
                    z = torch.randn(n_per, d, generator=gen, dtype=torch.float64)
                    q = torch.linalg.qr(a.T).Q
                    z = z - (z @ q) @ q.T
                    x = y / y.norm(dim=1, keepdim=True) + 0.5 * z / math.sqrt(d)
                    r = torch.sqrt(-2 * torch.log(torch.rand(n_per, 1, generator=gen,
                                                             dtype=torch.float64)))
                    xs.append(x / x.norm(dim=1, keepdim=True) * r)
    p0 = next(model.parameters())
    return torch.cat(xs).to(dtype=p0.dtype, device=p0.device)


def _expert_inputs(model, n_per: int, gen: torch.Generator) -> torch.Tensor:
    """Inputs of a top-1 routed MoE that reach every expert, ``n_per`` each, in round-robin
    order (each half of the list reaches every expert). Expert e is selected where
    ``(W_e - W_j) . x > 0`` for every j != e: with E - 1 <= d rows (the domain keeps
    E <= d + 1) ``A x = b`` has a solution for any ``b > 0``, the least-norm one plus a
    random component orthogonal to A's rows, rescaled to a Gaussian-like norm (a positive
    rescaling keeps the expert). A thin cone that Gaussian inputs hit once in thousands of
    draws (a rank that never saturates, or an expert counted as laws) gets its inputs."""
    W = model.router.weight.detach().cpu().to(torch.float64)
    E, d = W.shape
    xs = []
    for e in range(E):
        A = W[e] - W[[j for j in range(E) if j != e]]                    # (E-1, d)
        b = 0.2 + torch.rand(n_per, E - 1, generator=gen, dtype=torch.float64)
        y = torch.linalg.lstsq(A, b.T).solution.T                        # A y = b > 0
        q = torch.linalg.qr(A.T).Q
        z = torch.randn(n_per, d, generator=gen, dtype=torch.float64)
        z = z - (z @ q) @ q.T
        x = y / y.norm(dim=1, keepdim=True) + 0.5 * z / math.sqrt(d)
        r = torch.sqrt(-2 * torch.log(torch.rand(n_per, 1, generator=gen, dtype=torch.float64)))
        xs.append(x / x.norm(dim=1, keepdim=True) * r)
    p0 = next(model.parameters())
    return torch.stack(xs, 1).reshape(-1, d).to(dtype=p0.dtype, device=p0.device)


#: the blocks whose count inputs are placed in every expert's cone: renormalised top-1
#: (its router is declared unreached, so an expert no input reaches must not pass as laws;
#: Switch top-1 keeps Gaussian inputs, where its router's softmax sees every expert)
TOP1 = ("moe_top1_renorm",)


@_f64
def _task_count(cfg: Config, task: dict) -> dict:
    make, shape = blocks(cfg)[task["model"]]
    name = task["model"]
    model = make(name).to(_dev(cfg))
    theory = theory_for(name, model)
    sampler = None
    if name == "relu" and cfg.d == 2:
        X = _sector_inputs(model, 4, _gen(cfg, "count_inputs", name, "sectors"))
    elif name == "relu" and cfg.m >= 2:
        X = torch.cat([_pair_inputs(model, 2, _gen(cfg, "count_inputs", name, "pairs")),
                       _inputs(cfg, model, shape, 8, "count_inputs", name)])
    elif name in TOP1:        # every expert reached, in each half of the inputs and the extra
        gen = _gen(cfg, "count_inputs", name, "experts")

        def sampler(n):
            return _expert_inputs(model, math.ceil(n / cfg.E), gen)[:n]
        X = sampler(cfg.n_sparse)
    elif isinstance(model, MoE) and model.topk == 1:   # Switch-style top-1: half the
        gen = _gen(cfg, "count_inputs", name, "experts")   # inputs in the experts' cones

        def sampler(n):
            h = math.ceil(n / 2)
            cone = _expert_inputs(model, math.ceil(h / cfg.E), gen)[:h]
            gauss = torch.randn(h, *shape, generator=gen).to(cone)
            return torch.stack([cone, gauss], 1).reshape(-1, *shape)[:n]
        X = sampler(cfg.n_sparse)
    else:
        X = _inputs(cfg, model, shape, cfg.n_sparse if "moe" in name or
                    "sigmoid" in name else 8, "count_inputs", name)
    try:
        c = count_laws(model, X, theory=theory, seed=_seed(cfg, "count", name),
                       rtol=cfg.rtol_rank, min_gap=cfg.min_gap,
                       structural_unreached=structural_unreached(name), sampler=sampler)
    except UnderdeterminedCount as e:   # the claim says why; never an unchecked count
        return {"D": sum(p.numel() for p in model.parameters()), "laws": np.nan,
                "theory": np.nan if theory is None else theory, "undetermined": str(e)}
    return {"D": c.D, "rank_W": c.rank_W, "rank_WB": c.rank_WB, "laws": c.laws,
            "theory": np.nan if theory is None else theory, "gap": c.gap,
            "n_inputs": c.n_inputs, "unreached": c.unreached, "levels": c.batches,
            "closed": c.closed, "undetermined": "",
            "spectrum": c.spectrum.cpu().numpy(), "spectrum_W": c.spectrum_W.cpu().numpy()}


def counts(cfg: Config, names) -> pd.DataFrame:
    """Law counts D - rank(W + [W, W]) of the named blocks (see ``blocks``): one row each.
    The widened attention blocks (``*_big``) run as their own sweep ``cl_counts_big``, only
    when the budget affords them (``big_count_seconds``); ``df.attrs["skipped"]`` maps a
    block left out to the reason.

    A rank read off too few samples is too small, and the count too large, with nothing in
    the spectrum to show it (a Switch top-1 mixture with six experts read off three Gaussian
    inputs per parameter can report twice its laws with a clean gap, when two experts
    receive only a handful of inputs); ``count_laws`` therefore accepts only determined
    counts. Saturation cannot see a region no input reaches, so the inputs are placed
    (``_task_count``): the ReLU block's in every activation sector (d = 2,
    ``_sector_inputs``) or every sign pattern of every pair of units (``_pair_inputs``: two
    nearly parallel rows differ only on a thin wedge); the top-1 mixtures' in every expert's
    routing cone (``_expert_inputs``; all of them for the renormalised router, every other
    one for Switch-style routing): an expert that Gaussian inputs rarely choose would leave
    the rank unsaturated or, behind the renormalised router (declared structural), have its
    weights counted as laws. An expert whose router row lies inside the convex hull of the
    others is reached by no input at all, hence E <= d + 1."""
    skipped = {}
    why = rules.plain_chain_undetermined(cfg)
    if "chain_plain" in names and why:
        skipped["chain_plain"] = why
    small = [n for n in names if not n.endswith("_big") and n not in skipped]
    big = [n for n in names if n.endswith("_big")]
    df = _sweep(_task_count, [{"model": n} for n in small], cfg, "cl_counts")
    if big:
        ok, why = affordable("cl_counts_big", big_count_seconds(cfg, big))
        if ok:
            df = pd.concat([df, _sweep(_task_count, [{"model": n} for n in big], cfg,
                                       "cl_counts_big")], ignore_index=True)
        else:
            skipped.update(dict.fromkeys(big, why))
    df.attrs["skipped"] = skipped
    return df


#: the MoE blocks of the chapter (softmax and sigmoid routers) whose gates are shift-checked
GATE_BLOCKS = ("moe_dense", "moe_topk", "moe_switch", "moe_top1_renorm", "sigmoid",
               "sigmoid_norm", "sigmoid_topk_norm", "sigmoid_centred", "sigmoid_bias")


@_f64
def _task_gate_shift(cfg: Config, task: dict) -> dict:
    """The router translation applied to the gate function itself: the largest change of
    the routing weights g(x) when every router row gets the same random vector a
    (``W_e -> W_e + a``, every logit shifted by ``a.x``), on Gaussian inputs, relative to
    max |g| (the check compares it with ``laws.shift_invariant``)."""
    make, shape = blocks(cfg)[task["block"]]
    b = task["block"]
    model = make(b).to(_dev(cfg))
    X = _inputs(cfg, model, shape, 64, "gate_inputs", b)
    a = torch.randn(model.router.weight.shape[1], generator=_gen(cfg, "router_shift", b))
    a = a.to(_dev(cfg))
    with torch.no_grad():
        g0 = model.gates(X)
        model.router.weight.add_(a[None, :])
        g1 = model.gates(X)
    return {"gate": model.gate_kind, "change": float((g1 - g0).abs().max() / g0.abs().max())}


def gate_shifts(cfg: Config) -> pd.DataFrame:
    """Shift invariance of every MoE gate of the chapter: block, gate, change (the measured
    relative change of g under the router translation)."""
    return _sweep(_task_gate_shift, [{"block": b} for b in GATE_BLOCKS], cfg, "cl_gate_shift")


@_f64
def big_count_seconds(cfg: Config, names) -> float:
    """Cost estimate of counting the widened blocks: the time per Jacobian row of a probe on
    8 inputs, times the 2D rows and D brackets (about two rows' work each) the counter
    needs, D the block's parameter count."""
    import time

    total = 0.0
    for n in names:
        make, shape = blocks(cfg)[n]
        model = make(n).to(_dev(cfg))
        D = sum(p.numel() for p in model.parameters())
        t0 = time.perf_counter()
        J = jacobian_rows(model, _inputs(cfg, model, shape, 8, "cost_probe", n))
        total += (time.perf_counter() - t0) / J.shape[0] * 4 * D
    return total


# --------------------------------------------------------------------------- discrete time
def disc_blocks(cfg: Config) -> dict:
    """``name -> (constructor(*stream), input shape, n_data)`` of the teacher-regression blocks
    (weights from ``seeds.torch(cfg.seed, "init", *stream)``)."""
    z = cfg.disc
    def g(*s):
        return _gen(cfg, "init", *s)

    return {
        "swiglu": (lambda *s: SwiGLU(z["d"], z["m"], z["o"], gen=g(*s)), (z["d"],), cfg.n_reg),
        "mha_rope": (lambda *s: MHA(z["d"], z["H"], z["dk"], z["dv"], z["T"], pe="rope",
                                   gen=g(*s)), (z["T"], z["d"]), cfg.n_reg),
        "moe_topk": (lambda *s: MoE(z["d"], z["m"], z["E"], z["o"], topk=z["k"], gen=g(*s)),
                     (z["d"],), cfg.n_reg_moe),
    }


def _teacher(cfg, block, i):
    """(make student, loss, n) of the ``i``-th teacher-regression problem of ``block``: student,
    teacher and data each from their own named stream."""
    make, shape, n = disc_blocks(cfg)[block]
    _, _, loss = teacher_regression(make(block, "student", i), make(block, "teacher", i), n,
                                    shape, seed=_gen(cfg, "teacher_data", block, i))
    return (lambda: make(block, "student", i)), loss, n


def _opt_kw(cfg, opt, n):
    return {"gd": {}, "sgd": {"batch_size": cfg.sgd_batch, "n_data": n},
            "heavy_ball": {"beta": cfg.beta_hb}, "adam": {"lr_scale": cfg.adam_lr_scale}}[opt]


@_f64
def _task_window(cfg: Config, task: dict) -> list[dict]:
    b, i = task["block"], task["seed"]
    make, loss, n = _teacher(cfg, b, i)
    lam = sharpness(make(), loss)
    w = early_window(make, loss, L.laws_for, tl_max=task.get("tl", cfg.early_tl), ks=cfg.ks,
                     ratios=cfg.tau_ratios, optimizer=task["opt"], lam=lam,
                     seed=_seed(cfg, "sgd_batches", b, i),
                     **_opt_kw(cfg, task["opt"], n))
    rows = []
    for tau, tr in zip(w.taus, w.trajs, strict=True):
        err = tr.error()
        rs = tr.error(["router_sum"]) if "router_sum" in tr.h else np.full_like(err, np.nan)
        bound = np.concatenate([[0.0], np.maximum.accumulate(tr.bound_ratio())])
        # every law's own drift |h_k - h_0| (Adam's windows: its exponent is fitted per law)
        per = np.concatenate([np.abs(tr.h[n] - tr.h[n][:1]) for n in tr.h], 1)
        for kk in range(1, len(err)):
            rows.append({"tau": tau, "lam": lam, "k": kk, "err": err[kk], "router": rs[kk],
                         "bound": bound[kk], **({"law_err": per[kk]} if "tl" in task else {})})
    return rows


def early_windows(cfg: Config) -> pd.DataFrame:
    """Conservation error along the early-window grid: block, opt, seed, tau, lam, k, err,
    router (router-sum drift), bound (running max of err / tau^2 sum ||g||^2)."""
    tasks = [{"block": b, "opt": o, "seed": s} for b in disc_blocks(cfg) for o in OPTS
             for s in range(cfg.disc_seeds)]
    return _sweep(_task_window, tasks, cfg, "cl_early_windows", rounds="seed")


def adam_windows(cfg: Config) -> pd.DataFrame:
    """Adam on a shorter early window (``tau k lambda_max <= adam_tl``), where its drift is
    first order to within a fraction of a percent: the rows of ``early_windows`` plus
    ``law_err`` (each law's own drift, an array over the laws of the block)."""
    tasks = [{"block": b, "opt": "adam", "seed": s, "tl": cfg.adam_tl} for b in disc_blocks(cfg)
             for s in range(cfg.disc_seeds)]
    return _sweep(_task_window, tasks, cfg, "cl_adam_windows", rounds="seed")


def per_sample_gradients(model, loss, n: int) -> torch.Tensor:
    """(n, D) gradients of the loss of each sample at the current parameters (flattened in
    ``named_parameters`` order); the mean of rows ``idx`` is the minibatch gradient."""
    params = dict(model.named_parameters())
    rows = []
    for i in range(n):
        model.zero_grad(set_to_none=True)
        loss(model, torch.tensor([i])).backward()
        rows.append(torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p))
                               .reshape(-1) for p in params.values()]))
    model.zero_grad(set_to_none=True)
    return torch.stack(rows).detach()


@_f64
def _task_sgd_walk(cfg: Config, task: dict) -> list[dict]:
    """The SGD k exponent predicted from the identity with the gradients frozen at theta_0.

    Each SGD step changes a quadratic law by exactly ``tau^2 q(g_j)`` with ``g_j`` the
    minibatch gradient; in the early window the parameters barely move, so
    ``h_k - h_0 ~ tau^2 sum_{j<k} q(g_j)`` with ``g_j`` independent minibatch means of the
    per-sample gradients at theta_0: a random walk whose drift ``E q(g) = q(g_bar) +
    tr(S Cov g)`` and noise set the k exponent (1 where the drift dominates, 1/2 where the
    noise does). ``sgd_walk_draws`` realisations of the walk, each with the minibatches
    drawn like ``train`` (``sgd_batch`` of n without replacement); the fit of
    ``tau^alpha k^beta`` on the window's grid gives alpha = 2 and beta = the slope of
    ``log max_laws |sum_j q(g_j)|`` against ``log k`` at ``ks``."""
    from torch.nn import functional as F

    b, i = task["block"], task["seed"]
    make, loss, n = _teacher(cfg, b, i)
    model = make()
    fams = [f for f in L.laws_for(model) if f.kind == "quadratic"]
    G = per_sample_gradients(model, loss, n)
    shapes = [(name, p.shape, p.numel()) for name, p in model.named_parameters()]

    def q_of(g):
        d, o = {}, 0
        for name, shape, size in shapes:
            d[name] = g[o:o + size].reshape(shape)
            o += size
        return torch.cat([f(d).reshape(-1) for f in fams])

    q_batch = torch.func.vmap(q_of)
    K, R, B = int(max(cfg.ks)), int(cfg.sgd_walk_draws), int(cfg.sgd_batch)
    gen = _gen(cfg, "sgd_walk_batches", b, i)
    ks = np.asarray(cfg.ks)
    rows, chunk = [], max(1, 20_000 // K)
    for r0 in range(0, R, chunk):
        r1 = min(R, r0 + chunk)
        idx = torch.multinomial(torch.ones((r1 - r0) * K, n), B, replacement=False,
                                generator=gen)
        Q = q_batch(F.embedding_bag(idx, G, mode="mean")).reshape(r1 - r0, K, -1)
        if r0 == 0:   # the batched walk against a loop over the first realisation's steps
            J = min(K, 16)
            loop = torch.stack([q_of(G[idx[j]].mean(0)) for j in range(J)])
            loop_diff = float((loop - Q[0, :J]).abs().max() / Q[0, :J].abs().max()
                              .clamp_min(1e-300))
        err = torch.cumsum(Q, 1).abs().amax(-1).numpy()[:, ks - 1]
        for r in range(r1 - r0):
            beta = np.polyfit(np.log(ks), np.log(err[r]), 1)[0]
            rows.append({"draw": r0 + r, "beta": float(beta), "loop_diff": loop_diff})
    return rows


def sgd_walks(cfg: Config) -> pd.DataFrame:
    """The frozen-gradient random walk of ``_task_sgd_walk`` for every block and seed of the
    early windows: block, seed, draw, beta (the k exponent of that realisation), loop_diff
    (the batched walk against a loop over the first realisation's first steps, relative)."""
    tasks = [{"block": b, "seed": s} for b in disc_blocks(cfg) for s in range(cfg.disc_seeds)]
    return _sweep(_task_sgd_walk, tasks, cfg, "cl_sgd_walk", rounds="seed")


@_f64
def _task_gradient(cfg: Config, task: dict) -> dict:
    b, i = task["block"], task["seed"]
    make, loss, _ = _teacher(cfg, b, i)
    return {"ratio": gradient_fd_ratio(make(), loss, n_dirs=cfg.fd_dirs, eps=cfg.fd_eps,
                                       seed=_gen(cfg, "fd_directions", b, i))}


def gradient_checks(cfg: Config) -> pd.DataFrame:
    """The training gradient against central differences of the loss, at the start of the
    smooth teacher-regression blocks (SwiGLU, RoPE attention; top-k routing is piecewise, so
    a finite difference may straddle a switch of the kept experts): block, seed, ratio (1 up
    to finite-difference error)."""
    return _sweep(_task_gradient, [{"block": b, "seed": 0} for b in ("swiglu", "mha_rope")],
                  cfg, "cl_gradient")


@_f64
def _task_identity(cfg: Config, task: dict) -> list[dict]:
    z = cfg.disc
    d, m, o = 2 * z["d"], 2 * z["m"], z["d"]
    make = lambda: SwiGLU(d, m, o, gen=_gen(cfg, "init", "identity", "student"))  # noqa: E731
    teacher = SwiGLU(d, m, o, gen=_gen(cfg, "init", "identity", "teacher"))
    _, _, loss = teacher_regression(make(), teacher, cfg.n_reg, (d,),
                                    seed=_gen(cfg, "teacher_data", "identity"))
    model = make()
    tr = train(model, loss, L.laws_for(model), optimizer="gd", tau=cfg.id_tau,
               steps=cfg.wd_steps if task["wd"] > 0 else cfg.id_steps, weight_decay=task["wd"])
    h = np.abs(tr.h["swiglu"]).sum(1)
    return [{"k": kk, "abs_h": h[kk], "err": tr.error()[kk],
             "identity_residual": tr.identity_residual(), "wd_residual": tr.wd_residual()}
            for kk in range(len(h))]


def identity_runs(cfg: Config) -> pd.DataFrame:
    """SwiGLU (twice the discrete sizes) trained by GD without weight decay (``id_steps``
    steps) and with it (``wd_steps``): wd, k, abs_h (``sum_i |h_i|``), err, identity_residual,
    wd_residual."""
    return _sweep(_task_identity, [{"wd": 0.0}, {"wd": cfg.wd_lambda}], cfg, "cl_identity")


@_f64
def _task_matched(cfg: Config, task: dict) -> list[dict]:
    make, loss, _ = _teacher(cfg, task["block"], task["seed"])
    lam = sharpness(make(), loss)
    with torch.no_grad():
        target = cfg.match_fraction * float(loss(make(), None))
    runs, lam_ref = {}, lam
    if task["opt"] == "gd":
        # GD tracks the flow only while tau times the sharpness *along the path* stays small;
        # small blocks can sharpen many times over before the loss halves. So the grid is
        # placed by lam_ref = max(sharpness at the start, at the crossing of a probe run with
        # the smallest step), a property of the problem (the flow path), not of the drift.
        probe = make()
        tr0 = train(probe, loss, L.laws_for(probe), optimizer="gd",
                    tau=float(cfg.match_tl[0] / lam), steps=cfg.match_max_steps,
                    stop_loss=target)
        if 0 < tr0.steps < cfg.match_max_steps:
            lam_ref = max(lam, sharpness(probe, loss))
        if lam_ref == lam:
            runs[float(cfg.match_tl[0] / lam)] = (probe, tr0)
        lrs = np.asarray(cfg.match_tl) / lam_ref
        # out of reach: the smallest step would need more than match_max_steps (decided
        # from the probe's crossing time, before the grid runs)
        need = tr0.steps * lam_ref / lam
        if not 0 < tr0.steps < cfg.match_max_steps or need > cfg.match_max_steps:
            return [{"lr": float(lr), "lam": lam, "lam_ref": lam_ref, "k_star": -1,
                     "drift": np.nan, "in_reach": False} for lr in lrs]
    else:
        lrs = np.asarray(cfg.match_adam_lr)
    rows = []
    for lr in lrs:
        if float(lr) in runs:
            model, tr = runs[float(lr)]
        else:
            model = make()
            tr = train(model, loss, L.laws_for(model), optimizer=task["opt"], tau=float(lr),
                       steps=cfg.match_max_steps, stop_loss=target)
        k = tr.steps
        drift = np.nan
        if 0 < k < cfg.match_max_steps:
            # the drift where the loss crosses the target, interpolated between steps k - 1
            # and k (linear in the loss), so that the whole step k* does not bias the slope
            with torch.no_grad():
                l_k = float(loss(model, None))
            err, l_prev = tr.error(), float(tr.loss[-1])
            frac = (l_prev - target) / (l_prev - l_k) if l_prev > l_k else 1.0
            drift = float(err[k - 1] + frac * (err[k] - err[k - 1]))
        rows.append({"lr": float(lr), "lam": lam, "lam_ref": lam_ref, "k_star": k,
                     "drift": drift, "in_reach": True})
    return rows


def matched_progress(cfg: Config) -> pd.DataFrame:
    """Drift at matched learning progress (loss down to match_fraction of its initial value,
    the crossing interpolated between two steps): block, opt (gd / adam), seed, lr, lam,
    lam_ref (GD: the sharpness that places the step grid), k_star, drift, in_reach (False:
    GD at this seed would need more than match_max_steps at its smallest step).

    The GD steps are placed by the sharpness *along the flow path*: the larger of
    lambda_max at the start and where a probe run with the smallest step crosses the
    target. Small blocks can sharpen many times over before the loss halves, and steps
    placed by the initial sharpness would then run at the edge of stability, not along
    the flow. The probe decides ``in_reach`` before any drift is measured."""
    tasks = [{"block": b, "opt": o, "seed": s} for b in ("swiglu", "mha_rope")
             for o in ("gd", "adam") for s in range(cfg.match_seeds)]
    return _sweep(_task_matched, tasks, cfg, "cl_matched", rounds="seed")


# --------------------------------------------------------------------------- real data
def _lm_data(cfg):
    from .. import datasets
    if cfg.scale in ("paper", "full"):
        return datasets.wikitext(max_vocab=2_000)
    return datasets.text_tokens(level="chars")


def _make_lm(cfg, V, run):
    z = cfg.lm_dim
    return TinyLM(V, z["d"], z["H"], z["dk"], z["dv"], z["T"], z["E"], z["m"], topk=2,
                  n_layers=z.get("L", 1), gen=_gen(cfg, "init", "lm", run)).to(_dev(cfg))


@_f64
def _task_lm_window(cfg: Config, task: dict) -> list[dict]:
    tokens = _lm_data(cfg)
    z, seed = cfg.lm_dim, task["seed"]
    x, y = lm_batch(tokens.ids, z["B"], z["T"], seed=seeds.numpy(cfg.seed, "lm_windows", seed))
    loss = ce_loss(x.to(_dev(cfg)), y.to(_dev(cfg)))
    lam = sharpness(_make_lm(cfg, tokens.vocab_size, seed), loss)
    rows = []
    for tl in sorted(set(cfg.lm_windows) | {cfg.early_tl}):
        w = early_window(lambda: _make_lm(cfg, tokens.vocab_size, seed), loss,
                         lambda m: m.law_families(), tl_max=tl, ks=cfg.lm_ks,
                         ratios=cfg.tau_ratios, lam=lam)
        for i, tr in enumerate(w.trajs):
            rs = [n for n in tr.h if n.startswith("router_sum")]
            router = tr.error(rs).max()
            for j, kk in enumerate(w.ks):
                rows.append({"window": tl, "tau": w.taus[i], "lam": lam, "k": int(kk),
                             "err": w.err[i, j], "router": router, "data": tokens.name})
    return rows


@_f64
def lm_step_seconds(cfg: Config) -> float:
    """Cost estimate of one recorded GD step of the chapter's LM on its batch (B x T tokens),
    from its parameter count and the device's float64 rate (no training step is run:
    at paper on a CPU one step takes about 9 s)."""
    tokens = _lm_data(cfg)
    z = cfg.lm_dim
    return _step_seconds(_make_lm(cfg, tokens.vocab_size, 0), z["B"] * z["T"],
                         cfg.device)


def lm_windows(cfg: Config, step_s: float | None = None) -> pd.DataFrame | None:
    """Char-LM drift on tau x k grids for several windows: seed, window, tau, lam, k, err,
    router, data; one round per seed. With ``step_s`` (``lm_step_seconds``) the sweep runs
    only when the budget affords one seed's windows (else ``None``, reason in
    ``skip_reasons``)."""
    if step_s is not None:
        n = len(set(cfg.lm_windows) | {cfg.early_tl})
        ok, why = affordable("cl_lm_windows", step_s * _window_steps(cfg, n, cfg.lm_ks))
        if not ok:
            skip_reasons["cl_lm_windows"] = why
            return None
    return _sweep(_task_lm_window, [{"seed": s} for s in range(cfg.lm_seeds)], cfg,
                  "cl_lm_windows", rounds="seed")


#: sweep name -> why a budget guard left it out in this process (shown by the chapter)
skip_reasons: dict[str, str] = {}


@_f64
def _task_lm_long(cfg: Config, task: dict) -> list[dict]:
    tokens = _lm_data(cfg)
    z = cfg.lm_dim
    x, y = lm_batch(tokens.ids, z["B"], z["T"],
                    seed=seeds.numpy(cfg.seed, "lm_windows", "long"))
    loss = ce_loss(x.to(_dev(cfg)), y.to(_dev(cfg)))
    opt = task["opt"]
    tau = cfg.lm_long_tau * (cfg.adam_lr_scale / 10 if opt == "adam" else 1.0)
    kw = {"n_data": z["B"], "batch_size": z["B"] // 4} if opt == "sgd" else {}
    m = _make_lm(cfg, tokens.vocab_size, "long")
    tr = train(m, loss, m.law_families(), optimizer=opt, tau=tau, steps=cfg.lm_long_steps,
               seed=_seed(cfg, "sgd_batches", "lm_long"), **kw)
    rows = []
    for fam in ("qk_rope", "vo", "experts", "router_sum"):
        members = [n for n in tr.h if n.split(".")[0] == fam]
        err = tr.error(members)
        for kk in range(1, len(err)):
            rows.append({"lr": tau, "family": fam, "k": kk, "err": err[kk],
                         "loss": tr.loss[kk - 1], "gnorm": float(np.sqrt(tr.gsq[kk - 1]))})
    return rows


def lm_long(cfg: Config, step_s: float | None = None) -> pd.DataFrame | None:
    """Char-LM laws along longer GD / SGD / Adam runs: opt, lr, family, k, err, loss, gnorm
    (shown, no claim). With ``step_s`` it runs only when the budget affords the three runs
    (else ``None``)."""
    if step_s is not None:
        ok, why = affordable("cl_lm_long", 3 * step_s * cfg.lm_long_steps)
        if not ok:
            skip_reasons["cl_lm_long"] = why
            return None
    return _sweep(_task_lm_long, [{"opt": o} for o in ("gd", "sgd", "adam")], cfg, "cl_lm_long")


def _vit_problem(cfg: Config, run: int):
    """(make, loss, tokens) of the ViT: digits (CIFAR-10 in grey levels at paper / full when
    on disk), ``vit_n`` images in patches; tokens = images x patches."""
    from .. import datasets
    split = (datasets.cifar("cifar10", seed=cfg.seed) if cfg.scale in ("paper", "full")
             else datasets.digits(seed=cfg.seed, images=True))
    imgs = torch.as_tensor(split.X_train[: cfg.vit_n]).mean(1)
    Xv = patchify(imgs, cfg.vit_dim["patch"] if imgs.shape[-1] == 8 else 4)
    yv = torch.as_tensor(split.y_train[: cfg.vit_n])
    loss = ce_loss(Xv.to(_dev(cfg)), yv.to(_dev(cfg)))
    z = cfg.vit_dim

    def make():
        return TinyViT(Xv.shape[2], Xv.shape[1], z["d"], z["H"], z["dk"], z["dv"], z["m"],
                       split.n_classes, gen=_gen(cfg, "init", "vit", run)).to(_dev(cfg))
    return make, loss, Xv.shape[0] * Xv.shape[1]


@_f64
def vit_step_seconds(cfg: Config) -> float:
    """Cost estimate of one recorded GD step of the ViT on its ``vit_n`` images (patches as
    tokens), as for ``lm_step_seconds``."""
    make, _, tokens = _vit_problem(cfg, 0)
    return _step_seconds(make(), tokens, cfg.device)


@_f64
def _task_vit(cfg: Config, task: dict) -> list[dict]:
    make, loss, _ = _vit_problem(cfg, task["seed"])
    lam = sharpness(make(), loss)
    rows = []
    for tl in (cfg.early_tl, rules.late_window(cfg)):
        w = early_window(make, loss, lambda m: m.law_families(), tl_max=tl, ks=cfg.vit_ks,
                         ratios=cfg.tau_ratios, lam=lam)
        for i in range(len(w.taus)):
            for j, kk in enumerate(w.ks):
                rows.append({"window": tl, "tau": w.taus[i], "lam": lam, "k": int(kk),
                             "err": w.err[i, j]})
    return rows


def vit_windows(cfg: Config, step_s: float | None = None) -> pd.DataFrame | None:
    """Digits ViT drift on the early and the late window (``rules.late_window``): seed, window, tau, lam, k, err;
    one round per seed. With ``step_s`` (a step's cost, e.g. ``vit_step_seconds``) it runs
    only when the budget affords one seed (else ``None``)."""
    if step_s is not None:
        ok, why = affordable("cl_vit", step_s * _window_steps(cfg, 2, cfg.vit_ks))
        if not ok:
            skip_reasons["cl_vit"] = why
            return None
    return _sweep(_task_vit, [{"seed": s} for s in range(cfg.vit_seeds)], cfg, "cl_vit",
                  rounds="seed")

