import Foundation
import VaneCore

/// A fetch response body, read strictly: anything unexpected is a malformed response and leaves
/// the client's values untouched.
enum FetchResponse: Sendable, Hashable {
    /// New values.
    case update(entries: [String: String], metadata: [String: RemoteKeyMetadata], templateVersion: Int64)
    /// The values the client already has are current.
    case noChange(templateVersion: Int64)

    /// Reads a `200` body.
    static func read(_ body: Data) throws(VaneError) -> FetchResponse {
        let json: JSONValue
        do {
            json = try JSONValue.parse(Array(body))
        } catch {
            throw .malformedResponse(reason: "the body is not JSON: \(error.description)")
        }
        guard case .object(let object) = json else {
            throw .malformedResponse(reason: "expected a JSON object, found \(json.kindDescription)")
        }
        let version = try templateVersion(object["templateVersion"])
        switch object["state"]?.stringValue {
        case "NO_CHANGE":
            return .noChange(templateVersion: version)
        case "UPDATE", "NO_TEMPLATE":
            guard case .object(let entryObject)? = object["entries"] else {
                throw .malformedResponse(reason: "$.entries: expected an object")
            }
            var entries: [String: String] = [:]
            for member in entryObject {
                guard case .string(let value) = member.value else {
                    throw .malformedResponse(reason: "$.entries.\(member.key): expected a string")
                }
                entries[member.key] = value
            }
            var metadata: [String: RemoteKeyMetadata] = [:]
            if case .object(let metadataObject)? = object["metadata"] {
                for member in metadataObject {
                    if case .object(let details) = member.value {
                        metadata[member.key] = RemoteKeyMetadata(json: details)
                    }
                }
            }
            return .update(entries: entries, metadata: metadata, templateVersion: version)
        case let state:
            throw .malformedResponse(
                reason: "$.state: expected UPDATE, NO_CHANGE or NO_TEMPLATE, found \(state ?? "none")"
            )
        }
    }

    /// The version, sent as a string (like Firebase's) or a number.
    static func templateVersion(_ value: JSONValue?) throws(VaneError) -> Int64 {
        switch value {
        case .string(let text)?:
            if let version = Int64(text) { return version }
        case .number(let number)?:
            if let version = number.intValue { return Int64(version) }
        case nil:
            return 0
        default:
            break
        }
        throw .malformedResponse(reason: "$.templateVersion: expected a version number")
    }

    /// The message of an error envelope (`{"error": {"message": …}}`), or the status line.
    static func errorMessage(_ body: Data, status: Int) -> String {
        if let json = try? JSONValue.parse(Array(body)), case .object(let object) = json,
            case .object(let error)? = object["error"], let message = error["message"]?.stringValue
        {
            return message
        }
        return "HTTP \(status)"
    }
}
