import Foundation
import TestSupport
import Testing
import Vane

/// A rollout's roll back reaches an app live (issue #30): a realtime key under a running rollout,
/// a client in its treatment following the event stream, and the server's own guard rolling the
/// rollout back when the treatment's units crash. The client's value returns to the old one
/// without the app calling fetch.
@Suite(.serialized, .timeLimit(.minutes(5))) struct RolloutLiveUpdateTests {
    static let template = """
        {"parameters": {
          "new_checkout": {"defaultValue": {"value": "false"}, "valueType": "BOOLEAN", "vane": {"realtime": true}}
        }}
        """
    static let plan = """
        {"id": "new-checkout", "parameters": [{"key": "new_checkout", "value": "true"}], "steps": [50, 100],
         "minimumUnitsPerArm": 100,
         "guardrails": [{"event": "app_crashed", "kind": "conversion", "bad": "increase", "margin": 0}]}
        """

    @Test func aGuardsRollBackOfARealtimeKeyAppliesLiveWithoutAFetchCall() async throws {
        try await SDKHarness.with { harness in
            try await harness.publish(Self.template)
            let created = try await harness.server.run(["rollouts", "create", try CLIRunner.temporaryFile(Self.plan)])
            #expect(created.status == 0, "\(created.stderr)")
            let started = try await harness.server.run(["rollouts", "start", "new-checkout"])
            #expect(started.status == 0, "\(started.stderr)")

            // A client whose installation is in the treatment (half of them are).
            var treated: VaneClient?
            for index in 0..<40 where treated == nil {
                let client = try LiveUpdateTests().liveClient(harness, storage: "app-\(index)")
                try await client.fetchAndActivate()
                if client.bool(forKey: "new_checkout", default: false) { treated = client }
            }
            let client = try #require(treated, "no client of 40 landed in the 50 % treatment")
            let liveUpdates = Recorder(client.liveUpdates)
            client.startLiveUpdates()
            defer { client.stopLiveUpdates() }
            #expect(await LiveUpdateTests().waitForState(client) { $0 == .connected }, "\(client.liveUpdateState)")

            // The treatment crashes: 400 of 1,000 units against 20 of the comparison's 1,000.
            try await Self.sendRegression(harness, experiment: "rollout-new-checkout-1")
            #expect(
                await liveUpdates.wait(timeout: 30) { updates in
                    updates.contains { $0.appliedKeys.contains("new_checkout") }
                },
                "the roll back never arrived live"
            )
            #expect(client.bool(forKey: "new_checkout", default: true) == false, "back to the old value, live")
            let status = try await harness.server.run(["rollouts", "status", "new-checkout"])
            #expect(status.stdout.contains("rolled_back"), "\(status.stdout)\(status.stderr)")
            #expect(status.stdout.contains("roll_back"), "the guard's decision: \(status.stdout)")
        }
    }

    /// Exposures for both arms of `experiment`, crashes for 40 % of the treatment and 2 % of the
    /// comparison, posted with the client key as apps post them.
    static func sendRegression(_ harness: SDKHarness, experiment: String) async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let exposed = ISO8601Timestamp.string(milliseconds: now - 2_000)
        let crashed = ISO8601Timestamp.string(milliseconds: now - 1_000)
        var events: [String] = []
        for index in 0..<1_000 {
            for arm in ["treatment", "comparison"] {
                let unit = "load-\(arm)-\(index)"
                events.append(
                    #"{"id": "x-\#(unit)", "type": "exposure", "unit": "\#(unit)", "time": "\#(exposed)", "#
                        + #""experiment": "\#(experiment)", "variant": "\#(arm)"}"#
                )
                if arm == "treatment" ? index % 5 < 2 : index % 50 == 0 {
                    events.append(
                        #"{"id": "c-\#(unit)", "type": "metric", "unit": "\#(unit)", "time": "\#(crashed)", "#
                            + #""name": "app_crashed"}"#
                    )
                }
            }
        }
        let url = try #require(URL(string: harness.server.url + "/v1/projects/demo/environments/production/events"))
        for start in stride(from: 0, to: events.count, by: 1_000) {
            let body =
                #"{"events": ["# + events[start..<min(events.count, start + 1_000)].joined(separator: ", ") + "]}"
            let response = try await URLSessionTransport().send(
                TransportRequest(
                    method: "POST",
                    url: url,
                    headers: ["Authorization": "Bearer \(harness.clientKey)", "Content-Type": "application/json"],
                    body: Data(body.utf8),
                    timeout: 30
                )
            )
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == 200, "\(text.prefix(500))")
        }
    }
}
