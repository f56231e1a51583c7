"""Data: the MNIST-1D pool is deterministic, offline, and cut from one call."""

import numpy as np
import pytest
import torch

from dltheory.depth_expansion import image_pool, make_pool


def test_pool_is_deterministic_and_offline(monkeypatch):
    import socket

    import requests

    def boom(*a, **k):
        raise RuntimeError("network access attempted")

    monkeypatch.setattr(requests, "get", boom)
    monkeypatch.setattr(socket.socket, "connect", boom)
    a = make_pool(60, 30, 50, seed=3)
    b = make_pool(60, 30, 50, seed=3)
    c = make_pool(60, 30, 50, seed=4)
    assert torch.equal(a.X_train, b.X_train) and torch.equal(a.y_pop, b.y_pop)
    assert not torch.equal(a.X_train, c.X_train)
    assert a.X_train.shape == (60, 40) and a.X_test.shape == (30, 40) and a.X_pop.shape == (50, 40)
    assert a.n_classes == 10 and a.X_train.dtype == torch.get_default_dtype()


def test_pool_sets_are_disjoint_and_one_standardisation():
    p = make_pool(100, 50, 150, seed=0)
    X = torch.cat([p.X_train, p.X_test, p.X_pop]).numpy()
    assert len(np.unique(X.round(10), axis=0)) == len(X)
    # one pool, one standardisation: the overall mean is ~0 and std ~1
    assert abs(X.mean()) < 0.1 and abs(X.std() - 1) < 0.1


def test_pool_bad_sizes():
    with pytest.raises(ValueError, match="n_pop"):
        make_pool(10, 10, 0, seed=0)
    p = make_pool(20, 10, 10, seed=0)
    with pytest.raises(ValueError, match="n must be"):
        p.train_subset(21)


def test_digits_images():
    p = image_pool(seed=0)
    assert p.X_train.shape[1:] == (1, 8, 8) and p.X_pop is None
