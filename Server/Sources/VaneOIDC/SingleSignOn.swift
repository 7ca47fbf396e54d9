import Foundation
package import Logging
import VaneCore
package import VaneServerCore

/// The console's sign-in through an OpenID Connect provider: the authorization-code flow with
/// PKCE (S256), `state` and `nonce`; the code exchanged at the token endpoint; the ID token
/// checked (``IDTokenVerifier``); and the account found, tied or created (``AccountProvisioning``).
/// The console turns the account into a session with ``Accounts/startSession(user:address:userAgent:)``,
/// as a password sign-in does.
package final class SingleSignOn: Sendable {
    package let settings: SingleSignOnSettings
    package let issuer: String
    package let clientId: String
    package let redirectURL: String
    /// The name on the sign-in button.
    package let providerName: String
    let http: ProviderHTTP
    let directory: ProviderDirectory
    package let keys: ProviderKeys
    let flows: SignInFlowStore
    let provisioning: AccountProvisioning

    /// - Parameter settings: Checked already (``SingleSignOnSettings/problems()`` is empty) and
    ///   configured (issuer, client id and redirect URL set).
    package init(
        settings: SingleSignOnSettings,
        accounts: Accounts,
        http: ProviderHTTP = ProviderHTTP(),
        keyRefreshSeconds: Double = 60
    ) {
        self.settings = settings
        let issuer = settings.issuer ?? ""
        self.issuer = issuer
        self.clientId = settings.clientId ?? ""
        self.redirectURL = settings.redirectURL ?? ""
        self.providerName = settings.providerName ?? URLComponents(string: issuer)?.host ?? issuer
        self.http = http
        let directory = ProviderDirectory(issuer: issuer, http: http)
        self.directory = directory
        self.keys = ProviderKeys(minimumRefreshSeconds: keyRefreshSeconds) {
            () async throws(SignInRefusal) -> [UInt8] in
            let metadata = try await directory.metadata()
            return try await http.get(metadata.jwksURI, what: "signing keys (jwks_uri)")
        }
        self.flows = SignInFlowStore(engine: accounts.store.engine)
        self.provisioning = AccountProvisioning(settings: settings, accounts: accounts)
    }

    /// A sign-in on its way to the provider.
    package struct Start: Sendable {
        /// Where the browser goes: the provider's authorization endpoint with this flow's query.
        package var authorizationURL: String
        /// The state, also kept in the browser's state cookie.
        package var state: String
    }

    /// Starts a sign-in: records its state, nonce and PKCE verifier, and builds the provider's URL.
    /// - Parameter next: Where to go once signed in (a path on this server, checked already).
    /// - Throws: ``SignInRefusal`` when the provider's discovery document cannot be read.
    package func start(next: String) async throws -> Start {
        let metadata = try await directory.metadata()
        let state = SessionToken.generate()
        let verifier = PKCE.verifier()
        let flow = SignInFlow(
            nonce: SessionToken.generate(),
            codeVerifier: verifier,
            next: next,
            createTime: Clock.nowMilliseconds()
        )
        try await flows.insert(state: state, flow: flow)
        let query: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientId), ("redirect_uri", redirectURL),
            ("scope", settings.scopes), ("state", state), ("nonce", flow.nonce),
            ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
        ]
        let separator = metadata.authorizationEndpoint.contains("?") ? "&" : "?"
        let encoded = query.map { ProviderHTTP.formEncode($0.0) + "=" + ProviderHTTP.formEncode($0.1) }
        return Start(
            authorizationURL: metadata.authorizationEndpoint + separator + encoded.joined(separator: "&"),
            state: state
        )
    }

    /// What the provider sent the browser back with.
    package struct Callback: Sendable {
        package var state: String?
        package var code: String?
        package var error: String?
        package var errorDescription: String?
        /// The state in this browser's state cookie.
        package var browserState: String?

        package init(state: String?, code: String?, error: String?, errorDescription: String?, browserState: String?) {
            self.state = state
            self.code = code
            self.error = error
            self.errorDescription = errorDescription
            self.browserState = browserState
        }
    }

    /// Finishes a sign-in: the state this browser started (once), the code exchanged with the
    /// flow's PKCE verifier, the ID token verified, the account found or created.
    /// - Returns: The account to start a session for, and where to go.
    /// - Throws: ``SignInRefusal`` for every refusal; storage errors as they are.
    package func finish(_ callback: Callback, logger: Logger) async throws -> (user: UserAccount, next: String) {
        let state = callback.state.flatMap { $0.isEmpty || $0.utf8.count > 100 ? nil : $0 }
        // The flow is used up whatever follows: a state works once.
        var flow: SignInFlow?
        if let state { flow = try await flows.take(state: state, now: Clock.nowMilliseconds()) }
        // The provider's own refusal comes first: it says more than anything Vane could (and
        // some providers leave out the state when they refuse).
        if let error = callback.error {
            let detail = callback.errorDescription.map { ": \($0.prefix(300))" } ?? ""
            throw SignInRefusal(
                .providerRefused,
                "the identity provider refused the sign-in (\(error.prefix(100))\(detail)); ask its admin to give you access to Vane"
            )
        }
        guard let state else {
            throw SignInRefusal(
                .unknownState,
                "the identity provider sent the browser back without this sign-in's state; start again from the sign-in page"
            )
        }
        guard let browserState = callback.browserState, SessionToken.equal(browserState, state) else {
            throw SignInRefusal(
                .unknownState,
                "this sign-in was not started in this browser (its state cookie is missing or different); start again from the sign-in page"
            )
        }
        guard let flow else {
            throw SignInRefusal(
                .unknownState,
                "this sign-in was finished already or is older than 10 minutes; start again from the sign-in page"
            )
        }
        guard let code = callback.code, !code.isEmpty else {
            throw SignInRefusal(.providerRefused, "the identity provider sent no authorization code; start again")
        }
        let idToken = try await exchange(code: code, verifier: flow.codeVerifier)
        let verifier = IDTokenVerifier(issuer: try await directory.metadata().issuer, clientId: clientId, keys: keys)
        let claims = try await verifier.verify(idToken, nonce: flow.nonce, now: Date().timeIntervalSince1970)
        let user = try await provisioning.account(for: claims, issuer: verifier.issuer, logger: logger)
        return (user, flow.next)
    }

    /// The code exchanged for the ID token at the token endpoint, with the PKCE verifier.
    func exchange(code: String, verifier: String) async throws(SignInRefusal) -> String {
        let metadata = try await directory.metadata()
        var fields = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURL),
            ("code_verifier", verifier),
        ]
        var basic: (String, String)?
        if let secret = settings.clientSecret {
            let methods = metadata.tokenEndpointAuthMethods ?? ["client_secret_basic"]
            if methods.contains("client_secret_basic") {
                basic = (clientId, secret)
            } else {
                fields += [("client_id", clientId), ("client_secret", secret)]
            }
        } else {
            fields.append(("client_id", clientId))
        }
        let (status, body) = try await http.postForm(
            metadata.tokenEndpoint,
            fields: fields,
            basicAuthorization: basic,
            what: "token endpoint"
        )
        let answer = (try? JSONValue.parse(body))?.objectValue
        guard status == 200 else {
            let error = answer?["error"]?.stringValue ?? "HTTP \(status)"
            let detail = answer?["error_description"]?.stringValue.map { ": \($0.prefix(300))" } ?? ""
            throw SignInRefusal(
                .providerRefused,
                "the identity provider refused to exchange the sign-in's code (\(error.prefix(100))\(detail)); start again, and if it keeps happening check the client id and secret"
            )
        }
        guard let idToken = answer?["id_token"]?.stringValue else {
            throw SignInRefusal(
                .malformedToken,
                "the identity provider's token endpoint sent no ID token; check that the scopes include openid"
            )
        }
        return idToken
    }
}
