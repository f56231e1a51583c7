"""The insertion in a small pre-norm Transformer on an offline sequence task.

The paper's summary says the mechanism extends to Transformer-like blocks. Here the old
model is a pre-norm Transformer ``x -> head(N(blocks(embed(x))))`` whose blocks are
``z -> z + Attn(N_1 z)`` followed by ``z -> z + MLP(N_2 z)`` (RMSNorm, one attention head),
and the inserted block is the chapter's ``ZeroInitBlock`` acting on every token of the
residual stream, ``z_t -> z_t + V relu(U z_t)`` with V = 0. With the per-token activation
gradients g_t = dl / dz_t the first-order signal is ``C = E[sum_t g_t phi_U(z_t)^T]``.

Task (``majority_task``): sequences of ``length`` tokens drawn uniformly from ``n_classes``
symbols; the label is the most frequent symbol (ties: the smallest), replaced by a uniformly
random label with probability ``noise`` so that the population risk stays away from zero.
It is procedural, so fresh samples stand in for the population, as with MNIST-1D.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from .. import validation
from ..runtime import as_generator
from .data import Pool
from .models import RMSNorm, SplitNet, _seeded


def majority_task(n: int, *, length: int = 12, n_classes: int = 5, noise: float = 0.1,
                  seed) -> tuple[np.ndarray, np.ndarray]:
    """(X, y): X (n, length) int64 tokens, y (n,) int64 labels (see the module doc)."""
    n = validation.integer("n", n, lo=1)
    length = validation.integer("length", length, lo=1)
    n_classes = validation.integer("n_classes", n_classes, lo=2)
    noise = validation.real("noise", noise, lo=0, hi=1)
    rng = as_generator(seed)
    X = rng.integers(0, n_classes, size=(n, length))
    counts = np.stack([(X == c).sum(1) for c in range(n_classes)], 1)
    y = counts.argmax(1)
    flip = rng.random(n) < noise
    y[flip] = rng.integers(0, n_classes, size=int(flip.sum()))
    return X.astype(np.int64), y.astype(np.int64)


def sequence_pool(n_train: int, n_test: int, n_pop: int, *, seed: int, **task) -> Pool:
    """Train / test / population splits of ``majority_task`` from one generator."""
    X, y = majority_task(n_train + n_test + n_pop, seed=seed, **task)
    X, y = torch.as_tensor(X), torch.as_tensor(y)
    a, b = n_train, n_train + n_test
    return Pool("majority", X[:a], y[:a], X[a:b], y[a:b], X[b:], y[b:],
                int(task.get("n_classes", 5)))


class Embed(nn.Module):
    def __init__(self, vocab: int, length: int, d: int):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(length, d) / math.sqrt(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tok(x) + self.pos[: x.shape[1]]


class PreNormBlock(nn.Module):
    """``z -> z + Attn(N_1 z)``, then ``z -> z + W_2 gelu(W_1 N_2 z)``: (n, T, d) -> (n, T, d)."""

    def __init__(self, d: int, hidden: int | None = None):
        super().__init__()
        self.n1, self.n2 = RMSNorm(d), RMSNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.o = nn.Linear(d, d, bias=False)
        self.w1 = nn.Linear(d, hidden or 2 * d)
        self.w2 = nn.Linear(hidden or 2 * d, d)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.n1(z)).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1)
        z = z + self.o(att @ v)
        return z + self.w2(F.gelu(self.w1(self.n2(z))))


class PoolHead(nn.Module):
    """Final RMSNorm, mean over tokens, linear read-out."""

    def __init__(self, d: int, n_classes: int):
        super().__init__()
        self.norm = RMSNorm(d)
        self.fc = nn.Linear(d, n_classes)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.fc(self.norm(z).mean(1))


def prenorm_transformer(vocab: int, length: int, n_classes: int, *, d: int = 32,
                        depth: int = 2, seed: int = 0) -> SplitNet:
    """A pre-norm Transformer as a ``SplitNet`` (stem: embedding; blocks; head)."""
    for name, v in (("vocab", vocab), ("length", length), ("d", d)):
        validation.integer(name, v, lo=1)
    validation.integer("depth", depth, lo=0)
    with _seeded(seed, "prenorm transformer"):
        net = SplitNet(Embed(vocab, length, d), [PreNormBlock(d) for _ in range(depth)],
                       PoolHead(d, n_classes))
    return net.to(torch.get_default_dtype())
