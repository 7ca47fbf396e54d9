import VaneCore
import VaneServerCore

/// How the API writes a ``ValueChangeSample`` result, the same in every answer that carries one
/// (`POST …/template/impact`, a flag copy's `impact`, a change request's preview).
extension ValueChangeSample.SampleResult {
    /// Per key that changes for someone: `{"key", "changed", "of"}`; empty when nobody's value
    /// changes or a side does not compile.
    var keysJSON: JSONValue {
        guard case .counts(let counts, _) = self else { return .array([]) }
        return .array(
            counts.map { count -> JSONValue in
                [
                    "key": .string(count.key), "changed": .number(JSONNumber(count.changed)),
                    "of": .number(JSONNumber(count.of)),
                ]
            }
        )
    }

    /// The whole `impact` object: the live version it was measured against, the sample's make-up
    /// (saved contexts and synthetic users) and ``keysJSON``.
    func impactJSON(versionNumber: Int64) -> JSONObject {
        var saved = 0
        if case .counts(_, let count) = self { saved = count }
        return [
            "versionNumber": .string(String(versionNumber)),
            "synthetic": .number(JSONNumber(ValueChangeSample.syntheticCount)),
            "savedContexts": .number(JSONNumber(saved)),
            "keys": keysJSON,
        ]
    }
}
