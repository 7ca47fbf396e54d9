import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import TestSupport
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// The console's sign-in and forms against hostile input over real HTTP (issue #27): guessing
/// in bursts, strangers locking a person out, timing by unknown emails, `next` addresses a
/// browser reads differently, and oversized bodies.
@Suite(.timeLimit(.minutes(5))) struct SignInHardeningTests {
    static let wrongPassword = "not the password 123"

    struct Person {
        var email: String
        var password: String
    }

    /// A person created through the API, with the one-time password, or with a password of their
    /// own when `changePassword` (then sign-ins go to `next`, not to the account page).
    static func person(_ server: TestServer, changePassword: Bool = false) async throws -> Person {
        let email = "p-\(UUID().uuidString.prefix(8).lowercased())@example.com"
        let created = try await server.send(
            .post,
            "/v1/users",
            json: ["email": .string(email), "role": "viewer"]
        )
        let oneTime = try #require(created.object?["oneTimePassword"]?.stringValue, "\(created.text)")
        guard changePassword else { return Person(email: email, password: oneTime) }
        let signedIn = try await signIn(server, email: email, password: oneTime)
        let session = try #require(cookie(ConsoleMiddleware.cookieName, in: signedIn)?.value)
        let account = try await send(server, .get, "/account", cookies: [ConsoleMiddleware.cookieName: session])
        let csrf = try #require(ConsoleTests.csrfToken(in: account.text))
        let password = "a password of my own"
        let changed = try await send(
            server,
            .post,
            "/account/password",
            form: ["_csrf": csrf, "current": oneTime, "new": password, "repeat": password],
            cookies: [ConsoleMiddleware.cookieName: session]
        )
        #expect(changed.status == .ok)
        return Person(email: email, password: password)
    }

    /// A console request with cookies and an optional form.
    static func send(
        _ server: TestServer,
        _ method: HTTPRequest.Method,
        _ path: String,
        form: [String: String]? = nil,
        cookies: [String: String] = [:],
        headers: HTTPFields = [:]
    ) async throws -> TestServer.Reply {
        var headers = headers
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        var body: ByteBuffer?
        if let form {
            headers[.contentType] = "application/x-www-form-urlencoded"
            body = ByteBuffer(string: Self.encode(form))
        }
        let response = try await server.client.executeRequest(uri: path, method: method, headers: headers, body: body)
        return TestServer.Reply(status: response.status, headers: response.headers, text: String(buffer: response.body))
    }

    static func encode(_ form: [String: String]) -> String {
        form.map { "\(ConsolePaths.encode($0.key))=\(ConsolePaths.encode($0.value))" }.joined(separator: "&")
    }

    /// `POST /sign-in`, with a device cookie when given.
    static func signIn(
        _ server: TestServer,
        email: String,
        password: String,
        next: String? = nil,
        device: String? = nil
    ) async throws -> TestServer.Reply {
        var form = ["email": email, "password": password]
        if let next { form["next"] = next }
        return try await send(
            server,
            .post,
            "/sign-in",
            form: form,
            cookies: device.map { [DeviceCookie.name: $0] } ?? [:]
        )
    }

    /// A cookie the reply sets: its value and its attributes.
    static func cookie(_ name: String, in reply: TestServer.Reply) -> (value: String, attributes: String)? {
        for header in reply.headers[values: .setCookie] where header.hasPrefix(name + "=") {
            let value = header.dropFirst(name.count + 1).prefix { $0 != ";" }
            return (String(value), String(header.dropFirst(name.count + 1 + value.count)))
        }
        return nil
    }

    // MARK: 1. Bursts

    @Test(arguments: TestDatabase.allCases)
    func aBurstOfWrongPasswordsGetsNoMoreChecksThanASequence(database: TestDatabase) async throws {
        // A real bcrypt cost: every check takes long enough that the twelve overlap.
        var configuration = try await database.configuration()
        configuration.passwordHashCost = 10
        try await TestServer.run(configuration: configuration) { server in
            let email = try await Self.person(server).email
            let port = try #require(server.client.port)
            let body = ByteBuffer(string: Self.encode(["email": email, "password": Self.wrongPassword]))
            // Twelve connections at once: one connection would answer one request after another.
            let statuses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for _ in 0..<12 {
                    group.addTask {
                        try await TestClient.withClient(
                            host: "127.0.0.1",
                            port: port,
                            configuration: TestServer.ownConnection
                        ) { client in
                            let response = try await client.execute(
                                TestClient.Request(
                                    "/sign-in",
                                    method: .post,
                                    authority: "127.0.0.1",
                                    headers: [.contentType: "application/x-www-form-urlencoded"],
                                    body: body
                                )
                            )
                            return (response.status, response.headers[.retryAfter])
                        }
                    }
                }
                var all: [(HTTPResponse.Status, String?)] = []
                for try await status in group { all.append(status) }
                return all
            }
            // Exactly the documented five are checked (and wrong); the other seven wait.
            #expect(statuses.filter { $0.0 == .unauthorized }.count == 5)
            let refused = statuses.filter { $0.0 == .tooManyRequests }
            #expect(refused.count == 7)
            for (_, retryAfter) in refused { #expect((retryAfter.flatMap { Int($0) } ?? 0) > 0) }
        }
    }

    // MARK: 2. Device cookies

    @Test(arguments: TestDatabase.allCases)
    func strangersCannotLockOutAPersonWithADeviceCookie(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let person = try await Self.person(server)
            let (email, password) = (person.email, person.password)
            // The person signs in once: the browser gets a device cookie for the sign-in form.
            let first = try await Self.signIn(server, email: email, password: password)
            #expect(first.status == .seeOther)
            let device = try #require(Self.cookie(DeviceCookie.name, in: first))
            #expect(device.attributes.contains("HttpOnly"))
            #expect(device.attributes.contains("SameSite=Strict"))
            #expect(device.attributes.contains("Path=/sign-in"))
            #expect(device.attributes.contains("Max-Age=\(DeviceCookie.maximumAgeSeconds)"))
            #expect(!device.attributes.contains("Secure"))

            // Strangers guess: five wrong, then the account is locked for clients without its cookie.
            for _ in 0..<5 {
                #expect(
                    try await Self.signIn(server, email: email, password: Self.wrongPassword).status == .unauthorized
                )
            }
            let locked = try await Self.signIn(server, email: email, password: password)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] != nil)
            // A cookie made for another account, or forged, is no cookie at all.
            let other = try await Self.person(server)
            let othersDevice = try #require(
                Self.cookie(
                    DeviceCookie.name,
                    in: try await Self.signIn(server, email: other.email, password: other.password)
                )
            )
            #expect(
                try await Self.signIn(server, email: email, password: password, device: othersDevice.value).status
                    == .tooManyRequests
            )
            #expect(
                try await Self.signIn(server, email: email, password: password, device: device.value + "x").status
                    == .tooManyRequests
            )

            // The person, with the cookie from before, still signs in, and gets a new cookie.
            let again = try await Self.signIn(server, email: email, password: password, device: device.value)
            #expect(again.status == .seeOther)
            #expect(Self.cookie(ConsoleMiddleware.cookieName, in: again) != nil)
            let renewed = try #require(Self.cookie(DeviceCookie.name, in: again))
            #expect(renewed.value != device.value)

            // The first cookie, stolen and used to guess, locks itself out after five failures...
            for _ in 0..<5 {
                let guess = try await Self.signIn(
                    server,
                    email: email,
                    password: Self.wrongPassword,
                    device: device.value
                )
                #expect(guess.status == .unauthorized)
            }
            let stolen = try await Self.signIn(server, email: email, password: password, device: device.value)
            #expect(stolen.status == .tooManyRequests)
            #expect(stolen.headers[.retryAfter] != nil)
            // ...and only itself: the person's current cookie still works.
            #expect(
                try await Self.signIn(server, email: email, password: password, device: renewed.value).status
                    == .seeOther
            )
        }
    }

    @Test func deviceCookiesAreSecureOverHTTPS() async throws {
        try await TestServer.run(.sqlite) { server in
            let person = try await Self.person(server)
            let (email, password) = (person.email, person.password)
            let reply = try await Self.send(
                server,
                .post,
                "/sign-in",
                form: ["email": email, "password": password],
                headers: [HTTPField.Name("X-Forwarded-Proto")!: "https"]
            )
            #expect(Self.cookie(DeviceCookie.name, in: reply)?.attributes.contains("Secure") == true)
            #expect(Self.cookie(ConsoleMiddleware.cookieName, in: reply)?.attributes.contains("Secure") == true)
        }
    }

    // MARK: 3. Timing by unknown emails

    @Test(arguments: TestDatabase.allCases, [4, 10])
    func anUnknownEmailIsCheckedAtTheConfiguredCost(database: TestDatabase, cost: Int) async throws {
        var configuration = try await database.configuration()
        configuration.passwordHashCost = cost
        try await TestServer.run(configuration: configuration) { server in
            let reply = try await Self.signIn(server, email: "nobody@example.com", password: Self.wrongPassword)
            #expect(reply.status == .unauthorized)
            #expect(reply.text.contains("the email or the password is wrong"))
            // The hash an unknown email's password is checked against, as verify picks it.
            let hasher = server.application.accounts.hasher
            let prefix = "$2b$" + (cost < 10 ? "0" : "") + "\(cost)$"
            #expect(try await hasher.comparedHash(for: nil).hasPrefix(prefix))
            // The same cost as a real account's hash.
            let admin = try #require(try await server.application.accounts.store.user(email: "admin"))
            #expect(admin.passwordHash.hasPrefix(prefix))
        }
    }

    // MARK: 4. `next`

    /// Hostile `next` values and what a browser must be sent to after signing in.
    static let hostileNext: [(next: String, location: String)] = [
        ("/\t/evil.example", "/"),  // a browser drops the tab: //evil.example
        ("/\n/evil", "/"),
        ("/\r\n/evil", "/"),
        ("\\\\/evil", "/"),  // backslashes are slashes: ///evil
        ("/\\evil", "/"),
        ("\\/evil", "/"),
        (" //evil", "/"),  // leading spaces go
        ("\u{1}//evil", "/"),  // and leading controls
        ("//evil", "/"),
        ("https://evil", "/"),
        ("javascript:alert(1)", "/"),
        ("evil.example", "/"),
        ("", "/"),
        // Percent escapes stay a path on this server, to a browser as well.
        ("/%09/evil", "/%09/evil"),
        ("/%2F%2Fevil", "/%2F%2Fevil"),
        ("/%5C%5Cevil", "/%5C%5Cevil"),
        // Harmless ones are kept, as a browser would send them.
        ("/projects/demo/environments/production/flags", "/projects/demo/environments/production/flags"),
        ("/\tprojects", "/projects"),
        ("/flags?q=a b", "/flags?q=a%20b"),
        ("/flags?q=a\\b", "/flags?q=a%5Cb"),
        ("/caf\u{E9}", "/caf%C3%A9"),
    ]

    /// Whether a browser resolves `location` on this server's origin, as the WHATWG URL parser
    /// does: nothing it would strip or reinterpret, one leading `/`.
    static func staysOnThisOrigin(_ location: String) -> Bool {
        let path = location.prefix { $0 != "?" && $0 != "#" }
        return location.hasPrefix("/") && !location.hasPrefix("//") && !path.contains("\\")
            && !location.unicodeScalars.contains { $0.value <= 0x20 || $0.value >= 0x7F }
    }

    @Test(arguments: TestDatabase.allCases)
    func nextStaysOnThisServerAsABrowserReadsIt(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let person = try await Self.person(server, changePassword: true)
            let (email, password) = (person.email, person.password)
            for (next, expected) in Self.hostileNext {
                let reply = try await Self.signIn(server, email: email, password: password, next: next)
                #expect(reply.status == .seeOther)
                let location = try #require(reply.headers[.location])
                #expect(location == expected, "next \(next.debugDescription)")
                #expect(Self.staysOnThisOrigin(location), "next \(next.debugDescription) → \(location)")

                // The sign-in page carries the same decision into its form.
                let page = try await Self.send(server, .get, "/sign-in?next=" + ConsolePaths.encodeQueryValue(next))
                #expect(page.text.contains("name=\"next\" value=\"\(expected)\""), "next \(next.debugDescription)")
                // Signed in already, the page sends the browser on at once.
                let session = try #require(Self.cookie(ConsoleMiddleware.cookieName, in: reply)?.value)
                let signedIn = try await Self.send(
                    server,
                    .get,
                    "/sign-in?next=" + ConsolePaths.encodeQueryValue(next),
                    cookies: [ConsoleMiddleware.cookieName: session]
                )
                #expect(signedIn.headers[.location] == expected, "next \(next.debugDescription)")
            }
            // A page that needs a session sends the browser to sign in with its own address.
            let away = try await Self.send(server, .get, "/projects/demo/environments/production/flags?q=%09x")
            #expect(
                away.headers[.location]
                    == "/sign-in?next=%2Fprojects%2Fdemo%2Fenvironments%2Fproduction%2Fflags%3Fq%3D%2509x"
            )
        }
    }

    // MARK: 5. Body limits

    /// A request head sent over a raw socket, so the body can be held back.
    static func head(_ path: String, _ fields: [String]) -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Reads an answer's head and body until the connection ends or the page is complete.
    static func answer(_ socket: RawSocket) async -> String {
        await socket.read(timeout: 15) { $0.contains("</html>") || $0.hasSuffix("\r\n\r\n") && $0.contains(" 303 ") }
    }

    @Test(arguments: TestDatabase.allCases)
    func anOversizedSignInFormIsRefusedWhileItArrives(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let port = try #require(server.client.port)
            let form = "Content-Type: application/x-www-form-urlencoded"

            // Content-Length over 64 KiB: refused from the head alone; the body is never sent.
            let declared = try RawSocket(port: port)
            try declared.send(Self.head("/sign-in", [form, "Content-Length: \(65 * 1024)"]))
            let refused = await Self.answer(declared)
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused.prefix(200))")
            #expect(refused.lowercased().contains("connection: close"))
            #expect(refused.contains("at most 64 KiB"))
            #expect(await declared.waitForClose(timeout: 15))

            // Chunked: cut off as soon as it passes 64 KiB (the end is never sent).
            let chunked = try RawSocket(port: port)
            try chunked.send(Self.head("/sign-in", [form, "Transfer-Encoding: chunked"]))
            let chunk = "email=" + String(repeating: "a", count: 8186)
            for _ in 0..<8 { try chunked.send(String(chunk.utf8.count, radix: 16) + "\r\n" + chunk + "\r\n") }
            try chunked.send("1\r\na\r\n")
            let cut = await Self.answer(chunked)
            #expect(cut.hasPrefix("HTTP/1.1 413"), "\(cut.prefix(200))")
            #expect(await chunked.waitForClose(timeout: 15))

            // Exactly 64 KiB is a form like any other (a wrong password here).
            let padding = String(repeating: "b", count: 64 * 1024 - 42)
            let fits = "email=x%40example.com&password=wrong&pad=" + padding
            #expect(fits.utf8.count == 64 * 1024 - 1)
            let reply = try await server.client.executeRequest(
                uri: "/sign-in",
                method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: fits)
            )
            #expect(reply.status == .unauthorized)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func signedInFormsAreCheckedBeforeTheirBodyIsRead(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let port = try #require(server.client.port)
            let form = "Content-Type: application/x-www-form-urlencoded"
            let browser = try await ConsoleTests.signIn(server, role: "admin")

            // No session: answered from the head, the body held back.
            let signedOut = try RawSocket(port: port)
            try signedOut.send(Self.head("/keys", [form, "Content-Length: 1000"]))
            let redirect = await Self.answer(signedOut)
            #expect(redirect.hasPrefix("HTTP/1.1 303"), "\(redirect.prefix(200))")
            #expect(redirect.contains("/sign-in?next="))

            // A session, and a body declared over 64 KiB: 413 before a byte of it.
            let large = try RawSocket(port: port)
            try large.send(
                Self.head(
                    "/keys",
                    [
                        form, "Content-Length: \(64 * 1024 + 1)",
                        "Cookie: \(ConsoleMiddleware.cookieName)=\(browser.cookie)",
                    ]
                )
            )
            let refused = await Self.answer(large)
            #expect(refused.hasPrefix("HTTP/1.1 413"), "\(refused.prefix(200))")
            #expect(await large.waitForClose(timeout: 15))

            // The token is checked before the rest: a wrong one with a long form is 403.
            let padding = String(repeating: "c", count: 60 * 1024)
            let forged = try await Self.send(
                server,
                .post,
                "/keys",
                form: ["_csrf": "forged", "name": "n", "role": "client", "pad": padding],
                cookies: [ConsoleMiddleware.cookieName: browser.cookie]
            )
            #expect(forged.status == .forbidden)

            // Forms that carry template content may be larger: a 100 KiB expression is checked.
            let expression = "device.country in ['" + String(repeating: "D", count: 100 * 1024) + "']"
            let check = try await Self.send(
                server,
                .post,
                "/projects/demo/environments/production/conditions/check",
                form: ["_csrf": browser.csrf, "expression": expression],
                cookies: [ConsoleMiddleware.cookieName: browser.cookie]
            )
            #expect(check.status == .ok)
            #expect(check.object?["ok"] != nil, "\(check.text.prefix(200))")
        }
    }
}
