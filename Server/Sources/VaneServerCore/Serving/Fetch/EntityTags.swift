/// The entity tags a request names in `If-None-Match`, whatever carries them: the HTTP adapter
/// reads its header fields, tests a plain list.
package protocol EntityTagSource {
    /// Whether `matches` holds for one of the tags, each bare (see ``EntityTags/bare(_:)``).
    func containsTag(where matches: (Substring) -> Bool) -> Bool
}

extension EntityTagSource {
    /// Whether `matches` holds for one of the first `limit` tags; later tags are not looked at.
    package func containsTag(amongFirst limit: Int, where matches: (Substring) -> Bool) -> Bool {
        var examined = 0
        var found = false
        _ = containsTag { tag in
            examined += 1
            guard examined <= limit else { return true }  // stops the scan
            found = matches(tag)
            return found
        }
        return found
    }
}

/// Reading entity tags. Works on UTF-8 and slices, never allocating: this runs on every poll.
package enum EntityTags {
    /// An entity tag without surrounding blanks, quotes or a weak prefix.
    package static func bare(_ value: Substring) -> Substring {
        var text = value.utf8[...]
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        while let first = text.first, blank(first) { text = text.dropFirst() }
        while let last = text.last, blank(last) { text = text.dropLast() }
        if text.starts(with: "W/".utf8) { text = text.dropFirst(2) }
        if text.count >= 2, text.first == UInt8(ascii: "\""), text.last == UInt8(ascii: "\"") {
            text = text.dropFirst().dropLast()
        }
        return Substring(text)
    }

    /// Whether `matches` holds for one of the bare tags of one field value (a comma-separated list).
    package static func contains(inFieldValue value: String, where matches: (Substring) -> Bool) -> Bool {
        let utf8 = value.utf8
        var start = utf8.startIndex
        while true {
            let end = utf8[start...].firstIndex(of: UInt8(ascii: ",")) ?? utf8.endIndex
            if matches(bare(value[start..<end])) { return true }
            guard end < utf8.endIndex else { return false }
            start = utf8.index(after: end)
        }
    }
}
