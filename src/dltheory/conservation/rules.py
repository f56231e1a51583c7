"""Chapter 1's rules, fixed before the run (see ``dltheory.claims``, "Rules").

``KINDS``: every claim id and its kind (the kinds rule of the book: evidence only if it could
fail on correct code were the paper wrong about the blocks and data the chapter runs;
calculus on the book's code, a proved bound, a design guard: identity; the book's theory
against its own model: derivation). ``DECIDES``: the hard claims each scale decides at the
defaults (from the calibration record ``book/calibration/conservation_laws.smoke.json``
and the standard builds). ``MAX_RESOLUTION``: one entry, the matched-progress gap, whose
corner spread needs a wider band; every other hard claim with a prediction resolves 20% or
better (the counts exactly).

The gates that decide whether a claim is checked live here as functions of the inputs
(each tested both ways in ``tests/conservation``):

* ``late_window(cfg)``: the real-data late window, the widest whose largest step keeps
  ``tau lambda_max <= late_tau_lam`` (beyond it GD leaves the flow and alpha - beta = 1 need
  not hold);
* ``plain_chain_undetermined(cfg)``: why the residual-free chain cannot be counted;
* ``matched_in_reach(n_in, n_all, share)``: whether enough (block, seed) pairs reach matched
  progress in the flow regime for the matched-progress claims;
* ``sparse_k(cfg)``: k of the top-k sigmoid gate (at least 2: k = 1 gives g = 1).
"""

from __future__ import annotations

ORTH_BLOCKS = ("swiglu", "mha", "mha_sin", "mha_rope", "mha_rope_half", "moe_dense", "moe_topk",
               "moe_switch", "rmsnorm_swiglu", "linear_layernorm_swiglu", "mha_qknorm")
CONTROLS = ("gelu_relu_law", "silu_relu_law", "swiglu_gate_branch", "rope_wrong_pairing",
            "rope_full_qk", "moe_sigmoid_router_sum", "qknorm_full_qk")
COUNTS = ("linear", "relu", "gelu", "silu", "swiglu", "mha", "mha_sin", "mha_rope",
          "moe_dense", "moe_topk", "moe_switch", "moe_top1_renorm")
BIG_COUNTS = ("mha_big", "mha_rope_big")          # standard and paper only
SIGMOIDS = ("sigmoid", "sigmoid_norm", "sigmoid_topk_norm", "sigmoid_centred", "sigmoid_bias")
GATE_BLOCKS = ("moe_dense", "moe_topk", "moe_switch", "moe_top1_renorm", *SIGMOIDS)
NORMS = ("rmsnorm_swiglu", "layernorm_swiglu", "linear_rmsnorm_swiglu",
         "linear_layernorm_swiglu", "mha_qknorm")
DISC_BLOCKS = ("swiglu", "mha_rope", "moe_topk")
#: the paper's blocks whose listed laws are checked for completeness: functionally
#: independent (rank of their gradients) and as many as the counted laws
COMPLETE = ("swiglu", "mha", "mha_sin", "mha_rope", "moe_dense")

GUARDS = ("CL.sgd.stochastic", "CL.sgd.batches", "CL.gd.early_window",
          "CL.adam.window_shorter", "CL.sgd_walk.batched_is_loop", "CL.lm.late_is_late",
          "CL.vit.late_is_late", "CL.matched.reach_count")

KINDS: dict[str, str] = {
    **{f"CL.orth.{b}": "hard" for b in ORTH_BLOCKS},
    **{f"CL.neg.{c}": "hard" for c in CONTROLS},
    **{f"CL.count.{n}": "hard" for n in COUNTS + BIG_COUNTS},
    **{f"CL.complete.{n}": "hard" for n in COMPLETE},
    "CL.count.smooth_full_rank": "hard",
    "CL.residual_union": "hard",
    "CL.residual_union.plain": "hard",
    **{f"CL.gate_shift.{b}": "identity" for b in GATE_BLOCKS},
    **{f"CL.count.sigmoid.{s}": "hard" for s in SIGMOIDS},
    **{f"CL.sigmoid_gating.{s}": "soft" for s in SIGMOIDS},
    **{f"CL.norm.{n}": "hard" for n in NORMS},
    "CL.grad_vs_loss": "identity",
    "CL.gd.identity": "identity",
    **{f"CL.gd.tau_exponent.{b}": "identity" for b in DISC_BLOCKS},
    **{f"CL.gd.k_exponent.{b}": "identity" for b in DISC_BLOCKS},
    "CL.gd.bound": "identity",
    "CL.sgd.tau_exponent": "identity",
    "CL.sgd.k_exponent": "derivation",
    "CL.adam.tau_exponent": "hard",
    "CL.router_sum": "identity",
    "CL.router_sum.adam": "hard",                    # E >= 3
    "CL.router_sum.adam_two_experts": "identity",    # E = 2: opposite rows, opposite updates
    "CL.wd.recurrence": "identity",
    "CL.wd.decay": "derivation",
    "CL.matched.gd_slope": "hard",
    "CL.matched.adam_gap": "hard",
    "CL.lm.gd_tau_exponent": "identity",
    "CL.lm.router_sum": "identity",
    "CL.lm.late_window": "hard",
    "CL.vit.gd_tau_exponent": "identity",
    "CL.vit.late_window": "soft",
    **dict.fromkeys(GUARDS, "identity"),
}

_HARD = tuple(i for i, k in KINDS.items() if k == "hard")
#: decided at the defaults (D_MODEL=4, HIDDEN=3, HEADS=2, HEAD_DIM=2, VALUE_DIM=2,
#: EXPERTS=3, TOPK=2): every hard claim; the widened attention counts from standard on
DECIDES: dict[str, tuple[str, ...]] = {
    "smoke": tuple(i for i in _HARD if not i.endswith("_big")),
    "standard": _HARD,
}
MAX_RESOLUTION: dict[str, tuple[float, str]] = {
    # fixed before the recalibration, from the corner spread (book/records/cl_matched_spread.json)
    "CL.matched.adam_gap": (0.33, "the corner spread sets the band at 0.165 (worst corner bias "
                                  "0.059 + 3.4 x sd 0.031); a PASS then resolves at most 2 x 0.165 "
                                  "= 33%, still far from the alternatives (a gap of 0 if Adam's "
                                  "drift shrank like GD's, 0.5 for half its first-order term)"),
}


def late_window(cfg) -> float:
    """The late window of the real-data claims: the widest of ``lm_windows`` whose largest
    step has ``tau lambda_max = tl / max(k) <= late_tau_lam`` (GD tracks the flow there)."""
    kmax = max(max(cfg.lm_ks), max(cfg.vit_ks))
    ok = [w for w in cfg.lm_windows if w / kmax <= cfg.late_tau_lam]
    if not ok:
        raise ValueError(f"no window in lm_windows={cfg.lm_windows} has tau lam <= "
                         f"{cfg.late_tau_lam} at k <= {kmax}")
    return max(ok)


def plain_chain_undetermined(cfg) -> str:
    """Why the law count of the plain (residual-free) MHA -> SwiGLU chain cannot be
    determined at these knobs ("" when it can), from the knobs alone: with one head of value
    dim 1 the chain passes one scalar per token to the SwiGLU, whose m >= 2 units are then
    functions of that scalar with nearly collinear Jacobian columns; the spectrum has no gap
    in float64 and the counter refuses."""
    if cfg.H * cfg.dv == 1 and cfg.m >= 2:
        return (f"not counted: with H d_v = 1 and m = {cfg.m} the plain chain feeds one "
                "scalar per token to the SwiGLU, its rank has no gap in float64")
    return ""


def matched_in_reach(n_in: int, n_all: int, share: float) -> bool:
    """The matched-progress claims are checked when at least ``share`` of the ``n_all``
    GD (block, seed) pairs reach matched progress in the flow regime."""
    if not (0 <= n_in <= n_all and n_all > 0 and 0 < share <= 1):
        raise ValueError(f"need 0 <= n_in <= n_all, n_all > 0, 0 < share <= 1; got "
                         f"n_in={n_in!r}, n_all={n_all!r}, share={share!r}")
    return n_in >= share * n_all


def sparse_k(cfg) -> int:
    """k of the top-k sigmoid definition: TOPK, but at least 2 (k = 1 gives g = 1)."""
    return min(cfg.E, max(2, cfg.k))
