import Foundation
package import Logging
import ServiceLifecycle
import VaneCore

/// Applies scheduled change requests at their time (docs/GOVERNANCE.md, "Scheduled changes"), on
/// every node: each due request goes through ``ChangeRequestApplying/applyScheduled(_:by:)``,
/// whose write transaction claims it after the environment's lock (it must still be scheduled),
/// so it applies once, on one node, and a node killed mid-apply leaves it scheduled for another
/// node or its own restart.
///
/// It sleeps until the earliest scheduled time, at most ``Settings/pollIntervalMilliseconds``
/// (requests scheduled on other nodes are seen at the next read), and wakes at once when a
/// request is scheduled on this node (``wake``). A request found more than the grace late (no
/// node ran at its time) is suspended, not applied.
package struct ChangeRequestScheduler: Service {
    package struct Settings: Sendable {
        /// How late a request may still apply; later, it is suspended.
        package var graceMilliseconds: Int64
        /// The longest pause between two reads of the scheduled requests.
        package var pollIntervalMilliseconds: Int64 = 1000
        /// How many of the earliest scheduled requests one pass reads.
        package var batchSize = 64

        package init(graceMilliseconds: Int64) {
            self.graceMilliseconds = graceMilliseconds
        }
    }

    /// Who the version history and the audit log name for a scheduled apply (the audit entry
    /// also names the approvers).
    package static let actor = Actor(keyId: nil, name: "vane scheduler")

    package let applying: ChangeRequestApplying
    package let clock: ServerClock
    package let wake: WakeSignal
    package let settings: Settings
    package let logger: Logger

    package init(
        applying: ChangeRequestApplying,
        clock: ServerClock,
        wake: WakeSignal,
        settings: Settings,
        logger: Logger
    ) {
        self.applying = applying
        self.clock = clock
        self.wake = wake
        self.settings = settings
        self.logger = logger
    }

    package func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            var pause = settings.pollIntervalMilliseconds
            do {
                pause = try await pass()
            } catch {
                logger.warning("could not read the scheduled change requests", metadata: ["error": "\(error)"])
            }
            if pause > 0 {
                let milliseconds = pause
                await cancelWhenGracefulShutdown {
                    await wake.wait(atMost: .milliseconds(milliseconds))
                }
            }
        }
    }

    /// Applies (or suspends) every due request; returns how long to pause before the next pass.
    func pass() async throws -> Int64 {
        let scheduled = try await applying.requests.scheduled(limit: settings.batchSize)
        let now = clock.nowMilliseconds()
        let due = scheduled.filter { $0.applyTime <= now }
        // Environments apply side by side; one environment's requests in their order (they
        // queue on its lock anyway, and a later one may rebase onto an earlier one).
        let settled = await withTaskGroup(of: Bool.self) { group in
            for changes in Dictionary(grouping: due, by: \.environment).values {
                group.addTask {
                    var settled = true
                    for change in changes.sorted(by: { ($0.applyTime, $0.id) < ($1.applyTime, $1.id) }) {
                        settled = await handle(change) && settled
                    }
                    return settled
                }
            }
            return await group.reduce(true) { $0 && $1 }
        }
        // A full batch of due requests: more may be due behind it.
        if settled && !due.isEmpty && due.count == settings.batchSize { return 0 }
        guard settled, let next = scheduled.first(where: { $0.applyTime > now })?.applyTime else {
            return settings.pollIntervalMilliseconds
        }
        return max(0, min(settings.pollIntervalMilliseconds, next - clock.nowMilliseconds()))
    }

    /// Applies one due request, or suspends it when it is past the grace or cannot apply.
    /// Returns false when it stays scheduled after a failure that may pass (the database).
    func handle(_ change: ChangeRequestStore.ScheduledChange) async -> Bool {
        let late = clock.nowMilliseconds() - change.applyTime
        if late > settings.graceMilliseconds {
            let reason =
                "it was due at \(Clock.rfc3339(milliseconds: change.applyTime)) and no node applied it then; "
                + "found \(Self.duration(late)) late, more than the grace of \(Self.duration(settings.graceMilliseconds)) "
                + "(vane serve --schedule-grace), so nothing was applied. Check it still fits, then edit it to ask "
                + "for approval again and schedule or apply it"
            do {
                try await applying.requests.suspend(
                    change.environment,
                    id: change.id,
                    reason: reason,
                    by: Self.actor,
                    scheduledFor: change.applyTime
                )
                logger.warning(
                    "suspended a scheduled change request that missed its time by more than the grace",
                    metadata: ["changeRequest": "\(change.id)", "environment": "\(change.environment)"]
                )
                return true
            } catch {
                logger.warning(
                    "could not suspend a missed scheduled change request",
                    metadata: ["changeRequest": "\(change.id)", "error": "\(error)"]
                )
                return false
            }
        }
        do {
            let applied = try await applying.applyScheduled(change, by: Self.actor)
            logger.info(
                "applied a scheduled change request",
                metadata: [
                    "changeRequest": "\(change.id)", "environment": "\(change.environment)",
                    "lagMilliseconds": "\(applied.updateTime - change.applyTime)",
                ]
            )
            return true
        } catch {
            return await settle(change, after: error)
        }
    }

    /// After a failed apply: nothing to do when the request is no longer scheduled for that time
    /// (another node applied it, or it was edited, unscheduled or suspended as stale); suspended
    /// when the failure will not pass by itself; left scheduled otherwise.
    private func settle(_ change: ChangeRequestStore.ScheduledChange, after error: any Error) async -> Bool {
        guard let current = try? await applying.requests.request(change.environment, id: change.id) else {
            return false
        }
        guard current.state == .scheduled, current.applyTime == change.applyTime else { return true }
        guard let problem = Self.lastingProblem(error) else {
            logger.warning(
                "a scheduled change request could not apply yet; trying again",
                metadata: ["changeRequest": "\(change.id)", "error": "\(error)"]
            )
            return false
        }
        do {
            try await applying.requests.suspend(
                change.environment,
                id: change.id,
                reason: "at its scheduled time it could not apply: \(problem)",
                by: Self.actor,
                scheduledFor: change.applyTime
            )
            return true
        } catch {
            return false
        }
    }

    /// What a failure that trying again will not mend says (a refusal, a template that no longer
    /// validates, an experiment that cannot start); nil for one that may pass.
    static func lastingProblem(_ error: any Error) -> String? {
        switch error {
        case let refusal as ChangeRefusal:
            return refusal.description
        case let publish as PublishError:
            switch publish {
            case .storage(let storage): return lastingProblem(storage)
            case .changeRefused(let refusal): return refusal.description
            case .invalidRollback(let message): return message
            case .doesNotCompile(let problem): return "\(problem)"
            case .invalid(let issues):
                let errors = issues.filter { $0.severity == .error }.prefix(5).map { "\($0.path): \($0.message)" }
                return "the template does not validate on the live version (\(errors.joined(separator: "; ")))"
            }
        case let storage as StorageError:
            switch storage {
            case .versionConflict, .busy, .cannotOpen: return nil
            default: return "\(storage)"
            }
        case let refusal as ExperimentStartRefusal:
            return refusal.description
        default:
            return nil
        }
    }

    /// "2 h 5 min", "40 s", "350 ms".
    static func duration(_ milliseconds: Int64) -> String {
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        let seconds = milliseconds / 1000
        if seconds < 120 { return "\(seconds) s" }
        let minutes = seconds / 60
        if minutes < 120 { return "\(minutes) min" }
        return "\(minutes / 60) h \(minutes % 60) min"
    }
}
