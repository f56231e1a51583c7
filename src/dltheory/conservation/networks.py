"""Small networks built from the blocks (a character LM, a digits ViT) and the tasks the
discrete-time experiments train on.

Inside a larger network a block's laws are unchanged: the gradient with respect to the
block's parameters is always a combination of the block's own Jacobian rows.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .. import seeds
from .laws import LawFamily, laws_for
from .models import MHA, MoE, SwiGLU, _init, generator


class TinyLM(nn.Module):
    """Embedding -> n_layers x [RoPE-MHA (causal) -> top-k SwiGLU-MoE] -> unembedding, with
    residuals and no normalisation layers.

    ids (B, T) int -> logits (B, T, V). Per layer: ``Y = X + attn(X)``, ``X' = Y + moe(Y)``.
    Layer l's parameters are ``layers.l.attn.*`` and ``layers.l.moe.*``.
    """

    def __init__(self, V: int, d: int, H: int, dk: int, dv: int, T: int, E: int, m: int,
                 topk: int = 2, *, n_layers: int = 1, gen=None):
        super().__init__()
        if int(n_layers) != n_layers or n_layers < 1:
            raise ValueError(f"n_layers must be a positive integer, got {n_layers!r}")
        self.emb = nn.Embedding(V, d)
        with torch.no_grad():
            self.emb.weight.copy_(torch.randn(V, d, generator=gen, dtype=self.emb.weight.dtype))
        self.layers = nn.ModuleList(
            nn.ModuleDict({"attn": MHA(d, H, dk, dv, T, pe="rope", causal=True, gen=gen),
                           "moe": MoE(d, m, E, topk=topk, gen=gen)})
            for _ in range(int(n_layers)))
        self.unembed = nn.Linear(d, V, bias=False)
        _init(self.unembed.weight, gen)

    def forward(self, ids):
        X = self.emb(ids)
        for layer in self.layers:
            Y = X + layer["attn"](X)
            X = Y + layer["moe"](Y)
        return self.unembed(X)

    def law_families(self) -> list[LawFamily]:
        """The block laws of every layer; family names get the suffix ``.l`` for layers
        l >= 1 (layer 0 keeps the plain names: qk_rope, vo, experts, router_sum)."""
        fams = []
        for i, layer in enumerate(self.layers):
            for f in (laws_for(layer["attn"], f"layers.{i}.attn.")
                      + laws_for(layer["moe"], f"layers.{i}.moe.")):
                fams.append(LawFamily(f.name if i == 0 else f"{f.name}.{i}", f.fn, f.kind))
        return fams


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """(n, S, S) images -> (n, (S/patch)^2, patch^2) non-overlapping patches, row-major."""
    if int(patch) != patch or patch < 1:
        raise ValueError(f"patch must be a positive integer, got {patch!r}")
    if images.ndim != 3:
        raise ValueError(f"images must be (n, S, S), got shape {tuple(images.shape)}")
    n, S, S2 = images.shape
    if S != S2 or S % patch:
        raise ValueError(f"images must be square with side divisible by patch={patch}, "
                         f"got {tuple(images.shape)}")
    x = images.reshape(n, S // patch, patch, S // patch, patch).permute(0, 1, 3, 2, 4)
    return x.reshape(n, (S // patch) ** 2, patch * patch)


class TinyViT(nn.Module):
    """Patch embedding -> MHA with sinusoidal PE -> SwiGLU, residual, mean pool -> classes.

    x (B, P, patch_dim) -> logits (B, n_classes).
    """

    def __init__(self, patch_dim: int, P: int, d: int, H: int, dk: int, dv: int, m: int,
                 n_classes: int, *, gen=None):
        super().__init__()
        self.embed = nn.Linear(patch_dim, d, bias=False)
        self.attn = MHA(d, H, dk, dv, P, pe="sin", gen=gen)
        self.ffn = SwiGLU(d, m, d, gen=gen)
        self.head = nn.Linear(d, n_classes, bias=False)
        _init(self.embed.weight, gen)
        _init(self.head.weight, gen)

    def forward(self, x):
        X = self.embed(x)
        Y = X + self.attn(X)
        Z = Y + self.ffn(Y)
        return self.head(Z.mean(-2))

    def law_families(self) -> list[LawFamily]:
        return laws_for(self.attn, "attn.") + laws_for(self.ffn, "ffn.")


# --------------------------------------------------------------------------- tasks
def teacher_regression(student: nn.Module, teacher: nn.Module, n: int, in_shape: tuple,
                       *, seed: int, noise: float = 0.1):
    """Gaussian inputs ``X`` ``(n, *in_shape)``, targets ``Y = teacher(X) + noise * N(0, 1)``.

    Returns (X, Y, loss_fn) with ``loss_fn(model, idx) = 0.5 * mean of (model(X) - Y)^2`` over
    every output entry of the rows idx (all rows when idx is None). ``student`` is only used to check shapes.
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not (np.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}")
    gen = generator(seed, "teacher_data")
    dt = next(teacher.parameters()).dtype
    X = torch.randn(n, *in_shape, generator=gen, dtype=dt)
    with torch.no_grad():
        Y = teacher(X)
        Y = Y + noise * torch.randn(Y.shape, generator=gen, dtype=dt)
        if student(X[:1]).shape[1:] != Y.shape[1:]:
            raise ValueError("student and teacher output shapes differ")

    def loss_fn(model, idx=None):
        x, y = (X, Y) if idx is None else (X[idx], Y[idx])
        return 0.5 * ((model(x) - y) ** 2).mean()
    return X, Y, loss_fn


def lm_batch(ids: np.ndarray, B: int, T: int, *, seed):
    """B random windows of T+1 tokens from ``ids``: (inputs (B, T), targets (B, T)); the
    starts come from ``seed`` (a ``numpy.random.Generator``, or an int: the stream
    ``seeds.numpy(seed, "lm_windows")``)."""
    if int(B) != B or B < 1 or int(T) != T or T < 1:
        raise ValueError(f"B and T must be positive integers, got B={B!r}, T={T!r}")
    if len(ids) <= T + 1:
        raise ValueError(f"need more than T+1={T + 1} tokens, got {len(ids)}")
    rng = seed if isinstance(seed, np.random.Generator) else seeds.numpy(int(seed), "lm_windows")
    starts = rng.integers(0, len(ids) - T - 1, size=B)
    win = np.stack([ids[s: s + T + 1] for s in starts])
    w = torch.as_tensor(win, dtype=torch.long)
    return w[:, :-1], w[:, 1:]


def ce_loss(inputs: torch.Tensor, targets: torch.Tensor):
    """loss_fn(model, idx) = mean cross-entropy of model(inputs[idx]) against targets[idx]."""
    def loss_fn(model, idx=None):
        x, y = (inputs, targets) if idx is None else (inputs[idx], targets[idx])
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    return loss_fn
