package import HTTPTypes

/// A request's `If-None-Match` fields, read in place.
extension HTTPFields: EntityTagSource {
    package func containsTag(where matches: (Substring) -> Bool) -> Bool {
        contains { field in
            field.name == .ifNoneMatch && EntityTags.contains(inFieldValue: field.value, where: matches)
        }
    }

    /// Whether `If-None-Match` names `etag` (in a list, or as `*`).
    package func ifNoneMatch(matches etag: String) -> Bool {
        let wanted = EntityTags.bare(Substring(etag))
        return containsTag { $0 == "*" || $0 == wanted }
    }
}
