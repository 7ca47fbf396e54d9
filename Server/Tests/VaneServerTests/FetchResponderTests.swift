import Foundation
import NIOCore
import Testing
import VaneAuthoring
import VaneCore

@testable import VaneServer
@testable import VaneServerCore

/// `If-None-Match` tags as a plain list, read the way the HTTP adapter reads header fields.
struct TagList: EntityTagSource {
    var fieldValues: [String] = []

    func containsTag(where matches: (Substring) -> Bool) -> Bool {
        fieldValues.contains { EntityTags.contains(inFieldValue: $0, where: matches) }
    }
}

/// The fetch decision without HTTP: every branch of ``FetchResponder``.
@Suite(.timeLimit(.minutes(5))) struct FetchResponderTests {
    static let environment = EnvironmentKey(projectId: "app", environmentId: "prod")
    /// 2026-01-01T00:00:00Z, a launch instant for the scheduled template.
    static let launch = Date(timeIntervalSince1970: 1_767_225_600)
    static let now = launch.addingTimeInterval(-3600)

    /// A version ready to serve, built the way the publisher builds one.
    static func served(_ json: JSONValue, version: Int64) throws -> ServedTemplate {
        var template = try ConfigTemplate(json: json)
        template.version = TemplateVersion(versionNumber: String(version))
        let parsed = ParsedTemplate(template)
        return ServedTemplate(
            environment: environment,
            number: version,
            parsed: parsed,
            compiled: try CompiledTemplate(parsed),
            templateJSON: template.serialized(.compact)
        )
    }

    /// German users get their own greeting; `fr_text` is what version 2 adds for French users.
    static func greetings(french: Bool = false) -> JSONValue {
        var conditions: [JSONValue] = [["name": "de", "expression": "device.country in ['de']"]]
        var parameters: JSONObject = [
            "greeting": ["defaultValue": ["value": "Hello"], "conditionalValues": ["de": ["value": "Hallo"]]]
        ]
        if french {
            conditions.append(["name": "fr", "expression": "device.country in ['fr']"])
            parameters["fr_text"] = [
                "defaultValue": ["useInAppDefault": true], "conditionalValues": ["fr": ["value": "Salut"]],
            ]
        }
        return ["conditions": .array(conditions), "parameters": .object(parameters)]
    }

    /// `phase` turns from `before` to `after` at ``launch``.
    static let scheduled: JSONValue = [
        "conditions": [["name": "launched", "expression": "dateTime >= dateTime('2026-01-01T00:00:00', 'UTC')"]],
        "parameters": [
            "phase": ["defaultValue": ["value": "before"], "conditionalValues": ["launched": ["value": "after"]]]
        ],
    ]

    static func body(_ country: String, etag: String? = nil) -> [UInt8] {
        var object: JSONObject = ["context": ["randomizationId": "user-1", "device.country": .string(country)]]
        if let etag { object["etag"] = .string(etag) }
        return Array(JSONValue.object(object).serialized().utf8)
    }

    static func respond(
        _ body: [UInt8],
        tags: [String] = [],
        at now: Date = now,
        served: ServedTemplate?
    ) throws(RequestBodyError) -> FetchOutcome {
        try FetchResponder.respond(body: body, ifNoneMatch: TagList(fieldValues: tags), now: now, served: served)
    }

    static func update(_ outcome: FetchOutcome) throws -> (etag: String, entries: JSONObject) {
        guard case .update(let etag, let body) = outcome else {
            throw TestSetupError("expected UPDATE, got \(outcome)")
        }
        let json = try JSONValue.parse(body.readableBytesView)
        #expect(json.objectValue?["state"] == "UPDATE")
        return (etag, json.objectValue?["entries"]?.objectValue ?? [:])
    }

    @Test func firstFetchIsAnUpdateWithAnETag() throws {
        let served = try Self.served(Self.greetings(), version: 1)
        let (etag, entries) = try Self.update(Self.respond(Self.body("de"), served: served))
        #expect(entries["greeting"] == "Hallo")
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        #expect(ResultETag(EntityTags.bare(Substring(etag)))?.proof != nil)
    }

    @Test func aProofForTheSameBodyAndVersionIsAnsweredAsSent() throws {
        let served = try Self.served(Self.greetings(), version: 1)
        let (etag, _) = try Self.update(Self.respond(Self.body("de"), served: served))
        // Weak, in a list, with blanks: the tag that holds is echoed as this server writes it.
        let outcome = try Self.respond(Self.body("de"), tags: [#""0123", W/\#(etag) "#], served: served)
        #expect(outcome == .notModified(etag: etag))
        // Another body with the same values: the proof does not hold, the values do; a new ETag.
        let other = try Self.respond(
            Array(#"{"context":{"device.country":"de","randomizationId":"user-1"}}"#.utf8),
            tags: [etag],
            served: served
        )
        guard case .notModified(let fresh) = other else { throw TestSetupError("expected 304, got \(other)") }
        #expect(fresh != etag)
    }

    @Test func aProofEndsWhenAScheduledChangeComes() throws {
        let served = try Self.served(Self.scheduled, version: 1)
        let (etag, entries) = try Self.update(Self.respond(Self.body("us"), served: served))
        #expect(entries["phase"] == "before")
        #expect(etag.hasSuffix(".\(Int64(Self.launch.timeIntervalSince1970 * 1000))\""))
        let early = Self.launch.addingTimeInterval(-1)
        #expect(try Self.respond(Self.body("us"), tags: [etag], at: early, served: served) == .notModified(etag: etag))
        let (_, later) = try Self.update(Self.respond(Self.body("us"), tags: [etag], at: Self.launch, served: served))
        #expect(later["phase"] == "after")
    }

    @Test func aStarMatchesWithTheNewETag() throws {
        let served = try Self.served(Self.greetings(), version: 1)
        let (etag, _) = try Self.update(Self.respond(Self.body("de"), served: served))
        #expect(try Self.respond(Self.body("de"), tags: ["*"], served: served) == .notModified(etag: etag))
    }

    @Test func sameValuesAcrossVersionsAre304WithAFreshETag() throws {
        let first = try Self.served(Self.greetings(), version: 1)
        let second = try Self.served(Self.greetings(french: true), version: 2)
        let (old, _) = try Self.update(Self.respond(Self.body("de"), served: first))
        let (expected, _) = try Self.update(Self.respond(Self.body("de"), served: second))
        #expect(expected != old)
        #expect(try Self.respond(Self.body("de"), tags: [old], served: second) == .notModified(etag: expected))
        // A French user's values did change.
        let (french, _) = try Self.update(Self.respond(Self.body("fr"), served: first))
        let (_, entries) = try Self.update(Self.respond(Self.body("fr"), tags: [french], served: second))
        #expect(entries["fr_text"] == "Salut")
    }

    @Test func aBodyETagWithTheSameValuesIsNoChange() throws {
        let first = try Self.served(Self.greetings(), version: 1)
        let second = try Self.served(Self.greetings(french: true), version: 2)
        let (old, _) = try Self.update(Self.respond(Self.body("de"), served: first))
        let body = Self.body("de", etag: old)
        let outcome = try Self.respond(body, tags: ["\"stale\""], served: second)
        guard case .noChange(let etag, let version) = outcome else {
            throw TestSetupError("expected NO_CHANGE, got \(outcome)")
        }
        #expect(version == 2)
        #expect(etag != old)
        // The new ETag holds for this body: the next poll is the fast path.
        #expect(try Self.respond(body, tags: [etag], served: second) == .notModified(etag: etag))
    }

    @Test func aBadBodyIsRefusedEvenWithNothingPublished() throws {
        #expect(try Self.respond(Self.body("de"), served: nil) == .noTemplate)
        #expect(throws: RequestBodyError(message: "the request body is empty; expected a JSON object")) {
            try Self.respond([], served: nil)
        }
        #expect(throws: RequestBodyError.self) { try Self.respond(Array("{".utf8), served: nil) }
        #expect(throws: RequestBodyError(message: "expected a JSON object, found an array")) {
            try Self.respond(Array("[]".utf8), served: nil)
        }
        do {
            _ = try Self.respond(Array(#"{"context":{},"etag":7}"#.utf8), served: nil)
            Issue.record("an etag that is not a string was accepted")
        } catch {
            #expect(error.message == "\"etag\" must be a string")
            #expect(error.details.map(\.path.description) == ["etag"])
        }
        do {
            _ = try Self.respond(Array(#"{"context":{"randomizationId":7}}"#.utf8), served: nil)
            Issue.record("a malformed context was accepted")
        } catch {
            #expect(error.message.hasPrefix("the context is malformed"))
            #expect(!error.details.isEmpty)
        }
    }

    /// A long `If-None-Match` list costs what a short one does: only the first
    /// ``FetchResponder/maximumTagsExamined`` tags are looked at (1,100 tags once cost 16× the
    /// time of one, each re-hashing the body).
    @Test func onlyTheFirstFewIfNoneMatchTagsAreExamined() throws {
        let served = try Self.served(Self.greetings(), version: 1)
        let body = Self.body("de")
        let (etag, _) = try Self.update(try Self.respond(body, served: served))
        // Right values, wrong proof: each would be hashed with the body to be checked.
        let values = String(etag.dropFirst().prefix(32))
        let decoys = (0..<1_100).map { "\"\(values).\(String(format: "%032x", $0))\"" }
        #expect(try Self.respond(body, tags: [etag] + decoys, served: served) == .notModified(etag: etag))
        // The current tag after the bound is not seen; the decoys' values still name this
        // result, so the answer is a 304 with a fresh ETag, decided by evaluating once.
        let late = try Self.respond(body, tags: [decoys.joined(separator: ", "), etag], served: served)
        #expect(late == .notModified(etag: etag))
        // Tags naming other values, the current one past the bound: a full answer.
        let others = (0..<1_100).map { "\"\(String(format: "%032x", $0)).\(String(format: "%032x", $0))\"" }
        let full = try Self.respond(body, tags: others + [etag], served: served)
        #expect(try Self.update(full).etag == etag)
    }

    /// An `UPDATE` body is measured, then written (``ServedTemplate/updateResponse(for:)``): these
    /// are its exact bytes with entries and metadata, with parameters that send nothing, and with none.
    @Test func anUpdateBodyIsItsEntriesAndMetadataExactly() throws {
        let template: JSONValue = [
            "conditions": [["name": "fr", "expression": "device.country in ['fr']"]],
            "parameters": [
                "greeting": ["defaultValue": ["value": "Hello"], "vane": ["title": "Greeting"]],
                "fr_text": [
                    "defaultValue": ["useInAppDefault": true], "conditionalValues": ["fr": ["value": "Salut"]],
                ],
                "plain": ["defaultValue": ["value": "x\"y"]],
            ],
        ]
        let served = try Self.served(template, version: 3)
        func text(_ country: String) throws -> String {
            guard case .update(_, let body) = try Self.respond(Self.body(country), served: served) else {
                throw TestSetupError("expected UPDATE")
            }
            return String(buffer: body)
        }
        let metadata = #""metadata":{"greeting":{"title":"Greeting"}}}"#
        #expect(
            try text("de")
                == #"{"state":"UPDATE","entries":{"greeting":"Hello","plain":"x\"y"},"templateVersion":"3","#
                + metadata
        )
        #expect(
            try text("fr")
                == #"{"state":"UPDATE","entries":{"greeting":"Hello","fr_text":"Salut","plain":"x\"y"},"templateVersion":"3","#
                + metadata
        )
        let empty = try Self.served(["parameters": ["unset": ["defaultValue": ["useInAppDefault": true]]]], version: 1)
        guard case .update(_, let body) = try Self.respond(Self.body("de"), served: empty) else {
            throw TestSetupError("expected UPDATE")
        }
        #expect(String(buffer: body) == #"{"state":"UPDATE","entries":{},"templateVersion":"1","metadata":{}}"#)
    }

    /// The ETag's header value in each of its forms, written in place (``ResultETag/headerValue``).
    @Test func anETagIsWrittenInEachForm() throws {
        let values = Digest128(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210)
        var etag = ResultETag(values: values, scope: [1, 2, 3], until: nil, body: .zero)
        let proof = try #require(etag.proof).hex
        #expect(proof.count == 32 && proof.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(etag.headerValue == "\"0123456789abcdeffedcba9876543210.\(proof)\"")
        etag.until = 1_800_000_000_123
        #expect(etag.headerValue == "\"0123456789abcdeffedcba9876543210.\(proof).1800000000123\"")
        etag.proof = nil
        etag.until = nil
        #expect(etag.headerValue == "\"0123456789abcdeffedcba9876543210\"")
        #expect(Digest128.zero.hex == String(repeating: "0", count: 32))
    }
}
