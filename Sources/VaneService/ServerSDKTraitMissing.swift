// Without the `ServerSDK` trait this module has neither its dependencies nor its code; a service
// that forgot the trait reads how to turn it on instead of "cannot find 'VaneService' in scope".
#if !ServerSDK
/// The server SDK needs the package trait `ServerSDK` (docs/SERVER-SDK.md).
@available(
    *,
    unavailable,
    message: "the server SDK needs the ServerSDK trait: .package(url: …, from: …, traits: [\"ServerSDK\"])"
)
public enum VaneService {}
#endif
