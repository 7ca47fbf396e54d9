import HTTPTypes
import Hummingbird

/// A console handler's "go there instead": 303 See Other, so a form's POST becomes a GET.
struct ConsoleRedirect: Error, Sendable {
    var location: String

    /// To the sign-in page, coming back to `next` afterwards.
    static func signIn(next: String) -> ConsoleRedirect {
        let safe = ConsolePaths.isLocal(next) ? next : "/"
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
                let hex = String(byte, radix: 16, uppercase: true)
                result += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return result
    }

    static func encodeQueryValue(_ text: String) -> String { encode(text) }

    /// `/projects/{p}/environments/{e}` with both encoded.
    static func environment(_ environment: EnvironmentKey) -> String {
        "/projects/\(encode(environment.projectId))/environments/\(encode(environment.environmentId))"
    }

    /// Whether `path` stays on this server: a path starting with one `/` (not `//host`), so a
    /// `next` parameter cannot send someone to another site after signing in.
    static func isLocal(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.hasPrefix("//") && !path.hasPrefix("/\\")
            && !path.contains(where: { $0.isNewline || $0 == "\\" })
    }
}
