import Testing

@testable import VaneCore

@Suite struct JSONNumberTests {
    @Test func keepsTextOfValidNumbers() {
        for text in ["0", "-0", "12", "-3.25", "1e9", "2E-7", "20000000"] {
            #expect(JSONNumber(text: text)?.text == text)
        }
    }

    @Test func rejectsInvalidNumberSyntax() {
        for text in ["", "-", "01", "1.", ".5", "+1", "1e", "0x10", "NaN", "Infinity", "1_000"] {
            #expect(JSONNumber(text: text) == nil, "\(text) should not be a JSON number")
        }
    }
}

@Suite struct JSONParserTests {
    @Test func keepsMemberOrderAndNumberText() throws {
        let json = try JSONValue.parse(#"{"b": 1, "a": [2.50, 3e2, -0], "c": {"z": null, "y": true}}"#)
        guard case .object(let object) = json else {
            Issue.record("expected an object")
            return
        }
        #expect(object.keys == ["b", "a", "c"])
        #expect(json.serialized() == #"{"b":1,"a":[2.50,3e2,-0],"c":{"z":null,"y":true}}"#)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let json = try JSONValue.parse(#"["a\"b\\c\/d\n\t\u00e9\ud83d\ude0a"]"#)
        #expect(json == .array([.string("a\"b\\c/d\n\té😊")]))
    }

    @Test func serializationRoundTripsStrings() throws {
        let original = JSONValue.array([.string("quote \" backslash \\ newline \n control \u{01} emoji 😊 ünïcødé")])
        #expect(try JSONValue.parse(original.serialized()) == original)
        #expect(try JSONValue.parse(original.serialized(.pretty)) == original)
    }

    @Test(arguments: [
        (#"{"a": 1,}"#, 1, 9, "expected a member name in double quotes, found '}'"),
        (#"{"a" 1}"#, 1, 6, "expected ':' after the member name \"a\""),
        ("[1, 2", 1, 6, "the document ends inside an array"),
        (#"{"a": "unterminated"#, 1, 7, "a string is not closed"),
        ("{\n  \"a\": tru\n}", 2, 8, "expected a value"),
        (#"{"a": 1, "a": 2}"#, 1, 10, "duplicate key \"a\""),
        ("", 1, 1, "the document is empty"),
        ("[1] [2]", 1, 5, "expected the end of the document"),
        (#"["\x"]"#, 1, 3, "unknown escape"),
        ("[01]", 1, 2, "is not a valid JSON number"),
        (#"["\ud800"]"#, 1, 9, "must be followed by a low surrogate"),
    ])
    func reportsWhereAndWhat(input: String, line: Int, column: Int, message: String) {
        #expect {
            try JSONValue.parse(input)
        } throws: { error in
            guard let error = error as? JSONParseError else { return false }
            return error.line == line && error.column == column && error.message.contains(message)
        }
    }

    @Test func namesThePathOfTheError() {
        #expect {
            try JSONValue.parse(#"{"parameters": {"welcome": {"defaultValue": [1, 2, }}}}"#)
        } throws: { error in
            (error as? JSONParseError)?.path.description == "parameters.welcome.defaultValue[2]"
        }
    }

    @Test func rejectsAbsurdNestingWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect {
            try JSONValue.parse(deep)
        } throws: { error in
            (error as? JSONParseError)?.message.contains("nested more than 256 levels") == true
        }
        let acceptable = String(repeating: "[", count: 200) + String(repeating: "]", count: 200)
        #expect(throws: Never.self) { try JSONValue.parse(acceptable) }
    }

    @Test func rejectsDocumentsOverTheSizeLimit() {
        let big = "[" + String(repeating: "1,", count: 1000) + "1]"
        #expect(throws: JSONParseError.self) { try JSONValue.parse(big, limits: JSONParseLimits(maximumBytes: 100)) }
    }

    @Test func rejectsInvalidUTF8AndRawControlCharacters() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse("[\"a\u{01}b\"]") }
    }

    @Test func everyTruncationOfAValidDocumentFailsCleanly() throws {
        let document = Array(#"{"a": [1, 2.5, "x\u00e9", {"b": null}], "c": true}"#.utf8)
        _ = try JSONValue.parse(document)
        for length in 0..<document.count {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(document[0..<length]) }
        }
    }

    @Test func garbageNeverCrashes() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,\ 0123456789.eE+-truefalsnu"#.utf8)
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
            _ = try? JSONValue.parse(bytes)
        }
    }
}

@Suite struct JSONWriterTests {
    @Test func escapesExactlyWhatRFC8259Requires() throws {
        let text = "\u{00}\u{01}\u{1F} \" \\ \n \r \t \u{08} \u{0C} / \u{7F} é – 😊 \u{2028}"
        let expected = #""\u0000\u0001\u001F \" \\ \n \r \t \b \f / "# + "\u{7F} é – 😊 \u{2028}\""
        #expect(JSONValue.string(text).serialized() == expected)
        #expect(JSONValue.string(text).serializedData() == Array(expected.utf8))
        var legacy = ""
        JSONValue.writeString(text, to: &legacy)
        #expect(legacy == expected)
        #expect(try JSONValue.parse(expected) == .string(text))
    }

    @Test func laysOutPrettyDocumentsWithTwoSpaces() {
        let document: JSONValue = ["a": [1, [], [:], ["b": "c"]], "d": [:], "e": ["f": .null, "g": true]]
        let pretty = """
            {
              "a": [
                1,
                [],
                {},
                {
                  "b": "c"
                }
              ],
              "d": {},
              "e": {
                "f": null,
                "g": true
              }
            }

            """
        #expect(document.serialized(.pretty) == pretty)
        #expect(document.serialized() == #"{"a":[1,[],{},{"b":"c"}],"d":{},"e":{"f":null,"g":true}}"#)
        #expect(JSONValue.array([]).serialized(.pretty) == "[]\n")
    }

    @Test func encodedMembersMatchWritingThemInPlace() {
        let value: JSONValue = ["value": "x \"y\"", "list": ["a", 2.50]]
        for formatting in [JSONFormatting.compact, .pretty] {
            var direct = JSONWriter(formatting: formatting)
            direct.beginArray()
            direct.beginObject()
            direct.key("first")
            direct.value(value)
            direct.key("second")
            direct.string("z")
            direct.endObject()
            direct.endArray()

            var assembled = JSONWriter(formatting: formatting)
            assembled.beginArray()
            assembled.beginObject()
            assembled.encoded(JSONWriter.encodedMember(key: "first", value: value, formatting: formatting, depth: 2))
            assembled.encoded(JSONWriter.encodedMember(key: "second", value: "z", formatting: formatting, depth: 2))
            assembled.endObject()
            assembled.endArray()
            #expect(assembled.bytes == direct.bytes)
            // A whole pretty document ends with a new line; the writer's bytes do not.
            let document = direct.bytes + (formatting == .pretty ? [UInt8(ascii: "\n")] : [])
            #expect(document == JSONValue.array([["first": value, "second": "z"]]).serializedData(formatting))
        }
    }

    @Test func writesDocumentsEndToEndAtTheTopLevel() {
        var writer = JSONWriter(formatting: .pretty, depth: 1)
        writer.value(["a": 1])
        let first = writer.bytes.count
        writer.value(["b": 2])
        #expect(String(decoding: writer.bytes[..<first], as: UTF8.self) == "{\n    \"a\": 1\n  }")
        #expect(String(decoding: writer.bytes[first...], as: UTF8.self) == "{\n    \"b\": 2\n  }")
    }
}

@Suite struct JSONObjectTests {
    @Test func setsReplacesAndRemovesMembersInOrder() {
        var object: JSONObject = ["a": 1, "b": 2, "c": 3]
        object["b"] = nil
        object["a"] = "x"
        object["d"] = .null
        #expect(object.keys == ["a", "c", "d"])
        #expect(object["a"] == "x")
        #expect(object["c"] == 3)
        #expect(object["d"] == .null)
        #expect(object["b"] == nil)
    }

    /// Small objects find keys by comparing them in turn and larger ones through an index made
    /// when they grow: both answer alike, through growth and removals on either side of it.
    @Test(arguments: [3, 8, 9, 40])
    func findsEveryKeyWhateverTheSize(count: Int) {
        var object = JSONObject()
        var expected: [(String, Int)] = []
        for index in 0..<count {
            object["key \(index)"] = .number(JSONNumber(index))
            expected.append(("key \(index)", index))
        }
        // Removing from the middle and the front moves later members' positions.
        for removed in [count / 2, 0] {
            object[expected[removed].0] = nil
            expected.remove(at: removed)
        }
        object["added"] = true
        object[expected[0].0] = "replaced"
        #expect(object.keys == expected.map(\.0) + ["added"])
        #expect(object[expected[0].0] == "replaced")
        for (key, value) in expected.dropFirst() { #expect(object[key] == .number(JSONNumber(value)), "\(key)") }
        #expect(object["added"] == true)
        #expect(object["key \(count)"] == nil)
        #expect(object.count == count - 1)
        // Equal members, equal objects, however each was built.
        let rebuilt = JSONObject(object.members)
        #expect(rebuilt == object && rebuilt.hashValue == object.hashValue)
    }

    /// A repeated key is refused by the parser in a small object and in an indexed one.
    @Test(arguments: [2, 12])
    func refusesARepeatedKeyInObjectsOfEverySize(count: Int) {
        let members = (0..<count).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        #expect(throws: JSONParseError.self) { try JSONValue.parse("{\(members), \"k\(count - 1)\": 0}") }
        #expect((try? JSONValue.parse("{\(members)}"))?.objectValue?.count == count)
    }
}

@Suite struct JSONPathTests {
    @Test func rendersDottedAndBracketedSteps() {
        let path = JSONPath.root.appending("parameters").appending("my key").appending("conditionalValues").appending(0)
        #expect(path.description == #"parameters["my key"].conditionalValues[0]"#)
        #expect(JSONPath.root.description == "$")
        #expect(JSONPath.root.appending("9lives").description == #"["9lives"]"#)
    }
}
