import Foundation
import Hummingbird
import NIOCore
import VaneServerCore

/// A submitted console form: its fields, read only after the form's CSRF token matched the
/// session's. Reading a form is the only way a console handler gets at a POST body, so no
/// state-changing handler can forget the check.
///
/// Bodies are bounded while they arrive (``Limit``): a `Content-Length` over the limit is refused
/// before a byte of the body is read, any other body as soon as it passes the limit (413; the
/// connection then closes).
struct ConsoleForm: Sendable {
    /// The fields; for a repeated name, its last value.
    let fields: [String: String]

    /// The most bytes a form may send.
    enum Limit: Sendable {
        /// Every console form but those below, the sign-in form included: 64 KiB.
        case standard
        /// Forms that carry template content — the flag editor's values, a condition's
        /// expression, the conditions' order — may be as large as a template sent to the API
        /// (8 MiB): a JSON value can be long, and form encoding triples its quotes and braces.
        case templateContent

        var bytes: Int {
            switch self {
            case .standard: ServerLimits.maximumSmallBodyBytes
            case .templateContent: ServerLimits.maximumTemplateBytes
            }
        }
    }

    /// Reads an `application/x-www-form-urlencoded` body of a signed-in person and checks its
    /// `_csrf` field against the session's token: the session before a byte of the body is read,
    /// the token before the other fields are decoded.
    /// - Throws: ``ConsolePageError``: 403 without a session or with a missing or wrong token,
    ///   413 when the body is larger than `limit`, 400 when it is not form data.
    static func read(
        _ request: Request,
        context: VaneRequestContext,
        limit: Limit = .standard
    ) async throws -> ConsoleForm {
        guard let session = context.consoleSession else {
            throw ConsolePageError.forbidden(
                "you are not signed in (or your session ended); sign in and send the form again"
            )
        }
        let body = try await body(request, limit: limit)
        guard let token = lastValue(of: "_csrf", in: body), SessionToken.equal(token, session.csrfToken) else {
            throw ConsolePageError.forbidden(
                "the form's security token is missing or out of date; reload the page and send it again"
            )
        }
        return ConsoleForm(fields: parse(body))
    }

    /// Reads a form without a session (sign-in, where there is no session yet; the
    /// SameSite=Strict cookie and the Origin check stand in for the token there), at the
    /// standard limit.
    static func readFields(_ request: Request, context: VaneRequestContext) async throws -> [String: String] {
        parse(try await body(request, limit: .standard))
    }

    /// A form's body as text, refused as soon as it is known to be larger than `limit`.
    private static func body(_ request: Request, limit: Limit) async throws -> String {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            throw ConsolePageError.badRequest("console forms are sent as application/x-www-form-urlencoded")
        }
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit.bytes {
            throw ConsolePageError.tooLarge(limit: limit.bytes)
        }
        do {
            let buffer = try await request.body.collect(upTo: limit.bytes)
            return String(buffer: buffer)
        } catch is NIOTooManyBytesError {
            throw ConsolePageError.tooLarge(limit: limit.bytes)
        }
    }

    /// The decoded value of the last `name=` pair, without decoding any other pair.
    static func lastValue(of name: String, in text: String) -> String? {
        let prefix = name + "="
        var value: Substring?
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) where pair.hasPrefix(prefix) {
            value = pair.dropFirst(prefix.count)
        }
        return value.map(decode)
    }

    /// The fields of a request's query, as a `GET` form sends them (`q=two+words` is "two
    /// words"; Hummingbird's `queryParameters` keeps the `+`).
    static func query(_ request: Request) -> [String: String] {
        parse(request.uri.query ?? "")
    }

    /// `a=1&b=two+words&c=%C3%A9` → fields. Malformed percent escapes keep their raw text.
    static func parse(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    /// `two+words%21` → "two words!"; a malformed escape keeps its raw text.
    private static func decode(_ part: Substring) -> String {
        let spaced = part.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// A field, trimmed; nil when missing or empty.
    func text(_ name: String) -> String? {
        guard let value = fields[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
            return nil
        }
        return value
    }

    /// A required field.
    func required(_ name: String, label: String) throws(ConsolePageError) -> String {
        guard let value = text(name) else { throw ConsolePageError.badRequest("\(label) is required") }
        return value
    }
}
