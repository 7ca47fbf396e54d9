import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer

/// The console over real HTTP, below the browser: sessions, CSRF, headers, escaping, and the
/// `/v1/users` API. The browser tests (scripts/console-test) cover the flows people click through.
@Suite(.timeLimit(.minutes(5))) struct ConsoleTests {
    /// A signed-in browser, as far as the server can tell: its cookie and its form token.
    struct Browser {
        var cookie: String
        var csrf: String

        /// A page, as this person.
        func get(_ server: TestServer, _ path: String) async throws -> TestServer.Reply {
            try await ConsoleTests.request(server, .get, path, cookie: cookie)
        }

        /// A form sent as this person, with their form token.
        func post(_ server: TestServer, _ path: String, _ form: [String: String] = [:]) async throws -> TestServer.Reply
        {
            try await ConsoleTests.request(
                server,
                .post,
                path,
                form: form.merging(["_csrf": csrf]) { $1 },
                cookie: cookie
            )
        }
    }

    static func request(
        _ server: TestServer,
        _ method: HTTPRequest.Method,
        _ path: String,
        form: [String: String]? = nil,
        cookie: String? = nil,
        origin: String? = nil
    ) async throws -> TestServer.Reply {
        var headers = HTTPFields()
        if let cookie { headers[.cookie] = "vane_session=\(cookie)" }
        if let origin { headers[.origin] = origin }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = ByteBuffer(
                string: form.map { "\(ConsolePaths.encode($0.key))=\(ConsolePaths.encode($0.value))" }.joined(
                    separator: "&"
                )
            )
        }
        let response = try await server.client.executeRequest(uri: path, method: method, headers: headers, body: body)
        return TestServer.Reply(status: response.status, headers: response.headers, text: String(buffer: response.body))
    }

    /// Creates a person through the API and signs them in through the form, password changed.
    static func signIn(_ server: TestServer, role: String, environments: [String] = []) async throws -> Browser {
        let email = "\(role)-\(UUID().uuidString.prefix(8))@example.com"
        let created = try await server.send(
            .post,
            "/v1/users",
            json: [
                "email": .string(email), "role": .string(role),
                "environments": .array(environments.map { .string($0) }),
            ]
        )
        #expect(created.status == .created, "\(created.text)")
        let password = try #require(created.object?["oneTimePassword"]?.stringValue)
        let reply = try await request(server, .post, "/sign-in", form: ["email": email, "password": password])
        #expect(reply.status == .seeOther)
        #expect(reply.headers[.location] == "/account")
        let setCookie = try #require(reply.headers[.setCookie])
        #expect(setCookie.contains("HttpOnly"))
        #expect(setCookie.contains("SameSite=Strict"))
        let cookie = try #require(setCookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
        let account = try await request(server, .get, "/account", cookie: String(cookie))
        let csrf = try #require(Self.csrfToken(in: account.text))
        let changed = try await request(
            server,
            .post,
            "/account/password",
            form: ["_csrf": csrf, "current": password, "new": "a long new password", "repeat": "a long new password"],
            cookie: String(cookie)
        )
        #expect(changed.status == .ok)
        return Browser(cookie: String(cookie), csrf: csrf)
    }

    static func csrfToken(in html: String) -> String? {
        guard let range = html.range(of: "name=\"_csrf\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    @Test(arguments: TestDatabase.allCases)
    func pagesNeedASignedInPersonAndCarryTheSecurityHeaders(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let home = try await Self.request(server, .get, "/")
            #expect(home.status == .seeOther)
            #expect(home.headers[.location] == "/sign-in?next=%2F")
            let flags = try await Self.request(server, .get, "/projects/demo/environments/production/flags?q=a")
            #expect(
                flags.headers[.location]
                    == "/sign-in?next=%2Fprojects%2Fdemo%2Fenvironments%2Fproduction%2Fflags%3Fq%3Da"
            )
            let signIn = try await Self.request(server, .get, "/sign-in?next=//evil.example")
            #expect(signIn.status == .ok)
            #expect(!signIn.text.contains("evil.example"))
            let policy = try #require(signIn.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self'"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(!policy.contains("unsafe-inline"))
            #expect(signIn.headers[.xContentTypeOptions] == "nosniff")
            #expect(signIn.headers[.cacheControl] == "no-store")

            // An API key is no way into the console.
            let withKey = try await server.send(.get, "/", key: TestServer.adminKey)
            #expect(withKey.status == .seeOther)
        }
    }

    @Test func assetsHaveContentHashedNamesAndAreCachedForever() async throws {
        try await TestServer.run(.sqlite) { server in
            let page = try await Self.request(server, .get, "/sign-in")
            let css = try #require(
                page.text.range(of: #"/assets/console\.[0-9a-f]{10}\.css"#, options: .regularExpression)
            )
            let reply = try await Self.request(server, .get, String(page.text[css]))
            #expect(reply.status == .ok)
            #expect(reply.headers[.contentType] == "text/css; charset=utf-8")
            #expect(reply.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(reply.text.contains(":focus-visible"))
            #expect(try await Self.request(server, .get, "/assets/console.0000000000.css").status == .notFound)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func formsNeedTheSessionsTokenAndThisOrigin(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let browser = try await Self.signIn(server, role: "admin")
            let create = ["name": "csrf-test", "role": "client", "environment": "demo/production"]
            // No token, a wrong token, another site's origin: refused, nothing created.
            #expect(
                try await Self.request(server, .post, "/keys", form: create, cookie: browser.cookie).status
                    == .forbidden
            )
            var wrong = create
            wrong["_csrf"] = "forged"
            #expect(
                try await Self.request(server, .post, "/keys", form: wrong, cookie: browser.cookie).status == .forbidden
            )
            var right = create
            right["_csrf"] = browser.csrf
            let crossSite = try await Self.request(
                server,
                .post,
                "/keys",
                form: right,
                cookie: browser.cookie,
                origin: "https://evil.example"
            )
            #expect(crossSite.status == .forbidden)
            #expect(!(try await server.send(.get, "/v1/keys").text.contains("csrf-test")))

            let sameSite = try await Self.request(server, .post, "/keys", form: right, cookie: browser.cookie)
            #expect(sameSite.status == .ok)
            #expect(sameSite.text.contains("vane_client_"))
            #expect(try await server.send(.get, "/v1/keys").text.contains("csrf-test"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func editorsPublishOnlyWhereGrantedAndTheAuditNamesThem(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let editor = try await Self.signIn(server, role: "editor", environments: ["demo/staging"])
            let switchPath = "/flags/payments_enabled/switch"
            let production = "/projects/demo/environments/production"
            let staging = "/projects/demo/environments/staging"
            let form = ["_csrf": editor.csrf, "to": "off", "version": "1", "message": "outage"]
            let refused = try await Self.request(
                server,
                .post,
                production + switchPath,
                form: form,
                cookie: editor.cookie
            )
            #expect(refused.status == .forbidden)
            #expect(refused.text.contains("may not change demo/production"))
            let done = try await Self.request(server, .post, staging + switchPath, form: form, cookie: editor.cookie)
            #expect(done.status == .seeOther)
            #expect(done.headers[.location] == staging + "/flags?published=2")
            let template = try await server.send(.get, "/v1/projects/demo/environments/staging/template")
            let parameters = template.object?["parameters"]?.objectValue
            let flag = parameters?["payments_enabled"]?.objectValue
            #expect(flag?["defaultValue"]?.objectValue?["value"] == "false")
            #expect(template.object?["version"]?.objectValue?["description"] == "outage")
            // A stale page (version 1 seen, 2 is live) does not publish again.
            let stale = try await Self.request(server, .post, staging + switchPath, form: form, cookie: editor.cookie)
            #expect(stale.status == .badRequest)
            #expect(stale.text.contains("since you opened this page"))

            let audit = try await server.send(.get, "/v1/projects/demo/environments/staging/audit")
            let entry = try #require(audit.object?["entries"]?.arrayValue?.first?.objectValue)
            #expect(entry["action"] == "template.publish")
            let actor = entry["actor"]?.objectValue
            #expect(actor?["name"]?.stringValue?.hasPrefix("editor-") == true)
            #expect(actor?["userId"]?.stringValue?.hasPrefix("u_") == true)
            #expect(actor?["keyId"] == nil)
        }
    }

    @Test func flagTextIsEscaped() async throws {
        try await TestServer.run(.sqlite) { server in
            let published = try await server.publish([
                "parameters": [
                    "probe": [
                        "defaultValue": ["value": "<img src=x onerror=alert(1)>"],
                        "description": "<script>alert('d')</script>",
                        "vane": ["title": "\"><script>alert('t')</script>", "category": "<b>x</b>"],
                    ]
                ]
            ])
            #expect(published.status == .ok, "\(published.text)")
            let viewer = try await Self.signIn(server, role: "viewer")
            let page = try await Self.request(
                server,
                .get,
                "/projects/demo/environments/production/flags",
                cookie: viewer.cookie
            )
            #expect(page.status == .ok)
            #expect(!page.text.contains("<script>alert"))
            #expect(!page.text.contains("<img src=x"))
            #expect(!page.text.contains("<b>x</b>"))
            #expect(page.text.contains("&lt;img src=x onerror=alert(1)&gt;"))
            #expect(page.text.contains("&quot;&gt;&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt;"))
            // A viewer sees no kill switch.
            #expect(!page.text.contains("/switch?to="))
        }
    }

    /// A `GET` form writes spaces as "+": the flags filter reads "home+banner" as two words.
    @Test func theFlagsFilterReadsWordsAsTheFormSendsThem() async throws {
        try await TestServer.run(.sqlite) { server in
            let viewer = try await Self.signIn(server, role: "viewer")
            let flags = "/projects/demo/environments/production/flags"
            let page = try await Self.request(server, .get, flags + "?q=home+banner&sort=key", cookie: viewer.cookie)
            #expect(page.status == .ok)
            #expect(page.text.contains(flags + "/banner_text/edit"))
            #expect(!page.text.contains(flags + "/payments_enabled/edit"))
            let category = try await Self.request(server, .get, flags + "?category=Safety", cookie: viewer.cookie)
            #expect(category.text.contains(flags + "/payments_enabled/edit"))
            #expect(!category.text.contains(flags + "/banner_text/edit"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func usersThroughTheAPI(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let created = try await server.send(
                .post,
                "/v1/users",
                json: ["email": "Pat@Example.com", "name": "Pat", "role": "editor", "environments": ["demo/*"]]
            )
            #expect(created.status == .created)
            #expect(created.object?["email"] == "pat@example.com")
            #expect(created.object?["environments"] == ["demo/*"])
            let id = try #require(created.object?["id"]?.stringValue)
            #expect(
                try await server.send(.post, "/v1/users", json: ["email": "pat@example.com", "role": "viewer"]).status
                    == .conflict
            )
            #expect(
                try await server.send(.post, "/v1/users", json: ["email": "x@example.com", "role": "owner"]).status
                    == .badRequest
            )
            let badGrant = try await server.send(
                .post,
                "/v1/users",
                json: ["email": "y@example.com", "role": "editor", "environments": ["nope"]]
            )
            #expect(badGrant.status == .badRequest)
            #expect(badGrant.text.contains("environments[0]"))

            let updated = try await server.send(.patch, "/v1/users/\(id)", json: ["role": "viewer", "disabled": true])
            #expect(updated.object?["role"] == "viewer")
            #expect(updated.object?["disableTime"] != nil)
            #expect(try await server.send(.patch, "/v1/users/u_nobody", json: ["role": "viewer"]).status == .notFound)
            let reset = try await server.send(.post, "/v1/users/\(id)/password")
            #expect(reset.object?["oneTimePassword"]?.stringValue?.count == 20)
            let list = try await server.send(.get, "/v1/users")
            let emails = list.object?["users"]?.arrayValue?.compactMap { $0.objectValue?["email"]?.stringValue } ?? []
            #expect(emails.contains("admin"))
            #expect(emails.contains("pat@example.com"))
            #expect(!list.text.contains("password_hash") && !list.text.contains("$2"))

            let client = try await server.createKey(role: "client")
            #expect(try await server.send(.get, "/v1/users", key: client).status == .forbidden)
        }
    }
}
