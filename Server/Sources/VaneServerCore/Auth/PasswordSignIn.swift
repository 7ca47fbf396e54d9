/// Who may sign in to the console with a password. With single sign-on, password sign-in can be
/// turned off for everyone but one named admin account, the break-glass account for when the
/// identity provider is down or misconfigured.
package enum PasswordSignIn: Sendable, Hashable {
    /// Every account with a password (the default).
    case everyone
    /// Only the admin account with this email (lower-cased); everyone else uses single sign-on.
    case breakGlassOnly(email: String)
    /// Nobody: single sign-on only.
    case nobody

    /// Whether an email may try a password at all (checked before the attempt is counted).
    package func admits(email: String) -> Bool {
        switch self {
        case .everyone: true
        case .breakGlassOnly(let admin): admin == email
        case .nobody: false
        }
    }

    /// Whether a password sign-in form is offered on the sign-in page.
    package var isOffered: Bool { self != .nobody }
}
