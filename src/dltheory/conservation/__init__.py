"""Conservation laws of gradient flow for SwiGLU, attention, RoPE and MoE (chapter 1).

- ``models``: reference blocks (bias-free): FFN, SwiGLU, MHA (+sin / RoPE / QK-norm), MoE,
  Chain, Norm / NormSwiGLU (RMSNorm, LayerNorm)
- ``laws``: the laws of each block as functions of a parameter dict; counts; negative controls
- ``lie``: Jacobian rows, Lie brackets, orthogonality and law counting with torch.func
  (``count_laws`` raises ``UnderdeterminedCount`` rather than return an unchecked count)
- ``train``: GD / SGD / heavy ball / Adam / weight decay loops recording every law; fits
- ``networks``: a tiny character LM and a digits ViT built from the blocks; teacher tasks
- ``config``: ``Config`` (every size, seed count, window, tolerance) and the block-dimension
  domain
- ``theory``: predictions beyond the exact identities (matched progress, late window, decay)
- ``experiments``, ``checks``, ``figures``: the chapter's tidy experiments, claims and figures
"""

from .. import toolkit_getattr as _toolkit_getattr
from .laws import (
    LawFamily,
    column_sum_law,
    expert_laws,
    ffn_laws,
    law_values,
    laws_for,
    moe_count,
    negative_control,
    norm_gain_laws,
    qk_laws,
    qknorm_laws,
    renorm_top1_count,
    router_sum,
    scale_law,
    shift_invariant,
    swiglu_laws,
    theory_count,
    vo_laws,
)
from .lie import (
    LawCount,
    UnderdeterminedCount,
    brackets,
    count_laws,
    flat_fn,
    flatten,
    jacobian_rows,
    jacobian_rows_loop,
    law_gradients,
    max_abs_cos,
    nested_brackets,
    numrank,
    orthogonality,
    sample_inputs,
)
from .models import (
    FFN,
    MHA,
    Chain,
    MoE,
    Norm,
    NormSwiGLU,
    SwiGLU,
    apply_rope,
    rope_angles,
    sinusoidal_pe,
)
from .networks import TinyLM, TinyViT, ce_loss, lm_batch, patchify, teacher_regression
from .train import (
    EarlyWindow,
    ExponentFit,
    Trajectory,
    early_window,
    errors_at,
    fit_tau_k,
    sharpness,
    sweep,
    train,
    train_gd_batched,
)

__all__ = [
    "FFN", "MHA", "Chain", "MoE", "Norm", "NormSwiGLU", "SwiGLU", "apply_rope", "rope_angles", "sinusoidal_pe",
    "LawFamily", "column_sum_law", "expert_laws", "norm_gain_laws", "qknorm_laws",
    "renorm_top1_count", "moe_count", "shift_invariant", "scale_law", "ffn_laws", "law_values", "laws_for", "negative_control",
    "qk_laws", "router_sum", "swiglu_laws", "theory_count", "vo_laws",
    "LawCount", "UnderdeterminedCount", "brackets", "count_laws", "flat_fn", "flatten", "jacobian_rows",
    "jacobian_rows_loop", "law_gradients", "max_abs_cos", "nested_brackets", "numrank", "orthogonality",
    "sample_inputs",
    "TinyLM", "TinyViT", "ce_loss", "lm_batch", "patchify", "teacher_regression",
    "EarlyWindow", "ExponentFit", "Trajectory", "early_window", "errors_at", "fit_tau_k",
    "sharpness", "sweep", "train", "train_gd_batched",
]


# the toolkit functions (tools.py, quadratic.py: for a reader's own model), loaded on
# first use and kept out of the chapter's verdict-deciding imports
__getattr__ = _toolkit_getattr(__name__, ("tools", "quadratic"))
