public import Foundation
import VaneCore

/// Why a fetch did not bring new values. The app keeps its active values in every case.
public enum VaneError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The network failed: offline, server down, timeout, a response cut short. No backoff
    /// starts; the next fetch tries again.
    case transport(TransportError)
    /// The server is overloaded (429) or failing (5xx). Fetches are refused until `retryAt`.
    case serverUnavailable(status: Int, retryAt: Date)
    /// A fetch was asked for during a backoff; nothing was sent. Try again after `retryAt`.
    case backingOff(retryAt: Date)
    /// The server refused the request (400, 401, 403, 404): a wrong key, project or environment,
    /// or a context it could not read. Fix the client's configuration.
    case rejected(status: Int, message: String)
    /// The server answered something the SDK cannot read (malformed or truncated JSON).
    case malformedResponse(reason: String)
    /// The client's configuration cannot work (a server URL that cannot take the path, say).
    case invalidConfiguration(String)

    /// What happened and what to do, in a sentence or two.
    public var description: String {
        switch self {
        case .transport(let error):
            return "the fetch failed (\(error)); the app keeps its active values and the next fetch tries again"
        case .serverUnavailable(let status, let retryAt):
            return "the server answered HTTP \(status); fetches back off until \(Self.format(retryAt))"
        case .backingOff(let retryAt):
            return "fetches are backing off after a server error until \(Self.format(retryAt)); nothing was sent"
        case .rejected(let status, let message):
            return "the server refused the fetch (HTTP \(status)): \(message); check the client key, project and "
                + "environment the client was created with"
        case .malformedResponse(let reason):
            return "the server's answer cannot be read (\(reason)); the app keeps its active values"
        case .invalidConfiguration(let message):
            return "the client's configuration cannot work: \(message)"
        }
    }

    /// `2026-01-31T12:00:00.250Z`: VaneCore's one ISO 8601 writer, the form the server uses too.
    static func format(_ date: Date) -> String {
        ISO8601Timestamp.string(from: date)
    }
}
