import Hummingbird
import VaneCore

/// Editing one flag in the person's draft.
extension ConsoleRoutes {
    /// Registers the flag editor under an environment's path.
    func registerFlagEditor(on environment: RouterGroup<VaneRequestContext>) {
    }
}
