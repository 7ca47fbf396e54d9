import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
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

    /// HTTP/1.1 (``VaneHTTP1Channel``), over TLS when `tls` is given. The idle timeout also
    /// closes a connection whose request head trickles in and never completes; a connection whose
    /// response is being written, an open event stream's, is not idle.
    static func server(idleTimeoutSeconds: Double, tls: TLSConfiguration?) throws -> HTTPServerBuilder {
        let idleTimeout = TimeAmount.nanoseconds(Int64(idleTimeoutSeconds * 1_000_000_000))
        let http = HTTPServerBuilder { responder in
            VaneHTTP1Channel(responder: responder, idleTimeout: idleTimeout)
        }
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
