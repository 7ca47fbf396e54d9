import Testing

@testable import VaneAuthoring
@testable import VaneCore

/// The template's top-level `vane` object: what clients may decide and learn (issue #13).
@Suite struct TemplateSettingsTests {
    @Test func defaultsAreTheSafeOnesAndAreNotWritten() throws {
        let template = try ConfigTemplate(json: ["parameters": [:]])
        #expect(!template.settings.clientsMayPinDateTime)
        #expect(!template.settings.clientsReceiveDescriptions)
        #expect(template.json().objectValue?["vane"] == nil)
    }

    @Test func settingsAndUnknownMembersRoundTrip() throws {
        let json: JSONValue = [
            "parameters": [:],
            "vane": ["clientsMayPinDateTime": true, "clientsReceiveDescriptions": true, "futureSetting": 3],
        ]
        let template = try ConfigTemplate(json: json)
        #expect(template.settings.clientsMayPinDateTime)
        #expect(template.settings.clientsReceiveDescriptions)
        #expect(template.settings.unknownFields["futureSetting"] == 3)
        #expect(template.json() == json)
        #expect(template.unknownFields.isEmpty, "the vane object is not an unknown field")
    }

    @Test func wrongTypesAreReportedWithTheirPath() {
        let error = #expect(throws: DocumentError.self) {
            try ConfigTemplate(json: ["parameters": [:], "vane": ["clientsReceiveDescriptions": "yes"]])
        }
        #expect(error?.issues.map(\.path.description) == ["vane.clientsReceiveDescriptions"])
        let notAnObject = #expect(throws: DocumentError.self) {
            try ConfigTemplate(json: ["parameters": [:], "vane": [true]])
        }
        #expect(notAnObject?.issues.map(\.path.description) == ["vane"])
    }

    @Test func firebaseExportsLeaveTheSettingsOut() throws {
        let template = try ConfigTemplate(json: ["parameters": [:], "vane": ["clientsMayPinDateTime": true]])
        #expect(FirebaseExport.export(template).template.json().objectValue?["vane"] == nil)
    }
}
