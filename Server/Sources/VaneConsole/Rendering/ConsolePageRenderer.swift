import HTTPTypes
import Hummingbird
import Mustache
import NIOCore
import VaneServerCore

/// What every console page shows around its content: the title, the signed-in person, the
/// navigation, the environment being worked on and a message from the last action.
struct ConsoleChrome: Sendable {
    struct NavItem: Sendable {
        var href: String
        var label: String
        var current: Bool
    }

    struct SignedIn: Sendable {
        var email: String
        var role: String
        var isAdmin: Bool
    }

    struct EnvironmentBar: Sendable {
        var projectName: String
        var environmentName: String
        var version: Int64
        /// The environment's palette colour, for its `environment-colour-…` class.
        var colour: String?
        var tabs: [NavItem]
        var drafts: DraftStatus?
    }

    /// Whether the person has a draft of the environment, and who else has one.
    struct DraftStatus: Sendable {
        var changes: Int
        var hasDraft: Bool
        var reviewHref: String
        /// Everyone else with a draft of the environment, for "also editing".
        var others: String?
    }

    struct Flash: Sendable {
        var message: String
        var kind: String
        var role: String

        static func ok(_ message: String) -> Flash { Flash(message: message, kind: "ok", role: "status") }
        static func error(_ message: String) -> Flash { Flash(message: message, kind: "error", role: "alert") }
    }

    var title: String
    var css: String = ""
    var js: String = ""
    var csrf: String = ""
    var user: SignedIn?
    var nav: [NavItem] = []
    var environment: EnvironmentBar?
    var flash: Flash?
}

/// Renders console pages and sets the headers every console response carries.
package struct ConsolePageRenderer: Sendable {
    let assets: ConsoleAssets
    /// Sees each page's template and data before it is rendered (ConsoleTemplateTests checks the
    /// names templates read against them); nil in the server.
    let observer: (@Sendable (ConsoleTemplate, [String: any Sendable]) -> Void)?

    package init(assets: ConsoleAssets) {
        self.init(assets: assets, observer: nil)
    }

    init(assets: ConsoleAssets, observer: (@Sendable (ConsoleTemplate, [String: any Sendable]) -> Void)?) {
        self.assets = assets
        self.observer = observer
    }

    /// Scripts and styles only from this server, no inline script, no framing, forms post only
    /// here: an injected `<script>` in a flag description would not run even if it were not
    /// escaped.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The headers of every console response.
    static let securityHeaders: HTTPFields = {
        var headers = HTTPFields()
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[.cacheControl] = "no-store"
        let more = [
            ("X-Frame-Options", "DENY"), ("Referrer-Policy", "same-origin"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
        ]
        for (name, value) in more {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return headers
    }()

    /// Markup written outside the templates (``FlagRowsHTML``), put into the response where the
    /// page holds ``marker``: megabytes of rows are copied once, into the response, rather than
    /// through the template's output and a `String`.
    struct Spliced: Sendable {
        static let marker = "<!--vane:spliced-->"
        var bytes: [UInt8]
    }

    /// A page: `template` rendered with the chrome and the page's own data, and `spliced` put
    /// where the page holds ``Spliced/marker``.
    func render(
        _ template: ConsoleTemplate,
        chrome: ConsoleChrome,
        page: some Sendable,
        context: VaneRequestContext,
        status: HTTPResponse.Status = .ok,
        spliced: Spliced? = nil
    ) -> Response {
        var chrome = chrome
        chrome.css = assets.urls["console.css"] ?? ""
        chrome.js = assets.urls["console.js"] ?? ""
        if let session = context.consoleSession { chrome.csrf = session.csrfToken }
        if case .user(let user)? = context.principal?.identity {
            chrome.user = ConsoleChrome.SignedIn(
                email: user.email,
                role: user.role.rawValue,
                isAdmin: user.role == .admin
            )
            if chrome.nav.isEmpty { chrome.nav = Self.navigation(for: user, current: nil) }
        }
        let object: [String: any Sendable] = ["chrome": chrome, "page": page]
        // ConsoleAssets refuses to start without every template, so this is never nil.
        guard let mustache = assets.templates[template] else {
            return Response(status: .internalServerError, headers: Self.securityHeaders)
        }
        observer?(template, object)
        let html = mustache.render(object, library: assets.library)
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        var body = ByteBuffer()
        let utf8 = html.utf8
        if let spliced, let place = utf8.firstRange(of: Spliced.marker.utf8) {
            body.reserveCapacity(utf8.count + spliced.bytes.count)
            body.writeBytes(utf8[..<place.lowerBound])
            body.writeBytes(spliced.bytes)
            body.writeBytes(utf8[place.upperBound...])
        } else {
            body.writeString(html)
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// The main navigation for a person, with `current` marked.
    static func navigation(for user: UserAccount, current: String?) -> [ConsoleChrome.NavItem] {
        var items: [(String, String)] = [("/", "Projects"), ("/audit", "Audit log")]
        if user.role == .admin { items += [("/keys", "API keys"), ("/users", "People")] }
        return items.map { ConsoleChrome.NavItem(href: $0.0, label: $0.1, current: $0.0 == current) }
    }
}
