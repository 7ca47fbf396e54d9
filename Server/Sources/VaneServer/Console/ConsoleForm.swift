import Foundation
import Hummingbird

/// A submitted console form: its fields, read only after the form's CSRF token matched the
/// session's. Reading a form is the only way a console handler gets at a POST body, so no
/// state-changing handler can forget the check.
struct ConsoleForm: Sendable {
    /// The fields; for a repeated name, its last value.
    let fields: [String: String]

    /// The most bytes a console form may send.
    static let maximumBytes = 1 << 20

    /// Reads an `application/x-www-form-urlencoded` body and checks its `_csrf` field against
    /// the session's token.
    /// - Throws: ``ConsolePageError`` (403) when the token is missing or wrong, or the body is
    ///   too large or not form data.
    static func read(_ request: Request, context: VaneRequestContext) async throws -> ConsoleForm {
        let fields = try await readFields(request, context: context)
        guard let session = context.consoleSession, let token = fields["_csrf"],
            SessionToken.equal(token, session.csrfToken)
        else {
            throw ConsolePageError.forbidden(
                "the form's security token is missing or out of date; reload the page and send it again"
            )
        }
        return ConsoleForm(fields: fields)
    }

    /// Reads a form without a session (sign-in, where there is no session yet; the
    /// SameSite=Strict cookie and the Origin check stand in for the token there).
    static func readFields(_ request: Request, context: VaneRequestContext) async throws -> [String: String] {
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-www-form-urlencoded") else {
            throw ConsolePageError.badRequest("console forms are sent as application/x-www-form-urlencoded")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maximumBytes)
        } catch {
            throw ConsolePageError.badRequest("the form is larger than \(maximumBytes / 1024) KB")
        }
        return parse(String(buffer: buffer))
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
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
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
