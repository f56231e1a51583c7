"""A one-layer transformer on modular addition: PT on one modulus, FT on another.

Inputs are pairs ``(a, b) ∈ Z_p²`` as two tokens; the label is ``(a + b) mod m``. PT uses
``m_PT`` (e.g. 6 = 2·3); FT uses a modulus that shares PT's prime factors (3) or brings a
new one (5). Before FT the readout is re-initialised and the token embedding multiplied by
``κ_emb`` (the "balancedness"/λ_PT analogue: a smaller first layer). This protocol is the
book's own reconstruction; the paper's moduli and sizes are unknown.

Model (float32, pre-norm-free for simplicity)::

    x_i = E[tok_i] + P_i                     (2 tokens, width d)
    x  ← x + Attn(x)                         (n_heads heads, causal not needed)
    x  ← x + W_out relu(W_in x)              (MLP, width 4d)
    logits = U x_last
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .. import seeds


class TinyTransformer(nn.Module):
    def __init__(self, p: int, n_out: int, d: int = 64, n_heads: int = 4):
        super().__init__()
        self.embed = nn.Embedding(p, d)
        self.pos = nn.Parameter(torch.randn(2, d) / np.sqrt(d))
        self.attn = nn.MultiheadAttention(d, n_heads, batch_first=True)
        self.mlp_in, self.mlp_out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.unembed = nn.Linear(d, n_out)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        x = x + self.attn(x, x, x, need_weights=False)[0]
        x = x + self.mlp_out(F.relu(self.mlp_in(x)))
        return self.unembed(x[:, -1])


def pairs(p: int):
    """All ``p²`` token pairs, shape (p², 2), and their sums ``a + b``."""
    a, b = np.meshgrid(np.arange(p), np.arange(p), indexing="ij")
    tok = np.stack([a.ravel(), b.ravel()], 1)
    return torch.as_tensor(tok), torch.as_tensor(tok.sum(1))


def _train(model, tok, y, steps, lr, wd, params=None):
    opt = torch.optim.AdamW(params if params is not None else model.parameters(), lr=lr, weight_decay=wd)
    for _ in range(steps):
        opt.zero_grad()
        F.cross_entropy(model(tok), y).backward()
        opt.step()


@dataclass
class ModArithResult:
    modulus: int
    kappa: float
    test_acc: float


def pt_then_ft(p: int, m_pt: int, m_fts, kappas, *, frac: float = 0.4, d: int = 64,
               pt_steps: int = 1000, ft_steps: int = 1000, lr: float = 3e-3, wd: float = 1.0,
               seed: int = 0) -> list[ModArithResult]:
    """PT once on ``(a+b) mod m_pt``, then for each FT modulus and κ_emb a fresh copy is
    rescaled, its readout re-initialised, and trained on a random ``frac`` of the pairs;
    returns test accuracies on the other pairs."""
    if not 0 < frac < 1:
        raise ValueError(f"frac must lie in (0, 1), got {frac}")
    with torch.random.fork_rng():
        seeds.torch_global(seed, "modarith")
        dtype = torch.get_default_dtype()
        torch.set_default_dtype(torch.float32)
        try:
            tok, s = pairs(p)
            g = np.random.default_rng(seed)
            perm = torch.as_tensor(g.permutation(p * p))
            n_tr = int(frac * p * p)
            tr = perm[:n_tr]
            base = TinyTransformer(p, m_pt, d)
            _train(base, tok[tr], s[tr] % m_pt, pt_steps, lr, wd)
            out = []
            for m in m_fts:
                perm2 = torch.as_tensor(g.permutation(p * p))
                tr2, te2 = perm2[:n_tr], perm2[n_tr:]
                for kappa in kappas:
                    model = TinyTransformer(p, m, d)
                    state = {k: v for k, v in base.state_dict().items() if not k.startswith("unembed")}
                    model.load_state_dict(state, strict=False)
                    with torch.no_grad():
                        model.embed.weight.mul_(kappa)
                    _train(model, tok[tr2], s[tr2] % m, ft_steps, lr, wd)
                    with torch.no_grad():
                        acc = float((model(tok[te2]).argmax(1) == s[te2] % m).float().mean())
                    out.append(ModArithResult(m, kappa, acc))
            return out
        finally:
            torch.set_default_dtype(dtype)
