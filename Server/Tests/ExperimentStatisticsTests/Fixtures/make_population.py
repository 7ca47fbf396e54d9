#!/usr/bin/env python3
"""Simulated unit populations for an end-to-end ExperimentStatisticsTests check.

Made with (from the repository root; numpy, scipy and statsmodels from PyPI, the versions recorded
in population.json):

    pip install --user scipy statsmodels numpy
    python3 Server/Tests/ExperimentStatisticsTests/Fixtures/make_population.py

which rewrites Server/Tests/ExperimentStatisticsTests/Fixtures/population.json. Unlike
reference.json, no per-unit data is stored: every population is produced by a tiny generator that
the Swift test re-implements bit-for-bit, so the test can regenerate the units, send them to the
server as events and compare the server's statistics with the expectations written here.

Generator: SplitMix64, all arithmetic mod 2^64:

    state = seed
    next(): state = (state + 0x9E3779B97F4A7C15) mod 2^64; z = state
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) mod 2^64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) mod 2^64
            return z ^ (z >> 31)
    uniform(): (next() >> 11) * 2**-53          (a Double in [0, 1))

For each unit i = 0 ..< N, in order, exactly four uniforms are drawn: uVariant, uConvert, uValue,
uSessions (always four, whether or not the unit converts). Then
  * variant: the first variant, in listed order, whose cumulative assignment probability (a Double
    running sum, added left to right) exceeds uVariant; the last variant if none does;
  * converted = uConvert < rate(variant);
  * value = (minCents + floor(uValue * spanCents)) / 100 if converted, else 0.0 (exact cents);
  * sessions = 1 + floor(uSessions * 4)  (1 ... 4);
  * unit id = "unit-" + str(i).

The expected statistics come from make_fixtures.expected_for (scipy/statsmodels, see that file)
with purchase.converted = converted, purchase values = value, and the ratio metric
revenue_per_session = value / sessions. The sample-ratio-mismatch check is scipy.stats.chisquare
of the observed exposed units against N * splitWeight / sum(splitWeights).

Event counts assume one purchase event (carrying the order value) per converted unit and one
session event per session.
"""
import json
import math
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from make_fixtures import expected_for  # noqa: E402

OUT = HERE / "population.json"
MASK = (1 << 64) - 1

GENERATOR = (
    "SplitMix64 (state += 0x9E3779B97F4A7C15; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9; "
    "z = (z ^ z>>27) * 0x94D049BB133111EB; z ^ z>>31; all mod 2^64), uniform = (next() >> 11) * 2^-53; "
    "per unit i in 0..<N draw uVariant, uConvert, uValue, uSessions (always four); variant = first whose "
    "left-to-right cumulative assignmentProbability > uVariant (else last); converted = uConvert < rate; "
    "value = (minCents + floor(uValue * spanCents)) / 100 if converted else 0; "
    "sessions = 1 + floor(uSessions * 4); id = \"unit-\" + i"
)


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53


def generate(seed, n, variants):
    """Per-variant raw data (lists) in the generator's exact order."""
    rng = SplitMix64(seed)
    cumulative, running = [], 0.0
    for v in variants:
        running += v["assignmentProbability"]
        cumulative.append(running)
    raw = {v["name"]: {"ids": [], "converted": [], "cents": [], "sessions": []} for v in variants}
    for i in range(n):
        u_variant, u_convert, u_value, u_sessions = (rng.uniform() for _ in range(4))
        chosen = variants[-1]
        for v, c in zip(variants, cumulative):
            if u_variant < c:
                chosen = v
                break
        converted = u_convert < chosen["rate"]
        cents = chosen["minCents"] + math.floor(u_value * chosen["spanCents"]) if converted else 0
        sessions = 1 + math.floor(u_sessions * 4)
        r = raw[chosen["name"]]
        r["ids"].append(f"unit-{i}")
        r["converted"].append(converted)
        r["cents"].append(cents)
        r["sessions"].append(sessions)
    return raw


def population(name, description, seed, n, variants, control="control"):
    config = {"confidenceLevel": 0.95, "mixtureRelativeStandardDeviation": 0.1, "priorAlpha": 1.0,
              "priorBeta": 1.0}
    gen = generate(seed, n, variants)
    raws, counts = {}, []
    for v in variants:
        g = gen[v["name"]]
        values = np.array([c / 100 for c in g["cents"]], dtype=float)
        sessions = np.array(g["sessions"], dtype=float)
        raws[v["name"]] = {"converted": np.array(g["converted"], dtype=bool), "values": values,
                           "num": values, "den": sessions}
        cents_sum = sum(g["cents"])
        counts.append({
            "variant": v["name"],
            "exposedUnits": len(g["ids"]),
            "convertedUnits": sum(g["converted"]),
            "valueSum": cents_sum / 100,  # exact cents total, correctly rounded once
            "valueSumCents": cents_sum,
            "sessionsSum": sum(g["sessions"]),
            "purchaseEvents": sum(g["converted"]),
            "sessionEvents": sum(g["sessions"]),
            "firstUnits": g["ids"][:3],
        })
    observed = [c["exposedUnits"] for c in counts]
    weights = np.array([v["splitWeight"] for v in variants], dtype=float)
    chi = stats.chisquare(observed, sum(observed) * weights / weights.sum())
    return {
        "name": name,
        "description": description,
        "seed": seed,
        "units": n,
        "variants": variants,
        "configuration": config,
        "expected": {
            "counts": counts,
            "sampleRatioMismatch": {
                "chiSquare": float(chi.statistic),
                "pValue": float(chi.pvalue),
                "isMismatch": bool(chi.pvalue < 0.001),
            },
            "measures": expected_for(config, control, raws),
        },
    }


def variant(name, weight, probability, rate, min_cents, span_cents):
    return {"name": name, "splitWeight": weight, "assignmentProbability": probability, "rate": rate,
            "minCents": min_cents, "spanCents": span_cents}


def main():
    check_rng = SplitMix64(20261124)
    outputs = [check_rng.next() for _ in range(5)]
    populations = [
        population("known_effect", "10 % → 12 % conversion, order value uniform 20–60 → 22–66, 50/50 split",
                   20261124, 20_000,
                   [variant("control", 50, 0.5, 0.10, 2000, 4000),
                    variant("treatment", 50, 0.5, 0.12, 2200, 4400)]),
        population("known_null", "identical variants, 50/50 split", 20261125, 20_000,
                   [variant("control", 50, 0.5, 0.10, 2000, 4000),
                    variant("treatment", 50, 0.5, 0.10, 2000, 4000)]),
        population("sample_ratio_mismatch", "configured 50/50, assigned 50/95 vs 45/95, identical variants",
                   20261126, 20_000,
                   [variant("control", 50, 50 / 95, 0.10, 2000, 4000),
                    variant("treatment", 50, 45 / 95, 0.10, 2000, 4000)]),
    ]
    OUT.write_text(json.dumps({
        "command": "python3 Server/Tests/ExperimentStatisticsTests/Fixtures/make_population.py",
        "versions": {"numpy": np.__version__, "scipy": __import__("scipy").__version__,
                     "statsmodels": __import__("statsmodels").__version__},
        "generator": GENERATOR,
        "generatorCheck": {"seed": 20261124, "firstOutputs": [f"0x{x:016x}" for x in outputs]},
        "populations": populations,
    }, indent=1) + "\n")

    print("generatorCheck seed 20261124:")
    for x in outputs:
        print(f"  0x{x:016x}  uniform {(x >> 11) * 2.0**-53!r}")
    for p in populations:
        e = p["expected"]
        print(p["name"])
        for c in e["counts"]:
            print(f"  {c['variant']:>10}: exposed {c['exposedUnits']}, converted {c['convertedUnits']}, "
                  f"valueSum {c['valueSum']}, sessionsSum {c['sessionsSum']}, first {c['firstUnits']}")
        srm = e["sampleRatioMismatch"]
        print(f"  SRM chi2 {srm['chiSquare']:.4f}, p {srm['pValue']:.4g}, mismatch {srm['isMismatch']}")
        for m in e["measures"]:
            for comp in m["comparisons"]:
                print(f"  {m['metric']}/{m['measure']}: diff {comp['difference']:.6g} "
                      f"CI [{comp['intervalLower']:.6g}, {comp['intervalUpper']:.6g}] p {comp['pValue']:.4g}")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
