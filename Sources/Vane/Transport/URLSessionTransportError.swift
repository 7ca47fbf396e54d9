/// A session ``URLSessionTransport`` cannot send through.
public enum URLSessionTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A background session (`URLSessionConfiguration.background(withIdentifier:)`): it accepts
    /// only upload and download tasks that the system runs for the app, not the data tasks with a
    /// completion handler that fetches and event batches are.
    /// https://developer.apple.com/documentation/foundation/downloading_files_in_the_background
    case backgroundSession(identifier: String)

    /// What is wrong and what to do.
    public var description: String {
        switch self {
        case .backgroundSession(let identifier):
            "the URLSession \"\(identifier)\" is a background session, which cannot run the SDK's data tasks; "
                + "pass a session with a default or ephemeral configuration, or use URLSessionTransport()"
        }
    }
}
