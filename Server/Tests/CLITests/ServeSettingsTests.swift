import Foundation
import TestSupport
import Testing

@testable import VaneCLI

/// `vane serve`'s settings are declared once, in `ServeSettings.all`: parsing, variables and
/// `--help` all come from that table.
@Suite(.timeLimit(.minutes(2))) struct ServeSettingsTests {
    @Test func helpListsEverySettingWithItsVariableAndHelp() async throws {
        let help = try await CLIRunner.run(["serve", "--help"], timeout: 30)
        #expect(help.status == 0, "\(help.stderr)")
        // ArgumentParser wraps the text: compare with runs of white space collapsed.
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for setting in ServeSettings.all {
            if let option = setting.option { #expect(text.contains(option), "\(option) is missing") }
            if let variable = setting.variable { #expect(text.contains("$" + variable), "\(variable) is missing") }
            let help = setting.help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            #expect(text.contains(help), "the help of \(setting.option ?? setting.variable ?? "?") is missing")
        }
    }

    @Test func optionsWinOverVariablesAndTakeBothSpellings() throws {
        let values = try ServeSettings.values(
            arguments: ["--port=0", "--trusted-proxy", "10.0.0.1", "--trusted-proxy=::1", "--no-demo", "--port", "9"],
            environment: [
                "VANE_PORT": "7", "VANE_RATE_LIMIT": "3", "VANE_TRUSTED_PROXIES": "192.168.0.1, 10.0.0.0/8",
                "VANE_METRICS_REQUIRE_KEY": "true", "VANE_LOG_LEVEL": "debug",
            ]
        )
        #expect(values.configuration.port == 9, "the last of an option given twice")
        #expect(values.configuration.rateLimit == 3)
        #expect(values.configuration.trustedProxies == ["10.0.0.1", "::1"], "the options replace the variable's list")
        #expect(values.configuration.createsDemoProject == false)
        #expect(values.configuration.metricsRequireKey)
        #expect(values.logLevel == .debug)
        let fromVariables = try ServeSettings.values(
            arguments: [],
            environment: ["VANE_TRUSTED_PROXIES": "192.168.0.1, 10.0.0.0/8"]
        )
        #expect(fromVariables.configuration.trustedProxies == ["192.168.0.1", "10.0.0.0/8"])
        #expect(fromVariables.configuration.port == 8080, "the configuration's default")
        let overridden = try ServeSettings.values(arguments: ["--port", "0"], environment: ["VANE_PORT": "eighty"])
        #expect(overridden.configuration.port == 0, "a variable an option overrides is not read")
    }

    @Test func singleSignOnSettingsComeFromOptionsVariablesAndASecretFile() throws {
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-\(UUID().uuidString)")
        try "a-client-secret\nsecond line\n".write(to: secretFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        let values = try ServeSettings.values(
            arguments: [
                "--oidc-issuer", "https://id.example.com/realms/acme", "--oidc-client-id", "vane",
                "--oidc-client-secret-file", secretFile.path, "--oidc-group-role", "vane-admins=admin",
                "--oidc-group-role=vane-editors=editor:demo/*", "--no-password-sign-in",
            ],
            environment: [
                "VANE_OIDC_REDIRECT_URL": "https://vane.example.com/sign-in/oidc/callback",
                "VANE_OIDC_ALLOWED_DOMAINS": "example.com, example.org", "VANE_OIDC_GROUPS_CLAIM": "groups",
                "VANE_BREAK_GLASS_EMAIL": "Root@Example.com", "VANE_OIDC_CLIENT_SECRET": "overridden by the file",
            ]
        )
        let sso = values.configuration.singleSignOn
        #expect(sso.clientSecret == "a-client-secret", "the file's first line, over the variable")
        #expect(sso.allowedDomains == ["example.com", "example.org"])
        #expect(sso.groupRoles == ["vane-admins=admin", "vane-editors=editor:demo/*"])
        #expect(values.configuration.passwordSignIn == .breakGlassOnly(email: "root@example.com"))
    }

    @Test(arguments: [
        (["--no-password-sign-in"], "--no-password-sign-in needs single sign-on"),
        (["--oidc-client-id", "vane"], "--oidc-issuer must be given"),
        (
            ["--oidc-issuer", "http://id.example.com", "--oidc-client-id", "v", "--oidc-redirect-url", "https://v/x"],
            "--oidc-issuer must use https"
        ),
        (
            [
                "--oidc-issuer", "https://id.example.com", "--oidc-client-id", "v", "--oidc-redirect-url",
                "https://v.example.com/sign-in/oidc/callback", "--oidc-groups-claim", "groups", "--oidc-group-role",
                "admins=owner",
            ],
            #"--oidc-group-role "admins=owner" names no role"#
        ),
    ])
    func singleSignOnSettingsAreCheckedAndNamed(arguments: [String], message: String) {
        let error = #expect(throws: InputError.self) {
            try ServeSettings.values(arguments: arguments, environment: [:])
        }
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    @Test(arguments: [
        (["--prot", "1"], #"unknown option or argument "--prot""#),
        (["8080"], #"unknown option or argument "8080""#),
        (["--port"], "--port needs a value"),
        (["--no-demo=yes"], "--no-demo takes no value"),
        (["--port", "eighty"], #"--port must be a whole number, found "eighty""#),
    ])
    func badArgumentsAreNamed(arguments: [String], message: String) {
        let error = #expect(throws: InputError.self) {
            try ServeSettings.values(arguments: arguments, environment: [:])
        }
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }
}
