#!/usr/bin/env python3
"""Reference values for GuardrailReferenceTests: the rollout guard's one-sided reading of a
crash-rate guardrail over many looks, computed independently of the Swift code.

Made with (from the repository root; numpy and scipy as for make_fixtures.py):

    python3 Server/Tests/ExperimentStatisticsTests/Fixtures/make_guardrail_fixtures.py

which rewrites Server/Tests/ExperimentStatisticsTests/Fixtures/guardrail_reference.json.

Each scenario simulates, with a fixed seed, units of a comparison arm crashing at one rate and of
a treatment arm at another, looked at every `lookEvery` units per arm. At each look it writes the
arms' aggregates as the server keeps them and, from the raw units:
  * the conversion-rate difference and its Agresti-Caffo variance: each arm's variance computed
    with one conversion and one non-conversion added (agresti_caffo_variance),
  * the mSPRT confidence set at level 1 - errorRate / guardrails, found by scipy.optimize.brentq on
    the normal-mixture likelihood ratio {theta : Lambda(theta) = guardrails / errorRate} (not the
    closed form the Swift uses), with the guard's mixture tau^2 = 0.2^2 * the per-unit variance of
    both arms' units taken as one sample, computed as an arm's is (guard_tau2),
  * the running interval: the intersection of every informative look's set so far (a look whose
    set misses the running one leaves it as it was), and
  * the guard's verdict: worse when the running interval's lower end is above the margin.

The ratio scenarios (`ratioScenarios`) do the same for a ratio guardrail (errors per request),
with the delta method's variance from the raw units, and tau^2 from the delta method's variance of
both arms' units concatenated.
"""
import json
import pathlib

import numpy as np

from make_fixtures import msprt

HERE = pathlib.Path(__file__).parent


def msprt_interval(d, V, tau2, alpha):
    """The experiments' reference confidence set (make_fixtures.msprt), without its p-value."""
    _, lower, upper = msprt(d, V, tau2, alpha)
    return lower, upper


GUARD_MULTIPLE = 0.2  # tau = 0.2 x the pooled per-unit standard deviation (docs/ROLLOUTS.md)


def agresti_caffo_variance(converted, n):
    """The variance of a rate with one conversion and one non-conversion added, for the variance
    only: p~(1 - p~) / (n + 2), p~ = (converted + 1) / (n + 2)."""
    p = (converted + 1) / (n + 2)
    return p * (1 - p) / (n + 2)


def guard_tau2(treatment_converted, comparison_converted, n_t, n_c):
    """The guard's tau^2 for a conversion guardrail: 0.2^2 x the per-unit variance of both arms
    taken as one sample, computed as an arm's is (Agresti-Caffo: p~(1 - p~) of the pooled counts
    with one conversion and one non-conversion added)."""
    p = (treatment_converted + comparison_converted + 1) / (n_t + n_c + 2)
    return GUARD_MULTIPLE ** 2 * p * (1 - p)


def narrowed(running, interval):
    """The running interval after a look: the intersection of every look's set so far; a look
    whose set misses the running one leaves it as it was."""
    if running is None:
        return interval
    new = (max(running[0], interval[0]), min(running[1], interval[1]))
    return new if new[0] <= new[1] else running


def scenario(name, seed, comparison_rate, treatment_rate, units, look_every, error_rate, guardrails, margin):
    rng = np.random.default_rng(seed)
    comparison = rng.random(units) < comparison_rate
    treatment = rng.random(units) < treatment_rate
    alpha = error_rate / guardrails
    running = None
    looks = []
    for n in range(look_every, units + 1, look_every):
        xc, xt = int(comparison[:n].sum()), int(treatment[:n].sum())
        V = agresti_caffo_variance(xt, n) + agresti_caffo_variance(xc, n)
        tau2 = guard_tau2(xt, xc, n, n)
        running = narrowed(running, msprt_interval(xt / n - xc / n, V, tau2, alpha))
        looks.append({
            "units": n, "comparisonConverted": xc, "treatmentConverted": xt,
            "lower": running[0], "upper": running[1], "worse": bool(running[0] > margin),
        })
    return {
        "name": name, "errorRate": error_rate, "guardrails": guardrails, "margin": margin,
        "comparisonRate": comparison_rate, "treatmentRate": treatment_rate, "looks": looks,
    }


def ratio_scenario(name, seed, comparison_rate, treatment_rate, units, look_every, error_rate, guardrails, margin):
    """A ratio guardrail (5xx per request): each unit makes Poisson(20) requests, each failing at
    its arm's rate. The ratio's variance is the delta method's, computed from the raw units with
    numpy's sample variances and covariance (not from the sums the Swift reads)."""
    rng = np.random.default_rng(seed)
    requests = {arm: rng.poisson(20, units).astype(float) for arm in ("comparison", "treatment")}
    errors = {
        "comparison": rng.binomial(requests["comparison"].astype(int), comparison_rate).astype(float),
        "treatment": rng.binomial(requests["treatment"].astype(int), treatment_rate).astype(float),
    }
    alpha = error_rate / guardrails
    running = None
    looks = []
    for n in range(look_every, units + 1, look_every):
        look = {"units": n}
        estimates = {}
        for arm in ("comparison", "treatment"):
            x, y = errors[arm][:n], requests[arm][:n]
            look[arm] = {
                "numeratorSum": float(x.sum()), "denominatorSum": float(y.sum()),
                "numeratorSumOfSquares": float((x * x).sum()), "denominatorSumOfSquares": float((y * y).sum()),
                "productSum": float((x * y).sum()),
            }
            r = x.sum() / y.sum()
            covariance = np.cov(x, y, ddof=1)
            variance = (covariance[0, 0] - 2 * r * covariance[0, 1] + r * r * covariance[1, 1]) / y.mean() ** 2 / n
            estimates[arm] = (r, variance)
        c, vc = estimates["comparison"]
        t, vt = estimates["treatment"]
        # Both arms' units as one sample: the delta method's per-unit variance of their ratio.
        x = np.concatenate([errors["comparison"][:n], errors["treatment"][:n]])
        y = np.concatenate([requests["comparison"][:n], requests["treatment"][:n]])
        r = x.sum() / y.sum()
        covariance = np.cov(x, y, ddof=1)
        pooled = (covariance[0, 0] - 2 * r * covariance[0, 1] + r * r * covariance[1, 1]) / y.mean() ** 2
        running = narrowed(running, msprt_interval(t - c, vt + vc, GUARD_MULTIPLE ** 2 * pooled, alpha))
        look["lower"], look["upper"] = running
        look["worse"] = bool(running[0] > margin)
        looks.append(look)
    return {
        "name": name, "errorRate": error_rate, "guardrails": guardrails, "margin": margin,
        "comparisonRate": comparison_rate, "treatmentRate": treatment_rate, "looks": looks,
    }


def main():
    scenarios = [
        scenario("aa", 1, 0.01, 0.01, 6000, 500, 0.05, 1, 0.0),
        scenario("crash_rate_1_to_3", 2, 0.01, 0.03, 6000, 500, 0.05, 1, 0.0),
        scenario("crash_rate_1_to_1_5", 3, 0.01, 0.015, 20000, 2000, 0.05, 1, 0.0),
        scenario("three_guardrails", 4, 0.01, 0.03, 6000, 500, 0.05, 3, 0.0),
        scenario("within_margin", 5, 0.02, 0.025, 20000, 2000, 0.05, 2, 0.01),
        # A large jump on few units, a comparison group without events, and none in either arm.
        scenario("large_jump_1_to_60", 9, 0.01, 0.6, 300, 20, 0.05, 1, 0.0),
        scenario("zero_baseline_0_to_40", 10, 0.0, 0.4, 300, 20, 0.05, 1, 0.0),
        scenario("aa_no_events", 11, 0.0, 0.0, 2000, 100, 0.05, 1, 0.0),
    ]
    ratio_scenarios = [
        ratio_scenario("ratio_aa", 6, 0.01, 0.01, 4000, 500, 0.05, 1, 0.0),
        ratio_scenario("ratio_1_to_1_5_percent", 7, 0.01, 0.015, 4000, 500, 0.05, 1, 0.0),
        ratio_scenario("ratio_within_margin", 8, 0.01, 0.012, 4000, 500, 0.05, 2, 0.005),
    ]
    (HERE / "guardrail_reference.json").write_text(
        json.dumps({"scenarios": scenarios, "ratioScenarios": ratio_scenarios}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
