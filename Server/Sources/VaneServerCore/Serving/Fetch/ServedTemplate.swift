import Crypto
package import NIOCore
package import Synchronization
package import VaneCore

/// A published template ready to serve: compiled once, with everything a response needs
/// precomputed, so serving never touches the database.
package final class ServedTemplate: Sendable {
    /// Which environment.
    package let environment: EnvironmentKey
    /// The version number.
    package let versionNumber: Int64
    /// The compiled template.
    package let compiled: CompiledTemplate
    /// The template with its conditions parsed, for the console to reuse (a draft's conditions
    /// are mostly the live version's).
    package let parsed: ParsedTemplate
    /// The admin ETag, `etag-{project}-{environment}-{version}`.
    package let etag: String
    /// The template JSON, for `template/compiled`.
    package let templateJSON: String
    /// Per key with Vane metadata: `{"realtime", "title", "category", "allowedValues"}` for fetch
    /// responses, plus `"description"` when the template's settings let clients receive it.
    package let metadata: [String: JSONValue]
    /// What clients may decide and learn (the template's top-level `vane` object).
    package let settings: TemplateSettings
    /// Per key: its declared value type.
    package let valueTypes: [String: ParameterValueType]
    /// Per key: whether any of its conditional values can win (false: the value is static).
    package let hasConditionalValues: Set<String>
    /// Conditions that contain a `percent` rule (their matches are splits, for OFREP).
    package let percentConditions: Set<String>
    /// Per parameter: the position of its branch 0 in the per-branch tables (see
    /// ``EvaluationResult/forEachBranch(_:)``).
    private let branchStarts: [Int]
    /// Per branch: the UTF-8 of `"key":"value"`, empty when the branch sends nothing, so a fetch
    /// response is assembled from ready-made pieces.
    private let entryFragments: ByteFragments
    /// Per branch: the UTF-8 of `"key":{metadata}` as a client that got this branch receives it,
    /// empty when it receives none. The same for every branch of a key unless a running
    /// experiment controls it: then each branch that is a variant names it.
    private let metadataFragments: ByteFragments
    /// The running experiments this version is served with (``ServingCache`` keeps it current).
    package let experiments: ServedExperiments
    /// Per branch: the digest of what it adds to a response, its entry and its key's metadata;
    /// zero when it sends nothing.
    private let branchDigests: [Digest128]
    /// The bytes of an `UPDATE` body between its entries and its metadata (they name the version).
    private let updateMiddle: [UInt8]
    /// The most bytes an `UPDATE` body can have: each parameter's longest entry and metadata with
    /// their commas, and the fixed parts. A response is written into a buffer of this size, in one walk
    /// over the entries and one over the metadata.
    private let maximumUpdateBytes: Int
    /// What a fetch ETag's proof binds besides the request (see ``ResultETag``), encoded once: a
    /// domain tag, the environment, the version number, the SHA-256 of the template and that of
    /// the running experiments, so a proof cannot outlive its template even where version numbers
    /// start again (a new database), nor an experiment's start or stop.
    package let proofScope: [UInt8]
    /// Whether a fetch answered with this version on this node was recorded in the
    /// ``ServedVersionLog``: one relaxed load per fetch after the first.
    package let fetchRecorded = Atomic<Bool>(false)

    /// Parses (once) and compiles a stored version, to serve with `experiments`.
    /// - Throws: ``TemplateCompilationError`` for a stored template that no longer compiles.
    package convenience init(
        _ version: StoredVersion,
        experiments: ServedExperiments = .none
    ) throws(TemplateCompilationError) {
        let parsed = ParsedTemplate(version.template)
        try self.init(
            environment: EnvironmentKey(projectId: version.projectId, environmentId: version.environmentId),
            number: version.number,
            parsed: parsed,
            compiled: CompiledTemplate(parsed),
            templateJSON: version.templateJSON,
            experiments: experiments
        )
    }

    /// The same version served with other running experiments: nothing is parsed or compiled
    /// again, only the response fragments are made anew.
    package func serving(_ experiments: ServedExperiments) -> ServedTemplate {
        ServedTemplate(
            environment: environment,
            number: versionNumber,
            parsed: parsed,
            compiled: compiled,
            templateJSON: templateJSON,
            experiments: experiments
        )
    }

    /// A version ready to serve, from its parsed and compiled forms and its stored text.
    /// Nothing here parses a condition again.
    package init(
        environment: EnvironmentKey,
        number: Int64,
        parsed: ParsedTemplate,
        compiled: CompiledTemplate,
        templateJSON: String,
        experiments: ServedExperiments = .none
    ) {
        self.environment = environment
        versionNumber = number
        self.compiled = compiled
        self.parsed = parsed
        etag = ServedTemplate.etag(environment, version: number)
        self.templateJSON = templateJSON
        proofScope =
            Array("vane-fetch-etag-1\u{0}\(environment.projectId)\u{0}\(environment.environmentId)\u{0}".utf8)
            + withUnsafeBytes(of: number.littleEndian) { Array($0) }
            + Array(SHA256.hash(data: Array(templateJSON.utf8))) + experiments.digest
        self.experiments = experiments
        var metadata: [String: JSONValue] = [:]
        var valueTypes: [String: ParameterValueType] = [:]
        var conditional = Set<String>()
        for parameter in parsed.template.allParameters {
            // Exactly what the docs promise clients (KeyMetadata's fields): never `allowSecrets` or
            // unknown members of the template's `vane` object. The description helps a debug menu
            // explain keys the app did not declare, but may say more than an app's users should
            // read, so it goes out only where the template's settings allow it.
            var details = parameter.keyMetadata
            if details.description?.isEmpty == true || !parsed.template.settings.clientsReceiveDescriptions {
                details.description = nil
            }
            if !details.isEmpty { metadata[parameter.key] = .object(details.json()) }
            valueTypes[parameter.key] = parameter.valueType ?? .string
            if !parameter.conditionalValues.isEmpty { conditional.insert(parameter.key) }
        }
        self.metadata = metadata
        self.settings = parsed.template.settings
        self.valueTypes = valueTypes
        self.hasConditionalValues = conditional
        percentConditions = Set(parsed.conditions.filter(\.containsPercent).map(\.name))
        var branchStarts: [Int] = []
        var entryFragments = ByteFragments()
        var metadataFragments = ByteFragments()
        var branchDigests: [Digest128] = []
        for (index, key) in compiled.keys.enumerated() {
            var quotedKey = ""
            JSONValue.writeString(key, to: &quotedKey)
            let declared = metadata[key].map { Array((quotedKey + ":" + $0.serialized()).utf8) } ?? []
            branchStarts.append(branchDigests.count)
            let resolutions = compiled.resolutions(ofParameterAt: index)
            for (branch, outcome) in compiled.outcomes(ofParameterAt: index).enumerated() {
                var metadataFragment = declared
                let assignment = experiments.assignment(forKey: key, condition: resolutions[branch].matchedCondition)
                if let assignment {
                    var details = metadata[key]?.objectValue ?? [:]
                    details["experiment"] = .object(assignment.json())
                    metadataFragment = Array((quotedKey + ":" + JSONValue.object(details).serialized()).utf8)
                }
                guard let value = outcome.value else {
                    // The app reads its in-app default; an experiment's variant (a control that
                    // keeps the app's own value) still tells it so, to record the exposure.
                    entryFragments.append([])
                    metadataFragments.append(assignment == nil ? [] : metadataFragment)
                    branchDigests.append(assignment == nil ? .zero : Digest128(hashing: [0] + metadataFragment))
                    continue
                }
                var text = quotedKey + ":"
                JSONValue.writeString(value.stringValue, to: &text)
                let entry = Array(text.utf8)
                entryFragments.append(entry)
                metadataFragments.append(metadataFragment)
                // The metadata is part of what the branch sends; the separator keeps the two apart.
                branchDigests.append(Digest128(hashing: entry + [0] + metadataFragment))
            }
        }
        self.branchStarts = branchStarts
        self.entryFragments = entryFragments
        self.metadataFragments = metadataFragments
        self.branchDigests = branchDigests
        let middle = FetchResponseBody.updateMiddle(templateVersion: number)
        updateMiddle = middle
        var maximum = FetchResponseBody.updatePrefix.count + middle.count + 3  // `{`, `}}`
        entryFragments.withReader { entries in
            metadataFragments.withReader { metadata in
                for (parameter, start) in branchStarts.enumerated() {
                    let end = parameter + 1 < branchStarts.count ? branchStarts[parameter + 1] : branchDigests.count
                    // The longest of its branches' entries and metadata, each with a comma.
                    maximum += ((start..<end).map(entries.count(at:)).max() ?? 0) + 1
                    maximum += ((start..<end).map(metadata.count(at:)).max() ?? 0) + 1
                }
            }
        }
        maximumUpdateBytes = maximum
    }

    /// The digest of what `result` sends, its entries and their keys' metadata: the `values` of
    /// its ``ResultETag``. Two additions per parameter; no bytes are hashed per request.
    package func valuesDigest(of result: EvaluationResult) -> Digest128 {
        var digest = Digest128.zero
        branchStarts.withUnsafeBufferPointer { starts in
            branchDigests.withUnsafeBufferPointer { digests in
                result.forEachBranch { parameter, branch in digest.add(digests[starts[parameter] + branch]) }
            }
        }
        return digest
    }

    /// The `UPDATE` response for `result`, assembled from the pieces encoded at publish time, each
    /// copied once into a buffer of ``maximumUpdateBytes`` (it was an array grown as it went, its
    /// metadata a second one appended to it, and the whole copied again into the response's buffer).
    package func updateResponse(for result: EvaluationResult) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: maximumUpdateBytes)
        _ = branchStarts.withUnsafeBufferPointer { starts in
            entryFragments.withReader { entries in
                metadataFragments.withReader { metadata in
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maximumUpdateBytes) { output in
                        var writer = ByteWriter(output)
                        FetchResponseBody.updatePrefix.withUnsafeBytes { writer.write($0) }
                        Self.writeBranches(of: result, from: entries, starts: starts, to: &writer)
                        updateMiddle.withUnsafeBytes { writer.write($0) }
                        writer.write(UInt8(ascii: "{"))
                        Self.writeBranches(of: result, from: metadata, starts: starts, to: &writer)
                        writer.write(UInt8(ascii: "}"))
                        writer.write(UInt8(ascii: "}"))
                        return writer.count
                    }
                }
            }
        }
        return buffer
    }

    /// Writes each branch's fragment of `result`, the non-empty ones comma-separated.
    ///
    /// A function of its own, the writer passed `inout`: a local function capturing the writer
    /// made every write check its exclusive access at run time (1.5 % of a full fetch's time).
    private static func writeBranches(
        of result: EvaluationResult,
        from fragments: ByteFragments.Reader,
        starts: UnsafeBufferPointer<Int>,
        to writer: inout ByteWriter
    ) {
        var first = true
        result.forEachBranch { parameter, branch in
            let fragment = fragments[starts[parameter] + branch]
            guard !fragment.isEmpty else { return }
            if !first { writer.write(UInt8(ascii: ",")) }
            first = false
            writer.write(fragment)
        }
    }

    /// `etag-{project}-{environment}-{version}`: changes with every publish.
    package static func etag(_ environment: EnvironmentKey, version: Int64) -> String {
        "etag-\(environment.projectId)-\(environment.environmentId)-\(version)"
    }

    /// A strong ETag for one context's OFREP result: it changes only when that result changes.
    package static func resultETag(_ text: String) -> String {
        "\"" + Digest128(hashing: Array(text.utf8)).hex + "\""
    }
}

/// Byte strings stored end to end in one buffer, so reading one costs no reference counting.
package struct ByteFragments: Sendable {
    private var bytes: [UInt8] = []
    /// Where each fragment ends in `bytes`; it starts where the one before ends.
    private var ends: [Int] = []

    /// Adds a fragment at the next index.
    package mutating func append(_ fragment: [UInt8]) {
        bytes.append(contentsOf: fragment)
        ends.append(bytes.count)
    }

    /// Reads the fragments through `body`, without reference counting per fragment.
    package func withReader<Result>(_ body: (Reader) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes { bytes in
            try ends.withUnsafeBufferPointer { ends in try body(Reader(bytes: bytes, ends: ends)) }
        }
    }

    /// The fragments, valid inside ``withReader(_:)``.
    package struct Reader {
        fileprivate let bytes: UnsafeRawBufferPointer
        fileprivate let ends: UnsafeBufferPointer<Int>

        /// The length of the fragment at `index`.
        package func count(at index: Int) -> Int {
            ends[index] - (index == 0 ? 0 : ends[index - 1])
        }

        /// The fragment at `index`.
        package subscript(index: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
        }
    }
}

/// Copies bytes one after another into memory of a size measured beforehand.
private struct ByteWriter {
    private let output: UnsafeMutableRawBufferPointer
    /// How many bytes are written.
    private(set) var count = 0

    init(_ output: UnsafeMutableRawBufferPointer) {
        self.output = output
    }

    mutating func write(_ source: UnsafeRawBufferPointer) {
        // A wrong measurement must stop here, not write past the buffer.
        precondition(count + source.count <= output.count, "a response outgrew its measured size")
        guard let from = source.baseAddress, let to = output.baseAddress else { return }
        (to + count).copyMemory(from: from, byteCount: source.count)
        count += source.count
    }

    mutating func write(_ byte: UInt8) {
        precondition(count < output.count, "a response outgrew its measured size")
        output[count] = byte
        count += 1
    }
}

extension ServedTemplate {
    /// A client's context as this template lets it count: without `dateTime` unless the
    /// template's settings let clients pin the time, so `dateTime` rules run on the server's clock.
    package func clientContext(_ context: EvaluationContext) -> EvaluationContext {
        guard !settings.clientsMayPinDateTime, context[ConditionElement.dateTime] != nil else { return context }
        var context = context
        context[ConditionElement.dateTime] = nil
        return context
    }
}
