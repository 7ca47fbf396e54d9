import Foundation
import HTTPTypes
import Testing
import VaneCore

@testable import VaneConsole
@testable import VaneServer
@testable import VaneServerCore

/// Environments people can tell apart: a colour admins set (API and console), shown in the
/// console's bars, readable on every colour of the palette.
@Suite(.timeLimit(.minutes(5))) struct EnvironmentColourTests {
    @Test func everyColourOfThePaletteReadsAtWCAGAAAndHasItsClass() throws {
        let css = try #require(EmbeddedConsoleAssets.files["static/console.css"])
        for colour in EnvironmentColour.allCases {
            #expect(colour.contrast >= 4.5, "\(colour): \(colour.contrast)")
            #expect(
                css.contains(
                    ".environment-colour-\(colour) { background: \(colour.background); color: \(colour.text); }"
                ),
                "console.css styles \(colour) as EnvironmentColour says"
            )
            #expect(
                css.contains(".environment-colour-edge-\(colour) { border-top: 0.35rem solid \(colour.background); }")
            )
        }
        #expect(throws: EnvironmentColourError.self) { try EnvironmentColour(name: "#ff0000") }
        #expect(try EnvironmentColour(name: " Red ") == .red)
    }

    @Test(arguments: TestDatabase.allCases)
    func anAdminSetsAndClearsAColourInTheAPI(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let path = "/v1/projects/demo/environments/production"
            let set = try await server.send(.patch, path, json: ["colour": "red"])
            #expect(set.status == .ok)
            #expect(set.object?["colour"] == "red")
            let list = try await server.send(.get, "/v1/projects/demo/environments")
            let production = list.object?["environments"]?.arrayValue?.first { $0.objectValue?["id"] == "production" }
            #expect(production?.objectValue?["colour"] == "red")

            let bad = try await server.send(.patch, path, json: ["colour": "#ff0000"])
            #expect(bad.status == .badRequest)
            #expect(bad.errorMessage?.contains("red, orange, yellow") == true)
            let missing = try await server.send(.patch, path, json: ["name": "x"])
            #expect(missing.status == .badRequest)
            let nowhere = try await server.send(
                .patch,
                "/v1/projects/demo/environments/nowhere",
                json: ["colour": "red"]
            )
            #expect(nowhere.status == .notFound)
            // Only admins.
            let server2 = try await server.send(
                .post,
                "/v1/keys",
                json: ["name": "svc", "role": "server", "project": "demo", "environment": "production"]
            )
            let serverKey = try #require(server2.object?["key"]?.stringValue)
            let refused = try await server.send(.patch, path, key: serverKey, json: ["colour": "blue"])
            #expect(refused.status == .forbidden)

            let cleared = try await server.send(.patch, path, json: ["colour": .null])
            #expect(cleared.status == .ok)
            #expect(cleared.object?["colour"] == nil)
            let audit = try await server.send(.get, "/v1/audit?action=environment.update")
            #expect(audit.object?["entries"]?.arrayValue?.count == 2)
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func theConsoleShowsTheColourInItsBarsAndAdminsChooseIt(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let home = try await admin.get(server, "/")
            #expect(home.text.contains("<label for=\"colour-demo-production\">Colour of Production</label>"))
            #expect(
                !(try await viewer.get(server, "/")).text.contains("Set colour")
            )

            let path = "/projects/demo/environments/production/colour"
            let refused = try await viewer.post(server, path, ["colour": "red"])
            #expect(refused.status == .forbidden)
            let bad = try await admin.post(server, path, ["colour": "rouge"])
            #expect(bad.status == .badRequest)
            let set = try await admin.post(server, path, ["colour": "red"])
            #expect(set.status == .seeOther)

            let production = try await viewer.get(server, "/projects/demo/environments/production/flags")
            #expect(production.text.contains("<header class=\"top-bar environment-colour-edge-red\">"))
            #expect(production.text.contains("class=\"environment-bar environment-colour-edge-red\""))
            #expect(
                production.text.contains(
                    "<strong class=\"environment-name environment-colour-red\">Production</strong>"
                )
            )
            let staging = try await viewer.get(server, "/projects/demo/environments/staging/flags")
            #expect(!staging.text.contains("environment-colour-red"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func grantsAreChosenFromTheEnvironmentsAndRefusalsNamePeople(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let admin = try await ConsoleTests.signIn(server, role: "admin")
            let page = try await admin.get(server, "/users")
            #expect(page.text.contains("name=\"grant:demo/staging\""))
            #expect(page.text.contains("name=\"grant:demo/*\""))
            #expect(!page.text.contains("name=\"environments\" type=\"text\""))
            let created = try await ConsoleTests.request(
                server,
                .post,
                "/users",
                form: [
                    "_csrf": admin.csrf, "email": "qa@example.com", "role": "editor", "grant:demo/staging": "yes",
                ],
                cookie: admin.cookie
            )
            #expect(created.status == .ok)
            let qa = try #require(
                try await server.application.accounts.store.users().first { $0.email == "qa@example.com" }
            )
            #expect(qa.environments.map(\.description) == ["demo/staging"])
            let account = try await admin.get(server, "/users/\(qa.id)")
            #expect(account.text.contains("name=\"grant:demo/staging\" value=\"yes\" checked"))

            // The refusal names the page the navigation calls People.
            let editor = try await ConsoleTests.signIn(server, role: "editor", environments: ["demo/staging"])
            let refused = try await editor.get(server, "/projects/demo/environments/production/flags/new")
            #expect(refused.status == .forbidden)
            #expect(refused.text.contains("People page"))
            #expect(!refused.text.contains("Users page"))
        }
    }

    @Test(arguments: TestDatabase.allCases)
    func flagCardsHaveNoEmptyLabels(database: TestDatabase) async throws {
        try await TestServer.run(database) { server in
            let viewer = try await ConsoleTests.signIn(server, role: "viewer")
            let page = try await viewer.get(server, "/projects/demo/environments/production/flags")
            // A viewer can neither switch nor copy: a string flag's last cell is empty and unlabelled.
            #expect(!page.text.contains("<td data-label=\"Actions\"></td>"))
            #expect(!page.text.contains("<td data-label=\"Kill switch\"></td>"))
            #expect(!page.text.contains("<td data-label=\"Last change\"></td>"))
            // Closed from the server, so a phone without script sees flags first; open while filtering.
            #expect(page.text.contains("<details class=\"filters-toggle\" data-open-on-wide>"))
            let filtered = try await viewer.get(server, "/projects/demo/environments/production/flags?q=banner")
            #expect(filtered.text.contains("<details class=\"filters-toggle\" open data-open-on-wide>"))
        }
    }
}
