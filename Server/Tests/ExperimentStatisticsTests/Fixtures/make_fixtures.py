#!/usr/bin/env python3
"""Reference values for ExperimentStatisticsTests, computed independently of the Swift code.

Made with (from the repository root; numpy 2.4, scipy 1.17, statsmodels 0.15 from PyPI, the
versions recorded in reference.json):

    pip install --user scipy statsmodels numpy
    python3 Server/Tests/ExperimentStatisticsTests/Fixtures/make_fixtures.py

which rewrites Server/Tests/ExperimentStatisticsTests/Fixtures/reference.json. Every scenario is
simulated with a fixed seed from raw per-unit data; the script then
  * writes the aggregates the server keeps (units, converted units, sums, sums of squares and, for
    ratio metrics, sums of numerator, denominator, their squares and cross-products), and
  * computes every statistic from the raw data with a well-known library where it has one:
    - the special functions on a grid: scipy.stats.norm, scipy.special.gammainc/gammaincc,
      scipy.stats.chi2, scipy.stats.beta
    - sample-ratio mismatch: scipy.stats.chisquare
    - conversion rates: statsmodels test_proportions_2indep / confint_proportions_2indep (Wald, diff)
    - means per unit: statsmodels CompareMeans ztest_ind / zconfint_diff (usevar="unequal")
    - ratio metrics: numpy covariances and the delta method, scipy.stats.norm
    - relative differences: the delta method in numpy, scipy.stats.norm
    - mSPRT: the normal-mixture likelihood ratio in numpy; its confidence sequence found by
      scipy.optimize.brentq on {theta: Lambda(theta) = 1/alpha} (not the closed form the Swift uses);
      the relative one by brentq on the likelihood ratio of the contrast T - u*C for u = 1 + r
      (variance V_T + u^2 V_C, mixture variance tau^2 (V_T + u^2 V_C) / V), not Fieller's
      closed form; null where the set is unbounded
    - each variant's interval: statsmodels proportion_confint (method="wilson") for rates,
      DescrStatsW.zconfint_mean for means, the delta method with scipy.stats.norm for ratios
    - Bayesian: scipy.integrate.quad over scipy.stats.beta (conversion) and scipy.stats.norm
      (means, ratios) for the chance to beat control and both expected losses (double integral
      for the beta-binomial losses).
"""
import json
import pathlib

import numpy as np
from scipy import integrate, optimize, stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint, test_proportions_2indep
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

OUT = pathlib.Path(__file__).resolve().parent / "reference.json"


# --- simulation -----------------------------------------------------------------------------

def simulate_variant(rng, n, rate, mean_value, sessions_mean):
    converted = rng.random(n) < rate
    # Order values: log-normal around mean_value for converted units, 0 otherwise.
    sigma = 0.8
    mu = np.log(mean_value) - sigma**2 / 2
    values = np.where(converted, rng.lognormal(mu, sigma, n), 0.0)
    sessions = 1 + rng.poisson(sessions_mean, n).astype(float)
    # Revenue for the ratio metric grows with sessions (correlated numerator and denominator).
    revenue = values + 0.5 * sessions * (rng.random(n) < rate)
    return {"converted": converted, "values": values, "num": revenue, "den": sessions}


def aggregates(name, weight, raw):
    v, x, y = raw["values"], raw["num"], raw["den"]
    return {
        "name": name,
        "splitWeight": weight,
        "exposedUnits": int(len(v)),
        "metrics": {
            "purchase": {
                "convertedUnits": int(raw["converted"].sum()),
                "valueSum": float(v.sum()),
                "valueSumOfSquares": float((v * v).sum()),
            }
        },
        "ratioMetrics": {
            "revenue_per_session": {
                "numeratorSum": float(x.sum()),
                "denominatorSum": float(y.sum()),
                "numeratorSumOfSquares": float((x * x).sum()),
                "denominatorSumOfSquares": float((y * y).sum()),
                "productSum": float((x * y).sum()),
            }
        },
    }


# --- independent references -------------------------------------------------------------------

def msprt(d, V, tau2, alpha):
    """Always-valid p-value and confidence sequence, by the likelihood ratio itself."""
    def log_lr(theta):
        return 0.5 * np.log(V / (V + tau2)) + tau2 * (d - theta) ** 2 / (2 * V * (V + tau2))

    p = min(1.0, float(np.exp(-log_lr(0.0))))
    target = np.log(1 / alpha)
    # log_lr(d) < target; it grows without bound either side: bracket and solve.
    step = np.sqrt(V) * 10
    hi = d + step
    while log_lr(hi) < target:
        hi = d + (hi - d) * 2
    lo = d - step
    while log_lr(lo) < target:
        lo = d - (d - lo) * 2
    f = lambda t: log_lr(t) - target
    upper = optimize.brentq(f, d, hi, xtol=1e-18, rtol=1e-15, maxiter=500)
    lower = optimize.brentq(f, lo, d, xtol=1e-18, rtol=1e-15, maxiter=500)
    return p, lower, upper


def relative_msprt(t, vt, c, vc, tau2, alpha):
    """The relative confidence sequence: every r = u - 1 whose contrast T - u*C the mSPRT does not
    reject, with the mixture variance scaled with the contrast's variance. None where unbounded."""
    V = vt + vc

    def log_lr(u):
        Vu = vt + u * u * vc
        tu = tau2 * Vu / V
        return 0.5 * np.log(Vu / (Vu + tu)) + tu * (t - u * c) ** 2 / (2 * Vu * (Vu + tu))

    target = np.log(1 / alpha)
    center = t / c
    assert log_lr(center) < target

    def edge(direction):
        step = np.sqrt(vt + center * center * vc) / abs(c)
        for _ in range(200):
            u = center + direction * step
            if log_lr(u) >= target:
                return optimize.brentq(lambda x: log_lr(x) - target, min(center, u), max(center, u),
                                       xtol=1e-18, rtol=1e-15, maxiter=500)
            step *= 2
        return None

    lower, upper = edge(-1), edge(1)
    if lower is None or upper is None:
        return None, None
    return lower - 1, upper - 1


def beta_bayes(a_c, b_c, a_t, b_t):
    C = stats.beta(a_c, b_c)
    T = stats.beta(a_t, b_t)

    def span(dist):
        return float(dist.ppf(1e-14)), float(dist.isf(1e-14))

    lo_t, hi_t = span(T)
    lo_c, hi_c = span(C)
    opts = dict(epsabs=1e-15, epsrel=1e-12, limit=1000)
    chance = integrate.quad(lambda x: T.pdf(x) * C.cdf(x), lo_t, hi_t,
                            points=[p for p in (lo_c, hi_c, C.mean()) if lo_t < p < hi_t], **opts)[0]

    def loss(X, Y, lo_x, hi_x, lo_y, hi_y):
        # E[max(Y - X, 0)] = ∫ f_X(x) ∫_{y > x} (y - x) f_Y(y) dy dx
        def inner(x):
            a = max(x, lo_y)
            if a >= hi_y:
                return 0.0
            return integrate.quad(lambda y: (y - x) * Y.pdf(y), a, hi_y, epsabs=1e-16, epsrel=1e-12, limit=200)[0]
        return integrate.quad(lambda x: X.pdf(x) * inner(x), lo_x, hi_x,
                              points=[p for p in (lo_y, hi_y, Y.mean()) if lo_x < p < hi_x], **opts)[0]

    loss_t = loss(T, C, lo_t, hi_t, lo_c, hi_c)
    loss_c = loss(C, T, lo_c, hi_c, lo_t, hi_t)
    return chance, loss_t, loss_c


def normal_bayes(d, se):
    D = stats.norm(d, se)
    lo, hi = d - 40 * se, d + 40 * se
    opts = dict(epsabs=1e-16, epsrel=1e-12, limit=500)
    chance = D.sf(0.0)
    loss_t = integrate.quad(lambda x: -x * D.pdf(x), lo, min(0.0, hi), points=[d] if lo < d < 0 else None, **opts)[0] if lo < 0 else 0.0
    loss_c = integrate.quad(lambda x: x * D.pdf(x), max(0.0, lo), hi, points=[d] if 0 < d < hi else None, **opts)[0] if hi > 0 else 0.0
    return float(chance), loss_t, loss_c


def relative(t, vt, c, vc):
    r = t / c - 1
    var = vt / c**2 + t**2 * vc / c**4
    return r, var


def tau2_for(config, control_value):
    """The mixture variance of the absolute difference."""
    if "mixtureAbsoluteVariance" in config:
        return config["mixtureAbsoluteVariance"]
    s = config["mixtureRelativeStandardDeviation"]
    return (s * abs(control_value)) ** 2


def comparison(config, name, t, vt, c, vc, z, p, ci, bayes):
    level = config["confidenceLevel"]
    alpha = 1 - level
    crit = stats.norm.ppf(0.5 + level / 2)
    d = t - c
    V = vt + vc
    r, rv = relative(t, vt, c, vc)
    av_p, cs_lo, cs_hi = msprt(d, V, tau2_for(config, c), alpha)
    rcs_lo, rcs_hi = relative_msprt(t, vt, c, vc, tau2_for(config, c), alpha)
    chance, loss_t, loss_c = bayes
    return {
        "variant": name,
        "difference": d, "differenceVariance": V,
        "relativeDifference": r, "relativeVariance": rv,
        "zScore": z, "pValue": p, "intervalLower": ci[0], "intervalUpper": ci[1],
        "relativeIntervalLower": r - crit * np.sqrt(rv), "relativeIntervalUpper": r + crit * np.sqrt(rv),
        "alwaysValidPValue": av_p, "sequenceLower": cs_lo, "sequenceUpper": cs_hi,
        "relativeSequenceLower": rcs_lo, "relativeSequenceUpper": rcs_hi,
        "chanceToBeatControl": chance, "expectedLossOfTreatment": loss_t, "expectedLossOfControl": loss_c,
    }


def expected_for(config, control, raws):
    level = config["confidenceLevel"]
    alpha = 1 - level
    names = list(raws)
    c_raw = raws[control]
    measures = []

    # Conversion rate.
    variants, comps = [], []
    for name in names:
        n = len(raws[name]["values"])
        k = int(raws[name]["converted"].sum())
        p = k / n
        lo, hi = proportion_confint(k, n, alpha=alpha, method="wilson")
        variants.append({"variant": name, "value": p, "variance": p * (1 - p) / n, "unitVariance": p * (1 - p),
                         "intervalLower": float(lo), "intervalUpper": float(hi)})
    nc, kc = len(c_raw["values"]), int(c_raw["converted"].sum())
    for name in names:
        if name == control:
            continue
        n, k = len(raws[name]["values"]), int(raws[name]["converted"].sum())
        test = test_proportions_2indep(k, n, kc, nc, method="wald", compare="diff", value=0)
        ci = confint_proportions_2indep(k, n, kc, nc, method="wald", compare="diff", alpha=alpha)
        pt, pc = k / n, kc / nc
        a0, b0 = config["priorAlpha"], config["priorBeta"]
        bayes = beta_bayes(a0 + kc, b0 + nc - kc, a0 + k, b0 + n - k)
        comps.append(comparison(config, name, pt, pt * (1 - pt) / n, pc, pc * (1 - pc) / nc,
                                float(test.statistic), float(test.pvalue), ci, bayes))
    measures.append({"metric": "purchase", "measure": "conversionRate", "variants": variants, "comparisons": comps})

    # Mean per unit.
    variants, comps = [], []
    for name in names:
        v = raws[name]["values"]
        s2 = float(np.var(v, ddof=1))
        lo, hi = DescrStatsW(v).zconfint_mean(alpha=alpha)
        variants.append({"variant": name, "value": float(v.mean()), "variance": s2 / len(v), "unitVariance": s2,
                         "intervalLower": float(lo), "intervalUpper": float(hi)})
    cv = c_raw["values"]
    for name in names:
        if name == control:
            continue
        v = raws[name]["values"]
        cm = CompareMeans(DescrStatsW(v), DescrStatsW(cv))
        z, p = cm.ztest_ind(usevar="unequal")
        ci = cm.zconfint_diff(alpha=alpha, usevar="unequal")
        vt, vc = np.var(v, ddof=1) / len(v), np.var(cv, ddof=1) / len(cv)
        d = v.mean() - cv.mean()
        comps.append(comparison(config, name, float(v.mean()), float(vt), float(cv.mean()), float(vc),
                                float(z), float(p), ci, normal_bayes(float(d), float(np.sqrt(vt + vc)))))
    measures.append({"metric": "purchase", "measure": "meanPerUnit", "variants": variants, "comparisons": comps})

    # Ratio metric, delta method.
    def ratio(raw):
        x, y = raw["num"], raw["den"]
        n = len(x)
        R = x.sum() / y.sum()
        cov = np.cov(x, y, ddof=1)
        unit = (cov[0, 0] - 2 * R * cov[0, 1] + R**2 * cov[1, 1]) / y.mean() ** 2
        return float(R), float(unit / n), float(unit)

    variants, comps = [], []
    crit = stats.norm.ppf(0.5 + level / 2)
    for name in names:
        R, var, unit = ratio(raws[name])
        variants.append({"variant": name, "value": R, "variance": var, "unitVariance": unit,
                         "intervalLower": R - crit * np.sqrt(var), "intervalUpper": R + crit * np.sqrt(var)})
    Rc, vc, _ = ratio(c_raw)
    for name in names:
        if name == control:
            continue
        Rt, vt, _ = ratio(raws[name])
        d, se = Rt - Rc, np.sqrt(vt + vc)
        z = d / se
        comps.append(comparison(config, name, Rt, vt, Rc, vc, float(z), float(2 * stats.norm.sf(abs(z))),
                                (d - crit * se, d + crit * se), normal_bayes(d, se)))
    measures.append({"metric": "revenue_per_session", "measure": "ratio", "variants": variants, "comparisons": comps})
    return measures


def scenario(name, description, seed, variants, control="control", config=None):
    """variants: list of (name, split weight, units, conversion rate, mean order value, mean sessions)."""
    config = {"confidenceLevel": 0.95, "mixtureRelativeStandardDeviation": 0.1, "priorAlpha": 1.0,
              "priorBeta": 1.0, **(config or {})}
    rng = np.random.default_rng(seed)
    raws = {v[0]: simulate_variant(rng, v[2], v[3], v[4], v[5]) for v in variants}
    units = [v[2] for v in variants]
    weights = np.array([v[1] for v in variants], dtype=float)
    expected_units = sum(units) * weights / weights.sum()
    chi = stats.chisquare(units, expected_units)
    return {
        "name": name,
        "description": description,
        "configuration": config,
        "aggregates": {
            "controlVariant": control,
            "variants": [aggregates(v[0], v[1], raws[v[0]]) for v in variants],
        },
        "expected": {
            "sampleRatioMismatch": {
                "chiSquare": float(chi.statistic),
                "pValue": float(chi.pvalue),
                "isMismatch": bool(chi.pvalue < 0.001),
            },
            "measures": expected_for(config, control, raws),
        },
    }


def special_functions():
    """The special functions on a grid, from scipy.stats and scipy.special."""
    from scipy import special
    xs = [-38.0, -12.5, -5.0, -1.959963984540054, -0.3, 0.0, 0.7, 1.644853626951472, 3.1, 8.2, 30.0]
    ps = [1e-300, 1e-20, 1e-9, 0.001, 0.025, 0.3, 0.5, 0.77, 0.975, 0.999, 1 - 1e-12]
    gammas = [(a, x) for a in (0.5, 1.0, 2.5, 10.0, 150.0, 5_000.0) for x in (0.01, 0.9, 3.0, 11.0, 140.0, 5_100.0)]
    chis = [(k, x) for k in (1, 2, 3, 7, 30) for x in (0.0001, 0.5, 3.84, 10.83, 60.0, 300.0)]
    betas = [(x, a, b) for (a, b) in ((1, 1), (2.5, 7), (11, 90_001), (5_001, 95_001), (1, 1_001), (250_000, 4_750_000))
             for x in (1e-6, 0.0003, 0.05, 0.0501, 0.2, 0.5, 0.93)]
    return {
        "normalCDF": [[x, float(stats.norm.cdf(x))] for x in xs],
        "normalSurvival": [[x, float(stats.norm.sf(x))] for x in xs],
        "normalQuantile": [[p, float(stats.norm.ppf(p))] for p in ps],
        "regularizedLowerGamma": [[a, x, float(special.gammainc(a, x))] for a, x in gammas],
        "regularizedUpperGamma": [[a, x, float(special.gammaincc(a, x))] for a, x in gammas],
        "chiSquareSurvival": [[k, x, float(stats.chi2.sf(x, k))] for k, x in chis],
        "regularizedBeta": [[x, a, b, float(stats.beta.cdf(x, a, b))] for x, a, b in betas],
    }


def main():
    scenarios = [
        scenario("known_effect", "10 % → 12 % conversion, order value 40 → 44, 20,000 units each", 1,
                 [("control", 50, 20_000, 0.10, 40.0, 2.0), ("treatment", 50, 20_000, 0.12, 44.0, 2.0)]),
        scenario("known_null", "identical variants, 20,000 units each", 2,
                 [("control", 50, 20_000, 0.10, 40.0, 2.0), ("treatment", 50, 20_000, 0.10, 40.0, 2.0)]),
        scenario("sample_ratio_mismatch", "configured 50/50, observed 50/45 (20,000 vs 18,000 units)", 3,
                 [("control", 50, 20_000, 0.10, 40.0, 2.0), ("treatment", 50, 18_000, 0.10, 40.0, 2.0)]),
        scenario("three_variants", "34/33/33 split, two treatments, one better, one worse", 4,
                 [("control", 34, 6_800, 0.20, 25.0, 3.0), ("better", 33, 6_600, 0.23, 26.0, 3.0),
                  ("worse", 33, 6_650, 0.18, 24.0, 3.0)]),
        scenario("small_samples", "12 and 9 units: tiny counts, wide intervals", 5,
                 [("control", 1, 12, 0.3, 20.0, 1.0), ("treatment", 1, 9, 0.5, 20.0, 1.0)]),
        scenario("unequal_sizes_rare_events", "100:1 split, 0.1 % vs 0.4 % conversion (sharp vs wide posteriors)", 6,
                 [("control", 100, 100_000, 0.001, 30.0, 1.5), ("treatment", 1, 1_000, 0.004, 30.0, 1.5)]),
        scenario("large_counts", "2,000,000 units each, 5.0 % vs 5.05 %", 7,
                 [("control", 1, 2_000_000, 0.05, 30.0, 2.0), ("treatment", 1, 2_000_000, 0.0505, 30.0, 2.0)]),
        scenario("configured_prior_and_mixture", "Beta(2, 20) prior, absolute mixture variance, 90 % level", 8,
                 [("control", 1, 3_000, 0.08, 15.0, 2.0), ("treatment", 1, 3_000, 0.09, 15.0, 2.0)],
                 config={"confidenceLevel": 0.9, "priorAlpha": 2.0, "priorBeta": 20.0,
                         "mixtureAbsoluteVariance": 1e-4}),
        scenario("control_listed_last", "control is the second variant", 9,
                 [("treatment", 1, 5_000, 0.15, 10.0, 2.0), ("control", 1, 5_000, 0.13, 10.0, 2.0)]),
    ]
    # The absolute mixture variance applies to every measure's absolute difference.
    OUT.write_text(json.dumps({
        "command": "python3 Server/Tests/ExperimentStatisticsTests/Fixtures/make_fixtures.py",
        "versions": {"numpy": np.__version__, "scipy": __import__("scipy").__version__,
                     "statsmodels": __import__("statsmodels").__version__},
        "specialFunctions": special_functions(),
        "scenarios": scenarios,
    }, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
