import AsyncHTTPClient
import Foundation
package import NIOCore
import NIOHTTP1

/// Vane's requests to the identity provider — discovery, keys, the code exchange — over the
/// server's async-http-client, each bounded in time and size. Every failure is a
/// ``SignInRefusal`` saying the provider cannot be reached.
package struct ProviderHTTP: Sendable {
    /// How long one request may take.
    package var timeout: TimeAmount = .seconds(10)
    /// The largest answer read.
    package var maximumBytes = 1 << 20

    package init() {}

    /// A GET's body, when it answers 200.
    package func get(_ url: String, what: String) async throws(SignInRefusal) -> [UInt8] {
        let (status, body) = try await send(HTTPClientRequest(url: url), what: what)
        guard status == 200 else {
            throw SignInRefusal(
                .providerUnreachable,
                "the identity provider's \(what) (\(url.prefix(200))) answered HTTP \(status); check the issuer setting, or try again later"
            )
        }
        return body
    }

    /// A form POST's status and body.
    package func postForm(
        _ url: String,
        fields: [(String, String)],
        basicAuthorization: (user: String, password: String)?,
        what: String
    ) async throws(SignInRefusal) -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        if let (user, password) = basicAuthorization {
            // RFC 6749 2.3.1: each part form-encoded before base64.
            let credentials = Self.formEncode(user) + ":" + Self.formEncode(password)
            request.headers.add(name: "Authorization", value: "Basic " + Data(credentials.utf8).base64EncodedString())
        }
        let body = fields.map { Self.formEncode($0.0) + "=" + Self.formEncode($0.1) }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: body))
        return try await send(request, what: what)
    }

    private func send(_ request: HTTPClientRequest, what: String) async throws(SignInRefusal) -> (Int, [UInt8]) {
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: maximumBytes)
            return (Int(response.status.code), Array(buffer: body))
        } catch {
            throw SignInRefusal(
                .providerUnreachable,
                "Vane cannot reach the identity provider's \(what) (\(request.url.prefix(200))): \(String(describing: error).prefix(200)); try again in a minute, or ask an admin to check the provider and the issuer setting"
            )
        }
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters escaped.
    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }
}
