/// How the HTTP API writes a template version number: a JSON string (`"12"`), as Firebase does,
/// so that numbers past 2^53 survive JavaScript clients. Readers also accept a JSON number.
enum TemplateVersionNumber {
    /// The JSON form of a version number.
    static func json(_ number: Int64) -> JSONValue { .string(String(number)) }

    /// Reads a version number sent as a string or a whole number; a missing member reads as 0.
    ///
    /// - Returns: nil when the value is neither (the caller names the JSON path in its error).
    static func read(_ value: JSONValue?) -> Int64? {
        switch value {
        case nil: return 0
        case .string(let text)?: return Int64(text)
        case .number(let number)?: return number.intValue.map(Int64.init)
        default: return nil
        }
    }
}
