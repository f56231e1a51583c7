"""Discrete-time training loops that record every conservation law, and the exponent fits.

For a quadratic law ``h(theta) = theta^T S theta`` with ``grad h`` orthogonal to every
gradient the model can produce, one step ``theta' = theta - tau g`` changes it by exactly

    h(theta') - h(theta) = tau^2 q(g),      q(g) = g^T S g = h(g),

so GD and mini-batch SGD obey ``h_k - h_0 = tau^2 sum_{j<k} q(g_j)`` and
``|h_k - h_0| <= ||S|| tau^2 sum_j ||g_j||^2``. Coupled weight decay ``theta' = (1 - tau lam)
theta - tau g`` gives ``h_{k+1} = (1 - tau lam)^2 h_k + tau^2 q(g_k)``. Adam's update is not in
the span of the gradients, so the first-order term survives and the drift is O(tau k).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .laws import LawFamily
from .models import generator

OPTIMIZERS = ("gd", "sgd", "heavy_ball", "adam")


@dataclass(frozen=True)
class Trajectory:
    """Recorded run. h[name]: (K+1, n) law values at steps 0..K; q[name]: (K, n) values
    ``h(g_k)`` of each step's (clipped) loss gradient; gsq: (K,) ``||g_k||^2``; loss: (K,)."""

    optimizer: str
    tau: float
    weight_decay: float
    h: dict[str, np.ndarray]
    q: dict[str, np.ndarray]
    gsq: np.ndarray
    loss: np.ndarray
    kinds: dict[str, str]

    @property
    def steps(self) -> int:
        return len(self.gsq)

    def error(self, names: list[str] | None = None) -> np.ndarray:
        """Conservation error ``max_laws |h_k - h_0|`` over the chosen families: (K+1,)."""
        names = list(self.h) if names is None else names
        return np.max([np.abs(self.h[n] - self.h[n][:1]).max(1) for n in names], axis=0)

    def identity_residual(self) -> float:
        """``max_k,laws |h_k - h_0 - tau^2 sum_{j<k} q(g_j)|`` over the quadratic families
        (the exact GD/SGD identity; meaningful without momentum, Adam or weight decay)."""
        res = 0.0
        for n, h in self.h.items():
            if self.kinds[n] != "quadratic":
                continue
            pred = self.tau ** 2 * np.concatenate([np.zeros_like(h[:1]), np.cumsum(self.q[n], 0)])
            res = max(res, float(np.abs(h - h[:1] - pred).max()))
        return res

    def wd_residual(self) -> float:
        """``max |h_{k+1} - (1 - tau lam)^2 h_k - tau^2 q(g_k)|`` over the quadratic families."""
        c = (1 - self.tau * self.weight_decay) ** 2
        res = 0.0
        for n, h in self.h.items():
            if self.kinds[n] == "quadratic":
                res = max(res, float(np.abs(h[1:] - c * h[:-1] - self.tau ** 2 * self.q[n]).max()))
        return res

    def bound_ratio(self, names: list[str] | None = None) -> np.ndarray:
        """``|h_k - h_0| / (tau^2 sum_{j<k} ||g_j||^2)`` for k >= 1: at most ||S|| (= 1 here)."""
        denom = self.tau ** 2 * np.cumsum(self.gsq)
        return self.error(names)[1:] / np.maximum(denom, 1e-300)


def gradients(model: nn.Module, loss: torch.Tensor) -> dict[str, torch.Tensor]:
    """``{name: d loss / d parameter}`` by backpropagation (zeros for an unused parameter);
    the gradient every optimiser of ``train`` steps with."""
    loss.backward()
    return {n: (p.grad if p.grad is not None else torch.zeros_like(p))
            for n, p in model.named_parameters()}


def gradient_fd_ratio(model: nn.Module, loss_fn: Callable, *, n_dirs: int = 16,
                      eps: float = 1e-6, seed: int = 0) -> float:
    """The gradient ``train`` uses against central differences of the loss it descends.

    Along ``n_dirs`` random unit directions ``w`` of the parameter space, the directional
    derivative ``a = <g, w>`` (g from ``gradients``, full batch) is set against
    ``f = (L(theta + eps w) - L(theta - eps w)) / (2 eps)``. Returns the least-squares ratio
    ``sum a f / sum f^2``: 1 up to the finite-difference error (``O(eps^2)`` truncation,
    ``O(1e-16 L / eps)`` rounding in float64), 2 for a gradient twice its loss's. The model
    is left unchanged.
    """
    if int(n_dirs) != n_dirs or n_dirs < 1 or not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"need n_dirs >= 1 and eps > 0, got n_dirs={n_dirs!r}, eps={eps!r}")
    params = dict(model.named_parameters())
    model.zero_grad(set_to_none=True)
    g = {n: x.detach().clone() for n, x in gradients(model, loss_fn(model, None)).items()}
    model.zero_grad(set_to_none=True)
    gen = generator(seed, "fd_directions")
    a, f = [], []
    with torch.no_grad():
        for _ in range(int(n_dirs)):
            w = {n: torch.randn(p.shape, generator=gen, dtype=p.dtype).to(p.device)
                 for n, p in params.items()}
            norm = math.sqrt(sum(float((x ** 2).sum()) for x in w.values()))
            w = {n: x / norm for n, x in w.items()}
            a.append(sum(float((g[n] * w[n]).sum()) for n in params))
            for n, p in params.items():
                p.add_(eps * w[n])
            up = float(loss_fn(model, None))
            for n, p in params.items():
                p.sub_(2 * eps * w[n])
            down = float(loss_fn(model, None))
            for n, p in params.items():
                p.add_(eps * w[n])
            f.append((up - down) / (2 * eps))
    a, f = np.array(a), np.array(f)
    return float(a @ f / (f @ f))


def train(model: nn.Module, loss_fn: Callable, families: list[LawFamily], *, optimizer: str,
          tau: float, steps: int, n_data: int | None = None, batch_size: int | None = None,
          beta: float = 0.9, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
          weight_decay: float = 0.0, clip: float | None = None, seed: int = 0,
          stop_loss: float | None = None) -> Trajectory:
    """Train ``model`` in place and record every law at every step.

    loss_fn(model, idx) -> scalar loss; idx is None (full batch) or a LongTensor of sample
    indices (SGD: ``batch_size`` of ``n_data`` drawn without replacement each step, seeded).
    optimizer: "gd"/"sgd": ``theta -= tau (g + lam theta)``; "heavy_ball": ``b = beta b + g``,
    ``theta -= tau b``; "adam": Adam with learning rate tau and bias correction.
    clip: rescale g to norm <= clip (still in the gradient span).
    stop_loss: stop at the first step k whose loss is <= stop_loss, before updating (the
    trajectory then ends at theta_k: h has k+1 rows); ``steps`` is the cap.
    """
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"tau must be a finite number > 0, got {tau}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if stop_loss is not None and not math.isfinite(stop_loss):
        raise ValueError(f"stop_loss must be finite or None, got {stop_loss!r}")
    if not (math.isfinite(weight_decay) and weight_decay >= 0):
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay!r}")
    if optimizer == "sgd" and (n_data is None or batch_size is None or batch_size > n_data):
        raise ValueError(f"sgd needs n_data and batch_size <= n_data, got {n_data}, {batch_size}")
    gen = generator(seed, "sgd_batches")
    params = dict(model.named_parameters())
    state = {n: torch.zeros_like(p) for n, p in params.items()}
    state2 = {n: torch.zeros_like(p) for n, p in params.items()}

    def record(src):
        with torch.no_grad():
            return {f.name: f(src).detach().cpu().numpy().copy() for f in families}

    hs, qs, gsq, losses = [record(params)], [], [], []
    for k in range(steps):
        idx = None
        if optimizer == "sgd":
            idx = _batch(gen, n_data, batch_size)
        model.zero_grad(set_to_none=True)
        loss = loss_fn(model, idx)
        if stop_loss is not None and float(loss.detach()) <= stop_loss:
            break
        g = gradients(model, loss)
        gn2 = sum(float((x ** 2).sum()) for x in g.values())
        if clip is not None and gn2 > clip ** 2:
            g = {n: x * (clip / gn2 ** 0.5) for n, x in g.items()}
            gn2 = clip ** 2
        qs.append(record(g))
        gsq.append(gn2)
        losses.append(float(loss.detach()))
        with torch.no_grad():
            for n, p in params.items():
                if optimizer in ("gd", "sgd"):
                    p.mul_(1 - tau * weight_decay).sub_(tau * g[n])
                elif optimizer == "heavy_ball":
                    state[n].mul_(beta).add_(g[n] + weight_decay * p)
                    p.sub_(tau * state[n])
                else:  # adam
                    gg = g[n] + weight_decay * p
                    state[n].mul_(betas[0]).add_((1 - betas[0]) * gg)
                    state2[n].mul_(betas[1]).add_((1 - betas[1]) * gg ** 2)
                    mhat = state[n] / (1 - betas[0] ** (k + 1))
                    vhat = state2[n] / (1 - betas[1] ** (k + 1))
                    p.sub_(tau * mhat / (vhat.sqrt() + eps))
        hs.append(record(params))
    names = [f.name for f in families]
    return Trajectory(optimizer, float(tau), float(weight_decay),
                      {n: np.stack([h[n] for h in hs]) for n in names},
                      {n: (np.stack([q[n] for q in qs]) if qs else np.zeros((0,) + hs[0][n].shape))
                       for n in names},
                      np.asarray(gsq), np.asarray(losses),
                      {f.name: f.kind for f in families})


def _batch(gen: torch.Generator, n_data: int, batch_size: int) -> torch.Tensor:
    """One SGD minibatch: ``batch_size`` of the ``n_data`` indices without replacement."""
    return torch.randperm(n_data, generator=gen)[:batch_size]


def sgd_batches(n_data: int, batch_size: int, steps: int, *, seed=0) -> torch.Tensor:
    """The ``(steps, batch_size)`` minibatch indices ``train(optimizer="sgd", seed=seed)``
    steps on (the same stream and the same draw), for the design guard that they are strict
    random subsets of the data."""
    gen = generator(seed, "sgd_batches")
    return torch.stack([_batch(gen, int(n_data), int(batch_size)) for _ in range(int(steps))])


@dataclass(frozen=True)
class ExponentFit:
    """``log err = alpha log tau + beta log k + c`` fitted by least squares on a grid."""

    alpha: float
    beta: float
    c: float
    r2: float
    n: int


def fit_tau_k(taus, ks, err) -> ExponentFit:
    """Fit err[i, j] ~ C tau_i^alpha k_j^beta. taus (n_tau,), ks (n_k,), err (n_tau, n_k)."""
    taus, ks, err = np.asarray(taus, float), np.asarray(ks, float), np.asarray(err, float)
    if not (np.isfinite(taus).all() and (taus > 0).all()):
        raise ValueError(f"taus must be finite and > 0, got {taus.tolist()}")
    if not (np.isfinite(ks).all() and (ks > 0).all()):
        raise ValueError(f"ks must be finite and > 0, got {ks.tolist()}")
    if err.shape != (taus.size, ks.size):
        raise ValueError(f"err must be (len(taus), len(ks)) = {(taus.size, ks.size)}, "
                         f"got {err.shape}")
    T, K = np.meshgrid(np.log(taus), np.log(ks), indexing="ij")
    ok = np.isfinite(err) & (err > 0)
    if ok.sum() < 4:
        raise ValueError(f"need >= 4 positive errors to fit, got {int(ok.sum())}")
    A = np.stack([T[ok], K[ok], np.ones(ok.sum())], 1)
    y = np.log(err[ok])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    r2 = 1 - resid @ resid / max(((y - y.mean()) ** 2).sum(), 1e-300)
    return ExponentFit(float(coef[0]), float(coef[1]), float(coef[2]), float(r2), int(ok.sum()))


def sweep(make_model: Callable[[], nn.Module], loss_fn: Callable, families_of: Callable, *,
          taus, steps: int, optimizer: str, lr_scale: float = 1.0, **kw) -> list[Trajectory]:
    """One fresh model per tau (same init via ``make_model``), trained with ``train``.
    ``lr_scale`` multiplies tau for the actual step (e.g. Adam with lr = tau / 10); the
    trajectory keeps the nominal tau in ``fit_tau_k``'s sense through the caller's grid."""
    out = []
    for tau in taus:
        model = make_model()
        out.append(train(model, loss_fn, families_of(model), optimizer=optimizer,
                         tau=tau * lr_scale, steps=steps, **kw))
    return out


def errors_at(trajs: list[Trajectory], ks, names: list[str] | None = None) -> np.ndarray:
    """err[i, j] = trajs[i].error(names)[ks[j]]: (len(trajs), len(ks))."""
    return np.array([[t.error(names)[k] for k in ks] for t in trajs])


def sharpness(model: nn.Module, loss_fn: Callable, *, iters: int = 30, seed: int = 0) -> float:
    """Largest Hessian eigenvalue of the full-batch loss at the current parameters, by
    power iteration on Hessian-vector products (double backward). Sets the natural time
    scale ``1 / lambda_max`` of gradient descent: the gradients change little while
    ``tau * k * lambda_max << 1``."""
    if int(iters) != iters or iters < 1:
        raise ValueError(f"iters must be a positive integer, got {iters!r}")
    params = [p for p in model.parameters() if p.requires_grad]
    loss = loss_fn(model, None)
    grads = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)
    used = [i for i, gr in enumerate(grads) if gr is not None]  # unused parameters: zero rows
    params, grads = [params[i] for i in used], [grads[i] for i in used]
    gen = generator(seed, "power_iteration")
    v = [torch.randn(p.shape, generator=gen, dtype=p.dtype).to(p.device) for p in params]
    lam = 0.0
    for _ in range(int(iters)):
        norm = torch.sqrt(sum((x ** 2).sum() for x in v))
        v = [x / norm for x in v]
        Hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
        lam = float(sum((a * b).sum() for a, b in zip(Hv, v, strict=True)))
        v = [x.detach() for x in Hv]
    return abs(lam)


@dataclass(frozen=True)
class EarlyWindow:
    """An early-window sweep: taus (n_tau,), ks (n_k,), err (n_tau, n_k), the fit, the
    sharpness lam used to place the grid, and the trajectories (one per tau)."""

    taus: np.ndarray
    ks: np.ndarray
    err: np.ndarray
    fit: ExponentFit
    lam: float
    trajs: list


def early_window(make_model: Callable[[], nn.Module], loss_fn: Callable, families_of: Callable,
                 *, tl_max: float, ks, ratios=(0.125, 0.25, 0.5, 1.0), optimizer: str = "gd",
                 lam: float | None = None, names: list[str] | None = None,
                 batched: bool | None = None, **kw) -> EarlyWindow:
    """Sweep tau on a grid placed in the natural time units of the problem:
    ``tau_i = ratios[i] * tl_max / (max(ks) * lambda_max)``, so that the largest
    ``tau * k * lambda_max`` equals ``tl_max`` (the gradients barely change when it is << 1).
    lambda_max is the sharpness at initialisation (computed unless ``lam`` is given).
    Extra keywords go to ``sweep`` (optimizer options, ``lr_scale``, ...). ``batched``: run
    the whole tau grid at once with ``train_gd_batched`` (plain GD only); default: on CUDA
    (on a CPU the per-tau loop is faster)."""
    if not (math.isfinite(tl_max) and tl_max > 0):
        raise ValueError(f"tl_max must be a finite number > 0, got {tl_max}")
    ks = np.asarray(ks, dtype=int)
    if ks.ndim != 1 or ks.size < 2 or (ks < 1).any():
        raise ValueError(f"ks must hold at least 2 positive step counts, got {ks.tolist()}")
    if lam is not None and not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam must be a finite number > 0 or None, got {lam!r}")
    if lam is None:
        lam = sharpness(make_model(), loss_fn)
    taus = np.asarray(ratios, dtype=float) * tl_max / (ks.max() * lam)
    if batched is None:
        dev = next(make_model().parameters()).device
        batched = optimizer == "gd" and not kw and dev.type == "cuda"
    if batched:
        if optimizer != "gd" or kw:
            raise ValueError("batched=True supports plain GD only (no optimizer options)")
        trajs = train_gd_batched(make_model, loss_fn, families_of(make_model()), taus=taus,
                                 steps=int(ks.max()))
    else:
        trajs = sweep(make_model, loss_fn, families_of, taus=taus, steps=int(ks.max()),
                      optimizer=optimizer, **kw)
    err = errors_at(trajs, ks, names)
    return EarlyWindow(taus, ks, err, fit_tau_k(taus, ks, err), float(lam), trajs)


class _Functional(nn.Module):
    """Calls ``model`` with the parameter dict ``params`` (for ``torch.func``)."""

    def __init__(self, model: nn.Module, params: dict):
        super().__init__()
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_params", params)

    def forward(self, *args):
        from torch.func import functional_call
        return functional_call(self._model, self._params, args)


def train_gd_batched(make_model: Callable[[], nn.Module], loss_fn: Callable,
                     families: list[LawFamily], *, taus, steps: int) -> list[Trajectory]:
    """Full-batch GD from the same initialisation at every step size of ``taus`` at once.

    The parameters of the ``len(taus)`` runs are stacked and every step is one ``vmap`` of
    ``torch.func.grad`` over them (batched kernels on the device, no host synchronisation
    inside the loop); the records are moved to the host once at the end. Returns the same
    trajectories as ``train(..., optimizer="gd")`` for each tau.
    """
    from torch.func import grad, vmap

    taus = [float(t) for t in taus]
    if not taus or not all(math.isfinite(t) and t > 0 for t in taus):
        raise ValueError(f"taus must be finite numbers > 0, got {taus}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    model = make_model()
    p0 = {n: p.detach() for n, p in model.named_parameters()}
    P = {n: v.unsqueeze(0).repeat(len(taus), *([1] * v.ndim)).clone() for n, v in p0.items()}
    tau = torch.tensor(taus, dtype=next(iter(p0.values())).dtype,
                       device=next(iter(p0.values())).device)

    def loss_of(params):
        return loss_fn(_Functional(model, params), None)

    def laws(params):
        return {f.name: f(params) for f in families}

    g_fn = vmap(grad(lambda p: loss_of(p), has_aux=False))
    l_fn, h_fn = vmap(loss_of), vmap(laws)
    hs, qs, gsq, losses = [h_fn(P)], [], [], []
    for _ in range(int(steps)):
        losses.append(l_fn(P).detach())
        G = g_fn(P)
        qs.append(h_fn(G))
        gsq.append(sum((x.reshape(len(taus), -1) ** 2).sum(1) for x in G.values()))
        with torch.no_grad():
            P = {n: P[n] - tau.reshape(-1, *([1] * (P[n].ndim - 1))) * G[n] for n in P}
        hs.append(h_fn(P))
    names = [f.name for f in families]
    H = {n: torch.stack([h[n] for h in hs], 1).detach().cpu().numpy() for n in names}
    Q = {n: torch.stack([q[n] for q in qs], 1).detach().cpu().numpy() for n in names}
    GS = torch.stack(gsq, 1).detach().cpu().numpy()
    LS = torch.stack(losses, 1).detach().cpu().numpy()
    kinds = {f.name: f.kind for f in families}
    return [Trajectory("gd", t, 0.0, {n: H[n][i] for n in names}, {n: Q[n][i] for n in names},
                       GS[i], LS[i], kinds) for i, t in enumerate(taus)]
