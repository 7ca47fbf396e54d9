package import Hummingbird
import NIOCore
package import VaneCore

/// JSON responses from ``JSONValue``s.
package enum JSONResponse {
    /// A JSON response.
    package static func make(
        _ json: JSONValue,
        status: HTTPResponse.Status = .ok,
        headers: HTTPFields = [:]
    ) -> Response {
        make(text: json.serialized(.compact), status: status, headers: headers)
    }

    /// A JSON response from already-serialized text.
    package static func make(text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A JSON response from already-serialized bytes (the wire contract's fixed bodies).
    package static func make(bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
