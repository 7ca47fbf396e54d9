import Foundation
import TestSupport
import Testing
import VaneCore

/// `vane change-requests` against a real `vane serve` process: a policy switched on through a
/// request, `vane publish` and `vane rollback` refused with what to do, and a template change
/// opened, approved by another key and applied.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ChangeRequestCommandsTests {
    @Test func aChangeIsOpenedApprovedByAnotherKeyAndApplied() async throws {
        let server = try await ServeProcess.start()
        defer { _ = server.stop() }
        let reviewer = try await server.run(["keys", "create", "--role", "admin", "--name", "reviewer", "--json"])
        let reviewerKey = try #require(try JSONValue.parse(reviewer.stdout).objectValue?["key"]?.stringValue)

        let policy = try CLIRunner.temporaryFile(#"{"required": true, "approvals": 1}"#, name: "policy.json")
        let opened = try await server.run([
            "change-requests", "create", "--title", "require review", "--policy", policy,
        ])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout.hasPrefix("Opened cr_"), "\(opened.stdout)")
        #expect(opened.stdout.contains("is in_review (0/1 approvals): require review"), "\(opened.stdout)")
        let id = String(opened.stdout.dropFirst("Opened ".count).prefix { $0 != " " })

        let shown = try await server.run(["change-requests", "show", id])
        let hash = try #require(try JSONValue.parse(shown.stdout).objectValue?["contentHash"]?.stringValue)
        let own = try await server.run(["change-requests", "approve", id, "--hash", hash])
        #expect(own.status == 1)
        #expect(own.stderr.contains("their own"), "\(own.stderr)")
        let approved = try await server.run(["change-requests", "approve", id, "--hash", hash], key: reviewerKey)
        #expect(approved.status == 0, "\(approved.stderr)")
        #expect(approved.stdout.contains("is approved (1/1 approvals)"), "\(approved.stdout)")
        let applied = try await server.run(["change-requests", "apply", id])
        #expect(applied.stdout.hasPrefix("Applied (version 1): \(id) is applied"), "\(applied.stdout)\(applied.stderr)")

        let file = try CLIRunner.temporaryFile(RemoteCommandsTests.flags)
        let publish = try await server.run(["publish", file, "--message", "straight in"])
        #expect(publish.status == 1)
        #expect(publish.stderr.contains("CHANGE_REQUEST_REQUIRED"), "\(publish.stderr)")
        #expect(publish.stderr.contains("vane change-requests create"), "\(publish.stderr)")
        let rollback = try await server.run(["rollback", "1"])
        #expect(rollback.status == 1, "\(rollback.stdout)")

        let change = try await server.run([
            "change-requests", "create", "--title", "new flags", "--template", file, "--json",
        ])
        let object = try JSONValue.parse(change.stdout).objectValue
        let changeId = try #require(object?["id"]?.stringValue, "\(change.stdout)\(change.stderr)")
        let changeHash = try #require(object?["contentHash"]?.stringValue)
        let refused = try await server.run(["change-requests", "apply", changeId])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("CHANGE_REQUEST_NOT_APPROVED"), "\(refused.stderr)")
        _ = try await server.run(["change-requests", "approve", changeId, "--hash", changeHash], key: reviewerKey)
        let published = try await server.run(["change-requests", "apply", changeId])
        #expect(published.stdout.hasPrefix("Applied (version 2): "), "\(published.stdout)\(published.stderr)")

        let list = try await server.run(["change-requests", "list", "--state", "applied"])
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ID") == true, "\(list.stdout)")
        #expect(lines.count == 3, "\(list.stdout)")
        #expect(try await server.run(["change-requests", "create", "--title", "x"]).status == 2)

        // Rejecting takes the same request and reviewed revision as approving, and a reason.
        let dropped = try await server.run([
            "change-requests", "create", "--title", "dropped", "--template", file, "--json",
        ])
        let droppedObject = try JSONValue.parse(dropped.stdout).objectValue
        let droppedId = try #require(droppedObject?["id"]?.stringValue, "\(dropped.stdout)\(dropped.stderr)")
        let droppedHash = try #require(droppedObject?["contentHash"]?.stringValue)
        let noReason = try await server.run(["change-requests", "reject", droppedId, "--hash", droppedHash])
        #expect(noReason.status == 2)
        let rejected = try await server.run(
            ["change-requests", "reject", droppedId, "--hash", droppedHash, "--comment", "not now"],
            key: reviewerKey
        )
        #expect(rejected.status == 0, "\(rejected.stderr)")
        #expect(rejected.stdout.hasPrefix("Rejected: \(droppedId) is "), "\(rejected.stdout)")
    }

    @Test func anApprovedChangeIsScheduledMovedAndAppliedAtItsTime() async throws {
        let server = try await ServeProcess.start()
        defer { _ = server.stop() }
        let reviewer = try await server.run(["keys", "create", "--role", "admin", "--name", "reviewer", "--json"])
        let reviewerKey = try #require(try JSONValue.parse(reviewer.stdout).objectValue?["key"]?.stringValue)
        let file = try CLIRunner.temporaryFile(RemoteCommandsTests.flags)
        let change = try await server.run([
            "change-requests", "create", "--title", "monday launch", "--template", file, "--json",
        ])
        let object = try JSONValue.parse(change.stdout).objectValue
        let id = try #require(object?["id"]?.stringValue, "\(change.stdout)\(change.stderr)")
        let hash = try #require(object?["contentHash"]?.stringValue)
        let early = try await server.run(["change-requests", "schedule", id, "--at", "2030-01-01T09:00:00Z"])
        #expect(early.status == 1, "only an approved request is scheduled: \(early.stdout)")
        _ = try await server.run(["change-requests", "approve", id, "--hash", hash], key: reviewerKey)

        let later = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
        let scheduled = try await server.run(["change-requests", "schedule", id, "--at", later])
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        #expect(scheduled.stdout.contains("is scheduled (1/1 approvals)"), "\(scheduled.stdout)")
        #expect(scheduled.stdout.contains("applies at "), "\(scheduled.stdout)")
        let list = try await server.run(["change-requests", "list", "--state", "scheduled"])
        #expect(list.stdout.contains("APPLIES AT") && list.stdout.contains(id), "\(list.stdout)")
        let removed = try await server.run(["change-requests", "schedule", id, "--remove"])
        #expect(removed.stdout.hasPrefix("Unscheduled: \(id) is approved"), "\(removed.stdout)\(removed.stderr)")
        let bad = try await server.run(["change-requests", "schedule", id, "--at", "next monday"])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("RFC 3339"), "\(bad.stderr)")
        #expect(try await server.run(["change-requests", "schedule", id]).status == 2)

        // The real process's scheduler applies it at its time.
        let soon = ISO8601DateFormatter().string(from: Date().addingTimeInterval(5))
        #expect(try await server.run(["change-requests", "schedule", id, "--at", soon]).status == 0)
        let applied = try await eventually(within: 30) {
            try await server.run(["change-requests", "list", "--state", "applied"]).stdout.contains(id)
        }
        #expect(applied, "the scheduled request never applied")
    }
}
