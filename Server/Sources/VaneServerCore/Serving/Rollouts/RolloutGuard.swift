import Foundation
package import Logging
import ServiceLifecycle
import VaneCore

/// Watches every running rollout and decides its steps (docs/ROLLOUTS.md, "What the guard
/// decides"), on every node: at least every ``Settings/interval`` and at once when this node
/// stores events for a rollout's step (``wake``). Each decision claims the rollout's row in the
/// transaction of its publish or hold, so when two nodes decide the same step, one does and the
/// other's transaction is undone.
package struct RolloutGuard: Service {
    package struct Settings: Sendable {
        /// The longest pause between two passes.
        package var interval: Duration = .seconds(60)

        package init() {}
    }

    package let lifecycle: RolloutLifecycle
    package let wake: WakeSignal
    package let settings: Settings
    package let logger: Logger

    package init(lifecycle: RolloutLifecycle, wake: WakeSignal, settings: Settings = Settings(), logger: Logger) {
        self.lifecycle = lifecycle
        self.wake = wake
        self.settings = settings
        self.logger = logger
    }

    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            await pass()
            // At most one pass a second however fast events arrive; the wake is kept meanwhile.
            let interval = settings.interval
            await cancelWhenGracefulShutdown {
                try? await Task.sleep(for: .seconds(1))
                await wake.wait(atMost: interval - .seconds(1))
            }
        }
    }

    /// Decides every running rollout once. A decision another node made first, or that fails,
    /// is logged; the next pass reads the rollout again.
    package func pass() async {
        let running: [Rollout]
        do {
            running = try await lifecycle.rollouts.running()
        } catch {
            logger.warning("could not read the running rollouts", metadata: ["error": "\(error)"])
            return
        }
        for rollout in running {
            do {
                try await decide(rollout)
            } catch {
                logger.info(
                    "a rollout decision did not apply",
                    metadata: [
                        "rollout": "\(rollout.id)", "environment": "\(rollout.environment)", "error": "\(error)",
                    ]
                )
            }
        }
    }

    /// Assesses one running rollout as read and acts on it; returns what it did (nil: nothing).
    @discardableResult
    package func decide(_ rollout: Rollout) async throws -> RolloutDecision.Action? {
        guard rollout.state == .running, rollout.step >= 0, rollout.step < rollout.plan.steps.count - 1 else {
            return nil
        }
        let environment = rollout.environment
        guard let assessment = try await lifecycle.currentAssessment(rollout) else { return nil }
        switch assessment.verdict {
        case .wait:
            return nil
        case .advance:
            let moved = try await lifecycle.advance(rollout, assessment: assessment)
            logger.info("rollout advanced", metadata: ["rollout": "\(rollout.id)", "percent": "\(moved.percent)"])
            return moved.state == .completed ? .complete : .advance
        case .regression where rollout.plan.onRegression == .rollBack:
            try await lifecycle.rollBack(
                environment,
                id: rollout.id,
                expectedStep: rollout.step,
                unchangedSince: rollout.updateTime,
                reason: assessment.reason,
                figures: assessment.json,
                actor: RolloutLifecycle.guardActor(rollout.id)
            )
            logger.warning(
                "rollout rolled back",
                metadata: ["rollout": "\(rollout.id)", "reason": "\(assessment.reason)"]
            )
            return .rollBack
        case .regression, .hold:
            // Told once per step: a hold already recorded at this step is not repeated every pass.
            let decisions = try await lifecycle.rollouts.decisions(environment, id: rollout.id)
            if assessment.verdict == .hold, let last = decisions.last, last.action == .hold, last.step == rollout.step {
                return nil
            }
            try await lifecycle.hold(rollout, assessment: assessment, pausing: assessment.verdict == .regression)
            return .hold
        }
    }
}
