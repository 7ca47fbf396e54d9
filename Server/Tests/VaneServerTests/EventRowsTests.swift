import Testing
import VaneCore

@testable import VaneServerCore

/// Each request writes its batch's rows; a group's writer joins them into the one array its
/// insert binds (``ExperimentEventStore/Rows``). A join that went wrong would not show in the
/// stored events: the group's transaction would fail and each request be written on its own.
@Suite struct EventRowsTests {
    /// Batches of one, two and three events; strings hold brackets and commas.
    static let batches: [[ExperimentEvent]] = [
        [ExperimentEvent(id: "a", unit: "u[1]", time: 1, kind: .metric(name: "m", value: 0.5, properties: nil))],
        [
            ExperimentEvent(
                id: "b",
                unit: "u,2",
                time: 2,
                kind: .exposure(experiment: "e", variant: "v]", flagKey: "f", templateVersion: 3)
            ),
            ExperimentEvent(
                id: "c",
                unit: "u3",
                time: 3,
                kind: .exposure(experiment: "e", variant: "v", flagKey: nil, templateVersion: nil)
            ),
        ],
        [
            ExperimentEvent(
                id: "d",
                unit: "u4",
                time: 4,
                kind: .metric(name: "m", value: -2, properties: ["note": .string("[a, b]")])
            ),
            ExperimentEvent(id: "e", unit: "u5", time: 5, kind: .metric(name: "m", value: 1e9, properties: [:])),
            ExperimentEvent(id: "f", unit: "u6", time: 6, kind: .metric(name: "n", value: 7, properties: nil)),
        ],
    ]

    @Test func batchesJoinedAreTheRowsOfAllTheirEventsInOrder() throws {
        let joined = ExperimentEventStore.Rows.joined(Self.batches.map(ExperimentEventStore.Rows.init))
        #expect(joined.json == ExperimentEventStore.Rows(Self.batches.flatMap(\.self)).json)
        let rows = try #require(try JSONValue.parse(joined.json).arrayValue)
        #expect(rows.count == 6)
        #expect(rows.map { $0.arrayValue?.first?.stringValue } == ["a", "b", "c", "d", "e", "f"])
        #expect(rows.allSatisfy { $0.arrayValue?.count == 11 }, "eleven columns a row")
    }

    @Test func aLoneBatchIsBoundAsItsRequestWroteIt() {
        let rows = ExperimentEventStore.Rows(Self.batches[1])
        #expect(ExperimentEventStore.Rows.joined([rows]).json == rows.json)
    }
}
