"""Conservation laws of each block, as functions of a parameter dict, and their counts.

A law family is a function ``params -> (n,)`` tensor of law values ``h(theta)``. All laws
here are quadratic forms ``h(theta) = theta^T S theta`` (or linear, the router sum), so one
GD step changes them by exactly ``tau^2 h(g)`` (quadratic) or ``0`` (linear): for a
quadratic family, ``q(g) = fn(grads)`` is the same function applied to the gradient dict.

Matrix-valued laws (``Q_i^T Q_i - K_i^T K_i``) contribute their upper-triangular entries.
Parameter names follow ``models.py``; ``prefix`` is prepended (``"attn."`` inside a Chain).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from .models import FFN, MHA, Chain, MoE, NormSwiGLU, SwiGLU


@dataclass(frozen=True)
class LawFamily:
    """name: short label ("qk", "vo", "swiglu", "router_sum", ...); fn: params -> (n,);
    kind: "quadratic" or "linear"."""

    name: str
    fn: Callable[[dict], torch.Tensor]
    kind: str = "quadratic"

    def __call__(self, params: dict) -> torch.Tensor:
        return self.fn(params)


def _triu(M):  # (..., n, n) -> (..., n(n+1)/2)
    n = M.shape[-1]
    i, j = torch.triu_indices(n, n, device=M.device)
    return M[..., i, j]


def _gram_rows(W):  # W (..., r, c): W W^T
    return W @ W.transpose(-1, -2)


# --------------------------------------------------------------------------- FFN / SwiGLU
def ffn_laws(prefix: str = "", diagonal: bool = False) -> LawFamily:
    """Linear net: ``A^T A - C C^T`` (m x m); ``diagonal=True``: the ReLU laws
    ``||A_{:,i}||^2 - ||C_{i,:}||^2`` (first.weight rows, second.weight columns)."""
    a, c = prefix + "first.weight", prefix + "second.weight"
    if diagonal:
        return LawFamily("relu", lambda p: (p[a] ** 2).sum(1) - (p[c] ** 2).sum(0))
    return LawFamily("linear", lambda p: _triu(p[a] @ p[a].T - p[c].T @ p[c]))


def swiglu_laws(prefix: str = "", branch: str = "up") -> LawFamily:
    """``||up[i,:]||^2 - ||down[:,i]||^2`` per hidden unit (paper: ``||A_{:,i}||^2 -
    ||C_{i,:}||^2``). ``branch="gate"`` is the negative control (gate instead of up)."""
    if branch not in ("up", "gate"):
        raise ValueError(f"branch must be 'up' or 'gate', got {branch!r}")
    a, c = prefix + branch + ".weight", prefix + "down.weight"
    return LawFamily(f"swiglu_{branch}" if branch == "gate" else "swiglu",
                     lambda p: (p[a] ** 2).sum(1) - (p[c] ** 2).sum(0))


# --------------------------------------------------------------------------- attention
def qk_laws(H: int, dk: int, prefix: str = "", mode: str = "full") -> LawFamily:
    """Query/key laws per head i (Q_i = q.weight[i-th block].T, (d, dk)).

    mode "full": ``Q_i^T Q_i - K_i^T K_i`` (dk x dk, upper triangle);
    "interleaved" / "half": RoPE block laws ``||Q_i^{(j)}||_F^2 - ||K_i^{(j)}||_F^2`` with pair
    j = columns {2j, 2j+1} / {j, j + dk/2}.
    """
    q, k = prefix + "q.weight", prefix + "k.weight"
    if mode == "full":
        def fn(p):
            Q, K = p[q].reshape(H, dk, -1), p[k].reshape(H, dk, -1)
            return _triu(_gram_rows(Q) - _gram_rows(K)).reshape(-1)
        return LawFamily("qk", fn)
    if mode not in ("interleaved", "half"):
        raise ValueError(f"mode must be 'full', 'interleaved' or 'half', got {mode!r}")
    shape = (H, dk // 2, 2, -1) if mode == "interleaved" else (H, 2, dk // 2, -1)
    pair_axis = 2 if mode == "interleaved" else 1

    def fn(p):
        Q, K = p[q].reshape(shape), p[k].reshape(shape)
        return ((Q ** 2).sum((pair_axis, 3)) - (K ** 2).sum((pair_axis, 3))).reshape(-1)
    return LawFamily("qk_rope", fn)


def vo_laws(H: int, dv: int, prefix: str = "") -> LawFamily:
    """``V_i^T V_i - O_i^T O_i`` per head (dv x dv, upper triangle)."""
    v, o = prefix + "v.weight", prefix + "o.weight"

    def fn(p):
        V = p[v].reshape(H, dv, -1)  # V_i^T: (dv, d)
        O = p[o].reshape(p[o].shape[0], H, dv).permute(1, 2, 0)  # O_i^T: (dv, d)
        return _triu(_gram_rows(V) - _gram_rows(O)).reshape(-1)
    return LawFamily("vo", fn)


# --------------------------------------------------------------------------- MoE
def expert_laws(prefix: str = "") -> LawFamily:
    """SwiGLU law of every expert: ``||w_up[e,i,:]||^2 - ||w_down[e,:,i]||^2`` (E*m values)."""
    u, dn = prefix + "w_up", prefix + "w_down"
    return LawFamily("experts", lambda p: ((p[u] ** 2).sum(2) - (p[dn] ** 2).sum(1)).reshape(-1))


#: Gates unchanged by a shift of all logits by the same amount, ``g(z + c 1) = g(z)``:
#: softmax (``e^{z_e + c} / sum e^{z + c}``) and the centred sigmoid ``sigma(z - mean z)``
#: (``z + c 1`` has the same centred logits). The others are not: ``sigma(z + c) != sigma(z)``
#: for c != 0; dividing by ``sum sigma(z)`` (over all or over the kept top-k) does not cancel
#: the shift, as sigma is not exponential; and a learnable bias shared by all experts,
#: ``sigma(z + b)``, cannot absorb a shift ``c = a.x`` that varies with the input. A top-k
#: mask is shift-invariant (the order of the logits is kept), so it does not change this.
SHIFT_INVARIANT = {"softmax": True, "sigmoid": False, "sigmoid_norm": False,
                   "sigmoid_topk_norm": False, "sigmoid_centred": True, "sigmoid_bias": False}


def shift_invariant(gate: str) -> bool:
    """Whether the router gate ``gate`` (``models.GATES``) is unchanged by adding the same
    number to every logit: exactly then does the router translation ``W_e -> W_e + a`` (all
    e, any a in R^d) leave the MoE unchanged, giving the d linear laws ``sum_e W_e``."""
    if gate not in SHIFT_INVARIANT:
        raise ValueError(f"gate must be one of {sorted(SHIFT_INVARIANT)}, got {gate!r}")
    return SHIFT_INVARIANT[gate]


def router_sum(prefix: str = "") -> LawFamily:
    """The linear law ``sum_e W_e`` (d values) of a shift-invariant gate (``shift_invariant``):
    softmax(z + c 1) = softmax(z), so ``W_e -> W_e + a`` for every e is a symmetry."""
    r = prefix + "router.weight"
    return LawFamily("router_sum", lambda p: p[r].sum(0), kind="linear")


def moe_count(model: nn.Module) -> int:
    """Law count of a mixture of SwiGLU experts, derived from its symmetries for any gate.

    (a) Inside expert e, unit i: ``(up[e,i,:], down[e,:,i]) -> (lam up, down / lam)`` leaves
    the expert, hence the MoE, unchanged whatever the gate: E*m laws
    ``||up[e,i,:]||^2 - ||down[e,:,i]||^2``. (b) The router translation ``W_e -> W_e + a``
    (every e, a in R^d) shifts every logit by ``a.x``; it leaves the MoE unchanged exactly
    when the gate is shift-invariant (``shift_invariant``), and then gives the d laws
    ``sum_e W_e``. No other continuous symmetry is present for generic parameters (the gate
    branch is not homogeneous, the experts are distinct). So ``E*m + d`` for softmax and the
    centred sigmoid, ``E*m`` for sigmoid(z), sigmoid(z)/sum, top-k-renormalised sigmoid and
    sigmoid(z + b). Top-1 routing renormalised over the kept expert (softmax or sigmoid) has
    g = 1 and a frozen router: ``renorm_top1_count`` (E m + E d), refused here."""
    if not isinstance(model, MoE):
        raise TypeError(f"moe_count needs an MoE, got {type(model).__name__}")
    if model.topk == 1 and (model.renorm or model.gate_kind == "sigmoid_topk_norm"):
        raise ValueError("top-1 routing renormalised over the kept expert freezes the router "
                         "(g = 1): see renorm_top1_count")
    E, m, d = model.w_up.shape
    return E * m + (d if shift_invariant(model.gate_kind) else 0)


def renorm_top1_count(model: nn.Module) -> int:
    """Top-1 routing renormalised over the kept expert, with a softmax gate or a sigmoid one
    (``gate="sigmoid_topk_norm"``, ``topk=1``): ``g_e(x) = s_e / s_e = 1`` for the kept
    expert, whatever ``s`` is (``exp`` or ``sigma``), so the output ``E_{e*(x)}(x)`` depends on
    the router only through the argmax, which is locally constant: the router gets no
    gradient, and every router weight is conserved (E d laws). Inside each expert the SwiGLU
    rescaling stays (E m laws); nothing else, for generic parameters. E m + E d laws."""
    if not (isinstance(model, MoE) and model.topk == 1
            and ((model.renorm and model.gate_kind == "softmax")
                 or model.gate_kind == "sigmoid_topk_norm")):
        raise ValueError("renorm_top1_count needs an MoE with topk=1 renormalised over the "
                         "kept expert (softmax with renorm=True, or gate='sigmoid_topk_norm')")
    E, m, d = model.w_up.shape
    return E * m + E * d


# --------------------------------------------------------------------------- normalisation
def qknorm_laws(H: int, dk: int, prefix: str = "") -> LawFamily:
    """With QK-norm each of Q_i and K_i is scale-invariant: ``||Q_i||_F^2`` and
    ``||K_i||_F^2`` are conserved separately (2 per head)."""
    q, k = prefix + "q.weight", prefix + "k.weight"

    def fn(p):
        Q, K = p[q].reshape(H, -1), p[k].reshape(H, -1)
        return torch.cat([(Q ** 2).sum(1), (K ** 2).sum(1)])
    return LawFamily("qk_norm", fn)


def norm_gain_laws(prefix: str = "") -> LawFamily:
    """Cross-layer law of a norm gain and the next SwiGLU's input maps, per coordinate j:
    ``gamma_j^2 (+ beta_j^2) - ||gate[:, j]||^2 - ||up[:, j]||^2`` (scaling gamma_j, beta_j
    by c and column j of gate and up by 1/c leaves both pre-activations unchanged)."""
    g, b = prefix + "norm.weight", prefix + "norm.bias"
    gt, up = prefix + "ffn.gate.weight", prefix + "ffn.up.weight"

    def fn(p):
        h = p[g] ** 2 - (p[gt] ** 2).sum(0) - (p[up] ** 2).sum(0)
        return h + p[b] ** 2 if b in p else h
    return LawFamily("norm_gain", fn)


def scale_law(name: str) -> LawFamily:
    """``||P||_F^2`` for a weight P whose output feeds a normalisation (Norm(cPx) = Norm(Px))."""
    return LawFamily("scale", lambda p: (p[name] ** 2).sum().reshape(1))


def column_sum_law(name: str) -> LawFamily:
    """``1^T P`` (d linear laws): LayerNorm removes a shift common to all coordinates."""
    return LawFamily("column_sum", lambda p: p[name].sum(0), kind="linear")


# --------------------------------------------------------------------------- dispatch
def laws_for(model: nn.Module, prefix: str = "") -> list[LawFamily]:
    """The claimed law families of a block (the paper's theorems, our parametrisation)."""
    if isinstance(model, FFN):
        if model.act == "linear":
            return [ffn_laws(prefix)]
        return [ffn_laws(prefix, diagonal=True)] if model.act == "relu" else []
    if isinstance(model, SwiGLU):
        return [swiglu_laws(prefix)]
    if isinstance(model, MHA):
        if model.qk_norm:
            if model.pe == "rope":
                raise ValueError("no laws stated for QK-norm combined with RoPE")
            return [qknorm_laws(model.H, model.dk, prefix), vo_laws(model.H, model.dv, prefix)]
        mode = model.rope_style if model.pe == "rope" else "full"
        return [qk_laws(model.H, model.dk, prefix, mode), vo_laws(model.H, model.dv, prefix)]
    if isinstance(model, NormSwiGLU):
        fams = [swiglu_laws(prefix + "ffn."), norm_gain_laws(prefix)]
        if model.has_proj:
            fams.append(scale_law(prefix + "proj.weight"))
            if model.kind == "layer":
                fams.append(column_sum_law(prefix + "proj.weight"))
        return fams
    if isinstance(model, MoE):
        fams = [expert_laws(prefix)]
        if shift_invariant(model.gate_kind):
            fams.append(router_sum(prefix))
        return fams
    if isinstance(model, Chain):
        return laws_for(model.attn, prefix + "attn.") + laws_for(model.ffn, prefix + "ffn.")
    raise TypeError(f"no laws known for {type(model).__name__}")


def theory_count(model: nn.Module) -> int:
    """Number of functionally independent laws predicted for generic parameters.

    FFN: linear m(m+1)/2, relu m, gelu/silu 0; SwiGLU m; MHA H[dk(dk+1)/2 + dv(dv+1)/2];
    MHA+RoPE H[dk/2 + dv(dv+1)/2]; MoE: E*m + d * [the gate is shift-invariant] (see
    ``moe_count``); residual Chain: the sum. Raises ValueError where no count is derived.
    """
    if isinstance(model, FFN):
        m = model.first.weight.shape[0]
        return {"linear": m * (m + 1) // 2, "relu": m, "gelu": 0, "silu": 0}[model.act]
    if isinstance(model, SwiGLU):
        if model.act != "silu":
            raise ValueError(f"no stated count for the {model.act} GLU variant")
        return model.up.weight.shape[0]
    if isinstance(model, MHA):
        vo = model.dv * (model.dv + 1) // 2
        if model.qk_norm:  # derived: Q_i, K_i each scale-invariant; only rotations mix them
            if model.pe == "rope":
                raise ValueError("no stated count for QK-norm combined with RoPE")
            return model.H * (2 + vo)
        qk = model.dk // 2 if model.pe == "rope" else model.dk * (model.dk + 1) // 2
        return model.H * (qk + vo)
    if isinstance(model, MoE):
        return moe_count(model)
    if isinstance(model, NormSwiGLU):  # derived from the symmetries (not the paper's)
        d, m = model.ffn.up.weight.shape[1], model.ffn.up.weight.shape[0]
        extra = 0 if not model.has_proj else (1 + d if model.kind == "layer" else 1)
        return m + d + extra
    if isinstance(model, Chain):
        if not model.residual:
            raise ValueError("no stated count for the non-residual composition")
        return theory_count(model.attn) + theory_count(model.ffn)
    raise TypeError(f"no count known for {type(model).__name__}")


def negative_control(name: str, model: nn.Module) -> LawFamily:
    """Wrong 'laws' that must NOT be conserved.

    gelu_relu_law / silu_relu_law: the ReLU law on a smooth FFN; swiglu_gate_branch: the
    gate branch instead of up; rope_wrong_pairing: the other RoPE pairing; rope_full_qk: the
    full ``Q^T Q - K^T K`` under RoPE; moe_sigmoid_router_sum: ``sum_e W_e`` with sigmoid gates.
    """
    if name in ("gelu_relu_law", "silu_relu_law"):
        return ffn_laws(diagonal=True)
    if name == "swiglu_gate_branch":
        return swiglu_laws(branch="gate")
    if name == "rope_wrong_pairing":
        wrong = "half" if model.rope_style == "interleaved" else "interleaved"
        return qk_laws(model.H, model.dk, mode=wrong)
    if name == "rope_full_qk":
        return qk_laws(model.H, model.dk, mode="full")
    if name == "moe_sigmoid_router_sum":
        return router_sum()
    raise ValueError(f"unknown negative control {name!r}")


def law_values(families: list[LawFamily], params: dict) -> dict[str, torch.Tensor]:
    """Evaluate each family: {name: (n,) tensor} (detached)."""
    with torch.no_grad():
        return {f.name: f(params).detach().clone() for f in families}
