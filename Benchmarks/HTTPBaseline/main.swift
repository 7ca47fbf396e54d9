import Hummingbird

// Hummingbird's hello-world route: the baseline the fetch benchmark compares against.
//     vane-http-baseline PORT
let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8081
let router = Router()
router.get("/") { _, _ in "Hello, world!" }
let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await application.runService()
