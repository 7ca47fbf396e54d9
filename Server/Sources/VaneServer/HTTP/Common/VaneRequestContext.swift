import Hummingbird

/// The request context of every Vane route: Hummingbird's core storage plus who is calling.
struct VaneRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    var coreContext: CoreRequestContextStorage
    /// The authenticated caller, set by ``AuthenticationMiddleware``.
    var principal: Principal?

    /// Creates a context for a request.
    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.principal = nil
    }

    /// Bodies are read explicitly with per-route limits; this caps anything decoded implicitly.
    var maxUploadSize: Int { ServerLimits.maximumTemplateBytes }
}
