import Testing

@testable import VaneCore

/// The HTTP API's shapes, shared by the server, the SDK and the `vane` tool.
@Suite struct WireContractTests {
    @Test func environmentPathsEncodeEachIdAsOneSegment() {
        let plain = EnvironmentAddress(project: "shop", environment: "production")
        #expect(plain.path() == "/v1/projects/shop/environments/production")
        #expect(plain.path(.fetch) == "/v1/projects/shop/environments/production/fetch")
        #expect(plain.path(.compiledTemplate) == "/v1/projects/shop/environments/production/template/compiled")
        // A slash, a space, a percent sign, a question mark and non-ASCII stay inside their segment.
        let odd = EnvironmentAddress(project: "a/b c", environment: "100%?ü")
        #expect(odd.path(.stream) == "/v1/projects/a%2Fb%20c/environments/100%25%3F%C3%BC/stream")
        #expect(EnvironmentAddress.pathSegment("key-1_x.y~z") == "key-1_x.y~z")
        #expect(odd.description == "a/b c/100%?ü")
    }

    @Test func fetchBodiesRoundTripInEveryState() throws {
        let update = FetchResponseBody(
            state: .update,
            entries: ["banner": "Hallo", "limit": "3"],
            metadata: ["banner": KeyMetadata(title: "Banner", category: "Home", realtime: true)],
            templateVersion: 12
        )
        let noChange = FetchResponseBody(state: .noChange, templateVersion: 12)
        let noTemplate = FetchResponseBody(state: .noTemplate, templateVersion: 0)
        for body in [update, noChange, noTemplate] {
            #expect(try FetchResponseBody(json: body.json()) == body)
        }
        #expect(
            update.json().serialized(.compact)
                == #"{"state":"UPDATE","entries":{"banner":"Hallo","limit":"3"},"templateVersion":"12","metadata":{"banner":{"title":"Banner","category":"Home","realtime":true}}}"#
        )
    }

    @Test func theServersPreassembledBodiesReadBackAsTheyMean() throws {
        // The server writes UPDATE bodies from these fragments; a client must read them back.
        var bytes = FetchResponseBody.updatePrefix
        bytes += Array(#""banner":"Hallo""#.utf8)
        bytes += FetchResponseBody.updateMiddle(templateVersion: 7)
        bytes += Array(#"{"banner":{"title":"Banner"}}}"#.utf8)
        let update = try FetchResponseBody(json: JSONValue.parse(bytes))
        #expect(
            update
                == FetchResponseBody(
                    state: .update,
                    entries: ["banner": "Hallo"],
                    metadata: ["banner": KeyMetadata(title: "Banner")],
                    templateVersion: 7
                )
        )
        #expect(
            try FetchResponseBody(json: JSONValue.parse(FetchResponseBody.noChangeBytes(templateVersion: 7)))
                == FetchResponseBody(state: .noChange, templateVersion: 7)
        )
        #expect(
            try FetchResponseBody(json: JSONValue.parse(FetchResponseBody.noTemplateBytes))
                == FetchResponseBody(state: .noTemplate, templateVersion: 0)
        )
    }

    @Test func malformedBodiesNameThePathAndWhatWasExpected() {
        let cases: [(JSONValue, String)] = [
            (
                ["state": "UPDATE", "entries": ["limit": 3], "templateVersion": "1"],
                "entries.limit: expected a string, found a number"
            ),
            (["state": "UPDATE", "templateVersion": "1"], "entries: expected an object, found nothing"),
            (["state": "MAYBE", "entries": [:]], "state: expected UPDATE, NO_CHANGE or NO_TEMPLATE, found MAYBE"),
            (
                ["state": "UPDATE", "entries": [:], "templateVersion": "v2"],
                "templateVersion: expected a version number, found a string"
            ),
            (["UPDATE"], "$: expected a JSON object, found an array"),
        ]
        for (json, message) in cases {
            #expect(throws: WireFormatError.self) { try FetchResponseBody(json: json) }
            do {
                _ = try FetchResponseBody(json: json)
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test func versionNumbersAreStringsOnTheWireAndEitherFormReads() {
        #expect(TemplateVersionNumber.json(9_007_199_254_740_993) == .string("9007199254740993"))
        #expect(TemplateVersionNumber.read(.string("42")) == 42)
        #expect(TemplateVersionNumber.read(42) == 42)
        #expect(TemplateVersionNumber.read(nil) == 0)
        #expect(TemplateVersionNumber.read(.string("4.2")) == nil)
        #expect(TemplateVersionNumber.read(.bool(true)) == nil)
    }

    @Test func versionEventsReadTheirDataOrFallBackToTheirId() {
        let event = VersionEvent(templateVersion: 5)
        #expect(event.text == "id: 5\nevent: version\ndata: {\"templateVersion\":\"5\"}\n\n")
        #expect(VersionEvent(data: #"{"templateVersion":"5"}"#, lastEventId: "") == event)
        #expect(VersionEvent(data: #"{"templateVersion":5}"#, lastEventId: "3") == event)
        #expect(VersionEvent(data: "not json", lastEventId: "5") == event)
        #expect(VersionEvent(data: #"{"templateVersion":"0"}"#, lastEventId: "") == nil)
        #expect(VersionEvent(data: "", lastEventId: "") == nil)
    }

    @Test func errorEnvelopesRoundTripAndOnlyEnvelopesRead() {
        let envelope = ErrorEnvelope(
            code: 400,
            status: "INVALID_ARGUMENT",
            message: "the template has 1 problem",
            details: [.init(path: "$.conditions[0]", rule: "condition-syntax", severity: "error", message: "column 3")]
        )
        #expect(ErrorEnvelope(json: envelope.json()) == envelope)
        #expect(ErrorEnvelope(bytes: Array("<html>Bad Gateway</html>".utf8)) == nil)
        #expect(ErrorEnvelope(json: ["error": ["code": 500]]) == nil)
    }

    @Test func keyMetadataReadsLenientlyAndFillsFromADeclaration() {
        let read = KeyMetadata(json: [
            "title": "Banner", "category": 3, "allowedValues": ["a", 1, "b"], "realtime": "yes",
        ])
        #expect(read == KeyMetadata(title: "Banner", allowedValues: ["a", "b"]))
        #expect(KeyMetadata(json: read.json()) == read)
        #expect(KeyMetadata().isEmpty)
        #expect(KeyMetadata().json().isEmpty)
        let declared = KeyMetadata(title: "Declared", description: "Why", category: "Home", allowedValues: ["x"])
        #expect(
            read.filling(from: declared)
                == KeyMetadata(title: "Banner", description: "Why", category: "Home", allowedValues: ["a", "b"])
        )
        #expect(read.filling(from: nil) == read)
    }

    @Test func aTemplateParameterDescribesItselfWithOneModel() throws {
        let template = try ConfigTemplate(json: [
            "parameters": [
                "banner": [
                    "defaultValue": ["value": "Hi"], "description": "The home banner",
                    "vane": ["title": "Banner", "category": "Home", "realtime": true, "allowSecrets": true],
                ]
            ]
        ])
        let parameter = try #require(template.parameters.first)
        #expect(
            parameter.keyMetadata
                == KeyMetadata(title: "Banner", description: "The home banner", category: "Home", realtime: true)
        )
    }
}
