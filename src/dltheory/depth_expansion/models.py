"""Post-normalised residual networks with a split point, and the zero-initialised block.

Every network here is ``head ∘ blocks[L-1] ∘ ... ∘ blocks[0] ∘ stem`` and can be cut at any
layer ``l`` (0 <= l <= L):

    z = bottom(x, l) = blocks[l-1] ∘ ... ∘ blocks[0] ∘ stem (x)        (n, d) or (n, c, H, W)
    f(x) = top(z, l) = head ∘ blocks[L-1] ∘ ... ∘ blocks[l] (z)

A post-norm block is ``z -> N(z + V relu(U z))`` with N an RMSNorm (MLP) or a GroupNorm
(conv). The inserted block of the paper's expanded class

    H_new = { x -> f_top(z + h_theta(z)) : theta },   z = f_bot(x),   h_0 = 0

is ``ZeroInitBlock``: ``h(z) = V phi_U(z)`` with ``phi_U(z) = relu(U z)``, ``U`` random and
``V = 0`` (or the ReZero scalar variant ``h(z) = alpha * W phi_U(z)`` with ``alpha = 0``). It
carries no normalisation of its own: the normalisation happens inside ``f_top``, which is
what makes the insertion exactly function-preserving (``N(z + 0) = N(z) != z`` in general).
"""

from __future__ import annotations

import contextlib
import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

from .. import seeds

KINDS = ("mlp", "conv", "rezero")


@contextlib.contextmanager
def _seeded(seed: int, name: str):
    """Draw parameters from the stream ``(seed, "init", name)`` in float64 whatever the caller's default dtype (the
    draws of PyTorch's initialisers depend on the dtype), without touching global state."""
    old = torch.get_default_dtype()
    with torch.random.fork_rng(devices=[]):
        seeds.torch_global(seed, "init", name)
        torch.set_default_dtype(torch.float64)
        try:
            yield
        finally:
            torch.set_default_dtype(old)


class RMSNorm(nn.Module):
    """``N(z) = g * z / sqrt(mean(z^2) + eps)`` over the last axis; z: (n, d).

    Equivalently ``sqrt(d) g z / sqrt(||z||^2 + d eps)`` (the form used for its Jacobian).
    """

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        if d < 1:
            raise ValueError(f"d must be >= 1, got {d}")
        if eps <= 0:
            raise ValueError(f"eps must be > 0, got {eps}")
        self.eps = float(eps)
        self.gain = nn.Parameter(torch.ones(d))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.gain * z * torch.rsqrt(z.pow(2).mean(-1, keepdim=True) + self.eps)


def _gn_groups(c: int, groups: int = 4) -> int:
    """GroupNorm groups with at least two channels each: with one channel per group the
    normalised map has zero spatial mean per channel, so a global-average-pool head sees
    only the norm's bias and a 4-channel network cannot learn."""
    return max(1, min(groups, c // 2))


class PostNormBlock(nn.Module):
    """``z -> N(z + V relu(U z))``: (n, d) -> (n, d) with RMSNorm, or (n, c, H, W) with
    GroupNorm and 3x3 convolutions when ``conv=True``."""

    def __init__(self, d: int, hidden: int | None = None, *, conv: bool = False, groups: int = 4):
        super().__init__()
        k = hidden or d
        if conv:
            self.U = nn.Conv2d(d, k, 3, padding=1, bias=False)
            self.V = nn.Conv2d(k, d, 3, padding=1, bias=False)
            self.norm = nn.GroupNorm(_gn_groups(d, groups), d)
        else:
            self.U = nn.Linear(d, k)
            self.V = nn.Linear(k, d)
            self.norm = RMSNorm(d)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.norm(z + self.V(F.relu(self.U(z))))


class ZeroInitBlock(nn.Module):
    """The inserted block ``z -> z + h(z)`` with ``h = 0`` at insertion.

    - ``kind="mlp"``: ``h(z) = V relu(U z)``, ``U: (k, d)`` Kaiming-random,
      ``V: (d, k) = 0``; ``z: (n, d)``.
    - ``kind="conv"``: the same with ``U`` a 3x3 conv (d -> k channels) and ``V`` a 1x1 conv
      (k -> d) = 0; ``z: (n, d, H, W)``.
    - ``kind="rezero"``: ``h(z) = alpha * W relu(U z)`` with ``W`` random and the scalar
      ``alpha = 0``.

    ``zero_param`` is the factor that starts at zero; the first-order signal is the gradient
    of the risk with respect to it. U (and W) are drawn from the stream
    ``(seed, "zero-init block", kind, *stream)``.
    """

    def __init__(self, d: int, hidden: int | None = None, *, kind: str = "mlp", seed: int = 0,
                 stream: tuple = ()):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if d < 1:
            raise ValueError(f"d must be >= 1, got {d}")
        k = hidden or d
        self.kind = kind
        gen = seeds.torch(seed, "zero-init block", kind, *stream)
        dtype = torch.float64   # the same draws whatever the default dtype
        if kind == "conv":
            self.U = nn.Conv2d(d, k, 3, padding=1, bias=False)
            self.V = nn.Conv2d(k, d, 1, bias=False)
            fan_in = d * 9
        else:
            self.U = nn.Linear(d, k, bias=False)
            self.V = nn.Linear(k, d, bias=False)
            fan_in = d
        with torch.no_grad():
            self.U.weight.copy_(torch.randn(self.U.weight.shape, generator=gen, dtype=dtype)
                                * math.sqrt(2.0 / fan_in))
            if kind == "rezero":
                self.V.weight.copy_(torch.randn(self.V.weight.shape, generator=gen, dtype=dtype)
                                    / math.sqrt(k))
                self.V.weight.requires_grad_(False)
            else:
                self.V.weight.zero_()
        self.alpha = nn.Parameter(torch.zeros(())) if kind == "rezero" else None

    @property
    def zero_param(self) -> nn.Parameter:
        """The parameter that is zero at insertion (V's weight, or alpha for ReZero)."""
        return self.alpha if self.kind == "rezero" else self.V.weight

    def features(self, z: torch.Tensor) -> torch.Tensor:
        """phi_U(z) = relu(U z): (n, k) or (n, k, H, W)."""
        return F.relu(self.U(z))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = self.V(self.features(z))
        if self.alpha is not None:
            h = self.alpha * h
        return z + h


class SplitNet(nn.Module):
    """``head ∘ blocks ∘ stem`` with ``bottom(x, l)`` / ``top(z, l)`` (see module doc)."""

    def __init__(self, stem: nn.Module, blocks: list[nn.Module], head: nn.Module):
        super().__init__()
        self.stem = stem
        self.blocks = nn.ModuleList(blocks)
        self.head = head

    @property
    def depth(self) -> int:
        return len(self.blocks)

    def _check_l(self, l: int) -> None:
        if not 0 <= l <= self.depth:
            raise ValueError(f"split layer l must be in [0, {self.depth}], got {l}")

    def bottom(self, x: torch.Tensor, l: int) -> torch.Tensor:
        """z = f_bot(x): the activation entering block ``l``."""
        self._check_l(l)
        z = self.stem(x)
        for b in self.blocks[:l]:
            z = b(z)
        return z

    def top(self, z: torch.Tensor, l: int) -> torch.Tensor:
        """f_top(z): logits (n, classes) from the activation entering block ``l``."""
        self._check_l(l)
        for b in self.blocks[l:]:
            z = b(z)
        return self.head(z)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.top(self.bottom(x, 0), 0)


class _GapHead(nn.Module):
    def __init__(self, c: int, n_classes: int):
        super().__init__()
        self.fc = nn.Linear(c, n_classes)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.fc(z.mean(dim=(2, 3)))


def postnorm_mlp(d_in: int, n_classes: int, *, width: int = 64, depth: int = 4,
                 seed: int = 0) -> SplitNet:
    """Post-norm residual MLP: stem ``N(W x)`` (d_in -> width), ``depth`` post-norm blocks,
    linear head. Parameters are drawn from ``seed`` (PyTorch default initialisers)."""
    if width < 1 or depth < 0 or d_in < 1 or n_classes < 2:
        raise ValueError(f"need width >= 1, depth >= 0, d_in >= 1, n_classes >= 2; got "
                         f"width={width}, depth={depth}, d_in={d_in}, n_classes={n_classes}")
    with _seeded(seed, "postnorm mlp"):
        stem = nn.Sequential(nn.Linear(d_in, width), RMSNorm(width))
        blocks = [PostNormBlock(width) for _ in range(depth)]
        head = nn.Linear(width, n_classes)
    return SplitNet(stem, blocks, head).to(torch.get_default_dtype())


def postnorm_convnet(in_ch: int, n_classes: int, *, channels: int = 16, depth: int = 2,
                     seed: int = 0) -> SplitNet:
    """Tiny post-norm (GroupNorm) conv ResNet for 8x8 digits or 32x32 CIFAR images:
    stem ``GN(conv3x3 x)``, ``depth`` post-norm conv blocks, global-average-pool head."""
    if channels < 1 or depth < 0 or in_ch < 1 or n_classes < 2:
        raise ValueError(f"need channels >= 1, depth >= 0, in_ch >= 1, n_classes >= 2; got "
                         f"channels={channels}, depth={depth}, in_ch={in_ch}, n_classes={n_classes}")
    with _seeded(seed, "postnorm convnet"):
        stem = nn.Sequential(nn.Conv2d(in_ch, channels, 3, padding=1),
                             nn.GroupNorm(_gn_groups(channels), channels))
        blocks = [PostNormBlock(channels, conv=True) for _ in range(depth)]
        head = _GapHead(channels, n_classes)
    return SplitNet(stem, blocks, head).to(torch.get_default_dtype())


def insert_block(model: SplitNet, l: int, block: nn.Module) -> SplitNet:
    """The expanded model ``f_top(z + h(z))``: a deep copy of ``model`` with ``block``
    inserted before block ``l`` (the block itself is not copied, so its parameters are the
    ones to train or perturb)."""
    model._check_l(l)
    new = copy.deepcopy(model)
    blocks = list(new.blocks)
    blocks.insert(l, block)
    new.blocks = nn.ModuleList(blocks)
    return new
