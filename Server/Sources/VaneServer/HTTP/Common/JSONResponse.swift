import Hummingbird
import NIOCore
import VaneCore

/// JSON responses from ``JSONValue``s.
enum JSONResponse {
    /// A JSON response.
    static func make(_ json: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        make(text: json.serialized(.compact), status: status, headers: headers)
    }

    /// A JSON response from already-serialized text.
    static func make(text: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A JSON response from already-serialized bytes (the wire contract's fixed bodies).
    static func make(bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
