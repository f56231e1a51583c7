"""The chapter's claims: one function per section, ``(ledger, cfg, results) -> None``.

Every claim's kind is declared in ``rules.KINDS`` before the run; the ledger echoes each
claim as it is recorded.

Predictions come from ``laws.theory_count`` / ``laws.renorm_top1_count`` (through
``experiments.predicted_count``) and from ``theory``, called here rather than stored with the
measurements, so that a planted error in the theory changes the verdict (see the mutation
tests). Checks that hold by construction are recorded as ``kind="identity"``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import experiments as ex
from . import laws as L
from . import rules, theory
from .config import Config
from .train import fit_tau_k, sgd_batches


def cut(df: pd.DataFrame | None) -> str:
    """Why the claims a sweep feeds cannot be decided ("" when they can): the budget ended
    its first round part-way, so the table holds ``k`` of the ``n`` tasks planned
    (``df.attrs["tasks"]``) and not one whole round. Those claims are then INCONCLUSIVE
    with this reason (evidence) or left out (identities, which hold or fail), never checked
    on the rows that happen to be there."""
    if df is None:
        return ""
    done, _ = df.attrs.get("rounds", (1, 1))
    k, n = df.attrs.get("tasks", (len(df), len(df)))
    if done == 0 and k < n:
        return f"had {k} of {n} tasks: the budget ended the sweep's first round part-way"
    return ""


def _identity(ledger, id, statement, measured, *, note="", **kw):
    """An identity (holds by construction: shown, never counted as evidence)."""
    return ledger.check(id, statement, measured, kind="identity", note=note, **kw)


COUNT_IDS = {  # block -> claim id suffix
    "linear": "linear", "relu": "relu", "gelu": "gelu", "silu": "silu", "swiglu": "swiglu",
    "mha": "mha", "mha_sin": "mha_sin", "mha_rope": "mha_rope", "moe_dense": "moe_dense",
    "moe_topk": "moe_topk", "moe_switch": "moe_switch", "moe_top1_renorm": "moe_top1_renorm",
    "mha_big": "mha_big", "mha_rope_big": "mha_rope_big",  # standard and paper only
}
SIGMOIDS = {
    "sigmoid": r"$\sigma(z)$",
    "sigmoid_norm": r"$\sigma(z) / \sum_e \sigma(z_e)$",
    "sigmoid_topk_norm": r"$\sigma(z)$ renormalised over the top-$k$",
    "sigmoid_centred": r"$\sigma(z - \bar z)$",
    "sigmoid_bias": r"$\sigma(z + b)$, one shared bias",
}
COUNT_WHAT = r"$D - \dim \operatorname{Lie}(W)$ equals the predicted count"
NORMS = ("rmsnorm_swiglu", "layernorm_swiglu", "linear_rmsnorm_swiglu",
         "linear_layernorm_swiglu", "mha_qknorm")


def orthogonality(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """``CL.orth.<block>``: each block's laws orthogonal to every Jacobian row (max ``|cos|``
    under ``tol_orth``); ``CL.neg.<control>``: each negative control fails (max ``|cos|`` at
    least ``neg_lo``). INCONCLUSIVE when the sweep was cut."""
    why = cut(df)
    if why:
        ledger.skip([(f"CL.orth.{b}", f"the {b} laws are orthogonal to every Jacobian row "
                      f"({cfg.orth_seeds} draws)") for b in ex.ORTH_BLOCKS]
                    + [(f"CL.neg.{c}", f"negative control must fail: {w}")
                       for c, (_, w) in ex.CONTROLS.items()], why)
        return
    laws = df[df.control == ""]
    for block, g in laws.groupby("block", sort=False):
        ledger.check(f"CL.orth.{block}", f"the {block} laws are orthogonal to every Jacobian "
                     f"row ({cfg.orth_seeds} draws)", measured=g.max_cos.max(), hi=cfg.tol_orth)
    for ctrl, g in df[df.control != ""].groupby("control", sort=False):
        why = ex.CONTROLS[ctrl][1]
        ledger.check(f"CL.neg.{ctrl}", f"negative control must fail: {why}",
                     measured=g.max_cos.max(), lo=cfg.neg_lo)


def count_table(df: pd.DataFrame, names) -> pd.DataFrame:
    """The counts of ``names`` as shown in the chapter: six narrow columns that fit the
    book's text column (the spectra and the sampling details stay in ``df``)."""
    t = df[df.model.isin(list(names))]
    return pd.DataFrame({"block": t.model, "D": t.D, "rank W": t.rank_W,
                         "rank W+brackets": t.rank_WB, "laws": t.laws,
                         "derived": t.theory.map(lambda x: "—" if pd.isna(x) else int(x))})


def _row(df, name):
    r = df[df.model == name]
    if r.empty:
        raise KeyError(f"no count for {name!r}")
    return r.iloc[0]


def undecided(r) -> str:
    """Why a count row cannot decide its claim ("" when it can): the counter refused
    (``UnderdeterminedCount``: the samples did not determine the rank), or every bracket
    level it tried still raised the rank, so its count is only an upper bound and exceeds
    the prediction (an upper bound below or at the prediction still refutes or confirms)."""
    why = str(r.get("undetermined", "") or "")
    if why:
        return f"count not determined: {why}"
    closed = r.get("closed", True)
    if closed is False or (not pd.isna(closed) and not bool(closed)):
        if pd.isna(r.theory) or r.laws > r.theory:
            return (f"upper bound only: the bracket algebra had not closed after "
                    f"{int(r.levels)} levels ({int(r.laws)} laws at most)")
    return ""


def counts(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """``CL.count.<block>``: each block's numerical law count equals the count derived from
    its symmetries (exactly); the residual-union claims for the MHA to SwiGLU chain."""
    count_claims(ledger, cfg, df)
    _union(ledger, cfg, df)


def count_claims(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """``CL.count.<block>`` for every block of ``COUNT_IDS`` that ``df`` holds or skipped."""
    skipped = df.attrs.get("skipped", {})
    for name, suffix in COUNT_IDS.items():
        if name in skipped:
            ledger.inconclusive(f"CL.count.{suffix}", COUNT_WHAT + f" ({name})", kind="hard",
                                note=skipped[name])
            continue
        if not (df.model == name).any():
            continue
        r = _row(df, name)
        what = ("renormalised top-1 routing: $g = 1$, the router is frozen, $Em + Ed$ laws"
                if name == "moe_top1_renorm" else COUNT_WHAT + f" ({name})")
        if undecided(r):
            ledger.inconclusive(f"CL.count.{suffix}", what, kind="hard", note=undecided(r))
            continue
        ledger.check(f"CL.count.{suffix}", what, measured=int(r.laws),
                     predicted=ex.predicted_count(cfg, name), tol=0,
                     note=f"D={r.D}, rank W={r.rank_W}, gap {r.gap:.1e}, {r.n_inputs} inputs")


def completeness(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """``CL.complete.<block>``: the listed laws of each of the paper's blocks are
    functionally independent and as many as the counted laws: the rank of their gradients
    (``experiments.listed_rank_of``) equals ``D - dim Lie(W)`` (``laws``). The listed laws are conserved
    (``CL.orth``); with this, no law is missing from the list (cl-thm-complete)."""
    for name in rules.COMPLETE:
        r = _row(df, name)
        what = (f"the listed laws of {name} are functionally independent and as many as "
                r"the counted laws ($\operatorname{rank}\nabla h = D - \dim "
                r"\operatorname{Lie}(W)$): the list is complete")
        if undecided(r):
            ledger.inconclusive(f"CL.complete.{name}", what, kind="hard", note=undecided(r))
            continue
        ledger.check(f"CL.complete.{name}", what, measured=ex.listed_rank_of(cfg, name),
                     predicted=int(r.laws), tol=0, note=f"D={r.D}")


def _union(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """``CL.count.smooth_full_rank`` and the residual-union claims."""
    skipped = df.attrs.get("skipped", {})
    smooth = [_row(df, n) for n in ("gelu", "silu")]
    ledger.check("CL.count.smooth_full_rank", r"$\operatorname{rank} W = D$ already for GELU and SiLU FFNs",
                 measured=min(int(r.rank_W - r.D) for r in smooth), lo=0, hi=0)
    res = _row(df, "chain_residual")
    n_sum = ex.predicted_count(cfg, "mha_rope") + ex.predicted_count(cfg, "swiglu_d")
    plain_why = skipped.get("chain_plain", "") or undecided(_row(df, "chain_plain"))
    if undecided(res):
        ledger.inconclusive("CL.residual_union", "with residuals the MHA$\\to$SwiGLU law "
                            "count is the sum of the blocks' counts", kind="hard",
                            note=undecided(res))
        ledger.inconclusive("CL.residual_union.plain", "without residuals extra cross-layer "
                            "laws appear (count exceeds the sum)", kind="hard",
                            note=undecided(res))
        return
    n_plain = "not counted" if plain_why else f"{int(_row(df, 'chain_plain').laws)} laws"
    ledger.check("CL.residual_union", "with residuals the MHA$\\to$SwiGLU law count is the sum "
                 "of the blocks' counts", measured=int(res.laws), predicted=n_sum, tol=0,
                 note=f"without residuals: {n_plain}")
    plain_what = "without residuals extra cross-layer laws appear (count exceeds the sum)"
    if plain_why:
        ledger.inconclusive("CL.residual_union.plain", plain_what, kind="hard", note=plain_why)
    else:
        ledger.check("CL.residual_union.plain", plain_what,
                     measured=int(_row(df, "chain_plain").laws), lo=n_sum + 1,
                     note=f"sum + $d(d+1)/2$ = {n_sum + cfg.d * (cfg.d + 1) // 2}")


GATE_WHAT = {"moe_dense": "softmax", "moe_topk": "softmax, top-$k$",
             "moe_switch": "softmax, Switch top-1", "moe_top1_renorm": "softmax, top-1 renormalised",
             **SIGMOIDS}


def sigmoid_gating(ledger, cfg: Config, df: pd.DataFrame, shifts: pd.DataFrame) -> None:
    """Section 4.3. ``df``: the counts (``ex.counts``), ``shifts``: ``ex.gate_shifts``.

    Three kinds of claim per gate: (1) identity: the gate function is shift-invariant
    exactly when ``laws.shift_invariant`` says so (the router translation applied to the
    gate code); (2) hard: the counted laws equal the count derived from the symmetries,
    ``E m + d [shift-invariant]`` (``laws.moe_count``); (3) soft, the paper summary's
    sentence: the sigmoid router has the softmax router's laws, ``E m + d``."""
    for r in shifts.itertuples():
        what = f"gate {GATE_WHAT[r.block]}: "
        if L.shift_invariant(r.gate):
            _identity(ledger, f"CL.gate_shift.{r.block}", what + r"unchanged when every router "
                      r"row gets the same vector, $W_e \to W_e + a$ (shift-invariant)",
                      measured=r.change, hi=cfg.tol_exact)
        else:
            _identity(ledger, f"CL.gate_shift.{r.block}", what + r"changed by the router "
                      r"translation $W_e \to W_e + a$ (not shift-invariant)",
                      measured=r.change, lo=cfg.neg_lo)
    n_softmax = ex.predicted_count(cfg, "moe_dense")
    for name, what in SIGMOIDS.items():
        r = _row(df, name)
        n_derived = ex.predicted_count(cfg, name)
        if undecided(r):
            ledger.skip([(f"CL.count.sigmoid.{name}", f"sigmoid routing {what}: the counted "
                          "laws equal the count derived from its symmetries"),
                         (f"CL.sigmoid_gating.{name}", f"paper summary: sigmoid routing {what} "
                          "has the softmax router's laws ($Em + d$)")], undecided(r))
            continue
        why = ("shift-invariant gate: $Em$ expert laws + $d$ router-sum laws" if
               n_derived == n_softmax else "gate not shift-invariant: the $Em$ expert laws only")
        ledger.check(f"CL.count.sigmoid.{name}", f"sigmoid routing {what}: the counted laws "
                     "equal the count derived from its symmetries", measured=int(r.laws),
                     predicted=n_derived, tol=0,
                     note=f"{why}; D={r.D}, gap {r.gap:.1e}, {r.n_inputs} inputs")
        ledger.check(f"CL.sigmoid_gating.{name}", f"paper summary: sigmoid routing {what} has "
                     "the softmax router's laws ($Em + d$)", measured=int(r.laws),
                     predicted=n_softmax, tol=0, kind="soft",
                     note=f"derived for this gate: {n_derived}")


def normalisation(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """``CL.norm.<layer>``: each normalisation layer's law count equals the derived count."""
    for name in NORMS:
        r = _row(df, name)
        if undecided(r):
            ledger.inconclusive(f"CL.norm.{name}", f"law count of {name} equals the count "
                                "derived from its symmetries", kind="hard", note=undecided(r))
            continue
        ledger.check(f"CL.norm.{name}", f"law count of {name} equals the count derived from "
                     "its symmetries", measured=int(r.laws),
                     predicted=ex.predicted_count(cfg, name), tol=0,
                     note=f"D={r.D}, gap {r.gap:.1e}")


# --------------------------------------------------------------------------- discrete time
def law_exponents(df: pd.DataFrame, ks, by=("block", "seed")) -> pd.DataFrame:
    """``tau^alpha k^beta`` fitted to each law's own drift (``law_err`` of the Adam windows):
    one row per (group, law) with alpha; laws that do not move (below 1e-14) are left out."""
    rows = []
    for key, g in df[df.k.isin(list(ks))].groupby(list(by), sort=False):
        taus = np.sort(g.tau.unique())
        per = np.stack([np.stack(g[(g.tau == t)].set_index("k").loc[list(ks)].law_err.to_list())
                        for t in taus])                                  # (tau, k, law)
        for j in range(per.shape[2]):
            e = per[:, :, j]
            if (e > 0).sum() >= 4 and e.max() > 1e-14:
                rows.append({**dict(zip(by, key, strict=True)), "law": j,
                             "alpha": fit_tau_k(taus, np.asarray(ks), e).alpha})
    return pd.DataFrame(rows)


def window_fits(df: pd.DataFrame, ks, by=("block", "opt", "seed")) -> pd.DataFrame:
    """Fit err ~ tau^alpha k^beta on each (group) grid at the steps ks."""
    rows = []
    for key, g in df[df.k.isin(list(ks))].groupby(list(by), sort=False):
        taus = np.sort(g.tau.unique())
        err = (g.pivot_table(index="tau", columns="k", values="err").loc[taus, list(ks)]
               .to_numpy())
        f = fit_tau_k(taus, np.asarray(ks), err)
        rows.append({**dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True)),
                     "alpha": f.alpha, "beta": f.beta, "lam": g.lam.iloc[0]})
    return pd.DataFrame(rows)


def gradient(ledger, cfg: Config, df: pd.DataFrame) -> None:
    """The training gradient against finite differences of the loss (``ex.gradient_checks``)."""
    worst = df.ratio.iloc[int(np.argmax(np.abs(df.ratio - 1)))]
    _identity(ledger, "CL.grad_vs_loss", "the gradient the optimisers step with is the "
              "derivative of the loss (central differences, worst block)", measured=worst,
              predicted=1.0, tol=cfg.tol_grad_fd,
                 note=", ".join(f"{b} {r - 1:+.1e}" for b, r in zip(df.block, df.ratio,
                                                                      strict=True)))


def discrete(ledger, cfg: Config, win: pd.DataFrame, ident: pd.DataFrame,
             adam_win: pd.DataFrame, walks: pd.DataFrame | None = None) -> pd.DataFrame:
    """Sections 5-6 on the early windows, Adam's shorter windows, the identity runs and
    SGD's frozen-gradient walks (``ex.sgd_walks``); returns the fits of the early windows.

    Adam's exponent is fitted to each law's own drift, and the median taken over the laws of
    each block, then over the blocks. The exponent of the largest drift (the chapter's
    conservation error) has heavy tails: at some seeds the law that drifts most is one whose
    first-order coefficient ``theta^T S u`` changes along the window (Adam's sign-like
    direction ``m / sqrt(v)`` flips on coordinates whose gradient is small) or is small
    against the second-order term; one law then bends the exponent of the whole block. The
    median over the laws is robust to a few such laws."""
    fits = window_fits(win, cfg.ks)
    mean = fits.groupby(["block", "opt"], sort=False)[["alpha", "beta"]].mean()
    plain = ident[ident.wd == 0]
    _identity(ledger, "CL.gd.identity", r"$|h_k - h_0 - \tau^2 \sum_j q(g_j)|$ at rounding level after "
              f"{cfg.id_steps} GD steps", measured=plain.identity_residual.max(), hi=cfg.tol_exact,
              note=f"drift itself {plain.err.max():.1e}")
    weight_decay(ledger, cfg, ident)
    adam_what = (r"Adam breaks the laws at first order: exponent of $\tau$ "
                 "of each law's drift (median over the laws of each block, then over the "
                 f"blocks; window $\\tau k \\lambda_{{\\max}} \\le {cfg.adam_tl:g}$)")
    adam_router_what = r"Adam moves $\sum_e W_e$"
    why_win, why_adam = cut(win), cut(adam_win)
    if why_win or why_adam:
        # a first round cut part-way: the identities on these windows are left out, the
        # evidence is INCONCLUSIVE (never checked on the blocks that happen to be there)
        ledger.skip([("CL.adam.tau_exponent", adam_what)], why_adam or why_win)
        if cfg.E >= 3:
            ledger.skip([("CL.router_sum.adam", adam_router_what)], why_win or why_adam)
        return fits
    design_guards(ledger, cfg, win, adam_win)
    for block in ex.disc_blocks(cfg):
        a, b = mean.loc[(block, "gd")]
        _identity(ledger, f"CL.gd.tau_exponent.{block}", r"GD drift $\propto \tau^\alpha$ in the early "
                  f"window ({block}): $\\alpha = 2$ follows from the identity", measured=a,
                  lo=cfg.band_alpha[0], hi=cfg.band_alpha[1])
        _identity(ledger, f"CL.gd.k_exponent.{block}", r"GD drift $\propto k^\beta$ in the early window "
                  f"({block}): $\\beta = 1$ follows from the identity", measured=b,
                  lo=cfg.band_beta[0], hi=cfg.band_beta[1])
    gd = win[win.opt == "gd"]
    _identity(ledger, "CL.gd.bound", r"GD drift $\le \lVert S\rVert\,\tau^2 \sum_j \lVert g_j\rVert^2$ with $\lVert S\rVert \le 1$",
              measured=gd.bound.max(), hi=1.0)
    sgd = mean.xs("sgd", level="opt")
    worst = sgd.alpha.iloc[int(np.argmax(np.abs(sgd.alpha - 2)))]
    _identity(ledger, "CL.sgd.tau_exponent", r"SGD drift $\propto \tau^\alpha$, $\alpha$ near 2 (worst "
              "block): the identity holds for every mini-batch", measured=worst,
              lo=cfg.band_alpha[0], hi=cfg.band_alpha[1],
              note=", ".join(f"{b} {a:.2f}" for b, a in sgd.alpha.items()))
    if walks is not None and not cut(walks):   # cut walks: the derivation is left out
        sgd_k_exponent(ledger, cfg, sgd, walks)
    adam = law_exponents(adam_win, cfg.ks).groupby("block", sort=False).alpha.median()
    ledger.check("CL.adam.tau_exponent", adam_what,
                 measured=float(adam.median()), predicted=theory.adam_tau_exponent(),
                 tol=cfg.tol_adam_alpha, note=", ".join(f"{b} {a:.4f}" for b, a in adam.items()))
    moe = win[win.block == "moe_topk"]
    rs = moe.groupby("opt").router.max()
    _identity(ledger, "CL.router_sum", r"$\sum_e W_e$ is unchanged by GD, SGD and heavy ball (the "
              "gradient rows sum to zero)", measured=rs[["gd", "sgd", "heavy_ball"]].max(),
              hi=cfg.tol_exact)
    if cfg.E >= 3:
        ledger.check("CL.router_sum.adam", adam_router_what, measured=rs["adam"],
                     lo=cfg.adam_router_lo)
    else:  # two experts: the rows' gradients are exact negatives, so are Adam's updates
        _identity(ledger, "CL.router_sum.adam_two_experts", r"with $E = 2$ Adam's updates of the two router "
                  r"rows are exact negatives: $\sum_e W_e$ is kept", measured=rs["adam"],
                  hi=cfg.tol_exact)
    return fits


def weight_decay(ledger, cfg: Config, ident: pd.DataFrame) -> None:
    """The weight-decay recurrence (identity) and the decay it implies (derivation), on the
    identity runs (``ex.identity_runs``, a sweep the budget does not cut)."""
    wd = ident[ident.wd > 0]
    _identity(ledger, "CL.wd.recurrence", r"$h_{k+1} = (1 - \tau\lambda)^2 h_k + \tau^2 q(g_k)$ under "
              "weight decay", measured=wd.wd_residual.max(), hi=cfg.tol_exact)
    K = int(wd.k.max())
    ratio = wd.abs_h[wd.k == K].iloc[0] / wd.abs_h[wd.k == 0].iloc[0]
    ledger.check("CL.wd.decay", r"weight decay shrinks the laws like $(1 - \tau\lambda)^{2k}$ "
                 f"($k = {K}$; the recurrence without its $\\tau^2 q$ terms)", measured=ratio,
                 predicted=theory.wd_decay(cfg.id_tau, cfg.wd_lambda, K), rtol=cfg.rtol_wd,
                 kind="derivation")


def design_guards(ledger, cfg: Config, win: pd.DataFrame, adam_win: pd.DataFrame) -> None:
    """The discrete-time experiments are what their statements say: SGD steps on minibatches
    smaller than the data and its drift differs from GD's (a "SGD" that is full-batch GD
    would pass every check of the identity), and Adam's window lies inside GD's early
    window and is shorter (its exponent is read where the statement puts it)."""
    n = {b: v[2] for b, v in ex.disc_blocks(cfg).items()}
    key = ["block", "seed", "tau", "k"]
    gd = win[win.opt == "gd"].set_index(key).err
    sgd = win[win.opt == "sgd"].set_index(key).err.reindex(gd.index)
    rel = float(((sgd - gd).abs() / gd.abs().max()).max())
    small = all(cfg.sgd_batch < v for v in n.values())
    ledger.guard("CL.sgd.stochastic", "SGD steps on minibatches smaller than the data set and "
                 "its drift differs from full-batch GD's", bool(small and rel > 1e-6),
                 f"batch {cfg.sgd_batch} of n = {sorted(set(n.values()))}; largest "
                 f"|SGD - GD| drift {rel:.1e} of GD's")
    K = int(max(cfg.ks))
    subsets, detail = [], []
    for b, n_b in n.items():
        idx = sgd_batches(n_b, cfg.sgd_batch, K, seed=ex._seed(cfg, "sgd_batches", b, 0))
        distinct = {tuple(sorted(r.tolist())) for r in idx}
        subsets.append(cfg.sgd_batch < n_b and int(idx.min()) >= 0 and int(idx.max()) < n_b
                       and all(len(set(r.tolist())) == cfg.sgd_batch for r in idx)
                       and len(distinct) > 1)
        detail.append(f"{b}: {len(distinct)} distinct batches of {cfg.sgd_batch} in {K} steps, "
                      f"n = {n_b}")
    ledger.guard("CL.sgd.batches", "each SGD step draws a strict random subset of the data: "
                 "batch_size distinct indices of the n samples, fewer than n, and the batches "
                 "change from step to step (the draw train uses, seed 0 of each block)",
                 bool(all(subsets)), "; ".join(detail))
    tl_adam = float((adam_win.tau * adam_win.lam * adam_win.k).max())
    tl_gd = float((win.tau * win.lam * win.k).max())
    ledger.guard("CL.gd.early_window", r"the early-window grids lie where the statement puts "
                 r"them: every $\tau k \lambda_{\max} \le$ early_tl, $\lambda_{\max}$ the "
                 "sharpness at initialisation", bool(tl_gd <= cfg.early_tl * (1 + 1e-9)),
                 f"largest tau k lambda_max {tl_gd:.3g}, early_tl {cfg.early_tl:g}")
    ledger.guard("CL.adam.window_shorter", r"Adam's exponent is read on a window shorter "
                 r"than GD's early window, $\tau k \lambda_{\max} \le$ adam_tl",
                 bool(tl_adam <= cfg.adam_tl * (1 + 1e-9) and tl_adam < tl_gd),
                 f"Adam's window reaches {tl_adam:.3g}, GD's {tl_gd:.3g}")


def sgd_k_exponent(ledger, cfg: Config, sgd: pd.DataFrame, walks: pd.DataFrame) -> None:
    """``CL.sgd.k_exponent`` (derivation): SGD's fitted k exponent, mean over blocks (each
    block's mean over seeds), against the same mean over realisations of the
    frozen-gradient random walk (``ex._task_sgd_walk``): inside the range of its
    ``sgd_walk_draws`` realisations (a measurement outside it has probability below
    2 / (draws + 1) under the model)."""
    worst = float(walks.loop_diff.max())
    ledger.guard("CL.sgd_walk.batched_is_loop", "the batched random walk (embedding_bag means, "
                 "vmapped laws) equals a loop over its minibatches, step by step",
                 bool(worst <= cfg.tol_exact), f"largest relative difference {worst:.1e} "
                 f"(first realisation, first {min(int(max(cfg.ks)), 16)} steps of each block "
                 "and seed)")
    per = walks.groupby(["block", "draw"]).beta.mean().unstack("block")[list(sgd.index)]
    model = per.mean(axis=1).to_numpy()
    ledger.check("CL.sgd.k_exponent", r"SGD drift $\propto k^\beta$ (mean over blocks): "
                 r"$\beta$ within the range of the random walk $\tau^2 \sum_j q(g_j)$ with "
                 r"minibatch gradients frozen at $\theta_0$", measured=float(sgd.beta.mean()),
                 predicted=float(np.median(model)), lo=float(model.min()),
                 hi=float(model.max()), kind="derivation",
                 note=", ".join(f"{b} {a:.2f} (model median {np.median(per[b]):.2f})"
                                for b, a in sgd.beta.items()) + f"; {len(model)} draws")


def matched_slopes(df: pd.DataFrame) -> pd.DataFrame:
    """Slope of log drift vs log lr per (block, opt, seed) at matched progress."""
    rows = []
    for (b, o, s), g in df.groupby(["block", "opt", "seed"], sort=False):
        ok = np.isfinite(g.drift) & (g.drift > 0)
        slope = (np.polyfit(np.log(g.lr[ok]), np.log(g.drift[ok]), 1)[0] if ok.sum() >= 3
                 else np.nan)
        rows.append({"block": b, "opt": o, "seed": s, "slope": slope})
    return pd.DataFrame(rows)


def matched(ledger, cfg: Config, df: pd.DataFrame) -> pd.DataFrame:
    """Matched progress; the tolerances assume all ``match_seeds`` seeds (budgeted runs with
    fewer rounds are INCONCLUSIVE). A GD (block, seed) whose flow path sharpens so much that
    its step grid would need more than ``match_max_steps`` is left out (``in_reach``, decided
    by the probe run before the drift is measured); with fewer than ``match_min_share`` of
    the pairs in reach both claims are INCONCLUSIVE."""
    rounds = (df.attrs.get("rounds", (cfg.match_seeds,))[0], cfg.match_seeds)
    gd_what = "GD at matched loss: drift $\\propto$ lr$^1$ (flow: $\\tau F(t)$)"
    gap_what = ("at matched loss GD's lr exponent exceeds Adam's by 1 (Adam's drift does not "
                "shrink with its lr)")
    why = cut(df)
    if why:
        ledger.skip([("CL.matched.gd_slope", gd_what), ("CL.matched.adam_gap", gap_what)], why)
        return matched_slopes(df[df.in_reach]).reindex(
            columns=["block", "opt", "seed", "slope"])
    reach = df[df.opt == "gd"].groupby(["block", "seed"]).in_reach.all()
    n_in, n_all = int(reach.sum()), len(reach)
    sl = matched_slopes(df[df.in_reach])
    mean = sl.groupby("opt").slope.mean()
    n_fit = int((sl.opt == "gd").sum())
    is_open = rules.matched_in_reach(n_in, n_all, cfg.match_min_share)
    ledger.guard("CL.matched.reach_count", "the GD pairs fitted are the pairs counted in "
                 "reach, no more than the pairs run, and the reach gate is open exactly when "
                 "their share is at least match_min_share",
                 bool(n_fit == n_in <= n_all
                      and is_open == (n_in / n_all >= cfg.match_min_share)),
                 f"{n_fit} fitted, {n_in} in reach of {n_all}, gate "
                 f"{'open' if is_open else 'closed'} at share {cfg.match_min_share:g}")
    note = "; ".join(f"{b}/{o}: {v:.2f}" for (b, o), v in
                     sl.groupby(["block", "opt"], sort=False).slope.mean().items())
    note += f"; GD pairs in reach {n_in}/{n_all}"
    if not is_open:
        why = (f"only {n_in} of {n_all} GD (block, seed) pairs reach matched progress in the "
               f"flow regime within {cfg.match_max_steps} steps (the path sharpens)")
        for id_, what in (("CL.matched.gd_slope", gd_what), ("CL.matched.adam_gap", gap_what)):
            ledger.inconclusive(id_, what, kind="hard", note=why)
        return sl
    ledger.check("CL.matched.gd_slope", gd_what,
                 measured=mean["gd"], predicted=theory.matched_slope("gd"),
                 tol=cfg.tol_match_gd, note=note, allow_nonfinite=True, rounds=rounds)
    ledger.check("CL.matched.adam_gap", gap_what, measured=mean["gd"] - mean["adam"],
                 predicted=theory.matched_slope("gd") - theory.matched_slope("adam"),
                 tol=cfg.tol_match_gap, allow_nonfinite=True, rounds=rounds)
    return sl


def real_data(ledger, cfg: Config, lm: pd.DataFrame | None, vit: pd.DataFrame | None,
              skipped: dict | None = None) -> dict:
    """Char-LM and ViT: early-window exponents (identities), router sum, late window. A
    sweep the budget left out (``None``; reason in ``skipped``) makes its evidence
    INCONCLUSIVE and leaves its identities out."""
    skipped = skipped or {}
    wide = rules.late_window(cfg)
    out = {"lm": None, "vit": None}
    window = f"late window ($\\tau k \\lambda_{{\\max}} \\le {wide:g}$)"
    lm_late = f"char-LM, GD, {window}: $\\alpha - \\beta = 1$ (flow regime)"
    vit_late = f"digits ViT, GD, {window}: $\\alpha - \\beta = 1$"
    if lm is None:
        ledger.inconclusive("CL.lm.late_window", lm_late, kind="hard",
                            note=skipped.get("cl_lm_windows", "not run"))
    else:
        out["lm"] = lmf = window_fits(lm, cfg.lm_ks, by=("window", "seed"))
        e_lm, l_lm = lmf[lmf.window == cfg.early_tl], lmf[lmf.window == wide]
        late = lm[lm.window == wide]
        step = float((late.tau * late.lam).max())
        ledger.guard("CL.lm.late_is_late", r"the late window is wider than the early one and "
                     r"its largest step keeps $\tau\lambda_{\max} \le$ late_tau_lam (GD "
                     "tracks the flow)", bool(wide > cfg.early_tl and len(l_lm) > 0
                                              and step <= cfg.late_tau_lam * (1 + 1e-9)),
                     f"windows {cfg.early_tl:g} and {wide:g}; largest late step "
                     f"tau lambda_max = {step:.3g}")
        _identity(ledger, "CL.lm.gd_tau_exponent", f"char-LM on {lm.data.iloc[0]}, GD: drift "
                  r"$\propto \tau^\alpha$, early window (follows from the identity)",
                  measured=e_lm.alpha.mean(), lo=cfg.band_alpha_real[0],
                  hi=cfg.band_alpha_real[1],
                  note=f"beta={e_lm.beta.mean():.2f}; {lm.seed.nunique()} seed(s)")
        _identity(ledger, "CL.lm.router_sum", "char-LM: router sum unchanged by GD",
                  measured=lm.router.max(), hi=cfg.tol_exact_lm)
        ledger.check("CL.lm.late_window", lm_late, measured=(l_lm.alpha - l_lm.beta).mean(),
                     predicted=theory.late_window_gap(), tol=cfg.tol_late,
                     note=f"alpha={l_lm.alpha.mean():.2f}, beta={l_lm.beta.mean():.2f}")
    if vit is None:
        ledger.inconclusive("CL.vit.late_window", vit_late, kind="soft", note=skipped.get("cl_vit", "not run"))
    else:
        out["vit"] = vif = window_fits(vit, cfg.vit_ks, by=("window", "seed"))
        e_vit, l_vit = vif[vif.window == cfg.early_tl], vif[vif.window == wide]
        late = vit[vit.window == wide]
        step = float((late.tau * late.lam).max()) if len(late) else float("nan")
        ledger.guard("CL.vit.late_is_late", r"the ViT's late window is wider than the early "
                     r"one and its largest step keeps $\tau\lambda_{\max} \le$ late_tau_lam",
                     bool(wide > cfg.early_tl and len(l_vit) > 0
                          and step <= cfg.late_tau_lam * (1 + 1e-9)),
                     f"windows {cfg.early_tl:g} and {wide:g}; largest late step "
                     f"tau lambda_max = {step:.3g}")
        _identity(ledger, "CL.vit.gd_tau_exponent", r"digits ViT, GD: drift $\propto \tau^\alpha$, early "
                  "window (follows from the identity)", measured=e_vit.alpha.mean(),
                  lo=cfg.band_alpha_real[0], hi=cfg.band_alpha_real[1])
        ledger.check("CL.vit.late_window", vit_late, measured=(l_vit.alpha - l_vit.beta).mean(),
                     predicted=theory.late_window_gap(), tol=cfg.tol_late, kind="soft",
                     note=f"alpha={l_vit.alpha.mean():.2f}, beta={l_vit.beta.mean():.2f}")
    return out
