import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOSSL
import VaneServerCore

/// HTTPS served by `vane serve` itself (`--tls-cert`, `--tls-key`), or plain HTTP behind a
/// proxy that terminates TLS.
enum ServerTLS {
    /// The TLS configuration of a PEM certificate chain and key; nil when neither is given.
    /// - Throws: ``ServerTLSError`` naming the file that cannot be read.
    static func configuration(certificatePath: String?, keyPath: String?) throws -> TLSConfiguration? {
        guard let certificatePath, let keyPath else { return nil }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ServerTLSError(path: certificatePath, expected: "a PEM certificate chain", underlying: "\(error)")
        }
        guard !chain.isEmpty else {
            throw ServerTLSError(
                path: certificatePath,
                expected: "a PEM certificate chain",
                underlying: "no certificate"
            )
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ServerTLSError(path: keyPath, expected: "a PEM private key", underlying: "\(error)")
        }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        tls.minimumTLSVersion = .tlsv12
        return tls
    }

    /// HTTP/1.1, over TLS when `tls` is given. The idle timeout also closes a connection whose
    /// request head trickles in and never completes; open event streams are written to, so they
    /// are not idle. Each connection starts with a small receive buffer (``SmallFirstReadHandler``).
    static func server(idleTimeoutSeconds: Double, tls: TLSConfiguration?) throws -> HTTPServerBuilder {
        let http = HTTPServerBuilder.http1(
            configuration: .init(
                additionalChannelHandlers: [SmallFirstReadHandler()],
                idleTimeout: .nanoseconds(Int64(idleTimeoutSeconds * 1_000_000_000))
            )
        )
        guard let tls else { return http }
        return try .tls(http, tlsConfiguration: tls)
    }
}

/// A TLS certificate or key file that cannot be used.
public struct ServerTLSError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// What it should hold.
    public var expected: String
    /// What the TLS library said.
    public var underlying: String

    /// What is wrong and what to do.
    public var description: String {
        "cannot read \(path) as \(expected) (\(underlying)); give --tls-cert a PEM certificate chain and --tls-key its PEM private key"
    }
}
