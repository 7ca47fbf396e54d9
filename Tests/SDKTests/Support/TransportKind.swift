import Foundation
import Testing
import Vane

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The two ways an app makes a ``URLSessionTransport``: with its own session, or over the app's.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case ownSession
    case callersSession

    func make() -> URLSessionTransport {
        switch self {
        case .ownSession: URLSessionTransport()
        // An ephemeral session is never refused.
        case .callersSession: try! URLSessionTransport(session: URLSession(configuration: .ephemeral))
        }
    }

    var testDescription: String { rawValue }
}
