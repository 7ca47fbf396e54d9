/// The PostgreSQL notification channel of publishes: each publish sends
/// `NOTIFY vane_versions, 'project/environment/number'` inside its transaction, so listeners
/// hear of it exactly when it commits.
package enum VersionChannel {
    /// The channel's name.
    package static let name = "vane_versions"
}
