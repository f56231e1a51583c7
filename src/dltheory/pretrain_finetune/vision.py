"""A nonlinear analogue on the digits stand-in: a two-layer ReLU net, PT then FT.

Network ``f(x) = W₂ relu(W₁x + b₁) + b₂`` (W₁: (H, 64), W₂: (K, H)). PT: full-batch Adam
on digits of the PT classes. Before FT (a new binary task), the interventions of the paper,
in their diagonal-network reading:

* early-layer scale ``κ`` (λ_PT analogue): ``W₁, b₁ ← κ W₁, κ b₁``;
* readout re-initialisation ``γ`` (γ_FT analogue): ``W₂ ~ N(0, (γ/√H)²)``, ``b₂ = 0``.

FT is full-batch GD on both layers (cross-entropy) for a fixed number of steps. Everything
runs in float64 whatever torch's default dtype. This design
is this book's own stand-in for the paper's ResNet-18/CIFAR-100 protocol (unverified).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from .. import seeds
from .. import validation as V
from .representations import ensd, participation_ratio


@dataclass
class MLPParams:
    W1: torch.Tensor
    b1: torch.Tensor
    W2: torch.Tensor
    b2: torch.Tensor

    def hidden(self, X):
        return torch.relu(X @ self.W1.T + self.b1)

    def __call__(self, X):
        return self.hidden(X) @ self.W2.T + self.b2


def _subset(X, y, classes):
    m = np.isin(y, classes)
    lab = np.searchsorted(np.asarray(sorted(classes)), y[m])
    return torch.as_tensor(X[m]), torch.as_tensor(lab)


def pretrain_mlp(X, y, classes, *, hidden: int = 256, steps: int = 300, lr: float = 1e-2,
                 seed: int = 0, init_scale: float = 1.0) -> MLPParams:
    """PT on the digits of ``classes`` (labels remapped to 0..K-1); nn.Linear-style init
    multiplied by ``init_scale`` (the c_PT analogue: the scale of the PT initialisation)."""
    V.integer("hidden", hidden, 1)
    V.integer("steps", steps, 0)
    V.real("lr", lr, 0.0, np.inf, lo_open=True)
    V.real("init_scale", init_scale, 0.0, np.inf, lo_open=True)
    if len(classes) < 2:
        raise ValueError(f"classes must name at least 2 classes, got {classes!r}")
    g = seeds.torch(seed, "pretrain_init")
    Xt, yt = _subset(np.asarray(X, dtype=np.float64), y, classes)
    d, k = Xt.shape[1], len(classes)
    u = lambda shape, fan: init_scale * (torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1) / np.sqrt(fan)
    p = [u((hidden, d), d), u((hidden,), d), u((k, hidden), hidden), u((k,), hidden)]
    for t in p:
        t.requires_grad_(True)
    opt = torch.optim.Adam(p, lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(torch.relu(Xt @ p[0].T + p[1]) @ p[2].T + p[3], yt)
        loss.backward()
        opt.step()
    return MLPParams(*(t.detach() for t in p))


@dataclass
class FTOutcome:
    test_acc: float
    pr_pre: float
    pr_post: float
    ensd: float


def finetune_mlp(pt: MLPParams, X_tr, y_tr, X_te, y_te, *, kappa: float, gamma: float,
                 steps: int = 300, lr: float = 0.5, seed: int = 0) -> FTOutcome:
    """Apply (κ, γ), fine-tune both layers by GD on (X_tr, y_tr) (labels 0..K-1, K = number
    of FT classes), return test accuracy and the PR/ENSD of the hidden layer on ``X_te``
    before and after FT."""
    V.real("kappa", kappa, 0.0, np.inf, lo_open=True)
    V.real("gamma", gamma, 0.0, np.inf)
    V.integer("steps", steps, 0)
    V.real("lr", lr, 0.0, np.inf, lo_open=True)
    y_tr, y_te = np.asarray(y_tr), np.asarray(y_te)
    if len(y_tr) < 1 or len(X_tr) != len(y_tr) or len(X_te) != len(y_te):
        raise ValueError("X_tr/y_tr and X_te/y_te must be non-empty and of matching lengths")
    k = int(max(y_tr.max(), y_te.max(), 1)) + 1
    g = seeds.torch(seed, "finetune_readout")
    hdim = pt.W1.shape[0]
    W1, b1 = (kappa * pt.W1).clone(), (kappa * pt.b1).clone()
    W2 = gamma / np.sqrt(hdim) * torch.randn((k, hdim), generator=g, dtype=torch.float64)
    b2 = torch.zeros(k, dtype=torch.float64)
    params = [W1, b1, W2, b2]
    for t in params:
        t.requires_grad_(True)
    Xtr, ytr = torch.as_tensor(np.asarray(X_tr, dtype=np.float64)), torch.as_tensor(y_tr)
    Xte = torch.as_tensor(np.asarray(X_te, dtype=np.float64))
    with torch.no_grad():
        h_pre = torch.relu(Xte @ W1.T + b1).numpy()
    for _ in range(steps):
        loss = F.cross_entropy(torch.relu(Xtr @ W1.T + b1) @ W2.T + b2, ytr)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for t, gr in zip(params, grads, strict=True):
                t -= lr * gr
    with torch.no_grad():
        h_post = torch.relu(Xte @ W1.T + b1)
        acc = float(((h_post @ W2.T + b2).argmax(1).numpy() == np.asarray(y_te)).mean())
        h_post = h_post.numpy()
    return FTOutcome(acc, participation_ratio(h_pre, center=True), participation_ratio(h_post, center=True),
                     ensd(h_pre, h_post, center=True))


def binary_task(split, classes=(8, 9)):
    """The FT task: the two ``classes`` relabelled 0/1; returns ``(X_pool, y_pool, X_te, y_te)``."""
    a, b = classes
    mtr, mte = np.isin(split.y_train, classes), np.isin(split.y_test, classes)
    return (split.X_train[mtr], (split.y_train[mtr] == b).astype(np.int64),
            split.X_test[mte], (split.y_test[mte] == b).astype(np.int64))


def shift_task(split, classes=tuple(range(8))):
    """A distribution shift (an SVHN-like stand-in): the PT ``classes``, intensity-inverted
    (``x -> 1 - x``), as a K-way task; returns ``(X_pool, y_pool, X_te, y_te)``."""
    mtr, mte = np.isin(split.y_train, classes), np.isin(split.y_test, classes)
    lab = lambda y: np.searchsorted(np.asarray(sorted(classes)), y).astype(np.int64)
    return (1.0 - split.X_train[mtr], lab(split.y_train[mtr]), 1.0 - split.X_test[mte], lab(split.y_test[mte]))
