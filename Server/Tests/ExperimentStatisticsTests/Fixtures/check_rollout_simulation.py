#!/usr/bin/env python3
"""Checks the rollout simulator's output (scripts/rollout-simulation) independently of the Swift
code, and prints the figures docs/PERFORMANCE.md quotes.

Usage: check_rollout_simulation.py OUTPUT.json

For every recorded look (the first runs of each scenario, every look, and the real server's runs
as its store kept them) it recomputes from the arms' exposed and crashed units:
  * the guardrail's running always-valid interval: the mSPRT confidence set at level
    1 - errorRate / guardrails found by scipy.optimize.brentq (make_guardrail_fixtures.msprt_interval)
    with the guard's variances and mixture recomputed here from the counts (each arm's
    Agresti-Caffo variance, tau^2 = 0.2^2 x the pooled per-unit variance: agresti_caffo_variance,
    guard_tau2), intersected over the step's looks, and the verdict "worse" (lower end > margin 0);
  * the sample-ratio p-value: scipy.stats.chisquare against the arms' equal split;
  * that the guard's verdict follows from them: a regression exactly when worse, else a hold
    whenever p < 0.001.
Then over all runs: the A/A roll-back rate with its Clopper-Pearson interval (statsmodels), which
must not exceed 5 %; no crash run completed, the share rolled back within the 14 days and the median units per arm at
detection; the large jump (1 % -> 60 %) and the zero baseline (0 % -> 40 %) rolled back in every run at the first
step; the 50/45 runs all held for the mismatch (or were rolled back before it showed) and none
completed; no unit lost the new value.
"""
import json
import math
import pathlib
import statistics
import sys

from scipy import stats
from statsmodels.stats.proportion import proportion_confint

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from make_guardrail_fixtures import agresti_caffo_variance, guard_tau2, msprt_interval, narrowed  # noqa: E402

ERROR_RATE = 0.05  # the reference plan's: one guardrail
SAMPLE_RATIO_THRESHOLD = 0.001
failures = []


def close(a, b, what):
    if a is None or b is None:
        if a is not b:
            failures.append(f"{what}: {a} against {b}")
        return
    if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
        failures.append(f"{what}: the guard has {a}, scipy {b}")


def check_looks(looks, where):
    running = None
    key = None
    for look in looks:
        if (look["run"], look["step"]) != key:
            key = (look["run"], look["step"])
            running = None
        n_t, n_c = look["treatmentUnits"], look["comparisonUnits"]
        what = f"{where} run {look['run']} look {look['look']} step {look['step']}"
        if n_t > 0 and n_c > 0:
            x_t, x_c = look["treatmentConverted"], look["comparisonConverted"]
            V = agresti_caffo_variance(x_t, n_t) + agresti_caffo_variance(x_c, n_c)
            tau2 = guard_tau2(x_t, x_c, n_t, n_c)
            running = narrowed(running, msprt_interval(x_t / n_t - x_c / n_c, V, tau2, ERROR_RATE))
        close(look.get("lower"), running[0] if running else None, what + ": lower end")
        close(look.get("upper"), running[1] if running else None, what + ": upper end")
        worse = running is not None and running[0] > 0
        if worse != look["worse"]:
            failures.append(f"{what}: the guard says worse = {look['worse']}, scipy {worse}")
        if n_t + n_c > 0:
            p = stats.chisquare([n_c, n_t]).pvalue
            close(look["sampleRatioPValue"], p, what + ": sample-ratio p")
        else:
            p = 1.0
        verdict = look["verdict"]
        if (verdict == "regression") != worse:
            failures.append(f"{what}: verdict {verdict} but worse = {worse}")
        if not worse and p < SAMPLE_RATIO_THRESHOLD and verdict != "hold":
            failures.append(f"{what}: p = {p} < {SAMPLE_RATIO_THRESHOLD} but the verdict is {verdict}")
    return len(looks)


def main():
    document = json.loads(pathlib.Path(sys.argv[1]).read_text())
    runs = document["runs"]
    checked = 0
    for key in ("aa", "crashes", "largeJump", "zeroBaseline", "sampleRatio"):
        checked += check_looks(document[key]["looks"], key)
    checked += check_looks(document["server"]["looks"], "server")

    aa = document["aa"]["outcomes"]
    rolled_back = sum(o["ending"] == "rolled_back" for o in aa)
    low, high = proportion_confint(rolled_back, len(aa), alpha=0.05, method="beta")
    print(f"A/A, {document['aa']['looksPerRun']} looks every 5 minutes (14 days): {rolled_back} of {len(aa)} "
          f"rolled back = {rolled_back / len(aa):.2%} (95 % Clopper-Pearson interval {low:.2%}-{high:.2%})")
    if rolled_back / len(aa) > 0.05:
        failures.append(f"A/A: {rolled_back / len(aa):.2%} rolled back, above 5 %")

    crashes = document["crashes"]["outcomes"]
    caught = [o for o in crashes if o["ending"] == "rolled_back"]
    if caught:
        units = statistics.median(min(o["treatmentUnits"], o["comparisonUnits"]) for o in caught)
        days = statistics.median(o["look"] for o in caught) * 300 / 86400
        steps = {}
        for o in caught:
            steps[o["step"]] = steps.get(o["step"], 0) + 1
        print(f"crash rate 1.0 % -> 1.5 %: {len(caught)} of {len(crashes)} caught within 14 days; median units per "
              f"arm at detection {units:.0f} (in the step's experiment), median {days:.1f} days; "
              f"caught at step (index: runs) {dict(sorted(steps.items()))}")
    # Caught means never completed: a run still at 50 % when the 14 days end has not shipped the harm
    # to everyone; the share caught within the 14 days is reported above.
    completed = sum(o["ending"] == "completed" for o in crashes)
    if completed:
        failures.append(f"crashes: {completed} of {len(crashes)} completed")

    for key in ("largeJump", "zeroBaseline"):
        outcomes = document[key]["outcomes"]
        caught = [o for o in outcomes if o["ending"] == "rolled_back" and o["step"] == 0]
        units = sorted(min(o["treatmentUnits"], o["comparisonUnits"]) for o in caught)
        if units:
            print(f"{document[key]['scenario']}: {len(caught)} of {len(outcomes)} rolled back at the first step (1 %); "
                  f"units per arm at detection: median {statistics.median(units):.0f}, most {units[-1]}, "
                  f"median {statistics.median(o['look'] for o in caught) * 5:.0f} minutes")
        if len(caught) != len(outcomes):
            failures.append(f"{key}: {len(outcomes) - len(caught)} of {len(outcomes)} not rolled back at the first step")

    ratio = document["sampleRatio"]["outcomes"]
    held = [o for o in ratio if o["heldForSampleRatio"]]
    completed = sum(o["ending"] == "completed" for o in ratio)
    holds = {}
    for o in held:
        holds[o["firstHoldStep"]] = holds.get(o["firstHoldStep"], 0) + 1
    # A run the guard rolled back (a false alarm on its equal crash rates) before the mismatch
    # showed never advanced past it either: safe, and counted apart.
    rolled_back_first = [o for o in ratio if not o["heldForSampleRatio"] and o["ending"] == "rolled_back"]
    print(f"50/45 sample ratio: {len(held)} of {len(ratio)} held for the mismatch, {completed} completed, "
          f"{len(rolled_back_first)} rolled back before any hold; "
          f"first hold at step (index: runs) {dict(sorted(holds.items()))}")
    if len(held) + len(rolled_back_first) != len(ratio) or completed:
        failures.append("sample ratio: a run neither held nor was rolled back, or one completed")

    for run in document["server"]["runs"]:
        print(f"real server ({run['scenario']}): {run['outcome']['ending']} after {run['outcome']['look']} looks, "
              f"decisions {run['actions']}; {run['unitsChecked']} unit evaluations across steps, "
              f"{run['unitsThatLostTheNewValue']} lost the new value")
        if run["unitsThatLostTheNewValue"]:
            failures.append("a unit lost the new value")
    print(f"{checked} looks recomputed with scipy; {runs} runs per scenario in {document['seconds']:.0f} s")
    if failures:
        print(f"{len(failures)} disagreement(s); the first ones:", file=sys.stderr)
        for failure in failures[:20]:
            print("  " + failure, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
