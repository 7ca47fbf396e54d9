extension EvaluationContext {
    /// The member names that hold the randomization id: Vane's and OpenFeature's.
    public static let randomizationIdKeys = ["randomizationId", "targetingKey"]

    /// Reads a context from a JSON object: `randomizationId` (or OpenFeature's `targetingKey`)
    /// plus attributes.
    ///
    /// ```json
    /// {"randomizationId": "user-42", "app.version": "2.4.0", "device.country": "de", "beta": true,
    ///  "app.audiences": ["Purchasers"]}
    /// ```
    /// Strings, numbers, Booleans and lists of strings become attributes; `null` leaves the
    /// attribute out. A date is written as an ISO 8601 string.
    /// - Throws: ``DocumentError`` naming every member of an unsupported type.
    public init(json: JSONValue, at path: JSONPath = .root) throws(DocumentError) {
        guard case .object(let object) = json else {
            throw DocumentError(issues: [
                ValidationIssue(
                    .error,
                    at: path,
                    rule: "type",
                    "expected a context object, found \(json.kindDescription)"
                )
            ])
        }
        var issues: [ValidationIssue] = []
        var context = EvaluationContext()
        // Sized once: grown member by member, the dictionary was reallocated and rehashed as it filled.
        context.attributes.reserveCapacity(object.count)
        for member in object {
            // Made only for an issue: a path is an allocation, and fetch reads a context per request.
            var memberPath: JSONPath { path.appending(member.key) }
            if Self.randomizationIdKeys.contains(member.key) {
                switch member.value {
                case .string(let id): context.randomizationId = id
                case .null: break
                default:
                    issues.append(
                        ValidationIssue(
                            .error,
                            at: memberPath,
                            rule: "type",
                            "expected a string, found \(member.value.kindDescription)"
                        )
                    )
                }
                continue
            }
            switch member.value {
            case .null: break
            case .string(let string): context.attributes[member.key] = .string(string)
            case .number(let number): context.attributes[member.key] = .number(number.value)
            case .bool(let bool): context.attributes[member.key] = .bool(bool)
            case .array(let elements):
                var strings: [String] = []
                for (index, element) in elements.enumerated() {
                    guard case .string(let string) = element else {
                        issues.append(
                            ValidationIssue(
                                .error,
                                at: memberPath.appending(index),
                                rule: "type",
                                "expected a string in an attribute list, found \(element.kindDescription)"
                            )
                        )
                        continue
                    }
                    strings.append(string)
                }
                context.attributes[member.key] = .stringList(strings)
            case .object:
                issues.append(
                    ValidationIssue(
                        .error,
                        at: memberPath,
                        rule: "type",
                        "an attribute must be a string, number, Boolean or list of strings, found an object; "
                            + "write nested values as separate attributes"
                    )
                )
            }
        }
        guard issues.isEmpty else { throw DocumentError(issues: issues) }
        self = context
    }

    /// The context as the JSON object ``init(json:at:)`` reads: `randomizationId` first, then the
    /// attributes in name order (so equal contexts give equal text). Dates are ISO 8601 strings.
    public func json() -> JSONValue {
        var object = JSONObject()
        if let randomizationId { object["randomizationId"] = .string(randomizationId) }
        for name in attributes.keys.sorted() {
            guard let value = attributes[name] else { continue }
            switch value {
            case .string(let string): object[name] = .string(string)
            case .number(let number): object[name] = .number(JSONNumber(number))
            case .bool(let bool): object[name] = .bool(bool)
            case .date(let date): object[name] = .string(ISO8601Timestamp.string(from: date))
            case .stringList(let strings): object[name] = .array(strings.map { .string($0) })
            }
        }
        return .object(object)
    }
}
