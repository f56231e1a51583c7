"""Cost model of the chapter's sweeps: seconds per training step, steps per round.

Per-step times were measured on one CPU thread (float32, this session's machine, AdamW,
``time.process_time`` over 5-10 steps):

    conv ResNet, batch 64:  (8, 1, 8) 3.5 ms, (16, 4, 8) 9.9 ms, (16, 2, 16) 14.7 ms,
                            (32, 8, 16) 141 ms, (64, 16, 16) 903 ms, (64, 16, 32) 3.72 s
                            (channels, blocks, image side)
    MLP, batch 128:         (16, 4) 2.0 ms, (64, 4) 2.5 ms, (512, 4) 25.8 ms, (256, 12) 23.2 ms

and fitted by ``2 ms + 1.5 ms L + 55 ns * L c^2 s^2`` (conv) and
``1.5 ms + 0.25 ms L + 20 ns * L w^2`` (MLP). No GPU was available to this session: on one
H100 these tiny networks are launch-bound, and the model assumes ``1 ms + 0.25 ms L`` per
step for the conv ResNet and ``1 ms + 0.1 ms L`` for the MLP (fewer kernels per block), plus
the arithmetic at 20 TFLOP/s (float32 convolutions and matrix products, no TF32); the GPU
numbers are estimates, not measurements.
"""

from __future__ import annotations

import math


def conv_step(channels: int, depth: int, side: int, batch: int = 64, *, device: str = "cpu"
              ) -> float:
    """Seconds per AdamW step of the post-norm conv ResNet (3x3 convolutions; GPU: 1 ms +
    0.25 ms per block plus the arithmetic)."""
    if device == "cpu":
        return 2e-3 + 1.5e-3 * depth + 55e-9 * depth * channels**2 * side**2 * batch / 64
    flops = 2 * 2 * 9 * channels**2 * side**2 * batch * 3 * depth
    return 1e-3 + 0.25e-3 * depth + flops / 20e12


def mlp_step(width: int, depth: int, batch: int = 128, *, device: str = "cpu",
             d_in: int = 40) -> float:
    """Seconds per AdamW step of the post-norm residual MLP (GPU: 1 ms + 0.1 ms per block
    plus the arithmetic)."""
    if device == "cpu":
        return 1.5e-3 + 0.25e-3 * depth + 20e-9 * depth * width**2 * batch / 128
    flops = 2 * 2 * width**2 * batch * 3 * depth + 2 * d_in * width * batch * 3
    return 1e-3 + 0.1e-3 * depth + flops / 20e12


def _steps(n: int, batch: int, epochs: int) -> int:
    return int(epochs * math.ceil(n / batch))


def round_seconds(cfg, sweep: str, device: str = "cpu") -> float:
    """Estimated seconds of one round (one seed of every grid point) of ``sweep`` at
    ``cfg``'s sizes, training steps only (at most the epoch caps; early stopping makes the
    real cost smaller)."""
    d = device
    if sweep == "expansion":
        ep = cfg.budget_epochs(cfg.epochs_old) + 2 * cfg.budget_epochs(cfg.block_epochs, floor=1)
        tw = cfg.budget_epochs(cfg.twin_max_epochs)
        return (_steps(cfg.n_train, cfg.batch, ep + tw)
                * mlp_step(cfg.width, cfg.depth, cfg.batch, device=d))
    if sweep == "transformer":
        return (_steps(cfg.tf_n_train, cfg.tf_batch, cfg.tf_epochs) * cfg.tf_len / 4
                * mlp_step(cfg.tf_d, 3 * cfg.tf_depth, cfg.tf_batch, device=d))
    if sweep == "alignment":
        return sum(cfg.align_steps_eff * mlp_step(cfg.width, cfg.depth, cfg.batch, device=d)
                   for _ in cfg.align_ns)
    if sweep == "observability":
        return sum(_steps(cfg.n_train, cfg.batch, cfg.obs_max_epochs)
                   * mlp_step(w, 4, cfg.batch, device=d) for w in cfg.obs_widths)
    if sweep == "regression":
        return (_steps(cfg.n_train, cfg.batch, cfg.reg_epochs)
                * mlp_step(cfg.reg_width, 4, cfg.batch, device=d))
    if sweep == "progressive":
        return sum(_steps(cfg.prog_n, cfg.batch, cfg.prog_epochs)
                   * mlp_step(64, 2 + k, cfg.batch, device=d) for k in range(cfg.prog_rounds + 1))
    side, n_img = (32, 50_000) if cfg.conv_data == "cifar10" else (cfg.grid_res, 1078)
    if sweep == "grid":
        return sum(_steps(n_img, cfg.grid_batch, cfg.grid_epochs)
                   * conv_step(w, L, side, cfg.grid_batch, device=d)
                   for w in cfg.grid_widths for L in cfg.grid_depths)
    if sweep == "conv":
        s = 32 if cfg.conv_data == "cifar10" else 8
        return sum(_steps(n_img, cfg.batch, cfg.conv_epochs) * conv_step(c, 2, s, cfg.batch,
                                                                        device=d)
                   for c in cfg.conv_widths)
    raise ValueError(f"unknown sweep {sweep!r}")


ROUNDS = {"expansion": "n_seeds", "transformer": "tf_seeds", "alignment": "align_seeds",
          "observability": "obs_seeds", "grid": "grid_seeds", "regression": "reg_seeds"}


def sweep_seconds(cfg, sweep: str, device: str = "cpu") -> float:
    """Estimated seconds of the whole sweep (its rounds; progressive and conv have one)."""
    k = getattr(cfg, ROUNDS[sweep]) if sweep in ROUNDS else 1
    if sweep == "expansion":   # the twin runs in the first round only
        one = round_seconds(cfg, sweep, device)
        tw = (_steps(cfg.n_train, cfg.batch, cfg.budget_epochs(cfg.twin_max_epochs))
              * mlp_step(cfg.width, cfg.depth, cfg.batch, device=device))
        return k * (one - tw) + tw
    return k * round_seconds(cfg, sweep, device)


SWEEPS = ("expansion", "transformer", "conv", "alignment", "grid", "observability",
          "progressive", "regression")


def table(cfg, device: str = "cpu") -> dict[str, float]:
    """Estimated seconds of every sweep at ``cfg``."""
    return {s: sweep_seconds(cfg, s, device) for s in SWEEPS}


class BudgetRule:
    """The budget rule of the smoke and standard scales, mixed into ``Config``: epochs,
    permutations and alignment steps divided by the cost of a step relative to width 64,
    depth 4 when it exceeds one (a width-256, depth-12 network then costs about as much as
    the default); cheaper networks get up to twice the population sample."""

    @property
    def work_factor(self) -> float:
        """Cost of a step, depth * (9000 + width^2) (1 CPU thread), relative to 64 x 4."""
        return self.depth * (9000.0 + self.width**2) / (4 * (9000.0 + 64**2))

    def _budgeted(self) -> bool:
        return self.scale not in ("paper", "full") and self.work_factor > 1

    @property
    def n_pop_eff(self) -> int:
        """Doubled (at most) for networks cheaper than the default (weaker signals)."""
        if self.scale in ("paper", "full") or self.work_factor >= 1:
            return self.n_pop
        return 2 * round(self.n_pop * min(2.0, 1.0 / self.work_factor) / 2)

    def budget_epochs(self, epochs: int, floor: int | None = None) -> int:
        """Divided by the work factor above one, within [floor or min_epochs, epochs]."""
        if not self._budgeted():
            return int(epochs)
        lo = self.min_epochs if floor is None else floor
        return int(min(epochs, max(lo, round(epochs / self.work_factor))))

    @property
    def n_perm_eff(self) -> int:
        """Divided by the work factor above one, at least 50 (the null-mean tolerance
        follows the Monte Carlo error)."""
        if not self._budgeted():
            return self.n_perm
        return max(min(50, self.n_perm), round(self.n_perm / self.work_factor))

    @property
    def align_steps_eff(self) -> int:
        if not self._budgeted():
            return self.align_steps
        return max(self.align_steps // 4, round(self.align_steps / self.work_factor))

