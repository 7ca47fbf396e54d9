import Foundation

/// The provider's discovery document, read when first needed and kept for an hour, so a
/// provider that is down when the server starts does not stop it (its sign-ins are refused
/// with a page until it is back).
actor ProviderDirectory {
    let issuer: String
    let http: ProviderHTTP
    private var cached: (metadata: ProviderMetadata, time: Double)?
    static let lifetimeSeconds: Double = 3600

    init(issuer: String, http: ProviderHTTP) {
        self.issuer = issuer
        self.http = http
    }

    func metadata() async throws(SignInRefusal) -> ProviderMetadata {
        let now = Date().timeIntervalSince1970
        if let cached, now - cached.time < Self.lifetimeSeconds { return cached.metadata }
        let document = try await http.get(ProviderMetadata.discoveryURL(issuer: issuer), what: "discovery document")
        let metadata = try ProviderMetadata(document: document, configuredIssuer: issuer)
        cached = (metadata, now)
        return metadata
    }
}
