import VaneCore
import VaneServerCore

/// What `vane eval` prints for one result: key → value, remote values over in-app defaults, as an
/// app would see them; with `--explain`, each key's value, source, reason and deciding condition.
///
/// A parameter's entry depends only on the branch that won it (and on the in-app defaults), so
/// every branch's `"key": …` text is encoded once, when the output is set up. Writing a result
/// then copies one fragment per parameter: no dictionary, no escaping, no allocation per context.
struct EvalOutput: Sendable {
    /// Every fragment, end to end.
    private let storage: [UInt8]
    /// Fragment `i` is `storage[starts[i]..<starts[i + 1]]`; empty when its branch sends nothing.
    private let starts: [Int]
    /// Parameter `p`'s branch `b` (``EvaluationResult/forEachBranch(_:)``) is fragment
    /// `firstFragment[p] + b`.
    private let firstFragment: [Int]
    /// The fragments written after the template's: in-app defaults for keys the template lacks.
    private let trailing: Range<Int>

    /// Sets up the output for results printed as objects at `depth` (0 for one result, 1 for the
    /// elements of an array), pretty.
    init(compiled: CompiledTemplate, defaults: InAppDefaults, explain: Bool, depth: Int) {
        var storage: [UInt8] = []
        var starts = [0]
        var firstFragment: [Int] = []
        func add(_ key: String, _ value: JSONValue?) {
            if let value {
                storage += JSONWriter.encodedMember(key: key, value: value, formatting: .pretty, depth: depth + 1)
            }
            starts.append(storage.count)
        }
        for parameter in compiled.keys.indices {
            firstFragment.append(starts.count - 1)
            for resolution in compiled.resolutions(ofParameterAt: parameter) {
                let inAppDefault = defaults[resolution.key]
                if explain {
                    add(resolution.key, .object(Self.explanation(resolution, inAppDefault: inAppDefault)))
                } else {
                    add(resolution.key, (resolution.value ?? inAppDefault).map { .string($0.stringValue) })
                }
            }
        }
        let trailingStart = starts.count - 1
        for entry in defaults.entries where !compiled.containsKey(entry.key) {
            let value = JSONValue.string(entry.value.stringValue)
            add(entry.key, explain ? .object(ResolutionExplanation(notInTemplate: entry.value).json) : value)
        }
        self.storage = storage
        self.starts = starts
        self.firstFragment = firstFragment
        self.trailing = trailingStart..<(starts.count - 1)
    }

    /// Writes one result as a JSON object.
    func write(_ result: EvaluationResult, to writer: inout JSONWriter) {
        writer.beginObject()
        storage.withUnsafeBufferPointer { storage in
            starts.withUnsafeBufferPointer { starts in
                func writeFragment(_ fragment: Int) {
                    let start = starts[fragment]
                    let end = starts[fragment + 1]
                    if start < end { writer.encoded(UnsafeBufferPointer(rebasing: storage[start..<end])) }
                }
                firstFragment.withUnsafeBufferPointer { firstFragment in
                    result.forEachBranch { parameter, branch in writeFragment(firstFragment[parameter] + branch) }
                }
                for fragment in trailing { writeFragment(fragment) }
            }
        }
        writer.endObject()
    }

    /// The `--explain` object of one key: its value and where it came from
    /// (``ResolutionExplanation``, which the console's "Who gets what" page shows as well).
    static func explanation(_ resolution: ParameterResolution, inAppDefault: CoercedValue?) -> JSONObject {
        ResolutionExplanation(resolution, inAppDefault: inAppDefault).json
    }
}
