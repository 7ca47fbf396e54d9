/// A rollout as people look at it (the console's rollout page): where it stands, every decision
/// made and why, and — while a step runs or is paused — the guard's reading of that step now,
/// from the same sums and running always-valid readings the guard decides on.
package struct RolloutReading: Sendable {
    package var rollout: Rollout
    /// Oldest first.
    package var decisions: [RolloutDecision]
    /// The current step's assessment at this moment; nil before the start, after the end, or
    /// when the step's experiment is gone.
    package var assessment: RolloutAssessment?
}

extension RolloutLifecycle {
    /// The rollout `id` of `environment` with its decisions and the current step's reading; nil
    /// when there is no such rollout.
    /// - Throws: ``StorageError/environmentNotFound(project:environment:)`` and what the stores throw.
    package func reading(_ environment: EnvironmentKey, id: String) async throws -> RolloutReading? {
        try await publisher.store.requireEnvironment(environment)
        guard let rollout = try await rollouts.rollout(environment, id: id) else { return nil }
        return RolloutReading(
            rollout: rollout,
            decisions: try await rollouts.decisions(environment, id: id),
            assessment: try await currentAssessment(rollout)
        )
    }

    /// What the guard reads of a running or paused rollout's step now (``RolloutAssessment``):
    /// what ``RolloutGuard`` decides on, and what the console shows; reading it decides nothing.
    package func currentAssessment(_ rollout: Rollout) async throws -> RolloutAssessment? {
        guard rollout.state == .running || rollout.state == .paused, rollout.step >= 0,
            rollout.step < rollout.plan.steps.count
        else { return nil }
        guard
            let (experiment, stored) = try await experiments.experiments.experimentWithTally(
                rollout.environment,
                key: rollout.stepExperimentKey
            )
        else { return nil }
        let aggregates = stored.tally.aggregates(for: experiment.definition)
        return RolloutAssessment.assess(
            rollout.plan,
            step: rollout.step,
            stepStart: rollout.stepStartTime ?? rollout.updateTime,
            now: clock.nowMilliseconds(),
            aggregates: aggregates,
            history: stored.history,
            health: ExperimentHealth(
                aggregates: aggregates,
                tally: stored.tally,
                threshold: RolloutPlan.sampleRatioThreshold
            )
        )
    }
}
