import Testing

@testable import VaneServer
@testable import VaneServerCore

/// One authorization for API keys and people: what each may do where.
@Suite struct PrincipalTests {
    static let demo = EnvironmentKey(projectId: "demo", environmentId: "production")
    static let staging = EnvironmentKey(projectId: "demo", environmentId: "staging")
    static let other = EnvironmentKey(projectId: "shop", environmentId: "production")

    static func key(_ role: KeyRole, _ environment: EnvironmentKey? = demo) -> Principal {
        Principal(
            key: StoredKey(
                id: "k_1",
                name: "k",
                role: role,
                projectId: role == .admin ? nil : environment?.projectId,
                environmentId: role == .admin ? nil : environment?.environmentId,
                createTime: 0
            )
        )
    }

    static func person(_ role: UserRole, _ grants: [String] = [], disabled: Bool = false) -> Principal {
        Principal(
            user: UserAccount(
                id: "u_1",
                email: "p@example.com",
                name: "P",
                role: role,
                environments: grants.compactMap(EnvironmentGrant.init),
                mustChangePassword: false,
                createTime: 0,
                passwordTime: 0,
                disableTime: disabled ? 1 : nil
            )
        )
    }

    @Test func keysKeepTheirRoles() {
        #expect(Self.key(.admin).permits(.publish(Self.other)))
        #expect(Self.key(.server).permits(.readTemplate(Self.demo)))
        #expect(!Self.key(.server).permits(.readTemplate(Self.staging)))
        #expect(!Self.key(.server).permits(.publish(Self.demo)))
        #expect(Self.key(.client).permits(.fetch(Self.demo)))
        #expect(!Self.key(.client).permits(.readTemplate(Self.demo)))
        #expect(!Self.key(.client).permits(.readAudit))
        #expect(throws: AccessDenied(message: "this needs an admin key; the key \"k\" is a server key")) {
            try Self.key(.server).require(.administer)
        }
    }

    @Test func peopleByRoleAndGrant() {
        let viewer = Self.person(.viewer)
        #expect(viewer.permits(.readTemplate(Self.other)))
        #expect(viewer.permits(.readHistory(Self.demo)))
        #expect(viewer.permits(.readAudit))
        #expect(!viewer.permits(.publish(Self.demo)))
        #expect(!viewer.permits(.administer))

        let editor = Self.person(.editor, ["demo/staging", "shop/*"])
        #expect(editor.permits(.publish(Self.staging)))
        #expect(editor.permits(.publish(Self.other)))
        #expect(!editor.permits(.publish(Self.demo)))
        #expect(!editor.permits(.administer))
        #expect(Self.person(.editor, ["*"]).permits(.publish(Self.demo)))

        #expect(Self.person(.admin).permits(.administer))
        #expect(Self.person(.admin).permits(.publish(Self.demo)))
        #expect(!Self.person(.admin, disabled: true).permits(.readAudit))
        #expect(Self.person(.editor).actor == Actor(keyId: nil, userId: "u_1", name: "p@example.com"))
    }

    @Test func grantsParseStrictly() throws {
        #expect(EnvironmentGrant("*") == .all)
        #expect(EnvironmentGrant("demo/*") == EnvironmentGrant(projectId: "demo", environmentId: nil))
        #expect(EnvironmentGrant(" demo/production ")?.description == "demo/production")
        for bad in ["", "demo", "/x", "demo/", "*/x", "demo/pro*", "a/b/c"] {
            #expect(EnvironmentGrant(bad) == nil, "\(bad)")
        }
        #expect(try Accounts.grants("demo/staging, shop/*\n*").count == 3)
        #expect(throws: AccountError.self) { try Accounts.grants("demo/staging nonsense") }
    }

    /// The index looks keys up by the digest of the secret as four words
    /// (``KeyDigest``): the same digest as the stored hex hash, which reads back to it.
    @Test func aKeysDigestIsItsStoredHash() {
        let secret = APIKeySecret.generate(role: .client)
        let stored = APIKeySecret.hash(secret)
        #expect(KeyDigest(secret: secret).hex == stored)
        #expect(KeyDigest(hex: stored) == KeyDigest(secret: secret))
        #expect(KeyDigest(secret: secret + "x") != KeyDigest(secret: secret))
        for bad in ["", String(stored.dropLast()), stored.uppercased(), String(stored.dropLast()) + "g"] {
            #expect(KeyDigest(hex: bad) == nil, "\(bad)")
        }
    }
}
