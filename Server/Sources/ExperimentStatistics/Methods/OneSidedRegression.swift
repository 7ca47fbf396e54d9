/// The guard's reading of a guardrail (docs/ROLLOUTS.md, "What the guard decides"): whether the
/// treatment is worse than the comparison by more than a tolerated margin, read one-sided from
/// the running always-valid interval of treatment − comparison (``AlwaysValidSequence``).
///
/// The interval is two-sided at level 1 − α/g; it covers the true difference at every look with
/// that probability, so the one-sided claim "worse by more than the margin" is wrong at most α/g
/// of the time however often it is read — conservative, as one side of a two-sided interval is.
/// With the error rate α split evenly across g guardrails (Bonferroni), any guardrail of the
/// rollout flags a harmless change at most α of the time.
public enum OneSidedRegression {
    /// The level each guardrail's interval is kept at: 1 − α/g.
    public static func confidenceLevel(errorRate: Double, guardrails: Int) -> Double {
        1 - errorRate / Double(max(1, guardrails))
    }

    /// Whether `interval` (treatment − comparison) lies wholly beyond `margin` in the bad direction:
    /// above it when an increase is bad, below −margin when a decrease is.
    public static func isWorse(_ interval: Interval, margin: Double, increaseIsBad: Bool) -> Bool {
        increaseIsBad ? interval.lower > margin : interval.upper < -margin
    }
}
