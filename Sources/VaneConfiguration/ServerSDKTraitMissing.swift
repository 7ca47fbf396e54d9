// Without the `ServerSDK` trait this module has neither its dependencies nor its code; the
// placeholder has the provider's initializer, so a service that forgot the trait is told how to
// turn it on (VaneService's placeholder says the same).
#if !ServerSDK
public import VaneService

/// The server SDK needs the package trait `ServerSDK` (docs/SERVER-SDK.md).
@available(
    *,
    unavailable,
    message: "the server SDK needs the ServerSDK trait: .package(url: …, from: …, traits: [\"ServerSDK\"])"
)
public struct VaneConfigProvider: Sendable {
    /// The server SDK needs the package trait `ServerSDK`.
    public init(service: VaneService) {}
}
#endif
