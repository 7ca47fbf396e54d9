/// Filters and paging for ``ConfigStore/versions(projectId:environmentId:query:)``.
package struct VersionQuery: Sendable {
    /// At most this many versions (1 … 300).
    package var pageSize: Int = 100
    /// The `nextPageToken` of the previous page.
    package var pageToken: String?
    /// Only versions published at or after this time (ms).
    package var startTime: Int64?
    /// Only versions published before this time (ms).
    package var endTime: Int64?
    /// Only versions up to this number.
    package var endVersionNumber: Int64?

    /// Creates a query.
    package init() {}
}
