// Without the `ServerSDK` trait this module has neither its dependencies nor its code. These
// placeholders have the entry points' shapes, so a service that forgot the trait is told how to
// turn it on where it creates the service, instead of "cannot find 'VaneService' in scope".
#if !ServerSDK
public import Logging
public import Vane

/// The server SDK needs the package trait `ServerSDK` (docs/SERVER-SDK.md).
@available(
    *,
    unavailable,
    message: "the server SDK needs the ServerSDK trait: .package(url: …, from: …, traits: [\"ServerSDK\"])"
)
public final class VaneService: Sendable {
    /// The server SDK needs the package trait `ServerSDK`.
    public init(configuration: Configuration, logger: Logger? = nil) {}

    /// The server SDK needs the package trait `ServerSDK`.
    public struct Configuration: Sendable {
        /// The server SDK needs the package trait `ServerSDK`.
        public init(client: LocalEvaluationClient.Configuration) {}
    }
}
#endif
