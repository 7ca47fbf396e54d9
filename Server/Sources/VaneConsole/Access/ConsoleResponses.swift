import HTTPTypes
import Hummingbird
import VaneServerCore

/// A console handler's "go there instead": 303 See Other, so a form's POST becomes a GET.
struct ConsoleRedirect: Error, Sendable {
    var location: String

    /// To the sign-in page, coming back to `next` afterwards.
    static func signIn(next: String) -> ConsoleRedirect {
        let safe = ConsolePaths.sameOriginPath(next) ?? "/"
        return ConsoleRedirect(location: "/sign-in?next=" + ConsolePaths.encodeQueryValue(safe))
    }

    var response: Response {
        var headers = ConsolePageRenderer.securityHeaders
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }
}

/// A console page that cannot be shown: rendered as an error page with the status.
struct ConsolePageError: Error, Sendable {
    var status: HTTPResponse.Status
    var heading: String
    var message: String

    static func notFound(_ message: String) -> ConsolePageError {
        ConsolePageError(status: .notFound, heading: "Not found", message: message)
    }

    static func badRequest(_ message: String) -> ConsolePageError {
        ConsolePageError(status: .badRequest, heading: "That request cannot be used", message: message)
    }

    static func forbidden(_ message: String) -> ConsolePageError {
        ConsolePageError(status: .forbidden, heading: "Not allowed", message: message)
    }

    /// 413: a form's body is over its limit (``ConsoleForm/Limit``).
    static func tooLarge(limit: Int) -> ConsolePageError {
        let size = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"
        return ConsolePageError(
            status: .contentTooLarge,
            heading: "The form is too large",
            message:
                "this form can send at most \(size) and this one sends more; shorten what you entered and send it again"
        )
    }
}

/// Building console URLs: path segments and query values are percent-encoded, so a flag key
/// or project id can never break out of its place in a link.
enum ConsolePaths {
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                result.append(Character(Unicode.Scalar(byte)))
            } else {
                result += escape(byte)
            }
        }
        return result
    }

    /// `%XX`, upper-case hex.
    private static func escape(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        return "%" + (hex.count == 1 ? "0" + hex : hex)
    }

    static func encodeQueryValue(_ text: String) -> String { encode(text) }

    /// `/projects/{p}/environments/{e}` with both encoded.
    static func environment(_ environment: EnvironmentKey) -> String {
        "/projects/\(encode(environment.projectId))/environments/\(encode(environment.environmentId))"
    }

    /// A flag's editor: `/projects/{p}/environments/{e}/flags/{key}/edit`.
    static func flagEditor(_ environment: EnvironmentKey, key: String) -> String {
        self.environment(environment) + "/flags/" + encode(key) + "/edit"
    }

    /// `next` as a browser reads it, when that is a path on this server; nil when a browser
    /// would leave it (another host, a scheme) or it is no path at all.
    ///
    /// Decided the way the WHATWG URL parser resolves it against this server's origin: leading
    /// and trailing C0 controls and spaces go, every ASCII tab and newline goes wherever it is
    /// (`/\t/evil.example` is `//evil.example` to a browser), and `\` is `/` before the query.
    /// What is left must start with exactly one `/`. The result is what the redirect sends, with
    /// the characters a browser would percent-encode (controls, spaces, quotes, non-ASCII)
    /// percent-encoded, so the browser reads it exactly as decided here. Percent escapes stay as
    /// they are: `/%2F%2Fevil` is a path on this server to a browser too.
    static func sameOriginPath(_ next: String) -> String? {
        var scalars = Array(next.unicodeScalars)
        while let first = scalars.first, first.value <= 0x20 { scalars.removeFirst() }
        while let last = scalars.last, last.value <= 0x20 { scalars.removeLast() }
        scalars.removeAll { $0 == "\t" || $0 == "\n" || $0 == "\r" }
        var path = ""
        var beforeQuery = true
        for scalar in scalars {
            if scalar == "?" || scalar == "#" { beforeQuery = false }
            if beforeQuery, scalar == "\\" {
                path += "/"
            } else if scalar.value <= 0x20 || scalar.value >= 0x7F || "\"<>`{}|\\^".unicodeScalars.contains(scalar) {
                for byte in String(scalar).utf8 { path += escape(byte) }
            } else {
                path.unicodeScalars.append(scalar)
            }
        }
        guard path.hasPrefix("/"), !path.hasPrefix("//") else { return nil }
        return path
    }
}
