/// The ids of projects, environments and experiments.
package enum Identifier {
    /// Whether `id` is 1-63 lower-case letters, digits and dashes, starting with a letter or digit
    /// (safe in URLs, file names and SQL identifiers alike).
    package static func isValid(_ id: String) -> Bool {
        guard let first = id.utf8.first, first != UInt8(ascii: "-") else { return false }
        return isMadeOf(id, maximum: 63, upperCase: false, punctuation: "-")
    }

    /// Whether `text` is 1 to `maximum` bytes, each an ASCII letter (lower-case only unless
    /// `upperCase`), a digit or one of `punctuation`: the one rule behind ids, event ids, metric
    /// and variant names, each with its own punctuation.
    package static func isMadeOf(_ text: String, maximum: Int, upperCase: Bool = true, punctuation: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maximum else { return false }
        let extra = Array(punctuation.utf8)
        return text.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (upperCase && byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || extra.contains(byte)
        }
    }
}
