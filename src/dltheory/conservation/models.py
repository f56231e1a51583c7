"""Reference blocks for the conservation-law chapter, all with ``bias=False``.

Every block maps one sample to one output and also accepts a leading batch dimension:

* token-wise blocks (``FFN``, ``SwiGLU``, ``MoE``): ``x`` (..., d) -> (..., o);
* sequence blocks (``MHA``, ``Residual``/``Chain`` of them): ``X`` (..., T, d) -> (..., T, d).

Weights follow PyTorch's ``nn.Linear`` layout (out x in), i.e. the *transpose* of the paper's
row-vector matrices: the paper's ``A`` of ``sigma(xA)C`` is ``first.weight.T``.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from .. import seeds

ACTIVATIONS = {
    "linear": lambda z: z,
    "relu": F.relu,
    "gelu": F.gelu,
    "silu": F.silu,
}
GATES = ("softmax", "sigmoid", "sigmoid_norm", "sigmoid_topk_norm", "sigmoid_centred",
         "sigmoid_bias")
NORMS = ("rms", "layer")
PE_KINDS = (None, "sin", "rope")
ROPE_STYLES = ("interleaved", "half")


def _check_pos(**kw):
    for k, v in kw.items():
        if int(v) != v or v < 1:
            raise ValueError(f"{k} must be a positive integer, got {v!r}")


def _check_act(act: str) -> str:
    if act not in ACTIVATIONS:
        raise ValueError(f"act must be one of {sorted(ACTIVATIONS)}, got {act!r}")
    return act


def generator(seed, *names) -> torch.Generator:
    """The torch generator a function of the chapter draws from: ``seed`` itself when it is a
    ``torch.Generator`` (the caller chose the stream), else the named stream
    ``seeds.torch(seed, *names)`` (``names`` say what is drawn)."""
    if isinstance(seed, torch.Generator):
        return seed
    return seeds.torch(int(seed), *names)


def _init(w: torch.Tensor, gen: torch.Generator | None, gain: float = 1.0) -> None:
    """Gaussian init N(0, gain^2 / fan_in) with an explicit generator (no global RNG)."""
    fan_in = w.shape[-1]
    with torch.no_grad():
        w.copy_(torch.randn(w.shape, generator=gen, dtype=w.dtype) * gain / math.sqrt(fan_in))


class FFN(nn.Module):
    """Two-layer FFN ``y = C^T act(A^T x)``: ``first`` (m, d) = A^T, ``second`` (o, m) = C^T.

    act in {"linear", "relu", "gelu", "silu"}. Paper form (row vectors): ``sigma(xA)C``.
    """

    def __init__(self, d: int, m: int, o: int, act: str = "gelu", *, gen=None, gain=1.0):
        super().__init__()
        _check_pos(d=d, m=m, o=o)
        self.act = _check_act(act)
        self.first = nn.Linear(d, m, bias=False)
        self.second = nn.Linear(m, o, bias=False)
        for lin in (self.first, self.second):
            _init(lin.weight, gen, gain)

    def forward(self, x):  # (..., d) -> (..., o)
        return self.second(ACTIVATIONS[self.act](self.first(x)))


class SwiGLU(nn.Module):
    """``y = down(act(gate x) * up x)`` (LLaMA ``w2(silu(w1 x) * w3 x)``).

    gate, up: (m, d); down: (o, m). Paper: ``(SiLU(xB) . xA) C`` with A = up^T (linear
    branch), B = gate^T, C = down^T. act="silu" is SwiGLU, "gelu" GeGLU, "relu" ReGLU,
    "linear" the bilinear GLU.
    """

    def __init__(self, d: int, m: int, o: int | None = None, act: str = "silu", *, gen=None,
                 gain=1.0):
        super().__init__()
        o = d if o is None else o
        _check_pos(d=d, m=m, o=o)
        self.act = _check_act(act)
        self.gate = nn.Linear(d, m, bias=False)
        self.up = nn.Linear(d, m, bias=False)
        self.down = nn.Linear(m, o, bias=False)
        for lin in (self.gate, self.up, self.down):
            _init(lin.weight, gen, gain)

    def forward(self, x):  # (..., d) -> (..., o)
        return self.down(ACTIVATIONS[self.act](self.gate(x)) * self.up(x))


def rope_angles(T: int, dk: int, base: float = 10_000.0, dtype=None):
    """cos, sin of the RoPE angles ``n * omega_j``, ``omega_j = base^(-2j/dk)``: each (T, dk/2)."""
    if dk % 2:
        raise ValueError(f"RoPE needs an even head dimension, got dk={dk}")
    omega = base ** (-torch.arange(dk // 2, dtype=dtype) * 2.0 / dk)
    ang = torch.arange(T, dtype=dtype)[:, None] * omega[None, :]
    return torch.cos(ang), torch.sin(ang)


def apply_rope(x, cos, sin, style: str = "interleaved"):
    """Rotate (..., T, dk) by position: pair j is columns {2j, 2j+1} (interleaved, RoFormer /
    Meta LLaMA) or {j, j + dk/2} (half, HF ``rotate_half`` / GPT-NeoX)."""
    if style == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)
    if style == "half":
        h = x.shape[-1] // 2
        x1, x2 = x[..., :h], x[..., h:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)
    raise ValueError(f"rope style must be one of {ROPE_STYLES}, got {style!r}")


def sinusoidal_pe(T: int, d: int, dtype=None):
    """Fixed sinusoidal positional encoding P (T, d) (Vaswani et al. 2017)."""
    pos = torch.arange(T, dtype=dtype)[:, None]
    i = torch.arange(d, dtype=dtype)[None, :]
    ang = pos / 10_000.0 ** (2 * torch.div(i, 2, rounding_mode="floor") / d)
    return torch.where(i % 2 == 0, torch.sin(ang), torch.cos(ang))


class MHA(nn.Module):
    """Multi-head attention ``sum_i softmax(X Q_i K_i^T X^T / sqrt(dk)) X V_i O_i^T``.

    Weights (nn.Linear layout): ``q``, ``k``: (H*dk, d); ``v``: (H*dv, d); ``o``: (d, H*dv).
    Head i: ``Q_i = q.weight[i*dk:(i+1)*dk].T`` (d, dk), ``O_i = o.weight[:, i*dv:(i+1)*dv]``.
    pe: None, "sin" (X + P before the block) or "rope" (rotate q, k per position, pairing
    ``rope_style``). ``T`` is the sequence length the PE tables are built for.
    """

    def __init__(self, d: int, H: int, dk: int, dv: int, T: int, *, pe=None,
                 rope_style: str = "interleaved", causal: bool = False, qk_norm: bool = False,
                 gen=None, gain=1.0):
        super().__init__()
        _check_pos(d=d, H=H, dk=dk, dv=dv, T=T)
        self.qk_norm = bool(qk_norm)
        if pe not in PE_KINDS:
            raise ValueError(f"pe must be one of {PE_KINDS}, got {pe!r}")
        if rope_style not in ROPE_STYLES:
            raise ValueError(f"rope_style must be one of {ROPE_STYLES}, got {rope_style!r}")
        self.d, self.H, self.dk, self.dv, self.T = d, H, dk, dv, T
        self.pe, self.rope_style, self.causal = pe, rope_style, causal
        self.q = nn.Linear(d, H * dk, bias=False)
        self.k = nn.Linear(d, H * dk, bias=False)
        self.v = nn.Linear(d, H * dv, bias=False)
        self.o = nn.Linear(H * dv, d, bias=False)
        for lin in (self.q, self.k, self.v, self.o):
            _init(lin.weight, gen, gain)
        dt = self.q.weight.dtype
        if pe == "rope":
            cos, sin = rope_angles(T, dk, dtype=dt)
            self.register_buffer("cos", cos, persistent=False)
            self.register_buffer("sin", sin, persistent=False)
        if pe == "sin":
            self.register_buffer("P", sinusoidal_pe(T, d, dtype=dt), persistent=False)

    def forward(self, X):  # (..., T, d) -> (..., T, d)
        T = X.shape[-2]
        if self.pe == "sin":
            X = X + self.P[:T]
        lead = X.shape[:-2]
        q = self.q(X).unflatten(-1, (self.H, self.dk)).transpose(-2, -3)  # (..., H, T, dk)
        k = self.k(X).unflatten(-1, (self.H, self.dk)).transpose(-2, -3)
        v = self.v(X).unflatten(-1, (self.H, self.dv)).transpose(-2, -3)  # (..., H, T, dv)
        if self.qk_norm:  # RMS normalisation of every query and key (no gain, no epsilon)
            q = q / q.pow(2).mean(-1, keepdim=True).sqrt()
            k = k / k.pow(2).mean(-1, keepdim=True).sqrt()
        if self.pe == "rope":
            q = apply_rope(q, self.cos[:T], self.sin[:T], self.rope_style)
            k = apply_rope(k, self.cos[:T], self.sin[:T], self.rope_style)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)  # (..., H, T, T)
        if self.causal:
            mask = torch.ones(T, T, dtype=torch.bool, device=X.device).triu(1)
            s = s.masked_fill(mask, float("-inf"))
        a = torch.softmax(s, -1) @ v  # (..., H, T, dv)
        return self.o(a.transpose(-2, -3).reshape(*lead, T, self.H * self.dv))


class MoE(nn.Module):
    """Mixture of SwiGLU experts ``y = sum_e g_e(x) E_e(x)`` with router ``z = router(x)``.

    router: (E, d) (rows W_e); experts stacked: gate, up (E, m, d), down (E, o, m).
    gate: "softmax"; the sigmoid variants "sigmoid" sigma(z), "sigmoid_norm"
    sigma(z) / sum sigma(z), "sigmoid_topk_norm" sigma(z) renormalised over the kept top-k
    experts (needs topk), "sigmoid_centred" sigma(z - mean(z)), "sigmoid_bias" sigma(z + b)
    with one learnable bias b shared by all experts (parameter ``router_bias``).
    topk None = dense. Top-k keeps the k largest logits: ``renorm=True`` gives softmax over
    the kept logits, ``renorm=False`` the dense softmax weights times the mask (Switch style
    for k = 1).
    """

    def __init__(self, d: int, m: int, E: int, o: int | None = None, *, gate="softmax",
                 topk: int | None = None, renorm: bool = False, gen=None, gain=1.0):
        super().__init__()
        o = d if o is None else o
        _check_pos(d=d, m=m, E=E, o=o)
        if gate not in GATES:
            raise ValueError(f"gate must be one of {GATES}, got {gate!r}")
        if topk is not None and not 1 <= topk <= E:
            raise ValueError(f"topk must be in [1, E={E}] or None, got {topk!r}")
        if gate == "sigmoid_topk_norm" and topk is None:
            raise ValueError("gate 'sigmoid_topk_norm' needs topk in [1, E]")
        self.gate_kind, self.topk, self.renorm = gate, topk, renorm
        self.router = nn.Linear(d, E, bias=False)
        self.w_gate = nn.Parameter(torch.empty(E, m, d))
        self.w_up = nn.Parameter(torch.empty(E, m, d))
        self.w_down = nn.Parameter(torch.empty(E, o, m))
        for w in (self.router.weight, self.w_gate, self.w_up, self.w_down):
            _init(w, gen, gain)
        if gate == "sigmoid_bias":
            self.router_bias = nn.Parameter(
                torch.randn(1, generator=gen, dtype=self.w_up.dtype))

    def gates(self, x):
        """Routing weights g (..., E)."""
        z = self.router(x)
        if self.topk is not None:
            thr = torch.topk(z, self.topk, dim=-1).values[..., -1:]
            keep = z >= thr
        if self.gate_kind == "softmax":
            if self.topk is not None and self.renorm:
                return torch.softmax(z.masked_fill(~keep, float("-inf")), -1)
            g = torch.softmax(z, -1)
        elif self.gate_kind == "sigmoid":
            g = torch.sigmoid(z)
        elif self.gate_kind == "sigmoid_norm":
            s = torch.sigmoid(z)
            g = s / s.sum(-1, keepdim=True)
        elif self.gate_kind == "sigmoid_topk_norm":
            s = torch.sigmoid(z) * keep
            return s / s.sum(-1, keepdim=True)
        elif self.gate_kind == "sigmoid_centred":
            g = torch.sigmoid(z - z.mean(-1, keepdim=True))
        else:  # sigmoid_bias
            g = torch.sigmoid(z + self.router_bias)
        return g * keep if self.topk is not None else g

    def forward(self, x):  # (..., d) -> (..., o)
        h = F.silu(torch.einsum("emd,...d->...em", self.w_gate, x))
        h = h * torch.einsum("emd,...d->...em", self.w_up, x)  # (..., E, m)
        y = torch.einsum("eom,...em->...eo", self.w_down, h)  # (..., E, o)
        return (self.gates(x)[..., None] * y).sum(-2)


class Chain(nn.Module):
    """``attn`` then ``ffn`` on sequences (..., T, d), with or without residual connections:
    residual: ``Y = X + attn(X)``, ``Z = Y + ffn(Y)``; plain: ``Z = ffn(attn(X))``."""

    def __init__(self, attn: nn.Module, ffn: nn.Module, residual: bool = True):
        super().__init__()
        self.attn, self.ffn, self.residual = attn, ffn, residual

    def forward(self, X):
        if self.residual:
            Y = X + self.attn(X)
            return Y + self.ffn(Y)
        return self.ffn(self.attn(X))


class Norm(nn.Module):
    """RMSNorm (``kind="rms"``: ``gamma * x / rms(x)``) or LayerNorm (``"layer"``:
    ``gamma * (x - mean) / std + beta``) over the last axis, with epsilon = 0 so that the
    scale invariance ``Norm(c x) = Norm(x)`` is exact (inputs are never zero here)."""

    def __init__(self, d: int, kind: str = "rms"):
        super().__init__()
        _check_pos(d=d)
        if kind not in NORMS:
            raise ValueError(f"kind must be one of {NORMS}, got {kind!r}")
        self.kind = kind
        self.weight = nn.Parameter(torch.ones(d))
        if kind == "layer":
            self.bias = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        if self.kind == "layer":
            x = x - x.mean(-1, keepdim=True)
            return self.weight * x / x.pow(2).mean(-1, keepdim=True).sqrt() + self.bias
        return self.weight * x / x.pow(2).mean(-1, keepdim=True).sqrt()


class NormSwiGLU(nn.Module):
    """Pre-norm SwiGLU ``y = SwiGLU(Norm(x))``, or with ``proj=True`` ``SwiGLU(Norm(P x))``
    with a linear map P (d, d) before the normalisation (the previous layer's output map).
    Gains and biases are drawn at random (not 1 and 0) so that the parameters are generic."""

    def __init__(self, d: int, m: int, o: int, kind: str = "rms", *, proj: bool = False,
                 gen=None):
        super().__init__()
        self.kind, self.has_proj = kind, bool(proj)
        if proj:
            self.proj = nn.Linear(d, d, bias=False)
            _init(self.proj.weight, gen)
        self.norm = Norm(d, kind)
        with torch.no_grad():
            for p in self.norm.parameters():
                p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype))
        self.ffn = SwiGLU(d, m, o, gen=gen)

    def forward(self, x):
        return self.ffn(self.norm(self.proj(x) if self.has_proj else x))
