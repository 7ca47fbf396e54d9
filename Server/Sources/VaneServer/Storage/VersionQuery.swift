/// Filters and paging for ``ConfigStore/versions(projectId:environmentId:query:)``.
struct VersionQuery: Sendable {
    /// At most this many versions (1 … 300).
    var pageSize: Int = 100
    /// The `nextPageToken` of the previous page.
    var pageToken: String?
    /// Only versions published at or after this time (ms).
    var startTime: Int64?
    /// Only versions published before this time (ms).
    var endTime: Int64?
    /// Only versions up to this number.
    var endVersionNumber: Int64?

    /// Creates a query.
    init() {}
}
