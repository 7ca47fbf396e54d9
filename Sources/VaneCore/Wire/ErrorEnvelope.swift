/// The body of every error the HTTP API answers (Google's envelope, as Firebase's API uses):
///
/// ```json
/// {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "the template has 2 problems",
///            "details": [{"path": "$.conditions[0].expression", "rule": "condition-syntax",
///                         "severity": "error", "message": "column 12: expected ')'"}]}}
/// ```
public struct ErrorEnvelope: Sendable, Hashable {
    /// One problem of several, each at its JSON path.
    public struct Detail: Sendable, Hashable {
        /// Where the problem is (`$.parameters.banner.defaultValue`).
        public var path: String
        /// The rule that found it.
        public var rule: String
        /// `error` or `warning`.
        public var severity: String
        /// What is wrong and what is expected.
        public var message: String

        /// Creates a detail.
        public init(path: String, rule: String, severity: String, message: String) {
            self.path = path
            self.rule = rule
            self.severity = severity
            self.message = message
        }
    }

    /// The HTTP status.
    public var code: Int
    /// The canonical status name (`INVALID_ARGUMENT`, `NOT_FOUND`, …).
    public var status: String
    /// What went wrong, for people.
    public var message: String
    /// The problems, when there are several.
    public var details: [Detail]

    /// Creates an envelope.
    public init(code: Int, status: String, message: String, details: [Detail] = []) {
        self.code = code
        self.status = status
        self.message = message
        self.details = details
    }

    /// Reads an error body; nil when it is not an envelope with a message (a proxy's page, say).
    public init?(json: JSONValue) {
        guard let error = json.objectValue?["error"]?.objectValue, let message = error["message"]?.stringValue
        else { return nil }
        let details = (error["details"]?.arrayValue ?? []).compactMap { detail -> Detail? in
            guard let object = detail.objectValue else { return nil }
            return Detail(
                path: object["path"]?.stringValue ?? "",
                rule: object["rule"]?.stringValue ?? "",
                severity: object["severity"]?.stringValue ?? "error",
                message: object["message"]?.stringValue ?? ""
            )
        }
        self.init(
            code: error["code"]?.numberValue?.intValue ?? 0,
            status: error["status"]?.stringValue ?? "",
            message: message,
            details: details
        )
    }

    /// Reads an error body's bytes; nil when they are not an envelope.
    public init?(bytes: [UInt8]) {
        guard let json = try? JSONValue.parse(bytes) else { return nil }
        self.init(json: json)
    }

    /// The envelope as JSON; `details` is left out when empty.
    public func json() -> JSONValue {
        var error: JSONObject = [
            "code": .number(JSONNumber(code)), "status": .string(status), "message": .string(message),
        ]
        if !details.isEmpty {
            error["details"] = .array(
                details.map { detail in
                    .object([
                        "path": .string(detail.path), "rule": .string(detail.rule),
                        "severity": .string(detail.severity), "message": .string(detail.message),
                    ])
                }
            )
        }
        return .object(["error": .object(error)])
    }
}
