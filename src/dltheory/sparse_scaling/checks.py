"""The chapter's claims: one function per section, ``<section>(ledger, cfg, res)``.

Each function computes its predictions from the theory functions (so a planted error in the
theory changes the prediction, not the simulation) and records the claims. Claims that
the budget cannot test at the current knobs are recorded as INCONCLUSIVE with the reason
(``Config.valid_*``). Returns the numbers the chapter prints.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import fitting
from . import data, theory
from .config import Config
from .linear import peak_location
from .rules import kind as _kind
from .theory import expected_floor, expected_observed, floor_constant, heaps_constant


def _worst(x):
    """The value farthest from 1 in log (a worst-over-grid judge reads this one)."""
    x = np.asarray(x, dtype=float)
    return float(x[np.argmax(np.abs(np.log(x)))])


def _se(x) -> float:
    """Standard error of the mean of independent draws ``x`` (nan for fewer than two)."""
    x = np.asarray(x, dtype=float)
    return float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")


def _formula_rows(df):
    """Rows of the over-parameterised sweep the formula is judged on (the task marks the
    rank-deficient data sets m = -1: the formula needs rank X = K)."""
    return df[df.m >= 0]


def _fit_mask(NN, DD, rank):
    """Grid points the two-term fit uses: N > 8, D > 30, and not within 25% of the peak N = rank."""
    return (NN > 8) & (DD > 30) & (np.abs(NN / rank - 1) > 0.25)


def data_model(ledger, cfg: Config, res: dict, asym: dict) -> dict:
    ledger.check("SS.data.second_moment",
                 rf"empirical $\mathbb E x_j^2$ matches $j^{{-(\alpha_1+\alpha_2+2)}}$ for $j \le {res['J']}$ ($|z| \le {cfg.z_max:g}$)",
                 measured=float(np.max(np.abs(res["z"]))), hi=cfg.z_max,
                 note=f"max |z| over j, D = {cfg.d_moments}; z uses the binomial sampling error")
    EK = float(theory.expected_observed(res["spec"], [cfg.d_heaps])[0])
    ledger.check("SS.data.heaps", rf"sampled $K(D)$ equals $\mathbb E K(D) = \sum_j [1-(1-p_j)^D]$ at $D = {cfg.d_heaps}$",
                 measured=res["K_mean"], predicted=EK, tol=4 * res["K_sem"],
                 note=f"mean over {cfg.heaps_trials_used} draws, tolerance 4 standard errors")
    ledger.guard("SS.data.heaps.batched", "K per data set from the batched count over all draws equals "
                 "a loop over the draws' own matrices", bool(np.array_equal(res["K_batched"], res["K_loop"])),
                 f"first {len(res['K_loop'])} of {cfg.heaps_trials_used} draws at D = {cfg.d_heaps}")
    ledger.check("SS.data.heaps.prefactor", r"$\mathbb E K(D)/D^{1/(\alpha_1+1)} \to \Gamma(\alpha_1/(\alpha_1+1))$",
                 measured=asym["heaps"], predicted=heaps_constant(cfg.alpha1),
                 rtol=cfg.prefactor_rtol, kind="derivation",
                 note=f"theory against theory: exact sum at D = {asym['D']:.3g} (K = {cfg.k_asym:g})")
    return {"EK": EK}


def exact(ledger, cfg: Config, res: dict) -> None:
    ledger.check("SS.exact.reduced_fit", "reduced (Gram) fit equals brute-force least squares",
                 measured=res["rel_err"], hi=1e-8, kind="identity",
                 note="two solvers of the same problem; relative error of theta, N in {10, 40, 200}")
    ledger.check("SS.exact.target_average", r"the $\mathbb E_w$ loss formula matches Monte Carlo over 2000 targets",
                 measured=res["z"], hi=4.0, kind="identity",
                 note="algebra check: |MC mean - exact| / MC standard error, max over 3 N")


def alpha_n(ledger, cfg: Config, df) -> dict:
    sim = df[df.seed >= 0].pivot(index="seed", columns="N", values="loss")
    Ns = np.asarray(sim.columns, dtype=float)
    window = (cfg.n_lo, cfg.n_hi)
    fit = fitting.bootstrap_slope(Ns, sim.values, window, seed=cfg.seed)
    de = theory.loss_de(_lam(cfg.m_n, cfg), Ns)
    fit_de = fitting.loglog_fit(Ns, de, window)
    a = -fit.slope
    ledger.guard("SS.alpha_N.interval_ordered", "the bootstrap interval of the fitted slope is ordered "
                 "(lo <= slope <= hi)", bool(fit.lo <= fit.slope <= fit.hi),
                 f"[{fit.lo:.4f}, {fit.hi:.4f}] around {fit.slope:.4f}")
    distinct = int(np.unique(np.round(sim.values, 12), axis=0).shape[0])
    ledger.guard("SS.alpha_N.draws_distinct", "the feature draws of the alpha_N sweep are distinct "
                 "(no two draws give the same loss curve)", bool(distinct == sim.shape[0]),
                 f"{distinct} distinct curves of {sim.shape[0]} draws")
    tol = cfg.tol_alpha_n_de_at(sim.shape[0])
    gap = cfg.an_asym_rel * cfg.alpha_N
    ledger.check("SS.alpha_N", r"model-limited exponent $\alpha_N = \alpha_1+\alpha_2+1$", measured=a,
                 predicted=cfg.alpha_N, tol=tol + gap, rounds=(sim.shape[0], cfg.rounds_min),
                 note=f"95% bootstrap [{-fit.hi:.3f}, {-fit.lo:.3f}], window N in {window}, {sim.shape[0]} draws; "
                      f"tolerance that of SS.alpha_N.vs_DE + {cfg.an_asym_rel:g} alpha_N (finite window; "
                      f"l_DE slope here {-fit_de.slope:.3f})")
    ledger.check("SS.alpha_N.vs_DE", r"fitted $\alpha_N$ equals the $\ell_{DE}$ slope on the same window",
                 measured=a, predicted=-fit_de.slope, tol=tol, rounds=(sim.shape[0], cfg.rounds_min),
                 note=f"tolerance {cfg.z_family:g} x {cfg.an_sd_rel:g} alpha_N / sqrt({sim.shape[0]}) + {cfg.an_sys:g}")
    # level as well as slope: the geometric mean over the window of mean l_inf / l_DE; band
    # from the measured spread of the draws (se of the mean log ratio) + the DE's finite-N offset
    lr = np.log(sim.values / de[None, :]).mean(1)         # one value per feature draw
    se = _se(lr)
    level = float(np.exp(np.mean(np.log(sim.values.mean(0) / de))))
    if lr.size < 2:   # one draw (a budget cut): no spread to set the band from
        ledger.inconclusive("SS.alpha_N.level", r"$\ell_\infty(N)$ equals $\ell_{DE}(N)$ in level on the window (two-sided)",
                            measured=level, kind=_kind("SS.alpha_N.level"),
                            note=f"had {lr.size} of {cfg.rounds_min} feature draws: no spread for the band")
    else:
      ledger.check("SS.alpha_N.level", r"$\ell_\infty(N)$ equals $\ell_{DE}(N)$ in level on the window (two-sided)",
                 measured=level, predicted=1.0, tol=cfg.z_family * se + cfg.an_level_sys,
                 kind=_kind("SS.alpha_N.level"), rounds=(sim.shape[0], cfg.rounds_min),
                 note=f"geometric mean over N in {window} of mean l_inf / l_DE; tolerance {cfg.z_family:g} x "
                      f"{se:.4f} (se over {lr.size} draws) + {cfg.an_level_sys:g} (finite-N offset of the DE)")
    return {"alpha_N_hat": a, "fit": fit, "de": de, "de_slope": -fit_de.slope, "n": sim.shape[0],
            "level": level}


def _lam(M, cfg):
    from .data import spectrum

    return spectrum(M, cfg.alpha1, cfg.alpha2).lam


def _spec(M, cfg):
    from .data import spectrum

    return spectrum(M, cfg.alpha1, cfg.alpha2)


def alpha_d(ledger, cfg: Config, res: dict, asym: dict) -> dict:
    D_exact = res["D_exact"]
    ET = expected_floor(_spec(cfg.m_floor, cfg), D_exact)
    fit_T = fitting.loglog_fit(D_exact, ET)
    ledger.check("SS.alpha_D.floor", r"slope of the exact $\mathbb E T(D)$ equals $-\alpha_D$", measured=fit_T.slope,
                 predicted=-cfg.alpha_D, tol=cfg.tol_floor_slope, kind="derivation",
                 note=f"theory against theory: exact sum over D in [{D_exact[0]:.3g}, {D_exact[-1]:.3g}] (K from "
                      f"{cfg.k_floor[0]:g} to {cfg.k_floor[1]:g})")
    ledger.check("SS.alpha_D.floor.prefactor", r"$\mathbb E T(D)\,D^{\alpha_D} \to \Gamma(\alpha_D)/(\alpha_1+1)$",
                 measured=float(expected_floor(_spec(cfg.m_floor, cfg), [asym["D"]])[0] * asym["D"] ** cfg.alpha_D),
                 predicted=floor_constant(cfg.alpha1, cfg.alpha2),
                 rtol=cfg.prefactor_rtol, kind="derivation",
                 note=f"theory against theory: exact sum at D = {asym['D']:.3g}")
    sim = res["sampled"].pivot(index="seed", columns="D", values="loss")
    Ds = np.asarray(sim.columns, dtype=float)
    fit = fitting.bootstrap_slope(Ds, sim.values, None, seed=cfg.seed)
    ET_w = expected_floor(_spec(cfg.m_d, cfg), Ds)
    slope_w = -fitting.loglog_fit(Ds, ET_w).slope
    a = -fit.slope
    sd = cfg.d_slope_sd_at(sim.shape[0])
    tol = cfg.z_family * sd + cfg.d_slope_sys
    how = (f"95% bootstrap [{-fit.hi:.3f}, {-fit.lo:.3f}] over {sim.shape[0]} draws, D in [{Ds[0]:g}, {Ds[-1]:g}]; "
           f"tolerance {cfg.z_family:g} x {sd:.3f} (exact sd of the slope of mean T_obs) + {cfg.d_slope_sys:g}")
    if cfg.valid_alpha_d_window:
        ledger.check("SS.alpha_D.window", r"sampled $N=\infty$ loss: slope equals the $\mathbb E T(D)$ slope on its window",
                     measured=a, predicted=slope_w, tol=tol, note=how, rounds=(sim.shape[0], cfg.rounds_min))
    else:
        ledger.inconclusive("SS.alpha_D.window", r"sampled $N=\infty$ loss: slope equals the $\mathbb E T(D)$ slope on its window",
                            measured=a, kind="hard",
                            note=f"D in [{Ds[0]:g}, {Ds[-1]:g}] is dense-like (K(D) > 0.3 D): the loss "
                                 "also carries observed but unidentified coordinates; " + _alpha_d_reach(cfg))
    # level as well as slope: inverse-variance weighted mean over D of mean loss / E T(D)
    # (E T_obs = E T exactly; the exact Var T_obs per D gives the band); the observed but
    # unidentified coordinates add 0 to d_slope_sys on top
    stmt_l = r"sampled $N=\infty$ loss equals $\mathbb E T(D)$ in level on its window (two-sided)"
    spec_d = _spec(cfg.m_d, cfg)
    rel_var = theory.floor_variance(spec_d, Ds) / ET_w ** 2 / sim.shape[0]
    wts = 1 / rel_var
    level = float(np.sum(wts * sim.values.mean(0) / ET_w) / wts.sum())
    lsd = float(np.sqrt(1 / wts.sum()))
    if cfg.valid_alpha_d_window:
        ledger.check("SS.alpha_D.level", stmt_l, measured=level, lo=1 - cfg.z_family * lsd,
                     hi=1 + cfg.d_slope_sys + cfg.z_family * lsd, kind=_kind("SS.alpha_D.level"),
                     rounds=(sim.shape[0], cfg.rounds_min),
                     note=f"weighted mean over D of mean loss / E T(D), {sim.shape[0]} draws; band "
                          f"[1 - {cfg.z_family:g} sd, 1 + {cfg.d_slope_sys:g} + {cfg.z_family:g} sd], "
                          f"sd {lsd:.4f} from the exact Var T_obs")
    else:
        ledger.inconclusive("SS.alpha_D.level", stmt_l, measured=level, kind=_kind("SS.alpha_D.level"),
                            note=f"D in [{Ds[0]:g}, {Ds[-1]:g}] is dense-like (K(D) > 0.3 D): the loss "
                                 "also carries observed but unidentified coordinates")
    if cfg.sampled_is_asymptotic and cfg.valid_alpha_d_window:
        ledger.check("SS.alpha_D.sampled", r"data-limited exponent from sampled data equals $\alpha_D$",
                     measured=a, predicted=cfg.alpha_D, tol=tol + cfg.ad_asym_rel * cfg.alpha_D,
                     rounds=(sim.shape[0], cfg.rounds_min),
                     note=f"window K(D) >= {cfg.k_asym_window:g}; tolerance that of SS.alpha_D.window + "
                          f"{cfg.ad_asym_rel:g} alpha_D (finite window; E T slope there {slope_w:.3f})")
    else:
        ledger.inconclusive("SS.alpha_D.sampled", r"data-limited exponent from sampled data equals $\alpha_D$",
                            measured=a, kind="hard",
                            note=_alpha_d_reach(cfg))
    return {"alpha_D_hat": a, "fit": fit, "fit_T": fit_T, "slope_window": slope_w, "Ds": Ds,
            "n": sim.shape[0]}


def alpha_d_edges(cfg: Config) -> str:
    """The D the sampled alpha_D windows need at the domain's two alpha1 edges (from E K(D)),
    against this scale's limits on D (d_cap) and on K (k_cap, the Gram)."""
    from .windows import heaps_D, heaps_K, sparse_D

    lo, hi = Config.KNOBS["ALPHA1"].lo, Config.KNOBS["ALPHA1"].hi
    d_sparse = float(heaps_D(hi, cfg.k_asym_window))
    d_dense = float(sparse_D(lo))
    return (f"alpha1 = {hi:g}: K = {cfg.k_asym_window:g} needs D = {d_sparse:.3g} (d_cap {cfg.d_cap:g}); "
            f"alpha1 = {lo:g}: K(D) <= 0.3 D needs D = {d_dense:.3g}, where K = "
            f"{float(heaps_K(lo, d_dense)):.3g} (Gram limit k_cap {cfg.k_cap})")


def _alpha_d_reach(cfg: Config) -> str:
    """Why the sampled alpha_D window cannot be placed, from the data model: the window needs
    K(D_lo) >= k_asym_window (asymptotic) and K(D_lo) <= 0.3 D_lo (sparse), and a D_hi 1.5
    decades up with K(D_hi) <= k_cap (the K x K Gram) and D_hi <= d_cap (sampling is O(D))."""
    from .windows import heaps_D, heaps_K, sparse_D

    d_lo = float(max(heaps_D(cfg.alpha1, cfg.k_asym_window), sparse_D(cfg.alpha1), 30.0))
    d_hi = 30 * d_lo
    return (f"not reachable at this scale: the window needs D_lo >= {d_lo:.3g} (K >= "
            f"{cfg.k_asym_window:g} and K <= 0.3 D) and D_hi = 30 D_lo = {d_hi:.3g} with K(D_hi) = "
            f"{float(heaps_K(cfg.alpha1, d_hi)):.3g}; the budget allows D <= {cfg.d_cap:g} and K <= "
            f"{cfg.k_cap} (sampled window here D in [{cfg.d_sampled[0]:g}, {cfg.d_sampled[-1]:g}]); "
            "the exact-sum slope SS.alpha_D.floor carries the exponent")


def asymmetry(ledger, cfg: Config, an: dict, ad: dict, dense_df) -> dict:
    ratio = an["alpha_N_hat"] / ad["alpha_D_hat"]
    pred = an["de_slope"] / ad["slope_window"]
    rel = (cfg.tol_alpha_n_de_at(an["n"]) / an["de_slope"]
           + (cfg.z_family * cfg.d_slope_sd_at(ad["n"]) + cfg.d_slope_sys) / ad["slope_window"])
    if cfg.valid_alpha_d_window:    # implied by SS.alpha_N.vs_DE and SS.alpha_D.window (identity)
        ledger.check("SS.asymmetry.sparse", r"sparse: $\alpha_N/\alpha_D = \alpha_1+1$ (finite-window theory)",
                     measured=ratio, predicted=pred, rtol=rel, kind=_kind("SS.asymmetry.sparse"),
                     note=f"predicted = l_DE slope / E T slope on the sampled windows; asymptotic {cfg.alpha1 + 1:g}")
    sim = dense_df.pivot(index="seed", columns="D", values="loss")
    fit = fitting.bootstrap_slope(np.asarray(sim.columns, float), sim.values, None, seed=cfg.seed)
    ledger.check("SS.asymmetry.dense", r"dense baseline: $\alpha_D = \alpha_N$ (symmetric)",
                 measured=-fit.slope - an["alpha_N_hat"], predicted=0.0, tol=cfg.tol_dense,
                 kind="identity",
                 note="dense data X = G Lambda^(1/2) and random features u Lambda^(1/2) are the same "
                      f"random projection, so the symmetry holds by construction; dense alpha_D = {-fit.slope:.3f}")
    return {"ratio": ratio, "dense_alpha_D": -fit.slope, "dense_fit": fit}


def double_descent(ledger, cfg: Config, res: dict) -> dict:
    c = res["curves"]
    peaks = []
    for (_seed, D), g in c.groupby(["seed", "D"]):
        peaks.append((D, peak_location(g.N.values, g.ridgeless.values, g.ridge.values), g["rank"].iloc[0]))
    peaks = np.array(peaks, dtype=float)
    worse = c.ridge.values > c.ridgeless.values * (1 + 1e-9)
    ledger.guard("SS.dd.oracle_beats_ridgeless", "the oracle ridge (min over a penalty grid that holds 0) "
                 "is never above the ridgeless fit", bool(not worse.any()),
                 f"{int(worse.sum())} of {worse.size} (N, D, draw) points above")
    per_d = [np.exp(np.mean(np.log(peaks[peaks[:, 0] == D, 1] / peaks[peaks[:, 0] == D, 2])))
             for D in np.unique(peaks[:, 0])]
    Du = np.unique(peaks[:, 0])
    worst = _worst(per_d)
    i_w = max(range(len(per_d)), key=lambda i: abs(np.log(per_d[i])))     # the same, by a loop
    ledger.guard("SS.peak.location.worst_point", "the worst-over-D judge of the peak reads the D "
                 "farthest from the band's centre, and says which", bool(worst == per_d[i_w]),
                 f"worst N_peak / rank {worst:.3f} at D = {Du[i_w]:g} (loop: {per_d[i_w]:.3f})")
    done, planned = c.attrs.get("rounds", (cfg.dd_seeds, cfg.dd_seeds))
    ledger.check("SS.peak.location", r"ridgeless peak at $N = \operatorname{rank} X$, every $D$",
                 measured=worst, lo=cfg.peak_band[0], hi=cfg.peak_band[1], rounds=(done, planned),
                 note=f"worst over D (at D = {Du[i_w]:g}) of the geometric mean over {done} draws of N_peak / rank(X); "
                      f"single draws {np.min(peaks[:, 1] / peaks[:, 2]):.2f}-{np.max(peaks[:, 1] / peaks[:, 2]):.2f}")
    EK = expected_observed(_spec(cfg.m_dd, cfg), cfg.d_dd)
    Dp = np.array(cfg.d_dd, dtype=float)
    peak_mean = np.array([np.exp(np.log(peaks[peaks[:, 0] == D, 1]).mean()) for D in Dp])
    if not cfg.valid_dd:
        why = (f"at a1 = {cfg.alpha1:g} the affordable D ({Dp[0]:g}-{Dp[-1]:g}) are dense-like "
               "(K(D) > 0.3 D, so rank X ~ D) or span under a decade")
        for i, st in (("SS.peak.location.rank_vs_K", r"$\operatorname{rank} X$ tracks $\mathbb E K(D)$"),
                      ("SS.peak.slope", "peak location grows like $\\mathbb E K(D) \\sim D^{1/(\\alpha_1+1)}$")):
            ledger.inconclusive(i, st, note=why, kind=_kind(i))
    else:
        _peak_growth(ledger, cfg, res, EK, Dp, peak_mean, peaks)
    dslope = fitting.loglog_fit(res["d_dense"], res["dense_peaks"]).slope
    ledger.check("SS.peak.slope.dense", r"dense peak location grows like $D$", measured=dslope,
                 predicted=1.0, tol=cfg.tol_peak_slope)
    return {"peaks": peaks, "peak_mean": peak_mean, "EK": EK}


def _peak_growth(ledger, cfg, res, EK, Dp, peak_mean, peaks):
    draws = np.array([cfg.rank_draws_at(D) for D in Dp])
    hi = 1 + 3 / np.sqrt(np.min(EK * draws))              # 3 sd of a Poisson-like mean K
    ledger.check("SS.peak.location.rank_vs_K", r"$\operatorname{rank} X$ tracks $\mathbb E K(D)$",
                 measured=_worst(res["rank_mean"] / EK), lo=cfg.rank_lo, hi=hi,
                 note=f"worst mean rank / E K over D, {draws.min()}-{draws.max()} draws each; upper bound 1 + 3 sd")
    # two-phase (ratio) estimate of the mean peak per D: the mean rank over many cheap rank
    # draws times the geometric mean of N_peak / rank over the few full N sweeps
    ratio = np.array([np.exp(np.mean(np.log(peaks[peaks[:, 0] == D, 1] / peaks[peaks[:, 0] == D, 2])))
                      for D in Dp])
    est = res["rank_mean"] * ratio
    slope = fitting.loglog_fit(Dp, est).slope
    pred = fitting.loglog_fit(Dp, EK).slope
    # sd of the OLS slope (delta method): exact Var K(D) / E K^2 per rank draw, plus the
    # measured per-draw spread of log(N_peak / rank) over the dd draws
    spec = _spec(cfg.m_dd, cfg)
    done, planned = res["curves"].attrs.get("rounds", (cfg.dd_seeds, cfg.dd_seeds))
    rel = theory.observed_variance(spec, Dp) / EK ** 2 / draws + cfg.peak_ratio_sd ** 2 / done
    x = np.log(Dp)
    w = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    sd = float(np.sqrt(np.sum(w ** 2 * rel)))
    tol = cfg.z_family * sd + cfg.peak_slope_sys
    ledger.check("SS.peak.slope", "peak location grows like $\\mathbb E K(D) \\sim D^{1/(\\alpha_1+1)}$",
                 measured=slope, predicted=pred, tol=tol, rounds=(done, planned),
                 note=f"peak per D = mean rank ({draws.min()}-{draws.max()} draws) x geometric mean of "
                      f"N_peak / rank ({done} sweeps); predicted: slope of E K(D) over D in "
                      f"[{Dp[0]:g}, {Dp[-1]:g}], asymptotic {1 / (cfg.alpha1 + 1):.3f}; tolerance "
                      f"{cfg.z_family:g} x {sd:.4f} (delta method, exact Var K) + {cfg.peak_slope_sys:g}")


def overparam(ledger, cfg: Config, df) -> dict:
    """Ridgeless loss just above the peak (N = r + 1 + m) against T_obs (N - 1)/(N - r - 1).

    Near N = r an error of one in (N - r - 1) moves the prediction by about 1/(m + 1); the
    draws are independent, so the tolerance is ``z_family`` standard errors of the mean ratio."""
    stmt = (r"ridgeless loss $= T_{obs}(N-1)/(N-r-1)$ just above the peak, $N = r+1+m$, "
            rf"$m \in \{{{', '.join(map(str, cfg.op_excess))}\}}$")
    ok = _formula_rows(df).copy()
    bad = int((ok["rank"] != ok["K"]).sum()) if len(ok) else 0
    ledger.guard("SS.overparam.full_rank", "the over-parameterised formula is judged only on data sets "
                 "with rank X = K (full column rank)", bool(bad == 0),
                 f"{bad} of {len(ok)} rows with rank X < K")
    if bad:
        ledger.inconclusive("SS.overparam_branch", stmt, kind="hard",
                            note="not judged: the rows it would be judged on fail SS.overparam.full_rank")
        return {}
    n_draws = int(ok.groupby(["seed", "draw"]).ngroups) if len(ok) else 0
    done, planned = df.attrs.get("rounds", (None, None))
    had = f"had {done} of {planned} tasks; " if done is not None and done < planned else ""
    if had or n_draws < cfg.op_min_draws:
        ledger.inconclusive("SS.overparam_branch", stmt, kind="hard",
                            note=f"{had}{n_draws} of {df.groupby(['seed', 'draw']).ngroups} data sets at "
                                 f"D = {cfg.d_op} have rank X = K (needs {cfg.op_min_draws} and every task)")
        return {}
    ok["ratio"] = ok.ridgeless / theory.overparam_loss(ok.T_obs.values, ok.N.values, ok["rank"].values,
                                                       ok["K"].values)
    per_draw = ok.groupby(["seed", "draw"]).ratio.mean()
    mean, se = float(per_draw.mean()), _se(per_draw.values)
    by_m = ok.groupby("m").ratio.mean()
    ledger.check("SS.overparam_branch", stmt, measured=mean, predicted=1.0, tol=cfg.z_family * se,
                 note=f"mean ratio over {n_draws} independent draws at D = {cfg.d_op} (rank X = K, median "
                      f"{int(ok['rank'].median())}); tolerance {cfg.z_family:g} standard errors; per m: "
                      + ", ".join(f"{m}: {v:.3f}" for m, v in by_m.items()))
    return {"ratio": mean, "se": se, "by_m": by_m}


def surface_fits(cfg: Config, grid):
    """Two-term fits of the sampled oracle-ridge and Bayes surfaces and of the theory surface
    on the same points (the N <= 8, D <= 30 and near-peak points excluded)."""
    cols = [c for c in ("ridge", "bayes", "rank", "linf") if c in grid.columns]
    g = grid.groupby(["N", "D"], as_index=False)[cols].mean()
    NN, DD = g.N.values.astype(float), g.D.values.astype(float)
    Ng, Dg = np.unique(NN), np.unique(DD)
    keep = _fit_mask(NN, DD, g["rank"].values)
    law = fitting.fit_two_term(NN[keep], DD[keep], g.ridge.values[keep])
    bayes = fitting.fit_two_term(NN[keep], DD[keep], g.bayes.values[keep])
    from .experiments import theory_surface

    Lt = theory_surface(cfg, Ng, Dg)
    iN, iD = np.searchsorted(Ng, NN), np.searchsorted(Dg, DD)
    th = fitting.fit_two_term(NN[keep], DD[keep], Lt[iN, iD][keep])
    return law, bayes, th, g


# bands of N / E K(D) in which the finite-D interaction is summarised (section 7)
_BANDS = ((0.0, 0.25), (0.25, 0.5), (0.5, 2.0), (2.0, 4.0), (4.0, np.inf))


def interaction(cfg: Config, g) -> dict:
    """Where the sampled oracle-ridge surface departs from the additive law, measured.

    Two parts, on the points the two-term fit uses: (i) the feature draws' finite-N offset,
    the same two-term fit of ``l_inf(N) + E T(D)`` with the grid's own features (``linf``);
    (ii) the finite-D interaction ``(l - l_inf(N) - E T(D)) / l``, summarised by bands of
    N / E K(D). Diagnostic only: it decides no verdict."""
    spec = _spec(cfg.m_grid, cfg)
    NN, DD = g.N.values.astype(float), g.D.values.astype(float)
    keep = _fit_mask(NN, DD, g["rank"].values)
    ET = expected_floor(spec, np.unique(DD))[np.searchsorted(np.unique(DD), DD)]
    EK = expected_observed(spec, np.unique(DD))[np.searchsorted(np.unique(DD), DD)]
    semi = g.linf.values + ET
    fit = fitting.fit_two_term(NN[keep], DD[keep], semi[keep])
    share = (g.ridge.values - semi) / g.ridge.values
    x = NN / EK
    rows = []
    for lo, hi in _BANDS:
        m = keep & (x >= lo) & (x < hi)
        if m.any():
            rows.append({"N / E K(D)": f"[{lo:g}, {hi:g})", "points": int(m.sum()),
                         "mean share": float(share[m].mean()), "max share": float(share[m].max())})
    i = int(np.argmax(np.where(keep, share, -np.inf)))
    return {"fit": fit, "share": share, "x": x, "keep": keep, "bands": pd.DataFrame(rows),
            "max": float(share[i]), "x_max": float(x[i])}


def interaction_table(law: dict):
    """The finite-D interaction (l - l_inf(N) - E T(D)) / l by band of N / E K(D), on the
    points of the two-term fit (section 7)."""
    return law["interaction"]["bands"].set_index("N / E K(D)").round(3)


def interaction_fits(law: dict):
    """The fitted a of the sampled surface, of l_inf(N) + E T(D) (the same features at
    D = infinity plus the exact floor) and of the theory l_DE(N) + E T(D), same points."""
    fits = {"sampled oracle ridge": law["law"].a,
            "l_inf(N) + E T(D), same features": law["interaction"]["fit"].a,
            "l_DE(N) + E T(D), theory": law["theory"].a}
    return pd.DataFrame({"fitted a": fits}).rename_axis("surface").round(3)


def alpha_c_of(a: float, b: float) -> float:
    """Compute exponent of the law A N^-a + B D^-b along C = N^2 D: ab/(a + 2b)."""
    return -theory.two_term_frontier_exponents(a, b)["loss"]


def alpha_c_sampled(ledger, cfg: Config, law: dict, hi, grid_hi):
    """alpha_C from the sampled surfaces at a1 and a1 + step (a2 fixed) against the theory fits."""
    stmt = rf"sampled $\alpha_C$ increases with $\alpha_1$ at fixed $\alpha_2$ ($\alpha_1 \to \alpha_1 + {cfg.ac_step:g}$)"
    if not law or hi is None or grid_hi is None:
        why = ("not run at this scale (its resolution at smoke was 72-78%)" if not cfg.ac_sampled else
               "no sampled surface at a1" if not law else
               f"a1 + {cfg.ac_step:g} is outside the domain or its grid misses a regime at this scale")
        ledger.inconclusive("SS.alpha_C.sampled", stmt, note=why, kind=_kind("SS.alpha_C.sampled"))
        return None
    law_hi, _, th_hi, _ = surface_fits(hi, grid_hi)
    lo_s, hi_s = alpha_c_of(law["law"].a, law["law"].b), alpha_c_of(law_hi.a, law_hi.b)
    lo_t, hi_t = alpha_c_of(law["theory"].a, law["theory"].b), alpha_c_of(th_hi.a, th_hi.b)
    done = min(grid_hi.useed.nunique(), law["done"])
    ledger.check("SS.alpha_C.sampled", stmt, measured=hi_s - lo_s, predicted=hi_t - lo_t,
                 tol=cfg.tol_ac_sampled, kind="soft", rounds=(done, cfg.grid_u_seeds_used),
                 note=f"alpha_C = ab/(a+2b) of the fitted oracle-ridge laws: {lo_s:.3f} -> {hi_s:.3f}; "
                      f"theory fits {lo_t:.3f} -> {hi_t:.3f}; a2 = {cfg.alpha2:g} held fixed")
    return pd.DataFrame({"alpha1": [cfg.alpha1, hi.alpha1], "sampled alpha_C": [lo_s, hi_s],
                         "theory-fit alpha_C": [lo_t, hi_t],
                         "asymptotic alpha_N/(a1+3)": [cfg.alpha_N / (cfg.alpha1 + 3), hi.alpha_N / (hi.alpha1 + 3)]}
                        ).set_index("alpha1").round(3)


def combined_law(ledger, cfg: Config, grid) -> dict:
    """Oracle-ridge fit (evidence) against the same fit of the theory envelope on the same grid."""
    stmt_a = r"oracle-ridge fit $AN^{-a} + BD^{-b}$: $a = \alpha_N$"
    stmt_b = r"oracle-ridge fit: $b = \alpha_D$"
    if grid is None or not cfg.valid_combined_law:
        why = (f"at a1 = {cfg.alpha1:g} the budget's D range does not hold both regimes in the "
               f"sparse regime (needs K(D_max) >= {cfg.k_grid_min:g} and D_max >= 30 D_min, "
               "D_min where K(D) <= 0.3 D)")
        for i, st in (("SS.combined_law", stmt_a), ("SS.combined_law.b", stmt_b)):
            ledger.inconclusive(i, st, note=why, kind=_kind(i))
        return {}
    law, bayes, th, g = surface_fits(cfg, grid)
    out = {"law": law, "bayes": bayes, "theory": th, "g": g, "done": grid.useed.nunique()}
    note = f"theory = the same fit of l_DE(N) + E T(D) on the same grid (a = {th.a:.3f}, b = {th.b:.3f})"
    done = grid.useed.nunique()
    why = ""
    if "linf" in g.columns:     # the departure from the additive law, measured (no verdict)
        it = out["interaction"] = interaction(cfg, g)
        why = (f"; measured why a departs: the same fit of l_inf(N) + E T(D) with the grid's own "
               f"features gives a = {it['fit'].a:.3f} (their finite-N offset from l_DE: "
               f"{it['fit'].a - th.a:+.3f} of the gap {law.a - th.a:+.3f}); the rest is the finite-D "
               f"interaction (l - l_inf - E T)/l, up to {it['max']:.1%} of the loss at "
               f"N = {it['x_max']:.2g} E K(D)")
    ledger.check("SS.combined_law", stmt_a, measured=law.a, predicted=th.a, tol=cfg.tol_law_a, kind="soft",
                 rounds=(done, cfg.grid_rounds_min),
                 note=f"soft: alpha_N is tested on l_inf(N) (section 3); on the grid the model-limited corner "
                      f"is small at large alpha_N. Mean of {done} draws; asymptotic "
                      f"alpha_N = {cfg.alpha_N:.3f}; {note}{why}")
    sd1 = cfg.law_b_sd1 * cfg.grid_noise
    tol_b = cfg.z_family * sd1 / np.sqrt(done)
    ledger.check("SS.combined_law.b", stmt_b, measured=law.b, predicted=th.b, tol=tol_b,
                 rounds=(done, cfg.grid_rounds_min),
                 note=f"asymptotic alpha_D = {cfg.alpha_D:.3f}; {done} feature draws, tolerance "
                      f"{cfg.z_family:g} x {sd1:.3f}/sqrt({done}) (0.11 x the floor noise relative to the default); {note}")
    ledger.check("SS.combined_law.bayes", r"Bayes-readout surface: $b = \alpha_D$ (decomposition)",
                 measured=bayes.b, predicted=th.b, tol=tol_b, kind="soft", rounds=(done, cfg.grid_rounds_min),
                 note="model-limited error + never-seen floor: re-measures the floor exponent")
    return out


def frontier(ledger, cfg: Config, env: dict) -> dict:
    """Closed-form exponents against the frontier of the exact envelope (derivations).

    The closed form assumes N* << D*; the window N* in [n_lo, 32 n_lo] and whether it exists
    are decided from the inputs (the Heaps law, ``Config.frontier_n_lo``), not from the
    envelope under test. Where no such window exists the derivations are not recorded."""
    pred = theory.frontier_exponents(cfg.alpha1, cfg.alpha2)
    if not cfg.valid_frontier:
        w = env["win"]
        return {"pred": pred, "cw": (env["C"][w].min(), env["C"][w].max()),
                "skipped": f"at a1 = {cfg.alpha1:g} the closed form's N* << D* needs N* > 256 "
                           f"(D(K = N)/N >= {cfg.frontier_sep:g}); the frontier exponents are "
                           "shown, not derived, here"}
    n_lo = cfg.frontier_n_lo
    n_hi = min(32 * n_lo, 2048.0)
    w = (env["N"] >= n_lo) & (env["N"] <= n_hi)
    cw = (env["C"][w].min(), env["C"][w].max())
    fN, fD, fL = (fitting.loglog_fit(env["C"], v, cw) for v in (env["N"], env["D"], env["L"]))
    for key, f, stmt in (("", fN, r"$N^*(C) \sim C^{1/(\alpha_1+3)}$"),
                         (".D", fD, r"$D^*(C) \sim C^{(\alpha_1+1)/(\alpha_1+3)}$"),
                         (".loss", fL, r"$\ell^*(C) \sim C^{-\alpha_N/(\alpha_1+3)}$")):
        ledger.check(f"SS.frontier{key}", stmt, measured=f.slope,
                     predicted=pred[{"": "N", ".D": "D", ".loss": "loss"}[key]],
                     tol=cfg.tol_frontier, kind="derivation",
                     note=f"theory against theory: exact-sum envelope vs closed form on N* in "
                          f"[{n_lo:.0f}, {n_hi:.0f}] (D(K = N)/N >= {cfg.frontier_sep:g} there)")
    return {"N": fN.slope, "D": fD.slope, "loss": fL.slope, "pred": pred, "cw": cw}


def alpha_c(ledger, cfg: Config, sweep) -> None:
    """Derivations (theory against theory); at fixed alpha2 only the a1 with alpha_N > 0.2
    are in the sweep, so at a2 near -4 a single row may remain and nothing is compared."""
    s = sweep[sweep["held fixed"] == "alpha2"].sort_values("alpha1")
    if len(s) >= 2:
        ledger.check("SS.alpha_C.increases", r"at fixed $\alpha_2$, $\alpha_C = \alpha_N/(\alpha_1+3)$ increases with $\alpha_1$",
                     measured=float(np.min(np.diff(s.alpha_C.values))), lo=0.0, kind="derivation",
                     note="exact finite-size exponents (theory, not sampled); smallest step over the sweep")
    f = sweep[sweep["held fixed"] == "alpha_N"]
    ledger.check("SS.alpha1_sweep", r"at fixed $\alpha_N$, $\alpha_N/\alpha_D$ tracks $\alpha_1+1$",
                 measured=float(np.max(np.abs(f.ratio / f["alpha1 + 1"] - 1))), hi=0.1, kind="derivation",
                 note="exact finite-size curves (theory, not sampled); worst relative deviation")


def gd_curve(df) -> dict:
    """u-averaged P_fail(D) with its standard error, and the single-spike prediction."""
    g = df[~df.control].groupby("D")
    P, P_sec = g.P.mean(), g.P_secular.mean()
    n_u = g.P.count()
    # total error of the u-average: draw-to-draw spread (includes the trial noise)
    se = g.P.std(ddof=1) / np.sqrt(n_u)
    return {"D": P.index.values.astype(float), "P": P.values, "se": se.values,
            "P_secular": P_sec.values, "n_u": int(n_u.iloc[0]), "P_A": g.P_A.mean().values,
            "f_in": g.f_in.mean().values, "f_out": g.f_out.mean().values}


def gd_table(out: dict):
    """The draw-averaged failure curve and its strata, one row per D."""
    return pd.DataFrame({"P_fail": out["P"], "std. error": out["se"], "secular formula": out["P_secular"],
                         "P(A)": out["P_A"], "f_in": out["f_in"], "f_out": out["f_out"]},
                        index=pd.Index(out["D"].astype(int), name="D")).round(5)


def gd(ledger, cfg: Config, res: dict) -> dict:
    out = gd_curve(res["df"])
    D, P = out["D"], out["P"]
    fit = fitting.loglog_fit(D, P)
    nu = data.exponent_nu(cfg.gd_alpha1, cfg.gd_alpha2)
    n = cfg.gd_trials + cfg.gd_trials_out
    k = out["n_u"]
    ledger.check("SS.gd.instability", r"$P_{fail}(D) \sim D^{-\nu}$, $\nu = (\alpha_1+\alpha_2+1)/(-\alpha_2-1)$", measured=fit.slope,
                 predicted=-nu, tol=cfg.z_family * cfg.gd_sd1 / np.sqrt(k), rounds=(k, cfg.gd_rounds_min),
                 note=f"{k} feature draws x {n} stratified data sets per D; D = {D.min():g}..{D.max():g}; "
                      f"tolerance {cfg.z_family:g} x {cfg.gd_sd1:g}/sqrt({k})")
    ratio = float(np.exp(np.mean(np.log(P / out["P_secular"]))))
    ledger.check("SS.gd.secular", r"single-spike secular formula predicts $P_{fail}(D)$ itself",
                 measured=ratio, predicted=1.0, tol=cfg.z_family * cfg.gd_secular_sd1 / np.sqrt(k),
                 kind="soft", rounds=(k, cfg.gd_rounds_min),
                 note="geometric mean over D of sampled / predicted (same feature draws)")
    agree = res["agree"]
    ledger.check("SS.gd.explicit", r"explicit GD diverges iff $\eta\lambda_{max} > 2$ (every shown run)",
                 measured=float(np.mean(agree)) if agree else float("nan"), lo=1.0, kind="identity",
                 allow_nonfinite=True, note="a fact about GD on a quadratic, shown, not evidence")
    ctl = res["df"][res["df"].control]
    ledger.check("SS.gd.control", rf"with $\alpha_2 = {cfg.control_alpha2:g} > -1$ no spikes: $P_{{fail}} = 0$",
                 measured=float(ctl.P.max()), hi=0.0,
                 note=f"{cfg.gd_trials_out} data sets per D, 2 feature draws")
    return {**out, "fit": fit, "nu": nu, "n": n, "ratio": ratio}


_RELU_RATIO = (r"ReLU reduces the asymmetry: $\alpha_N/\alpha_D$ below that of linear features "
               r"on the same features and data")


def _exponents(xN, yN, xD, yD) -> tuple[float, float]:
    """(alpha_N, alpha_D): minus the log-log slopes of the mean curves over N and over D."""
    return -fitting.loglog_fit(xN, yN).slope, -fitting.loglog_fit(xD, yD).slope


def _linear_exponents(xN, yN, xD, yD) -> tuple[float, float]:
    """The linear-feature exponents of the paired ReLU comparison (same fit)."""
    return _exponents(xN, yN, xD, yD)


def relu_paired(df, seed, n_boot: int = 2000) -> dict:
    """ReLU ratio alpha_N/alpha_D minus the linear-feature ratio on the same feature draws
    and data sets (column ``linear``), with its bootstrap standard error: the feature draws
    (seeds) are resampled jointly for both, the mean curves refitted."""
    piv = {(sw, col): df[df.sweep == sw].pivot(index="seed", columns=sw, values=col)
           for sw in ("N", "D") for col in ("loss", "linear")}
    xN, xD = (np.asarray(piv[(sw, "loss")].columns, float) for sw in ("N", "D"))

    def diff(idx):
        m = {k: v.values[idx].mean(0) for k, v in piv.items()}
        aN, aD = _exponents(xN, m[("N", "loss")], xD, m[("D", "loss")])
        lN, lD = _linear_exponents(xN, m[("N", "linear")], xD, m[("D", "linear")])
        return aN / aD - lN / lD, aN / aD, lN / lD

    n = piv[("N", "loss")].shape[0]
    point = diff(np.arange(n))
    rng = np.random.default_rng(seed)
    boots = np.array([diff(rng.integers(0, n, n))[0] for _ in range(n_boot)])
    return {"diff": point[0], "relu": point[1], "linear": point[2],
            "se": float(boots.std(ddof=1)), "n": n}


def relu(ledger, cfg: Config, df) -> dict:
    if not cfg.valid_relu:
        why = (f"the stratified loss needs sum_(j>J0) p_j <= {cfg.relu_tail_max} with J0 <= "
               f"{cfg.relu_j0_max}; at a1 = {cfg.alpha1:g} J0 would be {cfg.relu_j0}")
        # SS.relu.floor is an identity (a proved bound): not run here, so not recorded
        for i, s in (("SS.relu.asymmetry", r"ReLU features keep $\alpha_D < \alpha_N$"),
                     ("SS.relu.ratio", _RELU_RATIO)):
            ledger.inconclusive(i, s, note=why, kind=_kind(i))
        return {}
    dD = df[df.sweep == "D"].pivot(index="seed", columns="D", values="loss")
    tD = df[df.sweep == "D"].pivot(index="seed", columns="D", values="T_obs")
    fD = fitting.bootstrap_slope(np.asarray(dD.columns, float), dD.values, None, seed=cfg.seed)
    fN, aN, aD = None, float("nan"), -fD.slope
    out_pr = None
    if cfg.valid_relu_asymmetry:
        dN = df[df.sweep == "N"].pivot(index="seed", columns="N", values="loss")
        fN = fitting.bootstrap_slope(np.asarray(dN.columns, float), dN.values, None, seed=cfg.seed)
        aN = -fN.slope
    ratio = dD.values / tD.values
    floor = float(np.exp(np.mean(np.log(ratio))))
    ledger.check("SS.relu.floor", rf"ReLU loss $\ge {cfg.relu_floor:g}\times$ the never-seen floor $T_{{obs}}(D)$",
                 measured=floor, lo=cfg.relu_floor, kind=_kind("SS.relu.floor"),
                 note=f"geometric mean of loss / T_obs over D and seeds ({ratio.size} data sets, single ones "
                      f"{ratio.min():.2f}-{ratio.max():.2f}), {cfg.relu_nw} targets: with few targets one data "
                      "set's ratio carries a cross term of mean zero (at a1 = 4 single ratios reached 0.87)")
    if cfg.valid_relu_asymmetry:
        ledger.check("SS.relu.asymmetry", r"ReLU features keep $\alpha_D < \alpha_N$", measured=aN - aD, lo=0.0,
                     rounds=(dD.shape[0], 2),
                     note=f"alpha_N = {aN:.3f}, alpha_D = {aD:.3f}")
        pr = relu_paired(df, [cfg.seed, 705])
        ledger.check("SS.relu.linear_baseline", r"the paired linear-feature baseline shows the linear "
                     r"asymmetry, $\alpha_N/\alpha_D > 1$", measured=pr["linear"], lo=1.0,
                     kind=_kind("SS.relu.linear_baseline"),
                     note="implied by SS.alpha_N and SS.alpha_D (linear features, exact losses): a "
                          f"check that the baseline is what it says; asymptotic {cfg.alpha1 + 1:g}")
        z, d, se = cfg.z_family, pr["diff"], pr["se"]
        need = int(np.ceil(pr["n"] * (z * se / abs(d)) ** 2)) if d != 0 else None
        ledger.check("SS.relu.ratio", _RELU_RATIO, measured=d, hi=z * se, kind="soft",
                     detects=(bool(d < -z * se), f"the difference is {d / se:+.1f} se from 0"),
                     rounds=(pr["n"], 2),
                     note=f"paired over {pr['n']} feature draws: ReLU ratio {pr['relu']:.3f} minus linear "
                          f"ratio {pr['linear']:.3f} (exact linear-feature losses, same u and data "
                          f"sets) = {d:+.3f} +- {se:.3f} (bootstrap se); shown reduced only when "
                          f"below -{z:g} se, contradicted above +{z:g} se; power: resolving a "
                          f"difference this size at {z:g} se needs about {need} feature draws")
        out_pr = pr
    else:
        for i, s in (("SS.relu.asymmetry", r"ReLU features keep $\alpha_D < \alpha_N$"),
                     ("SS.relu.ratio", _RELU_RATIO)):
            ledger.inconclusive(i, s, kind=_kind(i), note="the N sweep is not model-limited (K(D) < 2 N_max) or the D "
                                           "sweep spans under a decade at this alpha1 and budget")
    return {"aN": aN, "aD": aD, "floor": floor, "fN": fN, "fD": fD,
            "paired": out_pr}
