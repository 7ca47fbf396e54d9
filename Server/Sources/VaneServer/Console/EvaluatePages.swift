import Hummingbird
import VaneCore

/// "Who gets what": every key's value for a context, with its source and deciding condition.
extension ConsoleRoutes {
    /// Registers the evaluation pages under an environment's path.
    func registerEvaluatePages(on environment: RouterGroup<VaneRequestContext>) {
    }
}
