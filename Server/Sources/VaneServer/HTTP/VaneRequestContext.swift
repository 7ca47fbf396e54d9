import Hummingbird

/// The request context of every Vane route: Hummingbird's core storage plus who is calling.
public struct VaneRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The authenticated caller, set by ``AuthenticationMiddleware``.
    public var principal: Principal?

    /// Creates a context for a request.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.principal = nil
    }

    /// Bodies are read explicitly with per-route limits; this caps anything decoded implicitly.
    public var maxUploadSize: Int { ServerLimits.maximumTemplateBytes }
}

/// Request size limits.
public enum ServerLimits {
    /// A template body: well above Firebase's 1,000,000 value characters plus structure.
    public static let maximumTemplateBytes = 8 << 20
    /// A fetch or OFREP body: a context is small.
    public static let maximumContextBytes = 64 << 10
    /// Any other admin body (project, key, rollback).
    public static let maximumSmallBodyBytes = 64 << 10
}
