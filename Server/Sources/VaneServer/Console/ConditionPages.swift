import Hummingbird
import VaneCore

/// The conditions of an environment: their order, their expressions, and which flags use them.
extension ConsoleRoutes {
    /// Registers the conditions pages under an environment's path.
    func registerConditionPages(on environment: RouterGroup<VaneRequestContext>) {
    }
}
