import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import TestSupport
import Testing

/// `vane serve --tls-cert --tls-key` speaks HTTPS itself (issue #13).
@Suite(.serialized, .timeLimit(.minutes(5))) struct TLSTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let certificate = fixtures.appendingPathComponent("test-tls-cert.pem").path
    static let key = fixtures.appendingPathComponent("test-tls-key.pem").path

    @Test func servesHTTPSWithTheGivenCertificateAndRefusesPlainHTTP() async throws {
        let server = try await ServeProcess.start(arguments: ["--tls-cert", Self.certificate, "--tls-key", Self.key])
        defer { server.stop() }
        #expect(server.url.hasPrefix("https://"), "the banner names the https URL: \(server.url)")
        let port = try ConnectionCapTests.port(server)
        let answer = try await Self.httpsGet(port: port, path: "/healthz")
        #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
        #expect(answer.contains(#""status":"ok""#))

        let plain = try RawSocket(port: port)
        try plain.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        let refused = await plain.read(timeout: 5) { $0.contains("\r\n\r\n") }
        #expect(!refused.hasPrefix("HTTP/1.1 200"), "plain HTTP gets no answer: \(refused)")
    }

    @Test func anUnreadableCertificateStopsTheServerWithItsPath() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vane-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let notACertificate = try CLIRunner.temporaryFile("not a certificate")
        let output = try await CLIRunner.run(
            [
                "serve", "--port", "0", "--data-dir", directory.path, "--tls-cert", notACertificate, "--tls-key",
                Self.key,
            ],
            timeout: 60
        )
        #expect(output.status != 0)
        #expect(output.stderr.contains("cannot read \(notACertificate) as a PEM certificate chain"), "\(output.stderr)")
        #expect(!output.stdout.contains("Vane is serving"))
    }

    /// `GET path` over TLS to 127.0.0.1, trusting only the test certificate; the whole answer.
    static func httpsGet(port: Int, path: String) async throws -> String {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .file(certificate)
        let context = try NIOSSLContext(configuration: configuration)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: "localhost")
                    )
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(
                ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            )
            var text = ""
            do {
                for try await buffer in inbound { text += String(buffer: buffer) }
            } catch {
                // A server that closes without TLS close_notify after answering: the answer stands.
                guard !text.isEmpty else { throw error }
            }
            return text
        }
    }
}
