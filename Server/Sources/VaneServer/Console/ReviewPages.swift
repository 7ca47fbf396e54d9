import Hummingbird
import VaneCore

/// Reviewing and publishing a draft.
extension ConsoleRoutes {
    /// Registers the review pages under an environment's path.
    func registerReviewPages(on environment: RouterGroup<VaneRequestContext>) {
    }
}
