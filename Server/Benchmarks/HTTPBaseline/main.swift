import Hummingbird
import Metrics
import NIOConcurrencyHelpers
import Prometheus

// Hummingbird's bare minimum, the baseline the benchmarks compare against:
//   GET /             hello world (Server/Benchmarks/http-benchmark.sh)
//   GET /sse          a Server-Sent Events stream: `retry:`, then whatever /publish sends
//   POST /publish?version=N   writes `id: N` to every open /sse stream (Server/Benchmarks/stream-benchmark.sh)
//   POST /events      reads a body and answers a small JSON object (Server/Benchmarks/ingest-benchmark.sh)
//   POST /fetch       reads a body and answers 304 with an ETag (Server/Benchmarks/http-benchmark.sh)
//   POST /fetch-steps[?bytes=N]   /fetch with the steps fetch's 304 path must take; with bytes,
//                     a 200 answers as /update does (FetchStepsFloor.swift)
//   POST /events-stored[?group=N][&parse=1|foundation]   /events with the batches stored by SQLite
//                     in vane's transaction, on the same cores (StoredEventsFloor.swift; needs DATA-DIR)
//   POST /update?bytes=N   reads a body and answers 200 with N bytes of JSON and an ETag: the floor
//                     under a full fetch, which writes as much (Server/Benchmarks/http-benchmark.sh)
// One task and one buffer per stream, the least a Hummingbird stream can cost.
//     vane-http-baseline PORT [DATA-DIR]

/// Every open /sse stream.
final class Streams: Sendable {
    private let streams = NIOLockedValueBox<(next: Int, open: [Int: AsyncStream<ByteBuffer>.Continuation])>((0, [:]))

    func connect() -> (Int, AsyncStream<ByteBuffer>) {
        let (items, continuation) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingNewest(16))
        let id = streams.withLockedValue { state in
            state.next += 1
            state.open[state.next] = continuation
            return state.next
        }
        return (id, items)
    }

    func disconnect(_ id: Int) {
        streams.withLockedValue { $0.open.removeValue(forKey: id) }?.finish()
    }

    func publish(_ event: ByteBuffer) {
        streams.withLockedValue { state in
            for continuation in state.open.values { continuation.yield(event) }
        }
    }
}

let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8081
let streams = Streams()
let router = Router()
router.get("/") { _, _ in "Hello, world!" }
router.get("/sse") { _, _ in
    let (id, items) = streams.connect()
    return Response(
        status: .ok,
        headers: [.contentType: "text/event-stream"],
        body: ResponseBody { writer in
            defer { streams.disconnect(id) }
            try await writer.write(ByteBuffer(string: "retry: 3000\n\n"))
            for await event in items { try await writer.write(event) }
            try await writer.finish(nil)
        }
    )
}
router.post("/publish") { request, _ in
    let version = request.uri.queryParameters["version"].map { String($0) } ?? "0"
    streams.publish(
        ByteBuffer(string: "id: \(version)\nevent: version\ndata: {\"templateVersion\":\"\(version)\"}\n\n")
    )
    return "ok"
}
// The floor under `POST …/events`: read a batch's body (up to 1 MiB) and answer a small JSON
// object, with no parsing and no database.
router.post("/events") { request, _ in
    let body = try await request.body.collect(upTo: 1 << 20)
    return Response(
        status: .ok,
        headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"accepted\":\(body.readableBytes > 0 ? 100 : 0)}"))
    )
}
// The floor under fetch's 304 path: read the body (up to 64 KiB, fetch's limit) and answer 304 with an
// ETag as long as fetch's (values.proof), with no authentication, digest, rate limit or routing parameters.
router.post("/fetch") { request, _ in
    let body = try await request.body.collect(upTo: 64 << 10)
    return Response(
        status: body.readableBytes > 0 ? .notModified : .badRequest,
        headers: [.eTag: "\"0123456789abcdef0123456789abcdef.0123456789abcdef0123456789abcdef\""]
    )
}
// The floor under a full fetch: read the body as /fetch does, then answer 200 with a JSON body as
// long as fetch's `UPDATE` (N bytes, made once per size) and an ETag as long as fetch's, with no
// authentication, evaluation or response assembly.
let updateBodies = UpdateBodies()
router.post("/update") { request, _ in
    let body = try await request.body.collect(upTo: 64 << 10)
    guard body.readableBytes > 0, let size = request.uri.queryParameters.get("bytes", as: Int.self),
        let bytes = updateBodies.body(bytes: size)
    else { return Response(status: .badRequest) }
    return Response(
        status: .ok,
        headers: [
            .eTag: "\"0123456789abcdef0123456789abcdef.0123456789abcdef0123456789abcdef\"",
            .contentType: "application/json; charset=utf-8",
        ],
        body: ResponseBody(byteBuffer: bytes)
    )
}
// The metrics backend vane serves `/metrics` from, for the route that counts like fetch.
MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
router.post("/fetch-steps", use: FetchStepsFloor(bodies: updateBodies).respond)
router.post("/events-stored", use: StoredEventsFloor(directory: CommandLine.arguments.dropFirst(2).first).respond)
let application = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await application.runService()
