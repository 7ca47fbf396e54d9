/// The ids of projects, environments and experiments.
enum Identifier {
    /// Whether `id` is 1-63 lower-case letters, digits and dashes, starting with a letter or digit
    /// (safe in URLs, file names and SQL identifiers alike).
    static func isValid(_ id: String) -> Bool {
        guard let first = id.utf8.first, id.utf8.count <= 63 else { return false }
        let allowed = { (byte: UInt8) in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
        return allowed(first) && id.utf8.allSatisfy { allowed($0) || $0 == UInt8(ascii: "-") }
    }
}
