"""Named random streams: one seeding path for numpy and torch.

A chapter has one seed (``cfg.seed``, the ``SEED`` knob); each thing it draws takes its own
stream, named by what it is, never by a hand offset such as ``seed + 100 + s``::

    rng = seeds.numpy(cfg.seed, "start", s)          # the s-th random start
    gen = seeds.torch(cfg.seed, "init", width)       # a torch.Generator for one init
    seeds.torch_global(cfg.seed, "model")            # torch's global RNG (nn.Module init)

The stream of ``(seed, *names)`` is NumPy's ``SeedSequence(seed, spawn_key=keys)``, with
one key per name: a non-negative int is its own key, anything else the first 32 bits of the
SHA-256 of its ``str`` (stable across processes and machines, unlike ``hash``). So
``seeds.numpy(seed, 3)`` is ``default_rng(SeedSequence(seed).spawn(4)[3])``, streams with
different names are independent, and a stream never depends on the order in which others
were drawn. The torch streams are seeded from 63 bits of the same sequence's state. This
module is the only place in the package that calls ``manual_seed``.
"""

from __future__ import annotations

import hashlib
import numbers
from typing import Any

import numpy as np

__all__ = ["key", "sequence", "numpy", "torch", "torch_seed", "torch_global"]


def key(name: Any) -> int:
    """The spawn key of one name: a non-negative int is itself (below 2**32), anything
    else the first 32 bits of the SHA-256 of ``str(name)``."""
    if isinstance(name, numbers.Integral) and not isinstance(name, bool) and 0 <= name < 2**32:
        return int(name)
    return int.from_bytes(hashlib.sha256(str(name).encode()).digest()[:4], "little")


def sequence(seed: int, *names: Any) -> np.random.SeedSequence:
    """The ``SeedSequence`` of the stream ``(seed, *names)``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(int(seed), spawn_key=tuple(key(n) for n in names))


def numpy(seed: int, *names: Any) -> np.random.Generator:
    """A NumPy ``Generator`` on the stream ``(seed, *names)``."""
    return np.random.default_rng(sequence(seed, *names))


def torch_seed(seed: int, *names: Any) -> int:
    """The 63-bit integer that seeds torch on the stream ``(seed, *names)``."""
    return int(sequence(seed, *names).generate_state(1, np.uint64)[0] >> np.uint64(1))


def torch(seed: int, *names: Any, device: Any = None):
    """A ``torch.Generator`` on ``device`` (default cpu) on the stream ``(seed, *names)``."""
    import torch as _torch

    g = _torch.Generator(device=device if device is not None else "cpu")
    g.manual_seed(torch_seed(seed, *names))
    return g


def torch_global(seed: int, *names: Any) -> int:
    """Seed torch's global RNG (every device) on the stream ``(seed, *names)``, for code
    that draws from it (``nn.Module`` initialisers); returns the seed used."""
    import torch as _torch

    s = torch_seed(seed, *names)
    _torch.manual_seed(s)
    return s
