#!/usr/bin/env python3
"""Reference values for SampleSizeReferenceTests: units per variant to detect a difference, and the
smallest difference a number of units detects, computed by statsmodels' power functions (not the
closed form the Swift uses).

Made with (from the repository root; numpy, scipy and statsmodels as for make_fixtures.py):

    python3 Server/Tests/ExperimentStatisticsTests/Fixtures/make_sample_size_fixtures.py

which rewrites Server/Tests/ExperimentStatisticsTests/Fixtures/sample_size_reference.json.

statsmodels' NormalIndPower reads a standardized effect d = difference / pooled sd, where the
pooled variance of equal arms is (control variance + treatment variance) / 2, and solves its
two-sided power function (both tails) for the units per arm or for d.
"""
import json
import pathlib

from statsmodels.stats.power import NormalIndPower

HERE = pathlib.Path(__file__).parent

# (name, control variance, treatment variance, difference, confidence level, power, units per arm)
SCENARIOS = [
    ("conversion 10 % to 11 %", 0.1 * 0.9, 0.11 * 0.89, 0.01, 0.95, 0.8, 5000),
    ("conversion 25 % to 30 %, 99 %", 0.25 * 0.75, 0.3 * 0.7, 0.05, 0.99, 0.8, 800),
    ("conversion 2 % to 2.2 %, power 0.9", 0.02 * 0.98, 0.022 * 0.978, 0.002, 0.95, 0.9, 40000),
    ("revenue mean, unequal variances", 42.5, 57.25, 0.75, 0.95, 0.8, 3000),
    ("negative difference, 90 %", 0.3 * 0.7, 0.27 * 0.73, -0.03, 0.9, 0.8, 1200),
]


def main():
    power = NormalIndPower()
    cases = []
    for name, vc, vt, diff, level, pw, units in SCENARIOS:
        sd = ((vc + vt) / 2) ** 0.5
        alpha = 1 - level
        n = power.solve_power(effect_size=abs(diff) / sd, alpha=alpha, power=pw, ratio=1.0, alternative="two-sided")
        d = power.solve_power(nobs1=units, alpha=alpha, power=pw, ratio=1.0, alternative="two-sided")
        cases.append(
            {
                "name": name,
                "controlVariance": vc,
                "treatmentVariance": vt,
                "difference": diff,
                "confidenceLevel": level,
                "power": pw,
                "unitsPerVariant": float(n),
                "units": units,
                "minimumDetectableDifference": float(d * sd),
            }
        )
    (HERE / "sample_size_reference.json").write_text(json.dumps({"cases": cases}, indent=2) + "\n")


if __name__ == "__main__":
    main()
