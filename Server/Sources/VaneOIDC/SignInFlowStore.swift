import SQLKit
package import VaneServerCore

/// A sign-in sent to the provider and not back yet: what its way back must match.
package struct SignInFlow: Sendable, Equatable {
    package var nonce: String
    package var codeVerifier: String
    /// Where the person goes once signed in (a path on this server).
    package var next: String
    package var createTime: Int64
}

/// Sign-ins under way (`oidc_sign_ins`, migration 14), in the database so that the provider may
/// send the browser back to any node. A flow is taken out by its state exactly once: a second
/// way back with the same state finds nothing.
package struct SignInFlowStore: Sendable {
    package let engine: DatabaseEngine
    /// How long a person has at the provider before the sign-in is forgotten.
    package static let lifetimeMilliseconds: Int64 = 10 * 60_000

    package init(engine: DatabaseEngine) {
        self.engine = engine
    }

    /// Records a flow under the SHA-256 of its state, and forgets flows past their lifetime.
    package func insert(state: String, flow: SignInFlow) async throws {
        try await engine.withSession { database in
            try await database.raw(
                "DELETE FROM oidc_sign_ins WHERE create_time < \(bind: flow.createTime - Self.lifetimeMilliseconds)"
            ).run()
            try await database.raw(
                """
                INSERT INTO oidc_sign_ins (state_hash, nonce, code_verifier, next_path, create_time) \
                VALUES (\(bind: SessionToken.hash(state)), \(bind: flow.nonce), \(bind: flow.codeVerifier), \
                \(bind: flow.next), \(bind: flow.createTime))
                """
            ).run()
        }
    }

    /// Takes out the flow of a state: deleted in the same statement, so two ways back with one
    /// state never both get it. Nil: unknown, used already, or older than its lifetime.
    package func take(state: String, now: Int64) async throws -> SignInFlow? {
        try await engine.withSession { database in
            guard
                let row = try await database.raw(
                    """
                    DELETE FROM oidc_sign_ins WHERE state_hash = \(bind: SessionToken.hash(state)) \
                    RETURNING nonce, code_verifier, next_path, create_time
                    """
                ).first()
            else { return nil }
            let flow = SignInFlow(
                nonce: try row.decode(column: "nonce", as: String.self),
                codeVerifier: try row.decode(column: "code_verifier", as: String.self),
                next: try row.decode(column: "next_path", as: String.self),
                createTime: try row.decode(column: "create_time", as: Int64.self)
            )
            return now - flow.createTime > Self.lifetimeMilliseconds ? nil : flow
        }
    }
}
