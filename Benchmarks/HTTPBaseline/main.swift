import Hummingbird

// Hummingbird's hello-world route, the baseline the fetch benchmark compares against, and a bare
// Server-Sent Events route (`/sse`: `retry:`, then a heartbeat every 15 s), the baseline of the
// stream benchmark.
//     vane-http-baseline PORT
let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8081
let router = Router()
router.get("/") { _, _ in "Hello, world!" }
router.get("/sse") { _, _ in
    Response(
        status: .ok,
        headers: [.contentType: "text/event-stream"],
        body: ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 3000\n\n"))
            while !Task.isCancelled {
                try await Task.sleep(nanoseconds: 15_000_000_000)
                try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
            }
            try await writer.finish(nil)
        }
    )
}
let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await application.runService()
