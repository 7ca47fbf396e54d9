#!/usr/bin/env python3
"""How the guard's mixture multiple was chosen (docs/ROLLOUTS.md, "The test's mixture and
variances"): a numpy model of the rollout simulator's world, fast enough to try several τ.

Usage: guard_mixture_sweep.py RUNS MULTIPLE...   e.g.  guard_mixture_sweep.py 1000 0.1 0.2 0.3

The world is scripts/rollout-simulation's: 90 units arrive per 5-minute look, bucketed by the
step's percent (steps 1, 5, 10, 25, 50 %, the comparison slice as large), each step held 3 days
(864 looks), 14 days in all, one crash guardrail with no margin at error rate 0.05. Each arm's
variance is Agresti-Caffo's, tau^2 = MULTIPLE^2 x the pooled rate's p(1 - p) (make_guardrail_fixtures'
agresti_caffo_variance and guard_tau2 with GUARD_MULTIPLE = MULTIPLE), the mSPRT interval the
closed form's d +- sqrt(V G); a run rolls back at the first look whose lower end is above 0.
Unlike the simulator it draws each look's arrivals per arm as binomials and skips the minimum
units per arm (at 90 arrivals per look every step reaches 500 before its 3 days end).

Prints, per multiple, the A/A share rolled back with the steps they were rolled back at, and for
crashes 1.0 % -> 1.5 % the share caught and the median units per arm at detection.
"""
import sys

import numpy as np

ALPHA = 0.05
STEPS = (1, 5, 10, 25, 50)
LOOKS, HOLD, ARRIVALS = 4032, 864, 90


def half_width(V, tau2):
    G = (V + tau2) / tau2 * (np.log1p(tau2 / V) - 2 * np.log(ALPHA))
    return np.sqrt(V * G)


def run(runs, comparison_rate, treatment_rate, multiple, seed):
    rng = np.random.default_rng(seed)
    rolled = np.zeros(runs, bool)
    step_of = np.full(runs, -1)
    units_at = np.zeros(runs)
    start = 0
    for index, percent in enumerate(STEPS):
        looks = min(HOLD, LOOKS - start)
        share = min(percent, 100 - percent) / 100
        new_t = rng.binomial(ARRIVALS, percent / 100, (runs, looks))
        new_c = rng.binomial(ARRIVALS, share, (runs, looks))
        n_t = new_t.cumsum(1).astype(float)
        n_c = new_c.cumsum(1).astype(float)
        x_t = rng.binomial(new_t, treatment_rate).cumsum(1)
        x_c = rng.binomial(new_c, comparison_rate).cumsum(1)
        with np.errstate(all="ignore"):
            p_t, p_c = (x_t + 1) / (n_t + 2), (x_c + 1) / (n_c + 2)
            V = p_t * (1 - p_t) / (n_t + 2) + p_c * (1 - p_c) / (n_c + 2)
            pooled = (x_t + x_c + 1) / (n_t + n_c + 2)
            tau2 = multiple ** 2 * pooled * (1 - pooled)
            lower = np.where((n_t > 0) & (n_c > 0), x_t / n_t - x_c / n_c - half_width(V, tau2), -np.inf)
        worse = lower > 0
        caught = worse.any(1) & ~rolled
        first = worse.argmax(1)
        units_at[caught] = np.minimum(n_t, n_c)[np.arange(runs), first][caught]
        step_of[caught] = index
        rolled |= caught
        start += looks
    median = float(np.median(units_at[rolled])) if rolled.any() else None
    return float(rolled.mean()), np.bincount(step_of[rolled], minlength=len(STEPS)).tolist(), median


def main():
    runs = int(sys.argv[1])
    for multiple in map(float, sys.argv[2:]):
        aa = run(runs, 0.01, 0.01, multiple, seed=7)
        crashes = run(runs, 0.01, 0.015, multiple, seed=8)
        print(f"multiple {multiple}: A/A {aa[0]:.2%} rolled back (by step {aa[1]}); "
              f"1.0 % -> 1.5 %: {crashes[0]:.1%} caught, median {crashes[2]:.0f} units per arm", flush=True)


if __name__ == "__main__":
    main()
