"""Data for the chapter: one MNIST-1D pool split into train / test / a fresh "population"
sample, the digits images for the conv variant, CIFAR at paper scale (with fallback).

MNIST-1D is procedural: ``make_dataset`` draws new samples from ten fixed templates, so a
large fresh sample from the *same* distribution stands in for the population risk R(f).
``make_dataset`` standardises each call with its own mean and standard deviation, so the
three sets are cut from **one** call (one pool), never from separate calls.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from .. import datasets
from ..runtime import as_generator


@dataclass(frozen=True)
class Pool:
    """Tensors on one device. X_*: (n, 40) or (n, C, H, W); y_*: (n,) int64.

    ``pop`` is the population proxy (None when the data have none, e.g. digits)."""

    name: str
    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    X_pop: torch.Tensor | None
    y_pop: torch.Tensor | None
    n_classes: int

    @property
    def n_train(self) -> int:
        return len(self.y_train)

    def train_subset(self, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The first ``n`` training samples (the pool is already shuffled)."""
        if not 1 <= n <= self.n_train:
            raise ValueError(f"n must be in [1, {self.n_train}], got {n}")
        return self.X_train[:n], self.y_train[:n]


def _tensor(a: np.ndarray, device, dtype=None) -> torch.Tensor:
    t = torch.as_tensor(a, device=device)
    return t.to(dtype or torch.get_default_dtype()) if t.is_floating_point() else t


def make_pool(n_train: int, n_test: int, n_pop: int, *, seed: int, device="cpu") -> Pool:
    """One MNIST-1D call of ``n_train + n_test + n_pop`` samples, shuffled with ``seed`` and
    cut into train / test / population. Offline (``datasets.mnist1d`` never downloads)."""
    for name, v in (("n_train", n_train), ("n_test", n_test), ("n_pop", n_pop)):
        if v < 1:
            raise ValueError(f"{name} must be >= 1, got {v}")
    total = n_train + n_test + n_pop
    split = datasets.mnist1d(max(total, 10), seed=seed, test_fraction=0.5)
    X = np.concatenate([split.X_train, split.X_test])
    y = np.concatenate([split.y_train, split.y_test])
    perm = as_generator(seed).permutation(len(X))[:total]
    X, y = X[perm], y[perm]
    a, b = n_train, n_train + n_test
    return Pool(split.name, _tensor(X[:a], device), _tensor(y[:a], device),
                _tensor(X[a:b], device), _tensor(y[a:b], device),
                _tensor(X[b:], device), _tensor(y[b:], device), split.n_classes)


def image_pool(*, seed: int, real: str | None = None, device="cpu") -> Pool:
    """Images for the conv variant: digits (8x8, offline), or CIFAR-10/100 when ``real`` is
    "cifar10"/"cifar100" and torchvision finds them (else the digits stand-in, with a
    message from ``datasets.cifar``). No population proxy."""
    split = (datasets.cifar(real, seed=seed) if real else
             datasets.digits(seed=seed, images=True))
    return Pool(split.name, _tensor(split.X_train, device), _tensor(split.y_train, device),
                _tensor(split.X_test, device), _tensor(split.y_test, device), None, None,
                split.n_classes)


_DTYPES = {"float32": torch.float32, "float64": torch.float64}


@functools.lru_cache(maxsize=4)
def _pool_cached(n_train: int, n_test: int, n_pop: int, seed: int, device: str,
                 dtype: str) -> Pool:
    p = make_pool(n_train, n_test, n_pop, seed=seed, device=device)
    cast = lambda t: t.to(_DTYPES[dtype])  # noqa: E731
    return Pool(p.name, cast(p.X_train), p.y_train, cast(p.X_test), p.y_test, cast(p.X_pop),
                p.y_pop, p.n_classes)


def device_of(cfg) -> str:
    """The Config's device as a string ("auto": cuda when available)."""
    from ..runtime import get_device

    return str(get_device(None if cfg.device == "auto" else cfg.device))


def pool_for(cfg) -> Pool:
    """The MNIST-1D pool of a Config (cached per process): ``n_pool_train`` training
    samples, ``n_test`` test samples and ``n_pop_eff`` population samples drawn with
    ``cfg.seed``, on the Config's device, in its ``train_dtype``."""
    return _pool_cached(cfg.n_pool_train, cfg.n_test, cfg.n_pop_eff, cfg.seed, device_of(cfg),
                        cfg.train_dtype)


@functools.lru_cache(maxsize=2)
def _images_cached(real: str, seed: int, device: str, dtype: str) -> Pool:
    p = image_pool(seed=seed, real=real or None, device=device)
    cast = lambda t: t.to(_DTYPES[dtype])  # noqa: E731
    return Pool(p.name, cast(p.X_train), p.y_train, cast(p.X_test), p.y_test, None, None,
                p.n_classes)


def images_for(cfg) -> Pool:
    """The image pool of the conv variant (digits, or CIFAR-10 at paper scale when found)."""
    return _images_cached(cfg.conv_data, cfg.seed, device_of(cfg), cfg.train_dtype)


@functools.lru_cache(maxsize=2)
def _grid_images_cached(real: str, seed: int, res: int, test_fraction: float, device: str,
                        dtype: str) -> Pool:
    if real:
        p = image_pool(seed=seed, real=real, device=device)
        if p.name != "digits":
            cast = lambda t: t.to(_DTYPES[dtype])  # noqa: E731
            return Pool(p.name, cast(p.X_train), p.y_train, cast(p.X_test), p.y_test, None,
                        None, p.n_classes)
    split = datasets.digits(seed=seed, images=True, test_fraction=test_fraction)
    X = [torch.as_tensor(a, dtype=torch.float64) for a in (split.X_train, split.X_test)]
    if res != X[0].shape[-1]:
        X = [torch.nn.functional.interpolate(a, size=(res, res), mode="bilinear",
                                             align_corners=False) for a in X]
    mu, sd = X[0].mean(), X[0].std()
    X = [((a - mu) / sd).to(device=device, dtype=_DTYPES[dtype]) for a in X]
    name = "digits" if res == 8 else f"digits {res}x{res}"
    return Pool(name, X[0], torch.as_tensor(split.y_train, device=device), X[1],
                torch.as_tensor(split.y_test, device=device), None, None, split.n_classes)


def grid_images(cfg) -> Pool:
    """Images of the depth x width grid: digits split with ``grid_test_fraction``,
    bilinearly upsampled to ``grid_res`` and standardised with the training mean and
    standard deviation (or CIFAR-10 when ``conv_data`` names it and it is on disk)."""
    return _grid_images_cached(cfg.conv_data, cfg.seed, cfg.grid_res, cfg.grid_test_fraction,
                               device_of(cfg), cfg.train_dtype)
