import Testing
import VaneCodegen
import VaneCore

/// Reading the three flags-file formats, and the errors that name the flag.
@Suite struct FlagsFileTests {
    func read(_ text: String) throws -> FlagsFile { try FlagsFile(data: Array(text.utf8)) }

    func problems(_ text: String) -> [String] {
        do {
            _ = try read(text)
            return []
        } catch let error as DocumentError {
            return error.issues.map(\.description)
        } catch {
            return ["\(error)"]
        }
    }

    @Test func vaneFlagsFileWithEveryType() throws {
        let file = try read(
            #"""
            {"flags": [
              {"key": "a", "type": "bool", "default": true, "realtime": true, "title": "A", "category": "C"},
              {"key": "b", "type": "int", "default": 2e1},
              {"key": "c", "type": "double", "default": 0.5},
              {"key": "d", "type": "string", "default": "x", "allowedValues": ["x", "y"]},
              {"key": "e", "type": "json", "default": {"k": [1]}, "swiftType": "Layout"},
              {"key": "f", "type": "experiment", "variants": ["control", "b"]}
            ]}
            """#
        )
        #expect(file.flags.map(\.key) == ["a", "b", "c", "d", "e", "f"])
        #expect(file.flags.map(\.type.name) == ["bool", "int", "double", "string", "json", "experiment"])
        #expect(file.flags.map(\.defaultValue) == ["true", "2e1", "0.5", "x", #"{"k":[1]}"#, "control"])
        #expect(file.flags[0].realtime && file.flags[0].title == "A" && file.flags[0].category == "C")
        #expect(file.flags[3].allowedValues == ["x", "y"])
        #expect(file.flags[4].swiftType == "Layout")
        #expect(file.flags[5].allowedValues == ["control", "b"], "variants are the allowed values")
    }

    @Test func theSeedsHandWrittenListTakesTypesFromValues() throws {
        let file = try read(
            #"[{"name": "on", "description": "D", "value": true}, {"name": "n", "value": 3}, {"name": "x", "value": 1.5}, {"name": "s", "value": "t"}, {"name": "j", "value": {"a": 1}}]"#
        )
        #expect(file.flags.map(\.type.name) == ["bool", "int", "double", "string", "json"])
        #expect(file.flags[0].description == "D")
        #expect(file.flags[4].defaultValue == #"{"a":1}"#)
    }

    @Test func aTemplateTakesTypesFromValueType() throws {
        let file = try read(
            #"""
            {"parameters": {
              "flag": {"defaultValue": {"value": "true"}, "valueType": "BOOLEAN", "description": "F",
                       "vane": {"title": "Flag", "category": "Cat", "realtime": true}},
              "limit": {"defaultValue": {"value": "5"}, "valueType": "NUMBER"},
              "layout": {"defaultValue": {"value": "{}"}, "valueType": "JSON"},
              "text": {"defaultValue": {"useInAppDefault": true}}
            }}
            """#
        )
        #expect(file.flags.map(\.key) == ["flag", "limit", "layout", "text"])
        #expect(file.flags.map(\.type.name) == ["bool", "double", "json", "string"])
        #expect(file.flags[0].title == "Flag" && file.flags[0].realtime && file.flags[0].description == "F")
        #expect(file.flags[3].defaultValue == "", "no explicit default: the type's empty value")
    }

    @Test func everyProblemNamesItsFlagAndPath() {
        let found = problems(
            #"""
            {"flags": [
              {"key": "a", "type": "float", "default": 1},
              {"key": "b", "type": "bool", "default": "yes"},
              {"key": "c", "type": "int", "default": 1.5},
              {"key": "d", "type": "string", "default": "z", "allowedValues": ["x"]},
              {"key": "e", "type": "experiment", "variants": ["x"], "default": "y"},
              {"key": "f", "type": "experiment"},
              {"key": "b", "type": "bool", "default": false},
              {"type": "bool", "default": false},
              {"key": "g", "type": "json", "default": "text"},
              {"key": "h", "type": "double"}
            ]}
            """#
        )
        let expected = [
            #"flags[0].type: flag "a" has the unknown type "float"; expected one of bool, int, double, string, json, experiment"#,
            #"flags[1].default: flag "b" is a bool: its default must be true or false, found a string"#,
            #"flags[2].default: flag "c" is an int: its default must be a whole number, found a number"#,
            #"flags[3].default: flag "d": the default "z" is not one of its allowedValues"#,
            #"flags[4].default: flag "e": the default must be one of its variants (x), found a string"#,
            #"flags[5].variants: flag "f" is an experiment: list its variants"#,
            #"flags[7].key: every flag needs a "key""#,
            #"flags[8].default: flag "g" is json: its default must be an object or a list, found a string"#,
            #"flags[9].default: flag "h" is a double: its default must be a number, and it has none"#,
            #"flags[6]: flag "b" is defined twice (first at flags[1])"#,
        ]
        #expect(found.count == expected.count, "\(found)")
        for (line, fragment) in zip(found, expected) {
            #expect(line.contains(fragment), "\(line)")
        }
    }

    @Test func unreadableShapesAreRefusedWithAMessage() {
        #expect(problems("42").first?.contains("expected {\"flags\": [...]}") == true)
        #expect(problems(#"{"flags": 3}"#).first?.contains("flags: expected a list of flags") == true)
        #expect(problems(#"{"flags": [1]}"#).first?.contains("expected a flag object") == true)
        #expect(problems(#"[{"name": "x"}]"#).first?.contains("has no value") == true)
        #expect(problems("{\"flags\": [").first?.contains("line 1") == true)
    }
}
