/// A key that may not do what it asked: the wrong role, or another environment. HTTP answers
/// it with 403; OFREP with its bodiless 403.
package struct AccessDenied: Error, Sendable, Equatable {
    /// Which key, what it is, and what was needed.
    package var message: String
}
