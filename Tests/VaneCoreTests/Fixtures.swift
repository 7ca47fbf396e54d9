import Foundation

@testable import VaneCore

/// Test fixtures bundled with the tests.
enum Fixtures {
    static func data(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw FixtureError(name: name)
        }
        return Array(try Data(contentsOf: url))
    }

    static func template(_ name: String) throws -> ConfigTemplate {
        try ConfigTemplate(data: data(name))
    }

    struct FixtureError: Error {
        let name: String
    }
}

/// JSON equal up to the order of object members, which carries no meaning in Firebase's format
/// except for parameters and conditional values (checked separately).
func canonical(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let object):
        return .object(
            JSONObject(
                object.members.sorted { $0.key < $1.key }.map {
                    JSONObject.Member(key: $0.key, value: canonical($0.value))
                }
            )
        )
    case .array(let elements):
        return .array(elements.map(canonical))
    default:
        return value
    }
}
